// SPDX-License-Identifier: GPL-2.0
/*
 * MADV_FREE that frees at once where memory is short.
 *
 * MADV_FREE marks anonymous pages lazily free: they stay mapped and
 * charged until reclaim finds them clean and discards them, and a write
 * before that keeps them.  Where the memory they sit on is already short,
 * that only moves the work into reclaim, which must now scan past them
 * (and swap other pages out) while the caller's next allocation waits;
 * the seed thread "mm: throttle MADV_FREE" (2015) measured the swap-in
 * storm that follows.  Upstream never merged the throttle.  This feature
 * is it: under pressure a MADV_FREE call is stock MADV_FREE followed at
 * once by the reclaim of the range's lazily free pages, otherwise it is
 * stock MADV_FREE alone.
 *
 * Exact by construction: the pages go through reclaim's own code,
 * reclaim_pages() as MADV_PAGEOUT uses it, so a page is discarded only on
 * stock reclaim's own terms: not written since the call, its refcount its
 * mapcount plus the isolation's, checked after the PTE is cleared
 * (try_to_unmap_one()'s MADV_FREE check, whose barriers pair with GUP-fast),
 * and frozen at one (shrink_folio_list()).  (6.12's reclaim_pages() ignores
 * the referenced bits, as MADV_PAGEOUT wants, so a page only read between
 * the two walks below is discarded where the LRU might have kept it a
 * while: a read does not cancel MADV_FREE.)  A page pinned long term
 * (io_uring fixed buffers, RDMA, vfio), held by I/O in flight or spliced
 * into a pipe keeps its frame and its mapping, and reclaim marks it
 * swap-backed again, as it would later.  The first version zapped the range
 * (MADV_DONTNEED's body) and separated such pages from their mapping: the
 * process wrote to a fresh page while the device kept the old one.
 *
 * Where: madvise_dontneed_free_valid_vma() (mm/madvise.c, the same source
 * on 6.1 and 6.12), the one out-of-line function both MADV_FREE and
 * MADV_DONTNEED pass before their dispatch; everything around it is
 * inlined into do_madvise().  It is restated exactly (DONTNEED, hugetlb
 * and every refusal stay stock).  For a MADV_FREE call on an anonymous vma
 * under pressure it then runs, before returning true as stock does:
 *  1. stock MADV_FREE's walk: madvise_free_single_vma() restated around
 *     the kernel's own madvise_free_pte_range() (clean and age each PTE,
 *     free swap entries, mark the folios lazily free), ending with the TLB
 *     flush, so that any write after it dirties a PTE reclaim will see;
 *  2. a walk of its own, PMD by PMD: this CPU's LRU batches drained, the
 *     small lazily free folios mapped once isolated from the LRU (as
 *     MADV_PAGEOUT isolates, under the PTE lock) and handed to
 *     reclaim_pages(), at most a PMD's worth at a time.
 * The caller then runs stock MADV_FREE over the range as always: it finds
 * the discarded pages gone and marks the kept ones lazily free again, the
 * state stock leaves them in.  Left lazy, as stock leaves them to reclaim:
 * huge PMDs and large folios, folios mapped more than once, folios still
 * in another CPU's LRU batch.
 *
 * Not converted, whatever the pressure: file, shmem and shared vmas (stock
 * MADV_FREE refuses them), droppable vmas (6.12), a vma with a userfaultfd context (its monitor
 * expects UFFD_EVENT_REMOVE before the pages go, from the stock path; if the
 * caller looks the vma up again after the event, it calls this function
 * again, and a vma without a context may then be converted), and a range
 * the caller did not clamp to the vma.
 *
 * Pressure: the node the caller runs on (where its pages and its next
 * allocations come from) has kswapd reclaiming one of its zones, or none
 * of the zones a user page may use has free pages above its high
 * watermark * wmark_pct / 100 plus the zone's reserve for such pages,
 * counting only what kswapd counts (zone_watermark_ok() with no allocation
 * flags: not the high-order atomic reserve, not CMA): kswapd's own test of
 * a balanced node (pgdat_balanced()), from per-zone counters without
 * summing per-cpu deltas (a node without memory is balanced, as there).
 * Or the memory cgroup the caller's pages are charged to (its mm's
 * owner's), or an ancestor, is near its limit (lruopt_memcg_short(): a container at memory.max on a
 * host with memory to spare, where MADV_FREE pages cost most).
 *
 * Locking: called with mmap_lock held for read, as MADV_FREE and
 * MADV_PAGEOUT run; the first walk nests the mmu_gather and the notifier
 * range exactly as stock's; the second takes each PTE lock and, inside it,
 * the lruvec lock of folio_isolate_lru(), MADV_PAGEOUT's order, and calls
 * reclaim_pages() with neither held (it sleeps: folio locks, the anon_vma
 * rwsem, no I/O for a lazily free page).  The stock function never sleeps,
 * so no task can hold the old code at a transition; ours may sleep in the
 * walks, and the transition's stack check sees it there.
 *
 * Cost: every MADV_FREE and MADV_DONTNEED call goes through the ftrace
 * redirection, so patch_lazyfree=auto puts the function in the patch only
 * when the feature starts enabled.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmzone.h>
#include <linux/pagewalk.h>
#include <linux/swap.h>
#include <linux/topology.h>
#include <linux/vmstat.h>
/*
 * struct mmu_gather: asm/tlb.h's inline tlb_flush() names
 * flush_tlb_mm_range(), which x86 declares for built-in code only
 * (asm/tlbflush.h, !MODULE).  Nothing here calls that inline: the flush
 * goes through the kernel's out-of-line tlb_finish_mmu().
 */
void flush_tlb_mm_range(struct mm_struct *mm, unsigned long start,
			unsigned long end, unsigned int stride_shift,
			bool freed_tables);
#include <asm/tlb.h>
#include "lruopt_sysfs.h"
#include "lruopt_trace.h"

/* Whether the feature is on at load; docs/benchmarks.md has the numbers. */
#define LAZYFREE_DEFAULT	true

enum {
	LS_CALLS, LS_FREED_NOW, LS_LAZY, LS_SKIPPED, LS_PAGES_FREED_NOW,
	LS_PAGES_KEPT, LS_STOCK, LS_NR
};

/*
 * calls: MADV_FREE calls (one per vma) that reached lruopt's path;
 * calls == freed_now + lazy + skipped.  freed_now: the calls under pressure,
 * whose range went to reclaim at once; pages_freed_now: the pages reclaim
 * discarded there (pglazyfreed counts them too); pages_kept: those it kept
 * (pinned, referenced by I/O, written again, locked).  stock: MADV_FREE
 * calls while the feature (or lruopt) was switched off.
 */
static const char *const lazyfree_stat_names[LS_NR + 1] = {
	[LS_CALLS] = "calls",
	[LS_FREED_NOW] = "freed_now",
	[LS_LAZY] = "lazy",
	[LS_SKIPPED] = "skipped",
	[LS_PAGES_FREED_NOW] = "pages_freed_now",
	[LS_PAGES_KEPT] = "pages_kept",
	[LS_STOCK] = "stock",
};

static struct lruopt_counters lazyfree_stats = {
	.names = lazyfree_stat_names,
};

/* Percent of the high watermark under which a zone counts as short. */
static unsigned int lazyfree_wmark_pct = 100;
#define LAZYFREE_WMARK_PCT_MAX	100000

/**
 * lazyfree_pressure - is the memory the caller allocates from short?
 * @nid: the node the caller runs on
 * @mm: the caller's mm, whose owner's memory cgroup its pages are charged to
 *
 * Return: LRUOPT_LAZYFREE_RECLAIM if kswapd is reclaiming one of the
 * node's zones, LRUOPT_LAZYFREE_WMARK if none of the zones a movable user
 * page may come from passes kswapd's test against its high watermark *
 * wmark_pct / 100, LRUOPT_LAZYFREE_MEMCG if @mm's memory cgroup or an
 * ancestor is near its limit, else LRUOPT_LAZYFREE_LAZY.
 */
static enum lruopt_lazyfree_reason lazyfree_pressure(int nid,
						     struct mm_struct *mm)
{
	unsigned int pct = READ_ONCE(lazyfree_wmark_pct);
	int hi = gfp_zone(GFP_HIGHUSER_MOVABLE);
	pg_data_t *pgdat = NODE_DATA(nid);
	bool managed = false;
	int i;

	/* set by kswapd for its whole balancing run (balance_pgdat()) */
	for (i = 0; i <= hi; i++) {
		struct zone *zone = pgdat->node_zones + i;

		if (managed_zone(zone) &&
		    test_bit(ZONE_RECLAIM_ACTIVE, &zone->flags))
			return LRUOPT_LAZYFREE_RECLAIM;
	}
	/*
	 * pgdat_balanced()'s test, without the per-cpu sums: free pages but
	 * the highatomic reserve and CMA above the mark plus the zone's
	 * reserve against user pages.  One balanced zone is enough, so the
	 * largest (the highest) is asked first: a call without pressure
	 * usually asks one zone only, as the cost is paid by every call.
	 */
	if (pct) {
		for (i = hi; i >= 0; i--) {
			struct zone *zone = pgdat->node_zones + i;

			if (!managed_zone(zone))
				continue;
			managed = true;
			if (zone_watermark_ok(zone, 0,
					      mult_frac(high_wmark_pages(zone),
							pct, 100), hi, 0))
				break;
		}
		/* a node without memory is balanced (pgdat_balanced()) */
		if (managed && i < 0)
			return LRUOPT_LAZYFREE_WMARK;
	}
	if (lruopt_memcg_short(mm, pct))
		return LRUOPT_LAZYFREE_MEMCG;
	return LRUOPT_LAZYFREE_LAZY;
}

/*
 * May this MADV_FREE call be freed at once?  Only where stock
 * MADV_FREE itself would act (an anonymous vma, the range inside it), no
 * userfaultfd monitor waits for the removal event, and the vma is not
 * droppable (6.12: reclaim drops its pages even when written).
 */
static bool lazyfree_eligible(struct vm_area_struct *vma, unsigned long start,
			      unsigned long end)
{
	return vma_is_anonymous(vma) && !lruopt_vma_uffd_ctx(vma) &&
	       !(vma->vm_flags & LRUOPT_VM_DROPPABLE) &&
	       vma->vm_start <= start && start < end && end <= vma->vm_end;
}

/* The first walk: stock madvise_free_walk_ops, restated (see above). */
static int lazyfree_mark_pmd(pmd_t *pmd, unsigned long addr,
			     unsigned long next, struct mm_walk *walk)
{
	return madvise_free_pte_range(pmd, addr, next, walk);
}

/* 6.12's .walk_lock is left 0, PGWALK_RDLOCK, as stock's: mmap_lock read */
static const struct mm_walk_ops lazyfree_mark_ops = {
	.pmd_entry = lazyfree_mark_pmd,
};

/*
 * mm/madvise.c madvise_free_single_vma() (6.1 and 6.12), for a range that
 * lazyfree_eligible() has checked: stock MADV_FREE, TLB flush included.
 */
static void lazyfree_mark(struct vm_area_struct *vma, unsigned long start,
			  unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;
	struct mmu_notifier_range range;
	struct mmu_gather tlb;

	lruopt_range_init_clear(&range, vma, start, end);
	lru_add_drain();
	tlb_gather_mmu(&tlb, mm);
	update_hiwater_rss(mm);
	mmu_notifier_invalidate_range_start(&range);
	tlb_start_vma(&tlb, vma);
	walk_page_range(mm, start, end, &lazyfree_mark_ops, &tlb);
	/*
	 * tlb_end_vma() left out: x86 merges vmas (MMU_GATHER_MERGE_VMAS),
	 * so it flushes only for VM_PFNMAP/VM_MIXEDMAP vmas, never for an
	 * anonymous one; tlb_finish_mmu() flushes the range, as for stock.
	 */
	mmu_notifier_invalidate_range_end(&range);
	tlb_finish_mmu(&tlb);
}

/* What the second walk did, in pages. */
struct lazyfree_reclaimed {
	unsigned long freed;
	unsigned long kept;
};

/*
 * A small folio the first walk marked lazily free (reclaim's own test:
 * anonymous, not swap-backed) and that only this mapping maps.
 */
static bool lazyfree_candidate(struct folio *folio)
{
	return folio_test_anon(folio) && !folio_test_swapbacked(folio) &&
	       !folio_test_large(folio) && folio_mapcount(folio) == 1;
}

/*
 * The second walk, one PMD: isolate the candidates under the PTE lock, then
 * let reclaim decide each one (MADV_PAGEOUT's pattern; see above).
 */
static int lazyfree_reclaim_pmd(pmd_t *pmd, unsigned long addr,
				unsigned long end, struct mm_walk *walk)
{
	struct lazyfree_reclaimed *r = walk->private;
	unsigned long nr = 0, freed;
	pte_t *start_pte, *pte;
	LIST_HEAD(folios);
	spinlock_t *ptl;	/* the PTE lock */

	start_pte = lruopt_pte_map_lock(walk->mm, pmd, addr, &ptl);
	if (!start_pte)
		return 0;
	for (pte = start_pte; addr != end; pte++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);
		struct folio *folio;

		if (!pte_present(ptent))
			continue;
		folio = lruopt_pte_folio(walk->vma, addr, ptent);
		if (!folio || !lazyfree_candidate(folio) ||
		    !lruopt_folio_isolate_lru(folio))
			continue;
		if (folio_test_unevictable(folio)) {
			folio_putback_lru(folio);
			continue;
		}
		list_add(&folio->lru, &folios);
		nr++;
	}
	pte_unmap_unlock(start_pte, ptl);
	if (nr) {
		freed = reclaim_pages(&folios);
		r->freed += freed;
		r->kept += nr - freed;
	}
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
}

static const struct mm_walk_ops lazyfree_reclaim_ops = {
	.pmd_entry = lazyfree_reclaim_pmd,
};

/*
 * Stock MADV_FREE on the range, then reclaim of its lazily free pages.
 * Not inlined, so that it can never become a tail call out of the patched
 * function (klp-convert checks).
 */
static noinline void lazyfree_now(struct vm_area_struct *vma,
				  unsigned long start, unsigned long end,
				  struct lazyfree_reclaimed *r)
{
	lazyfree_mark(vma, start, end);
	/* the first walk's lru_lazyfree batch (this CPU) onto the LRU */
	lru_add_drain();
	walk_page_range(vma->vm_mm, start, end, &lazyfree_reclaim_ops, r);
}

/**
 * lruopt_madvise_dontneed_free_valid_vma - replacement for the stock check
 * @vma: the vma of the range
 * @start: the range's start
 * @end: the range's end
 * @behavior: MADV_DONTNEED, MADV_DONTNEED_LOCKED or MADV_FREE
 *
 * The stock check, restated exactly (mm/madvise.c, 6.1 and 6.12 alike);
 * then, for MADV_FREE under pressure, stock MADV_FREE and the reclaim of
 * the range's lazily free pages, before the caller's own MADV_FREE.
 *
 * Context: mmap_lock held for read; may sleep under pressure.
 * Return: false if @vma does not allow @behavior (the caller fails with
 * -EINVAL), as stock.
 */
static bool lruopt_madvise_dontneed_free_valid_vma(struct vm_area_struct *vma,
						   unsigned long start,
						   unsigned long *end,
						   int behavior)
{
	unsigned long forbidden = VM_PFNMAP;
	struct lazyfree_reclaimed r = { };
	enum lruopt_lazyfree_reason why;

	if (is_vm_hugetlb_page(vma)) {
		if (behavior != MADV_DONTNEED &&
		    behavior != MADV_DONTNEED_LOCKED)
			return false;
		if (start & ~huge_page_mask(hstate_vma(vma)))
			return false;
		/* the stock rounding down to whole huge pages */
		*end = ALIGN_DOWN(*end, huge_page_size(hstate_vma(vma)));
		return true;
	}
	if (behavior != MADV_DONTNEED_LOCKED)
		forbidden |= VM_LOCKED;
	if (vma->vm_flags & forbidden)
		return false;
	if (behavior != MADV_FREE)
		return true;
	if (!lruopt_active(&lruopt_lazyfree_feature)) {
		lruopt_count(&lazyfree_stats, LS_STOCK, 1);
		return true;
	}
	lruopt_count(&lazyfree_stats, LS_CALLS, 1);
	if (!lazyfree_eligible(vma, start, *end)) {
		lruopt_count(&lazyfree_stats, LS_SKIPPED, 1);
		return true;
	}
	why = lazyfree_pressure(numa_node_id(), vma->vm_mm);
	if (why == LRUOPT_LAZYFREE_LAZY) {
		lruopt_count(&lazyfree_stats, LS_LAZY, 1);
	} else {
		lazyfree_now(vma, start, *end, &r);
		lruopt_count(&lazyfree_stats, LS_FREED_NOW, 1);
		lruopt_count(&lazyfree_stats, LS_PAGES_FREED_NOW, r.freed);
		lruopt_count(&lazyfree_stats, LS_PAGES_KEPT, r.kept);
	}
	trace_lazyfree(start, *end, why, r.freed, r.kept);
	return true;
}

LRUOPT_UINT_KNOB(lazyfree, wmark_pct, lazyfree_wmark_pct, 0,
		 LAZYFREE_WMARK_PCT_MAX,
		 "Initial value of lazyfree/wmark_pct: a zone is short below this percent of its high watermark (0-100000, default 100; 0: only while kswapd reclaims)");

static struct attribute *lazyfree_attrs[] = {
	&wmark_pct_attr.kattr.attr,
	NULL,
};

#if LRUOPT_HAVE_LAZYFREE
static const struct klp_func lazyfree_funcs[] = {
	LRUOPT_FUNC(madvise_dontneed_free_valid_vma),
	{ }
};
#else
static const struct klp_func lazyfree_funcs[] = { { } };
#endif

LRUOPT_PATCH_PARAM(lazyfree,
		   "Put the MADV_FREE/MADV_DONTNEED check in the livepatch: auto (default: when lazyfree starts enabled, its default; lazyfree_enabled=0 leaves it out), 1 (always), 0 (never)");

/*
 * Every MADV_FREE and MADV_DONTNEED call pays the redirection once the
 * function is in the patch: auto leaves it out unless the feature starts
 * enabled (its default, or lazyfree_enabled=1).
 */
static const char *lruopt_lazyfree_decide(void)
{
	if (lruopt_lazyfree_feature.enabled)
		return "lazyfree starts enabled";
	lruopt_lazyfree_feature.supported = false;
	return "lazyfree starts disabled; lazyfree_enabled=1 puts it in";
}

struct lruopt_feature lruopt_lazyfree_feature = {
	.name = "lazyfree",
	.enabled = LRUOPT_HAVE_LAZYFREE && LAZYFREE_DEFAULT,
	.funcs = lazyfree_funcs,
	.attrs = lazyfree_attrs,
	.counters = &lazyfree_stats,
	.decide = lruopt_lazyfree_decide,
	.patch_mode = &patch_lazyfree,
	.unsupported_why = LRUOPT_LAZYFREE_WHY,
};

LRUOPT_FEATURE_PARAM(lazyfree);
