#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 69-drain-cachedisable: lru_cache_disable()'s forced drain (page
# migration, CMA allocation, memory offlining), replaced on PREEMPT_RT with
# remote drains (issue 13 item 4).  The trigger is move_pages(2) of one page
# to the node it is on: do_pages_move() calls lru_cache_disable() first.
#
# Not RT: lru_cache_disable is not a target (the kernel's own runs).
#
# RT, 1. CPU K is in skip_cpus (as an isolated CPU would be: the forced
# drain ignores it) and a sleeping helper keeps 8 pages in K's LRU batch.
# One traced move_pages from CPU 0 under remote=1, remote=0 and enabled=0:
# which drain works ran on CPU K during the call, and whether the 8 pages
# are on an LRU afterwards (/proc/kpageflags).  remote=1: no work on K, all
# 8 drained, one strict full drain counted, remotely.  remote=0 and
# enabled=0: the stock function (lru_add_drain_per_cpu ran on K).
# lru_disable_count is left as found: before every call the helper's fresh
# pages are batched again (a leaked increment would put every added page
# straight on the LRU; a missing one would make the count negative, i.e.
# non-zero, with the same effect).
#
# RT, 2. CPU 1 runs a SCHED_FIFO task spinning in user space over 8 batched
# pages.  remote=1: a full drain, no work on CPU 1, the pages on the LRU,
# without waiting for the hog; stock waits for RT throttling to let its
# kworker run.  Latencies are reported (RESULT).
# lruopt-timeout: 300
. /tests/lib.sh
is_rt && DRAIN_REMOTE=1
. /tests/lib-drain.sh
drain_test_begin 69-drain-cachedisable 3

RX_MOVEPAGES='^(do_pages_move|kernel_move_pages|__do_sys_move_pages|__x64_sys_move_pages)([.+ ]|$)'
has_target() {
	awk -v f="$1" '$1 == f { n++ } END { exit !n }' "$LO/targets"
}

if ! is_rt; then
	check_not "not PREEMPT_RT: lru_cache_disable is not a target" has_target lru_cache_disable
	check "move_pages works with lruopt loaded" drain_call -c 0 movepages
	skip "remote lru_cache_disable()" "replaced on PREEMPT_RT only"
	check_dmesg_clean "no kernel warnings during 69-drain-cachedisable"
	exit 0
fi

check "PREEMPT_RT: lru_cache_disable is a target of the drain" has_target lru_cache_disable
check "livepatch redirects lru_cache_disable" \
	sh -c "ls -d $LP/vmlinux/lru_cache_disable,* >/dev/null"
dsnap_stable all0 || fail "counters stable at start"

check "skip_cpus=$K" dset skip_cpus "$K"
for r in 1 2; do
	for cfg in remote1 remote0 stock; do
		lb=c$r$cfg
		remote_call "$lb" "$cfg" movepages
		STOCK_WORKS=$(tcount "/tmp/trace-$lb.txt" "$lb" 1 exec lru_add_drain_per_cpu "$K")
		diag "$cfg round $r: works on CPU $K: $WORKS; pages on LRU before $LRU_BEFORE after $LRU_AFTER; $(show_snap_delta "$lb.0" "$lb.1")"
		assert_eq "$cfg round $r: the helper's 8 pages are batched before the call (lru_disable_count is 0)" 0 "$LRU_BEFORE"
		assert_eq "$cfg round $r: all 8 pages on the LRU when move_pages returns" 8 "$LRU_AFTER"
		case $cfg in
		remote1)
			assert_eq "remote=1 round $r: no drain work ran on CPU $K" 0 "$WORKS"
			assert_eq "remote=1 round $r: one strict full drain, none stock (full stock partial)" "1 0 0" \
				"$(sd "$lb.0" "$lb.1" full_drains) $(sd "$lb.0" "$lb.1" stock) $(sd "$lb.0" "$lb.1" partial_drains)"
			check "remote=1 round $r: CPU $K drained remotely (remote_drains +$(sd "$lb.0" "$lb.1" remote_drains))" \
				test "$(sd "$lb.0" "$lb.1" remote_drains)" -ge 1
			assert_eq "remote=1 round $r: counted in the move_pages row, as strict" "1 strict" \
				"$(crd "$lb.0" "$lb.1" "$RX_MOVEPAGES" full_drains) $(cclass "$lb.1" "$RX_MOVEPAGES")"
			;;
		*)
			check "$cfg round $r: the stock drain ran lru_add_drain_per_cpu on CPU $K ($STOCK_WORKS)" \
				test "$STOCK_WORKS" -ge 1
			assert_eq "$cfg round $r: one stock call, no lruopt drain (stock full)" "1 0" \
				"$(sd "$lb.0" "$lb.1" stock) $(sd "$lb.0" "$lb.1" full_drains)"
			;;
		esac
	done
done
check "skip_cpus back to empty" dset skip_cpus ""
check "lru_disable_count is 0 again: fresh pages on CPU $K are batched" start_pending "$K" 8
assert_eq "none of the 8 new pages is on the LRU" 0 "$(pend_lru)"
stop_pending >/dev/null
diag "callers:" "$(cat "$D/callers")"

# ---- 2. the RT hog
# an lruopt round next to the hog: full, not stock, no work on CPU 1, pages
# drained
hog_ok() {
	hog_drained "$1" "$2" stock
}
hog_rounds movepages hog_ok

check "knobs back to defaults" drain_defaults
dsnap_stable all1 || fail "counters stable at end"
check "counter invariants hold over 69-drain-cachedisable" stats_consistent all0 all1
check_dmesg_clean "no kernel warnings during 69-drain-cachedisable"
check "lruopt unloads" unload_lruopt
check "and loads again" load_lruopt
