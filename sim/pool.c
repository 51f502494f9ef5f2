/*
 * pool.c - N simulators fed from one trace reader (pool.h).
 *
 * One simulator: the plain loop, batch by batch. Several: a three-stage
 * pipeline (decode, summarize, simulate) over sets of POOL_BATCHES batches,
 * shared by the caller's thread and threads - 1 helpers, a barrier closing each
 * round. Why it is this shape (measured on the validation trace, 8 points):
 *   - the input is decoded once and each simulator skips what it answers from
 *     its memo (sim_batch_summarize(): 81% of the references);
 *   - a simulator runs 32 batches per round, its state staying in one core's
 *     cache, even on one thread (164 -> 137 ms);
 *   - simulator i stays on participant i mod threads (handing simulators to any
 *     free thread made every item 1.4x slower on two threads);
 *   - the barrier spins briefly before it sleeps (pthread barriers: 5% of the
 *     cycles in futex wake-ups);
 *   - the record buffers come from one region advised for huge pages (4214 ->
 *     2655 page faults).
 * Every simulator still sees every batch in order: the counts are those of the
 * plain loop, whatever the timing and the number of threads.
 */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool.h"
#include "util.h"

static bool stop_requested(const struct pool_opts *o)
{
	return o->interrupted && *o->interrupted;
}

/*
 * Has every simulator reached the end of its region of interest (roi.sim_*,
 * roi.c)? Then the rest of the input is not read: a reader's error beyond it is
 * not one of this run.
 */
static bool all_done(const struct sim *sims, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!roi_done(&sims[i].roi))
			return false;
	return true;
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

/* Take @b over into @o: 0, or -1 when the host is out of memory. */
static int own_batch(struct owned_batch *o, struct trace_reader *tr, const struct trace_batch *b)
{
	if (b->nev > o->cap_ev) {
		free(o->ev);
		o->ev = malloc(b->nev * sizeof(*o->ev));
		o->cap_ev = b->nev;
	}
	if (!o->recs)
		o->recs = malloc(TRACE_BATCH * sizeof(*o->recs));
	if (!o->recs || (b->nev && !o->ev) || b->n > TRACE_BATCH)
		return -1;
	if (b->recs == tr->rec)
		trace_take_recs(tr, &o->recs); /* no copy: the reader's buffer changes hands */
	else
		memcpy(o->recs, b->recs, b->n * sizeof(*o->recs));
	if (b->nev)
		memcpy(o->ev, b->ev, b->nev * sizeof(*o->ev));
	o->b = (struct trace_batch){ o->recs, b->n, o->ev, b->nev };
	o->summed = false;
	return 0;
}

/* Batches handed to the simulator threads at once (fewer barrier rounds). */
#define POOL_BATCHES 32
/* Batches per summarizing work item (the summaries of a set are independent). */
#define SUM_CHUNK 8
/* Room for the ops of one batch: at most two a record (sim_batch_summarize()). */
#define SUM_CAP (2 * TRACE_BATCH)

/*
 * Room for the summaries of one set: per chunk of SUM_CHUNK batches, their ops
 * packed one batch after the other (pool_summarize()).
 */
struct sum_region {
	uint64_t *op;     /* POOL_BATCHES * SUM_CAP */
	uint16_t *op_rec; /* as many */
};

struct batch_set {
	struct owned_batch ob[POOL_BATCHES];
	unsigned n;
	struct sum_region *sr; /* where its summaries go (set when it enters ST_SUM) */
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
 * simulated (one item per simulator, all of the set's batches). o->threads
 * participants -- the caller's thread and o->threads - 1 helpers -- share a round's
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
	struct sim *sims;
	unsigned n;         /* simulators */
	uint64_t records;   /* simulated by all */
	struct trace_reader *tr;
	struct spin_barrier start, done;
	struct batch_set *stage[ST_NR]; /* this round's set per stage; NULL: none */
	struct pool_item *items;
	unsigned nitems;
	atomic_uint next;
	int rc;             /* the reader's last trace_next(); -2: host out of memory */
	struct err rerr;    /* its error */
	bool *failed;       /* per simulator: stopped on bad input (its err says why) */
	double *cost;       /* per simulator: seconds in the last round (ordering only) */
	atomic_bool *claimed; /* per simulator: taken this round */
	atomic_uint *owner; /* per simulator: the participant it belongs to (a hint) */
	unsigned *order;    /* simulators by the last round's cost, descending */
	unsigned nthreads;
	bool stop;
	bool ended; /* every simulator's region ended (all_done()): the input is left unread */
	struct sum_region sr[2]; /* the summaries of the sets in ST_SUM and ST_SIM */
	unsigned want;           /* batches this round's fill decodes */
};

/*
 * Summarize the batches of chunk @k0 of @s: each batch's ops start where the
 * previous batch's end, so the chunk's room (SUM_CHUNK * SUM_CAP) holds them in
 * the worst case and only what a batch uses is ever touched -- about a fifth of
 * its SUM_CAP on the validation trace (31 % of the records become ops, 12 %
 * runs). Fresh memory is what costs here: a page first written costs a fault
 * and its zeroing (about 2 ms a MiB on this project's guest, whatever the page
 * size), and room for each batch's worst case, in huge pages, was 9.4 MiB
 * zeroed per sweep worker, a fifth of an 8-point sweep's time.
 */
static void pool_summarize(struct batch_set *s, unsigned k0)
{
	size_t at = (size_t)k0 * SUM_CAP, end = at + (size_t)SUM_CHUNK * SUM_CAP;

	for (unsigned k = k0; k < s->n && k < k0 + SUM_CHUNK; k++) {
		struct batch_summary *sum = &s->ob[k].sum;

		sum->op = s->sr->op + at;
		sum->op_rec = s->sr->op_rec + at;
		sum->cap_op = end - at; /* >= (SUM_CHUNK - (k - k0)) * SUM_CAP: never grown */
		s->ob[k].summed = !sim_batch_summarize(&s->ob[k].b, sum);
		if (s->ob[k].summed)
			at += sum->nop;
	}
}

static void pool_item_run(struct sim_pool *p, const struct pool_item *it)
{
	if (it->kind == ST_FILL) {
		struct batch_set *s = p->stage[ST_FILL];
		struct trace_batch b;

		for (s->n = 0; s->n < p->want && (p->rc = trace_next(p->tr, &b, &p->rerr)) > 0;)
			if (own_batch(&s->ob[s->n++], p->tr, &b)) {
				s->n--;
				p->rc = -2;
				break;
			}
	} else if (it->kind == ST_SUM) {
		pool_summarize(p->stage[ST_SUM], it->arg);
	} else {
		const struct batch_set *s = p->stage[ST_SIM];
		unsigned i = it->arg;
		double t0 = now_seconds();

		for (unsigned k = 0; k < s->n && !p->failed[i]; k++) {
			const struct owned_batch *o = &s->ob[k];
			struct err e;

			if (sim_run_batch_summarized(&p->sims[i], &o->b, o->summed ? &o->sum : NULL, &e))
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
		for (unsigned j = 0; j < p->n; j++) {
			/* own ones longest first; others' shortest first */
			unsigned i = pass ? p->order[p->n - 1 - j] : p->order[j];

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
	for (unsigned i = 0; i < p->n; i++) {
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


/* The pool's bookkeeping, the helpers' slots and the sets: 0, or -1 (out of memory). */
static int pool_alloc(struct sim_pool *p, pthread_t **tid, struct pool_arg **pa)
{
	unsigned nt = p->nthreads - 1;

	*tid = calloc(nt + 1, sizeof(**tid)); /* + 1: calloc(0) may be NULL */
	*pa = calloc(nt + 1, sizeof(**pa));
	p->failed = calloc(p->n, sizeof(*p->failed));
	p->cost = calloc(p->n, sizeof(*p->cost));
	p->claimed = calloc(p->n, sizeof(*p->claimed));
	p->order = calloc(p->n, sizeof(*p->order));
	p->owner = calloc(p->n, sizeof(*p->owner));
	for (unsigned i = 0; p->owner && i < p->n; i++)
		atomic_init(&p->owner[i], i % p->nthreads);
	p->items = calloc(1 + POOL_BATCHES / SUM_CHUNK + 1, sizeof(*p->items));
	p->start.n = p->done.n = nt + 1;
	return *tid && *pa && p->failed && p->cost && p->claimed && p->order && p->owner &&
	       p->items ? 0 : -1;
}

static void pool_free(struct sim_pool *p, pthread_t *tid, struct pool_arg *pa)
{
	free(tid);
	free(pa);
	free(p->failed);
	free(p->cost);
	free(p->claimed);
	free(p->order);
	free(p->owner);
	free(p->items);
}

/*
 * The sets' record buffers, and the one the reader fills, come from one
 * region with huge pages if the kernel gives them (madvise mode): fresh 4K
 * pages cost a fault each -- 6 % of an 8-point sweep of the validation trace.
 * The reader's own buffer waits in *@spare and goes back at the end. The
 * region's length into *@alen; NULL when out of memory.
 */
static struct trace_rec *pool_arena(struct batch_set *set, struct trace_reader *tr,
				    struct trace_rec **spare, size_t *alen)
{
	size_t nbuf = ST_NR * POOL_BATCHES + 1, len = nbuf * TRACE_BATCH * sizeof(struct trace_rec);
	struct trace_rec *arena;

	arena = huge_region(&len);
	if (!arena)
		return NULL;
	for (int j = 0; j < ST_NR; j++)
		for (int i = 0; i < POOL_BATCHES; i++)
			set[j].ob[i].recs = arena + (size_t)(j * POOL_BATCHES + i) * TRACE_BATCH;
	*spare = arena + (nbuf - 1) * TRACE_BATCH;
	trace_take_recs(tr, spare);
	*alen = len;
	return arena;
}

/*
 * The batch summaries' op arrays: room for the most ops every batch can make,
 * so sim_batch_summarize() never reallocates (grown by realloc() batch by batch
 * they were most of an 8-point sweep's page faults: the validation trace,
 * 2,216 in all, ~18 us each on this project's guest). Two regions, not one a
 * set: a set needs its summaries only from ST_SUM to the end of ST_SIM, and the
 * set being filled has none yet; 4K pages, not huge ones, so that only the
 * pages the packed ops reach are ever touched (pool_summarize()). The mapping's
 * length into *@slen; NULL when out of memory.
 */
static void *pool_sum_arena(struct sum_region sr[2], size_t *slen)
{
	size_t per = (size_t)POOL_BATCHES * SUM_CAP;
	size_t len = 2 * per * (sizeof(uint64_t) + sizeof(uint16_t));
	unsigned char *r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	madvise(r, len, MADV_NOHUGEPAGE); /* a hint: THP "always" would zero 2 MiB for a few KiB */
	for (int j = 0; j < 2; j++) {
		sr[j].op = (uint64_t *)(void *)r + j * per;
		sr[j].op_rec = (uint16_t *)(void *)(r + 2 * per * sizeof(uint64_t)) + j * per;
	}
	*slen = len;
	return r;
}

/*
 * The rounds: round 0 fills set 0; each set then moves one stage per round. A
 * reader error, a failed simulator or an interruption ends the run after its
 * round. Returns the first failed simulator, or p->n.
 */
static unsigned pool_rounds(struct sim_pool *p, struct batch_set *set, const struct pool_opts *o)
{
	unsigned failed = p->n, nsum = 0;

	p->stage[ST_FILL] = &set[0];
	for (unsigned round = 0; p->stage[ST_FILL] || p->stage[ST_SUM] || p->stage[ST_SIM]; round++) {
		/*
		 * The first sets grow from one batch (1, 2, 4, ... POOL_BATCHES), as
		 * pool_ahead()'s do: the simulators start two small rounds in instead
		 * of after two whole sets, decoded and summarized while the other
		 * threads wait (the first round has nothing else to do).
		 */
		p->want = round < 6 && 1u << round < POOL_BATCHES ? 1u << round : POOL_BATCHES;
		pool_plan(p);
		barrier_wait(&p->start);
		pool_work(p, 0);
		barrier_wait(&p->done);
		if (p->stage[ST_SIM]) {
			for (unsigned k = 0; k < p->stage[ST_SIM]->n; k++)
				p->records += p->stage[ST_SIM]->ob[k].b.n;
			for (unsigned i = 0; i < p->n && failed == p->n; i++)
				if (p->failed[i])
					failed = i;
			if (o->progress)
				o->progress(o->progress_arg, p->records);
		}
		if (failed < p->n || stop_requested(o))
			break;
		if (p->stage[ST_SIM] && all_done(p->sims, p->n)) {
			p->ended = true;
			break;
		}
		p->stage[ST_SIM] = p->stage[ST_SUM];
		p->stage[ST_SUM] = p->stage[ST_FILL] && p->stage[ST_FILL]->n ? p->stage[ST_FILL] : NULL;
		if (p->stage[ST_SUM]) /* the region the set simulated last round used */
			p->stage[ST_SUM]->sr = &p->sr[nsum++ % 2];
		/* the next fill takes the set that just left the simulators */
		p->stage[ST_FILL] = p->rc > 0 ? &set[(round + 1) % ST_NR] : NULL;
	}
	return failed;
}

/* Several simulators: the pipeline on o->threads participants. */
static int pool_threaded(struct sim *sims, unsigned n, struct trace_reader *tr,
			 const struct pool_opts *o, uint64_t *records, struct err *e)
{
	struct batch_set *set = calloc(ST_NR, sizeof(*set));
	struct sim_pool p = { .sims = sims, .n = n, .tr = tr, .rc = 1,
			      .nthreads = o->threads ? o->threads : 1 };
	unsigned nt = p.nthreads - 1, started = 0, failed;
	pthread_t *tid;
	struct pool_arg *pa;
	struct trace_rec *arena = NULL, *spare = NULL;
	void *sarena = NULL;
	size_t alen = 0, slen = 0;
	int rc = POOL_OK;

	if (pool_alloc(&p, &tid, &pa) || !set || !(sarena = pool_sum_arena(p.sr, &slen)) ||
	    !(arena = pool_arena(set, tr, &spare, &alen))) {
		err_host(e, "mmusim", 0, 0, "out of memory");
		rc = POOL_EHOST;
		goto out;
	}
	for (; started < nt; started++) {
		pa[started] = (struct pool_arg){ &p, started + 1 };
		if (pthread_create(&tid[started], NULL, pool_thread, &pa[started]))
			break;
	}
	if (started < nt) {
		err_set(e, "mmusim", 0, 0, "cannot start threads");
		rc = POOL_EHOST;
		/* the helpers that never started arrive at the barrier below in name only */
		atomic_fetch_add(&p.start.arrived, nt - started);
	} else {
		failed = pool_rounds(&p, set, o);
		if (failed < n) {
			*e = sims[failed].k.err;
			rc = POOL_EINPUT;
		} else if (stop_requested(o)) {
			rc = POOL_EINTR;
		} else if (p.ended) {
			rc = POOL_OK;
		} else if (p.rc == -2) {
			err_host(e, "mmusim", 0, 0, "out of memory");
			rc = POOL_EHOST;
		} else if (p.rc < 0) {
			*e = p.rerr;
			rc = POOL_EINPUT;
		}
	}
	p.stop = true;
	barrier_wait(&p.start);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	trace_take_recs(tr, &spare); /* the reader's own buffer back; the arena's goes */
	munmap(arena, alen);
out:
	for (int j = 0; set && j < ST_NR; j++)
		for (int i = 0; i < POOL_BATCHES; i++)
			free(set[j].ob[i].ev);
	if (sarena)
		munmap(sarena, slen);
	pool_free(&p, tid, pa);
	free(set);
	*records = p.records;
	return rc;
}

/*
 * One simulator on a machine with a second core: the reader runs ahead on a
 * thread of its own (decoding into a ring of ST_NR sets of POOL_BATCHES
 * batches) while the caller's thread simulates. Parsing a text trace is a fifth
 * of a single run's instructions (the miss-heavy GUPS bench trace, callgrind:
 * 259 of 1,310 a record pair in lk_parse); here it overlaps the simulation. The
 * simulator sees the batches in order, as in pool_plain().
 */
struct ahead {
	struct trace_reader *tr;
	struct batch_set *set;   /* ST_NR sets, a ring */
	pthread_mutex_t lock;
	pthread_cond_t cv_filled, cv_free;
	uint64_t filled, consumed; /* sets */
	bool done, stop;
	int rc;                  /* the reader's last trace_next(); -2: host out of memory */
	struct err rerr;
};

static void *ahead_thread(void *arg)
{
	struct ahead *a = arg;

	for (uint64_t k = 0;; k++) {
		struct batch_set *s = &a->set[k % ST_NR];
		/*
		 * The first sets grow from one batch (1, 2, 4, ... POOL_BATCHES): the
		 * simulator starts after the first batch instead of a whole set, whose
		 * decoding at the start (fresh buffers, the decompressor's window
		 * faulting in) kept it waiting 9-12 ms of a 0.2 s run (the miss-heavy
		 * bench trace); from then on the reader keeps ahead.
		 */
		unsigned want = k < 5 ? 1u << k : POOL_BATCHES;
		struct trace_batch b;
		int rc = 1;

		pthread_mutex_lock(&a->lock);
		while (!a->stop && k - a->consumed >= ST_NR)
			pthread_cond_wait(&a->cv_free, &a->lock);
		pthread_mutex_unlock(&a->lock);
		if (a->stop)
			break;
		for (s->n = 0; s->n < want && (rc = trace_next(a->tr, &b, &a->rerr)) > 0;)
			if (own_batch(&s->ob[s->n++], a->tr, &b)) {
				s->n--;
				rc = -2;
				break;
			}
		pthread_mutex_lock(&a->lock);
		if (s->n)
			a->filled++;
		if (rc <= 0) {
			a->rc = rc;
			a->done = true;
		}
		pthread_cond_signal(&a->cv_filled);
		pthread_mutex_unlock(&a->lock);
		if (rc <= 0)
			break;
	}
	return NULL;
}

/*
 * Simulate the sets as they come; POOL_* (a->rc and a->done read once the thread
 * is gone). *@ended: the simulator's region ended before the input did.
 */
static int ahead_consume(struct ahead *a, struct sim *sim, const struct pool_opts *o,
			 uint64_t *records, bool *ended, struct err *e)
{
	for (uint64_t k = 0;; k++) {
		const struct batch_set *s = &a->set[k % ST_NR];

		pthread_mutex_lock(&a->lock);
		while (a->filled == k && !a->done)
			pthread_cond_wait(&a->cv_filled, &a->lock);
		if (a->filled == k) {
			pthread_mutex_unlock(&a->lock);
			return POOL_OK;
		}
		pthread_mutex_unlock(&a->lock);
		for (unsigned i = 0; i < s->n; i++) {
			if (sim_run_batch_summarized(sim, &s->ob[i].b, NULL, e))
				return POOL_EINPUT;
			*records += s->ob[i].b.n;
			if (unlikely(roi_done(&sim->roi))) {
				*ended = true;
				return POOL_OK;
			}
		}
		pthread_mutex_lock(&a->lock);
		a->consumed++;
		pthread_cond_signal(&a->cv_free);
		pthread_mutex_unlock(&a->lock);
		if (stop_requested(o))
			return POOL_EINTR;
		if (o->progress)
			o->progress(o->progress_arg, *records);
	}
}

static int pool_ahead(struct sim *sim, struct trace_reader *tr, const struct pool_opts *o,
		      uint64_t *records, struct err *e)
{
	struct batch_set *set = calloc(ST_NR, sizeof(*set));
	struct ahead a = { .tr = tr, .set = set, .rc = 1 };
	struct trace_rec *arena = NULL, *spare = NULL;
	size_t alen = 0;
	pthread_t tid;
	bool ended = false;
	int rc;

	if (!set || !(arena = pool_arena(set, tr, &spare, &alen))) {
		free(set);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	/*
	 * On two cores the read-ahead thread decompresses too: two busy threads, not
	 * three (bench row (e): zstd, parsing and simulating on two cores). With a
	 * third core the decompressor keeps its own thread.
	 */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 3)
		trace_set_inline(tr);
	pthread_mutex_init(&a.lock, NULL);
	pthread_cond_init(&a.cv_filled, NULL);
	pthread_cond_init(&a.cv_free, NULL);
	if (pthread_create(&tid, NULL, ahead_thread, &a)) {
		err_set(e, "mmusim", 0, 0, "cannot start threads");
		rc = POOL_EHOST;
	} else {
		rc = ahead_consume(&a, sim, o, records, &ended, e);
		pthread_mutex_lock(&a.lock);
		a.stop = true;
		pthread_cond_signal(&a.cv_free);
		pthread_mutex_unlock(&a.lock);
		pthread_join(tid, NULL);
		if (ended) {
			/* the region ended: what the reader met beyond it does not matter */
		} else if (rc == POOL_OK && a.rc == -2) {
			err_host(e, "mmusim", 0, 0, "out of memory");
			rc = POOL_EHOST;
		} else if (rc == POOL_OK && a.rc < 0) {
			*e = a.rerr;
			rc = POOL_EINPUT;
		}
	}
	pthread_cond_destroy(&a.cv_free);
	pthread_cond_destroy(&a.cv_filled);
	pthread_mutex_destroy(&a.lock);
	trace_take_recs(tr, &spare);
	munmap(arena, alen);
	for (int j = 0; j < ST_NR; j++)
		for (int i = 0; i < POOL_BATCHES; i++)
			free(set[j].ob[i].ev);
	free(set);
	return rc;
}

/* One simulator, or invariants checked, or a shared timeline: batch by batch. */
static int pool_plain(struct sim *sims, unsigned n, struct trace_reader *tr,
		      const struct pool_opts *o, uint64_t *records, struct err *e)
{
	struct trace_batch b;
	struct batch_summary sum = { 0 };
	unsigned long batches = 0;
	int rc = POOL_OK, got;

	while ((got = trace_next(tr, &b, e)) > 0) {
		/* several simulators: find once what each answers from its memo */
		bool summed = n > 1 && !sim_batch_summarize(&b, &sum);

		for (unsigned i = 0; i < n && rc == POOL_OK; i++) {
			if (sim_run_batch_summarized(&sims[i], &b, summed ? &sum : NULL, e))
				rc = POOL_EINPUT;
			else if (o->check)
				sim_check_invariants(&sims[i]);
		}
		if (rc != POOL_OK)
			break;
		*records += b.n;
		if (stop_requested(o)) {
			rc = POOL_EINTR;
			break;
		}
		if (unlikely(all_done(sims, n))) {
			got = 0; /* every region ended: the rest is not read */
			break;
		}
		if (o->progress && (++batches & 63) == 0)
			o->progress(o->progress_arg, *records);
	}
	sim_batch_summary_free(&sum);
	return got < 0 ? POOL_EINPUT : rc;
}

int pool_run(struct sim *sims, unsigned n, struct trace_reader *tr, const struct pool_opts *o,
	     uint64_t *records, struct err *e)
{
	uint64_t nrec = 0;
	int rc;

	for (unsigned i = 0; i < n; i++) { /* loops inside a batch stop on a signal too */
		sims[i].stop = o->interrupted;
		sims[i].deps = tr->deps; /* the report says whether the input recorded dependences */
	}
	/*
	 * Several simulators: the pool, even on one thread -- each simulator runs
	 * 32 batches at a time, its state staying in the cache (batch by batch, 8
	 * simulators on one thread took 164 ms instead of 137). Not with a shared
	 * --timeline (or --steps): its rows stay interleaved batch by batch, as they were.
	 */
	if (n > 1 && !o->check && !sims[0].timeline && !sims[0].steps)
		rc = pool_threaded(sims, n, tr, o, &nrec, e);
	else if (n == 1 && !o->check && !sims[0].timeline && !sims[0].steps &&
		 sysconf(_SC_NPROCESSORS_ONLN) > 1)
		rc = pool_ahead(sims, tr, o, &nrec, e);
	else
		rc = pool_plain(sims, n, tr, o, &nrec, e);
	if (records)
		*records = nrec;
	if (rc == POOL_OK)
		for (unsigned i = 0; i < n; i++)
			sim_finish(&sims[i]);
	return rc;
}
