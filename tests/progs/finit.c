// SPDX-License-Identifier: GPL-2.0
/*
 * finit FILE [PARAMS]
 *
 * Loads the module FILE with one finit_module(2) call and the parameter
 * string PARAMS ("name=value ...").  busybox insmod retries a refused load
 * with init_module(2), so the kernel reads, lays out and frees the module
 * twice for every bad value; 15-params tries about 150 bad values, and a
 * refused load costs 2-5 s on 6.1 under TCG.  Exit status: 0 loaded, 1
 * refused (the errno on stderr), 2 usage or FILE unreadable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "common.h"

int main(int argc, char **argv)
{
	int fd;

	lt_args("finit", argc, 1, 2, "FILE [PARAMS]");
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "finit: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (syscall(SYS_finit_module, fd, argc > 2 ? argv[2] : "", 0)) {
		fprintf(stderr, "finit: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
