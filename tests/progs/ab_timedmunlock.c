// SPDX-License-Identifier: GPL-2.0
/*
 * ab_timedmunlock MIB REPS
 *
 * mmtests' timedmunlock/timedmlock on a populated, non-THP area (Vlastimil
 * Babka, linux-mm 2013, "[RFC PATCH 0/6] Improving munlock() performance for large non-THP
 * areas", 2013): mmap MIB MiB of anonymous memory with MADV_NOHUGEPAGE,
 * write every page, then REPS times time mlock() of the whole (populated)
 * area and munlock() of it.  Every page goes through mlock_pte_range() on
 * the way in and out.
 *
 * Prints one line per repetition:
 *   ab_timedmunlock rep=I pages=P mlock_ns_per_page=X munlock_ns_per_page=Y
 *                   mlocked=M munlocked=U
 * (mlocked/munlocked: /proc/vmstat unevictable_pgs_(m|mun)locked deltas of
 * that call: exactly P when every page was processed).
 * Exit status: 0 ok, 1 a syscall failed, 2 usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "common.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int main(int argc, char **argv)
{
	long mib, reps, r, page = sysconf(_SC_PAGESIZE);
	long long t0, t1, t2, m0, m1, u0, u1;
	size_t size, i, pages;
	unsigned char *p;

	lt_args("ab_timedmunlock", argc, 2, 2, "MIB REPS");
	mib = lt_arg("MIB", argv[1], 1, 65536);
	reps = lt_arg("REPS", argv[2], 1, 10000);
	size = (size_t)mib << 20;
	pages = size / page;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		lt_die("mmap %ld MiB", mib);
	if (madvise(p, size, MADV_NOHUGEPAGE))
		lt_die("madvise(MADV_NOHUGEPAGE)");
	/* populate without a page fault per page (slow under emulation) */
	madvise(p, size, MADV_POPULATE_WRITE);
	for (i = 0; i < size; i += page)
		p[i] = (unsigned char)i;

	for (r = 1; r <= reps; r++) {
		m0 = lt_vmstat("unevictable_pgs_mlocked");
		t0 = lt_now_ns();
		if (mlock(p, size))
			lt_die("mlock %ld MiB", mib);
		t1 = lt_now_ns();
		m1 = lt_vmstat("unevictable_pgs_mlocked");
		u0 = lt_vmstat("unevictable_pgs_munlocked");
		t2 = lt_now_ns();
		if (munlock(p, size))
			lt_die("munlock %ld MiB", mib);
		t2 = lt_now_ns() - t2;
		u1 = lt_vmstat("unevictable_pgs_munlocked");
		printf("ab_timedmunlock rep=%ld pages=%zu mlock_ns_per_page=%.2f munlock_ns_per_page=%.2f mlocked=%lld munlocked=%lld\n",
		       r, pages, (double)(t1 - t0) / pages, (double)t2 / pages,
		       m1 - m0, u1 - u0);
		fflush(stdout);
	}
	for (i = 0; i < size; i += page)
		if (p[i] != (unsigned char)i) {
			fprintf(stderr, "ab_timedmunlock: page %zu corrupted\n", i / page);
			return 1;
		}
	munmap(p, size);
	return 0;
}
