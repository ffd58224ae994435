/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seed_mlock.h - one iteration of the test_mlock loop of seeds/000 (Tao Ma,
 * "mm: do not drain pagevecs for mlock", 2011), shared by ab_mlock.c (the
 * make demo workload) and mlock_seedloop.c (the munlock benchmark): mlock()
 * and munlock() three small stack buffers (24, 56 and 4168 bytes), which
 * splits and re-merges the stack VMA around them.
 */
#ifndef LRUOPT_SEED_MLOCK_H
#define LRUOPT_SEED_MLOCK_H

#include <sys/mman.h>

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

#endif
