/*
 * check_api.c - the public API (include/mmusim.h): a machine from a YAML string
 * and overrides fed by hand counts exactly; errors come back as values with
 * their message; machines are independent; fed references count as a replay
 * of the same records; destroy frees everything (ASan: make check-debug).
 * mmusim_check_invariants() runs after every event and around every report,
 * and each machine checks its models after every batch (check_invariants).
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "mmusim.h"

#define BASE 0x10000000ull /* a 2M-aligned mapping */
#define LEN (4ull << 20)

/* A small machine, thp off so that every touch is a 4K fault. */
static const char *yaml = "os:\n  mode: base\n  thp: { enabled: never }\n";

static struct mmusim *make(const char *const *sets, unsigned nsets)
{
	struct mmusim *m;
	int rc = mmusim_create(&m, &(struct mmusim_options){ .config_yaml = yaml, .sets = sets,
							     .nsets = nsets,
							     .check_invariants = true });

	ck_assert_msg(rc == 0, "create: %s", m ? mmusim_error(m) : "OOM");
	ck_assert_str_eq(mmusim_error(m), "");
	return m;
}

static void map(struct mmusim *m, uint64_t addr, uint64_t len)
{
	struct mmusim_event ev = { .kind = MMUSIM_MMAP, .addr = addr, .len = len, .prot = 3,
				   .flags = 0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */, .fd = -1 };

	ck_assert_int_eq(mmusim_event(m, &ev), 0);
	mmusim_check_invariants(m);
}

static struct mmusim_report report(struct mmusim *m)
{
	struct mmusim_report r;

	mmusim_check_invariants(m);
	ck_assert_msg(mmusim_report(m, 0, &r) == 0, "report: %s", mmusim_error(m));
	mmusim_check_invariants(m);
	return r;
}

START_TEST(api_first_touch_faults_then_hits)
{
	struct mmusim *m = make(NULL, 0);
	struct mmusim_report r;

	map(m, BASE, LEN);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, BASE + 8, 8), 0);
	r = report(m);
	ck_assert_str_eq(r.mode, "base");
	ck_assert_uint_eq(r.refs, 1);
	ck_assert_uint_eq(r.pgfault, 1);
	ck_assert_uint_eq(r.walks, 1);
	ck_assert_uint_eq(r.l1d_misses, 1);
	ck_assert_uint_eq(r.stlb_misses, 1);
	/* repeats of the same page hit L1: no walk, no fault */
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE + 64 * (uint64_t)i, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.refs, 11);
	ck_assert_uint_eq(r.pgfault, 1);
	ck_assert_uint_eq(r.walks, 1);
	ck_assert_uint_eq(r.l1d_misses, 1);
	ck_assert_uint_eq(r.l1d_hits, 10);
	ck_assert_uint_eq(r.l1i_hits + r.l1i_misses, 0);
	/* an ifetch on another page: the instruction side's own miss, walk and fault */
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_IFETCH, BASE + 0x5000, 4), 0);
	r = report(m);
	ck_assert_uint_eq(r.l1i_misses, 1);
	ck_assert_uint_eq(r.walks, 2);
	ck_assert_uint_eq(r.pgfault, 2);
	ck_assert_uint_eq(r.instructions, 1);
	mmusim_destroy(m);
}
END_TEST

START_TEST(api_store_after_load)
{
	const char *thp[] = { "os.mode=thp", "os.thp.enabled=always" };
	const char *nozero[] = { "os.zero_page=false" };
	struct mmusim *m = make(NULL, 0);
	struct mmusim_report r;

	/* base: the read fault maps the 4K zero page; the store breaks COW (a second
	 * fault, the zero page's translation flushed: a second miss and walk) */
	map(m, BASE, LEN);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.pgfault, 1);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, BASE + 16, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.refs, 2);
	ck_assert_uint_eq(r.pgfault, 2);
	ck_assert_uint_eq(r.walks, 2);
	ck_assert_uint_eq(r.l1d_misses, 2);
	ck_assert_uint_eq(r.l1d_hits, 1); /* the store's first lookup met the read-only entry */
	/* a modify on it: two more hits */
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_MODIFY, BASE + 32, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.refs, 3);
	ck_assert_uint_eq(r.pgfault, 2);
	ck_assert_uint_eq(r.l1d_hits, 3);
	/* a modify first on a page: one write fault (the store is looked up first) */
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_MODIFY, BASE + 0x1000, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.pgfault, 3);
	ck_assert_uint_eq(r.walks, 3);
	ck_assert_uint_eq(r.l1d_misses, 3);
	ck_assert_uint_eq(r.l1d_hits, 4);
	mmusim_destroy(m);
	/* without the zero page (os.zero_page false): the read fault maps a writable
	 * page of its own; the store hits it */
	m = make(nozero, 1);
	map(m, BASE, LEN);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE, 8), 0);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, BASE + 16, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.pgfault, 1);
	ck_assert_uint_eq(r.walks, 1);
	ck_assert_uint_eq(r.l1d_misses, 1);
	ck_assert_uint_eq(r.l1d_hits, 1);
	mmusim_destroy(m);
	/* thp: the read fault maps the huge zero page; the store breaks it (a write fault) */
	m = make(thp, 2);
	map(m, BASE, LEN);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.pgfault, 1);
	ck_assert_uint_eq(r.thp_fault_alloc, 0);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, BASE + 16, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.pgfault, 2);
	ck_assert_uint_eq(r.walks, 2); /* its translation was flushed */
	ck_assert_uint_eq(r.l1d_misses, 2);
	/* os.kernel 6.18 (the default): do_huge_zero_wp_pmd() maps a fresh THP (6.13+);
	 * up to 6.12 the write fell back to a 4K COW and this was 0 */
	ck_assert_uint_eq(r.thp_fault_alloc, 1);
	mmusim_destroy(m);
}
END_TEST

START_TEST(api_unmapped_access)
{
	const char *off[] = { "os.implicit.enabled=false" };
	struct mmusim *m = make(NULL, 0);
	struct mmusim_report r;

	/* implicit mappings on (the default): an access outside every mapping maps and faults */
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, 0x7f0000001000ull, 8), 0);
	r = report(m);
	ck_assert_uint_eq(r.pgfault, 1);
	ck_assert_uint_eq(r.walks, 1);
	mmusim_destroy(m);
	/* off: the same access is bad input, reported as a value, and sticky */
	m = make(off, 1);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, 0x7f0000001000ull, 8), 0); /* buffered */
	ck_assert_int_eq(mmusim_flush(m), MMUSIM_EINPUT);
	ck_assert_int_eq(mmusim_status(m), MMUSIM_EINPUT);
	ck_assert_ptr_nonnull(strstr(mmusim_error(m), "record 1"));
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE, 8), MMUSIM_EINPUT);
	mmusim_destroy(m);
}
END_TEST

START_TEST(api_errors_are_values)
{
	const char *bad_set[] = { "tlb.stlb.entries=banana" };
	const char *bad_key[] = { "tlb.nosuch=1" };
	struct mmusim *m;

	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){
					 .config_yaml = "os:\n  bogus_key: 1\n" }), MMUSIM_EINPUT);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strstr(mmusim_error(m), "bogus_key"), "message: %s", mmusim_error(m));
	ck_assert_ptr_null(mmusim_report_json(m));
	mmusim_destroy(m);
	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .sets = bad_set, .nsets = 1 }),
			 MMUSIM_EINPUT);
	ck_assert_msg(strstr(mmusim_error(m), "tlb.stlb.entries"), "message: %s", mmusim_error(m));
	mmusim_destroy(m);
	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .sets = bad_key, .nsets = 1 }),
			 MMUSIM_EINPUT);
	ck_assert_msg(strstr(mmusim_error(m), "tlb.nosuch"), "message: %s", mmusim_error(m));
	mmusim_destroy(m);
	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .modes = "base,nosuch" }),
			 MMUSIM_EUSAGE);
	ck_assert_ptr_nonnull(strstr(mmusim_error(m), "nosuch"));
	mmusim_destroy(m);
	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .config_path = "no/such.yaml" }),
			 MMUSIM_EINPUT);
	ck_assert_ptr_nonnull(strstr(mmusim_error(m), "no/such.yaml"));
	mmusim_destroy(m);
	/* a missing trace, a bad format, a bad reference: values; the machine lives on */
	m = make(NULL, 0);
	ck_assert_int_eq(mmusim_replay(m, "tests/no-such-trace.lackey", NULL), MMUSIM_EINPUT);
	ck_assert_ptr_nonnull(strstr(mmusim_error(m), "tests/no-such-trace.lackey: No such file"));
	ck_assert_int_eq(mmusim_replay(m, "tests/golden/mixed.lackey", "nosuch"), MMUSIM_EUSAGE);
	ck_assert_int_eq(mmusim_ref(m, (enum mmusim_ref_kind)7, BASE, 8), MMUSIM_EUSAGE);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE, 0), MMUSIM_EUSAGE);
	ck_assert_int_eq(mmusim_report(m, 1, &(struct mmusim_report){ 0 }), MMUSIM_EUSAGE);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE, 8), 0);
	ck_assert_uint_eq(report(m).pgfault, 1);
	/* a replay is the last input */
	ck_assert_int_eq(mmusim_replay(m, "tests/golden/mixed.lackey", NULL), 0);
	ck_assert_int_eq(mmusim_ref(m, MMUSIM_LOAD, BASE, 8), MMUSIM_EUSAGE);
	ck_assert_ptr_nonnull(strstr(mmusim_error(m), "finished"));
	mmusim_destroy(m);
	mmusim_destroy(NULL);
}
END_TEST

START_TEST(api_machines_are_independent)
{
	const char *small[] = { "tlb.stlb.entries=16", "tlb.stlb.ways=4" };
	struct mmusim *a = make(NULL, 0), *b = make(small, 2), *c = make(NULL, 0);
	struct mmusim_report ra, rb, rc;

	map(a, BASE, LEN);
	map(b, BASE, LEN);
	map(c, BASE, LEN);
	/* interleaved: a and b get the same stream, c only half of it */
	for (uint64_t i = 0; i < 2000; i++) {
		uint64_t va = BASE + ((i % 256) * 0x1000 * 7) % LEN; /* 256 pages, again and again */

		ck_assert_int_eq(mmusim_ref(a, MMUSIM_STORE, va, 8), 0);
		ck_assert_int_eq(mmusim_ref(b, MMUSIM_STORE, va, 8), 0);
		if (i < 1000)
			ck_assert_int_eq(mmusim_ref(c, MMUSIM_STORE, va, 8), 0);
	}
	ra = report(a);
	rb = report(b);
	rc = report(c);
	ck_assert_uint_eq(ra.refs, 2000);
	ck_assert_uint_eq(rc.refs, 1000);
	ck_assert_uint_eq(ra.pgfault, rb.pgfault); /* the same pages touched */
	ck_assert_uint_gt(rb.stlb_misses, ra.stlb_misses); /* a smaller STLB */
	ck_assert_uint_eq(ra.pgfault, 256);
	ck_assert_uint_eq(rc.pgfault, 256);
	ck_assert_uint_eq(ra.stlb_misses, 256); /* the default STLB holds them all */
	mmusim_destroy(b);
	/* a alone again, continuing: its counts are those of one machine fed everything */
	ck_assert_int_eq(mmusim_ref(a, MMUSIM_LOAD, BASE, 8), 0);
	ck_assert_uint_eq(report(a).refs, 2001);
	mmusim_destroy(a);
	mmusim_destroy(c);
}
END_TEST

/* Two modes fed by hand, the JSON by mode, the text comparison. */
START_TEST(api_modes_and_json)
{
	struct mmusim *m;
	char *js;
	struct mmusim_report r0, r1;

	char label[] = "run=api";
	const char *labels[] = { label };

	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .modes = "base,thp",
								     .labels = labels, .nlabels = 1 }), 0);
	label[0] = 'X'; /* copied by mmusim_create() */
	ck_assert_uint_eq(mmusim_modes(m), 2);
	map(m, BASE, LEN);
	for (uint64_t va = BASE; va < BASE + LEN; va += 4096)
		ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, va, 8), 0);
	ck_assert_int_eq(mmusim_report(m, 0, &r0), 0);
	ck_assert_int_eq(mmusim_report(m, 1, &r1), 0);
	ck_assert_str_eq(r0.mode, "base");
	ck_assert_str_eq(r1.mode, "thp");
	ck_assert_uint_eq(r0.pgfault, LEN / 4096);
	ck_assert_uint_eq(r1.thp_fault_alloc, 2);
	js = mmusim_report_json(m);
	ck_assert_ptr_nonnull(js);
	ck_assert_ptr_nonnull(strstr(js, "\"base\": {"));
	ck_assert_ptr_nonnull(strstr(js, "\"thp\": {"));
	ck_assert_ptr_nonnull(strstr(js, "\"trace\": \"<fed>\""));
	ck_assert_ptr_nonnull(strstr(js, "\"run\": \"api\""));
	ck_assert_int_eq(js[strlen(js) - 1], '\n');
	free(js);
	mmusim_destroy(m);
}
END_TEST

/* References fed one by one count as the same references replayed from a file. */
START_TEST(api_fed_equals_replay)
{
	static const char kc[] = "ILSM";
	struct mmusim *fed = make(NULL, 0), *rep = make(NULL, 0);
	struct mmusim_report a, b;
	char path[] = "/tmp/check_api_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	uint64_t x = 88172645463325252ull;

	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 20000; i++) { /* 2.5 batches over 64 MiB, some pages crossed */
		unsigned k;
		uint64_t va;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = (unsigned)(x & 3);
		va = 0x40000000ull + ((x >> 8) % (64ull << 20)) / (i % 3 ? 4096 : 1) * (i % 3 ? 4096 : 1);
		fprintf(f, k ? " %c %llx,%u\n" : "%c  %llx,%u\n", kc[k], (unsigned long long)va, 8u);
		ck_assert_int_eq(mmusim_ref(fed, (enum mmusim_ref_kind)k, va, 8), 0);
	}
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(mmusim_replay(rep, path, "lackey") == 0, "%s", mmusim_error(rep));
	unlink(path);
	a = report(fed);
	b = report(rep);
	ck_assert_uint_eq(a.refs, 20000);
	ck_assert_uint_eq(a.refs, b.refs);
	ck_assert_uint_eq(a.instructions, b.instructions);
	ck_assert_uint_eq(a.l1i_misses, b.l1i_misses);
	ck_assert_uint_eq(a.l1d_misses, b.l1d_misses);
	ck_assert_uint_eq(a.l1d_hits, b.l1d_hits);
	ck_assert_uint_eq(a.stlb_misses, b.stlb_misses);
	ck_assert_uint_eq(a.walks, b.walks);
	ck_assert_uint_eq(a.pte_reads, b.pte_reads);
	ck_assert_uint_eq(a.pgfault, b.pgfault);
	ck_assert_uint_eq(a.cycles_total, b.cycles_total);
	ck_assert_uint_gt(a.pgfault, 1000);
	mmusim_destroy(fed);
	mmusim_destroy(rep);
}
END_TEST

/* Arrays of references and events: munmap drops the pages, a new mmap faults again. */
START_TEST(api_arrays_and_munmap)
{
	struct mmusim *m = make(NULL, 0);
	struct mmusim_ref refs[4] = {
		{ BASE, 8, MMUSIM_STORE }, { BASE + 0x1000, 8, MMUSIM_STORE },
		{ BASE + 0x2000, 8, MMUSIM_LOAD }, { BASE + 8, 8, MMUSIM_LOAD },
	};
	struct mmusim_event evs[2] = {
		{ .kind = MMUSIM_MUNMAP, .addr = BASE, .len = LEN },
		{ .kind = MMUSIM_MMAP, .addr = BASE, .len = LEN, .prot = 3, .flags = 0x22, .fd = -1 },
	};
	struct mmusim_report r;

	map(m, BASE, LEN);
	ck_assert_int_eq(mmusim_refs(m, refs, 4), 0);
	r = report(m);
	ck_assert_uint_eq(r.refs, 4);
	ck_assert_uint_eq(r.pgfault, 3);
	ck_assert_int_eq(mmusim_events(m, evs, 2), 0);
	mmusim_check_invariants(m); /* two events buffered */
	ck_assert_int_eq(mmusim_refs(m, refs, 4), 0);
	mmusim_check_invariants(m);
	r = report(m);
	ck_assert_uint_eq(r.refs, 8);
	ck_assert_uint_eq(r.pgfault, 6); /* the same three pages, fresh */
	ck_assert_uint_eq(mmusim_records(m), 11); /* 8 references, 3 events */
	mmusim_destroy(m);
}
END_TEST

/* One machine per thread, at the same time: each counts as if alone. */
static void *feed_thread(void *arg)
{
	struct mmusim_report *out = arg;
	struct mmusim *m = make(NULL, 0);

	map(m, BASE, LEN);
	for (uint64_t i = 0; i < 100000; i++)
		ck_assert_int_eq(mmusim_ref(m, MMUSIM_STORE, BASE + (i * 0x1000 * 7 + i * 64) % LEN, 8), 0);
	*out = report(m);
	mmusim_destroy(m);
	return NULL;
}

START_TEST(api_machines_in_threads)
{
	struct mmusim_report r[3];
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, feed_thread, &r[i]), 0);
	feed_thread(&r[2]);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ck_assert_uint_eq(r[i].refs, 100000);
		ck_assert_uint_eq(r[i].pgfault, r[2].pgfault);
		ck_assert_uint_eq(r[i].walks, r[2].walks);
		ck_assert_uint_eq(r[i].l1d_misses, r[2].l1d_misses);
		ck_assert_uint_eq(r[i].cycles_total, r[2].cycles_total);
	}
	ck_assert_uint_eq(r[2].pgfault, LEN / 4096);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, api_first_touch_faults_then_hits);
	tcase_add_test(tc, api_store_after_load);
	tcase_add_test(tc, api_unmapped_access);
	tcase_add_test(tc, api_errors_are_values);
	tcase_add_test(tc, api_machines_are_independent);
	tcase_add_test(tc, api_modes_and_json);
	tcase_add_test(tc, api_fed_equals_replay);
	tcase_add_test(tc, api_arrays_and_munmap);
	tcase_add_test(tc, api_machines_in_threads);
	suite_add_tcase(s, tc);
	return check_run(s);
}
