#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 12-memcg-auto: the patch_memcg module parameter (auto, the default | 1 | 0).
# Replacing lock_page_memcg() costs every page map/unmap an ftrace
# redirection and can only gain while charges move between cgroup-v1 memcgs
# (stock's own fast path is as cheap while none moves), so by default the
# memcg functions stay out of the livepatch; patch_memcg=1 puts them in.
#   6.1, v2 only (as booted: cgroup2 mounted, memory controller on the default
#        hierarchy): a default load patches no memcg function (memcg/supported
#        and enabled 0, targets without them, no memcg function directory
#        under the livepatch, the kernel's own lock runs: the memcg counters
#        stay 0 while pages are dirtied), and dmesg says why; patch_memcg=1
#        patches all four anyway.
#   6.1, v1 memory hierarchy mounted: a default load patches none either,
#        with its own reason; patch_memcg=1 patches all four, 0 none.
#   6.12 (no charge moving): nothing is patched with auto or 1, one "not
#        applicable" line.
#   Both: a bad value fails insmod with EINVAL and one kernel line naming
#        the parameter; nothing stays loaded.  6.1 tries two of the seven
#        values (a refused load costs ~3.5 s there, 15-params says why; the
#        parser is patch_quiet's and patch_lazyfree's too, and 15-params
#        and 85-lazyfree give it more).
# Each decision is loaded once on 6.1: "auto" and 0 do not depend on the
# hierarchy (v1 checks them, v2 its default); 1 is checked on v2, where it
# is least expected (the 80-memcg-* tests load patch_memcg=1 on v1).
# Runs early (12-), before any test binds the memory controller to a v1
# hierarchy: once bound, dying memcgs of that hierarchy can keep it alive
# for the rest of the boot (charges no drop_caches frees: seen after the
# munlock tests' memcg scenario on 6.1), and the v2 half needs it unbound.
# lruopt-timeout: 900
MCG_NO_AUTOMOUNT=1
. /tests/lib.sh
. /tests/lib-memcg.sh
dmesg_mark "12-memcg-auto"
ensure_unloaded || exit 1

MEMCG_FUNCS="folio_memcg_lock folio_memcg_unlock lock_page_memcg unlock_page_memcg"
PARAM=/sys/module/lruopt/parameters/patch_memcg

# patched_memcg: the memcg functions the loaded livepatch redirects, sorted
patched_memcg() {
	ls "$LP/vmlinux" | sed 's/,[0-9]*$//' | grep memcg | sort | tr '\n' ' ' | sed 's/ $//'
}

# memcg_targets: the memcg lines of $LO/targets, names only, sorted
memcg_targets() {
	awk '$2 == "memcg" { print $1 }' "$LO/targets" | sort | tr '\n' ' ' | sed 's/ $//'
}

# dirty_some: dirty and write back 256 pages on ext4 (folio_memcg_lock)
dirty_some() {
	memcg_fs_setup 16 || return 1
	dd if=/dev/zero of="$MCG_FS/f" bs=4096 count=256 conv=fsync 2>/dev/null || return 1
	rm -f "$MCG_FS/f"
	memcg_fs_teardown
}

ALL=$(echo $MEMCG_FUNCS | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')

# expect_load NAME PARAMS IN REASON_RE: load with PARAMS (may be empty);
# IN=1: all four memcg functions patched, IN=0: none; exactly one "memcg:"
# line for this load, matching REASON_RE.
expect_load() {
	local name=$1 params=$2 in=$3 re=$4 lines exp_p exp_t
	dmesg_mark "12-memcg-auto $name"
	check "$name: load lruopt ${params:-(no parameters)}" load_lruopt $params || return 1
	if [ "$in" = 1 ]; then exp_p=$ALL; else exp_p=""; fi
	assert_eq "$name: patch_memcg parameter reads" "$(echo "${params:-patch_memcg=auto}" | sed 's/.*patch_memcg=//')" \
		"$(readval "$PARAM")"
	assert_eq "$name: memcg functions in the livepatch ($LP/vmlinux)" "$exp_p" "$(patched_memcg)"
	assert_eq "$name: memcg functions in $LO/targets" "$exp_p" "$(memcg_targets)"
	assert_eq "$name: memcg/supported" "$in" "$(readval "$LO/memcg/supported")"
	assert_eq "$name: memcg/enabled" "$in" "$(readval "$LO/memcg/enabled")"
	check "$name: drain and munlock are patched as always" \
		sh -c "ls -d $LP/vmlinux/lru_add_drain_all,* $LP/vmlinux/mlock_pte_range,* >/dev/null"
	lines=$(dmesg_since_mark | grep 'lruopt: memcg:')
	assert_eq "$name: one 'lruopt: memcg:' line for this load" 1 "$(echo "$lines" | grep -c .)"
	check "$name: it says '$re' ($lines)" sh -c "echo '$lines' | grep -qE '$re'"
	if [ "$in" = 0 ] && [ "$(memcg_kernel_has_move)" = 1 ]; then
		mcg_reset
		check "$name: dirty and write back 256 pages on ext4" dirty_some
		assert_eq "$name: the kernel's own lock ran (memcg counters stay 0)" \
			"fast=0 slow=0 retries=0 stock=0" "$(mcg_ctrs)"
	elif [ "$in" = 1 ]; then
		mcg_reset
		check "$name: dirty and write back 256 pages on ext4" dirty_some
		check "$name: the replacement ran (fast >= 256: $(mcg_ctrs))" test "$(mcg_ctr fast)" -ge 256
	fi
	check "$name: unload lruopt" unload_lruopt
}

# expect_bad VALUE: insmod patch_memcg=VALUE fails with EINVAL; the kernel
# logs the one line naming the parameter and nothing else of lruopt (busybox
# insmod tries finit_module() and then init_module(): two attempts, so the
# line may appear twice, identical); nothing is left loaded.
expect_bad() {
	local v=$1 out rc lines
	dmesg_mark "12-memcg-auto bad '$v'"
	out=$(insmod "$KO" $LRUOPT_KO_PARAMS "patch_memcg=$v" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		fail "patch_memcg='$v': insmod fails" "insmod succeeded"
		unload_lruopt >/dev/null
		return 1
	fi
	case $out in
	*"Invalid argument"*) pass "patch_memcg='$v': insmod fails with EINVAL ($out)" ;;
	*) fail "patch_memcg='$v': insmod fails with EINVAL" "$out" ;;
	esac
	lines=$(dmesg_since_mark | sed 's/^\[[ 0-9.]*\] //' | grep '^lruopt: ' | grep -vE "$GENERIC" | sort -u)
	assert_eq "patch_memcg='$v': the only lruopt line names the parameter" \
		"lruopt: \`$v' invalid for parameter \`patch_memcg'" "$lines"
	check_not "patch_memcg='$v': module not loaded afterwards" lruopt_loaded
	check_not "patch_memcg='$v': no $LP afterwards" test -e "$LP"
}

# Lines any first load of an unsigned out-of-tree livepatch prints (as in
# 50-refuse): not the module's own.
GENERIC='loading out-of-tree module taints kernel|module verification failed|tainting kernel with TAINT_LIVEPATCH'

if [ "$(kernel_short)" = 6.1 ]; then
	bad='Auto ""'
else
	bad='2 -1 autox yes Auto "" on'
fi
eval "set -- $bad"
for v; do
	expect_bad "$v"
done

if [ "$(memcg_kernel_has_move)" != 1 ]; then
	NA='memcg: not applicable on this kernel: .*CONFIG_MEMCG_V1'
	expect_load "6.12 default" "" 0 "$NA"
	expect_load "6.12 patch_memcg=1" "patch_memcg=1" 0 "$NA"
	check_dmesg_clean "no kernel warnings"
	exit 0
fi

# The v2-only state this kernel booted in.  An earlier test in this boot
# may have bound the controller to a v1 hierarchy: unmount it and wait for
# the kernel to destroy the hierarchy (asynchronous, after its last group).
# v2_only: the memory controller back on the default hierarchy.  A v1
# hierarchy outlives its umount while it has cgroups: groups an earlier
# test (the munlock tests' memcg scenario, 70-*) left behind, and dying
# memcgs, which live as long as pages are charged to them.  So: mount the
# hierarchy once more, remove every group left in it, unmount, and drop
# the clean page cache and reclaimable slab until it is released (30 s at
# most).
v2_only() {
	local i=0 sweep=/mnt/memcg-sweep
	memcg_v1_umount || return 1
	if [ "$(memcg_hierarchy)" != 0 ]; then
		mkdir -p $sweep
		if mount -t cgroup -o memory none $sweep; then
			echo "left in the v1 hierarchy: $(find $sweep -mindepth 1 -type d | tr '\n' ' ')"
			find $sweep -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
			umount $sweep
		fi
	fi
	while [ "$(memcg_hierarchy)" != 0 ]; do
		if [ $i -ge 60 ]; then
			echo "memory still on hierarchy $(memcg_hierarchy) after 30 s of dropping caches ($(awk '$1 == "memory"' /proc/cgroups))"
			return 1
		fi
		sync
		echo 3 >/proc/sys/vm/drop_caches
		sleep 0.5
		i=$((i + 1))
	done
	[ $i -eq 0 ] || echo "released after $i rounds of drop_caches"
	grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || { echo "cgroup2 is not mounted on /sys/fs/cgroup"; return 1; }
	echo "memory controller on hierarchy 0 (cgroup v2); cgroup2 at /sys/fs/cgroup"
}

if check "v2 only: the memory controller is on the default hierarchy" v2_only; then
	expect_load "v2 default" "" 0 \
		'left out of the patch \(patch_memcg=auto\): memory controller on the cgroup-v2 hierarchy'
	expect_load "v2 patch_memcg=1" "patch_memcg=1" 1 'in the patch \(patch_memcg=1\): requested'
fi

if check "v1: mount the memory controller on a v1 hierarchy" memcg_v1_mount; then
	expect_load "v1 default" "" 0 \
		'left out of the patch \(patch_memcg=auto\): cgroup-v1: the lock only gains while charges move'
	expect_load "v1 patch_memcg=auto" "patch_memcg=auto" 0 'left out of the patch \(patch_memcg=auto\)'
	expect_load "v1 patch_memcg=0" "patch_memcg=0" 0 'left out of the patch \(patch_memcg=0\): requested'
fi
check_dmesg_clean "no kernel warnings"
