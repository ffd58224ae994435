// SPDX-License-Identifier: GPL-2.0
/*
 * lruopt_events: the lruopt:* trace events, in a module of their own.
 *
 * Why a second module: before v6.3 (commit e7bb66f79a7b, "tracepoint: Allow
 * livepatch module add trace event") the tracing core counts TAINT_LIVEPATCH
 * as a bad taint and silently registers neither the tracepoints nor the
 * events of a livepatch module; Debian 12's 6.1 is such a kernel.  An
 * ordinary out-of-tree module passes that check (out-of-tree and unsigned
 * are allowed taints), so the events are defined here, in a module that is
 * no livepatch, and lruopt.ko fires them through the symbols exported below.
 * The same two modules are built for every kernel, so the events and their
 * fields are the same on 6.1 and 6.12.
 *
 * Load order: lruopt.ko links against these exports, so this module must be
 * loaded first (modprobe does it through modules.dep; with insmod, load
 * lruopt_events.ko before lruopt.ko) and cannot be removed while lruopt.ko
 * is loaded.  It may stay loaded after lruopt.ko is gone: the events then
 * exist and never fire.
 *
 * The tracepoints are an interface between the two modules: an lruopt.ko
 * built against other prototypes would hand the probes arguments they do
 * not expect.  lruopt_events_abi names this build's lruopt_trace.h (Kbuild)
 * and lruopt.ko refuses to load against another one.
 *
 * Nothing here runs code of its own: while no probe is attached every
 * trace_*() call in lruopt.ko is a patched-out jump (static key).
 */
#include <linux/module.h>
#include "lruopt.h"

/* The benchmark's untraced lruopt.ko (lruopt_trace.h) still has its events. */
#undef LRUOPT_NO_TRACE
#define CREATE_TRACE_POINTS
#include "lruopt_trace.h"

EXPORT_TRACEPOINT_SYMBOL_GPL(drain);
EXPORT_TRACEPOINT_SYMBOL_GPL(munlock_batch);
EXPORT_TRACEPOINT_SYMBOL_GPL(lazyfree);

/* Checked by lruopt.ko at load: see the header comment. */
const char lruopt_events_abi[] = LRUOPT_EVENTS_ABI;
EXPORT_SYMBOL_GPL(lruopt_events_abi);

static int __init lruopt_events_init(void)
{
	return 0;
}

/* Without an exit function the module could never be removed. */
static void __exit lruopt_events_exit(void)
{
}

module_init(lruopt_events_init);
module_exit(lruopt_events_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("lruopt developers");
MODULE_DESCRIPTION("Trace events of the lruopt livepatch (lruopt:*), on every kernel");
MODULE_VERSION(LRUOPT_VERSION);
/* modinfo -F trace_abi: equal for the two modules of one build */
MODULE_INFO(trace_abi, LRUOPT_EVENTS_ABI);
