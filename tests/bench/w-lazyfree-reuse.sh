#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-lazyfree-reuse: what lazyfree costs where there is no pressure (no
# swap, a 2 GiB guest nearly idle).  With lazyfree_enabled=1 every
# madvise(MADV_FREE or MADV_DONTNEED) goes through lruopt's replacement of
# madvise_dontneed_free_valid_vma() and its pressure check.
#   reuse_iter     lfbomb reuse: MADV_FREE of a written 64 MiB region (16
#                  --quick), then a write of every page, 20 times (10):
#                  stock keeps the pages, so the write needs no fault;
#                  the median time of one iteration
#   reuse_faults_per_iter  minor faults per iteration: 0 in A, and 0 in B
#                  as long as lazyfree finds no pressure (a check)
#   free_call, dontneed_call  lfbomb call: median time of one madvise() of
#                  a 4-page range whose first page was just written,
#                  20000 calls (5000)
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="no pressure: MADV_FREE + rewrite of 64 MiB (reuse), madvise(FREE/DONTNEED) of 4 pages (call cost)"
WL_PROGS=lfbomb
WL_OPTIONAL="13 minutes per kernel with lazyfree-bomb (8 rounds)"

wl_run() {
	out=$(lfbomb reuse "$(qf 16 64)" "$(qf 10 20)") || exit 1
	# lfbomb call runs without ASLR: one layout for every configuration
	# (it did not remove the per-process slow mode: benchmarks.md)
	fr=$(lfbomb call free 4 "$(qf 5000 20000)") || exit 1
	dn=$(lfbomb call dontneed 4 "$(qf 5000 20000)") || exit 1
	# others_busy_pct: the other vCPUs' busy time during the calls (a
	# second busy vCPU halves this one's speed under one TCG thread)
	info "free_others_busy_pct=$(kv "$fr" others_busy_pct) dontneed_others_busy_pct=$(kv "$dn" others_busy_pct) free_cpu=$(kv "$fr" cpu) dontneed_cpu=$(kv "$dn" cpu)"
	result reuse_iter "$(ns2us "$(kv "$out" iter_median_ns)")" us lower
	result reuse_faults_per_iter "$(kv "$out" faults_per_iter)" faults equal
	result free_call "$(kv "$fr" call_median_ns)" ns lower
	result dontneed_call "$(kv "$dn" call_median_ns)" ns lower
}

bench_main "$@"
