/*
 * reclaim.h - memory pressure: page reclaim to swap (kswapd and direct
 * reclaim) over the LRU lists of lru.h, and swap-in, after Linux 6.6
 * mm/vmscan.c and mm/memory.c do_swap_page(). See reclaim.c for the model.
 */
#ifndef MMUSIM_RECLAIM_H
#define MMUSIM_RECLAIM_H

#include "page_alloc.h"
#include "types.h"

struct kernel;
struct vma;

/*
 * kswapd: woken when free pages are below the low watermark, it reclaims until
 * they reach the high one (balance_pgdat()). Called before an allocation.
 */
void reclaim_kswapd(struct kernel *k);

/*
 * Direct reclaim by the task allocating @order under @gfp (try_to_free_pages()
 * from __alloc_pages_direct_reclaim()): counts allocstall of the request's zone
 * (allocstall_movable with GFP_MOVABLE, else allocstall_normal), then reclaims
 * SWAP_CLUSTER_MAX (32) pages, the deferred split shrinker first (shrink_slab());
 * for a costly @order it skips the zone when compaction is ready
 * (compaction_ready()) and otherwise goes on until compaction could run
 * (should_continue_reclaim()). The task's own cycles. Returns the pages reclaimed.
 */
uint64_t reclaim_direct(struct kernel *k, unsigned order, gfp_t gfp);

/*
 * reclaim_pages() of MADV_PAGEOUT: shrink_folio_list() of the @n folios at
 * @folios (heads, on the LRU), references ignored: each swapped out, discarded
 * (lazy-free and clean) or activated (no swap slot, or re-dirtied lazy-free); a
 * THP that cannot be swapped whole is split and its pages tried one by one. One
 * flush at the end if anything was unmapped. Returns the pages freed.
 */
uint64_t reclaim_pages(struct kernel *k, const pfn_t *folios, size_t n);

/*
 * do_swap_page(): the fault at @va found swap entry @slot. Reads the page back
 * (a major fault), maps it, frees the slot. 0, or -1 with k->err.
 */
int reclaim_swap_in(struct kernel *k, const struct vma *v, vaddr_t va, uint64_t slot, bool khugepaged);

/* The LRU lists (lru_check_invariants()), each member a THP head or a mapped 4K page. Aborts. */
void reclaim_check_invariants(const struct kernel *k);

#endif
