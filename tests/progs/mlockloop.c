// SPDX-License-Identifier: GPL-2.0
/*
 * mlockloop SECONDS [MIB] [SLEEP_US]
 *
 * Background workload for the lruopt tests: keeps a MIB-sized anonymous
 * mapping (default 4 MiB) cycling through mlock/munlock, so that
 * mlock_pte_range() and the munlock path run continuously while the
 * livepatch is switched on/off.  Every few iterations it locks only the
 * middle half (forcing VMA split + merge) and uses mlock2(MLOCK_ONFAULT),
 * to cover more of the mlock code.  The contents are verified after each
 * munlock so that a broken replacement that corrupts or drops pages is
 * noticed.  SLEEP_US (default 0) sleeps between iterations to make the
 * load less CPU-bound.
 *
 * Exit status: 0 = ran to the deadline or was stopped by SIGTERM,
 * 1 = a syscall failed or data was corrupted, 2 = usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif

int main(int argc, char **argv)
{
	long seconds, mib = 4, sleep_us = 0, page = sysconf(_SC_PAGESIZE);
	unsigned long iters = 0;
	double start, deadline;
	size_t size, i;
	unsigned char *p;

	loop_args("mlockloop", argc, argv, &seconds, &mib, &sleep_us);

	size = (size_t)mib << 20;
	/* Keep THP out: we want per-PTE work in mlock_pte_range. */
	p = lt_map_anon(size, true);
	for (i = 0; i < size; i += page)
		p[i] = (unsigned char)(i / page);

	start = now_s();
	deadline = start + seconds;
	while (!stop_requested && now_s() < deadline) {
		int rc;

		switch (iters % 4) {
		case 3:	/* lock the middle half: VMA split, then merge on munlock */
			rc = mlock(p + size / 4, size / 2);
			break;
		case 2:
			rc = syscall(SYS_mlock2, p, size, MLOCK_ONFAULT);
			break;
		default:
			rc = mlock(p, size);
		}
		if (rc) {
			fprintf(stderr, "mlockloop: mlock iteration %lu: %s\n", iters, strerror(errno));
			return 1;
		}
		if (munlock(p, size)) {
			fprintf(stderr, "mlockloop: munlock iteration %lu: %s\n", iters, strerror(errno));
			return 1;
		}
		for (i = 0; i < size; i += page) {
			if (p[i] != (unsigned char)(i / page)) {
				fprintf(stderr, "mlockloop: page %zu corrupted after iteration %lu\n",
					i / page, iters);
				return 1;
			}
		}
		loop_pause(&iters, sleep_us);
	}
	loop_done(iters, start);
	return 0;
}
