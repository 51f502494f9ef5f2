/*
 * check_overlap.c - the overlap core (cpu.model overlap, core.c) on hand-built
 * record streams, with exact cycle counts.
 *
 * The machine: no caches (every page-table read is a DRAM read of
 * WALK_READ cycles), no paging-structure caches, no STLB, a one-entry L1
 * dTLB and zero probe latencies, so every reference to another page than the
 * last walks 4 entries: WALK cycles. Costs of the kernel are 0. A warm-up
 * (roi.warmup_refs) of NPAGES stores faults the pages in; GAP instructions
 * (R_INSNS) let every warm-up walk retire, and a store that hits the last page
 * ends it. cycles.total counts from there: the stream under test begins.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mmu.h"
#include "sim.h"
#include "trace.h"

#define NPAGES 8
#define GAP 100000
#define WALK_READ 100
#define WALK (4 * WALK_READ)
#define BASE 0x10000000ULL

static struct sim *S;
static struct sim_config C;
static struct trace_rec R[256];
static size_t NR;

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
	for (int i = 0; i < PWC_NR; i++)
		C.pwc[i].entries = C.pwc[i].ways = 0;
	for (int l = 0; l < CL_NR; l++)
		C.cache[l].size = 0;
	C.dram_latency = WALK_READ;
	C.nr_stlb = 0;
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

/* The warm-up: a store to each page (an instruction each), the gap, a hit. */
static void prologue(void)
{
	NR = 0;
	for (int i = 0; i < NPAGES; i++) {
		add(R_INSNS, 0, 1);
		add(R_STORE, BASE + (uint64_t)i * 4096, 8);
	}
	add(R_INSNS, 0, GAP);
	add(R_STORE, BASE + (NPAGES - 1) * 4096ULL, 8);
}

/* Run R on C; return the report. */
static struct stats run(void)
{
	struct err e = { 0 };
	struct trace_batch b = { R, NR, NULL, 0 };
	struct stats st;

	ck_assert_msg(config_validate(&C, "test", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_ptr_nonnull(S);
	ck_assert_msg(sim_init(S, &C, &e) == 0, "%s", e.msg);
	S->k.trace_name = "test";
	sim_set_plain(S);
	ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	sim_finish(S);
	sim_check_invariants(S);
	st = S->st;
	sim_destroy(S);
	free(S);
	return st;
}

/* @n loads of distinct pages, all in one instruction (@dep: each after an R_DEP 1). */
static void loads_one_insn(int n, bool dep)
{
	add(R_INSNS, 0, 1);
	for (int i = 0; i < n; i++) {
		if (dep)
			add(R_DEP, 0, 1);
		add(R_LOAD, BASE + (uint64_t)i * 4096, 8);
	}
}

/* The dispatch of the first instruction after the warm-up, from its end. */
#define T1 1

/* N independent misses with W walkers finish in ceil(N / W) waves of a walk. */
START_TEST(walkers_waves)
{
	static const unsigned w[] = { 1, 2, 3, 8 };

	for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++) {
		struct stats st;

		setup_cfg();
		C.core.walkers = w[k];
		prologue();
		loads_one_insn(NPAGES, false);
		st = run();
		ck_assert_uint_eq(st.walks, NPAGES);
		ck_assert_uint_eq(st.walk_cycles, NPAGES * WALK); /* the walkers' busy time */
		ck_assert_uint_eq(st.cyc_total, T1 + (NPAGES + w[k] - 1) / w[k] * WALK);
		/* the core waited for the walks: every stalled cycle is translation */
		ck_assert_uint_eq(st.cyc_translation_stall, (NPAGES + w[k] - 1) / w[k] * WALK);
		ck_assert_uint_eq(st.cyc_data_stall, 0);
		ck_assert_uint_eq(st.cpu_model, CPU_OVERLAP);
	}
}
END_TEST

/* N independent data misses with M L1D MSHRs: ceil(N / M) waves of a DRAM access. */
START_TEST(mshr_waves)
{
	static const unsigned m[] = { 1, 2, 3, 8 };

	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		struct stats st;

		setup_cfg();
		C.data_refs = true;
		C.cache[CL_L1D] = (struct cache_cfg){ 32 << 10, 8, 4, m[k] };
		C.l1d[PS_4K] = (struct array_cfg){ 64, 4 }; /* the pages stay in the TLB */
		prologue();
		add(R_INSNS, 0, 1);
		for (int i = 0; i < NPAGES; i++) /* line 1 of each page: never touched, a miss */
			add(R_LOAD, BASE + (uint64_t)i * 4096 + 64, 8);
		st = run();
		ck_assert_uint_eq(st.walks, 0);
		ck_assert_uint_eq(st.cyc_data, NPAGES * WALK_READ);
		ck_assert_uint_eq(st.cyc_total, T1 + (NPAGES + m[k] - 1) / m[k] * WALK_READ);
		ck_assert_uint_eq(st.cyc_data_stall, (NPAGES + m[k] - 1) / m[k] * WALK_READ);
		ck_assert_uint_eq(st.cyc_translation_stall, 0);
	}
}
END_TEST

/* A chain of N dependent misses (R_DEP 1 before each load) costs N walks, walkers or not. */
START_TEST(dependent_chain)
{
	struct stats st;

	setup_cfg();
	prologue();
	loads_one_insn(4, true);
	st = run();
	ck_assert_uint_eq(st.walks, 4);
	ck_assert_uint_eq(st.cyc_total, T1 + 4 * WALK);
	ck_assert_uint_eq(st.cyc_translation_stall, 4 * WALK);

	/* the same loads without the R_DEPs: one wave */
	setup_cfg();
	prologue();
	loads_one_insn(4, false);
	st = run();
	ck_assert_uint_eq(st.cyc_total, T1 + WALK);

	/* R_DEP 2 (each load on the one before the last): two chains of two */
	setup_cfg();
	prologue();
	add(R_INSNS, 0, 1);
	for (int i = 0; i < 4; i++) {
		add(R_DEP, 0, 2);
		add(R_LOAD, BASE + (uint64_t)i * 4096, 8);
	}
	st = run();
	ck_assert_uint_eq(st.cyc_total, T1 + 2 * WALK);
}
END_TEST

/* A dependence on a load that hit waits for nothing; a dependent hit still waits. */
START_TEST(dependent_hit)
{
	struct stats st;

	/* load page 0 (a walk), then a hit on it that depends on it, then page 1 on the hit */
	setup_cfg();
	prologue();
	add(R_INSNS, 0, 1);
	add(R_LOAD, BASE, 8);
	add(R_DEP, 0, 1);
	add(R_LOAD, BASE + 8, 8);
	add(R_DEP, 0, 1);
	add(R_LOAD, BASE + 4096, 8);
	st = run();
	ck_assert_uint_eq(st.walks, 2);
	ck_assert_uint_eq(st.cyc_total, T1 + 2 * WALK);

	/* the same with the second R_DEP naming the first load past the hit (d 3: the
	 * warm-up has no loads, so there is none): independent, one wave */
	setup_cfg();
	prologue();
	add(R_INSNS, 0, 1);
	add(R_LOAD, BASE, 8);
	add(R_LOAD, BASE + 8, 8);
	add(R_DEP, 0, 3);
	add(R_LOAD, BASE + 4096, 8);
	st = run();
	ck_assert_uint_eq(st.cyc_total, T1 + WALK);
}
END_TEST

/* Stores retire through the store buffer: a full one holds dispatch. */
START_TEST(store_buffer)
{
	static const unsigned sb[] = { 2, 4, 64 };

	for (size_t k = 0; k < sizeof(sb) / sizeof(sb[0]); k++) {
		struct stats st;

		setup_cfg();
		C.core.store_buffer = sb[k];
		prologue();
		add(R_INSNS, 0, 1);
		for (int i = 0; i < NPAGES; i++)
			add(R_STORE, BASE + (uint64_t)i * 4096, 8);
		st = run();
		ck_assert_uint_eq(st.walks, NPAGES);
		/* a store leaves the buffer when it retired: translated. A full buffer
		 * waits for its oldest, so stores go sb at a time */
		ck_assert_uint_eq(st.cyc_total, T1 + (NPAGES + sb[k] - 1) / sb[k] * WALK);
	}
}
END_TEST

/* The ROB bounds how far dispatch runs ahead of a miss. */
START_TEST(rob_limits)
{
	struct stats st;

	/* a load an instruction, 8 instructions: with a window of 2, waves of 2 */
	setup_cfg();
	C.core.rob = 2;
	prologue();
	for (int i = 0; i < NPAGES; i++) {
		add(R_INSNS, 0, 1);
		add(R_LOAD, BASE + (uint64_t)i * 4096, 8);
	}
	st = run();
	/* instruction 1 + 2k dispatches when 2k - 1 retires: D1 + 400 k; the last of the
	 * 4th wave (instruction 8) completes at D1 + 3 * 400 + 1 + 400 */
	ck_assert_uint_eq(st.cyc_total, T1 + 4 * WALK + 1);
	ck_assert_uint_eq(st.cyc_translation_stall, 4 * WALK + 1 - (NPAGES - 1));

	/* a window of 1000: all 8 in flight, the last dispatched 7 cycles after the first */
	setup_cfg();
	prologue();
	for (int i = 0; i < NPAGES; i++) {
		add(R_INSNS, 0, 1);
		add(R_LOAD, BASE + (uint64_t)i * 4096, 8);
	}
	st = run();
	ck_assert_uint_eq(st.cyc_total, T1 + NPAGES - 1 + WALK);
}
END_TEST

/* Without misses, time is instructions x CPI, as under additive. */
START_TEST(no_misses)
{
	struct stats st;

	setup_cfg();
	C.cpi = 0.5; /* (> 1 / width: retirement catches up with the warm-up's misses in the gap) */
	prologue();
	add(R_INSNS, 0, 1001);
	st = run();
	/* 1001 instructions x 0.5 = 500.5 cycles, rounded to 501 by both */
	ck_assert_uint_eq(st.cyc_instructions, 501);
	ck_assert_uint_eq(st.cyc_total, 501);
}
END_TEST

/* Under additive the overlap keys change nothing, and R_DEP records are ignored. */
START_TEST(additive_unchanged)
{
	struct stats a, b;

	setup_cfg();
	C.core.model = CPU_ADDITIVE;
	prologue();
	loads_one_insn(4, true);
	a = run();
	C.core.walkers = 1;
	C.core.rob = 3;
	C.core.store_buffer = 1;
	b = run();
	ck_assert_uint_eq(a.cyc_total, b.cyc_total);
	/* the sum: instructions, then 4 walks end to end */
	ck_assert_uint_eq(a.cyc_total, 1 + 4 * WALK);
	ck_assert_uint_eq(a.cyc_translation_stall, a.cyc_translation);
	ck_assert_uint_eq(a.cpu_model, CPU_ADDITIVE);
}
END_TEST

/* An R_DEP that ends a batch qualifies the next batch's first record. */
START_TEST(dep_across_batches)
{
	struct err e = { 0 };
	struct trace_batch b;
	size_t cut;

	setup_cfg();
	prologue();
	loads_one_insn(4, true);
	/* cut right after the third R_DEP */
	for (cut = NR; cut-- > 0;)
		if (R[cut].kind == R_DEP)
			break;
	cut++;
	ck_assert_msg(config_validate(&C, "test", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &C, &e) == 0, "%s", e.msg);
	S->k.trace_name = "test";
	b = (struct trace_batch){ R, cut, NULL, 0 };
	ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	b = (struct trace_batch){ R + cut, NR - cut, NULL, 0 };
	ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	sim_finish(S);
	ck_assert_uint_eq(S->st.cyc_total, T1 + 4 * WALK);
	sim_destroy(S);
	free(S);
}
END_TEST

/* The config: cpu.model overlap needs cpi x width >= 1; the keys in config show. */
START_TEST(config_rules)
{
	struct sim_config c;
	struct err e = { 0 };
	char buf[4096];
	FILE *f;

	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "cpu.model=overlap", &e), 0);
	ck_assert_int_eq(config_set(&c, "cpu.cpi=0.2", &e), 0);
	ck_assert_int_eq(config_validate(&c, "t", &e), -1);
	ck_assert_str_eq(e.msg, "cpu.cpi: 0.2 cycles per instruction is faster than 4 instructions "
				"retired a cycle (cpu.width) allow under cpu.model overlap");
	ck_assert_int_eq(config_set(&c, "cpu.width=5", &e), 0);
	ck_assert_int_eq(config_validate(&c, "t", &e), 0);
	ck_assert_int_eq(config_set(&c, "walk.walkers=0", &e), -1);

	/* the keys are written under either model (config show is complete) */
	config_defaults(&c);
	c.core.model = CPU_OVERLAP;
	f = fmemopen(buf, sizeof(buf), "w");
	config_write_yaml(&c, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "model: overlap, rob: 128, width: 4, store_buffer: 32"));
	ck_assert_ptr_nonnull(strstr(buf, "l1d: { size: 32K, ways: 8, latency: 4, mshrs: 10 }"));
	ck_assert_ptr_nonnull(strstr(buf, "walkers: 1"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("overlap");
	TCase *t = tcase_create("core");

	tcase_add_test(t, walkers_waves);
	tcase_add_test(t, mshr_waves);
	tcase_add_test(t, dependent_chain);
	tcase_add_test(t, dependent_hit);
	tcase_add_test(t, store_buffer);
	tcase_add_test(t, rob_limits);
	tcase_add_test(t, no_misses);
	tcase_add_test(t, additive_unchanged);
	tcase_add_test(t, dep_across_batches);
	tcase_add_test(t, config_rules);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run(suite());
}
