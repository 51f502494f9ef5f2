/*
 * cache.c - set-associative LRU data caches between the page walker and DRAM.
 *
 * A page walk's PTE reads are ordinary cacheable loads on Intel and AMD cores (the
 * page-miss handler reads through the L1D/L2; Intel SDM Vol. 3A §4.10.3 only says
 * paging structures may also be cached in the PSCs), so they compete with data.
 * Each level: sets x ways lines of cache.line bytes, true LRU (a recency list
 * per set, cache.h), latency from the config. A miss at every level costs cache.dram_latency.
 *
 * The timed hierarchy (cpu.model overlap with a prefetcher or a DRAM bandwidth:
 * c->timed; additive never sees it, so its counts are the demand-only ones they
 * were): each line also carries a dirty bit and a prefetched bit (CM_*). A store
 * marks its line dirty in the L1D; a dirty line evicted from a level is written
 * into the next level that holds it (marked dirty there), else back to DRAM (a
 * write-back: c->out.writebacks, whose transfer core.c puts on the DRAM bus).
 * Two stream prefetchers, after the hardware AMD's optimization guides describe
 * (family 19h guide 56665 as quoted by its readers: "the L1 data prefetchers
 * fetch lines into both the L1 data cache and the L2 cache, while the L2 data
 * prefetchers fetch lines into the L2"; its L1 and L2 stream prefetchers "use
 * history of memory access patterns to fetch additional sequential lines in
 * ascending or descending directions"): the L1D's trains on every data
 * reference, the L2's on every reference that reaches the L2 (an L1D miss or
 * an L1D prefetch). A stream is a 4 KiB physical page (the unit Intel's
 * streamer documents and the page a physical address can be followed in); two
 * steps in a row in one direction train it (Palacharla and Kessler's filter,
 * ISCA 1994: a stream is allocated on misses to consecutive lines); then each
 * access that advances it issues up to `degree` lines, keeping the stream up to
 * `distance` lines ahead of the access, never past the page. A prefetch fills
 * its target level (and those below it that missed) at once and marks it
 * prefetched there; the core times its arrival (c->out, core.c), and a demand
 * that finds the line before then waits for it. A prefetched line a demand (or
 * an L1D prefetch) uses counts as useful, once. Page-walk reads go through the
 * same lines but do not train the prefetchers.
 *
 * Leaves out: MSHRs and overlap between walks (one walker, serial reads),
 * coherence, non-inclusive LLC victim behaviour, the L1D's stride and region
 * prefetchers (they need the load's instruction address, which traces do not
 * all carry) and the L2's up/down one, prefetch throttling.
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

int cache_init_timed(struct cache *c, const struct sim_config *cfg)
{
	unsigned per = 1; /* prefetches a timed access can issue: L1D's, and L2's for each L2 access */

	c->timed = true;
	for (int i = 0; i < PF_NR; i++) {
		const struct prefetch_cfg *pc = &cfg->prefetch[i];
		struct cache_pf *pf = &c->pf[i];

		if (!pc->degree)
			continue;
		pf->degree = pc->degree;
		pf->distance = pc->distance;
		pf->nstreams = pc->streams;
		pf->s = calloc(pf->nstreams, sizeof(*pf->s));
		if (!pf->s)
			return -1;
	}
	c->pf_max = c->pf[PF_L1D].degree + (1 + c->pf[PF_L1D].degree) * c->pf[PF_L2].degree;
	c->out.pf = calloc(c->pf_max + per, sizeof(*c->out.pf));
	if (!c->out.pf)
		return -1;
	for (int l = 0; l < CL_NR; l++) {
		struct cache_array *lv = &c->lv[l];
		size_t n = (size_t)lv->sets * lv->ways;

		if (!lv->present)
			continue;
		lv->meta = calloc(n, sizeof(*lv->meta));
		if ((l == CL_L1D && c->pf[PF_L1D].degree) || (l == CL_L2 && c->pf[PF_L2].degree))
			lv->ready = calloc(n, sizeof(*lv->ready));
		if (!lv->meta || ((l == CL_L1D && c->pf[PF_L1D].degree) ||
				  (l == CL_L2 && c->pf[PF_L2].degree)) != !!lv->ready)
			return -1;
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
		free(c->lv[l].meta);
		free(c->lv[l].ready);
	}
	for (int i = 0; i < PF_NR; i++)
		free(c->pf[i].s);
	free(c->out.pf);
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

	if (unlikely(c->timed)) /* (cpu.model overlap with a prefetcher or a bandwidth) */
		return cache_access_timed(c, pa, false, false, cycles);

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

/* ------------------------------------------------------- the timed hierarchy */

/* The way of @line (number + 1) in its set of @lv, or -1; no recency update. */
static int way_of(const struct cache_array *lv, size_t base, uint64_t line)
{
	for (unsigned w = 0; w < lv->ways; w++)
		if (lv->tag[base + w] == line)
			return (int)w;
	return -1;
}

static size_t set_base(const struct cache_array *lv, uint64_t line)
{
	unsigned set = !lv->set_mod ? (unsigned)(line & lv->set_mask) : (unsigned)(line % lv->sets);

	return (size_t)set * lv->ways;
}

/*
 * level_access() of the timed hierarchy: the same LRU, and the slot (set base +
 * way) that holds @line after it; on a miss *@victim is the line it evicted
 * (0: none) and *@vmeta its bits. Out of line: overlap with a timed memory only.
 */
static bool level_touch(struct cache_array *lv, uint64_t line, size_t *slot, uint64_t *victim,
			uint8_t *vmeta)
{
	size_t base = set_base(lv, line);
	int w = way_of(lv, base, line);

	*victim = 0;
	if (w >= 0) {
		*slot = base + (size_t)w;
		if (lv->order) {
			uint64_t o = lv->order[base / lv->ways];
			unsigned p = order_pos(o, (unsigned)w);

			lv->order[base / lv->ways] = (o & ((~0ULL << (4 * p)) << 4)) |
						     (o & ((1ULL << (4 * p)) - 1)) << 4 | (unsigned)w;
		} else {
			lv->stamp[*slot] = ++lv->clock;
		}
		return true;
	}
	if (lv->order) {
		uint64_t o = lv->order[base / lv->ways];

		w = (int)((o >> lv->last_shift) & 15);
		lv->order[base / lv->ways] = (o << 4 & lv->order_mask) | (unsigned)w;
	} else {
		uint64_t oldest = UINT64_MAX;

		for (unsigned i = 0; i < lv->ways; i++)
			if (lv->stamp[base + i] < oldest) {
				oldest = lv->stamp[base + i];
				w = (int)i;
			}
		lv->stamp[base + (size_t)w] = ++lv->clock;
	}
	*slot = base + (size_t)w;
	*victim = lv->tag[*slot];
	*vmeta = lv->meta[*slot];
	lv->tag[*slot] = line;
	lv->meta[*slot] = 0;
	return false;
}

/* A dirty line (@line: its number + 1) left level @l: into the next level that holds it, else to DRAM. */
static void write_back(struct cache *c, unsigned l, uint64_t line)
{
	for (unsigned k = l + 1; k < CL_NR; k++) {
		struct cache_array *lv = &c->lv[k];
		size_t base;
		int w;

		if (!lv->present)
			continue;
		base = set_base(lv, line);
		w = way_of(lv, base, line);
		if (w >= 0) {
			lv->meta[base + (size_t)w] |= CM_DIRTY;
			return;
		}
	}
	c->out.writebacks++;
}

/* @line at level @l: hit or fill (a dirty victim written back); its slot. */
static bool touch(struct cache *c, unsigned l, uint64_t line, size_t *slot)
{
	uint64_t victim;
	uint8_t vmeta;
	bool hit = level_touch(&c->lv[l], line, slot, &victim, &vmeta);

	if (!hit && victim && (vmeta & CM_DIRTY))
		write_back(c, l, victim);
	return hit;
}

unsigned cache_pf_train(struct cache_pf *pf, unsigned line_shift, uint64_t line, uint64_t *out)
{
	unsigned shift = PAGE_SHIFT - line_shift; /* lines of a 4 KiB page: 1 << shift */
	uint64_t page = line >> shift, y, lim;
	struct cache_stream *s = NULL, *lru = &pf->s[0];
	unsigned n = 0;
	int d;

	for (unsigned i = 0; i < pf->nstreams; i++) {
		if (pf->s[i].used && pf->s[i].page == page) {
			s = &pf->s[i];
			break;
		}
		if (pf->s[i].used < lru->used)
			lru = &pf->s[i];
	}
	if (!s) { /* a new stream, in the least recently used entry (an empty one first) */
		*lru = (struct cache_stream){ .page = page, .last = line, .used = ++pf->clock };
		return 0;
	}
	s->used = ++pf->clock;
	if (line == s->last)
		return 0;
	d = line > s->last ? 1 : -1;
	if (d == s->dir) {
		s->run++;
	} else {
		s->dir = d;
		s->run = 1;
		s->next = line;
	}
	s->last = line;
	if (s->run < 2)
		return 0;
	/* from the first line ahead not yet issued, up to distance ahead, within the page */
	if (d > 0) {
		lim = line + pf->distance;
		if (lim >> shift != page)
			lim = ((page + 1) << shift) - 1;
		for (y = s->next > line ? s->next : line + 1; n < pf->degree && y <= lim; y++)
			out[n++] = y;
	} else {
		lim = line - pf->distance;
		if (line < pf->distance || lim >> shift != page)
			lim = page << shift;
		for (y = s->next < line ? s->next : line - 1; n < pf->degree && y >= lim && y < line; y--)
			out[n++] = y;
	}
	if (n)
		s->next = out[n - 1] + (uint64_t)(int64_t)d;
	return n;
}

static void pf_issue(struct cache *c, unsigned target, uint64_t line);

/*
 * An access at level CL_L2 by line @line (a reference that missed the L1D, or
 * an L1D prefetch): the L2's prefetcher trains on it and issues.
 */
static void l2_train(struct cache *c, uint64_t line)
{
	uint64_t ahead[64];
	unsigned n;

	if (!c->pf[PF_L2].degree)
		return;
	n = cache_pf_train(&c->pf[PF_L2], c->line_shift, line, ahead);
	for (unsigned i = 0; i < n; i++)
		pf_issue(c, CL_L2, ahead[i]);
}

/* A prefetch of @line (number) into level @target, unless it is there already. */
static void pf_issue(struct cache *c, unsigned target, uint64_t line)
{
	struct cache_array *tl = &c->lv[target];
	struct cache_pf_req *r;
	size_t slot, s2;
	unsigned src;
	double src_ready = 0;

	if (way_of(tl, set_base(tl, line + 1), line + 1) >= 0 || c->out.npf >= c->pf_max)
		return;
	touch(c, target, line + 1, &slot);
	tl->meta[slot] = CM_PREFETCHED;
	for (src = target + 1; src < CL_NR; src++) {
		struct cache_array *lv = &c->lv[src];

		if (!lv->present)
			continue;
		if (touch(c, src, line + 1, &s2)) {
			if (lv->ready && (lv->meta[s2] & CM_PREFETCHED)) { /* an L2 prefetch in flight, used */
				src_ready = lv->ready[s2];
				lv->meta[s2] &= (uint8_t)~CM_PREFETCHED;
				c->out.useful[1]++;
			}
			break;
		}
	}
	r = &c->out.pf[c->out.npf++];
	*r = (struct cache_pf_req){ .target = target, .src = src, .slot = slot, .src_ready = src_ready };
	if (target == CL_L1D)
		l2_train(c, line);
}

unsigned cache_access_timed(struct cache *c, paddr_t pa, bool write, bool train, cycles_t *cycles)
{
	uint64_t line = (pa >> c->line_shift) + 1;
	unsigned l, served = CL_NR;

	if (train) {
		c->out.npf = 0;
		c->out.hit_ready = 0;
		c->out.useful[0] = c->out.useful[1] = 0;
	}
	for (l = 0; l < CL_NR; l++) {
		struct cache_array *lv = &c->lv[l];
		size_t slot;
		bool hit;

		if (!lv->present)
			continue;
		hit = touch(c, l, line, &slot);
		if (hit && train && (lv->meta[slot] & CM_PREFETCHED)) {
			lv->meta[slot] &= (uint8_t)~CM_PREFETCHED;
			c->out.hit_ready = lv->ready[slot];
			c->out.useful[l == CL_L1D ? 0 : 1]++;
		}
		if (l == CL_L1D && write)
			lv->meta[slot] |= CM_DIRTY;
		if (hit) {
			served = l;
			break;
		}
	}
	*cycles += served < CL_NR ? c->lv[served].latency : c->dram_latency;
	if (train) {
		uint64_t ahead[64];
		unsigned n = 0;

		if (c->pf[PF_L1D].degree)
			n = cache_pf_train(&c->pf[PF_L1D], c->line_shift, line - 1, ahead);
		if (served != CL_L1D && c->lv[CL_L1D].present)
			l2_train(c, line - 1);
		for (unsigned i = 0; i < n; i++)
			pf_issue(c, CL_L1D, ahead[i]);
	}
	return served;
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
