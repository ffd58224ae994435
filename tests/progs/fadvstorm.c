/*
 * fadvstorm NPROC ITERS DIR [KIB] [LABEL]
 *
 * The fadvise(DONTNEED) storm: NPROC processes, process i pinned to CPU
 * i % ncpus, each ITERS times re-creates its own file DIR/fadvstorm.<i>
 * (O_TRUNC), writes KIB KiB (default 64) to it and calls
 * posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), the pattern of build
 * systems and loggers that drop each blob from the page cache after
 * writing it.  generic_fadvise() calls lru_add_drain_all() whenever some
 * folio of the range cannot be invalidated (dirty, mapped, in another CPU's
 * LRU batch, buffers still busy); on the test VM's ext2-layout filesystem on
 * brd the written folios are clean again by the time fadvise looks, so each
 * process keeps the first page of its file mapped (MAP_SHARED, read) during
 * the call, which makes every call drain while the other writers keep
 * refilling their CPUs' LRU batches.  With FADVSTORM_NOMAP=1 in the
 * environment the page is not mapped (on such a filesystem: no drain), the
 * floor of the same call.  With FADVSTORM_ONCE=1 each process writes and
 * maps its file once, before the start, and then only calls fadvise: the
 * hint drain under a storm without the writeback of a rewritten file
 * (each call's unmovable mapped page goes to its CPU's deactivate batch,
 * so every call still drains, and every CPU has something batched).
 * With FADVSTORM_TOUCH=1 each process also updates its file's times
 * (futimens) before each call, outside the timed part: ext4 then looks up
 * the inode's block, which keeps a buffer head in that CPU's bh LRU, as
 * any writer or metadata update does; only that CPU can drop it (an
 * interrupt-disabled per-CPU array), so each drain finds work for every
 * other CPU.
 * All processes start together (a pipe barrier); every fadvise call is
 * timed with CLOCK_MONOTONIC and the pooled distribution is printed as
 *   RESULT name=LABEL nproc=P n=N min_ns=.. median_ns=.. p90_ns=..
 *          p99_ns=.. max_ns=.. mean_ns=.. wall_ms=.. errors=E
 * Exit 0 = ok, 1 = failure, 2 = usage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* (Re)create @path with @len bytes of @buf; map its first page unless @nomap. */
static int open_and_map(const char *path, const char *buf, size_t len,
			int nomap, int idx, int *fd, volatile char **map)
{
	*fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (*fd < 0 || write(*fd, buf, len) != (ssize_t)len) {
		perror("fadvstorm: write");
		return 1;
	}
	*map = NULL;
	if (nomap)
		return 0;
	*map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, *fd, 0);
	if (*map == MAP_FAILED || (*map)[0] != 'a' + idx) {
		perror("fadvstorm: mmap");
		*map = NULL;
		return 1;
	}
	return 0;
}

static void unmap_and_close(int *fd, volatile char **map)
{
	if (*map)
		munmap((void *)*map, 4096);
	if (*fd >= 0)
		close(*fd);
	*map = NULL;
	*fd = -1;
}

static int worker(int idx, long iters, const char *dir, long kib,
		  uint64_t *lat, int start_fd)
{
	const char *nm = getenv("FADVSTORM_NOMAP"), *on = getenv("FADVSTORM_ONCE");
	int nomap = nm && *nm && strcmp(nm, "0");
	int once = on && *on && strcmp(on, "0");
	const char *tc = getenv("FADVSTORM_TOUCH");
	int touch = tc && *tc && strcmp(tc, "0");
	volatile char *map = NULL;
	int fd = -1, rc;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	size_t len = (size_t)kib << 10;
	char path[4096], c;
	cpu_set_t set;
	char *buf;

	CPU_ZERO(&set);
	CPU_SET(idx % ncpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("fadvstorm: sched_setaffinity");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/fadvstorm.%d", dir, idx);
	buf = malloc(len);
	if (!buf)
		return 1;
	memset(buf, 'a' + idx, len);
	if (once && open_and_map(path, buf, len, nomap, idx, &fd, &map))
		return 1;
	if (read(start_fd, &c, 1) < 0)	/* barrier: EOF when the parent closes */
		return 1;
	for (i = 0; i < iters && !stop_requested; i++) {
		uint64_t t0;

		if (!once && open_and_map(path, buf, len, nomap, idx, &fd, &map))
			return 1;
		if (touch && futimens(fd, NULL)) {
			perror("fadvstorm: futimens");
			return 1;
		}
		t0 = now_ns();
		rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		lat[i] = now_ns() - t0;
		if (rc) {
			fprintf(stderr, "fadvstorm: posix_fadvise: %s\n", strerror(rc));
			return 1;
		}
		if (!once)
			unmap_and_close(&fd, &map);
	}
	unmap_and_close(&fd, &map);
	unlink(path);
	if (stop_requested) {
		fprintf(stderr, "fadvstorm: worker %d stopped after %ld calls\n", idx, i);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long nproc, iters, kib = 64, i, n;
	const char *dir, *label = "fadvstorm";
	uint64_t *lat, sum = 0;
	double t0, wall;
	int start[2], errors = 0;
	pid_t *pids;

	lt_args("fadvstorm", argc, 3, 5, "NPROC ITERS DIR [KIB] [LABEL]");
	nproc = parse_arg("fadvstorm", "NPROC", argv[1], 256);
	iters = parse_arg("fadvstorm", "ITERS", argv[2], 1000000);
	dir = argv[3];
	if (argc > 4)
		kib = parse_arg("fadvstorm", "KIB", argv[4], 1 << 20);
	if (argc > 5)
		label = argv[5];
	n = nproc * iters;
	setup_bounded_run(3600);
	lat = mmap(NULL, n * sizeof(*lat), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc(nproc, sizeof(*pids));
	if (lat == MAP_FAILED || !pids || pipe(start)) {
		perror("fadvstorm: setup");
		return 1;
	}
	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fadvstorm: fork");
			return 1;
		}
		if (pids[i] == 0) {
			close(start[1]);
			_exit(worker(i, iters, dir, kib, lat + i * iters, start[0]));
		}
	}
	close(start[0]);
	usleep(100000);		/* let every worker reach the barrier */
	t0 = now_s();
	close(start[1]);
	for (i = 0; i < nproc; i++) {
		int st;

		if (stop_requested)	/* forward a stop to the workers */
			kill(pids[i], SIGTERM);
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			errors++;
	}
	wall = now_s() - t0;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	for (i = 0; i < n; i++)
		sum += lat[i];
	printf("RESULT name=%s nproc=%ld n=%ld min_ns=%llu median_ns=%llu p90_ns=%llu p99_ns=%llu max_ns=%llu mean_ns=%llu wall_ms=%llu errors=%d\n",
	       label, nproc, n, (unsigned long long)lat[0],
	       (unsigned long long)lat[n / 2],
	       (unsigned long long)lat[(n * 9) / 10],
	       (unsigned long long)lat[(n * 99) / 100],
	       (unsigned long long)lat[n - 1], (unsigned long long)(sum / n),
	       (unsigned long long)(wall * 1000), errors);
	return errors ? 1 : 0;
}
