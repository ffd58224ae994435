#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 95-stress: LRUOPT_STRESS_CYCLES (default 100) cycles of
#   insmod (random module parameters) -> every feature switched on ->
#   random knob writes with random pauses -> livepatch disabled -> rmmod
# while a mixed workload runs on all vCPUs:
#   - mlockloop + faultloop (mlock/munlock, VMA split/merge, page faults)
#   - a fadvise(DONTNEED) storm on ext4 (brd), 4 processes, in bursts
#   - compaction triggers (compact_memory) once a second
#   - an RT hog (SCHED_FIFO, faulting) on CPU 1, 1 s on / 3 s off
#   - on 6.1: memcg_mapdirty in a cgroup-v1 group while memcg_mover moves it
#     between two groups with move_charge_at_immigrate=3
# Pass: every cycle's transitions complete (slowest reported), every
# workload ends with status 0 (no failed syscall, no corrupted data),
# Mlocked back to 0, Unevictable back to its baseline, the memcg groups'
# mapped_file/dirty/writeback back to 0, free memory (MemFree plus the
# per-cpu free lists) after teardown within 1 % of the baseline taken after
# a warm-up round (no leaked pages), and a clean kernel log.
# lruopt-timeout: 1650
. /tests/lib.sh
. /tests/lib-drain.sh
. /tests/lib-memcg.sh
dmesg_mark "95-stress"
ensure_unloaded || exit 1

CYCLES=${LRUOPT_STRESS_CYCLES:-100}
STOP=/tmp/stress.stop
ERR=/tmp/stress.err
DUR=$((CYCLES * 60 + 600))	# bound for the workloads; stopped earlier
MEMCG=$(memcg_expected_supported)
NCPU=$(ncpus)
rm -f "$STOP" "$ERR"

# rnd N: a random number in 0..N-1
rnd() {
	echo $((RANDOM % $1))
}

# pick WORD...: one of the words, at random
pick() {
	local n
	n=$(rnd $#)
	shift "$n"
	echo "$1"
}

# settle: what "back to baseline" is measured after: no dirty or batched
# pages, page cache and slab caches dropped, memory compacted.
settle() {
	sync
	drain_now
	echo 3 >/proc/sys/vm/drop_caches
	drain_now
	sleep 1
	# fold the per-CPU vmstat deltas now (the counters read next are
	# exact), not whenever the vmstat worker comes round
	stat_refresh
}

# free_kb: free pages, including those parked on the per-cpu free lists
# (/proc/zoneinfo pagesets "count:"), which MemFree leaves out and which
# a busy run refills by megabytes.
free_kb() {
	echo $(($(meminfo MemFree) + $(awk '$1 == "count:" { s += $2 } END { print s + 0 }' /proc/zoneinfo) * 4))
}

# ---- baselines, after one warm-up round, before any workload
# The warm-up loads what stays loaded or allocated for good on first use
# (ext4, brd's module, the v1 memory hierarchy, ftrace's and livepatch's
# first-use allocations), so that the comparison after 100 cycles sees
# what the cycles leaked, not what the first one set up.
warm_up() {
	memcg_fs_setup 96 || return 1
	if [ "$MEMCG" = 1 ]; then
		memcg_v1_mount && memcg_mkgroups && memcg_rmgroups || return 1
	fi
	load_lruopt && unload_lruopt && memcg_fs_teardown
}
check "warm-up: ext4 on brd, memcg groups, one load/unload" warm_up || exit 1
settle
BASE_FREE=$(free_kb)
BASE_UNEV=$(meminfo Unevictable)
diag "baseline: free ${BASE_FREE} kB (MemFree + per-cpu lists), Unevictable ${BASE_UNEV} kB, Mlocked $(meminfo Mlocked) kB"

# ---- the mixed workload
# One brd+ext4 filesystem for the storm and the memcg workload.
check "ext4 on brd for the workload" memcg_fs_setup 96 || exit 1
mkdir -p "$MCG_FS/storm"

check "mlockloop + faultloop started" start_workload "$DUR" || exit 1

# bg_loop NAME CMD...: run CMD in a loop until $STOP exists, a failing
# round is recorded in $ERR.  Each loop's pid is registered for run-all.sh.
bg_loop() {
	local name=$1
	shift
	(
		i=0
		while [ ! -f "$STOP" ]; do
			if ! out=$("$@" 2>&1); then
				echo "$name round $i: $out" | head -3 >>"$ERR"
			fi
			i=$((i + 1))
		done
		echo "$name: $i rounds" >"/tmp/stress.$name.out"
	) &
	echo $! >>/tmp/wl.pids
	BG_PIDS="${BG_PIDS:-} $!"
}

storm_round() {
	fadvstorm 4 20 "$MCG_FS/storm" 64 stress >/tmp/stress.storm.last || return 1
	grep -q ' errors=0' /tmp/stress.storm.last || { cat /tmp/stress.storm.last; return 1; }
	sleep 0.5
}
compact_round() {
	echo 1 >/proc/sys/vm/compact_memory || return 1
	sleep 1
}
hog_round() {
	rthog 1 1 50 256 >/dev/null || return 1
	sleep 3
}
bg_loop storm storm_round
bg_loop compact compact_round
[ "$NCPU" -ge 2 ] && bg_loop hog hog_round

if [ "$MEMCG" = 1 ]; then
	mcg_setup() { memcg_v1_mount && memcg_mkgroups; }
	if check "cgroup-v1 memory groups A and B (move_charge_at_immigrate=3)" mcg_setup; then
		check "memcg_mapdirty in group A" mcg_start_workload "$MCG_FS/m" 8 "$DUR" 2000 &&
			check "memcg_mover moving it between A and B" mcg_start_mover "$DUR" 200000
		echo "$MCG_WL $MCG_MV" >>/tmp/wl.pids
	fi
fi

# ---- random knob writes (all valid; the fuzz test covers invalid ones)
knob_write() {
	local f v
	case $(rnd 11) in
	0) f=$LO/enabled v=$(pick 0 1 1) ;;
	1) f=$LO/drain/enabled v=$(pick 0 1 1) ;;
	2) f=$LO/munlock/enabled v=$(pick 0 1 1) ;;
	3) f=$LO/memcg/enabled v=$(pick 0 1 1)
	   [ "$(readval "$LO/memcg/supported")" = 1 ] || v=0 ;;
	4) f=$LO/drain/timeout_us v=$(pick 0 200 2000 100000) ;;
	5) f=$LO/drain/coalesce_us v=$(pick 0 1000 20000) ;;
	6) f=$LO/drain/skip_cpus v=$(pick "" "$((NCPU - 1))" "0-$((NCPU - 1))" N) ;;
	7) f=$LO/drain/skip_isolated v=$(pick 0 1) ;;
	8) f=$LO/munlock/batch v=$(pick 1 15 64 256 512) ;;
	9) f=$LO/$(pick drain munlock memcg)/stats/reset v=0 ;;
	*) f=$LO/drain/callers v=read ;;
	esac
	if [ "$v" = read ]; then
		cat "$f" >/dev/null || { echo "read of $f failed"; return 1; }
		return 0
	fi
	kwrite "$f" "$v" >/dev/null || { echo "valid write '$v' to $f failed: $(kwrite "$f" "$v")"; return 1; }
	KNOB_WRITES=$((KNOB_WRITES + 1))
}

one_cycle() {
	local params="" k n
	# One load in four leaves memcg out of the patch (6.1), one in four
	# starts with the master switch off (both: stock paths until switched).
	[ "$MEMCG" = 1 ] && [ "$(rnd 4)" = 0 ] && params=patch_memcg=0
	[ "$(rnd 4)" = 0 ] && params="$params enabled=0"
	load_lruopt $params || return 1
	echo "$TRANSITION_SECS" >>/tmp/stress.loads
	for k in enabled drain/enabled munlock/enabled; do
		kwrite "$LO/$k" 1 >/dev/null || { echo "cannot enable $k"; return 1; }
	done
	n=$((2 + $(rnd 6)))
	while [ "$n" -gt 0 ]; do
		knob_write || return 1
		[ "$(rnd 3)" = 0 ] && sleep 0.$(rnd 3)
		n=$((n - 1))
	done
	# What the replacements did in this cycle (the counters go with rmmod):
	# summed over the run, each must be > 0, or the patch never ran.
	echo "$(readval "$LO/drain/stats/calls") $(readval "$LO/drain/stats/stock") $(readval "$LO/munlock/stats/pages") $(readval "$LO/munlock/stats/stock_walks") $(($(readval "$LO/memcg/stats/fast") + $(readval "$LO/memcg/stats/slow")))" >>/tmp/stress.work
	unload_lruopt || return 1
	echo "$UNLOAD_SECS" >>/tmp/stress.unloads
	workload_running || { echo "mlockloop/faultloop died during this cycle"; return 1; }
	if [ -s "$ERR" ]; then
		echo "a background workload round failed:"
		cat "$ERR"
		return 1
	fi
}

KNOB_WRITES=0
rm -f /tmp/stress.loads /tmp/stress.unloads /tmp/stress.work
t0=$(now)
i=1
ok=0
while [ $i -le "$CYCLES" ]; do
	# in this shell, not a subshell: the counters above must survive
	if ! one_cycle >/tmp/stress.cycle 2>&1; then
		fail "stress cycle $i/$CYCLES" "$(cat /tmp/stress.cycle)"
		dmesg_tail 40
		break
	fi
	ok=$((ok + 1))
	[ $((i % 10)) = 0 ] && diag "cycle $i/$CYCLES done ($(elapsed_since "$t0")s, $KNOB_WRITES knob writes)"
	i=$((i + 1))
done
assert_eq "all $CYCLES load/patch/toggle/unpatch/unload cycles completed" "$CYCLES" "$ok"
slow_load=$(sort -n /tmp/stress.loads 2>/dev/null | tail -1)
slow_unload=$(sort -n /tmp/stress.unloads 2>/dev/null | tail -1)
# columns: drain calls, of them stock, munlock pages, stock walks, memcg fast+slow
work=$(awk '{ for (i = 1; i <= NF; i++) s[i] += $i } END { printf "%d %d %d %d %d", s[1], s[2], s[3], s[4], s[5] }' /tmp/stress.work 2>/dev/null)
set -- $work
diag "replacements ran: drain $1 calls ($2 on the stock path), munlock $3 pages batched ($4 stock walks), memcg $5 lock calls"
check "the drain replacement ran (calls $1 > stock path $2)" test "${1:-0}" -gt "${2:-0}"
check "the batched munlock walk ran ($3 pages)" test "${3:-0}" -gt 0
if [ "$MEMCG" = 1 ]; then
	check "the memcg lock replacement ran ($5 fast+slow)" test "${5:-0}" -gt 0
fi
diag "transitions: $(grep -c . /tmp/stress.loads 2>/dev/null) patch, slowest ${slow_load:-?}s; $(grep -c . /tmp/stress.unloads 2>/dev/null) unpatch, slowest ${slow_unload:-?}s; $(elapsed_since "$t0")s in all"

# ---- stop everything and check the workloads' verdicts
touch "$STOP"
for p in $BG_PIDS; do wait "$p"; done
cat /tmp/stress.*.out 2>/dev/null | sed 's/^/# /'
check "fadvise storm, compaction and RT hog rounds never failed" sh -c "! grep -q . $ERR 2>/dev/null"
[ -s "$ERR" ] && diag "$(head -5 "$ERR")"
check "mlockloop and faultloop exit 0 (no failed syscall, no corruption)" stop_workload
if [ "$MEMCG" = 1 ] && [ -n "${MCG_WL:-}" ]; then
	check "memcg_mover moved the workload (status 0)" mcg_finish_mover kill
	diag "moves: ${MCG_MOVES:-0}"
	check "memcg_mapdirty exits 0 (no corruption across moves)" mcg_stop_workload
	rm -f "$MCG_FS/m"
	sync
	check "mapped_file, dirty, writeback back to 0 in both groups" memcg_wait_zero 20 "$MCG_A" "$MCG_B"
fi
check_not "lruopt is not loaded" lruopt_loaded
check "no livepatch left in /sys/kernel/livepatch" sh -c '[ -z "$(ls /sys/kernel/livepatch)" ]'
check "Mlocked back to 0" wait_mlocked_zero 20
rm -rf "$MCG_FS/storm"
check "workload filesystem torn down" memcg_fs_teardown
[ "$MEMCG" = 1 ] && check "memcg groups removed" memcg_rmgroups
settle
assert_eq "Unevictable back to its baseline (kB)" "$BASE_UNEV" "$(meminfo Unevictable)"
free=$(free_kb)
diag "free ${free} kB after teardown, baseline ${BASE_FREE} kB (slab: $(meminfo Slab) kB)"
check "free memory within 1% of the baseline (no leaked pages: $free vs $BASE_FREE kB)" \
	awk -v a="$free" -v b="$BASE_FREE" 'BEGIN { d = b - a; exit !(d <= b / 100) }'
diag "random knob writes accepted: $KNOB_WRITES"
check_dmesg_clean "no kernel warnings during the stress run"
