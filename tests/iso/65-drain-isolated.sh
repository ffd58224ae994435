#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 65-drain-isolated: drain/skip_isolated.  Runs in its own boot with
# "isolcpus=3 nohz_full=3" (tests/vm/mkinitramfs --tests tests/iso, vmrun
# --append "isolcpus=3 nohz_full=3").  With skip_isolated=1 hint drains
# leave the isolated CPU 3 alone (skipped_cpus and deferred grow, partial
# drains, no work queued there); with 0 they do (full drains that waited for
# CPU 3's drain work); strict callers wait either way.  Deterministic with a
# sleeping helper holding 8 pending pages on CPU 3, then with CPU 3 hogged
# by a SCHED_FIFO task spinning over 8 batched pages.  A long-term GUP pin
# (io_uring fixed buffers of pages in ZONE_MOVABLE: the boot has
# movablecore=50%) is a strict caller: it drains CPU 3 whatever
# skip_isolated says.  On PREEMPT_RT also with drain/remote=1: hint and
# strict drains (compaction; memfd seal, long-term pin, move_pages'
# lru_cache_disable()) leave no work on CPU 3; the strict ones drain its
# pages onto the LRU from CPU 0, the hint one takes none of its locks.
# skip_isolated defaults to 1.  Loaded with patch_quiet=0, so that CPU 3
# can hold pages at all (66-quiet: with the defaults it cannot).
# lruopt-timeout: 300
. /tests/lib.sh
. /tests/lib-drain.sh
dmesg_mark "65-drain-isolated"
ISO=3
iso=$(cat /sys/devices/system/cpu/isolated 2>/dev/null)
if ! assert_eq "booted with isolcpus=$ISO (/sys/devices/system/cpu/isolated)" "$ISO" "$iso"; then
	diag "cmdline: $(cat /tmp/cmdline)"
	exit 1
fi
assert_eq "CPU $ISO is nohz_full" "$ISO" "$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null)"
movable=$(awk '$1 == "Node" && $4 == "Movable" { z = 1; next }
	z && $1 == "present" { print $2; exit }' /proc/zoneinfo)
check "booted with a ZONE_MOVABLE (movablecore=50%: ${movable:-no} pages present)" \
	test "${movable:-0}" -gt 0
# patch_quiet=0: what the drain does when a quiet CPU has something
# batched (66-quiet loads with the defaults, under which it never has).
lruopt_loaded && unload_lruopt >/dev/null
check "setup: load lruopt.ko patch_quiet=0" load_lruopt patch_quiet=0 || exit 1
# no other parameter: booting with isolcpus/nohz_full is the request
assert_eq "skip_isolated is 1 by default (module parameter, sysfs)" "1 1" \
	"$(cat /sys/module/lruopt/parameters/drain_skip_isolated) $(cat /sys/kernel/lruopt/drain/skip_isolated)"
pin_shell_cpu0
trap drain_cleanup EXIT
check "drain knobs set to defaults" drain_defaults
echo 950000 >/proc/sys/kernel/sched_rt_runtime_us
dsnap_stable all0 || fail "counters stable at start"

traced_compact() {	# LABEL: one compact drain, CPU ISO pending, traced
	dtrace_start || return 1
	start_pending $ISO 8 || return 1
	dsnap "$1.0"
	drain_call -c 0 -m -l "$1" compact >/dev/null || return 1
	dsnap "$1.1"
	dtrace_stop "/tmp/trace-$1.txt" || return 1
	stop_pending
}

# ---- 1. sleeping helper with 8 pending pages on CPU 3
check "skip_isolated=1" dset skip_isolated 1
check "skip_isolated=1: compact drain, CPU $ISO pending" traced_compact i1
diag "$(show_snap_delta i1.0 i1.1)"
assert_eq "skip_isolated=1: CPU $ISO skipped (row skipped +1, skipped_cpus +1)" "1 1" \
	"$(crd i1.0 i1.1 "$RX_COMPACT" skipped) $(sd i1.0 i1.1 skipped_cpus)"
assert_eq "skip_isolated=1: a partial drain" "1 0" "$(sd i1.0 i1.1 partial_drains) $(sd i1.0 i1.1 full_drains)"
assert_eq "skip_isolated=1: CPU $ISO deferred, its pages left batched (row deferred +1, deferred +1)" "1 1" \
	"$(crd i1.0 i1.1 "$RX_COMPACT" deferred) $(sd i1.0 i1.1 deferred)"
assert_eq "skip_isolated=1: no drain work queued on or run by CPU $ISO (whole trace)" "0 0" \
	"$(tcount /tmp/trace-i1.txt - 1 queue drain_workfn $ISO) $(tcount /tmp/trace-i1.txt - 1 exec drain_workfn $ISO)"

check "skip_isolated=0" dset skip_isolated 0
check "skip_isolated=0: compact drain, CPU $ISO pending" traced_compact i0
diag "$(show_snap_delta i0.0 i0.1)"
assert_eq "skip_isolated=0: CPU $ISO not skipped, a full drain" "0 1 0" \
	"$(sd i0.0 i0.1 skipped_cpus) $(sd i0.0 i0.1 full_drains) $(sd i0.0 i0.1 partial_drains)"
n=$(tcount /tmp/trace-i0.txt i0 1 exec drain_workfn $ISO)
if ! check "skip_isolated=0: the drain waited for CPU $ISO's drain work ($n)" test "$n" -ge 1; then
	diag "$(twindow /tmp/trace-i0.txt i0 1)"
fi

# ---- 2. CPU 3 hogged: an RT task spinning over 8 batched pages there
# (hog_hint_round: the round counts only with the pages seen batched before
# and after it).
check "skip_isolated=1" dset skip_isolated 1
hog_hint_round $ISO 8 h1
assert_eq "the hog's 8 pages stayed batched on CPU $ISO through the 8 hint drains (on an LRU before, after)" "0 0" "$HOG_LRU"
drain_call -c 0 -n 2 -w 1 memfd >/dev/null
r=$?
dsnap h1.2
lru_strict=$(pend_lru)
check "RT hog stopped" stop_pending
check "trace stopped" dtrace_stop /dev/null
check "skip_isolated=0" dset skip_isolated 0
check "RT hog spinning over 8 batched pages on isolated CPU $ISO again" start_pending_hog $ISO 8 300
dsnap h0.0
drain_call -c 0 -n 2 -i 50000 compact >/dev/null
dsnap h0.1
lru0=$(pend_lru)
check "RT hog stopped" stop_pending
diag "skip 1: $(show_snap_delta h1.0 h1.1)" "strict: $(show_snap_delta h1.1 h1.2)" "skip 0: $(show_snap_delta h0.0 h0.1)"
assert_eq "hogged isolated CPU with skip_isolated=1: skipped by each of 8 hint drains, each partial (compaction row: calls skipped partial_drains)" "8 8 8" \
	"$(crd h1.0 h1.1 "$RX_COMPACT" calls) $(crd h1.0 h1.1 "$RX_COMPACT" skipped) $(crd h1.0 h1.1 "$RX_COMPACT" partial_drains)"
assert_eq "memfd seals succeeded" 0 "$r"
assert_eq "strict memfd seals with skip_isolated=1: row skipped +0, 2 full drains" "2 0 2" \
	"$(crd h1.1 h1.2 "$RX_MEMFD" calls) $(crd h1.1 h1.2 "$RX_MEMFD" skipped) $(sd h1.1 h1.2 full_drains)"
assert_eq "strict memfd seals drained the hog's 8 pages on CPU $ISO" 8 "$lru_strict"
assert_eq "skip_isolated=0 under the hog: nothing skipped, 2 full drains" "0 2" \
	"$(sd h0.0 h0.1 skipped_cpus) $(sd h0.0 h0.1 full_drains)"
assert_eq "skip_isolated=0: the hint drain took the hog's 8 pages off CPU $ISO (waited for its work)" 8 "$lru0"

# ---- 3. a long-term pin is strict: skip_isolated=1 does not spare CPU 3
# (drain/remote is 0 here, on RT too: by queued work)
RX_PIN='^(collect_longterm_unpinnable|check_and_migrate_movable|migrate_longterm_unpinnable|__gup_longterm_locked)'
traced_pin() {	# LABEL: one long-term pin of 4 pages batched on CPU 1, CPU ISO pending
	dtrace_start || return 1
	start_pending $ISO 8 || return 1
	dsnap "$1.0"
	drain_call -c 0 -m -l "$1" -w 1 -p 4 pin >/dev/null || return 1
	dsnap "$1.1"
	dtrace_stop "/tmp/trace-$1.txt" || return 1
	ISO_LRU=$(pend_lru)
	stop_pending
}
check "skip_isolated=1" dset skip_isolated 1
check "long-term pin of 4 batched ZONE_MOVABLE pages, CPU $ISO pending" traced_pin p1
diag "$(show_snap_delta p1.0 p1.1)" "$(crows p1.1 "$RX_PIN")"
assert_eq "pin: one strict full drain in the pinning row (calls full class)" "1 1 strict" \
	"$(crd p1.0 p1.1 "$RX_PIN" calls) $(crd p1.0 p1.1 "$RX_PIN" full_drains) $(cclass p1.1 "$RX_PIN")"
assert_eq "pin: the isolated CPU was not skipped (skipped_cpus deferred)" "0 0" \
	"$(sd p1.0 p1.1 skipped_cpus) $(sd p1.0 p1.1 deferred)"
assert_eq "pin: CPU $ISO's 8 pages drained onto the LRU" 8 "$ISO_LRU"
n=$(tworks /tmp/trace-p1.txt p1 1 $ISO)
check "pin: CPU $ISO drained by its drain work (drain/remote=0; $n)" test "$n" -ge 1

# ---- 4. PREEMPT_RT, drain/remote=1: the isolated CPU is drained from
# CPU 0 under its own locks, by hint and strict callers alike: no drain
# work runs there at all, and its pages are on the LRU afterwards.
rt_iso() {	# LABEL MODE: one traced call with CPU ISO pending
	pending_call $ISO "$1" "$2" || return 1
	ISO_LRU=$PEND_LRU_AFTER
}
if is_rt; then
	check "remote=1, skip_isolated=1" sh -c "echo 1 >$D/remote && echo 1 >$D/skip_isolated"
	for m in compact memfd pin movepages; do
		check "remote=1: $m drain, CPU $ISO pending" rt_iso r$m $m
		diag "$(show_snap_delta r$m.0 r$m.1)"
		assert_eq "remote=1 $m: no drain work queued on or run by CPU $ISO (whole trace)" "0 0" \
			"$(tworks /tmp/trace-r$m.txt - 1 $ISO queue) $(tworks /tmp/trace-r$m.txt - 1 $ISO)"
		if [ $m = compact ]; then
			# a hint caller takes no lock of a quiet CPU either
			assert_eq "remote=1 compact: CPU $ISO deferred and left alone: not drained remotely either, its 8 pages still batched (deferred lru)" "1 0" \
				"$(sd r$m.0 r$m.1 deferred) $ISO_LRU"
			continue
		fi
		assert_eq "remote=1 $m: CPU $ISO's 8 pages drained onto the LRU" 8 "$ISO_LRU"
		assert_eq "remote=1 $m: a full drain, nothing deferred (full deferred)" "1 0" \
			"$(sd r$m.0 r$m.1 full_drains) $(sd r$m.0 r$m.1 deferred)"
	done
else
	skip "remote drains of the isolated CPU" "PREEMPT_RT only"
fi

check "knobs back to defaults" drain_defaults
dsnap_stable all1 || fail "counters stable at end"
check "counter invariants hold over 65-drain-isolated" stats_consistent all0 all1
check_dmesg_clean "no kernel warnings during 65-drain-isolated"
