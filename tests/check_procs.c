/*
 * check_procs.c - several processes on one machine (sim.c's process events over
 * kernel.c's address spaces): a process started by a switch gets an empty
 * address space of its own; a switch loads CR3, which without PCIDs empties the
 * TLBs (a process coming back misses again); each process is charged its own
 * faults; exit_mmap() gives every frame back; prctl(PR_SET_THP_DISABLE) keeps a
 * process from THPs (vma_thp_disabled()) while another gets them; the flush of an
 * address space the CPU has not loaded only moves its tlb_gen on
 * (flush_tlb_mm_range()). Every invariant is checked after each step.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "kernel.h"
#include "tlbflush.h"

#define BASE 0x40000000UL
#define MB (1UL << 20)

/* mmap(BASE, @len) anonymous and private, with MADV_HUGEPAGE if @huge */
static void anon(uint64_t len, bool huge)
{
	event((struct os_event){ .kind = EV_MMAP, .addr = BASE, .len = len, .prot = 3,
				 .flags = MAP_PRIVATE_ | MAP_ANONYMOUS_, .fd = -1 });
	if (huge)
		event((struct os_event){ .kind = EV_MADVISE, .addr = BASE, .len = len,
					 .advice = MADV_HUGEPAGE_ });
}

static void boot(const char *set)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	if (set)
		ck_assert_msg(config_set(&c, set, &e) == 0, "%s", e.msg);
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
}

static uint64_t side_misses_d(const struct stats *st)
{
	return st->l1[SIDE_D].misses[PS_4K] + st->l1[SIDE_D].misses[PS_2M] + st->l1[SIDE_D].misses[PS_1G];
}

/* Two processes at the same addresses: each its own pages and its own faults. */
START_TEST(two_address_spaces)
{
	uint64_t c0[SP_NR], c1[SP_NR], anon0, file0, huge0, anon1, file1, huge1;

	boot("os.thp.enabled=never");
	anon(MB, false);
	touch(BASE, BASE + 16 * 4096, R_STORE);
	to(7); /* a new process: nothing mapped at BASE */
	ck_assert_ptr_null(vma_find(&S->k.mm->vmas, BASE));
	anon(MB, false);
	touch(BASE, BASE + 4 * 4096, R_STORE);
	ck_assert_uint_eq(S->st.pgfault, 20);
	ck_assert_uint_eq(S->st.nr_anon_pages, 20);
	ck_assert_uint_eq(S->st.context_switches, 1);
	sim_proc_counts(S, 0, c0);
	sim_proc_counts(S, 1, c1);
	ck_assert_uint_eq(c0[SP_PGFAULT], 16);
	ck_assert_uint_eq(c1[SP_PGFAULT], 4);
	ck_assert_uint_eq(S->procs[1].id, 7);
	kernel_mm_rss(&S->k, S->procs[0].mm, &anon0, &file0, &huge0);
	kernel_mm_rss(&S->k, S->procs[1].mm, &anon1, &file1, &huge1);
	ck_assert_uint_eq(anon0, 16 * 4096);
	ck_assert_uint_eq(anon1, 4 * 4096);
	/* back to process 0: its pages are still there, no fault, but the TLBs were emptied */
	to(0);
	touch(BASE, BASE + 16 * 4096, R_LOAD);
	ck_assert_uint_eq(S->st.pgfault, 20);
	ck_assert_uint_eq(S->mmu.st.walks, 16 + 4 + 16);
	sim_proc_counts(S, 0, c0);
	ck_assert_uint_eq(c0[SP_SWITCHES], 1); /* the first process is not switched to at start */
	ck_assert_uint_eq(c0[SP_WALKS], 32);
	sim_finish(S);
	ck_assert_uint_eq(S->st.processes, 2);
	/* each process's per-mapping breakdown (vmas.c): together they sum to the run's totals */
	{
		uint64_t faults = 0, walks = 0, dmiss = 0;

		for (size_t p = 0; p < S->nproc; p++) {
			const struct vmas_acct *a = &S->procs[p].mm->vacct;

			for (size_t r = 0; r < a->nrec; r++) {
				faults += a->rec[r].ev[VE_PGFAULT];
				walks += a->rec[r].hw[VH_WALKS];
				dmiss += a->rec[r].hw[VH_DTLB_MISSES];
			}
		}
		ck_assert_uint_eq(faults, S->st.pgfault);
		ck_assert_uint_eq(walks, S->st.walks);
		ck_assert_uint_eq(dmiss, side_misses_d(&S->st));
		ck_assert_uint_eq(S->procs[1].mm->vacct.rec[1].ev[VE_PGFAULT], 4); /* process 7's mapping */
		ck_assert_uint_eq(S->procs[1].mm->vacct.rec[1].hw[VH_WALKS], 4);
		ck_assert_uint_eq(S->procs[0].mm->vacct.rec[1].hw[VH_WALKS], 32);
	}
	done();
}
END_TEST

/* exit_mmap(): the frames go back; a switch to it afterwards is refused. */
START_TEST(exit_frees_everything)
{
	struct err e = { 0 };
	uint64_t free0;

	boot("os.thp.enabled=always");
	free0 = S->k.buddy.nr_free_pages;
	to(1);
	anon(4 * MB, false);
	touch(BASE, BASE + 4 * MB, R_STORE);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 2);
	event((struct os_event){ .kind = EV_EXIT });
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	/* every frame back but the exited mm's empty root table */
	ck_assert_uint_eq(S->k.buddy.nr_free_pages + S->st.nr_page_table_pages, free0 + 1);
	ck_assert_int_eq(sim_event(S, &(struct os_event){ .kind = EV_SWITCH, .addr = 1 }), -1);
	ck_assert_str_eq(S->k.fail_msg, "switch to process 1 after its exit");
	(void)e;
	done();
}
END_TEST

/* PR_SET_THP_DISABLE: process 1 gets no THP where process 0 gets them. */
START_TEST(prctl_thp_disable)
{
	boot("os.thp.enabled=always");
	to(1);
	event((struct os_event){ .kind = EV_PRCTL, .advice = PR_SET_THP_DISABLE_, .addr = 1 });
	anon(4 * MB, false);
	touch(BASE, BASE + 4 * MB, R_STORE);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, vma_find(&S->k.mm->vmas, BASE)),
			 "MMF_DISABLE_THP");
	to(0);
	anon(4 * MB, false);
	touch(BASE, BASE + 4 * MB, R_STORE);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 2);
	done();
}
END_TEST

/* flush_tlb_mm_range() of an mm the CPU has not loaded: no INVLPG, its tlb_gen moves. */
START_TEST(flush_of_an_mm_not_loaded)
{
	struct mm *m1;
	uint64_t gen, inval;

	boot("os.thp.enabled=never");
	to(1);
	m1 = S->k.mm;
	to(0);
	gen = m1->asid.tlb_gen;
	inval = S->st.tlb_invalidations;
	kernel_use_mm(&S->k, m1);
	flush_tlb_page(&S->k, BASE);
	kernel_use_mm(&S->k, S->k.active_mm);
	ck_assert_uint_eq(m1->asid.tlb_gen, gen + 1);
	ck_assert_uint_eq(S->st.tlb_invalidations, inval);
	flush_tlb_page(&S->k, BASE); /* the loaded one: one INVLPG */
	ck_assert_uint_eq(S->st.tlb_invalidations, inval + 1);
	done();
}
END_TEST

/*
 * @n processes round-robin for 4 rounds, each loading 16 pages of its own per
 * turn (process p at BASE + p x 64 KiB, so that the STLB's sets hold them all), under PCIDs: Linux's 6 dynamic ASIDs per CPU (choose_new_asid()) keep 6
 * address spaces' entries; a 7th makes every switch take a slot another holds
 * and flush it.
 */
static void round_robin(unsigned n, uint64_t loads, uint64_t flushes, uint64_t walks)
{
	boot("cpu.pcid=true");
	for (unsigned p = 1; p < n; p++) {
		to(p);
		anon(MB, false);
	}
	to(0);
	anon(MB, false);
	for (unsigned r = 0; r < 4; r++)
		for (unsigned p = 0; p < n; p++) {
			to(p);
			touch(BASE + p * 16 * 4096, BASE + (p + 1) * 16 * 4096, R_LOAD);
		}
	sim_finish(S);
	ck_assert_uint_eq(S->st.cr3_loads, loads);
	ck_assert_uint_eq(S->st.cr3_flushes, flushes);
	ck_assert_uint_eq(S->st.walks, walks);
	done();
}

/* 7 processes: every switch flushes; each turn walks its 16 pages again */
START_TEST(choose_new_asid_seven_processes)
{
	/* loads: the boot's, n - 1 to start the others, one back to 0, then 4 rounds of n
	 * less the first (0 is loaded) */
	round_robin(7, 1 + 6 + 1 + 4 * 7 - 1, 1 + 6 + 1 + 27, 4 * 7 * 16);
}
END_TEST

/* 6 processes: after the first allocations, no switch flushes and no page walks again */
START_TEST(choose_new_asid_six_processes)
{
	round_robin(6, 1 + 5 + 1 + 4 * 6 - 1, 6, 6 * 16);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("procs");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, two_address_spaces);
	tcase_add_test(tc, exit_frees_everything);
	tcase_add_test(tc, prctl_thp_disable);
	tcase_add_test(tc, flush_of_an_mm_not_loaded);
	tcase_add_test(tc, choose_new_asid_seven_processes);
	tcase_add_test(tc, choose_new_asid_six_processes);
	suite_add_tcase(s, tc);
	return check_run(s);
}
