/*
 * reclaim.h - memory pressure: the anonymous LRU lists, page reclaim to swap
 * (kswapd and direct reclaim) and swap-in, after Linux 6.6 mm/vmscan.c,
 * mm/swap.c and mm/memory.c do_swap_page(). See reclaim.c for the model.
 */
#ifndef MMUSIM_RECLAIM_H
#define MMUSIM_RECLAIM_H

#include "types.h"

struct sim;
struct vma;

enum { LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, NR_ANON_LRU };

/*
 * An intrusive doubly linked list per LRU over frame numbers: entry p describes
 * the folio whose first frame is p (a 4K page, or a THP's head). Indices
 * nr_pages and nr_pages + 1 are the two lists' heads. The arrays are mapped
 * lazily, so memory grows with the frames that were ever on a list.
 */
struct lru {
	uint32_t *next, *prev;
	uint8_t *flags;           /* LRU_F_* */
	uint64_t nr_pages;        /* frames of the machine */
	uint64_t nr[NR_ANON_LRU]; /* 4K pages on each list (a THP counts 512) */
};

/* 0 or -1 (host OOM). */
int lru_init(struct lru *l, uint64_t nr_pages);
void lru_destroy(struct lru *l);

/* folio_add_lru(): a new anonymous folio (@nr 1 or 512) joins the inactive list. */
void lru_add(struct sim *s, pfn_t pfn, unsigned nr);

/* The folio at @pfn leaves its list (it is being freed). */
void lru_del(struct sim *s, pfn_t pfn);

/* Migration: the 4K folio at @from is now at @to, same list and place. */
void lru_replace(struct sim *s, pfn_t from, pfn_t to);

/*
 * split_huge_page()'s lru_add_split_folio(): the THP at @head becomes 4K folios;
 * those whose bit is set in @mapped (512 bits) take its place, in order.
 */
void lru_split(struct sim *s, pfn_t head, const uint64_t *mapped);

/* Is the folio at @pfn on a list? */
bool lru_on(const struct sim *s, pfn_t pfn);

/*
 * kswapd: woken when free pages are below the low watermark, it reclaims until
 * they reach the high one (balance_pgdat()). Called before an allocation.
 */
void reclaim_kswapd(struct sim *s);

/*
 * Direct reclaim by the allocating task (__alloc_pages_direct_reclaim()) of
 * @nr pages: allocstall, the task's own cycles. Returns the pages reclaimed.
 */
uint64_t reclaim_direct(struct sim *s, uint64_t nr);

/*
 * do_swap_page(): the fault at @va found swap entry @slot. Reads the page back
 * (a major fault), maps it, frees the slot. 0, or -1 with s->err.
 */
int reclaim_swap_in(struct sim *s, const struct vma *v, vaddr_t va, uint64_t slot, bool khugepaged);

/* Lists consistent with their counts and flags. Aborts. */
void lru_check_invariants(const struct sim *s);

#endif
