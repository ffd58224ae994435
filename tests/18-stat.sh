#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 18-stat: lruopt-stat (per-interval deltas, like vmstat) and
# lruopt-prometheus (the node-exporter textfile collector) on the real
# tree: the columns are those of the features in the patch, the lines move
# with a known workload (hint and strict drains, an mlock/munlock walk)
# and add up to the counters, and the collector exports every counter file.
# (promtool checks the collector's format on the host: tests/pkg/check-deb.)
# lruopt-timeout: 600
. /tests/lib.sh
dmesg_mark "18-stat"
ensure_loaded

# colidx LABEL: the 1-based column of the first LABEL in the label line
colidx() {
	sed -n 2p /tmp/stat.out | awk -v l="$1" '{ for (i = 1; i <= NF; i++) if ($i == l) { print i; exit } }'
}
# colsum COL [FIRST]: the sum of column COL over the data lines, from the
# FIRST-th (default 1)
colsum() {
	grep '^ *[0-9]' /tmp/stat.out | awk -v c="$1" -v f="${2:-1}" 'NR >= f { s += $c } END { printf "%.0f\n", s }'
}
datalines() {
	grep -c '^ *[0-9]' /tmp/stat.out
}

want=""
for f in drain munlock memcg quiet lazyfree; do
	[ "$(readval "$LO/$f/supported")" = 1 ] && want="$want $f"
done
lruopt-stat >/tmp/stat.out 2>&1
diag "$(cat /tmp/stat.out)"
got=$(sed -n 1p /tmp/stat.out | tr -s ' -' '  ' | sed 's/^ //; s/ $//')
assert_eq "lruopt-stat: one group per feature in the patch" "${want# }" "$got"
assert_eq "lruopt-stat without arguments: header and one line" 3 "$(wc -l </tmp/stat.out)"

calls0=$(readval "$LO/drain/stats/calls")
hint_col=$(colidx hint)
strict_col=$(colidx strict)
calls_col=$(colidx calls)
pages_col=$(colidx pages)
check "lruopt-stat: hint, strict, calls and pages columns found" \
	test -n "$hint_col" -a -n "$strict_col" -a -n "$calls_col" -a -n "$pages_col"

# lruopt-stat and its sleeps stay on CPU 0: a process exiting on the memfd
# writer's CPU would drain the batch the seals must find (drain_call).
taskset -p 1 $$ >/dev/null
if ! check "lruopt-stat 1 runs, its first line printed" \
	bg_start spid /tmp/stat.out '^ *[0-9]' 60 lruopt-stat 1; then
	exit 1
fi
# Known work between the first line and the last: 10 hint drains
# (compaction), 4 strict ones (memfd seals), one mlock/munlock walk of
# 1 MiB (256 pages each way).
check "10 compactions (hint drains)" drain_call -c 0 -n 10 compact
check "4 memfd seals (strict drains)" drain_call -c 0 -w 1 -p 8 -n 4 memfd
check "one mlock/munlock walk of 1 MiB" mlockhold 1 1
# Two more lines, so that the last sample is after all of it.
nw=$(datalines)
i=0
while [ "$(datalines)" -lt $((nw + 2)) ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
bg_stop "$spid"
calls1=$(readval "$LO/drain/stats/calls")
diag "$(cat /tmp/stat.out)"
n=$(datalines)
check "lruopt-stat 1: two lines after the workload (got $n, $nw when it ended)" test "$n" -ge $((nw + 2))

hint=$(colsum "$hint_col" 2)
strict=$(colsum "$strict_col" 2)
pages=$(colsum "$pages_col" 2)
check "hint column: the 10 compactions show (deltas sum to $hint)" test "$hint" -ge 10
check "strict column: the 4 memfd seals show (deltas sum to $strict)" test "$strict" -ge 4
check "pages column: the 1 MiB walks show (deltas sum to $pages)" test "$pages" -ge 256
# The first line is the total, the others deltas: their sum is the counter
# at the last sample, between the reads before and after.
sum=$(colsum "$calls_col")
check "calls column: first line + deltas = the counter ($calls0 + 14 <= $sum <= $calls1)" \
	test "$sum" -ge $((calls0 + 14)) -a "$sum" -le "$calls1"
# A call counts in calls when it starts and in its caller row (hint) when it
# ends, so a line may show the calls in flight at the line before (here at
# most two: this shell's drain_call and one background caller) as hint
# without their calls; a dip of the derived strict column read as a reset
# would print its whole count (a line over by 4 and more after the seals).
check "every line: hint + strict <= calls + the 2 that may be in flight" \
	awk -v h="$hint_col" -v s="$strict_col" -v c="$calls_col" \
		'/^ *[0-9]/ && $h + $s > $c + 2 { print "line " NR ": " $0; bad = 1 } END { exit bad }' /tmp/stat.out

# The collector on the real tree: one sample for each counter file.
lruopt-prometheus --stdout >/tmp/prom.out 2>&1
rc=$?
assert_eq "lruopt-prometheus --stdout: exit status 0" 0 $rc
missing=""
for s in "$LO"/*/stats/*; do
	n=${s#"$LO"/}
	f=${n%%/*}
	n=${n##*/}
	case $f/$n in
	*/reset) continue ;;
	drain/calls) m='lruopt_drain_calls_total{class="hint"}' ;;
	drain/wait_ns_total) m=lruopt_drain_wait_seconds_total ;;
	drain/wait_ns_max) m=lruopt_drain_wait_max_seconds ;;
	*) m=lruopt_${f}_${n}_total ;;
	esac
	grep -qF "$m " /tmp/prom.out || missing="$missing $f/$n"
done
assert_eq "lruopt-prometheus: a metric for every counter file" "" "$missing"
h=$(sed -n 's/^lruopt_drain_calls_total{class="hint"} //p' /tmp/prom.out)
st=$(sed -n 's/^lruopt_drain_calls_total{class="strict"} //p' /tmp/prom.out)
check "lruopt-prometheus: hint ($h) and strict ($st) include the drains above" \
	test "${h:-0}" -ge 10 -a "${st:-0}" -ge 4
check_dmesg_clean "no kernel warnings"
