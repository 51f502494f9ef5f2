/*
 * madvise.c - the advice that acts on a range's pages at once, after Linux 6.18
 * mm/madvise.c: MADV_FREE (madvise_free_single_vma(), madvise_free_pte_range(),
 * mm/huge_memory.c madvise_free_huge_pmd(), mm/swap.c folio_mark_lazyfree()),
 * MADV_COLD and MADV_PAGEOUT (madvise_cold_or_pageout_pte_range(),
 * mm/swap.c folio_deactivate(), mm/vmscan.c reclaim_pages()). The advice that
 * changes VMA flags or zaps is mmap.c's.
 *
 *  - Each VMA of the range in turn, each PMD range of it in turn. A PMD-mapped
 *    THP that the range covers whole is handled as one folio; one it covers in
 *    part is split first (split_folio(): its PMD, thp_split_pmd, then the folio,
 *    thp_split_page) and its pages in the range handled one by one; a PTE-mapped
 *    THP likewise by its run of PTEs in the range (madvise_folio_pte_batch()).
 *    An mTHP (a large folio below PMD order, thp.c) likewise: the range
 *    covering all of it (madvise_folio_pte_batch() as long as the folio) acts on
 *    it as one folio (from 6.10, kernel_madvise_large_folio(); 6.8 split every
 *    one first), else split_folio() and its pages in the range one by one; a
 *    split of a whole PTE-mapped folio queues it once on the way
 *    (thp_mthp_split(), split_deferred), one split while PMD-mapped does not.
 *    The 4K and huge zero pages are skipped (vm_normal_folio(),
 *    is_huge_zero_pmd()).
 *  - MADV_FREE (private anonymous VMAs only: vma_is_anonymous(), and not
 *    hugetlb; the walk stops at any other with -EINVAL): the PTEs' or PMD's
 *    accessed and dirty bits are cleared (clear_young_dirty_ptes()), and the
 *    folio becomes lazy-free: PG_swapbacked, PG_active and PG_referenced
 *    cleared, to the inactive file list, pglazyfree += its pages, once (a folio
 *    already lazy-free is not counted again, lru_lazyfree()). Nothing is freed
 *    and Rss stays: reclaim discards the folio later if it is still clean
 *    (reclaim.c, pglazyfreed); a store before then sets the dirty bit again,
 *    with no fault (the PTE stays writable), and keeps it. A swap entry in the
 *    range is dropped (free_swap_and_cache_nr()).
 *  - MADV_COLD: accessed bits cleared, PG_referenced cleared, an active folio
 *    deactivated (lru_deactivate(): pgdeactivate). MADV_PAGEOUT: the folios of
 *    each PMD range go to reclaim_pages() (references ignored): swapped out when
 *    a slot is free, else activated; lazy-free ones discarded. Both act on
 *    anonymous folios; page-cache pages are left (the model never reclaims
 *    them), but MADV_COLD still clears their PTEs' accessed bits.
 *  - Flushes: the leaves whose bits were cleared are gathered per VMA and
 *    flushed at its end (tlb_end_vma(): x86 does not merge VMAs in a gather);
 *    splits and reclaim flush as they do elsewhere (thp.c, reclaim.c).
 *
 * Leaves out: mlocked and shared folios (one process: every folio is exclusive),
 * the per-CPU batches that delay pglazyfree and pgdeactivate (lru.c),
 * MADV_PAGEOUT of page-cache pages.
 */
#include <errno.h>

#include "lru.h"
#include "madvise.h"
#include "mmap.h"
#include "tlbflush.h"
#include "reclaim.h"
#include "kernel.h"
#include "thp.h"

enum madv_op { OP_FREE, OP_COLD, OP_PAGEOUT };

struct madv_walk {
	struct kernel *k;
	enum madv_op op;
	struct pt_span g;             /* the mmu_gather of one VMA */
	pfn_t list[HPAGE_PMD_NR];     /* MADV_PAGEOUT: the folios of one PMD range */
	unsigned n;
};

/* split_folio() of the THP at @head: its PMD first if it has one (unmap_folio()). */
static void split_folio(struct kernel *k, pfn_t head)
{
	const struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];

	if (f->flags & FOLIO_PMD_MAPPED)
		thp_split_pmd_at(k, f->va); /* split_huge_pmd_locked(freeze): nothing queued */
	else
		thp_split_ptes_queue(k, head);
	thp_split_folio(k, head);
}

/* Clear @bits of the leaf at @va, gathering it for the flush if any was set. */
static void clear_bits(struct madv_walk *w, vaddr_t va, enum page_size ps, uint64_t bits)
{
	if (pt_clear_leaf_bits(&w->k->mm->pt, va, bits) & bits)
		pt_span_add(&w->g, va, ps);
}

/* The folio at @head, @nr pages, mapped from @va by one @ps leaf or @nr PTEs. */
static void folio_advise(struct madv_walk *w, pfn_t head, unsigned nr, vaddr_t va, enum page_size ps)
{
	struct kernel *k = w->k;
	unsigned leaves = ps == PS_4K ? nr : 1;

	/* madvise_cold_or_pageout_pte_range(), madvise_free_pte_range(): "do not
	 * interfere with other mappings of this folio" (folio_mapcount() !=
	 * folio_nr_pages()): a page another mm maps after a fork is skipped */
	if (thp_is_folio(k, head) ? thp_folio_shared(k, head & ~(pfn_t)(HPAGE_PMD_NR - 1))
				  : kernel_page_shared(k, head))
		return;
	switch (w->op) {
	case OP_FREE:
		/* clear_young_dirty_ptes(CYDP_CLEAR_YOUNG | CYDP_CLEAR_DIRTY), folio_mark_lazyfree() */
		for (unsigned i = 0; i < leaves; i++)
			clear_bits(w, va + ((vaddr_t)i << PAGE_SHIFT), ps, PTE_A | PTE_D);
		if (lru_mark_lazyfree(&k->lru, head, nr))
			k->st->pglazyfree += nr;
		break;
	case OP_COLD:
		for (unsigned i = 0; i < leaves; i++)
			clear_bits(w, va + ((vaddr_t)i << PAGE_SHIFT), ps, PTE_A);
		k->lru.flags[head] &= (uint8_t)~LRU_F_REFERENCED;
		if (k->lru.flags[head] & LRU_F_ACTIVE) { /* folio_deactivate() */
			lru_move(&k->lru, head, nr, LRU_INACTIVE_ANON);
			k->st->pgdeactivate += nr;
		}
		break;
	case OP_PAGEOUT:
		k->lru.flags[head] &= (uint8_t)~LRU_F_REFERENCED;
		w->list[w->n++] = head;
		break;
	}
}

/*
 * The mTHP whose pages @pfn .. @pfn + @nr - 1 (all of it) @va maps: what
 * folio_advise() does to one folio, for a folio whose pages are each an entry
 * of the model's LRU (thp.c): every PTE's bits, every page's LRU entry; for
 * MADV_PAGEOUT the folio goes to reclaim_pages() once, by its first page.
 */
static void mthp_advise(struct madv_walk *w, pfn_t pfn, unsigned nr, vaddr_t va)
{
	struct kernel *k = w->k;
	unsigned marked = 0;

	switch (w->op) {
	case OP_FREE:
		for (unsigned i = 0; i < nr; i++) {
			clear_bits(w, va + ((vaddr_t)i << PAGE_SHIFT), PS_4K, PTE_A | PTE_D);
			marked += lru_mark_lazyfree(&k->lru, pfn + i, 1);
		}
		/* folio_mark_lazyfree(): a large folio moves at once (folio_batch_add_and_move()) */
		k->st->pglazyfree += marked;
		break;
	case OP_COLD:
		for (unsigned i = 0; i < nr; i++) {
			clear_bits(w, va + ((vaddr_t)i << PAGE_SHIFT), PS_4K, PTE_A);
			k->lru.flags[pfn + i] &= (uint8_t)~LRU_F_REFERENCED;
			if (k->lru.flags[pfn + i] & LRU_F_ACTIVE) {
				lru_move(&k->lru, pfn + i, 1, LRU_INACTIVE_ANON);
				k->st->pgdeactivate++;
			}
		}
		break;
	case OP_PAGEOUT:
		for (unsigned i = 0; i < nr; i++)
			k->lru.flags[pfn + i] &= (uint8_t)~LRU_F_REFERENCED;
		w->list[w->n++] = pfn;
		break;
	}
}

/* madvise_folio_pte_batch(): PTEs from @p below @end mapping @pfn, @pfn + 1, ... of one
 * folio, whose pages end below @last. */
static unsigned pte_batch(const struct kernel *k, vaddr_t p, vaddr_t end, pfn_t pfn, pfn_t last)
{
	enum page_size ps;
	pfn_t q;
	unsigned nr = 1;

	while (p + ((vaddr_t)nr << PAGE_SHIFT) < end && pfn + nr < last &&
	       pt_lookup(&k->mm->pt, p + ((vaddr_t)nr << PAGE_SHIFT), &ps, &q, NULL) && ps == PS_4K &&
	       q == pfn + nr)
		nr++;
	return nr;
}

static void drop_swap_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct kernel *k = ctx;

	(void)va;
	(void)ps;
	if (pfn == PFN_NONE) /* free_swap_and_cache_nr() */
		swap_free(&k->swap, pte_pfn(entry));
}

/* The PTEs of [a, end), inside one PMD range (madvise_*_pte_range()'s loop). */
static void pte_range(struct madv_walk *w, vaddr_t a, vaddr_t end)
{
	struct kernel *k = w->k;
	enum page_size ps;
	uint64_t slot;
	pfn_t pfn;

	for (vaddr_t p = a; p < end;) {
		if (!pt_lookup(&k->mm->pt, p, &ps, &pfn, NULL)) {
			/* MADV_FREE drops a swap entry rather than read it back later */
			if (w->op == OP_FREE && k->mm->pt.nr_swap && pt_get_swap(&k->mm->pt, p, &slot))
				pt_unmap_range(&k->mm->pt, p, p + PAGE_SIZE, false, drop_swap_leaf, k);
			p += PAGE_SIZE;
			continue;
		}
		if (ps != PS_4K || pfn == k->thp.zero_pfn) { /* no normal folio */
			p += PAGE_SIZE;
			continue;
		}
		if (filemap_is_cache(&k->fm, pfn)) {
			if (w->op == OP_COLD)
				clear_bits(w, p, PS_4K, PTE_A);
			p += PAGE_SIZE;
			continue;
		}
		if (thp_is_folio(k, pfn)) {
			unsigned nr = pte_batch(k, p, end, pfn, (pfn | (HPAGE_PMD_NR - 1)) + 1);

			if (thp_folio_shared(k, pfn & ~(pfn_t)(HPAGE_PMD_NR - 1))) {
				/* mapped by other mms too (fork.c): left alone, not split */
				p += (vaddr_t)nr << PAGE_SHIFT;
				continue;
			}
			if (nr < HPAGE_PMD_NR) {
				/* not wholly in the range: split it, then this PTE again, a 4K folio */
				split_folio(k, pfn & ~(pfn_t)(HPAGE_PMD_NR - 1));
				continue;
			}
			folio_advise(w, pfn, nr, p, PS_4K);
			p += (vaddr_t)nr << PAGE_SHIFT;
			continue;
		}
		if (unlikely(k->thp.mthp[pfn])) {
			/* an mTHP: its PTEs in the range are handled together, or it is split */
			unsigned o = k->thp.mthp[pfn] & MTHP_ORDER_MASK;
			pfn_t head = pfn & ~(((pfn_t)1 << o) - 1);
			unsigned nr = pte_batch(k, p, end, pfn, head + (1U << o));

			if (kernel_page_shared(k, pfn)) {
				p += (vaddr_t)nr << PAGE_SHIFT; /* mapped by other mms too: left alone */
				continue;
			}
			if (nr < (1U << o) || !kernel_madvise_large_folio(k->cfg->kernel)) {
				/* not wholly in the range (or not mapped whole): split_folio(),
				 * then this PTE again, a 4K folio */
				thp_mthp_split(k, pfn);
				continue;
			}
			mthp_advise(w, pfn, nr, p);
			p += (vaddr_t)nr << PAGE_SHIFT;
			continue;
		}
		folio_advise(w, pfn, 1, p, PS_4K);
		p += PAGE_SIZE;
	}
}

/* One VMA's part [start, end) of the range: its PMD ranges, then the VMA's flush. */
static void vma_range(struct madv_walk *w, vaddr_t start, vaddr_t end)
{
	struct kernel *k = w->k;

	w->g = (struct pt_span){ 0, 0, 0 };
	for (vaddr_t a = start, next; a < end; a = next) {
		enum page_size ps;
		pfn_t pfn;

		next = (a | (PMD_SIZE - 1)) + 1;
		if (next > end)
			next = end;
		if (pt_lookup(&k->mm->pt, a, &ps, &pfn, NULL) && ps != PS_4K) {
			/* the huge zero PMD, a file THP's PMD, a hugetlb page: left alone */
			if (ps != PS_2M || !thp_is_folio(k, pfn))
				continue;
			if (next - a == PMD_SIZE) {
				folio_advise(w, pfn, HPAGE_PMD_NR, a, PS_2M);
				goto range_done;
			}
			/* madvise_free_huge_pmd(), and the same in madvise_cold_or_pageout_pte_range();
			 * a folio other mms map too is left alone (folio_maybe_mapped_shared()) */
			if (thp_folio_shared(k, pfn))
				continue;
			split_folio(k, pfn);
		}
		pte_range(w, a, next);
range_done:
		if (w->n) { /* reclaim_pages() at the end of each PMD range */
			reclaim_pages(k, w->list, w->n);
			w->n = 0;
		}
	}
	if (w->g.end) /* tlb_end_vma() */
		flush_tlb_mm_range(k, w->g.start, w->g.end, w->g.shift);
}

/* madvise_walk_vmas() with @op: stops at the first VMA @ok refuses. */
static int walk_vmas(struct madv_walk *w, vaddr_t start, vaddr_t end, unsigned long refuse)
{
	struct kernel *k = w->k;

	for (struct vma *v = vma_find_next(&k->mm->vmas, start); v && v->start < end;
	     v = vma_find_next(&k->mm->vmas, v->end)) {
		vaddr_t lo = v->start > start ? v->start : start, hi = v->end < end ? v->end : end;

		if (v->flags & refuse)
			return -EINVAL;
		vma_range(w, lo, hi);
	}
	return 0;
}

int madvise_free(struct kernel *k, vaddr_t start, vaddr_t end)
{
	struct madv_walk w = { .k = k, .op = OP_FREE };

	/* vma_is_anonymous() (a shared anonymous VMA is shmem), not hugetlb */
	return walk_vmas(&w, start, end, VM_FILE | VM_SHARED | VM_HUGETLB);
}

int madvise_cold_or_pageout(struct kernel *k, vaddr_t start, vaddr_t end, bool pageout)
{
	struct madv_walk w = { .k = k, .op = pageout ? OP_PAGEOUT : OP_COLD };

	/* can_madv_lru_vma() */
	return walk_vmas(&w, start, end, VM_HUGETLB);
}
