// SPDX-License-Identifier: GPL-2.0
/*
 * ab_drainlat compact|collapse CALLS SLEEP_US [CPU [JITTER_US]]
 *
 * Times CALLS calls that run lru_add_drain_all() first thing, from a task
 * pinned to CPU (default 0), sleeping SLEEP_US plus a random 0..JITTER_US
 * (default 0) between calls.  The jitter matters next to an RT hog: a call
 * that waited for RT throttling returns at the start of the throttled
 * window, and a fixed short sleep would make the next calls land in the
 * same window (fast) and the one after at its end (slow), every time.
 *   compact   write "1" to /proc/sys/vm/compact_memory (open+write+close):
 *             lru_add_drain_all() and then a compaction pass over all zones
 *   collapse  madvise(MADV_COLLAPSE) on one 4 KiB page of an anonymous
 *             mapping: lru_add_drain_all(), then nothing (the range holds no
 *             whole huge page), so the call costs the drain and the syscall.
 *             Another page of the mapping is written first: without an
 *             anon_vma, hugepage_vma_check() fails the call with EINVAL
 *             *before* the drain.
 * Both callers are "hint" callers for lruopt (drain/callers).
 * Then, for collapse, the same CALLS calls again in blocks of 10 timed as
 * one (the guest clock under TCG ticks in about 100 ns: a 3 us call reads
 * as 2.9, 3.0 or 3.1, too coarse for a 2 % difference), sleeping between
 * blocks only.
 * Prints one line:
 *   ab_drainlat mode=M calls=N median_us=X p90_us=Y max_us=Z mean_us=W
 *               [block_median_ns=B]
 * Exit status: 0 ok, 1 a call failed, 2 usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "common.h"

/* calls per timed block of the second collapse pass */
#define BLOCK 10

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

int main(int argc, char **argv)
{
	long calls, sleep_us, cpu = 0, jitter_us = 0, i;
	long long *lat, t0;
	unsigned char *map = NULL, *addr = NULL;
	const size_t hp = 2UL << 20;
	int collapse;

	lt_prog = "ab_drainlat";
	if (argc < 4 || argc > 6 ||
	    (strcmp(argv[1], "compact") && strcmp(argv[1], "collapse"))) {
		fprintf(stderr, "usage: ab_drainlat compact|collapse CALLS SLEEP_US [CPU [JITTER_US]]\n");
		return 2;
	}
	collapse = !strcmp(argv[1], "collapse");
	calls = lt_arg("CALLS", argv[2], 1, 10000000);
	sleep_us = lt_arg("SLEEP_US", argv[3], 0, 10000000);
	if (argc > 4)
		cpu = lt_arg("CPU", argv[4], 0, 8191);
	if (argc > 5)
		jitter_us = lt_arg("JITTER_US", argv[5], 0, 10000000);
	srand((unsigned)lt_now_ns());
	lat = calloc(calls, sizeof(*lat));
	if (!lat)
		lt_die("calloc");
	lt_pin(cpu);

	if (collapse) {
		/* 2 huge pages' worth, so the VMA can hold an aligned one */
		map = mmap(NULL, 2 * hp, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			lt_die("mmap");
		addr = (unsigned char *)(((unsigned long)map + hp - 1) & ~(hp - 1));
		/* gives the VMA its anon_vma; a page outside the collapse range */
		addr[hp - 4096] = 1;
	}

	for (i = 0; i < calls; i++) {
		if (collapse) {
			t0 = lt_now_ns();
			if (madvise(addr, 4096, MADV_COLLAPSE))
				lt_die("madvise(MADV_COLLAPSE) call %ld", i);
			lat[i] = lt_now_ns() - t0;
		} else {
			int fd;

			t0 = lt_now_ns();
			fd = open("/proc/sys/vm/compact_memory", O_WRONLY);
			if (fd < 0 || write(fd, "1", 1) != 1)
				lt_die("write /proc/sys/vm/compact_memory call %ld", i);
			close(fd);
			lat[i] = lt_now_ns() - t0;
		}
		if (sleep_us || jitter_us)
			usleep(sleep_us + (jitter_us ? rand() % jitter_us : 0));
	}
	{
		double mean = lt_mean(lat, calls);
		long long p50 = lt_quantile(lat, calls, 0.5);
		long long p90 = lt_quantile(lat, calls, 0.9);

		printf("ab_drainlat mode=%s calls=%ld median_us=%.1f p90_us=%.1f max_us=%.1f mean_us=%.1f",
		       argv[1], calls, p50 / 1e3, p90 / 1e3, lat[calls - 1] / 1e3, mean / 1e3);
	}
	if (collapse && calls >= 2 * BLOCK) {
		long nb = calls / BLOCK, b, j;

		for (b = 0; b < nb; b++) {
			t0 = lt_now_ns();
			for (j = 0; j < BLOCK; j++)
				if (madvise(addr, 4096, MADV_COLLAPSE))
					lt_die("madvise(MADV_COLLAPSE) block %ld", b);
			lat[b] = lt_now_ns() - t0;
			if (sleep_us || jitter_us)
				usleep(sleep_us + (jitter_us ? rand() % jitter_us : 0));
		}
		printf(" block_median_ns=%lld", lt_quantile(lat, nb, 0.5) / BLOCK);
	}
	printf("\n");
	return 0;
}
