#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 62-drain-skip: drain/skip_cpus.  Hint callers leave a listed CPU that
# has pending pages alone: no work is queued there, its folios stay batched
# (skipped_cpus, deferred, partial_drains); strict callers (memfd seals)
# still queue work there and wait for it (their row shows skipped 0).  First
# with a sleeping helper with 8 pending pages on the skipped CPU, then with
# that CPU hogged by a SCHED_FIFO task spinning over 8 batched pages (its
# kworker runs only when RT throttling lets it); each round is judged only
# with the pages seen batched before and after it, so every call found
# them pending.  Then without memory for the wait block
# (fault_target=drain_nomem).
# lruopt-timeout: 300
. /tests/lib.sh
. /tests/lib-drain.sh
drain_test_begin 62-drain-skip 3
dsnap_stable all0 || fail "counters stable at start"

# ---- 1. sleeping helper with pending pages on the skipped CPU
check "skip_cpus=$K" dset skip_cpus $K
# tracing first: starting it (buffer resize, reset) may itself drain CPU $K
check "tracing started" dtrace_start
check "8 pages pending on CPU $K" start_pending $K 8
dsnap h0
drain_call -c 0 -m -l sk -n 2 compact >/dev/null
dsnap h1
stop_pending >/dev/null
check "8 pages pending on CPU $K again" start_pending $K 8
drain_call -c 0 -m -l skm -w 1 memfd >/dev/null
r=$?
dsnap h2
check "trace saved" dtrace_stop /tmp/trace-skip.txt
stop_pending >/dev/null
diag "hint: $(show_snap_delta h0 h1)" "strict: $(show_snap_delta h1 h2)"
# Two hint drains: the second finds CPU $K's pages still batched.
assert_eq "2 hint drains: CPU $K skipped twice (row skipped +2, skipped_cpus +2)" "2 2" \
	"$(crd h0 h1 "$RX_COMPACT" skipped) $(sd h0 h1 skipped_cpus)"
assert_eq "2 hint drains: CPU $K deferred twice, its pages still batched (row deferred +2, deferred +2)" "2 2" \
	"$(crd h0 h1 "$RX_COMPACT" deferred) $(sd h0 h1 deferred)"
assert_eq "2 hint drains: partial, not full" "2 0" "$(sd h0 h1 partial_drains) $(sd h0 h1 full_drains)"
assert_eq "hint drains: no drain work queued on the skipped CPU $K" "0 0" \
	"$(tcount /tmp/trace-skip.txt sk 1 queue drain_workfn $K) $(tcount /tmp/trace-skip.txt sk 2 queue drain_workfn $K)"
assert_eq "hint drains: no drain work ran on the skipped CPU $K" "0 0" \
	"$(tcount /tmp/trace-skip.txt sk 1 exec drain_workfn $K) $(tcount /tmp/trace-skip.txt sk 2 exec drain_workfn $K)"
assert_eq "memfd seal succeeded with skip_cpus=$K" 0 "$r"
assert_eq "strict memfd seal: row calls +1, skipped +0" "1 0" \
	"$(crd h1 h2 "$RX_MEMFD" calls) $(crd h1 h2 "$RX_MEMFD" skipped)"
assert_eq "strict memfd seal: skipped_cpus +0, a full drain" "0 1" "$(sd h1 h2 skipped_cpus) $(sd h1 h2 full_drains)"
n=$(tcount /tmp/trace-skip.txt skm 1 exec drain_workfn $K)
if ! check "strict memfd seal waited for the skipped CPU $K's drain work ($n)" test "$n" -ge 1; then
	diag "$(twindow /tmp/trace-skip.txt skm 1)"
fi

# ---- 2. the skipped CPU is hogged: an RT task spins on CPU 1 over 8
# batched pages (hog_hint_round: the round counts only with the pages
# seen batched before and after it).
check "skip_cpus=1" dset skip_cpus 1
hog_hint_round 1 10 g
assert_eq "the hog's 8 pages stayed batched on CPU 1 through the 10 hint drains (on an LRU before, after)" "0 0" "$HOG_LRU"
diag "hint: $(show_snap_delta g.0 g.1)"
assert_eq "10 hint drains: the hogged CPU 1 skipped by each, each partial (compaction row: calls skipped partial_drains)" "10 10 10" \
	"$(crd g.0 g.1 "$RX_COMPACT" calls) $(crd g.0 g.1 "$RX_COMPACT" skipped) $(crd g.0 g.1 "$RX_COMPACT" partial_drains)"
assert_eq "hint drains: no timeouts (timeout_us=0, the hogged CPU is not waited for)" 0 "$(sd g.0 g.1 timeouts)"
# Strict seals: the first finds the 8 pages batched on CPU 1 and must
# queue work there and wait for it (the kworker runs in the throttled
# window); later ones may find CPU 1 empty.  Every drain work a seal
# queued on CPU 1 ran before that seal returned.
drain_call -c 0 -n 6 -m -l skh -w 2 memfd >/dev/null
r=$?
dsnap g2
check "trace saved" dtrace_stop /tmp/trace-skiph.txt
lru=$(pend_lru)
check "RT hog stopped" stop_pending
diag "strict: $(show_snap_delta g.1 g2)"
diag "rows: $(crows g2 "$RX_COMPACT")" "$(crows g2 "$RX_MEMFD")"
assert_eq "6 memfd seals under the hog succeeded" 0 "$r"
assert_eq "strict memfd seals under the hog: row calls +6, skipped +0, timed_out +0" "6 0 0" \
	"$(crd g.1 g2 "$RX_MEMFD" calls) $(crd g.1 g2 "$RX_MEMFD" skipped) $(crd g.1 g2 "$RX_MEMFD" timed_out)"
assert_eq "strict memfd seals: skipped_cpus +0, 6 full drains" "0 6" "$(sd g.1 g2 skipped_cpus) $(sd g.1 g2 full_drains)"
assert_eq "strict seals drained the hog's 8 pages off the skipped CPU 1" 8 "$lru"
q=0 w=0 lost=""
for i in 1 2 3 4 5 6; do
	qi=$(tcount /tmp/trace-skiph.txt skh $i queue drain_workfn 1)
	ei=$(tcount /tmp/trace-skiph.txt skh $i exec drain_workfn 1)
	q=$((q + qi))
	[ "$ei" -ge 1 ] && w=$((w + 1))
	[ "$ei" -ge "$qi" ] || lost="$lost seal$i:queued=$qi,ran=$ei"
done
check "the first seal queued drain work on the hogged, skipped CPU 1 ($q queued in all; $w of 6 seals found work there)" \
	test "$(tcount /tmp/trace-skiph.txt skh 1 queue drain_workfn 1)" -ge 1
if ! assert_eq "strict seals waited for every drain work they queued on the hogged, skipped CPU 1" "" "$lost"; then
	diag "$(twindow /tmp/trace-skiph.txt skh 1)"
fi

check "knobs back to defaults" drain_defaults
dsnap_stable all1 || fail "counters stable at end"
check "counter invariants hold over 62-drain-skip" stats_consistent all0 all1

# ---- 3. no memory for the wait block (fault_target=drain_nomem fails every
# allocation of it): the CPUs are then waited for one by one.  The stock
# drain never runs (it would queue work on the skipped CPU too): a hint
# caller still leaves CPU $K alone, a strict one still drains it, and
# fallbacks counts the call.  A fresh load: its counters start at 0.
stop_pending >/dev/null
check "unload lruopt for the nomem fault" unload_lruopt
check "load lruopt fault_target=drain_nomem" load_lruopt fault_target=drain_nomem
check "drain knobs set to defaults" drain_defaults
check "skip_cpus=$K" dset skip_cpus $K
check "tracing started" dtrace_start
check "8 pages pending on CPU $K" start_pending $K 8
# and on CPU 1, which the hint caller does drain: it needs the wait block
check "8 pages pending on CPU 1" \
	bg_start PEND1_PID /tmp/drain-pending1.out '^ready' 10 drain_pending 1 8 300
dsnap n0
drain_call -c 0 -m -l nmh compact >/dev/null
dsnap n1
lru_hint=$(pend_lru)
lru_cpu1=$(pend_lru /tmp/drain-pending1.out "$PEND1_PID")
check "CPU 1's helper stopped" bg_stop "$PEND1_PID"
drain_call -c 0 -m -l nms -w 1 memfd >/dev/null
r=$?
dsnap n2
lru_strict=$(pend_lru)
check "trace saved" dtrace_stop /tmp/trace-nomem.txt
stop_pending >/dev/null
diag "hint: $(show_snap_delta n0 n1)" "strict: $(show_snap_delta n1 n2)"
# CPU $K's own pages are only reported (CPU $K is not isolated in this
# boot: a task there may drain its batch itself; see 67)
diag "nomem hint drain: $lru_hint of CPU $K's 8 pages on the LRU afterwards"
assert_eq "nomem hint drain: CPU $K deferred, no work there, no stock drain (deferred works stock)" \
	"1 0 0" "$(sd n0 n1 deferred) $(tworks /tmp/trace-nomem.txt nmh 1 $K) $(sd n0 n1 stock)"
assert_eq "nomem hint drain: CPU 1's 8 pages drained by its work, waited for one by one, counted in fallbacks (lru fallbacks)" \
	"8 1" "$lru_cpu1 $(sd n0 n1 fallbacks)"
assert_eq "nomem memfd seal succeeded" 0 "$r"
assert_eq "nomem strict seal: a full drain of CPU $K's 8 pages, no stock drain, counted in fallbacks (full lru stock fallbacks)" \
	"1 8 0 1" "$(sd n1 n2 full_drains) $lru_strict $(sd n1 n2 stock) $(sd n1 n2 fallbacks)"
n=$(tworks /tmp/trace-nomem.txt nms 1 $K)
check "nomem strict seal: CPU $K drained by lruopt's queued work, waited for one by one ($n)" test "$n" -ge 1
check "knobs back to defaults" drain_defaults
check "unload the nomem build" unload_lruopt
check "load lruopt again without the fault" load_lruopt
check_dmesg_clean "no kernel warnings during 62-drain-skip"
