/*
 * page_alloc.c - how the kernel allocates a costly-order block (order > 3: a THP,
 * the huge zero page) when the free lists cannot give it at once, after Linux
 * 6.6 mm/page_alloc.c (the same in 6.1 through 6.12) as its stable lines ship
 * it (an os.kernel profile is a stable line: config.h, mmusim.1 KERNEL
 * VERSIONS): __alloc_pages(),
 * __alloc_pages_slowpath(), __alloc_pages_direct_compact(),
 * __alloc_pages_direct_reclaim(), gfp_to_alloc_flags().
 *
 * The path of one request:
 *  1. get_page_from_freelist() at the LOW watermark (the fast path: the order's
 *     __zone_watermark_ok(), then __rmqueue() with its fallbacks);
 *  2. __alloc_pages_slowpath(): again at the MIN watermark (ALLOC_WMARK_MIN);
 *     without __GFP_DIRECT_RECLAIM (GFP_TRANSHUGE_LIGHT) that is all: no
 *     compaction, no reclaim;
 *  3. __alloc_pages_direct_compact() at INIT_COMPACT_PRIORITY (async);
 *  4. with __GFP_NORETRY: a COMPACT_SKIPPED or COMPACT_DEFERRED result ends the
 *     request ("fail immediately", no reclaim); so does any result with
 *     __GFP_THISNODE (the local-node try of a THP fault: commit 9c9828d3ead6
 *     "mm, page_alloc, thp: prevent reclaim for __GFP_THISNODE THP
 *     allocations", release 6.19, a stable backport in 6.6.y, 6.12.y and
 *     6.18.y: the profiles 6.6, 6.12 and 6.18; not the 6.8 profile, whose
 *     line ended before it: kernel_thisnode_no_reclaim()); any other keeps the
 *     priority async;
 *  5. the retry label: the free lists at MIN, then __alloc_pages_direct_reclaim()
 *     (try_to_free_pages(): reclaim.c) and the free lists again;
 *  6. __alloc_pages_direct_compact() at DEF_COMPACT_PRIORITY (sync light), or
 *     async under __GFP_NORETRY;
 *  7. nopage: __GFP_NORETRY stops here, and so does a costly order without
 *     __GFP_RETRY_MAYFAIL (no THP allocation carries it), so no request loops.
 * __alloc_pages_direct_compact() counts compact_stall for every result but
 * COMPACT_SKIPPED - a deferred compaction, which scanned nothing, included -
 * then compact_success if the free lists (at MIN) give the block, with
 * compaction_defer_reset(), else compact_fail.
 *
 * Leaves out: the per-zone loop (one zone), ALLOC_NOFRAGMENT, the high-atomic
 * reserve and drain_all_pages() after a failed reclaim (no per-CPU lists),
 * compaction's page capture (the allocation after compaction takes the block
 * from the free lists instead: the same block, the same counts), and the wake-ups
 * of __GFP_KSWAPD_RECLAIM (defrag defer, defer+madvise): kswapd and kcompactd
 * woken for order 9 do not run here (kswapd runs only below the low watermark,
 * at order 0, see reclaim.c).
 */
#include "buddy_internal.h"
#include "compaction.h"
#include "page_alloc.h"
#include "reclaim.h"
#include "kernel.h"

/* get_page_from_freelist() on the one zone at watermark @mark (enum zone_watermarks) */
static pfn_t get_page_from_freelist(struct kernel *k, unsigned order, int mt, int mark)
{
	if (!buddy_watermark_ok(&k->buddy, order, mark))
		return PFN_NONE;
	return buddy_alloc_mt(&k->buddy, order, mt);
}

/* __alloc_pages_direct_compact(): one compaction run, then the free lists */
static pfn_t direct_compact(struct kernel *k, unsigned order, int mt, int prio,
			    enum compact_result *result)
{
	pfn_t pfn;

	*result = sim_compact(k, order, mt, prio);
	if (*result == COMPACT_SKIPPED)
		return PFN_NONE;
	/* at least one zone was not skipped (a deferred one counts): a stall */
	k->st->compact_stall++;
	pfn = get_page_from_freelist(k, order, mt, WMARK_MIN);
	if (pfn != PFN_NONE) {
		buddy_compaction_defer_reset(&k->buddy, order, true);
		k->st->compact_success++;
		return pfn;
	}
	k->st->compact_fail++;
	return PFN_NONE;
}

pfn_t sim_alloc_pages(struct kernel *k, unsigned order, gfp_t gfp)
{
	int mt = gfp & GFP_MOVABLE ? MIGRATE_MOVABLE : MIGRATE_UNMOVABLE;
	int prio = COMPACT_PRIO_SYNC_LIGHT; /* DEF_COMPACT_PRIORITY */
	enum compact_result result;
	pfn_t pfn;

	BUG_ON(!order || order > MAX_PAGE_ORDER);
	/* the fast path: ALLOC_WMARK_LOW */
	pfn = get_page_from_freelist(k, order, mt, WMARK_LOW);
	if (pfn != PFN_NONE)
		return pfn;
	/* __alloc_pages_slowpath(): gfp_to_alloc_flags() lowers the mark to MIN */
	pfn = get_page_from_freelist(k, order, mt, WMARK_MIN);
	if (pfn != PFN_NONE || !(gfp & GFP_DIRECT_RECLAIM))
		return pfn; /* "Caller is not willing to reclaim, we can't balance anything" */
	if (order <= PAGE_ALLOC_COSTLY_ORDER)
		goto retry; /* (an mTHP of 16K or 32K: reclaim before compaction) */
	/* a costly order compacts first: enough base pages may be free already */
	pfn = direct_compact(k, order, mt, COMPACT_PRIO_ASYNC, &result);
	if (pfn != PFN_NONE)
		return pfn;
	if (gfp & GFP_NORETRY) {
		/* below the low watermarks, or recently failed at this order: give up */
		if (result == COMPACT_SKIPPED || result == COMPACT_DEFERRED)
			return PFN_NONE;
		/* a THP fault's local-node try compacts, never reclaims (9c9828d3ead6,
		 * a stable backport: not in the 6.8 profile) */
		if ((gfp & GFP_THISNODE) && kernel_thisnode_no_reclaim(k->cfg->kernel))
			return PFN_NONE;
		prio = COMPACT_PRIO_ASYNC; /* worth a reclaim round, not a sync compaction */
	}
retry:
	pfn = get_page_from_freelist(k, order, mt, WMARK_MIN);
	if (pfn != PFN_NONE)
		return pfn;
	/* __alloc_pages_direct_reclaim() */
	reclaim_direct(k, order, gfp);
	pfn = get_page_from_freelist(k, order, mt, WMARK_MIN);
	if (pfn != PFN_NONE)
		return pfn;
	pfn = direct_compact(k, order, mt, prio, &result);
	/* nopage: __GFP_NORETRY, or a costly order without __GFP_RETRY_MAYFAIL */
	return pfn;
}
