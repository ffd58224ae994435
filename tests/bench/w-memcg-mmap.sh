#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-memcg-mmap: the mmap fault->drop loop of KAMEZAWA Hiroyuki's
# "[PATCH 0/6] page cgroup diet v5" (linux-mm, 2012) inside a cgroup-v1 memory cgroup (6.1 only: 6.12
# has no charge moving), with memcg_bench (the memcg tests' program): a
# 32 MiB (--quick 16) file on ext4/brd, created from inside the memcg, mapped
# twice MAP_SHARED, the first mapping mlocked, the second read-faulted page
# by page and dropped with MADV_DONTNEED, 30 (--quick 10) passes.  Per page
# and pass page_add_file_rmap() + page_remove_rmap(), which take
# lock_page_memcg(), which lruopt replaces with patch_memcg=1
# (memcg/stats/fast counts every one).  Metric: time per page and pass.
# This is where the ftrace cost of replacing a per-page function shows:
# B and C (the default leaves the lock out) should equal A; D
# (patch_memcg=1) is what a host that opts in pays.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="page-cgroup-diet mmap fault->drop loop in a cgroup-v1 memcg"

bench_memcg_workload memcg-mmap.file 16 32

wl_run() {
	out=$(bench_memcg_run mmap memcg-mmap.file "$(qf 10 30)") || exit 1
	result fault_drop "$(kv "$out" ns_per_page)" ns/page lower
}

bench_main "$@"
