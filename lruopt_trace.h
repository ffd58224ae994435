/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lruopt's tracepoints: the "lruopt" trace system.
 *
 *   lruopt:drain          one lru_add_drain_all() call that reached lruopt
 *                         (fired by drain_account(), lruopt_drain.c);
 *                         force_all_cpus is 1 for lru_cache_disable()'s
 *                         drain (PREEMPT_RT), as in the mm tree's
 *                         mm_lru_add_drain_all(force_all_cpus)
 *   lruopt:munlock_batch  one batch of the mlock/munlock walk (one or more
 *                         lruvec lock holds, flushed together)
 *   lruopt:lazyfree       one MADV_FREE call on an anonymous range that
 *                         lazyfree weighed: freed now (why, and the pages
 *                         reclaim freed and kept) or lazy
 *
 * Like every kernel tracepoint they cost a patched-out jump (static key)
 * while disabled.  They are defined in the companion module
 * lruopt_events.ko (lruopt_events.c says why: 6.1 gives a livepatch module
 * no trace events), the same on every kernel; lruopt.ko includes this
 * header without CREATE_TRACE_POINTS and calls them.
 *
 * Their counts agree with the stats/ files: every munlock_batch event is one
 * of munlock/stats/batches, and its folios add up to munlock/stats/pages;
 * every drain event is one call that reached lruopt's drain (calls that the
 * switches sent to the stock function have none); every lazyfree event is
 * one of lazyfree/stats/freed_now or lazy.
 *
 * The prototypes are an interface between the two modules: any change to
 * this file changes LRUOPT_EVENTS_ABI (Kbuild), and lruopt.ko refuses an
 * lruopt_events.ko of another build.
 */
#ifndef _LRUOPT_TRACE_ENUMS
#define _LRUOPT_TRACE_ENUMS
#include <linux/types.h>

/* How a drain call ended (lruopt:drain's "result"). */
enum lruopt_drain_result {
	LRUOPT_DRAIN_FULL,	/* every CPU that needed it was drained */
	LRUOPT_DRAIN_PARTIAL,	/* some were skipped, deferred or late */
	LRUOPT_DRAIN_COALESCED,	/* answered by a full drain just before */
};

/* What a MADV_FREE call found (lruopt:lazyfree's "reason"). */
enum lruopt_lazyfree_reason {
	LRUOPT_LAZYFREE_LAZY,		/* no pressure: stock MADV_FREE */
	LRUOPT_LAZYFREE_WMARK,		/* no zone above its mark: freed now */
	LRUOPT_LAZYFREE_RECLAIM,	/* kswapd reclaiming: freed now */
	LRUOPT_LAZYFREE_MEMCG,		/* memory cgroup near its limit: freed now */
};

/* Which version of this header the events were built from (lruopt_events.c). */
extern const char lruopt_events_abi[];

/*
 * LRUOPT_NO_TRACE (KCFLAGS=-DLRUOPT_NO_TRACE): an lruopt.ko without the
 * trace calls, for the benchmark that measures what the disabled events
 * cost (tests/bench: configuration F); never shipped.  lruopt_events.c
 * ignores it: the events themselves are always defined.
 */
#ifdef LRUOPT_NO_TRACE
#define trace_drain(...)		do { } while (0)
#define trace_munlock_batch(...)	do { } while (0)
#define trace_lazyfree(...)		do { } while (0)
#endif

#endif /* _LRUOPT_TRACE_ENUMS */

#ifndef LRUOPT_NO_TRACE
#undef TRACE_SYSTEM
#define TRACE_SYSTEM lruopt

#if !defined(_LRUOPT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _LRUOPT_TRACE_H

#include <linux/tracepoint.h>

/* Let user space tools resolve the symbolic names. */
TRACE_DEFINE_ENUM(LRUOPT_DRAIN_FULL);
TRACE_DEFINE_ENUM(LRUOPT_DRAIN_PARTIAL);
TRACE_DEFINE_ENUM(LRUOPT_DRAIN_COALESCED);

TRACE_EVENT(drain,
	    TP_PROTO(unsigned long caller, bool hint, unsigned int queued,
		     bool inline_drain, unsigned int skipped, unsigned int deferred,
		     unsigned int remote, unsigned int timed_out, u64 wait_ns,
		     enum lruopt_drain_result result, bool force_all_cpus),
	    TP_ARGS(caller, hint, queued, inline_drain, skipped, deferred, remote,
		    timed_out, wait_ns, result, force_all_cpus),
	    TP_STRUCT__entry(__field(unsigned long, caller)
			     __field(u64, wait_ns)
			     __field(unsigned int, queued)
			     __field(unsigned int, skipped)
			     __field(unsigned int, deferred)
			     __field(unsigned int, remote)
			     __field(unsigned int, timed_out)
			     __field(unsigned int, result)
			     __field(bool, hint)
			     __field(bool, inline_drain)
			     __field(bool, force_all_cpus)),
	    TP_fast_assign(__entry->caller = caller;
			   __entry->wait_ns = wait_ns;
			   __entry->queued = queued;
			   __entry->skipped = skipped;
			   __entry->deferred = deferred;
			   __entry->remote = remote;
			   __entry->timed_out = timed_out;
			   __entry->result = result;
			   __entry->hint = hint;
			   __entry->inline_drain = inline_drain;
			   __entry->force_all_cpus = force_all_cpus;),
	    TP_printk("caller=%pS class=%s queued=%u inline=%d skipped=%u deferred=%u remote=%u timed_out=%u wait_ns=%llu result=%s force_all_cpus=%d",
		      (void *)__entry->caller, __entry->hint ? "hint" : "strict",
		      __entry->queued, __entry->inline_drain, __entry->skipped,
		      __entry->deferred, __entry->remote, __entry->timed_out,
		      __entry->wait_ns,
		      __print_symbolic(__entry->result,
				       { LRUOPT_DRAIN_FULL, "full" },
				       { LRUOPT_DRAIN_PARTIAL, "partial" },
				       { LRUOPT_DRAIN_COALESCED, "coalesced" }),
		      __entry->force_all_cpus)
);

TRACE_EVENT(munlock_batch,
	    TP_PROTO(unsigned int folios, unsigned int locks, bool mlock),
	    TP_ARGS(folios, locks, mlock),
	    TP_STRUCT__entry(__field(unsigned int, folios)
			     __field(unsigned int, locks)
			     __field(bool, mlock)),
	    TP_fast_assign(__entry->folios = folios;
			   __entry->locks = locks;
			   __entry->mlock = mlock;),
	    TP_printk("folios=%u locks=%u direction=%s", __entry->folios,
		      __entry->locks, __entry->mlock ? "mlock" : "munlock")
);

TRACE_DEFINE_ENUM(LRUOPT_LAZYFREE_LAZY);
TRACE_DEFINE_ENUM(LRUOPT_LAZYFREE_WMARK);
TRACE_DEFINE_ENUM(LRUOPT_LAZYFREE_RECLAIM);
TRACE_DEFINE_ENUM(LRUOPT_LAZYFREE_MEMCG);

TRACE_EVENT(lazyfree,
	    TP_PROTO(unsigned long start, unsigned long end,
		     enum lruopt_lazyfree_reason reason, unsigned long freed,
		     unsigned long kept),
	    TP_ARGS(start, end, reason, freed, kept),
	    TP_STRUCT__entry(__field(unsigned long, start)
			     __field(unsigned long, end)
			     __field(unsigned int, reason)
			     __field(unsigned long, freed)
			     __field(unsigned long, kept)),
	    TP_fast_assign(__entry->start = start;
			   __entry->end = end;
			   __entry->reason = reason;
			   __entry->freed = freed;
			   __entry->kept = kept;),
	    TP_printk("start=%#lx end=%#lx pages=%lu reason=%s freed=%lu kept=%lu",
		      __entry->start, __entry->end,
		      (__entry->end - __entry->start) >> PAGE_SHIFT,
		      __print_symbolic(__entry->reason,
				       { LRUOPT_LAZYFREE_LAZY, "lazy" },
				       { LRUOPT_LAZYFREE_WMARK, "wmark" },
				       { LRUOPT_LAZYFREE_RECLAIM, "reclaim" },
				       { LRUOPT_LAZYFREE_MEMCG, "memcg" }),
		      __entry->freed, __entry->kept)
);

#endif /* _LRUOPT_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE lruopt_trace
#include <trace/define_trace.h>
#endif /* !LRUOPT_NO_TRACE */
