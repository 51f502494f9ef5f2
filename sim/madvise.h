/*
 * madvise.h - the advice that acts on a range's pages at once: MADV_FREE,
 * MADV_COLD and MADV_PAGEOUT (Linux 6.18 mm/madvise.c). See madvise.c.
 */
#ifndef MMUSIM_MADVISE_H
#define MMUSIM_MADVISE_H

#include "types.h"

struct kernel;

/*
 * madvise(@start, @end - @start, MADV_FREE): each VMA of the range in turn
 * (madvise_free_single_vma()); the walk stops at the first VMA that is not
 * private anonymous memory (-EINVAL, the VMAs before it done). 0 or -EINVAL.
 */
int madvise_free(struct kernel *k, vaddr_t start, vaddr_t end);

/*
 * madvise(@start, @end - @start, MADV_COLD or, with @pageout, MADV_PAGEOUT):
 * madvise_cold_or_pageout_pte_range() over each VMA; stops at a hugetlb VMA
 * (-EINVAL). 0, -EINVAL, or -ENOMEM out of host memory (k->err set).
 */
int madvise_cold_or_pageout(struct kernel *k, vaddr_t start, vaddr_t end, bool pageout);

#endif
