/*
 * mmu.c - the translation path of one core: split L1 TLBs (one array per page
 * size, probed together), the STLB, the paging-structure caches and the page
 * walk, with cycle accounting. Follows DESIGN.md's counting rules exactly (they
 * reproduce DynamoRIO drcachesim's TLB simulator; tests/check_validation.c):
 *
 *  - L1 hit: the array of the page's size holds it. A miss is counted against the
 *    array of the page's size once the size is known (after the STLB or the walk).
 *  - STLB hit: fill the L1 array. STLB miss: walk (fault if needed), fill the
 *    STLB (if an array holds that size) and the L1 array. Levels not inclusive.
 *  - Paging-structure caches (Intel SDM Vol. 3A §4.10.3): PML5E/PML4E/PDPTE/PDE
 *    caches keyed by the VA bits above each level, searched longest match first
 *    (PDE, PDPTE, PML4E, PML5E); an entry is created for every non-leaf entry a
 *    walk reads (so never for a PDE that maps a 2M page, nor a PDPTE mapping 1G).
 *  - Every entry the walk reads is a load through cache.c at its physical address.
 *  - A walk that meets a non-present entry calls the fault handler (sim_fault),
 *    then resumes at the level it stopped: one walk, one fault.
 *
 * Cycles: an L1 miss costs tlb.latency.l1 (the missed lookup) + tlb.latency.stlb
 * (the STLB probe); a walk costs walk.pwc_latency per PWC probe plus the latency
 * of the level that served each entry read. An L1 hit costs nothing extra: the
 * lookup overlaps the VIPT L1D access (reference §6).
 *
 * Leaves out: permission and dirty-bit re-walks, page-walk concurrency (one
 * walker; Skylake has two), speculative walks, TLB prefetch.
 */
#include "fault.h"
#include "mmu.h"

static const unsigned pwc_shift[PWC_NR] = {
	[PWC_PML5] = 48, [PWC_PML4] = 39, [PWC_PDPT] = 30, [PWC_PDE] = 21,
};

/* The PWC that caches an entry read at paging level @level (5..2). */
static inline enum pwc_level pwc_for_level(unsigned level)
{
	return level == 5 ? PWC_PML5 : level == 4 ? PWC_PML4 : level == 3 ? PWC_PDPT : PWC_PDE;
}

void mmu_data_access(struct sim *s, vaddr_t va, pfn_t pfn)
{
	cycles_t c = 0;

	cache_access(&s->cache, (paddr_t)pfn << PAGE_SHIFT | (va & (PAGE_SIZE - 1)), &c);
	s->st.cyc_data += c;
}

/* Time the entries of @p from index @from, fill PWCs for the non-leaf ones. */
static void walk_account(struct sim *s, vaddr_t va, const struct pt_path *p, unsigned from)
{
	for (unsigned k = from; k < p->nr; k++) {
		unsigned served = cache_access(&s->cache, p->pa[k], &s->st.walk_cycles);
		unsigned level = p->level[k];

		s->st.served[served]++;
		s->st.pte_reads++;
		if (level >= 2 && (p->entry[k] & PTE_P) && !(p->entry[k] & PTE_PS)) {
			enum pwc_level pl = pwc_for_level(level);
			struct tlb_array *a = &s->pwc[pl];
			uint64_t key = va >> pwc_shift[pl];

			if (a->ways && tlb_array_probe(a, key) < 0)
				tlb_array_fill(a, key, (uint64_t)(uintptr_t)pt_table_at(&s->pt, va, level - 1));
		}
	}
}

/* Walk @va; fault it in if needed. Returns false if the fault failed (s->failed). */
static bool walk(struct sim *s, vaddr_t va, bool write, enum page_size *ps, pfn_t *pfn)
{
	unsigned start_level = s->pt.levels;
	const struct pt_node *table = NULL;
	struct pt_path p;

	s->st.walks++;
	if (unlikely(va >= s->va_limit)) {
		/* the walk would alias a lower address: refuse, as a non-canonical access faults */
		sim_fault(s, va, write);
		return false;
	}
	/* longest match first: PDE, PDPTE, PML4E (and PML5E at 5 levels) */
	for (int pl = PWC_PDE; pl >= (s->pt.levels == 5 ? PWC_PML5 : PWC_PML4); pl--) {
		struct tlb_array *a = &s->pwc[pl];
		long e;

		if (!a->ways)
			continue;
		s->st.walk_cycles += s->cfg.pwc_latency;
		e = tlb_array_lookup(a, va >> pwc_shift[pl]);
		if (e >= 0) {
			s->st.pwc[pl].hits++;
			table = (const struct pt_node *)(uintptr_t)a->payload[e];
			start_level = pl == PWC_PDE ? 1 : pl == PWC_PDPT ? 2 : pl == PWC_PML4 ? 3 : 4;
			break;
		}
		s->st.pwc[pl].misses++;
	}
	pt_walk(&s->pt, va, write, start_level, table, &p);
	walk_account(s, va, &p, 0);
	/* not present, or a write to a read-only leaf (the zero page): fault, resume */
	for (int tries = 0; !p.present || (write && !(p.entry[p.nr - 1] & PTE_RW)); tries++) {
		unsigned stop = p.level[p.nr - 1];
		struct pt_path q;

		BUG_ON(tries > 2);
		if (p.present ? sim_wp_fault(s, va) : sim_fault(s, va, write))
			return false;
		/* resume: re-read the entry that was not present, now filled in */
		stop = stop < s->pt.levels && !pt_table_at(&s->pt, va, stop) ? s->pt.levels : stop;
		pt_walk(&s->pt, va, write, stop, stop == s->pt.levels ? NULL : pt_table_at(&s->pt, va, stop), &q);
		walk_account(s, va, &q, 0);
		p = q;
	}
	*ps = p.ps;
	*pfn = p.pfn | (p.entry[p.nr - 1] & PTE_RW ? 0 : TLB_RO);
	return true;
}

void mmu_access_slow(struct sim *s, vaddr_t va, enum tlb_side side, bool write)
{
	struct tlb *t = &s->tlb;
	enum page_size ps;
	pfn_t pfn;
	long e;

	/*
	 * L1: the arrays of every size, probed together. The 4K array first and
	 * inline: its other ways answer most of what reaches here (the inline path
	 * tried the MRU way; a store to a read-only MRU entry comes here too).
	 */
	{
		struct tlb_array *a = &t->l1[side][PS_4K];
		uint64_t vpn = va >> PAGE_SHIFT;

		if (a->nr_valid) {
			unsigned set = tlb_set_of(a, vpn), base = set * a->ways;

			for (unsigned w = 0; w < a->ways; w++)
				if (a->tag[base + w] == vpn) {
					tlb_array_touch(a, set, w);
					ps = PS_4K;
					pfn = a->payload[base + w];
					s->st.l1[side].hits[PS_4K]++;
					if (unlikely(write && (pfn & TLB_RO)))
						goto wp;
					mmu_memo_set(s, side, vpn, PS_4K, pfn);
					if (unlikely(s->data_refs) && side == SIDE_D)
						mmu_data_access(s, va, pfn & ~TLB_RO);
					return;
				}
		}
	}
	for (int i = PS_2M; i < PS_NR; i++) {
		struct tlb_array *a = &t->l1[side][i];

		if (!a->nr_valid)
			continue;
		e = tlb_array_lookup(a, va >> page_shift_of((enum page_size)i));
		if (e >= 0) {
			ps = (enum page_size)i;
			pfn = a->payload[e];
			s->st.l1[side].hits[ps]++;
			if (unlikely(write && (pfn & TLB_RO)))
				goto wp;
			goto done;
		}
	}
	s->st.cyc_translation += s->cfg.lat_l1 + s->cfg.lat_stlb;
	if (t->nr_stlb && tlb_stlb_lookup(t, va, &ps, &pfn)) {
		s->st.stlb.hits++;
		if (unlikely(write && (pfn & TLB_RO))) {
			s->st.l1[side].misses[ps]++;
			goto wp;
		}
	} else {
		if (t->nr_stlb)
			s->st.stlb.misses++;
		if (!walk(s, va, write, &ps, &pfn))
			return;
		tlb_stlb_fill(t, va, ps, pfn);
	}
	s->st.l1[side].misses[ps]++;
	tlb_array_fill(&t->l1[side][ps], va >> page_shift_of(ps), pfn);
done:
	/* the memo: only a translation the L1 holds can answer repeats */
	{
		uint64_t vpn = va >> PAGE_SHIFT;
		pfn_t pfn4k = pfn + (vpn & ((1UL << (page_shift_of(ps) - PAGE_SHIFT)) - 1));

		mmu_memo_set(s, side, t->l1[side][ps].ways ? vpn : VPN_NONE, ps, pfn4k);
		if (unlikely(s->data_refs) && side == SIDE_D)
			mmu_data_access(s, va, pfn4k & ~TLB_RO);
	}
	return;
wp:
	/*
	 * A store hit a read-only translation (the huge or 4K zero page): #PF, the
	 * kernel breaks COW and flushes the page, the store restarts and misses.
	 */
	if (sim_wp_fault(s, va))
		return;
	mmu_access_slow(s, va, side, write);
}

static void pwc_flush(struct sim *s)
{
	for (int i = 0; i < PWC_NR; i++)
		tlb_array_flush(&s->pwc[i]);
}

void mmu_invalidate_range(struct sim *s, vaddr_t start, vaddr_t end)
{
	tlb_invalidate_range(&s->tlb, start, end);
	/* INVLPG also invalidates all paging-structure-cache entries (SDM §4.10.4.1) */
	pwc_flush(s);
	mmu_forget(s);
}

void mmu_flush_all(struct sim *s)
{
	tlb_flush_all(&s->tlb);
	pwc_flush(s);
	mmu_forget(s);
}
