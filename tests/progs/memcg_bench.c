// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_bench mmap FILE ITERS
 * memcg_bench dirty FILE ITERS
 *
 * Micro-benchmarks of the paths that call folio_memcg_lock()/unlock() on
 * 6.1 (run inside a memcg so that the page cache is charged to it).
 *
 * mmap: the test program of KAMEZAWA Hiroyuki's "[PATCH 0/6] page
 *   cgroup diet v5" (linux-mm, 2012): map FILE twice with MAP_SHARED, mlock the first
 *   mapping (pages stay mapped, mapcount > 1), then ITERS times read-fault
 *   every page of the second mapping and drop it with MADV_DONTNEED.  Each
 *   page of each pass is one page_add_file_rmap() + one page_remove_rmap(),
 *   each taking lock_page_memcg() -> folio_memcg_lock().  Unlike the
 *   original the reads are volatile (gcc -O2 deleted the unused sum).
 * dirty: ITERS times dirty every page of FILE with a small pwrite() and
 *   write it back with sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER)
 *   (no journal commit): per page folio_mark_dirty, folio_clear_dirty_for_io,
 *   writeback start and end, each under folio_memcg_lock().
 *
 * FILE must exist, be non-empty and live on a block-backed filesystem for
 * "dirty" (tmpfs has no writeback).  Prints one line:
 *   BENCH mode=M pages=P iters=I ns=N ns_per_page=X cpu_ns=C
 * (ns: CLOCK_MONOTONIC for the timed loop; cpu_ns: user+system time of
 * this process).  Exit status: 0 ok, 1 syscall failure, 2 usage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int bench_mmap(int fd, size_t size, long page, long iters)
{
	volatile unsigned char sink = 0;
	unsigned char *keep, *p;
	size_t off;
	long i;

	keep = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (keep == MAP_FAILED) {
		perror("memcg_bench: mmap");
		return 1;
	}
	if (mlock(keep, size)) {
		perror("memcg_bench: mlock");
		return 1;
	}
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("memcg_bench: mmap");
		return 1;
	}
	for (i = 0; i < iters; i++) {
		for (off = 0; off < size; off += page)
			sink += p[off];
		if (madvise(p, size, MADV_DONTNEED)) {
			perror("memcg_bench: madvise");
			return 1;
		}
	}
	(void)sink;
	munmap(p, size);
	munlock(keep, size);
	munmap(keep, size);
	return 0;
}

static int bench_dirty(int fd, size_t size, long page, long iters)
{
	uint64_t v;
	size_t off;
	long i;

	for (i = 0; i < iters; i++) {
		for (off = 0; off < size; off += page) {
			v = ((uint64_t)i << 32) | (off / page);
			if (pwrite(fd, &v, sizeof(v), off) != sizeof(v)) {
				perror("memcg_bench: pwrite");
				return 1;
			}
		}
		if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
				    SYNC_FILE_RANGE_WRITE |
				    SYNC_FILE_RANGE_WAIT_AFTER)) {
			perror("memcg_bench: sync_file_range");
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	long iters, page = sysconf(_SC_PAGESIZE);
	double t0, c0, t, c;
	struct stat sb;
	int fd, rc, dirty;

	if (argc != 4 || (strcmp(argv[1], "mmap") && strcmp(argv[1], "dirty"))) {
		fprintf(stderr, "usage: memcg_bench mmap|dirty FILE ITERS\n");
		return 2;
	}
	dirty = !strcmp(argv[1], "dirty");
	iters = parse_arg("memcg_bench", "ITERS", argv[3], 1000000000L);
	/* no early stop (a partial run would be a wrong result): only the alarm */
	setup_bounded_run(3600);
	fd = open(argv[2], dirty ? O_RDWR : O_RDONLY);
	if (fd < 0 || fstat(fd, &sb)) {
		perror("memcg_bench: cannot open file");
		return 1;
	}
	if (sb.st_size < page) {
		fprintf(stderr, "memcg_bench: %s is smaller than a page\n", argv[2]);
		return 2;
	}
	sb.st_size -= sb.st_size % page;

	t0 = now_s();
	c0 = cpu_s();
	rc = dirty ? bench_dirty(fd, sb.st_size, page, iters)
		   : bench_mmap(fd, sb.st_size, page, iters);
	t = now_s() - t0;
	c = cpu_s() - c0;
	if (rc)
		return rc;
	printf("BENCH mode=%s pages=%ld iters=%ld ns=%.0f ns_per_page=%.1f cpu_ns=%.0f\n",
	       argv[1], (long)(sb.st_size / page), iters, t * 1e9,
	       t * 1e9 / ((double)iters * (sb.st_size / page)), c * 1e9);
	return 0;
}
