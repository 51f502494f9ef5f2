/*
 * mmusim.c - the public API (include/mmusim.h) over the simulator: a machine is
 * a struct run (run.h: one simulator per mode) plus a buffer of fed records.
 *
 * Fed references and events are appended to a batch of TRACE_BATCH records
 * (events in their own array, as the readers fill a struct trace_batch) and the
 * batch is run through sim_run_batch_summarized() on every simulator, as
 * pool.c's plain loop does with a reader's batches: the same hot path and the
 * same counts as a replay. Replays go through run_drive() (pool_run()), the
 * function `mmusim run` has always used; pool_run() finishes the simulators, so
 * a replay is a machine's last input. Reports of a machine not yet finished are
 * taken from a finished copy of its counters (sim_finish() is not idempotent).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "mmu.h"
#include "outfile.h"
#include "mmusim.h"
#include "provenance.h"
#include "run.h"
#include "trace_mux.h"
#include "util.h"
#include "workload.h"

_Static_assert((int)MMUSIM_EINPUT == (int)POOL_EINPUT && (int)MMUSIM_EHOST == (int)POOL_EHOST &&
		       (int)MMUSIM_EINTR == (int)POOL_EINTR && (int)MMUSIM_EUSAGE == (int)RUN_EUSAGE,
	       "the public statuses are the internal ones");
_Static_assert((int)MMUSIM_IFETCH == R_IFETCH && (int)MMUSIM_MODIFY == R_MODIFY,
	       "reference kinds");
_Static_assert((int)MMUSIM_MMAP == EV_MMAP && (int)MMUSIM_MREMAP == EV_MREMAP, "event kinds");

#define FED_TRACE "<fed>" /* the report's trace when nothing was replayed */
#define FED_FORMAT "api"

struct mmusim {
	struct run run;
	struct sim_config cfg;
	struct mmusim_options opt; /* its labels: copies (labels); no config pointers */
	char **labels;
	bool compare;  /* options.modes given: the comparison table, JSON by mode */
	bool finished; /* a replay ran: sim_finish() done */
	int failed;    /* the status of a bad input met (sticky) */
	int status;    /* the last failure's status */
	struct err err;
	char msg[1024];
	char warning[1024]; /* mmusim_warning()'s */
	/* the fed batch */
	struct trace_rec *recs;
	struct os_event *evs;
	size_t nrec, nev;
	struct batch_summary sum;
	uint64_t records; /* records simulated (fed and replayed) */
	const struct trace_reader *replaying; /* during replay(): its reader (progress) */
	double wall;      /* seconds spent simulating */
	/* the report's names */
	char config_name[256];
	char trace[256];
	const char *format;
	char input_id[PROVENANCE_ID_MAX];
	bool have_input_id;
	/* the replayed input, identified when a JSON report first asks (hashing a
	 * 13 MB trace is 2 % of a run that writes no JSON) */
	char *id_path, *id_workload, *id_format;
	bool id_pending;
};

/* Record failure @rc (with m->err) and return it. */
static int fail(struct mmusim *m, int rc)
{
	if (rc == MMUSIM_EINPUT && m->err.host)
		rc = MMUSIM_EHOST; /* not the input: the host ran out of memory */
	m->status = rc;
	err_format(&m->err, m->msg, sizeof(m->msg));
	return rc;
}

static int usage_err(struct mmusim *m, const char *msg)
{
	err_set(&m->err, NULL, 0, 0, "%s", msg);
	return fail(m, MMUSIM_EUSAGE);
}

static int load_config(struct mmusim *m, const struct mmusim_options *o)
{
	const char *origin = "built-in";

	config_defaults(&m->cfg);
	if (o->config_path) {
		if (config_load_file(&m->cfg, o->config_path, &m->err))
			return -1;
		origin = o->config_path;
	}
	if (o->config_yaml) {
		if (config_load_string(&m->cfg, o->config_yaml, "<yaml>", &m->err))
			return -1;
		origin = o->config_path ? o->config_path : "<yaml>";
	}
	for (unsigned i = 0; i < o->nsets; i++)
		if (config_set(&m->cfg, o->sets[i], &m->err))
			return -1;
	return config_validate(&m->cfg, o->nsets ? "--set" : origin, &m->err);
}

int mmusim_create(struct mmusim **out, const struct mmusim_options *o)
{
	static const struct mmusim_options none;
	struct mmusim *m = calloc(1, sizeof(*m));
	enum os_mode modes[MODE_NR];
	unsigned nlabels = o ? o->nlabels : 0;
	int n = 1, rc;

	*out = m;
	if (!m)
		return MMUSIM_EHOST;
	m->opt = o ? *o : none;
	o = &m->opt;
	m->labels = calloc(nlabels ? nlabels : 1, sizeof(*m->labels));
	for (unsigned i = 0; m->labels && i < nlabels; i++)
		if (!(m->labels[i] = strdup(o->labels[i]))) {
			m->opt.nlabels = i; /* the ones made are freed */
			break;
		}
	m->recs = malloc(TRACE_BATCH * sizeof(*m->recs));
	m->evs = malloc(TRACE_BATCH * sizeof(*m->evs));
	if (!m->recs || !m->evs || !m->labels || m->opt.nlabels != nlabels) {
		err_set(&m->err, "mmusim", 0, 0, "out of memory");
		return m->failed = fail(m, MMUSIM_EHOST);
	}
	snprintf(m->config_name, sizeof(m->config_name), "%s",
		 o->config_path ? o->config_path : o->config_yaml ? "<yaml>" : "built-in");
	snprintf(m->trace, sizeof(m->trace), "%s", FED_TRACE);
	m->format = FED_FORMAT;
	if (load_config(m, o))
		return m->failed = fail(m, MMUSIM_EINPUT);
	modes[0] = m->cfg.mode;
	if (o->modes && (n = run_modes_parse(o->modes, modes, &m->err)) < 0)
		return m->failed = fail(m, n);
	m->compare = o->modes != NULL;
	m->opt.labels = (const char *const *)m->labels;
	m->opt.config_path = m->opt.config_yaml = m->opt.modes = NULL; /* the caller's */
	m->opt.sets = NULL;
	rc = run_setup(&m->run, &m->cfg, modes, (unsigned)n, m->trace, &m->err);
	if (rc)
		return m->failed = fail(m, rc);
	m->run.threads = o->threads;
	return 0;
}

void mmusim_destroy(struct mmusim *m)
{
	if (!m)
		return;
	run_free(&m->run);
	sim_batch_summary_free(&m->sum);
	for (unsigned i = 0; m->labels && i < m->opt.nlabels; i++)
		free(m->labels[i]);
	free(m->labels);
	free(m->recs);
	free(m->evs);
	free(m->id_path);
	free(m->id_workload);
	free(m->id_format);
	free(m);
}

const char *mmusim_error(const struct mmusim *m)
{
	return m && (m->status || m->msg[0]) ? m->msg : "";
}

int mmusim_status(const struct mmusim *m)
{
	return m ? m->status : MMUSIM_EHOST;
}

unsigned mmusim_modes(const struct mmusim *m)
{
	return m->run.n;
}

uint64_t mmusim_records(const struct mmusim *m)
{
	return m->records + m->nrec;
}

double mmusim_input_fraction(const struct mmusim *m)
{
	return m->replaying ? trace_fraction(m->replaying) : -1;
}

/* --- feeding ------------------------------------------------------------- */

/* Can @m take more input? 0 or its status. */
static int feedable(struct mmusim *m)
{
	if (m->failed)
		return m->status = m->failed;
	if (m->finished)
		return usage_err(m, "the machine is finished (a replay was its last input)");
	return 0;
}

/* The batch loop of pool.c's pool_plain() on the fed batch. */
static int flush(struct mmusim *m)
{
	struct trace_batch b = { m->recs, m->nrec, m->evs, m->nev };
	struct run *r = &m->run;
	double t0;
	bool summed;

	if (!m->nrec)
		return 0;
	t0 = now_seconds();
	summed = r->n > 1 && !sim_batch_summarize(&b, &m->sum);
	for (unsigned i = 0; i < r->n; i++) {
		if (sim_run_batch_summarized(&r->sims[i], &b, summed ? &m->sum : NULL, &m->err)) {
			m->nrec = m->nev = 0;
			return m->failed = fail(m, MMUSIM_EINPUT);
		}
		if (m->opt.check_invariants)
			sim_check_invariants(&r->sims[i]);
	}
	m->records += b.n;
	m->nrec = m->nev = 0;
	m->wall += now_seconds() - t0;
	return 0;
}

int mmusim_flush(struct mmusim *m)
{
	int rc = feedable(m);

	return rc ? rc : flush(m);
}

/* Append one record (the batch has room: flushed when full). */
static inline int put(struct mmusim *m, uint32_t kind, uint64_t addr, uint32_t size)
{
	struct trace_rec *t = &m->recs[m->nrec++];

	t->addr = addr;
	t->size = size;
	t->kind = kind;
	return m->nrec == TRACE_BATCH ? flush(m) : 0;
}

/*
 * Why mmusim_ref() refuses a reference. Out of line so that the hot path needs
 * no stack frame: 19 instructions a reference instead of 26 (callgrind,
 * bench/api_feed.c on the validation trace).
 */
static __attribute__((noinline, cold)) int ref_refused(struct mmusim *m)
{
	int rc = feedable(m);

	return rc ? rc : usage_err(m, "mmusim_ref: bad kind or size 0");
}

int mmusim_ref(struct mmusim *m, enum mmusim_ref_kind kind, uint64_t addr, uint32_t size)
{
	if (__builtin_expect(m->failed || m->finished || (unsigned)kind > MMUSIM_MODIFY || !size, 0))
		return ref_refused(m);
	return put(m, (uint32_t)kind, addr, size);
}

int mmusim_refs(struct mmusim *m, const struct mmusim_ref *refs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = mmusim_ref(m, (enum mmusim_ref_kind)refs[i].kind, refs[i].addr, refs[i].size);

		if (rc)
			return rc;
	}
	return 0;
}

int mmusim_insns(struct mmusim *m, uint32_t n)
{
	int rc = feedable(m);

	if (rc || !n)
		return rc;
	return put(m, R_INSNS, 0, n);
}

int mmusim_event(struct mmusim *m, const struct mmusim_event *ev)
{
	struct os_event *o;
	int rc = feedable(m);

	if (rc)
		return rc;
	if (ev->kind > MMUSIM_MREMAP)
		return usage_err(m, "mmusim_event: bad kind");
	if (m->nev == TRACE_BATCH && (rc = flush(m)))
		return rc;
	o = &m->evs[m->nev];
	*o = (struct os_event){ .kind = ev->kind, .prot = ev->prot, .flags = ev->flags,
				.fd = ev->fd, .advice = ev->advice, .addr = ev->addr,
				.len = ev->len, .new_addr = ev->new_addr, .new_len = ev->new_len };
	return put(m, R_EVENT, 0, (uint32_t)m->nev++);
}

int mmusim_events(struct mmusim *m, const struct mmusim_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = mmusim_event(m, &evs[i]);

		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Every simulator's csv_prov (sim.h): the values of the provenance columns that
 * end the rows of its timeline, steps and vmas CSVs, as the JSON report has them
 * (@input_id: "" when the input has no identity yet, as fed references).
 */
static void set_csv_prov(struct mmusim *m, const char *input_id)
{
	for (unsigned i = 0; i < m->run.n; i++) {
		struct sim *s = &m->run.sims[i];
		FILE *f = fmemopen(s->csv_prov, sizeof(s->csv_prov), "w");
		char hash[17];

		s->csv_prov[0] = '\0';
		if (!f)
			continue; /* (no memory: the columns stay empty) */
		provenance_config_hash(&s->cfg, hash);
		fprintf(f, ",%s,%s,%s,", provenance_version(), provenance_build_id(), hash);
		csv_put(f, input_id);
		fclose(f);
		s->csv_prov[sizeof(s->csv_prov) - 1] = '\0'; /* a full buffer gets no NUL */
	}
}

/* The identity of a trace @path, a @workload, or (both NULL) the config's processes. */
static int input_id_of(struct mmusim *m, const char *path, const char *workload,
		       const char *format, char *buf, size_t n)
{
	if (!path && !workload)
		return provenance_processes_id(&m->cfg, format, buf, n, &m->err);
	return provenance_input_id(path, workload, format, buf, n, &m->err);
}

/* Replay @tr (owned: closed here), named @input_id's way after the drive. */
static int replay(struct mmusim *m, struct trace_reader *tr, const char *path,
		  const char *workload, const char *format)
{
	struct run *r = &m->run;
	struct pool_opts po = { .threads = m->opt.threads, .check = m->opt.check_invariants,
				.interrupted = m->opt.interrupted, .progress = m->opt.progress,
				.progress_arg = m->opt.progress_arg };
	int rc;

	snprintf(m->trace, sizeof(m->trace), "%s", tr->name);
	m->format = trace_format_name[tr->format];
	for (unsigned i = 0; i < r->n; i++)
		r->sims[i].k.trace_name = m->trace;
	/*
	 * Rows written during the run (timeline, steps) end with the input's
	 * identity: taken now, as input_identity() would take it after the run
	 * (for a regular file up to 64 MiB a read of it to hash; only then).
	 */
	for (unsigned i = 0; i < r->n; i++)
		if (r->sims[i].timeline || r->sims[i].steps) {
			char id[PROVENANCE_ID_MAX];

			if (input_id_of(m, path, workload, format, id, sizeof(id))) {
				trace_close(tr);
				return m->failed = fail(m, MMUSIM_EINPUT);
			}
			set_csv_prov(m, id);
			break;
		}
	m->replaying = tr;
	rc = run_drive(r, tr, &po, &m->err);
	m->replaying = NULL;
	{
		uint64_t size, hi, lo;

		/* hashed as it was read: no second pass over the file for its identity */
		if (!rc && path && strcmp(path, "-") && trace_content_hash(tr, &size, &hi, &lo)) {
			provenance_content_id(size, hi, lo, format, m->input_id, sizeof(m->input_id));
			m->have_input_id = true;
		}
	}
	for (unsigned i = 0; i < r->n; i++) /* the per-mapping rows name their files (vmas.c) */
		for (struct mm *mm = r->sims[i].k.mms, *cur = r->sims[i].k.mm; mm; mm = mm->next) {
			kernel_use_mm(&r->sims[i].k, mm); /* every process's mappings */
			vmas_set_paths(&r->sims[i].k, tr->files, tr->nfiles);
			kernel_use_mm(&r->sims[i].k, cur);
		}
	trace_close(tr);
	m->records += r->records;
	m->wall += r->wall;
	if (rc)
		return m->failed = fail(m, rc);
	m->finished = true;
	for (unsigned i = 0; i < r->n; i++)
		r->sims[i].st.wall_seconds = m->wall;
	m->id_path = path ? strdup(path) : NULL;
	m->id_workload = workload ? strdup(workload) : NULL;
	m->id_format = format ? strdup(format) : NULL;
	if ((path && !m->id_path) || (workload && !m->id_workload) || (format && !m->id_format)) {
		err_host(&m->err, "mmusim", 0, 0, "out of memory");
		return m->failed = fail(m, MMUSIM_EHOST);
	}
	m->id_pending = !m->have_input_id;
	return 0;
}

/* The replayed input's identity (provenance.h), computed once. 0 or a failure. */
static int input_identity(struct mmusim *m)
{
	if (!m->id_pending)
		return 0;
	if (input_id_of(m, m->id_path, m->id_workload, m->id_format, m->input_id,
			sizeof(m->input_id)))
		return fail(m, MMUSIM_EINPUT);
	m->id_pending = false;
	m->have_input_id = true;
	return 0;
}

int mmusim_replay(struct mmusim *m, const char *path, const char *format)
{
	enum trace_format f = TF_AUTO;
	struct trace_reader *tr;
	int rc = feedable(m);

	if (rc || (rc = flush(m)))
		return rc;
	if (format) {
		f = trace_format_parse(format);
		if (f == TF_NR || f == TF_WORKLOAD) {
			err_set(&m->err, NULL, 0, 0, "unknown --format '%s'", format);
			return fail(m, MMUSIM_EUSAGE);
		}
	}
	if (m->cfg.nprocs) {
		err_set(&m->err, NULL, 0, 0, "the config's processes: list is the input: give no TRACE");
		return fail(m, MMUSIM_EUSAGE);
	}
	tr = trace_open(path, f, &m->err);
	if (tr)
		tr = layout_open(tr, &m->cfg, &m->err);
	if (!tr)
		return fail(m, MMUSIM_EINPUT);
	return replay(m, tr, path, NULL, format);
}

int mmusim_replay_processes(struct mmusim *m, const char *format)
{
	enum trace_format f = TF_AUTO;
	struct trace_reader *tr;
	int rc = feedable(m);

	if (rc || (rc = flush(m)))
		return rc;
	if (!m->cfg.nprocs)
		return usage_err(m, "mmusim_replay_processes: the config has no processes: list");
	if (format) {
		f = trace_format_parse(format);
		if (f == TF_NR || f == TF_WORKLOAD) {
			err_set(&m->err, NULL, 0, 0, "unknown --format '%s'", format);
			return fail(m, MMUSIM_EUSAGE);
		}
	}
	tr = mux_open_config(&m->cfg, f, &m->err);
	if (!tr)
		return fail(m, MMUSIM_EINPUT);
	return replay(m, tr, NULL, NULL, format);
}

unsigned mmusim_processes(const struct mmusim *m)
{
	return m ? m->cfg.nprocs : 0;
}

int mmusim_replay_workload(struct mmusim *m, const char *spec)
{
	struct trace_reader *tr;
	int rc = feedable(m);

	if (rc || (rc = flush(m)))
		return rc;
	if (m->cfg.nprocs) {
		err_set(&m->err, NULL, 0, 0, "the config's processes: list is the input: give no -w WORKLOAD");
		return fail(m, MMUSIM_EUSAGE);
	}
	tr = workload_open_kernel(spec, m->cfg.seed, m->cfg.kernel, &m->err);
	if (!tr)
		return fail(m, MMUSIM_EINPUT);
	return replay(m, tr, NULL, spec, NULL);
}

int mmusim_timeline(struct mmusim *m, FILE *f, double interval_ms)
{
	double cyc = interval_ms * m->cfg.freq_mhz * 1000.0;

	if (!(interval_ms >= SIM_TIMELINE_MIN_MS))
		return usage_err(m, "mmusim_timeline: the interval must be at least 0.001 ms (1 us)");
	if (!(cyc < 0x1p62))
		return usage_err(m, "mmusim_timeline: the interval is longer than 2^62 cycles");
	sim_timeline_header(f, m->cfg.nprocs > 0);
	set_csv_prov(m, m->have_input_id ? m->input_id : "");
	for (unsigned i = 0; i < m->run.n; i++)
		sim_timeline_start(&m->run.sims[i], f, (cycles_t)cyc, m->cfg.nprocs > 0);
	return 0;
}

uint64_t mmusim_timeline_elided(const struct mmusim *m)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < m->run.n; i++)
		n += m->run.sims[i].tl_elided;
	return n;
}

int mmusim_steps(struct mmusim *m, FILE *f)
{
	sim_steps_header(f, &m->cfg);
	set_csv_prov(m, m->have_input_id ? m->input_id : "");
	for (unsigned i = 0; i < m->run.n; i++)
		m->run.sims[i].steps = f;
	return 0;
}

void mmusim_check_invariants(struct mmusim *m)
{
	size_t ev = 0;

	if (m->failed)
		return;
	BUG_ON(!m->run.n || m->run.n > MODE_NR);
	BUG_ON(m->nrec >= TRACE_BATCH || m->nev > m->nrec);
	for (size_t i = 0; i < m->nrec; i++) {
		const struct trace_rec *t = &m->recs[i];

		BUG_ON(t->kind >= R_KIND_NR || (t->kind <= R_MODIFY && !t->size));
		if (t->kind == R_EVENT)
			BUG_ON(t->size != ev++); /* the events in order, each once */
	}
	BUG_ON(ev != m->nev);
	for (unsigned i = 0; i < m->run.n; i++)
		sim_check_invariants(&m->run.sims[i]);
}

/* --- reports ------------------------------------------------------------- */

/* The finished counters of every simulator into @st (MODE_NR): flushed first. */
static int snapshot(struct mmusim *m, struct stats *st)
{
	struct run *r = &m->run;
	int rc;

	if (!r->n)
		return m->status; /* creation failed */
	if (!m->failed && !m->finished && (rc = flush(m)))
		return rc;
	for (unsigned i = 0; i < r->n && i < MODE_NR; i++) {
		struct sim *s = &r->sims[i];

		if (m->finished) {
			st[i] = s->st;
			continue;
		}
		mmu_forget(&s->mmu); /* count-neutral: its hits into the counters */
		struct stats saved = s->st;

		sim_finish(s);
		st[i] = s->st;
		s->st = saved;
		st[i].wall_seconds = m->wall;
		st[i].max_rss_bytes = max_rss_bytes();
	}
	return 0;
}

int mmusim_report(struct mmusim *m, unsigned i, struct mmusim_report *out)
{
	struct stats st[MODE_NR];
	const struct stats *s = &st[i];
	int rc;

	if (i >= m->run.n)
		return usage_err(m, "mmusim_report: no such mode");
	if ((rc = snapshot(m, st)))
		return rc;
	memset(out, 0, sizeof(*out));
	out->mode = m->run.mode_names[i];
	out->refs = s->ifetch + s->load + s->store + s->modify;
	out->instructions = s->instructions;
	for (int ps = 0; ps < PS_NR; ps++) {
		out->l1i_hits += s->l1[SIDE_I].hits[ps];
		out->l1i_misses += s->l1[SIDE_I].misses[ps];
		out->l1d_hits += s->l1[SIDE_D].hits[ps];
		out->l1d_misses += s->l1[SIDE_D].misses[ps];
	}
	out->stlb_hits = s->stlb.hits;
	out->stlb_misses = s->stlb.misses;
	out->walks = s->walks;
	out->walk_cycles = s->walk_cycles;
	out->pte_reads = s->pte_reads;
	out->pgfault = s->pgfault;
	out->thp_fault_alloc = s->thp_fault_alloc;
	out->thp_fault_fallback = s->thp_fault_fallback;
	out->thp_split_pmd = s->thp_split_pmd;
	out->khugepaged_collapses = s->khugepaged_pages_collapsed;
	out->cycles_total = s->cyc_total;
	out->cycles_translation = s->cyc_translation;
	out->cycles_fault = s->cyc_fault;
	return 0;
}

const char *mmusim_warning(struct mmusim *m)
{
	struct stats st[MODE_NR];
	const struct stats *s = &st[0]; /* every mode read the same input */

	if (snapshot(m, st))
		return NULL;
	if (s->roi.set && !s->roi.started) {
		snprintf(m->warning, sizeof(m->warning),
			 "%s: the input ended before the region of interest: %llu references skipped, "
			 "%llu simulated in the warm-up, none counted (every count is 0)",
			 m->trace, (unsigned long long)s->roi.skipped_refs,
			 (unsigned long long)s->roi.warmup_refs_run);
		return m->warning;
	}
	for (unsigned i = 0; i < m->run.n && i < MODE_NR; i++)
		if (st[i].hugetlb_fallback) {
			snprintf(m->warning, sizeof(m->warning),
				 "%s: %llu faults in MAP_HUGETLB mappings found no free huge page of the "
				 "mapping's size (os.mode %s) and got 4 KiB pages; Linux reserves those "
				 "pages at mmap and would have refused the mapping: raise "
				 "os.hugetlbfs.pages or os.hugetlbfs.pages_1g",
				 m->trace, (unsigned long long)st[i].hugetlb_fallback,
				 os_mode_name[m->run.sims[i].cfg.mode]);
			return m->warning;
		}
	if (!s->ifetch && !s->load && !s->store && !s->modify) {
		snprintf(m->warning, sizeof(m->warning), "%s: no memory reference in the input%s", m->trace,
			 s->roi.set ? "'s region of interest: every count is 0"
				    : ": every count is 0");
		return m->warning;
	}
	return NULL;
}

/* The report's names and provenance (mode and config hash set per mode). */
static struct report_meta meta(const struct mmusim *m)
{
	return (struct report_meta){ .config = m->config_name, .trace = m->trace,
				     .format = m->format, .labels = m->opt.labels,
				     .nlabels = m->opt.nlabels,
				     .input_id = m->have_input_id ? m->input_id : NULL,
				     .version = provenance_version(),
				     .build_id = provenance_build_id() };
}

/* Several processes: each one's breakdown in its entry of the report's processes array. */
static int procs_vmas_json(struct sim *s, json_t *j)
{
	json_t *a = json_object_get(j, "processes");
	struct mm *cur = s->k.mm;

	for (size_t p = 0; a && p < s->nproc && p < json_array_size(a); p++) {
		kernel_use_mm(&s->k, s->procs[p].mm);
		if (json_object_set_new(json_array_get(a, p), "vmas", vmas_to_json(&s->k))) {
			kernel_use_mm(&s->k, cur);
			return -1;
		}
	}
	kernel_use_mm(&s->k, cur);
	return 0;
}


char *mmusim_report_json(struct mmusim *m)
{
	struct stats st[MODE_NR];
	struct report_meta rm;
	struct run *r = &m->run;
	char hash[MODE_NR][17];
	json_t *root = NULL, *one = NULL;
	char *text, *nl;
	size_t len;

	if (input_identity(m) || snapshot(m, st))
		return NULL;
	rm = meta(m);
	if (r->n > 1 || m->compare)
		root = json_object();
	for (unsigned i = 0; i < r->n && i < MODE_NR; i++) {
		rm.mode = r->mode_names[i];
		provenance_config_hash(&r->sims[i].cfg, hash[i]);
		rm.config_hash = hash[i];
		json_t *j = stats_to_json(&st[i], &rm);

		if (r->sims[i].nproc < 2)
			json_object_set_new(j, "vmas", vmas_to_json(&r->sims[i].k)); /* vmas.c */
		if (run_add_processes(&r->sims[i], j) || procs_vmas_json(&r->sims[i], j)) { /* run.c */
			json_decref(j);
			json_decref(root);
			err_set(&m->err, "mmusim", 0, 0, "out of memory");
			fail(m, MMUSIM_EHOST);
			return NULL;
		}
		if (root)
			json_object_set_new(root, rm.mode, j);
		else
			one = j;
	}
	text = json_dumps(root ? root : one,
			  JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root ? root : one);
	len = text ? strlen(text) : 0;
	nl = text ? malloc(len + 2) : NULL; /* jansson's allocator may not be malloc */
	if (nl) {
		memcpy(nl, text, len);
		memcpy(nl + len, "\n", 2);
	}
	free(text);
	if (!nl) {
		err_set(&m->err, "mmusim", 0, 0, "out of memory");
		fail(m, MMUSIM_EHOST);
	}
	return nl;
}

/*
 * A result file @path (outfile.c: a temporary renamed, or in place for a device),
 * its content written by @fn(@arg, stream). 0 or a status; on failure only the
 * message is set (a bad path does not fail the machine).
 */
static int write_result(struct mmusim *m, const char *path, void (*fn)(void *arg, FILE *f),
			void *arg)
{
	struct outfile of;
	FILE *f;
	int rc = 0;

	if (outfile_open(&of, path, 0, &m->err)) {
		rc = m->err.host ? MMUSIM_EHOST : MMUSIM_EINPUT;
	} else if (!(f = outfile_stream(&of))) {
		outfile_abort(&of);
		err_host(&m->err, path, 0, 0, "out of memory");
		rc = MMUSIM_EHOST;
	} else {
		fn(arg, f);
		if (outfile_commit(&of, &m->err))
			rc = MMUSIM_EHOST;
	}
	if (rc)
		err_format(&m->err, m->msg, sizeof(m->msg));
	return rc;
}

static void put_text(void *arg, FILE *f)
{
	fputs(arg, f);
}

int mmusim_write_json(struct mmusim *m, const char *path)
{
	char *text = mmusim_report_json(m);
	int rc;

	if (!text)
		return m->status ? m->status : MMUSIM_EHOST;
	rc = write_result(m, path, put_text, text);
	free(text);
	return rc;
}

int mmusim_report_text(struct mmusim *m, FILE *out)
{
	struct stats st[MODE_NR];
	struct report_meta rm = meta(m);
	int rc;

	if ((rc = snapshot(m, st)))
		return rc;
	if (m->run.n == 1 && !m->compare) {
		rm.mode = m->run.mode_names[0];
		stats_write_text(&st[0], &rm, out);
		if (run_write_procs(&m->run.sims[0], out)) {
			err_set(&m->err, "mmusim", 0, 0, "out of memory");
			return fail(m, MMUSIM_EHOST);
		}
	} else {
		fprintf(out, "mmusim: %s on %s (%s)\n", rm.trace, rm.config, rm.format);
		stats_write_roi(&st[0], out);
		stats_write_compare(st, m->run.mode_names, m->run.n, out);
	}
	if (fflush(out) || ferror(out)) {
		err_set(&m->err, "mmusim", 0, 0, "writing the report failed");
		return fail(m, MMUSIM_EHOST);
	}
	return 0;
}

int mmusim_report_vmas(struct mmusim *m, unsigned top, FILE *out)
{
	struct stats st[MODE_NR];
	int rc;

	if ((rc = snapshot(m, st))) /* (sim_finish() brings the breakdown up to date) */
		return rc;
	for (unsigned i = 0; i < m->run.n && i < MODE_NR; i++) {
		struct sim *s = &m->run.sims[i];
		struct mm *cur = s->k.mm;

		if (m->run.n > 1)
			fprintf(out, "\n%s:", m->run.mode_names[i]);
		for (size_t p = 0; p < s->nproc; p++) { /* several processes: a table each */
			if (s->nproc > 1)
				fprintf(out, "\nprocess %llu:", (unsigned long long)s->procs[p].id);
			kernel_use_mm(&s->k, s->procs[p].mm);
			vmas_write_text(&s->k, top, out);
		}
		kernel_use_mm(&s->k, cur);
	}
	if (fflush(out) || ferror(out)) {
		err_set(&m->err, "mmusim", 0, 0, "writing the mappings table failed");
		return fail(m, MMUSIM_EHOST);
	}
	return 0;
}

struct vmas_csv_arg {
	struct mmusim *m;
	unsigned top;
};

static void put_vmas_csv(void *arg, FILE *f)
{
	const struct vmas_csv_arg *a = arg;

	for (unsigned i = 0; i < a->m->run.n && i < MODE_NR; i++) {
		struct sim *s = &a->m->run.sims[i];
		struct mm *cur = s->k.mm;

		for (size_t p = 0; p < s->nproc; p++) { /* several processes: a process column */
			kernel_use_mm(&s->k, s->procs[p].mm);
			vmas_write_csv(&s->k, a->m->run.mode_names[i], s->nproc > 1 ? (int64_t)s->procs[p].id : -1,
				       i == 0 && p == 0, a->top, s->csv_prov, f);
		}
		kernel_use_mm(&s->k, cur);
	}
}

/* The mappings' CSV is up to date: the breakdown and its provenance columns. */
static int vmas_csv_ready(struct mmusim *m)
{
	struct stats st[MODE_NR];
	int rc;

	if ((rc = input_identity(m)) || (rc = snapshot(m, st)))
		return rc;
	set_csv_prov(m, m->have_input_id ? m->input_id : "");
	return 0;
}

int mmusim_write_vmas_csv(struct mmusim *m, const char *path, unsigned top)
{
	int rc = vmas_csv_ready(m);

	if (rc)
		return rc;
	return write_result(m, path, put_vmas_csv, &(struct vmas_csv_arg){ m, top });
}

int mmusim_report_vmas_csv(struct mmusim *m, unsigned top, FILE *out)
{
	int rc = vmas_csv_ready(m);

	if (rc)
		return rc;
	put_vmas_csv(&(struct vmas_csv_arg){ m, top }, out);
	if (fflush(out) || ferror(out)) {
		err_set(&m->err, "mmusim", 0, 0, "writing the mappings CSV failed");
		return fail(m, MMUSIM_EHOST);
	}
	return 0;
}
