/*
 * sweep_run.c - planning and running a sweep's points (sweep_run.h).
 *
 * A worker is a fork of the process that loaded the sweep, without exec (a new
 * image would load the libraries and the sweep file again); it runs its points
 * from one decode of their input, on several threads when there are fewer
 * workers than jobs. A sweep of one task runs it in the process itself.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provenance.h"
#include "run.h"
#include "sweep_run.h"
#include "util.h"

/*
 * This process ends soon after its points are done: it is a worker forked by
 * sweep_exec(), which _exit()s, or the sweep's own process running its lone
 * task, which merges the reports and exits.
 */
static bool ends_after_points;

/* What sweep_run_points() left to the process's exit: reachable, so no leak to a checker. */
static void *volatile left_sims, *volatile left_names, *volatile left_reader;

/* The `run` options of point @p, repetition @rep, its report @json: *@av owns the strings. */
static int point_opts(const struct sweep *sw, size_t p, unsigned rep, const char *self,
		      const char *json, char ***av, struct run_opts *o, struct err *e)
{
	int argc = 0;

	*av = sweep_point_argv(sw, p, rep, self, json);
	while ((*av)[argc])
		argc++;
	/* argv: self run OPTIONS...; the parser's argv[0] is "run" */
	return run_opts_parse(argc - 1, *av + 1, o, true, e);
}

/*
 * Which stream point @p of @sw with config @c reads (point_stream()): its source
 * (the input, and the values of any workload.KEY axes: sweep_point_source()),
 * then the layout and kernel that place its mappings.
 */
#define SWEEP_STREAMS (LAYOUT_NR * KERNEL_NR)
static size_t stream_of(const struct sweep *sw, size_t p, const struct sim_config *c)
{
	size_t k;

	if (sw->is_wl[sweep_point_input(sw, p)])
		k = c->kernel;
	else
		k = c->layout * KERNEL_NR + (c->layout == LAYOUT_TRACE ? 0 : c->kernel);
	return sweep_point_source(sw, p) * SWEEP_STREAMS + k;
}

/* One point's report (write_point_reports()). */
struct point_report {
	struct run one;
	struct report_meta m;
	const char *json;
	int rc;
	struct err e;
};

static void *point_report_thread(void *arg)
{
	struct point_report *pr = arg;

	pr->rc = run_write_reports(&pr->one, &pr->m, pr->json, true, false, &pr->e);
	return NULL;
}

/*
 * The points' reports, each written and committed on a thread of its own: a
 * commit fsyncs (outfile.c), and the file system serves fsyncs that wait
 * together with one journal commit (ext4's and XFS's group commit), where one
 * after the other each waits for its own -- 8 reports took 14-16 ms in turn,
 * 4-5 ms 4 at a time (8 at a time was no faster), on this project's guest
 * (ext4); the JSON is built on both cores too. A thread that cannot start
 * leaves its report to this one. The first failed point's status and error, in
 * point order. At most REPORT_THREADS at once: each report's temporary holds a
 * slot of outfile.c's table of pending files (OUTFILE_PENDING_MAX) until its
 * commit.
 */
#define REPORT_THREADS (OUTFILE_PENDING_MAX / 4)
static int write_point_reports(struct run *r, const struct run_opts *o, const struct trace_reader *tr,
			       const char *id, struct err *e)
{
	struct point_report *pr = calloc(r->n, sizeof(*pr));
	pthread_t *tid = calloc(r->n, sizeof(*tid));
	bool *started = calloc(r->n, sizeof(*started));
	int rc = 0;

	if (!pr || !tid || !started) {
		free(pr);
		free(tid);
		free(started);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	(void)provenance_build_id(); /* read once, before the threads (it is pthread_once'd anyway) */
	for (unsigned i = 0; i < r->n; i++) {
		pr[i] = (struct point_report){
			.one = { .sims = &r->sims[i], .mode_names = &r->mode_names[i], .n = 1,
				 .wall = r->wall, .records = r->records },
			.m = { .config = o[i].config ? o[i].config : "built-in", .trace = tr->name,
			       .format = trace_format_name[tr->format], .labels = o[i].labels,
			       .nlabels = o[i].nlabels, .input_id = id },
			.json = o[i].json,
		};
	}
	for (unsigned at = 0; at < r->n; at += REPORT_THREADS) {
		unsigned end = at + REPORT_THREADS < r->n ? at + REPORT_THREADS : r->n;

		for (unsigned i = at; i < end; i++)
			started[i] = r->n > 1 && !pthread_create(&tid[i], NULL, point_report_thread, &pr[i]);
		for (unsigned i = at; i < end; i++) {
			if (started[i])
				pthread_join(tid[i], NULL);
			else
				point_report_thread(&pr[i]);
		}
	}
	for (unsigned i = 0; i < r->n && !rc; i++)
		if ((rc = pr[i].rc))
			*e = pr[i].e;
	free(pr);
	free(tid);
	free(started);
	return rc;
}

/* Simulators being built (init_sims()). */
struct sims_build {
	struct sim *sims;
	const struct sim_config *c;
	unsigned n;
	atomic_uint next;
	bool *failed;
	struct err *e;
};

static void *build_some(void *arg)
{
	struct sims_build *b = arg;
	unsigned i;

	while ((i = atomic_fetch_add(&b->next, 1)) < b->n)
		b->failed[i] = sim_init(&b->sims[i], &b->c[i], &b->e[i]) != 0;
	return NULL;
}

/*
 * sim_init() of @n simulators of configs @c, on up to @threads threads: each
 * builds a machine of its own, a hundred-odd page faults of its arrays and
 * tables, and eight took 5-8 ms in turn on this project's guest before the
 * decode could start. Returns how many, from the first, were built (any built
 * after a failed one are torn down), with @e the first failure's error.
 */
static unsigned init_sims(struct sim *sims, const struct sim_config *c, unsigned n, unsigned threads,
			  struct err *e)
{
	struct sims_build b = { .sims = sims, .c = c, .n = n };
	pthread_t tid[8];
	unsigned started = 0, built = 0;

	b.failed = calloc(n, sizeof(*b.failed));
	b.e = calloc(n, sizeof(*b.e));
	if (!b.failed || !b.e) {
		free(b.failed);
		free(b.e);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return 0;
	}
	atomic_init(&b.next, 0);
	while (started + 1 < threads && started < ARRAY_SIZE(tid) && started + 1 < n &&
	       !pthread_create(&tid[started], NULL, build_some, &b))
		started++;
	build_some(&b);
	for (unsigned k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
	while (built < n && !b.failed[built])
		built++;
	if (built < n) {
		*e = b.e[built];
		for (unsigned i = built + 1; i < n; i++)
			if (!b.failed[i])
				sim_destroy(&sims[i]);
	}
	free(b.failed);
	free(b.e);
	return built;
}

int sweep_run_points(const struct sweep *sw, const size_t *pts, size_t n, unsigned rep,
		     const char *outdir, const char *self, unsigned threads,
		     const volatile sig_atomic_t *interrupted, struct err *e)
{
	struct run_opts *o = calloc(n, sizeof(*o));
	char ***argvs = calloc(n, sizeof(*argvs));
	struct run r = { 0 };
	struct trace_reader *tr = NULL;
	struct sim_config *cfg;
	char id[PROVENANCE_ID_MAX];
	size_t stream0 = 0;
	int rc = 0;

	r.sims = calloc(n, sizeof(*r.sims));
	r.mode_names = calloc(n, sizeof(*r.mode_names));
	cfg = calloc(n, sizeof(*cfg));
	if (!o || !argvs || !r.sims || !r.mode_names || !cfg) {
		err_host(e, "mmusim", 0, 0, "out of memory");
		rc = POOL_EHOST;
		goto out;
	}
	r.threads = threads < n ? threads : (unsigned)n;
	for (size_t i = 0; i < n && !rc; i++) {
		char *json = sweep_point_file(sw, outdir, pts[i], rep);
		struct sim_config c;

		rc = point_opts(sw, pts[i], rep, self, json, &argvs[i], &o[i], e);
		free(json);
		if (!rc)
			rc = run_config_load(&o[i], &c, e);
		if (!rc && !i) {
			tr = run_input_open(&o[0], &c, &rc, e);
			stream0 = stream_of(sw, pts[0], &c);
		} else if (!rc && stream_of(sw, pts[i], &c) != stream0) {
			/* sweep_plan() never groups them: the input or its layout differs */
			rc = err_set(e, "mmusim", 0, 0,
				     "points %zu and %zu read different inputs or have different "
				     "os.kernel or os.layout: run them apart", pts[0], pts[i]);
		}
		if (rc)
			break;
		r.mode_names[i] = os_mode_name[c.mode];
		cfg[i] = c;
	}
	if (!rc) {
		r.n = init_sims(r.sims, cfg, (unsigned)n, r.threads, e);
		if (r.n < n)
			rc = -1;
		for (unsigned i = 0; i < r.n; i++)
			r.sims[i].k.trace_name = tr->name;
	}
	if (!rc)
		rc = run_drive(&r, tr, &(struct pool_opts){ .interrupted = interrupted }, e);
	if (!rc) /* one input for every point here, hashed as it was read */
		rc = run_input_id(&o[0], &cfg[0], tr, id, e);
	if (!rc)
		rc = write_point_reports(&r, o, tr, id, e);
out:
	for (size_t i = 0; argvs && i < n; i++)
		if (argvs[i])
			sweep_argv_free(argvs[i]);
	free(argvs);
	free(o);
	free(cfg);
	/*
	 * The process ends soon: its simulators and the reader go with it, whole,
	 * instead of piece by piece (8 machines' page tables, LRU lists and
	 * mappings: 4-7 ms of an 8-point sweep of the validation trace).
	 */
	if (ends_after_points) {
		left_sims = r.sims;
		left_names = r.mode_names;
		left_reader = tr;
		return rc;
	}
	run_free(&r);
	if (tr)
		trace_close(tr);
	return rc;
}

/*
 * Is the report @f of point @p, repetition @rep current: 1 written for the same
 * effective config, input and build (provenance.h); 0 stale; -1 absent; else
 * *@rc is set with @e. @ids[@in] caches the identity of the point's source
 * (sweep_point_source(): a workload.KEY value makes another input).
 */
static int point_current(const struct sweep *sw, size_t p, unsigned rep, const char *f, size_t in,
			 char **ids, const char *self, int *rc, struct err *e)
{
	char **av, hash[17];
	struct run_opts o;
	struct sim_config c;
	int r = -1;

	if (access(f, F_OK))
		return -1;
	*rc = point_opts(sw, p, rep, self, f, &av, &o, e);
	if (!*rc)
		*rc = run_config_load(&o, &c, e);
	if (!*rc && !ids[in]) {
		ids[in] = malloc(PROVENANCE_ID_MAX);
		if (!ids[in]) {
			err_host(e, "mmusim", 0, 0, "out of memory");
			*rc = POOL_EHOST;
		} else {
			*rc = run_input_id(&o, &c, NULL, ids[in], e);
		}
	}
	if (!*rc) {
		provenance_config_hash(&c, hash);
		r = sweep_report_matches(f, hash, ids[in], provenance_build_id());
	}
	sweep_argv_free(av);
	return r;
}

/* Cut the @nt points @todo (one input, repetition @rep) into tasks of at most
 * SWEEP_GROUP_MAX points (memory), as even as can be. */
static int plan_chunks(struct sweep_plan *plan, const size_t *todo, size_t nt, unsigned rep)
{
	size_t nch = (nt + SWEEP_GROUP_MAX - 1) / SWEEP_GROUP_MAX;

	if (plan->ntasks + nch > plan->cap) {
		size_t cap = (plan->ntasks + nch) * 2;
		struct sweep_task *t = realloc(plan->tasks, cap * sizeof(*t));

		if (!t)
			return -1;
		memset(t + plan->ntasks, 0, (cap - plan->ntasks) * sizeof(*t));
		plan->tasks = t;
		plan->cap = cap;
	}
	for (size_t c = 0, at = 0; c < nch && at < nt; c++) {
		size_t take = (nt - at + (nch - c) - 1) / (nch - c);
		struct sweep_task *t = &plan->tasks[plan->ntasks++];

		t->pts = malloc(take * sizeof(*t->pts));
		if (!t->pts)
			return -1;
		memcpy(t->pts, todo + at, take * sizeof(*t->pts));
		t->n = take;
		t->rep = rep;
		at += take;
	}
	return 0;
}

/*
 * The stream of point @p, repetition @rep: points of one input share a decode
 * only when they read the same stream. A workload's mappings are placed as its
 * kernel release (os.kernel) places them (workload.c); a trace's as os.layout
 * and, unless that is trace, os.kernel say (layout.c). 0, or a run.h status
 * with @e.
 */
static int point_stream(const struct sweep *sw, size_t p, unsigned rep, const char *self,
			size_t *k, struct err *e)
{
	char **av;
	struct run_opts o;
	struct sim_config c;
	int rc = point_opts(sw, p, rep, self, "/dev/null", &av, &o, e);

	if (!rc)
		rc = run_config_load(&o, &c, e);
	if (!rc)
		*k = stream_of(sw, p, &c);
	sweep_argv_free(av);
	return rc;
}

struct keyed {
	size_t key, p;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->p > y->p) - (x->p < y->p);
}

/* Cut the points @todo of one input and repetition into tasks, one stream at a time. */
static int plan_input(const struct sweep *sw, struct sweep_plan *plan, size_t *todo, size_t nt,
		      unsigned rep, const char *self, struct err *e)
{
	struct keyed *kp;
	size_t *sub;
	int rc = 0;

	if (!nt)
		return 0;
	kp = calloc(nt, sizeof(*kp));
	sub = calloc(nt, sizeof(*sub));
	if (!kp || !sub)
		rc = POOL_EHOST;
	for (size_t i = 0; i < nt && !rc; i++) {
		kp[i].p = todo[i];
		rc = point_stream(sw, todo[i], rep, self, &kp[i].key, e);
	}
	if (!rc)
		qsort(kp, nt, sizeof(*kp), keyed_cmp); /* by stream, then point order */
	for (size_t i = 0, j; i < nt && !rc; i = j) {
		size_t ns = 0;

		for (j = i; j < nt && kp[j].key == kp[i].key; j++)
			sub[ns++] = kp[j].p;
		if (plan_chunks(plan, sub, ns, rep))
			rc = POOL_EHOST;
	}
	free(kp);
	free(sub);
	return rc;
}

/*
 * Tasks: the points still to run, grouped by input and repetition (one
 * decode drives them all) and, for a workload, by kernel release, each group
 * cut into enough chunks to keep the workers busy.
 */
int sweep_plan(const struct sweep *sw, const char *outdir, const char *self, unsigned shard_i,
	       unsigned shard_n, struct sweep_plan *plan, struct err *e)
{
	size_t per_input = sw->npoints / sw->ninputs, nsrc = sweep_nsources(sw);
	char **ids = calloc(nsrc, sizeof(*ids)); /* point_current() fills them */
	size_t *todo = calloc(per_input + 1, sizeof(*todo));
	int rc = 0;

	memset(plan, 0, sizeof(*plan));
	if (!ids || !todo)
		rc = POOL_EHOST;
	for (size_t in = 0; in < sw->ninputs && !rc; in++)
		for (unsigned r = 0; r < sw->repeat && !rc; r++) {
			size_t nt = 0;

			for (size_t p = in * per_input; p < (in + 1) * per_input && !rc; p++) {
				char *f;

				if (p % shard_n != shard_i)
					continue;
				plan->total++;
				f = sweep_point_file(sw, outdir, p, r);
				switch (point_current(sw, p, r, f, sweep_point_source(sw, p), ids, self,
						      &rc, e)) {
				case 1:
					plan->done++; /* done by an earlier run under the same key (resume) */
					break;
				case 0:
					plan->stale++;
					todo[nt++] = p;
					break;
				default:
					todo[nt++] = p;
				}
				free(f);
			}
			if (!rc)
				rc = plan_input(sw, plan, todo, nt, r, self, e);
		}
	if (rc == POOL_EHOST)
		err_host(e, "mmusim", 0, 0, "out of memory");
	for (size_t i = 0; ids && i < nsrc; i++)
		free(ids[i]);
	free(ids);
	free(todo);
	return rc;
}

void sweep_plan_free(struct sweep_plan *plan)
{
	for (size_t i = 0; plan->tasks && i < plan->ntasks; i++)
		free(plan->tasks[i].pts);
	free(plan->tasks);
	memset(plan, 0, sizeof(*plan));
}

/* A worker ended with status @ws: count its points, or note the first failure. */
static void reap(struct sweep_plan *plan, pid_t pid, int ws, int *status,
		 const struct sweep_exec_opts *o)
{
	for (size_t i = 0; i < plan->ntasks; i++) {
		struct sweep_task *t = &plan->tasks[i];

		if (t->pid != pid)
			continue;
		t->pid = 0;
		if (WIFEXITED(ws) && !WEXITSTATUS(ws)) {
			plan->done += t->n;
		} else if (!*status) {
			/*
			 * A worker stopped by ^C or SIGTERM (exit 130, as this process
			 * would, or killed by the signal) was interrupted, not failing:
			 * the sweep says so once, with no worker failure.
			 */
			bool intr = (WIFEXITED(ws) && WEXITSTATUS(ws) == 130) ||
				    (WIFSIGNALED(ws) && (WTERMSIG(ws) == SIGINT || WTERMSIG(ws) == SIGTERM));

			*status = intr ? 130 : WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
			if (!intr && o->failed)
				o->failed(o->arg, t);
		}
	}
}

int sweep_exec(struct sweep_plan *plan, const struct sweep_exec_opts *o, struct err *e)
{
	size_t next = 0, running = 0;
	double t0 = now_seconds();
	int status = 0;

	/*
	 * A lone task (every point of one input: the usual sweep of a trace) runs in
	 * this process: a fork, the child's copy-on-write faults and its exit cost
	 * 3-8 ms on this project's guest, and nothing runs beside it to isolate it
	 * from. Its status is taken as a worker's exit status would be.
	 */
	if (plan->ntasks == 1 && !*o->stop) {
		struct sweep_task *t = &plan->tasks[0];

		ends_after_points = true;
		t->pid = getpid();
		reap(plan, t->pid, W_EXITCODE(o->worker(o->arg, t, o->threads) & 0xff, 0), &status, o);
		if (o->progress)
			o->progress(o->arg, plan->done, plan->total, now_seconds() - t0);
		return *o->stop ? 130 : status;
	}

	while ((next < plan->ntasks || running) && !*o->stop) {
		while (running < o->jobs && next < plan->ntasks && !status) {
			struct sweep_task *t = &plan->tasks[next++];
			pid_t pid;

			fflush(NULL); /* nothing buffered twice */
			pid = fork();
			if (pid < 0) {
				err_set(e, "fork", 0, 0, "%s", strerror(errno));
				status = 1;
				break;
			}
			if (!pid) {
				/* the worker: this process's copy of the loaded sweep */
				int ws;

				ends_after_points = true;
				ws = o->worker(o->arg, t, o->threads);

				fflush(NULL);
				_exit(ws);
			}
			t->pid = pid;
			running++;
		}
		if (!running)
			break;
		int ws;
		pid_t pid = waitpid(-1, &ws, 0);

		if (pid < 0)
			continue; /* EINTR: the loop tests *o->stop */
		running--;
		reap(plan, pid, ws, &status, o);
		if (o->progress)
			o->progress(o->arg, plan->done, plan->total, now_seconds() - t0);
	}
	if (*o->stop)
		for (size_t i = 0; i < plan->ntasks; i++)
			if (plan->tasks[i].pid > 0)
				kill(plan->tasks[i].pid, SIGTERM);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return *o->stop ? 130 : status;
}

char **sweep_point_files(const struct sweep *sw, const char *outdir, size_t *n)
{
	char **files = calloc(sw->npoints * sw->repeat + 1, sizeof(*files));

	*n = 0;
	if (!files)
		return NULL;
	for (size_t p = 0; p < sw->npoints; p++)
		for (unsigned r = 0; r < sw->repeat; r++) {
			char *f = sweep_point_file(sw, outdir, p, r);

			if (f && file_exists(f))
				files[(*n)++] = f;
			else
				free(f);
		}
	return files;
}

char *sweep_default_csv(const char *sweep_path)
{
	const char *b = strrchr(sweep_path, '/');
	char *out = malloc(strlen(sweep_path) + 8), *dot;

	if (!out)
		return NULL;
	strcpy(out, b ? b + 1 : sweep_path);
	dot = strrchr(out, '.');
	if (dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
		*dot = 0;
	strcat(out, ".csv");
	return out;
}

static bool all_numeric(char *const *vals, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double d;
		uint64_t u;

		if (parse_double(vals[i], &d) && parse_size(vals[i], &u))
			return false;
	}
	return true;
}

const char *sweep_plot_opts(const struct sweep *sw, const char *out, struct plot_opts *o)
{
	/* the dimensions: the input when several are swept, then the keys */
	const char *dim[2] = { NULL, NULL };
	char *const *vals[2] = { NULL, NULL };
	size_t nvals[2] = { 0, 0 }, nd = 0, mode = SIZE_MAX;

	memset(o, 0, sizeof(*o));
	if (sw->ninputs > 1) {
		dim[nd] = "input";
		vals[nd] = sw->input_names;
		nvals[nd++] = sw->ninputs;
	}
	for (size_t i = 0; i < sw->naxes; i++)
		if (!strcmp(sw->axes[i].key, "os.mode"))
			mode = i;
	for (size_t i = 0; i < sw->naxes && nd < 2; i++) {
		if (i == mode && nd == 0 && sw->naxes + (sw->ninputs > 1) > 1)
			continue; /* the mode is the series whenever there is another dimension */
		dim[nd] = sw->axes[i].key;
		vals[nd] = sw->axes[i].vals;
		nvals[nd++] = sw->axes[i].nvals;
	}
	if (mode != SIZE_MAX && nd == 2 && strcmp(dim[0], "os.mode") && strcmp(dim[1], "os.mode")) {
		dim[1] = "os.mode";
		vals[1] = sw->axes[mode].vals;
		nvals[1] = sw->axes[mode].nvals;
	}
	o->out = out;
	if (sw->ninputs == 1)
		o->input = sw->input_names[0]; /* the title names it (a trace by its file name) */
	o->x = dim[0] ? dim[0] : "input";
	o->by = dim[1];
	/* TLB sizes and workload parameters (footprints, counts) span powers of two */
	o->logx = (!strncmp(o->x, "tlb.", 4) && strstr(o->x, "entries")) ||
		  (!strncmp(o->x, "workload.", 9) && strcmp(o->x, "workload.madvise"));
	for (size_t i = 0; o->logx && vals[0] && i < nvals[0]; i++)
		o->logx = strtod(vals[0][i], NULL) > 0; /* a log axis needs x > 0 */
	if (o->by && vals[0] && !all_numeric(vals[0], nvals[0]))
		o->base = vals[1][0]; /* bars: % change against the series' first value */
	o->y = !strncmp(o->x, "tlb.", 4) ? "mpki:tlb.l1d.misses" : "cycles.total";
	/* a third dimension (one that varies): a panel per value; a fourth: no figure */
	for (size_t i = 0; i <= sw->naxes; i++) {
		const char *k = i < sw->naxes ? sw->axes[i].key : "input";
		size_t nv = i < sw->naxes ? sw->axes[i].nvals : sw->ninputs;

		if (nv < 2 || !strcmp(k, o->x) || (o->by && !strcmp(k, o->by)))
			continue;
		if (o->facet)
			return "more than three swept dimensions (draw it with mmusim plot --where)";
		o->facet = k;
	}
	return NULL;
}

int sweep_merge_into(struct outfile *of, char *const *files, size_t n, bool per_rep, FILE *log,
		     struct err *e)
{
	FILE *f = outfile_stream(of);

	if (!f) {
		outfile_abort(of);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	if (sweep_merge_log(files, n, f, per_rep, log, e)) {
		outfile_abort(of);
		return -1;
	}
	return outfile_commit(of, e) ? POOL_EHOST : 0;
}

/* A sweep command's state (sweep_command()). */
struct sweep_state {
	const struct sweep_cmd *c;
	struct sweep sw;
	const char *csv, *outdir;
	char *csv_alloc;
	bool temp_outdir;
	bool tty;           /* the log is a terminal: progress redrawn in place */
	double next_line;   /* not a terminal: when the next progress line is due */
	bool progress_open; /* a redrawn progress line awaits its newline */
	char self[4096], dir_buf[4200];
};

static int usage_err(struct err *e, const char *fmt, const char *arg)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->msg, sizeof(e->msg), fmt, arg);
	return RUN_EUSAGE;
}

/* Where the points' reports go: --outdir, OUT.csv.d, or a temporary directory. */
static int sweep_outdir(struct sweep_state *s, struct err *e)
{
	const char *td = getenv("TMPDIR");

	s->outdir = s->c->outdir;
	if (s->outdir)
		return 0;
	if (strcmp(s->csv, "-") && outfile_is_regular_path(s->csv)) {
		snprintf(s->dir_buf, sizeof(s->dir_buf), "%s.d", s->csv);
		s->outdir = s->dir_buf;
		return 0;
	}
	if (s->c->list || s->c->shard_n > 1 || s->c->run_points)
		return usage_err(e, "sweep: -o '%s' is not a regular file; give --outdir for the points' reports",
				 s->csv);
	/* -o /dev/null, -o -: the points' reports live only as long as the sweep */
	snprintf(s->dir_buf, sizeof(s->dir_buf), "%s/mmusim-sweep-XXXXXX", td && *td ? td : "/tmp");
	if (!mkdtemp(s->dir_buf)) {
		err_set(e, s->dir_buf, 0, 0, "%s", strerror(errno));
		return POOL_EHOST;
	}
	s->outdir = s->dir_buf;
	s->temp_outdir = true;
	return 0;
}

/* --run-points P,P,...: run them in this process. */
static int sweep_run_here(struct sweep_state *s, struct err *e)
{
	size_t n = 0, *pts = calloc(s->sw.npoints, sizeof(*pts));
	char *dup = strdup(s->c->run_points), *save = NULL;
	int rc;

	if (!pts || !dup) {
		free(pts);
		free(dup);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	for (char *t = strtok_r(dup, ",", &save); t && n < s->sw.npoints; t = strtok_r(NULL, ",", &save))
		pts[n++] = strtoull(t, NULL, 10);
	rc = s->c->worker(s->c->arg, &s->sw, s->outdir, s->self,
			  &(struct sweep_task){ .pts = pts, .n = n, .rep = s->c->rep }, s->c->threads);
	free(pts);
	free(dup);
	return rc;
}

static void sweep_list(const struct sweep_state *s)
{
	for (size_t p = s->c->shard_i; p < s->sw.npoints; p += s->c->shard_n)
		for (unsigned r = 0; r < s->sw.repeat; r++) {
			char *json = sweep_point_file(&s->sw, s->outdir, p, r);
			char **av = sweep_point_argv(&s->sw, p, r, "mmusim", json);

			sweep_print_cmd(stdout, av);
			sweep_argv_free(av);
			free(json);
		}
}

static int exec_worker(void *arg, const struct sweep_task *t, unsigned threads)
{
	const struct sweep_state *s = arg;

	return s->c->worker(s->c->arg, &s->sw, s->outdir, s->self, t, threads);
}

static void exec_failed(void *arg, const struct sweep_task *t)
{
	const struct sweep_state *s = arg;

	fprintf(s->c->log, "sweep: the worker for point %zu%s failed; stopping\n", t->pts[0],
		t->n > 1 ? " and others" : "");
}

/*
 * After each finished worker: points done of the total, the share, the time so
 * far and, at that pace, the time left. On a terminal one line redrawn in place;
 * otherwise a plain line at most every SWEEP_PROGRESS_EVERY seconds, and the last.
 */
#define SWEEP_PROGRESS_EVERY 10.0
static void exec_progress(void *arg, size_t done, size_t total, double seconds)
{
	struct sweep_state *s = arg;
	char left[48] = "";

	if (s->c->quiet || !total)
		return;
	if (!s->tty && done < total && seconds < s->next_line)
		return;
	s->next_line = seconds + SWEEP_PROGRESS_EVERY;
	if (done && done < total)
		snprintf(left, sizeof(left), ", %.0f s left", seconds * (double)(total - done) / (double)done);
	fprintf(s->c->log, "%ssweep: %zu/%zu points done (%.0f%%), %.1f s%s%s", s->tty ? "\r\033[K" : "",
		done, total, 100.0 * (double)done / (double)total, seconds, left, s->tty ? "" : "\n");
	s->progress_open = s->tty;
}

/* Plan and run the points still to run, on forked workers. */
static int sweep_schedule(struct sweep_state *s, struct err *e)
{
	const struct sweep_cmd *c = s->c;
	struct sweep_plan plan;
	unsigned jobs = c->jobs, threads = c->threads ? c->threads : 1;
	int status;

	if (!jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = n > 0 ? (unsigned)n : 1;
	}
	if ((status = sweep_plan(&s->sw, s->outdir, s->self, c->shard_i, c->shard_n, &plan, e))) {
		sweep_plan_free(&plan);
		return status;
	}
	/* fewer workers than jobs: each runs its simulators on several threads (one decode) */
	if (plan.ntasks && plan.ntasks < jobs) {
		threads = jobs / (unsigned)plan.ntasks;
		jobs = (unsigned)plan.ntasks;
	}
	if (!c->quiet && (plan.done || plan.stale))
		fprintf(c->log, "sweep: %zu of %zu points reused from %s%s", plan.done, plan.total,
			s->outdir, plan.stale ? "" : "\n");
	if (!c->quiet && plan.stale)
		fprintf(c->log, "; %zu rerun (their config, input or mmusim build changed)\n", plan.stale);
	status = sweep_exec(&plan, &(struct sweep_exec_opts){ jobs, threads, c->stop, exec_worker,
							     exec_failed, exec_progress, s }, e);
	if (status == 1 && e->msg[0]) {
		char buf[1024];

		err_format(e, buf, sizeof(buf)); /* fork() failed */
		fprintf(c->log, "%s\n", buf);
	}
	if (s->progress_open)
		fputc('\n', c->log);
	sweep_plan_free(&plan);
	if (status == 130 && s->temp_outdir)
		fprintf(c->log, "mmusim: sweep interrupted; no result written\n");
	else if (status == 130)
		fprintf(c->log, "mmusim: sweep interrupted; finished points are kept in %s, run it again to resume\n",
			s->outdir);
	return status;
}

/* The CSV from the points' reports, then the figure if --plot. */
/* OUT.reps.csv beside a regular OUT.csv (caller frees), else NULL. */
static char *sweep_reps_csv(const char *csv)
{
	size_t n = strlen(csv);
	char *r;

	if (n < 5 || strcmp(csv + n - 4, ".csv") || !outfile_is_regular_path(csv))
		return NULL;
	r = malloc(n + 6);
	if (r)
		snprintf(r, n + 6, "%.*s.reps.csv", (int)(n - 4), csv);
	return r;
}

static int sweep_merge_plot(struct sweep_state *s, struct outfile *csv_of, struct err *e)
{
	size_t nf;
	char **files = sweep_point_files(&s->sw, s->outdir, &nf), *reps = NULL;
	int rc;

	if (!files) {
		outfile_abort(csv_of);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	/* a shard's CSV has the other shards' points missing: no warning */
	rc = sweep_merge_into(csv_of, files, nf, false, s->c->shard_n == 1 ? s->c->log : NULL, e);
	if (!s->c->quiet && !rc)
		fprintf(s->c->log, "sweep: %zu points -> %s\n", nf / s->sw.repeat, s->csv);
	if (!rc && s->sw.repeat > 1 && (reps = sweep_reps_csv(s->csv))) {
		struct outfile rof;

		rc = outfile_open(&rof, reps, 0, e) ? -1 : sweep_merge_into(&rof, files, nf, true, NULL, e);
		if (!s->c->quiet && !rc)
			fprintf(s->c->log, "sweep: %zu points x %u repetitions -> %s\n",
				nf / s->sw.repeat, s->sw.repeat, reps);
	}
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	if (s->c->plot_out && !rc) {
		struct plot_opts po;
		const char *why = sweep_plot_opts(&s->sw, s->c->plot_out, &po);

		/*
		 * The CSV is written: a figure the sweep's shape does not allow is a warning,
		 * not a failure (exit 0); gnuplot failing is still one (exit 1).
		 */
		po.warn = s->c->log;
		if (why) {
			fprintf(s->c->log, "sweep: warning: no figure %s: %s\n", s->c->plot_out, why);
		} else {
			/* a derived y (mpki:, A/B) of repetitions: its error bars from each repetition */
			rc = plot_csv(reps && (strchr(po.y, ':') || strchr(po.y, '/')) ? reps : s->csv,
				      &po, e);
			if (rc == -1) {
				char msg[800];

				err_format(e, msg, sizeof(msg));
				fprintf(s->c->log, "sweep: warning: no figure %s: %s\n", s->c->plot_out, msg);
				rc = 0;
			} else if (rc) {
				rc = POOL_EHOST; /* gnuplot failed: exit 1 */
			} else if (!s->c->quiet) {
				fprintf(s->c->log, "sweep: plot -> %s\n", s->c->plot_out);
			}
		}
	}
	free(reps);
	return rc;
}

/*
 * No result replaces an input or another result: the CSV, OUT.reps.csv and the
 * figure against the sweep file, its config and its traces. 0, or -1 with @e.
 */
static int sweep_check_distinct(const struct sweep_state *s, struct err *e)
{
	const struct sweep *sw = &s->sw;
	char *reps = sw->repeat > 1 ? sweep_reps_csv(s->csv) : NULL;
	struct outfile_role outs[3] = { { s->csv, "-o" }, { reps, "the repetitions' CSV" },
					{ s->c->plot_out, "--plot" } };
	struct outfile_role *ins = calloc(sw->ninputs + 2, sizeof(*ins));
	size_t nin = 0;
	int rc;

	if (!ins) {
		free(reps);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	ins[nin++] = (struct outfile_role){ s->c->file, "the sweep file" };
	ins[nin++] = (struct outfile_role){ sw->config, "the sweep's config" };
	for (size_t i = 0; i < sw->ninputs; i++)
		if (!sw->is_wl[i] && !sw->procs)
			ins[nin++] = (struct outfile_role){ sw->inputs[i], "the trace" };
	rc = outfile_check_distinct(outs, 3, ins, nin, e);
	free(ins);
	free(reps);
	return rc;
}

/* After the sweep is loaded: the directories, then list, or run and merge. */
static int sweep_command_loaded(struct sweep_state *s, struct err *e)
{
	const struct sweep_cmd *c = s->c;
	struct outfile csv_of;
	bool will_merge;
	ssize_t sl;
	int rc;

	if (c->plot_out && !outfile_is_regular_path(s->csv))
		return usage_err(e, "sweep: --plot reads the CSV back; -o '%s' is not a regular file", s->csv);
	if (!c->run_points && (rc = sweep_check_distinct(s, e)))
		return rc;
	if ((rc = sweep_outdir(s, e)))
		return rc;
	sl = readlink("/proc/self/exe", s->self, sizeof(s->self) - 1);
	if (sl <= 0) {
		err_set(e, "mmusim", 0, 0, "cannot find its own executable");
		return POOL_EHOST;
	}
	s->self[sl] = 0;
	if (c->run_points)
		return sweep_run_here(s, e);
	if (mkdir_p(s->outdir)) {
		int err = errno;

		/* no permission, a file in the way, a read-only file system: the user's path */
		if (err == ENOSPC || err == EIO || err == ENOMEM || err == EDQUOT) {
			err_host(e, s->outdir, 0, 0, "%s", strerror(err));
			return POOL_EHOST;
		}
		return err_set(e, s->outdir, 0, 0, "%s", strerror(err));
	}
	/* The CSV is opened before any point runs: a directory or an unwritable path is
	 * said now, not after the sweep. */
	will_merge = !c->list && (c->shard_n == 1 || s->csv_alloc == NULL);
	if (will_merge && outfile_open(&csv_of, s->csv, 0, e))
		return -1;
	if (c->list) {
		sweep_list(s);
		return 0;
	}
	rc = sweep_schedule(s, e);
	if (!rc && will_merge)
		return sweep_merge_plot(s, &csv_of, e);
	if (will_merge)
		outfile_abort(&csv_of);
	return rc;
}

int sweep_command(const struct sweep_cmd *c, struct err *e)
{
	struct sweep_state *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	s->c = c;
	s->tty = c->log && isatty(fileno(c->log));
	if (!c->file) {
		rc = usage_err(e, "sweep: no SWEEP.yaml%s", "");
	} else if (c->trace && c->workload) {
		rc = usage_err(e, "sweep: give a TRACE or -w WORKLOAD, not both%s", "");
	} else if (sweep_load(&s->sw, c->file, c->trace, c->workload, e)) {
		rc = -1;
	} else {
		s->csv = c->csv ? c->csv : (s->csv_alloc = sweep_default_csv(c->file));
		if (!s->csv) {
			err_host(e, "mmusim", 0, 0, "out of memory");
			rc = POOL_EHOST;
		} else {
			rc = sweep_command_loaded(s, e);
		}
		if (s->temp_outdir)
			remove_dir(s->outdir);
		sweep_free(&s->sw);
	}
	free(s->csv_alloc);
	free(s);
	return rc;
}
