/*
 * check_populate.c - populating through GUP and mlock (sim/mmap.c), the
 * behaviours that tests/native.sh cannot measure on this machine, each derived
 * from Linux 6.18: mm/gup.c (__mm_populate(), populate_vma_page_range(),
 * faultin_page_range(), __get_user_pages()), mm/mmap.c (do_mmap(): MAP_LOCKED,
 * mm->def_flags, MAP_POPULATE | MAP_NONBLOCK), mm/mlock.c (do_mlock(),
 * mlock_fixup(), apply_mlockall_flags()), mm/mremap.c (a locked mapping that
 * grows is populated), mm/mmap.c brk() (a locked heap is populated) and
 * mm/vmscan.c (folio_evictable(): an mlocked folio is never reclaimed).
 *
 * The traces are check_common.h's (lackey syntax); the mlock family has no
 * lackey form in mmusim (mtr version 5 carries it), so those calls are made
 * with sim_event() between two stretches of trace, every invariant checked
 * after each. Each test's comment gives the counters before this model (main:
 * the flags, the advice and the calls ignored).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "mmap.h"

#define SC(nr, call) "SYSCALL[7,1](" #nr ") " call "\n"

/* The default machine of check_common.h's run(), with --set overrides (NULL-ended); nothing replayed. */
static void begin(const char *set, ...)
{
	struct sim_config c;
	struct err e = { 0 };
	va_list ap;

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	va_start(ap, set);
	for (; set; set = va_arg(ap, const char *))
		ck_assert_msg(config_set(&c, set, &e) == 0, "%s: %s", set, e.msg);
	va_end(ap);
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
}

static void feed(const char *trace)
{
	struct err e = { 0 };

	ck_assert_msg(replay_trace(S, trace, &e) == 0, "%s", e.msg);
}

/* One call of the mlock family (or any event), as the replay applies it. */
static void call(unsigned kind, uint64_t addr, uint64_t len, uint64_t flags)
{
	struct os_event ev = { .kind = (uint16_t)kind, .fd = -1, .addr = addr, .len = len, .flags = flags };

	S->k.trace_name = "call";
	ck_assert_msg(sim_event(S, &ev) == 0, "%s", S->k.err.msg);
	sim_check_invariants(S);
}

static unsigned long vma_flags_at(vaddr_t va)
{
	struct vma *v = vma_find(&S->k.mm->vmas, va);

	ck_assert_ptr_nonnull(v);
	return v->flags;
}

/* 1 MiB read-write, 64 KiB read-only and 64 KiB PROT_NONE, private anonymous. */
#define MMAP_THREE                                                                                      \
	SC(9, "sys_mmap ( 0x40000000, 1048576, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)") \
	SC(9, "sys_mmap ( 0x50000000, 65536, 1, 34, 4294967295, 0 ) --> [pre-success] Success(0x50000000)")   \
	SC(9, "sys_mmap ( 0x60000000, 65536, 0, 34, 4294967295, 0 ) --> [pre-success] Success(0x60000000)")

/*
 * mlockall(MCL_CURRENT): apply_mlockall_flags() sets VM_LOCKED on every VMA
 * (PROT_NONE too: mlock_fixup() does not look at the protection), then
 * mm_populate(0, TASK_SIZE) with errors ignored: populate_vma_page_range()
 * write-faults the 256 pages of the private writable VMA (FOLL_WRITE), read-
 * faults the 16 of the read-only one (FOLL_FORCE; the zero page, os.zero_page
 * default true: no page of the process's own) and skips the PROT_NONE one
 * (!vma_is_accessible(): -EFAULT, ignored). The stores after it fault no more.
 * munlockall() clears every lock bit and mm->def_flags, faulting nothing.
 * After: pgfault 272, nr_anon_pages 256, zero PTEs 16. main: pgfault 0 at the
 * call (3 after the stores and load), no VMA locked.
 */
START_TEST(mlockall_current_populates_every_vma)
{
	begin("os.mode=base", NULL);
	feed(MMAP_THREE);
	call(EV_MLOCKALL, 0, 0, MCL_CURRENT_ | MCL_FUTURE_);
	ck_assert_uint_eq(S->st.pgfault, 256 + 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 256);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 16);
	for (size_t i = 0; i < S->k.mm->vmas.n; i++)
		ck_assert(S->k.mm->vmas.v[i].flags & VM_LOCKED);
	ck_assert_uint_eq(S->k.mm->def_flags, VM_LOCKED);
	feed(" S 40000000,8\n S 400ff000,8\n L 5000f000,8\n");
	ck_assert_uint_eq(S->st.pgfault, 272);
	call(EV_MUNLOCKALL, 0, 0, 0);
	for (size_t i = 0; i < S->k.mm->vmas.n; i++)
		ck_assert(!(S->k.mm->vmas.v[i].flags & (VM_LOCKED | VM_LOCKONFAULT)));
	ck_assert_uint_eq(S->k.mm->def_flags, 0);
	ck_assert_uint_eq(S->st.pgfault, 272);
	sim_finish(S);
	done();
}
END_TEST

/*
 * mlock2(MLOCK_ONFAULT) and mlockall(MCL_CURRENT | MCL_ONFAULT): VM_LOCKED |
 * VM_LOCKONFAULT, and populate_vma_page_range() returns at once for
 * VM_LOCKONFAULT: no fault at the call, one per page at first touch.
 * mlock() over part of it then (flags VM_LOCKED only) splits the VMA and
 * populates that part: 4 faults. After: 0, then 2 at the stores, then 4 more.
 * main: 0, 2, 2, and no VMA locked.
 */
START_TEST(mlock_onfault_populates_nothing)
{
	begin("os.mode=base", NULL);
	feed(MMAP_THREE);
	call(EV_MLOCK, 0x40000000, 1 << 20, MLOCK_ONFAULT_);
	ck_assert_uint_eq(S->st.pgfault, 0);
	ck_assert_uint_eq(vma_flags_at(0x40000000) & (VM_LOCKED | VM_LOCKONFAULT), VM_LOCKED | VM_LOCKONFAULT);
	call(EV_MLOCKALL, 0, 0, MCL_CURRENT_ | MCL_ONFAULT_);
	ck_assert_uint_eq(S->st.pgfault, 0);
	ck_assert_uint_eq(S->k.mm->def_flags, 0); /* no MCL_FUTURE */
	feed(" S 40000000,8\n S 40001000,8\n");
	ck_assert_uint_eq(S->st.pgfault, 2);
	call(EV_MLOCK, 0x40010000, 0x4000, 0);
	ck_assert_uint_eq(S->st.pgfault, 6);
	ck_assert_uint_eq(vma_flags_at(0x40010000) & (VM_LOCKED | VM_LOCKONFAULT), VM_LOCKED);
	ck_assert_uint_eq(vma_flags_at(0x40014000) & (VM_LOCKED | VM_LOCKONFAULT), VM_LOCKED | VM_LOCKONFAULT);
	sim_finish(S);
	done();
}
END_TEST

/*
 * do_mmap(): populate = VM_LOCKED or (MAP_POPULATE without MAP_NONBLOCK).
 * MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE (0x8021) of 64 KiB: a shared VMA
 * is read, not written (populate_vma_page_range(): FOLL_WRITE only for private
 * writable VMAs): 16 read faults, and the page is writable at once (no
 * write-notify on anonymous shared memory), so the store after it takes no
 * fault. MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_NONBLOCK (0x18022):
 * no populate; its store faults once. After: 16, then 1 (a run of its own). main: 1, then 1.
 */
START_TEST(map_populate_shared_reads_nonblock_skips)
{
	run(SC(9, "sys_mmap ( 0x40000000, 65536, 3, 32801, 4294967295, 0 ) --> [pre-success] Success(0x40000000)")
	    " S 40000000,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	done();
	run(SC(9, "sys_mmap ( 0x40000000, 65536, 3, 98338, 4294967295, 0 ) --> [pre-success] Success(0x40000000)")
	    " S 40000000,8\n", "os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
}
END_TEST

/*
 * mlockall(MCL_FUTURE): mm->def_flags VM_LOCKED reaches brk() (do_brk_flags();
 * brk() then mm_populate()s the new part: 64 KiB, 16 write faults) and a
 * locked mapping that mremap() grows in place (mm/mremap.c: the grown part is
 * populated, 16 more); MAP_LOCKED alone locks and populates too (16). After:
 * 16, 32, 48, 64. main: 0, 0, 0, 0.
 */
START_TEST(mcl_future_brk_and_mremap_populate)
{
	begin("os.mode=base", NULL);
	feed(SC(12, "sys_brk ( 0x0 ) --> [pre-success] Success(0x4000000)"));
	call(EV_MLOCKALL, 0, 0, MCL_FUTURE_);
	feed(SC(12, "sys_brk ( 0x4010000 ) --> [pre-success] Success(0x4010000)"));
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert(vma_flags_at(0x4000000) & VM_LOCKED);
	feed(SC(9, "sys_mmap ( 0x40000000, 65536, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)"));
	ck_assert_uint_eq(S->st.pgfault, 32);
	feed(SC(25, "sys_mremap ( 0x40000000, 65536, 131072, 0x0 ) --> [pre-success] Success(0x40000000)"));
	ck_assert_uint_eq(S->st.pgfault, 48);
	ck_assert_uint_eq(S->st.nr_anon_pages, 48);
	call(EV_MUNLOCKALL, 0, 0, 0);
	feed(SC(9, "sys_mmap ( 0x50000000, 65536, 3, 8226, 4294967295, 0 ) --> [pre-success] Success(0x50000000)"));
	ck_assert_uint_eq(S->st.pgfault, 64); /* MAP_LOCKED (0x2000) | MAP_PRIVATE | MAP_ANONYMOUS */
	ck_assert(vma_flags_at(0x50000000) & VM_LOCKED);
	sim_finish(S);
	done();
}
END_TEST

/*
 * folio_evictable(): reclaim never takes an mlocked page. 64 MiB of memory,
 * 4K pages: mlock() of the first 24 MiB of a 96 MiB mapping populates it
 * (6144 faults) before anything else is touched, so its pages are the oldest
 * on the LRU; storing to the other 72 MiB pushes kswapd to swap. Every locked
 * page is still resident at the end: pswpout 8606, all from the unlocked part.
 * Without the folio_evictable() test (the mlock applied, reclaim blind to it)
 * all 6144 locked pages are swapped out; main ignores the mlock altogether.
 */
START_TEST(reclaim_skips_mlocked_pages)
{
	char *t = fill_trace(96, 4096, 0, "");
	char *rest = strchr(t, '\n') + 1;
	uint64_t missing = 0;

	begin("os.memory=64M", "os.mode=base", NULL);
	check_every = 4096;
	{
		char *head = strndup(t, (size_t)(rest - t));

		feed(head);
		free(head);
	}
	call(EV_MLOCK, 0x80000000, 24 << 20, 0);
	ck_assert_uint_eq(S->st.pgfault, 6144);
	/* the stores: the locked part is present already, the rest faults */
	feed(rest);
	check_every = 1;
	ck_assert_uint_eq(S->st.pgfault, 24576);
	ck_assert_uint_eq(S->st.pswpout, 8606); /* all from the unlocked 72 MiB */
	ck_assert_uint_eq(S->k.mm->pt.nr_swap, 8606);
	ck_assert_uint_eq(S->st.nr_anon_pages, 24576 - 8606);
	ck_assert_uint_eq(S->st.pgactivate, 0); /* a locked folio's activation is not counted */
	for (vaddr_t a = 0x80000000; a < 0x80000000 + (24 << 20); a += 4096) {
		enum page_size ps;
		pfn_t pfn;

		missing += !pt_lookup(&S->k.mm->pt, a, &ps, &pfn, NULL);
	}
	ck_assert_uint_eq(missing, 0);
	sim_finish(S);
	done();
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("populate");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mlockall_current_populates_every_vma);
	tcase_add_test(tc, mlock_onfault_populates_nothing);
	tcase_add_test(tc, map_populate_shared_reads_nonblock_skips);
	tcase_add_test(tc, mcl_future_brk_and_mremap_populate);
	tcase_add_test(tc, reclaim_skips_mlocked_pages);
	suite_add_tcase(s, tc);
	return check_run(s);
}
