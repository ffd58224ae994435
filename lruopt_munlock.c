// SPDX-License-Identifier: GPL-2.0
/*
 * A batched mlock/munlock page walk.
 *
 * mlock(), munlock(), mlockall() and friends change VM_LOCKED on a VMA and
 * then walk its page tables with mlock_pte_range() (mm/mlock.c), which hands
 * every present page to mlock_folio()/munlock_folio().  Those take a folio
 * reference, park the folio in a small per-cpu batch (15 pages on 6.1, 31 on
 * 6.12) and, when it is full, take the lruvec lock for that batch, update the
 * LRU state, then drop the references again: about 34 lru_lock round trips
 * and 512 get/put pairs per 512 pages on 6.1.  This is the successor of the
 * munlock_vma_pages_range() problem of Vlastimil Babka's 2013 series
 * ("[RFC PATCH 0/6] Improving munlock() performance for large non-THP
 * areas", linux-mm): isolate and update many pages under one lock
 * acquisition.
 *
 * The replacement keeps the stock walk structure and, for small folios,
 * applies the same per-folio state machine as the kernel's __mlock_folio()
 * and __munlock_folio() directly, holding the lruvec lock across up to
 * munlock/batch folios:
 *  - no folio reference is taken: the PTE lock is held for the whole batch
 *    and the PTE still maps the folio, so it cannot be freed (unmapping needs
 *    that PTE lock);
 *  - lock order PTE lock -> lruvec lock is the kernel's (mm/rmap.c header);
 *  - a batch is bounded by munlock/batch folios (512 at most: a few tens of
 *    microseconds).  Interrupts are off while the lruvec lock is held,
 *    except on PREEMPT_RT, where that lock is a sleeping, priority-
 *    inheriting spinlock_t and spin_lock_irq() leaves interrupts on:
 *    nothing here relies on them being off (folios are held by the PTE
 *    lock, counters are IRQ-safe), but another task needing the lruvec (an
 *    RT task faulting in the same memcg) may wait for a whole batch, where
 *    stock holds the lock for one mlock batch (15 folios on 6.1, 31 on
 *    6.12).  Hence the smaller default there (LRUOPT_MUNLOCK_BATCH);
 *  - NR_MLOCK and the unevictable_pgs_* events are accounted once per batch,
 *    and so are the LRU sizes, classic and MGLRU (per lruvec lock hold, see
 *    mb_lru_del());
 *  - before the first batch, this CPU's stock mlock batch is drained, so that
 *    operations queued earlier on a folio (e.g. a fault's mlock_new_folio())
 *    are applied before ours, exactly in stock order;
 *  - large folios and PMD-mapped THPs take the stock per-folio calls, after
 *    dropping the lruvec lock (those calls take it themselves), and are
 *    counted as fallbacks.
 * Folios off the LRU (isolated by reclaim, migration or compaction) follow
 * the stock rules: mlock leaves them alone (the putback fixes them), munlock
 * clears PG_mlocked and counts them as stranded or munlocked as stock does.
 *
 * With munlock/enabled (or the master switch) at 0 the walk is the stock
 * one, function for function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/pagemap.h>
#include <linux/vmstat.h>
#include "lruopt_sysfs.h"
#include "lruopt_trace.h"

enum { MS_PAGES, MS_BATCHES, MS_LOCKS, MS_FALLBACKS, MS_STOCK_WALKS, MS_NR };

static const char *const munlock_stat_names[MS_NR + 1] = {
	[MS_PAGES] = "pages",
	[MS_BATCHES] = "batches",
	[MS_LOCKS] = "lock_acquisitions",
	[MS_FALLBACKS] = "fallbacks",
	[MS_STOCK_WALKS] = "stock_walks",
};

static struct lruopt_counters munlock_stats = { .names = munlock_stat_names };

#define MUNLOCK_BATCH_MAX	512U
/* Default folios per lock hold: a stock-like 32 on PREEMPT_RT (see above). */
#define LRUOPT_MUNLOCK_BATCH	(IS_ENABLED(CONFIG_PREEMPT_RT) ? 32U : 256U)
static unsigned int munlock_batch = LRUOPT_MUNLOCK_BATCH;

/* The unevictable_pgs_* events a batch counts, in mb_event_item[] */
enum mb_event {
	EV_MLOCKED, EV_MUNLOCKED, EV_STRANDED, EV_CULLED, EV_RESCUED,
	EV_NR
};

/*
 * LRU size deltas for the locked lruvec, one per (classic or MGLRU, list,
 * zone), applied before it is unlocked.  A bit per entry says it is in
 * use: only the entries a lock hold touched are written, read and applied,
 * so a walk of a few pages (the seed's mlock of small stack buffers)
 * neither clears nor scans the table.
 */
#define MB_SIZES	(2 * NR_LRU_LISTS * MAX_NR_ZONES)

/* One lruvec lock hold and the accounting gathered under it. */
struct mbatch {
	struct lruvec *lruvec;		/* locked, or NULL */
	struct zone *zone;		/* zone of @nr_mlock */
	long nr_mlock;			/* NR_MLOCK delta for @zone */
	unsigned long ev[EV_NR];	/* indexed by enum mb_event */
	u64 sized;			/* entries of @size in use */
	unsigned int n, limit;
	unsigned int pages, batches, locks;
	unsigned int flushed_locks;	/* @locks at the last flush */
	bool mlock;			/* direction, for the tracepoint */
	/* last, and not cleared by mb_init(): see @sized */
	long size[MB_SIZES];
};

static void mb_init(struct mbatch *b, unsigned int limit, bool mlock)
{
	BUILD_BUG_ON(MB_SIZES > 64);
	memset(b, 0, offsetof(struct mbatch, size));
	b->limit = limit;
	b->mlock = mlock;
}

/* Add @delta pages to the size of @lru in zone @zid, classic or MGLRU. */
static void mb_size(struct mbatch *b, bool gen, enum lru_list lru, int zid,
		    long delta)
{
	unsigned int i = (gen * NR_LRU_LISTS + lru) * MAX_NR_ZONES + zid;

	if (b->sized & BIT_ULL(i)) {
		b->size[i] += delta;
		return;
	}
	b->sized |= BIT_ULL(i);
	b->size[i] = delta;
}

static const enum vm_event_item mb_event_item[EV_NR] = {
	[EV_MLOCKED] = UNEVICTABLE_PGMLOCKED,
	[EV_MUNLOCKED] = UNEVICTABLE_PGMUNLOCKED,
	[EV_STRANDED] = UNEVICTABLE_PGSTRANDED,
	[EV_CULLED] = UNEVICTABLE_PGCULLED,
	[EV_RESCUED] = UNEVICTABLE_PGRESCUED,
};

/* mm/internal.h folio_evictable(), identical on 6.1 and 6.12 */
static bool mb_folio_evictable(struct folio *folio)
{
	bool ret;

	/* Prevent address_space of inode and swap cache from being freed */
	rcu_read_lock();
	ret = !mapping_unevictable(folio_mapping(folio)) &&
	      !folio_test_mlocked(folio);
	rcu_read_unlock();
	return ret;
}

static void mb_mod_mlock(struct mbatch *b, struct folio *folio, long nr)
{
	struct zone *zone = folio_zone(folio);

	if (zone != b->zone) {
		if (b->nr_mlock)
			mod_zone_page_state(b->zone, NR_MLOCK, b->nr_mlock);
		b->zone = zone;
		b->nr_mlock = 0;
	}
	b->nr_mlock += nr;
}

/*
 * lruvec_del_folio() and lruvec_add_folio() (mm_inline.h, the same on 6.1 and
 * 6.12) for a small folio, except that the classic LRU's size update is
 * gathered in @b and applied by mb_unlock() before the lruvec lock is
 * dropped.  Why that is safe: the LRU sizes (lru_zone_size and the NR_LRU
 * vmstat items) are only written under the lruvec lock, which is held from
 * the list change to the update: whoever isolates one of our folios after
 * folio_set_lru() needs that lock to subtract it, so it finds our addition
 * applied.  Their lockless readers (reclaim's sizing, meminfo, memory.stat)
 * are approximate by design; isolate_lru_folios() defers its
 * update_lru_sizes() the same way.
 *
 * Folios on a multi-gen LRU generation (MGLRU, the default on Debian's
 * 6.12) go through lruopt_gen_del/add_folio() (lruopt_compat.h): the
 * generation's nr_pages is updated at once, the NR_LRU_* counters are
 * gathered in @b->size and applied by mb_unlock() with
 * __update_lru_size(), as lru_gen_update_size() applies them: MGLRU keeps
 * no per-memcg lru_zone_size, so they must not go through update_lru_size()
 * with the classic lists' deltas.  The same argument holds, and one more:
 * whether a generation counts as active depends on max_seq, which only
 * moves under the lruvec lock (inc_max_seq()), so the list each delta was
 * gathered for is still the right one when it is applied.
 */
static void mb_lru_del(struct mbatch *b, struct folio *folio)
{
	enum lru_list lru = folio_lru_list(folio);
	int glru = lruopt_gen_del_folio(b->lruvec, folio);

	/* small folios only: one page each */
	if (glru >= 0) {
		mb_size(b, true, glru, folio_zonenum(folio), -1);
		return;
	}
	if (lru != LRU_UNEVICTABLE)
		list_del(&folio->lru);
	mb_size(b, false, lru, folio_zonenum(folio), -1);
}

static void mb_lru_add(struct mbatch *b, struct folio *folio)
{
	enum lru_list lru = folio_lru_list(folio);
	int glru = lruopt_gen_add_folio(b->lruvec, folio);

	if (glru >= 0) {
		mb_size(b, true, glru, folio_zonenum(folio), 1);
		return;
	}
	mb_size(b, false, lru, folio_zonenum(folio), 1);
	if (lru != LRU_UNEVICTABLE)
		list_add(&folio->lru, &b->lruvec->lists[lru]);
}

/* Apply the gathered LRU sizes, then drop the lruvec lock. */
static void mb_unlock(struct mbatch *b)
	__releases(&b->lruvec->lru_lock)
{
	while (b->sized) {
		unsigned int i = __ffs64(b->sized);
		enum lru_list lru = (i / MAX_NR_ZONES) % NR_LRU_LISTS;
		int zid = i % MAX_NR_ZONES;

		b->sized &= b->sized - 1;
		if (!b->size[i])
			continue;
		if (i >= MB_SIZES / 2)	/* MGLRU: no per-memcg lru_zone_size */
			__update_lru_size(b->lruvec, lru, zid, b->size[i]);
		else
			update_lru_size(b->lruvec, lru, zid, b->size[i]);
	}
	unlock_page_lruvec_irq(b->lruvec);
	b->lruvec = NULL;
}

/* End the current lock hold and account everything gathered under it. */
static void mb_flush(struct mbatch *b)
{
	int i;

	if (b->lruvec)
		mb_unlock(b);
	if (b->nr_mlock)
		mod_zone_page_state(b->zone, NR_MLOCK, b->nr_mlock);
	b->nr_mlock = 0;
	for (i = 0; i < ARRAY_SIZE(b->ev); i++) {
		if (b->ev[i])
			count_vm_events(mb_event_item[i], b->ev[i]);
		b->ev[i] = 0;
	}
	if (b->n) {
		b->batches++;
		trace_munlock_batch(b->n, b->locks - b->flushed_locks, b->mlock);
	}
	b->flushed_locks = b->locks;
	b->n = 0;
}

/* folio_lruvec_relock_irq(), counting real acquisitions */
static void mb_relock(struct mbatch *b, struct folio *folio)
{
	if (b->lruvec) {
		if (folio_matches_lruvec(folio, b->lruvec))
			return;
		mb_unlock(b);
	}
	b->lruvec = folio_lruvec_lock_irq(folio);
	b->locks++;
}

/* The kernel's __mlock_folio() for a small folio, under the batch lock. */
static void mb_mlock(struct mbatch *b, struct folio *folio)
{
	/* mlock_folio() part: PG_mlocked and its accounting, immediately */
	if (!folio_test_set_mlocked(folio)) {
		mb_mod_mlock(b, folio, 1);
		b->ev[EV_MLOCKED]++;
	}
	/* There is nothing more we can do while it's off LRU */
	if (!folio_test_clear_lru(folio))
		return;
	mb_relock(b, folio);
	if (unlikely(mb_folio_evictable(folio))) {
		/* PG_mlocked was cleared again by another CPU: as stock */
		if (folio_test_unevictable(folio)) {
			mb_lru_del(b, folio);
			folio_clear_unevictable(folio);
			mb_lru_add(b, folio);
			b->ev[EV_RESCUED]++;
		}
		goto out;
	}
	if (folio_test_unevictable(folio)) {
		if (folio_test_mlocked(folio))
			folio->mlock_count++;
		goto out;
	}
	mb_lru_del(b, folio);
	folio_clear_active(folio);
	folio_set_unevictable(folio);
	folio->mlock_count = !!folio_test_mlocked(folio);
	mb_lru_add(b, folio);
	b->ev[EV_CULLED]++;
out:
	folio_set_lru(folio);
}

/* The kernel's __munlock_folio() for a small folio, under the batch lock. */
static void mb_munlock(struct mbatch *b, struct folio *folio)
{
	bool isolated = false;

	if (!folio_test_clear_lru(folio))
		goto munlock;
	isolated = true;
	mb_relock(b, folio);
	if (folio_test_unevictable(folio)) {
		/* Then mlock_count is maintained, but might undercount */
		if (folio->mlock_count)
			folio->mlock_count--;
		if (folio->mlock_count)
			goto out;
	}
	/* else assume that was the last mlock: reclaim will fix it if not */
munlock:
	if (folio_test_clear_mlocked(folio)) {
		mb_mod_mlock(b, folio, -1);
		if (isolated || !folio_test_unevictable(folio))
			b->ev[EV_MUNLOCKED]++;
		else
			b->ev[EV_STRANDED]++;
	}
	/* folio_evictable() has to be checked *after* clearing Mlocked */
	if (isolated && folio_test_unevictable(folio) &&
	    mb_folio_evictable(folio)) {
		mb_lru_del(b, folio);
		folio_clear_unevictable(folio);
		mb_lru_add(b, folio);
		b->ev[EV_RESCUED]++;
	}
out:
	if (isolated)
		folio_set_lru(folio);
}

static void mb_stock_one(struct vm_area_struct *vma, struct folio *folio)
{
	if (vma->vm_flags & VM_LOCKED)
		mlock_folio(folio);
	else
		munlock_folio(folio);
}

static void mb_one(struct mbatch *b, struct vm_area_struct *vma,
		   struct folio *folio)
{
	if (folio_test_large(folio)) {
		/* stock per-folio call: it takes the lruvec lock itself */
		mb_flush(b);
		mb_stock_one(vma, folio);
		lruopt_count(&munlock_stats, MS_FALLBACKS, 1);
		return;
	}
	if (vma->vm_flags & VM_LOCKED)
		mb_mlock(b, folio);
	else
		mb_munlock(b, folio);
	b->pages++;
	if (++b->n >= b->limit)
		mb_flush(b);
}

/**
 * lruopt_mlock_pte_range - replacement for mm/mlock.c mlock_pte_range()
 * @pmd: the PMD being walked
 * @addr: start of the range
 * @end: end of the range
 * @walk: the page walk; walk->vma is the VMA whose VM_LOCKED changed
 *
 * The pmd_entry callback of mlock_walk_ops.  Same structure, same skips and
 * same per-folio decisions as stock; only the way small folios reach the LRU
 * differs when the feature is on (see the file comment).
 *
 * Return: 0, as stock.
 */
static int lruopt_mlock_pte_range(pmd_t *pmd, unsigned long addr,
				  unsigned long end, struct mm_walk *walk)
{
	struct vm_area_struct *vma = walk->vma;
	bool batched = lruopt_active(&lruopt_munlock_feature);
	struct mbatch b;
	unsigned long start = addr;
	pte_t *start_pte, *pte;
	unsigned int step;
	struct folio *folio;
	spinlock_t *ptl;	/* the PTE (or huge PMD) lock */
	bool act;

	ptl = pmd_trans_huge_lock(pmd, vma);
	if (ptl) {
		if (!pmd_present(*pmd) || is_huge_zero_pmd(*pmd))
			goto out;
		folio = lruopt_pmd_folio(*pmd);
		if (!folio)
			goto out;
		mb_stock_one(vma, folio);
		if (batched)
			lruopt_count(&munlock_stats, MS_FALLBACKS, 1);
		goto out;
	}

	start_pte = pte_offset_map_lock(vma->vm_mm, pmd, addr, &ptl);
	if (!start_pte) {
		walk->action = ACTION_AGAIN;
		return 0;
	}
	if (batched) {
		mb_init(&b, READ_ONCE(munlock_batch),
			!!(vma->vm_flags & VM_LOCKED));
		lruopt_mlock_drain_local();
	} else {
		lruopt_count(&munlock_stats, MS_STOCK_WALKS, 1);
	}

	for (pte = start_pte; addr != end; pte++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);

		if (!pte_present(ptent))
			continue;
		folio = lruopt_pte_folio(vma, addr, ptent);
		if (!folio)
			continue;
		step = lruopt_mlock_step(folio, pte, addr, end, vma, start,
					 &act);
		if (act) {
			if (batched)
				mb_one(&b, vma, folio);
			else
				mb_stock_one(vma, folio);
		}
		pte += step - 1;
		addr += (step - 1) << PAGE_SHIFT;
	}
	if (batched) {
		mb_flush(&b);
		lruopt_count(&munlock_stats, MS_PAGES, b.pages);
		lruopt_count(&munlock_stats, MS_BATCHES, b.batches);
		lruopt_count(&munlock_stats, MS_LOCKS, b.locks);
	}
	pte_unmap(start_pte);
out:
	spin_unlock(ptl);
	cond_resched();
	return 0;
}

LRUOPT_UINT_KNOB(munlock, batch, munlock_batch, 1, MUNLOCK_BATCH_MAX,
		 "Initial value of munlock/batch: folios per lruvec lock hold (1..512, default 256; 32 on PREEMPT_RT)");

static struct attribute *munlock_attrs[] = {
	&batch_attr.kattr.attr,
	NULL,
};

static const struct klp_func munlock_funcs[] = {
	LRUOPT_FUNC(mlock_pte_range),
	{ }
};

struct lruopt_feature lruopt_munlock_feature = {
	.name = "munlock",
	.enabled = true,
	.funcs = munlock_funcs,
	.attrs = munlock_attrs,
	.counters = &munlock_stats,
};

LRUOPT_FEATURE_PARAM(munlock);
