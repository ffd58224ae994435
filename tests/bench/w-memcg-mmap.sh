#!/bin/sh
# w-memcg-mmap: the mmap fault->drop loop of seeds/004 (KAMEZAWA Hiroyuki,
# "page cgroup diet", 2012) inside a cgroup-v1 memory cgroup (6.1 only: 6.12
# has no charge moving), with memcg_bench (the memcg tests' program): a
# 32 MiB (--quick 16) file on ext4/brd, created from inside the memcg, mapped
# twice MAP_SHARED, the first mapping mlocked, the second read-faulted page
# by page and dropped with MADV_DONTNEED, 30 (--quick 10) passes.  Per page
# and pass page_add_file_rmap() + page_remove_rmap(), which take
# lock_page_memcg(), which lruopt replaces (memcg/stats/fast counts every
# one).  Metric: time per page and pass.  This is where the ftrace cost of
# replacing a per-page function shows: compare B and C with A, and D
# (patch_memcg=0) for the rest of lruopt without it.
. "$(dirname "$0")/bench-lib.sh"

CG_ROOT=$BENCH_WORKDIR/memcg-v1
CG=$CG_ROOT/lruopt-bench

case ${1:-} in
describe) echo "seeds/004 mmap fault->drop loop in a cgroup-v1 memcg" ;;
progs) echo memcg_bench ;;
kernels) echo "6.1" ;;
setup)
	need memcg_bench
	mnt=$(bench_ext4 128) || exit 1
	mkdir -p "$CG_ROOT"
	if ! grep -q " $CG_ROOT cgroup " /proc/mounts; then
		mount -t cgroup -o memory memory "$CG_ROOT" || {
			echo "cannot mount the cgroup-v1 memory controller (bound to cgroup v2?)" >&2
			exit 1
		}
	fi
	mkdir -p "$CG" || exit 1
	# written from inside the memcg, so the page cache is charged to it
	sh -c "echo \$\$ >'$CG/cgroup.procs' && exec dd if=/dev/zero of='$mnt/memcg-mmap.file' bs=1048576 count=$(qf 16 32)" 2>/dev/null || {
		echo "cannot create $mnt/memcg-mmap.file in $CG" >&2
		exit 1
	}
	sync
	;;
run)
	need memcg_bench
	mnt=$(bench_ext4 128) || exit 1
	out=$(sh -c "echo \$\$ >'$CG/cgroup.procs' && exec memcg_bench mmap '$mnt/memcg-mmap.file' $(qf 10 30)") || {
		echo "memcg_bench failed: $out" >&2
		exit 1
	}
	result fault_drop "$(kv "$out" ns_per_page)" ns/page lower
	;;
cleanup)
	rm -f "$BENCH_MNT/memcg-mmap.file"
	[ -d "$CG" ] && rmdir "$CG" 2>/dev/null
	grep -q " $CG_ROOT cgroup " /proc/mounts && umount "$CG_ROOT" 2>/dev/null
	bench_ext4_cleanup
	;;
*) echo "usage: $0 describe|progs|kernels|setup|run|cleanup" >&2; exit 2 ;;
esac
