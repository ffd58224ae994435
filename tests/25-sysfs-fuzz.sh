#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 25-sysfs-fuzz: every writable file under /sys/kernel/lruopt gets the
# sysfuzz corpus for its kind (empty, whitespace, garbage, signs, other
# bases, out of range by one, 32/64-bit overflow, embedded NULs, 4 KiB and
# 8 KiB strings, partial writes, garbage after a valid write on one open
# file): each write must fail with EINVAL and leave the
# value unchanged, and every readable file must read sanely after each one.
# A background reader reads the whole tree in a loop meanwhile.  A writable
# file without a known kind fails the test: a new knob needs its corpus.
# Reports the number of inputs tried.
# lruopt-timeout: 600
. /tests/lib.sh
dmesg_mark "25-sysfs-fuzz"
ensure_loaded || exit 1

# nr_cpu_ids: one more than the highest possible CPU
NBITS=$(($(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1))

# kind FILE: the sysfuzz arguments for FILE
kind() {
	case ${1#"$LO"/} in
	enabled | */enabled | drain/skip_isolated) echo bool ;;
	drain/timeout_us) echo "uint 0 10000000" ;;
	drain/coalesce_us) echo "uint 0 1000000" ;;
	munlock/batch) echo "uint 1 512" ;;
	lazyfree/wmark_pct) echo "uint 0 100000" ;;
	drain/skip_cpus) echo "cpulist $NBITS" ;;
	drain/remote) if is_rt; then echo "uint 0 1"; else echo "uint 0 0"; fi ;;
	*/stats/reset) echo reset ;;
	*) echo unknown ;;
	esac
}

# The background reader: any failed read of any file is recorded.
rm -f /tmp/fuzz-reader.err
(
	while [ ! -f /tmp/fuzz-reader.stop ]; do
		for f in $(find "$LO" -type f -perm -0444); do
			cat "$f" >/dev/null 2>&1 || echo "read of $f failed" >>/tmp/fuzz-reader.err
		done
	done
) &
READER=$!
echo "$READER" >>/tmp/wl.pids

total=0
files=$(find "$LO" -type f -perm -0200 | sort)
check "$(echo "$files" | grep -c .) writable files under $LO" test -n "$files"
for f in $files; do
	k=$(kind "$f")
	if [ "$k" = unknown ]; then
		fail "$f: writable, but no fuzz corpus for it (add its kind to 25-sysfs-fuzz)"
		continue
	fi
	# Both states of a switch, so a parser mapping garbage to either
	# value is caught; knobs are fuzzed at their current (default) value.
	states=x
	orig=""
	[ "$k" = reset ] || orig=$(readval "$f")
	[ "$k" = bool ] && [ "$(readval "$f")" = 1 ] && states="1 0"
	[ "$k" = bool ] && [ "$(readval "$f")" = 0 ] && states=0
	for st in $states; do
		[ "$st" = x ] || kwrite "$f" "$st" >/dev/null
		out=$(sysfuzz $k "$f")
		rc=$?
		n=$(echo "$out" | sed -n 's/.*: \([0-9]*\) bad inputs.*/\1/p')
		total=$((total + ${n:-0}))
		if [ $rc = 0 ]; then
			pass "$f ($k${st#x}): ${n:-?} bad inputs rejected with the value unchanged"
		else
			fail "$f ($k${st#x}): sysfuzz status $rc" "$(echo "$out" | head -20)"
		fi
	done
	# back to the value before (the corpus may have set another valid one)
	if [ "$k" != reset ]; then
		kwrite -n "$f" "$orig" >/dev/null
		assert_eq "$f back to $(_show "$orig")" "$orig" "$(readval "$f")"
	fi
done

touch /tmp/fuzz-reader.stop
wait "$READER"
rm -f /tmp/fuzz-reader.stop
check "the concurrent reader never failed a read" sh -c '! cat /tmp/fuzz-reader.err 2>/dev/null | grep -q .'
diag "sysfs fuzz: $total bad inputs tried over $(echo "$files" | grep -c .) files"
assert_eq "switches back at defaults" "1 1 1 $(memcg_expected_supported)" \
	"$(cat "$LO/enabled" "$LO/drain/enabled" "$LO/munlock/enabled" "$LO/memcg/enabled" | tr '\n' ' ' | sed 's/ $//')"
check_dmesg_clean "no kernel warnings from the fuzzing"
