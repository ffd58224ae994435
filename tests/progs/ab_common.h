/*
 * ab_common.h - helpers of the A/B benchmark programs (tests/progs/ab_*.c,
 * driven by tests/bench/w-*.sh).  Kept separate from common.h, which other
 * test programs share, so that the two can change independently.
 *
 * NOTE: scripts/mkinitramfs rebuilds a program when its .c or common.h is
 * newer than the binary; it does not look at this header, so after editing
 * it touch the ab_*.c files (or remove build/progs/ab_*).
 */
#ifndef LRUOPT_AB_COMMON_H
#define LRUOPT_AB_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *ab_prog = "ab";

#define ab_die(...) do {						\
	int e_ = errno;							\
	fprintf(stderr, "%s: ", ab_prog);				\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, " (%s)\n", strerror(e_));			\
	exit(1);							\
} while (0)

static inline long long ab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline long ab_arg(const char *what, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "%s: bad %s '%s' (%ld..%ld)\n", ab_prog, what, s, min, max);
		exit(2);
	}
	return v;
}

/* Pin the calling thread to @cpu; dies if that CPU does not exist. */
static inline void ab_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		ab_die("sched_setaffinity(cpu %d)", cpu);
}

/* One counter of /proc/vmstat, -1 if absent. */
static inline long long ab_vmstat(const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long long v = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			v = atoll(line + kl + 1);
			break;
		}
	fclose(f);
	return v;
}

static inline int ab_cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v in place; q in [0,1]: nearest-rank quantile. */
static inline long long ab_quantile(long long *v, long n, double q)
{
	long i;

	if (n <= 0)
		return 0;
	qsort(v, n, sizeof(*v), ab_cmp_ll);
	i = (long)(q * (n - 1) + 0.5);
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static inline double ab_mean(const long long *v, long n)
{
	double s = 0;
	long i;

	for (i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

#endif
