#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/run-all.sh: the host-side checks (no VM, well under a minute):
# build-time guards of scripts/klp-convert and scripts/btf-layout fed with
# crafted bad objects and BTF, and the real build/<kver>/lruopt.ko.
#
# Runs every tests/host/checks/NN-*.sh with bash, cwd = the repository root
# and KERNELS="kver ..." = the kernels whose build/<kver>/ exists (default:
# those of scripts/kernels, else every build/*/ with a lruopt.ko).  A check
# prints "ok - desc", "not ok - desc", "ok - desc # SKIP why" and "# diag"
# lines; this runner numbers them into TAP and ends with
#   LRUOPT-TESTS-DONE passed=P failed=F skipped=S
# A check file that exits non-zero without reporting a failure counts as
# one failure.  Exit status: 0 iff nothing failed.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1

if [[ -z ${KERNELS+x} ]]; then
	KERNELS=$(scripts/kernels 2>/dev/null) ||
		KERNELS=$(for d in build/*/lruopt.ko; do
			[[ -f $d ]] && basename "$(dirname "$d")"; done)
fi
have=()
for k in $KERNELS; do
	[[ -d build/$k ]] && have+=("$k")
done
export KERNELS="${have[*]}"

out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
n=0 passed=0 failed=0 skipped=0
echo "# host checks, KERNELS=\"$KERNELS\""
for f in tests/host/checks/[0-9][0-9]-*.sh; do
	[[ -f $f ]] || continue
	echo "# ${f#tests/host/checks/}"
	bash "$f" >"$out" 2>&1
	rc=$? bad=0
	while IFS= read -r line; do
		case $line in
		"ok - "*)
			n=$((n + 1))
			echo "ok $n - ${line#ok - }"
			if [[ $line == *"# SKIP"* ]]; then
				skipped=$((skipped + 1))
			else
				passed=$((passed + 1))
			fi ;;
		"not ok - "*)
			n=$((n + 1)) bad=1 failed=$((failed + 1))
			echo "not ok $n - ${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done <"$out"
	if ((rc != 0 && bad == 0)); then
		n=$((n + 1)) failed=$((failed + 1))
		echo "not ok $n - ${f#tests/host/checks/} exited with status $rc"
	fi
done
echo "1..$n"
echo "LRUOPT-TESTS-DONE passed=$passed failed=$failed skipped=$skipped"
((failed == 0))
