/*
 * check_roi.c - the region of interest (sim/roi.c; run --skip-refs & co.) on the
 * validation trace tests/validation/small.lackey.zst and on small traces made
 * here:
 *  (a) a warm-up of N references then the rest counts, for every additive
 *      counter, the whole replay's count minus that of a replay of only the
 *      first N references, and leaves the state of that replay (TLB and PWC
 *      contents, page tables, free memory, simulated time) with every counter 0;
 *  (b) a region of N references counts what a replay of the first N counts;
 *  (c) the skipped stretch applies its mapping events (an mmap inside it maps,
 *      a munmap unmaps) and faults its pages in, the kernel model only: a page
 *      written in it is the program's own frame when the region begins (64 MiB
 *      written then read: as many distinct frames as pages, no fault in the
 *      region; THP where the policy gives it), a page only read is the zero
 *      page, a page read then written a copy; its TLB counts are unchanged;
 *  (f) an mtr version 3 trace's TOUCH records (pages touched before a
 *      capture's region of interest) fault their pages in and count nothing;
 *      `trace convert` keeps them;
 *  (d) the instruction forms agree with the reference forms at the same cut, and
 *      split an R_INSNS record exactly;
 *  (e) through the public API, the counters are zero right after a warm-up and
 *      the state is warm (the next reference hits the TLB).
 * The references of "the first N" runs are cut from the reader's batches here,
 * independently of roi.c.
 */
#include <check.h>
#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "layout.h"
#include "mmusim.h"
#include "provenance.h"
#include "sim.h"
#include "trace.h"
#include "workload.h"

#define TRACE "tests/validation/small.lackey.zst"

/* The additive counters of struct stats: every member that counts events. */
#define COUNTERS(X)                                                                            \
	X(instructions) X(ifetch) X(load) X(store) X(modify) X(lookups[0]) X(lookups[1])        \
	X(l1[0].hits[0]) X(l1[0].hits[1]) X(l1[0].hits[2]) X(l1[0].misses[0])                  \
	X(l1[0].misses[1]) X(l1[0].misses[2]) X(l1[1].hits[0]) X(l1[1].hits[1])                 \
	X(l1[1].hits[2]) X(l1[1].misses[0]) X(l1[1].misses[1]) X(l1[1].misses[2])               \
	X(stlb.hits) X(stlb.misses) X(walks) X(pte_reads) X(walk_cycles)                        \
	X(pwc[0].hits) X(pwc[0].misses) X(pwc[1].hits) X(pwc[1].misses) X(pwc[2].hits)          \
	X(pwc[2].misses) X(pwc[3].hits) X(pwc[3].misses)                                        \
	X(served[0]) X(served[1]) X(served[2]) X(served[3])                                     \
	X(pgfault) X(tlb_invalidations) X(thp_file_mapped) X(thp_fault_alloc)                   \
	X(thp_fault_fallback) X(thp_split_pmd) X(thp_split_page) X(thp_deferred_split_page)     \
	X(thp_collapse_alloc) X(thp_collapse_alloc_failed) X(thp_scan_exceed_none_pte)          \
	X(thp_zero_page_alloc) X(thp_zero_page_alloc_failed) X(compact_stall)                   \
	X(compact_success) X(compact_fail) X(khugepaged_pages_collapsed)                        \
	X(khugepaged_full_scans) X(pgmajfault) X(pswpin) X(pswpout) X(pgscan_kswapd)            \
	X(pgscan_direct) X(pgsteal_kswapd) X(pgsteal_direct) X(allocstall_normal)               \
	X(allocstall_movable) X(pageoutrun) X(pgactivate) X(pgdeactivate) X(thp_swpout)         \
	X(thp_swpout_fallback) X(thp_scan_exceed_swap_pte) X(pglazyfree) X(pglazyfreed)         \
	X(cyc_total) X(cyc_instructions)                                                        \
	X(cyc_translation) X(cyc_fault) X(cyc_data) X(cyc_compaction) X(cyc_khugepaged)         \
	X(cyc_reclaim) X(cyc_kswapd) X(compact_migrated)

/* The gauges: the state at the end, not counts. */
#define GAUGES(X)                                                                              \
	X(nr_anon_pages) X(nr_anon_transparent_hugepages) X(nr_hugetlb_pages)                  \
	X(nr_hugetlb_pages_1g) X(nr_file_pages) X(nr_mapped) X(nr_file_hugepages)              \
	X(nr_file_pmdmapped) X(nr_page_table_pages) X(rss_bytes) X(huge_bytes) X(free_pages)

static void config(struct sim_config *c, enum os_mode mode, const char *set1, const char *set2)
{
	struct err e = { 0 };

	config_defaults(c);
	c->mode = mode;
	if (set1)
		ck_assert_msg(config_set(c, set1, &e) == 0, "%s: %s", set1, e.msg);
	if (set2)
		ck_assert_msg(config_set(c, set2, &e) == 0, "%s: %s", set2, e.msg);
	ck_assert_msg(config_validate(c, "--set", &e) == 0, "%s", e.msg);
}

/* The validation trace as `mmusim run` reads it (layout applied), or a workload. */
static struct trace_reader *open_input(const struct sim_config *c, const char *workload)
{
	struct err e = { 0 };
	struct trace_reader *tr;

	if (workload)
		tr = workload_open_kernel(workload, c->seed, c->kernel, &e);
	else if ((tr = trace_open(TRACE, TF_AUTO, &e)))
		tr = layout_open(tr, c, &e);
	ck_assert_msg(tr != NULL, "%s", e.msg);
	return tr;
}

/* What record @r counts towards a cut in references (@insns false) or instructions. */
static uint64_t units(const struct trace_rec *r, bool insns)
{
	if (!insns)
		return r->kind <= R_MODIFY;
	return r->kind == R_IFETCH ? 1 : r->kind == R_INSNS ? r->size : 0;
}

/*
 * Replay the input on a new simulator of @c. @first > 0: only up to the record
 * that holds the @first-th reference (instruction, with @insns; such a record
 * must end exactly there), the reader's batch cut there. Not finished.
 */
static struct sim *replay(const struct sim_config *c, const char *workload, uint64_t first, bool insns)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct err e = { 0 };
	struct trace_reader *tr = open_input(c, workload);
	struct trace_batch b;
	uint64_t seen = 0;
	int n;

	ck_assert_ptr_nonnull(s);
	ck_assert_msg(sim_init(s, c, &e) == 0, "%s", e.msg);
	s->k.trace_name = tr->name;
	while ((n = trace_next(tr, &b, &e)) > 0) {
		size_t cut = b.n;

		for (size_t i = 0; first && i < b.n; i++) {
			seen += units(&b.recs[i], insns);
			if (seen >= first) {
				ck_assert_uint_eq(seen, first); /* the cut ends a record */
				cut = i + 1;
				break;
			}
		}
		b.n = cut;
		ck_assert_msg(sim_run_batch(s, &b, &e) == 0, "%s", e.msg);
		if (first && seen >= first)
			break;
	}
	ck_assert_msg(n >= 0, "%s", e.msg);
	trace_close(tr);
	return s;
}

static void done(struct sim *s)
{
	sim_destroy(s);
	free(s);
}

#define EQ_DIFF(m)                                                                             \
	ck_assert_msg(w->st.m == full->st.m - first->st.m, "%s: warm-up run %llu, whole %llu, first %llu", \
		      #m, (unsigned long long)w->st.m, (unsigned long long)full->st.m,          \
		      (unsigned long long)first->st.m);
#define EQ_GAUGE(m)                                                                            \
	ck_assert_msg(w->st.m == full->st.m, "%s: %llu, whole %llu", #m,                         \
		      (unsigned long long)w->st.m, (unsigned long long)full->st.m);
#define EQ(m)                                                                                  \
	ck_assert_msg(a->st.m == b->st.m, "%s: %llu against %llu", #m,                           \
		      (unsigned long long)a->st.m, (unsigned long long)b->st.m);
#define ZERO(m) ck_assert_msg(s->st.m == 0, "%s: %llu after the warm-up", #m, (unsigned long long)s->st.m);

/* Every counter and gauge of two finished runs equal. */
static void same_counts(const struct sim *a, const struct sim *b)
{
	COUNTERS(EQ)
	GAUGES(EQ)
}

/* One array's tags, recency and (@payloads: a TLB's frames, not a PWC's host pointers) payloads equal. */
static void same_array(const struct tlb_array *x, const struct tlb_array *y, bool payloads)
{
	size_t n = (size_t)x->sets * x->ways;

	ck_assert_uint_eq(x->sets, y->sets);
	ck_assert_uint_eq(x->nr_valid, y->nr_valid);
	if (!n)
		return;
	ck_assert(!memcmp(x->tag, y->tag, n * sizeof(*x->tag)));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(!payloads || x->tag[i] == TLB_KEY_NONE || x->payload[i] == y->payload[i],
			      "entry %zu (tag %llx): payload %llx against %llx", i,
			      (unsigned long long)x->tag[i], (unsigned long long)x->payload[i],
			      (unsigned long long)y->payload[i]);
	ck_assert(!memcmp(x->mru, y->mru, x->sets * sizeof(*x->mru)));
}

/* The state of two simulators equal: what a warm-up must leave warm. */
static void same_state(const struct sim *a, const struct sim *b)
{
	for (int side = 0; side < 2; side++) {
		for (int ps = 0; ps < PS_NR; ps++)
			same_array(&a->mmu.tlb.l1[side][ps], &b->mmu.tlb.l1[side][ps], true);
		ck_assert_uint_eq(a->mmu.last_vpn[side], b->mmu.last_vpn[side]);
	}
	for (unsigned i = 0; i < a->mmu.tlb.nr_stlb; i++)
		same_array(&a->mmu.tlb.stlb[i], &b->mmu.tlb.stlb[i], true);
	for (int l = 0; l < PWC_NR; l++)
		same_array(&a->mmu.pwc[l], &b->mmu.pwc[l], false);
	ck_assert_uint_eq(a->k.mm->pt.nr_tables, b->k.mm->pt.nr_tables);
	for (int ps = 0; ps < PS_NR; ps++)
		ck_assert_uint_eq(a->k.mm->pt.nr_leaves[ps], b->k.mm->pt.nr_leaves[ps]);
	ck_assert_uint_eq(a->k.buddy.nr_free_pages, b->k.buddy.nr_free_pages);
	ck_assert_uint_eq(a->k.mm->vmas.n, b->k.mm->vmas.n);
	ck_assert_uint_eq(sim_now(a), sim_now(b)); /* simulated time goes on */
	ck_assert_uint_eq(a->k.khugepaged.next_wake, b->k.khugepaged.next_wake);
	ck_assert_uint_eq(a->st.nr_anon_pages, b->st.nr_anon_pages);
	ck_assert_uint_eq(a->st.nr_page_table_pages, b->st.nr_page_table_pages);
}

/* Every counter of @s (not finished) zero: the report's, the MMU's, the record counts. */
static void all_zero(const struct sim *s)
{
	static const struct mmu_stats zero_mmu;

	COUNTERS(ZERO)
	ck_assert(!memcmp(&s->mmu.st, &zero_mmu, sizeof(zero_mmu)));
	ck_assert_uint_eq(s->mmu.memo_hits[0] + s->mmu.memo_hits[1], 0);
	for (int k = 0; k < R_KIND_NR; k++)
		ck_assert_uint_eq(s->nrec[k], 0);
}

/* (a) for one mode and cut. */
static void warmup_case(enum os_mode mode, uint64_t n)
{
	struct sim_config c, cw;
	char set[64];
	struct sim *full, *first, *w, *wcut;

	snprintf(set, sizeof(set), "roi.warmup_refs=%llu", (unsigned long long)n);
	config(&c, mode, NULL, NULL);
	config(&cw, mode, set, NULL);
	full = replay(&c, NULL, 0, false);
	first = replay(&c, NULL, n, false);
	/* right after the warm-up: the state of the first n references, nothing counted */
	wcut = replay(&cw, NULL, n, false);
	same_state(wcut, first);
	all_zero(wcut);
	ck_assert_uint_eq(wcut->st.roi.warmup_refs_run, n);
	w = replay(&cw, NULL, 0, false);
	sim_finish(full);
	sim_finish(first);
	sim_finish(w);
	COUNTERS(EQ_DIFF)
	GAUGES(EQ_GAUGE)
	ck_assert_uint_eq(w->st.ifetch + w->st.load + w->st.store + w->st.modify + n,
			  full->st.ifetch + full->st.load + full->st.store + full->st.modify);
	ck_assert_uint_eq(w->st.roi.warmup_refs_run, n);
	ck_assert_uint_eq(w->st.roi.warmup_insns_run, first->st.instructions);
	ck_assert(!w->st.roi.stopped);
	ck_assert(w->st.roi.started);
	done(full);
	done(first);
	done(w);
	done(wcut);
}

START_TEST(warmup_base)
{
	/* one reference; the end of the first batch's references; mid-trace */
	warmup_case(MODE_BASE, 1);
	warmup_case(MODE_BASE, 3000);
	warmup_case(MODE_BASE, 100000);
}
END_TEST

START_TEST(warmup_thp)
{
	warmup_case(MODE_THP, 100000);
	warmup_case(MODE_THP, 333333);
	warmup_case(MODE_HUGETLBFS, 100000);
}
END_TEST

/* (b): --sim-refs N is the replay of the first N references; with a skip, of those after it. */
START_TEST(sim_refs)
{
	struct sim_config c, cs;
	struct sim *a, *b;

	config(&c, MODE_THP, NULL, NULL);
	config(&cs, MODE_THP, "roi.sim_refs=100000", NULL);
	a = replay(&cs, NULL, 0, false);
	b = replay(&c, NULL, 100000, false);
	sim_finish(a);
	sim_finish(b);
	same_counts(a, b);
	ck_assert_uint_eq(a->st.ifetch + a->st.load + a->st.store + a->st.modify, 100000);
	ck_assert(a->st.roi.stopped);
	ck_assert_uint_eq(a->st.roi.skipped_refs + a->st.roi.warmup_refs_run, 0);
	done(a);
	done(b);
	/* a warm-up of 100000 and a region of 50000: the first 150000 minus the first 100000 */
	config(&cs, MODE_THP, "roi.warmup_refs=100000", "roi.sim_refs=50000");
	a = replay(&cs, NULL, 0, false);
	b = replay(&c, NULL, 150000, false);
	{
		struct sim *first = replay(&c, NULL, 100000, false), *w = a, *full = b;

		sim_finish(a);
		sim_finish(b);
		sim_finish(first);
		COUNTERS(EQ_DIFF)
		GAUGES(EQ_GAUGE)
		done(first);
	}
	ck_assert_uint_eq(a->st.ifetch + a->st.load + a->st.store + a->st.modify, 50000);
	done(a);
	done(b);
}
END_TEST

/* An input that ends in the warm-up (or the skip) counts nothing; its state is the whole run's. */
START_TEST(region_never_reached)
{
	static const char *const sets[2] = { "roi.warmup_refs=99999999", "roi.skip_refs=99999999" };

	for (int i = 0; i < 2; i++) {
		struct sim_config c, cw;
		struct sim *full, *w, *s;

		config(&c, MODE_THP, NULL, NULL);
		config(&cw, MODE_THP, sets[i], NULL);
		full = replay(&c, NULL, 0, false);
		w = replay(&cw, NULL, 0, false);
		sim_finish(full);
		sim_finish(w);
		s = w;
		COUNTERS(ZERO)
		ck_assert(!w->st.roi.started);
		ck_assert(!w->st.roi.stopped);
		/* the whole input is the warm-up, or skipped: its memory is the whole run's */
		GAUGES(EQ_GAUGE)
		ck_assert_uint_gt(w->st.nr_anon_pages, 0);
		if (i == 0) {
			ck_assert_uint_eq(w->st.roi.warmup_refs_run, full->st.ifetch + full->st.load +
									  full->st.store + full->st.modify);
		} else {
			ck_assert_uint_eq(w->st.roi.skipped_refs, full->st.ifetch + full->st.load +
								      full->st.store + full->st.modify);
			ck_assert_uint_eq(w->st.roi.skipped_insns, full->st.instructions);
		}
		done(full);
		done(w);
	}
}
END_TEST

/* Write the lackey text @text to a temporary file; its path in @path. */
static void write_trace(char *path, const char *text)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Replay the lackey file @path on @c; 0, or -1 with @msg. */
static int replay_text(const struct sim_config *c, const char *path, struct sim *s, char *msg)
{
	struct err e = { 0 };
	struct trace_reader *tr = trace_open(path, TF_LACKEY, &e);
	struct trace_batch b;
	int n, rc = 0;

	ck_assert_msg(tr != NULL, "%s", e.msg);
	ck_assert_msg(sim_init(s, c, &e) == 0, "%s", e.msg);
	s->k.trace_name = tr->name;
	while (!rc && (n = trace_next(tr, &b, &e)) > 0)
		rc = sim_run_batch(s, &b, &e);
	trace_close(tr);
	if (rc)
		snprintf(msg, 256, "%.255s", e.msg);
	sim_finish(s);
	return rc;
}

#define MMAP_4M "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
#define MUNMAP_HI "SYSCALL[7,1](11) sys_munmap ( 0x40200000, 2097152 ) --> [pre-success] Success(0x0)\n"

/* (c): the skipped stretch's mapping events apply; its references fault their pages in. */
START_TEST(skip_events)
{
	char path[] = "/tmp/check_roi_XXXXXX", msg[256];
	struct sim_config c;
	struct sim s;

	/* skipped: the mmap, two stores */
	write_trace(path, MMAP_4M " S 40000000,8\n S 40001000,8\n"
			  " S 40002000,8\n S 40000008,8\n S 40001008,8\n");
	config(&c, MODE_BASE, "os.implicit.enabled=false", "roi.skip_refs=2");
	ck_assert_msg(replay_text(&c, path, &s, msg) == 0, "%s", msg);
	/* the three simulated stores: only 0x40002000 faults, the skipped pages are resident */
	ck_assert_uint_eq(s.st.store, 3);
	ck_assert_uint_eq(s.st.pgfault, 1);
	ck_assert_uint_eq(s.st.roi.skipped_refs, 2);
	ck_assert_uint_eq(s.st.roi.skipped_events, 1);
	ck_assert_uint_eq(s.st.nr_anon_pages, 3);
	/* and their TLB counts are a cold TLB's: each store's first touch misses */
	ck_assert_uint_eq(s.st.l1[SIDE_D].misses[PS_4K], 3);
	ck_assert_uint_eq(s.st.walks, 3);
	sim_destroy(&s);
	unlink(path);

	/* a skipped store outside every mapping is what it is in the region: an error */
	strcpy(path, "/tmp/check_roi_XXXXXX");
	write_trace(path, " S 50000000,8\n" MMAP_4M " S 40000000,8\n");
	config(&c, MODE_BASE, "os.implicit.enabled=false", "roi.skip_refs=1");
	ck_assert_int_eq(replay_text(&c, path, &s, msg), -1);
	ck_assert_msg(strstr(msg, "record 1: address 0x50000000 is outside every mapping"), "%s", msg);
	sim_destroy(&s);
	unlink(path);

	/* a munmap in the skipped stretch unmaps: a reference after it has no VMA */
	strcpy(path, "/tmp/check_roi_XXXXXX");
	write_trace(path, MMAP_4M " S 40000000,8\n" MUNMAP_HI " S 40000008,8\n S 40200000,8\n");
	config(&c, MODE_BASE, "os.implicit.enabled=false", "roi.skip_refs=2");
	ck_assert_int_eq(replay_text(&c, path, &s, msg), -1);
	ck_assert_msg(strstr(msg, "record 5:") && strstr(msg, "40200000"), "%s", msg);
	sim_destroy(&s);
	/* and without the skip, the same: the munmap is the kernel's either way */
	config(&c, MODE_BASE, "os.implicit.enabled=false", NULL);
	ck_assert_int_eq(replay_text(&c, path, &s, msg), -1);
	ck_assert_msg(strstr(msg, "record 5:"), "%s", msg);
	sim_destroy(&s);
	unlink(path);
}
END_TEST

#define BIG_VA 0x40000000ULL
#define BIG_PAGES 16384 /* 64 MiB */

/*
 * Replay @n records @r (events @ev, indexed from the records of the first
 * batch: they must all be in it) on @s, in batches of TRACE_BATCH.
 */
static void run_recs(struct sim *s, const struct trace_rec *r, size_t n, const struct os_event *ev,
		     size_t nev)
{
	struct err e = { 0 };

	for (size_t i = 0; i < n; i += TRACE_BATCH) {
		struct trace_batch b = { .recs = r + i, .n = n - i < TRACE_BATCH ? n - i : TRACE_BATCH,
					 .ev = ev, .nev = nev };

		ck_assert_msg(sim_run_batch(s, &b, &e) == 0, "%s", e.msg);
	}
}

/* The number of distinct frames behind the pages of [@va, @va + @pages 4K), none the zero page. */
static uint64_t distinct_frames(const struct sim *s, vaddr_t va, uint64_t pages)
{
	uint8_t *seen = calloc(s->k.buddy.nr_pages, 1);
	uint64_t n = 0;

	ck_assert_ptr_nonnull(seen);
	for (uint64_t i = 0; i < pages; i++) {
		enum page_size ps;
		pfn_t pfn;

		ck_assert_msg(pt_lookup(&s->k.mm->pt, va + (i << PAGE_SHIFT), &ps, &pfn, NULL), "page %llu not resident",
			      (unsigned long long)i);
		pfn += ((va + (i << PAGE_SHIFT)) & ((1ULL << page_shift_of(ps)) - 1)) >> PAGE_SHIFT;
		ck_assert_uint_ne(pfn, s->k.thp.zero_pfn);
		ck_assert_uint_lt(pfn, s->k.buddy.nr_pages);
		n += !seen[pfn];
		seen[pfn] = 1;
	}
	free(seen);
	return n;
}

/*
 * The records of a program that maps 64 MiB (madvise @advice), writes one word
 * in each page (@how_first: a store, or a load then a store), then reads each page:
 * its set-up is the first *@setup references.
 */
static struct trace_rec *big_trace(size_t *n, uint64_t *setup, struct os_event ev[2], uint64_t advice,
				   bool read_first)
{
	size_t k = 0;
	struct trace_rec *r = calloc(2 + 3 * BIG_PAGES, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	ev[0] = (struct os_event){ .kind = EV_MMAP, .addr = BIG_VA, .len = BIG_PAGES << PAGE_SHIFT,
				   .prot = 3, .flags = MAP_PRIVATE_ | MAP_ANONYMOUS_ | MAP_FIXED_, .fd = -1 };
	ev[1] = (struct os_event){ .kind = EV_MADVISE, .addr = BIG_VA, .len = BIG_PAGES << PAGE_SHIFT,
				   .advice = advice, .fd = -1 };
	r[k++] = (struct trace_rec){ .addr = BIG_VA, .size = 0, .kind = R_EVENT };
	r[k++] = (struct trace_rec){ .addr = BIG_VA, .size = 1, .kind = R_EVENT };
	for (uint64_t i = 0; i < BIG_PAGES; i++) {
		if (read_first)
			r[k++] = (struct trace_rec){ .addr = BIG_VA + (i << PAGE_SHIFT) + 8, .size = 8, .kind = R_LOAD };
		r[k++] = (struct trace_rec){ .addr = BIG_VA + (i << PAGE_SHIFT), .size = 8, .kind = R_STORE };
	}
	*setup = k - 2;
	for (uint64_t i = 0; i < BIG_PAGES; i++)
		r[k++] = (struct trace_rec){ .addr = BIG_VA + (i << PAGE_SHIFT) + 64, .size = 8, .kind = R_LOAD };
	*n = k;
	return r;
}

/*
 * (c): 64 MiB written in the skipped stretch (4K pages: MADV_NOHUGEPAGE), read
 * in the region: every read finds the program's own frame (16384 distinct, no
 * fault, RSS 64 MiB), as a replay of the whole does; a page read then written
 * in the skip is a copy of the zero page. With THP: 32 huge pages, none
 * faulted in the region.
 */
START_TEST(skip_keeps_memory)
{
	for (int thp = 0; thp < 2; thp++)
		for (int read_first = 0; read_first < 2; read_first++) {
			struct os_event ev[2];
			uint64_t setup;
			size_t n;
			struct trace_rec *r = big_trace(&n, &setup, ev, thp ? MADV_HUGEPAGE_ : MADV_NOHUGEPAGE_,
							read_first);
			struct sim_config c;
			char set[64];
			struct sim *s = calloc(1, sizeof(*s));
			struct err e = { 0 };

			snprintf(set, sizeof(set), "roi.skip_refs=%llu", (unsigned long long)setup);
			config(&c, thp ? MODE_THP : MODE_BASE, set, "os.memory=1G");
			ck_assert_msg(sim_init(s, &c, &e) == 0, "%s", e.msg);
			s->k.trace_name = "big";
			run_recs(s, r, n, ev, 2);
			sim_finish(s);
			ck_assert_uint_eq(s->st.roi.skipped_refs, setup);
			ck_assert_uint_eq(s->st.load, BIG_PAGES);
			ck_assert_uint_eq(s->st.pgfault, 0); /* every page resident at the region's start */
			ck_assert_uint_eq(s->st.thp_fault_alloc, 0);
			ck_assert_uint_eq(s->st.rss_bytes, (uint64_t)BIG_PAGES << PAGE_SHIFT);
			ck_assert_uint_eq(distinct_frames(s, BIG_VA, BIG_PAGES), BIG_PAGES);
			if (thp) {
				ck_assert_uint_eq(s->st.nr_anon_transparent_hugepages, BIG_PAGES / 512);
				ck_assert_uint_eq(s->st.huge_bytes, (uint64_t)BIG_PAGES << PAGE_SHIFT);
			} else {
				ck_assert_uint_eq(s->st.nr_anon_pages, BIG_PAGES);
				ck_assert_uint_eq(s->k.thp.nr_zero_ptes, 0); /* read first: each zero PTE copied */
			}
			/* the region's TLB counts: a cold TLB's, one miss and walk per page (4K) */
			ck_assert_uint_eq(s->st.l1[SIDE_D].misses[PS_4K] + s->st.l1[SIDE_D].misses[PS_2M],
					  thp ? BIG_PAGES / 512 : BIG_PAGES);
			sim_destroy(s);
			free(s);
			free(r);
		}
}
END_TEST

/* (c): pages only read in the skip are the zero page (os.zero_page), or the huge zero page in THP mode. */
START_TEST(skip_read_only)
{
	for (int thp = 0; thp < 2; thp++) {
		struct trace_rec r[4 + 1024];
		struct os_event ev[2] = {
			{ .kind = EV_MMAP, .addr = BIG_VA, .len = 4 << 20, .prot = 3,
			  .flags = MAP_PRIVATE_ | MAP_ANONYMOUS_ | MAP_FIXED_, .fd = -1 },
			{ .kind = EV_MADVISE, .addr = BIG_VA, .len = 4 << 20, .advice = MADV_HUGEPAGE_, .fd = -1 },
		};
		struct sim_config c;
		struct sim *s = calloc(1, sizeof(*s));
		struct err e = { 0 };
		enum page_size ps;
		pfn_t pfn;
		size_t k = 0;

		r[k++] = (struct trace_rec){ .addr = BIG_VA, .size = 0, .kind = R_EVENT };
		r[k++] = (struct trace_rec){ .addr = BIG_VA, .size = 1, .kind = R_EVENT };
		for (int i = 0; i < 1024; i++) /* 4 MiB read in the skip */
			r[k++] = (struct trace_rec){ .addr = BIG_VA + ((vaddr_t)i << PAGE_SHIFT), .size = 8, .kind = R_LOAD };
		r[k++] = (struct trace_rec){ .addr = BIG_VA + 8, .size = 8, .kind = R_LOAD };
		r[k++] = (struct trace_rec){ .addr = BIG_VA + 16, .size = 8, .kind = R_LOAD };
		config(&c, thp ? MODE_THP : MODE_BASE, "roi.skip_refs=1024", NULL);
		ck_assert_msg(sim_init(s, &c, &e) == 0, "%s", e.msg);
		s->k.trace_name = "ro";
		run_recs(s, r, k, ev, 2);
		sim_finish(s);
		ck_assert_uint_eq(s->st.pgfault, 0);
		ck_assert_uint_eq(s->st.rss_bytes, 0);
		ck_assert(pt_lookup(&s->k.mm->pt, BIG_VA + 5 * PAGE_SIZE, &ps, &pfn, NULL));
		ck_assert_uint_eq(ps, thp ? PS_2M : PS_4K);
		ck_assert_uint_eq(pfn, thp ? s->k.thp.huge_zero_pfn : s->k.thp.zero_pfn);
		sim_destroy(s);
		free(s);
	}
}
END_TEST

/* Append an mtr varint. */
static unsigned char *put_v(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/*
 * (f) An mtr version 3 trace, byte by byte (traces/README.md): an mmap of 64
 * MiB, a TOUCH (write) of each page, 100 pages touched read then write (a
 * second TOUCH), one fetch touch, then a load from each page (form 2, size 8).
 * Replayed: no fault, every counter the loads', 16384 distinct frames; its
 * TOUCH records in `trace info`'s counts and through `trace convert`.
 */
START_TEST(mtr_touch_records)
{
	static const unsigned char hdr[16] = { 0x89, 'M', 'T', 'R', '\r', '\n', 0x1a, '\n', 3, 0 };
	char path[] = "/tmp/check_roi_XXXXXX", conv[64];
	unsigned char *buf = malloc(64 + 4 * BIG_PAGES + 9 * BIG_PAGES + 1000), *p = buf;
	uint64_t nrec = 0, prev = 0;
	struct sim_config c;
	struct sim *s = calloc(1, sizeof(*s));
	struct trace_reader *tr;
	struct trace_batch b;
	struct err e = { 0 };
	uint64_t kinds[R_KIND_NR] = { 0 }, how[TOUCH_NR] = { 0 };
	int fd, n;

	ck_assert_ptr_nonnull(buf);
	memcpy(p, hdr, 16);
	p += 16;
	*p++ = 0xc1; /* EVENT mmap */
	*p++ = EV_MMAP;
	p = put_v(p, 3);
	p = put_v(p, MAP_PRIVATE_ | MAP_ANONYMOUS_);
	p = put_v(p, 1); /* zigzag(-1) */
	p = put_v(p, 0);
	p = put_v(p, BIG_VA);
	p = put_v(p, (uint64_t)BIG_PAGES << PAGE_SHIFT);
	for (int i = 0; i < 3; i++)
		p = put_v(p, 0);
	nrec++;
	*p++ = 0xc1; /* EVENT madvise(MADV_NOHUGEPAGE) */
	*p++ = EV_MADVISE;
	p = put_v(p, 0);
	p = put_v(p, 0);
	p = put_v(p, 1);
	p = put_v(p, MADV_NOHUGEPAGE_);
	p = put_v(p, BIG_VA);
	p = put_v(p, (uint64_t)BIG_PAGES << PAGE_SHIFT);
	for (int i = 0; i < 3; i++)
		p = put_v(p, 0);
	nrec++;
	for (uint64_t i = 0; i < BIG_PAGES; i++) {
		uint64_t vpn = (BIG_VA >> PAGE_SHIFT) + i;
		int k = i < 100 ? 2 : 1;

		for (int j = 0; j < k; j++) {
			int64_t d = (int64_t)(vpn - prev);

			*p++ = 0xc9;
			*p++ = j == 0 && k == 2 ? TOUCH_READ : TOUCH_WRITE;
			p = put_v(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
			prev = vpn + 1;
			nrec++;
		}
	}
	for (uint64_t i = 0; i < BIG_PAGES; i++) {
		vaddr_t a = BIG_VA + (i << PAGE_SHIFT) + 64;

		*p++ = 2 << 6 | 8 << 2 | R_LOAD;
		for (int j = 0; j < 7; j++)
			*p++ = (unsigned char)(a >> (8 * j));
		nrec++;
	}
	*p++ = 0xc0;
	p = put_v(p, nrec);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, (size_t)(p - buf)), p - buf);
	close(fd);
	free(buf);

	/* the replay: the loads counted, the touches not */
	config(&c, MODE_BASE, NULL, NULL);
	ck_assert_msg(sim_init(s, &c, &e) == 0, "%s", e.msg);
	tr = trace_open(path, TF_MTR, &e);
	ck_assert_msg(tr != NULL, "%s", e.msg);
	ck_assert_uint_eq(tr->version, 3);
	s->k.trace_name = tr->name;
	while ((n = trace_next(tr, &b, &e)) > 0) {
		for (size_t i = 0; i < b.n; i++) {
			kinds[b.recs[i].kind]++;
			if (b.recs[i].kind == R_TOUCH)
				how[b.recs[i].size]++;
		}
		ck_assert_msg(sim_run_batch(s, &b, &e) == 0, "%s", e.msg);
	}
	ck_assert_msg(n == 0, "%s", e.msg);
	trace_close(tr);
	ck_assert_uint_eq(kinds[R_TOUCH], BIG_PAGES + 100);
	ck_assert_uint_eq(how[TOUCH_READ], 100);
	ck_assert_uint_eq(how[TOUCH_WRITE], BIG_PAGES);
	sim_finish(s);
	ck_assert_uint_eq(s->st.load, BIG_PAGES);
	ck_assert_uint_eq(s->st.pgfault, 0);
	ck_assert_uint_eq(s->st.cyc_fault, 0);
	ck_assert_uint_eq(s->st.tlb_invalidations, 0); /* the 100 COWs' flushes: not counted */
	ck_assert_uint_eq(s->st.l1[SIDE_D].misses[PS_4K], BIG_PAGES);
	ck_assert_uint_eq(s->st.nr_anon_pages, BIG_PAGES);
	ck_assert_uint_eq(s->st.rss_bytes, (uint64_t)BIG_PAGES << PAGE_SHIFT);
	ck_assert_uint_eq(s->k.thp.nr_zero_ptes, 0);
	ck_assert_uint_eq(distinct_frames(s, BIG_VA, BIG_PAGES), BIG_PAGES);
	sim_destroy(s);
	free(s);

	/* trace convert keeps them, as version 3 */
	snprintf(conv, sizeof(conv), "%s.mtr", path);
	tr = trace_open(path, TF_MTR, &e);
	ck_assert_msg(tr != NULL, "%s", e.msg);
	ck_assert_msg(mtr_write_all(tr, conv, &e) == 0, "%s", e.msg);
	tr = trace_open(conv, TF_MTR, &e);
	ck_assert_msg(tr != NULL, "%s", e.msg);
	ck_assert_uint_eq(tr->version, 3);
	memset(kinds, 0, sizeof(kinds));
	while ((n = trace_next(tr, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			kinds[b.recs[i].kind]++;
			if (b.recs[i].kind == R_TOUCH && kinds[R_TOUCH] == 201) /* after 100 pairs */
				ck_assert_uint_eq(b.recs[i].addr, BIG_VA + (100 << PAGE_SHIFT));
		}
	ck_assert_msg(n == 0, "%s", e.msg);
	trace_close(tr);
	ck_assert_uint_eq(kinds[R_TOUCH], BIG_PAGES + 100);
	ck_assert_uint_eq(kinds[R_LOAD], BIG_PAGES);
	unlink(conv);
	unlink(path);
}
END_TEST

/* The number of references up to the @k-th reference that is an ifetch (so both cuts meet). */
static uint64_t refs_at_ifetch(uint64_t k, uint64_t *insns)
{
	struct sim_config c;
	struct trace_reader *tr;
	struct trace_batch b;
	struct err e = { 0 };
	uint64_t refs = 0, ifetch = 0;
	int n;

	config(&c, MODE_BASE, NULL, NULL);
	tr = open_input(&c, NULL);
	while ((n = trace_next(tr, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			refs += b.recs[i].kind <= R_MODIFY;
			ifetch += b.recs[i].kind == R_IFETCH;
			if (b.recs[i].kind == R_IFETCH && refs >= k) {
				trace_close(tr);
				*insns = ifetch;
				return refs;
			}
		}
	ck_abort_msg("the trace ends before %llu references", (unsigned long long)k);
	return 0;
}

/* (d): the instruction forms equal the reference forms at the same cut. */
START_TEST(insns_equal_refs)
{
	static const char *const phase[3] = { "skip", "warmup", "sim" };
	uint64_t k, n = refs_at_ifetch(123457, &k);

	for (int i = 0; i < 3; i++) {
		struct sim_config cr, ci;
		char sr[64], si[64];
		struct sim *a, *b;

		snprintf(sr, sizeof(sr), "roi.%s_refs=%llu", phase[i], (unsigned long long)n);
		snprintf(si, sizeof(si), "roi.%s_insns=%llu", phase[i], (unsigned long long)k);
		config(&cr, MODE_THP, sr, NULL);
		config(&ci, MODE_THP, si, NULL);
		a = replay(&cr, NULL, 0, false);
		b = replay(&ci, NULL, 0, false);
		sim_finish(a);
		sim_finish(b);
		same_counts(a, b);
		ck_assert_uint_eq(a->st.roi.skipped_refs, b->st.roi.skipped_refs);
		ck_assert_uint_eq(a->st.roi.skipped_insns, b->st.roi.skipped_insns);
		ck_assert_uint_eq(a->st.roi.warmup_refs_run, b->st.roi.warmup_refs_run);
		ck_assert_uint_eq(a->st.roi.warmup_insns_run, b->st.roi.warmup_insns_run);
		if (i == 0)
			ck_assert_uint_eq(b->st.roi.skipped_insns, k);
		if (i == 2)
			ck_assert_uint_eq(b->st.instructions, k);
		done(a);
		done(b);
	}
}
END_TEST

/* (d): a workload's R_INSNS records (loop bodies) are split at the cut, instruction-exact. */
START_TEST(insns_split)
{
	static const char *const wl = "stream:size=1M,iterations=1";
	struct sim_config c, cw, cs;
	struct sim *full, *w, *s;
	const uint64_t k = 100003; /* not a loop body's multiple */

	config(&c, MODE_BASE, NULL, NULL);
	config(&cw, MODE_BASE, "roi.warmup_insns=100003", NULL);
	config(&cs, MODE_BASE, "roi.skip_insns=100003", "roi.sim_insns=100003");
	full = replay(&c, wl, 0, false);
	w = replay(&cw, wl, 0, false);
	s = replay(&cs, wl, 0, false);
	sim_finish(full);
	sim_finish(w);
	sim_finish(s);
	ck_assert_uint_gt(full->st.instructions, 3 * k);
	ck_assert_uint_eq(w->st.instructions, full->st.instructions - k);
	ck_assert_uint_eq(w->st.roi.warmup_insns_run, k);
	ck_assert_uint_eq(s->st.instructions, k);
	ck_assert_uint_eq(s->st.roi.skipped_insns, k);
	ck_assert(s->st.roi.stopped);
	done(full);
	done(w);
	done(s);
}
END_TEST

/* (e): through the API: zero right after the warm-up, and warm. */
START_TEST(api_zero_after_warmup)
{
	static const char *const sets[] = { "roi.warmup_refs=3", "os.implicit.enabled=false" };
	const struct mmusim_event mm = { .kind = MMUSIM_MMAP, .addr = 0x40000000, .len = 4 << 20,
					 .prot = 3, .flags = 0x22, .fd = -1 };
	struct mmusim *m;
	struct mmusim_report r;

	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .sets = sets, .nsets = 2 }), 0);
	ck_assert_int_eq(mmusim_event(m, &mm), 0);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, 0x40000000, 8), 0);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, 0x40001000, 8), 0);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, 0x40000010, 8), 0);
	ck_assert_int_eq(mmusim_report(m, 0, &r), 0);
	ck_assert_uint_eq(r.refs + r.instructions + r.l1d_hits + r.l1d_misses + r.l1i_hits + r.l1i_misses, 0);
	ck_assert_uint_eq(r.stlb_hits + r.stlb_misses + r.walks + r.walk_cycles + r.pte_reads, 0);
	ck_assert_uint_eq(r.pgfault + r.thp_fault_alloc + r.cycles_total + r.cycles_translation + r.cycles_fault, 0);
	/* warm: the second page's translation is in the L1 dTLB */
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, 0x40001008, 8), 0);
	ck_assert_int_eq(mmusim_report(m, 0, &r), 0);
	ck_assert_uint_eq(r.refs, 1);
	ck_assert_uint_eq(r.l1d_hits, 1);
	ck_assert_uint_eq(r.l1d_misses + r.walks + r.pgfault, 0);
	mmusim_destroy(m);
	/* the same reference on a machine without the warm-up misses, walks and faults */
	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .sets = sets + 1, .nsets = 1 }), 0);
	ck_assert_int_eq(mmusim_event(m, &mm), 0);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, 0x40001008, 8), 0);
	ck_assert_int_eq(mmusim_report(m, 0, &r), 0);
	ck_assert_uint_eq(r.l1d_misses, 1);
	ck_assert_uint_eq(r.pgfault, 1);
	mmusim_destroy(m);
}
END_TEST

/* The roi.* keys are config: in the config hash (the sweep's cache key); both units refused. */
START_TEST(config_keys)
{
	struct sim_config a, b;
	struct err e = { 0 };
	char ha[17], hb[17];

	config(&a, MODE_BASE, NULL, NULL);
	config(&b, MODE_BASE, "roi.warmup_refs=1000", NULL);
	provenance_config_hash(&a, ha);
	provenance_config_hash(&b, hb);
	ck_assert_str_ne(ha, hb);
	config(&b, MODE_BASE, "roi.warmup_insns=1000", NULL);
	provenance_config_hash(&b, ha);
	ck_assert_str_ne(ha, hb);
	ck_assert_int_eq(config_set(&b, "roi.warmup_refs=5", &e), 0);
	ck_assert_int_eq(config_validate(&b, "--set", &e), -1);
	ck_assert_msg(strstr(e.msg, "give roi.warmup_refs or roi.warmup_insns, not both"), "%s", e.msg);
	ck_assert_int_eq(config_set(&b, "roi.sim_refs=-1", &e), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("roi");
	TCase *tc = tcase_create("roi");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, warmup_base);
	tcase_add_test(tc, warmup_thp);
	tcase_add_test(tc, sim_refs);
	tcase_add_test(tc, skip_events);
	tcase_add_test(tc, skip_keeps_memory);
	tcase_add_test(tc, skip_read_only);
	tcase_add_test(tc, mtr_touch_records);
	tcase_add_test(tc, region_never_reached);
	tcase_add_test(tc, insns_equal_refs);
	tcase_add_test(tc, insns_split);
	tcase_add_test(tc, api_zero_after_warmup);
	tcase_add_test(tc, config_keys);
	suite_add_tcase(s, tc);
	return check_run(s);
}
