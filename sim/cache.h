/*
 * cache.h - the data-cache hierarchy that serves page-walk reads (and, with
 * cache.data_refs, the trace's own data references): L1D, L2, LLC, then DRAM.
 */
#ifndef MMUSIM_CACHE_H
#define MMUSIM_CACHE_H

#include "config.h"
#include "types.h"

#define CACHE_ORDER_WAYS 16 /* ways a set's recency order packs into 64 bits */

struct cache_array {
	uint64_t *tag;   /* sets * ways: line number + 1; 0 = invalid */
	/*
	 * LRU. Up to 16 ways (every shipped machine): per set its ways in recency
	 * order, a nibble each, the most recent lowest, initially ways - 1 most
	 * recent ... 0 least, so that fills take the lowest free way first, as a
	 * stamp scan did. The MRU way is probed first, the victim is the top nibble,
	 * a use is a few shifts: a scan of every way for the oldest use stamp cost
	 * 140 instructions per page-walk read on the miss-heavy bench trace
	 * (callgrind). (The order was stored XORed with the initial one so that
	 * calloc'd zeroes were it; without the XORs, and with a fill's shifts
	 * precomputed: 741.7 -> 727.5 instructions an update there.)
	 * More ways: use stamps, the victim the oldest (a scan).
	 */
	uint64_t *order;     /* per set (ways <= 16) */
	uint64_t order_mask; /* the nibbles in use: (1 << 4 * ways) - 1 */
	unsigned last_shift; /* 4 * (ways - 1): the least recent position */
	uint64_t *stamp; /* sets * ways (ways > 16) */
	uint64_t clock;
	unsigned sets, ways, latency;
	uint32_t scan_mask; /* scan_mask(ways) (ways <= CACHE_ORDER_WAYS) */
	uint64_t set_mask; /* sets - 1 if a power of two, else 0 */
	bool set_mod;      /* sets is not a power of two: the set is a remainder */
	bool present;
	/*
	 * The timed hierarchy only (struct cache.timed): per line (sets * ways) its
	 * CM_* bits, and at a level a prefetcher fills, when a prefetched line's
	 * data is there (core.c sets it; read while the line is CM_PREFETCHED).
	 */
	uint8_t *meta;
	double *ready;
};

#define CM_DIRTY 1u      /* written since it was filled: its eviction writes it back */
#define CM_PREFETCHED 2u /* brought by a prefetch (this level its target), not yet used */

/*
 * One stream prefetcher (cache.prefetch.LEVEL.*): a table of @nstreams streams,
 * one per 4 KiB physical page, each the last line it saw, its direction, how
 * many steps in that direction in a row and the next line to prefetch.
 */
struct cache_stream {
	uint64_t page, last, next, used;
	int dir;
	unsigned run;
};

struct cache_pf {
	unsigned degree, distance, nstreams;
	struct cache_stream *s;
	uint64_t clock;
};

/* A prefetch issued by the last timed data access: for core.c to time. */
struct cache_pf_req {
	unsigned target;    /* CL_L1D or CL_L2: the level it fills and marks CM_PREFETCHED */
	unsigned src;       /* the level that served it (CL_L2, CL_LLC, CL_NR = DRAM) */
	size_t slot;        /* its way at @target (lv[target].ready[slot]) */
	double src_ready;   /* the source line is itself a prefetch in flight: when it arrives, else 0 */
};

/*
 * What the last timed access did besides serving the line, for the core
 * (cpu.model overlap; core.c): the prefetches it issued, when the line it hit
 * arrives if a prefetch brought it, the dirty lines written back to DRAM
 * (accumulated, also from page-walk reads, until the core takes them), and
 * the counts the report adds up (mmu.c).
 */
struct cache_out {
	struct cache_pf_req *pf; /* up to cache.pf_max */
	unsigned npf;
	double hit_ready;     /* the line served was a prefetch's: its arrival; else 0 */
	uint64_t writebacks;  /* dirty lines evicted to DRAM, not yet taken by the core */
	unsigned useful[2];   /* prefetched lines this access used: at L1D, at L2 */
};

struct cache {
	struct cache_array lv[CL_NR];
	unsigned line_shift;
	unsigned dram_latency;
	/*
	 * The timed hierarchy (cpu.model overlap with a prefetcher or
	 * cache.dram_bandwidth): dirty lines and write-backs, the prefetchers,
	 * what each access did (out). Off: the hierarchy is exactly the untimed one.
	 */
	bool timed;
	struct cache_pf pf[2]; /* the L1D's, the L2's (degree 0: none) */
	unsigned pf_max;       /* the most prefetches one access can issue */
	struct cache_out out;
};

int cache_init(struct cache *c, const struct sim_config *cfg);

/*
 * Make @c (built by cache_init()) the timed hierarchy of cpu.model overlap:
 * dirty lines, write-backs and @cfg's prefetchers (cache.prefetch.*). 0, or -1
 * on host OOM (cache_free() frees).
 */
int cache_init_timed(struct cache *c, const struct sim_config *cfg);
void cache_free(struct cache *c);

/*
 * Read the line holding @pa: returns the level that served it (CL_L1D, CL_L2,
 * CL_LLC, or CL_NR for DRAM) and adds its latency to *@cycles. Every level the
 * line missed in is filled (LRU), so the hierarchy behaves as mostly-inclusive
 * without back-invalidation.
 */
unsigned cache_access(struct cache *c, paddr_t pa, cycles_t *cycles);

/*
 * cache_access() of the timed hierarchy (c->timed): also marks the line dirty
 * if @write, writes back the dirty lines it evicts (c->out.writebacks), and
 * with @train (a data reference; a walk's read does not train) lets the
 * prefetchers see it and issue their prefetches, which fill their target
 * level now (c->out.pf: the core times them). Same return and *@cycles.
 */
unsigned cache_access_timed(struct cache *c, paddr_t pa, bool write, bool train, cycles_t *cycles);

/*
 * The stream prefetcher's decision for an access to line @line (line number,
 * not + 1): the lines to prefetch into @out (at most pf->degree), their number.
 * Exposed for the unit tests (tests/check_prefetch.c).
 */
unsigned cache_pf_train(struct cache_pf *pf, unsigned line_shift, uint64_t line, uint64_t *out);

/*
 * Every valid line in the set its number maps to, at most once per level; up to
 * 16 ways, each set's recency order a permutation of its ways with every valid
 * line more recent than every empty way; beyond, a use stamp no two ways of a
 * set share and no later than the level's clock, empty ways never stamped.
 * Aborts. (O(sets * ways^2): for tests, not the hot path.)
 */
void cache_check_invariants(const struct cache *c);

#endif
