/*
 * buddy.h - physical memory: the binary buddy allocator of mm/page_alloc.c.
 *
 * One zone of `nr_pages` 4 KiB frames, free_area[order] lists for orders
 * 0..MAX_PAGE_ORDER (10), merging with the buddy at pfn ^ (1 << order). Knows only
 * frames: nothing of page tables, VMAs or TLBs.
 */
#ifndef MMUSIM_BUDDY_H
#define MMUSIM_BUDDY_H

#include "types.h"

#define MAX_PAGE_ORDER 10
#define NR_PAGE_ORDERS (MAX_PAGE_ORDER + 1)

/* Per-frame state (the part of struct page this model needs). */
struct buddy_page {
	uint32_t next, prev; /* free-list links (frame numbers) while a free block head */
	int8_t order;        /* free block head: its order; allocated head: its order */
	uint8_t flags;       /* BP_* */
	uint16_t pad;
};

#define BP_BUDDY 0x01 /* head of a free block (PageBuddy) */
#define BP_HEAD 0x02  /* head of an allocated block */

struct free_area {
	uint32_t head; /* BUDDY_NIL when empty */
	uint64_t nr_free;
};

#define BUDDY_NIL UINT32_MAX

struct buddy {
	struct buddy_page *pages;
	uint64_t nr_pages;
	/*
	 * Boot hands every order-10 block to the tail of free_area[10] in ascending
	 * order; those never taken yet are kept implicit: the blocks from lazy_next up
	 * are the list's tail, counted in nr_free but not linked, so a run touches the
	 * metadata of the memory it uses only (startup measured 7.1 -> 3.2 ms at 4 GiB).
	 */
	pfn_t lazy_next;
	uint64_t nr_free_pages;
	struct free_area free_area[NR_PAGE_ORDERS];
};

/*
 * Set up @bytes of memory (a multiple of 4 MiB, < 16 TiB), all free, handed to the
 * allocator in ascending order at the tail of the lists as __free_pages_core()
 * does at boot (FPI_TO_TAIL, Linux 5.10+), so the lowest block is allocated first.
 * Returns 0, or -1 if the host is out of memory.
 */
int buddy_init(struct buddy *b, uint64_t bytes);
void buddy_destroy(struct buddy *b);

/*
 * __rmqueue_smallest(): take the first block of the smallest order >= @order that
 * has one, split the rest back with expand(). Returns the first frame, or
 * PFN_NONE if no block is large enough (an expected outcome, not an error).
 */
pfn_t buddy_alloc(struct buddy *b, unsigned order);

/* __free_one_page(): free the block at @pfn of @order, merging with free buddies. */
void buddy_free(struct buddy *b, pfn_t pfn, unsigned order);

/* True if @pfn is the head of an allocated block. */
bool buddy_is_allocated(const struct buddy *b, pfn_t pfn, unsigned *order);

/*
 * Fragmentation index of mm/vmstat.c (__fragmentation_index) for @order, times
 * 1000: -1000 if a block of that order is free, else 0..1000.
 */
int buddy_fragmentation_index(const struct buddy *b, unsigned order);

/* unusable_free_index() of mm/vmstat.c for @order, times 1000. */
int buddy_unusable_index(const struct buddy *b, unsigned order);

/*
 * Lists well formed, every listed block a BP_BUDDY head of its order, aligned, in
 * range, not overlapping another free block, and not buddies of each other at the
 * same order (they would have merged); nr_free and nr_free_pages match. Aborts.
 */
void buddy_check_invariants(const struct buddy *b);

#endif
