// SPDX-License-Identifier: GPL-2.0
/*
 * munlock_bench - timedmlock/timedmunlock (mmtests, seeds/001) A/B benchmark
 * of the lruopt munlock feature, for tests/bench/munlock-bench.sh and
 * tests/70-munlock-batching.sh.
 *
 * munlock_bench ab MIB RUNS [CYCLES]
 *     RUNS times: mmap MIB MiB anonymous, MADV_NOHUGEPAGE, write every page,
 *     drain all CPUs' LRU batches; then CYCLES times (default 4) a pair of
 *     timed mlock() of the populated area (timedmlock) + munlock() of it
 *     (timedmunlock), once with the stock walk and once with lruopt's
 *     (/sys/kernel/lruopt/munlock/enabled toggled), in ABBA order.  The
 *     emulator's host is shared and its noise only ever adds time, so
 *     besides medians the minimum and the median of the per-pair ratios are
 *     given.  Per pair (ns per page):
 *       RESULT bench=ab run=I cycle=C pages=P stock_mlock=.. stock_munlock=..
 *              lruopt_mlock=.. lruopt_munlock=.. locks_per_512=L batch=B
 *     (locks_per_512: lruopt's stats/lock_acquisitions during its munlock),
 *     then per variant and op, and the ratios (> 1: lruopt is faster):
 *       RESULT bench=ab-summary variant=V op=mlock|munlock runs=N
 *              min=.. median=.. max=.. batch=B
 *       RESULT bench=ab-ratio op=munlock|mlock stock_over_lruopt=R(medians)
 *              min_ratio=M paired_median=Q batch=B
 *
 * munlock_bench abfine MIB SAMPLES
 *     One populated MIB MiB area (e.g. 8), SAMPLES pairs of timed mlock +
 *     munlock, stock and lruopt alternating (ABBA).  Short operations are
 *     far less often stretched by the (shared) host than 60 ms ones, so the
 *     low percentiles of many samples are the precise per-page figure:
 *       RESULT bench=abfine-summary variant=V op=O mib=M samples=N min=..
 *              p10=.. median=.. batch=B          (ns per page)
 *       RESULT bench=abfine-ratio op=O min_ratio=.. p10_ratio=..
 *              median_ratio=.. batch=B locks_per_512=L  (stock / lruopt;
 *              L: lruopt's lock_acquisitions per 512 pages in one munlock)
 *
 * munlock_bench single MIB SAMPLES
 *     Like abfine but without touching lruopt (works without it loaded):
 *     SAMPLES timed mlock + munlock cycles in the current configuration,
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

	if (madvise(a, len, MADV_NOHUGEPAGE))
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

static void summary(const char *variant, const char *op, double *v, int n, int batch,
		    double *median)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	printf("RESULT bench=ab-summary variant=%s op=%s runs=%d min=%.1f median=%.1f max=%.1f batch=%d\n",
	       variant, op, n, v[0], *median, v[n - 1], batch);
}

static double median_of(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One timed mlock + munlock of the whole area with variant v. */
static void timed_cycle(unsigned char *a, size_t len, int v, double *tml, double *tmu,
			double *locks)
{
	size_t pages = len / MU_PAGE;
	long long l1;
	double t0, t1, t2;

	set_variant(v);
	t0 = now_s();
	if (mlock(a, len))
		lt_die("mlock");
	t1 = now_s();
	l1 = lo_stat("lock_acquisitions");
	if (munlock(a, len))
		lt_die("munlock");
	t2 = now_s();
	*locks = (double)(lo_stat("lock_acquisitions") - l1) * 512 / pages;
	*tml = (t1 - t0) * 1e9 / pages;
	*tmu = (t2 - t1) * 1e9 / pages;
}

static int mode_ab(long mib, int runs, int cycles)
{
	size_t len = (size_t)mib << 20, pages = len / MU_PAGE;
	int nmax = runs * cycles, r, c, k, n[2] = { 0, 0 }, np = 0;
	double *ml[2], *mu[2], *pml, *pmu, med[2][2], mn[2][2];
	int batch = (int)lt_read_ll(LO_MUNLOCK "/batch");
	static const char *const name[2] = { "stock", "lruopt" };

	for (k = 0; k < 2; k++) {
		ml[k] = calloc(nmax, sizeof(double));
		mu[k] = calloc(nmax, sizeof(double));
		if (!ml[k] || !mu[k])
			lt_die("calloc");
	}
	pml = calloc(nmax, sizeof(double));
	pmu = calloc(nmax, sizeof(double));
	if (!pml || !pmu)
		lt_die("calloc");
	for (r = 0; r < runs; r++) {
		unsigned char *a = populate(len);

		for (c = 0; c < cycles; c++) {
			double tml[2], tmu[2], lk[2];
			int o;

			/* ABBA order over consecutive pairs */
			for (o = 0; o < 2; o++) {
				int v = ((r * cycles + c) % 2) ? 1 - o : o;

				timed_cycle(a, len, v, &tml[v], &tmu[v], &lk[v]);
				ml[v][n[v]] = tml[v];
				mu[v][n[v]] = tmu[v];
				n[v]++;
			}
			pml[np] = tml[0] / tml[1];
			pmu[np] = tmu[0] / tmu[1];
			np++;
			printf("RESULT bench=ab run=%d cycle=%d pages=%zu stock_mlock=%.1f stock_munlock=%.1f lruopt_mlock=%.1f lruopt_munlock=%.1f locks_per_512=%.2f batch=%d\n",
			       r, c, pages, tml[0], tmu[0], tml[1], tmu[1], lk[1], batch);
			fflush(stdout);
		}
		mu_verify(a, len, 3, "bench");
		munmap(a, len);
	}
	for (k = 0; k < 2; k++) {
		summary(name[k], "mlock", ml[k], n[k], batch, &med[k][0]);
		mn[k][0] = ml[k][0];
		summary(name[k], "munlock", mu[k], n[k], batch, &med[k][1]);
		mn[k][1] = mu[k][0];
	}
	printf("RESULT bench=ab-ratio op=munlock stock_over_lruopt=%.2f min_ratio=%.2f paired_median=%.2f batch=%d\n",
	       med[0][1] / med[1][1], mn[0][1] / mn[1][1], median_of(pmu, np), batch);
	printf("RESULT bench=ab-ratio op=mlock stock_over_lruopt=%.2f min_ratio=%.2f paired_median=%.2f batch=%d\n",
	       med[0][0] / med[1][0], mn[0][0] / mn[1][0], median_of(pml, np), batch);
	set_variant(1);
	return 0;
}

/*
 * Many short samples: with the emulator's host loaded, a long (60 ms) munlock
 * is almost always stretched by host preemption, a 2 ms one often is not, so
 * the low percentiles of many short samples estimate the per-page cost far
 * better.  Same work per page as the 256 MiB runs.
 */
static double pct(double *v, int n, int p)
{
	return v[(n - 1) * p / 100];
}

static int mode_abfine(long mib, int samples)
{
	size_t len = (size_t)mib << 20, pages = len / MU_PAGE;
	double *ml[2], *mu[2], q[2][2][3];
	int batch = (int)lt_read_ll(LO_MUNLOCK "/batch");
	static const char *const name[2] = { "stock", "lruopt" };
	static const int pcts[3] = { 0, 10, 50 };
	int s, k, j, n[2] = { 0, 0 };
	double locks = -1;
	unsigned char *a;

	for (k = 0; k < 2; k++) {
		ml[k] = calloc(samples, sizeof(double));
		mu[k] = calloc(samples, sizeof(double));
		if (!ml[k] || !mu[k])
			lt_die("calloc");
	}
	a = populate(len);
	for (s = 0; s < samples; s++) {
		int o;

		for (o = 0; o < 2; o++) {
			int v = (s % 2) ? 1 - o : o;
			double lk;

			timed_cycle(a, len, v, &ml[v][n[v]], &mu[v][n[v]], &lk);
			if (v && locks < 0)
				locks = lk;
			n[v]++;
		}
	}
	mu_verify(a, len, 3, "bench");
	munmap(a, len);
	for (k = 0; k < 2; k++) {
		qsort(ml[k], n[k], sizeof(double), cmp_double);
		qsort(mu[k], n[k], sizeof(double), cmp_double);
		for (j = 0; j < 3; j++) {
			q[k][0][j] = pct(ml[k], n[k], pcts[j]);
			q[k][1][j] = pct(mu[k], n[k], pcts[j]);
		}
		for (j = 0; j < 2; j++)
			printf("RESULT bench=abfine-summary variant=%s op=%s mib=%ld samples=%d min=%.1f p10=%.1f median=%.1f batch=%d\n",
			       name[k], j ? "munlock" : "mlock", mib, n[k], q[k][j][0], q[k][j][1],
			       q[k][j][2], batch);
	}
	for (j = 0; j < 2; j++)
		printf("RESULT bench=abfine-ratio op=%s min_ratio=%.3f p10_ratio=%.3f median_ratio=%.3f batch=%d locks_per_512=%.2f\n",
		       j ? "munlock" : "mlock", q[0][j][0] / q[1][j][0], q[0][j][1] / q[1][j][1],
		       q[0][j][2] / q[1][j][2], batch, locks);
	(void)pages;
	set_variant(1);
	return 0;
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

static int mode_locks(long mib)
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
	for (v = 0; v < 2; v++) {
		unsigned char *a;

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
			       name[v], op ? "munlock" : "mlock", pages, irq, irqsave, plain,
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
	set_variant(1);
	return 0;
}

int main(int argc, char **argv)
{
	lt_prog = "munlock_bench";
	if (argc >= 2 && argc <= 5)
		lt_pin(lt_ncpus() - 1);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "ab"))
		return mode_ab(strtol(argv[2], NULL, 10), (int)strtol(argv[3], NULL, 10),
			       argc == 5 ? (int)strtol(argv[4], NULL, 10) : 4);
	if (argc == 4 && !strcmp(argv[1], "abfine"))
		return mode_abfine(strtol(argv[2], NULL, 10), (int)strtol(argv[3], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "single"))
		return mode_single(strtol(argv[2], NULL, 10), (int)strtol(argv[3], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "locks"))
		return mode_locks(strtol(argv[2], NULL, 10));
	fprintf(stderr, "usage: munlock_bench ab MIB RUNS [CYCLES] | abfine MIB SAMPLES | single MIB SAMPLES | locks MIB\n");
	return 2;
}
