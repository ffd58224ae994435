#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# drain-bench-run.sh: runs drain-bench.sh as a test file of the VM runner, so
# that a test image can carry it (scripts/mkinitramfs KVER OUT \
#   tests/bench/drain-bench.sh:/tests/drain-bench.sh \
#   tests/bench/drain-bench-run.sh:/tests/99-drain-bench.sh, then
# scripts/vmrun ... --append lruopt.tests=99-drain-bench).  The RESULT /
# SUMMARY / RATIO lines go to the console; one TAP result: the benchmark ran
# without errors.  Rounds etc. from the kernel command line:
# lruopt.bench_rounds=N lruopt.bench_rt_calls=N lruopt.bench_fadv_iters=N
# lruopt.bench_idle_calls=N lruopt.bench_workloads=a,b
# lruopt-timeout: 1500
. /tests/lib.sh
arg() { sed -n "s/.*lruopt\.$1=\([^ ]*\).*/\1/p" /tmp/cmdline; }
v=$(arg bench_rounds) && [ -n "$v" ] && export BENCH_ROUNDS="$v"
v=$(arg bench_rt_calls) && [ -n "$v" ] && export BENCH_RT_CALLS="$v"
v=$(arg bench_fadv_iters) && [ -n "$v" ] && export BENCH_FADV_ITERS="$v"
v=$(arg bench_idle_calls) && [ -n "$v" ] && export BENCH_IDLE_CALLS="$v"
wl=$(arg bench_workloads | tr ',' ' ')
dmesg_mark "99-drain-bench"
check "drain-bench.sh ${wl:-(all workloads)}" sh /tests/drain-bench.sh $wl
check_dmesg_clean "no kernel warnings during the drain benchmark"
