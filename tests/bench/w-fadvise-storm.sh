#!/bin/sh
# w-fadvise-storm: the fadvise(DONTNEED) storm.  ab_fadvise runs 4
# processes pinned to CPUs 0-3, each with its own 16-page file on ext4 on a
# RAM block device (brd) whose first page it keeps mapped (a reader has it
# mmapped); each process 200 times (--quick 80) re-writes the other 15
# pages (fresh page-cache folios in its CPU's LRU batch) and calls
# posix_fadvise(DONTNEED) on the file.  The mapped page cannot be
# invalidated, so every call runs lru_add_drain_all() while the other
# writers keep refilling their CPUs' batches - the pattern of build farms
# and loggers that drop each file after writing it.  Metrics: median and p99
# latency of one fadvise call, calls per second of the whole storm, and the
# drain work items run per call (CPUs disturbed by a kworker; trace event
# workqueue_execute_start).  Config B sets drain/coalesce_us=2000: a drain
# for fadvise arriving within 2 ms of a completed full drain returns at once.
. "$(dirname "$0")/bench-lib.sh"

case ${1:-} in
describe) echo "fadvise(DONTNEED) storm: 4 writers on ext4/brd, a drain per call" ;;
progs) echo ab_fadvise ;;
tune) echo "drain/coalesce_us 2000" ;;
setup)
	need ab_fadvise
	bench_ext4 128 >/dev/null || exit 1
	drain_trace_setup || echo "no tracing: no drain-work count" >&2
	;;
run)
	need ab_fadvise
	mnt=$(bench_ext4 128) || exit 1
	mkdir -p "$mnt/storm"
	drain_trace_begin
	out=$(ab_fadvise "$mnt/storm" 4 "$(qf 80 200)" 16) || {
		drain_trace_end >/dev/null
		exit 1
	}
	works=$(drain_trace_end)
	result call_median "$(kv "$out" median_us)" us lower
	result call_p99 "$(kv "$out" p99_us)" us lower
	result calls_per_s "$(kv "$out" calls_per_s)" calls/s higher
	[ -z "$works" ] || result drain_works_per_call "$(div "$works" "$(kv "$out" calls)" 3)" works lower
	;;
cleanup) bench_ext4_cleanup ;;
*) echo "usage: $0 describe|progs|tune|setup|run|cleanup" >&2; exit 2 ;;
esac
