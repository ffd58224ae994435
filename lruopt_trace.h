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
 * Where they live depends on the kernel (Kbuild):
 *  - v6.3 and later: in lruopt.ko itself (lruopt_trace_own.c);
 *  - before v6.3 (Debian 12's 6.1), whose tracing core gives a livepatch
 *    module no trace events (lruopt_events.c says why): in the companion
 *    module lruopt_events.ko (LRUOPT_EVENTS_COMPANION).  lruopt.ko then has
 *    no link-time reference to it and loads alone; it fires the events
 *    through the companion's lruopt_events_ops once it is loaded, before or
 *    after lruopt.ko (lruopt_trace_link.c).  The trace_*() calls then go
 *    through the inline functions below, so the call sites are the same
 *    everywhere.
 * Either way the events, their fields and their formats are the same.
 *
 * Their counts agree with the stats/ files: every munlock_batch event is one
 * of munlock/stats/batches, and its folios add up to munlock/stats/pages;
 * every drain event is one call that reached lruopt's drain (calls that the
 * switches sent to the stock function have none); every lazyfree event is
 * one of lazyfree/stats/freed_now or lazy.
 *
 * Before v6.3 the prototypes and struct lruopt_events_ops are an interface
 * between the two modules: any change to this file changes
 * LRUOPT_EVENTS_ABI (Kbuild), and lruopt.ko refuses or ignores an
 * lruopt_events.ko of another build.
 *
 * A file that defines the events (lruopt_events.c, lruopt_trace_own.c)
 * defines LRUOPT_EVENTS_DEFINE and CREATE_TRACE_POINTS before including
 * this header.
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

/*
 * The companion's identity: the version of this header its events were
 * built from.  Every lruopt_events.ko exports it, 0.3.0's included (which
 * had no ops table), so that lruopt.ko can tell a companion of another
 * build from no companion at all (lruopt_trace_link.c, _own.c).
 */
extern const char lruopt_events_abi[];

int lruopt_trace_init(void);
void lruopt_trace_exit(void);

#ifdef LRUOPT_EVENTS_COMPANION
#include <linux/compiler.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/tracepoint-defs.h>

/**
 * struct lruopt_events_ops - what lruopt_events.ko gives lruopt.ko (< v6.3)
 * @drain_tp: the lruopt:drain tracepoint (its static key says if it is on)
 * @munlock_batch_tp: the lruopt:munlock_batch tracepoint
 * @lazyfree_tp: the lruopt:lazyfree tracepoint
 * @drain: fires lruopt:drain
 * @munlock_batch: fires lruopt:munlock_batch
 * @lazyfree: fires lruopt:lazyfree
 */
struct lruopt_events_ops {
	struct tracepoint *drain_tp;
	struct tracepoint *munlock_batch_tp;
	struct tracepoint *lazyfree_tp;
	void (*drain)(unsigned long caller, bool hint, unsigned int queued,
		      bool inline_drain, unsigned int skipped,
		      unsigned int deferred, unsigned int remote,
		      unsigned int timed_out, unsigned int nowait, u64 wait_ns,
		      enum lruopt_drain_result result, bool force_all_cpus);
	void (*munlock_batch)(unsigned int folios, unsigned int locks,
			      bool mlock);
	void (*lazyfree)(unsigned long start, unsigned long end,
			 enum lruopt_lazyfree_reason reason,
			 unsigned long freed, unsigned long kept);
};

/* Exported by lruopt_events.ko, taken by lruopt.ko with symbol_get(). */
extern const struct lruopt_events_ops lruopt_events_ops;

/* lruopt.ko's view: NULL until the companion is linked (lruopt_trace_link.c). */
extern const struct lruopt_events_ops __rcu *lruopt_events;

/*
 * The trace_*() below read the companion's table without a lock, as
 * RCU-sched readers.  The pointer is published with rcu_assign_pointer()
 * (lruopt_trace_link.c) and the table it points to is the companion's
 * const data, written before it went live: rcu_dereference_sched()'s
 * address dependency orders the loads through it.
 *
 * The companion cannot go away while the pointer is set: the link holds a
 * module reference until lruopt.ko's exit.  Only a forced removal
 * (rmmod -f) can take it; the module notifier then clears the pointer
 * before the companion is freed, and free_module()'s synchronize_rcu()
 * waits for the callers that still hold it: hence the preempt-disabled
 * section around the load and the call.
 *
 * Cost while disabled: unlike a tracepoint of one's own (a patched-out
 * jump), the load of the pointer and a branch; once linked, two more loads
 * (the table, the tracepoint's key) and no call: lruopt_tp_on() reads the
 * key's count as static_key_count() does, inline, where
 * static_key_enabled() would call that function out of line.
 */
static __always_inline bool lruopt_tp_on(const struct tracepoint *tp)
{
	/* static_key_count() > 0: its -1 (first enable under way) counts as on */
	return atomic_read(&tp->key.enabled) != 0;
}

/* modinfo -F trace_events: the module that owns the events */
#define LRUOPT_EVENTS_OWNER	"lruopt_events"
/* modprobe lruopt loads it first (lruopt_main.c) */
#define LRUOPT_EVENTS_SOFTDEP	MODULE_SOFTDEP("pre: lruopt_events")
#else
#define LRUOPT_EVENTS_OWNER	"lruopt"
#define LRUOPT_EVENTS_SOFTDEP
#endif /* LRUOPT_EVENTS_COMPANION */

/*
 * LRUOPT_NO_TRACE (KCFLAGS=-DLRUOPT_NO_TRACE): an lruopt.ko without the
 * trace calls, for the benchmark that measures what the disabled events
 * cost (tests/bench: configuration F); never shipped.  The files that
 * define the events ignore it: the events themselves are always defined.
 */
#if !defined(LRUOPT_EVENTS_DEFINE) && defined(LRUOPT_NO_TRACE)
#define trace_drain(...)		do { } while (0)
#define trace_munlock_batch(...)	do { } while (0)
#define trace_lazyfree(...)		do { } while (0)
#elif !defined(LRUOPT_EVENTS_DEFINE) && defined(LRUOPT_EVENTS_COMPANION)
/* The call sites' trace_*(), through the companion (the same arguments). */
static inline void trace_drain(unsigned long caller, bool hint,
			       unsigned int queued, bool inline_drain,
			       unsigned int skipped, unsigned int deferred,
			       unsigned int remote, unsigned int timed_out,
			       unsigned int nowait, u64 wait_ns,
			       enum lruopt_drain_result result,
			       bool force_all_cpus)
{
	const struct lruopt_events_ops *ops;

	preempt_disable_notrace();
	ops = rcu_dereference_sched(lruopt_events);
	if (ops && lruopt_tp_on(ops->drain_tp))
		ops->drain(caller, hint, queued, inline_drain, skipped,
			   deferred, remote, timed_out, nowait, wait_ns,
			   result, force_all_cpus);
	preempt_enable_notrace();
}

static inline void trace_munlock_batch(unsigned int folios,
				       unsigned int locks, bool mlock)
{
	const struct lruopt_events_ops *ops;

	preempt_disable_notrace();
	ops = rcu_dereference_sched(lruopt_events);
	if (ops && lruopt_tp_on(ops->munlock_batch_tp))
		ops->munlock_batch(folios, locks, mlock);
	preempt_enable_notrace();
}

static inline void trace_lazyfree(unsigned long start, unsigned long end,
				  enum lruopt_lazyfree_reason reason,
				  unsigned long freed, unsigned long kept)
{
	const struct lruopt_events_ops *ops;

	preempt_disable_notrace();
	ops = rcu_dereference_sched(lruopt_events);
	if (ops && lruopt_tp_on(ops->lazyfree_tp))
		ops->lazyfree(start, end, reason, freed, kept);
	preempt_enable_notrace();
}
#else
#define LRUOPT_TRACE_EVENTS	/* the TRACE_EVENT() part below */
#endif

#endif /* _LRUOPT_TRACE_ENUMS */

#ifdef LRUOPT_TRACE_EVENTS
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
		     unsigned int remote, unsigned int timed_out,
		     unsigned int nowait, u64 wait_ns,
		     enum lruopt_drain_result result, bool force_all_cpus),
	    TP_ARGS(caller, hint, queued, inline_drain, skipped, deferred, remote,
		    timed_out, nowait, wait_ns, result, force_all_cpus),
	    TP_STRUCT__entry(__field(unsigned long, caller)
			     __field(u64, wait_ns)
			     __field(unsigned int, queued)
			     __field(unsigned int, skipped)
			     __field(unsigned int, deferred)
			     __field(unsigned int, remote)
			     __field(unsigned int, timed_out)
			     __field(unsigned int, nowait)
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
			   __entry->nowait = nowait;
			   __entry->result = result;
			   __entry->hint = hint;
			   __entry->inline_drain = inline_drain;
			   __entry->force_all_cpus = force_all_cpus;),
	    TP_printk("caller=%pS class=%s queued=%u inline=%d skipped=%u deferred=%u remote=%u timed_out=%u nowait=%u wait_ns=%llu result=%s force_all_cpus=%d",
		      (void *)__entry->caller, __entry->hint ? "hint" : "strict",
		      __entry->queued, __entry->inline_drain, __entry->skipped,
		      __entry->deferred, __entry->remote, __entry->timed_out,
		      __entry->nowait, __entry->wait_ns,
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
#endif /* LRUOPT_TRACE_EVENTS */
