#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 10-load: insmod lruopt.ko, the patch transition completes, the livepatch
# core's view matches what the module says it replaces.
# lruopt-timeout: 300
. /tests/lib.sh
dmesg_mark "10-load"
ensure_unloaded

taint0=$(cat /proc/sys/kernel/tainted)
if ! check "insmod lruopt.ko succeeds and the patch transition completes" load_lruopt; then
	dmesg_tail 30
	exit 1
fi
check "lruopt is listed in /proc/modules" lruopt_loaded
assert_eq "/sys/module/lruopt/initstate is live" live "$(readval /sys/module/lruopt/initstate)"
assert_eq "$LP/enabled is 1" 1 "$(readval "$LP/enabled")"
assert_eq "$LP/transition is 0" 0 "$(readval "$LP/transition")"
taint=$(cat /proc/sys/kernel/tainted)
# TAINT_LIVEPATCH is bit 15 (K).
check "kernel tainted with TAINT_LIVEPATCH after load (was $taint0, now $taint)" \
	test $(( taint & 32768 )) -ne 0

# The functions livepatch actually redirected (/sys/kernel/livepatch/lruopt/
# vmlinux/<func>,<sympos>) must be exactly the ones the module reports in
# its targets file, and those must be the contract for this kernel.
# (Directories only: vmlinux/ also holds the "patched" attribute.)
lp_funcs=$(for d in "$LP"/vmlinux/*; do [ -d "$d" ] && basename "$d"; done | sed 's/,[0-9]*$//' | sort | tr '\n' ' ')
exp_funcs=$(expected_targets | awk '{ print $1 }' | sort | tr '\n' ' ')
assert_eq "livepatch redirects exactly the contract functions for $(kernel_short)" "$exp_funcs" "$lp_funcs"
assert_eq "livepatch patches only vmlinux (no module objects)" "vmlinux" "$(ls "$LP" | while read -r d; do [ -d "$LP/$d" ] && echo "$d"; done | tr '\n' ' ' | sed 's/ $//')"

check_dmesg_clean "no kernel warnings during load"
