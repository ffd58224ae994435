/*
 * ab_fadvise DIR NPROC CALLS PAGES
 *
 * The fadvise(DONTNEED) storm with a drain in every call: NPROC processes, process i pinned to CPU
 * i % ncpus, each with its own file DIR/ab_fadvise.<i> of PAGES pages.
 * Each process keeps the file's first page mapped (MAP_SHARED, read once),
 * like a reader that has the file mmapped, and then CALLS times
 *   pwrite()s pages 1..PAGES-1 (new page-cache folios: they sit in this
 *   CPU's LRU batch) and calls posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED).
 * DONTNEED writes the dirty pages back and invalidates the cache; the mapped
 * first page cannot be invalidated, so every call finds a failure and runs
 * lru_add_drain_all() ("the folio may be in a remote CPU's batch"), while
 * the other processes keep refilling their CPUs' batches.  Only the
 * posix_fadvise() call is timed.  DIR must be on a block-backed filesystem
 * (on tmpfs DONTNEED is a no-op).  (Without the mapped page, re-writing and
 * dropping a file on ext4 on brd invalidates every folio - writeback to a
 * RAM disk completes at once - and almost no call reaches the drain.)
 * Prints one line:
 *   ab_fadvise procs=P calls=N median_us=X p90_us=Y p99_us=Z max_us=M
 *              mean_us=W wall_s=S calls_per_s=R
 * Exit status: 0 ok, 1 a syscall failed, 2 usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "ab_common.h"

static void child(const char *dir, int idx, long calls, long pages,
		  long long *lat, int go_fd, int ncpu)
{
	long page = sysconf(_SC_PAGESIZE), i, pg;
	char path[4096], buf[4096], c;
	volatile unsigned char *m;
	long long t0;
	int fd;

	ab_pin(idx % ncpu);
	snprintf(path, sizeof(path), "%s/ab_fadvise.%d", dir, idx);
	fd = open(path, O_RDWR);
	if (fd < 0)
		ab_die("open %s", path);
	m = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		ab_die("mmap %s", path);
	(void)m[0];
	memset(buf, 'a' + idx, sizeof(buf));
	if (read(go_fd, &c, 1) != 0)	/* start barrier: EOF when parent closes */
		ab_die("barrier");
	for (i = 0; i < calls; i++) {
		for (pg = 1; pg < pages; pg++)
			if (pwrite(fd, buf, page, pg * page) != page)
				ab_die("pwrite %s", path);
		t0 = ab_now_ns();
		errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (errno)
			ab_die("posix_fadvise %s", path);
		lat[i] = ab_now_ns() - t0;
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	long nproc, calls, pages, page = sysconf(_SC_PAGESIZE), i, pg, n;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), go[2], status, bad = 0;
	long long *lat, t0, wall;
	char path[4096], buf[4096];
	pid_t *pids;

	ab_prog = "ab_fadvise";
	if (argc != 5) {
		fprintf(stderr, "usage: ab_fadvise DIR NPROC CALLS PAGES\n");
		return 2;
	}
	nproc = ab_arg("NPROC", argv[2], 1, 256);
	calls = ab_arg("CALLS", argv[3], 1, 10000000);
	pages = ab_arg("PAGES", argv[4], 2, 65536);
	n = nproc * calls;
	lat = mmap(NULL, n * sizeof(*lat), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc(nproc, sizeof(*pids));
	if (lat == MAP_FAILED || !pids)
		ab_die("allocating %ld samples", n);
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < nproc; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/ab_fadvise.%ld", argv[1], i);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			ab_die("create %s", path);
		for (pg = 0; pg < pages; pg++)
			if (pwrite(fd, buf, page, pg * page) != page)
				ab_die("write %s", path);
		if (fsync(fd))
			ab_die("fsync %s", path);
		close(fd);
	}
	if (pipe(go))
		ab_die("pipe");
	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			ab_die("fork");
		if (!pids[i]) {
			close(go[1]);
			child(argv[1], (int)i, calls, pages, lat + i * calls, go[0], ncpu);
		}
	}
	close(go[0]);
	usleep(100000);		/* let every child map its page and block */
	t0 = ab_now_ns();
	close(go[1]);
	for (i = 0; i < nproc; i++) {
		if (waitpid(pids[i], &status, 0) < 0)
			ab_die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	wall = ab_now_ns() - t0;
	if (bad) {
		fprintf(stderr, "ab_fadvise: %d of %ld processes failed\n", bad, nproc);
		return 1;
	}
	for (i = 0; i < nproc; i++) {
		snprintf(path, sizeof(path), "%s/ab_fadvise.%ld", argv[1], i);
		unlink(path);
	}
	{
		double mean = ab_mean(lat, n);
		long long p50 = ab_quantile(lat, n, 0.5);
		long long p90 = ab_quantile(lat, n, 0.9);
		long long p99 = ab_quantile(lat, n, 0.99);

		printf("ab_fadvise procs=%ld calls=%ld median_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f mean_us=%.1f wall_s=%.3f calls_per_s=%.0f\n",
		       nproc, n, p50 / 1e3, p90 / 1e3, p99 / 1e3, lat[n - 1] / 1e3,
		       mean / 1e3, wall / 1e9, n / (wall / 1e9));
	}
	return 0;
}
