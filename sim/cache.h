/*
 * cache.h - the data-cache hierarchy that serves page-walk reads (and, with
 * cache.data_refs, the trace's own data references): L1D, L2, LLC, then DRAM.
 */
#ifndef MMUSIM_CACHE_H
#define MMUSIM_CACHE_H

#include "config.h"
#include "types.h"

#define CACHE_WAY_NONE UINT32_MAX

struct cache_array {
	uint64_t *tag;   /* sets * ways: line number + 1; 0 = invalid */
	/*
	 * LRU as a per-set doubly linked list of ways, most recent first: the MRU way
	 * is probed before the scan and the victim is the list's tail, where scanning
	 * every way for the oldest use stamp cost 140 instructions per page-walk read
	 * on the miss-heavy bench trace (callgrind). Ways never become invalid again,
	 * and the list starts as ways - 1 ... 0, so fills take the lowest free way
	 * first, as the stamp scan did.
	 */
	uint32_t *newer, *older; /* sets * ways: the neighbouring way, CACHE_WAY_NONE at the ends */
	struct cache_ends {
		uint32_t newest, oldest;
	} *ends;                 /* per set */
	unsigned sets, ways, latency;
	uint64_t set_mask; /* sets - 1 if a power of two, else 0 */
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

#endif
