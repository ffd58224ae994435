/*
 * rthog CPU SECONDS [PRIO] [KIB]
 *
 * A SCHED_FIFO (priority PRIO, default 50) spinner pinned to CPU that keeps
 * faulting new anonymous pages (mmap KIB KiB, default 256, MADV_NOHUGEPAGE,
 * touch every page, check, munmap, repeat), so that CPU mostly has folios in
 * its per-CPU LRU batches (measured on 6.1 under TCG: ~70% of the time; the
 * batch is empty right after each 15-folio flush and after munmap's
 * lru_add_drain()), while its kworkers only run when RT throttling
 * (sched_rt_runtime_us) or, on 6.12, the fair server lets them.  This is the
 * situation in which a stock lru_add_drain_all() waits for up to a second.
 * Keep KIB small: with large areas the hog, throttled in the middle of a long
 * munmap, holds its mm's locks for the rest of the RT period, and
 * compaction (which migrates the hog's pages) then waits for it: seconds.
 * Bounded by SECONDS; SIGTERM stops it.  Prints "rthog: ready" once running
 * as SCHED_FIFO on CPU and "rthog: N iterations" at the end.
 * Exit 0 = ok, 1 = failure, 2 = usage.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	long cpu, seconds, prio = 50, kib = 256, page = sysconf(_SC_PAGESIZE);
	unsigned long iters = 0;
	double deadline;
	size_t size, i;

	lt_args("rthog", argc, 2, 4, "CPU SECONDS [PRIO] [KIB]");
	cpu = lt_arg("CPU", argv[1], 0, CPU_SETSIZE - 1);
	seconds = lt_arg("SECONDS", argv[2], 1, 86400);
	if (argc > 3)
		prio = lt_arg("PRIO", argv[3], 1, 99);
	if (argc > 4)
		kib = lt_arg("KIB", argv[4], 1, 1 << 20);
	setup_bounded_run(seconds);
	setvbuf(stdout, NULL, _IOLBF, 0);
	size = (size_t)kib << 10;

	lt_pin(cpu);
	lt_fifo(prio);
	printf("rthog: ready on CPU %ld, SCHED_FIFO %ld\n", cpu, prio);

	deadline = now_s() + seconds;
	while (!stop_requested && now_s() < deadline) {
		unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("rthog: mmap");
			return 1;
		}
		/*
		 * small folios only: a THP would bypass the LRU batches
		 * (EINVAL: a kernel without THP, e.g. Debian's RT flavours)
		 */
		if (madvise(p, size, MADV_NOHUGEPAGE) && errno != EINVAL) {
			perror("rthog: madvise(MADV_NOHUGEPAGE)");
			return 1;
		}
		for (i = 0; i < size && !stop_requested; i += page)
			p[i] = (unsigned char)(iters + i / page);
		if (i < size)
			size = i;	/* stopped: check what was written */
		for (i = 0; i < size; i += page) {
			if (p[i] != (unsigned char)(iters + i / page)) {
				fprintf(stderr, "rthog: page %zu corrupted\n", i / page);
				return 1;
			}
		}
		if (munmap(p, (size_t)kib << 10)) {
			perror("rthog: munmap");
			return 1;
		}
		iters++;
	}
	printf("rthog: %lu iterations\n", iters);
	return 0;
}
