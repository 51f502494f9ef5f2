/*
 * mmu.h - translate(): L1 TLBs -> STLB -> paging-structure caches -> walk -> fault,
 * by DESIGN.md's counting rules.
 */
#ifndef MMUSIM_MMU_H
#define MMUSIM_MMU_H

#include "sim.h"

void mmu_access_slow(struct sim *s, vaddr_t va, enum tlb_side side, bool write);
void mmu_data_access(struct sim *s, vaddr_t va, pfn_t pfn);

/*
 * One lookup of the page holding @va on @side. The memo of the side's last L1 hit
 * answers repeats without touching the arrays: a repeated hit on the entry that is
 * already its set's MRU changes no replacement state under lru, fifo, plru or
 * random, so only the counter moves (measured: most lackey references repeat the
 * previous page of their side). Everything else is out of line.
 */
static inline void mmu_access(struct sim *s, vaddr_t va, enum tlb_side side, bool write)
{
	if (likely((va >> PAGE_SHIFT) == s->last_vpn[side])) {
		s->st.l1[side].hits[s->last_ps[side]]++;
		if (unlikely(s->data_refs) && side == SIDE_D)
			mmu_data_access(s, va, s->last_pfn[side]);
		return;
	}
	mmu_access_slow(s, va, side, write);
}

/* Forget the memo (any invalidation calls this). */
static inline void mmu_forget(struct sim *s)
{
	s->last_vpn[0] = s->last_vpn[1] = VPN_NONE;
}

/* INVLPG for [start, end): TLB entries of any size overlapping it, and the PWCs. */
void mmu_invalidate_range(struct sim *s, vaddr_t start, vaddr_t end);

/* Flush everything (CR3 reload). */
void mmu_flush_all(struct sim *s);

#endif
