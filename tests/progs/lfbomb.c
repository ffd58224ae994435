// SPDX-License-Identifier: GPL-2.0
/*
 * lfbomb - the MADV_FREE bomb of the seed thread "mm: throttle MADV_FREE"
 * (Minchan Kim, linux-mm, 2015), and the loops that show what lazyfree
 * costs without pressure, for tests/bench/w-lazyfree-*.sh.
 *
 *   lfbomb bomb N MIB PASSES free|dontneed LEAVE_MIB [SWAPDEV]
 *	First takes all of MemAvailable but LEAVE_MIB MiB into an mlocked
 *	region of its own (so that a guest of any size is short of memory at
 *	the same working set), then, with SWAPDEV, switches swap on there
 *	(swapon(2); after the hold, so that taking it only drops clean page
 *	cache and swaps nothing out: every run starts from the same state;
 *	the caller switches it off again), then forks N processes that each map MIB MiB
 *	(no THP) and PASSES times write every page (a memset plus a per-page
 *	stamp: zram stores a page of one repeated word without compressing
 *	it, which is not what real data does) and madvise() the whole region
 *	with MADV_FREE or MADV_DONTNEED.  Prints
 *	  elapsed_ms=E pswpin=I pswpout=O pglazyfree=L pglazyfreed=D held_mib=H
 *	E: from the first fork to the last exit; I, O, L, D: the growth of
 *	those /proc/vmstat counters over the same span.
 *   lfbomb reuse MIB ITERS
 *	No pressure: writes MIB MiB once, then ITERS times MADV_FREE of the
 *	whole region followed by a write of every page (stock MADV_FREE keeps
 *	the pages: the write needs no fault).  Prints
 *	  iter_median_ns=T iter_min_ns=M faults_per_iter=F
 *	F: minor faults per iteration (0 when every page was reused).
 *   lfbomb call free|dontneed PAGES ITERS
 *	The cost of the call itself: ITERS times, write the first page of a
 *	PAGES-page region, then time one madvise() of the region.  Prints
 *	  call_median_ns=T call_min_ns=M others_busy_pct=B cpu=C
 *	B: the other CPUs' busy time during the calls, in percent of one
 *	CPU (/proc/stat); C: the CPU the calls ran on.
 *   reuse and call stay on the CPU they start on, call runs without ASLR
 *   (the comment above reuse() says why).
 */
#include "common.h"
#include <ctype.h>
#include <sys/resource.h>
#include <sys/swap.h>
#include <sys/wait.h>

#define PAGE 4096UL

/*
 * Write every page once, in order: a memset of the page, then a stamp that
 * makes each page distinct.  One sweep: a second sweep would swap back in
 * what reclaim took since the first.
 */
static void write_all(unsigned char *p, size_t size, int pass)
{
	size_t off;

	for (off = 0; off < size; off += PAGE) {
		memset(p + off, 0x40 + (pass & 0x3f), PAGE);
		*(unsigned long *)(p + off) = off ^ ((unsigned long)pass << 48);
	}
}

static long long meminfo_kb(const char *key)
{
	static char buf[8192];

	if (lt_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	return lt_field(buf, key);
}

static int bomb(int argc, char **argv)
{
	long n, mib, passes, leave, held = 0, i;
	long long in0, out0, lf0, lfd0, avail;
	long long t0, t1;
	int advice, status, failed = 0;

	if (argc != 7 && argc != 8) {
		fprintf(stderr, "usage: lfbomb bomb N MIB PASSES free|dontneed LEAVE_MIB [SWAPDEV]\n");
		return 2;
	}
	n = lt_arg("N", argv[2], 1, 64);
	mib = lt_arg("MIB", argv[3], 1, 65536);
	passes = lt_arg("PASSES", argv[4], 1, 1000);
	advice = lt_free_advice(argv[5]);
	leave = lt_arg("LEAVE_MIB", argv[6], 0, 1 << 20);

	avail = meminfo_kb("MemAvailable");
	if (avail < 0)
		lt_die("no MemAvailable in /proc/meminfo");
	if (avail / 1024 > leave) {
		size_t size = (size_t)(avail / 1024 - leave) << 20;
		unsigned char *h = lt_map_anon(size, true);

		if (mlock(h, size))
			lt_die("mlock %zu MiB", size >> 20);
		held = size >> 20;
	}
	if (argc == 8 && swapon(argv[7], 0))
		lt_die("swapon %s", argv[7]);

	in0 = lt_vmstat("pswpin");
	out0 = lt_vmstat("pswpout");
	lf0 = lt_vmstat("pglazyfree");
	lfd0 = lt_vmstat("pglazyfreed");
	t0 = lt_now_ns();
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			lt_die("fork");
		if (pid == 0) {
			size_t size = (size_t)mib << 20;
			unsigned char *p;
			long pass;

			munlockall();
			p = lt_map_anon(size, true);
			for (pass = 0; pass < passes; pass++) {
				write_all(p, size, pass);
				if (madvise(p, size, advice))
					lt_die("madvise");
			}
			_exit(0);
		}
	}
	for (i = 0; i < n; i++) {
		if (wait(&status) < 0)
			lt_die("wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	t1 = lt_now_ns();
	if (failed) {
		fprintf(stderr, "lfbomb: %d of %ld workers failed (killed by the OOM killer?)\n",
			failed, n);
		return 1;
	}
	printf("elapsed_ms=%lld pswpin=%lld pswpout=%lld pglazyfree=%lld pglazyfreed=%lld held_mib=%ld\n",
	       (t1 - t0) / 1000000, lt_vmstat("pswpin") - in0,
	       lt_vmstat("pswpout") - out0, lt_vmstat("pglazyfree") - lf0,
	       lt_vmstat("pglazyfreed") - lfd0, held);
	return 0;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/*
 * reuse and call stay on the CPU they start on (lt_stay()).  A madvise()
 * call ends in a TLB flush, which sends an IPI to every other CPU in the
 * mm's cpumask (under single-threaded TCG it waits for the other vCPU's
 * turn): a process the scheduler never moves keeps that set to its own
 * CPU, one random factor less between configurations.  call also runs
 * without address-space randomisation (lt_no_aslr()), for one layout in
 * every configuration.
 */

static int reuse(int argc, char **argv)
{
	long mib, iters, i, f0;
	size_t size;
	unsigned char *p;
	long long *t, med;

	if (argc != 4) {
		fprintf(stderr, "usage: lfbomb reuse MIB ITERS\n");
		return 2;
	}
	mib = lt_arg("MIB", argv[2], 1, 4096);
	iters = lt_arg("ITERS", argv[3], 1, 100000);
	size = (size_t)mib << 20;
	t = calloc(iters, sizeof(*t));
	if (!t)
		lt_die("calloc");
	lt_stay();
	p = lt_map_anon(size, true);
	write_all(p, size, 0);
	f0 = minflt();
	for (i = 0; i < iters; i++) {
		long long s = lt_now_ns();

		if (madvise(p, size, MADV_FREE))
			lt_die("madvise");
		write_all(p, size, (int)i + 1);
		t[i] = lt_now_ns() - s;
	}
	f0 = minflt() - f0;
	med = lt_quantile(t, iters, 0.5);	/* sorts t */
	printf("iter_median_ns=%lld iter_min_ns=%lld faults_per_iter=%ld\n",
	       med, t[0], f0 / iters);
	return 0;
}

/*
 * Busy time (USER_HZ ticks: user, nice, system, irq, softirq) of every CPU
 * but @self, from /proc/stat: under single-threaded TCG a second busy
 * vCPU halves this one's speed, whatever the configuration.
 */
static long long others_busy(int self)
{
	long long u, n, sy, id, io, irq, sirq, sum = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");
	int cpu;

	if (!f)
		lt_die("/proc/stat");
	while (fgets(line, sizeof(line), f))
		/* "cpuN ...", not the "cpu  ..." line of their sum */
		if (!strncmp(line, "cpu", 3) && isdigit((unsigned char)line[3]) &&
		    sscanf(line, "cpu%d %lld %lld %lld %lld %lld %lld %lld", &cpu,
			   &u, &n, &sy, &id, &io, &irq, &sirq) == 8 && cpu != self)
			sum += u + n + sy + irq + sirq;
	fclose(f);
	return sum;
}

static int call(int argc, char **argv)
{
	long pages, iters, i;
	unsigned char *p;
	long long *t, med, busy, t0;
	int advice;

	if (argc != 5) {
		fprintf(stderr, "usage: lfbomb call free|dontneed PAGES ITERS\n");
		return 2;
	}
	lt_no_aslr(argv);
	advice = lt_free_advice(argv[2]);
	pages = lt_arg("PAGES", argv[3], 1, 1 << 20);
	iters = lt_arg("ITERS", argv[4], 1, 10000000);
	t = calloc(iters, sizeof(*t));
	if (!t)
		lt_die("calloc");
	lt_stay();
	p = lt_map_anon(pages * PAGE, true);
	busy = others_busy(sched_getcpu());
	t0 = lt_now_ns();
	for (i = 0; i < iters; i++) {
		long long s;

		p[0] = (unsigned char)i;
		s = lt_now_ns();
		if (madvise(p, pages * PAGE, advice))
			lt_die("madvise");
		t[i] = lt_now_ns() - s;
	}
	t0 = lt_now_ns() - t0;
	busy = others_busy(sched_getcpu()) - busy;
	med = lt_quantile(t, iters, 0.5);	/* sorts t */
	printf("call_median_ns=%lld call_min_ns=%lld others_busy_pct=%lld cpu=%d\n",
	       med, t[0], t0 > 0 ? busy * 10000000LL * 100 / t0 : 0, sched_getcpu());
	return 0;
}

int main(int argc, char **argv)
{
	lt_prog = "lfbomb";
	if (argc >= 2 && !strcmp(argv[1], "bomb"))
		return bomb(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "reuse"))
		return reuse(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "call"))
		return call(argc, argv);
	fprintf(stderr, "usage: lfbomb bomb|reuse|call ... (see the source)\n");
	return 2;
}
