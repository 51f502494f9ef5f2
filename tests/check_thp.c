/*
 * check_thp.c - the kernel model's scenarios, each a small trace in Valgrind's
 * real lackey + --trace-syscalls syntax, asserting the kernel's counters
 * (reference §2, §3, §4), with every invariant checked after each batch.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "mmu.h"
#include "sim.h"
#include "trace.h"

static struct sim *S;
static unsigned check_every = 1; /* invariants after every Nth record */

/* Run the lackey text @trace on the default machine with --set overrides (NULL-ended). */
static void run(const char *trace, ...)
{
	char path[] = "/tmp/check_thp_XXXXXX";
	int fd = mkstemp(path);
	struct sim_config c;
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	const char *set;
	va_list ap;
	int n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, trace, strlen(trace)), (ssize_t)strlen(trace));
	close(fd);
	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	va_start(ap, trace);
	while ((set = va_arg(ap, const char *)))
		ck_assert_msg(config_set(&c, set, &e) == 0, "%s: %s", set, e.msg);
	va_end(ap);
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
	r = trace_open(path, TF_LACKEY, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	S->trace_name = r->name;
	while ((n = trace_next(r, &b, &e)) > 0) {
		/* one record at a time, so invariants hold after every operation */
		for (size_t i = 0; i < b.n; i++) {
			struct trace_batch one = { &b.recs[i], 1, b.ev, b.nev };

			ck_assert_msg(sim_run_batch(S, &one, &e) == 0, "%s", e.msg);
			if (S->rec_no % check_every == 0)
				sim_check_invariants(S);
		}
	}
	ck_assert_msg(n == 0, "%s", e.msg);
	sim_check_invariants(S);
	trace_close(r);
	unlink(path);
	sim_finish(S);
}

static void done(void)
{
	sim_destroy(S);
	free(S);
}

#define MMAP_4M "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
#define MADV_HUGE_4M "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 4194304, 14 ) --> [pre-success] Success(0x0)\n"

START_TEST(always)
{
	run(MMAP_4M " S 40000010,8\n S 40200000,8\n L 40200008,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 2);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 0);
	ck_assert_uint_eq(S->st.huge_bytes, 4 << 20);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_2M], 2);
	done();
}
END_TEST

START_TEST(madvise_and_never)
{
	run(MMAP_4M " S 40000010,8\n S 40200000,8\n", "os.thp.enabled=madvise", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
	run(MMAP_4M MADV_HUGE_4M " S 40000010,8\n S 40200000,8\n", "os.thp.enabled=madvise", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();
	run(MMAP_4M MADV_HUGE_4M " S 40000010,8\n S 40200000,8\n", "os.thp.enabled=never", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
}
END_TEST

START_TEST(partial_vma)
{
	/* [0x40100000, 0x40500000): only [0x40200000, 0x40400000) is a whole 2M range */
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40100000)\n"
	    " S 40100000,8\n S 40200000,8\n S 40400000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 0); /* ineligibility is silent */
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
}
END_TEST

START_TEST(partial_mprotect_splits_pmd)
{
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4096, 1 )[sync] --> Success(0x0)\n"
	    " L 40000010,8\n L 40001000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 512);
	ck_assert_uint_eq(S->vmas.n, 2);
	done();
}
END_TEST

START_TEST(partial_munmap_defers_split)
{
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 1048576 )[sync] --> Success(0x0)\n"
	    " L 40100000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(S->st.thp_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 256);
	ck_assert_uint_eq(S->thp.nr_deferred, 1);
	/* the shrinker splits it and frees the 256 unmapped subpages */
	ck_assert_uint_eq(thp_shrink_deferred(S), 256);
	ck_assert_uint_eq(S->st.thp_split_page, 1);
	sim_check_invariants(S);
	done();
}
END_TEST

START_TEST(whole_munmap_no_split)
{
	run(MMAP_4M " S 40000010,8\n S 40200010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 2097152 )[sync] --> Success(0x0)\n", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.rss_bytes, 2 << 20);
	/* the freed THP went back whole: a free order-9 (or larger) block exists */
	ck_assert_int_eq(buddy_fragmentation_index(&S->buddy, HPAGE_PMD_ORDER), -1000);
	ck_assert_uint_eq(S->thp.dep_n, 1); /* its deposited table went with it */
	done();
}
END_TEST

START_TEST(zero_page_then_write)
{
	run(MMAP_4M " L 40000010,8\n L 40001000,8\n S 40002000,8\n L 40003000,8\n", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 1);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.pgfault, 2); /* the read fault, then the write-protect fault */
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->thp.nr_zero_ptes, 511);
	ck_assert_uint_eq(S->st.rss_bytes, 4096);
	done();
	/* use_zero_page off: a read fault allocates the THP */
	run(MMAP_4M " L 40000010,8\n", "os.thp.use_zero_page=false", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 0);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	done();
}
END_TEST

/* 64 sparse 4K touches in each 2M range, then MADV_HUGEPAGE: khugepaged collapses them. */
static char *sparse_then_madvise(void)
{
	static char buf[8192];
	size_t n = 0;

	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", MMAP_4M);
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 64; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " S %x,8\n",
					      0x40000000 + r * 0x200000 + i * 0x8000);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", MADV_HUGE_4M);
	for (int i = 0; i < 40; i++) /* time passes: cpu.freq_mhz=1 makes 1 ms 1000 cycles */
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " L %x,8\n", 0x40000000 + i * 0x8000);
	return buf;
}

START_TEST(khugepaged_collapses)
{
	run(sparse_then_madvise(), "os.thp.enabled=madvise", "cpu.freq_mhz=1",
	    "os.khugepaged.scan_sleep_millisecs=1", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 2);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_ge(S->st.khugepaged_full_scans, 1);
	ck_assert_uint_gt(S->st.cyc_khugepaged, 0);
	done();
	run(sparse_then_madvise(), "os.thp.enabled=madvise", "cpu.freq_mhz=1",
	    "os.khugepaged.scan_sleep_millisecs=1", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_ge(S->st.thp_scan_exceed_none_pte, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 128);
	done();
}
END_TEST

START_TEST(madv_collapse)
{
	run(MMAP_4M " S 40000010,8\n S 40100000,8\n"
	    "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 2097152, 25 ) --> [pre-success] Success(0x0)\n",
	    "os.thp.enabled=madvise", "os.khugepaged.max_ptes_none=0", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
}
END_TEST

START_TEST(five_level_huge_walk)
{
	uint64_t before;

	run(MMAP_4M " S 40000010,8\n", "walk.levels=5", "walk.pwc.pml5.entries=0",
	    "walk.pwc.pml4.entries=0", "walk.pwc.pdpt.entries=0", "walk.pwc.pde.entries=0", NULL);
	mmu_flush_all(&S->mmu);
	before = S->mmu.st.pte_reads;
	{
		struct trace_rec r = { 0x40000020, 8, R_LOAD };
		struct trace_batch b = { &r, 1, NULL, 0 };
		struct err e;

		ck_assert_int_eq(sim_run_batch(S, &b, &e), 0);
	}
	ck_assert_uint_eq(S->mmu.st.pte_reads - before, 4); /* PML5E, PML4E, PDPTE, PDE(2M) */
	done();
}
END_TEST

START_TEST(fallback_when_every_block_pinned)
{
	run(MMAP_4M " S 40000010,8\n S 40200010,8\n", "os.fragmentation.unmovable=1",
	    "os.khugepaged.defrag=false", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 2);
	ck_assert_uint_eq(S->st.compact_stall, 0); /* defrag=madvise, no MADV_HUGEPAGE: no stall */
	/* khugepaged woke at registration, found the PTE-mapped ranges, could not allocate */
	ck_assert_uint_ge(S->st.thp_collapse_alloc_failed, 1);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 2);
	done();
	/* madvised: direct compaction runs, cannot move pinned pages, fails */
	run(MMAP_4M MADV_HUGE_4M " S 40000010,8\n S 40200010,8\n", "os.fragmentation.unmovable=1", NULL);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 2);
	ck_assert_uint_ge(S->st.compact_stall, 1);
	ck_assert_uint_eq(S->st.compact_success, 0);
	ck_assert_uint_eq(S->st.compact_fail, S->st.compact_stall);
	ck_assert_uint_eq(S->st.compact_migrated, 0);
	done();
}
END_TEST

/*
 * Memory (64 MiB) filled with 4K pages of a MADV_NOHUGEPAGE mapping, then every
 * other page of its first 32 MiB unmapped: free memory is plentiful but all in
 * order-0 holes among movable pages. A THP fault in a MADV_HUGEPAGE mapping stalls
 * in direct compaction, which migrates pages and succeeds.
 */
START_TEST(compaction_of_movable_fragmentation)
{
	size_t cap = 4 << 20, n = 0;
	char *t = malloc(cap);
	const unsigned pages = 16128; /* 63 MiB */

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x10000000)\n"
			      "SYSCALL[7,1](28) sys_madvise ( 0x10000000, %u, 15 ) --> [pre-success] Success(0x0)\n",
			      pages * 4096, pages * 4096);
	for (unsigned i = 0; i < pages; i++)
		n += (size_t)snprintf(t + n, cap - n, " S %x,8\n", 0x10000000 + i * 4096);
	for (unsigned i = 0; i < 8192; i += 2)
		n += (size_t)snprintf(t + n, cap - n,
				      "SYSCALL[7,1](11) sys_munmap ( 0x%x, 4096 )[sync] --> Success(0x0)\n",
				      0x10000000 + i * 4096);
	n += (size_t)snprintf(t + n, cap - n, "%s", MMAP_4M MADV_HUGE_4M " S 40000010,8\n");
	check_every = 4096;
	run(t, "os.memory=64M", "os.swap.size=0", NULL); /* no swap: only compaction can help */
	check_every = 1;
	free(t);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.compact_stall, 1);
	ck_assert_uint_eq(S->st.compact_success, 1);
	ck_assert_uint_eq(S->st.compact_fail, 0);
	ck_assert_uint_gt(S->st.compact_migrated, 0);
	ck_assert_uint_gt(S->st.cyc_compaction, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, pages - 4096);
	done();
}
END_TEST

/* A trace that maps @mb MiB at 0x80000000 and stores to every @step-th byte of it,
 * then touches @again (0: nothing). */
static char *fill_trace(unsigned mb, unsigned step, unsigned long again, const char *extra)
{
	size_t cap = 8 << 20, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n%s",
			      mb << 20, extra);
	for (unsigned long off = 0; off < (unsigned long)mb << 20; off += step)
		n += (size_t)snprintf(t + n, cap - n, " S %lx,8\n", 0x80000000UL + off);
	if (again)
		n += (size_t)snprintf(t + n, cap - n, " L %lx,8\n", again);
	return t;
}

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
	ck_assert_uint_eq(S->st.nr_anon_pages + S->pt.nr_swap, pages);
	ck_assert_uint_eq(S->st.swap_bytes, S->pt.nr_swap * 4096);
	ck_assert_uint_eq(S->pt.nr_swap, S->st.pswpout - S->st.pswpin);
	/* all reclaim was kswapd's, all of it to swap; nothing was referenced twice */
	ck_assert_uint_eq(S->st.pgsteal_kswapd, S->st.pswpout);
	ck_assert_uint_eq(S->st.pgsteal_direct, 0);
	ck_assert_uint_eq(S->st.allocstall_normal, 0);
	ck_assert_uint_ge(S->st.pgscan_kswapd, S->st.pgsteal_kswapd);
	ck_assert_uint_gt(S->st.pageoutrun, 0);
	ck_assert_uint_gt(S->st.tlb_invalidations, 0);
	/* the cost is visible: one swap-in on the application's fault cycles */
	ck_assert_uint_ge(S->st.cyc_fault, S->cfg.cost.swap_in);
	ck_assert_uint_ge(S->buddy.nr_free_pages, buddy_watermark(&S->buddy, WMARK_MIN));
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
	ck_assert_uint_eq(S->lru.nr[LRU_ACTIVE_ANON], 2560); /* all still resident */
	ck_assert_uint_eq(S->st.nr_anon_pages + S->pt.nr_swap, 100 << 8);
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
	ck_assert_uint_eq(S->pt.nr_swap, S->st.pswpout - 1);
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
	ck_assert_uint_eq(S->pt.nr_swap + S->st.pswpin, S->st.pswpout);
	done();
}
END_TEST

/* khugepaged meets a swapped-out range: 512 swap PTEs exceed max_ptes_swap (64). */
START_TEST(khugepaged_skips_swapped_range)
{
	char *t = fill_trace(96, 2 << 20, 0, MADV_HUGE_4M);

	run(t, "os.memory=64M", "os.khugepaged.scan_sleep_millisecs=1", NULL);
	free(t);
	ck_assert_uint_gt(S->st.thp_swpout, 0);
	ck_assert_uint_gt(S->st.thp_scan_exceed_swap_pte, 0);
	ck_assert_uint_eq(S->st.khugepaged_pages_collapsed, 0);
	done();
}
END_TEST

/*
 * A 1 GiB hugetlbfs page: one fault maps the aligned GiB of a MAP_HUGETLB mapping
 * (2-entry walk, one 1G L1 dTLB miss); the rest of the mapping gets 2M pages.
 */
START_TEST(hugetlb_1g_pool)
{
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 1275068416, 3, 262178, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
	    " S 40000010,8\n L 7fffff00,8\n S 40001000,8\n S 80000000,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 1275068416 )[sync] --> Success(0x0)\n",
	    "os.memory=3G", "os.mode=hugetlbfs", "os.hugetlbfs.pages_1g=1", "tlb.l1d.1G.entries=4",
	    "tlb.l1d.1G.ways=4", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_1G], 1);
	ck_assert_uint_eq(S->st.l1[SIDE_D].hits[PS_1G], 2);
	ck_assert_uint_eq(S->st.l1[SIDE_D].misses[PS_2M], 1);
	ck_assert_uint_eq(S->st.nr_hugetlb_pages_1g, 0); /* unmapped at the end */
	ck_assert_uint_eq(S->hugetlb.in_use_1g, 0);
	ck_assert_uint_eq(S->hugetlb.nr_1g, 1);
	ck_assert_uint_eq(S->buddy.nr_pages, 2ULL << 18); /* the buddy got the other 2 GiB */
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("thp");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, always);
	tcase_add_test(tc, swap_under_pressure);
	tcase_add_test(tc, swap_second_chance);
	tcase_add_test(tc, swap_thp_whole_and_fallback);
	tcase_add_test(tc, khugepaged_skips_swapped_range);
	tcase_add_test(tc, hugetlb_1g_pool);
	tcase_add_test(tc, madvise_and_never);
	tcase_add_test(tc, partial_vma);
	tcase_add_test(tc, partial_mprotect_splits_pmd);
	tcase_add_test(tc, partial_munmap_defers_split);
	tcase_add_test(tc, whole_munmap_no_split);
	tcase_add_test(tc, zero_page_then_write);
	tcase_add_test(tc, khugepaged_collapses);
	tcase_add_test(tc, madv_collapse);
	tcase_add_test(tc, five_level_huge_walk);
	tcase_add_test(tc, fallback_when_every_block_pinned);
	tcase_add_test(tc, compaction_of_movable_fragmentation);
	suite_add_tcase(s, tc);
	return check_run(s);
}
