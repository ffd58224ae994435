#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 70-munlock-batching: the batching is real.  A 256 MiB populated non-THP
# area is mlocked and munlocked once with the stock walk and once with the
# batched walk (munlock_bench locks): with the feature on, at most 512/64
# lruvec lock acquisitions per 512 pages (module counter, and the ftrace
# function tracer counting folio_lruvec_lock*() calls of the process, which
# also gives the stock figure); with it off, stock_walks grow and pages
# does not.  munlock/batch really sets the batch length.
# lruopt-timeout: 200
. /tests/lib.sh
. /tests/lib-munlock.sh
dmesg_mark "70-munlock-batching"
ensure_loaded || exit 1
mun_quiet_begin
MIB=256
PAGES=$((MIB * 256))
D=/tmp/mun-batch
rm -rf $D
mkdir -p $D

MUN_DEF=256
is_rt && MUN_DEF=32
assert_eq "munlock/batch default is $MUN_DEF" "$MUN_DEF" "$(cat $MUN/batch)"

# field FILE VARIANT OP NAME
field() {
	grep "^RESULT bench=locks variant=$2 op=$3 " "$1" | sed -n "s/.* $4=\([-0-9.]*\).*/\1/p"
}

locks_run() {
	mun_prog "munlock_bench locks $MIB (batch $(cat $MUN/batch)) ran" "$1" \
		'RESULT bench=locks' 1+ munlock_bench locks $MIB
}

mun_batch 256
if locks_run $D/b256; then
	f=$D/b256
	for op in munlock mlock; do
		ml=$(field $f lruopt $op module_locks)
		mp=$(field $f lruopt $op module_pages)
		assert_eq "batched $op: all $PAGES pages went through the batched walk" "$PAGES" "$mp"
		check "batched $op: lock acquisitions per 512 pages <= 8 (module counter: $ml for $PAGES pages)" \
			test "${ml:-999999}" -le $((PAGES / 64))
		assert_eq "batched $op: no stock walk" 0 "$(field $f lruopt $op module_stock_walks)"
		assert_eq "stock $op: no batched pages" 0 "$(field $f stock $op module_pages)"
		check "stock $op: stock_walks grew (one per page table, >= $((MIB / 2)))" \
			test "$(field $f stock $op module_stock_walks)" -ge $((MIB / 2))
		if grep -q 'skip no-tracefs' $f; then
			diag "no tracefs: lock acquisitions not cross-checked with ftrace"
		else
			li=$(field $f lruopt $op lock_irq)
			check "batched $op: ftrace sees <= 8 lruvec lock calls per 512 pages ($(field $f lruopt $op per512))" \
				awk -v x="$(field $f lruopt $op per512)" 'BEGIN { exit !(x <= 8) }'
			# Every acquisition the module counts is a folio_lruvec_lock_irq()
			# call; a few more may come from the stock code around the walk.
			check "batched $op: ftrace folio_lruvec_lock_irq calls ($li) match the module's lock_acquisitions ($ml)" \
				test "$li" -ge "$ml" -a "$li" -le $((ml + 8))
			diag "stock $op: $(field $f stock $op per512) lruvec lock calls per 512 pages (ftrace); batched: $(field $f lruopt $op per512)"
		fi
	done
fi

# The knob: batch 16 -> exactly PAGES/16 batches for the munlock.
mun_batch 16
if locks_run $D/b16; then
	assert_eq "batch=16: batched munlock takes 32 lruvec locks per 512 pages" "32" \
		"$(awk -v l="$(field $D/b16 lruopt munlock module_locks)" -v p="$PAGES" 'BEGIN { printf "%d", l * 512 / p + 0.5 }')"
fi
mun_batch 256
mun_enable 1
mun_quiet_end
check "Mlocked in /proc/meminfo is 0" wait_mlocked_zero 10
check_dmesg_clean "no kernel warnings during 70-munlock-batching"
