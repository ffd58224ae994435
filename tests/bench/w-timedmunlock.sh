#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-timedmunlock: mmtests' timedmunlock/timedmlock (Vlastimil
# Babka, "Improving munlock() performance for large non-THP areas",
# linux-mm 2013) on a populated, non-THP anonymous area (256 MiB; --quick
# 128 MiB): time of mlock() and of munlock() of the whole area, per page.
# Every page goes through mlock_pte_range(), which lruopt's munlock feature
# replaces (one lruvec-lock hold per batch of small folios).  Each run does
# 3 repetitions (--quick: 2), each one sample.  munlocked_pages (the
# /proc/vmstat unevictable_pgs_munlocked delta of one munlock) must equal
# the page count in every configuration.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="mmtests timedmlock/timedmunlock: populated non-THP area, ns per page"
WL_PROGS=ab_timedmunlock

wl_run() {
	ab_timedmunlock "$(qf 128 256)" "$(qf 2 3)" >"$BENCH_WORKDIR/tm.out" || exit 1
	while read -r line; do
		result mlock "$(kv "$line" mlock_ns_per_page)" ns/page lower
		result munlock "$(kv "$line" munlock_ns_per_page)" ns/page lower
		result munlocked_pages "$(kv "$line" munlocked)" pages higher
	done <"$BENCH_WORKDIR/tm.out"
}

bench_main "$@"
