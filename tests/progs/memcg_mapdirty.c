// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_mapdirty FILE MIB SECONDS [SLEEP_US]
 *
 * Workload for the memcg charge-moving tests: keeps a shared file mapping
 * busy with every page-state transition that folio_memcg_lock() guards:
 *   - read faults on a MAP_SHARED mapping    -> page_add_file_rmap (mapped_file)
 *   - writes through the mapping             -> folio_mark_dirty (dirty)
 *   - sync_file_range(WRITE) of a chunk      -> clear_dirty_for_io, writeback
 *                                               start/end (writeback)
 *   - madvise(DONTNEED) / munmap             -> page_remove_rmap (mapped_file)
 *   - pwrite() of a few pages                -> dirtying via the write path
 * FILE is created (or truncated) to MIB MiB by this process, so its page
 * cache is charged to the memcg this process is in when it starts, which is
 * what charge moving (move_charge_at_immigrate=3) later moves along with
 * the mapped pages.  The mapping stays populated most of the time so that a
 * move finds mapped, dirty and under-writeback pages.
 *
 * Every page carries (page index, generation) and is verified after each
 * pass, through the mapping and through pread(): a lost or misdirected
 * write is reported as corruption.
 * Bounded by SECONDS; SIGTERM stops it cleanly.  Prints one summary line.
 * Exit status: 0 ok, 1 syscall failure or corruption, 2 usage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

struct stamp {
	uint64_t index;
	uint64_t gen;
};

int main(int argc, char **argv)
{
	long mib, seconds, sleep_us = 0, page = sysconf(_SC_PAGESIZE);
	unsigned long iters = 0, syncs = 0, pwrites = 0;
	double start, deadline;
	size_t size, npages, i;
	uint64_t gen = 0;
	struct stamp st;
	int fd;

	lt_args("memcg_mapdirty", argc, 3, 4, "FILE MIB SECONDS [SLEEP_US]");
	mib = parse_arg("memcg_mapdirty", "MIB", argv[2], 1024);
	seconds = parse_arg("memcg_mapdirty", "SECONDS", argv[3], 86400);
	if (argc > 4)
		sleep_us = parse_arg("memcg_mapdirty", "SLEEP_US", argv[4], 1000000);
	setup_bounded_run(seconds);
	size = (size_t)mib << 20;
	npages = size / page;

	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror("memcg_mapdirty: open");
		return 1;
	}
	if (ftruncate(fd, size)) {
		perror("memcg_mapdirty: ftruncate");
		return 1;
	}

	start = now_s();
	deadline = start + seconds;
	while (!stop_requested && now_s() < deadline) {
		unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
					MAP_SHARED, fd, 0);
		volatile unsigned char sink = 0;
		size_t chunk = npages / 4, first;

		if (p == MAP_FAILED) {
			perror("memcg_mapdirty: mmap");
			return 1;
		}
		gen++;
		/* read fault, then dirty, every page */
		for (i = 0; i < npages; i++) {
			struct stamp *s = (struct stamp *)(p + i * page);

			sink += p[i * page + 100];
			s->index = i;
			s->gen = gen;
		}
		/* start writeback of one quarter (async: stays under writeback) */
		first = (iters % 4) * chunk;
		if (sync_file_range(fd, first * page, chunk * page,
				    SYNC_FILE_RANGE_WRITE)) {
			perror("memcg_mapdirty: sync_file_range");
			return 1;
		}
		syncs++;
		/* drop the mappings of another quarter and fault them back */
		first = ((iters + 2) % 4) * chunk;
		if (madvise(p + first * page, chunk * page, MADV_DONTNEED)) {
			perror("memcg_mapdirty: madvise");
			return 1;
		}
		for (i = first; i < first + chunk; i++)
			sink += p[i * page + 200];
		/* dirty a few pages through the write path */
		for (i = iters % 16; i < npages; i += 61) {
			st.index = i;
			st.gen = gen;
			if (pwrite(fd, &st, sizeof(st), i * page) != sizeof(st)) {
				perror("memcg_mapdirty: pwrite");
				return 1;
			}
			pwrites++;
		}
		/* verify through the mapping and through the file */
		for (i = 0; i < npages; i++) {
			struct stamp *s = (struct stamp *)(p + i * page);

			if (s->index != i || s->gen != gen) {
				fprintf(stderr, "memcg_mapdirty: page %zu reads (%llu, %llu) in the mapping, expected (%zu, %llu)\n",
					i, (unsigned long long)s->index,
					(unsigned long long)s->gen, i,
					(unsigned long long)gen);
				return 1;
			}
		}
		for (i = iters % 7; i < npages; i += 37) {
			if (pread(fd, &st, sizeof(st), i * page) != sizeof(st) ||
			    st.index != i || st.gen != gen) {
				fprintf(stderr, "memcg_mapdirty: page %zu reads (%llu, %llu) with pread, expected (%zu, %llu)\n",
					i, (unsigned long long)st.index,
					(unsigned long long)st.gen, i,
					(unsigned long long)gen);
				return 1;
			}
		}
		(void)sink;
		/* hold the populated mapping briefly: moves should find it */
		if (sleep_us)
			usleep(sleep_us);
		if (munmap(p, size)) {
			perror("memcg_mapdirty: munmap");
			return 1;
		}
		iters++;
	}
	close(fd);
	printf("memcg_mapdirty: %lu iterations, %lu writeback starts, %lu pwrites in %.1f s\n",
	       iters, syncs, pwrites, now_s() - start);
	return 0;
}
