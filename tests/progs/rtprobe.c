// SPDX-License-Identifier: GPL-2.0
/*
 * rtprobe CPU PRIO SECONDS INTERVAL_US
 *
 * A periodic real-time task, as on an isolated CPU of a control loop: pinned
 * to CPU, SCHED_FIFO PRIO, it wakes every INTERVAL_US (absolute
 * clock_nanosleep(), as cyclictest does) and writes one byte to a fresh
 * page of a private anonymous mapping (MADV_NOHUGEPAGE), i.e. it adds a
 * folio to its CPU's LRU batch, taking that CPU's batch lock, once per
 * period.  It records the wake-up latency (now - the period's start) and
 * the time the touch took, and the voluntary / involuntary context
 * switches it suffered while touching (a wait for a lock held elsewhere is
 * a voluntary one on PREEMPT_RT).  Prints one line:
 *   rtprobe cpu=C prio=P periods=N wake_max_us=.. wake_p99_us=..
 *           touch_max_us=.. touch_p99_us=.. touch_over_1ms=.. slept=.. preempted=..
 * Exit: 0 ok, 1 error, 2 usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/resource.h>

#include "common.h"

#define MAX_PERIODS 100000

static long long wake[MAX_PERIODS], touch[MAX_PERIODS];

static long long pct(long long *v, long n, int p)
{
	return v[(n - 1) * p / 100];
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), n = 0, over = 0, npages;
	struct rusage r0, r1;
	struct timespec next;
	long long t_end, iv, slept = 0, preempted = 0;
	unsigned char *area;
	int cpu, prio;

	lt_args("rtprobe", argc, 4, 4, "CPU PRIO SECONDS INTERVAL_US");
	cpu = lt_arg("CPU", argv[1], 0, 4095);
	prio = lt_arg("PRIO", argv[2], 1, 99);
	t_end = lt_now_ns() + lt_arg("SECONDS", argv[3], 1, 3600) * 1000000000LL;
	iv = lt_arg("INTERVAL_US", argv[4], 100, 1000000) * 1000LL;
	npages = MAX_PERIODS;
	area = mmap(NULL, npages * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		lt_die("mmap");
	/* EINVAL: no THP in this kernel (Debian's RT flavours) */
	if (madvise(area, npages * page, MADV_NOHUGEPAGE) && errno != EINVAL)
		lt_die("madvise(MADV_NOHUGEPAGE)");
	lt_pin(cpu);
	lt_fifo(prio);
	printf("ready cpu=%d prio=%d\n", cpu, prio);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (n < MAX_PERIODS) {
		long long start, t0, t1;

		next.tv_nsec += iv;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		start = (long long)next.tv_sec * 1000000000LL + next.tv_nsec;
		if (start > t_end)
			break;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		getrusage(RUSAGE_THREAD, &r0);
		t0 = lt_now_ns();
		area[n * page] = 1;
		t1 = lt_now_ns();
		getrusage(RUSAGE_THREAD, &r1);
		slept += r1.ru_nvcsw - r0.ru_nvcsw;
		preempted += r1.ru_nivcsw - r0.ru_nivcsw;
		/* t0 is after getrusage(): wake-up latency plus that call */
		wake[n] = t0 - start;
		touch[n] = t1 - t0;
		over += touch[n] > 1000000;
		n++;
	}
	if (!n)
		lt_die("no period ran");
	lt_sort_ll(wake, n);
	lt_sort_ll(touch, n);
	printf("rtprobe cpu=%d prio=%d periods=%ld wake_max_us=%lld wake_p99_us=%lld touch_max_us=%lld touch_p99_us=%lld touch_over_1ms=%ld slept=%lld preempted=%lld\n",
	       cpu, prio, n, wake[n - 1] / 1000, pct(wake, n, 99) / 1000,
	       touch[n - 1] / 1000, pct(touch, n, 99) / 1000, over, slept,
	       preempted);
	return 0;
}
