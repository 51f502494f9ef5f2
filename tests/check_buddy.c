/*
 * check_buddy.c - the buddy allocator: exact placement from mm/page_alloc.c's
 * rules (smallest order first, expand() keeps the low half), merging, the
 * vmstat.c fragmentation indices by hand, migrate-type lists and fallback
 * stealing (fallbacks[], the half-pageblock claim rule), seeded fragmentation,
 * watermarks computed by hand, direct compaction with a callback that really
 * moves pages, deferral, and a seeded stress run with the invariant checker
 * after every operation.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>

#include "buddy.h"
#include "compaction.h"

#define MB (1ULL << 20)

START_TEST(fresh_and_split)
{
	struct buddy b;

	ck_assert_int_eq(buddy_init(&b, 64 * MB), 0); /* 16 blocks of order 10 */
	ck_assert_uint_eq(b.free_area[10].nr_free, 16);
	ck_assert_uint_eq(b.nr_free_pages, 16384);
	buddy_check_invariants(&b);
	/* lowest block first (boot frees to the tail), low half kept */
	ck_assert_uint_eq(buddy_alloc(&b, 0), 0);
	buddy_check_invariants(&b);
	for (unsigned o = 0; o < 10; o++)
		ck_assert_uint_eq(b.free_area[o].nr_free, 1); /* 1, 2, 4, ... 512 */
	ck_assert_uint_eq(b.free_area[10].nr_free, 15);
	ck_assert_uint_eq(buddy_alloc(&b, 0), 1);
	ck_assert_uint_eq(buddy_alloc(&b, 9), 512);
	ck_assert_uint_eq(buddy_alloc(&b, 2), 4);
	ck_assert_uint_eq(buddy_alloc(&b, 10), 1024);
	buddy_check_invariants(&b);
	/* free everything: all merges back */
	buddy_free(&b, 0, 0);
	buddy_free(&b, 512, 9);
	buddy_free(&b, 1, 0);
	buddy_free(&b, 4, 2);
	buddy_free(&b, 1024, 10);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.free_area[10].nr_free, 16);
	ck_assert_uint_eq(b.nr_free_pages, 16384);
	for (unsigned o = 0; o < 10; o++)
		ck_assert_uint_eq(b.free_area[o].nr_free, 0);
	buddy_destroy(&b);
}
END_TEST

START_TEST(exhaustion)
{
	struct buddy b;
	pfn_t p;
	unsigned n = 0;

	ck_assert_int_eq(buddy_init(&b, 4 * MB), 0);
	while ((p = buddy_alloc(&b, 9)) != PFN_NONE)
		n++;
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(buddy_alloc(&b, 0), PFN_NONE);
	ck_assert_uint_eq(b.nr_free_pages, 0);
	buddy_check_invariants(&b);
	buddy_destroy(&b);
}
END_TEST

START_TEST(fragmentation_indices)
{
	struct buddy b;
	pfn_t keep[1024];

	ck_assert_int_eq(buddy_init(&b, 4 * MB), 0);
	/* fresh: an order-9 block is free */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 9), -1000);
	ck_assert_int_eq(buddy_unusable_index(&b, 9), 0);
	/* take all 1024 pages singly, free every other one: 512 free order-0 blocks */
	for (int i = 0; i < 1024; i++)
		ck_assert_uint_eq(keep[i] = buddy_alloc(&b, 0), (pfn_t)i);
	for (int i = 0; i < 1024; i += 2)
		buddy_free(&b, keep[i], 0);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.free_area[0].nr_free, 512);
	/* 1000 - (1000 + 512*1000/512) / 512 = 1000 - 2000/512 = 1000 - 3 = 997 */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 9), 997);
	/* all free space unusable for order 9 */
	ck_assert_int_eq(buddy_unusable_index(&b, 9), 1000);
	/* order 0 is satisfiable */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 0), -1000);
	ck_assert_int_eq(buddy_unusable_index(&b, 0), 0);
	/* order 1: 512 free pages, none paired: 1000 - (1000 + 512*1000/2)/512 = 1000 - 501 = 499 */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 1), 499);
	buddy_destroy(&b);
}
END_TEST

START_TEST(stress)
{
	struct buddy b;
	struct { pfn_t pfn; unsigned order; } live[4096];
	unsigned n = 0;
	uint64_t seed = 42, used = 0;

	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0);
	for (int step = 0; step < 20000; step++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (n && ((seed >> 40) % 3 == 0 || n == 4096)) {
			unsigned i = (unsigned)((seed >> 20) % n);

			buddy_free(&b, live[i].pfn, live[i].order);
			used -= 1ULL << live[i].order;
			live[i] = live[--n];
		} else {
			unsigned order = (unsigned)((seed >> 33) % 11);
			int mt = (int)((seed >> 50) % 4); /* half the requests MOVABLE */
			pfn_t p;

			order = order > 4 ? order - 4 > 6 ? 9 : 0 : order; /* mostly small */
			p = mt == 3 ? buddy_alloc(&b, order) : buddy_alloc_mt(&b, order, mt);
			if (p != PFN_NONE) {
				ck_assert_uint_eq(p & ((1ULL << order) - 1), 0);
				live[n].pfn = p;
				live[n++].order = order;
				used += 1ULL << order;
			}
		}
		ck_assert_uint_eq(b.nr_free_pages + used, 4096);
		buddy_check_invariants(&b);
	}
	while (n) {
		n--;
		buddy_free(&b, live[n].pfn, live[n].order);
	}
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.free_area[10].nr_free, 4);
	buddy_destroy(&b);
}
END_TEST

/* The head of free_area[o].free_list[mt], as a pfn (BUDDY_NIL when empty). */
static uint32_t head_of(const struct buddy *b, unsigned o, int mt)
{
	return b->free_area[o].free_list[mt];
}

START_TEST(migrate_type_lists_and_fallback)
{
	struct buddy b;

	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0); /* 8 pageblocks, 4 boot blocks */
	for (pfn_t f = 0; f < 4096; f += 512)
		ck_assert_int_eq(buddy_pageblock_mt(&b, f), MIGRATE_MOVABLE);
	/*
	 * UNMOVABLE with only MOVABLE free: fallbacks[UNMOVABLE] = RECLAIMABLE (empty),
	 * MOVABLE: the largest block (order 10 at 0) is stolen whole, both of its
	 * pageblocks become UNMOVABLE and expand() gives the halves to UNMOVABLE.
	 */
	ck_assert_uint_eq(buddy_alloc_mt(&b, 0, MIGRATE_UNMOVABLE), 0);
	buddy_check_invariants(&b);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 0), MIGRATE_UNMOVABLE);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 512), MIGRATE_UNMOVABLE);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 1024), MIGRATE_MOVABLE);
	for (unsigned o = 0; o < 10; o++) {
		ck_assert_uint_eq(head_of(&b, o, MIGRATE_UNMOVABLE), 1U << o);
		ck_assert_uint_eq(head_of(&b, o, MIGRATE_MOVABLE), BUDDY_NIL);
	}
	ck_assert_uint_eq(b.free_area[10].nr_free, 3);
	/* MOVABLE does not touch the UNMOVABLE block: the next boot block */
	ck_assert_uint_eq(buddy_alloc(&b, 0), 1024);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(buddy_alloc_mt(&b, 0, MIGRATE_UNMOVABLE), 1);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(buddy_alloc(&b, 10), 2048);
	ck_assert_uint_eq(buddy_alloc(&b, 10), 3072);
	for (pfn_t f = 1025; f < 2048; f++) /* drain every MOVABLE list */
		ck_assert_uint_eq(buddy_alloc(&b, 0), f);
	buddy_check_invariants(&b);
	/*
	 * MOVABLE now falls back to UNMOVABLE (RECLAIMABLE is empty): largest first,
	 * order 9 at 512, whose pageblock turns MOVABLE (order >= pageblock_order).
	 */
	ck_assert_uint_eq(buddy_alloc(&b, 0), 512);
	buddy_check_invariants(&b);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 512), MIGRATE_MOVABLE);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 0), MIGRATE_UNMOVABLE);
	for (pfn_t f = 513; f < 1024; f++)
		ck_assert_uint_eq(buddy_alloc(&b, 0), f);
	/*
	 * Next fallback: order 8 at 256 in pageblock 0, which holds 510 free pages and
	 * 2 UNMOVABLE ones: 510 + 0 alike >= 256, so the whole pageblock is claimed and
	 * all its free blocks move to MOVABLE; the smallest is then order 1 at 2.
	 */
	ck_assert_uint_eq(buddy_alloc(&b, 0), 2);
	buddy_check_invariants(&b);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 0), MIGRATE_MOVABLE);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		ck_assert_uint_eq(head_of(&b, o, MIGRATE_UNMOVABLE), BUDDY_NIL);
	ck_assert_uint_eq(head_of(&b, 0, MIGRATE_MOVABLE), 3);
	/* a freed page goes to its pageblock's list, now MOVABLE (0 is in use: no merge) */
	buddy_free(&b, 1, 0);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(head_of(&b, 0, MIGRATE_MOVABLE), 1);
	buddy_destroy(&b);
}
END_TEST

START_TEST(steal_claim_threshold)
{
	struct buddy b;

	/*
	 * A MOVABLE pageblock with 400 allocated MOVABLE pages and 112 free ones
	 * (0-63, 64-95, 96-111): an UNMOVABLE request moves the 112 free pages to
	 * UNMOVABLE but alike = 512 - 112 - 400 = 0 and 112 < 256: the block stays MOVABLE.
	 */
	ck_assert_int_eq(buddy_init(&b, 4 * MB), 0);
	for (pfn_t f = 0; f < 1024; f++)
		ck_assert_uint_eq(buddy_alloc(&b, 0), f);
	for (pfn_t f = 0; f < 112; f++)
		buddy_free(&b, f, 0);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(head_of(&b, 6, MIGRATE_MOVABLE), 0);
	ck_assert_uint_eq(buddy_alloc_mt(&b, 0, MIGRATE_UNMOVABLE), 96); /* smallest: order 4 at 96 */
	buddy_check_invariants(&b);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 0), MIGRATE_MOVABLE);
	for (unsigned o = 0; o < NR_PAGE_ORDERS; o++)
		ck_assert_uint_eq(head_of(&b, o, MIGRATE_MOVABLE), BUDDY_NIL);
	ck_assert_uint_eq(head_of(&b, 6, MIGRATE_UNMOVABLE), 0);
	ck_assert_uint_eq(head_of(&b, 5, MIGRATE_UNMOVABLE), 64);
	ck_assert_uint_eq(head_of(&b, 3, MIGRATE_UNMOVABLE), 104);
	buddy_destroy(&b);

	/* exactly half free (order 8 at 0, 256 pages) and 256 MOVABLE: 256 >= 256, claimed */
	ck_assert_int_eq(buddy_init(&b, 4 * MB), 0);
	for (pfn_t f = 0; f < 1024; f++)
		ck_assert_uint_eq(buddy_alloc(&b, 0), f);
	for (pfn_t f = 0; f < 256; f++)
		buddy_free(&b, f, 0);
	ck_assert_uint_eq(buddy_alloc_mt(&b, 0, MIGRATE_RECLAIMABLE), 0);
	buddy_check_invariants(&b);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 0), MIGRATE_RECLAIMABLE);
	ck_assert_int_eq(buddy_pageblock_mt(&b, 512), MIGRATE_MOVABLE);
	ck_assert_uint_eq(head_of(&b, 7, MIGRATE_RECLAIMABLE), 128);
	buddy_destroy(&b);
}
END_TEST

/* Pinned pfns in ascending order; returns how many. */
static unsigned pinned_frames(const struct buddy *b, pfn_t *out, unsigned max)
{
	unsigned n = 0;

	for (pfn_t f = 0; f < b->lazy_next; f++)
		if (b->pages[f].flags & BP_PINNED) {
			ck_assert_uint_lt(n, max);
			out[n++] = f;
		}
	return n;
}

/*
 * A boot-time pool first (8 order-9 blocks, as hugetlb_pool_init() takes them),
 * then fragmentation: the share is of the 24 pageblocks still wholly free, and no
 * pinned frame lands in a pool block.
 */
START_TEST(fragment_after_pool)
{
	struct buddy b;
	pfn_t pool[8], pins[32];
	unsigned n;

	ck_assert_int_eq(buddy_init(&b, 64 * MB), 0); /* 32 pageblocks */
	for (int i = 0; i < 8; i++) {
		pool[i] = buddy_alloc(&b, 9);
		ck_assert_uint_ne(pool[i], PFN_NONE);
	}
	ck_assert_int_eq(buddy_fragment(&b, 0.5, 7), 12);
	buddy_check_invariants(&b);
	n = pinned_frames(&b, pins, 32);
	ck_assert_uint_eq(n, 12);
	for (unsigned i = 0; i < n; i++)
		for (int j = 0; j < 8; j++)
			ck_assert(pins[i] >> 9 != pool[j] >> 9);
	for (int j = 0; j < 8; j++) {
		unsigned order = 99;

		ck_assert(buddy_is_allocated(&b, pool[j], &order));
		ck_assert_uint_eq(order, 9);
	}
	/* every wholly free pageblock pinned: 12 more, then none is left */
	ck_assert_int_eq(buddy_fragment(&b, 1.0, 8), 12);
	ck_assert_int_eq(buddy_fragment(&b, 1.0, 9), 0);
	buddy_check_invariants(&b);
	buddy_destroy(&b);
}
END_TEST

START_TEST(fragment_half)
{
	struct buddy b, c;
	pfn_t p1[32], p2[32], p3[32];
	unsigned n1, n2, n3, unmovable = 0, same = 0;

	ck_assert_int_eq(buddy_init(&b, 64 * MB), 0); /* 32 pageblocks */
	ck_assert_int_eq(buddy_fragment(&b, 0.0, 1), 0);
	ck_assert_uint_eq(b.lazy_next, 0); /* share 0 touches nothing */
	ck_assert_int_eq(buddy_fragment(&b, 0.5, 7), 16);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.nr_pinned, 16);
	ck_assert_uint_eq(b.nr_free_pages, 16384 - 16);
	n1 = pinned_frames(&b, p1, 32);
	ck_assert_uint_eq(n1, 16);
	for (pfn_t pb = 0; pb < 32; pb++) {
		unsigned in = 0;

		for (unsigned i = 0; i < n1; i++)
			in += p1[i] >> 9 == pb;
		if (buddy_pageblock_mt(&b, pb << 9) == MIGRATE_UNMOVABLE) {
			unmovable++;
			ck_assert_uint_eq(in, 1);
		} else {
			ck_assert_int_eq(buddy_pageblock_mt(&b, pb << 9), MIGRATE_MOVABLE);
			ck_assert_uint_eq(in, 0);
		}
	}
	ck_assert_uint_eq(unmovable, 16);
	/* pinned pages can be neither allocated again nor are they free */
	for (unsigned i = 0; i < n1; i++) {
		unsigned order = 99;

		ck_assert(buddy_is_allocated(&b, p1[i], &order));
		ck_assert_uint_eq(order, 0);
	}
	/* again: half of the 16 pageblocks still wholly free, never a pinned one twice */
	ck_assert_int_eq(buddy_fragment(&b, 0.5, 7), 8);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.nr_pinned, 24);
	{
		pfn_t all[32];
		unsigned n = pinned_frames(&b, all, 32), per_pb[32] = { 0 };

		ck_assert_uint_eq(n, 24);
		for (unsigned i = 0; i < n; i++)
			ck_assert_uint_le(++per_pb[all[i] >> 9], 1);
	}
	buddy_destroy(&b);

	/* the same seed gives the same frames; another seed other frames; a share outside [0, 1]: -1 */
	ck_assert_int_eq(buddy_init(&c, 64 * MB), 0);
	ck_assert_int_eq(buddy_fragment(&c, -0.1, 7), -1);
	ck_assert_int_eq(buddy_fragment(&c, 1.5, 7), -1);
	ck_assert_int_eq(buddy_fragment(&c, 0.0 / 0.0, 7), -1);
	ck_assert_int_eq(buddy_fragment(&c, 0.5, 7), 16);
	n2 = pinned_frames(&c, p2, 32);
	ck_assert_uint_eq(n2, 16);
	for (unsigned i = 0; i < 16; i++)
		ck_assert_uint_eq(p1[i], p2[i]);
	buddy_destroy(&c);
	ck_assert_int_eq(buddy_init(&c, 64 * MB), 0);
	ck_assert_int_eq(buddy_fragment(&c, 0.5, 8), 16);
	buddy_check_invariants(&c);
	n3 = pinned_frames(&c, p3, 32);
	ck_assert_uint_eq(n3, 16);
	for (unsigned i = 0; i < 16; i++)
		same += p1[i] == p3[i];
	ck_assert_uint_lt(same, 16);
	buddy_destroy(&c);
}
END_TEST

/* A fake page table: which owner maps each frame, and the frame of each owner. */
struct fake_map {
	int32_t *owner_of;   /* per frame, -1 if none */
	pfn_t *frame_of;     /* per owner */
	unsigned nr_owners;
	pfn_t refuse;        /* the callback refuses to move this frame (a page-table page) */
	unsigned calls;
};

static int fake_migrate(void *ctx, pfn_t from, pfn_t to)
{
	struct fake_map *m = ctx;
	int32_t o = m->owner_of[from];

	m->calls++;
	ck_assert_int_ge(o, 0);
	ck_assert_int_eq(m->owner_of[to], -1);
	if (from == m->refuse)
		return -1;
	m->owner_of[to] = o;
	m->owner_of[from] = -1;
	m->frame_of[o] = to;
	return 0;
}

/* Every owner holds exactly one allocated frame, and no frame has two owners. */
static void check_fake_map(const struct buddy *b, const struct fake_map *m)
{
	for (unsigned o = 0; o < m->nr_owners; o++) {
		unsigned order = 99;

		ck_assert_int_eq(m->owner_of[m->frame_of[o]], (int32_t)o);
		ck_assert(buddy_is_allocated(b, m->frame_of[o], &order));
		ck_assert_uint_eq(order, 0);
	}
	for (pfn_t f = 0; f < b->nr_pages; f++)
		if (m->owner_of[f] >= 0)
			ck_assert_uint_eq(m->frame_of[m->owner_of[f]], f);
}

/* 16 MiB, every page allocated MOVABLE, the even ones freed: owners map the odd. */
static void setup_checkerboard(struct buddy *b, struct fake_map *m)
{
	ck_assert_int_eq(buddy_init(b, 16 * MB), 0);
	m->owner_of = malloc(4096 * sizeof(*m->owner_of));
	m->frame_of = malloc(2048 * sizeof(*m->frame_of));
	m->nr_owners = 2048;
	m->refuse = PFN_NONE;
	m->calls = 0;
	for (pfn_t f = 0; f < 4096; f++) {
		ck_assert_uint_eq(buddy_alloc(b, 0), f);
		m->owner_of[f] = -1;
	}
	for (pfn_t f = 0; f < 4096; f += 2)
		buddy_free(b, f, 0);
	for (pfn_t f = 1; f < 4096; f += 2) {
		m->owner_of[f] = (int32_t)(f / 2);
		m->frame_of[f / 2] = f;
	}
	buddy_check_invariants(b);
}

START_TEST(compact_movable_checkerboard)
{
	struct buddy b;
	struct fake_map m;
	struct buddy_migrate_ops ops = { fake_migrate, &m };
	struct compact_stats st;

	setup_checkerboard(&b, &m);
	ck_assert_uint_eq(buddy_alloc(&b, 9), PFN_NONE);
	buddy_check_invariants(&b);
	/* 2048 single pages: 1000 - (1000 + 2048 * 1000 / 512) / 2048 = 1000 - 2 = 998 */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 9), 998);
	/*
	 * 16 MiB: min_free_kbytes = int_sqrt(16384 * 16) = 512 -> MIN 128 pages,
	 * delta = max(128 / 4, 4096 * 10 / 10000 = 4) = 32: LOW 160. Suitable:
	 * 2048 > 160 + (2 << 9) = 1184; fragindex 998 > 500.
	 */
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_LIGHT, &ops, &st), COMPACT_SUCCESS);
	buddy_check_invariants(&b);
	check_fake_map(&b, &m);
	/*
	 * The migrate scanner takes pageblock 0's 256 movable pages in rounds of 32;
	 * the free scanner fills them from the top pageblock (3584..4095), whose 256
	 * free pages it passes over 63 + 7 * 64 = 511 frames. Pageblock 0 is then
	 * one free order-9 block and compact_finished() stops at pfn 512.
	 */
	ck_assert_int_eq(st.result, COMPACT_SUCCESS);
	ck_assert_uint_eq(st.migrated, 256);
	ck_assert_uint_eq(st.migrate_failed, 0);
	ck_assert_uint_eq(st.migrate_scanned, 512);
	ck_assert_uint_eq(st.free_scanned, 511);
	ck_assert_uint_eq(st.isolated, 512);
	ck_assert_uint_eq(m.calls, 256);
	for (pfn_t f = 3584; f < 4096; f++)
		ck_assert_int_ge(m.owner_of[f], 0);
	ck_assert_uint_eq(buddy_alloc(&b, 9), 0);
	buddy_check_invariants(&b);
	buddy_compaction_defer_reset(&b, 9, true);
	ck_assert_int_eq(b.compact_order_failed, 10);
	buddy_destroy(&b);
	free(m.owner_of);
	free(m.frame_of);

	/* async: the same outcome; a page the callback refuses stays where it is */
	setup_checkerboard(&b, &m);
	m.refuse = 1;
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_ASYNC, &ops, &st), COMPACT_SUCCESS);
	buddy_check_invariants(&b);
	check_fake_map(&b, &m);
	ck_assert_uint_eq(st.migrate_failed, 1);
	ck_assert_int_eq(m.owner_of[1], 0);
	ck_assert(!buddy_is_allocated(&b, 512, NULL)); /* pageblock 1 became the free block */
	ck_assert_uint_eq(buddy_alloc(&b, 9), 512);
	buddy_check_invariants(&b);
	buddy_destroy(&b);
	free(m.owner_of);
	free(m.frame_of);
}
END_TEST

START_TEST(compact_pinned_fails_and_defers)
{
	struct buddy b;
	struct fake_map m = { NULL, NULL, 0, PFN_NONE, 0 };
	struct buddy_migrate_ops ops = { fake_migrate, &m };
	struct compact_stats st;
	pfn_t before[32], after[32];

	ck_assert_int_eq(buddy_init(&b, 64 * MB), 0);
	ck_assert_int_eq(buddy_fragment(&b, 1.0, 3), 32);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(pinned_frames(&b, before, 32), 32);
	for (pfn_t pb = 0; pb < 32; pb++)
		ck_assert_int_eq(buddy_pageblock_mt(&b, pb << 9), MIGRATE_UNMOVABLE);
	ck_assert_uint_eq(buddy_alloc(&b, 9), PFN_NONE);
	ck_assert_uint_eq(buddy_alloc_mt(&b, 9, MIGRATE_UNMOVABLE), PFN_NONE);
	buddy_check_invariants(&b);
	/*
	 * Each pageblock keeps one free block of every order 0..8: 288 blocks,
	 * 16352 pages: 1000 - (1000 + 16352000 / 512) / 288 = 1000 - 32937 / 288
	 * = 1000 - 114 = 886.
	 */
	ck_assert_int_eq(buddy_fragmentation_index(&b, 9), 886);
	/* async: every pageblock UNMOVABLE, so no source at all */
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_ASYNC, &ops, &st), COMPACT_COMPLETE);
	ck_assert_uint_eq(st.migrate_scanned, 0);
	ck_assert_uint_eq(st.migrated, 0);
	ck_assert_uint_eq(b.compact_defer_shift, 0); /* async failures do not defer */
	/* sync: every block scanned, the pinned pages cannot be isolated */
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_LIGHT, &ops, &st), COMPACT_COMPLETE);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(st.migrated, 0);
	ck_assert_uint_eq(m.calls, 0);
	ck_assert_uint_gt(st.migrate_scanned, 0);
	ck_assert_uint_eq(pinned_frames(&b, after, 32), 32);
	for (unsigned i = 0; i < 32; i++)
		ck_assert_uint_eq(before[i], after[i]);
	/* defer_compaction(): shift 1, considered 0, order_failed 0 -> one attempt skipped */
	ck_assert_uint_eq(b.compact_defer_shift, 1);
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_LIGHT, &ops, &st), COMPACT_DEFERRED);
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_LIGHT, &ops, &st), COMPACT_COMPLETE);
	ck_assert_uint_eq(b.compact_defer_shift, 2);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_ASYNC, &ops, &st), COMPACT_DEFERRED);
	/* the fourth consideration runs; SYNC_FULL is never deferred */
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_ASYNC, &ops, &st), COMPACT_COMPLETE);
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_FULL, &ops, &st), COMPACT_COMPLETE);
	ck_assert_uint_eq(b.compact_defer_shift, 3);
	for (int i = 0; i < 10; i++)
		buddy_compact(&b, 9, COMPACT_PRIO_SYNC_FULL, &ops, &st);
	ck_assert_uint_eq(b.compact_defer_shift, COMPACT_MAX_DEFER_SHIFT);
	buddy_check_invariants(&b);
	buddy_destroy(&b);
}
END_TEST

/* Give every allocated order-0 frame an owner in @m. */
static void own_allocated(const struct buddy *b, struct fake_map *m)
{
	m->owner_of = malloc(b->nr_pages * sizeof(*m->owner_of));
	m->frame_of = malloc(b->nr_pages * sizeof(*m->frame_of));
	m->nr_owners = 0;
	m->refuse = PFN_NONE;
	m->calls = 0;
	for (pfn_t f = 0; f < b->nr_pages; f++) {
		m->owner_of[f] = -1;
		if (buddy_is_allocated(b, f, NULL)) {
			m->owner_of[f] = (int32_t)m->nr_owners;
			m->frame_of[m->nr_owners++] = f;
		}
	}
}

START_TEST(compact_not_suitable)
{
	struct buddy b;
	struct fake_map m;
	struct buddy_migrate_ops ops = { fake_migrate, &m };
	struct compact_stats st;

	/* a free order-9 block and enough memory: success without work */
	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0);
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_ASYNC, &ops, &st), COMPACT_SUCCESS);
	ck_assert_uint_eq(st.migrate_scanned + st.free_scanned + st.isolated, 0);
	ck_assert_int_eq(buddy_compact(&b, 0, COMPACT_PRIO_ASYNC, &ops, &st), COMPACT_SKIPPED);
	buddy_destroy(&b);

	/* order-0 free pages must be above LOW + compact_gap = 160 + 1024 = 1184 */
	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0);
	for (pfn_t f = 0; f < 4096; f++)
		ck_assert_uint_eq(buddy_alloc(&b, 0), f);
	for (pfn_t f = 0; f < 2 * 1184; f += 2)
		buddy_free(&b, f, 0);
	ck_assert_uint_eq(b.nr_free_pages, 1184);
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_LIGHT, &ops, &st), COMPACT_SKIPPED);
	ck_assert_uint_eq(b.compact_defer_shift, 0); /* skipped runs do not defer */
	buddy_destroy(&b);

	/*
	 * Six free order-8 runs (0, 512, ..., 2560), nothing else: 1536 free pages,
	 * 6 blocks: fragindex(9) = 1000 - (1000 + 1536000 / 512) / 6 = 1000 - 666 =
	 * 334 <= 500: the failure is lack of memory, compaction is not suitable.
	 */
	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0);
	for (pfn_t f = 0; f < 4096; f++)
		ck_assert_uint_eq(buddy_alloc(&b, 0), f);
	for (pfn_t run = 0; run < 3072; run += 512)
		for (pfn_t f = run; f < run + 256; f++)
			buddy_free(&b, f, 0);
	buddy_check_invariants(&b);
	ck_assert_uint_eq(b.free_area[8].nr_free, 6);
	ck_assert_int_eq(buddy_fragmentation_index(&b, 9), 334);
	own_allocated(&b, &m);
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_LIGHT, &ops, &st),
			 COMPACT_NOT_SUITABLE_ZONE);
	ck_assert_uint_eq(m.calls, 0);
	/*
	 * With vm.extfrag_threshold 300 it runs: pageblock 0's upper half (256..511)
	 * moves into the highest free run with room (2560..2815), and pageblock 0
	 * becomes a free order-9 block.
	 */
	b.extfrag_threshold = 300;
	ck_assert_int_eq(buddy_compact(&b, 9, COMPACT_PRIO_SYNC_LIGHT, &ops, &st), COMPACT_SUCCESS);
	buddy_check_invariants(&b);
	check_fake_map(&b, &m);
	ck_assert_uint_eq(st.migrated, 256);
	for (pfn_t f = 2560; f < 2816; f++)
		ck_assert_int_ge(m.owner_of[f], 0);
	ck_assert_uint_eq(buddy_alloc(&b, 9), 0);
	buddy_check_invariants(&b);
	buddy_destroy(&b);
	free(m.owner_of);
	free(m.frame_of);
}
END_TEST

START_TEST(watermarks_4g)
{
	struct buddy b;

	ck_assert_int_eq(buddy_init(&b, 4096 * MB), 0);
	/*
	 * 4 GiB = 1048576 pages = 4194304 kB; min_free_kbytes = int_sqrt(4194304 * 16)
	 * = int_sqrt(67108864) = 8192 (in [128, 262144]). pages_min = 8192 >> 2 = 2048
	 * = WMARK_MIN (one zone holds all of lowmem). delta = max(2048 >> 2 = 512,
	 * mult_frac(1048576, 10, 10000) = 104 * 10 + 8576 * 10 / 10000 = 1048) = 1048:
	 * LOW = 3096, HIGH = 4144, PROMO = 5192.
	 */
	ck_assert_int_eq(b.min_free_kbytes, 8192);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_MIN), 2048);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_LOW), 3096);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_HIGH), 4144);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_PROMO), 5192);
	ck_assert(buddy_watermark_ok(&b, 9, WMARK_HIGH));
	ck_assert(buddy_watermark_ok(&b, 10, WMARK_LOW));
	/*
	 * THP on: recommended = 512 * 1 zone * 2 + 512 * 1 * 3 * 3 = 5632 pages, below
	 * (1048576 - 4144) / 20 = 52221, = 22528 kB > 8192. pages_min 5632, delta =
	 * max(1408, 1048) = 1408: LOW 7040, HIGH 8448, PROMO 9856.
	 */
	buddy_set_thp_enabled(&b, true);
	ck_assert_int_eq(b.min_free_kbytes, 22528);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_MIN), 5632);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_LOW), 7040);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_HIGH), 8448);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_PROMO), 9856);
	/*
	 * THP off again: calculate_min_free_kbytes() counts the pages above the
	 * current high watermark: (1048576 - 8448) * 4 = 4160512 kB, int_sqrt(66568192)
	 * = 8158 (8159^2 = 66569281 is over); MIN 8158 >> 2 = 2039, delta = max(509,
	 * 1048): LOW 3087, HIGH 4135.
	 */
	buddy_set_thp_enabled(&b, false);
	ck_assert_int_eq(b.min_free_kbytes, 8158);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_MIN), 2039);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_LOW), 3087);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_HIGH), 4135);
	buddy_check_invariants(&b);
	buddy_destroy(&b);

	/* small memory: clamp at 128 kB (4 MiB: int_sqrt(4096 * 16) = 256 > 128, so
	 * 4 MiB gives 256 kB: MIN 64, delta max(16, 1) = 16, LOW 80, HIGH 96) */
	ck_assert_int_eq(buddy_init(&b, 4 * MB), 0);
	ck_assert_int_eq(b.min_free_kbytes, 256);
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_LOW), 80);
	buddy_destroy(&b);
}
END_TEST

START_TEST(watermark_ok_boundaries)
{
	struct buddy b;

	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0); /* MIN 128, LOW 160, HIGH 192 */
	ck_assert_uint_eq(buddy_watermark(&b, WMARK_MIN), 128);
	for (int i = 0; i < 4096 - 129; i++)
		ck_assert_uint_ne(buddy_alloc(&b, 0), PFN_NONE);
	ck_assert_uint_eq(b.nr_free_pages, 129);
	ck_assert(buddy_watermark_ok(&b, 0, WMARK_MIN));  /* 129 > 128 */
	ck_assert(!buddy_watermark_ok(&b, 1, WMARK_MIN)); /* 129 - 1 = 128 is not above */
	ck_assert(!buddy_watermark_ok(&b, 0, WMARK_LOW));
	ck_assert_uint_ne(buddy_alloc(&b, 0), PFN_NONE);
	ck_assert(!buddy_watermark_ok(&b, 0, WMARK_MIN)); /* 128 */
	buddy_destroy(&b);

	/* enough pages but no block of the order: false for order 9 */
	ck_assert_int_eq(buddy_init(&b, 16 * MB), 0);
	for (pfn_t f = 0; f < 4096; f++)
		ck_assert_uint_eq(buddy_alloc(&b, 0), f);
	for (pfn_t f = 0; f < 4096; f += 2)
		buddy_free(&b, f, 0);
	ck_assert(buddy_watermark_ok(&b, 0, WMARK_HIGH));
	ck_assert(!buddy_watermark_ok(&b, 9, WMARK_MIN));
	buddy_destroy(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("buddy");
	TCase *tc = tcase_create("buddy");

	tcase_add_test(tc, fresh_and_split);
	tcase_add_test(tc, exhaustion);
	tcase_add_test(tc, fragmentation_indices);
	tcase_add_test(tc, stress);
	tcase_add_test(tc, migrate_type_lists_and_fallback);
	tcase_add_test(tc, steal_claim_threshold);
	tcase_add_test(tc, fragment_half);
	tcase_add_test(tc, fragment_after_pool);
	tcase_add_test(tc, compact_movable_checkerboard);
	tcase_add_test(tc, compact_pinned_fails_and_defers);
	tcase_add_test(tc, compact_not_suitable);
	tcase_add_test(tc, watermarks_4g);
	tcase_add_test(tc, watermark_ok_boundaries);
	suite_add_tcase(s, tc);
	return check_run(s);
}
