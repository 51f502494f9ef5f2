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
	struct sim *s = sim_of(os);

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

static int proc_add(struct sim *s, struct mm *mm);

/*
 * The #PF vector: the kernel's handler (sim_fault_hook()), timed. A fault's
 * latency is the cycles its path charged the process: cycles.fault (the entry,
 * zeroing or copying, flushes), cycles.compaction and cycles.reclaim (direct
 * compaction and reclaim it ran), as CBMM (Mansi & Swift, ATC'22) measures a
 * fault from entry to return. Each fault the handler counted (vmstat.pgfault
 * moved; the re-entry of a fault already handled is not one) goes into the
 * running process's log2 histogram. Faults a system call takes for the process
 * (MAP_POPULATE, MADV_POPULATE_*) are that call's, not the CPU's: not here.
 * Off the per-reference path: only a TLB miss that finds no usable entry gets here.
 */
static int machine_fault(void *os, vaddr_t va, bool write, bool wp)
{
	struct sim *s = sim_of(os);
	uint64_t pgfault = s->st.pgfault;
	cycles_t c0 = s->st.cyc_fault + s->st.cyc_compaction + s->st.cyc_reclaim, d;
	int r = sim_fault_hook(os, va, write, wp);

	if (s->st.pgfault != pgfault && s->nproc) {
		d = s->st.cyc_fault + s->st.cyc_compaction + s->st.cyc_reclaim - c0;
		s->procs[s->cur].fault_lat[d > 1 ? 63 - __builtin_clzll(d) : 0]++;
	}
	return r;
}

static cycles_t machine_now(const void *machine)
{
	return sim_now(machine);
}

int sim_init(struct sim *s, const struct sim_config *cfg, struct err *e)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	kernel_prepare(&s->k);
	s->k.now = machine_now;
	s->k.machine = s;
	if (mmu_init(&s->mmu, cfg, &s->k.mm->pt, machine_fault, &s->k))
		goto oom;
	if (kernel_init(&s->k, &s->cfg, &s->st, &s->mmu, e))
		return -1;
	if (cfg->core.model == CPU_OVERLAP) {
		if (core_init(&s->core, cfg))
			goto oom;
		if (s->mmu.cache.timed)
			core_set_memory(&s->core, &s->mmu.cache, cfg);
		s->mmu.timing = timing_hook;
	}
	if (proc_add(s, s->k.mm))
		goto oom;
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
		s->k.mm->pt.on_write = NULL;
	kernel_destroy(&s->k);
	for (size_t i = 0; i < s->nproc; i++) {
		free(s->procs[i].tr_key);
		free(s->procs[i].tr_bits);
	}
	free(s->procs);
	mmu_destroy(&s->mmu);
	core_free(&s->core);
	virt_destroy(s);
}

int sim_fail(struct sim *s, const char *fmt, ...)
{
	struct kernel *k = &s->k;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->fail_msg, sizeof(k->fail_msg), fmt, ap);
	va_end(ap);
	k->failed = true;
	return err_set(&k->err, k->trace_name, 0, 0, "record %llu: %s",
		       (unsigned long long)k->rec_no + 1, k->fail_msg);
}

/* --- processes ---------------------------------------------------------- */

const char *const sim_proc_count_name[SP_NR] = {
	"instructions", "cycles", "itlb_misses", "dtlb_misses", "stlb_misses", "walks",
	"walk_cycles", "pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback",
	"context_switches",
};

/* The machine's counts now (what a process is charged the change of). */
static void machine_counts(const struct sim *s, uint64_t c[SP_NR])
{
	const struct mmu_stats *m = &s->mmu.st;

	c[SP_INSTRUCTIONS] = insns_now(s);
	c[SP_CYCLES] = sim_now(s);
	c[SP_ITLB_MISSES] = m->l1[SIDE_I].misses[PS_4K] + m->l1[SIDE_I].misses[PS_2M] + m->l1[SIDE_I].misses[PS_1G];
	c[SP_DTLB_MISSES] = m->l1[SIDE_D].misses[PS_4K] + m->l1[SIDE_D].misses[PS_2M] + m->l1[SIDE_D].misses[PS_1G];
	c[SP_STLB_MISSES] = m->stlb.misses;
	c[SP_WALKS] = m->walks;
	c[SP_WALK_CYCLES] = m->walk_cycles;
	c[SP_PGFAULT] = s->st.pgfault;
	c[SP_PGMAJFAULT] = s->st.pgmajfault;
	c[SP_THP_FAULT_ALLOC] = s->st.thp_fault_alloc;
	c[SP_THP_FAULT_FALLBACK] = s->st.thp_fault_fallback;
	c[SP_SWITCHES] = 0;
}

void sim_proc_counts(const struct sim *s, size_t i, uint64_t out[SP_NR])
{
	uint64_t now[SP_NR];

	memcpy(out, s->procs[i].c, sizeof(s->procs[i].c));
	if (i != s->cur)
		return;
	machine_counts(s, now);
	for (int c = 0; c < SP_NR; c++)
		out[c] += now[c] - s->proc_snap[c];
}

/* A new process (its mm made by the kernel) in the machine's list. 0 or -1 (host OOM). */
static int proc_add(struct sim *s, struct mm *mm)
{
	if (s->nproc == s->cap_proc) {
		size_t cap = s->cap_proc ? 2 * s->cap_proc : 4;
		struct sim_proc *p = realloc(s->procs, cap * sizeof(*p));

		if (!p)
			return -1;
		s->procs = p;
		s->cap_proc = cap;
	}
	s->procs[s->nproc++] = (struct sim_proc){ .mm = mm, .id = mm->id };
	if (s->nproc == 2 && !s->track_touched) {
		s->nproc--; /* the processes before this one are seeded, not the new one */
		sim_track_touched(s);
		s->nproc++;
	}
	return s->k.failed ? -1 : 0;
}

/* --- touched pages and the per-process report ---------------------------- */

/*
 * The 512-bit map of 2M region @region of @p, NULL if none (or, with @create, on
 * host OOM). Linear probing on a power-of-two table at most half full.
 */
static uint64_t *touched_map(struct sim_proc *p, uint64_t region, bool create)
{
	uint64_t key = region + 1;
	size_t i;

	if (p->tr_cap) {
		for (i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & (p->tr_cap - 1); p->tr_key[i];
		     i = (i + 1) & (p->tr_cap - 1))
			if (p->tr_key[i] == key)
				return p->tr_bits[i];
	}
	if (!create)
		return NULL;
	if ((p->tr_n + 1) * 2 > p->tr_cap) {
		size_t cap = p->tr_cap ? 2 * p->tr_cap : 64;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		uint64_t(*bits)[8] = calloc(cap, sizeof(*bits));

		if (!keys || !bits) {
			free(keys);
			free(bits);
			return NULL;
		}
		for (size_t j = 0; j < p->tr_cap; j++) {
			if (!p->tr_key[j])
				continue;
			for (i = (size_t)((p->tr_key[j] * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1); keys[i];
			     i = (i + 1) & (cap - 1))
				;
			keys[i] = p->tr_key[j];
			memcpy(bits[i], p->tr_bits[j], sizeof(bits[i]));
		}
		free(p->tr_key);
		free(p->tr_bits);
		p->tr_key = keys;
		p->tr_bits = bits;
		p->tr_cap = cap;
	}
	for (i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & (p->tr_cap - 1); p->tr_key[i];
	     i = (i + 1) & (p->tr_cap - 1))
		;
	p->tr_key[i] = key;
	p->tr_n++;
	memset(p->tr_bits[i], 0, sizeof(p->tr_bits[i])); /* (an exec left the old bits) */
	return p->tr_bits[i];
}

/* Mark the 4K pages of [@va, @va + @len) touched by @p. 0, or -1 on host OOM. */
static int touch_range(struct sim_proc *p, vaddr_t va, uint64_t len)
{
	for (vaddr_t a = va & ~(PAGE_SIZE - 1); a < va + len; a += PAGE_SIZE) {
		uint64_t *m = touched_map(p, a >> PMD_SHIFT, true);
		unsigned bit = (unsigned)((a >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));

		if (!m)
			return -1;
		m[bit / 64] |= 1ULL << (bit % 64);
	}
	return 0;
}

static bool touched(struct sim_proc *p, vaddr_t a)
{
	const uint64_t *m = touched_map(p, a >> PMD_SHIFT, false);
	unsigned bit = (unsigned)((a >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));

	return m && (m[bit / 64] >> (bit % 64) & 1);
}

struct seed_ctx {
	struct sim_proc *p;
	bool oom;
};

static void seed_leaf(void *ctx, vaddr_t va, uint64_t bytes)
{
	struct seed_ctx *c = ctx;

	c->oom |= touch_range(c->p, va, bytes) != 0;
}

static int touched_oom(struct sim *s)
{
	s->k.failed = true;
	return err_host(&s->k.err, s->k.trace_name, 0, 0, "out of host memory recording touched pages");
}

void sim_track_touched(struct sim *s)
{
	if (s->track_touched)
		return;
	s->track_touched = true;
	for (size_t i = 0; i < s->nproc; i++) {
		struct seed_ctx c = { &s->procs[i], false };

		kernel_mm_for_each_anon(&s->k, s->procs[i].mm, seed_leaf, &c);
		if (c.oom) {
			touched_oom(s);
			return;
		}
	}
}

/* The process a switch record names, as the machine resolved it (the newest with that id). */
static size_t proc_by_id(const struct sim *s, uint64_t id, size_t dflt)
{
	for (size_t i = s->nproc; i-- > 0;)
		if (s->procs[i].id == id)
			return i;
	return dflt;
}

/*
 * A reference within one 4K page is looked up only when its page is not among
 * the process's recently marked ones (tr_recent, direct-mapped): the pass cost
 * 103 instructions a reference with a look-up for each, 21 with the filter,
 * which answers 99.4 % of them (callgrind, the four captures of bench row (j)
 * as four processes, 14.1 M references tracked: 1,454 M -> 298 M; 256 entries,
 * as 64 missed 7 % of the sqlite3 capture's references and 1,024 no fewer).
 */
int sim_touched_batch(struct sim *s, const struct trace_batch *b)
{
	size_t cur = s->batch_cur;
	struct sim_proc *p = &s->procs[cur];
	uint64_t *recent = p->tr_recent;
	const struct trace_rec *r = b->recs, *end = b->recs + b->n;

	for (; r < end; r++) {
		if (likely(r->kind <= R_MODIFY)) {
			vaddr_t a = r->addr;
			uint64_t pg = a >> PAGE_SHIFT, *slot = &recent[pg & (SIM_TOUCHED_RECENT - 1)];

			/* (a size of 0 is taken as 1: within the page either way) */
			if (likely(*slot == pg + 1) && likely((a & (PAGE_SIZE - 1)) + r->size <= PAGE_SIZE))
				continue;
			if (touch_range(p, a, r->size ? r->size : 1))
				return touched_oom(s);
			*slot = pg + 1;
		} else if (r->kind == R_EVENT) {
			const struct os_event *ev = &b->ev[r->size];

			if (ev->kind == EV_SWITCH) {
				cur = proc_by_id(s, ev->addr, cur);
				p = &s->procs[cur];
				recent = p->tr_recent;
			} else if (ev->kind == EV_EXEC) { /* a new address space: nothing touched in it */
				if (p->tr_cap)
					memset(p->tr_key, 0, p->tr_cap * sizeof(*p->tr_key));
				p->tr_n = 0;
				memset(p->tr_recent, 0, sizeof(p->tr_recent));
			}
		}
	}
	return 0;
}

void sim_written_batch(struct sim *s, const struct trace_batch *b)
{
	size_t cur = s->batch_cur;
	const struct mm *mm = s->procs[cur].mm;
	const struct trace_rec *r = b->recs, *end = b->recs + b->n;
	uint64_t prev = UINT64_MAX; /* the page of the last store seen (vpn) */

	for (; r < end; r++) {
		/* R_IFETCH 0, R_LOAD 1: the common case in one unsigned compare */
		if (likely(r->kind < R_STORE))
			continue;
		if (likely(r->kind <= R_MODIFY)) {
			uint64_t vpn = r->addr >> PAGE_SHIFT;

			/* a run of stores to one page: the first marks it */
			if (vpn != prev) {
				thp_store_seen(&s->k, mm, r->addr);
				prev = vpn;
			}
			if (unlikely((r->addr & (PAGE_SIZE - 1)) + r->size > PAGE_SIZE) && r->size &&
			    r->addr + r->size - 1 > r->addr) {
				thp_store_seen(&s->k, mm, r->addr + r->size - 1);
				prev = UINT64_MAX;
			}
		} else if (r->kind == R_EVENT && b->ev[r->size].kind == EV_SWITCH) {
			cur = proc_by_id(s, b->ev[r->size].addr, cur);
			mm = s->procs[cur].mm;
			prev = UINT64_MAX;
		}
	}
}

struct bloat_ctx {
	struct sim_proc *p;
	uint64_t untouched;
};

static void bloat_leaf(void *ctx, vaddr_t va, uint64_t bytes)
{
	struct bloat_ctx *c = ctx;

	for (vaddr_t a = va; a < va + bytes; a += PAGE_SIZE)
		c->untouched += touched(c->p, a) ? 0 : PAGE_SIZE;
}

/*
 * The named metrics, per process at the end of the run:
 *  - huge_coverage: AnonHugePages over its anonymous RSS (0 without RSS);
 *  - fairness (Ingens, OSDI'16: huge pages against memory): its share of the
 *    processes' AnonHugePages divided by its share of their RSS (sums over the
 *    processes, as summing smaps_rollup would); 1 is a fair share, none (JSON
 *    null) when no process has a THP or this one has no RSS;
 *  - bloat_bytes (HawkEye, ASPLOS'19): anonymous resident bytes it never
 *    referenced, i.e. its RSS minus the touched bytes still resident in it
 *    (a THP whose subpages it never touched counts those);
 *  - touched_bytes: the distinct 4K pages it ever referenced, times 4 KiB.
 */
int sim_proc_report(struct sim *s, struct stats_proc *out)
{
	uint64_t rss_all = 0, huge_all = 0;

	_Static_assert(SP_NR <= STATS_PROC_COUNTS, "stats_proc holds every count");
	_Static_assert(SIM_FAULT_LAT_BUCKETS == STATS_FAULT_LAT_BUCKETS, "one histogram layout");
	if (s->nproc < 2)
		return -1;
	for (size_t i = 0; i < s->nproc; i++) {
		struct sim_proc *p = &s->procs[i];
		struct stats_proc *o = &out[i];
		struct bloat_ctx c = { p, 0 };

		memset(o, 0, sizeof(*o));
		o->id = p->id;
		o->exited = p->mm->exited;
		o->ncounts = SP_NR;
		o->count_names = sim_proc_count_name;
		memcpy(o->counts, p->fin, sizeof(p->fin));
		memcpy(o->fault_lat, p->fault_lat, sizeof(p->fault_lat));
		kernel_mm_rss(&s->k, p->mm, &o->rss_bytes, &o->file_rss_bytes, &o->anon_huge_bytes);
		kernel_mm_for_each_anon(&s->k, p->mm, bloat_leaf, &c);
		o->bloat_bytes = c.untouched;
		for (size_t j = 0; j < p->tr_cap; j++)
			if (p->tr_key[j])
				for (int w = 0; w < 8; w++)
					o->touched_bytes += (uint64_t)__builtin_popcountll(p->tr_bits[j][w]) * PAGE_SIZE;
		o->huge_coverage = o->rss_bytes ? (double)o->anon_huge_bytes / (double)o->rss_bytes : 0.0;
		rss_all += o->rss_bytes;
		huge_all += o->anon_huge_bytes;
	}
	for (size_t i = 0; i < s->nproc; i++) {
		struct stats_proc *o = &out[i];

		o->has_fairness = huge_all && o->rss_bytes;
		if (o->has_fairness)
			o->fairness = ((double)o->anon_huge_bytes / (double)huge_all) /
				      ((double)o->rss_bytes / (double)rss_all);
	}
	return 0;
}

static size_t proc_of(const struct sim *s, const struct mm *mm)
{
	for (size_t i = 0; i < s->nproc; i++)
		if (s->procs[i].mm == mm)
			return i;
	BUG_ON(1);
	return 0;
}

/*
 * The context switch to @mm: the running process is charged its counts, and the
 * kernel switches address spaces (kernel_switch_mm(): CR3 and its PCID, asid.c).
 * A flush by CR3 load is counted under tlb.cr3, not vmstat.tlb_invalidations
 * (no INVLPG, no flush_tlb_*()).
 */
static void switch_to(struct sim *s, struct mm *mm)
{
	uint64_t now[SP_NR];
	struct sim_proc *out = &s->procs[s->cur];

	if (mm == s->k.active_mm)
		return;
	machine_counts(s, now);
	for (int c = 0; c < SP_NR; c++)
		out->c[c] += now[c] - s->proc_snap[c];
	memcpy(s->proc_snap, now, sizeof(now));
	s->cur = proc_of(s, mm);
	s->procs[s->cur].c[SP_SWITCHES]++;
	s->st.context_switches++;
	kernel_switch_mm(&s->k, mm);
}

static int proc_event(struct sim *s, const struct os_event *ev)
{
	struct kernel *k = &s->k;
	struct mm *mm;

	switch (ev->kind) {
	case EV_SWITCH:
		mm = kernel_mm_find(k, ev->addr);
		if (!mm) {
			for (mm = k->mms; mm && mm->id != ev->addr; mm = mm->next)
				;
			if (mm) /* (an exited one) */
				return sim_fail(s, "switch to process %llu after its exit",
						(unsigned long long)ev->addr);
			if (!(mm = kernel_mm_new(k, ev->addr)) || proc_add(s, mm))
				goto oom;
		}
		switch_to(s, mm);
		return 0;
	case EV_FORK:
		if (kernel_mm_find(k, ev->addr) || ev->addr == k->mm->id)
			return sim_fail(s, "fork of process %llu, which exists", (unsigned long long)ev->addr);
		if (!(mm = kernel_fork(k, ev->addr)))
			return -1;
		if (proc_add(s, mm))
			goto oom;
		return 0;
	case EV_EXIT:
		if (k->mm->exited)
			return sim_fail(s, "exit of process %llu, which has exited", (unsigned long long)k->mm->id);
		kernel_mm_exit(k, k->mm);
		return k->failed ? -1 : 0;
	case EV_EXEC:
		return kernel_exec(k);
	case EV_PRCTL:
		if (ev->advice == PR_SET_THP_DISABLE_)
			k->mm->thp_disable = ev->addr != 0;
		return 0;
	default:
		return 0;
	}
oom:
	k->failed = true;
	return err_host(&k->err, k->trace_name, 0, 0, "out of host memory starting a process");
}

int sim_event(struct sim *s, const struct os_event *ev)
{
	switch (ev->kind) {
	case EV_MARKER:
		sim_steps_row(s, ev->addr);
		return 0;
	case EV_FORK:
	case EV_SWITCH:
	case EV_EXIT:
	case EV_EXEC:
	case EV_PRCTL:
		return proc_event(s, ev);
	default:
		return kernel_event(&s->k, ev);
	}
}

void sim_timeline_start(struct sim *s, FILE *f, cycles_t interval, bool procs)
{
	s->timeline = f;
	s->tl_procs = procs;
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

/* Resident bytes @r[0] and those in 2M or 1G leaves @r[1] (THPs, hugetlb pages). */
static void resident_leaf(void *ctx, vaddr_t va, uint64_t bytes)
{
	uint64_t *r = ctx;

	(void)va;
	r[0] += bytes;
	r[1] += bytes >= PMD_SIZE ? bytes : 0;
}

/*
 * A row per live process (tl_procs): its resident memory from its page table
 * (kernel_mm_for_each_anon(), smaps_rollup's walk: rss_bytes the report's anonymous RSS,
 * huge_bytes its AnonHugePages plus hugetlb pages, huge_coverage their ratio),
 * the machine's free lists, and its own interval counts (sim_proc_counts():
 * what moved while it ran), thp_collapse_alloc excepted: khugepaged's, for
 * every mm (a kernel thread's work is no process's).
 */
static void timeline_proc_rows(struct sim *s, cycles_t now)
{
	uint64_t cur[SIM_TL_DELTAS];

	timeline_deltas(s, cur);
	for (size_t i = 0; i < s->nproc; i++) {
		struct sim_proc *p = &s->procs[i];
		uint64_t c[SP_NR], d[SIM_TL_DELTAS], anon, huge, rb[2] = { 0, 0 };

		if (p->mm->exited)
			continue;
		sim_proc_counts(s, i, c);
		d[0] = c[SP_WALKS];
		d[1] = c[SP_WALK_CYCLES];
		d[2] = c[SP_PGFAULT];
		d[3] = cur[3];
		d[4] = c[SP_ITLB_MISSES];
		d[5] = c[SP_DTLB_MISSES];
		d[6] = c[SP_STLB_MISSES];
		kernel_mm_for_each_anon(&s->k, p->mm, resident_leaf, rb);
		anon = rb[0];
		huge = rb[1];
		fprintf(s->timeline, "%s,%llu,%.6f,%llu,%llu,%llu,%.6f", os_mode_name[s->cfg.mode],
			(unsigned long long)p->id, (double)now / ((double)s->cfg.freq_mhz * 1000.0),
			(unsigned long long)now, (unsigned long long)anon, (unsigned long long)huge,
			anon ? (double)huge / (double)anon : 0.0);
		for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
			fprintf(s->timeline, ",%llu", (unsigned long long)s->k.buddy.free_area[o].nr_free);
		fprintf(s->timeline, ",%d", buddy_fragmentation_index(&s->k.buddy, HPAGE_PMD_ORDER));
		for (int j = 0; j < SIM_TL_DELTAS; j++)
			fprintf(s->timeline, ",%llu", (unsigned long long)(d[j] - (j == 3 ? s->tl_last[3] : p->tl_last[j])));
		fprintf(s->timeline, "%s\n", s->csv_prov);
		memcpy(p->tl_last, d, sizeof(d));
	}
	memcpy(s->tl_last, cur, sizeof(cur));
}

/* One timeline row (time in simulated ms); interval columns are deltas. */
static void timeline_row(struct sim *s, cycles_t now)
{
	uint64_t cur[SIM_TL_DELTAS];
	uint64_t huge = kernel_huge_bytes(&s->st), rss = kernel_rss_bytes(&s->st);

	if (s->tl_procs) {
		timeline_proc_rows(s, now);
		return;
	}
	timeline_deltas(s, cur);
	fprintf(s->timeline, "%s,%.6f,%llu,%llu,%llu,%.6f", os_mode_name[s->cfg.mode],
		(double)now / ((double)s->cfg.freq_mhz * 1000.0), (unsigned long long)now,
		(unsigned long long)rss, (unsigned long long)huge,
		rss ? (double)huge / (double)rss : 0.0);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		fprintf(s->timeline, ",%llu", (unsigned long long)s->k.buddy.free_area[o].nr_free);
	fprintf(s->timeline, ",%d", buddy_fragmentation_index(&s->k.buddy, HPAGE_PMD_ORDER));
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
void sim_timeline_header(FILE *f, bool procs)
{
	fprintf(f, "mode,%stime_ms,cycles,rss_bytes,huge_bytes,huge_coverage", procs ? "process," : "");
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
 *
 * Then, only when a size below PMD order is enabled (os.thp.sizes.<S>.enabled
 * not never, on a kernel with mTHP, 6.8+), the per-size counters of
 * hugepages-<size>kB/stats/ as the report's "mthp" object names them, one
 * column mthp_<S>_<counter> per counter os.kernel's sysfs has (mthp_stat_in())
 * for each enabled size and for 2M (the PMD size's counters move with every
 * THP): system-wide, as sysfs shows them. A configuration without mTHP keeps
 * the columns it had.
 */
bool sim_steps_mthp(const struct sim_config *c, unsigned order)
{
	if (!kernel_mthp(c->kernel) || !thp_mthp_configured(&c->thp))
		return false;
	return order == HPAGE_PMD_ORDER ||
	       (order >= MTHP_ORDER_MIN && order < HPAGE_PMD_ORDER && thp_size_enabled(&c->thp, order) != MTHP_NEVER);
}

void sim_steps_header(FILE *f, const struct sim_config *c)
{
	fprintf(f, "mode,marker,process,pgfault,pgmajfault,rss_bytes,file_rss_bytes,anon_huge_bytes,"
		   "thp_fault_alloc,thp_fault_fallback,thp_split_pmd,thp_collapse_alloc,"
		   "thp_zero_page_alloc,thp_split_page,pglazyfree,pglazyfreed,thp_deferred_split_page");
	for (unsigned o = MTHP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		for (unsigned i = 0; i < MTHP_STAT_NR && sim_steps_mthp(c, o); i++)
			if (mthp_stat_in(i, c->kernel))
				fprintf(f, ",mthp_%s_%s", mthp_size_name[o], mthp_stat_name[i]);
	fprintf(f, "%s\n", SIM_CSV_PROV_COLS);
}

void sim_steps_row(struct sim *s, uint64_t marker)
{
	const struct stats *st = &s->st;
	uint64_t huge = st->nr_anon_transparent_hugepages * PMD_SIZE;
	uint64_t rss = st->nr_anon_pages * PAGE_SIZE + huge +
		       (st->nr_hugetlb_pages * PMD_SIZE + st->nr_hugetlb_pages_1g * PUD_SIZE);
	uint64_t file = (s->k.fm.nr_ptes + s->k.fm.nr_pmds * HPAGE_PMD_NR) * PAGE_SIZE;
	uint64_t pgfault = st->pgfault, pgmajfault = st->pgmajfault;

	if (!s->steps)
		return;
	if (s->nproc > 1) {
		/* several processes: the marking process's own figures (getrusage(),
		 * its smaps_rollup); the thp_* and pglazy* columns stay system-wide */
		uint64_t c[SP_NR];

		sim_proc_counts(s, s->cur, c);
		pgfault = c[SP_PGFAULT];
		pgmajfault = c[SP_PGMAJFAULT];
		kernel_mm_rss(&s->k, s->k.mm, &rss, &file, &huge);
	}
	fprintf(s->steps, "%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu",
		os_mode_name[s->cfg.mode], (unsigned long long)marker, (unsigned long long)s->k.mm->id,
		(unsigned long long)pgfault, (unsigned long long)pgmajfault,
		(unsigned long long)rss, (unsigned long long)file,
		(unsigned long long)huge, (unsigned long long)st->thp_fault_alloc,
		(unsigned long long)st->thp_fault_fallback, (unsigned long long)st->thp_split_pmd,
		(unsigned long long)st->thp_collapse_alloc,
		(unsigned long long)st->thp_zero_page_alloc, (unsigned long long)st->thp_split_page,
		(unsigned long long)st->pglazyfree, (unsigned long long)st->pglazyfreed,
		(unsigned long long)st->thp_deferred_split_page);
	for (unsigned o = MTHP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		for (unsigned i = 0; i < MTHP_STAT_NR && sim_steps_mthp(&s->cfg, o); i++)
			if (mthp_stat_in(i, s->cfg.kernel))
				fprintf(s->steps, ",%llu", (unsigned long long)st->mthp[o][i]);
	fprintf(s->steps, "%s\n", s->csv_prov);
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
	for (int i = 0; i < 3; i++) {
		st->coal_hits[i] = m->coal_hits[i];
		st->coal_fills[i] = m->coal_fills[i];
	}
}

void sim_finish(struct sim *s)
{
	struct stats *st = &s->st;
	uint64_t l1_misses = 0;

	mmu_forget(&s->mmu); /* folds the memo's hits into the counters */
	for (size_t i = 0; s->nproc > 1 && i < s->nproc; i++) /* before the folds below */
		sim_proc_counts(s, i, s->procs[i].fin);
	kernel_rss_changed(&s->k); /* the integrals up to the end (before the counts below move sim_now()) */
	copy_mmu_stats(st, &s->mmu.st);
	for (struct mm *mm = s->k.mms, *cur = s->k.mm; mm; mm = mm->next) { /* every process's */
		kernel_use_mm(&s->k, mm);
		vmas_finish(&s->k);
		kernel_use_mm(&s->k, cur);
	}
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
	st->huge_bytes = kernel_huge_bytes(st);
	st->rss_bytes = kernel_rss_bytes(st);
	st->huge_coverage = st->rss_bytes ? (double)st->huge_bytes / (double)st->rss_bytes : 0.0;
	st->peak_rss_bytes = s->k.racct.peak_rss;
	st->peak_huge_bytes = s->k.racct.peak_huge;
	st->huge_coverage_peak = s->k.racct.peak_coverage;
	/* time-weighted: the integral of huge bytes over that of RSS (a stretch of no time: the end's) */
	st->huge_coverage_mean = s->k.racct.rss_time ? (double)s->k.racct.huge_time / (double)s->k.racct.rss_time
						   : st->huge_coverage;
	st->free_pages = s->k.buddy.nr_free_pages;
	st->fragmentation_index_order9 = buddy_fragmentation_index(&s->k.buddy, HPAGE_PMD_ORDER);
	st->cpi = s->cfg.cpi;
	st->cpu_model = s->cfg.core.model;
	st->kernel = s->cfg.kernel;
	st->mem_timed = s->mmu.cache.timed;
	st->coalesce = s->mmu.tlb.coal_shift != 0;
	st->deps = s->deps;
	st->processes = s->nproc;
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
	st->swap_bytes = s->k.mm->pt.nr_swap * PAGE_SIZE;
	(void)l1_misses;
	roi_finish(s);
}

/* --- invariants --------------------------------------------------------- */

void sim_check_invariants(struct sim *s)
{
	kernel_check_invariants(&s->k);
	asid_check_invariants(&s->k.tlbstate, &s->mmu);
	mmu_check_invariants(&s->mmu); /* TLB and PWC entries agree with the page table */
	if (s->virt)
		virt_check_invariants(s);
}
