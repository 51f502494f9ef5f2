/*
 * mmu_walk.h - what mmu.c and mmu_nested.c share of the page walk: the
 * paging-structure caches' keys and probe, and the nested (two-stage) walk.
 * Internal to the MMU: nothing outside those two files includes it.
 */
#ifndef MMUSIM_MMU_WALK_H
#define MMUSIM_MMU_WALK_H

#include "mmu.h"

/* The VA bits above each PWC's level: its key is va >> pwc_shift[level]. */
static const unsigned pwc_shift[PWC_NR] = {
	[PWC_PML5] = 48, [PWC_PML4] = 39, [PWC_PDPT] = 30, [PWC_PDE] = 21,
};

/* The PWC that caches an entry read at paging level @level (5..2). */
static inline enum pwc_level pwc_for_level(unsigned level)
{
	return level == 5 ? PWC_PML5 : level == 4 ? PWC_PML4 : level == 3 ? PWC_PDPT : PWC_PDE;
}

/*
 * Probe the paging-structure cache @a for @va (one probe costs @latency cycles
 * into *@cyc, its hit or miss counted in @hm): true on a hit, with the table it
 * caches in *@table. A PWC of no entries is not probed (and counts nothing).
 */
static inline __attribute__((always_inline)) bool pwc_probe_array(struct tlb_array *a, enum pwc_level pl,
								  vaddr_t va, unsigned latency, cycles_t *cyc,
								  struct mmu_hit_miss *hm,
								  const struct pt_node **table)
{
	long e;

	if (!a->ways)
		return false;
	*cyc += latency;
	e = tlb_array_lookup(a, va >> pwc_shift[pl]);
	if (e < 0) {
		hm->misses++;
		return false;
	}
	hm->hits++;
	*table = (const struct pt_node *)(uintptr_t)a->payload[e];
	return true;
}

/* The guest's (or bare metal's) PWC @pl. */
static inline __attribute__((always_inline)) bool pwc_probe(struct mmu *m, enum pwc_level pl,
							    vaddr_t va, const struct pt_node **table)
{
	return pwc_probe_array(&m->pwc[pl], pl, va, m->pwc_latency, &m->st.walk_cycles,
			       &m->st.pwc[pl], table);
}

/*
 * The walk of @va with two stages (virt.mode nested; mmu_nested.c): the guest's
 * table, each read and the final address translated by the host stage. Same
 * contract as mmu.c's walk(): false if a fault hook failed.
 */
bool mmu_nested_walk(struct mmu *m, vaddr_t va, bool write, enum page_size *ps, pfn_t *pfn);

#endif
