/*
 * main.c - the command line (DESIGN.md "Command line"): options and dispatch,
 * and the only place that prints errors or calls exit(). Each command parses
 * its options with getopt_long (GNU forms: -j2, --jobs=2, --json=-, --help)
 * and calls the library: mmusim.h (a run, through the public API), run.h (its
 * options), pool.h (simulators from one reader), sweep_run.h (sweeps),
 * trace_info.h, demo.h, plot.h, capture.h; usage.h holds the help texts. Library
 * calls return a status and a struct err; status_of() turns them into a message
 * and an exit status.
 *
 * Exit status: 0 success; 2 bad usage, configuration or input, with
 * "file:line[:col]: message" on stderr; 1 any other failure; 130 interrupted.
 * Result files go through outfile.h: a regular file is written to a temporary
 * name and renamed, so a failed run leaves none; a device, FIFO or standard
 * output is written in place.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "cli.h"
#include "cli_latency.h"
#include "config.h"
#include "demo.h"
#include "hostcfg.h"
#include "layout.h"
#include "mmusim.h"
#include "outfile.h"
#include "plot.h"
#include "provenance.h"
#include "run.h"
#include "sweep.h"
#include "sweep_run.h"
#include "trace.h"
#include "trace_info.h"
#include "trace_mux.h"
#include "usage.h"
#include "util.h"
#include "workload.h"



static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* No SA_RESTART: an open() that blocks on a FIFO returns EINTR, so ^C ends the wait. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* A library status (run.h, pool.h) as this process's exit status, after saying why. */
static int status_of(int rc, const struct err *e)
{
	if (rc && interrupted) /* whatever it broke (an open() of a FIFO: EINTR), it was ^C */
		rc = POOL_EINTR;
	switch (rc) {
	case 0:
		return 0;
	case RUN_EUSAGE:
		fprintf(stderr, "mmusim: %s\n", e->msg);
		usage_hint();
		return EXIT_BAD;
	case POOL_EINTR:
		fprintf(stderr, "\nmmusim: interrupted; no result written\n");
		return 130;
	default:
		print_err(e); /* a host failure (out of memory, a write error): 1; bad input: 2 */
		return rc == POOL_EHOST || e->host ? 1 : EXIT_BAD;
	}
}

/* Exit with status_of(@rc) unless @rc is 0. */
static void check(int rc, const struct err *e)
{
	if (rc)
		exit(status_of(rc, e));
}

/* --- run ---------------------------------------------------------------- */

/*
 * A status of the public API (mmusim.h) as this process's exit status, as
 * status_of() does for the internal ones (whose values they are); @m is freed.
 */
static void api_check(struct mmusim *m, int rc)
{
	struct err e = { 0 };

	if (!rc)
		return;
	snprintf(e.msg, sizeof(e.msg), "%s", m ? mmusim_error(m) : "mmusim: out of memory");
	e.host = !m || rc == MMUSIM_EHOST;
	mmusim_destroy(m);
	exit(status_of(rc, &e));
}

/*
 * Output @path (when given) opened before any work, so a bad path (no such
 * directory, no permission, a directory) is exit 2 now and not after the run;
 * a regular file is written to a temporary that a failed or interrupted run
 * removes (atexit(outfile_remove_pending)) and that replaces the file only
 * when committed. NULL when not given.
 */
static FILE *open_output(struct outfile *of, const char *path)
{
	struct err e = { 0 };
	FILE *f;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	if (!path)
		return NULL;
	check(outfile_open(of, path, 0, &e), &e);
	f = outfile_stream(of);
	if (!f) {
		outfile_abort(of);
		err_host(&e, path, 0, 0, "out of memory");
		check(POOL_EHOST, &e);
	}
	return f;
}

/* Commit @of (opened by open_output()) or exit 1 saying why; @m is freed on failure. */
static void commit_output(struct mmusim *m, struct outfile *of)
{
	struct err e = { 0 };

	if (outfile_commit(of, &e)) {
		mmusim_destroy(m);
		check(POOL_EHOST, &e);
	}
}

/*
 * `run` through the public API (mmusim.h), as an embedding program would:
 * options and the config to a machine, the input replayed (signals caught,
 * progress on a terminal), the reports written.
 */
static int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	struct outfile tl, so, jo, vo;
	struct err e = { 0 };
	struct progress p = { 0 };
	bool tty, json_stdout;
	struct mmusim *m;
	FILE *tf, *sf, *jf, *vf;
	const char *warning;
	int rc;

	rc = run_opts_parse(argc, argv, &o, true, &e);
	if (rc == RUN_HELP)
		return help("run");
	check(rc, &e);
	/* no result replaces an input or another result (exit 2 before any work) */
	{
		struct outfile_role in[1 + SIM_PROCS_MAX] = { { o.config, "the config" } };

		for (unsigned i = 0; i < o.ntraces; i++)
			in[1 + i] = (struct outfile_role){ o.traces[i], "the trace" };
		check(outfile_check_distinct((struct outfile_role[]){ { o.json, "--json" },
								      { o.timeline, "--timeline" },
								      { o.steps, "--steps" },
								      { o.vmas_csv, "--vmas-csv" } }, 4,
					     in, 1 + o.ntraces, &e),
		      &e);
	}
	check(run_traces_check(&o, &e) ? -1 : 0, &e);
	json_stdout = o.json && !strcmp(o.json, "-");
	catch_signals(); /* before the first temporary: an interrupted run removes them */
	tf = open_output(&tl, o.timeline);
	sf = open_output(&so, o.steps);
	jf = open_output(&jo, o.json);
	vf = open_output(&vo, o.vmas_csv);
	tty = isatty(2);
	rc = mmusim_create(&m, &(struct mmusim_options){
		.config_path = o.config, .sets = o.sets, .nsets = o.nsets, .modes = o.modes,
		.labels = o.labels, .nlabels = o.nlabels, .check_invariants = o.check,
		.interrupted = &interrupted, .progress = o.quiet ? NULL : show_progress,
		.progress_arg = &p });
	api_check(m, rc);
	if (tf)
		api_check(m, mmusim_timeline(m, tf, o.timeline_interval));
	if (sf)
		api_check(m, mmusim_steps(m, sf));
	p = (struct progress){ now_seconds(), now_seconds() + (tty ? 1.0 : PROGRESS_EVERY), false,
			       tty, false, m };
	if (!o.trace && !o.workload && !mmusim_processes(m) && !o.quiet)
		fprintf(stderr, "mmusim: no TRACE or -w WORKLOAD given: running the default workload %s\n",
			RUN_DEFAULT_WORKLOAD);
	if (o.trace)
		rc = mmusim_replay(m, o.trace, o.format);
	else if (mmusim_processes(m) && !o.workload) /* run A B ..., or the config's processes: */
		rc = mmusim_replay_processes(m, o.format);
	else
		rc = mmusim_replay_workload(m, o.workload ? o.workload : RUN_DEFAULT_WORKLOAD);
	api_check(m, rc);
	if (!o.quiet && p.printed)
		show_progress(&(struct progress){ p.t0, 0, true, tty, true, m }, mmusim_records(m));
	if ((warning = mmusim_warning(m))) /* the report is written all the same (exit 0) */
		fprintf(stderr, "mmusim: warning: %s\n", warning);
	if (tf)
		commit_output(m, &tl);
	if (tf && mmusim_timeline_elided(m))
		fprintf(stderr, "mmusim: --timeline: %llu idle intervals left out (simulated time passed "
			"them within one batch of records; the row after them repeats them)\n",
			(unsigned long long)mmusim_timeline_elided(m));
	if (sf)
		commit_output(m, &so);
	if (jf) {
		char *text = mmusim_report_json(m);

		if (!text)
			api_check(m, mmusim_status(m) ? mmusim_status(m) : MMUSIM_EHOST);
		fputs(text, jf);
		free(text);
		commit_output(m, &jo);
	}
	/* stdout's write errors are not checked, as `run` never did */
	if (!o.quiet && !json_stdout)
		(void)mmusim_report_text(m, stdout);
	/* --vmas: asked for, so printed under -q too; not when the JSON goes to stdout */
	if (o.vmas_top && !json_stdout)
		api_check(m, mmusim_report_vmas(m, o.vmas_top, stdout));
	if (vf) {
		api_check(m, mmusim_report_vmas_csv(m, o.vmas_top, vf));
		commit_output(m, &vo);
	}
	mmusim_destroy(m);
	return 0;
}

/* --- config show -------------------------------------------------------- */

static int cmd_config(int argc, char **argv)
{
	struct run_opts o;
	struct sim_config c;
	struct err e = { 0 };
	int rc;

	if (argc < 2 || (strcmp(argv[1], "show") && strcmp(argv[1], "host"))) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
			return help("config");
		die_usage("config: expected 'show' or 'host'%s", "");
	}
	/* config show A B: the config of `run A B` (its processes: list) */
	rc = run_opts_parse(argc - 1, argv + 1, &o, true, &e);
	if (rc == RUN_HELP)
		return help("config");
	check(rc, &e);
	if (o.ntraces == 1 || o.workload)
		die_usage("config: unexpected argument '%s'", o.workload ? o.workload : o.trace);
	if (!strcmp(argv[1], "host")) {
		/* the defaults and -c, then this machine's settings, then each --set */
		unsigned nsets = o.nsets;

		o.nsets = 0;
		check(run_config_load(&o, &c, &e), &e);
		check(hostcfg_apply(&c, "", &e), &e);
		for (unsigned i = 0; i < nsets; i++)
			check(config_set(&c, o.sets[i], &e), &e);
		check(config_validate(&c, "config host", &e), &e);
	} else {
		check(run_config_load(&o, &c, &e), &e);
	}
	config_write_yaml(&c, stdout);
	return 0;
}

/* --- trace info / convert / gen ----------------------------------------- */

/* trace info --layout VERSION: the trace's records as that kernel would have laid them out. */
static struct trace_reader *info_layout(struct trace_reader *tr, const char *version, struct err *e)
{
	struct sim_config c;
	unsigned k;

	for (k = 0; k < KERNEL_NR && strcmp(version, os_kernel_name[k]); k++)
		;
	if (k == KERNEL_NR) {
		trace_close(tr);
		die_usage("trace info: --layout takes a kernel release (6.6, 6.8, 6.12 or 6.18), not '%s'",
			  version);
	}
	config_defaults(&c);
	c.kernel = (enum os_kernel)k;
	c.layout = LAYOUT_KERNEL;
	return layout_open(tr, &c, e);
}

/*
 * trace info A B ...: the stream `run A B ...` replays (the default config's
 * sched.quantum and os.layout), counted, and its process events.
 */
static int trace_info_processes(const char *const *pos, unsigned npos, enum trace_format f,
				const char *lay)
{
	struct run_opts o = { .ntraces = npos };
	struct sim_config c;
	struct trace_info in;
	struct err e = { 0 };
	struct trace_reader *tr;
	int rc;

	if (lay)
		die_usage("trace info: --layout takes one TRACE%s", "");
	memcpy(o.traces, pos, npos * sizeof(*pos));
	check(run_traces_check(&o, &e) ? -1 : 0, &e);
	config_defaults(&c);
	c.nprocs = npos;
	for (unsigned i = 0; i < npos; i++) {
		c.procs[i] = (struct proc_cfg){ .repeat = 1 };
		if (snprintf(c.procs[i].trace, sizeof(c.procs[i].trace), "%s", pos[i]) >=
		    (int)sizeof(c.procs[i].trace))
			die_usage("trace info: TRACE '%.200s...' is longer than 255 bytes", pos[i]);
	}
	tr = mux_open_config(&c, f, &e);
	if (!tr)
		die_err(&e);
	rc = trace_info(tr, &in, &e);
	check(rc == -2 ? POOL_EHOST : rc, &e);
	trace_info_write(&in, tr, stdout);
	printf("processes:    %u traces, slices of %llu instructions: switch %llu exit %llu prctl %llu "
	       "fork %llu exec %llu\n", npos, (unsigned long long)c.sched_quantum,
	       (unsigned long long)in.ev[EV_SWITCH], (unsigned long long)in.ev[EV_EXIT],
	       (unsigned long long)in.ev[EV_PRCTL], (unsigned long long)in.ev[EV_FORK],
	       (unsigned long long)in.ev[EV_EXEC]);
	trace_close(tr);
	return 0;
}

static int cmd_trace(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'f' }, { "output", required_argument, NULL, 'o' },
		{ "workload", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ "layout", required_argument, NULL, 'l' }, { NULL, 0, NULL, 0 },
	};
	struct err e = { 0 };
	enum trace_format f = TF_AUTO;
	const char *fmt = NULL, *out = NULL, *wl = NULL, *lay = NULL, *pos[SIM_PROCS_MAX] = { NULL };
	unsigned npos = 0;
	struct trace_reader *tr;
	int c;

	if (argc < 2)
		die_usage("trace: expected info, convert or gen%s", "");
	argc--;
	argv++; /* argv[0]: info, convert or gen */
	if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))
		return help("trace");
	opts_reset();
	while ((c = next_opt(argc, argv, ":o:w:h", lo, "trace", "trace: unknown option '%s'",
			     "trace: %s needs a value")) != -1)
		*(c == 'f' ? &fmt : c == 'o' ? &out : c == 'l' ? &lay : &wl) = optarg;
	for (int i = optind; i < argc; i++) {
		if (npos == (strcmp(argv[0], "info") ? 2 : SIM_PROCS_MAX))
			die_usage("trace: unexpected argument '%s'", argv[i]);
		pos[npos++] = argv[i];
	}
	if (fmt) {
		f = trace_format_parse(fmt);
		if (f == TF_NR || f == TF_WORKLOAD)
			die_usage("unknown --format '%s'", fmt);
	}
	if (!strcmp(argv[0], "info")) {
		struct trace_info in;
		int rc;

		if (npos < 1)
			die_usage("trace info needs a TRACE%s", "");
		if (npos > 1) /* several: the processes of `run A B`, as the machine gets them */
			return trace_info_processes(pos, npos, f, lay);
		tr = trace_open(pos[0], f, &e);
		if (tr && lay)
			tr = info_layout(tr, lay, &e);
		if (!tr)
			die_err(&e);
		rc = trace_info(tr, &in, &e);
		check(rc == -2 ? POOL_EHOST : rc, &e);
		trace_info_write(&in, tr, stdout);
		if (lay) {
			printf("kernel layout (Linux %s, no randomization) at the end:\n", lay);
			layout_dump(layout_of(tr), stdout);
		}
		trace_close(tr);
		return 0;
	}
	if (!strcmp(argv[0], "gen")) {
		struct sim_config dc;

		if (!wl || !out || npos)
			die_usage("trace gen needs -w WORKLOAD -o OUT%s", "");
		/* the default config's seed, as `run -w` without -c (seed=N in the spec overrides) */
		config_defaults(&dc);
		tr = workload_open(wl, dc.seed, &e);
	} else if (!strcmp(argv[0], "convert")) {
		if (npos != 2)
			die_usage("trace convert needs IN and OUT%s", "");
		out = pos[1];
		if (outfile_check_distinct(&(struct outfile_role){ out, "OUT" }, 1,
					   &(struct outfile_role){ pos[0], "the trace" }, 1, &e))
			die_err(&e);
		tr = trace_open(pos[0], f, &e);
	} else {
		die_usage("trace: unknown subcommand '%s'", argv[0]);
	}
	if (!tr)
		die_err(&e);
	return status_of(mtr_write_all(tr, out, &e), &e);
}

/* --- demo --------------------------------------------------------------- */

static int cmd_demo(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "outdir", required_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outdir = "plots/out";
	struct err e = { 0 };

	opts_reset();
	while (next_opt(argc, argv, ":h", lo, "demo", "demo: unexpected argument '%s'",
			"demo: unexpected argument '%s'") != -1)
		outdir = optarg;
	if (optind < argc)
		die_usage("demo: unexpected argument '%s'", argv[optind]);
	catch_signals();
	return status_of(demo_run(outdir, stdout, &interrupted, &e), &e);
}

/* --- capture ------------------------------------------------------------- */

/* A count option's value: a whole number, else bad usage. */
static int plot_status(int r, const struct err *e)
{
	if (!r)
		return 0;
	if (r == -1)
		die_err(e);
	print_err(e);
	return 1;
}

static int cmd_plot(int argc, char **argv)
{
	enum { OPT_BY = 256, OPT_KIND, OPT_BASE, OPT_TITLE, OPT_LOGX, OPT_TABLE, OPT_SCRIPT,
	       OPT_LOGY, OPT_ABS, OPT_INPUT, OPT_VALUES, OPT_WHERE, OPT_FACET, OPT_SIZE, OPT_FONT };
	static const struct option lo[] = {
		{ "by", required_argument, NULL, OPT_BY }, { "kind", required_argument, NULL, OPT_KIND },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "output", required_argument, NULL, 'o' }, { "logx", no_argument, NULL, OPT_LOGX },
		{ "table", no_argument, NULL, OPT_TABLE }, { "help", no_argument, NULL, 'h' },
		{ "script", required_argument, NULL, OPT_SCRIPT },
		{ "logy", no_argument, NULL, OPT_LOGY }, { "abs", no_argument, NULL, OPT_ABS },
		{ "values", no_argument, NULL, OPT_VALUES },
		{ "where", required_argument, NULL, OPT_WHERE },
		{ "facet", required_argument, NULL, OPT_FACET },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "font-size", required_argument, NULL, OPT_FONT },
		{ "input", required_argument, NULL, OPT_INPUT }, { NULL, 0, NULL, 0 },
	};
	const char *where[PLOT_MAX_WHERE_OPTS];
	struct plot_opts o = { .where = where, .warn = stderr };
	const char *csv = NULL;
	struct err e = { 0 };
	bool table = false;
	int c;

	opts_reset();
	while ((c = next_opt(argc, argv, ":x:y:o:h", lo, "plot", "plot: unknown option '%s'",
			     "plot: %s needs a value")) != -1) {
		switch (c) {
		case 'x': o.x = optarg; break;
		case 'y': o.y = optarg; break;
		case 'o': o.out = optarg; break;
		case OPT_BY: o.by = optarg; break;
		case OPT_KIND: o.kind = optarg; break;
		case OPT_BASE: o.base = optarg; break;
		case OPT_TITLE: o.title = optarg; break;
		case OPT_LOGX: o.logx = true; break;
		case OPT_SCRIPT: o.script = optarg; break;
		case OPT_LOGY: o.logy = true; break;
		case OPT_ABS: o.abs = true; break;
		case OPT_VALUES: o.values = true; break;
		case OPT_INPUT: o.input = optarg; break;
		case OPT_WHERE:
			if (o.nwhere == PLOT_MAX_WHERE_OPTS)
				die_usage("plot: more than 32 --where (PLOT_MAX_WHERE_OPTS)%s", "");
			where[o.nwhere++] = optarg;
			break;
		case OPT_FACET: o.facet = optarg; break;
		case OPT_SIZE: o.size = optarg; break;
		case OPT_FONT: o.font_size = optarg; break;
		default: table = true; break;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (csv)
			die_usage("plot: unexpected argument '%s'", argv[i]);
		csv = argv[i];
	}
	if (!csv)
		die_usage("plot: no RESULTS.csv given%s", "");
	if (!o.out && !o.script && !table)
		die_usage("plot: no -o OUT.png|OUT.svg|OUT.pdf given%s", "");
	if (outfile_check_distinct((struct outfile_role[]){ { o.out, "-o" }, { o.script, "--script" } }, 2,
				   &(struct outfile_role){ csv, "the CSV" }, 1, &e))
		die_err(&e);
	if (table) {
		/* the mail's table, then the figure if -o names one */
		struct plot_table t;
		int r;

		if (!o.kind)
			o.kind = "bars";
		if (plot_prepare(csv, &o, &t, &e))
			die_err(&e);
		if (plot_write_table(&t, stdout)) {
			plot_table_free(&t);
			die_usage("plot --table: needs %% change bars: a non-numeric -x and --by (with --base)%s", "");
		}
		r = plot_output(&t, csv, &o, &e);
		plot_table_free(&t);
		return plot_status(r, &e);
	}
	if (plot_status(plot_csv(csv, &o, &e), &e))
		return 1;
	if (o.out || strcmp(o.script, "-")) /* not after a script on standard output */
		printf("plot: %s\n", o.out ? o.out : o.script);
	return 0;
}

/* --- sweep / merge ------------------------------------------------------ */

static void sweep_parse(int argc, char **argv, struct sweep_cmd *s)
{
	enum { OPT_SHARD = 256, OPT_LIST, OPT_OUTDIR, OPT_PLOT, OPT_RUN_POINTS };
	static const struct option lo[] = {
		{ "jobs", required_argument, NULL, 'j' }, { "shard", required_argument, NULL, OPT_SHARD },
		{ "list", no_argument, NULL, OPT_LIST }, { "outdir", required_argument, NULL, OPT_OUTDIR },
		{ "output", required_argument, NULL, 'o' }, { "plot", required_argument, NULL, OPT_PLOT },
		{ "workload", required_argument, NULL, 'w' }, { "quiet", no_argument, NULL, 'q' },
		{ "run-points", required_argument, NULL, OPT_RUN_POINTS },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *bad = "sweep: unknown option '%s'";
	uint64_t v;
	int c;

	s->shard_n = s->threads = 1;
	opts_reset();
	while ((c = next_opt(argc, argv, ":j:o:w:qh", lo, "sweep", bad, "sweep: %s needs a value")) != -1) {
		switch (c) {
		case 'j':
			if (parse_u64(optarg, &v) || !v || v > 1024)
				die_usage("-j: '%s' is not a number of jobs from 1 to 1024", optarg);
			s->jobs = (unsigned)v;
			break;
		case OPT_SHARD:
			if (sscanf(optarg, "%u/%u", &s->shard_i, &s->shard_n) != 2 || !s->shard_n ||
			    s->shard_i >= s->shard_n)
				die_usage("--shard: expected I/N with 0 <= I < N, got '%s'", optarg);
			break;
		case OPT_LIST: s->list = true; break;
		case OPT_OUTDIR: s->outdir = optarg; break;
		case 'o': s->csv = optarg; break;
		case OPT_PLOT: s->plot_out = optarg; break;
		case 'w': s->workload = optarg; break;
		case 'q': s->quiet = true; break;
		default:
			/* internal: --run-points PTS REP THREADS, a worker's share */
			if (optind + 1 >= argc)
				die_usage("sweep: %s needs PTS REP THREADS", "--run-points");
			s->run_points = optarg;
			s->rep = (unsigned)strtoul(argv[optind++], NULL, 10);
			s->threads = (unsigned)strtoul(argv[optind++], NULL, 10);
			if (!s->threads || s->threads > 1024)
				s->threads = 1;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (!s->file)
			s->file = argv[i];
		else if (!s->trace)
			s->trace = argv[i];
		else
			die_usage("sweep: unexpected argument '%s'", argv[i]);
	}
}

/* A forked worker (or --run-points): its points, its exit status. */
static int sweep_worker(void *arg, const struct sweep *sw, const char *outdir, const char *self,
			const struct sweep_task *t, unsigned threads)
{
	struct err e = { 0 };

	int rc;

	(void)arg;
	catch_signals(); /* SIGTERM from the parent: stop after a round, no partial report */
	rc = sweep_run_points(sw, t->pts, t->n, t->rep, outdir, self, threads, &interrupted, &e);
	if (rc == POOL_EINTR || (rc && interrupted))
		return 130; /* the sweep says once what an interruption keeps */
	return status_of(rc, &e);
}

static int cmd_sweep(int argc, char **argv)
{
	struct sweep_cmd s = { .stop = &interrupted, .worker = sweep_worker, .log = stderr };
	struct err e = { 0 };
	int rc;

	sweep_parse(argc, argv, &s);
	catch_signals();
	rc = sweep_command(&s, &e);
	return rc > 0 ? rc : status_of(rc, &e);
}

static int cmd_merge(int argc, char **argv)
{
	static const struct option lo[] = { { "help", no_argument, NULL, 'h' },
					    { "reps", no_argument, NULL, 'r' },
					    { "latency", no_argument, NULL, 'L' }, { NULL, 0, NULL, 0 } };
	struct outfile of;
	struct err e = { 0 };
	bool per_rep = false, latency = false;
	int o;

	opts_reset();
	while ((o = next_opt(argc, argv, ":h", lo, "merge", "merge: unknown option '%s'", "%s")) != -1) {
		if (o == 'L')
			latency = true;
		else
			per_rep = true;
	}
	if (latency && per_rep)
		die_usage("merge: --latency and --reps: the latency rows are per report already%s", "");
	if (argc - optind < 2)
		die_usage("merge: expected OUT.csv RESULT.json...%s", "");
	/* OUT forgotten (a shell glob of reports): the first report is no CSV to write over */
	if (sweep_file_is_report(argv[optind]))
		die_usage("merge: '%s' is a JSON report, not the CSV to write: the OUT operand is missing "
			  "(mmusim merge OUT.csv RESULT.json...)", argv[optind]);
	{
		size_t nin = (size_t)(argc - optind - 1);
		struct outfile_role *ins = calloc(nin, sizeof(*ins));

		if (!ins) {
			err_host(&e, "mmusim", 0, 0, "out of memory");
			return status_of(POOL_EHOST, &e);
		}
		for (size_t i = 0; i < nin; i++)
			ins[i] = (struct outfile_role){ argv[optind + 1 + i], "the report" };
		if (outfile_check_distinct(&(struct outfile_role){ argv[optind], "OUT" }, 1, ins, nin, &e)) {
			free(ins);
			return status_of(-1, &e);
		}
		free(ins);
	}
	catch_signals(); /* an interrupted merge removes its temporary */
	if (outfile_open(&of, argv[optind], 0, &e))
		return status_of(-1, &e);
	if (latency)
		return status_of(latency_csv_into(&of, argv + optind + 1, (size_t)(argc - optind - 1), &e),
				 &e);
	return status_of(sweep_merge_into(&of, argv + optind + 1, (size_t)(argc - optind - 1),
					  per_rep, stderr, &e), &e);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "run", cmd_run },	  { "config", cmd_config }, { "trace", cmd_trace },
		{ "demo", cmd_demo },	  { "capture", cmd_capture }, { "sweep", cmd_sweep },
		{ "merge", cmd_merge }, { "plot", cmd_plot },	  { "mrc", cmd_mrc },
	};
	const char *cmd = argc > 1 ? argv[1] : "help";
	bool asks_help = argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));

	atexit(outfile_remove_pending); /* a result not committed by exit() is not left */
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmd, cmds[i].name)) {
			cli_command = cmds[i].name;
			return cmds[i].fn(argc - 1, argv + 1); /* argv[0]: the command */
		}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
		return help(asks_help ? "help" : argc > 2 ? argv[2] : NULL);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		if (asks_help)
			return help("version");
		printf("mmusim %s (build %s)\n", provenance_version(), provenance_build_id());
		return 0;
	}
	die_usage("unknown command '%s'", cmd);
}
