#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 80-memcg-sysfs: the memcg feature's switch and counters per kernel.
#   6.1:  supported=1, enabled=1 after load, 0/1 writable; counters count:
#         fast while on, stock while off (dirtying a file on ext4 calls
#         folio_memcg_lock), slow stays 0 with no charge move; mapping and
#         unmapping file pages (lock_page_memcg, the mapped_file path) is
#         counted too; reset works.
#   6.12: supported=0, enabled=0, writing 1 fails with EINVAL (value kept),
#         counters stay 0, exactly one "memcg: not applicable" line per
#         load, and the other features work (drain counts calls, munlock
#         keeps mlock accounting right).
# lruopt-timeout: 300
. /tests/lib.sh
. /tests/lib-munlock.sh
. /tests/lib-memcg.sh
dmesg_mark "80-memcg-sysfs"
ensure_unloaded || exit 1

check "load lruopt" load_lruopt || exit 1
NA_RE='lruopt: memcg: not applicable'
na_lines=$(dmesg_since_mark | grep -c "$NA_RE")

# dirty_some: dirty and write back 256 pages of a file on ext4 (brd):
# filemap_dirty_folio and writeback start/end call folio_memcg_lock().
dirty_some() {
	memcg_fs_setup 16 || return 1
	dd if=/dev/zero of="$MCG_FS/f" bs=4096 count=256 conv=fsync 2>/dev/null || return 1
	rm -f "$MCG_FS/f"
	memcg_fs_teardown
}

# map_some: map a 1024-page file twice, fault and drop the second mapping 4
# times (memcg_bench mmap, the loop of "page cgroup diet v5"): every map and unmap of a file
# page is page_add_file_rmap()/page_remove_rmap() -> lock_page_memcg(), the
# mapped_file path.  Sets MAP_CTRS: the counters over that loop only.
map_some() {
	memcg_fs_setup 16 || return 1
	dd if=/dev/zero of="$MCG_FS/m" bs=4096 count=1024 2>/dev/null || return 1
	sync
	mcg_reset
	memcg_bench mmap "$MCG_FS/m" 4 >/dev/null || return 1
	MAP_CTRS=$(mcg_ctrs)
	rm -f "$MCG_FS/m"
	memcg_fs_teardown
}

# reset_zeroes CTR STATE MIN: with memcg/enabled=STATE, which keeps CTR
# from growing (the background keeps mapping pages, so the other of fast
# and stock may move), CTR held at least MIN and stats/reset zeroes it,
# slow and retries.
reset_zeroes() {
	local ctr=$1 state=$2 min=$3 before after b a
	kwrite "$LO/memcg/enabled" "$state" >/dev/null
	before=$(mcg_ctrs)
	b=$(echo "$before" | sed -n "s/.*$ctr=\([0-9]*\).*/\1/p")
	mcg_reset
	after=$(mcg_ctrs)
	a=$(echo "$after" | sed -n "s/.*$ctr=\([0-9]*\).*/\1/p")
	check "stats/reset zeroes $ctr (frozen while enabled=$state: $before -> $after)" \
		sh -c "[ '${b:-0}' -ge $min ] && [ '$a' = 0 ] && echo '$after' | grep -q ' slow=0 retries=0 '"
}

if [ "$(memcg_expected_supported)" = 1 ]; then
	assert_eq "memcg/supported is 1 on $(kernel_short)" 1 "$(readval "$LO/memcg/supported")"
	assert_eq "memcg/enabled is 1 after load" 1 "$(readval "$LO/memcg/enabled")"
	assert_eq "no 'memcg: not applicable' line on $(kernel_short)" 0 "$na_lines"
	mcg_reset
	check "dirty and write back 256 pages on ext4 (feature on)" dirty_some
	c=$(mcg_ctrs)
	diag "counters: $c"
	check "fast counted the lock calls ($c)" test "$(mcg_ctr fast)" -ge 256
	assert_eq "slow = 0 with no charge move" 0 "$(mcg_ctr slow)"
	assert_eq "stock = 0 while on" 0 "$(mcg_ctr stock)"
	# The mapped_file updates take lock_page_memcg(), which Debian's 6.1
	# build links to the compiler clone folio_memcg_lock.part.0: only the
	# lock_page_memcg() replacement sees them.  2 x 1024 pages x 4 passes.
	if check "map/unmap 1024 file pages x 4 (memcg_bench mmap)" map_some; then
		diag "counters over the map/unmap loop: $MAP_CTRS"
		f=$(echo "$MAP_CTRS" | sed -n 's/.*fast=\([0-9]*\).*/\1/p')
		check "lock_page_memcg path counted as fast (fast=${f:-0} >= 8192)" \
			test "${f:-0}" -ge 8192
	fi
	expect_write_ok "$LO/memcg/enabled" 0 0
	mcg_reset
	check "dirty and write back 256 pages on ext4 (feature off)" dirty_some
	c=$(mcg_ctrs)
	diag "counters: $c"
	check "stock counted the lock calls while off ($c)" test "$(mcg_ctr stock)" -ge 256
	assert_eq "fast = 0 while off" 0 "$(mcg_ctr fast)"
	expect_write_ok "$LO/memcg/enabled" 1 1
	# Reset while the counters are large: stock is frozen while the
	# feature is on, fast while it is off.
	reset_zeroes stock 1 256
	reset_zeroes fast 0 1
	kwrite "$LO/memcg/enabled" 1 >/dev/null
else
	assert_eq "memcg/supported is 0 on $(kernel_short)" 0 "$(readval "$LO/memcg/supported")"
	assert_eq "memcg/enabled is 0 on $(kernel_short)" 0 "$(readval "$LO/memcg/enabled")"
	expect_write_fails "$LO/memcg/enabled" 1 EINVAL
	expect_write_fails -n "$LO/memcg/enabled" 1 EINVAL
	expect_write_ok "$LO/memcg/enabled" 0 0
	assert_eq "exactly one '$NA_RE' line for this load" 1 "$na_lines"
	diag "$(dmesg_since_mark | grep "$NA_RE")"
	check "the not-applicable line gives the reason (CONFIG_MEMCG_V1)" \
		sh -c "dmesg | grep '$NA_RE' | tail -1 | grep -q CONFIG_MEMCG_V1"
	check "livepatch does not redirect folio_memcg_lock/unlock" \
		sh -c "ls -d $LP/vmlinux/lru_add_drain_all,* >/dev/null && ! ls $LP/vmlinux | grep -q memcg"
	check "dirty and write back 256 pages on ext4" dirty_some
	assert_eq "memcg counters stay 0 (nothing patched)" "fast=0 slow=0 retries=0 stock=0" "$(mcg_ctrs)"
	# the other features work
	d0=$(readval "$LO/drain/stats/calls")
	check "lru_add_drain_all() via compact_memory" drain_now
	d1=$(readval "$LO/drain/stats/calls")
	check "drain feature counts the call (calls $d0 -> $d1)" test "$d1" -gt "$d0"
	assert_eq "drain/enabled is 1" 1 "$(readval "$LO/drain/enabled")"
	assert_eq "munlock/enabled is 1" 1 "$(readval "$LO/munlock/enabled")"
	check "mlock accounting with the munlock feature on (16 MiB)" mlock_accounting 16
fi

check "unload lruopt" unload_lruopt
# A second load prints the line again, once.
n0=$(dmesg | grep -c "$NA_RE")
check "reload lruopt" load_lruopt
n=$(( $(dmesg | grep -c "$NA_RE") - n0 ))
if [ "$(memcg_expected_supported)" = 1 ]; then
	assert_eq "no 'memcg: not applicable' line on reload" 0 "$n"
else
	assert_eq "exactly one '$NA_RE' line on reload" 1 "$n"
fi
check "unload lruopt" unload_lruopt

# patch_memcg=0 (6.1): the memcg functions stay out of the patch; the kernel
# keeps its own lock (no counting), the feature reads like an absent one.
if [ "$(memcg_expected_supported)" = 1 ]; then
	check "load lruopt patch_memcg=0" load_lruopt patch_memcg=0
	assert_eq "patch_memcg=0: memcg/supported is 0" 0 "$(readval "$LO/memcg/supported")"
	assert_eq "patch_memcg=0: memcg/enabled is 0" 0 "$(readval "$LO/memcg/enabled")"
	expect_write_fails "$LO/memcg/enabled" 1 EINVAL
	assert_eq "patch_memcg=0: targets are drain and munlock only" \
		"$(expected_targets | grep -v ' memcg$' | tr '\n' ' ' | sed 's/ $//')" \
		"$(tr '\n' ' ' <"$LO/targets" | sed 's/ $//')"
	check "patch_memcg=0: livepatch does not redirect any memcg lock" \
		sh -c "ls -d $LP/vmlinux/lru_add_drain_all,* >/dev/null && ! ls $LP/vmlinux | grep -q memcg"
	assert_eq "patch_memcg=0: one 'left out of the patch' line in this test" 1 \
		"$(dmesg_since_mark | grep -c 'memcg: left out of the patch (patch_memcg=0)')"
	check "dirty and write back 256 pages on ext4 (patch_memcg=0)" dirty_some
	assert_eq "memcg counters stay 0 (nothing patched)" "fast=0 slow=0 retries=0 stock=0" "$(mcg_ctrs)"
	check "unload lruopt (patch_memcg=0)" unload_lruopt
fi
check_dmesg_clean "no kernel warnings"
