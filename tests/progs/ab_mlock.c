// SPDX-License-Identifier: GPL-2.0
/*
 * ab_mlock ITERS
 *
 * The test_mlock loop of Tao Ma's "[PATCH] mm: do not drain pagevecs
 * for mlock" (LKML, 2011): ITERS times mlock() and munlock() three small stack
 * buffers (24, 56 and 4168 bytes), which splits and re-merges the stack VMA
 * around them.  Re-executes itself once with ADDR_NO_RANDOMIZE so that the
 * stack layout, and with it the number of pages locked per iteration, is the
 * same in every run.
 *
 * Prints one line:
 *   ab_mlock iters=N ns=T ns_per_iter=X mlocked_per_iter=M munlocked_per_iter=U
 * (mlocked/munlocked: /proc/vmstat unevictable_pgs_(m|mun)locked deltas per
 * iteration: deterministic for a given stack layout).
 * Exit status: 0 ok, 1 a syscall failed, 2 usage.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "common.h"

#define SEED_SZ1 24
#define SEED_SZ2 56
#define SEED_SZ3 4168

/* mlock()/munlock() calls that failed so far */
static int seed_failures;

static void __attribute__((noinline)) seed_mlock_test(void)
{
	char ptr1[SEED_SZ1];
	char ptr2[SEED_SZ2];
	char ptr3[SEED_SZ3];

	/* keep the buffers on the stack (the compiler may otherwise drop them) */
	__asm__ volatile("" : : "r"(ptr1), "r"(ptr2), "r"(ptr3) : "memory");
	seed_failures += !!mlock(ptr1, SEED_SZ1);
	seed_failures += !!mlock(ptr2, SEED_SZ2);
	seed_failures += !!mlock(ptr3, SEED_SZ3);
	seed_failures += !!munlock(ptr1, SEED_SZ1);
	seed_failures += !!munlock(ptr2, SEED_SZ2);
	seed_failures += !!munlock(ptr3, SEED_SZ3);
}

int main(int argc, char **argv)
{
	long long t0, t, m0, u0, m1, u1;
	long iters, i;

	lt_args("ab_mlock", argc, 1, 1, "ITERS");
	iters = lt_arg("ITERS", argv[1], 1, 100000000);
	lt_no_aslr(argv);

	lt_pin(lt_ncpus() - 1);
	seed_mlock_test();			/* fault in the stack pages first */
	m0 = lt_vmstat("unevictable_pgs_mlocked");
	u0 = lt_vmstat("unevictable_pgs_munlocked");
	t0 = lt_now_ns();
	for (i = 0; i < iters; i++)
		seed_mlock_test();
	t = lt_now_ns() - t0;
	m1 = lt_vmstat("unevictable_pgs_mlocked");
	u1 = lt_vmstat("unevictable_pgs_munlocked");
	if (seed_failures) {
		fprintf(stderr, "ab_mlock: %d mlock/munlock calls failed\n", seed_failures);
		return 1;
	}
	printf("ab_mlock iters=%ld ns=%lld ns_per_iter=%.1f mlocked_per_iter=%.3f munlocked_per_iter=%.3f\n",
	       iters, t, (double)t / iters, (double)(m1 - m0) / iters,
	       (double)(u1 - u0) / iters);
	return 0;
}
