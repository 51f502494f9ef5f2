/*
 * check_madvise.c - the advice that acts on pages (madvise.c) and the advice
 * that steers the page cache (filemap.c), scenario by scenario, each named
 * after the Linux 6.18 function it follows: MADV_FREE of a whole and of part of
 * a THP (madvise_free_huge_pmd()) and of 4 KiB pages (madvise_free_pte_range(),
 * folio_mark_lazyfree()), lazy-free pages discarded by MADV_PAGEOUT and by
 * kswapd without swap (try_to_unmap_one(), shrink_folio_list(): pglazyfreed),
 * re-dirtied ones kept; MADV_COLD (folio_deactivate()) and MADV_PAGEOUT with
 * and without swap (madvise_cold_or_pageout_pte_range(), reclaim_pages());
 * MADV_RANDOM and MADV_SEQUENTIAL under a cold page cache
 * (do_sync_mmap_readahead()) and the major faults of filemap_fault(). Every
 * invariant is checked after each record and each direct call.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "lru.h"
#include "mmap.h"
#include "reclaim.h"

#define BASE 0x40000000UL

/* The madvise system call on [@addr, +@len) with @advice, replayed now. */
static void advise(vaddr_t addr, uint64_t len, uint32_t advice)
{
	struct os_event ev = { .kind = EV_MADVISE, .addr = addr, .len = len, .advice = advice };

	ck_assert_int_eq(sim_event(S, &ev), 0);
	sim_check_invariants(S);
}

/* 4 MiB of private anonymous memory at BASE, MADV_HUGEPAGE'd with @huge, stored to. */
static void anon_4m(bool huge, const char *set1, const char *set2)
{
	char t[512];

	snprintf(t, sizeof(t), "%s%s", MMAP_4M, huge ? MADV_HUGE_4M : "");
	run(t, "os.thp.enabled=madvise", set1, set2, NULL);
	touch(BASE, BASE + (4 << 20), R_STORE);
}

static uint64_t rss_pages(void)
{
	return S->st.nr_anon_pages + S->st.nr_anon_transparent_hugepages * 512;
}

/*
 * madvise_free_huge_pmd(): a PMD-mapped THP the range covers whole is made
 * lazy-free (pglazyfree += 512), its PMD cleaned (one INVLPG of its 2 MiB
 * stride); nothing is split or freed, Rss stays. Again: not counted twice
 * (lru_lazyfree() skips a folio already lazy-free).
 * Before: pglazyfree 0, inactive file 0. After: 512, 512; thp_split_pmd 0.
 */
START_TEST(madvise_free_huge_pmd_whole)
{
	uint64_t inval;

	anon_4m(true, NULL, NULL);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	inval = S->st.tlb_invalidations;
	advise(BASE, 2 << 20, MADV_FREE_);
	ck_assert_uint_eq(S->st.pglazyfree, 512);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(rss_pages(), 1024);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_FILE], 512);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_ANON], 512);
	ck_assert_uint_eq(S->st.tlb_invalidations, inval + 1);
	advise(BASE, 2 << 20, MADV_FREE_);
	ck_assert_uint_eq(S->st.pglazyfree, 512);
	ck_assert_uint_eq(S->st.tlb_invalidations, inval + 1); /* the PMD was clean already */
	done();
}
END_TEST

/*
 * madvise_free_huge_pmd() of part of a THP: split_folio() (thp_split_pmd 1,
 * thp_split_page 1), then madvise_free_pte_range() marks the 62 pages in the
 * range (pglazyfree 62). Rss stays 1024 pages; AnonHugePages loses 2 MiB.
 */
START_TEST(madvise_free_huge_pmd_partial)
{
	anon_4m(true, NULL, NULL);
	advise(BASE + 64 * 4096, 62 * 4096, MADV_FREE_);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	ck_assert_uint_eq(S->st.pglazyfree, 62);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_FILE], 62);
	done();
}
END_TEST

/*
 * madvise_free_pte_range() on 4 KiB pages, then MADV_PAGEOUT without swap
 * (reclaim_pages() -> shrink_folio_list()): of 64 pages 32 made lazy-free, 16
 * of those stored to again (no fault: the PTE stayed writable; the store sets
 * its dirty bit). PAGEOUT discards the 16 clean ones (pglazyfreed 16, Rss 64
 * -> 48 pages), gives the 16 re-dirtied ones PG_swapbacked back and activates
 * them with the 32 that have no swap slot (pgactivate 48, pswpout 0). The 16
 * discarded pages fault in again, fresh.
 */
START_TEST(madvise_free_pte_range_then_pageout)
{
	uint64_t faults;

	anon_4m(false, "os.mode=base", "os.swap.size=0");
	advise(BASE, 32 * 4096, MADV_FREE_);
	ck_assert_uint_eq(S->st.pglazyfree, 32);
	advise(BASE, 32 * 4096, MADV_NORMAL_); /* (no flag to clear: nothing changes) */
	advise(BASE, 16 * 4096, MADV_FREE_);   /* already lazy-free: not counted again */
	ck_assert_uint_eq(S->st.pglazyfree, 32);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_FILE], 32);
	faults = S->st.pgfault;
	touch(BASE, BASE + 16 * 4096, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, faults);
	advise(BASE, 64 * 4096, MADV_PAGEOUT_);
	ck_assert_uint_eq(S->st.pglazyfreed, 16);
	ck_assert_uint_eq(S->st.pswpout, 0);
	ck_assert_uint_eq(S->st.pgactivate, 48);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1024 - 16);
	ck_assert_uint_eq(S->k.lru.nr[LRU_ACTIVE_ANON], 48);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_FILE], 0);
	touch(BASE, BASE + 64 * 4096, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, faults + 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1024);
	done();
}
END_TEST

/*
 * The same with the store first: 64 pages lazy-free, 16 stored to, PAGEOUT:
 * 48 discarded (pglazyfreed 48), 16 kept and activated (pgactivate 16).
 */
START_TEST(try_to_unmap_one_lazyfree_redirtied)
{
	anon_4m(false, "os.mode=base", "os.swap.size=0");
	advise(BASE, 64 * 4096, MADV_FREE_);
	touch(BASE + 16 * 4096, BASE + 32 * 4096, R_STORE);
	advise(BASE, 64 * 4096, MADV_PAGEOUT_);
	ck_assert_uint_eq(S->st.pglazyfreed, 48);
	ck_assert_uint_eq(S->st.pgactivate, 16);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_FILE], 0);
	ck_assert_uint_eq(S->k.lru.nr[LRU_ACTIVE_ANON], 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1024 - 48);
	done();
}
END_TEST

/*
 * A lazy-free THP at reclaim (shrink_folio_list(), try_to_unmap_one()): clean,
 * its PMD is split (thp_split_pmd) and the folio freed whole (pglazyfreed 512,
 * no thp_split_page), as Linux 6.18.44 does (tests/native.sh madv-free-thp);
 * its range refaults in 4 KiB pages (the page table stayed). Stored to after
 * MADV_FREE: the PMD is split too, and the folio is kept and activated.
 */
START_TEST(shrink_folio_list_lazyfree_thp)
{
	uint64_t faults;

	anon_4m(true, "os.swap.size=0", NULL);
	advise(BASE, 4 << 20, MADV_FREE_);
	ck_assert_uint_eq(S->st.pglazyfree, 1024);
	touch(BASE + (2 << 20), BASE + (2 << 20) + 4096, R_STORE); /* the walk sets D */
	advise(BASE, 4 << 20, MADV_PAGEOUT_);
	ck_assert_uint_eq(S->st.thp_split_pmd, 2);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.pglazyfreed, 512);
	ck_assert_uint_eq(S->st.pgactivate, 512);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512);
	ck_assert_uint_eq(S->k.lru.nr[LRU_ACTIVE_ANON], 512);
	faults = S->st.pgfault;
	touch(BASE, BASE + (2 << 20), R_STORE);
	ck_assert_uint_eq(S->st.pgfault, faults + 512);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 2);
	done();
}
END_TEST

/*
 * try_to_unmap_one() discarding a clean lazy-free THP whose PMD it split: from
 * 6.15 (354dffd29575, kernel_lazyfree_batched_unmap()) its 512 PTEs go in one
 * batch and the folio is never partly mapped; before, PTE by PTE, and the first
 * queues it for deferred split. Measured: 6.18.44 thp_deferred_split_page 0,
 * 6.12.117 (QEMU guest) 1 (tests/native.sh madv-free-thp, step 4).
 */
START_TEST(try_to_unmap_one_lazyfree_batch_by_version)
{
	static const char *const kernel[] = { "os.kernel=6.18", "os.kernel=6.12", "os.kernel=6.6" };
	static const uint64_t deferred[] = { 0, 1, 1 };

	for (unsigned k = 0; k < 3; k++) {
		anon_4m(true, "os.swap.size=0", kernel[k]);
		advise(BASE, 2 << 20, MADV_FREE_);
		advise(BASE, 2 << 20, MADV_PAGEOUT_);
		ck_assert_uint_eq(S->st.thp_split_pmd, 1);
		ck_assert_uint_eq(S->st.pglazyfreed, 512);
		ck_assert_msg(S->st.thp_deferred_split_page == deferred[k], "%s: thp_deferred_split_page %llu",
			      kernel[k], (unsigned long long)S->st.thp_deferred_split_page);
		ck_assert_uint_eq(rss_pages(), 512);
		done();
	}
}
END_TEST

/*
 * kswapd without swap (get_scan_count(): file lists only) discards lazy-free
 * pages instead of failing: 40 MiB stored to and made lazy-free in 64 MiB of
 * memory, then 40 MiB more stored to. Before lazy-free reclaim the second
 * region ran out of memory; now kswapd frees 4480 of the lazy-free pages,
 * nothing is swapped, and the first region keeps the rest.
 */
START_TEST(kswapd_discards_lazyfree_without_swap)
{
	static const char t[] =
		"SYSCALL[7,1](9) sys_mmap ( 0x0, 41943040, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
		"SYSCALL[7,1](9) sys_mmap ( 0x0, 41943040, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n";

	run(t, "os.memory=64M", "os.mode=base", "os.swap.size=0", NULL);
	check_every = 997;
	touch(BASE, BASE + (40 << 20), R_STORE);
	advise(BASE, 40 << 20, MADV_FREE_);
	ck_assert_uint_eq(S->st.pglazyfree, 10240);
	touch(0x80000000UL, 0x80000000UL + (40 << 20), R_STORE);
	check_every = 1;
	ck_assert_uint_eq(S->st.pswpout, 0);
	ck_assert_uint_eq(S->st.pglazyfreed, S->st.pgsteal_kswapd);
	ck_assert_uint_eq(S->st.pglazyfreed, 4480);
	ck_assert_uint_eq(S->st.nr_anon_pages, 20480 - 4480);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_FILE] + S->k.lru.nr[LRU_ACTIVE_FILE], 10240 - 4480);
	done();
}
END_TEST

/*
 * madvise_cold_or_pageout_pte_range() for MADV_COLD: the accessed bits of the
 * range's PTEs are cleared (one flush of the gathered span, 16 INVLPGs), an
 * active folio is deactivated (pgdeactivate 8), an inactive one stays.
 */
START_TEST(madvise_cold_deactivates)
{
	uint64_t inval;

	anon_4m(false, "os.mode=base", NULL);
	for (unsigned i = 0; i < 8; i++) {
		pfn_t pfn;

		ck_assert(pt_lookup(&S->k.mm->pt, BASE + i * 4096, NULL, &pfn, NULL));
		lru_move(&S->k.lru, pfn, 1, LRU_ACTIVE_ANON);
	}
	inval = S->st.tlb_invalidations;
	advise(BASE, 16 * 4096, MADV_COLD_);
	ck_assert_uint_eq(S->st.pgdeactivate, 8);
	ck_assert_uint_eq(S->k.lru.nr[LRU_ACTIVE_ANON], 0);
	ck_assert_uint_eq(S->st.tlb_invalidations, inval + 16);
	ck_assert(!pt_test_clear_young(&S->k.mm->pt, BASE));
	ck_assert(pt_test_clear_young(&S->k.mm->pt, BASE + 16 * 4096));
	ck_assert_uint_eq(S->st.nr_anon_pages, 1024);
	done();
}
END_TEST

/*
 * MADV_PAGEOUT with swap: a whole PMD-mapped THP goes to a free cluster whole
 * (thp_swpout 1, pswpout 512, its PMD split into swap entries: thp_split_pmd);
 * part of the other is split first (split_folio(): thp_split_pmd, thp_split_page)
 * and its 16 pages swapped one by one. Rss 1024 -> 496 pages; one flush per PMD
 * range that unmapped something (try_to_unmap_flush()).
 */
START_TEST(madvise_pageout_swap)
{
	uint64_t inval;

	anon_4m(true, NULL, NULL);
	inval = S->st.tlb_invalidations;
	advise(BASE, 2 << 20, MADV_PAGEOUT_);
	ck_assert_uint_eq(S->st.thp_swpout, 1);
	ck_assert_uint_eq(S->st.pswpout, 512);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	advise(BASE + (2 << 20), 16 * 4096, MADV_PAGEOUT_);
	ck_assert_uint_eq(S->st.thp_split_pmd, 2);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	ck_assert_uint_eq(S->st.pswpout, 512 + 16);
	ck_assert_uint_eq(rss_pages(), 1024 - 512 - 16);
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, 528);
	/* PMD split (full), the batch (full); split (full), split_folio none, the batch (full) */
	ck_assert_uint_eq(S->st.tlb_invalidations, inval + 4);
	done();
}
END_TEST

/*
 * MADV_PAGEOUT without swap (folio_alloc_swap() fails): a whole THP is split to
 * be tried page by page (thp_swpout_fallback 1, thp_split_pmd 1, thp_split_page
 * 1) and every page is activated (pgactivate 512); nothing leaves memory
 * (tests/native.sh pageout-noswap).
 */
START_TEST(madvise_pageout_noswap)
{
	anon_4m(true, "os.swap.size=0", NULL);
	advise(BASE, 2 << 20, MADV_PAGEOUT_);
	ck_assert_uint_eq(S->st.thp_swpout_fallback, 1);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	ck_assert_uint_eq(S->st.pgactivate, 512);
	ck_assert_uint_eq(S->st.pswpout, 0);
	ck_assert_uint_eq(rss_pages(), 1024);
	ck_assert_uint_eq(S->k.lru.nr[LRU_ACTIVE_ANON], 512);
	done();
}
END_TEST

/* MADV_FREE of a file mapping is refused (madvise_free_single_vma(): -EINVAL). */
START_TEST(madvise_free_single_vma_file)
{
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 1048576, 3, 2, 3, 0 ) --> [pre-success] Success(0x40000000)\n",
	    NULL);
	touch(BASE, BASE + (1 << 20), R_STORE);
	advise(BASE, 1 << 20, MADV_FREE_);
	ck_assert_uint_eq(S->st.pglazyfree, 0);
	done();
}
END_TEST

/* A 1 MiB private file mapping read page by page, cold cache, after @advice. */
static void read_cold(uint32_t advice, unsigned prot, const char *kernel)
{
	char t[256];

	snprintf(t, sizeof(t),
		 "SYSCALL[7,1](9) sys_mmap ( 0x0, 1048576, %u, 2, 3, 0 ) --> [pre-success] Success(0x40000000)\n",
		 prot);
	run(t, "os.file_cache=cold", kernel, NULL);
	advise(BASE, 1 << 20, advice);
	touch(BASE, BASE + (1 << 20), R_LOAD);
}

/*
 * filemap_fault(): a miss in filemap_get_folio() is a major fault and reads the
 * read-around window (32 pages centred on the fault, do_sync_mmap_readahead(),
 * PG_readahead on page 24); after it the marks keep async readahead
 * (page_cache_async_ra()) ahead of the faults, in folios of growing order, so
 * no fault misses again: 1 major of 12 faults (check_filemap.c
 * readahead_sequential has the sequence); 17 faults on 6.12 (order-0 pages).
 * MADV_SEQUENTIAL: page_cache_sync_ra() reads 32 forward, the second half async:
 * 1 major of 11. MADV_RANDOM reads nothing around: every page a major fault. A
 * warm cache: none major.
 */
START_TEST(do_sync_mmap_readahead_advice)
{
	read_cold(MADV_NORMAL_, 1, NULL);
	ck_assert_uint_eq(S->st.pgfault, 12);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	done();
	read_cold(MADV_NORMAL_, 1, "os.kernel=6.12");
	ck_assert_uint_eq(S->st.pgfault, 17);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	done();
	read_cold(MADV_SEQUENTIAL_, 1, NULL);
	ck_assert_uint_eq(S->st.pgfault, 11);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	done();
	read_cold(MADV_RANDOM_, 1, NULL);
	ck_assert_uint_eq(S->st.pgfault, 256);
	ck_assert_uint_eq(S->st.pgmajfault, 256);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	done();
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 1048576, 1, 2, 3, 0 ) --> [pre-success] Success(0x40000000)\n",
	    "os.file_cache=warm", NULL);
	advise(BASE, 1 << 20, MADV_RANDOM_);
	touch(BASE, BASE + (1 << 20), R_LOAD);
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert_uint_eq(S->st.pgmajfault, 0);
	done();
}
END_TEST

/*
 * MADV_RANDOM of half a file mapping splits its VMA (madvise_update_vma()):
 * fault-around stops at the new edge, read-around in the random half is gone.
 * An executable mapping reads around despite MADV_RANDOM from 6.16 on
 * (do_sync_mmap_readahead(): (vm_flags & (VM_RAND_READ | VM_EXEC)) ==
 * VM_RAND_READ); under os.kernel 6.12, every page is a major fault.
 */
START_TEST(madvise_random_vma_and_exec)
{
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 1048576, 1, 2, 3, 0 ) --> [pre-success] Success(0x40000000)\n",
	    "os.file_cache=cold", NULL);
	advise(BASE + (512 << 10), 512 << 10, MADV_RANDOM_);
	ck_assert_uint_eq(S->k.mm->vmas.n, 2);
	touch(BASE, BASE + (1 << 20), R_LOAD);
	ck_assert_uint_eq(S->st.pgfault, 8 + 128);
	/* the first half as without advice, readahead clipped to its VMA: faults at
	 * pages 0 (major), 16, 24, 32, 48, 64, 80, 96 (its order-5 folio, 96..127,
	 * mapped whole); the random half: every page */
	ck_assert_uint_eq(S->st.pgmajfault, 1 + 128);
	done();
	/* the VM_EXEC branch (3b61a3f08949): 32 pages forward from the fault within
	 * the VMA, no async part (no mark): a miss at every other window, 8 of 16 */
	read_cold(MADV_RANDOM_, 5, "os.kernel=6.18");
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert_uint_eq(S->st.pgmajfault, 8);
	done();
	read_cold(MADV_RANDOM_, 5, "os.kernel=6.12");
	ck_assert_uint_eq(S->st.pgmajfault, 256);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("madvise");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, madvise_free_huge_pmd_whole);
	tcase_add_test(tc, madvise_free_huge_pmd_partial);
	tcase_add_test(tc, madvise_free_pte_range_then_pageout);
	tcase_add_test(tc, try_to_unmap_one_lazyfree_redirtied);
	tcase_add_test(tc, shrink_folio_list_lazyfree_thp);
	tcase_add_test(tc, try_to_unmap_one_lazyfree_batch_by_version);
	tcase_add_test(tc, kswapd_discards_lazyfree_without_swap);
	tcase_add_test(tc, madvise_cold_deactivates);
	tcase_add_test(tc, madvise_pageout_swap);
	tcase_add_test(tc, madvise_pageout_noswap);
	tcase_add_test(tc, madvise_free_single_vma_file);
	tcase_add_test(tc, do_sync_mmap_readahead_advice);
	tcase_add_test(tc, madvise_random_vma_and_exec);
	suite_add_tcase(s, tc);
	return check_run(s);
}
