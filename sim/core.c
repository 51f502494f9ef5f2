/*
 * core.c - the overlap core (cpu.model: overlap): an interval model of an
 * out-of-order core driven by the reference stream, in which independent
 * misses proceed together and dependent ones wait.
 *
 * Every instruction x (numbered from 1, as sim_now() counts them) has:
 *
 *   D(x) dispatch  = max(D(x-1) + cpu.cpi, R(x - cpu.rob))      the window is full
 *                    (and for a store, when the store buffer is full: the drain
 *                    of its oldest store; for an ifetch that missed the L1 iTLB:
 *                    its translation, the front end waits)
 *   I(x) issue     = max(D(x), C(p))   p: the load its address depends on (R_DEP)
 *   C(x) complete  = I(x) + translation + data                   (see below)
 *   R(x) retire    = max(C(x), R(x-1) + 1 / cpu.width)           in order
 *
 * An instruction without a late reference completes at its dispatch. With no
 * misses D(x) = x * cpi = R(x): cycles.total is instructions x CPI, as under
 * additive. Simulated time under overlap is R(last): cycles.total.
 *
 * Dispatch: one instruction per cpu.cpi, the base CPI of the work that is not
 * memory (the issue queues, ports and dependences between registers it stands
 * for), not 1 / cpu.width: the width bounds retirement (and cpi may not be
 * below 1 / width, config.c), while a real core reaches its width only on
 * code that allows it. Where cpi comes from is the machine file's business: a
 * measured base CPI of a workload with no miss is a source (configs/zen5.yaml
 * takes STREAM's triad on L1D-resident arrays, virt_chase --model's triadl1
 * row: cycles per element over the 7 instructions the model counts), the
 * documented default 1.0 otherwise. One cpi for every workload is a
 * simplification: a workload whose non-memory work differs (GUPS's generator,
 * a chase's single load) is dispatched at the same rate, which matters only
 * where memory does not bound it.
 *
 * Translation: an L1 TLB miss costs tlb.latency.l1 + tlb.latency.stlb (the
 * probes); an STLB miss then waits for the first free of walk.walkers walkers
 * and holds it for the walk's cycles (its PWC probes and entry reads, serial
 * within one walk, as mmu.c times them). Data (cache.data_refs): from the end
 * of translation, the access waits for a free miss-status holding register at
 * every level it misses (cache.l1d.mshrs for a miss in L1D, cache.l2.mshrs
 * for one in L2, cache.llc.mshrs for DRAM), holds each until it completes and
 * costs the latency of the level that served it (cache.c). A store retires
 * when its address is translated; its write leaves the store buffer
 * (cpu.store_buffer) in order, after it retired and its line is there.
 *
 * Only the late references are events: the MMU reports a lookup only when it
 * missed the L1 TLB's inline probe (mmu.c) or went to the cache (data_refs),
 * so the L1-hit path pays nothing, and a reference whose address depends on a
 * late load is registered by its R_DEP record (sim.c). The window holds the
 * events of the last cpu.rob instructions, in order; a dispatch stall is
 * applied when the instruction cpu.rob after an event is reached, which is
 * exact because D grows by cpi >= 1 / width per instruction after a stall
 * while retirement can only follow at 1 / width.
 *
 * Stalls: each cycle the dispatch clock is held (a full window, a full store
 * buffer, an iTLB miss, and the wait at the end for the last instruction to
 * retire) is charged to translation and data in the shares of the late
 * reference that held it (a reference that waited for a late load inherits
 * that load's shares for the wait): cycles.translation_stall and
 * cycles.data_stall. Under additive every translation and data cycle stalls
 * (stats.c).
 *
 * Memory (the timed hierarchy, cache.c: cpu.model overlap with a prefetcher
 * or cache.dram_bandwidth): every line that moves between DRAM and the chip
 * holds one DRAM bus for cache.line / cache.dram_bandwidth cycles, in the
 * order the references reach it: a demand read from DRAM completes at
 * max(its latency, the bus free + one transfer), a prefetch likewise from the
 * access that issued it (its source level's latency; no MSHR: the prefetchers'
 * own queues, bounded by their distance), a write-back of a dirty line takes
 * the bus from the access whose fill evicted it. A reference that finds a line
 * a prefetch brought completes no earlier than the prefetch's arrival. N line
 * transfers back to back take N x line / bandwidth cycles: the bandwidth
 * machine files measure (zen5.yaml: virt_chase --model's bw row).
 *
 * Kernel and hypervisor time (faults, compaction, reclaim, VM exits) stops
 * the core: it is added to the dispatch clock when the next event sees it;
 * references in flight go on meanwhile.
 *
 * Leaves out: the issue queues and ports (cpi stands for them), branch
 * mispredictions and their flushes, secondary misses to a line in flight (a
 * second reference to the line is an L1D hit), walker reads through the
 * MSHRs (and their DRAM reads on the bus), banks, rows and read/write
 * turnarounds of the DRAM (one bus at the measured rate), store-to-load
 * forwarding, stores that hit occupying the store buffer (they drain at
 * retirement, in cpi).
 * Sources: Karkhanis and Smith, "A First-Order Superscalar Processor Model"
 * (ISCA 2004) and Eyerman et al., "A Mechanistic Performance Model for
 * Superscalar Out-of-Order Processors" (ACM TOCS 27(2), 2009): the interval
 * model; ChampSim's and Sniper's cores for walkers and MSHRs as the bound on
 * overlapping misses.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "err.h"

static size_t pow2_at_least(size_t n)
{
	size_t p = 16;

	while (p < n)
		p <<= 1;
	return p;
}

int core_init(struct core *c, const struct sim_config *cfg)
{
	memset(c, 0, sizeof(*c));
	c->cpi = cfg->cpi;
	c->ret_step = 1.0 / (double)cfg->core.width;
	c->rob = cfg->core.rob;
	c->sb_cap = cfg->core.store_buffer;
	c->nwalkers = cfg->core.walkers;
	c->walker = calloc(c->nwalkers, sizeof(*c->walker));
	for (int l = 0; l < CL_NR; l++) {
		c->nmshr[l] = cfg->cache[l].size ? cfg->cache[l].mshrs : 0;
		c->mshr[l] = calloc(c->nmshr[l] + 1, sizeof(*c->mshr[l]));
		if (!c->mshr[l])
			return -1;
	}
	c->cap = pow2_at_least(c->rob + 2);
	c->ev = malloc(c->cap * sizeof(*c->ev));
	c->sb_mask = pow2_at_least(c->sb_cap) - 1;
	c->sb = malloc((c->sb_mask + 1) * sizeof(*c->sb));
	c->sb_ftr = malloc((c->sb_mask + 1) * sizeof(*c->sb_ftr));
	if (!c->walker || !c->ev || !c->sb || !c->sb_ftr)
		return -1;
	return 0;
}

void core_set_memory(struct core *c, struct cache *mem, const struct sim_config *cfg)
{
	c->mem = mem;
	c->xfer = cfg->dram_bandwidth > 0 ? (double)cfg->line_size / cfg->dram_bandwidth : 0;
	for (int l = 0; l < CL_NR; l++)
		c->lat[l] = cfg->cache[l].latency;
	c->lat[CL_NR] = cfg->dram_latency;
}

double core_bus_transfer(struct core *c, double ready)
{
	double end = c->bus + c->xfer;

	if (c->xfer <= 0)
		return ready;
	if (end < ready)
		end = ready;
	c->bus = end;
	return end;
}

/*
 * The timed memory's part of a data access that started at @start (its MSHRs
 * held) at level @level and would complete at @done: its DRAM transfer, the
 * prefetch it found in flight, and what it made move (write-backs, prefetches:
 * their arrival into the cache). Its completion.
 */
static double memory_side(struct core *c, double start, double done, unsigned level)
{
	struct cache_out *o = &c->mem->out;

	if (level == CL_NR)
		done = core_bus_transfer(c, done);
	if (o->hit_ready > done)
		done = o->hit_ready;
	for (; o->writebacks; o->writebacks--)
		core_bus_transfer(c, start);
	for (unsigned i = 0; i < o->npf; i++) {
		const struct cache_pf_req *r = &o->pf[i];
		double t = start + c->lat[r->src];

		if (r->src_ready > t)
			t = r->src_ready;
		if (r->src == CL_NR)
			t = core_bus_transfer(c, t);
		c->mem->lv[r->target].ready[r->slot] = t;
	}
	o->npf = 0;
	return done;
}

void core_free(struct core *c)
{
	free(c->walker);
	for (int l = 0; l < CL_NR; l++)
		free(c->mshr[l]);
	free(c->ev);
	free(c->sb);
	free(c->sb_ftr);
	memset(c, 0, sizeof(*c));
}

static inline struct core_ev *ev_at(const struct core *c, size_t i)
{
	return &c->ev[(c->head + i) & (c->cap - 1)];
}

/* The dispatch clock at @x with the stalls so far. */
static inline double clock_at(const struct core *c, uint64_t x)
{
	return (double)x * c->cpi + c->stall + c->serial_in;
}

/* Hold dispatch until @until (if later than @now), charged in shares @ftr, @fdt. */
static void hold(struct core *c, double now, double until, double ftr, double fdt)
{
	if (until > now) {
		c->stall += until - now;
		c->st_tr += (until - now) * ftr;
		c->st_data += (until - now) * fdt;
	}
}

/*
 * Bring the window up to instruction @x: every event at least cpu.rob older
 * leaves it, after instruction event + rob waited for its retirement; then the
 * kernel's time since the last look joins the clock.
 */
static inline void advance(struct core *c, uint64_t x, cycles_t serial)
{
	while (c->n && ev_at(c, 0)->insn + c->rob <= x) {
		struct core_ev *e = ev_at(c, 0);

		hold(c, clock_at(c, e->insn + c->rob), e->r, e->ftr, e->fdt);
		c->front = *e;
		c->head = (c->head + 1) & (c->cap - 1);
		c->n--;
	}
	if (serial > c->serial_seen) {
		c->serial_in += (double)(serial - c->serial_seen);
		c->serial_seen = serial;
	}
}

/* The youngest event, or the retired front (insn 0, r 0 at the start). */
static inline const struct core_ev *youngest(const struct core *c)
{
	return c->n ? ev_at(c, c->n - 1) : &c->front;
}

/* @e's retirement: after its completion and its predecessors' (width a cycle). */
static void retire_time(const struct core *c, struct core_ev *e, const struct core_ev *prev)
{
	double chain = prev->r + (double)(e->insn - prev->insn) * c->ret_step;

	if (chain > e->c) {
		e->r = chain;
		e->ftr = prev->ftr;
		e->fdt = prev->fdt;
	} else {
		e->r = e->c;
	}
}

static struct core_ev *push(struct core *c)
{
	if (c->n == c->cap) { /* more late references than the ring holds: grow it */
		struct core_ev *ne = malloc(2 * c->cap * sizeof(*ne));

		BUG_ON(!ne); /* (a window of rob instructions: bounded by the references in it) */
		for (size_t i = 0; i < c->n; i++)
			ne[i] = *ev_at(c, i);
		free(c->ev);
		c->ev = ne;
		c->head = 0;
		c->cap *= 2;
	}
	c->n++;
	return ev_at(c, c->n - 1);
}

/* The store buffer at @d: drained stores leave; a full one holds dispatch. */
static void sb_make_room(struct core *c, uint64_t x)
{
	size_t mask = c->sb_mask;
	double d = clock_at(c, x);

	while (c->sb_n && c->sb[c->sb_head] <= d) {
		c->sb_head = (c->sb_head + 1) & mask;
		c->sb_n--;
	}
	if (c->sb_n >= c->sb_cap) {
		float f = c->sb_ftr[c->sb_head];

		hold(c, d, c->sb[c->sb_head], f, 1.0f - f);
		c->sb_head = (c->sb_head + 1) & mask;
		c->sb_n--;
	}
}

static void sb_add(struct core *c, double drain, float ftr)
{
	size_t mask = c->sb_mask;

	if (drain < c->sb_last)
		drain = c->sb_last; /* in order */
	c->sb_last = drain;
	c->sb[(c->sb_head + c->sb_n) & mask] = drain;
	c->sb_ftr[(c->sb_head + c->sb_n) & mask] = ftr;
	c->sb_n++;
}

/* The earliest free of @n entries in @t: its index. */
static unsigned earliest(const double *t, unsigned n)
{
	unsigned best = 0;

	for (unsigned i = 1; i < n; i++)
		if (t[i] < t[best])
			best = i;
	return best;
}

void core_ref(struct core *c, uint64_t insn, cycles_t serial, uint64_t loads, uint64_t dord,
	      const struct core_ref *ref)
{
	bool dep, store = ref->write && !ref->ifetch;
	double d, issue, tr_end, done, lat;
	float ftr, fdt;
	struct core_ev *e;

	loads += c->ld_base;
	dord += c->dr_base;
	dep = c->dep_live && dord == c->dep_ord && !ref->ifetch;
	if (c->dep_live && !dep)
		c->dep_live = false; /* that reference hit: its event stands as registered */
	advance(c, insn, serial);
	if (store && !dep)
		sb_make_room(c, insn);
	d = clock_at(c, insn);
	issue = dep && c->dep_p > d ? c->dep_p : d;

	/* translation: the probes, then a walker */
	tr_end = issue + (double)ref->t_stlb;
	if (ref->walked) {
		unsigned w = earliest(c->walker, c->nwalkers);

		if (c->walker[w] > tr_end)
			tr_end = c->walker[w];
		tr_end += (double)ref->t_walk;
		c->walker[w] = tr_end;
	}
	/* data: an MSHR at every level it missed */
	done = tr_end;
	if (ref->data) {
		unsigned pick[CL_NR];
		double start = tr_end;

		for (unsigned l = 0; l < ref->level && l < CL_NR; l++)
			if (c->nmshr[l]) {
				pick[l] = earliest(c->mshr[l], c->nmshr[l]);
				if (c->mshr[l][pick[l]] > start)
					start = c->mshr[l][pick[l]];
			}
		done = start + (double)ref->t_data;
		if (c->mem)
			done = memory_side(c, start, done, ref->level);
		for (unsigned l = 0; l < ref->level && l < CL_NR; l++)
			if (c->nmshr[l])
				c->mshr[l][pick[l]] = done;
	}

	/* the shares of the wait from dispatch: the load waited for, translation, data */
	lat = done - d;
	if (lat > 0) {
		double wait = issue - d;

		ftr = (float)((wait * (dep ? c->dep_ftr : 0) + (tr_end - issue)) / lat);
		fdt = (float)((wait * (dep ? c->dep_fdt : 0) + (done - tr_end)) / lat);
	} else {
		ftr = fdt = 0;
	}

	if (ref->ifetch) { /* the front end waits for the fetch's translation */
		hold(c, d, done, ftr, fdt);
		return;
	}
	if (dep) {
		/* the event the R_DEP registered: the youngest (nothing came between) */
		e = ev_at(c, c->n - 1);
		if (done > e->c) {
			e->c = done;
			e->ftr = ftr;
			e->fdt = fdt;
			retire_time(c, e, c->n > 1 ? ev_at(c, c->n - 2) : &c->front);
		}
		if (c->dep_sb) {
			double drain = e->r > done ? e->r : done;
			size_t y = (c->sb_head + c->sb_n - 1) & c->sb_mask;

			if (drain > c->sb[y])
				c->sb[y] = c->sb_last = drain;
		}
		if (!ref->write || ref->modify)
			e->load = true;
		return;
	}
	{
		struct core_ev prev = *youngest(c); /* (a copy: push() may move the ring) */

		e = push(c);
		e->insn = insn;
		e->seq = loads;
		e->load = !ref->write || ref->modify;
		/* a store retires once translated; a modify's load needs the data */
		e->c = store && !ref->modify ? tr_end : done;
		e->ftr = ftr;
		e->fdt = fdt;
		retire_time(c, e, &prev);
	}
	if (store)
		sb_add(c, e->r > done ? e->r : done, ftr);
}

void core_dep(struct core *c, uint64_t insn, cycles_t serial, uint64_t loads, uint64_t dord,
	      uint64_t d, bool next_load, bool next_store)
{
	const struct core_ev *p = NULL;
	uint64_t target;
	double now;
	struct core_ev *e;

	c->dep_live = false;
	loads += c->ld_base;
	dord += c->dr_base;
	if (d == 0 || d > loads)
		return; /* no such load: independent */
	target = loads - d + 1;
	advance(c, insn, serial);
	for (size_t i = c->n; i-- > 0;) {
		const struct core_ev *q = ev_at(c, i);

		if (q->seq < target)
			break;
		if (q->seq == target && q->load) {
			p = q;
			break;
		}
	}
	if (!p && c->front.seq == target && c->front.load)
		p = &c->front;
	now = clock_at(c, insn);
	if (!p || p->c <= now)
		return; /* it completed (or hit, at its dispatch): no wait */
	if (next_store)
		sb_make_room(c, insn);
	now = clock_at(c, insn);
	c->dep_live = true;
	c->dep_ord = dord + 1;
	c->dep_p = p->c;
	{
		float ftr = p->ftr, fdt = p->fdt;
		struct core_ev prev = *youngest(c); /* (a copy: push() may move the ring) */

		/* the producer's own shares of its latency stand for the wait */
		c->dep_ftr = ftr;
		c->dep_fdt = fdt;
		e = push(c);
		e->insn = insn;
		e->seq = loads + (next_load ? 1 : 0);
		e->load = next_load;
		e->c = c->dep_p;
		e->ftr = ftr;
		e->fdt = fdt;
		retire_time(c, e, &prev);
	}
	c->dep_sb = next_store;
	if (next_store)
		sb_add(c, e->r, e->ftr);
}

cycles_t core_now(const struct core *c, uint64_t insn, cycles_t serial)
{
	double t = clock_at(c, insn) + (serial > c->serial_seen ? (double)(serial - c->serial_seen) : 0);

	return cycles_of(t);
}

void core_reset(struct core *c, uint64_t insn, cycles_t serial, uint64_t loads, uint64_t dord)
{
	advance(c, insn, serial); /* the stretch starts at the dispatch clock as it stands */
	c->serial_seen = 0;
	c->ld_base += loads;
	c->dr_base += dord;
	c->t0 = clock_at(c, insn);
	c->st_tr = c->st_data = 0;
}

void core_end(struct core *c, uint64_t insn, cycles_t serial, cycles_t *total, cycles_t *st_tr,
	      cycles_t *st_data)
{
	const struct core_ev *y;
	double d, r;

	advance(c, insn, serial);
	d = clock_at(c, insn);
	y = youngest(c);
	r = y->r + (double)(insn - y->insn) * c->ret_step;
	hold(c, d, r, y->ftr, y->fdt); /* the wait for the last instruction to retire */
	if (r < d)
		r = d;
	c->n = 0;
	c->dep_live = false;
	*total = cycles_of(r - c->t0 + 0.5);
	*st_tr = cycles_of(c->st_tr + 0.5);
	*st_data = cycles_of(c->st_data + 0.5);
}
