#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 15-params: every knob is also a module parameter, validated like its sysfs
# file.  For each parameter the module lists under
# /sys/module/lruopt/parameters (a parameter without a known kind fails: a
# new one needs its entry below):
#  - a valid non-default value at insmod shows in the knob's sysfs file and
#    in the read-only parameter file (all of them in one load: each value
#    is checked in its own files);
#  - bad values make the load fail, leave nothing loaded, and dmesg names
#    the parameter for each of them.  Which bad values depends on what a
#    refused load costs:
#    * 6.12 (0.1-0.4 s a load under TCG): every input of the sysfs fuzz
#      corpus for its kind that fits on an insmod command line (sysfuzz -l),
#      once per kind (bool, uint, cpulist: parameters of one kind share one
#      parser, bounds aside); a further parameter of a kind already tried
#      gets the values its own bounds give (max + 1, "+min", ...) and every
#      8th of the rest, which still reaches each of them through its own
#      kernel_param;
#    * 6.1 (3.5 s a load under TCG: load_module() applies the livepatch's
#      relocations before it parses a parameter, and 6.1 resolves each of
#      its ~30 symbols by a linear kallsyms walk): the one value that tells
#      each parameter's binding apart, a value the stock parser of its type
#      would take and only its own refuses ("y" for a switch, max + 1 for a
#      number, a CPU past nr_cpu_ids for the list).  The parsers are the same
#      code on both lines (lruopt_sysfs.c, lruopt_drain.c), and the full
#      corpus reaches them through sysfs on 6.1 too (25-sysfs-fuzz).
# lruopt-timeout: 600
. /tests/lib.sh
dmesg_mark "15-params"
ensure_unloaded || exit 1

PARAMS=/sys/module/lruopt/parameters
# nr_cpu_ids: one more than the highest possible CPU
NBITS=$(($(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1))

# spec PARAM: "SYSFS-FILE|VALID-NON-DEFAULT|SYSFUZZ-KIND-AND-ARGS", "skip"
# for parameters tested elsewhere, or "unknown".
spec() {
	case $1 in
	enabled) echo "$LO/enabled|0|bool" ;;
	drain_enabled) echo "$LO/drain/enabled|0|bool" ;;
	munlock_enabled) echo "$LO/munlock/enabled|0|bool" ;;
	memcg_enabled) echo "$LO/memcg/enabled|0|bool" ;;
	quiet_enabled) echo "$LO/quiet/enabled|0|bool" ;;
	# default 1: 0 is the valid non-default (patch_lazyfree=auto then
	# leaves it out of the patch, and the file reads 0)
	lazyfree_enabled) echo "$LO/lazyfree/enabled|0|bool" ;;
	lazyfree_wmark_pct) echo "$LO/lazyfree/wmark_pct|250|uint 0 100000" ;;
	munlock_batch) echo "$LO/munlock/batch|64|uint 1 512" ;;
	drain_timeout_us) echo "$LO/drain/timeout_us|1234|uint 0 10000000" ;;
	drain_coalesce_us) echo "$LO/drain/coalesce_us|777|uint 0 1000000" ;;
	drain_skip_isolated) echo "$LO/drain/skip_isolated|0|bool" ;;
	drain_skip_cpus) echo "$LO/drain/skip_cpus|1|cpulist $NBITS" ;;
	# 1 only where remote drains exist (PREEMPT_RT, default 1 there)
	drain_remote)
		if is_rt; then echo "$LO/drain/remote|0|uint 0 1"
		else echo "$LO/drain/remote|0|uint 0 0"; fi ;;
	# patch_memcg: 80-memcg-*; patch_quiet: below; patch_lazyfree:
	# 85-lazyfree; fault_target: 50-refuse (testing only)
	patch_memcg | patch_quiet | patch_lazyfree | fault_target) echo skip ;;
	*) echo unknown ;;
	esac
}

check "setup: load once to list the parameters" load_lruopt
names=$(ls "$PARAMS" 2>/dev/null | sort)
check "setup: unload" unload_lruopt
check "$(echo "$names" | grep -c .) module parameters listed" test -n "$names"

# nothing_left: no module, no livepatch, no sysfs tree.
nothing_left() {
	! lruopt_loaded && [ ! -e "$LP" ] && [ ! -e "$LO" ]
}

# FULL: the whole corpus (6.12); else each parameter's binding value (6.1)
FULL=1
[ "$(kernel_short)" != 6.1 ] || FULL=0
[ $FULL = 1 ] || diag "6.1: each parameter's binding value only (a refused load costs ~3.5 s here; see the header)"

# binding_value KIND-AND-ARGS: the value only this parameter's own parser
# refuses (the stock parser of its type would take it)
binding_value() {
	set -- $1
	case $1 in
	bool) echo y ;;
	uint) echo $(($3 + 1)) ;;
	cpulist) echo "$2" ;;
	esac
}

# Pass 1: what each parameter is, and its valid non-default value: all of
# them in one load.
valid_args="" checks="" todo=""
for p in $names; do
	s=$(spec "$p")
	case $s in
	skip) continue ;;
	unknown)
		fail "module parameter $p has no entry in 15-params (add its kind)"
		continue ;;
	esac
	file=${s%%|*}
	rest=${s#*|}
	valid=${rest%%|*}
	kind=${rest#*|}
	todo="$todo $p"
	# <feature>_enabled=1 where the feature is not in the patch must be
	# refused; where it is, 0 is the valid non-default value.
	case $p in
	memcg_enabled) sup=$(memcg_expected_supported) ;;
	quiet_enabled) sup=$(quiet_expected_supported) ;;
	*) sup=1 ;;
	esac
	if [ "$sup" = 0 ]; then
		ft=${p%_enabled}
		dmesg_mark "15-params $p=1"
		if out=$(finit "$KO" "$p=1" 2>&1); then
			fail "$p=1 refused where $ft is not patched" "insmod succeeded"
			unload_lruopt >/dev/null
		else
			check "$p=1 refused where $ft is not patched, dmesg says why" \
				sh -c "dmesg | tail -n 20 | grep -q '$p=1, but $ft is not in the patch'"
		fi
		check "nothing left loaded after $p=1" nothing_left
	else
		valid_args="$valid_args $p=$valid"
		checks="$checks $p|$file|$valid"
	fi
done
# shellcheck disable=SC2086
if check "insmod with every parameter at a valid non-default value:$valid_args" load_lruopt $valid_args; then
	for c in $checks; do
		p=${c%%|*} rest=${c#*|}
		file=${rest%%|*} valid=${rest#*|}
		assert_eq "$p=$valid shows in $file" "$valid" "$(readval "$file")"
		assert_eq "$p=$valid shows in $PARAMS/$p" "$valid" "$(readval "$PARAMS/$p")"
	done
	check "unload after the valid values" unload_lruopt
fi

# Pass 2: the bad values, one refused load each.
total=0
rm -f /tmp/15-params-corpus.*
for p in $todo; do
	s=$(spec "$p")
	kind=${s##*|}
	if [ $FULL = 1 ]; then
		# The corpus, as insmod arguments.
		# shellcheck disable=SC2086
		corpus=$(sysfuzz -l $kind -)
		base=/tmp/15-params-corpus.${kind%% *}
		if [ -e "$base" ]; then
			# the values its bounds give (max + 1, "+min", ...) and
			# every 8th of those its kind's first parameter tried
			corpus=$( (echo "$corpus" | grep -vxF -f "$base";
				echo "$corpus" | grep -xF -f "$base" | awk 'NR % 8 == 1') || true)
		else
			echo "$corpus" >"$base"
		fi
	else
		corpus=$(binding_value "$kind")
	fi
	n=0 ok=0 loaded=0 short=0
	dmesg_mark "15-params $p corpus"
	set -f		# the values reach insmod unexpanded
	for v in $corpus; do
		n=$((n + 1))
		# a printk line holds ~1000 characters: a longer value's
		# message is cut before it names the parameter
		[ ${#v} -gt 900 ] || short=$((short + 1))
		# one finit_module() per value (busybox insmod tries twice)
		if finit "$KO" "$p=$v" >/dev/null 2>&1; then
			diag "$p=$(_show "$v") was accepted"
			unload_lruopt >/dev/null
			continue
		fi
		if nothing_left; then
			ok=$((ok + 1))
		else
			loaded=$((loaded + 1))
			unload_lruopt >/dev/null
		fi
	done
	set +f
	total=$((total + n))
	assert_eq "$p ($kind): all $n bad values fail insmod, nothing left loaded" "$n" "$ok"
	# the kernel names the parameter once per refused load
	named=$(dmesg_since_mark | grep -c "invalid for parameter .$p'")
	check "$p: dmesg names the parameter for every bad value ($named lines for $short values of up to 900 characters)" \
		test "$named" -ge "$short"
done
diag "module parameters: $total bad values tried"

# patch_quiet: its values, and what 1 and 0 put in the patch whatever
# this boot's CPUs are (66-quiet tests auto in the isolated boot)
pq_bad='bogus 2 -1 AUTO 01 ""'
[ $FULL = 1 ] || pq_bad='AUTO 01'
eval "set -- $pq_bad"
for v; do
	if finit "$KO" "patch_quiet=$v" >/dev/null 2>&1; then
		fail "patch_quiet=$(_show "$v") fails insmod" "accepted"
		unload_lruopt >/dev/null
	fi
done
check "patch_quiet: bad values fail insmod, nothing left loaded" nothing_left
if check "insmod patch_quiet=1" load_lruopt patch_quiet=1; then
	assert_eq "patch_quiet=1: quiet/supported, enabled" "1 1" \
		"$(readval "$LO/quiet/supported") $(readval "$LO/quiet/enabled")"
	assert_eq "patch_quiet=1: the adders are targets" "$(quiet_targets | sort | tr '\n' ' ')" \
		"$(awk '$2 == "quiet" { print $1 }' "$LO/targets" | sort | tr '\n' ' ')"
	check "patch_quiet=1: dmesg says so" sh -c "dmesg | tail -n 20 | grep -q 'quiet: in the patch (patch_quiet=1'"
	k=$(($(grep -c '^processor' /proc/cpuinfo) - 1))
	echo "$k" >"$LO/drain/skip_cpus"
	assert_eq "patch_quiet=1: quiet/cpus follows drain/skip_cpus" "$k" "$(readval "$LO/quiet/cpus")"
	echo "" >"$LO/drain/skip_cpus"
	check "unload after patch_quiet=1" unload_lruopt
fi
if check "insmod patch_quiet=0" load_lruopt patch_quiet=0; then
	assert_eq "patch_quiet=0: quiet/supported, no quiet target" "0 0" \
		"$(readval "$LO/quiet/supported") $(awk '$2 == "quiet"' "$LO/targets" | grep -c .)"
	check "unload after patch_quiet=0" unload_lruopt
fi
check "nothing loaded at the end" nothing_left
check_dmesg_clean "no kernel warnings from the parameter tests"
