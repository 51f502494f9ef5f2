/*
 * check_sim.c - the translation path and the kernel side end to end on hand-made
 * record streams: the counting rules, walk lengths with and without
 * paging-structure caches at 4 and 5 levels, hugetlbfs backing, invalidation on
 * munmap/mprotect, the implicit-mapping rule. Invariants after every operation.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "mmu.h"
#include "sim.h"
#include "trace.h"
#include "workload.h"

static struct sim *S;
static struct sim_config C;

static void setup_cfg(enum os_mode mode, unsigned levels, bool pwc)
{
	config_defaults(&C);
	C.mode = mode;
	C.levels = levels;
	C.memory = 256ULL << 20;
	if (!pwc)
		for (int i = 0; i < PWC_NR; i++)
			C.pwc[i].entries = 0;
}

static void start(void)
{
	struct err e = { 0 };

	S = calloc(1, sizeof(*S));
	ck_assert_ptr_nonnull(S);
	ck_assert_msg(sim_init(S, &C, &e) == 0, "%s", e.msg);
	S->k.trace_name = "test";
}

static void stop(void)
{
	sim_check_invariants(S);
	sim_destroy(S);
	free(S);
}

static void feed(const struct trace_rec *r, size_t n, const struct os_event *ev, size_t nev)
{
	struct trace_batch b = { r, n, ev, nev };
	struct err e = { 0 };

	ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	mmu_fold_memo(&S->mmu);
	sim_check_invariants(S);
}

static void ref(uint32_t kind, vaddr_t va, uint32_t size)
{
	struct trace_rec r = { va, size, kind };

	feed(&r, 1, NULL, 0);
}

static void event(struct os_event ev)
{
	struct trace_rec r = { 0, 0, R_EVENT };

	feed(&r, 1, &ev, 1);
}

static uint64_t l1d_misses(void)
{
	return S->mmu.st.l1[SIDE_D].misses[0] + S->mmu.st.l1[SIDE_D].misses[1] + S->mmu.st.l1[SIDE_D].misses[2];
}

START_TEST(first_touch_rule)
{
	setup_cfg(MODE_BASE, 4, true);
	start();
	ref(R_LOAD, 0x10000, 8);
	ck_assert_uint_eq(l1d_misses(), 1);
	ck_assert_uint_eq(S->mmu.st.stlb.misses, 1);
	ck_assert_uint_eq(S->mmu.st.walks, 1);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ref(R_STORE, 0x10008, 8);
	ck_assert_uint_eq(S->mmu.st.l1[SIDE_D].hits[PS_4K], 1);
	/* M: two lookups; crossing a page: one lookup per page */
	ref(R_MODIFY, 0x10ffc, 8);
	ck_assert_uint_eq(S->mmu.st.l1[SIDE_D].hits[PS_4K] + l1d_misses(), 2 + 4);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->mmu.st.walks, S->mmu.st.stlb.misses);
	/* an instruction fetch goes to the iTLB, whose STLB probe hits */
	ref(R_IFETCH, 0x10000, 4);
	ck_assert_uint_eq(S->mmu.st.l1[SIDE_I].misses[PS_4K], 1);
	ck_assert_uint_eq(S->mmu.st.stlb.hits, 1);
	ck_assert_uint_eq(S->mmu.st.walks, 2);
	sim_finish(S);
	ck_assert_uint_eq(S->st.instructions, 1);
	ck_assert_uint_eq(S->st.lookups[SIDE_D], 6);
	stop();
}
END_TEST

/* Walk reads with every PWC off: flush the TLBs, touch again, count PTE reads. */
static uint64_t reads_of_rewalk(vaddr_t va)
{
	uint64_t before;

	mmu_flush_all(&S->mmu);
	before = S->mmu.st.pte_reads;
	ref(R_LOAD, va, 8);
	return S->mmu.st.pte_reads - before;
}

START_TEST(walk_lengths)
{
	static const unsigned levels[] = { 4, 5 };

	for (int i = 0; i < 2; i++) {
		unsigned L = levels[i];

		setup_cfg(MODE_HUGETLBFS, L, false);
		start();
		event((struct os_event){ .kind = EV_MMAP, .prot = 3, .flags = 0x22, .fd = -1,
					 .addr = 0x40000000, .len = 4 << 20 });
		ref(R_LOAD, 0x40000000, 8);  /* 2M page */
		ck_assert_uint_eq(S->st.nr_hugetlb_pages, 1);
		ref(R_LOAD, 0x40400000, 8);  /* outside the mapping: implicit, 2M granule */
		ck_assert_uint_eq(S->st.nr_hugetlb_pages, 2);
		ck_assert_uint_eq(reads_of_rewalk(0x40000000), L - 1);
		ck_assert_uint_eq(reads_of_rewalk(0x40400123), L - 1);
		stop();
		setup_cfg(MODE_BASE, L, false);
		start();
		ref(R_LOAD, 0x40000000, 8);
		ck_assert_uint_eq(reads_of_rewalk(0x40000000), L);
		stop();
	}
}
END_TEST

START_TEST(pwc_skips_levels)
{
	setup_cfg(MODE_BASE, 4, true);
	start();
	ref(R_LOAD, 0x40000000, 8);
	ref(R_LOAD, 0x40001000, 8); /* PDE cache hit: one read */
	ck_assert_uint_eq(S->mmu.st.pwc[PWC_PDE].hits, 1);
	ck_assert_uint_eq(reads_of_rewalk(0x40001000), 4); /* flush emptied the PWCs too */
	{
		uint64_t before = S->mmu.st.pte_reads;

		ref(R_LOAD, 0x40201000, 8); /* other PT, same PD: PDPTE cache hit: PDE + PTE */
		ck_assert_uint_eq(S->mmu.st.pwc[PWC_PDPT].hits, 1);
		ck_assert_uint_eq(S->mmu.st.pte_reads - before, 2 + 1); /* + the re-read after the fault */
	}
	/* no PDE-cache entry for a 2M leaf: hugetlbfs */
	stop();
	setup_cfg(MODE_HUGETLBFS, 4, true);
	start();
	ref(R_LOAD, 0x40000000, 8);
	ck_assert_uint_eq(S->mmu.pwc[PWC_PDE].nr_valid, 0);
	ck_assert_uint_eq(S->mmu.pwc[PWC_PDPT].nr_valid, 1);
	stop();
}
END_TEST

START_TEST(munmap_invalidates)
{
	setup_cfg(MODE_BASE, 4, true);
	start();
	event((struct os_event){ .kind = EV_MMAP, .prot = 3, .flags = 0x22, .fd = -1,
				 .addr = 0x7f0000000000, .len = 64 << 12 });
	for (int i = 0; i < 64; i++)
		ref(R_STORE, 0x7f0000000000 + ((vaddr_t)i << 12), 8);
	ck_assert_uint_eq(S->st.nr_anon_pages, 64);
	/* 10 pages: 10 INVLPGs */
	event((struct os_event){ .kind = EV_MUNMAP, .addr = 0x7f0000000000, .len = 10 << 12 });
	ck_assert_uint_eq(S->st.nr_anon_pages, 54);
	ck_assert_uint_eq(S->st.tlb_invalidations, 10);
	/* 54 pages > tlb_single_page_flush_ceiling (33): one full flush */
	event((struct os_event){ .kind = EV_MUNMAP, .addr = 0x7f000000a000, .len = 54 << 12 });
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->st.tlb_invalidations, 11);
	ck_assert_uint_eq(S->k.mm->vmas.n, 0);
	/* touching it again makes an implicit mapping and faults afresh */
	ref(R_LOAD, 0x7f0000000000, 8);
	ck_assert_uint_eq(S->st.pgfault, 65);
	ck_assert_uint_eq(S->k.mm->vmas.n, 1);
	ck_assert_uint_eq(S->k.mm->vmas.v[0].start, 0x7f0000000000);
	ck_assert_uint_eq(S->k.mm->vmas.v[0].end, 0x7f0000200000);
	stop();
}
END_TEST

/*
 * Resident memory over simulated time (memory.peak_* and huge_coverage_*): with
 * every latency and kernel cost 0 and CPI 1, time is the instruction count, so
 * the integrals are done by hand. Two THPs come and go: a PMD split (a page
 * unmapped inside one) leaves 511 4K pages; the end state is empty.
 */
START_TEST(memory_peaks_and_time_weighted_coverage)
{
	static const char *const zero[] = {
		"tlb.latency.l1=0", "tlb.latency.stlb=0", "cache.l1d.latency=0", "cache.l2.latency=0",
		"cache.llc.latency=0", "cache.dram_latency=0", "os.cost.fault=0",
		"os.cost.clear_page=0", "os.cost.flush=0", "cpu.cpi=1",
	};
	const uint64_t M2 = 2 << 20;
	struct err e = { 0 };

	setup_cfg(MODE_THP, 4, true);
	for (size_t i = 0; i < ARRAY_SIZE(zero); i++)
		ck_assert_msg(config_set(&C, zero[i], &e) == 0, "%s", e.msg);
	start();
	event((struct os_event){ .kind = EV_MMAP, .prot = 3, .flags = 0x22, .fd = -1,
				 .addr = 0x40000000, .len = 2 * M2 });
	ref(R_STORE, 0x40000000, 8);    /* t 0: one THP */
	ref(R_INSNS, 0, 100);
	ref(R_STORE, 0x40200000, 8);    /* t 100: two */
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ref(R_INSNS, 0, 100);
	event((struct os_event){ .kind = EV_MUNMAP, .addr = 0x40001000, .len = 4096 }); /* t 200 */
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 511);
	ref(R_INSNS, 0, 100);
	event((struct os_event){ .kind = EV_MUNMAP, .addr = 0x40000000, .len = 2 * M2 }); /* t 300 */
	ref(R_INSNS, 0, 100);
	sim_finish(S);
	ck_assert_uint_eq(S->st.cyc_total, 400);
	ck_assert_uint_eq(S->st.rss_bytes, 0);
	ck_assert(S->st.huge_coverage == 0.0);
	ck_assert_uint_eq(S->st.peak_rss_bytes, 2 * M2);
	ck_assert_uint_eq(S->st.peak_huge_bytes, 2 * M2);
	ck_assert(S->st.huge_coverage_peak == 1.0);
	/* huge: 2M x 100 + 4M x 100 + 2M x 100; RSS: the same + (2M - 4K) x 100 */
	ck_assert(S->st.huge_coverage_mean == (double)(8 * M2 / 2 * 100) / (double)((10 * M2 / 2 - 4096) * 100));
	stop();
}
END_TEST

START_TEST(mprotect_splits_vma)
{
	enum page_size ps;
	pfn_t pfn;
	uint64_t e;

	setup_cfg(MODE_BASE, 4, true);
	start();
	event((struct os_event){ .kind = EV_MMAP, .prot = 3, .flags = 0x22, .fd = -1,
				 .addr = 0x100000, .len = 16 << 12 });
	ref(R_STORE, 0x104000, 8);
	event((struct os_event){ .kind = EV_MPROTECT, .prot = 1, .addr = 0x104000, .len = 4096 });
	ck_assert_uint_eq(S->k.mm->vmas.n, 3);
	ck_assert(pt_lookup(&S->k.mm->pt, 0x104000, &ps, &pfn, &e));
	ck_assert(!(e & PTE_RW));
	ck_assert_uint_eq(S->st.tlb_invalidations, 1);
	event((struct os_event){ .kind = EV_MPROTECT, .prot = 3, .addr = 0x104000, .len = 4096 });
	ck_assert_uint_eq(S->k.mm->vmas.n, 1); /* merged back */
	stop();
}
END_TEST

START_TEST(hugetlb_pool_limits)
{
	setup_cfg(MODE_HUGETLBFS, 4, true);
	C.hugetlb_pages = 1;
	start();
	ck_assert_uint_eq(S->k.hugetlb.nr_pages, 1);
	event((struct os_event){ .kind = EV_MMAP, .prot = 3, .flags = 0x22, .fd = -1,
				 .addr = 0x40000000, .len = 6 << 20 });
	ref(R_LOAD, 0x40000000, 8);
	ref(R_STORE, 0x40200000, 8); /* pool empty: 4K (a store: a load maps the zero page) */
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	/* partial munmap of the huge page zaps it whole; it returns to the pool */
	event((struct os_event){ .kind = EV_MUNMAP, .addr = 0x40000000, .len = 4096 });
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 0);
	ck_assert_uint_eq(S->k.hugetlb.nr_free, 1);
	ref(R_STORE, 0x40001000, 8); /* its 2M range is no longer wholly mapped: 4K */
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	ref(R_LOAD, 0x40400000, 8);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages, 1);
	stop();
}
END_TEST

START_TEST(implicit_off_is_an_error)
{
	struct trace_rec r = { 0x5000, 8, R_LOAD };
	struct trace_batch b = { &r, 1, NULL, 0 };
	struct err e = { 0 };

	setup_cfg(MODE_BASE, 4, true);
	C.implicit.enabled = false;
	start();
	ck_assert_int_eq(sim_run_batch(S, &b, &e), -1);
	ck_assert_str_eq(e.file, "test");
	ck_assert_msg(strstr(e.msg, "record 1: address 0x5000 is outside every mapping") != NULL, "%s",
		      e.msg);
	sim_destroy(S);
	free(S);
	/* beyond 4-level paging */
	setup_cfg(MODE_BASE, 4, true);
	start();
	r.addr = 1ULL << 50;
	ck_assert_int_eq(sim_run_batch(S, &b, &e), -1);
	ck_assert_msg(strstr(e.msg, "needs more than 4-level paging") != NULL, "%s", e.msg);
	sim_destroy(S);
	free(S);
	setup_cfg(MODE_BASE, 5, true);
	start();
	ref(R_LOAD, 1ULL << 50, 8);
	ck_assert_uint_eq(S->st.pgfault, 1);
	stop();
}
END_TEST

START_TEST(out_of_memory_is_reported)
{
	struct trace_rec r[2048];
	struct trace_batch b = { r, 0, NULL, 0 };
	struct err e = { 0 };

	setup_cfg(MODE_BASE, 4, true);
	C.memory = 4ULL << 20; /* 1024 frames */
	C.swap_size = 0;       /* nothing to reclaim to */
	start();
	for (int i = 0; i < 2048; i++)
		r[i] = (struct trace_rec){ (vaddr_t)i << 12, 8, R_LOAD };
	b.n = 2048;
	ck_assert_int_eq(sim_run_batch(S, &b, &e), -1);
	ck_assert_msg(strstr(e.msg, "simulated memory (os.memory = 4 MiB) is exhausted") != NULL, "%s",
		      e.msg);
	sim_check_invariants(S);
	sim_destroy(S);
	free(S);
}
END_TEST

/* Machines a[i] and b[i] from the same config: the defaults with @sets[i]'s --sets. */
static void init_pairs(struct sim *a, struct sim *b, const char *const (*sets)[3], size_t n)
{
	struct err e = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct sim_config c;

		config_defaults(&c);
		for (int k = 0; k < 3 && sets[i][k]; k++)
			ck_assert_msg(config_set(&c, sets[i][k], &e) == 0, "%s", e.msg);
		ck_assert_msg(config_validate(&c, "t", &e) == 0, "%s", e.msg);
		ck_assert_int_eq(sim_init(&a[i], &c, &e), 0);
		ck_assert_int_eq(sim_init(&b[i], &c, &e), 0);
	}
}

/*
 * Several simulators fed from one batch (sweeps, --modes) use the shared memo
 * summary: every counter must equal a plain run's, on a real trace with syscall
 * events, for geometries where the memo applies (L1 arrays) and where it cannot
 * (no 2M iTLB array), in base, THP and hugetlbfs modes.
 */
START_TEST(summarized_batches_count_the_same)
{
	static const char *const sets[][3] = {
		{ "os.mode=base", NULL, NULL },
		{ "os.mode=thp", "tlb.l1d.4K.entries=16", NULL },
		{ "os.mode=hugetlbfs", "tlb.l1i.2M.entries=0", "tlb.l1i.2M.ways=0" },
		{ "os.mode=base", "tlb.policy=random", "cache.data_refs=true" },
		{ "os.mode=thp", "tlb.l1d.4K.entries=8", "tlb.policy=plru" },
		{ "os.mode=base", "tlb.l1d.4K.entries=4", "tlb.policy=fifo" },
	};
	/* a real trace, one with syscall events, a workload with R_INSNS inside runs */
	const char *trace[] = { "tests/validation/small.lackey.zst", "tests/golden/mixed.lackey",
				"stride:size=8M,stride=64,passes=2" };

	for (size_t t = 0; t < ARRAY_SIZE(trace); t++) {
		struct sim *a = calloc(ARRAY_SIZE(sets), sizeof(*a)), *b = calloc(ARRAY_SIZE(sets), sizeof(*b));
		struct batch_summary sum = { 0 };
		struct err e = { 0 };
		struct trace_reader *r = t == 2 ? workload_open(trace[t], 1, &e)
						: trace_open(trace[t], TF_AUTO, &e);
		struct trace_batch bt;
		uint64_t segs = 0;
		int n;

		ck_assert_msg(r != NULL, "%s", e.msg);
		init_pairs(a, b, sets, ARRAY_SIZE(sets));
		while ((n = trace_next(r, &bt, &e)) > 0) {
			ck_assert_int_eq(sim_batch_summarize(&bt, &sum), 0);
			segs += sum.n;
			for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
				ck_assert_int_eq(sim_run_batch(&a[i], &bt, &e), 0);
				ck_assert_int_eq(sim_run_batch_summarized(&b[i], &bt, &sum, &e), 0);
			}
		}
		ck_assert_int_eq(n, 0);
		if (t == 0)
			ck_assert_uint_gt(segs, 100000); /* the summary found runs to skip */
		if (t == 2)
			ck_assert_uint_eq(segs, 4096); /* a run per page and pass, each with R_INSNS */
		for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
			sim_finish(&a[i]);
			sim_finish(&b[i]);
			ck_assert_msg(memcmp(&a[i].st, &b[i].st, sizeof(a[i].st)) == 0, "%s, config %zu: counters differ",
				      trace[t], i);
			ck_assert_uint_gt(a[i].st.l1[SIDE_D].hits[PS_4K] + a[i].st.l1[SIDE_D].hits[PS_2M], 0);
			sim_check_invariants(&b[i]);
			sim_destroy(&a[i]);
			sim_destroy(&b[i]);
		}
		sim_batch_summary_free(&sum);
		free(a);
		free(b);
		trace_close(r);
	}
}
END_TEST

/*
 * R_DEP records (a dependence; nothing to the additive core) inside and around
 * same-page runs: the summary only counts them, so they neither end nor open a
 * run, and the counts are those of the plain loop -- with runs applied from the
 * memo and with runs replayed record by record.
 */
static const struct os_event dep_ev[] = {
	{ .kind = EV_MMAP, .prot = 5, .flags = 0x22, .fd = -1, .addr = 0x20000000, .len = 0x10000 },
	{ .kind = EV_MMAP, .prot = 3, .flags = 0x22, .fd = -1, .addr = 0x10000000, .len = 0x100000 },
	{ .kind = EV_MUNMAP, .addr = 0x100f0000, .len = 0x1000 },
};
/* the later passes' events: munmaps of what nothing touches */
static const struct os_event dep_ev_again[] = {
	{ .kind = EV_MUNMAP, .addr = 0x30000000, .len = 0x1000 },
	{ .kind = EV_MUNMAP, .addr = 0x100e0000, .len = 0x1000 },
	{ .kind = EV_MUNMAP, .addr = 0x100f0000, .len = 0x1000 },
};
static const struct trace_rec dep_recs[] = {
	{ 0, 0, R_EVENT },		/* 0 */
	{ 0, 1, R_EVENT },		/* 1 */
	{ 0x20000000, 4, R_IFETCH },	/* 2 */
	{ 0x10000000, 8, R_LOAD },	/* 3 */
	{ 0x20000004, 4, R_IFETCH },	/* 4: run A opens */
	{ 0, 1, R_DEP },		/* 5 */
	{ 0x10000008, 8, R_LOAD },	/* 6 */
	{ 0, 3, R_INSNS },		/* 7: folds into run A */
	{ 0, 1, R_DEP },		/* 8 */
	{ 0x10000010, 8, R_STORE },	/* 9 */
	{ 0, 2, R_DEP },		/* 10 */
	{ 0x10000018, 8, R_MODIFY },	/* 11 */
	{ 0x20000008, 4, R_IFETCH },	/* 12 */
	{ 0, 1, R_DEP },		/* 13 */
	{ 0x10001000, 8, R_LOAD },	/* 14: a new page ends run A */
	{ 0, 1, R_DEP },		/* 15 */
	{ 0x10001ff0, 32, R_LOAD },	/* 16: crosses into the next page: replayed */
	{ 0, 1, R_DEP },		/* 17 */
	{ 0x10001008, 8, R_LOAD },	/* 18: no run after a crossing */
	{ 0x10001010, 8, R_LOAD },	/* 19: run B */
	{ 0, 1, R_DEP },		/* 20 */
	{ 0, 2, R_EVENT },		/* 21: ends run B */
	{ 0, 1, R_DEP },		/* 22 */
	{ 0x10001018, 8, R_LOAD },	/* 23 */
	{ 0x2000000c, 4, R_IFETCH },	/* 24 */
	{ 0x20000010, 4, R_IFETCH },	/* 25: run C */
	{ 0, 1, R_DEP },		/* 26 */
	{ 0x10001020, 8, R_LOAD },	/* 27 */
	{ 0, 1, R_DEP },		/* 28: ends the batch */
};

START_TEST(dependences_fold_into_summarized_runs)
{
	static const char *const sets[][3] = {
		{ "os.mode=base", NULL, NULL },
		{ "os.mode=thp", "tlb.l1d.4K.entries=16", NULL },
		{ "os.mode=hugetlbfs", "tlb.l1i.2M.entries=0", "tlb.l1i.2M.ways=0" },
		{ "os.mode=base", "tlb.policy=random", "cache.data_refs=true" },
		{ "os.mode=base", "tlb.l1d.4K.entries=4", "tlb.policy=fifo" },
	};
	/* the hand-made batch (three times: later passes apply the runs from the memo), a chase */
	const char *trace[] = { "hand-made", "chase:size=4M,stride=4K", "chase:size=256K" };

	for (size_t t = 0; t < ARRAY_SIZE(trace); t++) {
		struct sim *a = calloc(ARRAY_SIZE(sets), sizeof(*a)), *b = calloc(ARRAY_SIZE(sets), sizeof(*b));
		struct batch_summary sum = { 0 };
		struct err e = { 0 };
		struct trace_reader *r = t ? workload_open(trace[t], 1, &e) : NULL;
		struct trace_batch bt;
		uint64_t segs = 0, deps = 0, pass = 0;
		int n;

		ck_assert_msg(t == 0 || r != NULL, "%s", e.msg);
		init_pairs(a, b, sets, ARRAY_SIZE(sets));
		for (;;) {
			if (t == 0) {
				if (pass++ == 3)
					break;
				bt = (struct trace_batch){ dep_recs, ARRAY_SIZE(dep_recs), pass == 1 ? dep_ev : dep_ev_again,
							   3 };
				n = 1;
			} else if ((n = trace_next(r, &bt, &e)) <= 0) {
				break;
			}
			ck_assert_int_eq(sim_batch_summarize(&bt, &sum), 0);
			segs += sum.n;
			deps += sum.kinds[R_DEP];
			if (t == 0) { /* runs A, B, C, each whole; 14 ops (run A's R_INSNS a word) */
				ck_assert_uint_eq(sum.n, 3);
				ck_assert_uint_eq(sum.nop, 14);
				ck_assert_uint_eq(sum.kinds[R_DEP], 10);
				ck_assert_uint_eq(sum.insns, 3);
			}
			for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
				ck_assert_msg(sim_run_batch(&a[i], &bt, &e) == 0, "%s", e.msg);
				ck_assert_msg(sim_run_batch_summarized(&b[i], &bt, &sum, &e) == 0, "%s", e.msg);
			}
		}
		ck_assert_int_eq(n, 0 + (t == 0));
		for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
			sim_finish(&a[i]);
			sim_finish(&b[i]);
			ck_assert_msg(memcmp(&a[i].st, &b[i].st, sizeof(a[i].st)) == 0, "%s, config %zu: counters differ",
				      trace[t], i);
			ck_assert_msg(memcmp(a[i].nrec, b[i].nrec, sizeof(a[i].nrec)) == 0,
				      "%s, config %zu: record counts differ", trace[t], i);
			ck_assert_uint_eq(b[i].nrec[R_DEP], deps);
			ck_assert_uint_eq(a[i].k.rec_no, b[i].k.rec_no);
			sim_check_invariants(&b[i]);
			sim_destroy(&a[i]);
			sim_destroy(&b[i]);
		}
		/* a dependence per chase step but the first; a 64-byte chase's steps share pages: runs */
		static const uint64_t want_deps[] = { 30, 1023, 4095 }, want_segs[] = { 9, 0, 119 };
		ck_assert_uint_eq(deps, want_deps[t]);
		ck_assert_uint_eq(segs, want_segs[t]);
		sim_batch_summary_free(&sum);
		free(a);
		free(b);
		if (r)
			trace_close(r);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("sim");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, first_touch_rule);
	tcase_add_test(tc, summarized_batches_count_the_same);
	tcase_add_test(tc, dependences_fold_into_summarized_runs);
	tcase_add_test(tc, walk_lengths);
	tcase_add_test(tc, pwc_skips_levels);
	tcase_add_test(tc, munmap_invalidates);
	tcase_add_test(tc, memory_peaks_and_time_weighted_coverage);
	tcase_add_test(tc, mprotect_splits_vma);
	tcase_add_test(tc, hugetlb_pool_limits);
	tcase_add_test(tc, implicit_off_is_an_error);
	tcase_add_test(tc, out_of_memory_is_reported);
	suite_add_tcase(s, tc);
	return check_run(s);
}
