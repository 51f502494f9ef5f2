/*
 * check_prefetch.c - the overlap core's timed memory (cache.c's timed hierarchy,
 * core.c's DRAM bus): the stream prefetchers' decisions on hand-made line
 * sequences, their counts on small reference streams through the whole
 * simulator, the bus's time for N line transfers, and that cpu.model additive
 * ignores every key of it.
 *
 * The machine of the stream tests: an L1D of 4 KiB (4 ways, 16 sets), an L2 of
 * 64 KiB, no LLC, DRAM at DRAM_LAT cycles, 64 MSHRs a level, a one-entry L1
 * dTLB. A warm-up stores to the last line of each of NPAGES pages (faulting
 * them in), then GAP instructions let it all retire; the stream under test
 * reads lines of page 0 that the warm-up never touched.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "core.h"
#include "sim.h"
#include "trace.h"

#define NPAGES 4
#define GAP 100000
#define DRAM_LAT 100
#define BASE 0x10000000ULL

static struct sim_config C;
static struct trace_rec R[512];
static size_t NR;

/* ------------------------------------------------ the prefetcher's decisions */

static struct cache_pf PF;

static void pf_make(unsigned degree, unsigned distance, unsigned streams)
{
	free(PF.s);
	PF = (struct cache_pf){ .degree = degree, .distance = distance, .nstreams = streams };
	PF.s = calloc(streams, sizeof(*PF.s));
	ck_assert_ptr_nonnull(PF.s);
}

/* Train on @line; the lines issued must be exactly @want[0..n). */
static void expect(uint64_t line, unsigned n, const uint64_t *want)
{
	uint64_t out[64];
	unsigned got = cache_pf_train(&PF, 6, line, out); /* 64-byte lines: 64 a page */

	ck_assert_msg(got == n, "line %llu: %u prefetches, want %u", (unsigned long long)line, got, n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_uint_eq(out[i], want[i]);
}

/*
 * Ascending lines: two steps train the stream (nothing before), then each
 * access issues up to degree lines, never more than distance ahead, never past
 * its 4 KiB page; a repeated line issues nothing.
 */
START_TEST(pf_sequential)
{
	pf_make(2, 4, 4);
	expect(0, 0, NULL);
	expect(1, 0, NULL);
	expect(2, 2, (uint64_t[]){ 3, 4 });
	expect(2, 0, NULL);                 /* the same line again */
	expect(3, 2, (uint64_t[]){ 5, 6 }); /* up to 3 + 4 = 7: two of them */
	expect(4, 2, (uint64_t[]){ 7, 8 });
	expect(5, 1, (uint64_t[]){ 9 });    /* distance-bound: one a line from here on */
	expect(6, 1, (uint64_t[]){ 10 });
	for (uint64_t l = 7; l < 59; l++)
		expect(l, 1, (uint64_t[]){ l + 4 });
	expect(59, 1, (uint64_t[]){ 63 });
	expect(60, 0, NULL); /* 64 is the next page */
	expect(63, 0, NULL);
	/* the next page is a new stream: trained again */
	expect(64, 0, NULL);
	expect(65, 0, NULL);
	expect(66, 2, (uint64_t[]){ 67, 68 });
}
END_TEST

/* Descending lines are a stream too; a change of direction untrains it. */
START_TEST(pf_descending)
{
	pf_make(2, 4, 4);
	expect(63, 0, NULL);
	expect(62, 0, NULL);
	expect(61, 2, (uint64_t[]){ 60, 59 });
	expect(60, 2, (uint64_t[]){ 58, 57 });
	expect(3, 2, (uint64_t[]){ 2, 1 }); /* far back in the page: the stream goes on */
	expect(1, 1, (uint64_t[]){ 0 });    /* up to line 0 and no further */
	expect(0, 0, NULL);
	expect(5, 0, NULL); /* turned: one step up */
	expect(6, 2, (uint64_t[]){ 7, 8 }); /* two: trained upwards */
	expect(7, 2, (uint64_t[]){ 9, 10 });
}
END_TEST

/* Random lines over many pages (and zig-zags within one) issue nothing. */
START_TEST(pf_random)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL, n = 0;
	uint64_t out[64];

	pf_make(2, 20, 32);
	for (int i = 0; i < 100000; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		n += cache_pf_train(&PF, 6, (x * 0x2545F4914F6CDD1DULL) >> 40, out); /* 16 Mi lines */
	}
	ck_assert_uint_eq(n, 0);
	pf_make(2, 20, 32);
	expect(10, 0, NULL);
	expect(12, 0, NULL);
	expect(11, 0, NULL);
	expect(13, 0, NULL);
	expect(12, 0, NULL);
}
END_TEST

/* ------------------------------------------------------- the DRAM bus alone */

/* N transfers ready at once take N x line / bandwidth; a late one waits for nothing. */
START_TEST(bus_transfers)
{
	struct core c;

	memset(&c, 0, sizeof(c));
	c.xfer = 64.0 / 16.0; /* 16 bytes a cycle: 4 cycles a line */
	for (int i = 1; i <= 1000; i++)
		ck_assert(core_bus_transfer(&c, 0) == 4.0 * i);
	ck_assert(core_bus_transfer(&c, 10000) == 10000); /* an idle bus */
	ck_assert(core_bus_transfer(&c, 0) == 10004);
	c.xfer = 0; /* no bandwidth limit: the ready time */
	ck_assert(core_bus_transfer(&c, 7) == 7);
}
END_TEST

/* --------------------------------------------------- the whole simulator */

static void setup_cfg(void)
{
	config_defaults(&C);
	C.memory = 256ULL << 20;
	C.core.model = CPU_OVERLAP;
	C.core.rob = 1000;
	C.core.width = 4;
	C.core.walkers = 8;
	C.core.store_buffer = 64;
	C.cpi = 1.0;
	C.cache[CL_L1D] = (struct cache_cfg){ 4096, 4, 4, 64 };
	C.cache[CL_L2] = (struct cache_cfg){ 65536, 8, 14, 64 };
	C.cache[CL_LLC] = (struct cache_cfg){ 0, 0, 0, 64 };
	C.dram_latency = DRAM_LAT;
	C.data_refs = true;
	C.l1d[PS_4K] = (struct array_cfg){ 1, 1 };
	C.lat_l1 = C.lat_stlb = 0;
	memset(&C.cost, 0, sizeof(C.cost));
	C.roi.warmup_refs = NPAGES + 1;
}

static void add(uint32_t kind, vaddr_t va, uint32_t size)
{
	ck_assert_uint_lt(NR, sizeof(R) / sizeof(R[0]));
	R[NR++] = (struct trace_rec){ va, size, kind };
}

/* The warm-up: a store to the last line of each page, the gap, a hit. */
static void prologue(void)
{
	NR = 0;
	for (int i = 0; i < NPAGES; i++) {
		add(R_INSNS, 0, 1);
		add(R_STORE, BASE + (uint64_t)i * 4096 + 4032, 8);
	}
	add(R_INSNS, 0, GAP);
	add(R_STORE, BASE + (NPAGES - 1) * 4096ULL + 4032, 8);
}

static struct stats run(void)
{
	struct err e = { 0 };
	struct trace_batch b = { R, NR, NULL, 0 };
	struct stats st;
	struct sim *s;

	ck_assert_msg(config_validate(&C, "test", &e) == 0, "%s", e.msg);
	s = calloc(1, sizeof(*s));
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(sim_init(s, &C, &e) == 0, "%s", e.msg);
	s->k.trace_name = "test";
	sim_set_plain(s);
	ck_assert_msg(sim_run_batch(s, &b, &e) == 0, "%s", e.msg);
	sim_finish(s);
	sim_check_invariants(s);
	cache_check_invariants(&s->mmu.cache);
	st = s->st;
	sim_destroy(s);
	free(s);
	return st;
}

/* Loads of lines @from .. @to - 1 of page 0, one instruction each. */
static void seq_loads(unsigned from, unsigned to)
{
	for (unsigned l = from; l < to; l++) {
		add(R_INSNS, 0, 1);
		add(R_LOAD, BASE + l * 64ULL, 8);
	}
}

/*
 * A sequential stream through the L2's prefetcher (degree 2, distance 4):
 * lines 0, 1, 2 miss to DRAM and train it; it issues 3 .. 35 (line 31's access
 * runs to 31 + 4), 33 prefetches; the demands use 3 .. 31, 29 of them, each an
 * L1D miss served by the L2; DRAM reads 3 demands + 33 prefetches.
 */
START_TEST(stream_l2)
{
	struct stats st;

	setup_cfg();
	C.prefetch[PF_L2] = (struct prefetch_cfg){ 2, 4, 4 };
	prologue();
	seq_loads(0, 32);
	st = run();
	ck_assert(st.mem_timed);
	ck_assert_uint_eq(st.prefetches[1], 33);
	ck_assert_uint_eq(st.useful_prefetches[1], 29);
	ck_assert_uint_eq(st.prefetches[0], 0);
	ck_assert_uint_eq(st.useful_prefetches[0], 0);
	ck_assert_uint_eq(st.dram_reads, 3 + 33);
	ck_assert_uint_eq(st.writebacks, 0);
}
END_TEST

/*
 * Both prefetchers, the L1D's next-line (degree 1, distance 1) and the L2's
 * (degree 2, distance 4). Lines 0, 1 and 2 miss; line 2 trains both: the L1D's
 * issues 3 (an L1D miss at the L2, which trains the L2's on 0, 1, 2, 3 with
 * the demands), the L2's 3 and 4 from the demand's training -- 3 is then in the
 * L2, so the L1D prefetch of 3 reads it there and uses it. From then on each
 * line l's demand hits the L1D prefetch of l, issues l + 1 into the L1D, whose
 * L2 access issues the L2's next. Counted exactly by the run below.
 */
START_TEST(stream_both)
{
	struct stats st;

	setup_cfg();
	C.prefetch[PF_L1D] = (struct prefetch_cfg){ 1, 1, 4 };
	C.prefetch[PF_L2] = (struct prefetch_cfg){ 2, 4, 4 };
	prologue();
	seq_loads(0, 32);
	st = run();
	/* the L1D's: 3 .. 32 (line 31 issues 32), used by the demands 3 .. 31 */
	ck_assert_uint_eq(st.prefetches[0], 30);
	ck_assert_uint_eq(st.useful_prefetches[0], 29);
	/* the L2's: 3 .. 36 (the L1D prefetch of 32 reaches the L2 and runs it to 36) */
	ck_assert_uint_eq(st.prefetches[1], 34);
	/* used: by the L1D prefetches of 3 .. 32 */
	ck_assert_uint_eq(st.useful_prefetches[1], 30);
	ck_assert_uint_eq(st.dram_reads, 3 + 34);
}
END_TEST

/*
 * Lines in no order over the four pages issue no prefetch: after the warm-up's
 * line 63, each page is read lower, then higher (never two steps one way).
 */
START_TEST(stream_random)
{
	static const unsigned order[][2] = { { 2, 0 }, { 0, 17 }, { 3, 34 }, { 1, 5 },
					     { 2, 8 }, { 0, 25 }, { 1, 42 }, { 3, 59 } };
	struct stats st;

	setup_cfg();
	C.prefetch[PF_L1D] = (struct prefetch_cfg){ 1, 1, 4 };
	C.prefetch[PF_L2] = (struct prefetch_cfg){ 2, 4, 4 };
	prologue();
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		add(R_INSNS, 0, 1);
		add(R_LOAD, BASE + order[i][0] * 4096ULL + order[i][1] * 64, 8);
	}
	st = run();
	ck_assert_uint_eq(st.prefetches[0], 0);
	ck_assert_uint_eq(st.prefetches[1], 0);
	ck_assert_uint_eq(st.dram_reads, 8);
}
END_TEST

/*
 * The bandwidth: N loads of distinct lines in one instruction, no prefetcher,
 * DRAM latency = one line's transfer (64 bytes at 1 byte a cycle): the bus
 * serves them back to back and the last completes N x 64 cycles after the
 * instruction's dispatch (cycle 1 of the measured stretch). Without the
 * bandwidth they complete together, one latency.
 */
START_TEST(bandwidth_bound)
{
	enum { N = 40 };
	struct stats st;

	for (int bw = 0; bw < 2; bw++) {
		setup_cfg();
		C.dram_latency = 64;
		C.dram_bandwidth = bw ? 1.0 : 0.0;
		prologue();
		add(R_INSNS, 0, 1);
		for (unsigned i = 0; i < N; i++)
			add(R_LOAD, BASE + i * 64ULL, 8);
		st = run();
		ck_assert_uint_eq(st.dram_reads, bw ? N : 0); /* (counted only by the timed memory) */
		ck_assert_uint_eq(st.cyc_total, bw ? 1 + N * 64 : 1 + 64);
	}
}
END_TEST

/*
 * Write-backs: stores to 8 lines of one L1D set (4 ways) with the L2 absent:
 * the fifth to eighth evict the first four, dirty, to DRAM; each takes the bus.
 */
START_TEST(writebacks)
{
	struct stats st;

	setup_cfg();
	C.cache[CL_L2].size = 0;
	C.dram_bandwidth = 64.0;
	prologue();
	for (unsigned i = 0; i < 8; i++) {
		add(R_INSNS, 0, 1);
		add(R_STORE, BASE + i * 1024ULL, 8); /* 16 sets of 64 bytes: every 1 KiB the same set */
	}
	st = run();
	ck_assert_uint_eq(st.writebacks, 4);
	ck_assert_uint_eq(st.dram_reads, 8);
}
END_TEST

/* Under cpu.model additive every key of the timed memory changes nothing. */
START_TEST(additive_ignores)
{
	struct stats a, b;

	setup_cfg();
	C.core.model = CPU_ADDITIVE;
	prologue();
	seq_loads(0, 40);
	a = run();
	C.prefetch[PF_L1D] = (struct prefetch_cfg){ 1, 1, 4 };
	C.prefetch[PF_L2] = (struct prefetch_cfg){ 2, 4, 4 };
	C.dram_bandwidth = 1.0;
	b = run();
	ck_assert(!b.mem_timed);
	ck_assert_uint_eq(a.cyc_total, b.cyc_total);
	ck_assert_uint_eq(a.cyc_data, b.cyc_data);
	ck_assert_uint_eq(b.prefetches[0] + b.prefetches[1] + b.dram_reads, 0);
}
END_TEST

/* The keys: degree 0 is off; a prefetcher needs a distance, streams and its level. */
START_TEST(config_keys)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	ck_assert_uint_eq(c.prefetch[PF_L2].degree, 0);
	ck_assert(c.dram_bandwidth == 0);
	ck_assert_int_eq(config_set(&c, "cache.prefetch.l2.degree=2", &e), 0);
	ck_assert_int_eq(config_validate(&c, "t", &e), -1);
	ck_assert_str_eq(e.msg, "cache.prefetch.l2.distance: must be greater than 0 for a prefetcher of degree 2");
	ck_assert_int_eq(config_set(&c, "cache.prefetch.l2.distance=20", &e), 0);
	ck_assert_int_eq(config_validate(&c, "t", &e), -1);
	ck_assert_str_eq(e.msg, "cache.prefetch.l2.streams: must be greater than 0 for a prefetcher of degree 2");
	ck_assert_int_eq(config_set(&c, "cache.prefetch.l2.streams=32", &e), 0);
	ck_assert_int_eq(config_validate(&c, "t", &e), 0);
	ck_assert_int_eq(config_set(&c, "cache.prefetch.l2.degree=65", &e), 0);
	ck_assert_int_eq(config_validate(&c, "t", &e), -1);
	ck_assert_str_eq(e.msg, "cache.prefetch.l2.degree: 65 is above the maximum 64 lines an access");
	ck_assert_int_eq(config_set(&c, "cache.prefetch.l2.degree=2", &e), 0);
	ck_assert_int_eq(config_set(&c, "cache.l2.size=0", &e), 0);
	ck_assert_int_eq(config_validate(&c, "t", &e), -1);
	ck_assert_str_eq(e.msg, "cache.prefetch.l2.degree: a prefetcher into a cache level that is absent");
	ck_assert_int_eq(config_set(&c, "cache.dram_bandwidth=-1", &e), -1);
	ck_assert_int_eq(config_set(&c, "cache.dram_bandwidth=12.5", &e), 0);
	ck_assert(c.dram_bandwidth == 12.5);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("prefetch");
	TCase *t = tcase_create("prefetch");

	tcase_add_test(t, pf_sequential);
	tcase_add_test(t, pf_descending);
	tcase_add_test(t, pf_random);
	tcase_add_test(t, bus_transfers);
	tcase_add_test(t, stream_l2);
	tcase_add_test(t, stream_both);
	tcase_add_test(t, stream_random);
	tcase_add_test(t, bandwidth_bound);
	tcase_add_test(t, writebacks);
	tcase_add_test(t, additive_ignores);
	tcase_add_test(t, config_keys);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run(suite());
}
