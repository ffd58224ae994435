#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 16-trace: the lruopt:* tracepoints (lruopt_trace.h).
#  - 6.12: events/lruopt/{drain,munlock_batch,lazyfree} exist while the module is
#    loaded; a known mlock + munlock of 8 MiB gives munlock_batch events whose
#    count and folio sum equal munlock/stats/batches and pages, in both
#    directions; the module unloads with the events enabled, and the events
#    go with it.  A strict memfd seal with pages pending on the last CPU and
#    a hint compaction with that CPU in skip_cpus give lruopt:drain events
#    with the right class, caller, queued/deferred/skipped and result, and
#    over the whole traced phase the drain events add up to the counters
#    (one event per call that reached lruopt; queued, deferred, full and
#    partial sums equal the stats deltas).
#  - 6.1: the kernel refuses trace events in livepatch modules (before
#    v6.3): lruopt has none there, and loading it must not log the tracing
#    core's "bad taint" complaint.
# lruopt-timeout: 600
. /tests/lib.sh
. /tests/lib-drain.sh
dmesg_mark "16-trace"
ensure_unloaded || exit 1
check "setup: load lruopt" load_lruopt || exit 1

T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null

if [ "$(kernel_short)" = 6.1 ]; then
	check_not "6.1: no lruopt trace events" test -d "$T/events/lruopt"
	assert_eq "6.1: no 'bad taint' complaint at load" 0 \
		"$(dmesg_since_mark | grep -c 'bad taint')"
	skip "lruopt:* events" "not on 6.1: TAINT_LIVEPATCH is a bad taint for trace events before v6.3"
	check "unload" unload_lruopt
	check_dmesg_clean "no kernel warnings"
	exit 0
fi

I=$T/instances/lruopt-16
rmdir "$I" 2>/dev/null
check "setup: a private tracing instance" mkdir "$I" || exit 1
for e in drain munlock_batch lazyfree; do
	check "events/lruopt/$e exists" test -d "$I/events/lruopt/$e"
done

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

# ---- unload with the events enabled
echo 1 >"$I/events/lruopt/munlock_batch/enable"
echo 1 >"$I/events/lruopt/drain/enable"
check "unload with the events enabled" unload_lruopt
check_not "the events went with the module" test -d "$I/events/lruopt"
rmdir "$I"
check_dmesg_clean "no kernel warnings"
