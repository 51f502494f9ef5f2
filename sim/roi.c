/*
 * roi.c - the region of interest of a replay: a skipped stretch, a warm-up and a
 * simulated stretch, as DynamoRIO's drcachesim defines -skip_refs, -warmup_refs
 * and -sim_refs (clients/drcachesim/common/options.cpp; the same text on
 * https://dynamorio.org/sec_drcachesim_ops.html):
 *
 *   -skip_refs   "the number of references to skip in the beginning of the
 *                application execution. These memory references are dropped
 *                instead of being simulated."
 *   -warmup_refs "the number of memory references to warm up caches before
 *                simulation. The warmup references come after the skipped
 *                references and before the simulated references."
 *   -sim_refs    "the number of memory references to simulate. The simulated
 *                references come after the skipped and warmup references, and
 *                the references following the simulated ones are dropped."
 *
 * drcachesim ends a warm-up by resetting its caches' statistics; here every
 * counter of the report is reset (roi_reset_counters()). drcachesim counts
 * instructions only for -skip_instrs; roi.warmup_insns and roi.sim_insns are
 * this simulator's, by analogy.
 *
 * Units. A reference is a record the report counts in refs: an ifetch, a load, a
 * store or a modify (one reference, though it is looked up twice). An
 * instruction is what the `instructions` counter counts: an ifetch record, or
 * one of the instructions of an R_INSNS record (a workload's loop body, an mtr
 * INSNS record), which a cut may split (its instructions before the cut belong
 * to the phase that ends, the others to the next).
 *
 * Cut points. A phase of N references (instructions) ends right after the record
 * that holds its N-th: what follows it -- events, R_INSNS, the background work
 * (khugepaged, the timeline) tested at the end of a batch -- belongs to the next
 * phase. So a warm-up of N references followed by the rest counts exactly what a
 * whole replay counts minus what a replay of only the first N references counts
 * (tests/check_roi.c), and a region of N references counts exactly what a
 * replay of the first N counts.
 *
 * The skipped stretch. Its references are dropped as drcachesim drops them for
 * the hardware: no TLB, PWC or cache lookup, no walk, so every TLB, PWC and
 * cache count of the region is drcachesim's. But the memory the region starts
 * from is kept: each skipped reference is a touch of the kernel model only
 * (sim_touch()), so a page the stretch touched is resident when the region
 * begins as the program left it -- written pages private and dirty (an
 * anonymous page of its own, a private file page copied), pages only read as
 * Linux maps them (the page cache's page, the zero page or huge zero page where
 * os.zero_page / os.thp.use_zero_page give it, a THP where the policy gives one
 * at the fault) -- and a read after the stretch of a page written inside it does
 * not meet the zero page. Only the first touch of a page faults (a read, a
 * write, or an instruction fetch, which makes an implicit region text), and a
 * later store to a page first read takes the write-protect fault (the COW of a
 * zero page), as Linux would have seen them. A memo of ROI_MEMO pages recently
 * touched (direct-mapped by a hash of the page number; each with whether it was written)
 * skips the page-table lookup for repeats; events, R_TOUCH records and reclaim
 * (a page taken away) clear it.
 * Its mapping events (mmap, munmap, mprotect, madvise, brk, mremap) and an mtr
 * trace's touched pages (R_TOUCH) are applied, in order with the references, so
 * the address space is the program's when the simulation starts. Its markers
 * write their --steps rows. What the stretch's kernel work counts (its faults,
 * a MAP_POPULATE's, a munmap's flushes: the vmstat counters, cyc_fault) is reset
 * with everything else at the stretch's end, and it takes no simulated time
 * (its cycles are not carried into sim_now(), as its instructions are not):
 * the region's report counts the region. Background work (khugepaged) does not
 * run in it: no simulated time passes. Under virt.mode the touch is the guest
 * kernel's fault and the host's backing of what it mapped; shadow mode's
 * shadow entries, which the hypervisor builds at a hardware access, are not
 * built (the region's first access of a page takes its shadow fault).
 *
 * Touched pages of the trace (R_TOUCH: mtr version 3, written by the capture
 * tool for pages a program touched while nothing was recorded, before a
 * region of interest or in a pause) are the same kernel-only touch wherever
 * they come (roi_touch()), and count nothing: the report's counters, the
 * per-mapping counts, the virtual machine's are put back as they were, the
 * gauges (resident pages, page tables) keep what the touch made. They are the
 * state the recorded part starts from, not work it did.
 *
 * The end. After roi.sim_* the replay stops: the rest of the batch is dropped,
 * and the pool reads no further once every simulator is done (pool.c), so a bad
 * record after the region is not reported.
 *
 * Speed: nothing here runs unless a roi.* key is set and a cut still lies ahead;
 * the replay loop then pays one test per batch (sim_run_batch()).
 */
#include <string.h>

#include "fault.h"
#include "mmap.h"
#include "roi.h"
#include "vmas.h"
#include "sim.h"

/* The skip's memo: forget every page (the page table changed under it). */
static void memo_clear(struct roi *r)
{
	memset(r->memo, 0xff, sizeof(r->memo));
}

/* Enter @phase (not ROI_DONE) with its length from the config; none: the next one. */
static void enter(struct sim *s, enum roi_phase phase)
{
	const struct roi_cfg *c = &s->cfg.roi;
	const uint64_t refs[3] = { c->skip_refs, c->warmup_refs, c->sim_refs };
	const uint64_t insns[3] = { c->skip_insns, c->warmup_insns, c->sim_insns };
	struct roi *r = &s->roi;

	while (phase < ROI_SIM && !refs[phase] && !insns[phase])
		phase = (enum roi_phase)(phase + 1);
	r->phase = phase;
	r->insns = insns[phase] != 0;
	r->left = r->insns ? insns[phase] : refs[phase];
	r->active = r->left != 0; /* a region with no limit: no cut ahead, the plain loop from here */
	sim_set_plain(s);
}

void roi_init(struct sim *s)
{
	const struct roi_cfg *c = &s->cfg.roi;
	struct stats_roi *st = &s->st.roi;

	memset(&s->roi, 0, sizeof(s->roi));
	memo_clear(&s->roi);
	st->skip_refs = c->skip_refs;
	st->warmup_refs = c->warmup_refs;
	st->sim_refs = c->sim_refs;
	st->skip_insns = c->skip_insns;
	st->warmup_insns = c->warmup_insns;
	st->sim_insns = c->sim_insns;
	st->set = c->skip_refs || c->warmup_refs || c->sim_refs || c->skip_insns || c->warmup_insns ||
		  c->sim_insns;
	enter(s, ROI_SKIP);
	st->started = s->roi.phase == ROI_SIM;
}

/* The gauges among the report's members: state, not counts of events. */
#define ROI_GAUGES(X)                                                                          \
	X(nr_anon_pages) X(nr_anon_transparent_hugepages) X(nr_hugetlb_pages)                  \
	X(nr_hugetlb_pages_1g) X(nr_file_pages) X(nr_mapped) X(nr_file_hugepages)              \
	X(nr_file_pmdmapped) X(nr_page_table_pages)

void roi_keep_gauges(struct stats *old, const struct stats *now)
{
#define X(m) old->m = now->m;
	ROI_GAUGES(X)
#undef X
	for (unsigned o = 0; o < MTHP_ORDERS; o++) { /* hugepages-<size>kB/stats/nr_anon* */
		old->mthp[o][MTHP_STAT_NR_ANON] = now->mthp[o][MTHP_STAT_NR_ANON];
		old->mthp[o][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED] =
			now->mthp[o][MTHP_STAT_NR_ANON_PARTIALLY_MAPPED];
	}
}

void roi_touch(struct sim *s, vaddr_t va, enum touch_how how)
{
	struct stats keep = s->st;
	cycles_t cyc_virt = s->cyc_virt;
	struct virt_counts vc;

	if (s->virt)
		virt_counts_save(s, &vc);
	s->k.uncounted = true;
	sim_touch(&s->k, va, how); /* (a failure: s->k.failed, the caller's test) */
	s->k.uncounted = false;
	roi_keep_gauges(&keep, &s->st);
	s->st = keep;
	s->cyc_virt = cyc_virt;
	if (s->virt)
		virt_counts_restore(s, &vc);
	memset(s->roi.memo, 0xff, sizeof(s->roi.memo)); /* the page table changed */
}

void roi_reset_counters(struct sim *s)
{
	struct stats keep = s->st;

	/*
	 * Simulated time goes on: khugepaged's next wake, the timeline's next row
	 * are times, and sim_now() keeps counting from where it was (the bases
	 * are added where the counters were: the same sums as with no reset).
	 */
	if (s->mmu.timing) /* the overlap core's clock goes on by itself (core.c) */
		sim_core_reset(s);
	else
		s->now_cycles += s->mmu.st.cyc_translation + s->mmu.st.walk_cycles + s->st.cyc_fault +
				 s->mmu.st.cyc_data + s->st.cyc_compaction + s->st.cyc_reclaim + s->cyc_virt;
	s->now_insns += s->nrec[R_IFETCH] + s->st.instructions;
	s->cyc_virt = 0;
	if (s->virt)
		virt_reset_counts(s);
	vmas_reset_counts(&s->k); /* before the MMU's counters: it charges what they hold */
	memset(s->nrec, 0, sizeof(s->nrec));
	memset(&s->mmu.st, 0, sizeof(s->mmu.st));
	s->mmu.twalks = 0; /* (the timing hook's walk counts follow st's) */
	s->mmu.twalk_cycles = 0;
	s->mmu.memo_hits[0] = s->mmu.memo_hits[1] = 0; /* the memo (last_vpn, ...) stays */
	memset(&s->st, 0, sizeof(s->st));
	roi_keep_gauges(&s->st, &keep);
	s->st.roi = keep.roi;
	memset(s->tl_last, 0, sizeof(s->tl_last)); /* the timeline's deltas start afresh */
	kernel_rss_restart(&s->k); /* peaks and time-weighted coverage: from here */
}

void roi_finish(struct sim *s)
{
	struct stats keep = s->st;

	if (s->roi.phase != ROI_SKIP && s->roi.phase != ROI_WARMUP)
		return;
	/* the input ended before the region began: nothing of it is counted */
	vmas_reset_counts(&s->k);
	memset(&s->st, 0, sizeof(s->st));
#define X(m) s->st.m = keep.m;
	ROI_GAUGES(X)
	X(rss_bytes) X(huge_bytes) X(huge_coverage) X(free_pages) X(fragmentation_index_order9)
	X(swap_bytes) X(cpi) X(roi) X(wall_seconds) X(max_rss_bytes)
#undef X
	/* no measured stretch: the peaks and the mean are the end state */
	s->st.peak_rss_bytes = s->st.rss_bytes;
	s->st.peak_huge_bytes = s->st.huge_bytes;
	s->st.huge_coverage_peak = s->st.huge_coverage_mean = s->st.huge_coverage;
}

/* Credit @n instructions of an R_INSNS record to the current phase. */
static void add_insns(struct sim *s, uint64_t n)
{
	switch (s->roi.phase) {
	case ROI_SKIP:
		s->st.roi.skipped_insns += n;
		break;
	case ROI_WARMUP:
		s->st.roi.warmup_insns_run += n;
		s->st.instructions += n;
		break;
	case ROI_SIM:
		s->st.instructions += n;
		break;
	case ROI_DONE:
		break;
	}
}

/* The current phase ended: reset the counters if it was the skip or the warm-up, and go on. */
static void next_phase(struct sim *s)
{
	if (s->roi.phase == ROI_SIM) {
		s->roi.phase = ROI_DONE;
		s->st.roi.stopped = true;
		return;
	}
	if (s->roi.phase == ROI_SKIP) {
		/* the skip's kernel work takes no simulated time (see the header) */
		s->st.cyc_fault = s->st.cyc_compaction = s->st.cyc_reclaim = 0;
		s->cyc_virt = 0;
	}
	roi_reset_counters(s);
	enter(s, (enum roi_phase)(s->roi.phase + 1));
	s->st.roi.started = s->roi.phase == ROI_SIM;
}

/* What record @r counts towards the phase's length. */
static uint64_t units(const struct roi *ro, const struct trace_rec *r)
{
	if (!ro->insns)
		return r->kind <= R_MODIFY;
	return r->kind == R_IFETCH ? 1 : r->kind == R_INSNS ? r->size : 0;
}

/*
 * A skipped reference's touch of page @vpn (@how), unless the memo says the
 * page was touched so already. 0, or -1 (s->k.failed).
 */
static int skip_touch(struct sim *s, uint64_t vpn, enum touch_how how)
{
	struct roi *r = &s->roi;
	/* hashed: arrays a multiple of ROI_MEMO pages apart would share slots */
	uint64_t *m = &r->memo[(vpn * 0x9E3779B97F4A7C15ULL) >> (64 - ROI_MEMO_BITS)];
	uint64_t w = how == TOUCH_WRITE;
	uint64_t stolen = s->st.pgsteal_kswapd + s->st.pgsteal_direct;

	if (*m == (vpn << 1 | 1) || *m == (vpn << 1 | w))
		return 0; /* touched so already: written, or read and this is a read */
	if (sim_touch(&s->k, vpn << PAGE_SHIFT, how))
		return -1;
	if (s->st.pgsteal_kswapd + s->st.pgsteal_direct != stolen)
		memo_clear(r); /* reclaim took pages away: the memo may name them */
	*m = vpn << 1 | w;
	return 0;
}

/* The touches of a skipped reference @r: one per 4 KiB page, an M's store (a write). */
static int skip_ref(struct sim *s, const struct trace_rec *r)
{
	enum touch_how how = r->kind == R_IFETCH ? TOUCH_FETCH
			     : r->kind == R_LOAD ? TOUCH_READ : TOUCH_WRITE;
	uint64_t last = (r->addr + r->size - 1) >> PAGE_SHIFT;

	if (last < r->addr >> PAGE_SHIFT)
		last = r->addr >> PAGE_SHIFT; /* (wraps past the top: its first page) */
	for (uint64_t p = r->addr >> PAGE_SHIFT; p <= last; p++)
		if (skip_touch(s, p, how))
			return -1;
	return 0;
}

/* Records [@from, @to) of @b in the skipped stretch: touches and events applied, the rest counted. */
static int skip_range(struct sim *s, const struct trace_batch *b, size_t from, size_t to,
		      struct err *e)
{
	struct stats_roi *st = &s->st.roi;

	for (size_t i = from; i < to; i++) {
		const struct trace_rec *r = &b->recs[i];

		if (r->kind <= R_MODIFY) {
			st->skipped_refs++;
			st->skipped_insns += r->kind == R_IFETCH;
			if (skip_ref(s, r))
				return sim_batch_fail(s, i, e);
		} else if (r->kind == R_TOUCH) {
			roi_touch(s, r->addr, (enum touch_how)r->size);
			if (s->k.failed)
				return sim_batch_fail(s, i, e);
		} else if (r->kind == R_INSNS) {
			st->skipped_insns += r->size;
		} else if (r->kind == R_DEP) {
			continue; /* a dependence: nothing to skip */
		} else {
			st->skipped_events++;
			s->k.rec_no += i;
			sim_event(s, &b->ev[r->size]);
			s->k.rec_no -= i;
			memo_clear(&s->roi); /* (a munmap, an madvise, ...) */
			if (s->k.failed)
				return sim_batch_fail(s, i, e);
		}
	}
	return 0;
}

/* Records [@from, @to) of @b in the current phase. */
static int phase_range(struct sim *s, const struct trace_batch *b, size_t from, size_t to,
		       struct err *e)
{
	if (s->roi.phase == ROI_SKIP)
		return skip_range(s, b, from, to, e);
	if (s->roi.phase == ROI_WARMUP)
		for (size_t i = from; i < to; i++) {
			const struct trace_rec *rec = &b->recs[i];

			s->st.roi.warmup_refs_run += rec->kind <= R_MODIFY;
			s->st.roi.warmup_insns_run += rec->kind == R_IFETCH ? 1
						    : rec->kind == R_INSNS ? rec->size : 0;
		}
	return sim_run_range(s, b, from, to, e);
}

/*
 * The instructions of an R_INSNS record that a cut split, after the phase it
 * began in: credited phase by phase, ending phases as they run out.
 */
static void carry_insns(struct sim *s, uint64_t n)
{
	struct roi *r = &s->roi;

	while (n && r->phase != ROI_DONE) {
		uint64_t take = n;

		if (r->active && r->insns && take >= r->left)
			take = r->left;
		add_insns(s, take);
		n -= take;
		if (r->active && r->insns) {
			r->left -= take;
			if (!r->left)
				next_phase(s);
		}
	}
}

int roi_run_batch(struct sim *s, const struct trace_batch *b, struct err *e)
{
	struct roi *r = &s->roi;
	size_t i = 0, n = b->n;
	bool simulated = false; /* records of this batch were simulated: its background work is due */

	while (i < n && r->phase != ROI_DONE) {
		uint64_t u = 0;
		size_t j = i;

		if (!r->active) { /* the rest is simulated with no cut ahead */
			if (sim_run_range(s, b, i, n, e))
				return -1;
			simulated = true;
			break;
		}
		/* j: the record holding the phase's last unit (n: beyond this batch) */
		for (; j < n; j++) {
			u = units(r, &b->recs[j]);
			if (u >= r->left)
				break;
			r->left -= u;
		}
		simulated |= r->phase != ROI_SKIP;
		if (j == n) { /* the phase goes on into the next batch */
			if (phase_range(s, b, i, n, e))
				return -1;
			break;
		}
		if (b->recs[j].kind == R_INSNS) { /* split: its first r->left instructions end the phase */
			uint64_t head = r->left;

			if (phase_range(s, b, i, j, e))
				return -1;
			add_insns(s, head);
			r->left = 0;
			next_phase(s);
			carry_insns(s, u - head);
		} else {
			if (phase_range(s, b, i, j + 1, e))
				return -1;
			r->left = 0;
			next_phase(s);
		}
		i = j + 1;
	}
	if (r->phase == ROI_DONE)
		return 0; /* the simulation ended right after its last reference */
	if (simulated)
		return sim_batch_end(s, b, e);
	s->k.rec_no += n; /* all skipped: no background work (no simulated time passed) */
	return 0;
}
