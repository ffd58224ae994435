#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# munlock-bench.sh - A/B benchmark of lruopt's batched mlock/munlock walk,
# run INSIDE the test VM (busybox sh), stock and lruopt interleaved in one
# boot by toggling /sys/kernel/lruopt/munlock/enabled ("stock" = the
# feature switched off: the stock per-folio calls).
#
#   1. timedmlock / timedmunlock (mmtests, seeds/001): populated 256 MiB
#      MADV_NOHUGEPAGE area, ns per page, min/median/max over RUNS areas x 4
#      stock/lruopt pairs in ABBA order (munlock_bench ab);
#   2. the same per-page cost from many short samples: 8 MiB area, SAMPLES
#      ABBA pairs (munlock_bench abfine).  The emulator runs on a shared host
#      whose noise only ever adds time, and a 2 ms operation is far less
#      often stretched than a 60 ms one, so its low percentiles (min, p10) are
#      the precise figure; the goals use the p10 ratio;
#   3. lruvec lock acquisitions per 512 pages, stock and lruopt, counted with
#      the ftrace function tracer (munlock_bench locks);
#   4. the seed's test_mlock loop (seeds/000): us per iteration, SEED_SAMPLES
#      ABBA pairs of 100-iteration samples (mlock_seedloop);
#   5. munlock/batch = 16, 64, 256, 512: step 2 at each batch size.
# Every program prints machine-readable "RESULT ..." lines; this script
# repeats them and adds
#   RESULT bench=batch-sweep batch=B munlock_p10_speedup=.. munlock_min_speedup=..
#          mlock_p10_speedup=.. locks_per_512=..
#   RESULT bench=batch-best batch=B munlock_p10_speedup=..
#   RESULT bench=goal name=NAME value=V target=OP:T ok=0|1
# (speed-ups: stock time / lruopt time, > 1 means lruopt is faster).
# It also reports TAP results through /tests/lib.sh, so it runs as a test
# file once put into the image as /tests/NN-name.sh, e.g.
#   scripts/mkinitramfs KVER img.gz tests/bench/munlock-bench.sh:/tests/95-bench-munlock.sh
#   scripts/vmrun --kernel KVER --initrd img.gz --append "lruopt.tests=95-bench-munlock"
# Only the always-true checks (programs ran, locks per 512 pages, no
# warnings) are TAP results; the speed goals are RESULT lines, because the
# emulator cannot be trusted to decide them (see the report).
# Kernel command line knobs: lruopt.bench_runs=N (256 MiB areas, default 6),
# lruopt.bench_samples=N (short pairs, default 300), lruopt.bench_sweep=N
# (pairs per batch size, default 150), lruopt.bench_seed_samples=N (default
# 200).
# lruopt-timeout: 1200
. /tests/lib.sh
. /tests/lib-munlock.sh

arg() {
	sed -n "s/.*lruopt\.$1=\([0-9]*\).*/\1/p" "$CMDLINE_FILE" 2>/dev/null
}
RUNS=$(arg bench_runs); RUNS=${RUNS:-6}
SAMPLES=$(arg bench_samples); SAMPLES=${SAMPLES:-300}
SWEEP=$(arg bench_sweep); SWEEP=${SWEEP:-150}
SEED_SAMPLES=$(arg bench_seed_samples); SEED_SAMPLES=${SEED_SAMPLES:-200}
MIB=256
D=/tmp/mun-bench
rm -rf $D
mkdir -p $D

dmesg_mark "munlock-bench"
ensure_loaded || exit 1
mun_quiet_begin
mun_batch 256
diag "munlock-bench: kernel $(uname -r), $(nproc) CPUs, accel ${ACCEL:-?}, runs $RUNS, samples $SAMPLES, sweep $SWEEP, seed samples $SEED_SAMPLES, lru_gen/enabled $(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo -)"

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

# goal NAME VALUE OP TARGET  (OP: ge|le): a RESULT line only
goal() {
	local ok
	ok=$(awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { if (v == "") print 0; else if (op == "ge") print (v >= t); else print (v <= t) }')
	echo "RESULT bench=goal name=$1 value=${2:-none} target=$3:$4 ok=$ok"
}

run timed munlock_bench ab $MIB "$RUNS"
run fine munlock_bench abfine 8 "$SAMPLES"
run locks munlock_bench locks $MIB
run seedloop mlock_seedloop 100 "$SEED_SAMPLES"

locks_lruopt=$(val $D/locks "bench=locks variant=lruopt op=munlock" per512)
locks_stock=$(val $D/locks "bench=locks variant=stock op=munlock" per512)
[ -n "$locks_lruopt" ] || locks_lruopt=$(val $D/fine "bench=abfine-ratio op=munlock" locks_per_512)
echo "RESULT bench=locks-per-512 stock=${locks_stock:-n/a} lruopt=${locks_lruopt:-n/a}"
check "batched munlock takes <= 8 lruvec locks per 512 pages ($locks_lruopt)" \
	awk -v x="$locks_lruopt" 'BEGIN { exit !(x != "" && x <= 8) }'

best="" bestv=""
for b in 16 64 256 512; do
	mun_batch $b
	if run sweep-$b munlock_bench abfine 8 "$SWEEP" >$D/sweep-$b.res; then
		p10=$(val $D/sweep-$b "bench=abfine-ratio op=munlock" p10_ratio)
		mn=$(val $D/sweep-$b "bench=abfine-ratio op=munlock" min_ratio)
		ml=$(val $D/sweep-$b "bench=abfine-ratio op=mlock" p10_ratio)
		lk=$(val $D/sweep-$b "bench=abfine-ratio op=munlock" locks_per_512)
		echo "RESULT bench=batch-sweep batch=$b munlock_p10_speedup=$p10 munlock_min_speedup=$mn mlock_p10_speedup=$ml locks_per_512=$lk"
		if [ -z "$bestv" ] || awk -v a="$p10" -v b="$bestv" 'BEGIN { exit !(a > b) }'; then
			best=$b bestv=$p10
		fi
	fi
	grep -v '^RESULT' $D/sweep-$b.res
done
mun_batch 256
echo "RESULT bench=batch-best batch=$best munlock_p10_speedup=$bestv"

goal munlock-speedup "$(val $D/fine "bench=abfine-ratio op=munlock" p10_ratio)" ge 1.5
goal munlock-locks-per-512 "$locks_lruopt" le 8
goal mlock-no-slower "$(val $D/fine "bench=abfine-ratio op=mlock" p10_ratio)" ge 0.95
goal seedloop-no-regression "$(val $D/seedloop "bench=seedloop-ratio" p10_ratio)" ge 0.95

mun_enable 1
mun_quiet_end
check "Mlocked in /proc/meminfo is 0 after the benchmark" wait_mlocked_zero 10
check_dmesg_clean "no kernel warnings during munlock-bench"
