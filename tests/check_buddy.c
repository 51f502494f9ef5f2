/*
 * check_buddy.c - the buddy allocator: exact placement from mm/page_alloc.c's
 * rules (smallest order first, expand() keeps the low half), merging, the
 * vmstat.c fragmentation indices by hand, and a seeded stress run with the
 * invariant checker after every operation.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>

#include "buddy.h"

#define MB (1ULL << 20)

START_TEST(fresh_and_split)
{
	struct buddy b;

	ck_assert_int_eq(buddy_init(&b, 64 * MB), 0); /* 16 blocks of order 10 */
	ck_assert_uint_eq(b.free_area[10].nr_free, 16);
	ck_assert_uint_eq(b.nr_free_pages, 16384);
	buddy_check_invariants(&b);
	/* lowest block first (boot frees to the tail), low half kept */
	ck_assert_uint_eq(buddy_alloc(&b, 0), 0);
	buddy_check_invariants(&b);
	for (unsigned o = 0; o < 10; o++)
		ck_assert_uint_eq(b.free_area[o].nr_free, 1); /* 1, 2, 4, ... 512 */
	ck_assert_uint_eq(b.free_area[10].nr_free, 15);
	ck_assert_uint_eq(buddy_alloc(&b, 0), 1);
	ck_assert_uint_eq(buddy_alloc(&b, 9), 512);
	ck_assert_uint_eq(buddy_alloc(&b, 2), 4);
	ck_assert_uint_eq(buddy_alloc(&b, 10), 1024);
	buddy_check_invariants(&b);
	/* free everything: all merges back */
	buddy_free(&b, 0, 0);
	buddy_free(&b, 512, 9);
	buddy_free(&b, 1, 0);
	buddy_free(&b, 4, 2);
	buddy_free(&b, 1024, 10);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.free_area[10].nr_free, 16);
	ck_assert_uint_eq(b.nr_free_pages, 16384);
	for (unsigned o = 0; o < 10; o++)
		ck_assert_uint_eq(b.free_area[o].nr_free, 0);
	buddy_destroy(&b);
}
END_TEST

START_TEST(exhaustion)
{
	struct buddy b;
	pfn_t p;
	unsigned n = 0;

	ck_assert_int_eq(buddy_init(&b, 4 * MB), 0);
	while ((p = buddy_alloc(&b, 9)) != PFN_NONE)
		n++;
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(buddy_alloc(&b, 0), PFN_NONE);
	ck_assert_uint_eq(b.nr_free_pages, 0);
	buddy_check_invariants(&b);
	buddy_destroy(&b);
}
END_TEST

START_TEST(fragmentation_indices)
{
	struct buddy b;
	pfn_t keep[1024];

	ck_assert_int_eq(buddy_init(&b, 4 * MB), 0);
	/* fresh: an order-9 block is free */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 9), -1000);
	ck_assert_int_eq(buddy_unusable_index(&b, 9), 0);
	/* take all 1024 pages singly, free every other one: 512 free order-0 blocks */
	for (int i = 0; i < 1024; i++)
		ck_assert_uint_eq(keep[i] = buddy_alloc(&b, 0), (pfn_t)i);
	for (int i = 0; i < 1024; i += 2)
		buddy_free(&b, keep[i], 0);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.free_area[0].nr_free, 512);
	/* 1000 - (1000 + 512*1000/512) / 512 = 1000 - 2000/512 = 1000 - 3 = 997 */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 9), 997);
	/* all free space unusable for order 9 */
	ck_assert_int_eq(buddy_unusable_index(&b, 9), 1000);
	/* order 0 is satisfiable */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 0), -1000);
	ck_assert_int_eq(buddy_unusable_index(&b, 0), 0);
	/* order 1: 512 free pages, none paired: 1000 - (1000 + 512*1000/2)/512 = 1000 - 501 = 499 */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 1), 499);
	buddy_destroy(&b);
}
END_TEST

START_TEST(stress)
{
	struct buddy b;
	struct { pfn_t pfn; unsigned order; } live[4096];
	unsigned n = 0;
	uint64_t seed = 42, used = 0;

	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0);
	for (int step = 0; step < 20000; step++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (n && ((seed >> 40) % 3 == 0 || n == 4096)) {
			unsigned i = (unsigned)((seed >> 20) % n);

			buddy_free(&b, live[i].pfn, live[i].order);
			used -= 1ULL << live[i].order;
			live[i] = live[--n];
		} else {
			unsigned order = (unsigned)((seed >> 33) % 11);
			pfn_t p;

			order = order > 4 ? order - 4 > 6 ? 9 : 0 : order; /* mostly small */
			p = buddy_alloc(&b, order);
			if (p != PFN_NONE) {
				ck_assert_uint_eq(p & ((1ULL << order) - 1), 0);
				live[n].pfn = p;
				live[n++].order = order;
				used += 1ULL << order;
			}
		}
		ck_assert_uint_eq(b.nr_free_pages + used, 4096);
		if (step % 97 == 0)
			buddy_check_invariants(&b);
	}
	while (n) {
		n--;
		buddy_free(&b, live[n].pfn, live[n].order);
	}
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.free_area[10].nr_free, 4);
	buddy_destroy(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("buddy");
	TCase *tc = tcase_create("buddy");

	tcase_add_test(tc, fresh_and_split);
	tcase_add_test(tc, exhaustion);
	tcase_add_test(tc, fragmentation_indices);
	tcase_add_test(tc, stress);
	suite_add_tcase(s, tc);
	return check_run(s);
}
