# SPDX-License-Identifier: GPL-2.0
# lib-drain.sh - helpers of the drain tests (tests/6?-drain-*.sh,
# tests/iso/65-drain-isolated.sh).  Source after lib.sh.
#
# Observability used by the drain tests:
#  - lruopt's counters (drain/stats/*) and per-call-site table
#    (drain/callers), snapshotted to files and compared (dsnap, sd, crd);
#  - the workqueue trace events of a private tracing instance: which CPU had
#    a drain work item queued (workqueue_queue_work, "cpu=N") and when it
#    started running (workqueue_execute_start, on "[00N]"), between trace
#    markers that drain_call -m writes right before and right after each
#    call ("drain_call LABEL begin I" / "... end I").  The kernel's stock
#    per-CPU work is lru_add_drain_per_cpu, lruopt's is drain_workfn.
#    trace_clock is "global", so events of different CPUs are ordered.

D=$LO/drain
DS=$D/stats
DRAIN_SNAP=/tmp/drain-snap
TRACEFS=/sys/kernel/tracing
DTRACE=$TRACEFS/instances/lruopt-drain
# drain_call -m writes its markers into our instance
export DRAIN_MARKER=$DTRACE/trace_marker
mkdir -p "$DRAIN_SNAP"

# drain_counters: the names of drain/stats/ as the loaded module has them
# (lruopt_drain.c drain_stat_names[]: the one list; 60-drain-semantics
# checks its length), in directory order
drain_counters() {
	ls "$DS" | grep -vx reset
}

# have_thp: the kernel has transparent hugepages (Debian's RT flavours do
# not: MADV_COLLAPSE and khugepaged do not exist there)
have_thp() {
	[ -d /sys/kernel/mm/transparent_hugepage ]
}

# The value drain_defaults gives drain/remote: 0, so that the tests of the
# queued-work path test it on PREEMPT_RT too; a test of the remote path
# sets DRAIN_REMOTE=1 before drain_test_begin.
DRAIN_REMOTE=${DRAIN_REMOTE:-0}

# Caller rows (first field of drain/callers) of each trigger, as an awk
# regex; a function may be inlined into its caller on one of the kernels.
RX_COMPACT='^(compact_nodes|sysctl_compaction_handler|compact_store)([.+ ]|$)'
RX_COLLAPSE='^madvise_collapse([.+ ]|$)'
RX_FADVISE='^generic_fadvise([.+ ]|$)'
RX_MEMFD='^memfd_'

# MADV_COLLAPSE needs THP: without it (Debian's RT flavours) the tests call
# compaction, the other hint caller that finds nothing pending, in its place.
if have_thp; then
	COLLAPSE=collapse
else
	COLLAPSE=compact
	RX_COLLAPSE=$RX_COMPACT
fi

# ncpus: online CPUs (nproc would count only the ones we may run on)
ncpus() {
	grep -c '^processor' /proc/cpuinfo
}

# pin_shell_cpu0: this test's shell (and so every command it starts) runs
# on CPU 0 only; the workload programs pin themselves elsewhere.  Also
# stops khugepaged, proactive compaction and watermark boosts for the test
# (quiet_mm, tests/lib.sh; drain_cleanup restores them).
pin_shell_cpu0() {
	taskset -p 1 $$ >/dev/null
	quiet_mm
}

# drain_defaults: every drain knob back to its default
drain_defaults() {
	echo 1 >"$LO/enabled" && echo 1 >"$D/enabled" &&
		echo 0 >"$D/timeout_us" && echo 0 >"$D/coalesce_us" &&
		echo "" >"$D/skip_cpus" && echo 1 >"$D/skip_isolated" &&
		echo "$DRAIN_REMOTE" >"$D/remote"
}

# dset KNOB VALUE: write a drain knob and verify it reads back
dset() {
	local got
	if ! echo "$2" >"$D/$1"; then
		echo "write '$2' > $D/$1 failed"
		return 1
	fi
	got=$(readval "$D/$1")
	if [ "$got" != "$2" ]; then
		echo "$D/$1 reads '$got' after writing '$2'"
		return 1
	fi
}

# wset FILE VALUE: write any sysfs file and verify it reads back
wset() {
	local got
	echo "$2" >"$1" || { echo "write '$2' > $1 failed"; return 1; }
	got=$(readval "$1")
	[ "$got" = "$2" ] || { echo "$1 reads '$got' after writing '$2'"; return 1; }
}

dstat() { readval "$DS/$1"; }

# dsnap TAG: save all counters and the callers table under TAG
dsnap() {
	local c
	for c in $(drain_counters); do
		echo "$c $(cat "$DS/$c")"
	done >"$DRAIN_SNAP/$1.stats"
	cat "$D/callers" >"$DRAIN_SNAP/$1.callers"
}

# sd TAG1 TAG2 COUNTER: COUNTER(TAG2) - COUNTER(TAG1)
sd() {
	awk -v c="$3" 'FNR == 1 { f++ } $1 == c { v[f] = $2 } END { print v[2] - v[1] }' \
		"$DRAIN_SNAP/$1.stats" "$DRAIN_SNAP/$2.stats"
}

# sv TAG COUNTER: value in a snapshot
sv() {
	awk -v c="$2" '$1 == c { print $2 }' "$DRAIN_SNAP/$1.stats"
}

# Field numbers of the callers table.
_cfield() {
	case $1 in
	calls) echo 3 ;; cpus_queued) echo 4 ;; inline_drains) echo 5 ;;
	skipped) echo 6 ;; timed_out) echo 7 ;; coalesced) echo 8 ;;
	wait_ns_total) echo 9 ;; wait_ns_max) echo 10 ;;
	full_drains) echo 11 ;; partial_drains) echo 12 ;; deferred) echo 13 ;;
	remote) echo 14 ;;
	*) echo 0 ;;
	esac
}

# cv TAG REGEX FIELD: sum (max for wait_ns_max) of FIELD over the caller
# rows whose symbol matches REGEX ("." = all rows)
cv() {
	awk -v rx="$2" -v f="$(_cfield "$3")" -v mx="$([ "$3" = wait_ns_max ] && echo 1)" '
		/^#/ { next }
		$1 ~ rx { if (mx) { if ($f > s) s = $f } else s += $f }
		END { print s + 0 }' "$DRAIN_SNAP/$1.callers"
}

# crd TAG1 TAG2 REGEX FIELD: delta of cv
crd() {
	echo $(( $(cv "$2" "$3" "$4") - $(cv "$1" "$3" "$4") ))
}

# cclass TAG REGEX: the classes of the matching rows ("hint", "strict", or
# several, space separated; empty when there is no such row)
cclass() {
	awk -v rx="$2" '/^#/ { next } $1 ~ rx { print $2 }' "$DRAIN_SNAP/$1.callers" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# crows TAG REGEX: the matching rows, for diagnostics
crows() {
	awk -v rx="$2" '/^#/ { next } $1 ~ rx' "$DRAIN_SNAP/$1.callers"
}

# show_snap_delta TAG1 TAG2: all counter deltas on one line
show_snap_delta() {
	local c out=""
	for c in $(drain_counters); do
		[ "$c" = wait_ns_max ] && continue
		out="$out $c=$(sd "$1" "$2" "$c")"
	done
	echo "stats delta:$out"
}

# stats_invariant TAG: calls == stock + coalesced + full_drains +
# partial_drains in one snapshot (fallbacks: inside full or partial)
stats_invariant() {
	local t=$1 calls stock co fu pa
	calls=$(sv "$t" calls) stock=$(sv "$t" stock) co=$(sv "$t" coalesced)
	fu=$(sv "$t" full_drains) pa=$(sv "$t" partial_drains)
	echo "calls=$calls stock=$stock coalesced=$co full=$fu partial=$pa"
	[ "$calls" -eq $((stock + co + fu + pa)) ]
}

# stats_consistent T1 T2: between two snapshots, the invariant on the deltas
# and the per-caller table agreeing with the global counters (rows count
# only the calls that reached lruopt's own path, i.e. not stock ones):
#   d(calls) == d(stock + coalesced + full_drains + partial_drains)
#   d(sum rows.calls) == d(calls - stock)   d(sum rows.coalesced) == d(coalesced)
#   d(sum rows.full_drains) == d(full_drains)
#   d(sum rows.partial_drains) == d(partial_drains)
#   d(sum rows.skipped) == d(skipped_cpus)  d(sum rows.timed_out) == d(timeouts)
#   d(sum rows.inline_drains) == d(inline_drains)
#   d(sum rows.deferred) == d(deferred)    d(sum rows.remote) == d(remote_drains)
#   d(sum rows.cpus_queued) == d(cpus_queued + cpus_shared)
# (stats/reset clears the counters, not the callers table: hence deltas)
stats_consistent() {
	local a=$1 b=$2 calls stock co fu pa bad=0
	calls=$(sd "$a" "$b" calls) stock=$(sd "$a" "$b" stock)
	co=$(sd "$a" "$b" coalesced) fu=$(sd "$a" "$b" full_drains)
	pa=$(sd "$a" "$b" partial_drains)
	echo "delta: calls=$calls stock=$stock coalesced=$co full=$fu partial=$pa"
	if [ "$calls" -ne $((stock + co + fu + pa)) ]; then
		echo "calls $calls != stock $stock + coalesced $co + full $fu + partial $pa"
		bad=1
	fi
	_sc_eq() {
		if [ "$2" != "$3" ]; then
			echo "$1: callers table delta $2, stats delta $3"
			bad=1
		fi
	}
	_sc_eq "calls (non-stock)" "$(crd "$a" "$b" . calls)" $((calls - stock))
	_sc_eq coalesced "$(crd "$a" "$b" . coalesced)" "$co"
	_sc_eq full_drains "$(crd "$a" "$b" . full_drains)" "$fu"
	_sc_eq partial_drains "$(crd "$a" "$b" . partial_drains)" "$pa"
	_sc_eq skipped_cpus "$(crd "$a" "$b" . skipped)" "$(sd "$a" "$b" skipped_cpus)"
	_sc_eq timeouts "$(crd "$a" "$b" . timed_out)" "$(sd "$a" "$b" timeouts)"
	_sc_eq inline_drains "$(crd "$a" "$b" . inline_drains)" "$(sd "$a" "$b" inline_drains)"
	_sc_eq deferred "$(crd "$a" "$b" . deferred)" "$(sd "$a" "$b" deferred)"
	_sc_eq remote_drains "$(crd "$a" "$b" . remote)" "$(sd "$a" "$b" remote_drains)"
	_sc_eq "cpus_queued+cpus_shared" "$(crd "$a" "$b" . cpus_queued)" \
		$(( $(sd "$a" "$b" cpus_queued) + $(sd "$a" "$b" cpus_shared) ))
	return $bad
}

# dsnap_stable TAG: snapshot until two consecutive snapshots agree (a
# background caller such as khugepaged may drain while we read), at most 10
# tries; returns 1 if they never agreed.
dsnap_stable() {
	local i=0
	dsnap "$1.a"
	while [ $i -lt 10 ]; do
		dsnap "$1"
		if cmp -s "$DRAIN_SNAP/$1.stats" "$DRAIN_SNAP/$1.a.stats" &&
			cmp -s "$DRAIN_SNAP/$1.callers" "$DRAIN_SNAP/$1.a.callers"; then
			return 0
		fi
		cp "$DRAIN_SNAP/$1.stats" "$DRAIN_SNAP/$1.a.stats"
		cp "$DRAIN_SNAP/$1.callers" "$DRAIN_SNAP/$1.a.callers"
		sleep 0.2
		i=$((i + 1))
	done
	echo "drain counters kept changing while read"
	return 1
}

# ------------------------------------------------------------------ tracing

# dtrace_start: (re)start the private instance with the two workqueue events
dtrace_start() {
	[ -d "$TRACEFS/instances" ] || { echo "no $TRACEFS/instances"; return 1; }
	[ -d "$DTRACE" ] || mkdir "$DTRACE" || return 1
	echo 0 >"$DTRACE/tracing_on"
	echo global >"$DTRACE/trace_clock" || return 1
	echo 4096 >"$DTRACE/buffer_size_kb"
	echo 1 >"$DTRACE/events/workqueue/workqueue_queue_work/enable" || return 1
	echo 1 >"$DTRACE/events/workqueue/workqueue_execute_start/enable" || return 1
	: >"$DTRACE/trace"
	echo 1 >"$DTRACE/tracing_on"
}

# dtrace_stop FILE: stop, save the trace to FILE; fails when events were lost
dtrace_stop() {
	local lost
	echo 0 >"$DTRACE/tracing_on"
	cat "$DTRACE/trace" >"$1"
	echo 0 >"$DTRACE/events/workqueue/workqueue_queue_work/enable"
	echo 0 >"$DTRACE/events/workqueue/workqueue_execute_start/enable"
	# read before the reset below: clearing the trace zeroes the counts
	lost=$(cat "$DTRACE"/per_cpu/cpu*/stats 2>/dev/null |
		awk '$1 == "overrun:" || ($1 == "dropped" && $2 == "events:") { s += $NF } END { print s + 0 }')
	: >"$DTRACE/trace"
	if [ "$lost" != 0 ]; then
		echo "trace buffer overran ($lost events lost)"
		return 1
	fi
}

dtrace_cleanup() {
	[ -d "$DTRACE" ] && rmdir "$DTRACE" 2>/dev/null
	return 0
}

# tcount FILE LABEL I KIND FUNC CPU: number of KIND events (queue: work
# queued for CPU, "cpu=CPU"; exec: work started running on CPU) of the
# work function FUNC (drain_workfn, lru_add_drain_per_cpu) between the
# markers of call I of drain_call -l LABEL.  LABEL "-" = the whole trace;
# CPU "any" = all CPUs.
tcount() {
	awk -v lb="$2" -v i="$3" -v kind="$4" -v fn="$5" -v cpu="$6" '
		function ends(s, t) { return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t }
		BEGIN { inw = (lb == "-"); b = "drain_call " lb " begin " i; e = "drain_call " lb " end " i; n = 0 }
		lb != "-" && ends($0, b) { inw = 1; next }
		lb != "-" && ends($0, e) { inw = 0; next }
		!inw { next }
		kind == "queue" && /workqueue_queue_work:/ && $0 ~ ("function=" fn "( |$)") {
			if (cpu == "any" || $0 ~ (" cpu=" cpu "( |$)")) n++
		}
		kind == "exec" && /workqueue_execute_start:/ && $0 ~ ("function " fn "( |$)") {
			if (cpu == "any") { n++; next }
			for (k = 1; k <= NF; k++) if ($k ~ /^\[[0-9]+\]$/) { c = substr($k, 2, length($k) - 2) + 0; break }
			if (c == cpu) n++
		}
		END { print n }' "$1"
}

# tworks FILE LABEL I CPU [KIND]: drain works of either kind (lruopt's
# drain_workfn, the kernel's lru_add_drain_per_cpu) that ran on CPU during
# call I (KIND queue: that were queued for it): what "no work on that CPU"
# must count, whoever queued it
tworks() {
	echo $(( $(tcount "$1" "$2" "$3" "${5:-exec}" drain_workfn "$4") +
		$(tcount "$1" "$2" "$3" "${5:-exec}" lru_add_drain_per_cpu "$4") ))
}

# tmarkers FILE LABEL I: 1 when both markers of call I are in the trace
tmarkers() {
	awk -v b="drain_call $2 begin $3" -v e="drain_call $2 end $3" '
		function ends(s, t) { return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t }
		ends($0, b) { nb++ } ends($0, e) { ne++ }
		END { print (nb == 1 && ne == 1) ? 1 : 0 }' "$1"
}

# twindow FILE LABEL I: the trace lines between the markers of call I, for
# diagnostics (drain work events only)
twindow() {
	awk -v b="drain_call $2 begin $3" -v e="drain_call $2 end $3" '
		function ends(s, t) { return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t }
		ends($0, b) { inw = 1 } inw && (/drain_workfn|lru_add_drain_per_cpu|drain_call/) { print }
		ends($0, e) { inw = 0 }' "$1" | head -40
}

# ------------------------------------------------------------------ the RT hog

# setup_batched CPU [hog]: (re)start tracing (starting it may itself
# drain CPU), then 8 pages pending in CPU's batch (start_pending; "hog":
# start_pending_hog, an RT task spinning over them), seen still batched
# (pend_lru 0).  Anything else that runs on CPU may take them out first
# (kcompactd's lru_add_drain(), an exiting task's, adds that fill the
# batch: 15 folios on 6.1), so up to 3 tries, a diagnostic line for each
# lost one; after the third, the set-up stays as it is and it fails, for
# the caller to report: three lost batches in a row are a failure, not
# noise.  Sets LRU_BEFORE (the last try's pages on an LRU).
setup_batched() {
	local cpu=$1 how=${2:-} try
	for try in 1 2 3; do
		dtrace_start || return 1
		if [ "$how" = hog ]; then
			start_pending_hog "$cpu" 8 || return 1
		else
			start_pending "$cpu" 8 || return 1
		fi
		LRU_BEFORE=$(pend_lru)
		[ "$LRU_BEFORE" = 0 ] && return 0
		diag "set-up $try: $LRU_BEFORE of the 8 pages left CPU $cpu's batch before the call"
		[ "$try" = 3 ] && break
		stop_pending >/dev/null
		dtrace_stop /dev/null || return 1
	done
	diag "CPU $cpu's 8 pages left its batch before the call three times in a row"
	return 1
}

# hog_hint_round CPU N TAG: with an RT task spinning over 8 batched pages
# on CPU (start_pending_hog, tracing started before it), N hint drains
# (compaction, 50 ms apart) from CPU 0 between the snapshots TAG.0 and
# TAG.1.  The round counts only with the pages seen batched before and
# after it, so that every call found them pending; set up again otherwise,
# 3 tries.  Sets HOG_LRU ("before after", "0 0" when it counted); the hog
# and the trace keep running (stop_pending, dtrace_stop).
hog_hint_round() {
	local cpu=$1 n=$2 tag=$3 try after
	for try in 1 2 3; do
		setup_batched "$cpu" hog || { HOG_LRU="$LRU_BEFORE -"; return 1; }
		dsnap "$tag.0"
		drain_call -c 0 -n "$n" -i 50000 compact >/dev/null
		dsnap "$tag.1"
		after=$(pend_lru)
		HOG_LRU="$LRU_BEFORE $after"
		[ "$HOG_LRU" = "0 0" ] && return 0
		diag "hint round $try: $after of the 8 pages off CPU $cpu's batch after the calls: set up again"
		[ "$try" = 3 ] && return 1
		stop_pending >/dev/null
		dtrace_stop /dev/null || return 1
	done
}

# hog_call LABEL CONFIG MODE: one traced drain_call MODE (compact, memfd
# with its writer on CPU 2, movepages) from CPU 0 while a SCHED_FIFO task
# spins on CPU 1 over 8 batched pages; CONFIG stock runs it with
# drain/enabled=0.  Sets NS (the call's time), WORKS (drain works of either
# kind that ran on CPU 1 during it) and LRU_AFTER (the hog's pages on an
# LRU afterwards).
hog_call() {
	local lb=$1 cfg=$2 mode=$3 extra="" out
	[ "$cfg" = stock ] && echo 0 >"$D/enabled"
	[ "$mode" = memfd ] && extra="-w 2"
	# tracing starts before and stops after the hog (both wait for RCU)
	setup_batched 1 hog || return 1
	# shellcheck disable=SC2086
	out=$(drain_call -c 0 -m -l "$lb" $extra "$mode") || echo "drain_call $mode failed"
	LRU_AFTER=$(pend_lru)
	stop_pending >/dev/null
	dtrace_stop "/tmp/trace-$lb.txt" || return 1
	WORKS=$(tworks "/tmp/trace-$lb.txt" "$lb" 1 1)
	NS=$(kv "$out" median_ns)
	echo 1 >"$D/enabled"
}

# nth_of "V..." N: the N-th smallest of the values (N "max": the largest)
nth_of() {
	local v
	v=$(echo "$1" | tr ' ' '
' | sed '/^$/d' | sort -n)
	if [ "$2" = max ]; then echo "$v" | tail -1; else echo "$v" | sed -n "$2p"; fi
}

# hog_rounds MODE ASSERT: three rounds of hog_call MODE, stock then lruopt,
# each snapshotted (TAGs h<round>x<MODE><config>.0/.1); after every lruopt
# call, ASSERT TAG ROUND checks it.  Ends with one RESULT line: the median
# and slowest call of each configuration.
hog_rounds() {
	local mode=$1 assert=$2 r cfg lb st="" lo=""
	for r in 1 2 3; do
		for cfg in stock lruopt; do
			lb=h${r}x$mode$cfg
			dsnap "$lb.0"
			hog_call "$lb" "$cfg" "$mode"
			dsnap "$lb.1"
			diag "hog $mode $cfg round $r: ${NS} ns, works on CPU 1: $WORKS, pages on LRU after: $LRU_AFTER; $(show_snap_delta "$lb.0" "$lb.1")"
			if [ "$cfg" = stock ]; then
				st="$st $NS"
				continue
			fi
			lo="$lo $NS"
			"$assert" "$lb" "$r"
		done
	done
	diag "RESULT name=rt-hog-$mode kernel=$(kernel_short) n=3 stock_median_ns=$(nth_of "$st" 2) stock_max_ns=$(nth_of "$st" max) lruopt_median_ns=$(nth_of "$lo" 2) lruopt_max_ns=$(nth_of "$lo" max)"
}

# hog_drained TAG ROUND COUNTER: what every PREEMPT_RT remote drain next to
# the hog must give (an ASSERT of hog_rounds): one full drain, no partial
# one and no COUNTER (timeouts, stock), no drain work on the hogged CPU 1,
# and the hog's 8 batched pages on the LRU.
hog_drained() {
	local lb=$1 r=$2 c=$3
	assert_eq "hog round $r ($lb): one full drain, no partial, no $c (full partial $c)" "1 0 0" \
		"$(sd "$lb.0" "$lb.1" full_drains) $(sd "$lb.0" "$lb.1" partial_drains) $(sd "$lb.0" "$lb.1" "$c")"
	assert_eq "hog round $r ($lb): no drain work ran on the hogged CPU 1" 0 "$WORKS"
	assert_eq "hog round $r ($lb): the hog's 8 batched pages are on the LRU" 8 "$LRU_AFTER"
}

# ------------------------------------------------------------------ workloads

# start_pending CPU NPAGES: drain_pending leaves NPAGES pages in CPU's LRU
# batch and sleeps there.  Sets PEND_PID (registered: bg_start, lib.sh).
start_pending() {
	bg_start PEND_PID /tmp/drain-pending.out '^ready' 10 drain_pending "$1" "$2" 300
}

# start_pending_hog CPU NPAGES [SECONDS]: the same, but then spinning
# SCHED_FIFO 50 in user space on CPU (for SECONDS, default 300, or until
# stop_pending): an RT hog whose batch holds NPAGES pages until something
# drains that CPU.
start_pending_hog() {
	bg_start PEND_PID /tmp/drain-pending.out '^ready' 10 drain_pending "$1" "$2" "${3:-300}" 50
}

# pend_lru [OUT PID]: "N" = how many of drain_pending's pages are on an LRU
# list (/proc/kpageflags through pagemap, see lrubits): 0 while they are
# still in the CPU's batch, all of them once that batch was drained.  OUT
# and PID: another drain_pending than start_pending's.
pend_lru() {
	local out=${1:-/tmp/drain-pending.out} pid=${2:-$PEND_PID} addr n
	addr=$(awk '/^ready/ { print $4 }' "$out")
	n=$(awk '/^ready/ { print $3 }' "$out")
	lrubits "$pid" "${addr#0x}" "$n" | sed -n 's/^lru=\([0-9]*\) .*/\1/p'
}

# pending_call CPU LABEL MODE: one drain_call MODE from CPU 0 (marked
# LABEL, traced) right after a sleeping helper faulted 8 pages on CPU.
# Counter snapshots LABEL.0 / LABEL.1 around it while lruopt is loaded.
# Sets PEND_LRU_AFTER (the helper's pages on an LRU after the call) and
# PEND_WORKS (drain works queued on or run by CPU during the trace).
pending_call() {
	local cpu=$1 lb=$2 extra=""
	case $3 in
	memfd) extra="-w 1" ;;
	pin) extra="-w 1 -p 4" ;;
	fadvise) extra="-f $DRAIN_FS/pending-$lb" ;;
	esac
	dtrace_start || return 1
	start_pending "$cpu" 8 || return 1
	[ -d "$DS" ] && dsnap "$lb.0"
	# shellcheck disable=SC2086
	drain_call -c 0 -m -l "$lb" $extra "$3" >/dev/null || return 1
	[ -d "$DS" ] && dsnap "$lb.1"
	dtrace_stop "/tmp/trace-$lb.txt" || return 1
	PEND_LRU_AFTER=$(pend_lru)
	stop_pending
	PEND_WORKS=$(($(tworks "/tmp/trace-$lb.txt" - 1 "$cpu" queue) + $(tworks "/tmp/trace-$lb.txt" - 1 "$cpu")))
}

# remote_call LABEL CONFIG MODE: with 8 pages pending on CPU $K, one traced
# drain_call MODE (compact, memfd with its writer on CPU 1, movepages) from
# CPU 0 under CONFIG: remote1 or remote0 (drain/remote=1 or 0) or stock
# (drain/enabled=0); both back to 1 afterwards.  Counter snapshots
# LABEL.0 / LABEL.1 right around the call.  Sets WORKS (drain works that
# ran on CPU $K during the call), LRU_BEFORE and LRU_AFTER (the helper's
# pages on an LRU); the trace stays in /tmp/trace-LABEL.txt.
# The call is only a test with the 8 pages still in CPU $K's batch: the
# set-up is setup_batched's, the snapshot LABEL.0 taken once the pages are
# seen batched, and LRU_BEFORE stays for the caller to assert.
remote_call() {
	local lb=$1 cfg=$2 mode=$3 extra=""
	case $cfg in
	remote1) echo 1 >"$D/enabled"; echo 1 >"$D/remote" ;;
	remote0) echo 1 >"$D/enabled"; echo 0 >"$D/remote" ;;
	stock) echo 0 >"$D/enabled" ;;
	esac
	[ "$mode" = memfd ] && extra="-w 1"
	# LRU_BEFORE, a lost batch included, is the caller's to assert
	LRU_BEFORE=""
	setup_batched "$K" || [ -n "$LRU_BEFORE" ] || return 1
	dsnap "$lb.0"
	# shellcheck disable=SC2086
	drain_call -c 0 -m -l "$lb" $extra "$mode" >/dev/null || echo "drain_call $mode failed"
	dsnap "$lb.1"
	dtrace_stop "/tmp/trace-$lb.txt" || return 1
	LRU_AFTER=$(pend_lru)
	WORKS=$(tworks "/tmp/trace-$lb.txt" "$lb" 1 "$K")
	stop_pending >/dev/null
	echo 1 >"$D/enabled"
	echo 1 >"$D/remote"
}

stop_pending() {
	bg_end PEND_PID drain_pending /tmp/drain-pending.out
}

# start_hog CPU [SECONDS]: rthog SCHED_FIFO on CPU.  Sets HOG_PID.
start_hog() {
	bg_start HOG_PID /tmp/rthog.out 'ready' 10 rthog "$1" "${2:-300}" 50 256 || return 1
	sleep 0.2
}

stop_hog() {
	local rc=0
	[ -n "${HOG_PID:-}" ] || return 0
	bg_end HOG_PID rthog /tmp/rthog.out || rc=$?
	tail -1 /tmp/rthog.out
	return $rc
}

# drain_test_begin NAME [MIN_CPUS]: the preamble of a drain test: marks the
# kernel log, loads lruopt, pins this shell to CPU 0, cleans up at exit
# (drain_cleanup), needs MIN_CPUS online CPUs (default 1), sets NCPU and K
# (the last CPU), knobs to their defaults and the default RT throttling.
drain_test_begin() {
	dmesg_mark "$1"
	ensure_loaded || exit 1
	pin_shell_cpu0
	trap drain_cleanup EXIT
	NCPU=$(ncpus)
	K=$((NCPU - 1))
	if [ "$NCPU" -lt "${2:-1}" ]; then
		fail "$1 needs at least $2 CPUs (have $NCPU)"
		exit 1
	fi
	check "drain knobs set to defaults" drain_defaults
	echo 950000 >/proc/sys/kernel/sched_rt_runtime_us
}

# drain_cleanup: stop helpers, knobs back to defaults, default RT throttling.
# For "trap drain_cleanup EXIT" in every drain test.
drain_cleanup() {
	stop_hog >/dev/null 2>&1
	stop_pending >/dev/null 2>&1
	[ -d "$D" ] && drain_defaults 2>/dev/null
	echo 950000 >/proc/sys/kernel/sched_rt_runtime_us 2>/dev/null
	restore_mm
	dtrace_cleanup
}

# kv LINE KEY: value of KEY=... in a RESULT line
kv() {
	printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

# ext4 on brd for the fadvise trigger (tmpfs/ramfs fadvise is a no-op).
# busybox's mke2fs makes an ext2 layout (ext4 driver) and brd completes
# writes inside submit_bio(): generic_fadvise() finds the freshly written
# folios clean and drops them, so it only calls lru_add_drain_all() when
# some folio cannot be invalidated.  drain_call fadvise and fadvstorm
# therefore keep the file's first page mapped during the call (a mapped
# folio is never invalidated), which makes every call drain.
DRAIN_FS=/mnt/drain-fs
DRAIN_DEV=/dev/ram0
drain_fs_setup() {
	if awk -v d="$DRAIN_FS" '$2 == d { f = 1 } END { exit !f }' /proc/mounts; then
		return 0
	fi
	if ! grep -q '^brd ' /proc/modules; then
		modprobe brd rd_nr=1 rd_size=131072 || { echo "modprobe brd failed"; return 1; }
	fi
	[ -b $DRAIN_DEV ] || { echo "$DRAIN_DEV missing"; return 1; }
	if grep -q "^$DRAIN_DEV " /proc/mounts; then
		echo "$DRAIN_DEV is mounted elsewhere: $(grep "^$DRAIN_DEV " /proc/mounts)"
		return 1
	fi
	mke2fs -q $DRAIN_DEV >/dev/null || { echo "mke2fs failed"; return 1; }
	modprobe ext4 || { echo "modprobe ext4 failed"; return 1; }
	mkdir -p "$DRAIN_FS"
	mount -t ext4 $DRAIN_DEV "$DRAIN_FS" || { echo "mount ext4 failed"; return 1; }
}

drain_fs_teardown() {
	if awk -v d="$DRAIN_FS" '$2 == d { f = 1 } END { exit !f }' /proc/mounts; then
		umount "$DRAIN_FS" || return 1
	fi
	if grep -q '^brd ' /proc/modules; then
		rmmod brd || return 1
	fi
	return 0
}
