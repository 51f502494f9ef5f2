/*
 * sim.c - struct sim: builds the models from a config, replays records through
 * them, and plays the kernel's part for faults and address-space events.
 *
 * The replay loop decodes nothing: readers hand it batches (trace.h). Per record
 * it does one kind test, one page-crossing test and one memo compare
 * (mmu_access); everything rare is out of line. Background work (khugepaged, the
 * timeline) is tested once per batch against simulated time (sim_now()).
 *
 * Kernel side (the THP policy itself is thp.c's, collapse khugepaged.c's):
 *  - Faults: find the VMA (or make an implicit one, see below); in thp mode try
 *    thp_fault(); in hugetlbfs mode (or in a MAP_HUGETLB VMA) a 2M-aligned range
 *    wholly inside the VMA whose PMD is empty gets a pool page; everything else
 *    gets a zeroed 4 KiB page from the buddy allocator. Cost: os.cost.fault +
 *    os.cost.clear_page per 4 KiB zeroed. A store to a read-only translation (the
 *    zero pages) takes sim_wp_fault(): COW, flush, restart.
 *  - Implicit mappings (os.implicit): an address outside every VMA belongs to an
 *    anonymous read-write VMA spanning the os.implicit.granule-aligned block around
 *    it, clipped to the gap between its neighbours; with enabled: false it is a
 *    trace error. This is how traces without mapping events (and the program image
 *    and stack, which lackey never reports) get memory.
 *  - Events: mmap (over existing VMAs: they are unmapped first, as MAP_FIXED and
 *    the replacement of implicit VMAs need), munmap, mprotect, madvise
 *    (MADV_DONTNEED zaps, MADV_[NO]HUGEPAGE set flags), brk, mremap (pages move
 *    with their frames).
 *  - An operation covering part of a THP or huge zero PMD splits it (thp.c).
 *    Simplification: one covering part of a 2 MiB hugetlb page zaps the whole
 *    page (the rest refaults, in 4 KiB pages since its 2M range is no longer
 *    wholly mappable); real hugetlbfs refuses unaligned operations.
 *  - Direct compaction (sim_compact) migrates 4K anonymous pages found through a
 *    per-frame reverse map (rmap), moving the PTE and shooting the page down.
 *  - TLB shootdown as flush_tlb_mm_range() on x86 (arch/x86/mm/tlb.c): up to
 *    tlb_single_page_flush_ceiling (33) pages are invalidated one INVLPG each,
 *    more take a full flush; each INVLPG or full flush counts one
 *    vmstat.tlb_invalidations. Every INVLPG also empties the PWCs (SDM §4.10.4.1).
 *  - Permissions are recorded (PTE R/W follows the VMA) but not enforced on
 *    access: a traced program that ran to completion made no illegal access.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "khugepaged.h"
#include "mmu.h"
#include "sim.h"
#include "thp.h"

/* arch/x86/mm/tlb.c: tlb_single_page_flush_ceiling */
#define TLB_SINGLE_PAGE_FLUSH_CEILING 33

static pfn_t pt_frame_alloc(void *ctx)
{
	struct sim *s = ctx;
	pfn_t pfn = buddy_alloc_mt(&s->buddy, 0, MIGRATE_UNMOVABLE); /* GFP_PGTABLE_USER */

	if (pfn != PFN_NONE)
		s->st.nr_page_table_pages++;
	return pfn;
}

static void pt_frame_free(void *ctx, pfn_t pfn)
{
	struct sim *s = ctx;

	buddy_free(&s->buddy, pfn, 0);
	s->st.nr_page_table_pages--;
}

int sim_init(struct sim *s, const struct sim_config *cfg, struct err *e)
{
	struct pt_frame_ops ops = { pt_frame_alloc, pt_frame_free, s };

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->data_refs = cfg->data_refs;
	s->va_limit = 1ULL << (PAGE_SHIFT + 9 * cfg->levels);
	s->last_vpn[0] = s->last_vpn[1] = VPN_NONE;
	vma_set_init(&s->vmas);
	/*
	 * A 1G hugetlb pool is carved off the top at boot (1G-aligned): the buddy
	 * gets what lies below it; memory above the last whole GiB goes unused.
	 */
	if (tlb_init(&s->tlb, cfg) || cache_init(&s->cache, cfg) ||
	    buddy_init(&s->buddy, cfg->hugetlb_1g_pages ? ((cfg->memory >> PUD_SHIFT) - cfg->hugetlb_1g_pages) << PUD_SHIFT
							: cfg->memory))
		goto oom;
	s->buddy.extfrag_threshold = cfg->extfrag_threshold;
	buddy_set_thp_enabled(&s->buddy, cfg->mode == MODE_THP && cfg->thp.enabled != THP_NEVER);
	if (cfg->fragmentation.unmovable > 0 &&
	    buddy_fragment(&s->buddy, cfg->fragmentation.unmovable, cfg->fragmentation.seed) < 0)
		return err_set(e, "os.fragmentation.unmovable", 0, 0, "cannot fragment memory");
	for (int i = 0; i < PWC_NR; i++)
		if (tlb_array_init(&s->pwc[i], cfg->pwc[i].entries, cfg->pwc[i].ways, REPL_LRU,
				   cfg->seed + 100 + i))
			goto oom;
	if (pt_init(&s->pt, cfg->levels, &ops))
		goto oom;
	if ((cfg->mode == MODE_HUGETLBFS || cfg->hugetlb_pages) &&
	    hugetlb_pool_init(&s->hugetlb, &s->buddy, cfg->mode == MODE_HUGETLBFS || cfg->hugetlb_pages ? cfg->hugetlb_pages : 0))
		goto oom;
	if (hugetlb_pool_init_1g(&s->hugetlb, s->buddy.nr_pages, cfg->hugetlb_1g_pages))
		goto oom;
	s->rmap = mmap(NULL, s->buddy.nr_pages * sizeof(*s->rmap), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->rmap == MAP_FAILED) {
		s->rmap = NULL;
		goto oom;
	}
	if (thp_init(s) || lru_init(&s->lru, s->buddy.nr_pages) || swap_init(&s->swap, cfg->swap_size))
		goto oom;
	s->wmark_low = buddy_watermark(&s->buddy, WMARK_LOW);
	khugepaged_init(s);
	return 0;
oom:
	return err_set(e, "mmusim", 0, 0, "out of host memory building the simulated machine");
}

static void unmap_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry);

void sim_destroy(struct sim *s)
{
	if (s->pt.root) {
		pt_unmap_range(&s->pt, 0, s->va_limit, true, unmap_leaf, s);
		pt_destroy(&s->pt);
	}
	hugetlb_pool_destroy(&s->hugetlb, &s->buddy);
	thp_destroy(s);
	lru_destroy(&s->lru);
	swap_destroy(&s->swap);
	if (s->rmap)
		munmap(s->rmap, s->buddy.nr_pages * sizeof(*s->rmap));
	for (int i = 0; i < PWC_NR; i++)
		tlb_array_free(&s->pwc[i]);
	tlb_free(&s->tlb);
	cache_free(&s->cache);
	buddy_destroy(&s->buddy);
	vma_set_free(&s->vmas);
}

static int fail(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A failure inside a batch: rec_no counts the records before the batch, so the
 * replay loop that catches it names the record (fail_at()) from fail_msg.
 */
static int fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->fail_msg, sizeof(s->fail_msg), fmt, ap);
	va_end(ap);
	s->failed = true;
	return err_set(&s->err, s->trace_name, 0, 0, "record %llu: %s",
		       (unsigned long long)s->rec_no + 1, s->fail_msg);
}

/* The replay loop stopped at record @idx of the batch: name it, return -1 with @e. */
static __attribute__((cold, noinline)) int fail_at(struct sim *s, uint64_t idx, struct err *e)
{
	if (s->fail_msg[0])
		err_set(&s->err, s->trace_name, 0, 0, "record %llu: %s",
			(unsigned long long)(s->rec_no + idx + 1), s->fail_msg);
	s->rec_no += idx;
	*e = s->err;
	return -1;
}

/* --- faults ------------------------------------------------------------- */

static struct vma *implicit_vma(struct sim *s, vaddr_t va)
{
	uint64_t g = s->cfg.implicit.granule;
	vaddr_t lo, hi, start = va & ~(g - 1), end = start + g;

	vma_gap(&s->vmas, va, s->va_limit, &lo, &hi);
	if (start < lo)
		start = lo;
	if (end > hi || end < start)
		end = hi;
	if (vma_insert(&s->vmas, start, end, VM_READ | VM_WRITE | VM_IMPLICIT))
		return NULL;
	return vma_find(&s->vmas, va);
}

static bool hugetlb_backed(const struct sim *s, const struct vma *v)
{
	return (v->flags & VM_HUGETLB) ||
	       (s->cfg.mode == MODE_HUGETLBFS && !(v->flags & VM_SHARED));
}

int sim_fault(struct sim *s, vaddr_t va, bool write)
{
	struct vma *v;
	pfn_t pfn;

	if (va >= s->va_limit)
		return fail(s, "address 0x%llx needs more than %u-level paging (walk.levels)",
			    (unsigned long long)va, s->cfg.levels);
	v = vma_find(&s->vmas, va);
	if (!v) {
		if (!s->cfg.implicit.enabled)
			return fail(s, "address 0x%llx is outside every mapping (os.implicit.enabled is false)",
				    (unsigned long long)va);
		v = implicit_vma(s, va);
		if (!v)
			return fail(s, "out of host memory");
	}
	s->st.pgfault++;
	s->st.cyc_fault += s->cfg.cost.fault;
	if (unlikely(s->buddy.nr_free_pages < s->wmark_low))
		reclaim_kswapd(s); /* the allocation below wakes kswapd */
	{
		uint64_t slot;

		if (unlikely(s->pt.nr_swap) && pt_get_swap(&s->pt, va, &slot)) {
			if (reclaim_swap_in(s, v, va, slot, false))
				goto oom;
			return 0;
		}
	}
	if (s->cfg.mode == MODE_THP && !(v->flags & VM_HUGETLB)) {
		int r = thp_fault(s, v, va, write);

		if (r)
			return r < 0 ? -1 : 0;
	}
	if (hugetlb_backed(s, v)) {
		vaddr_t h = va & ~(PMD_SIZE - 1), g = va & ~(PUD_SIZE - 1);

		if (s->hugetlb.in_use_1g < s->hugetlb.nr_1g && g >= v->start && g + PUD_SIZE <= v->end &&
		    pt_slot_empty(&s->pt, g, PS_1G)) {
			pfn = hugetlb_alloc_1g(&s->hugetlb);
			if (pt_map(&s->pt, g, PS_1G, pfn, v->flags & VM_WRITE)) {
				hugetlb_free_1g(&s->hugetlb, pfn);
				goto oom;
			}
			s->st.nr_hugetlb_pages_1g++;
			s->st.cyc_fault += (PUD_SIZE >> PAGE_SHIFT) * s->cfg.cost.clear_page;
			return 0;
		}

		if (h >= v->start && h + PMD_SIZE <= v->end && pt_slot_empty(&s->pt, h, PS_2M)) {
			pfn = hugetlb_alloc(&s->hugetlb, &s->buddy);
			if (pfn != PFN_NONE) {
				if (pt_map(&s->pt, h, PS_2M, pfn, v->flags & VM_WRITE)) {
					hugetlb_free(&s->hugetlb, &s->buddy, pfn);
					goto oom;
				}
				s->st.nr_hugetlb_pages++;
				s->st.cyc_fault += HPAGE_PMD_NR * s->cfg.cost.clear_page;
				return 0;
			}
		}
	}
	pfn = buddy_alloc(&s->buddy, 0);
	if (pfn == PFN_NONE)
		goto oom;
	if (pt_map(&s->pt, va & ~(PAGE_SIZE - 1), PS_4K, pfn, v->flags & VM_WRITE)) {
		buddy_free(&s->buddy, pfn, 0);
		goto oom;
	}
	sim_rmap_set(s, pfn, va & ~(PAGE_SIZE - 1));
	lru_add(s, pfn, 1);
	s->st.nr_anon_pages++;
	s->st.cyc_fault += s->cfg.cost.clear_page;
	return 0;
oom:
	return fail(s, "simulated memory (os.memory = %llu MiB) is exhausted at 0x%llx; raise os.memory",
		    (unsigned long long)(s->cfg.memory >> 20), (unsigned long long)va);
}

int sim_wp_fault(struct sim *s, vaddr_t va)
{
	enum page_size ps;
	pfn_t pfn, np;
	struct vma *v = vma_find(&s->vmas, va);
	vaddr_t p = va & ~(PAGE_SIZE - 1);

	s->st.pgfault++;
	s->st.cyc_fault += s->cfg.cost.fault;
	if (!v || !pt_lookup(&s->pt, va, &ps, &pfn, NULL))
		return fail(s, "write fault at 0x%llx without a mapping", (unsigned long long)va);
	if (ps == PS_2M && pfn == s->thp.huge_zero_pfn) {
		/* do_huge_pmd_wp_page(): split the zero PMD, then the 4K COW below */
		thp_split_pmd_at(s, va);
		pt_lookup(&s->pt, va, &ps, &pfn, NULL);
	}
	if (ps == PS_4K && pfn == s->thp.zero_pfn) {
		/* wp_page_copy() from the zero page: a fresh zeroed page (the zero
		 * PTE itself is not reclaimable, so kswapd cannot take it away) */
		if (unlikely(s->buddy.nr_free_pages < s->wmark_low))
			reclaim_kswapd(s);
		np = buddy_alloc(&s->buddy, 0);
		if (np == PFN_NONE)
			return fail(s, "simulated memory (os.memory = %llu MiB) is exhausted at 0x%llx; raise os.memory",
				    (unsigned long long)(s->cfg.memory >> 20), (unsigned long long)va);
		pt_set_pte(&s->pt, p, np, v->flags & VM_WRITE);
		sim_rmap_set(s, np, p);
		lru_add(s, np, 1);
		s->thp.nr_zero_ptes--;
		s->st.nr_anon_pages++;
		s->st.cyc_fault += s->cfg.cost.clear_page;
	} else {
		/* a read-only leaf of a writable page: make it writable (spurious fault) */
		pt_protect_range(&s->pt, ps == PS_4K ? p : va & ~(PMD_SIZE - 1),
				 ps == PS_4K ? p + PAGE_SIZE : (va & ~(PMD_SIZE - 1)) + PMD_SIZE, true,
				 PFN_NONE, PFN_NONE);
	}
	sim_shootdown(s, p, p + PAGE_SIZE, 1);
	return 0;
}

/* migrate_pages() of one 4K anonymous page: move its frame, fix its PTE, flush it. */
static int migrate_one(void *ctx, pfn_t from, pfn_t to)
{
	struct sim *s = ctx;
	vaddr_t va;
	enum page_size ps;
	pfn_t cur;
	uint64_t e;

	if (!s->rmap[from])
		return -1; /* not a mapped anonymous page (a zero page, a kernel page) */
	va = s->rmap[from] - 1;
	if (!pt_lookup(&s->pt, va, &ps, &cur, &e) || ps != PS_4K || cur != from)
		return -1;
	pt_set_pte(&s->pt, va, to, e & PTE_RW);
	lru_replace(s, from, to);
	s->rmap[to] = s->rmap[from];
	s->rmap[from] = 0;
	s->st.compact_migrated++;
	sim_shootdown(s, va, va + PAGE_SIZE, 1);
	return 0;
}

bool sim_compact(struct sim *s, unsigned order)
{
	struct buddy_migrate_ops ops = { migrate_one, s };
	struct compact_stats cs = { 0 };
	enum compact_result r;

	/* __alloc_pages_direct_compact(): async first for a costly order, then sync light */
	r = buddy_compact(&s->buddy, order, COMPACT_PRIO_ASYNC, &ops, &cs);
	if (r == COMPACT_COMPLETE || r == COMPACT_CONTENDED) {
		struct compact_stats cs2 = { 0 };

		r = buddy_compact(&s->buddy, order, COMPACT_PRIO_SYNC_LIGHT, &ops, &cs2);
		cs.migrate_scanned += cs2.migrate_scanned;
		cs.free_scanned += cs2.free_scanned;
		cs.migrated += cs2.migrated;
	}
	cycles_t cost = (cs.migrate_scanned + cs.free_scanned) * s->cfg.cost.compact_scan +
			cs.migrated * s->cfg.cost.copy_page;

	if (s->in_khugepaged)
		s->st.cyc_khugepaged += cost;
	else
		s->st.cyc_compaction += cost; /* the faulting application stalls */
	if (r == COMPACT_SKIPPED || r == COMPACT_NOT_SUITABLE_ZONE || r == COMPACT_DEFERRED)
		return false; /* compaction did not run: no stall */
	s->st.compact_stall++;
	return true; /* the caller tries the allocation and counts success or fail */
}

/* --- unmapping and invalidation ----------------------------------------- */

static void unmap_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct sim *s = ctx;

	if (pfn == PFN_NONE) { /* a swap entry: free_swap_and_cache() */
		swap_free(&s->swap, pte_pfn(entry));
		return;
	}
	if (ps == PS_1G) {
		hugetlb_free_1g(&s->hugetlb, pfn);
		s->st.nr_hugetlb_pages_1g--;
		return;
	}
	thp_unmap_leaf(s, va, ps, pfn);
}

/* Shoot down [start, end) after @pages leaves changed: INVLPGs or a full flush. */
void sim_shootdown(struct sim *s, vaddr_t start, vaddr_t end, uint64_t pages)
{
	if (!pages)
		return;
	s->st.cyc_fault += s->cfg.cost.flush;
	if (pages > TLB_SINGLE_PAGE_FLUSH_CEILING) {
		mmu_flush_all(s);
		s->st.tlb_invalidations++;
	} else {
		mmu_invalidate_range(s, start, end);
		s->st.tlb_invalidations += pages;
	}
}

/*
 * A 2M leaf straddling an edge of [*start, *end): a THP or huge zero PMD is split
 * (vma_adjust_trans_huge(), zap_pmd_range()); a hugetlbfs page widens the range
 * to the whole page (see the header).
 */
static void widen_to_huge(struct sim *s, vaddr_t *start, vaddr_t *end)
{
	enum page_size ps;
	pfn_t pfn;

	/* a 1G hugetlb page is zapped whole, like a 2M one */
	if (*start & (PUD_SIZE - 1) && pt_lookup(&s->pt, *start, &ps, &pfn, NULL) && ps == PS_1G)
		*start &= ~(PUD_SIZE - 1);
	if (*end & (PUD_SIZE - 1) && pt_lookup(&s->pt, *end - 1, &ps, &pfn, NULL) && ps == PS_1G)
		*end = (*end + PUD_SIZE - 1) & ~(PUD_SIZE - 1);

	if (*start & (PMD_SIZE - 1) && pt_lookup(&s->pt, *start, &ps, &pfn, NULL) && ps == PS_2M) {
		if (pfn == s->thp.huge_zero_pfn || thp_is_folio(s, pfn))
			thp_split_pmd_at(s, *start);
		else
			*start &= ~(PMD_SIZE - 1);
	}
	if (*end & (PMD_SIZE - 1) && pt_lookup(&s->pt, *end - 1, &ps, &pfn, NULL) && ps == PS_2M) {
		if (pfn == s->thp.huge_zero_pfn || thp_is_folio(s, pfn))
			thp_split_pmd_at(s, *end - 1);
		else
			*end = (*end + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
	}
}

/* zap_page_range(): unmap the pages of [start, end), free their frames, shoot down. */
static void zap_range(struct sim *s, vaddr_t start, vaddr_t end, bool free_tables)
{
	uint64_t n;

	widen_to_huge(s, &start, &end);
	n = pt_unmap_range(&s->pt, start, end, free_tables, unmap_leaf, s);
	sim_shootdown(s, start, end, n);
}

/* --- events ------------------------------------------------------------- */

static unsigned long prot_flags(uint32_t prot)
{
	return (prot & 1 ? VM_READ : 0) | (prot & 2 ? VM_WRITE : 0) | (prot & 4 ? VM_EXEC : 0);
}

static vaddr_t page_align(uint64_t len)
{
	return (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
}

static int ev_range(struct sim *s, const struct os_event *ev, vaddr_t *start, vaddr_t *end)
{
	*start = ev->addr & ~(PAGE_SIZE - 1);
	*end = ev->addr + page_align(ev->len);
	if (*end < *start || *end > s->va_limit) {
		s->failed = true;
		return err_set(&s->err, s->trace_name, ev->line, 0,
			       "%s of [0x%llx, +0x%llx) is beyond the %u-level address space",
			       ev_kind_name[ev->kind], (unsigned long long)ev->addr,
			       (unsigned long long)ev->len, s->cfg.levels);
	}
	return 0;
}

static int do_unmap(struct sim *s, vaddr_t start, vaddr_t end)
{
	zap_range(s, start, end, true);
	return vma_remove(&s->vmas, start, end);
}

/* Move the pages of [old, old + len) to new_addr, frames and all (move_page_tables()). */
struct moved {
	vaddr_t va;
	enum page_size ps;
	pfn_t pfn;
	uint64_t entry;
};

struct move_ctx {
	struct moved *m;
	size_t n, cap;
	bool oom;
};

static void collect_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct move_ctx *mc = ctx;

	if (mc->n == mc->cap) {
		size_t cap = mc->cap ? mc->cap * 2 : 64;
		struct moved *m = realloc(mc->m, cap * sizeof(*m));

		if (!m) {
			mc->oom = true;
			return;
		}
		mc->m = m;
		mc->cap = cap;
	}
	mc->m[mc->n++] = (struct moved){ va, ps, pfn, entry };
}

static int do_mremap(struct sim *s, const struct os_event *ev)
{
	vaddr_t old = ev->addr, olen = page_align(ev->len), nlen = page_align(ev->new_len);
	vaddr_t nw = ev->new_addr;
	struct vma *v = vma_find(&s->vmas, old);
	unsigned long flags = v ? v->flags & ~VM_IMPLICIT : VM_READ | VM_WRITE;
	struct move_ctx mc = { 0 };
	vaddr_t keep = olen < nlen ? olen : nlen;

	if (old + olen < old || nw + nlen < nw || old + olen > s->va_limit || nw + nlen > s->va_limit)
		goto range;
	if (nw == old) {
		if (nlen < olen)
			return do_unmap(s, old + nlen, old + olen);
		if (nlen > olen) {
			zap_range(s, old + olen, old + nlen, true);
			vma_remove(&s->vmas, old + olen, old + nlen);
			return vma_insert(&s->vmas, old + olen, old + nlen, flags);
		}
		return 0;
	}
	/* moved: take the leaves of the kept part, drop the rest, map them at nw */
	if ((nw - old) & (PMD_SIZE - 1))
		for (vaddr_t a = old & ~(PMD_SIZE - 1); a < old + keep; a += PMD_SIZE)
			thp_split_pmd_at(s, a); /* a THP cannot move to a misaligned place whole */
	widen_to_huge(s, &old, &(vaddr_t){ old + keep });
	pt_unmap_range(&s->pt, ev->addr & ~(PAGE_SIZE - 1), ev->addr + keep, true, collect_leaf, &mc);
	if (mc.oom)
		goto oom;
	do_unmap(s, old, ev->addr + olen);
	mmu_flush_all(s);
	s->st.tlb_invalidations++;
	do_unmap(s, nw, nw + nlen);
	for (size_t i = 0; i < mc.n; i++) {
		vaddr_t to = mc.m[i].va - (ev->addr & ~(PAGE_SIZE - 1)) + nw;

		if ((mc.m[i].ps == PS_2M && (to & (PMD_SIZE - 1))) ||
		    (mc.m[i].ps == PS_1G && (to & (PUD_SIZE - 1)))) {
			/* the huge page cannot move there whole: drop it (refaults) */
			unmap_leaf(s, mc.m[i].va, mc.m[i].ps, mc.m[i].pfn, 0);
			continue;
		}
		if (mc.m[i].pfn == PFN_NONE) { /* a swap entry moves as it is */
			if (pt_map_swap(&s->pt, to, pte_pfn(mc.m[i].entry))) {
				unmap_leaf(s, mc.m[i].va, PS_4K, PFN_NONE, mc.m[i].entry);
				free(mc.m);
				goto oom;
			}
			continue;
		}
		if (pt_map(&s->pt, to, mc.m[i].ps, mc.m[i].pfn, mc.m[i].entry & PTE_RW)) {
			unmap_leaf(s, mc.m[i].va, mc.m[i].ps, mc.m[i].pfn, 0);
			free(mc.m);
			goto oom;
		}
		if (mc.m[i].ps == PS_4K)
			sim_rmap_set(s, mc.m[i].pfn, to);
		else if (mc.m[i].ps == PS_2M && thp_is_folio(s, mc.m[i].pfn))
			s->thp.folio[mc.m[i].pfn >> HPAGE_PMD_ORDER].va = to;
		if (mc.m[i].ps == PS_2M &&
		    (mc.m[i].pfn == s->thp.huge_zero_pfn || thp_is_folio(s, mc.m[i].pfn)) &&
		    thp_deposit(s, to, thp_withdraw(s, mc.m[i].va))) {
			free(mc.m);
			goto oom;
		}
	}
	free(mc.m);
	return vma_insert(&s->vmas, nw, nw + nlen, flags);
range:
	s->failed = true;
	return err_set(&s->err, s->trace_name, ev->line, 0, "mremap beyond the address space");
oom:
	s->failed = true;
	return err_set(&s->err, s->trace_name, ev->line, 0, "out of simulated or host memory in mremap");
}

int sim_event(struct sim *s, const struct os_event *ev)
{
	vaddr_t start, end;

	if (ev->kind != EV_BRK && ev->kind != EV_MREMAP && ev_range(s, ev, &start, &end))
		return -1;
	switch (ev->kind) {
	case EV_MMAP: {
		unsigned long flags = prot_flags(ev->prot);

		if (ev->flags & MAP_SHARED_)
			flags |= VM_SHARED;
		if (ev->flags & MAP_HUGETLB_)
			flags |= VM_HUGETLB;
		if (ev->flags & MAP_STACK_)
			flags |= VM_NOHUGEPAGE; /* c4608d1bf7c6, Linux 6.7 */
		if (start == end)
			return 0;
		if (do_unmap(s, start, end) || vma_insert(&s->vmas, start, end, flags))
			goto oom;
		return 0;
	}
	case EV_MUNMAP:
		return do_unmap(s, start, end) ? -1 : 0;
	case EV_MPROTECT: {
		unsigned long set = prot_flags(ev->prot);
		uint64_t n;

		widen_to_huge(s, &start, &end);
		if (start != (ev->addr & ~(PAGE_SIZE - 1)) || end != ev->addr + page_align(ev->len))
			zap_range(s, start, end, false); /* partial huge page: see the header */
		n = pt_protect_range(&s->pt, start, end, set & VM_WRITE, s->thp.zero_pfn,
				     s->thp.huge_zero_pfn);
		sim_shootdown(s, start, end, n);
		return vma_change_flags(&s->vmas, start, end, set, (VM_READ | VM_WRITE | VM_EXEC) & ~set);
	}
	case EV_MADVISE:
		switch (ev->advice) {
		case MADV_DONTNEED_:
			zap_range(s, start, end, false);
			return 0;
		case MADV_HUGEPAGE_:
			if (s->cfg.mode == MODE_THP)
				thp_register(s); /* khugepaged_enter_vma() */
			return vma_change_flags(&s->vmas, start, end, VM_HUGEPAGE, VM_NOHUGEPAGE);
		case MADV_NOHUGEPAGE_:
			return vma_change_flags(&s->vmas, start, end, VM_NOHUGEPAGE, VM_HUGEPAGE);
		case MADV_COLLAPSE_:
			/* madvise_collapse(): synchronous, ignores max_ptes_* and young */
			if (s->cfg.mode == MODE_THP)
				for (vaddr_t h = (start + PMD_SIZE - 1) & ~(PMD_SIZE - 1); h + PMD_SIZE <= end;
				     h += PMD_SIZE)
					khugepaged_scan_pmd(s, h, true);
			return s->failed ? -1 : 0;
		default:
			return 0; /* advice that changes no mapping in this model */
		}
	case EV_BRK: {
		vaddr_t nb = ev->addr;

		if (nb >= s->va_limit)
			goto range;
		if (!s->brk_start) {
			s->brk_start = s->brk = nb;
			return 0;
		}
		if (nb < s->brk_start)
			return 0; /* brk below the start fails in the kernel; nothing changes */
		if (page_align(nb) > page_align(s->brk)) {
			zap_range(s, page_align(s->brk), page_align(nb), true);
			vma_remove(&s->vmas, page_align(s->brk), page_align(nb));
			if (vma_insert(&s->vmas, page_align(s->brk), page_align(nb), VM_READ | VM_WRITE | VM_BRK))
				goto oom;
		} else if (page_align(nb) < page_align(s->brk)) {
			do_unmap(s, page_align(nb), page_align(s->brk));
		}
		s->brk = nb;
		return 0;
	}
	case EV_MREMAP:
		return do_mremap(s, ev);
	default:
		return 0;
	}
range:
	s->failed = true;
	return err_set(&s->err, s->trace_name, ev->line, 0, "brk beyond the address space");
oom:
	s->failed = true;
	return err_set(&s->err, s->trace_name, ev->line, 0, "out of host memory");
}

/* --- the replay loop ---------------------------------------------------- */

/* A reference crossing 4 KiB boundaries: one lookup per page it touches (rare). */
static __attribute__((cold, noinline)) void access_crossing(struct sim *s, vaddr_t va, uint32_t size,
							     enum tlb_side side, bool write)
{
	for (vaddr_t p = va, last = va + size - 1;; p = (p & ~(PAGE_SIZE - 1)) + PAGE_SIZE) {
		mmu_access(s, p, side, write);
		if ((p >> PAGE_SHIFT) == (last >> PAGE_SHIFT) || p + PAGE_SIZE < p)
			break;
	}
}

/*
 * A reference of @size bytes: one lookup per 4 KiB page it touches. Forced inline
 * with mmu_access(): gcc otherwise outlines mmu_access, and the per-reference call
 * costs 25% more simulator instructions on the validation trace (callgrind:
 * 401M with the call, 320M without).
 */
static inline __attribute__((always_inline)) void access_bytes(struct sim *s, vaddr_t va, uint32_t size,
								enum tlb_side side, bool write)
{
	if (likely((va & (PAGE_SIZE - 1)) + size <= PAGE_SIZE))
		mmu_access(s, va, side, write);
	else
		access_crossing(s, va, size, side, write);
}

static void timeline_row(struct sim *s, cycles_t now);

/* One record (the loop body of sim_run_batch). */
static inline __attribute__((always_inline)) void run_one(struct sim *s, const struct trace_batch *b,
							  const struct trace_rec *r)
{
	uint32_t k = r->kind;

	s->nrec[k]++;
	/*
	 * I, L, S without a switch: the kinds interleave irregularly, and one
	 * well-predicted test beats an indirect jump (perf: -18% cycles on mtr).
	 */
	if (likely(k <= R_STORE)) {
		access_bytes(s, r->addr, r->size, k != R_IFETCH, k == R_STORE);
	} else if (k == R_MODIFY) {
		access_bytes(s, r->addr, r->size, SIDE_D, false);
		access_bytes(s, r->addr, r->size, SIDE_D, true);
	} else if (k == R_EVENT) {
		s->rec_no += (uint64_t)(r - b->recs);
		sim_event(s, &b->ev[r->size]);
		s->rec_no -= (uint64_t)(r - b->recs);
	} else if (k == R_INSNS) {
		s->st.instructions += r->size;
	} else {
		BUG_ON(1);
	}
}

static int batch_end(struct sim *s, const struct trace_batch *b, struct err *e);

int sim_run_batch(struct sim *s, const struct trace_batch *b, struct err *e)
{
	const struct trace_rec *r = b->recs, *end = b->recs + b->n;

	for (; r < end; r++) {
		run_one(s, b, r);
		if (unlikely(s->failed))
			return fail_at(s, (uint64_t)(r - b->recs), e);
	}
	return batch_end(s, b, e);
}

/*
 * The ops of a batch summary, one uint64_t each. An access is its address (below
 * 2^57, trace.h) with its kind in the top two bits. BOP_OTHER ops are either a
 * run (BOP_SEG: its memo hits per side in bits 0-15 and 16-31, which sides it
 * touches, and whether the next word counts R_INSNS instructions in it) or a
 * record to replay (its index in the low 32 bits). A run touches, on each side,
 * the page of the side's last access op, so the op need not say which.
 */
#define BOP_SHIFT 62
#define BOP_IFETCH 0ULL
#define BOP_LOAD 1ULL
#define BOP_STORE 2ULL
#define BOP_OTHER 3ULL
#define BOP_SEG (1ULL << 32)
#define BOP_SEG_I (1ULL << 33)      /* the run has ifetches */
#define BOP_SEG_D (1ULL << 34)      /* the run has data references */
#define BOP_SEG_INSNS (1ULL << 35)  /* the next word: R_INSNS instructions in the run */
#define BOP_SEG_W (1ULL << 36)      /* the run has stores: the D memo must be writable */
#define BOP_ADDR_MASK ((1ULL << BOP_SHIFT) - 1)

/*
 * The records of kinds R_IFETCH..R_MODIFY, counted in one register: kind k adds
 * 1 << (16 k) (a batch has at most TRACE_BATCH < 2^16 records of a kind). A run's
 * counts are the difference across it -- no per-kind counters in memory, whose
 * increments chain through store forwarding.
 */
#define PK_COUNT(pk, k) ((uint32_t)((pk) >> (16 * (k))) & 0xffff)

/* The run op for the access records counted by @pk (a difference of PK counts). */
static inline uint64_t seg_op(uint64_t pk)
{
	uint64_t ci = PK_COUNT(pk, R_IFETCH), cd = PK_COUNT(pk, R_LOAD) + PK_COUNT(pk, R_STORE),
		 cm = PK_COUNT(pk, R_MODIFY);

	/* hits: I <= TRACE_BATCH, D <= 2 TRACE_BATCH (an M counts twice): 16 bits each */
	return BOP_OTHER << BOP_SHIFT | BOP_SEG | (ci ? BOP_SEG_I : 0) | (cd + cm ? BOP_SEG_D : 0) |
	       (PK_COUNT(pk, R_STORE) + cm ? BOP_SEG_W : 0) | (cd + 2 * cm) << 16 | ci;
}

void sim_batch_summary_free(struct batch_summary *sum)
{
	free(sum->op);
	free(sum->op_rec);
	memset(sum, 0, sizeof(*sum));
}

int sim_batch_summarize(const struct trace_batch *b, struct batch_summary *sum)
{
	/*
	 * rep[k]: the page a record of kind k repeats on -- the side's last page
	 * (VPN_NONE: nothing repeats). A store repeats too: the simulator applies a
	 * run with stores only if its memo's translation is writable, else (the
	 * zero page, before its first write) it replays the run.
	 */
	uint64_t rep[4] = { VPN_NONE, VPN_NONE, VPN_NONE, VPN_NONE };
	static const uint64_t pk_one[4] = { 1, 1ULL << 16, 1ULL << 32, 1ULL << 48 };
	uint64_t pk = 0, pk0 = 0;   /* access records so far, and before the open run (PK_COUNT) */
	uint64_t *op, *cur = NULL;  /* the open run's op */
	uint64_t *cur_insns = NULL; /* its R_INSNS word, if it has one */
	uint32_t *op_rec, nseg = 0;
	/* locals: the output stores could alias *b as far as gcc knows */
	const struct trace_rec *recs = b->recs;
	size_t n = b->n;

	_Static_assert(TRACE_BATCH < 1 << 15, "a run's D hits fit 16 bits, kind counts 16 bits");
	if (n > TRACE_BATCH)
		return -1; /* not from a reader: the caller replays it plainly */
	if (sum->cap_op < 2 * n) { /* at most two ops (an M, a run and its R_INSNS) per record */
		uint64_t *o = realloc(sum->op, 2 * n * sizeof(*o));
		uint32_t *orec = o ? realloc(sum->op_rec, 2 * n * sizeof(*orec)) : NULL;

		if (o)
			sum->op = o;
		if (!orec)
			return -1;
		sum->op_rec = orec;
		sum->cap_op = 2 * n;
	}
	op = sum->op;
	op_rec = sum->op_rec;
	memset(sum->kinds, 0, sizeof(sum->kinds));
	sum->insns = 0;
	for (const struct trace_rec *r = recs, *end = recs + n; r < end; r++) {
		uint32_t k = r->kind, i;

		if (likely(k <= R_MODIFY)) {
			uint64_t vpn = r->addr >> PAGE_SHIFT;
			bool cross = (r->addr & (PAGE_SIZE - 1)) + r->size > PAGE_SIZE;

			pk += pk_one[k];
			if (vpn == rep[k] && likely(!cross)) {
				if (!cur) {
					i = (uint32_t)(r - recs);
					cur = op++;
					*op_rec++ = i;
					cur_insns = NULL;
					pk0 = pk - pk_one[k];
					nseg++;
				}
				continue;
			}
			i = (uint32_t)(r - recs);
			if (cur) {
				*cur = seg_op(pk - pk_one[k] - pk0) | (cur_insns ? BOP_SEG_INSNS : 0);
				cur = NULL;
			}
			if (unlikely(cross || r->addr > BOP_ADDR_MASK)) {
				/* replayed; the memo then ends elsewhere: no run on this side */
				*op++ = BOP_OTHER << BOP_SHIFT | i;
				*op_rec++ = i;
				vpn = VPN_NONE;
			} else if (k == R_MODIFY) {
				op[0] = BOP_LOAD << BOP_SHIFT | r->addr;
				op[1] = BOP_STORE << BOP_SHIFT | r->addr;
				op += 2;
				op_rec[0] = op_rec[1] = i;
				op_rec += 2;
			} else {
				*op++ = (uint64_t)k << BOP_SHIFT | r->addr; /* R_IFETCH.. R_STORE == BOP_* */
				*op_rec++ = i;
			}
			if (k == R_IFETCH) {
				rep[R_IFETCH] = vpn;
			} else {
				rep[R_LOAD] = vpn;
				rep[R_STORE] = rep[R_MODIFY] = vpn; /* a run's stores: BOP_SEG_W */
			}
		} else {
			i = (uint32_t)(r - recs);
			sum->kinds[k]++;
			if (k == R_INSNS) {
				sum->insns += r->size;
				if (cur) { /* folds into an open run (its ops are the last ones); never opens one */
					if (!cur_insns) {
						cur_insns = op++;
						*cur_insns = 0;
						*op_rec = op_rec[-1]; /* the run's first record */
						op_rec++;
					}
					*cur_insns += r->size;
					continue;
				}
			} else if (cur) {
				*cur = seg_op(pk - pk0) | (cur_insns ? BOP_SEG_INSNS : 0);
				cur = NULL;
			}
			*op++ = BOP_OTHER << BOP_SHIFT | i;
			*op_rec++ = i;
			if (k == R_EVENT)
				rep[0] = rep[1] = rep[2] = rep[3] = VPN_NONE;
		}
	}
	if (cur)
		*cur = seg_op(pk - pk0) | (cur_insns ? BOP_SEG_INSNS : 0);
	for (int k = R_IFETCH; k <= R_MODIFY; k++)
		sum->kinds[k] = PK_COUNT(pk, k);
	sum->nop = (size_t)(op - sum->op);
	sum->n = nseg;
	return 0;
}
int sim_run_batch_summarized(struct sim *s, const struct trace_batch *b,
			     const struct batch_summary *sum, struct err *e)
{
	uint64_t nrec0[R_KIND_NR], insns0 = s->st.instructions;
	/*
	 * The page of each side's last access op: the page a run on that side
	 * repeats. VPN_NONE after a replayed record that may move the memo (the
	 * summary then opens no run on that side before the next access op).
	 */
	uint64_t lastop[2] = { VPN_NONE, VPN_NONE };

	if (!sum || s->data_refs) /* data_refs: every data reference goes to the cache */
		return sim_run_batch(s, b, e);
	memcpy(nrec0, s->nrec, sizeof(nrec0));
	/* locals: gcc cannot tell that the simulator's stores leave *sum alone */
	const uint64_t *ops = sum->op;
	size_t nop = sum->nop;

	for (size_t i = 0; i < nop; i++) {
		uint64_t op = ops[i], ty = op >> BOP_SHIFT;
		vaddr_t va = op & BOP_ADDR_MASK;

		/*
		 * Each kind its own call: side and write stay constants in mmu_access()
		 * (one path with them as data mispredicts more: 8 points 89 -> 101 ms).
		 * Only the slow path can fail (a fault), so only it is tested.
		 */
		if (ty == BOP_LOAD) {
			lastop[SIDE_D] = va >> PAGE_SHIFT;
			if (likely(mmu_access_inline(s, va, SIDE_D, false, false)))
				continue;
			mmu_access_slow(s, va, SIDE_D, false);
		} else if (ty == BOP_IFETCH) {
			lastop[SIDE_I] = va >> PAGE_SHIFT;
			s->st.instructions++; /* sim_now() adds it; the counts come at the end */
			if (likely(mmu_access_inline(s, va, SIDE_I, false, false)))
				continue;
			mmu_access_slow(s, va, SIDE_I, false);
		} else if (ty == BOP_STORE) {
			lastop[SIDE_D] = va >> PAGE_SHIFT;
			if (likely(mmu_access_inline(s, va, SIDE_D, true, false)))
				continue;
			mmu_access_slow(s, va, SIDE_D, true);
		} else if (op & BOP_SEG) {
			size_t at = i;
			uint64_t insns = op & BOP_SEG_INSNS ? ops[++i] : 0;

			/*
			 * Every record of the run a memo hit, if this simulator's memo holds
			 * those pages; else (no L1 array of that size, a flush, ...) it is
			 * replayed record by record. The asm keeps gcc from adding the two
			 * sides' hits as one 16-byte vector: loading that right after
			 * mmu_access()'s 8-byte increments stalls store forwarding (perf: a
			 * fifth of an 8-point sweep's cycles).
			 */
			if ((!(op & BOP_SEG_I) ||
			     (lastop[SIDE_I] != VPN_NONE && lastop[SIDE_I] == s->last_vpn[SIDE_I])) &&
			    (!(op & BOP_SEG_D) ||
			     (lastop[SIDE_D] != VPN_NONE && lastop[SIDE_D] == s->last_vpn[SIDE_D])) &&
			    (!(op & BOP_SEG_W) || !(s->last_pfn[SIDE_D] & TLB_RO))) {
				s->memo_hits[SIDE_I] += op & 0xffff;
				__asm__("" : "+m"(s->memo_hits[SIDE_I]));
				s->memo_hits[SIDE_D] += (op >> 16) & 0xffff;
				s->st.instructions += (op & 0xffff) + insns;
				continue;
			}
			/* the run's records: from its first to the next op's record */
			for (uint32_t j = sum->op_rec[at], end = i + 1 < nop ? sum->op_rec[i + 1] : (uint32_t)b->n;
			     j < end; j++) {
				run_one(s, b, &b->recs[j]);
				if (unlikely(s->failed))
					return fail_at(s, j, e);
			}
		} else {
			const struct trace_rec *r = &b->recs[(uint32_t)op];

			if (r->kind != R_INSNS)
				lastop[SIDE_I] = lastop[SIDE_D] = VPN_NONE;
			run_one(s, b, r);
		}
		if (unlikely(s->failed))
			return fail_at(s, sum->op_rec[i], e);
	}
	/* the whole batch ran: every record counted once, by kind */
	for (int k = 0; k < R_KIND_NR; k++)
		s->nrec[k] = nrec0[k] + sum->kinds[k];
	s->st.instructions = insns0 + sum->insns;
	return batch_end(s, b, e);
}

/* After a batch: rec_no, the timeline and khugepaged (simulated time). */
static int batch_end(struct sim *s, const struct trace_batch *b, struct err *e)
{
	s->rec_no += b->n;
	if (unlikely(s->timeline)) {
		cycles_t now = sim_now(s);

		for (; now >= s->tl_next; s->tl_next += s->tl_interval)
			timeline_row(s, s->tl_next);
	}
	/* background work due by simulated time: one test per batch */
	if (unlikely(s->thp.mm_registered) && sim_now(s) >= s->khugepaged.next_wake) {
		cycles_t now = sim_now(s);

		while (now >= s->khugepaged.next_wake && !s->failed)
			khugepaged_do_scan(s);
		if (s->failed) {
			*e = s->err;
			return -1;
		}
	}
	return 0;
}

void sim_timeline_start(struct sim *s, FILE *f, cycles_t interval)
{
	s->timeline = f;
	s->tl_interval = interval ? interval : 1;
	s->tl_next = s->tl_interval;
}

/* One timeline row (time in simulated ms); interval columns are deltas. */
static void timeline_row(struct sim *s, cycles_t now)
{
	uint64_t cur[4] = { s->st.walks, s->st.walk_cycles, s->st.pgfault,
			    s->st.thp_collapse_alloc };
	uint64_t huge = (s->st.nr_anon_transparent_hugepages + s->st.nr_hugetlb_pages) * PMD_SIZE +
			s->st.nr_hugetlb_pages_1g * PUD_SIZE;
	uint64_t rss = s->st.nr_anon_pages * PAGE_SIZE + huge;

	fprintf(s->timeline, "%s,%.6f,%llu,%llu,%llu,%.6f", os_mode_name[s->cfg.mode],
		(double)now / ((double)s->cfg.freq_mhz * 1000.0), (unsigned long long)now,
		(unsigned long long)rss, (unsigned long long)huge,
		rss ? (double)huge / (double)rss : 0.0);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		fprintf(s->timeline, ",%llu", (unsigned long long)s->buddy.free_area[o].nr_free);
	fprintf(s->timeline, ",%d", buddy_fragmentation_index(&s->buddy, HPAGE_PMD_ORDER));
	for (int i = 0; i < 4; i++)
		fprintf(s->timeline, ",%llu", (unsigned long long)(cur[i] - s->tl_last[i]));
	fputc('\n', s->timeline);
	memcpy(s->tl_last, cur, sizeof(cur));
}

void sim_timeline_header(FILE *f)
{
	fprintf(f, "mode,time_ms,cycles,rss_bytes,huge_bytes,huge_coverage");
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		fprintf(f, ",free_order%u", o);
	fprintf(f, ",fragmentation_index_order9,walks,walk_cycles,faults,collapses\n");
}

cycles_t sim_now(const struct sim *s)
{
	uint64_t insns = s->nrec[R_IFETCH] + s->st.instructions;

	return (cycles_t)((double)insns * s->cfg.cpi) + s->st.cyc_translation + s->st.walk_cycles +
	       s->st.cyc_fault + s->st.cyc_data + s->st.cyc_compaction + s->st.cyc_reclaim;
}

/* --- the end of a run --------------------------------------------------- */

void sim_finish(struct sim *s)
{
	struct stats *st = &s->st;
	uint64_t l1_misses = 0;

	mmu_forget(s); /* folds the memo's hits into the counters */
	st->ifetch = s->nrec[R_IFETCH];
	st->load = s->nrec[R_LOAD];
	st->store = s->nrec[R_STORE];
	st->modify = s->nrec[R_MODIFY];
	st->instructions += st->ifetch;
	for (int side = 0; side < 2; side++) {
		st->lookups[side] = 0;
		for (int ps = 0; ps < PS_NR; ps++) {
			st->lookups[side] += st->l1[side].hits[ps] + st->l1[side].misses[ps];
			l1_misses += st->l1[side].misses[ps];
		}
	}
	/* the zero pages are not resident memory of the process */
	st->huge_bytes = (st->nr_anon_transparent_hugepages + st->nr_hugetlb_pages) * PMD_SIZE +
			 st->nr_hugetlb_pages_1g * PUD_SIZE;
	st->rss_bytes = st->nr_anon_pages * PAGE_SIZE + st->huge_bytes;
	st->huge_coverage = st->rss_bytes ? (double)st->huge_bytes / (double)st->rss_bytes : 0.0;
	st->free_pages = s->buddy.nr_free_pages;
	st->fragmentation_index_order9 = buddy_fragmentation_index(&s->buddy, HPAGE_PMD_ORDER);
	st->cpi = s->cfg.cpi;
	st->cyc_instructions = (cycles_t)((double)st->instructions * s->cfg.cpi + 0.5);
	st->cyc_translation += st->walk_cycles;
	st->cyc_total = st->cyc_instructions + st->cyc_translation + st->cyc_fault + st->cyc_data +
			st->cyc_compaction + st->cyc_reclaim;
	st->swap_bytes = s->pt.nr_swap * PAGE_SIZE;
	(void)l1_misses;
}

/* --- invariants --------------------------------------------------------- */

struct inv_ctx {
	struct sim *s;
	uint8_t *owned; /* frames reached from the page table */
	enum page_size ps;
	uint64_t thp_pmds, subpages, pages_1g, lru_pages;
	uint8_t *slots; /* swap slots reached from swap entries */
};

static void own(struct inv_ctx *c, pfn_t pfn, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		pfn_t f = pfn + i;

		BUG_ON(f >= c->s->buddy.nr_pages);
		BUG_ON(c->owned[f / 8] & (1 << (f % 8))); /* mapped or used twice */
		c->owned[f / 8] |= (uint8_t)(1 << (f % 8));
	}
}

static void inv_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct inv_ctx *c = ctx;
	struct sim *s = c->s;
	unsigned order = 0;

	BUG_ON(!vma_find(&s->vmas, va));
	if (ps == PS_1G) {
		BUG_ON(!hugetlb_is_1g_in_use(&s->hugetlb, pfn));
		c->pages_1g++;
		return;
	}
	if ((ps == PS_4K && pfn == s->thp.zero_pfn) || (ps == PS_2M && pfn == s->thp.huge_zero_pfn)) {
		BUG_ON(entry & PTE_RW); /* the zero pages are shared and never writable */
		return;
	}
	if (thp_is_folio(s, pfn)) {
		pfn_t head = pfn & ~(HPAGE_PMD_NR - 1);
		const struct folio *f = &s->thp.folio[head >> HPAGE_PMD_ORDER];
		unsigned i = (unsigned)(pfn - head);

		BUG_ON(!buddy_is_allocated(&s->buddy, head, &order) || order != HPAGE_PMD_ORDER);
		BUG_ON(!lru_on(s, head));
		if (ps == PS_2M) {
			BUG_ON(!(f->flags & FOLIO_PMD_MAPPED) || f->nr_mapped != HPAGE_PMD_NR);
			c->thp_pmds++;
			own(c, pfn, HPAGE_PMD_NR);
		} else {
			BUG_ON(f->flags & FOLIO_PMD_MAPPED);
			BUG_ON(!(f->mapped[i / 64] & (1ULL << (i % 64))));
			BUG_ON(s->rmap[pfn] != va + 1);
			c->subpages++;
			own(c, pfn, 1);
		}
		return;
	}
	BUG_ON(!buddy_is_allocated(&s->buddy, pfn, &order));
	BUG_ON(order != (ps == PS_4K ? 0 : HPAGE_PMD_ORDER));
	if (ps == PS_4K) {
		BUG_ON(s->rmap[pfn] != va + 1); /* the reverse map compaction relies on */
		BUG_ON(!lru_on(s, pfn));       /* every anonymous page can be reclaimed */
		c->lru_pages++;
	}
	own(c, pfn, 1UL << order);
}

static void inv_table(void *ctx, pfn_t pfn, unsigned level)
{
	struct inv_ctx *c = ctx;
	unsigned order = 1;

	(void)level;
	BUG_ON(!buddy_is_allocated(&c->s->buddy, pfn, &order) || order != 0);
	own(c, pfn, 1);
}

static void inv_tlb_entry(void *ctx, uint64_t key, uint64_t payload)
{
	struct inv_ctx *c = ctx;
	enum page_size ps = c->ps, got;
	pfn_t pfn;

	if ((int)ps < 0) { /* STLB key: size in the low bits */
		ps = (enum page_size)(key & 3);
		key >>= 2;
	}
	BUG_ON(!pt_lookup(&c->s->pt, key << page_shift_of(ps), &got, &pfn, NULL));
	BUG_ON(got != ps || pfn != (payload & ~TLB_RO));
}

struct pwc_ctx {
	struct sim *s;
	unsigned shift, level;
};

static void inv_pwc_entry(void *ctx, uint64_t key, uint64_t payload)
{
	struct pwc_ctx *c = ctx;

	BUG_ON((uint64_t)(uintptr_t)pt_table_at(&c->s->pt, key << c->shift, c->level) != payload);
}

static void inv_swap(void *ctx, vaddr_t va, uint64_t slot)
{
	struct inv_ctx *c = ctx;

	BUG_ON(!vma_find(&c->s->vmas, va));
	BUG_ON(!swap_slot_used(&c->s->swap, slot) || slot == 0);
	BUG_ON(c->slots[slot / 8] & (1 << (slot % 8))); /* one entry per slot */
	c->slots[slot / 8] |= (uint8_t)(1 << (slot % 8));
}

void sim_check_invariants(struct sim *s)
{
	struct inv_ctx c = { s, calloc((s->buddy.nr_pages + 7) / 8, 1), PS_4K, 0, 0, 0, 0,
			     calloc(s->swap.nr_slots / 8 + 1, 1) };
	uint64_t thp_folios = 0;
	uint64_t folios_mapped = 0;
	static const unsigned shift[PWC_NR] = { 48, 39, 30, 21 }, level[PWC_NR] = { 4, 3, 2, 1 };

	BUG_ON(!c.owned || !c.slots);
	buddy_check_invariants(&s->buddy);
	swap_check_invariants(&s->swap);
	lru_check_invariants(s);
	pt_for_each_swap(&s->pt, inv_swap, &c);
	/* every slot in use but the header belongs to exactly one swap entry */
	BUG_ON(s->swap.nr_slots && s->pt.nr_swap != s->swap.nr_used - 1);
	BUG_ON(s->pt.nr_leaves[PS_1G] != s->st.nr_hugetlb_pages_1g);
	pt_check_invariants(&s->pt);
	vma_check_invariants(&s->vmas);
	pt_for_each_leaf(&s->pt, inv_leaf, &c);
	pt_for_each_table(&s->pt, inv_table, &c);
	BUG_ON(s->pt.nr_leaves[PS_4K] != s->st.nr_anon_pages + s->thp.nr_zero_ptes);
	BUG_ON(s->pt.nr_leaves[PS_2M] != s->st.nr_hugetlb_pages + s->thp.nr_zero_pmds +
					     s->st.nr_anon_transparent_hugepages);
	BUG_ON(c.thp_pmds != s->st.nr_anon_transparent_hugepages);
	BUG_ON(c.pages_1g != s->hugetlb.in_use_1g);
	/* a deposited table per THP or zero PMD, counted as a page-table page */
	BUG_ON(s->pt.nr_tables + s->thp.dep_n != s->st.nr_page_table_pages);
	BUG_ON(s->thp.dep_n != s->thp.nr_zero_pmds + s->st.nr_anon_transparent_hugepages);
	for (size_t i = 0; i < s->thp.dep_cap; i++)
		if (s->thp.dep_key[i])
			own(&c, s->thp.dep_val[i], 1);
	/* every PTE-mapped subpage is in its folio's map, and nothing else is */
	for (pfn_t f = 0; s->thp.folio && f < s->buddy.nr_pages >> HPAGE_PMD_ORDER; f++) {
		if ((s->thp.folio[f].flags & FOLIO_THP) && !(s->thp.folio[f].flags & FOLIO_PMD_MAPPED))
			folios_mapped += s->thp.folio[f].nr_mapped;
		thp_folios += !!(s->thp.folio[f].flags & FOLIO_THP);
	}
	BUG_ON(folios_mapped != c.subpages);
	/* the LRU holds exactly the anonymous folios: 4K pages and THPs */
	BUG_ON(s->lru.nr[0] + s->lru.nr[1] != c.lru_pages + thp_folios * HPAGE_PMD_NR);
	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			tlb_array_check_invariants(&s->tlb.l1[side][ps]);
			c.ps = (enum page_size)ps;
			tlb_array_for_each(&s->tlb.l1[side][ps], inv_tlb_entry, &c);
		}
	c.ps = (enum page_size)-1;
	for (unsigned i = 0; i < s->tlb.nr_stlb; i++) {
		tlb_array_check_invariants(&s->tlb.stlb[i]);
		tlb_array_for_each(&s->tlb.stlb[i], inv_tlb_entry, &c);
	}
	for (int i = 0; i < PWC_NR; i++) {
		struct pwc_ctx pc = { s, shift[i], level[i] };

		tlb_array_check_invariants(&s->pwc[i]);
		tlb_array_for_each(&s->pwc[i], inv_pwc_entry, &pc);
	}
	/* the memo must agree with the L1 */
	for (int side = 0; side < 2; side++)
		if (s->last_vpn[side] != VPN_NONE) {
			enum page_size ps = s->last_ps[side];

			BUG_ON(tlb_array_probe(&s->tlb.l1[side][ps],
					       (s->last_vpn[side] << PAGE_SHIFT) >> page_shift_of(ps)) < 0);
		}
	free(c.owned);
	free(c.slots);
}
