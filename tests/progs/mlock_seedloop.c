// SPDX-License-Identifier: GPL-2.0
/*
 * mlock_seedloop ITERS SAMPLES
 *
 * The test_mlock loop of seeds/000 (Tao Ma, "mm: do not drain pagevecs for
 * mlock", 2011): one iteration mlock()s and munlock()s three small stack
 * buffers (24, 56 and 4168 bytes), splitting and re-merging the stack VMA.
 * SAMPLES pairs of samples, each timing ITERS iterations with the stock walk
 * and with lruopt's batched walk (ABBA order, toggling
 * /sys/kernel/lruopt/munlock/enabled), pinned to the last CPU.  Short
 * samples (ITERS ~ 100: a few ms) are rarely stretched by the emulator's
 * shared host, so the low percentiles are the precise figure.
 *   RESULT bench=seedloop-summary variant=V samples=N iters=I min=.. p10=..
 *          median=.. max=..   (us per iteration)
 *   RESULT bench=seedloop-ratio stock_over_lruopt=R min_ratio=M p10_ratio=P
 *     (medians, minimums, 10th percentiles; > 1 means lruopt is faster)
 * Exit status: 0 ok, 1 failure, 2 usage.
 */
#include "munlock_util.h"
#include "seed_mlock.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const name[2] = { "stock", "lruopt" };
	double *us[2], med[2], p10[2];
	long iters, samples, r, i;
	int k, n[2] = { 0, 0 };

	lt_prog = "mlock_seedloop";
	if (argc != 3 || (iters = strtol(argv[1], NULL, 10)) <= 0 ||
	    (samples = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: mlock_seedloop ITERS SAMPLES\n");
		return 2;
	}
	lt_pin(lt_ncpus() - 1);
	for (k = 0; k < 2; k++)
		if (!(us[k] = calloc(samples, sizeof(double))))
			lt_die("calloc");
	for (r = 0; r < samples; r++) {
		int o;

		for (o = 0; o < 2; o++) {
			int v = (r % 2) ? 1 - o : o;
			double t0;

			if (lt_write_file(LO_MUNLOCK "/enabled", v ? "1" : "0"))
				lt_die("write munlock/enabled");
			t0 = now_s();
			for (i = 0; i < iters; i++)
				seed_mlock_test();
			us[v][n[v]++] = (now_s() - t0) * 1e6 / iters;
		}
	}
	for (k = 0; k < 2; k++) {
		qsort(us[k], n[k], sizeof(double), cmp_double);
		med[k] = us[k][(n[k] - 1) / 2];
		p10[k] = us[k][(n[k] - 1) / 10];
		printf("RESULT bench=seedloop-summary variant=%s samples=%d iters=%ld min=%.2f p10=%.2f median=%.2f max=%.2f\n",
		       name[k], n[k], iters, us[k][0], p10[k], med[k], us[k][n[k] - 1]);
	}
	printf("RESULT bench=seedloop-ratio stock_over_lruopt=%.3f min_ratio=%.3f p10_ratio=%.3f\n",
	       med[0] / med[1], us[0][0] / us[1][0], p10[0] / p10[1]);
	lt_write_file(LO_MUNLOCK "/enabled", "1");
	if (seed_failures) {
		fprintf(stderr, "mlock_seedloop: %d mlock/munlock calls failed\n", seed_failures);
		return 1;
	}
	return 0;
}
