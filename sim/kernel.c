/*
 * kernel.c - the kernel as a whole (kernel.h): booting it on a machine's memory
 * (kernel_init(): the buddy allocator, the hugetlb pools set aside at boot, the
 * fragmentation a machine's history left, the first address space), the page-table
 * frames its page tables take (GFP_PGTABLE_USER, counted as nr_page_table_pages),
 * failures, resident memory over time, and the invariants that cross its models.
 * Each model's file says what it follows; this one only composes them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fault.h"
#include "kernel.h"
#include "mmap.h"
#include "reclaim.h"
#include "thp.h"
#include "tlbflush.h"

static pfn_t pt_frame_alloc(void *ctx)
{
	struct kernel *k = ctx;
	pfn_t pfn = buddy_alloc_mt(&k->buddy, 0, MIGRATE_UNMOVABLE); /* GFP_PGTABLE_USER */

	if (pfn != PFN_NONE)
		k->st->nr_page_table_pages++;
	return pfn;
}

static void pt_frame_free(void *ctx, pfn_t pfn)
{
	struct kernel *k = ctx;

	buddy_free(&k->buddy, pfn, 0);
	k->st->nr_page_table_pages--;
	if (unlikely(k->hv != NULL))
		k->hv->table_freed(k->hv_ctx, pfn);
}

void kernel_prepare(struct kernel *k)
{
	memset(k, 0, sizeof(*k));
	k->mm = k->active_mm = k->mms = &k->init_mm;
	k->mms_tail = &k->init_mm.next;
	k->nr_mm = 1;
}

int kernel_init(struct kernel *k, const struct sim_config *cfg, struct stats *st, struct mmu *cpu,
		struct err *e)
{
	k->pt_ops = (struct pt_frame_ops){ pt_frame_alloc, pt_frame_free, k };
	k->cfg = cfg;
	k->st = st;
	k->cpu = cpu;
	k->va_limit = 1ULL << (PAGE_SHIFT + 9 * cfg->levels);
	vma_set_init(&k->mm->vmas);
	/*
	 * A 1G hugetlb pool is carved off the top at boot (1G-aligned): the buddy
	 * gets what lies below it; memory above the last whole GiB goes unused.
	 */
	if (buddy_init(&k->buddy, cfg->hugetlb_1g_pages ? ((cfg->memory >> PUD_SHIFT) - cfg->hugetlb_1g_pages) << PUD_SHIFT
							: cfg->memory))
		goto oom;
	k->buddy.extfrag_threshold = cfg->extfrag_threshold;
	buddy_set_thp_enabled(&k->buddy, cfg->mode == MODE_THP && cfg->thp.enabled != THP_NEVER);
	/*
	 * The persistent 2 MiB pool is set aside at boot (hugepages=N; "huge pages
	 * must be set aside at boot time", LWN's 2.6.38 THP article), before the
	 * machine's history fragments memory; surplus pages (pages: 0) come from
	 * the buddy allocator at fault time, fragmented or not.
	 */
	if ((cfg->mode == MODE_HUGETLBFS || cfg->hugetlb_pages) &&
	    hugetlb_pool_init(&k->hugetlb, &k->buddy, cfg->mode == MODE_HUGETLBFS || cfg->hugetlb_pages ? cfg->hugetlb_pages : 0))
		goto oom;
	if (cfg->fragmentation.unmovable > 0 &&
	    buddy_fragment(&k->buddy, cfg->fragmentation.unmovable, cfg->fragmentation.seed) < 0)
		return err_set(e, "os.fragmentation.unmovable", 0, 0, "cannot fragment memory");
	if (pt_init(&k->mm->pt, cfg->levels, &k->pt_ops))
		goto oom;
	if (hugetlb_pool_init_1g(&k->hugetlb, k->buddy.nr_pages, cfg->hugetlb_1g_pages))
		goto oom;
	k->rmap = mmap(NULL, k->buddy.nr_pages * sizeof(*k->rmap), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k->rmap == MAP_FAILED) {
		k->rmap = NULL;
		goto oom;
	}
	/* (untouched pages of these cost no host memory: they grow with the frames mapped) */
	k->rmap_mm = mmap(NULL, k->buddy.nr_pages * sizeof(*k->rmap_mm), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	k->mapcount = mmap(NULL, k->buddy.nr_pages * sizeof(*k->mapcount), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k->rmap_mm == MAP_FAILED || k->mapcount == MAP_FAILED) {
		if (k->rmap_mm != MAP_FAILED)
			munmap(k->rmap_mm, k->buddy.nr_pages * sizeof(*k->rmap_mm));
		if (k->mapcount != MAP_FAILED)
			munmap(k->mapcount, k->buddy.nr_pages * sizeof(*k->mapcount));
		k->rmap_mm = NULL;
		k->mapcount = NULL;
		goto oom;
	}
	if (thp_init(k) || lru_init(&k->lru, k->buddy.nr_pages) || swap_init(&k->swap, cfg->swap_size) ||
	    filemap_init(k) || vmas_init(k))
		goto oom;
	k->wmark_low = buddy_watermark(&k->buddy, WMARK_LOW);
	khugepaged_init(k);
	/* the first process's mm, loaded as exec leaves it (initialize_tlbstate_and_flush()) */
	asid_cpu_init(&k->tlbstate, cfg->pcid);
	k->last_mm_ctx_id = ASID_INIT_MM_CTX_ID;
	asid_mm_init(&k->mm->asid, &k->last_mm_ctx_id);
	asid_switch_mm(&k->tlbstate, k->cpu, &k->mm->asid, &k->mm->pt);
	return 0;
oom:
	return err_host(e, "mmusim", 0, 0, "out of host memory building the simulated machine");
}

void kernel_destroy(struct kernel *k)
{
	khugepaged_destroy(k); /* (its slots point at the mms) */
	for (struct mm *mm = k->mms, *next; mm; mm = next) {
		next = mm->next;
		if (mm->pt.root) {
			kernel_use_mm(k, mm);
			sim_exit_mmap(k);
			pt_destroy(&mm->pt);
		}
		vma_set_free(&mm->vmas);
		vmas_acct_free(&mm->vacct);
		if (mm != &k->init_mm)
			free(mm);
	}
	k->mm = &k->init_mm;
	hugetlb_pool_destroy(&k->hugetlb, &k->buddy);
	thp_destroy(k);
	filemap_destroy(k);
	lru_destroy(&k->lru);
	swap_destroy(&k->swap);
	if (k->rmap)
		munmap(k->rmap, k->buddy.nr_pages * sizeof(*k->rmap));
	if (k->rmap_mm)
		munmap(k->rmap_mm, k->buddy.nr_pages * sizeof(*k->rmap_mm));
	if (k->mapcount)
		munmap(k->mapcount, k->buddy.nr_pages * sizeof(*k->mapcount));
	buddy_destroy(&k->buddy);
}

struct mm *kernel_mm_new(struct kernel *k, uint64_t id)
{
	struct mm *mm = calloc(1, sizeof(*mm));

	if (!mm)
		return NULL;
	vma_set_init(&mm->vmas);
	if (pt_init(&mm->pt, k->cfg->levels, &k->pt_ops)) {
		free(mm);
		return NULL;
	}
	if (vmas_acct_init(&mm->vacct)) {
		pt_destroy(&mm->pt);
		free(mm);
		return NULL;
	}
	mm->id = id;
	asid_mm_init(&mm->asid, &k->last_mm_ctx_id);
	mm->serial = k->nr_mm;
	*k->mms_tail = mm;
	k->mms_tail = &mm->next;
	k->nr_mm++;
	return mm;
}

void kernel_switch_mm(struct kernel *k, struct mm *mm)
{
	vmas_switch(k, mm);
	asid_switch_mm(&k->tlbstate, k->cpu, &mm->asid, &mm->pt);
	k->mm = k->active_mm = mm;
}

struct mm *kernel_mm_find(const struct kernel *k, uint64_t id)
{
	for (struct mm *mm = k->mms; mm; mm = mm->next)
		if (mm->id == id && !mm->exited)
			return mm;
	return NULL;
}

/* exit_mmap() and the page table's teardown (free_pgtables()); the mm struct stays */
static void mm_teardown(struct kernel *k, struct mm *mm)
{
	struct mm *old = kernel_use_mm(k, mm);

	sim_exit_mmap(k);
	pt_destroy(&mm->pt);
	vma_set_free(&mm->vmas);
	vma_set_init(&mm->vmas);
	kernel_use_mm(k, old);
}

void kernel_mm_exit(struct kernel *k, struct mm *mm)
{
	struct mm *old = kernel_use_mm(k, mm);

	khugepaged_exit(k, mm); /* __mmput(): before exit_mmap() */
	flush_tlb_mm(k);
	mm_teardown(k, mm);
	/* an empty table stays behind it: a stray reference walks it and faults (fault.c) */
	mm->exited = true;
	if (pt_init(&mm->pt, k->cfg->levels, &k->pt_ops)) {
		k->failed = true;
		err_host(&k->err, k->trace_name, 0, 0, "out of host memory in exit");
	}
	kernel_use_mm(k, old);
}

int kernel_exec(struct kernel *k)
{
	struct mm *mm = k->mm;

	/* the old mm's mmput(): off khugepaged's list; the new one registers as any does */
	khugepaged_exit(k, mm);
	flush_tlb_mm(k);
	mm_teardown(k, mm);
	if (vmas_exec(k)) { /* the new image's breakdown starts empty */
		k->failed = true;
		return err_host(&k->err, k->trace_name, 0, 0, "out of host memory in exec");
	}
	/* exec_mmap(): a fresh mm (a new ctx_id: its ASID's entries are another mm's); def_flags (mlockall's MCL_FUTURE) is not inherited,
	 * MMF_DISABLE_THP is (MMF_INIT_MASK) */
	mm->brk_start = mm->brk = 0;
	mm->def_flags = 0;
	if (pt_init(&mm->pt, k->cfg->levels, &k->pt_ops)) {
		k->failed = true;
		return err_host(&k->err, k->trace_name, 0, 0, "out of host memory in exec");
	}
	asid_mm_init(&mm->asid, &k->last_mm_ctx_id);
	if (mm == k->active_mm) { /* exec_mmap(): activate_mm() of the new mm */
		k->tlbstate.loaded_mm = NULL;
		kernel_switch_mm(k, mm);
	}
	return 0;
}

int kernel_fail(struct kernel *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->fail_msg, sizeof(k->fail_msg), fmt, ap);
	va_end(ap);
	k->failed = true;
	return err_set(&k->err, k->trace_name, 0, 0, "record %llu: %s",
		       (unsigned long long)k->rec_no + 1, k->fail_msg);
}

uint64_t kernel_huge_bytes(const struct stats *st)
{
	return (st->nr_anon_transparent_hugepages + st->nr_hugetlb_pages) * PMD_SIZE +
	       st->nr_hugetlb_pages_1g * PUD_SIZE;
}

uint64_t kernel_rss_bytes(const struct stats *st)
{
	return st->nr_anon_pages * PAGE_SIZE + kernel_huge_bytes(st);
}

void kernel_rss_changed(struct kernel *k)
{
	struct rss_acct *a = &k->racct;
	cycles_t now = kernel_now(k);

	if (now > a->last) {
		a->rss_time += (unsigned __int128)a->rss * (now - a->last);
		a->huge_time += (unsigned __int128)a->huge * (now - a->last);
		a->last = now;
	}
	a->rss = kernel_rss_bytes(k->st);
	a->huge = kernel_huge_bytes(k->st);
	if (a->rss > a->peak_rss)
		a->peak_rss = a->rss;
	if (a->huge > a->peak_huge)
		a->peak_huge = a->huge;
	if (a->rss && (double)a->huge / (double)a->rss > a->peak_coverage)
		a->peak_coverage = (double)a->huge / (double)a->rss;
}

void kernel_rss_restart(struct kernel *k)
{
	struct rss_acct *a = &k->racct;

	memset(a, 0, sizeof(*a));
	a->last = kernel_now(k);
	kernel_rss_changed(k); /* the peaks start from what is resident now */
}

struct rss_walk {
	struct kernel *k;
	uint64_t anon, file, anon_huge;
	void (*fn)(void *ctx, vaddr_t va, uint64_t bytes); /* kernel_mm_for_each_anon()'s */
	void *ctx;
};

static void rss_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct rss_walk *w = ctx;
	struct kernel *k = w->k;
	uint64_t bytes = ps == PS_1G ? PUD_SIZE : ps == PS_2M ? PMD_SIZE : PAGE_SIZE;

	(void)entry;
	if (pfn == PFN_NONE)
		return; /* a swap entry */
	if ((ps == PS_4K && pfn == k->thp.zero_pfn) || (ps == PS_2M && pfn == k->thp.huge_zero_pfn))
		return;
	if ((ps == PS_4K && filemap_is_cache(&k->fm, pfn)) || (ps == PS_2M && filemap_is_thp(k, pfn))) {
		w->file += bytes;
		return;
	}
	w->anon += bytes;
	if (ps == PS_2M && thp_is_folio(k, pfn))
		w->anon_huge += PMD_SIZE;
	if (w->fn)
		w->fn(w->ctx, va, bytes);
}

void kernel_mm_rss(struct kernel *k, struct mm *mm, uint64_t *anon, uint64_t *file,
		   uint64_t *anon_huge)
{
	struct rss_walk w = { k, 0, 0, 0, NULL, NULL };

	pt_for_each_leaf(&mm->pt, rss_leaf, &w);
	*anon = w.anon;
	*file = w.file;
	*anon_huge = w.anon_huge;
}

void kernel_mm_for_each_anon(struct kernel *k, struct mm *mm,
			     void (*fn)(void *ctx, vaddr_t va, uint64_t bytes), void *ctx)
{
	struct rss_walk w = { k, 0, 0, 0, fn, ctx };

	pt_for_each_leaf(&mm->pt, rss_leaf, &w);
}

/* --- invariants --------------------------------------------------------- */

struct inv_ctx {
	struct kernel *k;
	uint8_t *owned; /* frames reached from the page table */
	uint64_t thp_pmds, subpages, pages_1g, lru_pages, file_ptes;
	uint8_t *slots; /* swap slots reached from swap entries */
	uint64_t file_pmds;
	uint32_t *seen; /* while pages are shared: PTEs met per frame */
};

static void own(struct inv_ctx *c, pfn_t pfn, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		pfn_t f = pfn + i;

		BUG_ON(f >= c->k->buddy.nr_pages);
		BUG_ON(c->owned[f / 8] & (1 << (f % 8))); /* mapped or used twice */
		c->owned[f / 8] |= (uint8_t)(1 << (f % 8));
	}
}

static void inv_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct inv_ctx *c = ctx;
	struct kernel *k = c->k;
	unsigned order = 0;

	BUG_ON(!vma_find(&k->mm->vmas, va));
	if (ps == PS_1G) {
		BUG_ON(!hugetlb_is_1g_in_use(&k->hugetlb, pfn));
		c->pages_1g++;
		return;
	}
	if ((ps == PS_4K && pfn == k->thp.zero_pfn) || (ps == PS_2M && pfn == k->thp.huge_zero_pfn)) {
		BUG_ON(entry & PTE_RW); /* the zero pages are shared and never writable */
		return;
	}
	if (ps == PS_4K && filemap_is_cache(&k->fm, pfn)) {
		/* a page-cache page: owned once by the cache (below), mapped read-only
		 * in a private mapping (a store copies it first) */
		BUG_ON(!buddy_is_allocated(&k->buddy, pfn, &order) || order != 0);
		BUG_ON(!(vma_find(&k->mm->vmas, va)->flags & VM_FILE));
		BUG_ON((entry & PTE_RW) && !(vma_find(&k->mm->vmas, va)->flags & VM_SHARED));
		c->file_ptes++;
		return;
	}
	if (ps == PS_2M && filemap_is_thp(k, pfn)) {
		/* a file THP (khugepaged.c): its pages are the cache's, mapped read-only */
		BUG_ON(pfn & (HPAGE_PMD_NR - 1));
		BUG_ON(entry & PTE_RW);
		BUG_ON(!(vma_find(&k->mm->vmas, va)->flags & VM_FILE));
		c->file_pmds++;
		return;
	}
	if (thp_is_folio(k, pfn)) {
		pfn_t head = pfn & ~(HPAGE_PMD_NR - 1);
		const struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];
		unsigned i = (unsigned)(pfn - head);

		BUG_ON(!buddy_is_allocated(&k->buddy, head, &order) || order != HPAGE_PMD_ORDER);
		BUG_ON(!lru_on(&k->lru, head));
		if (ps == PS_2M) {
			BUG_ON(!(f->flags & FOLIO_PMD_MAPPED) || f->nr_mapped != HPAGE_PMD_NR);
			c->thp_pmds++;
			if (c->seen) { /* shared: each PMD counted, the folio owned once */
				c->seen[head] += 1U << 16;
				if (c->seen[head] >> 16 > 1)
					return;
			}
			own(c, pfn, HPAGE_PMD_NR);
		} else if (f->flags & FOLIO_PMD_MAPPED) {
			/* an extra PTE of a folio another mm maps by its PMD (fork.c) */
			BUG_ON(!c->seen || !k->mapcount[pfn]);
			c->seen[pfn]++;
		} else {
			BUG_ON(!(f->mapped[i / 64] & (1ULL << (i % 64))));
			if (c->seen && c->seen[pfn]++ & 0xffff)
				return; /* a page of it shared by several mms: owned once */
			if (!k->mapcount[pfn])
				BUG_ON(k->rmap[pfn] != va + 1 || k->rmap_mm[pfn] != k->mm);
			c->subpages++;
			own(c, pfn, 1);
		}
		return;
	}
	BUG_ON(!buddy_is_allocated(&k->buddy, pfn, &order));
	BUG_ON(order != (ps == PS_4K ? 0 : HPAGE_PMD_ORDER));
	if (ps == PS_4K && kernel_page_shared(k, pfn)) {
		/* mapped by 1 + mapcount mms (fork.c): owned once, its reverse map
		 * names one of them, at the address that one maps it at */
		enum page_size rps;
		pfn_t rp;

		BUG_ON(!c->seen);
		BUG_ON(!k->rmap_mm[pfn] || k->rmap_mm[pfn]->exited ||
		       !pt_lookup(&k->rmap_mm[pfn]->pt, k->rmap[pfn] - 1, &rps, &rp, NULL) ||
		       rps != PS_4K || rp != pfn);
		BUG_ON(!lru_on(&k->lru, pfn));
		if (c->seen[pfn]++)
			return;
		c->lru_pages++;
		own(c, pfn, 1);
		return;
	}
	if (ps == PS_4K) {
		BUG_ON(k->rmap[pfn] != va + 1); /* the reverse map compaction relies on */
		BUG_ON(k->rmap_mm[pfn] != k->mm);
		BUG_ON(!lru_on(&k->lru, pfn));       /* every anonymous page can be reclaimed */
		c->lru_pages++;
	}
	own(c, pfn, 1UL << order);
}

static void own_cache_page(void *ctx, pfn_t pfn)
{
	own(ctx, pfn, 1);
}

static void inv_table(void *ctx, pfn_t pfn, unsigned level)
{
	struct inv_ctx *c = ctx;
	unsigned order = 1;

	(void)level;
	BUG_ON(!buddy_is_allocated(&c->k->buddy, pfn, &order) || order != 0);
	own(c, pfn, 1);
}

static void inv_swap(void *ctx, vaddr_t va, uint64_t slot)
{
	struct inv_ctx *c = ctx;

	BUG_ON(!vma_find(&c->k->mm->vmas, va));
	BUG_ON(!swap_slot_used(&c->k->swap, slot) || slot == 0);
	BUG_ON(c->slots[slot / 8] & (1 << (slot % 8))); /* one entry per slot */
	c->slots[slot / 8] |= (uint8_t)(1 << (slot % 8));
}

void kernel_check_invariants(struct kernel *k)
{
	struct inv_ctx c = { k, calloc((k->buddy.nr_pages + 7) / 8, 1), 0, 0, 0, 0, 0,
			     calloc(k->swap.nr_slots / 8 + 1, 1), 0, NULL };
	uint64_t thp_folios = 0;
	uint64_t folios_mapped = 0;
	uint64_t nr_swap = 0, nr_tables = 0, nr_leaves[PS_NR] = { 0 };
	struct mm *cur = k->mm;

	BUG_ON(!c.owned || !c.slots);
	if (k->nr_shared_ptes || k->thp.nr_shared_pmds) {
		c.seen = calloc(k->buddy.nr_pages, sizeof(*c.seen));
		BUG_ON(!c.seen);
	}
	buddy_check_invariants(&k->buddy);
	swap_check_invariants(&k->swap);
	khugepaged_check_invariants(k);
	reclaim_check_invariants(k);
	if (k->thp.mthp)
		thp_mthp_check_invariants(k);

	/* every process's page table and VMAs: their sums are the kernel's counts */
	for (struct mm *mm = k->mms; mm; mm = mm->next) {
		kernel_use_mm(k, mm);
		BUG_ON(mm->exited && (mm->pt.nr_tables > 1 || mm->vmas.n)); /* its empty root alone */
		pt_for_each_swap(&mm->pt, inv_swap, &c);
		pt_check_invariants(&mm->pt);
		vma_check_invariants(&mm->vmas);
		pt_for_each_leaf(&mm->pt, inv_leaf, &c);
		pt_for_each_table(&mm->pt, inv_table, &c);
		nr_swap += mm->pt.nr_swap;
		nr_tables += mm->pt.nr_tables;
		for (int ps = 0; ps < PS_NR; ps++)
			nr_leaves[ps] += mm->pt.nr_leaves[ps];
	}
	kernel_use_mm(k, cur);
	/* every slot in use but the header belongs to exactly one swap entry */
	BUG_ON(k->swap.nr_slots && nr_swap != k->swap.nr_used - 1);
	BUG_ON(nr_leaves[PS_1G] != k->st->nr_hugetlb_pages_1g);
	/* every change of resident memory was accounted (kernel_rss_changed()) */
	BUG_ON(k->racct.rss != kernel_rss_bytes(k->st) || k->racct.huge != kernel_huge_bytes(k->st));
	BUG_ON(nr_leaves[PS_4K] != k->st->nr_anon_pages + k->nr_shared_ptes + k->thp.nr_zero_ptes + k->fm.nr_ptes);
	/* a shared page is met once per mm mapping it: 1 + its mapcount (a
	 * PMD-mapped THP's pages: their mapcount is their PTEs, the PMDs are
	 * 1 + pmd_shared) */
	for (pfn_t f = 0; c.seen && f < k->buddy.nr_pages; f++) {
		const struct folio *fo = thp_is_folio(k, f) ? &k->thp.folio[f >> HPAGE_PMD_ORDER] : NULL;
		uint32_t ptes = c.seen[f] & 0xffff, pmds = c.seen[f] >> 16;

		if (fo && (fo->flags & FOLIO_PMD_MAPPED)) {
			BUG_ON(ptes != k->mapcount[f]);
			if (!(f & (HPAGE_PMD_NR - 1)))
				BUG_ON(pmds != 1U + fo->pmd_shared);
		} else {
			BUG_ON(pmds || (ptes && ptes != 1 + k->mapcount[f]) || (!ptes && k->mapcount[f]));
		}
	}
	free(c.seen);
	filemap_check_invariants(k, c.file_ptes, c.file_pmds);
	filemap_for_each(k, own_cache_page, &c);
	BUG_ON(nr_leaves[PS_2M] != k->st->nr_hugetlb_pages + k->thp.nr_zero_pmds +
				       k->st->nr_anon_transparent_hugepages + k->thp.nr_shared_pmds + k->fm.nr_pmds);
	BUG_ON(c.thp_pmds != k->st->nr_anon_transparent_hugepages + k->thp.nr_shared_pmds);
	BUG_ON(c.pages_1g != k->hugetlb.in_use_1g);
	/* a deposited table per THP or zero PMD, counted as a page-table page */
	BUG_ON(nr_tables + k->thp.dep_n != k->st->nr_page_table_pages);
	BUG_ON(k->thp.dep_n != k->thp.nr_zero_pmds + k->st->nr_anon_transparent_hugepages + k->thp.nr_shared_pmds);
	for (size_t i = 0; i < k->thp.dep_cap; i++)
		if (k->thp.dep_key[i])
			own(&c, k->thp.dep_val[i], 1);
	/* every PTE-mapped subpage is in its folio's map, and nothing else is */
	for (pfn_t f = 0; k->thp.folio && f < k->buddy.nr_pages >> HPAGE_PMD_ORDER; f++) {
		if ((k->thp.folio[f].flags & FOLIO_THP) && !(k->thp.folio[f].flags & FOLIO_PMD_MAPPED))
			folios_mapped += k->thp.folio[f].nr_mapped;
		thp_folios += !!(k->thp.folio[f].flags & FOLIO_THP);
	}
	BUG_ON(folios_mapped != c.subpages);
	/* the LRU holds exactly the anonymous folios: 4K pages and THPs */
	BUG_ON(lru_nr_pages(&k->lru) != c.lru_pages + thp_folios * HPAGE_PMD_NR);
	free(c.owned);
	free(c.slots);
}
