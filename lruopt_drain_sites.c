// SPDX-License-Identifier: GPL-2.0
/*
 * The drain's call-site table: which function called lru_add_drain_all(),
 * whether that caller is strict or a hint, and what its drains did
 * (drain/callers).
 *
 * A row is keyed by the address range of the function that holds the call,
 * found from the return address by kallsyms on first sight, so the hot
 * lookup is a range compare over a small read-mostly array and never a
 * symbol lookup.  Its counters are per-cpu and summed when the table is
 * read: a call writes only its own CPU's lines, as the global stats/ do.
 *
 * Classification.  A core-kernel function is a hint caller if its name is
 * in drain_hint_callers[] below, and strict otherwise; code in any module is
 * strict, whatever its function is called ("[mod]" is part of what kallsyms
 * returns, and is checked before the name).  The return address names the
 * function the call returns to, so a tail call hides the function that made
 * it: on 6.12, shake_folio() and shake_page() jump to lru_add_drain_all(),
 * and their drains are classified by *their* callers, memory_failure(),
 * soft_offline_page(), unpoison_memory() and the hwpoison_inject module,
 * all of them strict.  No hint caller of either kernel calls a function
 * that tail-calls lru_add_drain_all(), which is what would turn a strict
 * drain into a hint one.
 *
 * Module churn.  Rows of a module's functions are released when that
 * module goes away, and rows of its init code when that code is freed, so
 * the table does not fill with dead text and a later module at the same
 * addresses starts with a row of its own.  A full table sends the calls of
 * new sites to the "(other)" row, which is strict.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "lruopt_drain_sites.h"

#define DRAIN_SITE_OTHER	DRAIN_MAX_SITES	/* the "(other)" row */
#define DRAIN_SYM_LEN		48

/*
 * Callers for which a drain is only an optimisation: a folio left in a
 * remote batch only makes their work less complete, never wrong.  Names are
 * the functions that contain the call after inlining on 6.1 and 6.12.
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

/* What every call reads (lruopt_drain_sites.h); written only under site_lock. */
struct drain_site_key drain_site_keys[DRAIN_MAX_SITES];
static unsigned int site_hw;		/* rows ever claimed: [0, site_hw) */
static bool site_full;			/* no row free: no lookup is tried */
static char site_syms[DRAIN_MAX_SITES][DRAIN_SYM_LEN];
static char site_mods[DRAIN_MAX_SITES][MODULE_NAME_LEN];
static DEFINE_MUTEX(site_lock);		/* claims, releases, reads of syms */

/* [DRAIN_MAX_SITES + 1][SS_NR], per cpu; counted inline (lruopt_drain_sites.h) */
u64 __percpu *drain_site_vals;

static enum drain_class drain_classify(const char *name)
{
	size_t len = strcspn(name, ".");	/* drop .isra.0, .constprop.0 */
	int i;

	for (i = 0; i < ARRAY_SIZE(drain_hint_callers); i++)
		if (strlen(drain_hint_callers[i]) == len &&
		    !strncmp(name, drain_hint_callers[i], len))
			return DC_HINT;
	return DC_STRICT;
}

/*
 * Parse what sprint_symbol() printed for @addr, "name+0xoff/0xsize" or
 * "name+0xoff/0xsize [mod]", into the function's start and size, the name's
 * length and the module name (NULL for the core kernel).  An address
 * kallsyms does not know prints as a bare number and fails here.
 */
static int site_parse(char *buf, unsigned long addr, unsigned long *start,
		      unsigned long *size, size_t *name_len, char **mod)
{
	char *plus = strchr(buf, '+'), *slash, *end;
	unsigned long off;

	if (!plus || plus == buf)
		return -ENOENT;
	slash = strchr(plus, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	end = strchr(slash + 1, ' ');
	if (end)
		*end = '\0';
	if (kstrtoul(plus + 1, 0, &off) || kstrtoul(slash + 1, 0, size) ||
	    !*size || *size > UINT_MAX || off >= *size)
		return -ENOENT;
	*start = addr - off;
	*name_len = plus - buf;
	*mod = NULL;
	if (end && end[1] == '[') {
		*mod = end + 2;
		end = strchr(*mod, ']');
		if (end)
			*end = '\0';
	}
	return 0;
}

/*
 * Free row @i; the caller holds site_lock.  Only module rows are ever
 * released, and those are strict: a lookup racing with the release (or
 * with the row's next claim) can then at worst add one call's counts to
 * the wrong row, never take a strict call for a hint one; a hint row, of
 * core-kernel text, is never released or reused.
 */
static void site_release(unsigned int i)
{
	int cpu;

	WARN_ON_ONCE(drain_site_keys[i].state != DC_STRICT + 1);
	/* New lookups stop matching; one already past the check only counts. */
	WRITE_ONCE(drain_site_keys[i].state, 0);
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(drain_site_val(i, 0), cpu), 0, SS_NR * sizeof(u64));
	WRITE_ONCE(drain_site_keys[i].start, 0);
	WRITE_ONCE(drain_site_keys[i].size, 0);
	site_syms[i][0] = '\0';
	site_mods[i][0] = '\0';
	WRITE_ONCE(site_full, false);
}

/*
 * First sight of a call site: out of line and cold, so that the symbol
 * buffer never sits in the frame of the hot path (which strict callers
 * reach deep in GUP pinning and memory-failure stacks).  The buffer is not
 * on the stack at all: KSYM_SYMBOL_LEN is over 500 bytes.  No memory, no
 * symbol or a full table: the call counts as "(other)", strict.
 */
static noinline __cold struct drain_site drain_site_get_slow(unsigned long ip)
{
	struct drain_site s = { .idx = DRAIN_SITE_OTHER, .class = DC_STRICT };
	unsigned long start, size;
	unsigned int i, row = DRAIN_MAX_SITES;
	size_t name_len;
	char *buf, *mod;
	int state;

	buf = kmalloc(KSYM_SYMBOL_LEN, GFP_NOWAIT | __GFP_NOWARN);
	if (!buf)
		return s;
	/* ip - 1: the call, not what follows it (as stack traces do) */
	sprint_symbol(buf, ip - 1);
	if (site_parse(buf, ip - 1, &start, &size, &name_len, &mod))
		goto out;
	buf[name_len] = '\0';

	mutex_lock(&site_lock);
	for (i = 0; i < site_hw; i++) {
		state = drain_site_keys[i].state;
		if (state && drain_site_keys[i].start == start) {
			/* claimed by a racing first call from the same site */
			s.idx = i;
			s.class = state - 1;
			goto unlock;
		}
		if (!state && row == DRAIN_MAX_SITES)
			row = i;
	}
	if (row == DRAIN_MAX_SITES && site_hw < DRAIN_MAX_SITES)
		row = site_hw;
	if (row == DRAIN_MAX_SITES) {
		/* until a row is released, new sites go to "(other)" at once */
		WRITE_ONCE(site_full, true);
		goto unlock;
	}

	s.idx = row;
	s.class = mod ? DC_STRICT : drain_classify(buf);
	if (mod)
		snprintf(site_syms[row], DRAIN_SYM_LEN, "%s[%s]", buf, mod);
	else
		strscpy(site_syms[row], buf, DRAIN_SYM_LEN);
	strscpy(site_mods[row], mod ?: "", MODULE_NAME_LEN);
	WRITE_ONCE(drain_site_keys[row].start, start);
	WRITE_ONCE(drain_site_keys[row].size, size);
	/* publish start and size: pairs with the acquire in drain_site_match() */
	smp_store_release(&drain_site_keys[row].state, s.class + 1);
	if (row == site_hw)
		WRITE_ONCE(site_hw, row + 1);
unlock:
	mutex_unlock(&site_lock);
out:
	kfree(buf);
	return s;
}

DEFINE_PER_CPU(unsigned int, drain_site_hint);

/**
 * drain_site_lookup - the call-site row of @ip, when the hint missed
 * @ip: the return address of the lru_add_drain_all() call
 *
 * Walks the table, and claims a row the first time a site is seen.
 *
 * Context: may sleep the first time a call site is seen.
 * Return: the site; "(other)" (strict) when it cannot have a row.
 */
struct drain_site drain_site_lookup(unsigned long ip)
{
	unsigned int i, n = READ_ONCE(site_hw);
	struct drain_site s;

	for (i = 0; i < n; i++) {
		if (drain_site_match(i, ip, &s)) {
			this_cpu_write(drain_site_hint, i);
			return s;
		}
	}
	if (READ_ONCE(site_full))
		return (struct drain_site){ .idx = DRAIN_SITE_OTHER,
					    .class = DC_STRICT };
	return drain_site_get_slow(ip);
}

static const char *const drain_class_names[] = {
	[DC_STRICT] = "strict", [DC_HINT] = "hint",
};

/* The columns of drain/callers, after symbol and class. */
static const char *const site_stat_names[SS_NR] = {
	[SS_CALLS] = "calls",
	[SS_QUEUED] = "cpus_queued",
	[SS_INLINE] = "inline_drains",
	[SS_SKIPPED] = "skipped",
	[SS_TIMED_OUT] = "timed_out",
	[SS_COALESCED] = "coalesced",
	[SS_WAIT_TOTAL] = "wait_ns_total",
	[SS_WAIT_MAX] = "wait_ns_max",
	[SS_FULL] = "full_drains",
	[SS_PARTIAL] = "partial_drains",
	[SS_DEFERRED] = "deferred",
	[SS_REMOTE] = "remote",
};

/* Room kept at the end of the page for the truncation line. */
#define SITES_TAIL	48

/* Column @i of row @idx, over all CPUs (SS_WAIT_MAX: the largest). */
static u64 site_sum(unsigned int idx, enum drain_site_stat i)
{
	u64 v = 0, x;
	int cpu;

	for_each_possible_cpu(cpu) {
		x = *per_cpu_ptr(drain_site_val(idx, i), cpu);
		v = i == SS_WAIT_MAX ? max(v, x) : v + x;
	}
	return v;
}

/*
 * Print row @idx at @buf + @len if the whole line fits before the tail;
 * return its length, or 0 (and nothing printed) if it does not.
 */
static int site_emit(char *buf, int len, unsigned int idx, const char *sym,
		     enum drain_class class)
{
	int room = PAGE_SIZE - SITES_TAIL - len, n, i;

	if (idx == DRAIN_SITE_OTHER && !site_sum(idx, SS_CALLS))
		return 0;
	if (room <= 0)
		return 0;
	n = snprintf(buf + len, room, "%s %s", sym, drain_class_names[class]);
	for (i = 0; i < SS_NR && n < room; i++)
		n += snprintf(buf + len + n, room - n, " %llu", site_sum(idx, i));
	if (n < room)
		n += snprintf(buf + len + n, room - n, "\n");
	if (n >= room) {
		buf[len] = '\0';
		return 0;
	}
	return n;
}

/**
 * drain_sites_show - the drain/callers table
 * @buf: the sysfs page
 *
 * One header line, then one line per call site; what does not fit in the
 * page is announced by a last "# truncated" line, never cut silently.
 *
 * Return: the number of bytes written to @buf.
 */
ssize_t drain_sites_show(char *buf)
{
	unsigned int i, more = 0;
	int len, n;

	len = sysfs_emit(buf, "# symbol class");
	for (i = 0; i < SS_NR; i++)
		len += sysfs_emit_at(buf, len, " %s", site_stat_names[i]);
	len += sysfs_emit_at(buf, len, "\n");
	mutex_lock(&site_lock);
	for (i = 0; i < site_hw; i++) {
		int state = drain_site_keys[i].state;

		if (!state)
			continue;
		n = site_emit(buf, len, i, site_syms[i], state - 1);
		if (n)
			len += n;
		else
			more++;
	}
	mutex_unlock(&site_lock);
	n = site_emit(buf, len, DRAIN_SITE_OTHER, "(other)", DC_STRICT);
	if (n)
		len += n;
	else if (site_sum(DRAIN_SITE_OTHER, SS_CALLS))
		more++;
	if (more)
		len += sysfs_emit_at(buf, len, "# truncated: %u more rows\n",
				     more);
	return len;
}

/*
 * A module's rows go when it does, and the rows of its init code when that
 * is freed (after the LIVE notification): the addresses may be reused by
 * the next module.  within_module_init() reads the module layout of the
 * kernel the module is built for, from its own headers.
 */
static int site_module_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	struct module *mod = data;
	unsigned int i;

	if (action != MODULE_STATE_GOING && action != MODULE_STATE_LIVE)
		return NOTIFY_DONE;
	mutex_lock(&site_lock);
	for (i = 0; i < site_hw; i++) {
		if (!drain_site_keys[i].state || strcmp(site_mods[i], mod->name))
			continue;
		if (action == MODULE_STATE_GOING ||
		    within_module_init(drain_site_keys[i].start, mod))
			site_release(i);
	}
	mutex_unlock(&site_lock);
	return NOTIFY_DONE;
}

static struct notifier_block site_module_nb = {
	.notifier_call = site_module_notify,
};

/**
 * drain_sites_init - allocate the counters, watch module unloads
 *
 * Return: 0 or -ENOMEM.
 */
int drain_sites_init(void)
{
	int ret;

	drain_site_vals = __alloc_percpu(sizeof(u64) * SS_NR *
					 (DRAIN_MAX_SITES + 1),
					 __alignof__(u64));
	if (!drain_site_vals)
		return -ENOMEM;
	ret = register_module_notifier(&site_module_nb);
	if (ret)
		free_percpu(drain_site_vals);
	return ret;
}

/**
 * drain_sites_exit - undo drain_sites_init()
 *
 * Runs after the patch is gone: no drain looks up a site any more.
 */
void drain_sites_exit(void)
{
	unregister_module_notifier(&site_module_nb);
	free_percpu(drain_site_vals);
}
