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

/*
 * A walk of @va in @pt read @entry at paging level @level: the PWC of that level
 * (of the array set @pwc) caches the table it points to, unless the entry is a
 * leaf or not present (SDM Vol. 3A §4.10.3.1: only non-leaf entries).
 */
static inline void pwc_fill_entry(struct tlb_array *pwc, const struct pagetable *pt, vaddr_t va,
				  unsigned level, uint64_t entry)
{
	if (level >= 2 && (entry & PTE_P) && !(entry & PTE_PS)) {
		enum pwc_level pl = pwc_for_level(level);
		struct tlb_array *a = &pwc[pl];
		uint64_t key = va >> pwc_shift[pl];

		if (a->ways && tlb_array_probe(a, key) < 0)
			tlb_array_fill(a, key, (uint64_t)(uintptr_t)pt_table_at(pt, va, level - 1));
	}
}

/* The guest's (or bare metal's) PWC @pl. */
static inline __attribute__((always_inline)) bool pwc_probe(struct mmu *m, enum pwc_level pl,
							    vaddr_t va, const struct pt_node **table)
{
	return pwc_probe_array(&m->pwc[pl], pl, va, m->pwc_latency, &m->st.walk_cycles,
			       &m->st.pwc[pl], table);
}

/*
 * The longest match for @va among the PWCs @pwc of a table of @levels levels
 * (PDE, PDPT, PML4, then PML5 at 5 levels), each probe as pwc_probe_array():
 * the level a walk starts at, with the cached table in *@table (the root's
 * level and NULL when none hits). mmu.c's walk() unrolls the same search.
 */
static inline unsigned pwc_search(struct tlb_array *pwc, struct mmu_hit_miss *hm, unsigned levels,
				  vaddr_t va, unsigned latency, cycles_t *cyc,
				  const struct pt_node **table)
{
	static const enum pwc_level order[] = { PWC_PDE, PWC_PDPT, PWC_PML4, PWC_PML5 };

	for (unsigned i = 0; i < 4 && (order[i] != PWC_PML5 || levels == 5); i++)
		if (pwc_probe_array(&pwc[order[i]], order[i], va, latency, cyc, &hm[order[i]], table))
			return i + 1;
	*table = NULL;
	return levels;
}

/*
 * Where a walk of @va in @pt resumes after the fault that stopped it at level
 * @stop: the entry it could not use, re-read in that level's table, or from the
 * root when the fault removed that table. The level, the table in *@table.
 */
static inline unsigned walk_resume(const struct pagetable *pt, vaddr_t va, unsigned stop,
				   const struct pt_node **table)
{
	if (stop < pt->levels && (*table = pt_table_at(pt, va, stop)) != NULL)
		return stop;
	*table = NULL;
	return pt->levels;
}

/*
 * The walk of @va with two stages (virt.mode nested; mmu_nested.c): the guest's
 * table, each read and the final address translated by the host stage. Same
 * contract as mmu.c's walk(): false if a fault hook failed.
 */
bool mmu_nested_walk(struct mmu *m, vaddr_t va, bool write, enum page_size *ps, pfn_t *pfn);

#endif
