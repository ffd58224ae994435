// SPDX-License-Identifier: GPL-2.0
/*
 * munlock_exact SCENARIO RUNLABEL
 *
 * Runs one deterministic mlock/munlock sequence and prints, at every
 * checkpoint, the change since the start of the scenario of:
 *   Mlocked, Unevictable (/proc/meminfo, kB), nr_mlock per zone
 *   (/proc/zoneinfo, pages) and the unevictable_pgs_* events (/proc/vmstat)
 * after draining every CPU's LRU/mlock batches and folding the per-cpu vmstat
 * differentials (/proc/sys/vm/stat_refresh).  tests/70-munlock-exact.sh runs
 * each scenario with /sys/kernel/lruopt/munlock/enabled = 0 and = 1 in the
 * same boot and requires identical output.
 *
 * Output, one line per checkpoint:
 *   RESULT exact scenario=S run=R cp=N label=L mlocked_kb=.. unevictable_kb=..
 *     nr_mlock=ZONE:..,.. culled=.. scanned=.. rescued=.. mlocked=..
 *     munlocked=.. cleared=.. stranded=.. ident=ok|bad | anonhuge_kb=..
 *     lo_pages=.. lo_batches=.. lo_locks=.. lo_fallbacks=.. lo_stock_walks=..
 * Everything before " | " must match between the two runs; after it is
 * information (lo_* are the deltas of /sys/kernel/lruopt/munlock/stats/).
 * ident checks, for this checkpoint, that the events balance the page
 * counter: mlocked - munlocked - stranded - cleared == sum(nr_mlock) and
 * Mlocked == 4 * sum(nr_mlock).
 * Last line: "RESULT exact scenario=S run=R done checkpoints=N" (or skip).
 *
 * The process pins itself to one CPU (children inherit it), disables ASLR
 * (re-exec) so every run has the same layout, and performs no stdio/malloc
 * until the sequence is over (mlockall(MCL_FUTURE) would lock them).
 *
 * Scenarios: anon onfault mlockall thp fork-cow fork-cow-thp shared-tmpfs
 *            shared-memfd shared-anon offlru cold mthp numa memcg
 * (mthp: 6.12's 64 KiB anonymous mTHP, switched on for the run; numa: needs
 * two nodes, e.g. numa=fake=2; memcg: needs MUN_CG_A and MUN_CG_B, two
 * fresh memory cgroup directories; all print "skip" where unavailable)
 * Exit status: 0 ok, 1 a syscall failed / data corrupted, 2 usage.
 */
#include "munlock_util.h"
#include <sys/wait.h>

#define MAX_CP 40

static struct mu_snap cps[MAX_CP];
static int ncp;
static const char *scenario, *runlabel;
/* Where a scenario's premise first broke (see offlru_premise()). */
static const char *premise_broken;
static long premise_lru;

/* Checkpoint: drain all CPUs, fold vmstat, record. */
static void cp_common(const char *label, int drain)
{
	if (ncp >= MAX_CP)
		lt_die("too many checkpoints");
	if (drain) {
		mu_snapshot(&cps[ncp], label);
	} else {
		mu_stat_refresh();
		mu_take(&cps[ncp]);
		cps[ncp].label = label;
	}
	ncp++;
}

static void cp(const char *label) { cp_common(label, 1); }
static void cp_nodrain(const char *label) { cp_common(label, 0); }

static void print_results(void)
{
	char line[2048];
	int c;

	for (c = 0; c < ncp; c++) {
		mu_fmt_delta(line, sizeof(line), &cps[0], &cps[c]);
		printf("RESULT exact scenario=%s run=%s cp=%d label=%s %s\n",
		       scenario, runlabel, c, cps[c].label, line);
	}
	if (premise_broken)
		printf("RESULT exact scenario=%s run=%s premise broken at %s: %ld pages on an LRU\n",
		       scenario, runlabel, premise_broken, premise_lru);
	printf("RESULT exact scenario=%s run=%s done checkpoints=%d\n", scenario, runlabel, ncp);
}

/* ------------------------------------------------------------------ helpers */

static void xmlock(void *p, size_t len)
{
	if (mlock(p, len))
		lt_die("mlock %p+%zu", p, len);
}

static void xmlock_onfault(void *p, size_t len)
{
	if (syscall(SYS_mlock2, p, len, MLOCK_ONFAULT))
		lt_die("mlock2(ONFAULT) %p+%zu", p, len);
}

static void xmunlock(void *p, size_t len)
{
	if (munlock(p, len))
		lt_die("munlock %p+%zu", p, len);
}

static void xmadvise(void *p, size_t len, int adv)
{
	/* without THP every mapping is of small pages anyway */
	if (adv == MADV_NOHUGEPAGE && !mu_have_thp())
		return;
	if (madvise(p, len, adv))
		lt_die("madvise(%d) %p+%zu", adv, p, len);
}

static unsigned char *anon_area(size_t len, int adv)
{
	unsigned char *a = mu_map_aligned(len, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1);

	if (adv)
		xmadvise(a, len, adv);
	return a;
}

static void read_all(const unsigned char *p, size_t len)
{
	volatile unsigned char sink = 0;
	size_t i;

	for (i = 0; i < len; i += MU_PAGE)
		sink += p[i];
	(void)sink;
}

/* ------------------------------------------------------------ child helper */

enum { OP_TOUCH, OP_VERIFY, OP_READ, OP_MLOCK, OP_MUNLOCK, OP_MAPFILE, OP_MAPFD, OP_EXIT };

struct cmd {
	int op, val;
	unsigned long off, len;
};

static int to_child[2], from_child[2];
static pid_t child;
static unsigned char *child_area;	/* the area the child works on */
static const char *child_path;
static int child_fd = -1;

static void child_loop(void)
{
	struct cmd c;
	char ack = 'k';
	int fd;

	close(to_child[1]);
	close(from_child[0]);
	while (read(to_child[0], &c, sizeof(c)) == sizeof(c)) {
		unsigned char *p = child_area + c.off;

		switch (c.op) {
		case OP_TOUCH: mu_touch(p, c.len, c.val); break;
		case OP_VERIFY: mu_verify(p, c.len, c.val, "child"); break;
		case OP_READ: read_all(p, c.len); break;
		case OP_MLOCK: xmlock(p, c.len); break;
		case OP_MUNLOCK: xmunlock(p, c.len); break;
		case OP_MAPFILE:
		case OP_MAPFD:
			fd = c.op == OP_MAPFD ? child_fd : open(child_path, O_RDWR);
			if (fd < 0)
				lt_die("child open %s", child_path);
			child_area = mmap(NULL, c.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (child_area == MAP_FAILED)
				lt_die("child mmap shared");
			if (c.op == OP_MAPFILE)
				close(fd);
			break;
		case OP_EXIT: _exit(0);
		}
		if (write(from_child[1], &ack, 1) != 1)
			_exit(1);
	}
	_exit(1);
}

static void child_start(unsigned char *area)
{
	child_area = area;
	if (pipe(to_child) || pipe(from_child))
		lt_die("pipe");
	child = fork();
	if (child < 0)
		lt_die("fork");
	if (child == 0)
		child_loop();
	close(to_child[0]);
	close(from_child[1]);
}

static void child_do(int op, unsigned long off, unsigned long len, int val)
{
	struct cmd c = { .op = op, .val = val, .off = off, .len = len };
	char ack;

	if (write(to_child[1], &c, sizeof(c)) != sizeof(c))
		lt_die("write to child");
	if (op == OP_EXIT) {
		int st;

		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
			lt_die("child exit status 0x%x", st);
		close(to_child[1]);
		close(from_child[0]);
		return;
	}
	if (read(from_child[0], &ack, 1) != 1)
		lt_die("child failed (op %d)", op);
}

/* ------------------------------------------------------------- scenarios */

#define MB (1UL << 20)
#define PG MU_PAGE

static void sc_anon(void)
{
	unsigned char *a, *b, *c;

	a = anon_area(16 * MB, MADV_NOHUGEPAGE);
	cp("start");
	mu_touch(a, 16 * MB, 1);
	cp("populated");
	xmlock(a, 16 * MB);
	cp("mlock-all");
	xmunlock(a, 16 * MB);
	mu_verify(a, 16 * MB, 1, "anon");
	cp("munlock-all");
	xmlock(a + MB + PG, 8 * MB - 3 * PG);
	cp("mlock-part");
	xmlock(a, 16 * MB);
	cp("mlock-all-again");
	xmunlock(a + PG, 2 * PG);
	cp("munlock-2pages");
	xmunlock(a + 3 * MB, 2 * MB + PG);
	cp("munlock-mid");
	xmunlock(a + 15 * MB, MB);
	cp("munlock-tail");
	xmunlock(a, 16 * MB);
	mu_verify(a, 16 * MB, 1, "anon");
	cp("munlock-rest");
	munmap(a, 16 * MB);
	cp("unmapped");

	/* mlock of an unpopulated area: populate faults into the VM_LOCKED
	 * vma (mlock_new_folio), then munlock */
	b = anon_area(8 * MB, MADV_NOHUGEPAGE);
	xmlock(b, 8 * MB);
	mu_touch(b, 8 * MB, 2);
	cp("mlock-populates");
	xmunlock(b, 8 * MB);
	mu_verify(b, 8 * MB, 2, "mlock-populates");
	cp("munlock-populated");
	xmlock(b, 8 * MB);
	munmap(b, 8 * MB);	/* unmapped while locked: the rmap munlock */
	cp("unmap-locked");

	/* zero-page mappings: the walk skips them, populate COWs them */
	c = anon_area(4 * MB, MADV_NOHUGEPAGE);
	read_all(c, 4 * MB);
	cp("zero-mapped");
	xmlock(c, 4 * MB);
	cp("mlock-zero");
	xmunlock(c, 4 * MB);
	cp("munlock-zero");
	munmap(c, 4 * MB);
	cp("end");
}

static void sc_onfault(void)
{
	unsigned char *a = anon_area(8 * MB, MADV_NOHUGEPAGE);

	cp("start");
	xmlock_onfault(a, 8 * MB);
	cp("onfault-set");
	mu_touch(a, 4 * MB, 3);
	cp("touched-half");
	xmunlock(a, 2 * MB);
	cp("munlock-quarter");
	mu_touch(a + 2 * MB, 4 * MB, 4);
	cp("touched-more");
	xmunlock(a, 8 * MB);
	cp("munlock-all");
	mu_touch(a, 8 * MB, 5);
	xmlock_onfault(a, 8 * MB);
	cp("onfault-populated");
	xmunlock(a, 8 * MB);
	mu_verify(a, 8 * MB, 5, "onfault");
	munmap(a, 8 * MB);
	cp("end");
}

static void sc_mlockall(void)
{
	unsigned char *a, *b, *c, *d;

	a = anon_area(8 * MB, MADV_NOHUGEPAGE);
	b = anon_area(4 * MB, MADV_NOHUGEPAGE);
	mu_touch(a, 8 * MB, 6);
	cp("start");
	if (mlockall(MCL_CURRENT))
		lt_die("mlockall(MCL_CURRENT)");
	cp("mlockall-current");
	if (munlockall())
		lt_die("munlockall");
	cp("munlockall");
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		lt_die("mlockall(MCL_CURRENT|MCL_FUTURE)");
	cp("mlockall-future");
	c = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		lt_die("mmap under MCL_FUTURE");
	cp("future-mapping");
	xmunlock(a + 2 * MB, 2 * MB);
	cp("munlock-part");
	if (munlockall())
		lt_die("munlockall");
	cp("munlockall-2");
	munmap(c, 4 * MB);
	d = anon_area(4 * MB, MADV_NOHUGEPAGE);
	if (mlockall(MCL_CURRENT | MCL_ONFAULT))
		lt_die("mlockall(MCL_CURRENT|MCL_ONFAULT)");
	cp("mlockall-onfault");
	mu_touch(d, 2 * MB, 7);
	cp("onfault-touched");
	if (munlockall())
		lt_die("munlockall");
	mu_verify(a, 8 * MB, 6, "mlockall");
	mu_verify(d, 2 * MB, 7, "mlockall-onfault");
	munmap(a, 8 * MB);
	munmap(b, 4 * MB);
	munmap(d, 4 * MB);
	cp("end");
}

static void sc_thp(void)
{
	unsigned char *a = anon_area(8 * MB, MADV_HUGEPAGE);

	cp("start");
	mu_touch(a, 8 * MB, 8);
	cp("populated");
	xmlock(a, 8 * MB);
	cp("mlock-all");
	xmunlock(a + 3 * MB, 2 * MB);
	cp("munlock-mid-split");
	xmlock(a + 2 * MB + PG, MB - PG);
	cp("mlock-in-split");
	xmunlock(a, 8 * MB);
	cp("munlock-all");
	xmlock(a, 8 * MB);
	cp("mlock-all-again");
	munmap(a, 2 * MB);
	cp("unmap-locked-head");
	xmunlock(a + 2 * MB, 6 * MB);
	mu_verify(a + 2 * MB, 6 * MB, 8, "thp");
	cp("munlock-rest");
	munmap(a + 2 * MB, 6 * MB);
	cp("end");
}

static void sc_fork_cow(int adv)
{
	unsigned char *a = anon_area(4 * MB, adv);

	mu_touch(a, 4 * MB, 10);
	cp("start");
	xmlock(a, 4 * MB);
	cp("locked");
	child_start(a);
	cp("forked");
	child_do(OP_TOUCH, 0, MB, 20);
	cp("child-cow");
	mu_touch(a + MB, MB, 30);
	cp("parent-cow");
	child_do(OP_MLOCK, 0, 4 * MB, 0);
	cp("child-mlock");
	xmunlock(a, 2 * MB);
	cp("parent-munlock-part");
	xmunlock(a, 4 * MB);
	cp("parent-munlock");
	child_do(OP_VERIFY, 0, MB, 20);
	child_do(OP_VERIFY, MB, MB, 10);
	child_do(OP_VERIFY, 2 * MB, 2 * MB, 10);
	child_do(OP_MUNLOCK, 0, 4 * MB, 0);
	cp("child-munlock");
	child_do(OP_MLOCK, 0, MB, 0);
	child_do(OP_EXIT, 0, 0, 0);
	cp("child-exit-locked");
	mu_verify(a, MB, 10, "fork-cow");
	mu_verify(a + MB, MB, 30, "fork-cow");
	munmap(a, 4 * MB);
	cp("end");
}

static void sc_shared(const char *kind)
{
	static const char path[] = "/tmp/munlock_exact.shared";
	size_t len = 8 * MB;
	unsigned char *a;
	int fd = -1;

	if (!strcmp(kind, "anon")) {
		a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED)
			lt_die("mmap shared anon");
		mu_touch(a, len, 40);
		child_start(a);
	} else {
		if (!strcmp(kind, "tmpfs")) {
			unlink(path);
			fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		} else {
			fd = memfd_create("munlock_exact", 0);
		}
		if (fd < 0)
			lt_die("create shared %s", kind);
		if (ftruncate(fd, len))
			lt_die("ftruncate");
		a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (a == MAP_FAILED)
			lt_die("mmap shared %s", kind);
		mu_touch(a, len, 40);
		child_path = path;
		child_fd = fd;
		child_start(NULL);
		child_do(!strcmp(kind, "tmpfs") ? OP_MAPFILE : OP_MAPFD, 0, len, 0);
		child_do(OP_READ, 0, len, 0);
	}
	cp("start");
	xmlock(a, len);
	cp("p-mlock");
	child_do(OP_MLOCK, 0, len, 0);
	cp("c-mlock");
	child_do(OP_MUNLOCK, 0, len / 2, 0);
	cp("c-munlock-half");
	xmunlock(a, len);
	cp("p-munlock");
	child_do(OP_MUNLOCK, 0, len, 0);
	cp("c-munlock");
	child_do(OP_MLOCK, 2 * MB, 4 * MB, 0);
	xmlock(a + 4 * MB, 4 * MB);
	cp("both-part");
	child_do(OP_VERIFY, 0, len, 40);
	child_do(OP_EXIT, 0, 0, 0);
	cp("child-exit-locked");
	xmunlock(a, len);
	cp("p-munlock-2");
	mu_verify(a, len, 40, "shared");
	munmap(a, len);
	if (fd >= 0)
		close(fd);
	if (!strcmp(kind, "tmpfs"))
		unlink(path);
	cp("end");
}

/*
 * The offlru scenario's premise: the folios it works on sit in CPU x's
 * lru_add or mlock batch, off every LRU, until the next draining checkpoint.
 * Anything else that drains CPU x meanwhile (a task of its own, a
 * compaction or khugepaged pass: it happens in the stock kernel too, most
 * often on PREEMPT_RT) puts them on an LRU early and the checkpoint measures
 * another sequence.  Checked through KPF_LRU after each step; a run whose
 * premise broke says so and the caller repeats the pair.
 */
static void offlru_premise(const unsigned char *p, size_t len, const char *where)
{
	long n = mu_count_kpf(p, len, MU_KPF_LRU, NULL, 0);

	if (n && !premise_broken) {
		premise_broken = where;
		premise_lru = n;
	}
}

/* Folios that are off the LRU (in another CPU's lru_add / mlock batch). */
static void sc_offlru(void)
{
	int ncpu = lt_ncpus(), x = ncpu - 2, y = ncpu - 1;
	unsigned char *a = anon_area(2 * MB, MADV_NOHUGEPAGE);

	lt_pin(x);
	cp("start");
	/* 1: mlock and munlock while the new folios sit in CPU x's lru_add */
	mu_touch(a, 8 * PG, 50);
	lt_pin(y);
	offlru_premise(a, 8 * PG, "touched-1");
	xmlock(a, 8 * PG);
	cp_nodrain("mlock-offlru");
	offlru_premise(a, 8 * PG, "mlock-offlru");
	xmunlock(a, 8 * PG);
	cp_nodrain("munlock-offlru");
	offlru_premise(a, 8 * PG, "munlock-offlru");
	cp("drained-1");
	/* 2: mlocked off the LRU, then the lru_add drain culls them */
	lt_pin(x);
	mu_touch(a + 8 * PG, 8 * PG, 51);
	lt_pin(y);
	offlru_premise(a + 8 * PG, 8 * PG, "touched-2");
	xmlock(a + 8 * PG, 8 * PG);
	cp("mlock-offlru-drained");
	xmunlock(a + 8 * PG, 8 * PG);
	cp("munlock-after-cull");
	/* 3: munlock while mlock_new_folio() is pending in CPU x's batch */
	lt_pin(x);
	xmlock_onfault(a + 16 * PG, 8 * PG);
	mu_touch(a + 16 * PG, 8 * PG, 52);
	lt_pin(y);
	offlru_premise(a + 16 * PG, 8 * PG, "touched-3");
	xmunlock(a + 16 * PG, 8 * PG);
	cp_nodrain("munlock-pending-new");
	offlru_premise(a + 16 * PG, 8 * PG, "munlock-pending-new");
	cp("drained-3");
	mu_verify(a, 8 * PG, 50, "offlru");
	mu_verify(a + 16 * PG, 8 * PG, 52, "offlru");
	munmap(a, 2 * MB);
	cp("end");
}

/* Deactivated / reclaim-isolated folios (no swap: pageout puts them back). */
static void sc_cold(void)
{
	unsigned char *a = anon_area(8 * MB, MADV_NOHUGEPAGE);

	mu_touch(a, 8 * MB, 60);
	cp("start");
	xmadvise(a, 4 * MB, MADV_COLD);
	xmlock(a, 8 * MB);
	cp("mlock-after-cold");
	xmunlock(a, 8 * MB);
	cp("munlock");
	if (madvise(a, 8 * MB, MADV_PAGEOUT) && errno != EINVAL)
		lt_die("madvise(MADV_PAGEOUT)");
	cp("pageout");
	xmlock(a, 8 * MB);
	cp("mlock-after-pageout");
	xmunlock(a, 8 * MB);
	mu_verify(a, 8 * MB, 60, "cold");
	munmap(a, 8 * MB);
	cp("end");
}


/*
 * 6.12: 64 KiB anonymous mTHP folios mapped by PTEs (folio_mlock_step() /
 * allow_mlock_munlock(): partial folios are skipped by mlock, munlocked by
 * munlock).  The VMA is smaller than 2 MiB so no PMD THP can appear; mixed
 * PTE bits inside a folio come from clearing soft-dirty and re-writing every
 * other page; mprotect() splits a VMA inside a folio.
 */
#define MTHP_CTL "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"

static char mthp_old[32];

static void mthp_restore(void)
{
	if (mthp_old[0])
		lt_write_file(MTHP_CTL, mthp_old);
}

static int mthp_setup(void)
{
	char buf[128], *l, *r;

	if (lt_read_file(MTHP_CTL, buf, sizeof(buf)) <= 0)
		return -1;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (!l || !r || r - l - 1 >= (long)sizeof(mthp_old))
		return -1;
	memcpy(mthp_old, l + 1, r - l - 1);
	mthp_old[r - l - 1] = 0;
	if (lt_write_file(MTHP_CTL, "always"))
		return -1;
	atexit(mthp_restore);
	return 0;
}

static void sc_mthp(void)
{
	size_t len = 2 * MB - 64 * 1024;
	unsigned char *a = mu_map_aligned(len, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1);
	size_t i;

	cp("start");
	mu_touch(a, len, 70);
	cp("populated");
	xmlock(a + PG, MB - 2 * PG);
	cp("mlock-cuts-folios");
	xmlock(a, len);
	cp("mlock-all");
	xmunlock(a + 32 * 1024, 64 * 1024);
	cp("munlock-cuts-folios");
	xmunlock(a, len);
	cp("munlock-all");
	xmlock(a + 64 * 1024, 64 * 1024);
	cp("mlock-one-folio");
	xmunlock(a, len);
	cp("munlock-one-folio");
	/* mixed dirty / soft-dirty / write bits inside each folio */
	if (lt_write_file("/proc/self/clear_refs", "4"))
		lt_die("clear_refs");
	for (i = 0; i < len; i += 2 * PG)
		a[i] = (unsigned char)(70 + i / PG);
	xmlock(a, len);
	cp("mlock-mixed-ptes");
	xmunlock(a, len);
	cp("munlock-mixed-ptes");
	/* a VMA boundary inside a folio */
	if (mprotect(a + 72 * 1024, PG, PROT_READ))
		lt_die("mprotect");
	xmlock(a, len);
	cp("mlock-split-vma");
	xmunlock(a + 64 * 1024, 12 * 1024);
	cp("munlock-split-part");
	xmunlock(a, len);
	mu_verify(a, len, 70, "mthp");
	munmap(a, len);
	cp("end");
}

/* Pages alternating between two NUMA nodes: a zone and lruvec change at
 * every page (numa=fake=2). */
static int node_count(void)
{
	char buf[64];
	int a, b;

	if (lt_read_file("/sys/devices/system/node/online", buf, sizeof(buf)) <= 0)
		return 1;
	if (sscanf(buf, "%d-%d", &a, &b) == 2)
		return b - a + 1;
	return 1;
}

static void sc_numa(void)
{
	unsigned long n = 4 * MB / PG, i;
	unsigned char *a = anon_area(4 * MB, MADV_NOHUGEPAGE);
	static void *pages[4 * MB / PG];
	static int tnode[4 * MB / PG], status[4 * MB / PG];

	mu_touch(a, 4 * MB, 80);
	for (i = 0; i < n; i++) {
		pages[i] = a + i * PG;
		tnode[i] = i & 1;
	}
	if (syscall(SYS_move_pages, 0, n, pages, tnode, status, 2 /* MPOL_MF_MOVE */))
		lt_die("move_pages");
	for (i = 0; i < n; i++)
		if (status[i] != (int)(i & 1))
			lt_die("page %lu on node %d, not %lu", i, status[i], i & 1);
	cp("start");
	xmlock(a, 4 * MB);
	cp("mlock-all");
	xmunlock(a + MB + PG, MB);
	cp("munlock-part");
	xmunlock(a, 4 * MB);
	cp("munlock-all");
	mu_verify(a, 4 * MB, 80, "numa");
	munmap(a, 4 * MB);
	cp("end");
}

/*
 * Folios of two memory cgroups interleaved in one PTE table: a tmpfs file
 * written by a child in group A (page cache charged to A), mapped
 * MAP_PRIVATE by this process in group B, every other page COWed (anon,
 * charged to B): the batched walk changes lruvec at every folio.  The
 * groups come from the environment (MUN_CG_A, MUN_CG_B: cgroup directories,
 * v1 or v2, created fresh by the test for each run).  (Per-memcg counters
 * are not compared: memory.stat is flushed lazily, above a threshold.)
 */
static void cg_join(const char *dir)
{
	char path[256], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (lt_write_file(path, pid))
		lt_die("join %s", dir);
}

static void sc_memcg(const char *ga, const char *gb)
{
	static const char path[] = "/tmp/munlock_exact.memcg";
	size_t len = 4 * MB, i;
	unsigned char *a;
	pid_t pid;
	int fd, st;

	unlink(path);
	pid = fork();
	if (pid < 0)
		lt_die("fork");
	if (pid == 0) {
		static unsigned char buf[64 * 1024];

		cg_join(ga);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			lt_die("create %s", path);
		for (i = 0; i < len; i += sizeof(buf)) {
			size_t j;

			for (j = 0; j < sizeof(buf); j += PG)
				buf[j] = (unsigned char)(90 + (i + j) / PG);
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				lt_die("write %s", path);
		}
		close(fd);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		lt_die("memcg child failed");
	cg_join(gb);
	fd = open(path, O_RDWR);
	if (fd < 0)
		lt_die("open %s", path);
	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (a == MAP_FAILED)
		lt_die("mmap %s", path);
	close(fd);
	read_all(a, len);
	for (i = 0; i < len; i += 2 * PG)
		a[i] = (unsigned char)(90 + i / PG);	/* COW: anon in group B */
	cp("start");
	xmlock(a, len);
	cp("mlock-all");
	xmunlock(a + MB + PG, MB);
	cp("munlock-part");
	xmunlock(a, len);
	cp("munlock-all");
	mu_verify(a, len, 90, "memcg");
	munmap(a, len);
	unlink(path);
	cp("end");
}

int main(int argc, char **argv)
{
	lt_args("munlock_exact", argc, 2, 2, "SCENARIO RUNLABEL");
	lt_no_aslr(argv);
	scenario = argv[1];
	runlabel = argv[2];
	if (!strcmp(scenario, "offlru") && lt_ncpus() < 2) {
		printf("RESULT exact scenario=%s run=%s skip needs 2 CPUs\n", scenario, runlabel);
		return 0;
	}
	if (!strcmp(scenario, "numa") && node_count() < 2) {
		printf("RESULT exact scenario=%s run=%s skip needs 2 NUMA nodes (numa=fake=2)\n",
		       scenario, runlabel);
		return 0;
	}
	if (!strcmp(scenario, "memcg") && (!getenv("MUN_CG_A") || !getenv("MUN_CG_B"))) {
		printf("RESULT exact scenario=%s run=%s skip MUN_CG_A/MUN_CG_B not set\n",
		       scenario, runlabel);
		return 0;
	}
	if ((!strcmp(scenario, "thp") || !strcmp(scenario, "fork-cow-thp")) &&
	    !mu_have_thp()) {
		printf("RESULT exact scenario=%s run=%s skip no transparent hugepages\n",
		       scenario, runlabel);
		return 0;
	}
	if (!strcmp(scenario, "mthp") && mthp_setup()) {
		printf("RESULT exact scenario=%s run=%s skip no %s\n", scenario, runlabel, MTHP_CTL);
		return 0;
	}
	/* Everything allocated before the first checkpoint. */
	lt_pin(lt_ncpus() - 1);
	mu_drain_init();
	if (!strcmp(scenario, "anon"))
		sc_anon();
	else if (!strcmp(scenario, "onfault"))
		sc_onfault();
	else if (!strcmp(scenario, "mlockall"))
		sc_mlockall();
	else if (!strcmp(scenario, "thp"))
		sc_thp();
	else if (!strcmp(scenario, "fork-cow"))
		sc_fork_cow(MADV_NOHUGEPAGE);
	else if (!strcmp(scenario, "fork-cow-thp"))
		sc_fork_cow(MADV_HUGEPAGE);
	else if (!strncmp(scenario, "shared-", 7) &&
		 (!strcmp(scenario + 7, "tmpfs") || !strcmp(scenario + 7, "memfd") ||
		  !strcmp(scenario + 7, "anon")))
		sc_shared(scenario + 7);
	else if (!strcmp(scenario, "offlru"))
		sc_offlru();
	else if (!strcmp(scenario, "cold"))
		sc_cold();
	else if (!strcmp(scenario, "mthp"))
		sc_mthp();
	else if (!strcmp(scenario, "numa"))
		sc_numa();
	else if (!strcmp(scenario, "memcg"))
		sc_memcg(getenv("MUN_CG_A"), getenv("MUN_CG_B"));
	else {
		fprintf(stderr, "munlock_exact: unknown scenario '%s'\n", scenario);
		return 2;
	}
	print_results();
	return 0;
}
