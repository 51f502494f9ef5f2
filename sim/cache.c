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
#include "scan.h"
#include "util.h"

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
		lv->set_mod = (lv->sets & (lv->sets - 1)) != 0;
		n = (size_t)lv->sets * lv->ways;
		/* zeroed = invalid (tags hold line + 1): calloc'd pages stay untouched until used */
		/* SCAN_PAD: scan_ways_masked() reads 8 or 16 */
		lv->tag = zero_pages(n + SCAN_PAD, sizeof(*lv->tag));
		if (lv->ways <= CACHE_ORDER_WAYS) {
			uint64_t order0 = 0; /* ways - 1 most recent ... 0 least: fills take way 0 first */

			for (unsigned p = 0; p < lv->ways; p++)
				order0 |= (uint64_t)(lv->ways - 1 - p) << (4 * p);
			lv->scan_mask = scan_mask(lv->ways);
			lv->last_shift = 4 * (lv->ways - 1);
			lv->order_mask = lv->ways == 16 ? ~0ULL : (1ULL << (4 * lv->ways)) - 1;
			lv->order = malloc(lv->sets * sizeof(*lv->order));
			for (unsigned s = 0; lv->order && s < lv->sets; s++)
				lv->order[s] = order0;
		} else {
			lv->stamp = zero_pages(n, sizeof(*lv->stamp));
		}
		if (!lv->tag || (!lv->order && !lv->stamp)) {
			cache_free(c);
			return -1;
		}
	}
	return 0;
}

void cache_free(struct cache *c)
{
	for (int l = 0; l < CL_NR; l++) {
		size_t n = (size_t)c->lv[l].sets * c->lv[l].ways;

		zero_pages_free(c->lv[l].tag, n + SCAN_PAD, sizeof(*c->lv[l].tag));
		free(c->lv[l].order);
		zero_pages_free(c->lv[l].stamp, n, sizeof(*c->lv[l].stamp));
	}
	memset(c, 0, sizeof(*c));
}

/* The position (0 = most recent) of way @w in the recency order @o (SWAR: its lowest equal nibble). */
static inline unsigned order_pos(uint64_t o, unsigned w)
{
	const uint64_t ones = 0x1111111111111111ULL;
	uint64_t x = o ^ (w * ones);

	return (unsigned)__builtin_ctzll((x - ones) & ~x & (ones << 3)) >> 2;
}

/* More than CACHE_ORDER_WAYS ways: use stamps, the victim the first oldest (free ways are 0). */
static bool level_access_stamps(struct cache_array *lv, size_t base, uint64_t line)
{
	size_t victim = base;
	uint64_t oldest = UINT64_MAX;

	for (size_t i = base; i < base + lv->ways; i++) {
		if (lv->tag[i] == line) {
			lv->stamp[i] = ++lv->clock;
			return true;
		}
		if (lv->stamp[i] < oldest) {
			oldest = lv->stamp[i];
			victim = i;
		}
	}
	lv->tag[victim] = line;
	lv->stamp[victim] = ++lv->clock;
	return false;
}

/*
 * Look @line (line number + 1; 0 is an empty way) up in @lv; on a miss fill it
 * (LRU). @mru_first: try the set's most recent way before the scan -- the L1D's
 * reads repeat lines (a data reference stream, a walk's reads of one table line).
 * A lower level is reached after a miss above, where the MRU way is a coin toss
 * (1 in 4 at the miss-heavy bench trace's L2) and the branch, resolved only once
 * the set's order and tag are loaded, mispredicts often: without it that trace
 * runs 2 % faster (row (e) best of 15, twice: 225.8 -> 219.8 and 224.2 -> 220.3
 * ms) for 2.2 more instructions an update.
 */
static inline bool level_access(struct cache_array *lv, uint64_t line, bool mru_first)
{
	unsigned set = likely(!lv->set_mod) ? (unsigned)(line & lv->set_mask) : (unsigned)(line % lv->sets);
	size_t base = (size_t)set * lv->ways;
	uint64_t o;
	unsigned w, p;
	int sw;

	if (unlikely(!lv->order))
		return level_access_stamps(lv, base, line);
	o = lv->order[set];
	if (mru_first && lv->tag[base + (o & 15)] == line) /* the MRU way: nothing to reorder */
		return true;
	/*
	 * Every way compared, no early exit: where the line sits is data dependent, and
	 * an exit at a random way is a branch miss per read (the miss-heavy bench trace's
	 * walks hit L2 at any way). scan.h compares two ways per SSE2 instruction.
	 */
	sw = scan_ways_masked(lv->tag + base, lv->scan_mask, line);
	if (sw < 0) {
		/* the least recent way (the lowest free one while any is free) becomes the
		 * most recent: every other way moves down one position */
		w = (unsigned)(o >> lv->last_shift) & 15;
		lv->tag[base + w] = line;
		lv->order[set] = (o << 4 & lv->order_mask) | w;
		return false;
	}
	/* move w from position p to the front */
	w = (unsigned)sw;
	p = order_pos(o, w);
	lv->order[set] = (o & ((~0ULL << (4 * p)) << 4)) | (o & ((1ULL << (4 * p)) - 1)) << 4 | w;
	return true;
}

unsigned cache_access(struct cache *c, paddr_t pa, cycles_t *cycles)
{
	uint64_t line = (pa >> c->line_shift) + 1;

	for (unsigned l = 0; l < CL_NR; l++) {
		struct cache_array *lv = &c->lv[l];

		if (!lv->present)
			continue;
		if (level_access(lv, line, l == CL_L1D)) {
			*cycles += lv->latency;
			return l;
		}
	}
	*cycles += c->dram_latency;
	return CL_NR;
}

/* A set's packed recency order (ways <= CACHE_ORDER_WAYS): a permutation of its
 * ways, every valid line more recent than every empty way (fills take the oldest). */
static void check_order(const struct cache_array *lv, unsigned set)
{
	uint64_t ord = lv->order[set];
	unsigned seen = 0;
	bool empty_seen = false;

	for (unsigned k = 0; k < lv->ways; k++) {
		unsigned w = (unsigned)(ord >> (4 * k)) & 15;

		BUG_ON(w >= lv->ways || (seen & (1u << w)));
		seen |= 1u << w;
		if (!lv->tag[(size_t)set * lv->ways + w])
			empty_seen = true;
		else
			BUG_ON(empty_seen);
	}
}

void cache_check_invariants(const struct cache *c)
{
	for (unsigned l = 0; l < CL_NR; l++) {
		const struct cache_array *lv = &c->lv[l];
		bool packed;

		if (!lv->present)
			continue;
		BUG_ON(!lv->sets || !lv->ways);
		BUG_ON(lv->set_mask && lv->set_mask != lv->sets - 1);
		packed = lv->ways <= CACHE_ORDER_WAYS;
		for (unsigned set = 0; set < lv->sets; set++) {
			size_t base = (size_t)set * lv->ways;

			if (packed)
				check_order(lv, set);
			for (size_t i = base; i < base + lv->ways; i++) {
				uint64_t line = lv->tag[i];

				/* an empty way was never used; a line sits in its own set */
				BUG_ON(!packed && !line && lv->stamp[i]);
				if (!line)
					continue;
				BUG_ON(!packed && (!lv->stamp[i] || lv->stamp[i] > lv->clock));
				BUG_ON((lv->set_mask || lv->sets == 1 ? line & lv->set_mask
								      : line % lv->sets) != set);
				for (size_t j = base; j < i; j++) /* no line twice, LRU order total */
					BUG_ON(lv->tag[j] == line ||
					       (!packed && lv->tag[j] && lv->stamp[j] == lv->stamp[i]));
			}
		}
	}
}
