/*
 * drain_pending CPU NPAGES SECONDS [PRIO]
 *
 * Leaves exactly NPAGES freshly faulted anonymous pages in CPU's per-CPU
 * LRU "add" batch and then sleeps, pinned to CPU, so that CPU has pending
 * work for lru_add_drain_all() and nothing else touches its batches:
 *   1. pin to CPU (sched_setaffinity), then munmap a scratch page: the
 *      munmap path runs lru_add_drain() on this CPU, so the batch starts
 *      empty;
 *   2. fault NPAGES (1..12, below the 15-folio batch size of 6.1) small
 *      pages of a private anonymous mapping (too small for a THP);
 *   3. print "ready CPU NPAGES ADDR" (ADDR: the first page, hex, for
 *      lrubits) and sleep until SIGTERM or SECONDS; with PRIO (1..99),
 *      spin instead, SCHED_FIFO PRIO, in user space (no system call, so
 *      no lock of the CPU's batches is ever taken): an RT hog on a CPU
 *      whose batch is not empty.
 * The pages stay mapped until exit, so they are not freed while batched.
 * Exit 0 = ok (stopped or timed out), 1 = failure, 2 = usage.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	long cpu, npages, seconds, prio = 0, page = sysconf(_SC_PAGESIZE), i;
	unsigned char *p, *scratch;
	double deadline;

	lt_args("drain_pending", argc, 3, 4, "CPU NPAGES SECONDS [PRIO]");
	cpu = lt_arg("CPU", argv[1], 0, CPU_SETSIZE - 1);
	npages = lt_arg("NPAGES", argv[2], 1, 12);
	seconds = lt_arg("SECONDS", argv[3], 1, 86400);
	if (argc == 5)
		prio = lt_arg("PRIO", argv[4], 1, 99);
	setup_bounded_run(seconds);

	/* Everything that allocates (stdio buffers) before pinning. */
	setvbuf(stdout, NULL, _IONBF, 0);
	p = mmap(NULL, npages * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	scratch = mmap(NULL, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || scratch == MAP_FAILED) {
		perror("drain_pending: mmap");
		return 1;
	}
	/* Running there before touching anything. */
	lt_pin(cpu);
	if (prio)
		lt_fifo(prio);
	scratch[0] = 1;
	if (munmap(scratch, page)) {	/* lru_add_drain() on this CPU */
		perror("drain_pending: munmap");
		return 1;
	}
	for (i = 0; i < npages; i++)
		p[i * page] = (unsigned char)(i + 1);
	printf("ready %ld %ld %p\n", cpu, npages, (void *)p);

	deadline = now_s() + seconds;
	while (!stop_requested && now_s() < deadline)
		if (!prio)
			usleep(200000);	/* the vDSO clock: no syscall when spinning */
	for (i = 0; i < npages; i++) {
		if (p[i * page] != (unsigned char)(i + 1)) {
			fprintf(stderr, "drain_pending: page %ld corrupted\n", i);
			return 1;
		}
	}
	return 0;
}
