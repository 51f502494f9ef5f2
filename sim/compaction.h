/*
 * compaction.h - direct compaction of the zone (Linux 6.6 mm/compaction.c
 * try_to_compact_pages(), compact_zone()); page_alloc.c drives it for an
 * allocation (__alloc_pages_direct_compact()). See compaction.c.
 */
#ifndef MMUSIM_COMPACTION_H
#define MMUSIM_COMPACTION_H

#include "buddy.h"

struct kernel;

/* include/linux/compaction.h enum compact_result (Linux 6.6 order and names) */
enum compact_result {
	COMPACT_NOT_SUITABLE_ZONE, /* fragindex <= extfrag_threshold: lack of memory */
	COMPACT_SKIPPED,           /* order-0 free pages below the watermark + gap */
	COMPACT_DEFERRED,          /* backed off after earlier failures */
	COMPACT_NO_SUITABLE_PAGE,  /* internal to the kernel; not returned */
	COMPACT_CONTINUE,          /* internal; not returned */
	COMPACT_COMPLETE,          /* the scanners met without a free block: failure */
	COMPACT_PARTIAL_SKIPPED,   /* not returned: every run here covers the whole zone */
	COMPACT_CONTENDED,         /* no free target left before the scanners met */
	COMPACT_SUCCESS,           /* a free block of the requested order exists */
};

/* include/linux/compaction.h enum compact_priority: how hard direct compaction tries */
enum compact_priority {
	COMPACT_PRIO_SYNC_FULL, /* free targets in any pageblock; never deferred */
	COMPACT_PRIO_SYNC_LIGHT,
	COMPACT_PRIO_ASYNC, /* first try: skips non-MOVABLE pageblocks as migration sources */
};

/* mm/compaction.c: COMPACT_MAX_DEFER_SHIFT (skip up to 64 attempts) */
#define COMPACT_MAX_DEFER_SHIFT 6

/*
 * Moves one allocated MOVABLE order-0 page from frame @from to the free frame @to
 * (already allocated to the caller's page): copies nothing, updates the page
 * table entry that maps it and invalidates its translations. Returns 0, or -1 if
 * the page cannot move (e.g. a page-table page); then @to is given back.
 */
struct buddy_migrate_ops {
	int (*migrate)(void *ctx, pfn_t from, pfn_t to);
	void *ctx;
};

/* What one buddy_compact() call did; the caller turns it into cycles and vmstat. */
struct compact_stats {
	uint64_t migrate_scanned; /* compact_migrate_scanned: frames the migrate scanner passed */
	uint64_t free_scanned;    /* compact_free_scanned: frames the free scanner passed */
	uint64_t isolated;        /* compact_isolated: sources + free targets isolated */
	uint64_t migrated;        /* pgmigrate_success: pages moved */
	uint64_t migrate_failed;  /* pgmigrate_fail: the callback refused */
	enum compact_result result;
};

/*
 * Direct compaction of the zone for one allocation of @order and migrate type @mt
 * (enum migratetype: MOVABLE for a THP, UNMOVABLE for the huge zero page) at
 * priority @prio (enum compact_priority), as try_to_compact_pages() with
 * compact_zone(): deferred check (not at SYNC_FULL), COMPACT_SUCCESS at once if
 * the MIN watermark already holds at @order, compaction_suitable() (order-0 free
 * > (order > 3 ? LOW : MIN) + 2 << order, else COMPACT_SKIPPED; for order > 3
 * 0 <= fragindex <= extfrag_threshold -> COMPACT_NOT_SUITABLE_ZONE), then the
 * migrate scanner from the bottom and the free scanner from the top until a free
 * block of @order exists (COMPACT_SUCCESS) or they meet (COMPACT_COMPLETE). Async
 * compaction takes migration sources only from pageblocks of the request's kind
 * (suitable_migration_source(): MOVABLE ones for a MOVABLE request, else those of
 * @mt). Defers on COMPLETE unless ASYNC; resets order_failed on SUCCESS. Fills
 * *@st if not NULL. compact_zone() reports NOT_SUITABLE_ZONE to its caller as
 * COMPACT_SKIPPED (sim_compact() does so); the caller counts compact_stall for
 * every other result, compact_success / compact_fail after its allocation, and on
 * success calls buddy_compaction_defer_reset(b, order, true).
 */
enum compact_result buddy_compact_mt(struct buddy *b, unsigned order, int mt, int prio,
				     const struct buddy_migrate_ops *ops, struct compact_stats *st);

/* buddy_compact_mt() for a MOVABLE request. */
enum compact_result buddy_compact(struct buddy *b, unsigned order, int prio,
				  const struct buddy_migrate_ops *ops, struct compact_stats *st);

/*
 * compaction_suitable() as vmscan.c asks it (compaction_ready(),
 * should_continue_reclaim()): COMPACT_CONTINUE if compaction of @order may run,
 * COMPACT_SKIPPED (too few order-0 pages above the watermark + compact_gap) or
 * COMPACT_NOT_SUITABLE_ZONE (fragindex says a failure is for lack of memory).
 */
enum compact_result buddy_compaction_suitable(const struct buddy *b, unsigned order);

/* compaction_defer_reset(): after an allocation of @order succeeded (or is expected to). */
void buddy_compaction_defer_reset(struct buddy *b, unsigned order, bool alloc_success);

/*
 * try_to_compact_pages() for an order-@order allocation of type @mt of @s, at
 * priority @prio (one run, as one __alloc_pages_direct_compact() call makes).
 * Pages move through the reverse map (their PTE is rewritten, the page shot
 * down). Charges the scan and copy cycles to khugepaged or to the application
 * (cyc_compaction). Returns the result, NOT_SUITABLE_ZONE reported as SKIPPED;
 * the counting (compact_stall, _success, _fail) is the caller's
 * (page_alloc.c).
 */
enum compact_result sim_compact(struct kernel *k, unsigned order, int mt, int prio);

#endif
