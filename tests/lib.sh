# SPDX-License-Identifier: GPL-2.0
# lib.sh - helpers for the in-guest lruopt tests (busybox ash).
#
# Sourced by every tests/NN-*.sh.  Modelled on the kernel's
# tools/testing/selftests/livepatch/functions.sh, but emits TAP:
#   ok N - name
#   not ok N - name
#   ok N - name # SKIP reason
#   # diagnostic lines
# Result numbering is global across test files (run-all.sh prints the plan
# and the final LRUOPT-TESTS-DONE line), so the counters live in files under
# $TAP_DIR rather than in shell variables.
#
# Conventions: helper functions return 0/1 and print plain diagnostics (check
# turns them into "# ..." lines);
# only pass/fail/check/assert_* and expect_* emit TAP results.  Every
# assertion has a concrete failure condition.

LP=/sys/kernel/livepatch/lruopt        # livepatch core's view of the patch
LO=/sys/kernel/lruopt                  # the module's own sysfs tree
KO=${LRUOPT_KO:-/lruopt.ko}
# The companion that owns the lruopt:* trace events before 6.3
# (lruopt_events.c; events_owner): lruopt.ko loads without it
# and links to it when it is there.  Where the image has it, run-all.sh and
# load_lruopt load it first, as modprobe lruopt does (softdep), so that the
# tests see the events; the iso suite's image has none (lruopt.ko alone).
EVKO=${LRUOPT_EVENTS_KO:-${KO%/*}/lruopt_events.ko}

# Module parameters for every load (kernel command line lruopt.ko_params=,
# several joined by '+'; lib-memcg.sh adds its own): space-separated here.
LRUOPT_KO_PARAMS=$(echo "${LRUOPT_KO_PARAMS:-}" | tr '+' ' ')
TAP_DIR=${TAP_DIR:-/tmp/tap}

# Guest speed depends on how QEMU runs (see tests/vm/vmrun): with all vCPUs on
# one host thread everything takes ~4x longer, so timeouts scale with it.
# /init saved the command line to /tmp/cmdline before any module could
# patch /proc/cmdline (samples/livepatch does exactly that).
CMDLINE_FILE=/tmp/cmdline
[ -f "$CMDLINE_FILE" ] || CMDLINE_FILE=/proc/cmdline
ACCEL=$(sed -n 's/.*lruopt\.accel=\([^ ]*\).*/\1/p' "$CMDLINE_FILE" 2>/dev/null)
case $ACCEL in
*thread=single*) SLOW=1 ;;
*) SLOW=0 ;;
esac
TRANSITION_TIMEOUT=${LRUOPT_TRANSITION_TIMEOUT:-180}

mkdir -p "$TAP_DIR"
[ -f "$TAP_DIR/count" ] || echo 0 >"$TAP_DIR/count"
[ -f "$TAP_DIR/pass" ] || echo 0 >"$TAP_DIR/pass"
[ -f "$TAP_DIR/fail" ] || echo 0 >"$TAP_DIR/fail"
[ -f "$TAP_DIR/skip" ] || echo 0 >"$TAP_DIR/skip"
[ -f "$TAP_DIR/file_count" ] || echo 0 >"$TAP_DIR/file_count"
[ -f "$TAP_DIR/file_fail" ] || echo 0 >"$TAP_DIR/file_fail"

# ------------------------------------------------------------------ output

diag() {
	local l
	# Each line of a multi-line message becomes its own "# " line.
	printf '%s\n' "$*" | while IFS= read -r l; do printf '# %s\n' "$l"; done
}

# Write to the kernel log, so dmesg shows where each test was.  Never use
# words the dmesg check looks for (WARNING, BUG, ...) in these lines.
klog() {
	echo "lruopt-test: $*" >/dev/kmsg 2>/dev/null
}

_inc() {
	local n
	n=$(cat "$TAP_DIR/$1")
	n=$((n + 1))
	echo "$n" >"$TAP_DIR/$1"
	echo "$n"
}

pass() {
	local n
	n=$(_inc count)
	_inc pass >/dev/null
	_inc file_count >/dev/null
	echo "ok $n - $*"
}

# skip NAME REASON: a TAP skip, "ok N - NAME # SKIP REASON": the check could
# not run here (a kernel without the feature, a missing tool).  run-all.sh
# counts skips apart from passes.
skip() {
	local n
	n=$(_inc count)
	_inc skip >/dev/null
	_inc file_count >/dev/null
	echo "ok $n - $1 # SKIP ${2:-no reason given}"
}

# fail NAME [DIAG...]: a failed result; extra arguments become diagnostics.
fail() {
	local n name=$1
	shift
	n=$(_inc count)
	_inc fail >/dev/null
	_inc file_count >/dev/null
	_inc file_fail >/dev/null
	echo "not ok $n - $name"
	echo "$name" >>"$TAP_DIR/failed-names"
	[ $# -eq 0 ] || diag "$@"
	klog "result: not ok $n - $name"
}

# _capture CMD [ARGS...]: run CMD in this shell (so functions may set
# globals), its output into _OUT and its exit status into _RC.
_capture() {
	"$@" >"$TAP_DIR/out.$$" 2>&1
	_RC=$?
	_OUT=$(cat "$TAP_DIR/out.$$")
	rm -f "$TAP_DIR/out.$$"
}

# check NAME CMD [ARGS...]: ok when CMD succeeds.  CMD runs in this shell,
# not in a subshell, so functions may set globals (LOAD_SECS, workload pids);
# its output is shown as diagnostics.
check() {
	_check_as 0 "$@"
}

# check_not NAME CMD [ARGS...]: ok when CMD fails.
check_not() {
	_check_as 1 "$@"
}

# _check_as WANT NAME CMD...: WANT 0: CMD must succeed, 1: it must fail
_check_as() {
	local want=$1 name=$2
	shift 2
	_capture "$@"
	if [ $_RC -ne 0 ] && [ "$want" = 1 ]; then
		pass "$name"
		return 0
	fi
	if [ $_RC -eq 0 ] && [ "$want" = 0 ]; then
		pass "$name"
		[ -z "$_OUT" ] || diag "$_OUT"
		return 0
	fi
	if [ "$want" = 0 ]; then
		fail "$name" "command failed (status $_RC): $*" ${_OUT:+"$_OUT"}
	else
		fail "$name" "command unexpectedly succeeded: $*" ${_OUT:+"$_OUT"}
	fi
	return 1
}

# Show a value readably in a result name (long strings are summarised).
_show() {
	local v=$1
	if [ ${#v} -gt 24 ]; then
		echo "<${#v} chars>"
	else
		# newlines shown as \n so a TAP line stays one line
		printf "'%s'" "$(printf '%s' "$v" | awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }')"
	fi
}

assert_eq() {
	local name=$1 exp=$2 act=$3
	if [ "$exp" = "$act" ]; then
		pass "$name"
		return 0
	fi
	# Full values in the diagnostics (the name only has a summary).
	fail "$name" "expected: '$exp'" "actual:   '$act'"
	return 1
}

# ------------------------------------------------------------------ files

# readval FILE: print the file's content (lines joined by newlines, no
# trailing newline), or "<unreadable: FILE>".  Uses the shell's read
# builtin rather than cat: one exec less per value matters under TCG.
readval() {
	local l out="" n=0
	if ! { :; } 2>/dev/null <"$1"; then
		printf '<unreadable: %s>' "$1"
		return
	fi
	while IFS= read -r l || [ -n "$l" ]; do
		if [ $n -eq 0 ]; then
			out=$l
		else
			out="$out
$l"
		fi
		n=$((n + 1))
	done <"$1"
	printf '%s' "$out"
}

# assert_file_mode FILE MODE: exists, is owned by root:root, has octal MODE.
assert_file_mode() {
	local f=$1 mode=$2 got
	if [ ! -e "$f" ]; then
		fail "$f has mode $mode" "$f does not exist"
		return 1
	fi
	got=$(stat -c '%a %u:%g' "$f")
	assert_eq "$f has mode $mode, owner root" "$mode 0:0" "$got"
}

# expect_write_fails [-n] FILE VALUE [ERRNO]: writing VALUE (plus a newline
# with -n, like echo) must fail with ERRNO (default EINVAL; "any" accepts any
# errno) and the file must read back exactly as before.
expect_write_fails() {
	local nl="" f v want before res after name
	if [ "$1" = "-n" ]; then nl=-n; shift; fi
	f=$1 v=$2 want=${3:-EINVAL}
	name="$f rejects $(_show "$v")${nl:+ + newline} ($want), value kept"
	before=$(readval "$f")
	res=$(kwrite $nl "$f" "$v")
	after=$(readval "$f")
	case $res in
	*-err\ *)
		if [ "$want" != any ] && [ "${res#*-err }" != "$want" ]; then
			fail "$name" "write failed with ${res#*-err }, expected $want"
			return 1
		fi ;;
	*)
		fail "$name" "write was accepted ($res); value now $(_show "$after")"
		return 1 ;;
	esac
	if [ "$before" != "$after" ]; then
		fail "$name" "value changed from $(_show "$before") to $(_show "$after")"
		return 1
	fi
	pass "$name"
}

# expect_write_ok [-n] FILE VALUE EXPECTED: the write succeeds, consumes the
# whole buffer, and the file then reads EXPECTED.
expect_write_ok() {
	local nl="" f v exp res after len name
	if [ "$1" = "-n" ]; then nl=-n; shift; fi
	f=$1 v=$2 exp=$3
	name="$f accepts $(_show "$v")${nl:+ + newline} -> $(_show "$exp")"
	res=$(kwrite $nl "$f" "$v")
	len=${#v}
	[ -z "$nl" ] || len=$((len + 1))
	after=$(readval "$f")
	if [ "$res" != "ok $len" ]; then
		fail "$name" "write result: $res (expected 'ok $len'); value now $(_show "$after")"
		return 1
	fi
	assert_eq "$name" "$exp" "$after"
}

# write_quiet FILE VALUE: echo VALUE > FILE, returning write success; for
# fast toggling loops that report their own results.
write_quiet() {
	echo "$2" 2>/dev/null >"$1"
}

# meminfo KEY: value (kB) of KEY in /proc/meminfo, e.g. meminfo Mlocked
meminfo() {
	awk -v k="$1:" '$1 == k { print $2; f = 1 } END { if (!f) print "?" }' /proc/meminfo
}

# stat_refresh: fold every CPU's vmstat deltas into the global counters,
# which /proc/meminfo shows without them (tens of pages per CPU for a zone
# counter such as NR_MLOCK)
stat_refresh() {
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
}

# quiet_mm: kernel threads that move pages at times of their own make
# exact counts flaky; stop them for a test (restore_mm puts the old values
# back, saved in /tmp/mm-quiet; both are idempotent).
#  - khugepaged calls lru_add_drain_all() at the start of every scan pass,
#    and a long scan_sleep does not hold it: while its list of mms is empty
#    it waits for the first THP-able vma, so any helper that maps 2 MiB of
#    anonymous memory (drain_call collapse, faultloop) wakes it at a time
#    of its own.  THP "never" stops the thread (start_stop_khugepaged());
#    MADV_COLLAPSE, the collapse drains' caller, ignores the setting.
#  - kcompactd's proactive compaction drains its own CPU's batch
#    (compact_zone()) and migrates pages out of a test's range: a migrated
#    folio waits in kcompactd's CPU's batch, off the LRU.  Proactiveness 0.
#  - a watermark boost (a fallback steal of a pageblock) wakes kswapd for a
#    run that sets ZONE_RECLAIM_ACTIVE, which lazyfree reads as pressure.
#    watermark_boost_factor 0.
MM_THP=/sys/kernel/mm/transparent_hugepage/enabled
MM_PRO=/proc/sys/vm/compaction_proactiveness
MM_BOOST=/proc/sys/vm/watermark_boost_factor
quiet_mm() {
	[ -f /tmp/mm-quiet ] && return 0
	{
		[ -w $MM_THP ] && echo "thp=$(sed 's/.*\[\(.*\)\].*/\1/' $MM_THP)"
		[ -w $MM_PRO ] && echo "pro=$(cat $MM_PRO)"
		[ -w $MM_BOOST ] && echo "boost=$(cat $MM_BOOST)"
	} >/tmp/mm-quiet
	[ -w $MM_THP ] && echo never >$MM_THP
	[ -w $MM_PRO ] && echo 0 >$MM_PRO
	[ -w $MM_BOOST ] && echo 0 >$MM_BOOST
	return 0
}
restore_mm() {
	local v
	[ -f /tmp/mm-quiet ] || return 0
	v=$(sed -n 's/^thp=//p' /tmp/mm-quiet)
	[ -z "$v" ] || echo "$v" >$MM_THP
	v=$(sed -n 's/^pro=//p' /tmp/mm-quiet)
	[ -z "$v" ] || echo "$v" >$MM_PRO
	v=$(sed -n 's/^boost=//p' /tmp/mm-quiet)
	[ -z "$v" ] || echo "$v" >$MM_BOOST
	rm -f /tmp/mm-quiet
}

# ------------------------------------------------------------------ time

now() {
	local up rest
	read -r up rest </proc/uptime
	echo "$up"
}

# now_cs: sets NOW_CS to the uptime in centiseconds, without forking (for
# loops where a process per timestamp would dominate on an emulated CPU).
now_cs() {
	local up rest
	read -r up rest </proc/uptime
	# "12.05" -> 12*100 + (105 - 100): the leading 1 keeps "05" from
	# being read as octal.
	NOW_CS=$(( ${up%.*} * 100 + 1${up#*.} - 100 ))
}

# elapsed_since T0: seconds (2 decimals) since a value returned by now()
elapsed_since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'
}

# ------------------------------------------------------------------ dmesg

# dmesg_mark [LABEL]: remember "now" in the kernel log; check_dmesg_clean
# looks only at messages after the most recent mark.
dmesg_mark() {
	local id
	# A unique token, not just the label: labels repeat across files.
	id="mark-$$-$(now)"
	echo "$id" >"$TAP_DIR/mark"
	klog "$id ${1:-}"
}

# Kernel messages that must never appear during the tests.
BAD_DMESG='WARNING:|BUG:|Oops|Call Trace|general protection|kernel BUG|Kernel panic|blocked for more than|hung_task|rcu.*stall|soft lockup|hard LOCKUP|list_add corruption|list_del corruption|refcount_t:|bad page|Bad page|UBSAN|segfault'

# dmesg_since_mark: kernel log after the latest dmesg_mark (whole log if none)
dmesg_since_mark() {
	local m=""
	[ -f "$TAP_DIR/mark" ] && m=$(cat "$TAP_DIR/mark")
	if [ -z "$m" ]; then
		dmesg
	else
		dmesg | awk -v m="lruopt-test: $m" 'index($0, m) { buf = ""; seen = 1; next } { buf = buf $0 "\n" } END { printf "%s", buf }'
	fi
}

# check_dmesg_clean NAME [all]: no BAD_DMESG pattern since the mark (or in
# the whole log with "all").  On failure shows the offending lines with
# context.
check_dmesg_clean() {
	local name=$1 log bad
	if [ "${2:-}" = all ]; then log=$(dmesg); else log=$(dmesg_since_mark); fi
	bad=$(printf '%s\n' "$log" | grep -nE "$BAD_DMESG")
	if [ -z "$bad" ]; then
		pass "$name"
		return 0
	fi
	fail "$name" "kernel log contains:" "$(printf '%s\n' "$bad" | head -20)" \
		"--- context ---" "$(printf '%s\n' "$log" | grep -E -A25 -B5 "$BAD_DMESG" | head -80)"
	return 1
}

# dmesg_tail [N]: last N (20) kernel log lines as diagnostics
dmesg_tail() {
	diag "--- dmesg tail ---"
	diag "$(dmesg | tail -n "${1:-20}")"
}

# ------------------------------------------------------------------ livepatch

lruopt_loaded() {
	grep -q '^lruopt ' /proc/modules
}

events_loaded() {
	grep -q '^lruopt_events ' /proc/modules
}

# load_events: insmod the companion unless it is loaded or the image has
# none (no output then).
load_events() {
	local out
	[ -f "$EVKO" ] || return 0
	events_loaded && return 0
	if ! out=$(insmod "$EVKO" 2>&1); then
		echo "insmod $EVKO failed: $out"
		return 1
	fi
}

# trace_abi: the trace ABI lruopt.ko was built for (its modinfo trace_abi,
# read from the file: the image has no modinfo).
trace_abi() {
	strings "$KO" | sed -n 's/^trace_abi=//p' | head -n 1
}

# events_owner: the module that owns the lruopt:* events, lruopt (6.3+) or
# lruopt_events (before): lruopt.ko's modinfo trace_events, read from the file.
events_owner() {
	strings "$KO" | sed -n 's/^trace_events=//p' | head -n 1
}

# FOREIGN_ABI: the trace ABI of foreign_events' companion.
FOREIGN_ABI=0123456789abcdef

# foreign_events OUT: write to OUT an lruopt_events.ko of "another build":
# this build's companion with its trace ABI replaced by $FOREIGN_ABI (in its
# lruopt_events_abi string and its modinfo alike: binsub replaces all).
foreign_events() {
	local abi
	abi=$(trace_abi)
	[ ${#abi} -eq 16 ] || { echo "no trace_abi in $KO: '$abi'"; return 1; }
	binsub "$EVKO" "$1" "$abi" "$FOREIGN_ABI" >/dev/null
}

# old_events OUT: write to OUT an lruopt_events.ko shaped as 0.3.0's, which
# an upgrade may leave loaded: foreign_events' other trace ABI, and no
# lruopt_events_ops (0.3.0 exported only lruopt_events_abi): its name is
# replaced by one of the same length that still sorts after
# lruopt_events_abi (the loader bsearches a module's sorted __ksymtab).
old_events() {
	foreign_events "$1.tmp" || return 1
	binsub "$1.tmp" "$1" lruopt_events_ops lruopt_events_old >/dev/null
	local rc=$?
	rm -f "$1.tmp"
	return $rc
}

# wait_transition [TIMEOUT]: poll $LP/transition until it reads 0.  Sets
# TRANSITION_SECS.  On timeout shows which tasks are still unpatched
# (/proc/PID/patch_state) and their kernel stacks.
wait_transition() {
	local timeout=${1:-$TRANSITION_TIMEOUT} t0 v p st
	t0=$(now)
	TRANSITION_SECS=""
	while :; do
		if [ ! -e "$LP/transition" ]; then
			echo "$LP/transition does not exist"
			return 1
		fi
		v=$(cat "$LP/transition" 2>/dev/null)
		if [ "$v" = 0 ]; then
			TRANSITION_SECS=$(elapsed_since "$t0")
			echo "$TRANSITION_SECS" >>"$TAP_DIR/transition-times"
			return 0
		fi
		if awk -v a="$(elapsed_since "$t0")" -v t="$timeout" 'BEGIN { exit !(a >= t) }'; then
			break
		fi
		sleep 0.1
	done
	echo "transition still in progress after ${timeout}s (enabled=$(readval "$LP/enabled"))"
	show_pending_tasks
	return 1
}

# show_pending_tasks: tasks taking part in a livepatch transition that have
# not switched yet, with their kernel stacks (why the transition waits).
show_pending_tasks() {
	local p st target
	# patch_state: -1 = no transition, 0 = unpatched, 1 = patched; the
	# target state is the patch's enabled value.
	target=$(readval "$LP/enabled")
	for p in /proc/[0-9]*; do
		st=$(cat "$p/patch_state" 2>/dev/null) || continue
		[ "$st" = -1 ] && continue
		[ "$st" = "$target" ] && continue
		echo "pid ${p#/proc/} ($(cat "$p/comm" 2>/dev/null)) patch_state=$st"
		sed 's/^/    /' "$p/stack" 2>/dev/null | head -12
	done | head -120
}

# load_lruopt [PARAMS...]: insmod (the events companion first, where the
# image has it, as modprobe does), check the livepatch directory appeared
# and wait for the patch transition.  Sets LOAD_SECS (insmod..transition done).
load_lruopt() {
	local t0 out
	t0=$(now)
	if lruopt_loaded; then
		echo "lruopt is already loaded"
		return 1
	fi
	if [ ! -f "$KO" ]; then
		echo "$KO is missing from the initramfs"
		return 1
	fi
	[ "${LOAD_ALONE:-0}" = 1 ] || load_events || return 1
	# LRUOPT_KO_PARAMS (kernel command line lruopt.ko_params=..., several
	# joined by '+') adds module parameters to every load, e.g. for
	# debugging the module or tests/bench/demo --ko-params.
	if ! out=$(insmod "$KO" $LRUOPT_KO_PARAMS "$@" 2>&1); then
		echo "insmod $KO $LRUOPT_KO_PARAMS $* failed: $out"
		dmesg | tail -n 15 | sed 's/^/  /'
		return 1
	fi
	if [ ! -d "$LP" ]; then
		echo "insmod succeeded but $LP does not exist"
		return 1
	fi
	wait_transition || return 1
	LOAD_SECS=$(elapsed_since "$t0")
	echo "loaded; transition ${TRANSITION_SECS}s, total ${LOAD_SECS}s"
}

# load_lruopt_alone [PARAMS...]: load_lruopt without the companion, as a
# plain "insmod lruopt.ko" does.
load_lruopt_alone() {
	local rc
	LOAD_ALONE=1
	load_lruopt "$@"
	rc=$?
	LOAD_ALONE=0
	return $rc
}

# unload_lruopt: disable the patch, wait for the unpatch transition to end
# and the livepatch directory to go, then rmmod.  Sets UNLOAD_SECS (whole
# operation) and TRANSITION_SECS (disable -> directory gone).
unload_lruopt() {
	local t0 t1 out
	t0=$(now)
	# A module still in init (e.g. an insmod left running by a test that
	# was killed) has $LP with enabled=0 until klp_enable_patch() gets
	# going: wait for the load to finish before deciding anything.
	t1=$(now)
	while [ "$(readval /sys/module/lruopt/initstate)" = coming ]; do
		if awk -v a="$(elapsed_since "$t1")" -v t="$TRANSITION_TIMEOUT" 'BEGIN { exit !(a >= t) }'; then
			echo "lruopt still initialising (initstate coming) after ${TRANSITION_TIMEOUT}s"
			return 1
		fi
		sleep 0.1
	done
	if [ -d "$LP" ]; then
		if [ "$(readval "$LP/enabled")" = 1 ]; then
			if ! echo 0 >"$LP/enabled"; then
				echo "echo 0 > $LP/enabled failed"
				return 1
			fi
		fi
		# Done when the directory is gone: after the unpatch transition
		# the livepatch core frees the patch (and its sysfs directory)
		# from a work item, which may be before we ever saw transition=0.
		t1=$(now)
		while [ -d "$LP" ]; do
			# Should the patch be (re-)enabled meanwhile, disable it.
			[ "$(readval "$LP/enabled")" = 1 ] && echo 0 2>/dev/null >"$LP/enabled"
			if awk -v a="$(elapsed_since "$t1")" -v t="$TRANSITION_TIMEOUT" 'BEGIN { exit !(a >= t) }'; then
				echo "$LP still present ${TRANSITION_TIMEOUT}s after disabling (enabled=$(readval "$LP/enabled") transition=$(readval "$LP/transition") initstate=$(readval /sys/module/lruopt/initstate))"
				show_pending_tasks
				return 1
			fi
			sleep 0.1
		done
		TRANSITION_SECS=$(elapsed_since "$t1")
		echo "$TRANSITION_SECS" >>"$TAP_DIR/transition-times"
	fi
	if lruopt_loaded; then
		if ! out=$(rmmod lruopt 2>&1); then
			echo "rmmod lruopt failed: $out (refcnt $(readval /sys/module/lruopt/refcnt))"
			return 1
		fi
	fi
	if lruopt_loaded; then
		echo "lruopt still listed in /proc/modules after rmmod"
		return 1
	fi
	if [ -e "$LO" ]; then
		echo "$LO still exists after rmmod"
		return 1
	fi
	UNLOAD_SECS=$(elapsed_since "$t0")
	echo "unloaded in ${UNLOAD_SECS}s"
}

# run_cycles N WHAT FN: N results "cycle I/N WHAT", each ok when FN succeeds
# (FN runs in this shell, through check).  After a failed cycle the module
# state is unknown and more cycles would only add noise: the rest are one
# failure "not run", the kernel log tail is shown, and run_cycles fails.
run_cycles() {
	local n=$1 what=$2 fn=$3 i=1
	while [ $i -le "$n" ]; do
		if ! check "cycle $i/$n $what" "$fn"; then
			fail "cycles $((i + 1))..$n not run after cycle $i failed"
			dmesg_tail 40
			return 1
		fi
		i=$((i + 1))
	done
}

# ensure_loaded / ensure_unloaded: bring the module to a known state at the
# start of a test file (each file must also work when run alone), reporting
# a failure if that is impossible.
ensure_loaded() {
	lruopt_loaded && [ -d "$LP" ] && return 0
	check "setup: load lruopt.ko" load_lruopt
}
ensure_unloaded() {
	lruopt_loaded || [ -d "$LP" ] || return 0
	check "setup: unload lruopt" unload_lruopt
}

# ------------------------------------------------------------------ kernel facts

# kernel_short: "6.1" / "6.12"
kernel_short() {
	uname -r | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p'
}

# expected_targets: the exact content of $LO/targets for this kernel after
# a load now (memcg: memcg_expected_supported)
expected_targets() {
	case $(kernel_short) in
	6.1 | 6.12)
		printf '%s\n' "lru_add_drain_all drain"
		# only where drains go remote: lruopt_drain.c drain_funcs
		is_rt && printf '%s\n' "lru_cache_disable drain"
		printf '%s\n' "mlock_pte_range munlock"
		[ "$(memcg_expected_supported)" = 1 ] &&
			printf '%s\n' "folio_memcg_lock memcg" "folio_memcg_unlock memcg" \
				"lock_page_memcg memcg" "unlock_page_memcg memcg"
		[ "$(quiet_expected_supported)" = 1 ] &&
			quiet_targets | sed 's/$/ quiet/'
		[ "$(lazyfree_expected_supported)" = 1 ] &&
			printf '%s\n' "madvise_dontneed_free_valid_vma lazyfree"
		return 0 ;;
	*)
		echo "unknown-kernel-$(uname -r)" ;;
	esac
}

# memcg_kernel_has_move: 1 on 6.1 (cgroup-v1 charge moving, folio_memcg_lock
# exists), 0 on 6.12 (CONFIG_MEMCG_V1=n)
memcg_kernel_has_move() {
	case $(kernel_short) in
	6.1) echo 1 ;;
	6.12) echo 0 ;;
	*) echo "unknown" ;;
	esac
}

# memcg_expected_supported: memcg/supported after a load now: 1 iff the
# kernel has charge moving and LRUOPT_KO_PARAMS says patch_memcg=1 (the
# memcg tests' lib-memcg.sh adds it); the default patch_memcg=auto leaves
# the memcg lock out (lruopt_memcg.c lruopt_memcg_decide()).
# quiet_targets: the LRU batch adders lruopt_quiet_adders.h replaces
quiet_targets() {
	if [ "$(kernel_short)" = 6.12 ]; then
		printf '%s\n' __folio_batch_add_and_move mlock_folio mlock_new_folio munlock_folio
	else
		printf '%s\n' folio_rotate_reclaimable folio_activate folio_add_lru \
			deactivate_file_folio deactivate_page mark_page_lazyfree \
			mlock_folio mlock_new_page munlock_page
	fi
}

# quiet_expected_supported: 1 when the loaded module put the adders in the
# patch: patch_quiet=1, or auto on a non-RT kernel with isolated/nohz_full
# CPUs or drain_skip_cpus given at load (lruopt_quiet.c
# lruopt_quiet_decide()).
quiet_expected_supported() {
	local p=/sys/module/lruopt/parameters
	# not loaded: what a load with the defaults would decide
	case $(cat $p/patch_quiet 2>/dev/null || echo auto) in
	1) echo 1 ;;
	auto)
		if is_rt; then
			echo 0
		elif [ -n "$(cat /sys/devices/system/cpu/isolated /sys/devices/system/cpu/nohz_full 2>/dev/null |
			tr -d ' \n' | sed 's/(null)//g')" ] || [ -n "$(cat $p/drain_skip_cpus 2>/dev/null)" ]; then
			echo 1
		else
			echo 0
		fi ;;
	*) echo 0 ;;
	esac
}

# lazyfree_expected_supported: lazyfree/supported after a load now: 1
# unless LRUOPT_KO_PARAMS says patch_lazyfree=0, or lazyfree_enabled=0
# without patch_lazyfree=1 (the default patch_lazyfree=auto puts the
# function in only when the feature starts enabled, and it starts enabled:
# lruopt_lazyfree.c lruopt_lazyfree_decide()).
lazyfree_expected_supported() {
	case " $LRUOPT_KO_PARAMS " in
	*" patch_lazyfree=1 "*) echo 1 ;;
	*" patch_lazyfree=0 "*) echo 0 ;;
	*" lazyfree_enabled=0 "*) echo 0 ;;
	*) echo 1 ;;
	esac
}

memcg_expected_supported() {
	local has
	has=$(memcg_kernel_has_move)
	[ "$has" = 1 ] || { echo "$has"; return 0; }
	case " $LRUOPT_KO_PARAMS " in
	*" patch_memcg=1 "*) echo 1 ;;
	*) echo 0 ;;
	esac
}

# ------------------------------------------------------------------ background helpers

# Every process a test starts in the background is registered in one file,
# $BG_PID_FILE; run-all.sh kills what it lists when a test file ends (killed by
# its time limit or not), so a test can never leave a helper behind to
# disturb the next one.  By pid, never by name.
BG_PID_FILE=${BG_PID_FILE:-/tmp/wl.pids}

# bg_register PID...: add pids to the registry
bg_register() {
	local p
	for p in "$@"; do echo "$p" >>"$BG_PID_FILE"; done
}

# bg_unregister PID: remove a pid (after it has been waited for)
bg_unregister() {
	[ -f "$BG_PID_FILE" ] || return 0
	grep -vx "$1" "$BG_PID_FILE" >"$BG_PID_FILE.new"
	if [ -s "$BG_PID_FILE.new" ]; then
		mv "$BG_PID_FILE.new" "$BG_PID_FILE"
	else
		rm -f "$BG_PID_FILE" "$BG_PID_FILE.new"
	fi
}

# bg_kill_all: SIGKILL every registered pid and empty the registry
bg_kill_all() {
	[ -f "$BG_PID_FILE" ] || return 0
	# shellcheck disable=SC2046
	kill -KILL $(cat "$BG_PID_FILE") 2>/dev/null
	rm -f "$BG_PID_FILE"
}

# bg_start VAR OUT READY SECS CMD [ARGS...]: start CMD in the background
# with its output in OUT, register it and set the variable VAR to its pid,
# then poll until OUT has a line matching the regular expression READY.
# Fails (and kills CMD) if CMD exits or SECS pass first.  OUT is removed
# first: the redirection truncates it in the forked child, possibly after
# the first poll, which must not find an earlier run's READY line.
bg_start() {
	local var=$1 out=$2 ready=$3 secs=$4 pid i=0
	shift 4
	rm -f "$out"
	"$@" >"$out" 2>&1 &
	pid=$!
	eval "$var=$pid"
	bg_register "$pid"
	until grep -q "$ready" "$out" 2>/dev/null; do
		if [ $i -ge $((secs * 20)) ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "$1 did not get ready ('$ready' within ${secs}s): $(cat "$out" 2>/dev/null)"
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			bg_unregister "$pid"
			return 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
}

# bg_stop PID: SIGTERM, wait, unregister; returns the helper's exit status
bg_stop() {
	local rc
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null
	wait "$1"
	rc=$?
	bg_unregister "$1"
	return $rc
}

# bg_end VAR NAME OUT: bg_stop the helper NAME whose pid bg_start put in the
# variable VAR, if there is one, and empty VAR; when the helper failed, say
# so with its output OUT.  Returns the helper's exit status.
bg_end() {
	local var=$1 name=$2 out=$3 pid rc=0
	eval "pid=\${$var:-}"
	[ -n "$pid" ] || return 0
	bg_stop "$pid" || rc=$?
	eval "$var="
	[ $rc -eq 0 ] || echo "$name exited $rc: $(cat "$out")"
	return $rc
}

# ------------------------------------------------------------------ workload

# Runs the static workload programs in the background.  On single-threaded
# TCG a CPU-bound vCPU holds the (only) host thread for a whole QEMU time
# slice, which makes every cross-CPU IPI of a livepatch transition wait for
# it; a short sleep per iteration keeps the workload running concurrently
# with the transitions without starving them (see tests/vm/vmrun).
# Sizes are per iteration; knobs: lruopt.wl_sleep_us=, lruopt.wl_mlock_mib=,
# lruopt.wl_fault_mib= on the kernel command line.
# Measured on 6.12, thread=single, 3 load/unload cycles under load (same
# host load for both): 4+8 MiB with 2 ms sleeps: 7-19 s per insmod or
# rmmod; 1+2 MiB with 5 ms sleeps: 0.9-5 s, at about the same number of
# mlock/munlock and fault iterations per second.  Short bursts are what
# matter: an IPI waits at most one burst.
if [ "$SLOW" = 1 ]; then
	WL_SLEEP_US=${LRUOPT_WL_SLEEP_US:-5000}
	WL_MLOCK_MIB=${LRUOPT_WL_MLOCK_MIB:-1}
	WL_FAULT_MIB=${LRUOPT_WL_FAULT_MIB:-2}
else
	WL_SLEEP_US=${LRUOPT_WL_SLEEP_US:-0}
	WL_MLOCK_MIB=${LRUOPT_WL_MLOCK_MIB:-4}
	WL_FAULT_MIB=${LRUOPT_WL_FAULT_MIB:-8}
fi

# start_workload SECONDS: mlockloop + faultloop in the background
# (registered with bg_register).  Sets WL_MLOCK and WL_FAULT.
start_workload() {
	local secs=${1:-600}
	local sl=""
	rm -f /tmp/wl-*.out
	[ "${WL_SLEEP_US:-0}" -gt 0 ] && sl=$WL_SLEEP_US
	echo "workload: mlockloop ${WL_MLOCK_MIB} MiB + faultloop ${WL_FAULT_MIB} MiB, sleep ${WL_SLEEP_US} us per iteration"
	mlockloop "$secs" "$WL_MLOCK_MIB" $sl >/tmp/wl-mlock.out 2>&1 &
	WL_MLOCK=$!
	faultloop "$secs" "$WL_FAULT_MIB" $sl >/tmp/wl-fault.out 2>&1 &
	WL_FAULT=$!
	bg_register "$WL_MLOCK" "$WL_FAULT"
	# Give them a moment to set up, then verify they really are running.
	sleep 0.5
	kill -0 "$WL_MLOCK" 2>/dev/null && kill -0 "$WL_FAULT" 2>/dev/null
}

# workload_running: both workload processes still alive
workload_running() {
	kill -0 "$WL_MLOCK" 2>/dev/null && kill -0 "$WL_FAULT" 2>/dev/null
}

# stop_workload: SIGTERM both, wait, and require exit status 0 from each
# (non-zero = a syscall failed or memory was corrupted).
stop_workload() {
	local rc1 rc2
	bg_stop "$WL_MLOCK"
	rc1=$?
	bg_stop "$WL_FAULT"
	rc2=$?
	echo "mlockloop status $rc1: $(cat /tmp/wl-mlock.out 2>/dev/null)"
	echo "faultloop status $rc2: $(cat /tmp/wl-fault.out 2>/dev/null)"
	[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
}

# drain_now: trigger lru_add_drain_all() (compaction calls it first).
drain_now() {
	echo 1 >/proc/sys/vm/compact_memory
}

# wait_for LIMIT WHAT CMD [ARG...]: run CMD every 0.2 s until it succeeds;
# after LIMIT seconds of failing (a liveness limit, never a measurement:
# make it generous, the guest may be starved for seconds) say WHAT did not
# happen, with CMD's last output, and fail.  For "sleep, then expect it to
# have happened" in tests, which a slow host can break.
wait_for() {
	local limit=$1 what=$2 t0 out
	shift 2
	t0=$(now)
	while ! out=$("$@" 2>&1); do
		if awk -v a="$(elapsed_since "$t0")" -v t="$limit" 'BEGIN { exit !(a >= t) }'; then
			echo "$what: not after ${limit}s${out:+ ($out)}"
			return 1
		fi
		sleep 0.2
	done
}

# wait_mlocked_zero [TIMEOUT]: Mlocked in /proc/meminfo reaches 0.  Pages
# can sit in per-CPU mlock batches for a while, so drain and poll briefly.
wait_mlocked_zero() {
	local i=0 t=${1:-10} v
	while :; do
		v=$(meminfo Mlocked)
		[ "$v" = 0 ] && return 0
		[ $i -ge $((t * 5)) ] && break
		drain_now 2>/dev/null
		sleep 0.2
		i=$((i + 1))
	done
	echo "Mlocked is still $v kB after ${t}s (drained repeatedly)"
	grep -E 'Mlocked|Unevictable' /proc/meminfo | sed 's/^/  /'
	return 1
}

# expect_nonroot_write_fails FILE VALUE: an unprivileged user (uid 65534)
# cannot even open FILE for writing, and the value is unchanged.
expect_nonroot_write_fails() {
	local f=$1 v=$2 before res after name
	name="$f not writable by uid 65534"
	before=$(readval "$f")
	res=$(kwrite -u 65534 "$f" "$v")
	after=$(readval "$f")
	case $res in
	open-err\ EACCES|write-err\ EACCES|open-err\ EPERM|write-err\ EPERM) ;;
	*)
		fail "$name" "unprivileged write of $(_show "$v"): $res"
		return 1 ;;
	esac
	assert_eq "$name" "$before" "$after"
}

# is_rt: the running kernel is PREEMPT_RT
is_rt() {
	uname -v | grep -q PREEMPT_RT
}

# rt_kthreads_above_hogs: on PREEMPT_RT, the per-CPU threads that expire
# timers and run RCU (SCHED_FIFO 1 there) go to SCHED_FIFO 60, above the
# tests' SCHED_FIFO 50 hogs, which would otherwise starve them into RCU
# stall warnings (a synchronize_rcu() of tracing or of a livepatch
# transition then waits for the hog).  RT deployments do the same.
rt_kthreads_above_hogs() {
	local pids
	is_rt || return 0
	pids=$(for c in /proc/[0-9]*/comm; do
		case $(cat "$c" 2>/dev/null) in
		ktimers/* | ktimersoftd/* | rcuc/* | rcub/* | rcu_preempt | ksoftirqd/*)
			c=${c#/proc/}; echo "${c%/comm}" ;;
		esac
	done)
	[ -n "$pids" ] || { echo "no ktimers/rcuc threads found"; return 1; }
	# shellcheck disable=SC2086
	setfifo 60 $pids
}
