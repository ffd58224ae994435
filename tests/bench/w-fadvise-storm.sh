#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-fadvise-storm: the fadvise(DONTNEED) storm, with fadvstorm (the drain
# tests' program): 4 processes pinned to CPUs 0-3, each 200 times (--quick
# 80) re-creating its own 64 KiB file on ext4 on a RAM block device (brd)
# and dropping it with posix_fadvise(DONTNEED) - the per-blob pattern of
# build farms and loggers.  Each process keeps the first page of its file
# mapped during the call (a reader has it mmapped): that folio cannot be
# invalidated, so every call runs lru_add_drain_all() while the other
# writers keep refilling their CPUs' LRU batches.  (Without it, on ext4 on
# brd every folio is clean again and invalidated by the time fadvise looks:
# almost no call drains.)  Metrics: median and p99 latency of one fadvise
# call, calls per second of the whole storm, and drain work items run per
# call (CPUs disturbed by a kworker; trace event workqueue_execute_start).
# Config B sets drain/coalesce_us=20000: a drain for fadvise arriving
# within 20 ms of a completed full drain returns at once.  20 ms of TCG
# time is about what 1-2 ms is on real hardware (a drain here takes 3-6 ms
# instead of tens of microseconds); 2 ms coalesced too little of this
# storm (median -43% instead of the -95% of 20 ms).
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="fadvise(DONTNEED) storm: 4 writers on ext4/brd, a drain per call"
WL_PROGS=fadvstorm
WL_TUNE="drain/coalesce_us 20000"

wl_setup() {
	bench_ext4 128 >/dev/null || exit 1
	drain_trace_setup || echo "no tracing: no drain-work count" >&2
}

wl_run() {
	mnt=$(bench_ext4 128) || exit 1
	mkdir -p "$mnt/storm"
	fadvstorm_results "$mnt/storm" "$(qf 80 200)" storm || exit 1
}

wl_cleanup() {
	bench_ext4_cleanup
}

bench_main "$@"
