/*
 * cache.c - set-associative LRU data caches between the page walker and DRAM.
 *
 * A page walk's PTE reads are ordinary cacheable loads on Intel and AMD cores (the
 * page-miss handler reads through the L1D/L2; Intel SDM Vol. 3A §4.10.3 only says
 * paging structures may also be cached in the PSCs), so they compete with data.
 * Each level: sets x ways lines of cache.line bytes, true LRU (a recency list
 * per set, cache.h), latency from the config. A miss at every level costs cache.dram_latency.
 *
 * Leaves out: write-back traffic, prefetchers, MSHRs and overlap between walks
 * (one walker, serial reads), coherence, non-inclusive LLC victim behaviour.
 */
#include <stdlib.h>
#include <string.h>

#include "cache.h"

int cache_init(struct cache *c, const struct sim_config *cfg)
{
	memset(c, 0, sizeof(*c));
	c->line_shift = (unsigned)__builtin_ctz(cfg->line_size);
	c->dram_latency = cfg->dram_latency;
	for (int l = 0; l < CL_NR; l++) {
		struct cache_array *lv = &c->lv[l];
		const struct cache_cfg *cc = &cfg->cache[l];
		size_t n;

		if (!cc->size)
			continue;
		lv->present = true;
		lv->ways = cc->ways;
		lv->sets = (unsigned)(cc->size / ((uint64_t)cc->ways * cfg->line_size));
		lv->latency = cc->latency;
		lv->set_mask = (lv->sets & (lv->sets - 1)) == 0 ? lv->sets - 1 : 0;
		n = (size_t)lv->sets * lv->ways;
		/* zeroed = invalid (tags hold line + 1): calloc'd pages stay untouched until used */
		lv->tag = calloc(n, sizeof(*lv->tag));
		lv->newer = malloc(n * sizeof(*lv->newer));
		lv->older = malloc(n * sizeof(*lv->older));
		lv->ends = malloc(lv->sets * sizeof(*lv->ends));
		if (!lv->tag || !lv->newer || !lv->older || !lv->ends) {
			cache_free(c);
			return -1;
		}
		/* every set: ways - 1 newest ... 0 oldest, the first fill takes way 0 */
		for (size_t i = 0; i < n; i++) {
			unsigned w = (unsigned)(i % lv->ways);

			lv->older[i] = w ? w - 1 : CACHE_WAY_NONE;
			lv->newer[i] = w + 1 < lv->ways ? w + 1 : CACHE_WAY_NONE;
		}
		for (unsigned set = 0; set < lv->sets; set++)
			lv->ends[set] = (struct cache_ends){ lv->ways - 1, 0 };
	}
	return 0;
}

void cache_free(struct cache *c)
{
	for (int l = 0; l < CL_NR; l++) {
		free(c->lv[l].tag);
		free(c->lv[l].newer);
		free(c->lv[l].older);
		free(c->lv[l].ends);
	}
	memset(c, 0, sizeof(*c));
}

/* Make @way (not the newest) the newest of the set at @base. */
static inline void to_front(struct cache_array *lv, struct cache_ends *e, size_t base, uint32_t way)
{
	uint32_t n = lv->newer[base + way], o = lv->older[base + way];

	lv->older[base + n] = o;
	if (o == CACHE_WAY_NONE)
		e->oldest = n;
	else
		lv->newer[base + o] = n;
	lv->older[base + way] = e->newest;
	lv->newer[base + way] = CACHE_WAY_NONE;
	lv->newer[base + e->newest] = way;
	e->newest = way;
}

/* Look @line (line number + 1; 0 is an empty way) up in @lv; on a miss fill it (LRU). */
static bool level_access(struct cache_array *lv, uint64_t line)
{
	unsigned set = lv->set_mask || lv->sets == 1 ? (unsigned)(line & lv->set_mask)
						      : (unsigned)(line % lv->sets);
	size_t base = (size_t)set * lv->ways;
	struct cache_ends *e = &lv->ends[set];
	uint32_t w;
	bool hit;

	if (lv->tag[base + e->newest] == line) /* the MRU way: nothing to reorder */
		return true;
	for (w = 0; w < lv->ways; w++)
		if (lv->tag[base + w] == line)
			break;
	hit = w < lv->ways;
	if (!hit) { /* the oldest way (the lowest free one while any is free) */
		w = e->oldest;
		lv->tag[base + w] = line;
	}
	if (w != e->newest) /* (one way: it is the newest already) */
		to_front(lv, e, base, w);
	return hit;
}

unsigned cache_access(struct cache *c, paddr_t pa, cycles_t *cycles)
{
	uint64_t line = (pa >> c->line_shift) + 1;

	for (unsigned l = 0; l < CL_NR; l++) {
		struct cache_array *lv = &c->lv[l];

		if (!lv->present)
			continue;
		if (level_access(lv, line)) {
			*cycles += lv->latency;
			return l;
		}
	}
	*cycles += c->dram_latency;
	return CL_NR;
}
