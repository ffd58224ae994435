// SPDX-License-Identifier: GPL-2.0
/*
 * Quiet CPUs: nothing is batched on them, so no drain has work there.
 *
 * A quiet CPU is one in drain/skip_cpus, or an isolated one (isolcpus=,
 * nohz_full=) while drain/skip_isolated is 1: the CPUs hint callers of the
 * drain leave alone (lruopt_drain_skips()).  That alone does not keep them
 * quiet: strict callers of lru_add_drain_all() (memfd seals, long-term GUP
 * pins) and lru_cache_disable() (migration, CMA, hotplug) must drain every
 * CPU that has something batched, and on a kernel without PREEMPT_RT the
 * only way to drain another CPU is a kworker on it.
 *
 * So on a quiet CPU every per-CPU LRU batch add moves the folio to its LRU
 * at once, as the kernel itself does while lru_cache_disabled(): the
 * adders are restated in lruopt_quiet_adders.h with that one test added.
 * A quiet CPU then never has a folio batched, and no drain, hint or
 * strict, RT or not, finds work there (buffer heads aside: "What stays").  The price is on
 * the quiet CPU's own adds (one lruvec lock per folio instead of per batch
 * of 15/31), and, because the adders are among the hottest LRU paths (every
 * page fault), an ftrace redirection on every CPU's adds.  Hence
 * patch_quiet=auto: the adders are put into the livepatch only when quiet
 * CPUs exist at load (isolated CPUs, or drain_skip_cpus= given), and not on
 * PREEMPT_RT, where remote drains already keep drain work off quiet CPUs
 * and the per-folio lruvec lock would be the worse interference (see
 * lruopt_quiet_decide()).  Left out, a later skip_cpus write still keeps
 * hint callers off those CPUs, and nothing more.
 *
 * Becoming quiet.  Each CPU's flag (quiet_cpu) is written by
 * lruopt_quiet_update() only, under quiet_lock, and only when it changes,
 * whenever the set can change: the drain's skip knobs, the quiet/enabled
 * and master switches, the livepatch callbacks.  The adders read their own
 * CPU's flag inside their local-lock section.  A CPU that becomes quiet
 * gets one run of the drain's own work for that CPU, queued after the flag
 * write and not waited for ("the normal way", once): it runs on that CPU
 * and takes the same local locks, so an add that read the old flag either
 * finished before it (and is drained) or holds the lock and is waited for
 * (PREEMPT_RT), and every add after it reads the new flag (the workqueue's
 * queue/execute ordering, then the lock).  Nobody waits because the callers
 * hold locks (klp_mutex in the callbacks, quiet_lock) and a CPU hogged by a
 * real-time task may run its work late; until then its next add moves the
 * whole batch anyway.
 *
 * The consistency model.  Until the transition has completed a task may
 * still run a stock adder, which batches whatever the flag says.  So the
 * flags stay clear until the post-patch callback (quiet_live), which runs
 * when every task runs the new adders, and are cleared again by the
 * pre-unpatch callback, before any task can go back to a stock adder.
 * With the flags clear, or quiet/enabled 0, the adders are the stock code.
 * A forced transition (/sys/kernel/livepatch/lruopt/force) voids the first
 * half: a task still in a stock adder may batch on a quiet CPU after its
 * drain; that costs quietness (one later drain has work there), never
 * correctness.
 *
 * What stays.  The buffer-head LRU is not a folio batch: 6.1 fills it on
 * every CPU (__find_get_block(), not replaced), and 6.12 on every CPU that
 * is not isolated, so a CPU quiet only through skip_cpus; a strict drain
 * still queues work on such a CPU while it has buffer heads cached.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/swap.h>
#include "lruopt_sysfs.h"

enum { QS_MOVED, QS_DRAINS, QS_NR };

static const char *const quiet_stat_names[QS_NR + 1] = {
	[QS_MOVED] = "moved_at_once",
	[QS_DRAINS] = "drains",		/* CPUs drained on becoming quiet */
};

static struct lruopt_counters quiet_stats = {
	.names = quiet_stat_names,
};

/* This CPU keeps nothing batched; written by lruopt_quiet_update() only. */
static DEFINE_PER_CPU(bool, quiet_cpu);
/* The flags' set, for quiet/cpus; under quiet_lock. */
static struct cpumask quiet_mask;
/* Every task runs the new adders (post-patch .. pre-unpatch). */
static bool quiet_live;
static DEFINE_MUTEX(quiet_lock);

/*
 * The adders' test: is this CPU quiet?  Called with the batch's local lock
 * held (see "Becoming quiet").  Counts the folio it moves at once.
 */
static __always_inline bool lruopt_quiet_here(void)
{
	if (likely(!this_cpu_read(quiet_cpu)))
		return false;
	lruopt_count(&quiet_stats, QS_MOVED, 1);
	return true;
}

#include "lruopt_quiet_adders.h"

/*
 * Recompute the quiet CPUs after a setting changed: the changed hook
 * (lruopt_settings_changed(): the drain's skip knobs, the switches) and
 * the livepatch callbacks.  Online CPUs that became quiet get one drain,
 * queued and not waited for (see "Becoming quiet"); CPUs that stopped
 * being quiet just batch again.  Does nothing when the adders are not in
 * the patch.
 */
static void lruopt_quiet_update(void)
{
	unsigned int newly = 0;
	bool on;
	int cpu;

	if (!lruopt_quiet_feature.supported)
		return;
	mutex_lock(&quiet_lock);
	on = quiet_live && lruopt_active(&lruopt_quiet_feature);
	for_each_possible_cpu(cpu) {
		bool q = on && lruopt_drain_skips(cpu);

		/* written on change only: the line is the quiet CPU's own */
		if (q == per_cpu(quiet_cpu, cpu))
			continue;
		WRITE_ONCE(per_cpu(quiet_cpu, cpu), q);
		if (q) {
			cpumask_set_cpu(cpu, &quiet_mask);
			if (cpu_online(cpu)) {
				lruopt_drain_cpu_nowait(cpu);
				newly++;
			}
		} else {
			cpumask_clear_cpu(cpu, &quiet_mask);
		}
	}
	mutex_unlock(&quiet_lock);
	if (newly)
		lruopt_count(&quiet_stats, QS_DRAINS, newly);
}

/* Post-patch: every task runs the new adders; pre-unpatch: not for long. */
static void lruopt_quiet_live(bool live)
{
	mutex_lock(&quiet_lock);
	quiet_live = live;
	mutex_unlock(&quiet_lock);
	lruopt_quiet_update();
}

/* ------------------------------------------------------------- sysfs */

static ssize_t cpus_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	ssize_t ret;

	mutex_lock(&quiet_lock);
	ret = sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(&quiet_mask));
	mutex_unlock(&quiet_lock);
	return ret;
}

static struct kobj_attribute cpus_attr = __ATTR_RO(cpus);

static struct attribute *quiet_attrs[] = {
	&cpus_attr.attr,
	NULL,
};

/* --------------------------------------------------- patch decision */

LRUOPT_PATCH_PARAM(quiet,
		   "Put the LRU batch adders in the livepatch, so that quiet CPUs (drain/skip_cpus, isolated ones) keep nothing batched: auto (default: only if there are quiet CPUs at load), 1 (always), 0 (never)");

/*
 * Decided at load, before the patch is built: auto puts the adders in when
 * some CPU is quiet by the load's settings (isolated CPUs, whatever
 * skip_isolated says, since it can be written later; or drain_skip_cpus=).
 */
static const char *lruopt_quiet_decide(void)
{
	bool any = false;
	int cpu;

	for_each_possible_cpu(cpu)
		any |= lruopt_drain_skips(cpu) || lruopt_cpu_isolated(cpu);
	/*
	 * PREEMPT_RT: remote drains already keep drain work off quiet CPUs,
	 * and there the lruvec lock the adders would take per folio is a
	 * sleeping lock whose holder on another CPU can be preempted: a
	 * faulting RT task on a quiet CPU measured p99 touch latencies 17-56x
	 * worse next to a reclaiming CPU (docs/benchmarks.md).  So auto
	 * leaves them out; patch_quiet=1 puts them in.
	 */
	if (any && IS_ENABLED(CONFIG_PREEMPT_RT)) {
		lruopt_quiet_feature.supported = false;
		return "PREEMPT_RT, remote drains keep drain work off quiet CPUs";
	}
	if (any)
		return "there are quiet CPUs at load; they keep nothing batched";
	lruopt_quiet_feature.supported = false;
	return "no quiet CPU at load; skip_cpus: hint callers only";
}

struct lruopt_feature lruopt_quiet_feature = {
	.name = "quiet",
	.enabled = true,
	.funcs = lruopt_quiet_funcs,
	.attrs = quiet_attrs,
	.counters = &quiet_stats,
	.decide = lruopt_quiet_decide,
	.patch_mode = &patch_quiet,
	.changed = lruopt_quiet_update,
	.live = lruopt_quiet_live,
};

LRUOPT_FEATURE_PARAM(quiet);
