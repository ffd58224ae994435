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
	struct sched_param sp = { 0 };
	unsigned char *p, *scratch;
	cpu_set_t set;
	double deadline;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: drain_pending CPU NPAGES SECONDS [PRIO]\n");
		return 2;
	}
	cpu = strtol(argv[1], NULL, 10);
	if (cpu < 0 || cpu >= CPU_SETSIZE) {
		fprintf(stderr, "drain_pending: bad CPU '%s'\n", argv[1]);
		return 2;
	}
	npages = parse_arg("drain_pending", "NPAGES", argv[2], 12);
	seconds = parse_arg("drain_pending", "SECONDS", argv[3], 86400);
	if (argc == 5)
		prio = parse_arg("drain_pending", "PRIO", argv[4], 99);
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
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("drain_pending: sched_setaffinity");
		return 1;
	}
	sp.sched_priority = prio;
	if (prio && sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("drain_pending: sched_setscheduler");
		return 1;
	}
	/* Make sure we really run there before touching anything. */
	while (sched_getcpu() != cpu)
		sched_yield();
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
