/*
 * thp.c - transparent huge pages, after Linux 6.18 (earlier behaviour behind the
 * os.kernel gates of config.h): mm/huge_memory.c do_huge_pmd_anonymous_page(),
 * __thp_vma_allowable_orders(), vma_thp_gfp_mask(), do_huge_pmd_wp_page(),
 * do_huge_zero_wp_pmd(), __split_huge_pmd(), __folio_split(),
 * deferred_split_folio() and the huge zero page; mm/memory.c alloc_anon_folio()
 * for the multi-size THPs (mTHP) below PMD order.
 *
 * Fault: a huge fault needs THP allowed for the VMA (enabled=always, or madvise
 * with VM_HUGEPAGE; never VM_NOHUGEPAGE), the aligned 2M range inside the VMA and
 * an empty PMD (no PTE table yet); otherwise it falls back silently. It gives the
 * VMA its anon_vma first, then a read fault
 * with use_zero_page maps the huge zero page read-only: allocated once
 * (thp_zero_page_alloc) as GFP_TRANSHUGE without __GFP_MOVABLE - an UNMOVABLE
 * block, with direct compaction and reclaim whatever defrag says - and
 * retried by every read fault while it fails (thp_zero_page_alloc_failed,
 * thp_fault_fallback); with os.thp.huge_zero_allocated it exists from the
 * start, as on a machine where another program already made it. A write fault allocates order 9 under the gfp mask of
 * vma_thp_gfp_mask(): defrag always gives GFP_TRANSHUGE (| __GFP_NORETRY
 * without VM_HUGEPAGE); defer+madvise and madvise give __GFP_DIRECT_RECLAIM to
 * VM_HUGEPAGE VMAs only; the rest is GFP_TRANSHUGE_LIGHT, which neither compacts
 * nor reclaims. vma_alloc_folio() of a NUMA kernel tries the local node with
 * __GFP_NORETRY first, then, if the mask allows direct reclaim, once more under
 * the mask itself: two slow paths (page_alloc.c). Failure counts
 * thp_fault_fallback and falls back to the mTHP orders, then 4K. Success
 * deposits a page table, zeroes 512 pages, maps the PMD: thp_fault_alloc.
 *
 * mTHP (Linux 6.8+, os.thp.sizes, thp_mthp_fault()): a fault that got no PMD
 * THP takes the highest order below PMD order that the VMA allows
 * (thp_vma_allowable_orders()), that fits the VMA and whose PTEs are all none,
 * then lower orders while allocations fail (anon_fault_fallback per order); the
 * folio is mapped by PTEs, its pages order-0 blocks to the buddy allocator and
 * the LRU, its order kept in thp_state.mthp. Its per-size counters are the
 * report's "mthp" object (stats.c).
 *
 * Splits: a store to the huge zero PMD maps a fresh THP from 6.13
 * (do_huge_zero_wp_pmd()); before, or when that allocation fails, it splits
 * the PMD into 512 read-only PTEs of the 4K zero page, then breaks COW on one
 * (thp_split_pmd). Any operation covering
 * part of a THP's 2M range splits its PMD (thp_split_pmd); a partially unmapped
 * THP joins the deferred split queue (thp_deferred_split_page) and is split by the
 * shrinker, which reclaim runs (kswapd, direct reclaim: reclaim.c), never a
 * failed allocation by itself (thp_split_page), freeing its unmapped subpages.
 * A partly unmapped mTHP is queued and split the same way (split_deferred,
 * split; thp_split_page and thp_deferred_split_page count PMD order only).
 * After fork a PMD THP is mapped by both mms (fork.c copy_huge_pmd(),
 * folio.pmd_shared) and a store to it splits the PMD and copies its 4 KiB page.
 *
 * Underused THPs (6.12+, dafff3f4c850, os.thp.shrink_underused): every PMD THP a
 * fault or a collapse maps joins the deferred split queue whole (a flag,
 * FOLIO_UNDERUSED_Q, not the partially mapped list); the shrinker takes each off
 * and splits it when thp_underused() counts more zero-filled pages than
 * max_ptes_none (thp_underused_split_page). A split to order 0 maps the
 * zero-filled pages still mapped to the zero page and frees them (b1f202060afe).
 * Page contents: a page is zero-filled until a store reaches it (written[], set
 * by the store's fault and by a pass over each batch's stores, sim.c), tracked
 * in thp mode on 6.12+ (the pass costs 5-7% of the replay there), since every
 * split maps the zero-filled pages to the zero page (tests/native_mthp.sh
 * zero-remap compares the remap with this kernel); before 6.12 every page counts
 * as data and a split keeps its pages.
 *
 * Simplifications: no memcg (no charge failures: anon_fault_fallback_charge
 * stays 0); an mTHP is never migrated by compaction or made by khugepaged;
 * reclaim-side effects of
 * __GFP_KSWAPD_RECLAIM (kswapd/kcompactd wake-ups) are not modelled, only their
 * absence of stall. A read fault that falls back maps the 4K zero page
 * (fault.c); os.zero_page false (mm_forbids_zeropage()) forbids both zero pages
 * to faults, not to a split's remap: on x86-64 mm_forbids_zeropage() is always
 * false in Linux, and this machine's 6.18 kernel, whose read faults refuse the
 * zero page, remaps zero-filled pages all the same (tests/native_mthp.sh).
 */
#include <stdlib.h>
#include <string.h>

#include "filemap.h"
#include "lru.h"
#include "mmap.h"
#include "tlbflush.h"
#include "page_alloc.h"
#include "kernel.h"
#include "thp.h"
#include "util.h"
#include "vma.h"

/* --- deposits: a small open-addressing map (mm, pmd index) -> table frame -- */

/*
 * The key of the PMD at @va in the mm the kernel works on (pgtable_trans_huge_deposit()
 * files the table under that mm's PMD): the mm's serial above the PMD index (36 bits
 * cover a 57-bit address space), + 1 so that 0 marks an empty slot.
 */
static uint64_t dep_key(const struct kernel *k, vaddr_t va)
{
	return ((uint64_t)k->mm->serial << 36 | va >> PMD_SHIFT) + 1;
}

static size_t dep_slot(const struct thp_state *t, uint64_t key)
{
	size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & (t->dep_cap - 1);

	while (t->dep_key[i] && t->dep_key[i] != key)
		i = (i + 1) & (t->dep_cap - 1);
	return i;
}

int thp_deposit(struct kernel *k, vaddr_t va, pfn_t table)
{
	struct thp_state *t = &k->thp;
	uint64_t key = dep_key(k, va);
	size_t i;

	if ((t->dep_n + 1) * 2 > t->dep_cap) {
		size_t cap = t->dep_cap ? t->dep_cap * 2 : 64;
		struct thp_state n = { .dep_cap = cap };

		n.dep_key = calloc(cap, sizeof(*n.dep_key));
		n.dep_val = calloc(cap, sizeof(*n.dep_val));
		if (!n.dep_key || !n.dep_val) {
			free(n.dep_key);
			free(n.dep_val);
			k->mm->pt.host_oom = true; /* (the caller's failure is the host's) */
			return -1;
		}
		for (size_t j = 0; j < t->dep_cap; j++)
			if (t->dep_key[j]) {
				size_t kk = dep_slot(&n, t->dep_key[j]);

				n.dep_key[kk] = t->dep_key[j];
				n.dep_val[kk] = t->dep_val[j];
			}
		free(t->dep_key);
		free(t->dep_val);
		t->dep_key = n.dep_key;
		t->dep_val = n.dep_val;
		t->dep_cap = cap;
	}
	i = dep_slot(t, key);
	BUG_ON(t->dep_key[i]);
	t->dep_key[i] = key;
	t->dep_val[i] = table;
	t->dep_n++;
	return 0;
}

pfn_t thp_withdraw(struct kernel *k, vaddr_t va)
{
	struct thp_state *t = &k->thp;
	uint64_t key = dep_key(k, va);
	size_t i, j;
	pfn_t v;

	BUG_ON(!t->dep_cap);
	i = dep_slot(t, key);
	BUG_ON(t->dep_key[i] != key);
	v = t->dep_val[i];
	t->dep_key[i] = 0;
	t->dep_n--;
	/* backward-shift deletion keeps the probe chains intact */
	for (j = (i + 1) & (t->dep_cap - 1); t->dep_key[j]; j = (j + 1) & (t->dep_cap - 1)) {
		uint64_t kk = t->dep_key[j];
		pfn_t val = t->dep_val[j];

		t->dep_key[j] = 0;
		t->dep_key[dep_slot(t, kk)] = kk;
		t->dep_val[dep_slot(t, kk)] = val;
	}
	return v;
}

/* --- state ---------------------------------------------------------------- */

int thp_init(struct kernel *k)
{
	struct thp_state *t = &k->thp;

	memset(t, 0, sizeof(*t));
	t->huge_zero_pfn = PFN_NONE;
	t->zero_pfn = PFN_NONE;
	t->run_head = PFN_NONE;
	t->folio = zero_pages((k->buddy.nr_pages >> HPAGE_PMD_ORDER) + 1, sizeof(*t->folio));
	t->mthp = zero_pages(k->buddy.nr_pages, sizeof(*t->mthp));
	t->mthp_mapped = zero_pages(k->buddy.nr_pages, sizeof(*t->mthp_mapped));
	if (!t->folio || !t->mthp || !t->mthp_mapped)
		return -1;
	/*
	 * Page contents: in THP mode on 6.12+, whatever os.zero_page, max_ptes_none
	 * and shrink_underused say, since every split of an anonymous folio maps its
	 * zero-filled pages to the zero page (kernel_split_remaps_zero()). The pass
	 * over each batch's stores costs 5.1 % of the replay's instructions on the
	 * validation trace in thp mode (callgrind: 1,084.0 M -> 1,139.3 M) and 6.8 %
	 * on its mtr form (816.3 M -> 871.6 M); a run of stores to one page costs
	 * one look-up.
	 */
	t->track_written = k->cfg->mode == MODE_THP && kernel_split_remaps_zero(k->cfg->kernel);
	if (t->track_written) {
		t->written = zero_pages(k->buddy.nr_pages / 64 + 1, sizeof(*t->written));
		if (!t->written)
			return -1;
	}
	/* the 4K zero page: a kernel page, reserved for the run */
	t->zero_pfn = buddy_alloc_mt(&k->buddy, 0, MIGRATE_UNMOVABLE);
	if (t->zero_pfn == PFN_NONE)
		return -1;
	/*
	 * os.thp.huge_zero_allocated: an earlier program's read fault allocated the
	 * huge zero page (get_huge_zero_folio()), or the kernel did at boot
	 * (CONFIG_PERSISTENT_HUGE_ZERO_FOLIO, 6.18); it stays until the shrinker
	 * frees it with no user left (shrink_huge_zero_folio_scan()), which this
	 * run does not model. Taken here, uncounted: thp_zero_page_alloc counts
	 * only the run's own allocation. If memory is too fragmented to hold it,
	 * the first read fault allocates it as without the key.
	 */
	if (k->cfg->thp.huge_zero_allocated && k->cfg->zero_page && k->cfg->thp.use_zero_page)
		t->huge_zero_pfn = buddy_alloc_mt(&k->buddy, HPAGE_PMD_ORDER, MIGRATE_UNMOVABLE);
	return 0;
}

void thp_destroy(struct kernel *k)
{
	struct thp_state *t = &k->thp;

	if (t->zero_pfn != PFN_NONE && k->buddy.pages)
		buddy_free(&k->buddy, t->zero_pfn, 0);
	if (t->huge_zero_pfn != PFN_NONE && k->buddy.pages)
		buddy_free(&k->buddy, t->huge_zero_pfn, HPAGE_PMD_ORDER);
	zero_pages_free(t->folio, (k->buddy.nr_pages >> HPAGE_PMD_ORDER) + 1, sizeof(*t->folio));
	zero_pages_free(t->mthp, k->buddy.nr_pages, sizeof(*t->mthp));
	zero_pages_free(t->mthp_mapped, k->buddy.nr_pages, sizeof(*t->mthp_mapped));
	if (t->written)
		zero_pages_free(t->written, k->buddy.nr_pages / 64 + 1, sizeof(*t->written));
	free(t->dep_key);
	free(t->dep_val);
	free(t->deferred);
	memset(t, 0, sizeof(*t));
}

bool thp_is_folio(const struct kernel *k, pfn_t pfn)
{
	return k->thp.folio && (k->thp.folio[pfn >> HPAGE_PMD_ORDER].flags & FOLIO_THP);
}

/* --- page contents (6.12+) ------------------------------------------------- */

/* A THP or mTHP of @nr frames at @pfn was just allocated: zero-filled, every page. */
static void written_clear(struct thp_state *t, pfn_t pfn, unsigned nr)
{
	if (!t->track_written)
		return;
	for (pfn_t p = pfn; p < pfn + nr; p++)
		t->written[p / 64] &= ~(1ULL << (p % 64));
	/* a page marked lately may be one of these frames now */
	memset(t->wr_recent, 0, sizeof(t->wr_recent));
}

void thp_mark_written(struct kernel *k, pfn_t pfn)
{
	struct thp_state *t = &k->thp;

	if (t->track_written && (thp_is_folio(k, pfn) || t->mthp[pfn]))
		t->written[pfn / 64] |= 1ULL << (pfn % 64);
}

bool thp_page_written(const struct kernel *k, pfn_t pfn)
{
	const struct thp_state *t = &k->thp;

	if (!t->track_written || (!thp_is_folio(k, pfn) && !t->mthp[pfn]))
		return true;
	return t->written[pfn / 64] >> (pfn % 64) & 1;
}

void thp_store_seen(struct kernel *k, const struct mm *mm, vaddr_t va)
{
	struct thp_state *t = &k->thp;
	uint64_t vpn = va >> PAGE_SHIFT, *slot = &t->wr_recent[vpn & (THP_WR_RECENT - 1)];
	enum page_size ps;
	pfn_t pfn;

	if (mm != t->wr_mm) {
		memset(t->wr_recent, 0, sizeof(t->wr_recent));
		t->wr_mm = mm;
	}
	if (*slot == vpn + 1)
		return;
	if (!pt_lookup(&mm->pt, va, &ps, &pfn, NULL) || ps == PS_1G)
		return;
	if (ps == PS_2M)
		pfn += (pfn_t)(vpn & (HPAGE_PMD_NR - 1));
	thp_mark_written(k, pfn);
	*slot = vpn + 1;
}

bool thp_underused(const struct kernel *k, pfn_t head)
{
	unsigned max = k->cfg->khugepaged.max_ptes_none, zero = 0;

	if (max == HPAGE_PMD_NR - 1)
		return false;
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
		zero += !thp_page_written(k, head + i);
	return zero > max;
}

void thp_folio_new(struct kernel *k, pfn_t pfn, vaddr_t va)
{
	struct folio *f = &k->thp.folio[pfn >> HPAGE_PMD_ORDER];

	memset(f, 0, sizeof(*f));
	f->va = va;
	k->rmap_mm[pfn] = k->mm; /* the folio's mm (reclaim walks it there) */
	memset(f->mapped, 0xff, sizeof(f->mapped));
	f->nr_mapped = HPAGE_PMD_NR;
	f->flags = FOLIO_THP | FOLIO_PMD_MAPPED;
	written_clear(&k->thp, pfn, HPAGE_PMD_NR);
	/* map_anon_folio_pmd_nopf() (fault, huge zero PMD write) and collapse_huge_page():
	 * deferred_split_folio(folio, false) queues it whole while shrink_underused is 1 */
	if (kernel_shrink_underused(k->cfg->kernel) && k->cfg->thp.shrink_underused)
		f->flags |= FOLIO_UNDERUSED_Q;
	k->st->nr_anon_transparent_hugepages++;
	k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_NR_ANON]++;
	kernel_rss_changed(k);
	lru_add(&k->lru, pfn, HPAGE_PMD_NR);
}

void thp_register(struct kernel *k)
{
	khugepaged_enter_mm(k, k->mm);
}

/* --- policy --------------------------------------------------------------- */

/*
 * __thp_vma_allowable_orders() for anonymous memory: is @order enabled for @v?
 * hugepages-<size>kB/enabled always, madvise with VM_HUGEPAGE, or inherit
 * with the top-level enabled always (or madvise with VM_HUGEPAGE); before 6.8
 * only PMD order exists and the top-level switch alone decides.
 */
static bool order_allowed(const struct kernel *k, const struct vma *v, unsigned order)
{
	enum mthp_enabled e = kernel_mthp(k->cfg->kernel) ? thp_size_enabled(&k->cfg->thp, order) :
			      order == HPAGE_PMD_ORDER ? MTHP_INHERIT : MTHP_NEVER;

	if (k->cfg->mode != MODE_THP || (v->flags & (VM_NOHUGEPAGE | VM_HUGETLB | VM_SHARED | VM_FILE)) ||
	    k->mm->thp_disable)
		return false;
	if (e == MTHP_INHERIT)
		e = k->cfg->thp.enabled == THP_ALWAYS ? MTHP_ALWAYS :
		    k->cfg->thp.enabled == THP_MADVISE ? MTHP_MADVISE : MTHP_NEVER;
	return e == MTHP_ALWAYS || (e == MTHP_MADVISE && (v->flags & VM_HUGEPAGE));
}

bool thp_vma_allowable(const struct kernel *k, const struct vma *v)
{
	return order_allowed(k, v, HPAGE_PMD_ORDER);
}

/* vma_thp_gfp_mask(): how hard a fault in @v may try for its THP (Linux 6.6 mm/huge_memory.c) */
static gfp_t fault_gfp(const struct kernel *k, const struct vma *v)
{
	bool madv = v->flags & VM_HUGEPAGE;

	switch (k->cfg->thp.defrag) {
	case DEFRAG_ALWAYS: /* "always do synchronous compaction" */
		return GFP_TRANSHUGE | (madv ? 0 : GFP_NORETRY);
	case DEFRAG_DEFER: /* "kick kcompactd and fail quickly" */
		return GFP_TRANSHUGE_LIGHT | GFP_KSWAPD_RECLAIM;
	case DEFRAG_DEFER_MADVISE:
		return GFP_TRANSHUGE_LIGHT | (madv ? GFP_DIRECT_RECLAIM : GFP_KSWAPD_RECLAIM);
	case DEFRAG_MADVISE:
		return GFP_TRANSHUGE_LIGHT | (madv ? GFP_DIRECT_RECLAIM : 0);
	default:
		return GFP_TRANSHUGE_LIGHT; /* never */
	}
}

pfn_t thp_alloc_huge(struct kernel *k, gfp_t gfp)
{
	pfn_t pfn;

	/*
	 * vma_alloc_folio() of a CONFIG_NUMA kernel (every distribution's x86-64
	 * kernel, one node or many; mm/mempolicy.c, alloc_pages_mpol() from 6.7):
	 * for the default policy, the local node only, compaction without reclaim
	 * ("don't reclaim unnecessarily, just compact") ...
	 */
	pfn = sim_alloc_pages(k, HPAGE_PMD_ORDER, gfp | GFP_THISNODE | GFP_NORETRY);
	if (pfn != PFN_NONE || !(gfp & GFP_DIRECT_RECLAIM))
		return pfn;
	/* ... then, when the fault may reclaim, "retry allowing remote memory with
	 * both reclaim and compact as well": a second slow path under @gfp itself */
	return sim_alloc_pages(k, HPAGE_PMD_ORDER, gfp);
}

static pfn_t huge_zero_page(struct kernel *k)
{
	struct thp_state *t = &k->thp;

	if (t->huge_zero_pfn == PFN_NONE) {
		/*
		 * get_huge_zero_page(): alloc_pages((GFP_TRANSHUGE | __GFP_ZERO) &
		 * ~__GFP_MOVABLE, HPAGE_PMD_ORDER): unmovable, one slow path with
		 * direct compaction and reclaim (zone NORMAL), no NUMA second try;
		 * retried by every fault until it succeeds; allocated, zeroed and
		 * counted once.
		 */
		t->huge_zero_pfn = sim_alloc_pages(k, HPAGE_PMD_ORDER, GFP_TRANSHUGE & ~GFP_MOVABLE);
		if (t->huge_zero_pfn == PFN_NONE) {
			k->st->thp_zero_page_alloc_failed++;
			return PFN_NONE;
		}
		k->st->thp_zero_page_alloc++;
		k->st->cyc_fault += HPAGE_PMD_NR * k->cfg->cost.clear_page;
	}
	return t->huge_zero_pfn;
}

int thp_fault(struct kernel *k, struct vma *v, vaddr_t va, bool write)
{
	vaddr_t h = va & ~(PMD_SIZE - 1);
	pfn_t pfn, table;

	if (!thp_vma_allowable(k, v) || h < v->start || h + PMD_SIZE > v->end ||
	    !pt_slot_empty(&k->mm->pt, h, PS_2M))
		return 0; /* ineligible: silent fallback */
	v->flags |= VM_ANON_VMA; /* vmf_anon_prepare(), before the zero page too */
	thp_register(k);
	table = buddy_alloc_mt(&k->buddy, 0, MIGRATE_UNMOVABLE); /* pte_alloc_one() */
	if (table == PFN_NONE)
		return 0;
	if (!write && k->cfg->thp.use_zero_page && k->cfg->zero_page) { /* !mm_forbids_zeropage() */
		pfn = huge_zero_page(k);
		if (pfn == PFN_NONE) {
			buddy_free(&k->buddy, table, 0);
			k->st->thp_fault_fallback++;
			vmas_count(k, va, VE_THP_FAULT_FALLBACK);
			return 0;
		}
		if (pt_map(&k->mm->pt, h, PS_2M, pfn, false) || thp_deposit(k, h, table))
			goto oom;
		k->st->nr_page_table_pages++;
		k->thp.nr_zero_pmds++;
		return 1;
	}
	pfn = thp_alloc_huge(k, fault_gfp(k, v));
	if (pfn == PFN_NONE) {
		buddy_free(&k->buddy, table, 0);
		k->st->thp_fault_fallback++;
		k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_ANON_FAULT_FALLBACK]++;
		vmas_count(k, va, VE_THP_FAULT_FALLBACK);
		return 0;
	}
	if (pt_map(&k->mm->pt, h, PS_2M, pfn, v->flags & VM_WRITE) || thp_deposit(k, h, table))
		goto oom;
	k->st->nr_page_table_pages++;
	thp_folio_new(k, pfn, h);
	thp_mark_written(k, pfn + ((va - h) >> PAGE_SHIFT)); /* the store that faulted */
	k->st->thp_fault_alloc++;
	k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_ANON_FAULT_ALLOC]++;
	vmas_count(k, h, VE_THP_FAULT_ALLOC);
	k->st->cyc_fault += HPAGE_PMD_NR * k->cfg->cost.clear_page; /* folio_zero_user() */
	return 1;
oom:
	return kernel_oom(k, va);
}

int thp_huge_zero_wp(struct kernel *k, struct vma *v, vaddr_t va)
{
	vaddr_t h = va & ~(PMD_SIZE - 1);
	pfn_t pfn;

	/* vma_alloc_anon_folio_pmd(): the fault's gfp; a failure is counted there */
	pfn = thp_alloc_huge(k, fault_gfp(k, v));
	if (pfn == PFN_NONE) {
		k->st->thp_fault_fallback++;
		k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_ANON_FAULT_FALLBACK]++;
		vmas_count(k, va, VE_THP_FAULT_FALLBACK);
		return 0;
	}
	/* pmdp_huge_clear_flush() of the zero PMD; the table deposited with it stays */
	pt_unmap_range(&k->mm->pt, h, h + PMD_SIZE, false, NULL, NULL);
	k->thp.nr_zero_pmds--;
	flush_tlb_range(k, h, h + PMD_SIZE); /* flush_pmd_tlb_range(): 512 > 33, a full flush */
	/* map_anon_folio_pmd(): writable, zeroed, counted as a fault allocation */
	if (pt_map(&k->mm->pt, h, PS_2M, pfn, v->flags & VM_WRITE))
		return kernel_oom(k, va);
	thp_folio_new(k, pfn, h);
	thp_mark_written(k, pfn + ((va - h) >> PAGE_SHIFT)); /* the store that faulted */
	k->st->thp_fault_alloc++;
	k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_ANON_FAULT_ALLOC]++;
	vmas_count(k, h, VE_THP_FAULT_ALLOC);
	k->st->cyc_fault += HPAGE_PMD_NR * k->cfg->cost.clear_page; /* folio_zero_user() */
	return 1;
}

/* --- mTHP: PTE-mapped anonymous folios below PMD order ---------------------- */

/* thp_vma_suitable_order() for anonymous memory: the aligned range lies in @v. */
static bool order_fits(const struct vma *v, vaddr_t va, unsigned order)
{
	vaddr_t a = va & ~((PAGE_SIZE << order) - 1);

	return a >= v->start && a + (PAGE_SIZE << order) <= v->end;
}

int thp_mthp_fault(struct kernel *k, struct vma *v, vaddr_t va)
{
	struct thp_state *t = &k->thp;
	unsigned long orders = 0;
	unsigned o, nr;
	vaddr_t a;
	pfn_t pfn = PFN_NONE;
	gfp_t gfp;

	if (!kernel_mthp(k->cfg->kernel) || !thp_mthp_configured(&k->cfg->thp))
		return 0;
	for (o = MTHP_ORDER_MIN; o < HPAGE_PMD_ORDER; o++)
		if (order_allowed(k, v, o) && order_fits(v, va, o))
			orders |= 1UL << o;
	/* the highest order whose PTEs are all none; each that is not drops out */
	while (orders) {
		o = (unsigned)(63 - __builtin_clzl(orders));
		if (pt_range_none(&k->mm->pt, va & ~((PAGE_SIZE << o) - 1), 1U << o))
			break;
		orders &= ~(1UL << o);
	}
	if (!orders)
		return 0;
	gfp = fault_gfp(k, v); /* vma_thp_gfp_mask() */
	while (orders) {
		o = (unsigned)(63 - __builtin_clzl(orders));
		/* vma_alloc_folio(): one try; the __GFP_THISNODE first pass of
		 * alloc_pages_mpol() is for PMD order only */
		pfn = sim_alloc_pages(k, o, gfp);
		if (pfn != PFN_NONE)
			break;
		k->st->mthp[o][MTHP_STAT_ANON_FAULT_FALLBACK]++;
		vmas_count_mthp(k, va, o, true);
		orders &= ~(1UL << o);
	}
	if (pfn == PFN_NONE)
		return 0;
	/* (no memcg: the charge never fails, anon_fault_fallback_charge stays 0) */
	nr = 1U << o;
	a = va & ~((PAGE_SIZE << o) - 1);
	v->flags |= VM_ANON_VMA; /* vmf_anon_prepare() */
	/* the folio's pages are order-0 blocks to the buddy allocator and the LRU
	 * from here (split_page()); the folio itself lives in t->mthp */
	thp_split_alloc(&k->buddy, pfn, o);
	for (unsigned i = 0; i < nr; i++) {
		if (pt_map(&k->mm->pt, a + ((vaddr_t)i << PAGE_SHIFT), PS_4K, pfn + i, v->flags & VM_WRITE)) {
			for (unsigned j = i; j < nr; j++)
				buddy_free(&k->buddy, pfn + j, 0);
			return kernel_oom(k, va);
		}
		kernel_rmap_set(k, pfn + i, a + ((vaddr_t)i << PAGE_SHIFT));
		lru_add(&k->lru, pfn + i, 1);
		t->mthp[pfn + i] = (uint8_t)o;
	}
	t->mthp_mapped[pfn] = (uint16_t)nr;
	written_clear(t, pfn, nr);
	thp_mark_written(k, pfn + ((va - a) >> PAGE_SHIFT)); /* the store that faulted */
	k->st->nr_anon_pages += nr; /* add_mm_counter(MM_ANONPAGES, nr_pages) */
	kernel_rss_changed(k);
	k->st->mthp[o][MTHP_STAT_ANON_FAULT_ALLOC]++;
	vmas_count_mthp(k, va, o, false);
	k->st->mthp[o][MTHP_STAT_NR_ANON]++;
	k->st->cyc_fault += nr * k->cfg->cost.clear_page; /* folio_zero_user() */
	return 1;
}

/* --- splitting ------------------------------------------------------------ */

void thp_split_pmd_at(struct kernel *k, vaddr_t va)
{
	vaddr_t h = va & ~(PMD_SIZE - 1);
	enum page_size ps;
	pfn_t pfn;

	if (!pt_lookup(&k->mm->pt, h, &ps, &pfn, NULL) || ps != PS_2M)
		return;
	if (pfn == k->thp.huge_zero_pfn) {
		pt_split_pmd(&k->mm->pt, h, thp_withdraw(k, h), k->thp.zero_pfn);
		k->thp.nr_zero_pmds--;
		k->thp.nr_zero_ptes += HPAGE_PMD_NR;
	} else if (thp_is_folio(k, pfn)) {
		struct folio *f = &k->thp.folio[pfn >> HPAGE_PMD_ORDER];

		pt_split_pmd(&k->mm->pt, h, thp_withdraw(k, h), PFN_NONE);
		if (f->pmd_shared) {
			/* another mm maps it by its PMD still (fork.c): this mm's 512
			 * PTEs are extra mappings of its pages; the folio stays PMD-mapped */
			f->pmd_shared--;
			k->thp.nr_shared_pmds--;
			for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
				k->mapcount[pfn + i]++;
			k->nr_shared_ptes += HPAGE_PMD_NR;
			if (k->rmap_mm[pfn] == k->mm)
				k->rmap_mm[pfn] = kernel_find_mapper(k, pfn, PS_2M, f->va, &f->va);
		} else {
			for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
				kernel_rmap_set(k, pfn + i, h + ((vaddr_t)i << PAGE_SHIFT));
			f->flags &= ~FOLIO_PMD_MAPPED;
			k->st->nr_anon_transparent_hugepages--;
			k->st->nr_anon_pages += HPAGE_PMD_NR; /* now 4K-mapped anonymous pages */
			kernel_rss_changed(k);
		}
	} else if (filemap_is_thp(k, pfn)) {
		/* __split_huge_pmd_locked() of a file PMD: it is only cleared
		 * (pmdp_huge_clear_flush(), no deposited table on x86); the pages stay
		 * cached and the range refaults by PTE */
		pt_unmap_range(&k->mm->pt, h, h + PMD_SIZE, false, NULL, NULL);
		filemap_unmap_pmd(k, pfn);
	} else {
		return; /* hugetlbfs pages are never split */
	}
	/* (anonymous: the deposited table became the live PT table, still one page) */
	k->st->thp_split_pmd++;
	vmas_count(k, h, VE_THP_SPLIT_PMD);
	flush_tlb_range(k, h, h + PMD_SIZE); /* pmdp_invalidate(): a full flush */
}

/* Queue @head for deferred split; false (not queued) without host memory. */
static bool deferred_push(struct thp_state *t, pfn_t head)
{
	if (t->nr_deferred == t->cap_deferred) {
		size_t cap = t->cap_deferred ? t->cap_deferred * 2 : 16;
		pfn_t *d = realloc(t->deferred, cap * sizeof(*d));

		if (!d)
			return false; /* not queued: it is freed whole when its last page goes */
		t->deferred = d;
		t->cap_deferred = cap;
	}
	t->deferred[t->nr_deferred++] = head;
	return true;
}

static void deferred_pop(struct thp_state *t, pfn_t head)
{
	for (size_t i = 0; i < t->nr_deferred; i++)
		if (t->deferred[i] == head) {
			memmove(&t->deferred[i], &t->deferred[i + 1],
				(t->nr_deferred - i - 1) * sizeof(*t->deferred));
			t->nr_deferred--;
			break;
		}
}

/*
 * deferred_split_folio(folio, partially_mapped) of 6.12+: queued and marked
 * partially mapped once; thp_deferred_split_page for a PMD-order folio only,
 * split_deferred and nr_anon_partially_mapped for every order.
 */
static void deferred_add(struct kernel *k, pfn_t head)
{
	struct thp_state *t = &k->thp;

	if (!deferred_push(t, head))
		return;
	/* (one list: queued whole before, it is queued as partially mapped now) */
	t->folio[head >> HPAGE_PMD_ORDER].flags &= (uint8_t)~FOLIO_UNDERUSED_Q;
	t->folio[head >> HPAGE_PMD_ORDER].flags |= FOLIO_DEFERRED;
	k->st->thp_deferred_split_page++;
	k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_SPLIT_DEFERRED]++;
	k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED]++;
}

static void deferred_del(struct kernel *k, pfn_t head)
{
	struct thp_state *t = &k->thp;

	deferred_pop(t, head);
	if (t->folio[head >> HPAGE_PMD_ORDER].flags & FOLIO_DEFERRED)
		k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED]--;
	t->folio[head >> HPAGE_PMD_ORDER].flags &= ~FOLIO_DEFERRED;
}

static void mthp_deferred_add(struct kernel *k, pfn_t head)
{
	struct thp_state *t = &k->thp;
	unsigned o = t->mthp[head] & MTHP_ORDER_MASK;

	if (!deferred_push(t, head))
		return;
	t->mthp[head] |= MTHP_PARTIAL;
	k->st->mthp[o][MTHP_STAT_SPLIT_DEFERRED]++;
	k->st->mthp[o][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED]++;
}

/* The mTHP at @head leaves the queue and the partially mapped count, if on them. */
static void mthp_deferred_del(struct kernel *k, pfn_t head)
{
	struct thp_state *t = &k->thp;

	if (!(t->mthp[head] & MTHP_PARTIAL))
		return;
	deferred_pop(t, head);
	t->mthp[head] &= (uint8_t)~MTHP_PARTIAL;
	k->st->mthp[t->mthp[head] & MTHP_ORDER_MASK][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED]--;
}

/* The mTHP at @head stops being one: its pages are plain order-0 pages (or free). */
static void mthp_forget(struct kernel *k, pfn_t head)
{
	struct thp_state *t = &k->thp;
	unsigned o = t->mthp[head] & MTHP_ORDER_MASK;

	mthp_deferred_del(k, head);
	memset(&t->mthp[head], 0, 1UL << o);
	t->mthp_mapped[head] = 0;
	k->st->mthp[o][MTHP_STAT_NR_ANON]--;
	if (t->run_head == head)
		t->run_head = PFN_NONE; /* nothing left to queue */
}

void thp_rmap_run_end(struct kernel *k)
{
	struct thp_state *t = &k->thp;
	pfn_t head = t->run_head;

	if (head == PFN_NONE)
		return;
	t->run_head = PFN_NONE;
	if (t->mthp[head]) {
		if (t->mthp_mapped[head] && !(t->mthp[head] & MTHP_PARTIAL))
			mthp_deferred_add(k, head);
		return;
	}
	/* __folio_remove_rmap(): partially mapped after the run, and not queued yet */
	if (t->folio[head >> HPAGE_PMD_ORDER].nr_mapped &&
	    !(t->folio[head >> HPAGE_PMD_ORDER].flags & FOLIO_DEFERRED))
		deferred_add(k, head);
}

void thp_rmap_batching(struct kernel *k, bool batched)
{
	thp_rmap_run_end(k);
	k->thp.rmap_batched = batched;
}

/* A PTE of the folio at @head, page @pfn at @va, is going: does it extend the open run? */
static void rmap_run_step(struct kernel *k, pfn_t head, vaddr_t va, pfn_t pfn)
{
	struct thp_state *t = &k->thp;

	/* folio_pte_batch(): consecutive pages of one folio, within one page table */
	if (t->run_head != head || t->run_next_pfn != pfn || t->run_next_va != va ||
	    !(va & (PMD_SIZE - 1))) {
		thp_rmap_run_end(k);
		t->run_head = head;
	}
	t->run_next_pfn = pfn + 1;
	t->run_next_va = va + PAGE_SIZE;
}

/*
 * The last PMD of the THP at @head goes while other mms map some of its pages by
 * PTEs (after a split of their PMD, fork.c): those become its mappings (bitmap,
 * reverse map), it is PTE-mapped from now on and, partially mapped, queued for
 * deferred split (__folio_remove_rmap(): partially_mapped). False, changing
 * nothing, if no PTE maps any of its pages.
 */
static bool folio_pmd_gone(struct kernel *k, pfn_t head)
{
	struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];
	unsigned n = 0;

	for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
		n += k->mapcount[head + i] != 0;
	if (!n)
		return false;
	memset(f->mapped, 0, sizeof(f->mapped));
	f->nr_mapped = 0;
	f->flags &= ~FOLIO_PMD_MAPPED;
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		vaddr_t at = 0;

		if (!k->mapcount[head + i])
			continue;
		k->mapcount[head + i]--;
		k->nr_shared_ptes--;
		f->mapped[i / 64] |= 1ULL << (i % 64);
		f->nr_mapped++;
		k->rmap_mm[head + i] = kernel_find_mapper(k, head + i, PS_4K,
							  f->va + ((vaddr_t)i << PAGE_SHIFT), &at);
		k->rmap[head + i] = at + 1;
	}
	k->st->nr_anon_transparent_hugepages--;
	k->st->nr_anon_pages += f->nr_mapped;
	kernel_rss_changed(k);
	if (f->nr_mapped < HPAGE_PMD_NR)
		deferred_add(k, head);
	return true;
}

bool thp_folio_shared(const struct kernel *k, pfn_t head)
{
	const struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];

	if (f->pmd_shared)
		return true;
	if (!k->nr_shared_ptes && !k->thp.nr_shared_pmds)
		return false; /* (nothing is shared anywhere: the common case) */
	const struct mm *mm = NULL; /* the mm of its first mapped page */

	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		if (k->mapcount[head + i])
			return true;
		if ((f->flags & FOLIO_PMD_MAPPED) || !(f->mapped[i / 64] >> (i % 64) & 1))
			continue;
		if (mm && k->rmap_mm[head + i] != mm)
			return true;
		mm = k->rmap_mm[head + i];
	}
	return false;
}

/*
 * The last mapping of page @pfn of an mTHP goes (__folio_remove_rmap()): the
 * page stays in the folio, allocated, until the folio is split or freed whole;
 * the folio is freed with its last mapped page, and queued for deferred split
 * when partially mapped (per PTE up to 6.8, after the run of a batched zap).
 */
static void mthp_unmap_page(struct kernel *k, vaddr_t va, pfn_t pfn)
{
	struct thp_state *t = &k->thp;
	unsigned o = t->mthp[pfn] & MTHP_ORDER_MASK;
	pfn_t head = pfn & ~((1UL << o) - 1);

	BUG_ON(!t->mthp_mapped[head] || !k->rmap[pfn]);
	lru_del(&k->lru, pfn, 1);
	k->rmap[pfn] = 0;
	k->st->nr_anon_pages--;
	kernel_rss_changed(k);
	if (t->rmap_batched)
		rmap_run_step(k, head, va, pfn);
	if (!--t->mthp_mapped[head]) {
		mthp_forget(k, head);
		for (pfn_t p = head; p < head + (1UL << o); p++)
			buddy_free(&k->buddy, p, 0);
	} else if (!t->rmap_batched && !(t->mthp[head] & MTHP_PARTIAL)) {
		mthp_deferred_add(k, head);
	}
}

void thp_unmap_leaf(struct kernel *k, vaddr_t va, enum page_size ps, pfn_t pfn)
{
	struct thp_state *t = &k->thp;

	if (ps != PS_4K || (!thp_is_folio(k, pfn) && !t->mthp[pfn]))
		thp_rmap_run_end(k);
	if (ps == PS_2M) {
		if (pfn == t->huge_zero_pfn) {
			t->nr_zero_pmds--;
		} else if (thp_is_folio(k, pfn)) {
			struct folio *f = &t->folio[pfn >> HPAGE_PMD_ORDER];

			BUG_ON(!(f->flags & FOLIO_PMD_MAPPED) || f->nr_mapped != HPAGE_PMD_NR);
			if (f->pmd_shared) {
				/* another mm's PMD maps it still (fork.c) */
				f->pmd_shared--;
				t->nr_shared_pmds--;
				if (k->rmap_mm[pfn] == k->mm)
					k->rmap_mm[pfn] = kernel_find_mapper(k, pfn, PS_2M, f->va, &f->va);
				goto withdraw;
			}
			if (folio_pmd_gone(k, pfn))
				goto withdraw; /* other mms map some of its pages by PTEs */
			lru_del(&k->lru, pfn, HPAGE_PMD_NR);
			memset(f, 0, sizeof(*f));
			buddy_free(&k->buddy, pfn, HPAGE_PMD_ORDER);
			k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_NR_ANON]--;
			k->st->nr_anon_transparent_hugepages--;
			kernel_rss_changed(k);
		} else {
			hugetlb_free(&k->hugetlb, &k->buddy, pfn);
			k->st->nr_hugetlb_pages--;
			kernel_rss_changed(k);
			return;
		}
withdraw:
		/* zap_huge_pmd() frees the deposited table too */
		buddy_free(&k->buddy, thp_withdraw(k, va), 0);
		k->st->nr_page_table_pages--;
		return;
	}
	BUG_ON(ps != PS_4K);
	if (pfn == t->zero_pfn) {
		t->nr_zero_ptes--;
		return;
	}
	if (thp_is_folio(k, pfn)) {
		pfn_t head = pfn & ~(HPAGE_PMD_NR - 1);
		struct folio *f = &t->folio[head >> HPAGE_PMD_ORDER];
		unsigned i = (unsigned)(pfn - head);

		if (f->flags & FOLIO_PMD_MAPPED) {
			/* an extra PTE of a folio another mm maps by its PMD (fork.c) */
			BUG_ON(!k->mapcount[pfn]);
			k->mapcount[pfn]--;
			k->nr_shared_ptes--;
			return;
		}
		BUG_ON(!(f->mapped[i / 64] & (1ULL << (i % 64))));
		if (k->mapcount[pfn]) {
			kernel_page_unshare(k, pfn); /* another mm maps this page too */
			return;
		}
		if (t->rmap_batched)
			rmap_run_step(k, head, va, pfn);
		f->mapped[i / 64] &= ~(1ULL << (i % 64));
		k->rmap[pfn] = 0;
		f->nr_mapped--;
		k->st->nr_anon_pages--;
		kernel_rss_changed(k);
		if (!f->nr_mapped) {
			if (f->flags & FOLIO_DEFERRED)
				deferred_del(k, head);
			lru_del(&k->lru, head, HPAGE_PMD_NR);
			memset(f, 0, sizeof(*f));
			buddy_free(&k->buddy, head, HPAGE_PMD_ORDER);
			k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_NR_ANON]--;
			if (t->run_head == head)
				t->run_head = PFN_NONE; /* nothing left to queue */
		} else if (!t->rmap_batched && !(f->flags & FOLIO_DEFERRED)) {
			deferred_add(k, head); /* deferred_split_folio() on a partial unmap */
		}
		return;
	}
	if (unlikely(kernel_page_shared(k, pfn))) {
		kernel_page_unshare(k, pfn); /* another mm maps it still (fork.c) */
		return;
	}
	if (unlikely(t->mthp[pfn])) {
		mthp_unmap_page(k, va, pfn);
		return;
	}
	lru_del(&k->lru, pfn, 1);
	buddy_free(&k->buddy, pfn, 0);
	k->rmap[pfn] = 0;
	k->st->nr_anon_pages--;
	kernel_rss_changed(k);
}

void thp_split_alloc(struct buddy *b, pfn_t head, unsigned order)
{
	unsigned o;

	BUG_ON(!buddy_is_allocated(b, head, &o) || o != order);
	for (pfn_t p = head; p < head + (1UL << order); p++) {
		b->pages[p].flags = BP_HEAD;
		b->pages[p].order = 0;
		b->pages[p].mt = b->pages[head].mt;
	}
}

/*
 * folio_test_mlocked() of the THP at @head in k->mm: a VMA of one of its
 * mappings is VM_LOCKED (deferred_split_scan() leaves such a folio whole: its
 * zero-filled pages could not go to the zero page).
 */
static bool folio_in_locked_vma(const struct kernel *k, pfn_t head)
{
	const struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];
	const struct vma *v;

	if (f->flags & FOLIO_PMD_MAPPED)
		return (v = vma_find(&k->mm->vmas, f->va)) && (v->flags & VM_LOCKED);
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
		if ((f->mapped[i / 64] >> (i % 64) & 1) && k->rmap[head + i] &&
		    (v = vma_find(&k->mm->vmas, k->rmap[head + i] - 1)) && (v->flags & VM_LOCKED))
			return true;
	return false;
}

/*
 * remap_page(RMP_USE_SHARED_ZEROPAGE) after a split to order 0 (6.12+,
 * kernel_split_remaps_zero()): each page of [@head, @head + @nr) still mapped,
 * by one mm, that holds no data is mapped to the zero page instead, read-only,
 * and freed (try_to_map_unused_to_zeropage(): not in a VM_LOCKED VMA; a
 * kernel that forbids the zero page tracks nothing here). unmap_folio()'s
 * batched flush (try_to_unmap_flush()) once, if a page was remapped. Returns
 * the pages freed.
 */
static uint64_t remap_zero_pages(struct kernel *k, pfn_t head, unsigned nr)
{
	struct thp_state *t = &k->thp;
	struct mm *last = NULL;
	uint64_t n = 0;

	if (!t->track_written)
		return 0;
	for (pfn_t p = head; p < head + nr; p++) {
		const struct vma *v;
		struct mm *old;
		vaddr_t va;

		if (!k->rmap[p] || (t->written[p / 64] >> (p % 64) & 1) || kernel_page_shared(k, p))
			continue;
		va = k->rmap[p] - 1;
		old = kernel_use_mm(k, k->rmap_mm[p]);
		v = vma_find(&k->mm->vmas, va);
		if (v && !(v->flags & VM_LOCKED)) {
			pt_set_pte(&k->mm->pt, va, t->zero_pfn, false);
			lru_del(&k->lru, p, 1);
			k->rmap[p] = 0;
			buddy_free(&k->buddy, p, 0);
			k->st->nr_anon_pages--;
			t->nr_zero_ptes++;
			kernel_rss_changed(k);
			last = k->mm;
			n++;
		}
		kernel_use_mm(k, old);
	}
	if (last) {
		struct mm *old = kernel_use_mm(k, last);

		arch_tlbbatch_flush(k);
		kernel_use_mm(k, old);
	}
	return n;
}

uint64_t thp_split_folio(struct kernel *k, pfn_t head)
{
	struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];
	uint64_t freed = 0;

	BUG_ON(!(f->flags & FOLIO_THP) || (f->flags & FOLIO_PMD_MAPPED) || !f->nr_mapped);
	if (f->flags & FOLIO_DEFERRED)
		deferred_del(k, head);
	/* split_huge_page(): 512 order-0 pages; the unmapped ones are freed */
	lru_split(&k->lru, head, f->mapped);
	thp_split_alloc(&k->buddy, head, HPAGE_PMD_ORDER);
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		if (f->mapped[i / 64] & (1ULL << (i % 64)))
			continue; /* its reverse map was set at the PMD split */
		buddy_free(&k->buddy, head + i, 0);
		freed++;
	}
	/* the mapped subpages are ordinary 4K anonymous pages now */
	{
		/* charged to the mapping of its first subpage still mapped (vmas.c) */
		unsigned i = 0;

		while (!(f->mapped[i / 64] & (1ULL << (i % 64))))
			i++;
		vmas_count(k, f->va + ((vaddr_t)i << PAGE_SHIFT), VE_THP_SPLIT_PAGE);
	}
	memset(f, 0, sizeof(*f));
	k->st->thp_split_page++;
	k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_SPLIT]++;
	k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_NR_ANON]--;
	return freed + remap_zero_pages(k, head, HPAGE_PMD_NR);
}

void thp_split_ptes_queue(struct kernel *k, pfn_t head)
{
	const struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];

	BUG_ON(!(f->flags & FOLIO_THP) || (f->flags & FOLIO_PMD_MAPPED));
	if (!(f->flags & FOLIO_DEFERRED) && f->nr_mapped > 1) {
		/* queued and taken off again by the split: nr_anon_partially_mapped unmoved */
		k->st->thp_deferred_split_page++;
		k->st->mthp[HPAGE_PMD_ORDER][MTHP_STAT_SPLIT_DEFERRED]++;
	}
}

uint64_t thp_mthp_split(struct kernel *k, pfn_t pfn)
{
	struct thp_state *t = &k->thp;
	unsigned o = t->mthp[pfn] & MTHP_ORDER_MASK;
	pfn_t head = pfn & ~((1UL << o) - 1);
	uint64_t freed = 0;

	BUG_ON(!o || !t->mthp_mapped[head]);
	/*
	 * __folio_split() unmaps the folio first (unmap_folio(): try_to_migrate_one()
	 * PTE by PTE, migration entries in their place): after its first PTE,
	 * __folio_remove_rmap() finds it partly mapped and, if it was not so
	 * already, deferred_split_folio(folio, true) queues it: split_deferred,
	 * nr_anon_partially_mapped up, and down again as the split takes it off the
	 * queue. Not with one page mapped (none left: not partly mapped). A PMD
	 * THP is split while PMD-mapped (split_huge_pmd_locked(freeze), no PTE
	 * removed one by one) and counts nothing. Measured on 6.18.44
	 * (tests/native_mthp.sh pageout-64K, free-64K).
	 */
	if (!(t->mthp[head] & MTHP_PARTIAL) && t->mthp_mapped[head] > 1)
		k->st->mthp[o][MTHP_STAT_SPLIT_DEFERRED]++;
	/* __folio_split() to order 0: split (thp_split_page only at PMD order) */
	k->st->mthp[o][MTHP_STAT_SPLIT]++;
	mthp_forget(k, head);
	for (pfn_t p = head; p < head + (1UL << o); p++)
		if (!k->rmap[p]) {
			buddy_free(&k->buddy, p, 0);
			freed++;
		}
	return freed + remap_zero_pages(k, head, 1U << o);
}

bool thp_mthp_shared(const struct kernel *k, pfn_t pfn)
{
	unsigned o = k->thp.mthp[pfn] & MTHP_ORDER_MASK;
	pfn_t head = pfn & ~((1UL << o) - 1);

	for (pfn_t p = head; p < head + (1UL << o); p++)
		if (k->rmap[p] && (kernel_page_shared(k, p) || k->rmap_mm[p] != k->mm))
			return true;
	return false;
}

unsigned thp_mthp_swap_out(struct kernel *k, pfn_t pfn)
{
	struct thp_state *t = &k->thp;
	unsigned o = t->mthp[pfn] & MTHP_ORDER_MASK, nr = 1U << o;
	pfn_t head = pfn & ~((1UL << o) - 1);
	uint64_t slot;

	BUG_ON(!o || !t->mthp_mapped[head]);
	if (t->mthp_mapped[head] != nr || !kernel_mthp_swapout(k->cfg->kernel))
		return 0; /* partially mapped (or before 6.10): split first */
	for (pfn_t p = head; p < head + nr; p++)
		if (kernel_page_shared(k, p) || k->rmap_mm[p] != k->mm)
			return 0;
	slot = swap_alloc_order(&k->swap, o);
	if (slot == SWAP_NONE)
		return 0;
	/* try_to_unmap(): a swap entry per PTE; the folio is freed with its last one */
	for (pfn_t p = head; p < head + nr; p++) {
		pt_set_swap(&k->mm->pt, k->rmap[p] - 1, slot + (p - head));
		k->rmap[p] = 0;
		lru_del(&k->lru, p, 1);
	}
	mthp_forget(k, head);
	for (pfn_t p = head; p < head + nr; p++)
		buddy_free(&k->buddy, p, 0);
	k->st->nr_anon_pages -= nr;
	kernel_rss_changed(k);
	k->st->mthp[o][MTHP_STAT_SWPOUT]++;
	k->st->pswpout += nr;
	return nr;
}

void thp_mthp_check_invariants(const struct kernel *k)
{
	const struct thp_state *t = &k->thp;
	uint64_t nr[MTHP_ORDERS] = { 0 }, part[MTHP_ORDERS] = { 0 };

	for (pfn_t p = 0; p < k->buddy.nr_pages; p++) {
		unsigned o = t->mthp[p] & MTHP_ORDER_MASK, m = 0;

		if (!o || (p & ((1UL << o) - 1)))
			continue;
		BUG_ON(o < MTHP_ORDER_MIN || o >= HPAGE_PMD_ORDER);
		for (pfn_t q = p; q < p + (1UL << o); q++) {
			BUG_ON((t->mthp[q] & MTHP_ORDER_MASK) != o);
			m += k->rmap[q] != 0;
		}
		BUG_ON(m != t->mthp_mapped[p] || !m);
		nr[o]++;
		part[o] += !!(t->mthp[p] & MTHP_PARTIAL);
	}
	for (unsigned o = MTHP_ORDER_MIN; o < HPAGE_PMD_ORDER; o++)
		BUG_ON(nr[o] != k->st->mthp[o][MTHP_STAT_NR_ANON] ||
		       part[o] != k->st->mthp[o][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED]);
}

uint64_t thp_shrink_deferred(struct kernel *k)
{
	struct thp_state *t = &k->thp;
	uint64_t freed = 0;

	while (t->nr_deferred) {
		pfn_t head = t->deferred[t->nr_deferred - 1];

		freed += t->mthp[head] ? thp_mthp_split(k, head) : thp_split_folio(k, head);
	}
	/*
	 * The THPs queued whole (6.12+): each leaves the queue (list_del_init());
	 * one that thp_underused() finds underused is split (split_folio(): its
	 * PMD first, then the folio; its zero-filled pages go to the zero page),
	 * the others are kept whole and not queued again (deferred_split_scan()).
	 * Skipped like an mlocked folio, and left whole: one mapped by several
	 * mms after a fork (the model splits a folio in one mm only).
	 */
	for (size_t i = 0, n = (k->buddy.nr_pages >> HPAGE_PMD_ORDER) + 1; i < n; i++) {
		struct folio *f = &t->folio[i];
		pfn_t head = (pfn_t)i << HPAGE_PMD_ORDER;
		struct mm *old;

		if (!(f->flags & FOLIO_UNDERUSED_Q))
			continue;
		f->flags &= (uint8_t)~FOLIO_UNDERUSED_Q;
		if (thp_folio_shared(k, head) || !thp_underused(k, head))
			continue;
		old = kernel_use_mm(k, k->rmap_mm[head]);
		if (folio_in_locked_vma(k, head)) {
			kernel_use_mm(k, old);
			continue;
		}
		if (f->flags & FOLIO_PMD_MAPPED)
			thp_split_pmd_at(k, f->va); /* unmap_folio(): TTU_SPLIT_HUGE_PMD */
		freed += thp_split_folio(k, head);
		k->st->thp_underused_split_page++;
		kernel_use_mm(k, old);
	}
	return freed;
}
