#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 10-alone: the boot in which only lruopt.ko exists (this suite's image has
# no lruopt_events.ko, tests/vm/mkinitramfs --no-events), as after a user's
# plain "insmod lruopt.ko" on any kernel:
#  - it loads with its defaults and its transition completes, and patches
#    the functions it patches with the companion (targets); lruopt_events
#    is not loaded;
#  - the trace events: 6.12 (lruopt.ko owns them, modinfo trace_events)
#    has events/lruopt/drain and no dmesg line about them; 6.1 has none
#    and one dmesg line saying that lruopt_events.ko brings them;
#  - the features with trace calls run without the companion: a compaction's
#    drain reaches lruopt (drain/stats/calls), a 1 MiB mlock + munlock goes
#    through the batched walk (munlock/stats/batches) and leaves Mlocked at
#    0, a MADV_FREE without pressure is counted (lazyfree/stats/lazy).
#    The others (memcg, quiet) fire no events; quiet is this suite's
#    66-quiet, with lruopt.ko alone as well.
#  - it unloads and leaves no module, livepatch, sysfs tree or events
#    behind.
. /tests/lib.sh
dmesg_mark "10-alone"
ensure_unloaded || exit 1
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null

check_not "the image has no lruopt_events.ko" test -f "$EVKO"
check "insmod lruopt.ko alone: loads, transition completes" load_lruopt_alone || exit 1
check_not "lruopt_events is not loaded" events_loaded
assert_eq "it patches what it patches with the companion ($(kernel_short))" \
	"$(expected_targets)" "$(readval "$LO/targets")"
n=$(dmesg_since_mark | grep -c 'lruopt: trace events')
if [ "$(events_owner)" = lruopt ]; then
	check "events/lruopt/drain exists (lruopt.ko owns the events)" test -d "$T/events/lruopt/drain"
	assert_eq "no dmesg line about trace events" 0 "$n"
else
	check_not "no events/lruopt without the companion" test -d "$T/events/lruopt"
	assert_eq "one dmesg line says lruopt_events.ko brings the events" 1 \
		"$(dmesg_since_mark | grep -c 'lruopt: trace events: off until lruopt_events.ko is loaded (before 6.3 a livepatch module cannot own trace events; modprobe lruopt loads both)')"
fi

c0=$(readval "$LO/drain/stats/calls")
echo 1 >/proc/sys/vm/compact_memory
check "drain: a compaction's drain reached lruopt" test "$(readval "$LO/drain/stats/calls")" -gt "$c0"
b0=$(readval "$LO/munlock/stats/batches")
ml0=$(meminfo Mlocked)
out=$(mlockhold 1 1 2>&1)
check "munlock: a 1 MiB mlock + munlock ran ($out)" sh -c "echo '$out' | grep -q unlocked"
check "munlock: it went through the batched walk" test "$(readval "$LO/munlock/stats/batches")" -gt "$b0"
# (nothing else in this boot mlocks: back to 0 once the per-CPU mlock
# batches are drained, which RT leaves pending)
check "munlock: Mlocked back to 0 (was $ml0 kB before)" wait_mlocked_zero 10
if [ -d "$LO/lazyfree" ] && [ "$(readval "$LO/lazyfree/enabled")" = 1 ]; then
	echo 0 >"$LO/lazyfree/wmark_pct"
	l0=$(readval "$LO/lazyfree/stats/lazy")
	lazyfree_exact range 4 free >/dev/null 2>&1
	assert_eq "lazyfree: a MADV_FREE without pressure counted lazy" $((l0 + 1)) \
		"$(readval "$LO/lazyfree/stats/lazy")"
else
	skip "lazyfree: a MADV_FREE without pressure counted lazy" "lazyfree is not in the patch on this kernel"
fi
check "unload" unload_lruopt
check_not "nothing left: lruopt" lruopt_loaded
check_not "nothing left: livepatch" test -d "$LP"
check_not "nothing left: $LO" test -d "$LO"
check_not "nothing left: no lruopt events" test -d "$T/events/lruopt"
check_not "nothing left: lruopt_events never loaded" test -d /sys/module/lruopt_events
check_dmesg_clean "no kernel warnings"
