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

/* exit_mmap(): unmap the whole address space, freeing every frame and table below the root. */
void sim_exit_mmap(struct kernel *k);

#endif
