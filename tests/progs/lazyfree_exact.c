// SPDX-License-Identifier: GPL-2.0
/*
 * lazyfree_exact - what one madvise() call did to a range, for
 * tests/85-lazyfree.sh.
 *
 *   lazyfree_exact range MIB free|dontneed [swap]
 *	maps MIB MiB of anonymous memory (no THP), writes a pattern to every
 *	page, with "swap" pages out the second half (MADV_PAGEOUT; needs
 *	swap), then calls madvise() once on the whole range and prints
 *	  ret=R rss_kb=D swap_kb=S lazyfree=L zero=Z kept=K survived=V
 *	R: its return (0 or -errno name); D, S: how much RssAnon and VmSwap
 *	of /proc/self/status dropped; L: pglazyfree's growth; Z, K: pages
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
 */
#include "common.h"
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

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

static int cmd_range(long mib, int adv, bool swap)
{
	size_t len = (size_t)mib << 20, i;
	unsigned char *p = lt_map_anon(len, true);
	long long rss0, swap0, lz0, rss1, swap1, lz1;
	long zero = 0, kept = 0;
	int r, e, survived;

	fill(p, len);
	if (swap && madvise(p + len / 2, len / 2, MADV_PAGEOUT))
		lt_die("MADV_PAGEOUT");
	rss0 = status_kb("RssAnon");
	swap0 = status_kb("VmSwap");
	lz0 = lt_vmstat("pglazyfree");
	r = madvise(p, len, adv);
	e = errno;
	rss1 = status_kb("RssAnon");
	swap1 = status_kb("VmSwap");
	lz1 = lt_vmstat("pglazyfree");
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
	printf("ret=%s rss_kb=%lld swap_kb=%lld lazyfree=%lld zero=%ld kept=%ld survived=%d\n",
	       ret_name(r, e), rss0 - rss1, swap0 - swap1, lz1 - lz0, zero, kept,
	       survived);
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
	fprintf(stderr, "usage: lazyfree_exact range MIB free|dontneed [swap] | errno free|dontneed | uffd MIB | loop SECONDS MIB\n");
	return 2;
}
