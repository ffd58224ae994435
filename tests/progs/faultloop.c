// SPDX-License-Identifier: GPL-2.0
/*
 * faultloop SECONDS [MIB] [SLEEP_US]
 *
 * Background workload: mmap an anonymous area (default 8 MiB), touch every
 * page (page faults -> folios added to the per-CPU LRU batches that
 * lru_add_drain_all() has to flush), verify, munmap, repeat.  Bounded by
 * SECONDS; SIGTERM stops it cleanly.  Exit 0 = ok, 1 = failure, 2 = usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	long seconds, mib = 8, sleep_us = 0, page = sysconf(_SC_PAGESIZE);
	unsigned long iters = 0;
	double start, deadline;
	size_t size, i;

	loop_args("faultloop", argc, argv, &seconds, &mib, &sleep_us);
	size = (size_t)mib << 20;

	start = now_s();
	deadline = start + seconds;
	while (!stop_requested && now_s() < deadline) {
		unsigned char *p = lt_map_anon(size, false);

		for (i = 0; i < size; i += page)
			p[i] = (unsigned char)(iters + i / page);
		for (i = 0; i < size; i += page) {
			if (p[i] != (unsigned char)(iters + i / page)) {
				fprintf(stderr, "faultloop: page %zu corrupted in iteration %lu\n",
					i / page, iters);
				return 1;
			}
		}
		if (munmap(p, size)) {
			perror("faultloop: munmap");
			return 1;
		}
		loop_pause(&iters, sleep_us);
	}
	loop_done(iters, start);
	return 0;
}
