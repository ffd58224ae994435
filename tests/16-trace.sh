#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 16-trace: the lruopt:* tracepoints (lruopt_trace.h).
#  - 6.12: events/lruopt/{drain,munlock_batch} exist while the module is
#    loaded; a known mlock + munlock of 8 MiB gives munlock_batch events whose
#    count and folio sum equal munlock/stats/batches and pages, in both
#    directions; the module unloads with the events enabled, and the events
#    go with it.  (lruopt:drain is defined but not fired yet.)
#  - 6.1: the kernel refuses trace events in livepatch modules (before
#    v6.3): lruopt has none there, and loading it must not log the tracing
#    core's "bad taint" complaint.
# lruopt-timeout: 600
. /tests/lib.sh
dmesg_mark "16-trace"
ensure_unloaded || exit 1
check "setup: load lruopt" load_lruopt || exit 1

T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null

if [ "$(kernel_short)" = 6.1 ]; then
	check_not "6.1: no lruopt trace events" test -d "$T/events/lruopt"
	assert_eq "6.1: no 'bad taint' complaint at load" 0 \
		"$(dmesg_since_mark | grep -c 'bad taint')"
	pass "lruopt:* events # SKIP not on 6.1: TAINT_LIVEPATCH is a bad taint for trace events before v6.3"
	check "unload" unload_lruopt
	check_dmesg_clean "no kernel warnings"
	exit 0
fi

I=$T/instances/lruopt-16
rmdir "$I" 2>/dev/null
check "setup: a private tracing instance" mkdir "$I" || exit 1
for e in drain munlock_batch; do
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

# ---- unload with the events enabled
echo 1 >"$I/events/lruopt/munlock_batch/enable"
echo 1 >"$I/events/lruopt/drain/enable"
check "unload with the events enabled" unload_lruopt
check_not "the events went with the module" test -d "$I/events/lruopt"
rmdir "$I"
check_dmesg_clean "no kernel warnings"
