/*
 * buddy.h - physical memory: the binary buddy allocator of mm/page_alloc.c with
 * migrate types per pageblock and watermarks, modelled on Linux 6.6 (direct
 * compaction of these lists: compaction.h).
 *
 * One zone of `nr_pages` 4 KiB frames, free_area[order].free_list[migratetype] for
 * orders 0..MAX_PAGE_ORDER (10) and the three PCP migrate types, merging with the
 * buddy at pfn ^ (1 << order). Knows only frames: nothing of page tables, VMAs or
 * TLBs; compaction moves a page through a callback the simulator provides.
 */
#ifndef MMUSIM_BUDDY_H
#define MMUSIM_BUDDY_H

#include "types.h"

#define MAX_PAGE_ORDER 10
#define NR_PAGE_ORDERS (MAX_PAGE_ORDER + 1)
#define PAGE_ALLOC_COSTLY_ORDER 3 /* include/linux/mmzone.h */

/* include/linux/pageblock-flags.h: min(HPAGE_PMD_ORDER, MAX_PAGE_ORDER) on x86-64 */
#define PAGEBLOCK_ORDER 9
#define PAGEBLOCK_NR_PAGES (1UL << PAGEBLOCK_ORDER)

/* include/linux/mmzone.h: the per-cpu-list migrate types (MIGRATE_PCPTYPES = 3) */
enum migratetype {
	MIGRATE_UNMOVABLE,
	MIGRATE_MOVABLE,
	MIGRATE_RECLAIMABLE,
	MIGRATE_PCPTYPES,
};

/* Per-frame state (the part of struct page this model needs). */
struct buddy_page {
	uint32_t next, prev; /* free-list links (frame numbers) while a free block head */
	int8_t order;        /* free block head: its order; allocated head: its order */
	uint8_t flags;       /* BP_* */
	uint8_t mt;          /* free head: the list it is on; allocated head: its type */
	uint8_t pad;
};

#define BP_BUDDY 0x01  /* head of a free block (PageBuddy) */
#define BP_HEAD 0x02   /* head of an allocated block */
#define BP_PINNED 0x04 /* with BP_HEAD: pinned by buddy_fragment(), never moved or freed */

struct free_area {
	uint32_t free_list[MIGRATE_PCPTYPES]; /* list heads, BUDDY_NIL when empty */
	uint64_t nr_free;                     /* blocks of this order, all types */
};

#define BUDDY_NIL UINT32_MAX

/* include/linux/mmzone.h enum zone_watermarks */
enum zone_watermarks { WMARK_MIN, WMARK_LOW, WMARK_HIGH, WMARK_PROMO, NR_WMARK };

/* mm/page_alloc.c: watermark_scale_factor default (0.1% of the zone) */
#define WATERMARK_SCALE_FACTOR_DEFAULT 10
/* mm/compaction.c: sysctl_extfrag_threshold default */
#define EXTFRAG_THRESHOLD_DEFAULT 500

struct buddy {
	struct buddy_page *pages;
	uint64_t nr_pages;
	/*
	 * Boot hands every order-10 block to the tail of free_area[10]'s MOVABLE list
	 * in ascending order; those never taken yet are kept implicit: the blocks from
	 * lazy_next up are the list's tail, counted in nr_free but not linked, so a run
	 * touches the metadata of the memory it uses only (startup 7.1 -> 3.2 ms at
	 * 4 GiB). Their pageblocks are MOVABLE and untouched.
	 */
	pfn_t lazy_next;
	uint64_t nr_free_pages;
	uint64_t nr_pinned; /* pages pinned by buddy_fragment() */
	struct free_area free_area[NR_PAGE_ORDERS];
	uint8_t *pageblock_mt; /* enum migratetype per pageblock (nr_pages >> 9 entries) */

	/* watermarks (mm/page_alloc.c __setup_per_zone_wmarks), in pages */
	int min_free_kbytes;
	int watermark_scale_factor;
	bool thp_enabled;
	uint64_t watermark[NR_WMARK];

	/* deferred compaction state of the zone (mm/compaction.c) */
	unsigned compact_considered;
	unsigned compact_defer_shift;
	int compact_order_failed;
	int extfrag_threshold; /* vm.extfrag_threshold, 0..1000 */
};

/*
 * Set up @bytes of memory (a multiple of 4 MiB, < 16 TiB), all free, handed to the
 * allocator in ascending order at the tail of the lists as __free_pages_core()
 * does at boot (FPI_TO_TAIL, Linux 5.10+), so the lowest block is allocated first.
 * Every pageblock starts MOVABLE; watermarks are set as at boot with THP off
 * (init_per_zone_wmark_min); extfrag_threshold 500. Returns 0, or -1 if the host
 * is out of memory.
 */
int buddy_init(struct buddy *b, uint64_t bytes);
void buddy_destroy(struct buddy *b);

/*
 * __rmqueue(): __rmqueue_smallest() on free_list[@mt] (the first block of the
 * smallest order >= @order, the rest split back with expand() onto @mt's lists);
 * if none, __rmqueue_fallback() steals per fallbacks[] and retries. The block
 * records @mt (compaction moves MOVABLE order-0 pages only). Returns the first
 * frame, or PFN_NONE if no block is large enough (an expected outcome, not an
 * error). Watermarks are not checked here: that is buddy_watermark_ok()'s job.
 */
pfn_t buddy_alloc_mt(struct buddy *b, unsigned order, int mt);

/* buddy_alloc_mt(b, order, MIGRATE_MOVABLE): user pages, THPs. */
pfn_t buddy_alloc(struct buddy *b, unsigned order);

/*
 * __free_one_page(): free the allocated block at @pfn of @order onto the list of
 * its pageblock's migrate type, merging with free buddies. Pinned pages must not
 * be freed.
 */
void buddy_free(struct buddy *b, pfn_t pfn, unsigned order);

/* True if @pfn is the head of an allocated block. */
bool buddy_is_allocated(const struct buddy *b, pfn_t pfn, unsigned *order);

/* The migrate type of the pageblock holding @pfn. */
int buddy_pageblock_mt(const struct buddy *b, pfn_t pfn);

/*
 * Fragmentation index of mm/vmstat.c (__fragmentation_index) for @order, times
 * 1000: -1000 if a block of that order is free, else 0..1000.
 */
int buddy_fragmentation_index(const struct buddy *b, unsigned order);

/* unusable_free_index() of mm/vmstat.c for @order, times 1000. */
int buddy_unusable_index(const struct buddy *b, unsigned order);

/*
 * Fragment memory at start: a seeded splitmix64 stream picks
 * round(@unmovable_share * N) distinct pageblocks among the N that are wholly free
 * (all of memory, unless a boot-time hugetlb pool took some first); in each one
 * order-0 frame at a seeded offset is allocated UNMOVABLE and pinned forever, and
 * the pageblock becomes UNMOVABLE (the rest of it stays free, on the UNMOVABLE
 * lists). Deterministic for a given @seed and free memory. Returns the number of
 * pages pinned, or -1 if @unmovable_share is not in [0, 1] or memory ran out.
 */
int buddy_fragment(struct buddy *b, double unmovable_share, uint64_t seed);

/*
 * Watermark @mark (enum zone_watermarks) in pages. With min_free_kbytes =
 * clamp(int_sqrt(lowmem_kB * 16), 128, 262144) and one zone holding all memory:
 * MIN = min_free_kbytes / 4; delta = max(MIN / 4, nr_pages * scale_factor / 10000);
 * LOW = MIN + delta, HIGH = LOW + delta, PROMO = HIGH + delta.
 */
uint64_t buddy_watermark(const struct buddy *b, int mark);

/*
 * khugepaged's set_recommended_min_free_kbytes(): with THP enabled, raise
 * min_free_kbytes to (2 + 3 * 3) pageblocks per zone (one zone here), capped at
 * 5% of the pages above the high watermark; with THP disabled recompute it from
 * memory size. Watermarks are recomputed either way.
 */
void buddy_set_thp_enabled(struct buddy *b, bool enabled);

/*
 * __zone_watermark_ok(): free pages minus (2^@order - 1) must be above watermark
 * @mark, and for @order > 0 a free block of at least @order must exist on an
 * UNMOVABLE, MOVABLE or RECLAIMABLE list.
 */
bool buddy_watermark_ok(const struct buddy *b, unsigned order, int mark);

/*
 * Lists well formed, every listed block a BP_BUDDY head of its order and list's
 * type, aligned, in range, not overlapping another free block, and not buddies of
 * each other at the same order (they would have merged); nr_free and
 * nr_free_pages match; every pageblock type valid and the lazy ones MOVABLE;
 * every allocated head of a valid type and aligned; pinned pages allocated,
 * order 0, UNMOVABLE, and counted. Aborts.
 */
void buddy_check_invariants(const struct buddy *b);

#endif
