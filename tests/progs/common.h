/* Shared helpers for the in-guest workload programs (static, no libc extras). */
#ifndef LRUOPT_PROGS_COMMON_H
#define LRUOPT_PROGS_COMMON_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Set by SIGTERM/SIGINT: the test harness stops a workload early with kill;
 * the loop then finishes its current iteration, cleans up and exits 0. */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Parse a bounded positive integer argument or die with a usage message. */
static long parse_arg(const char *prog, const char *what, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > max) {
		fprintf(stderr, "%s: bad %s '%s' (1..%ld)\n", prog, what, s, max);
		exit(2);
	}
	return v;
}

/* Install stop handlers and a hard alarm: a workload must never outlive its
 * duration by much, even if the harness forgets to kill it. */
static void setup_bounded_run(long seconds)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)seconds + 30);
}

/*
 * The arguments of the workload loops "PROG SECONDS [MIB] [SLEEP_US]"
 * (mlockloop, faultloop): parse them into the caller's defaults and start
 * the bounded run.  Exits with status 2 on a usage error.
 */
static inline void loop_args(const char *prog, int argc, char **argv,
			     long *seconds, long *mib, long *sleep_us)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s SECONDS [MIB] [SLEEP_US]\n", prog);
		exit(2);
	}
	*seconds = parse_arg(prog, "SECONDS", argv[1], 86400);
	if (argc > 2)
		*mib = parse_arg(prog, "MIB", argv[2], 1024);
	if (argc > 3)
		*sleep_us = parse_arg(prog, "SLEEP_US", argv[3], 1000000);
	setup_bounded_run(*seconds);
}

#endif
