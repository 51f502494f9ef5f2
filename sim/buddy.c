/*
 * buddy.c - the binary buddy allocator of Linux 6.6 mm/page_alloc.c with migrate
 * types and watermarks. Direct compaction, which works on these free lists
 * through buddy_internal.h, is compaction.c's.
 *
 * Follows (sources read: mm/page_alloc.c at a v6.1-era commit of torvalds/linux,
 * mm/compaction.c of a v6.6-era tree, mm/khugepaged.c; the rules used here are
 * the same in 6.1 through 6.14):
 *  - free_area[order].free_list[migratetype] for UNMOVABLE, MOVABLE, RECLAIMABLE;
 *    a pageblock (pageblock_order 9, 2 MiB) has a type, MOVABLE at boot.
 *  - __rmqueue(): __rmqueue_smallest() takes the head of the requested type's list
 *    at the smallest order and expand()s the upper halves onto that type's lists;
 *    if that fails __rmqueue_fallback() scans the other types in fallbacks[] order
 *    from the LARGEST order down (a MOVABLE request that may not steal the whole
 *    block takes the smallest instead) and steal_suitable_fallback() moves the
 *    block to the requested type. Whole-block claim: a block of order >= 9 changes
 *    the type of every pageblock it covers; a smaller one, when
 *    can_steal_fallback() allows (order >= pageblock_order / 2 = 4, or an
 *    UNMOVABLE/RECLAIMABLE request), moves every free page of its pageblock to the
 *    requested type (move_freepages_block()) and relabels the pageblock if
 *    free + alike >= 1 << (pageblock_order - 1) = 256 pages, half the block
 *    ("alike": allocated MOVABLE pages for a MOVABLE request; for the others the
 *    non-free non-movable pages if the block was MOVABLE, else 0). This is the
 *    v4.12..v6.14 rule (commit 02aa0cdd72483 "mm, page_alloc: count movable pages
 *    when stealing from pageblock"); v6.15 rewrote it as try_to_claim_block().
 *  - __free_one_page(): merge with the buddy at pfn ^ (1 << order) (these three
 *    types always merge), the result on the list of the freed page's pageblock
 *    type, at the head.
 *  - Watermarks: __setup_per_zone_wmarks(), calculate_min_free_kbytes(), khugepaged's
 *    set_recommended_min_free_kbytes(), __zone_watermark_ok().
 *
 * Leaves out: per-CPU page lists (pages go straight to and from the buddy lists),
 * HIGHATOMIC/CMA/ISOLATE types, page_group_by_mobility_disabled (the kernel turns
 * grouping off below ~3000 pages; the model always groups), ALLOC_NOFRAGMENT (it
 * needs a second zone), watermark boosting after fallbacks, lowmem_reserve (one
 * zone), the "buddy of the next order is free: add to tail" heuristic and
 * shuffling.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buddy.h"
#include "buddy_internal.h"

/* mm/page_alloc.c fallbacks[]: where each type goes when its own lists are empty */
static const uint8_t fallbacks[MIGRATE_PCPTYPES][2] = {
	[MIGRATE_UNMOVABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE },
	[MIGRATE_MOVABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
	[MIGRATE_RECLAIMABLE] = { MIGRATE_UNMOVABLE, MIGRATE_MOVABLE },
};

static inline bool lazy_left(const struct buddy *b)
{
	return b->lazy_next < b->nr_pages;
}

static void __list_add(struct buddy *b, pfn_t pfn, unsigned order, int mt, bool tail)
{
	uint32_t *head = &b->free_area[order].free_list[mt];
	struct buddy_page *p = &b->pages[pfn];

	p->flags = BP_BUDDY;
	p->order = (int8_t)order;
	p->mt = (uint8_t)mt;
	if (*head == BUDDY_NIL) {
		p->next = p->prev = (uint32_t)pfn;
		*head = (uint32_t)pfn;
	} else {
		struct buddy_page *h = &b->pages[*head];
		uint32_t last = h->prev;

		p->next = *head;
		p->prev = last;
		b->pages[last].next = (uint32_t)pfn;
		h->prev = (uint32_t)pfn;
		if (!tail)
			*head = (uint32_t)pfn;
	}
	b->free_area[order].nr_free++;
}

/* Link the next implicit boot block at the tail of its list, where it logically is. */
void buddy_lazy_link_one(struct buddy *b)
{
	pfn_t pfn = b->lazy_next;

	b->lazy_next += BOOT_BLOCK_PAGES;
	b->free_area[MAX_PAGE_ORDER].nr_free--; /* __list_add counts it again */
	__list_add(b, pfn, MAX_PAGE_ORDER, MIGRATE_MOVABLE, true);
}

static void list_add(struct buddy *b, pfn_t pfn, unsigned order, int mt, bool tail)
{
	/* the implicit blocks are the tail: anything added behind them links them first */
	if (unlikely(tail && order == MAX_PAGE_ORDER && mt == MIGRATE_MOVABLE))
		while (lazy_left(b))
			buddy_lazy_link_one(b);
	__list_add(b, pfn, order, mt, tail);
}

void buddy_list_del(struct buddy *b, pfn_t pfn, unsigned order)
{
	struct buddy_page *p = &b->pages[pfn];
	uint32_t *head = &b->free_area[order].free_list[p->mt];

	if (p->next == (uint32_t)pfn) {
		*head = BUDDY_NIL;
	} else {
		b->pages[p->prev].next = p->next;
		b->pages[p->next].prev = p->prev;
		if (*head == (uint32_t)pfn)
			*head = p->next;
	}
	p->flags = 0;
	p->order = 0;
	p->mt = 0;
	b->free_area[order].nr_free--;
}

/* move_to_free_list(): to the tail of @mt's list */
static void list_move_tail(struct buddy *b, pfn_t pfn, unsigned order, int mt)
{
	buddy_list_del(b, pfn, order);
	list_add(b, pfn, order, mt, true);
}

/* free_area_empty() */
bool buddy_area_empty(const struct buddy *b, unsigned o, int mt)
{
	return b->free_area[o].free_list[mt] == BUDDY_NIL &&
	       !(o == MAX_PAGE_ORDER && mt == MIGRATE_MOVABLE && lazy_left(b));
}

/* get_page_from_free_area(): the head of free_list[@mt], or PFN_NONE */
static pfn_t area_first(struct buddy *b, unsigned o, int mt)
{
	if (b->free_area[o].free_list[mt] == BUDDY_NIL) {
		if (o != MAX_PAGE_ORDER || mt != MIGRATE_MOVABLE || !lazy_left(b))
			return PFN_NONE;
		buddy_lazy_link_one(b);
	}
	return b->free_area[o].free_list[mt];
}

/* Order of the free block headed at @pfn (the implicit boot blocks included), or -1. */
int buddy_free_head_order(const struct buddy *b, pfn_t pfn)
{
	if (pfn >= b->lazy_next)
		return (pfn & (BOOT_BLOCK_PAGES - 1)) ? -1 : MAX_PAGE_ORDER;
	if (b->pages[pfn].flags & BP_BUDDY)
		return b->pages[pfn].order;
	return -1;
}


/* ---- watermarks ---- */

/* floor(sqrt(x)), digit by digit (lib/math/int_sqrt.c computes the same value) */
static uint64_t int_sqrt(uint64_t x)
{
	uint64_t r = 0, bit = 1ULL << 62;

	while (bit > x)
		bit >>= 2;
	for (; bit; bit >>= 2) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	return r;
}

/* nr_free_buffer_pages(): managed pages above the high watermark (one zone) */
static uint64_t nr_free_buffer_pages(const struct buddy *b)
{
	uint64_t high = b->watermark[WMARK_HIGH];

	return b->nr_pages > high ? b->nr_pages - high : 0;
}

/* calculate_min_free_kbytes() (no user-set value) */
static void calculate_min_free_kbytes(struct buddy *b)
{
	uint64_t lowmem_kbytes = nr_free_buffer_pages(b) * (PAGE_SIZE >> 10);
	uint64_t v = int_sqrt(lowmem_kbytes * 16);

	b->min_free_kbytes = (int)(v < 128 ? 128 : v > 262144 ? 262144 : v);
}

/* __setup_per_zone_wmarks() for one lowmem zone holding every page */
static void setup_per_zone_wmarks(struct buddy *b)
{
	uint64_t pages_min = (uint64_t)b->min_free_kbytes >> (PAGE_SHIFT - 10);
	uint64_t managed = b->nr_pages, f = (uint64_t)b->watermark_scale_factor;
	/* mult_frac(managed, watermark_scale_factor, 10000) */
	uint64_t scaled = managed / 10000 * f + managed % 10000 * f / 10000;
	uint64_t tmp = pages_min; /* pages_min * managed / lowmem_pages, one zone */
	uint64_t delta = tmp >> 2 > scaled ? tmp >> 2 : scaled;

	b->watermark[WMARK_MIN] = tmp;
	b->watermark[WMARK_LOW] = tmp + delta;
	b->watermark[WMARK_HIGH] = tmp + 2 * delta;
	b->watermark[WMARK_PROMO] = tmp + 3 * delta;
}

uint64_t buddy_watermark(const struct buddy *b, int mark)
{
	BUG_ON(mark < 0 || mark >= NR_WMARK);
	return b->watermark[mark];
}

void buddy_set_thp_enabled(struct buddy *b, bool enabled)
{
	uint64_t rec, nr_zones = 1;

	b->thp_enabled = enabled;
	if (!enabled) {
		calculate_min_free_kbytes(b);
		goto update_wmarks;
	}
	/* 2 free pageblocks, plus MIGRATE_PCPTYPES^2 for fallbacks, per zone */
	rec = PAGEBLOCK_NR_PAGES * nr_zones * 2;
	rec += PAGEBLOCK_NR_PAGES * nr_zones * MIGRATE_PCPTYPES * MIGRATE_PCPTYPES;
	/* never more than 5% of lowmem */
	if (rec > nr_free_buffer_pages(b) / 20)
		rec = nr_free_buffer_pages(b) / 20;
	rec <<= PAGE_SHIFT - 10;
	if (rec > (uint64_t)b->min_free_kbytes)
		b->min_free_kbytes = (int)rec;
update_wmarks:
	setup_per_zone_wmarks(b);
}

/* __zone_watermark_ok() without reserves (no highatomic, CMA or lowmem_reserve) */
bool buddy_zone_watermark_ok(const struct buddy *b, unsigned order, uint64_t mark)
{
	int64_t free_pages = (int64_t)b->nr_free_pages - (int64_t)((1UL << order) - 1);

	if (free_pages <= (int64_t)mark)
		return false;
	if (!order)
		return true;
	for (unsigned o = order; o < NR_PAGE_ORDERS; o++) {
		if (!b->free_area[o].nr_free)
			continue;
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			if (!buddy_area_empty(b, o, mt))
				return true;
	}
	return false;
}

bool buddy_watermark_ok(const struct buddy *b, unsigned order, int mark)
{
	BUG_ON(order > MAX_PAGE_ORDER);
	return buddy_zone_watermark_ok(b, order, buddy_watermark(b, mark));
}

/* ---- setup ---- */

int buddy_init(struct buddy *b, uint64_t bytes)
{
	size_t len;

	memset(b, 0, sizeof(*b));
	b->nr_pages = bytes >> PAGE_SHIFT;
	BUG_ON(b->nr_pages % BOOT_BLOCK_PAGES || b->nr_pages >= BUDDY_NIL);
	/* mmap'd, so frames the run never touches cost no host memory */
	len = b->nr_pages * sizeof(*b->pages);
	b->pages = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->pages == MAP_FAILED) {
		b->pages = NULL;
		return -1;
	}
	b->pageblock_mt = malloc(b->nr_pages >> PAGEBLOCK_ORDER);
	if (!b->pageblock_mt) {
		munmap(b->pages, len);
		b->pages = NULL;
		return -1;
	}
	memset(b->pageblock_mt, MIGRATE_MOVABLE, b->nr_pages >> PAGEBLOCK_ORDER);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			b->free_area[o].free_list[mt] = BUDDY_NIL;
	b->lazy_next = 0;
	b->free_area[MAX_PAGE_ORDER].nr_free = b->nr_pages >> MAX_PAGE_ORDER;
	b->nr_free_pages = b->nr_pages;
	b->watermark_scale_factor = WATERMARK_SCALE_FACTOR_DEFAULT;
	b->extfrag_threshold = EXTFRAG_THRESHOLD_DEFAULT;
	/* init_per_zone_wmark_min(), THP off until buddy_set_thp_enabled() */
	calculate_min_free_kbytes(b);
	setup_per_zone_wmarks(b);
	return 0;
}

void buddy_destroy(struct buddy *b)
{
	if (b->pages)
		munmap(b->pages, b->nr_pages * sizeof(*b->pages));
	free(b->pageblock_mt);
	memset(b, 0, sizeof(*b));
}

/* ---- allocation ---- */

/* expand(): keep the low half, give the high halves to @mt's lists */
static void expand(struct buddy *b, pfn_t pfn, unsigned low, unsigned high, int mt)
{
	while (high > low) {
		high--;
		list_add(b, pfn + (1UL << high), high, mt, false);
	}
}

static pfn_t rmqueue_smallest(struct buddy *b, unsigned order, int mt)
{
	for (unsigned o = order; o < NR_PAGE_ORDERS; o++) {
		pfn_t pfn;

		if (!b->free_area[o].nr_free)
			continue;
		pfn = area_first(b, o, mt);
		if (pfn == PFN_NONE)
			continue;
		buddy_list_del(b, pfn, o);
		expand(b, pfn, order, o, mt);
		return pfn;
	}
	return PFN_NONE;
}

static bool can_steal_fallback(unsigned order, int start_mt)
{
	if (order >= PAGEBLOCK_ORDER)
		return true;
	return order >= PAGEBLOCK_ORDER / 2 || start_mt == MIGRATE_RECLAIMABLE ||
	       start_mt == MIGRATE_UNMOVABLE;
}

/* buddy_find_suitable_fallback() */
int buddy_find_suitable_fallback(const struct buddy *b, unsigned order, int mt,
				  bool only_stealable, bool *can_steal)
{
	if (!b->free_area[order].nr_free)
		return -1;
	*can_steal = false;
	for (unsigned i = 0; i < ARRAY_SIZE(fallbacks[0]); i++) {
		int fmt = fallbacks[mt][i];

		if (buddy_area_empty(b, order, fmt))
			continue;
		if (can_steal_fallback(order, mt))
			*can_steal = true;
		if (!only_stealable || *can_steal)
			return fmt;
	}
	return -1;
}

/*
 * move_freepages_block(): every free block in @pfn's pageblock to the tail of
 * @mt's lists; *@movable counts the frames of allocated MOVABLE blocks (PageLRU).
 */
static uint64_t move_freepages_block(struct buddy *b, pfn_t pfn, int mt, uint64_t *movable)
{
	pfn_t start = pfn & ~(PAGEBLOCK_NR_PAGES - 1), end = start + PAGEBLOCK_NR_PAGES;
	uint64_t moved = 0;
	pfn_t head10 = start & ~(BOOT_BLOCK_PAGES - 1);

	*movable = 0;
	/* the second half of an allocated order-10 block: all tails */
	if (!b->pages[start].flags && (b->pages[head10].flags & BP_HEAD) &&
	    b->pages[head10].order == MAX_PAGE_ORDER) {
		if (b->pages[head10].mt == MIGRATE_MOVABLE)
			*movable = PAGEBLOCK_NR_PAGES;
		return 0;
	}
	for (pfn_t f = start; f < end;) {
		struct buddy_page *p = &b->pages[f];
		unsigned n;

		if (p->flags & BP_BUDDY) {
			n = 1U << p->order;
			list_move_tail(b, f, p->order, mt);
			moved += n;
		} else if (p->flags & BP_HEAD) {
			n = 1U << p->order;
			if (p->mt == MIGRATE_MOVABLE)
				*movable += n < PAGEBLOCK_NR_PAGES ? n : PAGEBLOCK_NR_PAGES;
		} else {
			n = 1;
		}
		f += n;
	}
	return moved;
}

static void steal_suitable_fallback(struct buddy *b, pfn_t pfn, int start_type, bool whole_block)
{
	unsigned cur = (unsigned)b->pages[pfn].order;
	int old_block_type = *buddy_pb_mt(b, pfn);
	uint64_t free_pages, movable_pages, alike_pages;

	/* take ownership for orders >= pageblock_order */
	if (cur >= PAGEBLOCK_ORDER) {
		for (pfn_t f = pfn; f < pfn + (1UL << cur); f += PAGEBLOCK_NR_PAGES)
			*buddy_pb_mt(b, f) = (uint8_t)start_type;
		goto single_page;
	}
	if (!whole_block)
		goto single_page;
	free_pages = move_freepages_block(b, pfn, start_type, &movable_pages);
	if (start_type == MIGRATE_MOVABLE)
		alike_pages = movable_pages;
	else if (old_block_type == MIGRATE_MOVABLE)
		alike_pages = PAGEBLOCK_NR_PAGES - (free_pages + movable_pages);
	else
		alike_pages = 0;
	if (!free_pages)
		goto single_page;
	if (free_pages + alike_pages >= 1UL << (PAGEBLOCK_ORDER - 1))
		*buddy_pb_mt(b, pfn) = (uint8_t)start_type;
	return;

single_page:
	list_move_tail(b, pfn, cur, start_type);
}

static bool rmqueue_fallback(struct buddy *b, unsigned order, int start_mt)
{
	bool can_steal = false;
	int o, fmt = -1;

	/* largest first: roughly the pageblock with the most free pages */
	for (o = MAX_PAGE_ORDER; o >= (int)order; o--) {
		fmt = buddy_find_suitable_fallback(b, (unsigned)o, start_mt, false, &can_steal);
		if (fmt == -1)
			continue;
		/* a movable request that cannot take the block takes the smallest page */
		if (!can_steal && start_mt == MIGRATE_MOVABLE && o > (int)order)
			goto find_smallest;
		goto do_steal;
	}
	return false;

find_smallest:
	for (o = (int)order; o < NR_PAGE_ORDERS; o++) {
		fmt = buddy_find_suitable_fallback(b, (unsigned)o, start_mt, false, &can_steal);
		if (fmt != -1)
			break;
	}
	BUG_ON(o == NR_PAGE_ORDERS);

do_steal:
	steal_suitable_fallback(b, area_first(b, (unsigned)o, fmt), start_mt, can_steal);
	return true;
}

pfn_t buddy_alloc_mt(struct buddy *b, unsigned order, int mt)
{
	pfn_t pfn;

	BUG_ON(order > MAX_PAGE_ORDER || mt < 0 || mt >= MIGRATE_PCPTYPES);
	while ((pfn = rmqueue_smallest(b, order, mt)) == PFN_NONE)
		if (!rmqueue_fallback(b, order, mt))
			return PFN_NONE;
	b->pages[pfn].flags = BP_HEAD;
	b->pages[pfn].order = (int8_t)order;
	b->pages[pfn].mt = (uint8_t)mt;
	b->nr_free_pages -= 1UL << order;
	return pfn;
}

pfn_t buddy_alloc(struct buddy *b, unsigned order)
{
	return buddy_alloc_mt(b, order, MIGRATE_MOVABLE);
}

/* __free_one_page() of a block whose head flags are already cleared */
void buddy_free_one_page(struct buddy *b, pfn_t pfn, unsigned order)
{
	int mt = *buddy_pb_mt(b, pfn);

	b->nr_free_pages += 1UL << order;
	while (order < MAX_PAGE_ORDER) {
		pfn_t buddy = pfn ^ (1UL << order);
		struct buddy_page *bp = &b->pages[buddy];

		if (buddy >= b->nr_pages || !(bp->flags & BP_BUDDY) || (unsigned)bp->order != order)
			break;
		buddy_list_del(b, buddy, order);
		pfn &= ~(1UL << order);
		order++;
	}
	list_add(b, pfn, order, mt, false);
}

void buddy_free(struct buddy *b, pfn_t pfn, unsigned order)
{
	BUG_ON(pfn >= b->nr_pages || (pfn & ((1UL << order) - 1)));
	BUG_ON(b->pages[pfn].flags != BP_HEAD || (unsigned)b->pages[pfn].order != order);
	b->pages[pfn].flags = 0;
	b->pages[pfn].mt = 0;
	buddy_free_one_page(b, pfn, order);
}

bool buddy_is_allocated(const struct buddy *b, pfn_t pfn, unsigned *order)
{
	if (pfn >= b->nr_pages || !(b->pages[pfn].flags & BP_HEAD))
		return false;
	if (order)
		*order = (unsigned)b->pages[pfn].order;
	return true;
}

int buddy_pageblock_mt(const struct buddy *b, pfn_t pfn)
{
	BUG_ON(pfn >= b->nr_pages);
	return *buddy_pb_mt(b, pfn);
}

/* ---- fragmentation indices (mm/vmstat.c) ---- */

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

/* ---- fragmentation at start ---- */

/* splitmix64 (Steele, Lea, Flood, OOPSLA 2014): any seed, 0 included */
static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Allocate exactly frame @pfn as an order-0 page; the split-off pieces go to the
 * lists of the pageblocks holding them. */
static void take_frame(struct buddy *b, pfn_t pfn)
{
	unsigned o;
	pfn_t head = pfn;

	while (b->lazy_next <= pfn)
		buddy_lazy_link_one(b);
	for (o = 0; o < NR_PAGE_ORDERS; o++) {
		head = pfn & ~((1UL << o) - 1);
		if ((b->pages[head].flags & BP_BUDDY) && (unsigned)b->pages[head].order == o)
			break;
	}
	BUG_ON(o == NR_PAGE_ORDERS);
	buddy_list_del(b, head, o);
	while (o > 0) {
		pfn_t half;

		o--;
		if (pfn >= head + (1UL << o)) {
			half = head;
			head += 1UL << o;
		} else {
			half = head + (1UL << o);
		}
		list_add(b, half, o, *buddy_pb_mt(b, half), false);
	}
	b->nr_free_pages--;
}

/* True if the pageblock at @pb lies wholly in one free block (lazy or linked). */
static bool pageblock_free(const struct buddy *b, pfn_t pb)
{
	if (pb >= b->lazy_next)
		return true; /* not handed out since boot */
	for (unsigned o = PAGEBLOCK_ORDER; o < NR_PAGE_ORDERS; o++) {
		pfn_t head = pb & ~((1UL << o) - 1);

		if ((b->pages[head].flags & BP_BUDDY) && (unsigned)b->pages[head].order == o)
			return true;
	}
	return false;
}

int buddy_fragment(struct buddy *b, double unmovable_share, uint64_t seed)
{
	uint64_t nr_pb = b->nr_pages >> PAGEBLOCK_ORDER, nr_free = 0, k, s = seed;
	uint32_t *idx;

	if (!(unmovable_share >= 0.0 && unmovable_share <= 1.0))
		return -1;
	idx = malloc((nr_pb ? nr_pb : 1) * sizeof(*idx));
	if (!idx)
		return -1;
	for (uint64_t i = 0; i < nr_pb; i++)
		if (pageblock_free(b, (pfn_t)i << PAGEBLOCK_ORDER))
			idx[nr_free++] = (uint32_t)i;
	k = (uint64_t)(unmovable_share * (double)nr_free + 0.5); /* round half up */
	if (!k) {
		free(idx);
		return 0;
	}
	nr_pb = nr_free; /* the candidates: the wholly free pageblocks, ascending */
	/* partial Fisher-Yates: the first k entries are k distinct pageblocks */
	for (uint64_t i = 0; i < k; i++) {
		uint64_t j = i + splitmix64(&s) % (nr_pb - i);
		uint32_t t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
	}
	qsort(idx, k, sizeof(*idx), cmp_u32);
	for (uint64_t i = 0; i < k; i++) {
		pfn_t pb = (pfn_t)idx[i] << PAGEBLOCK_ORDER;
		pfn_t pfn = pb + splitmix64(&s) % PAGEBLOCK_NR_PAGES;

		*buddy_pb_mt(b, pb) = MIGRATE_UNMOVABLE;
		take_frame(b, pfn);
		b->pages[pfn].flags = BP_HEAD | BP_PINNED;
		b->pages[pfn].order = 0;
		b->pages[pfn].mt = MIGRATE_UNMOVABLE;
		b->nr_pinned++;
	}
	free(idx);
	return (int)k;
}

/* ---- invariants ---- */

void buddy_check_invariants(const struct buddy *b)
{
	uint64_t total = 0, pinned = 0, allocated = 0;
	uint8_t *seen = calloc((b->nr_pages + 7) / 8, 1);
	uint64_t lazy = (b->nr_pages - b->lazy_next) >> MAX_PAGE_ORDER;

	BUG_ON(!seen);
	BUG_ON(b->lazy_next % BOOT_BLOCK_PAGES || b->lazy_next > b->nr_pages);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++) {
		const struct free_area *fa = &b->free_area[o];
		uint64_t n = 0;

		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++) {
			uint32_t p = fa->free_list[mt];

			if (p == BUDDY_NIL)
				continue;
			do {
				const struct buddy_page *bp = &b->pages[p];
				pfn_t buddy = (pfn_t)p ^ (1UL << o);

				BUG_ON(p >= b->lazy_next);
				BUG_ON(!(bp->flags & BP_BUDDY) || (unsigned)bp->order != o);
				BUG_ON(bp->mt != mt);
				BUG_ON(p & ((1UL << o) - 1));
				BUG_ON(b->pages[bp->next].prev != p);
				for (pfn_t f = p; f < (pfn_t)p + (1UL << o); f++) {
					BUG_ON(seen[f / 8] & (1 << (f % 8)));
					seen[f / 8] |= (uint8_t)(1 << (f % 8));
					BUG_ON(f != p && b->pages[f].flags);
				}
				if (o < MAX_PAGE_ORDER && buddy < b->nr_pages)
					BUG_ON((b->pages[buddy].flags & BP_BUDDY) &&
					       (unsigned)b->pages[buddy].order == o);
				n++;
				BUG_ON(n > b->nr_pages);
				p = bp->next;
			} while (p != fa->free_list[mt]);
		}
		if (o == MAX_PAGE_ORDER)
			n += lazy;
		BUG_ON(n != fa->nr_free);
		total += n << o;
	}
	BUG_ON(total != b->nr_free_pages);
	for (pfn_t pb = 0; pb < b->nr_pages >> PAGEBLOCK_ORDER; pb++) {
		BUG_ON(b->pageblock_mt[pb] >= MIGRATE_PCPTYPES);
		BUG_ON((pb << PAGEBLOCK_ORDER) >= b->lazy_next &&
		       b->pageblock_mt[pb] != MIGRATE_MOVABLE);
	}
	/* every frame below the implicit blocks is in a free block or an allocated one */
	for (pfn_t f = 0; f < b->lazy_next;) {
		const struct buddy_page *p = &b->pages[f];
		pfn_t n;

		if (seen[f / 8] & (1 << (f % 8))) {
			f += 1UL << p->order; /* a free head: its block was checked above */
			continue;
		}
		BUG_ON(!(p->flags & BP_HEAD) || (p->flags & BP_BUDDY));
		BUG_ON(p->order < 0 || p->order > MAX_PAGE_ORDER || p->mt >= MIGRATE_PCPTYPES);
		n = 1UL << p->order;
		BUG_ON(f & (n - 1));
		if (p->flags & BP_PINNED) {
			BUG_ON(p->order != 0 || p->mt != MIGRATE_UNMOVABLE);
			pinned++;
		}
		for (pfn_t t = f + 1; t < f + n; t++)
			BUG_ON(b->pages[t].flags || (seen[t / 8] & (1 << (t % 8))));
		allocated += n;
		f += n;
	}
	BUG_ON(pinned != b->nr_pinned);
	BUG_ON(allocated + b->nr_free_pages != b->nr_pages);
	for (pfn_t f = b->lazy_next; f < b->nr_pages; f += BOOT_BLOCK_PAGES)
		BUG_ON(b->pages[f].flags || (seen[f / 8] & (1 << (f % 8))));
	free(seen);
}
