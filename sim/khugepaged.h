/*
 * khugepaged.h - the background collapse daemon (Linux mm/khugepaged.c), driven
 * by simulated time.
 */
#ifndef MMUSIM_KHUGEPAGED_H
#define MMUSIM_KHUGEPAGED_H

#include "types.h"

struct sim;

/* enum scan_result of mm/khugepaged.c, the outcomes this model produces. */
enum scan_result {
	SCAN_FAIL,
	SCAN_SUCCEED,
	SCAN_PMD_NONE,
	SCAN_PMD_MAPPED,
	SCAN_EXCEED_NONE_PTE,
	SCAN_EXCEED_SWAP_PTE,
	SCAN_PAGE_RO,
	SCAN_LACK_REFERENCED_PAGE,
	SCAN_VMA_CHECK,
	SCAN_ALLOC_HUGE_PAGE_FAIL,
};

/* struct khugepaged_scan: the cursor of the one mm_slot this simulator has. */
struct khugepaged {
	cycles_t next_wake; /* simulated time of the next pass */
	vaddr_t address;    /* khugepaged_scan.address */
};

void khugepaged_init(struct sim *s);

/* One wake-up: khugepaged_do_scan(). */
void khugepaged_do_scan(struct sim *s);

/*
 * Try to collapse the 2M range at @haddr. @madv_collapse: MADV_COLLAPSE's
 * synchronous collapse, which ignores max_ptes_* and the referenced test.
 */
enum scan_result khugepaged_scan_pmd(struct sim *s, vaddr_t haddr, bool madv_collapse);

#endif
