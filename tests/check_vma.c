/*
 * check_vma.c - the VMA set (mm/mmap.c split_vma(), vma_merge()): exact VMA lists
 * after inserting next to and between VMAs (equal flags merge, different flags do
 * not), mmap over the middle of a VMA (remove then insert, as MAP_FIXED does),
 * munmap of partial ranges, mprotect splitting a VMA into three and re-merging
 * it; look-ups at boundaries (start inclusive, end exclusive) and the free gap;
 * and a seeded run against a page-granular reference whose maximal runs are the
 * only correct list. vma_check_invariants() after every operation.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>

#include "vma.h"

#define K4 0x1000UL
#define RW (VM_READ | VM_WRITE)
#define RO VM_READ

/* The expected list: @n triples start, end, flags. */
static void expect(const struct vma_set *s, size_t n, const unsigned long *want)
{
	vma_check_invariants(s);
	ck_assert_uint_eq(s->n, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(s->v[i].start == want[3 * i] && s->v[i].end == want[3 * i + 1] &&
				      s->v[i].flags == want[3 * i + 2],
			      "vma %zu: [%#lx, %#lx) %#lx, want [%#lx, %#lx) %#lx", i,
			      (unsigned long)s->v[i].start, (unsigned long)s->v[i].end, s->v[i].flags,
			      want[3 * i], want[3 * i + 1], want[3 * i + 2]);
	}
}

#define EXPECT(s, ...)                                                        \
	do {                                                                  \
		static const unsigned long w_[] = { __VA_ARGS__ };            \
		expect((s), ARRAY_SIZE(w_) / 3, w_);                          \
	} while (0)
#define EXPECT_EMPTY(s) expect((s), 0, NULL)

static void ins(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long flags)
{
	ck_assert_int_eq(vma_insert(s, start, end, flags), 0);
	vma_check_invariants(s);
}

static void rm(struct vma_set *s, vaddr_t start, vaddr_t end)
{
	ck_assert_int_eq(vma_remove(s, start, end), 0);
	vma_check_invariants(s);
}

static void chg(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long set,
		unsigned long clear)
{
	ck_assert_int_eq(vma_change_flags(s, start, end, set, clear), 0);
	vma_check_invariants(s);
}

START_TEST(find_at_boundaries)
{
	struct vma_set s;
	vaddr_t lo, hi;

	vma_set_init(&s);
	EXPECT_EMPTY(&s);
	ck_assert_ptr_null(vma_find(&s, 0));
	ck_assert_ptr_null(vma_find_next(&s, 0));
	vma_gap(&s, 0x5000, 0x100000, &lo, &hi);
	ck_assert_uint_eq(lo, 0);
	ck_assert_uint_eq(hi, 0x100000);

	ins(&s, 0x10000, 0x13000, RW);
	ins(&s, 0x20000, 0x21000, RO);
	EXPECT(&s, 0x10000, 0x13000, RW, 0x20000, 0x21000, RO);
	/* start inclusive, end exclusive */
	ck_assert_ptr_null(vma_find(&s, 0xffff));
	ck_assert_ptr_eq(vma_find(&s, 0x10000), &s.v[0]);
	ck_assert_ptr_eq(vma_find(&s, 0x12fff), &s.v[0]);
	ck_assert_ptr_null(vma_find(&s, 0x13000));
	ck_assert_ptr_null(vma_find(&s, 0x1ffff));
	ck_assert_ptr_eq(vma_find(&s, 0x20000), &s.v[1]);
	ck_assert_ptr_eq(vma_find(&s, 0x20fff), &s.v[1]);
	ck_assert_ptr_null(vma_find(&s, 0x21000));
	/* the first VMA ending after va */
	ck_assert_ptr_eq(vma_find_next(&s, 0), &s.v[0]);
	ck_assert_ptr_eq(vma_find_next(&s, 0x12fff), &s.v[0]);
	ck_assert_ptr_eq(vma_find_next(&s, 0x13000), &s.v[1]);
	ck_assert_ptr_eq(vma_find_next(&s, 0x20fff), &s.v[1]);
	ck_assert_ptr_null(vma_find_next(&s, 0x21000));
	/* gaps: below the first, between, above the last (clipped to the limit) */
	vma_gap(&s, 0x5000, 0x100000, &lo, &hi);
	ck_assert_uint_eq(lo, 0);
	ck_assert_uint_eq(hi, 0x10000);
	vma_gap(&s, 0x13000, 0x100000, &lo, &hi);
	ck_assert_uint_eq(lo, 0x13000);
	ck_assert_uint_eq(hi, 0x20000);
	vma_gap(&s, 0x1ffff, 0x100000, &lo, &hi);
	ck_assert_uint_eq(lo, 0x13000);
	ck_assert_uint_eq(hi, 0x20000);
	vma_gap(&s, 0x21000, 0x100000, &lo, &hi);
	ck_assert_uint_eq(lo, 0x21000);
	ck_assert_uint_eq(hi, 0x100000);
	vma_gap(&s, 0x14000, 0x18000, &lo, &hi); /* a limit below the next VMA wins */
	ck_assert_uint_eq(lo, 0x13000);
	ck_assert_uint_eq(hi, 0x18000);
	vma_set_free(&s);
}
END_TEST

START_TEST(insert_merge_rules)
{
	struct vma_set s;

	vma_set_init(&s);
	ins(&s, 0x10000, 0x20000, RW);
	/* same flags, adjacent after: one VMA */
	ins(&s, 0x20000, 0x30000, RW);
	EXPECT(&s, 0x10000, 0x30000, RW);
	/* same flags, adjacent before: one VMA */
	ins(&s, 0x8000, 0x10000, RW);
	EXPECT(&s, 0x8000, 0x30000, RW);
	/* different flags, adjacent: two */
	ins(&s, 0x30000, 0x40000, RO);
	EXPECT(&s, 0x8000, 0x30000, RW, 0x30000, 0x40000, RO);
	/* same flags but not adjacent (a one-page hole): no merge */
	ins(&s, 0x41000, 0x42000, RO);
	EXPECT(&s, 0x8000, 0x30000, RW, 0x30000, 0x40000, RO, 0x41000, 0x42000, RO);
	/* filling the hole with the same flags merges both sides into one */
	ins(&s, 0x40000, 0x41000, RO);
	EXPECT(&s, 0x8000, 0x30000, RW, 0x30000, 0x42000, RO);
	/* a hole filled with a third kind: three separate VMAs, nothing merges */
	ins(&s, 0x43000, 0x44000, RO);
	ins(&s, 0x42000, 0x43000, RW | VM_HUGEPAGE);
	EXPECT(&s, 0x8000, 0x30000, RW, 0x30000, 0x42000, RO, 0x42000, 0x43000,
	       RW | VM_HUGEPAGE, 0x43000, 0x44000, RO);
	/* VM_IMPLICIT and VM_BRK are flags like any other: no merge with plain RW */
	ins(&s, 0x4000, 0x8000, RW | VM_BRK);
	EXPECT(&s, 0x4000, 0x8000, RW | VM_BRK, 0x8000, 0x30000, RW, 0x30000, 0x42000, RO,
	       0x42000, 0x43000, RW | VM_HUGEPAGE, 0x43000, 0x44000, RO);
	/* inserted out of order: kept sorted */
	ins(&s, 0x1000, 0x2000, RW);
	ins(&s, 0x100000, 0x101000, RW);
	ins(&s, 0x50000, 0x51000, RW);
	EXPECT(&s, 0x1000, 0x2000, RW, 0x4000, 0x8000, RW | VM_BRK, 0x8000, 0x30000, RW,
	       0x30000, 0x42000, RO, 0x42000, 0x43000, RW | VM_HUGEPAGE, 0x43000, 0x44000, RO,
	       0x50000, 0x51000, RW, 0x100000, 0x101000, RW);
	vma_set_free(&s);
}
END_TEST

START_TEST(mmap_over_middle)
{
	struct vma_set s;

	/* MAP_FIXED over the middle of a VMA: unmap the range, then insert */
	vma_set_init(&s);
	ins(&s, 0x10000, 0x20000, RW);
	rm(&s, 0x14000, 0x16000);
	EXPECT(&s, 0x10000, 0x14000, RW, 0x16000, 0x20000, RW);
	ins(&s, 0x14000, 0x16000, RO);
	EXPECT(&s, 0x10000, 0x14000, RW, 0x14000, 0x16000, RO, 0x16000, 0x20000, RW);
	/* the same again with the original flags: the three become one */
	rm(&s, 0x14000, 0x16000);
	ins(&s, 0x14000, 0x16000, RW);
	EXPECT(&s, 0x10000, 0x20000, RW);
	/* over the head and over the tail */
	rm(&s, 0x10000, 0x11000);
	ins(&s, 0x10000, 0x11000, RO);
	rm(&s, 0x1f000, 0x20000);
	ins(&s, 0x1f000, 0x20000, RO);
	EXPECT(&s, 0x10000, 0x11000, RO, 0x11000, 0x1f000, RW, 0x1f000, 0x20000, RO);
	vma_set_free(&s);
}
END_TEST

START_TEST(munmap_partial)
{
	struct vma_set s;

	vma_set_init(&s);
	ins(&s, 0x10000, 0x20000, RW);
	ins(&s, 0x30000, 0x40000, RO);
	ins(&s, 0x50000, 0x60000, RW);
	/* nothing there, empty and inverted ranges: no change */
	rm(&s, 0x20000, 0x30000);
	rm(&s, 0x18000, 0x18000);
	rm(&s, 0x19000, 0x18000);
	EXPECT(&s, 0x10000, 0x20000, RW, 0x30000, 0x40000, RO, 0x50000, 0x60000, RW);
	/* the head of one */
	rm(&s, 0xf000, 0x11000);
	EXPECT(&s, 0x11000, 0x20000, RW, 0x30000, 0x40000, RO, 0x50000, 0x60000, RW);
	/* the tail of one */
	rm(&s, 0x1f000, 0x21000);
	EXPECT(&s, 0x11000, 0x1f000, RW, 0x30000, 0x40000, RO, 0x50000, 0x60000, RW);
	/* the middle of one: two pieces, same flags, not adjacent */
	rm(&s, 0x34000, 0x35000);
	EXPECT(&s, 0x11000, 0x1f000, RW, 0x30000, 0x34000, RO, 0x35000, 0x40000, RO, 0x50000,
	       0x60000, RW);
	/* across gaps and VMAs: the tail of the first, two whole, the head of the last */
	rm(&s, 0x1e000, 0x51000);
	EXPECT(&s, 0x11000, 0x1e000, RW, 0x51000, 0x60000, RW);
	/* exactly one whole VMA */
	rm(&s, 0x51000, 0x60000);
	EXPECT(&s, 0x11000, 0x1e000, RW);
	/* everything */
	rm(&s, 0, 0x1000000);
	EXPECT_EMPTY(&s);
	vma_set_free(&s);
}
END_TEST

START_TEST(mprotect_split_and_remerge)
{
	struct vma_set s;

	vma_set_init(&s);
	ins(&s, 0x10000, 0x20000, RW);
	/* mprotect(PROT_READ) on the middle: three VMAs */
	chg(&s, 0x14000, 0x18000, 0, VM_WRITE);
	EXPECT(&s, 0x10000, 0x14000, RW, 0x14000, 0x18000, RO, 0x18000, 0x20000, RW);
	/* back to RW: one again */
	chg(&s, 0x14000, 0x18000, VM_WRITE, 0);
	EXPECT(&s, 0x10000, 0x20000, RW);
	/* a change that changes nothing splits nothing */
	chg(&s, 0x14000, 0x18000, VM_READ, 0);
	EXPECT(&s, 0x10000, 0x20000, RW);
	/* at the edges: two VMAs each time */
	chg(&s, 0x10000, 0x12000, VM_HUGEPAGE, 0);
	EXPECT(&s, 0x10000, 0x12000, RW | VM_HUGEPAGE, 0x12000, 0x20000, RW);
	chg(&s, 0x1e000, 0x20000, VM_HUGEPAGE, 0);
	EXPECT(&s, 0x10000, 0x12000, RW | VM_HUGEPAGE, 0x12000, 0x1e000, RW, 0x1e000, 0x20000,
	       RW | VM_HUGEPAGE);
	/* the middle too: all three equal, one VMA */
	chg(&s, 0x12000, 0x1e000, VM_HUGEPAGE, 0);
	EXPECT(&s, 0x10000, 0x20000, RW | VM_HUGEPAGE);
	/* a range covering a gap: the gap is skipped, each side changes and splits */
	ins(&s, 0x30000, 0x40000, RW | VM_HUGEPAGE);
	chg(&s, 0x1c000, 0x34000, VM_NOHUGEPAGE, VM_HUGEPAGE);
	EXPECT(&s, 0x10000, 0x1c000, RW | VM_HUGEPAGE, 0x1c000, 0x20000, RW | VM_NOHUGEPAGE,
	       0x30000, 0x34000, RW | VM_NOHUGEPAGE, 0x34000, 0x40000, RW | VM_HUGEPAGE);
	/* several VMAs made equal at once merge into one (set and clear together) */
	ins(&s, 0x20000, 0x30000, RO);
	chg(&s, 0x10000, 0x40000, RW, VM_HUGEPAGE | VM_NOHUGEPAGE);
	EXPECT(&s, 0x10000, 0x40000, RW);
	vma_set_free(&s);
}
END_TEST

/*
 * A seeded run of inserts, removes and flag changes over 64 pages, compared after
 * each with a reference holding the flags of every page (0: unmapped): the list
 * must be exactly the reference's maximal runs of equal non-zero flags.
 */
#define NPG 64
static const unsigned long flag_kinds[] = { RW, RO, RW | VM_HUGEPAGE, RO | VM_EXEC };

static void compare_ref(const struct vma_set *s, const unsigned long *ref, int step)
{
	size_t k = 0;

	/* plain tests, one ck_abort_msg on a difference: ck_assert per page is slow */
	vma_check_invariants(s);
	for (unsigned p = 0; p < NPG;) {
		unsigned q = p;

		if (!ref[p]) {
			if (vma_find(s, (vaddr_t)p * K4))
				ck_abort_msg("step %d: page %u mapped, not in the reference", step, p);
			p++;
			continue;
		}
		while (q < NPG && ref[q] == ref[p])
			q++;
		if (k >= s->n || s->v[k].start != (vaddr_t)p * K4 || s->v[k].end != (vaddr_t)q * K4 ||
		    s->v[k].flags != ref[p] || vma_find(s, (vaddr_t)p * K4) != &s->v[k] ||
		    vma_find(s, (vaddr_t)q * K4 - 1) != &s->v[k])
			ck_abort_msg("step %d: vma %zu is not pages [%u, %u) %#lx", step, k, p, q,
				     ref[p]);
		k++;
		p = q;
	}
	if (s->n != k)
		ck_abort_msg("step %d: %zu VMAs, the reference has %zu", step, s->n, k);
}

START_TEST(random_against_reference)
{
	struct vma_set s;
	unsigned long ref[NPG] = { 0 };
	uint64_t seed = 2024;
	unsigned inserts = 0;

	vma_set_init(&s);
	for (int step = 0; step < 20000; step++) {
		unsigned a, b, op;
		unsigned long f;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		a = (unsigned)(seed >> 33) % NPG;
		b = a + 1 + (unsigned)(seed >> 45) % 8;
		if (b > NPG)
			b = NPG;
		op = (unsigned)(seed >> 20) % 3;
		f = flag_kinds[(seed >> 55) % ARRAY_SIZE(flag_kinds)];
		if (op == 0) { /* insert [a, b') where b' stops at the first mapped page */
			unsigned e = a;

			while (e < b && !ref[e])
				e++;
			if (e == a)
				continue;
			ins(&s, (vaddr_t)a * K4, (vaddr_t)e * K4, f);
			for (unsigned p = a; p < e; p++)
				ref[p] = f;
			inserts++;
		} else if (op == 1) {
			rm(&s, (vaddr_t)a * K4, (vaddr_t)b * K4);
			for (unsigned p = a; p < b; p++)
				ref[p] = 0;
		} else { /* toggle VM_WRITE and VM_HUGEPAGE in opposite directions */
			unsigned long set = (seed & 1) ? VM_WRITE : VM_HUGEPAGE;
			unsigned long clear = set == VM_WRITE ? VM_HUGEPAGE : VM_WRITE;

			chg(&s, (vaddr_t)a * K4, (vaddr_t)b * K4, set, clear);
			for (unsigned p = a; p < b; p++)
				if (ref[p])
					ref[p] = (ref[p] & ~clear) | set;
		}
		compare_ref(&s, ref, step);
	}
	ck_assert_uint_gt(inserts, 1000);
	vma_set_free(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vma");
	TCase *tc = tcase_create("vma");

	tcase_add_test(tc, find_at_boundaries);
	tcase_add_test(tc, insert_merge_rules);
	tcase_add_test(tc, mmap_over_middle);
	tcase_add_test(tc, munmap_partial);
	tcase_add_test(tc, mprotect_split_and_remerge);
	tcase_add_test(tc, random_against_reference);
	suite_add_tcase(s, tc);
	return check_run(s);
}
