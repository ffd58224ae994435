#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-fault-path: what the LRU batch adders cost on a CPU that is not quiet,
# from CPU 0 with no CPU quiet: faultpath anon (write-fault 32 MiB (--quick
# 16) of small anonymous pages and unmap them: lru_add per fault, the frees
# at munmap) and faultpath file (read a 32 MiB file on ext4/brd back into
# the page cache after fadvise(DONTNEED): lru_add per page).  The adders
# are in the patch only in config E (patch_quiet=1; a boot without isolated
# CPUs leaves them out in B): E/A is their cost (the ftrace redirection and
# the quiet test), B/A and C/A must be the noise floor.  Metric: median time
# per page of 10 (--quick 5) passes.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="anonymous fault+unmap and page-cache read per page, no CPU quiet"
WL_PROGS=faultpath

wl_setup() {
	mnt=$(bench_ext4 128) || exit 1
	[ -s "$mnt/fault-path" ] ||
		dd if=/dev/zero of="$mnt/fault-path" bs=1M count=32 2>/dev/null || exit 1
}

wl_run() {
	mnt=$(bench_ext4 128) || exit 1
	a=$(faultpath anon 0 "$(qf 16 32)" "$(qf 5 10)") || exit 1
	f=$(faultpath file 0 "$mnt/fault-path" "$(qf 5 10)") || exit 1
	result anon_fault_unmap "$(kv "$a" median_ns)" ns/page lower
	result file_read "$(kv "$f" median_ns)" ns/page lower
}

bench_main "$@"
