#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 20-sysfs: the /sys/kernel/lruopt tree: files, permissions, defaults,
# exact targets, input validation (bad writes fail with EINVAL and leave the
# value unchanged), valid writes, and root-only writability.
# lruopt-timeout: 300
. /tests/lib.sh
dmesg_mark "20-sysfs"
ensure_loaded || exit 1

SUP=$(memcg_expected_supported)
QSUP=$(quiet_expected_supported)
LSUP=$(lazyfree_expected_supported)
# the features a load may leave out of the patch, and whether this one did
OPTIONAL="memcg:$SUP quiet:$QSUP lazyfree:$LSUP"
RW_FILES="$LO/enabled $LO/drain/enabled $LO/munlock/enabled $LO/memcg/enabled $LO/quiet/enabled $LO/lazyfree/enabled $LO/lazyfree/wmark_pct"
RO_FILES="$LO/version $LO/targets $LO/drain/supported $LO/munlock/supported $LO/memcg/supported $LO/quiet/supported $LO/quiet/cpus $LO/lazyfree/supported"

# ---- tree and permissions
for f in $RW_FILES; do assert_file_mode "$f" 644; done
for f in $RO_FILES; do assert_file_mode "$f" 444; done
diag "$LO contains: $(cd "$LO" && find . | sort | tr '\n' ' ')"

# ---- read-only values
v=$(readval "$LO/version")
check "version is non-empty ('$v')" test -n "$v"
assert_eq "version is a single line" 1 "$(grep -c '' "$LO/version")"
assert_eq "targets lists exactly the replaced functions for $(kernel_short)" \
	"$(expected_targets)" "$(readval "$LO/targets")"
assert_eq "memcg/supported is $SUP on $(kernel_short)" "$SUP" "$(readval "$LO/memcg/supported")"
assert_eq "quiet/supported is $QSUP (patch_quiet=$(cat /sys/module/lruopt/parameters/patch_quiet))" \
	"$QSUP" "$(readval "$LO/quiet/supported")"
assert_eq "lazyfree/supported is $LSUP (patch_lazyfree=$(cat /sys/module/lruopt/parameters/patch_lazyfree))" \
	"$LSUP" "$(readval "$LO/lazyfree/supported")"
assert_eq "drain/supported and munlock/supported are 1" "1 1" \
	"$(readval "$LO/drain/supported") $(readval "$LO/munlock/supported")"
[ "$QSUP" = 1 ] || assert_eq "quiet/cpus is empty when quiet is left out" "" "$(readval "$LO/quiet/cpus")"
# Cross-check with the running kernel: folio_memcg_lock only exists where
# the memcg feature can be supported (6.12 made it an empty inline); whether
# a load patches it is patch_memcg's (memcg_expected_supported).
if grep -q ' folio_memcg_lock$' /proc/kallsyms; then ks=1; else ks=0; fi
assert_eq "memcg_kernel_has_move matches folio_memcg_lock in kallsyms" "$ks" "$(memcg_kernel_has_move)"

# ---- defaults
assert_eq "enabled defaults to 1" 1 "$(readval "$LO/enabled")"
assert_eq "drain/enabled defaults to 1" 1 "$(readval "$LO/drain/enabled")"
assert_eq "munlock/enabled defaults to 1" 1 "$(readval "$LO/munlock/enabled")"
assert_eq "memcg/enabled defaults to $SUP" "$SUP" "$(readval "$LO/memcg/enabled")"
assert_eq "quiet/enabled defaults to $QSUP" "$QSUP" "$(readval "$LO/quiet/enabled")"
assert_eq "lazyfree/enabled defaults to $LSUP" "$LSUP" "$(readval "$LO/lazyfree/enabled")"
assert_eq "lazyfree/wmark_pct defaults to 100" 100 "$(readval "$LO/lazyfree/wmark_pct")"

# ---- bad input
long=$(awk 'BEGIN { while (n++ < 4096) printf "1" }')
long4095=$(awk 'BEGIN { while (n++ < 4095) printf "0" }')
bad_inputs() {
	local f=$1
	# "" alone would be a zero-byte write, which sysfs completes without
	# calling the module, so the empty value is sent as echo does: "\n".
	expect_write_fails -n "$f" ""
	for v in 2 -1 abc 1x 99999999999999999999 " " 01 " 1" "1 " 0x1 true on y; do
		expect_write_fails "$f" "$v"
		expect_write_fails -n "$f" "$v"
	done
	# 4096 bytes is the most kernfs passes to a store method (a longer
	# write reaches it cut to one page), so test 4096 and 4095+newline.
	expect_write_fails "$f" "$long"
	expect_write_fails -n "$f" "$long4095"
	expect_nonroot_write_fails "$f" 0
}
for f in $LO/enabled $LO/drain/enabled $LO/munlock/enabled; do
	# Both states, so that a parser mapping garbage to either value is caught.
	for state in 1 0; do
		if [ "$(kwrite "$f" $state)" != "ok 1" ]; then
			fail "$f: cannot set $state before bad-input checks"
			continue
		fi
		diag "bad input to $f while it is $state"
		bad_inputs "$f"
	done
	kwrite "$f" 1 >/dev/null
done
for fs in $OPTIONAL; do
	f=$LO/${fs%:*}/enabled sup=${fs#*:}
	diag "bad input to $f while it is $sup"
	bad_inputs "$f"
	if [ "$sup" = 1 ]; then
		kwrite "$f" 0 >/dev/null
		diag "bad input to $f while it is 0"
		bad_inputs "$f"
		kwrite "$f" 1 >/dev/null
	fi
done
for f in $RO_FILES; do
	expect_write_fails "$f" 0 EACCES
	expect_write_fails -n "$f" 1 EACCES
done

# ---- valid input: "0"/"1" with or without one trailing newline
for f in $LO/enabled $LO/drain/enabled $LO/munlock/enabled; do
	expect_write_ok "$f" 0 0
	expect_write_ok "$f" 1 1
	expect_write_ok -n "$f" 0 0
	expect_write_ok -n "$f" 1 1
done
for fs in $OPTIONAL; do
	f=$LO/${fs%:*}/enabled
	if [ "${fs#*:}" = 1 ]; then
		expect_write_ok "$f" 0 0
		expect_write_ok "$f" 1 1
		expect_write_ok -n "$f" 0 0
		expect_write_ok -n "$f" 1 1
	else
		# Unsupported: 0 is accepted (it is the value), 1 is refused.
		expect_write_ok "$f" 0 0
		expect_write_ok -n "$f" 0 0
		expect_write_fails "$f" 1
		expect_write_fails -n "$f" 1
		# ... also while the master switch is off (no bypass via ordering).
		kwrite "$LO/enabled" 0 >/dev/null
		expect_write_fails -n "$f" 1
		kwrite "$LO/enabled" 1 >/dev/null
	fi
done

# ---- feature switches are independent of the master switch
kwrite "$LO/enabled" 0 >/dev/null
expect_write_ok -n "$LO/drain/enabled" 0 0
assert_eq "master switch off does not change munlock/enabled" 1 "$(readval "$LO/munlock/enabled")"
kwrite "$LO/enabled" 1 >/dev/null
assert_eq "master switch back on does not change drain/enabled" 0 "$(readval "$LO/drain/enabled")"
kwrite "$LO/drain/enabled" 1 >/dev/null

# ---- all back to defaults, livepatch untouched by all of this
assert_eq "switches back at defaults" "1 1 1 $SUP $QSUP $LSUP" \
	"$(cat "$LO/enabled" "$LO/drain/enabled" "$LO/munlock/enabled" "$LO/memcg/enabled" "$LO/quiet/enabled" "$LO/lazyfree/enabled" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "the livepatch itself stays enabled" 1 "$(readval "$LP/enabled")"
check_dmesg_clean "no kernel warnings from sysfs accesses"
