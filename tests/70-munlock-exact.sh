#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 70-munlock-exact: the batched mlock/munlock walk leaves exactly the state the
# stock walk leaves.  Scenarios: see tests/progs/munlock_exact.c (numa needs
# two nodes, e.g. numa=fake=2 on the command line; mthp needs 6.12; memcg a
# memory controller: v1 on 6.1, v2 on 6.12).  Every scenario of tests/progs/munlock_exact.c runs once
# with munlock/enabled=0 (stock walk) and once with 1 (batched), in this
# boot, and at every checkpoint the changes of Mlocked, Unevictable, per-zone
# nr_mlock, per-zone nr_zone_unevictable and all unevictable_pgs_* events
# must be identical.  When they differ, both runs are repeated to tell a real
# difference from a non-deterministic sequence, and both cases fail.
# lruopt-timeout: 300
. /tests/lib.sh
. /tests/lib-munlock.sh
dmesg_mark "70-munlock-exact"
ensure_loaded || exit 1
mun_quiet_begin
mun_batch 256

SCENARIOS="anon onfault mlockall thp fork-cow fork-cow-thp shared-tmpfs shared-memfd shared-anon offlru cold mthp numa memcg"
D=/tmp/mun-exact
rm -rf $D
mkdir -p $D

# exact_case NAME SCENARIO: A (stock) vs B (batched) for SCENARIO at the
# current batch size.
# A scenario that checks its premise (offlru: the folios stay in CPU x's
# batch until a draining checkpoint) says "premise broken" when something
# else drained that CPU meanwhile; the pair is then run again, up to
# $EXACT_TRIES times, and the case is skipped, not passed, if it never held.
EXACT_TRIES=4
exact_case() {
	local name=$1 sc=$2 a=$D/$1.A b=$D/$1.B n try=1
	while :; do
		if ! mun_exact_run "$sc" A 0 "$a"; then
			fail "$name: stock run" "$(tail -5 "$a")"
			return 1
		fi
		if ! mun_exact_run "$sc" B 1 "$b"; then
			fail "$name: batched run" "$(tail -5 "$b")"
			return 1
		fi
		grep -q '^RESULT exact .* premise broken' "$a" "$b" || break
		diag "$name: try $try: $(grep -h '^RESULT exact .* premise broken' "$a" "$b" |
			sed 's/^RESULT exact scenario=[^ ]* //' | tr '\n' ';')"
		if [ $try -ge $EXACT_TRIES ]; then
			skip "$name" "premise broken in all $EXACT_TRIES tries (another drain of the batch CPU)"
			return 0
		fi
		try=$((try + 1))
	done
	if grep -q "^RESULT exact .* skip" "$a"; then
		skip "$name" "$(sed -n 's/^RESULT exact .* skip \{0,1\}//p' "$a" | head -1)"
		return 0
	fi
	n=$(mun_core "$a" | wc -l)
	if [ "$(mun_core "$a")" = "$(mun_core "$b")" ]; then
		pass "$name: feature on == off at all $n checkpoints"
	else
		# Repeat both to see which side is deterministic.
		mun_exact_run "$sc" A2 0 "$a.2"
		mun_exact_run "$sc" B2 1 "$b.2"
		local aa=same bb=same
		[ "$(mun_core "$a")" = "$(mun_core "$a.2")" ] || aa=differs
		[ "$(mun_core "$b")" = "$(mun_core "$b.2")" ] || bb=differs
		fail "$name: feature on == off at all $n checkpoints" \
			"$(printf '%s\n' "stock rerun $aa, batched rerun $bb (same = deterministic)" \
				"--- diff stock batched ---" "$(mun_diff "$a" "$b")" \
				"--- full stock ---" "$(grep '^RESULT' "$a")" \
				"--- full batched ---" "$(grep '^RESULT' "$b")")"
	fi
	# Events balance NR_MLOCK, and the zones' LRU sizes the node's, at every
	# checkpoint, in both runs.
	if grep -q 'ident=bad' "$a" "$b"; then
		fail "$name: unevictable_pgs_* events balance nr_mlock, zones sum to Unevictable" "$(grep -h 'ident=bad' "$a" "$b" | head -4)"
	else
		pass "$name: unevictable_pgs_* events balance nr_mlock, zones sum to Unevictable, in both runs"
	fi
	# Each scenario ends with everything it mlocked released.
	assert_eq "$name: Mlocked/nr_mlock back to the start value at the end (both runs)" \
		"0 0 0 0" "$(for f in "$a" "$b"; do
			grep '^RESULT exact .* cp=' "$f" | tail -1 |
				sed 's/.*mlocked_kb=\([-0-9]*\) .*nr_mlock=\([^ ]*\) .*/\1 \2/' |
				awk '{ n = split($2, z, ","); s = 0; for (i = 1; i <= n; i++) { sub(/.*:/, "", z[i]); s += z[i] } print $1, s }'
		done | tr '\n' ' ' | sed 's/ $//')"
	# The right walk ran: no batched work with the feature off, no stock
	# walk with it on.
	assert_eq "$name: feature off: stock walks only (batched pages/fallbacks 0)" \
		"0 0" "$(mun_info "$a" lo_pages) $(mun_info "$a" lo_fallbacks)"
	assert_eq "$name: feature on: no stock walk" "0" "$(mun_info "$b" lo_stock_walks)"
	[ "$(mun_info "$a" lo_stock_walks)" -gt 0 ] 2>/dev/null ||
		fail "$name: feature off: stock_walks grew" "lo_stock_walks=$(mun_info "$a" lo_stock_walks)"
}

mun_cg_begin >$D/cg.out 2>&1
diag "$(cat $D/cg.out)"
for sc in $SCENARIOS; do
	exact_case "$sc" "$sc"
	# lruopt.verbose on the kernel command line: show every checkpoint
	if grep -q 'lruopt.verbose' "$CMDLINE_FILE"; then
		diag "$(cat $D/$sc.A $D/$sc.B)"
	fi
done
mun_cg_end
check "anon (feature on): small folios went through the batched path" \
	test "$(mun_info $D/anon.B lo_pages)" -gt 0
if [ -d /sys/kernel/mm/transparent_hugepage ]; then
	check "thp (feature on): PMD THPs went to the stock per-folio calls" \
		test "$(mun_info $D/thp.B lo_fallbacks)" -gt 0
else
	skip "thp (feature on): PMD THPs went to the stock per-folio calls" "no transparent hugepages"
fi
diag "anon batched: $(grep '^RESULT exact .* cp=' $D/anon.B | tail -1 | sed 's/.* | //')"

# Same results at the extreme batch sizes.
for bs in 1 512; do
	mun_batch $bs
	exact_case "anon batch=$bs" anon
	exact_case "fork-cow batch=$bs" fork-cow
done
mun_batch 256

# The other LRU implementation.  The batched walk applies the classic LRU's
# sizes itself but leaves a multi-gen LRU generation's to the kernel's
# lru_gen_add/del_folio() (lruopt_munlock.c, mb_lru_del()).  6.1 defaults to
# the classic LRU and 6.12 to MGLRU, so switching it here runs both branches
# on both kernels.
LG=/sys/kernel/mm/lru_gen/enabled
if [ -w $LG ]; then
	lg0=$(cat $LG)
	case $lg0 in 0x0000) echo y >$LG ;; *) echo n >$LG ;; esac
	lg1=$(cat $LG)
	if [ "$lg1" = "$lg0" ]; then
		fail "lru_gen/enabled switched for the second pass" "still $lg0"
	else
		diag "lru_gen/enabled: $lg0 -> $lg1 for anon, mlockall, fork-cow, shared-tmpfs, memcg"
		mun_cg_begin >$D/cg2.out 2>&1
		for sc in anon mlockall fork-cow shared-tmpfs memcg; do
			exact_case "$sc lru_gen=$lg1" "$sc"
		done
		mun_cg_end
		echo "$lg0" >$LG
		assert_eq "lru_gen/enabled restored" "$lg0" "$(cat $LG)"
	fi
else
	skip "lru_gen pass" "this kernel has no $LG"
fi

mun_enable 1
mun_quiet_end

check "Mlocked in /proc/meminfo is 0 after the exactness runs" wait_mlocked_zero 10
check_dmesg_clean "no kernel warnings during 70-munlock-exact"
