# SPDX-License-Identifier: GPL-2.0
# tap.bash: the result lines of the standalone bash harnesses that run on
# the host (tests/pkg/check-deb, tests/vm/check-boot); source it from the
# tree's root.  The guest's tests have their own (tests/lib.sh), and so do
# the host checks under tests/host/ (their runner numbers them).
#
# Each result is numbered and counted; finish prints the "N passed, N
# failed" line that CI and the make targets end with, and exits 1 if any
# check failed.
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $((pass + fail)) - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - $*"; }
# diag TEXT: TEXT as "# " lines (sed, not ${//}: each line of a multi-line
# text gets the prefix)
# shellcheck disable=SC2001
diag() { sed 's/^/# /' <<<"$*"; }
finish() {
	echo "$pass passed, $fail failed"
	[[ $fail -eq 0 ]]
	exit
}
