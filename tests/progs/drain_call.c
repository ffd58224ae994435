/*
 * drain_call [options] MODE
 *
 * Makes the kernel call lru_add_drain_all() N times through one of its real
 * callers, timing each call with CLOCK_MONOTONIC, and prints one line
 *   RESULT name=LABEL mode=MODE n=N min_ns=.. median_ns=.. p90_ns=..
 *          max_ns=.. mean_ns=.. errors=E
 * MODE (the caller class lruopt gives it):
 *   compact   write "1" to /proc/sys/vm/compact_memory   (hint: compact_nodes)
 *   collapse  madvise(MADV_COLLAPSE) of one page of a 4 MiB anonymous mapping
 *             (another page of it written first: without an anon_vma the
 *             call fails before draining): drains, then has nothing to do
 *             (no whole huge page in the range)     (hint: madvise_collapse)
 *   memfd     a child pinned to the writer CPU (-w) write()s -p pages to a
 *             fresh memfd and stays alive; the caller then adds F_SEAL_WRITE.
 *             The pages sit in the writer CPU's LRU batch with an extra
 *             reference, so memfd_wait_for_pins() must call
 *             lru_add_drain_all() (strict); the seal must succeed, an EBUSY
 *             (pins not drained in time) is an error
 *   fadvise   write -k KiB to -f FILE (truncated first), map its first
 *             page (a mapped folio cannot be invalidated, so the call must
 *             drain: on brd with busybox's ext2 layout the written folios
 *             are clean again by then), then time posix_fadvise(DONTNEED) of
 *             the whole file                        (hint: generic_fadvise)
 *   movepages move_pages(2) of one page of the caller's to the node it is
 *             already on (nothing migrates): do_pages_move() starts with
 *             lru_cache_disable(), whose forced drain must empty every
 *             CPU's batches (strict; lruopt replaces it on PREEMPT_RT only)
 *   pin       fault -p fresh pages on the writer CPU (-w; the caller moves
 *             there and back), then pin them long-term from the caller's
 *             CPU: io_uring's IORING_REGISTER_BUFFERS (FOLL_LONGTERM).
 *             Booted with movablecore=, the pages are in ZONE_MOVABLE and
 *             must be migrated before they may be pinned, and as they are
 *             still in the writer CPU's LRU batch, which the pinning CPU's
 *             own lru_add_drain() (newer kernels try that first) cannot
 *             empty, the kernel calls lru_add_drain_all() (strict:
 *             collect_longterm_unpinnable_*()); the buffers are then
 *             unregistered
 * Options:
 *   -n N          calls (default 1)
 *   -i USEC       sleep between calls (default 0)
 *   -c CPU        pin the caller to CPU first
 *   -w CPU        memfd writer and pin faulting CPU (default 1)
 *   -p PAGES      memfd and pin pages (default 4)
 *   -f FILE, -k KIB   fadvise target and write size (default 16)
 *   -l LABEL      name= of the RESULT line (default MODE)
 *   -o N          own pages: before each call, empty the caller's CPU's
 *                 batches (an munmap, whose path runs lru_add_drain() there)
 *                 and fault N (1..12) fresh anonymous pages, which then sit
 *                 in that CPU's add batch: exactly N, whatever the process
 *                 batched before (an exec drains the CPU too).  Use with -c
 *   -m            write "drain_call LABEL begin I" / "... end I" to the
 *                 trace_marker file around call I (1-based): $DRAIN_MARKER,
 *                 default /sys/kernel/tracing/trace_marker
 *   -v            also print "CALL I NS" for every call
 *   -t SECONDS    stop (with an error) after SECONDS (default 900)
 *   -b            memfd: a seal that fails with EBUSY is counted (busy=),
 *                 not an error: under a compaction storm migration holds
 *                 the pages' references past memfd_wait_for_pins()'s
 *                 ~150 ms, on the stock kernel too
 * Exit 0 = all calls succeeded, 1 = some call failed, 2 = usage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/io_uring.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 2U
#endif
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_SEAL_WRITE 0x0008
#endif

static int marker_fd = -1;
static const char *label;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void marker(const char *what, long i)
{
	char buf[128];
	int n;

	if (marker_fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "drain_call %s %s %ld\n", label, what, i);
	if (write(marker_fd, buf, n) != n) {
		perror("drain_call: trace_marker");
		exit(1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int pin(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	while (sched_getcpu() != cpu)
		sched_yield();
	return 0;
}

/* memfd: returns the memfd with the child's pages in its CPU's LRU batch. */
static int memfd_prepare(long wcpu, long pages, pid_t *child, int *go_fd)
{
	int fd = memfd_create("drain_call", MFD_ALLOW_SEALING);
	int ready[2], go[2];
	long page = sysconf(_SC_PAGESIZE);
	char c;

	if (fd < 0 || pipe(ready) || pipe(go)) {
		perror("drain_call: memfd_create/pipe");
		exit(1);
	}
	*child = fork();
	if (*child < 0) {
		perror("drain_call: fork");
		exit(1);
	}
	if (*child == 0) {
		char *buf = malloc(page), *scratch;
		long i;

		close(go[1]);
		close(ready[0]);
		if (!buf || pin(wcpu)) {
			perror("drain_call: writer setup");
			_exit(1);
		}
		memset(buf, 0x5a, page);
		/* start from an empty batch on the writer CPU (munmap drains) */
		scratch = mmap(NULL, page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (scratch == MAP_FAILED)
			_exit(1);
		scratch[0] = 1;
		munmap(scratch, page);
		for (i = 0; i < pages; i++)
			if (pwrite(fd, buf, page, i * page) != page)
				_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		/* stay alive (asleep) until the seal is done: exiting would
		 * drain this CPU's batches */
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		fprintf(stderr, "drain_call: memfd writer failed\n");
		exit(1);
	}
	close(ready[0]);
	*go_fd = go[1];
	return fd;
}

static int memfd_finish(int fd, pid_t child, int go_fd)
{
	int st;

	close(go_fd);	/* EOF wakes the writer */
	close(fd);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "drain_call: memfd writer exited badly\n");
		return -1;
	}
	return 0;
}

/*
 * movepages: move @page to the node it is on; the kernel still disables the
 * LRU caches (and drains them) first.  Returns 0 or the syscall's errno.
 * The page's status is not checked: compaction running beside it (68's
 * storm) may be migrating it, and a transient -ENOENT or -EBUSY there says
 * nothing about the drain, which happened before any page was looked at.
 */
static int move_page_in_place(void *page)
{
	int node = -1, status = -1;

	/* nodes NULL: only query where the page is */
	if (syscall(SYS_move_pages, 0, 1UL, &page, NULL, &node, 0))
		return errno;
	if (node < 0)
		node = 0;
	if (syscall(SYS_move_pages, 0, 1UL, &page, &node, &status,
		    MPOL_MF_MOVE))
		return errno;
	return 0;
}

/*
 * pin: an io_uring whose only use is registering a fixed buffer of @pages
 * fresh pages, faulted on @wcpu (so in that CPU's LRU batch); the caller
 * is pinned back to @cpu (-1: not pinned) afterwards.  Returns the ring's
 * fd, or -1 with errno set; the buffer goes to *@iov.
 */
static int pin_prepare(long pages, long wcpu, long cpu, struct iovec *iov)
{
	cpu_set_t all;
	size_t len = pages * 4096;
	struct io_uring_params p;
	unsigned char *m;
	int fd, e;
	long i;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0)
		return -1;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	/* small folios: a huge one is never batched */
	madvise(m, len, MADV_NOHUGEPAGE);
	CPU_ZERO(&all);
	sched_getaffinity(0, sizeof(all), &all);
	if (pin(wcpu)) {
		e = errno;
		munmap(m, len);
		close(fd);
		errno = e;
		return -1;
	}
	for (i = 0; i < pages; i++)
		m[i * 4096] = 1;
	if (cpu >= 0 ? pin(cpu) : sched_setaffinity(0, sizeof(all), &all)) {
		e = errno;
		munmap(m, len);
		close(fd);
		errno = e;
		return -1;
	}
	iov->iov_base = m;
	iov->iov_len = len;
	return fd;
}

/* pin: the long-term pin itself; 0 or an errno */
static int pin_call(int fd, struct iovec *iov)
{
	if (syscall(__NR_io_uring_register, fd, IORING_REGISTER_BUFFERS, iov, 1))
		return errno;
	return 0;
}

static void pin_finish(int fd, struct iovec *iov, int registered)
{
	if (registered)
		syscall(__NR_io_uring_register, fd, IORING_UNREGISTER_BUFFERS,
			NULL, 0);
	munmap(iov->iov_base, iov->iov_len);
	close(fd);
}

/*
 * -o N: exactly N fresh pages in this CPU's add batch.  The munmap of a
 * touched scratch page runs lru_add_drain() on this CPU first (the
 * unmap path does, as drain_pending relies on); N < 15, the smallest
 * batch (6.1), so none of them is moved by a full batch.  The pages stay
 * mapped until exit.
 */
static int own_pending(long n)
{
	long page = sysconf(_SC_PAGESIZE), j;
	unsigned char *scratch, *p;

	scratch = mmap(NULL, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED || p == MAP_FAILED) {
		perror("drain_call: mmap (-o)");
		return 1;
	}
	scratch[0] = 1;
	munmap(scratch, page);
	for (j = 0; j < n; j++)
		p[j * page] = 1;
	return 0;
}

int main(int argc, char **argv)
{
	long n = 1, interval = 0, cpu = -1, wcpu = 1, pages = 4, kib = 16, i;
	long seconds = 900, own = 0;
	double t_start;
	const char *mode, *file = NULL;
	int opt, verbose = 0, use_marker = 0, errors = 0, last_errno = 0;
	int movepages = 0, longterm = 0, pfd = -1, busy_ok = 0, busy = 0;
	struct iovec piov;
	int cfd = -1, ffd;
	unsigned char *area = NULL;
	volatile unsigned char *fmap;
	uint64_t *lat, sum = 0;
	char *wbuf = NULL;

	while ((opt = getopt(argc, argv, "n:i:c:w:p:f:k:l:o:t:bmv")) != -1) {
		switch (opt) {
		case 'n': n = parse_arg("drain_call", "N", optarg, 10000000); break;
		case 'i': interval = parse_arg("drain_call", "USEC", optarg, 10000000); break;
		case 'c': cpu = strtol(optarg, NULL, 10); break;
		case 'w': wcpu = strtol(optarg, NULL, 10); break;
		case 'p': pages = parse_arg("drain_call", "PAGES", optarg, 12); break;
		case 'f': file = optarg; break;
		case 'k': kib = parse_arg("drain_call", "KIB", optarg, 1 << 20); break;
		case 'l': label = optarg; break;
		case 'o': own = parse_arg("drain_call", "N", optarg, 12); break;
		case 't': seconds = parse_arg("drain_call", "SECONDS", optarg, 86400); break;
		case 'b': busy_ok = 1; break;
		case 'm': use_marker = 1; break;
		case 'v': verbose = 1; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	mode = argv[optind];
	if (!label)
		label = mode;
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup_bounded_run(seconds);
	t_start = now_s();
	lat = calloc(n, sizeof(*lat));
	if (!lat)
		return 1;
	if (cpu >= 0 && pin(cpu)) {
		perror("drain_call: sched_setaffinity");
		return 1;
	}
	if (use_marker) {
		const char *mf = getenv("DRAIN_MARKER");

		if (!mf || !*mf)
			mf = "/sys/kernel/tracing/trace_marker";
		marker_fd = open(mf, O_WRONLY);
		if (marker_fd < 0) {
			perror(mf);
			return 1;
		}
	}

	if (!strcmp(mode, "compact")) {
		cfd = open("/proc/sys/vm/compact_memory", O_WRONLY);
		if (cfd < 0) {
			perror("drain_call: compact_memory");
			return 1;
		}
	} else if (!strcmp(mode, "collapse")) {
		size_t hp = 2ul << 20;
		unsigned char *m = mmap(NULL, 2 * hp, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			perror("drain_call: mmap");
			return 1;
		}
		/* an anon_vma (one written page), then collapse the first page
		 * of the aligned huge page range (on 6.1 the last page of the
		 * VMA fails with EINVAL before draining) */
		*(volatile unsigned char *)m = 1;
		area = (unsigned char *)(((uintptr_t)m + hp - 1) & ~(uintptr_t)(hp - 1));
	} else if (!strcmp(mode, "fadvise")) {
		if (!file)
			goto usage;
		wbuf = malloc(kib << 10);
		if (!wbuf)
			return 1;
		memset(wbuf, 0xa5, kib << 10);
	} else if (!strcmp(mode, "pin")) {
		longterm = 1;
	} else if (!strcmp(mode, "movepages")) {
		area = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area == MAP_FAILED) {
			perror("drain_call: mmap");
			return 1;
		}
		area[0] = 1;
		movepages = 1;
	} else if (strcmp(mode, "memfd")) {
		goto usage;
	}

	for (i = 0; i < n; i++) {
		uint64_t t0, t1;

		if (stop_requested || now_s() - t_start > seconds) {
			fprintf(stderr, "drain_call: stopped after %ld of %ld calls\n", i, n);
			errors++;
			n = i ? i : 1;
			break;
		}
		{
		pid_t child = 0;
		int mfd = -1, go_fd = -1, rc = 0;

		if (!strcmp(mode, "memfd"))
			mfd = memfd_prepare(wcpu, pages, &child, &go_fd);
		if (longterm) {
			pfd = pin_prepare(pages, wcpu, cpu, &piov);
			if (pfd < 0) {
				perror("drain_call: io_uring_setup/mmap");
				return 1;
			}
		}
		ffd = -1;
		fmap = NULL;
		if (wbuf) {
			ffd = open(file, O_CREAT | O_TRUNC | O_RDWR, 0644);
			if (ffd < 0 || write(ffd, wbuf, kib << 10) != kib << 10) {
				perror("drain_call: write FILE");
				return 1;
			}
			fmap = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ffd, 0);
			if (fmap == MAP_FAILED) {
				perror("drain_call: mmap FILE");
				return 1;
			}
			if (fmap[0] != 0xa5) {
				fprintf(stderr, "drain_call: FILE content wrong\n");
				return 1;
			}
		}

		if (own && own_pending(own))
			return 1;
		marker("begin", i + 1);
		t0 = now_ns();
		if (cfd >= 0) {
			if (pwrite(cfd, "1", 1, 0) != 1)
				rc = errno;
		} else if (movepages) {
			rc = move_page_in_place(area);
		} else if (longterm) {
			rc = pin_call(pfd, &piov);
		} else if (area) {
			if (madvise(area, sysconf(_SC_PAGESIZE), MADV_COLLAPSE))
				rc = errno;
		} else if (mfd >= 0) {
			if (fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE))
				rc = errno;
		} else {
			rc = posix_fadvise(ffd, 0, 0, POSIX_FADV_DONTNEED);
		}
		t1 = now_ns();
		marker("end", i + 1);

		if (mfd >= 0 && memfd_finish(mfd, child, go_fd))
			errors++;
		if (longterm)
			pin_finish(pfd, &piov, !rc);
		if (fmap)
			munmap((void *)fmap, 4096);
		if (ffd >= 0)
			close(ffd);
		if (rc == EBUSY && mfd >= 0 && busy_ok) {
			busy++;
			rc = 0;
		}
		if (rc) {
			fprintf(stderr, "drain_call: %s call %ld failed: %s\n",
				mode, i + 1, strerror(rc));
			errors++;
			last_errno = rc;
		}
		lat[i] = t1 - t0;
		sum += lat[i];
		if (verbose)
			printf("CALL %ld %llu\n", i + 1, (unsigned long long)lat[i]);
		if (interval)
			usleep(interval);
		}
	}

	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("RESULT name=%s mode=%s n=%ld min_ns=%llu median_ns=%llu p90_ns=%llu max_ns=%llu mean_ns=%llu errors=%d last_errno=%d busy=%d\n",
	       label, mode, n, (unsigned long long)lat[0],
	       (unsigned long long)lat[n / 2],
	       (unsigned long long)lat[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1],
	       (unsigned long long)lat[n - 1], (unsigned long long)(sum / n),
	       errors, last_errno, busy);
	return errors ? 1 : 0;
usage:
	fprintf(stderr, "usage: drain_call [-n N] [-i USEC] [-c CPU] [-w CPU] [-p PAGES] [-f FILE] [-k KIB] [-l LABEL] [-b] [-m] [-v] compact|collapse|memfd|fadvise|movepages|pin\n");
	return 2;
}
