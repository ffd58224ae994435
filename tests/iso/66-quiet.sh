#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 66-quiet: quiet CPUs keep nothing batched (lruopt_quiet.c), in the
# isolcpus=3 nohz_full=3 boot, with the module's defaults (on PREEMPT_RT,
# where auto leaves the adders out, with patch_quiet=1 after checking that).
#  1. patch_quiet=auto put the adders in (dmesg, targets); quiet/cpus is 3.
#  2. Pages a task faults on CPU 3 are on an LRU at once (/proc/kpageflags
#     through lrubits), counted in quiet/stats/moved_at_once.
#  3. Every trigger, called from CPU 0 while a task on CPU 3 has just
#     faulted 8 pages (compaction, MADV_COLLAPSE where THP exists, fadvise,
#     memfd seal with its writer on CPU 1, io_uring long-term pin,
#     move_pages' lru_cache_disable()): no drain work queued on or run by
#     CPU 3 (workqueue trace).  The same calls on stock (module unloaded, the
#     end of the test): at least one drain work on CPU 3 each.
#  4. quiet/enabled 0 -> 1 while CPU 3 holds 8 batched pages drains it once
#     (quiet/stats/drains +1, the pages on the LRU); a skip_cpus write adds
#     CPU 2 to quiet/cpus and CPU 2's new pages are on the LRU at once.
# lruopt-timeout: 400
. /tests/lib.sh
. /tests/lib-drain.sh
dmesg_mark "66-quiet"
ISO=3
Q=$LO/quiet
[ "$(cat /sys/devices/system/cpu/isolated 2>/dev/null)" = $ISO ] ||
	{ fail "booted with isolcpus=$ISO" "$(cat /tmp/cmdline)"; exit 1; }
lruopt_loaded && unload_lruopt >/dev/null
check "setup: load lruopt.ko with its defaults" load_lruopt || exit 1

# ---- 1. the decision: in, except on PREEMPT_RT (remote drains)
if is_rt; then
	check "dmesg: PREEMPT_RT, quiet left out of the patch (patch_quiet=auto)" \
		sh -c "dmesg | grep -q 'quiet: left out of the patch (patch_quiet=auto): PREEMPT_RT'"
	assert_eq "PREEMPT_RT defaults: quiet/supported 0, no quiet target" "0 0" \
		"$(cat $Q/supported) $(awk '$2 == "quiet"' "$LO/targets" | grep -c .)"
	check "unload" unload_lruopt
	check "setup: load lruopt.ko patch_quiet=1 (the rest on RT)" load_lruopt patch_quiet=1 || exit 1
else
	check "dmesg: quiet in the patch (patch_quiet=auto, quiet CPUs at load)" \
		sh -c "dmesg | grep -q 'quiet: in the patch (patch_quiet=auto): there are quiet CPUs at load'"
fi
pin_shell_cpu0
trap 'drain_cleanup; echo 1 >$Q/enabled 2>/dev/null' EXIT
check "drain knobs set to defaults" drain_defaults
assert_eq "the adders are targets of quiet" "$(quiet_targets | sort | tr '\n' ' ')" \
	"$(awk '$2 == "quiet" { print $1 }' "$LO/targets" | sort | tr '\n' ' ')"
assert_eq "quiet/enabled and quiet/cpus" "1 $ISO" "$(cat $Q/enabled) $(cat $Q/cpus)"

# ---- 2. faults on the quiet CPU go to the LRU at once
m0=$(cat $Q/stats/moved_at_once)
check "8 pages faulted on CPU $ISO" start_pending $ISO 8
assert_eq "CPU $ISO's 8 new pages are on an LRU at once (kpageflags)" 8 "$(pend_lru)"
stop_pending
m1=$(cat $Q/stats/moved_at_once)
check "moved_at_once grew by at least 8 ($m0 -> $m1)" test $((m1 - m0)) -ge 8

# ---- 3. the triggers
check "ext4 (ext2 layout) on brd for fadvise" drain_fs_setup
TRIGGERS="compact $COLLAPSE fadvise memfd pin movepages"
[ "$COLLAPSE" = compact ] && TRIGGERS="compact fadvise memfd pin movepages"
# trig LABEL MODE: one traced call from CPU 0 right after CPU ISO faulted
# 8 pages.  Sets ISO_WORKS (drain works queued on or run by CPU ISO).
trig() {
	pending_call $ISO "$1" "$2" || return 1
	ISO_WORKS=$PEND_WORKS
}
for m in $TRIGGERS; do
	check "lruopt: $m from CPU 0" trig q$m $m
	assert_eq "lruopt: $m put no drain work on CPU $ISO" 0 "$ISO_WORKS"
done

# ---- 4. becoming quiet
check "quiet/enabled=0" wset $Q/enabled 0
assert_eq "quiet/cpus is empty while disabled" "" "$(cat $Q/cpus)"
check "8 pages faulted on CPU $ISO" start_pending $ISO 8
assert_eq "disabled: CPU $ISO batches again (0 of 8 on an LRU)" 0 "$(pend_lru)"
d0=$(cat $Q/stats/drains)
check "quiet/enabled=1" wset $Q/enabled 1
# the drain is queued, not waited for: poll until CPU 3's work ran (a
# liveness limit; the assertion below is on the counts)
all_on_lru() { [ "$(pend_lru)" = 8 ]; }
wait_for 120 "CPU $ISO's 8 pages on the LRU" all_on_lru >/dev/null
assert_eq "enabling drained CPU $ISO once: its 8 pages on the LRU (drains +1)" "8 1" \
	"$(pend_lru) $(($(cat $Q/stats/drains) - d0))"
stop_pending
check "skip_cpus=2" dset skip_cpus 2
assert_eq "quiet/cpus follows skip_cpus" "2-3" "$(cat $Q/cpus)"
check "8 pages faulted on CPU 2" start_pending 2 8
assert_eq "CPU 2's 8 new pages are on an LRU at once" 8 "$(pend_lru)"
stop_pending
check "skip_cpus back to empty" dset skip_cpus ""
assert_eq "quiet/cpus back to $ISO" "$ISO" "$(cat $Q/cpus)"
check_dmesg_clean "no kernel warnings during 66-quiet"

# ---- 3, stock: the same calls without the module
check "unload lruopt for the stock runs" unload_lruopt
for m in $TRIGGERS; do
	check "stock: $m from CPU 0" trig s$m $m
	check "stock: $m put drain work on CPU $ISO ($ISO_WORKS)" test "$ISO_WORKS" -ge 1
done
check "load lruopt again (defaults)" load_lruopt
