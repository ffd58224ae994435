/* SPDX-License-Identifier: GPL-2.0 */
/*
 * common.h - the one helper library of the in-guest test and benchmark
 * programs (the .c files of tests/progs), in the spirit of the kernel's
 * tools/testing/selftests/kselftest.h: every program includes it, and a
 * helper two programs need lives here, once.  Shared names carry the lt_
 * ("lruopt test") prefix, as kselftest's carry ksft_.
 *
 * The helpers avoid stdio and malloc where they may run on a measured or
 * counted path: the munlock exactness programs run under
 * mlockall(MCL_FUTURE), where a new mapping (a stdio buffer, a malloc
 * arena) would itself be mlocked and change the counters being compared.
 *
 * Include it after "#define _GNU_SOURCE" (sched_setaffinity, CPU_SET).
 * tests/vm/mkinitramfs and scripts/lruopt-ab rebuild a program when its .c
 * or any header in tests/progs is newer than the binary.
 */
#ifndef LRUOPT_PROGS_COMMON_H
#define LRUOPT_PROGS_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

/* The program's name in messages; main() sets it first thing. */
static const char *lt_prog __attribute__((unused)) = "lruopt-test";

/* Print "PROG: ERROR: message (errno N text)" with one write(2) and exit 1. */
static inline void __attribute__((format(printf, 1, 2), noreturn))
lt_die(const char *fmt, ...)
{
	char buf[512];
	int n, e = errno;
	va_list ap;

	n = snprintf(buf, sizeof(buf), "%s: ERROR: ", lt_prog);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n < (int)sizeof(buf) - 40)
		n += snprintf(buf + n, sizeof(buf) - n, " (errno %d %s)\n", e, strerror(e));
	if (write(2, buf, strlen(buf)) < 0)
		_exit(3);
	exit(1);
}

/* ------------------------------------------------------------------ time */

static inline long long lt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ CPUs */

static inline int lt_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/*
 * Pin the calling task (and its future children) to @cpu, or die; returns
 * running there, so that what it does next (a fault, a batched folio)
 * happens on @cpu.
 */
static inline void lt_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		lt_die("sched_setaffinity(cpu %d)", cpu);
	while (sched_getcpu() != cpu)
		sched_yield();
}

/* Pin the calling task to the CPU it runs on now (lt_pin()). */
static inline void lt_stay(void)
{
	lt_pin(sched_getcpu());
}

/* Make the calling task SCHED_FIFO at @prio, or die. */
static inline void lt_fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		lt_die("sched_setscheduler(SCHED_FIFO %d)", prio);
}

/*
 * Disable address-space randomisation and re-exec, so that every run of a
 * scenario gets the same layout (same PMD alignment of every mapping, same
 * stack size): mlockall() counts and the pages a stack mlock() covers
 * depend on it.
 */
static inline void lt_no_aslr(char **argv)
{
	int pers = personality(0xffffffff);

	if (pers == -1 || (pers & ADDR_NO_RANDOMIZE))
		return;
	if (personality(pers | ADDR_NO_RANDOMIZE) == -1)
		return;
	execv("/proc/self/exe", argv);
	/* could not re-exec: carry on with randomisation */
}

/* ------------------------------------------------------------------ arguments */

/*
 * Name the program in messages (lt_prog) and check that it got @min to @max
 * arguments, or exit 2 with "usage: PROG @usage".
 */
static inline void lt_args(const char *prog, int argc, int min, int max,
			   const char *usage)
{
	lt_prog = prog;
	if (argc - 1 < min || argc - 1 > max) {
		fprintf(stderr, "usage: %s %s\n", prog, usage);
		exit(2);
	}
}

/* A bounded integer argument (min..max), or exit 2 with a usage message. */
static inline long lt_arg(const char *what, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "%s: bad %s '%s' (%ld..%ld)\n", lt_prog, what, s, min, max);
		exit(2);
	}
	return v;
}

/* A bounded positive integer argument (1..max) of program @prog. */
static inline long parse_arg(const char *prog, const char *what, const char *s, long max)
{
	lt_prog = prog;
	return lt_arg(what, s, 1, max);
}

/* The madvise() advice that frees: "free" (MADV_FREE) or "dontneed", or exit 2. */
static inline int lt_free_advice(const char *s)
{
	if (!strcmp(s, "free"))
		return MADV_FREE;
	if (!strcmp(s, "dontneed"))
		return MADV_DONTNEED;
	fprintf(stderr, "%s: advice '%s' is neither free nor dontneed\n", lt_prog, s);
	exit(2);
}

/* ------------------------------------------------------------------ files */

/* Read a whole (small) file into buf; returns length or -1. No stdio. */
static inline ssize_t lt_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return len;
}

/* Write @val to @path in one write(2); 0 when all of it was accepted. */
static inline int lt_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* A numeric sysfs value, or -1 if unreadable. */
static inline long long lt_read_ll(const char *path)
{
	char buf[64];

	if (lt_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* Value after "key" (a whole word at a line start, then blanks or ':'). */
static inline long long lt_field(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;

	while ((p = strstr(p, key))) {
		if ((p == text || p[-1] == '\n') &&
		    (p[kl] == ' ' || p[kl] == ':' || p[kl] == '\t')) {
			p += kl;
			while (*p == ' ' || *p == ':' || *p == '\t')
				p++;
			return strtoll(p, NULL, 10);
		}
		p += kl;
	}
	return -1;
}

/* One counter of /proc/vmstat, -1 if absent. */
static inline long long lt_vmstat(const char *key)
{
	static char buf[16384];

	if (lt_read_file("/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	return lt_field(buf, key);
}

/* ------------------------------------------------------------------ memory */

/*
 * @size bytes of anonymous private memory, or die; with @nohuge, kept out
 * of THP (MADV_NOHUGEPAGE), so that the kernel works on it PTE by PTE.
 */
static inline unsigned char *lt_map_anon(size_t size, bool nohuge)
{
	unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		lt_die("mmap %zu bytes", size);
	if (nohuge)
		madvise(p, size, MADV_NOHUGEPAGE);
	return p;
}

/* ------------------------------------------------------------------ statistics */

static inline int lt_cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v ascending, in place. */
static inline void lt_sort_ll(long long *v, long n)
{
	qsort(v, n, sizeof(*v), lt_cmp_ll);
}

/* Sorts @v in place; q in [0,1]: nearest-rank quantile. */
static inline long long lt_quantile(long long *v, long n, double q)
{
	long i;

	if (n <= 0)
		return 0;
	lt_sort_ll(v, n);
	i = (long)(q * (n - 1) + 0.5);
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static inline double lt_mean(const long long *v, long n)
{
	double s = 0;
	long i;

	for (i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

/* ------------------------------------------------------------------ bounded runs */

/* Set by SIGTERM/SIGINT: the test harness stops a workload early with kill;
 * the loop then finishes its current iteration, cleans up and exits 0. */
static volatile sig_atomic_t stop_requested;

static inline void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Install stop handlers and a hard alarm: a workload must never outlive its
 * duration by much, even if the harness forgets to kill it. */
static inline void setup_bounded_run(long seconds)
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

/* End of one iteration of a workload loop: count it, pause if asked. */
static inline void loop_pause(unsigned long *iters, long sleep_us)
{
	(*iters)++;
	if (sleep_us)
		usleep(sleep_us);
}

/* A workload loop's summary line, which the tests show on failure. */
static inline void loop_done(unsigned long iters, double start)
{
	printf("%s: %lu iterations in %.1f s\n", lt_prog, iters, now_s() - start);
}

#endif
