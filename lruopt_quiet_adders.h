/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU LRU batch adders of each kernel line, restated with one
 * change: on a quiet CPU (lruopt_quiet_here()) the folio is moved to its
 * LRU at once, as every one of them already does while
 * lru_cache_disabled().  Everything else is the kernel's code, in the same
 * order, under the same locks, with the kernel's own move and batch
 * functions; each copy is named after its upstream function.  Only
 * lruopt_quiet.c includes this file, after defining lruopt_quiet_here().
 *
 *   6.12: mm/swap.c's __folio_batch_add_and_move() is one out-of-line
 *         function behind all six folio batches (lru_add, move_tail,
 *         deactivate_file, deactivate, lazyfree, activate); mm/mlock.c's
 *         mlock_folio(), mlock_new_folio() and munlock_folio() fill the
 *         mlock batch.
 *   6.1:  folio_batch_add_and_move() is inlined into each of its six
 *         callers, which are replaced one by one; mm/mlock.c's
 *         mlock_folio(), mlock_new_page() and munlock_page() fill the mlock
 *         pagevec.  The buffer-head LRU is filled inside
 *         __find_get_block() (bh_lru_install() inlined): not replaceable
 *         without copying fs/buffer.c, so a quiet CPU on 6.1 can still hold
 *         buffer heads there (6.6 stopped filling it on isolated CPUs).
 *
 * lruopt_quiet_funcs[] is the line's list of replaced functions.
 * Each function ends with the unlock, never with a call: no tail call can
 * leave a sleeping task outside the new function (Kbuild, klp-convert).
 * When the target kernel changes one of these functions, change the copy
 * here and say so in its comment.
 */
#ifndef _LRUOPT_QUIET_ADDERS_H
#define _LRUOPT_QUIET_ADDERS_H

#include <linux/swap.h>
#include <linux/vmstat.h>
#include "lruopt.h"

/* mm/mlock.c: what the low pointer bits of a batched folio/page ask for */
#define LRUOPT_MLOCK_LRU	0x1
#define LRUOPT_MLOCK_NEW	0x2

#if defined(LRUOPT_BTF_mlock_fbatch__SIZE)
/* ------------------------------------------------------------- 6.12 ---- */

static inline struct folio *lruopt_mlock_tag(struct folio *folio,
					     unsigned long tag)
{
	return (struct folio *)((unsigned long)folio + tag);
}

/* mm/swap.c __folio_batch_add_and_move(), Linux 6.12 (Debian 6.12.118) */
static void lruopt_folio_batch_add_and_move(struct folio_batch __percpu *fbatch,
					    struct folio *folio,
					    lruopt_move_fn_t move_fn,
					    bool disable_irq)
{
	unsigned long flags;

	folio_get(folio);

	if (disable_irq)
		local_lock_irqsave(&cpu_fbatches.lock_irq, flags);
	else
		local_lock(&cpu_fbatches.lock);

	if (!folio_batch_add(this_cpu_ptr(fbatch), folio) ||
	    !folio_may_be_lru_cached(folio) || lru_cache_disabled() ||
	    lruopt_quiet_here())
		folio_batch_move_lru(this_cpu_ptr(fbatch), move_fn);

	if (disable_irq)
		local_unlock_irqrestore(&cpu_fbatches.lock_irq, flags);
	else
		local_unlock(&cpu_fbatches.lock);
}

/* The tail every mlock batch adder shares, under mlock_fbatch.lock. */
static inline void lruopt_mlock_batch_add(struct folio_batch *fbatch,
					  struct folio *folio,
					  struct folio *tagged)
{
	folio_get(folio);
	if (!folio_batch_add(fbatch, tagged) ||
	    !folio_may_be_lru_cached(folio) || lru_cache_disabled() ||
	    lruopt_quiet_here())
		mlock_folio_batch(fbatch);
}

/* mm/mlock.c mlock_folio(), Linux 6.12 */
static void lruopt_mlock_folio(struct folio *folio)
{
	struct folio_batch *fbatch;

	local_lock(&mlock_fbatch.lock);
	fbatch = this_cpu_ptr(&mlock_fbatch.fbatch);

	if (!folio_test_set_mlocked(folio)) {
		int nr_pages = folio_nr_pages(folio);

		zone_stat_mod_folio(folio, NR_MLOCK, nr_pages);
		__count_vm_events(UNEVICTABLE_PGMLOCKED, nr_pages);
	}

	lruopt_mlock_batch_add(fbatch, folio,
			       lruopt_mlock_tag(folio, LRUOPT_MLOCK_LRU));
	local_unlock(&mlock_fbatch.lock);
}

/* mm/mlock.c mlock_new_folio(), Linux 6.12 */
static void lruopt_mlock_new_folio(struct folio *folio)
{
	struct folio_batch *fbatch;
	int nr_pages = folio_nr_pages(folio);

	local_lock(&mlock_fbatch.lock);
	fbatch = this_cpu_ptr(&mlock_fbatch.fbatch);
	folio_set_mlocked(folio);

	zone_stat_mod_folio(folio, NR_MLOCK, nr_pages);
	__count_vm_events(UNEVICTABLE_PGMLOCKED, nr_pages);

	lruopt_mlock_batch_add(fbatch, folio,
			       lruopt_mlock_tag(folio, LRUOPT_MLOCK_NEW));
	local_unlock(&mlock_fbatch.lock);
}

/* mm/mlock.c munlock_folio(), Linux 6.12 */
static void lruopt_munlock_folio(struct folio *folio)
{
	struct folio_batch *fbatch;

	local_lock(&mlock_fbatch.lock);
	fbatch = this_cpu_ptr(&mlock_fbatch.fbatch);
	/* the mlocked flag is cleared by __munlock_folio(), as stock */
	lruopt_mlock_batch_add(fbatch, folio, folio);
	local_unlock(&mlock_fbatch.lock);
}

static const struct klp_func lruopt_quiet_funcs[] = {
	{ .old_name = "__folio_batch_add_and_move",
	  .new_func = lruopt_folio_batch_add_and_move },
	LRUOPT_FUNC(mlock_folio),
	LRUOPT_FUNC(mlock_new_folio),
	LRUOPT_FUNC(munlock_folio),
	{ }
};

#elif defined(LRUOPT_BTF_mlock_pvec__SIZE)
/* -------------------------------------------------------------- 6.1 ---- */

static inline struct page *lruopt_mlock_tag(struct page *page,
					    unsigned long tag)
{
	return (struct page *)((unsigned long)page + tag);
}

/*
 * include/linux/mm_inline.h lru_gen_enabled(), read as data: its
 * static_branch would put an unexported key into the module's jump table,
 * which the module loader patches before livepatch resolves anything
 * (klp-convert refuses it).  Debian 6.1 builds CONFIG_LRU_GEN=y,
 * CONFIG_LRU_GEN_ENABLED=n: the keys are static_key_false.
 */
DECLARE_STATIC_KEY_FALSE(lru_gen_caps[NR_LRU_GEN_CAPS]);

static inline bool lruopt_lru_gen_enabled(void)
{
	return static_key_enabled(&lru_gen_caps[LRU_GEN_CORE]);
}

/* mm/swap.c folio_batch_add_and_move(), Debian 6.1 (inlined there) */
static inline void lruopt_folio_batch_add_and_move(struct folio_batch *fbatch,
						   struct folio *folio,
						   lruopt_move_fn_t move_fn)
{
	if (folio_batch_add(fbatch, folio) &&
	    folio_may_be_lru_cached(folio) && !lru_cache_disabled() &&
	    !lruopt_quiet_here())
		return;
	folio_batch_move_lru(fbatch, move_fn);
}

/* mm/swap.c folio_rotate_reclaimable(), Debian 6.1 */
static void lruopt_folio_rotate_reclaimable(struct folio *folio)
{
	if (!folio_test_locked(folio) && !folio_test_dirty(folio) &&
	    !folio_test_unevictable(folio) && folio_test_lru(folio)) {
		struct folio_batch *fbatch;
		unsigned long flags;

		folio_get(folio);
		local_lock_irqsave(&lru_rotate.lock, flags);
		fbatch = this_cpu_ptr(&lru_rotate.fbatch);
		lruopt_folio_batch_add_and_move(fbatch, folio,
						lru_move_tail_fn);
		local_unlock_irqrestore(&lru_rotate.lock, flags);
	}
}

/* mm/swap.c folio_activate() (CONFIG_SMP), Debian 6.1 */
static void lruopt_folio_activate(struct folio *folio)
{
	if (folio_test_lru(folio) && !folio_test_active(folio) &&
	    !folio_test_unevictable(folio)) {
		struct folio_batch *fbatch;

		folio_get(folio);
		local_lock(&cpu_fbatches.lock);
		fbatch = this_cpu_ptr(&cpu_fbatches.activate);
		lruopt_folio_batch_add_and_move(fbatch, folio,
						folio_activate_fn);
		local_unlock(&cpu_fbatches.lock);
	}
}

/* mm/swap.c folio_add_lru(), Debian 6.1 */
static void lruopt_folio_add_lru(struct folio *folio)
{
	struct folio_batch *fbatch;

	/* VM_BUG_ON_FOLIO() there: both compile away without CONFIG_DEBUG_VM */
	VM_WARN_ON_ONCE_FOLIO(folio_test_active(folio) &&
			      folio_test_unevictable(folio), folio);
	VM_WARN_ON_ONCE_FOLIO(folio_test_lru(folio), folio);

	/* see the comment in lru_gen_add_folio() */
	if (lruopt_lru_gen_enabled() && !folio_test_unevictable(folio) &&
	    lru_gen_in_fault() && !(current->flags & PF_MEMALLOC))
		folio_set_active(folio);

	folio_get(folio);
	local_lock(&cpu_fbatches.lock);
	fbatch = this_cpu_ptr(&cpu_fbatches.lru_add);
	lruopt_folio_batch_add_and_move(fbatch, folio, lru_add_fn);
	local_unlock(&cpu_fbatches.lock);
}

/* mm/swap.c deactivate_file_folio(), Debian 6.1 */
static void lruopt_deactivate_file_folio(struct folio *folio)
{
	struct folio_batch *fbatch;

	if (folio_test_unevictable(folio))
		return;

	folio_get(folio);
	local_lock(&cpu_fbatches.lock);
	fbatch = this_cpu_ptr(&cpu_fbatches.lru_deactivate_file);
	lruopt_folio_batch_add_and_move(fbatch, folio, lru_deactivate_file_fn);
	local_unlock(&cpu_fbatches.lock);
}

/* mm/swap.c deactivate_page(), Debian 6.1 */
static void lruopt_deactivate_page(struct page *page)
{
	struct folio *folio = page_folio(page);

	if (folio_test_lru(folio) && !folio_test_unevictable(folio) &&
	    (folio_test_active(folio) || lruopt_lru_gen_enabled())) {
		struct folio_batch *fbatch;

		folio_get(folio);
		local_lock(&cpu_fbatches.lock);
		fbatch = this_cpu_ptr(&cpu_fbatches.lru_deactivate);
		lruopt_folio_batch_add_and_move(fbatch, folio,
						lru_deactivate_fn);
		local_unlock(&cpu_fbatches.lock);
	}
}

/* mm/swap.c mark_page_lazyfree(), Debian 6.1 */
static void lruopt_mark_page_lazyfree(struct page *page)
{
	struct folio *folio = page_folio(page);

	if (folio_test_lru(folio) && folio_test_anon(folio) &&
	    folio_test_swapbacked(folio) && !folio_test_swapcache(folio) &&
	    !folio_test_unevictable(folio)) {
		struct folio_batch *fbatch;

		folio_get(folio);
		local_lock(&cpu_fbatches.lock);
		fbatch = this_cpu_ptr(&cpu_fbatches.lru_lazyfree);
		lruopt_folio_batch_add_and_move(fbatch, folio,
						lru_lazyfree_fn);
		local_unlock(&cpu_fbatches.lock);
	}
}

/* mm/mlock.c mlock_folio(), Debian 6.1 */
static void lruopt_mlock_folio(struct folio *folio)
{
	struct pagevec *pvec;

	local_lock(&mlock_pvec.lock);
	pvec = this_cpu_ptr(&mlock_pvec.vec);

	if (!folio_test_set_mlocked(folio)) {
		int nr_pages = folio_nr_pages(folio);

		zone_stat_mod_folio(folio, NR_MLOCK, nr_pages);
		__count_vm_events(UNEVICTABLE_PGMLOCKED, nr_pages);
	}

	folio_get(folio);
	if (!pagevec_add(pvec, lruopt_mlock_tag(&folio->page,
						LRUOPT_MLOCK_LRU)) ||
	    !folio_may_be_lru_cached(folio) || lru_cache_disabled() ||
	    lruopt_quiet_here())
		mlock_pagevec(pvec);
	local_unlock(&mlock_pvec.lock);
}

/* mm/mlock.c mlock_new_page(), Debian 6.1 */
static void lruopt_mlock_new_page(struct page *page)
{
	struct pagevec *pvec;
	int nr_pages = thp_nr_pages(page);

	local_lock(&mlock_pvec.lock);
	pvec = this_cpu_ptr(&mlock_pvec.vec);
	SetPageMlocked(page);
	mod_zone_page_state(page_zone(page), NR_MLOCK, nr_pages);
	__count_vm_events(UNEVICTABLE_PGMLOCKED, nr_pages);

	get_page(page);
	if (!pagevec_add(pvec, lruopt_mlock_tag(page, LRUOPT_MLOCK_NEW)) ||
	    PageHead(page) || lru_cache_disabled() || lruopt_quiet_here())
		mlock_pagevec(pvec);
	local_unlock(&mlock_pvec.lock);
}

/* mm/mlock.c munlock_page(), Debian 6.1 */
static void lruopt_munlock_page(struct page *page)
{
	struct pagevec *pvec;

	local_lock(&mlock_pvec.lock);
	pvec = this_cpu_ptr(&mlock_pvec.vec);
	/* the mlocked flag is cleared by __munlock_page(), as stock */
	get_page(page);
	if (!pagevec_add(pvec, page) ||
	    PageHead(page) || lru_cache_disabled() || lruopt_quiet_here())
		mlock_pagevec(pvec);
	local_unlock(&mlock_pvec.lock);
}

static const struct klp_func lruopt_quiet_funcs[] = {
	LRUOPT_FUNC(folio_rotate_reclaimable),
	LRUOPT_FUNC(folio_activate),
	LRUOPT_FUNC(folio_add_lru),
	LRUOPT_FUNC(deactivate_file_folio),
	LRUOPT_FUNC(deactivate_page),
	LRUOPT_FUNC(mark_page_lazyfree),
	LRUOPT_FUNC(mlock_folio),
	LRUOPT_FUNC(mlock_new_page),
	LRUOPT_FUNC(munlock_page),
	{ }
};

#endif

#endif /* _LRUOPT_QUIET_ADDERS_H */
