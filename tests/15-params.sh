#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 15-params: every knob is also a module parameter, validated like its sysfs
# file.  For each parameter the module lists under
# /sys/module/lruopt/parameters (a parameter without a known kind fails: a
# new one needs its entry below):
#  - a valid non-default value at insmod shows in the knob's sysfs file and
#    in the read-only parameter file;
#  - every input of the sysfs fuzz corpus for its kind that fits on an
#    insmod command line (sysfuzz -l) makes the load fail, leaves nothing
#    loaded, and dmesg names the parameter for each bad value.  The whole
#    corpus runs once per kind (bool, uint, cpulist: parameters of one kind
#    share one parser, bounds aside); a further parameter of a kind already
#    tried gets the values its own bounds give (max + 1, "+min", ...) and
#    every 8th of the rest, which still reaches each of them through its own
#    kernel_param.  A failed insmod costs 2-5 s on 6.1 under TCG (0.4 s on
#    6.12): the full corpus for every uint was ~60 % of 6.1's main suite.
# lruopt-timeout: 1200
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

total=0
rm -f /tmp/15-params-corpus.*
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
		if out=$(insmod "$KO" "$p=1" 2>&1); then
			fail "$p=1 refused where $ft is not patched" "insmod succeeded"
			unload_lruopt >/dev/null
		else
			check "$p=1 refused where $ft is not patched, dmesg says why" \
				sh -c "dmesg | tail -n 20 | grep -q '$p=1, but $ft is not in the patch'"
		fi
		check "nothing left loaded after $p=1" nothing_left
	else
		if check "insmod $p=$valid" load_lruopt "$p=$valid"; then
			assert_eq "$p=$valid shows in $file" "$valid" "$(readval "$file")"
			assert_eq "$p=$valid shows in $PARAMS/$p" "$valid" "$(readval "$PARAMS/$p")"
			check "unload after $p=$valid" unload_lruopt
		fi
	fi

	# The corpus, as insmod arguments.
	# shellcheck disable=SC2086
	corpus=$(sysfuzz -l $kind -)
	base=/tmp/15-params-corpus.${kind%% *}
	if [ -e "$base" ]; then
		# the values its bounds give (max + 1, "+min", ...) and every
		# 8th of those its kind's first parameter tried in full
		corpus=$( (echo "$corpus" | grep -vxF -f "$base";
			echo "$corpus" | grep -xF -f "$base" | awk 'NR % 8 == 1') || true)
	else
		echo "$corpus" >"$base"
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
for v in bogus 2 -1 AUTO 01 ""; do
	if insmod "$KO" "patch_quiet=$v" >/dev/null 2>&1; then
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
