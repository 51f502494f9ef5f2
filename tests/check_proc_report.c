/*
 * check_proc_report.c - the report of a run of several processes (sim.c
 * sim_proc_report(), run.c run_add_processes() / run_write_procs()): each
 * process's counts, its smaps_rollup figures, huge coverage, touched bytes,
 * bloat (anonymous bytes resident but never referenced) and fairness (its share
 * of the processes' THP bytes over its share of their RSS). Exact values.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "kernel.h"
#include "run.h"

#define BASE 0x40000000UL
#define MB (1UL << 20)
#define KB 1024UL

static void anon(uint64_t len)
{
	event((struct os_event){ .kind = EV_MMAP, .addr = BASE, .len = len, .prot = 3,
				 .flags = MAP_PRIVATE_ | MAP_ANONYMOUS_, .fd = -1 });
}

static void boot(void)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	ck_assert(config_set(&c, "os.thp.enabled=always", &e) == 0);
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
}

/*
 * Process 0 faults one THP and touches one page of it; process 1, THP-disabled
 * (prctl), touches 16 pages. 0: RSS 2 MiB, all huge, bloat 2 MiB - 4 KiB;
 * 1: RSS 64 KiB, bloat 0. Fairness: 0 has all the THP bytes and 2048/2112 of the
 * RSS, 2112/2048 = 1.03125; 1 has none, 0.
 */
static void two_processes(bool exact)
{
	boot();
	if (exact)
		sim_track_touched(S);
	anon(4 * MB);
	touch(BASE, BASE + 4096, R_STORE);
	to(1);
	event((struct os_event){ .kind = EV_PRCTL, .advice = PR_SET_THP_DISABLE_, .addr = 1 });
	anon(4 * MB);
	touch(BASE, BASE + 16 * 4096, R_STORE);
	sim_finish(S);
}

START_TEST(report_rows)
{
	struct stats_proc p[2];

	two_processes(true);
	ck_assert_int_eq(sim_proc_report(S, p), 0);
	ck_assert_uint_eq(p[0].id, 0);
	ck_assert_uint_eq(p[1].id, 1);
	ck_assert_uint_eq(p[0].counts[SP_PGFAULT], 1);
	ck_assert_uint_eq(p[1].counts[SP_PGFAULT], 16);
	ck_assert_uint_eq(p[0].counts[SP_THP_FAULT_ALLOC], 1);
	ck_assert_uint_eq(p[1].counts[SP_THP_FAULT_ALLOC], 0);
	ck_assert_uint_eq(p[0].counts[SP_INSTRUCTIONS] + p[1].counts[SP_INSTRUCTIONS], S->st.instructions);
	ck_assert_uint_eq(p[0].rss_bytes, 2 * MB);
	ck_assert_uint_eq(p[0].anon_huge_bytes, 2 * MB);
	ck_assert_uint_eq(p[1].rss_bytes, 64 * KB);
	ck_assert_uint_eq(p[1].anon_huge_bytes, 0);
	ck_assert_uint_eq(p[0].touched_bytes, 4 * KB);
	ck_assert_uint_eq(p[1].touched_bytes, 64 * KB);
	ck_assert_uint_eq(p[0].bloat_bytes, 2 * MB - 4 * KB);
	ck_assert_uint_eq(p[1].bloat_bytes, 0);
	ck_assert(p[0].huge_coverage == 1.0 && p[1].huge_coverage == 0.0);
	ck_assert(p[0].has_fairness && p[1].has_fairness);
	ck_assert(p[0].fairness == 1.03125);
	ck_assert(p[1].fairness == 0.0);
	done();
}
END_TEST

/*
 * Tracking from the second process on: what process 0 had resident then counts as
 * touched (its THP whole); what it touches afterwards is tracked exactly.
 */
START_TEST(tracking_from_the_second_process)
{
	struct stats_proc p[2];

	two_processes(false);
	ck_assert_int_eq(sim_proc_report(S, p), 0);
	ck_assert_uint_eq(p[0].bloat_bytes, 0);
	ck_assert_uint_eq(p[0].touched_bytes, 2 * MB);
	done();
	two_processes(false);
	to(0);
	touch(BASE + 2 * MB + 8192, BASE + 2 * MB + 3 * 4096, R_LOAD); /* the huge zero page */
	touch(BASE + 2 * MB, BASE + 2 * MB + 4096, R_STORE);         /* a THP, one page stored */
	sim_finish(S);
	ck_assert_int_eq(sim_proc_report(S, p), 0);
	ck_assert_uint_eq(p[0].rss_bytes, 4 * MB);
	ck_assert_uint_eq(p[0].bloat_bytes, 2 * MB - 8 * KB);
	ck_assert_uint_eq(p[0].touched_bytes, 2 * MB + 8 * KB);
	done();
}
END_TEST

static void batch(const struct trace_rec *r, size_t n, const struct os_event *ev, size_t nev)
{
	struct trace_batch b = { (struct trace_rec *)r, n, (struct os_event *)ev, nev };
	struct err e = { 0 };

	ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	sim_check_invariants(S);
}

/*
 * The touched pass's filter of recently marked pages (sim_touched_batch()) is
 * per process, sees the second page of a reference that crosses a page, and
 * forgets at exec: in one batch process 0 loads page 0, then 8 bytes across
 * pages 0 and 1; process 1 loads its page 0 (which process 0's filter holds)
 * and page 64 (the same filter slot). Then process 1 execs and loads its new page 0 (twice): 4 KiB,
 * not the 8 KiB of its old map (whose bits a new region's slot once kept).
 */
START_TEST(touched_filter)
{
	struct stats_proc p[2];
	const struct os_event ev[] = { { .kind = EV_SWITCH, .addr = 1 }, { .kind = EV_EXEC } };
	const struct trace_rec r[] = {
		{ BASE + 16, 8, R_LOAD },	   { BASE + 4092, 8, R_LOAD },
		{ 1, 0, R_EVENT },		   { BASE + 16, 8, R_LOAD },
		{ BASE + 64 * 4096 + 16, 8, R_LOAD },
	};
	const struct trace_rec exec[] = { { 0, 1, R_EVENT } };
	const struct trace_rec after[] = { { BASE + 16, 8, R_LOAD }, { BASE + 24, 4, R_STORE } };

	boot();
	sim_track_touched(S);
	anon(4 * MB);
	to(1);
	anon(4 * MB);
	to(0);
	batch(r, sizeof(r) / sizeof(r[0]), ev, 1);
	sim_finish(S);
	ck_assert_int_eq(sim_proc_report(S, p), 0);
	ck_assert_uint_eq(p[0].touched_bytes, 8 * KB);
	ck_assert_uint_eq(p[1].touched_bytes, 8 * KB);
	batch(exec, 1, ev, 2);
	anon(4 * MB);
	batch(after, 2, NULL, 0);
	sim_finish(S);
	ck_assert_int_eq(sim_proc_report(S, p), 0);
	ck_assert_uint_eq(p[0].touched_bytes, 8 * KB);
	ck_assert_uint_eq(p[1].touched_bytes, 4 * KB);
	done();
}
END_TEST

/* One process: no rows, no "processes" key, no table. */
START_TEST(one_process_no_rows)
{
	struct stats_proc p[1];
	json_t *j = json_object();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	boot();
	anon(4 * MB);
	touch(BASE, BASE + 4096, R_STORE);
	sim_finish(S);
	ck_assert_int_eq(sim_proc_report(S, p), -1);
	ck_assert_int_eq(run_add_processes(S, j), 0);
	ck_assert_ptr_null(json_object_get(j, "processes"));
	ck_assert_int_eq(run_write_procs(S, f), 0);
	fclose(f);
	ck_assert_uint_eq(len, 0);
	free(buf);
	json_decref(j);
	ck_assert(!S->track_touched);
	done();
}
END_TEST

/* The JSON array and the text table, exactly. */
START_TEST(json_and_table)
{
	json_t *j = json_object(), *a, *o;
	char *buf = NULL, *dump;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	two_processes(true);
	ck_assert_int_eq(run_add_processes(S, j), 0);
	a = json_object_get(j, "processes");
	ck_assert_uint_eq(json_array_size(a), 2);
	o = json_array_get(a, 1);
	dump = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(10));
	/* the counts follow the running process's clock: only the stable ones are compared */
	ck_assert_msg(strstr(dump, "\"pgfault\":16,\"pgmajfault\":0,\"thp_fault_alloc\":0,"
				   "\"thp_fault_fallback\":0,\"context_switches\":1,\"rss_bytes\":65536,"
				   "\"anon_huge_bytes\":0,\"file_rss_bytes\":0,\"huge_coverage\":0.0,"
				   "\"touched_bytes\":65536,\"bloat_bytes\":0,\"fairness\":0.0,"
				   /* its 16 faults, each 256-511 cycles (the fault path's charge) */
				   "\"fault_latency_cycles\":[0,0,0,0,0,0,0,0,16]}") != NULL,
		      "%s", dump);
	ck_assert_msg(!strncmp(dump, "{\"id\":1,\"exited\":false,\"instructions\":", 38), "%s", dump);
	free(dump);
	dump = json_dumps(json_array_get(a, 0), JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(10));
	ck_assert_msg(strstr(dump, "\"bloat_bytes\":2093056,\"fairness\":1.03125,"
				   /* one THP fault: 2^17-2^18 cycles (512 pages cleared) */
				   "\"fault_latency_cycles\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]}") != NULL, "%s", dump);
	free(dump);
	ck_assert_int_eq(run_write_procs(S, f), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\nprocesses                     process 0          process 1\n") == buf,
		      "%s", buf);
	ck_assert_msg(strstr(buf, "\npgfault                               1                 16\n"), "%s", buf);
	ck_assert_msg(strstr(buf, "\nbloat_bytes                     2093056                  0\n"
				  "fairness                          1.031              0.000\n"),
		      "%s", buf);
	free(buf);
	json_decref(j);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proc_report");
	TCase *tc = tcase_create("report");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, report_rows);
	tcase_add_test(tc, tracking_from_the_second_process);
	tcase_add_test(tc, one_process_no_rows);
	tcase_add_test(tc, json_and_table);
	tcase_add_test(tc, touched_filter);
	suite_add_tcase(s, tc);
	return check_run(s);
}
