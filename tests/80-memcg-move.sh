#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 80-memcg-move: page-state accounting stays exact while a process that maps,
# faults, dirties, writes back and unmaps a shared file is moved back and
# forth between two cgroup-v1 memory groups with move_charge_at_immigrate=3
# (the charge mover takes move_lock; folio_memcg_lock() callers must then
# too).  Four runs, each on a fresh ext4-on-brd filesystem and fresh groups:
#   stock   module unloaded, moves         (the reference)
#   on      module loaded, memcg on, moves
#   idle    module loaded, memcg on, no moves
#   off     module loaded, memcg/enabled=0, moves
# After each run (workload gone, file removed, sync): mapped_file, dirty and
# writeback are exactly 0 in both groups; after unmounting, every page-state
# line of memory.stat in both groups equals the stock run's.  Module
# counters: slow (move_lock taken) > 0 with moves and 0 without; stock
# counts only when the feature is off.  A run lasts until what it asserts
# has happened (polled, with a generous liveness limit): the workload
# moved to B and back (stock), slow and fast counted (on), fast counted
# (idle), slow and stock counted (off); not a fixed time, which a slow host
# could fill with nothing.  On 6.12 (no cgroup-v1 memory
# controller, CONFIG_MEMCG_V1=n) the mount must fail and the rest is skipped.
# lruopt-timeout: 900
. /tests/lib.sh
. /tests/lib-memcg.sh
dmesg_mark "80-memcg-move"

if [ "$(memcg_kernel_has_move)" != 1 ]; then
	check_not "cgroup-v1 memory controller cannot be mounted on $(kernel_short) (CONFIG_MEMCG_V1=n)" memcg_v1_mount
	skip "accounting under charge moving" "no cgroup-v1 charge moving on $(uname -r)"
	check_dmesg_clean "no kernel warnings"
	exit 0
fi

# the longest a run may take (the mover's and the workload's own limit)
SECS=600
FILE_MIB=16
FS_MIB=64

check "cgroup-v1 memory controller mounts (not bound to cgroup v2)" memcg_v1_mount || exit 1

# run_mode NAME MOVES: one run; sets TOT_<NAME> and CTR_<NAME>.
run_mode() {
	local name=$1 moves=$2 f=$MCG_FS/shared ctr tot g
	check "$name: fresh ext4 on brd (${FS_MIB} MiB) and groups A, B" \
		mcg_fresh $FS_MIB || return 1
	[ -d "$MCG_STATS" ] && mcg_reset
	if ! check "$name: memcg_mapdirty (${FILE_MIB} MiB shared file) running in A" \
		mcg_start_workload "$f" $FILE_MIB $((SECS + 120)); then
		return 1
	fi
	if [ "$moves" = 1 ]; then
		echo 3 >"$MCG_B/memory.move_charge_at_immigrate"
		check "$name: mover started" mcg_start_mover "$SECS"
		mcg_pids_file
		check "$name: $(run_goal "$name")" wait_for 300 "$name: $(run_goal "$name")" "run_done_$name"
		check "$name: the mover moved the workload between A and B and exits cleanly" mcg_finish_mover kill
	else
		mcg_pids_file
		check "$name: $(run_goal "$name")" wait_for 300 "$name: $(run_goal "$name")" "run_done_$name"
	fi
	ctr=$(mcg_ctrs)
	diag "$name: module counters $ctr"
	for g in "$MCG_A" "$MCG_B"; do
		diag "$name: $(basename "$g") during: $(memcg_stats "$g" "$MCG_KEYS cache") tasks: $(tr '\n' ' ' <"$g/cgroup.procs")"
	done
	check "$name: workload exits cleanly (no failed syscall, no corrupted page)" mcg_stop_workload
	rm -f /tmp/wl.pids
	rm -f "$f"
	sync
	check "$name: mapped_file, dirty, writeback exactly 0 in A and B after rm + sync" \
		memcg_wait_zero 10 "$MCG_A" "$MCG_B"
	check "$name: unmount and unload brd" memcg_fs_teardown
	tot=""
	for k in $MCG_ALL_KEYS; do
		tot="$tot $k=$(( $(memcg_stat "$MCG_A" $k) + $(memcg_stat "$MCG_B" $k) ))"
	done
	tot=${tot# }
	diag "$name: A+B after unmount: $tot"
	check "$name: remove groups A and B" memcg_rmgroups
	eval "TOT_$name=\"\$tot\"; CTR_$name=\"\$ctr\""
}

# run_goal NAME / run_done_NAME: what a run waits for before it ends
run_goal() {
	case $1 in
	stock) echo "the workload was moved to B and back to A" ;;
	on) echo "lock calls of both paths counted (fast > 0, slow > 0)" ;;
	idle) echo "lock calls counted (fast > 0)" ;;
	off) echo "move_lock and stock calls counted (slow > 0, stock > 0)" ;;
	esac
}
# stock: B then A again is a whole round trip of the mover (the poll runs
# in a subshell: what it has seen is kept in a file)
run_done_stock() {
	if grep -qx "$MCG_WL" "$MCG_B/cgroup.procs"; then
		echo 1 >/tmp/80-seen-b
	fi
	[ -s /tmp/80-seen-b ] && grep -qx "$MCG_WL" "$MCG_A/cgroup.procs"
}
run_done_on() { [ "$(mcg_ctr fast)" -gt 0 ] && [ "$(mcg_ctr slow)" -gt 0 ]; }
run_done_idle() { [ "$(mcg_ctr fast)" -gt 0 ]; }
run_done_off() { [ "$(mcg_ctr slow)" -gt 0 ] && [ "$(mcg_ctr stock)" -gt 0 ]; }
rm -f /tmp/80-seen-b

ctr_of() { # ctr_of "fast=1 slow=2 ..." slow -> 2
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# ---- stock reference
ensure_unloaded || exit 1
run_mode stock 1

# ---- module loaded
check "load lruopt" load_lruopt || exit 1
assert_eq "memcg/supported is 1" 1 "$(readval "$LO/memcg/supported")"
assert_eq "memcg/enabled is 1" 1 "$(readval "$LO/memcg/enabled")"

run_mode on 1
run_mode idle 0
kwrite "$LO/memcg/enabled" 0 >/dev/null
assert_eq "memcg/enabled set to 0" 0 "$(readval "$LO/memcg/enabled")"
run_mode off 1
kwrite "$LO/memcg/enabled" 1 >/dev/null

check "unload lruopt" unload_lruopt

# ---- comparisons
zero_tot=$(for k in $MCG_ALL_KEYS; do printf '%s=0 ' "$k"; done | sed 's/ $//')
assert_eq "stock run: every page-state line of A+B is 0 after unmount" "$zero_tot" "${TOT_stock:-}"
for m in on idle off; do
	eval "t=\${TOT_$m:-missing}"
	assert_eq "$m run: A+B page state after unmount equals the stock run" "${TOT_stock:-}" "$t"
done

# counters: on (moves) / idle (no moves) / off (moves, feature disabled)
s=$(ctr_of "${CTR_on:-}" slow); fa=$(ctr_of "${CTR_on:-}" fast); st=$(ctr_of "${CTR_on:-}" stock); r=$(ctr_of "${CTR_on:-}" retries)
check "on: slow > 0 while moving (slow=$s)" test "${s:-0}" -gt 0
check "on: fast > 0 (fast=$fa)" test "${fa:-0}" -gt 0
assert_eq "on: stock = 0 while the feature is on" 0 "$st"
check "on: retries <= slow (retries=$r)" test "${r:-1}" -le "${s:-0}"
s=$(ctr_of "${CTR_idle:-}" slow); fa=$(ctr_of "${CTR_idle:-}" fast)
assert_eq "idle: slow = 0 without moves" 0 "$s"
assert_eq "idle: retries = 0 without moves" 0 "$(ctr_of "${CTR_idle:-}" retries)"
check "idle: fast > 0 (fast=$fa)" test "${fa:-0}" -gt 0
s=$(ctr_of "${CTR_off:-}" slow); fa=$(ctr_of "${CTR_off:-}" fast); st=$(ctr_of "${CTR_off:-}" stock)
assert_eq "off: fast = 0 while the feature is off" 0 "$fa"
check "off: stock > 0 (stock=$st)" test "${st:-0}" -gt 0
check "off: slow > 0 while moving (slow=$s)" test "${s:-0}" -gt 0

memcg_v1_umount
check_dmesg_clean "no kernel warnings during the charge-moving runs"
