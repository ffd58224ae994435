// SPDX-License-Identifier: GPL-2.0
/*
 * finit_insmod PATH [PARAMS]: load a module with exactly one finit_module(2)
 * call and print "ok" or "err <ERRNO> <number>".
 *
 * busybox insmod retries a failed finit_module(2) with init_module(2), so a
 * module whose init refuses runs that init (and prints its message) twice;
 * the RT refusal test counts messages per attempt and needs one attempt.
 * Exit status: 0 loaded, 1 refused by the kernel, 2 usage or open error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *errno_name(int e)
{
	switch (e) {
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOEXEC: return "ENOEXEC";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case EKEYREJECTED: return "EKEYREJECTED";
	default: return "E?";
	}
}

int main(int argc, char **argv)
{
	int fd, e;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: finit_insmod PATH [PARAMS]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "finit_insmod: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (syscall(SYS_finit_module, fd, argc == 3 ? argv[2] : "", 0) == 0) {
		puts("ok");
		return 0;
	}
	e = errno;
	printf("err %s %d\n", errno_name(e), e);
	return 1;
}
