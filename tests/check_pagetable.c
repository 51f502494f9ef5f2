/*
 * check_pagetable.c - the radix page table on frames from the buddy allocator:
 * the tables a mapping allocates (levels - 1 below the root for a 4K page, one
 * fewer for 2M, two fewer for 1G, none when they exist), counted as frames taken
 * from the buddy; unmapping frees the tables it empties (munmap) or keeps them
 * (MADV_DONTNEED); walks read one entry per level down to the leaf at 4 and 5
 * levels, at entry i of table frame f = f * 4096 + i * 8, setting A on each and
 * D on a written leaf; the sparse PT table (up to 8 entries in a small sorted
 * array, the full 512 from the 9th) looks up exactly as a reference array across
 * the switch and back; PMD split and collapse; pt_map()'s failure when frames
 * run out. pt_check_invariants() and buddy_check_invariants() after every
 * operation.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "buddy.h"
#include "pagetable.h"

#define MB (1ULL << 20)
#define GB (1ULL << 30)
#define TB (1ULL << 40)

/* The fixture: a 64 MiB buddy lending page-table frames, and the frames lent. */
struct fx {
	struct buddy b;
	struct pagetable pt;
	uint64_t taken; /* frames the page table holds */
	uint64_t limit; /* the allocator fails beyond this many (0: no limit) */
};

static pfn_t fx_alloc(void *ctx)
{
	struct fx *f = ctx;
	pfn_t p;

	if (f->limit && f->taken >= f->limit)
		return PFN_NONE;
	p = buddy_alloc_mt(&f->b, 0, MIGRATE_UNMOVABLE);

	if (p != PFN_NONE)
		f->taken++;
	return p;
}

static void fx_free(void *ctx, pfn_t pfn)
{
	struct fx *f = ctx;

	ck_assert_uint_gt(f->taken, 0);
	f->taken--;
	buddy_free(&f->b, pfn, 0);
}

static void check(struct fx *f)
{
	pt_check_invariants(&f->pt);
	buddy_check_invariants(&f->b);
	/* every table frame is one the buddy lent, and none other is held */
	ck_assert_uint_eq(f->pt.nr_tables, f->taken);
	ck_assert_uint_eq(f->b.nr_free_pages, f->b.nr_pages - f->taken);
}

static struct fx *fx_new(unsigned levels)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct pt_frame_ops ops = { fx_alloc, fx_free, NULL };

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(buddy_init(&f->b, 64 * MB), 0);
	ops.ctx = f;
	ck_assert_int_eq(pt_init(&f->pt, levels, &ops), 0);
	ck_assert_uint_eq(f->taken, 1); /* the root */
	check(f);
	return f;
}

static void fx_free_all(struct fx *f)
{
	pt_destroy(&f->pt);
	ck_assert_uint_eq(f->taken, 0);
	buddy_check_invariants(&f->b);
	ck_assert_uint_eq(f->b.nr_free_pages, f->b.nr_pages);
	buddy_destroy(&f->b);
	free(f);
}

/* Map and assert the number of table frames it took. */
static void map_takes(struct fx *f, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t tables)
{
	uint64_t before = f->taken;

	ck_assert_int_eq(pt_map(&f->pt, va, ps, pfn, true), 0);
	check(f);
	ck_assert_uint_eq(f->taken - before, tables);
}

static uint64_t unmap(struct fx *f, vaddr_t start, vaddr_t end, bool free_tables)
{
	uint64_t n = pt_unmap_range(&f->pt, start, end, free_tables, NULL, NULL);

	check(f);
	return n;
}

START_TEST(tables_per_mapping)
{
	for (unsigned levels = 4; levels <= 5; levels++) {
		struct fx *f;

		/* the first mapping of an empty table: levels - 1, - 2, - 3 tables */
		for (int ps = PS_4K; ps < PS_NR; ps++) {
			f = fx_new(levels);
			map_takes(f, 0x7fc0000000ULL, ps, 0, levels - 1 - ps);
			ck_assert_uint_eq(f->pt.nr_leaves[ps], 1);
			ck_assert_uint_eq(unmap(f, 0x7fc0000000ULL, 0x8000000000ULL, true), 1);
			ck_assert_uint_eq(f->taken, 1);
			fx_free_all(f);
		}
		f = fx_new(levels);

		/* a 4K page: one table per level below the root */
		map_takes(f, 0x40000000, PS_4K, 100, levels - 1);
		/* the same PT: nothing */
		map_takes(f, 0x40001000, PS_4K, 101, 0);
		map_takes(f, 0x401ff000, PS_4K, 102, 0);
		/* the next 2M range, same PD: a PT */
		map_takes(f, 0x40200000, PS_4K, 103, 1);
		/* a 2M page in the same PD: nothing; in the next 1G range: a PD */
		map_takes(f, 0x40400000, PS_2M, 512, 0);
		map_takes(f, 0x80000000, PS_2M, 1024, 1);
		/* a 2M page in a fresh 512G range of the same PML4: PDPT + PD */
		map_takes(f, 0x10000000000ULL, PS_2M, 1536, 2);
		/* a 1G page in the existing PDPT: nothing; in a fresh one: one fewer than 2M */
		map_takes(f, 0xc0000000, PS_1G, 0, 0);
		map_takes(f, 0x20000000000ULL, PS_1G, 0, 1);
		/* at 5 levels only: a fresh 256T range needs its own PML4 table */
		if (levels == 5)
			map_takes(f, 1ULL << 48, PS_4K, 7, 4);
		ck_assert_uint_eq(f->pt.nr_leaves[PS_4K], 4 + (levels == 5));
		ck_assert_uint_eq(f->pt.nr_leaves[PS_2M], 3);
		ck_assert_uint_eq(f->pt.nr_leaves[PS_1G], 2);
		fx_free_all(f);
	}
}
END_TEST

START_TEST(unmap_frees_or_keeps)
{
	struct fx *f = fx_new(4);

	map_takes(f, 0x40000000, PS_4K, 100, 3);
	map_takes(f, 0x40001000, PS_4K, 101, 0);
	map_takes(f, 0x40200000, PS_2M, 512, 0);
	ck_assert_uint_eq(f->taken, 4);
	/* one of two PTEs: the PT stays, whatever free_tables says */
	ck_assert_uint_eq(unmap(f, 0x40000000, 0x40001000, true), 1);
	ck_assert_uint_eq(f->taken, 4);
	/* MADV_DONTNEED of the last: the empty PT stays */
	ck_assert_uint_eq(unmap(f, 0x40001000, 0x40002000, false), 1);
	ck_assert_uint_eq(f->taken, 4);
	ck_assert(!pt_slot_empty(&f->pt, 0x40000000, PS_2M)); /* an empty table is not an empty slot */
	ck_assert(pt_slot_empty(&f->pt, 0x40000000, PS_4K));
	/* munmap over it: the empty PT goes; the PD keeps the 2M leaf */
	ck_assert_uint_eq(unmap(f, 0x40000000, 0x40200000, true), 0);
	ck_assert_uint_eq(f->taken, 3);
	ck_assert(pt_slot_empty(&f->pt, 0x40000000, PS_2M));
	/* a range that covers the 2M page only in part clears nothing (the caller splits) */
	ck_assert_uint_eq(unmap(f, 0x40200000, 0x40300000, true), 0);
	ck_assert_uint_eq(f->pt.nr_leaves[PS_2M], 1);
	/* the whole 2M page: PD and PDPT become empty and go; the root stays */
	ck_assert_uint_eq(unmap(f, 0x40200000, 0x40400000, true), 1);
	ck_assert_uint_eq(f->taken, 1);
	ck_assert_uint_eq(f->pt.nr_tables, 1);
	/* unmap of nothing, empty and inverted ranges */
	ck_assert_uint_eq(unmap(f, 0, 1ULL << 47, true), 0);
	ck_assert_uint_eq(unmap(f, 0x5000, 0x5000, true), 0);
	ck_assert_uint_eq(unmap(f, 0x6000, 0x5000, true), 0);
	fx_free_all(f);
}
END_TEST

static pfn_t held[64];
static unsigned nheld;

static void collect_table(void *ctx, pfn_t pfn, unsigned level)
{
	(void)ctx;
	(void)level;
	ck_assert_uint_lt(nheld, ARRAY_SIZE(held));
	held[nheld++] = pfn;
}

/* Every entry the walk read lies in a table frame the page table holds, at the
 * frame of the table pt_table_at() names for its level. */
static void check_path_frames(struct fx *f, vaddr_t va, const struct pt_path *p)
{
	nheld = 0;
	pt_for_each_table(&f->pt, collect_table, NULL);
	ck_assert_uint_eq(nheld, f->pt.nr_tables);
	for (unsigned k = 0; k < p->nr; k++) {
		pfn_t fr = p->pa[k] >> PAGE_SHIFT;
		const struct pt_node *t = pt_table_at(&f->pt, va, p->level[k]);
		unsigned i = (unsigned)(va >> (PAGE_SHIFT + 9 * (p->level[k] - 1))) & 511;
		bool found = false;

		for (unsigned j = 0; j < nheld; j++)
			found |= held[j] == fr;
		ck_assert_msg(found, "entry %u at %#llx outside every table frame", k,
			      (unsigned long long)p->pa[k]);
		ck_assert_ptr_nonnull(t);
		ck_assert_uint_eq(p->pa[k], pt_node_pfn(t) * PAGE_SIZE + i * 8);
		/* a table entry points at the next table's frame */
		if (k + 1 < p->nr)
			ck_assert_uint_eq(pte_pfn(p->entry[k]), p->pa[k + 1] >> PAGE_SHIFT);
	}
}

static void walk(struct fx *f, vaddr_t va, bool write, struct pt_path *p)
{
	pt_walk(&f->pt, va, write, f->pt.levels, NULL, p);
	check(f);
	check_path_frames(f, va, p);
	for (unsigned k = 0; k < p->nr; k++)
		ck_assert_uint_eq(p->level[k], f->pt.levels - k);
}

START_TEST(walk_reads)
{
	for (unsigned levels = 4; levels <= 5; levels++) {
		struct fx *f = fx_new(levels);
		struct pt_path p;
		uint64_t e;

		/* an empty table: the root entry, not present */
		walk(f, 0x40000000, false, &p);
		ck_assert_uint_eq(p.nr, 1);
		ck_assert(!p.present);
		map_takes(f, 0x40000000, PS_4K, 100, levels - 1);
		map_takes(f, 0x40400000, PS_2M, 512, 0);
		map_takes(f, 0x80000000, PS_1G, 1ULL << 18, 0);
		/* 4K: every level; 2M: one fewer; 1G: two fewer */
		walk(f, 0x40000123, false, &p);
		ck_assert_uint_eq(p.nr, levels);
		ck_assert(p.present);
		ck_assert_int_eq(p.ps, PS_4K);
		ck_assert_uint_eq(p.pfn, 100);
		walk(f, 0x40500000, false, &p);
		ck_assert_uint_eq(p.nr, levels - 1);
		ck_assert(p.present);
		ck_assert_int_eq(p.ps, PS_2M);
		ck_assert_uint_eq(p.pfn, 512);
		ck_assert(p.entry[p.nr - 1] & PTE_PS);
		walk(f, 0xbfffffff, false, &p);
		ck_assert_uint_eq(p.nr, levels - 2);
		ck_assert_int_eq(p.ps, PS_1G);
		/* holes: no PT under the PD entry; no PTE in the PT */
		walk(f, 0x40200000, false, &p);
		ck_assert_uint_eq(p.nr, levels - 1);
		ck_assert(!p.present);
		ck_assert_uint_eq(p.entry[p.nr - 1], 0);
		walk(f, 0x40001000, false, &p);
		ck_assert_uint_eq(p.nr, levels);
		ck_assert(!p.present);
		/* A on every entry read, D on the leaf only and only for a write */
		walk(f, 0x40000000, false, &p);
		for (unsigned k = 0; k < p.nr; k++)
			ck_assert(p.entry[k] & PTE_A);
		ck_assert(!(p.entry[p.nr - 1] & PTE_D));
		walk(f, 0x40000000, true, &p);
		for (unsigned k = 0; k + 1 < p.nr; k++)
			ck_assert(!(p.entry[k] & PTE_D));
		ck_assert(p.entry[p.nr - 1] & PTE_D);
		ck_assert(pt_lookup(&f->pt, 0x40000000, NULL, NULL, &e));
		ck_assert_uint_eq(e, p.entry[p.nr - 1]);
		/* young: test-and-clear */
		ck_assert(pt_test_clear_young(&f->pt, 0x40000000));
		ck_assert(!pt_test_clear_young(&f->pt, 0x40000000));
		ck_assert(!pt_test_clear_young(&f->pt, 0x40001000));
		/* from a paging-structure-cache hit: the PD table, two reads */
		pt_walk(&f->pt, 0x40000000, false, 2, pt_table_at(&f->pt, 0x40000000, 2), &p);
		check(f);
		ck_assert_uint_eq(p.nr, 2);
		ck_assert_uint_eq(p.level[0], 2);
		ck_assert(p.present);
		ck_assert(pt_test_clear_young(&f->pt, 0x40000000));
		check(f);
		unmap(f, 0, 1ULL << 47, true);
		ck_assert_uint_eq(f->taken, 1);
		fx_free_all(f);
	}
}
END_TEST

/*
 * One PT table filled with @n entries at distinct random indices in random order
 * (a few swap entries among them), checked against a reference after every
 * insertion (across the switch to the full array at the 9th), then R/W cleared
 * and set, then emptied in another random order, checked after every removal.
 */
static uint64_t rng(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

struct ref_pt {
	uint64_t pfn[512]; /* 0: empty; else pfn + 1 */
	uint64_t swp[512]; /* 0: none; else slot + 1 */
	bool rw[512];
};

static vaddr_t leaf_va[512];
static unsigned nleaf;

static void collect_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t e)
{
	const struct ref_pt *r = ctx;
	unsigned i = (unsigned)(va >> PAGE_SHIFT) & 511;

	if (ps != PS_4K || pfn + 1 != r->pfn[i] || !(e & PTE_P))
		ck_abort_msg("leaf %u: pfn %llu", i, (unsigned long long)pfn);
	leaf_va[nleaf++] = va;
}

static void compare_pt(struct fx *f, vaddr_t base, const struct ref_pt *r, unsigned nr)
{
	unsigned leaves = 0, swaps = 0;

	check(f);
	for (unsigned i = 0; i < 512; i++) {
		vaddr_t va = base + ((vaddr_t)i << PAGE_SHIFT);
		enum page_size ps;
		pfn_t pfn;
		uint64_t e, slot;
		bool m = pt_lookup(&f->pt, va, &ps, &pfn, &e), sw = pt_get_swap(&f->pt, va, &slot);

		if (m != (r->pfn[i] != 0) || (m && (pfn + 1 != r->pfn[i] || ps != PS_4K ||
						    !!(e & PTE_RW) != r->rw[i])) ||
		    sw != (r->swp[i] != 0) || (sw && slot + 1 != r->swp[i]) ||
		    pt_slot_empty(&f->pt, va, PS_4K) != (!r->pfn[i] && !r->swp[i]))
			ck_abort_msg("%u entries: index %u differs from the reference", nr, i);
		leaves += m;
		swaps += sw;
	}
	ck_assert_uint_eq(f->pt.nr_leaves[PS_4K], leaves);
	ck_assert_uint_eq(f->pt.nr_swap, swaps);
	/* the leaves in address order */
	nleaf = 0;
	pt_for_each_leaf(&f->pt, collect_leaf, (void *)r);
	ck_assert_uint_eq(nleaf, leaves);
	for (unsigned k = 1; k < nleaf; k++)
		if (leaf_va[k - 1] >= leaf_va[k])
			ck_abort_msg("%u entries: leaves out of order at %u", nr, k);
}

static void shuffle(unsigned *a, unsigned n, uint64_t *seed)
{
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)(rng(seed) % i), t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

static void sparse_round(unsigned n, uint64_t seed)
{
	struct fx *f = fx_new(4);
	const vaddr_t base = 0x7f0000000000ULL;
	struct ref_pt *r = calloc(1, sizeof(*r));
	unsigned idx[512];

	ck_assert_ptr_nonnull(r);
	for (unsigned i = 0; i < 512; i++)
		idx[i] = i;
	shuffle(idx, 512, &seed);
	/* the first n of the shuffled indices, in that (random) order */
	for (unsigned k = 0; k < n; k++) {
		unsigned i = idx[k];
		vaddr_t va = base + ((vaddr_t)i << PAGE_SHIFT);

		if (k % 5 == 3) { /* a swap entry */
			ck_assert_int_eq(pt_map_swap(&f->pt, va, 1000 + i), 0);
			r->swp[i] = 1000 + i + 1;
		} else {
			ck_assert_int_eq(pt_map(&f->pt, va, PS_4K, 5000 + i, i & 1), 0);
			r->pfn[i] = 5000 + i + 1;
			r->rw[i] = i & 1;
		}
		ck_assert_uint_eq(f->taken, 4); /* PDPT, PD and the one PT */
		compare_pt(f, base, r, k + 1);
	}
	/* mprotect over the whole table and back */
	pt_protect_range(&f->pt, base, base + PMD_SIZE, false, PFN_NONE, PFN_NONE);
	for (unsigned i = 0; i < 512; i++)
		r->rw[i] = false;
	compare_pt(f, base, r, n);
	/* writable again except the page mapping frame 5000 + idx[0] (a zero page) */
	pt_protect_range(&f->pt, base, base + PMD_SIZE, true, 5000 + idx[0], PFN_NONE);
	for (unsigned i = 0; i < 512; i++)
		r->rw[i] = r->pfn[i] && i != idx[0];
	compare_pt(f, base, r, n);
	/* a swap entry swapped in */
	for (unsigned k = 0; k < n; k++)
		if (r->swp[idx[k]]) {
			unsigned i = idx[k];

			pt_swap_in(&f->pt, base + ((vaddr_t)i << PAGE_SHIFT), 9000, false);
			r->swp[i] = 0;
			r->pfn[i] = 9001;
			r->rw[i] = false;
			compare_pt(f, base, r, n);
			break;
		}
	/* removal in another random order, one page at a time, tables kept */
	shuffle(idx, n, &seed);
	for (unsigned k = 0; k < n; k++) {
		unsigned i = idx[k];
		vaddr_t va = base + ((vaddr_t)i << PAGE_SHIFT);

		pt_unmap_range(&f->pt, va, va + PAGE_SIZE, false, NULL, NULL);
		r->pfn[i] = r->swp[i] = 0;
		compare_pt(f, base, r, n - k - 1);
		ck_assert_uint_eq(f->taken, 4);
	}
	/* refill after emptying: the table works as new */
	for (unsigned k = 0; k < n; k++) {
		unsigned i = idx[k];

		ck_assert_int_eq(pt_map(&f->pt, base + ((vaddr_t)i << PAGE_SHIFT), PS_4K, 7000 + i,
					true), 0);
		r->pfn[i] = 7000 + i + 1;
		r->rw[i] = true;
		compare_pt(f, base, r, k + 1);
	}
	ck_assert_uint_eq(unmap(f, base, base + PMD_SIZE, true), n);
	ck_assert_uint_eq(f->taken, 1);
	free(r);
	fx_free_all(f);
}

START_TEST(sparse_matches_reference)
{
	/* 8 stays sparse, 9 crosses to the full array, 20 well past it */
	static const unsigned sizes[] = { 1, 7, 8, 9, 10, 20, 512 };

	for (unsigned s = 0; s < ARRAY_SIZE(sizes); s++)
		for (uint64_t seed = 1; seed <= (sizes[s] == 512 ? 1 : 6); seed++)
			sparse_round(sizes[s], seed * 7919 + sizes[s]);
}
END_TEST

static void count_pte(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t e)
{
	unsigned *n = ctx;

	ck_assert_int_eq(ps, PS_4K);
	ck_assert_uint_eq(pfn, 2048 + ((va >> PAGE_SHIFT) & 511));
	ck_assert(e & PTE_P);
	(*n)++;
}

START_TEST(split_and_collapse_pmd)
{
	struct fx *f = fx_new(4);
	struct pt_path p;
	pfn_t dep, table;
	unsigned seen = 0;
	enum page_size ps;
	pfn_t pfn;
	uint64_t e;

	map_takes(f, 0x40000000, PS_2M, 2048, 2); /* PDPT, PD */
	walk(f, 0x40000000, true, &p); /* sets A and D on the PDE */
	/* the deposited table: a frame the caller already holds */
	dep = fx_alloc(f);
	pt_split_pmd(&f->pt, 0x40000000, dep, PFN_NONE);
	check(f);
	ck_assert_uint_eq(f->pt.nr_leaves[PS_2M], 0);
	ck_assert_uint_eq(f->pt.nr_leaves[PS_4K], 512);
	ck_assert_ptr_nonnull(pt_table_at(&f->pt, 0x40000000, 1));
	ck_assert_uint_eq(pt_node_pfn(pt_table_at(&f->pt, 0x40000000, 1)), dep);
	for (unsigned i = 0; i < 512; i += 73) {
		ck_assert(pt_lookup(&f->pt, 0x40000000 + i * PAGE_SIZE, &ps, &pfn, &e));
		ck_assert_int_eq(ps, PS_4K);
		ck_assert_uint_eq(pfn, 2048 + i);
		ck_assert_uint_eq(e & (PTE_RW | PTE_A | PTE_D), PTE_RW | PTE_A | PTE_D); /* carried over */
	}
	walk(f, 0x401ff000, false, &p);
	ck_assert_uint_eq(p.nr, 4);
	ck_assert_uint_eq(p.pa[3], dep * PAGE_SIZE + 511 * 8);
	/* collapse: the PT's 512 PTEs seen, a 2M leaf back, its table handed back */
	table = pt_collapse_pmd(&f->pt, 0x40000000, 4096, false, count_pte, &seen);
	ck_assert_uint_eq(seen, 512);
	ck_assert_uint_eq(table, dep);
	fx_free(f, table); /* the table is the caller's again */
	check(f);
	ck_assert(pt_lookup(&f->pt, 0x40123456, &ps, &pfn, &e));
	ck_assert_int_eq(ps, PS_2M);
	ck_assert_uint_eq(pfn, 4096);
	ck_assert(!(e & PTE_RW));
	/* the huge zero page split: 512 read-only PTEs to one frame */
	dep = fx_alloc(f);
	pt_split_pmd(&f->pt, 0x40000000, dep, 77);
	check(f);
	ck_assert(pt_lookup(&f->pt, 0x401ff000, &ps, &pfn, &e));
	ck_assert_uint_eq(pfn, 77);
	ck_assert(!(e & PTE_RW));
	ck_assert_uint_eq(unmap(f, 0x40000000, 0x40200000, true), 512);
	ck_assert_uint_eq(f->taken, 1);
	fx_free_all(f);
}
END_TEST

/* pt_map()'s contract when frames run out: -1; tables made on the way stay, valid. */
START_TEST(map_fails_when_frames_run_out)
{
	struct fx *f = fx_new(4);
	enum page_size ps;

	f->limit = 2; /* the root and one more */
	ck_assert_int_eq(pt_map(&f->pt, 0x40000000, PS_4K, 100, true), -1);
	check(f);
	ck_assert_uint_eq(f->taken, 2); /* the PDPT stays, empty */
	ck_assert(!pt_lookup(&f->pt, 0x40000000, &ps, NULL, NULL));
	ck_assert(pt_slot_empty(&f->pt, 0x40000000, PS_2M));
	ck_assert_uint_eq(f->pt.nr_leaves[PS_4K], 0);
	/* with frames again: the map completes, taking only the missing two */
	f->limit = 0;
	map_takes(f, 0x40000000, PS_4K, 100, 2);
	ck_assert(pt_lookup(&f->pt, 0x40000000, &ps, NULL, NULL));
	/* pt_map_swap() builds its tables the same way */
	f->limit = f->taken;
	ck_assert_int_eq(pt_map_swap(&f->pt, 0x40200000, 5), -1);
	check(f);
	ck_assert_uint_eq(f->pt.nr_swap, 0);
	f->limit = 0;
	ck_assert_int_eq(pt_map_swap(&f->pt, 0x40200000, 5), 0);
	check(f);
	ck_assert_uint_eq(f->pt.nr_swap, 1);
	/* one leaf cleared; the swap entry goes too, not counted */
	ck_assert_uint_eq(unmap(f, 0, 1ULL << 47, true), 1);
	ck_assert_uint_eq(f->pt.nr_swap, 0);
	ck_assert_uint_eq(f->taken, 1);
	fx_free_all(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pagetable");
	TCase *tc = tcase_create("pagetable");

	tcase_add_test(tc, tables_per_mapping);
	tcase_add_test(tc, unmap_frees_or_keeps);
	tcase_add_test(tc, walk_reads);
	tcase_add_test(tc, sparse_matches_reference);
	tcase_add_test(tc, split_and_collapse_pmd);
	tcase_add_test(tc, map_fails_when_frames_run_out);
	suite_add_tcase(s, tc);
	return check_run(s);
}
