#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 50-refuse: with fault_target=<function> the module asks livepatch for a
# function that does not exist: the load must fail cleanly (errno from
# insmod, an "lruopt:" message, nothing left behind) and a normal load must
# still work afterwards.
# lruopt-timeout: 300
. /tests/lib.sh
ensure_unloaded || exit 1

# Messages the kernel prints for any first load of an unsigned out-of-tree
# livepatch module; they start with "lruopt:" but are not the module's own.
GENERIC='loading out-of-tree module taints kernel|module verification failed|tainting kernel with TAINT_LIVEPATCH'

refuse() {
	local fn=$1 out rc lines
	dmesg_mark "50-refuse $fn"
	out=$(insmod "$KO" $LRUOPT_KO_PARAMS fault_target="$fn" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		fail "fault_target=$fn: insmod fails" "insmod succeeded"
		unload_lruopt >/dev/null
		return 1
	fi
	pass "fault_target=$fn: insmod fails (status $rc: $out)"
	lines=$(dmesg_since_mark | sed 's/^\[[ 0-9.]*\] //' | grep '^lruopt: ' | grep -vE "$GENERIC")
	if [ -n "$lines" ]; then
		pass "fault_target=$fn: dmesg has an 'lruopt:' line"
		diag "$lines"
	else
		fail "fault_target=$fn: dmesg has an 'lruopt:' line" "kernel log since insmod:" "$(dmesg_since_mark | tail -15)"
	fi
	check_not "fault_target=$fn: module not loaded afterwards" lruopt_loaded
	check_not "fault_target=$fn: no $LP afterwards" test -e "$LP"
	check_not "fault_target=$fn: no $LO afterwards" test -e "$LO"
	check "fault_target=$fn: no livepatch registered at all" sh -c '[ -z "$(ls /sys/kernel/livepatch)" ]'
	check_dmesg_clean "fault_target=$fn: no kernel warnings from the failed load"
}

for fn in $(expected_targets | awk '{ print $1 }'); do
	refuse "$fn"
done

dmesg_mark "50-refuse reload"
check "a normal load works after the refused loads" load_lruopt
assert_eq "$LO/enabled is 1 after the reload" 1 "$(readval "$LO/enabled")"
check "unload after the reload" unload_lruopt
check_dmesg_clean "no kernel warnings from the reload"
