/*
 * mmap.h - the mapping system calls (mmap.c, Linux mm/mmap.c and friends) and
 * the TLB shootdown every page-table change ends with.
 */
#ifndef MMUSIM_MMAP_H
#define MMUSIM_MMAP_H

#include "trace.h"
#include "types.h"

struct sim;

/*
 * Apply one OS event of the trace (mmap, munmap, mprotect, madvise, brk,
 * mremap). 0, or -1 with s->err and s->failed (a range beyond the address
 * space, host or simulated memory exhausted).
 */
int sim_event(struct sim *s, const struct os_event *ev);

/*
 * flush_tlb_mm_range(): shoot down [start, end) after @pages leaves changed:
 * INVLPGs up to the ceiling, a full flush beyond; nothing if @pages is 0.
 */
void sim_shootdown(struct sim *s, vaddr_t start, vaddr_t end, uint64_t pages);

/* exit_mmap(): unmap the whole address space, freeing every frame and table below the root. */
void sim_exit_mmap(struct sim *s);

#endif
