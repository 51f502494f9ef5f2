/*
 * check_mmu.c - the hardware alone: struct mmu driven through its fault hook by
 * a stub OS (a page table and a counter, no kernel: sim.h is not included). Exact
 * counts for the counting rules: a first touch is one L1 miss, one STLB miss,
 * one walk and one fault; a repeat is a hit; a full walk reads one entry per
 * level; an invalidation makes the next access walk again without a fault; a
 * store to a read-only translation vectors to the hook with wp set. The MMU's
 * invariants (every TLB and PWC entry agrees with the page table) after every
 * operation.
 */
#include <check.h>
#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mmu.h"
#include "pagetable.h"

/* The stub OS: maps a fresh 4K (or 2M) frame on a fault, counts what it was asked. */
struct stub_os {
	struct pagetable pt;
	pfn_t next_frame;
	unsigned faults, wp_faults;
	vaddr_t last_va;
	bool last_write, last_wp;
	bool readonly; /* map new pages read-only */
	bool huge;     /* map 2M pages */
	bool gig;      /* map 1G pages */
	bool refuse;   /* fail every fault */
};

static struct stub_os O;
static struct mmu M;
static struct sim_config C;

static pfn_t frame_alloc(void *ctx)
{
	struct stub_os *o = ctx;

	return o->next_frame++;
}

static void frame_free(void *ctx, pfn_t pfn)
{
	(void)ctx;
	(void)pfn;
}

static int stub_fault(void *os, vaddr_t va, bool write, bool wp)
{
	struct stub_os *o = os;
	vaddr_t p = va & ~(PAGE_SIZE - 1);

	o->last_va = va;
	o->last_write = write;
	o->last_wp = wp;
	if (o->refuse)
		return -1;
	if (wp) {
		/* a spurious write-protect fault: make the PTE writable, INVLPG it */
		o->wp_faults++;
		ck_assert_uint_eq(pt_protect_range(&o->pt, p, p + PAGE_SIZE, true, PFN_NONE, PFN_NONE), 1);
		mmu_invalidate_range(&M, p, p + PAGE_SIZE);
		return 0;
	}
	o->faults++;
	if (o->gig) {
		o->next_frame = (o->next_frame + (1ULL << 18) - 1) & ~(pfn_t)((1ULL << 18) - 1);
		o->next_frame += 1ULL << 18;
		return pt_map(&o->pt, va & ~(PUD_SIZE - 1), PS_1G, o->next_frame - (1ULL << 18), !o->readonly);
	}
	if (o->huge) {
		o->next_frame = (o->next_frame + HPAGE_PMD_NR - 1) & ~(pfn_t)(HPAGE_PMD_NR - 1);
		o->next_frame += HPAGE_PMD_NR;
		return pt_map(&o->pt, va & ~(PMD_SIZE - 1), PS_2M, o->next_frame - HPAGE_PMD_NR, !o->readonly);
	}
	return pt_map(&o->pt, p, PS_4K, o->next_frame++, !o->readonly);
}

/* Build a machine of the default geometry with @levels paging levels, PWCs if @pwc. */
static void start(unsigned levels, bool pwc)
{
	struct pt_frame_ops ops = { frame_alloc, frame_free, &O };

	config_defaults(&C);
	C.levels = levels;
	if (!pwc)
		for (int i = 0; i < PWC_NR; i++)
			C.pwc[i].entries = 0;
	memset(&O, 0, sizeof(O));
	O.next_frame = 16;
	ck_assert_int_eq(pt_init(&O.pt, levels, &ops), 0);
	ck_assert_int_eq(mmu_init(&M, &C, &O.pt, stub_fault, &O), 0);
	mmu_check_invariants(&M);
}

static void no_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	(void)ctx;
	(void)va;
	(void)ps;
	(void)pfn;
	(void)entry;
}

static void stop(void)
{
	mmu_check_invariants(&M);
	pt_check_invariants(&O.pt);
	mmu_destroy(&M);
	pt_unmap_range(&O.pt, 0, M.va_limit, true, no_leaf, NULL);
	pt_destroy(&O.pt);
}

/* One access, its memo folded into the counters, the invariants checked. */
static void ref(vaddr_t va, enum tlb_side side, bool write)
{
	if (side == SIDE_I)
		mmu_access(&M, va, SIDE_I, false);
	else if (write)
		mmu_access(&M, va, SIDE_D, true);
	else
		mmu_access(&M, va, SIDE_D, false);
	mmu_fold_memo(&M);
	mmu_check_invariants(&M);
}

static uint64_t l1_misses(enum tlb_side side)
{
	uint64_t n = 0;

	for (int ps = 0; ps < PS_NR; ps++)
		n += M.st.l1[side].misses[ps];
	return n;
}

START_TEST(first_touch_then_hit)
{
	start(4, true);
	ref(0x10000, SIDE_D, false);
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], 1);
	ck_assert_uint_eq(l1_misses(SIDE_D), 1);
	ck_assert_uint_eq(M.st.stlb.misses, 1);
	ck_assert_uint_eq(M.st.stlb.hits, 0);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(O.faults, 1);
	ck_assert_uint_eq(O.last_va, 0x10000);
	ck_assert(!O.last_write && !O.last_wp);
	/* a repeat (same page, other offset, a store to a writable page): an L1 hit */
	ref(0x10ff8, SIDE_D, true);
	ref(0x10008, SIDE_D, false);
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], 2);
	ck_assert_uint_eq(l1_misses(SIDE_D), 1);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(O.faults, 1);
	ck_assert_uint_eq(O.wp_faults, 0);
	/* the same page on the I side: an iTLB miss whose STLB probe hits, no walk */
	ref(0x10000, SIDE_I, false);
	ck_assert_uint_eq(M.st.l1[SIDE_I].misses[PS_4K], 1);
	ck_assert_uint_eq(M.st.stlb.hits, 1);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(O.faults, 1);
	stop();
}
END_TEST

/* Entries a walk of @va reads after a full flush (the translation already exists). */
static uint64_t reads_of_rewalk(vaddr_t va)
{
	uint64_t before, walks = M.st.walks;
	unsigned faults = O.faults;

	mmu_flush_all(&M);
	mmu_check_invariants(&M);
	before = M.st.pte_reads;
	ref(va, SIDE_D, false);
	ck_assert_uint_eq(M.st.walks, walks + 1);
	ck_assert_uint_eq(O.faults, faults); /* mapped already: no fault */
	return M.st.pte_reads - before;
}

START_TEST(walk_length_4_levels)
{
	start(4, false);
	ref(0x40000000, SIDE_D, false);
	/* the first walk stops at the empty PML4E, then re-reads from the root */
	ck_assert_uint_eq(M.st.pte_reads, 1 + 4);
	ck_assert_uint_eq(reads_of_rewalk(0x40000000), 4);
	ck_assert_uint_eq(M.st.pwc[PWC_PDE].hits + M.st.pwc[PWC_PDE].misses, 0); /* PWCs off */
	stop();
}
END_TEST

START_TEST(walk_length_5_levels)
{
	start(5, false);
	ref(0x40000000, SIDE_D, false);
	ck_assert_uint_eq(M.st.pte_reads, 1 + 5);
	ck_assert_uint_eq(reads_of_rewalk(0x40000000), 5);
	stop();
}
END_TEST

START_TEST(pwc_shortens_walk)
{
	start(4, true);
	ref(0x40000000, SIDE_D, false);
	ref(0x40001000, SIDE_D, false); /* same PT: PDE cache hit, one read + the re-read */
	ck_assert_uint_eq(M.st.pwc[PWC_PDE].hits, 1);
	ck_assert_uint_eq(O.faults, 2);
	/* a flush empties the PWCs too: the rewalk reads every level */
	ck_assert_uint_eq(reads_of_rewalk(0x40001000), 4);
	stop();
}
END_TEST

START_TEST(invalidate_range_rewalks_without_fault)
{
	start(4, true);
	ref(0x10000, SIDE_D, false);
	ref(0x20000, SIDE_D, false);
	ck_assert_uint_eq(M.st.walks, 2);
	mmu_invalidate_range(&M, 0x10000, 0x11000);
	mmu_check_invariants(&M);
	ck_assert_uint_eq(M.last_vpn[SIDE_D], VPN_NONE); /* the memo is forgotten */
	ref(0x10000, SIDE_D, false);
	ck_assert_uint_eq(M.st.walks, 3);
	ck_assert_uint_eq(M.st.stlb.misses, 3); /* the STLB lost it too */
	ck_assert_uint_eq(l1_misses(SIDE_D), 3);
	ck_assert_uint_eq(O.faults, 2);
	/* the other page stays: a hit */
	ref(0x20000, SIDE_D, false);
	ck_assert_uint_eq(M.st.walks, 3);
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], 1);
	stop();
}
END_TEST

START_TEST(store_to_readonly_is_wp_fault)
{
	start(4, true);
	O.readonly = true;
	ref(0x30000, SIDE_D, false); /* maps a read-only page */
	ck_assert_uint_eq(O.faults, 1);
	ck_assert_uint_eq(O.wp_faults, 0);
	ref(0x30010, SIDE_D, true); /* L1 hit on a read-only entry: #PF with wp */
	ck_assert_uint_eq(O.faults, 1);
	ck_assert_uint_eq(O.wp_faults, 1);
	ck_assert(O.last_write && O.last_wp);
	ck_assert_uint_eq(O.last_va, 0x30010);
	/* the store restarted after the INVLPG: missed, walked, now writable */
	ck_assert_uint_eq(M.st.walks, 2);
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], 1);
	ck_assert_uint_eq(l1_misses(SIDE_D), 2);
	ref(0x30020, SIDE_D, true);
	ck_assert_uint_eq(O.wp_faults, 1);
	ck_assert_uint_eq(M.st.walks, 2);
	stop();
}
END_TEST

START_TEST(first_store_to_readonly_mapping_in_one_walk)
{
	start(4, true);
	O.readonly = true;
	ref(0x50000, SIDE_D, true); /* not present, then read-only: two faults, one walk */
	ck_assert_uint_eq(O.faults, 1);
	ck_assert_uint_eq(O.wp_faults, 1);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(l1_misses(SIDE_D), 1);
	stop();
}
END_TEST

START_TEST(refused_fault_fills_nothing)
{
	start(4, true);
	O.refuse = true;
	ref(0x60000, SIDE_D, false);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K] + M.st.l1[SIDE_D].hits[PS_4K], 0);
	ck_assert_uint_eq(M.tlb.l1[SIDE_D][PS_4K].nr_valid, 0);
	ck_assert_uint_eq(M.last_vpn[SIDE_D], VPN_NONE);
	ck_assert_uint_eq(O.last_va, 0x60000);
	stop();
}
END_TEST

START_TEST(beyond_paging_levels_faults_without_walk_reads)
{
	start(4, true);
	O.refuse = true; /* the OS refuses, as the kernel does for an address it cannot map */
	ref(1ULL << 48, SIDE_D, false);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(M.st.pte_reads, 0);
	ck_assert_uint_eq(O.last_va, 1ULL << 48);
	stop();
}
END_TEST

START_TEST(huge_page_counts_as_2m)
{
	start(4, true);
	O.huge = true;
	ref(0x40000000, SIDE_D, false);
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_2M], 1);
	ck_assert_uint_eq(O.faults, 1);
	ref(0x40100000, SIDE_D, false); /* same 2M page: a 2M hit */
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_2M], 1);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(M.st.pwc[PWC_PDE].hits + M.st.pwc[PWC_PDE].misses, 1); /* probed once */
	ck_assert_uint_eq(M.pwc[PWC_PDE].nr_valid, 0); /* no PDE-cache entry for a 2M leaf */
	stop();
}
END_TEST

/*
 * A 1 GiB page on a machine with no 1G TLB entries (the default, Nehalem-class:
 * L1 arrays of 4K and 2M, a 4K STLB): each level caches the fracture holding
 * the address, an entry of the largest size it holds (SDM Vol. 3A §4.10.2.3),
 * so a repeat in the same 2 MiB hits instead of walking every time.
 */
START_TEST(gig_page_fractures_into_largest_size_held)
{
	start(4, true);
	O.gig = true;
	ref(0x40000000, SIDE_D, false);
	ck_assert_uint_eq(O.faults, 1);
	ck_assert_uint_eq(M.st.walks, 1);
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_2M], 1); /* counted as the entry it fills */
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_1G], 0);
	ck_assert_uint_eq(M.tlb.l1[SIDE_D][PS_2M].nr_valid, 1);
	ck_assert_uint_eq(M.tlb.stlb[0].nr_valid, 1); /* the 4K STLB: a 4K fracture */
	ref(0x40100000, SIDE_D, false); /* same 2M fracture: an L1 hit, no walk */
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_2M], 1);
	ck_assert_uint_eq(M.st.walks, 1);
	ref(0x40000800, SIDE_D, true);
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_2M], 2);
	ck_assert_uint_eq(M.st.walks, 1);
	ref(0x40200000, SIDE_D, false); /* another 2 MiB of the page: a walk, no fault */
	ck_assert_uint_eq(M.st.walks, 2);
	ck_assert_uint_eq(M.st.stlb.misses, 2);
	ck_assert_uint_eq(O.faults, 1);
	ref(0x40300000, SIDE_I, false); /* the iTLB too: its 2M array takes the fracture */
	ck_assert_uint_eq(M.st.l1[SIDE_I].misses[PS_2M], 1);
	ref(0x40300040, SIDE_I, false);
	ck_assert_uint_eq(M.st.l1[SIDE_I].hits[PS_2M], 1);
	ck_assert_uint_eq(M.st.walks, 3);
	stop();
}
END_TEST

/* No 2M entries either: 4K fractures. A 1G array on one side: no fracture there. */
START_TEST(gig_page_fractures_into_4k_and_not_where_1g_is_held)
{
	start(4, true);
	mmu_destroy(&M);
	C.l1d[PS_2M] = (struct array_cfg){ 0, 0 };
	C.l1i[PS_1G] = (struct array_cfg){ 4, 4 };
	ck_assert_int_eq(mmu_init(&M, &C, &O.pt, stub_fault, &O), 0);
	O.gig = true;
	ref(0x40000000, SIDE_D, false);
	ref(0x40000010, SIDE_D, false);
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], 1);
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], 1);
	ref(0x40001000, SIDE_D, false); /* the next 4K: L1 and STLB miss, a walk */
	ck_assert_uint_eq(M.st.walks, 2);
	ref(0x40000020, SIDE_D, false); /* the first 4K is still cached */
	ck_assert_uint_eq(M.st.walks, 2);
	ref(0x40400000, SIDE_I, false);
	ck_assert_uint_eq(M.st.l1[SIDE_I].misses[PS_1G], 1);
	ref(0x40600000, SIDE_I, false); /* the iTLB's 1G entry covers it */
	ck_assert_uint_eq(M.st.l1[SIDE_I].hits[PS_1G], 1);
	ck_assert_uint_eq(M.st.walks, 3);
	stop();
}
END_TEST

/* INVLPG of one address of a fractured 1G page removes every fracture (SDM §4.10.4.1). */
START_TEST(gig_invalidate_removes_every_fracture)
{
	start(4, true);
	O.gig = true;
	ref(0x40000000, SIDE_D, false);
	ref(0x40200000, SIDE_D, false);
	ref(0x7fe00000, SIDE_I, false);
	ck_assert_uint_eq(M.tlb.l1[SIDE_D][PS_2M].nr_valid, 2);
	ck_assert_uint_eq(M.tlb.l1[SIDE_I][PS_2M].nr_valid, 1);
	ck_assert_uint_eq(M.tlb.stlb[0].nr_valid, 3);
	mmu_invalidate_range(&M, 0x40000000, 0x40001000);
	mmu_check_invariants(&M);
	ck_assert_uint_eq(M.tlb.l1[SIDE_D][PS_2M].nr_valid, 0);
	ck_assert_uint_eq(M.tlb.l1[SIDE_I][PS_2M].nr_valid, 0);
	ck_assert_uint_eq(M.tlb.stlb[0].nr_valid, 0);
	ref(0x40200000, SIDE_D, false); /* walks again, no fault */
	ck_assert_uint_eq(M.st.walks, 4);
	ck_assert_uint_eq(O.faults, 1);
	/* an invalidation elsewhere leaves the fractures alone */
	mmu_invalidate_range(&M, 0x10000, 0x11000);
	ck_assert_uint_eq(M.tlb.l1[SIDE_D][PS_2M].nr_valid, 1);
	stop();
}
END_TEST

static Suite *mmu_suite(void)
{
	Suite *s = suite_create("mmu");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, first_touch_then_hit);
	tcase_add_test(tc, walk_length_4_levels);
	tcase_add_test(tc, walk_length_5_levels);
	tcase_add_test(tc, pwc_shortens_walk);
	tcase_add_test(tc, invalidate_range_rewalks_without_fault);
	tcase_add_test(tc, store_to_readonly_is_wp_fault);
	tcase_add_test(tc, first_store_to_readonly_mapping_in_one_walk);
	tcase_add_test(tc, refused_fault_fills_nothing);
	tcase_add_test(tc, beyond_paging_levels_faults_without_walk_reads);
	tcase_add_test(tc, huge_page_counts_as_2m);
	tcase_add_test(tc, gig_page_fractures_into_largest_size_held);
	tcase_add_test(tc, gig_page_fractures_into_4k_and_not_where_1g_is_held);
	tcase_add_test(tc, gig_invalidate_removes_every_fracture);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(mmu_suite());
}
