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
 * The skipped stretch. Its references are dropped as drcachesim drops them: no
 * TLB, PWC or cache lookup, no walk, and no page fault -- a skipped reference
 * does not fault its page in, since faulting (page tables, the buddy allocator,
 * THP, the LRU) is simulating the kernel, and what the pages look like when the
 * simulation starts is what a warm-up is for. Its mapping events (mmap, munmap,
 * mprotect, madvise, brk, mremap) are applied, so the address space is the
 * program's when the simulation starts: a reference after the stretch into a
 * region mapped inside it finds its VMA. Its markers write their --steps rows.
 * Whatever those events count (a MAP_POPULATE's faults, a munmap's flushes) is
 * reset with everything else at the stretch's end.
 *
 * The end. After roi.sim_* the replay stops: the rest of the batch is dropped,
 * and the pool reads no further once every simulator is done (pool.c), so a bad
 * record after the region is not reported.
 *
 * Speed: nothing here runs unless a roi.* key is set and a cut still lies ahead;
 * the replay loop then pays one test per batch (sim_run_batch()).
 */
#include <string.h>

#include "mmap.h"
#include "roi.h"
#include "vmas.h"
#include "sim.h"

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

void roi_reset_counters(struct sim *s)
{
	struct stats keep = s->st;

	/*
	 * Simulated time goes on: khugepaged's next wake, the timeline's next row
	 * are times, and sim_now() keeps counting from where it was (the bases
	 * are added where the counters were: the same sums as with no reset).
	 */
	s->now_insns += s->nrec[R_IFETCH] + s->st.instructions;
	s->now_cycles += s->mmu.st.cyc_translation + s->mmu.st.walk_cycles + s->st.cyc_fault +
			 s->mmu.st.cyc_data + s->st.cyc_compaction + s->st.cyc_reclaim + s->cyc_virt;
	s->cyc_virt = 0;
	if (s->virt)
		virt_reset_counts(s);
	vmas_reset_counts(s); /* before the MMU's counters: it charges what they hold */
	memset(s->nrec, 0, sizeof(s->nrec));
	memset(&s->mmu.st, 0, sizeof(s->mmu.st));
	s->mmu.memo_hits[0] = s->mmu.memo_hits[1] = 0; /* the memo (last_vpn, ...) stays */
	memset(&s->st, 0, sizeof(s->st));
#define X(m) s->st.m = keep.m;
	ROI_GAUGES(X)
#undef X
	s->st.roi = keep.roi;
	memset(s->tl_last, 0, sizeof(s->tl_last)); /* the timeline's deltas start afresh */
	sim_rss_restart(s); /* peaks and time-weighted coverage: from here */
}

void roi_finish(struct sim *s)
{
	struct stats keep = s->st;

	if (s->roi.phase != ROI_SKIP && s->roi.phase != ROI_WARMUP)
		return;
	/* the input ended before the region began: nothing of it is counted */
	vmas_reset_counts(s);
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

/* Records [@from, @to) of @b in the skipped stretch: events applied, the rest counted. */
static int skip_range(struct sim *s, const struct trace_batch *b, size_t from, size_t to,
		      struct err *e)
{
	struct stats_roi *st = &s->st.roi;

	for (size_t i = from; i < to; i++) {
		const struct trace_rec *r = &b->recs[i];

		if (r->kind <= R_MODIFY) {
			st->skipped_refs++;
			st->skipped_insns += r->kind == R_IFETCH;
		} else if (r->kind == R_INSNS) {
			st->skipped_insns += r->size;
		} else {
			st->skipped_events++;
			s->rec_no += i;
			sim_event(s, &b->ev[r->size]);
			s->rec_no -= i;
			if (s->failed)
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
	s->rec_no += n; /* all skipped: no background work (no simulated time passed) */
	return 0;
}
