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
 * is it: under pressure a MADV_FREE call zaps its range as MADV_DONTNEED
 * would, otherwise it is stock MADV_FREE.  The hint allows it: the kernel
 * may free MADV_FREE pages at any time, and a freed page reads back as
 * zeroes, as after reclaim.
 *
 * Where: madvise_dontneed_free_valid_vma() (mm/madvise.c, the same source
 * on 6.1 and 6.12), the one out-of-line function both MADV_FREE and
 * MADV_DONTNEED pass before their dispatch; everything around it is
 * inlined into do_madvise().  It is restated exactly (DONTNEED, hugetlb
 * and every refusal stay stock); for a MADV_FREE call on an anonymous vma
 * under pressure it then zaps the range with zap_page_range_single(),
 * which is stock MADV_DONTNEED's whole body, and sets *end = start: the
 * caller's own "start == end" exit then returns 0 without the lazy walk,
 * as stock MADV_FREE returns 0.  The prototype is checked against the
 * kernel's BTF at build time (LRUOPT_BTF_FN_madvise_dontneed_free_valid_vma);
 * the caller's "start == end" exit, which BTF cannot show, is what
 * tests/85-lazyfree.sh checks by reading the range back.
 *
 * Not converted, whatever the pressure: file, shmem and shared vmas (stock
 * MADV_FREE refuses them), a vma with a userfaultfd context (its monitor
 * expects UFFD_EVENT_REMOVE before the pages go, from the stock path), and
 * a range the caller did not clamp to the vma.
 *
 * Pressure: the node the caller runs on (where its pages and its next
 * allocations come from) has kswapd reclaiming one of its zones, or none
 * of the zones a user page may use has free pages above its high
 * watermark * wmark_pct / 100 plus the zone's reserve for such pages:
 * kswapd's own test of a balanced node (pgdat_balanced()), from per-zone
 * counters without summing per-cpu deltas: a few loads per zone.
 *
 * Locking: called with mmap_lock held for read, as stock MADV_DONTNEED
 * zaps; zap_page_range_single() sets up and finishes its own mmu_gather
 * and mmu-notifier range, so nothing nests.  The stock function never
 * sleeps, so no task can hold the old code at a transition; ours may
 * sleep in the zap, and the transition's stack check sees it there.
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
#include <linux/topology.h>
#include <linux/vmstat.h>
#include "lruopt_sysfs.h"
#include "lruopt_trace.h"

/* Whether the feature is on at load; docs/benchmarks.md has the numbers. */
#define LAZYFREE_DEFAULT	true

enum {
	LS_CALLS, LS_FREED_NOW, LS_LAZY, LS_SKIPPED, LS_PAGES_FREED_NOW,
	LS_STOCK, LS_NR
};

/*
 * calls: MADV_FREE calls (one per vma) that reached lruopt's path;
 * calls == freed_now + lazy + skipped.  pages_freed_now: the pages of the
 * ranges freed at once (mapped or not).  stock: MADV_FREE calls while the
 * feature (or lruopt) was switched off.
 */
static const char *const lazyfree_stat_names[LS_NR + 1] = {
	[LS_CALLS] = "calls",
	[LS_FREED_NOW] = "freed_now",
	[LS_LAZY] = "lazy",
	[LS_SKIPPED] = "skipped",
	[LS_PAGES_FREED_NOW] = "pages_freed_now",
	[LS_STOCK] = "stock",
};

static struct lruopt_counters lazyfree_stats = {
	.names = lazyfree_stat_names,
};

/* Percent of the high watermark under which a zone counts as short. */
static unsigned int lazyfree_wmark_pct = 100;
#define LAZYFREE_WMARK_PCT_MAX	100000

/**
 * lazyfree_pressure - is the memory of node @nid short for user pages?
 * @nid: the node
 *
 * Return: LRUOPT_LAZYFREE_RECLAIM if kswapd is reclaiming one of its
 * zones, LRUOPT_LAZYFREE_WMARK if none of the zones a movable user page
 * may come from is above its high watermark * wmark_pct / 100 plus its
 * reserve against such pages, else LRUOPT_LAZYFREE_LAZY.
 */
static enum lruopt_lazyfree_reason lazyfree_pressure(int nid)
{
	unsigned int pct = READ_ONCE(lazyfree_wmark_pct);
	int hi = gfp_zone(GFP_HIGHUSER_MOVABLE);
	pg_data_t *pgdat = NODE_DATA(nid);
	bool balanced = false;
	int i;

	for (i = 0; i <= hi; i++) {
		struct zone *zone = pgdat->node_zones + i;
		unsigned long mark;

		if (!managed_zone(zone))
			continue;
		/* set by kswapd for its whole balancing run (balance_pgdat()) */
		if (test_bit(ZONE_RECLAIM_ACTIVE, &zone->flags))
			return LRUOPT_LAZYFREE_RECLAIM;
		mark = mult_frac(high_wmark_pages(zone), pct, 100) +
		       zone->lowmem_reserve[hi];
		if (zone_page_state(zone, NR_FREE_PAGES) > mark)
			balanced = true;
	}
	return balanced || !pct ? LRUOPT_LAZYFREE_LAZY : LRUOPT_LAZYFREE_WMARK;
}

/*
 * May this MADV_FREE call be turned into a zap?  Only where stock
 * MADV_FREE itself would act (an anonymous vma, the range inside it) and
 * no userfaultfd monitor waits for the removal event.
 */
static bool lazyfree_eligible(struct vm_area_struct *vma, unsigned long start,
			      unsigned long end)
{
	return vma_is_anonymous(vma) && !lruopt_vma_uffd_ctx(vma) &&
	       vma->vm_start <= start && start < end && end <= vma->vm_end;
}

/**
 * lruopt_madvise_dontneed_free_valid_vma - replacement for the stock check
 * @vma: the vma of the range
 * @start: the range's start
 * @end: the range's end; set to @start when the range was freed here
 * @behavior: MADV_DONTNEED, MADV_DONTNEED_LOCKED or MADV_FREE
 *
 * The stock check, restated exactly (mm/madvise.c, 6.1 and 6.12 alike);
 * then, for MADV_FREE under pressure, the range freed at once.
 *
 * Context: mmap_lock held for read.
 * Return: false if @vma does not allow @behavior (the caller fails with
 * -EINVAL), as stock.
 */
static bool lruopt_madvise_dontneed_free_valid_vma(struct vm_area_struct *vma,
						   unsigned long start,
						   unsigned long *end,
						   int behavior)
{
	unsigned long forbidden = VM_PFNMAP;
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
	why = lazyfree_pressure(numa_node_id());
	trace_lazyfree(start, *end, why);
	if (why == LRUOPT_LAZYFREE_LAZY) {
		lruopt_count(&lazyfree_stats, LS_LAZY, 1);
		return true;
	}
	/* stock MADV_DONTNEED's body (madvise_dontneed_single_vma()) */
	zap_page_range_single(vma, start, *end - start, NULL);
	lruopt_count(&lazyfree_stats, LS_FREED_NOW, 1);
	lruopt_count(&lazyfree_stats, LS_PAGES_FREED_NOW,
		     (*end - start) >> PAGE_SHIFT);
	/* the caller's "start == end" exit: return 0, no lazy walk */
	*end = start;
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
