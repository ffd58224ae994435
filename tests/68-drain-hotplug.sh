#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 68-drain-hotplug: drains racing CPU offline/online.  A CPU going offline
# has its batches drained, without their locks, by the page allocator's
# CPU-dead callback; lruopt's queued work may be pending there and, on
# PREEMPT_RT, a remote drainer may hold that CPU's locks.  The module's
# CPUHP_BP_PREPARE_DYN teardown fences remote drainers off before that
# callback runs (lruopt_drain.c, "CPU hotplug").  Here CPUs 2 and 3 go
# offline and online 8 times each while faulting and mlocking workloads keep
# batches filled everywhere and CPU 0 runs strict (memfd seals, the writer
# on CPU 1), hint (compaction) and lru_cache_disable() (move_pages) drains
# in loops.  Asserted: every hotplug step and every
# drain succeeds, remote drains happened (RT, drain/remote=1), the counters
# stay consistent, the kernel log stays clean, and the module unloads.
# The race window itself is a few instructions wide: a clean run is
# evidence, not proof (the argument is at the code).
# lruopt-timeout: 400
. /tests/lib.sh
is_rt && DRAIN_REMOTE=1
. /tests/lib-drain.sh
drain_test_begin 68-drain-hotplug 4
dsnap_stable h0 || fail "counters stable at start"

check "background workload (mlockloop + faultloop) started" start_workload 300
# drainers loop until the hotplug storm is over; a failed call is recorded
rm -f /tmp/hp.stop /tmp/hp.err /tmp/hp.busy
drainer() {
	local out
	while [ ! -f /tmp/hp.stop ]; do
		# shellcheck disable=SC2086
		out=$(drain_call -c 0 -n 20 -i 2000 $1 2>&1) ||
			echo "drain_call $1 failed: $(echo "$out" | grep -v '^RESULT' | head -2 | tr '\n' ' ')" >>/tmp/hp.err
		echo "$out" | sed -n 's/.* busy=\([1-9][0-9]*\).*/\1/p' >>/tmp/hp.busy
	done
}
# The seals may find their pages isolated by the compaction storm (-b):
# migration holds references past memfd_wait_for_pins()'s ~150 ms, stock
# too, the longer while a CPU goes down.  Their drains are judged by
# 60-66, without a storm.
drainer "-w 1 -b memfd" &
P1=$!
drainer compact &
P2=$!
# move_pages: lru_cache_disable(), whose drain is remote on RT too
drainer movepages &
P3=$!
bg_register "$P1" "$P2" "$P3"
cycle() {
	local i c
	for i in 1 2 3 4 5 6 7 8; do
		for c in 2 3; do
			echo 0 >/sys/devices/system/cpu/cpu$c/online || { echo "cpu$c offline failed (round $i)"; return 1; }
			sleep 0.1
			echo 1 >/sys/devices/system/cpu/cpu$c/online || { echo "cpu$c online failed (round $i)"; return 1; }
		done
	done
}
check "CPUs 2 and 3 offline/online 8 times each under drains" cycle
touch /tmp/hp.stop
wait "$P1" "$P2" "$P3"
bg_unregister "$P1"
bg_unregister "$P2"
bg_unregister "$P3"
assert_eq "every drain call during the storm succeeded" "" "$(sort /tmp/hp.err 2>/dev/null | uniq -c)"
diag "memfd seals that found their pages busy (isolated by compaction): $(awk '{ s += $1 } END { print s + 0 }' /tmp/hp.busy)"
check "background workload exited cleanly" stop_workload
assert_eq "all CPUs back online" "0-$K" "$(cat /sys/devices/system/cpu/online)"
dsnap_stable h1 || fail "counters stable at end"
diag "$(show_snap_delta h0 h1)"
if is_rt; then
	check "remote drains happened (remote_drains +$(sd h0 h1 remote_drains))" test "$(sd h0 h1 remote_drains)" -ge 1
fi
check "counter invariants hold over 68-drain-hotplug" stats_consistent h0 h1
check_dmesg_clean "no kernel warnings during 68-drain-hotplug"
check "lruopt unloads after the hotplug storm" unload_lruopt
check "and loads again" load_lruopt
