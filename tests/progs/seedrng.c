// SPDX-License-Identifier: GPL-2.0
/*
 * seedrng FILE
 *
 * Credit the bytes of FILE (at most 512) to the kernel's entropy pool with
 * RNDADDENTROPY, as a distribution's boot-time seed service does.  The test
 * VM has no entropy source (no virtio-rng, the default QEMU CPU model has
 * no RDRAND) and few interrupts on a nohz_full boot: without a seed, the
 * first read of /dev/urandom (busybox mke2fs makes a UUID) runs the kernel's
 * jitter loop, which under TCG took over 22 s and a soft-lockup report.
 * tests/vm/mkinitramfs writes FILE from the host's /dev/urandom, a fresh
 * seed for every image.  Exit 0 ok, 1 error, 2 usage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/random.h>
#include <sys/ioctl.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct {
		struct rand_pool_info info;
		unsigned char buf[512];
	} seed;
	ssize_t n;
	int fd;

	lt_args("seedrng", argc, 1, 1, "FILE");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		lt_die("open %s", argv[1]);
	n = read(fd, seed.buf, sizeof(seed.buf));
	if (n <= 0)
		lt_die("read %s", argv[1]);
	close(fd);
	seed.info.entropy_count = n * 8;
	seed.info.buf_size = n;
	fd = open("/dev/urandom", O_WRONLY);
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &seed.info))
		lt_die("RNDADDENTROPY");
	close(fd);
	return 0;
}
