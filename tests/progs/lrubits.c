// SPDX-License-Identifier: GPL-2.0
/*
 * lrubits PID ADDR NPAGES
 *
 * How many of the NPAGES pages mapped at ADDR (hex) in process PID are on
 * an LRU list: /proc/PID/pagemap gives each page's PFN (root only), bit
 * KPF_LRU (5) of /proc/kpageflags says whether that page is on an LRU.  A
 * page still in a per-CPU LRU batch is not (PG_lru is set when the batch is
 * moved to the lruvec), so this tells a drained batch from a pending one
 * without trusting any counter of the code under test.
 *
 * Prints "lru=N present=P of NPAGES"; exit 0 = read, 1 = failure, 2 = usage.
 */
#define _GNU_SOURCE
#include <inttypes.h>

#include "common.h"

#define PM_PFN_MASK	((1ULL << 55) - 1)
#define PM_PRESENT	(1ULL << 63)
#define KPF_LRU		5

static int pread64_at(int fd, uint64_t *v, off_t off)
{
	return pread(fd, v, sizeof(*v), off) == sizeof(*v) ? 0 : -1;
}

int main(int argc, char **argv)
{
	long pid, npages, page = sysconf(_SC_PAGESIZE), i, lru = 0, present = 0;
	unsigned long addr;
	char path[64];
	int pm, kf;

	lt_args("lrubits", argc, 3, 3, "PID ADDR NPAGES");
	pid = lt_arg("PID", argv[1], 1, 1L << 22);
	addr = strtoul(argv[2], NULL, 16);
	npages = lt_arg("NPAGES", argv[3], 1, 1 << 20);
	snprintf(path, sizeof(path), "/proc/%ld/pagemap", pid);
	pm = open(path, O_RDONLY);
	kf = open("/proc/kpageflags", O_RDONLY);
	if (pm < 0 || kf < 0) {
		perror("lrubits: open pagemap/kpageflags");
		return 1;
	}
	for (i = 0; i < npages; i++) {
		uint64_t ent, flags;

		if (pread64_at(pm, &ent, (addr / page + i) * sizeof(ent))) {
			perror("lrubits: pagemap");
			return 1;
		}
		if (!(ent & PM_PRESENT))
			continue;
		present++;
		if (!(ent & PM_PFN_MASK)) {
			fprintf(stderr, "lrubits: no PFN in pagemap (not root?)\n");
			return 1;
		}
		if (pread64_at(kf, &flags, (ent & PM_PFN_MASK) * sizeof(flags))) {
			perror("lrubits: kpageflags");
			return 1;
		}
		lru += (flags >> KPF_LRU) & 1;
	}
	printf("lru=%ld present=%ld of %ld\n", lru, present, npages);
	return 0;
}
