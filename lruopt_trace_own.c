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
 * every companion exports, gives it away.
 *
 * Return: 0, or -EINVAL while such a companion is loaded.
 */
int lruopt_trace_init(void)
{
	const char (*abi)[] = symbol_get(lruopt_events_abi);

	if (!abi)
		return 0;
	pr_err("refusing to load: lruopt_events of an older build (trace ABI %s) is loaded and owns the lruopt:* events; rmmod lruopt_events first (this kernel needs no companion)\n",
	       *abi);
	symbol_put(lruopt_events_abi);
	return -EINVAL;
}

/**
 * lruopt_trace_exit - undo lruopt_trace_init(): nothing to undo here
 */
void lruopt_trace_exit(void)
{
}
