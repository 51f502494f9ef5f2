/*
 * roi.h - the region of interest of a replay (roi.* config keys; `run
 * --skip-refs` & co.): drcachesim's -skip_refs, -warmup_refs and -sim_refs, and
 * the same counted in instructions. See roi.c.
 */
#ifndef MMUSIM_ROI_H
#define MMUSIM_ROI_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "stats.h"
#include "trace.h"

struct sim;

enum roi_phase {
	ROI_SKIP,   /* references read, not simulated; mapping events applied */
	ROI_WARMUP, /* simulated; every counter reset to zero at its end */
	ROI_SIM,    /* simulated and counted */
	ROI_DONE,   /* after roi.sim_*: nothing more is simulated */
};

#define ROI_MEMO_BITS 8
#define ROI_MEMO (1u << ROI_MEMO_BITS) /* pages the skip remembers having touched */

struct roi {
	bool active;          /* a cut lies ahead (or the region ended): batches go through roi_run_batch() */
	enum roi_phase phase;
	bool insns;           /* this phase's length is in instructions, not references */
	uint64_t left;        /* references or instructions left in this phase */
	/* the skip's memo (roi.c): page number << 1 | written, direct-mapped; all ones: none */
	uint64_t memo[ROI_MEMO];
};

/* Set up @s->roi from @s->cfg.roi (after sim_init() built everything else). */
void roi_init(struct sim *s);

/* sim_run_batch() while s->roi.active: the batch cut at the phases' ends. */
int roi_run_batch(struct sim *s, const struct trace_batch *b, struct err *e);

/* Has @s reached the end of its region (roi.sim_*), so that no input matters any more? */
static inline bool roi_done(const struct roi *r)
{
	return r->phase == ROI_DONE;
}

/*
 * Reset every counter of @s to zero (the report's event counters, the MMU's,
 * the record counts), leaving all state -- TLBs, caches, page tables, THPs, the
 * buddy allocator, simulated time and the timers that run on it -- as it is.
 */
void roi_reset_counters(struct sim *s);

/* Copy the gauges of @now (resident pages, page tables: state, not counts) into @old. */
void roi_keep_gauges(struct stats *old, const struct stats *now);

/*
 * An R_TOUCH record (a page touched while the capture recorded nothing): the
 * kernel's side of that touch (sim_touch()), counting nothing -- every counter
 * of @s is as before, the gauges as the touch left them. A failure: s->failed.
 */
void roi_touch(struct sim *s, vaddr_t va, enum touch_how how);

/*
 * At the end of sim_finish(): if the input ended before the region began (in
 * the skip or the warm-up), clear every counter of the report (s->st alone:
 * a live machine's report is taken from a copy), so nothing of it is counted.
 */
void roi_finish(struct sim *s);

#endif
