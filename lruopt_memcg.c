// SPDX-License-Identifier: GPL-2.0
/*
 * A pending-aware memcg page-stat lock.
 *
 * folio_memcg_lock() (6.1 mm/memcontrol.c) pins a folio's memcg binding while
 * a page-state counter (mapped, dirty, writeback) is updated.  The memcg can
 * only change under cgroup-v1 charge moving (move_charge_at_immigrate), so
 * the stock fast path is: rcu_read_lock(), load folio->memcg_data, load that
 * memcg's moving_account, return.  This is the successor of KAMEZAWA
 * Hiroyuki's "take the move lock only while a move is in progress"
 * ("[PATCH 0/6] page cgroup diet v5", linux-mm, 2012).
 *
 * The replacement answers the common case with one global, read-mostly load:
 * mem_cgroup_can_attach() publishes mc.moving_task before
 * mem_cgroup_move_charge() raises any memcg's moving_account, and clears it
 * only after moving_account went back to zero.  So "no charge move anywhere"
 * is mc.moving_task == NULL, and otherwise the stock per-memcg test follows.
 *
 * Exactness: the mover raises moving_account and then waits in
 * synchronize_rcu() before moving anything.  A locker that read
 * mc.moving_task == NULL inside its RCU read section either finishes that
 * section before the grace period ends (before any folio moves), or began it
 * after the grace period started, in which case RCU guarantees it sees the
 * earlier store of mc.moving_task and takes the stock path.  That is the very
 * argument stock makes for moving_account, one level up.
 *
 * Livepatch consistency: during a transition a task can lock with one
 * version and unlock with the other (and on Debian's 6.1 build some callers,
 * e.g. mem_cgroup_move_account(), reach the stock lock through the compiler
 * clone folio_memcg_lock.part.0 even after the transition).  Both versions
 * share one protocol, unchanged from stock: rcu_read_lock() is always taken;
 * move_lock is taken only on the slow path and then move_lock_task = current
 * and move_lock_flags are recorded; unlock releases move_lock iff
 * move_lock_task == current, then drops RCU.  The new lock takes move_lock
 * in exactly the cases stock does (moving_account > 0 implies
 * mc.moving_task != NULL), so any mix of old and new lock/unlock is
 * balanced: old lock + new unlock and new lock + old unlock each see the
 * same move_lock_task state that the same-version pair would.
 *
 * Debian's 6.12 has no charge moving (CONFIG_MEMCG_V1=n, folio_memcg_lock()
 * is an empty inline): there the feature reports supported=0.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/memcontrol.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include "lruopt_sysfs.h"

enum { CS_FAST, CS_SLOW, CS_RETRIES, CS_STOCK, CS_NR };

static const char *const memcg_stat_names[CS_NR + 1] = {
	[CS_FAST] = "fast",
	[CS_SLOW] = "slow",
	[CS_RETRIES] = "retries",
	[CS_STOCK] = "stock",
};

static struct lruopt_counters memcg_stats = { .names = memcg_stat_names };

#if LRUOPT_HAVE_MEMCG_MOVE

/*
 * Stock tells lockdep, on every pass and with interrupts off as for the
 * real acquisition, that folio_memcg_lock() may take move_lock, so that a
 * lock-order problem shows even while no charge moves.  Compiled out
 * without CONFIG_PROVE_LOCKING, as stock's #ifdef is.
 */
static inline void memcg_might_lock(struct mem_cgroup *memcg)
{
	unsigned long flags;

	if (!IS_ENABLED(CONFIG_PROVE_LOCKING))
		return;
	local_irq_save(flags);
	might_lock(&memcg->move_lock);
	local_irq_restore(flags);
}

/*
 * The stock slow path of folio_memcg_lock(): called with RCU held and a
 * memcg that may be moving.  Identical protocol to stock (see above).
 */
static void memcg_lock_slow(struct folio *folio, struct mem_cgroup *memcg)
{
	unsigned long flags;

again:
	memcg_might_lock(memcg);
	if (atomic_read(&memcg->moving_account) <= 0)
		return;
	lruopt_count(&memcg_stats, CS_SLOW, 1);
	spin_lock_irqsave(&memcg->move_lock, flags);
	if (memcg != folio_memcg(folio)) {
		spin_unlock_irqrestore(&memcg->move_lock, flags);
		lruopt_count(&memcg_stats, CS_RETRIES, 1);
		memcg = folio_memcg(folio);
		if (unlikely(!memcg))
			return;
		goto again;
	}
	/*
	 * Several fast-path RCU sections and one move_lock holder can coexist
	 * when a move begins: record the holder for the unlock.
	 */
	memcg->move_lock_task = current;
	memcg->move_lock_flags = flags;
}

/**
 * lruopt_folio_memcg_lock - replacement for folio_memcg_lock()
 * @folio: the folio whose memcg binding must stay stable
 *
 * Same contract and same lock state as stock; see the file comment.
 */
static void lruopt_folio_memcg_lock(struct folio *folio)
	__acquires(RCU)
{
	struct mem_cgroup *memcg;

	/* Held throughout the transaction, as stock: moving starts with a GP */
	rcu_read_lock();
	if (lruopt_active(&lruopt_memcg_feature)) {
		if (likely(!READ_ONCE(mc.moving_task))) {
			lruopt_count(&memcg_stats, CS_FAST, 1);
			return;
		}
	} else {
		lruopt_count(&memcg_stats, CS_STOCK, 1);
	}
	if (mem_cgroup_disabled())
		return;
	memcg = folio_memcg(folio);
	if (unlikely(!memcg))
		return;
	memcg_lock_slow(folio, memcg);
}

/**
 * lruopt_folio_memcg_unlock - replacement for folio_memcg_unlock()
 * @folio: the folio passed to the matching lock
 *
 * Releases move_lock iff this task holds it, whichever version took it.
 */
static void lruopt_folio_memcg_unlock(struct folio *folio)
	__releases(RCU)
{
	struct mem_cgroup *memcg = folio_memcg(folio);

	if (memcg && memcg->move_lock_task == current) {
		unsigned long flags = memcg->move_lock_flags;

		memcg->move_lock_task = NULL;
		memcg->move_lock_flags = 0;
		spin_unlock_irqrestore(&memcg->move_lock, flags);
	}
	rcu_read_unlock();
}

/*
 * The page wrappers must be replaced too: Debian's 6.1 build inlines
 * folio_memcg_lock() into lock_page_memcg() (via folio_memcg_lock.part.0,
 * a compiler clone livepatch must not target), so the rmap callers
 * (page_add_file_rmap(), page_remove_rmap(), ...), which are most of the
 * calls, would otherwise never reach the replacement.
 */
static void lruopt_lock_page_memcg(struct page *page)
	__acquires(RCU)
{
	lruopt_folio_memcg_lock(page_folio(page));
}

static void lruopt_unlock_page_memcg(struct page *page)
	__releases(RCU)
{
	lruopt_folio_memcg_unlock(page_folio(page));
}

static const struct klp_func memcg_funcs[] = {
	LRUOPT_FUNC(folio_memcg_lock),
	LRUOPT_FUNC(folio_memcg_unlock),
	LRUOPT_FUNC(lock_page_memcg),
	LRUOPT_FUNC(unlock_page_memcg),
	{ }
};

#else

static const struct klp_func memcg_funcs[] = { { } };

#endif /* LRUOPT_HAVE_MEMCG_MOVE */

/*
 * patch_memcg: whether the memcg page-stat lock goes into the livepatch.
 * Replacing lock_page_memcg() costs every page map/unmap an ftrace
 * redirection (memcg-mmap measured it at a third of the fault->drop loop
 * on 6.1), and the replacement can only gain while a cgroup-v1 memcg moves
 * charges, which stock already answers with one per-memcg load whenever
 * none is moving.  So "auto" leaves it out: an operator whose hosts move
 * charges (memory.move_charge_at_immigrate) opts in with patch_memcg=1.
 */
LRUOPT_PATCH_PARAM(memcg,
		   "Put the memcg page-stat lock (6.1) in the livepatch: auto (default: left out, it only gains where cgroup-v1 memcgs move charges), 1 (put it in: hosts that move charges), 0 (never; see docs/kernels.md)");

/*
 * Whether the memcg functions go into the patch, and the log line that says
 * why.  A feature left out looks like one the kernel lacks: supported =
 * enabled = 0, not in targets, nothing redirected, and
 * lruopt_check_feature_params() refuses an explicit memcg_enabled=1.
 *
 * "auto" never puts them in; the dmesg line still tells the two cases
 * apart.  On the default (v2) hierarchy charges never move
 * (mem_cgroup_can_attach() returns at once, mc.moving_task stays NULL), so
 * the replacement could only add the ftrace cost.  On a v1 hierarchy they
 * move only into memcgs with move_charge_at_immigrate set, and while none
 * moves stock's fast path is one load of the memcg's moving_account, as
 * cheap as ours: the ftrace redirection, twice per mapped page, is the
 * whole difference.  The memory controller starts on the default
 * hierarchy, whether or not cgroup2 is mounted; it moves to a v1 hierarchy
 * (clearing memory_cgrp_subsys_on_dfl_key) only when one is mounted with
 * it.
 */
static const char *lruopt_memcg_decide(void)
{
	lruopt_memcg_feature.supported = false;
	if (mem_cgroup_disabled())
		return "memory controller disabled (cgroup_disable=memory)";
	if (cgroup_subsys_on_dfl(memory_cgrp_subsys))
		return "memory controller on the cgroup-v2 hierarchy: charges never move";
	return "cgroup-v1: the lock only gains while charges move; patch_memcg=1 puts it in";
}

struct lruopt_feature lruopt_memcg_feature = {
	.name = "memcg",
	.enabled = LRUOPT_HAVE_MEMCG_MOVE,
	.funcs = memcg_funcs,
	.counters = &memcg_stats,
	.decide = lruopt_memcg_decide,
	.patch_mode = &patch_memcg,
	.unsupported_why = LRUOPT_MEMCG_WHY,
};

LRUOPT_FEATURE_PARAM(memcg);
