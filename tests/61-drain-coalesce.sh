#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 61-drain-coalesce: drain/coalesce_us.  A hint caller (compaction,
# MADV_COLLAPSE) arriving within coalesce_us after the end of a *full*
# drain returns at once (counted coalesced); a strict caller (memfd seal)
# never does; a partial drain opens no window; coalesce_us=0 never
# coalesces; the window expires; a coalesced call drains its own CPU.
# Whether a call lands inside a window is the clock's business, and a slow
# host can stretch any gap, so no call is assumed to be inside or outside
# one: every drain of the test is traced (lruopt:drain, trace_clock mono,
# the clock the module's window is kept in), and each hint call's outcome
# is judged against the gap from the last full drain before it, whoever
# made that drain (khugepaged too): coalesced where the gap is shorter than
# the window by a margin, a drain where it is longer by it, not judged in
# between.  The event follows the module's clock read by a little, but by
# a whole TCG round-robin slice (100 ms) when the vCPU is descheduled in
# between: the margin is half the window, at most 300 ms.  What does not depend on the clock is asserted as counts: a
# strict call is never coalesced, coalesce_us=0 never coalesces, a drain
# that skipped a CPU with pages pending is partial.
# lruopt-timeout: 240
. /tests/lib.sh
. /tests/lib-drain.sh
drain_test_begin 61-drain-coalesce
dsnap_stable all0 || fail "counters stable at start"

# cres TAG REGEX: "full coalesced partial" deltas of the matching caller
# rows between TAG.0 and TAG.1
cres() {
	echo "$(crd "$1.0" "$1.1" "$2" full_drains) $(crd "$1.0" "$1.1" "$2" coalesced) $(crd "$1.0" "$1.1" "$2" partial_drains)"
}

# one TAG MODE [drain_call options...]: drain_call between snapshots
# TAG.0 and TAG.1
one() {
	local tag=$1 mode=$2
	shift 2
	dsnap "$tag.0"
	drain_call "$@" "$mode" >/dev/null || echo "drain_call $mode failed" >&2
	dsnap "$tag.1"
}

# window US: set coalesce_us and mark the trace with it (the judge reads
# the window in effect from these marks)
window() {
	dset coalesce_us "$1" || return 1
	echo "coalesce_us $1" >"$DRAIN_MARKER"
}

# ctrace_start: the drain tests' instance, with the lruopt:drain event and
# the monotonic clock of the module's coalescing window
ctrace_start() {
	dtrace_start || return 1
	echo 0 >"$DTRACE/tracing_on"
	echo mono >"$DTRACE/trace_clock" || { echo "no mono trace clock"; return 1; }
	[ -d "$DTRACE/events/lruopt/drain" ] || { echo "no lruopt:drain event (6.1: lruopt_events loaded?)"; return 1; }
	echo 1 >"$DTRACE/events/lruopt/drain/enable" || return 1
	: >"$DTRACE/trace"
	echo 1 >"$DTRACE/tracing_on"
}

check "tracing started (lruopt:drain, mono clock)" ctrace_start

# ---- 1. back to back with coalesce_us=1000000, in one process
check "coalesce_us=1000000" window 1000000
sleep 1.2	# no full drain in the last second: the first one drains
one a compact -n 2
diag "pair: $(show_snap_delta a.0 a.1)"
assert_eq "two back-to-back compact drains: 2 calls on the compaction row" 2 \
	"$(crd a.0 a.1 "$RX_COMPACT" calls)"

# ---- 2./3. a strict caller inside the window is not coalesced (and waits);
# a hint caller right after that strict full drain is judged like any
dsnap m.0
drain_call -m -l co -w $K memfd >/dev/null
drain_call $COLLAPSE >/dev/null
dsnap m.1
diag "memfd + collapse: $(show_snap_delta m.0 m.1)" "$(crows m.1 "$RX_MEMFD")"
assert_eq "memfd seal inside the window reached lruopt (strict row calls +1)" 1 "$(crd m.0 m.1 "$RX_MEMFD" calls)"
assert_eq "memfd seal inside the window: one full drain, not coalesced (full coalesced partial)" "1 0 0" "$(cres m "$RX_MEMFD")"

# ---- 4. coalesce_us=0: never
check "coalesce_us=0" window 0
one z1 compact
one z2 compact
assert_eq "coalesce_us=0: back-to-back compact drains both drain (full coalesced partial)" "1 0 0 1 0 0" \
	"$(cres z1 "$RX_COMPACT") $(cres z2 "$RX_COMPACT")"

# ---- 5. the window expires: a pair of back-to-back drains 1 s after a
# full drain with coalesce_us=300000
check "coalesce_us=300000" window 300000
one e1 compact
sleep 1
one e2 compact -n 2
diag "pair: $(show_snap_delta e2.0 e2.1)"

# ---- 6. a partial drain opens no window
check "coalesce_us=1000000, skip_cpus=$K" window 1000000 && dset skip_cpus $K
sleep 1.2
check "8 pages pending on CPU $K" start_pending $K 8
one p1 compact
stop_pending >/dev/null
one p2 compact
diag "partial: $(show_snap_delta p1.0 p1.1)" "next: $(show_snap_delta p2.0 p2.1)"
# p1 looks at CPU $K unless a full drain of the last second (khugepaged's)
# had it coalesced, which the judge below checks
if [ "$(crd p1.0 p1.1 "$RX_COMPACT" coalesced)" = 0 ]; then
	assert_eq "drain skipping CPU $K (pending) is partial (full coalesced partial, skipped)" "0 0 1 1" \
		"$(cres p1 "$RX_COMPACT") $(crd p1.0 p1.1 "$RX_COMPACT" skipped)"
else
	diag "p1 was coalesced (a full drain of another caller came within the window): judged below"
fi

# ---- 7. a coalesced call still drains its own CPU, as stock's always
# does: right after a full drain (of 8 pages on CPU $K) opened the window,
# a compaction from CPU 0 with exactly 4 fresh pages of its own batched
# there (drain_call -o 4).  Up to 3 tries for a call that lands inside the
# window.  Judged by the call's inline drain on its row, not by the pages:
# drain_call's exit drains CPU 0 itself (exit_mmap() starts with
# lru_add_drain()) before anything could read them.
check "coalesce_us=1000000, no CPU skipped" window 1000000 && dset skip_cpus ""
own_coalesced() {
	local try
	for try in 1 2 3; do
		sleep 1.2
		start_pending $K 8 || return 1
		drain_call -c 0 compact >/dev/null
		stop_pending >/dev/null
		dsnap "o$try.0"
		drain_call -c 0 -o 4 -l own compact >/dev/null
		dsnap "o$try.1"
		OWN=o$try
		[ "$(crd "o$try.0" "o$try.1" "$RX_COMPACT" coalesced)" = 1 ] && return 0
		echo "try $try: the call was not coalesced: $(show_snap_delta "o$try.0" "o$try.1")"
	done
	return 1
}
if check "a compaction inside the window after a full drain was coalesced (<= 3 tries)" own_coalesced; then
	assert_eq "the coalesced call counted one inline drain on its row" 1 \
		"$(crd "$OWN.0" "$OWN.1" "$RX_COMPACT" inline_drains)"
fi

check "trace saved" dtrace_stop /tmp/trace-coal.txt
check "knobs back to defaults" drain_defaults
n=$(tcount /tmp/trace-coal.txt co 1 exec drain_workfn $K)
if ! check "memfd seal waited for the writer CPU $K's drain work ($n)" test "$n" -ge 1; then
	diag "$(twindow /tmp/trace-coal.txt co 1)"
fi

# ---- the judge: every lruopt:drain event in order.  A full drain that
# drained something (any field non-zero) opened a window; one of nothing
# (every field zero: the nothing-pending pass) opens none, unless drain_all()
# found the pages gone after its pass said otherwise, so it may have: a
# coalesced call next to one is not held against the module.  A full drain
# made while coalesce_us was 0 opens none either: the module notes the end
# of a full drain only while coalescing is on (drain_run()), so a hint call
# right after section 4's z2 must not be judged by it.
grep -E ' drain: |tracing_mark_write: (coalesce_us|drain_call co )' /tmp/trace-coal.txt >/tmp/61-events.txt
judged=$(awk '
	function f(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	function ts(   i, t) { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i; sub(/:$/, "", t); return t * 1000 } return -1 }
	BEGIN { w = -1; full = -1e12; any = -1e12 }
	/tracing_mark_write: coalesce_us / { w = $NF / 1000; next }
	/ drain: / {
		t = ts(); cl = f("class"); r = f("result")
		nz = f("queued") + f("inline") + f("skipped") + f("deferred") + f("remote") + f("timed_out") > 0
		if (cl == "strict" && r == "coalesced") bad = bad "\n strict call coalesced at " t " ms"
		if (cl == "hint") {
			if (w <= 0) {
				if (r == "coalesced") bad = bad "\n coalesced with coalesce_us=0 at " t " ms"
			} else {
				m = w / 2; if (m > 300) m = 300
				g = t - full; ga = t - any
				if (g < w - m) { n++; if (r != "coalesced") bad = bad sprintf("\n %s %.1f ms after a full drain, window %d ms: not coalesced (%s)", $0 ~ /caller=/ ? f("caller") : "?", g, w, r) }
				else if (ga > w + m) { n++; if (r == "coalesced") bad = bad sprintf("\n %s %.1f ms after the last full drain, window %d ms: coalesced", f("caller"), ga, w) }
				else u++
				if (r == "coalesced") c++
			}
		}
		if (r == "full") { any = t; if (nz && w > 0) full = t }
	}
	END { printf "%d %d %d%s\n", n, u, c, bad }' /tmp/61-events.txt)
read -r nj nu nc <<EOF
$(echo "$judged" | head -1)
EOF
diag "judge: $nj hint calls judged, $nu too close to the window's edge to judge, $nc coalesced in all"
assert_eq "every hint call coalesced exactly when within coalesce_us of the last full drain (mono trace clock)" "" \
	"$(echo "$judged" | sed 1d)"
check "the trace holds the test's 8 hint calls with a window ($nj judged + $nu unjudged)" test $((nj + nu)) -ge 8

dsnap_stable all1 || fail "counters stable at end"
check "counter invariants hold over 61-drain-coalesce" stats_consistent all0 all1
check_dmesg_clean "no kernel warnings during 61-drain-coalesce"
