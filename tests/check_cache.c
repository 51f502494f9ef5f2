/*
 * check_cache.c - which level served a read: the first read of a line comes from
 * DRAM, the second from L1D; lines that conflict in L1D's set only (stride
 * L1D sets * line) leave the first in L2, those that conflict in L2's set too
 * leave it in the LLC, those that conflict in the LLC's push it to DRAM; true LRU
 * within a set; the cycles added are the config's latencies; set mapping by mask
 * for power-of-two set counts and by modulo otherwise; an absent level is
 * skipped. A seeded stream against a naive per-set LRU list model of the whole
 * hierarchy. Geometry is read back from the config, never hard-coded;
 * cache_check_invariants() after every read.
 */
#include <check.h>
#include "check_run.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

static struct sim_config cfg;
static struct cache C;

/* The default machine with --set overrides (NULL-ended), and its cache. */
static void setup(const char *first, ...)
{
	struct err e = { 0 };
	va_list ap;

	config_defaults(&cfg);
	va_start(ap, first);
	for (const char *set = first; set; set = va_arg(ap, const char *))
		ck_assert_msg(config_set(&cfg, set, &e) == 0, "%s: %s", set, e.msg);
	va_end(ap);
	ck_assert_msg(config_validate(&cfg, "--set", &e) == 0, "%s", e.msg);
	ck_assert_int_eq(cache_init(&C, &cfg), 0);
	cache_check_invariants(&C);
}

static uint64_t sets_of(unsigned l)
{
	return cfg.cache[l].size / ((uint64_t)cfg.cache[l].ways * cfg.line_size);
}

/* Read @pa; assert the level that served it (CL_NR: DRAM) and the cycles it added. */
static void read_from(paddr_t pa, unsigned want)
{
	cycles_t cyc = 1000; /* added to, not overwritten */
	unsigned got = cache_access(&C, pa, &cyc);

	cache_check_invariants(&C);
	ck_assert_msg(got == want, "pa %#llx: served by %u, want %u", (unsigned long long)pa, got,
		      want);
	ck_assert_uint_eq(cyc - 1000, (want == CL_NR ? cfg.dram_latency : cfg.cache[want].latency));
}

START_TEST(first_dram_then_l1d)
{
	setup(NULL);
	read_from(0x12340, CL_NR);
	read_from(0x12340, CL_L1D);
	/* the rest of the line is the same line; the next line is not */
	read_from(0x12340 + cfg.line_size - 1, CL_L1D);
	read_from(0x1233f, CL_NR);
	read_from(0x12380, CL_NR);
	read_from(0x12380, CL_L1D);
	cache_free(&C);
}
END_TEST

/*
 * A, then N lines conflicting with A in the sets of levels < @lvl (stride: the
 * set count of level @lvl - 1 times the line, a multiple of every smaller
 * power-of-two stride), where N is the largest way count among them: A is evicted
 * from each, but fits in level @lvl, which serves it.
 */
static void evict_to(unsigned lvl)
{
	uint64_t stride = sets_of(lvl - 1) * cfg.line_size;
	unsigned n = 0;

	for (unsigned l = 0; l < lvl; l++)
		if (cfg.cache[l].ways > n)
			n = cfg.cache[l].ways;
	/* the conflicting lines must not fill A's set at level lvl too */
	ck_assert_uint_lt(n, lvl < CL_NR ? cfg.cache[lvl].ways * (sets_of(lvl) / sets_of(lvl - 1)) : ~0U);
	read_from(0, CL_NR);
	for (unsigned k = 1; k <= n; k++)
		read_from(k * stride, CL_NR);
	read_from(0, lvl);
	read_from(0, CL_L1D);
}

START_TEST(evicted_from_l1d_served_by_l2)
{
	setup(NULL);
	/* the default geometry: 32K/8 -> 64 sets, 256K/8 -> 512, 8M/16 -> 8192 */
	ck_assert_uint_eq(sets_of(CL_L1D), 64);
	ck_assert_uint_eq(sets_of(CL_L2), 512);
	ck_assert_uint_eq(sets_of(CL_LLC), 8192);
	evict_to(CL_L2);
	cache_free(&C);
	/* one line fewer than the ways: A stays in L1D */
	setup(NULL);
	read_from(0, CL_NR);
	for (unsigned k = 1; k < cfg.cache[CL_L1D].ways; k++)
		read_from(k * sets_of(CL_L1D) * cfg.line_size, CL_NR);
	read_from(0, CL_L1D);
	cache_free(&C);
}
END_TEST

START_TEST(evicted_from_l2_served_by_llc)
{
	setup(NULL);
	evict_to(CL_LLC);
	cache_free(&C);
	/* another machine: skylake's 4-way L2 */
	setup("cache.l2.ways=4", "cache.l2.latency=11", "cache.llc.latency=44", NULL);
	evict_to(CL_L2);
	cache_free(&C);
	setup("cache.l2.ways=4", "cache.l2.latency=11", "cache.llc.latency=44", NULL);
	evict_to(CL_LLC);
	cache_free(&C);
}
END_TEST

START_TEST(evicted_from_llc_served_by_dram)
{
	setup(NULL);
	evict_to(CL_NR);
	cache_free(&C);
}
END_TEST

START_TEST(lru_within_a_set)
{
	uint64_t stride;
	unsigned w;

	setup(NULL);
	stride = sets_of(CL_L1D) * cfg.line_size;
	w = cfg.cache[CL_L1D].ways;
	/* fill A's L1D set: lines 0..w-1 in order */
	for (unsigned k = 0; k < w; k++)
		read_from(k * stride, CL_NR);
	/* A used again: now line 1 is the least recently used */
	read_from(0, CL_L1D);
	read_from((uint64_t)w * stride, CL_NR); /* evicts line 1 from L1D */
	read_from(0, CL_L1D);
	for (unsigned k = 2; k <= w; k++)
		read_from(k * stride, CL_L1D);
	read_from(stride, CL_L2);
	cache_free(&C);
}
END_TEST

/*
 * Non-power-of-two sets map by modulo: L1D one set of 2 ways, L2 3 sets of 2
 * ways, no LLC. Lines 0, 3 and 6 share L2 set 0; line 1 is in L2 set 1.
 */
START_TEST(modulo_sets_and_absent_level)
{
	setup("cache.l1d.size=128", "cache.l1d.ways=2", "cache.l1d.latency=3",
	      "cache.l2.size=384", "cache.l2.ways=2", "cache.l2.latency=17", "cache.llc.size=0",
	      "cache.dram_latency=333", NULL);
	ck_assert_uint_eq(sets_of(CL_L1D), 1);
	ck_assert_uint_eq(sets_of(CL_L2), 3);
	read_from(0 * 64, CL_NR);
	read_from(3 * 64, CL_NR);
	read_from(6 * 64, CL_NR); /* L1D {3, 6}, L2 set 0 {3, 6} */
	read_from(0 * 64, CL_NR); /* not in the (absent) LLC: DRAM; L1D {6, 0}, L2 {6, 0} */
	read_from(1 * 64, CL_NR); /* L1D {0, 1}, L2 set 1 {1} */
	read_from(6 * 64, CL_L2); /* L1D {1, 6} */
	read_from(3 * 64, CL_NR); /* evicted from L2 set 0 by 0 */
	read_from(4 * 64, CL_NR); /* L2 set 1 {1, 4}: 1 stays */
	read_from(1 * 64, CL_L2);
	read_from(1 * 64, CL_L1D);
	cache_free(&C);
}
END_TEST

/* The naive hierarchy: per level, per set, lines most recent first. */
struct naive_level {
	uint64_t *l;
	unsigned sets, ways;
};

START_TEST(random_against_naive)
{
	struct naive_level nv[CL_NR];
	uint64_t seed = 77, served[CL_NR + 1] = { 0 };

	setup("cache.l1d.size=512", "cache.l1d.ways=2", "cache.l2.size=2K", "cache.l2.ways=4",
	      "cache.llc.size=3K", "cache.llc.ways=8", NULL); /* 4, 8 and 6 sets */
	for (unsigned l = 0; l < CL_NR; l++) {
		nv[l].sets = (unsigned)sets_of(l);
		nv[l].ways = cfg.cache[l].ways;
		nv[l].l = malloc((size_t)nv[l].sets * nv[l].ways * sizeof(uint64_t));
		ck_assert_ptr_nonnull(nv[l].l);
		memset(nv[l].l, 0xff, (size_t)nv[l].sets * nv[l].ways * sizeof(uint64_t));
	}
	for (int step = 0; step < 20000; step++) {
		paddr_t pa;
		uint64_t line;
		unsigned want = CL_NR, got;
		cycles_t cyc = 0;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* skewed over 256 lines: a quarter of the reads from 16 hot lines */
		pa = ((seed >> 40) % ((seed & 3) ? 256 : 16)) * 64 + (seed >> 20) % 64;
		line = pa >> 6;
		for (unsigned l = 0; l < CL_NR; l++) {
			uint64_t *w = nv[l].l + (line % nv[l].sets) * nv[l].ways;
			unsigned i;

			for (i = 0; i < nv[l].ways && w[i] != line; i++)
				;
			if (i == nv[l].ways)
				i = nv[l].ways - 1; /* fill over the least recent */
			else if (want == CL_NR)
				want = l;
			memmove(w + 1, w, i * sizeof(*w));
			w[0] = line;
			if (want == l)
				break;
		}
		got = cache_access(&C, pa, &cyc);
		if (got != want || cyc != (want == CL_NR ? cfg.dram_latency : cfg.cache[want].latency))
			ck_abort_msg("step %d pa %#llx: served by %u in %llu cycles, want %u", step,
				     (unsigned long long)pa, got, (unsigned long long)cyc, want);
		served[got]++;
		if (step % 64 == 0)
			cache_check_invariants(&C);
	}
	cache_check_invariants(&C);
	for (unsigned l = 0; l <= CL_NR; l++) /* the stream exercises every level */
		ck_assert_uint_gt(served[l], 500);
	for (unsigned l = 0; l < CL_NR; l++)
		free(nv[l].l);
	cache_free(&C);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("cache");

	tcase_add_test(tc, first_dram_then_l1d);
	tcase_add_test(tc, evicted_from_l1d_served_by_l2);
	tcase_add_test(tc, evicted_from_l2_served_by_llc);
	tcase_add_test(tc, evicted_from_llc_served_by_dram);
	tcase_add_test(tc, lru_within_a_set);
	tcase_add_test(tc, modulo_sets_and_absent_level);
	tcase_add_test(tc, random_against_naive);
	suite_add_tcase(s, tc);
	return check_run(s);
}
