#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 70-munlock-mglru: the batched walk keeps MGLRU's books.  With the
# multi-gen LRU on (6.12's default; switched on here on 6.1), a folio that
# munlock puts back on the LRU goes on a generation: the walk updates the
# generation's nr_pages at once and the node/zone/memcg NR_LRU_* counters
# once per lock hold (lruopt_compat.h lruopt_gen_add_folio()).  Both must
# end where stock's per-folio accounting ends, so their difference
#   gap = sum of every generation's pages (/sys/kernel/debug/lru_gen)
#         - (Active + Inactive, anon + file) (/proc/meminfo, in pages)
# must not move, neither while 64 MiB are mlocked nor once they are
# munlocked again (16384 pages: a walk that dropped the deferred update
# moves it by all of them).  The gap moves a
# little with whatever else runs (reads are not atomic), so the bound is
# 256 pages, 1/64 of the range.  Checked with the walk batched and stock,
# with MGLRU on and off (the classic path), with and without a concurrent
# aging loop (max_seq moving under the walk: which generations count as
# active changes between lock holds); Mlocked and Unevictable back to
# their baseline each time, and the batched walk really batched.
# lruopt-timeout: 400
. /tests/lib.sh
. /tests/lib-munlock.sh
dmesg_mark "70-munlock-mglru"
LG=/sys/kernel/mm/lru_gen/enabled
DBG=/sys/kernel/debug/lru_gen
if [ ! -w $LG ] || [ ! -r $DBG ]; then
	skip "70-munlock-mglru" "no MGLRU control ($LG) or no $DBG"
	exit 0
fi
ensure_loaded || exit 1
mun_quiet_begin
MIB=64
PAGES=$((MIB * 256))
SLACK=256
LG0=$(cat $LG)

# back_to KEY KB: /proc/meminfo KEY returns to KB (batches drained; 5 s)
back_to() {
	local i=0 v
	while stat_refresh; v=$(meminfo "$1"); [ "$v" != "$2" ]; do
		if [ $i -ge 25 ]; then
			echo "$1 is $v kB, was $2 kB"
			return 1
		fi
		drain_now 2>/dev/null
		sleep 0.2
		i=$((i + 1))
	done
}

# gap: generations' pages minus the LRU counters, in pages
gap() {
	stat_refresh
	awk 'FILENAME ~ /lru_gen/ && NF == 4 && $1 ~ /^[0-9]+$/ { g += $3 + $4 }
	     FILENAME ~ /meminfo/ && /^(Active|Inactive)\((anon|file)\):/ { m += $2 }
	     END { printf "%d\n", g - m / 4 }' $DBG /proc/meminfo
}

# max_seqs: the youngest generation's sequence number of every memcg/node,
# "MEMCG NODE SEQ" per line
max_seqs() {
	awk '$1 == "memcg" { id = $2 } $1 == "node" { n = $2 }
	     NF == 4 && $1 ~ /^[0-9]+$/ { max[id " " n] = $1 }
	     END { for (k in max) print k, max[k] }' $DBG
}

# ager: create a generation in every memcg/node as fast as it can, until
# killed: the "+" command of $DBG with can_swap=1 force_scan=1, which,
# when all generations are in use, folds the oldest into the next one
# first (so it never stops with -ERANGE)
ager() {
	while :; do
		max_seqs | while read -r id n seq; do
			echo "+ $id $n $seq 1 1" >$DBG 2>/dev/null
		done
	done
}

# seq_sum: the sum of the max_seqs, to see that the ager aged
seq_sum() {
	max_seqs | awk '{ s += $3 } END { print s + 0 }'
}

# gap_ok WHAT G0 G1: the gap moved by at most $SLACK pages
gap_ok() {
	check "$1: generations minus LRU counters unchanged (gap $2 -> $3 pages, at most $SLACK apart)" \
		test $(($3 - $2)) -le $SLACK -a $(($2 - $3)) -le $SLACK
}

# seq_grown S0: the generations' max_seq sum moved past S0
seq_grown() {
	local v
	v=$(seq_sum)
	[ "$v" -gt "$1" ] || { echo "max_seq sum still $v"; return 1; }
}

# one_case NAME ENABLED AGING: mlock $MIB MiB (mlockhold), look, munlock,
# look again, with the walk batched (1) or stock (0), with the ager
# running (1) or not.  Looked at in between too: the mlock walk takes the
# folios off their generations, the munlock walk puts them back, and a
# walk that lost the deferred update both ways would cancel out over the
# pair.
one_case() {
	local name=$1 en=$2 aging=$3 g0 gm g1 m0 u0 ml s0 ager="" hold i rc pages
	local f=/tmp/mglru-hold.out
	mun_enable "$en" || { fail "$name: munlock/enabled=$en"; return 1; }
	mun_reset
	# its one ramfs page (Unevictable) exists before the baselines
	echo start >$f
	# gap() folds the CPUs' counter deltas first (stat_refresh): the
	# baselines are read after it, as ml is after gm's
	g0=$(gap)
	m0=$(meminfo Mlocked)
	u0=$(meminfo Unevictable)
	s0=$(seq_sum)
	if [ "$aging" = 1 ]; then
		ager &
		ager=$!
		bg_register $ager
	fi
	mlockhold $MIB 120 >>$f 2>&1 &
	hold=$!
	bg_register $hold
	# a liveness limit: the 64 MiB lock can take a while under TCG
	wait_for 300 "mlockhold locked" grep -q locked $f >/dev/null
	gm=$(gap)
	ml=$(meminfo Mlocked)
	# with the ager: the lock and the unlock both race a generation
	# change, so the munlock starts once the ager made one since the
	# start (polled, not slept for)
	[ -z "$ager" ] || check "$name: generations were created meanwhile (max_seq sum from $s0)" \
		wait_for 300 "a new generation" seq_grown "$s0"
	kill -TERM $hold 2>/dev/null
	wait $hold
	rc=$?
	bg_unregister $hold
	if [ -n "$ager" ]; then
		kill $ager 2>/dev/null
		wait $ager 2>/dev/null
		bg_unregister $ager
	fi
	if [ $rc -ne 0 ] || ! grep -q unlocked $f; then
		fail "$name: mlockhold" "status $rc" "$(tail -3 $f)"
		return 1
	fi
	g1=$(gap)
	gap_ok "$name: locked" "$g0" "$gm"
	assert_eq "$name: locked: Mlocked grew by $MIB MiB" $((m0 + MIB * 1024)) "$ml"
	gap_ok "$name: unlocked" "$g0" "$g1"
	check "$name: Mlocked back to $m0 kB" back_to Mlocked "$m0"
	check "$name: Unevictable back to $u0 kB" back_to Unevictable "$u0"
	pages=$(mun_stat pages)
	if [ "$en" = 1 ]; then
		check "$name: the batched walk took every page both ways (pages=$pages)" \
			test "$pages" -ge $((2 * PAGES))
	else
		assert_eq "$name: the stock walk ran (pages=0)" 0 "$pages"
	fi
}

for lg in y n; do
	if ! echo $lg >$LG 2>/dev/null; then
		skip "lru_gen=$lg" "cannot write $lg to $LG"
		continue
	fi
	diag "lru_gen/enabled=$(cat $LG)"
	for aging in 0 1; do
		# aging only means something with generations
		[ $lg = n ] && [ $aging = 1 ] && continue
		for en in 0 1; do
			one_case "lru_gen=$lg aging=$aging munlock/enabled=$en" $en $aging
		done
	done
done
echo "$LG0" >$LG 2>/dev/null || echo y >$LG
mun_enable 1
mun_quiet_end
check_dmesg_clean "no kernel warnings during 70-munlock-mglru"
