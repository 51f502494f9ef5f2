/*
 * check_khugepaged.c - khugepaged (mm/khugepaged.c): collapse of sparse PTE-mapped
 * ranges once MADV_HUGEPAGE makes them eligible, max_ptes_none, MADV_COLLAPSE's
 * synchronous collapse, max_ptes_swap against a swapped-out range (these four
 * moved out of check_thp.c unchanged); then each SCAN_* outcome of one range,
 * and khugepaged_do_scan()'s cadence: scan_sleep_millisecs between passes,
 * the pages_to_scan budget, full scans and the cursor's wrap, alloc_sleep_millisecs
 * after an allocation failure (check_khugepaged2.c has more of both). Scenarios on lackey traces with every invariant
 * checked after each record (check_common.h) and after each direct call.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "khugepaged.h"

/* 64 sparse 4K touches in each 2M range, then MADV_HUGEPAGE: khugepaged collapses them. */
static char *sparse_then_madvise(void)
{
	static char buf[8192];
	size_t n = 0;

	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", MMAP_4M);
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 64; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " S %x,8\n",
					      0x40000000 + r * 0x200000 + i * 0x8000);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", MADV_HUGE_4M);
	for (int i = 0; i < 40; i++) /* time passes: cpu.freq_mhz=1 makes 1 ms 1000 cycles */
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " L %x,8\n", 0x40000000 + i * 0x8000);
	return buf;
}

START_TEST(khugepaged_collapses)
{
	run(sparse_then_madvise(), "os.thp.enabled=madvise", "cpu.freq_mhz=1",
	    "os.khugepaged.scan_sleep_millisecs=1", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 2);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_ge(S->st.khugepaged_full_scans, 1);
	ck_assert_uint_gt(S->st.cyc_khugepaged, 0);
	done();
	run(sparse_then_madvise(), "os.thp.enabled=madvise", "cpu.freq_mhz=1",
	    "os.khugepaged.scan_sleep_millisecs=1", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_ge(S->st.thp_scan_exceed_none_pte, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 128);
	done();
}
END_TEST

START_TEST(madv_collapse)
{
	run(MMAP_4M " S 40000010,8\n S 40100000,8\n"
	    "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 2097152, 25 ) --> [pre-success] Success(0x0)\n",
	    "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
}
END_TEST

/* khugepaged meets a swapped-out range: 512 swap PTEs exceed max_ptes_swap (64). */
START_TEST(khugepaged_skips_swapped_range)
{
	char *t = fill_trace(96, 2 << 20, 0, MADV_HUGE_4M);

	run(t, "os.memory=64M", "os.khugepaged.scan_sleep_millisecs=1", NULL);
	free(t);
	ck_assert_uint_gt(S->st.thp_swpout, 0);
	ck_assert_uint_gt(S->st.thp_scan_exceed_swap_pte, 0);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 0);
	done();
}
END_TEST

/* Two 2M ranges, one 4K page stored to in each, then MADV_HUGEPAGE (registers the mm). */
#define TWO_RANGES MMAP_4M " S 40000010,8\n S 40200010,8\n" MADV_HUGE_4M

static cycles_t ms(unsigned msec)
{
	return (cycles_t)msec * S->cfg.freq_mhz * 1000;
}

/* The same without MADV_HUGEPAGE: the mm is not registered, khugepaged never runs. */
#define TWO_RANGES_UNREGISTERED MMAP_4M " S 40000010,8\n S 40200010,8\n"

/* MADV_HUGEPAGE's VM_HUGEPAGE without the registration (no pass runs by itself). */
static void hugepage_flag(void)
{
	ck_assert_int_eq(vma_change_flags(&S->k.mm->vmas, 0x40000000, 0x40400000, VM_HUGEPAGE, 0), 0);
}

/* hpage_collapse_scan_pmd()'s outcomes, one range at a time. */
START_TEST(scan_pmd_results)
{
	run(TWO_RANGES_UNREGISTERED, "os.thp.enabled=madvise", NULL);
	/* enabled=madvise: khugepaged may not collapse here before VM_HUGEPAGE */
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_VMA_CHECK);
	hugepage_flag();
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 0); /* no pass ran during the trace */
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	/* outside the VMA, or not wholly inside */
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x3fe00000, false), SCAN_VMA_CHECK);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40400000, false), SCAN_VMA_CHECK);
	/* one present PTE and 511 none: max_ptes_none 511 allows it */
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_SUCCEED);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_PMD_MAPPED);
	/* the other range, not young: no collapse; young again: collapse */
	ck_assert(pt_test_clear_young(&S->k.mm->pt, 0x40200010));
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40200000, false), SCAN_LACK_REFERENCED_PAGE);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40200000, true), SCAN_SUCCEED); /* MADV_COLLAPSE */
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 1); /* not khugepaged's */
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();

	/* max_ptes_none 0: 511 none PTEs exceed it (once counted); MADV_COLLAPSE ignores it */
	run(TWO_RANGES_UNREGISTERED, "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0", NULL);
	hugepage_flag();
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_EXCEED_NONE_PTE);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 1);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, true), SCAN_SUCCEED);
	sim_check_invariants(S);
	done();

	/* read-only PTEs (mprotect PROT_READ after the stores): SCAN_PAGE_RO before 6.18;
	 * no PTE table at all: SCAN_PMD_NONE */
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4194304, 1 )[sync] --> Success(0x0)\n",
	    "os.thp.enabled=madvise", "os.kernel=6.12", NULL);
	hugepage_flag();
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_PAGE_RO);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40200000, false), SCAN_PMD_NONE);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	done();
	/* 6.18 ("mm: enable khugepaged to operate on non-writable VMAs"): it collapses,
	 * into a read-only PMD (maybe_pmd_mkwrite() of a VMA without VM_WRITE) */
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4194304, 1 )[sync] --> Success(0x0)\n",
	    "os.thp.enabled=madvise", NULL);
	hugepage_flag();
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_SUCCEED);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	{
		enum page_size ps;
		pfn_t pfn;
		uint64_t e;

		ck_assert(pt_lookup(&S->k.mm->pt, 0x40000000, &ps, &pfn, &e));
		ck_assert_int_eq(ps, PS_2M);
		ck_assert(!(e & PTE_RW));
	}
	done();
}
END_TEST

/*
 * khugepaged_do_scan()'s cadence: registration (MADV_HUGEPAGE) makes khugepaged
 * due at once, so the trace ends after one pass; each pass is followed by
 * scan_sleep_millisecs of simulated time; pages_to_scan 512 lets one pass
 * examine one 2M range; the end of the mm is a full scan (1 unit) and the cursor
 * wraps to the first VMA.
 */
START_TEST(scan_cadence_and_budget)
{
	cycles_t w;

	run(TWO_RANGES, "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0",
	    "os.khugepaged.pages_to_scan=512", NULL);
	/* the registration pass: the first range */
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 1);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40200000);
	w = S->k.khugepaged.next_wake;
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 2);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40400000);
	ck_assert_uint_eq(S->k.khugepaged.next_wake, w + ms(S->cfg.khugepaged.scan_sleep_millisecs));
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 0);
	/* the end of the mm (1 unit), then the first range again (512): budget spent */
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 3);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40200000);
	ck_assert_uint_eq(S->k.khugepaged.next_wake,
			  w + 2 * ms(S->cfg.khugepaged.scan_sleep_millisecs));
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 0);
	done();

	/* the default budget (4096): a pass from the list head scans both ranges, ends the
	 * mm (a full scan), then stops rather than pass the head a second time */
	run(TWO_RANGES, "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 2);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	ck_assert(!S->k.khugepaged.mm_slot);
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 4);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 2);
	done();
}
END_TEST

/*
 * An allocation failure puts the pass to sleep for alloc_sleep_millisecs; the same
 * pass goes on after it, and a second failure ends it (scan_sleep_millisecs then).
 */
START_TEST(alloc_sleep_after_failure)
{
	cycles_t w;

	run(TWO_RANGES, "os.thp.enabled=madvise", "os.fragmentation.unmovable=1",
	    "os.khugepaged.defrag=false", NULL);
	/* the registration pass failed at the first range and sleeps */
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 1);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40200000);
	ck_assert(S->k.khugepaged.alloc_sleeping);
	w = S->k.khugepaged.next_wake;
	/* it wakes, fails at the second range: the pass is over */
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 2);
	ck_assert_uint_eq(S->k.khugepaged.address, 0x40400000);
	ck_assert(!S->k.khugepaged.alloc_sleeping);
	ck_assert_uint_eq(S->k.khugepaged.next_wake, w + ms(S->cfg.khugepaged.scan_sleep_millisecs));
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 0);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("khugepaged");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, khugepaged_skips_swapped_range);
	tcase_add_test(tc, khugepaged_collapses);
	tcase_add_test(tc, madv_collapse);
	tcase_add_test(tc, scan_pmd_results);
	tcase_add_test(tc, scan_cadence_and_budget);
	tcase_add_test(tc, alloc_sleep_after_failure);
	suite_add_tcase(s, tc);
	return check_run(s);
}
