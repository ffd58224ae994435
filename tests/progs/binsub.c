// SPDX-License-Identifier: GPL-2.0
/*
 * binsub IN OUT OLD NEW
 *
 * Copies the file IN to OUT with every occurrence of the byte string OLD
 * replaced by NEW, which must have the same length (nothing moves).
 * foreign_events (tests/lib.sh) makes "an lruopt_events.ko of another
 * build" this way for 16-trace and 17-loader: the companion with another
 * trace ABI string (Kbuild: LRUOPT_EVENTS_ABI), so that lruopt.ko's
 * refusal can be tested without a second build.  busybox
 * sed cannot be trusted with the NUL bytes of an ELF file.  Prints the
 * number of replacements.  Exit status: 0 at least one, 1 none, 2 usage or
 * I/O error.
 */
#define _GNU_SOURCE
#include "common.h"

int main(int argc, char **argv)
{
	size_t n, len, cap = 1 << 20, i, hits = 0;
	char *buf, *more;
	FILE *f;

	lt_args("binsub", argc, 4, 4, "IN OUT OLD NEW");
	len = strlen(argv[3]);
	if (!len || strlen(argv[4]) != len) {
		fprintf(stderr, "binsub: OLD and NEW must be non-empty and of one length\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		fprintf(stderr, "binsub: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	buf = malloc(cap);
	n = 0;
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
		more = realloc(buf, cap);
		if (!more)
			free(buf);
		buf = more;
	}
	if (!buf || ferror(f)) {
		fprintf(stderr, "binsub: cannot read %s\n", argv[1]);
		return 2;
	}
	fclose(f);
	for (i = 0; i + len <= n; i++) {
		if (!memcmp(buf + i, argv[3], len)) {
			memcpy(buf + i, argv[4], len);
			hits++;
			i += len - 1;
		}
	}
	f = fopen(argv[2], "wb");
	if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "binsub: cannot write %s\n", argv[2]);
		return 2;
	}
	printf("%zu\n", hits);
	return hits ? 0 : 1;
}
