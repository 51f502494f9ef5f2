/*
 * main.c - the command line (DESIGN.md "Command line"); the only place that
 * prints errors or calls exit().
 *
 * Exit status: 0 success; 2 bad usage, configuration or input, with
 * "file:line[:col]: message" on stderr; 1 any other failure. Result files are
 * written to a temporary name and renamed, so a failed run leaves none.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "config.h"
#include "plot.h"
#include "sim.h"
#include "stats.h"
#include "trace.h"
#include "util.h"
#include "workload.h"

#define EXIT_BAD 2
#define MAX_MODES MODE_NR
#define MAX_SETS 256

static const char usage_text[] =
	"usage: mmusim run [-c CONFIG.yaml] [TRACE | -w WORKLOAD[:key=value,...]] [--format FMT]\n"
	"                  [--set path=value ...] [--modes base,hugetlbfs,thp] [--json FILE|-] [--quiet]\n"
	"                  [--timeline FILE.csv [--timeline-ms MS]]\n"
	"       mmusim config show [-c CONFIG.yaml] [--set path=value ...]\n"
	"       mmusim trace info TRACE [--format FMT]\n"
	"       mmusim trace convert IN OUT.mtr[.zst|.gz|.xz] [--format FMT]\n"
	"       mmusim trace gen -w WORKLOAD -o OUT.mtr[.zst]\n"
	"       mmusim capture [-o OUT] -- PROGRAM [ARGS]   (valgrind lackey + syscalls)\n"
	"       mmusim demo [--outdir DIR]\n"
	"       mmusim help\n"
	"Workloads: stream:size=S[,iterations=N]  gups:size=S[,updates=N]  chase:size=S[,steps=N]\n"
	"           stride:size=S,stride=B[,passes=N]  zipf:size=S,alpha=A,refs=N  (+ seed=, madvise=1)\n";

static volatile sig_atomic_t interrupted;

/* A result being written (its temporary name), removed if the run dies. */
static char pending_tmp[4200];

static void remove_pending(void)
{
	if (pending_tmp[0])
		unlink(pending_tmp);
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static _Noreturn void die_err(const struct err *e)
{
	char buf[1024];

	err_format(e, buf, sizeof(buf));
	fprintf(stderr, "%s\n", buf);
	exit(EXIT_BAD);
}

static _Noreturn void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "mmusim: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	exit(EXIT_BAD);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- options shared by run / config show -------------------------------- */

struct opts {
	const char *config;
	const char *trace;
	const char *workload;
	const char *format;
	const char *modes;
	const char *json;
	const char *timeline;
	const char *timeline_ms;
	const char *sets[MAX_SETS];
	unsigned nsets;
	bool quiet;
	bool check; /* --check-invariants: after every batch (tests) */
};

static int parse_opts(int argc, char **argv, struct opts *o, bool want_input)
{
	memset(o, 0, sizeof(*o));
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char **dst = NULL;

		if (!strcmp(a, "-c") || !strcmp(a, "--config"))
			dst = &o->config;
		else if (!strcmp(a, "-w") || !strcmp(a, "--workload"))
			dst = &o->workload;
		else if (!strcmp(a, "--format"))
			dst = &o->format;
		else if (!strcmp(a, "--modes"))
			dst = &o->modes;
		else if (!strcmp(a, "--json"))
			dst = &o->json;
		else if (!strcmp(a, "--timeline"))
			dst = &o->timeline;
		else if (!strcmp(a, "--timeline-ms"))
			dst = &o->timeline_ms;
		else if (!strcmp(a, "--set")) {
			if (i + 1 >= argc)
				die_usage("--set needs path=value", "");
			if (o->nsets == MAX_SETS)
				die_usage("too many --set options", "");
			o->sets[o->nsets++] = argv[++i];
			continue;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = true;
			continue;
		} else if (!strcmp(a, "--check-invariants")) {
			o->check = true;
			continue;
		} else if (a[0] == '-' && a[1]) {
			die_usage("unknown option '%s'", a);
		} else {
			if (!want_input || o->trace)
				die_usage("unexpected argument '%s'", a);
			o->trace = a;
			continue;
		}
		if (i + 1 >= argc)
			die_usage("%s needs a value", a);
		*dst = argv[++i];
	}
	return 0;
}

static void load_config(const struct opts *o, struct sim_config *c)
{
	struct err e = { 0 };

	config_defaults(c);
	if (o->config && config_load_file(c, o->config, &e))
		die_err(&e);
	for (unsigned i = 0; i < o->nsets; i++)
		if (config_set(c, o->sets[i], &e))
			die_err(&e);
	if (config_validate(c, o->nsets ? "--set" : (o->config ? o->config : "built-in"), &e))
		die_err(&e);
}

static struct trace_reader *open_input(const struct opts *o, const struct sim_config *c)
{
	struct err e = { 0 };
	struct trace_reader *r;
	enum trace_format f = TF_AUTO;

	if (o->workload && o->trace)
		die_usage("give a TRACE or -w WORKLOAD, not both%s", "");
	if (o->format) {
		f = trace_format_parse(o->format);
		if (f == TF_NR || f == TF_WORKLOAD)
			die_usage("unknown --format '%s'", o->format);
	}
	if (o->workload || !o->trace)
		r = workload_open(o->workload ? o->workload : "stream:size=16M,iterations=2", c->seed, &e);
	else
		r = trace_open(o->trace, f, &e);
	if (!r)
		die_err(&e);
	return r;
}

/* Atomic output: write to a temporary, rename on success. */
struct outfile {
	FILE *f;
	char path[4096], tmp[4200];
	bool is_stdout;
};

static void out_open(struct outfile *of, const char *path)
{
	memset(of, 0, sizeof(*of));
	if (!strcmp(path, "-")) {
		of->f = stdout;
		of->is_stdout = true;
		return;
	}
	snprintf(of->path, sizeof(of->path), "%s", path);
	snprintf(of->tmp, sizeof(of->tmp), "%s.tmp.%ld", path, (long)getpid());
	of->f = fopen(of->tmp, "w");
	if (of->f) {
		snprintf(pending_tmp, sizeof(pending_tmp), "%s", of->tmp);
		atexit(remove_pending);
	}
	if (!of->f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(EXIT_BAD);
	}
}

static void out_commit(struct outfile *of)
{
	if (of->is_stdout) {
		fflush(stdout);
		return;
	}
	pending_tmp[0] = 0;
	if (fclose(of->f) || rename(of->tmp, of->path)) {
		fprintf(stderr, "%s: %s\n", of->path, strerror(errno));
		unlink(of->tmp);
		exit(1);
	}
}

/* --- run ---------------------------------------------------------------- */

struct run {
	struct sim sims[MAX_MODES];
	const char *mode_names[MAX_MODES];
	unsigned n;
	double wall;
	uint64_t records;
};

static void progress(const struct run *r, double t0, bool final)
{
	double dt = now_seconds() - t0;

	fprintf(stderr, "\r  %llu records, %.1f M records/s%s", (unsigned long long)r->records,
		dt > 0 ? (double)r->records / dt / 1e6 : 0.0, final ? "\n" : "");
}

/* Drive every sim of @r from one pass over @tr. Exits on bad input. */
static void run_all(struct run *r, struct trace_reader *tr, bool quiet, bool check)
{
	struct trace_batch b;
	struct err e = { 0 };
	double t0 = now_seconds(), next = t0 + 1.0;
	bool tty = !quiet && isatty(2);
	int n;
	unsigned long batches = 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while ((n = trace_next(tr, &b, &e)) > 0) {
		for (unsigned i = 0; i < r->n; i++) {
			if (sim_run_batch(&r->sims[i], &b, &e))
				die_err(&e);
			if (check)
				sim_check_invariants(&r->sims[i]);
		}
		r->records += b.n;
		if (interrupted) {
			fprintf(stderr, "\nmmusim: interrupted; no result written\n");
			exit(130);
		}
		if (tty && (++batches & 63) == 0 && now_seconds() >= next) {
			progress(r, t0, false);
			next += 1.0;
		}
	}
	if (n < 0)
		die_err(&e);
	if (tty && r->records > 64 * TRACE_BATCH)
		progress(r, t0, true);
	r->wall = now_seconds() - t0;
	for (unsigned i = 0; i < r->n; i++) {
		sim_finish(&r->sims[i]);
		r->sims[i].st.wall_seconds = r->wall;
	}
}

static unsigned parse_modes(const char *spec, enum os_mode *modes)
{
	char buf[256], *save = NULL, *tok;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum os_mode m = MODE_NR;

		for (int i = 0; i < MODE_NR; i++)
			if (!strcmp(tok, os_mode_name[i]))
				m = (enum os_mode)i;
		if (m == MODE_NR)
			die_usage("--modes: unknown mode '%s' (base, hugetlbfs, thp)", tok);
		for (unsigned j = 0; j < n; j++)
			if (modes[j] == m)
				die_usage("--modes: '%s' given twice", tok);
		modes[n++] = m;
	}
	if (!n)
		die_usage("--modes needs at least one mode%s", "");
	return n;
}

static void setup_run(struct run *r, const struct sim_config *c, const enum os_mode *modes,
		      unsigned n, const char *trace_name)
{
	struct err e = { 0 };

	memset(r, 0, sizeof(*r));
	r->n = n;
	for (unsigned i = 0; i < n; i++) {
		struct sim_config ci = *c;

		ci.mode = modes[i];
		r->mode_names[i] = os_mode_name[modes[i]];
		if (sim_init(&r->sims[i], &ci, &e))
			die_err(&e);
		r->sims[i].trace_name = trace_name;
	}
}

static void write_reports(struct run *r, const struct report_meta *base, const char *json_path,
			  bool quiet, bool compare)
{
	struct report_meta m = *base;

	if (json_path) {
		struct outfile of;
		json_t *root = r->n > 1 || compare ? json_object() : NULL;

		out_open(&of, json_path);
		for (unsigned i = 0; i < r->n; i++) {
			m.mode = r->mode_names[i];
			if (root)
				json_object_set_new(root, m.mode, stats_to_json(&r->sims[i].st, &m));
			else
				stats_write_json(&r->sims[i].st, &m, of.f);
		}
		if (root) {
			json_dumpf(root, of.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
			fputc('\n', of.f);
			json_decref(root);
		}
		out_commit(&of);
	}
	if (quiet || (json_path && !strcmp(json_path, "-")))
		return;
	if (r->n == 1 && !compare) {
		m.mode = r->mode_names[0];
		stats_write_text(&r->sims[0].st, &m, stdout);
	} else {
		struct stats st[MAX_MODES];

		for (unsigned i = 0; i < r->n; i++)
			st[i] = r->sims[i].st;
		printf("mmusim: %s on %s (%s)\n", m.trace, m.config, m.format);
		stats_write_compare(st, r->mode_names, r->n, stdout);
	}
}

static int cmd_run(int argc, char **argv)
{
	struct opts o;
	struct sim_config c;
	struct trace_reader *tr;
	enum os_mode modes[MAX_MODES];
	unsigned n = 1;
	struct run *r = malloc(sizeof(*r));
	struct report_meta m;
	struct outfile tl;

	if (!r)
		return 1;
	parse_opts(argc, argv, &o, true);
	load_config(&o, &c);
	modes[0] = c.mode;
	if (o.modes)
		n = parse_modes(o.modes, modes);
	tr = open_input(&o, &c);
	setup_run(r, &c, modes, n, tr->name);
	if (o.timeline) {
		double ms = 1.0;

		if (o.timeline_ms && (parse_double(o.timeline_ms, &ms) || !(ms > 0)))
			die_usage("--timeline-ms: '%s' is not a positive number of milliseconds", o.timeline_ms);
		out_open(&tl, o.timeline);
		sim_timeline_header(tl.f);
		for (unsigned i = 0; i < n; i++)
			sim_timeline_start(&r->sims[i], tl.f,
					   (cycles_t)(ms * c.freq_mhz * 1000.0));
	}
	run_all(r, tr, o.quiet, o.check);
	if (o.timeline)
		out_commit(&tl);
	m = (struct report_meta){ o.config ? o.config : "built-in", tr->name,
				  trace_format_name[tr->format], NULL };
	write_reports(r, &m, o.json, o.quiet, o.modes != NULL);
	for (unsigned i = 0; i < r->n; i++)
		sim_destroy(&r->sims[i]);
	trace_close(tr);
	free(r);
	return 0;
}

/* --- config show -------------------------------------------------------- */

static int cmd_config(int argc, char **argv)
{
	struct opts o;
	struct sim_config c;

	if (argc < 1 || strcmp(argv[0], "show"))
		die_usage("config: expected 'show'%s", "");
	parse_opts(argc - 1, argv + 1, &o, false);
	load_config(&o, &c);
	config_write_yaml(&c, stdout);
	return 0;
}

/* --- trace info / convert / gen ----------------------------------------- */

struct info {
	uint64_t kinds[R_KIND_NR], ev[EV_NR], insns;
	uint64_t lo, hi;
	/* distinct 4 KiB pages: open-addressing hash set, grows with the pages touched */
	uint64_t *set;
	size_t cap, n;
};

static void info_add_page(struct info *in, uint64_t vpn)
{
	size_t i;

	if (in->n * 2 >= in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 1024;
		uint64_t *set = malloc(cap * sizeof(*set));

		if (!set) {
			fprintf(stderr, "mmusim: out of memory\n");
			exit(1);
		}
		memset(set, 0xff, cap * sizeof(*set));
		for (size_t j = 0; j < in->cap; j++)
			if (in->set[j] != UINT64_MAX) {
				size_t k = (size_t)((in->set[j] * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);

				while (set[k] != UINT64_MAX)
					k = (k + 1) & (cap - 1);
				set[k] = in->set[j];
			}
		free(in->set);
		in->set = set;
		in->cap = cap;
	}
	i = (size_t)((vpn * 0x9E3779B97F4A7C15ULL) >> 17) & (in->cap - 1);
	while (in->set[i] != UINT64_MAX) {
		if (in->set[i] == vpn)
			return;
		i = (i + 1) & (in->cap - 1);
	}
	in->set[i] = vpn;
	in->n++;
}

static int cmd_trace(int argc, char **argv)
{
	struct err e = { 0 };
	enum trace_format f = TF_AUTO;
	const char *fmt = NULL, *out = NULL, *wl = NULL;
	const char *pos[2] = { NULL, NULL };
	unsigned npos = 0;
	struct trace_reader *tr;
	struct trace_batch b;
	int n;

	if (argc < 1)
		die_usage("trace: expected info, convert or gen%s", "");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc)
			fmt = argv[++i];
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "-w") && i + 1 < argc)
			wl = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1])
			die_usage("trace: unknown option '%s'", argv[i]);
		else if (npos < 2)
			pos[npos++] = argv[i];
		else
			die_usage("trace: unexpected argument '%s'", argv[i]);
	}
	if (fmt) {
		f = trace_format_parse(fmt);
		if (f == TF_NR || f == TF_WORKLOAD)
			die_usage("unknown --format '%s'", fmt);
	}
	if (!strcmp(argv[0], "info")) {
		struct info in = { .lo = UINT64_MAX };

		if (npos != 1)
			die_usage("trace info needs one TRACE%s", "");
		tr = trace_open(pos[0], f, &e);
		if (!tr)
			die_err(&e);
		while ((n = trace_next(tr, &b, &e)) > 0)
			for (size_t i = 0; i < b.n; i++) {
				const struct trace_rec *r = &b.recs[i];

				in.kinds[r->kind]++;
				if (r->kind == R_EVENT) {
					in.ev[b.ev[r->size].kind]++;
				} else if (r->kind == R_INSNS) {
					in.insns += r->size;
				} else {
					uint64_t last = r->addr + r->size - 1;

					if (r->addr < in.lo)
						in.lo = r->addr;
					if (last > in.hi)
						in.hi = last;
					for (uint64_t p = r->addr >> PAGE_SHIFT; p <= last >> PAGE_SHIFT; p++)
						info_add_page(&in, p);
				}
			}
		if (n < 0)
			die_err(&e);
		printf("trace:        %s\nformat:       %s\n", tr->name, trace_format_name[tr->format]);
		printf("records:      %llu ifetch, %llu load, %llu store, %llu modify, %llu events\n",
		       (unsigned long long)in.kinds[R_IFETCH], (unsigned long long)in.kinds[R_LOAD],
		       (unsigned long long)in.kinds[R_STORE], (unsigned long long)in.kinds[R_MODIFY],
		       (unsigned long long)in.kinds[R_EVENT]);
		printf("instructions: %llu\n", (unsigned long long)(in.kinds[R_IFETCH] + in.insns));
		printf("pages:        %llu distinct 4 KiB pages (%llu KiB)\n", (unsigned long long)in.n,
		       (unsigned long long)in.n * 4);
		if (in.lo <= in.hi)
			printf("addresses:    0x%llx - 0x%llx\n", (unsigned long long)in.lo,
			       (unsigned long long)in.hi);
		printf("events:      ");
		for (int k = 0; k < EV_NR; k++)
			printf(" %s %llu", ev_kind_name[k], (unsigned long long)in.ev[k]);
		printf("\n");
		free(in.set);
		trace_close(tr);
		return 0;
	}
	if (!strcmp(argv[0], "convert") || !strcmp(argv[0], "gen")) {
		struct mtr_writer *w;
		bool gen = !strcmp(argv[0], "gen");

		if (gen) {
			if (!wl || !out || npos)
				die_usage("trace gen needs -w WORKLOAD -o OUT%s", "");
			tr = workload_open(wl, 1, &e);
		} else {
			if (npos != 2)
				die_usage("trace convert needs IN and OUT%s", "");
			out = pos[1];
			tr = trace_open(pos[0], f, &e);
		}
		if (!tr)
			die_err(&e);
		w = mtr_writer_open(out, &e);
		if (!w)
			die_err(&e);
		while ((n = trace_next(tr, &b, &e)) > 0)
			if (mtr_writer_put(w, &b, &e)) {
				mtr_writer_close(w, false, NULL);
				die_err(&e);
			}
		if (n < 0) {
			mtr_writer_close(w, false, NULL);
			die_err(&e);
		}
		if (mtr_writer_close(w, true, &e))
			die_err(&e);
		trace_close(tr);
		return 0;
	}
	die_usage("trace: unknown subcommand '%s'", argv[0]);
}

/* mkdir -p: 0, or -1 with errno. */
static int mkdir_p(const char *dir)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0777) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

/* --- demo --------------------------------------------------------------- */

/*
 * The embedded default: STREAM triad and GUPS on the article's machine, base pages
 * against hugetlbfs, as the seed mail compares them. Sizes: STREAM arrays of
 * 32 MiB (16x the default STLB's 2 MiB reach, so translation matters), GUPS over
 * a 256 MiB table; together well under a minute.
 */
static int cmd_demo(int argc, char **argv)
{
	static const char *const workloads[] = {
		"stream:size=32M,iterations=2",
		"gups:size=256M,updates=4000000",
	};
	static const char *const short_name[] = { "STREAM", "GUPS" };
	const char *outdir = "plots/out";
	enum os_mode modes[] = { MODE_BASE, MODE_HUGETLBFS, MODE_THP };
	unsigned nm = ARRAY_SIZE(modes);
	struct sim_config c;
	char data[2048], path[4096];
	size_t len = 0;
	struct err e = { 0 };
	struct run *r = malloc(sizeof(*r));

	if (!r)
		return 1;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--outdir") && i + 1 < argc)
			outdir = argv[++i];
		else
			die_usage("demo: unexpected argument '%s'", argv[i]);
	}
	config_defaults(&c);
	len += (size_t)snprintf(data + len, sizeof(data) - len, "workload");
	for (unsigned i = 0; i < nm; i++)
		len += (size_t)snprintf(data + len, sizeof(data) - len, " %s", os_mode_name[modes[i]]);
	len += (size_t)snprintf(data + len, sizeof(data) - len, "\n");
	printf("mmusim demo: %s, %s\n\n", c.cpu_name, "base pages vs hugetlbfs vs THP");
	for (size_t w = 0; w < ARRAY_SIZE(workloads); w++) {
		struct trace_reader *tr = workload_open(workloads[w], c.seed, &e);
		struct stats st[MAX_MODES];

		if (!tr)
			die_err(&e);
		setup_run(r, &c, modes, nm, tr->name);
		run_all(r, tr, true, false);
		printf("%s (%s)\n", short_name[w], workloads[w]);
		for (unsigned i = 0; i < nm; i++)
			st[i] = r->sims[i].st;
		stats_write_compare(st, r->mode_names, nm, stdout);
		printf("\n");
		len += (size_t)snprintf(data + len, sizeof(data) - len, "%s", short_name[w]);
		for (unsigned i = 0; i < nm; i++)
			len += (size_t)snprintf(data + len, sizeof(data) - len, " %.2f",
						100.0 * (double)st[i].cyc_translation / (double)st[i].cyc_total);
		len += (size_t)snprintf(data + len, sizeof(data) - len, "\n");
		for (unsigned i = 0; i < nm; i++)
			sim_destroy(&r->sims[i]);
		trace_close(tr);
	}
	if (mkdir_p(outdir)) {
		fprintf(stderr, "%s: %s\n", outdir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/demo.png", outdir);
	if (plot_bars(data, "Address translation share of cycles (Nehalem-class, article cpuid listing)",
		      "translation cycles / total cycles (%)", path, &e)) {
		char buf[1024];

		err_format(&e, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
		return 1;
	}
	printf("plot: %s\n", path);
	free(r);
	return 0;
}

/* --- capture ------------------------------------------------------------- */

static int cmd_capture(int argc, char **argv)
{
	const char *out = NULL;
	struct err e = { 0 };
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else
			die_usage("capture: unexpected argument '%s' (PROGRAM goes after --)", argv[i]);
	}
	if (i + 1 >= argc)
		die_usage("capture: no PROGRAM after --%s", "");
	if (capture_run(out, argv + i + 1, &e)) {
		char buf[1024];

		/* the program or valgrind failed: not bad input to mmusim, exit 1 */
		err_format(&e, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "help";

	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(cmd, "config"))
		return cmd_config(argc - 2, argv + 2);
	if (!strcmp(cmd, "trace"))
		return cmd_trace(argc - 2, argv + 2);
	if (!strcmp(cmd, "demo"))
		return cmd_demo(argc - 2, argv + 2);
	if (!strcmp(cmd, "capture"))
		return cmd_capture(argc - 2, argv + 2);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "sweep") || !strcmp(cmd, "merge") || !strcmp(cmd, "plot")) {
		fprintf(stderr, "mmusim: '%s' is not available in this version yet\n", cmd);
		return EXIT_BAD;
	}
	die_usage("unknown command '%s'", cmd);
}
