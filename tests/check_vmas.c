/*
 * check_vmas.c - the per-mapping breakdown (sim/vmas.c): the rows sum exactly
 * to the run's totals for every counter they report (the validation trace in
 * each mode; scenario traces with two mappings, munmap, mprotect splits,
 * mremap and brk), each event lands on the mapping whose address it concerns,
 * and THPeligible's reasons are the kernel's (khugepaged_thp_ineligible()).
 */
#include "check_common.h"
#include "check_run.h"
#include "khugepaged.h"
#include "vmas.h"

/* Every counter of the rows against the run's total. */
static void assert_sums(const struct sim *s)
{
	uint64_t hw[VH_NR] = { 0 }, ev[VE_NR] = { 0 }, rss = 0, huge = 0, l1[2] = { 0, 0 };

	for (size_t i = 0; i < s->k.mm->vacct.nrec; i++) {
		const struct vrec *r = &s->k.mm->vacct.rec[i];

		for (int k = 0; k < VH_NR; k++)
			hw[k] += r->hw[k];
		for (int k = 0; k < VE_NR; k++)
			ev[k] += r->ev[k];
		rss += r->rss_bytes;
		huge += r->huge_bytes;
	}
	for (int ps = 0; ps < PS_NR; ps++) {
		l1[SIDE_I] += s->st.l1[SIDE_I].misses[ps];
		l1[SIDE_D] += s->st.l1[SIDE_D].misses[ps];
	}
	ck_assert_uint_eq(hw[VH_ITLB_MISSES], l1[SIDE_I]);
	ck_assert_uint_eq(hw[VH_DTLB_MISSES], l1[SIDE_D]);
	ck_assert_uint_eq(hw[VH_STLB_MISSES], s->st.stlb.misses);
	ck_assert_uint_eq(hw[VH_WALKS], s->st.walks);
	ck_assert_uint_eq(hw[VH_WALK_CYCLES], s->st.walk_cycles);
	ck_assert_uint_eq(ev[VE_PGFAULT], s->st.pgfault);
	ck_assert_uint_eq(ev[VE_PGMAJFAULT], s->st.pgmajfault);
	ck_assert_uint_eq(ev[VE_THP_FAULT_ALLOC], s->st.thp_fault_alloc);
	ck_assert_uint_eq(ev[VE_THP_FAULT_FALLBACK], s->st.thp_fault_fallback);
	ck_assert_uint_eq(ev[VE_THP_SPLIT_PMD], s->st.thp_split_pmd);
	ck_assert_uint_eq(ev[VE_THP_SPLIT_PAGE], s->st.thp_split_page);
	ck_assert_uint_eq(ev[VE_THP_COLLAPSE_ALLOC], s->st.thp_collapse_alloc);
	ck_assert_uint_eq(rss, s->st.rss_bytes);
	ck_assert_uint_eq(huge, s->st.huge_bytes);
}

/* The record created for the mapping that starts at @start (index, > 0). */
static const struct vrec *rec_at(const struct sim *s, vaddr_t start)
{
	for (size_t i = 1; i < s->k.mm->vacct.nrec; i++)
		if (s->k.mm->vacct.rec[i].start == start)
			return &s->k.mm->vacct.rec[i];
	ck_abort_msg("no mapping starts at 0x%llx", (unsigned long long)start);
	return NULL;
}

#define DIR "tests/validation/"

/*
 * The validation trace in @mode, whole batches (the replay's fast paths); with
 * @warmup references of warm-up first (roi.warmup_refs: every count reset then,
 * the mappings' too, so the sums still hold).
 */
static void validation_roi(enum os_mode mode, bool summarized, uint64_t warmup)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct sim_config c;
	struct err e = { 0 };
	struct trace_reader *tr;
	struct trace_batch b;
	struct batch_summary sum = { 0 };
	int n;

	ck_assert_ptr_nonnull(s);
	config_defaults(&c);
	c.mode = mode;
	c.roi.warmup_refs = warmup;
	ck_assert_msg(config_validate(&c, "test", &e) == 0, "%s", e.msg);
	ck_assert_int_eq(sim_init(s, &c, &e), 0);
	tr = trace_open(DIR "small.lackey.zst", TF_AUTO, &e);
	ck_assert_msg(tr != NULL, "%s", e.msg);
	s->k.trace_name = tr->name;
	while ((n = trace_next(tr, &b, &e)) > 0) {
		if (summarized) {
			ck_assert_int_eq(sim_batch_summarize(&b, &sum), 0);
			ck_assert_int_eq(sim_run_batch_summarized(s, &b, &sum, &e), 0);
		} else {
			ck_assert_int_eq(sim_run_batch(s, &b, &e), 0);
		}
	}
	ck_assert_msg(n == 0, "%s", e.msg);
	sim_finish(s);
	assert_sums(s);
	/* every reference of this trace is mapped: nothing is [none]'s */
	for (int k = 0; k < VH_NR; k++)
		ck_assert_uint_eq(s->k.mm->vacct.rec[0].hw[k], 0);
	ck_assert_uint_gt(s->st.walks, 0);
	ck_assert_uint_gt(s->k.mm->vacct.nrec, 2);
	sim_batch_summary_free(&sum);
	trace_close(tr);
	sim_destroy(s);
	free(s);
}

static void validation(enum os_mode mode, bool summarized)
{
	validation_roi(mode, summarized, 0);
}

START_TEST(test_validation_sums)
{
	validation_roi(MODE_BASE, false, 1000000);
	validation_roi(MODE_THP, false, 333333);
	validation(MODE_BASE, false);
	validation(MODE_THP, false);
	validation(MODE_HUGETLBFS, false);
	validation(MODE_THP, true);
}
END_TEST

#define MMAP_A "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
#define MMAP_B "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n"
#define MADV_A "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 4194304, 14 ) --> [pre-success] Success(0x0)\n"

/* "MMAPS" then a store to every 4 KiB page of [@a, @a + @len), for each (a, len) pair. */
static char *stores(const char *head, vaddr_t a1, uint64_t l1, vaddr_t a2, uint64_t l2)
{
	size_t cap = 1 << 20, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t, cap, "%s", head);
	for (uint64_t o = 0; o < l1; o += 4096)
		n += (size_t)snprintf(t + n, cap - n, " S %llx,8\n", (unsigned long long)(a1 + o));
	for (uint64_t o = 0; o < l2; o += 4096)
		n += (size_t)snprintf(t + n, cap - n, " S %llx,8\n", (unsigned long long)(a2 + o));
	return t;
}

/*
 * Two 4 MiB mappings, THP enabled=madvise, MADV_HUGEPAGE on A only: A's two
 * aligned 2 MiB ranges fault as two THPs (thp_fault_alloc 2, pgfault 2); B is
 * not eligible (enabled=madvise without VM_HUGEPAGE: no THP attempt, so no
 * fallback either) and takes 1024 4K faults. Each first store to a page misses
 * the L1 and STLB and walks: 2 on A (its 2 MiB pages), 1024 on B.
 */
START_TEST(test_two_mappings)
{
	char *t = stores(MMAP_A MMAP_B MADV_A, 0x40000000, 4 << 20, 0x80000000, 4 << 20);
	const struct vrec *a, *b;

	run(t, "os.thp.enabled=madvise", NULL);
	free(t);
	assert_sums(S);
	ck_assert_uint_eq(S->k.mm->vacct.nrec, 3); /* [none], A, B */
	a = rec_at(S, 0x40000000);
	b = rec_at(S, 0x80000000);
	ck_assert_uint_eq(a->ev[VE_THP_FAULT_ALLOC], 2);
	ck_assert_uint_eq(a->ev[VE_PGFAULT], 2);
	ck_assert_uint_eq(a->ev[VE_THP_FAULT_FALLBACK], 0);
	ck_assert_uint_eq(a->huge_bytes, 4 << 20);
	ck_assert_uint_eq(a->rss_bytes, 4 << 20);
	ck_assert_uint_eq(a->hw[VH_DTLB_MISSES], 2);
	ck_assert_uint_eq(a->hw[VH_WALKS], 2);
	ck_assert_ptr_null(a->thp_no);
	ck_assert(a->flags & VM_HUGEPAGE);
	ck_assert_uint_eq(b->ev[VE_THP_FAULT_ALLOC], 0);
	ck_assert_uint_eq(b->ev[VE_THP_FAULT_FALLBACK], 0);
	ck_assert_uint_eq(b->ev[VE_PGFAULT], 1024);
	ck_assert_uint_eq(b->huge_bytes, 0);
	ck_assert_uint_eq(b->rss_bytes, 4 << 20);
	ck_assert_uint_eq(b->hw[VH_DTLB_MISSES], 1024);
	ck_assert_uint_eq(b->hw[VH_WALKS], 1024);
	ck_assert_str_eq(b->thp_no, "enabled=madvise");
	ck_assert_str_eq(vmas_kind(a, 1), "anon");
	for (int k = 0; k < VH_NR; k++)
		ck_assert_uint_eq(S->k.mm->vacct.rec[0].hw[k], 0);
	done();
}
END_TEST

/* The reasons smaps' THPeligible is 0, one VMA each. */
START_TEST(test_thp_eligible_reasons)
{
	struct vma anon = { 0x40000000, 0x40400000, VM_READ | VM_WRITE, 0, 0 };
	struct vma v;

	run("", "os.thp.enabled=always", NULL);
	ck_assert_ptr_null(khugepaged_thp_ineligible(&S->k, &anon));
	v = anon;
	v.flags |= VM_NOHUGEPAGE;
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "VM_NOHUGEPAGE");
	v = anon;
	v.end = v.start + (2 << 20) - 4096; /* too small for an aligned 2 MiB */
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "no aligned 2M");
	v = (struct vma){ 0x40001000, 0x40401000, VM_READ | VM_WRITE, 0, 0 }; /* 4 MiB, one aligned 2M */
	ck_assert_ptr_null(khugepaged_thp_ineligible(&S->k, &v));
	v = (struct vma){ 0x40001000, 0x40201000, VM_READ | VM_WRITE, 0, 0 }; /* 2 MiB, none aligned */
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "no aligned 2M");
	v = anon;
	v.flags |= VM_SHARED;
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "shmem");
	v = anon;
	v.flags |= VM_HUGETLB;
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "hugetlb");
	/* a read-only file mapping, 2M-aligned file offset: CONFIG_READ_ONLY_THP_FOR_FS decides */
	v = (struct vma){ 0x40000000, 0x40400000, VM_READ | VM_EXEC | VM_FILE, 5, 0 };
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "read_only_thp_for_fs=false");
	S->cfg.thp.read_only_thp_for_fs = true;
	ck_assert_ptr_null(khugepaged_thp_ineligible(&S->k, &v));
	v.pgoff = 1; /* vm_start - vm_pgoff not 2M aligned */
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "no aligned 2M");
	v.pgoff = 0;
	v.flags |= VM_WRITE;
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &v), "file open for write");
	S->cfg.thp.enabled = THP_MADVISE;
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &anon), "enabled=madvise");
	anon.flags |= VM_HUGEPAGE;
	ck_assert_ptr_null(khugepaged_thp_ineligible(&S->k, &anon));
	S->cfg.thp.enabled = THP_NEVER;
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &anon), "enabled=never");
	S->cfg.mode = MODE_BASE;
	ck_assert_str_eq(khugepaged_thp_ineligible(&S->k, &anon), "mode=base");
	done();
}
END_TEST

/*
 * One mapping split three ways by mprotect, part of it unmapped, a new mapping
 * in the hole: A stays one row (its pieces summed), its THP split by the
 * mprotect is A's, the later mapping is a row of its own, and a mapping
 * unmapped whole keeps its counts with size 0.
 */
START_TEST(test_split_unmap)
{
	char *t = stores(MMAP_A MADV_A, 0x40000000, 4 << 20, 0, 0);
	char *u;
	size_t n = strlen(t), cap = n + 4096;
	const struct vrec *a, *c, *b;

	u = realloc(t, cap);
	ck_assert_ptr_nonnull(u);
	snprintf(u + n, cap - n, "%s",
		 /* split A's first THP: [0x40100000, +4K) read-only */
		 "SYSCALL[7,1](10) sys_mprotect ( 0x40100000, 4096, 1 )[sync] --> Success(0x0)\n"
		 " L 40100000,8\n"
		 /* unmap A's second 2 MiB, map C there, touch it */
		 "SYSCALL[7,1](11) sys_munmap ( 0x40200000, 2097152 )[sync] --> Success(0x0)\n"
		 "SYSCALL[7,1](9) sys_mmap ( 0x40200000, 8192, 3, 50, 4294967295, 0 ) --> [pre-success] Success(0x40200000)\n"
		 " S 40200000,8\n S 40201000,8\n"
		 /* B: mapped, touched, unmapped whole */
		 MMAP_B " S 80000000,8\n"
		 "SYSCALL[7,1](11) sys_munmap ( 0x80000000, 4194304 )[sync] --> Success(0x0)\n");
	run(u, "os.thp.enabled=always", NULL);
	free(u);
	assert_sums(S);
	ck_assert_uint_eq(S->k.mm->vacct.nrec, 4); /* [none], A, C, B */
	a = &S->k.mm->vacct.rec[1];
	c = &S->k.mm->vacct.rec[2];
	b = &S->k.mm->vacct.rec[3];
	ck_assert_uint_eq(a->ev[VE_THP_FAULT_ALLOC], 2);
	ck_assert_uint_eq(a->ev[VE_THP_SPLIT_PMD], 1);
	ck_assert_uint_eq(a->size_bytes, 2 << 20);
	ck_assert_uint_eq(a->start, 0x40000000);
	ck_assert_uint_eq(a->end, 0x40200000);
	ck_assert_uint_eq(a->huge_bytes, 0); /* its first THP is PTE-mapped now */
	ck_assert_uint_eq(a->rss_bytes, 2 << 20);
	ck_assert(S->k.mm->vmas.n >= 3); /* A is three VMAs (mprotect), one row */
	ck_assert_uint_eq(c->start, 0x40200000);
	ck_assert_uint_eq(c->ev[VE_PGFAULT], 2);
	ck_assert_uint_eq(c->rss_bytes, 8192);
	ck_assert_str_eq(c->thp_no, "no aligned 2M");
	ck_assert_uint_eq(b->size_bytes, 0);
	ck_assert_uint_eq(b->rss_bytes, 0);
	ck_assert_uint_eq(b->ev[VE_THP_FAULT_ALLOC], 1); /* B's first 2 MiB, a THP while mapped */
	ck_assert_str_eq(b->thp_no, "unmapped");
	done();
}
END_TEST

/* mremap moves a mapping and its row; brk growth stays one heap row. */
START_TEST(test_mremap_brk)
{
	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 65536, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
	    " S 40000000,8\n"
	    "SYSCALL[7,1](25) sys_mremap ( 0x40000000, 65536, 131072, 0x1 ) --> [pre-success] Success(0x50000000)\n"
	    " S 50000000,8\n S 50010000,8\n"
	    "SYSCALL[7,1](12) sys_brk ( 0x0 ) --> [pre-success] Success(0x4035000)\n"
	    "SYSCALL[7,1](12) sys_brk ( 0x4056000 ) --> [pre-success] Success(0x4056000)\n"
	    " S 04035000,8\n"
	    "SYSCALL[7,1](12) sys_brk ( 0x4076000 ) --> [pre-success] Success(0x4076000)\n"
	    " S 04056000,8\n",
	    "os.thp.enabled=always", NULL);
	assert_sums(S);
	ck_assert_uint_eq(S->k.mm->vacct.nrec, 3); /* [none], the mremapped mapping, the heap */
	ck_assert_uint_eq(S->k.mm->vacct.rec[1].start, 0x50000000);
	ck_assert_uint_eq(S->k.mm->vacct.rec[1].size_bytes, 131072);
	ck_assert_uint_eq(S->k.mm->vacct.rec[1].ev[VE_PGFAULT], 2); /* the moved page kept its frame */
	ck_assert_uint_eq(S->k.mm->vacct.rec[1].rss_bytes, 2 * 4096); /* the moved page, the new one */
	ck_assert_str_eq(vmas_kind(&S->k.mm->vacct.rec[2], 2), "heap");
	ck_assert_uint_eq(S->k.mm->vacct.rec[2].start, 0x4035000);
	ck_assert_uint_eq(S->k.mm->vacct.rec[2].end, 0x4076000);
	ck_assert_uint_eq(S->k.mm->vacct.rec[2].ev[VE_PGFAULT], 2);
	done();
}
END_TEST

/*
 * The CSV's name column is unique in the run, as a loader maps a library: the
 * whole file read-only at offset 0, then over it (MAP_FIXED) its text r-x at
 * 0x1000, its read-only data at 0x3000 and its data rw- at 0x4000, made
 * read-only (RELRO) by mprotect: "libx.so.1:r-xp" alone, the three r--p by
 * their offsets; an anonymous mapping unmapped and another made at the same
 * address later are "anon@0x50000000#ID".
 */
START_TEST(test_csv_names)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, rows = 0;
	const char *want[] = { "libx.so.1:r--p+0x0", "libx.so.1:r-xp", "libx.so.1:r--p+0x3000",
			       "libx.so.1:r--p+0x4000", "anon@0x50000000#5", "anon@0x50000000#6" };
	FILE *f;

	run("SYSCALL[7,1](9) sys_mmap ( 0x0, 20480, 1, 2, 3, 0 ) --> [pre-success] Success(0x40000000)\n"
	    "SYSCALL[7,1](9) sys_mmap ( 0x40001000, 8192, 5, 18, 3, 4096 ) --> [pre-success] Success(0x40001000)\n"
	    "SYSCALL[7,1](9) sys_mmap ( 0x40003000, 4096, 1, 18, 3, 12288 ) --> [pre-success] Success(0x40003000)\n"
	    "SYSCALL[7,1](9) sys_mmap ( 0x40004000, 4096, 3, 18, 3, 16384 ) --> [pre-success] Success(0x40004000)\n"
	    "SYSCALL[7,1](10) sys_mprotect ( 0x40004000, 4096, 1 )[sync] --> Success(0x0)\n"
	    " L 40000000,8\n L 40001000,8\n L 40003000,8\n L 40004000,8\n"
	    "SYSCALL[7,1](9) sys_mmap ( 0x50000000, 4096, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x50000000)\n"
	    " S 50000000,8\n"
	    "SYSCALL[7,1](11) sys_munmap ( 0x50000000, 4096 )[sync] --> Success(0x0)\n"
	    "SYSCALL[7,1](9) sys_mmap ( 0x50000000, 4096, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x50000000)\n"
	    " S 50000000,8\n",
	    "os.thp.enabled=always", NULL);
	assert_sums(S);
	ck_assert_uint_eq(S->k.mm->vacct.nrec, 7);
	for (size_t i = 1; i <= 4; i++)
		S->k.mm->vacct.rec[i].path = strdup("/usr/lib/libx.so.1"); /* (a lackey trace has no paths) */
	ck_assert_uint_eq(S->k.mm->vacct.rec[3].off, 0x3000);
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	vmas_write_csv(&S->k, "thp", -1, true, 0, S->csv_prov, f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char id[16], name[64];
		unsigned k;

		if (!strncmp(line, "mode,", 5))
			continue;
		ck_assert_int_eq(sscanf(line, "thp,%15[^,],%63[^,],", id, name), 2);
		k = (unsigned)atoi(id);
		ck_assert_uint_ge(k, 1);
		ck_assert_str_eq(name, want[k - 1]);
		rows++;
	}
	ck_assert_uint_eq(rows, 6);
	free(buf);
	done();
}
END_TEST

/*
 * A GUPS-style trace without mmap lines: per update an instruction fetch and a
 * read-modify-write of a random word of a @mb MiB table at 0x7f0000000000, so
 * every reference falls in an implicit region (os.implicit.granule: 2 MiB, or
 * 4 KiB under os.profile osless, each page its own region and row) and the L1
 * misses move between regions all the time; halfway a munmap of @mb / 4 MiB
 * from 0x7f0000300000 (the regions it covers shrink or go; the updates there
 * then fault new ones).
 */
static char *gups_implicit(unsigned updates, unsigned mb)
{
	size_t cap = (size_t)updates * 48 + 4096, n = 0;
	char *t = malloc(cap);
	uint64_t x = 88172645463325252ULL;

	ck_assert_ptr_nonnull(t);
	for (unsigned i = 0; i < updates; i++) {
		uint64_t w;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		w = (x * 0x2545F4914F6CDD1DULL) >> 11 & (((uint64_t)mb << 20) / 8 - 1);
		if (i == updates / 2)
			n += (size_t)snprintf(t + n, cap - n,
					      "SYSCALL[7,1](11) sys_munmap ( 0x7f0000300000, %u )[sync] --> Success(0x0)\n",
					      mb << 18);
		n += (size_t)snprintf(t + n, cap - n, "I  %08x,4\n M %llx,8\n", 0x401000 + (i & 3) * 4,
				      (unsigned long long)(0x7f0000000000ULL + w * 8));
	}
	return t;
}

/* @trace replayed in whole batches under the --set overrides @set (NULL-ended list of 2). */
static struct sim *replay_batches(const char *trace, const char *set1, const char *set2, bool nocache)
{
	struct sim *s = calloc(1, sizeof(*s));
	char path[] = "/tmp/check_vmas_XXXXXX";
	int fd = mkstemp(path), n;
	struct sim_config c;
	struct err e = { 0 };
	struct trace_reader *tr;
	struct trace_batch b;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, trace, strlen(trace)), (ssize_t)strlen(trace));
	close(fd);
	config_defaults(&c);
	c.memory = 256ULL << 20;
	if (set1)
		ck_assert_msg(config_set(&c, set1, &e) == 0, "%s", e.msg);
	if (set2)
		ck_assert_msg(config_set(&c, set2, &e) == 0, "%s", e.msg);
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	ck_assert_msg(sim_init(s, &c, &e) == 0, "%s", e.msg);
	s->k.mm->vacct.nocache = nocache;
	tr = trace_open(path, TF_LACKEY, &e);
	ck_assert_msg(tr != NULL, "%s", e.msg);
	s->k.trace_name = tr->name;
	while ((n = trace_next(tr, &b, &e)) > 0)
		ck_assert_msg(sim_run_batch(s, &b, &e) == 0, "%s", e.msg);
	ck_assert_msg(n == 0, "%s", e.msg);
	sim_finish(s);
	trace_close(tr);
	unlink(path);
	return s;
}

/*
 * The window cache (vmas.c) answers the MMU's window hook for a mapping met
 * before without a search, and changes no count: every record equals the
 * oracle's, a run that searches the extents on every look-up. Searches: two
 * per region made (the L1 miss in the gap before its fault, and the fault's
 * own look-up), one per region alive at the munmap (every cached window goes),
 * and a few collisions (2 MiB: 32 in all; osless: 2 x 1,282 + 768 + 7 = 3,339);
 * without the cache, one per L1 miss outside the window (about one per update).
 */
static void implicit_regions(const char *profile, unsigned mb, size_t rows, uint64_t max_searches)
{
	char *t = gups_implicit(20000, mb);
	struct sim *s = replay_batches(t, profile, "os.mode=base", false);
	struct sim *o = replay_batches(t, profile, "os.mode=base", true);

	free(t);
	assert_sums(s);
	ck_assert_uint_eq(s->k.mm->vacct.nrec, rows);
	ck_assert_uint_eq(o->k.mm->vacct.nrec, rows);
	for (size_t i = 0; i < s->k.mm->vacct.nrec; i++) {
		const struct vrec *r = &s->k.mm->vacct.rec[i], *q = &o->k.mm->vacct.rec[i];

		ck_assert_uint_eq(r->start, q->start);
		ck_assert_uint_eq(r->end, q->end);
		ck_assert_uint_eq(r->size_bytes, q->size_bytes);
		ck_assert_uint_eq(r->rss_bytes, q->rss_bytes);
		for (int k = 0; k < VH_NR; k++)
			ck_assert_uint_eq(r->hw[k], q->hw[k]);
		for (int k = 0; k < VE_NR; k++)
			ck_assert_uint_eq(r->ev[k], q->ev[k]);
	}
	ck_assert_uint_gt(o->k.mm->vacct.searches, 19000);
	ck_assert_msg(s->k.mm->vacct.searches <= max_searches, "%llu searches",
		      (unsigned long long)s->k.mm->vacct.searches);
	sim_destroy(s);
	sim_destroy(o);
	free(s);
	free(o);
}

START_TEST(test_implicit_window_cache)
{
	/* [none], the text, 8 regions of 2 MiB, and 3 made again in the unmapped 4 MiB */
	implicit_regions(NULL, 16, 13, 40);
	/* osless: a region per page touched (the table's 1,024 pages; 256 again after the munmap) */
	implicit_regions("os.profile=osless", 4, 1282, 3400);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmas");
	TCase *tc = tcase_create("vmas");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_validation_sums);
	tcase_add_test(tc, test_two_mappings);
	tcase_add_test(tc, test_thp_eligible_reasons);
	tcase_add_test(tc, test_split_unmap);
	tcase_add_test(tc, test_mremap_brk);
	tcase_add_test(tc, test_csv_names);
	tcase_add_test(tc, test_implicit_window_cache);
	suite_add_tcase(s, tc);
	return check_run(s);
}
