/*
 * mlock_seedloop ITERS RUNS
 *
 * The test_mlock loop of seeds/000 (Tao Ma, "mm: do not drain pagevecs for
 * mlock", 2011): one iteration mlock()s and munlock()s three small stack
 * buffers (24, 56 and 4168 bytes), splitting and re-merging the stack VMA.
 * RUNS rounds, each timing ITERS iterations with the stock walk and with
 * lruopt's batched walk (alternating order, toggling
 * /sys/kernel/lruopt/munlock/enabled), pinned to the last CPU.
 *   RESULT bench=seedloop variant=V run=I iters=N us_per_iter=X
 *   RESULT bench=seedloop-summary variant=V runs=R min=.. median=.. max=..
 *   RESULT bench=seedloop-ratio stock_over_lruopt=R min_ratio=M
 *     (median stock / median lruopt and min / min: > 1 means lruopt faster)
 * Exit status: 0 ok, 1 failure, 2 usage.
 */
#include "munlock_util.h"

#define MM_SZ1 24
#define MM_SZ2 56
#define MM_SZ3 4168

static int failures;

static void __attribute__((noinline)) mlock_test(void)
{
	char ptr1[MM_SZ1];
	char ptr2[MM_SZ2];
	char ptr3[MM_SZ3];

	/* keep the buffers on the stack, as in the original */
	__asm__ volatile("" : : "r"(ptr1), "r"(ptr2), "r"(ptr3) : "memory");
	if (mlock(ptr1, MM_SZ1))
		failures++;
	if (mlock(ptr2, MM_SZ2))
		failures++;
	if (mlock(ptr3, MM_SZ3))
		failures++;
	if (munlock(ptr1, MM_SZ1))
		failures++;
	if (munlock(ptr2, MM_SZ2))
		failures++;
	if (munlock(ptr3, MM_SZ3))
		failures++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const name[2] = { "stock", "lruopt" };
	double *us[2], med[2];
	long iters, runs, r, i;
	int k, n[2] = { 0, 0 };

	mu_prog = "mlock_seedloop";
	if (argc != 3 || (iters = strtol(argv[1], NULL, 10)) <= 0 ||
	    (runs = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: mlock_seedloop ITERS RUNS\n");
		return 2;
	}
	mu_pin(mu_ncpus() - 1);
	for (k = 0; k < 2; k++)
		if (!(us[k] = calloc(runs, sizeof(double))))
			mu_die("calloc");
	for (r = 0; r < runs; r++) {
		int o;

		for (o = 0; o < 2; o++) {
			int v = (r % 2) ? 1 - o : o;
			double t0;

			if (mu_write_file(LO_MUNLOCK "/enabled", v ? "1" : "0"))
				mu_die("write munlock/enabled");
			t0 = mu_now();
			for (i = 0; i < iters; i++)
				mlock_test();
			us[v][n[v]] = (mu_now() - t0) * 1e6 / iters;
			printf("RESULT bench=seedloop variant=%s run=%ld iters=%ld us_per_iter=%.2f\n",
			       name[v], r, iters, us[v][n[v]]);
			fflush(stdout);
			n[v]++;
		}
	}
	for (k = 0; k < 2; k++) {
		qsort(us[k], n[k], sizeof(double), cmp_double);
		med[k] = n[k] % 2 ? us[k][n[k] / 2] : (us[k][n[k] / 2 - 1] + us[k][n[k] / 2]) / 2;
		printf("RESULT bench=seedloop-summary variant=%s runs=%d min=%.2f median=%.2f max=%.2f\n",
		       name[k], n[k], us[k][0], med[k], us[k][n[k] - 1]);
	}
	printf("RESULT bench=seedloop-ratio stock_over_lruopt=%.3f min_ratio=%.3f\n",
	       med[0] / med[1], us[0][0] / us[1][0]);
	mu_write_file(LO_MUNLOCK "/enabled", "1");
	if (failures) {
		fprintf(stderr, "mlock_seedloop: %d mlock/munlock calls failed\n", failures);
		return 1;
	}
	return 0;
}
