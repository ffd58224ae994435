#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-rt-drain: drain latency next to an RT hog.  rthog runs SCHED_FIFO on
# CPU 1 and keeps faulting new pages (CPU 1 nearly always has folios in its
# LRU batches; its kworker only runs when RT throttling lets it, default
# sched_rt_runtime_us=950000, or on 6.12 the fair server).  From CPU 0,
# ab_drainlat then calls lru_add_drain_all() through two "hint" callers,
# 6 times each (--quick: 3), 20-1000 ms apart (random, so that the calls
# land at random phases of the 1 s RT throttling period):
#   compact   write /proc/sys/vm/compact_memory (drain + a compaction pass)
#   collapse  madvise(MADV_COLLAPSE) of one page (drain + nothing; only
#             with THP, which Debian's RT flavours lack)
# and, on PREEMPT_RT, through a strict one, 6 times (--quick: 3):
#   seal      F_SEAL_WRITE on a memfd whose pages are batched on CPU 2
#             (strict: every CPU is drained, the hogged one too; with
#             lruopt's remote drains from CPU 0, under CPU 1's own lock)
# Metrics: median and maximum latency of one call of each.  Config B sets
# drain/timeout_us=2000: lruopt waits at most 2 ms for CPU 1 (the work
# stays queued and runs when it can).
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="compact_memory / MADV_COLLAPSE (with THP) / memfd seal (on RT) from CPU 0 while a SCHED_FIFO task faults pages on CPU 1"
WL_PROGS="rthog ab_drainlat drain_call setfifo"
WL_TUNE="drain/timeout_us 2000"

wl_setup() {
	[ "$(nproc)" -ge 2 ] || { echo "needs at least 2 CPUs" >&2; exit 1; }
}

wl_run() {
	rthog 1 300 50 256 >"$BENCH_WORKDIR/rthog.out" 2>&1 &
	hog=$!
	bg_register $hog
	bg_wait_ready $hog "$BENCH_WORKDIR/rthog.out" rthog
	sleep 0.2
	n=$(qf 3 6)
	m="" sl=""
	c=$(ab_drainlat compact "$n" 20000 0 980000)
	rc=$?
	if [ $rc -eq 0 ] && [ -d /sys/kernel/mm/transparent_hugepage ]; then
		m=$(ab_drainlat collapse "$n" 20000 0 980000)
		rc=$?
	fi
	if [ $rc -eq 0 ] && uname -v | grep -q PREEMPT_RT; then
		sl=$(drain_call -c 0 -w 2 -n "$n" -i 20000 -l rt-seal memfd)
		rc=$?
	fi
	kill -TERM $hog
	wait $hog
	[ $rc -eq 0 ] || exit 1
	result compact_median "$(kv "$c" median_us)" us lower
	result compact_max "$(kv "$c" max_us)" us lower
	if [ -n "$m" ]; then
		result collapse_median "$(kv "$m" median_us)" us lower
		result collapse_max "$(kv "$m" max_us)" us lower
	fi
	if [ -n "$sl" ]; then
		result seal_median "$(ns2us "$(kv "$sl" median_ns)")" us lower
		result seal_max "$(ns2us "$(kv "$sl" max_ns)")" us lower
	fi
}

bench_main "$@"
