/*
 * mmu.h - translate(): L1 TLBs -> STLB -> paging-structure caches -> walk -> fault,
 * by DESIGN.md's counting rules.
 */
#ifndef MMUSIM_MMU_H
#define MMUSIM_MMU_H

#include "sim.h"

void mmu_access_slow(struct sim *s, vaddr_t va, enum tlb_side side, bool write);

/*
 * Point the memo of @side at @vpn (4K page number) of a @ps page whose 4K frame is
 * @pfn. Its pending hits belong to the page size of the translations it answered:
 * they move into that size's count only when the size changes (and at the end,
 * mmu_fold_memo()), so a run of 4K pages pays no addition per memo change.
 */
static inline void mmu_memo_set(struct sim *s, enum tlb_side side, uint64_t vpn, enum page_size ps,
				pfn_t pfn)
{
	if (unlikely(ps != s->last_ps[side])) {
		s->st.l1[side].hits[s->last_ps[side]] += s->memo_hits[side];
		s->memo_hits[side] = 0;
		s->last_ps[side] = ps;
	}
	s->last_vpn[side] = vpn;
	s->last_pfn[side] = pfn;
}
void mmu_data_access(struct sim *s, vaddr_t va, pfn_t pfn);

/*
 * One lookup of the page holding @va on @side, the per-reference hot path.
 *
 * 1. The memo of the side's last L1 hit answers repeats without touching the
 *    arrays: a repeated hit on the entry that is already its set's MRU changes no
 *    replacement state under lru, fifo, plru or random, so only a counter moves
 *    (memo_hits, folded into the page size's hit count when the memo's size
 *    changes, on an invalidation and at the end).
 * 2. Else the 4K array's MRU way of the page's set (STYLE rule 6): on the
 *    validation trace this answers 70% of what the memo misses (callgrind). It
 *    is the set's most recent use already, so a hit changes no replacement
 *    state either, and becomes the memo.
 * 3. Everything else is out of line (mmu_access_slow()).
 *
 * mmu_access_inline() does steps 1 and 2: true if it answered, false if the caller
 * must call mmu_access_slow(). @data_refs false where the caller knows the cache
 * sees no data references (the summarized replay): one test less per reference.
 */
static inline __attribute__((always_inline)) bool mmu_access_inline(struct sim *s, vaddr_t va,
									  enum tlb_side side, bool write,
									  bool data_refs)
{
	uint64_t vpn = va >> PAGE_SHIFT;
	struct tlb_array *a;

	/* @write is a constant at every call site: loads pay nothing for the RO test */
	if (likely(vpn == s->last_vpn[side]) && !(write && (s->last_pfn[side] & TLB_RO))) {
		s->memo_hits[side]++;
		if (data_refs && unlikely(s->data_refs) && side == SIDE_D)
			mmu_data_access(s, va, s->last_pfn[side] & ~TLB_RO);
		return true;
	}
	a = &s->tlb.l1[side][PS_4K];
	if (likely(a->ways)) {
		const struct tlb_mru *m = &a->mru_e[tlb_set_of(a, vpn)];

		if (likely(m->tag == vpn) && !(write && (m->payload & TLB_RO))) {
			/*
			 * The set's MRU hit again changes no replacement state: under lru it
			 * already has the set's newest stamp (tlb_array_check_invariants()),
			 * and victims are chosen by stamp order within a set.
			 */
			mmu_memo_set(s, side, vpn, PS_4K, m->payload);
			s->memo_hits[side]++; /* a 4K hit: the memo's size is now 4K */
			if (data_refs && unlikely(s->data_refs) && side == SIDE_D)
				mmu_data_access(s, va, m->payload & ~TLB_RO);
			return true;
		}
	}
	return false;
}

static inline __attribute__((always_inline)) void mmu_access(struct sim *s, vaddr_t va,
								    enum tlb_side side, bool write)
{
	if (!mmu_access_inline(s, va, side, write, true))
		mmu_access_slow(s, va, side, write);
}

/* Move the memo's pending hits into the counters (reports and tests read them). */
static inline void mmu_fold_memo(struct sim *s)
{
	for (int side = 0; side < 2; side++) {
		s->st.l1[side].hits[s->last_ps[side]] += s->memo_hits[side];
		s->memo_hits[side] = 0;
	}
}

/* Forget the memo (any invalidation calls this); its hits move into the counters. */
static inline void mmu_forget(struct sim *s)
{
	mmu_fold_memo(s);
	for (int side = 0; side < 2; side++)
		mmu_memo_set(s, (enum tlb_side)side, VPN_NONE, s->last_ps[side], 0);
}

/* INVLPG for [start, end): TLB entries of any size overlapping it, and the PWCs. */
void mmu_invalidate_range(struct sim *s, vaddr_t start, vaddr_t end);

/* Flush everything (CR3 reload). */
void mmu_flush_all(struct sim *s);

#endif
