#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-iso-noise: what drains cost a CPU that must stay quiet.  noisesamp runs
# on the last CPU X at normal priority, reads the clock in a tight loop and
# faults a fresh page every 2 ms (so X's LRU batch nearly always holds
# folios, as an application CPU's does).  Configs B and E put X in
# drain/skip_cpus, which is what drain/skip_isolated does for an isolcpus or
# nohz_full CPU (make check's tests/iso boots those for real).  From CPU 0:
#   1. a hint storm, compaction and fadvise(DONTNEED) calls 3 ms apart,
#      while noisesamp records, per 1 ms window, the largest gap between
#      two of its clock reads;
#   2. a strict storm, memfd seals (their pages batched on CPU 1);
#   3. (on PREEMPT_RT) the uncontended cost of a remote drain: the seals'
#      drain time divided by the CPUs drained remotely (lruopt's counters;
#      B only, where the drains are remote);
#   4. X's own page faults (faultpath anon on X, per page): config E
#      (patch_quiet=1) makes X quiet, so each of its folios goes to its LRU
#      at once, and no drain has anything to do there (the work counts of
#      1. and 2. drop to 0 on every kernel).
# Metrics: drain work items run on X per 1000 hint calls and per 1000
# strict calls (workqueue_execute_start on X; goal 0 in B: with skip_cpus
# for hint callers everywhere, for strict ones only on RT, where X is
# drained remotely); during the hint storm, the sampler's involuntary
# context switches per 1000 calls (anything else that ran on X: a count,
# independent of timing), the windows' largest gap (max) and 99.9th
# percentile (under single-threaded TCG these are dominated by the
# emulator running the other vCPUs: milliseconds, in every configuration);
# and the strict call's median latency.
. "$(dirname "$0")/bench-lib.sh"

X=$(($(nproc) - 1))
WL_DESC="compaction/fadvise and memfd-seal drains from CPU 0 while CPU $X, in skip_cpus in B, samples its own noise"
WL_PROGS="noisesamp drain_call faultpath"
WL_TUNE="drain/skip_cpus $X"

wl_setup() {
	[ "$X" -ge 2 ] || { echo "needs at least 3 CPUs" >&2; exit 1; }
	drain_trace_setup || { echo "needs tracing (the work counts)" >&2; exit 1; }
	bench_ext4 128 >/dev/null || exit 1
}

# sampler_start: noisesamp on X until stopped (at most 10 minutes)
sampler_start() {
	noisesamp "$X" 600 2000 >"$BENCH_WORKDIR/noise.out" 2>&1 &
	samp=$!
	bg_register $samp
	bg_wait_ready $samp "$BENCH_WORKDIR/noise.out" noisesamp
	sleep 0.1
}

# sampler_stop: stop it and wait for its last line (not in a $(...):
# a subshell cannot wait for this shell's child)
sampler_stop() {
	kill -TERM $samp
	wait $samp
}

sampler_result() {
	grep '^noisesamp cpu=' "$BENCH_WORKDIR/noise.out"
}

# the drain counters' sum over this kernel's module, 0 when not loaded
lstat() {
	cat "/sys/kernel/lruopt/drain/stats/$1" 2>/dev/null || echo 0
}

wl_run() {
	mnt=$(bench_ext4 128) || exit 1
	nc=$(qf 10 30) nf=$(qf 40 120) ns=$(qf 20 60)

	sampler_start
	drain_trace_begin || exit 1
	drain_call -c 0 -n "$nc" -i 3000 -l iso-compact compact >/dev/null &&
		drain_call -c 0 -n "$nf" -i 3000 -l iso-fadvise -f "$mnt/iso-noise" fadvise >/dev/null
	rc=$?
	hint_works=$(drain_trace_end "$X")
	sampler_stop
	noise=$(sampler_result)
	[ $rc -eq 0 ] || exit 1

	sampler_start
	r0=$(lstat remote_drains) w0=$(lstat wait_ns_total)
	drain_trace_begin || exit 1
	s=$(drain_call -c 0 -n "$ns" -i 3000 -w 1 -l iso-memfd memfd)
	rc=$?
	strict_works=$(drain_trace_end "$X")
	r1=$(lstat remote_drains) w1=$(lstat wait_ns_total)
	sampler_stop
	[ $rc -eq 0 ] || exit 1

	[ -n "$hint_works" ] && result hint_works_per_1000 "$(div $((hint_works * 1000)) $((nc + nf)) 1)" works lower
	[ -n "$strict_works" ] && result strict_works_per_1000 "$(div $((strict_works * 1000)) "$ns" 1)" works lower
	result preempted_per_1000 "$(div $(($(kv "$noise" preempted) * 1000)) $((nc + nf)) 1)" switches lower
	result gap_max "$(kv "$noise" max_us)" us lower
	result gap_p999 "$(kv "$noise" p999_us)" us lower
	result strict_call "$(ns2us "$(kv "$s" median_ns)")" us lower
	if [ $((r1 - r0)) -gt 0 ]; then
		result remote_ns_per_cpu "$(div $((w1 - w0)) $((r1 - r0)) 0)" ns lower
	fi
	# 4. the quiet CPU's own faults: in E (patch_quiet=1) each folio goes
	# to its LRU at once, one lruvec lock per folio instead of per batch
	f=$(faultpath anon "$X" "$(qf 4 8)" "$(qf 5 10)") || exit 1
	result quiet_cpu_fault "$(kv "$f" median_ns)" ns/page lower

	echo "iso-noise: hint calls $((nc + nf)) works on CPU $X $hint_works; strict calls $ns works $strict_works; remote drains $((r1 - r0)); $noise" >&2
}

bench_main "$@"
