/*
 * check_syscalls.c - the mapping system calls' effects on VMAs, huge PMDs and the
 * TLBs (issue 12 items 3-5), each a trace in Valgrind's lackey + --trace-syscalls
 * syntax on check_common.h's fixture, with every invariant checked after each
 * record. The expected values are derived in each test from Linux 6.18:
 * mm/mprotect.c (do_mprotect_pkey(), mprotect_fixup()), mm/madvise.c
 * (madvise_update_vma(), hugepage_madvise()), mm/vma.c (__split_vma() ->
 * vma_adjust_trans_huge()), mm/huge_memory.c (__split_huge_pmd_locked() ->
 * pmdp_invalidate() -> flush_pmd_tlb_range()), mm/khugepaged.c
 * (pmdp_collapse_flush()), mm/mremap.c (move_ptes()), include/asm-generic/tlb.h
 * (mmu_gather, tlb_get_unmap_shift()) and arch/x86/mm/tlb.c
 * (flush_tlb_mm_range(): more than tlb_single_page_flush_ceiling = 33 strides in
 * the span is a full flush, else one INVLPG per stride; each counts one
 * vmstat.tlb_invalidations).
 *
 * TLB-visible effects are read from the walk count: on the default machine a
 * walk happens exactly on an STLB miss, so a translation that survived a flush
 * costs no walk when it is used again, and one that a flush removed costs one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "mmu.h"

#define SC(nr, call) "SYSCALL[7,1](" #nr ") " call "\n"
/* a 64 KiB base-page mapping far from the others: its translation is the witness */
#define MMAP_WITNESS SC(9, "sys_mmap ( 0x50000000, 65536, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x50000000)")
#define MMAP_1M SC(9, "sys_mmap ( 0x0, 1048576, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)")

static void walks_are_stlb_misses(void)
{
	ck_assert_uint_eq(S->st.walks, S->st.stlb.misses);
}

/* Item 3: mprotect_fixup() returns early when newflags == oldflags. */
START_TEST(mprotect_same_flags_changes_nothing)
{
	/*
	 * The VMA is already PROT_READ|PROT_WRITE: mprotect_fixup() sees newflags ==
	 * oldflags and returns before vma_modify_flags() (no split_vma(), so no
	 * vma_adjust_trans_huge() PMD split) and change_protection() (nothing
	 * gathered, so tlb_finish_mmu() flushes nothing). The THP stays PMD-mapped and
	 * its 2M TLB entry survives: the load after it walks no more.
	 * main: thp_split_pmd 1, tlb_invalidations 1, walks 2, THPs 0.
	 */
	run(MMAP_4M " S 40000010,8\n"
	    SC(10, "sys_mprotect ( 0x40000000, 4096, 3 )[sync] --> Success(0x0)")
	    " L 40000010,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->st.tlb_invalidations, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->k.mm->vmas.n, 1);
	ck_assert_uint_eq(S->st.walks, 1);
	walks_are_stlb_misses();
	done();
}
END_TEST

START_TEST(mprotect_skips_vmas_already_right)
{
	/*
	 * Two THPs. mprotect([2M, 4M), R): split_vma() at 0x40200000, 2M-aligned, so no
	 * PMD split; change_huge_pmd() keeps the PMD and tlb_flush_pmd_range() gathers
	 * it: only PMDs cleared, stride PMD_SHIFT, span 2M = 1 stride: 1 INVLPG.
	 * mprotect([1M, 3M), R): the first VMA changes: split at 0x40100000 splits its
	 * PMD (pmdp_invalidate(): flush_pmd_tlb_range() = flush_tlb_range() at 4 KiB
	 * stride, 512 > 33: a full flush), then 256 PTEs become read-only: span 256
	 * pages > 33, a full flush at tlb_finish_mmu(). The second VMA is already
	 * read-only: skipped, its THP is not split. tlb_invalidations 1 + 1 + 1 = 3.
	 * main: the end 0x40300000 split the second THP too: thp_split_pmd 2, THPs 0,
	 * tlb_invalidations 4 (each split counted as 1 INVLPG).
	 */
	run(MMAP_4M " S 40000010,8\n S 40200010,8\n"
	    SC(10, "sys_mprotect ( 0x40200000, 2097152, 1 )[sync] --> Success(0x0)")
	    SC(10, "sys_mprotect ( 0x40100000, 2097152, 1 )[sync] --> Success(0x0)"), NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.tlb_invalidations, 3);
	ck_assert_uint_eq(S->k.mm->vmas.n, 2); /* [0, 1M) RW, [1M, 4M) R merged */
	ck_assert_uint_eq(S->k.mm->vmas.v[0].end, 0x40100000);
	done();
}
END_TEST

/* Item 4: MADV_[NO]HUGEPAGE on part of a THP splits the VMA and the PMD. */
START_TEST(madvise_nohugepage_splits_pmd)
{
	/*
	 * madvise(0x40000000, 4K, MADV_NOHUGEPAGE): the VMA's flags change, so
	 * madvise_update_vma() -> vma_modify_flags() -> __split_vma() at 0x40001000 ->
	 * vma_adjust_trans_huge() -> split_huge_pmd_if_needed(): thp_split_pmd 1, the
	 * folio stays whole (512 PTE-mapped pages). The split's flush_pmd_tlb_range()
	 * is a full flush (512 > 33): the other THP's 2M entry is gone, its load
	 * walks (3), and 0x40001000 now needs a 4K translation (walk 4).
	 * main: only flags changed, a PMD across two VMAs: thp_split_pmd 0, THPs 2,
	 * tlb_invalidations 0, walks 2.
	 */
	run(MMAP_4M " S 40000010,8\n S 40200010,8\n"
	    SC(28, "sys_madvise ( 0x40000000, 4096, 15 ) --> [pre-success] Success(0x0)")
	    " L 40200010,8\n L 40001000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512);
	ck_assert_uint_eq(S->k.mm->vmas.n, 2);
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	ck_assert_uint_eq(S->st.walks, 4);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_4K], 1);
	walks_are_stlb_misses();
	done();
	/*
	 * MADV_HUGEPAGE on part of a VM_HUGEPAGE VMA: new_flags == vm_flags, so
	 * madvise_update_vma() returns early: no VMA split, no PMD split.
	 */
	run(MMAP_4M MADV_HUGE_4M " S 40000010,8\n"
	    SC(28, "sys_madvise ( 0x40000000, 4096, 14 ) --> [pre-success] Success(0x0)"),
	    "os.thp.enabled=madvise", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->k.mm->vmas.n, 1);
	done();
	/*
	 * MADV_HUGEPAGE on [1M, 2M) of an unmarked VMA (enabled=always): the flags
	 * change, three VMAs; the boundary at 1M cuts the THP (split), the one at 2M
	 * is aligned. main: thp_split_pmd 0.
	 */
	run(MMAP_4M " S 40000010,8\n"
	    SC(28, "sys_madvise ( 0x40100000, 1048576, 14 ) --> [pre-success] Success(0x0)"), NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->k.mm->vmas.n, 3);
	done();
}
END_TEST

/* Item 5: the flush covers the span, not the count, and PMD flushes are full. */
START_TEST(flush_span_not_count)
{
	/*
	 * 4K pages 0 and 100 mapped; mprotect of pages [0, 101) read-only changes 2
	 * PTEs, but the gather's span is page 0 to page 100: 101 strides > 33, a full
	 * flush: tlb_invalidations 1, and page 128's translation is gone (its load
	 * walks: 3 faults + 1). main: 2 INVLPGs, page 128 hit: walks 3.
	 */
	run(MMAP_1M " S 40000000,8\n S 40064000,8\n S 40080000,8\n"
	    SC(10, "sys_mprotect ( 0x40000000, 413696, 1 )[sync] --> Success(0x0)")
	    " L 40080000,8\n", "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	ck_assert_uint_eq(S->st.walks, 4);
	walks_are_stlb_misses();
	done();
	/*
	 * Pages 0, 3 and 10 mapped; mprotect of pages [0, 4) changes 2 PTEs with a span
	 * of 4 pages <= 33: flush_tlb_func() issues 4 INVLPGs (pages 0-3) and nothing
	 * else: page 10 still hits (no walk), page 0 walks again: 3 faults + 1.
	 * main: 2 INVLPGs.
	 */
	run(MMAP_1M " S 40000000,8\n S 40003000,8\n S 4000a000,8\n"
	    SC(10, "sys_mprotect ( 0x40000000, 16384, 1 )[sync] --> Success(0x0)")
	    " L 4000a000,8\n L 40000000,8\n", "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 4);
	ck_assert_uint_eq(S->st.walks, 4);
	walks_are_stlb_misses();
	done();
}
END_TEST

START_TEST(split_and_collapse_flush_everything)
{
	/*
	 * A witness 4K page elsewhere, then a THP; mprotect of its first 4K splits the
	 * PMD: pmdp_invalidate() -> flush_pmd_tlb_range(), 2M at a 4 KiB stride, a
	 * full flush (1); the gather then holds one PTE: 1 INVLPG (2 in all). The
	 * witness's translation went with the full flush: its load walks (2 + 1).
	 * main: the split was 1 INVLPG of the THP's range, the witness hit: walks 2.
	 */
	run(MMAP_WITNESS MMAP_4M " S 50000000,8\n S 40000010,8\n"
	    SC(10, "sys_mprotect ( 0x40000000, 4096, 1 )[sync] --> Success(0x0)")
	    " L 50000000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.tlb_invalidations, 2);
	ck_assert_uint_eq(S->st.walks, 3);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_4K], 2);
	walks_are_stlb_misses();
	done();
	/*
	 * The huge zero page: a load maps it, a store splits the zero PMD
	 * (__split_huge_zero_page_pmd() -> pmdp_huge_clear_flush(): full flush) and
	 * breaks COW on one zero PTE (ptep_clear_flush(): 1 INVLPG): 2. The witness
	 * walks again after the full flush. main: 2 INVLPGs, the witness hit.
	 */
	run(MMAP_WITNESS MMAP_4M " S 50000000,8\n L 40000010,8\n S 40000010,8\n L 50000000,8\n",
	    "os.kernel=6.12", NULL); /* 6.13+ maps a THP instead (check_versions: huge_zero_wp) */
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.tlb_invalidations, 2);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_4K], 3); /* witness, the COWed page, witness */
	walks_are_stlb_misses();
	done();
	/*
	 * MADV_COLLAPSE of a 2M range with two 4K pages: collapse_huge_page() ->
	 * pmdp_collapse_flush() -> flush_tlb_range() of 2M at a 4 KiB stride: a full
	 * flush (1). The witness walks again: 3 faults + 1. main: 1 INVLPG range,
	 * the witness hit: walks 3.
	 */
	run(MMAP_WITNESS MMAP_4M " S 40000000,8\n S 40001000,8\n S 50000000,8\n"
	    SC(28, "sys_madvise ( 0x40000000, 2097152, 25 ) --> [pre-success] Success(0x0)")
	    " L 50000000,8\n", "os.thp.enabled=madvise", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	ck_assert_uint_eq(S->st.walks, 4);
	walks_are_stlb_misses();
	done();
}
END_TEST

START_TEST(whole_thp_zap_is_one_invlpg)
{
	/*
	 * munmap of a whole THP: zap_huge_pmd() -> tlb_remove_pmd_tlb_entry(), only
	 * PMDs cleared: stride PMD_SHIFT, span 2M = 1 stride: 1 INVLPG. The other THP's
	 * 2M entry and the witness's 4K entry survive: no more walks (3 faults).
	 * (main gave the same: its count of 1 leaf agreed with the span here.)
	 */
	run(MMAP_WITNESS MMAP_4M " S 40000010,8\n S 40200010,8\n S 50000000,8\n"
	    SC(11, "sys_munmap ( 0x40000000, 2097152 )[sync] --> Success(0x0)")
	    " L 40200010,8\n L 50000000,8\n", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	ck_assert_uint_eq(S->st.walks, 3);
	walks_are_stlb_misses();
	done();
}
END_TEST

START_TEST(mremap_flushes_moved_extent)
{
	/*
	 * mremap of 8 touched 4K pages to 0x60000000 (MREMAP_MAYMOVE|MREMAP_FIXED):
	 * move_page_tables() moves one extent (both ends inside one PMD); move_ptes()
	 * saw present PTEs and flushes the extent: 8 pages <= 33, 8 INVLPGs. The old
	 * VMA's munmap then frees its page tables (free_pgtables(): nothing else in
	 * that 2M or 1G), freed_tables with no PTE cleared: stride PMD_SHIFT, 1 INVLPG.
	 * 9 in all. The witness keeps its translation (no walk); the moved page at its
	 * new address walks once without a fault: 9 faults + 1 = 10 walks.
	 * main: one full flush, the witness walked again: tlb_invalidations 1, walks 11.
	 */
	run(MMAP_WITNESS SC(9, "sys_mmap ( 0x40000000, 32768, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)")
	    " S 50000000,8\n S 40000000,8\n S 40001000,8\n S 40002000,8\n S 40003000,8\n"
	    " S 40004000,8\n S 40005000,8\n S 40006000,8\n S 40007000,8\n"
	    SC(25, "sys_mremap ( 0x40000000, 32768, 32768, 0x3, 0x60000000 ) --> [pre-success] Success(0x60000000)")
	    " L 50000000,8\n L 60000000,8\n", NULL);
	ck_assert_uint_eq(S->st.pgfault, 9);
	ck_assert_uint_eq(S->st.tlb_invalidations, 9);
	ck_assert_uint_eq(S->st.walks, 10);
	walks_are_stlb_misses();
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syscalls");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mprotect_same_flags_changes_nothing);
	tcase_add_test(tc, mprotect_skips_vmas_already_right);
	tcase_add_test(tc, madvise_nohugepage_splits_pmd);
	tcase_add_test(tc, flush_span_not_count);
	tcase_add_test(tc, split_and_collapse_flush_everything);
	tcase_add_test(tc, whole_thp_zap_is_one_invlpg);
	tcase_add_test(tc, mremap_flushes_moved_extent);
	suite_add_tcase(s, tc);
	return check_run(s);
}
