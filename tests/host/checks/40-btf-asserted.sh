#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every structure the Makefile has scripts/btf-layout extract (BTF_STRUCTS)
# is used by lruopt_compat.h: its size is static_assert()ed against BTF
# (directly or by LRUOPT_MIRROR_SIZE(), the mirror macro), or
# it only marks the kernel line (#if defined(LRUOPT_BTF_<s>__SIZE)).  An
# extracted struct nothing checks is a mirror nobody verifies.
. tests/host/lib.sh

unchecked() {	# unchecked COMPAT.H: print the extracted structs it ignores
	python3 - "$1" <<'PY'
import re, sys
mk = open('Makefile').read()
m = re.search(r'^BTF_STRUCTS\s*:?=((?:.*\\\n)*.*)$', mk, re.M)
structs = m.group(1).replace('\\\n', ' ').split() if m else []
if not structs:
    sys.exit('no BTF_STRUCTS in the Makefile')
src = open(sys.argv[1]).read()
for s in structs:
    size = r'LRUOPT_BTF_%s__SIZE\b' % s
    if not re.search(r'static_assert\(\s*sizeof\([^;]*\)\s*==\s*' + size, src) and \
       not re.search(r'^LRUOPT_MIRROR_SIZE\(\s*%s\s*\);' % s, src, re.M) and \
       not re.search(r'^#\s*(el)?if\s+defined\(' + size, src, re.M):
        print(s)
PY
}

out=$(unchecked lruopt_compat.h 2>&1)
rc=$?
if ((rc == 0)) && [[ -z $out ]]; then
	ok "every BTF_STRUCTS entry is asserted or a kernel-line marker"
else
	not_ok "every BTF_STRUCTS entry is asserted or a kernel-line marker"
	diag "unchecked: $out"
fi

# the check itself can fail: drop the folio_batch assert from a copy
grep -v 'sizeof(struct folio_batch) == LRUOPT_BTF_folio_batch__SIZE' \
	lruopt_compat.h >"$HT/compat.h"
out=$(unchecked "$HT/compat.h" 2>&1)
if [[ $out == folio_batch ]]; then
	ok "a copy without the folio_batch assert is reported"
else
	not_ok "a copy without the folio_batch assert is reported"
	diag "got: $out"
fi
