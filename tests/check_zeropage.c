/*
 * check_zeropage.c - the 4 KiB zero page (mm/memory.c do_anonymous_page(),
 * do_wp_page() / wp_page_copy()): a read fault in private anonymous memory maps
 * it read-only and is no page of the process; the first store is a second minor
 * fault that allocates, clears and flushes; a read-modify-write faults once, as a
 * write; os.zero_page false (mm_forbids_zeropage()) allocates at the read and
 * forbids the huge zero page too; implicit, file and shared mappings never use
 * it; THP maps the huge zero page where it may and the 4 KiB one where it falls
 * back; khugepaged counts zero PTEs as none (max_ptes_none) and frees them in a
 * collapse; mprotect, MADV_DONTNEED and mremap keep them consistent. Lackey
 * scenarios on the kernel-model fixture (check_common.h: every invariant after
 * every record).
 */
#include <check.h>
#include <stdio.h>

#include "check_common.h"
#include "check_run.h"
#include "khugepaged.h"

#define MMAP_1M "SYSCALL[7,1](9) sys_mmap ( 0x0, 1048576, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"

/* What the PTE of @va maps, and whether it is writable (it must be present and 4K). */
static pfn_t pte_of(vaddr_t va, bool *rw)
{
	enum page_size ps;
	pfn_t pfn;
	uint64_t e;

	ck_assert(pt_lookup(&S->k.mm->pt, va, &ps, &pfn, &e));
	ck_assert_int_eq(ps, PS_4K);
	*rw = e & PTE_RW;
	return pfn;
}

static bool anon_vma(vaddr_t va)
{
	struct vma *v = vma_find(&S->k.mm->vmas, va);

	ck_assert_ptr_nonnull(v);
	return v->flags & VM_ANON_VMA;
}

/* The read fault maps the zero page: a minor fault, no page, no clear, no flush. */
START_TEST(read_maps_zero_page)
{
	bool rw;

	run(MMAP_4M " L 40000010,8\n L 40001000,8\n L 40000020,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.walks, 2);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->st.rss_bytes, 0);
	ck_assert_uint_eq(S->st.tlb_invalidations, 0);
	ck_assert_uint_eq(S->st.cyc_fault, 2 * S->cfg.cost.fault); /* nothing cleared */
	ck_assert_uint_eq(pte_of(0x40000000, &rw), S->k.thp.zero_pfn);
	ck_assert(!rw);
	ck_assert_uint_eq(pte_of(0x40001000, &rw), S->k.thp.zero_pfn);
	ck_assert(!anon_vma(0x40000000)); /* no page of its own: no anon_vma yet */
	ck_assert_uint_eq(S->k.rmap[S->k.thp.zero_pfn], 0);
	done();
}
END_TEST

/* The first store: a write-protect fault that allocates, clears and flushes the page. */
START_TEST(store_breaks_cow)
{
	bool rw;
	pfn_t pfn;

	run(MMAP_4M " L 40000010,8\n S 40000018,8\n S 40000020,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2); /* two minor faults */
	ck_assert_uint_eq(S->st.pgmajfault, 0);
	ck_assert_uint_eq(S->st.walks, 2);   /* the flushed translation is walked again */
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->st.rss_bytes, 4096);
	ck_assert_uint_eq(S->st.cyc_fault,
			  2 * S->cfg.cost.fault + S->cfg.cost.clear_page + S->cfg.cost.flush);
	pfn = pte_of(0x40000000, &rw);
	ck_assert_uint_ne(pfn, S->k.thp.zero_pfn);
	ck_assert(rw);
	ck_assert_uint_eq(S->k.rmap[pfn], 0x40000000 + 1);
	ck_assert(anon_vma(0x40000000));
	done();

	/* a store first: one fault, as before */
	run(MMAP_4M " S 40000018,8\n L 40000010,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.walks, 1);
	ck_assert_uint_eq(S->st.tlb_invalidations, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
}
END_TEST

/* A read-modify-write faults once, as a write (x86 checks it as a write). */
START_TEST(modify_faults_as_write)
{
	run(MMAP_4M " M 40000010,8\n M 40000ffc,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);   /* the second M crosses into the next page */
	ck_assert_uint_eq(S->st.walks, 2);
	ck_assert_uint_eq(S->st.tlb_invalidations, 0);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();

	/* a modify of a page read before: the write-protect fault, once */
	run(MMAP_4M " L 40000010,8\n M 40000010,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
}
END_TEST

/* os.zero_page false: mm_forbids_zeropage(), every fault allocates. */
START_TEST(zero_page_off)
{
	bool rw;

	run(MMAP_4M " L 40000010,8\n S 40000018,8\n", "os.mode=base", "os.zero_page=false", NULL);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.walks, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.cyc_fault, S->cfg.cost.fault + S->cfg.cost.clear_page);
	ck_assert_uint_ne(pte_of(0x40000000, &rw), S->k.thp.zero_pfn);
	ck_assert(rw);
	ck_assert(anon_vma(0x40000000));
	done();

	/* THP: a read fault allocates a huge page rather than map the huge zero page */
	run(MMAP_4M " L 40000010,8\n", "os.zero_page=false", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 0);
	ck_assert_uint_eq(S->k.thp.nr_zero_pmds, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
}
END_TEST

/* Only private anonymous memory maps it: not implicit, file or shared mappings. */
START_TEST(which_mappings)
{
	/* the brk heap is anonymous */
	run("SYSCALL[7,1](12) sys_brk ( 0x0 ) --> [pre-success] Success(0x4035000)\n"
	    "SYSCALL[7,1](12) sys_brk ( 0x4056000 ) --> [pre-success] Success(0x4056000)\n"
	    " L 04035010,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();
	/* an implicit VMA (the program's image, mostly) */
	run(" L 04035010,8\nI  04001000,4\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
	/* a private file mapping (fd 4) and a shared anonymous one */
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 8192, 1, 2, 4, 0 ) --> [pre-success] Success(0x40000000)\n"
	    "SYSCALL[7,1](9) sys_mmap ( 0x0, 8192, 3, 33, 4294967295, 0 ) --> [pre-success] Success(0x50000000)\n"
	    " L 40000010,8\n L 50000010,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	/* the file page is a page-cache page now (filemap.c; was anonymous: 2), and
	 * read-around brought in both of the mapping's pages */
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 2);
	ck_assert(vma_find(&S->k.mm->vmas, 0x40000000)->flags & VM_FILE);
	ck_assert(!(vma_find(&S->k.mm->vmas, 0x50000000)->flags & VM_FILE));
	done();
	/* hugetlbfs mode: the 4K fallback of a private anonymous VMA is anonymous memory */
	run(MMAP_1M " L 40000010,8\n", "os.mode=hugetlbfs", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 0);
	done();
}
END_TEST

/* THP: the huge zero page where a huge page may go, the 4K one where it falls back. */
START_TEST(thp_and_zero_pages)
{
	/* an eligible range: the huge zero PMD (and the VMA's anon_vma, prepared first) */
	run(MMAP_4M " L 40000010,8\n", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_pmds, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 1);
	ck_assert(anon_vma(0x40000000));
	done();
	/* a machine where the huge zero page already exists (os.thp.huge_zero_allocated,
	 * as config host reads it): mapped, not counted; taken at boot, 2 MiB less free */
	{
		unsigned long long free0;

		run("", NULL);
		free0 = S->k.buddy.nr_free_pages;
		done();
		run(MMAP_4M " L 40000010,8\n L 40200010,8\n", "os.thp.huge_zero_allocated=true", NULL);
		ck_assert_uint_eq(S->k.thp.nr_zero_pmds, 2);
		ck_assert_uint_eq(S->st.thp_zero_page_alloc, 0);
		ck_assert_uint_eq(S->st.thp_zero_page_alloc_failed, 0);
		done();
		run("", "os.thp.huge_zero_allocated=true", NULL);
		ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0 - HPAGE_PMD_NR);
		done();
		/* with the zero pages refused it is not there to take (mm_forbids_zeropage()) */
		run("", "os.thp.huge_zero_allocated=true", "os.zero_page=false", NULL);
		ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0);
		done();
	}
	/* THP never, a VMA too small for 2M, MADV_NOHUGEPAGE: the 4K zero page */
	run(MMAP_4M " L 40000010,8\n", "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_pmds, 0);
	done();
	run(MMAP_1M " L 40000010,8\n", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	ck_assert(!anon_vma(0x40000000));
	done();
	run(MMAP_4M "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 4194304, 15 ) --> [pre-success] Success(0x0)\n"
	    " L 40000010,8\n", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	done();
	/* use_zero_page off and no huge page to be had: thp_fault_fallback, then the 4K one */
	run(MMAP_4M " L 40000010,8\n", "os.thp.use_zero_page=false", "os.fragmentation.unmovable=1",
	    NULL);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 1);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();
	/* a store to the huge zero PMD: split into zero PTEs, one broken (up to 6.12;
	 * 6.13+ maps a fresh THP: check_versions huge_zero_wp) */
	run(MMAP_4M " L 40000010,8\n S 40001000,8\n", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, HPAGE_PMD_NR - 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
}
END_TEST

/* 100 zero-page reads and 2 stores in the first 2M range, MADV_HUGEPAGE'd. */
static char *zero_and_stores(void)
{
	static char buf[8192];
	size_t n = 0;

	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", MMAP_4M);
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " L %x,8\n", 0x40010000 + i * 0x1000);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, " S 40000010,8\n S 40001010,8\n");
	return buf;
}

/* khugepaged: a zero PTE counts as none (hpage_collapse_scan_pmd(): is_zero_pfn()). */
START_TEST(khugepaged_counts_zero_as_none)
{
	cycles_t before;

	/* 2 pages and 510 none-or-zero (100 of them zero): over max_ptes_none 509 */
	run(zero_and_stores(), "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=509", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 100);
	ck_assert_int_eq(vma_change_flags(&S->k.mm->vmas, 0x40000000, 0x40400000, VM_HUGEPAGE, 0), 0);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_EXCEED_NONE_PTE);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 1);
	done();
	/* max_ptes_none 510 allows it: the zero PTEs go, the range is cleared around 2 copies */
	run(zero_and_stores(), "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=510", NULL);
	ck_assert_int_eq(vma_change_flags(&S->k.mm->vmas, 0x40000000, 0x40400000, VM_HUGEPAGE, 0), 0);
	before = S->st.cyc_khugepaged;
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_SUCCEED);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.cyc_khugepaged - before,
			  2 * S->cfg.cost.copy_page + 510 * S->cfg.cost.clear_page);
	done();
	/* zero PTEs alone: 512 none-or-zero exceed even max_ptes_none 511; MADV_COLLAPSE,
	 * without the limit, finds nothing writable: SCAN_PAGE_RO before 6.18 */
	run(MMAP_4M " S 40000010,8\n L 40200010,8\n L 40201010,8\n", "os.thp.enabled=madvise",
	    "os.kernel=6.12", NULL);
	ck_assert_int_eq(vma_change_flags(&S->k.mm->vmas, 0x40000000, 0x40400000, VM_HUGEPAGE, 0), 0);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40200000, false), SCAN_EXCEED_NONE_PTE);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40200000, true), SCAN_PAGE_RO);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 2);
	done();
	/* 6.18 wants no writable PTE ("mm: enable khugepaged to operate on non-writable
	 * VMAs"): MADV_COLLAPSE makes a cleared THP of them */
	run(MMAP_4M " S 40000010,8\n L 40200010,8\n L 40201010,8\n", "os.thp.enabled=madvise", NULL);
	ck_assert_int_eq(vma_change_flags(&S->k.mm->vmas, 0x40000000, 0x40400000, VM_HUGEPAGE, 0), 0);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40200000, false), SCAN_EXCEED_NONE_PTE);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40200000, true), SCAN_SUCCEED);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	done();
}
END_TEST

/* mprotect, MADV_DONTNEED and mremap over zero PTEs. */
START_TEST(mapping_changes)
{
	bool rw;

	/* read-only and back: the zero PTE stays read-only; the store still breaks COW */
	run(MMAP_4M " L 40000010,8\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4194304, 1 )[sync] --> Success(0x0)\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4194304, 3 )[sync] --> Success(0x0)\n"
	    " S 40000010,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_ne(pte_of(0x40000000, &rw), S->k.thp.zero_pfn);
	ck_assert(rw);
	done();
	/* MADV_DONTNEED drops zero PTEs like pages; a read after it maps the zero page again */
	run(MMAP_4M " L 40000010,8\n L 40001010,8\n S 40002010,8\n"
	    "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 8192, 4 ) --> [pre-success] Success(0x0)\n",
	    "os.mode=base", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
	/* mremap moves zero PTEs without giving the zero page a reverse map */
	run(MMAP_1M " L 40000010,8\n S 40001010,8\n"
	    "SYSCALL[7,1](25) sys_mremap ( 0x40000000, 1048576, 2097152, 0x1 ) --> [pre-success] Success(0x50000000)\n"
	    " L 50000010,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(pte_of(0x50000000, &rw), S->k.thp.zero_pfn);
	ck_assert_uint_eq(S->k.rmap[S->k.thp.zero_pfn], 0);
	ck_assert_uint_eq(S->st.pgfault, 2); /* the moved zero PTE is still mapped */
	done();
}
END_TEST

/* Memory pressure with zero pages mapped: they are nobody's, reclaim leaves them be. */
START_TEST(reclaim_leaves_zero_pages)
{
	static char buf[1 << 20];
	size_t n = 0;

	/* 64 MiB of memory, a 32 MiB region read (zero pages), then 96 MiB written */
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, 33554432, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, 100663296, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n");
	for (unsigned i = 0; i < 8192; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " L %x,8\n", 0x40000000 + i * 0x1000);
	for (unsigned i = 0; i < 24576; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " S %x,8\n", 0x80000000 + i * 0x1000);
	ck_assert_uint_lt(n, sizeof(buf) - 1);
	check_every = 4096;
	run(buf, "os.mode=base", "os.memory=64M", NULL);
	check_every = 1;
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 8192);
	ck_assert_uint_gt(S->st.pswpout, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages + S->k.mm->pt.nr_swap, 24576);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("zeropage");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, read_maps_zero_page);
	tcase_add_test(tc, store_breaks_cow);
	tcase_add_test(tc, modify_faults_as_write);
	tcase_add_test(tc, zero_page_off);
	tcase_add_test(tc, which_mappings);
	tcase_add_test(tc, thp_and_zero_pages);
	tcase_add_test(tc, khugepaged_counts_zero_as_none);
	tcase_add_test(tc, mapping_changes);
	tcase_add_test(tc, reclaim_leaves_zero_pages);
	suite_add_tcase(s, tc);
	return check_run(s);
}
