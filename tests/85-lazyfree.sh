#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 85-lazyfree: MADV_FREE freed at once under pressure, stock otherwise.
#  - patch_lazyfree: bad values refused; auto puts the function in only when
#    lazyfree starts enabled (the default; lazyfree_enabled=0 leaves it
#    out); lazyfree_enabled=1 with patch_lazyfree=0 is refused; 1 puts it
#    in whatever the switch says.
#  - under pressure (wmark_pct=100000: no zone can be above 1000x its high
#    watermark) a MADV_FREE call frees the range as MADV_DONTNEED would:
#    returns 0, RssAnon and VmSwap drop as much, every page reads back as
#    zeroes, a write after the call finds a fresh page; reclaim discarded
#    each page (pglazyfreed, the stats' pages_freed_now, the event's freed).
#  - pages held beyond their mapping (an io_uring fixed buffer: a long-term
#    pin; a vmsplice()d pipe: FOLL_GET references) are never separated from
#    it, pressure or not: as with stock, none reads zeroes after the call,
#    each keeps its frame, and the holder sees what the process wrote after
#    the call (pages_kept counts them); the same range not held is freed.
#  - a memory cgroup at its limit is pressure (the zones have room): its
#    MADV_FREE is freed at once (reason memcg); with room, stock.
#  - without pressure (wmark_pct=0 and kswapd idle), switched off, or with
#    the master switch off: stock MADV_FREE (pages kept until reclaim, a
#    write after the call keeps the page, pglazyfree counts them).
#  - which calls fail, and how, is stock's, pressure or not; a range a
#    userfaultfd monitor watches is never freed early.
#  - lruopt:lazyfree events (6.12: lruopt.ko's own; 6.1: lruopt_events.ko,
#    which load_lruopt loads first) match the stats.
#  - unload and reload while processes free and zap in a loop.
# lruopt-timeout: 900
. /tests/lib.sh
dmesg_mark "85-lazyfree"
ensure_unloaded || exit 1
# exact page counts: no compaction moving the pages, no kswapd run on a
# watermark boost (read as pressure), no khugepaged (tests/lib.sh)
quiet_mm
trap restore_mm EXIT

LF=$LO/lazyfree
MIB=16
PAGES=$((MIB * 256))

# kv LINE KEY: the value of KEY=value in LINE
kv() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

lfstat() { readval "$LF/stats/$1"; }
# lfnum NAME: the stat as a number, -1 if it cannot be read (for arithmetic)
lfnum() {
	local v
	v=$(lfstat "$1")
	case $v in
	'' | *[!0-9]*) echo -1 ;;
	*) echo "$v" ;;
	esac
}

# Swap for the swap-entry check: a zram device, where the kernel has one.
SWAP=""
if modprobe zram num_devices=1 2>/dev/null && [ -e /sys/block/zram0 ]; then
	echo 64M >/sys/block/zram0/disksize &&
		mkswap /dev/zram0 >/dev/null 2>&1 && swapon /dev/zram0 && SWAP=swap
fi

# ---- stock references, module not loaded
ref_free=$(lazyfree_exact range $MIB free)
ref_dn=$(lazyfree_exact range $MIB dontneed)
ref_err_free=$(lazyfree_exact errno free)
ref_err_dn=$(lazyfree_exact errno dontneed)
diag "stock: FREE: $ref_free"
diag "stock: DONTNEED: $ref_dn"
assert_eq "stock MADV_FREE keeps every page until reclaim" \
	"ret=0 zero=0 kept=$((PAGES - 1)) survived=1" \
	"ret=$(kv "$ref_free" ret) zero=$(kv "$ref_free" zero) kept=$(kv "$ref_free" kept) survived=$(kv "$ref_free" survived)"
assert_eq "stock MADV_DONTNEED frees every page" \
	"ret=0 zero=$((PAGES - 1)) kept=0 survived=0" \
	"ret=$(kv "$ref_dn" ret) zero=$(kv "$ref_dn" zero) kept=$(kv "$ref_dn" kept) survived=$(kv "$ref_dn" survived)"
# held pages, stock: kept whole (io_uring may be switched off: skipped then)
HELD_ALL="zero=0 same_frame=16 holder_sees_write=16"
HOLDERS=vmsplice
ref_io=$(lazyfree_exact pin iouring 2>&1)
case $ref_io in
*io_uring_setup*)
	skip "io_uring fixed buffers" "io_uring is off here: $ref_io" ;;
*)
	HOLDERS="iouring vmsplice"
	assert_eq "stock: an io_uring fixed buffer keeps every page through MADV_FREE" \
		"$HELD_ALL" "$ref_io" ;;
esac
assert_eq "stock: a vmsplice()d range keeps every page through MADV_FREE" \
	"$HELD_ALL" "$(lazyfree_exact pin vmsplice)"

# ---- patch_lazyfree
nothing_left() {
	! lruopt_loaded && [ ! -e "$LP" ] && [ ! -e "$LO" ]
}
# the parser is patch_memcg's and patch_quiet's too: 6.1 (a refused load
# costs ~3.5 s there, 15-params says why) tries two of the values
bad="" vals='2 -1 on yes "" auto1'
[ "$(kernel_short)" != 6.1 ] || vals='on ""'
eval "set -- $vals"
for v; do
	if finit "$KO" "patch_lazyfree=$v" >/dev/null 2>&1; then
		bad="$bad '$v'"
		unload_lruopt >/dev/null
	fi
done
assert_eq "patch_lazyfree: bad values fail insmod" "" "$bad"
check "patch_lazyfree: nothing left loaded" nothing_left
dmesg_mark "85-lazyfree refused"
if finit "$KO" "patch_lazyfree=0 lazyfree_enabled=1" >/dev/null 2>&1; then
	fail "patch_lazyfree=0 lazyfree_enabled=1 is refused" "insmod succeeded"
	unload_lruopt >/dev/null
else
	check "patch_lazyfree=0 lazyfree_enabled=1 is refused, dmesg says why" \
		sh -c "dmesg | tail -n 20 | grep -q 'lazyfree_enabled=1, but lazyfree is not in the patch'"
fi
if check "insmod patch_lazyfree=1 lazyfree_enabled=0" load_lruopt patch_lazyfree=1 lazyfree_enabled=0; then
	assert_eq "patch_lazyfree=1 lazyfree_enabled=0: supported 1, enabled 0" "1 0" \
		"$(readval "$LF/supported") $(readval "$LF/enabled")"
	check "patch_lazyfree=1: madvise_dontneed_free_valid_vma is a target" \
		grep -qx "madvise_dontneed_free_valid_vma lazyfree" "$LO/targets"
	check "unload after patch_lazyfree=1" unload_lruopt
fi
if check "insmod lazyfree_enabled=0" load_lruopt lazyfree_enabled=0; then
	assert_eq "lazyfree_enabled=0: lazyfree left out of the patch (supported 0, enabled 0)" "0 0" \
		"$(readval "$LF/supported") $(readval "$LF/enabled")"
	check "lazyfree_enabled=0: dmesg says why" sh -c \
		"dmesg | tail -n 20 | grep -q 'lazyfree: left out of the patch (patch_lazyfree=auto): lazyfree starts disabled'"
	check "unload after lazyfree_enabled=0" unload_lruopt
fi
if check "insmod with the defaults" load_lruopt; then
	assert_eq "default: lazyfree in the patch and on (supported 1, enabled 1)" "1 1" \
		"$(readval "$LF/supported") $(readval "$LF/enabled")"
	check "default: dmesg says it is in the patch" sh -c \
		"dmesg | tail -n 20 | grep -q 'lazyfree: in the patch (patch_lazyfree=auto): lazyfree starts enabled'"
	check "unload after the defaults" unload_lruopt
fi

check "insmod lazyfree_enabled=1" load_lruopt lazyfree_enabled=1 || exit 1
assert_eq "lazyfree_enabled=1: supported 1, enabled 1" "1 1" \
	"$(readval "$LF/supported") $(readval "$LF/enabled")"
check "lazyfree_enabled=1: dmesg says it is in the patch" sh -c \
	"dmesg | tail -n 20 | grep -q 'lazyfree: in the patch (patch_lazyfree=auto): lazyfree starts enabled'"

# ---- under pressure: as MADV_DONTNEED
echo 100000 >"$LF/wmark_pct"
echo 0 >"$LF/stats/reset"
conv=$(lazyfree_exact range $MIB free)
dn=$(lazyfree_exact range $MIB dontneed)
diag "pressure: FREE: $conv"
diag "pressure: DONTNEED: $dn"
assert_eq "pressure: MADV_FREE frees every page at once, as MADV_DONTNEED" \
	"ret=0 zero=$((PAGES - 1)) kept=0 survived=0" \
	"ret=$(kv "$conv" ret) zero=$(kv "$conv" zero) kept=$(kv "$conv" kept) survived=$(kv "$conv" survived)"
assert_eq "pressure: reclaim discarded every page (pglazyfreed)" \
	"$PAGES" "$(kv "$conv" lazyfreed)"
# RssAnon is read from per-cpu (6.12) or per-task cached (6.1) counters: equal
# to MADV_DONTNEED's drop within 1 MiB, and most of the range
c=$(kv "$conv" rss_kb) d=$(kv "$dn" rss_kb)
diff=$((c - d)); [ $diff -lt 0 ] && diff=$((-diff))
check "pressure: RssAnon drops as for MADV_DONTNEED ($c kB vs $d kB)" \
	test $diff -le 1024 -a "$c" -ge $((MIB * 1024 * 3 / 4))
assert_eq "pressure: stats calls, freed_now, pages_freed_now, pages_kept, lazy, skipped" \
	"1 1 $PAGES 0 0 0" \
	"$(lfstat calls) $(lfstat freed_now) $(lfstat pages_freed_now) $(lfstat pages_kept) $(lfstat lazy) $(lfstat skipped)"
if [ -n "$SWAP" ]; then
	conv=$(lazyfree_exact range $MIB free swap)
	dn=$(lazyfree_exact range $MIB dontneed swap)
	diag "pressure, half swapped out: FREE: $conv; DONTNEED: $dn"
	# each run against itself: how much MADV_PAGEOUT got out differs
	# between two processes (a page still in a CPU's LRU batch stays)
	check "pressure: the swapped-out half went to swap ($(kv "$conv" swap_kb) kB, $(kv "$dn" swap_kb) kB)" \
		test "$(kv "$conv" swap_kb)" -gt 0 -a "$(kv "$dn" swap_kb)" -gt 0
	assert_eq "pressure: MADV_FREE leaves no swap entry, as MADV_DONTNEED, every page reads zeroes" \
		"swap_left_kb=0 zero=$((PAGES - 1)) / swap_left_kb=0" \
		"swap_left_kb=$(kv "$conv" swap_left_kb) zero=$(kv "$conv" zero) / swap_left_kb=$(kv "$dn" swap_left_kb)"
else
	skip "pressure: MADV_FREE leaves no swap entry" "no zram in this kernel"
fi
assert_eq "pressure: MADV_FREE fails exactly where stock's does" \
	"$ref_err_free" "$(lazyfree_exact errno free)"
assert_eq "pressure: MADV_DONTNEED fails exactly where stock's does" \
	"$ref_err_dn" "$(lazyfree_exact errno dontneed)"
for h in $HOLDERS; do
	k0=$(lfnum pages_kept) f0=$(lfnum pages_freed_now)
	assert_eq "pressure: $h: every held page keeps its frame, and the holder sees the process's write" \
		"$HELD_ALL" "$(lazyfree_exact pin "$h")"
	assert_eq "pressure: $h: pages_kept +16, pages_freed_now +0" "16 0" \
		"$(($(lfnum pages_kept) - k0)) $(($(lfnum pages_freed_now) - f0))"
done
f0=$(lfnum pages_freed_now)
assert_eq "pressure: the same range not held is freed (all 16 read zeroes)" \
	"zero=16" "$(lazyfree_exact pin none | cut -d' ' -f1)"
assert_eq "pressure: ... pages_freed_now +16" 16 "$(($(lfnum pages_freed_now) - f0))"
s0=$(lfstat skipped)
u=$(lazyfree_exact uffd $MIB)
check "pressure: a range under userfaultfd keeps its pages ($u)" \
	test "$(kv "$u" ret)" = 0 -a "$(kv "$u" rss_kb)" -lt 1024
assert_eq "pressure: the userfaultfd call counts as skipped" $((s0 + 1)) "$(lfstat skipped)"

# ---- no pressure, switched off, master off: stock MADV_FREE
# lazy_as_stock TAG [STAT]: a MADV_FREE range keeps its pages as stock's
# does, and STAT (if given) grows by one
lazy_as_stock() {
	local out s0
	s0=$(lfstat "${2:-calls}")
	out=$(lazyfree_exact range $MIB free)
	diag "$1: FREE: $out"
	assert_eq "$1: MADV_FREE keeps every page as stock's does" \
		"ret=0 zero=0 kept=$((PAGES - 1)) survived=1" \
		"ret=$(kv "$out" ret) zero=$(kv "$out" zero) kept=$(kv "$out" kept) survived=$(kv "$out" survived)"
	check "$1: pglazyfree counted the range ($(kv "$out" lazyfree))" \
		test "$(kv "$out" lazyfree)" -ge $((PAGES - 64))
	[ -z "$2" ] || assert_eq "$1: stats/$2 +1" $((s0 + 1)) "$(lfstat "$2")"
}
echo 0 >"$LF/wmark_pct"
lazy_as_stock "no pressure (wmark_pct=0)" lazy
assert_eq "no pressure: MADV_FREE fails exactly where stock's does" \
	"$ref_err_free" "$(lazyfree_exact errno free)"
echo 100000 >"$LF/wmark_pct"
echo 0 >"$LF/enabled"
c0=$(lfstat calls)
lazy_as_stock "lazyfree/enabled=0" stock
assert_eq "lazyfree/enabled=0: no call reached lruopt's path" "$c0" "$(lfstat calls)"
echo 1 >"$LF/enabled"
echo 0 >"$LO/enabled"
lazy_as_stock "master switch 0" stock
echo 1 >"$LO/enabled"

# ---- lruopt:lazyfree (on every kernel: lruopt.ko's, or 6.1's companion's)
EV=/sys/kernel/tracing/events/lruopt/lazyfree
[ -d /sys/kernel/tracing/events ] || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
if check "events/lruopt/lazyfree exists" test -d "$EV"; then
	T=/sys/kernel/tracing
	echo 0 >"$T/tracing_on"; echo >"$T/trace"
	echo 1 >"$EV/enable"; echo 1 >"$T/tracing_on"
	f0=$(lfstat freed_now) l0=$(lfstat lazy)
	lazyfree_exact range 1 free >/dev/null
	echo 0 >"$LF/wmark_pct"
	lazyfree_exact range 1 free >/dev/null
	lazyfree_exact range 1 free >/dev/null
	echo 0 >"$T/tracing_on"; echo 0 >"$EV/enable"
	assert_eq "lruopt:lazyfree: wmark events = freed_now growth, lazy events = lazy growth" \
		"$(($(lfstat freed_now) - f0)) $(($(lfstat lazy) - l0))" \
		"$(grep -c 'lazyfree: .*reason=wmark' "$T/trace") $(grep -c 'lazyfree: .*reason=lazy' "$T/trace")"
	assert_eq "lruopt:lazyfree: the wmark range: 256 pages, 256 freed; the lazy ones: none" \
		"1 2" "$(grep -c 'pages=256 reason=wmark freed=256 kept=0$' "$T/trace") $(grep -c 'pages=256 reason=lazy freed=0 kept=0$' "$T/trace")"
	echo >"$T/trace"
fi

# ---- a memory cgroup at its limit, the zones with room (wmark_pct=100)
# lf_memcg_setup: LF_CG, a memory cgroup: on cgroup2 (memory enabled for
# it) where the controller is on the default hierarchy, else in its v1
# hierarchy (80-memcg-* bound it there on 6.1; it stays bound while a
# group of it lingers), mounted here if no one has it mounted
LF_CG="" LF_V2=0 LF_MNT=""
lf_memcg_setup() {
	local h v1
	h=$(awk '$1 == "memory" { print $2 }' /proc/cgroups)
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	if [ "$h" = 0 ] && [ -z "$v1" ]; then
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control || return 1
		LF_CG=/sys/fs/cgroup/lruopt-lazyfree LF_V2=1
	elif [ -n "$h" ]; then
		if [ -z "$v1" ]; then
			v1=/mnt/lazyfree-memcg
			mkdir -p "$v1" && mount -t cgroup -o memory none "$v1" || return 1
			LF_MNT=$v1
		fi
		LF_CG=$v1/lruopt-lazyfree
	else
		echo "no memory controller in /proc/cgroups"
		return 1
	fi
	echo "memory cgroup $LF_CG (hierarchy $h)"
	mkdir -p "$LF_CG"
}
lf_memcg_teardown() {
	rmdir "$LF_CG" 2>/dev/null
	[ $LF_V2 = 0 ] || echo -memory >/sys/fs/cgroup/cgroup.subtree_control
	[ -z "$LF_MNT" ] || umount "$LF_MNT"
}
echo 100 >"$LF/wmark_pct"
lazy_as_stock "no limit, the zones with room (wmark_pct=100)" lazy
if check "a memory cgroup for the limit checks" lf_memcg_setup; then
	# lf_memcg MARGIN_KB: lazyfree_exact memcg, again (3 tries) while it
	# reports the group's usage moving under the new limit (exit 3)
	lf_memcg() {
		local try=0 out rc
		while :; do
			out=$(lazyfree_exact memcg $MIB "$LF_CG" "$1")
			rc=$?
			try=$((try + 1))
			[ $rc = 3 ] && [ $try -lt 3 ] || break
			diag "memcg $1 KiB: $out; again"
		done
		echo "$out"
	}
	f0=$(lfnum freed_now) l0=$(lfnum lazy)
	# usage + 128 KiB: within a charge batch (64 pages) of the limit
	m=$(lf_memcg 128)
	assert_eq "memcg 128 KiB below its limit: MADV_FREE freed at once" \
		"ret=0 zero=$((PAGES - 1)) kept=0" "$m"
	m=$(lf_memcg 65536)
	assert_eq "memcg 64 MiB below its limit: stock MADV_FREE" \
		"ret=0 zero=0 kept=$((PAGES - 1))" "$m"
	assert_eq "memcg: stats freed_now +1, lazy +1" "$((f0 + 1)) $((l0 + 1))" \
		"$(lfstat freed_now) $(lfstat lazy)"
	lf_memcg_teardown
fi

# ---- unload and reload under a loop of MADV_FREE and MADV_DONTNEED
echo 100000 >"$LF/wmark_pct"
pids=""
for i in 1 2 3; do
	lazyfree_exact loop 20 8 >"/tmp/lfloop.$i" 2>&1 &
	pids="$pids $!"
done
bg_register $pids
cycles_ok() {
	local i=0
	while [ $i -lt 3 ]; do
		sleep 1
		unload_lruopt || return 1
		sleep 1
		load_lruopt lazyfree_enabled=1 lazyfree_wmark_pct=100000 || return 1
		i=$((i + 1))
	done
}
check "3 unload/reload cycles while 3 processes free and zap" cycles_ok
loops_ok() {
	local i rc=0
	for i in $pids; do wait "$i" || rc=1; done
	grep -H . /tmp/lfloop.*
	[ $rc = 0 ] && ! grep -q ERROR /tmp/lfloop.*
}
check "the looping processes ran to their end without an error" loops_ok
for p in $pids; do bg_unregister "$p"; done
check "unload" unload_lruopt
[ -z "$SWAP" ] || swapoff /dev/zram0
check_dmesg_clean "no kernel warnings during 85-lazyfree"
