/*
 * tlbflush.c - TLB shootdown as x86 Linux 6.18 does it (arch/x86/mm/tlb.c) on a
 * machine of one CPU: a flush of the address space the CPU has loaded invalidates
 * there and now; one of another address space only moves its tlb_gen on, so that
 * switching to it later flushes (switch_mm_irqs_off(): the CPU's copy of the mm's
 * tlb_gen is behind). With one CPU no flush is ever sent to another (no IPI, no
 * INVLPGB broadcast).
 */
#include "kernel.h"
#include "tlbflush.h"

/* arch/x86/mm/tlb.c: tlb_single_page_flush_ceiling */
#define TLB_SINGLE_PAGE_FLUSH_CEILING 33

void flush_tlb_mm_range(struct kernel *k, vaddr_t start, vaddr_t end, unsigned stride_shift)
{
	enum asid_flush f;

	if (end <= start)
		return;
	f = asid_flush_tlb_mm_range(&k->tlbstate, &k->mm->asid); /* inc_mm_tlb_gen() */
	if (f == ASID_FLUSH_NONE)
		return; /* not loaded here: the switch to it flushes */
	k->st->cyc_fault += k->cfg->cost.flush;
	if (f == ASID_FLUSH_FULL || (end - start) >> stride_shift > TLB_SINGLE_PAGE_FLUSH_CEILING) {
		mmu_flush_all(k->cpu);
		k->st->tlb_invalidations++;
	} else {
		/* flush_tlb_func(): an INVLPG every stride from start while below end */
		mmu_invalidate_range(k->cpu, start, end);
		k->st->tlb_invalidations += (end - start + (1ULL << stride_shift) - 1) >> stride_shift;
	}
}

void flush_tlb_range(struct kernel *k, vaddr_t start, vaddr_t end)
{
	flush_tlb_mm_range(k, start, end, PAGE_SHIFT);
}

void flush_tlb_page(struct kernel *k, vaddr_t va)
{
	flush_tlb_mm_range(k, va & ~(PAGE_SIZE - 1), (va & ~(PAGE_SIZE - 1)) + PAGE_SIZE, PAGE_SHIFT);
}

void arch_tlbbatch_flush(struct kernel *k)
{
	/* arch_tlbbatch_add_pending() of the mm whose pages it unmapped */
	if (asid_flush_tlb_mm_range(&k->tlbstate, &k->mm->asid) == ASID_FLUSH_NONE)
		return;
	mmu_flush_all(k->cpu);
	k->st->tlb_invalidations++;
	k->st->cyc_fault += k->cfg->cost.flush;
}

void flush_tlb_mm(struct kernel *k)
{
	flush_tlb_mm_range(k, 0, k->va_limit, PAGE_SHIFT);
}
