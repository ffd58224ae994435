# SPDX-License-Identifier: GPL-2.0
# Helpers of the host checks (tests/host/checks/NN-*.sh); source it.
# Output protocol: see tests/host/run-all.sh.

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
skip() { echo "ok - $1 # SKIP $2"; }
diag() { local l; while IFS= read -r l; do echo "# $l"; done <<<"$*"; }

HT=$(mktemp -d) || exit 1
trap 'rm -rf "$HT"' EXIT

# expect_fail DESC REGEX CMD...: CMD must fail and say REGEX (a clear error,
# not a crash: a Python traceback does not count).
expect_fail() {
	local desc=$1 re=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if ((rc != 0)) && grep -qE -- "$re" <<<"$out" &&
		! grep -q '^Traceback' <<<"$out"; then
		ok "$desc"
		diag "$(grep -E -- "$re" <<<"$out" | head -n1)"
	else
		not_ok "$desc"
		diag "exit status $rc, wanted a failure matching /$re/; output:"
		diag "$(head -n 20 <<<"$out")"
	fi
}

# expect_pass DESC REGEX CMD...: CMD must succeed and print REGEX.
expect_pass() {
	local desc=$1 re=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if ((rc == 0)) && grep -qE -- "$re" <<<"$out"; then
		ok "$desc"
	else
		not_ok "$desc"
		diag "exit status $rc, wanted success matching /$re/; output:"
		diag "$(head -n 20 <<<"$out")"
	fi
}

# A struct klp_func with the kernel's leading members; the checker takes
# sizeof and the .new_func offset from the object's DWARF.
KLP_FUNC_DEF='struct klp_func {
	const char *old_name;
	void *new_func;
	unsigned long old_sympos;
	void *core_private[6];
};
#define KLP_TABLE(fn) \
	__attribute__((used)) static const struct klp_func fn##_funcs[] = { \
		{ .old_name = "stock_" #fn, .new_func = fn }, { } }'

# host_cc OUT.o FLAGS... <<<"C source": a small x86-64 object like a module's
HOST_CFLAGS=(-c -g -O2 -fno-pic -fno-asynchronous-unwind-tables
	-fno-jump-tables -fcf-protection=none -fno-stack-protector)
host_cc() {
	local out=$1
	shift
	{ echo "$KLP_FUNC_DEF"; cat; } >"${out%.o}.c"
	gcc "${HOST_CFLAGS[@]}" "$@" -o "$out" "${out%.o}.c"
}
