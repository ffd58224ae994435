#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# run-all.sh [GLOB] - run /tests/NN-*.sh whose name (without .sh) matches
# GLOB (default: all), in order, and print the TAP plan and the final line
#   LRUOPT-TESTS-DONE passed=P failed=F skipped=S
# which tests/vm/vmrun and tests/vm/check look for (passed does not include
# the skips; the fields keep this order, so a parser of the older line
# without skipped= still reads passed and failed).
#
# A test file may set its own time limit with a line "# lruopt-timeout: SEC"
# (default 300 s, doubled on single-threaded TCG, times LRUOPT_TIMEOUT_SCALE).  A file that is killed,
# exits non-zero without having reported a failure, or reports nothing at all
# is counted as one extra failure, so a broken test can never look green.
cd "$(dirname "$0")" || exit 1
. ./lib.sh

glob=${1:-*}
# The glob arrives from the kernel command line; "," separates alternatives.
globs=$(echo "$glob" | tr ',' ' ')

rm -rf "$TAP_DIR"
mkdir -p "$TAP_DIR"
echo 0 >"$TAP_DIR/count"
echo 0 >"$TAP_DIR/pass"
echo 0 >"$TAP_DIR/fail"
echo 0 >"$TAP_DIR/skip"

echo "TAP version 13"
diag "kernel $(uname -r), accel '${ACCEL:-?}', tests '$glob'${LRUOPT_KO_PARAMS:+, module params '$LRUOPT_KO_PARAMS'}"
suite_t0=$(now)
ran=0
# once per boot, before any test starts a hog (see lib.sh)
is_rt && check "PREEMPT_RT: ktimers/rcuc threads set above the test hogs (SCHED_FIFO 60)" rt_kthreads_above_hogs
for t in /tests/[0-9][0-9]-*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	match=0
	# set -f: the patterns must reach "case" unexpanded
	set -f
	for g in $globs; do
		# shellcheck disable=SC2254
		case $name in $g) match=1 ;; esac
	done
	set +f
	[ $match -eq 1 ] || continue
	ran=$((ran + 1))

	limit=$(sed -n 's/^# lruopt-timeout: *\([0-9][0-9]*\).*/\1/p' "$t" | head -1)
	limit=${limit:-300}
	[ "$SLOW" = 1 ] && limit=$((limit * 2))
	# lruopt.timeout_scale=N on the kernel command line (e.g. a KASAN and
	# lockdep kernel, many times slower) multiplies every limit.
	limit=$((limit * ${LRUOPT_TIMEOUT_SCALE:-1}))

	echo 0 >"$TAP_DIR/file_count"
	echo 0 >"$TAP_DIR/file_fail"
	diag "==== $name (limit ${limit}s)"
	# Every test starts with the events companion loaded where the image
	# has it (lib.sh: EVKO, before 6.3), whatever the one before did with
	# it; but the harness's own checks (00-*), which look at the boot as
	# it came (untainted, no module).
	case $name in
	00-*) ;;
	*)
		if [ -f "$EVKO" ] && ! out=$(load_events); then
			diag "$out"
		fi ;;
	esac
	klog "begin $name"
	t0=$(now)
	# busybox timeout only knows one signal; KILL, so a wedged test cannot
	# ignore it.  Its children (workloads) are cleaned up below.
	timeout -s KILL "$limit" sh "$t"
	rc=$?
	secs=$(elapsed_since "$t0")
	klog "end $name status $rc"

	# Leftover background helpers of a killed test would disturb the
	# next one.  Kill them by the pids the test registered (bg_register).
	bg_kill_all
	# An insmod/rmmod of a killed test keeps running in the kernel (it is
	# a grandchild, and a module load cannot be interrupted half-way); the
	# next test must not start while the module is changing state.
	w=0
	while [ -n "$(pidof insmod rmmod modprobe)" ] && [ $w -lt 3000 ]; do
		sleep 0.1
		w=$((w + 1))
	done
	[ $w -eq 0 ] || diag "waited $((w / 10))s for insmod/rmmod left by $name"

	nres=$(cat "$TAP_DIR/file_count")
	nfail=$(cat "$TAP_DIR/file_fail")
	if [ $rc -eq 137 ] || [ $rc -eq 143 ]; then
		fail "$name: killed after the ${limit}s time limit"
	elif [ "$nres" -eq 0 ]; then
		fail "$name: reported no results (exit status $rc)"
	elif [ $rc -ne 0 ] && [ "$nfail" -eq 0 ]; then
		fail "$name: exited with status $rc without reporting a failure"
	fi
	diag "==== $name: $nres results, $nfail failed, ${secs}s"
done

if [ $ran -eq 0 ]; then
	fail "no test file matched '$glob'"
fi

total=$(cat "$TAP_DIR/count")
passed=$(cat "$TAP_DIR/pass")
failed=$(cat "$TAP_DIR/fail")
skipped=$(cat "$TAP_DIR/skip")
echo "1..$total"
if [ -s "$TAP_DIR/failed-names" ]; then
	diag "failed:"
	sed 's/^/#   /' "$TAP_DIR/failed-names"
fi
if [ -s "$TAP_DIR/transition-times" ]; then
	diag "livepatch transitions: $(awk '{ n++; s += $1; if ($1 > m) m = $1 } END { printf "%d, mean %.2fs, max %.2fs", n, s / n, m }' "$TAP_DIR/transition-times")"
fi
diag "suite time $(elapsed_since "$suite_t0")s (guest uptime $(now)s)"
diag "$passed passed, $failed failed, $skipped skipped"
echo "LRUOPT-TESTS-DONE passed=$passed failed=$failed skipped=$skipped"
[ "$failed" -eq 0 ]
