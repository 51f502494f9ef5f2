/*
 * check_rofs.c - CONFIG_READ_ONLY_THP_FOR_FS (os.thp.read_only_thp_for_fs):
 * khugepaged and MADV_COLLAPSE collapsing read-only file text into file THPs,
 * after mm/khugepaged.c hpage_collapse_scan_file(), collapse_file(),
 * retract_page_tables(), collapse_pte_mapped_thp() and mm/memory.c do_set_pmd():
 *  - the switch off (the default): a file VMA is never registered nor scanned;
 *  - on, with enabled=always: a 4 MiB read-only private mapping at a 2 MiB
 *    aligned address with pgoff 0 is registered at mmap (__mmap_new_vma()),
 *    khugepaged collapses each 2M of its cache (the old pages unmapped, one
 *    full flush, the PT tables retracted, one full flush each), the next read of
 *    each 2M maps one read-only PMD (thp_file_mapped) and the rest hit 2M TLB
 *    entries;
 *  - not where the kernel would not: start - pgoff not 2 MiB aligned
 *    (thp_vma_suitable_order()), a writable mapping (file_thp_enabled(): the
 *    model's stand-in for a file open for write);
 *  - MADV_COLLAPSE collapses and maps the PMD at once
 *    (collapse_pte_mapped_thp(install_pmd)), whatever os.thp.enabled says;
 *  - a store to the PMD-mapped file THP splits it (the PMD cleared, thp_split_pmd)
 *    and copies the page (do_cow_fault()); a partial munmap splits it, mremap to
 *    an aligned place moves the PMD, MADV_DONTNEED and munmap zap it, and the
 *    THP stays cached through all of them.
 * Every invariant is checked after every record (check_common.h), and again
 * after each direct khugepaged pass or access here.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>

#include "check_common.h"
#include "check_run.h"
#include "khugepaged.h"
#include "mmap.h"

#define ROFS "os.thp.read_only_thp_for_fs=true"
/* The disk reads ahead 8 MiB (read_ahead_kb 8192, as this project's build
 * machine's): the first fault reads the whole 4 MiB in, order-0 pages with no
 * PG_readahead mark among them, so each 64 KiB fault-around window takes one
 * fault and collapse_file() finds small folios. (With the default 128 KiB, async
 * readahead makes large folios as the read goes on: check_filemap.c.) */
#define RA "os.read_ahead_kb=8192"

/* mmap(NULL, 4 MiB, @prot, MAP_PRIVATE, fd 3, @off) at 0x40000000, a load per
 * page, then @tail. */
static char *file_4m(unsigned prot, unsigned long off, const char *tail)
{
	size_t cap = 1 << 20, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, %u, 2, 3, %lu ) --> [pre-success] Success(0x40000000)\n",
			      prot, off);
	for (unsigned long a = 0; a < 4u << 20; a += 4096)
		n += (size_t)snprintf(t + n, cap - n, " L %lx,8\n", 0x40000010UL + a);
	snprintf(t + n, cap - n, "%s", tail);
	return t;
}

static uint64_t dtlb_misses(void)
{
	uint64_t n = 0;

	for (int ps = 0; ps < PS_NR; ps++)
		n += S->mmu.st.l1[SIDE_D].misses[ps];
	return n;
}

/*
 * The 4 MiB read twice: 64 faults the first time (one per 64 KiB fault-around
 * window), none the second. With the switch off nothing registers the mm, so
 * khugepaged never runs and a pass run by hand skips the file VMA.
 */
START_TEST(switch_off_nothing)
{
	char *t = file_4m(1, 0, "");

	run(t, "os.thp.enabled=always", RA, NULL);
	free(t);
	ck_assert(!S->k.thp.mm_registered);
	ck_assert_uint_eq(S->st.pgfault, 64);
	ck_assert_uint_eq(S->st.nr_file_pages, 1024);
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 0);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	done();
}
END_TEST

/*
 * Switch on, enabled=always. The mmap registers the mm and khugepaged's first
 * pass runs at once, before any page is cached: both ranges fail
 * hpage_collapse_scan_file()'s max_ptes_none test (0 cached < 512 - 511), 2
 * thp_scan_exceed_none_pte, one full scan. The reads fault 64 times and cache
 * all 1024 pages. A pass then collapses both ranges: 2 order-9 allocations, 2
 * pages_collapsed; each collapse unmaps its 512 PTEs (one full flush,
 * try_to_unmap_flush()) and retracts the PT table (one full flush,
 * pmdp_collapse_flush()): 4 invalidations, 2 page-table pages fewer. The cache
 * keeps 1024 pages, now 2 file THPs, mapped nowhere. khugepaged's CPU: 2 ranges
 * scanned (512 x compact_scan each) and 1024 pages copied.
 */
START_TEST(khugepaged_collapses_text)
{
	char *t = file_4m(1, 0, "");
	uint64_t tables, inval, walks, faults, dmiss;
	cycles_t kh;

	run(t, "os.thp.enabled=always", ROFS, RA, NULL);
	free(t);
	ck_assert(S->k.thp.mm_registered);
	ck_assert_uint_eq(S->st.thp_scan_exceed_none_pte, 2);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	ck_assert_uint_eq(S->st.cyc_khugepaged, 2 * HPAGE_PMD_NR * S->cfg.cost.compact_scan);
	ck_assert_uint_eq(S->st.pgfault, 64);
	ck_assert_uint_eq(S->st.nr_file_pages, 1024);
	ck_assert_uint_eq(S->st.nr_mapped, 1024);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);

	tables = S->st.nr_page_table_pages;
	inval = S->st.tlb_invalidations;
	kh = S->st.cyc_khugepaged;
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.thp_collapse_alloc_failed, 0);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 2);
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 2);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 1024); /* replaced, not added */
	ck_assert_uint_eq(S->st.nr_mapped, 0);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 0);
	ck_assert_uint_eq(S->st.tlb_invalidations, inval + 4);
	ck_assert_uint_eq(S->st.nr_page_table_pages, tables - 2);
	ck_assert_uint_eq(S->st.cyc_khugepaged - kh, 2 * HPAGE_PMD_NR * S->cfg.cost.compact_scan +
						     1024 * S->cfg.cost.copy_page);
	ck_assert(pt_slot_empty(&S->k.mm->pt, 0x40000000, PS_2M));
	ck_assert(pt_slot_empty(&S->k.mm->pt, 0x40200000, PS_2M));

	/* the next read of each 2M maps the THP with one PMD (do_set_pmd()); the
	 * other 1022 pages hit the 2M dTLB entry: 2 faults, 2 walks (each faults the
	 * PMD in and fills a 2M entry), 2 dTLB misses */
	faults = S->st.pgfault;
	walks = S->mmu.st.walks;
	dmiss = dtlb_misses();
	touch(0x40000000, 0x40400000, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault - faults, 2);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 2);
	ck_assert_uint_eq(S->st.nr_mapped, 1024);
	ck_assert_uint_eq(S->k.mm->pt.nr_leaves[PS_2M], 2);
	ck_assert_uint_eq(S->k.mm->pt.nr_leaves[PS_4K], 0);
	ck_assert_uint_eq(S->mmu.st.walks - walks, 2);
	ck_assert_uint_eq(dtlb_misses() - dmiss, 2);
	ck_assert_uint_eq(S->mmu.st.l1[SIDE_D].misses[PS_2M], 2); /* counted by the page they filled */
	ck_assert_uint_eq(S->mmu.st.l1[SIDE_D].hits[PS_2M], 1022);

	/* khugepaged's next visits find the THP PMD-mapped: collapse_pte_mapped_thp()
	 * says SCAN_PMD_MAPPED, which khugepaged_scan_mm_slot() counts as a success
	 * (pages_collapsed + 2 per pass, as the kernel does), no new allocation */
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 4);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);

	/* mprotect(PROT_READ | PROT_WRITE) keeps the PMDs read-only (no flags change
	 * on them: change_huge_pmd() would not make a file THP writable either); a
	 * store then splits the PMD (cleared, thp_split_pmd) and copies the page
	 * (do_cow_fault()), one fault; the rest of that 2M refaults by PTE */
	ck_assert_int_eq(sim_event(S, &(struct os_event){ .kind = EV_MPROTECT, .addr = 0x40000000,
							  .len = 4u << 20, .prot = 3 }), 0);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->k.mm->pt.nr_leaves[PS_2M], 2);
	faults = S->st.pgfault;
	touch(0x40000000, 0x40001000, R_STORE);
	ck_assert_uint_eq(S->st.pgfault - faults, 1);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->st.nr_mapped, 512);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 2); /* still cached whole */
	done();
}
END_TEST

/*
 * Where the kernel would not collapse: pgoff 1 page at a 2M-aligned address
 * (start - pgoff not 2M aligned: thp_vma_suitable_order() fails, no registration,
 * MADV_COLLAPSE EINVAL), and a writable private mapping (file_thp_enabled()).
 */
START_TEST(not_where_the_kernel_would_not)
{
	char *t = file_4m(1, 4096, "");

	run(t, "os.thp.enabled=always", ROFS, RA, NULL);
	free(t);
	ck_assert(!S->k.thp.mm_registered);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, 0x40000000, false), SCAN_VMA_CHECK);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 0);
	done();

	t = file_4m(3, 0, "");
	run(t, "os.thp.enabled=always", ROFS, RA, NULL);
	free(t);
	ck_assert(!S->k.thp.mm_registered);
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), -EINVAL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 0);
	done();
}
END_TEST

/*
 * MADV_COLLAPSE of the read 4 MiB with enabled=never (ignored by it; khugepaged
 * never registers): both ranges collapse and are PMD-mapped at once
 * (collapse_pte_mapped_thp() with install_pmd), the copies on the caller's
 * cycles, not khugepaged's pages_collapsed; a second read takes no fault. Only
 * 32 pages cached before (one fault's read-around): collapse_file() reads the
 * other 992 (page_cache_sync_readahead()).
 */
START_TEST(madv_collapse_maps_pmd)
{
	char *t = file_4m(1, 0, "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 4194304, 25 ) --> [pre-success] Success(0x0)\n");
	uint64_t faults, walks;

	run(t, "os.thp.enabled=never", ROFS, RA, NULL);
	free(t);
	ck_assert(!S->k.thp.mm_registered);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 0);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 2);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 2);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);
	ck_assert_uint_eq(S->st.cyc_khugepaged, 0);
	faults = S->st.pgfault;
	walks = S->mmu.st.walks;
	touch(0x40000000, 0x40400000, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault, faults);
	ck_assert_uint_eq(S->mmu.st.walks - walks, 2); /* one per 2M leaf */
	/* again: both ranges SCAN_PMD_MAPPED, which MADV_COLLAPSE counts as done */
	ck_assert_int_eq(khugepaged_madvise_collapse(&S->k, 0x40000000, 0x40400000), 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	done();

	/* only the first page read before the collapse */
	t = malloc(4096);
	snprintf(t, 4096,
		 "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 1, 2, 3, 0 ) --> [pre-success] Success(0x40000000)\n"
		 " L 40000010,8\n"
		 "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 4194304, 25 ) --> [pre-success] Success(0x0)\n"
		 "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 4194304 ) --> [pre-success] Success(0x0)\n");
	run(t, "os.thp.enabled=never", ROFS, RA, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 1024);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 2);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 0);
	ck_assert_uint_eq(S->st.nr_mapped, 0);
	/* the caller's cycles: the fault, the 1024 copies and 3 flushes (the 16
	 * fault-around PTEs unmapped, the first range's PT table retracted, munmap's
	 * gather of the 2 PMDs; the second range had no PT table to retract) */
	ck_assert_uint_eq(S->st.cyc_fault, 1 * S->cfg.cost.fault + 1024 * S->cfg.cost.copy_page +
					       3 * S->cfg.cost.flush);
	done();
}
END_TEST

/*
 * The PMD-mapped file THPs under munmap, mremap and MADV_DONTNEED (after
 * MADV_COLLAPSE mapped both): unmapping the first page splits the first PMD
 * (cleared: thp_split_pmd; the THP stays cached) and the VMA, now from file page
 * 1, cannot map it by PMD any more (its first 2M block begins before the VMA),
 * so a read maps 16 PTEs by fault-around (do_fault_around(): from the VMA's
 * first PTE, 16 on). The second 2M, moved whole to an
 * aligned place, keeps its PMD (move_huge_pmd(): no fault); MADV_DONTNEED zaps
 * it and the next read maps it again by PMD.
 */
START_TEST(zap_split_and_move)
{
	char *t = file_4m(1, 0, "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 4194304, 25 ) --> [pre-success] Success(0x0)\n");
	uint64_t faults;

	run(t, "os.thp.enabled=never", ROFS, RA, NULL);
	free(t);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);
	faults = S->st.pgfault;

	event((struct os_event){ .kind = EV_MUNMAP, .addr = 0x40000000, .len = 4096 });
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 1);
	ck_assert_uint_eq(S->st.nr_mapped, 512);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 2);
	touch(0x40002000, 0x40003000, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault - faults, 1);
	ck_assert_uint_eq(S->k.mm->pt.nr_leaves[PS_4K], 16);
	ck_assert_uint_eq(S->st.nr_mapped, 512 + 16);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);

	event((struct os_event){ .kind = EV_MREMAP, .addr = 0x40200000, .len = 2u << 20,
				 .new_len = 2u << 20, .flags = 3, .new_addr = 0x60000000 });
	ck_assert_uint_eq(vma_find(&S->k.mm->vmas, 0x60000000)->pgoff, 512);
	touch(0x60000000, 0x60200000, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault - faults, 1);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 1);

	event((struct os_event){ .kind = EV_MADVISE, .addr = 0x60000000, .len = 2u << 20,
				 .advice = MADV_DONTNEED_ });
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 0);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	touch(0x60000000, 0x60200000, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault - faults, 2);
	ck_assert_uint_eq(S->st.thp_file_mapped, 3);
	ck_assert_uint_eq(S->st.nr_file_pmdmapped, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 1024);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rofs");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, switch_off_nothing);
	tcase_add_test(tc, khugepaged_collapses_text);
	tcase_add_test(tc, not_where_the_kernel_would_not);
	tcase_add_test(tc, madv_collapse_maps_pmd);
	tcase_add_test(tc, zap_split_and_move);
	suite_add_tcase(s, tc);
	return check_run(s);
}
