#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The real build/<kver>/lruopt.ko of each kernel in KERNELS: built with the
# unload-safety flags of Kbuild, no .cold/.part fragment, every livepatch
# new function passes the jump check, and the check does fail on the same
# module with one fragment symbol added or one call turned into a jmp.
. tests/host/lib.sh
KLP=(python3 scripts/klp-convert --check-only)

# jmpify IN.ko OUT.ko FUNC...: copy with the first relocation-free call to
# a module helper in one of the FUNCs turned into a jmp (e8 -> e9)
jmpify() {
	python3 - "$@" <<'PY'
import re, struct, subprocess, sys
ko, out, funcs = sys.argv[1], sys.argv[2], sys.argv[3:]
dis = subprocess.run(['objdump', '-dr', '-w', '--no-show-raw-insn', ko],
                     stdout=subprocess.PIPE, universal_newlines=True,
                     check=True).stdout.splitlines()
sec = fn = None
for i, line in enumerate(dis):
    if line.startswith('Disassembly of section '):
        sec = line[23:].rstrip(':')
    m = re.match(r'^[0-9a-f]+ <(.*)>:$', line)
    if m:
        fn = m.group(1)
        continue
    m = re.match(r'^\s*([0-9a-f]+):\s+call\s+[0-9a-f]+ <([\w.]+)>$', line)
    if fn in funcs and m and \
       not (i + 1 < len(dis) and 'R_X86' in dis[i + 1]):
        break
else:
    sys.exit('no relocation-free call to a module helper found')
blob = bytearray(open(ko, 'rb').read())
shoff, = struct.unpack_from('<Q', blob, 0x28)
shnum, shstrndx = struct.unpack_from('<HH', blob, 0x3c)
sh = [struct.unpack_from('<IIQQQQIIQQ', blob, shoff + 64 * i) for i in range(shnum)]
strs = sh[shstrndx][4]
for s in sh:
    if blob[strs + s[0]:blob.index(b'\0', strs + s[0])].decode() == sec:
        at = s[4] + int(m.group(1), 16)
        assert blob[at] == 0xe8
        blob[at] = 0xe9
        open(out, 'wb').write(blob)
        print('%s: the call at %s+0x%s to %s made a jmp' % (fn, sec, m.group(1), m.group(2)))
PY
}

[[ -n $KERNELS ]] || skip "real module checks" "no build/<kver>/ for any kernel"
for k in $KERNELS; do
	ko=build/$k/lruopt.ko
	if [[ ! -f $ko ]]; then
		skip "$k: real module checks" "$ko not built"
		continue
	fi
	frag=$(nm "$ko" | grep -E '\.(cold|part)\b')
	if [[ -z $frag ]]; then
		ok "$k: no .cold/.part fragment in lruopt.ko"
	else
		not_ok "$k: no .cold/.part fragment in lruopt.ko"
		diag "$frag"
	fi
	missing=
	for o in build/$k/.lruopt_*.o.cmd; do
		# modpost's .mod.c (lruopt_events.mod.o) gets no ccflags-y
		[[ $o == *.mod.o.cmd ]] && continue
		for fl in -fno-optimize-sibling-calls -fno-reorder-blocks-and-partition \
			-fno-partial-inlining; do
			grep -q -- "$fl" "$o" || missing+=" ${o##*/}:$fl"
		done
	done
	if [[ -z $missing ]] && compgen -G "build/$k/.lruopt_*.o.cmd" >/dev/null; then
		ok "$k: every object was compiled with the unload-safety flags"
	else
		not_ok "$k: every object was compiled with the unload-safety flags"
		diag "missing:${missing:- no .cmd files}"
	fi
	out=$("${KLP[@]}" "$ko" 2>&1)
	rc=$?
	if ((rc == 0)) && [[ $out == *"themselves: "*lruopt_lru_add_drain_all* ]]; then
		ok "$k: the livepatch new functions jump nowhere outside themselves"
	else
		not_ok "$k: the livepatch new functions jump nowhere outside themselves"
	fi
	diag "$out"
	read -ra funcs <<<"${out##*themselves: }"
	if readelf -SW "$ko" | grep -q '\.klp\.rela\.vmlinux\.'; then
		ok "$k: lruopt.ko carries its livepatch relocations"
	else
		not_ok "$k: lruopt.ko carries its livepatch relocations"
	fi

	objcopy --add-symbol 'lruopt_lru_add_drain_all.cold=.text:0x10,local,function' \
		"$ko" "$HT/cold.ko"
	expect_fail "$k: the check refuses lruopt.ko plus a .cold symbol" \
		'split function fragments \(lruopt_lru_add_drain_all\.cold\)' \
		"${KLP[@]}" "$HT/cold.ko"
	if how=$(jmpify "$ko" "$HT/jmp.ko" "${funcs[@]}" 2>&1); then
		diag "$how"
		expect_fail "$k: the check refuses lruopt.ko with one helper call made a jmp" \
			"${how%%:*}"'\+0x[0-9a-f]+ \(jmp .*\) jumps to .*outside the livepatch new function' \
			"${KLP[@]}" "$HT/jmp.ko"
	else
		not_ok "$k: craft lruopt.ko with a jmp out of a new function"
		diag "$how"
	fi
done
