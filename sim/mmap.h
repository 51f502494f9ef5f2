/*
 * mmap.h - the mapping system calls (mmap.c, Linux mm/mmap.c and friends) and
 * the TLB shootdown every page-table change ends with.
 */
#ifndef MMUSIM_MMAP_H
#define MMUSIM_MMAP_H

#include "trace.h"
#include "types.h"

struct kernel;

/*
 * Apply one OS event of the trace (mmap, munmap, mprotect, madvise, brk,
 * mremap). 0, or -1 with k->err and k->failed (a range beyond the address
 * space, host or simulated memory exhausted).
 */
int kernel_event(struct kernel *k, const struct os_event *ev);

/*
 * The TLB shootdown a page-table change ends with, as x86 decides it
 * (arch/x86/mm/tlb.c flush_tlb_mm_range()): a span [start, end) of more than
 * tlb_single_page_flush_ceiling (33) strides of 1 << @stride_shift is one full
 * flush, a smaller one an INVLPG per stride; each counts one
 * vmstat.tlb_invalidations, the call costs os.cost.flush. Nothing if end <= start.
 */
void sim_flush_tlb_mm_range(struct kernel *k, vaddr_t start, vaddr_t end, unsigned stride_shift);

/*
 * flush_tlb_range() of a non-hugetlb VMA: a 4 KiB stride whatever was mapped,
 * so the PMD flushes of a split or a collapse (flush_pmd_tlb_range(), 512 pages)
 * are full flushes.
 */
void sim_flush_tlb_range(struct kernel *k, vaddr_t start, vaddr_t end);

/* flush_tlb_page(): one INVLPG at @va (a COW break, a migrated page). */
void sim_flush_tlb_page(struct kernel *k, vaddr_t va);

/* exit_mmap(): unmap the whole address space, freeing every frame and table below the root. */
void sim_exit_mmap(struct kernel *k);

#endif
