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
 *    a per-cpu request/completion generation (see "Generations" below);
 *  - for hint-like callers only (fadvise, khugepaged, compaction, KSM, memcg
 *    reclaim, drop_caches), optionally bounds the wait (timeout_us), does not
 *    wait for chosen or isolated CPUs (skip_cpus, skip_isolated), and answers
 *    a caller arriving shortly after a completed full drain at once
 *    (coalesce_us).  Callers whose correctness depends on every CPU being
 *    drained (long-term GUP pinning, memfd seals, memory-failure, device
 *    migration) and unknown callers always get a full, unbounded wait.
 *
 * With drain/enabled (or the master switch) at 0 the stock function runs:
 * __lru_add_drain_all(false), the kernel's own code, mutex and work items.
 *
 * Generations.  drain_gen is a global counter.  A caller takes
 * g = ++drain_gen with a fully ordered atomic (A), so its earlier stores are
 * ordered before the remote checks that follow.
 * For each remote CPU that needs draining it raises slot->requested to at
 * least g (B) and queues the slot's work.  The work function reads
 * slot->requested (C) *after* the workqueue core cleared PENDING (which is
 * ordered by a full barrier in the workqueue core), drains the CPU, then
 * publishes slot->done = that value with release semantics (D).  The caller
 * waits until slot->done >= g for every CPU it queued; (D) pairs with the
 * acquire load in drain_done() (E), so the drain's effects are visible to
 * the caller once it sees the generation.
 *
 * Why that is at least as strong as stock's lru_drain_gen scheme: a work run
 * that publishes done >= g read requested >= g at (C), i.e. it started
 * draining after our (B), hence after our call began; per-cpu batches are
 * only filled by their own CPU, so that run drains every folio the CPU had
 * batched before our call.  If the work was still PENDING at (B),
 * queue_work_on() returns false and the pending run, which has not read
 * requested yet, covers us: that is the batching (one run per CPU for any
 * number of concurrent callers).  If it was already running with an older
 * generation, PENDING is clear, queue_work_on() re-queues it and the next run
 * covers us.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/sched/isolation.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/wait.h>
#include "lruopt.h"

enum {
	DS_CALLS, DS_STOCK, DS_FULL, DS_PARTIAL, DS_COALESCED,
	DS_CPUS_QUEUED, DS_CPUS_SHARED, DS_INLINE, DS_SKIPPED_EMPTY,
	DS_SKIPPED_CPUS, DS_TIMEOUTS, DS_FALLBACKS, DS_WAIT_TOTAL, DS_WAIT_MAX,
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
};

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
static bool drain_skip_isolated;
static cpumask_var_t drain_skip_mask;
static DEFINE_MUTEX(drain_skip_lock);	/* serialises skip_cpus writers */

static atomic_long_t drain_gen;
static u64 drain_last_full_ns;		/* end of the last complete drain */
static DECLARE_WAIT_QUEUE_HEAD(drain_wq);

struct drain_slot {
	struct work_struct work;
	atomic_long_t requested;
	unsigned long done;
};

static struct drain_slot __percpu *drain_slots;

/* ----------------------------------------------------------- callers */

enum drain_class { DC_STRICT, DC_HINT };

#define DRAIN_MAX_CALLERS	32
#define DRAIN_SYM_LEN		48

/*
 * One entry per call site, found by the return address.  A slot is claimed
 * with cmpxchg() on @ip and published by the release store of @ready; a
 * reader that sees the ip but not yet ready treats the call as strict.
 * Cache-line aligned: @ip to @sym (read by every lookup) fill the first
 * line, the counters (written by every call from that site) the second.
 */
struct drain_caller {
	unsigned long ip;
	int ready;
	enum drain_class class;
	char sym[DRAIN_SYM_LEN];
	atomic64_t calls, queued, inlined, skipped, timed_out, coalesced;
	atomic64_t wait_total, wait_max, full, partial;
} ____cacheline_aligned_in_smp;

static_assert(offsetof(struct drain_caller, calls) == SMP_CACHE_BYTES);

static struct drain_caller drain_callers[DRAIN_MAX_CALLERS];
static struct drain_caller drain_caller_other = {
	.class = DC_STRICT, .ready = 1, .sym = "(other)",
};

/*
 * Callers for which a drain is only an optimisation: a folio left in a
 * remote batch only makes their work less complete, never wrong.  Names are
 * the functions that contain the call after inlining on 6.1 and 6.12.
 * Everything else, including any caller in a module, is strict.
 */
static const char *const drain_hint_callers[] = {
	"generic_fadvise",		/* fadvise(DONTNEED) */
	"khugepaged", "khugepaged_do_scan", "madvise_collapse",
	"compact_nodes", "compact_store", "sysctl_compaction_handler",
	"ksm_do_scan", "ksm_scan_thread", "scan_get_next_rmap_item",
	"mem_cgroup_force_empty", "mem_cgroup_force_empty_write",
	"mem_cgroup_move_charge", "mem_cgroup_move_task", "memory_reclaim",
	"drop_caches_sysctl_handler",
};

static enum drain_class drain_classify(const char *sym)
{
	size_t len = strcspn(sym, ".+ ");	/* drop .isra.0, .cold, +off */
	int i;

	for (i = 0; i < ARRAY_SIZE(drain_hint_callers); i++)
		if (strlen(drain_hint_callers[i]) == len &&
		    !strncmp(sym, drain_hint_callers[i], len))
			return DC_HINT;
	return DC_STRICT;
}

static struct drain_caller *drain_caller_get(unsigned long ip)
{
	char buf[KSYM_SYMBOL_LEN];
	struct drain_caller *c;
	int i;

	for (i = 0; i < DRAIN_MAX_CALLERS; i++) {
		unsigned long cur;

		c = &drain_callers[i];
		cur = READ_ONCE(c->ip);
		/* claim a free slot; losing the race to the same ip is a hit */
		if (!cur) {
			cur = cmpxchg(&c->ip, 0, ip);
			if (!cur)
				goto claimed;
		}
		if (cur != ip)
			continue;
		/* pairs with the release in the claim below: sym and class */
		return smp_load_acquire(&c->ready) ? c : &drain_caller_other;
	}
	return &drain_caller_other;
claimed:
	sprint_symbol_no_offset(buf, ip);
	strscpy(c->sym, buf, sizeof(c->sym));
	c->class = drain_classify(c->sym);
	/* publish sym and class: pairs with the acquires of ->ready */
	smp_store_release(&c->ready, 1);
	return c;
}

static void atomic64_max(atomic64_t *v, s64 x)
{
	s64 old = atomic64_read(v);

	while (x > old && !atomic64_try_cmpxchg(v, &old, x))
		;
}

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
	/* (C): read after PENDING was cleared; see the header comment */
	unsigned long gen = atomic_long_read(&slot->requested);

	drain_this_cpu();
	/* (D): pairs with (E) in drain_done() */
	smp_store_release(&slot->done, gen);
	wake_up_all(&drain_wq);
}

/* Has @cpu's slot completed a drain run that covers generation @gen? */
static bool drain_slot_done(int cpu, unsigned long gen)
{
	struct drain_slot *slot = per_cpu_ptr(drain_slots, cpu);

	/* (E): pairs with (D) in drain_workfn() */
	return (long)(smp_load_acquire(&slot->done) - gen) >= 0;
}

static bool drain_done(const struct cpumask *wait, unsigned long gen)
{
	int cpu;

	for_each_cpu(cpu, wait)
		if (!drain_slot_done(cpu, gen))
			return false;
	return true;
}

static bool drain_skip_cpu(int cpu)
{
	if (cpumask_test_cpu(cpu, drain_skip_mask))
		return true;
	return READ_ONCE(drain_skip_isolated) &&
	       (!housekeeping_test_cpu(cpu, HK_TYPE_DOMAIN) ||
		!housekeeping_test_cpu(cpu, HK_TYPE_TICK));
}

static void drain_request(int cpu, unsigned long gen)
{
	struct drain_slot *slot = per_cpu_ptr(drain_slots, cpu);
	long old = atomic_long_read(&slot->requested);

	/* (B): raise to at least gen; the cmpxchg is a full barrier */
	while ((long)(gen - old) > 0 &&
	       !atomic_long_try_cmpxchg(&slot->requested, &old, gen))
		;
	if (queue_work_on(cpu, READ_ONCE(mm_percpu_wq), &slot->work))
		lruopt_count(&drain_stats, DS_CPUS_QUEUED, 1);
	else
		lruopt_count(&drain_stats, DS_CPUS_SHARED, 1);
}

enum drain_result { DRAIN_FULL, DRAIN_PARTIAL, DRAIN_NOMEM };

/*
 * The drain proper.  DRAIN_FULL: every CPU that needed draining was drained
 * before returning.  DRAIN_NOMEM: the wait mask could not be allocated; no
 * CPU was waited for, and the caller must fall back to the stock drain.
 *
 * The mask of CPUs to wait for is allocated only once a remote CPU turns
 * out to need waiting for, so the common nothing-pending call allocates
 * nothing; GFP_NOWAIT because a drain must not recurse into reclaim, which
 * stock never does either.
 */
static enum drain_result drain_all(struct drain_caller *c, bool relaxed)
{
	unsigned int timeout_us = relaxed ? READ_ONCE(drain_timeout_us) : 0;
	int cpu, self, skipped = 0, timed_out = 0;
	enum drain_result ret = DRAIN_FULL;
	bool have_wait = false, skip;
	cpumask_var_t wait;
	unsigned long gen;

	/*
	 * (A): a value-returning atomic is fully ordered, so everything this
	 * task did before the call (including folio batch stores made on a
	 * CPU it has since left) is ordered before the remote peeks below.
	 */
	gen = atomic_long_inc_return(&drain_gen);

	/*
	 * Like stock, no hotplug lock: a CPU going offline has its batches
	 * drained by the page allocator's CPU-dead callback, and a work item
	 * queued to it is run by an unbound worker, which still publishes done.
	 * Migration is disabled so that "self" stays the CPU drained inline.
	 */
	migrate_disable();
	self = raw_smp_processor_id();
	for_each_online_cpu(cpu) {
		if (cpu == self)
			continue;
		if (!lruopt_cpu_needs_drain(cpu)) {
			lruopt_count(&drain_stats, DS_SKIPPED_EMPTY, 1);
			continue;
		}
		/* decided once: skip_cpus may be rewritten under our feet */
		skip = relaxed && drain_skip_cpu(cpu);
		if (!skip && !have_wait) {
			if (!zalloc_cpumask_var(&wait, GFP_NOWAIT | __GFP_NOWARN)) {
				/* nothing waited for yet: stock takes over */
				ret = DRAIN_NOMEM;
				break;
			}
			have_wait = true;
		}
		drain_request(cpu, gen);
		atomic64_inc(&c->queued);
		if (skip)
			skipped++;
		else
			__cpumask_set_cpu(cpu, wait);
	}
	/* Our own CPU, inline, while the remote ones work in parallel. */
	if (ret != DRAIN_NOMEM && lruopt_cpu_needs_drain(self)) {
		drain_this_cpu();
		lruopt_count(&drain_stats, DS_INLINE, 1);
		atomic64_inc(&c->inlined);
	}
	migrate_enable();

	if (!have_wait) {
		/* nothing to wait for (or no memory to track it) */
	} else if (!timeout_us) {
		wait_event(drain_wq, drain_done(wait, gen));
	} else if (wait_event_hrtimeout(drain_wq, drain_done(wait, gen),
					ns_to_ktime((u64)timeout_us * NSEC_PER_USEC))) {
		/* Late CPUs keep their queued work: it runs when it can. */
		for_each_cpu(cpu, wait)
			if (!drain_slot_done(cpu, gen))
				timed_out++;
	}
	if (have_wait)
		free_cpumask_var(wait);

	if (skipped) {
		lruopt_count(&drain_stats, DS_SKIPPED_CPUS, skipped);
		atomic64_add(skipped, &c->skipped);
		if (ret == DRAIN_FULL)
			ret = DRAIN_PARTIAL;
	}
	if (timed_out) {
		lruopt_count(&drain_stats, DS_TIMEOUTS, timed_out);
		atomic64_add(timed_out, &c->timed_out);
		ret = DRAIN_PARTIAL;
	}
	return ret;
}

/*
 * Does any online CPU hold batched folios?  The nothing-pending call (the
 * common one: compaction, MADV_COLLAPSE, memfd seals on an idle system)
 * is answered here with no lock, no global generation bump and no clock
 * read, where stock takes a global mutex and bumps a global generation
 * before the same per-cpu peeks.  Its only shared writes are the caller
 * entry's call and full-drain counts (one cache line per call site).
 */
static bool drain_any_pending(void)
{
	int cpu;

	/*
	 * (A'): as (A) in drain_all(): orders the caller's earlier accesses
	 * (the batch stores it made, or the synchronisation through which it
	 * learnt of another CPU's batch stores) before the per-cpu peeks.  A
	 * CPU whose batch count we read as 0 had, at that point, nothing
	 * batched that the caller could depend on; stock's smp_mb() before
	 * its own peeks makes the same and no stronger promise.
	 */
	smp_mb();
	for_each_online_cpu(cpu)
		if (lruopt_cpu_needs_drain(cpu))
			return true;
	return false;
}

/**
 * lruopt_lru_add_drain_all - replacement for lru_add_drain_all()
 *
 * Drains the per-cpu LRU batches of every CPU; see the file comment for the
 * policy.  Runs the stock function when the feature is switched off.
 */
static void lruopt_lru_add_drain_all(void)
{
	enum drain_result res;
	struct drain_caller *c;
	unsigned int coalesce_us;
	u64 t0 = 0, t1;
	bool hint;

	lruopt_count(&drain_stats, DS_CALLS, 1);
	if (!lruopt_active(&lruopt_drain_feature))
		goto stock;
	/* As stock: nothing can be queued before mm_percpu_wq exists. */
	if (unlikely(!READ_ONCE(mm_percpu_wq)))
		goto fallback;

	c = drain_caller_get((unsigned long)__builtin_return_address(0));
	atomic64_inc(&c->calls);
	hint = c->class == DC_HINT;

	/* The clock is read only when coalescing can use it. */
	coalesce_us = hint ? READ_ONCE(drain_coalesce_us) : 0;
	if (coalesce_us) {
		t0 = ktime_get_ns();
		if (t0 - READ_ONCE(drain_last_full_ns) <
		    (u64)coalesce_us * NSEC_PER_USEC) {
			lruopt_count(&drain_stats, DS_COALESCED, 1);
			atomic64_inc(&c->coalesced);
			return;
		}
	}

	if (!drain_any_pending()) {
		/* A complete drain that had nothing to do: no wait to add. */
		lruopt_count(&drain_stats, DS_SKIPPED_EMPTY,
			     num_online_cpus() - 1);
		lruopt_count(&drain_stats, DS_FULL, 1);
		atomic64_inc(&c->full);
		if (coalesce_us)
			WRITE_ONCE(drain_last_full_ns, t0);
		return;
	}

	if (!coalesce_us)
		t0 = ktime_get_ns();
	res = drain_all(c, hint);
	if (res == DRAIN_NOMEM)
		goto fallback;

	t1 = ktime_get_ns();
	if (res == DRAIN_FULL)
		WRITE_ONCE(drain_last_full_ns, t1);
	lruopt_count(&drain_stats, res == DRAIN_FULL ? DS_FULL : DS_PARTIAL, 1);
	atomic64_inc(res == DRAIN_FULL ? &c->full : &c->partial);
	lruopt_count(&drain_stats, DS_WAIT_TOTAL, t1 - t0);
	lruopt_count_max(&drain_stats, DS_WAIT_MAX, t1 - t0);
	atomic64_add(t1 - t0, &c->wait_total);
	atomic64_max(&c->wait_max, t1 - t0);
	return;
fallback:
	lruopt_count(&drain_stats, DS_FALLBACKS, 1);
stock:
	lruopt_count(&drain_stats, DS_STOCK, 1);
	__lru_add_drain_all(false);
}

/* ------------------------------------------------------------- sysfs */

static LRUOPT_UINT_ATTR(timeout_us, drain_timeout_us, 0, DRAIN_TIMEOUT_MAX_US);
static LRUOPT_UINT_ATTR(coalesce_us, drain_coalesce_us, 0,
			DRAIN_COALESCE_MAX_US);

static ssize_t skip_isolated_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(drain_skip_isolated));
}

static ssize_t skip_isolated_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	return lruopt_store_bool(buf, count, &drain_skip_isolated);
}

static ssize_t skip_cpus_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(drain_skip_mask));
}

static ssize_t skip_cpus_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	size_t n = count;
	cpumask_var_t new;
	int ret;

	/*
	 * Only list characters ("N" is the last CPU) and one final newline:
	 * cpulist_parse() would also skip blanks and stop at a NUL, which
	 * would let garbage through as a shorter list.  "" (or a lone
	 * newline) is the empty set.
	 */
	if (buf[n - 1] == '\n')	/* sysfs never calls with count 0 */
		n--;
	if (strspn(buf, "0123456789,-:/N") != n)
		return -EINVAL;
	if (!zalloc_cpumask_var(&new, GFP_KERNEL))
		return -ENOMEM;
	/* cpulist_parse() takes "" as the empty set and rejects bad CPUs */
	ret = cpulist_parse(buf, new);
	if (!ret) {
		mutex_lock(&drain_skip_lock);
		/*
		 * Readers test single bits without the lock: a drain racing
		 * with this copy sees each CPU either skipped or not, both
		 * of which are valid answers for a hint-like caller.
		 */
		cpumask_copy(drain_skip_mask, new);
		mutex_unlock(&drain_skip_lock);
	}
	free_cpumask_var(new);
	return ret ? -EINVAL : count;
}

static const char *const drain_class_names[] = {
	[DC_STRICT] = "strict", [DC_HINT] = "hint",
};

static int drain_caller_emit(char *buf, int len, struct drain_caller *c)
{
	return sysfs_emit_at(buf, len,
			     "%s %s %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n",
			     c->sym, drain_class_names[c->class],
			     atomic64_read(&c->calls), atomic64_read(&c->queued),
			     atomic64_read(&c->inlined),
			     atomic64_read(&c->skipped),
			     atomic64_read(&c->timed_out),
			     atomic64_read(&c->coalesced),
			     atomic64_read(&c->wait_total),
			     atomic64_read(&c->wait_max),
			     atomic64_read(&c->full),
			     atomic64_read(&c->partial));
}

static ssize_t callers_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	int i, len;

	len = sysfs_emit(buf, "# symbol class calls cpus_queued %s %s\n",
			 "inline_drains skipped timed_out coalesced",
			 "wait_ns_total wait_ns_max full_drains partial_drains");
	for (i = 0; i < DRAIN_MAX_CALLERS; i++)
		/* pairs with the release that published the entry */
		if (smp_load_acquire(&drain_callers[i].ready))
			len += drain_caller_emit(buf, len, &drain_callers[i]);
	if (atomic64_read(&drain_caller_other.calls))
		len += drain_caller_emit(buf, len, &drain_caller_other);
	return len;
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
	&callers_attr.attr,
	NULL,
};

/* ------------------------------------------------------ init and exit */

static int lruopt_drain_init(void)
{
	int cpu;

	if (!zalloc_cpumask_var(&drain_skip_mask, GFP_KERNEL))
		return -ENOMEM;
	drain_slots = alloc_percpu(struct drain_slot);
	if (!drain_slots) {
		free_cpumask_var(drain_skip_mask);
		return -ENOMEM;
	}
	/* The only INIT_WORK() of these items: they are never re-initialised. */
	for_each_possible_cpu(cpu)
		INIT_WORK(&per_cpu_ptr(drain_slots, cpu)->work, drain_workfn);
	return 0;
}

/*
 * The patch is gone, so no caller waits any more; but work items that a
 * timed-out or skipped drain left queued may still be pending or running.
 * Cancelling a pending drain is harmless (the folios stay batched until the
 * next drain), and cancel_work_sync() waits for a running one.
 */
static void lruopt_drain_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		cancel_work_sync(&per_cpu_ptr(drain_slots, cpu)->work);
	free_percpu(drain_slots);
	free_cpumask_var(drain_skip_mask);
}

static const struct klp_func drain_funcs[] = {
	{
		.old_name = "lru_add_drain_all",
		.new_func = lruopt_lru_add_drain_all,
	},
	{ }
};

struct lruopt_feature lruopt_drain_feature = {
	.name = "drain",
	.enabled = true,
	.supported = true,
	.funcs = drain_funcs,
	.attrs = drain_attrs,
	.counters = &drain_stats,
	.init = lruopt_drain_init,
	.exit = lruopt_drain_exit,
};
