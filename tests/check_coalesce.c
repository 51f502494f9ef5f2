/*
 * check_coalesce.c - coalescing TLB arrays (tlb.c "Coalescing") against a
 * brute-force reference model.
 *
 * A random page table (pages mapped in random runs of consecutive frames, some
 * read-only, some holes) is accessed at random; a miss fills the page's own
 * entry or, where its aligned run is coalescible in the table, the run's
 * coalesced entry (what mmu.c's walker decides). Pages are remapped and unmapped
 * at random with an invalidation of the range, as the kernel's flushes do. The
 * reference keeps per set a plain list of ways (key, payload, stamp), chooses
 * victims by scanning (lru: oldest use, fifo: oldest fill, plru: the textbook
 * tree, random: the array's seeded xorshift64*), and finds a page by its run's
 * key and then its own: the hit/miss sequence, the kind of entry that answered and
 * the frame must equal the array's at every step, for every policy, for L1-style
 * keys (page numbers) and STLB-style keys (page number << 2 | size), with set
 * counts that are powers of two and not, and for fully associative arrays.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "tlb.h"

#define BASE 0x40000000UL /* MMAP_4M's address */
#define NPAGES 512 /* the address space of the random traces, in 4K pages */
#define NO_PFN UINT64_MAX

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* the test's page table: frame (| TLB_RO) per page, NO_PFN where unmapped */
struct table {
	uint64_t pfn[NPAGES];
	uint64_t next_frame;
};

/* Map [p, p + n) to fresh consecutive frames; with @misalign the first frame is off by one. */
static void map_run(struct table *t, unsigned p, unsigned n, bool ro, bool misalign)
{
	t->next_frame = (t->next_frame + 15) & ~15ULL;
	t->next_frame += misalign;
	for (unsigned i = 0; i < n && p + i < NPAGES; i++)
		t->pfn[p + i] = (t->next_frame++) | (ro ? TLB_RO : 0);
}

/* mmu.c coal_run()'s rule: every page of the run mapped, consecutive from an aligned frame, same RO */
static bool coalescible(const struct table *t, unsigned p, unsigned cs)
{
	unsigned n = 1u << cs, b = p & ~(n - 1);
	uint64_t first = t->pfn[b];

	if (first == NO_PFN || ((first & ~TLB_RO) & (n - 1)))
		return false;
	for (unsigned i = 1; i < n; i++)
		if (t->pfn[b + i] != first + i)
			return false;
	return true;
}

/* the reference array */
struct ref {
	unsigned sets, ways, shift, cs;
	enum repl_policy pol;
	uint64_t *key, *payload, *stamp; /* sets * ways; key TLB_KEY_NONE: invalid */
	uint8_t *plru;                   /* per set: leaves - 1 tree bits, heap order from 1 */
	unsigned leaves;
	uint64_t now, rng;
};

static void ref_init(struct ref *r, unsigned entries, unsigned ways, enum repl_policy pol,
		     unsigned shift, unsigned cs, uint64_t seed)
{
	size_t n = entries;

	memset(r, 0, sizeof(*r));
	r->sets = entries / ways;
	r->ways = ways;
	r->pol = pol;
	r->shift = shift;
	r->cs = cs;
	r->key = malloc(n * sizeof(uint64_t));
	r->payload = calloc(n, sizeof(uint64_t));
	r->stamp = calloc(n, sizeof(uint64_t));
	for (size_t i = 0; i < n; i++)
		r->key[i] = TLB_KEY_NONE;
	for (r->leaves = 1; r->leaves < ways; r->leaves <<= 1)
		;
	r->plru = calloc((size_t)r->sets * r->leaves, 1);
	/* tlb_array_init()'s seeding of REPL_RANDOM */
	r->rng = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
	if (!r->rng)
		r->rng = 1;
}

static void ref_free(struct ref *r)
{
	free(r->key);
	free(r->payload);
	free(r->stamp);
	free(r->plru);
}

static unsigned ref_set(const struct ref *r, uint64_t key)
{
	return (unsigned)((key >> r->shift) % r->sets);
}

static uint64_t ref_coal_key(const struct ref *r, uint64_t key)
{
	uint64_t low = key & ((1ULL << r->shift) - 1);

	return ((key >> r->shift >> r->cs) << r->shift) | low | TLB_COAL;
}

static void ref_plru_touch(struct ref *r, unsigned set, unsigned way)
{
	uint8_t *b = r->plru + (size_t)set * r->leaves;

	for (unsigned node = r->leaves + way; node > 1; node >>= 1)
		b[node >> 1] = !(node & 1); /* point away from the half just used */
}

static void ref_touch(struct ref *r, unsigned set, unsigned way, bool fill)
{
	if (r->pol == REPL_LRU || (r->pol == REPL_FIFO && fill))
		r->stamp[(size_t)set * r->ways + way] = ++r->now;
	if (r->pol == REPL_PLRU)
		ref_plru_touch(r, set, way);
}

/* the way of @set holding @key, or -1, by a scan */
static int ref_find(const struct ref *r, unsigned set, uint64_t key)
{
	for (unsigned w = 0; w < r->ways; w++)
		if (r->key[(size_t)set * r->ways + w] == key)
			return (int)w;
	return -1;
}

static bool ref_lookup(struct ref *r, uint64_t key, uint64_t *pfn, bool *coal)
{
	uint64_t ck = ref_coal_key(r, key);
	unsigned set = ref_set(r, ck);
	int w = ref_find(r, set, ck); /* the run's entry first, then the page's */

	*coal = w >= 0;
	if (w < 0) {
		set = ref_set(r, key);
		w = ref_find(r, set, key);
		if (w < 0)
			return false;
	}
	ref_touch(r, set, (unsigned)w, false);
	*pfn = r->payload[(size_t)set * r->ways + (unsigned)w] +
	       (*coal ? (key >> r->shift) & ((1ULL << r->cs) - 1) : 0);
	return true;
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

static void ref_fill(struct ref *r, uint64_t key, uint64_t pfn, bool coal)
{
	unsigned set, victim = UINT32_MAX;
	size_t base;

	if (coal) {
		pfn -= (key >> r->shift) & ((1ULL << r->cs) - 1);
		key = ref_coal_key(r, key);
	}
	set = ref_set(r, key);
	base = (size_t)set * r->ways;
	for (unsigned w = 0; w < r->ways && victim == UINT32_MAX; w++)
		if (r->key[base + w] == TLB_KEY_NONE)
			victim = w; /* the lowest free way */
	if (victim == UINT32_MAX) {
		if (r->pol == REPL_LRU || r->pol == REPL_FIFO) {
			victim = 0;
			for (unsigned w = 1; w < r->ways; w++)
				if (r->stamp[base + w] < r->stamp[base + victim])
					victim = w;
		} else if (r->pol == REPL_RANDOM) {
			victim = (unsigned)(xorshift64s(&r->rng) % r->ways);
		} else { /* the textbook tree walk; halves with no real way are skipped */
			const uint8_t *b = r->plru + (size_t)set * r->leaves;
			unsigned node = 1;

			while (node < r->leaves) {
				unsigned child = 2 * node + b[node], first = child;

				while (first < r->leaves)
					first <<= 1;
				if (first - r->leaves >= r->ways)
					child ^= 1;
				node = child;
			}
			victim = node - r->leaves;
		}
	}
	r->key[base + victim] = key;
	r->payload[base + victim] = pfn;
	ref_touch(r, set, victim, true);
}

/* drop page number @p's own entry and its run's */
static void ref_invalidate(struct ref *r, uint64_t p)
{
	uint64_t k[2] = { p << r->shift, ref_coal_key(r, p << r->shift) };

	for (int i = 0; i < 2; i++) {
		unsigned set = ref_set(r, k[i]);
		int w = ref_find(r, set, k[i]);

		if (w >= 0)
			r->key[(size_t)set * r->ways + (unsigned)w] = TLB_KEY_NONE;
	}
}

/*
 * @steps random accesses, remaps and unmaps against array and reference.
 * Returns the coalesced hits seen (the caller checks the trace exercised them).
 */
static uint64_t compare(enum repl_policy pol, unsigned entries, unsigned ways, unsigned shift,
			unsigned cs, unsigned steps, uint64_t seed)
{
	struct tlb_array a;
	struct ref r;
	struct table *t = malloc(sizeof(*t));
	uint64_t s = seed, coal_hits = 0, hits = 0;

	ck_assert_int_eq(tlb_array_init(&a, entries, ways, pol, seed), 0);
	a.idx_shift = shift;
	a.coal_shift = cs;
	ref_init(&r, entries, ways, pol, shift, cs, seed);
	for (unsigned p = 0; p < NPAGES; p++)
		t->pfn[p] = NO_PFN;
	t->next_frame = 16;
	/* random contiguity: runs of 1..2^(cs+1) pages, a quarter misaligned, some read-only, some holes */
	for (unsigned p = 0; p < NPAGES;) {
		unsigned n = 1 + (unsigned)(rnd(&s) % (2u << cs));

		if (rnd(&s) % 8)
			map_run(t, p, n, rnd(&s) % 6 == 0, rnd(&s) % 4 == 0);
		p += n;
	}
	for (unsigned i = 0; i < steps; i++) {
		uint64_t x = rnd(&s);
		unsigned p = (unsigned)(x >> 8) % NPAGES;

		if (x % 50 == 0) { /* remap or unmap [p, p + n) and invalidate it, as a flush would */
			unsigned n = 1 + (unsigned)((x >> 32) % (3u << cs));
			bool unmap = (x >> 40) & 1;

			if (p + n > NPAGES)
				n = NPAGES - p;
			for (unsigned j = 0; j < n; j++)
				t->pfn[p + j] = NO_PFN;
			if (!unmap)
				map_run(t, p, n, false, (x >> 41) % 3 == 0);
			if (shift == 0) { /* the range call: probes for short ranges, a sweep for long */
				unsigned dropped = tlb_array_invalidate_range(&a, p, p + n - 1, 0);

				(void)dropped;
			} else {
				for (unsigned j = 0; j < n; j++) {
					tlb_array_invalidate(&a, (uint64_t)(p + j) << shift);
					tlb_array_invalidate(&a, tlb_coal_key(&a, (uint64_t)(p + j) << shift));
				}
			}
			for (unsigned j = 0; j < n; j++)
				ref_invalidate(&r, p + j);
			tlb_array_check_invariants(&a);
			continue;
		}
		if (t->pfn[p] == NO_PFN)
			continue; /* a fault: the kernel maps it first (the next remap may) */
		{
			uint64_t key = (uint64_t)p << shift, pa = 0, pr = 0;
			bool ca = false, cr = false;
			bool ha = tlb_array_lookup_coal(&a, key, &pa, &ca);
			bool hr = ref_lookup(&r, key, &pr, &cr);

			ck_assert_msg(ha == hr, "step %u page %u: array %s, reference %s", i, p,
				      ha ? "hit" : "miss", hr ? "hit" : "miss");
			if (ha) {
				ck_assert_msg(ca == cr, "step %u page %u: coalesced %d vs %d", i, p, ca, cr);
				ck_assert_uint_eq(pa, pr);
				ck_assert_uint_eq(pa, t->pfn[p]); /* the TLB agrees with the table */
				hits++;
				coal_hits += ca;
			} else {
				bool c = coalescible(t, p, cs);

				tlb_array_fill_coal(&a, key, t->pfn[p], c);
				ref_fill(&r, key, t->pfn[p], c);
			}
		}
		if (i % 64 == 0)
			tlb_array_check_invariants(&a);
	}
	tlb_array_check_invariants(&a);
	ck_assert_uint_gt(hits, 0);
	tlb_array_free(&a);
	ref_free(&r);
	free(t);
	return coal_hits;
}

static const enum repl_policy policies[] = { REPL_LRU, REPL_FIFO, REPL_PLRU, REPL_RANDOM };

/* L1 keys (page numbers): set-associative, power-of-two sets and not, fully associative */
START_TEST(l1_keys_every_policy)
{
	enum repl_policy pol = policies[_i];

	for (unsigned cs = 2; cs <= 4; cs += 2) { /* amd (4 pages) and contpte (16) */
		ck_assert_uint_gt(compare(pol, 64, 4, 0, cs, 60000, 11 + cs), 100);
		ck_assert_uint_gt(compare(pol, 48, 4, 0, cs, 60000, 12 + cs), 100); /* 12 sets */
		ck_assert_uint_gt(compare(pol, 24, 6, 0, cs, 60000, 13 + cs), 100);  /* 4 sets of 6 */
		ck_assert_uint_gt(compare(pol, 96, 96, 0, cs, 60000, 14 + cs), 100); /* hash index */
		ck_assert_uint_gt(compare(pol, 12, 12, 0, cs, 60000, 15 + cs), 10);
	}
}
END_TEST

/* STLB keys (page number << 2 | PS_4K) */
START_TEST(stlb_keys_every_policy)
{
	enum repl_policy pol = policies[_i];

	for (unsigned cs = 2; cs <= 4; cs += 2) {
		ck_assert_uint_gt(compare(pol, 128, 8, 2, cs, 60000, 21 + cs), 100);
		ck_assert_uint_gt(compare(pol, 96, 8, 2, cs, 60000, 22 + cs), 100); /* 12 sets */
		ck_assert_uint_gt(compare(pol, 64, 64, 2, cs, 60000, 23 + cs), 100);
	}
}
END_TEST

/* A coalesced entry: its frames, its key, and the invalidation of any one page */
START_TEST(coalesced_entry_exact)
{
	struct tlb_array a;
	uint64_t pfn;
	bool c;

	ck_assert_int_eq(tlb_array_init(&a, 16, 4, REPL_LRU, 1), 0);
	a.coal_shift = 2;
	tlb_array_fill_coal(&a, 0x105, 0x8001 | TLB_RO, true); /* pages 0x104..0x107 -> 0x8000.. */
	ck_assert_uint_eq(a.nr_valid, 1);
	ck_assert(tlb_array_probe(&a, 0x41 | TLB_COAL) >= 0);
	for (uint64_t p = 0x104; p < 0x108; p++) {
		ck_assert(tlb_array_lookup_coal(&a, p, &pfn, &c));
		ck_assert(c);
		ck_assert_uint_eq(pfn, (0x8000 + p - 0x104) | TLB_RO);
	}
	ck_assert(!tlb_array_lookup_coal(&a, 0x103, &pfn, &c));
	ck_assert(!tlb_array_lookup_coal(&a, 0x108, &pfn, &c));
	/* the run's entry answers before the page's own */
	tlb_array_fill_coal(&a, 0x106, 0x9000, false);
	ck_assert(tlb_array_lookup_coal(&a, 0x106, &pfn, &c));
	ck_assert(c);
	ck_assert_uint_eq(pfn, 0x8002 | TLB_RO);
	/* invalidating one page drops the run's entry too: short range (probes) */
	ck_assert_uint_eq(tlb_array_invalidate_range(&a, 0x107, 0x107, 0), 1);
	ck_assert(!tlb_array_lookup_coal(&a, 0x104, &pfn, &c));
	ck_assert_uint_eq(a.nr_valid, 1);
	/* and the sweep of a long range */
	tlb_array_fill_coal(&a, 0x204, 0x7000, true);
	ck_assert_uint_eq(tlb_array_invalidate_range(&a, 0, 0x203, 0), 1); /* 0x106 only */
	ck_assert_uint_eq(a.nr_valid, 1);
	ck_assert_uint_eq(tlb_array_invalidate_range(&a, 0x207, 0x1000, 0), 1);
	ck_assert_uint_eq(a.nr_valid, 0);
	tlb_array_check_invariants(&a);
	tlb_array_free(&a);
}
END_TEST

/* The hierarchy: the STLB's coalescing fill, range invalidation and PCID flushes */
START_TEST(stlb_fill_and_invalidate)
{
	struct sim_config c;
	struct tlb t;
	enum page_size ps;
	pfn_t pfn;

	config_defaults(&c);
	c.coalesce = COAL_CONTPTE;
	c.coal_stlb = true;
	ck_assert_int_eq(tlb_init(&t, &c), 0);
	ck_assert_uint_eq(t.coal_shift, 4);
	ck_assert_uint_eq(t.stlb[0].coal_shift, 4);
	ck_assert_uint_eq(t.l1[SIDE_D][PS_4K].coal_shift, 0);
	ck_assert(tlb_stlb_fill_4k(&t, 0x12345000, 0x40005, true)); /* run 0x12340000.., frames 0x40000.. */
	ck_assert(!tlb_stlb_fill_4k(&t, 0x22345000, 0x50005, false));
	ck_assert_uint_eq(t.stlb[0].nr_valid, 2);
	/* a plain lookup finds the plain entry only */
	ck_assert(tlb_stlb_lookup(&t, 0x22345000, &ps, &pfn));
	ck_assert(!tlb_stlb_lookup(&t, 0x12345000, &ps, &pfn));
	/* an INVLPG of the run's last page drops it; of the page before, nothing */
	ck_assert_uint_eq(tlb_invalidate_range(&t, 0x1233f000, 0x12340000), 0);
	ck_assert_uint_eq(tlb_invalidate_range(&t, 0x1234f000, 0x12350000), 1);
	ck_assert_uint_eq(t.stlb[0].nr_valid, 1);
	/* a long range: the sweep */
	ck_assert(tlb_stlb_fill_4k(&t, 0x12345000, 0x40005, true));
	ck_assert_uint_eq(tlb_invalidate_range(&t, 0x12000000, 0x12341000), 1);
	/* a PCID flush of a range holding one page of the run */
	ck_assert(tlb_stlb_fill_4k(&t, 0x12345000, 0x40005, true));
	ck_assert_uint_eq(tlb_flush_tag(&t, 0, 0x1234e000, 0x1234f000), 1);
	ck_assert_uint_eq(tlb_flush_tag(&t, 0, 0, 0), 1); /* the plain one */
	ck_assert_uint_eq(t.stlb[0].nr_valid, 0);
	tlb_free(&t);
}
END_TEST

/*
 * The whole machine: stores in address order make runs, a munmap of one page
 * and MADV_DONTNEED of a range inside runs must drop their entries (every
 * invariant, each TLB entry against the page table, checked after every
 * record), then the pages come back. Exact counts on the default machine with
 * each kind coalescing in the L1 dTLB and the STLB.
 */
static char *machine_trace(void)
{
	size_t cap = 1 << 20, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n, "%s", MMAP_4M);
	for (int pass = 0; pass < 3; pass++) {
		for (unsigned long p = 0; p < 256; p++)
			n += (size_t)snprintf(t + n, cap - n, " %c %lx,8\n", pass ? 'L' : 'S', BASE + p * 4096);
		if (pass == 0) /* munmap page 5 (run 1), MADV_DONTNEED pages 16..40 */
			n += (size_t)snprintf(t + n, cap - n,
					      "SYSCALL[7,1](11) sys_munmap ( 0x%lx, 4096 ) --> [pre-success] Success(0x0)\n"
					      "SYSCALL[7,1](28) sys_madvise ( 0x%lx, %d, 4 ) --> [pre-success] Success(0x0)\n",
					      BASE + 5 * 4096, BASE + 16 * 4096, 25 * 4096);
	}
	return t;
}

START_TEST(machine_invalidations)
{
	static const char *kind[2] = { "tlb.coalesce.kind=amd", "tlb.coalesce.kind=contpte" };
	/* coalesced L1 dTLB hits and fills, STLB hits and fills */
	static const uint64_t want[2][4] = { { 337, 175, 111, 64 }, { 398, 28, 12, 16 } };
	char *t = machine_trace();

	for (int k = 0; k < 2; k++) {
		run(t, "os.mode=base", kind[k], "tlb.coalesce.l1d=true", "tlb.coalesce.stlb=true", NULL);
		ck_assert(S->st.coalesce);
		ck_assert_uint_eq(S->st.coal_hits[1], want[k][0]);
		ck_assert_uint_eq(S->st.coal_fills[1], want[k][1]);
		ck_assert_uint_eq(S->st.coal_hits[2], want[k][2]);
		ck_assert_uint_eq(S->st.coal_fills[2], want[k][3]);
		ck_assert_uint_eq(S->st.coal_hits[0] + S->st.coal_fills[0], 0); /* the iTLB does not coalesce */
		done();
	}
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("coalesce");
	TCase *tc = tcase_create("coalesce");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, l1_keys_every_policy, 0, 4);
	tcase_add_loop_test(tc, stlb_keys_every_policy, 0, 4);
	tcase_add_test(tc, coalesced_entry_exact);
	tcase_add_test(tc, stlb_fill_and_invalidate);
	tcase_add_test(tc, machine_invalidations);
	suite_add_tcase(s, tc);
	return check_run(s);
}
