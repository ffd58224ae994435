// SPDX-License-Identifier: GPL-2.0
/*
 * munlock_race SECONDS RUNLABEL [ACTORS]
 *
 * mlock/munlock walks racing with page migration and reclaim isolation,
 * for tests/70-munlock-race.sh.  For SECONDS:
 *   main thread   mlock/munlock (whole, partial, MLOCK_ONFAULT) of a private
 *                 anonymous non-THP area and a THP area; map, mlock, munlock
 *                 and unmap (sometimes unmap while locked) a shared memfd;
 *                 verifies the data after every cycle;
 *   migrate thr.  move_pages() of the anonymous area: alternately to every
 *                 online node (real migrations with >= 2 nodes, e.g. booted
 *                 with numa=fake=2; with one node move_pages only does its
 *                 lru_cache_disable()/lru_add_drain_all() part);
 *   compact thr.  /proc/sys/vm/compact_memory every 20 ms: compaction
 *                 isolates and migrates (also mlocked) pages under the walks;
 *   child proc.   maps the same memfd and loops: touch, MADV_COLD,
 *                 MADV_PAGEOUT (isolates the folios and runs them through
 *                 shrink_folio_list: reclaim isolation of pages the main
 *                 thread is mlocking/munlocking), and now and then mlocks /
 *                 munlocks its own mapping (mlock_count shared across mms).
 * Then everything stops (the loop ends with every area munlocked), the
 * pages still PG_mlocked are counted, every area is mlocked and munlocked
 * once more with nothing racing, and the counters are compared with the
 * start (all CPUs drained, vmstat folded):
 *   RESULT race run=R stage=unlocked <delta as munlock_exact> ...
 *   RESULT race run=R stage=freed    <delta> ...
 *   RESULT race run=R pg_mlocked_racing anon=N thp=N shm=N  (pages of each
 *          area PG_mlocked right after the racing phase, /proc/kpageflags;
 *          information: see the comment in main())
 *   RESULT race run=R pg_mlocked anon=N thp=N shm=N  (the same at stage
 *          "unlocked", after the quiescent cycle)
 *   RESULT race run=R iters=.. migrate_calls=.. on_target=.. compactions=..
 *          pageouts=.. child_mlocks=.. nodes=N  (on_target: pages move_pages
 *          reported on the requested node; real migrations are the
 *          pgmigrate_success delta of the stage lines)
 * The test requires ident=ok, Mlocked/nr_mlock deltas 0 at both stages and
 * an Unevictable delta 0 once freed.
 * ACTORS (default "mcp") selects the racers: m = migrate thread, c = compact
 * thread, p = the child process; "-" none (the main loop alone).
 * The last line also gives, per kind of main-loop cycle (0..3), the number
 * of cycles and the longest one in ms (max0..max3): a cycle that stalls
 * shows up there.
 * Exit status: 0 ok, 1 failure (syscall, data corruption), 2 usage.
 */
#include "munlock_util.h"
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif

#define MB (1UL << 20)
#define PG MU_PAGE
#define ANON_LEN (8 * MB)
#define THP_LEN (4 * MB)
#define SHM_LEN (4 * MB)

static volatile int stop;
static unsigned char *anon, *thp;
static int shm_fd;
static int nodes[8], nnodes;
static unsigned long migrate_calls, on_target, compactions;

static void read_nodes(void)
{
	char buf[64];
	int a, b;

	nnodes = 0;
	if (lt_read_file("/sys/devices/system/node/online", buf, sizeof(buf)) > 0) {
		char *p = buf;

		while (*p && nnodes < 8) {
			if (sscanf(p, "%d-%d", &a, &b) == 2) {
				for (; a <= b && nnodes < 8; a++)
					nodes[nnodes++] = a;
			} else if (sscanf(p, "%d", &a) == 1) {
				nodes[nnodes++] = a;
			}
			p = strchr(p, ',');
			if (!p)
				break;
			p++;
		}
	}
	if (!nnodes)
		nodes[nnodes++] = 0;
}

static void *migrate_thread(void *arg)
{
	static void *pages[ANON_LEN / PG];
	static int tnode[ANON_LEN / PG], status[ANON_LEN / PG];
	unsigned long n = ANON_LEN / PG, i, round = 0;

	(void)arg;
	for (i = 0; i < n; i++)
		pages[i] = anon + i * PG;
	while (!stop) {
		int node = nodes[round++ % nnodes];
		long r;

		for (i = 0; i < n; i++) {
			tnode[i] = node;
			status[i] = -1;
		}
		/* a quarter of the area per call, rotating */
		r = syscall(SYS_move_pages, 0, n / 4, pages + (round % 4) * (n / 4),
			    tnode, status, MPOL_MF_MOVE);
		if (r < 0 && errno != ENOMEM && errno != EBUSY && errno != EAGAIN)
			lt_die("move_pages");
		migrate_calls++;
		if (r >= 0)
			for (i = 0; i < n / 4; i++)
				if (status[i] == node)
					on_target++;
		usleep(2000);
	}
	return NULL;
}

static void *compact_thread(void *arg)
{
	(void)arg;
	while (!stop) {
		if (lt_write_file("/proc/sys/vm/compact_memory", "1"))
			lt_die("write compact_memory");
		compactions++;
		usleep(20000);
	}
	return NULL;
}

static void shm_touch(unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += PG)
		p[i] = (unsigned char)(0x5a ^ (i / PG));
}

static void shm_check(const unsigned char *p, size_t len, const char *who)
{
	size_t i;

	for (i = 0; i < len; i += PG)
		if (p[i] != (unsigned char)(0x5a ^ (i / PG)))
			lt_die("%s: shared page %zu corrupted", who, i / PG);
}

/* The child: reclaim isolation of the shared folios, and its own mlocks. */
static void child_main(int fd_out)
{
	unsigned long it = 0, pageouts = 0, mlocks = 0;
	unsigned char *m;

	m = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
	if (m == MAP_FAILED)
		lt_die("child mmap");
	while (!stop) {
		shm_check(m, SHM_LEN, "child");
		if (it % 4 == 1)
			madvise(m, SHM_LEN, MADV_COLD);
		if (madvise(m, SHM_LEN, MADV_PAGEOUT) == 0)
			pageouts++;
		if (it % 3 == 2) {
			if (mlock(m, SHM_LEN))
				lt_die("child mlock");
			shm_check(m, SHM_LEN, "child");
			if (munlock(m + (it % 2) * (SHM_LEN / 2), SHM_LEN / 2))
				lt_die("child munlock");
			if (munlock(m, SHM_LEN))
				lt_die("child munlock");
			mlocks++;
		}
		it++;
	}
	munmap(m, SHM_LEN);
	dprintf(fd_out, "child_iters=%lu pageouts=%lu child_mlocks=%lu", it, pageouts, mlocks);
	_exit(0);
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void xmlock(void *p, size_t len)
{
	if (mlock(p, len))
		lt_die("mlock %p+%zu", p, len);
}

static void xmunlock(void *p, size_t len)
{
	if (munlock(p, len))
		lt_die("munlock %p+%zu", p, len);
}

/*
 * "WHAT anon=N thp=N shm=N [anon_pages=I,..]": pages of each area that are
 * PG_mlocked (kpageflags), and the page indexes of the first anonymous ones
 * (which of the main loop's ranges they lie in).  The memfd's pages are
 * mapped by nobody at this point, so they are mapped (unlocked) just to look
 * at them.
 */
static void pg_mlocked(char *buf, size_t size, const char *what)
{
	unsigned char *m = mmap(NULL, SHM_LEN, PROT_READ, MAP_SHARED | MAP_POPULATE, shm_fd, 0);
	unsigned long idx[4];	/* the first few are enough to place them */
	const int nidx = sizeof(idx) / sizeof(idx[0]);
	long na;
	int n, i;

	if (m == MAP_FAILED)
		lt_die("mmap memfd");
	na = mu_count_mlocked(anon, ANON_LEN, idx, nidx);
	n = snprintf(buf, size, "%s anon=%ld thp=%ld shm=%ld", what, na,
		     mu_count_mlocked(thp, THP_LEN, NULL, 0),
		     mu_count_mlocked(m, SHM_LEN, NULL, 0));
	for (i = 0; i < na && i < nidx; i++)
		n += snprintf(buf + n, size - n, "%s%lu", i ? "," : " anon_pages=", idx[i]);
	munmap(m, SHM_LEN);
}

/* mlock + munlock of the three areas, nothing racing. */
static void quiescent_cycle(void)
{
	unsigned char *m = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);

	if (m == MAP_FAILED)
		lt_die("mmap memfd");
	xmlock(anon, ANON_LEN);
	xmunlock(anon, ANON_LEN);
	xmlock(thp, THP_LEN);
	xmunlock(thp, THP_LEN);
	xmlock(m, SHM_LEN);
	shm_check(m, SHM_LEN, "parent");
	xmunlock(m, SHM_LEN);
	munmap(m, SHM_LEN);
}

int main(int argc, char **argv)
{
	struct mu_snap s0, s1, s2;
	pthread_t tm = 0, tc = 0;
	char line[2048], cbuf[256] = "", mbuf[128], mbuf0[128];
	unsigned long iters = 0, kind_n[4] = { 0 };
	double kind_max[4] = { 0 };
	const char *actors = argc > 3 ? argv[3] : "mcp";
	int pfd[2], st = 0;
	double deadline;
	pid_t child;
	long secs;

	lt_prog = "munlock_race";
	if (argc < 3 || argc > 4 || (secs = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: munlock_race SECONDS RUNLABEL [ACTORS]\n");
		return 2;
	}
	read_nodes();
	mu_drain_init();

	anon = mu_map_aligned(ANON_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (mu_have_thp() && madvise(anon, ANON_LEN, MADV_NOHUGEPAGE))
		lt_die("madvise NOHUGEPAGE");
	/* The child must not share them copy-on-write: the first mlock would
	 * then COW-break every page, one TLB shootdown each (very slow under
	 * TCG while the other vCPUs are busy). */
	if (madvise(anon, ANON_LEN, MADV_DONTFORK))
		lt_die("madvise DONTFORK");
	mu_touch(anon, ANON_LEN, 1);
	thp = mu_map_aligned(THP_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	madvise(thp, THP_LEN, MADV_HUGEPAGE);
	if (madvise(thp, THP_LEN, MADV_DONTFORK))
		lt_die("madvise DONTFORK");
	mu_touch(thp, THP_LEN, 2);
	shm_fd = memfd_create("munlock_race", 0);
	if (shm_fd < 0 || ftruncate(shm_fd, SHM_LEN))
		lt_die("memfd");
	{
		unsigned char *m = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);

		if (m == MAP_FAILED)
			lt_die("mmap memfd");
		shm_touch(m, SHM_LEN);
		munmap(m, SHM_LEN);
	}
	mu_snapshot(&s0, "start");

	if (pipe(pfd))
		lt_die("pipe");
	signal(SIGTERM, on_term);
	child = -1;
	if (strchr(actors, 'p')) {
		child = fork();
		if (child < 0)
			lt_die("fork");
		if (child == 0) {
			close(pfd[0]);
			child_main(pfd[1]);
		}
	}
	close(pfd[1]);
	if ((strchr(actors, 'm') && pthread_create(&tm, NULL, migrate_thread, NULL)) ||
	    (strchr(actors, 'c') && pthread_create(&tc, NULL, compact_thread, NULL)))
		lt_die("pthread_create");

	deadline = now_s() + secs;
	while (now_s() < deadline) {
		double t0 = now_s(), dt;
		unsigned char *m;

		switch (iters % 4) {
		case 0:
			xmlock(anon, ANON_LEN);
			mu_verify(anon, ANON_LEN, 1, "anon");
			xmunlock(anon, ANON_LEN);
			break;
		case 1:
			/*
			 * Overlapping ranges, in this order: locking the
			 * other way round (mlock2 last) would merge the
			 * new range into the locked VMA before
			 * mlock_vma_pages_range() sets VM_IO, and a
			 * migration finishing in that window mlocks a page
			 * that the walk then mlocks again: the stock
			 * kernel's own double count, seen with the stock
			 * walk on the debug kernel (pages left PG_mlocked
			 * in the merged range).
			 */
			if (syscall(SYS_mlock2, anon + 5 * MB, 3 * MB, MLOCK_ONFAULT))
				lt_die("mlock2");
			xmlock(anon + MB + PG, ANON_LEN / 2);
			xmunlock(anon + 3 * MB, 2 * MB);
			mu_verify(anon, ANON_LEN, 1, "anon");
			xmunlock(anon, ANON_LEN);
			break;
		case 2:
		case 3:
			m = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
			if (m == MAP_FAILED)
				lt_die("mmap memfd");
			xmlock(m, SHM_LEN);
			shm_check(m, SHM_LEN, "parent");
			if (iters % 8 == 3) {
				munmap(m, SHM_LEN);	/* unmapped while locked */
			} else {
				xmunlock(m + SHM_LEN / 4, SHM_LEN / 2);
				xmunlock(m, SHM_LEN);
				munmap(m, SHM_LEN);
			}
			xmlock(thp, THP_LEN);
			xmunlock(thp + MB, MB);
			mu_verify(thp, THP_LEN, 2, "thp");
			xmunlock(thp, THP_LEN);
			break;
		}
		dt = now_s() - t0;
		kind_n[iters % 4]++;
		if (dt > kind_max[iters % 4])
			kind_max[iters % 4] = dt;
		iters++;
	}
	stop = 1;
	if (strchr(actors, 'm'))
		pthread_join(tm, NULL);
	if (strchr(actors, 'c'))
		pthread_join(tc, NULL);
	if (child > 0) {
		kill(child, SIGTERM);
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
			lt_die("child failed (status 0x%x)", st);
	}
	if (read(pfd[0], cbuf, sizeof(cbuf) - 1) < 0)
		cbuf[0] = 0;
	/*
	 * The loop's last munlock() of each area was its last walk: what the
	 * racing phase left PG_mlocked is counted here (after draining every
	 * CPU's batches), for information.  The kernel leaves a page PG_mlocked
	 * when a migration of it fails while the munlock walk passes: the walk
	 * skips the migration entry, and the putback (lru_add_fn()) puts the
	 * still-PG_mlocked page on the unevictable LRU with mlock_count 0.
	 * That is stock behaviour, for either walk.
	 */
	mu_drain_all();
	pg_mlocked(mbuf0, sizeof(mbuf0), "pg_mlocked_racing");
	/*
	 * Then one mlock + munlock of every area, with no racer left: it
	 * repairs such a page (mlock_count 0 -> 1 -> 0, PG_mlocked cleared)
	 * but not an over-counted one, whose mlock_count stays >= 1.  After
	 * it, every PG_mlocked must be gone.
	 */
	quiescent_cycle();
	mu_verify(anon, ANON_LEN, 1, "anon");
	mu_verify(thp, THP_LEN, 2, "thp");
	mu_snapshot(&s1, "unlocked");
	pg_mlocked(mbuf, sizeof(mbuf), "pg_mlocked");
	munmap(anon, ANON_LEN);
	munmap(thp, THP_LEN);
	close(shm_fd);
	mu_snapshot(&s2, "freed");

	mu_fmt_delta(line, sizeof(line), &s0, &s1);
	printf("RESULT race run=%s stage=unlocked %s\n", argv[2], line);
	mu_fmt_delta(line, sizeof(line), &s0, &s2);
	printf("RESULT race run=%s stage=freed %s\n", argv[2], line);
	printf("RESULT race run=%s %s\n", argv[2], mbuf0);
	printf("RESULT race run=%s %s\n", argv[2], mbuf);
	printf("RESULT race run=%s iters=%lu migrate_calls=%lu on_target=%lu compactions=%lu %s nodes=%d actors=%s",
	       argv[2], iters, migrate_calls, on_target, compactions, cbuf, nnodes, actors);
	for (st = 0; st < 4; st++)
		printf(" n%d=%lu max%d=%.0f", st, kind_n[st], st, kind_max[st] * 1000);
	printf("\n");
	return 0;
}
