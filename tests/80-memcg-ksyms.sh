#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 80-memcg-ksyms: every unexported symbol the module reaches through a
# livepatch relocation (.klp.sym.vmlinux.NAME,0) is unique in this kernel's
# kallsyms.  sympos 0 means "the only one": livepatch refuses the patch if
# a name is ambiguous, and a wrong but unique match would be worse.  The
# memcg feature's `mc` (a static struct in mm/memcontrol.c, a name any file
# could also use) is the motivating case, but every symbol is checked.
#
# The expected list is collected on the host from the module that was built
# (tests/host/klp-syms writes build/KVER/klp-syms.txt) and shipped as
# /extra/klp-syms.txt; the test also derives the list from /lruopt.ko with
# busybox strings and requires both to agree, so a stale list cannot pass.
# lruopt-timeout: 120
. /tests/lib.sh
. /tests/lib-memcg.sh
dmesg_mark "80-memcg-ksyms"

SHIPPED=/extra/klp-syms.txt
# ".klp.sym.vmlinux.mc,0" -> "mc,0"
in_vm=$(strings "$KO" 2>/dev/null | grep '^\.klp\.sym\.vmlinux\.' | sed 's/^\.klp\.sym\.vmlinux\.//' | sort -u)
check "/lruopt.ko has .klp.sym.vmlinux.* symbols ($(echo "$in_vm" | grep -c .))" test -n "$in_vm"
if [ -f "$SHIPPED" ]; then
	shipped=$(grep '^\.klp\.sym\.vmlinux\.' "$SHIPPED" | sed 's/^\.klp\.sym\.vmlinux\.//' | sort -u)
	assert_eq "host-collected list $SHIPPED matches /lruopt.ko" "$in_vm" "$shipped"
	list=$shipped
else
	diag "$SHIPPED was not shipped (tests/host/klp-syms + mkinitramfs EXTRA): using the list read from /lruopt.ko"
	list=$in_vm
fi

# kallsyms lines: "addr type name" for vmlinux, "addr type name\t[mod]" for
# modules.  Livepatch resolves object "vmlinux" among vmlinux symbols only.
# One pass over /proc/kallsyms (150k lines; slow under TCG): per wanted name
# "NAME COUNT TYPES [MODULES...]".
for e in $list; do echo "${e%,*}"; done >/tmp/ksyms-want
awk 'NR == FNR { want[$1] = 1; next }
     ($3 in want) {
	if (NF == 3) { c[$3]++; t[$3] = t[$3] $2 } else { m[$3] = m[$3] " " $4 }
     }
     END { for (n in want) printf "%s %d %s%s\n", n, c[n] + 0, (n in t ? t[n] : "-"), m[n] }' \
	/tmp/ksyms-want /proc/kallsyms >/tmp/ksyms-counts
rm -f /tmp/ksyms-want
for e in $list; do
	name=${e%,*} pos=${e##*,}
	set -- $(awk -v n="$name" '$1 == n { $1 = ""; print }' /tmp/ksyms-counts)
	n=${1:-0} types=${2:--}
	[ $# -ge 2 ] && shift 2
	mods=$*
	if [ "$pos" = 0 ]; then
		if [ "$n" = 1 ]; then
			pass "klp symbol $name (sympos 0) has exactly one vmlinux kallsyms entry (type $types)"
		else
			fail "klp symbol $name (sympos 0) has exactly one vmlinux kallsyms entry" \
				"found $n (types '$types')" "$(awk -v n="$name" '$3 == n' /proc/kallsyms)"
		fi
	else
		# Not produced by klp-convert today; if it ever is, the position
		# must exist.
		check "klp symbol $name,$pos: at least $pos vmlinux entries (found $n)" test "$n" -ge "$pos"
	fi
	[ -z "$mods" ] || diag "$name is also defined by modules (livepatch ignores them for vmlinux): $mods"
done
mc_type=$(awk '$1 == "mc" { print $3 }' /tmp/ksyms-counts)
rm -f /tmp/ksyms-counts

if [ "$(memcg_kernel_has_move)" = 1 ]; then
	check "the memcg feature's 'mc' is among the klp symbols on $(kernel_short)" \
		sh -c "echo '$list' | grep -qx 'mc,0'"
	assert_eq "mc is a static data symbol (type d) in kallsyms" d "$mc_type"
else
	check_not "no 'mc' klp symbol on $(kernel_short) (memcg not supported)" \
		sh -c "echo '$list' | grep -q '^mc,'"
fi
check_dmesg_clean "no kernel warnings"
