#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-idle-drain: the cost of a drain when nothing is pending (the other CPUs
# idle), from CPU 0: back-to-back madvise(MADV_COLLAPSE) of one page
# (lru_add_drain_all() and nothing else: the call costs the drain and the
# syscall) - 1000 calls (--quick 300) - and writes to
# /proc/sys/vm/compact_memory (drain + a compaction pass over all zones) -
# 30 calls (--quick 15).  Metrics: median call time of each (MADV_COLLAPSE:
# of blocks of 10 calls, in ns: the guest clock is too coarse for one call
# of about 3 us), and drain work
# items run per MADV_COLLAPSE call (kworker wake-ups; ~0 expected).  This
# is where lruopt's own bookkeeping (caller lookup, cpumask, statistics)
# could cost more than it saves.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="MADV_COLLAPSE / compact_memory with nothing pending"
WL_PROGS=ab_drainlat

wl_setup() {
	drain_trace_setup || echo "no tracing: no drain-work count" >&2
}

wl_run() {
	n=$(qf 300 1000)
	drain_trace_begin
	m=$(ab_drainlat collapse "$n" 0 0) || { drain_trace_end >/dev/null; exit 1; }
	works=$(drain_trace_end)
	c=$(ab_drainlat compact "$(qf 15 30)" 0 0) || exit 1
	result collapse_call "$(kv "$m" block_median_ns)" ns lower
	result compact_call "$(kv "$c" median_us)" us lower
	[ -z "$works" ] || result drain_works_per_call "$(div "$works" "$n" 3)" works lower
}

bench_main "$@"
