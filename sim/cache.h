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
};

struct cache {
	struct cache_array lv[CL_NR];
	unsigned line_shift;
	unsigned dram_latency;
};

int cache_init(struct cache *c, const struct sim_config *cfg);
void cache_free(struct cache *c);

/*
 * Read the line holding @pa: returns the level that served it (CL_L1D, CL_L2,
 * CL_LLC, or CL_NR for DRAM) and adds its latency to *@cycles. Every level the
 * line missed in is filled (LRU), so the hierarchy behaves as mostly-inclusive
 * without back-invalidation.
 */
unsigned cache_access(struct cache *c, paddr_t pa, cycles_t *cycles);

/*
 * Every valid line in the set its number maps to, at most once per level; up to
 * 16 ways, each set's recency order a permutation of its ways with every valid
 * line more recent than every empty way; beyond, a use stamp no two ways of a
 * set share and no later than the level's clock, empty ways never stamped.
 * Aborts. (O(sets * ways^2): for tests, not the hot path.)
 */
void cache_check_invariants(const struct cache *c);

#endif
