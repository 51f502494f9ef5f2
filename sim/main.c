/*
 * main.c - the command line (DESIGN.md "Command line"); the only place that
 * prints errors or calls exit().
 *
 * Exit status: 0 success; 2 bad usage, configuration or input, with
 * "file:line[:col]: message" on stderr; 1 any other failure. Result files go
 * through outfile.h: a regular file is written to a temporary name and renamed,
 * so a failed run leaves none; a device, FIFO or standard output is written in place.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "config.h"
#include "outfile.h"
#include "plot.h"
#include "provenance.h"
#include "sim.h"
#include "stats.h"
#include "sweep.h"
#include "trace.h"
#include "util.h"
#include "workload.h"

#define EXIT_BAD 2
#define MAX_MODES MODE_NR
#define MAX_SETS 256
#define SWEEP_GROUP_MAX 32 /* points one sweep worker simulates from one decode */

static const char usage_text[] =
	"usage: mmusim run [-c CONFIG.yaml] [TRACE | -w WORKLOAD[:key=value,...]] [--format FMT]\n"
	"                  [--set path=value ...] [--modes base,hugetlbfs,thp] [--json FILE|-] [--quiet]\n"
	"                  [--timeline FILE.csv [--timeline-ms MS]]\n"
	"       mmusim config show [-c CONFIG.yaml] [--set path=value ...]\n"
	"       mmusim trace info TRACE [--format FMT]\n"
	"       mmusim trace convert IN OUT.mtr[.zst|.gz|.xz] [--format FMT]\n"
	"       mmusim trace gen -w WORKLOAD -o OUT.mtr[.zst]\n"
	"       mmusim capture [-o OUT] -- PROGRAM [ARGS]   (valgrind lackey + syscalls)\n"
	"       mmusim sweep SWEEP.yaml [TRACE | -w WORKLOAD] [-j N] [--shard I/N] [--list] [--outdir DIR]\n"
	"                    [-o results.csv] [--plot OUT.png|OUT.svg] [--quiet]\n"
	"       mmusim merge OUT.csv RESULT.json...\n"
	"       mmusim plot RESULTS.csv -x KEY -y KEY|A/B|mpki:KEY [--by KEY] [--logx]\n"
	"                   [--kind lines|bars|timeline] [--base V] [--title T] [--table] -o OUT.png|OUT.svg\n"
	"                   [--script FILE.gp]\n"
	"       mmusim demo [--outdir DIR]\n"
	"       mmusim help [CMD]\n"
	"Workloads: stream:size=S[,iterations=N]  gups:size=S[,updates=N]  chase:size=S[,steps=N]\n"
	"           stride:size=S,stride=B[,passes=N]  zipf:size=S,alpha=A,refs=N  (+ seed=, madvise=1)\n";

/* mmusim help CMD: the same as the man page's COMMANDS section, in short. */
static const struct {
	const char *cmd, *text;
} help_texts[] = {
	{ "run",
	  "mmusim run [-c CONFIG.yaml] [TRACE | -w WORKLOAD[:key=value,...]] [--format FMT]\n"
	  "           [--set path=value ...] [--modes base,hugetlbfs,thp] [--json FILE|-] [--quiet]\n"
	  "           [--timeline FILE.csv [--timeline-ms MS]] [--label key=value ...]\n"
	  "Replay TRACE (lackey, pin, champsim, din or mtr; .gz/.xz/.zst; - for stdin) or a built-in\n"
	  "workload through the configured machine and print the report (text, or JSON with --json).\n"
	  "  -c FILE          machine and kernel config (YAML); default: the built-in Nehalem-class core\n"
	  "  --set path=value override one config key (see 'mmusim config show' for every path)\n"
	  "  --modes a,b,c    run the input once per mode (decoded once) and print the % change table\n"
	  "  --json FILE|-    the report as JSON (written to a temporary name, then renamed)\n"
	  "  --timeline FILE  a CSV row every --timeline-ms (default 1) of simulated time\n"
	  "  --label k=v      record k=v in run.labels (sweeps use it); --sweep-set k=v = --set + --label\n"
	  "  --quiet          no progress, no text report\n" },
	{ "sweep",
	  "mmusim sweep SWEEP.yaml [TRACE | -w WORKLOAD] [-j N] [--shard I/N] [--list] [--outdir DIR]\n"
	  "             [-o OUT.csv] [--quiet]\n"
	  "Run every point of a sweep file (config:, trace: or workload: (a list is swept), format:,\n"
	  "repeat:, set:, sweep: {path: [values]}) and write one CSV row per point.\n"
	  "  -j N          worker processes (default: the cores); points of one input share a decode\n"
	  "  --shard I/N   only every N-th point from I (0-based), e.g. one Slurm array task\n"
	  "  --list        print one self-contained 'mmusim run' command per point instead of running\n"
	  "  --outdir DIR  per-point reports (default OUT.csv.d); finished points are skipped on re-runs\n"
	  "  -o OUT.csv    the CSV (default: the sweep file's name with .csv)\n" },
	{ "merge",
	  "mmusim merge OUT.csv RESULT.json...\n"
	  "Join the per-point reports of a sweep (from --list runs or shards) into the CSV 'sweep -o'\n"
	  "writes: one row per point in point order; repetitions give mean and .ci95 columns.\n" },
	{ "plot",
	  "mmusim plot RESULTS.csv -x KEY -y KEY [--by KEY] [--logx] [--kind lines|bars|timeline]\n"
	  "            [--base VALUE] [--title T] -o out.png|out.svg [--script FILE.gp]\n"
	  "Draw a sweep's CSV (or a --timeline CSV) with gnuplot. --script FILE also writes the\n"
	  "gnuplot script, data inline (without -o: only the script, drawing FILE less .gp\n"
	  "plus .png).\n" },
	{ "config",
	  "mmusim config show [-c CONFIG.yaml] [--set path=value ...]\n"
	  "Print the effective configuration as YAML (every key with its value).\n" },
	{ "trace",
	  "mmusim trace info TRACE [--format FMT]       records by kind, pages, address range, events\n"
	  "mmusim trace convert IN OUT.mtr[.zst|.gz|.xz] [--format FMT]   to the native format\n"
	  "mmusim trace gen -w WORKLOAD -o OUT.mtr[.zst]  write a built-in workload as a trace\n" },
	{ "capture",
	  "mmusim capture [-o OUT] -- PROGRAM [ARGS]\n"
	  "Run PROGRAM under valgrind --tool=lackey --trace-mem=yes --trace-syscalls=yes and stream the\n"
	  "trace, compressed by OUT's suffix (.zst default), with its mmap/munmap/... events.\n" },
	{ "demo",
	  "mmusim demo [--outdir DIR]\n"
	  "STREAM and GUPS under base pages, hugetlbfs and THP: the seed mail's table and DIR/demo.png.\n" },
	{ "help", "mmusim help [CMD]\nThe usage of every command, or of CMD.\n" },
};

static volatile sig_atomic_t interrupted;

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

/* The process's peak resident set so far (getrusage: KiB on Linux). */
static uint64_t max_rss_bytes(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_maxrss * 1024;
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
	const char *labels[MAX_SETS]; /* --label k=v (and --sweep-set): recorded in run.labels */
	unsigned nlabels;
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
		} else if (!strcmp(a, "--label") || !strcmp(a, "--sweep-set")) {
			if (i + 1 >= argc || !strchr(argv[i + 1], '=') || argv[i + 1][0] == '=')
				die_usage("%s needs key=value", a);
			if (o->nlabels == MAX_SETS || o->nsets == MAX_SETS)
				die_usage("too many %s options", a);
			o->labels[o->nlabels++] = argv[i + 1];
			if (!strcmp(a, "--sweep-set"))
				o->sets[o->nsets++] = argv[i + 1];
			i++;
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

/* What `run` replays when given no input. */
#define DEFAULT_WORKLOAD "stream:size=16M,iterations=2"

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
		r = workload_open(o->workload ? o->workload : DEFAULT_WORKLOAD, c->seed, &e);
	else
		r = trace_open(o->trace, f, &e);
	if (!r)
		die_err(&e);
	return r;
}

/* The input's identity (provenance.h) into @buf (PROVENANCE_ID_MAX). */
static void input_identity(const struct opts *o, char *buf)
{
	struct err e = { 0 };

	if (provenance_input_id(o->trace, o->workload || !o->trace ? (o->workload ? o->workload : DEFAULT_WORKLOAD) : NULL,
				o->format, buf, PROVENANCE_ID_MAX, &e))
		die_err(&e);
}

/* A result file (outfile.h): a bad path is exit 2, a failed write exit 1. */
static FILE *out_open(struct outfile *of, const char *path)
{
	struct err e = { 0 };
	FILE *f;

	if (outfile_open(of, path, 0, &e))
		die_err(&e);
	f = outfile_stream(of);
	if (!f) {
		fprintf(stderr, "%s: out of memory\n", path);
		exit(1);
	}
	return f;
}

static void out_commit(struct outfile *of)
{
	struct err e = { 0 };
	char msg[1024];

	if (outfile_commit(of, &e)) {
		err_format(&e, msg, sizeof(msg));
		fprintf(stderr, "%s\n", msg);
		exit(1);
	}
}

/* --- run ---------------------------------------------------------------- */

struct run {
	struct sim *sims;         /* n of them, driven from one reader */
	const char **mode_names;
	unsigned n;
	unsigned threads;         /* threads sharing the decode and the simulators (0: 1) */
	double wall;
	uint64_t records;
};

static void progress(const struct run *r, double t0, bool final)
{
	double dt = now_seconds() - t0;

	fprintf(stderr, "\r  %llu records, %.1f M records/s%s", (unsigned long long)r->records,
		dt > 0 ? (double)r->records / dt / 1e6 : 0.0, final ? "\n" : "");
}

/* A batch that outlives the reader's next call (the threaded run decodes ahead). */
struct owned_batch {
	struct trace_batch b;
	struct trace_rec *recs;
	struct os_event *ev;
	size_t cap_ev;
	struct batch_summary sum;
	bool summed;
};

static void own_batch(struct owned_batch *o, struct trace_reader *tr, const struct trace_batch *b)
{
	if (b->nev > o->cap_ev) {
		free(o->ev);
		o->ev = malloc(b->nev * sizeof(*o->ev));
		o->cap_ev = b->nev;
	}
	if (!o->recs)
		o->recs = malloc(TRACE_BATCH * sizeof(*o->recs));
	if (!o->recs || (b->nev && !o->ev) || b->n > TRACE_BATCH) {
		fprintf(stderr, "mmusim: out of memory\n");
		exit(1);
	}
	if (b->recs == tr->rec)
		trace_take_recs(tr, &o->recs); /* no copy: the reader's buffer changes hands */
	else
		memcpy(o->recs, b->recs, b->n * sizeof(*o->recs));
	if (b->nev)
		memcpy(o->ev, b->ev, b->nev * sizeof(*o->ev));
	o->b = (struct trace_batch){ o->recs, b->n, o->ev, b->nev };
	o->summed = false;
}

/* Batches handed to the simulator threads at once (fewer barrier rounds). */
#define POOL_BATCHES 32
/* Batches per summarizing work item (the summaries of a set are independent). */
#define SUM_CHUNK 8

struct batch_set {
	struct owned_batch ob[POOL_BATCHES];
	unsigned n;
};

/*
 * A barrier that spins briefly before it sleeps: a round takes about a
 * millisecond, and waking a thread from a futex sleep costs tens of
 * microseconds and a context switch each time (perf: 5% of a sweep's cycles
 * with pthread barriers). Waiters sleep on @gen; the last arrival bumps it and
 * wakes them, with a syscall only if one went to sleep.
 */
/*
 * A host knob, not a model number: 4000 pauses are some tens of microseconds (a
 * pause takes 10 to 140 cycles, by CPU), a few percent of a round; a thread that
 * waits longer is not coming soon, and sleeps.
 */
#define BARRIER_SPINS 4000

struct spin_barrier {
	atomic_uint arrived, gen, sleepers;
	unsigned n;
};

static void barrier_wait(struct spin_barrier *b)
{
	unsigned g = atomic_load(&b->gen);

	if (atomic_fetch_add(&b->arrived, 1) + 1 == b->n) {
		atomic_store(&b->arrived, 0);
		atomic_fetch_add(&b->gen, 1);
		if (atomic_load(&b->sleepers))
			syscall(SYS_futex, &b->gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
		return;
	}
	for (int i = 0; i < BARRIER_SPINS; i++) {
		if (atomic_load_explicit(&b->gen, memory_order_acquire) != g)
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#elif defined(__aarch64__)
		__asm__ volatile("yield");
#endif
	}
	atomic_fetch_add(&b->sleepers, 1);
	while (atomic_load(&b->gen) == g)
		syscall(SYS_futex, &b->gen, FUTEX_WAIT_PRIVATE, g, NULL, NULL, 0);
	atomic_fetch_sub(&b->sleepers, 1);
}

/*
 * A run of several simulators is a three-stage pipeline over sets of
 * POOL_BATCHES batches: in each round one set is decoded, the one decoded before
 * is summarized (SUM_CHUNK batches per item) and the one before that is
 * simulated (one item per simulator, all of the set's batches). r->threads
 * participants -- the main thread and r->threads - 1 helpers -- share a round's
 * items (pool_work()); a barrier closes the round. Every simulator still sees
 * every batch in order: the counts are those of the plain loop, whatever the
 * timing and the number of threads.
 */
enum { ST_FILL, ST_SUM, ST_SIM, ST_NR };

struct pool_item {
	unsigned kind; /* ST_* */
	unsigned arg;  /* ST_SUM: first batch; ST_SIM: simulator */
};

struct sim_pool {
	struct run *r;
	struct trace_reader *tr;
	struct spin_barrier start, done;
	struct batch_set *stage[ST_NR]; /* this round's set per stage; NULL: none */
	struct pool_item *items;
	unsigned nitems;
	atomic_uint next;
	int rc;             /* the reader's last trace_next() */
	struct err rerr;    /* its error */
	bool *failed;       /* per simulator: stopped on bad input (its err says why) */
	double *cost;       /* per simulator: seconds in the last round (ordering only) */
	atomic_bool *claimed; /* per simulator: taken this round */
	atomic_uint *owner; /* per simulator: the participant it belongs to (a hint) */
	unsigned *order;    /* simulators by the last round's cost, descending */
	unsigned nthreads;
	bool stop;
};

static void pool_item_run(struct sim_pool *p, const struct pool_item *it)
{
	if (it->kind == ST_FILL) {
		struct batch_set *s = p->stage[ST_FILL];
		struct trace_batch b;

		for (s->n = 0; s->n < POOL_BATCHES && (p->rc = trace_next(p->tr, &b, &p->rerr)) > 0;)
			own_batch(&s->ob[s->n++], p->tr, &b);
	} else if (it->kind == ST_SUM) {
		struct batch_set *s = p->stage[ST_SUM];

		for (unsigned k = it->arg; k < s->n && k < it->arg + SUM_CHUNK; k++)
			s->ob[k].summed = !sim_batch_summarize(&s->ob[k].b, &s->ob[k].sum);
	} else {
		const struct batch_set *s = p->stage[ST_SIM];
		unsigned i = it->arg;
		double t0 = now_seconds();

		for (unsigned k = 0; k < s->n && !p->failed[i]; k++) {
			const struct owned_batch *o = &s->ob[k];
			struct err e;

			if (sim_run_batch_summarized(&p->r->sims[i], &o->b, o->summed ? &o->sum : NULL, &e))
				p->failed[i] = true;
		}
		p->cost[i] = now_seconds() - t0;
	}
}

/*
 * Participant @me's share of a round. Each simulator belongs to a participant
 * (first i mod threads, then the last one that ran it), so its state stays in
 * one core's caches: on two threads, handing simulators to whichever thread
 * was free made every item 1.4x slower. The main thread takes the shared items
 * (the decode, the summaries: the records it decoded stay in its caches) from
 * the counter first, then its own simulators, then whatever simulators the
 * others have not started; helpers start with the simulators (their own, then
 * the others'), and help with shared items last.
 */
static void pool_sims(struct sim_pool *p, unsigned me)
{
	if (!p->stage[ST_SIM])
		return;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned j = 0; j < p->r->n; j++) {
			/* own ones longest first; others' shortest first */
			unsigned i = pass ? p->order[p->r->n - 1 - j] : p->order[j];

			if ((atomic_load_explicit(&p->owner[i], memory_order_relaxed) == me) != !pass)
				continue;
			if (!atomic_exchange_explicit(&p->claimed[i], true, memory_order_relaxed)) {
				pool_item_run(p, &(struct pool_item){ ST_SIM, i });
				/* it stays where it last ran */
				atomic_store_explicit(&p->owner[i], me, memory_order_relaxed);
			}
		}
}

static void pool_work(struct sim_pool *p, unsigned me)
{
	unsigned k;

	if (me)
		pool_sims(p, me); /* helpers: simulators while the main thread decodes */
	while ((k = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < p->nitems)
		pool_item_run(p, &p->items[k]);
	pool_sims(p, me);
}

struct pool_arg {
	struct sim_pool *p;
	unsigned me;
};

static void *pool_thread(void *arg)
{
	struct pool_arg *a = arg;

	for (;;) {
		barrier_wait(&a->p->start);
		if (a->p->stop)
			return NULL;
		pool_work(a->p, a->me);
		barrier_wait(&a->p->done);
	}
}

/* This round's shared items, longest first, and the simulators' order. */
static void pool_plan(struct sim_pool *p)
{
	unsigned n = 0;

	if (p->stage[ST_FILL])
		p->items[n++] = (struct pool_item){ ST_FILL, 0 };
	if (p->stage[ST_SUM])
		for (unsigned k = 0; k < p->stage[ST_SUM]->n; k += SUM_CHUNK)
			p->items[n++] = (struct pool_item){ ST_SUM, k };
	p->nitems = n;
	atomic_store_explicit(&p->next, 0, memory_order_relaxed);
	for (unsigned i = 0; i < p->r->n; i++) {
		unsigned j = i;

		/* insertion by the last round's cost, descending; ties by index */
		while (j > 0 && p->cost[p->order[j - 1]] < p->cost[i]) {
			p->order[j] = p->order[j - 1];
			j--;
		}
		p->order[j] = i;
		atomic_store_explicit(&p->claimed[i], false, memory_order_relaxed);
	}
}

/*
 * A reader error or a failed simulator ends the run after its round (the
 * lowest-numbered failed simulator's message, whatever the timing).
 */
static int run_threaded(struct run *r, struct trace_reader *tr, struct err *e)
{
	struct batch_set *set = calloc(ST_NR, sizeof(*set));
	struct sim_pool p = { .r = r, .tr = tr, .rc = 1, .nthreads = r->threads };
	unsigned nt = r->threads - 1, failed = r->n; /* the first failed simulator */
	pthread_t *tid = calloc(nt + 1, sizeof(*tid)); /* + 1: calloc(0) may be NULL */
	struct pool_arg *pa = calloc(nt + 1, sizeof(*pa));

	p.failed = calloc(r->n, sizeof(*p.failed));
	p.cost = calloc(r->n, sizeof(*p.cost));
	p.claimed = calloc(r->n, sizeof(*p.claimed));
	p.order = calloc(r->n, sizeof(*p.order));
	p.owner = calloc(r->n, sizeof(*p.owner));
	for (unsigned i = 0; p.owner && i < r->n; i++)
		atomic_init(&p.owner[i], i % r->threads);
	p.items = calloc(1 + POOL_BATCHES / SUM_CHUNK + 1, sizeof(*p.items));
	p.start.n = p.done.n = nt + 1;
	if (!set || !tid || !pa || !p.failed || !p.cost || !p.claimed || !p.order || !p.owner ||
	    !p.items) {
		fprintf(stderr, "mmusim: cannot start threads\n");
		exit(1);
	}
	for (unsigned i = 0; i < nt; i++) {
		pa[i] = (struct pool_arg){ &p, i + 1 };
		if (pthread_create(&tid[i], NULL, pool_thread, &pa[i])) {
			fprintf(stderr, "mmusim: cannot start threads\n");
			exit(1);
		}
	}
	/*
	 * The sets' record buffers, and the one the reader fills, come from one
	 * region with huge pages if the kernel gives them (madvise mode): fresh 4K
	 * pages cost a fault each -- 6 % of an 8-point sweep of the validation trace.
	 * The reader's own buffer waits in @spare and goes back at the end.
	 */
	size_t nbuf = ST_NR * POOL_BATCHES + 1, alen = nbuf * TRACE_BATCH * sizeof(struct trace_rec);
	struct trace_rec *arena, *spare;

	alen = (alen + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	arena = mmap(NULL, alen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED) {
		fprintf(stderr, "mmusim: out of memory\n");
		exit(1);
	}
	madvise(arena, alen, MADV_HUGEPAGE); /* a hint: 4K pages work too */
	for (int j = 0; j < ST_NR; j++)
		for (int i = 0; i < POOL_BATCHES; i++)
			set[j].ob[i].recs = arena + (size_t)(j * POOL_BATCHES + i) * TRACE_BATCH;
	spare = arena + (nbuf - 1) * TRACE_BATCH;
	trace_take_recs(tr, &spare);
	/* round 0 fills set 0; each set then moves one stage per round */
	p.stage[ST_FILL] = &set[0];
	for (unsigned round = 0; p.stage[ST_FILL] || p.stage[ST_SUM] || p.stage[ST_SIM]; round++) {
		pool_plan(&p);
		barrier_wait(&p.start);
		pool_work(&p, 0);
		barrier_wait(&p.done);
		if (p.stage[ST_SIM]) {
			for (unsigned k = 0; k < p.stage[ST_SIM]->n; k++)
				r->records += p.stage[ST_SIM]->ob[k].b.n;
			for (unsigned i = 0; i < r->n && failed == r->n; i++)
				if (p.failed[i])
					failed = i;
		}
		if (failed < r->n || interrupted)
			break;
		p.stage[ST_SIM] = p.stage[ST_SUM];
		p.stage[ST_SUM] = p.stage[ST_FILL] && p.stage[ST_FILL]->n ? p.stage[ST_FILL] : NULL;
		/* the next fill takes the set that just left the simulators */
		p.stage[ST_FILL] = p.rc > 0 ? &set[(round + 1) % ST_NR] : NULL;
	}
	p.stop = true;
	barrier_wait(&p.start);
	for (unsigned i = 0; i < nt; i++)
		pthread_join(tid[i], NULL);
	if (failed < r->n)
		die_err(&r->sims[failed].err);
	if (interrupted) {
		fprintf(stderr, "\nmmusim: interrupted; no result written\n");
		exit(130);
	}
	free(tid);
	free(pa);
	free(p.failed);
	free(p.cost);
	free(p.claimed);
	free(p.order);
	free(p.owner);
	free(p.items);
	trace_take_recs(tr, &spare); /* the reader's own buffer back; the arena's goes */
	for (int j = 0; j < ST_NR; j++)
		for (int i = 0; i < POOL_BATCHES; i++) {
			free(set[j].ob[i].ev);
			sim_batch_summary_free(&set[j].ob[i].sum);
		}
	munmap(arena, alen);
	free(set);
	if (p.rc < 0)
		*e = p.rerr;
	return p.rc < 0 ? -1 : 0;
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
	struct batch_summary sum = { 0 };

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/*
	 * Several simulators: the pool, even on one thread -- each simulator runs
	 * 32 batches at a time, its state staying in the cache (batch by batch, 8
	 * simulators on one thread took 164 ms instead of 137). Not with a shared
	 * --timeline: its rows stay interleaved batch by batch, as they were.
	 */
	if (r->n > 1 && !check && !r->sims[0].timeline) {
		if (!r->threads)
			r->threads = 1;
		n = run_threaded(r, tr, &e);
		goto end;
	}
	while ((n = trace_next(tr, &b, &e)) > 0) {
		/* several simulators: find once what each answers from its memo */
		bool summed = r->n > 1 && !sim_batch_summarize(&b, &sum);

		for (unsigned i = 0; i < r->n; i++) {
			if (sim_run_batch_summarized(&r->sims[i], &b, summed ? &sum : NULL, &e))
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
	sim_batch_summary_free(&sum);
end:
	if (n < 0)
		die_err(&e);
	if (tty && r->records > 64 * TRACE_BATCH)
		progress(r, t0, true);
	r->wall = now_seconds() - t0;
	for (unsigned i = 0; i < r->n; i++) {
		sim_finish(&r->sims[i]);
		r->sims[i].st.wall_seconds = r->wall;
		r->sims[i].st.max_rss_bytes = max_rss_bytes();
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
	r->sims = calloc(n, sizeof(*r->sims));
	r->mode_names = calloc(n, sizeof(*r->mode_names));
	if (!r->sims || !r->mode_names) {
		fprintf(stderr, "mmusim: out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		struct sim_config ci = *c;

		ci.mode = modes[i];
		r->mode_names[i] = os_mode_name[modes[i]];
		if (sim_init(&r->sims[i], &ci, &e))
			die_err(&e);
		r->sims[i].trace_name = trace_name;
	}
}

static void run_free(struct run *r)
{
	for (unsigned i = 0; i < r->n; i++)
		sim_destroy(&r->sims[i]);
	free(r->sims);
	free(r->mode_names);
	free(r);
}

static void write_reports(struct run *r, const struct report_meta *base, const char *json_path,
			  bool quiet, bool compare)
{
	struct report_meta m = *base;
	char hash[MAX_MODES][17];

	m.version = provenance_version();
	m.build_id = provenance_build_id();
	if (json_path) {
		struct outfile of;
		json_t *root = r->n > 1 || compare ? json_object() : NULL;

		FILE *f = out_open(&of, json_path);

		for (unsigned i = 0; i < r->n && i < MAX_MODES; i++) {
			m.mode = r->mode_names[i];
			provenance_config_hash(&r->sims[i].cfg, hash[i]);
			m.config_hash = hash[i];
			if (root)
				json_object_set_new(root, m.mode, stats_to_json(&r->sims[i].st, &m));
			else
				stats_write_json(&r->sims[i].st, &m, f);
		}
		if (root) {
			json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
			fputc('\n', f);
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
	char id[PROVENANCE_ID_MAX];

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
		FILE *tf = out_open(&tl, o.timeline);

		sim_timeline_header(tf);
		for (unsigned i = 0; i < n; i++)
			sim_timeline_start(&r->sims[i], tf,
					   (cycles_t)(ms * c.freq_mhz * 1000.0));
	}
	run_all(r, tr, o.quiet, o.check);
	if (o.timeline)
		out_commit(&tl);
	m = (struct report_meta){ .config = o.config ? o.config : "built-in", .trace = tr->name,
				  .format = trace_format_name[tr->format], .labels = o.labels,
				  .nlabels = o.nlabels };
	input_identity(&o, id);
	m.input_id = id;
	write_reports(r, &m, o.json, o.quiet, o.modes != NULL);
	run_free(r);
	trace_close(tr);
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
			struct sim_config dc;

			if (!wl || !out || npos)
				die_usage("trace gen needs -w WORKLOAD -o OUT%s", "");
			/* the default config's seed, as `run -w` without -c (seed=N in the spec overrides) */
			config_defaults(&dc);
			tr = workload_open(wl, dc.seed, &e);
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
		free(r->sims);
		free(r->mode_names);
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
	int r = capture_run(out, argv + i + 1, &e);

	if (r == -2)
		die_err(&e); /* the output path: bad input, exit 2 */
	if (r) {
		char buf[1024];

		/* the program or valgrind failed: not bad input to mmusim, exit 1 */
		err_format(&e, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
		return 1;
	}
	return 0;
}

/* --- plot --------------------------------------------------------------- */

/* plot_csv()'s result as an exit status: bad input 2, gnuplot failing 1. */
static int plot_status(int r, const struct err *e)
{
	char buf[1024];

	if (!r)
		return 0;
	if (r == -1)
		die_err(e);
	err_format(e, buf, sizeof(buf));
	fprintf(stderr, "%s\n", buf);
	return 1;
}

static int cmd_plot(int argc, char **argv)
{
	struct plot_opts o = { 0 };
	const char *csv = NULL;
	struct err e = { 0 };
	bool table = false;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char **dst = NULL;

		if (!strcmp(a, "--table")) {
			table = true;
			continue;
		} else if (!strcmp(a, "-x"))
			dst = &o.x;
		else if (!strcmp(a, "-y"))
			dst = &o.y;
		else if (!strcmp(a, "--by"))
			dst = &o.by;
		else if (!strcmp(a, "--kind"))
			dst = &o.kind;
		else if (!strcmp(a, "--base"))
			dst = &o.base;
		else if (!strcmp(a, "--title"))
			dst = &o.title;
		else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
			dst = &o.out;
		else if (!strcmp(a, "--script"))
			dst = &o.script;
		else if (!strcmp(a, "--logx")) {
			o.logx = true;
			continue;
		} else if (a[0] == '-' && a[1]) {
			die_usage("plot: unknown option '%s'", a);
		} else {
			if (csv)
				die_usage("plot: unexpected argument '%s'", a);
			csv = a;
			continue;
		}
		if (i + 1 >= argc)
			die_usage("plot: %s needs a value", a);
		*dst = argv[++i];
	}
	if (!csv)
		die_usage("plot: no RESULTS.csv given%s", "");
	if (!o.out && !o.script && !table)
		die_usage("plot: no -o OUT.png|OUT.svg given%s", "");
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
	if (o.out || strcmp(o.script, "-"))	/* not after a script on standard output */
		printf("plot: %s\n", o.out ? o.out : o.script);
	return 0;
}

/*
 * sweep --plot: the sweep's default figure. x: the first swept dimension (the
 * input when several are swept, then the keys in file order); one line or bar
 * colour per value of the second, os.mode taking that place whenever it is
 * swept; y: L1 dTLB misses per kilo-instruction when x is a TLB key, else total
 * cycles. A non-numeric x gives the mail's % change bars against the series'
 * first value.
 */
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

static int sweep_plot(const struct sweep *sw, const char *csv, const char *out)
{
	struct plot_opts o = { 0 };
	struct err e = { 0 };
	/* the dimensions: the input when several are swept, then the keys */
	const char *dim[2] = { NULL, NULL };
	char *const *vals[2] = { NULL, NULL };
	size_t nvals[2] = { 0, 0 }, nd = 0, mode = SIZE_MAX;

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
	o.out = out;
	o.x = dim[0] ? dim[0] : "input";
	o.by = dim[1];
	o.logx = !strncmp(o.x, "tlb.", 4) && strstr(o.x, "entries");
	for (size_t i = 0; o.logx && vals[0] && i < nvals[0]; i++)
		o.logx = strtod(vals[0][i], NULL) > 0; /* a log axis needs x > 0 */
	if (o.by && vals[0] && !all_numeric(vals[0], nvals[0]))
		o.base = vals[1][0]; /* bars: % change against the series' first value */
	o.y = !strncmp(o.x, "tlb.", 4) ? "mpki:tlb.l1d.misses" : "cycles.total";
	if (plot_status(plot_csv(csv, &o, &e), &e))
		return 1;
	return 0;
}

/* --- sweep / merge ------------------------------------------------------ */

/*
 * Run the points @pts (one input, one repetition) in this process from one pass
 * over the input: each point's arguments are exactly its `mmusim run` command
 * (sweep_point_argv), parsed as `run` parses them, so each report is the one that
 * command writes.
 */
static void sweep_run_points(const struct sweep *sw, const size_t *pts, size_t n, unsigned rep,
			     const char *outdir, const char *self, unsigned threads)
{
	struct opts *o = calloc(n, sizeof(*o));
	char ***argvs = calloc(n, sizeof(*argvs));
	struct run *r = calloc(1, sizeof(*r));
	struct trace_reader *tr = NULL;
	struct err e = { 0 };
	char id[PROVENANCE_ID_MAX];

	if (!o || !argvs || !r) {
		fprintf(stderr, "mmusim: out of memory\n");
		exit(1);
	}
	r->n = (unsigned)n;
	r->threads = threads < n ? threads : (unsigned)n;
	r->sims = calloc(n, sizeof(*r->sims));
	r->mode_names = calloc(n, sizeof(*r->mode_names));
	if (!r->sims || !r->mode_names) {
		fprintf(stderr, "mmusim: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		char *json = sweep_point_file(sw, outdir, pts[i], rep);
		int argc = 0;
		struct sim_config c;

		argvs[i] = sweep_point_argv(sw, pts[i], rep, self, json);
		free(json);
		while (argvs[i][argc])
			argc++;
		parse_opts(argc - 2, argvs[i] + 2, &o[i], true);
		load_config(&o[i], &c);
		if (!i) {
			tr = open_input(&o[0], &c);
			input_identity(&o[0], id); /* one input for every point here */
		}
		r->mode_names[i] = os_mode_name[c.mode];
		if (sim_init(&r->sims[i], &c, &e))
			die_err(&e);
		r->sims[i].trace_name = tr->name;
	}
	run_all(r, tr, true, false);
	for (size_t i = 0; i < n; i++) {
		struct run one = { .sims = &r->sims[i], .mode_names = &r->mode_names[i], .n = 1,
				   .wall = r->wall, .records = r->records };
		struct report_meta m = { .config = o[i].config ? o[i].config : "built-in",
					 .trace = tr->name, .format = trace_format_name[tr->format],
					 .labels = o[i].labels, .nlabels = o[i].nlabels };

		m.input_id = id;

		write_reports(&one, &m, o[i].json, true, false);
	}
	for (size_t i = 0; i < n; i++)
		sweep_argv_free(argvs[i]);
	free(argvs);
	free(o);
	run_free(r);
	trace_close(tr);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* One child process's share of a sweep: points of one input and repetition. */
struct sweep_task {
	size_t *pts;
	size_t n;
	unsigned rep;
	pid_t pid;
};

static volatile sig_atomic_t sweep_stop;

static void on_sweep_signal(int sig)
{
	(void)sig;
	sweep_stop = 1;
}

/*
 * Is the report @f of point @p, repetition @rep current: 1 written for the same
 * effective config, input and build (provenance.h); 0 stale; -1 absent.
 * @ids[@in] caches the input's identity.
 */
static int point_current(const struct sweep *sw, size_t p, unsigned rep, const char *f, size_t in,
			 char **ids, const char *self)
{
	char **av, hash[17];
	int argc = 0, r;
	struct opts o;
	struct sim_config c;

	if (access(f, F_OK))
		return -1;
	av = sweep_point_argv(sw, p, rep, self, f);
	while (av[argc])
		argc++;
	parse_opts(argc - 2, av + 2, &o, true);
	load_config(&o, &c);
	provenance_config_hash(&c, hash);
	if (!ids[in]) {
		ids[in] = malloc(PROVENANCE_ID_MAX);
		if (!ids[in])
			exit(1);
		input_identity(&o, ids[in]);
	}
	r = sweep_report_matches(f, hash, ids[in], provenance_build_id());
	sweep_argv_free(av);
	return r;
}

/* Remove a temporary point directory: its files, then itself. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

static char *default_csv(const char *sweep_path)
{
	const char *b = strrchr(sweep_path, '/');
	char *out = malloc(strlen(sweep_path) + 8), *dot;

	if (!out)
		exit(1);
	strcpy(out, b ? b + 1 : sweep_path);
	dot = strrchr(out, '.');
	if (dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
		*dot = 0;
	strcat(out, ".csv");
	return out;
}

/* Open the CSV @path (outfile.h); 0, or 2 after printing why (a directory, ...). */
static int csv_open(struct outfile *of, const char *path)
{
	struct err e = { 0 };
	char msg[1024];

	if (!outfile_open(of, path, 0, &e))
		return 0;
	err_format(&e, msg, sizeof(msg));
	fprintf(stderr, "%s\n", msg);
	return EXIT_BAD;
}

/* Merge @files into @of and commit it: 0; 2 a bad report; 1 the write failed. */
static int merge_into(struct outfile *of, char **files, size_t n)
{
	struct err e = { 0 };
	char msg[1024];
	FILE *f = outfile_stream(of);
	int r = 0;

	if (!f) {
		outfile_abort(of);
		fprintf(stderr, "mmusim: out of memory\n");
		return 1;
	}
	if (sweep_merge(files, n, f, &e)) {
		outfile_abort(of);
		r = EXIT_BAD;
	} else if (outfile_commit(of, &e)) {
		r = 1;
	}
	if (r) {
		err_format(&e, msg, sizeof(msg));
		fprintf(stderr, "%s\n", msg);
	}
	return r;
}

static int cmd_sweep(int argc, char **argv)
{
	const char *file = NULL, *trace = NULL, *workload = NULL, *outdir = NULL, *csv = NULL;
	const char *run_points = NULL, *plot_out = NULL;
	unsigned jobs = 0, shard_i = 0, shard_n = 1, rep = 0, worker_threads = 1;
	bool list = false, quiet = false;
	struct sweep sw;
	struct err e = { 0 };
	char self[4096], *csv_alloc = NULL, dir_buf[4200];
	struct sweep_task *tasks = NULL;
	size_t ntasks = 0, done = 0, total_points = 0, stale = 0;
	bool temp_outdir = false, will_merge = false;
	struct outfile csv_of;
	char **input_ids = NULL;
	ssize_t sl;
	int status = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if ((!strcmp(a, "-j") || !strcmp(a, "--jobs")) && i + 1 < argc) {
			uint64_t v;

			if (parse_u64(argv[++i], &v) || !v || v > 1024)
				die_usage("-j: '%s' is not a number of jobs from 1 to 1024", argv[i]);
			jobs = (unsigned)v;
		} else if (!strcmp(a, "--shard") && i + 1 < argc) {
			if (sscanf(argv[++i], "%u/%u", &shard_i, &shard_n) != 2 || !shard_n || shard_i >= shard_n)
				die_usage("--shard: expected I/N with 0 <= I < N, got '%s'", argv[i]);
		} else if (!strcmp(a, "--list")) {
			list = true;
		} else if (!strcmp(a, "--outdir") && i + 1 < argc) {
			outdir = argv[++i];
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			csv = argv[++i];
		} else if (!strcmp(a, "--plot") && i + 1 < argc) {
			plot_out = argv[++i];
		} else if ((!strcmp(a, "-w") || !strcmp(a, "--workload")) && i + 1 < argc) {
			workload = argv[++i];
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			quiet = true;
		} else if (!strcmp(a, "--run-points") && i + 3 < argc) {
			/* internal: a worker's share, its repetition and its threads */
			run_points = argv[++i];
			rep = (unsigned)strtoul(argv[++i], NULL, 10);
			worker_threads = (unsigned)strtoul(argv[++i], NULL, 10);
			if (!worker_threads || worker_threads > 1024)
				worker_threads = 1;
		} else if (a[0] == '-' && a[1]) {
			die_usage("sweep: unknown option or missing value '%s'", a);
		} else if (!file) {
			file = a;
		} else if (!trace) {
			trace = a;
		} else {
			die_usage("sweep: unexpected argument '%s'", a);
		}
	}
	if (!file)
		die_usage("sweep: no SWEEP.yaml%s", "");
	if (trace && workload)
		die_usage("sweep: give a TRACE or -w WORKLOAD, not both%s", "");
	if (sweep_load(&sw, file, trace, workload, &e))
		die_err(&e);
	if (!csv)
		csv = csv_alloc = default_csv(file);
	if (plot_out && !outfile_is_regular_path(csv))
		die_usage("sweep: --plot reads the CSV back; -o '%s' is not a regular file", csv);
	if (!outdir) {
		if (strcmp(csv, "-") && outfile_is_regular_path(csv)) {
			snprintf(dir_buf, sizeof(dir_buf), "%s.d", csv);
			outdir = dir_buf;
		} else if (list || shard_n > 1 || run_points) {
			die_usage("sweep: -o '%s' is not a regular file; give --outdir for the points' reports",
				  csv);
		} else {
			/* -o /dev/null, -o -: the points' reports live only as long as the sweep */
			const char *td = getenv("TMPDIR");

			snprintf(dir_buf, sizeof(dir_buf), "%s/mmusim-sweep-XXXXXX", td && *td ? td : "/tmp");
			if (!mkdtemp(dir_buf)) {
				fprintf(stderr, "%s: %s\n", dir_buf, strerror(errno));
				return 1;
			}
			outdir = dir_buf;
			temp_outdir = true;
		}
	}
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		fprintf(stderr, "mmusim: cannot find its own executable\n");
		return 1;
	}
	self[sl] = 0;
	if (run_points) {
		size_t n = 0, *pts = calloc(sw.npoints, sizeof(*pts));
		char *dup = strdup(run_points), *save = NULL;

		if (!pts || !dup)
			return 1;
		for (char *t = strtok_r(dup, ",", &save); t && n < sw.npoints; t = strtok_r(NULL, ",", &save))
			pts[n++] = strtoull(t, NULL, 10);
		sweep_run_points(&sw, pts, n, rep, outdir, self, worker_threads);
		free(pts);
		free(dup);
		sweep_free(&sw);
		free(csv_alloc);
		return 0;
	}
	if (mkdir_p(outdir)) {
		fprintf(stderr, "%s: %s\n", outdir, strerror(errno));
		return 1;
	}
	/* The CSV is opened before any point runs: a directory or an unwritable path is
	 * said now, not after the sweep. */
	will_merge = !list && (shard_n == 1 || csv_alloc == NULL);
	if (will_merge && csv_open(&csv_of, csv)) {
		if (temp_outdir)
			remove_dir(outdir);
		sweep_free(&sw);
		free(csv_alloc);
		return EXIT_BAD;
	}
	if (list) {
		for (size_t p = shard_i; p < sw.npoints; p += shard_n)
			for (unsigned r = 0; r < sw.repeat; r++) {
				char *json = sweep_point_file(&sw, outdir, p, r);
				char **av = sweep_point_argv(&sw, p, r, "mmusim", json);

				sweep_print_cmd(stdout, av);
				sweep_argv_free(av);
				free(json);
			}
		sweep_free(&sw);
		free(csv_alloc);
		return 0;
	}
	if (!jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = n > 0 ? (unsigned)n : 1;
	}
	/*
	 * Tasks: the points still to run, grouped by input and repetition (one
	 * decode drives them all), each group cut into enough chunks to keep the
	 * workers busy.
	 */
	input_ids = calloc(sw.ninputs, sizeof(*input_ids)); /* point_current() fills them */
	if (!input_ids)
		return 1;
	{
		size_t per_input = sw.npoints / sw.ninputs, groups = sw.ninputs * sw.repeat;

		tasks = calloc(groups * (per_input / SWEEP_GROUP_MAX + 1) + 1, sizeof(*tasks));
		if (!tasks)
			return 1;
		for (size_t in = 0; in < sw.ninputs; in++)
			for (unsigned r = 0; r < sw.repeat; r++) {
				size_t *todo = calloc(per_input + 1, sizeof(*todo)), nt = 0;

				for (size_t p = in * per_input; p < (in + 1) * per_input; p++) {
					char *f;

					if (p % shard_n != shard_i)
						continue;
					total_points++;
					f = sweep_point_file(&sw, outdir, p, r);
					switch (point_current(&sw, p, r, f, in, input_ids, self)) {
					case 1:
						done++; /* done by an earlier run under the same key (resume) */
						break;
					case 0:
						stale++;
						todo[nt++] = p;
						break;
					default:
						todo[nt++] = p;
					}
					free(f);
				}
				/* at most SWEEP_GROUP_MAX simulators per worker (memory) */
				size_t nch = (nt + SWEEP_GROUP_MAX - 1) / SWEEP_GROUP_MAX;

				for (size_t c = 0, at = 0; c < nch && at < nt; c++) {
					size_t take = (nt - at + (nch - c) - 1) / (nch - c);
					struct sweep_task *t = &tasks[ntasks++];

					t->pts = malloc(take * sizeof(*t->pts));
					if (!t->pts)
						return 1;
					memcpy(t->pts, todo + at, take * sizeof(*t->pts));
					t->n = take;
					t->rep = r;
					at += take;
				}
				free(todo);
			}
	}
	/*
	 * Fewer workers than jobs: each worker runs its simulators on several
	 * threads (the input decoded once per worker, ahead of them).
	 */
	if (ntasks && ntasks < jobs) {
		worker_threads = jobs / (unsigned)ntasks;
		jobs = (unsigned)ntasks;
	}
	if (!quiet && (done || stale))
		fprintf(stderr, "sweep: %zu of %zu points reused from %s%s", done, total_points, outdir,
			stale ? "" : "\n");
	if (!quiet && stale)
		fprintf(stderr, "; %zu rerun (their config, input or mmusim build changed)\n", stale);
	signal(SIGINT, on_sweep_signal);
	signal(SIGTERM, on_sweep_signal);
	{
		size_t next = 0, running = 0;
		double t0 = now_seconds();

		while ((next < ntasks || running) && !sweep_stop) {
			while (running < jobs && next < ntasks && !status) {
				struct sweep_task *t = &tasks[next++];
				pid_t pid;

				fflush(NULL); /* nothing buffered twice */
				pid = fork();
				if (pid < 0) {
					perror("fork");
					status = 1;
					break;
				}
				if (!pid) {
					/*
					 * The worker: this process's copy of the loaded sweep, no exec
					 * (a new process image would load the libraries and the sweep
					 * file again). `--run-points` runs the same function.
					 */
					signal(SIGINT, SIG_DFL);
					signal(SIGTERM, SIG_DFL);
					sweep_run_points(&sw, t->pts, t->n, t->rep, outdir, self, worker_threads);
					fflush(NULL);
					_exit(0);
				}
				t->pid = pid;
				running++;
			}
			if (!running)
				break;
			{
				int ws;
				pid_t pid = waitpid(-1, &ws, 0);

				if (pid < 0)
					continue; /* EINTR: the loop tests sweep_stop */
				running--;
				for (size_t i = 0; i < ntasks; i++)
					if (tasks[i].pid == pid) {
						tasks[i].pid = 0;
						if (WIFEXITED(ws) && !WEXITSTATUS(ws)) {
							done += tasks[i].n;
						} else if (!status) {
							status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
							fprintf(stderr, "sweep: the worker for point %zu%s failed; stopping\n",
								tasks[i].pts[0], tasks[i].n > 1 ? " and others" : "");
						}
					}
				if (!quiet)
					fprintf(stderr, "\rsweep: %zu/%zu points done, %.1f s", done, total_points,
						now_seconds() - t0);
			}
		}
		if (sweep_stop)
			for (size_t i = 0; i < ntasks; i++)
				if (tasks[i].pid > 0)
					kill(tasks[i].pid, SIGTERM);
		while (wait(NULL) > 0 || errno == EINTR)
			;
		if (!quiet && ntasks)
			fputc('\n', stderr);
	}
	if (sweep_stop) {
		if (temp_outdir)
			fprintf(stderr, "mmusim: sweep interrupted; no result written\n");
		else
			fprintf(stderr, "mmusim: sweep interrupted; finished points are kept in %s, run it again to resume\n",
				outdir);
		status = 130;
	}
	if (!status && will_merge) { /* (130 when interrupted) */
		char **files = calloc(sw.npoints * sw.repeat + 1, sizeof(*files));
		size_t nf = 0;

		if (!files)
			return 1;
		for (size_t p = 0; p < sw.npoints; p++)
			for (unsigned r = 0; r < sw.repeat; r++) {
				char *f = sweep_point_file(&sw, outdir, p, r);

				if (file_exists(f))
					files[nf++] = f;
				else
					free(f);
			}
		status = merge_into(&csv_of, files, nf);
		if (!quiet && !status)
			fprintf(stderr, "sweep: %zu points -> %s\n", nf / sw.repeat, csv);
		for (size_t i = 0; i < nf; i++)
			free(files[i]);
		free(files);
		if (plot_out && !status) {
			status = sweep_plot(&sw, csv, plot_out);
			if (!status && !quiet)
				fprintf(stderr, "sweep: plot -> %s\n", plot_out);
		}
	}
	if (will_merge && status)
		outfile_abort(&csv_of);
	if (temp_outdir)
		remove_dir(outdir);
	for (size_t i = 0; i < ntasks; i++)
		free(tasks[i].pts);
	free(tasks);
	for (size_t i = 0; input_ids && i < sw.ninputs; i++)
		free(input_ids[i]);
	free(input_ids);
	sweep_free(&sw);
	free(csv_alloc);
	return status;
}

static int cmd_merge(int argc, char **argv)
{
	struct outfile of;

	if (argc < 2)
		die_usage("merge: expected OUT.csv RESULT.json...%s", "");
	if (csv_open(&of, argv[0]))
		return EXIT_BAD;
	return merge_into(&of, argv + 1, (size_t)(argc - 1));
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "help";

	atexit(outfile_remove_pending); /* a result not committed by exit() is not left */
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
		if (argc > 2) {
			for (size_t i = 0; i < ARRAY_SIZE(help_texts); i++)
				if (!strcmp(argv[2], help_texts[i].cmd)) {
					fputs(help_texts[i].text, stdout);
					return 0;
				}
			die_usage("help: unknown command '%s'", argv[2]);
		}
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "sweep"))
		return cmd_sweep(argc - 2, argv + 2);
	if (!strcmp(cmd, "merge"))
		return cmd_merge(argc - 2, argv + 2);
	if (!strcmp(cmd, "plot"))
		return cmd_plot(argc - 2, argv + 2);
	die_usage("unknown command '%s'", cmd);
}
