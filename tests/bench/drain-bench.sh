#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# drain-bench.sh - the drain benchmark figures, A/B interleaved in one boot.
# Runs inside the test VM (busybox sh), needs /tests/lib.sh, /tests/lib-drain.sh,
# /lruopt.ko and the programs drain_call, rthog, fadvstorm (tests/progs).
#
#   sh /tests/drain-bench.sh [WORKLOAD...]     (default: rthog fadvise idle)
#
# Configurations, alternated per round (odd rounds stock first, even rounds
# lruopt first):
#   stock   lruopt not loaded: the kernel's own lru_add_drain_all()
#   lruopt  lruopt loaded, drain feature on, plus the workload's knobs
# Workloads:
#   rthog    rthog (SCHED_FIFO, CPU 1) keeps faulting pages under default RT
#            throttling; drain_call times $BENCH_RT_CALLS MADV_COLLAPSE calls
#            (a drain and nothing else) from CPU 0, 150 ms apart (not in
#            step with the 1 s RT period: a stock call after a long wait
#            lands in the 50 ms throttled window and is quick).
#            lruopt knobs: timeout_us=2000.
#   fadvise  fadvstorm: 4 processes on CPUs 0-3, each $BENCH_FADV_ITERS x
#            (re-create a 64 KiB file on ext4 (ext2 layout) on brd, keep its
#            first page mapped, fadvise DONTNEED: every call drains).
#            CPUs disturbed per call = drain work items run (trace event
#            workqueue_execute_start of lru_add_drain_per_cpu / drain_workfn)
#            per fadvise call.  lruopt runs once per value of
#            $BENCH_COALESCE_US (config lruopt-c<value>).  The stock round
#            also runs the storm without the mapped page (config
#            stock-nodrain: fadvise never drains), the floor of a call.
#   idle     nothing pending anywhere: $BENCH_IDLE_CALLS back-to-back
#            MADV_COLLAPSE calls from CPU 0 (the cost of a drain call that
#            has nothing to do).  No knobs.  The lruopt round also measures
#            config "off" (loaded, drain/enabled=0: the livepatch
#            redirection plus the stock function) to split lruopt's cost.
# Output (stdout): one line per measurement
#   RESULT bench=W config=C round=R <drain_call/fadvstorm fields> [extra=..]
# and at the end one line per workload and configuration
#   SUMMARY bench=W config=C rounds=R median_ns=<median of the rounds'
#           medians> max_ns=<max of the rounds' maxima> [works_per_call=..]
# plus RATIO lines (stock / lruopt).  Diagnostics go to stderr.
# Environment: BENCH_ROUNDS (3), BENCH_RT_CALLS (10), BENCH_FADV_ITERS (200),
# BENCH_IDLE_CALLS (2000), BENCH_COALESCE_US ("2000 20000"), BENCH_OUT (file that
# also receives every RESULT/SUMMARY/RATIO line).
. /tests/lib.sh
. /tests/lib-drain.sh

ROUNDS=${BENCH_ROUNDS:-3}
RT_CALLS=${BENCH_RT_CALLS:-10}
FADV_ITERS=${BENCH_FADV_ITERS:-200}
IDLE_CALLS=${BENCH_IDLE_CALLS:-2000}
COALESCE_US=${BENCH_COALESCE_US:-2000 20000}
OUT=${BENCH_OUT:-/tmp/drain-bench.out}
WORKLOADS=${*:-rthog fadvise idle}
: >"$OUT"

say() { echo "$*"; echo "$*" >>"$OUT"; }
log() { echo "drain-bench: $*" >&2; }

pin_shell_cpu0	# the driver stays on CPU 0; khugepaged quiet
echo 950000 >/proc/sys/kernel/sched_rt_runtime_us

to_config() {
	case $1 in
	stock)
		if lruopt_loaded || [ -d "$LP" ]; then
			unload_lruopt >&2 || return 1
		fi ;;
	lruopt)
		if ! lruopt_loaded; then
			load_lruopt >&2 || return 1
		fi
		drain_defaults ;;
	esac
	sleep 0.5
}

# drain work items run during a command: trace exec events in our instance
works_begin() {
	[ -d "$TRACEFS/instances" ] || return 1
	[ -d "$DTRACE" ] || mkdir "$DTRACE" || return 1
	echo 0 >"$DTRACE/tracing_on"
	echo 8192 >"$DTRACE/buffer_size_kb"
	echo 1 >"$DTRACE/events/workqueue/workqueue_execute_start/enable" || return 1
	: >"$DTRACE/trace"
	echo 1 >"$DTRACE/tracing_on"
}
works_end() {	# prints the count, or nothing when events were lost
	local lost n
	echo 0 >"$DTRACE/tracing_on"
	lost=$(cat "$DTRACE"/per_cpu/cpu*/stats 2>/dev/null | awk '$1 == "overrun:" { s += $2 } END { print s + 0 }')
	n=$(grep -cE 'function (lru_add_drain_per_cpu|drain_workfn)' "$DTRACE/trace")
	echo 0 >"$DTRACE/events/workqueue/workqueue_execute_start/enable"
	: >"$DTRACE/trace"
	[ "$lost" = 0 ] && echo "$n"
}

stats_line() {	# lruopt counters as key=value (empty for stock)
	lruopt_loaded || return 0
	echo "calls=$(dstat calls) coalesced=$(dstat coalesced) full=$(dstat full_drains) partial=$(dstat partial_drains) cpus_queued=$(dstat cpus_queued) cpus_shared=$(dstat cpus_shared) timeouts=$(dstat timeouts) skipped_empty=$(dstat skipped_empty) wait_ns_max=$(dstat wait_ns_max) wait_ns_total=$(dstat wait_ns_total)"
}
reset_stats() { lruopt_loaded && echo 0 >"$DS/reset"; return 0; }

bench_rthog() {	# CONFIG ROUND
	local out
	[ "$1" = lruopt ] && dset timeout_us 2000 >&2
	start_hog 1 300 >&2 || return 1
	reset_stats
	out=$(drain_call -c 0 -n "$RT_CALLS" -i 150000 -l rthog collapse) || { stop_hog >&2; return 1; }
	say "RESULT bench=rthog config=$1 round=$2 ${out#RESULT } $(stats_line)"
	stop_hog >&2
}

fadv_one() {	# CONFIG ROUND [nomap]
	local out w ext
	mkdir -p "$DRAIN_FS/storm"
	reset_stats
	works_begin || log "no tracing: no work count"
	out=$(FADVSTORM_NOMAP=${3:-} fadvstorm 4 "$FADV_ITERS" "$DRAIN_FS/storm" 64 fadvise) || { works_end >/dev/null; return 1; }
	w=$(works_end)
	ext="works=${w:-na}"
	[ -n "$w" ] && ext="$ext works_per_call=$(awk -v w="$w" -v n="$(kv "$out" n)" 'BEGIN { printf "%.3f", w / n }')"
	say "RESULT bench=fadvise config=$1 round=$2 ${out#RESULT } $ext $(stats_line)"
}

bench_fadvise() {
	local c
	drain_fs_setup >&2 || return 1
	if [ "$1" = stock ]; then
		fadv_one stock "$2" || return 1
		fadv_one stock-nodrain "$2" 1 || return 1
	else
		for c in $COALESCE_US; do
			dset coalesce_us "$c" >&2 || return 1
			fadv_one "lruopt-c$c" "$2" || return 1
		done
	fi
}

idle_one() {	# CONFIG ROUND
	local out w
	drain_call -c 0 compact >/dev/null	# nothing pending anywhere
	sleep 0.2
	reset_stats
	works_begin || log "no tracing: no work count"
	out=$(drain_call -c 0 -n "$IDLE_CALLS" -l idle collapse) || { works_end >/dev/null; return 1; }
	w=$(works_end)
	say "RESULT bench=idle config=$1 round=$2 ${out#RESULT } works=${w:-na} $(stats_line)"
}

bench_idle() {
	idle_one "$1" "$2" || return 1
	if [ "$1" = lruopt ]; then
		dset enabled 0 >&2 || return 1
		idle_one off "$2" || return 1
		dset enabled 1 >&2
	fi
}

log "kernel $(uname -r), $(ncpus) CPUs, rounds $ROUNDS, workloads: $WORKLOADS"
errors=0
r=1
while [ $r -le "$ROUNDS" ]; do
	if [ $((r % 2)) = 1 ]; then order="stock lruopt"; else order="lruopt stock"; fi
	for cfg in $order; do
		if ! to_config $cfg; then
			log "cannot switch to $cfg"
			errors=$((errors + 1))
			continue
		fi
		for w in $WORKLOADS; do
			log "round $r/$ROUNDS $cfg $w"
			if ! bench_$w $cfg $r; then
				log "bench $w failed in $cfg round $r"
				errors=$((errors + 1))
			fi
			[ $cfg = lruopt ] && drain_defaults
		done
	done
	r=$((r + 1))
done
drain_fs_teardown >&2
dtrace_cleanup
restore_khugepaged
to_config lruopt >/dev/null 2>&1	# leave it loaded, as the tests expect

# SUMMARY: per workload and configuration, median of the rounds' medians and
# max of the maxima; works_per_call averaged.
for w in $WORKLOADS; do
	for cfg in $(awk -v w=$w '$1 == "RESULT" && $2 == "bench=" w { sub("config=", "", $3); print $3 }' "$OUT" | sort -u); do
		grep "^RESULT bench=$w config=$cfg " "$OUT" | awk -v w=$w -v c=$cfg '
			function get(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
			{ n++; med[n] = get("median_ns") + 0; mx = (get("max_ns") + 0 > mx ? get("max_ns") + 0 : mx)
			  wp = get("works_per_call"); if (wp != "") { ws += wp; wn++ }
			  cl = get("calls"); if (cl != "") { calls += cl; cq += get("cpus_queued"); co += get("coalesced"); to += get("timeouts") } }
			END {
				if (!n) exit
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (med[j] < med[i]) { t = med[i]; med[i] = med[j]; med[j] = t }
				printf "SUMMARY bench=%s config=%s rounds=%d median_ns=%d max_ns=%d", w, c, n, med[int((n + 1) / 2)], mx
				if (wn) printf " works_per_call=%.3f", ws / wn
				if (calls) printf " drain_calls=%d cpus_queued_per_drain_call=%.3f coalesced=%d timeouts=%d", calls, cq / calls, co, to
				printf "\n"
			}'
	done
done | tee -a "$OUT"
for w in $WORKLOADS; do
	awk -v w=$w '
		function get(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
		$1 == "SUMMARY" && get("bench") == w { c = get("config"); cfg[c] = 1; m[c] = get("median_ns"); x[c] = get("max_ns"); p[c] = get("works_per_call") }
		END {
			if (!m["stock"]) exit
			for (c in cfg) {
				if (c == "stock" || !m[c]) continue
				printf "RATIO bench=%s config=%s median_stock_over_config=%.2f max_stock_over_config=%.2f", w, c, m["stock"] / m[c], x["stock"] / x[c]
				if (p["stock"] != "" && p[c] != "") printf " works_per_call_stock=%s works_per_call_config=%s", p["stock"], p[c]
				printf "\n"
			}
		}' "$OUT"
done | tee -a "$OUT"
say "DRAIN-BENCH-DONE errors=$errors"
[ $errors -eq 0 ]
