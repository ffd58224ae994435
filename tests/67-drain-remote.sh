#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 67-drain-remote: drain/remote, the PREEMPT_RT remote drain.
#
# Not RT: drain/remote reads 0; writing 1 fails with EINVAL and leaves 0.
#
# RT, 1. CPU K is in skip_cpus (as an isolated CPU would be) and a sleeping
# helper keeps 8 pages in its LRU batch.  For a hint caller (compaction)
# and a strict one (a memfd seal), with lruopt's remote=1, remote=0 and the
# stock drain: count the drain works that ran on CPU K during the call
# (workqueue_execute_start of drain_workfn or lru_add_drain_per_cpu) and
# read whether the helper's pages are on an LRU afterwards (/proc/kpageflags
# through pagemap: a batched page is not).  remote=1: no work on CPU K and
# all 8 pages drained by the strict caller; the hint caller leaves K alone
# with remote=1 and remote=0 alike (deferred, no remote drain: it takes no
# lock of a skipped CPU).  remote=0: the strict caller
# queues work there.
# Stock: work on K for both.
#
# RT, 2. CPU 1 runs a SCHED_FIFO task that spins in user space over 8
# batched pages.  remote=1: hint and strict drains are *full* (no partial,
# no timeout with timeout_us set), no work ran on CPU 1, the pages are on
# the LRU, and the call did not wait for the hog; stock waits for the RT
# throttling to let its kworker run.  Latencies are reported (RESULT).
#
# RT, 3. the ENDBR64 check refuses (fault_target=drain_endbr); 4. a hint
# call counts a CPU whose lock is held by a drain begun after its scan as
# drained (fault_target=drain_hold): see those sections.
# lruopt-timeout: 400
. /tests/lib.sh
is_rt && DRAIN_REMOTE=1
. /tests/lib-drain.sh
drain_test_begin 67-drain-remote 3

if ! is_rt; then
	assert_eq "not PREEMPT_RT: drain/remote reads 0" 0 "$(readval "$D/remote")"
	expect_write_fails "$D/remote" 1 EINVAL
	skip "remote drains" "PREEMPT_RT only"
	check_dmesg_clean "no kernel warnings during 67-drain-remote"
	exit 0
fi

assert_eq "PREEMPT_RT: drain/remote is 1 by default" 1 "$(readval /sys/module/lruopt/parameters/drain_remote)"
expect_write_fails "$D/remote" 2 EINVAL
dsnap_stable all0 || fail "counters stable at start"

check "skip_cpus=$K" dset skip_cpus "$K"
for mode in compact memfd; do
	for cfg in remote1 remote0 stock; do
		lb=p$mode$cfg
		remote_call "$lb" "$cfg" "$mode"
		diag "$mode $cfg: works on CPU $K: $WORKS; pages on LRU before $LRU_BEFORE after $LRU_AFTER; $(show_snap_delta "$lb.0" "$lb.1")"
		assert_eq "$mode $cfg: the 8 pages are batched (off the LRU) before the call" 0 "$LRU_BEFORE"
		case $mode/$cfg in
		compact/remote*)
			assert_eq "compact $cfg: no drain work ran on the skipped CPU $K" 0 "$WORKS"
			# Deferred, not drained remotely: a remote drain ends
			# CPU K's turn before the skip (the old order) and
			# counts no deferral.  Its pages are only reported: in
			# this boot CPU K is not isolated, and a task there may
			# drain its own batch (65 asserts them on an isolated
			# CPU, where nothing else runs).
			assert_eq "compact $cfg: CPU $K deferred and left alone: not drained remotely either (deferred)" 1 \
				"$(sd "$lb.0" "$lb.1" deferred)"
			;;
		memfd/remote1)
			assert_eq "$mode remote=1: no drain work ran on CPU $K" 0 "$WORKS"
			assert_eq "$mode remote=1: all 8 pages drained onto the LRU" 8 "$LRU_AFTER"
			check "$mode remote=1: CPU $K drained remotely (remote_drains +$(sd "$lb.0" "$lb.1" remote_drains))" \
				test "$(sd "$lb.0" "$lb.1" remote_drains)" -ge 1
			assert_eq "$mode remote=1: a full drain, nothing deferred (full deferred)" "1 0" \
				"$(sd "$lb.0" "$lb.1" full_drains) $(sd "$lb.0" "$lb.1" deferred)"
			;;
		memfd/remote0)
			check "memfd remote=0: the strict seal ran drain work on CPU $K ($WORKS)" test "$WORKS" -ge 1
			assert_eq "memfd remote=0: all 8 pages drained" 8 "$LRU_AFTER"
			;;
		*/stock)
			check "$mode stock: drain work (lru_add_drain_per_cpu) ran on CPU $K ($WORKS)" test "$WORKS" -ge 1
			assert_eq "$mode stock: all 8 pages drained" 8 "$LRU_AFTER"
			;;
		esac
	done
done
check "skip_cpus back to empty" dset skip_cpus ""

# ---- 2. the RT hog
echo 950000 >/proc/sys/kernel/sched_rt_runtime_us
check "timeout_us=2000" dset timeout_us 2000
# an lruopt round next to the hog: full, no timeout, no work on CPU 1,
# pages drained, remotely
hog_ok() {
	hog_drained "$1" "$2" timeouts
	check "hog round $2 ($1): CPU 1 drained remotely" test "$(sd "$1.0" "$1.1" remote_drains)" -ge 1
}
for mode in compact memfd; do
	hog_rounds "$mode" hog_ok
done

check "knobs back to defaults" drain_defaults
dsnap_stable all1 || fail "counters stable at end"
check "counter invariants hold over 67-drain-remote" stats_consistent all0 all1
check_dmesg_clean "no kernel warnings during 67-drain-remote"

# ---- 3. the ENDBR64 check can refuse: fault_target=drain_endbr makes it
# read folio_batch_move_lru, which vmlinux only ever calls directly (no
# ENDBR64).  Remote drains are then off for the module's lifetime:
# drain/remote reads 0, writing 1 fails, a strict drain queues work.
check "unloaded for the ENDBR fault" unload_lruopt
dmesg_mark 67-endbr
check "loads with fault_target=drain_endbr" load_lruopt fault_target=drain_endbr
n=$(dmesg_since_mark | grep -c "lruopt: drain: remote drains unavailable: a move function of mm/swap.c lacks ENDBR64")
assert_eq "one dmesg line says remote drains are unavailable" 1 "$n"
assert_eq "drain/remote reads 0" 0 "$(readval "$D/remote")"
expect_write_fails "$D/remote" 1 EINVAL
dtrace_start
start_pending "$K" 8
drain_call -c 0 -m -l ef -w 1 memfd >/dev/null
dtrace_stop /tmp/trace-ef.txt
n=$(tcount /tmp/trace-ef.txt ef 1 exec drain_workfn "$K")
check "without remote drains the strict seal ran drain work on CPU $K ($n)" test "$n" -ge 1
assert_eq "and drained its 8 pages" 8 "$(pend_lru)"
stop_pending >/dev/null
check "unloaded" unload_lruopt
check "reloaded without the fault" load_lruopt
assert_eq "drain/remote is 1 again" 1 "$(readval "$D/remote")"

# ---- 4. piggyback: a hint call's trylock that fails on a lock held by a
# drain that began after its scan counts the CPU as drained.  Made certain
# by fault_target=drain_hold (lruopt_drain.c): the hint compaction of
# drain_call (CPU 0) waits after its ticket until a strict memfd seal of
# drain_call (CPU 1, begun after it) holds a batch lock of another CPU
# (CPU $K, where its writer and a helper keep pages batched, or one it
# finds pending before that); the seal holds the lock until the
# compaction's trylock of it failed.  Expected: remote_shared
# +1 and the compaction full; dmesg says the hint call tried the held
# lock.
check "unloaded for the hold fault" unload_lruopt
dmesg_mark 67-hold
check "loads with fault_target=drain_hold" load_lruopt fault_target=drain_hold
check "drain knobs set to defaults" drain_defaults
check "8 pages pending on CPU $K" start_pending "$K" 8
dsnap pg.0
drain_call -c 0 -l pgh compact >/tmp/67-pgh.out 2>&1 &
pgh=$!
hint_waits_held() { dmesg_since_mark | grep -q "lruopt: drain_hold: hint call"; }
if check "the hint compaction waits for a held lock (dmesg)" wait_for 60 "drain_hold: hint call" hint_waits_held; then
	drain_call -c 1 -w "$K" memfd >/tmp/67-pgs.out 2>&1 ||
		fail "the strict seal" "$(cat /tmp/67-pgs.out)"
fi
wait "$pgh" || fail "the hint compaction" "$(cat /tmp/67-pgh.out)"
dsnap pg.1
stop_pending >/dev/null
diag "piggyback: $(show_snap_delta pg.0 pg.1)" "$(dmesg_since_mark | grep drain_hold)"
assert_eq "the strict seal held a batch lock until the hint call tried it (dmesg)" 1 \
	"$(dmesg_since_mark | grep -c "lruopt: drain_hold: strict call releases the lock (the hint call tried it)")"
assert_eq "the hint call counted the held CPU as drained by the later drain (remote_shared)" 1 \
	"$(sd pg.0 pg.1 remote_shared)"
assert_eq "the hint compaction was full, not partial (full partial on its row)" "1 0" \
	"$(crd pg.0 pg.1 "$RX_COMPACT" full_drains) $(crd pg.0 pg.1 "$RX_COMPACT" partial_drains)"
check "counter invariants hold over the piggyback" stats_consistent pg.0 pg.1
check "unloaded" unload_lruopt
check "reloaded without the fault" load_lruopt
check_dmesg_clean "no kernel warnings during 67-drain-remote's piggyback"
