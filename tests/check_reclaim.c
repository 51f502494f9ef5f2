/*
 * check_reclaim.c - memory pressure (mm/vmscan.c, mm/swap.c, do_swap_page()):
 * kswapd swapping the oldest 4K pages out and a major fault bringing one back,
 * folio_check_references()'s second chance and activation, whole-THP swap-out
 * into a free cluster and the split fallback without one (these three moved out
 * of check_thp.c unchanged); then the inactive list's order and the second
 * chance worked by hand through direct reclaim, and a major fault's page back on
 * the list. Scenarios on lackey traces with every invariant checked
 * (check_common.h) and after each direct call.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "reclaim.h"

/*
 * Swap under pressure, 4K pages: 96 MiB stored to in 64 MiB of memory. kswapd
 * (woken below the low watermark) swaps the oldest pages out; the run ends; the
 * first page, read again, comes back by a major fault.
 */
START_TEST(swap_under_pressure)
{
	char *t = fill_trace(96, 4096, 0x80000010UL, "");
	uint64_t pages = 96 << 8;

	check_every = 997;
	run(t, "os.memory=64M", "os.mode=base", NULL);
	check_every = 1;
	free(t);
	ck_assert_uint_gt(S->st.pswpout, pages - (64 << 8)); /* more than the overflow */
	ck_assert_uint_eq(S->st.pswpin, 1);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->st.pgfault, pages + 1);
	/* every page touched is resident or in swap, exactly once */
	ck_assert_uint_eq(S->st.nr_anon_pages + S->k.mm->pt.nr_swap, pages);
	ck_assert_uint_eq(S->st.swap_bytes, S->k.mm->pt.nr_swap * 4096);
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, S->st.pswpout - S->st.pswpin);
	/* all reclaim was kswapd's, all of it to swap; nothing was referenced twice */
	ck_assert_uint_eq(S->st.pgsteal_kswapd, S->st.pswpout);
	ck_assert_uint_eq(S->st.pgsteal_direct, 0);
	ck_assert_uint_eq(S->st.allocstall_normal, 0);
	ck_assert_uint_eq(S->st.allocstall_movable, 0);
	ck_assert_uint_ge(S->st.pgscan_kswapd, S->st.pgsteal_kswapd);
	ck_assert_uint_gt(S->st.pageoutrun, 0);
	ck_assert_uint_gt(S->st.tlb_invalidations, 0);
	/* the cost is visible: one swap-in on the application's fault cycles */
	ck_assert_uint_ge(S->st.cyc_fault, S->cfg.cost.swap_in);
	ck_assert_uint_ge(S->k.buddy.nr_free_pages, buddy_watermark(&S->k.buddy, WMARK_MIN));
	done();
}
END_TEST

/*
 * folio_check_references(): A = [0, 40 MiB) stored to; B = [40, 64) pushes memory
 * below the watermark: reclaim's first lap finds every page young once (sets
 * PG_referenced, clears A, rotates); then A's last 10 MiB are stored to again (a
 * TLB miss walks and sets A); C = [64, 100) keeps reclaim going: those 2560
 * pages, young with PG_referenced, are activated, and the others swapped.
 */
START_TEST(swap_second_chance)
{
	size_t cap = 8 << 20, n = 0;
	char *t = malloc(cap);
	static const unsigned long pass[4][2] = { { 0, 40 }, { 40, 64 }, { 30, 40 }, { 64, 100 } };

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n, "%s",
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, 104857600, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n");
	for (unsigned k = 0; k < 4; k++)
		for (unsigned long off = pass[k][0] << 20; off < pass[k][1] << 20; off += 4096)
			n += (size_t)snprintf(t + n, cap - n, " S %lx,8\n", 0x80000000UL + off);
	check_every = 1999;
	run(t, "os.memory=64M", "os.mode=base", NULL);
	check_every = 1;
	free(t);
	ck_assert_uint_gt(S->st.pswpout, 0);
	ck_assert_uint_eq(S->st.pgmajfault, 0);
	ck_assert_uint_eq(S->st.pgactivate, 2560);
	ck_assert_uint_eq(S->k.lru.nr[LRU_ACTIVE_ANON], 2560); /* all still resident */
	ck_assert_uint_eq(S->st.nr_anon_pages + S->k.mm->pt.nr_swap, 100 << 8);
	ck_assert_uint_eq(S->st.pgfault, 100 << 8);
	done();
}
END_TEST

/*
 * THPs under pressure: 2M faults until memory runs short; kswapd swaps whole
 * THPs out (one free swap cluster each: thp_swpout, their PMDs split into swap
 * entries), and one swapped address comes back as a 4K page.
 */
START_TEST(swap_thp_whole_and_fallback)
{
	char *t = fill_trace(96, 2 << 20, 0x80000010UL, "");

	run(t, "os.memory=64M", NULL);
	ck_assert_uint_gt(S->st.thp_swpout, 0);
	ck_assert_uint_eq(S->st.thp_swpout_fallback, 0);
	ck_assert_uint_eq(S->st.pswpout, S->st.thp_swpout * 512);
	ck_assert_uint_eq(S->st.thp_split_pmd, S->st.thp_swpout);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.pswpin, 1);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, S->st.pswpout - 1);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 48);
	done();

	/* a swap device without a free cluster (one cluster, the header in it) */
	run(t, "os.memory=64M", "os.swap.size=2M", NULL);
	free(t);
	ck_assert_uint_eq(S->st.thp_swpout, 0);
	ck_assert_uint_gt(S->st.thp_swpout_fallback, 0);
	ck_assert_uint_eq(S->st.thp_split_page, S->st.thp_swpout_fallback);
	ck_assert_uint_eq(S->st.thp_split_pmd, S->st.thp_swpout_fallback);
	ck_assert_uint_le(S->st.pswpout, 511);
	ck_assert_uint_eq(S->k.mm->pt.nr_swap + S->st.pswpin, S->st.pswpout);
	done();
}
END_TEST

/*
 * The inactive list's order and folio_check_references() by hand: 64 pages stored
 * to in order join the inactive head one by one (the first is at the tail).
 * Direct reclaim of an order-0 movable request (nr_to_reclaim 32): the first scan of 32 (pages 0..31) finds each young once:
 * PG_referenced, A cleared, rotated to the head; the second (32..63) the same;
 * the third meets pages 0..31 again, now idle (the TLB still holds them, so no
 * walk set A), and swaps them out: 96 scanned, 32 stolen, pages 32..63 resident.
 */
START_TEST(direct_reclaim_lru_order)
{
	char t[4096];
	size_t n = 0;
	const vaddr_t base = 0x80000000UL;

	n += (size_t)snprintf(t + n, sizeof(t) - n, "%s",
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, 1048576, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n");
	for (unsigned i = 0; i < 64; i++)
		n += (size_t)snprintf(t + n, sizeof(t) - n, " S %lx,8\n", (unsigned long)base + i * 4096);
	run(t, "os.mode=base", NULL);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_ANON], 64);
	ck_assert_uint_eq(S->k.lru.nr[LRU_ACTIVE_ANON], 0);
	ck_assert_uint_eq(S->st.pswpout, 0);
	ck_assert_uint_eq(reclaim_direct(&S->k, 0, GFP_HIGHUSER_MOVABLE), 32);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.allocstall_movable, 1); /* the zone of GFP_HIGHUSER_MOVABLE */
	ck_assert_uint_eq(S->st.allocstall_normal, 0);
	ck_assert_uint_eq(S->st.pgscan_direct, 96);
	ck_assert_uint_eq(S->st.pgsteal_direct, 32);
	ck_assert_uint_eq(S->st.pswpout, 32);
	ck_assert_uint_eq(S->st.pgactivate, 0);
	ck_assert_uint_eq(S->st.pgsteal_kswapd, 0);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_ANON], 32);
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, 32);
	for (unsigned i = 0; i < 64; i++) {
		uint64_t slot;

		ck_assert_msg(pt_get_swap(&S->k.mm->pt, base + i * 4096, &slot) == (i < 32), "page %u", i);
		ck_assert_msg(pt_lookup(&S->k.mm->pt, base + i * 4096, NULL, NULL, NULL) == (i >= 32),
			      "page %u", i);
	}
	/* page 0 read again: a major fault brings it back onto the inactive list */
	{
		struct trace_rec r = { base + 8, 8, R_LOAD };
		struct trace_batch b = { &r, 1, NULL, 0 };
		struct err e;

		ck_assert_int_eq(sim_run_batch(S, &b, &e), 0);
	}
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.pswpin, 1);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, 31);
	ck_assert_uint_eq(S->k.lru.nr[LRU_INACTIVE_ANON], 33);
	ck_assert(pt_lookup(&S->k.mm->pt, base, NULL, NULL, NULL));
	/* the next direct reclaim: pages 32..63 carry PG_referenced but are idle now;
	 * page 0 is young (its walk set A): the tail's 32 idle pages go */
	ck_assert_uint_eq(reclaim_direct(&S->k, 0, GFP_HIGHUSER_MOVABLE), 32);
	sim_check_invariants(S);
	ck_assert_uint_eq(S->st.pgscan_direct, 96 + 32);
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, 63);
	ck_assert(pt_lookup(&S->k.mm->pt, base, NULL, NULL, NULL));
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reclaim");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, swap_under_pressure);
	tcase_add_test(tc, swap_second_chance);
	tcase_add_test(tc, swap_thp_whole_and_fallback);
	tcase_add_test(tc, direct_reclaim_lru_order);
	suite_add_tcase(s, tc);
	return check_run(s);
}
