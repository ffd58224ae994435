#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 96-bpftrace: the bpftrace tools of scripts/*.bt (drainers, drainlat,
# lrulock, mlockwalk, memcglock; lruoptdrain on lruopt's lruopt:drain
# tracepoint, 6.1 and 6.12 alike) give the right numbers on known workloads,
# first on the stock kernel, then with lruopt loaded.
#
# Runs in its own image (tests/vm/bpf-initramfs: bpftrace 0.17 and its
# libraries, the tools at $BTDIR, this directory as /tests).  Per phase
# (stock, lruopt) all five tools are started together (bpftrace start-up is
# the slow part under TCG), then, with THP off so that khugepaged issues no
# drains of its own:
#   - NDRAIN writes to /proc/sys/vm/compact_memory while faultloop keeps
#     pages in a CPU's LRU batches:
#       drainers: exactly NDRAIN calls from sysctl_compaction_handler
#       drainlat: one latency sample and one CPUs-per-call sample per call
#         (kretprobe works under the livepatch), stock: kernel work items
#         ran (>= 1, <= calls x CPUs), nothing inline; lruopt: no kernel work
#         items, drain_workfn runs == drain/stats/cpus_queued delta, inline
#         drains == drain/stats/inline_drains delta
#   - mlock + munlock of MLOCK_MIB MiB populated, non-THP (mlockhold):
#       mlockwalk: one call each, MLOCK_PAGES pages each
#       lrulock:   MLOCK_PAGES pages walked each; stock: one per-page call
#         per page and 20-100 lruvec locks per 1000 pages (batches of 15 on
#         6.1, 31 on 6.12); lruopt: no per-page calls, at most one lock per
#         munlock/batch pages plus two (batch 256, 32 on PREEMPT_RT), pages
#         == munlock/stats/pages delta, locks >= lock_acquisitions delta
#   - 6.1: a charge mover moving a process that faults/dirties a shared
#     file on ext4 between two v1 memory cgroups (lib-memcg.sh):
#       memcglock: calls through both entry points, move hooks >= moves,
#         slow paths >= 1 and <= calls; lruopt: folio_memcg_lock calls >=
#         memcg/stats fast + stock, its slow paths >= memcg/stats slow -
#         retries
#     6.12: memcglock prints its "no charge moving" line and exits by itself.
# Every tool must also end cleanly on SIGINT with its summary; each output
# is copied to the log as diagnostics.
# "lruopt.bt_phases=stock" (or =lruopt) on the kernel command line runs one
# phase only.
# lruopt-timeout: 900
. /tests/lib.sh
. /tests/lib-munlock.sh
. /tests/lib-memcg.sh
dmesg_mark "96-bpftrace"

BTDIR=${LRUOPT_BT_DIR:-/usr/share/lruopt/bpftrace}
TOOLS="drainers drainlat lrulock mlockwalk memcglock"
NDRAIN=5
MLOCK_MIB=32
MLOCK_PAGES=$((MLOCK_MIB * 256))
# Generous: bpftrace start-up and probe removal are slow under TCG, and
# much slower when the host is busy.
ATTACH_TIMEOUT=240
STOP_TIMEOUT=180
MCG_SECS=3
if [ "$SLOW" = 1 ]; then
	ATTACH_TIMEOUT=480
	STOP_TIMEOUT=360
	MCG_SECS=5
fi
NCPU=$(nproc)
# lruopt.bt_phases=stock or =lruopt on the kernel command line runs one phase
PHASES=$(sed -n 's/.*lruopt\.bt_phases=\([^ ]*\).*/\1/p' "$CMDLINE_FILE" | tr ',' ' ')
PHASES=${PHASES:-stock lruopt}
THP=/sys/kernel/mm/transparent_hugepage/enabled

# ------------------------------------------------------------------ bpftrace

# bt_start TOOL PHASE: run TOOL.bt in the background, output in bt_out
bt_out() { echo "/tmp/bt-$1.$2.out"; }
bt_pid() { eval "echo \${BT_PID_$1:-}"; }
bt_start() {
	rm -f "$(bt_out "$1" "$2")"	# no stale banner for bt_wait_ready
	bpftrace "$BTDIR/$1.bt" >"$(bt_out "$1" "$2")" 2>&1 &
	eval "BT_PID_$1=$!"
}

# bt_wait_ready TOOL PHASE: the tool printed its banner (BEGIN runs after
# every probe is attached) or its "nothing to trace" line.
bt_wait_ready() {
	local out pid i=0
	out=$(bt_out "$1" "$2")
	pid=$(bt_pid "$1")
	while :; do
		grep -q 'Hit Ctrl-C to end' "$out" && return 0
		grep -q 'nothing to trace' "$out" && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "bpftrace exited before its banner:"
			cat "$out"
			return 1
		fi
		if [ $i -ge $((ATTACH_TIMEOUT * 5)) ]; then
			echo "no banner after ${ATTACH_TIMEOUT}s:"
			cat "$out"
			return 1
		fi
		sleep 0.2
		i=$((i + 1))
	done
}

# bt_stop_all PHASE TOOL...: SIGINT (Ctrl-C) to all TOOLs at once (their
# probes detach in parallel: each kprobe removal waits for RCU grace periods,
# slow under TCG), then wait up to STOP_TIMEOUT for them to exit; a tool
# still running then is killed, and its bt_ended check fails.  One SIGINT
# only: bpftrace 0.17 used to miss one now and then (it only looks at the
# signal when it interrupts its epoll_wait or when output arrives), which
# the tools' one-second heartbeat now covers; a second SIGINT would hide a
# regression, and one arriving after bpftrace restored SIG_DFL kills it
# while it prints its summary.  Sets BT_RC_<tool> (137 if killed) and
# BT_STOP_SECS.
bt_stop_all() {
	local ph=$1 t p i=0 alive t0
	shift
	t0=$(now)
	for t in "$@"; do
		p=$(bt_pid "$t")
		[ -n "$p" ] && kill -INT "$p" 2>/dev/null
	done
	while :; do
		alive=""
		for t in "$@"; do
			p=$(bt_pid "$t")
			[ -n "$p" ] && kill -0 "$p" 2>/dev/null && alive="$alive $t"
		done
		[ -z "$alive" ] && break
		if [ $i -gt 0 ] && [ $((i % 150)) = 0 ]; then
			diag "$ph: still running $((i / 5))s after SIGINT:$alive"
		fi
		if [ $i -ge $((STOP_TIMEOUT * 5)) ]; then
			diag "$ph: still running ${STOP_TIMEOUT}s after SIGINT, killed:$alive"
			for t in $alive; do
				bt_show_stuck "$(bt_pid "$t")" "$t" "$ph"
				kill -KILL "$(bt_pid "$t")" 2>/dev/null
			done
			break
		fi
		sleep 0.2
		i=$((i + 1))
	done
	for t in "$@"; do
		p=$(bt_pid "$t")
		[ -n "$p" ] || continue
		wait "$p"
		eval "BT_RC_$t=$?"
		eval "BT_PID_$t="
	done
	BT_STOP_SECS=$(elapsed_since "$t0")
}

# bt_show_stuck PID TOOL PHASE: where a bpftrace that does not exit is (diagnostics)
bt_show_stuck() {
	local d
	for d in /proc/"$1"/task/*; do
		diag "$2: thread ${d##*/} $(awk '/^State/ { print $2, $3 }' "$d/status" 2>/dev/null) wchan $(cat "$d/wchan" 2>/dev/null)"
		diag "$(sed 's/^/    /' "$d/stack" 2>/dev/null | head -16)"
	done
	diag "$2: output so far: $(tail -3 "$(bt_out "$2" "$3")" 2>/dev/null)"
}

# bt_ended TOOL PHASE: after bt_stop_all, exit status 0 and a summary
bt_ended() {
	local out rc
	out=$(bt_out "$1" "$2")
	eval "rc=\${BT_RC_$1:-none}"
	if [ "$rc" != 0 ]; then
		echo "bpftrace exit status $rc:"
		cat "$out"
		return 1
	fi
	if ! grep -q '^@' "$out"; then
		echo "no summary in the output:"
		cat "$out"
		return 1
	fi
	grep -E '^(ERROR|WARNING)' "$out"
	return 0
}

# bt_kill_all PHASE: end every tool still running (error paths)
bt_kill_all() {
	local t l=""
	for t in $TOOLS lruoptdrain; do
		[ -n "$(bt_pid "$t")" ] && l="$l $t"
	done
	[ -n "$l" ] && bt_stop_all "$1" $l
}

# btv FILE KEY: N from the line "KEY: N" ("@calls", "@pages[munlock]");
# empty when absent
btv() {
	awk -v k="$2: " 'index($0, k) == 1 { v = substr($0, length(k) + 1) } END { print v }' "$1"
}

# bthist FILE KEY: sum of the bucket counts of the histogram "KEY:"
bthist() {
	awk -v k="$2:" '
		{ sub(/ +$/, "") }
		$0 == k { on = 1; next }
		on && /^\[/ { split($0, a, "|"); n = split(a[1], w, " "); s += w[n]; next }
		on { on = 0 }
		END { print s + 0 }' "$1"
}

# btsum FILE PREFIX: sum of N over the lines "PREFIX...]: N" (a keyed map)
btsum() {
	awk -v k="$2" 'index($0, k) == 1 && /\]: [0-9]+$/ { s += $NF } END { print s + 0 }' "$1"
}

# btstack FILE MAP PATTERN: sum of the counts of MAP's entries whose
# (multi-line, kstack) key contains PATTERN
btstack() {
	awk -v m="$2[" -v p="$3" '
		index($0, m) == 1 { on = 1; hit = 0; next }
		on && index($0, p) { hit = 1 }
		on && /^[^ ].*\]: [0-9]+$/ { if (hit) s += $NF; on = 0 }
		END { print s + 0 }' "$1"
}

# num V: V, or 0 when empty
num() { echo "${1:-0}"; }

# expect NAME A OP B [DIAG]: numeric comparison as a TAP result
expect() {
	local name=$1 a=$2 op=$3 b=$4
	if [ -n "$a" ] && [ "$a" "$op" "$b" ] 2>/dev/null; then
		pass "$name ($a $op $b)"
		return 0
	fi
	fail "$name" "expected ${a:-<missing>} $op $b" ${5:+"$5"}
	return 1
}

# ------------------------------------------------------------------ lruopt counters

# snap NAME: remember the module counters the checks compare against
snap() {
	local f v
	for f in drain/stats/calls drain/stats/cpus_queued drain/stats/inline_drains \
		drain/stats/stock drain/stats/cpus_shared drain/stats/deferred \
		drain/stats/full_drains drain/stats/partial_drains munlock/stats/pages munlock/stats/lock_acquisitions \
		munlock/stats/fallbacks memcg/stats/fast memcg/stats/slow \
		memcg/stats/retries memcg/stats/stock; do
		v=$(cat "$LO/$f" 2>/dev/null || echo 0)
		eval "S_$1_$(echo "$f" | tr '/' '_')=$v"
	done
}
# delta FILE: after - before for FILE (drain/stats/calls)
delta() {
	local k
	k=$(echo "$1" | tr '/' '_')
	eval "echo \$((S_after_$k - S_before_$k))"
}

# ------------------------------------------------------------------ workloads

drain_workload() {
	local i fl rc=0 dp=""
	faultloop 120 8 >/tmp/bt-fl.out 2>&1 &
	fl=$!
	echo "$fl" >/tmp/wl.pids
	# 8 pages pending on the last CPU at the first drain, whatever the
	# faultloop has done by then (it was given a second to start)
	bg_start dp /tmp/bt-dp.out '^ready' 60 drain_pending $((NCPU - 1)) 8 300 || rc=1
	for i in $(seq "$NDRAIN"); do
		echo 1 >/proc/sys/vm/compact_memory || rc=1
	done
	bg_end dp drain_pending /tmp/bt-dp.out || rc=1
	kill -TERM "$fl"
	wait "$fl" || { echo "faultloop failed: $(cat /tmp/bt-fl.out)"; rc=1; }
	rm -f /tmp/wl.pids
	[ $rc = 0 ] && echo "$NDRAIN compactions, faultloop: $(cat /tmp/bt-fl.out)"
	return $rc
}

mlock_workload() {
	local pid rc
	start_mlockhold "$MLOCK_MIB" /tmp/bt-mh.out || return 1
	pid=$MH_PID
	echo "$pid" >/tmp/wl.pids
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	rm -f /tmp/wl.pids
	grep -q unlocked /tmp/bt-mh.out || rc=1
	echo "mlockhold ${MLOCK_MIB} MiB: status $rc, $(tr '\n' ' ' </tmp/bt-mh.out)"
	return $rc
}

# memcg_workload: the mover moves memcg_mapdirty (shared file on ext4)
# between A and B for MCG_SECS; sets MCG_MOVES
memcg_workload() {
	local rc=0
	memcg_v1_mount >/dev/null || { echo "cannot mount the v1 memory controller"; return 1; }
	mcg_fresh 64 || return 1
	mcg_start_workload "$MCG_FS/shared" 16 $((MCG_SECS + 120)) || return 1
	echo 3 >"$MCG_B/memory.move_charge_at_immigrate"
	mcg_start_mover "$MCG_SECS" || rc=1
	mcg_pids_file
	[ $rc = 0 ] && { mcg_finish_mover || rc=1; }
	mcg_stop_workload || rc=1
	rm -f /tmp/wl.pids "$MCG_FS/shared"
	sync
	memcg_fs_teardown || rc=1
	memcg_rmgroups || rc=1
	return $rc
}

# ------------------------------------------------------------------ checks

check_drain() {
	local ph=$1 o1 o2 calls sysc lat cpc works_k works_l inl
	o1=$(bt_out drainers "$ph")
	o2=$(bt_out drainlat "$ph")
	calls=$(btv "$o1" @calls)
	sysc=$(btstack "$o1" @callers sysctl_compaction_handler+)
	expect "$ph: drainers.bt: calls from sysctl_compaction_handler == $NDRAIN writes" "$sysc" -eq "$NDRAIN" \
		"$(cat "$o1")"
	expect "$ph: drainers.bt: total calls >= $NDRAIN" "$(num "$calls")" -ge "$NDRAIN"
	if grep -q 'sysctl_compaction_handler+' "$o1" && grep -q '^, sh\]' "$o1"; then
		pass "$ph: drainers.bt: a kernel stack through sysctl_compaction_handler, comm sh"
	else
		fail "$ph: drainers.bt: a kernel stack through sysctl_compaction_handler, comm sh" "$(cat "$o1")"
	fi

	calls=$(btv "$o2" @calls)
	lat=$(bthist "$o2" @usecs)
	cpc=$(bthist "$o2" @cpus_per_call)
	works_k=$(num "$(btv "$o2" "@works[lru_add_drain_per_cpu]")")
	works_l=$(num "$(btv "$o2" "@works[drain_workfn]")")
	inl=$(num "$(btv "$o2" @inline)")
	diag "$ph: drainlat.bt: calls $calls, latency samples $lat, kernel work runs $works_k, lruopt work runs $works_l, inline $inl"
	expect "$ph: drainlat.bt: calls == drainers.bt calls" "$calls" -eq "$(num "$(btv "$o1" @calls)")"
	expect "$ph: drainlat.bt: one latency sample per call (kretprobe fired)" "$lat" -eq "$(num "$calls")" \
		"$(cat "$o2")"
	expect "$ph: drainlat.bt: one CPUs-per-call sample per call" "$cpc" -eq "$(num "$calls")"
	if [ "$ph" = stock ]; then
		expect "$ph: drainlat.bt: kernel drain work items ran" "$works_k" -ge 1 "$(cat "$o2")"
		expect "$ph: drainlat.bt: kernel work runs <= calls x CPUs" "$works_k" -le $(($(num "$calls") * NCPU))
		expect "$ph: drainlat.bt: no lruopt work runs" "$works_l" -eq 0
		expect "$ph: drainlat.bt: nothing drained inline" "$inl" -eq 0
	else
		expect "$ph: drainlat.bt: calls == drain/stats/calls delta" "$(num "$calls")" -eq "$(delta drain/stats/calls)"
		expect "$ph: drainlat.bt: no kernel work items (drain replaced)" "$works_k" -eq 0 "$(cat "$o2")"
		expect "$ph: drainlat.bt: drain_workfn runs == drain/stats/cpus_queued delta" \
			"$works_l" -eq "$(delta drain/stats/cpus_queued)" "$(cat "$o2")"
		expect "$ph: drainlat.bt: inline drains == drain/stats/inline_drains delta" \
			"$inl" -eq "$(delta drain/stats/inline_drains)"
	fi
}

# check_lruoptdrain PHASE: lruoptdrain.bt's sums equal the drain counters
check_lruoptdrain() {
	local ph=$1 o calls
	o=$(bt_out lruoptdrain "$ph")
	calls=$(btv "$o" @calls)
	diag "$ph: lruoptdrain.bt: calls $calls, queued $(btv "$o" @queued), inline $(btv "$o" @inline), deferred $(btv "$o" @deferred)"
	expect "$ph: lruoptdrain.bt: calls == drain/stats calls - stock" "$(num "$calls")" -eq \
		$(($(delta drain/stats/calls) - $(delta drain/stats/stock))) "$(cat "$o")"
	expect "$ph: lruoptdrain.bt: queued == cpus_queued + cpus_shared" "$(num "$(btv "$o" @queued)")" -eq \
		$(($(delta drain/stats/cpus_queued) + $(delta drain/stats/cpus_shared)))
	expect "$ph: lruoptdrain.bt: inline == inline_drains" "$(num "$(btv "$o" @inline)")" -eq \
		"$(delta drain/stats/inline_drains)"
	expect "$ph: lruoptdrain.bt: deferred == deferred" "$(num "$(btv "$o" @deferred)")" -eq \
		"$(delta drain/stats/deferred)"
	expect "$ph: lruoptdrain.bt: full results == full_drains" \
		"$(($(btsum "$o" "@results[0, 0]") + $(btsum "$o" "@results[1, 0]")))" \
		-eq "$(delta drain/stats/full_drains)"
	# drainlat.bt's kretprobe on lru_add_drain_all() replaces the return
	# address lruopt classifies by with the rethook trampoline's: while it
	# runs, every call is strict (the safe side; docs/observability.md).
	expect "$ph: lruoptdrain.bt: the $NDRAIN compactions and the others seen (calls by caller)" \
		"$(btsum "$o" "@callers[")" -ge "$NDRAIN"
	expect "$ph: lruoptdrain.bt: under drainlat.bt's kretprobe no call is classed hint (fail-safe)" \
		"$(btsum "$o" "@results[1, ")" -eq 0 "$(cat "$o")"
}

check_mlock() {
	local ph=$1 o1 o2 k m pm lk pk
	o1=$(bt_out mlockwalk "$ph")
	o2=$(bt_out lrulock "$ph")
	for k in mlock munlock; do
		expect "$ph: mlockwalk.bt: one $k call" "$(btv "$o1" "@calls[$k]")" -eq 1 "$(cat "$o1")"
		expect "$ph: mlockwalk.bt: $k pages total == $MLOCK_PAGES" "$(btv "$o1" "@pages_total[$k]")" -eq "$MLOCK_PAGES"
		expect "$ph: mlockwalk.bt: $k pages-per-call histogram has the call" "$(bthist "$o1" "@pages[$k]")" -eq 1
		expect "$ph: mlockwalk.bt: $k latency histogram has the call" "$(bthist "$o1" "@usecs[$k]")" -eq 1
		m=$(btv "$o1" "@ns_per_page[$k]")
		expect "$ph: mlockwalk.bt: $k ns per page > 0" "$m" -gt 0
		# a time: reported, not asserted (a stalled host stretches it)
		diag "$ph: mlockwalk.bt: $k ns per page: $m"
		eval "NSPP_${ph}_$k=$m"
	done
	if grep -q '^@errors' "$o1"; then
		fail "$ph: mlockwalk.bt: no failed calls" "$(cat "$o1")"
	else
		pass "$ph: mlockwalk.bt: no failed calls"
	fi

	for k in mlock munlock; do
		expect "$ph: lrulock.bt: one $k call" "$(btv "$o2" "@calls[$k]")" -eq 1 "$(cat "$o2")"
		expect "$ph: lrulock.bt: $k pages walked == $MLOCK_PAGES" "$(btv "$o2" "@pages[$k]")" -eq "$MLOCK_PAGES"
		pm=$(num "$(btv "$o2" "@per_page[$k]")")
		lk=$(num "$(btv "$o2" "@lock_irq[$k]")")
		pk=$(btv "$o2" "@lock_irq_per_kpage[$k]")
		eval "LPK_${ph}_$k=$pk"
		if [ "$ph" = stock ]; then
			expect "$ph: lrulock.bt: $k: one stock per-page call per page" "$pm" -eq "$MLOCK_PAGES"
			# one lock per mlock batch: 15 folios on 6.1 (~66 per 1000
			# pages), 31 on 6.12 (~32)
			expect "$ph: lrulock.bt: $k: >= 20 lruvec locks per 1000 pages (stock batches of 15 or 31)" "$pk" -ge 20
			expect "$ph: lrulock.bt: $k: <= 100 lruvec locks per 1000 pages" "$pk" -le 100
		else
			expect "$ph: lrulock.bt: $k: no stock per-page calls" "$pm" -le "$(delta munlock/stats/fallbacks)"
			# one lock per munlock/batch folios (256; 32 on PREEMPT_RT),
			# one for the walk's last, partial batch and one of slack
			# (measured: exactly pages/batch + 1 on 6.1, 6.12, 6.1-rt)
			b=$(readval "$LO/munlock/batch")
			expect "$ph: lrulock.bt: $k: <= $MLOCK_PAGES/$b + 2 lruvec locks (batches of $b)" \
				"$lk" -le $((MLOCK_PAGES / b + 2))
			expect "$ph: lrulock.bt: $k: >= 1 lruvec lock" "$lk" -ge 1
		fi
	done
	if [ "$ph" = lruopt ]; then
		expect "$ph: lrulock.bt: pages walked == munlock/stats/pages delta" \
			$(($(btv "$o2" "@pages[mlock]") + $(btv "$o2" "@pages[munlock]"))) -eq "$(delta munlock/stats/pages)"
		expect "$ph: lrulock.bt: lock_irq >= munlock/stats/lock_acquisitions delta" \
			$(($(num "$(btv "$o2" "@lock_irq[mlock]")") + $(num "$(btv "$o2" "@lock_irq[munlock]")"))) \
			-ge "$(delta munlock/stats/lock_acquisitions)"
	fi
}

check_memcg() {
	local ph=$1 o calls_f calls_l slow slow_f moves
	o=$(bt_out memcglock "$ph")
	if [ "$(memcg_expected_supported)" != 1 ]; then
		if grep -q 'no memcg charge moving' "$o" && ! grep -q 'Hit Ctrl-C' "$o"; then
			pass "$ph: memcglock.bt says there is no charge moving on $(kernel_short)"
		else
			fail "$ph: memcglock.bt says there is no charge moving on $(kernel_short)" "$(cat "$o")"
		fi
		return
	fi
	calls_f=$(num "$(btv "$o" "@calls[folio_memcg_lock]")")
	calls_l=$(num "$(btv "$o" "@calls[lock_page_memcg]")")
	slow=$(btsum "$o" "@slow[")
	slow_f=$(btsum "$o" "@slow[folio_memcg_lock,")
	moves=$(btsum "$o" "@moves[")
	diag "$ph: memcglock.bt: folio_memcg_lock $calls_f, lock_page_memcg $calls_l, slow $slow, move hooks $moves; mover: ${MCG_MOVES:-?} moves"
	expect "$ph: memcglock.bt: folio_memcg_lock calls (writeback, dirtying)" "$calls_f" -ge 1 "$(cat "$o")"
	expect "$ph: memcglock.bt: lock_page_memcg calls (rmap)" "$calls_l" -ge 1
	expect "$ph: memcglock.bt: move hooks >= moves done" "$moves" -ge "$(num "$MCG_MOVES")"
	expect "$ph: memcglock.bt: slow paths seen while moving" "$slow" -ge 1 "$(cat "$o")"
	expect "$ph: memcglock.bt: slow paths <= calls" "$slow" -le $((calls_f + calls_l))
	expect "$ph: memcglock.bt: move duration histogram" "$(bthist "$o" @move_usecs)" -ge 1
	if [ "$ph" = lruopt ]; then
		# lruopt replaces both entry points (folio_memcg_lock() and
		# lock_page_memcg(), which on 6.1 has the stock lock inlined): its
		# counters see every call the script counts, and no other.
		diag "$ph: memcg/stats deltas: fast $(delta memcg/stats/fast) slow $(delta memcg/stats/slow) retries $(delta memcg/stats/retries) stock $(delta memcg/stats/stock); script: calls $((calls_f + calls_l)), slow $slow (via folio_memcg_lock $slow_f)"
		expect "$ph: memcglock.bt: calls of both entry points >= memcg/stats fast + stock delta" \
			"$((calls_f + calls_l))" -ge $(($(delta memcg/stats/fast) + $(delta memcg/stats/stock)))
		expect "$ph: memcglock.bt: slow paths >= memcg/stats slow - retries delta" \
			"$slow" -ge $(($(delta memcg/stats/slow) - $(delta memcg/stats/retries)))
	fi
}

# ------------------------------------------------------------------ a phase

run_phase() {
	local ph=$1 t ok=1 t0 tools=$TOOLS tp=0 stop="drainers drainlat lrulock mlockwalk"
	t0=$(now)
	# lruoptdrain.bt needs the lruopt:drain tracepoint: lruopt.ko's own on
	# 6.12, lruopt_events's (which load_lruopt loads first) on 6.1.  On
	# 6.12 an attached probe holds lruopt.ko: run_phase stops every tool
	# before the unload.
	if [ "$ph" = lruopt ]; then
		check "$ph: the lruopt:drain tracepoint exists" test -d /sys/kernel/tracing/events/lruopt/drain &&
			tp=1 tools="$tools lruoptdrain" stop="$stop lruoptdrain"
	fi
	for t in $tools; do bt_start "$t" "$ph"; done
	for t in $tools; do
		check "$ph: $t.bt started" bt_wait_ready "$t" "$ph" || ok=0
	done
	diag "$ph: all tools attached $(elapsed_since "$t0")s after start"
	diag "$ph: guest memory: $(free -m | awk '/^Mem/ { print $3 " MiB used, " $4 " MiB free" }')"
	if [ $ok = 0 ]; then
		bt_kill_all "$ph"
		return 1
	fi
	snap before
	check "$ph: drain workload" drain_workload
	check "$ph: mlock workload" mlock_workload
	snap after
	# shellcheck disable=SC2086
	bt_stop_all "$ph" $stop
	diag "$ph: $(echo $stop | wc -w) tools stopped in ${BT_STOP_SECS}s"
	for t in $stop; do
		check "$ph: $t.bt ends on SIGINT with its summary" bt_ended "$t" "$ph"
	done
	check_drain "$ph"
	if [ $tp = 1 ]; then
		check_lruoptdrain "$ph"
	elif [ "$ph" = stock ]; then
		# Without lruopt it must refuse to start, saying why.
		if out=$(timeout 300 bpftrace "$BTDIR/lruoptdrain.bt" 2>&1); then
			fail "$ph: lruoptdrain.bt refuses to start without the lruopt:drain tracepoint" "it ran: $out"
		elif echo "$out" | grep -q 'lruopt'; then
			pass "$ph: lruoptdrain.bt refuses to start without the lruopt:drain tracepoint"
			diag "$(echo "$out" | head -n 3)"
		else
			fail "$ph: lruoptdrain.bt refuses to start without the lruopt:drain tracepoint" "$out"
		fi
	fi
	check_mlock "$ph"

	if [ "$(memcg_expected_supported)" = 1 ]; then
		MCG_MOVES=""
		snap before
		check "$ph: memcg workload (mover + memcg_mapdirty)" memcg_workload
		snap after
		bt_stop_all "$ph" memcglock
		diag "$ph: memcglock.bt stopped in ${BT_STOP_SECS}s"
		check "$ph: memcglock.bt ends on SIGINT with its summary" bt_ended memcglock "$ph"
	else
		# It exited by itself after printing its message.
		t=$(bt_pid memcglock)
		if wait "$t"; then
			pass "$ph: memcglock.bt exited by itself, status 0"
		else
			fail "$ph: memcglock.bt exited by itself, status 0" "$(cat "$(bt_out memcglock "$ph")")"
		fi
		BT_PID_memcglock=
	fi
	check_memcg "$ph"
	# The outputs, for the log (blank lines dropped)
	for t in $tools; do
		diag "---- $ph: bpftrace $t.bt:"
		diag "$(grep -v '^ *$' "$(bt_out "$t" "$ph")")"
	done
	diag "$ph: phase took $(elapsed_since "$t0")s"
}

# ------------------------------------------------------------------ main

if ! check "bpftrace runs: $(bpftrace --version 2>&1)" bpftrace --version; then
	exit 1
fi
for t in $TOOLS lruoptdrain; do
	check "$BTDIR/$t.bt present" test -s "$BTDIR/$t.bt" || exit 1
done

thp_old=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP")
echo never >"$THP"

ensure_unloaded
# The stock phase runs the stock kernel: not even 6.1's events companion.
events_loaded && check "setup: rmmod lruopt_events for the stock phase" rmmod lruopt_events
case " $PHASES " in *" stock "*) run_phase stock ;; esac

case " $PHASES " in
*" lruopt "*)
	if check "load lruopt" load_lruopt; then
		run_phase lruopt
		check "unload lruopt" unload_lruopt
	fi ;;
esac

[ -n "$thp_old" ] && echo "$thp_old" >"$THP"

diag "munlock ns/page stock ${NSPP_stock_munlock:-?} -> lruopt ${NSPP_lruopt_munlock:-?}; lruvec locks per 1000 pages stock ${LPK_stock_munlock:-?} -> lruopt ${LPK_lruopt_munlock:-?}"
check_dmesg_clean "no kernel warnings"
