// SPDX-License-Identifier: GPL-2.0
/*
 * The lruopt:* trace events, defined in lruopt.ko itself: from v6.3 on
 * (commit e7bb66f79a7b) the tracing core registers a livepatch module's
 * events, so insmod lruopt.ko alone brings them.  Kbuild builds this file
 * instead of the companion lruopt_events.ko on such kernels
 * (lruopt_trace.h).
 *
 * The benchmark's untraced build (LRUOPT_NO_TRACE) still defines the
 * events: only its calls are compiled out.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/string.h>
#include "lruopt.h"

#define LRUOPT_EVENTS_DEFINE
#define CREATE_TRACE_POINTS
#include "lruopt_trace.h"

/**
 * lruopt_trace_init - refuse a companion left by an older build
 *
 * Description: 0.3.0 built lruopt_events.ko on every kernel.  One still
 * loaded here (say, after a package upgrade, until the next reboot) owns
 * events of the same names, registered first: this module's would be
 * hidden behind events that never fire.  Its lruopt_events_abi, which
 * every companion exports, gives it away.  (One loaded after lruopt.ko
 * is not refused: its events are the hidden ones, docs/observability.md.)
 *
 * Return: 0, or -EINVAL while such a companion is loaded.
 */
int lruopt_trace_init(void)
{
	const char (*abi)[] = symbol_get(lruopt_events_abi);
	char seen[24];

	if (!abi)
		return 0;
	/*
	 * Copied and put at once: the reference is held for the shortest
	 * time (a forced removal of the companion in between would make
	 * symbol_put() find nothing: a window of one strscpy(), not closed).
	 */
	strscpy(seen, *abi, sizeof(seen));
	symbol_put(lruopt_events_abi);
	pr_err("refusing to load: lruopt_events of an older build (trace ABI %s) is loaded and owns the lruopt:* events; rmmod lruopt_events first (this kernel needs no companion)\n",
	       seen);
	return -EINVAL;
}

/**
 * lruopt_trace_exit - undo lruopt_trace_init(): nothing to undo here
 */
void lruopt_trace_exit(void)
{
}
