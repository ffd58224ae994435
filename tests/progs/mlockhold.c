// SPDX-License-Identifier: GPL-2.0
/*
 * mlockhold MIB SECONDS
 *
 * mmap + populate MIB MiB of anonymous memory, mlock it, print "locked" and
 * wait (up to SECONDS, or until SIGTERM), then munlock, print "unlocked" and
 * exit 0.  Lets a test compare /proc/meminfo Mlocked while the memory is
 * held and after it was released (mlock/munlock page accounting).
 * Exit status: 0 ok, 1 syscall failure, 2 usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	long mib, seconds, page = sysconf(_SC_PAGESIZE);
	double deadline;
	size_t size, i;
	unsigned char *p;

	lt_args("mlockhold", argc, 2, 2, "MIB SECONDS");
	mib = parse_arg("mlockhold", "MIB", argv[1], 1024);
	seconds = parse_arg("mlockhold", "SECONDS", argv[2], 86400);
	setup_bounded_run(seconds);
	size = (size_t)mib << 20;
	p = lt_map_anon(size, true);
	for (i = 0; i < size; i += page)
		p[i] = 1;
	if (mlock(p, size)) {
		perror("mlockhold: mlock");
		return 1;
	}
	printf("locked\n");
	fflush(stdout);
	deadline = now_s() + seconds;
	while (!stop_requested && now_s() < deadline)
		usleep(20000);
	if (munlock(p, size)) {
		perror("mlockhold: munlock");
		return 1;
	}
	printf("unlocked\n");
	return 0;
}
