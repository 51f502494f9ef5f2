/*
 * khugepaged.h - the background collapse daemon (Linux mm/khugepaged.c), driven
 * by simulated time.
 */
#ifndef MMUSIM_KHUGEPAGED_H
#define MMUSIM_KHUGEPAGED_H

#include "types.h"

struct kernel;
struct vma;

/* enum scan_result of mm/khugepaged.c, the outcomes this model produces. */
enum scan_result {
	SCAN_FAIL,
	SCAN_SUCCEED,
	SCAN_PMD_NONE,
	SCAN_PMD_MAPPED,
	SCAN_EXCEED_NONE_PTE,
	SCAN_EXCEED_SWAP_PTE,
	SCAN_EXCEED_SHARED_PTE,
	SCAN_PAGE_RO,
	SCAN_LACK_REFERENCED_PAGE,
	SCAN_VMA_CHECK,
	SCAN_ALLOC_HUGE_PAGE_FAIL,
	/* file text (CONFIG_READ_ONLY_THP_FOR_FS) */
	SCAN_PTE_MAPPED_HUGEPAGE,
	SCAN_PTE_NON_PRESENT,
	SCAN_PAGE_NULL,
	SCAN_PAGE_COMPOUND,
};

/* struct khugepaged_scan: the cursor of the one mm_slot this simulator has. */
struct khugepaged {
	cycles_t next_wake; /* simulated time of the next pass (or of a pass's resumption) */
	vaddr_t address;    /* khugepaged_scan.address */
	bool mm_slot;       /* khugepaged_scan.mm_slot: inside the mm (false: at the list head) */
	/* a pass asleep in khugepaged_alloc_sleep(), and what it had when it fell asleep */
	bool alloc_sleeping;
	unsigned progress, pass_through_head;
};

void khugepaged_init(struct kernel *k);

/*
 * One wake-up: khugepaged_do_scan(), or the rest of a pass that slept after an
 * allocation failure. Sets next_wake.
 */
void khugepaged_do_scan(struct kernel *k);

/*
 * khugepaged_enter_vma(): register the mm if khugepaged could scan @v with
 * @flags (its flags as they are becoming: MADV_HUGEPAGE).
 */
void khugepaged_enter_vma(struct kernel *k, const struct vma *v, unsigned long flags);

/* smaps' THPeligible of @v: NULL if 1, else why it is 0 (khugepaged.c says how). */
const char *khugepaged_thp_ineligible(const struct kernel *k, const struct vma *v);

/*
 * Try to collapse the 2M range at @haddr as khugepaged would (counting
 * khugepaged/pages_collapsed on success), or with @madv_collapse as
 * MADV_COLLAPSE does: no max_ptes_* or referenced test, not counted.
 * SCAN_VMA_CHECK if the range is not wholly inside a VMA where that collapse
 * is allowed (see khugepaged.c).
 */
enum scan_result khugepaged_scan_pmd(struct kernel *k, vaddr_t haddr, bool madv_collapse);

/*
 * madvise(@start, @end - @start, MADV_COLLAPSE): each VMA in the range,
 * stopping at the first that fails. 0, or what the system call returns:
 * -EINVAL (a VMA where THP is not allowed, a range left uncollapsed for a
 * reason retrying will not change, no THP in this mode), -ENOMEM (an
 * allocation failed, or a hole in the range), -EBUSY.
 */
int khugepaged_madvise_collapse(struct kernel *k, vaddr_t start, vaddr_t end);

#endif
