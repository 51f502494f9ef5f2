/*
 * sweep.c - sweep files, point expansion and the CSV merge (sweep.h).
 *
 * Each point is one self-contained `mmusim run` command; local sweeps run those
 * same points (sweep_run.c), so a sweep run with any -j, sharded, or spread over
 * machines with GNU parallel or Slurm and merged, gives the same CSV.
 *
 * The YAML is read with libyaml's document loader: the schema is three levels
 * deep and only scalars are read from it, so anchors and aliases cannot expand
 * into anything large. Statistics (mean, sample standard deviation, Student's t
 * quantile) come from GSL.
 *
 * Every input is checked at load, before any point runs (check_inputs()): a
 * workload spec by the workload parser, a trace by opening it; an error names
 * the list item's line and column. A worker that met a bad input minutes into
 * a sweep would leave only an empty OUT.csv.d/.
 *
 * Workload parameters as axes (workload.KEY): not config keys, so they are not
 * applied to a config but written into each point's -w spec
 * (workload_with_param()), and recorded as a --label holding the value as a
 * number, so the CSV column is numeric. Each combination of their values is a
 * source of its own (sweep_point_source()): sweep_run.c never lets two values
 * share a decode, and the report's input identity (workload:SPEC) differs, so a
 * resumed sweep cannot take one value's report for another's. Every spec they
 * make is checked at load (check_workload_axes()).
 */
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config.h"
#include "stats.h"
#include "sweep.h"
#include "util.h"
#include "trace.h"
#include "workload.h"

#define SWEEP_MAX_POINTS 1000000
#define SWEEP_MAX_REPEAT 1000

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort(); /* host OOM on a short string: nothing sensible to do */
	return d;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		abort();
	return q;
}

static void push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

/* The per-input set: lists (input: items with set:). */
static void free_input_sets(struct sweep *sw)
{
	for (size_t i = 0; i < sw->ninput_sets; i++) {
		for (size_t j = 0; j < sw->input_nsets[i]; j++)
			free(sw->input_sets[i][j]);
		free(sw->input_sets[i]);
	}
	free(sw->input_sets);
	free(sw->input_nsets);
	sw->input_sets = NULL;
	sw->input_nsets = NULL;
	sw->ninput_sets = 0;
}

void sweep_free(struct sweep *sw)
{
	free(sw->path);
	free(sw->config);
	for (size_t i = 0; i < sw->ninputs; i++) {
		if (sw->inputs) /* (NULL until the inputs are resolved) */
			free(sw->inputs[i]);
		free(sw->input_names[i]);
	}
	free(sw->inputs);
	free(sw->input_names);
	free(sw->is_wl);
	free(sw->format);
	for (size_t i = 0; i < sw->nsets; i++)
		free(sw->sets[i]);
	free(sw->sets);
	free_input_sets(sw);
	for (size_t i = 0; i < sw->naxes; i++) {
		free(sw->axes[i].key);
		for (size_t j = 0; j < sw->axes[i].nvals; j++) {
			free(sw->axes[i].vals[j]);
			if (sw->axes[i].nums)
				free(sw->axes[i].nums[j]);
		}
		for (size_t j = 0; sw->axes[i].names && j < sw->axes[i].nvals; j++)
			free(sw->axes[i].names[j]);
		free(sw->axes[i].vals);
		free(sw->axes[i].nums);
		free(sw->axes[i].names);
	}
	free(sw->axes);
	memset(sw, 0, sizeof(*sw));
}

/* --- loading -------------------------------------------------------------- */

struct yctx {
	yaml_document_t *d;
	const char *path;
	struct err *e;
};

static int yerr(const struct yctx *y, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int yerr(const struct yctx *y, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[448];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(y->e, y->path, n ? (unsigned long)n->start_mark.line + 1 : 0,
		       n ? (unsigned long)n->start_mark.column + 1 : 0, "%s", msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar or a sequence of scalars, as a list. */
static int scalar_list(const struct yctx *y, const yaml_node_t *n, const char *what, char ***out,
		       size_t *nout)
{
	if (n->type == YAML_SCALAR_NODE) {
		push(out, nout, scalar(n));
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return yerr(y, n, "%s: expected a value or a list of values", what);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *c = yaml_document_get_node(y->d, *it);

		if (!scalar(c))
			return yerr(y, c, "%s: list items must be plain values", what);
		push(out, nout, scalar(c));
	}
	if (!*nout)
		return yerr(y, n, "%s: empty list", what);
	return 0;
}

/* @rel resolved against the directory of @base (unless absolute). */
static char *resolve(const char *base, const char *rel)
{
	char *b = xstrdup(base), *dir = dirname(b), *out;
	size_t n;

	if (rel[0] == '/' || !strcmp(dir, ".")) {
		free(b);
		return xstrdup(rel);
	}
	n = strlen(dir) + strlen(rel) + 2;
	out = xrealloc(NULL, n);
	snprintf(out, n, "%s/%s", dir, rel);
	free(b);
	return out;
}

/* Apply one "key=value" to @c; errors point at @at in the sweep file. */
static int apply(const struct yctx *y, struct sim_config *c, const char *key, const char *val,
		 const yaml_node_t *at)
{
	size_t n = strlen(key) + strlen(val) + 2;
	char *kv = xrealloc(NULL, n);
	struct err e2 = { 0 };
	int r;

	snprintf(kv, n, "%s=%s", key, val);
	r = config_set(c, kv, &e2);
	free(kv);
	if (r)
		return yerr(y, at, "%s", e2.msg);
	return 0;
}

/* The node of input @i in @n (a list, or the one scalar), for its line and column. */
static const yaml_node_t *input_node(const struct yctx *y, const yaml_node_t *n, size_t i)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return n;
	return yaml_document_get_node(y->d, n->data.sequence.items.start[i]);
}

/* A bare "key=value": no "NAME:" before the first '='. */
static bool bare_kv(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq && !memchr(s, ':', (size_t)(eq - s));
}

/*
 * A flow list splits at every comma, so `[stream:size=16M, gups:size=64M,updates=1000]`
 * is three items, the last a bare "updates=1000". Report the first such item,
 * with the spec it most likely belonged to -- the item before it and the bare
 * items that follow -- quoted.
 */
static int check_bare_items(const struct sweep *sw, const struct yctx *y, const yaml_node_t *n)
{
	for (size_t i = 0; i < sw->ninputs; i++) {
		const char *s = sw->input_names[i];
		const yaml_node_t *at = input_node(y, n, i);
		char join[384];
		size_t len;

		if (!bare_kv(s))
			continue;
		if (!i || n->type != YAML_SEQUENCE_NODE ||
		    n->data.sequence.style != YAML_FLOW_SEQUENCE_STYLE)
			return yerr(y, at, "workload: '%s' is not a workload spec (NAME:key=value,...)",
				    s);
		len = (size_t)snprintf(join, sizeof(join), "%s", sw->input_names[i - 1]);
		for (size_t j = i; j < sw->ninputs && len < sizeof(join); j++) {
			const char *t = sw->input_names[j];

			if (j > i && !bare_kv(t))
				break;
			len += (size_t)snprintf(join + len, sizeof(join) - len, ",%s", t);
		}
		return yerr(y, at, "workload: '%s' is not a workload spec; a flow list [...] "
			    "splits at every comma, so quote a spec that holds commas: \"%s\"", s, join);
	}
	return 0;
}

/*
 * Whether @path opens as a trace of @fmt, as the workers will open it; 0 or -1
 * with @e ("PATH: No such file or directory", "PATH: cannot detect the trace
 * format (use --format)", ...). A regular file is opened with trace_open(): a
 * constant cost whatever the trace's size (the decompression thread starts and
 * fills at most TIO_NBUF chunks of TIO_CHUNK bytes, the first one is probed),
 * so a missing, unreadable or undetectable trace, or a corrupt compressed
 * header, is found here. Anything else -- a pipe such as bash's <(...), a
 * device, "-" -- can be read only once, so it is only stat()ed and access()ed.
 */
static int check_trace(const char *path, enum trace_format fmt, struct err *e)
{
	struct trace_reader *r;
	struct stat st;

	if (!strcmp(path, "-"))
		return 0;
	if (stat(path, &st))
		return err_set(e, path, 0, 0, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return err_set(e, path, 0, 0, "%s", strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return access(path, R_OK) ? err_set(e, path, 0, 0, "%s", strerror(errno)) : 0;
	r = trace_open(path, fmt, e);
	if (!r)
		return -1;
	trace_close(r);
	return 0;
}

static bool has_wl_axes(const struct sweep *sw)
{
	for (size_t i = 0; i < sw->naxes; i++)
		if (sw->axes[i].nums)
			return true;
	return false;
}

/*
 * The spec input @in reads at the workload.KEY values of @idx (per axis; NULL:
 * each axis's first value); with @strip, the swept keys removed instead (the
 * CSV's input column). Caller frees.
 */
static char *point_spec(const struct sweep *sw, size_t in, const size_t *idx, bool strip)
{
	char *spec = xstrdup(strip ? sw->input_names[in] : sw->inputs[in]), *next;
	struct err e = { 0 };

	for (size_t i = 0; i < sw->naxes; i++) {
		if (!sw->axes[i].nums)
			continue;
		next = strip ? workload_without_param(spec, sw->axes[i].key + 9)
			     : workload_with_param(spec, sw->axes[i].key + 9,
						   sw->axes[i].vals[idx ? idx[i] : 0], &e);
		if (!next)
			abort(); /* host OOM on a short string */
		free(spec);
		spec = next;
	}
	return spec;
}

/*
 * Check every input of @sw (resolved): workload specs with workload_check(),
 * traces with check_trace(). Errors point at the input's item in @n, the
 * file's trace: or workload: value; with @override (the command line's TRACE
 * or -w, which replaced the file's inputs) they name it instead.
 */
static int check_inputs(const struct sweep *sw, const struct yctx *y, const yaml_node_t *n,
			bool override)
{
	enum trace_format fmt = sw->format ? trace_format_parse(sw->format) : TF_AUTO;

	if (sw->procs) /* each mix's traces: checked at load with its axis value (check_points()) */
		return 0;
	if (sw->workload && !override && check_bare_items(sw, y, n))
		return -1;
	for (size_t i = 0; i < sw->ninputs; i++) {
		struct err e2 = { 0 };
		char buf[sizeof(e2.file) + sizeof(e2.msg) + 64];
		int bad;

		/* swept workload parameters: every spec they make, at the axis, by
		 * check_workload_axes() (an axis may give a parameter the spec needs) */
		if (sw->is_wl[i] && has_wl_axes(sw))
			continue;
		bad = sw->is_wl[i] ? workload_check(sw->inputs[i], &e2)
				   : check_trace(sw->inputs[i], fmt, &e2);
		if (!bad)
			continue;
		if (override) {
			*y->e = e2; /* "-w: gups: ...", "PATH: ...": as `mmusim run` says it */
			return -1;
		}
		if (sw->is_wl[i])
			return yerr(y, input_node(y, n, i), "workload '%s': %s", sw->input_names[i],
				    e2.msg);
		err_format(&e2, buf, sizeof(buf));
		return yerr(y, input_node(y, n, i), "trace: %s", buf);
	}
	return 0;
}

/* config: first, so that every other value is checked against the base config. */
static int load_base_config(struct sweep *sw, const struct yctx *y, const yaml_node_t *root,
			    struct sim_config *base)
{
	struct err e2 = { 0 };

	config_defaults(base);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(y->d, p->key);
		const yaml_node_t *v = yaml_document_get_node(y->d, p->value);

		if (scalar(k) && !strcmp(scalar(k), "config")) {
			if (sw->config)
				return yerr(y, k, "config: given twice");
			if (!scalar(v))
				return yerr(y, v, "config: expected a file name");
			sw->config = resolve(sw->path, scalar(v));
			if (config_load_file(base, sw->config, &e2)) {
				*y->e = e2;
				return -1;
			}
		}
	}
	return 0;
}

static int load_set_list(const struct yctx *y, const yaml_node_t *v, struct sim_config *base,
			 char ***list, size_t *n);

/* set: { path: value, ... }: applied to @base and kept as "path=value" for every point. */
static int load_sets(struct sweep *sw, const struct yctx *y, const yaml_node_t *v,
		     struct sim_config *base)
{
	return load_set_list(y, v, base, &sw->sets, &sw->nsets);
}

/* A set: mapping's "path=value" items into @list, each checked on @base. */
static int load_set_list(const struct yctx *y, const yaml_node_t *v, struct sim_config *base,
			 char ***list, size_t *nlist)
{
	if (v->type != YAML_MAPPING_NODE)
		return yerr(y, v, "set: expected a mapping of config paths to values");
	for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
		const yaml_node_t *sk = yaml_document_get_node(y->d, q->key);
		const yaml_node_t *sv = yaml_document_get_node(y->d, q->value);
		size_t n;
		char *kv;

		if (!scalar(sk) || !scalar(sv))
			return yerr(y, sk, "set: expected path: value");
		if (apply(y, base, scalar(sk), scalar(sv), sv))
			return -1;
		n = strlen(scalar(sk)) + strlen(scalar(sv)) + 2;
		kv = xrealloc(NULL, n);
		snprintf(kv, n, "%s=%s", scalar(sk), scalar(sv));
		push(list, nlist, kv);
		free(kv);
	}
	return 0;
}

/*
 * input: a list (or one item) mixing traces and workloads: a plain item is a
 * workload spec when its name is a built-in workload's (workload_is_spec()),
 * else a trace path; {trace: PATH} and {workload: SPEC} say which.
 */
static int load_input_list(struct sweep *sw, const struct yctx *y, const yaml_node_t *v,
			   const struct sim_config *base)
{
	size_t n = v->type == YAML_SEQUENCE_NODE ? (size_t)(v->data.sequence.items.top -
							    v->data.sequence.items.start) : 1;

	if (v->type == YAML_SEQUENCE_NODE && !n)
		return yerr(y, v, "input: empty list");
	sw->is_wl = xrealloc(NULL, n * sizeof(*sw->is_wl));
	sw->input_sets = calloc(n, sizeof(*sw->input_sets));
	sw->input_nsets = calloc(n, sizeof(*sw->input_nsets));
	if (!sw->input_sets || !sw->input_nsets)
		abort();
	sw->ninput_sets = n;
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *it = input_node(y, v, i), *ik = NULL, *iv = NULL, *is = NULL;
		const char *what = NULL;

		if (scalar(it)) {
			sw->is_wl[sw->ninputs] = workload_is_spec(scalar(it));
			push(&sw->input_names, &sw->ninputs, scalar(it));
			continue;
		}
		if (it->type != YAML_MAPPING_NODE)
			return yerr(y, it, "input: an item is a trace path, a workload spec, "
				    "{trace: PATH} or {workload: SPEC}, with set: {...} for it alone");
		for (yaml_node_pair_t *q = it->data.mapping.pairs.start; q < it->data.mapping.pairs.top; q++) {
			const yaml_node_t *qk = yaml_document_get_node(y->d, q->key);
			const yaml_node_t *qv = yaml_document_get_node(y->d, q->value);
			const char *name = scalar(qk);

			if (name && !strcmp(name, "set") && !is) {
				is = qv;
			} else if (name && (!strcmp(name, "trace") || !strcmp(name, "workload")) && !ik) {
				ik = qk;
				iv = qv;
				what = name;
			} else {
				return yerr(y, qk, "input: an item's keys are trace or workload, and set");
			}
		}
		if (!what || !scalar(iv))
			return yerr(y, it, "input: an item is a trace path, a workload spec, "
				    "{trace: PATH} or {workload: SPEC}, with set: {...} for it alone");
		sw->is_wl[sw->ninputs] = what[0] == 'w';
		if (is) { /* checked on a copy of the base: each input's own */
			struct sim_config scratch = *base;

			if (load_set_list(y, is, &scratch, &sw->input_sets[sw->ninputs],
					  &sw->input_nsets[sw->ninputs]))
				return -1;
		}
		push(&sw->input_names, &sw->ninputs, scalar(iv));
	}
	sw->workload = true;
	for (size_t i = 0; i < sw->ninputs; i++)
		sw->workload &= sw->is_wl[i];
	return 0;
}

/*
 * Every top-level key but config: the input (its node into *@input), format,
 * repeat, set, and the sweep: mapping (into *@sweep_node).
 */
static int load_top_keys(struct sweep *sw, const struct yctx *y, const yaml_node_t *root,
			 struct sim_config *base, const yaml_node_t **input,
			 const yaml_node_t **sweep_node)
{
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(y->d, p->key);
		const yaml_node_t *v = yaml_document_get_node(y->d, p->value);
		const char *key = scalar(k);

		if (!key)
			return yerr(y, k, "keys must be plain names");
		for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < p; q++)
			if (scalar(yaml_document_get_node(y->d, q->key)) &&
			    !strcmp(scalar(yaml_document_get_node(y->d, q->key)), key))
				return yerr(y, k, "%s: given twice", key);
		if (!strcmp(key, "config")) {
			continue;
		} else if (!strcmp(key, "trace") || !strcmp(key, "workload")) {
			if (sw->ninputs)
				return yerr(y, k, "give trace, workload or input, once");
			sw->workload = key[0] == 'w';
			*input = v;
			if (scalar_list(y, v, key, &sw->input_names, &sw->ninputs))
				return -1;
			sw->is_wl = xrealloc(NULL, sw->ninputs * sizeof(*sw->is_wl));
			for (size_t i = 0; i < sw->ninputs; i++)
				sw->is_wl[i] = sw->workload;
		} else if (!strcmp(key, "input")) {
			if (sw->ninputs)
				return yerr(y, k, "give trace, workload or input, once");
			*input = v;
			if (load_input_list(sw, y, v, base))
				return -1;
		} else if (!strcmp(key, "format")) {
			if (!scalar(v) || trace_format_parse(scalar(v)) == TF_NR ||
			    trace_format_parse(scalar(v)) == TF_WORKLOAD)
				return yerr(y, v, "format: unknown trace format");
			sw->format = xstrdup(scalar(v));
		} else if (!strcmp(key, "repeat")) {
			char *end;
			unsigned long r = scalar(v) ? strtoul(scalar(v), &end, 10) : 0;

			if (!scalar(v) || *end || !r || r > SWEEP_MAX_REPEAT || scalar(v)[0] == '-')
				return yerr(y, v, "repeat: expected an integer from 1 to %d", SWEEP_MAX_REPEAT);
			sw->repeat = (unsigned)r;
		} else if (!strcmp(key, "set")) {
			if (load_sets(sw, y, v, base))
				return -1;
		} else if (!strcmp(key, "sweep")) {
			if (v->type != YAML_MAPPING_NODE)
				return yerr(y, v, "sweep: expected a mapping of config paths to lists of values");
			*sweep_node = v;
		} else {
			return yerr(y, k, "unknown key '%s' (config, trace, workload, input, format, repeat, "
				    "set, sweep)",
				    key);
		}
	}
	return 0;
}

/*
 * One mix of a processes axis, @n (a list of traces or of {trace, start,
 * repeat, thp_disable}), as the processes: value of a --set with each trace
 * resolved against the sweep file (*@val), and as the CSV names it (*@name):
 * the traces as written joined by " + ", each with its options in parentheses.
 */
static int proc_mix(const struct sweep *sw, const struct yctx *y, const yaml_node_t *n, char **val,
		    char **name)
{
	size_t vlen = 0, nlen = 0, cap = 64;
	char *v = xrealloc(NULL, cap), *nm = xrealloc(NULL, cap);

#define APPEND(buf, len, ...)                                                          \
	do {                                                                           \
		int k_ = snprintf(NULL, 0, __VA_ARGS__);                                \
		if (len + (size_t)k_ + 1 > cap) {                                       \
			cap = 2 * (len + (size_t)k_ + 1);                              \
			v = xrealloc(v, cap);                                          \
			nm = xrealloc(nm, cap);                                        \
		}                                                                      \
		len += (size_t)snprintf(buf + len, cap - len, __VA_ARGS__);            \
	} while (0)

	if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.start == n->data.sequence.items.top) {
		free(v);
		free(nm);
		return yerr(y, n, "processes: each value is a list of processes (traces, or "
			    "{trace: PATH | workload: SPEC, start: N, repeat: N, thp_disable: BOOL})");
	}
	APPEND(v, vlen, "[");
	nm[0] = '\0';
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *c = yaml_document_get_node(y->d, *it);
		const char *trace = scalar(c);
		char opts[256];
		size_t olen = 0;

		opts[0] = '\0';
		APPEND(v, vlen, "%s", it == n->data.sequence.items.start ? "" : ", ");
		if (c->type == YAML_MAPPING_NODE) {
			APPEND(v, vlen, "{");
			trace = NULL;
			for (yaml_node_pair_t *q = c->data.mapping.pairs.start; q < c->data.mapping.pairs.top; q++) {
				const char *k = scalar(yaml_document_get_node(y->d, q->key));
				const char *x = scalar(yaml_document_get_node(y->d, q->value));

				if (!k || !x) {
					free(v);
					free(nm);
					return yerr(y, yaml_document_get_node(y->d, q->key),
						    "processes: a process's keys and values are plain values");
				}
				if (!strcmp(k, "workload")) { /* a spec, not a path: as written */
					char qs[4 * PROC_TRACE_MAX + 8];

					config_quote(x, qs, sizeof(qs));
					APPEND(v, vlen, "%sworkload: %s", q == c->data.mapping.pairs.start ?
					       "" : ", ", qs);
					trace = x;
				} else if (!strcmp(k, "trace")) {
					char *r = resolve(sw->path, x);
					size_t qn = 4 * strlen(r) + 8;
					char *qs = xrealloc(NULL, qn);

					config_quote(r, qs, qn);
					APPEND(v, vlen, "%strace: %s", q == c->data.mapping.pairs.start ? "" : ", ",
					       qs);
					free(qs);
					free(r);
					trace = x;
				} else {
					char qk[256], qx[1024];

					config_quote(k, qk, sizeof(qk));
					config_quote(x, qx, sizeof(qx));
					APPEND(v, vlen, "%s%s: %s", q == c->data.mapping.pairs.start ? "" : ", ",
					       qk, qx);
					olen += (size_t)snprintf(opts + olen, olen < sizeof(opts) ?
								 sizeof(opts) - olen : 0, "%s%s=%s",
								 olen ? "," : "(", k, x);
				}
			}
			APPEND(v, vlen, "}");
		} else if (trace) {
			char *r = resolve(sw->path, trace);
			size_t qn = 4 * strlen(r) + 8;
			char *qs = xrealloc(NULL, qn);

			config_quote(r, qs, qn);
			APPEND(v, vlen, "%s", qs);
			free(qs);
			free(r);
		}
		if (!trace) {
			free(v);
			free(nm);
			return yerr(y, c, "processes: a process is a trace path or {trace: PATH | workload: "
				    "SPEC, start: N, repeat: N, thp_disable: BOOL}");
		}
		APPEND(nm, nlen, "%s%s%s%s", nlen ? " + " : "", trace, opts, olen ? ")" : "");
	}
	APPEND(v, vlen, "]");
#undef APPEND
	*val = v;
	*name = nm;
	return 0;
}

/* sweep: processes: [MIX, ...]: a list of mixes (processes: lists). */
static int load_procs_axis(const struct sweep *sw, const struct yctx *y, const yaml_node_t *sv,
			   struct sweep_axis *a)
{
	if (sv->type != YAML_SEQUENCE_NODE || sv->data.sequence.items.start == sv->data.sequence.items.top)
		return yerr(y, sv, "processes: expected a list of mixes, each a list of processes "
			    "([[a.mtr, b.mtr], [a.mtr, c.mtr]])");
	for (yaml_node_item_t *it = sv->data.sequence.items.start; it < sv->data.sequence.items.top; it++) {
		char *val = NULL, *name = NULL;

		if (proc_mix(sw, y, yaml_document_get_node(y->d, *it), &val, &name))
			return -1;
		a->vals = xrealloc(a->vals, (a->nvals + 1) * sizeof(*a->vals));
		a->names = xrealloc(a->names, (a->nvals + 1) * sizeof(*a->names));
		a->vals[a->nvals] = val;
		a->names[a->nvals++] = name;
	}
	return 0;
}

/* The sweep: mapping's axes, each value checked alone against @base at its line and column. */
static int load_axes(struct sweep *sw, const struct yctx *y, const yaml_node_t *sweep_node,
		     const struct sim_config *base)
{
	for (yaml_node_pair_t *q = sweep_node->data.mapping.pairs.start;
	     q < sweep_node->data.mapping.pairs.top; q++) {
		const yaml_node_t *sk = yaml_document_get_node(y->d, q->key);
		const yaml_node_t *sv = yaml_document_get_node(y->d, q->value);
		struct sweep_axis *a;

		if (!scalar(sk))
			return yerr(y, sk, "sweep: keys are config paths");
		for (size_t i = 0; i < sw->naxes; i++)
			if (!strcmp(sw->axes[i].key, scalar(sk)))
				return yerr(y, sk, "sweep: '%s' given twice", scalar(sk));
		sw->axes = xrealloc(sw->axes, (sw->naxes + 1) * sizeof(*sw->axes));
		a = &sw->axes[sw->naxes++];
		memset(a, 0, sizeof(*a));
		a->key = xstrdup(scalar(sk));
		if (!strcmp(a->key, "processes")) {
			if (load_procs_axis(sw, y, sv, a))
				return -1;
		} else if (scalar_list(y, sv, a->key, &a->vals, &a->nvals)) {
			return -1;
		}
		if (!strncmp(a->key, "workload.", 9)) {
			if (!workload_param_known(a->key + 9))
				return yerr(y, sk, "sweep: '%s': no workload has a parameter '%s' (size, "
					    "iterations, updates, steps, stride, passes, alpha, refs, seed, "
					    "madvise)", a->key, a->key + 9);
			a->nums = xrealloc(NULL, a->nvals * sizeof(*a->nums));
			memset(a->nums, 0, a->nvals * sizeof(*a->nums));
		}
		for (size_t j = 0; j < a->nvals; j++) {
			struct sim_config c = *base;
			const yaml_node_t *at = sv;
			char num[64];

			if (sv->type == YAML_SEQUENCE_NODE)
				at = yaml_document_get_node(y->d, sv->data.sequence.items.start[j]);
			if (a->nums) {
				if (workload_param_number(a->key + 9, a->vals[j], num, sizeof(num)))
					return yerr(y, at, "%s: bad value '%s'", a->key, a->vals[j]);
				a->nums[j] = xstrdup(num);
			} else if (apply(y, &c, a->key, a->vals[j], at)) {
				return -1;
			}
		}
	}
	return 0;
}

/* The inputs: the command line's override, or the file's (trace paths resolved against it). */
static int set_inputs(struct sweep *sw, const struct yctx *y, const yaml_node_t *root,
		      const char *trace_override, const char *workload_override)
{
	if (trace_override || workload_override) {
		for (size_t i = 0; i < sw->ninputs; i++)
			free(sw->input_names[i]);
		free(sw->input_names);
		sw->input_names = NULL;
		sw->ninputs = 0;
		sw->workload = workload_override != NULL;
		push(&sw->input_names, &sw->ninputs, workload_override ? workload_override : trace_override);
		free(sw->is_wl);
		sw->is_wl = xrealloc(NULL, sizeof(*sw->is_wl));
		sw->is_wl[0] = sw->workload;
		free_input_sets(sw); /* the file's per-input sets go with its inputs */
	}
	if (sw->procs) { /* the processes: list is the input */
		if (sw->ninputs || trace_override || workload_override)
			return yerr(y, root, "the processes (a processes axis, or the config's processes: "
				    "list) are the input: give no trace:, workload: or input: (nor a "
				    "TRACE or -w on the command line)");
		push(&sw->input_names, &sw->ninputs, "processes");
		sw->is_wl = xrealloc(NULL, sizeof(*sw->is_wl));
		sw->is_wl[0] = false;
	}
	if (!sw->ninputs)
		return yerr(y, root, "no input: give trace: or workload: (or a TRACE / -w on the command line)");
	sw->inputs = xrealloc(NULL, sw->ninputs * sizeof(*sw->inputs));
	for (size_t i = 0; i < sw->ninputs; i++)
		sw->inputs[i] = sw->is_wl[i] || trace_override ? xstrdup(sw->input_names[i])
							       : resolve(sw->path, sw->input_names[i]);
	return 0;
}

/*
 * Every combination must make a valid machine (ways dividing entries, ...). In
 * point order the last key changes fastest: keep the config with the first i
 * keys applied, and re-apply only the keys from the first one that changed (about
 * one config_set per point).
 */
static int check_points(const struct sweep *sw, const struct yctx *y, const yaml_node_t *sweep_node,
			const struct sim_config *base)
{
	struct sim_config *pre = calloc(sw->naxes + 1, sizeof(*pre));
	size_t *idx = calloc(sw->naxes + 1, sizeof(*idx)), per_input = sw->npoints / sw->ninputs;
	struct err e2 = { 0 };
	int r = 0;

	if (!pre || !idx) {
		free(pre);
		free(idx);
		return err_host(y->e, y->path, 0, 0, "out of memory");
	}
	pre[0] = *base;
	for (size_t p = 0; p < per_input && !r; p++) {
		size_t rest = p, from = sw->naxes;

		for (size_t i = sw->naxes; i-- > 0;) {
			size_t j = rest % sw->axes[i].nvals;

			rest /= sw->axes[i].nvals;
			if (!p || j != idx[i])
				from = i;
			idx[i] = j;
		}
		for (size_t i = from; i < sw->naxes && !r; i++) {
			pre[i + 1] = pre[i];
			if (!sw->axes[i].nums) /* (workload.KEY: check_workload_axes()) */
				r = apply(y, &pre[i + 1], sw->axes[i].key, sw->axes[i].vals[idx[i]],
					  sweep_node);
		}
		if (!r && config_validate(&pre[sw->naxes], "sweep", &e2))
			r = yerr(y, sweep_node, "point %zu: %s%s%s", p, e2.file[0] ? e2.file : "",
				 e2.file[0] ? ": " : "", e2.msg);
	}
	free(pre);
	free(idx);
	return r ? -1 : 0;
}

static const yaml_node_t *axis_node(const struct yctx *y, const yaml_node_t *sweep_node,
				    const char *key)
{
	for (yaml_node_pair_t *q = sweep_node->data.mapping.pairs.start;
	     q < sweep_node->data.mapping.pairs.top; q++) {
		const yaml_node_t *k = yaml_document_get_node(y->d, q->key);

		if (scalar(k) && !strcmp(scalar(k), key))
			return k;
	}
	return sweep_node;
}

/*
 * The workload.KEY axes apply to every input, so every input must be a
 * workload (an error names the axis's line). Sets each axis's wl_stride and
 * sw->nwl_combos, the number of their value combinations.
 */
static int workload_axes_apply(struct sweep *sw, const struct yctx *y,
			       const yaml_node_t *sweep_node)
{
	size_t combos = 1;

	for (size_t i = sw->naxes; i-- > 0;) {
		struct sweep_axis *a = &sw->axes[i];

		if (!a->nums && !a->names)
			continue;
		for (size_t in = 0; a->nums && in < sw->ninputs; in++)
			if (!sw->is_wl[in])
				return yerr(y, axis_node(y, sweep_node, a->key),
					    "sweep: %s: input '%s' is a trace; workload parameters "
					    "apply to workloads only", a->key, sw->input_names[in]);
		a->wl_stride = combos;
		combos *= a->nvals;
		if (combos > SWEEP_MAX_POINTS)
			return yerr(y, sweep_node, "sweep: more than %d points", SWEEP_MAX_POINTS);
	}
	sw->nwl_combos = combos;
	return 0;
}

/*
 * Every combination of the workload.KEY values must make, with every input, a
 * spec that workload_check() accepts ("stream" has no "updates"; a stride
 * larger than the size). An error names the first such axis's line and the spec.
 */
static int check_workload_axes(const struct sweep *sw, const struct yctx *y,
			       const yaml_node_t *sweep_node)
{
	const char *first = NULL;

	for (size_t i = 0; i < sw->naxes && !first; i++)
		if (sw->axes[i].nums)
			first = sw->axes[i].key;
	for (size_t in = 0; in < sw->ninputs && first; in++)
		for (size_t c = 0; c < sw->nwl_combos; c++) {
			struct err e2 = { 0 };
			char *spec = xstrdup(sw->inputs[in]), *next;
			int r;

			for (size_t i = 0; i < sw->naxes; i++) {
				const struct sweep_axis *a = &sw->axes[i];

				if (!a->nums)
					continue;
				next = workload_with_param(spec, a->key + 9,
							   a->vals[c / a->wl_stride % a->nvals], &e2);
				if (!next)
					abort(); /* host OOM on a short string */
				free(spec);
				spec = next;
			}
			r = workload_check(spec, &e2);
			if (r)
				r = yerr(y, axis_node(y, sweep_node, first), "sweep: workload '%s' (input "
					 "'%s'): %s", spec, sw->input_names[in], e2.msg);
			free(spec);
			if (r)
				return -1;
		}
	return 0;
}

static int load_doc(struct sweep *sw, const struct yctx *y, const char *trace_override,
		    const char *workload_override)
{
	yaml_node_t *root = yaml_document_get_root_node(y->d);
	struct sim_config base;
	const yaml_node_t *sweep_node = NULL, *input = NULL;

	if (!root)
		return yerr(y, NULL, "empty sweep file");
	if (root->type != YAML_MAPPING_NODE)
		return yerr(y, root, "a sweep file is a mapping (config, trace or workload, sweep)");
	sw->repeat = 1;
	if (load_base_config(sw, y, root, &base) ||
	    load_top_keys(sw, y, root, &base, &input, &sweep_node))
		return -1;
	if (!sweep_node)
		return yerr(y, root, "no sweep: mapping");
	if (load_axes(sw, y, sweep_node, &base))
		return -1;
	sw->procs = base.nprocs > 0;
	for (size_t i = 0; i < sw->naxes; i++)
		sw->procs |= sw->axes[i].names != NULL;
	if (!sw->naxes && sweep_node->data.mapping.pairs.start == sweep_node->data.mapping.pairs.top &&
	    sw->ninputs <= 1 && !trace_override && !workload_override)
		return yerr(y, sweep_node, "sweep: empty (nothing to sweep)");
	if (set_inputs(sw, y, root, trace_override, workload_override) ||
	    workload_axes_apply(sw, y, sweep_node) ||
	    check_inputs(sw, y, input, trace_override || workload_override) ||
	    check_workload_axes(sw, y, sweep_node))
		return -1;
	sw->seed = base.seed;
	sw->npoints = sw->ninputs;
	for (size_t i = 0; i < sw->naxes; i++) {
		if (sw->npoints * sw->axes[i].nvals / sw->axes[i].nvals != sw->npoints ||
		    sw->npoints * sw->axes[i].nvals > SWEEP_MAX_POINTS)
			return yerr(y, sweep_node, "sweep: more than %d points", SWEEP_MAX_POINTS);
		sw->npoints *= sw->axes[i].nvals;
	}
	return check_points(sw, y, sweep_node, &base);
}

int sweep_load(struct sweep *sw, const char *path, const char *trace_override,
	       const char *workload_override, struct err *e)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct yctx y = { &doc, path, e };
	FILE *f;
	int r;

	memset(sw, 0, sizeof(*sw));
	f = fopen(path, "rb");
	if (!f)
		return err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
	sw->path = xstrdup(path);
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		sweep_free(sw);
		return err_host(e, path, 0, 0, "out of memory");
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		r = err_set(e, path, (unsigned long)parser.problem_mark.line + 1,
			    (unsigned long)parser.problem_mark.column + 1, "YAML syntax error: %s%s%s",
			    parser.problem ? parser.problem : "unknown", parser.context ? " " : "",
			    parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		fclose(f);
		sweep_free(sw);
		return r;
	}
	r = load_doc(sw, &y, trace_override, workload_override);
	if (r)
		sweep_free(sw); /* nothing half-loaded is left to the caller */
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return r;
}

/* --- points --------------------------------------------------------------- */

size_t sweep_point_input(const struct sweep *sw, size_t p)
{
	return p / (sw->npoints / sw->ninputs);
}

size_t sweep_nsources(const struct sweep *sw)
{
	return sw->ninputs * (sw->nwl_combos ? sw->nwl_combos : 1);
}

size_t sweep_point_source(const struct sweep *sw, size_t p)
{
	size_t rest = p, combo = 0;

	for (size_t i = sw->naxes; i-- > 0;) {
		size_t j = rest % sw->axes[i].nvals;

		rest /= sw->axes[i].nvals;
		if (sw->axes[i].nums || sw->axes[i].names) /* each value reads another input */
			combo += j * sw->axes[i].wl_stride;
	}
	return sweep_point_input(sw, p) * (sw->nwl_combos ? sw->nwl_combos : 1) + combo;
}


/*
 * The file name carries a hash of the point's command (FNV-1a over its arguments
 * but the report path): a sweep file edited between runs gives new names, so a
 * resumed sweep never takes a stale result for a point whose definition changed.
 */
char *sweep_point_file(const struct sweep *sw, const char *dir, size_t p, unsigned rep)
{
	size_t n = strlen(dir) + 64;
	char *s = xrealloc(NULL, n), **av = sweep_point_argv(sw, p, rep, "mmusim", "");
	uint64_t h = 0xcbf29ce484222325ULL;

	for (char **a = av + 1; *a; a++)
		for (const unsigned char *c = (const unsigned char *)*a;; c++) {
			h = (h ^ *c) * 0x100000001b3ULL;
			if (!*c)
				break;
		}
	sweep_argv_free(av);
	if (sw->repeat > 1)
		snprintf(s, n, "%s/point-%06zu-r%u-%08x.json", dir, p, rep, (unsigned)(h ^ (h >> 32)));
	else
		snprintf(s, n, "%s/point-%06zu-%08x.json", dir, p, (unsigned)(h ^ (h >> 32)));
	return s;
}

static void push_kv(char ***v, size_t *n, const char *k, const char *val)
{
	size_t len = strlen(k) + strlen(val) + 2;
	char *s = xrealloc(NULL, len);

	snprintf(s, len, "%s=%s", k, val);
	push(v, n, s);
	free(s);
}

char **sweep_point_argv(const struct sweep *sw, size_t p, unsigned rep, const char *self,
			const char *json)
{
	char **v = NULL, num[64];
	size_t n = 0, in = sweep_point_input(sw, p), rest = p;
	size_t *idx = xrealloc(NULL, (sw->naxes + 1) * sizeof(*idx));

	for (size_t i = sw->naxes; i-- > 0;) {
		idx[i] = rest % sw->axes[i].nvals;
		rest /= sw->axes[i].nvals;
	}
	push(&v, &n, self);
	push(&v, &n, "run");
	if (sw->config) {
		push(&v, &n, "-c");
		push(&v, &n, sw->config);
	}
	if (sw->is_wl[in]) {
		char *spec = point_spec(sw, in, idx, false);

		push(&v, &n, "-w");
		push(&v, &n, spec);
		free(spec);
	} else if (!sw->procs) {
		push(&v, &n, sw->inputs[in]);
	}
	if (sw->format && !sw->is_wl[in]) {
		push(&v, &n, "--format");
		push(&v, &n, sw->format);
	}
	for (size_t i = 0; i < sw->nsets; i++) {
		push(&v, &n, "--set");
		push(&v, &n, sw->sets[i]);
	}
	for (size_t i = 0; sw->input_sets && i < sw->input_nsets[in]; i++) {
		push(&v, &n, "--set");
		push(&v, &n, sw->input_sets[in][i]);
	}
	if (sw->repeat > 1) {
		snprintf(num, sizeof(num), "seed=%llu", (unsigned long long)(sw->seed + rep));
		push(&v, &n, "--set");
		push(&v, &n, num);
	}
	snprintf(num, sizeof(num), "point=%zu", p);
	push(&v, &n, "--label");
	push(&v, &n, num);
	snprintf(num, sizeof(num), "points=%zu", sw->npoints); /* merge warns of gaps */
	push(&v, &n, "--label");
	push(&v, &n, num);
	if (sw->repeat > 1) {
		snprintf(num, sizeof(num), "rep=%u", rep);
		push(&v, &n, "--label");
		push(&v, &n, num);
	}
	if (sw->ninputs > 1) {
		char *name = point_spec(sw, in, idx, true);

		push(&v, &n, "--label");
		push_kv(&v, &n, "input", name);
		free(name);
	}
	for (size_t i = 0; i < sw->naxes; i++) {
		if (sw->axes[i].names) { /* processes: the mix resolved, named as written */
			push(&v, &n, "--set");
			push_kv(&v, &n, sw->axes[i].key, sw->axes[i].vals[idx[i]]);
			push(&v, &n, "--label");
			push_kv(&v, &n, sw->axes[i].key, sw->axes[i].names[idx[i]]);
			continue;
		}
		/* workload.KEY: in the spec; its label the value as a number */
		push(&v, &n, sw->axes[i].nums ? "--label" : "--sweep-set");
		push_kv(&v, &n, sw->axes[i].key,
			sw->axes[i].nums ? sw->axes[i].nums[idx[i]] : sw->axes[i].vals[idx[i]]);
	}
	push(&v, &n, "--quiet");
	push(&v, &n, "--json");
	push(&v, &n, json);
	v = xrealloc(v, (n + 1) * sizeof(*v));
	v[n] = NULL;
	free(idx);
	return v;
}

void sweep_argv_free(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

void sweep_print_cmd(FILE *out, char *const *argv)
{
	for (char *const *a = argv; *a; a++) {
		const char *s = *a;
		bool plain = *s != 0;

		for (const char *c = s; *c; c++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%", *c))
				plain = false;
		fputs(a == argv ? "" : " ", out);
		if (plain) {
			fputs(s, out);
			continue;
		}
		fputc('\'', out);
		for (const char *c = s; *c; c++)
			if (*c == '\'')
				fputs("'\\''", out);
			else
				fputc(*c, out);
		fputc('\'', out);
	}
	fputc('\n', out);
}

/* --- merge ---------------------------------------------------------------- */

/*
 * The provenance columns, last in every row: the report's run.* texts
 * (provenance.c), so that a CSV row names the build, the effective config and
 * the input it came from, as its JSON report does.
 */
static const char *const prov_keys[] = { "version", "build_id", "config_hash", "input_id" };
#define NR_PROV (sizeof(prov_keys) / sizeof(prov_keys[0]))

struct row {
	size_t point;
	size_t npoints; /* run.labels.points: the sweep's point count, 0 if not said */
	unsigned rep;
	char **labels; /* values, in the column order */
	double *v;
	size_t nv; /* numbers in v: the columns when it was read (add_virt_names() adds more) */
	char *prov[NR_PROV]; /* run.version, ...: "" where the report has none */
	const char *file;
};

struct cols {
	char **label_keys;
	size_t nlabels;
	char **names;
	bool *is_int;
	size_t n;
};

/* Flatten the numeric leaves of @j (skipping "run" objects) into names. */
static void flatten_names(json_t *j, const char *prefix, struct cols *c)
{
	const char *k;
	json_t *v;

	json_object_foreach(j, k, v) {
		char name[512];

		if (!strcmp(k, "run"))
			continue;
		snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "", k);
		if (json_is_object(v)) {
			flatten_names(v, name, c);
		} else if (json_is_number(v)) {
			c->names = xrealloc(c->names, (c->n + 1) * sizeof(*c->names));
			c->is_int = xrealloc(c->is_int, (c->n + 1) * sizeof(*c->is_int));
			c->names[c->n] = xstrdup(name);
			c->is_int[c->n++] = json_is_integer(v);
		}
	}
}

/*
 * A virtual machine's report after a bare-metal first one: its rows (virt.*,
 * walk.guest, host.*, ...) become columns too, empty in bare-metal rows. The
 * columns are the first report's, then these in order of first appearance.
 */
static void add_virt_names(json_t *root, struct cols *c)
{
	struct cols more = { 0 };

	flatten_names(root, "", &more);
	for (size_t i = 0; i < more.n; i++) {
		size_t k;

		for (k = 0; k < c->n && strcmp(c->names[k], more.names[i]); k++)
			;
		if (k == c->n && stats_counter_virt_only(more.names[i])) {
			c->names = xrealloc(c->names, (c->n + 1) * sizeof(*c->names));
			c->is_int = xrealloc(c->is_int, (c->n + 1) * sizeof(*c->is_int));
			c->names[c->n] = more.names[i];
			c->is_int[c->n++] = more.is_int[i];
			more.names[i] = NULL;
		}
		free(more.names[i]);
	}
	free(more.names);
	free(more.is_int);
}

/* The value at dotted @path, or NULL. */
static json_t *at_path(json_t *j, const char *path)
{
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && j; t = strtok_r(NULL, ".", &save))
		j = json_object_get(j, t);
	return j;
}

/* A label's value as text (labels are strings; numbers tolerated). */
static int label_text(json_t *v, char *out, size_t n)
{
	if (json_is_string(v))
		snprintf(out, n, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(out, n, "%lld", (long long)json_integer_value(v));
	else
		return -1;
	return 0;
}

static json_t *labels_of(json_t *root)
{
	json_t *run = json_object_get(root, "run");

	if (!run) { /* --modes: the first mode's report */
		const char *k;
		json_t *v;

		json_object_foreach(root, k, v) {
			run = json_object_get(v, "run");
			break;
		}
	}
	return run ? json_object_get(run, "labels") : NULL;
}

/* The labels a sweep gives every point for merge (point, rep, points): no CSV column. */
static bool merge_own_label(const char *k)
{
	return !strcmp(k, "point") || !strcmp(k, "rep") || !strcmp(k, "points");
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	return (x->rep > y->rep) - (x->rep < y->rep);
}

static void put_num(FILE *out, double v, bool is_int)
{
	if (isnan(v)) /* a virtual machine's column in a bare-metal point's row */
		fputc(',', out);
	else if (is_int && fabs(v) < 9e15 && v == floor(v))
		fprintf(out, ",%lld", (long long)v);
	else
		fprintf(out, ",%.15g", v);
}

/*
 * One report into row @r: its point, rep and labels, and every number named in
 * @c (the first report, @first, names them). 0, or -1 with @e.
 */
static int read_row(const char *file, const char *first_file, bool first, struct cols *c,
		    struct row *r, struct err *e)
{
	json_error_t je;
	json_t *root = json_load_file(file, 0, &je), *labels, *pv, *v;
	char text[512];
	const char *k;
	size_t li = 0;
	int ret = -1;

	if (!root)
		return err_set(e, file, (unsigned long)(je.line > 0 ? je.line : 0),
			       (unsigned long)(je.column > 0 ? je.column : 0), "%s", je.text);
	labels = labels_of(root);
	pv = labels ? json_object_get(labels, "point") : NULL;
	if (!pv || label_text(pv, text, sizeof(text))) {
		err_set(e, file, 0, 0, "not a sweep point's report (no run.labels.point)");
		goto out;
	}
	r->file = file;
	r->point = strtoull(text, NULL, 10);
	if ((v = json_object_get(labels, "rep")) && !label_text(v, text, sizeof(text)))
		r->rep = (unsigned)strtoul(text, NULL, 10);
	if ((v = json_object_get(labels, "points")) && !label_text(v, text, sizeof(text)))
		r->npoints = strtoull(text, NULL, 10);
	if (first) {
		json_object_foreach(labels, k, v) {
			if (!merge_own_label(k))
				push(&c->label_keys, &c->nlabels, k);
		}
		flatten_names(root, "", c);
	}
	if (!first)
		add_virt_names(root, c);
	r->labels = calloc(c->nlabels + 1, sizeof(*r->labels));
	r->v = calloc(c->n + 1, sizeof(*r->v));
	r->nv = c->n;
	if (!r->labels || !r->v) {
		err_host(e, file, 0, 0, "out of memory");
		goto out;
	}
	json_object_foreach(labels, k, v) {
		if (merge_own_label(k))
			continue;
		if (li >= c->nlabels || strcmp(k, c->label_keys[li]) || label_text(v, text, sizeof(text))) {
			err_set(e, file, 0, 0, "its labels differ from %s's", first_file);
			goto out;
		}
		r->labels[li++] = xstrdup(text);
	}
	if (li != c->nlabels) {
		err_set(e, file, 0, 0, "its labels differ from %s's", first_file);
		goto out;
	}
	for (size_t i = 0; i < NR_PROV; i++) {
		json_t *x = json_object_get(json_object_get(root, "run"), prov_keys[i]);

		r->prov[i] = xstrdup(json_is_string(x) ? json_string_value(x) : "");
	}
	for (size_t i = 0; i < c->n; i++) {
		json_t *x = at_path(root, c->names[i]);

		if (!x && stats_counter_virt_only(c->names[i])) {
			r->v[i] = NAN; /* bare metal: no virtual machine's rows */
			continue;
		}
		if (!json_is_number(x)) {
			err_set(e, file, 0, 0, "no number at %s (a report of another version?)", c->names[i]);
			goto out;
		}
		r->v[i] = json_number_value(x);
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}

/*
 * Sorted rows: a point twice under one rep is an error, as are labels that differ
 * between repetitions. *@repeated tells whether any point has several. 0 or -1.
 */
static int check_rows(const struct row *rows, size_t nrows, const struct cols *c, bool *repeated,
		      struct err *e)
{
	for (size_t i = 1; i < nrows; i++) {
		if (rows[i].point != rows[i - 1].point)
			continue;
		if (rows[i].rep == rows[i - 1].rep)
			return err_set(e, rows[i].file, 0, 0, "point %zu rep %u also comes from %s",
				       rows[i].point, rows[i].rep, rows[i - 1].file);
		*repeated = true;
		for (size_t l = 0; l < c->nlabels; l++)
			if (strcmp(rows[i].labels[l], rows[i - 1].labels[l]))
				return err_set(e, rows[i].file, 0, 0,
					       "point %zu: %s differs between repetitions", rows[i].point,
					       c->label_keys[l]);
	}
	return 0;
}

/* --reps: one line per point and repetition, a rep column after point, the values as reported. */
static void write_reps_csv(FILE *out, const struct row *rows, size_t nrows, const struct cols *c)
{
	fputs("point,rep", out);
	for (size_t l = 0; l < c->nlabels; l++) {
		fputc(',', out);
		csv_put(out, c->label_keys[l]);
	}
	for (size_t i = 0; i < c->n; i++)
		fprintf(out, ",%s", c->names[i]);
	for (size_t i = 0; i < NR_PROV; i++)
		fprintf(out, ",run.%s", prov_keys[i]);
	fputc('\n', out);
	for (size_t i = 0; i < nrows; i++) {
		fprintf(out, "%zu,%u", rows[i].point, rows[i].rep);
		for (size_t l = 0; l < c->nlabels; l++) {
			fputc(',', out);
			csv_put(out, rows[i].labels[l]);
		}
		for (size_t k = 0; k < c->n; k++)
			put_num(out, rows[i].v[k], c->is_int[k]);
		for (size_t k = 0; k < NR_PROV; k++) { /* this repetition's own */
			fputc(',', out);
			csv_put(out, rows[i].prov[k]);
		}
		fputc('\n', out);
	}
}

/* The CSV: a header, then one line per point (the mean and ci95 over its repetitions). */
static void write_csv(FILE *out, const struct row *rows, size_t nrows, const struct cols *c,
		      bool repeated)
{
	fputs("point", out);
	for (size_t l = 0; l < c->nlabels; l++) {
		fputc(',', out);
		csv_put(out, c->label_keys[l]);
	}
	for (size_t i = 0; i < c->n; i++)
		fprintf(out, repeated ? ",%s,%s.ci95" : ",%s", c->names[i], c->names[i]);
	for (size_t i = 0; i < NR_PROV; i++)
		fprintf(out, ",run.%s", prov_keys[i]);
	fputc('\n', out);
	for (size_t i = 0, j; i < nrows; i = j) {
		size_t n;

		for (j = i + 1; j < nrows && rows[j].point == rows[i].point; j++)
			;
		n = j - i;
		fprintf(out, "%zu", rows[i].point);
		for (size_t l = 0; l < c->nlabels; l++) {
			fputc(',', out);
			csv_put(out, rows[i].labels[l]);
		}
		for (size_t k = 0; k < c->n; k++) {
			double *x = xrealloc(NULL, n * sizeof(*x)), mean, ci = 0;

			for (size_t r = 0; r < n; r++)
				x[r] = rows[i + r].v[k];
			mean = gsl_stats_mean(x, 1, n);
			if (n > 1)
				ci = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * gsl_stats_sd(x, 1, n) /
				     sqrt((double)n);
			free(x);
			put_num(out, n == 1 ? rows[i].v[k] : mean, n == 1 && c->is_int[k]);
			if (repeated)
				fprintf(out, ",%.15g", ci);
		}
		for (size_t k = 0; k < NR_PROV; k++) { /* the first repetition's */
			fputc(',', out);
			csv_put(out, rows[i].prov[k]);
		}
		fputc('\n', out);
	}
}

int sweep_merge(char *const *files, size_t nfiles, FILE *out, struct err *e)
{
	return sweep_merge_opts(files, nfiles, out, false, e);
}

/*
 * The points of the sweep (run.labels.points) that no report gives, on @log: a
 * merge of some shards only, or of a sweep stopped half-way, leaves gaps in the
 * CSV that its rows do not show.
 */
static void warn_gaps(const struct row *rows, size_t nrows, FILE *log)
{
	size_t total = 0, have = 0, first = SIZE_MAX, next = 0;

	for (size_t i = 0; i < nrows; i++)
		if (rows[i].npoints > total)
			total = rows[i].npoints;
	if (!log || !total)
		return; /* reports of another version, or merged by hand: nothing to check */
	for (size_t i = 0; i < nrows; i++) { /* sorted by point */
		if (i && rows[i].point == rows[i - 1].point)
			continue;
		if (rows[i].point >= total)
			continue;
		if (first == SIZE_MAX && rows[i].point > next)
			first = next;
		next = rows[i].point + 1;
		have++;
	}
	if (first == SIZE_MAX && next < total)
		first = next;
	if (have < total)
		fprintf(log, "merge: warning: no report for %zu of the sweep's %zu points (the first: point %zu); "
			"the CSV has gaps\n", total - have, total, first);
}

int sweep_merge_opts(char *const *files, size_t nfiles, FILE *out, bool per_rep, struct err *e)
{
	return sweep_merge_log(files, nfiles, out, per_rep, NULL, e);
}

int sweep_merge_log(char *const *files, size_t nfiles, FILE *out, bool per_rep, FILE *log,
		    struct err *e)
{
	struct cols c = { 0 };
	struct row *rows = NULL;
	size_t nrows = 0;
	bool repeated = false;
	int ret = -1;

	if (!nfiles)
		return err_set(e, "merge", 0, 0, "no result files");
	rows = calloc(nfiles, sizeof(*rows));
	if (!rows)
		return err_host(e, "merge", 0, 0, "out of memory");
	for (size_t f = 0; f < nfiles; f++) {
		int r = read_row(files[f], files[0], !nrows, &c, &rows[nrows], e);

		if (rows[nrows].labels || rows[nrows].v)
			nrows++; /* (freed below, also after an error) */
		if (r)
			goto out;
	}
	for (size_t i = 0; i < nrows; i++) /* columns a later report added: empty here */
		if (rows[i].nv < c.n) {
			rows[i].v = xrealloc(rows[i].v, c.n * sizeof(*rows[i].v));
			while (rows[i].nv < c.n)
				rows[i].v[rows[i].nv++] = NAN;
		}
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	if (check_rows(rows, nrows, &c, &repeated, e))
		goto out;
	if (per_rep)
		write_reps_csv(out, rows, nrows, &c);
	else
		write_csv(out, rows, nrows, &c, repeated);
	warn_gaps(rows, nrows, log);
	ret = 0;
out:
	for (size_t i = 0; i < nrows; i++) {
		for (size_t l = 0; rows[i].labels && l < c.nlabels; l++)
			free(rows[i].labels[l]);
		free(rows[i].labels);
		free(rows[i].v);
		for (size_t k = 0; k < NR_PROV; k++)
			free(rows[i].prov[k]);
	}
	free(rows);
	for (size_t l = 0; l < c.nlabels; l++)
		free(c.label_keys[l]);
	free(c.label_keys);
	for (size_t i = 0; i < c.n; i++)
		free(c.names[i]);
	free(c.names);
	free(c.is_int);
	return ret;
}

bool sweep_file_is_report(const char *path)
{
	struct stat st;
	FILE *f;
	int c;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || !(f = fopen(path, "r")))
		return false;
	while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

int sweep_report_matches(const char *file, const char *config_hash, const char *input_id,
			 const char *build_id)
{
	json_error_t je;
	json_t *root = json_load_file(file, 0, &je), *run;
	const char *want[3] = { config_hash, input_id, build_id };
	const char *keys[3] = { "config_hash", "input_id", "build_id" };
	int r = 1;

	if (!root)
		return access(file, F_OK) ? -1 : 0;
	if (!strncmp(input_id, "stdin", 5) || !strncmp(input_id, "stream", 6))
		r = 0; /* a stream's bytes cannot be compared: never the same input */
	run = json_object_get(root, "run");
	for (int i = 0; i < 3 && r; i++) {
		const char *got = json_string_value(json_object_get(run, keys[i]));

		if (!got || strcmp(got, want[i]))
			r = 0;
	}
	json_decref(root);
	return r;
}
