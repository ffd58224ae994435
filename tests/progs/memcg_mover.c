// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_mover PID SECONDS CGDIR_A CGDIR_B [SLEEP_US]
 *
 * Moves process PID back and forth between two cgroup-v1 memory cgroups by
 * writing PID to CGDIR_A/cgroup.procs, then CGDIR_B/cgroup.procs, ... until
 * SECONDS have passed, SIGTERM arrives or PID exits.  With
 * memory.move_charge_at_immigrate=3 on the destination, each write runs the
 * charge mover (mem_cgroup_move_charge) in this process: this process is
 * mc.moving_task while it walks PID's page tables.
 * Prints "memcg_mover: N moves in S s, max M ms per move".
 * Exit status: 0 ok (also when PID exited, reported as "target exited"),
 * 1 a write failed for another reason or no move succeeded, 2 usage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "common.h"

static int write_pid(const char *dir, const char *pid)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, pid, strlen(pid));
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long pid, seconds, sleep_us = 0;
	unsigned long moves = 0;
	double start, deadline, worst = 0;
	const char *dirs[2];
	int exited = 0;

	lt_args("memcg_mover", argc, 4, 5, "PID SECONDS CGDIR_A CGDIR_B [SLEEP_US]");
	pid = parse_arg("memcg_mover", "PID", argv[1], 1 << 22);
	seconds = parse_arg("memcg_mover", "SECONDS", argv[2], 86400);
	dirs[0] = argv[3];
	dirs[1] = argv[4];
	if (argc > 5)
		sleep_us = parse_arg("memcg_mover", "SLEEP_US", argv[5], 1000000);
	setup_bounded_run(seconds);

	start = now_s();
	deadline = start + seconds;
	while (!stop_requested && now_s() < deadline) {
		double t0 = now_s(), dt;
		int r = write_pid(dirs[moves & 1], argv[1]);

		dt = now_s() - t0;
		if (r == -ESRCH || kill(pid, 0)) {
			exited = 1;
			break;
		}
		if (r) {
			fprintf(stderr, "memcg_mover: moving %ld to %s failed: %s\n",
				pid, dirs[moves & 1], strerror(-r));
			return 1;
		}
		if (dt > worst)
			worst = dt;
		moves++;
		if (sleep_us)
			usleep(sleep_us);
	}
	printf("memcg_mover: %lu moves in %.1f s, max %.1f ms per move%s\n",
	       moves, now_s() - start, worst * 1e3,
	       exited ? ", target exited" : "");
	return moves ? 0 : 1;
}
