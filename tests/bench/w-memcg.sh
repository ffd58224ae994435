#!/bin/sh
# w-memcg: folio_memcg_lock() users inside a cgroup-v1 memory cgroup (6.1
# only: 6.12 has no charge moving and no such lock), with memcg_bench (the
# memcg tests' program) on files on ext4/brd created from inside the memcg:
#   fault_drop  seeds/004's mmap fault->drop loop (KAMEZAWA Hiroyuki, 2012):
#               a 32 MiB (--quick 16) file mapped twice, the first mapping
#               mlocked, the second read-faulted and dropped with
#               MADV_DONTNEED, 30 (--quick 10) passes: page_add_file_rmap +
#               page_remove_rmap per page and pass, which take
#               lock_page_memcg()
#   dirty       pwrite() into every page of an 8 MiB file, then
#               sync_file_range(WAIT|WRITE|WAIT), 15 (--quick 6) passes:
#               folio_mark_dirty, clear_dirty_for_io, writeback start/end,
#               each under folio_memcg_lock()
# Metric: time per page and pass.  Note: on 6.1 lock_page_memcg() (rmap)
# has the stock fast path inlined and does not go through the replaced
# folio_memcg_lock(); lruopt's memcg/stats/fast (BENCH-INFO lines) counts
# only the calls it handles.
. "$(dirname "$0")/bench-lib.sh"

CG_ROOT=$BENCH_WORKDIR/memcg-v1
CG=$CG_ROOT/lruopt-bench

case ${1:-} in
describe) echo "seeds/004 mmap fault->drop loop and dirty+writeback, in a cgroup-v1 memcg" ;;
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
	sh -c "echo \$\$ >'$CG/cgroup.procs' && dd if=/dev/zero of='$mnt/memcg.mmap' bs=1048576 count=$(qf 16 32) && exec dd if=/dev/zero of='$mnt/memcg.dirty' bs=1048576 count=8" 2>/dev/null || {
		echo "cannot create the files in $CG" >&2
		exit 1
	}
	sync
	;;
run)
	need memcg_bench
	mnt=$(bench_ext4 128) || exit 1
	for mode in mmap dirty; do
		it=$([ $mode = mmap ] && qf 10 30 || qf 6 15)
		out=$(sh -c "echo \$\$ >'$CG/cgroup.procs' && exec memcg_bench $mode '$mnt/memcg.$mode' $it") || {
			echo "memcg_bench $mode failed: $out" >&2
			exit 1
		}
		result "$([ $mode = mmap ] && echo fault_drop || echo dirty)" "$(kv "$out" ns_per_page)" ns/page lower
	done
	;;
cleanup)
	rm -f "$BENCH_MNT/memcg.mmap" "$BENCH_MNT/memcg.dirty"
	[ -d "$CG" ] && rmdir "$CG"
	grep -q " $CG_ROOT cgroup " /proc/mounts && umount "$CG_ROOT"
	bench_ext4_cleanup
	;;
*) echo "usage: $0 describe|progs|kernels|setup|run|cleanup" >&2; exit 2 ;;
esac
