/*
 * cli_capture.c - the command line's `mmusim capture`: its options (getopt_long,
 * GNU conventions), the default output name, and the one-line summary. The
 * capture itself is the library's capture_run_opts() (capture.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "cli.h"

static uint64_t capture_count(const char *opt, const char *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!*v || *end || errno || *v == '-')
		die_usage("capture: %s needs a whole number", opt);
	return n;
}

/* The one-line summary a finished capture prints on standard error. */
static void capture_summary(const char *out, const struct capture_opts *o,
			    const struct capture_stats *st)
{
	double s = st->seconds > 1e-9 ? st->seconds : 1e-9;

	if (st->execs)
		fprintf(stderr, "capture: %s: the trace is of %s (exec'd)\n", out, st->program);
	if (st->processes > 1)
		fprintf(stderr, "capture: %s: the trace holds %llu processes\n", out,
			(unsigned long long)st->processes);
	if (o->tool && !strcmp(o->tool, "lackey"))
		fprintf(stderr, "capture: %s: %.1f MB of lackey text in %.1f MB, %.2f s\n", out,
			(double)st->trace_bytes / 1e6, (double)st->out_bytes / 1e6, st->seconds);
	else
		fprintf(stderr,
			"capture: %s: %llu instructions, %llu references, %.1f MB (%.2f bytes/ref), "
			"%.2f s (%.2f M refs/s)\n",
			out, (unsigned long long)st->insns, (unsigned long long)st->refs,
			(double)st->out_bytes / 1e6,
			st->refs ? (double)st->out_bytes / (double)st->refs : 0.0, st->seconds,
			(double)st->refs / s / 1e6);
}

int cmd_capture(int argc, char **argv)
{
	enum { O_TOOL = 256, O_SKIP, O_MAX, O_KEEP, O_ROI };
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "tool", required_argument, NULL, O_TOOL },
		{ "skip-insns", required_argument, NULL, O_SKIP },
		{ "max-insns", required_argument, NULL, O_MAX },
		{ "keep-on-failure", no_argument, NULL, O_KEEP },
		{ "roi", no_argument, NULL, O_ROI },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct capture_opts o = { .tool = "mmusim", .progress = isatty(STDERR_FILENO) };
	struct capture_stats st;
	const char *out = NULL;
	char defname[4096];
	struct err e = { 0 };
	int r, c;

	opts_reset();
	/* '+': options stop at PROGRAM; "--" ends them */
	while ((c = next_opt(argc, argv, "+:o:h", lo, "capture",
			     "capture: unexpected argument '%s' (PROGRAM goes after --)",
			     "capture: %s needs a value")) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == O_TOOL)
			o.tool = optarg;
		else if (c == O_SKIP)
			o.skip_insns = capture_count("--skip-insns", optarg);
		else if (c == O_MAX)
			o.max_insns = capture_count("--max-insns", optarg);
		else if (c == O_KEEP)
			o.keep_on_failure = true;
		else if (c == O_ROI)
			o.roi = true;
	}
	if (strcmp(o.tool, "mmusim") && strcmp(o.tool, "lackey"))
		die_usage("capture: unknown --tool '%s' (mmusim or lackey)", o.tool);
	if (!strcmp(o.tool, "lackey") && (o.skip_insns || o.max_insns || o.roi))
		die_usage("capture: %s needs --tool=mmusim", o.skip_insns ? "--skip-insns" :
			  o.max_insns ? "--max-insns" : "--roi");
	if (optind < argc && strcmp(argv[optind - 1], "--"))
		die_usage("capture: unexpected argument '%s' (PROGRAM goes after --)", argv[optind]);
	if (optind >= argc)
		die_usage("capture: no PROGRAM after --%s", "");
	if (!out) {
		/* The default name, as capture_run_opts() makes it, here to be shown at the end. */
		const char *b = strrchr(argv[optind], '/');

		snprintf(defname, sizeof(defname), "%s.%s.zst", b ? b + 1 : argv[optind], o.tool);
		if (!strcmp(o.tool, "mmusim"))
			snprintf(defname, sizeof(defname), "%s.mtr.zst", b ? b + 1 : argv[optind]);
		out = defname;
	}
	r = capture_run_opts(out, argv + optind, &o, &st, &e);
	if (r == -2)
		die_err(&e); /* the output path: bad input, exit 2 */
	if (r) {
		/* the program or valgrind failed: not bad input to mmusim, exit 1 */
		print_err(&e);
		return 1;
	}
	capture_summary(strcmp(out, "-") ? out : "<stdout>", &o, &st);
	return 0;
}

/* --- plot --------------------------------------------------------------- */

/* plot_csv()'s result as an exit status: bad input 2, gnuplot failing 1. */
