#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# w-lazyfree-bomb: the MADV_FREE bomb of the seed thread "mm: throttle
# MADV_FREE" (Minchan Kim, linux-mm, 2015): N processes each write every
# page of their own anonymous region and madvise() it, several passes, with
# more memory written than there is (lfbomb bomb).  Swap is a zram device,
# on only during the bomb.  Before each bomb: page cache dropped (in the
# VM), then lfbomb mlocks all of MemAvailable but LEAVE MiB, with swap
# still off, and only then switches it on: so that the pressure does not
# depend on the guest's memory or on what the previous run left, and a
# run stays short: 4 x 192 MiB, 3 passes, in 384 MiB (--quick:
# 4 x 128 MiB, 2 passes, in 256 MiB).
# Metrics: elapsed seconds, pswpin and pswpout (pages) of the MADV_FREE
# bomb in every configuration; in A also the same bomb with MADV_DONTNEED,
# reported as ref_dontneed_<metric> (bench-report shows how much of the
# A -> DONTNEED gap each configuration closes).  The two bombs of A
# alternate which goes first from round to round.
. "$(dirname "$0")/bench-lib.sh"

WL_DESC="seed MADV_FREE bomb: 4 procs x 192 MiB written+madvised 3x in 384 MiB, zram swap (A also runs MADV_DONTNEED: ref_dontneed_*)"
WL_PROGS=lfbomb
WL_OPTIONAL="13 minutes per kernel with lazyfree-reuse (8 rounds)"

wl_setup() {
	bench_zram 1024 || exit 1
}

# bomb ADVICE [PREFIX]: one bomb; its results, names prefixed by PREFIX
bomb() {
	local out
	bench_swap_off || exit 1
	[ "$BENCH_HOST" = 1 ] || { sync; echo 3 >/proc/sys/vm/drop_caches; }
	out=$(lfbomb bomb 4 "$(qf 128 192)" "$(qf 2 3)" "$1" "$(qf 256 384)" /dev/zram0) || {
		echo "lfbomb $1 failed: $out" >&2
		bench_swap_off
		exit 1
	}
	echo "$1: $out" >&2
	result "${2:-}elapsed" "$(div "$(kv "$out" elapsed_ms)" 1000 2)" s lower
	result "${2:-}pswpin" "$(kv "$out" pswpin)" pages lower
	result "${2:-}pswpout" "$(kv "$out" pswpout)" pages lower
}

wl_run() {
	if [ "$BENCH_CONFIG" != A ]; then
		bomb free
	elif [ $((${BENCH_ROUND:-1} % 2)) = 1 ]; then
		bomb free
		bomb dontneed ref_dontneed_
	else
		bomb dontneed ref_dontneed_
		bomb free
	fi
	bench_swap_off || exit 1
}

wl_cleanup() {
	bench_zram_cleanup
}

bench_main "$@"
