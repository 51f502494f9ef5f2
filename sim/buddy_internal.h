/*
 * buddy_internal.h - what compaction.c needs of buddy.c's free lists, as the
 * kernel's mm/internal.h shares them between mm/page_alloc.c and mm/compaction.c.
 * Not for other modules: they use buddy.h.
 */
#ifndef MMUSIM_BUDDY_INTERNAL_H
#define MMUSIM_BUDDY_INTERNAL_H

#include "buddy.h"

#define BOOT_BLOCK_PAGES (1UL << MAX_PAGE_ORDER)

/* The migrate type byte of @pfn's pageblock (get_pageblock_migratetype()). */
static inline uint8_t *buddy_pb_mt(const struct buddy *b, pfn_t pfn)
{
	return &b->pageblock_mt[pfn >> PAGEBLOCK_ORDER];
}

/* Link the next implicit boot block at the tail of its list (buddy.c's lazy start). */
void buddy_lazy_link_one(struct buddy *b);

/* del_page_from_free_list(): the free block at @pfn of @order leaves its list. */
void buddy_list_del(struct buddy *b, pfn_t pfn, unsigned order);

/* free_area_empty(): no free block of order @o and type @mt (implicit blocks included). */
bool buddy_area_empty(const struct buddy *b, unsigned o, int mt);

/* Order of the free block headed at @pfn (the implicit boot blocks included), or -1. */
int buddy_free_head_order(const struct buddy *b, pfn_t pfn);

/* __zone_watermark_ok() against @mark pages (no reserves). */
bool buddy_zone_watermark_ok(const struct buddy *b, unsigned order, uint64_t mark);

/* find_suitable_fallback(): the type an @mt request of @order would take from, or -1. */
int buddy_find_suitable_fallback(const struct buddy *b, unsigned order, int mt,
				 bool only_stealable, bool *can_steal);

/* __free_one_page() of a block whose head flags are already cleared. */
void buddy_free_one_page(struct buddy *b, pfn_t pfn, unsigned order);

#endif
