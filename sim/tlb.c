/*
 * tlb.c - set-associative translation arrays, their replacement policies, and the
 * L1/STLB hierarchy of DESIGN.md ("Counting rules").
 *
 * Models: per array `sets` x `ways` entries, set = key mod sets (sets need not be
 * a power of two), replacement lru (true LRU: a per-set list in use order), fifo
 * (the same list in fill order),
 * plru (tree pseudo-LRU over the ways rounded up to a power of two; leaves past
 * `ways` are never chosen) and random (seeded xorshift64*). A fill always takes a
 * free way first (lowest index), as DynamoRIO's caching_device and hardware do.
 *
 * STLB placement when several arrays hold a page size (Golden Cove: two arrays both
 * hold 4K): the first such array whose target set has a free way, else the array
 * picked by the page number modulo the number of candidates. Real placement is
 * undocumented; this rule is deterministic and uses every array's capacity.
 *
 * PCIDs (SDM Vol. 3A §4.10.1): every entry is tagged with the PCID current
 * when it was filled, kept in its key relative to the current PCID (tlb.h:
 * TLB_PCID_SHIFT); a lookup matches only the current PCID's entries, and the
 * other PCIDs' entries keep their ways and their place in the replacement
 * order until a fill evicts them or an invalidation of their PCID drops them.
 *
 * Coalescing (tlb.coalesce.*): an array with coal_shift > 0 also holds
 * coalesced entries, each mapping an aligned run of 1 << coal_shift 4K pages
 * whose frames are consecutive and start at a run-aligned frame, with equal
 * permissions; it takes one way, is keyed by the run's number (tlb.h
 * TLB_COAL) and indexed by it, as a page of a larger size would be. Whether a
 * run qualifies is the walker's business (mmu.c reads the page table); here a
 * lookup (tlb_array_lookup_coal()) probes the run's key, then the page's own,
 * so a run's entry stays in use and the page entries it made redundant (filled
 * before the run was whole) age out; and any invalidation that covers a page
 * of a run drops the run's entry. Sources: AMD's "PTE
 * coalescing" (Zen 2 and later, four 4K pages as one 16K entry in the L1 and
 * L2 DTLBs: Linux tools/perf/pmu-events/arch/x86/amdzen4/ and amdzen5/
 * load-store.json, event 0x45 umasks 0x02 and 0x20, "A coalesced page is a
 * 16k page created from four adjacent 4k pages"); Arm's contiguous bit (Arm
 * ARM D8.6.1, "The Contiguous bit": sixteen 4K entries, 64K-aligned in VA and
 * PA, which the TLB may cache as one).
 *
 * Leaves out: the global bit (mmusim models user pages only, all non-global;
 * kernel mappings are not cached), split load/store L1 arrays (Ice Lake's 16-entry store DTLB), prefetching, and the
 * latency of a lookup (charged by mmu.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tlb.h"

/* @set's packed order with @n ways listed newest first in @w[], the rest (invalid) after. */
static void order_set(struct tlb_array *a, unsigned set, const unsigned *w, unsigned n)
{
	uint64_t o = 0;
	unsigned p = 0;
	bool listed[TLB_ORDER_WAYS] = { false };

	for (; p < n; p++) {
		o |= (uint64_t)w[p] << (4 * p);
		listed[w[p]] = true;
	}
	/* the invalid ways oldest, the lowest index the oldest of all */
	for (unsigned v = a->ways; v-- > 0;)
		if (!listed[v])
			o |= (uint64_t)v << (4 * p++);
	a->order[set] = o;
}

/* Set @set's recency list to "every way invalid": ways - 1 newest ... 0 oldest. */
static void list_reset(struct tlb_array *a, unsigned set)
{
	unsigned base = set * a->ways;

	if (a->order) {
		order_set(a, set, NULL, 0);
		return;
	}
	for (unsigned w = 0; w < a->ways; w++) {
		a->older[base + w] = w ? (uint16_t)(w - 1) : TLB_WAY_NONE;
		a->newer[base + w] = w + 1 < a->ways ? (uint16_t)(w + 1) : TLB_WAY_NONE;
	}
	a->ends[set] = (struct tlb_ends){ (uint16_t)(a->ways - 1), 0 };
}

/* Take @way out of its set's list. */
static void list_unlink(struct tlb_array *a, unsigned set, unsigned way)
{
	unsigned base = set * a->ways, n = a->newer[base + way], o = a->older[base + way];

	if (n == TLB_WAY_NONE)
		a->ends[set].newest = (uint16_t)o;
	else
		a->older[base + n] = (uint16_t)o;
	if (o == TLB_WAY_NONE)
		a->ends[set].oldest = (uint16_t)n;
	else
		a->newer[base + o] = (uint16_t)n;
}

/*
 * @way (just made invalid) joins the invalid ways at the oldest end of its set's
 * list, in index order (lowest oldest): the next fill takes the lowest free way.
 */
static void list_to_free(struct tlb_array *a, unsigned set, unsigned way)
{
	unsigned base = set * a->ways, o = TLB_WAY_NONE, n;

	if (a->order) { /* the valid ways keep their order; the invalid ones follow */
		unsigned keep[TLB_ORDER_WAYS], nk = 0;

		for (unsigned p = 0; p < a->ways; p++) {
			unsigned w = (unsigned)(a->order[set] >> (4 * p)) & 15;

			if (w != way && a->tag[base + w] != TLB_KEY_NONE)
				keep[nk++] = w;
		}
		order_set(a, set, keep, nk);
		return;
	}
	list_unlink(a, set, way);
	for (n = a->ends[set].oldest; n != TLB_WAY_NONE && a->tag[base + n] == TLB_KEY_NONE && n < way;
	     n = a->newer[base + n])
		o = n;
	/* between o (older) and n (newer) */
	a->older[base + way] = (uint16_t)o;
	a->newer[base + way] = (uint16_t)n;
	if (o == TLB_WAY_NONE)
		a->ends[set].oldest = (uint16_t)way;
	else
		a->newer[base + o] = (uint16_t)way;
	if (n == TLB_WAY_NONE)
		a->ends[set].newest = (uint16_t)way;
	else
		a->older[base + n] = (uint16_t)way;
}

static inline bool has_list(const struct tlb_array *a)
{
	return a->policy == REPL_LRU || a->policy == REPL_FIFO;
}

int tlb_array_init(struct tlb_array *a, unsigned entries, unsigned ways,
		   enum repl_policy policy, uint64_t seed)
{
	size_t n;

	memset(a, 0, sizeof(*a));
	a->policy = policy;
	a->rng = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
	if (!a->rng)
		a->rng = 1;
	if (!entries) {
		/* an absent array: one empty set so probes stay in bounds */
		a->sets = 1;
		a->ways = 0;
		a->mru = calloc(1, sizeof(*a->mru));
		a->mru_e = malloc(sizeof(*a->mru_e));
		if (!a->mru || !a->mru_e)
			return -1;
		a->mru_e[0].tag = TLB_KEY_NONE;
		return 0;
	}
	BUG_ON(!ways || entries % ways || ways > 65535);
	a->ways = ways;
	a->sets = entries / ways;
	a->set_mask = (a->sets & (a->sets - 1)) == 0 ? a->sets - 1 : 0;
	a->set_mod = (a->sets & (a->sets - 1)) != 0;
	a->scan_mask = ways <= 16 ? scan_mask(ways) : 0;
	n = (size_t)entries;
	if (a->sets == 1 && ways >= TLB_HASH_MIN_WAYS) {
		unsigned slots = 1, bits = 0;

		while (slots < 16 * ways) { /* at most a sixteenth full: clusters of one */
			slots <<= 1;
			bits++;
		}
		a->hash_mask = slots - 1;
		a->hash_shift = 64 - bits;
		a->hash = malloc(slots * sizeof(*a->hash));
		a->home = malloc(ways * sizeof(*a->home));
		a->at = malloc(ways * sizeof(*a->at));
		if (!a->hash || !a->home || !a->at) {
			tlb_array_free(a);
			return -1;
		}
		memset(a->hash, 0xff, slots * sizeof(*a->hash));
	}
	a->tag = malloc((n + SCAN_PAD) * sizeof(*a->tag)); /* SCAN_PAD: scan_ways_masked() reads up to 16 ways */
	if (has_list(a) && ways <= TLB_ORDER_WAYS) {
		a->order = malloc(a->sets * sizeof(*a->order));
		a->order_mask = ways == 16 ? ~0ULL : (1ULL << (4 * ways)) - 1;
		a->last_shift = 4 * (ways - 1);
	} else if (has_list(a)) {
		a->newer = malloc(n * sizeof(*a->newer));
		a->older = malloc(n * sizeof(*a->older));
		a->ends = malloc(a->sets * sizeof(*a->ends));
	}
	a->payload = calloc(n, sizeof(*a->payload));
	a->mru = calloc(a->sets, sizeof(*a->mru));
	a->mru_e = calloc(a->sets, sizeof(*a->mru_e));
	if (policy == REPL_PLRU) {
		a->plru_leaves = 1;
		while (a->plru_leaves < ways)
			a->plru_leaves <<= 1;
		a->plru = calloc((size_t)a->sets * a->plru_leaves, 1);
	}
	if (!a->tag || (has_list(a) && !a->order && (!a->newer || !a->older || !a->ends)) ||
	    (has_list(a) && ways <= TLB_ORDER_WAYS && !a->order) || !a->payload || !a->mru || !a->mru_e ||
	    (policy == REPL_PLRU && !a->plru)) {
		tlb_array_free(a);
		return -1;
	}
	for (size_t i = 0; i < n + SCAN_PAD; i++)
		a->tag[i] = TLB_KEY_NONE;
	for (unsigned s = 0; s < a->sets; s++) {
		a->mru_e[s].tag = TLB_KEY_NONE;
		if (has_list(a))
			list_reset(a, s);
	}
	return 0;
}

void tlb_array_free(struct tlb_array *a)
{
	free(a->tag);
	free(a->hash);
	free(a->home);
	free(a->at);
	free(a->newer);
	free(a->older);
	free(a->ends);
	free(a->order);
	free(a->payload);
	free(a->mru_e);
	free(a->mru);
	free(a->plru);
	memset(a, 0, sizeof(*a));
}

/*
 * Tree PLRU: node i (1-based heap order, root 1) has children 2i and 2i+1; its bit
 * says which half the next victim comes from (0: left, 1: right). A use points
 * every node on the way's path away from it.
 */
void tlb_array_plru_touch(struct tlb_array *a, unsigned set, unsigned way)
{
	uint8_t *bits = a->plru + (size_t)set * a->plru_leaves;
	unsigned node = a->plru_leaves + way; /* leaf index in heap order */

	while (node > 1) {
		unsigned parent = node >> 1;

		bits[parent] = (node & 1) ? 0 : 1; /* we came from the right: point left */
		node = parent;
	}
}

static unsigned plru_victim(const struct tlb_array *a, unsigned set)
{
	const uint8_t *bits = a->plru + (size_t)set * a->plru_leaves;
	unsigned node = 1;

	while (node < a->plru_leaves) {
		unsigned child = 2 * node + bits[node];
		unsigned first_leaf = child, span = 1;

		/* the subtree under child covers leaves [first_leaf, first_leaf + span) */
		while (first_leaf < a->plru_leaves) {
			first_leaf <<= 1;
			span <<= 1;
		}
		if (first_leaf - a->plru_leaves >= a->ways)
			child ^= 1; /* that subtree holds no real way */
		node = child;
	}
	return node - a->plru_leaves;
}

static uint64_t xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

long tlb_array_probe(const struct tlb_array *a, uint64_t key)
{
	unsigned set;
	long w;

	if (!a->nr_valid)
		return -1;
	set = tlb_set_of(a, key);
	w = tlb_array_find(a, set, key);
	return w < 0 ? -1 : (long)(set * a->ways) + w;
}

bool tlb_array_set_has_room(const struct tlb_array *a, uint64_t key)
{
	unsigned set, base;

	if (!a->ways)
		return false;
	set = tlb_set_of(a, key);
	base = set * a->ways;
	if (a->order) /* invalid ways are the oldest */
		return a->tag[base + ((a->order[set] >> a->last_shift) & 15)] == TLB_KEY_NONE;
	if (has_list(a))
		return a->tag[base + a->ends[set].oldest] == TLB_KEY_NONE;
	for (unsigned w = 0; w < a->ways; w++)
		if (a->tag[base + w] == TLB_KEY_NONE)
			return true;
	return false;
}

uint64_t tlb_array_fill_slow(struct tlb_array *a, uint64_t key, uint64_t payload)
{
	unsigned set, base, victim = 0;
	uint64_t old;

	if (!a->ways)
		return TLB_KEY_NONE;
	if (a->hash && a->ends) /* fully associative, lru or fifo: the list's oldest */
		return tlb_fill_fa_list(a, key, payload);
	set = tlb_set_of(a, key);
	base = set * a->ways;
	if (a->order) { /* with a hash index (the inline part takes the others) */
		uint64_t o = a->order[set];

		victim = (unsigned)(o >> a->last_shift) & 15;
		a->order[set] = ((o << 4) & a->order_mask) | victim;
	} else if (has_list(a)) {
		/* the lowest free way if any (the oldest end), else the oldest */
		struct tlb_ends *e = &a->ends[set];
		unsigned n;

		victim = e->oldest;
		n = a->newer[base + victim];
		if (n != TLB_WAY_NONE) { /* more than one way: the oldest becomes the newest */
			a->older[base + n] = TLB_WAY_NONE;
			e->oldest = (uint16_t)n;
			a->older[base + victim] = e->newest;
			a->newer[base + victim] = TLB_WAY_NONE;
			a->newer[base + e->newest] = (uint16_t)victim;
			e->newest = (uint16_t)victim;
		}
	} else {
		for (victim = 0; victim < a->ways; victim++)
			if (a->tag[base + victim] == TLB_KEY_NONE)
				break;
		if (victim == a->ways)
			victim = a->policy == REPL_PLRU ? plru_victim(a, set)
							: (unsigned)(xorshift64s(&a->rng) % a->ways);
		if (a->policy == REPL_PLRU)
			tlb_array_plru_touch(a, set, victim);
	}
	old = a->tag[base + victim];
	if (old == TLB_KEY_NONE)
		a->nr_valid++;
	if (unlikely(a->hash)) {
		if (old != TLB_KEY_NONE)
			tlb_hash_del(a, victim);
		a->tag[victim] = key;
		tlb_hash_add(a, victim);
	}
	a->tag[base + victim] = key;
	a->payload[base + victim] = payload;
	a->mru[set] = (uint16_t)victim;
	a->mru_e[set] = (struct tlb_mru){ key, payload };
	return old;
}

bool tlb_array_lookup_coal(struct tlb_array *a, uint64_t key, uint64_t *pfn, bool *coal)
{
	long e;

	if (!a->nr_valid)
		return false;
	e = tlb_array_lookup(a, tlb_coal_key(a, key)); /* the run's entry first (tlb.h) */
	if (e >= 0) {
		*coal = true;
		*pfn = a->payload[e] + ((key >> a->idx_shift) & ((1ULL << a->coal_shift) - 1));
		return true;
	}
	*coal = false;
	e = tlb_array_lookup(a, key);
	if (e < 0)
		return false;
	*pfn = a->payload[e];
	return true;
}

uint64_t tlb_array_fill_coal(struct tlb_array *a, uint64_t key, uint64_t pfn, bool coal)
{
	uint64_t off = (key >> a->idx_shift) & ((1ULL << a->coal_shift) - 1);

	if (!coal || !a->ways)
		return tlb_array_fill(a, key, pfn);
	return tlb_array_fill(a, tlb_coal_key(a, key), pfn - off);
}

/*
 * For a key of a coalescing array: its plain key (PCID bits and TLB_COAL off)
 * and the first and last 4K page numbers (>> @shift of the key) it covers.
 */
static inline uint64_t coal_span(const struct tlb_array *a, uint64_t k, uint64_t *last)
{
	uint64_t p = k & ~(TLB_PCID_MASK | TLB_COAL);

	if (!(k & TLB_COAL)) {
		*last = p;
		return p;
	}
	p = (((p >> a->idx_shift) << a->coal_shift) << a->idx_shift) | (p & ((1ULL << a->idx_shift) - 1));
	*last = p + (((1ULL << a->coal_shift) - 1) << a->idx_shift);
	return p;
}

static void drop(struct tlb_array *a, size_t i)
{
	unsigned set = (unsigned)(i / a->ways), way = (unsigned)(i % a->ways);

	if (a->mru[set] == way)
		a->mru_e[set].tag = TLB_KEY_NONE;
	if (a->hash)
		tlb_hash_del(a, way);
	if (a->count_low2)
		a->nr_low2[a->tag[i] & 3]--;
	a->tag[i] = TLB_KEY_NONE;
	if (has_list(a))
		list_to_free(a, set, way);
	a->nr_valid--;
	a->invalidations++;
}

bool tlb_array_invalidate(struct tlb_array *a, uint64_t key)
{
	long i = tlb_array_probe(a, key);

	if (i < 0)
		return false;
	drop(a, (size_t)i);
	return true;
}

unsigned tlb_array_invalidate_range(struct tlb_array *a, uint64_t lo, uint64_t hi, unsigned shift)
{
	unsigned n = 0;
	size_t total = (size_t)a->sets * a->ways;

	if (!a->nr_valid || hi < lo)
		return 0;
	/* few keys: probe each; many: sweep the array once */
	if (!shift && hi - lo < total) {
		for (uint64_t k = lo; k <= hi; k++)
			n += tlb_array_invalidate(a, k);
		if (a->coal_shift) /* the runs holding a page of the range */
			for (uint64_t r = lo >> a->coal_shift; r <= hi >> a->coal_shift; r++)
				n += tlb_array_invalidate(a, r | TLB_COAL);
		return n;
	}
	for (size_t i = 0; i < total; i++) {
		uint64_t k = a->tag[i], end = k;

		if (k != TLB_KEY_NONE && a->coal_shift && (k & TLB_COAL) && !(k & TLB_PCID_MASK)) {
			k = coal_span(a, k, &end); /* overlaps [lo, hi] */
			if ((end >> shift) >= lo && (k >> shift) <= hi) {
				drop(a, i);
				n++;
			}
			continue;
		}
		if (k != TLB_KEY_NONE && (k >> shift) >= lo && (k >> shift) <= hi) {
			drop(a, i);
			n++;
		}
	}
	return n;
}

unsigned tlb_array_flush(struct tlb_array *a)
{
	unsigned n = a->nr_valid;
	size_t total = (size_t)a->sets * a->ways;

	if (!n)
		return 0;
	for (size_t i = 0; i < total; i++)
		a->tag[i] = TLB_KEY_NONE;
	if (a->hash)
		memset(a->hash, 0xff, (a->hash_mask + 1) * sizeof(*a->hash));
	for (unsigned s = 0; s < a->sets; s++) {
		a->mru_e[s].tag = TLB_KEY_NONE;
		if (has_list(a))
			list_reset(a, s);
	}
	a->nr_valid = 0;
	memset(a->nr_low2, 0, sizeof(a->nr_low2));
	a->invalidations += n;
	return n;
}

unsigned tlb_array_retag(struct tlb_array *a, uint64_t x)
{
	size_t total = (size_t)a->sets * a->ways;

	if (!a->nr_valid || !x)
		return a->nr_valid;
	for (size_t i = 0; i < total; i++)
		if (a->tag[i] != TLB_KEY_NONE)
			a->tag[i] ^= x;
	for (unsigned s = 0; s < a->sets; s++)
		if (a->mru_e[s].tag != TLB_KEY_NONE)
			a->mru_e[s].tag ^= x;
	if (a->hash) { /* the keys changed: index them again */
		memset(a->hash, 0xff, (a->hash_mask + 1) * sizeof(*a->hash));
		for (unsigned w = 0; w < a->ways; w++)
			if (a->tag[w] != TLB_KEY_NONE)
				tlb_hash_add(a, w);
	}
	return a->nr_valid;
}

unsigned tlb_array_flush_tag(struct tlb_array *a, uint64_t tag, uint64_t lo, uint64_t hi, int ps)
{
	size_t total = (size_t)a->sets * a->ways;
	unsigned n = 0;

	if (!a->nr_valid)
		return 0;
	for (size_t i = 0; i < total; i++) {
		uint64_t k = a->tag[i], p;

		if (k == TLB_KEY_NONE || (k & TLB_PCID_MASK) != tag)
			continue;
		if (lo <= hi) {
			uint64_t last;

			p = coal_span(a, k, &last);
			if (ps >= 0) {
				if ((p & 3) != (uint64_t)ps)
					continue;
				p >>= 2;
				last >>= 2;
			}
			if (last < lo || p > hi)
				continue;
		}
		drop(a, i);
		n++;
	}
	return n;
}

void tlb_array_for_each(const struct tlb_array *a,
			void (*fn)(void *ctx, uint64_t key, uint64_t payload), void *ctx)
{
	size_t total = (size_t)a->sets * a->ways;

	for (size_t i = 0; i < total; i++)
		if (a->tag[i] != TLB_KEY_NONE)
			fn(ctx, a->tag[i], a->payload[i]);
}

/*
 * @set's list holds every way once, its links agree both ways, the valid ways come
 * first and the invalid ones follow in falling index order (the lowest oldest);
 * under lru a valid MRU is the newest (mmu.h skips touching it again).
 */
static void check_list(const struct tlb_array *a, unsigned set)
{
	unsigned base = set * a->ways, seen = 0, prev = TLB_WAY_NONE;
	bool invalid = false;

	if (a->order) { /* the same rules for the packed order */
		uint64_t o = a->order[set];

		BUG_ON(o & ~a->order_mask);
		BUG_ON(a->policy == REPL_LRU && a->tag[base + a->mru[set]] != TLB_KEY_NONE &&
		       (o & 15) != a->mru[set]);
		for (unsigned p = 0; p < a->ways; p++) {
			unsigned w = (unsigned)(o >> (4 * p)) & 15;

			BUG_ON(w >= a->ways || (seen & (1u << w)));
			seen |= 1u << w;
			if (a->tag[base + w] == TLB_KEY_NONE) {
				BUG_ON(invalid && w > prev);
				invalid = true;
			} else {
				BUG_ON(invalid);
			}
			prev = w;
		}
		return;
	}

	BUG_ON(a->policy == REPL_LRU && a->tag[base + a->mru[set]] != TLB_KEY_NONE &&
	       a->ends[set].newest != a->mru[set]);
	for (unsigned w = a->ends[set].newest; w != TLB_WAY_NONE; w = a->older[base + w]) {
		BUG_ON(w >= a->ways || ++seen > a->ways);
		BUG_ON(a->newer[base + w] != prev);
		if (a->tag[base + w] == TLB_KEY_NONE) {
			BUG_ON(invalid && w > prev);
			invalid = true;
		} else {
			BUG_ON(invalid); /* a valid way older than an invalid one */
		}
		prev = w;
	}
	BUG_ON(seen != a->ways || a->ends[set].oldest != prev);
}

void tlb_array_check_invariants(const struct tlb_array *a)
{
	unsigned valid = 0;

	for (unsigned s = 0; s < a->sets; s++) {
		unsigned base = s * a->ways;

		BUG_ON(a->ways && a->mru[s] >= a->ways);
		BUG_ON(a->ways && a->mru_e[s].tag != a->tag[base + a->mru[s]]);
		BUG_ON(a->ways && a->mru_e[s].tag != TLB_KEY_NONE &&
		       a->mru_e[s].payload != a->payload[base + a->mru[s]]);
		for (unsigned w = 0; w < a->ways; w++) {
			uint64_t k = a->tag[base + w];

			if (k == TLB_KEY_NONE)
				continue;
			valid++;
			/* an entry of another PCID sits in the set of its plain key */
			BUG_ON(tlb_set_of(a, k & ~TLB_PCID_MASK) != s);
			for (unsigned v = w + 1; v < a->ways; v++)
				BUG_ON(a->tag[base + v] == k);
		}
		if (has_list(a) && a->ways)
			check_list(a, s);
	}
	BUG_ON(valid != a->nr_valid);
	if (a->count_low2) {
		unsigned low2[4] = { 0 };

		for (size_t i = 0; i < (size_t)a->sets * a->ways; i++)
			if (a->tag[i] != TLB_KEY_NONE)
				low2[a->tag[i] & 3]++;
		for (int k = 0; k < 4; k++)
			BUG_ON(low2[k] != a->nr_low2[k]);
	}
	if (a->hash) { /* every valid way indexed once and findable, nothing else */
		unsigned indexed = 0;

		for (unsigned h = 0; h <= a->hash_mask; h++)
			if (a->hash[h] != TLB_WAY_NONE) {
				BUG_ON(a->hash[h] >= a->ways || a->tag[a->hash[h]] == TLB_KEY_NONE);
				indexed++;
			}
		BUG_ON(indexed != valid);
		for (unsigned w = 0; w < a->ways; w++)
			BUG_ON(a->tag[w] != TLB_KEY_NONE &&
			       (tlb_array_find(a, 0, a->tag[w]) != (long)w || a->hash[a->at[w]] != w ||
				a->home[w] != tlb_hash_of(a, a->tag[w])));
	}
}

int tlb_init(struct tlb *t, const struct sim_config *c)
{
	uint64_t seed = c->seed;

	memset(t, 0, sizeof(*t));
	for (int ps = 0; ps < PS_NR; ps++) {
		if (tlb_array_init(&t->l1[SIDE_I][ps], c->l1i[ps].entries, c->l1i[ps].ways,
				   c->policy, seed++) ||
		    tlb_array_init(&t->l1[SIDE_D][ps], c->l1d[ps].entries, c->l1d[ps].ways,
				   c->policy, seed++))
			goto fail;
	}
	t->nr_stlb = c->nr_stlb;
	for (unsigned i = 0; i < c->nr_stlb; i++) {
		if (tlb_array_init(&t->stlb[i], c->stlb[i].entries, c->stlb[i].ways, c->policy, seed++))
			goto fail;
		t->stlb[i].idx_shift = 2; /* keys carry the page size in their low bits */
		t->stlb_pages[i] = c->stlb[i].entries ? c->stlb[i].pages : 0;
		/* counts by size only where there is a choice of sizes */
		t->stlb[i].count_low2 = __builtin_popcount(t->stlb_pages[i]) > 1;
		t->stlb_sizes |= t->stlb_pages[i];
		for (int ps = 0; ps < PS_NR; ps++)
			if (t->stlb_pages[i] & (1u << ps)) {
				t->probe[t->nr_probe++] = (struct tlb_probe){ (uint8_t)i, (uint8_t)ps };
				t->cand[ps][t->nr_cand[ps]++] = (uint8_t)i;
			}
	}
	/* coalescing (tlb.coalesce.*): the 4K L1 arrays, the STLB arrays holding 4K */
	/* not under virt.mode nested: a run's host frames would need both tables (DESIGN.md) */
	t->coal_shift = c->virt.mode == VIRT_NESTED ? 0 : tlb_coalesce_shift(c->coalesce);
	if (c->coal_l1i)
		t->l1[SIDE_I][PS_4K].coal_shift = t->coal_shift;
	if (c->coal_l1d)
		t->l1[SIDE_D][PS_4K].coal_shift = t->coal_shift;
	for (unsigned i = 0; i < c->nr_stlb && c->coal_stlb && t->coal_shift; i++)
		if (t->stlb_pages[i] & (1u << PS_4K))
			t->stlb[i].coal_shift = t->coal_shift;
	if (t->nr_probe == 1) {
		t->stlb1 = &t->stlb[t->probe[0].arr];
		t->stlb1_ps = (enum page_size)t->probe[0].ps;
	}
	/* a level without 1G entries caches a 1G page as its largest size's fracture */
	for (int side = 0; side < 2; side++)
		t->l1_frac_1g[side] = t->l1[side][PS_1G].ways ? PS_1G
				      : t->l1[side][PS_2M].ways ? PS_2M
				      : t->l1[side][PS_4K].ways ? PS_4K : PS_1G;
	t->stlb_frac_1g = t->stlb_sizes & (1u << PS_1G) ? PS_1G
			  : t->stlb_sizes & (1u << PS_2M) ? PS_2M
			  : t->stlb_sizes & (1u << PS_4K) ? PS_4K : PS_1G;
	return 0;
fail:
	tlb_free(t);
	return -1;
}

void tlb_free(struct tlb *t)
{
	for (int ps = 0; ps < PS_NR; ps++) {
		tlb_array_free(&t->l1[SIDE_I][ps]);
		tlb_array_free(&t->l1[SIDE_D][ps]);
	}
	for (unsigned i = 0; i < STLB_MAX_ARRAYS; i++)
		tlb_array_free(&t->stlb[i]);
}

bool tlb_stlb_lookup_slow(struct tlb *t, vaddr_t va, enum page_size *ps, pfn_t *pfn)
{
	/* each array in order, each size it holds in order (an empty array misses at once) */
	for (unsigned j = 0; j < t->nr_probe; j++) {
		struct tlb_array *a = &t->stlb[t->probe[j].arr];
		enum page_size s = (enum page_size)t->probe[j].ps;
		long e;

		if (a->count_low2 && !a->nr_low2[s]) /* none of that size: a miss, no change */
			continue;
		e = tlb_array_lookup(a, tlb_stlb_key(va, s));
		if (e >= 0) {
			*ps = s;
			*pfn = a->payload[e];
			return true;
		}
	}
	return false;
}

/* tlb_array_fill() for an STLB array, keeping its counts by page size. */
static void stlb_array_fill(struct tlb_array *a, uint64_t key, pfn_t pfn)
{
	uint64_t old = tlb_array_fill(a, key, pfn);

	if (!a->count_low2)
		return;
	a->nr_low2[key & 3]++;
	if (old != TLB_KEY_NONE)
		a->nr_low2[old & 3]--;
}

void tlb_stlb_fill_slow(struct tlb *t, vaddr_t va, enum page_size ps, pfn_t pfn)
{
	uint64_t key = tlb_stlb_key(va, ps);
	const uint8_t *cand = t->cand[ps];
	unsigned n = t->nr_cand[ps];

	if (!n && ps == PS_1G && t->stlb_frac_1g != PS_1G) { /* no 1G entries: the fracture */
		t->fractured = true;
		tlb_stlb_fill(t, va, t->stlb_frac_1g, tlb_frac_pfn(va, pfn, t->stlb_frac_1g));
		return;
	}
	if (n <= 1) { /* one candidate: it takes the fill, room or not */
		if (n)
			stlb_array_fill(&t->stlb[cand[0]], key, pfn);
		return;
	}
	for (unsigned j = 0; j < n; j++)
		if (tlb_array_set_has_room(&t->stlb[cand[j]], key)) {
			stlb_array_fill(&t->stlb[cand[j]], key, pfn);
			return;
		}
	stlb_array_fill(&t->stlb[cand[(va >> page_shift_of(ps)) % n]], key, pfn);
}

bool tlb_stlb_fill_4k(struct tlb *t, vaddr_t va, pfn_t pfn, bool coal)
{
	uint64_t key = tlb_stlb_key(va, PS_4K), old;
	unsigned n = t->nr_cand[PS_4K], pick;
	struct tlb_array *a;

	if (!n)
		return false;
	/* tlb_stlb_fill_slow()'s placement: the first with room, else by page number */
	pick = t->cand[PS_4K][(va >> PAGE_SHIFT) % n];
	for (unsigned j = 0; n > 1 && j < n; j++) {
		a = &t->stlb[t->cand[PS_4K][j]];
		if (tlb_array_set_has_room(a, coal && a->coal_shift ? tlb_coal_key(a, key) : key)) {
			pick = t->cand[PS_4K][j];
			break;
		}
	}
	a = &t->stlb[pick];
	coal = coal && a->coal_shift;
	old = tlb_array_fill_coal(a, key, pfn, coal);
	if (a->count_low2) {
		a->nr_low2[PS_4K]++;
		if (old != TLB_KEY_NONE)
			a->nr_low2[old & 3]--;
	}
	return coal;
}

unsigned tlb_invalidate_range(struct tlb *t, vaddr_t start, vaddr_t end)
{
	unsigned n = 0;

	if (end <= start)
		return 0;
	for (int ps = 0; ps < PS_NR; ps++) {
		unsigned sh = page_shift_of((enum page_size)ps);
		uint64_t lo = start >> sh, hi = (end - 1) >> sh;

		n += tlb_array_invalidate_range(&t->l1[SIDE_I][ps], lo, hi, 0);
		n += tlb_array_invalidate_range(&t->l1[SIDE_D][ps], lo, hi, 0);
		for (unsigned i = 0; i < t->nr_stlb; i++) {
			if (!(t->stlb_pages[i] & (1u << ps)))
				continue;
			if (hi - lo < 64) {
				struct tlb_array *a = &t->stlb[i];

				for (uint64_t k = lo; k <= hi; k++)
					n += tlb_array_invalidate(a, k << 2 | (uint64_t)ps);
				if (a->coal_shift && ps == PS_4K)
					for (uint64_t r = lo >> a->coal_shift; r <= hi >> a->coal_shift; r++)
						n += tlb_array_invalidate(a, r << 2 | PS_4K | TLB_COAL);
			} else {
				/* sweep: keys of this size in range */
				struct tlb_array *a = &t->stlb[i];
				size_t total = (size_t)a->sets * a->ways;

				for (size_t e = 0; e < total; e++) {
					uint64_t k = a->tag[e], last;

					if (k == TLB_KEY_NONE || (k & TLB_PCID_MASK))
						continue; /* another PCID's: not this INVLPG's */
					k = coal_span(a, k, &last);
					if ((k & 3) == (uint64_t)ps && (last >> 2) >= lo && (k >> 2) <= hi) {
						drop(a, e);
						n++;
					}
				}
			}
		}
	}
	return n;
}

unsigned tlb_flush_all(struct tlb *t)
{
	unsigned n = 0;

	for (int ps = 0; ps < PS_NR; ps++) {
		n += tlb_array_flush(&t->l1[SIDE_I][ps]);
		n += tlb_array_flush(&t->l1[SIDE_D][ps]);
	}
	for (unsigned i = 0; i < t->nr_stlb; i++)
		n += tlb_array_flush(&t->stlb[i]);
	t->fractured = false;
	return n;
}

void tlb_retag(struct tlb *t, uint64_t x)
{
	for (int ps = 0; ps < PS_NR; ps++) {
		tlb_array_retag(&t->l1[SIDE_I][ps], x);
		tlb_array_retag(&t->l1[SIDE_D][ps], x);
	}
	for (unsigned i = 0; i < t->nr_stlb; i++)
		tlb_array_retag(&t->stlb[i], x);
}

unsigned tlb_flush_tag(struct tlb *t, uint64_t tag, vaddr_t start, vaddr_t end)
{
	unsigned n = 0;

	if (end <= start) { /* every entry of the PCID */
		for (int ps = 0; ps < PS_NR; ps++) {
			n += tlb_array_flush_tag(&t->l1[SIDE_I][ps], tag, 1, 0, -1);
			n += tlb_array_flush_tag(&t->l1[SIDE_D][ps], tag, 1, 0, -1);
		}
		for (unsigned i = 0; i < t->nr_stlb; i++)
			n += tlb_array_flush_tag(&t->stlb[i], tag, 1, 0, -1);
		return n;
	}
	for (int ps = 0; ps < PS_NR; ps++) {
		unsigned sh = page_shift_of((enum page_size)ps);
		uint64_t lo = start >> sh, hi = (end - 1) >> sh;

		n += tlb_array_flush_tag(&t->l1[SIDE_I][ps], tag, lo, hi, -1);
		n += tlb_array_flush_tag(&t->l1[SIDE_D][ps], tag, lo, hi, -1);
		for (unsigned i = 0; i < t->nr_stlb; i++)
			if (t->stlb_pages[i] & (1u << ps))
				n += tlb_array_flush_tag(&t->stlb[i], tag, lo, hi, ps);
	}
	return n;
}
