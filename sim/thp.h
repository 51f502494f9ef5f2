/*
 * thp.h - transparent huge pages: the fault-time policy, the huge zero page,
 * PMD and page splitting, the deferred split queue (Linux 6.x mm/huge_memory.c,
 * mm/memory.c). The state lives in struct kernel (k->thp); khugepaged.c collapses.
 */
#ifndef MMUSIM_THP_H
#define MMUSIM_THP_H

#include "page_alloc.h"
#include "types.h"

struct kernel;
struct mm;
struct vma;

/* Pages whose written bits are known set without a look-up (a power of 2; thp_store_seen()). */
#define THP_WR_RECENT 256

/* Per 2 MiB folio (order-9 block), indexed by pfn >> 9. */
struct folio {
	uint64_t mapped[HPAGE_PMD_NR / 64]; /* subpages mapped by a PTE or by the PMD */
	vaddr_t va; /* where its PMD mapped it (the reverse map of its subpages) */
	uint16_t nr_mapped;
	uint16_t nr_pmd; /* FOLIO_FILE: PMDs mapping it (every mapping of the file) */
	uint16_t pmd_shared; /* FOLIO_THP: PMDs of other mms mapping it too (after a fork) */
	uint8_t flags;
};

#define FOLIO_THP 0x01        /* an anonymous THP lives here */
#define FOLIO_PMD_MAPPED 0x02 /* mapped by a PMD leaf */
#define FOLIO_DEFERRED 0x04   /* on the deferred split queue */
#define FOLIO_FILE 0x08       /* a file THP of the page cache lives here (khugepaged.c
				 collapse_file(); its frames are cache pages, filemap.c) */
#define FOLIO_UNDERUSED_Q 0x10 /* on the deferred split queue whole (6.12+, not partially
				  mapped): for the shrinker's thp_underused() check */

struct thp_state {
	pfn_t zero_pfn;      /* the 4 KiB zero page (reserved at start) */
	pfn_t huge_zero_pfn; /* the huge zero page, PFN_NONE until a read fault needs it */
	struct folio *folio; /* nr_pages >> 9 entries */
	/* deposited page tables, one per PMD leaf of a THP or the huge zero page */
	uint64_t *dep_key;   /* mm serial and pmd index, + 1 (0 = empty slot; thp.c dep_key()) */
	pfn_t *dep_val;
	size_t dep_cap, dep_n;
	pfn_t *deferred;     /* heads of partially mapped THPs */
	size_t nr_deferred, cap_deferred;
	uint64_t nr_zero_ptes;  /* PTEs mapping the 4K zero page */
	uint64_t nr_zero_pmds;  /* PMDs mapping the huge zero page */
	uint64_t nr_shared_pmds; /* the sum of pmd_shared: PMDs beyond a folio's first */
	/* the run of PTEs of one folio a batched zap is removing (thp_rmap_batching()) */
	bool rmap_batched;      /* runs on: rmap removal per run, not per PTE */
	pfn_t run_head;         /* the folio of the open run; PFN_NONE: none */
	pfn_t run_next_pfn;     /* the frame and address that continue it */
	vaddr_t run_next_va;
	/*
	 * Anonymous mTHPs (orders 2 .. 8, PTE-mapped): per frame, the order of the
	 * folio it belongs to (0: none) and, on the head frame, MTHP_PARTIAL while
	 * it is partially mapped and on the deferred split queue; per head frame,
	 * its pages still mapped. Allocated with the folio array.
	 */
	uint8_t *mthp;
	uint16_t *mthp_mapped;
	/*
	 * Page contents, for the zero-filled tests of 6.12+ (thp_underused(),
	 * try_to_map_unused_to_zeropage()): per frame, set once a store reached it
	 * since the THP or mTHP holding it was allocated (a page never stored to
	 * is zero-filled: folio_zero_user()). Kept for THP and mTHP frames only,
	 * and only when track_written; any other anonymous page counts as data.
	 */
	uint64_t *written;
	bool track_written;
	const struct mm *wr_mm; /* the mm of wr_recent's pages */
	uint64_t wr_recent[THP_WR_RECENT]; /* vpn + 1 of pages marked lately (0: none) */
	bool mm_registered;  /* khugepaged is awake: an mm was registered since it last found
				the list empty (its wake-ups are due; khugepaged.c) */
};

#define MTHP_ORDER_MASK 0x0f
#define MTHP_PARTIAL 0x80 /* folio_test_partially_mapped() (6.12), on the head frame */

int thp_init(struct kernel *k);
void thp_destroy(struct kernel *k);

/*
 * The THP part of a fault at @va in @v (do_huge_pmd_anonymous_page()). Returns 1
 * if it mapped a huge (or huge zero) PMD, 0 to fall back to a 4K PTE, -1 on error.
 */
int thp_fault(struct kernel *k, struct vma *v, vaddr_t va, bool write);

/*
 * do_huge_zero_wp_pmd() (Linux 6.13+, os.kernel): a store to the huge zero PMD
 * at @va in @v replaces it with a fresh PMD-mapped THP (thp_fault_alloc).
 * Returns 1 if it did, 0 when the allocation failed (thp_fault_fallback; the
 * caller splits the zero PMD instead), -1 on error.
 */
int thp_huge_zero_wp(struct kernel *k, struct vma *v, vaddr_t va);

/*
 * alloc_anon_folio() (mm/memory.c, Linux 6.8+) for a write fault at @va in the
 * anonymous private VMA @v: the orders below PMD order that
 * thp_vma_allowable_orders() enables for @v and that fit in it
 * (thp_vma_suitable_orders()); from the highest, the first whose aligned
 * range of PTEs is all none (pte_range_none()); then vma_alloc_folio() order by
 * order down (anon_fault_fallback for each that fails). Maps the folio's pages
 * by PTEs (set_ptes()) and counts anon_fault_alloc. Returns 1 if it mapped an
 * mTHP, 0 for the caller's order-0 page, -1 on error.
 */
int thp_mthp_fault(struct kernel *k, struct vma *v, vaddr_t va);

/*
 * split_folio() of the mTHP with page @pfn (reclaim, when it cannot swap it out
 * whole; madvise.c, for a range that covers part of it; the deferred split
 * shrinker): its mapped pages become order-0 folios, its unmapped ones are
 * freed (returned). split; and split_deferred when it was mapped whole by more
 * than one PTE (unmap_folio() takes its PTEs one by one: __folio_remove_rmap()
 * queues it after the first).
 */
uint64_t thp_mthp_split(struct kernel *k, pfn_t pfn);

/*
 * Swap the mTHP holding page @pfn out whole (shrink_folio_list() of Linux 6.10+:
 * add_to_swap() of the large folio, try_to_unmap()): when it is fully mapped,
 * by one mm (k->mm), and the swap device gives an aligned run of slots
 * (swap_alloc_order()), each PTE becomes a swap entry, its frames are freed
 * and swpout counts. Returns its pages, or 0 (nothing done: the caller splits
 * it, swpout_fallback).
 */
unsigned thp_mthp_swap_out(struct kernel *k, pfn_t pfn);

/* Check the mTHP bookkeeping against the page tables' frames (tests). */
void thp_mthp_check_invariants(const struct kernel *k);

/* khugepaged_enter_vma(): register k->mm with khugepaged (once: khugepaged_enter_mm()). */
void thp_register(struct kernel *k);

/* True if THP may back @v at all (thp_vma_allowable_order() for PMD order). */
bool thp_vma_allowable(const struct kernel *k, const struct vma *v);

/* __split_huge_pmd(): if a THP or huge zero PMD covers @va, split it to PTEs. */
void thp_split_pmd_at(struct kernel *k, vaddr_t va);

/*
 * A PTE or PMD leaf of @pfn is going away (zap): put the page back where it came
 * from: a 4K page to the buddy allocator, a THP subpage to its folio (freeing the
 * folio with its last mapping, queueing it for deferred split on a partial unmap),
 * a zero page nowhere. @ps is the leaf's size, @va its address.
 */
void thp_unmap_leaf(struct kernel *k, vaddr_t va, enum page_size ps, pfn_t pfn);

/*
 * How the zap that follows removes the reverse mappings of PTE-mapped THPs.
 * @batched false: one PTE at a time (page_remove_rmap(), Linux up to 6.8): the
 * first PTE of a folio that leaves others mapped queues it for deferred split,
 * even when the same zap unmaps the rest. @batched true: per run of PTEs that
 * map consecutive pages of one folio within one page table (zap_present_ptes()
 * with folio_pte_batch(), folio_remove_rmap_ptes(), 6.9+): the folio is queued
 * only if it is still partly mapped after the run. Ends any open run. The
 * caller turns batching off after the zap (thp_rmap_batching(k, false)).
 */
void thp_rmap_batching(struct kernel *k, bool batched);

/* A leaf that is no THP subpage (a swap entry, a 1G page) ends the open run. */
void thp_rmap_run_end(struct kernel *k);

/*
 * split_huge_page() of the PTE-mapped THP at @head: its mapped subpages become
 * 4K folios (in its LRU place), the others are freed (returned); thp_split_page.
 */
uint64_t thp_split_folio(struct kernel *k, pfn_t head);

/*
 * What __folio_split()'s unmap_folio() counts for the THP at @head when it was
 * mapped by PTEs when the split began (not by its PMD: that is split frozen,
 * split_huge_pmd_locked(freeze)): try_to_migrate_one() takes its PTEs one by
 * one, and __folio_remove_rmap() queues it after the first (deferred_split_folio(
 * folio, true): thp_deferred_split_page, split_deferred) unless it was partly
 * mapped already or had one page mapped. Call before thp_split_folio().
 */
void thp_split_ptes_queue(struct kernel *k, pfn_t head);

/*
 * The deferred split shrinker (deferred_split_scan()): split the partially
 * mapped folios on the queue and free their unmapped pages; then (6.12+) take
 * each THP queued whole off the queue and split it if thp_underused()
 * (thp_underused_split_page). Returns the pages freed.
 */
uint64_t thp_shrink_deferred(struct kernel *k);

/*
 * thp_underused() (6.12+): more of the PMD THP at @head's pages are zero-filled
 * (never stored to, thp_state.written) than khugepaged/max_ptes_none; never
 * while max_ptes_none is 511.
 */
bool thp_underused(const struct kernel *k, pfn_t head);

/*
 * A store reached @va in @mm (the batch pass after the replay of a batch,
 * sim.c): if a THP or mTHP page is mapped there, it holds data now. Only while
 * k->thp.track_written.
 */
void thp_store_seen(struct kernel *k, const struct mm *mm, vaddr_t va);

/* The page @pfn holds data now (a store's fault wrote it); no-op when untracked. */
void thp_mark_written(struct kernel *k, pfn_t pfn);

/* Is page @pfn known to hold data (any page but an untouched THP or mTHP page)? */
bool thp_page_written(const struct kernel *k, pfn_t pfn);

/* Deposit / withdraw the page table kept for a PMD leaf at @va. */
int thp_deposit(struct kernel *k, vaddr_t va, pfn_t table);
pfn_t thp_withdraw(struct kernel *k, vaddr_t va);

/*
 * Is the THP at @head mapped by more than one mm (after a fork): by other PMDs,
 * by extra PTEs, or its mapped subpages by different mms? (the
 * folio_maybe_mapped_shared() of reclaim, madvise and COW reuse)
 */
bool thp_folio_shared(const struct kernel *k, pfn_t head);

/*
 * Is the mTHP holding page @pfn mapped by an mm other than k->mm (a page of it
 * shared after a fork, or mapped only by another process)? The
 * folio_maybe_mapped_shared() of a COW fault (fault.c).
 */
bool thp_mthp_shared(const struct kernel *k, pfn_t pfn);

/* Which kind of 2M leaf maps @pfn. */
bool thp_is_folio(const struct kernel *k, pfn_t pfn);

/*
 * vma_alloc_folio() of an order-9 block for a THP fault under @gfp (the fault's
 * vma_thp_gfp_mask()): a first slow path on the local node under @gfp |
 * __GFP_THISNODE | __GFP_NORETRY, then, if @gfp has __GFP_DIRECT_RECLAIM, a
 * second under @gfp (mm/mempolicy.c, CONFIG_NUMA). Counts compaction and
 * reclaim (page_alloc.c). PFN_NONE if none.
 */
pfn_t thp_alloc_huge(struct kernel *k, gfp_t gfp);

/* split_page(): an allocated order-@order block at @head becomes 2^order order-0 blocks. */
void thp_split_alloc(struct buddy *b, pfn_t head, unsigned order);

/* Record a new PMD-mapped THP folio at @pfn. */
void thp_folio_new(struct kernel *k, pfn_t pfn, vaddr_t va);

#endif
