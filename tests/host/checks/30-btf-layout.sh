#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/btf-layout on crafted BTF (issue 12, item 2): an unknown kind or
# a truncated type must stop the parse instead of desynchronising it, and two
# different structs of one name are an error only for a struct we extract.
. tests/host/lib.sh

# mkbtf OUT SPEC...: raw BTF; SPEC is one of
#   int:NAME:BYTES  struct:NAME:MEMBER=TYPEID@BYTEOFF,...:SIZE
#   unknown:KIND    truncate:N (drop N bytes from the type section's end)
mkbtf() {
	python3 - "$@" <<'PY'
import struct, sys
out, specs = sys.argv[1], sys.argv[2:]
strs, types, cut = bytearray(b'\0'), bytearray(), 0
def s(name):
    off = len(strs); strs.extend(name.encode() + b'\0'); return off
for spec in specs:
    f = spec.split(':')
    if f[0] == 'int':
        size = int(f[2])
        types += struct.pack('<IIII', s(f[1]), 1 << 24, size, size * 8)
    elif f[0] == 'struct':
        mem = [m for m in f[2].split(',') if m]
        types += struct.pack('<III', s(f[1]), 4 << 24 | len(mem), int(f[3]))
        for m in mem:
            name, rest = m.split('=')
            tid, off = rest.split('@')
            types += struct.pack('<III', s(name), int(tid), int(off) * 8)
    elif f[0] == 'unknown':     # a future kind with one 8-byte vlen entry
        types += struct.pack('<III', 0, int(f[1]) << 24 | 1, 0) + b'\1' * 8
    elif f[0] == 'truncate':
        cut = int(f[1])
types = types[:len(types) - cut]
hdr = struct.pack('<HBBIIIII', 0xeb9f, 1, 0, 24, 0, len(types), len(types), len(strs))
open(out, 'wb').write(hdr + types + strs)
PY
}
layout() {	# layout BTF STRUCT...
	local btf=$1
	shift
	python3 scripts/btf-layout --btf "$btf" --kver 0.0-test \
		--uts-version '#1 test' -o "$HT/out.h" "$@" && cat "$HT/out.h"
}

mkbtf "$HT/good.btf" int:int:4 int:long:8 'struct:foo:a=1@0,b=2@8:16'
expect_pass "a well-formed BTF yields the struct's layout" \
	'LRUOPT_BTF_foo__b__OFF 8' layout "$HT/good.btf" foo

mkbtf "$HT/unknown.btf" int:int:4 unknown:25 int:long:8 'struct:foo:a=1@0,b=2@8:16'
expect_fail "an unknown BTF kind stops the parse" \
	'unknown BTF kind 25 \(type 2\)' layout "$HT/unknown.btf" foo

mkbtf "$HT/trunc.btf" int:int:4 int:long:8 'struct:foo:a=1@0,b=2@8:16' truncate:4
expect_fail "a truncated BTF type stops the parse" \
	'BTF truncated inside type 3' layout "$HT/trunc.btf" foo

mkbtf "$HT/dup.btf" int:int:4 int:long:8 'struct:foo:a=1@0,b=2@8:16' \
	'struct:foo:a=1@0:4' 'struct:bar:x=2@0:8'
expect_fail "two different structs of an extracted name are refused" \
	'2 different definitions of struct foo in BTF \(types 3, 4\)' \
	layout "$HT/dup.btf" bar foo
expect_pass "duplicates of a name we do not extract do not matter" \
	'LRUOPT_BTF_bar__SIZE 8' layout "$HT/dup.btf" bar

mkbtf "$HT/same.btf" int:int:4 int:long:8 'struct:foo:a=1@0,b=2@8:16' \
	'struct:foo:a=1@0,b=2@8:16'
expect_pass "two identical definitions (a dedup miss) are accepted" \
	'LRUOPT_BTF_foo__SIZE 16' layout "$HT/same.btf" foo
