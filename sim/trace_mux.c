/*
 * trace_mux.c - several traces as the processes of one machine: `mmusim run A
 * B ...` and a config's processes: list (config.h struct proc_cfg). A reader
 * over readers, as layout.c is: each process's trace is opened (and laid out,
 * layout_open(): every process has an address space of its own) by itself, and
 * their records come out interleaved as one core would run them, with the
 * process events of mtr version 6 (trace.h) between the slices. The machine
 * that runs them (one kernel, many mm's) is not here: a replay refuses these
 * events until it exists (sim_event()); `trace convert` and the tests read the
 * stream.
 *
 * Rules (the scheduler is a round robin, not EEVDF; each rule says why):
 *  - One core. The machine's clock is the instructions run so far by all
 *    processes (an R_IFETCH is one, an R_INSNS its count). A process runs a
 *    slice of sched.quantum instructions (config.h SCHED_QUANTUM_DEFAULT: the
 *    EEVDF base slice, kernel/sched/fair.c sysctl_sched_base_slice), then the
 *    next process runs. A slice ends before the instruction that would exceed
 *    it, so an instruction's loads and stores stay with it; an R_INSNS record
 *    is split at the quantum.
 *  - The run queue is the processes in start order (start, then list order),
 *    taken round robin. A process enters it at the first slice boundary at
 *    which the machine has run `start` instructions: a new task does not
 *    preempt the running one, which finishes its slice (EEVDF's RUN_TO_PARITY,
 *    kernel/sched/features.h, on by default). When no process has started and
 *    none runs, the clock jumps to the earliest start (an idle machine runs no
 *    instructions; simulated time does not pass for it either).
 *  - Before each slice of another process the stream has EV_SWITCH with that
 *    process's id. Ids are the machine's: 0, 1, 2 ... in the order processes
 *    first appear (the first process to run is 0, so it needs no switch, as a
 *    trace without EV_SWITCH is process 0). A trace that is itself several
 *    processes (a capture that followed fork) keeps its own interleaving inside
 *    its slices; its EV_FORK and EV_SWITCH ids are renumbered into the machine's
 *    (a switch to an id that exited, or never seen, is a new process), so ids
 *    never collide across traces or across runs of one trace.
 *  - A slice ends early when its trace ends: every process of that run still
 *    alive exits then (EV_EXIT, after an EV_SWITCH to it when needed), as a
 *    program's processes are gone when its trace ends. The last process's
 *    run ends so too, so the machine ends with every process exited.
 *  - repeat: N runs of the trace, each a new process (a new id, an empty
 *    address space) that starts when the run before it has exited, as a
 *    benchmark loop starts the program again; it takes the same place in the
 *    run queue and starts at that place's next turn.
 *  - thp_disable: each run's first record is EV_PRCTL (PR_SET_THP_DISABLE_, 1),
 *    as a launcher that calls prctl() before exec would have it.
 *  - A process that is a built-in workload (processes[].workload) is opened
 *    with the config's seed and kernel (workload_open_kernel(), as run -w), not
 *    laid out (a workload places its own mappings); each repeat is the same
 *    stream, and two entries of one spec are identical processes.
 *  - A dependence (R_DEP) on a load of an earlier slice is dropped: a context
 *    switch has drained the core since (the load is long complete), and the
 *    d-th most recent load of the stream is another process's by then.
 *  - The files of mmap events are one table: a file two traces map (the same
 *    device and inode, or the same path when those are not recorded) is one
 *    file, and its page cache is shared.
 * Deterministic: the same traces, quantum and list give the same stream byte
 * for byte (no clock, no thread order: each trace is read by its own reader in
 * the order the slices need it).
 */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "trace_mux.h"
#include "workload.h"

struct mux_id {
	uint64_t local, global; /* the trace's process id, the machine's */
	bool live;
};

/* One entry of the processes list: its runs, one at a time. */
struct mux_slot {
	struct proc_cfg p;
	unsigned idx;           /* its place in the list */
	unsigned runs;          /* runs of its trace begun */
	bool finished;          /* every run has ended */
	struct trace_reader *r; /* the current run's reader; NULL between runs */
	struct trace_batch b;   /* its batch being taken, from pos */
	size_t pos;
	uint64_t insns_done;    /* of the R_INSNS record at pos: instructions already out */
	bool ending;            /* the run's trace ended: its processes exit */
	bool prctl;             /* the run's EV_PRCTL is still to come */
	uint64_t cur;           /* the machine id of the run's current process */
	uint64_t loads;         /* loads out in this slice (R_DEP) */
	struct mux_id *ids;     /* the run's processes */
	size_t nids, capids;
	uint32_t *fmap;         /* the run's file index -> 1 + the mux's */
	size_t nfmap, capfmap;
};

struct mux_reader {
	struct trace_reader head;
	struct mux_slot *s; /* in start order */
	unsigned n;
	struct mux_opener op;
	uint64_t quantum;
	uint64_t clock;   /* instructions the machine has run */
	uint64_t slice;   /* instructions of the running slice */
	unsigned cur;     /* the slot running; n: none yet */
	bool over;        /* the running slice has ended */
	bool done;
	uint64_t running; /* the id whose records the stream is at */
	uint64_t next_id;
	size_t capfiles;
	size_t nout, nev; /* the batch being filled */
	struct os_event ev[TRACE_BATCH];
};

/* ---------------------------------------------------------------- output */

static void put_rec(struct mux_reader *m, struct trace_rec r)
{
	m->head.rec[m->nout++] = r;
}

static void put_ev(struct mux_reader *m, const struct os_event *ev)
{
	m->ev[m->nev] = *ev;
	put_rec(m, (struct trace_rec){ .addr = ev->addr, .size = (uint32_t)m->nev, .kind = R_EVENT });
	m->nev++;
}

static void put_switch(struct mux_reader *m, uint64_t id)
{
	if (m->running == id)
		return;
	put_ev(m, &(struct os_event){ .kind = EV_SWITCH, .addr = id });
	m->running = id;
}

/*
 * A record of @s's current process: after a switch to it if the stream is at
 * another's. Switches are made only here, where a record follows, so a slice
 * that ends right after a trace's own EV_SWITCH leaves no empty switch behind.
 */
static void put_own(struct mux_reader *m, struct mux_slot *s, struct trace_rec r)
{
	put_switch(m, s->cur);
	put_rec(m, r);
}

static void put_own_ev(struct mux_reader *m, struct mux_slot *s, const struct os_event *ev)
{
	put_switch(m, s->cur);
	put_ev(m, ev);
}

/* ---------------------------------------------------------------- ids, files */

/* A new process of @s's run, known in its trace as @local: its machine id; UINT64_MAX: no memory. */
static uint64_t id_new(struct mux_reader *m, struct mux_slot *s, uint64_t local)
{
	if (s->nids == s->capids) {
		size_t cap = s->capids ? 2 * s->capids : 4;
		struct mux_id *ids = realloc(s->ids, cap * sizeof(*ids));

		if (!ids)
			return UINT64_MAX;
		s->ids = ids;
		s->capids = cap;
	}
	s->ids[s->nids++] = (struct mux_id){ local, m->next_id, true };
	return m->next_id++;
}

/* The live process @local of @s's run, or NULL. (Processes are few: a linear search.) */
static struct mux_id *id_find(struct mux_slot *s, uint64_t local)
{
	for (size_t i = s->nids; i-- > 0;)
		if (s->ids[i].live && s->ids[i].local == local)
			return &s->ids[i];
	return NULL;
}

static struct mux_id *id_of_global(struct mux_slot *s, uint64_t global)
{
	for (size_t i = 0; i < s->nids; i++)
		if (s->ids[i].global == global)
			return &s->ids[i];
	return NULL;
}

static bool same_file(const struct trace_file *a, const struct trace_file *b)
{
	if (a->dev || a->ino || b->dev || b->ino)
		return a->dev == b->dev && a->ino == b->ino;
	return a->path && b->path && !strcmp(a->path, b->path);
}

/*
 * The mux's index (1 + i) of file @f (1 + an index into the run's files). Files
 * beyond the run's table (mmusim's own ids) pass unchanged. 0 if memory ran out.
 */
static uint32_t file_map(struct mux_reader *m, struct mux_slot *s, uint32_t f)
{
	struct trace_reader *h = &m->head;

	while (s->nfmap < s->r->nfiles) {
		const struct trace_file *tf = &s->r->files[s->nfmap];
		size_t g;

		for (g = 0; g < h->nfiles && !same_file(&h->files[g], tf); g++)
			;
		if (g == h->nfiles) {
			if (h->nfiles == m->capfiles) {
				size_t cap = m->capfiles ? 2 * m->capfiles : 8;
				struct trace_file *nf = realloc(h->files, cap * sizeof(*nf));

				if (!nf)
					return 0;
				h->files = nf;
				m->capfiles = cap;
			}
			h->files[g] = (struct trace_file){ tf->dev, tf->ino,
							   tf->path ? strdup(tf->path) : NULL };
			if (tf->path && !h->files[g].path)
				return 0;
			h->nfiles++;
		}
		if (s->nfmap == s->capfmap) {
			size_t cap = s->capfmap ? 2 * s->capfmap : 8;
			uint32_t *fm = realloc(s->fmap, cap * sizeof(*fm));

			if (!fm)
				return 0;
			s->fmap = fm;
			s->capfmap = cap;
		}
		s->fmap[s->nfmap++] = (uint32_t)(g + 1);
	}
	return f && f <= s->nfmap ? s->fmap[f - 1] : f;
}

/* ---------------------------------------------------------------- runs */

static int oom(struct mux_reader *m, struct err *e)
{
	err_host(e, m->head.name, 0, 0, "out of memory");
	return -1;
}

/* Open the next run of @s: its first process is a new one. */
static int run_begin(struct mux_reader *m, struct mux_slot *s, struct err *e)
{
	s->r = m->op.open(m->op.arg, s->idx, &s->p, e);
	if (!s->r)
		return -1;
	s->runs++;
	s->b = (struct trace_batch){ 0 };
	s->pos = 0;
	s->insns_done = 0;
	s->nids = 0;
	s->nfmap = 0;
	s->prctl = s->p.thp_disable;
	s->cur = id_new(m, s, 0); /* records before any EV_SWITCH: the trace's process 0 */
	if (s->cur == UINT64_MAX)
		return oom(m, e);
	if (s->r->version > m->head.version)
		m->head.version = s->r->version;
	return 0;
}

static void run_end(struct mux_slot *s)
{
	trace_close(s->r);
	s->r = NULL;
	s->b = (struct trace_batch){ 0 };
	s->pos = 0;
	s->ending = false;
	if (s->runs == s->p.repeat)
		s->finished = true;
}

/*
 * The slot to run next: round robin from the one after the running one over
 * the slots that have started and not finished; when none has, the clock jumps
 * to the earliest start to come. m->n when every run has ended.
 */
static unsigned pick(struct mux_reader *m)
{
	for (;;) {
		unsigned first = m->cur == m->n ? 0 : m->cur + 1;
		uint64_t t = UINT64_MAX;

		for (unsigned k = 0; k < m->n; k++) {
			const struct mux_slot *s = &m->s[(first + k) % m->n];

			if (!s->finished && s->p.start <= m->clock)
				return (first + k) % m->n;
		}
		for (unsigned i = 0; i < m->n; i++)
			if (!m->s[i].finished && m->s[i].p.start < t)
				t = m->s[i].p.start;
		if (t == UINT64_MAX)
			return m->n;
		m->clock = t;
	}
}

/* One event of @s's run, renumbered. */
static int put_trace_event(struct mux_reader *m, struct mux_slot *s, const struct os_event *in,
			   struct err *e)
{
	struct os_event o = *in;
	struct mux_id *id;

	if (o.file && !(o.file = file_map(m, s, o.file)))
		return oom(m, e);
	switch (o.kind) {
	case EV_FORK:
		if ((id = id_find(s, in->addr)))
			id->live = false; /* the trace reused a live id: the old one is gone */
		if ((o.addr = id_new(m, s, in->addr)) == UINT64_MAX)
			return oom(m, e);
		m->head.forks++;
		break;
	case EV_SWITCH:
		id = id_find(s, in->addr);
		s->cur = id ? id->global : id_new(m, s, in->addr);
		if (s->cur == UINT64_MAX)
			return oom(m, e);
		m->head.thread_switches++;
		return 0; /* made when a record of it follows (put_own()) */
	case EV_EXIT:
		if ((id = id_of_global(s, s->cur)))
			id->live = false;
		o.addr = 0;
		break;
	case EV_MARKER:
		m->head.markers++;
		break;
	default:
		break;
	}
	put_own_ev(m, s, &o);
	return 0;
}

/* ---------------------------------------------------------------- the reader */

/*
 * The common stretch, in one pass: fetches, loads, stores and touches of the
 * process the stream is at, up to anything else (an event, an R_INSNS, an
 * R_DEP), the slice's end, the batch's or the output's. step() takes the rest
 * one at a time. (Record by record through step(), the mux cost 49
 * instructions a record on the sqlite3 capture twice, callgrind: 708 M for
 * 14.4 M records; in bulk 231 M, 16 a record.)
 */
static void bulk(struct mux_reader *m, struct mux_slot *s)
{
	const struct trace_rec *in = s->b.recs;
	struct trace_rec *out = m->head.rec;
	size_t pos = s->pos, end = s->b.n, nout = m->nout;
	uint64_t left = m->quantum - m->slice, loads = 0, fetched = 0;

	if (end - pos > TRACE_BATCH - 2 - nout)
		end = pos + (TRACE_BATCH - 2 - nout);
	for (; pos < end; pos++) {
		uint32_t k = in[pos].kind;

		if (k == R_IFETCH) {
			if (fetched == left)
				break;
			fetched++;
		} else if (k == R_LOAD || k == R_MODIFY) {
			loads++;
		} else if (k != R_STORE && k != R_TOUCH) {
			break;
		}
		out[nout++] = in[pos];
	}
	m->slice += fetched;
	m->clock += fetched;
	s->loads += loads;
	s->pos = pos;
	m->nout = nout;
}

/*
 * One step of the stream: at most two records out (a switch and one more).
 * 1: go on; 0: every run has ended; -1: an error (@e).
 */
static int step(struct mux_reader *m, struct err *e)
{
	struct mux_slot *s;
	const struct trace_rec *rec;

	if (m->cur == m->n || m->over) {
		unsigned next = pick(m);

		if (next == m->n)
			return 0;
		m->cur = next;
		m->over = false;
		m->slice = 0;
		s = &m->s[next];
		s->loads = 0;
		if (!s->r && run_begin(m, s, e))
			return -1;
	}
	s = &m->s[m->cur];
	if (s->ending) { /* the run's processes exit, one a step: the current one first */
		struct mux_id *id = id_of_global(s, s->cur);

		for (size_t i = 0; (!id || !id->live) && i < s->nids; i++)
			id = &s->ids[i];
		if (id && id->live) {
			put_switch(m, id->global);
			put_ev(m, &(struct os_event){ .kind = EV_EXIT });
			id->live = false;
			return 1;
		}
		run_end(s);
		m->over = true;
		return 1;
	}
	if (s->prctl) {
		put_own_ev(m, s, &(struct os_event){ .kind = EV_PRCTL, .advice = PR_SET_THP_DISABLE_,
						     .addr = 1 });
		s->prctl = false;
		return 1;
	}
	if (s->pos == s->b.n) {
		int rc = trace_next(s->r, &s->b, e);

		if (rc < 0)
			return -1;
		s->pos = 0;
		if (!rc) {
			s->b.n = 0;
			s->ending = true;
		}
		return 1;
	}
	if (m->running == s->cur && !m->over)
		bulk(m, s);
	if (s->pos == s->b.n || m->nout + 2 > TRACE_BATCH)
		return 1;
	rec = &s->b.recs[s->pos];
	switch (rec->kind) {
	case R_IFETCH:
		if (m->slice >= m->quantum) {
			m->over = true;
			return 1;
		}
		put_own(m, s, *rec);
		m->slice++;
		m->clock++;
		break;
	case R_INSNS: {
		uint64_t left = rec->size - s->insns_done, take;

		if (m->slice >= m->quantum) {
			m->over = true;
			return 1;
		}
		take = m->quantum - m->slice < left ? m->quantum - m->slice : left;
		if (take)
			put_own(m, s, (struct trace_rec){ .addr = rec->addr, .size = (uint32_t)take,
							  .kind = R_INSNS });
		m->slice += take;
		m->clock += take;
		s->insns_done += take;
		if (s->insns_done < rec->size)
			return 1; /* the rest in the next slice */
		s->insns_done = 0;
		break;
	}
	case R_DEP:
		if (rec->size <= s->loads)
			put_own(m, s, *rec);
		break;
	case R_LOAD:
	case R_MODIFY:
		s->loads++;
		put_own(m, s, *rec);
		break;
	case R_EVENT:
		if (put_trace_event(m, s, &s->b.ev[rec->size], e))
			return -1;
		break;
	default:
		put_own(m, s, *rec);
	}
	s->pos++;
	return 1;
}

static int mux_next(struct trace_reader *r, struct trace_batch *b, struct err *e)
{
	struct mux_reader *m = (struct mux_reader *)r;
	int rc = 1;

	m->nout = m->nev = 0;
	while (!m->done && m->nout + 2 <= TRACE_BATCH && (rc = step(m, e)) > 0)
		;
	if (rc < 0)
		return -1;
	if (!rc)
		m->done = true;
	b->recs = r->rec;
	b->n = m->nout;
	b->ev = m->ev;
	b->nev = m->nev;
	return (int)m->nout;
}

static void mux_close(struct trace_reader *r)
{
	struct mux_reader *m = (struct mux_reader *)r;

	for (unsigned i = 0; i < m->n; i++) {
		trace_close(m->s[i].r);
		free(m->s[i].ids);
		free(m->s[i].fmap);
	}
	free(m->s);
	trace_reader_free(r); /* and the files table, whose paths are the mux's */
}

static const struct trace_ops mux_ops = { mux_next, mux_close };

static int slot_cmp(const void *a, const void *b)
{
	const struct mux_slot *x = a, *y = b;

	if (x->p.start != y->p.start)
		return x->p.start < y->p.start ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

struct trace_reader *mux_open(const struct proc_cfg *procs, unsigned n, uint64_t quantum,
			      const struct mux_opener *op, struct err *e)
{
	struct mux_reader *m;
	char name[256];
	size_t len = 0;

	name[0] = '\0';
	for (unsigned i = 0; i < n && len < sizeof(name); i++)
		len += (size_t)snprintf(name + len, sizeof(name) - len, "%s%s", i ? " + " : "",
					procs[i].trace);
	if (len >= sizeof(name))
		memcpy(name + sizeof(name) - 4, "...", 4);
	m = trace_reader_alloc(sizeof(*m), &mux_ops, TF_MTR, name, e);
	if (!m)
		return NULL;
	m->s = calloc(n ? n : 1, sizeof(*m->s));
	if (!m->s) {
		err_host(e, name, 0, 0, "out of memory");
		trace_reader_free(&m->head);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++) {
		m->s[i].p = procs[i];
		m->s[i].idx = i;
	}
	qsort(m->s, n, sizeof(*m->s), slot_cmp);
	m->n = n;
	m->cur = n;
	m->op = *op;
	m->quantum = quantum ? quantum : SCHED_QUANTUM_DEFAULT;
	return &m->head;
}

/* ---------------------------------------------------------------- from a config */

struct cfg_opener {
	struct sim_config c;
	enum trace_format fmt;
};

static struct trace_reader *open_laid_out(void *arg, unsigned i, const struct proc_cfg *p,
					  struct err *e)
{
	struct cfg_opener *o = arg;
	struct trace_reader *r;

	(void)i;
	/* a workload lays itself out (its kernel's mmap placement), as run -w does */
	if (p->workload)
		return workload_open_kernel(p->trace, o->c.seed, o->c.kernel, e);
	r = trace_open(p->trace, o->fmt, e);
	return r ? layout_open(r, &o->c, e) : NULL;
}

static void cfg_mux_close(struct trace_reader *r)
{
	struct cfg_opener *o = ((struct mux_reader *)r)->op.arg;

	mux_close(r);
	free(o);
}

static const struct trace_ops cfg_mux_ops = { mux_next, cfg_mux_close };

struct trace_reader *mux_open_config(const struct sim_config *c, enum trace_format fmt,
				     struct err *e)
{
	struct cfg_opener *o = malloc(sizeof(*o));
	struct trace_reader *r;
	bool deps = true;
	enum trace_format f0 = TF_NR;

	if (!o) {
		err_host(e, "mmusim", 0, 0, "out of memory");
		return NULL;
	}
	o->c = *c;
	o->fmt = fmt;
	/* every trace opened once now: a missing or undetectable one is an error before any work */
	for (unsigned i = 0; i < c->nprocs; i++) {
		struct trace_reader *t;

		if (c->procs[i].workload) { /* checked, not built: a generator can be large */
			if (workload_check(c->procs[i].trace, e)) {
				free(o);
				return NULL;
			}
			continue;
		}
		t = trace_open(c->procs[i].trace, fmt, e);

		if (!t) {
			free(o);
			return NULL;
		}
		deps &= t->deps;
		if (f0 == TF_NR)
			f0 = t->format;
		trace_close(t);
	}
	r = mux_open(c->procs, c->nprocs, c->sched_quantum,
		     &(struct mux_opener){ open_laid_out, o }, e);
	if (!r) {
		free(o);
		return NULL;
	}
	r->ops = &cfg_mux_ops;
	r->deps = deps;
	r->format = f0 == TF_NR ? TF_MTR : f0;
	return r;
}
