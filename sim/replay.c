/*
 * replay.c - the replay loop: records in, MMU lookups and kernel events out.
 *
 * Readers hand over batches of decoded records (trace.h); nothing here parses.
 * The loop is the hottest code of the simulator (on the validation trace about
 * four fifths of the simulator's instructions are spent in it and in the inline
 * lookup it calls), so it is built around what a trace mostly is: the same
 * page, again, on the same side.
 *
 * Notes on the optimisation, from the inside out:
 *
 *  - The per-side memo (mmu.h mmu_access_inline()). Each side (I, D) remembers
 *    the page of its last L1 hit. A repeat of it is a hit on the entry that is
 *    already its set's MRU, which changes no replacement state under lru, fifo,
 *    plru or random, so the lookup is one compare and one counter increment
 *    (memo_hits, folded into the L1 hit count of the memo's page size later).
 *    Else the MRU way of the 4K array's set answers most of the rest inline;
 *    everything else is out of line (mmu_access_slow()). access_bytes() is
 *    forced inline with the lookup: gcc otherwise outlines mmu_access and the
 *    per-reference call costs 25 % more instructions (callgrind: 401M vs 320M).
 *
 *  - One record, one kind test (run_one()): I, L, S go through one
 *    well-predicted test before M, events and instruction counts (perf: -18 %
 *    cycles against a switch on the mtr trace). A reference that crosses a 4 KiB
 *    boundary takes the cold access_crossing().
 *
 *  - The batch summary (sim_batch_summarize(), for sweeps and --modes, where N
 *    simulators replay one batch). What does not depend on a simulator's state
 *    is done once per batch instead of N times: the records become an op stream
 *    of one uint64_t per access (address and kind in the top two bits: no
 *    decoding, no crossing test, no per-kind counting in the simulators), and
 *    runs of records that repeat each side's last page become one op carrying
 *    their hit counts per side. A simulator applies a run as three additions
 *    after checking that its memo really holds those pages (and, for a run with
 *    stores, that the translation is writable); else it replays the run record
 *    by record. Events and crossing references stay records; a dependence
 *    (R_DEP) is only counted: it makes no op and does not end a run. On the validation
 *    trace 31 % of the records become ops, 12 % runs. The counts are exactly
 *    those of sim_run_batch() (tests/check_sim.c compares them).
 *
 *  - Background work (khugepaged, the timeline) is tested once per batch against
 *    simulated time (batch_end(), sim_now()), not per record.
 *
 * Leaves out: nothing of the model; this file only decides how fast the same
 * counts are reached.
 */
#include <stdlib.h>
#include <string.h>

#include "khugepaged.h"
#include "mmap.h"
#include "mmu.h"
#include "sim.h"

/* The replay loop stopped at record @idx of the batch: name it, return -1 with @e. */
static __attribute__((cold, noinline)) int fail_at(struct sim *s, uint64_t idx, struct err *e);

int sim_batch_fail(struct sim *s, uint64_t idx, struct err *e)
{
	return fail_at(s, idx, e);
}

static int fail_at(struct sim *s, uint64_t idx, struct err *e)
{
	if (s->k.fail_msg[0])
		err_set(&s->k.err, s->k.trace_name, 0, 0, "record %llu: %s",
			(unsigned long long)(s->k.rec_no + idx + 1), s->k.fail_msg);
	s->k.rec_no += idx;
	*e = s->k.err;
	return -1;
}

/* mmu_access() for the store of a modify (the timing hook tells it from a store). */
static inline __attribute__((always_inline)) void access_modify(struct mmu *m, vaddr_t va)
{
	if (!mmu_access_inline(m, va, SIDE_D, true, true))
		mmu_access_slow_modify(m, va);
}

/* A reference crossing 4 KiB boundaries: one lookup per page it touches (rare). */
static __attribute__((cold, noinline)) void access_crossing(struct mmu *m, vaddr_t va, uint32_t size,
							     enum tlb_side side, bool write, bool modify)
{
	for (vaddr_t p = va, last = va + size - 1;; p = (p & ~(PAGE_SIZE - 1)) + PAGE_SIZE) {
		if (modify)
			access_modify(m, p);
		else
			mmu_access(m, p, side, write);
		if ((p >> PAGE_SHIFT) == (last >> PAGE_SHIFT) || p + PAGE_SIZE < p)
			break;
	}
}

/*
 * A reference of @size bytes: one lookup per 4 KiB page it touches. Forced inline
 * with mmu_access(): gcc otherwise outlines mmu_access, and the per-reference call
 * costs 25% more simulator instructions on the validation trace (callgrind:
 * 401M with the call, 320M without).
 */
static inline __attribute__((always_inline)) void access_bytes(struct mmu *m, vaddr_t va, uint32_t size,
								enum tlb_side side, bool write)
{
	if (likely((va & (PAGE_SIZE - 1)) + size <= PAGE_SIZE))
		mmu_access(m, va, side, write);
	else
		access_crossing(m, va, size, side, write, false);
}

/* access_bytes() for the store of a modify. */
static inline __attribute__((always_inline)) void access_bytes_modify(struct mmu *m, vaddr_t va,
								       uint32_t size)
{
	if (likely((va & (PAGE_SIZE - 1)) + size <= PAGE_SIZE))
		access_modify(m, va);
	else
		access_crossing(m, va, size, SIDE_D, true, true);
}

/* One record (the loop body of sim_run_batch). */
static inline __attribute__((always_inline)) void run_one(struct sim *s, const struct trace_batch *b,
							  const struct trace_rec *r)
{
	uint32_t k = r->kind;

	s->nrec[k]++;
	/*
	 * I, L, S without a switch: the kinds interleave irregularly, and one
	 * well-predicted test beats an indirect jump (perf: -18% cycles on mtr).
	 */
	if (likely(k <= R_STORE)) {
		access_bytes(&s->mmu, r->addr, r->size, k != R_IFETCH, k == R_STORE);
	} else if (k == R_MODIFY) {
		/* the store first: a read-modify-write faults as one write (see DESIGN.md) */
		access_bytes_modify(&s->mmu, r->addr, r->size);
		access_bytes(&s->mmu, r->addr, r->size, SIDE_D, false);
	} else if (k == R_EVENT) {
		s->k.rec_no += (uint64_t)(r - b->recs);
		sim_event(s, &b->ev[r->size]);
		s->k.rec_no -= (uint64_t)(r - b->recs);
	} else if (k == R_INSNS) {
		s->st.instructions += r->size;
	} else if (k == R_TOUCH) {
		roi_touch(s, r->addr, (enum touch_how)r->size); /* the kernel only, uncounted */
	} else if (k == R_DEP) {
		/* a dependence: the additive core has no use for it; the overlap core's (sim.c) */
		if (unlikely(s->mmu.timing != NULL))
			sim_dep(s, r + 1 < b->recs + b->n ? r + 1 : NULL, r->size);
	} else {
		BUG_ON(1);
	}
}

static int batch_end(struct sim *s, const struct trace_batch *b, struct err *e);

/* The R_DEP that ended the previous batch qualifies @b's first record. */
static __attribute__((cold, noinline)) void dep_carried(struct sim *s, const struct trace_batch *b)
{
	uint64_t d = s->dep_carry;

	s->dep_carry = 0;
	sim_dep(s, &b->recs[0], d);
}

int sim_run_batch(struct sim *s, const struct trace_batch *b, struct err *e)
{
	const struct trace_rec *r = b->recs, *end = b->recs + b->n;

	s->batch_cur = s->cur; /* whose touches the batch's first records are */
	if (unlikely(s->dep_carry) && b->n) /* an R_DEP ended the last batch: this is its reference */
		dep_carried(s, b);
	if (unlikely(s->roi.active)) /* a region of interest with a cut ahead (roi.c) */
		return roi_run_batch(s, b, e);
	for (; r < end; r++) {
		run_one(s, b, r);
		if (unlikely(s->k.failed))
			return fail_at(s, (uint64_t)(r - b->recs), e);
	}
	return batch_end(s, b, e);
}

int sim_run_range(struct sim *s, const struct trace_batch *b, size_t from, size_t to, struct err *e)
{
	for (const struct trace_rec *r = b->recs + from, *end = b->recs + to; r < end; r++) {
		run_one(s, b, r);
		if (unlikely(s->k.failed))
			return fail_at(s, (uint64_t)(r - b->recs), e);
	}
	return 0;
}

int sim_batch_end(struct sim *s, const struct trace_batch *b, struct err *e)
{
	return batch_end(s, b, e);
}

/*
 * The ops of a batch summary, one uint64_t each. An access is its address (below
 * 2^57, trace.h) with its kind in the top two bits. BOP_OTHER ops are either a
 * run (BOP_SEG: its memo hits per side in bits 0-15 and 16-31, which sides it
 * touches, and whether the next word counts R_INSNS instructions in it) or a
 * record to replay (its index in the low 32 bits). A run touches, on each side,
 * the page of the side's last access op, so the op need not say which.
 */
#define BOP_SHIFT 62
#define BOP_IFETCH 0ULL
#define BOP_LOAD 1ULL
#define BOP_STORE 2ULL
#define BOP_OTHER 3ULL
#define BOP_SEG (1ULL << 32)
#define BOP_SEG_I (1ULL << 33)      /* the run has ifetches */
#define BOP_SEG_D (1ULL << 34)      /* the run has data references */
#define BOP_SEG_INSNS (1ULL << 35)  /* the next word: R_INSNS instructions in the run */
#define BOP_SEG_W (1ULL << 36)      /* the run has stores: the D memo must be writable */
#define BOP_ADDR_MASK ((1ULL << BOP_SHIFT) - 1)

/*
 * The records of kinds R_IFETCH..R_MODIFY, counted in one register: kind k adds
 * 1 << (16 k) (a batch has at most TRACE_BATCH < 2^16 records of a kind). A run's
 * counts are the difference across it -- no per-kind counters in memory, whose
 * increments chain through store forwarding.
 */
#define PK_COUNT(pk, k) ((uint32_t)((pk) >> (16 * (k))) & 0xffff)

/* The run op for the access records counted by @pk (a difference of PK counts). */
static inline uint64_t seg_op(uint64_t pk)
{
	uint64_t ci = PK_COUNT(pk, R_IFETCH), cd = PK_COUNT(pk, R_LOAD) + PK_COUNT(pk, R_STORE),
		 cm = PK_COUNT(pk, R_MODIFY);

	/* hits: I <= TRACE_BATCH, D <= 2 TRACE_BATCH (an M counts twice): 16 bits each */
	return BOP_OTHER << BOP_SHIFT | BOP_SEG | (ci ? BOP_SEG_I : 0) | (cd + cm ? BOP_SEG_D : 0) |
	       (PK_COUNT(pk, R_STORE) + cm ? BOP_SEG_W : 0) | (cd + 2 * cm) << 16 | ci;
}

void sim_batch_summary_free(struct batch_summary *sum)
{
	free(sum->op);
	free(sum->op_rec);
	memset(sum, 0, sizeof(*sum));
}

/* Room for the ops of @n records: at most two (an M, a run and its R_INSNS) per record. */
static int summary_reserve(struct batch_summary *sum, size_t n)
{
	if (sum->cap_op < 2 * n) {
		uint64_t *o = realloc(sum->op, 2 * n * sizeof(*o));
		uint16_t *orec = o ? realloc(sum->op_rec, 2 * n * sizeof(*orec)) : NULL;

		if (o)
			sum->op = o;
		if (!orec)
			return -1;
		sum->op_rec = orec;
		sum->cap_op = 2 * n;
	}
	return 0;
}

int sim_batch_summarize(const struct trace_batch *b, struct batch_summary *sum)
{
	/*
	 * rep[k]: the page a record of kind k repeats on -- the side's last page
	 * (VPN_NONE: nothing repeats). A store repeats too: the simulator applies a
	 * run with stores only if its memo's translation is writable, else (the
	 * zero page, before its first write) it replays the run.
	 */
	uint64_t rep[4] = { VPN_NONE, VPN_NONE, VPN_NONE, VPN_NONE };
	static const uint64_t pk_one[4] = { 1, 1ULL << 16, 1ULL << 32, 1ULL << 48 };
	uint64_t pk = 0, pk0 = 0;   /* access records so far, and before the open run (PK_COUNT) */
	uint64_t *op, *cur = NULL;  /* the open run's op */
	uint64_t *cur_insns = NULL; /* its R_INSNS word, if it has one */
	uint16_t *op_rec;           /* 16 bits: a record's index in its batch (the assertion below) */
	uint32_t nseg = 0;
	/* locals: the output stores could alias *b as far as gcc knows */
	const struct trace_rec *recs = b->recs;
	size_t n = b->n;

	_Static_assert(TRACE_BATCH < 1 << 15, "a run's D hits fit 16 bits, kind counts 16 bits");
	if (n > TRACE_BATCH)
		return -1; /* not from a reader: the caller replays it plainly */
	if (summary_reserve(sum, n))
		return -1;
	op = sum->op;
	op_rec = sum->op_rec;
	memset(sum->kinds, 0, sizeof(sum->kinds));
	sum->insns = 0;
	for (const struct trace_rec *r = recs, *end = recs + n; r < end; r++) {
		uint32_t k = r->kind, i;

		if (likely(k <= R_MODIFY)) {
			uint64_t vpn = r->addr >> PAGE_SHIFT;
			bool cross = (r->addr & (PAGE_SIZE - 1)) + r->size > PAGE_SIZE;

			pk += pk_one[k];
			if (vpn == rep[k] && likely(!cross)) {
				if (!cur) {
					i = (uint32_t)(r - recs);
					cur = op++;
					*op_rec++ = (uint16_t)i;
					cur_insns = NULL;
					pk0 = pk - pk_one[k];
					nseg++;
				}
				continue;
			}
			i = (uint32_t)(r - recs);
			if (cur) {
				*cur = seg_op(pk - pk_one[k] - pk0) | (cur_insns ? BOP_SEG_INSNS : 0);
				cur = NULL;
			}
			if (unlikely(cross || r->addr > BOP_ADDR_MASK)) {
				/* replayed; the memo then ends elsewhere: no run on this side */
				*op++ = BOP_OTHER << BOP_SHIFT | i;
				*op_rec++ = (uint16_t)i;
				vpn = VPN_NONE;
			} else if (k == R_MODIFY) {
				op[0] = BOP_STORE << BOP_SHIFT | r->addr; /* as run_one() */
				op[1] = BOP_LOAD << BOP_SHIFT | r->addr;
				op += 2;
				op_rec[0] = op_rec[1] = (uint16_t)i;
				op_rec += 2;
			} else {
				*op++ = (uint64_t)k << BOP_SHIFT | r->addr; /* R_IFETCH.. R_STORE == BOP_* */
				*op_rec++ = (uint16_t)i;
			}
			if (k == R_IFETCH) {
				rep[R_IFETCH] = vpn;
			} else {
				rep[R_LOAD] = vpn;
				rep[R_STORE] = rep[R_MODIFY] = vpn; /* a run's stores: BOP_SEG_W */
			}
		} else if (k == R_DEP) {
			/*
			 * No op: the additive core does nothing with a dependence (the
			 * overlap core never takes the summary, sim_set_plain()), so it
			 * neither opens nor closes a run. Counted here; a run replayed
			 * record by record replays it with the rest of its range.
			 */
			sum->kinds[R_DEP]++;
		} else {
			i = (uint32_t)(r - recs);
			sum->kinds[k]++;
			if (k == R_INSNS) {
				sum->insns += r->size;
				if (cur) { /* folds into an open run (its ops are the last ones); never opens one */
					if (!cur_insns) {
						cur_insns = op++;
						*cur_insns = 0;
						*op_rec = op_rec[-1]; /* the run's first record */
						op_rec++;
					}
					*cur_insns += r->size;
					continue;
				}
			} else if (cur) {
				*cur = seg_op(pk - pk0) | (cur_insns ? BOP_SEG_INSNS : 0);
				cur = NULL;
			}
			*op++ = BOP_OTHER << BOP_SHIFT | i;
			*op_rec++ = (uint16_t)i;
			if (k == R_EVENT || k == R_TOUCH) /* (a touch may COW a page: flushed) */
				rep[0] = rep[1] = rep[2] = rep[3] = VPN_NONE;
		}
	}
	if (cur)
		*cur = seg_op(pk - pk0) | (cur_insns ? BOP_SEG_INSNS : 0);
	for (int k = R_IFETCH; k <= R_MODIFY; k++)
		sum->kinds[k] = PK_COUNT(pk, k);
	sum->nop = (size_t)(op - sum->op);
	sum->n = nseg;
	return 0;
}
int sim_run_batch_summarized(struct sim *s, const struct trace_batch *b,
			     const struct batch_summary *sum, struct err *e)
{
	uint64_t nrec0[R_KIND_NR], insns0 = s->st.instructions;
	/*
	 * The page of each side's last access op: the page a run on that side
	 * repeats. VPN_NONE after a replayed record that may move the memo (the
	 * summary then opens no run on that side before the next access op).
	 */
	uint64_t lastop[2] = { VPN_NONE, VPN_NONE };

	if (!sum || s->plain) /* data_refs, or a region of interest's cut ahead */
		return sim_run_batch(s, b, e);
	s->batch_cur = s->cur;
	memcpy(nrec0, s->nrec, sizeof(nrec0));
	/* locals: gcc cannot tell that the simulator's stores leave *sum alone */
	const uint64_t *ops = sum->op;
	size_t nop = sum->nop;

	for (size_t i = 0; i < nop; i++) {
		uint64_t op = ops[i], ty = op >> BOP_SHIFT;
		vaddr_t va = op & BOP_ADDR_MASK;

		/*
		 * Each kind its own call: side and write stay constants in mmu_access()
		 * (one path with them as data mispredicts more: 8 points 89 -> 101 ms).
		 * Only the slow path can fail (a fault), so only it is tested.
		 */
		if (ty == BOP_LOAD) {
			lastop[SIDE_D] = va >> PAGE_SHIFT;
			if (likely(mmu_access_inline(&s->mmu, va, SIDE_D, false, false)))
				continue;
			mmu_access_slow(&s->mmu, va, SIDE_D, false);
		} else if (ty == BOP_IFETCH) {
			lastop[SIDE_I] = va >> PAGE_SHIFT;
			s->st.instructions++; /* sim_now() adds it; the counts come at the end */
			if (likely(mmu_access_inline(&s->mmu, va, SIDE_I, false, false)))
				continue;
			mmu_access_slow(&s->mmu, va, SIDE_I, false);
		} else if (ty == BOP_STORE) {
			lastop[SIDE_D] = va >> PAGE_SHIFT;
			if (likely(mmu_access_inline(&s->mmu, va, SIDE_D, true, false)))
				continue;
			mmu_access_slow(&s->mmu, va, SIDE_D, true);
		} else if (op & BOP_SEG) {
			size_t at = i;
			uint64_t insns = op & BOP_SEG_INSNS ? ops[++i] : 0;

			/*
			 * Every record of the run a memo hit, if this simulator's memo holds
			 * those pages; else (no L1 array of that size, a flush, ...) it is
			 * replayed record by record. The asm keeps gcc from adding the two
			 * sides' hits as one 16-byte vector: loading that right after
			 * mmu_access()'s 8-byte increments stalls store forwarding (perf: a
			 * fifth of an 8-point sweep's cycles).
			 */
			if ((!(op & BOP_SEG_I) ||
			     (lastop[SIDE_I] != VPN_NONE && lastop[SIDE_I] == s->mmu.last_vpn[SIDE_I])) &&
			    (!(op & BOP_SEG_D) ||
			     (lastop[SIDE_D] != VPN_NONE && lastop[SIDE_D] == s->mmu.last_vpn[SIDE_D])) &&
			    (!(op & BOP_SEG_W) || !(s->mmu.last_pfn[SIDE_D] & TLB_RO))) {
				s->mmu.memo_hits[SIDE_I] += op & 0xffff;
				__asm__("" : "+m"(s->mmu.memo_hits[SIDE_I]));
				s->mmu.memo_hits[SIDE_D] += (op >> 16) & 0xffff;
				s->st.instructions += (op & 0xffff) + insns;
				continue;
			}
			/* the run's records: from its first to the next op's record */
			for (uint32_t j = sum->op_rec[at], end = i + 1 < nop ? sum->op_rec[i + 1] : (uint32_t)b->n;
			     j < end; j++) {
				run_one(s, b, &b->recs[j]);
				if (unlikely(s->k.failed))
					return fail_at(s, j, e);
			}
		} else {
			const struct trace_rec *r = &b->recs[(uint32_t)op];

			if (r->kind != R_INSNS)
				lastop[SIDE_I] = lastop[SIDE_D] = VPN_NONE;
			run_one(s, b, r);
		}
		if (unlikely(s->k.failed))
			return fail_at(s, sum->op_rec[i], e);
	}
	/* the whole batch ran: every record counted once, by kind */
	for (int k = 0; k < R_KIND_NR; k++)
		s->nrec[k] = nrec0[k] + sum->kinds[k];
	s->st.instructions = insns0 + sum->insns;
	return batch_end(s, b, e);
}

/*
 * sim_run_batch() with every L1 lookup handed to @fn, which makes it (with
 * mmu_access()): the lookups of run_one() in its order -- one per 4 KiB page a
 * reference touches, an M's store before its load -- and the same events,
 * instruction counts, failures and background work. For observers of the lookup
 * stream (mrc.c); not the hot path.
 */
int sim_run_batch_with(struct sim *s, const struct trace_batch *b, sim_lookup_fn fn, void *ctx,
		       struct err *e)
{
	s->batch_cur = s->cur; /* whose stores and touches the batch's first records are */
	for (size_t i = 0; i < b->n; i++) {
		const struct trace_rec *r = &b->recs[i];
		uint32_t k = r->kind;
		int nacc = k == R_MODIFY ? 2 : k <= R_STORE ? 1 : 0;

		s->nrec[k]++;
		for (int j = 0; j < nacc; j++) {
			enum tlb_side side = k == R_IFETCH ? SIDE_I : SIDE_D;
			bool write = k == R_STORE || (k == R_MODIFY && j == 0);
			vaddr_t last = r->addr + r->size - 1;

			for (vaddr_t p = r->addr;; p = (p & ~(PAGE_SIZE - 1)) + PAGE_SIZE) {
				fn(ctx, s, p, side, write);
				if ((p >> PAGE_SHIFT) == (last >> PAGE_SHIFT) || p + PAGE_SIZE < p ||
				    s->k.failed)
					break;
			}
		}
		if (k == R_EVENT) {
			s->k.rec_no += i;
			sim_event(s, &b->ev[r->size]);
			s->k.rec_no -= i;
		} else if (k == R_INSNS) {
			s->st.instructions += r->size;
		} else if (k == R_TOUCH) {
			roi_touch(s, r->addr, (enum touch_how)r->size);
		} else {
			BUG_ON(k > R_MODIFY && k != R_DEP);
		}
		if (unlikely(s->k.failed))
			return fail_at(s, i, e);
	}
	return batch_end(s, b, e);
}

/* After a batch: rec_no, the timeline and khugepaged (simulated time). */
static int batch_end(struct sim *s, const struct trace_batch *b, struct err *e)
{
	s->k.rec_no += b->n;
	if (unlikely(s->timeline))
		sim_timeline_due(s);
	if (unlikely(s->virt != NULL) && virt_tick(s)) {
		*e = s->k.err;
		return -1;
	}
	/* several processes: who touched which pages (bloat), a pass after the batch */
	if (unlikely(s->track_touched) && sim_touched_batch(s, b)) {
		*e = s->k.err;
		return -1;
	}
	/* page contents for the kernel (6.12+: zero-filled pages), a pass after the batch */
	if (unlikely(s->k.thp.track_written))
		sim_written_batch(s, b);
	/* background work due by simulated time: one test per batch */
	if (unlikely(s->k.thp.mm_registered) && sim_now(s) >= s->k.khugepaged.next_wake) {
		cycles_t now = sim_now(s);

		while (now >= s->k.khugepaged.next_wake && !s->k.failed) {
			cycles_t w = s->k.khugepaged.next_wake;

			/* a long stretch of simulated time: many passes; a signal ends them
			 * (the pool then stops before the next batch) */
			if (s->stop && *s->stop)
				break;

			khugepaged_do_scan(&s->k);
			if (s->k.khugepaged.next_wake == w)
				break; /* a sleep of 0 ms: one pass per batch */
		}
		if (s->k.failed) {
			*e = s->k.err;
			return -1;
		}
	}
	return 0;
}
