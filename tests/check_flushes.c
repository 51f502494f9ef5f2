/*
 * check_flushes.c - flushes and faults Linux 6.18 skips, VMA-by-VMA zaps, the
 * hugetlb page size of MAP_HUGETLB and a partial mremap's page tables. Each
 * scenario is a trace in Valgrind's lackey + --trace-syscalls syntax on
 * check_common.h's fixture (invariants after every record), its expected values
 * derived from the kernel source named in the test; "before" gives what mmusim
 * counted before the change.
 *
 * TLB shootdowns are vmstat.tlb_invalidations (one per INVLPG or full flush,
 * arch/x86/mm/tlb.c flush_tlb_mm_range(): up to tlb_single_page_flush_ceiling =
 * 33 strides one INVLPG each). On the default machine a walk happens exactly on
 * an STLB miss, so a translation that survived costs no walk.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "mmu.h"

#define SC(nr, call) "SYSCALL[7,1](" #nr ") " call "\n"
/* 64 KiB of file (fd 3) at 0x40000000: private (flags 2) or shared (flags 1), read-write */
#define MMAP_FILE_PRIVATE SC(9, "sys_mmap ( 0x0, 65536, 3, 2, 3, 0 ) --> [pre-success] Success(0x40000000)")
#define MMAP_FILE_SHARED SC(9, "sys_mmap ( 0x0, 65536, 3, 1, 3, 0 ) --> [pre-success] Success(0x40000000)")
#define MMAP_1M SC(9, "sys_mmap ( 0x0, 1048576, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)")
#define MPROTECT_64K(prot) SC(10, "sys_mprotect ( 0x40000000, 65536, " prot " )[sync] --> Success(0x0)")
#define STORE4 " S 40000000,8\n S 40001000,8\n S 40002000,8\n S 40003000,8\n"
#define LOAD4 " L 40000000,8\n L 40001000,8\n L 40002000,8\n L 40003000,8\n"

static void walks_are_stlb_misses(void)
{
	ck_assert_uint_eq(S->st.walks, S->st.stlb.misses);
}

/*
 * wp_page_reuse(): a store to a clean page-cache PTE of a shared file mapping
 * takes do_wp_page() -> wp_page_shared(), which makes the PTE writable and dirty
 * in place: x86 ptep_set_access_flags() writes the entry without a flush (the
 * #PF itself dropped the read-only translation, SDM Vol. 3A §4.10.4.1). A
 * private mapping's store copies the page instead (wp_page_copy() ->
 * ptep_clear_flush(): one INVLPG), unchanged.
 * Shared: pgfault 2 (the read, the write-protect fault), tlb_invalidations
 * before 1, after 0; walks 3 both (the read; the store after the fault, whose
 * stale translation the #PF dropped; page 1, mapped by fault-around).
 */
START_TEST(wp_page_reuse_does_not_flush)
{
	run(MMAP_FILE_SHARED " L 40000000,8\n S 40000000,8\n L 40001000,8\n", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.tlb_invalidations, 0);
	ck_assert_uint_eq(S->st.walks, 3); /* the read, the store after the fault, page 1 */
	walks_are_stlb_misses();
	done();
	/* private: wp_page_copy() flushes the old PTE (before and after: 1) */
	run(MMAP_FILE_PRIVATE " L 40000000,8\n S 40000000,8\n", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
}
END_TEST

/*
 * change_pte_range() / pte_needs_flush(): mprotect(PROT_READ | PROT_WRITE) of a
 * private file mapping whose 16 pages were read (fault-around mapped all 16
 * read-only). can_change_pte_writable() refuses page-cache pages, so every PTE
 * stays read-only, unchanged: nothing is gathered, nothing flushed, and the
 * pages' translations survive (the loads after it walk no more).
 * The mprotect R before it changes nothing either (the PTEs were read-only).
 * tlb_invalidations before 16 (each PTE made writable, then read-only again,
 * gathered: span 16 pages), after 0; walks before 8 (the 4 loads again), after
 * 4 (the first 4 loads only); pgfault 1 both.
 */
START_TEST(mprotect_unchanged_pte_not_flushed)
{
	run(MMAP_FILE_PRIVATE LOAD4 MPROTECT_64K("1") MPROTECT_64K("3") LOAD4, NULL);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.tlb_invalidations, 0);
	ck_assert_uint_eq(S->st.walks, 4); /* the first 4 loads only */
	walks_are_stlb_misses();
	done();
}
END_TEST

/*
 * A PROT_NONE PTE is not present on x86 (_PAGE_PROTNONE without _PAGE_PRESENT):
 * going to PROT_NONE clears Present (pte_needs_flush(): a flush for every
 * present PTE, read-only ones included), coming back from it flushes nothing
 * (!PRESENT -> *: no flush). Four anonymous pages written, then
 *  - mprotect NONE, mprotect RW, the 4 stores again: NONE clears R/W and
 *    Present of 4 PTEs (4 INVLPGs), RW finds nothing present (0; before: 4, R/W
 *    set); the stores take no fault (can_change_pte_writable(): exclusive
 *    anonymous pages are writable again) and walk (the flush at NONE emptied
 *    the TLB). tlb_invalidations before 8, after 4; pgfault 4, walks 8 both.
 *  - mprotect R, mprotect NONE: R clears R/W (4 INVLPGs); NONE clears Present
 *    of the read-only PTEs (4; before: 0, R/W unchanged). tlb_invalidations
 *    before 4, after 8.
 */
START_TEST(prot_none_and_back)
{
	run(MMAP_1M STORE4 MPROTECT_64K("0") MPROTECT_64K("3") STORE4, "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.pgfault, 4);
	ck_assert_uint_eq(S->st.tlb_invalidations, 4);
	ck_assert_uint_eq(S->st.walks, 8);
	walks_are_stlb_misses();
	done();
	run(MMAP_1M STORE4 MPROTECT_64K("1") MPROTECT_64K("0"), "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 8);
	done();
}
END_TEST

/*
 * pte_needs_flush(): _PAGE_NX is in flush_on_change. mprotect(PROT_READ) to
 * PROT_READ | PROT_EXEC changes no R/W but clears NX on every present PTE: 4
 * INVLPGs (before 0). After mprotect R: 4; then RX: 4 more: 8 (before 4).
 */
START_TEST(mprotect_exec_flips_nx)
{
	run(MMAP_1M STORE4 MPROTECT_64K("1") MPROTECT_64K("5"), "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 8);
	done();
}
END_TEST

/*
 * can_change_pte_writable(): mprotect(PROT_READ | PROT_WRITE) of a shared file
 * mapping makes a dirty page-cache PTE writable again (MM_CP_TRY_CHANGE_WRITABLE:
 * dirty tracking has nothing left to catch, pte_dirty()); a clean one stays
 * read-only. Fault-around off (os.fault_around_bytes 4096) so that only the
 * pages touched are mapped. Page 0 written (do_shared_fault(): writable, dirty),
 * page 1 read (read-only, clean); mprotect R, mprotect RW, a store to each:
 *  - mprotect R: page 0 loses R/W, page 1 unchanged: 1 INVLPG (before: 1);
 *  - mprotect RW: page 0 (dirty) gets R/W back: 1 INVLPG; page 1 stays
 *    read-only (before: both made writable, then the cache page read-only
 *    again: span 2 pages, 2 INVLPGs);
 *  - store to page 0: no fault (before: wp_page_shared(), flushed: 1);
 *  - store to page 1: wp_page_shared() -> wp_page_reuse(), no flush (before: 1).
 * pgfault before 4, after 3; tlb_invalidations before 5, after 2.
 */
START_TEST(dirty_shared_pte_made_writable)
{
	run(MMAP_FILE_SHARED " S 40000000,8\n L 40001000,8\n" MPROTECT_64K("1") MPROTECT_64K("3")
	    " S 40000000,8\n S 40001000,8\n", "os.fault_around_bytes=4096", NULL);
	ck_assert_uint_eq(S->st.pgfault, 3);
	ck_assert_uint_eq(S->st.tlb_invalidations, 2);
	walks_are_stlb_misses();
	done();
}
END_TEST

/*
 * The rmap batching of 6.9+ (zap_present_ptes() -> folio_remove_rmap_ptes())
 * stops at every VMA boundary: a zap goes VMA by VMA (unmap_vmas() ->
 * unmap_single_vma(); MADV_DONTNEED: zap_page_range_single_batched()). A store
 * faults a THP at 0x40000000; mprotect(PROT_READ) of its first page splits the
 * VMA and the PMD (thp_split_pmd 1). The THP now spans two VMAs, [0, 4K) and
 * [4K, 4M): zapping the 2 MiB removes page 0's rmap in the first VMA's run,
 * after which the folio is partly mapped: __folio_remove_rmap() queues it
 * (deferred_split_folio(), thp_deferred_split_page 1); the second VMA's run then
 * unmaps the rest and the folio is freed whole (off the queue, RSS 0).
 * 6.18: thp_deferred_split_page before 0, after 1, for munmap and for
 * MADV_DONTNEED. 6.6: 1 before and after (page_remove_rmap() per PTE).
 * (exit_mmap() -> unmap_vmas() goes VMA by VMA too; the report is made before
 * the process's exit, so no counter shows it.)
 */
#define MPROTECT_FIRST_PAGE_R SC(10, "sys_mprotect ( 0x40000000, 4096, 1 )[sync] --> Success(0x0)")
START_TEST(rmap_batch_stops_at_vma)
{
	static const char *const tails[] = {
		SC(11, "sys_munmap ( 0x40000000, 2097152 )[sync] --> Success(0x0)"),
		SC(28, "sys_madvise ( 0x40000000, 2097152, 4 ) --> [pre-success] Success(0x0)"),
	};

	for (unsigned i = 0; i < 2; i++) {
		char t[1024];

		snprintf(t, sizeof(t), "%s S 40000010,8\n%s%s", MMAP_4M, MPROTECT_FIRST_PAGE_R, tails[i]);
		run(t, "os.kernel=6.18", NULL);
		ck_assert_uint_eq(S->st.thp_split_pmd, 1);
		ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
		ck_assert_uint_eq(S->k.thp.nr_deferred, 0);
		ck_assert_uint_eq(S->st.rss_bytes, 0);
		done();
		run(t, "os.kernel=6.6", NULL);
		ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
		done();
	}
}
END_TEST

/*
 * MADV_DONTNEED over two VMAs: page 0 in [0, 80K), page 39 in [80K, 160K) (an
 * mprotect(PROT_READ) of [80K, 1M) after the stores splits the VMA and flushes
 * page 39: 1 INVLPG). From 6.16 ("mm/madvise: batch tlb flushes for
 * MADV_DONTNEED[_LOCKED]") one mmu_gather spans both VMAs: pages 0 to 39, 40 >
 * 33 strides, a full flush (1); the witness page loses its translation and
 * walks again. Before it (6.12 and older), zap_page_range_single() per VMA:
 * each gather holds one page, 1 INVLPG each (2), and the witness keeps its
 * translation. tlb_invalidations: 6.18 1 + 1 = 2 (before 2), 6.12 1 + 2 = 3
 * (before 2); walks: 6.18 4 (3 faults + the witness), 6.12 3 (before 4).
 */
START_TEST(madv_dontneed_gather_per_vma_before_6_16)
{
	const char *t = MMAP_1M SC(9, "sys_mmap ( 0x50000000, 65536, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x50000000)")
		" S 50000000,8\n S 40000000,8\n S 40027000,8\n"
		SC(10, "sys_mprotect ( 0x40014000, 966656, 1 )[sync] --> Success(0x0)")
		SC(28, "sys_madvise ( 0x40000000, 163840, 4 ) --> [pre-success] Success(0x0)")
		" L 50000000,8\n";

	run(t, "os.thp.enabled=never", "os.kernel=6.18", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 2);
	ck_assert_uint_eq(S->st.walks, 4);
	walks_are_stlb_misses();
	done();
	run(t, "os.thp.enabled=never", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 3);
	ck_assert_uint_eq(S->st.walks, 3);
	walks_are_stlb_misses();
	done();
}
END_TEST

/*
 * mremap of part of a VMA (mm/mremap.c): move_page_tables() moves the PTEs of
 * [0, 32K) of a 1 MiB VMA to 0x60000000 (MREMAP_MAYMOVE | MREMAP_FIXED) and
 * move_ptes() flushes the 8 present pages (8 INVLPGs); the munmap of the old
 * range then clears nothing and frees no table: free_pgtables() frees only
 * tables wholly between the neighbouring VMAs, and the rest of the VMA,
 * [32K, 1M), still covers the PT table (its ceiling is 0x40008000), so no
 * freed_tables flush. The witness keeps its translation.
 * tlb_invalidations before 9 (the table freed, one more INVLPG), after 8;
 * nr_page_table_pages before 5 (freed), after 6; a later store to the rest of
 * the VMA finds its table (before: allocated again, 6 both). munmap of the same
 * part keeps the table too (nr_page_table_pages before 4, after 5; 8 INVLPGs
 * both).
 */
#define MMAP_WITNESS SC(9, "sys_mmap ( 0x50000000, 65536, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x50000000)")
#define STORE8 STORE4 " S 40004000,8\n S 40005000,8\n S 40006000,8\n S 40007000,8\n"
START_TEST(mremap_part_keeps_shared_table)
{
	run(MMAP_WITNESS MMAP_1M " S 50000000,8\n" STORE8
	    SC(25, "sys_mremap ( 0x40000000, 32768, 32768, 0x3, 0x60000000 ) --> [pre-success] Success(0x60000000)")
	    " L 50000000,8\n L 60000000,8\n", "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.pgfault, 9);
	ck_assert_uint_eq(S->st.tlb_invalidations, 8);
	ck_assert_uint_eq(S->st.nr_page_table_pages, 6);
	ck_assert_uint_eq(S->st.walks, 10);
	walks_are_stlb_misses();
	done();
	run(MMAP_WITNESS MMAP_1M " S 50000000,8\n" STORE8
	    SC(11, "sys_munmap ( 0x40000000, 32768 )[sync] --> Success(0x0)"), "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 8);
	ck_assert_uint_eq(S->st.nr_page_table_pages, 5);
	done();
	/* the whole VMA moved: its table goes with the munmap of the old range (1 more) */
	run(MMAP_WITNESS SC(9, "sys_mmap ( 0x40000000, 32768, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)")
	    " S 50000000,8\n" STORE8
	    SC(25, "sys_mremap ( 0x40000000, 32768, 32768, 0x3, 0x60000000 ) --> [pre-success] Success(0x60000000)"),
	    "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.tlb_invalidations, 9);
	ck_assert_uint_eq(S->st.nr_page_table_pages, 5);
	done();
}
END_TEST

/*
 * MAP_HUGETLB's page size (mm/mmap.c ksys_mmap_pgoff() -> hugetlb_file_setup(),
 * hstate_sizelog()): the MAP_HUGE_* bits (log2 in bits 26-31), the default
 * hstate without them: 2 MiB on x86-64 unless default_hugepagesz=1G
 * (os.hugetlbfs.default_size). A 1 GiB-aligned GiB mapped with pools of two 2M
 * pages and one 1G page, and two stores, one in each of its first two 2 MiB:
 *  - no size bits: two 2 MiB pages (nr_hugetlb_pages 2, _1g 0; before: one 1G
 *    page, 1 and 0 the other way round);
 *  - no size bits, os.hugetlbfs.default_size 1G: the 1G page (one fault);
 *  - MAP_HUGE_2MB with default 1G: 2 MiB pages (before: the 1G page);
 *  - MAP_HUGE_1GB: the 1G page (before too).
 */
#define HUGETLB_GIB(flags) SC(9, "sys_mmap ( 0x0, 1073741824, 3, " flags ", 4294967295, 0 ) --> [pre-success] Success(0x40000000)") \
	" S 40000000,8\n S 40200000,8\n"
START_TEST(map_hugetlb_page_size)
{
	run(HUGETLB_GIB("262178"), "os.memory=3G", "os.hugetlbfs.pages=2", "os.hugetlbfs.pages_1g=1", NULL);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 2);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages_1g, 0);
	ck_assert_uint_eq(S->st.pgfault, 2);
	done();
	run(HUGETLB_GIB("262178"), "os.memory=3G", "os.hugetlbfs.pages=2", "os.hugetlbfs.pages_1g=1",
	    "os.hugetlbfs.default_size=1G", NULL);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 0);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages_1g, 1);
	ck_assert_uint_eq(S->st.pgfault, 1);
	done();
	/* 1409548322 = 0x54040022: MAP_HUGE_2MB (21 << 26) | MAP_HUGETLB | MAP_ANONYMOUS | MAP_PRIVATE */
	run(HUGETLB_GIB("1409548322"), "os.memory=3G", "os.hugetlbfs.pages=2", "os.hugetlbfs.pages_1g=1",
	    "os.hugetlbfs.default_size=1G", NULL);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 2);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages_1g, 0);
	done();
	/* 2013528098 = 0x78040022: MAP_HUGE_1GB (30 << 26) | ... */
	run(HUGETLB_GIB("2013528098"), "os.memory=3G", "os.hugetlbfs.pages=2", "os.hugetlbfs.pages_1g=1", NULL);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 0);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages_1g, 1);
	done();
	/* os.mode hugetlbfs backs private anonymous memory with the default size too */
	run(SC(9, "sys_mmap ( 0x0, 1073741824, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)")
	    " S 40000000,8\n", "os.memory=3G", "os.mode=hugetlbfs", "os.hugetlbfs.pages_1g=1", NULL);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 1);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages_1g, 0);
	done();
}
END_TEST

/* A MAP_HUGETLB size x86-64 has no hstate for (4 MiB: 22 << 26) cannot have succeeded: a trace error. */
START_TEST(map_hugetlb_bad_size)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	c.memory = 256ULL << 20;
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
	/* 1476657186 = 0x58040022: 22 << 26 | MAP_HUGETLB | MAP_ANONYMOUS | MAP_PRIVATE */
	ck_assert_int_eq(replay_trace(S, SC(9, "sys_mmap ( 0x0, 4194304, 3, 1476657186, 4294967295, 0 ) --> [pre-success] Success(0x40000000)"), &e), -1);
	ck_assert_uint_eq(e.line, 1);
	ck_assert_msg(strstr(e.msg, "mmap with MAP_HUGETLB of 2^22-byte pages succeeded (x86-64 has 2 MiB and 1 GiB pages only)") != NULL, "%s", e.msg);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("flushes");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wp_page_reuse_does_not_flush);
	tcase_add_test(tc, mprotect_unchanged_pte_not_flushed);
	tcase_add_test(tc, prot_none_and_back);
	tcase_add_test(tc, mprotect_exec_flips_nx);
	tcase_add_test(tc, dirty_shared_pte_made_writable);
	tcase_add_test(tc, rmap_batch_stops_at_vma);
	tcase_add_test(tc, madv_dontneed_gather_per_vma_before_6_16);
	tcase_add_test(tc, mremap_part_keeps_shared_table);
	tcase_add_test(tc, map_hugetlb_page_size);
	tcase_add_test(tc, map_hugetlb_bad_size);
	suite_add_tcase(s, tc);
	return check_run(s);
}
