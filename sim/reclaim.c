/*
 * reclaim.c - memory pressure: reclaim to swap over the LRU lists (lru.c), swap-in.
 * After Linux 6.6 with the classic two-list LRU (CONFIG_LRU_GEN off), lazy-free
 * folios as 6.18 reclaims them:
 * mm/vmscan.c balance_pgdat(), shrink_lruvec(), inactive_is_low(),
 * shrink_active_list(), shrink_inactive_list(), shrink_folio_list(),
 * folio_check_references(); mm/rmap.c folio_referenced(), try_to_unmap_one();
 * mm/swap_state.c add_to_swap(); mm/memory.c do_swap_page().
 *
 * The model:
 *  - A new anonymous folio (a 4K page or a THP; an mTHP page by page) joins the
 *    head of the inactive list (anon pages start inactive since 5.9,
 *    b518154e59aa). Swapped-in pages do too.
 *  - kswapd wakes when free pages fall below the low watermark and reclaims
 *    until they reach the high one; it runs the deferred split shrinker first
 *    (shrink_slab). Its cycles are its own (cycles.kswapd, not in the total);
 *    the application pays for the TLB flushes. Direct reclaim
 *    (try_to_free_pages(), do_try_to_free_pages(), shrink_zones(),
 *    compaction_ready(), should_continue_reclaim()) runs from the allocation slow
 *    path (page_alloc.c) of a costly request with __GFP_DIRECT_RECLAIM: counted
 *    in allocstall_movable (GFP_HIGHUSER_MOVABLE's zone) or allocstall_normal
 *    (the huge zero page, not movable) even when it then reclaims nothing: a
 *    zone where compaction is ready (free pages above high + compact_gap and
 *    compaction suitable, or the allocation already possible) is skipped, slab
 *    shrinkers and all; otherwise it reclaims 32 pages and, for a costly order,
 *    goes on while should_continue_reclaim() says compaction cannot run yet.
 *    Then the deferred split shrinker (shrink_slab()). The application's cycles
 *    (cycles.reclaim), or khugepaged's. The deferred split shrinker runs from
 *    kswapd and direct reclaim only, never from an allocation that did not
 *    reclaim (deferred_split_scan() is a shrinker).
 *  - Each round deactivates SWAP_CLUSTER_MAX (32) folios from the active tail
 *    when inactive_is_low() (inactive x sqrt(10 x GiB) < active), then scans 32
 *    folios from the inactive tail: folio_referenced() tests and clears the
 *    accessed bits of the folio's PTEs or PMD (x86 does not flush the TLB for
 *    that, so a page the TLB keeps translating looks idle: the hardware sets A
 *    again only on a walk). Referenced with PG_referenced already set, or by
 *    more than one PTE: activate. Referenced once: set PG_referenced, rotate.
 *    Not referenced: reclaim.
 *  - Reclaiming a 4K page takes a swap slot (none: activate), turns its PTE into
 *    a swap entry and frees the frame (pswpout). A THP mapped only by PTEs is
 *    split first (thp_split_page). A PMD-mapped THP takes a whole free swap
 *    cluster: its PMD is split into 512 swap entries (thp_split_pmd) and it is
 *    freed whole (thp_swpout, pswpout 512); without a free cluster it is split
 *    and its pages reclaimed one by one (thp_swpout_fallback). An mTHP (6.10+)
 *    fully mapped by one mm takes an aligned run of its size from the swap
 *    allocator (swap_alloc_order()) and goes whole (swpout, pswpout of its
 *    pages); without one it is split and the scanned page reclaimed
 *    (swpout_fallback); a partially mapped one is split first, uncounted.
 *  - One batched TLB flush per 32 folios that unmapped something
 *    (try_to_unmap_flush(): a full flush on x86).
 *  - A fault on a swap entry is a major fault: a 4K page is allocated, read
 *    (os.cost.swap_in cycles, the application's), mapped (writable if the VMA
 *    is: the page is exclusive), and its slot freed.
 *
 *  - Lazy-free folios (MADV_FREE, madvise.c) are on the file lists. A scan
 *    takes the inactive file list first (prepare_scan_control()'s
 *    cache_trim_mode when file pages are plentiful; the proportional split of
 *    get_scan_count() is not modelled), and without swap (get_scan_count():
 *    SCAN_FILE) only it. An unreferenced lazy-free folio whose PTEs or PMD are
 *    clean is discarded, no swap needed (try_to_unmap_one(): the rmap dropped,
 *    MM_ANONPAGES down, pglazyfreed += its pages). A PMD-mapped THP has its
 *    PMD split first (thp_split_pmd; its page table stays, so the range
 *    refaults in 4 KiB pages) and is then freed whole (no thp_split_page): what
 *    Linux 6.18.44 does under MADV_PAGEOUT (tests/native.sh madv-free-thp),
 *    although unmap_huge_pmd_locked() (6.12) is meant to drop a clean
 *    lazy-free PMD whole; the model follows the measurement in both reclaim
 *    paths. One written since MADV_FREE (a dirty PTE or PMD) gets
 *    PG_swapbacked back and is activated on the anonymous list.
 *    Simplification: a PTE-mapped lazy-free THP is kept whole if any PTE is
 *    dirty and discarded whole otherwise.
 *  - MADV_PAGEOUT (reclaim_pages(), madvise.c) hands a list of folios to
 *    shrink_folio_list() with ignore_references: each is reclaimed as above, or
 *    activated where no swap slot is free (a THP split first,
 *    thp_swpout_fallback, its pages each tried).
 *  - An mlocked folio (mapped in a VM_LOCKED VMA) is never reclaimed. Linux
 *    keeps it on the unevictable list; here it stays on the anon lists and a scan
 *    that meets it moves it to the active head, counting neither pgactivate nor
 *    pgdeactivate (as activate_locked and folio_putback_lru() do for it): what
 *    differs is only the scan's cost (a locked folio is looked at again).
 *
 * Simplifications, each because no trace can tell or the model has no use for it:
 * page-cache pages are never reclaimed (filemap.c; only lazy-free anonymous
 * folios sit on the file lists), no swap cache, readahead or workingset
 * refault detection (a SWP_SYNCHRONOUS_IO device such as zram behaves so); kswapd
 * runs to completion at the moment it is woken instead of concurrently; order-0
 * allocations are not refused at the min watermark; scanning goes 32 folios at a
 * time with no priority levels; MGLRU is not modelled.
 */
#include <math.h>
#include <string.h>

#include "compaction.h"
#include "lru.h"
#include "mmu.h"
#include "reclaim.h"
#include "tlbflush.h"
#include "kernel.h"
#include "thp.h"

#define SWAP_CLUSTER_MAX 32 /* include/linux/swap.h */

static unsigned folio_nr(const struct kernel *k, pfn_t pfn)
{
	return thp_is_folio(k, pfn) ? HPAGE_PMD_NR : 1;
}

/* Move the folio at @pfn to the head of @list. */
static void move_to(struct kernel *k, pfn_t pfn, unsigned list)
{
	lru_move(&k->lru, pfn, folio_nr(k, pfn), list);
}

/* The head frame and the pages of the mTHP holding @pfn (0: none). */
static pfn_t mthp_head(const struct kernel *k, pfn_t pfn, unsigned *nr)
{
	unsigned o = k->thp.mthp[pfn] & MTHP_ORDER_MASK;

	*nr = o ? 1U << o : 0;
	return pfn & ~(((pfn_t)1 << o) - 1);
}

/*
 * folio_referenced(): how many of the folio's mappings were young; clears them.
 * An mTHP's pages are LRU entries of their own here, but the folio is one in
 * Linux: every mapped page of it is looked at.
 */
static unsigned folio_referenced(struct kernel *k, pfn_t pfn)
{
	unsigned n = 0, nr;
	pfn_t h = mthp_head(k, pfn, &nr);

	if (thp_is_folio(k, pfn)) {
		const struct folio *f = &k->thp.folio[pfn >> HPAGE_PMD_ORDER];

		if (f->flags & FOLIO_PMD_MAPPED)
			return pt_test_clear_young(&k->mm->pt, f->va);
		for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
			if (f->mapped[i / 64] >> (i % 64) & 1)
				n += pt_test_clear_young(&k->mm->pt, k->rmap[pfn + i] - 1);
		return n;
	}
	for (pfn_t q = h; q < h + nr; q++)
		if (k->rmap[q] && k->rmap_mm[q] == k->mm)
			n += pt_test_clear_young(&k->mm->pt, k->rmap[q] - 1);
	if (nr)
		return n;
	BUG_ON(!k->rmap[pfn]);
	return pt_test_clear_young(&k->mm->pt, k->rmap[pfn] - 1);
}

/*
 * move_to() for every page on the LRU of the mTHP holding @pfn, or @pfn's folio;
 * the folio's pages (folio_nr_pages(), what pgactivate counts).
 */
static unsigned move_folio_to(struct kernel *k, pfn_t pfn, unsigned list)
{
	unsigned nr;
	pfn_t h = mthp_head(k, pfn, &nr);

	if (!nr) {
		move_to(k, pfn, list);
		return folio_nr(k, pfn);
	}
	for (pfn_t q = h; q < h + nr; q++)
		if (lru_on(&k->lru, q))
			lru_move(&k->lru, q, 1, list);
	return nr;
}

/*
 * folio_evictable(): false for a folio mapped in a VM_LOCKED VMA (Linux marks it
 * mlocked -- mlock_folio(), mlock_new_folio() -- and keeps it on the unevictable
 * list; folio_referenced() meeting a VM_LOCKED VMA mlocks it too). Only looked
 * for once a VMA was locked (k->mlocked).
 */
static bool folio_mlocked(const struct kernel *k, pfn_t pfn)
{
	const struct vma *v;

	if (likely(!k->mlocked))
		return false;
	if (thp_is_folio(k, pfn)) {
		const struct folio *f = &k->thp.folio[pfn >> HPAGE_PMD_ORDER];

		if (f->flags & FOLIO_PMD_MAPPED) {
			v = vma_find(&k->mm->vmas, f->va);
			return v && (v->flags & VM_LOCKED);
		}
		for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
			if ((f->mapped[i / 64] >> (i % 64) & 1) && k->rmap[pfn + i] &&
			    (v = vma_find(&k->mm->vmas, k->rmap[pfn + i] - 1)) && (v->flags & VM_LOCKED))
				return true;
		return false;
	}
	v = k->rmap[pfn] ? vma_find(&k->mm->vmas, k->rmap[pfn] - 1) : NULL;
	return v && (v->flags & VM_LOCKED);
}

/* inactive_is_low() for the pair whose inactive list is @inactive (mm/vmscan.c) */
static bool inactive_is_low(const struct lru *l, unsigned inactive)
{
	uint64_t gb = (l->nr[inactive] + l->nr[inactive + 1]) >> (30 - PAGE_SHIFT);
	uint64_t ratio = gb ? (uint64_t)sqrt(10.0 * (double)gb) : 1;

	return l->nr[inactive] * ratio < l->nr[inactive + 1];
}

struct scan_ctl {
	bool kswapd;
	uint64_t scanned, reclaimed; /* pages */
	uint64_t folios;             /* folios examined (the cost) */
	bool unmapped;               /* a flush is due */
};

/* A folio mapped by several mms after a fork: reclaim leaves it be (fork.c). */
static bool folio_shared(const struct kernel *k, pfn_t pfn)
{
	return thp_is_folio(k, pfn) ? thp_folio_shared(k, pfn) : kernel_page_shared(k, pfn);
}

/* shrink_active_list(): folios leave the active list (@inactive + 1) whatever their A bits. */
static void shrink_active(struct kernel *k, struct scan_ctl *sc, unsigned inactive)
{
	struct lru *l = &k->lru;

	for (unsigned kk = 0; kk < SWAP_CLUSTER_MAX; kk++) {
		uint32_t p = l->prev[lru_head(l, inactive + 1)];

		struct mm *old;

		if (p == lru_head(l, inactive + 1))
			break;
		old = kernel_use_mm(k, k->rmap_mm[p]); /* the folio's mm, whichever runs */
		if (folio_mlocked(k, p)) { /* folio_putback_lru() to the unevictable list */
			sc->folios++;
			move_to(k, p, LRU_ACTIVE_ANON);
			kernel_use_mm(k, old);
			continue;
		}
		if (!folio_shared(k, p))
			folio_referenced(k, p);
		sc->folios++;
		k->st->pgdeactivate += folio_nr(k, p);
		move_to(k, p, LRU_INACTIVE_ANON);
		kernel_use_mm(k, old);
	}
}

/* Unmap the 4K page @pfn into swap slot @slot and free it (try_to_unmap_one()). */
static void swap_out_page(struct kernel *k, pfn_t pfn, uint64_t slot)
{
	vaddr_t va = k->rmap[pfn] - 1;

	pt_set_swap(&k->mm->pt, va, slot);
	k->rmap[pfn] = 0;
	lru_del(&k->lru, pfn, 1);
	buddy_free(&k->buddy, pfn, 0);
	k->st->nr_anon_pages--;
	kernel_rss_changed(k);
	k->st->pswpout++;
}

static void discard_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	(void)entry;
	thp_unmap_leaf(ctx, va, ps, pfn);
}

/* Is the leaf mapping @va dirty (written since MADV_FREE cleaned it)? */
static bool leaf_dirty(const struct kernel *k, vaddr_t va)
{
	enum page_size ps;
	pfn_t pfn;
	uint64_t e;

	return pt_lookup(&k->mm->pt, va, &ps, &pfn, &e) && (e & PTE_D);
}

/*
 * try_to_unmap_one() of the lazy-free mTHP with page @pfn (its pages are each an
 * entry of the LRU, all marked lazy-free together: madvise.c). From 6.18 its
 * PTEs go in one batch (folio_unmap_pte_batch(), kernel_lazyfree_batched_unmap()):
 * one of them dirty (written since MADV_FREE) and the folio is not discarded,
 * all its PTEs stay, it is swap-backed and activated again; else it goes whole,
 * never seen partly mapped. Before, PTE by PTE: the clean ones before the first
 * dirty one go (the folio partly mapped, queued for deferred split), the rest
 * stay. Returns the pages freed.
 */
static uint64_t reclaim_lazyfree_mthp(struct kernel *k, pfn_t pfn, struct scan_ctl *sc)
{
	unsigned o = k->thp.mthp[pfn] & MTHP_ORDER_MASK, nr = 1U << o, n = 0, kept = 0;
	pfn_t head = pfn & ~(((pfn_t)1 << o) - 1);
	bool batched = kernel_lazyfree_batched_unmap(k->cfg->kernel), dirty = false;

	for (unsigned i = 0; batched && i < nr && !dirty; i++)
		dirty = k->rmap[head + i] && leaf_dirty(k, k->rmap[head + i] - 1);
	thp_rmap_batching(k, batched);
	for (unsigned i = 0; i < nr && !dirty; i++) {
		vaddr_t a = k->rmap[head + i] - 1;

		if (!k->rmap[head + i])
			continue;
		if (leaf_dirty(k, a)) {
			dirty = true;
			break;
		}
		pt_unmap_range(&k->mm->pt, a, a + PAGE_SIZE, false, discard_leaf, k);
		n++;
	}
	thp_rmap_batching(k, false);
	if (dirty) {
		/* folio_set_swapbacked(), activate_locked: the pages still mapped */
		for (unsigned i = 0; i < nr; i++)
			if (k->rmap[head + i] && lru_on(&k->lru, head + i)) {
				lru_set_swapbacked(&k->lru, head + i, 1, LRU_ACTIVE_ANON);
				kept++;
			}
		k->st->pgactivate += kept;
	}
	k->st->pglazyfreed += n;
	if (n)
		sc->unmapped = true;
	return n;
}

/*
 * try_to_unmap_one() of the lazy-free folio at @pfn: discarded if clean (returns
 * its pages), else swap-backed again and activated (returns 0). See the header.
 */
static uint64_t reclaim_lazyfree(struct kernel *k, pfn_t pfn, struct scan_ctl *sc)
{
	unsigned nr = folio_nr(k, pfn);
	bool dirty = false;
	vaddr_t va;

	if (unlikely(k->thp.mthp[pfn]))
		return reclaim_lazyfree_mthp(k, pfn, sc);

	if (thp_is_folio(k, pfn)) {
		struct folio *f = &k->thp.folio[pfn >> HPAGE_PMD_ORDER];

		va = f->va;
		if (f->flags & FOLIO_PMD_MAPPED) {
			/* split_huge_pmd_locked() (TTU_SPLIT_HUGE_PMD), dirty or clean: see the header */
			dirty = leaf_dirty(k, va);
			thp_split_pmd_at(k, va);
		} else {
			for (unsigned i = 0; i < HPAGE_PMD_NR && !dirty; i++)
				if (f->mapped[i / 64] >> (i % 64) & 1)
					dirty = leaf_dirty(k, k->rmap[pfn + i] - 1);
		}
	} else {
		va = k->rmap[pfn] - 1;
		dirty = leaf_dirty(k, va);
	}
	if (dirty) {
		/* folio_set_swapbacked(), activate_locked */
		lru_set_swapbacked(&k->lru, pfn, nr, LRU_ACTIVE_ANON);
		k->st->pgactivate += nr;
		return 0;
	}
	/* discard: the PTEs (or the PMD) go, the folio is freed with the last of them;
	 * in one rmap batch from 6.15 (kernel_lazyfree_batched_unmap()) */
	thp_rmap_batching(k, kernel_lazyfree_batched_unmap(k->cfg->kernel));
	if (thp_is_folio(k, pfn) && !(k->thp.folio[pfn >> HPAGE_PMD_ORDER].flags & FOLIO_PMD_MAPPED)) {
		const struct folio *f = &k->thp.folio[pfn >> HPAGE_PMD_ORDER];

		for (unsigned i = 0; i < HPAGE_PMD_NR && thp_is_folio(k, pfn); i++)
			if (f->mapped[i / 64] >> (i % 64) & 1) {
				vaddr_t a = k->rmap[pfn + i] - 1;

				pt_unmap_range(&k->mm->pt, a, a + PAGE_SIZE, false, discard_leaf, k);
			}
	} else {
		pt_unmap_range(&k->mm->pt, va, va + ((vaddr_t)nr << PAGE_SHIFT), false, discard_leaf, k);
	}
	thp_rmap_batching(k, false);
	k->st->pglazyfreed += nr;
	sc->unmapped = true;
	return nr;
}

/* Reclaim the folio at @pfn (unreferenced). Returns pages freed. */
static uint64_t reclaim_folio(struct kernel *k, pfn_t pfn, struct scan_ctl *sc)
{
	uint64_t slot;

	if (lru_lazyfree(&k->lru, pfn))
		return reclaim_lazyfree(k, pfn, sc);

	if (thp_is_folio(k, pfn)) {
		struct folio *f = &k->thp.folio[pfn >> HPAGE_PMD_ORDER];
		vaddr_t h = f->va;
		bool pmd = f->flags & FOLIO_PMD_MAPPED;

		/* mapped whole, by its PMD or by 512 PTEs (a partly mapped one is split
		 * right away, shrink_folio_list(): no swap-out in one piece tried) */
		if (pmd || (f->nr_mapped == HPAGE_PMD_NR && !(f->flags & FOLIO_DEFERRED))) {
			slot = swap_alloc_cluster(&k->swap);
			if (slot != SWAP_NONE) {
				/* try_to_unmap(TTU_SPLIT_HUGE_PMD), then 512 swap entries */
				if (pmd)
					thp_split_pmd_at(k, h);
				for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
					vaddr_t a = pmd ? h + ((vaddr_t)i << PAGE_SHIFT) : k->rmap[pfn + i] - 1;

					pt_set_swap(&k->mm->pt, a, slot + i);
					k->rmap[pfn + i] = 0;
				}
				lru_del(&k->lru, pfn, HPAGE_PMD_NR);
				memset(f, 0, sizeof(*f));
				buddy_free(&k->buddy, pfn, HPAGE_PMD_ORDER);
				k->st->nr_anon_pages -= HPAGE_PMD_NR;
				kernel_rss_changed(k);
				k->st->thp_swpout++;
				k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_SWPOUT]++;
				k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_NR_ANON]--;
				k->st->pswpout += HPAGE_PMD_NR;
				sc->unmapped = true;
				return HPAGE_PMD_NR;
			}
			k->st->thp_swpout_fallback++;
			k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_SWPOUT_FALLBACK]++;
			if (pmd)
				thp_split_pmd_at(k, h); /* split_huge_pmd_locked(freeze): nothing queued */
		}
		if (!pmd)
			thp_split_ptes_queue(k, pfn);
		/* split_folio_to_list(): its pages now stand in its place, at the tail */
		return thp_split_folio(k, pfn);
	}
	if (unlikely(k->thp.mthp[pfn])) {
		/* a large folio below PMD order: swapped out whole into an aligned run
		 * of slots (6.10+, thp_mthp_swap_out()), else split first and its page
		 * reclaimed alone (swpout_fallback) */
		unsigned nr = thp_mthp_swap_out(k, pfn);
		uint64_t freed;

		if (nr) {
			sc->unmapped = true;
			return nr;
		}
		/* a partially mapped one is split before any swap allocation ("Split
		 * partially mapped folios right away", shrink_folio_list(), 6.12):
		 * no fallback then */
		if (!(k->thp.mthp[pfn & ~((1UL << (k->thp.mthp[pfn] & MTHP_ORDER_MASK)) - 1)] & MTHP_PARTIAL))
			k->st->mthp[k->thp.mthp[pfn] & MTHP_ORDER_MASK][MTHP_STAT_SWPOUT_FALLBACK]++;
		freed = thp_mthp_split(k, pfn);
		if (!k->rmap[pfn])
			return freed; /* zero-filled: the split mapped it to the zero page (6.12+) */
	}
	slot = swap_alloc(&k->swap);
	if (slot == SWAP_NONE) {
		move_to(k, pfn, LRU_ACTIVE_ANON); /* activate_locked */
		k->st->pgactivate++;
		return 0;
	}
	swap_out_page(k, pfn, slot);
	sc->unmapped = true;
	return 1;
}

/*
 * reclaim_folio() of @p, then, when it split a THP or an mTHP that could not go
 * whole, its other pages still mapped: split_folio_to_list() puts them on the list
 * shrink_folio_list() is working through, so they are tried in the same pass.
 */
static uint64_t reclaim_split(struct kernel *k, pfn_t p, struct scan_ctl *sc)
{
	bool split = thp_is_folio(k, p) && !lru_lazyfree(&k->lru, p);
	unsigned nr;
	pfn_t mh = mthp_head(k, p, &nr);
	bool msplit = nr && !lru_lazyfree(&k->lru, p);
	uint64_t n = reclaim_folio(k, p, sc);

	for (unsigned kk = 0; split && kk < HPAGE_PMD_NR && !thp_is_folio(k, p); kk++)
		if (k->rmap[p + kk] && lru_on(&k->lru, p + kk) && ++sc->folios)
			n += reclaim_folio(k, p + kk, sc);
	for (pfn_t q = mh; msplit && q < mh + nr && !k->thp.mthp[p]; q++)
		if (q != p && k->rmap[q] && lru_on(&k->lru, q) && ++sc->folios)
			n += reclaim_folio(k, q, sc);
	return n;
}

/* try_to_unmap_flush(): one full flush for the batch that unmapped something */
static void unmap_flush(struct kernel *k, struct scan_ctl *sc)
{
	if (sc->unmapped) {
		arch_tlbbatch_flush(k);
		sc->unmapped = false;
	}
}

/* shrink_inactive_list() + shrink_folio_list() over 32 folios from the tail of @inactive. */
static void shrink_inactive(struct kernel *k, struct scan_ctl *sc, unsigned inactive)
{
	struct lru *l = &k->lru;

	for (unsigned kk = 0; kk < SWAP_CLUSTER_MAX; kk++) {
		uint32_t p = l->prev[lru_head(l, inactive)];
		unsigned refs;
		bool was_ref;

		struct mm *old;

		if (p == lru_head(l, inactive))
			break;
		sc->folios++;
		sc->scanned += folio_nr(k, p);
		if (folio_shared(k, p)) {
			/* the model does not unmap a page from several mms (fork.c): it
			 * goes back to the active list as a referenced one would */
			k->st->pgactivate++;
			move_to(k, p, LRU_ACTIVE_ANON);
			continue;
		}
		old = kernel_use_mm(k, k->rmap_mm[p]); /* the folio's mm, whichever runs */
		if (folio_mlocked(k, p)) {
			/* !folio_evictable(): activate_locked, not counted in pgactivate */
			move_to(k, p, LRU_ACTIVE_ANON);
			kernel_use_mm(k, old);
			continue;
		}
		refs = folio_referenced(k, p);
		was_ref = l->flags[p] & LRU_F_REFERENCED;
		l->flags[p] &= (uint8_t)~LRU_F_REFERENCED;
		if (refs) {
			/* folio_check_references(): look twice before activating */
			l->flags[p] |= LRU_F_REFERENCED;
			if (was_ref || refs > 1)
				k->st->pgactivate += move_folio_to(k, p, LRU_ACTIVE_ANON);
			else
				move_folio_to(k, p, LRU_INACTIVE_ANON);
			kernel_use_mm(k, old);
			continue;
		}
		sc->reclaimed += reclaim_split(k, p, sc);
		kernel_use_mm(k, old);
	}
	unmap_flush(k, sc);
}

/* shrink_lruvec() until @target pages are reclaimed or nothing more can be. */
static void shrink(struct kernel *k, uint64_t target, struct scan_ctl *sc)
{
	struct lru *l = &k->lru;
	uint64_t idle = 0;

	while (sc->reclaimed < target) {
		bool anon = swap_nr_free(&k->swap); /* can_reclaim_anon_pages() */
		uint64_t before = sc->reclaimed, file = l->nr[LRU_INACTIVE_FILE] + l->nr[LRU_ACTIVE_FILE];
		uint64_t on_lists = file + (anon ? l->nr[LRU_INACTIVE_ANON] + l->nr[LRU_ACTIVE_ANON] : 0);

		if (!on_lists)
			break;
		if (file) { /* lazy-free folios first (see the header) */
			if (inactive_is_low(l, LRU_INACTIVE_FILE) || !l->nr[LRU_INACTIVE_FILE])
				shrink_active(k, sc, LRU_INACTIVE_FILE);
			shrink_inactive(k, sc, LRU_INACTIVE_FILE);
		}
		if (anon && sc->reclaimed < target && l->nr[LRU_INACTIVE_ANON] + l->nr[LRU_ACTIVE_ANON]) {
			if (inactive_is_low(l, LRU_INACTIVE_ANON) || !l->nr[LRU_INACTIVE_ANON])
				shrink_active(k, sc, LRU_INACTIVE_ANON);
			shrink_inactive(k, sc, LRU_INACTIVE_ANON);
		}
		/* every folio seen twice without freeing a page: give up (OOM ahead) */
		if (sc->reclaimed == before) {
			if (++idle * SWAP_CLUSTER_MAX > 2 * on_lists + 2 * SWAP_CLUSTER_MAX)
				break;
		} else {
			idle = 0;
		}
	}
}

void reclaim_kswapd(struct kernel *k)
{
	struct scan_ctl sc = { .kswapd = true };
	uint64_t high = buddy_watermark(&k->buddy, WMARK_HIGH);
	cycles_t cost;

	if (k->buddy.nr_free_pages >= buddy_watermark(&k->buddy, WMARK_LOW))
		return;
	k->st->pageoutrun++;
	thp_shrink_deferred(k); /* shrink_slab(): the deferred split shrinker */
	if (k->buddy.nr_free_pages < high)
		shrink(k, high - k->buddy.nr_free_pages, &sc);
	k->st->pgscan_kswapd += sc.scanned;
	k->st->pgsteal_kswapd += sc.reclaimed;
	cost = sc.folios * k->cfg->cost.compact_scan;
	k->st->cyc_kswapd += cost;
}

/*
 * compaction_ready(): a costly-order reclaim leaves the zone alone when the
 * allocation could already succeed, or compaction could run and free pages are
 * above the high watermark + compact_gap() already.
 */
static bool compaction_ready(const struct kernel *k, unsigned order)
{
	const struct buddy *b = &k->buddy;

	if (buddy_watermark_ok(b, order, WMARK_MIN))
		return true;
	if (buddy_compaction_suitable(b, order) != COMPACT_CONTINUE)
		return false;
	return b->nr_free_pages > buddy_watermark(b, WMARK_HIGH) + (2ULL << order);
}

/*
 * should_continue_reclaim() after a shrink_node() round that reclaimed
 * @reclaimed pages, for a costly @order (reclaim/compaction mode): go on while
 * the round freed something, the allocation cannot succeed yet, compaction may
 * not run yet and the inactive list is larger than compact_gap().
 */
static bool should_continue_reclaim(const struct kernel *k, unsigned order, uint64_t reclaimed)
{
	if (!reclaimed)
		return false;
	if (buddy_watermark_ok(&k->buddy, order, WMARK_MIN) ||
	    buddy_compaction_suitable(&k->buddy, order) == COMPACT_CONTINUE)
		return false;
	return k->lru.nr[LRU_INACTIVE_FILE] +
		       (swap_nr_free(&k->swap) ? k->lru.nr[LRU_INACTIVE_ANON] : 0) > (2ULL << order);
}

uint64_t reclaim_direct(struct kernel *k, unsigned order, gfp_t gfp)
{
	struct scan_ctl sc = { .kswapd = false };
	bool costly = order > PAGE_ALLOC_COSTLY_ORDER;
	uint64_t before;

	/* do_try_to_free_pages(): ALLOCSTALL of gfp_zone(): MOVABLE for GFP_HIGHUSER_MOVABLE,
	 * NORMAL without __GFP_MOVABLE (x86-64 has no HIGHMEM zone) */
	if (gfp & GFP_MOVABLE)
		k->st->allocstall_movable++;
	else
		k->st->allocstall_normal++;
	/* shrink_zones(): a zone where compaction is ready is skipped, slab shrinkers too */
	if (!(costly && compaction_ready(k, order))) {
		do {
			/* shrink_node(): the LRU towards nr_to_reclaim, then shrink_slab() */
			before = sc.reclaimed;
			shrink(k, before + SWAP_CLUSTER_MAX, &sc);
			thp_shrink_deferred(k); /* the deferred split shrinker (not in nr_reclaimed) */
		} while (costly && should_continue_reclaim(k, order, sc.reclaimed - before));
	}
	k->st->pgscan_direct += sc.scanned;
	k->st->pgsteal_direct += sc.reclaimed;
	if (k->in_khugepaged)
		k->st->cyc_khugepaged += sc.folios * k->cfg->cost.compact_scan;
	else
		k->st->cyc_reclaim += sc.folios * k->cfg->cost.compact_scan;
	return sc.reclaimed;
}

int reclaim_swap_in(struct kernel *k, const struct vma *v, vaddr_t va, uint64_t slot, bool khugepaged)
{
	vaddr_t p = va & ~(PAGE_SIZE - 1);
	pfn_t pfn = buddy_alloc(&k->buddy, 0);

	if (pfn == PFN_NONE)
		return -1;
	pt_swap_in(&k->mm->pt, p, pfn, v->flags & VM_WRITE);
	swap_free(&k->swap, slot);
	kernel_rmap_set(k, pfn, p);
	lru_add(&k->lru, pfn, 1);
	k->st->nr_anon_pages++;
	kernel_rss_changed(k);
	k->st->pgmajfault++;
	vmas_count(k, p, VE_PGMAJFAULT);
	k->st->pswpin++;
	if (khugepaged)
		k->st->cyc_khugepaged += k->cfg->cost.swap_in;
	else
		k->st->cyc_fault += k->cfg->cost.swap_in;
	return 0;
}

uint64_t reclaim_pages(struct kernel *k, const pfn_t *folios, size_t n)
{
	struct scan_ctl sc = { .kswapd = false };

	for (size_t i = 0; i < n; i++) {
		pfn_t p = folios[i];

		sc.folios++;
		/* an mTHP: madvise.c hands it over by one page */
		sc.reclaimed += reclaim_split(k, p, &sc);
	}
	unmap_flush(k, &sc);
	k->st->cyc_reclaim += sc.folios * k->cfg->cost.compact_scan;
	return sc.reclaimed;
}

static unsigned folio_nr_cb(const void *ctx, pfn_t pfn)
{
	return folio_nr(ctx, pfn);
}

void reclaim_check_invariants(const struct kernel *k)
{
	const struct lru *l = &k->lru;

	lru_check_invariants(l, folio_nr_cb, k);
	for (unsigned list = 0; list < NR_LRU_LISTS; list++) {
		uint32_t h = lru_head(l, list);

		for (uint32_t p = l->next[h]; p != h; p = l->next[p])
			if (thp_is_folio(k, p))
				BUG_ON(p & (HPAGE_PMD_NR - 1)); /* a THP by its head only */
			else
				BUG_ON(!k->rmap[p]); /* a mapped 4K anonymous page */
	}
}
