// SPDX-License-Identifier: GPL-2.0
/*
 * munlock_bench - the per-page cost and the lruvec lock count of mlock()
 * and munlock() of a populated non-THP area (mmtests' timedmlock /
 * timedmunlock; Vlastimil Babka, "[RFC PATCH 0/6] Improving munlock()
 * performance for large non-THP areas", linux-mm 2013), for
 * tests/70-munlock-batching.sh and tests/bench/w-munlock-short.sh,
 * w-munlock-locks.sh.
 *
 * munlock_bench single MIB SAMPLES
 *     One populated MIB MiB area (e.g. 8), SAMPLES timed mlock + munlock
 *     cycles in the current configuration, without touching lruopt (works
 *     without it loaded),
 *     for tests/bench/w-munlock-short.sh (the A/B/C driver switches):
 *       RESULT bench=single mib=M samples=N mlock_min=.. mlock_p10=..
 *              mlock_median=.. munlock_min=.. munlock_p10=.. munlock_median=..
 *
 * munlock_bench locks MIB
 *     One run per variant with the ftrace function tracer counting, for this
 *     process only, calls of folio_lruvec_lock_irq / _irqsave / folio_lruvec_lock
 *     (every lruvec lru_lock acquisition of the mlock paths goes through one
 *     of them) during mlock() and during munlock():
 *       RESULT bench=locks variant=V op=O pages=P lock_irq=A lock_irqsave=B
 *              lock=C per512=X module_locks=M module_pages=N
 *              module_stock_walks=W
 *     (module_*: deltas of /sys/kernel/lruopt/munlock/stats during the op)
 *     Needs tracefs at /sys/kernel/tracing; without it prints
 *       RESULT bench=locks skip no-tracefs
 *
 * munlock_bench locks MIB here
 *     The same count once, in the current configuration (variant=current,
 *     lruopt untouched, works without it loaded), for
 *     tests/bench/w-munlock-locks.sh.
 *
 * The process pins itself to the last CPU.
 * Exit status: 0 ok, 1 failure, 2 usage.
 */
#include "munlock_util.h"

#define TR "/sys/kernel/tracing"

static const char *en_path = LO_MUNLOCK "/enabled";

static void set_variant(int lruopt)
{
	if (lt_write_file(en_path, lruopt ? "1" : "0"))
		lt_die("write %s", en_path);
}

static long long lo_stat(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), LO_MUNLOCK "/stats/%s", name);
	return lt_read_ll(path);
}

static unsigned char *populate(size_t len)
{
	unsigned char *a = mu_map_aligned(len, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1);

	if (mu_have_thp() && madvise(a, len, MADV_NOHUGEPAGE))
		lt_die("madvise(MADV_NOHUGEPAGE)");
	mu_touch(a, len, 3);
	mu_drain_all();
	return a;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Many short samples: with the emulator's host loaded, a long (60 ms) munlock
 * is almost always stretched by host preemption, a 2 ms one often is not, so
 * the low percentiles of many short samples estimate the per-page cost far
 * better.
 */
static double pct(double *v, int n, int p)
{
	return v[(n - 1) * p / 100];
}

/* SAMPLES timed mlock+munlock cycles of one MIB area, in whatever state the
 * caller set up (also without lruopt loaded): for the A/B/C driver. */
static int mode_single(long mib, int samples)
{
	size_t len = (size_t)mib << 20, pages = len / MU_PAGE;
	double *ml = calloc(samples, sizeof(double)), *mu = calloc(samples, sizeof(double));
	unsigned char *a;
	int i;

	if (!ml || !mu)
		lt_die("calloc");
	a = populate(len);
	for (i = 0; i < samples; i++) {
		double t0 = now_s(), t1, t2;

		if (mlock(a, len))
			lt_die("mlock");
		t1 = now_s();
		if (munlock(a, len))
			lt_die("munlock");
		t2 = now_s();
		ml[i] = (t1 - t0) * 1e9 / pages;
		mu[i] = (t2 - t1) * 1e9 / pages;
	}
	mu_verify(a, len, 3, "bench");
	munmap(a, len);
	qsort(ml, samples, sizeof(double), cmp_double);
	qsort(mu, samples, sizeof(double), cmp_double);
	printf("RESULT bench=single mib=%ld samples=%d mlock_min=%.1f mlock_p10=%.1f mlock_median=%.1f munlock_min=%.1f munlock_p10=%.1f munlock_median=%.1f\n",
	       mib, samples, ml[0], pct(ml, samples, 10), pct(ml, samples, 50), mu[0],
	       pct(mu, samples, 10), pct(mu, samples, 50));
	return 0;
}

/* ------------------------------------------------------------ ftrace count */

static int tr_write(const char *file, const char *val)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TR "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "munlock_bench: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = write(fd, val, strlen(val));
	if (n != (ssize_t)strlen(val)) {
		fprintf(stderr, "munlock_bench: write '%s' to %s: %zd, %s\n", val, path, n,
			n < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void tr_clear(void)
{
	int fd = open(TR "/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		lt_die("truncate trace");
	close(fd);
}

/* Count trace lines naming each function (the traced ones only). */
static char trbuf[16 << 20];

static void tr_count(long long *irq, long long *irqsave, long long *plain)
{
	char *line, *nl;

	*irq = *irqsave = *plain = 0;
	if (lt_read_file(TR "/trace", trbuf, sizeof(trbuf)) < 0)
		lt_die("read trace");
	for (line = trbuf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line) - 1;
		else
			*nl = 0;
		if (line[0] == '#')
			continue;
		if (strstr(line, "folio_lruvec_lock_irqsave"))
			(*irqsave)++;
		else if (strstr(line, "folio_lruvec_lock_irq"))
			(*irq)++;
		else if (strstr(line, "folio_lruvec_lock"))
			(*plain)++;
		if (!nl[1])
			break;
	}
}

static int mode_locks(long mib, bool here)
{
	size_t len = (size_t)mib << 20, pages = len / MU_PAGE;
	static const char *const name[2] = { "stock", "lruopt" };
	char pid[32];
	int v, op;

	if (access(TR "/set_ftrace_filter", W_OK)) {
		printf("RESULT bench=locks skip no-tracefs\n");
		return 0;
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (tr_write("tracing_on", "0") || tr_write("current_tracer", "nop") ||
	    tr_write("set_ftrace_filter", "folio_lruvec_lock_irq") ||
	    lt_write_file(TR "/set_ftrace_filter", "folio_lruvec_lock_irqsave") ||
	    lt_write_file(TR "/set_ftrace_filter", "folio_lruvec_lock") ||
	    tr_write("set_ftrace_pid", pid) || tr_write("buffer_size_kb", "4096") ||
	    tr_write("current_tracer", "function"))
		lt_die("configure ftrace");
	for (v = 0; v < (here ? 1 : 2); v++) {
		unsigned char *a;

		if (!here)
			set_variant(v);
		a = populate(len);
		for (op = 0; op < 2; op++) {
			long long irq, irqsave, plain, l0, p0, w0;
			int rc;

			tr_clear();
			l0 = lo_stat("lock_acquisitions");
			p0 = lo_stat("pages");
			w0 = lo_stat("stock_walks");
			tr_write("tracing_on", "1");
			rc = op ? munlock(a, len) : mlock(a, len);
			tr_write("tracing_on", "0");
			if (rc)
				lt_die(op ? "munlock" : "mlock");
			tr_count(&irq, &irqsave, &plain);
			printf("RESULT bench=locks variant=%s op=%s pages=%zu lock_irq=%lld lock_irqsave=%lld lock=%lld per512=%.2f module_locks=%lld module_pages=%lld module_stock_walks=%lld\n",
			       here ? "current" : name[v], op ? "munlock" : "mlock", pages, irq, irqsave, plain,
			       (double)(irq + irqsave + plain) * 512 / pages,
			       lo_stat("lock_acquisitions") - l0, lo_stat("pages") - p0,
			       lo_stat("stock_walks") - w0);
			fflush(stdout);
		}
		munmap(a, len);
	}
	tr_write("current_tracer", "nop");
	tr_write("set_ftrace_filter", "");
	tr_write("set_ftrace_pid", "");
	tr_clear();
	if (!here)
		set_variant(1);
	return 0;
}

int main(int argc, char **argv)
{
	lt_prog = "munlock_bench";
	if (argc >= 2 && argc <= 4)
		lt_pin(lt_ncpus() - 1);
	if (argc == 4 && !strcmp(argv[1], "single"))
		return mode_single(strtol(argv[2], NULL, 10), (int)strtol(argv[3], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "locks"))
		return mode_locks(strtol(argv[2], NULL, 10), false);
	if (argc == 4 && !strcmp(argv[1], "locks") && !strcmp(argv[3], "here"))
		return mode_locks(strtol(argv[2], NULL, 10), true);
	fprintf(stderr, "usage: munlock_bench single MIB SAMPLES | locks MIB [here]\n");
	return 2;
}
