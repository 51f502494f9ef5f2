/*
 * check_layout.c - os.layout: kernel (sim/layout.c). The initial mappings are
 * the ones Valgrind 3.19 gave a small PIE program on this machine (mmusim
 * capture of tests/capture/layout.c); the expected kernel addresses are the
 * ones /proc/self/maps showed natively under `setarch -R` on Linux 6.18, and
 * for the other releases what their __get_unmapped_area() computes by hand
 * from the same gaps.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "mmusim.h"

#define T_EXE 0x108000ULL
#define T_LDSO 0x4000000ULL
#define T_HEAP 0x4035000ULL
#define T_STACK 0x1ffefff000ULL
#define T_STACK_END 0x1fff001000ULL
#define MIB (1ULL << 20)

static struct trace_map maps[] = {
	{ T_EXE, 0x1000, 1, 2, 1, 7, 0, "/tmp/layout", 1, 0 },
	{ T_EXE + 0x1000, 0x1000, 5, 2, 1, 7, 0x1000, "/tmp/layout", 1, 0 },
	{ T_EXE + 0x2000, 0x1000, 1, 2, 1, 7, 0x2000, "/tmp/layout", 1, 0 },
	{ T_EXE + 0x3000, 0x2000, 3, 2, 1, 7, 0x2000, "/tmp/layout", 1, 0 },
	{ T_LDSO, 0x1000, 1, 2, 1, 8, 0, "/lib/ld.so", 2, 0 },
	{ T_LDSO + 0x1000, 0x26000, 5, 2, 1, 8, 0x1000, "/lib/ld.so", 2, 0 },
	{ T_LDSO + 0x27000, 0xa000, 1, 2, 1, 8, 0x27000, "/lib/ld.so", 2, 0 },
	{ T_LDSO + 0x31000, 0x4000, 3, 2, 1, 8, 0x31000, "/lib/ld.so", 2, 0 },
	{ T_HEAP, 0x1000, 7, 0x22, 0, 0, 0, "[heap]", 0, 0 },
	{ 0x5807e000, 0x1000, 5, 2, 1, 9, 0x7e000, "/usr/libexec/valgrind/mmusim-amd64-linux", 3, 0 },
	{ T_STACK, T_STACK_END - T_STACK, 3, 0x20022, 0, 0, 0, "[stack]", 0, 0 },
};

static struct trace_file files[] = {
	{ 1, 7, "/tmp/layout" },
	{ 1, 8, "/lib/ld.so" },
	{ 1, 9, "/usr/libexec/valgrind/mmusim-amd64-linux" },
	{ 1, 10, "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so" },
	{ 1, 11, "/data/big" },
};

static struct trace_reader src;
static struct layout *L;
static const struct os_event *O;

static void start(enum os_kernel k)
{
	memset(&src, 0, sizeof(src));
	src.maps = maps;
	src.nmaps = sizeof(maps) / sizeof(*maps);
	src.files = files;
	src.nfiles = sizeof(files) / sizeof(*files);
	L = layout_new(k, &src);
	ck_assert_ptr_nonnull(L);
}

/* One event through the layout; returns how many came out (O points at them). */
static int ev(struct os_event e)
{
	int n = layout_event(L, &e, &O);

	ck_assert_int_ge(n, 0);
	return n;
}

static vaddr_t mmap_anon(vaddr_t trace_addr, uint64_t len, vaddr_t hint)
{
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MMAP, .addr = trace_addr, .len = len,
					       .prot = 3, .flags = MAP_PRIVATE_ | MAP_ANONYMOUS_,
					       .fd = -1, .new_addr = hint }), 1);
	return O[0].addr;
}

START_TEST(exec_as_linux)
{
	start(KERNEL_6_18);
	/* the PIE at ELF_ET_DYN_BASE, ld.so top-down from mmap_base 0x7ffff7fff000 */
	ck_assert_uint_eq(layout_va(L, T_EXE + 0x123), 0x555555554123ULL);
	ck_assert_uint_eq(layout_va(L, T_EXE + 0x4ff8), 0x555555558ff8ULL);
	ck_assert_uint_eq(layout_va(L, T_LDSO), 0x7ffff7fca000ULL);
	ck_assert_uint_eq(layout_va(L, T_LDSO + 0x34fff), 0x7ffff7ffefffULL);
	/* the stack's top at STACK_TOP; growth below it moves too (RLIMIT_STACK) */
	ck_assert_uint_eq(layout_va(L, T_STACK_END - 8), 0x7ffffffff000ULL - 8);
	ck_assert_uint_eq(layout_va(L, T_STACK_END - 4 * MIB), 0x7ffffffff000ULL - 4 * MIB);
	/* Valgrind's own page and unknown addresses stay */
	ck_assert_uint_eq(layout_va(L, 0x5807e010), 0x5807e010);
	ck_assert_uint_eq(layout_va(L, 0x1234000), 0x1234000);
	/* the initial events: the image mapped there, the stack with stack_expand */
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MMAP, .initial = 1, .addr = T_EXE,
					       .len = 0x1000, .flags = MAP_FIXED_ | MAP_PRIVATE_,
					       .fd = 0, .file = 1 }), 1);
	ck_assert_uint_eq(O[0].addr, 0x555555554000ULL);
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MMAP, .initial = 1, .addr = T_STACK,
					       .len = T_STACK_END - T_STACK, .fd = -1,
					       .flags = MAP_FIXED_ | MAP_PRIVATE_ | MAP_ANONYMOUS_ }), 1);
	ck_assert_uint_eq(O[0].addr, 0x7ffffffdd000ULL);
	ck_assert_uint_eq(O[0].len, 0x22000);
	/* the heap right after the image's bss: brk(start), brk(end), then malloc's sbrk */
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_BRK, .initial = 1, .addr = T_HEAP }), 1);
	ck_assert_uint_eq(O[0].addr, 0x555555559000ULL);
	ev((struct os_event){ .kind = EV_BRK, .initial = 1, .addr = T_HEAP + 0x1000 });
	ev((struct os_event){ .kind = EV_BRK, .addr = T_HEAP + 0x21000 });
	ck_assert_uint_eq(O[0].addr, 0x55555557a000ULL);
	ck_assert_uint_eq(layout_va(L, T_HEAP + 0x2a0), 0x5555555592a0ULL);
	layout_free(L);
}
END_TEST

/* Gaps after exec: [vdso] below ld.so at 0x7ffff7fc2000 (8 pages in 6.18, 6 before). */
START_TEST(hintless_mmaps_by_release)
{
	static const struct {
		enum os_kernel k;
		vaddr_t a, b, c;
	} want[] = {
		/* 6.6: no alignment: a right below the vDSO (6 pages: 0x7ffff7fc4000) */
		{ KERNEL_6_6, 0x7ffff7fc4000ULL - 64 * MIB, 0x7ffff3fc4000ULL - 0x301000, 0 },
		/* 6.8: every anonymous mapping of >= 2 MiB aligned, b too */
		{ KERNEL_6_8, 0x7ffff3e00000ULL, 0x7ffff3a00000ULL, 0 },
		/* 6.12, 6.18: only lengths that are multiples of 2 MiB (d4148aeab412) */
		{ KERNEL_6_12, 0x7ffff3e00000ULL, 0x7ffff3aff000ULL, 0 },
		{ KERNEL_6_18, 0x7ffff3e00000ULL, 0x7ffff3aff000ULL, 0x7ffff7fbf000ULL },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		start(want[i].k);
		ck_assert_uint_eq(mmap_anon(0x4a2c000, 64 * MIB, 0), want[i].a);
		ck_assert_uint_eq(mmap_anon(0x8a2c000, 3 * MIB + 4096, 0), want[i].b);
		if (want[i].c) /* 12 KiB: the highest gap, between a and the vDSO */
			ck_assert_uint_eq(mmap_anon(0x483c000, 12288, 0), want[i].c);
		ck_assert_uint_eq(layout_va(L, 0x4a2c000 + 0x5008), want[i].a + 0x5008);
		layout_free(L);
	}
}
END_TEST

START_TEST(hints)
{
	/* a free hint is taken, in every release */
	start(KERNEL_6_18);
	ck_assert_uint_eq(mmap_anon(0x4a2c000, 64 * MIB, 0x10000000000ULL), 0x10000000000ULL);
	/* a taken hint: 6.18 searches without aligning (4e51afe5ebaa) ... */
	ck_assert_uint_eq(mmap_anon(0x8a2c000, 64 * MIB, 0x10000000000ULL),
			  0x7ffff7fc2000ULL - 64 * MIB);
	layout_free(L);
	/* ... 6.12 aligns it */
	start(KERNEL_6_12);
	ck_assert_uint_eq(mmap_anon(0x4a2c000, 64 * MIB, 0x555555554000ULL), 0x7ffff3e00000ULL);
	/* a hint is rounded down to its page; one in page 0 is no hint (round_hint_to_min()) */
	ck_assert_uint_eq(mmap_anon(0x8a2c000, 8192, 0x1010), 0x1000);
	ck_assert_uint_eq(mmap_anon(0x9a2c000, 8192, 0x10), 0x7ffff7fc4000ULL - 8192);
	layout_free(L);
}
END_TEST

START_TEST(calls_follow_their_mappings)
{
	vaddr_t a, b;

	start(KERNEL_6_18);
	a = mmap_anon(0x4a2c000, 64 * MIB, 0);
	b = mmap_anon(0x8a2c000, 3 * MIB + 4096, 0);
	/* adjacent in the trace, apart in the kernel: an munmap of both edges is two calls */
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MUNMAP, .addr = 0x8a2b000, .len = 0x2000 }),
			 2);
	ck_assert_uint_eq(O[0].addr, a + 64 * MIB - 4096);
	ck_assert_uint_eq(O[0].len, 4096);
	ck_assert_uint_eq(O[1].addr, b);
	ck_assert_uint_eq(O[1].len, 4096);
	/* what was unmapped no longer moves */
	ck_assert_uint_eq(layout_va(L, 0x8a2b010), 0x8a2b010);
	/* madvise inside a, MAP_FIXED inside a: a's difference */
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MADVISE, .addr = 0x4a2c000 + 2 * MIB,
					       .len = 2 * MIB, .advice = MADV_HUGEPAGE_ }), 1);
	ck_assert_uint_eq(O[0].addr, a + 2 * MIB);
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MMAP, .addr = 0x4a2c000 + 4 * MIB,
					       .len = 4096, .flags = MAP_FIXED_ | MAP_PRIVATE_ |
					       MAP_ANONYMOUS_, .fd = -1 }), 1);
	ck_assert_uint_eq(O[0].addr, a + 4 * MIB);
	layout_free(L);
}
END_TEST

START_TEST(mremap_grows_or_moves)
{
	vaddr_t c;

	start(KERNEL_6_18);
	c = mmap_anon(0x483c000, 12288, 0); /* 0x7ffff7fbf000, right below the vDSO */
	/* the vDSO is in the way: it moves, to the highest gap of 24 KiB */
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MREMAP, .addr = 0x483c000, .len = 12288,
					       .new_len = 24576, .flags = MREMAP_MAYMOVE_,
					       .new_addr = 0x5000000 }), 1);
	ck_assert_uint_eq(O[0].addr, c);
	ck_assert_uint_eq(O[0].new_addr, c - 24576);
	ck_assert_uint_eq(layout_va(L, 0x5000000 + 0x5008), c - 24576 + 0x5008);
	/* shrinking stays; growing into free space stays */
	ev((struct os_event){ .kind = EV_MREMAP, .addr = 0x5000000, .len = 24576, .new_len = 8192,
			      .flags = MREMAP_MAYMOVE_, .new_addr = 0x5000000 });
	ck_assert_uint_eq(O[0].new_addr, c - 24576);
	layout_free(L);
}
END_TEST

START_TEST(files_and_valgrind)
{
	start(KERNEL_6_18);
	/* a 4 MiB file mapping at offset 1 MiB: 2 MiB-aligned relative to the offset */
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MMAP, .addr = 0x6000000, .len = 4 * MIB,
					       .prot = 1, .flags = MAP_PRIVATE_, .fd = 3,
					       .off = MIB, .file = 5 }), 1);
	ck_assert_uint_eq(O[0].addr & (2 * MIB - 1), MIB);
	/* the padded 6 MiB below the vDSO start at 0x7ffff79c2000, + 0x13e000 to reach offset 1 MiB */
	ck_assert_uint_eq(O[0].addr, 0x7ffff7b00000ULL);
	/* Valgrind's preload: where Valgrind put it */
	ck_assert_int_eq(ev((struct os_event){ .kind = EV_MMAP, .addr = 0x4837000, .len = 0x5000,
					       .prot = 1, .flags = MAP_PRIVATE_, .fd = 3,
					       .file = 4 }), 1);
	ck_assert_uint_eq(O[0].addr, 0x4837000);
	layout_free(L);
}
END_TEST

/*
 * tests/data/hintless.mtr.zst (tests/capture/hintless.c, captured with --roi):
 * a hint-less 64 MiB mmap with MADV_HUGEPAGE, one store per 4 KiB page. In the
 * kernel's layout it starts on a 2 MiB boundary: 32 THP faults, plus one fault
 * for the loop's text page and one for its stack page, which the region of
 * interest touches first. Where Valgrind put it (os.layout: trace), 31 THPs and
 * 511 4 KiB faults around them. Through the library, so the read-ahead pool
 * (one mode) and the threaded one (two) both read through the layout.
 */
START_TEST(hintless_replay)
{
	static const char *const lay[] = { "os.layout=kernel", "os.layout=trace" };
	static const uint64_t faults[] = { 34, 545 }, thps[] = { 32, 31 };
	static const char *const modes[] = { NULL, "base,thp" };

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			struct mmusim *m;
			struct mmusim_report r;
			const char *sets[] = { lay[i], "os.mode=thp", "os.thp.enabled=madvise" };

			ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .sets = sets,
				.nsets = 3, .modes = modes[j] }), 0);
			ck_assert_msg(mmusim_replay(m, "tests/data/hintless.mtr.zst", NULL) == 0, "%s",
				      mmusim_error(m));
			ck_assert_int_eq(mmusim_report(m, mmusim_modes(m) - 1, &r), 0); /* thp */
			ck_assert_uint_eq(r.thp_fault_alloc, thps[i]);
			ck_assert_uint_eq(r.pgfault, faults[i]);
			mmusim_destroy(m);
		}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, exec_as_linux);
	tcase_add_test(tc, hintless_mmaps_by_release);
	tcase_add_test(tc, hints);
	tcase_add_test(tc, calls_follow_their_mappings);
	tcase_add_test(tc, mremap_grows_or_moves);
	tcase_add_test(tc, files_and_valgrind);
	tcase_add_test(tc, hintless_replay);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
