#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-memcg-dirty: a file-dirtying loop inside a cgroup-v1 memory cgroup: an
# 8 MiB (--quick 4 MiB) file on ext4/brd, every page dirtied with a small
# pwrite() and the file written back with sync_file_range(WAIT_BEFORE |
# WRITE | WAIT_AFTER), 20 times (--quick 10), pinned to CPU 1.  Per page and
# pass: folio_mark_dirty, writeback start and end, each under
# folio_memcg_lock() (which lruopt's memcg feature replaces on 6.1; 6.12 has
# no charge moving), plus mark_buffer_dirty's lock_page_memcg().
# Metric: time per page and pass.  Uses memcg_bench (tests/progs), the same
# program as w-memcg-mmap and tests/80-memcg-sysfs.sh.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="pwrite + sync_file_range dirtying loop in a cgroup-v1 memcg"

bench_memcg_workload memcg-dirty.file 4 8

wl_run() {
	cpu=1
	[ "$(nproc)" -gt 1 ] || cpu=0
	out=$(bench_memcg_run dirty memcg-dirty.file "$(qf 10 20)" $cpu) || exit 1
	result dirty_writeback "$(kv "$out" ns_per_page)" ns/page lower
}

bench_main "$@"
