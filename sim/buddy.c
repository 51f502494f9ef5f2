/*
 * buddy.c - the binary buddy allocator, after Linux mm/page_alloc.c (v6.x):
 * free_area[order], __rmqueue_smallest(), expand(), __free_one_page().
 *
 * Follows: allocation takes the first block (list head) of the smallest order that
 * has one and returns the upper halves to the lower lists (expand()); freeing
 * merges with the buddy at pfn ^ (1 << order) while it is a free block of the same
 * order; MAX_PAGE_ORDER = 10 (reference §5). Freed blocks go to the list head.
 *
 * Leaves out (for now; the kernel-model issue adds them behind this interface):
 * migrate types and pageblock fallback, per-CPU page lists, watermarks, the
 * "buddy of the next order is free: add to tail" heuristic and shuffling.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buddy.h"

static void list_add(struct buddy *b, pfn_t pfn, unsigned order, bool tail)
{
	struct free_area *fa = &b->free_area[order];
	struct buddy_page *p = &b->pages[pfn];

	p->flags = BP_BUDDY;
	p->order = (int8_t)order;
	if (fa->head == BUDDY_NIL) {
		p->next = p->prev = (uint32_t)pfn;
		fa->head = (uint32_t)pfn;
	} else {
		struct buddy_page *h = &b->pages[fa->head];
		uint32_t last = h->prev;

		p->next = fa->head;
		p->prev = last;
		b->pages[last].next = (uint32_t)pfn;
		h->prev = (uint32_t)pfn;
		if (!tail)
			fa->head = (uint32_t)pfn;
	}
	fa->nr_free++;
}

static void list_del(struct buddy *b, pfn_t pfn, unsigned order)
{
	struct free_area *fa = &b->free_area[order];
	struct buddy_page *p = &b->pages[pfn];

	if (p->next == (uint32_t)pfn) {
		fa->head = BUDDY_NIL;
	} else {
		b->pages[p->prev].next = p->next;
		b->pages[p->next].prev = p->prev;
		if (fa->head == (uint32_t)pfn)
			fa->head = p->next;
	}
	p->flags = 0;
	p->order = 0;
	fa->nr_free--;
}

int buddy_init(struct buddy *b, uint64_t bytes)
{
	size_t len;

	memset(b, 0, sizeof(*b));
	b->nr_pages = bytes >> PAGE_SHIFT;
	BUG_ON(b->nr_pages % (1UL << MAX_PAGE_ORDER) || b->nr_pages >= BUDDY_NIL);
	/* mmap'd, so frames the run never touches cost no host memory */
	len = b->nr_pages * sizeof(*b->pages);
	b->pages = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->pages == MAP_FAILED) {
		b->pages = NULL;
		return -1;
	}
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		b->free_area[o].head = BUDDY_NIL;
	b->lazy_next = 0;
	b->free_area[MAX_PAGE_ORDER].nr_free = b->nr_pages >> MAX_PAGE_ORDER;
	b->nr_free_pages = b->nr_pages;
	return 0;
}

void buddy_destroy(struct buddy *b)
{
	if (b->pages)
		munmap(b->pages, b->nr_pages * sizeof(*b->pages));
	memset(b, 0, sizeof(*b));
}

pfn_t buddy_alloc(struct buddy *b, unsigned order)
{
	unsigned o;
	pfn_t pfn;

	BUG_ON(order > MAX_PAGE_ORDER);
	for (o = order; o < NR_PAGE_ORDERS; o++)
		if (b->free_area[o].nr_free)
			break;
	if (o == NR_PAGE_ORDERS)
		return PFN_NONE;
	if (b->free_area[o].head != BUDDY_NIL) {
		pfn = b->free_area[o].head;
		list_del(b, pfn, o);
	} else {
		/* the implicit tail of free_area[MAX_PAGE_ORDER] */
		BUG_ON(o != MAX_PAGE_ORDER || b->lazy_next >= b->nr_pages);
		pfn = b->lazy_next;
		b->lazy_next += 1UL << MAX_PAGE_ORDER;
		b->free_area[o].nr_free--;
	}
	/* expand(): keep the low half, free the high halves */
	while (o > order) {
		o--;
		list_add(b, pfn + (1UL << o), o, false);
	}
	b->pages[pfn].flags = BP_HEAD;
	b->pages[pfn].order = (int8_t)order;
	b->nr_free_pages -= 1UL << order;
	return pfn;
}

void buddy_free(struct buddy *b, pfn_t pfn, unsigned order)
{
	BUG_ON(pfn >= b->nr_pages || (pfn & ((1UL << order) - 1)));
	BUG_ON(b->pages[pfn].flags != BP_HEAD || (unsigned)b->pages[pfn].order != order);
	b->pages[pfn].flags = 0;
	b->nr_free_pages += 1UL << order;
	while (order < MAX_PAGE_ORDER) {
		pfn_t buddy = pfn ^ (1UL << order);
		struct buddy_page *bp = &b->pages[buddy];

		if (buddy >= b->nr_pages || !(bp->flags & BP_BUDDY) || (unsigned)bp->order != order)
			break;
		list_del(b, buddy, order);
		pfn &= ~(1UL << order);
		order++;
	}
	list_add(b, pfn, order, false);
}

bool buddy_is_allocated(const struct buddy *b, pfn_t pfn, unsigned *order)
{
	if (pfn >= b->nr_pages || b->pages[pfn].flags != BP_HEAD)
		return false;
	if (order)
		*order = (unsigned)b->pages[pfn].order;
	return true;
}

int buddy_fragmentation_index(const struct buddy *b, unsigned order)
{
	uint64_t free_pages = 0, blocks = 0, suitable = 0;

	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++) {
		uint64_t n = b->free_area[o].nr_free;

		free_pages += n << o;
		blocks += n;
		if (o >= order)
			suitable += n << (o - order);
	}
	if (!blocks)
		return 0;
	if (suitable)
		return -1000;
	/* 1000 - (1000 + free_pages * 1000 / 2^order) / blocks, in integer math as vmstat.c */
	return (int)(1000 - ((1000 + (free_pages * 1000 >> order)) / blocks));
}

int buddy_unusable_index(const struct buddy *b, unsigned order)
{
	uint64_t free_pages = 0, suitable = 0;

	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++) {
		uint64_t n = b->free_area[o].nr_free;

		free_pages += n << o;
		if (o >= order)
			suitable += n << (o - order);
	}
	if (!free_pages)
		return 1000;
	return (int)(((free_pages - (suitable << order)) * 1000) / free_pages);
}

void buddy_check_invariants(const struct buddy *b)
{
	uint64_t total = 0;
	uint8_t *seen = calloc((b->nr_pages + 7) / 8, 1);

	BUG_ON(!seen);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++) {
		const struct free_area *fa = &b->free_area[o];
		uint64_t n = 0;
		uint32_t p = fa->head;

		uint64_t lazy = o == MAX_PAGE_ORDER ? (b->nr_pages - b->lazy_next) >> MAX_PAGE_ORDER : 0;

		if (p == BUDDY_NIL) {
			BUG_ON(fa->nr_free != lazy);
			total += lazy << o;
			continue;
		}
		do {
			const struct buddy_page *bp = &b->pages[p];
			pfn_t buddy = (pfn_t)p ^ (1UL << o);

			BUG_ON(p >= b->nr_pages);
			BUG_ON(!(bp->flags & BP_BUDDY) || (unsigned)bp->order != o);
			BUG_ON(p & ((1UL << o) - 1));
			BUG_ON(b->pages[bp->next].prev != p);
			for (pfn_t f = p; f < (pfn_t)p + (1UL << o); f++) {
				BUG_ON(seen[f / 8] & (1 << (f % 8)));
				seen[f / 8] |= (uint8_t)(1 << (f % 8));
				BUG_ON(f != p && (b->pages[f].flags & (BP_BUDDY | BP_HEAD)));
			}
			if (o < MAX_PAGE_ORDER && buddy < b->nr_pages)
				BUG_ON((b->pages[buddy].flags & BP_BUDDY) &&
				       (unsigned)b->pages[buddy].order == o);
			n++;
			BUG_ON(n > b->nr_pages);
			p = bp->next;
		} while (p != fa->head);
		BUG_ON(n + lazy != fa->nr_free);
		total += (n + lazy) << o;
	}
	BUG_ON(total != b->nr_free_pages);
	BUG_ON(b->lazy_next % (1UL << MAX_PAGE_ORDER) || b->lazy_next > b->nr_pages);
	for (pfn_t f = b->lazy_next; f < b->nr_pages; f += 1UL << MAX_PAGE_ORDER)
		BUG_ON(b->pages[f].flags || (seen[f / 8] & (1 << (f % 8))));
	free(seen);
}
