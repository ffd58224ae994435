#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 65-drain-rtstorm: on PREEMPT_RT with remote drains, no hint caller of a
# fadvise(DONTNEED) storm waits for another CPU's queued work.  Counts only,
# never time: the tail this guards (a hint caller waiting 1-2 ticks for a
# kworker behind a storm writer, issue 46) is the benchmark's to measure.
# Four processes, pinned to CPUs 0-3, each keep the first page of their own
# 64 KiB file (ext4 on brd) mapped and call posix_fadvise(DONTNEED) in a
# loop, each call after a futimens() of the file (fadvstorm with
# FADVSTORM_ONCE=1 FADVSTORM_TOUCH=1): every call drains, and every CPU
# keeps a buffer head in its bh LRU, which only queued work on that CPU
# can drop, so each call finds work for the other CPUs.  Each storm is
# traced (lruopt:drain) between two counter snapshots.
#   defaults, and coalesce_us=20000:
#     d(hint_waits) = 0, and no hint event with queued > nowait (a hint
#     call that queued work it then waited for; on a build without the
#     nowait field every hint event with queued > 0 counts);
#     not vacuous: at least 4 x ITERS hint events, d(cpus_nowait) >= 1 (the
#     storm did need other CPUs' work), d(timeouts) = d(fallbacks) = 0.
#   control, drain/remote=0 (hint callers wait for queued work, as on
#     non-RT kernels): d(hint_waits) >= 1 and waiting hint events >= 1, so
#     the two counts above can count.
# Reported only: each storm's p99 and median (fadvstorm's RESULT lines),
# remote_shared (busy locks held by a drain begun after the caller's scan)
# and partial_drains.  Not RT: skipped (hint callers wait for queued work
# there, as stock's do; 60-drain-semantics checks the counters exist).
# lruopt-timeout: 400
. /tests/lib.sh
is_rt && DRAIN_REMOTE=1
. /tests/lib-drain.sh
drain_test_begin 65-drain-rtstorm 4

if ! is_rt; then
	skip "hint callers of an RT fadvise storm wait for no queued work" "PREEMPT_RT only"
	exit 0
fi
ITERS=${LRUOPT_RTSTORM_ITERS:-1500}
trap 'drain_cleanup; drain_fs_teardown >/dev/null 2>&1' EXIT
check "ext4 on brd for the storm" drain_fs_setup || exit 1
mkdir -p "$DRAIN_FS/storm"

# etrace_start: the drain tests' instance with lruopt:drain only
etrace_start() {
	[ -d "$TRACEFS/instances" ] || { echo "no $TRACEFS/instances"; return 1; }
	[ -d "$DTRACE" ] || mkdir "$DTRACE" || return 1
	echo 0 >"$DTRACE/tracing_on"
	echo 4096 >"$DTRACE/buffer_size_kb"
	[ -d "$DTRACE/events/lruopt/drain" ] || { echo "no lruopt:drain event"; return 1; }
	echo 1 >"$DTRACE/events/lruopt/drain/enable" || return 1
	: >"$DTRACE/trace"
	echo 1 >"$DTRACE/tracing_on"
}

# etrace_stop FILE: stop, save; fails when events were lost
etrace_stop() {
	local lost
	echo 0 >"$DTRACE/tracing_on"
	cat "$DTRACE/trace" >"$1"
	echo 0 >"$DTRACE/events/lruopt/drain/enable"
	lost=$(cat "$DTRACE"/per_cpu/cpu*/stats 2>/dev/null |
		awk '$1 == "overrun:" || ($1 == "dropped" && $2 == "events:") { s += $NF } END { print s + 0 }')
	: >"$DTRACE/trace"
	[ "$lost" = 0 ] || { echo "trace buffer overran ($lost events lost)"; return 1; }
}

# hint_events FILE: "N WAITED" over the hint drain events of FILE: their
# number, and those that queued work they did not leave unwaited
# (queued > nowait; a missing nowait field reads 0)
hint_events() {
	awk '
		function f(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2) + 0; return 0 }
		/ drain: / && / class=hint / { n++; if (f("queued") > f("nowait")) w++ }
		END { printf "%d %d\n", n, w }' "$1"
}

# storm TAG: one traced storm between snapshots TAG.0 and TAG.1; sets
# EV_N and EV_W (hint_events), and OUT (fadvstorm's RESULT line)
storm() {
	etrace_start || return 1
	dsnap "$1.0"
	OUT=$(FADVSTORM_ONCE=1 FADVSTORM_TOUCH=1 fadvstorm 4 "$ITERS" "$DRAIN_FS/storm" 64 "$1") || {
		echo "fadvstorm failed: $OUT"
		return 1
	}
	dsnap "$1.1"
	etrace_stop "/tmp/65-$1.trace" || return 1
	read -r EV_N EV_W <<EOF
$(hint_events "/tmp/65-$1.trace")
EOF
	echo "$OUT"
	echo "$(show_snap_delta "$1.0" "$1.1")"
	echo "hint events $EV_N, of them waited for queued work $EV_W"
	[ "$(kv "$OUT" errors)" = 0 ]
}

# judge TAG SETTING: the counts of a storm with remote drains
judge() {
	local t=$1 s=$2
	diag "RESULT name=rtstorm-$s kernel=$(kernel_short) calls=$((4 * ITERS)) p99_ns=$(kv "$OUT" p99_ns) median_ns=$(kv "$OUT" median_ns) remote_shared=$(sd "$t.0" "$t.1" remote_shared) remote_busy=$(sd "$t.0" "$t.1" remote_busy) partial=$(sd "$t.0" "$t.1" partial_drains)"
	assert_eq "$s: no hint call waited for queued work (hint_waits delta)" 0 "$(sd "$t.0" "$t.1" hint_waits)"
	assert_eq "$s: no hint drain event queued work it waited for (queued > nowait)" 0 "$EV_W"
	check "$s: the trace holds the storm's $((4 * ITERS)) hint calls ($EV_N hint events)" \
		test "$EV_N" -ge $((4 * ITERS))
	check "$s: the storm needed other CPUs' work, left unwaited (cpus_nowait +$(sd "$t.0" "$t.1" cpus_nowait))" \
		test "$(sd "$t.0" "$t.1" cpus_nowait)" -ge 1
	assert_eq "$s: no timeouts" 0 "$(sd "$t.0" "$t.1" timeouts)"
	assert_eq "$s: no serial fallbacks" 0 "$(sd "$t.0" "$t.1" fallbacks)"
	check "$s: counter invariants hold over the storm" stats_consistent "$t.0" "$t.1"
}

check "defaults: storm of $ITERS calls x 4 CPUs" storm def && judge def defaults
dset coalesce_us 20000 || fail "coalesce_us=20000"
check "coalesce_us=20000: storm of $ITERS calls x 4 CPUs" storm coal && judge coal coalesce
dset coalesce_us 0 || fail "coalesce_us=0"

# The control: the same storm with remote drains off.
dset remote 0 || fail "drain/remote=0"
check "remote=0 (control): storm of $ITERS calls x 4 CPUs" storm ctl
diag "RESULT name=rtstorm-remote0 kernel=$(kernel_short) calls=$((4 * ITERS)) p99_ns=$(kv "$OUT" p99_ns) median_ns=$(kv "$OUT" median_ns)"
check "remote=0: hint calls waited for queued work and hint_waits counted them (+$(sd ctl.0 ctl.1 hint_waits), events $EV_W)" \
	test "$(sd ctl.0 ctl.1 hint_waits)" -ge 1 -a "$EV_W" -ge 1
check "knobs back to defaults" drain_defaults
check_dmesg_clean "no kernel warnings during 65-drain-rtstorm"
