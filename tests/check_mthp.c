/*
 * check_mthp.c - anonymous multi-size THP (Linux 6.8+): the per-size switches
 * (os.thp.sizes.<size>.enabled), alloc_anon_folio()'s order choice (the highest
 * enabled order that fits the VMA and whose PTEs are all none, then order by
 * order down while allocations fail), mTHPs mapped by PTEs, their deferred
 * split when partly unmapped, and the hugepages-<size>kB/stats counters. Each
 * scenario is a small lackey trace (check_common.h) with every invariant,
 * thp_mthp_check_invariants() among them, checked after every record.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "check_run.h"
#include "swap.h"
#include "thp.h"

#define MAP_AT(addr, len)                                                                         \
	"SYSCALL[7,1](9) sys_mmap ( 0x0, " #len ", 3, 34, 4294967295, 0 ) --> [pre-success] Success(" \
	#addr ")\n"
#define MADV_HUGE(addr, len) "SYSCALL[7,1](28) sys_madvise ( " #addr ", " #len ", 14 ) --> [pre-success] Success(0x0)\n"
#define MUNMAP(addr, len) "SYSCALL[7,1](11) sys_munmap ( " #addr ", " #len " )[sync] --> Success(0x0)\n"
#define DONTNEED(addr, len) "SYSCALL[7,1](28) sys_madvise ( " #addr ", " #len ", 4 ) --> [pre-success] Success(0x0)\n"
#define MFREE(addr, len) "SYSCALL[7,1](28) sys_madvise ( " #addr ", " #len ", 8 ) --> [pre-success] Success(0x0)\n"
#define PAGEOUT(addr, len) "SYSCALL[7,1](28) sys_madvise ( " #addr ", " #len ", 21 ) --> [pre-success] Success(0x0)\n"
/* 16 stores, one per page of the n-th 64K of 0x40000000 (n one hex digit) */
#define STORES_64K(n) \
	" S 400" #n "0000,8\n" " S 400" #n "1000,8\n" " S 400" #n "2000,8\n" " S 400" #n "3000,8\n" \
	" S 400" #n "4000,8\n" " S 400" #n "5000,8\n" " S 400" #n "6000,8\n" " S 400" #n "7000,8\n" \
	" S 400" #n "8000,8\n" " S 400" #n "9000,8\n" " S 400" #n "a000,8\n" " S 400" #n "b000,8\n" \
	" S 400" #n "c000,8\n" " S 400" #n "d000,8\n" " S 400" #n "e000,8\n" " S 400" #n "f000,8\n"

#define ST(o, c) S->st.mthp[o][MTHP_STAT_##c]

/* Orders: 2 16K, 4 64K, 8 1M, 9 2M. The top-level switch is never unless a test says. */
START_TEST(aligned_64k)
{
	run(MMAP_4M " S 40000010,8\n S 4000f000,8\n S 40010000,8\n", "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2); /* the second store is in the first mTHP */
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 2);
	ck_assert_uint_eq(ST(4, NR_ANON), 2);
	ck_assert_uint_eq(ST(4, ANON_FAULT_FALLBACK), 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 32);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0); /* PTE-mapped: no AnonHugePages */
	ck_assert_uint_eq(S->st.huge_bytes, 0);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_2M], 0);
	done();
}
END_TEST

START_TEST(highest_enabled_order)
{
	run(MMAP_4M " S 40000010,8\n", "os.thp.enabled=never", "os.thp.sizes.16K.enabled=always",
	    "os.thp.sizes.64K.enabled=always", "os.thp.sizes.1M.enabled=always", NULL);
	ck_assert_uint_eq(ST(8, ANON_FAULT_ALLOC), 1);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC) + ST(2, ANON_FAULT_ALLOC), 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 256);
	done();
	/* 2M inherit with the top-level always: a PMD THP goes first, 2M counted per size too */
	run(MMAP_4M " S 40000010,8\n", "os.thp.sizes.1M.enabled=always", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(ST(9, ANON_FAULT_ALLOC), 1);
	ck_assert_uint_eq(ST(9, NR_ANON), 1);
	ck_assert_uint_eq(ST(8, ANON_FAULT_ALLOC), 0);
	done();
}
END_TEST

START_TEST(unaligned_vma)
{
	/* [0x40003000, 0x40023000): the 64K range around 0x40004010 starts below it */
	run(MAP_AT(0x40003000, 131072) " S 40004010,8\n S 40003010,8\n S 40010010,8\n",
	    "os.thp.enabled=never", "os.thp.sizes.16K.enabled=always", "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(2, ANON_FAULT_ALLOC), 1); /* 0x40004000 */
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1); /* 0x40010000 */
	ck_assert_uint_eq(ST(2, ANON_FAULT_FALLBACK) + ST(4, ANON_FAULT_FALLBACK), 0); /* silent */
	ck_assert_uint_eq(S->st.nr_anon_pages, 4 + 1 + 16); /* 0x40003000: no 16K fits, order 0 */
	done();
}
END_TEST

START_TEST(ptes_not_none)
{
	/* the zero page's PTE at 0x40000000 keeps 64K out of [0x40000000, 0x40010000) */
	run(MMAP_4M " L 40000010,8\n S 40008010,8\n S 40000010,8\n", "os.thp.enabled=never",
	    "os.thp.sizes.16K.enabled=always", "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 0);
	ck_assert_uint_eq(ST(4, ANON_FAULT_FALLBACK), 0); /* not an allocation failure */
	ck_assert_uint_eq(ST(2, ANON_FAULT_ALLOC), 1);    /* 0x40008000 */
	ck_assert_uint_eq(S->st.nr_anon_pages, 4 + 1);    /* the zero page's COW: order 0 */
	done();
}
END_TEST

START_TEST(madvise_per_size)
{
	const char *t = MMAP_4M " S 40000010,8\n";
	const char *m = MMAP_4M MADV_HUGE(0x40000000, 4194304) " S 40000010,8\n";

	run(t, "os.thp.enabled=never", "os.thp.sizes.64K.enabled=madvise", "os.thp.sizes.16K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 0);
	ck_assert_uint_eq(ST(2, ANON_FAULT_ALLOC), 1);
	done();
	run(m, "os.thp.enabled=never", "os.thp.sizes.64K.enabled=madvise", "os.thp.sizes.16K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1);
	ck_assert_uint_eq(ST(2, ANON_FAULT_ALLOC), 0);
	done();
	/* inherit follows the top-level switch: madvise needs MADV_HUGEPAGE */
	run(t, "os.thp.enabled=madvise", "os.thp.sizes.64K.enabled=inherit", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 0);
	done();
	run(m, "os.thp.enabled=madvise", "os.thp.sizes.64K.enabled=inherit", "os.thp.sizes.2M.enabled=never", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	done();
}
END_TEST

START_TEST(munmap_part)
{
	uint64_t free0;

	run(MMAP_4M " S 40000010,8\n" MUNMAP(0x40004000, 8192), "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", "os.khugepaged.max_ptes_none=409", NULL);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 1);
	ck_assert_uint_eq(ST(4, NR_ANON_PARTIALLY_MAPPED), 1);
	ck_assert_uint_eq(ST(4, NR_ANON), 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 14);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0); /* PMD order only */
	/* the deferred split shrinker: the 2 unmapped pages go back, and (6.12+,
	 * remap_page(RMP_USE_SHARED_ZEROPAGE)) the 13 mapped ones never stored to
	 * go to the zero page: 15 freed, page 0 stays */
	free0 = S->k.buddy.nr_free_pages;
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 15);
	ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0 + 15);
	ck_assert_uint_eq(ST(4, SPLIT), 1);
	ck_assert_uint_eq(ST(4, NR_ANON), 0);
	ck_assert_uint_eq(ST(4, NR_ANON_PARTIALLY_MAPPED), 0);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 13);
	sim_check_invariants(S);
	done();
	/* 6.8: the split keeps every mapped page */
	run(MMAP_4M " S 40000010,8\n" MUNMAP(0x40004000, 8192), "os.kernel=6.8", "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", "os.khugepaged.max_ptes_none=409", NULL);
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 14);
	done();
	/* max_ptes_none 511 (the default): the same remap, which does not look at it */
	run(MMAP_4M " S 40000010,8\n" MUNMAP(0x40004000, 8192), "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 15);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 13);
	done();
}
END_TEST

START_TEST(munmap_whole_by_kernel)
{
	/* one zap of the whole folio: batched (6.9+) it is never partly mapped;
	 * PTE by PTE (6.8) its first PTE queues it */
	const char *t = MMAP_4M " S 40000010,8\n" MUNMAP(0x40000000, 65536);

	run(t, "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 0);
	ck_assert_uint_eq(ST(4, NR_ANON), 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();
	run(t, "os.kernel=6.8", "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 1);
	ck_assert_uint_eq(ST(4, NR_ANON), 0);
	ck_assert_uint_eq(ST(4, NR_ANON_PARTIALLY_MAPPED), 0); /* freed with its last page */
	done();
}
END_TEST

START_TEST(dontneed_part)
{
	run(MMAP_4M " S 40000010,8\n" DONTNEED(0x40000000, 4096) " S 40000010,8\n", "os.thp.enabled=never",
	    "os.thp.sizes.16K.enabled=always", NULL);
	ck_assert_uint_eq(ST(2, ANON_FAULT_ALLOC), 1); /* the refault finds 3 PTEs present */
	ck_assert_uint_eq(ST(2, SPLIT_DEFERRED), 1);
	/* the refault gets an order-0 page; the folio stays partly mapped, queued */
	ck_assert_uint_eq(ST(2, NR_ANON_PARTIALLY_MAPPED), 1);
	ck_assert_uint_eq(ST(2, NR_ANON), 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 4);
	done();
}
END_TEST

START_TEST(fallback_order_by_order)
{
	/* fragmented memory: no free block above order 5, half the pages free, so
	 * 1M and 256K fail in turn (no reclaim or compaction under defrag madvise
	 * without MADV_HUGEPAGE: GFP_TRANSHUGE_LIGHT) and 64K is allocated */
	struct err e = { 0 };
	struct trace_rec r = { 0x40000010, 8, R_STORE };
	struct trace_batch b = { &r, 1, NULL, 0 };

	run(MMAP_4M, "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always",
	    "os.thp.sizes.256K.enabled=always", "os.thp.sizes.1M.enabled=always", NULL);
	for (unsigned o = 10; o > 5; o--)
		while (S->k.buddy.free_area[o].nr_free) {
			pfn_t p = buddy_alloc(&S->k.buddy, o);

			ck_assert(p != PFN_NONE);
			thp_split_alloc(&S->k.buddy, p, o);
			for (pfn_t i = 0; i < (1UL << o); i++)
				if ((i & 63) < 32) /* the low half of every 256K: order-5 blocks */
					buddy_free(&S->k.buddy, p + i, 0);
		}
	ck_assert_uint_eq(S->k.buddy.free_area[6].nr_free + S->k.buddy.free_area[8].nr_free, 0);
	ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(ST(8, ANON_FAULT_FALLBACK), 1);
	ck_assert_uint_eq(ST(6, ANON_FAULT_FALLBACK), 1);
	ck_assert_uint_eq(ST(4, ANON_FAULT_FALLBACK), 0);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	done();
}
END_TEST

/*
 * Measured on Linux 6.18.44 (tests/native_mthp.sh pageout-64K, free-64K): a
 * split of a whole, PTE-mapped mTHP counts split_deferred once. __folio_split()
 * unmaps it first (unmap_folio(): try_to_migrate_one() PTE by PTE), and after
 * its first PTE __folio_remove_rmap() finds it partly mapped and queues it
 * (deferred_split_folio(folio, true)); the split takes it off the queue again
 * (nr_anon_partially_mapped back down). MADV_PAGEOUT of a whole 64K mTHP without
 * swap: folio_alloc_swap() fails, split (swpout_fallback), its pages activated.
 */
START_TEST(split_counts_deferred)
{
	run(MMAP_4M STORES_64K(0) PAGEOUT(0x40000000, 65536), "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", "os.swap.size=0", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1);
	ck_assert_uint_eq(ST(4, SWPOUT_FALLBACK), 1);
	ck_assert_uint_eq(ST(4, SPLIT), 1);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 1);
	ck_assert_uint_eq(ST(4, NR_ANON), 0);
	ck_assert_uint_eq(ST(4, NR_ANON_PARTIALLY_MAPPED), 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	done();
	/* one already partly mapped is not counted again */
	run(MMAP_4M STORES_64K(0) MUNMAP(0x40001000, 4096) PAGEOUT(0x40000000, 65536),
	    "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always", "os.swap.size=0", NULL);
	ck_assert_uint_eq(ST(4, SPLIT), 1);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 1); /* the munmap's */
	ck_assert_uint_eq(ST(4, NR_ANON_PARTIALLY_MAPPED), 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 15);
	done();
}
END_TEST

/*
 * MADV_PAGEOUT and MADV_FREE of part of an mTHP (madvise_cold_or_pageout_pte_range(),
 * madvise_free_pte_range(): madvise_folio_pte_batch() shorter than the folio):
 * split_folio() in the walk, then its pages in the range one by one; no
 * swpout_fallback (the split is not reclaim's). pglazyfree counts the 4 pages.
 */
START_TEST(madvise_part)
{
	run(MMAP_4M STORES_64K(0) PAGEOUT(0x40002000, 16384), "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", "os.swap.size=0", NULL);
	ck_assert_uint_eq(ST(4, SPLIT), 1);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 1);
	ck_assert_uint_eq(ST(4, SWPOUT_FALLBACK), 0);
	ck_assert_uint_eq(ST(4, NR_ANON), 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	done();
	run(MMAP_4M STORES_64K(0) MFREE(0x40002000, 16384), "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, SPLIT), 1);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 1);
	ck_assert_uint_eq(ST(4, NR_ANON), 0);
	ck_assert_uint_eq(S->st.pglazyfree, 4);
	done();
	/* a whole one is left whole: lazy-free as one folio, pglazyfree 16 */
	run(MMAP_4M STORES_64K(0) MFREE(0x40000000, 65536), "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, SPLIT), 0);
	ck_assert_uint_eq(ST(4, NR_ANON), 1);
	ck_assert_uint_eq(S->st.pglazyfree, 16);
	done();
}
END_TEST

/*
 * A split maps the zero-filled pages of the folio to the zero page (6.12+,
 * remap_page(RMP_USE_SHARED_ZEROPAGE)) whatever max_ptes_none, shrink_underused
 * and os.zero_page say: this machine's 6.18.44, whose read faults refuse the zero
 * page, remaps all the same (tests/native_mthp.sh zero-remap: Rss -60 KiB for a
 * 64 KiB folio with one page written). Before 6.12 the split keeps every page.
 */
START_TEST(zero_remap_split)
{
	const char *a[] = { "os.zero_page=true", "os.zero_page=false", "os.khugepaged.max_ptes_none=409",
			    "os.thp.shrink_underused=false" };

	for (unsigned i = 0; i < 4; i++) {
		run(MMAP_4M " S 40000010,8\n" PAGEOUT(0x40004000, 16384), "os.thp.enabled=never",
		    "os.thp.sizes.64K.enabled=always", "os.swap.size=0", a[i], NULL);
		ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1);
		ck_assert_uint_eq(ST(4, SPLIT), 1);
		ck_assert_uint_eq(S->st.nr_anon_pages, 1);
		ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 15);
		ck_assert_uint_eq(S->st.rss_bytes, 4096);
		done();
	}
	run(MMAP_4M " S 40000010,8\n" PAGEOUT(0x40004000, 16384), "os.kernel=6.8", "os.thp.enabled=never",
	    "os.thp.sizes.64K.enabled=always", "os.swap.size=0", NULL);
	ck_assert_uint_eq(ST(4, SPLIT), 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	done();
}
END_TEST

/*
 * Reclaim of a lazy-free mTHP (try_to_unmap_one(), 6.18: its PTEs in one batch,
 * folio_unmap_pte_batch()): clean, it is discarded whole (pglazyfreed 16, no
 * split); one PTE written again since MADV_FREE, it stays whole, swap-backed
 * again. Measured on 6.18.44 (tests/native_mthp.sh free-64K).
 */
START_TEST(lazyfree_reclaim)
{
	run(MMAP_4M STORES_64K(0) STORES_64K(1) MFREE(0x40000000, 131072) " S 40000010,8\n"
	    PAGEOUT(0x40000000, 131072), "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always",
	    "os.swap.size=0", NULL);
	ck_assert_uint_eq(S->st.pglazyfree, 32);
	ck_assert_uint_eq(S->st.pglazyfreed, 16);
	ck_assert_uint_eq(ST(4, SPLIT), 0);
	ck_assert_uint_eq(ST(4, SPLIT_DEFERRED), 0);
	ck_assert_uint_eq(ST(4, NR_ANON), 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	done();
}
END_TEST

/*
 * A PMD THP mapped by its 512 PTEs (mprotect of a page and back: the PMD split,
 * the VMAs merged) is split as an mTHP is, PTE by PTE: MADV_PAGEOUT without swap
 * counts thp_swpout_fallback and, from unmap_folio(), thp_deferred_split_page
 * and split_deferred of 2M once; the PMD-mapped one beside it, paged out in
 * part, is split frozen and queues nothing. Measured on 6.18.44
 * (tests/native_mthp.sh ptemapped-2M).
 */
START_TEST(pte_mapped_pmd_split)
{
	run(MMAP_4M MADV_HUGE(0x40000000, 4194304) " S 40000010,8\n S 40200010,8\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4096, 1 ) --> [pre-success] Success(0x0)\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4096, 3 ) --> [pre-success] Success(0x0)\n"
	    PAGEOUT(0x40000000, 2097152) PAGEOUT(0x40200000, 65536),
	    "os.thp.enabled=madvise", "os.swap.size=0", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 2);
	ck_assert_uint_eq(S->st.thp_split_pmd, 2);
	ck_assert_uint_eq(S->st.thp_split_page, 2);
	ck_assert_uint_eq(S->st.thp_swpout_fallback, 1);
	ck_assert_uint_eq(ST(9, SWPOUT_FALLBACK), 1);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(ST(9, SPLIT_DEFERRED), 1);
	ck_assert_uint_eq(ST(9, SPLIT), 2);
	ck_assert_uint_eq(ST(9, NR_ANON), 0);
	/* the two written pages; the 1022 others, zero-filled, go to the zero page at
	 * the splits (6.12+) */
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 1022);
	done();
}
END_TEST

START_TEST(config_sizes)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	ck_assert_int_eq(thp_size_enabled(&c.thp, 9), MTHP_INHERIT);
	for (unsigned o = 2; o < 9; o++)
		ck_assert_int_eq(thp_size_enabled(&c.thp, o), MTHP_NEVER);
	ck_assert(!thp_mthp_configured(&c.thp));
	ck_assert_int_eq(config_set(&c, "os.thp.sizes.512K.enabled=madvise", &e), 0);
	ck_assert_int_eq(thp_size_enabled(&c.thp, 7), MTHP_MADVISE);
	ck_assert(thp_mthp_configured(&c.thp));
	ck_assert_int_eq(config_set(&c, "os.kernel=6.6", &e), 0);
	ck_assert_int_eq(config_validate(&c, "--set", &e), -1);
	ck_assert_str_eq(e.msg, "os.thp.sizes.512K.enabled: needs os.kernel 6.8 or later "
				"(hugepages-<size>kB/ came with multi-size THP, 19eaf44954df)");
}
END_TEST

/* --- the underused THP shrinker (6.12+, dafff3f4c850) and the zero-page remap --- */

/* MMAP_4M, @pre, then one store into each of the first @n pages of the first 2M (a THP). */
static char *stores(const char *pre, unsigned n)
{
	size_t cap = strlen(MMAP_4M) + strlen(pre) + 24 * (size_t)n + 1;
	char *t = malloc(cap), *p = t;

	ck_assert_ptr_nonnull(t);
	p += sprintf(p, "%s%s", MMAP_4M, pre);
	for (unsigned i = 0; i < n; i++)
		p += sprintf(p, " S %lx,8\n", 0x40000010UL + ((unsigned long)i << 12));
	return t;
}

#define UNDERUSED(n, ...)                              \
	do {                                           \
		char *t_ = stores("", n);              \
		run(t_, __VA_ARGS__, NULL);            \
		free(t_);                              \
	} while (0)

/* The THP at 0x40000000's folio. */
static struct folio *thp_at(void)
{
	enum page_size ps;
	pfn_t pfn;

	ck_assert(pt_lookup(&S->k.mm->pt, 0x40000000, &ps, &pfn, NULL));
	return &S->k.thp.folio[pfn >> HPAGE_PMD_ORDER];
}

/* max_ptes_none 409: 102 pages written leave 410 zero-filled > 409: split */
START_TEST(underused_split)
{
	uint64_t free0;

	UNDERUSED(102, "os.khugepaged.max_ptes_none=409");
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert(thp_at()->flags & FOLIO_UNDERUSED_Q);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0); /* queued whole: not counted */
	ck_assert_uint_eq(ST(9, SPLIT_DEFERRED), 0);
	free0 = S->k.buddy.nr_free_pages;
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 410);
	ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0 + 410);
	ck_assert_uint_eq(S->st.thp_underused_split_page, 1);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	ck_assert_uint_eq(ST(9, SPLIT), 1);
	ck_assert_uint_eq(ST(9, NR_ANON), 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 102);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 410);
	sim_check_invariants(S);
	/* a load of a remapped page: the zero page, no fault; a store: COW of it */
	touch(0x40100000, 0x40101000, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault, 1);
	touch(0x40100000, 0x40101000, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 103);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 409);
	done();
}
END_TEST

/* 103 written: 409 zero-filled, not above max_ptes_none: kept whole, off the queue */
START_TEST(underused_not)
{
	UNDERUSED(103, "os.khugepaged.max_ptes_none=409");
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 0);
	ck_assert_uint_eq(S->st.thp_underused_split_page, 0);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert(!(thp_at()->flags & FOLIO_UNDERUSED_Q)); /* not queued again */
	done();
	/* max_ptes_none 511 (the default): thp_underused() is false at once */
	UNDERUSED(1, "os.kernel=6.18");
	ck_assert(thp_at()->flags & FOLIO_UNDERUSED_Q);
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
	/* shrink_underused 0: not queued at the fault */
	UNDERUSED(1, "os.khugepaged.max_ptes_none=0", "os.thp.shrink_underused=false");
	ck_assert(!(thp_at()->flags & FOLIO_UNDERUSED_Q));
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
	/* 6.8: no underused shrinker */
	UNDERUSED(1, "os.kernel=6.8", "os.khugepaged.max_ptes_none=0");
	ck_assert(!(thp_at()->flags & FOLIO_UNDERUSED_Q));
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
	/* 6.12: there */
	UNDERUSED(1, "os.kernel=6.12", "os.khugepaged.max_ptes_none=0");
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 511);
	ck_assert_uint_eq(S->st.thp_underused_split_page, 1);
	done();
}
END_TEST

/* The THP a store to the huge zero PMD maps (6.13+) is queued too; an mlocked one is left whole. */
START_TEST(underused_paths)
{
	run(MMAP_4M " L 40000010,8\n S 40000010,8\n", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 1);
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 511);
	ck_assert_uint_eq(S->st.thp_underused_split_page, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
	run(MMAP_4M " S 40000010,8\n", "os.khugepaged.max_ptes_none=0", NULL);
	{
		struct os_event ev = { .kind = EV_MLOCK, .addr = 0x40000000, .len = 4194304 };

		ck_assert_int_eq(sim_event(S, &ev), 0);
	}
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 0);
	ck_assert_uint_eq(S->st.thp_underused_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2); /* mlock populated the second 2M */
	ck_assert(!(thp_at()->flags & FOLIO_UNDERUSED_Q));
	done();
}
END_TEST

/* MADV_COLLAPSE of 10 written 4K pages: the collapsed THP holds data in those 10
 * only (the rest were none), is queued whole, and splits underused */
START_TEST(underused_collapse)
{
	char *t = stores("", 10);
	size_t n = strlen(t);

	t = realloc(t, n + 128);
	ck_assert_ptr_nonnull(t);
	strcpy(t + n, "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 2097152, 25 ) --> [pre-success] Success(0x0)\n");
	run(t, "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=409", NULL);
	free(t);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert(thp_at()->flags & FOLIO_UNDERUSED_Q);
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 502);
	ck_assert_uint_eq(S->st.thp_underused_split_page, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 10);
	sim_check_invariants(S);
	done();
}
END_TEST

START_TEST(underused_config)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	ck_assert(c.thp.shrink_underused);
	ck_assert_int_eq(config_set(&c, "os.thp.shrink_underused=false", &e), 0);
	ck_assert_int_eq(config_set(&c, "os.kernel=6.8", &e), 0);
	ck_assert_int_eq(config_validate(&c, "--set", &e), -1);
	ck_assert_str_eq(e.msg, "os.thp.shrink_underused: needs os.kernel 6.12 or later "
				"(thp/shrink_underused came with the underused THP shrinker, dafff3f4c850)");
	ck_assert_int_eq(config_set(&c, "os.kernel=6.12", &e), 0);
	ck_assert_int_eq(config_validate(&c, "--set", &e), 0);
}
END_TEST

/*
 * mTHP swap-out (6.10+, 845982eb264b): 96M of 64K mTHPs, one store each, on a
 * 64M machine: kswapd swaps each whole into an aligned run of 16 slots (swpout,
 * 16 pswpout each); a swap device without a free cluster cannot give one: each
 * is split (swpout_fallback), its 15 zero-filled pages go to the zero page
 * (6.12+) and its written one to swap in the same pass (split_folio_to_list()).
 */
START_TEST(swapout_whole)
{
	char *t = fill_trace(96, 64 << 10, 0x80000010UL, "");

	run(t, "os.memory=64M", "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, ANON_FAULT_ALLOC), 1536);
	ck_assert_uint_eq(ST(4, SWPOUT), 565);
	ck_assert_uint_eq(ST(4, SWPOUT_FALLBACK), 0);
	ck_assert_uint_eq(S->st.pswpout, 16 * 565);
	ck_assert_uint_eq(ST(4, NR_ANON), 1536 - 565);
	ck_assert_uint_eq(S->st.pswpin, 1); /* the last load: one 4K page back */
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, 16 * 565 - 1);
	swap_check_invariants(&S->k.swap);
	done();
	/* 6.8: split, then 4K pages out */
	run(t, "os.kernel=6.8", "os.memory=64M", "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always", NULL);
	ck_assert_uint_eq(ST(4, SWPOUT), 0);
	ck_assert_uint_gt(ST(4, SWPOUT_FALLBACK), 0);
	ck_assert_uint_eq(ST(4, SPLIT), ST(4, SWPOUT_FALLBACK));
	done();
	free(t);
	/* one cluster, the swap header in it: no aligned run (64M: within 64M and 511 slots) */
	t = fill_trace(64, 64 << 10, 0, "");
	run(t, "os.memory=64M", "os.swap.size=2M", "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always", NULL);
	free(t);
	ck_assert_uint_eq(ST(4, SWPOUT), 0);
	ck_assert_uint_eq(ST(4, SWPOUT_FALLBACK), 85);
	ck_assert_uint_eq(ST(4, SPLIT), 85);
	ck_assert_uint_eq(S->st.pswpout, 85); /* each split's written page */
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 85 * 15);
	swap_check_invariants(&S->k.swap);
	done();
}
END_TEST

/* swap_alloc_order(): aligned runs from the order's cluster, a free cluster, then another of its order */
START_TEST(swap_runs)
{
	struct swap_dev d;

	ck_assert_int_eq(swap_init(&d, 3 * SWAPFILE_CLUSTER * 4096ULL), 0);
	ck_assert_uint_eq(swap_alloc_order(&d, 4), 512); /* cluster 0 holds the header */
	ck_assert_uint_eq(swap_alloc_order(&d, 4), 528);
	ck_assert_uint_eq(swap_alloc(&d), 1);          /* order 0: cluster 0 */
	ck_assert_uint_eq(swap_alloc_order(&d, 2), 1024); /* another order: its own cluster */
	for (unsigned i = 2; i < 32; i++)
		ck_assert_uint_eq(swap_alloc_order(&d, 4), 512 + 16 * i);
	/* cluster 1 full, no free cluster, cluster 2 is order 2's: none */
	ck_assert_uint_eq(swap_alloc_order(&d, 4), SWAP_NONE);
	for (unsigned i = 0; i < 16; i++)
		swap_free(&d, 544 + i);
	ck_assert_uint_eq(swap_alloc_order(&d, 4), 544); /* its own cluster again */
	/* a run with one slot of it still used is no run */
	for (unsigned i = 1; i < 16; i++)
		swap_free(&d, 560 + i);
	ck_assert_uint_eq(swap_alloc_order(&d, 4), SWAP_NONE);
	ck_assert_uint_eq(swap_alloc_order(&d, 3), SWAP_NONE); /* no cluster for order 3 */
	swap_check_invariants(&d);
	swap_destroy(&d);
}
END_TEST

/*
 * folio_referenced() of an mTHP looks at all its PTEs, and a referenced one is
 * activated whole (folio_nr_pages() in pgactivate): 96M of 64K mTHPs written a
 * MiB at a time on a 64M machine, the first 8M read again after each MiB: those
 * stay resident (no swap-in), 16 of them activated at 16 pages each.
 */
START_TEST(referenced_whole)
{
	size_t cap = 4 << 20, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n, "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, 3, 34, 4294967295, 0 ) "
					      "--> [pre-success] Success(0x80000000)\n", 96U << 20);
	for (unsigned long c = 0; c < 96; c++) {
		for (unsigned long i = 0; i < 16; i++)
			n += (size_t)snprintf(t + n, cap - n, " S %lx,8\n", 0x80000000UL + (c << 20) + (i << 16));
		for (unsigned long i = 0; i < 128; i++)
			n += (size_t)snprintf(t + n, cap - n, " L %lx,8\n", 0x80000000UL + (i << 16) + 4096);
	}
	run(t, "os.memory=64M", "os.thp.enabled=never", "os.thp.sizes.64K.enabled=always", NULL);
	free(t);
	ck_assert_uint_eq(ST(4, SWPOUT), 445);
	ck_assert_uint_eq(S->st.pswpin, 0);
	ck_assert_uint_eq(S->st.pgactivate, 16 * 16);
	done();
}
END_TEST

static Suite *mthp_suite(void)
{
	Suite *s = suite_create("mthp");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, aligned_64k);
	tcase_add_test(tc, highest_enabled_order);
	tcase_add_test(tc, unaligned_vma);
	tcase_add_test(tc, ptes_not_none);
	tcase_add_test(tc, madvise_per_size);
	tcase_add_test(tc, munmap_part);
	tcase_add_test(tc, munmap_whole_by_kernel);
	tcase_add_test(tc, dontneed_part);
	tcase_add_test(tc, fallback_order_by_order);
	tcase_add_test(tc, split_counts_deferred);
	tcase_add_test(tc, madvise_part);
	tcase_add_test(tc, zero_remap_split);
	tcase_add_test(tc, lazyfree_reclaim);
	tcase_add_test(tc, pte_mapped_pmd_split);
	tcase_add_test(tc, config_sizes);
	suite_add_tcase(s, tc);
	tc = tcase_create("underused");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, underused_split);
	tcase_add_test(tc, underused_not);
	tcase_add_test(tc, underused_paths);
	tcase_add_test(tc, underused_collapse);
	tcase_add_test(tc, underused_config);
	tcase_add_test(tc, swapout_whole);
	tcase_add_test(tc, referenced_whole);
	tcase_add_test(tc, swap_runs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(mthp_suite());
}
