/*
 * check_pool.c - pool_run(): N simulators driven from one reader count exactly
 * what each counts alone, on 1 to 3 threads and through the plain loop; the
 * lowest-numbered failed simulator's error comes back; an interruption stops
 * the run; progress is reported in order. Invariants after the runs.
 */
#include <check.h>
#include "check_run.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"
#include "sim.h"
#include "trace.h"
#include "workload.h"

static const char *const sets[][2] = {
	{ "os.mode=base", NULL },
	{ "os.mode=thp", "tlb.l1d.4K.entries=16" },
	{ "os.mode=hugetlbfs", NULL },
	{ "os.mode=base", "tlb.policy=fifo" },
	{ "os.mode=thp", "tlb.policy=plru" },
};
#define NSIMS ARRAY_SIZE(sets)

static struct trace_reader *open_input(const char *in)
{
	struct err e = { 0 };
	struct trace_reader *r = strchr(in, ':') ? workload_open(in, 1, &e) : trace_open(in, TF_AUTO, &e);

	ck_assert_msg(r != NULL, "%s", e.msg);
	return r;
}

static void init_sims(struct sim *s, size_t n, const char *extra)
{
	struct err e = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct sim_config c;

		config_defaults(&c);
		for (int k = 0; k < 2 && sets[i % NSIMS][k]; k++)
			ck_assert_msg(config_set(&c, sets[i % NSIMS][k], &e) == 0, "%s", e.msg);
		if (extra && i)
			ck_assert_msg(config_set(&c, extra, &e) == 0, "%s", e.msg);
		ck_assert_msg(config_validate(&c, "t", &e) == 0, "%s", e.msg);
		ck_assert_msg(sim_init(&s[i], &c, &e) == 0, "%s", e.msg);
		s[i].k.trace_name = "t";
	}
}

struct seen {
	uint64_t last;
	unsigned calls;
};

static void on_progress(void *arg, uint64_t records)
{
	struct seen *s = arg;

	ck_assert_uint_ge(records, s->last);
	s->last = records;
	s->calls++;
}

/* Each simulator alone, then all of them through pool_run() on 1..3 threads and
 * through the plain loop with invariants: the same counters. */
START_TEST(pool_counts_as_alone)
{
	const char *in[] = { "tests/golden/mixed.lackey", "stride:size=8M,stride=64,passes=2",
			     "tests/validation/small.lackey.zst" };
	const char *input = in[_i];
	struct sim alone[NSIMS];
	uint64_t total = 0;

	init_sims(alone, NSIMS, NULL);
	for (size_t i = 0; i < NSIMS; i++) {
		struct trace_reader *r = open_input(input);
		struct err e = { 0 };
		uint64_t rec;

		ck_assert_int_eq(pool_run(&alone[i], 1, r, &(struct pool_opts){ 0 }, &rec, &e), POOL_OK);
		total = rec;
		trace_close(r);
	}
	for (unsigned threads = 0; threads <= 4; threads++) {
		struct sim s[NSIMS];
		struct trace_reader *r = open_input(input);
		struct seen seen = { 0, 0 };
		struct pool_opts o = { .threads = threads, .check = threads == 4, /* 4: the plain loop */
				       .progress = on_progress, .progress_arg = &seen };
		struct err e = { 0 };
		uint64_t rec = 0;

		init_sims(s, NSIMS, NULL);
		ck_assert_int_eq(pool_run(s, NSIMS, r, &o, &rec, &e), POOL_OK);
		ck_assert_uint_eq(rec, total);
		for (size_t i = 0; i < NSIMS; i++) {
			ck_assert_msg(memcmp(&s[i].st, &alone[i].st, sizeof(s[i].st)) == 0,
				      "%s, %u threads, simulator %zu: counters differ", input, threads, i);
			sim_check_invariants(&s[i]);
			sim_destroy(&s[i]);
		}
		trace_close(r);
	}
	for (size_t i = 0; i < NSIMS; i++)
		sim_destroy(&alone[i]);
}
END_TEST

/* 5000 loads, then one beyond 4-level paging: every simulator but the first
 * (5 levels) fails; the error is simulator 1's, whatever the threads. */
START_TEST(pool_reports_first_failure)
{
	char path[] = "/tmp/check_pool_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 5000; i++)
		fprintf(f, " L %x,8\n", 65536 + (i % 10) * 8);
	fprintf(f, " L 7fffffffffffff,8\n");
	fclose(f);
	for (unsigned threads = 1; threads <= 3; threads++) {
		struct sim s[3];
		struct trace_reader *r = open_input(path);
		struct err e = { 0 };

		init_sims(s, 3, NULL);
		sim_destroy(&s[0]);
		{
			struct sim_config c;

			config_defaults(&c);
			ck_assert_int_eq(config_set(&c, "walk.levels=5", &e), 0);
			ck_assert_int_eq(sim_init(&s[0], &c, &e), 0);
			s[0].k.trace_name = "first";
			s[1].k.trace_name = "second";
			s[2].k.trace_name = "third";
		}
		ck_assert_int_eq(pool_run(s, 3, r, &(struct pool_opts){ .threads = threads }, NULL, &e),
				 POOL_EINPUT);
		ck_assert_msg(!strcmp(e.file, "second") && strstr(e.msg, "4-level paging"), "%s: %s",
			      e.file, e.msg);
		for (int i = 0; i < 3; i++)
			sim_destroy(&s[i]);
		trace_close(r);
	}
	unlink(path);
}
END_TEST

/* The progress a threaded pool reports: records simulated by all, after each round. */
struct rounds {
	uint64_t at[8];
	unsigned n;
};

static void on_round(void *arg, uint64_t records)
{
	struct rounds *r = arg;

	if (r->n < ARRAY_SIZE(r->at))
		r->at[r->n] = records;
	r->n++;
}

/*
 * The threaded pool's first sets grow from one batch (1, 2, 4, ... 32): the
 * simulators start after a batch is decoded and summarized, not a set of 32.
 * The validation trace as mtr (full batches of TRACE_BATCH records): the first
 * rounds that simulate report 1, 3, 7, 15, 31 batches, then 63.
 */
START_TEST(pool_threaded_starts_after_one_batch)
{
	char path[] = "/tmp/check_pool_mtr_XXXXXX";
	int fd = mkstemp(path);
	struct sim s[3];
	struct trace_reader *r;
	struct rounds seen = { { 0 }, 0 };
	struct err e = { 0 };
	uint64_t rec = 0;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_msg(mtr_write_all(open_input("tests/validation/small.lackey.zst"), path, &e) == 0, "%s",
		      e.msg);
	r = open_input(path);
	init_sims(s, 3, NULL);
	ck_assert_int_eq(pool_run(s, 3, r, &(struct pool_opts){ .threads = 2, .progress = on_round,
								 .progress_arg = &seen }, &rec, &e), POOL_OK);
	ck_assert_uint_ge(seen.n, 6);
	for (unsigned k = 0; k < 6; k++)
		ck_assert_uint_eq(seen.at[k], (uint64_t)((2u << k) - 1) * TRACE_BATCH);
	for (int i = 0; i < 3; i++)
		sim_destroy(&s[i]);
	trace_close(r);
	unlink(path);
}
END_TEST

/* An interruption flag already set: the run stops after its first batch or round. */
START_TEST(pool_stops_when_interrupted)
{
	static volatile sig_atomic_t stop = 1;

	for (unsigned n = 1; n <= 3; n += 2) {
		struct sim s[3];
		struct trace_reader *r = open_input("stride:size=64M,stride=64,passes=4");
		struct err e = { 0 };
		uint64_t rec = 0;

		init_sims(s, n, NULL);
		ck_assert_int_eq(pool_run(s, n, r, &(struct pool_opts){ .threads = 2, .interrupted = &stop },
					  &rec, &e), POOL_EINTR);
		ck_assert_uint_lt(rec, 4u << 20);
		for (unsigned i = 0; i < n; i++)
			sim_destroy(&s[i]);
		trace_close(r);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("pool");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, pool_counts_as_alone, 0, 3);
	tcase_add_test(tc, pool_reports_first_failure);
	tcase_add_test(tc, pool_stops_when_interrupted);
	tcase_add_test(tc, pool_threaded_starts_after_one_batch);
	suite_add_tcase(s, tc);
	return check_run(s);
}
