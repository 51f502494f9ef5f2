/*
 * plot.c - figures drawn with gnuplot: the demo's clustered bars (plot_bars) and
 * `mmusim plot`, which turns a sweep CSV or a `run --timeline` CSV into lines, % change
 * bars or a timeline (PNG through the pngcairo terminal, SVG, or PDF through pdfcairo).
 *
 * `mmusim plot` runs in three steps. plot_prepare() streams the CSV once, checking
 * every row (field count, numbers where numbers are needed) but keeping only the
 * columns the figure uses, and builds the struct plot_table that will be drawn: the
 * series, scaled to their axis unit, sorted by x, with duplicates refused.
 * plot_write_script() writes a gnuplot script with the data inline ($heredoc blocks,
 * gnuplot >= 5.0). plot_render() feeds it to gnuplot on stdin, with the image going to
 * a temporary name that is renamed on success, so a failure leaves no file.
 *
 * The scripts are generated here rather than read from template files in plots/: a
 * template would have to be found relative to an install prefix or the source tree,
 * and the parts that vary (series, ticks, ranges, bar positions) would still be
 * generated. Bars are drawn `with boxes` at positions computed here (not gnuplot's
 * histogram style) so each bar can carry its value as a label, as the seed mail's
 * tables carry theirs.
 *
 * The % change is the conventional one, 100 * (y - y_base) / y_base, as in the
 * `run --modes` table. (The seed mail's tables, made with mmtests, divide by the new
 * value: SYSBENCH 1 thread, 19017.23 against 18629.91, is printed as 2.04%, where
 * this gives 2.08%; for its lower-is-better NAS times the sign is flipped too.)
 * A % change cannot be below -100 %, so a % axis stops there (labels of bars that
 * reach it go inside them); every bar carries its value, zero included.
 * Names and units: a report counter's come from the counter table (stats.c,
 * stats_counter_describe(): "L1 dTLB misses", bytes in MiB, ratios in %), swept keys
 * and timeline columns from axis_names[] below or their key's parts, anything else
 * from its suffix ("...bytes" in MiB, "...coverage" in %, "..._ms" in ms); the title
 * names the input (--input, or the CSV's single input). A y axis reaching a million is
 * shown in millions (billions), except a log one. Values written with a size suffix
 * ("4K", "2M": config keys) are numbers, and such an x axis is ticked at the values as
 * written; a workload size in bytes (workload.size) is ticked as a size too.
 *
 * Rows and panels: --where KEY=VALUE keeps the rows whose KEY holds VALUE (as text,
 * or as a number: "16M" is 16777216; one key's values are alternatives, different
 * keys all apply); --facet KEY prepares the figure once per value of KEY, as if
 * with --where KEY=VALUE, and draws the tables side by side (multiplot), which is
 * how a sweep's third dimension is drawn (sweep --plot). A y with a zero divisor
 * (A/B, mpki:) is undefined: its row is left out and counted in the table's
 * warning, which `plot` prints, so no point disappears unsaid. Size: --size in
 * pixels at 140 to the inch (the default 1000x600 px is the PDF's 7.1x4.3 in), so
 * one figure is laid out alike in PNG, SVG and PDF; the layout estimates scale
 * with it and with --font-size (margins are text: they grow with the font).
 *
 * Error bars: a column's .ci95 (the merge's), or, for a CSV with one row per
 * repetition (merge --reps), the 95% confidence half-width of the mean of each
 * repetition's y -- also a derived y (A/B, mpki:), whose CI is not the ratio of CIs.
 * Left out: error bars on % change bars, more than one --by key.
 *
 * Sources: gnuplot 5.4 manual (data blocks, `with yerrorlines`, `with boxes`,
 * `with labels`, `set logscale x 2`, `set multiplot layout`, the pngcairo, svg and
 * pdfcairo terminals, quoting: inside single quotes only '' is special, `.` joins
 * strings); the seed mail (Mel Gorman, "Re: Transparent
 * Hugepage Support #33", 2010) for the per-workload % change view.
 */
#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "outfile.h"
#include "plot.h"
#include "stats.h"
#include "util.h"

static bool ends_with(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);

	return n >= m && !strcmp(s + n - m, sfx);
}

static bool starts_with(const char *s, const char *pfx)
{
	return !strncmp(s, pfx, strlen(pfx));
}

/*
 * A gnuplot single-quoted string: only ' is special (doubled); control bytes become spaces,
 * but a newline (a title's second line) is joined in as "\n" (gnuplot's string concatenation).
 */
static void put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("''", f);
		else if (*s == '\n')
			fputs("'.\"\\n\".'", f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* --- running gnuplot ----------------------------------------------------- */

/* Write all of @buf to the socket @fd; false if gnuplot stopped reading (it failed). */
static bool send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL); /* no SIGPIPE if gnuplot exits early */

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* The last non-empty line gnuplot wrote to @f (its error), into @msg. */
static void last_line(FILE *f, char *msg, size_t n)
{
	char buf[4096];
	size_t len;
	char *end, *start;

	msg[0] = 0;
	if (fseek(f, 0, SEEK_END) || ftell(f) < 0)
		return;
	len = (size_t)ftell(f);
	if (len >= sizeof(buf))
		fseek(f, (long)(len - sizeof(buf) + 1), SEEK_SET);
	else
		rewind(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = 0;
	end = buf + len;
	while (end > buf && isspace((unsigned char)end[-1]))
		*--end = 0;
	start = end;
	while (start > buf && start[-1] != '\n')
		start--;
	len = strlen(start);
	if (len >= n)
		len = n - 1;
	memcpy(msg, start, len);
	msg[len] = 0;
}

/*
 * Run gnuplot on @script (its stdin is a socket, so a gnuplot that dies early costs
 * EPIPE, not SIGPIPE); its stdout is discarded, its stderr kept for the error. posix_spawn
 * rather than popen: no shell, thread-safe (a sweep may run threads), and a missing
 * gnuplot is reported as such.
 */
static int run_gnuplot(const char *script, size_t len, const char *out, struct err *e)
{
	char *argv[] = { "gnuplot", NULL };
	posix_spawn_file_actions_t fa;
	FILE *errf = tmpfile();
	char msg[300];
	int sv[2], rc, st = 0;
	pid_t pid;

	if (!errf) {
		err_set(e, "gnuplot", 0, 0, "cannot create a temporary file: %s", strerror(errno));
		return -2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		rc = errno;
		fclose(errf);
		err_set(e, "gnuplot", 0, 0, "socketpair: %s", strerror(rc));
		return -2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fileno(errf), 2);
	rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		fclose(errf);
		err_set(e, "gnuplot", 0, 0, "cannot run gnuplot: %s (install gnuplot-nox)",
			strerror(rc));
		return -2;
	}
	send_all(sv[0], script, len);
	close(sv[0]);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			st = -1;
			break;
		}
	}
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		last_line(errf, msg, sizeof(msg));
		fclose(errf);
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
			err_set(e, "gnuplot", 0, 0, "cannot run gnuplot (exit 127; install gnuplot-nox)");
		else
			err_set(e, "gnuplot", 0, 0, "gnuplot failed (exit %d) rendering %s%s%s",
				st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1, out,
				msg[0] ? ": " : "", msg);
		return -2;
	}
	fclose(errf);
	return 0;
}

/*
 * Render into @out through outfile.h: gnuplot writes a temporary next to it that is
 * renamed on success (or, for a device, FIFO or standard output, a private
 * temporary copied there). The temporary is created here first, so an unwritable
 * directory is reported as such (-1, bad input); gnuplot or the system failing is -2.
 */
const char *plot_format(const char *out)
{
	static const char *const fmts[] = { "png", "svg", "pdf" };
	const char *dot = strrchr(out, '.');

	for (size_t i = 0; dot && i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (!strcmp(dot + 1, fmts[i]))
			return fmts[i];
	return NULL;
}

static int render(const char *out,
		  void (*write)(const void *, const char *, const char *, FILE *),
		  const void *ctx, struct err *e)
{
	char *script = NULL;
	size_t len = 0;
	struct outfile of;
	struct stat sb;
	FILE *f;

	if (!plot_format(out))
		return err_set(e, out, 0, 0, "plot output must end in .png, .svg or .pdf");
	if (outfile_open(&of, out, OUTFILE_BY_PATH, e))
		return -1;
	f = open_memstream(&script, &len);
	if (!f) {
		outfile_abort(&of);
		err_host(e, out, 0, 0, "out of memory");
		return -2;
	}
	write(ctx, outfile_tool_path(&of), plot_format(out), f);
	if (fclose(f)) {
		free(script);
		outfile_abort(&of);
		err_host(e, out, 0, 0, "out of memory");
		return -2;
	}
	if (run_gnuplot(script, len, out, e)) {
		free(script);
		outfile_abort(&of);
		return -2;
	}
	free(script);
	if (stat(outfile_tool_path(&of), &sb) || sb.st_size == 0) {
		outfile_abort(&of);
		err_set(e, "gnuplot", 0, 0, "gnuplot wrote nothing rendering %s", out);
		return -2;
	}
	if (outfile_commit(&of, e))
		return -2;
	return 0;
}

/*
 * @enhanced: gnuplot's markup (_ ^ { } @ &) in labels; off for column names like rss_bytes.
 * The terminal follows @fmt (plot_format()): svg, pdf (pdfcairo, in gnuplot-nox: the page
 * @w x @h at 140 to the inch, 7.1 x 4.3 in for 1000 x 600, where its 11 pt text takes the
 * share of the page that pngcairo's takes of the PNG -- measured by rendering one figure
 * both ways (the PDF with ghostscript at 140 dpi): the same ticks, key and margins, so the
 * layout estimates below hold for both), else pngcairo.
 */
static void terminal(FILE *f, const char *output, const char *fmt, unsigned w, unsigned h,
		     double font, bool enhanced)
{
	const char *mode = enhanced ? "enhanced" : "noenhanced";

	if (!strcmp(fmt, "svg"))
		fprintf(f, "set terminal svg size %u,%u %s font 'Sans,%.3g' background rgb 'white'\n",
			w, h, mode, font);
	else if (!strcmp(fmt, "pdf"))
		fprintf(f, "set terminal pdfcairo size %.4gin,%.4gin %s font 'Sans,%.3g'\n",
			w / 140.0, h / 140.0, mode, font);
	else
		fprintf(f, "set terminal pngcairo size %u,%u %s font 'Sans,%.3g'\n", w, h, mode, font);
	fprintf(f, "set output ");
	put_quoted(f, output);
	fprintf(f, "\n");
}

/* --- reading the CSV ----------------------------------------------------- */

/* A CSV being streamed: the header, then one row at a time split in place. */
struct csv {
	const char *path;
	FILE *f;
	char *line;
	size_t cap;
	unsigned long lineno;
	unsigned ncols;
	char **names;		/* header, owned */
	char **field;		/* the current row's fields, pointing into line */
	unsigned long *col;	/* 1-based byte column of each field */
};

static int oom(struct err *e, const char *path)
{
	return err_host(e, path, 0, 0, "out of memory");
}

/*
 * Read the next non-blank line into c->line and split it at commas into c->field
 * (trimmed of spaces and tabs; RFC 4180 quotes allowed). Returns the number of fields,
 * 0 at end of file, -1 on error (an unterminated quote, a NUL byte, an overlong line).
 */
static int csv_next(struct csv *c, struct err *e)
{
	ssize_t n;
	char *p, *q;
	unsigned nf;

	for (;;) {
		n = getline(&c->line, &c->cap, c->f);
		if (n < 0) {
			if (ferror(c->f))
				return err_set(e, c->path, c->lineno + 1, 0, "read error: %s",
					       strerror(errno));
			return 0;
		}
		c->lineno++;
		if ((size_t)n > PLOT_MAX_LINE)
			return err_set(e, c->path, c->lineno, 0, "line longer than %u bytes",
				       PLOT_MAX_LINE);
		if (strlen(c->line) != (size_t)n)
			return err_set(e, c->path, c->lineno, strlen(c->line) + 1, "NUL byte");
		while (n && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
			c->line[--n] = 0;
		for (p = c->line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p)
			break;
	}
	/*
	 * Count the fields: commas outside RFC 4180 quotes (sweep CSVs quote a
	 * workload spec such as "stream:size=1M,iterations=1").
	 */
	nf = 1;
	{
		bool in_q = false;

		for (q = c->line; *q; q++) {
			if (*q == '"')
				in_q = !in_q;
			else if (*q == ',' && !in_q)
				nf++;
		}
		if (in_q)
			return err_set(e, c->path, c->lineno, 0, "unterminated quoted field");
	}
	if (c->ncols && nf != c->ncols)
		return err_set(e, c->path, c->lineno, 0, "%u field%s, the header has %u", nf,
			       nf == 1 ? "" : "s", c->ncols);
	if (!c->ncols) {
		c->field = calloc(nf, sizeof(*c->field));
		c->col = calloc(nf, sizeof(*c->col));
		if (!c->field || !c->col)
			return oom(e, c->path);
	}
	p = c->line;
	for (unsigned i = 0; i < nf; i++) {
		char *w, *end;

		while (*p == ' ' || *p == '\t')
			p++;
		c->col[i] = (unsigned long)(p - c->line) + 1;
		if (*p == '"') {
			/* a quoted field: "" is a quote; it ends at the closing quote */
			c->field[i] = w = ++p;
			for (;; p++) {
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p++;
				} else if (*p == '"') {
					break;
				} else {
					*w++ = *p;
				}
			}
			*w = 0;
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p && *p != ',')
				return err_set(e, c->path, c->lineno, (unsigned long)(p - c->line) + 1,
					       "text after a quoted field");
			p += *p == ',';
			continue;
		}
		end = strchr(p, ',');
		if (end)
			*end = 0;
		else
			end = p + strlen(p);
		c->field[i] = p;
		for (q = end; q > p && (q[-1] == ' ' || q[-1] == '\t');)
			*--q = 0;
		p = end + 1;
	}
	return (int)nf;
}

static int csv_open(struct csv *c, const char *path, struct err *e)
{
	int nf;

	memset(c, 0, sizeof(*c));
	c->path = path;
	c->f = fopen(path, "r");
	if (!c->f)
		return err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
	nf = csv_next(c, e);
	if (nf < 0)
		return -1;
	if (nf == 0)
		return err_set(e, path, 0, 0, "empty CSV (no header row)");
	c->names = calloc((size_t)nf, sizeof(*c->names));
	if (!c->names)
		return oom(e, path);
	for (int i = 0; i < nf; i++) {
		if (!c->field[i][0])
			return err_set(e, path, c->lineno, c->col[i], "empty column name");
		for (int j = 0; j < i; j++)
			if (!strcmp(c->names[j], c->field[i]))
				return err_set(e, path, c->lineno, c->col[i],
					       "duplicate column '%s'", c->field[i]);
		c->names[i] = strdup(c->field[i]);
		if (!c->names[i])
			return oom(e, path);
		c->ncols = (unsigned)i + 1;
	}
	return 0;
}

static void csv_close(struct csv *c)
{
	if (c->f)
		fclose(c->f);
	for (unsigned i = 0; i < c->ncols; i++)
		free(c->names[i]);
	free(c->names);
	free(c->field);
	free(c->col);
	free(c->line);
}

static int csv_find(const struct csv *c, const char *name)
{
	for (unsigned i = 0; i < c->ncols; i++)
		if (!strcmp(c->names[i], name))
			return (int)i;
	return -1;
}

#define NR_CLOSEST 5

/* The same text before the first dot ("tlb" in tlb.l1d.misses); false if @a has no dot. */
static bool same_group(const char *a, const char *b)
{
	const char *dot = strchr(a, '.');

	return dot && !strncmp(a, b, (size_t)(dot - a + 1));
}

/*
 * The index of column @name, or -1 with an error naming the file, the column and the
 * NR_CLOSEST closest names (same group first, then by edit distance, then header order).
 */
static int csv_need(const struct csv *c, const char *name, struct err *e)
{
	int i = csv_find(c, name), best[NR_CLOSEST];
	size_t bestd[NR_CLOSEST], len = 0;
	unsigned nb = 0;
	char list[400];

	if (i >= 0)
		return i;
	for (unsigned k = 0; k < c->ncols; k++) {
		/* names in the same group ("walk." for "walk.cycle") before the others */
		size_t d = edit_distance(name, c->names[k]) + (same_group(name, c->names[k]) ? 0 : 1000);
		unsigned at = nb < NR_CLOSEST ? nb++ : NR_CLOSEST;

		/* insertion sort into the best few; ties keep header order */
		while (at > 0 && bestd[at - 1] > d) {
			if (at < NR_CLOSEST) {
				best[at] = best[at - 1];
				bestd[at] = bestd[at - 1];
			}
			at--;
		}
		if (at < NR_CLOSEST) {
			best[at] = (int)k;
			bestd[at] = d;
		}
	}
	list[0] = 0;
	for (unsigned k = 0; k < nb && len < sizeof(list); k++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", k ? ", " : "",
					c->names[best[k]]);
	err_set(e, c->path, 0, 0, "no column '%s' (%u columns; closest: %s)", name, c->ncols,
		list);
	return -1;
}

/* A number as a sweep writes it: an integer or float, or a size with a K/M/G/T suffix. */
static int parse_num(const char *s, double *v, bool *sized)
{
	uint64_t u;

	*sized = false;
	if (!parse_double(s, v))
		return 0;
	if (!parse_size(s, &u)) {
		*v = (double)u;
		*sized = true;
		return 0;
	}
	return -1;
}

static int not_a_number(const struct csv *c, unsigned f, struct err *e)
{
	const char *s = c->field[f];

	return err_set(e, c->path, c->lineno, c->col[f], "not a number: '%.60s%s'", s,
		       strlen(s) > 60 ? "..." : "");
}

/* --- the table ----------------------------------------------------------- */

/*
 * How a column is shown: its human name, multiplied by @scale, labelled with @unit.
 * Report counters take their name and unit from the counter table (stats.c,
 * stats_counter_describe()); swept keys from axis_names[] below or their key's
 * parts ("tlb.l1d.4K.entries": "L1 dTLB 4K entries"); other columns (a timeline's)
 * from their suffix: "...bytes" in MiB, "...coverage" (a fraction) in %, "..._ms".
 */
struct unit {
	double scale;
	const char *unit;
	bool bytes;	/* a size in bytes shown as written (x ticks "64K", "16M") */
	char name[160];
};

/*
 * Swept keys that read better as words, and the columns of a `run --timeline` CSV
 * (sim.c, timeline_row()): a report counter's (@counter: its name and unit) or
 * their own. walks, walk_cycles, pgfault, thp_collapse_alloc and the *_misses columns
 * are counts: per interval in a timeline CSV (interval_count() adds the words
 * there), whole-run totals in a `run --vmas-csv` CSV.
 */
static const struct {
	const char *key, *counter, *name, *unit;
} axis_names[] = {
	{ "os.mode", NULL, "mode", NULL },
	{ "os.kernel", NULL, "kernel release", NULL },
	{ "os.fragmentation.unmovable", NULL, "share of pageblocks pinned by an unmovable page",
	  NULL },
	{ "os.thp.use_zero_page", NULL, "huge zero page", NULL },
	{ "os.thp.enabled", NULL, "THP enabled", NULL },
	{ "os.thp.defrag", NULL, "THP defrag", NULL },
	{ "os.thp_anon", NULL, "anonymous THP sizes (thp_anon=)", NULL },
	{ "tlb.coalesce", NULL, "TLB coalescing", NULL },
	{ "input", NULL, "input", NULL },
	{ "mode", NULL, "mode", NULL },
	{ "name", NULL, "mapping", NULL },	/* run --vmas-csv's */
	{ "time_ms", NULL, "simulated time", "ms" },
	{ "cycles", NULL, "simulated cycles", NULL },
	{ "rss_bytes", "memory.rss_bytes", NULL, NULL },
	{ "huge_bytes", "memory.huge_bytes", NULL, NULL },
	{ "huge_coverage", "memory.huge_coverage", NULL, NULL },
	{ "fragmentation_index_order9", "memory.fragmentation_index_order9", NULL, NULL },
	{ "walks", NULL, "page walks", NULL },
	{ "walk_cycles", NULL, "walk cycles", NULL },
	{ "pgfault", NULL, "page faults", NULL },
	{ "thp_collapse_alloc", NULL, "THP collapses", NULL },
	{ "itlb_misses", NULL, "L1 iTLB misses", NULL },
	{ "dtlb_misses", NULL, "L1 dTLB misses", NULL },
	{ "stlb_misses", NULL, "STLB misses", NULL },
};

/* A counter table unit as an axis unit (NULL: a count the name says): scaled by *@scale. */
static const char *counter_unit(const char *unit, const char *name, double *scale)
{
	if (!strcmp(unit, "bytes")) {
		*scale = 1.0 / (1 << 20);
		return "MiB";
	}
	if (!strcmp(unit, "ratio")) {
		*scale = 100.0;
		return "%";
	}
	if ((!strcmp(unit, "cycles") || !strcmp(unit, "pages")) && !ends_with(name, unit))
		return unit;
	return NULL;
}

static struct unit unit_of(const char *key)
{
	struct unit u = { 1.0, NULL, false, "" };
	const char *name, *cu;

	if (!stats_counter_describe(key, &name, &cu)) {
		snprintf(u.name, sizeof(u.name), "%s", name);
		u.unit = counter_unit(cu, name, &u.scale);
		return u;
	}
	for (size_t i = 0; i < sizeof(axis_names) / sizeof(axis_names[0]); i++)
		if (!strcmp(key, axis_names[i].key)) {
			if (axis_names[i].counter)
				return unit_of(axis_names[i].counter);
			snprintf(u.name, sizeof(u.name), "%s", axis_names[i].name);
			u.unit = axis_names[i].unit;
			return u;
		}
	if (starts_with(key, "workload.")) {
		/* workload.size, .stride: bytes (the sweep writes them as integers) */
		snprintf(u.name, sizeof(u.name), "workload %s", key + 9);
		u.bytes = !strcmp(key + 9, "size") || !strcmp(key + 9, "stride");
		u.unit = u.bytes ? "bytes" : NULL;
		return u;
	}
	if (starts_with(key, "tlb.") && strchr(key + 4, '.')) {
		/* a TLB geometry key: tlb.l1d.4K.entries, tlb.stlb.entries, tlb.stlb.1.ways */
		const char *side = key + 4, *rest = strchr(side, '.') + 1;
		const char *nm = starts_with(side, "l1d.") ? "L1 dTLB" :
				 starts_with(side, "l1i.") ? "L1 iTLB" :
				 starts_with(side, "stlb.") ? "STLB" : NULL;

		if (nm) {
			size_t n = (size_t)snprintf(u.name, sizeof(u.name), "%s %s", nm, rest);

			for (size_t i = strlen(nm); i < n && i < sizeof(u.name); i++)
				if (u.name[i] == '.')
					u.name[i] = ' ';
			return u;
		}
	}
	snprintf(u.name, sizeof(u.name), "%s", key);
	if (ends_with(key, "_ms")) {
		u.unit = "ms";
		u.name[strlen(key) - 3] = 0;
	} else if (ends_with(key, "_seconds")) {
		u.unit = "s";
		u.name[strlen(key) - 8] = 0;
	} else if (ends_with(key, "bytes")) {
		u.scale = 1.0 / (1 << 20), u.unit = "MiB";
		if (ends_with(key, "_bytes") && strlen(key) > 6)
			u.name[strlen(key) - 6] = 0;
	} else if (ends_with(key, "coverage")) {
		u.scale = 100.0, u.unit = "%";
	} else if (ends_with(key, "cycles") || starts_with(key, "cycles.")) {
		u.unit = "cycles";
	} else if (ends_with(key, "entries")) {
		u.unit = "entries";
	}
	return u;
}

/*
 * Whether column @key of a timeline CSV (@timeline) is a count per interval: the
 * timeline's rows give the state at the end of each interval (time, cycles so far,
 * memory, the buddy's free lists, fragmentation) and, in every other numeric
 * column, what happened during the interval (walks, faults, ...).
 */
static bool interval_count(const char *key, bool timeline)
{
	static const char *const state[] = { "mode", "time_ms", "cycles", "huge_coverage" };

	if (!timeline || starts_with(key, "free_order") || starts_with(key, "fragmentation_index") ||
	    starts_with(key, "run.") || ends_with(key, "_bytes"))
		return false;
	for (size_t i = 0; i < sizeof(state) / sizeof(state[0]); i++)
		if (!strcmp(key, state[i]))
			return false;
	return true;
}

/*
 * "memory.rss_bytes" -> "resident memory (MiB)"; @interval: a count per interval
 * ("page walks per interval"). NULL on allocation failure.
 */
static char *axis_label_of(const char *key, bool interval)
{
	struct unit u = unit_of(key);
	const char *iv = interval ? " per interval" : "";
	char *s;

	if (!u.unit)
		return asprintf(&s, "%s%s", u.name, iv) < 0 ? NULL : s;
	if (asprintf(&s, "%s%s (%s)", u.name, iv, u.unit) < 0)
		return NULL;
	return s;
}

static char *axis_label(const char *key)
{
	return axis_label_of(key, false);
}

/* The y expression: a column, NUM/DEN, or mpki:NUM (NUM / refs.instructions * 1000). */
struct yexpr {
	int num, den, ci;	/* column indexes; den, ci -1 when absent */
	double mul;		/* 1000 for mpki */
	double scale;		/* unit scale of a plain column */
	bool interval;		/* a plain column of counts per interval (interval_count()) */
};

static char *trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

static int resolve_y(const struct csv *c, const char *y, struct yexpr *ye, struct err *e)
{
	const char *slash = strchr(y, '/');
	char *a = NULL, *b = NULL, *ci;
	int rc = -1;

	ye->den = ye->ci = -1;
	ye->mul = ye->scale = 1.0;
	ye->interval = false;
	ye->num = csv_find(c, y);
	if (ye->num >= 0) {
		ye->scale = unit_of(y).scale;
		ye->interval = interval_count(y, csv_find(c, "time_ms") >= 0 && csv_find(c, "mode") >= 0);
		if (asprintf(&ci, "%s.ci95", y) < 0)
			return oom(e, c->path);
		ye->ci = csv_find(c, ci);
		free(ci);
		return 0;
	}
	if (starts_with(y, "mpki:")) {
		a = trimmed(y + 5, strlen(y + 5));
		b = strdup("refs.instructions");
		ye->mul = 1000.0;
	} else if (slash) {
		a = trimmed(y, (size_t)(slash - y));
		b = trimmed(slash + 1, strlen(slash + 1));
	} else {
		return csv_need(c, y, e) < 0 ? -1 : 0;
	}
	if (!a || !b) {
		oom(e, c->path);
		goto out;
	}
	if (!a[0] || !b[0]) {
		err_set(e, "-y", 0, 0, "'%s': expected COLUMN, A/B or mpki:COLUMN", y);
		goto out;
	}
	ye->num = csv_need(c, a, e);
	if (ye->num < 0)
		goto out;
	ye->den = csv_need(c, b, e);
	if (ye->den < 0)
		goto out;
	rc = 0;
out:
	free(a);
	free(b);
	return rc;
}

/* One data row, as much of it as the figure needs. */
struct prow {
	unsigned long line, xcol;
	char *x;		/* as written */
	double xv;		/* x as a number (lines, timeline) */
	unsigned by;		/* index of the --by value */
	double y, err;		/* y in its unit (NAN: undefined); err NAN when none */
};

struct rows {
	struct prow *r;
	size_t n, cap;
	char *by_val[PLOT_MAX_SERIES];	/* distinct --by values, in order of appearance */
	unsigned nby;
	bool all_numeric, sized;
	size_t first_bad;	/* first row whose x is not a number */
	char *input;		/* the input column's value when every row has the same */
	bool inputs;		/* the input column has several values */
	bool reps;		/* a rep column: one row per repetition (merge --reps) */
	size_t nread;		/* rows read (selected by --where), before repetitions are merged */
	size_t undefined;	/* of those, rows whose y is undefined (a zero divisor) */
	unsigned long undef_line[5];	/* the first few of them */
};

/* --where KEY=VALUE, resolved: the column and the value (pointing into the option). */
struct where {
	int col;
	const char *val;
};

#define PLOT_MAX_WHERE (PLOT_MAX_WHERE_OPTS + 1)	/* (and --facet's own) */

/* A field as --where VALUE names it: the same text, or the same number ("16M", 16777216). */
static bool where_match(const char *field, const char *val)
{
	double a, b;
	bool sized;

	return !strcmp(field, val) ||
	       (!parse_num(field, &a, &sized) && !parse_num(val, &b, &sized) && a == b);
}

/* Whether the current row of @c is selected: for each column, one of its values matches. */
static bool row_selected(const struct csv *c, const struct where *w, unsigned nw)
{
	for (unsigned i = 0; i < nw; i++) {
		bool any = false, seen = false;

		for (unsigned j = 0; j < i && !seen; j++)
			seen = w[j].col == w[i].col;
		if (seen)
			continue;	/* (its column's group was tested at its first selection) */
		for (unsigned j = i; j < nw && !any; j++)
			any = w[j].col == w[i].col && where_match(c->field[w[j].col], w[j].val);
		if (!any)
			return false;
	}
	return true;
}

/*
 * The selections @o->where into @w (the columns found in @c): 0 and their count in
 * *@nw, or -1 with @e (not KEY=VALUE, no such column, too many).
 */
static int resolve_where(const struct csv *c, const struct plot_opts *o, struct where *w,
			 unsigned *nw, struct err *e)
{
	*nw = 0;
	if (o->nwhere > PLOT_MAX_WHERE)
		return err_set(e, "--where", 0, 0, "more than %d selections", PLOT_MAX_WHERE);
	for (unsigned i = 0; i < o->nwhere; i++) {
		const char *eq = strchr(o->where[i], '=');
		char *key;

		if (!eq || eq == o->where[i])
			return err_set(e, "--where", 0, 0, "'%s': expected KEY=VALUE", o->where[i]);
		key = strndup(o->where[i], (size_t)(eq - o->where[i]));
		if (!key)
			return oom(e, c->path);
		w[i].col = csv_need(c, key, e);
		free(key);
		if (w[i].col < 0)
			return -1;
		w[i].val = eq + 1;
		(*nw)++;
	}
	return 0;
}

static void rows_free(struct rows *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i].x);
	free(rs->r);
	for (unsigned i = 0; i < rs->nby; i++)
		free(rs->by_val[i]);
	free(rs->input);
}

/* Read every row selected by @w, keeping x, the --by value and y. */
static int read_rows(struct csv *c, int xc, int byc, const char *by, const struct yexpr *ye,
		     const struct where *w, unsigned nw, struct rows *rs, struct err *e)
{
	int nf, ic = csv_find(c, "input");

	rs->reps = csv_find(c, "rep") >= 0 && csv_find(c, "point") >= 0;

	/* a kernel version (6.6, 6.12, 6.18) is a name, not a quantity: 6.12 < 6.6 */
	rs->all_numeric = strcmp(c->names[xc], "os.kernel") != 0;
	while ((nf = csv_next(c, e)) > 0) {
		struct prow *p;
		double num, den = 1.0;
		bool sized;
		unsigned b = 0;

		if (!row_selected(c, w, nw))
			continue;
		if (rs->n == PLOT_MAX_ROWS)
			return err_set(e, c->path, c->lineno, 0, "more than %u data rows",
				       PLOT_MAX_ROWS);
		if (rs->n == rs->cap) {
			size_t cap = rs->cap ? 2 * rs->cap : 64;
			struct prow *r = realloc(rs->r, cap * sizeof(*r));

			if (!r)
				return oom(e, c->path);
			rs->r = r;
			rs->cap = cap;
		}
		if (parse_num(c->field[ye->num], &num, &sized))
			return not_a_number(c, (unsigned)ye->num, e);
		if (ye->den >= 0 && parse_num(c->field[ye->den], &den, &sized))
			return not_a_number(c, (unsigned)ye->den, e);
		if (byc >= 0) {
			const char *v = c->field[byc];

			while (b < rs->nby && strcmp(rs->by_val[b], v))
				b++;
			if (b == rs->nby) {
				if (rs->nby == PLOT_MAX_SERIES)
					return err_set(e, c->path, c->lineno, c->col[byc],
						       "--by %s has more than %u distinct values",
						       by, PLOT_MAX_SERIES);
				rs->by_val[b] = strdup(v);
				if (!rs->by_val[b])
					return oom(e, c->path);
				rs->nby++;
			}
		}
		p = &rs->r[rs->n];
		memset(p, 0, sizeof(*p));
		p->line = c->lineno;
		p->xcol = c->col[xc];
		p->by = b;
		p->err = NAN;
		if (ye->den >= 0 && den == 0) {
			if (rs->undefined < sizeof(rs->undef_line) / sizeof(rs->undef_line[0]))
				rs->undef_line[rs->undefined] = c->lineno;
			rs->undefined++;
		}
		if (ye->den >= 0)
			p->y = den != 0 ? ye->mul * num / den : NAN;
		else
			p->y = num * ye->scale;
		if (ye->ci >= 0) {
			if (parse_num(c->field[ye->ci], &p->err, &sized))
				return not_a_number(c, (unsigned)ye->ci, e);
			p->err *= ye->scale;
		}
		p->x = strdup(c->field[xc]);
		if (!p->x)
			return oom(e, c->path);
		if (ic >= 0 && !rs->input && !(rs->input = strdup(c->field[ic])))
			return oom(e, c->path);
		if (ic >= 0 && strcmp(rs->input, c->field[ic]))
			rs->inputs = true;
		rs->n++;
		if (parse_num(p->x, &p->xv, &sized)) {
			if (rs->all_numeric)
				rs->first_bad = rs->n - 1;
			rs->all_numeric = false;
		}
		rs->sized |= sized;
	}
	if (nf < 0)
		return -1;
	if (!rs->n && nw)
		return err_set(e, c->path, 0, 0, "no data row is selected by --where");
	if (!rs->n)
		return err_set(e, c->path, 0, 0, "no data rows (only a header)");
	rs->nread = rs->n;
	return 0;
}

/*
 * The note on rows left out because y is undefined: "FILE: 2 of 8 rows left out:
 * A/B is undefined where B is 0 (lines 3, 7)". NULL when none was, or out of memory.
 */
static char *undefined_note(const char *path, const char *y, const struct csv *c,
			    const struct yexpr *ye, const struct rows *rs)
{
	size_t shown = rs->undefined < 5 ? rs->undefined : 5, len = 0;
	char lines[80], *s;

	if (!rs->undefined)
		return NULL;
	lines[0] = 0;
	for (size_t i = 0; i < shown; i++)
		len += (size_t)snprintf(lines + len, sizeof(lines) - len, "%s%lu", i ? ", " : "",
					rs->undef_line[i]);
	if (asprintf(&s, "%s: %zu of %zu %s left out: %s is undefined where %s is 0 (line%s %s%s)",
		     path, rs->undefined, rs->nread, rs->reps ? "repetitions" : "rows", y,
		     c->names[ye->den], shown > 1 ? "s" : "", lines,
		     rs->undefined > shown ? ", ..." : "") < 0)
		return NULL;
	return s;
}

static int cmp_rep_group(const void *a, const void *b)
{
	const struct prow *p = a, *q = b;
	int c = p->by != q->by ? (p->by < q->by ? -1 : 1) : strcmp(p->x, q->x);

	return c ? c : p->line < q->line ? -1 : p->line > q->line;
}

static int cmp_row_line(const void *a, const void *b)
{
	const struct prow *p = a, *q = b;

	return p->line < q->line ? -1 : p->line > q->line;
}

/*
 * A CSV with a rep column (merge --reps, a sweep's OUT.reps.csv): the rows of one
 * point (one x and --by value) become one, at the first one's place, holding the mean
 * of their y -- computed per repetition, so a ratio or MPKI is each repetition's own --
 * and as its error bar the 95% confidence half-width of that mean, t(0.975, n - 1) *
 * s / sqrt(n) (Student's t, GSL; s the sample standard deviation), as the merge's
 * .ci95 columns give for the reported numbers. A repetition whose y is undefined (a
 * zero divisor) is left out; a point with one repetition gets no bar.
 */
static int aggregate_reps(struct rows *rs, const char *path, struct err *e)
{
	double *v = malloc((rs->n ? rs->n : 1) * sizeof(*v));
	size_t out = 0;

	if (!v)
		return oom(e, path);
	qsort(rs->r, rs->n, sizeof(*rs->r), cmp_rep_group);
	for (size_t i = 0, j; i < rs->n; i = j) {
		size_t n = 0;

		for (j = i; j < rs->n && rs->r[j].by == rs->r[i].by && !strcmp(rs->r[j].x, rs->r[i].x);
		     j++)
			if (!isnan(rs->r[j].y))
				v[n++] = rs->r[j].y;
		for (size_t k = i + 1; k < j; k++)
			free(rs->r[k].x);
		rs->r[out] = rs->r[i];
		rs->r[out].y = n ? gsl_stats_mean(v, 1, n) : NAN;
		rs->r[out].err = n > 1 ? gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) *
					 gsl_stats_sd(v, 1, n) / sqrt((double)n) : 0.0;
		out++;
	}
	rs->n = out;
	qsort(rs->r, rs->n, sizeof(*rs->r), cmp_row_line);
	free(v);
	for (size_t i = 0; !rs->all_numeric && i < rs->n; i++) {
		double d;
		bool sized;

		if (parse_num(rs->r[i].x, &d, &sized)) {
			rs->first_bad = i;	/* (the index moved) */
			break;
		}
	}
	return 0;
}

void plot_table_free(struct plot_table *t)
{
	free(t->title);
	free(t->by);
	free(t->xlabel);
	free(t->ylabel);
	for (size_t i = 0; i < t->ncat; i++)
		free(t->cat[i]);
	free(t->cat);
	for (size_t i = 0; i < t->nxtics; i++)
		free(t->xtic_label[i]);
	free(t->xtic_at);
	free(t->xtic_label);
	for (unsigned i = 0; i < t->nseries; i++) {
		free(t->series[i].name);
		free(t->series[i].x);
		free(t->series[i].y);
		free(t->series[i].err);
		free(t->series[i].abs);
	}
	free(t->series);
	free(t->base_name);
	free(t->base_abs);
	if (t->abs_panel) {
		plot_table_free(t->abs_panel);
		free(t->abs_panel);
	}
	free(t->warning);
	for (unsigned i = 0; i < t->npanels; i++)
		plot_table_free(&t->panels[i]);
	free(t->panels);
	memset(t, 0, sizeof(*t));
}

/* A value as the mail prints it: two decimals, or an integer when it is one. */
static void table_num(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, " %14s", "-");
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, " %14.0f", v);
	else
		fprintf(f, " %14.2f", v);
}

int plot_write_table(const struct plot_table *t, FILE *f)
{
	size_t w = strlen(t->xlabel ? t->xlabel : "");

	if (t->npanels) {	/* --facet: each panel's, under its title */
		for (unsigned i = 0; i < t->npanels; i++) {
			if (t->panels[i].kind != PLOT_BARS || !t->panels[i].pct)
				return -1;
			fprintf(f, "%s%s\n", i ? "\n" : "", t->panels[i].title);
			plot_write_table(&t->panels[i], f);
		}
		return 0;
	}
	if (t->kind != PLOT_BARS || !t->pct || !t->base_abs)
		return -1;
	for (size_t k = 0; k < t->ncat; k++)
		if (strlen(t->cat[k]) > w)
			w = strlen(t->cat[k]);
	fprintf(f, "%s\n%-*s %24s", t->ylabel ? t->ylabel : "", (int)w, t->xlabel ? t->xlabel : "",
		t->base_name);
	for (unsigned s = 0; s < t->nseries; s++)
		fprintf(f, " %24s", t->series[s].name);
	fputc('\n', f);
	for (size_t k = 0; k < t->ncat; k++) {
		fprintf(f, "%-*s", (int)w, t->cat[k]);
		table_num(f, t->base_abs[k]);
		fprintf(f, " (%6.2f%%)", 0.0);
		for (unsigned s = 0; s < t->nseries; s++) {
			table_num(f, t->series[s].abs[k]);
			if (isnan(t->series[s].y[k]))
				fprintf(f, " (%7s)", "-");
			else
				fprintf(f, " (%6.2f%%)", t->series[s].y[k]);
		}
		fputc('\n', f);
	}
	return 0;
}

static int series_alloc(struct plot_series *s, size_t n, bool err)
{
	s->x = calloc(n ? n : 1, sizeof(double));
	s->y = calloc(n ? n : 1, sizeof(double));
	if (err)
		s->err = calloc(n ? n : 1, sizeof(double));
	return !s->x || !s->y || (err && !s->err) ? -1 : 0;
}

static int cmp_row_x(const void *a, const void *b)
{
	const struct prow *p = *(const struct prow *const *)a, *q = *(const struct prow *const *)b;

	if (p->xv != q->xv)
		return p->xv < q->xv ? -1 : 1;
	return p->line < q->line ? -1 : p->line > q->line;
}

struct names {
	const char *path, *x, *y, *by;	/* by NULL: no --by */
};

static int duplicate(const struct names *nm, const struct rows *rs, const struct prow *first,
		     const struct prow *second, struct err *e)
{
	if (!nm->by)
		return err_set(e, nm->path, second->line, 0,
			       "duplicate point: line %lu also has %s = %s", first->line, nm->x,
			       second->x);
	return err_set(e, nm->path, second->line, 0,
		       "duplicate point: line %lu also has %s = %s, %s = %s", first->line, nm->x,
		       second->x, nm->by, rs->by_val[second->by]);
}

/* A byte count as a size: "64K", "16M", "1G" when it is a whole number of them. */
static char *size_text(double v)
{
	static const char sfx[] = "KMGT";
	char *s;
	int i = -1;

	while (i < 3 && v >= 1024 && fmod(v, 1024) == 0) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		return asprintf(&s, "%.10g", v) < 0 ? NULL : s;
	return asprintf(&s, "%.10g%c", v, sfx[i]) < 0 ? NULL : s;
}

/* Lines and timeline: per --by value, the points sorted by x; NAN points dropped. */
static int build_lines(struct plot_table *t, const struct names *nm, struct rows *rs,
		       bool has_err, struct err *e)
{
	struct prow **ord = malloc(rs->n * sizeof(*ord));
	size_t total = 0;
	int rc = -1;

	if (!ord)
		return oom(e, nm->path);
	for (size_t i = 0; i < rs->n; i++) {
		ord[i] = &rs->r[i];
		if (t->logx && !(rs->r[i].xv > 0)) {
			err_set(e, nm->path, rs->r[i].line, rs->r[i].xcol,
				"--logx needs x > 0: '%s'", rs->r[i].x);
			goto out;
		}
		if (t->logy && !isnan(rs->r[i].y) && !(rs->r[i].y > 0)) {
			err_set(e, nm->path, rs->r[i].line, 0, "--logy needs y > 0: %s is %.10g",
				nm->y, rs->r[i].y);
			goto out;
		}
	}
	qsort(ord, rs->n, sizeof(*ord), cmp_row_x);
	for (unsigned s = 0; s < t->nseries; s++) {
		struct plot_series *ps = &t->series[s];
		const struct prow *prev = NULL;

		if (series_alloc(ps, rs->n, has_err)) {
			oom(e, nm->path);
			goto out;
		}
		for (size_t i = 0; i < rs->n; i++) {
			const struct prow *p = ord[i];

			if (p->by != s)
				continue;
			if (prev && prev->xv == p->xv) {
				duplicate(nm, rs, prev, p, e);
				goto out;
			}
			prev = p;
			if (isnan(p->y))
				continue;
			ps->x[ps->n] = p->xv;
			ps->y[ps->n] = p->y;
			if (has_err)
				ps->err[ps->n] = p->err;
			ps->n++;
		}
		total += ps->n;
	}
	if (!total) {
		err_set(e, nm->path, 0, 0, "nothing to plot: every y is undefined (zero divisor)");
		goto out;
	}
	/* sizes written with suffixes (or in bytes): ticks at the values, labelled as sizes */
	if (rs->sized || t->x_bytes) {
		size_t nd = 0;

		for (size_t i = 0; i < rs->n; i++)
			if (!i || ord[i]->xv != ord[i - 1]->xv)
				nd++;
		if (nd <= 32) {
			t->xtic_at = calloc(nd, sizeof(double));
			t->xtic_label = calloc(nd, sizeof(char *));
			if (!t->xtic_at || !t->xtic_label) {
				oom(e, nm->path);
				goto out;
			}
			for (size_t i = 0; i < rs->n; i++) {
				if (i && ord[i]->xv == ord[i - 1]->xv)
					continue;
				t->xtic_at[t->nxtics] = ord[i]->xv;
				t->xtic_label[t->nxtics] = rs->sized ? strdup(ord[i]->x)
								     : size_text(ord[i]->xv);
				if (!t->xtic_label[t->nxtics++]) {
					oom(e, nm->path);
					goto out;
				}
			}
		}
	}
	rc = 0;
out:
	free(ord);
	return rc;
}

/* Bars: clusters per distinct x (first appearance), one bar per --by value. */
/*
 * --base: the index of the baseline's --by value into *@b0; every category must
 * have a row under it. 0, or -1 with @e.
 */
static int find_base(const struct plot_table *t, const struct names *nm, const struct rows *rs,
		     const struct prow **cell, unsigned nby, const char *base, unsigned *b0,
		     struct err *e)
{
	unsigned b = 0;

	while (b < rs->nby && strcmp(rs->by_val[b], base))
		b++;
	if (b == rs->nby) {
		char list[300];
		size_t len = 0;

		list[0] = 0;
		for (unsigned k = 0; k < rs->nby && len < sizeof(list); k++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", k ? ", " : "",
						rs->by_val[k]);
		return err_set(e, nm->path, 0, 0, "no row has %s = %s (its values: %s; "
			       "choose the baseline with --base)", nm->by, base, list);
	}
	if (rs->nby == 1)
		return err_set(e, nm->path, 0, 0, "%s has no value but %s to compare with it", nm->by,
			       base);
	for (size_t k = 0; k < t->ncat; k++)
		if (!cell[k * nby + b])
			return err_set(e, nm->path, 0, 0, "no row with %s = %s for %s = %s", nm->by, base,
				       nm->x, t->cat[k]);
	*b0 = b;
	return 0;
}

static int build_bars(struct plot_table *t, const struct names *nm, struct rows *rs,
		      const char *base, struct err *e)
{
	size_t *cat_of = malloc(rs->n * sizeof(*cat_of));
	const struct prow **cell = NULL;	/* [cat][by]: the row, or NULL */
	const char *cat_key[PLOT_MAX_CATEGORIES];	/* each category's x as written */
	unsigned nby = nm->by ? rs->nby : 1, b0 = 0, s;
	int rc = -1;

	if (!cat_of)
		return oom(e, nm->path);
	t->cat = calloc(PLOT_MAX_CATEGORIES, sizeof(*t->cat));
	if (!t->cat) {
		oom(e, nm->path);
		goto out;
	}
	for (size_t i = 0; i < rs->n; i++) {
		size_t k = 0;

		while (k < t->ncat && strcmp(cat_key[k], rs->r[i].x))
			k++;
		if (k == t->ncat) {
			if (t->ncat == PLOT_MAX_CATEGORIES) {
				err_set(e, nm->path, rs->r[i].line, rs->r[i].xcol,
					"-x %s has more than %u distinct values (too many bars; "
					"--kind lines for a numeric x)", nm->x, PLOT_MAX_CATEGORIES);
				goto out;
			}
			cat_key[k] = rs->r[i].x;
			/* a size in bytes by its size ("16M"), else as written */
			t->cat[k] = t->x_bytes && !parse_double(rs->r[i].x, &rs->r[i].xv)
					    ? size_text(rs->r[i].xv) : strdup(rs->r[i].x);
			if (!t->cat[t->ncat++]) {
				oom(e, nm->path);
				goto out;
			}
		}
		cat_of[i] = k;
	}
	cell = calloc(t->ncat * nby, sizeof(*cell));
	if (!cell) {
		oom(e, nm->path);
		goto out;
	}
	for (size_t i = 0; i < rs->n; i++) {
		const struct prow **c = &cell[cat_of[i] * nby + rs->r[i].by];

		if (*c) {
			duplicate(nm, rs, *c, &rs->r[i], e);
			goto out;
		}
		*c = &rs->r[i];
	}
	if (t->pct && find_base(t, nm, rs, cell, nby, base, &b0, e))
		goto out;
	for (unsigned b = 0; b < nby; b++) {
		struct plot_series *ps;

		if (t->pct && b == b0)
			continue;
		ps = &t->series[t->nseries];
		ps->name = strdup(nm->by ? rs->by_val[b] : nm->y);
		t->nseries++;
		if (!ps->name || series_alloc(ps, t->ncat, false)) {
			oom(e, nm->path);
			goto out;
		}
		ps->n = t->ncat;
		if (t->pct && !(ps->abs = malloc(t->ncat * sizeof(*ps->abs)))) {
			oom(e, nm->path);
			goto out;
		}
		for (size_t k = 0; k < t->ncat; k++) {
			const struct prow *p = cell[k * nby + b];
			double v = p ? p->y : NAN;

			if (t->pct)
				ps->abs[k] = v;
			if (t->pct && !isnan(v)) {
				double yb = cell[k * nby + b0]->y;

				v = yb != 0 && !isnan(yb) ? 100.0 * (v - yb) / yb : NAN;
			}
			ps->x[k] = (double)k;
			ps->y[k] = v;
		}
	}
	if (t->pct) {
		t->base_name = strdup(rs->by_val[b0]);
		t->base_abs = malloc(t->ncat * sizeof(*t->base_abs));
		if (!t->base_name || !t->base_abs) {
			oom(e, nm->path);
			goto out;
		}
		for (size_t k = 0; k < t->ncat; k++)
			t->base_abs[k] = cell[k * nby + b0]->y;
	}
	for (s = 0; s < t->nseries; s++)
		for (size_t k = 0; k < t->ncat; k++)
			if (!isnan(t->series[s].y[k]))
				rc = 0;
	if (rc)
		err_set(e, nm->path, 0, 0, "nothing to plot: every bar is undefined (zero divisor)");
out:
	free(cell);
	free(cat_of);
	return rc;
}

/*
 * Counts of a million or more are shown in millions (billions), "walk.cycles (million
 * cycles)", rather than as gnuplot's 5.5e+07. Returns -1 on allocation failure.
 */
static int scale_counts(struct plot_table *t)
{
	double max = 0, f;
	const char *word, *paren;
	char *s;
	int rc;

	for (unsigned i = 0; i < t->nseries; i++)
		for (size_t k = 0; k < t->series[i].n; k++) {
			double v = fabs(t->series[i].y[k]);

			if (t->series[i].err && !isnan(t->series[i].err[k]))
				v += fabs(t->series[i].err[k]);
			if (v > max)
				max = v;
		}
	if (max >= 1e9)
		f = 1e-9, word = "billion";
	else if (max >= 1e6)
		f = 1e-6, word = "million";
	else
		return 0;
	for (unsigned i = 0; i < t->nseries; i++)
		for (size_t k = 0; k < t->series[i].n; k++) {
			t->series[i].y[k] *= f;
			if (t->series[i].err)
				t->series[i].err[k] *= f;
		}
	paren = ends_with(t->ylabel, ")") ? strrchr(t->ylabel, '(') : NULL;
	if (paren)
		rc = asprintf(&s, "%.*s(%s %s", (int)(paren - t->ylabel), t->ylabel, word, paren + 1);
	else
		rc = asprintf(&s, "%s (%ss)", t->ylabel, word);
	if (rc < 0)
		return -1;
	free(t->ylabel);
	t->ylabel = s;
	return 0;
}

static int parse_kind(const char *k, enum plot_kind *kind, struct err *e)
{
	if (!k)
		*kind = PLOT_AUTO;
	else if (!strcmp(k, "lines"))
		*kind = PLOT_LINES;
	else if (!strcmp(k, "bars"))
		*kind = PLOT_BARS;
	else if (!strcmp(k, "timeline"))
		*kind = PLOT_TIMELINE;
	else
		return err_set(e, "--kind", 0, 0, "unknown kind '%s' (lines, bars, timeline)", k);
	return 0;
}

/*
 * --size WxH[in|cm|px] and --font-size PT into t->width, t->height (pixels at 140
 * to the inch, the scale of the default PDF page) and t->font; left 0 (the
 * defaults) when not given. 0, or -1 with @e naming the option.
 */
#define PLOT_PX_PER_IN 140.0
#define PLOT_MIN_PX 70.0	/* 0.5 in */
#define PLOT_MAX_PX 7000.0	/* 50 in */
#define PLOT_MIN_FONT 4.0
#define PLOT_MAX_FONT 72.0

static int figure_size(const struct plot_opts *o, struct plot_table *t, struct err *e)
{
	if (o->size) {
		const char *p = o->size;
		char *end;
		double w, h, per = 1.0;

		w = strtod(p, &end);
		if (end == p || (*end != 'x' && *end != 'X'))
			goto bad_size;
		p = end + 1;
		h = strtod(p, &end);
		if (end == p || *p == '-' || *p == '+' || isspace((unsigned char)*p))
			goto bad_size;
		if (!strcmp(end, "in"))
			per = PLOT_PX_PER_IN;
		else if (!strcmp(end, "cm"))
			per = PLOT_PX_PER_IN / 2.54;
		else if (*end && strcmp(end, "px"))
			goto bad_size;
		w *= per;
		h *= per;
		if (!(w >= PLOT_MIN_PX && w <= PLOT_MAX_PX && h >= PLOT_MIN_PX && h <= PLOT_MAX_PX))
			return err_set(e, "--size", 0, 0, "'%s': each side from 0.5 in (70 px) to 50 in "
				       "(7000 px)", o->size);
		t->width = (unsigned)lround(w);
		t->height = (unsigned)lround(h);
	}
	if (o->font_size) {
		double pt;

		if (parse_double(o->font_size, &pt) || !(pt >= PLOT_MIN_FONT && pt <= PLOT_MAX_FONT))
			return err_set(e, "--font-size", 0, 0, "'%s': expected points, %g to %g",
				       o->font_size, PLOT_MIN_FONT, PLOT_MAX_FONT);
		t->font = pt;
	}
	return 0;
bad_size:
	return err_set(e, "--size", 0, 0, "'%s': expected WxH with a unit in, cm or px (3.3x2.2in)",
		       o->size);
}

/* The y quantity's name: a column's, "A / B", or "A per 1000 instructions". */
static char *y_name(const char *y, const struct yexpr *ye)
{
	const char *slash = strchr(y, '/');
	char *s = NULL, *a, *b;
	int rc;

	if (ye->den < 0)
		return asprintf(&s, "%s%s", unit_of(y).name, ye->interval ? " per interval" : "") < 0
			       ? NULL : s;
	if (ye->mul != 1.0) {
		a = trimmed(y + 5, strlen(y + 5));
		rc = a ? asprintf(&s, "%s per 1000 instructions", unit_of(a).name) : -1;
		free(a);
		return rc < 0 ? NULL : s;
	}
	a = trimmed(y, (size_t)(slash - y));
	b = trimmed(slash + 1, strlen(slash + 1));
	rc = a && b ? asprintf(&s, "%s / %s", unit_of(a).name, unit_of(b).name) : -1;
	free(a);
	free(b);
	return rc < 0 ? NULL : s;
}

/*
 * The characters of a title line: 90 of 11 pt Sans across the 1000 px figure, less
 * room; as many as fit the --size and --font-size (layout estimates below).
 */
static size_t title_chars(const struct plot_table *t)
{
	double w = t->width ? t->width : 1000.0, f = t->font ? t->font / 11.0 : 1.0;

	return (size_t)((w - 235.0 * f) / (8.5 * f));
}

static char *default_title(const struct plot_table *t, const char *x, const char *yname,
			   const char *by, const char *base, const char *input)
{
	char *s = NULL, *on = NULL;
	const char *xn, *bn;
	struct unit ux = unit_of(x), ub = unit_of(by ? by : "");
	int rc;

	xn = ux.name;
	bn = ub.name;
	/* the input on a line of its own when the title would not fit the width in one */
	if (input && asprintf(&on, "%son %s", strlen(yname) + strlen(xn) + strlen(bn) +
			      strlen(input) > title_chars(t) ? "\n" : " ", input) < 0)
		return NULL;
	if (t->kind == PLOT_BARS && t->pct)
		rc = asprintf(&s, "%s: %% change against %s = %s, per %s%s", yname, bn, base, xn,
			      on ? on : "");
	else if (t->kind == PLOT_BARS)
		rc = asprintf(&s, "%s per %s%s", yname, xn, on ? on : "");
	else if (t->kind == PLOT_TIMELINE && !strcmp(x, "time_ms"))
		rc = asprintf(&s, "%s over time%s%s%s", yname, by ? " by " : "", by ? bn : "",
			      on ? on : "");
	else
		rc = asprintf(&s, "%s vs %s%s%s%s", yname, xn, by ? " by " : "", by ? bn : "",
			      on ? on : "");
	free(on);
	return rc < 0 ? NULL : s;
}

static char *y_label(const char *y, const struct yexpr *ye)
{
	char *s = NULL, *n;
	int rc;

	if (ye->den < 0)
		return axis_label_of(y, ye->interval);
	n = y_name(y, ye);
	if (!n)
		return NULL;
	rc = ye->mul != 1.0 ? asprintf(&s, "%s (MPKI)", n) : asprintf(&s, "%s", n);
	free(n);
	return rc < 0 ? NULL : s;
}

static int scale_counts(struct plot_table *t);

/*
 * --abs: @t's absolute values as bars of their own (the base's series first, in
 * colour 1, so each series keeps its colour in both panels), counts scaled as a
 * plain figure's; @vlabel the value axis's label. -1 when out of memory.
 */
static int make_abs_panel(struct plot_table *t, const char *vlabel)
{
	struct plot_table *a = calloc(1, sizeof(*a));

	if (!a)
		return -1;
	t->abs_panel = a;
	a->kind = PLOT_BARS;
	a->ylabel = strdup(vlabel);
	a->title = strdup("");
	a->cat = calloc(t->ncat, sizeof(*a->cat));
	a->series = calloc(t->nseries + 1, sizeof(*a->series));
	if (!a->ylabel || !a->title || !a->cat || !a->series)
		return -1;
	for (; a->ncat < t->ncat; a->ncat++)
		if (!(a->cat[a->ncat] = strdup(t->cat[a->ncat])))
			return -1;
	for (unsigned s = 0; s <= t->nseries; s++, a->nseries++) {
		struct plot_series *ps = &a->series[s];
		const double *v = s ? t->series[s - 1].abs : t->base_abs;

		ps->name = strdup(s ? t->series[s - 1].name : t->base_name);
		if (!ps->name || series_alloc(ps, t->ncat, false))
			return -1;
		ps->n = t->ncat;
		for (size_t k = 0; k < t->ncat; k++) {
			ps->x[k] = (double)k;
			ps->y[k] = v[k];
		}
	}
	return scale_counts(a);
}

/*
 * The title and axis labels of @t from the names (the counter table's, unit_of()),
 * the title naming the input (@o->input, else the CSV's one input value when x and
 * --by are not the input). -1 when out of memory.
 */
static int label_table(struct plot_table *t, const struct plot_opts *o, const char *x,
		       const char *y, const char *by, const struct yexpr *ye, const char *base,
		       const struct rows *rs)
{
	const char *input = o->input;
	char *yname = y_name(y, ye);

	/* (not when each panel has an input of its own: --facet input) */
	if (!input && rs->input && !rs->inputs && strcmp(x, "input") &&
	    (!by || strcmp(by, "input")) && (!o->facet || strcmp(o->facet, "input")))
		input = rs->input;
	if (input && strrchr(input, '/') && strrchr(input, '/')[1])
		input = strrchr(input, '/') + 1;	/* a trace by its file name */
	t->title = !yname ? NULL : o->title ? strdup(o->title)
					    : default_title(t, x, yname, by, base, input);
	t->xlabel = axis_label(x);
	t->x_bytes = unit_of(x).bytes;
	t->ylabel = t->pct ? NULL : y_label(y, ye);
	if (t->pct && yname && asprintf(&t->ylabel, "%% change in %s against %s", yname, base) < 0)
		t->ylabel = NULL;
	free(yname);
	return t->title && t->xlabel && t->ylabel ? 0 : -1;
}

static int prepare(const char *csv_path, const struct plot_opts *o, struct plot_table *t,
		   bool scale, struct err *e);

#define PLOT_MAX_Y 8

/* Move @from's series into @to (grown), named "BY, YNAME" (YNAME alone without --by). */
static int take_series(struct plot_table *to, struct plot_table *from, unsigned yi,
		       const char *yname)
{
	struct plot_series *ns = realloc(to->series, (to->nseries + from->nseries) * sizeof(*ns));

	if (!ns)
		return -1;
	to->series = ns;
	for (unsigned s = 0; s < from->nseries; s++) {
		struct plot_series *ps = &to->series[to->nseries++];
		char *name;

		*ps = from->series[s];
		memset(&from->series[s], 0, sizeof(from->series[s]));
		if (asprintf(&name, "%s%s%s", from->by ? ps->name : "", from->by ? ", " : "",
			     yname) < 0)
			return -1;
		free(ps->name);
		ps->name = name;
		ps->lc = from->by ? s + 1 : yi + 1;
		ps->dt = yi + 1;
	}
	return 0;
}

/*
 * -y A,B,...: one table per y (lines or timeline), their series in one figure, a
 * colour per --by value and a dash pattern per y ("translation and fault cycles
 * against the size, per mode"); the y label lists the quantities, so they should
 * share a unit. Counts are scaled once, over all of them.
 */
static int prepare_multi(const char *csv_path, const struct plot_opts *o, struct plot_table *t,
			 struct err *e)
{
	char *ys = strdup(o->y), *save = NULL, *y, *label = NULL, *names = NULL, *tail = NULL;
	const char *rest;
	unsigned ny = 0;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (!ys)
		return oom(e, csv_path);
	for (y = strtok_r(ys, ",", &save); y; y = strtok_r(NULL, ",", &save), ny++) {
		struct plot_opts oi = *o;
		struct plot_table ti;
		char *yn, *tmp;

		if (ny == PLOT_MAX_Y) {
			err_set(e, "-y", 0, 0, "more than %d quantities", PLOT_MAX_Y);
			goto out;
		}
		oi.y = y;
		if (prepare(csv_path, &oi, &ti, false, e))
			goto out;
		if (ti.kind == PLOT_BARS) {
			plot_table_free(&ti);
			err_set(e, "-y", 0, 0, "several quantities (%s) only for lines and timelines",
				o->y);
			goto out;
		}
		if (ny && ti.warning) {	/* (the first's is kept with its axes) */
			if (asprintf(&tmp, "%s%s%s", t->warning ? t->warning : "",
				     t->warning ? "\n" : "", ti.warning) < 0) {
				plot_table_free(&ti);
				oom(e, csv_path);
				goto out;
			}
			free(t->warning);
			t->warning = tmp;
		}
		yn = ti.ylabel;
		/* the default title opens with the y quantity's name: keep the rest once */
		rest = strstr(ti.title, t->kind == PLOT_TIMELINE || ti.kind == PLOT_TIMELINE ?
				       " over time" : " vs ");
		if (!ny)
			tail = rest ? strdup(rest) : strdup("");
		if (!tail || asprintf(&tmp, "%s%s%s", label ? label : "", label ? ", " : "", yn) < 0 ||
		    (free(label), label = tmp, false) ||
		    asprintf(&tmp, "%s%s%.*s", names ? names : "", !names ? "" :
			     save && *save ? ", " : " and ",
			     (int)(rest ? (size_t)(rest - ti.title) : strlen(ti.title)), ti.title) < 0) {
			plot_table_free(&ti);
			oom(e, csv_path);
			goto out;
		}
		free(names);
		names = tmp;
		rc = take_series(t, &ti, ny, yn);
		if (!ny) {	/* the first gives the axes */
			struct plot_series *ser = t->series;
			unsigned n = t->nseries;

			*t = ti;
			t->series = ser;
			t->nseries = n;
			ti.title = ti.xlabel = ti.ylabel = ti.by = ti.warning = NULL;
			free(ti.series);	/* (its series were moved) */
			ti.series = NULL;
			ti.nseries = 0;
			ti.nxtics = 0;
			ti.xtic_at = NULL;
			ti.xtic_label = NULL;
		}
		plot_table_free(&ti);
		if (rc) {
			oom(e, csv_path);
			goto out;
		}
		rc = -1;
	}
	free(t->ylabel);
	t->ylabel = label;
	label = NULL;
	free(t->title);
	t->title = NULL;
	if (o->title)
		t->title = strdup(o->title);
	else if (asprintf(&t->title, "%s%s", names, tail) < 0)
		t->title = NULL;
	/* several names make it longer: " on INPUT", if on the same line, goes to its own */
	if (!o->title && t->title && strlen(t->title) > title_chars(t) && !strchr(t->title, '\n')) {
		char *on = NULL;

		for (char *p = strstr(t->title, " on "); p; p = strstr(p + 1, " on "))
			on = p;
		if (on)
			*on = '\n';	/* "...\non INPUT" */
	}
	rc = t->title && (t->logy || !scale_counts(t)) ? 0 : oom(e, csv_path);
out:
	free(tail);
	free(ys);
	free(label);
	free(names);
	if (rc)
		plot_table_free(t);
	return rc;
}

/* One figure (--facet aside): one y or several. */
static int prepare_one(const char *csv_path, const struct plot_opts *o, struct plot_table *t,
		       struct err *e)
{
	if (o->y && strchr(o->y, ','))
		return prepare_multi(csv_path, o, t, e);
	return prepare(csv_path, o, t, true, e);
}

/*
 * The distinct values of column @key among the rows @o->where selects, in order of
 * first appearance (values where_match() finds equal are one), into @val (caller
 * frees each); their count, or -1 with @e.
 */
static int facet_values(const char *csv_path, const struct plot_opts *o, const char *key,
			char **val, struct err *e)
{
	struct csv c;
	struct where w[PLOT_MAX_WHERE];
	unsigned nw, n = 0;
	int col, nf, rc = -1;

	if (csv_open(&c, csv_path, e))
		goto out;
	if ((col = csv_need(&c, key, e)) < 0 || resolve_where(&c, o, w, &nw, e))
		goto out;
	while ((nf = csv_next(&c, e)) > 0) {
		unsigned k = 0;

		if (!row_selected(&c, w, nw))
			continue;
		while (k < n && !where_match(c.field[col], val[k]))
			k++;
		if (k < n)
			continue;
		if (n == PLOT_MAX_PANELS) {
			err_set(e, csv_path, c.lineno, c.col[col], "--facet %s has more than %d values "
				"(select some with --where)", key, PLOT_MAX_PANELS);
			goto out;
		}
		if (!(val[n++] = strdup(c.field[col]))) {
			oom(e, csv_path);
			goto out;
		}
	}
	if (nf < 0)
		goto out;
	if (!n)
		err_set(e, csv_path, 0, 0, nw ? "no data row is selected by --where"
					      : "no data rows (only a header)");
	else
		rc = (int)n;
out:
	if (rc < 0)
		while (n)
			free(val[--n]);
	csv_close(&c);
	return rc;
}

/* Default --facet panels: 600x400 pixels each, and room for the figure's title. */
#define FACET_W 600
#define FACET_H 400
#define FACET_TITLE_H 40

/*
 * --facet KEY: one panel per value of KEY, each prepared as the whole figure would
 * be from the rows holding that value (--where KEY=VALUE), titled "KEY = VALUE";
 * the figure's title is the first panel's default one (which names no input when
 * KEY is the input); panels side by side, ceil(sqrt(n)) to a row.
 */
static int prepare_facets(const char *csv_path, const struct plot_opts *o, struct plot_table *t,
			  struct err *e)
{
	char *val[PLOT_MAX_PANELS], *sel = NULL;
	const char **where = NULL;
	struct plot_opts po = *o;
	unsigned cols, rows;
	int n, rc = -1;

	memset(t, 0, sizeof(*t));
	if (o->abs)
		return err_set(e, "--facet", 0, 0, "not with --abs (each panel would be two)");
	if (figure_size(o, t, e) || (n = facet_values(csv_path, o, o->facet, val, e)) < 0)
		return -1;
	where = calloc(o->nwhere + 1, sizeof(*where));
	t->panels = calloc((size_t)n, sizeof(*t->panels));
	if (!where || !t->panels) {
		oom(e, csv_path);
		goto out;
	}
	for (unsigned i = 0; i < o->nwhere; i++)
		where[i] = o->where[i];
	po.where = where;
	po.nwhere = o->nwhere + 1;
	po.title = NULL;
	for (int i = 0; i < n; i++) {
		struct plot_table *p = &t->panels[i];
		const char *v = val[i];

		free(sel);
		if (asprintf(&sel, "%s=%s", o->facet, val[i]) < 0) {
			sel = NULL;
			oom(e, csv_path);
			goto out;
		}
		where[o->nwhere] = sel;
		if (prepare_one(csv_path, &po, p, e))
			goto out;
		t->npanels++;
		if (!i) {
			t->kind = p->kind;
			t->title = o->title ? strdup(o->title) : p->title;
			p->title = NULL;
		}
		free(p->title);
		if (!strcmp(o->facet, "input") && strrchr(v, '/') && strrchr(v, '/')[1])
			v = strrchr(v, '/') + 1;	/* a trace by its file name */
		if (asprintf(&p->title, "%s = %s", unit_of(o->facet).name, v) < 0)
			p->title = NULL;
		if (!p->title || !t->title) {
			oom(e, csv_path);
			goto out;
		}
		if (p->warning) {
			char *tmp;

			if (asprintf(&tmp, "%s%s%s (%s)", t->warning ? t->warning : "",
				     t->warning ? "\n" : "", p->warning, p->title) < 0) {
				oom(e, csv_path);
				goto out;
			}
			free(t->warning);
			t->warning = tmp;
		}
	}
	cols = (unsigned)ceil(sqrt((double)n));
	rows = ((unsigned)n + cols - 1) / cols;
	if (!t->width) {
		t->width = FACET_W * cols;
		t->height = FACET_H * rows + FACET_TITLE_H;
	}
	rc = 0;
out:
	free(sel);
	free(where);
	for (int i = 0; i < n; i++)
		free(val[i]);
	if (rc)
		plot_table_free(t);
	return rc;
}

int plot_prepare(const char *csv_path, const struct plot_opts *o, struct plot_table *t,
		 struct err *e)
{
	int rc = o->facet ? prepare_facets(csv_path, o, t, e) : prepare_one(csv_path, o, t, e);

	if (!rc && t->warning && o->warn) {
		const char *p = t->warning, *nl;

		for (; p; p = nl ? nl + 1 : NULL) {
			nl = strchr(p, '\n');
			fprintf(o->warn, "plot: warning: %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
		}
	}
	return rc;
}

static int prepare(const char *csv_path, const struct plot_opts *o, struct plot_table *t,
		   bool scale, struct err *e)
{
	struct csv c;
	struct rows rs;
	struct yexpr ye;
	struct names nm = { csv_path, NULL, NULL, NULL };
	struct where w[PLOT_MAX_WHERE];
	enum plot_kind kind = PLOT_AUTO;
	const char *x = o->x, *y = o->y, *by = o->by;
	const char *base = o->base ? o->base : "base";
	int xc, byc = -1, rc = -1;
	unsigned nw = 0;
	bool timeline_csv;

	memset(t, 0, sizeof(*t));
	memset(&rs, 0, sizeof(rs));
	if (parse_kind(o->kind, &kind, e) || figure_size(o, t, e))
		return -1;
	if (csv_open(&c, csv_path, e))
		goto out;
	timeline_csv = csv_find(&c, "time_ms") >= 0 && csv_find(&c, "mode") >= 0;
	if (kind == PLOT_AUTO && !x && timeline_csv)
		kind = PLOT_TIMELINE;
	if (kind == PLOT_TIMELINE) {
		x = x ? x : "time_ms";
		y = y ? y : "huge_coverage";
		by = by ? by : "mode";
	}
	if (!x) {
		err_set(e, "-x", 0, 0, "no x column given (only a timeline CSV has a default)");
		goto out;
	}
	if (!y) {
		err_set(e, "-y", 0, 0, "no y column given (only a timeline CSV has a default)");
		goto out;
	}
	if ((xc = csv_need(&c, x, e)) < 0 || resolve_y(&c, y, &ye, e))
		goto out;
	if (by && (byc = csv_need(&c, by, e)) < 0)
		goto out;
	if (resolve_where(&c, o, w, &nw, e))
		goto out;
	nm.x = x;
	nm.y = y;
	nm.by = by;
	if (read_rows(&c, xc, byc, by, &ye, w, nw, &rs, e) ||
	    (rs.reps && aggregate_reps(&rs, csv_path, e)))
		goto out;
	if (kind == PLOT_AUTO)
		kind = rs.all_numeric ? PLOT_LINES : PLOT_BARS;
	if (kind != PLOT_BARS && !rs.all_numeric) {
		const struct prow *p = &rs.r[rs.first_bad];

		err_set(e, csv_path, p->line, p->xcol, "not a number: '%.60s%s'", p->x,
			strlen(p->x) > 60 ? "..." : "");
		goto out;
	}
	if (kind == PLOT_BARS && o->logx) {
		err_set(e, "--logx", 0, 0, "only for a numeric x axis (lines, timeline)");
		goto out;
	}
	if (o->base && (kind != PLOT_BARS || !by)) {
		err_set(e, "--base", 0, 0, "only for --kind bars with --by (the column holding %s)",
			o->base);
		goto out;
	}
	if (o->logy && kind == PLOT_BARS) {
		err_set(e, "--logy", 0, 0, "only for lines and timelines (bars start at 0)");
		goto out;
	}
	if (o->values && (kind != PLOT_BARS || !by || o->base || o->abs)) {
		err_set(e, "--values", 0, 0, "only for --kind bars with --by, without --base and --abs");
		goto out;
	}
	if (o->abs && (kind != PLOT_BARS || !by)) {
		err_set(e, "--abs", 0, 0, "only for %% change bars (--kind bars with --by)");
		goto out;
	}
	t->kind = kind;
	t->logx = o->logx;
	t->logy = o->logy;
	t->abs = o->abs;
	t->by = by ? strdup(unit_of(by).name) : NULL;
	if (by && !t->by) {
		oom(e, csv_path);
		goto out;
	}
	t->pct = kind == PLOT_BARS && by && !o->values;
	t->series = calloc(by ? rs.nby : 1, sizeof(*t->series));
	if (!t->series || label_table(t, o, x, y, by, &ye, base, &rs)) {
		oom(e, csv_path);
		goto out;
	}
	if (kind == PLOT_BARS) {
		rc = build_bars(t, &nm, &rs, base, e);
		if (!rc && o->abs) {
			char *vl = y_label(y, &ye);

			if (!vl || make_abs_panel(t, vl))
				rc = oom(e, csv_path);
			free(vl);
		}
		goto out;
	}
	t->nseries = by ? rs.nby : 1;
	for (unsigned s = 0; s < t->nseries; s++) {
		t->series[s].name = strdup(by ? rs.by_val[s] : y);
		if (!t->series[s].name) {
			oom(e, csv_path);
			goto out;
		}
	}
	rc = build_lines(t, &nm, &rs, ye.ci >= 0 || rs.reps, e);
out:
	if (!rc && ye.den >= 0 && rs.undefined && !(t->warning = undefined_note(csv_path, y, &c, &ye, &rs)))
		rc = oom(e, csv_path);
	/* (a log axis labels its decades as they are: 1e-05 millions would say nothing) */
	if (!rc && !t->pct && scale && !t->logy && scale_counts(t)) {
		oom(e, csv_path);
		rc = -1;
	}
	rows_free(&rs);
	csv_close(&c);
	if (rc)
		plot_table_free(t);
	return rc;
}

/* --- the script ---------------------------------------------------------- */

static void put_num(FILE *f, double v)
{
	fprintf(f, "%.10g", v);
}

/*
 * Layout estimates for the 1000x600 canvas, measured on the renders of check_plot: the
 * plot area is about 740 px wide beside a key (850 without) and 480 px high; 11 pt Sans
 * takes about 8.5 px per character, 9 pt about 7.5 px and 14 px of height. Only used to
 * decide whether labels fit; gnuplot does the actual layout. Another size (--size, a
 * --facet panel) keeps the margins, which are text, in proportion to the font
 * (--font-size: f = points / 11) and gives the rest to the plot area.
 */
struct layout {
	double w, h;	/* the panel (or canvas) in pixels; h as a lone figure's */
	double f;	/* the font's size / 11 pt */
};

#define LAYOUT_W_KEY(l) ((l)->w - 260.0 * (l)->f)
#define LAYOUT_W(l) ((l)->w - 150.0 * (l)->f)
#define LAYOUT_H(l) ((l)->h - 120.0 * (l)->f)
#define LAYOUT_CHAR11(l) (8.5 * (l)->f)
#define LAYOUT_CHAR9(l) (7.5 * (l)->f)
#define LAYOUT_LINE9(l) (14.0 * (l)->f)

/* The font's size in points (t->font, default 11) and bar labels' (9 of 11). */
static double font_pt(const struct plot_table *t)
{
	return t->font ? t->font : 11.0;
}

static double label_pt(const struct plot_table *t)
{
	return t->font ? round(t->font * 9.0 / 11.0 * 2) / 2 : 9.0;	/* (to half points) */
}

/*
 * Lines and timeline: one data block per series. Series that coincide stay visible:
 * each has its own point type (filled circle, square, triangle, inverted triangle,
 * diamond) or, on a timeline, its own dash pattern.
 */
static const unsigned point_type[5] = { 7, 5, 9, 11, 13 };

static double min_x(const struct plot_table *t)
{
	double m = INFINITY;

	for (unsigned s = 0; s < t->nseries; s++)
		if (t->series[s].n && t->series[s].x[0] < m)
			m = t->series[s].x[0];	/* ascending */
	return m;
}

/*
 * Whether the explicit x tick labels would run into each other across the plot area:
 * the canvas less the margins (80 px) and the key beside it (its longest name plus the
 * sample, 6 characters), with the labels two characters apart (layout estimates below).
 */
static bool xtics_crowded(const struct plot_table *t, const struct layout *l)
{
	size_t chars = 0, keyc = 0;
	double pw;

	for (size_t i = 0; i < t->nxtics; i++)
		chars += strlen(t->xtic_label[i]) + 2;
	for (unsigned s = 0; s < t->nseries && t->nseries > 1; s++)
		if (strlen(t->series[s].name) + 6 > keyc)
			keyc = strlen(t->series[s].name) + 6;
	pw = l->w - 80.0 * l->f - (double)keyc * LAYOUT_CHAR11(l);
	return (double)chars * LAYOUT_CHAR11(l) > 0.8 * pw;
}

static void lines_script(const struct plot_table *t, FILE *f, const struct layout *l)
{
	bool first = true;

	if (t->logx)
		fprintf(f, "set logscale x 2\n");
	if (t->logy)
		fprintf(f, "set logscale y 10\n");
	if (t->nxtics && xtics_crowded(t, l))
		fprintf(f, "set xtics rotate by 30 right\n");
	if (t->nxtics) {
		fprintf(f, "set xtics (");
		for (size_t i = 0; i < t->nxtics; i++) {
			fprintf(f, "%s", i ? ", " : "");
			put_quoted(f, t->xtic_label[i]);
			fprintf(f, " ");
			put_num(f, t->xtic_at[i]);
		}
		fprintf(f, ")\n");
	}
	/*
	 * The data's own extent (autoscale fix: not stretched to the next tick, which gave
	 * negative times and counts), plus a little room so end points and error bars are not
	 * cut by the border; a timeline starts and ends with its samples.
	 */
	fprintf(f, "set autoscale xfix\nset autoscale yfix\nset offsets %s, graph 0.05, graph 0.05\n",
		t->kind == PLOT_TIMELINE ? "0, 0" : "graph 0.02, graph 0.02");
	fprintf(f, "set format x '%%.10g'\nset format y '%%.10g'\n");
	if (t->kind == PLOT_TIMELINE && !t->logx && min_x(t) >= 0)
		fprintf(f, "set xrange [0:*]\n");	/* time runs from the start of the run */
	for (unsigned s = 0; s < t->nseries; s++) {
		const struct plot_series *ps = &t->series[s];

		fprintf(f, "$s%u << EOD\n", s);
		for (size_t i = 0; i < ps->n; i++) {
			put_num(f, ps->x[i]);
			fputc(' ', f);
			put_num(f, ps->y[i]);
			if (ps->err) {
				fputc(' ', f);
				put_num(f, isnan(ps->err[i]) ? 0.0 : ps->err[i]);
			}
			fputc('\n', f);
		}
		fprintf(f, "EOD\n");
	}
	fprintf(f, "plot ");
	for (unsigned s = 0; s < t->nseries; s++) {
		const struct plot_series *ps = &t->series[s];

		if (!ps->n)
			continue;
		fprintf(f, "%s$s%u ", first ? "" : ", \\\n     ", s);
		first = false;
		if (t->kind == PLOT_TIMELINE)
			fprintf(f, "using 1:2 with lines lw 2 dt %u", (ps->dt ? ps->dt - 1 : s) % 5 + 1);
		else
			fprintf(f, "using %s with %s lw 2 pt %u ps 1", ps->err ? "1:2:3" : "1:2",
				ps->err ? "yerrorlines" : "linespoints", point_type[s % 5]);
		if (ps->lc)	/* several -y: a colour per --by value, a dash pattern per y */
			fprintf(f, " lc %u dt %u", ps->lc, ps->dt);
		fprintf(f, " title ");
		put_quoted(f, ps->name);
	}
	fprintf(f, "\n");
}


/*
 * The categories shown under the clusters, into @lab: paths (inputs are often trace
 * files) by their base names when those are distinct, else without the leading
 * directories they all share.
 */
static void cat_labels(const struct plot_table *t, const char **lab)
{
	size_t common = strlen(t->cat[0]);
	bool base = true;

	for (size_t i = 0; i < t->ncat && base; i++) {
		const char *si = strrchr(t->cat[i], '/');

		base = si && si[1];
		for (size_t j = 0; j < i && base; j++)
			base = strcmp(si, strrchr(t->cat[j], '/')) != 0;
	}
	if (base) {
		for (size_t k = 0; k < t->ncat; k++)
			lab[k] = strrchr(t->cat[k], '/') + 1;
		return;
	}
	for (size_t k = 1; k < t->ncat; k++) {
		size_t n = 0;

		while (n < common && t->cat[k][n] == t->cat[0][n])
			n++;
		common = n;
	}
	while (common > 0 && t->cat[0][common - 1] != '/')
		common--;
	for (size_t k = 0; k < t->ncat; k++)
		lab[k] = t->cat[k] + common;
}

static void bar_label(const struct plot_table *t, double v, char *buf, size_t n)
{
	if (t->pct)
		snprintf(buf, n, "%+.2f%%", fabs(v) < 0.005 ? 0.0 : v);
	else
		snprintf(buf, n, "%.4g", v);
}

enum bar_labels { LABELS_NONE, LABELS_ACROSS, LABELS_UP };

/*
 * Bars: boxes at computed positions, each labelled with its value (the seed mail's
 * numbers): across the bar end when the text fits the bar's width, else turned upright,
 * else (bars thinner than a line of text) none.
 */
static void bars_data_script(const struct plot_table *t, FILE *f, double hshare, unsigned lc0,
			     const struct layout *l, double lpt)
{
	double lo = 0, hi = 0, span, pad, room, w = 0.8 / t->nseries, ylo;
	double pw = t->nseries > 1 ? LAYOUT_W_KEY(l) : LAYOUT_W(l);
	double bar_px = pw * w / (double)t->ncat;
	size_t maxlen = 0, maxlab = 0;
	const char *lab[PLOT_MAX_CATEGORIES];
	enum bar_labels labels;
	char label[64];
	bool first = true, slanted, inside = false, nonneg = false;

	for (unsigned s = 0; s < t->nseries; s++)
		for (size_t k = 0; k < t->ncat; k++) {
			double v = t->series[s].y[k];

			if (isnan(v))
				continue;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			nonneg |= v >= 0;	/* its label goes above 0: room there too */
			bar_label(t, v, label, sizeof(label));
			maxlab = strlen(label) > maxlab ? strlen(label) : maxlab;
		}
	if ((double)maxlab * LAYOUT_CHAR9(l) <= bar_px + 4)
		labels = LABELS_ACROSS;
	else if (bar_px >= LAYOUT_LINE9(l))
		labels = LABELS_UP;
	else
		labels = LABELS_NONE;
	cat_labels(t, lab);
	for (size_t k = 0; k < t->ncat; k++)
		maxlen = strlen(lab[k]) > maxlen ? strlen(lab[k]) : maxlen;
	slanted = (double)maxlen * LAYOUT_CHAR11(l) > pw / (double)t->ncat;
	span = hi - lo > 0 ? hi - lo : 1.0;
	/*
	 * The label's offset from the bar end, and the room left for it beyond the bars: a
	 * fraction r of the plot height (less the slanted tick labels' height) on each side
	 * that has bars, so room = r / (1 - 2r) of the bars' span.
	 */
	if (labels == LABELS_UP) {
		double ph = hshare * LAYOUT_H(l) - (slanted ? 0.5 * (double)maxlen * LAYOUT_CHAR11(l) : 0);
		double r = ((double)maxlab * LAYOUT_CHAR9(l) + 12 * l->f) / (ph > 200 * l->f ? ph : 200 * l->f);

		pad = 0.01 * span;
		room = span * (r < 0.3 ? r / (1 - 2 * r) : 0.75);
	} else {
		pad = 0.03 * span;
		room = 3 * pad;
	}
	/*
	 * A % change cannot be below -100 %: the axis stops there, and labels that would
	 * fall below it go inside their bars' ends.
	 */
	ylo = lo < 0 ? lo - room : 0;
	if (t->pct && ylo < -100) {
		ylo = -100;
		inside = true;
	}
	fprintf(f, "set yrange [");
	put_num(f, ylo);
	fprintf(f, ":");
	put_num(f, hi > 0 ? hi + room : lo == 0 ? 1.0 + room : nonneg ? room : 0);
	fprintf(f, "]\nset xrange [-0.5:");
	put_num(f, (double)t->ncat - 0.5);
	fprintf(f, "]\nset grid ytics\nset xzeroaxis lt -1\nset style fill solid 0.85 border -1\n");
	fprintf(f, "set xtics nomirror scale 0 (");
	for (size_t k = 0; k < t->ncat; k++) {
		fprintf(f, "%s", k ? ", " : "");
		put_quoted(f, lab[k]);
		fprintf(f, " %zu", k);
	}
	fprintf(f, ")\n");
	if (slanted) {
		/* slanted; the first label reaches left of the plot: widen the margin for it */
		double spill = 0.87 * (double)strlen(lab[0]) -
			       pw / (double)t->ncat / 2 / LAYOUT_CHAR11(l);

		fprintf(f, "set xtics rotate by 30 right\n");
		if (spill > 8)
			fprintf(f, "set lmargin %d\n", (int)spill + 2);
	}
	for (unsigned s = 0; s < t->nseries; s++) {
		const struct plot_series *ps = &t->series[s];

		fprintf(f, "$s%u << EOD\n", s);
		for (size_t k = 0; k < t->ncat; k++) {
			double v = ps->y[k];

			if (isnan(v))
				continue;
			bar_label(t, v, label, sizeof(label));
			put_num(f, (double)k - 0.4 + w * (s + 0.5));
			fputc(' ', f);
			put_num(f, v);
			fputc(' ', f);
			put_num(f, v >= 0 || inside ? v + pad : v - pad);
			fprintf(f, " \"%s\"\n", label);
		}
		fprintf(f, "EOD\n");
	}
	fprintf(f, "plot ");
	for (unsigned s = 0; s < t->nseries; s++) {
		fprintf(f, "%s$s%u using 1:2:(", first ? "" : ", \\\n     ", s);
		first = false;
		put_num(f, w);
		fprintf(f, ") with boxes lc %u title ", s + lc0 + 1);
		put_quoted(f, t->series[s].name);
	}
	for (unsigned s = 0; s < t->nseries; s++) {
		if (labels == LABELS_ACROSS)
			fprintf(f, ", \\\n     $s%u using 1:3:4 with labels font 'Sans,%.3g' notitle", s,
				lpt);
		else if (labels == LABELS_UP)
			fprintf(f, ", \\\n     $s%u using 1:($2 >= 0 || %d ? $3 : NaN):4 with labels "
				   "rotate by 90 left font 'Sans,%.3g' notitle"
				   ", \\\n     $s%u using 1:($2 < 0 && !%d ? $3 : NaN):4 with labels "
				   "rotate by 90 right font 'Sans,%.3g' notitle", s, inside, lpt, s, inside,
				lpt);
	}
	fprintf(f, "\n");
}

/* The title, the axes' labels and the key of @t. */
static void axes_script(const struct plot_table *t, FILE *f)
{
	fprintf(f, "set title ");
	put_quoted(f, t->title);
	fprintf(f, "\nset xlabel ");
	put_quoted(f, t->xlabel);
	fprintf(f, "\nset ylabel ");
	put_quoted(f, t->ylabel);
	/* one series: the y label names it, no key */
	fprintf(f, "\n%s\n", t->nseries > 1 ? "set key outside right top vertical" : "unset key");
	if (t->nseries > 1 && t->by) {
		fprintf(f, "set key title ");
		put_quoted(f, t->by);
		fprintf(f, "\n");
	}
}

/* What @t draws, in the layout @l: bars (with --abs, two panels), lines or a timeline. */
static void body_script(const struct plot_table *t, FILE *f, const struct layout *l)
{
	if (t->kind == PLOT_BARS && t->abs_panel) {
		/*
		 * --abs: the absolute values (the base's first) above, the % change below, on
		 * a canvas 1000 high: each panel about 0.8 of a lone figure's plot height. The
		 * key inside the first, so the two plot areas line up.
		 */
		fprintf(f, "set multiplot layout 2,1 title ");
		put_quoted(f, t->title);
		fprintf(f, "\nunset title\nset key inside top left\nset ylabel ");
		put_quoted(f, t->abs_panel->ylabel);
		fprintf(f, "\n");
		bars_data_script(t->abs_panel, f, 0.8, 0, l, label_pt(t));
		fprintf(f, "unset key\nunset lmargin\nset ylabel ");
		put_quoted(f, t->ylabel);
		fprintf(f, "\n");
		bars_data_script(t, f, 0.8, 1, l, label_pt(t));
		fprintf(f, "unset multiplot\n");
	} else if (t->kind == PLOT_BARS) {
		bars_data_script(t, f, 1.0, 0, l, label_pt(t));	/* (one panel: the whole height) */
	} else {
		fprintf(f, "set grid\n");
		lines_script(t, f, l);
	}
}

void plot_write_script(const struct plot_table *t, const char *output, const char *fmt, FILE *f)
{
	/* --abs: two panels, one above the other, each as wide as a figure alone */
	unsigned w = t->width ? t->width : 1000, h = t->height ? t->height : t->abs_panel ? 1000 : 600;
	struct layout l = { w, t->abs_panel ? 0.6 * h : h, font_pt(t) / 11.0 };

	terminal(f, output, fmt, w, h, font_pt(t), false);
	fprintf(f, "set encoding utf8\n");
	if (t->npanels) {
		/*
		 * --facet: gnuplot's multiplot, a panel per value in rows of ceil(sqrt(n)),
		 * each with its own axes and key; what one panel set that the next may not
		 * set again (ranges, a log axis, tick lists, a margin) is reset between them.
		 */
		unsigned cols = (unsigned)ceil(sqrt((double)t->npanels));
		unsigned rows = (t->npanels + cols - 1) / cols;
		struct layout pl = { l.w / cols, (l.h - FACET_TITLE_H * l.f) / rows, l.f };

		fprintf(f, "set multiplot layout %u,%u title ", rows, cols);
		put_quoted(f, t->title);
		fprintf(f, "\n");
		for (unsigned i = 0; i < t->npanels; i++) {
			if (i)
				fprintf(f, "set autoscale\nunset logscale\nunset offsets\nunset lmargin\n"
					   "unset grid\nset xtics norotate autofreq\n");
			axes_script(&t->panels[i], f);
			body_script(&t->panels[i], f, &pl);
		}
		fprintf(f, "unset multiplot\n");
		return;
	}
	axes_script(t, f);
	body_script(t, f, &l);
}

static void table_script(const void *ctx, const char *output, const char *fmt, FILE *f)
{
	plot_write_script(ctx, output, fmt, f);
}

int plot_render(const struct plot_table *t, const char *out, struct err *e)
{
	return render(out, table_script, t, e);
}

/* --- plot --script ------------------------------------------------------- */

/* A shell word for the script's command comment: quoted unless plain. */
static void put_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._/:,=+%@-") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', f);	/* the comment stays one line */
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

static void put_opt(FILE *f, const char *name, const char *val)
{
	if (!val)
		return;
	fprintf(f, " %s ", name);
	put_word(f, val);
}

static const char *const kind_name[] = {
	[PLOT_LINES] = "lines", [PLOT_BARS] = "bars", [PLOT_TIMELINE] = "timeline",
};

/*
 * The script's image when no -o is given: SCRIPT less ".gp", plus ".png" ("-":
 * "plot.png"). Returns a malloc'd string, or NULL when out of memory.
 */
static char *script_image(const char *script)
{
	size_t n = strlen(script);
	char *p;

	if (!strcmp(script, "-"))
		return strdup("plot.png");
	if (ends_with(script, ".gp"))
		n -= 3;
	p = malloc(n + 5);
	if (p)
		snprintf(p, n + 5, "%.*s.png", (int)n, script);
	return p;
}

/*
 * Why the data are inline rather than read from the CSV: plot_prepare() computes
 * what is drawn (ratios, mpki, % change against the base, units, sorting, bar
 * positions), which gnuplot would have to redo; inline, the script is the figure in
 * text, redrawn by gnuplot alone and reviewable in a diff.
 */
static int write_script(const struct plot_table *t, const char *csv_path,
			const struct plot_opts *o, struct err *e)
{
	struct outfile of;
	char *image = o->out ? strdup(o->out) : script_image(o->script);
	FILE *f;

	if (!image) {
		err_host(e, o->script, 0, 0, "out of memory");
		return -2;
	}
	if (outfile_open(&of, o->script, 0, e)) {
		free(image);
		return -1;
	}
	f = outfile_stream(&of);
	if (!f) {
		outfile_abort(&of);
		free(image);
		err_host(e, o->script, 0, 0, "out of memory");
		return -2;
	}
	fprintf(f, "# Written by mmusim plot --script, the data inline. Made by:\n");
	fprintf(f, "#   mmusim plot ");
	put_word(f, csv_path);
	put_opt(f, "-x", o->x);
	put_opt(f, "-y", o->y);
	put_opt(f, "--by", o->by);
	if (o->logx)
		fprintf(f, " --logx");
	if (o->logy)
		fprintf(f, " --logy");
	if (o->abs)
		fprintf(f, " --abs");
	if (o->values)
		fprintf(f, " --values");
	for (unsigned i = 0; i < o->nwhere; i++)
		put_opt(f, "--where", o->where[i]);
	put_opt(f, "--facet", o->facet);
	put_opt(f, "--size", o->size);
	put_opt(f, "--font-size", o->font_size);
	put_opt(f, "--kind", kind_name[t->kind]);
	put_opt(f, "--input", o->input);
	put_opt(f, "--base", t->kind == PLOT_BARS && t->pct ? t->base_name : NULL);
	put_opt(f, "--title", o->title);
	put_opt(f, "-o", o->out);
	put_opt(f, "--script", o->script);
	fprintf(f, "\n# Redraw it with: gnuplot ");
	put_word(f, o->script);
	fprintf(f, " (writes ");
	put_word(f, image);
	fprintf(f, ")\n");
	plot_write_script(t, image, plot_format(image) ? plot_format(image) : "png", f);
	free(image);
	if (outfile_commit(&of, e))
		return -2;
	return 0;
}

int plot_output(const struct plot_table *t, const char *csv_path, const struct plot_opts *o,
		struct err *e)
{
	int rc;

	if (o->out && !plot_format(o->out))
		return err_set(e, o->out, 0, 0, "plot output must end in .png, .svg or .pdf");
	if (o->script) {
		rc = write_script(t, csv_path, o, e);
		if (rc)
			return rc;
	}
	return o->out ? plot_render(t, o->out, e) : 0;
}

int plot_csv(const char *csv_path, const struct plot_opts *o, struct err *e)
{
	struct plot_table t;
	int rc;

	if (!o->out && !o->script)
		return err_set(e, "-o", 0, 0, "no output file given (.png, .svg or .pdf)");
	if (o->out && !plot_format(o->out))
		return err_set(e, o->out, 0, 0, "plot output must end in .png, .svg or .pdf");
	if (plot_prepare(csv_path, o, &t, e))
		return -1;
	rc = plot_output(&t, csv_path, o, e);
	plot_table_free(&t);
	return rc;
}

/* --- the demo's bars ------------------------------------------------------- */

/*
 * The demo's table ("group s1 s2 ...", then "NAME v1 v2 ..." per cluster) as a bars
 * table of absolute values, drawn as `mmusim plot` draws bars: each bar labelled with
 * its value, zero included (the demo's huge-page modes are often exactly 0).
 */
static int bars_table(const char *data, struct plot_table *t)
{
	char *copy = strdup(data), *line, *save = NULL;
	int rc = -1;

	if (!copy)
		return -1;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL;
		unsigned col = 0;

		for (tok = strtok_r(line, " \t", &s2); tok; tok = strtok_r(NULL, " \t", &s2), col++) {
			if (!t->xlabel) {		/* the header */
				if (!(t->xlabel = strdup(tok)))
					goto out;
				continue;
			}
			if (!t->cat) {			/* the series' names */
				struct plot_series *ns = realloc(t->series,
								 (t->nseries + 1) * sizeof(*ns));

				if (!ns)
					goto out;
				t->series = ns;
				memset(&ns[t->nseries], 0, sizeof(*ns));
				if (!(ns[t->nseries++].name = strdup(tok)))
					goto out;
				continue;
			}
			if (!col) {
				if (t->ncat == PLOT_MAX_CATEGORIES ||
				    !(t->cat[t->ncat++] = strdup(tok)))
					goto out;
			} else if (col <= t->nseries) {
				struct plot_series *ps = &t->series[col - 1];

				ps->x[t->ncat - 1] = (double)(t->ncat - 1);
				if (parse_double(tok, &ps->y[t->ncat - 1]))
					goto out;
				ps->n = t->ncat;
			}
		}
		if (t->xlabel && !t->cat && t->nseries) {	/* header done: room for the rows */
			t->cat = calloc(PLOT_MAX_CATEGORIES, sizeof(*t->cat));
			if (!t->cat)
				goto out;
			for (unsigned k = 0; k < t->nseries; k++)
				if (series_alloc(&t->series[k], PLOT_MAX_CATEGORIES, false))
					goto out;
		}
	}
	rc = t->ncat && t->nseries ? 0 : -1;
out:
	free(copy);
	return rc;
}

int plot_bars(const char *data, const char *title, const char *ylabel, const char *out,
	      struct err *e)
{
	struct plot_table t;
	int rc;

	memset(&t, 0, sizeof(t));
	if (!plot_format(out))
		return err_set(e, out, 0, 0, "plot output must end in .png, .svg or .pdf");
	t.kind = PLOT_BARS;
	t.title = strdup(title);
	t.ylabel = strdup(ylabel);
	if (!t.title || !t.ylabel || bars_table(data, &t)) {
		plot_table_free(&t);
		err_set(e, out, 0, 0, "plot_bars: not a table of numbers, or out of memory");
		return -2;
	}
	rc = plot_render(&t, out, e);
	plot_table_free(&t);
	return rc;
}
