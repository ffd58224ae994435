#!/bin/sh
# 00-kallsyms: print the /proc/kallsyms lines docs/design.md (PREEMPT_RT)
# relies on (per-cpu batches, their move and drain functions, bh LRUs, hotplug
# callback) as "KSYM <addr> <type> <name>" lines, for an RT design study.
# Not part of any suite: run it on purpose with
#   tests/vm/mkinitramfs --no-ko --tests tests/rt/probe KVER OUT.cpio.gz
#   vmslot tests/vm/vmrun --kernel KVER --initrd OUT.cpio.gz --append nokaslr
# lruopt-timeout: 120
. /tests/lib.sh

echo 0 >/proc/sys/kernel/kptr_restrict
diag "uname -v: $(uname -v)"
diag "realtime: $(cat /sys/kernel/realtime 2>/dev/null || echo absent)"
diag "cmdline: $(cat /proc/cmdline)"
re=' (folio_batch|__folio_batch|lru_|__lru_|mlock_|__mlock|__munlock|munlock_'
re="$re|need_mlock|cpu_fbatches|bh_lru|invalidate_bh|has_bh_in_lru"
re="$re|folio_activate|folios_put|release_pages|page_alloc_cpu_dead"
re="$re|folio_lruvec_|lru_rotate|lru_disable|mem_cgroup_move|folio_memcg"
re="$re|lock_page_memcg|unlock_page_memcg|mlock_folio|mlock_new|mlock_page)"
grep -E "$re" /proc/kallsyms | grep -v '\[' | sed 's/^/KSYM /'
n=$(grep -cE "$re" /proc/kallsyms)
# per-cpu symbols sit at small offsets: judge by a text symbol
check "kallsyms shows addresses" sh -c \
	'grep " T lru_add_drain\$" /proc/kallsyms | grep -qv "^0000000000000000"'
check "found $n matching symbols" test "$n" -gt 20
