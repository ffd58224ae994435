#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 40-cycles: five load -> transition -> disable -> unpatch transition -> rmmod
# cycles while the mlock/munlock and page-fault workloads keep running
# (lruopt.cycles=N on the kernel command line changes the count; the stress
# suite, make stress and make check-all, runs 100 under a heavier load).
# lruopt-timeout: 450
. /tests/lib.sh
dmesg_mark "40-cycles"
ensure_unloaded || exit 1

CYCLES=${LRUOPT_CYCLES:-5}
check "workload (mlockloop + faultloop) started" start_workload 1800

one_cycle() {
	load_lruopt || return 1
	[ "$(readval "$LO/enabled")" = 1 ] || { echo "$LO/enabled is not 1 after load"; return 1; }
	unload_lruopt || return 1
	workload_running || { echo "the workload died during this cycle"; return 1; }
	echo "load ${LOAD_SECS}s, unload ${UNLOAD_SECS}s"
}
run_cycles "$CYCLES" "under load: insmod, patch, disable, unpatch, rmmod" one_cycle

check "workload exits cleanly (no syscall failure, no data corruption)" stop_workload
check "Mlocked returns to 0 after the cycles" wait_mlocked_zero 10
check_not "lruopt is not loaded after the cycles" lruopt_loaded
check "no livepatch left in /sys/kernel/livepatch" sh -c '[ -z "$(ls /sys/kernel/livepatch)" ]'
check_dmesg_clean "no kernel warnings during the load/unload cycles"
