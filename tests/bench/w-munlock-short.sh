#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-munlock-short: the timedmlock/timedmunlock per-page cost from many short
# operations: one populated 8 MiB MADV_NOHUGEPAGE area, 200 (--quick 100)
# timed mlock() + munlock() cycles per run; the metrics are the 10th
# percentiles (ns per page).  On a shared host a 60 ms operation (the
# 256 MiB w-timedmunlock) is nearly always stretched by host scheduling, a
# 2 ms one is often not, so the low percentile of many short samples
# resolves differences of a few percent that the long runs cannot
# (munlock_bench single).
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="mlock/munlock of a populated 8 MiB non-THP area, p10 of many samples, ns per page"
WL_PROGS=munlock_bench

wl_run() {
	out=$(munlock_bench single 8 "$(qf 100 200)") || exit 1
	result munlock_p10 "$(kv "$out" munlock_p10)" ns/page lower
	result mlock_p10 "$(kv "$out" mlock_p10)" ns/page lower
	result munlock_min "$(kv "$out" munlock_min)" ns/page lower
}

bench_main "$@"
