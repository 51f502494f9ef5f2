/*
 * cli_mrc.c - the command line's `mmusim mrc`: its options (getopt_long, GNU
 * conventions), the config and input as `run` makes them (run.h), the one pass
 * (mrc.h), the CSV (outfile.h: whole or absent) and the figure (mrc_plot(),
 * through plot.c: gnuplot is the command line's, not the library's).
 */
#include <math.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mrc.h"
#include "plot.h"
#include "plot.h"
#include "provenance.h"
#include "outfile.h"
#include "run.h"
#include "util.h"

static volatile sig_atomic_t mrc_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	mrc_interrupted = 1;
}

/* --- the figure ------------------------------------------------------------ */

/*
 * The ways drawn: every one up to 16, then 8 a doubling (2^(i/8), rounded; the
 * last always): a log axis gets evenly spaced points, not thousands at its right.
 */
static size_t plot_points(unsigned ways, unsigned *w)
{
	size_t n = 0;

	for (unsigned i = 1; i <= ways && i <= 16; i++)
		w[n++] = i;
	for (unsigned i = 33; ways > 16; i++) {
		unsigned v = (unsigned)lround(pow(2.0, i / 8.0));

		if (v >= ways)
			break;
		if (v > w[n - 1])
			w[n++] = v;
	}
	if (w[n - 1] != ways)
		w[n++] = ways;
	return n;
}

/*
 * Draw the miss ratio of every curve against the entries (log2 x axis) with
 * gnuplot into @out, as plot_render() (.png or .svg). @title names the input.
 * Returns plot_render()'s result: 0, -1 with @e (bad suffix or directory: exit
 * 2), -2 with @e (gnuplot or the system: exit 1).
 */
static int mrc_plot(const struct mrc_result *res, const char *title, const char *out, struct err *e)
{
	struct plot_series ser[2 * PS_NR];
	struct plot_table t = { 0 };
	char names[2 * PS_NR][16], tbuf[576], xbuf[128]; /* (tbuf: the title, up to 511 bytes, and its prefix) */
	unsigned *w = malloc(((size_t)res->ways + 64) * sizeof(*w));
	size_t n = w ? plot_points(res->ways, w) : 0;
	bool oom = !w;
	int rc;

	memset(ser, 0, sizeof(ser));
	t.kind = PLOT_LINES;
	t.logx = true;
	snprintf(tbuf, sizeof(tbuf), "L1 TLB miss-ratio curves (LRU): %s", title);
	if (res->sets == 1)
		snprintf(xbuf, sizeof(xbuf), "entries (fully associative)");
	else
		snprintf(xbuf, sizeof(xbuf), "entries (%u sets x ways)", res->sets);
	t.title = tbuf;
	t.xlabel = xbuf;
	t.ylabel = "miss ratio";
	t.by = "array";
	t.series = ser;
	for (int side = 0; !oom && side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			const struct mrc_curve *c = &res->curve[side][ps];
			struct plot_series *p = &ser[t.nseries];

			if (!c->misses)
				continue;
			snprintf(names[t.nseries], sizeof(names[0]), "%s %s", mrc_side_name[side],
				 page_size_name[ps]);
			p->name = names[t.nseries++];
			p->x = malloc(n * sizeof(*p->x));
			p->y = malloc(n * sizeof(*p->y));
			if (!p->x || !p->y) {
				oom = true; /* the arrays made so far are freed below */
				break;
			}
			p->n = n;
			for (size_t i = 0; i < n; i++) {
				uint64_t lk = c->lookups[w[i] - 1];

				p->x[i] = (double)res->sets * w[i];
				p->y[i] = lk ? (double)c->misses[w[i] - 1] / (double)lk : 0.0;
			}
		}
	if (oom) {
		err_host(e, "mmusim", 0, 0, "out of memory drawing the curves");
		rc = -2;
	} else {
		rc = plot_render(&t, out, e);
	}
	for (unsigned i = 0; i < t.nseries; i++) {
		free(ser[i].x);
		free(ser[i].y);
	}
	free(w);
	return rc;
}

/* --- the command ----------------------------------------------------------- */

static unsigned mrc_count(const char *opt, const char *v, unsigned max)
{
	uint64_t n;

	if (parse_count(v, &n) || n < 1 || n > max)
		die_usage(opt, v);
	return (unsigned)n;
}

static bool has_suffix(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);

	return n >= m && !strcmp(s + n - m, sfx);
}

/* A library status as the exit status, after saying why (main.c's status_of()). */
static int mrc_status(int rc, const struct err *e)
{
	if (rc == POOL_EINTR || (rc && mrc_interrupted)) {
		fprintf(stderr, "\nmmusim: interrupted; no result written\n");
		exit(130);
	}
	if (rc)
		die_err(e);
	return 0;
}

/* mrc's command line: what it asks for. */
struct mrc_args {
	struct run_opts ro;  /* -c, -w, --set, --format, TRACE: as `run` takes them */
	struct mrc_opts mo;
	const char *out, *plot;
};

/* Parse @argv into @a; a usage error exits 2 (next_opt(), die_usage()). */
static void mrc_parse(int argc, char **argv, struct mrc_args *a)
{
	enum { O_SET = 256, O_FORMAT, O_MAX, O_SETS, O_PLOT };
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' }, { "workload", required_argument, NULL, 'w' },
		{ "set", required_argument, NULL, O_SET }, { "format", required_argument, NULL, O_FORMAT },
		{ "max-entries", required_argument, NULL, O_MAX }, { "sets", required_argument, NULL, O_SETS },
		{ "output", required_argument, NULL, 'o' }, { "plot", required_argument, NULL, O_PLOT },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct err e;
	int c;

	memset(a, 0, sizeof(*a));
	a->mo = (struct mrc_opts){ MRC_DEFAULT_MAX_ENTRIES, 1, &mrc_interrupted };
	a->out = "-";
	opts_reset();
	while ((c = next_opt(argc, argv, ":c:w:o:h", lo, "mrc", "mrc: unknown option '%s'",
			     "mrc: %s needs a value")) != -1) {
		switch (c) {
		case 'c': a->ro.config = optarg; break;
		case 'w': a->ro.workload = optarg; break;
		case 'o': a->out = optarg; break;
		case O_FORMAT: a->ro.format = optarg; break;
		case O_PLOT: a->plot = optarg; break;
		case O_MAX:
			a->mo.max_entries = mrc_count("mrc: --max-entries '%s' is not a count from 1 to 1M",
						      optarg, MRC_MAX_ENTRIES);
			break;
		case O_SETS:
			a->mo.sets = mrc_count("mrc: --sets '%s' is not a count from 1 to 1M", optarg,
					       MRC_MAX_ENTRIES);
			break;
		default: /* O_SET */
			if (a->ro.nsets == RUN_MAX_SETS)
				die_usage("mrc: too many --set options%s", "");
			if (run_set_arg(argc, argv, optind, optarg, &e))
				die_usage("mrc: %s", e.msg);
			a->ro.sets[a->ro.nsets++] = optarg;
			break;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (a->ro.trace)
			die_usage("mrc: unexpected argument '%s'", argv[i]);
		a->ro.trace = argv[i];
	}
	if (!a->ro.trace && !a->ro.workload)
		die_usage("mrc: no TRACE or -w WORKLOAD given%s", "");
	if (a->mo.sets > a->mo.max_entries) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%u", a->mo.max_entries);
		die_usage("mrc: --sets is more than --max-entries (%s): not even one way a set", buf);
	}
	if (a->plot && !has_suffix(a->plot, ".png") && !has_suffix(a->plot, ".svg") &&
	    !has_suffix(a->plot, ".pdf"))
		die_usage("mrc: --plot '%s' must end in .png, .svg or .pdf", a->plot);
}

int cmd_mrc(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct mrc_args a;
	struct sim_config cfg;
	struct mrc_result res;
	struct outfile of;
	struct err e = { 0 };
	struct trace_reader *tr;
	struct sim *s;
	double t0;
	int rc;
	char hash[17], input_id[PROVENANCE_ID_MAX];
	const char *prov[MRC_NR_PROV];

	mrc_parse(argc, argv, &a);
	/* no result replaces an input or the other result (exit 2 before any work) */
	if (outfile_check_distinct((struct outfile_role[]){ { a.out, "-o" }, { a.plot, "--plot" } }, 2,
				   (struct outfile_role[]){ { a.ro.config, "the config" },
							    { a.ro.trace, "the trace" } }, 2, &e))
		die_err(&e);
	if (run_config_load(&a.ro, &cfg, &e))
		die_err(&e);
	tr = run_input_open(&a.ro, &cfg, &rc, &e);
	if (!tr) {
		if (rc == RUN_EUSAGE)
			die_usage("mrc: %s", e.msg);
		die_err(&e);
	}
	s = malloc(sizeof(*s));
	if (!s) {
		err_host(&e, "mmusim", 0, 0, "out of memory");
		die_err(&e);
	}
	if (sim_init(s, &cfg, &e))
		die_err(&e);
	s->k.trace_name = tr->name;
	/* signals first (an interrupted run removes the temporary), then the output:
	 * a bad path is known before the replay */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (outfile_open(&of, a.out, 0, &e))
		die_err(&e);
	t0 = now_seconds();
	mrc_status(mrc_run(s, tr, &a.mo, &res, &e), &e);
	if (!outfile_stream(&of)) {
		err_host(&e, a.out, 0, 0, "out of memory");
		die_err(&e);
	}
	/* the provenance columns, as a sweep's CSV has them */
	provenance_config_hash(&cfg, hash);
	if (run_input_id(&a.ro, &cfg, tr, input_id, &e))
		die_err(&e);
	prov[0] = provenance_version();
	prov[1] = provenance_build_id();
	prov[2] = hash;
	prov[3] = input_id;
	/* a write error stays in the stream: outfile_commit() reports it */
	(void)mrc_write_csv(&res, prov, outfile_stream(&of));
	if (outfile_commit(&of, &e))
		die_err(&e);
	fprintf(stderr, "mrc: %s: %u sets, 1..%u ways; %llu records, %llu read-only stores, "
		"%llu invalidation calls, %.2f s\n", tr->name, res.sets, res.ways,
		(unsigned long long)res.records, (unsigned long long)res.ro_stores,
		(unsigned long long)res.invalidations, now_seconds() - t0);
	if (a.plot) {
		char title[512];

		snprintf(title, sizeof(title), "%s (%s)", tr->name, os_mode_name[cfg.mode]);
		rc = mrc_plot(&res, title, a.plot, &e);
		if (rc) {
			print_err(&e);
			return rc == -1 ? EXIT_BAD : 1;
		}
		fprintf(stderr, "mrc: %s\n", a.plot);
	}
	mrc_result_free(&res);
	trace_close(tr);
	sim_destroy(s);
	free(s);
	return 0;
}
