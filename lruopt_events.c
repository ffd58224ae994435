// SPDX-License-Identifier: GPL-2.0
/*
 * lruopt_events: the lruopt:* trace events on kernels before v6.3, in a
 * module of their own.
 *
 * Why a second module: before v6.3 (commit e7bb66f79a7b, "tracepoint: Allow
 * livepatch module add trace event") the tracing core counts TAINT_LIVEPATCH
 * as a bad taint and silently registers neither the tracepoints nor the
 * events of a livepatch module; Debian 12's 6.1 is such a kernel.  An
 * ordinary out-of-tree module passes that check (out-of-tree and unsigned
 * are allowed taints), so there the events are defined here, in a module
 * that is no livepatch.  From v6.3 on lruopt.ko defines them itself
 * (lruopt_trace_own.c) and Kbuild does not build this module.
 *
 * lruopt.ko has no link-time reference to this module, so either loads
 * without the other.  It takes lruopt_events_ops with symbol_get() when it
 * loads after this module, or from its module notifier when this one
 * loads after it (lruopt_trace_link.c); from then on it holds a reference
 * and this module cannot be removed until lruopt.ko is.  modprobe loads
 * this module first (MODULE_SOFTDEP in lruopt_main.c).  Left loaded alone
 * the events exist and never fire.
 *
 * The ops table is an interface between the two modules: an lruopt.ko
 * built against another lruopt_trace.h would hand the probes arguments
 * they do not expect.  lruopt_events_abi names this build's header
 * (Kbuild); lruopt.ko reads it before it takes the table and refuses (at
 * its load) or ignores (later) another one.  0.3.0's companion exported
 * the same symbol and no table: an older companion left loaded after an
 * upgrade is named as such, not taken for an absent one.
 *
 * The prototypes are written out in lruopt_trace.h (TRACE_EVENT(), the
 * ops table, lruopt.ko's inline trace_*()): the compiler checks that they
 * agree, at every call and at the table's initialiser below.
 *
 * Nothing here runs code of its own: lruopt.ko calls the table's functions
 * only while their tracepoint's static key is on.  They are reached
 * through function pointers: Debian's 6.1 builds no kernel IBT
 * (CONFIG_X86_KERNEL_IBT unset); a kernel with it gives every
 * address-taken function its ENDBR64 and objtool leaves those unsealed.
 */
#include <linux/module.h>
#include "lruopt.h"

#define LRUOPT_EVENTS_DEFINE
#define CREATE_TRACE_POINTS
#include "lruopt_trace.h"

/*
 * The fire functions are the tracepoints' own trace_*() (tracepoint.h's
 * static inlines, emitted out of line here because their address is
 * taken): no wrapper of ours, and the initialiser checks that their
 * prototypes are the table's.
 */
const struct lruopt_events_ops lruopt_events_ops = {
	.drain_tp = &__tracepoint_drain,
	.munlock_batch_tp = &__tracepoint_munlock_batch,
	.lazyfree_tp = &__tracepoint_lazyfree,
	.drain = trace_drain,
	.munlock_batch = trace_munlock_batch,
	.lazyfree = trace_lazyfree,
};
EXPORT_SYMBOL_GPL(lruopt_events_ops);

/* This build's identity, read first by lruopt.ko (lruopt_trace.h). */
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
MODULE_DESCRIPTION("Trace events of the lruopt livepatch (lruopt:*) on kernels before 6.3");
MODULE_VERSION(LRUOPT_VERSION);
/* modinfo -F trace_abi: equal for the two modules of one build */
MODULE_INFO(trace_abi, LRUOPT_EVENTS_ABI);
