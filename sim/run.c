/*
 * run.c - one `mmusim run` (run.h): options to config, input, simulators and
 * reports. The command line's `run` and `config show` and every sweep point go
 * through the same parser, so a point's report is its command's; `run` then
 * drives the public API (mmusim.c), whose machines are run_setup()'s and whose
 * replays are run_drive()'s, as a sweep point's are.
 */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "outfile.h"
#include "provenance.h"
#include "run.h"
#include "trace_mux.h"
#include "util.h"
#include "workload.h"

enum { OPT_FORMAT = 256, OPT_MODES, OPT_JSON, OPT_TIMELINE, OPT_TIMELINE_MS, OPT_STEPS, OPT_SET, OPT_LABEL,
       OPT_SWEEP_SET, OPT_CHECK, OPT_VMAS, OPT_VMAS_CSV,
       OPT_ROI /* OPT_ROI + i: roi_opt[i] */ };

/* The region of interest's options: --skip-refs N is --set roi.skip_refs=N (roi.c). */
static const char *const roi_opt[6] = { "skip-refs", "warmup-refs", "sim-refs",
					"skip-insns", "warmup-insns", "sim-insns" };

static const struct option run_longopts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "workload", required_argument, NULL, 'w' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "modes", required_argument, NULL, OPT_MODES },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "timeline", required_argument, NULL, OPT_TIMELINE },
	{ "timeline-ms", required_argument, NULL, OPT_TIMELINE_MS },
	{ "steps", required_argument, NULL, OPT_STEPS },
	{ "set", required_argument, NULL, OPT_SET },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "sweep-set", required_argument, NULL, OPT_SWEEP_SET },
	{ "quiet", no_argument, NULL, 'q' },
	{ "check-invariants", no_argument, NULL, OPT_CHECK },
	{ "skip-refs", required_argument, NULL, OPT_ROI + 0 },
	{ "warmup-refs", required_argument, NULL, OPT_ROI + 1 },
	{ "sim-refs", required_argument, NULL, OPT_ROI + 2 },
	{ "skip-insns", required_argument, NULL, OPT_ROI + 3 },
	{ "warmup-insns", required_argument, NULL, OPT_ROI + 4 },
	{ "sim-insns", required_argument, NULL, OPT_ROI + 5 },
	{ "vmas", optional_argument, NULL, OPT_VMAS },
	{ "vmas-csv", required_argument, NULL, OPT_VMAS_CSV },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage(struct err *e, const char *fmt, const char *arg)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->msg, sizeof(e->msg), fmt, arg);
	return RUN_EUSAGE;
}

/* --label k=v and --sweep-set k=v (= --set k=v plus --label k=v). */
static int add_label(struct run_opts *o, const char *opt, const char *kv, bool set, struct err *e)
{
	if (!strchr(kv, '=') || kv[0] == '=')
		return usage(e, "%s needs key=value", opt);
	if (o->nlabels == RUN_MAX_SETS || o->nsets == RUN_MAX_SETS)
		return usage(e, "too many %s options", opt);
	o->labels[o->nlabels++] = kv;
	if (set)
		o->sets[o->nsets++] = kv;
	return 0;
}

/*
 * --skip-refs N & co.: N a decimal count (0: none), kept as a --set of its
 * roi.* key. A bad value or a phase given in both units: -1 with @e, one line.
 */
static int add_roi(struct run_opts *o, unsigned i, const char *val, struct err *e)
{
	const char *p = val;
	char key[16];

	while (*p >= '0' && *p <= '9')
		p++;
	if (!*val || *p || p - val > 20 || (p - val == 20 && strcmp(val, "18446744073709551615") > 0))
		return err_set(e, NULL, 0, 0, "--%s: expected a count (a non-negative integer), got '%s'",
			       roi_opt[i], val);
	if (o->roi_given[(i + 3) % 6])
		return err_set(e, NULL, 0, 0, "--%s and --%s: give one, not both", roi_opt[(i + 3) % 6],
			       roi_opt[i]);
	if (o->nsets == RUN_MAX_SETS)
		return usage(e, "too many --set options%s", "");
	snprintf(key, sizeof(key), "%s", roi_opt[i]);
	key[strcspn(key, "-")] = '_';
	snprintf(o->roi_sets[i], sizeof(o->roi_sets[i]), "roi.%s=%s", key, val);
	o->roi_given[i] = true;
	o->sets[o->nsets++] = o->roi_sets[i];
	return 0;
}

/* A missing value: the message `run` has always given for that option. */
static int missing_value(char **argv, struct err *e)
{
	char buf[64];
	const char *a = getopt_culprit(argv, buf, sizeof(buf));

	if (optopt == OPT_SET)
		return usage(e, "--set needs path=value", "");
	if (optopt == OPT_LABEL || optopt == OPT_SWEEP_SET)
		return usage(e, "%s needs key=value", a);
	return usage(e, "%s needs a value", a);
}

int run_set_arg(int argc, char **argv, int next, const char *arg, struct err *e)
{
	if (strchr(arg, '=') && arg[0] != '=')
		return 0;
	memset(e, 0, sizeof(*e));
	if (next < argc && argv[next][0] != '-' && !strchr(arg, '='))
		snprintf(e->msg, sizeof(e->msg), "--set %.100s: expected path=value (--set %.100s=%.100s?)",
			 arg, arg, argv[next]);
	else
		snprintf(e->msg, sizeof(e->msg), "--set %.100s: expected path=value", arg);
	return RUN_EUSAGE;
}

/* --vmas (the top 10) or --vmas=N (N >= 1) mappings by walk cycles. */
static int vmas_opt(struct run_opts *o, const char *arg, struct err *e)
{
	char *end;
	unsigned long n;

	o->vmas_top = 10;
	if (!arg)
		return 0;
	n = strtoul(arg, &end, 10);
	if (!*arg || *end || n == 0 || n > 1000000 || *arg == '-' || *arg == '+')
		return usage(e, "--vmas=N: '%s' is not a number of rows from 1 to 1000000", arg);
	o->vmas_top = (unsigned)n;
	return 0;
}

/*
 * `run A B ...`: the processes list of A, B, ... with the defaults, as the
 * last --set (so it is a config key like any other: config show, config_hash).
 */
static int procs_set(struct run_opts *o, struct err *e)
{
	size_t len = (size_t)snprintf(o->procs_set, sizeof(o->procs_set), "processes=[");

	for (unsigned i = 0; i < o->ntraces; i++) {
		char q[4 * PROC_TRACE_MAX + 8];

		if (strlen(o->traces[i]) >= PROC_TRACE_MAX)
			return usage(e, "TRACE '%.200s...' is longer than 255 bytes", o->traces[i]);
		config_quote(o->traces[i], q, sizeof(q));
		len += (size_t)snprintf(o->procs_set + len, len < sizeof(o->procs_set) ?
					sizeof(o->procs_set) - len : 0, "%s%s", i ? ", " : "", q);
	}
	len += (size_t)snprintf(o->procs_set + len, len < sizeof(o->procs_set) ?
				sizeof(o->procs_set) - len : 0, "]");
	if (len >= sizeof(o->procs_set))
		return usage(e, "the TRACE arguments are too long together%s", "");
	if (o->nsets == RUN_MAX_SETS)
		return usage(e, "too many --set options%s", "");
	o->sets[o->nsets++] = o->procs_set;
	return 0;
}

int run_opts_parse(int argc, char **argv, struct run_opts *o, bool want_input, struct err *e)
{
	char buf[64];
	int c;

	memset(o, 0, sizeof(*o));
	optind = 0; /* glibc: start afresh (sweep workers parse one command per point) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:w:qh", run_longopts, NULL)) != -1) {
		int rc = 0;

		switch (c) {
		case 'c': o->config = optarg; break;
		case 'w': o->workload = optarg; break;
		case OPT_FORMAT: o->format = optarg; break;
		case OPT_MODES: o->modes = optarg; break;
		case OPT_JSON: o->json = optarg; break;
		case OPT_TIMELINE: o->timeline = optarg; break;
		case OPT_TIMELINE_MS: o->timeline_ms = optarg; break;
		case OPT_STEPS: o->steps = optarg; break;
		case OPT_SET:
			if (o->nsets == RUN_MAX_SETS)
				return usage(e, "too many --set options", "");
			rc = run_set_arg(argc, argv, optind, optarg, e);
			o->sets[o->nsets++] = optarg;
			break;
		case OPT_LABEL:
		case OPT_SWEEP_SET:
			rc = add_label(o, c == OPT_LABEL ? "--label" : "--sweep-set", optarg,
				       c == OPT_SWEEP_SET, e);
			break;
		case 'q': o->quiet = true; break;
		case OPT_CHECK: o->check = true; break;
		case OPT_VMAS: rc = vmas_opt(o, optarg, e); break;
		case OPT_VMAS_CSV: o->vmas_csv = optarg; break;
		case 'h': return RUN_HELP;
		case ':': return missing_value(argv, e);
		default:
			if (c >= OPT_ROI && c < OPT_ROI + 6) {
				rc = add_roi(o, (unsigned)(c - OPT_ROI), optarg, e);
				break;
			}
			return usage(e, "unknown option '%s'", getopt_culprit(argv, buf, sizeof(buf)));
		}
		if (rc)
			return rc;
	}
	for (int i = optind; i < argc; i++) {
		if (!want_input || o->ntraces == SIM_PROCS_MAX)
			return usage(e, o->ntraces == SIM_PROCS_MAX ? "more than 64 TRACEs (processes): '%s'"
				     : "unexpected argument '%s'", argv[i]);
		o->traces[o->ntraces++] = argv[i];
	}
	if (o->ntraces == 1)
		o->trace = o->traces[0];
	if (o->ntraces > 1 && procs_set(o, e))
		return RUN_EUSAGE;
	o->timeline_interval = 1.0;
	if (o->timeline_ms && (parse_double(o->timeline_ms, &o->timeline_interval) ||
			       !(o->timeline_interval >= SIM_TIMELINE_MIN_MS) ||
			       !isfinite(o->timeline_interval)))
		return usage(e, "--timeline-ms: '%s' is not a number of milliseconds from 0.001 (1 us) up",
			     o->timeline_ms);
	if (o->workload && o->ntraces)
		return usage(e, "give a TRACE or -w WORKLOAD, not both%s", "");
	if (o->format && (trace_format_parse(o->format) == TF_NR ||
			  trace_format_parse(o->format) == TF_WORKLOAD))
		return usage(e, "unknown --format '%s'", o->format);
	return 0;
}

int run_traces_check(const struct run_opts *o, struct err *e)
{
	for (unsigned i = 0; o->ntraces > 1 && i < o->ntraces; i++) {
		struct stat st;

		if (!strcmp(o->traces[i], "-"))
			return err_set(e, NULL, 0, 0, "TRACE '-': standard input cannot be one of several "
				       "processes (it can be read only once): give a file");
		if (stat(o->traces[i], &st))
			return err_set(e, o->traces[i], 0, 0, "%s", strerror(errno));
		if (S_ISDIR(st.st_mode))
			return err_set(e, o->traces[i], 0, 0, "%s", strerror(EISDIR));
	}
	return 0;
}

int run_config_load(const struct run_opts *o, struct sim_config *c, struct err *e)
{
	if (run_traces_check(o, e))
		return -1;
	config_defaults(c);
	if (o->config && config_load_file(c, o->config, e))
		return -1;
	for (unsigned i = 0; i < o->nsets; i++)
		if (config_set(c, o->sets[i], e))
			return -1;
	return config_validate(c, o->nsets ? "--set" : (o->config ? o->config : "built-in"), e);
}

int run_modes_parse(const char *spec, enum os_mode *modes, struct err *e)
{
	char buf[256], *save = NULL, *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum os_mode m = MODE_NR;

		for (int i = 0; i < MODE_NR; i++)
			if (!strcmp(tok, os_mode_name[i]))
				m = (enum os_mode)i;
		if (m == MODE_NR)
			return usage(e, "--modes: unknown mode '%s' (base, hugetlbfs, thp)", tok);
		for (int j = 0; j < n; j++)
			if (modes[j] == m)
				return usage(e, "--modes: '%s' given twice", tok);
		modes[n++] = m;
	}
	if (!n)
		return usage(e, "--modes needs at least one mode%s", "");
	return n;
}

struct trace_reader *run_input_open(const struct run_opts *o, const struct sim_config *c, int *rc,
				    struct err *e)
{
	struct trace_reader *r;
	enum trace_format f = TF_AUTO;

	*rc = RUN_EUSAGE;
	if (o->workload && o->trace) {
		usage(e, "give a TRACE or -w WORKLOAD, not both%s", "");
		return NULL;
	}
	if (o->format) {
		f = trace_format_parse(o->format);
		if (f == TF_NR || f == TF_WORKLOAD) {
			usage(e, "unknown --format '%s'", o->format);
			return NULL;
		}
	}
	if (c->nprocs && (o->workload || o->trace)) {
		usage(e, "the config's processes: list is the input: give no %s", o->trace ? "TRACE" :
		      "-w WORKLOAD");
		return NULL;
	}
	*rc = -1;
	if (c->nprocs)
		r = mux_open_config(c, f, e);
	else if (o->workload || !o->trace)
		r = workload_open_kernel(o->workload ? o->workload : RUN_DEFAULT_WORKLOAD, c->seed,
					 c->kernel, e);
	else if ((r = trace_open(o->trace, f, e)))
		r = layout_open(r, c, e);
	if (r)
		*rc = 0;
	return r;
}

int run_input_id(const struct run_opts *o, const struct sim_config *c,
		 const struct trace_reader *tr, char *buf, struct err *e)
{
	const char *wl = o->workload || !o->trace ? (o->workload ? o->workload : RUN_DEFAULT_WORKLOAD)
						  : NULL;
	uint64_t size, hi, lo;

	if (c->nprocs)
		return provenance_processes_id(c, o->format, buf, PROVENANCE_ID_MAX, e);
	if (!wl && strcmp(o->trace, "-") && trace_content_hash(tr, &size, &hi, &lo)) {
		provenance_content_id(size, hi, lo, o->format, buf, PROVENANCE_ID_MAX);
		return 0;
	}

	return provenance_input_id(o->trace, wl, o->format, buf, PROVENANCE_ID_MAX, e);
}

int run_setup(struct run *r, const struct sim_config *c, const enum os_mode *modes, unsigned n,
	      const char *trace_name, struct err *e)
{
	memset(r, 0, sizeof(*r));
	r->sims = calloc(n, sizeof(*r->sims));
	r->mode_names = calloc(n, sizeof(*r->mode_names));
	if (!r->sims || !r->mode_names) {
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	for (unsigned i = 0; i < n; i++) {
		struct sim_config ci = *c;

		ci.mode = modes[i];
		r->mode_names[i] = os_mode_name[modes[i]];
		if (sim_init(&r->sims[i], &ci, e))
			return -1;
		r->n = i + 1; /* run_free() destroys the ones made */
		r->sims[i].k.trace_name = trace_name;
	}
	return 0;
}

int run_drive(struct run *r, struct trace_reader *tr, const struct pool_opts *o, struct err *e)
{
	struct pool_opts po = *o;
	double t0 = now_seconds();
	int rc;

	if (r->threads)
		po.threads = r->threads;
	rc = pool_run(r->sims, r->n, tr, &po, &r->records, e);
	r->wall = now_seconds() - t0;
	if (rc)
		return rc;
	for (unsigned i = 0; i < r->n; i++) {
		r->sims[i].st.wall_seconds = r->wall;
		r->sims[i].st.max_rss_bytes = max_rss_bytes();
	}
	return 0;
}

void run_free(struct run *r)
{
	for (unsigned i = 0; i < r->n; i++)
		sim_destroy(&r->sims[i]);
	free(r->sims);
	free(r->mode_names);
	r->sims = NULL;
	r->mode_names = NULL;
	r->n = 0;
}

int run_add_processes(struct sim *s, void *json)
{
	struct stats_proc *p;

	if (s->nproc < 2)
		return 0;
	p = calloc(s->nproc, sizeof(*p));
	if (!p)
		return -1;
	sim_proc_report(s, p);
	json_object_set_new(json, "processes", stats_procs_to_json(p, s->nproc));
	free(p);
	return 0;
}

int run_write_procs(struct sim *s, FILE *out)
{
	struct stats_proc *p;

	if (s->nproc < 2)
		return 0;
	p = calloc(s->nproc, sizeof(*p));
	if (!p)
		return -1;
	sim_proc_report(s, p);
	fputc('\n', out);
	stats_write_procs(p, s->nproc, out);
	free(p);
	return 0;
}

/* The JSON report(s) to @path: 0, -1 (bad path) or POOL_EHOST, with @e. */
static int write_json(struct run *r, struct report_meta *m, const char *path, bool compare,
		      struct err *e)
{
	struct outfile of;
	json_t *root = r->n > 1 || compare ? json_object() : NULL;
	char hash[MODE_NR][17];
	FILE *f;

	if (outfile_open(&of, path, 0, e)) {
		json_decref(root);
		return -1;
	}
	f = outfile_stream(&of);
	if (!f) {
		outfile_abort(&of);
		json_decref(root);
		err_host(e, path, 0, 0, "out of memory");
		return POOL_EHOST;
	}
	for (unsigned i = 0; i < r->n && i < MODE_NR; i++) {
		m->mode = r->mode_names[i];
		provenance_config_hash(&r->sims[i].cfg, hash[i]);
		m->config_hash = hash[i];
		json_t *j = stats_to_json(&r->sims[i].st, m);

		json_object_set_new(j, "vmas", vmas_to_json(&r->sims[i].k)); /* vmas.c */
		if (run_add_processes(&r->sims[i], j)) {
			json_decref(j);
			json_decref(root);
			outfile_abort(&of);
			err_host(e, path, 0, 0, "out of memory");
			return POOL_EHOST;
		}
		if (root) {
			json_object_set_new(root, m->mode, j);
		} else {
			json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
			fputc('\n', f);
			json_decref(j);
		}
	}
	if (root) {
		json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', f);
		json_decref(root);
	}
	return outfile_commit(&of, e) ? POOL_EHOST : 0;
}

int run_write_reports(struct run *r, const struct report_meta *base, const char *json_path,
		      bool quiet, bool compare, struct err *e)
{
	struct report_meta m = *base;
	int rc;

	m.version = provenance_version();
	m.build_id = provenance_build_id();
	if (json_path && (rc = write_json(r, &m, json_path, compare, e)))
		return rc;
	if (quiet || (json_path && !strcmp(json_path, "-")))
		return 0;
	if (r->n == 1 && !compare) {
		m.mode = r->mode_names[0];
		stats_write_text(&r->sims[0].st, &m, stdout);
		if (run_write_procs(&r->sims[0], stdout)) {
			err_host(e, "mmusim", 0, 0, "out of memory");
			return POOL_EHOST;
		}
	} else {
		struct stats st[MODE_NR];

		for (unsigned i = 0; i < r->n && i < MODE_NR; i++)
			st[i] = r->sims[i].st;
		printf("mmusim: %s on %s (%s)\n", m.trace, m.config, m.format);
		stats_write_roi(&st[0], stdout);
		stats_write_compare(st, r->mode_names, r->n, stdout);
	}
	return 0;
}
