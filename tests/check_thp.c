/*
 * check_thp.c - the THP fault and split policy: the kernel model's scenarios, each
 * a small trace in Valgrind's real lackey + --trace-syscalls syntax, asserting the
 * kernel's counters (reference §2, §3, §4), with every invariant checked after
 * each record. khugepaged's scenarios are in check_khugepaged.c, reclaim and
 * swap's in check_reclaim.c; the fixture is check_common.h.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "mmu.h"

START_TEST(always)
{
	run(MMAP_4M " S 40000010,8\n S 40200000,8\n L 40200008,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 2);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 0);
	ck_assert_uint_eq(S->st.huge_bytes, 4 << 20);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_2M], 2);
	done();
}
END_TEST

START_TEST(madvise_and_never)
{
	run(MMAP_4M " S 40000010,8\n S 40200000,8\n", "os.thp.enabled=madvise", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
	run(MMAP_4M MADV_HUGE_4M " S 40000010,8\n S 40200000,8\n", "os.thp.enabled=madvise", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();
	run(MMAP_4M MADV_HUGE_4M " S 40000010,8\n S 40200000,8\n", "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
}
END_TEST

START_TEST(partial_vma)
{
	/* [0x40100000, 0x40500000): only [0x40200000, 0x40400000) is a whole 2M range */
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40100000)\n"
	    " S 40100000,8\n S 40200000,8\n S 40400000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 0); /* ineligibility is silent */
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
}
END_TEST

START_TEST(partial_mprotect_splits_pmd)
{
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4096, 1 )[sync] --> Success(0x0)\n"
	    " L 40000010,8\n L 40001000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512);
	ck_assert_uint_eq(S->k.mm->vmas.n, 2);
	done();
}
END_TEST

START_TEST(partial_munmap_defers_split)
{
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 1048576 )[sync] --> Success(0x0)\n"
	    " L 40100000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 256);
	ck_assert_uint_eq(S->k.thp.nr_deferred, 1);
	/* the shrinker splits it and frees the 256 unmapped subpages, and 6.12+
	 * (b1f202060afe) maps the 256 mapped ones, never stored to, to the zero page
	 * and frees them too */
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 512);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 256);
	sim_check_invariants(S);
	done();
	/* 6.8: no remap, the mapped ones stay */
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 1048576 )[sync] --> Success(0x0)\n"
	    " L 40100000,8\n", "os.kernel=6.8", NULL);
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 256);
	ck_assert_uint_eq(S->st.nr_anon_pages, 256);
	done();
	/* max_ptes_none 409: the same, and the THP is not split as underused (it is
	 * partially mapped: split anyway) */
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 1048576 )[sync] --> Success(0x0)\n"
	    " L 40100000,8\n", "os.khugepaged.max_ptes_none=409", NULL);
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 512);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	ck_assert_uint_eq(S->st.thp_underused_split_page, 0); /* partially mapped: split anyway */
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 256);
	sim_check_invariants(S);
	done();
}
END_TEST

START_TEST(whole_munmap_no_split)
{
	run(MMAP_4M " S 40000010,8\n S 40200010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 2097152 )[sync] --> Success(0x0)\n", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.rss_bytes, 2 << 20);
	/* the freed THP went back whole: a free order-9 (or larger) block exists */
	ck_assert_int_eq(buddy_fragmentation_index(&S->k.buddy, HPAGE_PMD_ORDER), -1000);
	ck_assert_uint_eq(S->k.thp.dep_n, 1); /* its deposited table went with it */
	done();
}
END_TEST

START_TEST(zero_page_then_write)
{
	/* os.kernel 6.12: 6.13+ maps a THP instead (tests/check_versions.c) */
	run(MMAP_4M " L 40000010,8\n L 40001000,8\n S 40002000,8\n L 40003000,8\n",
	    "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 1);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.pgfault, 2); /* the read fault, then the write-protect fault */
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 511);
	ck_assert_uint_eq(S->st.rss_bytes, 4096);
	done();
	/* use_zero_page off: a read fault allocates the THP */
	run(MMAP_4M " L 40000010,8\n", "os.thp.use_zero_page=false", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 0);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	done();
}
END_TEST

START_TEST(five_level_huge_walk)
{
	uint64_t before;

	run(MMAP_4M " S 40000010,8\n", "walk.levels=5", "walk.pwc.pml5.entries=0",
	    "walk.pwc.pml4.entries=0", "walk.pwc.pdpt.entries=0", "walk.pwc.pde.entries=0", NULL);
	mmu_flush_all(&S->mmu);
	before = S->mmu.st.pte_reads;
	{
		struct trace_rec r = { 0x40000020, 8, R_LOAD };
		struct trace_batch b = { &r, 1, NULL, 0 };
		struct err e;

		ck_assert_int_eq(sim_run_batch(S, &b, &e), 0);
	}
	ck_assert_uint_eq(S->mmu.st.pte_reads - before, 4); /* PML5E, PML4E, PDPTE, PDE(2M) */
	done();
}
END_TEST

START_TEST(fallback_when_every_block_pinned)
{
	run(MMAP_4M " S 40000010,8\n S 40200010,8\n", "os.fragmentation.unmovable=1",
	    "os.khugepaged.defrag=false", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 2);
	ck_assert_uint_eq(S->st.compact_stall, 0); /* defrag=madvise, no MADV_HUGEPAGE: no stall */
	/* khugepaged woke at registration, found the PTE-mapped ranges, could not allocate */
	ck_assert_uint_ge(S->st.thp_collapse_alloc_failed, 1);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
	/* madvised: direct compaction runs, cannot move pinned pages, fails */
	run(MMAP_4M MADV_HUGE_4M " S 40000010,8\n S 40200010,8\n", "os.fragmentation.unmovable=1", NULL);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 2);
	ck_assert_uint_ge(S->st.compact_stall, 1);
	ck_assert_uint_eq(S->st.compact_success, 0);
	ck_assert_uint_eq(S->st.compact_fail, S->st.compact_stall);
	ck_assert_uint_eq(S->st.compact_migrated, 0);
	done();
}
END_TEST

/*
 * Memory (64 MiB) filled with 4K pages of a MADV_NOHUGEPAGE mapping, then every
 * other page of its first 32 MiB unmapped: free memory is plentiful but all in
 * order-0 holes among movable pages. A THP fault in a MADV_HUGEPAGE mapping stalls
 * in direct compaction, which migrates pages and succeeds.
 */
START_TEST(compaction_of_movable_fragmentation)
{
	size_t cap = 4 << 20, n = 0;
	char *t = malloc(cap);
	const unsigned pages = 16128; /* 63 MiB */

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x10000000)\n"
			      "SYSCALL[7,1](28) sys_madvise ( 0x10000000, %u, 15 ) --> [pre-success] Success(0x0)\n",
			      pages * 4096, pages * 4096);
	for (unsigned i = 0; i < pages; i++)
		n += (size_t)snprintf(t + n, cap - n, " S %x,8\n", 0x10000000 + i * 4096);
	for (unsigned i = 0; i < 8192; i += 2)
		n += (size_t)snprintf(t + n, cap - n,
				      "SYSCALL[7,1](11) sys_munmap ( 0x%x, 4096 )[sync] --> Success(0x0)\n",
				      0x10000000 + i * 4096);
	n += (size_t)snprintf(t + n, cap - n, "%s", MMAP_4M MADV_HUGE_4M " S 40000010,8\n");
	check_every = 4096;
	run(t, "os.memory=64M", "os.swap.size=0", NULL); /* no swap: only compaction can help */
	check_every = 1;
	free(t);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.compact_stall, 1);
	ck_assert_uint_eq(S->st.compact_success, 1);
	ck_assert_uint_eq(S->st.compact_fail, 0);
	ck_assert_uint_gt(S->st.compact_migrated, 0);
	ck_assert_uint_gt(S->st.cyc_compaction, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, pages - 4096);
	done();
}
END_TEST

/*
 * A 1 GiB hugetlbfs page: one fault maps the aligned GiB of a MAP_HUGETLB |
 * MAP_HUGE_1GB mapping (2-entry walk, one 1G L1 dTLB miss); a MAP_HUGETLB
 * mapping without size bits right after it gets pages of the default size, 2M.
 * (The page size is the mapping's, hstate_sizelog(): before, one mapping of
 * 1.1875 GiB took a 1G page and 2M pages, which Linux never gives.)
 */
START_TEST(hugetlb_1g_pool)
{
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 1073741824, 3, 2013528098, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
	    "SYSCALL[7,1](9) sys_mmap ( 0x0, 201326592, 3, 262178, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n"
	    " S 40000010,8\n L 7fffff00,8\n S 40001000,8\n S 80000000,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 1275068416 )[sync] --> Success(0x0)\n",
	    "os.memory=3G", "os.mode=hugetlbfs", "os.hugetlbfs.pages_1g=1", "tlb.l1d.1G.entries=4",
	    "tlb.l1d.1G.ways=4", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_1G], 1);
	ck_assert_uint_eq(S->st.l1[SIDE_D].hits[PS_1G], 2);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_2M], 1);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages_1g, 0); /* unmapped at the end */
	ck_assert_uint_eq(S->k.hugetlb.in_use_1g, 0);
	ck_assert_uint_eq(S->k.hugetlb.nr_1g, 1);
	ck_assert_uint_eq(S->k.buddy.nr_pages, 2ULL << 18); /* the buddy got the other 2 GiB */
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("thp");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, always);
	tcase_add_test(tc, hugetlb_1g_pool);
	tcase_add_test(tc, madvise_and_never);
	tcase_add_test(tc, partial_vma);
	tcase_add_test(tc, partial_mprotect_splits_pmd);
	tcase_add_test(tc, partial_munmap_defers_split);
	tcase_add_test(tc, whole_munmap_no_split);
	tcase_add_test(tc, zero_page_then_write);
	tcase_add_test(tc, five_level_huge_walk);
	tcase_add_test(tc, fallback_when_every_block_pinned);
	tcase_add_test(tc, compaction_of_movable_fragmentation);
	suite_add_tcase(s, tc);
	return check_run(s);
}
