/*
 * check_figs.c - Check suite for figures that tell the story (issue 14, items 5 and 6):
 * workload parameters as sweep axes (sweep.c: the spec of each point, the numeric CSV
 * column, one decode per workload value and resume checked against each point's own input:
 * sweep_run.c), an input: list mixing traces and
 * workloads, and plot's names from the counter table (stats.c), --logy, the -100 %
 * bound, --abs, several -y, error bars from a per-repetition CSV, and PDF output.
 *
 * The sweeps run tiny GUPS tables (64 KiB to 256 KiB, 2000 updates: milliseconds) in
 * this process through sweep_run_points(), one point at a time, and are merged with
 * sweep_merge_opts(), as `mmusim sweep` and `mmusim merge` do.
 *
 * Set MMUSIM_PLOT_OUT=DIR to keep the rendered images there (to look at them).
 */
#include <check.h>

#include "check_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
#include "stats.h"
#include "sweep.h"
#include "sweep_run.h"

static char scratch[4096];

static void scratch_setup(void)
{
	snprintf(scratch, sizeof(scratch), "%s/check_figs.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void rm_rf(const char *dir)
{
	char cmd[8300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void scratch_teardown(void)
{
	rm_rf(scratch);
}

static const char *in_scratch(const char *name)
{
	static char path[8][8192];
	static unsigned next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", scratch, name);
	return p;
}

static const char *write_file(const char *name, const char *text)
{
	const char *p = in_scratch(name);
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return p;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "%s was not written", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void load_ok(struct sweep *sw, const char *path)
{
	struct err e = { 0 };
	char msg[1024];

	if (sweep_load(sw, path, NULL, NULL, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("sweep_load(%s): %s", path, msg);
	}
}

static void load_err(const char *path, const char *want)
{
	struct sweep sw;
	struct err e = { 0 };
	char msg[1024];

	ck_assert_int_eq(sweep_load(&sw, path, NULL, NULL, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, want);
}

/*
 * Run every point of @sw (each repetition) into @dir, one point per call as a
 * worker would for a one-point task, and merge them into @csv (@per_rep: one row
 * per repetition).
 */
static void run_all(const struct sweep *sw, const char *dir, const char *csv, bool per_rep)
{
	static volatile sig_atomic_t stop;
	struct err e = { 0 };
	char msg[1024], **files;
	size_t nf;
	FILE *f;

	mkdir(dir, 0755);
	for (unsigned r = 0; r < sw->repeat; r++)
		for (size_t p = 0; p < sw->npoints; p++)
			if (sweep_run_points(sw, &p, 1, r, dir, "mmusim", 1, &stop, &e)) {
				err_format(&e, msg, sizeof(msg));
				ck_abort_msg("point %zu: %s", p, msg);
			}
	files = sweep_point_files(sw, dir, &nf);
	ck_assert_ptr_nonnull(files);
	ck_assert_uint_eq(nf, sw->npoints * sw->repeat);
	f = fopen(csv, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sweep_merge_opts(files, nf, f, per_rep, &e), 0);
	ck_assert_int_eq(fclose(f), 0);
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
}

static const char *const gups_yaml =
	"workload: gups:updates=2000\n"
	"set: { os.memory: 64M }\n"
	"sweep:\n"
	"  workload.size: [64K, 128K, 256K]\n"
	"  os.mode: [base, thp]\n";

/* A workload.KEY axis: the spec per point, the label a number, a decode per value. */
START_TEST(test_workload_axis_points)
{
	struct sweep sw;
	struct sweep_plan plan;
	struct err e = { 0 };
	char **av;
	bool seen[3] = { false, false, false };

	load_ok(&sw, write_file("g.yaml", gups_yaml));
	ck_assert_uint_eq(sw.npoints, 6);
	ck_assert_uint_eq(sw.nwl_combos, 3);
	ck_assert_uint_eq(sweep_nsources(&sw), 3);
	/* point 3: the second size (128K), thp */
	av = sweep_point_argv(&sw, 3, 0, "mmusim", "x.json");
	ck_assert_str_eq(av[1], "run");
	ck_assert_str_eq(av[2], "-w");
	ck_assert_str_eq(av[3], "gups:updates=2000,size=128K");
	for (char **a = av; *a; a++)
		if (!strcmp(*a, "--label") && !strncmp(a[1], "workload.", 9))
			ck_assert_str_eq(a[1], "workload.size=131072");
	sweep_argv_free(av);
	ck_assert_uint_eq(sweep_point_source(&sw, 0), 0);
	ck_assert_uint_eq(sweep_point_source(&sw, 1), 0);
	ck_assert_uint_eq(sweep_point_source(&sw, 3), 1);
	ck_assert_uint_eq(sweep_point_source(&sw, 5), 2);
	/* the points of one size share a task (one decode), no task mixes sizes */
	ck_assert_int_eq(sweep_plan(&sw, in_scratch("g.d"), "mmusim", 0, 1, &plan, &e), 0);
	ck_assert_uint_eq(plan.ntasks, 3);
	for (size_t i = 0; i < plan.ntasks; i++) {
		size_t src = sweep_point_source(&sw, plan.tasks[i].pts[0]);

		ck_assert_uint_eq(plan.tasks[i].n, 2);
		ck_assert_uint_eq(sweep_point_source(&sw, plan.tasks[i].pts[1]), src);
		ck_assert(!seen[src]);
		seen[src] = true;
	}
	sweep_plan_free(&plan);
	/* the points' report files differ by size (the command, spec included, is hashed) */
	{
		char *a = sweep_point_file(&sw, "d", 0, 0), *b = sweep_point_file(&sw, "d", 2, 0);

		ck_assert_str_ne(a + 15, b + 15);
		free(a);
		free(b);
	}
	sweep_free(&sw);
}
END_TEST

/* The CSV: the axis a numeric column (bytes), equal to separate runs; a line plot of it. */
START_TEST(test_workload_axis_csv_and_lines)
{
	struct sweep sw;
	struct plot_table t;
	struct plot_opts o = { .x = "workload.size", .y = "tlb.l1d.misses", .by = "os.mode",
			       .logx = true };
	struct err e = { 0 };
	const char *csv = in_scratch("g.csv");
	char *text, msg[1024];

	load_ok(&sw, write_file("g.yaml", gups_yaml));
	run_all(&sw, in_scratch("g.csv.d"), csv, false);
	/* resumed: every report is current for its own input (the spec with its size) */
	{
		struct sweep_plan plan;

		ck_assert_int_eq(sweep_plan(&sw, in_scratch("g.csv.d"), "mmusim", 0, 1, &plan, &e), 0);
		ck_assert_uint_eq(plan.total, 6);
		ck_assert_uint_eq(plan.done, 6);
		ck_assert_uint_eq(plan.stale, 0);
		ck_assert_uint_eq(plan.ntasks, 0);
		sweep_plan_free(&plan);
	}
	/* point 0's report (64K, base) under point 4's name (256K, base): same config, another
	 * input (workload:gups:updates=2000,size=64K), so it is stale and point 4 runs again */
	{
		struct sweep_plan plan;
		char *f0 = sweep_point_file(&sw, in_scratch("g.csv.d"), 0, 0);
		char *f2 = sweep_point_file(&sw, in_scratch("g.csv.d"), 4, 0), cmd[20000];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", f0, f2);
		ck_assert_int_eq(system(cmd), 0);
		ck_assert_int_eq(sweep_plan(&sw, in_scratch("g.csv.d"), "mmusim", 0, 1, &plan, &e), 0);
		ck_assert_uint_eq(plan.done, 5);
		ck_assert_uint_eq(plan.stale, 1);
		ck_assert_uint_eq(plan.ntasks, 1);
		ck_assert_uint_eq(plan.tasks[0].n, 1);
		ck_assert_uint_eq(plan.tasks[0].pts[0], 4);
		sweep_plan_free(&plan);
		free(f0);
		free(f2);
	}
	sweep_free(&sw);
	text = read_all(csv);
	ck_assert_msg(!strncmp(text, "point,workload.size,os.mode,", 28), "header: %.60s", text);
	ck_assert_ptr_nonnull(strstr(text, "\n0,65536,base,"));
	ck_assert_ptr_nonnull(strstr(text, "\n3,131072,thp,"));
	ck_assert_ptr_nonnull(strstr(text, "\n5,262144,thp,"));
	free(text);
	if (plot_prepare(csv, &o, &t, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("plot_prepare: %s", msg);
	}
	ck_assert_int_eq(t.kind, PLOT_LINES);
	ck_assert_uint_eq(t.nseries, 2);
	ck_assert_uint_eq(t.series[0].n, 3);
	ck_assert_double_eq(t.series[0].x[0], 65536.0);
	ck_assert_double_eq(t.series[0].x[2], 262144.0);
	ck_assert_str_eq(t.xlabel, "workload size (bytes)");
	ck_assert_str_eq(t.ylabel, "L1 dTLB misses");
	ck_assert_str_eq(t.title, "L1 dTLB misses vs workload size by mode");
	ck_assert_uint_eq(t.nxtics, 3);
	ck_assert_str_eq(t.xtic_label[0], "64K");
	ck_assert_str_eq(t.xtic_label[1], "128K");
	ck_assert_str_eq(t.xtic_label[2], "256K");
	plot_table_free(&t);
}
END_TEST

/* The sweep's point equals `mmusim run -w SPEC` of the same spec (one number compared). */
START_TEST(test_workload_axis_equals_run)
{
	struct sweep sw, one;
	const char *csv = in_scratch("g.csv"), *csv1 = in_scratch("one.csv");
	char *a, *b, *la, *lb;

	load_ok(&sw, write_file("g.yaml", gups_yaml));
	run_all(&sw, in_scratch("g.csv.d"), csv, false);
	sweep_free(&sw);
	/* the same point as a sweep of its own over the written spec */
	load_ok(&one, write_file("one.yaml", "workload: gups:updates=2000,size=128K\n"
					     "set: { os.memory: 64M }\n"
					     "sweep:\n  os.mode: [thp]\n"));
	run_all(&one, in_scratch("one.csv.d"), csv1, false);
	sweep_free(&one);
	a = read_all(csv);
	b = read_all(csv1);
	/* row 3 of the axis sweep against row 0 of the plain one: every number after the labels */
	la = strstr(a, "\n3,131072,thp,");
	lb = strstr(b, "\n0,thp,");
	ck_assert_ptr_nonnull(la);
	ck_assert_ptr_nonnull(lb);
	la += strlen("\n3,131072,thp,");
	lb += strlen("\n0,thp,");
	ck_assert_int_eq((int)strcspn(la, "\n"), (int)strcspn(lb, "\n"));
	ck_assert(!strncmp(la, lb, strcspn(la, "\n")));
	free(a);
	free(b);
}
END_TEST

/* input: mixes traces and workloads; workload.KEY with a trace, or a key a workload lacks. */
START_TEST(test_input_list)
{
	struct sweep sw;
	char buf[16384], want[16384], top[4096];
	const char *y;

	ck_assert_ptr_nonnull(getcwd(top, sizeof(top)));	/* tests run from the repository root */

	snprintf(buf, sizeof(buf),
		 "input: [\"gups:size=64K,updates=500\", %s/tests/validation/small.lackey.zst, "
		 "{workload: \"stride:size=64K,stride=4K\"}, {trace: %s/traces/xz-6.lackey.zst}]\n"
		 "sweep:\n  os.mode: [base, thp]\n", top, top);
	load_ok(&sw, write_file("mix.yaml", buf));
	ck_assert_uint_eq(sw.ninputs, 4);
	ck_assert(sw.is_wl[0] && !sw.is_wl[1] && sw.is_wl[2] && !sw.is_wl[3]);
	ck_assert(!sw.workload);
	ck_assert_uint_eq(sw.npoints, 8);
	sweep_free(&sw);

	snprintf(buf, sizeof(buf),
		 "input: [\"gups:size=64K\", %s/traces/xz-6.lackey.zst]\n"
		 "sweep:\n  os.mode: [base]\n  workload.size: [64K, 1M]\n", top);
	y = write_file("bad1.yaml", buf);
	snprintf(want, sizeof(want), "%s:4:3: sweep: workload.size: input '%s/traces/xz-6.lackey.zst' "
		 "is a trace; workload parameters apply to workloads only", y, top);
	load_err(y, want);

	y = write_file("bad2.yaml", "input: [\"gups:size=64K\", \"stream:size=64K\"]\n"
				    "sweep:\n  workload.updates: [100, 200]\n");
	snprintf(want, sizeof(want), "%s:3:3: sweep: workload 'stream:size=64K,updates=100' (input "
		 "'stream:size=64K'): stream: unknown parameter 'updates'", y);
	load_err(y, want);

	y = write_file("bad3.yaml", "workload: gups\nsweep:\n  workload.sizes: [1M]\n");
	snprintf(want, sizeof(want), "%s:3:3: sweep: 'workload.sizes': no workload has a parameter "
		 "'sizes' (size, iterations, updates, steps, stride, passes, alpha, refs, seed, "
		 "madvise)", y);
	load_err(y, want);

	y = write_file("bad4.yaml", "workload: gups\nsweep:\n  workload.size: [1M, 2Q]\n");
	snprintf(want, sizeof(want), "%s:3:23: workload.size: bad value '2Q'", y);
	load_err(y, want);

	/* a parameter the spec needs may come from the axis alone; the input column less it */
	load_ok(&sw, write_file("ok.yaml", "input: [\"stride:passes=2\", \"stride:passes=3\"]\n"
					   "sweep:\n  workload.size: [64K]\n  workload.stride: [4K, 8K]\n"));
	{
		char **av = sweep_point_argv(&sw, 3, 0, "mmusim", "x.json");
		bool input_seen = false;

		ck_assert_str_eq(av[3], "stride:passes=3,size=64K,stride=8K");
		for (char **a = av; *a; a++)
			if (!strcmp(*a, "--label") && !strncmp(a[1], "input=", 6)) {
				ck_assert_str_eq(a[1], "input=stride:passes=3");
				input_seen = true;
			}
		ck_assert(input_seen);
		sweep_argv_free(av);
	}
	sweep_free(&sw);
}
END_TEST

/* --- figures ------------------------------------------------------------------ */

static char *script_of(const char *csv, const struct plot_opts *o)
{
	struct plot_table t;
	struct err e = { 0 };
	char *s = NULL, msg[1024];
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	ck_assert_ptr_nonnull(f);
	if (plot_prepare(csv, o, &t, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("plot_prepare(%s): %s", csv, msg);
	}
	plot_write_script(&t, "x.png", "png", f);
	plot_table_free(&t);
	ck_assert_int_eq(fclose(f), 0);
	return s;
}

static const char *const pct_csv =
	"point,input,os.mode,walk.cycles,cycles.total,refs.instructions\n"
	"0,a,base,1000,5000,100\n"
	"1,a,thp,5,4000,100\n"
	"2,b,base,800,3000,100\n"
	"3,b,thp,800,3000,100\n";

/* Labels and titles from the counter table, as stats_counter_describe() names them. */
START_TEST(test_counter_names)
{
	const char *name, *unit;
	char *s;
	struct plot_opts o = { .x = "input", .y = "walk.cycles", .by = "os.mode" };

	ck_assert_int_eq(stats_counter_describe("tlb.l1d.misses", &name, &unit), 0);
	ck_assert_str_eq(name, "L1 dTLB misses");
	ck_assert_str_eq(unit, "lookups");
	ck_assert_int_eq(stats_counter_describe("cycles.fault", &name, &unit), 0);
	ck_assert_str_eq(name, "fault cycles");
	ck_assert_int_eq(stats_counter_describe("vmstat.thp_fault_fallback", &name, &unit), 0);
	ck_assert_str_eq(name, "thp_fault_fallback");
	ck_assert_str_eq(unit, "events");
	ck_assert_int_eq(stats_counter_describe("memory.huge_coverage", &name, &unit), 0);
	ck_assert_str_eq(unit, "ratio");
	ck_assert_int_eq(stats_counter_describe("os.mode", &name, &unit), -1);

	/* % change bars: the names, the input column's one value in the title */
	s = script_of(write_file("p.csv", pct_csv), &o);
	ck_assert_ptr_nonnull(strstr(s, "\nset ylabel '% change in walk cycles against base'\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nset title 'walk cycles: % change against mode = base, "
					"per input'\n"));
	free(s);
	o = (struct plot_opts){ .x = "os.mode", .y = "mpki:walk.cycles", .input = "traces/t.zst" };
	s = script_of(write_file("q.csv", "point,input,os.mode,walk.cycles,refs.instructions\n"
				 "0,t,base,10,1000\n1,t,thp,20,1000\n"), &o);
	ck_assert_ptr_nonnull(strstr(s, "\nset title 'walk cycles per 1000 instructions per mode on "
					"t.zst'\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nset ylabel 'walk cycles per 1000 instructions (MPKI)'\n"));
	free(s);
	/* no --input: the CSV's one input */
	o.input = NULL;
	s = script_of(in_scratch("q.csv"), &o);
	ck_assert_ptr_nonnull(strstr(s, " per mode on t'\n"));
	free(s);
}
END_TEST

/* -100 %: a change cannot be below it; the axis stops there, the label inside the bar. */
START_TEST(test_pct_floor)
{
	struct plot_opts o = { .x = "input", .y = "walk.cycles", .by = "os.mode" };
	struct plot_table t;
	struct err e = { 0 };
	char *s = script_of(write_file("p.csv", pct_csv), &o);

	/* a: -99.5 %, b: 0 % (labelled too: room above 0) */
	ck_assert_ptr_nonnull(strstr(s, "\nset yrange [-100:"));
	ck_assert_ptr_nonnull(strstr(s, "\"-99.50%\""));
	ck_assert_ptr_nonnull(strstr(s, "\"+0.00%\""));
	ck_assert_ptr_null(strstr(s, "\nset yrange [-100:0]"));
	free(s);
	ck_assert_int_eq(plot_prepare(in_scratch("p.csv"), &o, &t, &e), 0);
	ck_assert_double_eq(t.series[0].y[0], -99.5);
	ck_assert_double_eq(t.series[0].y[1], 0.0);
	plot_table_free(&t);
	/* a smaller change keeps its own range below the bar */
	o.y = "cycles.total";
	s = script_of(in_scratch("p.csv"), &o);
	ck_assert_ptr_null(strstr(s, "\nset yrange [-100:"));
	free(s);
}
END_TEST

/* --logy, --abs, several -y, and their errors. */
START_TEST(test_options)
{
	struct plot_opts o = { .x = "input", .y = "walk.cycles", .by = "os.mode", .abs = true };
	struct plot_table t;
	struct err e = { 0 };
	char *s, msg[1024];
	const char *csv = write_file("p.csv", pct_csv);

	s = script_of(csv, &o);
	ck_assert_ptr_nonnull(strstr(s, "\nset multiplot layout 2,1 title "));
	ck_assert_ptr_nonnull(strstr(s, "\nset ylabel 'walk cycles'\n"));	/* the absolute panel */
	ck_assert_ptr_nonnull(strstr(s, "title 'base'"));			/* the base's bars too */
	ck_assert_ptr_nonnull(strstr(s, "\"1000\""));				/* labelled with their value */
	ck_assert_ptr_nonnull(strstr(s, "\nunset multiplot\n"));
	free(s);

	o = (struct plot_opts){ .x = "refs.instructions", .y = "walk.cycles,cycles.total",
				.by = "os.mode", .logy = true };
	write_file("l.csv", "point,os.mode,refs.instructions,walk.cycles,cycles.total\n"
		   "0,base,100,10,1000\n1,base,200,20,3000\n2,thp,100,5,900\n3,thp,200,6,2000\n");
	s = script_of(in_scratch("l.csv"), &o);
	ck_assert_ptr_nonnull(strstr(s, "\nset logscale y 10\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nset title 'walk cycles and total cycles vs instructions by "
					"mode'\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nset ylabel 'walk cycles, total cycles'\n"));
	ck_assert_ptr_nonnull(strstr(s, "lc 2 dt 2 title 'thp, total cycles'"));
	free(s);

	o.y = "walk.cycles";
	write_file("z.csv", "point,os.mode,refs.instructions,walk.cycles\n0,base,100,0\n");
	ck_assert_int_eq(plot_prepare(in_scratch("z.csv"), &o, &t, &e), -1);
	err_format(&e, msg, sizeof(msg));
	snprintf(s = malloc(9000), 9000, "%s:2: --logy needs y > 0: walk.cycles is 0",
		 in_scratch("z.csv"));
	ck_assert_str_eq(msg, s);
	free(s);
	o = (struct plot_opts){ .x = "input", .y = "walk.cycles", .by = "os.mode", .logy = true };
	ck_assert_int_eq(plot_prepare(csv, &o, &t, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "--logy: only for lines and timelines (bars start at 0)");
	o = (struct plot_opts){ .x = "refs.instructions", .y = "walk.cycles", .abs = true };
	ck_assert_int_eq(plot_prepare(in_scratch("l.csv"), &o, &t, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "--abs: only for % change bars (--kind bars with --by)");
}
END_TEST

/* A repeated sweep's per-repetition CSV: each point's mean and the 95 % CI of a derived y. */
START_TEST(test_reps_error_bars)
{
	struct plot_opts o = { .x = "n", .y = "mpki:walk.walks" };
	struct plot_table t;
	struct err e = { 0 };
	double v[3] = { 1000.0 * 3 / 1000, 1000.0 * 5 / 1000, 1000.0 * 10 / 2000 }, m, sd;

	/* point 0 repeated 3 times (mpki 3, 5, 5), point 1 once */
	write_file("r.csv", "point,rep,n,walk.walks,refs.instructions\n"
		   "0,0,1,3,1000\n0,1,1,5,1000\n0,2,1,10,2000\n1,0,2,7,1000\n");
	ck_assert_int_eq(plot_prepare(in_scratch("r.csv"), &o, &t, &e), 0);
	ck_assert_uint_eq(t.series[0].n, 2);
	m = (v[0] + v[1] + v[2]) / 3;
	sd = sqrt(((v[0] - m) * (v[0] - m) + (v[1] - m) * (v[1] - m) + (v[2] - m) * (v[2] - m)) / 2);
	ck_assert_double_eq_tol(t.series[0].y[0], m, 1e-12);
	/* t(0.975, 2) = 4.302652729911275 */
	ck_assert_double_eq_tol(t.series[0].err[0], 4.302652729911275 * sd / sqrt(3.0), 1e-9);
	ck_assert_double_eq(t.series[0].y[1], 7.0);
	ck_assert_double_eq(t.series[0].err[1], 0.0);
	plot_table_free(&t);
}
END_TEST

/* The same merged from a repeated sweep (merge --reps): one row per point and repetition. */
START_TEST(test_reps_csv_from_sweep)
{
	struct sweep sw;
	const char *csv = in_scratch("r.reps.csv");
	char *text;

	load_ok(&sw, write_file("r.yaml", "workload: zipf:size=256K,alpha=0.9,refs=2000\n"
				"repeat: 2\nsweep:\n  os.mode: [base]\n"));
	run_all(&sw, in_scratch("r.d"), csv, true);
	sweep_free(&sw);
	text = read_all(csv);
	ck_assert_msg(!strncmp(text, "point,rep,os.mode,refs.instructions,", 36), "%.60s", text);
	ck_assert_ptr_nonnull(strstr(text, "\n0,0,base,8000,"));
	ck_assert_ptr_nonnull(strstr(text, "\n0,1,base,8000,"));
	free(text);
}
END_TEST

/* Each new kind renders as PNG, SVG and PDF (gnuplot exited 0: plot_csv() returned 0). */
START_TEST(test_render_formats)
{
	static const char *const fmt[] = { "png", "svg", "pdf" };
	const char *d = getenv("MMUSIM_PLOT_OUT");
	struct plot_opts kinds[] = {
		{ .x = "input", .y = "walk.cycles", .by = "os.mode", .abs = true },
		{ .x = "input", .y = "walk.cycles", .by = "os.mode" },
		{ .x = "refs.instructions", .y = "walk.cycles,cycles.total", .by = "os.mode",
		  .logy = true, .logx = true },
		{ .x = "n", .y = "mpki:walk.walks" },
	};
	const char *csvs[] = { "p.csv", "p.csv", "l.csv", "r.csv" };
	const char *names[] = { "abs", "floor", "multi_logy", "reps" };
	struct err e = { 0 };
	char path[8300], msg[1024];

	write_file("p.csv", pct_csv);
	write_file("l.csv", "point,os.mode,refs.instructions,walk.cycles,cycles.total\n"
		   "0,base,100,10,1000\n1,base,200,20,3000\n2,thp,100,5,900\n3,thp,200,6,2000\n");
	write_file("r.csv", "point,rep,n,walk.walks,refs.instructions\n"
		   "0,0,1,3,1000\n0,1,1,5,1000\n1,0,2,7,1000\n1,1,2,9,1000\n");
	if (d && *d)
		mkdir(d, 0755);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (int f = 0; f < 3; f++) {
			char *buf;

			snprintf(path, sizeof(path), "%s/figs_%s.%s", d && *d ? d : scratch, names[k],
				 fmt[f]);
			kinds[k].out = path;
			if (plot_csv(in_scratch(csvs[k]), &kinds[k], &e)) {
				err_format(&e, msg, sizeof(msg));
				ck_abort_msg("%s: %s", path, msg);
			}
			buf = read_all(path);
			if (f == 0)
				ck_assert_msg(!memcmp(buf, "\x89PNG\r\n\x1a\n", 8), "%s: not a PNG", path);
			else if (f == 1)
				ck_assert_msg(strstr(buf, "<svg") != NULL, "%s: not an SVG", path);
			else
				ck_assert_msg(!memcmp(buf, "%PDF-", 5), "%s: not a PDF", path);
			free(buf);
		}
	kinds[0].out = in_scratch("a.jpg");
	ck_assert_int_eq(plot_csv(in_scratch("p.csv"), &kinds[0], &e), -1);
	err_format(&e, msg, sizeof(msg));
	snprintf(path, sizeof(path), "%s: plot output must end in .png, .svg or .pdf",
		 in_scratch("a.jpg"));
	ck_assert_str_eq(msg, path);
}
END_TEST

static Suite *figs_suite(void)
{
	Suite *s = suite_create("figs");
	TCase *tc = tcase_create("figs");

	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_workload_axis_points);
	tcase_add_test(tc, test_workload_axis_csv_and_lines);
	tcase_add_test(tc, test_workload_axis_equals_run);
	tcase_add_test(tc, test_input_list);
	tcase_add_test(tc, test_counter_names);
	tcase_add_test(tc, test_pct_floor);
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_reps_error_bars);
	tcase_add_test(tc, test_reps_csv_from_sweep);
	tcase_add_test(tc, test_render_formats);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(figs_suite());
}
