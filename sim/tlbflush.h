/*
 * tlbflush.h - TLB shootdown (arch/x86/mm/tlb.c): what a page-table change of an
 * address space ends with on the CPU that has it loaded.
 */
#ifndef MMUSIM_TLBFLUSH_H
#define MMUSIM_TLBFLUSH_H

#include "types.h"

struct kernel;

/*
 * The TLB shootdown a page-table change of k->mm ends with, as x86 decides it
 * (flush_tlb_mm_range()): the mm's tlb_gen moves on (inc_mm_tlb_gen()); if the
 * CPU has the mm loaded, a span [start, end) of more than
 * tlb_single_page_flush_ceiling (33) strides of 1 << @stride_shift is one full
 * flush, a smaller one an INVLPG per stride; each counts one
 * vmstat.tlb_invalidations, the call costs os.cost.flush. An mm the CPU does
 * not have loaded is flushed when it is switched to (no IPI on one CPU).
 * Nothing if end <= start.
 */
void flush_tlb_mm_range(struct kernel *k, vaddr_t start, vaddr_t end, unsigned stride_shift);

/*
 * flush_tlb_range() of a non-hugetlb VMA: a 4 KiB stride whatever was mapped,
 * so the PMD flushes of a split or a collapse (flush_pmd_tlb_range(), 512 pages)
 * are full flushes.
 */
void flush_tlb_range(struct kernel *k, vaddr_t start, vaddr_t end);

/* flush_tlb_page(): one INVLPG at @va (a COW break, a migrated page). */
void flush_tlb_page(struct kernel *k, vaddr_t va);

/*
 * try_to_unmap_flush() -> arch_tlbbatch_flush(): reclaim's one full flush for a
 * batch of unmapped pages (counted once, costs os.cost.flush).
 */
void arch_tlbbatch_flush(struct kernel *k);

/* exit_mmap()'s flush of the whole address space (tlb_finish_mmu() of a full mm). */
void flush_tlb_mm(struct kernel *k);

#endif
