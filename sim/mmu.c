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
 *  - A 1G page in a level without 1G entries (an L1 side, or the STLB) is
 *    cached there as the fracture holding the address: an entry of the
 *    largest size the level holds, 2M else 4K (SDM Vol. 3A §4.10.2.3), and an
 *    L1 miss is counted against that size, the array it fills. INVLPG of any
 *    address of such a page removes all its fractures (§4.10.4.1). A 2M page
 *    where a level has no 2M entries is not cached there, as before.
 *  - Paging-structure caches (Intel SDM Vol. 3A §4.10.3): PML5E/PML4E/PDPTE/PDE
 *    caches keyed by the VA bits above each level, searched longest match first
 *    (PDE, PDPTE, PML4E, PML5E); an entry is created for every non-leaf entry a
 *    walk reads (so never for a PDE that maps a 2M page, nor a PDPTE mapping 1G).
 *  - Every entry the walk reads is a load through cache.c at its physical address.
 *  - A walk that meets a non-present entry calls the OS's fault hook
 *    (m->fault, wp false), then resumes at the level it stopped: one walk, one
 *    fault. A store that meets a read-only translation (a TLB entry or the leaf
 *    a walk read) calls it with wp true, then restarts the access.
 *
 * Cycles: an L1 miss costs tlb.latency.l1 (the missed lookup) + tlb.latency.stlb
 * (the STLB probe); a walk costs walk.pwc_latency per PWC probe plus the latency
 * of the level that served each entry read. An L1 hit costs nothing extra: the
 * lookup overlaps the VIPT L1D access (reference §6).
 *
 * Time: under cpu.model additive these cycles are summed into cycles.total.
 * Under overlap a lookup that reached the STLB, and every data access with
 * data_refs, also reports its cost to the timing hook (m->timing, core.c),
 * which places it in time: concurrent walks on walk.walkers walkers, misses
 * in flight bounded by MSHRs. The L1-hit path never calls it. With a
 * prefetcher or cache.dram_bandwidth the caches are the timed hierarchy
 * (cache.c): a data access also reports its prefetches and write-backs, which
 * the core times (core.c) and mmu_stats counts.
 *
 * Leaves out: permission and dirty-bit re-walks, speculative walks, TLB prefetch.
 */
#include <string.h>

#include "mmu.h"
#include "mmu_walk.h"

/* The timed hierarchy's counts of one data access that @level served (cache.c's out). */
static void count_timed(struct mmu *m, unsigned level)
{
	const struct cache_out *o = &m->cache.out;

	for (unsigned i = 0; i < o->npf; i++) {
		m->st.prefetches[o->pf[i].target == CL_L1D ? 0 : 1]++;
		m->st.dram_reads += o->pf[i].src == CL_NR;
	}
	m->st.useful_prefetches[0] += o->useful[0];
	m->st.useful_prefetches[1] += o->useful[1];
	m->st.dram_reads += level == CL_NR;
	m->st.writebacks += o->writebacks; /* (the core takes them next: counted once) */
}

void mmu_data_access(struct mmu *m, vaddr_t va, pfn_t pfn, bool write)
{
	cycles_t c = 0;
	paddr_t pa = (paddr_t)pfn << PAGE_SHIFT | (va & (PAGE_SIZE - 1));
	unsigned level;

	if (unlikely(m->cache.timed)) {
		level = cache_access_timed(&m->cache, pa, write, true, &c);
		count_timed(m, level);
	} else {
		level = cache_access(&m->cache, pa, &c);
	}
	m->st.cyc_data += c;
	if (unlikely(m->timing != NULL)) {
		/* the translation's cost, if this reference missed (access_slow() left it) */
		struct core_ref r = m->tpend;

		r.write = write;
		r.modify = write && r.modify;
		r.data = true;
		r.level = level;
		r.t_data = c;
		memset(&m->tpend, 0, sizeof(m->tpend));
		m->timing(m->os, &r);
	}
}

void mmu_data_load(struct mmu *m, vaddr_t va, pfn_t pfn)
{
	mmu_data_access(m, va, pfn, false);
}

void mmu_data_store(struct mmu *m, vaddr_t va, pfn_t pfn)
{
	mmu_data_access(m, va, pfn, true);
}

/*
 * The timing hook after a lookup that reached the STLB (cpu.model overlap):
 * the probes (@t_stlb), a walk's cycles if it walked. A data-side lookup with
 * data_refs leaves them for its data access (mmu_data_access()), which reports
 * both. Out of line: the miss path only.
 */
static __attribute__((noinline)) void timing_translated(struct mmu *m, enum tlb_side side, bool write,
							bool modify)
{
	/* the walk's cycles: what the walkers did since the last report (nothing else walks) */
	struct core_ref r = { .ifetch = side == SIDE_I, .write = write, .modify = modify,
			      .walked = m->st.walks != m->twalks, .t_stlb = m->lat_miss,
			      .t_walk = m->st.walk_cycles - m->twalk_cycles };

	m->twalks = m->st.walks;
	m->twalk_cycles = m->st.walk_cycles;

	if (side == SIDE_D && m->data_refs) {
		m->tpend = r;
		return;
	}
	m->timing(m->os, &r);
}

/* Time the entries of @p from index @from, fill PWCs for the non-leaf ones. */
static void walk_account(struct mmu *m, vaddr_t va, const struct pt_path *p, unsigned from)
{
	for (unsigned k = from; k < p->nr; k++) {
		unsigned served = cache_access(&m->cache, p->pa[k], &m->st.walk_cycles);

		m->st.served[served]++;
		m->st.pte_reads++;
		pwc_fill_entry(m->pwc, m->pt, va, p->level[k], p->entry[k]);
	}
}

/*
 * The general walk of @va from @start_level (@table: where a PWC hit left it, or
 * NULL from the root), through the fault hook when an entry is missing or a store
 * meets a read-only leaf. Out of line: most walks end in walk()'s fast case.
 */
static __attribute__((noinline)) bool walk_general(struct mmu *m, vaddr_t va, bool write,
						   unsigned start_level, const struct pt_node *table,
						   enum page_size *ps, pfn_t *pfn)
{
	struct pt_path p;

	pt_walk(m->pt, va, write, start_level, table, &p);
	walk_account(m, va, &p, 0);
	/* not present, or a write to a read-only leaf (the zero page): fault, resume */
	for (int tries = 0; !p.present || (write && !(p.entry[p.nr - 1] & PTE_RW)); tries++) {
		unsigned stop;

		BUG_ON(tries > 2);
		if (m->fault(m->os, va, write, p.present))
			return false;
		/* resume: re-read the entry that was not present, now filled in */
		stop = walk_resume(m->pt, va, p.level[p.nr - 1], &table);
		pt_walk(m->pt, va, write, stop, table, &p);
		walk_account(m, va, &p, 0);
	}
	*ps = p.ps;
	*pfn = p.pfn | (p.entry[p.nr - 1] & PTE_RW ? 0 : TLB_RO);
	return true;
}

/*
 * walk() when the PDE cache misses, the walk is nested, or @va is beyond the
 * table: the rest of the longest-match search, then walk_general(). Out of line.
 */
static __attribute__((noinline)) bool walk_upper(struct mmu *m, vaddr_t va, bool write,
						 enum page_size *ps, pfn_t *pfn)
{
	const struct pt_node *table = NULL;
	unsigned start_level;

	if (unlikely(m->nested != NULL))
		return mmu_nested_walk(m, va, write, ps, pfn);
	if (unlikely(va >= m->va_limit)) {
		/* the walk would alias a lower address: refuse, as a non-canonical access faults */
		m->fault(m->os, va, write, false);
		return false;
	}
	/* the PDE cache missed (walk()): PDPTE, PML4E (and PML5E at 5 levels), unrolled */
	if (pwc_probe(m, PWC_PDPT, va, &table))
		start_level = 2;
	else if (pwc_probe(m, PWC_PML4, va, &table))
		start_level = 3;
	else if (m->pt->levels == 5 && pwc_probe(m, PWC_PML5, va, &table))
		start_level = 4;
	else
		start_level = m->pt->levels;
	return walk_general(m, va, write, start_level, table, ps, pfn);
}

/*
 * Walk @va; fault it in if needed. Returns false if the fault hook failed.
 * Inline in access_slow(): the PDE cache's hit and its PTE (most walks), the
 * rest out of line (walk_upper(), walk_general()). As a call of its own, its
 * prologue and epilogue (the general case's registers) were 20 of its 65
 * instructions a walk on the miss-heavy bench trace; inline, that trace's run
 * went from 4.697 G to 4.592 G instructions (callgrind).
 */
static inline __attribute__((always_inline)) bool walk(struct mmu *m, vaddr_t va, bool write,
						       enum page_size *ps, pfn_t *pfn)
{
	const struct pt_node *table = NULL;

	m->st.walks++;
	if (unlikely(m->nested != NULL || va >= m->va_limit))
		return walk_upper(m, va, write, ps, pfn);
	/* longest match first: PDE, PDPTE, PML4E (and PML5E at 5 levels) */
	if (likely(pwc_probe(m, PWC_PDE, va, &table))) {
		/* the PTE of a PDE-cache hit, most walks: no path built */
		paddr_t pa;
		bool rw;

		if (likely(pt_walk_pte(table, va, write, &pa, pfn, &rw))) {
			m->st.served[cache_access(&m->cache, pa, &m->st.walk_cycles)]++;
			m->st.pte_reads++;
			*ps = PS_4K;
			*pfn |= rw ? 0 : TLB_RO;
			return true;
		}
		return walk_general(m, va, write, 1, table, ps, pfn);
	}
	return walk_upper(m, va, write, ps, pfn);
}

/*
 * Coalescing (tlb.coalesce.*, tlb.c): true if the aligned run of 1 <<
 * coal_shift 4K pages holding @va, whose page maps @pfn, is coalescible in
 * the table the walker reads: every page present and 4K, frames consecutive
 * from a run-aligned first frame, equal permissions (R/W, U/S). What AMD's
 * walker finds in the PTEs it reads (the run's PTEs share one 64-byte line);
 * for contpte, where the kernel would have set the contiguous bit (DESIGN.md
 * "Coalescing TLBs"). Accessed and dirty bits are not compared.
 */
static __attribute__((cold, noinline)) bool coal_run(const struct mmu *m, vaddr_t va, pfn_t pfn)
{
	uint64_t n = 1ULL << m->tlb.coal_shift, attr = 0;
	vaddr_t base = va & ~(n * PAGE_SIZE - 1);
	pfn_t first = (pfn & ~TLB_RO) - ((va - base) >> PAGE_SHIFT);

	if (first & (n - 1))
		return false;
	for (uint64_t i = 0; i < n; i++) {
		enum page_size ps;
		pfn_t p;
		uint64_t e;

		if (!pt_lookup(m->pt, base + i * PAGE_SIZE, &ps, &p, &e) || ps != PS_4K || p != first + i)
			return false;
		if (!i)
			attr = e & (PTE_RW | PTE_US);
		else if ((e & (PTE_RW | PTE_US)) != attr)
			return false;
	}
	return true;
}

/*
 * stlb_or_walk() where some array coalesces: the STLB's 4K arrays also answer
 * from their runs' coalesced entries, and a walk to a 4K page checks its run
 * (coal_run()), which decides the STLB's fill and, through m->coal_ok, the
 * L1's. An STLB hit on a coalesced entry lets the L1 fill a coalesced entry
 * too (AMD's "DTLB reload to a coalesced page that hit in the L2 TLB").
 */
static __attribute__((cold, noinline)) int stlb_or_walk_coal(struct mmu *m, vaddr_t va, enum tlb_side side,
							     bool write, enum page_size *ps, pfn_t *pfn)
{
	struct tlb *t = &m->tlb;
	bool hit = false, coal = false;

	m->coal_ok = false;
	for (unsigned j = 0; j < t->nr_probe && !hit; j++) { /* tlb_stlb_lookup()'s order */
		struct tlb_array *a = &t->stlb[t->probe[j].arr];
		enum page_size s = (enum page_size)t->probe[j].ps;
		uint64_t key = tlb_stlb_key(va, s);

		if (a->count_low2 && !a->nr_low2[s])
			continue;
		if (s == PS_4K && a->coal_shift) {
			hit = tlb_array_lookup_coal(a, key, pfn, &coal);
		} else {
			long e = tlb_array_lookup(a, key);

			if (e >= 0) {
				hit = true;
				*pfn = a->payload[e];
			}
		}
		if (hit)
			*ps = s;
	}
	if (hit) {
		m->st.stlb.hits++;
		if (coal) {
			m->st.coal_hits[2]++;
			m->coal_ok = true;
		}
		return 1;
	}
	if (t->nr_stlb)
		m->st.stlb.misses++;
	m->fault_ifetch = side == SIDE_I;
	if (!walk(m, va, write, ps, pfn))
		return -1;
	if (*ps == PS_4K) {
		m->coal_ok = coal_run(m, va, *pfn);
		m->st.coal_fills[2] += tlb_stlb_fill_4k(t, va, *pfn, m->coal_ok);
	} else {
		tlb_stlb_fill(t, va, *ps, *pfn);
	}
	return 0;
}

/* An L1 4K miss in a coalescing array: its run's coalesced entry, if held. */
static __attribute__((cold, noinline)) bool l1_coal_lookup(struct mmu *m, struct tlb_array *a,
							   enum tlb_side side, uint64_t vpn, pfn_t *pfn)
{
	long e = tlb_array_lookup(a, tlb_coal_key(a, vpn));

	if (e < 0)
		return false;
	m->st.coal_hits[side]++;
	*pfn = a->payload[e] + (vpn & ((1ULL << a->coal_shift) - 1));
	return true;
}

/* The L1 4K fill in a coalescing array: its run's entry where the miss found the run coalescible. */
static __attribute__((cold, noinline)) void l1_coal_fill(struct mmu *m, struct tlb_array *a,
							 enum tlb_side side, uint64_t vpn, pfn_t pfn)
{
	bool c = m->coal_ok && a->coal_shift;

	m->st.coal_fills[side] += c;
	tlb_array_fill_coal(a, vpn, pfn, c);
}

/*
 * After an L1 miss: the STLB, else a walk (through the fault hook) and the
 * STLB's fill. 1: an STLB hit, 0: walked, -1: the fault could not be served;
 * *@ps and *@pfn the translation found.
 */
static inline __attribute__((always_inline)) int stlb_or_walk(struct mmu *m, vaddr_t va,
							      enum tlb_side side, bool write,
							      enum page_size *ps, pfn_t *pfn, bool coal)
{
	struct tlb *t = &m->tlb;
	struct tlb_array *sa = NULL;
	enum page_size ss = PS_4K;
	uint64_t skey = 0;
	unsigned sset = 0;
	long e;

	if (coal) /* a constant: access_slow()'s coalescing copy */
		return stlb_or_walk_coal(m, va, side, write, ps, pfn);
	if (likely(t->stlb1 != NULL)) {
		/*
		 * An STLB of one array holding one size (every shipped machine but
		 * Zen 4): its set found once for the lookup and for the fill after a
		 * walk (the miss-heavy bench trace walks on 97% of its L1 misses).
		 */
		sa = t->stlb1;
		ss = t->stlb1_ps;
		skey = tlb_stlb_key(va, ss);
		sset = tlb_set_of(sa, skey);
		e = sa->nr_valid ? tlb_array_lookup_set(sa, sset, skey) : -1;
		if (e >= 0) {
			*ps = ss;
			*pfn = sa->payload[sset * sa->ways + (unsigned)e];
		}
	} else {
		e = t->nr_stlb && tlb_stlb_lookup(t, va, ps, pfn) ? 0 : -1;
	}
	if (e >= 0) {
		m->st.stlb.hits++;
		return 1;
	}
	if (t->nr_stlb)
		m->st.stlb.misses++;
	m->fault_ifetch = side == SIDE_I;
	if (!walk(m, va, write, ps, pfn))
		return -1;
	if (sa) {
		if (likely(*ps == ss)) { /* the one size: the one array takes it */
			tlb_stlb_fill_set(sa, sset, skey, *pfn);
		} else if (unlikely(*ps == PS_1G)) {
			/* a 1G page, no 1G entries: its fracture of the one size (ss < 1G), whose set is found */
			t->fractured = true;
			tlb_stlb_fill_set(sa, sset, skey, tlb_frac_pfn(va, *pfn, ss));
		}
	} else {
		tlb_stlb_fill(t, va, *ps, *pfn);
	}
	return 0;
}

/*
 * mmu_access_slow() with @side and @write constants: each of its three callers'
 * kinds (fetch, load, store) gets its own copy, in which the L1 arrays sit at
 * fixed offsets from @m (with the unrolled PWC search of walk(), the miss-heavy
 * bench trace's slow path went from 337 to 308 instructions a call, walk()
 * included; callgrind).
 */
/*
 * @coal (a constant): the copy for a machine where some array coalesces
 * (tlb.coalesce.*); mmu_init() points m->slow[] at one set of copies or the
 * other, so a machine that does not coalesce runs the code it always did.
 */
static inline __attribute__((always_inline)) void access_slow(struct mmu *m, vaddr_t va,
							      enum tlb_side side, bool write, bool modify,
							      bool coal)
{
	struct tlb *t = &m->tlb;
	/*
	 * The 4K L1 array and the page's set in it, found once: the lookup and, when
	 * the page turns out to be 4K (most misses), the fill use them (the miss-heavy
	 * bench trace: 775.9 -> 765.8 instructions an update, callgrind).
	 */
	struct tlb_array *a4 = &t->l1[side][PS_4K];
	uint64_t vpn = va >> PAGE_SHIFT;
	unsigned set4 = tlb_set_of(a4, vpn);
	enum page_size ps;
	pfn_t pfn;
	long e;
	int r;

	/*
	 * L1: the arrays of every size, probed together. The 4K array first and
	 * inline: its other ways answer most of what reaches here (the inline path
	 * tried the MRU way; a store to a read-only MRU entry comes here too).
	 */
	if (a4->nr_valid) {
		/* the hash of a fully associative array, not a 72-way scan: zen4's
		 * miss-heavy GUPS 8.71 G -> 6.66 G instructions (callgrind) */
		long w = tlb_array_find(a4, set4, vpn);

		if (w >= 0) {
			tlb_array_touch(a4, set4, (unsigned)w);
			pfn = a4->payload[set4 * a4->ways + (unsigned)w];
		hit4k:
			ps = PS_4K;
			m->st.l1[side].hits[PS_4K]++;
			if (unlikely(write && (pfn & TLB_RO)))
				goto wp;
			mmu_memo_set(m, side, vpn, PS_4K, pfn);
			if (unlikely(m->data_refs) && side == SIDE_D)
				mmu_data_access(m, va, pfn & ~TLB_RO, write);
			return;
		}
		if (coal && a4->coal_shift && l1_coal_lookup(m, a4, side, vpn, &pfn))
			goto hit4k;
	}
	for (int i = PS_2M; i < PS_NR; i++) {
		struct tlb_array *a = &t->l1[side][i];

		if (!a->nr_valid)
			continue;
		e = tlb_array_lookup(a, va >> page_shift_of((enum page_size)i));
		if (e >= 0) {
			ps = (enum page_size)i;
			pfn = a->payload[e];
			m->st.l1[side].hits[ps]++;
			if (unlikely(write && (pfn & TLB_RO)))
				goto wp;
			goto done;
		}
	}
	/* a miss outside the OS's accounting window: it charges, then moves it (vmas.c) */
	if (unlikely(va - m->win_lo >= m->win_len) && m->window)
		m->window(m->os, va);
	m->st.cyc_translation += m->lat_miss;
	r = stlb_or_walk(m, va, side, write, &ps, &pfn, coal);
	if (r < 0)
		return;
	if (likely(ps == PS_4K)) {
		m->st.l1[side].misses[PS_4K]++;
		if (r > 0 && unlikely(write && (pfn & TLB_RO)))
			goto wp;
		if (unlikely(m->timing != NULL))
			timing_translated(m, side, write, modify);
		if (coal && a4->coal_shift)
			l1_coal_fill(m, a4, side, vpn, pfn);
		else
			tlb_array_fill_set(a4, set4, vpn, pfn);
		mmu_memo_set(m, side, a4->ways ? vpn : VPN_NONE, PS_4K, pfn);
		if (unlikely(m->data_refs) && side == SIDE_D)
			mmu_data_access(m, va, pfn & ~TLB_RO, write);
		return;
	}
	if (unlikely(ps == PS_1G) && t->l1_frac_1g[side] != PS_1G) {
		/* no 1G entries on this side: the fracture holding @va (tlb.h), counted as its size */
		ps = t->l1_frac_1g[side];
		pfn = tlb_frac_pfn(va, pfn, ps);
		t->fractured = true;
	}
	m->st.l1[side].misses[ps]++;
	if (r > 0 && unlikely(write && (pfn & TLB_RO)))
		goto wp;
	if (unlikely(m->timing != NULL))
		timing_translated(m, side, write, modify);
	tlb_array_fill(&t->l1[side][ps], va >> page_shift_of(ps), pfn);
done:
	/* the memo: only a translation the L1 holds can answer repeats */
	{
		pfn_t pfn4k = pfn + (vpn & ((1UL << (page_shift_of(ps) - PAGE_SHIFT)) - 1));

		mmu_memo_set(m, side, t->l1[side][ps].ways ? vpn : VPN_NONE, ps, pfn4k);
		if (unlikely(m->data_refs) && side == SIDE_D)
			mmu_data_access(m, va, pfn4k & ~TLB_RO, write);
	}
	return;
wp:
	/*
	 * A store hit a read-only translation (the huge or 4K zero page): #PF, the
	 * kernel breaks COW and flushes the page, the store restarts and misses.
	 */
	if (m->fault(m->os, va, true, true))
		return;
	if (modify)
		mmu_access_slow_modify(m, va);
	else
		mmu_access_slow(m, va, side, write);
}

static void slow_fetch(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_I, false, false, false);
}

static void slow_load(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_D, false, false, false);
}

static void slow_store(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_D, true, false, false);
}

/* A copy of its own, not a flag around the store's: a flag cost ~5 instructions a modify
 * miss on a GUPS trace (callgrind) */
static void slow_modify(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_D, true, true, false);
}

/* The copies of a machine that coalesces. */
static void slow_fetch_coal(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_I, false, false, true);
}

static void slow_load_coal(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_D, false, false, true);
}

static void slow_store_coal(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_D, true, false, true);
}

static void slow_modify_coal(struct mmu *m, vaddr_t va)
{
	access_slow(m, va, SIDE_D, true, true, true);
}

/*
 * The current PCID's PWC entries: all of them unless another PCID's may be
 * cached (INVLPG and a CR3 load invalidate "all entries in the paging-structure
 * caches associated with the current PCID", SDM Vol. 3A §4.10.4.1).
 */
static unsigned pwc_flush(struct mmu *m)
{
	unsigned n = 0;

	for (int i = 0; i < PWC_NR; i++)
		n += likely(!m->pcid_mixed) ? tlb_array_flush(&m->pwc[i])
					    : tlb_array_flush_tag(&m->pwc[i], 0, 1, 0, -1);
	return n;
}

/* Every TLB and PWC entry of every PCID. */
static unsigned flush_every_pcid(struct mmu *m)
{
	unsigned n = tlb_flush_all(&m->tlb);

	for (int i = 0; i < PWC_NR; i++)
		n += tlb_array_flush(&m->pwc[i]);
	m->pcid_mixed = false;
	return n;
}

/* The current PCID's TLB and PWC entries. */
static unsigned flush_current(struct mmu *m)
{
	if (likely(!m->pcid_mixed))
		return flush_every_pcid(m);
	return tlb_flush_tag(&m->tlb, 0, 0, 0) + pwc_flush(m);
}

/*
 * [*@start, *@end) widened to the whole 1G page holding either end, where one
 * is mapped: INVLPG of an address in a page cached as several fractures
 * removes them all (SDM Vol. 3A §4.10.4.1).
 */
static void widen_to_1g(const struct mmu *m, vaddr_t *start, vaddr_t *end)
{
	enum page_size ps;
	pfn_t pfn;

	if (pt_lookup(m->pt, *start, &ps, &pfn, NULL) && ps == PS_1G)
		*start &= ~(PUD_SIZE - 1);
	if (pt_lookup(m->pt, *end - 1, &ps, &pfn, NULL) && ps == PS_1G)
		*end = (*end + PUD_SIZE - 1) & ~(PUD_SIZE - 1);
}

void mmu_invalidate_range(struct mmu *m, vaddr_t start, vaddr_t end)
{
	if (unlikely(m->tlb.fractured) && end > start && !m->nested)
		widen_to_1g(m, &start, &end);
	tlb_invalidate_range(&m->tlb, start, end);
	if (unlikely(m->inval_hook))
		m->inval_hook(m->inval_ctx, start, end, false);
	/* INVLPG also invalidates all paging-structure-cache entries (SDM §4.10.4.1) */
	pwc_flush(m);
	mmu_forget(m);
}

void mmu_fault_invalidate(struct mmu *m, vaddr_t va)
{
	vaddr_t start = va & ~(PAGE_SIZE - 1), end = start + PAGE_SIZE;

	if (unlikely(m->tlb.fractured) && !m->nested)
		widen_to_1g(m, &start, &end);
	tlb_invalidate_range(&m->tlb, start, end);
	if (unlikely(m->inval_hook))
		m->inval_hook(m->inval_ctx, start, end, false);
	for (int i = 0; i < PWC_NR; i++)
		tlb_array_invalidate(&m->pwc[i], va >> pwc_shift[i]);
	mmu_forget(m);
}

void mmu_flush_all(struct mmu *m)
{
	flush_current(m);
	if (unlikely(m->inval_hook))
		m->inval_hook(m->inval_ctx, 0, 0, true);
	mmu_forget(m);
}

void mmu_load_cr3(struct mmu *m, struct pagetable *pt, unsigned pcid, bool noflush)
{
	bool flush = true;
	unsigned n;

	m->st.cr3_loads++;
	m->pt = pt;
	if (!m->pcide) {
		n = flush_every_pcid(m); /* all non-global entries: all of them */
	} else {
		BUG_ON(pcid > TLB_PCID_MAX);
		if (pcid != m->pcid) {
			/* the keys now say their PCID relative to @pcid (tlb.h) */
			uint64_t x = (uint64_t)(pcid ^ m->pcid) << TLB_PCID_SHIFT;
			unsigned valid = 0;

			tlb_retag(&m->tlb, x);
			for (int i = 0; i < PWC_NR; i++)
				valid += tlb_array_retag(&m->pwc[i], x);
			for (int ps = 0; ps < PS_NR; ps++)
				valid += m->tlb.l1[SIDE_I][ps].nr_valid + m->tlb.l1[SIDE_D][ps].nr_valid;
			for (unsigned i = 0; i < m->tlb.nr_stlb; i++)
				valid += m->tlb.stlb[i].nr_valid;
			m->pcid_mixed |= valid != 0;
			m->pcid = pcid;
		}
		flush = !noflush;
		n = flush ? flush_current(m) : 0;
	}
	if (flush) {
		m->st.cr3_flushes++;
		m->st.cr3_flushed += n;
		if (unlikely(m->inval_hook))
			m->inval_hook(m->inval_ctx, 0, 0, true);
	}
	mmu_forget(m);
}

unsigned mmu_invpcid(struct mmu *m, enum invpcid_type type, unsigned pcid, vaddr_t va)
{
	uint64_t tag = (uint64_t)((pcid ^ m->pcid) & TLB_PCID_MAX) << TLB_PCID_SHIFT;
	unsigned n = 0;

	switch (type) {
	case INVPCID_ADDR: {
		vaddr_t start = va & ~(PAGE_SIZE - 1), end = start + PAGE_SIZE;

		if (!tag) { /* the current PCID: INVLPG's invalidation */
			if (unlikely(m->tlb.fractured) && !m->nested)
				widen_to_1g(m, &start, &end);
			n = tlb_invalidate_range(&m->tlb, start, end) + pwc_flush(m);
			if (unlikely(m->inval_hook))
				m->inval_hook(m->inval_ctx, start, end, false);
			mmu_forget(m);
			return n;
		}
		if (m->tlb.fractured) { /* its table is not ours to read: the whole 1G region */
			start &= ~(PUD_SIZE - 1);
			end = start + PUD_SIZE;
		}
		n = tlb_flush_tag(&m->tlb, tag, start, end);
		for (int i = 0; i < PWC_NR; i++)
			n += tlb_array_flush_tag(&m->pwc[i], tag, 1, 0, -1);
		break;
	}
	case INVPCID_SINGLE:
		if (!tag)
			n = flush_current(m);
		else {
			n = tlb_flush_tag(&m->tlb, tag, 0, 0);
			for (int i = 0; i < PWC_NR; i++)
				n += tlb_array_flush_tag(&m->pwc[i], tag, 1, 0, -1);
		}
		break;
	case INVPCID_ALL_GLOBAL:
	case INVPCID_ALL: /* no global entries: the same */
		n = flush_every_pcid(m);
		tag = 0;
		break;
	}
	if (!tag && unlikely(m->inval_hook))
		m->inval_hook(m->inval_ctx, 0, 0, true);
	mmu_forget(m);
	return n;
}

int mmu_init(struct mmu *m, const struct sim_config *cfg, struct pagetable *pt, mmu_fault_fn fault,
	     void *os)
{
	memset(m, 0, sizeof(*m));
	m->last_vpn[0] = m->last_vpn[1] = VPN_NONE;
	m->data_refs = cfg->data_refs;
	m->pcide = cfg->pcid;
	m->pt = pt;
	m->va_limit = 1ULL << (PAGE_SHIFT + 9 * cfg->levels);
	m->lat_miss = cfg->lat_l1 + cfg->lat_stlb;
	m->pwc_latency = cfg->pwc_latency;
	m->fault = fault;
	m->os = os;
	m->win_len = UINT64_MAX; /* no window hook: no L1 miss leaves the window */
	if (tlb_init(&m->tlb, cfg) || cache_init(&m->cache, cfg) ||
	    (config_mem_timed(cfg) && cache_init_timed(&m->cache, cfg)))
		return -1;
	if (m->tlb.coal_shift) {
		m->slow[MMU_SLOW_FETCH] = slow_fetch_coal;
		m->slow[MMU_SLOW_LOAD] = slow_load_coal;
		m->slow[MMU_SLOW_STORE] = slow_store_coal;
		m->slow[MMU_SLOW_MODIFY] = slow_modify_coal;
	} else {
		m->slow[MMU_SLOW_FETCH] = slow_fetch;
		m->slow[MMU_SLOW_LOAD] = slow_load;
		m->slow[MMU_SLOW_STORE] = slow_store;
		m->slow[MMU_SLOW_MODIFY] = slow_modify;
	}
	for (int i = 0; i < PWC_NR; i++)
		if (tlb_array_init(&m->pwc[i], cfg->pwc[i].entries, cfg->pwc[i].ways, REPL_LRU,
				   cfg->seed + 100 + i))
			return -1;
	return 0;
}

void mmu_destroy(struct mmu *m)
{
	mmu_nested_destroy(m);
	for (int i = 0; i < PWC_NR; i++)
		tlb_array_free(&m->pwc[i]);
	tlb_free(&m->tlb);
	cache_free(&m->cache);
}

/* --- invariants --------------------------------------------------------- */

struct tlb_inv_ctx {
	const struct mmu *m;
	int ps; /* the array's page size, or -1 for the STLB (size in the key) */
	int side; /* the L1 array's side */
	unsigned coal_shift; /* the array's (tlb.c "Coalescing") */
	uint64_t tag; /* the PCID bits of the entries checked (0: the current PCID's) */
	const struct pagetable *pt; /* their table; NULL: the MMU's (both stages) */
};

static void inv_tlb_entry(void *ctx, uint64_t key, uint64_t payload)
{
	const struct tlb_inv_ctx *c = ctx;
	enum page_size ps, got;
	pfn_t pfn;

	if ((key & TLB_PCID_MASK) != c->tag)
		return; /* another PCID's: its own table, which may have moved on */
	key &= ~TLB_PCID_MASK;
	if (key & TLB_COAL) { /* a coalesced run: each page maps the next frame */
		uint64_t n = 1ULL << c->coal_shift, vpn;

		BUG_ON(!c->coal_shift);
		key &= ~TLB_COAL;
		vpn = (c->ps < 0 ? key >> 2 : key) << c->coal_shift;
		BUG_ON(c->ps < 0 && (key & 3) != PS_4K);
		for (uint64_t i = 0; i < n; i++) { /* (permissions unchecked, as for a page's own entry) */
			BUG_ON(!pt_lookup(c->pt ? c->pt : c->m->pt, (vpn + i) << PAGE_SHIFT, &got, &pfn, NULL));
			BUG_ON(got != PS_4K || pfn != (payload & ~TLB_RO) + i);
		}
		return;
	}
	if (c->ps < 0) { /* STLB key: size in the low bits */
		ps = (enum page_size)(key & 3);
		key >>= 2;
	} else {
		ps = (enum page_size)c->ps;
	}
	if (c->pt)
		BUG_ON(!pt_lookup(c->pt, key << page_shift_of(ps), &got, &pfn, NULL));
	else
		BUG_ON(!mmu_lookup(c->m, key << page_shift_of(ps), &got, &pfn));
	if (got != ps) {
		/* a fracture of a 1G page, in a level without 1G entries (tlb.h) */
		BUG_ON(got != PS_1G || ps != (c->ps < 0 ? c->m->tlb.stlb_frac_1g
						       : c->m->tlb.l1_frac_1g[c->side]));
		pfn = tlb_frac_pfn(key << page_shift_of(ps), pfn, ps);
	}
	BUG_ON(pfn != (payload & ~TLB_RO));
}

struct pwc_inv_ctx {
	const struct pagetable *pt;
	unsigned shift, level;
	uint64_t tag;
};

static void inv_pwc_entry(void *ctx, uint64_t key, uint64_t payload)
{
	const struct pwc_inv_ctx *c = ctx;

	if ((key & TLB_PCID_MASK) != c->tag)
		return;
	key &= ~TLB_PCID_MASK;
	BUG_ON((uint64_t)(uintptr_t)pt_table_at(c->pt, key << c->shift, c->level) != payload);
}

void mmu_check_invariants(const struct mmu *m)
{
	static const unsigned level[PWC_NR] = { 4, 3, 2, 1 }; /* the table each PWC points at */
	struct tlb_inv_ctx c = { m, 0, 0, 0, 0, NULL };

	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			tlb_array_check_invariants(&m->tlb.l1[side][ps]);
			c.ps = ps;
			c.side = side;
			c.coal_shift = m->tlb.l1[side][ps].coal_shift;
			tlb_array_for_each(&m->tlb.l1[side][ps], inv_tlb_entry, &c);
		}
	c.ps = -1;
	for (unsigned i = 0; i < m->tlb.nr_stlb; i++) {
		tlb_array_check_invariants(&m->tlb.stlb[i]);
		c.coal_shift = m->tlb.stlb[i].coal_shift;
		tlb_array_for_each(&m->tlb.stlb[i], inv_tlb_entry, &c);
	}
	for (int i = 0; i < PWC_NR; i++) {
		struct pwc_inv_ctx pc = { m->pt, pwc_shift[i], level[i], 0 };

		tlb_array_check_invariants(&m->pwc[i]);
		tlb_array_for_each(&m->pwc[i], inv_pwc_entry, &pc);
	}
	mmu_nested_check_invariants(m);
	BUG_ON(m->pcid > TLB_PCID_MAX || (!m->pcide && m->pcid));
	/* the memo must agree with the L1 */
	for (int side = 0; side < 2; side++)
		if (m->last_vpn[side] != VPN_NONE) {
			enum page_size ps = m->last_ps[side];

			const struct tlb_array *a = &m->tlb.l1[side][ps];
			uint64_t key = (m->last_vpn[side] << PAGE_SHIFT) >> page_shift_of(ps);

			BUG_ON(tlb_array_probe(a, key) < 0 &&
			       !(a->coal_shift && tlb_array_probe(a, tlb_coal_key(a, key)) >= 0));
		}
}

static uint64_t pcid_tag(const struct mmu *m, unsigned pcid)
{
	return (uint64_t)((pcid ^ m->pcid) & TLB_PCID_MAX) << TLB_PCID_SHIFT;
}

void mmu_check_pcid(const struct mmu *m, unsigned pcid, const struct pagetable *pt)
{
	static const unsigned level[PWC_NR] = { 4, 3, 2, 1 };
	struct tlb_inv_ctx c = { m, 0, 0, 0, pcid_tag(m, pcid), pt };

	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			c.ps = ps;
			c.side = side;
			c.coal_shift = m->tlb.l1[side][ps].coal_shift;
			tlb_array_for_each(&m->tlb.l1[side][ps], inv_tlb_entry, &c);
		}
	c.ps = -1;
	for (unsigned i = 0; i < m->tlb.nr_stlb; i++) {
		c.coal_shift = m->tlb.stlb[i].coal_shift;
		tlb_array_for_each(&m->tlb.stlb[i], inv_tlb_entry, &c);
	}
	for (int i = 0; i < PWC_NR; i++) {
		struct pwc_inv_ctx pc = { pt, pwc_shift[i], level[i], c.tag };

		tlb_array_for_each(&m->pwc[i], inv_pwc_entry, &pc);
	}
}

struct count_ctx {
	uint64_t tag;
	unsigned n;
};

static void count_entry(void *ctx, uint64_t key, uint64_t payload)
{
	struct count_ctx *c = ctx;

	(void)payload;
	c->n += (key & TLB_PCID_MASK) == c->tag;
}

unsigned mmu_pcid_entries(const struct mmu *m, unsigned pcid)
{
	struct count_ctx c = { pcid_tag(m, pcid), 0 };

	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++)
			tlb_array_for_each(&m->tlb.l1[side][ps], count_entry, &c);
	for (unsigned i = 0; i < m->tlb.nr_stlb; i++)
		tlb_array_for_each(&m->tlb.stlb[i], count_entry, &c);
	return c.n;
}
