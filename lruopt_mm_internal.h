/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copies of the private mm helpers lruopt's 6.12 mlock walk needs.
 *
 * They are static inlines of mm/internal.h and mm/mlock.c in Linux 6.12
 * (the Debian 6.12 line), invisible to a module, so they are re-stated
 * here, each named after its upstream source:
 *
 *   lruopt_folio_pte_batch()     mm/internal.h folio_pte_batch(), with the
 *                                flags FPB_IGNORE_DIRTY |
 *                                FPB_IGNORE_SOFT_DIRTY that
 *                                folio_mlock_step() passes
 *   lruopt_folio_within_range()  mm/internal.h folio_within_range()
 *   lruopt_mlock_step()          mm/mlock.c folio_mlock_step() and
 *                                allow_mlock_munlock()
 *
 * Only lruopt_compat.h includes this file, in its 6.12 section (6.1 walks
 * page by page and needs none of it).  When the target kernel changes one
 * of these functions, change the copy here and say so in its comment.
 */
#ifndef _LRUOPT_MM_INTERNAL_H
#define _LRUOPT_MM_INTERNAL_H

#include <linux/mm.h>
#include <linux/pgtable.h>

/*
 * Number of PTEs from @pte on that map consecutive pages of @folio with the
 * same bits but dirty/soft-dirty/young/write: mm/internal.h's
 * folio_pte_batch() with FPB_IGNORE_DIRTY | FPB_IGNORE_SOFT_DIRTY, as
 * folio_mlock_step() uses it (x86 has no contiguous-PTE hint: steps of 1).
 */
static inline pte_t lruopt_pte_batch_clear(pte_t pte)
{
	return pte_wrprotect(pte_mkold(pte_clear_soft_dirty(pte_mkclean(pte))));
}

static inline unsigned int lruopt_folio_pte_batch(struct folio *folio,
						  pte_t *ptep, pte_t pte,
						  unsigned int max_nr)
{
	unsigned long left = folio_pfn(folio) + folio_nr_pages(folio) -
			     pte_pfn(pte);
	pte_t expected = lruopt_pte_batch_clear(pte_advance_pfn(pte, 1));
	unsigned int nr = 1;

	max_nr = min_t(unsigned long, max_nr, left);
	while (nr < max_nr) {
		if (!pte_same(lruopt_pte_batch_clear(ptep_get(ptep + nr)),
			      expected))
			break;
		expected = pte_advance_pfn(expected, 1);
		nr++;
	}
	return min(nr, max_nr);
}

/* mm/internal.h folio_within_range(), Linux 6.12 */
static inline bool lruopt_folio_within_range(struct folio *folio,
					     struct vm_area_struct *vma,
					     unsigned long start,
					     unsigned long end)
{
	pgoff_t pgoff, addr;

	if (start > end)
		return false;
	start = max(start, vma->vm_start);
	end = min(end, vma->vm_end);
	pgoff = folio_pgoff(folio);
	if (!in_range(pgoff, vma->vm_pgoff, vma_pages(vma)))
		return false;
	addr = vma->vm_start + ((pgoff - vma->vm_pgoff) << PAGE_SHIFT);
	return !(addr < start || end - addr < folio_size(folio));
}

/*
 * mm/mlock.c folio_mlock_step() and allow_mlock_munlock(): how many PTEs the
 * walk consumes for @folio, and (in @act) whether it mlocks/munlocks it.
 */
static inline unsigned int lruopt_mlock_step(struct folio *folio, pte_t *pte,
					     unsigned long addr,
					     unsigned long end,
					     struct vm_area_struct *vma,
					     unsigned long start, bool *act)
{
	unsigned int step = 1;

	if (folio_test_large(folio))
		step = lruopt_folio_pte_batch(folio, pte, ptep_get(pte),
					      (end - addr) >> PAGE_SHIFT);
	*act = !(vma->vm_flags & VM_LOCKED) || !folio_test_large(folio) ||
	       (lruopt_folio_within_range(folio, vma, start, end) &&
		step == folio_nr_pages(folio));
	return step;
}

#endif /* _LRUOPT_MM_INTERNAL_H */
