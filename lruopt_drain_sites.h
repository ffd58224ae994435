/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drain's call-site table (lruopt_drain_sites.c), shared with the drain
 * itself (lruopt_drain.c) and nothing else.
 */
#ifndef _LRUOPT_DRAIN_SITES_H
#define _LRUOPT_DRAIN_SITES_H

#include <linux/percpu.h>
#include <linux/sysfs.h>
#include "lruopt_sysfs.h"

/* How much a caller of lru_add_drain_all() depends on a complete drain. */
enum drain_class { DC_STRICT, DC_HINT };

/*
 * Per-call-site counters, one column of drain/callers each, in that order
 * (their header names: site_stat_names[] in lruopt_drain_sites.c).
 * Per-cpu, summed (SS_WAIT_MAX: maxed) when the table is read.
 */
enum drain_site_stat {
	SS_CALLS, SS_QUEUED, SS_INLINE, SS_SKIPPED, SS_TIMED_OUT, SS_COALESCED,
	SS_WAIT_TOTAL, SS_WAIT_MAX, SS_FULL, SS_PARTIAL, SS_DEFERRED,
	SS_REMOTE,
	SS_NR
};

/**
 * struct drain_site - the call site a drain was called from
 * @idx: row of the table (private to lruopt_drain_sites.c)
 * @class: DC_STRICT or DC_HINT
 */
struct drain_site {
	unsigned int idx;
	enum drain_class class;
};

/*
 * The table's keys, which every call reads: 16 bytes a row, the whole
 * array in eight cache lines, written only when a row is claimed or
 * released (under lruopt_drain_sites.c's site_lock).  @state is 0 for a
 * free row, else the class + 1; it is published last.
 */
#define DRAIN_MAX_SITES		32
struct drain_site_key {
	unsigned long start;
	unsigned int size;
	int state;
};

extern struct drain_site_key drain_site_keys[DRAIN_MAX_SITES];
/*
 * The row this CPU's last lookup found: a CPU's calls mostly come from one
 * site at a time (a storm, a compaction run), so it is tried first.
 */
DECLARE_PER_CPU(unsigned int, drain_site_hint);

struct drain_site drain_site_lookup(unsigned long ip);

/* Does row @i hold @ip?  Then *@s is its site. */
static inline bool drain_site_match(unsigned int i, unsigned long ip,
				    struct drain_site *s)
{
	/* pairs with the release in drain_site_get_slow() */
	int state = smp_load_acquire(&drain_site_keys[i].state);

	if (!state || ip - 1 - READ_ONCE(drain_site_keys[i].start) >=
		      READ_ONCE(drain_site_keys[i].size))
		return false;
	*s = (struct drain_site){ .idx = i, .class = state - 1 };
	return true;
}

/**
 * drain_site_get - the call-site row and class of a drain call
 * @ip: the return address of the lru_add_drain_all() call
 *
 * Inline: the hint's row, checked like any row (so it can never answer
 * with a wrong one), is the whole lookup of the common call.
 *
 * Context: may sleep the first time a call site is seen.
 * Return: the site; "(other)" (strict) when it cannot have a row.
 */
static inline struct drain_site drain_site_get(unsigned long ip)
{
	unsigned int i = this_cpu_read(drain_site_hint);
	struct drain_site s;

	/* rows past the ones ever claimed are free (state 0): no match */
	if (i < DRAIN_MAX_SITES && drain_site_match(i, ip, &s))
		return s;
	return drain_site_lookup(ip);
}

/*
 * The rows' per-cpu counters, [DRAIN_MAX_SITES + 1][SS_NR]: counted inline
 * by the drain, which counts every call (the nothing-pending call's
 * accounting is most of what it costs beyond stock's), summed by the table.
 */
extern u64 __percpu *drain_site_vals;

/* Counter @i of row @idx. */
static inline u64 __percpu *drain_site_val(unsigned int idx,
					   enum drain_site_stat i)
{
	return drain_site_vals + idx * SS_NR + i;
}

/* Add @n to counter @i of site @s. */
static inline void drain_site_count(struct drain_site s,
				    enum drain_site_stat i, u64 n)
{
	this_cpu_add(*drain_site_val(s.idx, i), n);
}

/* Raise the per-cpu maximum @i of site @s to @v. */
static inline void drain_site_max(struct drain_site s,
				  enum drain_site_stat i, u64 v)
{
	lruopt_percpu_max(drain_site_val(s.idx, i), v);
}

ssize_t drain_sites_show(char *buf);
int drain_sites_init(void);
void drain_sites_exit(void);

#endif /* _LRUOPT_DRAIN_SITES_H */
