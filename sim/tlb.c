/*
 * tlb.c - set-associative translation arrays, their replacement policies, and the
 * L1/STLB hierarchy of DESIGN.md ("Counting rules").
 *
 * Models: per array `sets` x `ways` entries, set = key mod sets (sets need not be
 * a power of two), replacement lru (true LRU by use stamps), fifo (by fill stamps),
 * plru (tree pseudo-LRU over the ways rounded up to a power of two; leaves past
 * `ways` are never chosen) and random (seeded xorshift64*). A fill always takes a
 * free way first (lowest index), as DynamoRIO's caching_device and hardware do.
 *
 * STLB placement when several arrays hold a page size (Golden Cove: two arrays both
 * hold 4K): the first such array whose target set has a free way, else the array
 * picked by the page number modulo the number of candidates. Real placement is
 * undocumented; this rule is deterministic and uses every array's capacity.
 *
 * Leaves out: PCID/ASID tags (one address space), the global bit, split
 * load/store L1 arrays (Ice Lake's 16-entry store DTLB), prefetching, and the
 * latency of a lookup (charged by mmu.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tlb.h"

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
	n = (size_t)entries;
	a->tag = malloc(n * sizeof(*a->tag));
	a->stamp = calloc(n, sizeof(*a->stamp));
	a->payload = calloc(n, sizeof(*a->payload));
	a->mru = calloc(a->sets, sizeof(*a->mru));
	a->mru_e = calloc(a->sets, sizeof(*a->mru_e));
	if (policy == REPL_PLRU) {
		a->plru_leaves = 1;
		while (a->plru_leaves < ways)
			a->plru_leaves <<= 1;
		a->plru = calloc((size_t)a->sets * a->plru_leaves, 1);
	}
	if (!a->tag || !a->stamp || !a->payload || !a->mru || !a->mru_e ||
	    (policy == REPL_PLRU && !a->plru)) {
		tlb_array_free(a);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		a->tag[i] = TLB_KEY_NONE;
	for (unsigned s = 0; s < a->sets; s++)
		a->mru_e[s].tag = TLB_KEY_NONE;
	return 0;
}

void tlb_array_free(struct tlb_array *a)
{
	free(a->tag);
	free(a->stamp);
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
	unsigned set, base;

	if (!a->nr_valid)
		return -1;
	set = tlb_set_of(a, key);
	base = set * a->ways;
	for (unsigned w = 0; w < a->ways; w++)
		if (a->tag[base + w] == key)
			return (long)(base + w);
	return -1;
}

bool tlb_array_set_has_room(const struct tlb_array *a, uint64_t key)
{
	unsigned base;

	if (!a->ways)
		return false;
	base = tlb_set_of(a, key) * a->ways;
	for (unsigned w = 0; w < a->ways; w++)
		if (a->tag[base + w] == TLB_KEY_NONE)
			return true;
	return false;
}

uint64_t tlb_array_fill(struct tlb_array *a, uint64_t key, uint64_t payload)
{
	unsigned set, base, victim = 0;
	uint64_t old;

	if (!a->ways)
		return TLB_KEY_NONE;
	set = tlb_set_of(a, key);
	base = set * a->ways;
	for (victim = 0; victim < a->ways; victim++)
		if (a->tag[base + victim] == TLB_KEY_NONE)
			break;
	if (victim == a->ways) {
		switch (a->policy) {
		case REPL_LRU:
		case REPL_FIFO: {
			uint64_t best = UINT64_MAX;

			for (unsigned w = 0; w < a->ways; w++)
				if (a->stamp[base + w] < best) {
					best = a->stamp[base + w];
					victim = w;
				}
			break;
		}
		case REPL_PLRU:
			victim = plru_victim(a, set);
			break;
		case REPL_RANDOM:
		default:
			victim = (unsigned)(xorshift64s(&a->rng) % a->ways);
			break;
		}
	}
	old = a->tag[base + victim];
	if (old == TLB_KEY_NONE)
		a->nr_valid++;
	a->tag[base + victim] = key;
	a->payload[base + victim] = payload;
	a->stamp[base + victim] = ++a->clock;
	a->mru[set] = (uint16_t)victim;
	a->mru_e[set] = (struct tlb_mru){ key, payload };
	if (a->policy == REPL_PLRU)
		tlb_array_plru_touch(a, set, victim);
	return old;
}

static void drop(struct tlb_array *a, size_t i)
{
	if (a->mru[i / a->ways] == i % a->ways)
		a->mru_e[i / a->ways].tag = TLB_KEY_NONE;
	a->tag[i] = TLB_KEY_NONE;
	a->stamp[i] = 0;
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
		return n;
	}
	for (size_t i = 0; i < total; i++) {
		uint64_t k = a->tag[i];

		if (k != TLB_KEY_NONE && (k >> shift) >= lo && (k >> shift) <= hi) {
			drop(a, i);
			n++;
		}
	}
	return n;
}

unsigned tlb_array_flush(struct tlb_array *a)
{
	unsigned n = 0;
	size_t total = (size_t)a->sets * a->ways;

	for (size_t i = 0; i < total && a->nr_valid; i++)
		if (a->tag[i] != TLB_KEY_NONE) {
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
			/* lru: a valid MRU holds the set's newest stamp (mmu.h skips re-stamping it) */
			BUG_ON(a->policy == REPL_LRU && a->tag[base + a->mru[s]] != TLB_KEY_NONE &&
			       a->stamp[base + w] > a->stamp[base + a->mru[s]]);
			BUG_ON(tlb_set_of(a, k) != s);
			for (unsigned v = w + 1; v < a->ways; v++)
				BUG_ON(a->tag[base + v] == k);
		}
	}
	BUG_ON(valid != a->nr_valid);
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
		t->stlb_sizes |= t->stlb_pages[i];
	}
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

bool tlb_stlb_lookup(struct tlb *t, vaddr_t va, enum page_size *ps, pfn_t *pfn)
{
	for (unsigned i = 0; i < t->nr_stlb; i++) {
		struct tlb_array *a = &t->stlb[i];

		if (!a->nr_valid)
			continue;
		for (int s = 0; s < PS_NR; s++) {
			long e;

			if (!(t->stlb_pages[i] & (1u << s)))
				continue;
			e = tlb_array_lookup(a, tlb_stlb_key(va, (enum page_size)s));
			if (e >= 0) {
				*ps = (enum page_size)s;
				*pfn = a->payload[e];
				return true;
			}
		}
	}
	return false;
}

void tlb_stlb_fill(struct tlb *t, vaddr_t va, enum page_size ps, pfn_t pfn)
{
	uint64_t key = tlb_stlb_key(va, ps);
	unsigned cand[STLB_MAX_ARRAYS], n = 0;

	for (unsigned i = 0; i < t->nr_stlb; i++)
		if (t->stlb_pages[i] & (1u << ps))
			cand[n++] = i;
	if (!n)
		return;
	for (unsigned j = 0; j < n; j++)
		if (tlb_array_set_has_room(&t->stlb[cand[j]], key)) {
			tlb_array_fill(&t->stlb[cand[j]], key, pfn);
			return;
		}
	tlb_array_fill(&t->stlb[cand[(va >> page_shift_of(ps)) % n]], key, pfn);
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
				for (uint64_t k = lo; k <= hi; k++)
					n += tlb_array_invalidate(&t->stlb[i], k << 2 | (uint64_t)ps);
			} else {
				/* sweep: keys of this size in range */
				struct tlb_array *a = &t->stlb[i];
				size_t total = (size_t)a->sets * a->ways;

				for (size_t e = 0; e < total; e++) {
					uint64_t k = a->tag[e];

					if (k != TLB_KEY_NONE && (k & 3) == (uint64_t)ps &&
					    (k >> 2) >= lo && (k >> 2) <= hi) {
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
	return n;
}
