#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/klp-convert refuses relocations livepatch cannot honour (issue 12,
# item 2), and binds a name only a module exports to vmlinux.  Each crafted
# object is a tiny livepatch module: one new function in a struct klp_func
# table, calling secret_fn(), which vmlinux does not export but its BTF
# knows (the ksyms list).  --companion: the trace-event module's exports.
. tests/host/lib.sh

printf 'F secret_fn\nF other_fn\nV secret_var\n' >"$HT/ksyms"
printf '0x00000000\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n' >"$HT/vmlinux.symvers"
convert() {	# convert SYMVERS IN.o: convert into IN.klp.o
	python3 scripts/klp-convert --symvers "$1" --ksyms "$HT/ksyms" \
		--list "$2" "${2%.o}.klp.o"
}
BASE='void secret_fn(void);
int new_fn(int x) { secret_fn(); return x + 1; }
KLP_TABLE(new_fn);'

host_cc "$HT/good.o" <<<"$BASE"
expect_pass "a direct call to an unexported function is converted" \
	'KLP +secret_fn +call' convert "$HT/vmlinux.symvers" "$HT/good.o"

# alternative replacement code is copied into .text at load, before
# livepatch writes its relocations
host_cc "$HT/alt.o" <<C
$BASE
asm(".pushsection .altinstr_replacement,\"ax\"\n\tcall secret_fn\n.popsection");
C
expect_fail "an unexported call in .altinstr_replacement is refused" \
	'\.altinstr_replacement\+0x[0-9a-f]+: unexported "secret_fn" used in alternative replacement code' \
	convert "$HT/vmlinux.symvers" "$HT/alt.o"

host_cc "$HT/altaux.o" <<C
$BASE
asm(".pushsection .altinstr_aux,\"ax\"\n\tcall secret_fn\n.popsection");
C
expect_fail "an unexported call in .altinstr_aux is refused" \
	'\.altinstr_aux\+0x[0-9a-f]+: unexported "secret_fn" used in alternative replacement code' \
	convert "$HT/vmlinux.symvers" "$HT/altaux.o"

# a section that is never loaded cannot be relocated by livepatch
host_cc "$HT/noalloc.o" <<C
$BASE
asm(".pushsection .debug_lruopt,\"\",@progbits\n\t.quad secret_var\n.popsection");
C
expect_fail "an unexported reference from a non-SHF_ALLOC section is refused" \
	'\.debug_lruopt\+0x0: unexported "secret_var" referenced from a section that is not loaded' \
	convert "$HT/vmlinux.symvers" "$HT/noalloc.o"

# taking an unexported function's address (IBT: only direct calls)
host_cc "$HT/addr.o" <<C
$BASE
void other_fn(void);
void *leak(void) { return other_fn; }
C
expect_fail "taking an unexported function's address is refused" \
	'takes the address of unexported function "other_fn"' \
	convert "$HT/vmlinux.symvers" "$HT/addr.o"

# Module.symvers: only vmlinux rows export.  secret_fn exported by a module
# only must still become a vmlinux livepatch symbol ...
{ cat "$HT/vmlinux.symvers"
  printf '0x12345678\tsecret_fn\tdrivers/misc/othermod\tEXPORT_SYMBOL\t\n'
} >"$HT/module.symvers"
host_cc "$HT/modexp.o" <<<"$BASE"
expect_pass "a name only a module exports is bound to vmlinux by livepatch" \
	'KLP +secret_fn +call' convert "$HT/module.symvers" "$HT/modexp.o"
if readelf -sW "$HT/modexp.klp.o" 2>/dev/null |
	grep -q '\.klp\.sym\.vmlinux\.secret_fn,0$'; then
	ok "the converted object refers to .klp.sym.vmlinux.secret_fn,0"
else
	not_ok "the converted object refers to .klp.sym.vmlinux.secret_fn,0"
	diag "$(readelf -sW "$HT/modexp.klp.o" 2>&1 | grep secret_fn)"
fi

# ... a vmlinux row does export it (the module loader binds it) ...
{ cat "$HT/vmlinux.symvers"
  printf '0x12345678\tsecret_fn\tvmlinux\tEXPORT_SYMBOL\t\n'
} >"$HT/vmlinux2.symvers"
host_cc "$HT/vmexp.o" <<C
$BASE
void other_fn(void);
int new_fn2(int x) { other_fn(); return x; }
C
out=$(convert "$HT/vmlinux2.symvers" "$HT/vmexp.o" 2>&1)
if grep -qE 'KLP +other_fn +call' <<<"$out" && ! grep -q secret_fn <<<"$out"; then
	ok "a name vmlinux exports is left to the module loader"
else
	not_ok "a name vmlinux exports is left to the module loader"
	diag "$out"
fi

# ... and a module-only export BTF does not know is an error, not a binding
printf 'F other_fn\n' >"$HT/ksyms-nosecret"
expect_fail "a module-only export unknown to vmlinux's BTF is refused" \
	'"secret_fn" is neither exported nor known to the target kernel' \
	python3 scripts/klp-convert --symvers "$HT/module.symvers" \
	--ksyms "$HT/ksyms-nosecret" "$HT/modexp.o" "$HT/x.o"

# --companion: the one other module whose exports are left to the module
# loader (lruopt_events, the trace events), named by the build's own
# Module.symvers; a third module's export is still not a binding.
host_cc "$HT/comp.o" <<C
$BASE
void ev_fn(void);
void third_fn(void);
int new_fn2(int x) { ev_fn(); return x; }
C
printf '0x1\tev_fn\t/b/6.1/lruopt_events\tEXPORT_SYMBOL_GPL\t\n0x2\tthird_fn\t/b/6.1/othermod\tEXPORT_SYMBOL_GPL\t\n' \
	>"$HT/build.symvers"
printf 'F secret_fn\n' >"$HT/ksyms-comp"
out=$(python3 scripts/klp-convert --symvers "$HT/vmlinux.symvers" --ksyms "$HT/ksyms-comp" \
	--companion "$HT/build.symvers:lruopt_events" --list "$HT/comp.o" "$HT/comp.klp.o" 2>&1)
if grep -qE 'KLP +secret_fn +call' <<<"$out" && ! grep -q ev_fn <<<"$out"; then
	ok "--companion: the companion's export is left to the module loader"
else
	not_ok "--companion: the companion's export is left to the module loader"
	diag "$out"
fi
host_cc "$HT/third.o" <<C
$BASE
void third_fn(void);
int new_fn2(int x) { third_fn(); return x; }
C
expect_fail "--companion: another module's export in the same file is refused" \
	'"third_fn" is neither exported nor known to the target kernel' \
	python3 scripts/klp-convert --symvers "$HT/vmlinux.symvers" --ksyms "$HT/ksyms-comp" \
	--companion "$HT/build.symvers:lruopt_events" "$HT/third.o" "$HT/x.o"
expect_fail "--companion: a companion that exports nothing is an error" \
	'exports nothing from module lruopt_event$' \
	python3 scripts/klp-convert --symvers "$HT/vmlinux.symvers" --ksyms "$HT/ksyms-comp" \
	--companion "$HT/build.symvers:lruopt_event" "$HT/comp.o" "$HT/x.o"
