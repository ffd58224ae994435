#!/bin/sh
# 01-names: for each symbol docs/design.md (PREEMPT_RT) reaches through a
# livepatch relocation, print how many times its exact name occurs in
# /proc/kallsyms (livepatch sympos 0 needs exactly one), and the bounds of
# the IBT seal list, as "KCOUNT <n> <name>" and "KSYM ..." lines.
# lruopt-timeout: 120
. /tests/lib.sh

echo 0 >/proc/sys/kernel/kptr_restrict
out=/tmp/kcount
: >"$out"
for s in folio_batch_move_lru lru_add lru_add_fn lru_move_tail lru_move_tail_fn \
	lru_deactivate_file lru_deactivate_file_fn lru_deactivate lru_deactivate_fn \
	lru_lazyfree lru_lazyfree_fn lru_activate folio_activate_fn \
	mlock_folio_batch mlock_pagevec cpu_fbatches lru_rotate mlock_fbatch \
	mlock_pvec bh_lrus lru_disable_count __lru_add_drain_all \
	folio_lruvec_lock_irqsave folios_put_refs release_pages \
	invalidate_bh_lrus_cpu has_bh_in_lru need_mlock_drain \
	need_mlock_page_drain; do
	echo "KCOUNT $(awk -v n="$s" '$3 == n' /proc/kallsyms | wc -l) $s" >>"$out"
done
cat "$out"
grep -E ' (__ibt_endbr_seal|__ibt_endbr_seal_end)$' /proc/kallsyms | sed 's/^/KSYM /'
# livepatch resolves these with sympos 0: a name seen twice is unusable
assert_eq "no name occurs more than once" "" "$(awk '$2 > 1' "$out")"
