/*
 * workload.c - built-in synthetic workloads (-w) as record sources.
 *
 * Each workload is a small program written as a generator: it emits the mmap
 * (and with madvise=1 the MADV_HUGEPAGE madvise) events its allocations would
 * make, then the data references of its loops, in program order, with one
 * R_INSNS record per loop iteration standing for the instructions of the loop
 * body (instruction fetches are not traced). The stream is a pure function of
 * the spec and the seed (GSL mt19937), so runs are reproducible.
 *
 *   stream:size=S[,iterations=N]  STREAM's triad a[j] = b[j] + s*c[j] over three
 *       arrays of S bytes of doubles. First the initialisation loop of stream.c
 *       (a[j] = 1.0; b[j] = 2.0; c[j] = 0.0: per element the stores to a[j],
 *       b[j], c[j]), then N passes of the triad (per element: load b[j], load
 *       c[j], store a[j]). N defaults to 10, STREAM's NTIMES (stream.c 5.10,
 *       J. McCalpin, "#define NTIMES 10"). stream.c's other kernels (copy,
 *       scale, add), its timer-granularity loop (a[j] = 2.0E0 * a[j]) and its
 *       validation pass are not emitted: this workload is the triad alone.
 *       stream.c 5.10 declares the arrays static; here they are three
 *       separate anonymous mappings a, b, c (in that order), as when a
 *       program mallocs three large blocks (glibc serves them with mmap).
 *       glibc's 16-byte chunk header is left out, so each array starts on
 *       its mapping's first byte.
 *   gups:size=S[,updates=N]  HPCC RandomAccess: the table of S/8 words written
 *       once in order (Table[i] = i), then N read-modify-writes (R_MODIFY,
 *       8 bytes) of uniformly random words. N defaults to 4 x S/8, HPCC's
 *       NUPDATE (RandomAccess/core_single_cpu.c: "#define NUPDATE (4 *
 *       TableSize)", "suggested: 4x number of table entries"). HPCC draws
 *       indices from its LFSR over a power-of-two table; here they come
 *       from mt19937 over any table size.
 *   chase:size=S[,steps=N][,stride=B]  pointer chase through the S/B
 *       elements of B bytes in the order of one random cycle through all of
 *       them (Sattolo's algorithm on the GSL generator); each element is
 *       visited at its first 8 bytes, so a step touches one cache line of
 *       its element. B is a multiple of 64, 64 <= B <= S, S a multiple of B;
 *       the default 64 chases every cache line, B = 4K one line per 4 KiB
 *       page (the classic TLB pointer chase: each step a new page, no two
 *       steps share a cache line), B = 4160 (4K + 64) one line per page at
 *       successive offsets (the lines of B = 4K are page-aligned and all fall
 *       in 1/64 of a physically indexed cache's sets). The initialisation stores each element's
 *       next pointer (one 8-byte store at the start of each element, in
 *       address order; the permutation itself lives in an untraced index
 *       array), then N dependent 8-byte loads follow the cycle from element
 *       0. N defaults to S/B: one full lap. S/B is capped at CHASE_LINES_MAX
 *       (2^28 elements, 16 GiB at B = 64). Set-up walks the cycle once (a
 *       dependent, cache-missing loop: about 4 s for 1 GiB at B = 64 on the
 *       development machine).
 *   stride:size=S,stride=B[,passes=N]  loads at base + k*B, k = 0..S/B-1,
 *       N passes (default 1). No initialisation. The load size is the
 *       largest power of two <= min(B, 8) (a byte walk for B = 1), so no
 *       load runs past the array.
 *   zipf:size=S,alpha=A,refs=N  N 8-byte loads; the page is drawn from a Zipf
 *       law over the S/4096 pages (rank k has weight 1/k^A, sampled in O(1)
 *       by gsl_ran_discrete's alias table), ranks are scattered over the
 *       pages by a random permutation, and the offset is a uniformly random
 *       8-byte word of the page. No initialisation. S must be a multiple of
 *       4096 (the law is over whole pages) and the pages are capped at
 *       ZIPF_PAGES_MAX (128 GiB) so the tables stay in memory.
 *   kv:size=S[,value=B][,delete=P][,gap=N][,tail=N]  a key-value store's allocator
 *       in the three phases of HawkEye's Redis experiment (Panwar, Bansal &
 *       Gopinath, ASPLOS'19, §2.1 "Memory bloat": insert 4 KB values up to the
 *       dataset's size, delete 80 % of the keys at random, insert again until
 *       the dataset is back to its size, with larger values). Insert: S/B
 *       values of B bytes (default 4096, HawkEye's) written in order into one
 *       arena mapping of S bytes, each by 8-byte stores (the gups init loop's
 *       body: 4 instructions). Delete: P % of the values (default 80,
 *       HawkEye's), drawn at random, each freed: the allocator gives a freed
 *       value's pages back with madvise(MADV_DONTNEED) over them, as
 *       jemalloc's pages_purge_forced() does on Linux (src/pages.c); its
 *       decay delay (opt.dirty_decay_ms) is not modelled: a value is purged
 *       when freed. Then N instructions of no memory reference (default 0;
 *       HawkEye's "time gap", in which khugepaged runs), as R_INSNS records
 *       of 2^16 instructions each so that a timeline sees the gap pass.
 *       Insert again: as many bytes as were deleted, written in order into a
 *       second mapping (mapped at the start with the arena, as every workload's
 *       mappings are, untouched until then), as values larger than the holes (HawkEye's 2 MB
 *       values) are served from a new extent rather than from the freed 4 KiB
 *       runs. Then tail=N instructions without a memory reference (default 0,
 *       in records as the gap's): the server up with its dataset after the
 *       client's last insert, so a timeline shows what stays resident. B must be a multiple of 4096 (a value is whole pages: smaller
 *       values share pages, and a page comes back only when all of its values
 *       are free, which is not modelled) and divide S.
 *
 * Dependences (trace_reader.deps is true: R_DEP, trace.h): each chase step
 * but the first loads from the address the step before loaded (p = p->next:
 * an R_DEP of distance 1 before it). No other address depends on a traced
 * load: STREAM's and stride's come from the loop index, GUPS's from HPCC's
 * LFSR in a register, zipf's from the generator (whose tables a real program
 * would load from, untraced here), the initialisation loops' from their
 * index (chase's untraced index-array load gives the value stored, not its
 * address).
 *
 * Common keys: seed=N (the mt19937 seed; default: workload_open's @seed;
 * mt19937 keeps only the low 32 bits, and GSL maps seed 0 to 4357) and
 * madvise=0|1. Sizes take K/M/G/T suffixes (parse_size); so do counts
 * (iterations, updates, steps, passes, refs, seed; parse_count), binary as for
 * sizes: updates=4M is 4194304 updates, 4K is 4096. A count without a suffix may
 * also be 0x hex. Zero sizes and counts are errors (seed=0 is not).
 *
 * workload_check() runs the same parse and checks as workload_open() without
 * building anything: chase's cycle and zipf's tables take memory and time in
 * proportion to the size (chase_build, zipf_build), which a sweep that checks
 * its inputs up front should not pay.
 *
 * Address layout: each array is one anonymous private mapping (prot RW,
 * MAP_PRIVATE|MAP_ANONYMOUS, fd -1) of S bytes rounded up to 4 KiB, placed
 * top-down from a fixed mmap_base of 0x7f0000000000 as Linux's top-down
 * allocator does (arch_get_unmapped_area_topdown: the highest gap below
 * mmap_base), with no randomisation. Whether the start is 2 MiB aligned
 * depends on the kernel (os.kernel; the mappings have no address hint, so
 * __get_unmapped_area() may pick): 6.6 aligns nothing; 6.7 (efa7df3e3bb5 "mm:
 * align larger anonymous mappings on THP boundaries", reference §1d) aligns
 * every length of 2 MiB or more; since d4148aeab412 ("mm, mmap: limit THP
 * alignment of anonymous mappings to PMD-aligned sizes", 6.12) only lengths
 * that are a multiple of 2 MiB go through thp_get_unmapped_area_vmflags().
 * That pads the request by 2 MiB and, since 96204e15310c ("mm:
 * thp_get_unmapped_area must honour topdown preference", 6.8, also in 6.7
 * stable), keeps the aligned start closest to the top, which makes the result
 * align_down(top - len, 2 MiB). All mmap (and madvise) events come first.
 *
 * Instruction counts: the R_INSNS sizes are the loop bodies gcc 12.2 -O2
 * -fno-tree-vectorize emits on x86-64 for the loops above written in C
 * (counted from the assembly; scalar code because the references here are
 * 8 bytes per element):
 *   stream init  6: 3 stores (movsd, movsd, movq), add, cmp, jne
 *   stream triad 7: movsd c[j]; mulsd; addsd b[j]; movsd a[j]; add, cmp, jne
 *                   (gcc loads c[j] first; the records keep b, c, a order)
 *   gups init    4: mov Table[i]; add, cmp, jne
 *   gups update 12: HPCC's LFSR step (lea, mov, xor, test, mov, mov, cmovs),
 *                   and, xor to memory, add, cmp, jne
 *   chase init   9: load of the index array, 2 shifts, add, store, mov,
 *                   add, cmp, jne (the index-array load is not traced; the
 *                   shifts are by log2(B), an imul for a B that is not a
 *                   power of two: the same count for every stride)
 *   chase step   4: mov (p), p; add, cmp, jne
 *   stride       4: add mem to sum; add, cmp, jb
 *   zipf         4: as stride; the generator's own instructions that pick the
 *                   page are not counted (a real program would add its own).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "util.h"
#include "workload.h"

/*
 * A fixed mmap_base, a documented choice: Linux puts it below the stack gap
 * at a random offset; fixing it keeps addresses reproducible.
 */
#define WL_MMAP_BASE 0x7f0000000000ULL
/* Lowest address a mapping may take: mm/Kconfig DEFAULT_MMAP_MIN_ADDR, default 4096. */
#define WL_MMAP_MIN 4096ULL
#define WL_PROT_RW 3 /* PROT_READ | PROT_WRITE */
#define WL_MAPS_MAX 3
#define WL_EV_MAX (2 * WL_MAPS_MAX)
#define CACHE_LINE 64
/*
 * Generator memory is capped near 2 GiB (a documented limit, not a kernel
 * one). zipf: the alias table (16 B/page), the weights and GSL's set-up
 * stacks (about 24 B/page, freed after set-up) and the rank permutation
 * (4 B/page): 45 B/page peak, measured at 2^22 pages. So 2^25 pages (128 GiB).
 * chase: next[] and order[] (4 B/line each during set-up): 2^28 lines (16 GiB).
 */
#define ZIPF_PAGES_MAX (1ULL << 25)
#define CHASE_LINES_MAX (1ULL << 28)
/* STREAM's NTIMES (stream.c 5.10). */
#define STREAM_NTIMES 10
/* HPCC RandomAccess: NUPDATE = 4 * TableSize. */
#define GUPS_UPDATES_PER_WORD 4

/* Loop-body instruction counts (header comment). */
#define INSNS_STREAM_INIT 6
#define INSNS_STREAM_TRIAD 7
#define INSNS_GUPS_INIT 4
#define INSNS_GUPS_UPDATE 12
#define INSNS_CHASE_INIT 9
#define INSNS_CHASE_STEP 4
#define INSNS_STRIDE 4
#define INSNS_ZIPF 4
#define INSNS_KV_STORE 4 /* the gups init loop's body */
/* kv: HawkEye's value size and deleted share (ASPLOS'19 §2.1), and the gap's record size */
#define KV_VALUE_DEFAULT 4096
#define KV_DELETE_DEFAULT 80
#define KV_GAP_CHUNK (1u << 16)

enum wl_kind { WL_STREAM, WL_GUPS, WL_CHASE, WL_STRIDE, WL_ZIPF, WL_KV, WL_NR };

enum wl_key {
	K_SIZE, K_ITERATIONS, K_UPDATES, K_STEPS, K_STRIDE, K_PASSES,
	K_ALPHA, K_REFS, K_SEED, K_MADVISE, K_VALUE, K_DELETE, K_GAP, K_TAIL, K_NR
};

enum wl_type { T_SIZE, T_COUNT, T_DOUBLE, T_BOOL };

static const struct {
	const char *name;
	enum wl_type type;
} wl_keys[K_NR] = {
	[K_SIZE] = { "size", T_SIZE },
	[K_ITERATIONS] = { "iterations", T_COUNT },
	[K_UPDATES] = { "updates", T_COUNT },
	[K_STEPS] = { "steps", T_COUNT },
	[K_STRIDE] = { "stride", T_SIZE },
	[K_PASSES] = { "passes", T_COUNT },
	[K_ALPHA] = { "alpha", T_DOUBLE },
	[K_REFS] = { "refs", T_COUNT },
	[K_SEED] = { "seed", T_COUNT },
	[K_MADVISE] = { "madvise", T_BOOL },
	[K_VALUE] = { "value", T_SIZE },
	[K_DELETE] = { "delete", T_COUNT },
	[K_GAP] = { "gap", T_COUNT },
	[K_TAIL] = { "tail", T_COUNT },
};

#define KB(k) (1u << (k))
_Static_assert(K_NR <= 32, "the key masks are 32 bits");
#define COMMON_KEYS (KB(K_SEED) | KB(K_MADVISE))

static const struct {
	const char *name;
	unsigned allowed;  /* KB() mask of accepted keys */
	unsigned required; /* KB() mask of keys without a default */
} wl_kinds[WL_NR] = {
	[WL_STREAM] = { "stream", KB(K_SIZE) | KB(K_ITERATIONS) | COMMON_KEYS, KB(K_SIZE) },
	[WL_GUPS] = { "gups", KB(K_SIZE) | KB(K_UPDATES) | COMMON_KEYS, KB(K_SIZE) },
	[WL_CHASE] = { "chase", KB(K_SIZE) | KB(K_STEPS) | KB(K_STRIDE) | COMMON_KEYS,
		       KB(K_SIZE) },
	[WL_STRIDE] = { "stride", KB(K_SIZE) | KB(K_STRIDE) | KB(K_PASSES) | COMMON_KEYS,
			KB(K_SIZE) | KB(K_STRIDE) },
	[WL_ZIPF] = { "zipf", KB(K_SIZE) | KB(K_ALPHA) | KB(K_REFS) | COMMON_KEYS,
		      KB(K_SIZE) | KB(K_ALPHA) | KB(K_REFS) },
	[WL_KV] = { "kv", KB(K_SIZE) | KB(K_VALUE) | KB(K_DELETE) | KB(K_GAP) | KB(K_TAIL) | COMMON_KEYS, KB(K_SIZE) },
};

/* Parsed key values; `given` is a KB() mask. */
struct wl_params {
	uint64_t u[K_NR];
	double alpha;
	unsigned given;
};

/* Where a workload is in its program. */
enum wl_phase { PH_EVENTS, PH_INIT, PH_MAIN, PH_DONE };

struct wl_reader {
	struct trace_reader head; /* first: the trace_reader handed out */
	enum wl_kind kind;
	enum wl_phase phase;
	gsl_rng *rng;

	/* The program's parameters. */
	uint64_t n;       /* elements: doubles, words, lines, loads per pass, or refs */
	uint64_t repeat;  /* stream iterations, stride passes */
	uint64_t count;   /* gups updates, chase steps */
	uint64_t stride;  /* stride: bytes between loads; chase: bytes per element */
	uint32_t ref_size; /* stride: bytes per load */

	/* Progress. */
	uint64_t i;    /* element within the current loop */
	uint64_t pass; /* iteration of the outer loop; chase: position in order[] */

	/* Mappings, in the order they are made. */
	vaddr_t map_addr[WL_MAPS_MAX];
	uint64_t map_len[WL_MAPS_MAX];
	unsigned nmaps;
	bool madvise;
	enum os_kernel kernel; /* whose mmap placement (wl_map()) */

	uint32_t *order;             /* chase: the element visited at each step of a lap */
	uint32_t *page_of_rank;      /* zipf: rank - 1 -> page */
	gsl_ran_discrete_t *zipf;    /* zipf: alias table over ranks */
	uint32_t *victims;           /* kv: the values deleted, in deletion order */
	uint64_t value;              /* kv: bytes a value */
	uint64_t ndel;               /* kv: values deleted */
	uint64_t gap;                /* kv: instructions between deleting and inserting again */
	uint64_t tail;               /* kv: instructions after the last insert */
	struct os_event *kev;        /* kv: a batch's madvise events */

	struct os_event ev[WL_EV_MAX];
};

static int wl_err(struct err *e, enum wl_kind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "-w: <workload>: <message>" */
static int wl_err(struct err *e, enum wl_kind k, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(e, "-w", 0, 0, "%s: %s", wl_kinds[k].name, msg);
}

static int wl_parse_value(enum wl_kind k, enum wl_key key, const char *val,
			  struct wl_params *p, struct err *e)
{
	const char *name = wl_keys[key].name;

	switch (wl_keys[key].type) {
	case T_SIZE:
		if (parse_size(val, &p->u[key]))
			return wl_err(e, k,
				      "bad %s '%s' (expected bytes with an optional K, M, G or T suffix)",
				      name, val);
		break;
	case T_COUNT:
		if (parse_count(val, &p->u[key]))
			return wl_err(e, k, "bad %s '%s' (expected an unsigned integer with an "
				      "optional K, M, G or T suffix)", name, val);
		break;
	case T_DOUBLE:
		if (parse_double(val, &p->alpha))
			return wl_err(e, k, "bad %s '%s' (expected a number)", name, val);
		break;
	case T_BOOL:
		if (strcmp(val, "0") && strcmp(val, "1"))
			return wl_err(e, k, "bad %s '%s' (expected 0 or 1)", name, val);
		p->u[key] = val[0] == '1';
		break;
	}
	return 0;
}

/* Parse "key=value,key=value" (@s may be NULL: no parameters) for workload @k. */
static int wl_parse_params(enum wl_kind k, const char *s, struct wl_params *p, struct err *e)
{
	char buf[1024];
	char *tok, *save = NULL;
	size_t len;

	if (!s)
		return 0;
	len = strlen(s);
	if (len >= sizeof(buf))
		return wl_err(e, k, "parameter list too long (%zu characters, at most %zu)",
			      len, sizeof(buf) - 1);
	memcpy(buf, s, len + 1);
	if (len && (buf[0] == ',' || buf[len - 1] == ',' || strstr(buf, ",,")))
		return wl_err(e, k, "empty parameter in '%s'", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		unsigned key;

		if (!eq)
			return wl_err(e, k, "parameter '%s' has no value (expected key=value)", tok);
		*eq = '\0';
		for (key = 0; key < K_NR; key++)
			if (!strcmp(tok, wl_keys[key].name))
				break;
		if (key == K_NR || !(wl_kinds[k].allowed & KB(key)))
			return wl_err(e, k, "unknown parameter '%s'", tok);
		if (p->given & KB(key))
			return wl_err(e, k, "parameter '%s' given twice", tok);
		if (!eq[1])
			return wl_err(e, k, "parameter '%s' has an empty value", tok);
		if (wl_parse_value(k, key, eq + 1, p, e))
			return -1;
		p->given |= KB(key);
	}
	return 0;
}

/*
 * Place a mapping of @len bytes below the lowest one so far (top-down from
 * WL_MMAP_BASE; 2 MiB aligned when the kernel aligns that length) and record it.
 */
static int wl_map(struct wl_reader *w, uint64_t len, struct err *e)
{
	vaddr_t top = w->nmaps ? w->map_addr[w->nmaps - 1] : WL_MMAP_BASE;
	uint64_t align;
	vaddr_t addr;

	BUG_ON(w->nmaps >= WL_MAPS_MAX);
	/* The first test keeps the rounding below from overflowing. */
	if (len > WL_MMAP_BASE || ((len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1)) > top - WL_MMAP_MIN)
		goto nospace;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	align = kernel_thp_aligns_mmap(w->kernel, len) ? PMD_SIZE : PAGE_SIZE;
	addr = (top - len) & ~(align - 1);
	if (addr < WL_MMAP_MIN)
		goto nospace;
	w->map_addr[w->nmaps] = addr;
	w->map_len[w->nmaps] = len;
	w->nmaps++;
	return 0;
nospace:
	return wl_err(e, w->kind, "the mappings do not fit below mmap_base 0x%llx", WL_MMAP_BASE);
}

/* A uniform integer in [0, n), n >= 1; mt19937 yields 32 bits per draw. */
static inline uint64_t wl_uniform(const gsl_rng *r, uint64_t n)
{
	uint64_t x, rem;

	if (likely(n <= 0xffffffffULL))
		return gsl_rng_uniform_int(r, n);
	/* Two draws make 64 bits; rejecting the top 2^64 mod n values keeps it uniform. */
	rem = (UINT64_MAX % n + 1) % n;
	do {
		x = (uint64_t)gsl_rng_get(r) << 32;
		x |= gsl_rng_get(r);
	} while (rem && x > UINT64_MAX - rem);
	return x % n;
}

/*
 * Sattolo's algorithm makes next[] (element -> its successor) one cycle through
 * all @n elements (cache lines at the default stride); the lap from element 0 is then written out as order[], so that
 * generating a step reads order[] sequentially instead of chasing next[]
 * (measured on chase:size=64M,steps=20000000: 44 M -> 210 M refs/s).
 * next[] lives only during set-up.
 */
static int chase_build(struct wl_reader *w, uint64_t n, struct err *e)
{
	uint32_t *next = malloc(n * sizeof(*next));
	uint32_t cur = 0;
	uint64_t i;

	w->order = malloc(n * sizeof(*w->order));
	if (!next || !w->order) {
		free(next);
		return wl_err(e, w->kind, "out of memory for %llu lines", (unsigned long long)n);
	}
	for (i = 0; i < n; i++)
		next[i] = (uint32_t)i;
	for (i = n - 1; i > 0; i--) {
		uint64_t j = wl_uniform(w->rng, i); /* j < i: never a fixed point */
		uint32_t t = next[i];

		next[i] = next[j];
		next[j] = t;
	}
	for (i = 0; i < n; i++) {
		w->order[i] = cur;
		cur = next[cur];
	}
	BUG_ON(cur != 0); /* one cycle: the lap ends where it began */
	free(next);
	return 0;
}

static int zipf_build(struct wl_reader *w, uint64_t pages, double alpha, struct err *e)
{
	double *weight = malloc(pages * sizeof(*weight));
	uint64_t k;

	w->page_of_rank = malloc(pages * sizeof(*w->page_of_rank));
	if (!weight || !w->page_of_rank) {
		free(weight);
		return wl_err(e, w->kind, "out of memory for %llu pages", (unsigned long long)pages);
	}
	for (k = 0; k < pages; k++) {
		weight[k] = pow((double)(k + 1), -alpha);
		w->page_of_rank[k] = (uint32_t)k;
	}
	w->zipf = gsl_ran_discrete_preproc(pages, weight);
	free(weight);
	if (!w->zipf)
		return wl_err(e, w->kind, "out of memory for %llu pages", (unsigned long long)pages);
	gsl_ran_shuffle(w->rng, w->page_of_rank, pages, sizeof(*w->page_of_rank));
	return 0;
}

static void wl_close(struct trace_reader *r)
{
	struct wl_reader *w = (struct wl_reader *)r;

	if (!w)
		return;
	if (w->rng)
		gsl_rng_free(w->rng);
	if (w->zipf)
		gsl_ran_discrete_free(w->zipf);
	free(w->order);
	free(w->page_of_rank);
	free(w->victims);
	free(w->kev);
	trace_reader_free(&w->head);
}

static inline void rec_put(struct trace_rec *r, vaddr_t addr, uint32_t size, uint32_t kind)
{
	r->addr = addr;
	r->size = size;
	r->kind = kind;
}

/* The mmap (and madvise) events, one R_EVENT record each. */
static size_t wl_emit_events(struct wl_reader *w, struct trace_batch *b)
{
	size_t nev = 0;
	unsigned m;

	for (m = 0; m < w->nmaps; m++) {
		struct os_event *ev = &w->ev[nev];

		memset(ev, 0, sizeof(*ev));
		ev->kind = EV_MMAP;
		ev->prot = WL_PROT_RW;
		ev->flags = MAP_PRIVATE_ | MAP_ANONYMOUS_;
		ev->fd = -1;
		ev->addr = w->map_addr[m];
		ev->len = w->map_len[m];
		rec_put(&w->head.rec[nev], 0, (uint32_t)nev, R_EVENT);
		nev++;
		if (!w->madvise)
			continue;
		ev = &w->ev[nev];
		memset(ev, 0, sizeof(*ev));
		ev->kind = EV_MADVISE;
		ev->advice = MADV_HUGEPAGE_;
		ev->addr = w->map_addr[m];
		ev->len = w->map_len[m];
		rec_put(&w->head.rec[nev], 0, (uint32_t)nev, R_EVENT);
		nev++;
	}
	b->ev = w->ev;
	b->nev = nev;
	return nev;
}

/*
 * The fill functions append records to @r[0..cap) from where the program
 * stopped and return how many they wrote. They stop at a loop-iteration
 * boundary when the next iteration's records do not fit, and set PH_DONE
 * when the program ends.
 */
static size_t stream_fill(struct wl_reader *w, struct trace_rec *r, size_t cap)
{
	const vaddr_t a = w->map_addr[0], b = w->map_addr[1], c = w->map_addr[2];
	const uint64_t n = w->n;
	uint64_t j = w->i;
	size_t k = 0;

	if (w->phase == PH_INIT) {
		for (; j < n && k + 4 <= cap; j++, k += 4) {
			rec_put(&r[k], 0, INSNS_STREAM_INIT, R_INSNS);
			rec_put(&r[k + 1], a + 8 * j, 8, R_STORE);
			rec_put(&r[k + 2], b + 8 * j, 8, R_STORE);
			rec_put(&r[k + 3], c + 8 * j, 8, R_STORE);
		}
		w->i = j;
		if (j < n)
			return k;
		w->phase = PH_MAIN;
		w->i = j = 0;
		w->pass = 0;
	}
	while (w->pass < w->repeat) {
		for (; j < n && k + 4 <= cap; j++, k += 4) {
			rec_put(&r[k], 0, INSNS_STREAM_TRIAD, R_INSNS);
			rec_put(&r[k + 1], b + 8 * j, 8, R_LOAD);
			rec_put(&r[k + 2], c + 8 * j, 8, R_LOAD);
			rec_put(&r[k + 3], a + 8 * j, 8, R_STORE);
		}
		w->i = j;
		if (j < n)
			return k;
		w->i = j = 0;
		w->pass++;
	}
	w->phase = PH_DONE;
	return k;
}

static size_t gups_fill(struct wl_reader *w, struct trace_rec *r, size_t cap)
{
	const vaddr_t t = w->map_addr[0];
	uint64_t i = w->i;
	size_t k = 0;

	if (w->phase == PH_INIT) {
		for (; i < w->n && k + 2 <= cap; i++, k += 2) {
			rec_put(&r[k], 0, INSNS_GUPS_INIT, R_INSNS);
			rec_put(&r[k + 1], t + 8 * i, 8, R_STORE);
		}
		w->i = i;
		if (i < w->n)
			return k;
		w->phase = PH_MAIN;
		w->i = i = 0;
	}
	for (; i < w->count && k + 2 <= cap; i++, k += 2) {
		rec_put(&r[k], 0, INSNS_GUPS_UPDATE, R_INSNS);
		rec_put(&r[k + 1], t + 8 * wl_uniform(w->rng, w->n), 8, R_MODIFY);
	}
	w->i = i;
	if (i == w->count)
		w->phase = PH_DONE;
	return k;
}

static size_t chase_fill(struct wl_reader *w, struct trace_rec *r, size_t cap)
{
	const vaddr_t base = w->map_addr[0];
	const uint32_t *order = w->order;
	uint64_t i = w->i, pos = w->pass;
	size_t k = 0;

	if (w->phase == PH_INIT) {
		for (; i < w->n && k + 2 <= cap; i++, k += 2) {
			rec_put(&r[k], 0, INSNS_CHASE_INIT, R_INSNS);
			rec_put(&r[k + 1], base + w->stride * i, 8, R_STORE);
		}
		w->i = i;
		if (i < w->n)
			return k;
		w->phase = PH_MAIN;
		w->i = i = 0;
		pos = 0;
	}
	for (; i < w->count && k + 3 <= cap; i++) {
		rec_put(&r[k++], 0, INSNS_CHASE_STEP, R_INSNS);
		if (i) /* p = p->next: the address is the last load's value (the first is the list's head) */
			rec_put(&r[k++], 0, 1, R_DEP);
		rec_put(&r[k++], base + w->stride * order[pos], 8, R_LOAD);
		if (++pos == w->n)
			pos = 0;
	}
	w->i = i;
	w->pass = pos;
	if (i == w->count)
		w->phase = PH_DONE;
	return k;
}

static size_t stride_fill(struct wl_reader *w, struct trace_rec *r, size_t cap)
{
	const vaddr_t base = w->map_addr[0];
	uint64_t i = w->i;
	size_t k = 0;

	while (w->pass < w->repeat) {
		for (; i < w->n && k + 2 <= cap; i++, k += 2) {
			rec_put(&r[k], 0, INSNS_STRIDE, R_INSNS);
			rec_put(&r[k + 1], base + i * w->stride, w->ref_size, R_LOAD);
		}
		w->i = i;
		if (i < w->n)
			return k;
		w->i = i = 0;
		w->pass++;
	}
	w->phase = PH_DONE;
	return k;
}

static size_t zipf_fill(struct wl_reader *w, struct trace_rec *r, size_t cap)
{
	const vaddr_t base = w->map_addr[0];
	uint64_t i = w->i;
	size_t k = 0;

	for (; i < w->n && k + 2 <= cap; i++, k += 2) {
		uint64_t page = w->page_of_rank[gsl_ran_discrete(w->rng, w->zipf)];
		uint64_t word = gsl_rng_uniform_int(w->rng, PAGE_SIZE / 8);

		rec_put(&r[k], 0, INSNS_ZIPF, R_INSNS);
		rec_put(&r[k + 1], base + (page << PAGE_SHIFT) + 8 * word, 8, R_LOAD);
	}
	w->i = i;
	if (i == w->n)
		w->phase = PH_DONE;
	return k;
}

/*
 * kv: PH_INIT the first inserts (pass 0), PH_MAIN the deletes (pass 0), the gap
 * (pass 1) and the second inserts (pass 2). Deletes are events: their records
 * index w->kev, which the batch's ev points to (nothing else of this batch is one).
 */
static size_t kv_fill(struct wl_reader *w, struct trace_rec *r, size_t cap, struct trace_batch *b)
{
	uint64_t i = w->i;
	size_t k = 0;

	if (w->phase == PH_INIT) {
		for (; i < w->n && k + 2 <= cap; i++, k += 2) {
			rec_put(&r[k], 0, INSNS_KV_STORE, R_INSNS);
			rec_put(&r[k + 1], w->map_addr[0] + 8 * i, 8, R_STORE);
		}
		w->i = i;
		if (i < w->n)
			return k;
		w->phase = PH_MAIN;
		w->i = i = 0;
		w->pass = 0;
		if (k) /* the deletes' events start a batch of their own */
			return k;
	}
	if (w->pass == 0) {
		b->ev = w->kev;
		for (; i < w->ndel && k < cap; i++, k++) {
			struct os_event *ev = &w->kev[k];

			memset(ev, 0, sizeof(*ev));
			ev->kind = EV_MADVISE;
			ev->advice = MADV_DONTNEED_;
			ev->addr = w->map_addr[0] + w->victims[i] * w->value;
			ev->len = w->value;
			rec_put(&r[k], 0, (uint32_t)k, R_EVENT);
		}
		b->nev = k;
		w->i = i;
		if (i < w->ndel)
			return k;
		w->i = 0;
		w->pass = 1;
		return k;
	}
	if (w->pass == 1 || w->pass == 3) {
		uint64_t end = w->pass == 1 ? w->gap : w->tail;

		for (; i < end && k < cap; k++) {
			uint64_t n = end - i < KV_GAP_CHUNK ? end - i : KV_GAP_CHUNK;

			rec_put(&r[k], 0, (uint32_t)n, R_INSNS);
			i += n;
		}
		w->i = i;
		if (i < end)
			return k;
		w->i = i = 0;
		if (w->pass++ == 3) {
			w->phase = PH_DONE;
			return k;
		}
	}
	for (; i < w->count && k + 2 <= cap; i++, k += 2) {
		rec_put(&r[k], 0, INSNS_KV_STORE, R_INSNS);
		rec_put(&r[k + 1], w->map_addr[1] + 8 * i, 8, R_STORE);
	}
	w->i = i;
	if (i == w->count) {
		w->i = 0;
		w->pass = 3;
		if (!w->tail)
			w->phase = PH_DONE;
	}
	return k;
}

static int wl_next(struct trace_reader *tr, struct trace_batch *b, struct err *e)
{
	struct wl_reader *w = (struct wl_reader *)tr;
	size_t n = 0;

	(void)e;
	b->recs = w->head.rec;
	b->ev = w->ev;
	b->nev = 0;
	if (w->phase == PH_EVENTS) {
		n = wl_emit_events(w, b);
		w->phase = w->kind == WL_STRIDE || w->kind == WL_ZIPF ? PH_MAIN : PH_INIT;
	}
	if (w->phase != PH_DONE) {
		struct trace_rec *r = w->head.rec + n;
		size_t cap = TRACE_BATCH - n;

		switch (w->kind) {
		case WL_STREAM: n += stream_fill(w, r, cap); break;
		case WL_GUPS: n += gups_fill(w, r, cap); break;
		case WL_CHASE: n += chase_fill(w, r, cap); break;
		case WL_STRIDE: n += stride_fill(w, r, cap); break;
		case WL_ZIPF: n += zipf_fill(w, r, cap); break;
		case WL_KV: n += kv_fill(w, r, cap, b); break;
		case WL_NR: BUG_ON(1);
		}
	}
	b->n = n;
	return (int)n;
}

static const struct trace_ops wl_ops = {
	.next = wl_next,
	.close = wl_close,
};

/*
 * Check the parsed values and set up the program of @w; with @build false only
 * check (no generator, no chase cycle or zipf tables: workload_check()).
 */
static int wl_setup(struct wl_reader *w, const struct wl_params *p, uint64_t seed, bool build,
		    struct err *e)
{
	enum wl_kind k = w->kind;
	uint64_t size = p->u[K_SIZE];
	unsigned key;

	for (key = 0; key < K_NR; key++)
		if ((wl_kinds[k].required & KB(key)) && !(p->given & KB(key)))
			return wl_err(e, k, "missing parameter '%s'", wl_keys[key].name);
	for (key = 0; key < K_NR; key++)
		if ((p->given & KB(key)) && wl_keys[key].type != T_BOOL &&
		    wl_keys[key].type != T_DOUBLE && key != K_SEED && p->u[key] == 0)
			return wl_err(e, k, "%s must not be 0", wl_keys[key].name);
	if (size % 8)
		return wl_err(e, k, "size %llu is not a multiple of 8", (unsigned long long)size);

	w->madvise = p->u[K_MADVISE];
	if (build) {
		w->rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(w->rng, (p->given & KB(K_SEED)) ? p->u[K_SEED] : seed);
	}

	switch (k) {
	case WL_STREAM:
		w->n = size / 8;
		w->repeat = (p->given & KB(K_ITERATIONS)) ? p->u[K_ITERATIONS] : STREAM_NTIMES;
		if (wl_map(w, size, e) || wl_map(w, size, e) || wl_map(w, size, e))
			return -1;
		break;
	case WL_GUPS:
		w->n = size / 8;
		w->count = (p->given & KB(K_UPDATES)) ? p->u[K_UPDATES]
						      : GUPS_UPDATES_PER_WORD * w->n;
		if (wl_map(w, size, e))
			return -1;
		break;
	case WL_CHASE:
		if (size % CACHE_LINE)
			return wl_err(e, k, "size %llu is not a multiple of %d",
				      (unsigned long long)size, CACHE_LINE);
		w->stride = (p->given & KB(K_STRIDE)) ? p->u[K_STRIDE] : CACHE_LINE;
		if (w->stride < CACHE_LINE || w->stride % CACHE_LINE)
			return wl_err(e, k, "stride %llu is not a multiple of %d",
				      (unsigned long long)w->stride, CACHE_LINE);
		if (w->stride > size)
			return wl_err(e, k, "stride %llu is larger than size %llu",
				      (unsigned long long)w->stride, (unsigned long long)size);
		if (size % w->stride)
			return wl_err(e, k, "size %llu is not a multiple of stride %llu",
				      (unsigned long long)size, (unsigned long long)w->stride);
		w->n = size / w->stride;
		if (w->n > CHASE_LINES_MAX)
			return wl_err(e, k, "%llu %s is more than the %llu supported",
				      (unsigned long long)w->n,
				      w->stride == CACHE_LINE ? "lines" : "elements",
				      CHASE_LINES_MAX);
		w->count = (p->given & KB(K_STEPS)) ? p->u[K_STEPS] : w->n;
		if (wl_map(w, size, e))
			return -1;
		if (build && chase_build(w, w->n, e))
			return -1;
		break;
	case WL_STRIDE:
		w->stride = p->u[K_STRIDE];
		if (w->stride > size)
			return wl_err(e, k, "stride %llu is larger than size %llu",
				      (unsigned long long)w->stride, (unsigned long long)size);
		w->n = size / w->stride;
		w->repeat = (p->given & KB(K_PASSES)) ? p->u[K_PASSES] : 1;
		w->ref_size = w->stride >= 8 ? 8 : w->stride >= 4 ? 4 : w->stride >= 2 ? 2 : 1;
		if (wl_map(w, size, e))
			return -1;
		break;
	case WL_ZIPF:
		if (!(p->alpha > 0))
			return wl_err(e, k, "alpha must be > 0");
		if (size % PAGE_SIZE)
			return wl_err(e, k, "size %llu is not a multiple of %lu",
				      (unsigned long long)size, PAGE_SIZE);
		if (size / PAGE_SIZE > ZIPF_PAGES_MAX)
			return wl_err(e, k, "%llu pages is more than the %llu supported",
				      (unsigned long long)(size / PAGE_SIZE), ZIPF_PAGES_MAX);
		w->n = p->u[K_REFS];
		if (wl_map(w, size, e))
			return -1;
		if (build && zipf_build(w, size / PAGE_SIZE, p->alpha, e))
			return -1;
		break;
	case WL_KV:
		w->value = (p->given & KB(K_VALUE)) ? p->u[K_VALUE] : KV_VALUE_DEFAULT;
		if (w->value % PAGE_SIZE)
			return wl_err(e, k, "value %llu is not a multiple of %lu (a value is whole pages)",
				      (unsigned long long)w->value, PAGE_SIZE);
		if (size % w->value)
			return wl_err(e, k, "size %llu is not a multiple of value %llu",
				      (unsigned long long)size, (unsigned long long)w->value);
		if (size / w->value > UINT32_MAX)
			return wl_err(e, k, "more than 2^32 values");
		if ((p->given & KB(K_DELETE)) && p->u[K_DELETE] > 100)
			return wl_err(e, k, "delete %llu is not a percentage from 1 to 100",
				      (unsigned long long)p->u[K_DELETE]);
		w->n = size / 8;
		w->ndel = size / w->value * ((p->given & KB(K_DELETE)) ? p->u[K_DELETE] : KV_DELETE_DEFAULT) / 100;
		w->count = w->ndel * w->value / 8;
		w->gap = (p->given & KB(K_GAP)) ? p->u[K_GAP] : 0;
		w->tail = (p->given & KB(K_TAIL)) ? p->u[K_TAIL] : 0;
		if (wl_map(w, size, e) || (w->ndel && wl_map(w, w->ndel * w->value, e)))
			return -1;
		if (build) {
			uint64_t nv = size / w->value;

			w->victims = malloc(nv * sizeof(*w->victims));
			w->kev = malloc(TRACE_BATCH * sizeof(*w->kev));
			if (!w->victims || !w->kev)
				return wl_err(e, k, "out of memory for %llu values", (unsigned long long)nv);
			for (uint64_t v = 0; v < nv; v++)
				w->victims[v] = (uint32_t)v;
			/* the first ndel of a Fisher-Yates shuffle: a uniform sample, in a random order */
			for (uint64_t v = 0; v < w->ndel; v++) {
				uint64_t j = v + wl_uniform(w->rng, nv - v);
				uint32_t t = w->victims[v];

				w->victims[v] = w->victims[j];
				w->victims[j] = t;
			}
		}
		break;
	case WL_NR:
		BUG_ON(1);
	}
	return 0;
}

/* Parse @spec ("name:key=value,..."; NULL is "") into its kind and parameters. */
static int wl_parse(const char *spec, enum wl_kind *kind, struct wl_params *p, struct err *e)
{
	const char *colon;
	size_t namelen;
	unsigned k;

	if (!spec)
		spec = "";
	colon = strchr(spec, ':');
	namelen = colon ? (size_t)(colon - spec) : strlen(spec);
	for (k = 0; k < WL_NR; k++)
		if (strlen(wl_kinds[k].name) == namelen && !strncmp(spec, wl_kinds[k].name, namelen))
			break;
	if (k == WL_NR)
		return err_set(e, "-w", 0, 0, "unknown workload '%.*s'",
			       (int)(namelen > 64 ? 64 : namelen), spec);
	memset(p, 0, sizeof(*p));
	*kind = k;
	return wl_parse_params(k, colon ? colon + 1 : NULL, p, e);
}

int workload_check(const char *spec, struct err *e)
{
	struct wl_params p;
	struct wl_reader w;

	memset(&w, 0, sizeof(w));
	w.kernel = KERNEL_DEFAULT;
	if (wl_parse(spec, &w.kind, &p, e))
		return -1;
	return wl_setup(&w, &p, 0, false, e);
}

struct trace_reader *workload_open(const char *spec, uint64_t seed, struct err *e)
{
	return workload_open_kernel(spec, seed, KERNEL_DEFAULT, e);
}

struct trace_reader *workload_open_kernel(const char *spec, uint64_t seed, enum os_kernel kernel,
					  struct err *e)
{
	struct wl_params p;
	struct wl_reader *w;
	enum wl_kind k;

	if (wl_parse(spec, &k, &p, e))
		return NULL;
	w = trace_reader_alloc(sizeof(*w), &wl_ops, TF_WORKLOAD, spec ? spec : "", NULL);
	if (!w) {
		wl_err(e, k, "out of memory");
		return NULL;
	}
	w->kind = k;
	w->kernel = kernel;
	w->phase = PH_EVENTS;
	w->head.deps = true; /* every dependence is emitted (header comment) */
	if (wl_setup(w, &p, seed, true, e)) {
		wl_close(&w->head);
		return NULL;
	}
	return &w->head;
}

/* --- parameters as sweep axes ---------------------------------------------- */

static int wl_key_index(const char *key)
{
	for (unsigned k = 0; k < K_NR; k++)
		if (!strcmp(key, wl_keys[k].name))
			return (int)k;
	return -1;
}

bool workload_param_known(const char *key)
{
	return wl_key_index(key) >= 0;
}

int workload_param_number(const char *key, const char *val, char *buf, size_t n)
{
	int k = wl_key_index(key);
	struct wl_params p;
	struct err e = { 0 };

	if (k < 0)
		return -1;
	memset(&p, 0, sizeof(p));
	/* any kind accepting the key parses its value the same way */
	for (unsigned w = 0; w < WL_NR; w++)
		if (wl_kinds[w].allowed & KB(k)) {
			if (wl_parse_value(w, (enum wl_key)k, val, &p, &e))
				return -1;
			break;
		}
	if (wl_keys[k].type == T_DOUBLE)
		snprintf(buf, n, "%.15g", p.alpha);
	else
		snprintf(buf, n, "%llu", (unsigned long long)p.u[k]);
	return 0;
}

char *workload_with_param(const char *spec, const char *key, const char *val, struct err *e)
{
	const char *colon = strchr(spec, ':'), *s = colon ? colon + 1 : "";
	size_t klen = strlen(key), olen = 0;
	char *out = NULL, sep = ':';
	FILE *f = open_memstream(&out, &olen);
	bool done = false;

	if (!f) {
		err_host(e, "-w", 0, 0, "out of memory");
		return NULL;
	}
	fwrite(spec, 1, colon ? (size_t)(colon - spec) : strlen(spec), f);
	/* the parameters in their order, @key's value replaced where it was (else appended) */
	while (*s) {
		size_t tl = strcspn(s, ",");

		fputc(sep, f);
		sep = ',';
		if (!done && tl > klen && !strncmp(s, key, klen) && s[klen] == '=') {
			fprintf(f, "%s=%s", key, val);
			done = true;
		} else {
			fwrite(s, 1, tl, f);
		}
		s += tl;
		s += *s == ',';
	}
	if (!done)
		fprintf(f, "%c%s=%s", sep, key, val);
	if (fclose(f)) {
		free(out);
		err_host(e, "-w", 0, 0, "out of memory");
		return NULL;
	}
	return out;
}

bool workload_is_spec(const char *s)
{
	size_t n = strcspn(s, ":");

	for (unsigned k = 0; k < WL_NR; k++)
		if (strlen(wl_kinds[k].name) == n && !strncmp(s, wl_kinds[k].name, n))
			return true;
	return false;
}

char *workload_without_param(const char *spec, const char *key)
{
	const char *colon = strchr(spec, ':'), *s = colon ? colon + 1 : "";
	size_t klen = strlen(key), olen = 0;
	char *out = NULL, sep = ':';
	FILE *f = open_memstream(&out, &olen);

	if (!f)
		return NULL;
	fwrite(spec, 1, colon ? (size_t)(colon - spec) : strlen(spec), f);
	while (*s) {
		size_t tl = strcspn(s, ",");

		if (!(tl > klen && !strncmp(s, key, klen) && s[klen] == '=')) {
			fputc(sep, f);
			sep = ',';
			fwrite(s, 1, tl, f);
		}
		s += tl;
		s += *s == ',';
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}
