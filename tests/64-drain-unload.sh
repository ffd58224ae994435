#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 64-drain-unload: disable the patch and rmmod while an RT hog on CPU 1
# keeps lruopt's timed-out drain work queued there and drains keep being
# triggered from CPU 0.  The module must go away (its exit cancels or waits
# for its own work items), nothing may run module code afterwards (the hog
# is then stopped so CPU 1's kworker runs whatever is still queued), and
# the kernel log must stay clean.  The module is loaded again at the end.
# On single-threaded TCG (6.12) disabling the patch while the RT hog spins
# took 99-171 s: the "echo 0 > enabled" itself sits in
# klp_try_complete_transition -> sched_dynamic_klp_disable -> static-call
# text_poke_bp -> on_each_cpu IPIs, each of which waits for the busy vCPU's
# turn in QEMU's round robin (no task was left unswitched at 30 s).  There
# the drain loop is stopped before the unload (the timed-out work stays
# queued), the transition gets 400 s, and what it waits for is sampled at
# 30 s into the diagnostics.
# lruopt-timeout: 450
. /tests/lib.sh
. /tests/lib-drain.sh
dmesg_mark "64-drain-unload"
ensure_loaded || exit 1
pin_shell_cpu0
LOOP=""
trap '[ -n "$LOOP" ] && kill -TERM $LOOP 2>/dev/null; drain_cleanup' EXIT
check "drain knobs set to defaults" drain_defaults
echo 950000 >/proc/sys/kernel/sched_rt_runtime_us
check "timeout_us=2000" dset timeout_us 2000
# On PREEMPT_RT the hog ends by itself after 60 s: module unload waits in
# synchronize_rcu_tasks() (ftrace) for tasks preempted on CPU 1, and the
# RT ones below the hog's priority only run again once it is gone (stock
# behaves the same for any ftrace user).  Elsewhere it outlives the test.
HOG_SECS=300
is_rt && HOG_SECS=60
check "rthog SCHED_FIFO on CPU 1 (${HOG_SECS} s)" start_hog 1 $HOG_SECS
# The trace is read after the rmmod, when drain_workfn's address no longer
# resolves to its name (%ps is formatted at read time): match the address.
DW=$(awk '$3 == "drain_workfn" && $4 == "[lruopt]" { print $1 }' /proc/kallsyms | sed 's/^0*//')
check "drain_workfn's address known ($DW)" test -n "$DW"
DWRX="(drain_workfn|0x$DW)"
check "tracing started" dtrace_start
dsnap u0
echo "drain_call unl begin 1" >"$DRAIN_MARKER"
drain_call -c 0 -n 1000000 -i 50000 -t 900 -l loop compact >/tmp/unl-loop.out 2>&1 &
LOOP=$!
bg_register $LOOP
# until a drain timed out on the hogged CPU 1, which leaves its work
# queued there (polled: the loop's start alone can take seconds)
timed_out_yet() {
	dsnap u1
	[ "$(sd u0 u1 timeouts)" -ge 1 ] || { show_snap_delta u0 u1; return 1; }
}
check "drains timed out on the hogged CPU 1 before the unload" \
	wait_for 300 "a timed-out drain" timed_out_yet
diag "$(show_snap_delta u0 u1)"
if [ "$SLOW" = 1 ]; then
	TRANSITION_TIMEOUT=400
	kill -TERM $LOOP
	wait $LOOP
	bg_unregister $LOOP
	LOOP=""
	# what the transition waits for, 30 s in (diagnostics only)
	(sleep 30; [ -d "$LP" ] && {
		echo "after 30 s (transition=$(cat $LP/transition 2>/dev/null)):"
		show_pending_tasks
		# the livepatch core's own work: where it waits
		for p in /proc/[0-9]*; do
			grep -qE 'klp_|rcu_tasks|ftrace' "$p/stack" 2>/dev/null || continue
			echo "pid ${p#/proc/} ($(cat "$p/comm" 2>/dev/null)):"
			sed 's/^/    /' "$p/stack" | head -14
		done
	}) >/tmp/unl-pending.txt 2>&1 &
	SAMPLER=$!
	check "disable + rmmod while the hog runs" unload_lruopt
	kill $SAMPLER 2>/dev/null
	wait $SAMPLER 2>/dev/null
	[ -s /tmp/unl-pending.txt ] && diag "unpatch transition still running after 30 s:" "$(head -60 /tmp/unl-pending.txt)"
else
	check "disable + rmmod while the hog runs and drains keep coming" unload_lruopt
fi
echo "drain_call unl end 1" >"$DRAIN_MARKER"
check "lruopt gone from /proc/modules" sh -c '! grep -q "^lruopt " /proc/modules'
check "$LO and $LP gone" sh -c "[ ! -e $LO ] && [ ! -e $LP ]"
if [ -n "$LOOP" ]; then
	sleep 1
	check "drain loop still running after the unload (stock drains)" kill -0 $LOOP
	kill -TERM $LOOP
	wait $LOOP
	bg_unregister $LOOP
	LOOP=""
fi
diag "loop: $(grep RESULT /tmp/unl-loop.out)"
check "rthog ran undisturbed" stop_hog
# CPU 1's kworker now runs anything still queued there.
sleep 1
check "a stock drain after the unload" drain_now
check "trace saved" dtrace_stop /tmp/trace-unl.txt
q=$(tcount /tmp/trace-unl.txt unl 1 queue "$DWRX" 1)
x=$(tcount /tmp/trace-unl.txt unl 1 exec "$DWRX" 1)
diag "lruopt drain work on CPU 1 until the unload: queued $q times, ran $x times"
check "lruopt drain work was queued on CPU 1 before the unload (the trace matches it: $q)" test "$q" -ge 1
assert_eq "no lruopt drain work ran after the unload" 0 \
	"$(awk -v rx="function $DWRX( |\$)" '/drain_call unl end 1$/ { after = 1 } after && /workqueue_execute_start:/ && $0 ~ rx { n++ } END { print n + 0 }' /tmp/trace-unl.txt)"
check_dmesg_clean "no kernel warnings during 64-drain-unload"
check "load lruopt again" load_lruopt
