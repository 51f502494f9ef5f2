/*
 * mrc.c - one-pass miss-ratio curves of an L1 TLB array (`mmusim mrc`).
 *
 * Method. LRU has the inclusion property: at every moment an LRU array of E
 * entries holds the E most recently used pages, so one "stack" ordered by last
 * use answers every size at once: a lookup at stack distance d (the page is the
 * d-th most recently used, 1 for a repeat) hits every array of E >= d entries
 * and misses the others; a page never used misses all. One pass counts a
 * histogram of distances; misses(E) = lookups - hits at d <= E (R. L. Mattson,
 * J. Gecsei, D. R. Slutz, I. L. Traiger, "Evaluation techniques for storage
 * hierarchies", IBM Systems Journal 9(2), 1970). With a fixed number of sets S
 * and set = page number mod S (DESIGN.md's counting rules) each set is an LRU
 * stack of its own, and the distance within the page's set gives every
 * associativity 1..W at once (M. D. Hill, A. J. Smith, "Evaluating
 * associativity in CPU caches", IEEE Trans. Computers 38(12), 1989).
 *
 * The distance is found in O(log n), as Bennett and Kruskal count it (B. T.
 * Bennett, V. J. Kruskal, "LRU stack processing", IBM J. Res. Dev. 19(4),
 * 1975): the pages used since this page's last use are the last-use times
 * later than its own. Each set keeps a Fenwick tree (P. M. Fenwick, "A new data
 * structure for cumulative frequency tables", Software: Practice and Experience
 * 24(3), 1994) over its timestamps with a 1 at each page's last use, and a hash
 * maps the page to that time: d = 1 + the 1s after it (the running total less
 * one prefix sum), then its 1 moves to the new time. When a set's timestamps
 * run out they are renumbered 1..n in order (the tree rebuilt in O(n)) into
 * arrays of 2n + 16: memory follows the pages in the stacks, not the trace
 * length nor the address space, and a lookup costs O(log n) amortized. A repeat
 * of a side's last page (most lookups) is distance 1 and changes nothing.
 *
 * Invalidations. An invalidated page cannot just leave the stack: an array of
 * E entries that held it keeps a free way, which its next miss fills instead of
 * evicting, while a stack closing the gap would put the (E+1)-th page into it.
 * So the page leaves a hole (struct sd_set): a position without a page. A lookup
 * below the topmost hole takes that hole (the pages above it move down into it)
 * and leaves a hole where it was: the arrays that reach it hit and keep their
 * free way, the smaller ones that reach the hole fill it. A full flush empties
 * every stack. With holes, array E holds exactly the pages among the first E
 * positions, and has a free way for each hole among them.
 *
 * What is counted, and what a curve equals. The lookups are those of the replay
 * loop (replay.c sim_run_batch_with(), DESIGN.md): one per 4 KiB page an I, L or
 * S touches, an M's store then its load, each on its side. The pass runs the
 * whole simulator with the config as given (faults, THP, khugepaged,
 * invalidations) and keys each lookup by the translation it ends with -- the
 * page number and size an L1 miss is counted against (mmu.c) -- one stack per
 * side and size. Every TLB invalidation the kernel issues reaches the stacks
 * through mmu's inval_hook (mmu_invalidate_range(), mmu_flush_all()), as it
 * reaches every array. A store to a read-only translation (the zero pages
 * before their first write, page-cache pages before a private write) takes a
 * write-protect fault, which flushes the page (fault.c sim_wp_fault()): an
 * array holding the old translation counts a hit on it, then the restarted
 * lookup misses; one that does not counts the one miss of the walk that faults.
 * So such a store adds a hit at the old translation's distance before the
 * lookup of the new one. A translation in a stack is current (every change of
 * one is flushed), so the stacks say which stores meet a read-only one.
 *
 * Point (side X, size P, ways w) of a curve with S sets is then exactly what
 * `mmusim run` reports as tlb.l1X.P.misses (and hits + misses) with the same
 * input and config but tlb.l1X.P.entries = S * w, ways = w, tlb.policy = lru,
 * no STLB (tlb.stlb=[]) and that array not coalescing (tlb.coalesce.*: a stack
 * holds pages, not runs), as long as the kernel decides the same in that run:
 *  - the other L1 arrays do not matter (each array is filled on its own misses
 *    only, mmu.c), nor the PWCs or caches;
 *  - the STLB does, in one case: a store to a read-only translation that misses
 *    the L1 but hits the STLB counts two L1 misses (the one before the fault,
 *    then the restarted lookup's), one without an STLB. Only a translation some
 *    lookup has put in a stack since it was last invalidated can be in the
 *    STLB; ro_stores counts the stores to those, so a run with an STLB has
 *    between 0 and ro_stores more misses than the curve, at every size;
 *  - the kernel's decisions do not depend on the TLB in base and hugetlbfs modes
 *    without memory pressure. khugepaged's first wake-up comes at the same batch
 *    whatever the TLB, later ones os.khugepaged.scan_sleep_millisecs of
 *    simulated time apart, which counts translation cycles; reclaim reads the
 *    accessed bits that walks set. Where these act, the curve follows the page
 *    sizes and invalidations of the run with the config as given.
 * tests/check_mrc.c compares curves with separate runs.
 *
 * Speed (2 shared cores, nice -n 19, farm-bench medians of 7, whole
 * processes): all 4096 sizes of both sides in one pass against eight `mmusim
 * run`s of one size each -- the validation trace 0.22 s against 0.93 s,
 * traces/xz-6.lackey.zst 0.12 s against 0.59 s, a 256 MiB GUPS (65,536 pages
 * in the stack) 0.89 s against 2.53 s, 2.8 times one run (perf: the Fenwick
 * tree and the hash, then the simulator itself); peak RSS below one run's.
 *
 * Leaves out: other replacement policies (fifo, plru and random have no
 * inclusion property), curves of the STLB (its lookups are the L1's misses, a
 * different stream at every L1 size).
 */
#include <stdlib.h>
#include <string.h>

#include "mrc.h"
#include "util.h"
#include "pool.h"

#define KEY_NONE UINT64_MAX
#define KEY_HOLE (UINT64_MAX - 1) /* an invalidated page's place: a free way */
#define SD_COLD UINT32_MAX  /* not in the stack: a miss at every size */
#define SET_MIN_CAP 16      /* timestamps a set starts with */

/*
 * One set's LRU stack: a 1 in @bit at the last-use time of each page in it, and
 * of each hole. A hole is where an invalidated page was: every array large
 * enough to have held the page now has a free way there, and the next miss
 * fills it instead of evicting. So a lookup at position p (holes count: an
 * array of E entries holds the pages and the free ways of positions 1..E) that
 * has a hole above it -- the topmost, h < p -- takes that hole: the pages above
 * h move down into it, the page leaves p, which becomes a hole (the arrays of
 * E >= p hit and keep their free way; those of h <= E < p miss and fill theirs).
 * A cold lookup takes the topmost hole, if any. Holes below every page change
 * no count (every array is either full of pages or has its free ways in order)
 * and are dropped when the set is renumbered; a full flush drops everything.
 */
struct sd_set {
	uint32_t clock;    /* the next timestamp (from 1) */
	uint32_t cap;      /* timestamps 1..cap before a renumbering */
	uint32_t flush_ts; /* times below it were flushed: those pages and holes are gone */
	uint32_t gen;      /* the stack's flush generation flush_ts is of */
	uint32_t nhole, hole_cap;
	uint32_t total;    /* the 1s in the tree: prefix(clock - 1), one sum saved a lookup */
	uint32_t *bit;     /* Fenwick tree over 1..cap */
	uint64_t *key_at;  /* [1..cap]: the page last used at each time, KEY_HOLE or KEY_NONE */
	uint32_t *hole;    /* the holes' times, a max-heap: hole[0] is the topmost */
};

struct sd_ent {
	uint64_t key;
	uint32_t ts; /* the page's last use in its set; 0: none yet */
	bool ro;     /* its translation is read-only (current while live: every change flushes) */
};

/* The stacks of one side and page size: a set each, one hash for all. */
struct sd_stack {
	struct sd_set *set;
	struct sd_ent *map; /* open addressing, linear probing, KEY_NONE empty */
	size_t map_cap, map_n;
	uint32_t gen;       /* full flushes so far */
	uint64_t lookups;
	uint64_t *hist;     /* [1..maxd]: lookups at each distance */
	uint64_t *ro_hist;  /* [1..maxd]: read-only stores whose old translation was at it */
};

struct mrc {
	struct sd_stack st[2][PS_NR];
	unsigned nsets, maxd;
	struct {
		uint64_t vpn; /* the side's last lookup (4K page number), VPN_NONE */
		enum page_size ps;
		bool ro;
	} memo[2];
	uint64_t ro_stores, invalidations;
	bool oom;
};

/* --- the Fenwick tree ------------------------------------------------------ */

static inline void fen_add(struct sd_set *t, uint32_t i, int32_t v)
{
	t->total += (uint32_t)v;
	for (; i <= t->cap; i += i & -i)
		t->bit[i] += (uint32_t)v;
}

static inline uint32_t fen_prefix(const struct sd_set *t, uint32_t i)
{
	uint32_t s = 0;

	for (; i; i -= i & -i)
		s += t->bit[i];
	return s;
}

/* --- the holes: a binary max-heap of times ------------------------------------ */

static int hole_push(struct sd_set *t, uint32_t ts)
{
	uint32_t i = t->nhole++;

	if (t->nhole > t->hole_cap) {
		uint32_t ncap = 2 * t->hole_cap + 16, *n = realloc(t->hole, ncap * sizeof(*n));

		if (!n) {
			t->nhole--;
			return -1;
		}
		t->hole = n;
		t->hole_cap = ncap;
	}
	for (; i && t->hole[(i - 1) / 2] < ts; i = (i - 1) / 2)
		t->hole[i] = t->hole[(i - 1) / 2];
	t->hole[i] = ts;
	return 0;
}

static void hole_pop(struct sd_set *t)
{
	uint32_t last = t->hole[--t->nhole], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= t->nhole)
			break;
		if (c + 1 < t->nhole && t->hole[c + 1] > t->hole[c])
			c++;
		if (t->hole[c] <= last)
			break;
		t->hole[i] = t->hole[c];
		i = c;
	}
	if (t->nhole)
		t->hole[i] = last;
}

/* Take the topmost hole, at @ts: the positions above it move down into it. */
static inline void hole_take(struct sd_set *t, uint32_t ts)
{
	hole_pop(t);
	fen_add(t, ts, -1);
	t->key_at[ts] = KEY_NONE;
}

/* --- the hash from page to its last-use time -------------------------------- */

static inline size_t map_slot(const struct sd_stack *k, uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h ^ h >> 32) & (k->map_cap - 1);
}

static struct sd_ent *map_find(struct sd_stack *k, uint64_t key)
{
	if (!k->map_cap)
		return NULL;
	for (size_t i = map_slot(k, key);; i = (i + 1) & (k->map_cap - 1)) {
		if (k->map[i].key == key)
			return &k->map[i];
		if (k->map[i].key == KEY_NONE)
			return NULL;
	}
}

/* Delete @p (an entry of k->map): backward-shift deletion, no tombstones. */
static void map_delete(struct sd_stack *k, struct sd_ent *p)
{
	size_t mask = k->map_cap - 1, i = (size_t)(p - k->map), j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (k->map[j].key == KEY_NONE)
			break;
		size_t h = map_slot(k, k->map[j].key);

		/* move j back to i unless its home lies cyclically in (i, j] */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		k->map[i] = k->map[j];
		i = j;
	}
	k->map[i].key = KEY_NONE;
	k->map_n--;
}

static int map_grow(struct sd_stack *k)
{
	size_t ncap = k->map_cap ? 2 * k->map_cap : 1024;
	struct sd_ent *old = k->map, *nm = malloc(ncap * sizeof(*nm));
	size_t ocap = k->map_cap;

	if (!nm)
		return -1;
	for (size_t i = 0; i < ncap; i++)
		nm[i].key = KEY_NONE;
	k->map = nm;
	k->map_cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key != KEY_NONE) {
			size_t j = map_slot(k, old[i].key);

			while (nm[j].key != KEY_NONE)
				j = (j + 1) & (ncap - 1);
			nm[j] = old[i];
		}
	free(old);
	return 0;
}

/* The entry of @key, inserted (ts 0) if new; NULL on host OOM. */
static struct sd_ent *map_get(struct sd_stack *k, uint64_t key)
{
	size_t i;

	if (4 * (k->map_n + 1) > 3 * k->map_cap && map_grow(k))
		return NULL;
	for (i = map_slot(k, key); k->map[i].key != KEY_NONE; i = (i + 1) & (k->map_cap - 1))
		if (k->map[i].key == key)
			return &k->map[i];
	k->map[i].key = key;
	k->map[i].ts = 0;
	k->map_n++;
	return &k->map[i];
}

/* --- one stack -------------------------------------------------------------- */

/* Bring @t up to the stack's last full flush: everything before it is gone. */
static inline void set_sync(const struct sd_stack *k, struct sd_set *t)
{
	if (unlikely(t->gen != k->gen)) {
		t->gen = k->gen;
		t->flush_ts = t->clock;
		t->nhole = 0;
	}
}

static inline bool ent_live(const struct sd_set *t, const struct sd_ent *p)
{
	return p->ts && p->ts >= t->flush_ts;
}

/*
 * Renumber @t's pages and holes 1..n in order into arrays twice as large (+
 * SET_MIN_CAP); pages flushed since leave the hash, holes below every page go.
 * -1 on host OOM.
 */
static int set_compact(struct sd_stack *k, struct sd_set *t)
{
	uint32_t n = 0, nh = 0, first = 0, ncap, j = 1, *nbit, *nhole;
	uint64_t *nkey;

	for (uint32_t ts = 1; ts < t->clock; ts++) {
		uint64_t key = t->key_at[ts];

		if (key == KEY_NONE)
			continue;
		if (ts < t->flush_ts) {
			struct sd_ent *p = key == KEY_HOLE ? NULL : map_find(k, key);

			if (p && p->ts == ts)
				map_delete(k, p);
			continue;
		}
		if (key == KEY_HOLE) {
			nh += !!first;
			n += !!first;
			continue;
		}
		if (!first)
			first = ts;
		n++;
	}
	ncap = 2 * n + SET_MIN_CAP;
	nbit = calloc((size_t)ncap + 1, sizeof(*nbit));
	nkey = malloc(((size_t)ncap + 1) * sizeof(*nkey));
	nhole = malloc(((size_t)nh + SET_MIN_CAP) * sizeof(*nhole));
	if (!nbit || !nkey || !nhole) {
		free(nbit);
		free(nkey);
		free(nhole);
		return -1;
	}
	t->nhole = 0;
	for (uint32_t ts = first; first && ts < t->clock; ts++) {
		uint64_t key = t->key_at[ts];

		if (key == KEY_NONE)
			continue;
		if (key == KEY_HOLE)
			nhole[nh - ++t->nhole] = j; /* descending: a max-heap already */
		else
			map_find(k, key)->ts = j;
		nkey[j] = key;
		nbit[j++] = 1;
	}
	for (uint32_t i = j; i <= ncap; i++)
		nkey[i] = KEY_NONE;
	/* the linear Fenwick build: each node adds itself to its parent */
	for (uint32_t i = 1; i <= ncap; i++) {
		uint32_t p = i + (i & -i);

		if (p <= ncap)
			nbit[p] += nbit[i];
	}
	free(t->bit);
	free(t->key_at);
	free(t->hole);
	t->bit = nbit;
	t->key_at = nkey;
	t->hole = nhole;
	t->hole_cap = nh + SET_MIN_CAP;
	t->cap = ncap;
	t->total = j - 1;
	t->clock = j;
	t->flush_ts = 0;
	return 0;
}

static inline struct sd_set *set_of(const struct mrc *r, struct sd_stack *k, uint64_t key)
{
	return &k->set[r->nsets == 1 ? 0 : key % r->nsets];
}

/* @key's entry in @k if the page is in the stack, else NULL. */
static struct sd_ent *sd_live(const struct mrc *r, struct sd_stack *k, uint64_t key)
{
	struct sd_ent *p = k->map_n ? map_find(k, key) : NULL;
	struct sd_set *t;

	if (!p)
		return NULL;
	t = set_of(r, k, key);
	set_sync(k, t);
	return ent_live(t, p) ? p : NULL;
}

/* The distance of @p, a page in @k (sd_live()), holes counted. */
static uint32_t sd_dist(const struct mrc *r, struct sd_stack *k, const struct sd_ent *p)
{
	const struct sd_set *t = set_of(r, k, p->key);

	return 1 + t->total - fen_prefix(t, p->ts);
}

/*
 * Use @key (a read-only translation if @ro) in @k: its distance before (1.., or
 * SD_COLD); it becomes the most recent.
 */
static uint32_t sd_access(struct mrc *r, struct sd_stack *k, uint64_t key, bool ro)
{
	struct sd_set *t = set_of(r, k, key);
	struct sd_ent *p;
	uint32_t d = SD_COLD, top;

	set_sync(k, t);
	/* before the lookup: a renumbering or a growth moves the entries */
	if (unlikely(t->clock > t->cap || !t->cap) && set_compact(k, t))
		goto oom;
	p = map_get(k, key);
	if (unlikely(!p))
		goto oom;
	p->ro = ro;
	top = t->nhole ? t->hole[0] : 0;
	if (ent_live(t, p)) {
		if (p->ts == t->clock - 1)
			return 1; /* already the most recent of its set: no hole above it */
		d = 1 + t->total - fen_prefix(t, p->ts);
		if (top > p->ts) {
			/* the topmost hole takes the move; the page's place becomes one */
			hole_take(t, top);
			t->key_at[p->ts] = KEY_HOLE;
			hole_push(t, p->ts); /* cannot fail: one was just taken */
		} else {
			fen_add(t, p->ts, -1);
			t->key_at[p->ts] = KEY_NONE;
		}
	} else {
		if (p->ts)
			t->key_at[p->ts] = KEY_NONE; /* flushed: the old time is dead */
		if (top)
			hole_take(t, top);
	}
	p->ts = t->clock++;
	t->key_at[p->ts] = key;
	fen_add(t, p->ts, 1);
	return d;
oom:
	r->oom = true;
	return SD_COLD;
}

/* Take @key out of @k (an INVLPG covered it): its place becomes a hole. */
static void sd_remove(struct mrc *r, struct sd_stack *k, uint64_t key)
{
	struct sd_ent *p = map_find(k, key);
	struct sd_set *t;

	if (!p)
		return;
	t = set_of(r, k, key);
	set_sync(k, t);
	if (ent_live(t, p)) {
		if (hole_push(t, p->ts))
			r->oom = true;
		t->key_at[p->ts] = KEY_HOLE;
	} else if (p->ts) {
		t->key_at[p->ts] = KEY_NONE;
	}
	map_delete(k, p);
}

/* Take every page of [lo, hi] out of @k: page by page, or a sweep of the hash if smaller. */
static void sd_remove_range(struct mrc *r, struct sd_stack *k, uint64_t lo, uint64_t hi)
{
	uint64_t *keys;
	size_t n = 0;

	if (!k->map_n)
		return;
	if (hi - lo < k->map_n) {
		for (uint64_t key = lo;; key++) {
			sd_remove(r, k, key);
			if (key == hi)
				break;
		}
		return;
	}
	/* collect first: deleting shifts entries under the sweep */
	keys = malloc(k->map_n * sizeof(*keys));
	if (!keys) {
		r->oom = true;
		return;
	}
	for (size_t i = 0; i < k->map_cap; i++)
		if (k->map[i].key != KEY_NONE && k->map[i].key >= lo && k->map[i].key <= hi)
			keys[n++] = k->map[i].key;
	for (size_t i = 0; i < n; i++)
		sd_remove(r, k, keys[i]);
	free(keys);
}

/* --- the pass --------------------------------------------------------------- */

/* mmu's inval_hook: the kernel invalidated [start, end) (or everything): so do the stacks. */
static void mrc_inval(void *ctx, vaddr_t start, vaddr_t end, bool all)
{
	struct mrc *r = ctx;

	r->invalidations++;
	r->memo[0].vpn = r->memo[1].vpn = VPN_NONE;
	for (int ps = 0; ps < PS_NR; ps++) {
		unsigned sh = page_shift_of((enum page_size)ps);

		for (int side = 0; side < 2; side++) {
			struct sd_stack *k = &r->st[side][ps];

			if (all)
				k->gen++; /* every set forgets its pages (set_sync()) */
			else if (end > start)
				sd_remove_range(r, k, start >> sh, (end - 1) >> sh);
		}
	}
}

/* A stack's sets and histograms, made at its first lookup (most inputs use 2 or 3 of 6). */
static int stack_alloc(struct mrc *r, struct sd_stack *k)
{
	k->set = calloc(r->nsets, sizeof(*k->set));
	k->hist = calloc((size_t)r->maxd + 1, sizeof(*k->hist));
	k->ro_hist = calloc((size_t)r->maxd + 1, sizeof(*k->ro_hist));
	if (k->set && k->hist && k->ro_hist)
		return 0;
	r->oom = true;
	return -1;
}

static void stack_free(const struct mrc *r, struct sd_stack *k)
{
	for (unsigned i = 0; k->set && i < r->nsets; i++) {
		free(k->set[i].bit);
		free(k->set[i].key_at);
		free(k->set[i].hole);
	}
	free(k->set);
	free(k->map);
	free(k->hist);
	free(k->ro_hist);
}

/*
 * Before a store on @side: a read-only translation of its page that a stack
 * holds (current: every change of a translation is flushed) means a
 * write-protect fault. Each array of the side that holds it (d <= E) first
 * counts a hit on it (ro_hist). Returns that stack, and the key in *@okey, for
 * the caller's check that the fault flushed it; NULL otherwise. A translation
 * in no stack of either side is in no TLB: its store misses everywhere, as any
 * cold lookup. ro_stores counts those held on either side (the STLB bound).
 */
static struct sd_stack *ro_store(struct mrc *r, enum tlb_side side, vaddr_t va, uint64_t *okey)
{
	for (int i = 0; i < 2; i++) {
		int sd = i ? !side : side;

		for (int ps = 0; ps < PS_NR; ps++) {
			struct sd_stack *k = &r->st[sd][ps];
			uint64_t key = va >> page_shift_of((enum page_size)ps);
			struct sd_ent *p = sd_live(r, k, key);
			uint32_t d;

			if (!p)
				continue;
			if (!p->ro)
				return NULL;
			r->ro_stores++;
			if (sd != (int)side)
				return NULL;
			d = sd_dist(r, k, p);
			if (d <= r->maxd)
				k->ro_hist[d]++;
			*okey = key;
			return k;
		}
	}
	return NULL;
}

/*
 * One L1 lookup (sim_lookup_fn): make it with mmu_access(), then record the
 * distance of the translation it ended with. A repeat of the side's last page,
 * not a store to a read-only one, is distance 1 in its stack, which it leaves as
 * it is.
 */
static void mrc_lookup(void *ctx, struct sim *s, vaddr_t va, enum tlb_side side, bool write)
{
	struct mrc *r = ctx;
	struct mmu *m = &s->mmu;
	uint64_t vpn = va >> PAGE_SHIFT, okey = 0, entry;
	struct sd_stack *k, *ok = NULL;
	enum page_size ps;
	pfn_t pfn;
	uint32_t d;
	bool ro;

	if (vpn == r->memo[side].vpn && !(write && r->memo[side].ro)) {
		mmu_access(m, va, side, write);
		k = &r->st[side][r->memo[side].ps];
		k->lookups++;
		k->hist[1]++;
		return;
	}
	if (write)
		ok = ro_store(r, side, va, &okey);
	mmu_access(m, va, side, write);
	if (unlikely(s->k.failed))
		return;
	if (m->last_vpn[side] == vpn) {
		ps = m->last_ps[side];
		ro = m->last_pfn[side] & TLB_RO;
	} else if (pt_lookup(&s->k.mm->pt, va, &ps, &pfn, &entry)) {
		ro = !(entry & PTE_RW);
	} else {
		return; /* dropped: the walk counted nothing */
	}
	/* the write-protect fault flushed the old translation (sim_wp_fault()) */
	BUG_ON(ok && sd_live(r, ok, okey));
	k = &r->st[side][ps];
	if (unlikely(!k->hist) && stack_alloc(r, k))
		return; /* the batch loop reports it */
	d = sd_access(r, k, va >> page_shift_of(ps), ro);
	k->lookups++;
	if (d <= r->maxd)
		k->hist[d]++;
	r->memo[side].vpn = vpn;
	r->memo[side].ps = ps;
	r->memo[side].ro = ro;
}

/* The curves of @r into @res: misses(w) = lookups - hits at d <= w (+ read-only hits). */
static int mrc_collect(const struct mrc *r, struct mrc_result *res)
{
	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			const struct sd_stack *k = &r->st[side][ps];
			struct mrc_curve *c = &res->curve[side][ps];
			uint64_t hits = 0, ro_hits = 0;

			if (!k->lookups)
				continue;
			c->misses = malloc((size_t)r->maxd * sizeof(*c->misses));
			c->lookups = malloc((size_t)r->maxd * sizeof(*c->lookups));
			if (!c->misses || !c->lookups)
				return -1;
			for (unsigned w = 1; w <= r->maxd; w++) {
				hits += k->hist[w];
				ro_hits += k->ro_hist[w];
				c->misses[w - 1] = k->lookups - hits;
				c->lookups[w - 1] = k->lookups + ro_hits;
			}
		}
	return 0;
}

/* Replay @tr through @s with @r observing; pool.h's statuses. */
static int mrc_replay(struct mrc *r, struct sim *s, struct trace_reader *tr, const struct mrc_opts *o,
		      uint64_t *records, struct err *e)
{
	struct trace_batch b;
	int got;

	while ((got = trace_next(tr, &b, e)) > 0) {
		if (sim_run_batch_with(s, &b, mrc_lookup, r, e))
			return POOL_EINPUT;
		if (r->oom) {
			err_host(e, "mmusim", 0, 0, "out of host memory computing the miss-ratio curves");
			return POOL_EHOST;
		}
		*records += b.n;
		if (o->interrupted && *o->interrupted)
			return POOL_EINTR;
	}
	return got < 0 ? POOL_EINPUT : POOL_OK;
}

int mrc_run(struct sim *s, struct trace_reader *tr, const struct mrc_opts *o,
	    struct mrc_result *res, struct err *e)
{
	struct mrc *r = calloc(1, sizeof(*r));
	int rc = POOL_EHOST;

	memset(res, 0, sizeof(*res));
	if (!r)
		goto oom;
	BUG_ON(!o->sets || o->max_entries < o->sets);
	r->nsets = o->sets;
	r->maxd = o->max_entries / o->sets;
	r->memo[0].vpn = r->memo[1].vpn = VPN_NONE;
	s->mmu.inval_hook = mrc_inval;
	s->mmu.inval_ctx = r;
	rc = mrc_replay(r, s, tr, o, &res->records, e);
	s->mmu.inval_hook = NULL;
	if (rc)
		goto out;
	sim_finish(s);
	res->sets = r->nsets;
	res->ways = r->maxd;
	res->ro_stores = r->ro_stores;
	res->invalidations = r->invalidations;
	rc = POOL_EHOST;
	if (mrc_collect(r, res))
		goto oom;
	rc = 0;
	goto out;
oom:
	err_host(e, "mmusim", 0, 0, "out of host memory computing the miss-ratio curves");
out:
	s->mmu.inval_hook = NULL;
	if (r)
		for (int side = 0; side < 2; side++)
			for (int ps = 0; ps < PS_NR; ps++)
				stack_free(r, &r->st[side][ps]);
	free(r);
	return rc;
}

void mrc_result_free(struct mrc_result *res)
{
	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			free(res->curve[side][ps].misses);
			free(res->curve[side][ps].lookups);
		}
	memset(res, 0, sizeof(*res));
}

/* --- output ----------------------------------------------------------------- */

const char *const mrc_side_name[2] = { "l1i", "l1d" };

int mrc_write_csv(const struct mrc_result *res, const char *const prov[MRC_NR_PROV], FILE *f)
{
	fprintf(f, "side,page_size,entries,misses,miss_ratio,lookups,sets,ways%s\n",
		prov ? ",run.version,run.build_id,run.config_hash,run.input_id" : "");
	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			const struct mrc_curve *c = &res->curve[side][ps];

			for (unsigned w = 1; c->misses && w <= res->ways; w++) {
				uint64_t mi = c->misses[w - 1], lk = c->lookups[w - 1];

				fprintf(f, "%s,%s,%llu,%llu,%.9f,%llu,%u,%u", mrc_side_name[side],
					page_size_name[ps], (unsigned long long)res->sets * w,
					(unsigned long long)mi, lk ? (double)mi / (double)lk : 0.0,
					(unsigned long long)lk, res->sets, w);
				for (int k = 0; prov && k < MRC_NR_PROV; k++) {
					fputc(',', f);
					csv_put(f, prov[k]);
				}
				fputc('\n', f);
			}
		}
	return ferror(f) ? -1 : 0;
}
