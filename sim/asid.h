/*
 * asid.h - the kernel's half of an address-space switch on x86-64: which PCID an
 * mm runs under on a CPU, and when its cached translations must go (Linux 6.18
 * arch/x86/mm/tlb.c: choose_new_asid(), switch_mm_irqs_off(),
 * flush_tlb_mm_range(); arch/x86/include/asm/tlbflush.h: struct tlb_state).
 *
 * An mm is two numbers here (struct asid_mm: mm->context.ctx_id and tlb_gen),
 * so the machine that owns the mms calls this with its own: no struct sim.
 */
#ifndef MMUSIM_ASID_H
#define MMUSIM_ASID_H

#include <stdbool.h>
#include <stdint.h>

#include "mmu.h"

/* Dynamic ASIDs per CPU (arch/x86/include/asm/tlbflush.h TLB_NR_DYN_ASIDS). */
#define TLB_NR_DYN_ASIDS 6

/* init_mm's ctx_id, and the first value of last_mm_ctx_id (arch/x86/mm/tlb.c). */
#define ASID_INIT_MM_CTX_ID 1

/* The x86 part of an mm (mm->context): struct mm_context_t's ctx_id and tlb_gen. */
struct asid_mm {
	uint64_t ctx_id;  /* unique for the kernel's life, never reused */
	uint64_t tlb_gen; /* its page tables' generation: each flush request bumps it */
};

/* One dynamic ASID of a CPU: the mm it last held and the generation its entries reflect. */
struct asid_ctx {
	uint64_t ctx_id, tlb_gen;
};

/* What the CPU's switches and flush requests did (trace_tlb_flush()'s reasons, counted). */
struct asid_stats {
	uint64_t switches;       /* switch_mm_irqs_off() to another mm: one CR3 load each */
	uint64_t switch_flushes; /* of those, need_flush: TLB_FLUSH_ON_TASK_SWITCH, TLB_FLUSH_ALL */
	uint64_t asid_allocs;    /* of those, the mm held no ASID here and took next_asid's */
	uint64_t asid_steals;    /* of the allocations, ones that took a slot another mm held */
	uint64_t stale_flushes;  /* switch flushes of an mm that kept its ASID but whose tlb_gen moved */
	uint64_t flush_requests; /* asid_flush_tlb_mm_range() */
	uint64_t deferred;       /* of those, of an mm not loaded: left to its next switch */
};

/*
 * Per CPU (struct tlb_state, cpu_tlbstate): the loaded mm and its ASID, the
 * round-robin cursor for a new ASID, and each dynamic ASID's owner.
 */
struct asid_cpu {
	const struct asid_mm *loaded_mm; /* NULL: init_mm (the kernel's own) */
	unsigned loaded_mm_asid;
	unsigned next_asid;
	struct asid_ctx ctxs[TLB_NR_DYN_ASIDS];
	bool pcid; /* X86_FEATURE_PCID (cpu.pcid): without it every switch flushes */
	struct asid_stats st;
};

/*
 * The CPU as initialize_tlbstate_and_flush() leaves it: init_mm loaded in ASID
 * 0 (its ctx_id ASID_INIT_MM_CTX_ID), next_asid 1, the other slots free
 * (ctx_id 0, which no mm has). @pcid: the CPU has PCIDs. The MMU is not
 * touched: it starts in PCID 0 with empty TLBs (mmu_init()).
 */
void asid_cpu_init(struct asid_cpu *c, bool pcid);

/*
 * init_new_context(): a new mm's ctx_id is ++*@last_mm_ctx_id (which starts at
 * ASID_INIT_MM_CTX_ID), its tlb_gen 0.
 */
void asid_mm_init(struct asid_mm *mm, uint64_t *last_mm_ctx_id);

/* The PCID of dynamic ASID @asid (kern_pcid(): asid + 1; PCID 0 is left to boot). */
static inline unsigned asid_kern_pcid(unsigned asid)
{
	return asid + 1;
}

/*
 * switch_mm_irqs_off() to @next, whose page table is @pgd, on the CPU @c whose
 * MMU is @m: the same mm loaded already changes nothing (a thread of it, no
 * CR3 load); else choose_new_asid() picks @next's slot (or the round robin's
 * next, taking it from whichever mm held it) and mmu_load_cr3() loads @pgd
 * with that ASID's PCID, flushing it when the slot was taken or @next's
 * tlb_gen moved on since the slot last caught up. Without PCIDs the ASID is
 * 0 and the load flushes everything. Returns true if the load flushed.
 */
bool asid_switch_mm(struct asid_cpu *c, struct mmu *m, const struct asid_mm *next,
		    struct pagetable *pgd);

/* What the caller does after asid_flush_tlb_mm_range(). */
enum asid_flush {
	ASID_FLUSH_NONE,    /* @mm is not loaded here: nothing now, its next switch flushes */
	ASID_FLUSH_PARTIAL, /* loaded and one generation behind: the range (INVLPG each page,
			     * or a full flush above tlb_single_page_flush_ceiling) */
	ASID_FLUSH_FULL,    /* loaded and further behind: the current PCID's whole TLB */
};

/*
 * flush_tlb_mm_range() on a one-CPU machine: @mm's page tables changed
 * (inc_mm_tlb_gen()). When @mm is the loaded mm, flush_tlb_func() flushes now
 * and this CPU's ASID catches up with it (the caller does the flush the
 * result names through the MMU); when it is not, nothing is flushed and the
 * generation left behind makes its next switch flush. No global ASID: see
 * asid.c.
 */
enum asid_flush asid_flush_tlb_mm_range(struct asid_cpu *c, struct asid_mm *mm);

/* Every slot holds a distinct mm or none; the loaded mm holds its slot. Aborts (BUG_ON). */
void asid_check_invariants(const struct asid_cpu *c, const struct mmu *m);

#endif
