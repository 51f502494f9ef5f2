/*
 * page_alloc.h - the allocation path of a costly-order request (a THP, the huge
 * zero page): Linux 6.6 mm/page_alloc.c __alloc_pages() with its slow path
 * (__alloc_pages_slowpath(), __alloc_pages_direct_compact(),
 * __alloc_pages_direct_reclaim()). See page_alloc.c.
 */
#ifndef MMUSIM_PAGE_ALLOC_H
#define MMUSIM_PAGE_ALLOC_H

#include "types.h"

struct kernel;

/*
 * The bits of a gfp mask (include/linux/gfp_types.h __GFP_*) that change what
 * the model does, and the masks built from them as the kernel builds them:
 * GFP_TRANSHUGE_LIGHT is GFP_HIGHUSER_MOVABLE without __GFP_RECLAIM (neither
 * kind of reclaim); GFP_TRANSHUGE adds __GFP_DIRECT_RECLAIM back.
 */
typedef unsigned gfp_t;

#define GFP_MOVABLE 0x01u        /* __GFP_MOVABLE: MIGRATE_MOVABLE, zone MOVABLE */
#define GFP_DIRECT_RECLAIM 0x02u /* __GFP_DIRECT_RECLAIM: may compact and reclaim */
#define GFP_KSWAPD_RECLAIM 0x04u /* __GFP_KSWAPD_RECLAIM: wakes kswapd/kcompactd (not modelled) */
#define GFP_NORETRY 0x08u        /* __GFP_NORETRY: gives up early */
#define GFP_THISNODE 0x10u       /* __GFP_THISNODE: the local node only (one node here) */

#define GFP_RECLAIM (GFP_DIRECT_RECLAIM | GFP_KSWAPD_RECLAIM)
#define GFP_HIGHUSER_MOVABLE (GFP_RECLAIM | GFP_MOVABLE)
#define GFP_TRANSHUGE_LIGHT (GFP_HIGHUSER_MOVABLE & ~GFP_RECLAIM)
#define GFP_TRANSHUGE (GFP_TRANSHUGE_LIGHT | GFP_DIRECT_RECLAIM)

/*
 * __alloc_pages() of a block of @order (1 .. MAX_PAGE_ORDER) under @gfp:
 * the free lists at the low watermark, then the slow path: the min watermark,
 * async direct compaction (costly orders, above 3, only), direct reclaim,
 * compaction again, as page_alloc.c describes (a non-costly order, an mTHP of
 * 16K or 32K, gets one reclaim and one compaction round: should_reclaim_retry()'s
 * loop is left out); counts compact_stall / _success / _fail and allocstall_*. MOVABLE
 * with GFP_MOVABLE, else UNMOVABLE. Returns the first frame, or PFN_NONE (an
 * expected outcome).
 */
pfn_t sim_alloc_pages(struct kernel *k, unsigned order, gfp_t gfp);

#endif
