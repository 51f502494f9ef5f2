/*
 * check_plot.c - Check suite for sim/plot.c (`mmusim plot`): the table each kind of
 * figure is drawn from (exact values: the % change bars, units, derived metrics,
 * error bars, size-suffixed x ticks), the script's key lines, rendering of every
 * kind to PNG, SVG and PDF through gnuplot (no temporary left behind), `plot --script`
 * files that gnuplot draws from alone, and the exact
 * message of every kind of bad input.
 *
 * Committed inputs in tests/data/ (override with MMUSIM_TESTDATA), made with this tree's
 * ./mmusim (commands below) except plot_pct.csv, which is hand-written so that every
 * % change is exact in binary:
 *   plot_sweep.csv    `run -w zipf:size=64M,alpha=0.9,refs=400000,seed=S --set
 *                     tlb.l1d.4K.entries=N --set os.mode=M --set os.memory=256M --set
 *                     os.fragmentation.unmovable=0.97 --set os.thp.use_zero_page=false`,
 *                     N in 16..256, M in base/thp, S in 1..3: mean and 95% CI half-width
 *                     (t(0.975, 2) = 4.3027 * s / sqrt(3)) in the X.ci95 columns
 *   plot_modes.csv    `run -w W --modes base,hugetlbfs,thp --set os.memory=512M --set
 *                     os.fragmentation.unmovable=0.95 --set os.thp.use_zero_page=false`
 *                     for stream, gups, chase, zipf
 *   plot_sizes.csv    `run -w zipf:size=2G,alpha=0.6,refs=300000 --set os.mode=base --set
 *                     cache.llc.size=S`, S from 512K to 16M, written with its suffix
 *   plot_timeline.csv `run -w gups:size=64M,updates=20000000 --modes base,hugetlbfs,thp
 *                     --set os.memory=512M --set os.fragmentation.unmovable=0.9 --set
 *                     os.thp.defrag=never --set os.khugepaged.scan_sleep_millisecs=2
 *                     --timeline F --timeline-ms 4`
 *
 * Set MMUSIM_PLOT_OUT=DIR to keep the rendered images there (to look at them).
 */
#include <check.h>

#include "check_run.h"
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"

/* MMUSIM_TESTDATA, else data/ next to this source file (tests/data from the repository root). */
static const char *data_dir(void)
{
	static char dir[4096];
	const char *d = getenv("MMUSIM_TESTDATA"), *slash = strrchr(__FILE__, '/');

	if (d && *d)
		return d;
	snprintf(dir, sizeof(dir), "%.*sdata", slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
	return dir;
}

static const char *data(const char *name)
{
	static char path[8][4200];
	static unsigned next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", data_dir(), name);
	return p;
}

/* A fresh scratch directory per test (each test runs in its own forked process). */
static char scratch[4096];

static void scratch_setup(void)
{
	snprintf(scratch, sizeof(scratch), "%s/check_plot.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void scratch_teardown(void)
{
	DIR *d = opendir(scratch);
	struct dirent *de;
	char p[8192];

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", scratch, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(scratch);
}

static const char *in_scratch(const char *name)
{
	static char path[8][8192];
	static unsigned next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", scratch, name);
	return p;
}

static const char *write_csv(const char *name, const char *text)
{
	const char *p = in_scratch(name);
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return p;
}

/* Names in the scratch directory that contain ".tmp." (left-over temporaries). */
static unsigned temporaries(void)
{
	DIR *d = opendir(scratch);
	struct dirent *de;
	unsigned n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		n += strstr(de->d_name, ".tmp.") != NULL;
	closedir(d);
	return n;
}

static void expect_err(const char *csv, const struct plot_opts *o, const char *want)
{
	struct plot_table t;
	struct err e = { 0 };
	char msg[1024];

	ck_assert_int_eq(plot_prepare(csv, o, &t, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, want);
	ck_assert_ptr_null(t.series);
	ck_assert_uint_eq(t.nseries, 0);
}

static void prepare_ok(const char *csv, const struct plot_opts *o, struct plot_table *t)
{
	struct err e = { 0 };
	char msg[1024];

	if (plot_prepare(csv, o, t, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("plot_prepare(%s): %s", csv, msg);
	}
}

#define ck_assert_double_exact(a, b)                                                   \
	ck_assert_msg((a) == (b), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

/* --- the tables ------------------------------------------------------------- */

START_TEST(test_pct_change_exact)
{
	struct plot_opts o = { .x = "input", .y = "cycles.total", .by = "os.mode" };
	struct plot_table t;

	prepare_ok(data("plot_pct.csv"), &o, &t);
	ck_assert_int_eq(t.kind, PLOT_BARS);	/* x is not numeric */
	ck_assert(t.pct);
	ck_assert_uint_eq(t.ncat, 3);
	ck_assert_str_eq(t.cat[0], "a");
	ck_assert_str_eq(t.cat[1], "b");
	ck_assert_str_eq(t.cat[2], "c");
	ck_assert_uint_eq(t.nseries, 2);	/* base is the baseline, not a bar */
	ck_assert_str_eq(t.series[0].name, "thp");
	ck_assert_str_eq(t.series[1].name, "huge");
	ck_assert_uint_eq(t.series[0].n, 3);
	ck_assert_double_exact(t.series[0].y[0], -25.0);	/* 150 vs 200 */
	ck_assert_double_exact(t.series[0].y[1], -75.0);	/* 16 vs 64 */
	ck_assert(isnan(t.series[0].y[2]));			/* c has no thp row */
	ck_assert_double_exact(t.series[1].y[0], 25.0);		/* 250 vs 200 */
	ck_assert_double_exact(t.series[1].y[1], 50.0);		/* 96 vs 64 */
	ck_assert_double_exact(t.series[1].y[2], 10.0);		/* 11 vs 10 */
	for (size_t k = 0; k < 3; k++)
		ck_assert_double_exact(t.series[1].x[k], (double)k);
	ck_assert_ptr_null(t.series[0].err);
	ck_assert_str_eq(t.title, "total cycles: % change against mode = base, per input");
	ck_assert_str_eq(t.xlabel, "input");
	ck_assert_str_eq(t.ylabel, "% change in total cycles against base");
	{
		/* the seed mail's table of the same numbers */
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		ck_assert_int_eq(plot_write_table(&t, f), 0);
		fclose(f);
		ck_assert_str_eq(buf,
				 "% change in total cycles against base\n"
				 "input                     base                      thp                     huge\n"
				 "a                200 (  0.00%)            150 (-25.00%)            250 ( 25.00%)\n"
				 "b                 64 (  0.00%)             16 (-75.00%)             96 ( 50.00%)\n"
				 "c                 10 (  0.00%)              - (      -)             11 ( 10.00%)\n");
		free(buf);
	}
	plot_table_free(&t);
}
END_TEST

START_TEST(test_pct_other_base)
{
	struct plot_opts o = { .x = "input", .y = "cycles.total", .by = "os.mode", .base = "huge" };
	struct plot_table t;

	prepare_ok(data("plot_pct.csv"), &o, &t);
	ck_assert_uint_eq(t.nseries, 2);
	ck_assert_str_eq(t.series[0].name, "base");
	ck_assert_str_eq(t.series[1].name, "thp");
	ck_assert_double_exact(t.series[0].y[0], 100.0 * (200.0 - 250.0) / 250.0);
	ck_assert_double_exact(t.series[0].y[1], 100.0 * (64.0 - 96.0) / 96.0);
	ck_assert_double_exact(t.series[0].y[2], 100.0 * (10.0 - 11.0) / 11.0);
	ck_assert_double_exact(t.series[1].y[0], 100.0 * (150.0 - 250.0) / 250.0);
	ck_assert_double_exact(t.series[1].y[1], 100.0 * (16.0 - 96.0) / 96.0);
	ck_assert(isnan(t.series[1].y[2]));
	ck_assert_str_eq(t.title, "total cycles: % change against mode = huge, per input");
	plot_table_free(&t);
}
END_TEST

START_TEST(test_bars_absolute)
{
	struct plot_opts o = { .x = "os.mode", .y = "walk.cycles" };
	struct plot_table t;
	const char *csv = write_csv("abs.csv", "os.mode,walk.cycles\nbase,517180\nthp,1180\n");

	prepare_ok(csv, &o, &t);
	ck_assert_int_eq(t.kind, PLOT_BARS);
	ck_assert(!t.pct);
	ck_assert_uint_eq(t.nseries, 1);
	ck_assert_str_eq(t.series[0].name, "walk.cycles");
	ck_assert_str_eq(t.ylabel, "walk cycles");
	ck_assert_double_exact(t.series[0].y[0], 517180.0);
	ck_assert_double_exact(t.series[0].y[1], 1180.0);
	ck_assert_str_eq(t.title, "walk cycles per mode");
	plot_table_free(&t);
}
END_TEST

START_TEST(test_lines_by_with_ci)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "tlb.l1d.misses", .by = "os.mode",
			       .logx = true };
	static const double x[] = { 16, 32, 64, 128, 256 };
	static const double base[] = { 367071, 348389, 326570, 301668, 272496 };
	static const double base_ci[] = { 1679.4, 2412.2, 2043.78, 2228.16, 954.961 };
	static const double thp[] = { 312474, 295552, 277181, 256483, 231824 };
	struct plot_table t;

	prepare_ok(data("plot_sweep.csv"), &o, &t);
	ck_assert_int_eq(t.kind, PLOT_LINES);	/* x is numeric */
	ck_assert(t.logx);
	ck_assert_uint_eq(t.nseries, 2);
	ck_assert_str_eq(t.series[0].name, "base");
	ck_assert_str_eq(t.series[1].name, "thp");
	for (unsigned s = 0; s < 2; s++) {
		ck_assert_uint_eq(t.series[s].n, 5);
		ck_assert_ptr_nonnull(t.series[s].err);
		for (int i = 0; i < 5; i++)
			ck_assert_double_exact(t.series[s].x[i], x[i]);
	}
	for (int i = 0; i < 5; i++) {
		ck_assert_double_exact(t.series[0].y[i], base[i]);
		ck_assert_double_exact(t.series[0].err[i], base_ci[i]);
		ck_assert_double_exact(t.series[1].y[i], thp[i]);
	}
	ck_assert_double_exact(t.series[1].err[4], 6187.2);
	ck_assert_uint_eq(t.nxtics, 0);
	ck_assert_str_eq(t.title, "L1 dTLB misses vs L1 dTLB 4K entries by mode");
	ck_assert_str_eq(t.xlabel, "L1 dTLB 4K entries");
	ck_assert_str_eq(t.ylabel, "L1 dTLB misses");
	plot_table_free(&t);
}
END_TEST

/* Rows out of x order are sorted; without --by there is one series named after y. */
START_TEST(test_lines_sorted_one_series)
{
	struct plot_opts o = { .x = "n", .y = "v", .title = "mine" };
	struct plot_table t;
	const char *csv = write_csv("s.csv", "n,v\n8,3\n2,1\n4,2\n");

	prepare_ok(csv, &o, &t);
	ck_assert_int_eq(t.kind, PLOT_LINES);
	ck_assert_uint_eq(t.nseries, 1);
	ck_assert_str_eq(t.series[0].name, "v");
	ck_assert_uint_eq(t.series[0].n, 3);
	ck_assert_double_exact(t.series[0].x[0], 2.0);
	ck_assert_double_exact(t.series[0].x[2], 8.0);
	ck_assert_double_exact(t.series[0].y[0], 1.0);
	ck_assert_double_exact(t.series[0].y[2], 3.0);
	ck_assert_ptr_null(t.series[0].err);
	ck_assert_str_eq(t.title, "mine");
	plot_table_free(&t);
}
END_TEST

START_TEST(test_units)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "memory.rss_bytes", .by = "os.mode" };
	struct plot_table t;

	prepare_ok(data("plot_sweep.csv"), &o, &t);
	ck_assert_str_eq(t.ylabel, "resident memory (MiB)");
	ck_assert_double_exact(t.series[0].y[0], 6.68167e7 / 1048576.0);
	ck_assert_double_exact(t.series[0].err[0], 96707.4 / 1048576.0);
	plot_table_free(&t);

	o.y = "memory.huge_coverage";
	prepare_ok(data("plot_sweep.csv"), &o, &t);
	ck_assert_str_eq(t.ylabel, "huge page coverage of resident memory (%)");
	ck_assert_double_exact(t.series[1].y[0], 0.12549 * 100.0);
	ck_assert_double_exact(t.series[1].err[0], 0.000156379 * 100.0);
	plot_table_free(&t);

	o.y = "cycles.total";
	prepare_ok(data("plot_sweep.csv"), &o, &t);
	/* a million or more: in millions */
	ck_assert_str_eq(t.ylabel, "total cycles (millions)");
	ck_assert_double_exact(t.series[0].y[0], 1.44564e7 * 1e-6);
	ck_assert_double_exact(t.series[0].err[0], 9492.17 * 1e-6);
	plot_table_free(&t);
}
END_TEST

START_TEST(test_derived_metrics)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "mpki:tlb.l1d.misses", .by = "os.mode" };
	struct plot_table t;

	prepare_ok(data("plot_sweep.csv"), &o, &t);
	ck_assert_str_eq(t.ylabel, "L1 dTLB misses per 1000 instructions (MPKI)");
	ck_assert_double_exact(t.series[0].y[0], 1000.0 * 367071.0 / 1.6e6);
	ck_assert_double_exact(t.series[1].y[4], 1000.0 * 231824.0 / 1.6e6);
	ck_assert_ptr_null(t.series[0].err);	/* no error bars on derived metrics */
	plot_table_free(&t);

	o.y = "walk.cycles / walk.walks";
	prepare_ok(data("plot_sweep.csv"), &o, &t);
	ck_assert_str_eq(t.ylabel, "walk cycles / page walks");
	ck_assert_double_exact(t.series[0].y[0], 2.48128e6 / 240599.0);
	ck_assert_double_exact(t.series[1].y[2], 2.08273e6 / 204954.0);
	plot_table_free(&t);

	/* a zero divisor leaves the point out */
	o.x = "n";
	o.y = "a/b";
	o.by = NULL;
	prepare_ok(write_csv("z.csv", "n,a,b\n1,3,2\n2,5,0\n3,9,4\n"), &o, &t);
	ck_assert_uint_eq(t.series[0].n, 2);
	ck_assert_double_exact(t.series[0].x[1], 3.0);
	ck_assert_double_exact(t.series[0].y[1], 2.25);
	/* ... and says so */
	ck_assert_ptr_nonnull(strstr(t.warning, "/z.csv: 1 of 3 rows left out: a/b is undefined where b is 0 (line 3)"));
	plot_table_free(&t);
}
END_TEST

/*
 * --where selects rows (one key's values are alternatives, text or the same number);
 * --facet makes one table per value, each from its own rows; the table's size and
 * font come from --size and --font-size; a timeline's counts are per interval, the
 * same column of another CSV is not.
 */
START_TEST(test_where_facet_size)
{
	const char *where[] = { "os.mode=thp", "tlb.l1d.4K.entries=32.0", "tlb.l1d.4K.entries=64" };
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "walk.walks", .where = where, .nwhere = 3 };
	struct plot_table t;

	prepare_ok(data("plot_sweep.csv"), &o, &t);
	ck_assert_uint_eq(t.nseries, 1);
	ck_assert_uint_eq(t.series[0].n, 2);
	ck_assert_double_exact(t.series[0].x[0], 32.0);
	ck_assert_double_exact(t.series[0].x[1], 64.0);
	plot_table_free(&t);

	o.where = NULL;
	o.nwhere = 0;
	o.facet = "os.mode";
	o.size = "3.3x2.2in";
	o.font_size = "8";
	prepare_ok(data("plot_sweep.csv"), &o, &t);
	ck_assert_uint_eq(t.npanels, 2);
	ck_assert_str_eq(t.panels[0].title, "mode = base");
	ck_assert_str_eq(t.panels[1].title, "mode = thp");
	ck_assert_uint_eq(t.panels[1].series[0].n, 5);
	ck_assert_uint_eq(t.width, 462);
	ck_assert_uint_eq(t.height, 308);
	ck_assert_double_exact(t.font, 8.0);
	plot_table_free(&t);

	o = (struct plot_opts){ .y = "walks" };
	prepare_ok(data("plot_timeline.csv"), &o, &t);
	ck_assert_str_eq(t.ylabel, "page walks per interval");
	plot_table_free(&t);
	o = (struct plot_opts){ .x = "n", .y = "walks" };
	prepare_ok(write_csv("v.csv", "n,walks\n1,3\n2,5\n"), &o, &t);
	ck_assert_str_eq(t.ylabel, "page walks");
	plot_table_free(&t);
}
END_TEST

START_TEST(test_size_suffix_ticks)
{
	struct plot_opts o = { .x = "cache.llc.size", .y = "walk.cycles", .logx = true };
	static const char *const label[] = { "512K", "1M", "2M", "4M", "8M", "16M" };
	struct plot_table t;

	prepare_ok(data("plot_sizes.csv"), &o, &t);
	ck_assert_int_eq(t.kind, PLOT_LINES);
	ck_assert_uint_eq(t.series[0].n, 6);
	ck_assert_double_exact(t.series[0].x[0], 524288.0);
	ck_assert_double_exact(t.series[0].x[5], 16777216.0);
	ck_assert_double_exact(t.series[0].y[0], 53109248.0 * 1e-6);
	ck_assert_str_eq(t.ylabel, "walk cycles (millions)");
	ck_assert_uint_eq(t.nxtics, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert_str_eq(t.xtic_label[i], label[i]);
		ck_assert_double_exact(t.xtic_at[i], t.series[0].x[i]);
	}
	plot_table_free(&t);
}
END_TEST

START_TEST(test_timeline)
{
	struct plot_opts o = { 0 };
	struct plot_table t;

	prepare_ok(data("plot_timeline.csv"), &o, &t);	/* everything from the defaults */
	ck_assert_int_eq(t.kind, PLOT_TIMELINE);
	ck_assert_uint_eq(t.nseries, 3);
	ck_assert_str_eq(t.series[0].name, "base");
	ck_assert_str_eq(t.series[1].name, "hugetlbfs");
	ck_assert_str_eq(t.series[2].name, "thp");
	ck_assert_uint_eq(t.series[0].n, 54);
	ck_assert_uint_eq(t.series[2].n, 28);
	ck_assert_double_exact(t.series[2].x[0], 4.0);
	ck_assert_double_exact(t.series[2].y[0], 100.0);
	ck_assert_double_exact(t.series[2].x[2], 12.0);
	ck_assert_double_exact(t.series[2].y[2], 0.920354 * 100.0);
	ck_assert_double_exact(t.series[2].x[27], 112.0);
	ck_assert_double_exact(t.series[0].x[53], 216.0);
	ck_assert_str_eq(t.xlabel, "simulated time (ms)");
	ck_assert_str_eq(t.ylabel, "huge page coverage of resident memory (%)");
	ck_assert_str_eq(t.title, "huge page coverage of resident memory over time by mode");
	plot_table_free(&t);

	o.y = "rss_bytes";
	o.kind = "timeline";
	prepare_ok(data("plot_timeline.csv"), &o, &t);
	ck_assert_str_eq(t.ylabel, "resident memory (MiB)");
	ck_assert_double_exact(t.series[0].y[53], 64.0);
	plot_table_free(&t);
}
END_TEST

/* The script: the terminal, log axis, error bars, data blocks. */
static char *script_of(const struct plot_table *t, const char *out, bool svg)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	ck_assert_ptr_nonnull(f);
	plot_write_script(t, out, svg ? "svg" : "png", f);
	ck_assert_int_eq(fclose(f), 0);
	return s;
}

START_TEST(test_script)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "tlb.l1d.misses", .by = "os.mode",
			       .logx = true, .title = "it's" };
	struct plot_table t;
	char *s;

	prepare_ok(data("plot_sweep.csv"), &o, &t);
	s = script_of(&t, "a.png", false);
	ck_assert_ptr_nonnull(strstr(s, "set terminal pngcairo size 1000,600 noenhanced"));
	ck_assert_ptr_nonnull(strstr(s, "\nset output 'a.png'\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nset title 'it''s'\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nset logscale x 2\n"));
	ck_assert_ptr_nonnull(strstr(s, "$s0 << EOD\n16 367071 1679.4\n32 348389 2412.2\n"));
	ck_assert_ptr_nonnull(strstr(s, "using 1:2:3 with yerrorlines"));
	free(s);
	s = script_of(&t, "a.svg", true);
	ck_assert_ptr_nonnull(strstr(s, "set terminal svg size 1000,600"));
	free(s);
	plot_table_free(&t);

	o = (struct plot_opts){ .x = "input", .y = "cycles.total", .by = "os.mode" };
	prepare_ok(data("plot_pct.csv"), &o, &t);
	s = script_of(&t, "b.png", false);
	ck_assert_ptr_nonnull(strstr(s, "set xtics nomirror scale 0 ('a' 0, 'b' 1, 'c' 2)\n"));
	/* thp: bars of width 0.4 left of each cluster's centre, labelled; none for c */
	ck_assert_ptr_nonnull(strstr(s, "$s0 << EOD\n-0.2 -25 "));
	ck_assert_ptr_nonnull(strstr(s, " \"-25.00%\"\n0.8 -75 "));
	ck_assert_ptr_nonnull(strstr(s, " \"-75.00%\"\nEOD\n$s1 << EOD\n0.2 25 "));
	ck_assert_ptr_nonnull(strstr(s, " \"+10.00%\"\nEOD\n"));
	ck_assert_ptr_nonnull(strstr(s, "with boxes"));
	ck_assert_ptr_nonnull(strstr(s, "with labels"));
	free(s);
	plot_table_free(&t);

	/* crowded bars over trace paths: base names under the clusters, upright value labels */
	{
		static const char *const mode[] = { "base", "thp", "madvise", "hugetlbfs", "defrag" };
		char text[4096];
		size_t n = (size_t)snprintf(text, sizeof(text), "input,os.mode,walk.cycles\n");

		for (int k = 0; k < 5; k++)
			for (int m = 0; m < 5; m++)
				n += (size_t)snprintf(text + n, sizeof(text) - n,
						      "traces/d%d/x%d.lackey.zst,%s,%d\n", k, k,
						      mode[m], 1000 + 37 * m + k);
		o = (struct plot_opts){ .x = "input", .y = "walk.cycles", .by = "os.mode" };
		prepare_ok(write_csv("paths.csv", text), &o, &t);
		s = script_of(&t, "p.png", false);
		ck_assert_ptr_nonnull(strstr(s, "set xtics nomirror scale 0 ('x0.lackey.zst' 0, "
					     "'x1.lackey.zst' 1, "));
		ck_assert_ptr_nonnull(strstr(s, "with labels rotate by 90 left"));
		ck_assert_ptr_nonnull(strstr(s, "\nset key title 'mode'\n"));
		free(s);
		plot_table_free(&t);
	}
	/* the same base name in every directory: the shared leading directories go */
	prepare_ok(write_csv("same.csv", "input,os.mode,walk.cycles\ntraces/a/t.zst,base,1\n"
			     "traces/a/t.zst,thp,2\ntraces/b/t.zst,base,3\ntraces/b/t.zst,thp,4\n"),
		   &o, &t);
	s = script_of(&t, "q.png", false);
	ck_assert_ptr_nonnull(strstr(s, "set xtics nomirror scale 0 ('a/t.zst' 0, 'b/t.zst' 1)\n"));
	ck_assert_ptr_nonnull(strstr(s, "using 1:3:4 with labels font"));	/* they fit across */
	ck_assert_ptr_nonnull(strstr(s, "\nunset key\n"));	/* one bar per cluster */
	free(s);
	plot_table_free(&t);

	o = (struct plot_opts){ 0 };
	prepare_ok(data("plot_timeline.csv"), &o, &t);
	s = script_of(&t, "c.png", false);
	ck_assert_ptr_nonnull(strstr(s, "using 1:2 with lines lw 2 dt 3 title 'thp'"));
	ck_assert_ptr_null(strstr(s, "logscale"));
	free(s);
	plot_table_free(&t);
}
END_TEST

/* --- rendering -------------------------------------------------------------- */

static const char *out_dir(void)
{
	const char *d = getenv("MMUSIM_PLOT_OUT");

	if (d && *d) {
		mkdir(d, 0755);
		return d;
	}
	return scratch;
}

static void render_and_check(const char *csv, const struct plot_opts *opts, const char *name)
{
	static const char png_magic[8] = { '\x89', 'P', 'N', 'G', '\r', '\n', '\x1a', '\n' };
	struct plot_opts o = *opts;
	struct err e = { 0 };
	char path[8192], msg[1024], buf[4096];
	size_t n;
	FILE *f;

	static const char *const fmt[] = { "png", "svg", "pdf" };

	for (int k = 0; k < 3; k++) {
		int svg = k == 1;

		snprintf(path, sizeof(path), "%s/%s.%s", out_dir(), name, fmt[k]);
		unlink(path);
		o.out = path;
		if (plot_csv(csv, &o, &e)) {
			err_format(&e, msg, sizeof(msg));
			ck_abort_msg("plot_csv(%s -> %s): %s", csv, path, msg);
		}
		f = fopen(path, "rb");
		ck_assert_msg(f != NULL, "%s was not written", path);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		if (svg)
			ck_assert_msg(strstr(buf, "<svg") != NULL, "%s has no <svg", path);
		else if (k == 2)	/* pdfcairo */
			ck_assert_msg(n > 5 && !memcmp(buf, "%PDF-", 5), "%s is not a PDF", path);
		else
			ck_assert_msg(n > 8 && !memcmp(buf, png_magic, 8), "%s is not a PNG", path);
	}
	ck_assert_uint_eq(temporaries(), 0);
}

START_TEST(test_render_lines)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "tlb.l1d.misses", .by = "os.mode",
			       .logx = true };

	render_and_check(data("plot_sweep.csv"), &o, "lines_ci_logx");
	o.y = "mpki:tlb.l1d.misses";
	render_and_check(data("plot_sweep.csv"), &o, "lines_mpki");
	o = (struct plot_opts){ .x = "cache.llc.size", .y = "walk.cycles", .logx = true };
	render_and_check(data("plot_sizes.csv"), &o, "lines_sizes");
}
END_TEST

START_TEST(test_render_bars)
{
	struct plot_opts o = { .x = "input", .y = "cycles.total", .by = "os.mode" };

	render_and_check(data("plot_modes.csv"), &o, "bars_modes");
	o.y = "walk.cycles";
	render_and_check(data("plot_modes.csv"), &o, "bars_walk");
	render_and_check(data("plot_pct.csv"), &(struct plot_opts){ .x = "input",
		.y = "cycles.total", .by = "os.mode" }, "bars_pct");
	/* the gups rows of plot_modes.csv, absolute values */
	render_and_check(write_csv("gups.csv", "os.mode,walk.cycles\nbase,6.99277e+06\n"
				   "hugetlbfs,549136\nthp,549136\n"),
			 &(struct plot_opts){ .x = "os.mode", .y = "walk.cycles", .kind = "bars" },
			 "bars_absolute");
}
END_TEST

START_TEST(test_render_timeline)
{
	struct plot_opts o = { 0 };

	render_and_check(data("plot_timeline.csv"), &o, "timeline");
	o.y = "walk_cycles";
	render_and_check(data("plot_timeline.csv"), &o, "timeline_walk_cycles");
}
END_TEST

/*
 * plot --script: for each kind, the script alone (no -o) is a valid gnuplot script:
 * gnuplot run on it draws a PNG named after it; with -o as well, both are written
 * and the script names -o's file. Its first lines give the command that makes it.
 */
static void script_and_draw(const char *csv, const struct plot_opts *opts, const char *name,
			    const char *want_cmd)
{
	struct plot_opts o = *opts;
	struct err e = { 0 };
	char gp[8192], png[8192], cmd[20000], msg[1024], line[4096];
	unsigned char magic[8];
	FILE *f;

	snprintf(gp, sizeof(gp), "%s/%s.gp", scratch, name);
	snprintf(png, sizeof(png), "%s/%s.png", scratch, name);
	o.script = gp;
	if (plot_csv(csv, &o, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("plot_csv(%s --script %s): %s", csv, gp, msg);
	}
	ck_assert_msg(access(png, F_OK) != 0, "%s drawn without -o", png);
	f = fopen(gp, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_str_eq(line, "# Written by mmusim plot --script, the data inline. Made by:\n");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	snprintf(cmd, sizeof(cmd), "#   mmusim plot %s %s --script %s\n", csv, want_cmd, gp);
	ck_assert_str_eq(line, cmd);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>'%s/gnuplot.err'", gp, scratch);
	ck_assert_msg(system(cmd) == 0, "gnuplot failed on %s", gp);
	f = fopen(png, "rb");
	ck_assert_msg(f != NULL, "gnuplot %s drew no %s", gp, png);
	ck_assert_uint_eq(fread(magic, 1, 8, f), 8);
	fclose(f);
	ck_assert_msg(!memcmp(magic, "\x89PNG\r\n\x1a\n", 8), "%s is not a PNG", png);
	ck_assert_uint_eq(temporaries(), 0);
}

START_TEST(test_script_file)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "mpki:tlb.l1d.misses",
			       .by = "os.mode", .logx = true };
	struct err e = { 0 };
	char out[8192], gp[8192], line[4096], want[9000], msg[1024];
	bool named = false;
	FILE *f;

	script_and_draw(data("plot_sweep.csv"), &o, "lines",
			"-x tlb.l1d.4K.entries -y mpki:tlb.l1d.misses --by os.mode --logx "
			"--kind lines");
	script_and_draw(data("plot_modes.csv"), &(struct plot_opts){ .x = "input",
			.y = "cycles.total", .by = "os.mode", .title = "it's" }, "bars",
			"-x input -y cycles.total --by os.mode --kind bars --base base "
			"--title 'it'\\''s'");
	script_and_draw(data("plot_timeline.csv"), &(struct plot_opts){ 0 }, "timeline",
			"--kind timeline");

	/* -o and --script: both, the script drawing into -o's file */
	snprintf(out, sizeof(out), "%s/both.svg", scratch);
	snprintf(gp, sizeof(gp), "%s/both.gp", scratch);
	o.out = out;
	o.script = gp;
	if (plot_csv(data("plot_sweep.csv"), &o, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("plot_csv: %s", msg);
	}
	ck_assert_int_eq(access(out, F_OK), 0);
	f = fopen(gp, "r");
	ck_assert_ptr_nonnull(f);
	snprintf(want, sizeof(want), "set output '%s'\n", out);
	while (fgets(line, sizeof(line), f))
		named |= !strcmp(line, want);
	fclose(f);
	ck_assert_msg(named, "%s does not set output to %s", gp, out);

	/* a script that cannot be created: bad input, nothing drawn */
	snprintf(gp, sizeof(gp), "%s/no/such.gp", scratch);
	o.script = gp;
	unlink(out);
	ck_assert_int_eq(plot_csv(data("plot_sweep.csv"), &o, &e), -1);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: No such file or directory", gp);
	ck_assert_str_eq(msg, want);
	ck_assert_int_ne(access(out, F_OK), 0);
	ck_assert_uint_eq(temporaries(), 0);
}
END_TEST

/* --- errors ----------------------------------------------------------------- */

START_TEST(test_err_input)
{
	struct plot_opts o = { .x = "n", .y = "v" };
	char want[9000];

	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory",
		 in_scratch("none.csv"));
	expect_err(in_scratch("none.csv"), &o, want);

	snprintf(want, sizeof(want), "%s: empty CSV (no header row)", in_scratch("e.csv"));
	expect_err(write_csv("e.csv", ""), &o, want);
	expect_err(write_csv("e.csv", "\n  \n"), &o, want);

	snprintf(want, sizeof(want), "%s: no data rows (only a header)", in_scratch("h.csv"));
	expect_err(write_csv("h.csv", "n,v\n"), &o, want);

	snprintf(want, sizeof(want), "%s:3: 2 fields, the header has 3", in_scratch("f.csv"));
	expect_err(write_csv("f.csv", "n,v,w\n1,2,3\n4,5\n"), &o, want);
	snprintf(want, sizeof(want), "%s:2: 5 fields, the header has 3", in_scratch("f.csv"));
	expect_err(write_csv("f.csv", "n,v,w\n1,2,3,4,5\n"), &o, want);

	snprintf(want, sizeof(want), "%s:3:3: not a number: 'thp'", in_scratch("y.csv"));
	expect_err(write_csv("y.csv", "n,v\n1,2\n2,thp\n"), &o, want);
	snprintf(want, sizeof(want), "%s:2:4: not a number: ''", in_scratch("y.csv"));
	expect_err(write_csv("y.csv", "n,v\n1, \n"), &o, want);

	/* x must be numeric for lines */
	o.kind = "lines";
	snprintf(want, sizeof(want), "%s:3:1: not a number: 'big'", in_scratch("x.csv"));
	expect_err(write_csv("x.csv", "n,v\n1,2\nbig,3\n"), &o, want);
	o.kind = NULL;

	/* RFC 4180 quotes (a sweep quotes workload specs): malformed ones are errors */
	snprintf(want, sizeof(want), "%s:2: unterminated quoted field", in_scratch("q.csv"));
	expect_err(write_csv("q.csv", "n,v\n1,\"x\n"), &o, want);
	snprintf(want, sizeof(want), "%s:2:6: text after a quoted field", in_scratch("q.csv"));
	expect_err(write_csv("q.csv", "n,v\n1,\"2\"y\n"), &o, want);
	snprintf(want, sizeof(want), "%s:2: 3 fields, the header has 2", in_scratch("q.csv"));
	expect_err(write_csv("q.csv", "n,v\n1,2,\"x\"\n"), &o, want);
	{
		struct plot_opts qo = { .x = "input", .y = "v", .out = "q.png" };
		struct plot_table qt;

		prepare_ok(write_csv("q.csv", "input,v\n\"stream:size=1M,iterations=1\",2\n\"a \"\"b\"\"\",3\n"),
			   &qo, &qt);
		ck_assert_uint_eq(qt.ncat, 2);
		ck_assert_str_eq(qt.cat[0], "stream:size=1M,iterations=1");
		ck_assert_str_eq(qt.cat[1], "a \"b\"");
		plot_table_free(&qt);
	}

	snprintf(want, sizeof(want), "%s:1:3: duplicate column 'n'", in_scratch("d.csv"));
	expect_err(write_csv("d.csv", "n,n\n1,2\n"), &o, want);
	snprintf(want, sizeof(want), "%s:1:3: empty column name", in_scratch("d.csv"));
	expect_err(write_csv("d.csv", "n,,v\n1,2,3\n"), &o, want);

	snprintf(want, sizeof(want), "%s:2:2: NUL byte", in_scratch("z.csv"));
	{
		FILE *f = fopen(in_scratch("z.csv"), "w");

		fwrite("n,v\n1\0,2\n", 1, 9, f);
		fclose(f);
	}
	expect_err(in_scratch("z.csv"), &o, want);
}
END_TEST

START_TEST(test_err_columns)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "walk.cycle", .by = "os.mode" };
	char want[9000];

	snprintf(want, sizeof(want),
		 "%s: no column 'walk.cycle' (17 columns; closest: walk.cycles, walk.walks, "
		 "walk.cycles.ci95, walk.walks.ci95, os.mode)", data("plot_sweep.csv"));
	expect_err(data("plot_sweep.csv"), &o, want);
	o.y = "walk.cycles";
	o.by = "os.moed";
	snprintf(want, sizeof(want),
		 "%s: no column 'os.moed' (17 columns; closest: os.mode, point, walk.walks, "
		 "walk.cycles, cycles.total)", data("plot_sweep.csv"));
	expect_err(data("plot_sweep.csv"), &o, want);
	o.by = "os.mode";
	o.y = "mpki:walk.walk";
	snprintf(want, sizeof(want),
		 "%s: no column 'walk.walk' (17 columns; closest: walk.walks, walk.cycles, "
		 "walk.walks.ci95, walk.cycles.ci95, os.mode)", data("plot_sweep.csv"));
	expect_err(data("plot_sweep.csv"), &o, want);
	o.y = "walk.cycles/";
	expect_err(data("plot_sweep.csv"), &o,
		   "-y: 'walk.cycles/': expected COLUMN, A/B or mpki:COLUMN");
	/* mpki needs refs.instructions */
	o = (struct plot_opts){ .x = "n", .y = "mpki:v" };
	snprintf(want, sizeof(want),
		 "%s: no column 'refs.instructions' (2 columns; closest: n, v)",
		 in_scratch("m.csv"));
	expect_err(write_csv("m.csv", "n,v\n1,2\n"), &o, want);
	/* -x and -y are needed except on a timeline */
	o = (struct plot_opts){ .y = "v" };
	expect_err(in_scratch("m.csv"), &o,
		   "-x: no x column given (only a timeline CSV has a default)");
	o = (struct plot_opts){ .x = "n" };
	expect_err(in_scratch("m.csv"), &o,
		   "-y: no y column given (only a timeline CSV has a default)");
}
END_TEST

START_TEST(test_err_shape)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "walk.cycles" };
	struct plot_opts bars = { .x = "input", .y = "cycles.total", .by = "os.mode" };
	char want[9000];

	/* two modes per x and no --by */
	snprintf(want, sizeof(want),
		 "%s:3: duplicate point: line 2 also has tlb.l1d.4K.entries = 16",
		 data("plot_sweep.csv"));
	expect_err(data("plot_sweep.csv"), &o, want);
	snprintf(want, sizeof(want),
		 "%s:4: duplicate point: line 2 also has input = a, os.mode = base",
		 in_scratch("dup.csv"));
	expect_err(write_csv("dup.csv", "input,os.mode,cycles.total\na,base,1\na,thp,2\na,base,3\n"),
		   &bars, want);

	snprintf(want, sizeof(want),
		 "%s: no row has os.mode = base (its values: thp, huge; choose the baseline "
		 "with --base)", in_scratch("nb.csv"));
	expect_err(write_csv("nb.csv", "input,os.mode,cycles.total\na,thp,1\na,huge,2\n"), &bars,
		   want);
	snprintf(want, sizeof(want), "%s: no row with os.mode = base for input = b",
		 in_scratch("nb.csv"));
	expect_err(write_csv("nb.csv", "input,os.mode,cycles.total\na,base,1\na,thp,2\nb,thp,3\n"),
		   &bars, want);
	snprintf(want, sizeof(want), "%s: os.mode has no value but base to compare with it",
		 in_scratch("nb.csv"));
	expect_err(write_csv("nb.csv", "input,os.mode,cycles.total\na,base,1\nb,base,2\n"), &bars,
		   want);

	o = (struct plot_opts){ .x = "n", .y = "v", .logx = true };
	snprintf(want, sizeof(want), "%s:3:1: --logx needs x > 0: '0'", in_scratch("l.csv"));
	expect_err(write_csv("l.csv", "n,v\n1,1\n0,2\n"), &o, want);
	o = (struct plot_opts){ .x = "input", .y = "cycles.total", .by = "os.mode", .logx = true };
	expect_err(data("plot_pct.csv"), &o, "--logx: only for a numeric x axis (lines, timeline)");
	o = (struct plot_opts){ .x = "n", .y = "v", .base = "thp" };
	expect_err(in_scratch("l.csv"), &o,
		   "--base: only for --kind bars with --by (the column holding thp)");
	o = (struct plot_opts){ .x = "n", .y = "v", .kind = "pie" };
	expect_err(in_scratch("l.csv"), &o, "--kind: unknown kind 'pie' (lines, bars, timeline)");
	o = (struct plot_opts){ .x = "n", .y = "a/b" };
	snprintf(want, sizeof(want), "%s: nothing to plot: every y is undefined (zero divisor)",
		 in_scratch("zd.csv"));
	expect_err(write_csv("zd.csv", "n,a,b\n1,1,0\n"), &o, want);
}
END_TEST

START_TEST(test_err_caps)
{
	struct plot_opts o = { .x = "n", .y = "v", .by = "w" };
	char want[9000];
	FILE *f;

	/* 33 distinct --by values */
	f = fopen(in_scratch("by.csv"), "w");
	fprintf(f, "n,v,w\n");
	for (int i = 0; i < PLOT_MAX_SERIES + 1; i++)
		fprintf(f, "1,2,s%d\n", i);
	fclose(f);
	snprintf(want, sizeof(want), "%s:%d:5: --by w has more than %d distinct values",
		 in_scratch("by.csv"), PLOT_MAX_SERIES + 2, PLOT_MAX_SERIES);
	expect_err(in_scratch("by.csv"), &o, want);

	/* 101 bar clusters */
	f = fopen(in_scratch("cat.csv"), "w");
	fprintf(f, "n,v\n");
	for (int i = 0; i < PLOT_MAX_CATEGORIES + 1; i++)
		fprintf(f, "c%d,2\n", i);
	fclose(f);
	o.by = NULL;
	snprintf(want, sizeof(want),
		 "%s:%d:1: -x n has more than %d distinct values (too many bars; --kind lines "
		 "for a numeric x)", in_scratch("cat.csv"), PLOT_MAX_CATEGORIES + 2,
		 PLOT_MAX_CATEGORIES);
	expect_err(in_scratch("cat.csv"), &o, want);

	/* one row more than the cap */
	f = fopen(in_scratch("big.csv"), "w");
	fprintf(f, "n,v\n");
	for (int i = 0; i <= PLOT_MAX_ROWS; i++)
		fputs("1,1\n", f);
	fclose(f);
	snprintf(want, sizeof(want), "%s:%d: more than %d data rows", in_scratch("big.csv"),
		 PLOT_MAX_ROWS + 2, PLOT_MAX_ROWS);
	expect_err(in_scratch("big.csv"), &o, want);
}
END_TEST

/* Output errors: bad suffix, missing directory, gnuplot missing or failing; no file left. */
START_TEST(test_err_output)
{
	struct plot_opts o = { .x = "tlb.l1d.4K.entries", .y = "walk.cycles", .by = "os.mode" };
	struct err e = { 0 };
	char msg[1024], want[9000], fake[8300], *path;
	const char *csv = data("plot_sweep.csv");
	FILE *f;

	o.out = in_scratch("a.jpg");
	ck_assert_int_eq(plot_csv(csv, &o, &e), -1);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: plot output must end in .png, .svg or .pdf", o.out);
	ck_assert_str_eq(msg, want);

	o.out = NULL;
	ck_assert_int_eq(plot_csv(csv, &o, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "-o: no output file given (.png, .svg or .pdf)");

	o.out = in_scratch("no/such/dir.png");
	ck_assert_int_eq(plot_csv(csv, &o, &e), -1);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: No such file or directory", o.out);
	ck_assert_str_eq(msg, want);

	/* a bad CSV makes no image */
	o.out = in_scratch("x.png");
	ck_assert_int_eq(plot_csv(in_scratch("none.csv"), &o, &e), -1);
	ck_assert_int_eq(access(o.out, F_OK), -1);

	/* gnuplot failing: a stand-in that reports an error */
	snprintf(fake, sizeof(fake), "%s/gnuplot", scratch);
	f = fopen(fake, "w");
	fprintf(f, "#!/bin/sh\ncat >/dev/null\necho 'line 3: something broke' >&2\nexit 1\n");
	fclose(f);
	chmod(fake, 0755);
	path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", scratch, 1);	/* restored below (for CK_FORK=no) */
	ck_assert_int_eq(plot_csv(csv, &o, &e), -2);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "gnuplot: gnuplot failed (exit 1) rendering %s: "
		 "line 3: something broke", o.out);
	ck_assert_str_eq(msg, want);
	ck_assert_int_eq(access(o.out, F_OK), -1);
	ck_assert_uint_eq(temporaries(), 0);

	/* a gnuplot that exits 0 without drawing */
	f = fopen(fake, "w");
	fprintf(f, "#!/bin/sh\nexit 0\n");
	fclose(f);
	ck_assert_int_eq(plot_csv(csv, &o, &e), -2);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "gnuplot: gnuplot wrote nothing rendering %s", o.out);
	ck_assert_str_eq(msg, want);
	ck_assert_uint_eq(temporaries(), 0);

	/* no gnuplot at all */
	unlink(fake);
	ck_assert_int_eq(plot_csv(csv, &o, &e), -2);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg,
			 "gnuplot: cannot run gnuplot: No such file or directory (install gnuplot-nox)");
	ck_assert_int_eq(access(o.out, F_OK), -1);
	ck_assert_uint_eq(temporaries(), 0);
	setenv("PATH", path, 1);
	free(path);
}
END_TEST

/* The demo's plot_bars() keeps working. */
START_TEST(test_plot_bars_demo)
{
	struct err e = { 0 };
	char msg[1024];
	const char *out = in_scratch("demo.png");

	if (plot_bars("workload base hugetlbfs thp\nSTREAM 1.07 0.00 0.00\nGUPS 14.72 0.00 0.00\n",
		      "Address translation share of cycles", "translation cycles / total cycles (%)",
		      out, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("plot_bars: %s", msg);
	}
	ck_assert_int_eq(access(out, F_OK), 0);
	ck_assert_uint_eq(temporaries(), 0);
	ck_assert_int_eq(plot_bars("a b\nx 1\n", "t", "y", in_scratch("d.jpg"), &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_ptr_nonnull(strstr(msg, "d.jpg: plot output must end in .png, .svg or .pdf"));
}
END_TEST

static Suite *plot_suite(void)
{
	Suite *s = suite_create("plot");
	TCase *tc = tcase_create("plot");

	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_pct_change_exact);
	tcase_add_test(tc, test_pct_other_base);
	tcase_add_test(tc, test_bars_absolute);
	tcase_add_test(tc, test_lines_by_with_ci);
	tcase_add_test(tc, test_lines_sorted_one_series);
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_derived_metrics);
	tcase_add_test(tc, test_where_facet_size);
	tcase_add_test(tc, test_size_suffix_ticks);
	tcase_add_test(tc, test_timeline);
	tcase_add_test(tc, test_script);
	tcase_add_test(tc, test_render_lines);
	tcase_add_test(tc, test_render_bars);
	tcase_add_test(tc, test_render_timeline);
	tcase_add_test(tc, test_script_file);
	tcase_add_test(tc, test_err_input);
	tcase_add_test(tc, test_err_columns);
	tcase_add_test(tc, test_err_shape);
	tcase_add_test(tc, test_err_caps);
	tcase_add_test(tc, test_err_output);
	tcase_add_test(tc, test_plot_bars_demo);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(plot_suite());
}
