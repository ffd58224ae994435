#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The unload-safety check of scripts/klp-convert (issue 12, item 1): a
# livepatch new function must keep all its code, and every task inside it,
# within [new_func, new_func + new_size), the only range the unpatch stack
# check (klp_check_stack_func()) looks at.  Crafted objects, each with one
# way out, must be refused with a clear error; a clean one must pass.
. tests/host/lib.sh
KLP=(python3 scripts/klp-convert --check-only)

# clean: the new function calls its helper (the return address stays in it)
host_cc "$HT/good.o" -foptimize-sibling-calls <<'C'
__attribute__((noinline)) int helper(int x) { asm volatile("" : "+r"(x)); return x * 3; }
int new_fn(int x) { return helper(x) + 1; }
KLP_TABLE(new_fn);
C
expect_pass "a new function that only calls its helper passes" \
	'1 new function\(s\).*new_fn' "${KLP[@]}" "$HT/good.o"

# tail call into a helper of the same section: objdump's target, no relocation
host_cc "$HT/tail.o" -foptimize-sibling-calls <<'C'
__attribute__((noinline)) int helper(int x) { asm volatile("" : "+r"(x)); return x * 3; }
int new_fn(int x) { return helper(x + 1); }
KLP_TABLE(new_fn);
C
if objdump -d "$HT/tail.o" | grep -qE 'jmp +[0-9a-f]+ <helper>'; then
	expect_fail "a tail call (jmp) to a helper in the same section is refused" \
		'new_fn\+0x[0-9a-f]+ \(jmp .*\) jumps to \.text\+0x[0-9a-f]+, outside the livepatch new function' \
		"${KLP[@]}" "$HT/tail.o"
else
	not_ok "gcc made a tail call to craft the bad object"
fi

# the same across sections: the jmp carries a relocation to .text.helper
host_cc "$HT/tail-sec.o" -foptimize-sibling-calls -ffunction-sections <<'C'
__attribute__((noinline)) int helper(int x) { asm volatile("" : "+r"(x)); return x * 3; }
int new_fn(int x) { return helper(x + 1); }
KLP_TABLE(new_fn);
C
expect_fail "a tail call into another section (relocated jmp) is refused" \
	'jumps to \.text\.helper\+0x0, outside the livepatch new function' \
	"${KLP[@]}" "$HT/tail-sec.o"

# a tail call into the kernel is harmless: rmmod does not free that text
host_cc "$HT/tail-ext.o" -foptimize-sibling-calls <<'C'
extern int kernel_fn(int x);
int new_fn(int x) { return kernel_fn(x + 1); }
KLP_TABLE(new_fn);
C
expect_pass "a tail call to a kernel (undefined) function passes" \
	'new_fn' "${KLP[@]}" "$HT/tail-ext.o"

# ... and the same object built with the module's flags passes
host_cc "$HT/tail-ok.o" -fno-optimize-sibling-calls -ffunction-sections <<'C'
__attribute__((noinline)) int helper(int x) { asm volatile("" : "+r"(x)); return x * 3; }
int new_fn(int x) { return helper(x + 1); }
KLP_TABLE(new_fn);
C
expect_pass "the same code with -fno-optimize-sibling-calls passes" \
	'new_fn' "${KLP[@]}" "$HT/tail-ok.o"

# a jump into the code of another function (hand-written, jcc)
host_cc "$HT/jcc.o" <<'C'
asm(".text\n.globl new_fn\n.type new_fn,@function\nnew_fn:\n"
    "\ttest %edi,%edi\n\tjne other\n\tret\n.size new_fn,.-new_fn\n"
    ".type other,@function\nother:\n\tmov $1,%eax\n\tret\n.size other,.-other\n");
int new_fn(int x);
KLP_TABLE(new_fn);
C
expect_fail "a conditional jump (jcc) out of the new function is refused" \
	'new_fn\+0x[0-9a-f]+ \(jne .*\) jumps to .*outside the livepatch new function' \
	"${KLP[@]}" "$HT/jcc.o"

# an indirect tail call: its target cannot be checked
host_cc "$HT/indirect.o" -foptimize-sibling-calls <<'C'
int (*hook)(int);
int new_fn(int x) { return hook(x + 1); }
KLP_TABLE(new_fn);
C
expect_fail "an indirect jump (tail call through a pointer) is refused" \
	'indirect jump in a livepatch new function' "${KLP[@]}" "$HT/indirect.o"

# a hot/cold split fragment (foo.cold in .text.unlikely)
host_cc "$HT/cold.o" -freorder-blocks-and-partition <<'C'
__attribute__((cold, noinline)) void report(int x);
int new_fn(int x)
{
	if (__builtin_expect(x > 1000, 0)) {
		report(x);
		report(x + 1);
		return -1;
	}
	return x * 2;
}
KLP_TABLE(new_fn);
C
if nm "$HT/cold.o" | grep -q 'new_fn\.cold'; then
	expect_fail "a .cold fragment is refused" \
		'split function fragments \(new_fn\.cold\)' "${KLP[@]}" "$HT/cold.o"
else
	not_ok "gcc made a .cold fragment to craft the bad object"
fi

# an ipa-split part (any function's, not only a new function's)
host_cc "$HT/part.o" <<'C'
int helper_part(int x) __asm__("helper.part.0");
int helper_part(int x) { return x + 7; }
int new_fn(int x) { return helper_part(x) + 1; }
KLP_TABLE(new_fn);
C
expect_fail "a .part.N fragment is refused" \
	'split function fragments \(helper\.part\.0\)' "${KLP[@]}" "$HT/part.o"

# the check must not pass vacuously
host_cc "$HT/empty.o" <<'C'
int new_fn(int x) { return x; }
__attribute__((used)) static const struct klp_func none_funcs[] = { { } };
C
expect_fail "an object whose klp_func tables name no new function is refused" \
	'found no livepatch new function' "${KLP[@]}" "$HT/empty.o"

host_cc "$HT/nodwarf.o" -g0 <<'C'
int new_fn(int x) { return x; }
KLP_TABLE(new_fn);
C
expect_fail "an object without DWARF (tables cannot be found) is refused" \
	'has no DWARF' "${KLP[@]}" "$HT/nodwarf.o"
