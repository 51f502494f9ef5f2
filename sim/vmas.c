/*
 * vmas.c - the per-mapping breakdown (run --vmas, the report's "vmas"): which
 * mapping the TLB misses, walks, faults and THP events of a run belong to, in
 * the spirit of /proc/PID/smaps (fs/proc/task_mmu.c show_smap()).
 *
 * What a row is. smaps lists the VMAs of the moment; a run's VMAs come and go
 * (munmap, mremap, mprotect and madvise split them, vma_merge() joins
 * neighbours), and what a researcher asks is "which of my allocations took the
 * misses". So a row is a mapping identity: one mmap call (a file or anonymous
 * mapping, MAP_STACK, MAP_HUGETLB), the brk heap (one row however often it
 * grows), or one implicit region (fault.c). Its pieces split by mprotect or
 * madvise stay one row (their counts summed); a mapping unmapped before the
 * end stays a row with size 0 and what it counted; mremap moves it, growing it
 * in place extends it. A MAP_FIXED mmap over part of a mapping takes that part
 * (from then on) as a new row. Row 0, "[none]", is what touched no mapping:
 * the access whose fault the run could not serve.
 *
 * Charging: a counter is charged to the mapping holding the address at the
 * time of the event, so the rows sum exactly to the run's totals
 * (tests/check_vmas.c):
 *  - the kernel's events (pgfault, pgmajfault, thp_fault_alloc,
 *    thp_fault_fallback, thp_split_pmd, thp_split_page, thp_collapse_alloc)
 *    are counted where the kernel model counts them (vmas_count());
 *  - the MMU's (L1 iTLB and dTLB misses, STLB misses, walks, walk cycles) as
 *    deltas: the MMU calls vmas_window() on an L1 miss outside the window
 *    [win_lo, win_lo + win_len) (mmu.h), which charges what the MMU counted
 *    since the last call to the record that owned the window, then makes the
 *    window the extent holding the new address. The hot path pays one
 *    subtraction and one comparison per L1 miss, nothing per L1 hit. Any change
 *    to the extents charges first and closes the window. A window change finds
 *    the extent in a cache without a search (wc_find()) and charges only when
 *    the record changes: on a GUPS-style trace whose references fall in 32
 *    implicit 2 MiB regions (a change on every L1 miss) it costs 65
 *    instructions, against 150 for a search and a charge (callgrind).
 *  - rss_bytes and huge_bytes: the page table's leaves at the end, each to its
 *    mapping, counted as memory.rss_bytes and memory.huge_bytes are (anonymous
 *    4K pages, THPs, hugetlb pages; not the zero pages, not page-cache pages).
 *
 * THP eligibility (thp_no, smaps' THPeligible) is khugepaged_thp_ineligible()'s
 * verdict on the mapping's lowest live VMA at the end.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "filemap.h"
#include "khugepaged.h"
#include "kernel.h"
#include "stats.h"
#include "thp.h"
#include "vmas.h"
#include "util.h"

/*
 * The MMU's counters the rows take, summed over page sizes by hand: a window
 * change on every L1 miss (a GUPS-style trace in 2 MiB implicit regions) made
 * the loops over sizes 70 instructions a flush (callgrind).
 */
static inline void mmu_counts(const struct mmu *m, uint64_t now[VH_NR])
{
	const struct mmu_stats *st = &m->st;

	_Static_assert(PS_NR == 3, "mmu_counts() sums three page sizes");
	now[VH_ITLB_MISSES] = st->l1[SIDE_I].misses[PS_4K] + st->l1[SIDE_I].misses[PS_2M] +
			      st->l1[SIDE_I].misses[PS_1G];
	now[VH_DTLB_MISSES] = st->l1[SIDE_D].misses[PS_4K] + st->l1[SIDE_D].misses[PS_2M] +
			      st->l1[SIDE_D].misses[PS_1G];
	now[VH_STLB_MISSES] = st->stlb.misses;
	now[VH_WALKS] = st->walks;
	now[VH_WALK_CYCLES] = st->walk_cycles;
}

/*
 * What the MMU counted since the last charge, to the current record. Straight
 * line, the deltas taken before any store: as a loop gcc reloaded each
 * snapshot after each store (r->hw may alias it), 125 instructions a window
 * change on the GUPS-style trace in 4 KiB implicit regions (callgrind).
 */
static inline void charge(struct kernel *k)
{
	struct vmas_acct *a = &k->mm->vacct;
	uint64_t *hw = a->rec[a->cur].hw, now[VH_NR], d[VH_NR];

	mmu_counts(k->cpu, now);
	_Static_assert(VH_NR == 5, "charge() takes five counters");
	d[0] = now[0] - a->snap[0];
	d[1] = now[1] - a->snap[1];
	d[2] = now[2] - a->snap[2];
	d[3] = now[3] - a->snap[3];
	d[4] = now[4] - a->snap[4];
	memcpy(a->snap, now, sizeof(now));
	hw[0] += d[0];
	hw[1] += d[1];
	hw[2] += d[2];
	hw[3] += d[3];
	hw[4] += d[4];
}

void vmas_flush(struct kernel *k)
{
	charge(k);
}

void vmas_reset_counts(struct kernel *k)
{
	if (k->active_mm->vacct.rec) {
		struct mm *cur = kernel_use_mm(k, k->active_mm);

		vmas_flush(k);
		kernel_use_mm(k, cur);
	}
	for (struct mm *mm = k->mms; mm; mm = mm->next) {
		struct vmas_acct *a = &mm->vacct;

		for (size_t i = 0; i < a->nrec; i++) {
			memset(a->rec[i].hw, 0, sizeof(a->rec[i].hw));
			memset(a->rec[i].ev, 0, sizeof(a->rec[i].ev));
		}
		memset(a->snap, 0, sizeof(a->snap)); /* the MMU's counters restart from 0 too */
	}
}

/* Index of the first of the @n extents @e ending after @va (@n if none). */
static size_t ext_after(const struct vext *e, size_t n, vaddr_t va)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e[mid].end > va)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * The extent holding @va, or the gap around it (record 0: [none] until a
 * mapping appears in it), into *@w: a search of ext and of pend, O(log n).
 */
static void ext_find(const struct kernel *k, vaddr_t va, struct vwin *w)
{
	const struct vmas_acct *a = &k->mm->vacct;
	size_t i = ext_after(a->ext, a->next, va), j = ext_after(a->pend, a->npend, va);
	vaddr_t lo = 0, hi = k->va_limit;

	if (i < a->next && a->ext[i].start <= va) {
		*w = (struct vwin){ a->ext[i].start, a->ext[i].end - a->ext[i].start, a->ext[i].rec, 0 };
		return;
	}
	if (j < a->npend && a->pend[j].start <= va) {
		*w = (struct vwin){ a->pend[j].start, a->pend[j].end - a->pend[j].start, a->pend[j].rec, 0 };
		return;
	}
	if (i)
		lo = a->ext[i - 1].end;
	if (j && a->pend[j - 1].end > lo)
		lo = a->pend[j - 1].end;
	if (i < a->next)
		hi = a->ext[i].start;
	if (j < a->npend && a->pend[j].start < hi)
		hi = a->pend[j].start;
	*w = (struct vwin){ lo, hi - lo, 0, 0 };
}

/*
 * The window cache: a look-up of the extent holding an address, answered
 * without a search when a mapping's window was found before. Two sets of
 * slots may hold the answer for @va: its 2 MiB block's (a window of 64 KiB or
 * more: mappings, the implicit regions of the default granule; at most 32 of
 * them share a block, mostly one or two) and its 4 KiB page's (a smaller one:
 * the 4 KiB implicit regions of os.profile osless). An entry holds while its generation is current: a
 * removal of address space (munmap, mremap, MAP_FIXED) bumps the generation;
 * a new mapping changes no mapping's extent (it fills a gap, and gaps are not
 * cached). Mapped windows only: a look-up in a gap precedes the fault that
 * maps it. Two ways a set, four to eight slots per extent (the table grows with the
 * mappings, which grow with the pages touched).
 */
#define WC_BLOCK_SHIFT 21
#define WC_BIG (64ULL << 10) /* a window this big takes its block's slot */
#define WC_MIN 256

static inline size_t wc_hash(const struct vmas_acct *a, uint64_t key)
{
	/* Fibonacci hashing: bits of the product; even, the first of the set's two ways */
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 40) & a->wc_mask & ~(size_t)1;
}

static inline size_t wc_block_slot(const struct vmas_acct *a, vaddr_t va)
{
	return wc_hash(a, (va >> WC_BLOCK_SHIFT) << 1 | 1);
}

static inline size_t wc_page_slot(const struct vmas_acct *a, vaddr_t va)
{
	return wc_hash(a, (va >> PAGE_SHIFT) << 1);
}

static inline bool wc_holds(const struct vmas_acct *a, const struct vwin *w, vaddr_t va)
{
	return w->gen == a->gen && va - w->lo < w->len;
}

/* The cached window holding @va, or NULL. Two ways a slot (even, odd): the most recent first. */
static inline const struct vwin *wc_find(const struct vmas_acct *a, vaddr_t va)
{
	const struct vwin *w;

	if (unlikely(!a->wc))
		return NULL;
	w = &a->wc[wc_block_slot(a, va)];
	if (wc_holds(a, w, va))
		return w;
	if (wc_holds(a, w + 1, va))
		return w + 1;
	w = &a->wc[wc_page_slot(a, va)];
	if (wc_holds(a, w, va))
		return w;
	if (wc_holds(a, w + 1, va))
		return w + 1;
	return NULL;
}

/* Put @w (a current window of a mapping) in the set of @va's block or page. */
static void wc_insert(struct vmas_acct *a, vaddr_t va, const struct vwin *w)
{
	struct vwin *slot = &a->wc[w->len >= WC_BIG ? wc_block_slot(a, va) : wc_page_slot(a, va)];

	if (slot->gen == a->gen)
		slot[1] = slot[0]; /* the set's older way goes */
	*slot = *w;
	slot->gen = a->gen;
}

/* Remember @w, the window of a mapping found for @va (host OOM: not remembered). */
static void wc_put(struct vmas_acct *a, vaddr_t va, const struct vwin *w)
{
	size_t want = 4 * (a->next + a->npend);

	if (a->nocache)
		return;
	if (!a->wc || want > a->wc_mask + 1) {
		size_t n = WC_MIN, old = a->wc ? a->wc_mask + 1 : 0;
		struct vwin *t, *o = a->wc;

		while (n < want)
			n *= 2;
		t = calloc(n, sizeof(*t)); /* generation 0: no entry */
		if (!t)
			return;
		a->wc = t;
		a->wc_mask = n - 1;
		/* the current entries move over (older way first, so each set keeps its order) */
		for (size_t i = 0; i < old; i += 2)
			for (int kk = 1; kk >= 0; kk--)
				if (o[i + kk].gen == a->gen)
					wc_insert(a, o[i + kk].lo, &o[i + kk]);
		free(o);
	}
	wc_insert(a, va, w);
}

/* Address space went away: every cached window may be stale. */
static void wc_invalidate(struct vmas_acct *a)
{
	if (++a->gen == 0) { /* wrapped: entries of generation 1 may be 2^32 removals old */
		if (a->wc)
			memset(a->wc, 0, (a->wc_mask + 1) * sizeof(*a->wc));
		a->gen = 1;
	}
}

/* The window holding @va, searched for (and cached if a mapping's). */
static void win_search(struct kernel *k, vaddr_t va, struct vwin *out)
{
	struct vmas_acct *a = &k->mm->vacct;

	a->searches++;
	ext_find(k, va, out);
	if (out->rec)
		wc_put(a, va, out);
}

/* The window holding @va: the record it belongs to and the extent's bounds (or the gap's). */
static inline void win_of(struct kernel *k, vaddr_t va, struct vwin *out)
{
	const struct vwin *c = wc_find(&k->mm->vacct, va);

	if (likely(c != NULL))
		*out = *c;
	else
		win_search(k, va, out);
}

uint32_t vmas_rec_of(struct kernel *k, vaddr_t va)
{
	struct vwin w;

	win_of(k, va, &w);
	return w.rec;
}

void vmas_count(struct kernel *k, vaddr_t va, enum vrec_event e)
{
	if (unlikely(!k->mm->vacct.rec || k->uncounted))
		return; /* sim_init() failed before vmas_init(): sim_destroy() only; an R_TOUCH's */
	k->mm->vacct.rec[vmas_rec_of(k, va)].ev[e]++;
}

void vmas_count_mthp(struct kernel *k, vaddr_t va, unsigned order, bool fallback)
{
	struct vrec *r;

	if (unlikely(!k->mm->vacct.rec || k->uncounted) || order >= HPAGE_PMD_ORDER)
		return;
	r = &k->mm->vacct.rec[vmas_rec_of(k, va)];
	if (fallback)
		r->mthp_fallback[order]++;
	else
		r->mthp_alloc[order]++;
}

/* vmas_window() when the cache does not know @va (cold: a new mapping, a gap, a collision). */
static __attribute__((cold, noinline)) void window_searched(struct kernel *k, vaddr_t va)
{
	struct vmas_acct *a = &k->mm->vacct;
	struct vwin w;

	win_search(k, va, &w);
	if (w.rec != a->cur || !w.rec) {
		charge(k);
		a->cur = w.rec;
	}
	k->cpu->win_lo = w.lo;
	k->cpu->win_len = w.len;
}

/*
 * The MMU's window hook: an L1 miss at @va outside the window. A cached window
 * (a mapping's: rec != 0) of the record already charged needs no charge (the
 * same mapping's other extent): the deltas go to it either way.
 */
static void vmas_window(void *os, vaddr_t va)
{
	struct kernel *k = os;
	struct vmas_acct *a = &k->mm->vacct;
	const struct vwin *w = wc_find(a, va);

	if (unlikely(w == NULL)) {
		window_searched(k, va);
		return;
	}
	if (w->rec != a->cur) {
		charge(k);
		a->cur = w->rec;
	}
	k->cpu->win_lo = w->lo;
	k->cpu->win_len = w->len;
}

/*
 * The extents change: charge what the MMU counted (to the running process's
 * mapping: another mm's counts were charged when it was switched out), make
 * the next L1 miss look again.
 */
static void close_window(struct kernel *k)
{
	if (k->mm == k->active_mm)
		vmas_flush(k);
	k->cpu->win_lo = 0;
	k->cpu->win_len = 0;
}

int vmas_acct_init(struct vmas_acct *a)
{
	memset(a, 0, sizeof(*a));
	a->rec = calloc(16, sizeof(*a->rec));
	if (!a->rec)
		return -1;
	a->cap_rec = 16;
	a->nrec = 1; /* [none] */
	a->gen = 1;  /* (the cache's fresh slots are generation 0) */
	return 0;
}

int vmas_init(struct kernel *k)
{
	if (vmas_acct_init(&k->mm->vacct))
		return -1;
	k->cpu->window = vmas_window;
	k->cpu->win_lo = 0;
	k->cpu->win_len = 0;
	return 0;
}

void vmas_switch(struct kernel *k, struct mm *next)
{
	if (k->mm->vacct.rec)
		close_window(k); /* the outgoing process's counts to its mapping */
	if (next->vacct.rec)
		mmu_counts(k->cpu, next->vacct.snap); /* the new one's start from now */
}

int vmas_acct_copy(struct vmas_acct *to, const struct vmas_acct *from)
{
	memset(to, 0, sizeof(*to));
	if (!from->rec)
		return 0;
	to->rec = malloc(from->cap_rec * sizeof(*to->rec));
	to->ext = from->cap_ext ? malloc(from->cap_ext * sizeof(*to->ext)) : NULL;
	to->pend = from->cap_pend ? malloc(from->cap_pend * sizeof(*to->pend)) : NULL;
	if (!to->rec || (from->cap_ext && !to->ext) || (from->cap_pend && !to->pend))
		goto oom;
	memcpy(to->rec, from->rec, from->nrec * sizeof(*to->rec));
	for (size_t i = 0; i < from->nrec; i++) { /* the mappings, not what they counted */
		memset(to->rec[i].hw, 0, sizeof(to->rec[i].hw));
		memset(to->rec[i].ev, 0, sizeof(to->rec[i].ev));
		to->rec[i].path = NULL;
	}
	if (from->next)
		memcpy(to->ext, from->ext, from->next * sizeof(*to->ext));
	if (from->npend)
		memcpy(to->pend, from->pend, from->npend * sizeof(*to->pend));
	to->nrec = from->nrec, to->cap_rec = from->cap_rec;
	to->next = from->next, to->cap_ext = from->cap_ext;
	to->npend = from->npend, to->cap_pend = from->cap_pend;
	to->gen = from->gen + 1; /* (no window cache yet: it is built on demand) */
	to->nocache = from->nocache;
	to->heap = from->heap;
	to->oom = from->oom;
	return 0;
oom:
	vmas_acct_free(to);
	return -1;
}

int vmas_exec(struct kernel *k)
{
	struct vmas_acct *a = &k->mm->vacct;

	if (a->rec && k->mm == k->active_mm)
		close_window(k);
	vmas_acct_free(a);
	if (vmas_acct_init(a))
		return -1;
	mmu_counts(k->cpu, a->snap);
	return 0;
}

void vmas_acct_free(struct vmas_acct *a)
{
	for (size_t i = 0; a->rec && i < a->nrec; i++)
		free(a->rec[i].path);
	free(a->rec);
	free(a->ext);
	free(a->pend);
	free(a->wc);
	memset(a, 0, sizeof(*a));
}

/* Room for @n extents in all: 0, or -1 when host memory ran out. */
static int ext_reserve(struct vmas_acct *a, size_t n)
{
	size_t cap;
	struct vext *e;

	if (n <= a->cap_ext)
		return 0;
	for (cap = a->cap_ext ? a->cap_ext * 2 : 16; cap < n; cap *= 2)
		;
	e = realloc(a->ext, cap * sizeof(*e));
	if (!e)
		return -1;
	a->ext = e;
	a->cap_ext = cap;
	return 0;
}

/*
 * The new mappings' extents merged into ext (sorted; neither overlaps the
 * other): before any change that reads ext by index. 0, or -1 (host OOM).
 */
static int ext_settle(struct vmas_acct *a)
{
	size_t i = a->next, j = a->npend, kk;

	if (!j)
		return 0;
	if (ext_reserve(a, a->next + a->npend))
		return -1;
	for (kk = i + j; j;) {
		if (i && a->ext[i - 1].start > a->pend[j - 1].start)
			a->ext[--kk] = a->ext[--i];
		else
			a->ext[--kk] = a->pend[--j];
	}
	a->next += a->npend;
	a->npend = 0;
	return 0;
}

/*
 * A new mapping's [start, end) (free) for its new record @rec. An insertion in
 * the middle of ext moves half of it: os.profile osless maps every page of a
 * trace without mmap lines as its own implicit region, at random addresses on
 * a GUPS-style trace, and those moves were a fifth of its run (callgrind,
 * 16,384 regions: 1.28 G instructions of memmove). So it goes into pend, a
 * sorted array of at most about sqrt(next) extents merged into ext when full:
 * O(sqrt n) an insertion. 0, or -1 (host OOM).
 */
static int ext_add_new(struct vmas_acct *a, vaddr_t start, vaddr_t end, uint32_t rec)
{
	size_t j;

	if (a->npend >= 16 && a->npend * a->npend >= a->next && ext_settle(a))
		return -1;
	if (a->npend == a->cap_pend) {
		size_t cap = a->cap_pend ? 2 * a->cap_pend : 16;
		struct vext *p = realloc(a->pend, cap * sizeof(*p));

		if (!p)
			return -1;
		a->pend = p;
		a->cap_pend = cap;
	}
	j = ext_after(a->pend, a->npend, start);
	memmove(&a->pend[j + 1], &a->pend[j], (a->npend - j) * sizeof(*a->pend));
	a->pend[j] = (struct vext){ start, end, rec };
	a->npend++;
	return 0;
}

/* Remove [start, end) from the extents, splitting those that straddle. */
static int ext_remove(struct vmas_acct *a, vaddr_t start, vaddr_t end)
{
	size_t i, j;

	if (ext_settle(a))
		return -1;
	wc_invalidate(a);
	i = ext_after(a->ext, a->next, start);
	if (i < a->next && a->ext[i].start < start && a->ext[i].end > end) {
		/* one extent holds the hole: split it in two */
		if (ext_reserve(a, a->next + 1))
			return -1;
		memmove(&a->ext[i + 1], &a->ext[i], (a->next - i) * sizeof(*a->ext));
		a->next++;
		a->ext[i].end = start;
		a->ext[i + 1].start = end;
		return 0;
	}
	if (i < a->next && a->ext[i].start < start) {
		a->ext[i].end = start;
		i++;
	}
	for (j = i; j < a->next && a->ext[j].end <= end; j++)
		;
	if (j < a->next && a->ext[j].start < end)
		a->ext[j].start = end;
	if (j > i) { /* (none yet: a->ext may be NULL) */
		memmove(&a->ext[i], &a->ext[j], (a->next - j) * sizeof(*a->ext));
		a->next -= j - i;
	}
	return 0;
}

/* Add [start, end) (free) to record @rec, joining an adjacent extent of the same record. */
static int ext_add(struct vmas_acct *a, vaddr_t start, vaddr_t end, uint32_t rec)
{
	size_t i;

	if (ext_settle(a))
		return -1;
	i = ext_after(a->ext, a->next, start);

	if (i > 0 && a->ext[i - 1].end == start && a->ext[i - 1].rec == rec) {
		a->ext[i - 1].end = end;
		if (i < a->next && a->ext[i].start == end && a->ext[i].rec == rec) {
			a->ext[i - 1].end = a->ext[i].end;
			memmove(&a->ext[i], &a->ext[i + 1], (a->next - i - 1) * sizeof(*a->ext));
			a->next--;
		}
		return 0;
	}
	if (i < a->next && a->ext[i].start == end && a->ext[i].rec == rec) {
		a->ext[i].start = start;
		return 0;
	}
	if (ext_reserve(a, a->next + 1))
		return -1;
	memmove(&a->ext[i + 1], &a->ext[i], (a->next - i) * sizeof(*a->ext));
	a->ext[i] = (struct vext){ start, end, rec };
	a->next++;
	return 0;
}

static int new_rec(struct vmas_acct *a, vaddr_t start, vaddr_t end, unsigned long flags,
		   uint32_t tfile, bool stack)
{
	if (a->nrec == a->cap_rec) {
		struct vrec *r = realloc(a->rec, 2 * a->cap_rec * sizeof(*r));

		if (!r)
			return -1;
		a->rec = r;
		a->cap_rec *= 2;
	}
	memset(&a->rec[a->nrec], 0, sizeof(*a->rec));
	a->rec[a->nrec] = (struct vrec){ .start = start, .end = end, .flags = flags, .tfile = tfile,
					 .stack = stack };
	return (int)a->nrec++;
}

int vmas_map(struct kernel *k, vaddr_t start, vaddr_t end, unsigned long flags, uint32_t tfile,
	     bool stack)
{
	struct vmas_acct *a = &k->mm->vacct;
	vaddr_t wlo = k->cpu->win_lo, whi = wlo + k->cpu->win_len;
	int r = new_rec(a, start, end, flags, tfile, stack);

	if (r < 0 || ext_add_new(a, start, end, (uint32_t)r))
		return a->oom = true, -1;
	if (flags & VM_FILE) {
		/* the file offset at @start, for the row's name (its VMA may have merged) */
		const struct vma *v = vma_find(&k->mm->vmas, start);

		if (v)
			a->rec[r].off = (v->pgoff << PAGE_SHIFT) + (start - v->start);
	}
	/*
	 * The window open on a gap of [none] that this mapping fills: the counts
	 * since it opened are the access that faulted this implicit mapping in
	 * (an access in a gap faults at once; one that fails ends the run), so
	 * they are this mapping's.
	 */
	if (a->cur == 0 && start < whi && end > wlo)
		a->cur = (uint32_t)r;
	close_window(k);
	return 0;
}

int vmas_unmap(struct kernel *k, vaddr_t start, vaddr_t end)
{
	close_window(k);
	if (ext_remove(&k->mm->vacct, start, end))
		return k->mm->vacct.oom = true, -1;
	return 0;
}

int vmas_extend(struct kernel *k, vaddr_t start, vaddr_t end, uint32_t rec)
{
	close_window(k);
	if (ext_remove(&k->mm->vacct, start, end) || ext_add(&k->mm->vacct, start, end, rec))
		return k->mm->vacct.oom = true, -1;
	return 0;
}

uint32_t vmas_heap(struct kernel *k, vaddr_t start, vaddr_t end)
{
	struct vmas_acct *a = &k->mm->vacct;
	int r;

	if (a->heap)
		return a->heap;
	r = new_rec(a, start, end, VM_READ | VM_WRITE | VM_BRK, 0, false);
	if (r < 0) {
		a->oom = true;
		return 0;
	}
	return a->heap = (uint32_t)r;
}

/* --- the end of the run --------------------------------------------------- */

static void rss_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct kernel *k = ctx;
	struct vrec *r = &k->mm->vacct.rec[vmas_rec_of(k, va)];

	(void)entry;
	if (pfn == PFN_NONE) /* a swap entry */
		return;
	if (ps == PS_4K) {
		if (pfn != k->thp.zero_pfn && !filemap_is_cache(&k->fm, pfn))
			r->rss_bytes += PAGE_SIZE;
	} else if (ps == PS_2M) {
		if (pfn != k->thp.huge_zero_pfn && !filemap_is_thp(k, pfn)) {
			r->rss_bytes += PMD_SIZE;
			r->huge_bytes += PMD_SIZE;
		}
	} else {
		r->rss_bytes += PUD_SIZE;
		r->huge_bytes += PUD_SIZE;
	}
}

void vmas_finish(struct kernel *k)
{
	struct vmas_acct *a = &k->mm->vacct;
	bool *seen = calloc(a->nrec, sizeof(*seen));

	if (k->mm == k->active_mm)
		vmas_flush(k);
	if (ext_settle(a))
		a->oom = true; /* (the new mappings' extents then go uncounted) */
	for (size_t i = 0; i < a->nrec; i++)
		a->rec[i].size_bytes = a->rec[i].rss_bytes = a->rec[i].huge_bytes = 0;
	for (size_t i = 0; i < a->next; i++) {
		const struct vext *e = &a->ext[i];
		struct vrec *r = &a->rec[e->rec];

		r->size_bytes += e->end - e->start;
		if (seen && !seen[e->rec]) {
			const struct vma *v = vma_find(&k->mm->vmas, e->start);

			seen[e->rec] = true;
			r->start = e->start;
			if (v) {
				r->flags = v->flags;
				r->thp_no = khugepaged_thp_ineligible(k, v);
			}
		}
		r->end = e->end;
	}
	for (size_t i = 0; i < a->nrec; i++)
		if (!a->rec[i].size_bytes)
			a->rec[i].thp_no = i ? "unmapped" : "no mapping";
	free(seen);
	pt_for_each_leaf(&k->mm->pt, rss_leaf, k);
}

void vmas_set_paths(struct kernel *k, const struct trace_file *files, size_t n)
{
	for (size_t i = 1; i < k->mm->vacct.nrec; i++) {
		struct vrec *r = &k->mm->vacct.rec[i];

		/* (no path on host OOM: the row shows none) */
		if (r->tfile && r->tfile <= n && files[r->tfile - 1].path && !r->path)
			r->path = strdup(files[r->tfile - 1].path);
	}
}

/* --- output ----------------------------------------------------------------- */

const char *vmas_kind(const struct vrec *r, uint32_t idx)
{
	if (!idx)
		return "none";
	if (r->flags & VM_HUGETLB)
		return "hugetlb";
	if (r->flags & VM_BRK)
		return "heap";
	if (r->flags & VM_IMPLICIT)
		return r->flags & VM_FILE ? "text" : "implicit";
	if (r->stack)
		return "stack";
	if (r->flags & VM_FILE)
		return "file";
	return r->flags & VM_SHARED ? "shmem" : "anon";
}

void vmas_perms(unsigned long flags, char out[5])
{
	out[0] = flags & VM_READ ? 'r' : '-';
	out[1] = flags & VM_WRITE ? 'w' : '-';
	out[2] = flags & VM_EXEC ? 'x' : '-';
	out[3] = flags & VM_SHARED ? 's' : 'p';
	out[4] = '\0';
}

struct order_key {
	uint64_t walk_cycles;
	vaddr_t start;
	uint32_t idx;
};

static int by_walk_cycles(const void *pa, const void *pb)
{
	const struct order_key *a = pa, *b = pb;

	if (a->walk_cycles != b->walk_cycles)
		return a->walk_cycles > b->walk_cycles ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->idx < b->idx ? -1 : 1;
}

uint32_t *vmas_order(const struct kernel *k)
{
	size_t n = k->mm->vacct.nrec;
	struct order_key *kk = malloc(n * sizeof(*kk));
	uint32_t *o = malloc(n * sizeof(*o));

	if (!kk || !o) {
		free(kk);
		free(o);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		kk[i] = (struct order_key){ k->mm->vacct.rec[i].hw[VH_WALK_CYCLES], k->mm->vacct.rec[i].start, i };
	qsort(kk, n, sizeof(*kk), by_walk_cycles);
	for (size_t i = 0; i < n; i++)
		o[i] = kk[i].idx;
	free(kk);
	return o;
}

/* The flags column: VM_HUGEPAGE "hg", VM_NOHUGEPAGE "nh" (smaps' VmFlags), else "". */
static const char *thp_flag(unsigned long flags)
{
	return flags & VM_HUGEPAGE ? "hg" : flags & VM_NOHUGEPAGE ? "nh" : "";
}

static bool rec_empty(const struct vrec *r, uint32_t idx)
{
	uint64_t any = r->size_bytes;

	for (int i = 0; i < VH_NR; i++)
		any |= r->hw[i];
	for (int i = 0; i < VE_NR; i++)
		any |= r->ev[i];
	for (int o = 0; o < HPAGE_PMD_ORDER; o++)
		any |= r->mthp_alloc[o] | r->mthp_fallback[o];
	return !idx && !any; /* [none] is shown only when something was charged to it */
}

void vmas_write_text(const struct kernel *k, unsigned top, FILE *out)
{
	uint32_t *o = vmas_order(k);
	unsigned shown = 0;

	if (!o)
		return;
	size_t n = k->mm->vacct.nrec - (rec_empty(&k->mm->vacct.rec[0], 0) ? 1 : 0);

	/* the mTHP sizes any mapping's faults allocated or fell back from: a column pair each */
	bool sz[HPAGE_PMD_ORDER] = { false };

	/* (the counters came with Linux 6.10: none on an older profile, as in the report) */
	for (size_t i = 0; mthp_stat_in(MTHP_STAT_ANON_FAULT_ALLOC, k->cfg->kernel) && i < k->mm->vacct.nrec; i++)
		for (unsigned ord = MTHP_ORDER_MIN; ord < HPAGE_PMD_ORDER; ord++)
			sz[ord] |= (k->mm->vacct.rec[i].mthp_alloc[ord] | k->mm->vacct.rec[i].mthp_fallback[ord]) != 0;
	fprintf(out, "\nmappings by walk cycles (%zu of %zu; --vmas-csv or the JSON has them all):\n",
		n < top ? n : top, n);
	/* the counters' columns are named as in --vmas-csv and the JSON (hw_key[], ev_key[]) */
	fprintf(out, "%-14s %-14s %-8s %-4s %-2s %-5s %10s %10s %10s %11s %11s %12s %11s %15s %18s %13s %14s %18s",
		"start", "end", "kind", "perm", "th", "thp", "rss_KiB", "huge_KiB", "pgfault", "dtlb_misses",
		"stlb_misses", "walk_cycles", "itlb_misses", "thp_fault_alloc", "thp_fault_fallback",
		"thp_split_pmd", "thp_split_page", "thp_collapse_alloc");
	for (unsigned ord = MTHP_ORDER_MIN; ord < HPAGE_PMD_ORDER; ord++)
		if (sz[ord]) {
			char a[40], f[40];

			snprintf(a, sizeof(a), "anon_fault_alloc.%s", mthp_size_name[ord]);
			snprintf(f, sizeof(f), "anon_fault_fallback.%s", mthp_size_name[ord]);
			fprintf(out, " %21s %24s", a, f);
		}
	fprintf(out, "  %s\n", "path/why");
	for (size_t kk = 0; kk < k->mm->vacct.nrec && shown < top; kk++) {
		const struct vrec *r = &k->mm->vacct.rec[o[kk]];
		char perm[5];

		if (rec_empty(r, o[kk]))
			continue;
		vmas_perms(r->flags, perm);
		fprintf(out, "%014llx %014llx %-8s %-4s %-2s %-5s %10llu %10llu %10llu %11llu %11llu %12llu %11llu %15llu %18llu %13llu %14llu %18llu",
			(unsigned long long)r->start, (unsigned long long)r->end, vmas_kind(r, o[kk]),
			o[kk] ? perm : "----", thp_flag(r->flags), r->thp_no ? "no" : "yes",
			(unsigned long long)(r->rss_bytes >> 10), (unsigned long long)(r->huge_bytes >> 10),
			(unsigned long long)r->ev[VE_PGFAULT], (unsigned long long)r->hw[VH_DTLB_MISSES],
			(unsigned long long)r->hw[VH_STLB_MISSES], (unsigned long long)r->hw[VH_WALK_CYCLES],
			(unsigned long long)r->hw[VH_ITLB_MISSES], (unsigned long long)r->ev[VE_THP_FAULT_ALLOC],
			(unsigned long long)r->ev[VE_THP_FAULT_FALLBACK],
			(unsigned long long)r->ev[VE_THP_SPLIT_PMD], (unsigned long long)r->ev[VE_THP_SPLIT_PAGE],
			(unsigned long long)r->ev[VE_THP_COLLAPSE_ALLOC]);
		for (unsigned ord = MTHP_ORDER_MIN; ord < HPAGE_PMD_ORDER; ord++)
			if (sz[ord])
				fprintf(out, " %21llu %24llu", (unsigned long long)r->mthp_alloc[ord],
					(unsigned long long)r->mthp_fallback[ord]);
		fprintf(out, "  %s\n", r->path ? r->path : r->thp_no ? r->thp_no : "");
		shown++;
	}
	free(o);
}

static const char *const hw_key[VH_NR] = {
	"itlb_misses", "dtlb_misses", "stlb_misses", "walks", "walk_cycles",
};
static const char *const ev_key[VE_NR] = {
	"pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback", "thp_split_pmd",
	"thp_split_page", "thp_collapse_alloc",
};

/*
 * A row's name (the CSV's name column, a plot's category), unique in the run so
 * that a plot of the CSV has one bar per mapping: a file mapping with a path is
 * the file's name and the protection of its lowest live VMA, "libc.so.6:r-xp"
 * (an ELF maps its text, read-only data and data from one file; /proc/PID/maps
 * tells them apart by the same column); any other is kind@start,
 * "anon@0x7f00000". Where that is shared with another record of the run (every
 * record counts, not only the rows shown, so names do not depend on --vmas=N),
 * a file mapping adds its offset in the file, "libc.so.6:r--p+0x1d1000" (the
 * loader's first read-only mapping of the whole file at 0, its .rodata, its
 * .data made read-only by RELRO); whatever is still shared (a mapping unmapped,
 * another made later at the same address) adds "#ID", the id column.
 */
static char *rec_label(const struct vrec *r, uint32_t idx, bool with_off)
{
	char perm[5], *s;
	int rc;

	if (r->path) {
		const char *b = strrchr(r->path, '/');

		vmas_perms(r->flags, perm);
		rc = asprintf(&s, "%s:%s", b && b[1] ? b + 1 : r->path, idx ? perm : "----");
		if (rc >= 0 && with_off) {
			char *t;

			rc = asprintf(&t, "%s+0x%llx", s, (unsigned long long)r->off);
			free(s);
			s = t;
		}
	} else {
		rc = asprintf(&s, "%s@0x%llx", vmas_kind(r, idx), (unsigned long long)r->start);
	}
	return rc < 0 ? NULL : s;
}

struct name_key {
	const char *name;
	size_t idx;
};

static int by_name(const void *pa, const void *pb)
{
	const struct name_key *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Mark in @dup[] the names of @name[] (@n) that occur more than once. 0, or -1 (OOM). */
static int mark_shared(char *const *name, size_t n, bool *dup)
{
	struct name_key *kk = malloc((n ? n : 1) * sizeof(*kk));

	if (!kk)
		return -1;
	for (size_t i = 0; i < n; i++) {
		kk[i] = (struct name_key){ name[i], i };
		dup[i] = false;
	}
	qsort(kk, n, sizeof(*kk), by_name);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(kk[i - 1].name, kk[i].name))
			dup[kk[i - 1].idx] = dup[kk[i].idx] = true;
	free(kk);
	return 0;
}

/*
 * Every record's name (rec_label(), above), indexed by record; NULL when out of
 * memory. vmas_names_free() releases it.
 */
static void vmas_names_free(char **name, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		free(name[i]);
	free(name);
}

static char **vmas_names(const struct kernel *k)
{
	size_t n = k->mm->vacct.nrec;
	char **name = calloc(n ? n : 1, sizeof(*name));
	bool *dup = calloc(n ? n : 1, sizeof(*dup));
	size_t i;

	if (!name || !dup)
		goto oom;
	for (i = 0; i < n; i++)
		if (!(name[i] = rec_label(&k->mm->vacct.rec[i], (uint32_t)i, false)))
			goto oom;
	if (mark_shared(name, n, dup))
		goto oom;
	for (i = 0; i < n; i++) {
		if (!dup[i] || !k->mm->vacct.rec[i].path)
			continue;
		free(name[i]);
		if (!(name[i] = rec_label(&k->mm->vacct.rec[i], (uint32_t)i, true)))
			goto oom;
	}
	if (mark_shared(name, n, dup))
		goto oom;
	for (i = 0; i < n; i++) {
		char *t;

		if (!dup[i])
			continue;
		if (asprintf(&t, "%s#%zu", name[i], i) < 0)
			goto oom;
		free(name[i]);
		name[i] = t;
	}
	free(dup);
	return name;
oom:
	free(dup);
	vmas_names_free(name, n);
	return NULL;
}

void vmas_write_csv(const struct kernel *k, const char *mode, int64_t process, bool header, unsigned top,
		    const char *prov, FILE *out)
{
	uint32_t *o = vmas_order(k);
	char **name = vmas_names(k);
	unsigned shown = 0;

	if (!o || !name) {
		free(o);
		vmas_names_free(name, k->mm->vacct.nrec);
		return;
	}
	if (!header)
		goto rows;
	fputs(process < 0 ? "mode," : "mode,process,", out);
	fputs("id,name,start,end,kind,perms,thp_flags,thp_eligible,thp_ineligible_why,size_bytes,rss_bytes,huge_bytes",
	      out);
	for (int i = 0; i < VH_NR; i++)
		fprintf(out, ",%s", hw_key[i]);
	for (int i = 0; i < VE_NR; i++)
		fprintf(out, ",%s", ev_key[i]);
	fprintf(out, ",path%s\n", SIM_CSV_PROV_COLS);
rows:
	for (size_t kk = 0; kk < k->mm->vacct.nrec && (!top || shown < top); kk++) {
		const struct vrec *r = &k->mm->vacct.rec[o[kk]];
		char perm[5];

		if (rec_empty(r, o[kk]))
			continue;
		vmas_perms(r->flags, perm);
		if (process < 0)
			fprintf(out, "%s,%u,", mode, o[kk]);
		else
			fprintf(out, "%s,%lld,%u,", mode, (long long)process, o[kk]);
		csv_put(out, name[o[kk]]);	/* unique in the run (vmas_names()) */
		fprintf(out, ",0x%llx,0x%llx,%s,%s,%s,%d,%s,%llu,%llu,%llu",
			(unsigned long long)r->start, (unsigned long long)r->end, vmas_kind(r, o[kk]),
			o[kk] ? perm : "----", thp_flag(r->flags), !r->thp_no, r->thp_no ? r->thp_no : "",
			(unsigned long long)r->size_bytes, (unsigned long long)r->rss_bytes,
			(unsigned long long)r->huge_bytes);
		for (int i = 0; i < VH_NR; i++)
			fprintf(out, ",%llu", (unsigned long long)r->hw[i]);
		for (int i = 0; i < VE_NR; i++)
			fprintf(out, ",%llu", (unsigned long long)r->ev[i]);
		fputc(',', out);
		csv_put(out, r->path ? r->path : "");
		fprintf(out, "%s\n", prov);
		shown++;
	}
	vmas_names_free(name, k->mm->vacct.nrec);
	free(o);
}

void *vmas_to_json(const struct kernel *k)
{
	json_t *arr = json_array();
	uint32_t *o = vmas_order(k);

	if (!arr || !o) {
		free(o);
		return arr;
	}
	for (size_t kk = 0; kk < k->mm->vacct.nrec; kk++) {
		const struct vrec *r = &k->mm->vacct.rec[o[kk]];
		json_t *j;
		char perm[5], buf[24];

		if (rec_empty(r, o[kk]))
			continue;
		j = json_object();
		vmas_perms(r->flags, perm);
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)r->start);
		json_object_set_new(j, "start", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)r->end);
		json_object_set_new(j, "end", json_string(buf));
		json_object_set_new(j, "kind", json_string(vmas_kind(r, o[kk])));
		json_object_set_new(j, "path", r->path ? json_string(r->path) : json_null());
		json_object_set_new(j, "perms", json_string(o[kk] ? perm : "----"));
		json_object_set_new(j, "thp_flags", json_string(thp_flag(r->flags)));
		json_object_set_new(j, "thp_eligible", json_boolean(!r->thp_no));
		json_object_set_new(j, "thp_ineligible_why", r->thp_no ? json_string(r->thp_no) : json_null());
		json_object_set_new(j, "size_bytes", json_integer((json_int_t)r->size_bytes));
		json_object_set_new(j, "rss_bytes", json_integer((json_int_t)r->rss_bytes));
		json_object_set_new(j, "huge_bytes", json_integer((json_int_t)r->huge_bytes));
		for (int i = 0; i < VH_NR; i++)
			json_object_set_new(j, hw_key[i], json_integer((json_int_t)r->hw[i]));
		for (int i = 0; i < VE_NR; i++)
			json_object_set_new(j, ev_key[i], json_integer((json_int_t)r->ev[i]));
		/* "mthp": the sizes whose faults moved in this mapping (written only then) */
		{
			json_t *m = NULL;

			for (unsigned ord = MTHP_ORDER_MIN;
			     mthp_stat_in(MTHP_STAT_ANON_FAULT_ALLOC, k->cfg->kernel) && ord < HPAGE_PMD_ORDER; ord++) {
				if (!(r->mthp_alloc[ord] | r->mthp_fallback[ord]))
					continue;
				if (!m)
					m = json_object();
				json_object_set_new(m, mthp_size_name[ord],
						    json_pack("{s:I,s:I}", "anon_fault_alloc",
							      (json_int_t)r->mthp_alloc[ord], "anon_fault_fallback",
							      (json_int_t)r->mthp_fallback[ord]));
			}
			if (m)
				json_object_set_new(j, "mthp", m);
		}
		json_array_append_new(arr, j);
	}
	free(o);
	return arr;
}
