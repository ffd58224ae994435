#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 16-trace: the lruopt:* tracepoints.  From 6.3 lruopt.ko owns them; before
# (6.1) the companion lruopt_events.ko does (lruopt_trace.h), to which
# lruopt.ko links at run time.
#  - insmod lruopt.ko alone loads and patches on every kernel; 6.12: the
#    events exist and dmesg says nothing of them; 6.1: no events, one dmesg
#    line says how to get them, a drain and the munlock walk still run.
#  - 6.12: next to a companion left by 0.3.0 (which built one on every
#    kernel) lruopt.ko refuses to load (EINVAL, one dmesg line, nothing
#    left, no reference on it).
#  - 6.1: the companion loaded after lruopt is linked (one dmesg line), its
#    events fire (one munlock_batch per batch), it cannot be removed while
#    linked (refcnt 1) and can once lruopt is gone; a companion of another
#    build (another trace ABI) loaded after lruopt is ignored (one dmesg
#    line, no event fires through it, it can be removed first), loaded
#    before lruopt makes the load fail (EINVAL, one dmesg line, no
#    reference left on it); so does one shaped as 0.3.0's (another ABI,
#    no ops table), which an upgrade may leave loaded.  After
#    every unload order nothing is left: no module, livepatch, sysfs tree
#    or events.  Loaded in modprobe's order neither module draws the
#    tracing core's "bad taint" complaint.
#  - events/lruopt/{drain,munlock_batch,lazyfree} exist, and have the same
#    fields on every kernel (force_all_cpus as the mm tree's
#    mm_lru_add_drain_all); a known mlock + munlock of 8 MiB gives
#    munlock_batch events whose count and folio sum equal
#    munlock/stats/batches and pages, in both directions.  A strict memfd
#    seal with pages pending on the last CPU and a hint compaction with that
#    CPU in skip_cpus give lruopt:drain events with the right class,
#    caller, queued/deferred/skipped, result and force_all_cpus=0, and over
#    the whole traced phase the drain events add up to the counters (one
#    event per call that reached lruopt; queued, deferred, full and partial
#    sums equal the stats deltas).  On PREEMPT_RT a move_pages(2) gives
#    lru_cache_disable()'s drain: force_all_cpus=1.
#  - lruopt.ko unloads with the events enabled; on 6.1 the events stay with
#    the companion (and fire no more) and go when it is removed; on 6.12
#    they go with lruopt.ko.
# lruopt-timeout: 600
. /tests/lib.sh
. /tests/lib-drain.sh
dmesg_mark "16-trace"
ensure_unloaded || exit 1
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null

OWNER=$(events_owner)
abi=$(trace_abi)
check "lruopt.ko names its trace ABI (modinfo trace_abi): '$abi'" test ${#abi} -eq 16
case $OWNER in
lruopt | lruopt_events) pass "lruopt.ko names the events' owner (modinfo trace_events): $OWNER" ;;
*) fail "lruopt.ko names the events' owner (modinfo trace_events): '$OWNER'" ;;
esac
I=$T/instances/lruopt-16
rmdir "$I" 2>/dev/null
check "setup: a private tracing instance" mkdir "$I" || exit 1

# nothing_left WHAT: neither module, the livepatch nor the sysfs tree remains
nothing_left() {
	check_not "$1: lruopt is not loaded" lruopt_loaded
	check_not "$1: lruopt_events is not loaded" events_loaded
	check_not "$1: no livepatch left" test -d "$LP"
	check_not "$1: no $LO left" test -d "$LO"
	check_not "$1: no lruopt events left" test -d "$I/events/lruopt"
}

# munlock_events: the munlock_batch events of one 1 MiB mlock + munlock
# into $MB_EV, that walk's batches (the counter's delta) into $MB_N
munlock_events() {
	local b0
	b0=$(readval "$LO/munlock/stats/batches")
	: >"$I/trace"
	mlockhold 1 1 >/dev/null 2>&1
	MB_N=$(($(readval "$LO/munlock/stats/batches") - b0))
	MB_EV=$(grep -c 'munlock_batch:' "$I/trace")
}

# other_build_companion KO WHAT: 6.1, a companion of another build (KO)
# loaded after lruopt is ignored, never half-used (one dmesg line, no event
# fires through it, no reference, removable first); loaded before lruopt
# it makes the load fail (one dmesg line, no reference left on it).
other_build_companion() {
	local ko="$1" what="$2" line n
	line="trace ABI $FOREIGN_ABI, this module.s $abi)"
	check "setup: lruopt.ko alone again" load_lruopt_alone
	dmesg_mark "16-trace $what after"
	check "$what after lruopt: insmod succeeds" insmod "$ko"
	assert_eq "$what after lruopt: one dmesg line, lruopt ignores it as another build" 1 \
		"$(dmesg_since_mark | grep -c "lruopt: trace events: ignoring lruopt_events of another build ($line")"
	echo 1 >"$I/events/lruopt/munlock_batch/enable"
	munlock_events
	echo 0 >"$I/events/lruopt/munlock_batch/enable"
	check "$what, ignored: the walk ran ($MB_N batches)" test "$MB_N" -gt 0
	assert_eq "$what, ignored: no event fired through it" 0 "$MB_EV"
	assert_eq "$what, ignored: lruopt holds no reference" 0 "$(cat /sys/module/lruopt_events/refcnt)"
	check "$what, then lruopt: rmmod the unused companion first" rmmod lruopt_events
	check "$what, then lruopt: unload lruopt" unload_lruopt
	nothing_left "$what, then lruopt"
	check "setup: insmod $what first" insmod "$ko"
	dmesg_mark "16-trace $what before"
	check_not "lruopt.ko next to $what: refused" insmod "$KO"
	# (busybox's insmod tries init_module() after a failed finit_module():
	# two loads, two refusals)
	n=$(dmesg_since_mark | grep -c "lruopt: refusing to load: lruopt_events is of another build ($line")
	check "refused load: dmesg names it another build ($n lines)" test "$n" -ge 1
	check_not "refused load: lruopt is not loaded" lruopt_loaded
	check_not "refused load: no livepatch left" test -d "$LP"
	assert_eq "refused load: the companion holds no reference" 0 "$(cat /sys/module/lruopt_events/refcnt)"
	check "setup: rmmod $what" rmmod lruopt_events
}

# ---- 6.3+: a companion that 0.3.0 left loaded (it built one everywhere)
# owns events of the same names: lruopt.ko refuses to load next to it.
# tests/vm/check puts such a companion in the image (/lruopt_events_stale.ko).
STALE=/lruopt_events_stale.ko
if [ "$OWNER" = lruopt ] && [ -f "$STALE" ]; then
	events_loaded && rmmod lruopt_events
	check "setup: insmod an older build's companion" insmod "$STALE"
	dmesg_mark "16-trace stale companion"
	check_not "lruopt.ko next to an older build's companion: refused" insmod "$KO"
	# (busybox's insmod tries init_module() after a failed finit_module():
	# two loads, two refusals)
	n=$(dmesg_since_mark | grep -c 'lruopt: refusing to load: lruopt_events of an older build (trace ABI [0-9a-f]*) is loaded and owns the lruopt:\* events; rmmod lruopt_events first')
	check "refused load: dmesg says to rmmod it ($n lines)" test "$n" -ge 1
	check_not "refused load: lruopt is not loaded" lruopt_loaded
	check_not "refused load: no livepatch left" test -d "$LP"
	check_not "refused load: no $LO left" test -d "$LO"
	assert_eq "refused load: the companion holds no reference" 0 "$(cat /sys/module/lruopt_events/refcnt)"
	check "setup: rmmod the older build's companion" rmmod lruopt_events
	nothing_left "the older build's companion, then a refused lruopt"
elif [ "$OWNER" = lruopt ]; then
	skip "lruopt.ko next to an older build's companion: refused" "no $STALE in the image"
fi

# ---- insmod lruopt.ko alone (the first command a user types)
events_loaded && rmmod lruopt_events
dmesg_mark "16-trace alone"
check "insmod lruopt.ko alone: loads, transition completes" load_lruopt_alone || exit 1
check_not "lruopt_events was not loaded" events_loaded
if [ "$OWNER" = lruopt ]; then
	# 6.3+: lruopt.ko owns the events
	assert_eq "no dmesg line about trace events (lruopt.ko owns them)" 0 \
		"$(dmesg_since_mark | grep -c 'lruopt: trace events')"
	check "events/lruopt/drain exists with lruopt.ko alone" test -d "$I/events/lruopt/drain"
	check_not "no lruopt_events.ko in this build" test -f "$EVKO"
else
	assert_eq "one dmesg line says the events need lruopt_events.ko" 1 \
		"$(dmesg_since_mark | grep -c 'lruopt: trace events: off until lruopt_events.ko is loaded')"
	check_not "no events/lruopt with lruopt.ko alone" test -d "$I/events/lruopt"
	c0=$(readval "$LO/drain/stats/calls")
	echo 1 >/proc/sys/vm/compact_memory
	munlock_events
	check "alone: a compaction's drain reached lruopt" test "$(readval "$LO/drain/stats/calls")" -gt "$c0"
	check "alone: the munlock walk ran ($MB_N batches)" test "$MB_N" -gt 0

	# The companion after lruopt: linked from lruopt's module notifier.
	dmesg_mark "16-trace late companion"
	check "insmod lruopt_events.ko after lruopt.ko" insmod "$EVKO"
	assert_eq "one dmesg line: lruopt links to it" 1 \
		"$(dmesg_since_mark | grep -c 'lruopt: trace events: lruopt_events loaded, lruopt:\* events on')"
	check "events/lruopt/munlock_batch exists now" test -d "$I/events/lruopt/munlock_batch"
	echo 1 >"$I/events/lruopt/munlock_batch/enable"
	munlock_events
	echo 0 >"$I/events/lruopt/munlock_batch/enable"
	check "late companion: the walk's batches fire ($MB_N)" test "$MB_N" -gt 0
	assert_eq "late companion: one munlock_batch event per batch" "$MB_N" "$MB_EV"
	check_not "late companion: cannot be removed while lruopt uses it" rmmod lruopt_events
	assert_eq "late companion: lruopt holds one reference" 1 "$(cat /sys/module/lruopt_events/refcnt)"
	check "order lruopt, then lruopt_events: unload lruopt" unload_lruopt
	assert_eq "the reference went with lruopt" 0 "$(cat /sys/module/lruopt_events/refcnt)"
	check "order lruopt, then lruopt_events: rmmod lruopt_events" rmmod lruopt_events
	nothing_left "lruopt, then lruopt_events"

	# A companion of another build (its trace ABI string replaced), and
	# one shaped as 0.3.0's, as an upgrade may leave it loaded (another
	# trace ABI and no ops table: named as another build, not taken for
	# none).  Each after lruopt (ignored) and before it (refused).
	check "setup: a companion of another build" foreign_events /tmp/16-foreign.ko
	other_build_companion /tmp/16-foreign.ko "another build's companion"
	check "setup: a companion shaped as 0.3.0's" old_events /tmp/16-old.ko
	other_build_companion /tmp/16-old.ko "0.3.0's companion"
	rm -f /tmp/16-foreign.ko /tmp/16-old.ko
fi
lruopt_loaded && check "setup: unload lruopt" unload_lruopt

# ---- the usual order (modprobe's): companion first, then lruopt
dmesg_mark "16-trace"
check "setup: load lruopt_events (before 6.3), then lruopt" load_lruopt || exit 1
if [ "$OWNER" = lruopt_events ]; then
	check_not "lruopt_events cannot be removed while lruopt is loaded" rmmod lruopt_events
	assert_eq "lruopt_events: lruopt holds one reference" 1 "$(cat /sys/module/lruopt_events/refcnt)"
	assert_eq "no dmesg line about the trace events (linked at load)" 0 \
		"$(dmesg_since_mark | grep -c 'lruopt: trace events')"
fi
assert_eq "no 'bad taint' complaint at load (6.1: a livepatch's own events would draw one)" 0 \
	"$(dmesg_since_mark | grep -c 'bad taint')"

for e in drain munlock_batch lazyfree; do
	check "events/lruopt/$e exists" test -d "$I/events/lruopt/$e"
done
# The fields, in order, the same on every kernel.
fields() { sed -n 's/^[[:space:]]*field:[^;]* \([a-z_]*\);.*/\1/p' "$I/events/lruopt/$1/format" | grep -v '^common_' | tr '\n' ' '; }
assert_eq "lruopt:drain fields" \
	"caller wait_ns queued skipped deferred remote timed_out nowait result hint inline_drain force_all_cpus " "$(fields drain)"
assert_eq "lruopt:munlock_batch fields" "folios locks mlock " "$(fields munlock_batch)"
assert_eq "lruopt:lazyfree fields" "start end reason freed kept " "$(fields lazyfree)"

# ---- munlock_batch against the counters
echo 1 >"$I/events/lruopt/munlock_batch/enable"
echo 0 >"$LO/munlock/stats/reset"
: >"$I/trace"
mlockhold 8 1 >/tmp/16-mlockhold.out 2>&1
check "mlockhold 8 MiB ran" grep -q unlocked /tmp/16-mlockhold.out
echo 0 >"$I/events/lruopt/munlock_batch/enable"
grep 'munlock_batch:' "$I/trace" >/tmp/16-mb.txt
ev=$(grep -c . /tmp/16-mb.txt)
folios=$(sed -n 's/.*folios=\([0-9]*\).*/\1/p' /tmp/16-mb.txt | awk '{ s += $1 } END { print s + 0 }')
locks=$(sed -n 's/.* locks=\([0-9]*\).*/\1/p' /tmp/16-mb.txt | awk '{ s += $1 } END { print s + 0 }')
nml=$(grep -c 'direction=mlock' /tmp/16-mb.txt)
nmu=$(grep -c 'direction=munlock' /tmp/16-mb.txt)
assert_eq "munlock_batch events = munlock/stats/batches" "$(readval "$LO/munlock/stats/batches")" "$ev"
assert_eq "sum of folios = munlock/stats/pages" "$(readval "$LO/munlock/stats/pages")" "$folios"
assert_eq "sum of locks = munlock/stats/lock_acquisitions" "$(readval "$LO/munlock/stats/lock_acquisitions")" "$locks"
check "8 MiB = 2048 pages each way: at least 4096 folios" test "$folios" -ge 4096
check "both directions traced ($nml mlock, $nmu munlock)" test "$nml" -gt 0 -a "$nmu" -gt 0

# ---- drain against the counters and two known drains
pin_shell_cpu0
trap drain_cleanup EXIT
K=$(($(ncpus) - 1))
check "drain knobs set to defaults" drain_defaults
echo 0 >"$I/tracing_on"
: >"$I/trace"
echo 1 >"$I/events/lruopt/drain/enable"
dsnap_stable tr0 || fail "counters stable before the traced drains"
echo 1 >"$I/tracing_on"
drain_call -c 0 -w $K -p 8 memfd >/dev/null
check "skip_cpus=$K" dset skip_cpus $K
check "8 pages pending on CPU $K" start_pending $K 8
drain_call -c 0 compact >/dev/null
stop_pending >/dev/null
check "skip_cpus back to empty" dset skip_cpus ""
echo 0 >"$I/tracing_on"
dsnap_stable tr1 || fail "counters stable after the traced drains"
echo 0 >"$I/events/lruopt/drain/enable"
grep ' drain: ' "$I/trace" >/tmp/16-drain.txt
diag "$(cat /tmp/16-drain.txt)"
# ev FIELD: the values of FIELD= over the events, one per line
ev() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" /tmp/16-drain.txt; }
evsum() { ev "$1" | awk '{ s += $1 } END { print s + 0 }'; }
assert_eq "one drain event per call that reached lruopt (calls - stock)" \
	"$(($(sd tr0 tr1 calls) - $(sd tr0 tr1 stock)))" "$(grep -c . /tmp/16-drain.txt)"
assert_eq "sum of queued = cpus_queued + cpus_shared" \
	"$(($(sd tr0 tr1 cpus_queued) + $(sd tr0 tr1 cpus_shared)))" "$(evsum queued)"
assert_eq "sum of deferred = deferred, of skipped = skipped_cpus" \
	"$(sd tr0 tr1 deferred) $(sd tr0 tr1 skipped_cpus)" "$(evsum deferred) $(evsum skipped)"
assert_eq "result=full events = full_drains, result=partial = partial_drains" \
	"$(sd tr0 tr1 full_drains) $(sd tr0 tr1 partial_drains)" \
	"$(ev result | grep -cx full) $(ev result | grep -cx partial)"
seal=$(grep 'caller=memfd_' /tmp/16-drain.txt | tail -n 1)
case $seal in
*" class=strict "*" result=full"*) pass "the memfd seal's event: class=strict, result=full" ;;
*) fail "the memfd seal's event: class=strict, result=full" "event: '$seal'" ;;
esac
q=$(echo "$seal" | sed -n 's/.* queued=\([0-9]*\).*/\1/p')
check "the memfd seal queued work (its writer's CPU $K had the pages): queued=$q" test "${q:-0}" -ge 1
hint=$(grep -E 'caller=(compact_nodes|sysctl_compaction_handler|compact_store)' /tmp/16-drain.txt | tail -n 1)
case $hint in
*" class=hint "*" skipped=1 deferred=1 "*" result=partial"*) pass "the compaction's event: class=hint, skipped=1 deferred=1, result=partial" ;;
*) fail "the compaction's event: class=hint, skipped=1 deferred=1, result=partial" "event: '$hint'" ;;
esac
assert_eq "lru_add_drain_all()'s events: force_all_cpus=0 on every one" \
	"$(grep -c . /tmp/16-drain.txt)" "$(ev force_all_cpus | grep -cx 0)"

# ---- RT: lru_cache_disable()'s drain (move_pages) is force_all_cpus=1
if is_rt && awk '$1 == "lru_cache_disable" { n++ } END { exit !n }' "$LO/targets"; then
	# remote drains (the RT default; drain_defaults above turned them off
	# for the queued-work checks) are what takes lruopt's path
	check "drain/remote=1" dset remote 1
	: >"$I/trace"
	echo 1 >"$I/events/lruopt/drain/enable"
	echo 1 >"$I/tracing_on"
	check "move_pages(2) runs" drain_call -c 0 movepages
	echo 0 >"$I/tracing_on"
	echo 0 >"$I/events/lruopt/drain/enable"
	grep ' drain: ' "$I/trace" >/tmp/16-drain.txt
	check "move_pages: a drain event with force_all_cpus=1, class=strict" \
		grep -q ' class=strict .* force_all_cpus=1$' /tmp/16-drain.txt
else
	skip "lru_cache_disable()'s event (force_all_cpus=1)" "replaced on PREEMPT_RT only"
fi

# ---- unload with the events enabled
echo 1 >"$I/events/lruopt/munlock_batch/enable"
echo 1 >"$I/events/lruopt/drain/enable"
check "unload with the events enabled" unload_lruopt
if [ "$OWNER" = lruopt_events ]; then
	check "the events stay with lruopt_events" test -d "$I/events/lruopt/drain"
	: >"$I/trace"
	echo 1 >/proc/sys/vm/compact_memory
	mlockhold 1 1 >/dev/null 2>&1
	assert_eq "and fire no more (a compaction and an mlock later)" 0 "$(grep -c 'drain:\|munlock_batch:' "$I/trace")"
	echo 0 >"$I/events/lruopt/munlock_batch/enable"
	echo 0 >"$I/events/lruopt/drain/enable"
	check "rmmod lruopt_events once lruopt is gone" rmmod lruopt_events
fi
nothing_left "after the unload with the events enabled"
rmdir "$I"
check_dmesg_clean "no kernel warnings"
