// SPDX-License-Identifier: GPL-2.0
/*
 * lazyfree_exact - what one madvise() call did to a range, for
 * tests/85-lazyfree.sh.
 *
 *   lazyfree_exact range MIB free|dontneed [swap]
 *	maps MIB MiB of anonymous memory (no THP), writes a pattern to every
 *	page, with "swap" pages out the second half (MADV_PAGEOUT; needs
 *	swap), then calls madvise() once on the whole range and prints
 *	  ret=R rss_kb=D swap_kb=S swap_left_kb=T lazyfree=L lazyfreed=F
 *	  zero=Z kept=K survived=V
 *	R: its return (0 or -errno name); D, S: how much RssAnon and VmSwap
 *	of /proc/self/status dropped; T: VmSwap after the call; L, F: pglazyfree's and pglazyfreed's
 *	growth (pages marked lazily free, pages reclaim discarded); Z, K: pages
 *	that read back as zeroes, as the pattern (first and last byte of each
 *	page; anything else fails); V: 1 if a write to the first page right
 *	after the call left the rest of that page's pattern in place (the
 *	page was not freed), else 0.
 *   lazyfree_exact errno free|dontneed
 *	the call on each kind of range it may refuse, one line:
 *	  anon_private=0 anon_shared=EINVAL file_private=EINVAL mlocked=EINVAL
 *	  hugetlb=EINVAL|none hole=ENOMEM
 *   lazyfree_exact uffd MIB
 *	MADV_FREE on a range registered with userfaultfd (missing mode):
 *	prints "ret=R rss_kb=D", D being how much RssAnon dropped.
 *   lazyfree_exact loop SECONDS MIB
 *	MADV_FREE and MADV_DONTNEED in turn on a written range until SECONDS
 *	have passed (a load for the unload test); prints "rounds=N".
 *   lazyfree_exact pin iouring|vmsplice|none
 *	16 written pages, held beyond their mapping as a device or I/O would
 *	hold them: registered as an io_uring fixed buffer (a FOLL_PIN |
 *	FOLL_LONGTERM pin, as RDMA and vfio pin), spliced into a pipe by
 *	vmsplice() (FOLL_GET references until the pipe is read), or not held.
 *	Then one MADV_FREE, a read of every page, a new pattern written to
 *	every page, and what the holder sees: the fixed buffer written to a
 *	file by IORING_OP_WRITE_FIXED, or the pipe read.  Prints
 *	  zero=Z same_frame=F holder_sees_write=H
 *	Z: pages that read zeroes after the call (freed); F: pages whose frame
 *	(/proc/self/pagemap, root) is the one they had before the call; H:
 *	pages where the holder read the new pattern ("-" without a holder).
 *	Stock keeps every held page: Z=0 F=16 H=16.
 *   lazyfree_exact memcg MIB DIR MARGIN_KB
 *	joins the memory cgroup DIR (v2: memory.max and memory.current, v1:
 *	memory.limit_in_bytes and memory.usage_in_bytes), writes MIB MiB,
 *	sets the group's limit to its usage + MARGIN_KB, calls MADV_FREE on
 *	the range, puts the limit back to "max" (v2) or -1 (v1) and prints
 *	  ret=R zero=Z kept=K  (as for "range")
 *	or, with exit status 3, "precondition lost: ..." if the usage moved
 *	after the limit was set (the margin would not be MARGIN_KB).
 */
#include "common.h"
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define PAGE 4096UL
#define PATTERN 0xa5

static long long status_kb(const char *key)
{
	static char buf[8192];

	if (lt_read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		lt_die("read /proc/self/status");
	return lt_field(buf, key);
}

static const char *ret_name(int r, int e)
{
	if (!r)
		return "0";
	switch (e) {
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case EAGAIN: return "EAGAIN";
	default: return "other";
	}
}

static void fill(unsigned char *p, size_t len)
{
	memset(p, PATTERN, len);
}

/*
 * Every command that fills a range first stays on one CPU (lt_stay()):
 * every page then reaches the LRU through this CPU's batches, which
 * MADV_FREE drains, and none is left behind in another CPU's batch (where
 * neither stock nor lruopt marks it lazily free).
 */

static int cmd_range(long mib, int adv, bool swap)
{
	size_t len = (size_t)mib << 20, i;
	unsigned char *p = lt_map_anon(len, true);
	long long rss0, swap0, lz0, lzd0, rss1, swap1, lz1, lzd1;
	long zero = 0, kept = 0;
	int r, e, survived;

	lt_stay();
	fill(p, len);
	if (swap && madvise(p + len / 2, len / 2, MADV_PAGEOUT))
		lt_die("MADV_PAGEOUT");
	rss0 = status_kb("RssAnon");
	swap0 = status_kb("VmSwap");
	lz0 = lt_vmstat("pglazyfree");
	lzd0 = lt_vmstat("pglazyfreed");
	r = madvise(p, len, adv);
	e = errno;
	rss1 = status_kb("RssAnon");
	swap1 = status_kb("VmSwap");
	lz1 = lt_vmstat("pglazyfree");
	lzd1 = lt_vmstat("pglazyfreed");
	/* a write right after the call: a page that was not freed keeps the rest */
	p[0] = 1;
	survived = p[1] == PATTERN;
	for (i = PAGE; i < len; i += PAGE) {
		unsigned char a = p[i], b = p[i + PAGE - 1];

		if (!a && !b)
			zero++;
		else if (a == PATTERN && b == PATTERN)
			kept++;
		else
			lt_die("page %zu reads %#x..%#x: neither zeroes nor the pattern",
			       i / PAGE, a, b);
	}
	printf("ret=%s rss_kb=%lld swap_kb=%lld swap_left_kb=%lld lazyfree=%lld lazyfreed=%lld zero=%ld kept=%ld survived=%d\n",
	       ret_name(r, e), rss0 - rss1, swap0 - swap1, swap1, lz1 - lz0,
	       lzd1 - lzd0, zero, kept, survived);
	return 0;
}

/* madvise(@adv) on @len bytes at @p, as a result name */
static const char *try(void *p, size_t len, int adv)
{
	int r = madvise(p, len, adv);

	return ret_name(r, errno);
}

static int cmd_errno(int adv)
{
	size_t len = 1UL << 20;
	unsigned char *p, *q;
	char path[] = "/tmp/lazyfree_exact.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || unlink(path) || ftruncate(fd, len))
		lt_die("temporary file");
	p = lt_map_anon(len, true);
	fill(p, len);
	printf("anon_private=%s", try(p, len, adv));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		lt_die("mmap shared");
	fill(p, len);
	printf(" anon_shared=%s", try(p, len, adv));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		lt_die("mmap file");
	fill(p, len);
	printf(" file_private=%s", try(p, len, adv));
	p = lt_map_anon(len, true);
	if (mlock(p, len))
		lt_die("mlock");
	printf(" mlocked=%s", try(p, len, adv));
	munlock(p, len);
	p = mmap(NULL, 2UL << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p != MAP_FAILED)
		printf(" hugetlb=%s", try(p, 2UL << 20, adv));
	else
		printf(" hugetlb=none");
	q = lt_map_anon(3 * len, true);
	fill(q, 3 * len);
	if (munmap(q + len, len))
		lt_die("munmap");
	printf(" hole=%s\n", try(q, 3 * len, adv));
	return 0;
}

static int cmd_uffd(long mib)
{
	size_t len = (size_t)mib << 20;
	unsigned char *p = lt_map_anon(len, true);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)p, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	long long rss0;
	int fd, r, e;

	fill(p, len);
	fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg))
		lt_die("userfaultfd");
	rss0 = status_kb("RssAnon");
	r = madvise(p, len, MADV_FREE);
	e = errno;
	printf("ret=%s rss_kb=%lld\n", ret_name(r, e), rss0 - status_kb("RssAnon"));
	return 0;
}

static int cmd_loop(long seconds, long mib)
{
	size_t len = (size_t)mib << 20;
	unsigned char *p = lt_map_anon(len, true);
	long long end = lt_now_ns() + seconds * 1000000000LL;
	long rounds = 0;

	while (lt_now_ns() < end) {
		fill(p, len);
		if (madvise(p, len, rounds & 1 ? MADV_DONTNEED : MADV_FREE))
			lt_die("madvise");
		rounds++;
	}
	printf("rounds=%ld\n", rounds);
	return 0;
}

/* The PFN /proc/self/pagemap gives @p, or 0 (not present) */
static unsigned long long pfn_of(int pm, const void *p)
{
	unsigned long long e;

	if (pread(pm, &e, sizeof(e), (unsigned long)p / PAGE * sizeof(e)) != sizeof(e))
		lt_die("pagemap");
	if (!(e >> 63))
		return 0;
	e &= (1ULL << 55) - 1;
	if (!e)
		lt_die("pagemap gives no PFN (not root?)");
	return e;
}

/* A minimal io_uring: one ring, one fixed buffer, synchronous submits. */
struct ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static void ring_setup(struct ring *r, void *buf, size_t len)
{
	struct io_uring_params p = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	unsigned char *sq, *cq;
	size_t sqlen, cqlen;

	r->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		lt_die("io_uring_setup");
	sqlen = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cqlen = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sqlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cqlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		       IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		lt_die("io_uring mmap");
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_BUFFERS, &iov, 1))
		lt_die("IORING_REGISTER_BUFFERS");
}

/* IORING_OP_WRITE_FIXED of the fixed buffer @buf (@len bytes) to @fd */
static void ring_write_fixed(struct ring *r, int fd, void *buf, size_t len)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	struct io_uring_cqe *cqe;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WRITE_FIXED;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->buf_index = 0;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) != 1)
		lt_die("io_uring_enter");
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		lt_die("io_uring: no completion");
	cqe = &r->cqes[head & *r->cq_mask];
	if (cqe->res != (int)len)
		lt_die("IORING_OP_WRITE_FIXED: %d", cqe->res);
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
}

#define PIN_PAGES 16
#define PATTERN2 0x5a

static int cmd_pin(const char *kind)
{
	size_t len = PIN_PAGES * PAGE, i;
	unsigned char *p = lt_map_anon(len, true), *seen = malloc(len);
	unsigned long long pfn[PIN_PAGES];
	int pm = open("/proc/self/pagemap", O_RDONLY);
	long zero = 0, same = 0, sees = 0;
	bool uring = !strcmp(kind, "iouring"), splice_ = !strcmp(kind, "vmsplice");
	struct iovec iov = { .iov_base = p, .iov_len = len };
	struct ring r;
	int pfd[2], out = -1;

	if (!uring && !splice_ && strcmp(kind, "none"))
		lt_die("pin: iouring, vmsplice or none, not %s", kind);
	lt_stay();
	if (pm < 0 || !seen)
		lt_die("pagemap");
	fill(p, len);
	if (uring) {
		ring_setup(&r, p, len);
		out = memfd_create("lazyfree_exact", 0);
		if (out < 0)
			lt_die("memfd_create");
	} else if (splice_) {
		if (pipe(pfd) || fcntl(pfd[1], F_SETPIPE_SZ, (int)(4 * len)) < (int)len)
			lt_die("pipe");
		if (vmsplice(pfd[1], &iov, 1, 0) != (ssize_t)len)
			lt_die("vmsplice");
	}
	/* after the pin: a long-term pin may have migrated the pages */
	for (i = 0; i < PIN_PAGES; i++)
		pfn[i] = pfn_of(pm, p + i * PAGE);
	if (madvise(p, len, MADV_FREE))
		lt_die("MADV_FREE");
	for (i = 0; i < len; i += PAGE)
		if (!p[i] && !p[i + PAGE - 1])
			zero++;
	memset(p, PATTERN2, len);
	for (i = 0; i < PIN_PAGES; i++)
		if (pfn_of(pm, p + i * PAGE) == pfn[i])
			same++;
	if (uring) {
		ring_write_fixed(&r, out, p, len);
		if (pread(out, seen, len, 0) != (ssize_t)len)
			lt_die("read back the fixed buffer's write");
	} else if (splice_) {
		for (i = 0; i < len; ) {
			ssize_t n = read(pfd[0], seen + i, len - i);

			if (n <= 0)
				lt_die("read the pipe");
			i += n;
		}
	}
	if (uring || splice_)
		for (i = 0; i < len; i += PAGE)
			if (seen[i] == PATTERN2 && seen[i + PAGE - 1] == PATTERN2)
				sees++;
	printf("zero=%ld same_frame=%ld holder_sees_write=", zero, same);
	if (uring || splice_)
		printf("%ld\n", sees);
	else
		printf("-\n");
	return 0;
}

/* @dir/@name as a number (v1 and v2 both print bytes) */
static long long cg_read(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lt_read_ll(path);
}

static void cg_write(const char *dir, const char *name, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lt_write_file(path, val))
		lt_die("write %s to %s", val, path);
}

static int cmd_memcg(long mib, const char *dir, long margin_kb)
{
	size_t len = (size_t)mib << 20, i;
	unsigned char *p = lt_map_anon(len, true);
	char path[512], val[64];
	long long usage;
	bool v2;
	long zero = 0, kept = 0;
	int r, e;

	snprintf(path, sizeof(path), "%s/memory.max", dir);
	v2 = !access(path, F_OK);
	snprintf(val, sizeof(val), "%d", getpid());
	cg_write(dir, "cgroup.procs", val);
	lt_stay();
	fill(p, len);
	usage = cg_read(dir, v2 ? "memory.current" : "memory.usage_in_bytes");
	snprintf(val, sizeof(val), "%lld", usage + margin_kb * 1024);
	cg_write(dir, v2 ? "memory.max" : "memory.limit_in_bytes", val);
	/*
	 * The margin is exact only while the usage stands still: a per-CPU
	 * charge stock drained by another group's charge on this CPU would
	 * uncharge up to a batch and widen it.  Say so (exit 3) rather than
	 * print a count the caller would read as lruopt's.
	 */
	if (cg_read(dir, v2 ? "memory.current" : "memory.usage_in_bytes") != usage) {
		cg_write(dir, v2 ? "memory.max" : "memory.limit_in_bytes", v2 ? "max" : "-1");
		printf("precondition lost: the group's usage moved under the new limit\n");
		return 3;
	}
	r = madvise(p + PAGE, len - PAGE, MADV_FREE);
	e = errno;
	cg_write(dir, v2 ? "memory.max" : "memory.limit_in_bytes", v2 ? "max" : "-1");
	for (i = PAGE; i < len; i += PAGE) {
		if (!p[i] && !p[i + PAGE - 1])
			zero++;
		else if (p[i] == PATTERN && p[i + PAGE - 1] == PATTERN)
			kept++;
		else
			lt_die("page %zu reads neither zeroes nor the pattern", i / PAGE);
	}
	printf("ret=%s zero=%ld kept=%ld\n", ret_name(r, e), zero, kept);
	return 0;
}

int main(int argc, char **argv)
{
	lt_prog = "lazyfree_exact";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "range"))
		return cmd_range(lt_arg("MiB", argv[2], 1, 1024), lt_free_advice(argv[3]),
				 argc > 4 && !strcmp(argv[4], "swap"));
	if (argc == 3 && !strcmp(argv[1], "errno"))
		return cmd_errno(lt_free_advice(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "uffd"))
		return cmd_uffd(lt_arg("MiB", argv[2], 1, 1024));
	if (argc == 4 && !strcmp(argv[1], "loop"))
		return cmd_loop(lt_arg("seconds", argv[2], 1, 3600),
				lt_arg("MiB", argv[3], 1, 1024));
	if (argc == 3 && !strcmp(argv[1], "pin"))
		return cmd_pin(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "memcg"))
		return cmd_memcg(lt_arg("MiB", argv[2], 1, 1024), argv[3],
				 lt_arg("margin KiB", argv[4], 0, 1L << 30));
	fprintf(stderr, "usage: lazyfree_exact range MIB free|dontneed [swap] | errno free|dontneed | uffd MIB | loop SECONDS MIB | pin iouring|vmsplice|none | memcg MIB DIR MARGIN_KB\n");
	return 2;
}
