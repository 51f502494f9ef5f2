/*
 * pool.h - drive N simulators from one trace reader (DESIGN.md "Command line"):
 * every simulator sees every batch of the input, in order, so its counts are
 * those of replaying the input alone; the input is decoded once.
 *
 * Used by `mmusim run` (one simulator, or one per --modes mode), the sweep
 * workers (up to 32 points of one input) and tests. It prints nothing and never
 * exits: failures come back as values, progress through a callback.
 */
#ifndef MMUSIM_POOL_H
#define MMUSIM_POOL_H

#include <signal.h>

#include "err.h"
#include "sim.h"
#include "trace.h"
#include "types.h"

/* pool_run()'s results. */
enum pool_status {
	POOL_OK = 0,
	POOL_EINPUT = -1, /* bad input: the reader's or a simulator's error (exit 2) */
	POOL_EHOST = -2,  /* host out of memory or no threads (exit 1) */
	POOL_EINTR = -3,  /* *interrupted became set: stopped after a batch or a round */
};

struct pool_opts {
	/* Threads sharing the decode and the simulators, the caller's included
	 * (0: 1). More than one simulator always runs through the pool, even on
	 * one thread (see pool.c); fewer threads than simulators is fine. */
	unsigned threads;
	/* sim_check_invariants() on every simulator after every batch (tests):
	 * the plain batch-by-batch loop. */
	bool check;
	/* Polled after every batch (plain loop) or round (pool); NULL: never set. */
	const volatile sig_atomic_t *interrupted;
	/* Called from the caller's thread every 64 batches (plain loop) or every
	 * round of 32 (pool) with the records every simulator has seen so far;
	 * it decides itself whether to show anything. NULL: none. */
	void (*progress)(void *arg, uint64_t records);
	void *progress_arg;
};

/*
 * Replay @tr through @sims[0..@n) (each initialized by sim_init(), a timeline
 * started if wanted: a shared --timeline keeps the batch-by-batch loop, so its
 * rows stay interleaved batch by batch). On POOL_OK the input is exhausted and
 * every simulator finished (sim_finish()); *@records (if not NULL) holds the
 * records each simulator saw. On POOL_EINPUT @e says why: the reader's error, or
 * that of the lowest-numbered failed simulator, whatever the timing; the
 * simulators are then in an unspecified but destroyable state. The caller keeps
 * ownership of @sims and @tr (whose record buffer is lent and given back).
 */
int pool_run(struct sim *sims, unsigned n, struct trace_reader *tr, const struct pool_opts *o,
	     uint64_t *records, struct err *e);

#endif
