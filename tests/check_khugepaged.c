/*
 * check_khugepaged.c - khugepaged (mm/khugepaged.c): collapse of sparse PTE-mapped
 * ranges once MADV_HUGEPAGE makes them eligible, max_ptes_none, MADV_COLLAPSE's
 * synchronous collapse, max_ptes_swap against a swapped-out range. Scenarios on
 * lackey traces with every invariant checked after each record (check_common.h);
 * moved out of check_thp.c unchanged.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"

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

int main(void)
{
	Suite *s = suite_create("khugepaged");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, khugepaged_skips_swapped_range);
	tcase_add_test(tc, khugepaged_collapses);
	tcase_add_test(tc, madv_collapse);
	suite_add_tcase(s, tc);
	return check_run(s);
}
