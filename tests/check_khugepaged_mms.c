/*
 * check_khugepaged_mms.c - one khugepaged for every mm, and processes competing
 * for one buddy allocator (Linux mm/khugepaged.c: the mm_slot list in
 * registration order, khugepaged_scan_mm_slot() over one mm until the budget or
 * its end, then the next; collect_mm_slot() of an exited mm). Exact counts after
 * every wake-up; every invariant after each step.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "kernel.h"

#define BASE 0x40000000UL
#define MB (1UL << 20)

static void anon(uint64_t len)
{
	event((struct os_event){ .kind = EV_MMAP, .addr = BASE, .len = len, .prot = 3,
				 .flags = MAP_PRIVATE_ | MAP_ANONYMOUS_, .fd = -1 });
}

static void madv_huge(uint64_t len)
{
	event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = len,
				 .advice = MADV_HUGEPAGE_ });
}

static unsigned memory_mb = 256;

static void boot(const char *a, const char *b, const char *c)
{
	const char *set[] = { a, b, c };
	struct sim_config cfg;
	struct err e = { 0 };

	config_defaults(&cfg);
	cfg.memory = (uint64_t)memory_mb << 20;
	memory_mb = 256;
	cfg.mode = MODE_THP;
	for (int i = 0; i < 3; i++)
		if (set[i])
			ck_assert_msg(config_set(&cfg, set[i], &e) == 0, "%s", e.msg);
	ck_assert_msg(config_validate(&cfg, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &cfg, &e) == 0, "%s", e.msg);
}

/* Is the 2M range at @haddr of process @id mapped by a PMD? */
static bool huge_at(uint64_t id, vaddr_t haddr)
{
	struct mm *mm = kernel_mm_find(&S->k, id);
	enum page_size ps;
	pfn_t pfn;

	ck_assert_ptr_nonnull(mm);
	return pt_lookup(&mm->pt, haddr, &ps, &pfn, NULL) && ps == PS_2M;
}

/* The process ids on khugepaged's list, in its order, as "2 0 1" */
static const char *slots(void)
{
	static char buf[128];
	size_t n = 0;

	buf[0] = 0;
	for (struct khugepaged_mm_slot *s = S->k.khugepaged.head; s; s = s->next)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, n ? " %llu" : "%llu",
				      s->mm ? (unsigned long long)s->mm->id : 999ULL);
	return buf;
}

static void wake(void)
{
	khugepaged_do_scan(&S->k);
	sim_check_invariants(S);
}

/* Three processes with one 4 MiB VMA each, two 4K pages stored per 2M range. */
static void three_processes(void)
{
	boot("os.thp.enabled=madvise", "os.khugepaged.pages_to_scan=513", NULL);
	for (uint64_t id = 0; id < 3; id++) {
		to(id);
		anon(4 * MB);
		touch(BASE, BASE + 2 * 4096, R_STORE);
		touch(BASE + 2 * MB, BASE + 2 * MB + 2 * 4096, R_STORE);
	}
	ck_assert_str_eq(slots(), ""); /* no VMA khugepaged could scan yet */
	/* MADV_HUGEPAGE registers each mm (khugepaged_enter_vma()): 2, then 0, then 1 */
	to(2);
	madv_huge(4 * MB);
	to(0);
	madv_huge(4 * MB);
	to(1);
	madv_huge(4 * MB);
	madv_huge(4 * MB); /* an mm is added once */
	ck_assert_str_eq(slots(), "2 0 1");
	ck_assert_uint_eq(S->k.khugepaged.nr_slots, 3);
	ck_assert(S->k.khugepaged.next_wake <= sim_now(S)); /* the first mm woke it */
}

/*
 * pages_to_scan 513: a wake-up takes up an mm (1) and one 2M range (512). The
 * list is 2, 0, 1: each wake-up collapses the next range in that order, an mm's
 * end costs 1 and moves on to the next mm in the same wake-up; after the last mm
 * the cursor goes back to the head (a full scan) and the pass stops at its second
 * pass through the head... here at the budget, the first range of 2 already huge.
 */
START_TEST(order_over_mm_slots)
{
	static const struct { uint64_t id; vaddr_t a; } order[6] = {
		{ 2, BASE }, { 2, BASE + 2 * MB }, { 0, BASE }, { 0, BASE + 2 * MB },
		{ 1, BASE }, { 1, BASE + 2 * MB },
	};

	three_processes();
	for (int w = 0; w < 6; w++) {
		wake();
		ck_assert_uint_eq(S->st.thp_collapse_alloc, (uint64_t)w + 1);
		ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, (uint64_t)w + 1);
		for (int i = 0; i < 6; i++)
			ck_assert_msg(huge_at(order[i].id, order[i].a) == (i <= w),
				      "wake %d: process %llu at %#lx", w + 1,
				      (unsigned long long)order[i].id, (unsigned long)order[i].a);
		ck_assert_uint_eq(S->st.khugepaged_full_scans, 0);
	}
	ck_assert_ptr_eq(S->k.khugepaged.mm_slot->mm, kernel_mm_find(&S->k, 1));
	/* the end of 1 (1 unit), the head (a full scan), 2's first range (512, PMD-mapped) */
	wake();
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 6);
	ck_assert_ptr_eq(S->k.khugepaged.mm_slot->mm, kernel_mm_find(&S->k, 2));
	ck_assert_uint_eq(S->k.khugepaged.address, BASE + 2 * MB);
	/* every range of every process huge: nr_anon_pages none left */
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 6);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();
}
END_TEST

/*
 * khugepaged_exit(): an exited process's slot leaves the list at once, or, if the
 * cursor holds it, at khugepaged's next visit (collect_mm_slot(): 1 unit, then
 * the next slot in the same wake-up). An empty list puts khugepaged to sleep
 * until the next registration, which wakes it at once.
 */
START_TEST(exited_slot_dropped)
{
	cycles_t w;

	three_processes();
	wake(); /* 2's first range; the cursor stays in 2 */
	ck_assert(huge_at(2, BASE));
	to(0);
	event((struct os_event){ .kind = EV_EXIT }); /* not under the cursor: gone now */
	ck_assert_str_eq(slots(), "2 1");
	to(2);
	event((struct os_event){ .kind = EV_EXIT }); /* under the cursor: stays, mm gone */
	ck_assert_str_eq(slots(), "999 1");
	ck_assert_uint_eq(S->k.khugepaged.nr_slots, 2);
	/* the next wake-up drops 2's slot (1 unit) and collapses 1's first range (512) */
	wake();
	ck_assert_str_eq(slots(), "1");
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert(huge_at(1, BASE));
	ck_assert(!huge_at(1, BASE + 2 * MB));
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 0);
	to(1);
	event((struct os_event){ .kind = EV_EXIT }); /* under the cursor */
	ck_assert_str_eq(slots(), "999");
	wake(); /* dropped; the head: a full scan; the list is empty */
	ck_assert_str_eq(slots(), "");
	ck_assert_uint_eq(S->st.khugepaged_full_scans, 1);
	ck_assert(!S->k.thp.mm_registered);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	/* a new process's MADV_HUGEPAGE wakes the idle daemon at once */
	to(5);
	anon(4 * MB);
	touch(BASE, BASE + 2 * 4096, R_STORE);
	w = sim_now(S);
	madv_huge(4 * MB);
	ck_assert_str_eq(slots(), "5");
	ck_assert(S->k.thp.mm_registered);
	ck_assert_uint_eq(S->k.khugepaged.next_wake, w);
	wake();
	ck_assert(huge_at(5, BASE));
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 3);
	done();
}
END_TEST

/* exec: the old mm leaves the list; the new one registers at its own MADV_HUGEPAGE. */
START_TEST(exec_leaves_the_list)
{
	three_processes();
	to(0);
	event((struct os_event){ .kind = EV_EXEC });
	ck_assert_str_eq(slots(), "2 1");
	anon(4 * MB);
	touch(BASE, BASE + 2 * 4096, R_STORE);
	madv_huge(4 * MB);
	ck_assert_str_eq(slots(), "2 1 0");
	done();
}
END_TEST

/* prctl(PR_SET_THP_DISABLE): khugepaged takes the mm up (1 unit) and moves on. */
START_TEST(thp_disabled_mm_skipped)
{
	three_processes();
	to(2);
	event((struct os_event){ .kind = EV_PRCTL, .advice = PR_SET_THP_DISABLE_, .addr = 1 });
	wake(); /* 2: 1 unit, the next slot: 0's first range (513 in all) */
	ck_assert(!huge_at(2, BASE));
	ck_assert(huge_at(0, BASE));
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_ptr_eq(S->k.khugepaged.mm_slot->mm, kernel_mm_find(&S->k, 0));
	done();
}
END_TEST

/* Free blocks of order 9 and up, in pageblocks (free_area[].nr_free, lazy tail included). */
static uint64_t free_pageblocks(void)
{
	uint64_t n = 0;

	for (unsigned o = PAGEBLOCK_ORDER; o < NR_PAGE_ORDERS; o++)
		n += S->k.buddy.free_area[o].nr_free << (o - PAGEBLOCK_ORDER);
	return n;
}

/*
 * Two processes competing for the last free pageblocks: 64 MiB is 32 pageblocks;
 * os.fragmentation.unmovable=0.90625 pins a frame in 29 of them (buddy_fragment()),
 * which leaves 3 wholly free (the page tables fit in the pinned ones). A (process
 * 0) and B (process 1), THP always and defrag madvise (GFP_TRANSHUGE_LIGHT: no
 * direct compaction, and none could free a pinned pageblock), fault one 2M range
 * each in turn, A first: A gets rounds 0 and 1, B round 0; B's round-1 fault finds
 * no pageblock left (A took the last one), and every fault after falls back.
 */
START_TEST(last_free_pageblocks)
{
	static const uint64_t want[4][4] = { /* A alloc, A fallback, B alloc, B fallback */
		{ 1, 0, 1, 0 }, { 2, 0, 1, 1 }, { 2, 1, 1, 2 }, { 2, 2, 1, 3 },
	};
	uint64_t a[SP_NR], b[SP_NR], anon_b, file, huge_a, huge_b;

	memory_mb = 64;
	boot("os.thp.enabled=always", "os.fragmentation.unmovable=0.90625", NULL);
	ck_assert_uint_eq(free_pageblocks(), 3);
	anon(8 * MB);
	to(1);
	anon(8 * MB);
	for (int r = 0; r < 4; r++) {
		to(0);
		touch(BASE + r * 2 * MB, BASE + r * 2 * MB + 4096, R_STORE);
		to(1);
		touch(BASE + r * 2 * MB, BASE + r * 2 * MB + 4096, R_STORE);
		sim_proc_counts(S, 0, a);
		sim_proc_counts(S, 1, b);
		ck_assert_msg(a[SP_THP_FAULT_ALLOC] == want[r][0] && a[SP_THP_FAULT_FALLBACK] == want[r][1] &&
				      b[SP_THP_FAULT_ALLOC] == want[r][2] && b[SP_THP_FAULT_FALLBACK] == want[r][3],
			      "round %d: A %llu/%llu B %llu/%llu", r, (unsigned long long)a[SP_THP_FAULT_ALLOC],
			      (unsigned long long)a[SP_THP_FAULT_FALLBACK], (unsigned long long)b[SP_THP_FAULT_ALLOC],
			      (unsigned long long)b[SP_THP_FAULT_FALLBACK]);
		if (r == 1)
			ck_assert_uint_eq(free_pageblocks(), 0);
	}
	ck_assert_uint_eq(S->st.thp_fault_alloc, 3);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 5);
	kernel_mm_rss(&S->k, S->procs[0].mm, &anon_b, &file, &huge_a);
	kernel_mm_rss(&S->k, S->procs[1].mm, &anon_b, &file, &huge_b);
	ck_assert_uint_eq(huge_a, 4 * MB);
	ck_assert_uint_eq(huge_b, 2 * MB);
	ck_assert_uint_eq(anon_b, 2 * MB + 3 * 4096);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("khugepaged_mms");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, order_over_mm_slots);
	tcase_add_test(tc, exited_slot_dropped);
	tcase_add_test(tc, exec_leaves_the_list);
	tcase_add_test(tc, thp_disabled_mm_skipped);
	tcase_add_test(tc, last_free_pageblocks);
	suite_add_tcase(s, tc);
	return check_run(s);
}
