#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 67-quiet-rtprobe (PREEMPT_RT only): a real-time task on the isolated CPU
# 3 (rtprobe: SCHED_FIFO 50, wakes every 10 ms and faults a fresh page, i.e.
# adds a folio through CPU 3's batch lock each period) while, elsewhere, a
# SCHED_FIFO 55 hog spins on CPU 1 and a SCHED_OTHER fadvise(DONTNEED)
# storm (hint drains) runs on CPU 1 too, so that a task holding a lock CPU
# 3 needs can be kept off its CPU by the hog.  Five configurations, 12 s
# each:
#   defaults   lruopt's defaults on RT: remote drains, hint callers leave
#              CPU 3 alone, the adders not patched (patch_quiet=auto)
#   remote1    skip_isolated=0: hint callers drain CPU 3 remotely under
#              its lock (the behaviour before issue 21)
#   remote0    skip_isolated=0, remote=0: queued work on CPU 3
#   quiet      reloaded with patch_quiet=1: CPU 3 batches nothing, each
#              folio takes the (shared) lruvec lock at once
#   stock      lruopt unloaded
# Asserted (counts, not times): with the defaults and quiet no drain work
# is queued on or run by CPU 3, and with quiet the probe's pages went to
# the LRU at once (quiet/stats/moved_at_once grew by at least one per
# period); with remote0 and stock the storm did put drain work on CPU 3
# (the comparison has something to compare).  Reported (RESULT lines, TCG
# timings: never asserted): the probe's largest and 99th-percentile
# wake-up and touch latencies, touches over 1 ms, and its voluntary
# switches while touching.
# lruopt-timeout: 400
. /tests/lib.sh
DRAIN_REMOTE=1
. /tests/lib-drain.sh
dmesg_mark "67-quiet-rtprobe"
ISO=3
Q=$LO/quiet
T=12
if ! is_rt; then
	skip "real-time probe on the isolated CPU" "PREEMPT_RT only"
	exit 0
fi
ensure_loaded || exit 1
pin_shell_cpu0
trap 'kill $STORM 2>/dev/null; drain_cleanup' EXIT
check "drain knobs set to defaults (remote=1)" drain_defaults
check "ext4 (ext2 layout) on brd for fadvise" drain_fs_setup
check "RT kernel threads above the hog (FIFO 60)" rt_kthreads_above_hogs
echo 950000 >/proc/sys/kernel/sched_rt_runtime_us

# probe_round LABEL: one 12 s round in the current configuration.  Sets
# PROBE (the probe's result line) and ISO_WORKS.
probe_round() {
	local lb=$1
	dtrace_start || return 1
	if ! bg_start PROBE_PID "/tmp/rtprobe-$lb.out" '^ready' 10 rtprobe $ISO 50 $T 10000 ||
		! bg_start HOG_PID /tmp/rthog.out ready 10 rthog 1 $((T + 2)) 55 256; then
		bg_kill_all
		HOG_PID=""
		dtrace_stop /dev/null
		return 1
	fi
	drain_call -c 1 -t $T -n 1000000 -i 2000 -l "$lb" -f "$DRAIN_FS/probe-$lb" fadvise \
		>"/tmp/storm-$lb.out" 2>&1 &
	STORM=$!
	wait "$PROBE_PID"
	bg_unregister "$PROBE_PID"
	kill "$STORM" 2>/dev/null
	wait "$STORM" 2>/dev/null
	STORM=""
	stop_hog >/dev/null
	dtrace_stop "/tmp/trace-$lb.txt" || return 1
	PROBE=$(grep '^rtprobe ' "/tmp/rtprobe-$lb.out")
	[ -n "$PROBE" ] || { echo "rtprobe: $(cat "/tmp/rtprobe-$lb.out")"; return 1; }
	ISO_WORKS=$(($(tworks "/tmp/trace-$lb.txt" - 1 $ISO queue) + $(tworks "/tmp/trace-$lb.txt" - 1 $ISO)))
	echo "RESULT rtprobe config=$lb works_on_cpu$ISO=$ISO_WORKS storm_calls=$(kv "$(grep '^RESULT' "/tmp/storm-$lb.out")" n) ${PROBE#rtprobe }"
}

# round LABEL: probe_round with its log, counted as one result
round() {
	if probe_round "$1" >"/tmp/probe-$1.log" 2>&1; then
		pass "$1: probe round ran"
		diag "$(grep '^RESULT rtprobe' "/tmp/probe-$1.log")"
	else
		fail "$1: probe round ran" "$(cat "/tmp/probe-$1.log")"
	fi
}

# config LABEL: switch to configuration LABEL (the module is loaded)
config() {
	case $1 in
	defaults) drain_defaults ;;
	quiet) drain_defaults && echo 1 >$Q/enabled ;;
	remote1) drain_defaults && dset skip_isolated 0 && dset remote 1 ;;
	remote0) drain_defaults && dset skip_isolated 0 && dset remote 0 ;;
	esac
}

for lb in defaults remote1 remote0 quiet; do
	if [ $lb = quiet ]; then
		check "unload, to reload with patch_quiet=1" unload_lruopt
		check "load patch_quiet=1" load_lruopt patch_quiet=1
	fi
	check "$lb: configuration set" config $lb
	m0=$(cat $Q/stats/moved_at_once)
	round $lb
	m1=$(cat $Q/stats/moved_at_once)
	case $lb in
	defaults | quiet)
		assert_eq "$lb: no drain work queued on or run by CPU $ISO" 0 "$ISO_WORKS" ;;
	remote0)
		check "remote0: the storm put drain work on CPU $ISO ($ISO_WORKS)" test "$ISO_WORKS" -ge 1 ;;
	esac
	if [ $lb = quiet ]; then
		n=$(kv "$PROBE" periods)
		check "quiet: the probe's $n pages went to the LRU at once (moved_at_once +$((m1 - m0)))" \
			test $((m1 - m0)) -ge "${n:-1}"
	fi
done
check "unload for the stock round" unload_lruopt
round stock
check "stock: the storm put drain work on CPU $ISO ($ISO_WORKS)" test "$ISO_WORKS" -ge 1
check "load lruopt again (defaults)" load_lruopt
check_dmesg_clean "no kernel warnings during 67-quiet-rtprobe"
