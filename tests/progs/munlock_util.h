/* SPDX-License-Identifier: GPL-2.0 */
/*
 * munlock_util.h - what only the munlock_* / mlock_* test programs share
 * (tests/70-munlock-*.sh, tests/bench/w-munlock-short.sh): aligned
 * mappings, the mlocked-page count through /proc/self/pagemap +
 * /proc/kpageflags, and the per-zone counter snapshots.  The generic
 * helpers (lt_die, lt_pin, lt_read_file, ...) are in common.h.
 *
 * Like common.h, nothing here uses stdio or malloc on the counted paths
 * (the exactness programs run under mlockall(MCL_FUTURE)).
 */
#ifndef LRUOPT_MUNLOCK_UTIL_H
#define LRUOPT_MUNLOCK_UTIL_H

#define _GNU_SOURCE
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

#define MU_PAGE 4096UL
#define MU_HPAGE (2UL << 20)
#define LO_MUNLOCK "/sys/kernel/lruopt/munlock"

/* A 2 MiB-aligned anonymous private mapping of len bytes. */
static inline unsigned char *mu_map_aligned(size_t len, int prot, int flags, int fd)
{
	size_t full = len + MU_HPAGE;
	unsigned char *p, *a;

	p = mmap(NULL, full, prot, flags, fd, 0);
	if (p == MAP_FAILED)
		lt_die("mmap %zu bytes", full);
	a = (unsigned char *)(((unsigned long)p + MU_HPAGE - 1) & ~(MU_HPAGE - 1));
	if (a > p)
		munmap(p, a - p);
	if (a + len < p + full)
		munmap(a + len, p + full - (a + len));
	return a;
}

/*
 * Global LRU drain: madvise(MADV_COLLAPSE) runs lru_add_drain_all() before
 * looking at the range.  The range is one page at a 2 MiB-aligned address,
 * so it contains no whole huge page and nothing is collapsed (hstart ==
 * hend: the call returns 0).  Unlike compact_memory this migrates nothing,
 * so it does not itself move mlocked pages around (which would change the
 * very counters under test).  The VMA must be THP-eligible (anonymous, has
 * an anon_vma, can hold an aligned 2 MiB): 2 MiB + 1 page, aligned, with
 * only the page past the aligned 2 MiB touched (a small page).
 */
static unsigned char *mu_drain_area __attribute__((unused));

static inline void mu_drain_init(void)
{
	mu_drain_area = mu_map_aligned(MU_HPAGE + MU_PAGE, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1);
	mu_drain_area[MU_HPAGE] = 1;
}

/* Does this kernel have transparent hugepages (Debian's RT flavours: no)? */
static inline bool mu_have_thp(void)
{
	return access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0;
}

/*
 * Without THP there is no MADV_COLLAPSE: a compact_memory write drains
 * instead.  It migrates, but not mlocked pages on the kernels without THP
 * (PREEMPT_RT defaults vm.compact_unevictable_allowed to 0).
 */
static inline void mu_drain_all(void)
{
	if (!mu_have_thp()) {
		if (lt_write_file("/proc/sys/vm/compact_memory", "1"))
			lt_die("compact_memory for lru_add_drain_all");
		return;
	}
	if (!mu_drain_area)
		mu_drain_init();
	if (madvise(mu_drain_area, MU_PAGE, MADV_COLLAPSE))
		lt_die("madvise(MADV_COLLAPSE) for lru_add_drain_all");
}

/*
 * Number of pages of [p, p + len) that are present and have kpageflags bit
 * @bit set, from /proc/self/pagemap (PFN, needs root) and /proc/kpageflags.
 * With KPF_MLOCKED (33) it tells which area a leftover Mlocked page belongs
 * to (a THP counts once: PG_mlocked lives on its head page only); with
 * KPF_LRU (5) whether a folio still sits in a per-CPU batch.  The page
 * indexes (from p) of the first @nidx such pages go to @idx.  Returns -1
 * when either file cannot be read.
 */
static inline long mu_count_kpf(const unsigned char *p, size_t len, int bit,
				unsigned long *idx, int nidx)
{
	unsigned long long ent, flags;
	int pm, kf;
	long n = 0;
	size_t i;

	pm = open("/proc/self/pagemap", O_RDONLY);
	kf = open("/proc/kpageflags", O_RDONLY);
	if (pm < 0 || kf < 0) {
		n = -1;
		goto out;
	}
	for (i = 0; i < len; i += MU_PAGE) {
		off_t off = (off_t)((unsigned long)(p + i) / MU_PAGE) * 8;

		if (pread(pm, &ent, 8, off) != 8) {
			n = -1;
			break;
		}
		/* bit 63 present; bits 0-54 PFN */
		if (!(ent >> 63) || !(ent & ((1ULL << 55) - 1)))
			continue;
		if (pread(kf, &flags, 8, (off_t)(ent & ((1ULL << 55) - 1)) * 8) != 8) {
			n = -1;
			break;
		}
		if (flags & (1ULL << bit)) {
			if (n < nidx)
				idx[n] = i / MU_PAGE;
			n++;
		}
	}
out:
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return n;
}

#define MU_KPF_LRU	5
#define MU_KPF_MLOCKED	33

static inline long mu_count_mlocked(const unsigned char *p, size_t len,
				    unsigned long *idx, int nidx)
{
	return mu_count_kpf(p, len, MU_KPF_MLOCKED, idx, nidx);
}

/* Fold the per-cpu vmstat differentials into the global counters. */
static inline void mu_stat_refresh(void)
{
	if (lt_write_file("/proc/sys/vm/stat_refresh", "1"))
		lt_die("write /proc/sys/vm/stat_refresh");
}

/* Touch every page (write) of [p, p + len). */
static inline void mu_touch(unsigned char *p, size_t len, unsigned char v)
{
	size_t i;

	for (i = 0; i < len; i += MU_PAGE)
		p[i] = v + (unsigned char)(i / MU_PAGE);
}

/* Read every page, checking what mu_touch(v) wrote. */
static inline void mu_verify(const unsigned char *p, size_t len, unsigned char v, const char *what)
{
	size_t i;

	for (i = 0; i < len; i += MU_PAGE)
		if (p[i] != (unsigned char)(v + (unsigned char)(i / MU_PAGE)))
			lt_die("%s: data corrupted at page %zu", what, i / MU_PAGE);
}

/* ---------------------------------------------------------- counter snapshots */

#define MU_MAX_ZONES 8
#define MU_NEV 7
#define MU_NLO 5
#define MU_NINFO 3

static const char *const mu_ev_names[MU_NEV] __attribute__((unused)) = {
	"culled", "scanned", "rescued", "mlocked", "munlocked", "cleared", "stranded",
};
static const char *const mu_ev_keys[MU_NEV] __attribute__((unused)) = {
	"unevictable_pgs_culled", "unevictable_pgs_scanned", "unevictable_pgs_rescued",
	"unevictable_pgs_mlocked", "unevictable_pgs_munlocked", "unevictable_pgs_cleared",
	"unevictable_pgs_stranded",
};
/* /sys/kernel/lruopt/munlock/stats/<file> and the short name printed */
static const char *const mu_lo_files[MU_NLO] __attribute__((unused)) = {
	"pages", "batches", "lock_acquisitions", "fallbacks", "stock_walks",
};
static const char *const mu_lo_names[MU_NLO] __attribute__((unused)) = {
	"pages", "batches", "locks", "fallbacks", "stock_walks",
};
/* informational /proc/vmstat events */
static const char *const mu_info_keys[MU_NINFO] __attribute__((unused)) = {
	"pgmigrate_success", "thp_split_pmd", "compact_isolated",
};

struct mu_snap {
	const char *label;
	long long mlocked_kb, unevictable_kb, anonhuge_kb;
	int nzones;
	char zname[MU_MAX_ZONES][24];
	long long nr_mlock[MU_MAX_ZONES];
	long long nr_unev[MU_MAX_ZONES];	/* nr_zone_unevictable */
	long long ev[MU_NEV];
	long long lo[MU_NLO];
	long long info[MU_NINFO];
};

static char mu_bigbuf[512 * 1024];

/* Value of /proc/zoneinfo counter KEY in the zone section [p, next). */
static inline long long mu_zone_field(const char *p, const char *next, const char *key)
{
	const char *m = p;
	size_t len = strlen(key);

	while ((m = strstr(m, key)) && (!next || m < next)) {
		if (m[-1] == ' ' && m[len] == ' ')
			return strtoll(m + len, NULL, 10);
		m += len;
	}
	return 0;
}

/* Read the counters (the caller drains and refreshes first). No malloc. */
static inline void mu_take(struct mu_snap *s)
{
	char path[128];
	char *p;
	int i;

	if (lt_read_file("/proc/meminfo", mu_bigbuf, sizeof(mu_bigbuf)) <= 0)
		lt_die("read /proc/meminfo");
	s->mlocked_kb = lt_field(mu_bigbuf, "Mlocked");
	s->unevictable_kb = lt_field(mu_bigbuf, "Unevictable");
	s->anonhuge_kb = lt_field(mu_bigbuf, "AnonHugePages");
	if (lt_read_file("/proc/vmstat", mu_bigbuf, sizeof(mu_bigbuf)) <= 0)
		lt_die("read /proc/vmstat");
	for (i = 0; i < MU_NEV; i++)
		s->ev[i] = lt_field(mu_bigbuf, mu_ev_keys[i]);
	for (i = 0; i < MU_NINFO; i++)
		s->info[i] = lt_field(mu_bigbuf, mu_info_keys[i]);
	if (lt_read_file("/proc/zoneinfo", mu_bigbuf, sizeof(mu_bigbuf)) <= 0)
		lt_die("read /proc/zoneinfo");
	s->nzones = 0;
	for (p = mu_bigbuf; (p = strstr(p, "Node ")) && s->nzones < MU_MAX_ZONES; ) {
		int node;
		char zone[16];
		char *next = strstr(p + 5, "\nNode ");

		if (sscanf(p, "Node %d, zone %15s", &node, zone) != 2)
			lt_die("parse /proc/zoneinfo");
		snprintf(s->zname[s->nzones], sizeof(s->zname[0]), "%d/%s", node, zone);
		/* this zone's counters: before the next "Node " header */
		s->nr_mlock[s->nzones] = mu_zone_field(p, next, "nr_mlock");
		s->nr_unev[s->nzones] = mu_zone_field(p, next, "nr_zone_unevictable");
		s->nzones++;
		p = next ? next + 1 : p + strlen(p);
	}
	for (i = 0; i < MU_NLO; i++) {
		snprintf(path, sizeof(path), LO_MUNLOCK "/stats/%s", mu_lo_files[i]);
		s->lo[i] = lt_read_ll(path);
	}
}

/* Drain all CPUs, fold the vmstat differentials, read. */
static inline void mu_snapshot(struct mu_snap *s, const char *label)
{
	mu_drain_all();
	mu_stat_refresh();
	mu_take(s);
	s->label = label;
}

/*
 * Format the change b -> s:
 *   mlocked_kb=.. unevictable_kb=.. nr_mlock=N/ZONE:..,..
 *   nr_zone_unevictable=N/ZONE:..,.. culled=.. ... stranded=.. ident=ok|bad |
 *   anonhuge_kb=.. lo_pages=.. ... migrated=..
 * The part before " | " is what must be identical between the stock and the
 * batched walk; ident: mlocked - munlocked - stranded - cleared ==
 * sum(nr_mlock) and Mlocked == 4 * sum(nr_mlock) (the events account every
 * PG_mlocked set and clear), and Unevictable == 4 * sum(nr_zone_unevictable)
 * (the node's and the zones' LRU sizes move together: the batched walk
 * applies them at the end of each lock hold).  Returns the nr_mlock sum.
 */
/*
 * Append " NAME=ZONE:d,ZONE:d,.." for one per-zone counter (arrays @bv of
 * snapshot @b and @sv of @s) at @line + *@n; returns the sum of the deltas.
 */
static inline long long mu_fmt_zones(char *line, size_t size, int *n, const char *name,
				     const struct mu_snap *b, const long long *bv,
				     const struct mu_snap *s, const long long *sv)
{
	long long sum = 0;
	int i;

	*n += snprintf(line + *n, size - *n, " %s=", name);
	for (i = 0; i < s->nzones; i++) {
		long long d = sv[i] - (i < b->nzones ? bv[i] : 0);

		sum += d;
		*n += snprintf(line + *n, size - *n, "%s%s:%lld", i ? "," : "", s->zname[i], d);
	}
	return sum;
}

static inline long long mu_fmt_delta(char *line, size_t size, const struct mu_snap *b,
				     const struct mu_snap *s)
{
	long long sum, usum, bal;
	int i, n;

	n = snprintf(line, size, "mlocked_kb=%lld unevictable_kb=%lld",
		     s->mlocked_kb - b->mlocked_kb, s->unevictable_kb - b->unevictable_kb);
	sum = mu_fmt_zones(line, size, &n, "nr_mlock", b, b->nr_mlock, s, s->nr_mlock);
	usum = mu_fmt_zones(line, size, &n, "nr_zone_unevictable", b, b->nr_unev, s, s->nr_unev);
	for (i = 0; i < MU_NEV; i++)
		n += snprintf(line + n, size - n, " %s=%lld", mu_ev_names[i], s->ev[i] - b->ev[i]);
	bal = (s->ev[3] - b->ev[3]) - (s->ev[4] - b->ev[4]) - (s->ev[6] - b->ev[6]) -
	      (s->ev[5] - b->ev[5]);
	n += snprintf(line + n, size - n, " ident=%s | anonhuge_kb=%lld",
		      (bal == sum && s->mlocked_kb - b->mlocked_kb == 4 * sum &&
		       s->unevictable_kb - b->unevictable_kb == 4 * usum) ? "ok" : "bad",
		      s->anonhuge_kb - b->anonhuge_kb);
	for (i = 0; i < MU_NLO; i++)
		n += snprintf(line + n, size - n, " lo_%s=%lld", mu_lo_names[i],
			      (s->lo[i] < 0 || b->lo[i] < 0) ? -1 : s->lo[i] - b->lo[i]);
	for (i = 0; i < MU_NINFO; i++)
		n += snprintf(line + n, size - n, " %s=%lld", mu_info_keys[i],
			      s->info[i] - b->info[i]);
	return sum;
}


#endif
