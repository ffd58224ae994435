# SPDX-License-Identifier: GPL-2.0
# lib-memcg.sh - helpers for the memcg tests (80-memcg-*.sh) and the memcg
# benchmark (tests/bench/memcg-bench.sh).  Source after /tests/lib.sh.
#
# Test set-up, in the busybox VM:
#   - cgroup-v1 memory controller mounted at $MCG_V1.  /init mounts cgroup2
#     on /sys/fs/cgroup with no controller enabled in subtree_control, so
#     the memory controller is still free to bind to a v1 hierarchy.  It is
#     mounted on its own directory rather than /sys/fs/cgroup/memory
#     because a mkdir inside the cgroup2 mount would create a v2 cgroup.
#     lruopt's default patch_memcg=auto leaves the memcg functions out of
#     the livepatch, so sourcing this file (memcg_v1_auto, at the end), on
#     a kernel with charge moving, mounts the hierarchy and adds
#     patch_memcg=1 to LRUOPT_KO_PARAMS: every later load in the test then
#     patches the memcg lock (an explicit patch_memcg= given to load_lruopt
#     comes later on the insmod line and wins).  MCG_NO_AUTOMOUNT=1 before
#     sourcing opts out of both (12-memcg-auto, which tests the decision
#     itself).
#   - groups $MCG_A and $MCG_B with memory.move_charge_at_immigrate=3.
#   - an ext4 filesystem on a brd RAM disk at $MCG_FS, so that dirty and
#     writeback are the real block-device writeback paths: on tmpfs a page
#     is never under writeback and its dirty state is not accounted as
#     NR_FILE_DIRTY (shmem has no writeback accounting), so tmpfs would only
#     exercise mapped_file.  (busybox mke2fs makes an ext2 layout; the ext4
#     driver mounts it, with delayed allocation and the same
#     dirty/writeback accounting as any block filesystem.)

MCG_V1=/mnt/memcg-v1
MCG_A=$MCG_V1/lruopt-a
MCG_B=$MCG_V1/lruopt-b
MCG_FS=/mnt/memcg-fs
MCG_STATS=$LO/memcg/stats
# The page-state counters a charge move must carry over exactly.
MCG_KEYS="mapped_file dirty writeback"
# What must be back to 0 once the workload is gone and its fs unmounted.
MCG_ALL_KEYS="cache rss rss_huge shmem mapped_file dirty writeback inactive_anon active_anon inactive_file active_file unevictable"
# v1 memory.stat has rss_huge only with THP (Debian's RT flavours: none)
[ -d /sys/kernel/mm/transparent_hugepage ] ||
	MCG_ALL_KEYS=$(echo "$MCG_ALL_KEYS" | sed 's/ rss_huge//')

# memcg_v1_mounted: the v1 memory hierarchy is mounted at $MCG_V1
memcg_v1_mounted() {
	awk -v d="$MCG_V1" '$2 == d && $3 == "cgroup" { f = 1 } END { exit !f }' /proc/mounts
}

# memcg_hierarchy: the hierarchy id /proc/cgroups gives the memory
# controller (0 = default (v2) hierarchy), or "none" if it has none.
memcg_hierarchy() {
	awk '$1 == "memory" { print $2; f = 1 } END { if (!f) print "none" }' /proc/cgroups
}

# memcg_v1_mount: mount the v1 memory controller (idempotent).  Fails with
# a reason when the controller is bound to or enabled in cgroup v2.
memcg_v1_mount() {
	local h
	memcg_v1_mounted && return 0
	h=$(memcg_hierarchy)
	if [ "$h" = none ]; then
		echo "no memory controller in /proc/cgroups"
		return 1
	fi
	if [ "$h" != 0 ]; then
		# A v1 hierarchy outlives its last umount while it still has
		# (dying) cgroups: mounting the same options attaches to it again.
		# Any other binding makes the mount below fail, with its reason.
		echo "memory already on v1 hierarchy $h (an earlier, unmounted one): mounting it again"
	elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		echo "memory is enabled in the cgroup2 subtree_control: it cannot be bound to a v1 hierarchy"
		return 1
	fi
	mkdir -p "$MCG_V1" || return 1
	if ! mount -t cgroup -o memory none "$MCG_V1"; then
		echo "mount -t cgroup -o memory failed"
		dmesg | tail -3
		return 1
	fi
	h=$(memcg_hierarchy)
	if [ "$h" = 0 ]; then
		echo "mounted, but /proc/cgroups still shows memory on hierarchy 0"
		return 1
	fi
	echo "memory controller on v1 hierarchy $h at $MCG_V1"
}

memcg_v1_umount() {
	memcg_v1_mounted || return 0
	rmdir "$MCG_A" "$MCG_B" 2>/dev/null
	umount "$MCG_V1"
}

# memcg_mkgroups: (re)create the two groups, move_charge_at_immigrate=3.
# Each group is created fresh: a group left from an earlier run may still
# hold charges of pages that run left behind.
memcg_mkgroups() {
	local g
	for g in "$MCG_A" "$MCG_B"; do
		if [ -d "$g" ] && ! rmdir "$g"; then
			echo "cannot remove the old $g (tasks: $(cat "$g/cgroup.procs" | tr '\n' ' '))"
			return 1
		fi
		mkdir "$g" || return 1
		echo 3 >"$g/memory.move_charge_at_immigrate" || return 1
		[ "$(cat "$g/memory.move_charge_at_immigrate")" = 3 ] || {
			echo "$g/memory.move_charge_at_immigrate reads $(cat "$g/memory.move_charge_at_immigrate")"
			return 1
		}
	done
}

# memcg_rmgroups: remove both groups (no task may be left in them).
memcg_rmgroups() {
	local g rc=0
	for g in "$MCG_A" "$MCG_B"; do
		[ -d "$g" ] || continue
		rmdir "$g" || { echo "rmdir $g failed (tasks: $(cat "$g/cgroup.procs" | tr '\n' ' '))"; rc=1; }
	done
	return $rc
}

# memcg_stat GROUP KEY: one value (bytes) of GROUP/memory.stat
memcg_stat() {
	awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "?" }' "$1/memory.stat"
}

# memcg_stats GROUP [KEYS]: "key=value ..." for KEYS (default $MCG_KEYS)
memcg_stats() {
	local g=$1 keys=${2:-$MCG_KEYS}
	awk -v keys="$keys" '
		BEGIN { n = split(keys, k, " ") }
		{ v[$1] = $2 }
		END { for (i = 1; i <= n; i++) printf "%s%s=%s", (i > 1 ? " " : ""), k[i], (k[i] in v ? v[k[i]] : "?") }
	' "$g/memory.stat"
}

# memcg_all_zero GROUP [KEYS]: every key in KEYS (default $MCG_KEYS) is 0
memcg_all_zero() {
	local s
	s=$(memcg_stats "$1" "${2:-$MCG_KEYS}")
	case " $s" in
	*=[1-9]* | *=\?*) return 1 ;;
	esac
	return 0
}

# memcg_wait_zero TIMEOUT GROUP... : poll until MCG_KEYS are 0 in every
# GROUP.  memory.stat's non-total lines sum the per-cpu counters directly
# (no rstat delay), so this should succeed at once; the poll only absorbs
# writeback completions still on their way.
memcg_wait_zero() {
	local t=$1 i=0 g ok
	shift
	while :; do
		ok=1
		for g in "$@"; do memcg_all_zero "$g" || ok=0; done
		[ $ok = 1 ] && return 0
		[ $i -ge $((t * 5)) ] && break
		sync
		sleep 0.2
		i=$((i + 1))
	done
	for g in "$@"; do echo "$(basename "$g"): $(memcg_stats "$g")"; done
	return 1
}

# ------------------------------------------------------------------ fs

# memcg_fs_setup MIB: a fresh brd RAM disk of MIB MiB with an ext4 mount at
# $MCG_FS.  brd's own pages are not charged to any memcg; the page cache of
# the files (and of the block device's metadata) is.  A fresh disk per run
# keeps the metadata pages of one run from being charged to a group of the
# next one.
memcg_fs_setup() {
	local mib=$1
	memcg_fs_teardown || return 1
	if ! modprobe brd rd_nr=1 rd_size=$((mib * 1024)); then
		echo "modprobe brd failed"
		return 1
	fi
	[ -b /dev/ram0 ] || { echo "/dev/ram0 missing after modprobe brd"; return 1; }
	mke2fs -q /dev/ram0 >/dev/null || { echo "mke2fs /dev/ram0 failed"; return 1; }
	modprobe ext4 || { echo "modprobe ext4 failed"; return 1; }
	mkdir -p "$MCG_FS"
	mount -t ext4 /dev/ram0 "$MCG_FS" || { echo "mount ext4 failed"; dmesg | tail -5; return 1; }
}

# memcg_fs_teardown: unmount and unload brd (drops the device's page cache)
memcg_fs_teardown() {
	if awk -v d="$MCG_FS" '$2 == d { f = 1 } END { exit !f }' /proc/mounts; then
		sync
		umount "$MCG_FS" || { echo "umount $MCG_FS failed"; return 1; }
	fi
	if grep -q '^brd ' /proc/modules; then
		rmmod brd || { echo "rmmod brd failed"; return 1; }
	fi
	return 0
}

# ------------------------------------------------------------------ module counters

# mcg_ctr NAME: one of the module's memcg counters (fast slow retries stock)
mcg_ctr() {
	readval "$MCG_STATS/$1"
}

# mcg_ctrs: "fast=.. slow=.. retries=.. stock=.." or "unloaded"
mcg_ctrs() {
	if [ -d "$MCG_STATS" ]; then
		echo "fast=$(mcg_ctr fast) slow=$(mcg_ctr slow) retries=$(mcg_ctr retries) stock=$(mcg_ctr stock)"
	else
		echo "unloaded"
	fi
}

mcg_reset() {
	echo 0 >"$MCG_STATS/reset"
}

# ------------------------------------------------------------------ workload

# mcg_start_workload FILE MIB SECONDS [SLEEP_US]: start memcg_mapdirty in
# $MCG_A.  The process joins A while A's move_charge_at_immigrate is 0, so
# the charges of the shell it starts from (busybox's mapped text, its
# stack) stay where they are and never become A's; then both groups get
# move_charge_at_immigrate=3.  Sets MCG_WL (pid), output in /tmp/mcg-wl.out.
mcg_start_workload() {
	local f=$1 mib=$2 secs=$3 sl=${4:-} i=0
	echo 0 >"$MCG_A/memory.move_charge_at_immigrate" || return 1
	rm -f /tmp/mcg-wl.out
	sh -c "echo \$\$ >$MCG_A/cgroup.procs && exec memcg_mapdirty $f $mib $secs $sl" \
		>/tmp/mcg-wl.out 2>&1 &
	MCG_WL=$!
	# Wait until it has created and populated part of its file.
	while [ ! -s "$f" ] || ! grep -qx "$MCG_WL" "$MCG_A/cgroup.procs"; do
		# a liveness limit (~60 s): the guest may be starved a while
		if ! kill -0 "$MCG_WL" 2>/dev/null || [ $i -ge 600 ]; then
			echo "memcg_mapdirty did not start in $MCG_A: $(cat /tmp/mcg-wl.out)"
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.5
	echo 3 >"$MCG_A/memory.move_charge_at_immigrate" || return 1
	kill -0 "$MCG_WL"
}

# mcg_stop_workload: SIGTERM, wait, require status 0 (no syscall failure,
# no data corruption).  The summary line goes to stdout.
mcg_stop_workload() {
	local rc
	kill -TERM "$MCG_WL" 2>/dev/null
	wait "$MCG_WL"
	rc=$?
	cat /tmp/mcg-wl.out
	# The output file is tmpfs page cache charged to the workload's group.
	rm -f /tmp/mcg-wl.out
	[ $rc = 0 ] || echo "memcg_mapdirty exited with status $rc"
	[ $rc = 0 ]
}

# mcg_start_mover SECONDS [SLEEP_US]: move $MCG_WL B, A, B, ... in the
# background.  Sets MCG_MV, output in /tmp/mcg-mv.out.
mcg_start_mover() {
	rm -f /tmp/mcg-mv.out
	memcg_mover "$MCG_WL" "$1" "$MCG_B" "$MCG_A" ${2:-} >/tmp/mcg-mv.out 2>&1 &
	MCG_MV=$!
	sleep 0.2
	kill -0 "$MCG_MV" 2>/dev/null || { cat /tmp/mcg-mv.out; return 1; }
}

# mcg_finish_mover [kill]: wait for the mover (after SIGTERM with "kill"),
# require status 0 and at least one move.  Sets MCG_MOVES.
mcg_finish_mover() {
	local rc
	[ "${1:-}" = kill ] && kill -TERM "$MCG_MV" 2>/dev/null
	wait "$MCG_MV"
	rc=$?
	cat /tmp/mcg-mv.out
	MCG_MOVES=$(sed -n 's/^memcg_mover: \([0-9]*\) moves.*/\1/p' /tmp/mcg-mv.out)
	rm -f /tmp/mcg-mv.out
	[ $rc = 0 ] || echo "memcg_mover exited with status $rc"
	[ $rc = 0 ] && [ "${MCG_MOVES:-0}" -gt 0 ]
}

# mcg_fresh MIB: fresh filesystem (memcg_fs_setup) and fresh groups
mcg_fresh() {
	memcg_fs_setup "$1" && memcg_mkgroups
}

# mcg_pids_file: record background pids for run-all.sh's clean-up of a
# killed test (it kills what /tmp/wl.pids lists).
mcg_pids_file() {
	echo "${MCG_WL:-} ${MCG_MV:-}" >/tmp/wl.pids
}

# memcg_v1_auto: see the header; quiet unless the mount fails.  Run when this
# file is sourced, before the test loads lruopt.
memcg_v1_auto() {
	local out
	[ "${MCG_NO_AUTOMOUNT:-0}" = 1 ] && return 0
	[ "$(memcg_kernel_has_move)" = 1 ] || return 0
	if lruopt_loaded; then
		diag "lib-memcg: lruopt is already loaded: its memcg decision was made without the v1 hierarchy"
	fi
	out=$(memcg_v1_mount) || diag "lib-memcg: cannot mount the v1 memory hierarchy: $out"
	case " ${LRUOPT_KO_PARAMS:-} " in
	*" patch_memcg="*) ;;
	*) LRUOPT_KO_PARAMS="${LRUOPT_KO_PARAMS:+$LRUOPT_KO_PARAMS }patch_memcg=1" ;;
	esac
}
memcg_v1_auto
