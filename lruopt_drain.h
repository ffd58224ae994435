/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drain's call-site table (lruopt_drain_sites.c), shared with the drain
 * itself (lruopt_drain.c) and nothing else.
 */
#ifndef _LRUOPT_DRAIN_H
#define _LRUOPT_DRAIN_H

#include <linux/sysfs.h>
#include "lruopt.h"

/* How much a caller of lru_add_drain_all() depends on a complete drain. */
enum drain_class { DC_STRICT, DC_HINT };

/*
 * Per-call-site counters, one column of drain/callers each, in that order.
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

struct drain_site drain_site_get(unsigned long ip);
void drain_site_count(struct drain_site s, enum drain_site_stat i, u64 n);
void drain_site_max(struct drain_site s, enum drain_site_stat i, u64 v);
ssize_t drain_sites_show(char *buf);
int drain_sites_init(void);
void drain_sites_exit(void);

#endif /* _LRUOPT_DRAIN_H */
