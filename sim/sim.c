/*
 * sim.c - struct sim: one simulated machine composed of its models. Builds them
 * from a config (sim_init()), tears them down, keeps the timeline, closes a run
 * (sim_finish(): gauges and cycle totals) and checks the invariants that cross
 * models (sim_check_invariants()).
 *
 * Where the rest lives (each file's header says what it models):
 *  - replay.c: the replay loop and the batch summary (the hot path's design);
 *  - mmu.c: the hardware's translation path (TLBs, PWCs, walk, caches);
 *  - fault.c: the page-fault handler (mm/memory.c);
 *  - mmap.c: the mapping system calls and TLB shootdown (mm/mmap.c & co.);
 *  - compaction.c: direct compaction (mm/compaction.c);
 *  - vmas.c: the per-mapping breakdown (run --vmas, the report's "vmas");
 *  - thp.c, khugepaged.c, reclaim.c, lru.c, swap.c, hugetlbfs.c, buddy.c,
 *    pagetable.c, vma.c: the kernel's models, as their names say.
 *
 * Simulated time (sim_now()) under cpu.model additive is instructions x CPI
 * plus every cycle the application pays (translation, walks, faults, data,
 * compaction, reclaim); khugepaged's and kswapd's cycles are their own. Under
 * cpu.model overlap it is the overlap core's dispatch clock (core.c): the
 * misses it reports overlap within its window, and the report's cycles.total
 * is when the last instruction retires.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fault.h"
#include "khugepaged.h"
#include "mmap.h"
#include "mmu.h"
#include "reclaim.h"
#include "sim.h"
#include "thp.h"

static pfn_t pt_frame_alloc(void *ctx)
{
	struct sim *s = ctx;
	pfn_t pfn = buddy_alloc_mt(&s->buddy, 0, MIGRATE_UNMOVABLE); /* GFP_PGTABLE_USER */

	if (pfn != PFN_NONE)
		s->st.nr_page_table_pages++;
	return pfn;
}

static void pt_frame_free(void *ctx, pfn_t pfn)
{
	struct sim *s = ctx;

	buddy_free(&s->buddy, pfn, 0);
	s->st.nr_page_table_pages--;
	if (unlikely(s->virt != NULL))
		virt_table_freed(s, pfn);
}

/* Kernel and hypervisor cycles the application waited for: they stop the overlap core. */
static cycles_t serial_cycles(const struct sim *s)
{
	return s->st.cyc_fault + s->st.cyc_compaction + s->st.cyc_reclaim + s->cyc_virt;
}

/* Instructions so far, as sim_now() counts them. */
static uint64_t insns_now(const struct sim *s)
{
	return s->now_insns + s->nrec[R_IFETCH] + s->st.instructions;
}

/* The MMU's timing hook (cpu.model overlap): a late lookup to the core. */
static void timing_hook(void *os, const struct core_ref *ref)
{
	struct sim *s = os;

	core_ref(&s->core, insns_now(s), serial_cycles(s), s->nrec[R_LOAD] + s->nrec[R_MODIFY],
		 s->nrec[R_LOAD] + s->nrec[R_STORE] + s->nrec[R_MODIFY], ref);
}

void sim_dep(struct sim *s, const struct trace_rec *next, uint64_t d)
{
	bool ld, st;

	if (!next) {
		s->dep_carry = d;
		return;
	}
	ld = next->kind == R_LOAD || next->kind == R_MODIFY;
	st = next->kind == R_STORE || next->kind == R_MODIFY;
	if (ld || st) /* (anything else is not what an R_DEP qualifies: nothing waits) */
		core_dep(&s->core, insns_now(s), serial_cycles(s), s->nrec[R_LOAD] + s->nrec[R_MODIFY],
			 s->nrec[R_LOAD] + s->nrec[R_STORE] + s->nrec[R_MODIFY], d, ld, st);
}

void sim_core_reset(struct sim *s)
{
	core_reset(&s->core, insns_now(s), serial_cycles(s), s->nrec[R_LOAD] + s->nrec[R_MODIFY],
		   s->nrec[R_LOAD] + s->nrec[R_STORE] + s->nrec[R_MODIFY]);
}

int sim_init(struct sim *s, const struct sim_config *cfg, struct err *e)
{
	struct pt_frame_ops ops = { pt_frame_alloc, pt_frame_free, s };

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->va_limit = 1ULL << (PAGE_SHIFT + 9 * cfg->levels);
	vma_set_init(&s->vmas);
	/*
	 * A 1G hugetlb pool is carved off the top at boot (1G-aligned): the buddy
	 * gets what lies below it; memory above the last whole GiB goes unused.
	 */
	if (mmu_init(&s->mmu, cfg, &s->pt, sim_fault_hook, s) ||
	    buddy_init(&s->buddy, cfg->hugetlb_1g_pages ? ((cfg->memory >> PUD_SHIFT) - cfg->hugetlb_1g_pages) << PUD_SHIFT
							: cfg->memory))
		goto oom;
	s->buddy.extfrag_threshold = cfg->extfrag_threshold;
	buddy_set_thp_enabled(&s->buddy, cfg->mode == MODE_THP && cfg->thp.enabled != THP_NEVER);
	/*
	 * The persistent 2 MiB pool is set aside at boot (hugepages=N; "huge pages
	 * must be set aside at boot time", LWN's 2.6.38 THP article), before the
	 * machine's history fragments memory; surplus pages (pages: 0) come from
	 * the buddy allocator at fault time, fragmented or not.
	 */
	if ((cfg->mode == MODE_HUGETLBFS || cfg->hugetlb_pages) &&
	    hugetlb_pool_init(&s->hugetlb, &s->buddy, cfg->mode == MODE_HUGETLBFS || cfg->hugetlb_pages ? cfg->hugetlb_pages : 0))
		goto oom;
	if (cfg->fragmentation.unmovable > 0 &&
	    buddy_fragment(&s->buddy, cfg->fragmentation.unmovable, cfg->fragmentation.seed) < 0)
		return err_set(e, "os.fragmentation.unmovable", 0, 0, "cannot fragment memory");
	if (pt_init(&s->pt, cfg->levels, &ops))
		goto oom;
	if (hugetlb_pool_init_1g(&s->hugetlb, s->buddy.nr_pages, cfg->hugetlb_1g_pages))
		goto oom;
	s->rmap = mmap(NULL, s->buddy.nr_pages * sizeof(*s->rmap), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->rmap == MAP_FAILED) {
		s->rmap = NULL;
		goto oom;
	}
	if (thp_init(s) || lru_init(&s->lru, s->buddy.nr_pages) || swap_init(&s->swap, cfg->swap_size) ||
	    filemap_init(s) || vmas_init(s))
		goto oom;
	s->wmark_low = buddy_watermark(&s->buddy, WMARK_LOW);
	khugepaged_init(s);
	if (cfg->core.model == CPU_OVERLAP) {
		if (core_init(&s->core, cfg))
			goto oom;
		if (s->mmu.cache.timed)
			core_set_memory(&s->core, &s->mmu.cache, cfg);
		s->mmu.timing = timing_hook;
	}
	roi_init(s);
	if (cfg->virt.mode != VIRT_NONE)
		return virt_init(s, e);
	return 0;
oom:
	return err_host(e, "mmusim", 0, 0, "out of host memory building the simulated machine");
}

void sim_destroy(struct sim *s)
{
	if (s->virt) /* the guest's teardown traps nothing: the shadow table goes whole */
		s->pt.on_write = NULL;
	if (s->pt.root) {
		sim_exit_mmap(s);
		pt_destroy(&s->pt);
	}
	hugetlb_pool_destroy(&s->hugetlb, &s->buddy);
	thp_destroy(s);
	filemap_destroy(s);
	lru_destroy(&s->lru);
	swap_destroy(&s->swap);
	if (s->rmap)
		munmap(s->rmap, s->buddy.nr_pages * sizeof(*s->rmap));
	mmu_destroy(&s->mmu);
	core_free(&s->core);
	buddy_destroy(&s->buddy);
	vma_set_free(&s->vmas);
	vmas_destroy(s);
	virt_destroy(s);
}


int sim_fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->fail_msg, sizeof(s->fail_msg), fmt, ap);
	va_end(ap);
	s->failed = true;
	return err_set(&s->err, s->trace_name, 0, 0, "record %llu: %s",
		       (unsigned long long)s->rec_no + 1, s->fail_msg);
}


void sim_timeline_start(struct sim *s, FILE *f, cycles_t interval)
{
	s->timeline = f;
	s->tl_interval = interval ? interval : 1;
	s->tl_next = s->tl_interval;
}

static void timeline_row(struct sim *s, cycles_t now);

void sim_timeline_due(struct sim *s)
{
	cycles_t now = sim_now(s), k;

	if (now < s->tl_next)
		return;
	timeline_row(s, s->tl_next); /* the batch's counts */
	k = (now - s->tl_next) / s->tl_interval; /* idle intervals after it, all passed */
	if (k) {
		s->tl_elided += k - 1;
		s->tl_next += k * s->tl_interval; /* <= now: no overflow */
		timeline_row(s, s->tl_next);
	}
	if (s->tl_next > CYCLES_MAX - s->tl_interval) {
		s->timeline = NULL; /* the end of 64-bit time: no row is due any more */
		return;
	}
	s->tl_next += s->tl_interval;
}

/* The report's resident bytes of @st: anonymous 4K pages, THPs and hugetlb pages (not the zero pages). */
static uint64_t huge_bytes_of(const struct stats *st)
{
	return (st->nr_anon_transparent_hugepages + st->nr_hugetlb_pages) * PMD_SIZE +
	       st->nr_hugetlb_pages_1g * PUD_SIZE;
}

static uint64_t rss_bytes_of(const struct stats *st)
{
	return st->nr_anon_pages * PAGE_SIZE + huge_bytes_of(st);
}

/*
 * The timeline's per-interval columns, in header order: the MMU's counters read
 * as they are mid-run (misses and walks are counted as they happen; only the
 * memo's L1 hits wait for mmu_forget()) and the kernel's events.
 */
static void timeline_deltas(const struct sim *s, uint64_t cur[SIM_TL_DELTAS])
{
	const struct mmu_stats *m = &s->mmu.st;

	cur[0] = m->walks;
	cur[1] = m->walk_cycles;
	cur[2] = s->st.pgfault;
	cur[3] = s->st.thp_collapse_alloc;
	cur[4] = m->l1[SIDE_I].misses[PS_4K] + m->l1[SIDE_I].misses[PS_2M] + m->l1[SIDE_I].misses[PS_1G];
	cur[5] = m->l1[SIDE_D].misses[PS_4K] + m->l1[SIDE_D].misses[PS_2M] + m->l1[SIDE_D].misses[PS_1G];
	cur[6] = m->stlb.misses;
}

/* One timeline row (time in simulated ms); interval columns are deltas. */
static void timeline_row(struct sim *s, cycles_t now)
{
	uint64_t cur[SIM_TL_DELTAS];
	uint64_t huge = huge_bytes_of(&s->st), rss = rss_bytes_of(&s->st);

	timeline_deltas(s, cur);
	fprintf(s->timeline, "%s,%.6f,%llu,%llu,%llu,%.6f", os_mode_name[s->cfg.mode],
		(double)now / ((double)s->cfg.freq_mhz * 1000.0), (unsigned long long)now,
		(unsigned long long)rss, (unsigned long long)huge,
		rss ? (double)huge / (double)rss : 0.0);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		fprintf(s->timeline, ",%llu", (unsigned long long)s->buddy.free_area[o].nr_free);
	fprintf(s->timeline, ",%d", buddy_fragmentation_index(&s->buddy, HPAGE_PMD_ORDER));
	for (int i = 0; i < SIM_TL_DELTAS; i++)
		fprintf(s->timeline, ",%llu", (unsigned long long)(cur[i] - s->tl_last[i]));
	fprintf(s->timeline, "%s\n", s->csv_prov);
	memcpy(s->tl_last, cur, sizeof(cur));
}

/*
 * The interval columns are named as everywhere else: walks and walk_cycles as
 * in the --vmas breakdown, pgfault and thp_collapse_alloc as in /proc/vmstat
 * (the report's vmstat.*), itlb_misses, dtlb_misses and stlb_misses (L1 iTLB,
 * L1 dTLB and STLB misses, all page sizes) as in the --vmas breakdown.
 */
void sim_timeline_header(FILE *f)
{
	fprintf(f, "mode,time_ms,cycles,rss_bytes,huge_bytes,huge_coverage");
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		fprintf(f, ",free_order%u", o);
	fprintf(f, ",fragmentation_index_order9,walks,walk_cycles,pgfault,thp_collapse_alloc,"
		   "itlb_misses,dtlb_misses,stlb_misses%s\n", SIM_CSV_PROV_COLS);
}

/*
 * --steps: one row per marker (EV_MARKER), the counters so far, as the kernel
 * shows them to the process at that point: pgfault as getrusage()'s ru_minflt
 * (one per handled fault; the pages fault-around maps take none), rss_bytes
 * (memory.rss_bytes: anonymous memory, THPs included), file_rss_bytes (file
 * and shmem pages mapped, counted per mapping as MM_FILEPAGES and
 * MM_SHMEMPAGES count them: a page mapped twice counts twice; smaps' Rss is
 * rss_bytes + file_rss_bytes), anon_huge_bytes (PMD-mapped THPs:
 * smaps' AnonHugePages) and the thp_* events of /proc/vmstat.
 */
void sim_steps_header(FILE *f)
{
	fprintf(f, "mode,marker,pgfault,pgmajfault,rss_bytes,file_rss_bytes,anon_huge_bytes,"
		   "thp_fault_alloc,thp_fault_fallback,thp_split_pmd,thp_collapse_alloc,"
		   "thp_zero_page_alloc,thp_split_page,pglazyfree,pglazyfreed,thp_deferred_split_page%s\n", SIM_CSV_PROV_COLS);
}

void sim_steps_row(struct sim *s, uint64_t marker)
{
	const struct stats *st = &s->st;
	uint64_t huge = st->nr_anon_transparent_hugepages * PMD_SIZE;
	uint64_t rss = st->nr_anon_pages * PAGE_SIZE + huge +
		       (st->nr_hugetlb_pages * PMD_SIZE + st->nr_hugetlb_pages_1g * PUD_SIZE);

	if (!s->steps)
		return;
	fprintf(s->steps, "%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu%s\n",
		os_mode_name[s->cfg.mode], (unsigned long long)marker,
		(unsigned long long)st->pgfault, (unsigned long long)st->pgmajfault,
		(unsigned long long)rss,
		(unsigned long long)((s->fm.nr_ptes + s->fm.nr_pmds * HPAGE_PMD_NR) * PAGE_SIZE),
		(unsigned long long)huge, (unsigned long long)st->thp_fault_alloc,
		(unsigned long long)st->thp_fault_fallback, (unsigned long long)st->thp_split_pmd,
		(unsigned long long)st->thp_collapse_alloc,
		(unsigned long long)st->thp_zero_page_alloc, (unsigned long long)st->thp_split_page,
		(unsigned long long)st->pglazyfree, (unsigned long long)st->pglazyfreed,
		(unsigned long long)st->thp_deferred_split_page, s->csv_prov);
}

void sim_rss_changed(struct sim *s)
{
	struct sim_rss_acct *a = &s->racct;
	cycles_t now = sim_now(s);

	if (now > a->last) {
		a->rss_time += (unsigned __int128)a->rss * (now - a->last);
		a->huge_time += (unsigned __int128)a->huge * (now - a->last);
		a->last = now;
	}
	a->rss = rss_bytes_of(&s->st);
	a->huge = huge_bytes_of(&s->st);
	if (a->rss > a->peak_rss)
		a->peak_rss = a->rss;
	if (a->huge > a->peak_huge)
		a->peak_huge = a->huge;
	if (a->rss && (double)a->huge / (double)a->rss > a->peak_coverage)
		a->peak_coverage = (double)a->huge / (double)a->rss;
}

void sim_rss_restart(struct sim *s)
{
	struct sim_rss_acct *a = &s->racct;

	memset(a, 0, sizeof(*a));
	a->last = sim_now(s);
	sim_rss_changed(s); /* the peaks start from what is resident now */
}

cycles_t sim_now(const struct sim *s)
{
	/* now_*: what a warm-up's reset took from the counters (roi.c) */
	uint64_t insns = s->now_insns + s->nrec[R_IFETCH] + s->st.instructions;

	if (unlikely(s->mmu.timing != NULL))
		return core_now(&s->core, insns, serial_cycles(s)) + s->now_cycles;
	return cycles_of((double)insns * s->cfg.cpi) + s->now_cycles + s->mmu.st.cyc_translation +
	       s->mmu.st.walk_cycles + s->st.cyc_fault + s->mmu.st.cyc_data + s->st.cyc_compaction +
	       s->st.cyc_reclaim + s->cyc_virt;
}

/* --- the end of a run --------------------------------------------------- */

/* The hardware's counters into the report (struct stats keeps the report's layout). */
static void copy_mmu_stats(struct stats *st, const struct mmu_stats *m)
{
	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			st->l1[side].hits[ps] = m->l1[side].hits[ps];
			st->l1[side].misses[ps] = m->l1[side].misses[ps];
		}
	st->stlb.hits = m->stlb.hits;
	st->stlb.misses = m->stlb.misses;
	st->walks = m->walks;
	st->pte_reads = m->pte_reads;
	st->walk_cycles = m->walk_cycles;
	for (int i = 0; i < PWC_NR; i++) {
		st->pwc[i].hits = m->pwc[i].hits;
		st->pwc[i].misses = m->pwc[i].misses;
	}
	for (int i = 0; i <= CL_NR; i++)
		st->served[i] = m->served[i];
	st->cyc_translation = m->cyc_translation;
	st->cyc_data = m->cyc_data;
	for (int i = 0; i < 2; i++) {
		st->prefetches[i] = m->prefetches[i];
		st->useful_prefetches[i] = m->useful_prefetches[i];
	}
	st->dram_reads = m->dram_reads;
	st->writebacks = m->writebacks;
	st->cr3_loads = m->cr3_loads;
	st->cr3_flushes = m->cr3_flushes;
	st->cr3_flushed = m->cr3_flushed;
}

void sim_finish(struct sim *s)
{
	struct stats *st = &s->st;
	uint64_t l1_misses = 0;

	mmu_forget(&s->mmu); /* folds the memo's hits into the counters */
	sim_rss_changed(s); /* the integrals up to the end (before the counts below move sim_now()) */
	copy_mmu_stats(st, &s->mmu.st);
	vmas_finish(s);
	st->ifetch = s->nrec[R_IFETCH];
	st->load = s->nrec[R_LOAD];
	st->store = s->nrec[R_STORE];
	st->modify = s->nrec[R_MODIFY];
	st->instructions += st->ifetch;
	for (int side = 0; side < 2; side++) {
		st->lookups[side] = 0;
		for (int ps = 0; ps < PS_NR; ps++) {
			st->lookups[side] += st->l1[side].hits[ps] + st->l1[side].misses[ps];
			l1_misses += st->l1[side].misses[ps];
		}
	}
	/* the zero pages are not resident memory of the process */
	st->huge_bytes = huge_bytes_of(st);
	st->rss_bytes = rss_bytes_of(st);
	st->huge_coverage = st->rss_bytes ? (double)st->huge_bytes / (double)st->rss_bytes : 0.0;
	st->peak_rss_bytes = s->racct.peak_rss;
	st->peak_huge_bytes = s->racct.peak_huge;
	st->huge_coverage_peak = s->racct.peak_coverage;
	/* time-weighted: the integral of huge bytes over that of RSS (a stretch of no time: the end's) */
	st->huge_coverage_mean = s->racct.rss_time ? (double)s->racct.huge_time / (double)s->racct.rss_time
						   : st->huge_coverage;
	st->free_pages = s->buddy.nr_free_pages;
	st->fragmentation_index_order9 = buddy_fragmentation_index(&s->buddy, HPAGE_PMD_ORDER);
	st->cpi = s->cfg.cpi;
	st->cpu_model = s->cfg.core.model;
	st->mem_timed = s->mmu.cache.timed;
	st->deps = s->deps;
	st->cyc_instructions = cycles_of((double)st->instructions * s->cfg.cpi + 0.5);
	st->cyc_translation += st->walk_cycles;
	if (s->virt)
		virt_finish(s);
	if (s->mmu.timing) {
		/* when the last instruction retires (insns_now(): nrec and st.instructions not yet summed) */
		core_end(&s->core, s->now_insns + st->instructions, serial_cycles(s), &st->cyc_total,
			 &st->cyc_translation_stall, &st->cyc_data_stall);
	} else {
		st->cyc_total = st->cyc_instructions + st->cyc_translation + st->cyc_fault + st->cyc_data +
				st->cyc_compaction + st->cyc_reclaim + st->cyc_virt;
		st->cyc_translation_stall = st->cyc_translation; /* every cycle of it stalls */
		st->cyc_data_stall = st->cyc_data;
	}
	st->swap_bytes = s->pt.nr_swap * PAGE_SIZE;
	(void)l1_misses;
	roi_finish(s);
}

/* --- invariants --------------------------------------------------------- */

struct inv_ctx {
	struct sim *s;
	uint8_t *owned; /* frames reached from the page table */
	uint64_t thp_pmds, subpages, pages_1g, lru_pages, file_ptes;
	uint8_t *slots; /* swap slots reached from swap entries */
	uint64_t file_pmds;
};

static void own(struct inv_ctx *c, pfn_t pfn, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		pfn_t f = pfn + i;

		BUG_ON(f >= c->s->buddy.nr_pages);
		BUG_ON(c->owned[f / 8] & (1 << (f % 8))); /* mapped or used twice */
		c->owned[f / 8] |= (uint8_t)(1 << (f % 8));
	}
}

static void inv_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct inv_ctx *c = ctx;
	struct sim *s = c->s;
	unsigned order = 0;

	BUG_ON(!vma_find(&s->vmas, va));
	if (ps == PS_1G) {
		BUG_ON(!hugetlb_is_1g_in_use(&s->hugetlb, pfn));
		c->pages_1g++;
		return;
	}
	if ((ps == PS_4K && pfn == s->thp.zero_pfn) || (ps == PS_2M && pfn == s->thp.huge_zero_pfn)) {
		BUG_ON(entry & PTE_RW); /* the zero pages are shared and never writable */
		return;
	}
	if (ps == PS_4K && filemap_is_cache(&s->fm, pfn)) {
		/* a page-cache page: owned once by the cache (below), mapped read-only
		 * in a private mapping (a store copies it first) */
		BUG_ON(!buddy_is_allocated(&s->buddy, pfn, &order) || order != 0);
		BUG_ON(!(vma_find(&s->vmas, va)->flags & VM_FILE));
		BUG_ON((entry & PTE_RW) && !(vma_find(&s->vmas, va)->flags & VM_SHARED));
		c->file_ptes++;
		return;
	}
	if (ps == PS_2M && filemap_is_thp(s, pfn)) {
		/* a file THP (khugepaged.c): its pages are the cache's, mapped read-only */
		BUG_ON(pfn & (HPAGE_PMD_NR - 1));
		BUG_ON(entry & PTE_RW);
		BUG_ON(!(vma_find(&s->vmas, va)->flags & VM_FILE));
		c->file_pmds++;
		return;
	}
	if (thp_is_folio(s, pfn)) {
		pfn_t head = pfn & ~(HPAGE_PMD_NR - 1);
		const struct folio *f = &s->thp.folio[head >> HPAGE_PMD_ORDER];
		unsigned i = (unsigned)(pfn - head);

		BUG_ON(!buddy_is_allocated(&s->buddy, head, &order) || order != HPAGE_PMD_ORDER);
		BUG_ON(!lru_on(&s->lru, head));
		if (ps == PS_2M) {
			BUG_ON(!(f->flags & FOLIO_PMD_MAPPED) || f->nr_mapped != HPAGE_PMD_NR);
			c->thp_pmds++;
			own(c, pfn, HPAGE_PMD_NR);
		} else {
			BUG_ON(f->flags & FOLIO_PMD_MAPPED);
			BUG_ON(!(f->mapped[i / 64] & (1ULL << (i % 64))));
			BUG_ON(s->rmap[pfn] != va + 1);
			c->subpages++;
			own(c, pfn, 1);
		}
		return;
	}
	BUG_ON(!buddy_is_allocated(&s->buddy, pfn, &order));
	BUG_ON(order != (ps == PS_4K ? 0 : HPAGE_PMD_ORDER));
	if (ps == PS_4K) {
		BUG_ON(s->rmap[pfn] != va + 1); /* the reverse map compaction relies on */
		BUG_ON(!lru_on(&s->lru, pfn));       /* every anonymous page can be reclaimed */
		c->lru_pages++;
	}
	own(c, pfn, 1UL << order);
}

static void own_cache_page(void *ctx, pfn_t pfn)
{
	own(ctx, pfn, 1);
}

static void inv_table(void *ctx, pfn_t pfn, unsigned level)
{
	struct inv_ctx *c = ctx;
	unsigned order = 1;

	(void)level;
	BUG_ON(!buddy_is_allocated(&c->s->buddy, pfn, &order) || order != 0);
	own(c, pfn, 1);
}

static void inv_swap(void *ctx, vaddr_t va, uint64_t slot)
{
	struct inv_ctx *c = ctx;

	BUG_ON(!vma_find(&c->s->vmas, va));
	BUG_ON(!swap_slot_used(&c->s->swap, slot) || slot == 0);
	BUG_ON(c->slots[slot / 8] & (1 << (slot % 8))); /* one entry per slot */
	c->slots[slot / 8] |= (uint8_t)(1 << (slot % 8));
}

void sim_check_invariants(struct sim *s)
{
	struct inv_ctx c = { s, calloc((s->buddy.nr_pages + 7) / 8, 1), 0, 0, 0, 0, 0,
			     calloc(s->swap.nr_slots / 8 + 1, 1), 0 };
	uint64_t thp_folios = 0;
	uint64_t folios_mapped = 0;

	BUG_ON(!c.owned || !c.slots);
	buddy_check_invariants(&s->buddy);
	swap_check_invariants(&s->swap);
	reclaim_check_invariants(s);
	pt_for_each_swap(&s->pt, inv_swap, &c);
	/* every slot in use but the header belongs to exactly one swap entry */
	BUG_ON(s->swap.nr_slots && s->pt.nr_swap != s->swap.nr_used - 1);
	BUG_ON(s->pt.nr_leaves[PS_1G] != s->st.nr_hugetlb_pages_1g);
	/* every change of resident memory was accounted (sim_rss_changed()) */
	BUG_ON(s->racct.rss != rss_bytes_of(&s->st) || s->racct.huge != huge_bytes_of(&s->st));
	pt_check_invariants(&s->pt);
	vma_check_invariants(&s->vmas);
	pt_for_each_leaf(&s->pt, inv_leaf, &c);
	pt_for_each_table(&s->pt, inv_table, &c);
	BUG_ON(s->pt.nr_leaves[PS_4K] != s->st.nr_anon_pages + s->thp.nr_zero_ptes + s->fm.nr_ptes);
	filemap_check_invariants(s, c.file_ptes, c.file_pmds);
	filemap_for_each(s, own_cache_page, &c);
	BUG_ON(s->pt.nr_leaves[PS_2M] != s->st.nr_hugetlb_pages + s->thp.nr_zero_pmds +
					     s->st.nr_anon_transparent_hugepages + s->fm.nr_pmds);
	BUG_ON(c.thp_pmds != s->st.nr_anon_transparent_hugepages);
	BUG_ON(c.pages_1g != s->hugetlb.in_use_1g);
	/* a deposited table per THP or zero PMD, counted as a page-table page */
	BUG_ON(s->pt.nr_tables + s->thp.dep_n != s->st.nr_page_table_pages);
	BUG_ON(s->thp.dep_n != s->thp.nr_zero_pmds + s->st.nr_anon_transparent_hugepages);
	for (size_t i = 0; i < s->thp.dep_cap; i++)
		if (s->thp.dep_key[i])
			own(&c, s->thp.dep_val[i], 1);
	/* every PTE-mapped subpage is in its folio's map, and nothing else is */
	for (pfn_t f = 0; s->thp.folio && f < s->buddy.nr_pages >> HPAGE_PMD_ORDER; f++) {
		if ((s->thp.folio[f].flags & FOLIO_THP) && !(s->thp.folio[f].flags & FOLIO_PMD_MAPPED))
			folios_mapped += s->thp.folio[f].nr_mapped;
		thp_folios += !!(s->thp.folio[f].flags & FOLIO_THP);
	}
	BUG_ON(folios_mapped != c.subpages);
	/* the LRU holds exactly the anonymous folios: 4K pages and THPs */
	BUG_ON(lru_nr_pages(&s->lru) != c.lru_pages + thp_folios * HPAGE_PMD_NR);
	mmu_check_invariants(&s->mmu); /* TLB and PWC entries agree with the page table */
	free(c.owned);
	free(c.slots);
	if (s->virt)
		virt_check_invariants(s);
}
