#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-mlock-loop: the test_mlock loop of Tao Ma's "[PATCH] mm: do
# not drain pagevecs for mlock" (LKML, 2011): mlock() and
# munlock() of three small stack buffers, repeated; the stack VMA is split
# and re-merged every time.  Mostly VMA work: lru_add_drain_all() has not
# been called from mlock() since 4.15, so lruopt should change little here
# (small folios locked per call: the batched munlock path with tiny batches).
# 6000 iterations per run (--quick 2000), pinned to the last CPU.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="Tao Ma's test_mlock loop: mlock+munlock of 24/56/4168-byte stack buffers"
WL_PROGS=ab_mlock

wl_run() {
	out=$(ab_mlock "$(qf 2000 6000)") || exit 1
	result iteration "$(div "$(kv "$out" ns_per_iter)" 1000 2)" us lower
	result mlocked_pages_per_iter "$(kv "$out" mlocked_per_iter)" pages lower
}

bench_main "$@"
