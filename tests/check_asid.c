/*
 * check_asid.c - context switches on one CPU: asid.c (Linux 6.18's
 * choose_new_asid() / switch_mm_irqs_off() / flush_tlb_mm_range()) driving
 * the MMU's PCID-tagged TLBs (mmu_load_cr3(), mmu_invpcid()). A stub machine:
 * processes, each a page table and an asid_mm, whose faults map fresh 4K
 * frames into the running process's table. Exact counts: which switches flush,
 * how many entries they drop, and the L1 / STLB hits and misses that follow.
 * After every step every PCID's cached entries are checked against the table
 * of the process holding that PCID (mmu_check_pcid()), so a translation that
 * leaked from one address space into another aborts the test.
 */
#include <check.h>
#include "check_run.h"
#include <string.h>

#include "asid.h"
#include "config.h"
#include "mmu.h"
#include "pagetable.h"

#define NPROC 8
#define NPAGES 8 /* pages a process touches in a quantum */

struct proc {
	struct pagetable pt;
	struct asid_mm mm;
	bool stale; /* its table changed with no flush yet: its cached entries may disagree */
};

static struct proc P[NPROC];
static unsigned nproc, cur;
static struct mmu M;
static struct asid_cpu CPU;
static struct sim_config C;
static pfn_t next_frame;
static unsigned faults;
static uint64_t last_ctx_id;

static pfn_t frame_alloc(void *ctx)
{
	(void)ctx;
	return next_frame++;
}

static void frame_free(void *ctx, pfn_t pfn)
{
	(void)ctx;
	(void)pfn;
}

/* The running process's #PF: a fresh writable 4K frame. */
static int fault(void *os, vaddr_t va, bool write, bool wp)
{
	(void)os;
	(void)write;
	ck_assert(!wp);
	faults++;
	return pt_map(&P[cur].pt, va & ~(PAGE_SIZE - 1), PS_4K, next_frame++, true);
}

/* @n processes, PCIDs if @pcid, page-walk caches if @pwc; nothing loaded yet (init_mm). */
static void start(unsigned n, bool pcid, bool pwc)
{
	struct pt_frame_ops ops = { frame_alloc, frame_free, NULL };

	config_defaults(&C);
	C.pcid = pcid;
	if (!pwc)
		for (int i = 0; i < PWC_NR; i++)
			C.pwc[i].entries = 0;
	next_frame = 16;
	faults = 0;
	nproc = n;
	cur = 0;
	last_ctx_id = ASID_INIT_MM_CTX_ID;
	memset(P, 0, sizeof(P));
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(pt_init(&P[i].pt, C.levels, &ops), 0);
		asid_mm_init(&P[i].mm, &last_ctx_id);
	}
	ck_assert_uint_eq(P[0].mm.ctx_id, 2); /* init_mm is 1 */
	ck_assert_int_eq(mmu_init(&M, &C, &P[0].pt, fault, NULL), 0);
	asid_cpu_init(&CPU, pcid);
}

/* The PCID process @i's entries carry, or -1 if it holds no ASID on the CPU. */
static int pcid_of(unsigned i)
{
	if (!CPU.pcid)
		return CPU.loaded_mm == &P[i].mm ? 0 : -1;
	for (unsigned a = 0; a < TLB_NR_DYN_ASIDS; a++)
		if (CPU.ctxs[a].ctx_id == P[i].mm.ctx_id)
			return (int)asid_kern_pcid(a);
	return -1;
}

/* Every invariant: the MMU's, the CPU's, and each process's cached entries against its table. */
static void check(void)
{
	mmu_fold_memo(&M);
	mmu_check_invariants(&M);
	asid_check_invariants(&CPU, CPU.loaded_mm ? &M : NULL);
	for (unsigned i = 0; i < nproc; i++) {
		int p = pcid_of(i);

		if (p >= 0 && !P[i].stale)
			mmu_check_pcid(&M, (unsigned)p, &P[i].pt);
	}
}

static void stop(void)
{
	check();
	pt_check_invariants(&P[cur].pt);
	mmu_destroy(&M);
	for (unsigned i = 0; i < nproc; i++) {
		pt_unmap_range(&P[i].pt, 0, M.va_limit, true, NULL, NULL);
		pt_destroy(&P[i].pt);
	}
}

/* A context switch to process @i; returns whether its CR3 load flushed. */
static bool switch_to(unsigned i)
{
	bool flushed;

	cur = i;
	flushed = asid_switch_mm(&CPU, &M, &P[i].mm, &P[i].pt);
	P[i].stale = false; /* a flush, or its slot was up to date */
	check();
	return flushed;
}

/* A quantum: NPAGES loads at @base, then the same again (the second pass hits). */
static void quantum(vaddr_t base)
{
	for (int pass = 0; pass < 2; pass++)
		for (unsigned k = 0; k < NPAGES; k++)
			mmu_access(&M, base + k * PAGE_SIZE, SIDE_D, false);
	check();
}

/* Process @i's own pages: disjoint from every other's, so no set holds more than 4 of them. */
static vaddr_t own(unsigned i)
{
	return 0x10000000 + (vaddr_t)i * NPAGES * PAGE_SIZE;
}

/*
 * Seven processes round robin with PCIDs: six dynamic ASIDs, so every switch
 * finds its mm's slot taken and flushes. Round 1: processes 0..4 take the
 * free slots 1..5, process 5 takes slot 0 (init_mm's), process 6 takes slot 1
 * from process 0; from then on each process takes the slot of the one that
 * ran six switches before it. Each flush drops the previous holder's 8 L1D
 * and 8 STLB entries, except the first six (new PCIDs, nothing cached).
 */
START_TEST(seven_round_robin_flushes_every_switch)
{
	const unsigned rounds = 4, sw = 7 * rounds;

	start(7, true, false);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 7; i++) {
			ck_assert(switch_to(i));
			ck_assert_uint_eq(mmu_pcid_entries(&M, M.pcid), 0); /* flushed or new */
			quantum(own(i));
		}
	ck_assert_uint_eq(CPU.st.switches, sw);
	ck_assert_uint_eq(CPU.st.switch_flushes, sw);
	ck_assert_uint_eq(CPU.st.asid_allocs, sw);
	ck_assert_uint_eq(CPU.st.asid_steals, sw - 5);
	ck_assert_uint_eq(CPU.st.stale_flushes, 0);
	ck_assert_uint_eq(M.st.cr3_loads, sw);
	ck_assert_uint_eq(M.st.cr3_flushes, sw);
	ck_assert_uint_eq(M.st.cr3_flushed, (sw - 6) * 2 * NPAGES);
	/* nothing survives a switch: each quantum misses its 8 pages, then hits them */
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], sw * NPAGES);
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], sw * NPAGES);
	ck_assert_uint_eq(M.st.stlb.hits, 0);
	ck_assert_uint_eq(M.st.stlb.misses, sw * NPAGES);
	ck_assert_uint_eq(M.st.walks, sw * NPAGES);
	ck_assert_uint_eq(faults, 7 * NPAGES);
	/* switch k takes slot k mod 6 (1..5, then 0 when next_asid wraps): the 28th slot 4 */
	ck_assert_uint_eq(CPU.loaded_mm_asid, 28 % 6);
	ck_assert_uint_eq(CPU.next_asid, 28 % 6 + 1);
	stop();
}
END_TEST

/*
 * Six processes: each keeps its ASID, so only the first round flushes (new
 * PCIDs, nothing to drop) and every later quantum hits all its pages in the L1.
 */
START_TEST(six_round_robin_flushes_first_round_only)
{
	const unsigned rounds = 4, sw = 6 * rounds;

	start(6, true, false);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 6; i++) {
			ck_assert(switch_to(i) == (r == 0));
			quantum(own(i));
		}
	ck_assert_uint_eq(CPU.st.switches, sw);
	ck_assert_uint_eq(CPU.st.switch_flushes, 6);
	ck_assert_uint_eq(CPU.st.asid_allocs, 6);
	ck_assert_uint_eq(CPU.st.asid_steals, 1); /* init_mm's slot 0 */
	ck_assert_uint_eq(M.st.cr3_loads, sw);
	ck_assert_uint_eq(M.st.cr3_flushes, 6);
	ck_assert_uint_eq(M.st.cr3_flushed, 0);
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], 6 * NPAGES);
	ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], (2 * sw - 6) * NPAGES);
	ck_assert_uint_eq(M.st.stlb.misses, 6 * NPAGES);
	ck_assert_uint_eq(M.st.walks, 6 * NPAGES);
	ck_assert_uint_eq(M.st.stlb.hits, 0);
	/* all six processes' 48 pages are cached at once, each under its own PCID */
	for (unsigned i = 0; i < 6; i++)
		ck_assert_uint_eq(mmu_pcid_entries(&M, (unsigned)pcid_of(i)), 2 * NPAGES);
	stop();
}
END_TEST

/*
 * PCID off (cpu.pcid false, Nehalem): ASID 0 for every mm and every CR3 load
 * flushes all non-global entries: from the second switch on, the 16 entries
 * (8 L1D, 8 STLB) the previous process left.
 */
START_TEST(pcid_off_flushes_every_switch)
{
	const unsigned rounds = 3, sw = 6 * rounds;

	start(6, false, false);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 6; i++) {
			ck_assert(switch_to(i));
			ck_assert_uint_eq(M.pcid, 0);
			ck_assert_uint_eq(CPU.loaded_mm_asid, 0);
			quantum(own(i));
		}
	ck_assert_uint_eq(CPU.st.switch_flushes, sw);
	ck_assert_uint_eq(CPU.st.asid_allocs, 0);
	ck_assert_uint_eq(M.st.cr3_loads, sw);
	ck_assert_uint_eq(M.st.cr3_flushes, sw);
	ck_assert_uint_eq(M.st.cr3_flushed, (sw - 1) * 2 * NPAGES);
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], sw * NPAGES);
	ck_assert_uint_eq(M.st.walks, sw * NPAGES);
	stop();
}
END_TEST

/*
 * Switch and return with PCIDs: two processes touch the same virtual pages
 * (their own frames). Neither hits the other's entries (each misses and
 * faults its first time), and on return each hits all 8 pages in the L1:
 * no STLB lookup, no walk. With PCIDs off the return walks all 8 again.
 */
static void switch_and_return(bool pcid)
{
	const vaddr_t va = 0x20000000;
	uint64_t misses, hits, stlb, walks;

	start(2, pcid, true);
	switch_to(0);
	quantum(va);
	switch_to(1);
	quantum(va);
	ck_assert_uint_eq(faults, 2 * NPAGES); /* B did not use A's translations */
	ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], 2 * NPAGES);
	misses = M.st.l1[SIDE_D].misses[PS_4K];
	hits = M.st.l1[SIDE_D].hits[PS_4K];
	stlb = M.st.stlb.hits + M.st.stlb.misses;
	walks = M.st.walks;
	ck_assert(switch_to(0) == !pcid);
	quantum(va);
	if (pcid) {
		ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], misses);
		ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], hits + 2 * NPAGES);
		ck_assert_uint_eq(M.st.stlb.hits + M.st.stlb.misses, stlb);
		ck_assert_uint_eq(M.st.walks, walks);
		ck_assert_uint_eq(M.st.cr3_flushes, 2);
	} else {
		ck_assert_uint_eq(M.st.l1[SIDE_D].misses[PS_4K], misses + NPAGES);
		ck_assert_uint_eq(M.st.l1[SIDE_D].hits[PS_4K], hits + NPAGES);
		ck_assert_uint_eq(M.st.stlb.misses + M.st.stlb.hits, stlb + NPAGES);
		ck_assert_uint_eq(M.st.stlb.hits, 0);
		ck_assert_uint_eq(M.st.walks, walks + NPAGES);
		ck_assert_uint_eq(M.st.cr3_flushes, 3);
	}
	ck_assert_uint_eq(faults, 2 * NPAGES);
	stop();
}

START_TEST(tlb_survives_switch_and_return_with_pcid)
{
	switch_and_return(true);
}
END_TEST

START_TEST(tlb_flushed_on_return_without_pcid)
{
	switch_and_return(false);
}
END_TEST

/*
 * flush_tlb_mm_range() of an mm that is not running: nothing is flushed now
 * (the running mm keeps its entries), its tlb_gen moves on, and its next
 * switch finds its slot behind and flushes its PCID: its stale translation of
 * a page unmapped meanwhile is not used (the access faults again). The
 * running mm's own flush request is local and catches its slot up, so its
 * return does not flush.
 */
START_TEST(flush_of_mm_not_running_flushes_on_its_return)
{
	const vaddr_t va = 0x20000000;
	uint64_t walks;

	start(2, true, false);
	switch_to(0);
	quantum(va);
	switch_to(1);
	quantum(va);
	/* process 0, not running, loses its first page */
	ck_assert_uint_eq(pt_unmap_range(&P[0].pt, va, va + PAGE_SIZE, false, NULL, NULL), 1);
	P[0].stale = true;
	ck_assert_int_eq(asid_flush_tlb_mm_range(&CPU, &P[0].mm), ASID_FLUSH_NONE);
	ck_assert_uint_eq(P[0].mm.tlb_gen, 1);
	ck_assert_uint_eq(mmu_pcid_entries(&M, (unsigned)pcid_of(0)), 2 * NPAGES); /* still cached */
	/* the running process's own request: flushed now, its slot caught up */
	ck_assert_int_eq(asid_flush_tlb_mm_range(&CPU, &P[1].mm), ASID_FLUSH_PARTIAL);
	mmu_invalidate_range(&M, va, va + PAGE_SIZE);
	check();
	ck_assert_uint_eq(CPU.ctxs[CPU.loaded_mm_asid].tlb_gen, 1);
	ck_assert_uint_eq(CPU.st.flush_requests, 2);
	ck_assert_uint_eq(CPU.st.deferred, 1);

	ck_assert(switch_to(0)); /* kept its slot, but behind: a flush */
	ck_assert_uint_eq(CPU.st.stale_flushes, 1);
	ck_assert_uint_eq(CPU.st.asid_allocs, 2);
	ck_assert_uint_eq(M.st.cr3_flushes, 3);
	ck_assert_uint_eq(M.st.cr3_flushed, 2 * NPAGES);
	walks = M.st.walks;
	quantum(va);
	ck_assert_uint_eq(M.st.walks, walks + NPAGES);
	ck_assert_uint_eq(faults, 2 * NPAGES + 1); /* the unmapped page, faulted in again */

	ck_assert(!switch_to(1)); /* caught up by its local flush: no flush */
	ck_assert_uint_eq(CPU.st.switch_flushes, 3);
	stop();
}
END_TEST

/*
 * The hardware alone: INVLPG and INVPCID act on the PCIDs the SDM says. Two
 * address spaces map the same page; INVLPG drops only the current PCID's
 * entry, INVPCID type 0 and 1 another PCID's, type 2 all; a CR3 load with bit
 * 63 set keeps the new PCID's entries, without it drops them.
 */
START_TEST(invlpg_and_invpcid_act_on_their_pcids)
{
	const vaddr_t va = 0x20000000;

	start(2, true, true);
	cur = 0;
	mmu_load_cr3(&M, &P[0].pt, 1, false);
	mmu_access(&M, va, SIDE_D, false);
	mmu_access(&M, va + PAGE_SIZE, SIDE_D, false);
	cur = 1;
	mmu_load_cr3(&M, &P[1].pt, 2, true);
	mmu_access(&M, va, SIDE_D, false);
	ck_assert_uint_eq(faults, 3);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 1), 4); /* L1D and STLB, two pages */
	ck_assert_uint_eq(mmu_pcid_entries(&M, 2), 2);
	mmu_check_invariants(&M);
	mmu_check_pcid(&M, 1, &P[0].pt);

	mmu_invalidate_range(&M, va, va + PAGE_SIZE); /* INVLPG: PCID 2's entry only */
	ck_assert_uint_eq(mmu_pcid_entries(&M, 2), 0);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 1), 4);
	ck_assert_uint_eq(mmu_invpcid(&M, INVPCID_ADDR, 1, va), 2 + 3); /* + PCID 1's three PWC entries */
	ck_assert_uint_eq(mmu_pcid_entries(&M, 1), 2);
	mmu_access(&M, va, SIDE_D, false); /* PCID 2 again: a walk, no fault */
	ck_assert_uint_eq(faults, 3);
	ck_assert_uint_eq(mmu_invpcid(&M, INVPCID_SINGLE, 1, 0), 2);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 1), 0);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 2), 2);

	cur = 0; /* back to PCID 1 keeping PCID 2's entries, then to PCID 2 */
	mmu_load_cr3(&M, &P[0].pt, 1, true);
	mmu_access(&M, va, SIDE_D, false);
	cur = 1;
	mmu_load_cr3(&M, &P[1].pt, 2, true);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 2), 2);
	mmu_load_cr3(&M, &P[1].pt, 2, false); /* bit 63 clear: PCID 2's TLB and PWC entries */
	ck_assert_uint_eq(M.st.cr3_flushed, 2 + 3);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 2), 0);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 1), 2);
	mmu_check_pcid(&M, 1, &P[0].pt);
	ck_assert_uint_eq(mmu_invpcid(&M, INVPCID_ALL_GLOBAL, 0, 0), 2 + 3);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 1), 0);
	ck_assert_uint_eq(M.st.cr3_loads, 5);
	ck_assert_uint_eq(M.st.cr3_flushes, 2);
	stop();
}
END_TEST

/*
 * With one address space nothing changes: a CR3 load to PCID 0's own table
 * with bit 63 set keeps everything, mmu_flush_all() still empties the TLB.
 */
START_TEST(one_address_space_unchanged)
{
	start(1, true, true);
	mmu_access(&M, 0x20000000, SIDE_D, false);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 0), 2);
	mmu_load_cr3(&M, &P[0].pt, 0, true);
	ck_assert(!M.pcid_mixed);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 0), 2);
	mmu_flush_all(&M);
	ck_assert_uint_eq(mmu_pcid_entries(&M, 0), 0);
	stop();
}
END_TEST

static Suite *asid_suite(void)
{
	Suite *s = suite_create("asid");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, seven_round_robin_flushes_every_switch);
	tcase_add_test(tc, six_round_robin_flushes_first_round_only);
	tcase_add_test(tc, pcid_off_flushes_every_switch);
	tcase_add_test(tc, tlb_survives_switch_and_return_with_pcid);
	tcase_add_test(tc, tlb_flushed_on_return_without_pcid);
	tcase_add_test(tc, flush_of_mm_not_running_flushes_on_its_return);
	tcase_add_test(tc, invlpg_and_invpcid_act_on_their_pcids);
	tcase_add_test(tc, one_address_space_unchanged);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(asid_suite());
}
