// SPDX-License-Identifier: GPL-2.0
/*
 * setfifo PRIO PID...
 *
 * Make each PID SCHED_FIFO at PRIO (busybox has no chrt).  The drain tests
 * on PREEMPT_RT use it to put the per-CPU kernel threads an RT hog would
 * otherwise starve (ktimers, rcuc, the RCU grace-period kthread) above the
 * hog, as RT deployments do: there, timers expire and RCU callbacks run in
 * SCHED_FIFO 1 threads, and a SCHED_FIFO 50 spinner stalls RCU in 21 s.
 *
 * Exit 0 = all set, 1 = some failed, 2 = usage.
 */
#define _GNU_SOURCE
#include "common.h"

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };
	int i, rc = 0;

	lt_prog = "setfifo";
	if (argc < 3) {
		fprintf(stderr, "usage: setfifo PRIO PID...\n");
		return 2;
	}
	sp.sched_priority = lt_arg("PRIO", argv[1], 1, 99);
	for (i = 2; i < argc; i++) {
		if (sched_setscheduler(lt_arg("PID", argv[i], 1, 1L << 22),
				       SCHED_FIFO, &sp)) {
			fprintf(stderr, "setfifo: pid %s: %s\n", argv[i],
				strerror(errno));
			rc = 1;
		}
	}
	return rc;
}
