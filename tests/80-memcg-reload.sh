#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 80-memcg-reload: load and unload lruopt (patch and unpatch transitions of
# folio_memcg_lock/unlock) while a process is being moved between two
# cgroup-v1 memory groups with charge moving on, and while it keeps
# mapping, dirtying and writing back a shared file.  A lock taken by one
# version and released by the other must balance (move_lock, RCU), so:
# every cycle completes, the counters read in between are sane, the kernel
# log stays clean, and afterwards mapped_file/dirty/writeback are exactly 0
# in both groups.  6.12 has no charge moving: skipped there (40-cycles
# covers load/unload under load on both kernels).
#
# Emulator caveat (QEMU multi-threaded TCG, the default for 6.1 in
# tests/vm/vmrun): when ftrace rewrites the entry of folio_memcg_lock() (at
# insmod, and when the unpatch transition completes) while other vCPUs keep
# executing it, a vCPU can keep running a stale translation of the
# temporary int3: it traps, kprobe_int3_handler() finds the final
# instruction in memory and backs RIP up to the same address, and the vCPU
# traps again, forever (soft lockup, RIP folio_memcg_lock+0x0/+0x1 in
# asm_exc_int3, the code bytes already the final ones).  Real CPUs cannot
# do that after text_poke_bp()'s sync_core IPIs; with -accel
# tcg,thread=single it did not happen in 10/10 cycles.  So under
# multi-threaded TCG the workload and the mover are stopped (SIGSTOP, plus
# sync so no writeback runs) for the instants the code is rewritten - insmod
# and the unpatch transition - and resumed for the patch transition and the
# loaded phase; the full variant (moves during both transitions) runs under
# single-threaded TCG, on a real machine, or with lruopt.memcg_reload=full.
# lruopt-timeout: 900
. /tests/lib.sh
. /tests/lib-memcg.sh
dmesg_mark "80-memcg-reload"

if [ "$(memcg_kernel_has_move)" != 1 ]; then
	skip "load/unload during charge moving" "no cgroup-v1 charge moving on $(uname -r)"
	exit 0
fi

CYCLES=${LRUOPT_MEMCG_CYCLES:-5}
case $ACCEL in
*thread=single*) FULL=1 ;;
tcg*) FULL=0 ;;
*) FULL=1 ;;	# KVM, a real machine, or not started by tests/vm/vmrun
esac
grep -q 'lruopt\.memcg_reload=full' "$CMDLINE_FILE" && FULL=1
if [ $FULL = 1 ]; then
	diag "full variant: moves continue while the code is rewritten (accel '${ACCEL:-none}')"
else
	diag "multi-threaded TCG (accel '$ACCEL'): workload and mover stopped while code is rewritten (see the header)"
fi
FILE=$MCG_FS/shared
ensure_unloaded || exit 1
check "cgroup-v1 memory controller mounts" memcg_v1_mount || exit 1
check "fresh ext4 on brd and groups A, B" mcg_fresh 64 || exit 1
check "memcg_mapdirty running in A" mcg_start_workload "$FILE" 16 3600 || exit 1
echo 3 >"$MCG_B/memory.move_charge_at_immigrate"
check "mover started (A <-> B, move_charge_at_immigrate=3)" mcg_start_mover 3600 || exit 1
mcg_pids_file

# counters_sane BEFORE AFTER: each "fast=.. slow=.. retries=.. stock=.."
# reading is from the same module instance, AFTER taken later: no counter
# went backwards, retries <= slow, some lock calls were counted.
counters_sane() {
	echo "$1" "$2" | awk '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[i] = kv[2] + 0; k[i] = kv[1]; if (kv[2] !~ /^[0-9]+$/) bad = bad " " $i }
		if (bad != "") { print "non-numeric:" bad; exit 1 }
		for (i = 1; i <= 4; i++) if (v[i + 4] < v[i]) { print k[i] " went backwards: " v[i] " -> " v[i + 4]; exit 1 }
		if (v[7] > v[6]) { print "retries " v[7] " > slow " v[6]; exit 1 }
		if (v[5] + v[6] == 0) { print "no lock call counted (fast = slow = 0)"; exit 1 }
	}'
}

# quiesce / resume: around code rewriting under multi-threaded TCG only
quiesce() {
	[ $FULL = 1 ] && return 0
	kill -STOP "$MCG_WL" "$MCG_MV" 2>/dev/null
	sync
	sleep 1
}
resume() {
	[ $FULL = 1 ] && return 0
	kill -CONT "$MCG_WL" "$MCG_MV" 2>/dev/null
}

# load_quiesced: insmod (ftrace rewrites the function entries inside
# klp_enable_patch) with the workload stopped, then the patch transition
# with the workload and the mover running.
load_quiesced() {
	local out
	if [ $FULL = 1 ]; then
		load_lruopt
		return
	fi
	lruopt_loaded && { echo "lruopt is already loaded"; return 1; }
	quiesce
	if ! out=$(insmod "$KO" 2>&1); then
		resume
		echo "insmod $KO failed: $out"
		return 1
	fi
	resume
	[ -d "$LP" ] || { echo "insmod succeeded but $LP does not exist"; return 1; }
	wait_transition || return 1
	echo "loaded; transition ${TRANSITION_SECS}s (insmod with the workload stopped)"
}

# unload_quiesced: under multi-threaded TCG the unpatch transition ends
# with the entries being rewritten at a moment the test cannot choose, so
# the whole unload runs with the workload stopped.
unload_quiesced() {
	local rc
	if [ $FULL = 1 ]; then
		unload_lruopt
		return
	fi
	quiesce
	unload_lruopt
	rc=$?
	resume
	return $rc
}

# lock_calls: the loaded module counted lock calls (fast + slow > 0) and,
# with the run's earlier cycles, at least one of the move_lock path (slow):
# what a loaded phase must see before it is judged; polled, not slept for
lock_calls() {
	local f s
	f=$(mcg_ctr fast) s=$(mcg_ctr slow)
	[ $((f + s)) -gt 0 ] && [ $((SLOW_TOTAL + s)) -gt 0 ] || {
		echo "$(mcg_ctrs), slow in earlier cycles $SLOW_TOTAL"; return 1; }
}
# stock_calls: memcg/enabled=0 let the kernel's own lock run (stock > 0)
stock_calls() {
	[ "$(mcg_ctr stock)" -gt 0 ] || { mcg_ctrs; return 1; }
}

SLOW_TOTAL=0
one_cycle() {
	local c1 c2 c3
	load_quiesced || return 1
	kill -0 "$MCG_MV" 2>/dev/null || { echo "mover died"; return 1; }
	kill -0 "$MCG_WL" 2>/dev/null || { echo "workload died"; return 1; }
	c1=$(mcg_ctrs)
	wait_for 300 "lock calls counted while loaded" lock_calls || return 1
	c2=$(mcg_ctrs)
	echo "counters after the load: $c1; once lock calls were counted: $c2"
	counters_sane "$c1" "$c2" || return 1
	[ "$(mcg_ctr stock)" = 0 ] || { echo "stock calls counted while memcg/enabled=1"; return 1; }
	SLOW_TOTAL=$((SLOW_TOTAL + $(mcg_ctr slow)))
	# switch the feature off and on under the same conditions
	kwrite "$LO/memcg/enabled" 0 >/dev/null || return 1
	wait_for 300 "stock calls counted with memcg/enabled=0" stock_calls || return 1
	c3=$(mcg_ctrs)
	kwrite "$LO/memcg/enabled" 1 >/dev/null || return 1
	counters_sane "$c2" "$c3" || return 1
	unload_quiesced || return 1
	kill -0 "$MCG_MV" 2>/dev/null || { echo "mover died during the unload"; return 1; }
	kill -0 "$MCG_WL" 2>/dev/null || { echo "workload died during the unload"; return 1; }
	echo "load ${LOAD_SECS:-?}s, unload ${UNLOAD_SECS}s"
}
i=1
while [ $i -le "$CYCLES" ]; do
	if ! check "cycle $i/$CYCLES during charge moves: load, counters sane, memcg off/on, unload" one_cycle; then
		fail "cycles $((i + 1))..$CYCLES not run after cycle $i failed"
		dmesg_tail 40
		break
	fi
	i=$((i + 1))
done
check "move_lock was taken (slow > 0) in the loaded phases (sum $SLOW_TOTAL)" test "$SLOW_TOTAL" -gt 0

check "mover made moves and exits cleanly" mcg_finish_mover kill
check "workload exits cleanly (no failed syscall, no corrupted page)" mcg_stop_workload
rm -f /tmp/wl.pids "$FILE"
sync
check "mapped_file, dirty, writeback exactly 0 in A and B after rm + sync" memcg_wait_zero 10 "$MCG_A" "$MCG_B"
check "unmount and unload brd" memcg_fs_teardown
zero_tot=$(for k in $MCG_ALL_KEYS; do printf '%s=0 ' "$k"; done | sed 's/ $//')
tot=""
for k in $MCG_ALL_KEYS; do
	tot="$tot $k=$(( $(memcg_stat "$MCG_A" $k) + $(memcg_stat "$MCG_B" $k) ))"
done
assert_eq "every page-state line of A+B is 0 after unmount" "$zero_tot" "${tot# }"
check "remove groups A and B" memcg_rmgroups
memcg_v1_umount
check_not "lruopt is not loaded after the cycles" lruopt_loaded
check_dmesg_clean "no kernel warnings during load/unload under charge moving"
