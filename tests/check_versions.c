/*
 * check_versions.c - os.kernel: each difference between the kernel profiles
 * that mmusim.1 lists under KERNEL VERSIONS, one scenario per difference, run
 * under the releases on both sides of the commit that made it. Each expected
 * value is derived in a comment from the kernel functions involved.
 */
#include <check.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "workload.h"

#define MMAP_BASE 0x7f0000000000ULL

/* The first mmap event of workload @spec under @kernel: its address. */
static uint64_t first_mmap(const char *spec, enum os_kernel kernel, unsigned nth)
{
	struct err e = { 0 };
	struct trace_reader *r = workload_open_kernel(spec, 1, kernel, &e);
	struct trace_batch b;
	uint64_t addr = 0;

	ck_assert_msg(r != NULL, "%s", e.msg);
	ck_assert_int_gt(trace_next(r, &b, &e), 0);
	ck_assert_uint_gt(b.nev, nth);
	ck_assert_uint_eq(b.ev[nth].kind, EV_MMAP);
	addr = b.ev[nth].addr;
	trace_close(r);
	return addr;
}

/*
 * Placement of hint-less anonymous mmaps (workload.c). 3 MiB arrays, top-down
 * from mmap_base: top - 3 MiB = 0x7effffd00000 is not 2 MiB aligned.
 *  - 6.6: __get_unmapped_area() has no THP path for anonymous memory: the
 *    highest gap, 0x7effffd00000.
 *  - 6.8: efa7df3e3bb5 sends every anonymous mapping to thp_get_unmapped_area();
 *    __thp_get_unmapped_area() pads the length to 5 MiB (off 0, off_end 3 MiB >=
 *    2 MiB) and, top-down (96204e15310c), rounds to align_down(top - len, 2 MiB)
 *    = 0x7effffc00000; the next array below it, 0x7effff800000.
 *  - 6.12, 6.18: d4148aeab412 takes that path only if IS_ALIGNED(len, PMD_SIZE):
 *    3 MiB is not, so 6.6's placement again. 4 MiB arrays are aligned under
 *    every profile (mmap_base is aligned and 4 MiB multiples keep it so).
 */
START_TEST(mmap_placement)
{
	ck_assert_uint_eq(first_mmap("stream:size=3M", KERNEL_6_6, 0), 0x7effffd00000ULL);
	ck_assert_uint_eq(first_mmap("stream:size=3M", KERNEL_6_8, 0), 0x7effffc00000ULL);
	ck_assert_uint_eq(first_mmap("stream:size=3M", KERNEL_6_8, 1), 0x7effff800000ULL);
	ck_assert_uint_eq(first_mmap("stream:size=3M", KERNEL_6_12, 0), 0x7effffd00000ULL);
	ck_assert_uint_eq(first_mmap("stream:size=3M", KERNEL_6_18, 0), 0x7effffd00000ULL);
	ck_assert_uint_eq(first_mmap("stream:size=3M", KERNEL_6_18, 1), 0x7effffa00000ULL);
	for (unsigned k = 0; k < KERNEL_NR; k++)
		ck_assert_uint_eq(first_mmap("stream:size=4M", (enum os_kernel)k, 1),
				  MMAP_BASE - (8ULL << 20));
}
END_TEST

/* The same through a run: 3 MiB GUPS under 6.8 starts on a 2 MiB boundary, so
 * its first 2 MiB is one THP and the last 1 MiB 4K pages; under 6.6 the one
 * aligned 2 MiB inside [0x7effffd00000, +3M) is [0x7effffe00000, +2M): one THP
 * as well, but the 4K part is the first MiB. Both: 1 thp_fault_alloc. */
static uint64_t gups_4k_misses(const char *kernel)
{
	struct err e = { 0 };
	struct sim_config c;
	struct trace_reader *r;
	struct trace_batch b;
	struct sim *s = calloc(1, sizeof(*s));
	uint64_t first4k = 0;
	int n;

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	ck_assert_int_eq(config_set(&c, kernel, &e), 0);
	ck_assert_int_eq(sim_init(s, &c, &e), 0);
	r = workload_open_kernel("gups:size=3M,updates=1", 1, c.kernel, &e);
	ck_assert_ptr_nonnull(r);
	s->k.trace_name = r->name;
	while ((n = trace_next(r, &b, &e)) > 0)
		ck_assert_int_eq(sim_run_batch(s, &b, &e), 0);
	sim_finish(s);
	ck_assert_uint_eq(s->st.thp_fault_alloc, 1);
	/* where the 4K part lies: the first address the page table maps with 4K */
	for (vaddr_t a = 0x7effffc00000ULL; a < MMAP_BASE; a += PAGE_SIZE) {
		enum page_size ps;
		pfn_t pfn;

		if (pt_lookup(&s->k.mm->pt, a, &ps, &pfn, NULL) && ps == PS_4K) {
			first4k = a;
			break;
		}
	}
	trace_close(r);
	sim_destroy(s);
	free(s);
	return first4k;
}

START_TEST(mmap_placement_run)
{
	ck_assert_uint_eq(gups_4k_misses("os.kernel=6.6"), 0x7effffd00000ULL);
	ck_assert_uint_eq(gups_4k_misses("os.kernel=6.8"), 0x7effffe00000ULL);
	ck_assert_uint_eq(gups_4k_misses("os.kernel=6.18"), 0x7effffd00000ULL);
}
END_TEST

/*
 * MAP_STACK (0x20000): c4608d1bf7c6 (6.8) makes do_mmap() add VM_NOHUGEPAGE
 * (calc_vm_flag_bits()). A store into a 4 MiB MAP_STACK mapping at 0x40000000:
 * 6.6: do_huge_pmd_anonymous_page() maps a THP (thp_fault_alloc 1);
 * 6.18: thp_vma_allowable_order() refuses the VMA: a 4K page, no counter.
 */
#define MMAP_STACK_4M                                                                              \
	"SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 131106, 4294967295, 0 ) --> [pre-success] "   \
	"Success(0x40000000)\n"

START_TEST(map_stack_nohugepage)
{
	run(MMAP_STACK_4M " S 40000010,8\n", "os.kernel=6.6", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
	run(MMAP_STACK_4M " S 40000010,8\n", "os.kernel=6.18", NULL);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	done();
}
END_TEST

/*
 * A store to the huge zero page. A read fault maps the huge zero PMD
 * (thp_zero_page_alloc 1), then a store to another page of the 2 MiB:
 *  - 6.12: do_huge_pmd_wp_page() finds is_huge_zero_pmd(), __split_huge_pmd()
 *    (thp_split_pmd 1) and returns VM_FAULT_FALLBACK; the PTE wp fault
 *    (wp_page_copy() from the zero PTE) allocates one 4K page: nr_anon_pages 1,
 *    511 zero PTEs left, rss 4 KiB.
 *  - 6.18: do_huge_zero_wp_pmd() (1ced09e0331f, 6.13) allocates a THP
 *    (vma_alloc_anon_folio_pmd()) and map_anon_folio_pmd() counts
 *    thp_fault_alloc 1; no split, no zero PTEs, rss 2 MiB.
 * Both: two faults (the read, then the write-protect fault).
 */
START_TEST(huge_zero_wp)
{
	const char *t = MMAP_4M " L 40000010,8\n S 40002000,8\n L 40003000,8\n";

	run(t, "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 1);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 511);
	ck_assert_uint_eq(S->st.rss_bytes, 4096);
	done();
	run(t, "os.kernel=6.18", NULL);
	ck_assert_uint_eq(S->st.thp_zero_page_alloc, 1);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 1);
	ck_assert_uint_eq(S->st.thp_fault_fallback, 0);
	ck_assert_uint_eq(S->st.thp_split_pmd, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(S->k.thp.nr_zero_pmds, 0);
	ck_assert_uint_eq(S->st.rss_bytes, 2 << 20);
	done();
}
END_TEST

#define MPROTECT_FIRST_PAGE(prot)                                                                  \
	"SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 4096, " prot " )[sync] --> Success(0x0)\n"
#define MUNMAP_FIRST_2M "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 2097152 )[sync] --> Success(0x0)\n"

/*
 * A PTE-mapped THP unmapped whole. A store faults a THP at 0x40000000; mprotect
 * of its first page splits the PMD (thp_split_pmd 1: every page still mapped,
 * by PTEs, so nothing is queued), mprotect back makes the VMAs one again
 * (vma_merge); munmap of the whole 2 MiB then zaps 512 PTEs of one VMA.
 * (Without the mprotect back the THP spans two VMAs, and a zap, which goes VMA
 * by VMA, queues it under every profile: check_flushes.c.)
 *  - 6.6: zap_pte_range() calls page_remove_rmap() per PTE; the first one leaves
 *    511 pages mapped, so deferred_split_folio() queues the folio and counts
 *    thp_deferred_split_page 1 (the folio is freed when the last PTE goes).
 *  - 6.12, 6.18: zap_present_ptes() batches the 512 PTEs (folio_pte_batch()
 *    ignores the write bit that mprotect changed) and folio_remove_rmap_ptes()
 *    removes them at once: nothing stays mapped, nothing is queued (10ebac4f95e7,
 *    6.9). thp_deferred_split_page 0.
 * Either way the THP is freed whole.
 */
START_TEST(batched_zap)
{
	const char *t = MMAP_4M " S 40000010,8\n" MPROTECT_FIRST_PAGE("1") MPROTECT_FIRST_PAGE("3")
		MUNMAP_FIRST_2M;

	run(t, "os.kernel=6.6", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(S->k.thp.nr_deferred, 0);
	ck_assert_uint_eq(S->st.rss_bytes, 0);
	done();
	run(t, "os.kernel=6.18", NULL);
	ck_assert_uint_eq(S->st.thp_split_pmd, 1);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0);
	ck_assert_uint_eq(S->st.rss_bytes, 0);
	done();
	/* a partial unmap is queued under both: the run leaves 256 pages mapped */
	run(MMAP_4M " S 40000010,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 1048576 )[sync] --> Success(0x0)\n",
	    "os.kernel=6.18", NULL);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(S->k.thp.nr_deferred, 1);
	done();
}
END_TEST

/*
 * A collapse of a PTE-mapped THP. As above, then mprotect back (the VMAs merge)
 * and MADV_COLLAPSE (25) of the 2 MiB: collapse_huge_page() copies the 512
 * pages into a new THP and __collapse_huge_page_copy_succeeded() drops the old
 * PTEs' rmaps:
 *  - 6.12: folio_remove_rmap_pte() one PTE at a time: after the first the old
 *    folio is partly mapped: deferred_split_folio(), thp_deferred_split_page 1.
 *  - 6.18: folio_remove_rmap_ptes() over the run of 512 (4ea3594a4741, 6.17):
 *    fully unmapped at once, thp_deferred_split_page 0.
 * Both: thp_collapse_alloc 1, one THP mapped afterwards.
 */
START_TEST(batched_collapse)
{
	const char *t = MMAP_4M " S 40000010,8\n" MPROTECT_FIRST_PAGE("1") MPROTECT_FIRST_PAGE("3")
		"SYSCALL[7,1](28) sys_madvise ( 0x40000000, 2097152, 25 ) --> [pre-success] Success(0x0)\n";

	run(t, "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
	run(t, "os.kernel=6.18", NULL);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 1);
	ck_assert_uint_eq(S->st.thp_deferred_split_page, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	done();
}
END_TEST

/*
 * A stable backport: 9c9828d3ead6 ("mm, page_alloc, thp: prevent reclaim for
 * __GFP_THISNODE THP allocations", release 6.19) went to the 6.6.y, 6.12.y and
 * 6.18.y stable lines, which the 6.6, 6.12 and 6.18 profiles are; 6.8.y had
 * ended. Three THP faults under defrag=always without MADV_HUGEPAGE on the
 * fragmented machine of check_slowpath.c (no order-9 block can be made;
 * compaction COMPLETE, async never defers; direct reclaim finds compaction
 * ready and scans nothing). Each fault's two requests (vma_alloc_folio()):
 *  (a) | __GFP_THISNODE | __GFP_NORETRY: async compaction (1 stall); with the
 *      fix, nopage; without it (6.8) the priority stays async, direct reclaim
 *      (1 allocstall) and async compaction again (1 stall), then nopage;
 *  (b) GFP_TRANSHUGE | __GFP_NORETRY: async (1), reclaim (1), async (1).
 * compact_stall 3 x 3 = 9 and allocstall_movable 3 under 6.6, 6.12 and 6.18;
 * 3 x 4 = 12 and 6 under 6.8 (before: 9 and 3 under every profile).
 */
START_TEST(thisnode_no_reclaim_backport)
{
	static const char *const k[] = { "os.kernel=6.6", "os.kernel=6.8", "os.kernel=6.12",
					  "os.kernel=6.18" };

	for (unsigned i = 0; i < 4; i++) {
		run("SYSCALL[7,1](9) sys_mmap ( 0x0, 6291456, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
		    " S 40000010,8\n S 40200010,8\n S 40400010,8\n",
		    "os.fragmentation.unmovable=1", "os.thp.defrag=always", "os.khugepaged.defrag=false",
		    k[i], NULL);
		ck_assert_msg(S->st.thp_fault_fallback == 3, "%s", k[i]);
		ck_assert_msg(S->st.compact_stall == (i == 1 ? 12 : 9), "%s: %llu", k[i],
			      (unsigned long long)S->st.compact_stall);
		ck_assert_msg(S->st.allocstall_movable == (i == 1 ? 6 : 3), "%s: %llu", k[i],
			      (unsigned long long)S->st.allocstall_movable);
		done();
	}
}
END_TEST

/* os.kernel takes the profiles' names only: anything else is a config error. */
START_TEST(kernel_values)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	ck_assert_uint_eq(c.kernel, KERNEL_6_18);
	ck_assert_int_eq(config_set(&c, "os.kernel=6.7", &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "6.6, 6.8, 6.12 or 6.18"));
	ck_assert_int_eq(config_set(&c, "os.kernel=6.12", &e), 0);
	ck_assert_uint_eq(c.kernel, KERNEL_6_12);
	ck_assert_int_eq(config_load_string(&c, "os:\n  kernel: 6.10\n", "k.yaml", &e), -1);
	ck_assert_str_eq(e.file, "k.yaml");
	ck_assert_uint_eq(e.line, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("versions");
	TCase *tc = tcase_create("profiles");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mmap_placement);
	tcase_add_test(tc, mmap_placement_run);
	tcase_add_test(tc, map_stack_nohugepage);
	tcase_add_test(tc, huge_zero_wp);
	tcase_add_test(tc, batched_zap);
	tcase_add_test(tc, batched_collapse);
	tcase_add_test(tc, thisnode_no_reclaim_backport);
	tcase_add_test(tc, kernel_values);
	suite_add_tcase(s, tc);
	return check_run(s);
}
