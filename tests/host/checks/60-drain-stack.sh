#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The drain's stack limit (Kbuild, issue 12 item 3): every function of
# lruopt_drain.o and lruopt_drain_sites.o has a frame of at most 256 bytes,
# because strict callers reach lru_add_drain_all() deep in GUP-pinning and
# memory-failure stacks.  For each built kernel: the objects were compiled
# with -Werror=frame-larger-than=256, their frame sizes (from -fstack-usage)
# are listed, and a copy of the tree with a 400-byte buffer added to the
# drain fails to build, naming the function.
. tests/host/lib.sh

[[ -n $KERNELS ]] || skip "drain stack checks" "no build/<kver>/ for any kernel"
first=
for k in $KERNELS; do
	b=build/$k
	if [[ ! -f $b/lruopt.ko ]]; then
		skip "$k: drain stack checks" "$b/lruopt.ko not built"
		continue
	fi
	# The failing rebuild below runs on the host: a kernel whose build
	# tree is here (a trixie-root kernel's is in its root).
	[[ ! -d /lib/modules/$k/build ]] || first=${first:-$k}
	missing=
	for o in lruopt_drain lruopt_drain_sites; do
		grep -q -- '-Werror=frame-larger-than=256' "$b/.$o.o.cmd" 2>/dev/null ||
			missing+=" $o.o"
	done
	if [[ -z $missing ]]; then
		ok "$k: the drain objects are built with -Werror=frame-larger-than=256"
	else
		not_ok "$k: the drain objects are built with -Werror=frame-larger-than=256"
		diag "missing in:$missing"
	fi
	su=$(cat "$b"/lruopt_drain.su "$b"/lruopt_drain_sites.su 2>/dev/null |
		awk -F'\t' '{ n = split($1, a, ":"); print $2, a[n] }' | sort -rn)
	big=$(awk '$1 > 256' <<<"$su")
	if [[ -n $su && -z $big ]]; then
		ok "$k: no drain function has a frame over 256 bytes (largest: $(head -n1 <<<"$su"))"
	else
		not_ok "$k: no drain function has a frame over 256 bytes"
		diag "${big:-no .su files (-fstack-usage) in $b}"
	fi
	diag "$k frames: $(head -n 4 <<<"$su" | tr '\n' ';')"
done

# The check can fail: the same tree with a 400-byte buffer in drain_all().
if [[ -z $first ]]; then
	skip "a drain with a 400-byte buffer fails to build" \
		"no kernel of KERNELS has its build tree on this host"
else
	src=$HT/src
	mkdir -p "$src"
	cp -a Makefile Kbuild lruopt*.[ch] scripts "$src"/
	python3 - "$src/lruopt_drain.c" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
# after drain_all()'s declarations, whatever they are
m = re.search(r'drain_all\(struct drain_call \*dc\)\n\{\n((?:\t[^\n]*;\n)+)', s)
assert m, 'drain_all() locals not found'
s = s[:m.end(1)] + '\tchar big[400];\n\n\tmemset(big, 0, sizeof(big));\n\tbarrier_data(big);\n' + s[m.end(1):]
open(p, 'w').write(s)
PY
	expect_fail "$first: a drain with a 400-byte buffer on its stack fails to build" \
		'frame size of [0-9]+ bytes is larger than 256 bytes' \
		make -C "$src" KVER="$first" module
fi
