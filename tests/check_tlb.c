/*
 * check_tlb.c - the translation arrays against brute-force reference models.
 *
 * LRU and FIFO are compared, access by access, with a naive per-set list model on
 * long seeded random key streams over several geometries (power-of-two and not);
 * tree-PLRU against its textbook victim sequence; invariants after every operation.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "tlb.h"

/* naive model: per set an array ordered most-recent (LRU) or newest (FIFO) first */
struct naive {
	uint64_t *k;
	unsigned sets, ways;
	bool fifo;
};

static bool naive_access(struct naive *n, uint64_t key)
{
	unsigned s = (unsigned)(key % n->sets);
	uint64_t *w = n->k + (size_t)s * n->ways;
	unsigned i;

	for (i = 0; i < n->ways; i++)
		if (w[i] == key)
			break;
	if (i < n->ways) {
		if (!n->fifo) { /* move to front */
			memmove(w + 1, w, i * sizeof(*w));
			w[0] = key;
		}
		return true;
	}
	memmove(w + 1, w, (n->ways - 1) * sizeof(*w)); /* drop the last */
	w[0] = key;
	return false;
}

static bool array_access(struct tlb_array *a, uint64_t key)
{
	if (tlb_array_lookup(a, key) >= 0)
		return true;
	tlb_array_fill(a, key, key * 3);
	return false;
}

static void compare_with_naive(enum repl_policy pol, unsigned entries, unsigned ways,
			       unsigned keyspace, unsigned steps)
{
	struct tlb_array a;
	struct naive n = { calloc((size_t)entries, sizeof(uint64_t)), entries / ways, ways,
			   pol == REPL_FIFO };
	uint64_t seed = 12345, hits = 0;

	ck_assert_int_eq(tlb_array_init(&a, entries, ways, pol, 1), 0);
	memset(n.k, 0xff, (size_t)entries * sizeof(uint64_t));
	for (unsigned i = 0; i < steps; i++) {
		uint64_t key;
		bool h1, h2;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* skewed: half the accesses from a small hot range */
		key = (seed >> 33) % ((seed & 1) ? keyspace : keyspace / 8 + 1);
		h1 = array_access(&a, key);
		h2 = naive_access(&n, key);
		ck_assert_msg(h1 == h2, "step %u key %llu: array %d naive %d", i,
			      (unsigned long long)key, h1, h2);
		hits += h1;
		if ((i & 1023) == 0)
			tlb_array_check_invariants(&a);
	}
	ck_assert_uint_gt(hits, steps / 10); /* the stream does hit */
	ck_assert_uint_lt(hits, steps);      /* and does miss */
	tlb_array_check_invariants(&a);
	tlb_array_free(&a);
	free(n.k);
}

START_TEST(lru_matches_naive)
{
	compare_with_naive(REPL_LRU, 64, 4, 200, 200000);
	compare_with_naive(REPL_LRU, 64, 64, 150, 200000);   /* fully associative */
	compare_with_naive(REPL_LRU, 1536, 12, 4000, 300000); /* Skylake STLB */
	compare_with_naive(REPL_LRU, 96, 6, 300, 200000);     /* 16 sets of 6 */
	compare_with_naive(REPL_LRU, 72, 8, 300, 200000);     /* 9 sets: not a power of two */
	compare_with_naive(REPL_LRU, 7, 7, 20, 50000);
}
END_TEST

START_TEST(fifo_matches_naive)
{
	compare_with_naive(REPL_FIFO, 64, 64, 150, 200000);
	compare_with_naive(REPL_FIFO, 64, 4, 200, 200000);
	compare_with_naive(REPL_FIFO, 72, 8, 300, 200000);
}
END_TEST

START_TEST(plru_textbook)
{
	struct tlb_array a;

	/* 4 ways, one set: fill A B C D; touch A; next victims follow the tree */
	ck_assert_int_eq(tlb_array_init(&a, 4, 4, REPL_PLRU, 1), 0);
	for (uint64_t k = 0; k < 4; k++)
		ck_assert_uint_eq(tlb_array_fill(&a, k, 0), TLB_KEY_NONE);
	/* after fills 0,1,2,3 the tree points at way 0 */
	ck_assert_int_ge(tlb_array_lookup(&a, 0), 0); /* touch way 0: now points at way 2 */
	ck_assert_uint_eq(tlb_array_fill(&a, 10, 0), 2);
	/* touched 0, then 2 (the fill): left subtree points at 1, root points left */
	ck_assert_uint_eq(tlb_array_fill(&a, 11, 0), 1);
	ck_assert_uint_eq(tlb_array_fill(&a, 12, 0), 3);
	tlb_array_check_invariants(&a);
	tlb_array_free(&a);

	/* 12 ways (Skylake STLB): victims never name a way past 11 and every way is used */
	ck_assert_int_eq(tlb_array_init(&a, 12, 12, REPL_PLRU, 1), 0);
	for (uint64_t k = 0; k < 1000; k++) {
		if (tlb_array_lookup(&a, k % 37) < 0)
			tlb_array_fill(&a, k % 37, 0);
		tlb_array_check_invariants(&a);
	}
	ck_assert_uint_eq(a.nr_valid, 12);
	tlb_array_free(&a);
}
END_TEST

START_TEST(random_is_seeded)
{
	struct tlb_array a, b;
	unsigned same = 0;

	ck_assert_int_eq(tlb_array_init(&a, 16, 16, REPL_RANDOM, 7), 0);
	ck_assert_int_eq(tlb_array_init(&b, 16, 16, REPL_RANDOM, 7), 0);
	for (uint64_t k = 0; k < 5000; k++) {
		bool ha = array_access(&a, (k * 7919) % 40), hb = array_access(&b, (k * 7919) % 40);

		ck_assert(ha == hb);
		same += ha;
	}
	ck_assert_uint_gt(same, 0);
	tlb_array_check_invariants(&a);
	tlb_array_free(&a);
	tlb_array_free(&b);
}
END_TEST

START_TEST(invalidation)
{
	struct tlb_array a;

	ck_assert_int_eq(tlb_array_init(&a, 64, 4, REPL_LRU, 1), 0);
	for (uint64_t k = 100; k < 164; k++)
		tlb_array_fill(&a, k, k);
	ck_assert_uint_eq(a.nr_valid, 64);
	ck_assert(tlb_array_invalidate(&a, 120));
	ck_assert(!tlb_array_invalidate(&a, 120));
	ck_assert_uint_eq(tlb_array_invalidate_range(&a, 130, 139, 0), 10);
	tlb_array_check_invariants(&a);
	ck_assert_uint_eq(a.nr_valid, 53);
	ck_assert_int_lt(tlb_array_probe(&a, 135), 0);
	ck_assert_int_ge(tlb_array_probe(&a, 140), 0);
	/* the freed ways are refilled before anything is evicted */
	ck_assert_uint_eq(tlb_array_fill(&a, 1000, 0), TLB_KEY_NONE);
	ck_assert_uint_eq(tlb_array_flush(&a), 54);
	ck_assert_uint_eq(a.nr_valid, 0);
	ck_assert_uint_eq(a.invalidations, 1 + 10 + 54);
	tlb_array_check_invariants(&a);
	tlb_array_free(&a);
}
END_TEST

START_TEST(empty_array)
{
	struct tlb_array a;

	ck_assert_int_eq(tlb_array_init(&a, 0, 0, REPL_LRU, 1), 0);
	ck_assert_int_lt(tlb_array_lookup(&a, 5), 0);
	ck_assert_uint_eq(tlb_array_fill(&a, 5, 0), TLB_KEY_NONE);
	ck_assert_int_lt(tlb_array_lookup(&a, 5), 0);
	tlb_array_check_invariants(&a);
	tlb_array_free(&a);
}
END_TEST

START_TEST(stlb_sizes_and_placement)
{
	struct sim_config c;
	struct tlb t;
	enum page_size ps;
	pfn_t pfn;

	config_defaults(&c);
	/* Golden Cove style: [4K,2M] 1024/8 and [4K,1G] 1024/8 */
	c.nr_stlb = 2;
	c.stlb[0] = (struct stlb_cfg){ 16, 2, 1u << PS_4K | 1u << PS_2M };
	c.stlb[1] = (struct stlb_cfg){ 16, 2, 1u << PS_4K | 1u << PS_1G };
	ck_assert_int_eq(tlb_init(&t, &c), 0);
	tlb_stlb_fill(&t, 0x200000, PS_2M, 512);
	ck_assert(tlb_stlb_lookup(&t, 0x3fffff, &ps, &pfn));
	ck_assert_int_eq(ps, PS_2M);
	ck_assert_uint_eq(pfn, 512);
	ck_assert_uint_eq(t.stlb[0].nr_valid, 1);
	tlb_stlb_fill(&t, 0x40000000, PS_1G, 1 << 18);
	ck_assert_uint_eq(t.stlb[1].nr_valid, 1);
	/* 4K pages of one set: 2 ways in array 0, then 2 in array 1, then by parity */
	for (uint64_t i = 0; i < 4; i++)
		tlb_stlb_fill(&t, (i * 8) << PAGE_SHIFT, PS_4K, i); /* set 0 of 8 */
	ck_assert_uint_eq(t.stlb[0].nr_valid, 3);
	ck_assert_uint_eq(t.stlb[1].nr_valid, 3);
	ck_assert(!tlb_stlb_lookup(&t, 0x7000, &ps, &pfn));
	ck_assert(tlb_stlb_lookup(&t, 24 << PAGE_SHIFT, &ps, &pfn));
	ck_assert_int_eq(ps, PS_4K);
	ck_assert_uint_eq(pfn, 3);
	/* invalidating a range removes every size overlapping it */
	ck_assert_uint_eq(tlb_invalidate_range(&t, 0x200000, 0x201000), 1);
	ck_assert(!tlb_stlb_lookup(&t, 0x200000, &ps, &pfn));
	ck_assert_uint_eq(tlb_flush_all(&t), 5);
	tlb_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tlb");
	TCase *tc = tcase_create("arrays");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, lru_matches_naive);
	tcase_add_test(tc, fifo_matches_naive);
	tcase_add_test(tc, plru_textbook);
	tcase_add_test(tc, random_is_seeded);
	tcase_add_test(tc, invalidation);
	tcase_add_test(tc, empty_array);
	tcase_add_test(tc, stlb_sizes_and_placement);
	suite_add_tcase(s, tc);
	return check_run(s);
}
