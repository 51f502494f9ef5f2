/*
 * sim.h - struct sim owns every model of one simulated machine; the replay loop
 * (replay.c) feeds it records, counters come out. Several sims can share one reader (the
 * --modes comparison decodes the input once and drives each mode from it).
 */
#ifndef MMUSIM_SIM_H
#define MMUSIM_SIM_H

#include <stdio.h>

#include <signal.h>
#include <stddef.h>

#include "config.h"
#include "core.h"
#include "err.h"
#include "kernel.h"
#include "mmu.h"
#include "roi.h"
#include "stats.h"
#include "trace.h"
#include "virt.h"

/*
 * What the machine counts per process (sim.c): the running process is charged
 * what the machine's counters moved by while it ran (from one context switch to
 * the next), as the scheduler charges a task's times; kernel threads' work
 * (khugepaged, kswapd) goes to the process that was running.
 */
enum sim_proc_count {
	SP_INSTRUCTIONS, SP_CYCLES, SP_ITLB_MISSES, SP_DTLB_MISSES, SP_STLB_MISSES, SP_WALKS,
	SP_WALK_CYCLES, SP_PGFAULT, SP_PGMAJFAULT, SP_THP_FAULT_ALLOC, SP_THP_FAULT_FALLBACK,
	SP_SWITCHES, SP_NR
};
extern const char *const sim_proc_count_name[SP_NR];

/* The timeline's per-interval columns (sim.c, timeline_row()). */
#define SIM_TL_DELTAS 7

/*
 * Buckets of a process's fault-latency histogram (sim.c, machine_fault()):
 * bucket 0 counts #PFs that cost 0 or 1 cycle, bucket b > 0 those that cost
 * [2^b, 2^(b+1)) cycles; 64 buckets hold every 64-bit count.
 */
#define SIM_FAULT_LAT_BUCKETS 64

/* Pages per process whose touched bits are known set without a look-up (a power of 2). */
#define SIM_TOUCHED_RECENT 256

struct sim_proc {
	struct mm *mm;     /* its address space (the kernel's; exited ones stay listed) */
	uint64_t id;       /* the trace's process id */
	uint64_t c[SP_NR]; /* its counts (as of its last switch out) */
	uint64_t fin[SP_NR]; /* its counts at the last sim_finish() (the report's) */
	/* the distinct 4K pages it referenced (sim_track_touched()): a 512-bit map per
	   2M region touched, in an open-addressing table keyed by region + 1 */
	uint64_t *tr_key;
	uint64_t (*tr_bits)[8];
	size_t tr_cap, tr_n;
	uint64_t tl_last[SIM_TL_DELTAS]; /* its interval columns' counts at its last timeline row */
	/* the #PFs the CPU took while it ran, by the cycles the fault path charged */
	uint64_t fault_lat[SIM_FAULT_LAT_BUCKETS];
	/* 4K page + 1 of the pages marked lately, direct-mapped by the page's low bits
	   (0: none): a reference to one of them needs no look-up (sim_touched_batch()) */
	uint64_t tr_recent[SIM_TOUCHED_RECENT];
};

struct sim {
	struct mmu mmu; /* the CPU: TLBs, PWCs, caches, memo; faults go to the kernel's hook */
	struct kernel k; /* the kernel and its processes' address spaces (kernel.h) */
	uint64_t nrec[R_KIND_NR]; /* records by kind, folded into st by sim_finish */
	/* batches go through sim_run_batch(), never a summary: cache.data_refs (every data
	 * reference goes to the cache) or roi.active (sim_set_plain()) */
	bool plain;

	struct roi roi; /* the region of interest: skip, warm-up, region (roi.c) */

	struct stats st; /* the report (the MMU's counters copied in by sim_finish()) */
	struct sim_config cfg;
	/* --timeline: a CSV row every tl_interval cycles of simulated time */
	FILE *timeline;
	bool tl_procs; /* a row per process (a processes: list): sim_timeline_header() */
	cycles_t tl_interval, tl_next;
	uint64_t tl_elided; /* idle intervals whose rows were left out (sim_timeline_due()) */
	/* set by a signal (pool_opts.interrupted): loops inside a batch end early; NULL: never */
	const volatile sig_atomic_t *stop;
	uint64_t tl_last[SIM_TL_DELTAS]; /* the interval columns' counters at the last row */
	FILE *steps; /* --steps: a CSV row at each marker (sim_steps_row()); NULL: none */
	/*
	 * What ends every row of the CSVs written during and after the run
	 * (timeline, steps, vmas): ",VERSION,BUILD_ID,CONFIG_HASH,INPUT_ID", the
	 * run's provenance as its JSON report has it (mmusim.c); "" if not set.
	 */
	char csv_prov[512]; /* ids are at most PROVENANCE_ID_MAX bytes, quoted at most twice that */
	/* sim_now() of the counters a warm-up reset (roi_reset_counters()): time goes on */
	uint64_t now_insns;
	cycles_t now_cycles;
	struct virt *virt;  /* virt.mode nested or shadow: the hypervisor and host (virt.c); else NULL */
	cycles_t cyc_virt;  /* VM exits and host faults the guest waited for (in sim_now()) */
	/* cpu.model overlap: the core (core.c); s->mmu.timing is set then */
	struct core core;
	uint64_t dep_carry; /* an R_DEP that ended a batch: its distance, for the next batch's first record */
	bool deps;          /* the input records dependences (trace_reader.deps): the report says so */
	/* the processes, in creation order (procs[0]: the first); cur the running one */
	struct sim_proc *procs;
	size_t nproc, cap_proc, cur;
	uint64_t proc_snap[SP_NR]; /* the machine's counts when cur was switched in */
	bool track_touched; /* record each process's touched pages (bloat): from the second process on */
	size_t batch_cur;   /* the running process when the batch began (the touched pages' owner) */
};

/* The counts of process @i so far (the running one's include what it ran since its switch). */
void sim_proc_counts(const struct sim *s, size_t i, uint64_t out[SP_NR]);

/*
 * Record from now on which 4K pages each process references (for bloat_bytes),
 * by a pass over each batch after it ran (sim_touched_batch()). The machine turns
 * it on when a second process appears; the processes that exist then are taken
 * to have touched every anonymous page resident in them (a THP whole: their
 * bloat before that point is not seen). A front end that starts several
 * processes calls it before the first record, which makes it exact.
 */
void sim_track_touched(struct sim *s);
/* The touched pages of batch @b (track_touched): 0, or -1 on host OOM (k.err). */
int sim_touched_batch(struct sim *s, const struct trace_batch *b);

/*
 * The stores of batch @b reach the kernel's page contents (k.thp.track_written,
 * Linux 6.12+: thp_store_seen() for each page a store or modify wrote, in the
 * address space of the process that ran it), by a pass after the batch. A
 * shrinker run inside the batch sees the stores of earlier batches and each
 * store that faulted (the fault marks its page), not the batch's others; a
 * store before a munmap, MADV_DONTNEED or exec of the batch marks the page its
 * address maps at the batch's end.
 */
void sim_written_batch(struct sim *s, const struct trace_batch *b);
/*
 * The report's rows of the processes (s->nproc of them into @out): their counts as
 * of the last sim_finish(), their memory as it is. 0, or -1 when the run had
 * fewer than two processes.
 */
int sim_proc_report(struct sim *s, struct stats_proc *out);

/* The machine a kernel runs on (the MMU's hooks get the kernel: its #PF vector). */
static inline struct sim *sim_of(void *k)
{
	return (struct sim *)((char *)k - offsetof(struct sim, k));
}

/* Build every model from @cfg (validated). 0, or -1 with @e (host OOM, pool). */
int sim_init(struct sim *s, const struct sim_config *cfg, struct err *e);
void sim_destroy(struct sim *s);

/*
 * Replay one batch. Returns 0, or -1 with @e set when the input is bad for this
 * machine (an address beyond the paging levels, a touch outside every VMA with
 * implicit mappings off, simulated memory exhausted).
 */
int sim_run_batch(struct sim *s, const struct trace_batch *b, struct err *e);

/*
 * The pieces of sim_run_batch() for roi.c: records [@from, @to) of @b (0, or -1
 * with @e); the batch's end (rec_no, the timeline, khugepaged: 0 or -1 with @e);
 * a failure met at record @idx of the batch that is not yet named (-1 with @e).
 */
int sim_run_range(struct sim *s, const struct trace_batch *b, size_t from, size_t to, struct err *e);
int sim_batch_end(struct sim *s, const struct trace_batch *b, struct err *e);
int sim_batch_fail(struct sim *s, uint64_t idx, struct err *e);

/*
 * Several simulators fed from one batch (sweeps, --modes) share one pass over it
 * that does, once, what does not depend on a simulator's state:
 *
 * - It finds the references every simulator answers from its memo of the last L1
 *   hit (mmu.h): runs of records that touch, on each side, the page the side's
 *   previous access touched, with no event and no page-crossing reference among
 *   them. A simulator applies such a run as a few counter additions, after
 *   checking that its memo really holds those pages (and, for a run with
 *   stores, that the translation is writable); else it replays the run record
 *   by record.
 * - It turns every other reference into an op: the address and its kind (an
 *   ifetch, a load, a store; an M is a load op and a store op), so the simulators
 *   skip the record decoding, the page-crossing test and the per-kind counting.
 *   What is left (events, crossing references, R_INSNS outside runs) is
 *   replayed as a record.
 *
 * On the validation trace 31 % of the records become ops, 12 % runs.
 *
 * The record counts by kind are the batch's totals (@kinds, @insns): a simulator
 * that ran the whole batch sets its counts from them at the end, and meanwhile
 * adds ifetches to st.instructions, so sim_now() stays exact inside the batch.
 * The counts are exactly those of sim_run_batch() (check_sim compares them).
 */
struct batch_summary {
	uint64_t *op;                 /* nop ops: see replay.c (BOP_*) */
	uint16_t *op_rec;             /* the (first) record of each op (its index: < 2^15) */
	size_t nop, cap_op;
	size_t n;                     /* runs among the ops */
	uint64_t kinds[R_KIND_NR];    /* records of each kind in the batch */
	uint64_t insns;               /* R_INSNS instructions in the batch */
};

/* Summarize @b into @sum (reused across batches). 0, or -1 on host OOM (then pass NULL below). */
int sim_batch_summarize(const struct trace_batch *b, struct batch_summary *sum);
void sim_batch_summary_free(struct batch_summary *sum);

/* sim_run_batch() driven by @sum (from sim_batch_summarize() of @b; NULL: plain). */
int sim_run_batch_summarized(struct sim *s, const struct trace_batch *b,
			     const struct batch_summary *sum, struct err *e);

/* Recompute s->plain after s->roi.active changed (roi.c). The overlap core
 * replays record by record: its R_DEP records and load counts are per record. */
static inline void sim_set_plain(struct sim *s)
{
	s->plain = s->mmu.data_refs || s->roi.active || s->mmu.timing != NULL;
}

/*
 * An R_DEP record of distance @d before @next (NULL: it ended the batch; the
 * next batch's first record is its reference): the overlap core's
 * dependence (core_dep()). Only under cpu.model overlap.
 */
void sim_dep(struct sim *s, const struct trace_rec *next, uint64_t d);

/* The overlap core's side of a warm-up's reset (roi.c), before the counters are zeroed. */
void sim_core_reset(struct sim *s);

/* One L1 lookup of @va on @side (a store if @write), which the function makes with mmu_access(). */
typedef void (*sim_lookup_fn)(void *ctx, struct sim *s, vaddr_t va, enum tlb_side side, bool write);

/*
 * sim_run_batch() handing each L1 lookup to @fn(@ctx, ...) in the order the
 * replay loop makes them (one per 4 KiB page a reference touches; an M's store
 * first), for an observer of the lookup stream (mrc.c). Same counts as
 * sim_run_batch() when @fn calls mmu_access() once.
 */
int sim_run_batch_with(struct sim *s, const struct trace_batch *b, sim_lookup_fn fn, void *ctx,
		       struct err *e);

/* Fill the end-of-run gauges and cycle totals in s->st. */
void sim_finish(struct sim *s);

/* Every model's invariants, and cross-model ones (TLB and PWC entries agree with
 * the page table; each mapped frame is allocated exactly once). Aborts. */
void sim_check_invariants(struct sim *s);

/*
 * A failure met inside a batch (bad input for this machine): formats the message
 * into s->err (naming record rec_no + 1; the replay loop renames it with the
 * record's index in the batch) and sets s->failed. Returns -1.
 */
int sim_fail(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A machine event (replay.c): a marker, a process event, else the kernel's system call. 0 or -1. */
int sim_event(struct sim *s, const struct os_event *ev);



/* Simulated time so far, in cycles (what khugepaged's sleeps are measured in). */
cycles_t sim_now(const struct sim *s);



/*
 * Start a timeline on @f (the caller wrote sim_timeline_header()): a row every
 * @interval cycles, or with @procs a row per live process every @interval
 * cycles. The caller owns @f.
 */
void sim_timeline_start(struct sim *s, FILE *f, cycles_t interval, bool procs);

/*
 * Write the timeline rows that simulated time has passed (after each batch):
 * the first row due carries the batch's counts; when simulated time passed
 * more intervals within the batch (a long instruction stretch, a slow fault),
 * the rows between would repeat the last one with zero deltas, so only the
 * last of them is written and the others are counted in tl_elided. At most
 * two rows a batch: the file grows with the input, not with simulated time.
 */
void sim_timeline_due(struct sim *s);

/* The shortest --timeline interval, in simulated ms: rows are written between
 * batches of TRACE_BATCH records, which take at least that long (a record at
 * least a cycle: 4096 cycles are 1.5 us at 2.8 GHz); a shorter one would only
 * give rows left out as idle. */
#define SIM_TIMELINE_MIN_MS 0.001

/*
 * The timeline CSV's header row; with @procs (a run of a processes: list) a
 * `process` column follows `mode` and each row is one process's.
 */
void sim_timeline_header(FILE *f, bool procs);

/* --steps: the CSV's header row; the row of marker @marker (nothing if s->steps is NULL). */
void sim_steps_header(FILE *f, const struct sim_config *c);
bool sim_steps_mthp(const struct sim_config *c, unsigned order);
void sim_steps_row(struct sim *s, uint64_t marker);

#endif
