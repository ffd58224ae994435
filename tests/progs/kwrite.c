// SPDX-License-Identifier: GPL-2.0
/*
 * kwrite [-n] [-u UID] FILE STRING
 *
 * Writes STRING to FILE with exactly one open(O_WRONLY) + one write(), and
 * reports the outcome on stdout so the shell tests can check the precise
 * errno (busybox echo only says "write error").  -n appends a newline, like
 * `echo`; -u drops to UID (and GID) first, to check that only root may
 * write.  Output (one line):
 *   ok N              write returned N (bytes)
 *   open-err NAME     open failed with errno NAME (e.g. EACCES)
 *   write-err NAME    write failed with errno NAME (e.g. EINVAL)
 * Exit status: 0 when the write succeeded, 1 when open/write failed,
 * 2 on usage error.  The errno names cover what sysfs can return.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>
#include <grp.h>

static const char *errname(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case E2BIG: return "E2BIG";
	case ERANGE: return "ERANGE";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case EAGAIN: return "EAGAIN";
	default: return "E?";
	}
}

int main(int argc, char **argv)
{
	const char *file, *s;
	int nl = 0, fd, opt;
	long uid = -1;
	size_t len;
	char *buf;
	ssize_t n;

	while ((opt = getopt(argc, argv, "+nu:")) != -1) {
		switch (opt) {
		case 'n':
			nl = 1;
			break;
		case 'u':
			uid = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: kwrite [-n] [-u UID] FILE STRING\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: kwrite [-n] [-u UID] FILE STRING\n");
		return 2;
	}
	file = argv[optind];
	s = argv[optind + 1];
	if (uid >= 0) {
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
			perror("kwrite: dropping privileges");
			return 2;
		}
	}
	len = strlen(s);
	buf = malloc(len + 2);
	if (!buf)
		return 2;
	memcpy(buf, s, len);
	if (nl)
		buf[len++] = '\n';

	fd = open(file, O_WRONLY);
	if (fd < 0) {
		printf("open-err %s\n", errname(errno));
		return 1;
	}
	n = write(fd, buf, len);
	if (n < 0) {
		printf("write-err %s\n", errname(errno));
		close(fd);
		return 1;
	}
	/* close() of a sysfs file does not report store errors, but check anyway. */
	if (close(fd)) {
		printf("write-err %s\n", errname(errno));
		return 1;
	}
	printf("ok %zd\n", n);
	return 0;
}
