#!/bin/sh
# munlock-bench.sh - A/B benchmark of lruopt's batched mlock/munlock walk,
# run INSIDE the test VM (busybox sh), stock and lruopt interleaved in one
# boot by toggling /sys/kernel/lruopt/munlock/enabled.
#
#   1. timedmlock / timedmunlock (mmtests, seeds/001): populated 256 MiB
#      MADV_NOHUGEPAGE area, ns per page, min/median/max over RUNS areas x 4
#      stock/lruopt pairs (munlock_bench ab);
#   2. lruvec lock acquisitions per 512 pages, stock and lruopt, counted with
#      the ftrace function tracer (munlock_bench locks);
#   3. the seed's test_mlock loop (seeds/000): us per iteration
#      (mlock_seedloop);
#   4. munlock/batch = 16, 64, 256, 512: timedmunlock at each (fewer rounds).
# Every program prints machine-readable "RESULT ..." lines; this script
# repeats them and adds
#   RESULT bench=goal name=NAME value=V target=T ok=0|1
#   RESULT bench=batch-sweep batch=B lruopt_munlock_min=.. stock_munlock_min=..
#          min_speedup=.. paired_speedup=.. median_speedup=.. mlock_min_speedup=..
#          locks_per_512=..
#   RESULT bench=batch-best batch=B min_speedup=..
# Speed-ups are stock time / lruopt time.  The emulator runs on a shared
# host whose noise only ever adds time, so the goals use the ratio of the
# minimum times (min_ratio); the ratio of medians and the median of the
# per-pair ratios are printed alongside.
# It also reports TAP results through /tests/lib.sh, so it can run as a
# test file: put it into the image as /tests/NN-name.sh, e.g.
#   scripts/mkinitramfs KVER img.gz tests/bench/munlock-bench.sh:/tests/95-bench-munlock.sh
#   scripts/vmrun --kernel KVER --initrd img.gz --append "lruopt.tests=95-bench-munlock"
# Kernel command line knobs: lruopt.bench_runs=N (areas, default 6; 4 pairs
# each), lruopt.bench_sweep_runs=N (default 3), lruopt.bench_seed_iters=N
# (default 20000, 5000 on single-threaded TCG; the seed loop runs 10 rounds).
# lruopt-timeout: 1200
. /tests/lib.sh
. /tests/lib-munlock.sh

arg() {
	sed -n "s/.*lruopt\.$1=\([0-9]*\).*/\1/p" "$CMDLINE_FILE" 2>/dev/null
}
RUNS=$(arg bench_runs); RUNS=${RUNS:-6}
SWEEP_RUNS=$(arg bench_sweep_runs); SWEEP_RUNS=${SWEEP_RUNS:-3}
SEED_ITERS=$(arg bench_seed_iters); SEED_ITERS=${SEED_ITERS:-$([ "$SLOW" = 1 ] && echo 5000 || echo 20000)}
MIB=256
D=/tmp/mun-bench
rm -rf $D
mkdir -p $D

dmesg_mark "munlock-bench"
ensure_loaded || exit 1
mun_quiet_begin
mun_batch 256
diag "munlock-bench: kernel $(uname -r), $(nproc) CPUs, accel ${ACCEL:-?}, runs $RUNS, sweep runs $SWEEP_RUNS, seed iters $SEED_ITERS"

# run NAME CMD...: run a benchmark program, echo its RESULT lines
run() {
	local name=$1 out=$D/$1 rc
	shift
	"$@" >"$out" 2>&1
	rc=$?
	grep '^RESULT' "$out"
	if [ $rc -ne 0 ]; then
		fail "$name: $* exited $rc" "$(tail -5 "$out")"
		return 1
	fi
	pass "$name: $*"
}

# val FILE PATTERN FIELD: FIELD of the first RESULT line matching PATTERN
val() {
	grep "^RESULT $2" "$1" | head -1 | sed -n "s/.* $3=\([-0-9.]*\).*/\1/p"
}

goal() {	# goal NAME VALUE OP TARGET  (OP: ge|le)
	local ok
	ok=$(awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { if (v == "") print 0; else if (op == "ge") print (v >= t); else print (v <= t) }')
	echo "RESULT bench=goal name=$1 value=${2:-none} target=$3:$4 ok=$ok"
	if [ "$ok" = 1 ]; then
		pass "goal $1: $2 ($3 $4)"
	else
		fail "goal $1: ${2:-none} ($3 $4)"
	fi
}

# 1. timedmlock / timedmunlock
run timed munlock_bench ab $MIB "$RUNS"
# 2. lock acquisitions per 512 pages
run locks munlock_bench locks $MIB
# 3. the seed's loop
run seedloop mlock_seedloop "$SEED_ITERS" 10

munlock_ratio=$(val $D/timed "bench=ab-ratio op=munlock" min_ratio)
mlock_ratio=$(val $D/timed "bench=ab-ratio op=mlock" min_ratio)
seed_ratio=$(val $D/seedloop "bench=seedloop-ratio" min_ratio)
locks_lruopt=$(val $D/locks "bench=locks variant=lruopt op=munlock" per512)
locks_stock=$(val $D/locks "bench=locks variant=stock op=munlock" per512)
[ -n "$locks_lruopt" ] || locks_lruopt=$(grep '^RESULT bench=ab run=' $D/timed | head -1 | sed -n 's/.* locks_per_512=\([0-9.]*\).*/\1/p')
echo "RESULT bench=locks-per-512 stock=${locks_stock:-n/a} lruopt=${locks_lruopt:-n/a}"

# 4. batch sweep
best="" bestv=""
for b in 16 64 256 512; do
	mun_batch $b
	if run sweep-$b munlock_bench ab $MIB "$SWEEP_RUNS" >$D/sweep-$b.res; then
		lm=$(val $D/sweep-$b "bench=ab-summary variant=lruopt op=munlock" min)
		sm=$(val $D/sweep-$b "bench=ab-summary variant=stock op=munlock" min)
		sp=$(val $D/sweep-$b "bench=ab-ratio op=munlock" min_ratio)
		spp=$(val $D/sweep-$b "bench=ab-ratio op=munlock" paired_median)
		spm=$(val $D/sweep-$b "bench=ab-ratio op=munlock" stock_over_lruopt)
		mr=$(val $D/sweep-$b "bench=ab-ratio op=mlock" min_ratio)
		lk=$(grep '^RESULT bench=ab run=' $D/sweep-$b | head -1 | sed -n 's/.* locks_per_512=\([0-9.]*\).*/\1/p')
		echo "RESULT bench=batch-sweep batch=$b lruopt_munlock_min=$lm stock_munlock_min=$sm min_speedup=$sp paired_speedup=$spp median_speedup=$spm mlock_min_speedup=$mr locks_per_512=$lk"
		if [ -z "$bestv" ] || awk -v a="$sp" -v b="$bestv" 'BEGIN { exit !(a > b) }'; then
			best=$b bestv=$sp
		fi
	fi
	grep -v '^RESULT' $D/sweep-$b.res
done
mun_batch 256
echo "RESULT bench=batch-best batch=$best min_speedup=$bestv"

goal munlock-speedup "$munlock_ratio" ge 1.5
goal munlock-locks-per-512 "$locks_lruopt" le 8
goal mlock-no-slower "$mlock_ratio" ge 0.95
goal seedloop-no-regression "$seed_ratio" ge 0.95

mun_enable 1
mun_quiet_end
check "Mlocked in /proc/meminfo is 0 after the benchmark" wait_mlocked_zero 10
check_dmesg_clean "no kernel warnings during munlock-bench"
