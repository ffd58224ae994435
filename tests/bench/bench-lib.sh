# SPDX-License-Identifier: GPL-2.0
# bench-lib.sh - helpers for the A/B workloads tests/bench/w-*.sh.
#
# POSIX sh: busybox ash in the test VM, dash/bash on a host
# (scripts/lruopt-ab).  The contract the workloads implement is in
# tests/bench/README.md; the driver is tests/bench/run.sh, which sets:
#   BENCH_CONFIG   A | B | C (for "run")
#   BENCH_QUICK    1 for the small --quick sizes, else 0
#   BENCH_WORKDIR  scratch directory (exists; workloads use subdirectories)
#   BENCH_HOST     1 when running on a real host (scripts/lruopt-ab), else 0
#   BENCH_KSHORT   kernel line, "6.1" / "6.12"

BENCH_QUICK=${BENCH_QUICK:-0}
BENCH_HOST=${BENCH_HOST:-0}
BENCH_WORKDIR=${BENCH_WORKDIR:-/tmp/lruopt-bench}
BENCH_NAME=${BENCH_NAME:-$(basename "$0" .sh | sed 's/^w-//')}

# result METRIC VALUE UNIT lower|higher: one sample, in the contract's format
result() {
	case $2 in
	'' | *[!0-9.eE+-]*)
		echo "bench: $BENCH_NAME: metric $1 has no numeric value ('$2')" >&2
		return 1 ;;
	esac
	echo "RESULT workload=$BENCH_NAME metric=$1 value=$2 unit=$3 better=$4"
}

# info TEXT: a diagnostic line for the console log (BENCH-INFO, not a sample)
info() {
	echo "INFO $*"
}

# kv LINE KEY: the value of KEY=VALUE in LINE (empty if absent)
kv() {
	printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# ns2us NS: nanoseconds -> microseconds, 1 decimal
ns2us() {
	awk -v n="$1" 'BEGIN { printf "%.1f", n / 1000 }'
}

# div A B [DECIMALS]: A / B
div() {
	awk -v a="$1" -v b="$2" -v d="${3:-3}" 'BEGIN { if (b == 0) print "nan"; else printf "%." d "f", a / b }'
}

# qf QUICK FULL: the value for the current size class
qf() {
	if [ "$BENCH_QUICK" = 1 ]; then echo "$1"; else echo "$2"; fi
}

# need PROG...: fail (exit 1) with a clear message if a program is missing
need() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 && continue
		echo "bench: $BENCH_NAME: program '$p' not found in PATH" >&2
		exit 1
	done
}

# vmstat KEY: a /proc/vmstat counter
vmstat() {
	awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' /proc/vmstat
}

# ------------------------------------------------------------ the verbs
# A workload sets WL_DESC and WL_PROGS (and WL_KERNELS, WL_TUNE,
# WL_OPTIONAL if it has them), defines wl_run (and wl_setup, wl_cleanup if it needs them) and
# ends with 'bench_main "$@"', which implements the contract's verbs
# (tests/bench/README.md); setup, run and cleanup first check that the
# programs of WL_PROGS are there.
bench_main() {
	case ${1:-} in
	describe) echo "$WL_DESC" ;;
	progs) echo "$WL_PROGS" ;;
	kernels) [ -z "${WL_KERNELS:-}" ] || echo "$WL_KERNELS" ;;
	tune) [ -z "${WL_TUNE:-}" ] || echo "$WL_TUNE" ;;
	optional) [ -z "${WL_OPTIONAL:-}" ] || echo "$WL_OPTIONAL" ;;
	setup | run | cleanup)
		# shellcheck disable=SC2086
		need $WL_PROGS
		if type "wl_$1" >/dev/null 2>&1; then
			"wl_$1"
		elif [ "$1" = run ]; then
			echo "bench: $BENCH_NAME has no wl_run" >&2
			exit 1
		fi
		;;
	*)
		echo "usage: $0 describe|progs|kernels|tune|optional|setup|run|cleanup" >&2
		exit 2
		;;
	esac
}

# ------------------------------------------------------------ pids
# Background helpers register here; the driver kills what a killed run
# left behind (by these pids, never by name).
bg_register() {
	echo "$1" >>"$BENCH_WORKDIR/bg.pids"
}

# bg_wait_ready PID FILE NAME: wait (10 s at most) for the background
# helper PID to print "ready" into FILE; if it does not, or dies, say so,
# stop it and fail the run (exit 1)
bg_wait_ready() {
	local i=0
	until grep -q ready "$2"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$1" 2>/dev/null; then
			echo "$3 did not start: $(cat "$2")" >&2
			kill -TERM "$1" 2>/dev/null
			exit 1
		fi
		sleep 0.1
	done
}

# ------------------------------------------------------------ ext4 on brd
# bench_ext4 MIB: a block-backed ext4 mount at $BENCH_WORKDIR/ext4 on
# /dev/ram0 (brd), created once per boot (idempotent).  Prints the mount
# point.  On a host, refuses to touch a brd that is already loaded (it may
# be somebody's ramdisk); a brd loaded here is unloaded by bench_ext4_cleanup.
BENCH_MNT=$BENCH_WORKDIR/ext4
bench_ext4() {
	local mib=${1:-128} mkfs
	if grep -q " $BENCH_MNT " /proc/mounts; then
		echo "$BENCH_MNT"
		return 0
	fi
	if [ ! -b /dev/ram0 ]; then
		modprobe brd rd_nr=1 rd_size=$((mib * 1024)) max_part=0 >&2 || {
			echo "bench: modprobe brd failed" >&2
			return 1
		}
		touch "$BENCH_WORKDIR/brd.ours"
		local i=0
		while [ ! -b /dev/ram0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	elif [ "$BENCH_HOST" = 1 ] && [ ! -f "$BENCH_WORKDIR/brd.ours" ]; then
		echo "bench: /dev/ram0 exists and was not created by this run; not touching it" >&2
		return 1
	fi
	[ -b /dev/ram0 ] || { echo "bench: /dev/ram0 did not appear" >&2; return 1; }
	# busybox has only mke2fs (ext2 layout, mounted by the ext4 driver);
	# a host normally has mkfs.ext4.
	if command -v mkfs.ext4 >/dev/null 2>&1; then
		mkfs="mkfs.ext4 -q -F"
	else
		mkfs="mke2fs -q"
	fi
	$mkfs /dev/ram0 >&2 || { echo "bench: $mkfs /dev/ram0 failed" >&2; return 1; }
	mkdir -p "$BENCH_MNT"
	mount -t ext4 /dev/ram0 "$BENCH_MNT" >&2 || {
		echo "bench: mount -t ext4 /dev/ram0 failed" >&2
		return 1
	}
	echo "$BENCH_MNT"
}

bench_ext4_cleanup() {
	if grep -q " $BENCH_MNT " /proc/mounts; then
		umount "$BENCH_MNT" || return 1
	fi
	if [ -f "$BENCH_WORKDIR/brd.ours" ]; then
		rmmod brd && rm -f "$BENCH_WORKDIR/brd.ours"
	fi
	return 0
}

# ------------------------------------------------------------ swap on zram
# bench_zram MIB: a zram device of MIB MiB formatted as swap, /dev/zram0,
# created once per boot (idempotent; zram comes from the stock kernel's
# modules: tests/stock-modules).  Not switched on: a workload that wants
# swap switches it on for its run (lfbomb does, with swapon(2), once it
# holds its memory) and off with bench_swap_off, so that the other
# workloads run as before, without swap.  On a host, refuses a zram that
# this run did not load.
bench_zram() {
	local mib=${1:-1024} i=0
	[ -f "$BENCH_WORKDIR/zram.ours" ] && [ -b /dev/zram0 ] && return 0
	if [ -e /sys/block/zram0 ]; then
		echo "bench: /dev/zram0 exists and was not created by this run; not touching it" >&2
		return 1
	fi
	modprobe zram num_devices=1 >&2 || { echo "bench: modprobe zram failed" >&2; return 1; }
	touch "$BENCH_WORKDIR/zram.ours"
	while [ ! -b /dev/zram0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b /dev/zram0 ] || { echo "bench: /dev/zram0 did not appear" >&2; return 1; }
	echo "${mib}M" >/sys/block/zram0/disksize &&
		mkswap /dev/zram0 >/dev/null 2>&1 || {
		echo "bench: cannot make a ${mib} MiB swap on /dev/zram0" >&2
		return 1
	}
}

# bench_swap_off: swap on the zram device of bench_zram off (if on)
bench_swap_off() {
	! grep -q '^/dev/zram0 ' /proc/swaps || swapoff /dev/zram0
}

# bench_zram_cleanup: swap off, and unload zram if this run loaded it
bench_zram_cleanup() {
	[ -f "$BENCH_WORKDIR/zram.ours" ] || return 0
	bench_swap_off || return 1
	rmmod zram && rm -f "$BENCH_WORKDIR/zram.ours"
}

# ------------------------------------------------------------ memcg (6.1)
# The memory group the memcg workloads run in, shared by them.  Which
# hierarchy: the default patch_memcg=auto leaves the memcg lock alone on
# both (B and C should equal A); configuration D (patch_memcg=1) puts it in:
#   v1 (default)  a cgroup-v1 memory hierarchy, where charges can move: D
#                 measures what a host that opts in pays;
#   v2            LRUOPT_BENCH_MEMCG=v2 (lruopt.bench_memcg=v2 on the VM's
#                 command line): a cgroup-v2 memcg with memory enabled in the
#                 root's subtree_control, as on a Debian 12 systemd host.
if [ "${LRUOPT_BENCH_MEMCG:-v1}" = v2 ]; then
	BENCH_CG_ROOT=/sys/fs/cgroup
else
	BENCH_CG_ROOT=$BENCH_WORKDIR/memcg-v1
fi
BENCH_CG=$BENCH_CG_ROOT/lruopt-bench

# bench_memcg_file NAME MIB: mount the v1 memory controller or enable memory
# in cgroup v2 (once), create the group, and write $BENCH_MNT/NAME (MIB MiB)
# from inside the group, so that its page cache is charged to it.  Needs
# bench_ext4 first.
bench_memcg_file() {
	if [ "${LRUOPT_BENCH_MEMCG:-v1}" = v2 ]; then
		grep -q " $BENCH_CG_ROOT cgroup2 " /proc/mounts &&
			echo +memory >"$BENCH_CG_ROOT/cgroup.subtree_control" || {
			echo "cannot enable the memory controller in cgroup v2 at $BENCH_CG_ROOT" >&2
			return 1
		}
	else
		mkdir -p "$BENCH_CG_ROOT"
		if ! grep -q " $BENCH_CG_ROOT cgroup " /proc/mounts; then
			mount -t cgroup -o memory memory "$BENCH_CG_ROOT" || {
				echo "cannot mount the cgroup-v1 memory controller (bound to cgroup v2?)" >&2
				return 1
			}
		fi
	fi
	mkdir -p "$BENCH_CG" || return 1
	bench_in_memcg dd if=/dev/zero of="$BENCH_MNT/$1" bs=1048576 count="$2" 2>/dev/null || {
		echo "cannot create $BENCH_MNT/$1 in $BENCH_CG" >&2
		return 1
	}
	sync
}

# bench_memcg_workload FILE QUICK_MIB FULL_MIB: a memcg workload's program
# (memcg_bench), kernel (6.1: 6.12 moves no charges), setup (ext4 on brd,
# the group, FILE written from inside it) and cleanup
bench_memcg_workload() {
	WL_PROGS=memcg_bench
	WL_KERNELS=6.1
	BENCH_MEMCG_FILE=$1
	BENCH_MEMCG_MIB=$(qf "$2" "$3")
	wl_setup() {
		bench_ext4 128 >/dev/null || exit 1
		bench_memcg_file "$BENCH_MEMCG_FILE" "$BENCH_MEMCG_MIB" || exit 1
	}
	wl_cleanup() {
		bench_memcg_cleanup "$BENCH_MEMCG_FILE"
	}
}

# bench_memcg_run MODE FILE ITERS [CPU]: memcg_bench MODE on $BENCH_MNT/FILE
# in the group, pinned to CPU if given; prints its result line
bench_memcg_run() {
	local mode=$1 file=$2 iters=$3 cpu=${4:-} out
	bench_ext4 128 >/dev/null || return 1
	if [ -n "$cpu" ]; then set -- taskset -c "$cpu"; else set --; fi
	out=$(bench_in_memcg "$@" memcg_bench "$mode" "$BENCH_MNT/$file" "$iters") || {
		echo "memcg_bench $mode failed: $out" >&2
		return 1
	}
	echo "$out"
}

# bench_in_memcg CMD [ARGS...]: run CMD as a member of the group
bench_in_memcg() {
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$BENCH_CG" "$@"
}

# bench_memcg_cleanup NAME: remove the file, then the group and the mount
# once no other workload uses them, then the ext4 disk
bench_memcg_cleanup() {
	rm -f "$BENCH_MNT/$1"
	[ -d "$BENCH_CG" ] && rmdir "$BENCH_CG" 2>/dev/null
	grep -q " $BENCH_CG_ROOT cgroup " /proc/mounts && umount "$BENCH_CG_ROOT" 2>/dev/null
	bench_ext4_cleanup
}

# ------------------------------------------------------------ drain works
# Counts how often a per-CPU drain work item ran (the stock
# lru_add_drain_per_cpu or lruopt's drain_workfn): the number of CPUs a
# drain disturbed with a kworker run.  Uses a private tracing instance
# (events/workqueue/workqueue_execute_start), so it does not interfere with
# other tracing on a host.  The event is enabled once, by the workloads'
# setup (drain_trace_setup), and stays enabled - in every configuration -
# until the driver's drain_trace_cleanup: enabling a tracepoint patches
# kernel text (a static key), and doing that around every run is both a
# disturbance and, under QEMU's multi-threaded TCG, a risk (cross-modifying
# code).  A run only switches the instance's ring buffer on and off.
TRACEFS=
for _t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	if [ -d "$_t/instances" ]; then TRACEFS=$_t; break; fi
done
TRACE_INST=${TRACEFS:+$TRACEFS/instances/lruopt-bench}
TRACE_EV=events/workqueue/workqueue_execute_start/enable

# drain_trace_setup: create the instance and enable the event (idempotent;
# returns 1 if tracing is unavailable)
drain_trace_setup() {
	[ -n "$TRACEFS" ] || return 1
	if [ ! -d "$TRACE_INST" ]; then
		mkdir "$TRACE_INST" 2>/dev/null || return 1
		echo 0 >"$TRACE_INST/tracing_on"
		echo 4096 >"$TRACE_INST/buffer_size_kb" 2>/dev/null
	fi
	[ "$(cat "$TRACE_INST/$TRACE_EV")" = 1 ] || echo 1 >"$TRACE_INST/$TRACE_EV" || return 1
	echo 0 >"$TRACE_INST/tracing_on"
}

# fadvstorm_results DIR ITERS LABEL [VAR=VALUE...]: one fadvise storm of
# 4 writers (fadvstorm, with the VAR=VALUE settings in its environment) in
# DIR, drain work counted, and its results: call_median, call_p99,
# calls_per_s, drain_works_per_call (the two fadvise workloads)
fadvstorm_results() {
	local dir=$1 iters=$2 label=$3 out works n
	shift 3
	drain_trace_begin
	out=$(env "$@" fadvstorm 4 "$iters" "$dir" 64 "$label") || {
		drain_trace_end >/dev/null
		echo "fadvstorm failed: $out" >&2
		return 1
	}
	works=$(drain_trace_end)
	n=$(kv "$out" n)
	result call_median "$(ns2us "$(kv "$out" median_ns)")" us lower
	result call_p99 "$(ns2us "$(kv "$out" p99_ns)")" us lower
	result calls_per_s "$(div "$((n * 1000))" "$(kv "$out" wall_ms)" 0)" calls/s higher
	[ -z "$works" ] || result drain_works_per_call "$(div "$works" "$n" 3)" works lower
}

# drain_trace_begin: start counting (returns 1 if not set up)
drain_trace_begin() {
	[ -n "$TRACE_INST" ] && [ -d "$TRACE_INST" ] || return 1
	[ "$(cat "$TRACE_INST/$TRACE_EV")" = 1 ] || return 1
	echo 0 >"$TRACE_INST/tracing_on"
	: >"$TRACE_INST/trace"
	echo 1 >"$TRACE_INST/tracing_on"
}

# drain_trace_end [CPU]: stop and print the count, of the work items that
# ran on CPU only if given (empty if tracing failed or the buffer
# overflowed, so that no wrong number is ever reported)
drain_trace_end() {
	local n lost
	[ -n "$TRACE_INST" ] && [ -d "$TRACE_INST" ] || return 1
	echo 0 >"$TRACE_INST/tracing_on"
	lost=$(cat "$TRACE_INST"/per_cpu/cpu*/stats 2>/dev/null | awk '$1 == "overrun:" { s += $2 } END { print s + 0 }')
	if [ "$lost" != 0 ]; then
		echo "bench: trace buffer overran ($lost events lost): no drain-work count" >&2
		: >"$TRACE_INST/trace"
		return 1
	fi
	n=$(awk -v cpu="${1:-any}" '
		/function (lru_add_drain_per_cpu|drain_workfn)( |$)/ {
			if (cpu == "any") { n++; next }
			for (k = 1; k <= NF; k++)
				if ($k ~ /^\[[0-9]+\]$/) {
					if (substr($k, 2, length($k) - 2) + 0 == cpu) n++
					break
				}
		}
		END { print n + 0 }' "$TRACE_INST/trace")
	: >"$TRACE_INST/trace"
	echo "$n"
}

# drain_trace_cleanup: disable the event, remove the instance (driver, at the end)
drain_trace_cleanup() {
	[ -n "$TRACE_INST" ] && [ -d "$TRACE_INST" ] || return 0
	echo 0 >"$TRACE_INST/tracing_on"
	echo 0 >"$TRACE_INST/$TRACE_EV" 2>/dev/null
	rmdir "$TRACE_INST" 2>/dev/null
	return 0
}
