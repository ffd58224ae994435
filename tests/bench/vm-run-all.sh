#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# vm-run-all.sh - installed as /tests/run-all.sh in the benchmark VM image
# (tests/bench/demo): runs the A/B driver /tests/bench/run.sh instead of the
# test suite, with options from the kernel command line:
#   lruopt.bench_rounds=N  lruopt.bench_quick=1  lruopt.bench_workloads=a,b
#   lruopt.bench_configs=ABC (BC: the in-boot toggle mode, run.sh --toggle)
#   lruopt.bench_notune=1 (run.sh --no-tune)
# and ends with the LRUOPT-TESTS-DONE line that tests/vm/vmrun waits for
# (passed=1 when the driver reported no error).
cd "$(dirname "$0")" || exit 1
args=""
for w in $(cat /tmp/cmdline 2>/dev/null || cat /proc/cmdline); do
	case $w in
	lruopt.bench_rounds=*) args="$args --rounds ${w#*=}" ;;
	lruopt.bench_quick=1) args="$args --quick" ;;
	lruopt.bench_workloads=*) args="$args --workloads ${w#*=}" ;;
	lruopt.bench_configs=*) args="$args --configs ${w#*=}" ;;
	lruopt.bench_notune=1) args="$args --no-tune" ;;
	esac
done
# The memory the workloads use must not be swapped or reclaimed
# differently between configurations: start from the same state.
sync
echo 3 >/proc/sys/vm/drop_caches
# shellcheck disable=SC2086
sh /tests/bench/run.sh $args
rc=$?
if [ $rc -eq 0 ]; then
	echo "LRUOPT-TESTS-DONE passed=1 failed=0"
else
	echo "LRUOPT-TESTS-DONE passed=0 failed=1"
fi
exit $rc
