#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-fadvise-loop: the fadvise(DONTNEED) storm without writeback: 4
# processes pinned to CPUs 0-3, each with its own 64 KiB file on ext4 on a
# RAM block device (brd), written and its first page mapped once, then
# 5000 (--quick 2000) calls each of posix_fadvise(DONTNEED), each after a
# futimens() of the file (fadvstorm, FADVSTORM_ONCE=1 FADVSTORM_TOUCH=1).
# The mapped folio cannot be invalidated and goes to its CPU's deactivate
# batch, so every call drains while every CPU has something batched, and
# the inode update keeps a buffer head in each CPU's bh LRU, which only
# that CPU can drop: the call is the drain, as in a reader that holds a
# file mapped while another tool drops it from the cache.  (The storm of
# w-fadvise-storm re-creates the file before each call: its calls also
# write back 64 KiB.)  Metrics: median and p99 of one call, calls per
# second, drain work items run per call.  Config B sets
# drain/coalesce_us=20000 as the storm's B does; `--no-tune` runs B with
# lruopt's defaults.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="fadvise(DONTNEED) loop: 4 mapped files on ext4/brd, a drain per call, no writeback"
WL_PROGS=fadvstorm
WL_TUNE="drain/coalesce_us 20000"

wl_setup() {
	bench_ext4 128 >/dev/null || exit 1
	drain_trace_setup || echo "no tracing: no drain-work count" >&2
}

wl_run() {
	mnt=$(bench_ext4 128) || exit 1
	mkdir -p "$mnt/loop"
	fadvstorm_results "$mnt/loop" "$(qf 2000 5000)" loop \
		FADVSTORM_ONCE=1 FADVSTORM_TOUCH=1 || exit 1
}

wl_cleanup() {
	bench_ext4_cleanup
}

bench_main "$@"
