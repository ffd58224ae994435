// SPDX-License-Identifier: GPL-2.0
/*
 * A batched, pending-aware, bounded lru_add_drain_all().
 *
 * Stock __lru_add_drain_all() (mm/swap.c) takes one global mutex, queues the
 * per-cpu lru_add_drain_work on every CPU whose batches hold something and
 * flush_work()s each of them.  Every caller therefore waits for the slowest
 * CPU (an RT-hogged one can take a second), the caller's own CPU costs a
 * kworker round trip, and concurrent callers (fadvise(DONTNEED) storms)
 * queue up behind the mutex.
 *
 * This replacement:
 *  - drains the caller's own CPU inline;
 *  - queues the module's *own* per-cpu work items, never the kernel's
 *    lru_add_drain_work: stock re-initialises those with INIT_WORK() under
 *    its own mutex, which lru_cache_disable() also uses, and a work item that
 *    may still be queued must never be re-initialised.  Ours are initialised
 *    once at load and cancelled at unload;
 *  - shares work between concurrent callers without a global lock, through
 *    per-cpu tickets (see "Tickets" below; on PREEMPT_RT one global counter
 *    orders concurrent remote drains, see "Piggyback");
 *  - for hint-like callers only (fadvise, khugepaged, compaction, KSM, memcg
 *    reclaim, drop_caches; lruopt_drain_sites.c classifies the callers),
 *    optionally bounds the call (timeout_us: the wait, and on PREEMPT_RT
 *    the remote drains), leaves chosen or isolated CPUs alone (skip_cpus,
 *    skip_isolated, default 1: no work is queued there and no lock of
 *    theirs taken, their folios stay batched until the CPU drains itself,
 *    "deferred"), and
 *    answers a caller arriving shortly after a completed full drain at once
 *    (coalesce_us).  Callers whose correctness depends on every CPU being
 *    drained (long-term GUP pinning, memfd seals, memory-failure, device
 *    migration), any caller in a module and unknown callers always get a
 *    full, unbounded wait.
 *
 * On PREEMPT_RT (drain/remote, default 1 there) a remote CPU is drained
 * from the caller's CPU, under that CPU's own local locks, instead of by
 * queued work: see "Remote drains" below.
 *
 * With drain/enabled (or the master switch) at 0 the stock function runs:
 * __lru_add_drain_all(false), the kernel's own code, mutex and work items.
 *
 * The common call has nothing pending anywhere (compaction, MADV_COLLAPSE,
 * memfd seals on an idle system): one pass over the online CPUs' batch
 * counts (drain_pending()), no lock, no pinning, no allocation, no clock
 * read and no write to any shared cache line; its counters are per-cpu.
 * Where stock takes a global mutex and bumps a global generation before
 * the same peeks.  It opens no coalescing window either (only a drain
 * that drained something does): a caller after it drains as it would
 * have.
 *
 * Tickets.  Each CPU's slot counts requests (slot->requested) and records
 * the request its last completed run covered (slot->done).  A caller that
 * finds a remote CPU in need of draining takes a ticket t with a fully
 * ordered increment of that CPU's slot->requested [TICKET] and queues the
 * slot's work.  The work function reads slot->requested [READ] after the
 * workqueue core cleared PENDING (which it orders with a full barrier
 * before calling the function), drains its CPU, then publishes
 * slot->done = that value with release semantics [DONE].  The caller waits
 * until slot->done >= t on every CPU it queued; [DONE] pairs with the
 * acquire in drain_slot_done() [SEEN], so the drain's effects are visible
 * to the caller once it sees its ticket covered.
 *
 * Why that is at least as strong as stock's lru_drain_gen scheme: a run
 * that publishes done >= t read requested >= t at [READ]; tickets of one
 * slot are handed out in order, so that read came after our [TICKET], i.e.
 * after our call began; per-cpu batches are only filled by their own CPU,
 * so that run drains every folio the CPU had batched before our call.  If
 * the work was still PENDING at our queue_work_on(), it returns false and
 * the pending run, which has not reached [READ] yet, covers us: that is the
 * sharing (one run per CPU for any number of concurrent callers).  If it was
 * already running with an older ticket, PENDING is clear, queue_work_on()
 * re-queues it and the next run covers us.  The only shared line a caller
 * writes is the slot of a CPU it queues work on, which queue_work_on()
 * writes anyway.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/sched/isolation.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include "lruopt_drain_sites.h"
#include "lruopt_trace.h"

enum {
	DS_CALLS, DS_STOCK, DS_FULL, DS_PARTIAL, DS_COALESCED,
	DS_CPUS_QUEUED, DS_CPUS_SHARED, DS_INLINE, DS_SKIPPED_EMPTY,
	DS_SKIPPED_CPUS, DS_TIMEOUTS, DS_FALLBACKS, DS_WAIT_TOTAL, DS_WAIT_MAX,
	DS_DEFERRED, DS_REMOTE, DS_REMOTE_BUSY, DS_REMOTE_SHARED, DS_NOWAIT,
	DS_HINT_WAITS,
	DS_NR
};

static const char *const drain_stat_names[DS_NR + 1] = {
	[DS_CALLS] = "calls",
	[DS_STOCK] = "stock",
	[DS_FULL] = "full_drains",
	[DS_PARTIAL] = "partial_drains",
	[DS_COALESCED] = "coalesced",
	[DS_CPUS_QUEUED] = "cpus_queued",
	[DS_CPUS_SHARED] = "cpus_shared",
	[DS_INLINE] = "inline_drains",
	[DS_SKIPPED_EMPTY] = "skipped_empty",
	[DS_SKIPPED_CPUS] = "skipped_cpus",
	[DS_TIMEOUTS] = "timeouts",
	[DS_FALLBACKS] = "fallbacks",
	[DS_WAIT_TOTAL] = "wait_ns_total",
	[DS_WAIT_MAX] = "wait_ns_max",
	[DS_DEFERRED] = "deferred",
	[DS_REMOTE] = "remote_drains",
	[DS_REMOTE_BUSY] = "remote_busy",
	[DS_REMOTE_SHARED] = "remote_shared",
	[DS_NOWAIT] = "cpus_nowait",
	[DS_HINT_WAITS] = "hint_waits",
};

/*
 * skipped_cpus counts the CPUs a hint caller left undrained,
 * deferred those of them that got no work either: equal, since a skipped
 * CPU never gets work.  remote_drains counts CPUs whose folio batches were
 * drained from the caller's CPU (every non-empty group locked),
 * remote_busy the CPUs where a hint caller's trylock failed on a group
 * held by other than a drain begun after the call's scan, remote_shared
 * those whose every busy group was held by such a drain ("Piggyback"
 * below), cpus_nowait the CPUs whose work a hint caller queued after its
 * remote drain (a busy group, buffer heads) without waiting for it: a
 * remote_busy CPU is always one of them.  A skipped CPU is never drained
 * remotely by a hint caller, so remote_drains and deferred never count
 * the same CPU of one call.  hint_waits counts the hint calls that
 * waited for some CPU's queued work: on PREEMPT_RT with remote drains,
 * none ever does.
 * fallbacks counts the calls that found no memory for their wait block
 * and waited for each CPU in turn (and, before mm_percpu_wq exists, the
 * calls sent to the stock drain).
 */

static const bool drain_stat_is_max[DS_NR] = { [DS_WAIT_MAX] = true };

static struct lruopt_counters drain_stats = {
	.names = drain_stat_names,
	.is_max = drain_stat_is_max,
};

/* ------------------------------------------------------------- knobs */

#define DRAIN_TIMEOUT_MAX_US	10000000U
#define DRAIN_COALESCE_MAX_US	1000000U

static unsigned int drain_timeout_us;
static unsigned int drain_coalesce_us;
/*
 * Default 1: booting with isolcpus= or nohz_full= is itself the request
 * that those CPUs stay quiet; on a kernel without isolated CPUs it changes
 * nothing.
 */
static bool drain_skip_isolated = true;
/*
 * Static, not a cpumask_var_t: the drain_skip_cpus module parameter is
 * parsed into it before the module's init runs.
 */
static struct cpumask drain_skip_mask;
static DEFINE_MUTEX(drain_skip_lock);	/* serialises skip_cpus writers */

static u64 drain_last_full_ns;		/* end of the last complete drain */

/*
 * drain/remote: the switch (default on where it can work) and whether it
 * can: PREEMPT_RT, and the move functions passed the ENDBR check in
 * drain_bound().  Until drain_bound() has run no drain goes remote.
 */
static unsigned int drain_remote = IS_ENABLED(CONFIG_PREEMPT_RT);
static bool drain_remote_ok;
LRUOPT_UINT_KNOB(drain, remote, drain_remote, 0, LRUOPT_REMOTE_GROUPS ? 1 : 0,
		 "Initial value of drain/remote: drain other CPUs from the caller's CPU under their own locks (0|1; PREEMPT_RT only, default 1 there; 0 elsewhere)");

/* One per CPU; see "Tickets" in the file comment. */
struct drain_slot {
	struct work_struct work;
	atomic_long_t requested;
	unsigned long done;
	wait_queue_head_t wq;	/* callers waiting for this CPU's run */
	/* PREEMPT_RT: the epoch of a drain of each group begun ("Piggyback") */
	unsigned long begun[LRUOPT_REMOTE_GROUPS ?: 1];
};

static struct drain_slot __percpu *drain_slots;

/* ------------------------------------------------------------ draining */

/*
 * Drain the current CPU: what the kernel's lru_add_drain_per_cpu() work does
 * (folio batches, the mlock batch, buffer-head LRUs).  Migration is disabled
 * so that all three act on the same CPU.
 */
static void drain_this_cpu(void)
{
	migrate_disable();
	lru_add_drain();
	invalidate_bh_lrus_cpu();
	migrate_enable();
}

static void drain_workfn(struct work_struct *work)
{
	struct drain_slot *slot = container_of(work, struct drain_slot, work);
	/* [READ]: after PENDING was cleared; see "Tickets" */
	unsigned long ticket = atomic_long_read(&slot->requested);

	drain_this_cpu();
	/* [DONE]: pairs with [SEEN] in drain_slot_done() */
	smp_store_release(&slot->done, ticket);
	/*
	 * Only the callers that wait for this CPU are woken, and none at all
	 * (no lock taken) when nobody waits: wq_has_sleeper()'s smp_mb()
	 * orders [DONE] before the check and pairs with the barrier of
	 * set_current_state() in the waiter's prepare_to_wait_event(), so a
	 * waiter either sees done or is seen here.
	 */
	if (wq_has_sleeper(&slot->wq))
		wake_up_all(&slot->wq);
}

/* Has @cpu's slot completed a drain run that covers @ticket? */
static bool drain_slot_done(int cpu, unsigned long ticket)
{
	struct drain_slot *slot = per_cpu_ptr(drain_slots, cpu);

	/* [SEEN]: pairs with [DONE] in drain_workfn() */
	return (long)(smp_load_acquire(&slot->done) - ticket) >= 0;
}

/*
 * The CPUs a call waits for and the ticket it holds on each, allocated only
 * once a remote CPU needs waiting for: the nothing-pending call allocates
 * nothing.  One block: the cpumask, then nr_cpu_ids tickets.
 */
struct drain_wait {
	struct cpumask *cpus;
	unsigned long *ticket;
};

static bool drain_wait_alloc(struct drain_wait *w)
{
	size_t mask = ALIGN(cpumask_size(), sizeof(long));
	void *p;

	/* Testing only: the path of a failed allocation (62-drain-skip). */
	if (lruopt_fault_is("drain_nomem"))
		return false;
	/* GFP_NOWAIT: a drain must not recurse into reclaim (stock never does) */
	p = kzalloc(mask + nr_cpu_ids * sizeof(long), GFP_NOWAIT | __GFP_NOWARN);
	if (!p)
		return false;
	w->cpus = p;
	w->ticket = p + mask;
	return true;
}

/**
 * lruopt_cpu_isolated - is @cpu isolated (isolcpus=, nohz_full=)?
 * @cpu: a possible CPU
 *
 * Return: true when @cpu is outside the kernel's housekeeping set for
 * scheduler domains or for the tick.
 */
bool lruopt_cpu_isolated(int cpu)
{
	return !housekeeping_test_cpu(cpu, HK_TYPE_DOMAIN) ||
	       !housekeeping_test_cpu(cpu, HK_TYPE_TICK);
}

/**
 * lruopt_drain_skips - does a hint caller leave @cpu alone?
 * @cpu: a possible CPU
 *
 * These are the quiet CPUs: the ones in drain/skip_cpus, and the isolated
 * ones while drain/skip_isolated is 1 (lruopt_quiet.c keeps them empty).
 * Lockless: a caller racing with a knob write sees either answer.
 *
 * Return: true when @cpu is to be left alone.
 */
bool lruopt_drain_skips(int cpu)
{
	if (cpumask_test_cpu(cpu, &drain_skip_mask))
		return true;
	return READ_ONCE(drain_skip_isolated) && lruopt_cpu_isolated(cpu);
}

/*
 * One call: its settings, read once by drain_all(), and what it did,
 * filled by drain_all() and counted by drain_account().
 */
struct drain_call {
	unsigned long ip;
	struct drain_site site;
	bool relaxed;		/* a hint caller: may skip, bound, trylock */
	bool go_remote;		/* drains go remote (drain_remote_on()) */
	unsigned int timeout_us;	/* relaxed only; 0: unbounded */
	unsigned int queued, shared, empty, skipped, deferred, timed_out;
	unsigned int remote, remote_busy, remote_shared, nowait;
	unsigned long epoch;	/* with go_remote: the call's ticket ("Piggyback") */
	bool inline_drain;
	bool waited;		/* waited for some CPU's queued work */
	bool serial;		/* no wait block: CPUs waited for one by one */
	bool force_all_cpus;	/* lru_cache_disable()'s drain (the event) */
	u64 t0;			/* first work (or remote drain) started; 0: none */
	u64 end;		/* a hint caller's deadline, from t0; 0: none */
	u64 wait_ns;
};

/*
 * Wait for @cpu's run covering @ticket, until @end (ktime_get_ns()) if not
 * 0.  A CPU not done by then keeps its queued work, which runs when it can,
 * and counts as timed out.  Returns false once the deadline has passed.
 * Out of line: the wait queue entry and the hrtimer sleeper stay off the
 * stack of the common call, which has nothing to wait for.
 */
static noinline bool drain_wait_cpu(struct drain_call *dc, int cpu,
				    unsigned long ticket, u64 end)
{
	struct drain_slot *slot = per_cpu_ptr(drain_slots, cpu);
	s64 left;

	dc->waited = true;
	if (!end) {
		wait_event(slot->wq, drain_slot_done(cpu, ticket));
		return true;
	}
	left = end - ktime_get_ns();
	if (left > 0 &&
	    !wait_event_hrtimeout(slot->wq, drain_slot_done(cpu, ticket),
				  ns_to_ktime(left)))
		return true;
	/* the deadline has passed, before or during the wait */
	if (!drain_slot_done(cpu, ticket))
		dc->timed_out++;
	return false;
}

/* Wait for the CPUs of @w, until @end if not 0. */
static void drain_wait_for(struct drain_call *dc, struct drain_wait *w, u64 end)
{
	bool late = false;
	int cpu;

	/*
	 * One CPU after the other, each on its own slot's queue: a run wakes
	 * only its own waiters.  The wait ends with the slowest CPU either
	 * way; with a deadline, once it has passed the other CPUs are only
	 * looked at, not waited for.
	 */
	for_each_cpu(cpu, w->cpus) {
		if (!late) {
			late = !drain_wait_cpu(dc, cpu, w->ticket[cpu], end);
			continue;
		}
		if (!drain_slot_done(cpu, w->ticket[cpu]))
			dc->timed_out++;
	}
}

/* ------------------------------------------------------ remote drains */

/*
 * Remote drains (PREEMPT_RT only; LRUOPT_REMOTE_GROUPS is 0 elsewhere and
 * all of this compiles away).  On RT a local_lock_t is a per-CPU sleeping
 * spinlock_t, so the caller can take a remote CPU X's batch locks itself
 * and run the kernel's own move functions on X's batches from its own
 * CPU: X is not disturbed at all unless it contends for the lock.
 *
 * Lock order, and why it cannot deadlock (the RT tree dropped cross-CPU
 * local locking after "a few deadlocks" of a second code path; the rules
 * below exclude the ways such a path breaks the owner's assumptions):
 *
 *  R1  The drainer holds no local lock when it starts: lru_add_drain_all()
 *      callers are sleepable (stock takes a mutex and flush_work()s), so
 *      are lru_cache_disable()'s (stock waits for a grace period first),
 *      and the caller's own CPU is drained by lru_add_drain() only after
 *      the remote loop, with no remote lock held.
 *  R2  One lock at a time: X's cpu_fbatches.lock, then (released) X's
 *      rotate lock (6.1 lru_rotate.lock, 6.12 cpu_fbatches.lock_irq), then
 *      (released) X's mlock batch lock.  Never two CPUs' locks, never two
 *      locks of one CPU (stock nests fbatches -> rotate in its own drain;
 *      not needing that nesting removes the only intra-CPU order).
 *  R3  Under the lock only stock code runs (and the store of the call's
 *      ticket, [BEGIN]; testing only, fault_target=drain_hold's bounded
 *      hold): folio_batch_move_lru() or the
 *      mlock batch function, which take the lruvec lock and then free
 *      (zone lock, the *caller's* pcp lock): the owner's own
 *      lru_add_drain_cpu() produces exactly the same lock-class edges
 *      (lockdep keys all CPUs' instances of a per-CPU lock as one class),
 *      so no new edge exists, and nothing under R3 adds to a per-CPU batch
 *      or drains one (no re-entry).
 *
 * An ABBA between drainers, or between a drainer and an owner, needs a
 * holder of two CPUs' local locks: stock only takes its own CPU's, R2
 * forbids it here.  A drainer that migrated onto X takes X's lock as an
 * ordinary local_lock (R1: it holds none).  What is left is priority
 * inversion: a holder preempted on X by a SCHED_FIFO task is boosted by
 * rtmutex PI but pinned (migrate-disabled) to X; stock's flush_work()
 * needs a kworker on X and this very lock, so it is never worse.
 *
 * Hint callers never touch a skipped CPU (no lock, no work: it is
 * deferred), trylock the others, and leave what a busy lock or a
 * buffer-head LRU keeps from them to queued work they do not wait for
 * ([NOWAIT] in drain_one()).  Strict callers block on the lock with PI
 * and never queue work for the batches: the kworker would need X's CPU
 * time *and* the same lock.
 *
 * Piggyback.  In a storm of hint callers a busy lock is often another
 * caller's, draining X's batches as this one would.  Every call that
 * drains with remote drains takes a ticket from drain_epoch after its
 * [SCAN], with a fully ordered increment [EPOCH], and writes it to X's
 * begun[g] before it drains X's group g [BEGIN]: under X's lock for a
 * remote drain, before its own lru_add_drain() for its own CPU.  A hint
 * caller whose trylock fails reads begun[g]: a later epoch than its own
 * is a drain whose [EPOCH] increment came after its own in the counter's
 * order, so everything the caller did before its [EPOCH] (its [SCAN]
 * included) is visible to that drain's batch reads, which follow its
 * increment: the group counts as drained (remote_shared), with no work
 * and no wait, as a run in flight counts for the callers that share its
 * queued work.  Any value of begun[g] that is later than the caller's
 * epoch will do, its writer's drain finished or not.  An earlier one:
 * the holder is X adding to its batch, X's work, or a drain that may
 * have read the batch before what the caller depends on was added
 * (remote_busy).  The counter costs one global atomic per draining call,
 * on PREEMPT_RT with remote drains only.
 *
 * Priority inheritance across CPUs.  A drainer on CPU Y that holds X's
 * lock is migrate-disabled for the hold (rt_spin_lock() pins its owner),
 * so a task on X that blocks on that lock boosts the drainer to its own
 * priority, but on Y: a task on Y of higher priority still keeps the
 * drainer off the CPU, and X's task waits for Y's scheduling.  The hold
 * is bounded by R3 (stock move code over one batch: at most 15 folios on
 * 6.1, 31 on 6.12), and nothing else of the drain is pinned: the pass
 * over the CPUs and every lock *wait* run migratable (drain_all() pins
 * only its own-CPU drain), so a drainer blocked on X's lock can be moved
 * away from a busy Y before it gets the lock.  Stock is no better
 * here: its drain of X is a kworker bound to X, which needs X's CPU and
 * the same lock.  Hint callers, the many (fadvise storms), neither wait
 * for a lock, nor for other CPUs' work, nor touch a skipped or isolated
 * CPU at all; their pass is pinned, as it blocks nowhere (drain_all()).
 *
 * Buffer-head LRUs are protected by disabling interrupts on their own CPU
 * and cannot be drained remotely: a CPU with buffer heads in its LRU still
 * gets the queued work, which only strict callers wait for.
 *
 * CPU hotplug.  page_alloc_cpu_dead() drains a dead CPU's batches without
 * their locks.  A drainer that found X online may still be inside X's
 * batches then, so the teardown of a CPUHP_BP_PREPARE_DYN state, which
 * runs after X is dead and before CPUHP_PAGE_ALLOC's teardown, clears X in
 * drain_remote_cpus and then takes and releases each of X's locks once
 * [FENCE]; a drainer tests the bit only once it holds the lock [FENCED].
 * Lock acquire/release orders the two: a drainer that got the lock before
 * the fence has left before the fence's lock returns, one that got it
 * after sees the cleared bit.  Not cpus_read_lock(): offline_pages() calls
 * lru_cache_disable() with the hotplug lock already read-held.
 */
static struct cpumask drain_remote_cpus;
static int drain_remote_hp = -1;	/* the dynamic hotplug state, if any */

static int drain_remote_hp_up(unsigned int cpu)
{
	cpumask_set_cpu(cpu, &drain_remote_cpus);
	return 0;
}

static int drain_remote_hp_dead(unsigned int cpu)
{
	unsigned int g;

	cpumask_clear_cpu(cpu, &drain_remote_cpus);
	/* before drain_bound() the lock addresses are not resolved yet */
	if (!READ_ONCE(drain_remote_ok))
		return 0;
	for (g = 0; g < LRUOPT_REMOTE_GROUPS; g++) {
		local_lock_t *lock = lruopt_remote_lock_of(cpu, g);

		/* [FENCE]: pairs with [FENCED] in drain_remote_cpu() */
		lruopt_remote_lock(lock, true);
		lruopt_remote_unlock(lock);
	}
	return 0;
}

/* The drain tickets ("Piggyback"); PREEMPT_RT with remote drains only. */
static atomic_long_t drain_epoch;

/*
 * Testing only (67-drain-remote), fault_target=drain_hold: the piggyback
 * case, made certain.  One hint call of a "drain_call" process waits after
 * its [EPOCH] until a strict call of one, with a later epoch, holds a batch
 * lock of a CPU other than the hint caller's; the strict call holds it
 * until the hint call's trylock of that very lock has failed.  Every wait
 * is bounded (DRAIN_HOLD_MS), and each step says so in dmesg.
 */
#define DRAIN_HOLD_MS	30000
enum {
	HOLD_IDLE, HOLD_SETUP, HOLD_WAITING, HOLD_CLAIMED, HOLD_HOLDING,
	HOLD_TRIED, HOLD_DONE
};

static bool drain_hold_on __read_mostly;
static atomic_t drain_hold_state = ATOMIC_INIT(HOLD_IDLE);
static unsigned long drain_hold_epoch;	/* the hint call's */
static int drain_hold_cpu;		/* the hint call's CPU */
static struct drain_slot *drain_hold_slot;	/* the lock held */
static unsigned int drain_hold_group;

static bool drain_hold_me(void)
{
	return unlikely(drain_hold_on) && !strcmp(current->comm, "drain_call");
}

/* The hint call: wait for a strict one to hold a lock. */
static void drain_hold_wait(struct drain_call *dc)
{
	u64 end = ktime_get_ns() + (u64)DRAIN_HOLD_MS * NSEC_PER_MSEC;

	if (!drain_hold_me() || !dc->relaxed ||
	    atomic_cmpxchg(&drain_hold_state, HOLD_IDLE, HOLD_SETUP) != HOLD_IDLE)
		return;
	drain_hold_epoch = dc->epoch;
	drain_hold_cpu = raw_smp_processor_id();
	/* release: the epoch and CPU before the state a strict call reads */
	atomic_set_release(&drain_hold_state, HOLD_WAITING);
	pr_info("drain_hold: hint call (epoch %lu, CPU %d) waits for a lock held\n",
		dc->epoch, drain_hold_cpu);
	while (atomic_read_acquire(&drain_hold_state) < HOLD_HOLDING) {
		if (ktime_get_ns() >= end) {
			pr_info("drain_hold: no strict call held a lock\n");
			return;
		}
		msleep(20);
	}
}

/* The strict call, holding @slot's group @g: hold it for the hint call. */
static void drain_hold_lock(struct drain_call *dc, struct drain_slot *slot,
			    unsigned int g)
{
	u64 end;

	if (!drain_hold_me() || dc->relaxed ||
	    atomic_read_acquire(&drain_hold_state) != HOLD_WAITING ||
	    slot == per_cpu_ptr(drain_slots, drain_hold_cpu) ||
	    (long)(dc->epoch - drain_hold_epoch) <= 0 ||
	    atomic_cmpxchg(&drain_hold_state, HOLD_WAITING,
			   HOLD_CLAIMED) != HOLD_WAITING)
		return;
	drain_hold_slot = slot;
	drain_hold_group = g;
	/* release: the lock's identity before the state */
	atomic_set_release(&drain_hold_state, HOLD_HOLDING);
	pr_info("drain_hold: strict call (epoch %lu) holds a lock\n", dc->epoch);
	/*
	 * Spinning, bounded by the clock: no sleep under the lock (RT's
	 * spinlock_t holds an RCU read section), and no mdelay() count,
	 * which is no clock under TCG.
	 */
	end = ktime_get_ns() + (u64)DRAIN_HOLD_MS * NSEC_PER_MSEC;
	while (atomic_read(&drain_hold_state) == HOLD_HOLDING &&
	       ktime_get_ns() < end)
		cpu_relax();
	pr_info("drain_hold: strict call releases the lock (%s)\n",
		atomic_read(&drain_hold_state) == HOLD_TRIED ?
		"the hint call tried it" : "nobody tried it");
	atomic_set(&drain_hold_state, HOLD_DONE);
}

/* The hint call's trylock of @slot's group @g failed. */
static void drain_hold_tried(struct drain_slot *slot, unsigned int g)
{
	if (!drain_hold_me() ||
	    atomic_read_acquire(&drain_hold_state) != HOLD_HOLDING ||
	    slot != drain_hold_slot || g != drain_hold_group)
		return;
	atomic_set(&drain_hold_state, HOLD_TRIED);
}

/*
 * [BEGIN] for every group of the current CPU, whose drain by the call
 * follows (see "Piggyback").
 */
static void drain_begin_self(struct drain_call *dc)
{
	struct drain_slot *slot = this_cpu_ptr(drain_slots);
	unsigned int g;

	if (!dc->go_remote)
		return;
	for (g = 0; g < LRUOPT_REMOTE_GROUPS; g++)
		WRITE_ONCE(slot->begun[g], dc->epoch);
}

/*
 * Drain @cpu's batches from here, one group (one lock) after the other.
 * @block: strict caller, wait for a busy lock (PI); else trylock.  Returns
 * true when every group was locked (and drained, or found empty) or, busy,
 * held by a drain that began after the call's scan ("Piggyback").  Counted
 * as a remote drain only if some group held folios: a CPU whose only
 * content is its buffer-head LRU is the queued work's.
 */
static bool drain_remote_cpu(struct drain_call *dc, unsigned int cpu,
			     bool block)
{
	struct drain_slot *slot = per_cpu_ptr(drain_slots, cpu);
	bool busy = false, shared = false, drained = false;
	unsigned int g;

	for (g = 0; g < LRUOPT_REMOTE_GROUPS; g++) {
		local_lock_t *lock = lruopt_remote_lock_of(cpu, g);

		if (!lruopt_remote_pending(cpu, g))
			continue;
		if (!lruopt_remote_lock(lock, block)) {
			/* a later epoch's drain: see "Piggyback" */
			if ((long)(READ_ONCE(slot->begun[g]) - dc->epoch) > 0)
				shared = true;
			else
				busy = true;
			drain_hold_tried(slot, g);
			continue;
		}
		/* [BEGIN]: see "Piggyback" */
		WRITE_ONCE(slot->begun[g], dc->epoch);
		drain_hold_lock(dc, slot, g);
		/* [FENCED]: pairs with [FENCE] in drain_remote_hp_dead() */
		if (cpumask_test_cpu(cpu, &drain_remote_cpus))
			lruopt_remote_drain_group(cpu, g);
		lruopt_remote_unlock(lock);
		drained = true;
	}
	if (busy)
		dc->remote_busy++;
	else if (shared)
		dc->remote_shared++;
	else if (drained)
		dc->remote++;
	return !busy;
}

/* An ENDBR64 instruction, as it reads in memory (f3 0f 1e fa). */
#define DRAIN_ENDBR64	0xfa1e0ff3U

/* Can @fn be the target of an indirect call on this kernel? */
static bool drain_endbr_ok(void *fn)
{
	u32 insn;

	/*
	 * Testing only: read a function that is only ever called directly
	 * and so has no ENDBR64, to show that the check refuses it.
	 */
	if (lruopt_fault_is("drain_endbr"))
		fn = folio_batch_move_lru;
	else if (!IS_ENABLED(CONFIG_X86_KERNEL_IBT))
		return true;
	/*
	 * Exact on the running kernel: a function objtool sealed reads as
	 * the poison apply_seal_endbr() wrote at boot, not as ENDBR64.
	 */
	if (copy_from_kernel_nofault(&insn, fn, sizeof(insn)))
		return false;
	return insn == DRAIN_ENDBR64;
}

/*
 * The relocations are written: check the move functions, then let drains
 * go remote.  The hotplug fence (drain_remote_hp_dead()) starts locking
 * from here on too.
 */
static void drain_bound(void)
{
	if (!LRUOPT_REMOTE_GROUPS)
		return;
	if (!lruopt_remote_move_fns_all(drain_endbr_ok)) {
		/* from now on writing 1 fails as it does on non-RT kernels */
		remote_attr.max = 0;
		WRITE_ONCE(drain_remote, 0);
		pr_warn("drain: remote drains unavailable: a move function of mm/swap.c lacks ENDBR64 (IBT); drains queue work as on non-RT kernels\n");
		return;
	}
	WRITE_ONCE(drain_remote_ok, true);
}

/* Do drains go remote now: switched on, and the ENDBR check passed? */
static bool drain_remote_on(void)
{
	return READ_ONCE(drain_remote) && READ_ONCE(drain_remote_ok);
}

/* Queue @cpu's drain and return the ticket that its completion covers. */
static unsigned long drain_request(struct drain_call *dc, int cpu)
{
	struct drain_slot *slot = per_cpu_ptr(drain_slots, cpu);
	/* [TICKET]: a value-returning atomic, fully ordered */
	unsigned long ticket = atomic_long_inc_return(&slot->requested);

	if (queue_work_on(cpu, READ_ONCE(mm_percpu_wq), &slot->work))
		dc->queued++;
	else
		dc->shared++;
	return ticket;
}

/**
 * lruopt_drain_cpu_nowait - queue a drain of @cpu and return at once
 * @cpu: an online CPU
 *
 * For a CPU that just became quiet (lruopt_quiet.c): its own drain work
 * empties what it batched before, under its own local locks, and nobody
 * waits for it (a CPU hogged by a real-time task may run it late; its next
 * add moves its whole batch anyway).  Shares the slot's work with drains in
 * flight, as any caller does.
 */
void lruopt_drain_cpu_nowait(int cpu)
{
	/* no ticket: nobody waits for this run */
	queue_work_on(cpu, READ_ONCE(mm_percpu_wq),
		      &per_cpu_ptr(drain_slots, cpu)->work);
}

/*
 * The call's clock starts with its first piece of work (a remote drain, a
 * queued work item, the inline drain): the nothing-pending call reads no
 * clock.  A hint caller's deadline (drain/timeout_us) runs from there and
 * covers remote drains and the wait alike.
 */
static void drain_started(struct drain_call *dc)
{
	if (dc->t0)
		return;
	dc->t0 = ktime_get_ns();
	if (dc->timeout_us)
		dc->end = dc->t0 + (u64)dc->timeout_us * NSEC_PER_USEC;
}

/*
 * Drain @cpu for @dc, from wherever the caller runs now: leave it (nothing
 * pending, or skipped), drain it from here (remote), or queue its work,
 * whose ticket goes into @w.  @may_skip: a hint caller, and @cpu is not the
 * one the call started on (a caller's own batches are always drained, as
 * stock does).  Without memory for @w the work is waited for at once: the
 * CPUs are then drained one after the other, never by the stock drain,
 * which would queue work on skipped CPUs too.
 */
static void drain_one(struct drain_call *dc, struct drain_wait *w, int cpu,
		      bool may_skip)
{
	unsigned long ticket;
	bool first;

	if (!lruopt_cpu_needs_drain(cpu)) {
		dc->empty++;
		return;
	}
	/*
	 * A skipped CPU is not touched at all: no work, and no remote drain
	 * either (its locks and batch cache lines stay its own).  Its folios
	 * stay batched until it drains itself (its own lru_add_drain(), a
	 * full batch) or a strict caller drains it.  Decided once per CPU:
	 * skip_cpus may change under our feet.
	 */
	if (may_skip && lruopt_drain_skips(cpu)) {
		dc->skipped++;
		dc->deferred++;
		return;
	}
	first = !dc->t0;
	drain_started(dc);
	if (dc->go_remote) {
		/*
		 * Checked before each CPU: a remote drain is the caller's own
		 * time, and past the deadline a hint caller starts no more.
		 * Not before the first: the call has spent none of its own
		 * yet (only a preemption between the two clock reads could
		 * make it late).
		 */
		if (!first && dc->end && ktime_get_ns() >= dc->end) {
			dc->timed_out++;
			return;
		}
		/*
		 * What is left after it is at most a busy group (hint
		 * callers) and the buffer-head LRU, which only queued work
		 * on that CPU can drain.
		 */
		if (drain_remote_cpu(dc, cpu, !dc->relaxed) &&
		    !has_bh_in_lru(cpu, NULL))
			return;
		/*
		 * [NOWAIT] A hint caller queues that work and does not wait
		 * for it.  The work needs a kworker on X, and X is typically
		 * busy (a storm's writer, an RT task): waiting for it was
		 * the multi-millisecond tail of fadvise storms, where stock's
		 * callers, serialised by its mutex, leave CPUs idle for their
		 * kworkers.  A busy group makes the call partial; a
		 * buffer-head LRU only pins buffers, whose pages the work
		 * releases for a later call.  Not waiting also keeps the
		 * serial fallback below, and its allocation, off hint
		 * callers.
		 */
		if (dc->relaxed) {
			drain_request(dc, cpu);
			dc->nowait++;
			return;
		}
	}
	ticket = drain_request(dc, cpu);
	if (w->cpus || drain_wait_alloc(w)) {
		w->ticket[cpu] = ticket;
		__cpumask_set_cpu(cpu, w->cpus);
		return;
	}
	dc->serial = true;
	drain_wait_cpu(dc, cpu, ticket, dc->end);
}

/*
 * The drain proper, in one pass over the online CPUs.  Returns FULL when
 * every CPU's folio batches that needed draining were drained before
 * returning (or, busy, by a drain begun after the call's scan); a hint
 * caller with remote drains may leave a buffer-head LRU to work it does
 * not wait for ([NOWAIT]).  PARTIAL when a hint caller left some batches:
 * skipped, late, or busy and left to queued work.
 */
static enum lruopt_drain_result drain_all(struct drain_call *dc)
{
	struct drain_wait w = { };
	bool pinned;
	int cpu, self;

	dc->relaxed = dc->site.class == DC_HINT;
	dc->timeout_us = dc->relaxed ? READ_ONCE(drain_timeout_us) : 0;
	dc->go_remote = drain_remote_on();
	/*
	 * A hint caller with remote drains blocks nowhere in its pass
	 * (trylocks, [NOWAIT], no allocation): it runs pinned, so that
	 * its own CPU is the one drained inline and none of its remote
	 * drains queue work on the CPU it started on.  Strict callers run
	 * migratable (see "Priority inheritance").
	 */
	pinned = dc->relaxed && dc->go_remote;

	/*
	 * [SCAN]: as stock's smp_mb() before its own peeks, it orders
	 * everything the caller did before the call (the batch stores it
	 * made, or the synchronisation through which it learnt of another
	 * CPU's) before the per-cpu counts are read.  A CPU whose count reads
	 * 0 had nothing batched that the caller could depend on.
	 *
	 * Like stock, no hotplug lock: a CPU going offline has its batches
	 * drained by the page allocator's CPU-dead callback, possibly after
	 * we return (between the workqueue's offline step and that callback
	 * a work item queued to it runs unbound on another CPU, drains that
	 * one and still publishes done): the same window as stock's
	 * queue_work_on() + flush_work().
	 *
	 * Otherwise the pass runs migratable: a drainer that waits for a
	 * remote CPU's lock (RT) must not be pinned to its own CPU while it
	 * waits (see "Priority inheritance" above).  "self" is only where the
	 * call started; the CPU drained inline is the one it ends on, pinned
	 * for that drain alone, and a caller that moved meanwhile drains the
	 * CPU it left like any other, never skipping it.  Either way every
	 * online CPU is covered: the loop covers all but self, the inline
	 * drain or the second drain_one() covers self.  (A caller moved onto
	 * a CPU the loop skipped drains it inline all the same, counted as
	 * skipped: a migration's only cost is that count.)
	 */
	smp_mb();
	if (dc->go_remote) {
		/* [EPOCH]: fully ordered; see "Piggyback" */
		dc->epoch = atomic_long_inc_return(&drain_epoch);
		drain_hold_wait(dc);
	}
	if (pinned)
		migrate_disable();
	self = raw_smp_processor_id();
	for_each_online_cpu(cpu)
		if (cpu != self)
			drain_one(dc, &w, cpu, dc->relaxed);
	if (!pinned) {
		migrate_disable();
		if (raw_smp_processor_id() != self) {
			migrate_enable();
			drain_one(dc, &w, self, false);
			migrate_disable();
		}
	}
	/* The CPU we are on, inline, while the others' work runs. */
	if (lruopt_cpu_needs_drain(raw_smp_processor_id())) {
		drain_started(dc);
		drain_begin_self(dc);
		drain_this_cpu();
		dc->inline_drain = true;
	}
	migrate_enable();

	if (w.cpus) {
		drain_wait_for(dc, &w, dc->end);
		kfree(w.cpus);
	}
	return dc->skipped || dc->timed_out || dc->remote_busy ?
	       LRUOPT_DRAIN_PARTIAL : LRUOPT_DRAIN_FULL;
}

/* A count kept both globally (stats/) and in the call's site row. */
static __always_inline void drain_count_both(struct drain_site s,
					     unsigned int g,
					     enum drain_site_stat i, u64 n)
{
	if (!n)
		return;
	lruopt_count(&drain_stats, g, n);
	drain_site_count(s, i, n);
}

/*
 * Where a call is counted: the global stats/, its call-site row and the
 * lruopt:drain event, so that the three always agree (the nothing-pending
 * call: drain_account_idle(), the same counts for its all-zero call).
 */
static __always_inline void drain_account(struct drain_call *dc,
					  enum lruopt_drain_result res)
{
	struct lruopt_counters *g = &drain_stats;
	struct drain_site s = dc->site;

	switch (res) {
	case LRUOPT_DRAIN_COALESCED:
		drain_count_both(s, DS_COALESCED, SS_COALESCED, 1);
		drain_count_both(s, DS_INLINE, SS_INLINE, dc->inline_drain);
		break;
	case LRUOPT_DRAIN_FULL:
	case LRUOPT_DRAIN_PARTIAL:
		if (res == LRUOPT_DRAIN_FULL)
			drain_count_both(s, DS_FULL, SS_FULL, 1);
		else
			drain_count_both(s, DS_PARTIAL, SS_PARTIAL, 1);
		lruopt_count(g, DS_SKIPPED_EMPTY, dc->empty);
		if (dc->serial)
			lruopt_count(g, DS_FALLBACKS, 1);
		if (dc->queued)
			lruopt_count(g, DS_CPUS_QUEUED, dc->queued);
		if (dc->shared)
			lruopt_count(g, DS_CPUS_SHARED, dc->shared);
		drain_count_both(s, DS_INLINE, SS_INLINE, dc->inline_drain);
		drain_count_both(s, DS_SKIPPED_CPUS, SS_SKIPPED, dc->skipped);
		drain_count_both(s, DS_DEFERRED, SS_DEFERRED, dc->deferred);
		drain_count_both(s, DS_TIMEOUTS, SS_TIMED_OUT, dc->timed_out);
		drain_count_both(s, DS_REMOTE, SS_REMOTE, dc->remote);
		lruopt_count(g, DS_REMOTE_BUSY, dc->remote_busy);
		lruopt_count(g, DS_REMOTE_SHARED, dc->remote_shared);
		lruopt_count(g, DS_NOWAIT, dc->nowait);
		if (dc->waited && dc->relaxed)
			lruopt_count(g, DS_HINT_WAITS, 1);
		if (dc->queued + dc->shared)
			drain_site_count(s, SS_QUEUED, dc->queued + dc->shared);
		if (dc->t0) {
			lruopt_count(g, DS_WAIT_TOTAL, dc->wait_ns);
			lruopt_count_max(g, DS_WAIT_MAX, dc->wait_ns);
			drain_site_count(s, SS_WAIT_TOTAL, dc->wait_ns);
			drain_site_max(s, SS_WAIT_MAX, dc->wait_ns);
		}
		break;
	}
	drain_site_count(s, SS_CALLS, 1);
	trace_drain(dc->ip, s.class == DC_HINT, dc->queued + dc->shared,
		    dc->inline_drain, dc->skipped, dc->deferred, dc->remote,
		    dc->timed_out, dc->nowait, dc->wait_ns, res,
		    dc->force_all_cpus);
}

/*
 * What drain_account() counts for a call that found nothing pending: a
 * full drain of nothing, @empty CPUs looked at, nothing queued, inline,
 * skipped or waited for.  Kept beside it, field for field, so that the
 * stats/, the call-site row and the event agree as they do for any call;
 * without a struct drain_call, whose clearing was a measurable part of
 * this call under TCG.
 */
static __always_inline void drain_account_idle(unsigned long ip,
					       struct drain_site s,
					       unsigned int empty)
{
	drain_count_both(s, DS_FULL, SS_FULL, 1);
	lruopt_count(&drain_stats, DS_SKIPPED_EMPTY, empty);
	drain_site_count(s, SS_CALLS, 1);
	trace_drain(ip, s.class == DC_HINT, 0, false, 0, 0, 0, 0, 0, 0,
		    LRUOPT_DRAIN_FULL, false);
}

/* Can the replacement drain at all?  If not, the stock drain runs. */
static bool drain_ready(void)
{
	if (!lruopt_active(&lruopt_drain_feature))
		return false;
	/* As stock: nothing can be queued before mm_percpu_wq exists. */
	if (unlikely(!READ_ONCE(mm_percpu_wq))) {
		lruopt_count(&drain_stats, DS_FALLBACKS, 1);
		return false;
	}
	return true;
}

/*
 * Does any online CPU have something to drain?  @n: when none has, how
 * many CPUs count as skipped_empty: all but the caller's own, as
 * drain_all() counts them (its own CPU is drained inline or not at all,
 * never skipped).  The nothing-pending call (compaction,
 * MADV_COLLAPSE, memfd seals on an idle system) ends with this pass: the
 * same peeks as stock's cpu_needs_drain() pass, without its mutex and
 * generation bump, and without drain_all()'s pinning for the inline drain.
 * Unpinned is enough for a pass that drains nothing: a CPU the caller
 * leaves during the pass is read like any other, and whatever the caller
 * batched on it is ordered before the read by the migration itself.
 */
static bool drain_pending(unsigned int *n)
{
	unsigned int cpu, empty = 0;

	for_each_online_cpu(cpu) {
		if (lruopt_cpu_needs_drain(cpu))
			return true;
		empty++;
	}
	/* every online CPU was empty, the one we run on among them */
	*n = empty - 1;
	return false;
}

/*
 * A coalesced call's own CPU.  The window answers for the other CPUs, not
 * for what the caller itself batched since the last full drain: stock
 * always drains the caller's CPU (lru_add_drain_all() queues work there
 * as anywhere), and so does every call here.  Returns whether there was
 * anything to drain.
 */
static bool drain_self_pending(void)
{
	bool pending;

	migrate_disable();
	pending = lruopt_cpu_needs_drain(raw_smp_processor_id());
	if (pending)
		drain_this_cpu();
	migrate_enable();
	return pending;
}

/* Drain for @dc, whose site is classified, and count the call. */
static void drain_run(struct drain_call *dc, unsigned int coalesce_us)
{
	enum lruopt_drain_result res;
	u64 now = 0;

	res = drain_all(dc);
	if (dc->t0) {
		now = ktime_get_ns();
		dc->wait_ns = now - dc->t0;
	}
	/*
	 * Only coalescing reads the end of the last full drain: with it off,
	 * a full drain writes no shared line at all.
	 */
	if (res == LRUOPT_DRAIN_FULL && coalesce_us)
		WRITE_ONCE(drain_last_full_ns, now ?: ktime_get_ns());
	drain_account(dc, res);
}

/*
 * A call with something to drain, on a frame of its own: the
 * nothing-pending call neither carries nor clears a struct drain_call.
 */
static noinline void drain_call_run(unsigned long ip, struct drain_site site,
				    unsigned int coalesce_us)
{
	struct drain_call dc = { .ip = ip, .site = site };

	drain_run(&dc, coalesce_us);
}

/**
 * lruopt_lru_add_drain_all - replacement for lru_add_drain_all()
 *
 * Drains the per-cpu LRU batches of every CPU; see the file comment for the
 * policy.  Runs the stock function when the feature is switched off.
 */
static void lruopt_lru_add_drain_all(void)
{
	unsigned long ip = (unsigned long)__builtin_return_address(0);
	unsigned int coalesce_us, empty;
	struct drain_site site;

	/* stock takes a mutex and waits: so may every path of ours */
	might_sleep();
	lruopt_count(&drain_stats, DS_CALLS, 1);
	if (!drain_ready())
		goto stock;

	site = drain_site_get(ip);
	/* The clock is read only when coalescing can use it. */
	coalesce_us = READ_ONCE(drain_coalesce_us);
	if (site.class == DC_HINT && coalesce_us &&
	    ktime_get_ns() - READ_ONCE(drain_last_full_ns) <
	    (u64)coalesce_us * NSEC_PER_USEC) {
		struct drain_call dc = { .ip = ip, .site = site };

		dc.inline_drain = drain_self_pending();
		drain_account(&dc, LRUOPT_DRAIN_COALESCED);
		return;
	}
	/*
	 * [SCAN], as in drain_all(): nothing pending anywhere is a full drain
	 * of nothing.  Otherwise drain_all() looks again, after its own
	 * barrier, and its pass decides.
	 */
	smp_mb();
	if (!drain_pending(&empty)) {
		drain_account_idle(ip, site, empty);
		return;
	}
	drain_call_run(ip, site, coalesce_us);
	return;
stock:
	lruopt_count(&drain_stats, DS_STOCK, 1);
	__lru_add_drain_all(false);
}

/**
 * lruopt_lru_cache_disable - replacement for lru_cache_disable() (RT only)
 *
 * Migration, CMA allocation and memory offlining stop the per-CPU LRU
 * batches and empty them: stock increments lru_disable_count, waits for
 * an RCU grace period and runs __lru_add_drain_all(true), which queues
 * work on every CPU whose batches hold anything and waits for it, on an
 * isolated CPU too.  With remote drains (PREEMPT_RT) this drains those
 * CPUs from here instead, as a strict lru_add_drain_all() caller does:
 * blocking on each remote lock, queued work only for buffer heads, no
 * skipping, no bound, no coalescing.  Without them it is the stock code.
 *
 * lru_disable_count keeps its exact semantics: one increment, before the
 * grace period, for every call (lru_cache_enable(), the kernel's inline,
 * decrements it), and no return before every CPU's batches were empty.
 * The grace period makes that last: once it has passed, every CPU that
 * could add to a batch under its local lock sees the count (RT: inside
 * rt_spin_lock()'s rcu_read_lock(); the stock comment lists the readers)
 * and moves what it adds at once, so a batch drained afterwards, here or
 * by the work, stays empty until lru_cache_enable().  A task may run the
 * old function while another runs this one: both increment once, and
 * either drain leaves the batches empty.
 *
 * Unused (and so not built) where drain_funcs leaves it out.
 */
static void __maybe_unused lruopt_lru_cache_disable(void)
{
	struct drain_call dc = {
		.ip = (unsigned long)__builtin_return_address(0),
		.force_all_cpus = true,
	};

	might_sleep();
	atomic_inc(&lru_disable_count);
	synchronize_rcu_expedited();

	lruopt_count(&drain_stats, DS_CALLS, 1);
	if (!drain_remote_on() || !drain_ready())
		goto stock;
	dc.site = drain_site_get(dc.ip);
	/* every caller needs every batch empty, whatever its site table says */
	dc.site.class = DC_STRICT;
	drain_run(&dc, 0);
	return;
stock:
	lruopt_count(&drain_stats, DS_STOCK, 1);
	__lru_add_drain_all(true);
}

/* ------------------------------------------------------------- sysfs */

/*
 * Every knob is also a module parameter drain_<knob> (lruopt.h), validated
 * by the same parser as its sysfs file.
 */
LRUOPT_UINT_KNOB(drain, timeout_us, drain_timeout_us, 0, DRAIN_TIMEOUT_MAX_US,
		 "Initial value of drain/timeout_us: bound on a hint caller's wait and remote drains, 0 = unbounded (0..10000000, default 0)");
LRUOPT_UINT_KNOB(drain, coalesce_us, drain_coalesce_us, 0,
		 DRAIN_COALESCE_MAX_US,
		 "Initial value of drain/coalesce_us: a hint caller this soon after a full drain returns at once, 0 = off (0..1000000, default 0)");
module_param_cb(drain_skip_isolated, &lruopt_bool_param_ops,
		&drain_skip_isolated, 0444);
MODULE_PARM_DESC(drain_skip_isolated,
		 "Initial value of drain/skip_isolated: hint callers leave isolated and nohz_full CPUs alone (0|1, default 1)");

/*
 * Parse a CPU list of @n bytes into @mask (untouched on error).  Only list
 * characters ("N" is the last CPU): cpulist_parse() would also skip blanks
 * and stop at a NUL, which would let garbage through as a shorter list.
 * "" is the empty set.
 */
static int drain_parse_cpus(const char *buf, size_t n, struct cpumask *mask)
{
	cpumask_var_t new;
	int ret;

	if (strnlen(buf, n) != n || strspn(buf, "0123456789,-:/N") != n)
		return -EINVAL;
	if (!zalloc_cpumask_var(&new, GFP_KERNEL))
		return -ENOMEM;
	/* cpulist_parse() takes "" as the empty set and rejects bad CPUs */
	ret = cpulist_parse(buf, new) ? -EINVAL : 0;
	if (!ret) {
		mutex_lock(&drain_skip_lock);
		/*
		 * Readers test single bits without the lock: a drain racing
		 * with this copy sees each CPU either skipped or not, both
		 * of which are valid answers for a hint-like caller.
		 */
		cpumask_copy(mask, new);
		mutex_unlock(&drain_skip_lock);
	}
	free_cpumask_var(new);
	return ret;
}

static int drain_skip_cpus_param_set(const char *val,
				     const struct kernel_param *kp)
{
	/* the loader hands the bare value; "drain_skip_cpus" alone is NULL */
	return val ? drain_parse_cpus(val, strlen(val), kp->arg) : -EINVAL;
}

static int drain_skip_cpus_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(&drain_skip_mask));
}

static const struct kernel_param_ops drain_skip_cpus_param_ops = {
	.set = drain_skip_cpus_param_set,
	.get = drain_skip_cpus_param_get,
};

module_param_cb(drain_skip_cpus, &drain_skip_cpus_param_ops, &drain_skip_mask,
		0444);
MODULE_PARM_DESC(drain_skip_cpus,
		 "Initial value of drain/skip_cpus: CPUs hint callers leave alone (a CPU list, default empty)");

static ssize_t skip_isolated_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(drain_skip_isolated));
}

static ssize_t skip_isolated_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	ssize_t ret = lruopt_store_bool(buf, count, &drain_skip_isolated);

	if (ret > 0)
		lruopt_settings_changed();
	return ret;
}

static ssize_t skip_cpus_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(&drain_skip_mask));
}

static ssize_t skip_cpus_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	size_t n = count;
	int ret;

	/* one final newline is allowed; sysfs never calls with count 0 */
	if (buf[n - 1] == '\n')
		n--;
	ret = drain_parse_cpus(buf, n, &drain_skip_mask);
	if (ret)
		return ret;
	lruopt_settings_changed();
	return count;
}

static ssize_t callers_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return drain_sites_show(buf);
}

static struct kobj_attribute skip_cpus_attr = __ATTR_RW_MODE(skip_cpus, 0644);
static struct kobj_attribute skip_isolated_attr =
	__ATTR_RW_MODE(skip_isolated, 0644);
static struct kobj_attribute callers_attr = __ATTR_RO(callers);

static struct attribute *drain_attrs[] = {
	&timeout_us_attr.kattr.attr,
	&coalesce_us_attr.kattr.attr,
	&skip_cpus_attr.attr,
	&skip_isolated_attr.attr,
	&remote_attr.kattr.attr,
	&callers_attr.attr,
	NULL,
};

/* ------------------------------------------------------ init and exit */

static int lruopt_drain_init(void)
{
	int cpu, ret;

	ret = drain_sites_init();
	if (ret)
		return ret;
	drain_hold_on = lruopt_fault_is("drain_hold");
	drain_slots = alloc_percpu(struct drain_slot);
	if (!drain_slots) {
		drain_sites_exit();
		return -ENOMEM;
	}
	/* The only INIT_WORK() of these items: they are never re-initialised. */
	for_each_possible_cpu(cpu) {
		INIT_WORK(&per_cpu_ptr(drain_slots, cpu)->work, drain_workfn);
		init_waitqueue_head(&per_cpu_ptr(drain_slots, cpu)->wq);
	}
	if (!LRUOPT_REMOTE_GROUPS)
		return 0;
	/* Sets the bit of every online CPU; see "CPU hotplug" above. */
	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "lruopt/drain:remote",
				drain_remote_hp_up, drain_remote_hp_dead);
	if (ret < 0) {
		free_percpu(drain_slots);
		drain_sites_exit();
		return ret;
	}
	drain_remote_hp = ret;
	return 0;
}

/*
 * The patch is gone, so no caller waits any more; but work items that a
 * timed-out drain left queued may still be pending or running.  Cancelling
 * a pending drain is harmless (the folios stay batched until the next
 * drain), and cancel_work_sync() waits for a running one.
 */
static void lruopt_drain_exit(void)
{
	int cpu;

	/* No drainer is left to fence against: no teardown calls. */
	if (drain_remote_hp >= 0)
		cpuhp_remove_state_nocalls(drain_remote_hp);
	for_each_possible_cpu(cpu)
		cancel_work_sync(&per_cpu_ptr(drain_slots, cpu)->work);
	free_percpu(drain_slots);
	drain_sites_exit();
}

/*
 * lru_cache_disable() is replaced only where drains can go remote: on
 * other kernels its drain would be stock's, queued work on every CPU whose
 * batches hold something (none on a quiet CPU, which has nothing batched).
 */
static const struct klp_func drain_funcs[] = {
	LRUOPT_FUNC(lru_add_drain_all),
	LRUOPT_IF_REMOTE(LRUOPT_FUNC(lru_cache_disable))
	{ }
};

struct lruopt_feature lruopt_drain_feature = {
	.name = "drain",
	.enabled = true,
	.funcs = drain_funcs,
	.attrs = drain_attrs,
	.counters = &drain_stats,
	.init = lruopt_drain_init,
	.bound = drain_bound,
	.exit = lruopt_drain_exit,
};

LRUOPT_FEATURE_PARAM(drain);
