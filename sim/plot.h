/*
 * plot.h - gnuplot figures: the demo's clustered bars (plot_bars) and `mmusim plot`,
 * which draws a sweep or timeline CSV as lines, % change bars or a timeline.
 *
 * `mmusim plot` is three steps, each public so tests can check one without the next:
 * plot_prepare() reads the CSV into the struct plot_table that will be drawn (the
 * numbers, already scaled to the axis units), plot_write_script() turns a table into
 * a gnuplot script, plot_render() runs gnuplot on it. plot_csv() does all three;
 * plot_output() writes the script to a file (`plot --script`) and/or renders.
 */
#ifndef MMUSIM_PLOT_H
#define MMUSIM_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Sanity caps on the input: beyond them plot_prepare() fails with an error. */
#define PLOT_MAX_ROWS 1000000		/* data rows in a CSV */
#define PLOT_MAX_LINE (1u << 20)	/* bytes in one CSV line */
#define PLOT_MAX_SERIES 32		/* lines or bar colours (distinct --by values) */
#define PLOT_MAX_CATEGORIES 100		/* bar clusters (distinct x values) */

/*
 * Render a clustered bar chart with gnuplot: @data is a whitespace table whose
 * first row is "group series1 series2 ...", one row per cluster, drawn as `plot`
 * draws bars of absolute values (each bar labelled with its value, zero included).
 * @out ends in .png, .svg or .pdf. The image is written to a temporary name and
 * renamed. Returns 0, -1 with @e (bad suffix, unwritable directory) or -2 with @e
 * (a malformed table, gnuplot missing or failing), as plot_render().
 */
int plot_bars(const char *data, const char *title, const char *ylabel, const char *out,
	      struct err *e);

enum plot_kind {
	PLOT_AUTO,	/* timeline for a timeline CSV without -x, else lines if x is numeric, else bars */
	PLOT_LINES,	/* y against a numeric x, one line per --by value */
	PLOT_BARS,	/* per x value, one bar per --by value: % change against --base */
	PLOT_TIMELINE,	/* a `run --timeline` CSV: y (huge_coverage) against time_ms, per mode */
};

/*
 * What `mmusim plot` was asked for. Every field may be NULL/false:
 * @x:     the x column (NULL: time_ms, only for a timeline)
 * @y:     a column, "A/B" (the ratio of two columns) or "mpki:COL" (1000 * COL /
 *         refs.instructions); NULL: huge_coverage, only for a timeline; several,
 *         comma-separated, draw each (lines and timelines: a colour per --by value,
 *         a dash pattern per y)
 * @by:    one line (or bar colour) per distinct value of this column (NULL: one
 *         series; a timeline defaults to "mode")
 * @logx:  log2 x axis (lines and timeline; x must be > 0)
 * @logy:  log10 y axis (lines and timeline; y must be > 0)
 * @abs:   % change bars: a second panel beside them with the absolute values of
 *         every series, the base included
 * @kind:  "lines", "bars", "timeline", or NULL to choose from the data
 * @title: NULL: made from the names
 * @out:   the image; must end in .png, .svg or .pdf (NULL: none, only with @script)
 * @input: the input named in the title (NULL: the CSV's input column when it has
 *         one value; a path by its file name)
 * @base:  bars: the --by value the others are compared with (NULL: "base")
 * @script: also write the gnuplot script to this file ("-": standard output), the
 *         data inline, drawing into @out (NULL @out: the script's name less a
 *         ".gp" suffix, plus ".png")
 * @where: @nwhere selections "KEY=VALUE": only the rows whose KEY column holds
 *         VALUE (the same text, or the same number: "16M" is 16777216) are drawn;
 *         selections of one KEY are alternatives (any of them), of different keys
 *         all must hold
 * @facet: one panel per distinct value of this column (in order of first
 *         appearance, at most PLOT_MAX_PANELS), each drawn as the whole figure
 *         would be from its rows alone, in one image (gnuplot's multiplot)
 * @size:  the image's size, "WxH" with a unit "in", "cm" or "px" (none: px), e.g.
 *         "3.3x2.2in" (a paper column); inches are 140 px (PNG, SVG) as the
 *         default 1000x600 px is the PDF's 7.1x4.3 in (NULL: that default)
 * @font_size: the text's size in points (NULL: 11; bar labels 9/11 of it)
 * @warn:  where plot_prepare() tells what it leaves out (rows whose y is
 *         undefined, a zero divisor), one line each (NULL: nowhere)
 */
struct plot_opts {
	const char *x, *y, *by;
	bool logx, logy, abs;
	bool values; /* --values: bars of the values, a colour per --by value, no % change */
	const char *input;
	const char *kind;
	const char *title;
	const char *out;
	const char *base;
	const char *script;
	const char *const *where;
	unsigned nwhere;
	const char *facet;
	const char *size, *font_size;
	FILE *warn;
};

#define PLOT_MAX_PANELS 16	/* --facet values */
#define PLOT_MAX_WHERE_OPTS 32	/* --where selections */

/*
 * One line, or one bar colour. Lines and timeline: n points, x ascending, no two
 * with the same x. Bars: n == the table's ncat, x[i] == i, y[i] NAN where this
 * series has no row for category i (no bar drawn).
 */
struct plot_series {
	char *name;		/* the --by value; the y label when there is no --by */
	size_t n;
	double *x;
	double *y;		/* in the y axis unit (MiB, %, ...); bars with --by: % change */
	double *err;		/* 95% half-width in the same unit, or NULL (no .ci95 column) */
	double *abs;		/* % bars: the values before the % change (as in the CSV) */
	unsigned lc, dt;	/* several -y: colour and dash pattern (0: by position) */
};

/* The figure, as plot_prepare() leaves it; plot_table_free() releases it. */
struct plot_table {
	enum plot_kind kind;	/* never PLOT_AUTO */
	char *title, *xlabel, *ylabel;
	char *by;		/* the --by column's name, the key's title (NULL without --by) */
	bool logx, logy;
	bool abs;		/* % bars: absolute values beside them (plot_opts.abs) */
	bool x_bytes;		/* x is a size in bytes: ticks written "64K", "16M" */
	bool pct;		/* bars: y is a % change against the base (else absolute values) */
	size_t ncat;		/* bars: distinct x values, in order of first appearance */
	char **cat;
	size_t nxtics;		/* lines: x values written with size suffixes ("4K", "2M"): */
	double *xtic_at;	/* explicit ticks at those values, labelled as written */
	char **xtic_label;
	unsigned nseries;	/* series in order of first appearance of their --by value */
	struct plot_series *series;
	char *base_name;	/* % bars: the --base value, and its value per category */
	double *base_abs;
	struct plot_table *abs_panel;	/* --abs: the absolute values' bars, base first */
	unsigned width, height;	/* the image in pixels at 140 to the inch (0: 1000x600, --abs x1000) */
	double font;		/* the text's size in points (0: 11) */
	char *warning;		/* what was left out (rows whose y is undefined), or NULL */
	unsigned npanels;	/* --facet: the panels, each a table of its own (title: KEY = VALUE) */
	struct plot_table *panels;
};

/*
 * Read @csv_path (header row of column names, comma separated, one row per point;
 * no quoting; blank lines skipped) and build the table @o asks for into @t (zeroed
 * first). Units: a column ending in "bytes" is shown in MiB, one ending in
 * "coverage" in %; y values of a million or more in millions (the label says so).
 * Lines need one row per (x, --by value); bars one per (x, --by value) and a --base
 * row for every x. Returns 0, or -1 with @e naming file[:line[:col]] (missing file or
 * column, empty CSV, wrong field count, not a number, duplicate points, a missing
 * baseline, caps) or the option at fault (-x, -y, --kind, --logx, --base, --where,
 * --facet, --size, --font-size); on failure @t holds nothing to free. Rows whose
 * y is undefined (A/B or mpki: with a zero divisor) are left out and counted in
 * t->warning, which is also written to @o->warn.
 */
int plot_prepare(const char *csv_path, const struct plot_opts *o, struct plot_table *t,
		 struct err *e);

/*
 * The seed mail's table of a % bars table (kind bars with --by): one row per x
 * value, the base's value "( 0.00%)", then every other series' value and its %
 * change against the base, as Mel Gorman's THP benchmark mail prints them (but
 * the change is (y - base) / base: negative means fewer cycles, misses, ...).
 * Returns 0, or -1 if @t is not such a table.
 */
int plot_write_table(const struct plot_table *t, FILE *f);

/* Free what plot_prepare() allocated in @t (safe on a zeroed table). */
void plot_table_free(struct plot_table *t);

/* The format an image file's suffix names: "png", "svg" or "pdf"; NULL for another. */
const char *plot_format(const char *out);

/*
 * Write to @f the gnuplot script drawing @t into the file @output (quoted in the
 * script) in format @fmt (plot_format()): pngcairo, svg or pdfcairo; t->width x
 * t->height pixels, by default 1000x600 (the PDF page 7.1 x 4.3 inches, laid out
 * as the PNG, 140 pixels to the inch), text of t->font points (default 11).
 */
void plot_write_script(const struct plot_table *t, const char *output, const char *fmt, FILE *f);

/*
 * Draw @t into @out (.png, .svg or .pdf) with gnuplot, through a temporary file renamed
 * on success; on failure no file is left. Returns 0; -1 with @e for bad input (bad
 * suffix, a directory that cannot be written: exit 2 in main); -2 with @e when
 * gnuplot is missing or fails (its last message is quoted) or the system fails
 * (exit 1).
 */
int plot_render(const struct plot_table *t, const char *out, struct err *e);

/*
 * What @o asks for a prepared table @t of @csv_path: the script into @o->script
 * (if set; written first, whole or absent, so a gnuplot failure can be replayed
 * from it), then the image into @o->out (if set) as plot_render(). The script
 * opens with comments giving the `mmusim plot` command that makes it, and draws
 * with nothing but gnuplot (`gnuplot FILE`, from the directory the command ran
 * in: @o->out is named as given). Returns 0, -1 with @e (bad input: a bad -o
 * suffix, a script path that cannot be created) or -2 with @e (gnuplot, a write
 * error, the system).
 */
int plot_output(const struct plot_table *t, const char *csv_path, const struct plot_opts *o,
		struct err *e);

/*
 * plot_prepare() + plot_output() (@o->out, or @o->script, must be given; the
 * suffix of @o->out is checked first: no CSV is read for a bad one). Returns 0, -1
 * with @e (bad input) or -2 with @e (gnuplot or the system).
 */
int plot_csv(const char *csv_path, const struct plot_opts *o, struct err *e);

#endif
