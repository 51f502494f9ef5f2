/*
 * check_khugepaged2.c - khugepaged and MADV_COLLAPSE as mm/khugepaged.c at the
 * reference commit has them:
 *  - MADV_COLLAPSE (madvise_collapse()): EINVAL in a VM_NOHUGEPAGE VMA or one
 *    without an anon_vma, os.thp.enabled ignored, the walk stopped by the first
 *    VMA that fails and a range by SCAN_PMD_NONE or a failed allocation, holes
 *    ENOMEM; its collapses are not khugepaged/pages_collapsed, its copies the
 *    caller's cycles;
 *  - khugepaged's scan (khugepaged_scan_mm_slot(), thp_vma_allowable_order()):
 *    a VMA never faulted costs 1 and is not scanned, VM_WRITE is not needed, a
 *    pass from the list head scans the mm once (one full_scans) and one from
 *    inside it finishes it and scans it once more, MADV_HUGEPAGE registers only
 *    a VMA khugepaged could scan;
 *  - khugepaged_do_scan()'s allocation failures: the first sleeps
 *    alloc_sleep_millisecs and the same pass goes on with what it had spent;
 *    scan_sleep_millisecs 0 does not stall the replay.
 * The budget is read from cycles.khugepaged: each 2M range examined costs 512 x
 * os.cost.compact_scan.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>

#include "check_common.h"
#include "check_run.h"
#include "khugepaged.h"

#define MMAP_8M "SYSCALL[7,1](9) sys_mmap ( 0x0, 8388608, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
#define MMAP_4M_AT_5 "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x50000000)\n"
#define MADV(addr, len, adv) "SYSCALL[7,1](28) sys_madvise ( " addr ", " len ", " adv " ) --> [pre-success] Success(0x0)\n"
#define NOHUGE_4M MADV("0x40000000", "4194304", "15")
#define COLLAPSE_4M MADV("0x40000000", "4194304", "25")
/* one 4K store in each of the two 2M ranges of the 4M mapping */
#define STORES_4M " S 40000010,8\n S 40200010,8\n"

static cycles_t ms(unsigned msec)
{
	return (cycles_t)msec * S->cfg.freq_mhz * 1000;
}

/* 2M ranges khugepaged examined (its scan cost), with no collapse copies among them. */
static uint64_t ranges_scanned(void)
{
	return S->st.cyc_khugepaged / (HPAGE_PMD_NR * S->cfg.cost.compact_scan);
}

/* MADV_NOHUGEPAGE: EINVAL, nothing collapsed; os.thp.enabled never does not matter. */
START_TEST(collapse_nohugepage_einval)
{
	cycles_t fault;

	run(MMAP_4M STORES_4M NOHUGE_4M COLLAPSE_4M, "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0); /* the trace's MADV_COLLAPSE did nothing */
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, true), SCAN_VMA_CHECK);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	/* the flag gone, the same call collapses both ranges with THP "never" */
	ck_assert_int_eq(vma_change_flags(&S->k.mm->vmas, 0x40000000, 0x40400000, 0, VM_NOHUGEPAGE), 0);
	fault = S->st.cyc_fault;
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), 0);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	/* not khugepaged's: neither its counter nor its CPU */
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 0);
	ck_assert_uint_eq(S->st.cyc_khugepaged, 0);
	ck_assert_uint_eq(S->st.cyc_fault - fault,
			  2 * (S->cfg.cost.copy_page + (HPAGE_PMD_NR - 1) * S->cfg.cost.clear_page +
			       S->cfg.cost.flush));
	/* again: both PMD-mapped already, success */
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), 0);
	done();

	/* the same through the trace, without MADV_NOHUGEPAGE */
	run(MMAP_4M STORES_4M COLLAPSE_4M, "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 0);
	ck_assert(!S->k.thp.mm_registered); /* THP never: khugepaged has nothing to do */
	done();
}
END_TEST

/* No anon_vma (never faulted, or only read through the zero page): EINVAL. */
START_TEST(collapse_needs_anon_vma)
{
	run(MMAP_4M, "os.thp.enabled=never", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	done();
	run(MMAP_4M " L 40000010,8\n L 40200010,8\n", "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 2);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	done();
	/* one store gives the VMA its anon_vma: the first range collapses (its zero PTEs
	 * with it), the second, zero PTEs only, has no writable PTE: before 6.18
	 * SCAN_PAGE_RO, EINVAL at the end */
	run(MMAP_4M " L 40000010,8\n S 40001010,8\n L 40200010,8\n", "os.thp.enabled=never",
	    "os.kernel=6.12", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	done();
	/* 6.18 wants no writable PTE: MADV_COLLAPSE (no max_ptes_none) collapses the
	 * zero-PTE range too, into a cleared THP */
	run(MMAP_4M " L 40000010,8\n S 40001010,8\n L 40200010,8\n", "os.thp.enabled=never", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), 0);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	done();
}
END_TEST

/* SCAN_PMD_NONE (a range without a page table) and allocation failures stop it. */
START_TEST(collapse_stops)
{
	/* the first range has no PTE table: stop there, the second stays as it is */
	run(MMAP_4M " S 40200010,8\n", "os.thp.enabled=never", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	/* the range alone collapses */
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40200000, 0x40400000), 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	done();
	/* no huge page to be had: ENOMEM at the first range, the second not tried */
	run(MMAP_4M STORES_4M, "os.thp.enabled=never", "os.fragmentation.unmovable=1", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -ENOMEM);
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 1);
	done();
	/* no THP in base mode; a range inside one 2M block is EINVAL (the kernel's sum) */
	run(MMAP_4M STORES_4M, "os.mode=base", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	done();
	run(MMAP_4M STORES_4M, "os.thp.enabled=never", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40001000, 0x40002000), -EINVAL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40001000, 0x40001000), 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	done();
}
END_TEST

/* madvise_walk_vmas(): the first VMA that fails ends the call; holes are ENOMEM. */
START_TEST(collapse_walk)
{
	/* [NOHUGEPAGE 4M][4M]: EINVAL at once, the second VMA untouched */
	run(MMAP_8M " S 40000010,8\n S 40400010,8\n S 40600010,8\n" NOHUGE_4M,
	    "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->k.mm->vmas.n, 2);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40800000), -EINVAL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	done();
	/* [4M][NOHUGEPAGE 4M]: the first collapses, then EINVAL */
	run(MMAP_8M " S 40000010,8\n S 40200010,8\n S 40400010,8\n"
	    MADV("0x40400000", "4194304", "15"), "os.thp.enabled=never", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40800000), -EINVAL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	done();
	/* a hole in the middle: both sides collapse, ENOMEM */
	run(MMAP_8M " S 40000010,8\n S 40600010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40200000, 4194304 )[sync] --> Success(0x0)\n",
	    "os.thp.enabled=never", NULL);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40800000), -ENOMEM);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	/* nothing mapped at or after the start */
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x60000000, 0x60200000), -ENOMEM);
	done();
}
END_TEST

/* A VMA never faulted is not scanned: 1 unit, not 512 a range. */
START_TEST(scan_skips_unfaulted_vma)
{
	/* A (0x40000000) never touched, B (0x50000000) stored to in both ranges; both
	 * MADV_HUGEPAGE'd: A's does not register the mm (no anon_vma), B's does */
	run(MMAP_4M MMAP_4M_AT_5 MADV("0x40000000", "4194304", "14") " S 50000010,8\n S 50200010,8\n"
	    MADV("0x50000000", "4194304", "14"),
	    "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert(S->k.thp.mm_registered);
	ck_assert_uint_eq(ranges_scanned(), 2);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 2);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	done();
	/* the budget: 1 (the mm) + 1 (A) + 512 (B's first range) = 514 ends the pass there */
	run(MMAP_4M MMAP_4M_AT_5 MADV("0x40000000", "4194304", "14") " S 50000010,8\n S 50200010,8\n"
	    MADV("0x50000000", "4194304", "14"),
	    "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0",
	    "os.khugepaged.pages_to_scan=514", NULL);
	ck_assert_uint_eq(ranges_scanned(), 1);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x50200000);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 0);
	done();
	/* a VMA read only through the zero page has no anon_vma either */
	run(MMAP_4M " L 40000010,8\n L 40200010,8\n" MMAP_4M_AT_5 " S 50000010,8\n"
	    MADV("0x40000000", "4194304", "14") MADV("0x50000000", "4194304", "14"),
	    "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert_uint_eq(ranges_scanned(), 2); /* B's two */
	done();
}
END_TEST

/* MADV_HUGEPAGE registers the mm only for a VMA khugepaged could scan. */
START_TEST(registration)
{
	run(MMAP_4M MADV("0x40000000", "4194304", "14"), "os.thp.enabled=madvise", NULL);
	ck_assert(!S->k.thp.mm_registered);
	done();
	/* its first huge fault does (here the huge zero page) */
	run(MMAP_4M MADV("0x40000000", "4194304", "14") " L 40000010,8\n", "os.thp.enabled=madvise",
	    NULL);
	ck_assert(S->k.thp.mm_registered);
	ck_assert_uint_eq(S->k.thp.nr_zero_pmds, 1);
	done();
	/* a faulted VMA without an aligned 2M range: not either */
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 2097152, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40100000)\n"
	    " S 40100010,8\n" MADV("0x40100000", "2097152", "14"), "os.thp.enabled=madvise", NULL);
	ck_assert(!S->k.thp.mm_registered);
	done();
}
END_TEST

/*
 * VM_WRITE is not required: a read-only VMA is scanned, not skipped; before 6.18
 * its ranges end in SCAN_PAGE_RO, from 6.18 on they collapse.
 */
START_TEST(scan_read_only_vma)
{
	run(MMAP_4M STORES_4M
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4194304, 1 )[sync] --> Success(0x0)\n"
	    MADV("0x40000000", "4194304", "14"),
	    "os.thp.enabled=madvise", "os.kernel=6.12", NULL);
	ck_assert(S->k.thp.mm_registered);
	ck_assert_uint_eq(ranges_scanned(), 2);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	done();
	run(MMAP_4M STORES_4M
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4194304, 1 )[sync] --> Success(0x0)\n"
	    MADV("0x40000000", "4194304", "14"),
	    "os.thp.enabled=madvise", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 2);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	done();
}
END_TEST

/*
 * A pass from the list head scans the mm once; one that starts inside it finishes
 * the mm (a full scan), then scans it once more from the start (a second).
 */
START_TEST(pass_through_head)
{
	run(MMAP_4M STORES_4M MADV("0x40000000", "4194304", "14"), "os.thp.enabled=madvise",
	    "os.khugepaged.max_ptes_none=0", "os.khugepaged.pages_to_scan=513", NULL);
	/* the registration pass: the mm (1) and the first range (512) */
	ck_assert_uint_eq(ranges_scanned(), 1);
	ck_assert(S->k.khugepaged.mm_slot);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40200000);
	S->cfg.khugepaged.pages_to_scan = 4096;
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(ranges_scanned(), 1 + 1 + 2);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 2);
	ck_assert(!S->k.khugepaged.mm_slot);
	/* from the head: once */
	khugepaged_do_scan(&S->k);
	ck_assert_uint_eq(ranges_scanned(), 4 + 2);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 3);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 6);
	done();
}
END_TEST

/*
 * The first allocation failure sleeps alloc_sleep_millisecs and the pass goes on
 * with what it had spent: three ranges, pages_to_scan 1026; the pass fails at the
 * first (1 + 512), sleeps, then on waking spends 1 + 512 on the second (not young:
 * no allocation) and is over, before the third.
 */
START_TEST(alloc_sleep_continues_pass)
{
	cycles_t w;

	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 6291456, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
	    " S 40000010,8\n S 40200010,8\n S 40400010,8\n"
	    MADV("0x40000000", "6291456", "14"),
	    "os.thp.enabled=madvise", "os.fragmentation.unmovable=1", "os.khugepaged.defrag=false",
	    "os.khugepaged.pages_to_scan=1026", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 1);
	ck_assert(S->k.khugepaged.alloc_sleeping);
	ck_assert_uint_eq(S->k.khugepaged.progress, 513);
	w = S->k.khugepaged.next_wake;
	ck_assert(pt_test_clear_young(&S->k.mm->pt, 0x40200010));
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert(!S->k.khugepaged.alloc_sleeping);
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 1); /* the third range not reached */
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40400000);
	ck_assert_uint_eq(ranges_scanned(), 2);
	ck_assert_uint_eq(S->k.khugepaged.next_wake, w + ms(S->cfg.khugepaged.scan_sleep_millisecs));
	/* a new pass: the third range fails, sleep; on waking the pass reaches the end of
	 * the mm, starts again from the head and fails again: the pass is over */
	khugepaged_do_scan(&S->k);
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 2);
	ck_assert(S->k.khugepaged.alloc_sleeping);
	w = S->k.khugepaged.next_wake;
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 3);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	ck_assert(!S->k.khugepaged.alloc_sleeping);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40200000);
	ck_assert_uint_eq(S->k.khugepaged.next_wake, w + ms(S->cfg.khugepaged.scan_sleep_millisecs));
	done();
}
END_TEST

/* scan_sleep_millisecs 0 (khugepaged never sleeps): one pass per batch, no stall. */
START_TEST(scan_sleep_zero)
{
	static char buf[1 << 16];
	size_t n = 0;

	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", MMAP_4M STORES_4M MADV("0x40000000", "4194304", "14"));
	for (int i = 0; i < 1000; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " L %x,8\n", 0x40000000 + (i % 64) * 0x1000);
	check_every = 100;
	run(buf, "os.thp.enabled=madvise", "os.khugepaged.scan_sleep_millisecs=0",
	    "os.khugepaged.alloc_sleep_millisecs=0", NULL);
	check_every = 1;
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 2);
	ck_assert_uint_ge(S->st.khugepaged_full_scans, 1);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("khugepaged2");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, collapse_nohugepage_einval);
	tcase_add_test(tc, collapse_needs_anon_vma);
	tcase_add_test(tc, collapse_stops);
	tcase_add_test(tc, collapse_walk);
	tcase_add_test(tc, scan_skips_unfaulted_vma);
	tcase_add_test(tc, registration);
	tcase_add_test(tc, scan_read_only_vma);
	tcase_add_test(tc, pass_through_head);
	tcase_add_test(tc, alloc_sleep_continues_pass);
	tcase_add_test(tc, scan_sleep_zero);
	suite_add_tcase(s, tc);
	return check_run(s);
}
