/*
 * tlb.h - set-associative translation arrays and the TLB hierarchy built from them.
 *
 * struct tlb_array is one array (one L1 page-size array, one STLB array, or one
 * paging-structure cache): `sets` x `ways` tags, a replacement policy, and hit/miss
 * counters. It knows nothing of page tables: a key is whatever the caller hashes
 * (a page number, or a VA prefix for a PWC), the set index is key mod sets
 * (DESIGN.md "Counting rules"), and each entry carries one payload word.
 *
 * The hit path (tlb_array_lookup) is inline: the set's MRU way is compared first.
 */
#ifndef MMUSIM_TLB_H
#define MMUSIM_TLB_H

#include "config.h"
#include "scan.h"
#include "types.h"

#define TLB_KEY_NONE UINT64_MAX
/* In a translation's payload (its frame number): the page is mapped read-only. */
#define TLB_RO (1ULL << 63)

/*
 * PCID tags (Intel SDM Vol. 3A §4.10.1: each TLB and paging-structure-cache
 * entry is associated with the PCID current when it was made). An entry's key
 * carries its PCID relative to the current one, (its PCID ^ current PCID) <<
 * TLB_PCID_SHIFT, in bits no key uses (an STLB key of a 57-bit address space
 * is 47 bits): the current PCID's entries carry none, so every lookup, fill and
 * INVLPG compares the plain keys it always did, and a run with one address
 * space is the same code and the same entries. A CR3 load that changes the
 * PCID XORs the difference into every valid key (tlb_array_retag(): a sweep
 * of the arrays, once a context switch, never per reference).
 */
#define TLB_PCID_SHIFT 52
#define TLB_PCID_MASK (0xFFFULL << TLB_PCID_SHIFT)
#define TLB_PCID_MAX 4095u

/*
 * Coalesced entries (tlb.c "Coalescing"): in an array with coal_shift > 0, an
 * entry may map 1 << coal_shift aligned 4K pages at once. Its key is that of
 * the run's first page with the page number shifted right by coal_shift, and
 * TLB_COAL set (a bit below the PCID bits that no page number reaches), so it
 * is found by its own key in its own set, as a page of another size would be;
 * its payload is the run's first frame (| TLB_RO).
 */
#define TLB_COAL (1ULL << 51)

/* A way number that names no way: the end of a set's recency list. */
#define TLB_WAY_NONE 0xFFFFu

struct tlb_array {
	/* hot */
	uint64_t *tag;    /* sets * ways keys; TLB_KEY_NONE = invalid */
	uint16_t *mru;    /* per set: the way used last */
	struct tlb_mru {  /* per set: a copy of the MRU way's entry (tag TLB_KEY_NONE if */
		uint64_t tag, payload; /* that way is invalid), one load for the hot path */
	} *mru_e;
	/*
	 * lru and fifo: per set a doubly linked recency list of its ways, newest (last
	 * use under lru, last fill under fifo) to oldest, so the victim is the oldest
	 * way without a scan; invalid ways form the oldest end, the lowest index
	 * oldest, so a fill takes the lowest free way first, as a scan did. (A fill
	 * scanned all ways twice, free then oldest stamp: 23 % of the miss-heavy
	 * bench trace's instructions were tlb_array_fill's, callgrind.)
	 */
	uint16_t *newer, *older; /* sets * ways: the neighbouring way, TLB_WAY_NONE at the ends */
	struct tlb_ends {
		uint16_t newest, oldest;
	} *ends;                 /* per set */
	/*
	 * The same list packed, for lru and fifo arrays of at most TLB_ORDER_WAYS
	 * ways (every set-associative array of the shipped machines, the PWCs):
	 * per set one word whose nibble p is the way at recency position p (0 the
	 * newest), so a use is a shift and a fill takes the top nibble (the list's
	 * pointer updates were most of a fill: 75 instructions a call on the
	 * miss-heavy bench trace, callgrind). NULL where newer/older are used.
	 */
	uint64_t *order;
	uint64_t order_mask;  /* the nibbles in use: (1 << 4 * ways) - 1 */
	unsigned last_shift;  /* 4 * (ways - 1): the oldest position */
	uint64_t set_mask; /* sets - 1 when sets is a power of two, else 0 */
	bool set_mod;      /* sets is not a power of two: the set is a remainder */
	/*
	 * Fully associative arrays of TLB_HASH_MIN_WAYS ways or more: an open-
	 * addressing index from key to way (linear probing, hash_mask + 1 slots, at
	 * most a sixteenth full, TLB_WAY_NONE = empty), kept in step with tag[], so a
	 * lookup probes about one slot instead of scanning up to `ways` tags: the
	 * 72-way scans were zen4.yaml's whole extra cost on the miss-heavy bench
	 * trace (callgrind: 8.6 G instructions against 6.5 G for the default machine,
	 * 6.6 G once mmu.c's own 4K scan calls tlb_array_find()). So sparse that
	 * clusters are mostly one slot: probe and deletion loops of unpredictable
	 * length cost branch misses, not instructions (a 64-way L1 on the miss-heavy
	 * bench trace: 0.337 s half full, 0.295 s an eighth, 0.272 s a sixteenth,
	 * against 0.255 s for the 4-way array; farm-bench medians).
	 */
	uint16_t *hash;
	unsigned hash_mask, hash_shift;
	unsigned sets, ways;
	uint32_t scan_mask; /* scan_mask(ways) for 1..16 ways, else 0 (the ways are looped over) */
	unsigned idx_shift; /* set = (key >> idx_shift) mod sets: 2 for STLB keys */
	enum repl_policy policy;
	/* cold */
	uint64_t *payload; /* sets * ways: what the entry maps (a pfn, a table pfn) */
	uint8_t *plru;     /* per set: tree bits, (ways rounded up to 2^k) - 1 of them */
	unsigned plru_leaves;
	/* log2 of the 4K pages a coalesced entry maps, 0: none (in plru_leaves' padding:
	 * a larger struct tlb_array cost the inline hot path 2.4 M instructions on the
	 * validation trace, callgrind, its index arithmetic) */
	unsigned coal_shift;
	uint64_t rng;      /* xorshift64* state for REPL_RANDOM */
	unsigned nr_valid;
	/*
	 * STLB arrays of several page sizes (count_low2): valid entries by the low
	 * two bits of their key, the page size, so tlb_stlb_lookup() skips a size the
	 * array holds none of (Zen 4's STLB holds 4K and 2M: in base mode its 2M
	 * probe scanned 8 ways for nothing, 0.36 G of the miss-heavy bench trace's
	 * 9.0 G instructions, callgrind). Kept by tlb_stlb_fill(), not
	 * tlb_array_fill(), and only where sizes mix: other arrays need not pay.
	 */
	bool count_low2;
	unsigned nr_low2[4];
	uint64_t invalidations; /* entries removed by invalidation */
	uint32_t *home, *at; /* with a hash index, per way: its key's first slot, the slot it is in */
};

/*
 * Set up an array of @entries entries, @ways ways (entries == 0: an empty array
 * whose lookups always miss and whose fills do nothing). Geometry must have been
 * validated (config_validate). Returns 0, or -1 if memory ran out.
 */
int tlb_array_init(struct tlb_array *a, unsigned entries, unsigned ways,
		   enum repl_policy policy, uint64_t seed);
void tlb_array_free(struct tlb_array *a);

#define TLB_HASH_MIN_WAYS 16
#define TLB_ORDER_WAYS 16

/* The position (0 = newest) of way @w in the packed order @o: its lowest equal nibble. */
static inline unsigned tlb_order_pos(uint64_t o, unsigned w)
{
	const uint64_t ones = 0x1111111111111111ULL;
	uint64_t x = o ^ (w * ones);

	return (unsigned)__builtin_ctzll((x - ones) & ~x & (ones << 3)) >> 2;
}

/* @o with the way at position @p moved to the front (position 0). */
static inline uint64_t tlb_order_to_front(uint64_t o, unsigned p)
{
	uint64_t w = o >> (4 * p) & 15, low = (1ULL << (4 * p)) - 1;

	return (o & ((~0ULL << (4 * p)) << 4)) | (o & low) << 4 | w;
}

static inline unsigned tlb_set_of(const struct tlb_array *a, uint64_t key)
{
	/*
	 * Power-of-two sets take the mask (all shipped machines but Zen 4's STLB);
	 * others pay a modulo. (A multiply-based remainder, Lemire 2019, showed no
	 * gain in CPU time on Zen 4's 384-set STLB and cost the inline hit path
	 * 3.6 M instructions on the validation trace, callgrind.)
	 */
	key >>= a->idx_shift;
	return likely(!a->set_mod) ? (unsigned)(key & a->set_mask) : (unsigned)(key % a->sets);
}

/* The first index slot of @key (fully associative arrays with a hash index). */
static inline unsigned tlb_hash_of(const struct tlb_array *a, uint64_t key)
{
	return (unsigned)((key * 0x9E3779B97F4A7C15ULL) >> a->hash_shift);
}

/*
 * The way of @set holding @key, or -1 (a fully associative array's hash index, else
 * a scan of the set). No replacement state changes: tlb_array_touch() records a use.
 */
static inline __attribute__((always_inline)) long tlb_array_find(const struct tlb_array *a, unsigned set, uint64_t key)
{
	unsigned base = set * a->ways;

	if (a->hash) { /* one set */
		for (unsigned h = tlb_hash_of(a, key);; h = (h + 1) & a->hash_mask) {
			unsigned w = a->hash[h];

			if (w == TLB_WAY_NONE)
				return -1;
			if (a->tag[w] == key)
				return w;
		}
	}
	if (likely(a->scan_mask)) /* every way compared, no early exit at a data-dependent way */
		return scan_ways_masked(a->tag + base, a->scan_mask, key);
	for (unsigned w = 0; w < a->ways; w++)
		if (a->tag[base + w] == key)
			return w;
	return -1;
}

void tlb_array_plru_touch(struct tlb_array *a, unsigned set, unsigned way);

/* Make @way the newest of its set's recency list (lru and fifo). */
static inline void tlb_array_to_front(struct tlb_array *a, unsigned set, unsigned way)
{
	struct tlb_ends *e = &a->ends[set];
	unsigned base = set * a->ways, n, o;

	if (e->newest == way)
		return;
	n = a->newer[base + way]; /* not the newest: n is a way */
	o = a->older[base + way];
	a->older[base + n] = (uint16_t)o;
	if (o == TLB_WAY_NONE)
		e->oldest = (uint16_t)n;
	else
		a->newer[base + o] = (uint16_t)n;
	a->older[base + way] = e->newest;
	a->newer[base + way] = TLB_WAY_NONE;
	a->newer[base + e->newest] = (uint16_t)way;
	e->newest = (uint16_t)way;
}

/* Record a use of (set, way): LRU inline (the default policy), tree-PLRU out of line. */
static inline void tlb_array_touch(struct tlb_array *a, unsigned set, unsigned way)
{
	a->mru[set] = (uint16_t)way;
	a->mru_e[set] = (struct tlb_mru){ a->tag[set * a->ways + way], a->payload[set * a->ways + way] };
	if (likely(a->policy == REPL_LRU)) {
		if (likely(a->order)) {
			uint64_t o = a->order[set];

			if ((o & 15) != way)
				a->order[set] = tlb_order_to_front(o, tlb_order_pos(o, way));
		} else {
			tlb_array_to_front(a, set, way);
		}
	} else if (a->policy == REPL_PLRU)
		tlb_array_plru_touch(a, set, way);
	/* FIFO and random: a hit changes nothing */
}

/*
 * The way of @set (tlb_set_of(@a, @key), the array not empty) holding @key, its
 * use recorded, or -1: for a caller that fills the same set on a miss.
 */
static inline __attribute__((always_inline)) long tlb_array_lookup_set(struct tlb_array *a, unsigned set,
									   uint64_t key)
{
	unsigned m = a->mru[set];
	long w;

	/*
	 * The set's MRU way again: no replacement state changes (under lru it heads
	 * the recency list, under plru the tree already points away from it, fifo
	 * and random keep none), so no touch (a PWC hit is the MRU a quarter of the
	 * time on the miss-heavy bench trace).
	 */
	if (likely(a->tag[set * a->ways + m] == key))
		return m;
	w = tlb_array_find(a, set, key);
	if (w >= 0)
		tlb_array_touch(a, set, (unsigned)w);
	return w;
}

/*
 * Look @key up. On a hit update the replacement state and return the entry index
 * (set * ways + way); on a miss return -1. Hit/miss counting is the caller's: the
 * counting rules attribute an L1 miss to the page size found later.
 */
static inline long tlb_array_lookup(struct tlb_array *a, uint64_t key)
{
	unsigned set;
	long w;

	if (unlikely(!a->nr_valid))
		return -1;
	set = tlb_set_of(a, key);
	w = tlb_array_lookup_set(a, set, key);
	return w < 0 ? -1 : (long)(set * a->ways) + w;
}

/*
 * The coalesced key of 4K key @key (a page number, or an STLB key: page number
 * << idx_shift | size) in @a (coal_shift > 0): the run's number, TLB_COAL set.
 */
static inline uint64_t tlb_coal_key(const struct tlb_array *a, uint64_t key)
{
	uint64_t low = (1ULL << a->idx_shift) - 1;

	return ((key >> a->idx_shift >> a->coal_shift) << a->idx_shift) | (key & low) | TLB_COAL;
}

/*
 * Look 4K key @key up in a coalescing array: the coalesced entry of its run
 * first, then its own entry (the first that hits is touched: a run's entry
 * stays in use, the page entries it made redundant age out). On a hit return true
 * and set *@pfn to the page's frame (| TLB_RO); *@coal says whether the
 * coalesced entry answered. Out of line: only arrays with coal_shift > 0 call it.
 */
bool tlb_array_lookup_coal(struct tlb_array *a, uint64_t key, uint64_t *pfn, bool *coal);

/*
 * Fill 4K key @key, frame @pfn, into a coalescing array: as the run's
 * coalesced entry when @coal (the caller found the run coalescible; its key
 * is not present), else as the page's own. Returns the
 * evicted key (tlb_array_fill()).
 */
uint64_t tlb_array_fill_coal(struct tlb_array *a, uint64_t key, uint64_t pfn, bool coal);

/* Look up without touching counters or replacement state: entry index or -1. */
long tlb_array_probe(const struct tlb_array *a, uint64_t key);

/* tlb_array_fill() of the arrays its inline part does not take. */
uint64_t tlb_array_fill_slow(struct tlb_array *a, uint64_t key, uint64_t payload);

/* Index @way (whose tag is set) in the hash. */
static inline void tlb_hash_add(struct tlb_array *a, unsigned way)
{
	unsigned h = tlb_hash_of(a, a->tag[way]);

	a->home[way] = h;
	while (a->hash[h] != TLB_WAY_NONE)
		h = (h + 1) & a->hash_mask;
	a->hash[h] = (uint16_t)way;
	a->at[way] = h;
}

/*
 * Remove @way from the hash: backward-shift deletion (Knuth 6.4 R), with every
 * way's slot and home slot remembered (at[], home[]), so neither is searched
 * for nor rehashed.
 */
static inline void tlb_hash_del(struct tlb_array *a, unsigned way)
{
	unsigned i = a->at[way], j;

	for (j = i;;) {
		unsigned k, w;

		j = (j + 1) & a->hash_mask;
		w = a->hash[j];
		if (w == TLB_WAY_NONE)
			break;
		k = a->home[w];
		/* the entry at j stays if its home k lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		a->hash[i] = (uint16_t)w;
		a->at[w] = i;
		i = j;
	}
	a->hash[i] = TLB_WAY_NONE;
}

/*
 * tlb_array_fill_slow() of a fully associative lru or fifo array of more than
 * TLB_ORDER_WAYS ways (Zen 4's L1 TLBs): the oldest way of the list becomes the
 * newest and changes its key in the hash index. (The general path cost 160
 * instructions a fill on the miss-heavy bench trace, callgrind; inline in
 * tlb_array_fill_set(), as the set-associative fill is, not a call: bench row
 * (f), fully associative against set-associative L1s: 1.09 -> 1.065, medians
 * of 20 farm-bench pairs.)
 */
static inline __attribute__((always_inline)) uint64_t tlb_fill_fa_list(struct tlb_array *a, uint64_t key, uint64_t payload)
{
	struct tlb_ends *e = &a->ends[0];
	unsigned victim = e->oldest, n = a->newer[victim];
	uint64_t old = a->tag[victim];

	if (n != TLB_WAY_NONE) {
		a->older[n] = TLB_WAY_NONE;
		e->oldest = (uint16_t)n;
		a->older[victim] = e->newest;
		a->newer[victim] = TLB_WAY_NONE;
		a->newer[e->newest] = (uint16_t)victim;
		e->newest = (uint16_t)victim;
	}
	if (old != TLB_KEY_NONE)
		tlb_hash_del(a, victim);
	else
		a->nr_valid++;
	a->tag[victim] = key;
	tlb_hash_add(a, victim);
	a->payload[victim] = payload;
	a->mru[0] = (uint16_t)victim;
	a->mru_e[0] = (struct tlb_mru){ key, payload };
	return old;
}

/*
 * Insert @key (not present) with @payload, evicting per the policy. Returns the
 * evicted key, or TLB_KEY_NONE if a free way was used (or the array is empty).
 * Inline for packed lru/fifo arrays without a hash index: the oldest way (the
 * lowest free one while any is free) becomes the newest. tlb_array_fill_set()
 * is for a caller that has the set (tlb_set_of(@a, @key)) from its lookup.
 */
static inline uint64_t tlb_array_fill_set(struct tlb_array *a, unsigned set, uint64_t key,
					  uint64_t payload)
{
	unsigned base, victim;
	uint64_t o, old;

	if (unlikely(!a->order || a->hash)) {
		if (a->hash && a->ends)
			return tlb_fill_fa_list(a, key, payload);
		return tlb_array_fill_slow(a, key, payload);
	}
	base = set * a->ways;
	o = a->order[set];
	victim = (unsigned)(o >> a->last_shift) & 15;
	a->order[set] = ((o << 4) & a->order_mask) | victim;
	old = a->tag[base + victim];
	a->nr_valid += old == TLB_KEY_NONE;
	a->tag[base + victim] = key;
	a->payload[base + victim] = payload;
	a->mru[set] = (uint16_t)victim;
	a->mru_e[set] = (struct tlb_mru){ key, payload };
	return old;
}

static inline uint64_t tlb_array_fill(struct tlb_array *a, uint64_t key, uint64_t payload)
{
	return tlb_array_fill_set(a, tlb_set_of(a, key), key, payload);
}

/* True if the set @key maps to has a free way. */
bool tlb_array_set_has_room(const struct tlb_array *a, uint64_t key);

/* Remove @key if present (counted in a->invalidations). Returns true if it was. */
bool tlb_array_invalidate(struct tlb_array *a, uint64_t key);

/* Remove every entry whose key k satisfies lo <= (k >> shift) <= hi. Returns the count. */
unsigned tlb_array_invalidate_range(struct tlb_array *a, uint64_t lo, uint64_t hi, unsigned shift);

/* Remove everything. Returns the count removed. */
unsigned tlb_array_flush(struct tlb_array *a);

/*
 * XOR @x (a PCID difference << TLB_PCID_SHIFT) into every valid key: what the
 * keys say after the current PCID changes. Entries keep their sets and ways
 * (their set is that of the key they were filled with, which a PCID's entries
 * have again whenever it is current) and their replacement order. Returns the
 * valid entries.
 */
unsigned tlb_array_retag(struct tlb_array *a, uint64_t x);

/*
 * Remove every entry whose key's PCID bits are @tag (0: the current PCID's);
 * with @lo <= @hi also only keys whose plain key lies in [@lo, @hi] (an STLB
 * array's keys compared >> 2 with the size in their low bits equal to @ps, else
 * @ps < 0). Counted in a->invalidations. Returns the count.
 */
unsigned tlb_array_flush_tag(struct tlb_array *a, uint64_t tag, uint64_t lo, uint64_t hi, int ps);

/* Call @fn on every valid entry (for invariant checks). */
void tlb_array_for_each(const struct tlb_array *a,
			void (*fn)(void *ctx, uint64_t key, uint64_t payload), void *ctx);

/* Internal consistency: nr_valid matches, no key twice, keys in their set. Aborts on breakage. */
void tlb_array_check_invariants(const struct tlb_array *a);

/* The translation side a lookup comes from. */
enum tlb_side { SIDE_I = 0, SIDE_D = 1 };

/*
 * struct tlb - the TLB hierarchy of DESIGN.md: per side one L1 array per page size,
 * and up to STLB_MAX_ARRAYS STLB arrays each holding a set of page sizes. STLB keys
 * are (page number << 2 | page size) so one array can hold several sizes; L1 keys
 * are page numbers of the array's size.
 */
struct tlb {
	struct tlb_array l1[2][PS_NR];
	struct tlb_array stlb[STLB_MAX_ARRAYS];
	unsigned stlb_pages[STLB_MAX_ARRAYS]; /* mask of 1 << PS_* */
	unsigned nr_stlb;
	unsigned stlb_sizes; /* union of stlb_pages */
	/*
	 * Precomputed from stlb_pages (the loops over arrays and sizes cost a lookup
	 * more than its one array's 4-way scan, callgrind): the (array, size) pairs a
	 * lookup probes, in order, and per size the arrays a fill may use.
	 */
	struct tlb_probe {
		uint8_t arr, ps;
	} probe[STLB_MAX_ARRAYS * PS_NR];
	unsigned nr_probe;
	uint8_t cand[PS_NR][STLB_MAX_ARRAYS];
	unsigned nr_cand[PS_NR];
	/* nr_probe == 1 (one array, one size: most machines): that array and size, else NULL */
	struct tlb_array *stlb1;
	enum page_size stlb1_ps;
	/*
	 * Where a level has no 1G entries, a 1 GiB page is cached as the
	 * fracture holding the address: an entry of the largest smaller size the
	 * level holds (Intel SDM Vol. 3A §4.10.2.3, "Details of TLB Use": a
	 * processor may cache a page smaller than the page the paging structures
	 * map, as long as it lies inside it). Per L1 side and for the STLB: the
	 * size of that entry, PS_1G where the level holds 1G pages itself (or
	 * holds nothing: no fill, as before).
	 */
	enum page_size l1_frac_1g[2], stlb_frac_1g;
	bool fractured; /* a fracture was filled since the last full flush (mmu_invalidate_range()) */
	uint8_t coal_shift; /* tlb.coalesce.kind's log2 pages an entry; 0: no array coalesces */
};

/*
 * The first frame of the @fs page (@fs smaller than 1G) holding @va inside the
 * 1G page whose first frame is @pfn (flags such as TLB_RO kept).
 */
static inline pfn_t tlb_frac_pfn(vaddr_t va, pfn_t pfn, enum page_size fs)
{
	return pfn + ((((va & (PUD_SIZE - 1)) >> page_shift_of(fs)) << page_shift_of(fs)) >> PAGE_SHIFT);
}

int tlb_init(struct tlb *t, const struct sim_config *c);
void tlb_free(struct tlb *t);

static inline uint64_t tlb_stlb_key(vaddr_t va, enum page_size ps)
{
	return (va >> page_shift_of(ps)) << 2 | (uint64_t)ps;
}

bool tlb_stlb_lookup_slow(struct tlb *t, vaddr_t va, enum page_size *ps, pfn_t *pfn);
void tlb_stlb_fill_slow(struct tlb *t, vaddr_t va, enum page_size ps, pfn_t pfn);

/*
 * Look @va up in the STLB arrays (each size each array holds). On a hit return
 * true and set *@ps and *@pfn (the translation's first frame). Inline for an
 * STLB of one array holding one size (most machines' 4K STLB).
 */
static inline bool tlb_stlb_lookup(struct tlb *t, vaddr_t va, enum page_size *ps, pfn_t *pfn)
{
	if (likely(t->nr_probe == 1)) { /* one array of one size */
		struct tlb_array *a = &t->stlb[t->probe[0].arr];
		enum page_size s = (enum page_size)t->probe[0].ps;
		long e = tlb_array_lookup(a, tlb_stlb_key(va, s));

		if (e < 0)
			return false;
		*ps = s;
		*pfn = a->payload[e];
		return true;
	}
	if (t->nr_stlb == 1) { /* one array: each size it holds, skipping absent ones */
		struct tlb_array *a = &t->stlb[0];

		for (unsigned j = 0; j < t->nr_probe; j++) {
			enum page_size s = (enum page_size)t->probe[j].ps;
			long e;

			if (a->count_low2 && !a->nr_low2[s])
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
	return tlb_stlb_lookup_slow(t, va, ps, pfn);
}

/* Fill STLB array @a's @set (tlb_set_of(@a, @key)) with @key, keeping its counts by size. */
static inline void tlb_stlb_fill_set(struct tlb_array *a, unsigned set, uint64_t key, pfn_t pfn)
{
	uint64_t old = tlb_array_fill_set(a, set, key, pfn);

	if (a->count_low2) {
		a->nr_low2[key & 3]++;
		if (old != TLB_KEY_NONE)
			a->nr_low2[old & 3]--;
	}
}

/*
 * Fill the STLB with a translation (no-op if no array holds @ps; a 1G page
 * where none holds 1G: its fracture of size stlb_frac_1g holding @va).
 */
static inline void tlb_stlb_fill(struct tlb *t, vaddr_t va, enum page_size ps, pfn_t pfn)
{
	if (likely(t->nr_cand[ps] == 1)) { /* one candidate: it takes the fill, room or not */
		struct tlb_array *a = &t->stlb[t->cand[ps][0]];
		uint64_t key = tlb_stlb_key(va, ps);

		tlb_stlb_fill_set(a, tlb_set_of(a, key), key, pfn);
		return;
	}
	tlb_stlb_fill_slow(t, va, ps, pfn); /* several candidates, or none (a 1G page's fracture) */
}

/*
 * The STLB's fill of a 4K page where some array coalesces: the array
 * tlb_stlb_fill() would choose, as the run's coalesced entry if @coal and that
 * array coalesces. Returns true if a coalesced entry was filled.
 */
bool tlb_stlb_fill_4k(struct tlb *t, vaddr_t va, pfn_t pfn, bool coal);

/*
 * INVLPG-equivalent: remove every translation of a page of any size that overlaps
 * [@start, @end) from the L1 arrays of both sides and from the STLB. Returns the
 * number of entries removed.
 */
unsigned tlb_invalidate_range(struct tlb *t, vaddr_t start, vaddr_t end);

/* Full flush (every PCID's entries). Returns the number of entries removed. */
unsigned tlb_flush_all(struct tlb *t);

/* tlb_array_retag() of every L1 and STLB array. */
void tlb_retag(struct tlb *t, uint64_t x);

/*
 * Remove the entries of the PCID whose bits are @tag (0: current) from every L1
 * and STLB array: all of them if @end <= @start, else those of pages overlapping
 * [@start, @end). A sweep of the arrays (an INVPCID or a CR3 load, not an
 * INVLPG). Returns the count.
 */
unsigned tlb_flush_tag(struct tlb *t, uint64_t tag, vaddr_t start, vaddr_t end);

#endif
