#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-munlock-locks: what the batched munlock walk changes, counted rather
# than timed: lruvec lru_lock acquisitions (calls of folio_lruvec_lock_irq,
# _irqsave and folio_lruvec_lock, counted by the ftrace function tracer for
# this process only) per 512 pages during mlock() and during munlock() of a
# populated 64 MiB (--quick 16 MiB) non-THP area (munlock_bench locks MIB
# here; the count the munlock benchmark used to print as locks-per-512).
# Stock takes one per per-CPU batch (about 34 on 6.1, 17 on 6.12); lruopt's
# B at most 512 / munlock/batch + a few.  Deterministic per configuration:
# A and C must agree, B is the point.  The function tracer patches kernel
# text for the duration of the run only; the timed workloads run without it.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="lruvec lock acquisitions per 512 pages in mlock/munlock of a populated non-THP area"
WL_PROGS=munlock_bench

wl_setup() {
	[ -w /sys/kernel/tracing/set_ftrace_filter ] || {
		echo "no tracefs function tracer (/sys/kernel/tracing/set_ftrace_filter)"
		exit 1
	}
}

wl_run() {
	out=$(munlock_bench locks "$(qf 16 64)" here) || exit 1
	case $out in *skip*) echo "$out" >&2; exit 1 ;; esac
	result mlock_locks_per_512 "$(kv "$(echo "$out" | grep 'op=mlock ')" per512)" locks lower
	result munlock_locks_per_512 "$(kv "$(echo "$out" | grep 'op=munlock ')" per512)" locks lower
}

bench_main "$@"
