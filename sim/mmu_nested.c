/*
 * mmu_nested.c - the two-dimensional page walk of hardware-assisted
 * virtualization (virt.mode nested: AMD NPT, Intel EPT).
 *
 * The guest's table maps guest-virtual to guest-physical addresses (gPA); the
 * host stage maps gPA to host-physical (hPA). Every guest table is at a gPA, so
 * each guest entry read needs the host stage first: a walk of n guest levels
 * over m host levels reads n * (m + 1) + m entries, 24 for 4 + 4 (AMD,
 * "AMD-V Nested Paging" white paper, 2008, and Bhargava et al., "Accelerating
 * two-dimensional page walks for virtualized systems", ASPLOS 2008: "up to 24
 * memory references"); a guest 2 MiB page removes one guest level (19), a host
 * 2 MiB page one host level from each of the five host walks (19), both 15.
 *
 * What caches it (each structure optional, virt.* geometry):
 *  - the guest's paging-structure caches (walk.pwc.*), keyed by guest-virtual
 *    address bits like bare metal's, holding the next guest table's host-
 *    physical address: Intel's "combined paging-structure-cache entries"
 *    (SDM Vol. 3C §29.4.1, "Information That May Be Cached When EPT Is in
 *    Use"), so a hit skips the guest levels above it and their host walks;
 *  - the nested TLB (virt.ntlb), gPA -> hPA of a whole host page: AMD's
 *    "nested TLB" (Bhargava et al.), Intel's "guest-physical mappings";
 *  - the host stage's paging-structure caches (virt.pwc.*), keyed by gPA bits:
 *    Intel's "EPT paging-structure-cache entries" (§29.4.1).
 * A walk probes the guest PWCs longest match first; then for each guest entry
 * read (none for the first after a PWC hit) the nested TLB, else the host PWCs
 * and a host walk, which fills them; then the entry itself; at the guest leaf,
 * the data's gPA the same way. Every entry read is a load through cache.c at
 * its host-physical address.
 *
 * The TLB entry a walk fills has the smaller of the two stages' pages (a guest
 * 2 MiB page over host 4 KiB pages fills 4 KiB entries: AMD APM Vol. 2
 * §15.25.9 "Combining Nested and Guest Page Sizes"; Intel SDM Vol. 3C
 * §29.4.1: "the page size is the smaller of the ... guest-physical and ...
 * EPT page sizes").
 *
 * Simplifications: the host stage is the host process's own page table of the
 * guest's memory (gPA at host VA hbase + gPA), which is the table KVM's NPT/EPT
 * mirrors, with the same page sizes (KVM's host_pfn_mapping_level()); its table
 * frames are the host's. Host entries are all writable (the host faults guest
 * memory in for writing: the guest zeroes every page it allocates). A walk
 * that faulted resumes where it stopped, as on bare metal (mmu.c), and the
 * resumed read needs no new host walk: the walker holds that table's hPA.
 * No host write-protect faults, no A/D-assist exits, one walker.
 */
#include <stdlib.h>

#include "mmu.h"
#include "mmu_walk.h"

static inline uint64_t pages_of(enum page_size ps)
{
	return 1ULL << (page_shift_of(ps) - PAGE_SHIFT);
}

/* One entry read at @pa into walk_cycles, and into *@stage_cyc (the stage's share). */
static void read_entry(struct mmu *m, paddr_t pa, cycles_t *stage_cyc)
{
	cycles_t before = m->st.walk_cycles;

	m->st.served[cache_access(&m->cache, pa, &m->st.walk_cycles)]++;
	m->st.pte_reads++;
	*stage_cyc += m->st.walk_cycles - before;
}

/* The host-stage walk of @hva (from @start with @table), timed; PWCs filled. */
static void host_walk(struct mmu *m, vaddr_t hva, bool write, unsigned start,
		      const struct pt_node *table, struct pt_path *q)
{
	struct mmu_nested *n = m->nested;

	pt_walk(n->hpt, hva, write, start, table, q);
	for (unsigned k = 0; k < q->nr; k++) {
		read_entry(m, q->pa[k], &n->st.host_cycles);
		n->st.host_reads++;
		pwc_fill_entry(n->pwc, n->hpt, hva, q->level[k], q->entry[k]);
	}
}

/*
 * Translate the guest-physical 4 KiB frame @gfn: its host frame in *@hfn, the
 * host page's size in *@hps. The nested TLB, else the host PWCs and a host
 * walk, through the host's fault hook when the host has no page there yet.
 * false if the host could not serve the fault.
 */
static bool ntranslate(struct mmu *m, pfn_t gfn, bool write, pfn_t *hfn, enum page_size *hps)
{
	struct mmu_nested *n = m->nested;
	vaddr_t hva = n->hbase + ((vaddr_t)gfn << PAGE_SHIFT);
	const struct pt_node *table = NULL;
	unsigned levels = n->hpt->levels, start = levels;
	struct pt_path q;
	cycles_t c0;

	if (n->ntlb.ways) {
		n->st.host_cycles += n->latency;
		m->st.walk_cycles += n->latency;
		for (int s = 0; s < PS_NR; s++) {
			long e;

			if (!(n->ntlb_sizes & 1u << s))
				continue;
			e = tlb_array_lookup(&n->ntlb, tlb_stlb_key(hva, (enum page_size)s));
			if (e >= 0) {
				n->st.ntlb.hits++;
				*hps = (enum page_size)s;
				*hfn = n->ntlb.payload[e] + ((hva >> PAGE_SHIFT) & (pages_of(*hps) - 1));
				return true;
			}
		}
		n->st.ntlb.misses++;
	}
	c0 = n->st.host_cycles;
	start = pwc_search(n->pwc, n->st.pwc, levels, hva, n->latency, &n->st.host_cycles, &table);
	m->st.walk_cycles += n->st.host_cycles - c0; /* the probes' latency */
	for (int tries = 0;; tries++) {
		host_walk(m, hva, write, start, table, &q);
		if (q.present)
			break;
		BUG_ON(tries > 1);
		n->st.host_faults++;
		if (n->host_fault(n->host, hva, true, false))
			return false;
		start = walk_resume(n->hpt, hva, q.level[q.nr - 1], &table);
	}
	*hps = q.ps;
	*hfn = q.pfn + ((hva >> PAGE_SHIFT) & (pages_of(q.ps) - 1));
	if (n->ntlb.ways) {
		tlb_array_fill(&n->ntlb, tlb_stlb_key(hva, q.ps), q.pfn);
		n->ntlb_sizes |= 1u << q.ps;
	}
	return true;
}

/* The host frame of guest frame @gfn as the host's table has it now (no side effects). */
static bool host_frame(const struct mmu_nested *n, pfn_t gfn, pfn_t *hfn, enum page_size *hps)
{
	vaddr_t hva = n->hbase + ((vaddr_t)gfn << PAGE_SHIFT);
	pfn_t first;

	if (!pt_lookup(n->hpt, hva, hps, &first, NULL))
		return false;
	*hfn = first + ((hva >> PAGE_SHIFT) & (pages_of(*hps) - 1));
	return true;
}

/*
 * Time the guest entries of @p: each one's table through the host stage
 * (except the first when @first_known: a PWC hit or a resumed walk holds its
 * hPA), then the entry; PWCs filled for the non-leaf ones. false if the host
 * could not serve a fault.
 */
static bool guest_account(struct mmu *m, vaddr_t va, const struct pt_path *p, bool first_known)
{
	struct mmu_nested *n = m->nested;

	for (unsigned k = 0; k < p->nr; k++) {
		pfn_t gfn = (pfn_t)(p->pa[k] >> PAGE_SHIFT), hfn;
		enum page_size hps;

		if (k || !first_known || !host_frame(n, gfn, &hfn, &hps))
			if (!ntranslate(m, gfn, false, &hfn, &hps))
				return false;
		read_entry(m, (paddr_t)hfn << PAGE_SHIFT | (p->pa[k] & (PAGE_SIZE - 1)),
			   &n->st.guest_cycles);
		n->st.guest_reads++;
		pwc_fill_entry(m->pwc, m->pt, va, p->level[k], p->entry[k]);
	}
	return true;
}

bool mmu_nested_walk(struct mmu *m, vaddr_t va, bool write, enum page_size *ps, pfn_t *pfn)
{
	const struct pt_node *table = NULL;
	unsigned levels = m->pt->levels, start = levels;
	bool known;
	struct pt_path p;
	enum page_size hps;
	pfn_t gfn, hfn;

	if (unlikely(va >= m->va_limit)) {
		m->fault(m->os, va, write, false);
		return false;
	}
	start = pwc_search(m->pwc, m->st.pwc, levels, va, m->pwc_latency, &m->st.walk_cycles, &table);
	known = table != NULL;
	for (int tries = 0;; tries++) {
		pt_walk(m->pt, va, write, start, table, &p);
		if (!guest_account(m, va, &p, known))
			return false;
		/* not present, or a store to a read-only leaf: the guest's #PF, then resume */
		if (p.present && !(write && !(p.entry[p.nr - 1] & PTE_RW)))
			break;
		BUG_ON(tries > 2);
		if (m->fault(m->os, va, write, p.present))
			return false;
		start = walk_resume(m->pt, va, p.level[p.nr - 1], &table);
		known = true;
	}
	/* the data's guest frame through the host stage */
	gfn = p.pfn + ((va >> PAGE_SHIFT) & (pages_of(p.ps) - 1));
	if (!ntranslate(m, gfn, write, &hfn, &hps))
		return false;
	*ps = p.ps < hps ? p.ps : hps;
	*pfn = (hfn - ((va >> PAGE_SHIFT) & (pages_of(*ps) - 1))) |
	       (p.entry[p.nr - 1] & PTE_RW ? 0 : TLB_RO);
	return true;
}

bool mmu_lookup(const struct mmu *m, vaddr_t va, enum page_size *ps, pfn_t *pfn)
{
	enum page_size gps, hps;
	pfn_t first, hfn;

	if (!pt_lookup(m->pt, va, &gps, &first, NULL))
		return false;
	if (!m->nested) {
		*ps = gps;
		*pfn = first;
		return true;
	}
	if (!host_frame(m->nested, first + ((va >> PAGE_SHIFT) & (pages_of(gps) - 1)), &hfn, &hps))
		return false;
	*ps = gps < hps ? gps : hps;
	*pfn = hfn - ((va >> PAGE_SHIFT) & (pages_of(*ps) - 1));
	return true;
}

int mmu_nested_init(struct mmu *m, const struct sim_config *cfg, struct pagetable *hpt, vaddr_t hbase,
		    mmu_fault_fn host_fault, void *host)
{
	struct mmu_nested *n = calloc(1, sizeof(*n));

	if (!n)
		return -1;
	m->nested = n;
	n->hpt = hpt;
	n->hbase = hbase;
	n->host_fault = host_fault;
	n->host = host;
	n->latency = cfg->pwc_latency;
	if (tlb_array_init(&n->ntlb, cfg->virt.ntlb.entries, cfg->virt.ntlb.ways, REPL_LRU, cfg->seed + 200))
		return -1;
	for (int i = 0; i < PWC_NR; i++)
		if (tlb_array_init(&n->pwc[i], cfg->virt.pwc[i].entries, cfg->virt.pwc[i].ways, REPL_LRU,
				   cfg->seed + 210 + i))
			return -1;
	return 0;
}

void mmu_nested_destroy(struct mmu *m)
{
	struct mmu_nested *n = m->nested;

	if (!n)
		return;
	tlb_array_free(&n->ntlb);
	for (int i = 0; i < PWC_NR; i++)
		tlb_array_free(&n->pwc[i]);
	free(n);
	m->nested = NULL;
}

void mmu_host_invalidate(struct mmu *m)
{
	struct mmu_nested *n = m->nested;

	if (n) {
		tlb_array_flush(&n->ntlb);
		for (int i = 0; i < PWC_NR; i++)
			tlb_array_flush(&n->pwc[i]);
	}
	/* every guest PCID's translations (KVM flushes the whole VPID) */
	mmu_invpcid(m, INVPCID_ALL_GLOBAL, 0, 0);
}

/* The nested TLB and the host PWCs agree with the host's table. Aborts (BUG_ON). */
struct ninv_ctx {
	const struct mmu_nested *n;
	unsigned shift, level;
};

static void inv_ntlb_entry(void *ctx, uint64_t key, uint64_t payload)
{
	const struct ninv_ctx *c = ctx;
	enum page_size ps = (enum page_size)(key & 3), got;
	pfn_t pfn;

	BUG_ON(!pt_lookup(c->n->hpt, (key >> 2) << page_shift_of(ps), &got, &pfn, NULL));
	BUG_ON(got != ps || pfn != payload);
}

static void inv_hpwc_entry(void *ctx, uint64_t key, uint64_t payload)
{
	const struct ninv_ctx *c = ctx;

	BUG_ON((uint64_t)(uintptr_t)pt_table_at(c->n->hpt, key << c->shift, c->level) != payload);
}

void mmu_nested_check_invariants(const struct mmu *m)
{
	static const unsigned level[PWC_NR] = { 4, 3, 2, 1 };
	const struct mmu_nested *n = m->nested;
	struct ninv_ctx c = { n, 0, 0 };

	if (!n)
		return;
	tlb_array_check_invariants(&n->ntlb);
	tlb_array_for_each(&n->ntlb, inv_ntlb_entry, &c);
	for (int i = 0; i < PWC_NR; i++) {
		c.shift = pwc_shift[i];
		c.level = level[i];
		tlb_array_check_invariants(&n->pwc[i]);
		tlb_array_for_each(&n->pwc[i], inv_hpwc_entry, &c);
	}
}
