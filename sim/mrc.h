/*
 * mrc.h - one-pass miss-ratio curves of the L1 TLB (`mmusim mrc`): in one replay,
 * the exact LRU miss count of an L1 array of every size from 1 to N entries (or,
 * with S sets, of every associativity 1..N/S), per side and page size, by stack
 * distances (Mattson et al. 1970). mrc.c says what a curve equals.
 *
 * Nothing here prints an error or exits: a status (pool.h's POOL_*) and a struct err.
 */
#ifndef MMUSIM_MRC_H
#define MMUSIM_MRC_H

#include <signal.h>
#include <stdio.h>

#include "err.h"
#include "sim.h"
#include "trace.h"

#define MRC_DEFAULT_MAX_ENTRIES 4096
#define MRC_MAX_ENTRIES (1u << 20) /* --max-entries cap: 1M, 16 MiB of counters a curve */

struct mrc_opts {
	unsigned max_entries; /* N >= 1: sizes up to N entries (MRC_MAX_ENTRIES at most) */
	unsigned sets;        /* 1 <= S <= N: set = page number mod S; ways 1..N/S (1: fully associative) */
	const volatile sig_atomic_t *interrupted; /* polled after every batch; NULL: never */
};

/* The curve of one side and page size: point w (1..ways) is an array of sets x w entries. */
struct mrc_curve {
	uint64_t *misses;  /* [w - 1]: L1 misses */
	uint64_t *lookups; /* [w - 1]: L1 lookups (hits + misses) */
};

/*
 * What mrc_run() found. curve[side][ps] has its arrays only if that side looked
 * up a page of that size (else NULL); every curve has @ways points.
 */
struct mrc_result {
	unsigned sets, ways;
	struct mrc_curve curve[2][PS_NR];
	uint64_t ro_stores;        /* stores to a read-only translation held in a stack (mrc.c) */
	uint64_t invalidations;    /* invalidation calls followed: INVLPG ranges and full flushes */
	uint64_t records;          /* input records replayed */
};

/*
 * Replay @tr through @s (sim_init()'d, nothing replayed yet; the caller keeps
 * it and @tr) and compute the curves into @res (zeroed first; mrc_result_free()
 * it either way). @s is then finished (sim_finish()): its report is the run's
 * with its own config. Returns 0; POOL_EINPUT with @e (bad input: the reader's
 * or the simulator's error); POOL_EHOST with @e (host out of memory);
 * POOL_EINTR (*@o->interrupted became set).
 */
int mrc_run(struct sim *s, struct trace_reader *tr, const struct mrc_opts *o,
	    struct mrc_result *res, struct err *e);

void mrc_result_free(struct mrc_result *res);

/*
 * The curves as CSV: the header "side,page_size,entries,misses,miss_ratio,lookups,
 * sets,ways", then per curve (l1i before l1d, 4K, 2M, 1G) one row per point.
 * Returns 0, or -1 if writing failed (ferror()).
 * With @prov (version, build id, config hash, input id: provenance.h), four more
 * columns, run.version, run.build_id, run.config_hash and run.input_id, as a
 * sweep's CSV ends its rows; NULL: none.
 */
#define MRC_NR_PROV 4
int mrc_write_csv(const struct mrc_result *res, const char *const prov[MRC_NR_PROV], FILE *f);

/* The curves' sides as the CSV names them: "l1i", "l1d". */
extern const char *const mrc_side_name[2];

#endif
