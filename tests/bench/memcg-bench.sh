#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# memcg-bench: A/B benchmark of lruopt's memcg feature (6.1), in the VM.
#
# Two workloads, run inside a cgroup-v1 memory cgroup, on ext4 on brd, by
# tests/progs/memcg_bench pinned to CPU 1:
#   mmap   seeds/004's mmap fault->drop loop: a 32 MiB file mapped twice,
#          the first mapping mlocked, the second read-faulted page by page
#          and dropped with MADV_DONTNEED (page_add_file_rmap +
#          page_remove_rmap per page and pass).
#   dirty  pwrite() into every page of an 8 MiB file, then
#          sync_file_range(WAIT|WRITE|WAIT) (dirty, clean-for-io,
#          writeback start/end per page and pass).
# Three configurations, interleaved in one boot:
#   U  lruopt not loaded (stock kernel)
#   E  lruopt loaded, memcg/enabled=1 (the feature)
#   D  lruopt loaded, memcg/enabled=0 (patched functions run their stock
#      path: the cost of the ftrace redirection alone)
# Round r runs U E D (odd r) or D E U (even r): one insmod and one rmmod
# per round, no configuration always first.  Before round 1 both workloads
# run once unmeasured.  Then, with the module unloaded, kprobes count how
# often each run calls folio_memcg_lock/unlock, lock_page_memcg/
# unlock_page_memcg and whatever else the module lists as memcg targets, so
# that the time difference per run can be turned into a cost per call of a
# redirected (livepatched) function.
#
# Output (besides TAP results and diagnostics), one line each:
#   RESULT workload=memcg-W metric=ns_per_page value=V unit=ns better=lower config=C round=R
#   RESULT-CALLS workload=memcg-W pages=P iters=I folio_memcg_lock=N folio_memcg_unlock=N lock_page_memcg=N unlock_page_memcg=N redirected=F,G redirected_per_page=X
#   RESULT-STATS workload=memcg-W config=C n=N median=M mean=M min=M max=M sd_pct=S
#   RESULT-RATIO workload=memcg-W ratio=C/U n=N median=R mean=R min=R max=R
#   RESULT-COST workload=memcg-W config=C delta_ns_per_page=D ns_per_redirected_call=X
#   RESULT-COUNTERS workload=memcg-W config=E round=R fast=.. slow=.. retries=.. stock=..
# Parameters (kernel command line): lruopt.mb_runs=N (default 10),
# lruopt.mb_mmap_iters=N (default 40), lruopt.mb_dirty_iters=N (default 20),
# lruopt.mb_mmap_mib=N (32), lruopt.mb_dirty_mib=N (8).
#
# Install into an image as a test file, e.g.
#   scripts/mkinitramfs 6.1.0-57-amd64 b.cpio.gz tests/bench/memcg-bench.sh:/tests/95-memcg-bench.sh
#   scripts/vmrun --kernel 6.1.0-57-amd64 --initrd b.cpio.gz --append lruopt.tests=95-memcg-bench
# or with tests/host/memcg-bench, which does that and keeps the RESULT lines.
# lruopt-timeout: 3600
. /tests/lib.sh
. /tests/lib-memcg.sh
dmesg_mark "memcg-bench"

param() { # param NAME DEFAULT: lruopt.NAME=value from the command line
	local v
	v=$(tr ' ' '\n' <"$CMDLINE_FILE" | sed -n "s/^lruopt\.$1=//p" | tail -1)
	echo "${v:-$2}"
}
RUNS=$(param mb_runs 10)
MMAP_ITERS=$(param mb_mmap_iters 40)
DIRTY_ITERS=$(param mb_dirty_iters 20)
MMAP_MIB=$(param mb_mmap_mib 32)
DIRTY_MIB=$(param mb_dirty_mib 8)
CG=$MCG_V1/lruopt-bench
CPU=1
[ "$(nproc)" -gt 1 ] || CPU=0
SAMPLES=/tmp/memcg-bench.samples
rm -f /tmp/memcg-bench.calls /tmp/memcg-bench.summary
: >"$SAMPLES"

if [ "$(memcg_expected_supported)" != 1 ]; then
	skip "memcg benchmark" "the memcg feature does not apply to $(uname -r)"
	exit 0
fi
diag "memcg-bench: runs=$RUNS mmap=${MMAP_MIB}MiBx$MMAP_ITERS dirty=${DIRTY_MIB}MiBx$DIRTY_ITERS cpu=$CPU ncpu=$(nproc) accel=${ACCEL:-?}"
ensure_unloaded || exit 1

setup() {
	memcg_v1_mount || return 1
	[ -d "$CG" ] || mkdir "$CG" || return 1
	memcg_fs_setup $((MMAP_MIB + DIRTY_MIB + 32)) || return 1
	# created from inside the memcg, so the page cache is charged to it
	sh -c "echo \$\$ >$CG/cgroup.procs && dd if=/dev/zero of=$MCG_FS/mmap.file bs=1048576 count=$MMAP_MIB && exec dd if=/dev/zero of=$MCG_FS/dirty.file bs=1048576 count=$DIRTY_MIB" 2>/dev/null || return 1
	sync
}
check "setup: cgroup-v1 memcg, ext4 on brd, files created inside the memcg" setup || exit 1

# bench W: one run of workload W in the memcg on CPU $CPU; prints memcg_bench's line
bench() {
	local f it
	case $1 in
	mmap) f=$MCG_FS/mmap.file it=$MMAP_ITERS ;;
	dirty) f=$MCG_FS/dirty.file it=$DIRTY_ITERS ;;
	esac
	sh -c "echo \$\$ >$CG/cgroup.procs && exec taskset -c $CPU memcg_bench $1 $f $it"
}

STATE=U
MEMCG_TARGETS=""
goto() {
	[ "$STATE" = "$1" ] && return 0
	case $1 in
	U) unload_lruopt >/dev/null || return 1 ;;
	E | D)
		if [ "$STATE" = U ]; then
			load_lruopt >/dev/null || return 1
			MEMCG_TARGETS=$(awk '$2 == "memcg" { printf "%s%s", s, $1; s = " " }' "$LO/targets")
		fi
		kwrite "$LO/memcg/enabled" "$([ "$1" = E ] && echo 1 || echo 0)" >/dev/null || return 1
		;;
	esac
	STATE=$1
	sleep 0.5
}

# ---- warm-up
for w in mmap dirty; do
	out=$(bench $w) || { fail "warm-up $w: memcg_bench failed" "$out"; exit 1; }
	diag "warm-up: $out"
done

# ---- rounds
errors=0
r=1
while [ $r -le "$RUNS" ]; do
	if [ $((r % 2)) = 1 ]; then order="U E D"; else order="D E U"; fi
	for c in $order; do
		if ! goto $c; then
			fail "round $r: switch to configuration $c"
			errors=$((errors + 1))
			break 2
		fi
		[ "$c" = E ] && mcg_reset
		for w in mmap dirty; do
			if ! out=$(bench $w); then
				errors=$((errors + 1))
				diag "round $r $c $w: memcg_bench failed: $out"
				continue
			fi
			v=$(echo "$out" | sed -n 's/.*ns_per_page=\([0-9.]*\).*/\1/p')
			echo "RESULT workload=memcg-$w metric=ns_per_page value=$v unit=ns better=lower config=$c round=$r"
			echo "$w $c $r $v" >>"$SAMPLES"
			[ "$c" = E ] && echo "RESULT-COUNTERS workload=memcg-$w config=E round=$r $(mcg_ctrs)" && mcg_reset
		done
	done
	r=$((r + 1))
done
goto U || errors=$((errors + 1))
assert_eq "all $RUNS rounds ran without error" 0 "$errors"
check "the module listed its memcg targets while loaded ('$MEMCG_TARGETS')" test -n "$MEMCG_TARGETS"

# ---- call counts per run, after the rounds (module unloaded; kprobes add
# cost, so these runs are not timed).  "Redirected" calls are the calls of
# the functions the loaded module listed as memcg targets ($LO/targets).
TR=/sys/kernel/tracing
KPROBES="folio_memcg_lock folio_memcg_unlock lock_page_memcg unlock_page_memcg"
for t in $MEMCG_TARGETS; do
	case " $KPROBES " in *" $t "*) ;; *) KPROBES="$KPROBES $t" ;; esac
done
count_calls() {
	local w=$1 out p line
	echo 0 >$TR/tracing_on
	for p in $KPROBES; do
		echo "p:lruopt_mb/$p $p" >>$TR/kprobe_events || return 1
	done
	echo 1 >$TR/events/lruopt_mb/enable || return 1
	out=$(bench "$w") || return 1
	echo 0 >$TR/events/lruopt_mb/enable
	line="RESULT-CALLS workload=memcg-$w pages=$(echo "$out" | sed -n 's/.*pages=\([0-9]*\).*/\1/p') iters=$(echo "$out" | sed -n 's/.*iters=\([0-9]*\).*/\1/p')"
	for p in $KPROBES; do
		line="$line $p=$(awk -v e="$p" '$1 == e || $1 == "lruopt_mb/" e { print $2 }' $TR/kprobe_profile)"
	done
	for p in $KPROBES; do echo "-:lruopt_mb/$p" >>$TR/kprobe_events; done
	echo 1 >$TR/tracing_on
	echo "$line" | awk -v t="$MEMCG_TARGETS" '{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		n = split(t, f, " "); s = 0; names = ""
		for (i = 1; i <= n; i++) { s += v[f[i]]; names = names (i > 1 ? "," : "") f[i] }
		printf "%s redirected=%s redirected_per_page=%.3f\n", $0, names, s / (v["pages"] * v["iters"])
	}'
}
for w in mmap dirty; do
	if line=$(count_calls $w); then
		echo "$line"
		echo "$line" >>/tmp/memcg-bench.calls
		pass "kprobe call counts for one $w run"
	else
		fail "kprobe call counts for one $w run" "$line"
	fi
done


# ---- statistics
for w in mmap dirty; do
	for c in U E D; do
		awk -v w=$w -v c=$c '$1 == w && $2 == c { print $4 }' "$SAMPLES" | sort -n | awk -v w=$w -v c=$c '
			{ x[NR] = $1; s += $1; ss += $1 * $1 }
			END {
				if (NR == 0) exit
				n = NR; m = s / n
				med = (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
				# busybox awk has no sqrt(): Newton iterations
				var = (n > 1) ? (ss - n * m * m) / (n - 1) : 0
				sd = 0
				if (var > 0) { sd = var; for (i = 0; i < 60; i++) sd = (sd + var / sd) / 2 }
				printf "RESULT-STATS workload=memcg-%s config=%s n=%d median=%.2f mean=%.2f min=%.2f max=%.2f sd_pct=%.2f\n", w, c, n, med, m, x[1], x[n], 100 * sd / m
			}'
	done
	for c in E D; do
		# paired per round: C_r / U_r
		awk -v w=$w -v c=$c '$1 == w { v[$2, $3] = $4; r[$3] = 1 }
			END { for (k in r) if ((c, k) in v && ("U", k) in v) printf "%.6f\n", v[c, k] / v["U", k] }' "$SAMPLES" |
			sort -n | awk -v w=$w -v c=$c '
			{ x[NR] = $1; s += $1 }
			END {
				if (NR == 0) exit
				n = NR
				med = (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
				printf "RESULT-RATIO workload=memcg-%s ratio=%s/U n=%d median=%.4f mean=%.4f min=%.4f max=%.4f\n", w, c, n, med, s / n, x[1], x[n]
			}'
		# paired difference per round -> cost per redirected call
		rpp=$(sed -n "s/.*workload=memcg-$w .*redirected_per_page=\([0-9.]*\).*/\1/p" /tmp/memcg-bench.calls 2>/dev/null)
		awk -v w=$w -v c=$c '$1 == w { v[$2, $3] = $4; r[$3] = 1 }
			END { for (k in r) if ((c, k) in v && ("U", k) in v) printf "%.3f\n", v[c, k] - v["U", k] }' "$SAMPLES" |
			sort -n | awk -v w=$w -v c=$c -v rpp="${rpp:-0}" '
			{ x[NR] = $1 }
			END {
				if (NR == 0) exit
				n = NR
				med = (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
				printf "RESULT-COST workload=memcg-%s config=%s n=%d delta_ns_per_page=%.2f delta_min=%.2f delta_max=%.2f redirected_per_page=%s ns_per_redirected_call=%s\n", w, c, n, med, x[1], x[n], rpp, (rpp > 0 ? sprintf("%.2f", med / rpp) : "nan")
			}'
	done
done | tee /tmp/memcg-bench.summary
check "summary computed" test -s /tmp/memcg-bench.summary

# The goal: no regression beyond 1 % (median of the paired E/U ratios).
for w in mmap dirty; do
	med=$(sed -n "s/^RESULT-RATIO workload=memcg-$w ratio=E\/U .*median=\([0-9.]*\).*/\1/p" /tmp/memcg-bench.summary)
	if awk -v m="${med:-99}" 'BEGIN { exit !(m <= 1.01) }'; then
		pass "memcg-$w: E/U median ratio $med <= 1.01"
	else
		fail "memcg-$w: E/U median ratio $med <= 1.01" "the feature costs more than 1 % on this workload (see RESULT-RATIO/RESULT-COST)"
	fi
done

memcg_fs_teardown
rmdir "$CG" 2>/dev/null
memcg_v1_umount
rm -f "$SAMPLES" /tmp/memcg-bench.calls /tmp/memcg-bench.summary
check_dmesg_clean "no kernel warnings during the benchmark"
