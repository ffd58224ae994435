#!/bin/sh
# 80-memcg-reload: load and unload lruopt (patch and unpatch transitions of
# folio_memcg_lock/unlock) while a process is being moved between two
# cgroup-v1 memory groups with charge moving on, and while it keeps
# mapping, dirtying and writing back a shared file.  A lock taken by one
# version and released by the other must balance (move_lock, RCU), so:
# every cycle completes, the counters read in between are sane, the kernel
# log stays clean, and afterwards mapped_file/dirty/writeback are exactly 0
# in both groups.  6.12 has no charge moving: skipped there (40-cycles
# covers load/unload under load on both kernels).
# lruopt-timeout: 900
. /tests/lib.sh
. /tests/lib-memcg.sh
dmesg_mark "80-memcg-reload"

if [ "$(memcg_expected_supported)" != 1 ]; then
	skip "load/unload during charge moving" "no cgroup-v1 charge moving on $(uname -r)"
	exit 0
fi

CYCLES=${LRUOPT_MEMCG_CYCLES:-5}
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

SLOW_TOTAL=0
one_cycle() {
	local c1 c2 c3 st
	load_lruopt || return 1
	kill -0 "$MCG_MV" 2>/dev/null || { echo "mover died"; return 1; }
	kill -0 "$MCG_WL" 2>/dev/null || { echo "workload died"; return 1; }
	sleep 2
	c1=$(mcg_ctrs)
	sleep 2
	c2=$(mcg_ctrs)
	echo "counters after 2 s: $c1; after 4 s: $c2"
	counters_sane "$c1" "$c2" || return 1
	[ "$(mcg_ctr stock)" = 0 ] || { echo "stock calls counted while memcg/enabled=1"; return 1; }
	SLOW_TOTAL=$((SLOW_TOTAL + $(mcg_ctr slow)))
	# switch the feature off and on under the same conditions
	kwrite "$LO/memcg/enabled" 0 >/dev/null || return 1
	sleep 1
	c3=$(mcg_ctrs)
	st=$(mcg_ctr stock)
	kwrite "$LO/memcg/enabled" 1 >/dev/null || return 1
	[ "${st:-0}" -gt 0 ] || { echo "no stock calls counted in 1 s with memcg/enabled=0: $c3"; return 1; }
	counters_sane "$c2" "$c3" || return 1
	unload_lruopt || return 1
	kill -0 "$MCG_MV" 2>/dev/null || { echo "mover died during the unload"; return 1; }
	kill -0 "$MCG_WL" 2>/dev/null || { echo "workload died during the unload"; return 1; }
	echo "load ${LOAD_SECS}s, unload ${UNLOAD_SECS}s"
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
