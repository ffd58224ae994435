#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 66-drain-strict: correctness-class callers are never relaxed.  With every
# knob set (timeout_us, skip_cpus = all other CPUs, coalesce_us,
# skip_isolated) and an RT hog on CPU 1, memfd seals (memfd_wait_for_pins():
# strict) must still do full, unbounded drains: their row shows skipped 0,
# timed_out 0, coalesced 0, every seal succeeds (pins drained) and each one
# waited for the writer CPU's drain work.  Hint callers right after them
# are relaxed, which shows that the knobs are in effect: with 8 pages
# pending on CPU K (in skip_cpus) each of them either returns coalesced
# (inside the window the seals' full drains opened) or skips CPU K, which
# of the two being the clock's business, the sum not.
# lruopt-timeout: 300
. /tests/lib.sh
. /tests/lib-drain.sh
drain_test_begin 66-drain-strict 3
W=2	# memfd writer CPU
check "rthog SCHED_FIFO on CPU 1" start_hog 1 250
dsnap_stable s0 || true
# a full drain to open the coalescing window
check "coalesce_us=1000000" dset coalesce_us 1000000
drain_call -c 0 compact >/dev/null
relax_all() {
	dset timeout_us 1000 && dset skip_cpus "1-$((NCPU - 1))" && dset skip_isolated 1
}
check "timeout_us=1000, skip_cpus=1-$((NCPU - 1)), skip_isolated=1" relax_all
check "tracing started" dtrace_start
dsnap s1
# strict seals, then hint calls with 8 pages pending on CPU K; told apart
# by their rows
drain_call -c 0 -n 3 -m -l st -w $W memfd >/tmp/strict.out 2>&1
r=$?
check "8 pages pending on CPU $K" start_pending $K 8
drain_call -c 0 -n 3 compact >/dev/null
drain_call -c 0 -n 3 $COLLAPSE >/dev/null
lru=$(pend_lru)
stop_pending >/dev/null
dsnap s3
check "trace saved" dtrace_stop /tmp/trace-strict.txt
check "rthog ran undisturbed" stop_hog
check "knobs back to defaults" drain_defaults
diag "$(cat /tmp/strict.out)" "all: $(show_snap_delta s1 s3)"
diag "$(crows s3 "$RX_MEMFD")"

assert_eq "3 memfd seals succeeded (pins drained in time)" 0 "$r"
assert_eq "memfd row: calls +3" 3 "$(crd s1 s3 "$RX_MEMFD" calls)"
assert_eq "memfd row: skipped +0, timed_out +0, coalesced +0" "0 0 0" \
	"$(crd s1 s3 "$RX_MEMFD" skipped) $(crd s1 s3 "$RX_MEMFD" timed_out) $(crd s1 s3 "$RX_MEMFD" coalesced)"
check "at least the 3 memfd seals were full drains (+$(sd s1 s3 full_drains))" test "$(sd s1 s3 full_drains)" -ge 3
assert_eq "memfd row is strict" strict "$(cclass s3 "$RX_MEMFD")"
for i in 1 2 3; do
	n=$(tcount /tmp/trace-strict.txt st $i exec drain_workfn $W)
	if ! check "seal $i waited for writer CPU $W's drain work ($n)" test "$n" -ge 1; then
		diag "$(twindow /tmp/trace-strict.txt st $i)"
	fi
done
# the hint rows (compaction and MADV_COLLAPSE; compaction alone without THP)
hint() {
	if [ "$RX_COLLAPSE" = "$RX_COMPACT" ]; then
		crd s1 s3 "$RX_COMPACT" "$1"
	else
		echo $(( $(crd s1 s3 "$RX_COMPACT" "$1") + $(crd s1 s3 "$RX_COLLAPSE" "$1") ))
	fi
}
assert_eq "CPU $K's 8 pages stayed batched through the hint calls (on an LRU)" 0 "$lru"
diag "hint rows: calls +$(hint calls), coalesced +$(hint coalesced), partial +$(hint partial_drains), skipped +$(hint skipped)"
assert_eq "hint callers in the same setting were relaxed: of their 6 calls none a full drain, each coalesced or partial (calls full coalesced+partial)" \
	"6 0 6" "$(hint calls) $(hint full_drains) $(( $(hint coalesced) + $(hint partial_drains) ))"
dsnap_stable s4 || true
check "counter invariants hold over 66-drain-strict" stats_consistent s0 s4
check_dmesg_clean "no kernel warnings during 66-drain-strict"
