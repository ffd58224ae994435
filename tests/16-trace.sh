#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 16-trace: the lruopt:* tracepoints, owned by the companion module
# lruopt_events.ko (lruopt_events.c), the same on 6.1 and 6.12.
#  - Load order: lruopt.ko without the companion is refused cleanly (its
#    unknown tracepoint symbols named in dmesg, nothing left loaded), and so
#    is it next to a companion of another build (another trace ABI: EINVAL,
#    one dmesg line); with the right one, the companion is in use and
#    cannot be removed while lruopt.ko is
#    loaded; on 6.1 neither module draws the tracing core's "bad taint"
#    complaint (the livepatch has no events of its own).
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
#  - lruopt.ko unloads with the events enabled; the events stay with the
#    companion (and fire no more), and go when it is removed.
# lruopt-timeout: 600
. /tests/lib.sh
. /tests/lib-drain.sh
dmesg_mark "16-trace"
ensure_unloaded || exit 1
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null

# ---- load order
check "setup: lruopt_events unloaded" rmmod lruopt_events
check_not "lruopt.ko without lruopt_events: refused" insmod "$KO"
check_not "refused load: lruopt is not loaded" lruopt_loaded
check_not "refused load: no livepatch left" test -d "$LP"
check "refused load: dmesg names a missing tracepoint symbol" \
	sh -c "dmesg | tail -n 40 | grep -q 'lruopt: Unknown symbol __\(tracepoint\|SC[KT]__tp_func\|traceiter\)_'"
# An lruopt_events.ko of another build: its trace ABI string replaced
abi=$(trace_abi)
check "lruopt.ko names its trace ABI (modinfo trace_abi): '$abi'" test ${#abi} -eq 16
check "setup: a companion of another build" foreign_events /tmp/16-foreign.ko
check "setup: insmod it" insmod /tmp/16-foreign.ko
check_not "lruopt.ko next to another build's companion: refused" insmod "$KO"
check_not "refused load: lruopt is not loaded" lruopt_loaded
check "refused load: one dmesg line says why" \
	sh -c "dmesg | tail -n 20 | grep -q 'lruopt: refusing to load: lruopt_events is of another build (trace ABI $FOREIGN_ABI, this module.s $abi)'"
check "setup: rmmod the other build's companion" rmmod lruopt_events
rm -f /tmp/16-foreign.ko
check "setup: load lruopt_events, then lruopt" load_lruopt || exit 1
check_not "lruopt_events cannot be removed while lruopt is loaded" rmmod lruopt_events
check "lruopt_events: used by lruopt (/sys/module/lruopt_events/holders/lruopt)" \
	test -e /sys/module/lruopt_events/holders/lruopt
assert_eq "no 'bad taint' complaint at load (6.1: a livepatch's own events would draw one)" 0 \
	"$(dmesg_since_mark | grep -c 'bad taint')"

I=$T/instances/lruopt-16
rmdir "$I" 2>/dev/null
check "setup: a private tracing instance" mkdir "$I" || exit 1
for e in drain munlock_batch lazyfree; do
	check "events/lruopt/$e exists" test -d "$I/events/lruopt/$e"
done
# The fields, in order, the same on every kernel.
fields() { sed -n 's/^[[:space:]]*field:[^;]* \([a-z_]*\);.*/\1/p' "$I/events/lruopt/$1/format" | grep -v '^common_' | tr '\n' ' '; }
assert_eq "lruopt:drain fields" \
	"caller wait_ns queued skipped deferred remote timed_out result hint inline_drain force_all_cpus " "$(fields drain)"
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
check "the events stay with lruopt_events" test -d "$I/events/lruopt/drain"
: >"$I/trace"
echo 1 >/proc/sys/vm/compact_memory
mlockhold 1 1 >/dev/null 2>&1
assert_eq "and fire no more (a compaction and an mlock later)" 0 "$(grep -c 'drain:\|munlock_batch:' "$I/trace")"
echo 0 >"$I/events/lruopt/munlock_batch/enable"
echo 0 >"$I/events/lruopt/drain/enable"
check "rmmod lruopt_events once lruopt is gone" rmmod lruopt_events
check_not "the events went with lruopt_events" test -d "$I/events/lruopt"
rmdir "$I"
check_dmesg_clean "no kernel warnings"
