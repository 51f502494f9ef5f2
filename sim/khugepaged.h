/*
 * khugepaged.h - the background collapse daemon (Linux mm/khugepaged.c), driven
 * by simulated time.
 */
#ifndef MMUSIM_KHUGEPAGED_H
#define MMUSIM_KHUGEPAGED_H

#include "types.h"

struct kernel;
struct mm;
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

/*
 * struct khugepaged_mm_slot: one registered mm on khugepaged's list
 * (khugepaged_scan.mm_head), in registration order. mm is NULL once the mm
 * exited (or exec'd) while the cursor held its slot: khugepaged drops it at its
 * next visit (collect_mm_slot()), as it does an mm whose mm_users reached 0.
 */
struct khugepaged_mm_slot {
	struct mm *mm;
	struct khugepaged_mm_slot *next;
};

/* khugepaged's state: struct khugepaged_scan (the list and its cursor) and its sleeps. */
struct khugepaged {
	cycles_t next_wake; /* simulated time of the next pass (or of a pass's resumption) */
	struct khugepaged_mm_slot *head, **tail; /* khugepaged_scan.mm_head */
	struct khugepaged_mm_slot *mm_slot;      /* khugepaged_scan.mm_slot: NULL at the list head */
	vaddr_t address;                         /* khugepaged_scan.address in it */
	unsigned nr_slots;                       /* slots on the list */
	/* a pass asleep in khugepaged_alloc_sleep(), and what it had when it fell asleep */
	bool alloc_sleeping;
	unsigned progress, pass_through_head;
};

void khugepaged_init(struct kernel *k);
/* Free the list (the kernel's teardown). */
void khugepaged_destroy(struct kernel *k);

/*
 * __khugepaged_enter(): put @mm at the tail of the list unless it is on it
 * (MMF_VM_HUGEPAGE); the first mm on an empty list wakes an idle khugepaged at
 * once. A slot the host cannot allocate leaves @mm off the list, as in the kernel.
 */
void khugepaged_enter_mm(struct kernel *k, struct mm *mm);
/* khugepaged_fork(): the child @mm is registered if its parent @oldmm is. */
void khugepaged_fork(struct kernel *k, struct mm *mm, const struct mm *oldmm);
/*
 * khugepaged_exit(): @mm is going (exit_mmap(), or exec's mmput() of the old mm).
 * Its slot leaves the list now, or, if the cursor holds it, at khugepaged's next
 * visit (collect_mm_slot()); @mm is off the list either way.
 */
void khugepaged_exit(struct kernel *k, struct mm *mm);
/* The list agrees with each mm's slot pointer, the cursor is on it. Aborts. */
void khugepaged_check_invariants(const struct kernel *k);

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
