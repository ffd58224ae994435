#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 95-refuse-rt: on a PREEMPT_RT kernel (Debian's linux-image-rt-amd64) lruopt
# must refuse to load: loading fails with EOPNOTSUPP, exactly one "lruopt:"
# line per attempt says why, nothing is patched or left behind, and the
# kernel carries no livepatch taint.  Only in the RT image (tests/rt, "make check-rt"): lib.sh
# and run-all.sh here are links to the main suite's.
# lruopt-timeout: 120
. /tests/lib.sh

# Messages the module loader prints for any first load of an unsigned
# out-of-tree (livepatch) module; they start with "lruopt:" but are not the
# module's own.
GENERIC='loading out-of-tree module taints kernel|module verification failed|tainting kernel with TAINT_LIVEPATCH'

is_rt() {
	uname -v | grep -q PREEMPT_RT || return 1
	# /sys/kernel/realtime exists only on PREEMPT_RT kernels
	[ "$(readval /sys/kernel/realtime)" = 1 ]
}
if ! check "kernel $(uname -r) is PREEMPT_RT ($(uname -v))" is_rt; then
	exit 1
fi
ensure_unloaded || exit 1

# own_lines: the "lruopt:" lines since the mark that the module printed
own_lines() {
	dmesg_since_mark | sed 's/^\[[ 0-9.]*\] //' | grep '^lruopt: ' | grep -vE "$GENERIC"
}

# after_refusal WHAT: what must hold after a refused load
after_refusal() {
	local what=$1
	check_not "$what: lruopt not in /proc/modules" lruopt_loaded
	check_not "$what: no $LP" test -e "$LP"
	check_not "$what: no $LO" test -e "$LO"
	check "$what: no livepatch registered at all" \
		sh -c '[ -z "$(ls /sys/kernel/livepatch 2>/dev/null)" ]'
	if [ -r /sys/kernel/tracing/enabled_functions ]; then
		assert_eq "$what: no function redirected by ftrace" "" \
			"$(cat /sys/kernel/tracing/enabled_functions)"
	fi
	check_dmesg_clean "$what: no kernel warnings from the refused load"
}

# refuse_once N: one finit_module(2) call (one run of the module's init;
# see progs/finit_insmod.c) refused with EOPNOTSUPP and one line saying why
refuse_once() {
	local what="finit_module $1" out lines count
	dmesg_mark "95-refuse-rt $what"
	out=$(finit_insmod "$KO")
	case $out in
	ok)
		fail "$what fails with EOPNOTSUPP" "the module loaded"
		unload_lruopt >/dev/null
		return 1 ;;
	"err EOPNOTSUPP "*)
		pass "$what fails with EOPNOTSUPP" ;;
	*)
		fail "$what fails with EOPNOTSUPP" "finit_insmod: $out" ;;
	esac

	lines=$(own_lines)
	count=$(printf '%s' "$lines" | grep -c '^lruopt: ')
	assert_eq "$what: exactly one 'lruopt:' line in dmesg" 1 "$count"
	[ -z "$lines" ] || diag "$lines"
	case $lines in
	*"refusing to load: PREEMPT_RT"*)
		pass "$what: the 'lruopt:' line says PREEMPT_RT is refused" ;;
	*)
		fail "$what: the 'lruopt:' line says PREEMPT_RT is refused" \
			"kernel log since the load:" "$(dmesg_since_mark | tail -15)" ;;
	esac
	after_refusal "$what"
}

taint0=$(cat /proc/sys/kernel/tainted)
refuse_once 1
# A second attempt must behave the same: the first left no state behind.
refuse_once 2

# What a user types: busybox insmod (which runs the init twice, see above).
dmesg_mark "95-refuse-rt busybox insmod"
if out=$(insmod "$KO" 2>&1); then
	fail "busybox insmod fails" "insmod succeeded"
	unload_lruopt >/dev/null
else
	case $out in
	*"Operation not supported"*) pass "busybox insmod fails: $out" ;;
	*) fail "busybox insmod fails with EOPNOTSUPP" "insmod said: $out" ;;
	esac
fi
lines=$(own_lines)
assert_eq "busybox insmod: every 'lruopt:' line is the PREEMPT_RT refusal" "" \
	"$(printf '%s\n' "$lines" | grep -v 'refusing to load: PREEMPT_RT' | grep .)"
after_refusal "busybox insmod"

taint=$(cat /proc/sys/kernel/tainted)
# TAINT_LIVEPATCH is bit 15 (K).  Note: the module loader sets it in
# check_modinfo_livepatch() for any module with modinfo livepatch=Y, before
# the module's init runs; only a module that is not marked as a livepatch
# on RT can pass this.
if [ $(( taint & 32768 )) -eq 0 ]; then
	pass "kernel not tainted with TAINT_LIVEPATCH (tainted=$taint, was $taint0)"
else
	fail "kernel not tainted with TAINT_LIVEPATCH (tainted=$taint, was $taint0)" \
		"$(dmesg | grep -i 'TAINT_LIVEPATCH' | head -3)"
fi
check_dmesg_clean "kernel log of the whole boot is clean" all
