/*
 * check_fork.c - fork() and the sharing it starts (fork.c): private anonymous
 * pages shared read-only after copy_page_range(), a store copies (wp_page_copy())
 * or, once no other mm maps the page, reuses it (wp_can_reuse_anon_folio());
 * zero-page PTEs copied; shared anonymous memory shared for real (shmem_fault()
 * finds the other process's page); compaction, reclaim and MADV_PAGEOUT leave a
 * shared page alone; what cannot be shared yet is refused. Every invariant
 * (sim_check_invariants(), which counts a shared page once per mapper) after each
 * step. Driven through sim_event() with EV_FORK / EV_SWITCH, as a trace is.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "kernel.h"
#include "khugepaged.h"
#include "tlbflush.h"

#define BASE 0x40000000UL
#define MB (1UL << 20)
#define PG 4096UL

static void fork_(uint64_t child)
{
	event((struct os_event){ .kind = EV_FORK, .addr = child });
}

static void map(uint64_t len, uint32_t flags)
{
	event((struct os_event){ .kind = EV_MMAP, .addr = BASE, .len = len, .prot = 3,
				 .flags = flags | MAP_ANONYMOUS_, .fd = -1 });
}

static void boot2(const char *set, const char *set2)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	ck_assert_msg(config_set(&c, set, &e) == 0, "%s", e.msg);
	if (set2)
		ck_assert_msg(config_set(&c, set2, &e) == 0, "%s", e.msg);
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
}

static void boot(const char *set)
{
	boot2(set, NULL);
}

/* The frame process @id maps at @va (PFN_NONE: none). */
static pfn_t frame(uint64_t id, vaddr_t va)
{
	struct mm *mm = kernel_mm_find(&S->k, id);
	enum page_size ps;
	pfn_t pfn;

	ck_assert_ptr_nonnull(mm);
	return pt_lookup(&mm->pt, va, &ps, &pfn, NULL) ? pfn : PFN_NONE;
}

static uint64_t anon_rss(uint64_t id)
{
	uint64_t anon, file, huge;

	kernel_mm_rss(&S->k, kernel_mm_find(&S->k, id), &anon, &file, &huge);
	return anon;
}

/* fork, then stores: the first store to a shared page copies it; the last mapper reuses. */
START_TEST(fork_then_write_4k)
{
	uint64_t inval, free0;

	boot("os.thp.enabled=never");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + 16 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 16);
	inval = S->st.tlb_invalidations;
	free0 = S->k.buddy.nr_free_pages;
	fork_(1);
	/* dup_mmap(): the pages shared, counted once; the parent's flush_tlb_mm() */
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 16);
	ck_assert_uint_eq(S->st.tlb_invalidations, inval + 1);
	ck_assert_uint_eq(anon_rss(0), 16 * PG);
	ck_assert_uint_eq(anon_rss(1), 16 * PG);
	ck_assert_uint_eq(frame(0, BASE), frame(1, BASE));
	/* the child's page table took frames, no page was copied */
	ck_assert_uint_eq(free0 - S->k.buddy.nr_free_pages, S->k.mms->next->pt.nr_tables);
	/* the parent reads: no fault; writes page 0: a COW fault and a copy */
	touch(BASE, BASE + 16 * PG, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault, 16);
	touch(BASE, BASE + PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 17);
	ck_assert_uint_eq(S->st.nr_anon_pages, 17);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 15);
	ck_assert_uint_ne(frame(0, BASE), frame(1, BASE));
	/* the child: page 0 is its alone now (reuse, no copy); page 1 is still shared (copy) */
	to(1);
	touch(BASE, BASE + PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 18);
	ck_assert_uint_eq(S->st.nr_anon_pages, 17);
	touch(BASE + PG, BASE + 2 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 19);
	ck_assert_uint_eq(S->st.nr_anon_pages, 18);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 14);
	/* a second store takes no fault: the PTE is writable now */
	touch(BASE, BASE + 2 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 19);
	ck_assert_uint_eq(anon_rss(1), 16 * PG);
	done();
}
END_TEST

/* The child exits: the parent's pages are exclusive again, each store reuses its page. */
START_TEST(child_exit_then_reuse)
{
	uint64_t free0;

	boot("os.thp.enabled=never");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + 16 * PG, R_STORE);
	fork_(1);
	to(1);
	event((struct os_event){ .kind = EV_EXIT });
	ck_assert_uint_eq(S->k.nr_shared_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	to(0);
	free0 = S->k.buddy.nr_free_pages;
	/* the PTEs are still read-only: 16 write faults, no page allocated */
	touch(BASE, BASE + 16 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 32);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0);
	done();
}
END_TEST

/* The parent exits first: the child keeps every page (the reverse map moves to it). */
START_TEST(parent_exit_first)
{
	boot("os.thp.enabled=never");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + 8 * PG, R_STORE);
	fork_(1);
	event((struct os_event){ .kind = EV_EXIT });
	ck_assert_uint_eq(S->st.nr_anon_pages, 8);
	ck_assert_ptr_eq(S->k.rmap_mm[frame(1, BASE)], kernel_mm_find(&S->k, 1));
	to(1);
	touch(BASE, BASE + 8 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 8);
	event((struct os_event){ .kind = EV_EXIT });
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();
}
END_TEST

/* Zero-page PTEs are copied in a VMA with an anon_vma; a VMA of zero pages alone is not. */
START_TEST(zero_pages)
{
	boot("os.thp.enabled=never");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + 4 * PG, R_LOAD); /* no anon_vma yet: vma_needs_copy() false */
	fork_(1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 4);
	ck_assert_uint_eq(frame(1, BASE), PFN_NONE);
	touch(BASE + 4 * PG, BASE + 5 * PG, R_STORE); /* now it has one */
	fork_(2);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 8);
	ck_assert_uint_eq(frame(2, BASE), S->k.thp.zero_pfn);
	to(2);
	touch(BASE, BASE + PG, R_STORE); /* wp_page_copy() from the zero page */
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 7);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
}
END_TEST

/* MAP_SHARED | MAP_ANONYMOUS: one set of pages; a store in one is seen by the other. */
START_TEST(shared_anonymous)
{
	boot("os.thp.enabled=never");
	map(MB, MAP_SHARED_);
	touch(BASE, BASE + 4 * PG, R_STORE);
	fork_(1);
	/* shmem has no anon_vma: nothing copied, the child faults the pages in */
	ck_assert_uint_eq(frame(1, BASE), PFN_NONE);
	to(1);
	touch(BASE, BASE + 4 * PG, R_LOAD);
	/* one fault: do_fault_around() maps the object's other 3 pages with it */
	ck_assert_uint_eq(S->st.pgfault, 5);
	ck_assert_uint_eq(S->st.nr_anon_pages, 4); /* the same pages: shmem_fault() found them */
	ck_assert_uint_eq(frame(1, BASE), frame(0, BASE));
	touch(BASE, BASE + 4 * PG, R_STORE); /* mapped writable: no fault, no copy */
	ck_assert_uint_eq(S->st.pgfault, 5);
	touch(BASE + 5 * PG, BASE + 6 * PG, R_STORE); /* a new page, in the child */
	ck_assert_uint_eq(S->st.nr_anon_pages, 5);
	to(0);
	touch(BASE + 5 * PG, BASE + 6 * PG, R_LOAD); /* the parent sees it */
	ck_assert_uint_eq(S->st.pgfault, 7);
	ck_assert_uint_eq(S->st.nr_anon_pages, 5);
	ck_assert_uint_eq(frame(0, BASE + 5 * PG), frame(1, BASE + 5 * PG));
	done();
}
END_TEST

/* MADV_PAGEOUT and kswapd leave a shared page alone; compaction does not migrate it. */
START_TEST(reclaim_skips_shared)
{
	boot2("os.thp.enabled=never", "os.swap.size=64M");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + 8 * PG, R_STORE);
	fork_(1);
	event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = 8 * PG, .advice = MADV_PAGEOUT_ });
	ck_assert_uint_eq(S->st.pswpout, 0);
	touch(BASE, BASE + 2 * PG, R_STORE); /* two pages the parent's alone: copies */
	event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = 8 * PG, .advice = MADV_PAGEOUT_ });
	ck_assert_uint_eq(S->st.pswpout, 2);
	done();
}
END_TEST

static uint64_t huge_rss(uint64_t id)
{
	uint64_t anon, file, huge;

	kernel_mm_rss(&S->k, kernel_mm_find(&S->k, id), &anon, &file, &huge);
	return huge;
}

/* Two THPs of process 0, forked to process 1 (copy_huge_pmd()). */
static void thp_fork(void)
{
	boot("os.thp.enabled=always");
	map(4 * MB, MAP_PRIVATE_);
	touch(BASE, BASE + 4 * MB, R_STORE);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	fork_(1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2); /* NR_ANON_THPS: folios */
	ck_assert_uint_eq(S->k.thp.nr_shared_pmds, 2);
	ck_assert_uint_eq(huge_rss(0), 4 * MB);
	ck_assert_uint_eq(huge_rss(1), 4 * MB);
	ck_assert_uint_eq(frame(0, BASE), frame(1, BASE));
}

/* A store into a shared THP: the writer's PMD is split, 4 KiB copied; the other keeps its PMD. */
START_TEST(fork_then_write_thp)
{
	thp_fork();
	touch(BASE, BASE + PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 3);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0); /* the child's PMD maps it whole */
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1); /* the copy */
	ck_assert_uint_eq(S->k.nr_shared_ptes, 511);
	ck_assert_uint_eq(huge_rss(0), 2 * MB);
	ck_assert_uint_eq(anon_rss(0), 4 * MB);
	ck_assert_uint_eq(huge_rss(1), 4 * MB);
	ck_assert_uint_ne(frame(0, BASE), frame(1, BASE));
	ck_assert_uint_eq(frame(0, BASE + PG), frame(1, BASE) + 1); /* (the PMD's first frame) */
	/* the next page: a PTE of a folio the child maps by PMD: copied, no split */
	touch(BASE + PG, BASE + 2 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 4);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 510);
	done();
}
END_TEST

/* Both write: each splits its own PMD and copies 4 KiB; the child's exit leaves a partial THP. */
START_TEST(both_write_thp)
{
	thp_fork();
	touch(BASE, BASE + PG, R_STORE);
	to(1);
	touch(BASE + 2 * PG, BASE + 3 * PG, R_STORE);
	ck_assert_uint_eq(S->st.thp_split_pmd, 2);
	/* the folio is PTE-mapped now: 512 pages in nr_anon_pages, plus the two copies */
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512 + 2);
	ck_assert_uint_eq(huge_rss(1), 2 * MB);
	ck_assert_uint_eq(anon_rss(1), 4 * MB);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0);
	/* the child exits: page 0 of the folio was its alone (the parent copied it) */
	event((struct os_event){ .kind = EV_EXIT });
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 511 + 1);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 0);
	ck_assert_uint_eq(S->k.thp.nr_shared_pmds, 0);
	ck_assert_uint_eq(anon_rss(0), 4 * MB);
	done();
}
END_TEST

/* The child exits before any store: the parent's PMDs are exclusive again and reused. */
START_TEST(thp_child_exit_then_reuse)
{
	uint64_t free0;

	thp_fork();
	to(1);
	event((struct os_event){ .kind = EV_EXIT });
	ck_assert_uint_eq(S->k.thp.nr_shared_pmds, 0);
	to(0);
	free0 = S->k.buddy.nr_free_pages;
	touch(BASE, BASE + 4 * MB, R_STORE); /* one write fault per read-only PMD */
	ck_assert_uint_eq(S->st.pgfault, 4);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0);
	done();
}
END_TEST

/*
 * A PTE-mapped 64K mTHP across a fork (copy_present_ptes(): its 16 PTEs shared,
 * a mapcount per page): the child's store copies 4 KiB; the parent's store to a
 * page only it maps now still copies (6.15+ __wp_can_reuse_large_anon_folio():
 * the folio is mapped by two mms); the parent exits: the folio, its copied
 * pages unmapped, is queued for deferred split and the shrinker frees them.
 */
START_TEST(fork_mthp)
{
	uint64_t free0, splits;

	boot2("os.thp.enabled=never", "os.thp.sizes.64K.enabled=always");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + PG, R_STORE);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_ANON_FAULT_ALLOC], 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	fork_(1);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_NR_ANON], 1);
	ck_assert_uint_eq(anon_rss(1), 16 * PG);
	ck_assert_uint_eq(frame(0, BASE + 5 * PG), frame(1, BASE + 5 * PG));
	/* the child: pages 0 and 1 copied (a COW fault each, 4 KiB, no new mTHP) */
	to(1);
	touch(BASE, BASE + 2 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 3);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_ANON_FAULT_ALLOC], 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 18);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 14);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_SPLIT_DEFERRED], 0); /* the parent maps every page */
	/* the parent: page 0 is its alone, but the folio is the child's too: copied */
	to(0);
	free0 = S->k.buddy.nr_free_pages;
	touch(BASE, BASE + PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 4);
	ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0 - 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 18); /* the copy in, folio page 0 unmapped */
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_SPLIT_DEFERRED], 1); /* partially mapped now */
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED], 1);
	/* the parent exits: page 1 goes too; pages 2..15 are the child's alone */
	event((struct os_event){ .kind = EV_EXIT });
	ck_assert_uint_eq(S->k.nr_shared_ptes, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16); /* 14 folio pages + the child's 2 copies */
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_SPLIT_DEFERRED], 1);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_NR_ANON], 1);
	/* now the child alone maps the folio: a store reuses its page in place */
	to(1);
	free0 = S->k.buddy.nr_free_pages;
	touch(BASE + 2 * PG, BASE + 3 * PG, R_STORE);
	ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	splits = S->st.mthp[4][MTHP_STAT_SPLIT];
	/* pages 0 and 1, unmapped, and 3..15, never stored to: the split maps them
	 * to the zero page (6.12+); page 2, the child's store, stays */
	ck_assert_uint_eq(thp_shrink_deferred(&S->k), 15);
	ck_assert_uint_eq(S->st.nr_anon_pages, 3); /* page 2 and the child's two copies */
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 13);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_SPLIT], splits + 1);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_NR_ANON], 0);
	ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED], 0);
	sim_check_invariants(S);
	done();
	/* the child gone, the parent alone maps the folio: 6.18 reuses, 6.12 copies */
	for (int v = 0; v < 2; v++) {
		boot2(v ? "os.kernel=6.12" : "os.kernel=6.18", "os.thp.sizes.64K.enabled=always");
		map(MB, MAP_PRIVATE_); /* 1M: no 2M THP fits, the 64K mTHP does */
		touch(BASE, BASE + PG, R_STORE);
		ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_ANON_FAULT_ALLOC], 1);
		fork_(1);
		to(1);
		event((struct os_event){ .kind = EV_EXIT });
		to(0);
		free0 = S->k.buddy.nr_free_pages;
		touch(BASE + PG, BASE + 2 * PG, R_STORE);
		ck_assert_uint_eq(S->st.pgfault, 2);
		ck_assert_uint_eq(S->k.buddy.nr_free_pages, free0 - (uint64_t)v);
		ck_assert_uint_eq(S->st.mthp[4][MTHP_STAT_SPLIT_DEFERRED], (uint64_t)v);
		done();
	}
}
END_TEST

/*
 * 512 4K pages of process 0 in one 2M range, shared with process 1 by a fork;
 * the child copies the first @child_writes of them, the parent stores to page 0.
 */
static void shared_range(unsigned child_writes)
{
	boot("os.thp.enabled=madvise");
	map(2 * MB, MAP_PRIVATE_);
	touch(BASE, BASE + 2 * MB, R_STORE);
	fork_(1);
	to(1);
	touch(BASE, BASE + (vaddr_t)child_writes * PG, R_STORE);
	to(0);
	event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = 2 * MB, .advice = MADV_HUGEPAGE_ });
	S->k.khugepaged.next_wake = UINT64_MAX; /* the daemon kept asleep: the scans are the test's */
	touch(BASE, BASE + PG, R_STORE); /* page 0: reused if the child copied it, else copied */
	ck_assert_uint_eq(S->k.nr_shared_ptes, 512 - child_writes - !child_writes);
}

/* khugepaged: 511 shared PTEs exceed max_ptes_shared (256): SCAN_EXCEED_SHARED_PTE. */
START_TEST(khugepaged_over_max_ptes_shared)
{
	shared_range(0);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, BASE, false), SCAN_EXCEED_SHARED_PTE);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_scan_exceed_share_pte, 1);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	done();
}
END_TEST

/* khugepaged: 256 shared PTEs (the limit) collapse; the shared pages stay the child's. */
START_TEST(khugepaged_at_max_ptes_shared)
{
	pfn_t child0, child511;

	shared_range(256);
	child0 = frame(1, BASE);
	child511 = frame(1, BASE + 511 * PG);
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, BASE, false), SCAN_SUCCEED);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.thp_scan_exceed_share_pte, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	/* the parent's 256 pages it alone had are freed; the child keeps its 512 */
	ck_assert_uint_eq(S->st.nr_anon_pages, 512);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 0);
	ck_assert_uint_eq(frame(1, BASE), child0);
	ck_assert_uint_eq(frame(1, BASE + 511 * PG), child511);
	ck_assert_uint_eq(huge_rss(0), 2 * MB);
	ck_assert_uint_eq(anon_rss(1), 2 * MB);
	done();
}
END_TEST

/* MADV_COLLAPSE ignores max_ptes_shared: 511 shared PTEs collapse. */
START_TEST(madv_collapse_over_shared)
{
	shared_range(0);
	event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = 2 * MB, .advice = MADV_COLLAPSE_ });
	ck_assert_uint_eq(S->st.thp_scan_exceed_share_pte, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512); /* the child's, no longer shared */
	ck_assert_uint_eq(S->k.nr_shared_ptes, 0);
	ck_assert_uint_eq(huge_rss(0), 2 * MB);
	ck_assert_uint_eq(huge_rss(1), 0);
	done();
}
END_TEST

/*
 * 512 pages shared read-only by a fork, none written since (no writable PTE):
 * the child's MADV_COLLAPSE collapses them from 6.18 on ("mm: enable khugepaged
 * to operate on non-writable VMAs"; tests/native_procs.sh fork-collapse): one
 * THP copied for the child, writable (maybe_pmd_mkwrite()), the parent keeps
 * its 512 pages, exclusive again; its next store reuses a page in place.
 */
START_TEST(madv_collapse_read_only_shared)
{
	pfn_t parent0;

	boot("os.thp.enabled=madvise");
	map(2 * MB, MAP_PRIVATE_);
	touch(BASE, BASE + 2 * MB, R_STORE);
	fork_(1);
	parent0 = frame(0, BASE);
	to(1);
	S->k.khugepaged.next_wake = UINT64_MAX;
	ck_assert_uint_eq(S->k.nr_shared_ptes, 512);
	event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = 2 * MB, .advice = MADV_COLLAPSE_ });
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512); /* the parent's */
	ck_assert_uint_eq(S->k.nr_shared_ptes, 0);
	ck_assert_uint_eq(huge_rss(1), 2 * MB);
	ck_assert_uint_eq(anon_rss(0), 2 * MB);
	ck_assert_uint_eq(frame(0, BASE), parent0);
	S->st.pgfault = 0;
	touch(BASE, BASE + MB, R_STORE); /* the child's PMD is writable: no fault */
	ck_assert_uint_eq(S->st.pgfault, 0);
	to(0);
	touch(BASE, BASE + PG, R_STORE); /* reused in place (wp_can_reuse_anon_folio()) */
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(frame(0, BASE), parent0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512);
	done();
}
END_TEST

/* Before 6.18 the same range has no writable PTE: SCAN_PAGE_RO, nothing allocated. */
START_TEST(madv_collapse_read_only_shared_6_12)
{
	boot2("os.thp.enabled=madvise", "os.kernel=6.12");
	map(2 * MB, MAP_PRIVATE_);
	touch(BASE, BASE + 2 * MB, R_STORE);
	fork_(1);
	to(1);
	S->k.khugepaged.next_wake = UINT64_MAX;
	ck_assert_int_eq(khugepaged_scan_pmd(&S->k, BASE, true), SCAN_PAGE_RO);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 512);
	done();
}
END_TEST

/*
 * A static binary's segments: .rodata read-only, then a writable segment at the
 * next file offset whose first page (RELRO) the program makes read-only after
 * its relocation stores. That range keeps VM_ACCOUNT (mprotect_fixup() does not
 * unaccount a file VMA), so it does not merge with .rodata (vma_merge()
 * compares the flags); the fork copies the RELRO page (its VMA has an
 * anon_vma) and leaves .rodata to refault (vma_needs_copy()).
 */
START_TEST(relro_apart_from_rodata)
{
	struct mm *mm;

	boot("os.thp.enabled=never");
	event((struct os_event){ .kind = EV_MMAP, .addr = BASE, .len = 2 * PG, .prot = 1,
				 .flags = MAP_PRIVATE_, .fd = 3, .file = 1 });
	event((struct os_event){ .kind = EV_MMAP, .addr = BASE + 2 * PG, .len = 2 * PG, .prot = 3,
				 .flags = MAP_PRIVATE_ | MAP_FIXED_, .fd = 3, .file = 1, .off = 2 * PG });
	touch(BASE + 2 * PG, BASE + 3 * PG, R_STORE); /* a relocation: a private copy */
	event((struct os_event){ .kind = EV_MPROTECT, .addr = BASE + 2 * PG, .len = PG, .prot = 1 });
	touch(BASE, BASE + PG, R_LOAD); /* .rodata: page-cache pages, fault-around */
	mm = kernel_mm_find(&S->k, 0);
	ck_assert_uint_eq(mm->vmas.n, 3);
	ck_assert_uint_eq(mm->vmas.v[0].end, BASE + 2 * PG);
	ck_assert_uint_eq(mm->vmas.v[0].flags & (VM_ACCOUNT | VM_ANON_VMA), 0);
	ck_assert_uint_eq(mm->vmas.v[1].flags & (VM_ACCOUNT | VM_ANON_VMA | VM_WRITE),
			  VM_ACCOUNT | VM_ANON_VMA);
	ck_assert_uint_eq(mm->vmas.v[2].flags & (VM_ACCOUNT | VM_WRITE), VM_ACCOUNT | VM_WRITE);
	ck_assert_uint_ne(frame(0, BASE), PFN_NONE);
	fork_(1);
	ck_assert_uint_eq(frame(1, BASE), PFN_NONE);
	ck_assert_uint_eq(frame(1, BASE + 2 * PG), frame(0, BASE + 2 * PG));
	done();
}
END_TEST

/* mprotect(PROT_READ) then (PROT_READ | PROT_WRITE) leaves shared pages read-only: a store still copies. */
START_TEST(mprotect_keeps_shared_read_only)
{
	boot("os.thp.enabled=never");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + 4 * PG, R_STORE);
	fork_(1);
	event((struct os_event){ .kind = EV_MPROTECT, .addr = BASE, .len = MB, .prot = 1 });
	event((struct os_event){ .kind = EV_MPROTECT, .addr = BASE, .len = MB, .prot = 3 });
	touch(BASE, BASE + 4 * PG, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 8);
	ck_assert_uint_eq(S->st.nr_anon_pages, 8);
	ck_assert_uint_eq(S->k.nr_shared_ptes, 0);
	done();
}
END_TEST

/* What the model cannot share yet is refused, by name. */
START_TEST(refused)
{
	boot2("os.thp.enabled=never", "os.swap.size=64M");
	map(MB, MAP_PRIVATE_);
	touch(BASE, BASE + 8 * PG, R_STORE);
	event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = 8 * PG, .advice = MADV_PAGEOUT_ });
	ck_assert_uint_eq(S->st.pswpout, 8);
	ck_assert_int_eq(sim_event(S, &(struct os_event){ .kind = EV_FORK, .addr = 1 }), -1);
	ck_assert_str_eq(S->k.fail_msg, "fork of process 0: a process with swapped-out pages cannot be forked yet");
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fork");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fork_then_write_4k);
	tcase_add_test(tc, child_exit_then_reuse);
	tcase_add_test(tc, parent_exit_first);
	tcase_add_test(tc, zero_pages);
	tcase_add_test(tc, shared_anonymous);
	tcase_add_test(tc, reclaim_skips_shared);
	tcase_add_test(tc, fork_then_write_thp);
	tcase_add_test(tc, both_write_thp);
	tcase_add_test(tc, thp_child_exit_then_reuse);
	tcase_add_test(tc, fork_mthp);
	tcase_add_test(tc, khugepaged_over_max_ptes_shared);
	tcase_add_test(tc, khugepaged_at_max_ptes_shared);
	tcase_add_test(tc, madv_collapse_over_shared);
	tcase_add_test(tc, madv_collapse_read_only_shared);
	tcase_add_test(tc, relro_apart_from_rodata);
	tcase_add_test(tc, madv_collapse_read_only_shared_6_12);
	tcase_add_test(tc, mprotect_keeps_shared_read_only);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return check_run(s);
}
