// SPDX-License-Identifier: GPL-2.0
/*
 * sysfuzz [-r ROOT] KIND FILE [ARGS]
 *
 * Throws a corpus of bad inputs at one writable lruopt sysfs attribute and
 * checks, for every one of them, that the write fails with EINVAL (kernfs
 * hands a store method at most one page: an 8 KiB write reaches the module
 * cut to its first 4096 bytes), that the value read back is unchanged, and
 * that every readable
 * attribute under ROOT (default /sys/kernel/lruopt) still reads sanely:
 * the read succeeds, is non-empty, shorter than a page, has no NUL byte and
 * ends in a newline; single-value files are exactly one line.
 *
 * KIND and ARGS:
 *   bool              a switch: exactly "0" or "1", optional newline
 *   uint MIN MAX      a number in MIN..MAX
 *   cpulist NBITS     a CPU list (cpulist_parse(), NBITS = nr_cpu_ids)
 *   reset             stats/reset: only 0 is accepted; FILE is write-only,
 *                     so "unchanged" is checked on the sibling "calls" or
 *                     first counter: it must not drop to a lower value
 *
 * The corpus (per kind): empty line, whitespace, signs, garbage, trailing
 * garbage, embedded NULs (before, inside and after a valid value), other
 * bases, exponents, out of range by one on each side, 32- and 64-bit
 * overflow, strings of 4095/4096 bytes and of 8 KiB, partial writes (a write
 * count that cuts a string to an invalid prefix), and a second write on the
 * same open file that is garbage after a first valid one.
 *
 * Output: one line per failure ("FAIL ..."), then
 *   sysfuzz: FILE: N bad inputs, F failures, R reads checked
 * Exit status: 0 all rejected and unchanged, 1 a failure, 2 usage.
 *
 * sysfuzz -l KIND [ARGS] -: write nothing; list the corpus inputs that can
 * be a module parameter's value on an insmod command line (no blank,
 * control byte, quote or NUL; at most 4096 bytes), one per line, so that
 * the module parameters are fuzzed with the same corpus as their sysfs
 * files (tests/15-params.sh).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096

static const char *root = "/sys/kernel/lruopt";
static const char *file;
static char watch[512];		/* the file whose value must stay unchanged */
static int monotonic;		/* reset: the watched counter may only grow */
static int empty_ok;		/* cpulist: a lone newline is the empty set */
static long tried, failures, reads;
static int list_only;		/* -l: print argv-safe inputs, write nothing */

struct input {
	char buf[3 * PAGE];
	size_t len;		/* bytes passed to write() */
	char name[96];
};

static void failf(const char *what, const struct input *in, const char *why)
{
	failures++;
	printf("FAIL %s: %s [%s]: %s\n", file, what, in ? in->name : "-", why);
}

/* Read a whole attribute; -1 on error.  Sets *nul if it had a NUL byte. */
static ssize_t read_attr(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	if (n < 0)
		return -1;
	buf[total] = 0;
	return total;
}

static int multi_line(const char *name)
{
	return !strcmp(name, "callers") || !strcmp(name, "targets");
}

/* Every readable attribute under dir reads sanely. */
static void check_reads(const char *dir)
{
	char path[1024], buf[2 * PAGE], why[160];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d) {
		failf("opendir", NULL, dir);
		return;
	}
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			check_reads(path);
			continue;
		}
		if (!(st.st_mode & 0444))
			continue;	/* write-only (stats/reset) */
		reads++;
		n = read_attr(path, buf, sizeof(buf));
		why[0] = 0;
		if (n < 0)
			snprintf(why, sizeof(why), "read failed: %s", strerror(errno));
		else if (n == 0)
			snprintf(why, sizeof(why), "empty read");
		else if (n >= PAGE)
			snprintf(why, sizeof(why), "%zd bytes", n);
		else if (strlen(buf) != (size_t)n)
			snprintf(why, sizeof(why), "NUL byte in the value");
		else if (buf[n - 1] != '\n')
			snprintf(why, sizeof(why), "no final newline");
		else if (!multi_line(de->d_name) && strchr(buf, '\n') != buf + n - 1)
			snprintf(why, sizeof(why), "more than one line");
		if (why[0])
			failf(path, NULL, why);
	}
	closedir(d);
}

static int read_watch(char *buf, size_t size)
{
	return read_attr(watch, buf, size) < 0 ? -1 : 0;
}

/* One bad write (or two with @first: a valid one, then the bad one). */
static void try_bad(const struct input *in, const char *first)
{
	char before[PAGE], after[PAGE], why[256];
	ssize_t n;
	int fd, err;

	if (list_only)
		return;		/* only add() lists inputs */
	tried++;
	fd = open(file, O_WRONLY);
	if (fd < 0) {
		failf("open", in, strerror(errno));
		return;
	}
	if (first && write(fd, first, strlen(first)) != (ssize_t)strlen(first)) {
		failf("first (valid) write", in, strerror(errno));
		close(fd);
		return;
	}
	/* after the valid first write: that one may change the value */
	if (read_watch(before, sizeof(before))) {
		failf("read before", in, strerror(errno));
		close(fd);
		return;
	}
	n = write(fd, in->buf, in->len);
	err = errno;
	close(fd);
	if (n >= 0) {
		snprintf(why, sizeof(why), "accepted (write returned %zd)", n);
		failf("write", in, why);
	} else if (err != EINVAL) {
		snprintf(why, sizeof(why), "failed with %s, not EINVAL",
			 strerror(err));
		failf("write", in, why);
	}
	if (read_watch(after, sizeof(after))) {
		failf("read after", in, strerror(errno));
		return;
	}
	if (monotonic ? strtoull(after, NULL, 10) < strtoull(before, NULL, 10)
		      : strcmp(before, after) != 0) {
		snprintf(why, sizeof(why), "value changed: %.40s -> %.40s",
			 before, after);
		failf("value", in, why);
	}
	check_reads(root);
}

static void add(const char *name, const void *bytes, size_t len)
{
	struct input in;

	if (len > sizeof(in.buf))
		len = sizeof(in.buf);
	if (list_only) {
		const unsigned char *b = bytes;
		size_t i;

		for (i = 0; i < len; i++)
			if (b[i] <= ' ' || b[i] > '~' || b[i] == '"' || b[i] == '\'')
				return;
		if (len && len <= PAGE)
			printf("%.*s\n", (int)len, (const char *)bytes);
		return;
	}
	memcpy(in.buf, bytes, len);
	in.len = len;
	snprintf(in.name, sizeof(in.name), "%s", name);
	try_bad(&in, NULL);
}

static void adds(const char *s)
{
	char name[96];
	size_t i, j = 0;

	/* the name shows control bytes as \n, \t, \xNN */
	for (i = 0; s[i] && j < sizeof(name) - 5; i++) {
		unsigned char c = s[i];

		if (c == '\n')
			j += snprintf(name + j, sizeof(name) - j, "\\n");
		else if (c < 32 || c > 126)
			j += snprintf(name + j, sizeof(name) - j, "\\x%02x", c);
		else
			name[j++] = c;
	}
	name[j] = 0;
	add(name, s, strlen(s));
}

/* @s and @s + newline */
static void adds2(const char *s)
{
	char buf[256];

	adds(s);
	snprintf(buf, sizeof(buf), "%s\n", s);
	adds(buf);
}

/* adds2() of a printf-formatted value */
static void __attribute__((format(printf, 1, 2))) adds2f(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	adds2(buf);
}

static void add_fill(const char *name, char c, size_t len, int nl)
{
	static char buf[3 * PAGE];

	memset(buf, c, len);
	if (nl)
		buf[len++] = '\n';
	add(name, buf, len);
}

/*
 * Inputs no attribute of lruopt accepts, built around @valid, a value the
 * attribute does accept.  For a CPU list a lone newline is valid (the
 * empty set) and left out.
 */
static void common_corpus(const char *valid)
{
	char buf[64];
	size_t vl = strlen(valid);

	if (vl > sizeof(buf) - 4) {	/* room for the NUL variants below */
		failf("corpus", NULL, "current value too long to build the corpus on");
		return;
	}
	if (!empty_ok)
		adds("\n");
	adds("\n\n");
	adds2(" ");
	adds2("\t");
	adds2("abc");
	adds2("x1");
	adds2("1x");
	adds2("-");
	adds2("+");
	adds2("-1");
	adds2("0x1");
	adds2("1e3");
	adds2("1.0");
	adds2("\x01");
	adds2("\xff");
	adds2("\x7f");
	adds("1\n1");
	adds("1\n\n");
	adds("0\r\n");
	adds2("18446744073709551616");
	adds2("99999999999999999999999999999999");
	/* embedded NULs around a valid value */
	add("\\0", "\0", 1);
	add("\\0\\n", "\0\n", 2);
	snprintf(buf, sizeof(buf), "%s", valid);
	buf[vl] = 0;
	add("valid\\0", buf, vl + 1);
	memcpy(buf + vl + 1, "7\n", 2);
	add("valid\\07\\n", buf, vl + 3);
	buf[0] = 0;
	memcpy(buf + 1, valid, vl);
	add("\\0valid", buf, vl + 1);
	/* leading and trailing blanks */
	adds2f(" %s", valid);
	adds2f("%s ", valid);
	snprintf(buf, sizeof(buf), "%s\t\n", valid);
	adds(buf);
	/* huge: 4095 + newline, 4096 (a full page), 8 KiB (cut to 4096) */
	add_fill("4095 x 'a' + \\n", 'a', PAGE - 1, 1);
	add_fill("4096 x '9'", '9', PAGE, 0);
	add_fill("4096 x ' '", ' ', PAGE, 0);
	add_fill("8192 x '1'", '1', 2 * PAGE, 0);
	/* partial writes: the count cuts the string to an invalid prefix */
	add("partial '-5' count 1", "-5", 1);
	add("partial 'x1' count 1", "x1", 1);
	add("partial ' 1' count 1", " 1", 1);
	/* a valid write, then garbage on the same open file */
	{
		struct input in = { .len = 3 };
		char first[64];

		snprintf(first, sizeof(first), "%s\n", valid);
		memcpy(in.buf, "zz\n", 3);
		snprintf(in.name, sizeof(in.name),
			 "'zz' after a valid '%s' on one open file", valid);
		try_bad(&in, first);
	}
}

/* The current value of @watch, without its newline. */
static void current(char *buf, size_t size)
{
	if (read_watch(buf, size))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: sysfuzz [-r ROOT] bool|uint MIN MAX|cpulist NBITS|reset FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	char cur[PAGE];
	const char *kind;
	int i = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "-r")) {
		root = argv[2];
		i = 3;
	} else if (argc > 1 && !strcmp(argv[1], "-l")) {
		list_only = 1;
		i = 2;
	}
	if (argc - i < 2)
		return usage();
	kind = argv[i++];
	file = argv[argc - 1];
	snprintf(watch, sizeof(watch), "%s", file);

	if (!strcmp(kind, "bool") && argc - i == 1) {
		current(cur, sizeof(cur));
		common_corpus(cur);
		adds2("2");
		adds2("01");
		adds2("10");
		adds2("00");
		adds2("11");
		adds2("+1");
		adds2("-0");
		adds2("true");
		adds2("false");
		adds2("on");
		adds2("off");
		adds2("y");
		adds2("Y");
		adds2("n");
	} else if (!strcmp(kind, "uint") && argc - i == 3) {
		unsigned long long min = strtoull(argv[i], NULL, 10);
		unsigned long long max = strtoull(argv[i + 1], NULL, 10);

		current(cur, sizeof(cur));
		common_corpus(cur);
		adds2f("%llu", max + 1);
		if (max)	/* 0 * 10 is 0: in range when max is 0 */
			adds2f("%llu", max * 10);
		if (min > 0) {
			adds2f("%llu", min - 1);
		}
		adds2f("+%llu", min);
		adds2f("-%llu", min);
		adds2f("0x%llx", min);
		adds2("4294967296");
		adds2("4294967295");	/* above every lruopt maximum */
		adds2("-2147483648");
		adds2("18446744073709551615");
	} else if (!strcmp(kind, "cpulist") && argc - i == 2) {
		long nbits = atol(argv[i]);

		empty_ok = 1;
		current(cur, sizeof(cur));
		common_corpus(cur);
		/* and around a non-empty list, where blanks and NULs matter */
		if (cur[0])
			common_corpus("");
		else
			common_corpus("0");
		adds2f("%ld", nbits);
		adds2f("0-%ld", nbits);
		adds2("4096");
		adds2("1-0");
		adds2("0-");
		adds2("0,x");
		adds2("a-b");
		adds2("0-1-2");
		adds2("0:");
	} else if (!strcmp(kind, "reset") && argc - i == 1) {
		char *slash = strrchr(file, '/');

		monotonic = 1;
		snprintf(watch, sizeof(watch), "%.*s/calls",
			 slash ? (int)(slash - file) : 1, slash ? file : ".");
		if (access(watch, R_OK)) {
			/* no "calls" (memcg, munlock, quiet): any counter */
			char dir[256];
			struct dirent *de;
			DIR *d;

			snprintf(dir, sizeof(dir), "%.*s",
				 slash ? (int)(slash - file) : 1,
				 slash ? file : ".");
			d = opendir(dir);
			while (d && (de = readdir(d)))
				if (de->d_name[0] != '.' &&
				    strcmp(de->d_name, "reset"))
					break;
			if (!d || !de) {
				fprintf(stderr, "sysfuzz: %s: no counter beside reset\n",
					dir);
				return 2;
			}
			snprintf(watch, sizeof(watch), "%s/%.255s", dir,
				 de->d_name);
			closedir(d);
		}
		common_corpus("0");
		adds2("1");
		adds2("2");
		adds2("+0");
		adds2("-0");
		adds2("reset");
	} else {
		return usage();
	}
	if (list_only)
		return 0;
	printf("sysfuzz: %s: %ld bad inputs, %ld failures, %ld reads checked\n",
	       file, tried, failures, reads);
	return failures ? 1 : 0;
}
