#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# run.sh - the A/B benchmark driver (rounds x configs x workloads).
#
# Runs in the test VM (tests/bench/demo boots it with this as the test suite)
# and on a real host (scripts/lruopt-ab).  The same code decides the round
# order, switches lruopt between the configurations and prints the samples,
# so the host mode is exercised by every `make demo`.
#
# usage: run.sh [options]
#   --rounds N        measured rounds (default 8, each order twice; --quick: 2)
#   --quick           small sizes (the workloads' --quick sizes), 2 rounds
#   --workloads LIST  comma-separated workload names (default: all w-*.sh
#                     but the optional ones, see tests/bench/README.md)
#   --configs SET     subset of ABCDEF to run (default ABC)
#   --no-tune         B, E and F without the workloads' tune settings:
#                     lruopt's defaults (the tune="..." of BENCH-WORKLOAD
#                     then reads "none")
#   --toggle          in-boot toggle mode, the same as --configs BC: lruopt
#                     is loaded once and B/C alternate by writes to
#                     /sys/kernel/lruopt/enabled (no insmod/rmmod between
#                     samples; what the older per-feature benchmarks did)
#   --ko PATH         the module (default $LRUOPT_KO or /lruopt.ko)
#   --ko-notrace PATH configuration F's module (default /lruopt-notrace.ko)
#   --workdir DIR     scratch directory (default /tmp/lruopt-bench)
#   --no-warmup       skip the unmeasured warm-up run of each workload
#   --host            host mode: refuse to start if lruopt is loaded, never
#                     touch a /dev/ram0 this run did not create; on INT/TERM
#                     unload the module and undo the setups before exiting
#
# Configurations:
#   A  lruopt not loaded (stock kernel)
#   B  lruopt loaded, /sys/kernel/lruopt/enabled=1 (plus the workload's
#      "tune" settings, restored after the run)
#   C  lruopt loaded, /sys/kernel/lruopt/enabled=0 (cost of being loaded:
#      the livepatch redirection and the switch checks)
#   D  lruopt loaded with patch_memcg=1, enabled=1 (6.1: the memcg lock in
#      the patch, as on a host that moves charges and opts in; on 6.12 the
#      same as B without the tune settings)
#   E  lruopt loaded with patch_quiet=1, enabled=1, plus the tune settings:
#      the LRU batch adders in the patch whether or not a CPU is quiet (on a
#      boot without isolated CPUs, B leaves them out): their cost on the
#      other CPUs, and what a quiet CPU (skip_cpus in the tune) gains
#   F  as B, with an lruopt.ko built without its trace calls
#      (KCFLAGS=-DLRUOPT_NO_TRACE, lruopt_trace.h): B against F is what the
#      trace events cost while nobody traces
# Each round runs every selected configuration once, in one of the orders
# ABCDEF, FEDCBA, BDFEAC, CAFEDB (round r uses the ((r-1) mod 4)-th,
# restricted to the selection: ABC, CBA, BAC, CAB by default), so each round
# with A, B, C needs at most one load and one unload (D, E and F cost one
# more of each);
# the workload order rotates by one per round.
#
# Console output (one line each; tests/bench/bench-report parses them):
#   BENCH-META key=value...                      once, at the start
#   BENCH-WORKLOAD name=W desc="..." tune="..."  per selected workload
#   BENCH-SKIP workload=W reason="..."           workload not run here
#   BENCH-PROGRESS round=R/N config=X workload=W step=S/T
#   BENCH kernel=K round=R config=X workload=W metric=M value=V unit=U better=B
#   BENCH-INFO ...                               load/unload times etc.
#   BENCH-ERROR round=R config=X workload=W rc=RC msg="..."
#   BENCH-DONE kernel=K samples=S errors=E secs=T
# Exit status: 0 when no run failed, 1 otherwise, 2 on usage errors.

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
ROUNDS="" QUICK=0 WORKLOADS="" CONFIGS=ABC WARMUP=1 HOST=0 NOTUNE=0
KO_ARG=${LRUOPT_KO:-/lruopt.ko} KO_NOTRACE=/lruopt-notrace.ko
WORKDIR=/tmp/lruopt-bench

usage() { sed -n '3,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--quick) QUICK=1; shift ;;
	--workloads) WORKLOADS=$2; shift 2 ;;
	--configs) CONFIGS=$2; shift 2 ;;
	--toggle) CONFIGS=BC; shift ;;
	--no-tune) NOTUNE=1; shift ;;
	--ko) KO_ARG=$2; shift 2 ;;
	--ko-notrace) KO_NOTRACE=$2; shift 2 ;;
	--workdir) WORKDIR=$2; shift 2 ;;
	--no-warmup) WARMUP=0; shift ;;
	--host) HOST=1; shift ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown argument '$1'" >&2; usage ;;
	esac
done
[ -n "$ROUNDS" ] || ROUNDS=$([ $QUICK = 1 ] && echo 2 || echo 8)
case $ROUNDS in '' | *[!0-9]* | 0) echo "run.sh: bad --rounds '$ROUNDS'" >&2; exit 2 ;; esac
case $CONFIGS in '' | *[!ABCDEF]*) echo "run.sh: bad --configs '$CONFIGS'" >&2; exit 2 ;; esac

mkdir -p "$WORKDIR" || exit 2
WORKDIR=$(cd "$WORKDIR" && pwd)
export BENCH_QUICK=$QUICK BENCH_WORKDIR=$WORKDIR BENCH_HOST=$HOST
export TAP_DIR=$WORKDIR/tap LRUOPT_KO=$KO_ARG
. "$BENCH_DIR/../lib.sh"
. "$BENCH_DIR/bench-lib.sh"
KREL=$(uname -r)
export BENCH_KSHORT=$(kernel_short)
T0=$(now)
rm -f "$WORKDIR/bg.pids"

# ------------------------------------------------------------ module state
# STATE: A (not loaded), B (loaded, enabled=1), C (loaded, enabled=0)
if lruopt_loaded 2>/dev/null; then
	if [ $HOST = 1 ]; then
		echo "run.sh: lruopt is already loaded; unload it first (configuration A is the stock kernel)" >&2
		exit 2
	fi
	unload_lruopt >/dev/null || { echo "run.sh: cannot unload lruopt" >&2; exit 2; }
fi
[ -f "$KO" ] || { echo "run.sh: module $KO not found" >&2; exit 2; }
case $CONFIGS in *F*)
	[ -f "$KO_NOTRACE" ] || { echo "run.sh: configuration F's module $KO_NOTRACE not found" >&2; exit 2; } ;;
esac
STATE=A
# The events companion stays loaded between configurations (it runs no
# code); a host gets back what it had.
EV0=0
events_loaded && EV0=1
events_restore() {
	[ $HOST = 1 ] && [ $EV0 = 0 ] && events_loaded && rmmod lruopt_events
	return 0
}

info() { echo "BENCH-INFO $*"; }

# In the VM on PREEMPT_RT: the timer and RCU threads above the workloads'
# SCHED_FIFO 50 hogs, as make check does (tests/lib.sh says why).  Not on
# a real host: its RT set-up is the operator's.
if [ $HOST = 0 ] && is_rt; then
	rt_kthreads_above_hogs >/dev/null || echo "run.sh: could not raise the RT kthreads" >&2
fi

# goto_config X: bring the module into configuration X
# config_params X: the module parameters configuration X loads with
config_params() {
	case $1 in
	D) echo patch_memcg=1 ;;
	E) echo patch_quiet=1 ;;
	esac
}

goto_config() {
	local out ko=$KO
	[ "$1" = F ] && ko=$KO_NOTRACE
	[ "$STATE" = "$1" ] && return 0
	# D and E load with their own module parameters, F another module:
	# between any of them and the others it is reloaded (through A)
	case $STATE$1 in
	[BCEF]D | D[BCEF] | [BCDF]E | E[BCDF] | [BCDE]F | F[BCDE]) goto_config A || return 1 ;;
	esac
	case $1 in
	A)
		out=$(unload_lruopt 2>&1) || { echo "$out" >&2; return 1; }
		info "action=unload $(echo "$out" | sed -n 's/.*unloaded in \([0-9.]*\)s.*/secs=\1/p')"
		;;
	B | C | D | E | F)
		if [ "$STATE" = A ]; then
			# shellcheck disable=SC2046
			out=$(KO=$ko; load_lruopt $(config_params "$1") 2>&1) ||
				{ echo "$out" >&2; return 1; }
			# load_lruopt ran in a subshell: take the time from its message
			info "action=load config=$1 ko=$ko $(echo "$out" | sed -n 's/.*transition \([0-9.]*\)s, total \([0-9.]*\)s.*/transition_secs=\1 secs=\2/p')"
		fi
		write_quiet "$LO/enabled" "$([ "$1" = C ] && echo 0 || echo 1)" ||
			{ echo "cannot write $LO/enabled" >&2; return 1; }
		;;
	esac
	STATE=$1
	# let the transition's kworkers and RCU callbacks settle
	sleep 0.5
}

# ------------------------------------------------------------ workloads
# wl_verb W VERB: run an optional verb; empty output if not implemented
wl_verb() {
	BENCH_NAME=$1 sh "$BENCH_DIR/w-$1.sh" "$2" 2>/dev/null || true
}

selected() {
	[ -z "$WORKLOADS" ] && return 0
	case ",$WORKLOADS," in *",$1,"*) return 0 ;; esac
	return 1
}

echo "BENCH-META kernel=$KREL short=$BENCH_KSHORT ncpu=$(nproc) mem_kb=$(meminfo MemTotal) accel=${ACCEL:-none} host=$HOST rounds=$ROUNDS quick=$QUICK configs=$CONFIGS warmup=$WARMUP notune=$NOTUNE lru_gen=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo none) ko=$KO"

WL=""
for f in "$BENCH_DIR"/w-*.sh; do
	[ -e "$f" ] || continue
	w=$(basename "$f" .sh)
	w=${w#w-}
	selected "$w" || continue
	# an optional workload runs only when named (--workloads)
	why=$(wl_verb "$w" optional)
	if [ -z "$WORKLOADS" ] && [ -n "$why" ]; then
		echo "BENCH-SKIP workload=$w reason=\"not in the default set ($(echo "$why" | tr '"' "'")): --workloads $w\""
		continue
	fi
	kpat=$(wl_verb "$w" kernels)
	if [ -n "$kpat" ]; then
		ok=0
		for p in $kpat; do
			# shellcheck disable=SC2254
			case $BENCH_KSHORT in $p) ok=1 ;; esac
		done
		if [ $ok = 0 ]; then
			echo "BENCH-SKIP workload=$w reason=\"only for kernels: $kpat\""
			continue
		fi
	fi
	out=$(BENCH_NAME=$w sh "$f" setup 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "BENCH-SKIP workload=$w reason=\"setup failed (status $rc): $(echo "$out" | tr '\n"' ' '"'" | cut -c1-200)\""
		continue
	fi
	echo "BENCH-WORKLOAD name=$w desc=\"$(wl_verb "$w" describe | tr '"' "'")\" tune=\"$(wl_tune "$w" | tr '\n' ',' | sed 's/,$//')\""
	WL="$WL $w"
done
NWL=$(echo $WL | wc -w)
if [ "$NWL" -eq 0 ]; then
	echo "BENCH-DONE kernel=$KREL samples=0 errors=1 secs=$(elapsed_since "$T0")"
	exit 1
fi

# wl_tune W: config B's settings for W ("none" with --no-tune)
wl_tune() {
	if [ "$NOTUNE" = 1 ]; then
		echo none
	else
		wl_verb "$1" tune
	fi
}

# tune_apply W / tune_restore: config B's per-workload settings
tune_apply() {
	: >"$WORKDIR/tune.restore"
	[ "$NOTUNE" = 1 ] && return 0
	wl_verb "$1" tune | while read -r file val; do
		[ -n "$file" ] || continue
		echo "$file $(cat "$LO/$file")" >>"$WORKDIR/tune.restore"
		write_quiet "$LO/$file" "$val" || echo "cannot set $LO/$file=$val" >&2
	done
}
tune_restore() {
	[ -f "$WORKDIR/tune.restore" ] || return 0
	while read -r file val; do
		write_quiet "$LO/$file" "$val"
	done <"$WORKDIR/tune.restore"
	rm -f "$WORKDIR/tune.restore"
}

kill_leftovers() {
	[ -f "$WORKDIR/bg.pids" ] || return 0
	kill -KILL $(cat "$WORKDIR/bg.pids") 2>/dev/null
	rm -f "$WORKDIR/bg.pids"
}

# Interrupted (Ctrl-C on a host): leave the machine as it was.
on_signal() {
	trap - INT TERM
	echo "BENCH-ERROR round=- config=- workload=- rc=130 msg=\"interrupted\""
	kill_leftovers
	tune_restore
	goto_config A >/dev/null 2>&1
	events_restore
	for w in $WL; do wl_verb "$w" cleanup >/dev/null; done
	drain_trace_cleanup
	exit 130
}
trap on_signal INT TERM

SAMPLES=0 ERRORS=0
RUN_LIMIT=$([ "$SLOW" = 1 ] && echo 600 || echo 300)

# run_one ROUND CONFIG W: one run; ROUND 0 = warm-up (output discarded)
run_one() {
	local r=$1 c=$2 w=$3 rc n msg
	if [ "$c" = B ] || [ "$c" = E ] || [ "$c" = F ]; then
		tune_apply "$w"
		for f in "$LO"/*/stats/reset; do write_quiet "$f" 0; done
	fi
	BENCH_CONFIG=$c BENCH_ROUND=$r BENCH_NAME=$w \
		timeout -s KILL "$RUN_LIMIT" sh "$BENCH_DIR/w-$w.sh" run \
		>"$WORKDIR/run.out" 2>"$WORKDIR/run.err"
	rc=$?
	if [ "$c" = B ] || [ "$c" = E ] || [ "$c" = F ]; then
		tune_restore
		# what lruopt did during the run (diagnostics, not samples)
		[ "$r" = 0 ] || for d in "$LO"/*/stats; do
			echo "BENCH-INFO round=$r config=$c workload=$w stats=$(basename "$(dirname "$d")") $(
				for f in "$d"/*; do
					[ "${f##*/}" = reset ] || printf '%s=%s ' "${f##*/}" "$(cat "$f")"
				done)"
		done
	fi
	kill_leftovers
	[ "$r" = 0 ] && [ $rc -eq 0 ] && return 0
	n=$(grep -c '^RESULT ' "$WORKDIR/run.out")
	if [ "$r" != 0 ]; then
		sed -n 's/^RESULT /BENCH kernel='"$KREL"' round='"$r"' config='"$c"' /p' "$WORKDIR/run.out"
		sed -n 's/^INFO /BENCH-INFO round='"$r"' config='"$c"' workload='"$w"' /p' "$WORKDIR/run.out"
		SAMPLES=$((SAMPLES + n))
	fi
	if [ $rc -ne 0 ] || [ "$n" -eq 0 ]; then
		ERRORS=$((ERRORS + 1))
		msg=$(cat "$WORKDIR/run.err" "$WORKDIR/run.out" | grep -v '^RESULT ' | tr '\n"' ' '"'" | cut -c1-300)
		echo "BENCH-ERROR round=$r config=$c workload=$w rc=$rc msg=\"$msg\""
	fi
}

# ------------------------------------------------------------ rounds
TOTAL=$((ROUNDS * ${#CONFIGS} * NWL))
STEP=0
if [ $WARMUP = 1 ]; then
	for w in $WL; do
		echo "BENCH-PROGRESS round=0/$ROUNDS config=A workload=$w step=0/$TOTAL warmup=1"
		run_one 0 A "$w"
	done
fi
r=1
while [ $r -le "$ROUNDS" ]; do
	case $(((r - 1) % 4)) in
	0) order=ABCDEF ;; 1) order=FEDCBA ;; 2) order=BDFEAC ;; 3) order=CAFEDB ;;
	esac
	# keep only the configured configurations, in this round's order
	order=$(echo "$order" | tr -cd "$CONFIGS")
	# rotate the workload list by (r-1)
	set -- $WL
	k=$(((r - 1) % NWL))
	while [ $k -gt 0 ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k - 1))
	done
	wl_round=$*
	info "round=$r order=$order workloads=$(echo $wl_round | tr ' ' ',')"
	for c in $(echo "$order" | sed 's/./& /g'); do
		if ! goto_config "$c"; then
			ERRORS=$((ERRORS + 1))
			echo "BENCH-ERROR round=$r config=$c workload=- rc=1 msg=\"cannot switch to configuration $c\""
			break 2
		fi
		for w in $wl_round; do
			STEP=$((STEP + 1))
			echo "BENCH-PROGRESS round=$r/$ROUNDS config=$c workload=$w step=$STEP/$TOTAL"
			run_one "$r" "$c" "$w"
		done
	done
	r=$((r + 1))
done

goto_config A || ERRORS=$((ERRORS + 1))
events_restore
for w in $WL; do
	wl_verb "$w" cleanup >/dev/null
done
drain_trace_cleanup
echo "BENCH-DONE kernel=$KREL samples=$SAMPLES errors=$ERRORS secs=$(elapsed_since "$T0")"
[ $ERRORS -eq 0 ]
