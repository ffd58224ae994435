#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 30-toggle: flip the master and feature switches through every combination
# while mlock/munlock and page-fault workloads run and lru_add_drain_all()
# is triggered; then check mlock accounting under each switch setting.
# lruopt-timeout: 400
. /tests/lib.sh
. /tests/lib-munlock.sh
dmesg_mark "30-toggle"
ensure_loaded || exit 1

SUP=$(memcg_expected_supported)
SWITCHES="$LO/enabled $LO/drain/enabled $LO/munlock/enabled"
[ "$SUP" = 1 ] && SWITCHES="$SWITCHES $LO/memcg/enabled"
nsw=$(echo $SWITCHES | wc -w)
combos=$((1 << nsw))
rounds=${LRUOPT_TOGGLE_ROUNDS:-3}

check "workload (mlockloop + faultloop) started" start_workload 600

# Every round walks all 2^n combinations; each write must succeed and every
# switch must read back what was written (the others must not move).
toggle_all() {
	local r c i bit f want got td errs=0 writes=0 dsum=0 t0
	t0=$(now)
	r=0
	while [ $r -lt "$rounds" ]; do
		c=0
		while [ $c -lt $combos ]; do
			i=0
			for f in $SWITCHES; do
				bit=$(( (c >> i) & 1 ))
				if ! write_quiet "$f" $bit; then
					echo "write $bit > $f failed (combination $c)"
					errs=$((errs + 1))
				fi
				writes=$((writes + 1))
				i=$((i + 1))
			done
			i=0
			for f in $SWITCHES; do
				want=$(( (c >> i) & 1 ))
				# builtin read: no fork per value (slow under TCG)
				IFS= read -r got <"$f" || got="<unreadable>"
				if [ "$got" != "$want" ]; then
					echo "combination $c: $f reads '$got', expected $want"
					errs=$((errs + 1))
				fi
				i=$((i + 1))
			done
			# lru_add_drain_all() with this combination, while pages are
			# being faulted in and mlocked on other CPUs.
			now_cs
			td=$NOW_CS
			if ! drain_now; then
				echo "compact_memory (drain) failed in combination $c"
				errs=$((errs + 1))
			fi
			now_cs
			dsum=$((dsum + NOW_CS - td))
			c=$((c + 1))
		done
		r=$((r + 1))
	done
	echo "$writes writes, $((rounds * combos)) drains (compact_memory) taking $((dsum / 100)).$((dsum % 100 / 10))s of $(elapsed_since "$t0")s"
	[ $errs -eq 0 ]
}
check "$rounds rounds x $combos switch combinations under load: writes accepted, values read back" toggle_all
check "workload still running after the toggling" workload_running

# Rapid toggling of each switch alone (no reads in between) also must not upset anything.
rapid() {
	local f=$1 n=0 t0
	t0=$(now)
	while [ $n -lt 200 ]; do
		write_quiet "$f" 0 || return 1
		write_quiet "$f" 1 || return 1
		n=$((n + 1))
	done
	echo "400 writes in $(elapsed_since "$t0")s"
	[ "$(readval "$f")" = 1 ]
}
for f in $SWITCHES; do
	check "200 rapid 0/1 toggles of $f under load" rapid "$f"
done

for f in $SWITCHES; do write_quiet "$f" 1; done
check "workload exits cleanly (no syscall failure, no data corruption)" stop_workload
check "Mlocked returns to 0 after the workload" wait_mlocked_zero 10
assert_eq "the livepatch stays enabled through all toggling" 1 "$(readval "$LP/enabled")"

# mlock/munlock page accounting with each feature setting.
acct() {
	write_quiet "$LO/enabled" "$1" && write_quiet "$LO/munlock/enabled" "$2" || return 1
	mlock_accounting 32
}
check "mlock accounting, master on, munlock on" acct 1 1
check "mlock accounting, master on, munlock off" acct 1 0
check "mlock accounting, master off, munlock on" acct 0 1
for f in $SWITCHES; do write_quiet "$f" 1; done

check_dmesg_clean "no kernel warnings while toggling under load"
