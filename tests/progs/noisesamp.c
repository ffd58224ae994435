// SPDX-License-Identifier: GPL-2.0
/*
 * noisesamp CPU SECONDS [FAULT_US]
 *
 * An isolated CPU's view of interference: pinned to CPU, at the normal
 * priority of an application thread, it reads CLOCK_MONOTONIC in a tight
 * loop for SECONDS and records the largest gap between two consecutive
 * reads of every 1 ms window (time it did not run: interrupts, kworkers,
 * anything else the CPU was made to do).  Every FAULT_US (default 2000;
 * 0 = never) it writes the first byte of a fresh page of a private
 * anonymous mapping (MADV_NOHUGEPAGE: a huge page is never batched), so
 * that the CPU's LRU batch keeps holding folios, as an application's CPU
 * does; the time of its own fault is not counted (the clock is read again
 * after it).  Stops early on SIGTERM/SIGINT.  Prints one line:
 *   noisesamp cpu=C windows=N max_us=X p999_us=Y p99_us=Z median_us=W
 *             faults=F preempted=P
 * (gaps per 1 ms window: the largest, the 99.9th and 99th percentile and
 * the median of the windows' largest gaps; P: the involuntary context
 * switches the sampler suffered, i.e. how often anything else ran on its
 * CPU, a count that does not depend on timing).  Under single-threaded
 * TCG every vCPU waits while another one runs, so gaps of milliseconds are
 * the emulator's; P still counts only the guest's own interference.
 * Exit: 0 ok, 1 error, 2 usage.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "common.h"

#define WINDOW_NS	1000000LL

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long cpu, seconds, fault_us = 2000, nwin, w = 0, faults = 0;
	long long *win, t, prev, start, wstart, next_fault, gap, wmax = 0;
	size_t npages, page = 4096, off = 0;
	unsigned char *map;
	struct rusage ru0, ru1;

	lt_args("noisesamp", argc, 2, 3, "CPU SECONDS [FAULT_US]");
	cpu = lt_arg("CPU", argv[1], 0, 8191);
	seconds = lt_arg("SECONDS", argv[2], 1, 3600);
	if (argc > 3)
		fault_us = lt_arg("FAULT_US", argv[3], 0, 10000000);
	nwin = seconds * (1000000000LL / WINDOW_NS) + 1;
	win = calloc(nwin, sizeof(*win));
	/* one page per fault, plus slack */
	npages = fault_us ? (size_t)(seconds * 1000000LL / fault_us) + 16 : 1;
	map = mmap(NULL, npages * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!win || map == MAP_FAILED)
		lt_die("calloc/mmap");
	/* EINVAL without THP (Debian's RT flavours): nothing to avoid there */
	if (madvise(map, npages * page, MADV_NOHUGEPAGE) && errno != EINVAL)
		lt_die("madvise(MADV_NOHUGEPAGE)");
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	lt_pin(cpu);
	printf("noisesamp ready cpu=%ld\n", cpu);
	fflush(stdout);

	getrusage(RUSAGE_SELF, &ru0);
	start = prev = wstart = lt_now_ns();
	next_fault = start + fault_us * 1000LL;
	while (!stop && w < nwin) {
		t = lt_now_ns();
		gap = t - prev;
		if (gap > wmax)
			wmax = gap;
		prev = t;
		if (t - wstart >= WINDOW_NS) {
			win[w++] = wmax;
			wmax = 0;
			wstart = t;
			if (t - start >= seconds * 1000000000LL)
				break;
		}
		if (fault_us && t >= next_fault && off + page <= npages * page) {
			map[off] = 1;
			off += page;
			faults++;
			next_fault = t + fault_us * 1000LL;
			prev = lt_now_ns();	/* our own fault is not noise */
		}
	}
	getrusage(RUSAGE_SELF, &ru1);
	if (!w)
		lt_die("no complete window");
	lt_sort_ll(win, w);
	printf("noisesamp cpu=%ld windows=%ld max_us=%.1f p999_us=%.1f p99_us=%.1f median_us=%.1f faults=%ld preempted=%ld\n",
	       cpu, w, win[w - 1] / 1000.0, win[(w * 999) / 1000] / 1000.0,
	       win[(w * 99) / 100] / 1000.0, win[w / 2] / 1000.0, faults,
	       ru1.ru_nivcsw - ru0.ru_nivcsw);
	return 0;
}
