// SPDX-License-Identifier: GPL-2.0
/*
 * faultpath anon CPU MIB PASSES
 * faultpath file CPU PATH PASSES
 *
 * The cost of the LRU batch adders as a program sees it, pinned to CPU:
 *   anon: map MIB of private anonymous memory (MADV_NOHUGEPAGE: small
 *         folios, each one batched), write one byte per page, unmap; the
 *         time of all three per page (fault -> lru_add, unmap -> free);
 *   file: drop PATH from the page cache (fadvise DONTNEED, not timed), then
 *         read(2) it in 64 KiB chunks (each new page cache folio ->
 *         lru_add); the time of the read per page.
 * PASSES passes; prints one line
 *   RESULT faultpath mode=M cpu=C pages=N passes=P median_ns=X min_ns=Y
 * (per page: the median and the smallest pass).  Exit 0 ok, 1 error,
 * 2 usage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common.h"

#define MAX_PASSES 1000

static long long anon_pass(size_t len, long page)
{
	long long t0 = lt_now_ns();
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		lt_die("mmap %zu", len);
	if (madvise(p, len, MADV_NOHUGEPAGE) && errno != EINVAL)
		lt_die("madvise(MADV_NOHUGEPAGE)");
	for (i = 0; i < len; i += page)
		p[i] = (unsigned char)i;
	if (munmap(p, len))
		lt_die("munmap");
	return lt_now_ns() - t0;
}

static long long file_pass(int fd, size_t len)
{
	static char buf[64 << 10];
	long long t0;
	size_t done = 0;

	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		lt_die("fadvise(DONTNEED)");
	if (lseek(fd, 0, SEEK_SET))
		lt_die("lseek");
	t0 = lt_now_ns();
	while (done < len) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			lt_die("read");
		done += n;
	}
	return lt_now_ns() - t0;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), passes, i;
	long long t[MAX_PASSES];
	size_t len;
	int fd = -1, cpu;

	lt_prog = "faultpath";
	if (argc != 5)
		goto usage;
	cpu = atoi(argv[2]);
	passes = atol(argv[4]);
	if (passes < 1 || passes > MAX_PASSES)
		goto usage;
	if (!strcmp(argv[1], "anon")) {
		len = (size_t)atol(argv[3]) << 20;
		if (!len)
			goto usage;
	} else if (!strcmp(argv[1], "file")) {
		struct stat st;

		fd = open(argv[3], O_RDONLY);
		if (fd < 0 || fstat(fd, &st))
			lt_die("open %s", argv[3]);
		len = st.st_size;
		if (!len)
			lt_die("%s is empty", argv[3]);
	} else {
		goto usage;
	}
	lt_pin(cpu);
	for (i = 0; i < passes; i++)
		t[i] = fd < 0 ? anon_pass(len, page) : file_pass(fd, len);
	lt_sort_ll(t, passes);
	printf("RESULT faultpath mode=%s cpu=%d pages=%zu passes=%ld median_ns=%lld min_ns=%lld\n",
	       argv[1], cpu, len / page, passes, t[passes / 2] / (long long)(len / page),
	       t[0] / (long long)(len / page));
	return 0;
usage:
	fprintf(stderr, "usage: faultpath anon CPU MIB PASSES | faultpath file CPU PATH PASSES\n");
	return 2;
}
