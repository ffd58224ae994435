#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 99-dmesg: end-of-run state of the whole boot: kernel log clean, taint
# limited to what loading an unsigned livepatch module implies, mlocked
# pages all released, no test process left behind.
# lruopt-timeout: 120
. /tests/lib.sh

check_dmesg_clean "kernel log of the whole run has no WARN/BUG/Oops/Call Trace/hung task/RCU stall" all
taint=$(cat /proc/sys/kernel/tainted)
# Allowed: O (4096, out-of-tree), E (8192, unsigned), K (32768, livepatch).
assert_eq "kernel taint has no bits beyond O/E/K (tainted=$taint)" 0 $(( taint & ~(4096 | 8192 | 32768) ))
check "Mlocked in /proc/meminfo is back to 0" wait_mlocked_zero 10
assert_eq "no workload process left" "" "$(pidof mlockloop faultloop mlockhold)"

# On a kernel with kmemleak (the debug kernel, docs/testing.md): a scan after the
# whole run must find no unreferenced object allocated by lruopt.  kmemleak
# only reports objects that stayed unreferenced over two scans.
KML=/sys/kernel/debug/kmemleak
[ -e "$KML" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w "$KML" ]; then
	echo scan >"$KML"
	sleep 5
	echo scan >"$KML"
	n=$(grep -c '^unreferenced object' "$KML")
	lr=$(awk '/^unreferenced object/ { obj = $0; hit = 0 } /lruopt/ && !hit { print obj; hit = 1 }' "$KML")
	diag "kmemleak: $n unreferenced object(s) in all"
	check "kmemleak: no leaked object allocated by lruopt" test -z "$lr"
	[ -z "$lr" ] || diag "$(grep -A 20 -F "$(echo "$lr" | head -1)" "$KML" | head -30)"
fi
