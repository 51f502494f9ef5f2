/*
 * check_validation.c - mmusim against DynamoRIO drcachesim's TLB simulator.
 *
 * For every row of tests/validation/expected.tsv (a copy of
 * ../shared/validation/expected.tsv), run the real lackey trace small.lackey.zst in
 * base mode on the row's geometry (tests/validation/<row>.yaml, with the OS-less
 * profile: os.profile osless) and assert all six numbers exactly: L1I, L1D and
 * STLB hits and misses.
 */
#include <check.h>
#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "sim.h"
#include "trace.h"

#define DIR "tests/validation/"

struct row {
	char name[64];
	unsigned long long l1i_m, l1d_m, stlb_m, l1i_h, l1d_h, stlb_h;
};

static int load_rows(struct row *rows, int max)
{
	FILE *f = fopen(DIR "expected.tsv", "r");
	char line[512];
	int n = 0;

	ck_assert_msg(f != NULL, "cannot open " DIR "expected.tsv");
	while (fgets(line, sizeof(line), f) && n < max) {
		struct row *r = &rows[n];
		char g1[32], g2[32], g3[32], pol[16];

		if (line[0] == '#' || line[0] == '\n')
			continue;
		ck_assert_int_eq(sscanf(line, "%63s %31s %31s %31s %15s %llu %llu %llu %llu %llu %llu",
					r->name, g1, g2, g3, pol, &r->l1i_m, &r->l1d_m, &r->stlb_m,
					&r->l1i_h, &r->l1d_h, &r->stlb_h),
				 11);
		n++;
	}
	fclose(f);
	return n;
}

static void run_row(const struct row *r)
{
	struct sim_config c;
	struct err e = { 0 };
	char path[256];
	struct trace_reader *tr;
	struct trace_batch b;
	struct sim *s = malloc(sizeof(*s));
	int n;
	uint64_t i_h = 0, i_m = 0, d_h = 0, d_m = 0;

	ck_assert_ptr_nonnull(s);
	config_defaults(&c);
	snprintf(path, sizeof(path), DIR "%s.yaml", r->name);
	ck_assert_msg(config_load_file(&c, path, &e) == 0, "%s: %s", path, e.msg);
	ck_assert_int_eq(c.mode, MODE_BASE);
	/* the OS-less profile: with the zero page a page read before it is written would
	 * take a second fault and lose its translation, with a 2 MiB implicit granule a
	 * data page beside code would be file text copied on its first store, which a
	 * simulator without an OS never does */
	ck_assert_int_eq(c.profile, PROFILE_OSLESS);
	ck_assert(!c.zero_page);
	ck_assert_uint_eq(c.fault_around_bytes, 4096);
	ck_assert_uint_eq(c.implicit.granule, 4096);
	ck_assert_int_eq(sim_init(s, &c, &e), 0);
	tr = trace_open(DIR "small.lackey.zst", TF_AUTO, &e);
	ck_assert_msg(tr != NULL, "%s", e.msg);
	s->k.trace_name = tr->name;
	while ((n = trace_next(tr, &b, &e)) > 0)
		ck_assert_int_eq(sim_run_batch(s, &b, &e), 0);
	ck_assert_msg(n == 0, "%s", e.msg);
	sim_finish(s);
	for (int ps = 0; ps < PS_NR; ps++) {
		i_h += s->st.l1[SIDE_I].hits[ps];
		i_m += s->st.l1[SIDE_I].misses[ps];
		d_h += s->st.l1[SIDE_D].hits[ps];
		d_m += s->st.l1[SIDE_D].misses[ps];
	}
	/* the trace's own facts (../shared/validation/README.md) */
	ck_assert_uint_eq(s->st.ifetch, 4440866);
	ck_assert_uint_eq(s->st.load, 1351941);
	ck_assert_uint_eq(s->st.store, 839342);
	ck_assert_uint_eq(s->st.modify, 10296);
	/* 284 distinct pages: with 4 KiB implicit regions the 126 first touched by a
	 * fetch are page-cache pages (file text, filemap.c), the 158 first touched by
	 * a load or store anonymous (counted from the trace by awk, README beside it) */
	ck_assert_uint_eq(s->st.nr_anon_pages + s->st.nr_mapped, 284);
	ck_assert_uint_eq(s->st.nr_anon_pages, 158);
	ck_assert_uint_eq(s->st.nr_mapped, 126);
	/* DynamoRIO's numbers */
	ck_assert_msg(i_m == r->l1i_m && i_h == r->l1i_h, "%s: L1I %llu/%llu, expected %llu/%llu",
		      r->name, (unsigned long long)i_h, (unsigned long long)i_m, r->l1i_h, r->l1i_m);
	ck_assert_msg(d_m == r->l1d_m && d_h == r->l1d_h, "%s: L1D %llu/%llu, expected %llu/%llu",
		      r->name, (unsigned long long)d_h, (unsigned long long)d_m, r->l1d_h, r->l1d_m);
	ck_assert_msg(s->st.stlb.misses == r->stlb_m && s->st.stlb.hits == r->stlb_h,
		      "%s: STLB %llu/%llu, expected %llu/%llu", r->name,
		      (unsigned long long)s->st.stlb.hits, (unsigned long long)s->st.stlb.misses,
		      r->stlb_h, r->stlb_m);
	/* counting rules: one walk per STLB miss, one fault per distinct page */
	ck_assert_uint_eq(s->st.walks, s->st.stlb.misses);
	ck_assert_uint_eq(s->st.pgfault, 284);
	sim_check_invariants(s);
	trace_close(tr);
	sim_destroy(s);
	free(s);
}

START_TEST(test_row)
{
	struct row rows[16];
	int n = load_rows(rows, 16);

	ck_assert_int_eq(n, 5);
	ck_assert_int_lt(_i, n);
	run_row(&rows[_i]);
}
END_TEST

/*
 * What the profile is for: a data page in the 2 MiB around code, first fetched from.
 * DynamoRIO counts one dTLB miss for it (one page, three data references); with the
 * linux profile's 2 MiB implicit granule the page is file text, and its first store
 * copies it and flushes its entry (a second miss); the osless profile gives one.
 */
START_TEST(test_osless_no_kernel_flush)
{
	static const char trace[] = "I  00400000,4\n L 00401000,8\n S 00401008,8\n L 00401010,8\n";
	static const char *const profile[2] = { "os.profile=linux", "os.profile=osless" };
	/* the store to the read-only text: its hit, then the fault's flush and a miss */
	static const uint64_t misses[2] = { 2, 1 }, hits[2] = { 2, 2 }, flushes[2] = { 1, 0 };

	for (int p = 0; p < 2; p++) {
		struct sim_config c;
		struct err e = { 0 };
		struct sim *s = calloc(1, sizeof(*s));
		char path[] = "/tmp/mmusim-osless.XXXXXX";
		int fd = mkstemp(path);
		struct trace_reader *tr;
		struct trace_batch b;
		int n;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, trace, sizeof(trace) - 1), (ssize_t)(sizeof(trace) - 1));
		close(fd);
		config_defaults(&c);
		ck_assert_int_eq(config_set(&c, "os.mode=base", &e), 0);
		ck_assert_int_eq(config_set(&c, "os.zero_page=false", &e), 0);
		ck_assert_int_eq(config_set(&c, "os.fault_around_bytes=4K", &e), 0);
		ck_assert_int_eq(config_set(&c, profile[p], &e), 0);
		ck_assert_int_eq(sim_init(s, &c, &e), 0);
		tr = trace_open(path, TF_LACKEY, &e);
		ck_assert_msg(tr != NULL, "%s", e.msg);
		while ((n = trace_next(tr, &b, &e)) > 0)
			ck_assert_int_eq(sim_run_batch(s, &b, &e), 0);
		ck_assert_int_eq(n, 0);
		sim_finish(s);
		ck_assert_uint_eq(s->st.l1[SIDE_D].misses[PS_4K], misses[p]);
		ck_assert_uint_eq(s->st.l1[SIDE_D].hits[PS_4K], hits[p]);
		ck_assert_uint_eq(s->st.tlb_invalidations, flushes[p]);
		trace_close(tr);
		unlink(path);
		sim_destroy(s);
		free(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("validation");
	TCase *tc = tcase_create("drcachesim");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_row, 0, 5);
	tcase_add_test(tc, test_osless_no_kernel_flush);
	suite_add_tcase(s, tc);
	return check_run(s);
}
