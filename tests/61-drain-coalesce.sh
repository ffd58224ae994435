#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 61-drain-coalesce: drain/coalesce_us.  A hint caller (compaction,
# MADV_COLLAPSE) arriving within coalesce_us after the end of a *full* drain
# returns at once (counted coalesced); a strict caller (memfd seal) never
# does; a partial drain opens no window; coalesce_us=0 never coalesces; the
# window expires.
# lruopt-timeout: 240
. /tests/lib.sh
. /tests/lib-drain.sh
drain_test_begin 61-drain-coalesce
dsnap_stable all0 || fail "counters stable at start"

# cres TAG REGEX: "full coalesced partial" deltas of the matching caller
# rows between TAG.0 and TAG.1 (per row, so that a background hint caller
# such as khugepaged draining at the same time cannot be counted)
cres() {
	echo "$(crd "$1.0" "$1.1" "$2" full_drains) $(crd "$1.0" "$1.1" "$2" coalesced) $(crd "$1.0" "$1.1" "$2" partial_drains)"
}

# quiet T1 T2 WHAT: true when no caller row other than the compaction one
# made a full drain between the two snapshots.  Such a drain (khugepaged's
# scan, a memfd seal) legitimately opens a coalescing window of its own;
# the assertions that depend on the window being closed are only judged
# when there was none, otherwise a diag line says WHAT was not judged.
quiet() {
	local o
	o=$(( $(sd "$1" "$2" full_drains) - $(crd "$1" "$2" "$RX_COMPACT" full_drains) ))
	[ "$o" -eq 0 ] && return 0
	diag "$3 not judged: $o background full drain(s) opened a window of their own"
	return 1
}

# one compact drain between snapshots TAG.0 and TAG.1
one() {	# TAG MODE [drain_call options...]
	local tag=$1 mode=$2
	shift 2
	dsnap "$tag.0"
	drain_call "$@" "$mode" >/dev/null || echo "drain_call $mode failed" >&2
	dsnap "$tag.1"
}

# ---- 1. back to back with coalesce_us=1000000
check "coalesce_us=1000000" dset coalesce_us 1000000
dsnap a.pre
sleep 1.2	# no full drain in the last second
# back to back in one process (separate processes and snapshots between
# them can take more than the window on single-threaded TCG); the sleep
# makes the first one a real drain, so "one full + one coalesced" means
# the second was coalesced
one a compact -n 2
diag "pair: $(show_snap_delta a.0 a.1)"
assert_eq "two back-to-back compact drains: 2 calls on the compaction row, 1 coalesced" "2 1" \
	"$(crd a.0 a.1 "$RX_COMPACT" calls) $(crd a.0 a.1 "$RX_COMPACT" coalesced)"
if quiet a.pre a.1 "pair"; then
	assert_eq "two back-to-back compact drains: one full drain, one coalesced, no partial" "1 1 0" \
		"$(cres a "$RX_COMPACT")"
fi

# ---- 2./3. a strict caller inside the window is not coalesced (and waits);
# a hint caller right after that strict full drain is.  Both back to back
# (the window is 1 s, shell work between them would eat it); attributed by
# their rows of the callers table.
check "tracing started" dtrace_start
dsnap m.0
drain_call -m -l co -w $K memfd >/dev/null
drain_call $COLLAPSE >/dev/null
dsnap m.1
check "trace saved" dtrace_stop /tmp/trace-co.txt
diag "memfd + collapse: $(show_snap_delta m.0 m.1)" "$(crows m.1 "$RX_MEMFD")"
assert_eq "memfd seal inside the window reached lruopt (strict row calls +1)" 1 "$(crd m.0 m.1 "$RX_MEMFD" calls)"
assert_eq "memfd seal inside the window: not coalesced" 0 "$(crd m.0 m.1 "$RX_MEMFD" coalesced)"
assert_eq "memfd seal: one full drain (full coalesced partial)" "1 0 0" "$(cres m "$RX_MEMFD")"
n=$(tcount /tmp/trace-co.txt co 1 exec drain_workfn $K)
if ! check "memfd seal waited for the writer CPU $K's drain work ($n)" test "$n" -ge 1; then
	diag "$(twindow /tmp/trace-co.txt co 1)"
fi
assert_eq "MADV_COLLAPSE right after the strict full drain: coalesced (full coalesced partial)" "0 1 0" \
	"$(cres m "$RX_COLLAPSE")"

# ---- 4. coalesce_us=0: never
check "coalesce_us=0" dset coalesce_us 0
one z1 compact
one z2 compact
assert_eq "coalesce_us=0: back-to-back compact drains both drain (full coalesced partial)" "1 0 0 1 0 0" \
	"$(cres z1 "$RX_COMPACT") $(cres z2 "$RX_COMPACT")"

# ---- 5. the window expires: a pair of back-to-back drains 1 s after a
# full drain with coalesce_us=300000: the first is not coalesced (window
# over), the second is (window of the first)
check "coalesce_us=300000" dset coalesce_us 300000
one e1 compact
sleep 1
one e2 compact -n 2
diag "pair: $(show_snap_delta e2.0 e2.1)"
if quiet e1.1 e2.1 "expiry"; then
	assert_eq "coalesce_us=300000: of two drains 1 s after a full drain, the first drains, the second is coalesced (full coalesced partial)" "1 1 0" \
		"$(cres e2 "$RX_COMPACT")"
fi

# ---- 6. a partial drain opens no window
check "coalesce_us=1000000, skip_cpus=$K" dset coalesce_us 1000000 && dset skip_cpus $K
dsnap p.pre
sleep 1.2
check "8 pages pending on CPU $K" start_pending $K 8
one p1 compact
stop_pending >/dev/null
one p2 compact
diag "partial: $(show_snap_delta p1.0 p1.1)" "next: $(show_snap_delta p2.0 p2.1)"
if quiet p.pre p1.1 "partial drain"; then
	assert_eq "drain skipping CPU $K (pending) is partial (full coalesced partial, skipped)" "0 0 1 1" \
		"$(cres p1 "$RX_COMPACT") $(crd p1.0 p1.1 "$RX_COMPACT" skipped)"
fi
if quiet p1.1 p2.1 "after-partial"; then
	assert_eq "the drain right after a partial one is not coalesced (coalesced)" 0 "$(crd p2.0 p2.1 "$RX_COMPACT" coalesced)"
fi
check "knobs back to defaults" drain_defaults

dsnap_stable all1 || fail "counters stable at end"
check "counter invariants hold over 61-drain-coalesce" stats_consistent all0 all1
check_dmesg_clean "no kernel warnings during 61-drain-coalesce"
