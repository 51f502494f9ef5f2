/*
 * compaction.c - direct compaction of the one zone, after Linux 6.6
 * mm/compaction.c (try_to_compact_pages(), compact_zone()), run through the
 * simulator's reverse map (sim_compact()); the allocation slow path that calls it
 * (__alloc_pages_direct_compact()) is page_alloc.c's.
 *
 * The model (sources as buddy.c's: mm/compaction.c of a v6.6-era tree):
 *  - deferral: compaction_deferred(), defer_compaction(), COMPACT_MAX_DEFER_SHIFT 6;
 *  - compaction_suitable() with the fragmentation index;
 *  - isolate_migratepages(): one pageblock per round, at most COMPACT_CLUSTER_MAX
 *    = 32 pages; async direct compaction skips non-MOVABLE pageblocks and gives
 *    up the rest of an order-aligned chunk at the first page it cannot isolate;
 *  - isolate_freepages() from the top: whole free buddies isolated under the MIN
 *    watermark check and split to order 0, only MOVABLE pageblocks without a free
 *    pageblock-sized buddy at their start;
 *  - migrate_pages() LIFO over the isolated list; compact_finished() testing the
 *    free lists at pageblock boundaries; scanners meeting -> COMPACT_COMPLETE.
 *  - the request's migrate type: a MOVABLE request (a THP) or an UNMOVABLE one
 *    (the huge zero page); async compaction takes sources only from pageblocks
 *    of that kind (suitable_migration_source()), and compact_finished() looks
 *    for a free block of that type or one it may steal.
 *  - sim_compact(): one try_to_compact_pages() run at the priority the
 *    allocation slow path asks for (page_alloc.c drives it); a page moves by the
 *    per-frame reverse map (k->rmap): its PTE is rewritten and the page shot
 *    down. Migration copies nothing but costs os.cost.copy_page cycles.
 *
 * Leaves out: cached scanner positions and skip bits (every run covers the whole
 * zone, like compact_zone() with whole_zone), the fast free and migrate searches
 * (and with them the async free scanner's stride: without
 * fast_isolate_freepages(), which finds most targets from the free lists, a
 * stride would lose free pages the kernel uses; every free scan here visits each
 * frame), page capture, the finish_pageblock rescan, and migration of large
 * folios (compaction skips allocated blocks of order > 0 - THPs - as Linux did
 * before 6.9 enabled compacting large folios), kcompactd and proactive compaction.
 */
#include <stdlib.h>
#include <string.h>

#include "buddy_internal.h"
#include "compaction.h"
#include "lru.h"
#include "mmap.h"
#include "tlbflush.h"
#include "kernel.h"

#define COMPACT_CLUSTER_MAX 32    /* SWAP_CLUSTER_MAX, include/linux/swap.h */

struct compact_control {
	struct buddy *b;
	const struct buddy_migrate_ops *ops;
	struct compact_stats *st;
	unsigned order;
	int migratetype;            /* cc->migratetype of the request */
	bool async;                 /* cc->mode == MIGRATE_ASYNC (direct compaction) */
	bool ignore_block_suitable; /* COMPACT_PRIO_SYNC_FULL */
	pfn_t migrate_pfn, free_pfn;
	pfn_t migratepages[COMPACT_CLUSTER_MAX];
	unsigned nr_migratepages;
	/* isolated order-0 targets; the last is used first, as split_map_pages() leaves them */
	pfn_t freepages[COMPACT_CLUSTER_MAX + PAGEBLOCK_NR_PAGES];
	unsigned nr_freepages;
};

static inline pfn_t pageblock_end_pfn(pfn_t pfn)
{
	return (pfn + PAGEBLOCK_NR_PAGES) & ~(PAGEBLOCK_NR_PAGES - 1);
}

static bool compact_scanners_met(const struct compact_control *cc)
{
	return (cc->free_pfn >> PAGEBLOCK_ORDER) <= (cc->migrate_pfn >> PAGEBLOCK_ORDER);
}

static void defer_compaction(struct buddy *b, unsigned order)
{
	b->compact_considered = 0;
	b->compact_defer_shift++;
	if ((int)order < b->compact_order_failed)
		b->compact_order_failed = (int)order;
	if (b->compact_defer_shift > COMPACT_MAX_DEFER_SHIFT)
		b->compact_defer_shift = COMPACT_MAX_DEFER_SHIFT;
}

static bool compaction_deferred(struct buddy *b, unsigned order)
{
	unsigned defer_limit = 1U << b->compact_defer_shift;

	if ((int)order < b->compact_order_failed)
		return false;
	if (++b->compact_considered >= defer_limit) {
		b->compact_considered = defer_limit;
		return false;
	}
	return true;
}

void buddy_compaction_defer_reset(struct buddy *b, unsigned order, bool alloc_success)
{
	if (alloc_success) {
		b->compact_considered = 0;
		b->compact_defer_shift = 0;
	}
	if ((int)order >= b->compact_order_failed)
		b->compact_order_failed = (int)order + 1;
}

/* The order of the allocated block covering pageblock start @pfn, or -1. */
static int alloc_order_at_block(const struct buddy *b, pfn_t pfn)
{
	pfn_t head10 = pfn & ~(BOOT_BLOCK_PAGES - 1);

	if (pfn >= b->lazy_next)
		return -1;
	if (b->pages[pfn].flags & BP_HEAD)
		return b->pages[pfn].order;
	if (!b->pages[pfn].flags && (b->pages[head10].flags & BP_HEAD) &&
	    b->pages[head10].order == MAX_PAGE_ORDER)
		return MAX_PAGE_ORDER;
	return -1;
}

static bool suitable_migration_source(const struct compact_control *cc, pfn_t block)
{
	/* pageblock_skip_persistent(): a pageblock-sized allocated block */
	if (alloc_order_at_block(cc->b, block) >= PAGEBLOCK_ORDER)
		return false;
	if (!cc->async)
		return true;
	/* async direct compaction: only blocks of the request's kind (is_migrate_movable()) */
	return *buddy_pb_mt(cc->b, block) == cc->migratetype;
}

static bool suitable_migration_target(const struct compact_control *cc, pfn_t block)
{
	/* a free block of pageblock size is already what compaction wants */
	if (buddy_free_head_order(cc->b, block) >= PAGEBLOCK_ORDER)
		return false;
	if (cc->ignore_block_suitable)
		return true;
	return *buddy_pb_mt(cc->b, block) == MIGRATE_MOVABLE;
}

/* isolate_freepages_block(), not strict, stride 1 */
static uint64_t isolate_freepages_block(struct compact_control *cc, pfn_t *start_pfn,
					pfn_t end_pfn)
{
	struct buddy *b = cc->b;
	uint64_t nr_scanned = 0, total_isolated = 0;
	pfn_t p = *start_pfn;

	for (; p < end_pfn; p++) {
		int o;
		uint64_t n;

		nr_scanned++;
		if (p < b->lazy_next && (b->pages[p].flags & BP_HEAD) && b->pages[p].order > 0) {
			n = 1UL << b->pages[p].order; /* PageCompound: jump over it */
			p += n - 1;
			nr_scanned += n - 1;
			continue;
		}
		o = buddy_free_head_order(b, p);
		if (o < 0)
			continue;
		n = 1UL << o;
		/* __isolate_free_page(): obey the MIN watermark as if allocating */
		if (!buddy_zone_watermark_ok(b, 0, b->watermark[WMARK_MIN] + n))
			break;
		if (p >= b->lazy_next)
			while (b->lazy_next <= p)
				buddy_lazy_link_one(b);
		buddy_list_del(b, p, (unsigned)o);
		b->nr_free_pages -= n;
		/* an isolated block of at least half a pageblock makes it MOVABLE */
		if (o >= PAGEBLOCK_ORDER - 1)
			*buddy_pb_mt(b, p) = MIGRATE_MOVABLE;
		/* split_map_pages(): order-0 targets, the highest used first */
		for (pfn_t f = p; f < p + n; f++)
			cc->freepages[cc->nr_freepages++] = f;
		nr_scanned += n - 1;
		total_isolated += n;
		if (cc->nr_migratepages <= cc->nr_freepages) {
			p += n;
			break;
		}
		p += n - 1;
	}
	if (p > end_pfn)
		p = end_pfn;
	*start_pfn = p;
	cc->st->free_scanned += nr_scanned;
	cc->st->isolated += total_isolated;
	return total_isolated;
}

/* isolate_freepages(): the free scanner, pageblock by pageblock from the top */
static void isolate_freepages(struct compact_control *cc)
{
	pfn_t isolate_start = cc->free_pfn;
	pfn_t block_start = isolate_start & ~(PAGEBLOCK_NR_PAGES - 1);
	pfn_t block_end = block_start + PAGEBLOCK_NR_PAGES;
	pfn_t low_pfn = pageblock_end_pfn(cc->migrate_pfn);

	if (block_end > cc->b->nr_pages)
		block_end = cc->b->nr_pages;
	for (; block_start >= low_pfn; block_end = block_start,
	     block_start -= PAGEBLOCK_NR_PAGES, isolate_start = block_start) {
		if (!suitable_migration_target(cc, block_start))
			continue;
		isolate_freepages_block(cc, &isolate_start, block_end);
		if (cc->nr_freepages >= cc->nr_migratepages) {
			if (isolate_start >= block_end)
				isolate_start = block_start - PAGEBLOCK_NR_PAGES;
			break;
		} else if (isolate_start < block_end) {
			break; /* stopped early: the watermark */
		}
	}
	cc->free_pfn = isolate_start;
}

/* isolate_migratepages_block() over [@low_pfn, @end_pfn) */
static void isolate_migratepages_block(struct compact_control *cc, pfn_t low_pfn, pfn_t end_pfn)
{
	struct buddy *b = cc->b;
	uint64_t nr_scanned = 0;
	unsigned nr_isolated = 0;
	bool skip_on_failure = cc->async;
	pfn_t chunk = 1UL << cc->order, next_skip_pfn = 0;

	if (skip_on_failure)
		next_skip_pfn = (low_pfn + chunk) & ~(chunk - 1);
	for (; low_pfn < end_pfn; low_pfn++) {
		struct buddy_page *p = &b->pages[low_pfn];
		int o;

		if (skip_on_failure && low_pfn >= next_skip_pfn) {
			if (nr_isolated)
				break;
			next_skip_pfn = (low_pfn + chunk) & ~(chunk - 1);
		}
		nr_scanned++;
		o = buddy_free_head_order(b, low_pfn);
		if (o >= 0) {
			low_pfn += (1UL << o) - 1;
			nr_scanned += (1UL << o) - 1;
			continue;
		}
		if ((p->flags & BP_HEAD) && p->order > 0) {
			/* a THP: large-folio migration is not modelled */
			low_pfn += (1UL << p->order) - 1;
			nr_scanned += (1UL << p->order) - 1;
			goto isolate_fail;
		}
		/* !PageLRU: unmovable or pinned pages, tails of other blocks */
		if (p->flags != BP_HEAD || p->mt != MIGRATE_MOVABLE)
			goto isolate_fail;
		cc->migratepages[cc->nr_migratepages++] = low_pfn;
		nr_isolated++;
		if (cc->nr_migratepages >= COMPACT_CLUSTER_MAX) {
			++low_pfn;
			break;
		}
		continue;
isolate_fail:
		if (!skip_on_failure)
			continue;
		if (nr_isolated) { /* putback_movable_pages() */
			cc->nr_migratepages = 0;
			nr_isolated = 0;
		}
		if (low_pfn < next_skip_pfn) {
			low_pfn = next_skip_pfn - 1;
			next_skip_pfn += chunk;
		}
	}
	if (low_pfn > end_pfn)
		low_pfn = end_pfn;
	cc->st->migrate_scanned += nr_scanned;
	cc->st->isolated += nr_isolated;
	cc->migrate_pfn = low_pfn;
}

/* isolate_migratepages(): the next pageblock that is a suitable source */
static void isolate_migratepages(struct compact_control *cc)
{
	pfn_t low_pfn = cc->migrate_pfn;
	pfn_t block_end = pageblock_end_pfn(low_pfn);

	for (; block_end <= cc->free_pfn; cc->migrate_pfn = low_pfn = block_end,
	     block_end += PAGEBLOCK_NR_PAGES) {
		if (!suitable_migration_source(cc, block_end - PAGEBLOCK_NR_PAGES))
			continue;
		isolate_migratepages_block(cc, low_pfn, block_end);
		break;
	}
}

/* migrate_pages() with compaction_alloc()/compaction_free(); false on -ENOMEM */
static bool migrate_isolated(struct compact_control *cc)
{
	struct buddy *b = cc->b;
	bool enomem = false;

	for (unsigned i = cc->nr_migratepages; i-- > 0;) {
		pfn_t from = cc->migratepages[i], to;

		if (!cc->nr_freepages) {
			isolate_freepages(cc);
			if (!cc->nr_freepages) {
				enomem = true; /* the rest is put back */
				break;
			}
		}
		to = cc->freepages[--cc->nr_freepages];
		b->pages[to].flags = BP_HEAD;
		b->pages[to].order = 0;
		b->pages[to].mt = MIGRATE_MOVABLE;
		if (cc->ops->migrate(cc->ops->ctx, from, to) != 0) {
			b->pages[to].flags = 0;
			b->pages[to].mt = 0;
			cc->freepages[cc->nr_freepages++] = to;
			cc->st->migrate_failed++;
			continue;
		}
		cc->st->migrated++;
		buddy_free(b, from, 0);
	}
	cc->nr_migratepages = 0;
	return !enomem;
}

/* __compact_finished() for a direct compaction of cc->migratetype */
static enum compact_result compact_finished(const struct compact_control *cc)
{
	bool can_steal;

	if (compact_scanners_met(cc))
		return COMPACT_COMPLETE;
	if (cc->migrate_pfn & (PAGEBLOCK_NR_PAGES - 1))
		return COMPACT_CONTINUE;
	for (unsigned o = cc->order; o < NR_PAGE_ORDERS; o++) {
		if (!buddy_area_empty(cc->b, o, cc->migratetype))
			return COMPACT_SUCCESS;
		if (buddy_find_suitable_fallback(cc->b, o, cc->migratetype, true, &can_steal) != -1)
			return COMPACT_SUCCESS;
	}
	return COMPACT_CONTINUE;
}

enum compact_result buddy_compaction_suitable(const struct buddy *b, unsigned order)
{
	uint64_t watermark = order > PAGE_ALLOC_COSTLY_ORDER ? b->watermark[WMARK_LOW] :
							       b->watermark[WMARK_MIN];

	/* order-0 free pages must cover the watermark plus compact_gap() = 2 << order */
	if (!buddy_zone_watermark_ok(b, 0, watermark + (2UL << order)))
		return COMPACT_SKIPPED;
	if (order > PAGE_ALLOC_COSTLY_ORDER) {
		int fragindex = buddy_fragmentation_index(b, order);

		/* failure would be for lack of memory, not fragmentation: reclaim instead */
		if (fragindex >= 0 && fragindex <= b->extfrag_threshold)
			return COMPACT_NOT_SUITABLE_ZONE;
	}
	return COMPACT_CONTINUE;
}

static enum compact_result compact_zone(struct compact_control *cc)
{
	struct buddy *b = cc->b;
	enum compact_result ret;

	/* the allocation's own watermark (ALLOC_WMARK_MIN) already holds */
	if (buddy_zone_watermark_ok(b, cc->order, b->watermark[WMARK_MIN]))
		return COMPACT_SUCCESS;
	ret = buddy_compaction_suitable(b, cc->order);
	if (ret != COMPACT_CONTINUE)
		return ret;
	cc->migrate_pfn = 0;
	cc->free_pfn = (b->nr_pages - 1) & ~(PAGEBLOCK_NR_PAGES - 1);
	while ((ret = compact_finished(cc)) == COMPACT_CONTINUE) {
		isolate_migratepages(cc);
		if (!cc->nr_migratepages)
			continue;
		if (!migrate_isolated(cc) && !compact_scanners_met(cc)) {
			ret = COMPACT_CONTENDED;
			break;
		}
	}
	/* release_freepages() */
	while (cc->nr_freepages) {
		pfn_t f = cc->freepages[--cc->nr_freepages];

		buddy_free_one_page(b, f, 0);
	}
	return ret;
}

enum compact_result buddy_compact_mt(struct buddy *b, unsigned order, int mt, int prio,
				     const struct buddy_migrate_ops *ops, struct compact_stats *st)
{
	struct compact_stats dummy;
	struct compact_control *cc;
	enum compact_result ret;

	BUG_ON(order > MAX_PAGE_ORDER || prio < COMPACT_PRIO_SYNC_FULL || prio > COMPACT_PRIO_ASYNC);
	BUG_ON(!ops || !ops->migrate || mt < 0 || mt >= MIGRATE_PCPTYPES);
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (!order) { /* __alloc_pages_direct_compact() never compacts for order 0 */
		ret = COMPACT_SKIPPED;
		goto out;
	}
	if (prio > COMPACT_PRIO_SYNC_FULL && compaction_deferred(b, order)) {
		ret = COMPACT_DEFERRED;
		goto out;
	}
	cc = calloc(1, sizeof(*cc));
	BUG_ON(!cc);
	cc->b = b;
	cc->ops = ops;
	cc->st = st;
	cc->order = order;
	cc->migratetype = mt;
	cc->async = prio == COMPACT_PRIO_ASYNC;
	cc->ignore_block_suitable = prio == COMPACT_PRIO_SYNC_FULL;
	ret = compact_zone(cc);
	free(cc);
	if (ret == COMPACT_SUCCESS)
		buddy_compaction_defer_reset(b, order, false);
	if (prio != COMPACT_PRIO_ASYNC && ret == COMPACT_COMPLETE)
		defer_compaction(b, order);
out:
	st->result = ret;
	return ret;
}

enum compact_result buddy_compact(struct buddy *b, unsigned order, int prio,
				  const struct buddy_migrate_ops *ops, struct compact_stats *st)
{
	return buddy_compact_mt(b, order, MIGRATE_MOVABLE, prio, ops, st);
}

/* ---- try_to_compact_pages() on the simulated machine ---- */

/* migrate_pages() of one 4K anonymous page: move its frame, fix its PTE, flush it. */
static int migrate_one(void *ctx, pfn_t from, pfn_t to)
{
	struct kernel *k = ctx;
	vaddr_t va;
	enum page_size ps;
	pfn_t cur;
	uint64_t e;

	struct mm *old;

	if (!k->rmap[from] || filemap_is_cache(&k->fm, from))
		return -1; /* not a mapped anonymous page (a zero page, a kernel or cache page) */
	if (kernel_page_shared(k, from))
		return -1; /* mapped by several mms after a fork: left alone (fork.c) */
	if (k->thp.mthp[from])
		return -1; /* a page of an mTHP: Linux migrates the folio whole (not modelled) */
	va = k->rmap[from] - 1;
	old = kernel_use_mm(k, k->rmap_mm[from]); /* the mm that maps it, whichever runs */
	if (!pt_lookup(&k->mm->pt, va, &ps, &cur, &e) || ps != PS_4K || cur != from) {
		kernel_use_mm(k, old);
		return -1;
	}
	pt_set_pte(&k->mm->pt, va, to, e & PTE_RW);
	if (!(e & PTE_D)) /* remove_migration_pte(): a clean (lazy-free) page stays clean */
		pt_clear_leaf_bits(&k->mm->pt, va, PTE_D);
	lru_replace(&k->lru, from, to);
	k->rmap[to] = k->rmap[from];
	k->rmap_mm[to] = k->rmap_mm[from];
	k->rmap[from] = 0;
	k->st->compact_migrated++;
	flush_tlb_page(k, va);
	kernel_use_mm(k, old);
	return 0;
}

enum compact_result sim_compact(struct kernel *k, unsigned order, int mt, int prio)
{
	struct buddy_migrate_ops ops = { migrate_one, k };
	struct compact_stats cs = { 0 };
	enum compact_result r = buddy_compact_mt(&k->buddy, order, mt, prio, &ops, &cs);
	cycles_t cost = (cs.migrate_scanned + cs.free_scanned) * k->cfg->cost.compact_scan +
			cs.migrated * k->cfg->cost.copy_page;

	if (k->in_khugepaged)
		k->st->cyc_khugepaged += cost;
	else
		k->st->cyc_compaction += cost; /* the faulting application stalls */
	/* compact_zone() returns COMPACT_SKIPPED when !compaction_suitable(), fragindex included */
	return r == COMPACT_NOT_SUITABLE_ZONE ? COMPACT_SKIPPED : r;
}
