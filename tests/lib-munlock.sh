# SPDX-License-Identifier: GPL-2.0
# lib-munlock.sh - helpers for the munlock feature's tests (tests/70-munlock-*.sh)
# and for any test that checks mlock accounting (mlock_accounting).
# busybox ash; source after lib.sh.
#
# The munlock feature of lruopt: /sys/kernel/lruopt/munlock/{enabled,batch,
# stats/{pages,batches,lock_acquisitions,fallbacks,stock_walks},stats/reset}.
# The exactness tests compare global kernel counters, so nothing else may run
# while they do; mun_quiet_begin also keeps khugepaged and proactive
# compaction from migrating or collapsing the test's pages in the middle of
# a sequence (both would legitimately change the unevictable_pgs_* events).

MUN=$LO/munlock

# mun_enable 0|1: the feature switch (the master switch is forced to 1).
mun_enable() {
	echo 1 >"$LO/enabled" && echo "$1" >"$MUN/enabled" &&
		[ "$(cat "$MUN/enabled")" = "$1" ]
}

# mun_batch N: munlock/batch
mun_batch() {
	echo "$1" >"$MUN/batch" && [ "$(cat "$MUN/batch")" = "$1" ]
}

# mun_stat NAME: one stats counter
mun_stat() {
	cat "$MUN/stats/$1" 2>/dev/null || echo "?"
}

mun_reset() {
	echo 0 >"$MUN/stats/reset"
}

# mun_stats: all counters on one line
mun_stats() {
	local s out=""
	for s in pages batches lock_acquisitions fallbacks stock_walks; do
		out="$out $s=$(mun_stat $s)"
	done
	echo "${out# }"
}

# Sysctl / sysfs values changed by mun_quiet_begin, restored by mun_quiet_end.
MUN_KHP=/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
MUN_PRO=/proc/sys/vm/compaction_proactiveness

mun_quiet_begin() {
	[ -f /tmp/mun-quiet ] && return 0
	{
		echo "khp=$(cat $MUN_KHP 2>/dev/null)"
		echo "pro=$(cat $MUN_PRO 2>/dev/null)"
	} >/tmp/mun-quiet
	[ -w $MUN_KHP ] && echo 3600000 >$MUN_KHP
	[ -w $MUN_PRO ] && echo 0 >$MUN_PRO
	return 0
}

mun_quiet_end() {
	local khp pro
	[ -f /tmp/mun-quiet ] || return 0
	khp=$(sed -n 's/^khp=//p' /tmp/mun-quiet)
	pro=$(sed -n 's/^pro=//p' /tmp/mun-quiet)
	[ -n "$khp" ] && echo "$khp" >$MUN_KHP
	[ -n "$pro" ] && echo "$pro" >$MUN_PRO
	rm -f /tmp/mun-quiet
}

# mun_core FILE: the compared part of munlock_exact's checkpoint lines
# (everything between "run=R " and " | "), one per line.
mun_core() {
	sed -n 's/^RESULT exact scenario=[^ ]* run=[^ ]* \(cp=.*\) | .*/\1/p' "$1"
}

# mun_info FILE FIELD: FIELD (e.g. lo_pages) of the last checkpoint line
mun_info() {
	grep '^RESULT exact .* cp=' "$1" | tail -1 | sed -n "s/.* $2=\([-0-9]*\).*/\1/p"
}

# mun_exact_run SCENARIO LABEL ENABLED OUT: run munlock_exact with the feature
# switch at ENABLED.  Fails unless the program exited 0 and printed its end
# line.
mun_exact_run() {
	local sc=$1 label=$2 en=$3 out=$4 rc
	mun_enable "$en" || { echo "cannot set $MUN/enabled=$en" >"$out"; return 1; }
	if [ "$sc" = memcg ]; then
		mun_cg_fresh >"$out" 2>&1 || { echo "memcg groups: setup failed" >>"$out"; return 1; }
	fi
	munlock_exact "$sc" "$label" >>"$out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q "^RESULT exact scenario=$sc run=$label \(done\|skip\)" "$out"; then
		echo "munlock_exact $sc $label exited $rc" >>"$out"
		return 1
	fi
	return 0
}

# mun_diff A B: first differing checkpoint lines (for diagnostics)
mun_diff() {
	mun_core "$1" >/tmp/mun-diff.a
	mun_core "$2" >/tmp/mun-diff.b
	diff /tmp/mun-diff.a /tmp/mun-diff.b | head -${3:-12}
}

# ------------------------------------------------------------ memcg scenario
# Two memory cgroups for munlock_exact's "memcg" scenario, exported as
# MUN_CG_A / MUN_CG_B.  6.1: the cgroup-v1 memory hierarchy of lib-memcg.sh
# (mounted there if it is not yet: the 80-memcg tests mount it the same,
# idempotent way); 6.12 (no v1 memory controller): cgroup v2 with +memory in
# the root's subtree_control, switched off again by mun_cg_end.
# Without a usable controller the variables stay unset and the scenario
# reports "skip".
mun_cg_begin() {
	unset MUN_CG_A MUN_CG_B
	MUN_CG_MODE=""
	if [ -f /tests/lib-memcg.sh ] && [ "$(kernel_short)" = 6.1 ]; then
		. /tests/lib-memcg.sh
		memcg_v1_mount >/dev/null 2>&1 || { echo "no v1 memory hierarchy"; return 0; }
		MUN_CG_MODE=v1
		MUN_CG_A=$MCG_V1/mun-a MUN_CG_B=$MCG_V1/mun-b
	elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || {
			echo +memory >/sys/fs/cgroup/cgroup.subtree_control || return 0
			MUN_CG_MODE=v2-enabled
		}
		[ -n "$MUN_CG_MODE" ] || MUN_CG_MODE=v2
		MUN_CG_A=/sys/fs/cgroup/mun-a MUN_CG_B=/sys/fs/cgroup/mun-b
	else
		echo "no memory controller"
		return 0
	fi
	export MUN_CG_A MUN_CG_B
	echo "memcg groups ($MUN_CG_MODE): $MUN_CG_A $MUN_CG_B"
}

# mun_cg_fresh: (re)create both groups empty
mun_cg_fresh() {
	local g
	[ -n "${MUN_CG_A:-}" ] || return 0
	for g in "$MUN_CG_A" "$MUN_CG_B"; do
		[ -d "$g" ] && { rmdir "$g" || return 1; }
		mkdir "$g" || return 1
	done
}

mun_cg_end() {
	local g
	[ -n "${MUN_CG_A:-}" ] || return 0
	for g in "$MUN_CG_A" "$MUN_CG_B"; do
		[ -d "$g" ] && rmdir "$g"
	done
	[ "$MUN_CG_MODE" = v2-enabled ] && echo -memory >/sys/fs/cgroup/cgroup.subtree_control
	unset MUN_CG_A MUN_CG_B
	return 0
}

# mun_prog NAME OUT PATTERN COUNT CMD [ARGS...]: run a munlock test program
# with its output in OUT; one result NAME: it exited 0 and printed COUNT
# lines matching ^PATTERN (COUNT "N": exactly N, "N+": at least N).  The
# matching lines become diagnostics.
mun_prog() {
	local name=$1 out=$2 pat=$3 want=$4 rc n ok
	shift 4
	"$@" >"$out" 2>&1
	rc=$?
	n=$(grep -c "^$pat" "$out")
	case $want in
	*+) [ "$n" -ge "${want%+}" ] && ok=1 ;;
	*) [ "$n" -eq "$want" ] && ok=1 ;;
	esac
	if [ $rc -ne 0 ] || [ -z "${ok:-}" ]; then
		fail "$name" "status $rc, $n lines '$pat' (want $want)" "$(tail -5 "$out")"
		return 1
	fi
	pass "$name"
	diag "$(grep "^$pat" "$out")"
}

# start_mlockhold MIB FILE: run mlockhold (MIB MiB, at most 120 s) in the
# background, output in FILE, and wait up to 60 s until it has locked.
# Sets MH_PID.
start_mlockhold() {
	bg_start MH_PID "$2" locked 60 mlockhold "$1" 120
}

# mlock_accounting MIB: lock MIB MiB with mlockhold and require Mlocked to
# grow by about that much (minus what may still sit in per-CPU mlock
# batches), then release it and require Mlocked back at the start value.
mlock_accounting() {
	local mib=$1 base held want out
	stat_refresh
	base=$(meminfo Mlocked)
	start_mlockhold "$mib" /tmp/mlockhold.out || return 1
	drain_now
	stat_refresh
	held=$(meminfo Mlocked)
	# Up to 15 pages per CPU may still be in the per-CPU mlock batch.
	want=$((base + mib * 1024 - 64 * $(nproc)))
	bg_stop "$MH_PID"
	out=$?
	if [ "$held" -lt "$want" ]; then
		echo "Mlocked while holding ${mib} MiB: $held kB (baseline $base kB, expected >= $want kB)"
		return 1
	fi
	if [ $out -ne 0 ]; then
		echo "mlockhold exited $out: $(cat /tmp/mlockhold.out)"
		return 1
	fi
	echo "Mlocked: baseline $base kB, held $held kB"
	wait_mlocked_zero 10
}
