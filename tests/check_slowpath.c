/*
 * check_slowpath.c - the costly-order allocation slow path (issue 12 items 1, 2,
 * 8): scenarios in lackey + --trace-syscalls syntax (check_common.h) whose
 * counters are derived step by step from Linux 6.6-6.18 mm/page_alloc.c
 * (__alloc_pages_slowpath(), __alloc_pages_direct_compact()), mm/compaction.c
 * (try_to_compact_pages(), compaction_deferred(), defer_compaction()),
 * mm/vmscan.c (try_to_free_pages(), compaction_ready()), mm/mempolicy.c
 * (vma_alloc_folio(): the local-node NORETRY try, then the fault's own mask) and
 * mm/huge_memory.c (vma_thp_gfp_mask(), get_huge_zero_page()).
 *
 * The fragmented machine: os.fragmentation.unmovable=1 pins one unmovable page
 * in every pageblock, so no order-9 block is ever free and compaction can never
 * make one (COMPACT_COMPLETE at every run that is not deferred), while almost
 * all memory is free: compaction_suitable() holds (order-0 free pages above low
 * + 1024, fragindex near 1000 > 500), and direct reclaim finds compaction ready
 * (free pages above high + 1024) and skips the zone: allocstall counts, nothing
 * is scanned. khugepaged's defrag is off in these runs (GFP_TRANSHUGE_LIGHT: it
 * neither compacts nor reclaims), so every stall below is a fault's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "compaction.h"
#include "reclaim.h"

#define MMAP_6M "SYSCALL[7,1](9) sys_mmap ( 0x0, 6291456, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
#define MADV_HUGE_6M "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 6291456, 14 ) --> [pre-success] Success(0x0)\n"
#define THREE_STORES " S 40000010,8\n S 40200010,8\n S 40400010,8\n"

/*
 * Item 1, defrag=madvise and MADV_HUGEPAGE: vma_thp_gfp_mask() = GFP_TRANSHUGE.
 * Each fault makes two requests (vma_alloc_folio()): (a) | __GFP_THISNODE |
 * __GFP_NORETRY: async compaction, then nopage on any failure (SKIPPED/DEFERRED,
 * or __GFP_THISNODE: 9c9828d3ead6); (b) GFP_TRANSHUGE: async compaction, direct
 * reclaim (allocstall_movable; compaction ready: nothing reclaimed), sync-light
 * compaction. compaction_deferred() increments compact_considered at each
 * non-SYNC_FULL call and defers while it stays below 1 << compact_defer_shift;
 * only the sync-light COMPLETE defers (defer_compaction(): considered = 0,
 * shift + 1).
 *   fault 1: (a) async run (considered 1 >= 1): stall, fail, nopage.
 *            (b) async run: stall, fail; reclaim; sync light run: COMPLETE,
 *                stall, fail, defer (shift 1).                       -> 3 stalls
 *   fault 2: (a) considered 1 < 2: DEFERRED: stall, fail (scanned nothing),
 *                nopage.  (b) async: considered 2: runs: stall, fail; reclaim;
 *                sync light: considered 3 >= 2: runs, COMPLETE, stall, fail,
 *                defer (shift 2, considered 0).                      -> 6 stalls
 *   fault 3: (a) considered 1 < 4: DEFERRED, stall, fail, nopage. (b) async:
 *                2 < 4 DEFERRED, stall, fail, and not NORETRY: reclaim; sync
 *                light: 3 < 4 DEFERRED: stall, fail.                 -> 9 stalls
 * Before (one attempt per fault, deferred ones uncounted): compact_stall 2,
 * compact_fail 2, allocstall_normal 0 (no reclaim: free pages were plenty).
 */
START_TEST(madvised_fault_compacts_reclaims_compacts)
{
	run(MMAP_6M MADV_HUGE_6M THREE_STORES, "os.fragmentation.unmovable=1",
	    "os.khugepaged.defrag=false", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 3);
	ck_assert_uint_eq(S->st.compact_stall, 9);
	ck_assert_uint_eq(S->st.compact_fail, 9);
	ck_assert_uint_eq(S->st.compact_success, 0);
	ck_assert_uint_eq(S->st.allocstall_movable, 3); /* one per (b) */
	ck_assert_uint_eq(S->st.allocstall_normal, 0);
	ck_assert_uint_eq(S->st.pgscan_direct, 0); /* compaction_ready(): zone skipped */
	ck_assert_uint_eq(S->k.buddy.compact_defer_shift, 2);
	ck_assert_uint_eq(S->k.buddy.compact_considered, 3);
	/* defer_compaction() lowers compact_order_failed to the order only from above:
	 * the zone starts at 0 (zeroed), so 9 < 0 never holds and it stays 0 */
	ck_assert_int_eq(S->k.buddy.compact_order_failed, 0);
	done();
}
END_TEST

/*
 * Item 1, defrag=always without MADV_HUGEPAGE: GFP_TRANSHUGE | __GFP_NORETRY.
 * (a) | __GFP_THISNODE: async COMPLETE: stall, fail, nopage. (b): async COMPLETE
 * (not SKIPPED/DEFERRED): stall, fail; priority stays async; reclaim
 * (allocstall_movable); async again: stall, fail; __GFP_NORETRY: nopage. Async
 * compaction never defers, so every fault costs the same: 3 stalls, 1 allocstall.
 * Before: 1 stall a fault (async then sync light counted once), no reclaim, and
 * the sync-light runs deferred the third fault (compact_stall 2).
 * defrag=defer and never, and madvise without MADV_HUGEPAGE, are
 * GFP_TRANSHUGE_LIGHT: no compaction, no reclaim.
 */
START_TEST(noretry_fault_stays_async)
{
	run(MMAP_6M THREE_STORES, "os.fragmentation.unmovable=1", "os.thp.defrag=always",
	    "os.khugepaged.defrag=false", NULL);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 3);
	ck_assert_uint_eq(S->st.compact_stall, 9);
	ck_assert_uint_eq(S->st.compact_fail, 9);
	ck_assert_uint_eq(S->st.allocstall_movable, 3);
	ck_assert_uint_eq(S->k.buddy.compact_defer_shift, 0); /* async never defers */
	done();
	/* the same madvised under defrag=always: GFP_TRANSHUGE, as the madvise case */
	run(MMAP_6M MADV_HUGE_6M THREE_STORES, "os.fragmentation.unmovable=1",
	    "os.thp.defrag=always", "os.khugepaged.defrag=false", NULL);
	ck_assert_uint_eq(S->st.compact_stall, 9);
	ck_assert_uint_eq(S->st.allocstall_movable, 3);
	ck_assert_uint_eq(S->k.buddy.compact_defer_shift, 2);
	done();
	for (unsigned i = 0; i < 4; i++) {
		static const char *const light[][2] = { { "os.thp.defrag=defer", MADV_HUGE_6M },
							{ "os.thp.defrag=never", MADV_HUGE_6M },
							{ "os.thp.defrag=madvise", "" },
							{ "os.thp.defrag=defer+madvise", "" } };
		char t[1024];

		snprintf(t, sizeof(t), "%s%s%s", MMAP_6M, light[i][1], THREE_STORES);
		run(t, "os.fragmentation.unmovable=1", light[i][0], "os.khugepaged.defrag=false", NULL);
		ck_assert_msg(S->st.thp_fault_fallback == 3, "%s", light[i][0]);
		ck_assert_msg(S->st.compact_stall == 0, "%s", light[i][0]);
		ck_assert_msg(S->st.allocstall_movable == 0, "%s", light[i][0]);
		done();
	}
}
END_TEST

/*
 * Item 2: the deferred split shrinker (deferred_split_scan()) is a shrinker:
 * only shrink_slab() runs it, from kswapd and direct reclaim. 64 MiB with 90 %
 * of its pageblocks pinned: the first THP is partly unmapped (queued:
 * thp_deferred_split_page), then THP faults take the free pageblocks until none
 * is left and the rest fall back under GFP_TRANSHUGE_LIGHT (defrag=madvise, no
 * MADV_HUGEPAGE), which neither reclaims nor compacts: the THP stays queued.
 * Before: every failed order-9 allocation ran the shrinker (thp_split_page 1).
 * Then a direct reclaim (order 0, so no compaction_ready() skip) runs it.
 */
START_TEST(deferred_split_only_from_reclaim)
{
	size_t cap = 1 << 16, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, 33554432, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n"
			      " S 80000010,8\n"
			      "SYSCALL[7,1](11) sys_munmap ( 0x80000000, 1048576 )[sync] --> Success(0x0)\n");
	for (unsigned i = 1; i < 16; i++)
		n += (size_t)snprintf(t + n, cap - n, " S %x,8\n", 0x80000010u + (i << 21));
	run(t, "os.memory=64M", "os.fragmentation.unmovable=0.9", "os.swap.size=0",
	    "os.khugepaged.defrag=false", NULL);
	free(t);
	ck_assert_uint_gt(S->st.thp_fault_alloc, 1);
	ck_assert_uint_gt(S->st.thp_fault_fallback, 0);
	ck_assert_uint_eq(S->st.thp_fault_alloc + S->st.thp_fault_fallback, 16);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->k.thp.nr_deferred, 1);
	ck_assert_uint_eq(S->st.pageoutrun, 0); /* kswapd never woke */
	ck_assert_uint_eq(S->st.compact_stall, 0);
	ck_assert_uint_eq(S->st.allocstall_movable, 0);
	reclaim_direct(&S->k, 0, GFP_HIGHUSER_MOVABLE);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.allocstall_movable, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	ck_assert_uint_eq(S->k.thp.nr_deferred, 0);
	done();
}
END_TEST

/*
 * Item 8: get_huge_zero_page() allocates with (GFP_TRANSHUGE | __GFP_ZERO) &
 * ~__GFP_MOVABLE through alloc_pages(): one request (no vma policy), UNMOVABLE,
 * direct compaction and reclaim whatever defrag says, reclaim counted in
 * allocstall_normal (gfp_zone() without __GFP_MOVABLE is ZONE_NORMAL on x86-64).
 * On the pinned machine, read fault 1: async COMPLETE (stall, fail), reclaim
 * (allocstall_normal), sync light COMPLETE (stall, fail, defer shift 1): the
 * page is not there: thp_zero_page_alloc_failed, thp_fault_fallback. Read fault
 * 2 retries: async considered 1 < 2 DEFERRED (stall, fail), reclaim, sync light
 * considered 2 >= 2 runs (stall, fail). Before: the zero page came from the
 * MOVABLE lists, no compaction or reclaim, no failure counter (compact_stall 0,
 * allocstall 0); on a free machine its pageblock stayed MOVABLE.
 */
START_TEST(huge_zero_page_unmovable)
{
	run(MMAP_4M " L 40000010,8\n L 40200010,8\n", "os.fragmentation.unmovable=1",
	    "os.khugepaged.defrag=false", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 0);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc_failed, 2);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 2);
	ck_assert_uint_eq(S->st.compact_stall, 4);
	ck_assert_uint_eq(S->st.compact_fail, 4);
	ck_assert_uint_eq(S->st.allocstall_normal, 2);
	ck_assert_uint_eq(S->st.allocstall_movable, 0);
	ck_assert_uint_eq(S->k.buddy.compact_defer_shift, 2);
	done();
	/* free memory: allocated once, from an UNMOVABLE-claimed pageblock */
	run(MMAP_4M " L 40000010,8\n L 40200010,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 1);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc_failed, 0);
	ck_assert_uint_eq(S->st.compact_stall, 0);
	ck_assert_int_eq(buddy_pageblock_mt(&S->k.buddy, S->k.thp.huge_zero_pfn), MIGRATE_UNMOVABLE);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slowpath");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, madvised_fault_compacts_reclaims_compacts);
	tcase_add_test(tc, noretry_fault_stays_async);
	tcase_add_test(tc, deferred_split_only_from_reclaim);
	tcase_add_test(tc, huge_zero_page_unmovable);
	suite_add_tcase(s, tc);
	return check_run(s);
}
