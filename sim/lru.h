/*
 * lru.h - the LRU lists of anonymous folios (Linux 6.18 mm/swap.c folio_add_lru(),
 * folio_mark_lazyfree(), include/linux/mm_inline.h lruvec_add_folio(),
 * folio_lru_list()): intrusive lists over frame numbers, their counts in 4K
 * pages. The anonymous pair holds swap-backed folios; the file pair holds only
 * lazy-free ones (MADV_FREE clears PG_swapbacked, so folio_lru_list() files
 * them as file pages; the model's page-cache pages are on no list).
 * Which folio to move where is reclaim.c's (mm/vmscan.c); this file only keeps
 * the lists. Takes struct lru alone: a folio's size is passed in by the caller,
 * which knows it (thp.c's folios), so the lists need no other model.
 */
#ifndef MMUSIM_LRU_H
#define MMUSIM_LRU_H

#include "types.h"

/* enum lru_list's order: the file lists follow the anonymous ones */
enum { LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, LRU_INACTIVE_FILE, LRU_ACTIVE_FILE, NR_LRU_LISTS };
#define NR_ANON_LRU 2

#define LRU_F_ON 0x01
#define LRU_F_ACTIVE 0x02
#define LRU_F_REFERENCED 0x04 /* PG_referenced */
#define LRU_F_LAZYFREE 0x08   /* !PG_swapbacked: an anonymous folio MADV_FREE made clean */

/*
 * An intrusive doubly linked list per LRU over frame numbers: entry p describes
 * the folio whose first frame is p (a 4K page, or a THP's head). Indices
 * nr_pages to nr_pages + 3 are the four lists' heads. The arrays are mapped
 * lazily, so memory grows with the frames that were ever on a list.
 */
struct lru {
	uint32_t *next, *prev;
	uint8_t *flags;           /* LRU_F_* */
	uint64_t nr_pages;        /* frames of the machine */
	uint64_t nr[NR_LRU_LISTS]; /* 4K pages on each list (a THP counts 512) */
};

/* 0 or -1 (host OOM). */
int lru_init(struct lru *l, uint64_t nr_pages);
void lru_destroy(struct lru *l);

/* The sentinel index of @list (its head and tail are next[] and prev[] of it). */
static inline uint32_t lru_head(const struct lru *l, unsigned list)
{
	return (uint32_t)(l->nr_pages + list);
}

/* folio_lru_list(): the list the folio at @pfn is on (if it is on one). */
static inline unsigned lru_list_of(const struct lru *l, pfn_t pfn)
{
	return (l->flags[pfn] & LRU_F_LAZYFREE ? LRU_INACTIVE_FILE : LRU_INACTIVE_ANON) +
	       (l->flags[pfn] & LRU_F_ACTIVE ? 1 : 0);
}

/* Is the folio at @pfn lazy-free (!folio_test_swapbacked())? */
static inline bool lru_lazyfree(const struct lru *l, pfn_t pfn)
{
	return l->flags[pfn] & LRU_F_LAZYFREE;
}

/* Anonymous pages on the lists, swap-backed or lazy-free. */
static inline uint64_t lru_nr_pages(const struct lru *l)
{
	return l->nr[0] + l->nr[1] + l->nr[2] + l->nr[3];
}

/* Is the folio at @pfn on a list? */
static inline bool lru_on(const struct lru *l, pfn_t pfn)
{
	return l->flags[pfn] & LRU_F_ON;
}

/* folio_add_lru(): a new anonymous folio of @nr 4K pages (1 or 512) joins the inactive list. */
void lru_add(struct lru *l, pfn_t pfn, unsigned nr);

/* The folio at @pfn, of @nr 4K pages, leaves its list (it is being freed). */
void lru_del(struct lru *l, pfn_t pfn, unsigned nr);

/* Migration: the 4K folio at @from is now at @to, same list and place. */
void lru_replace(struct lru *l, pfn_t from, pfn_t to);

/*
 * Move the folio at @pfn (@nr 4K pages) to the head of @list (activate, rotate,
 * deactivate), of its own pair (anonymous or file, by LRU_F_LAZYFREE): @list
 * names active or inactive.
 */
void lru_move(struct lru *l, pfn_t pfn, unsigned nr, unsigned list);

/*
 * lru_lazyfree() (folio_mark_lazyfree()): a swap-backed folio loses
 * PG_swapbacked, PG_active and PG_referenced and goes to the head of the
 * inactive file list. Returns true if it did (pglazyfree counts it); false for
 * a folio already lazy-free.
 */
bool lru_mark_lazyfree(struct lru *l, pfn_t pfn, unsigned nr);

/* folio_set_swapbacked() of a re-dirtied lazy-free folio, then to the head of @list's anonymous kind. */
void lru_set_swapbacked(struct lru *l, pfn_t pfn, unsigned nr, unsigned list);

/*
 * split_huge_page()'s lru_add_split_folio(): the THP at @head becomes 4K folios;
 * those whose bit is set in @mapped (512 bits) take its place, in order.
 */
void lru_split(struct lru *l, pfn_t head, const uint64_t *mapped);

/*
 * Lists well linked, every member flagged on and on the list its flag names,
 * each list's count the sum of @folio_nr(@ctx, p) over its members. Aborts.
 */
void lru_check_invariants(const struct lru *l, unsigned (*folio_nr)(const void *ctx, pfn_t pfn),
			  const void *ctx);

#endif
