/*
 * virt_chase.c - the native side of issue 15's table: on the machine it runs on,
 * the time per step of a pointer chase over one cache line per 4 KiB page and
 * the time per update of GUPS, each with the buffer in 4 KiB pages
 * (madvise(MADV_NOHUGEPAGE)) and in transparent huge pages (madvise(MADV_HUGEPAGE)),
 * as a CSV on stdout:
 *
 *   workload,footprint,pages,ns_per_step,anon_huge_share,runs
 *
 * workload is chase or gups; footprint the buffer in bytes; pages 4K or thp;
 * ns_per_step the median over the runs of (time / steps) in nanoseconds (a chase
 * step or a GUPS update); anon_huge_share the smallest share of the buffer that
 * /proc/self/smaps reported as AnonHugePages over the runs (0 to 1); runs how
 * many runs the median is taken over.
 *
 *   virt_chase            footprints 16M, 64M, 256M, 1G (chase) and 1G (GUPS), 5 runs
 *   virt_chase --quick    a smoke run for make check: 4M each, 3 short runs
 *   virt_chase --model    the shapes `make native-model` sets beside the model
 *                         (tests/native/model_compare.sh): first the clock,
 *                         memlat, bw and triadl1 rows,
 *                         then chase and GUPS at 64M, 256M and 1G and a STREAM
 *                         triad over three arrays of 64M each, 5 runs
 *
 * In --model mode two more workloads appear. "clock" (pages 4K only, footprint
 * 16384): the same chase over the 256 cache lines of a 16 KiB buffer (stride 64,
 * one random cycle), resident in the L1D and the L1 DTLB, whose ns per step is
 * the core's load-to-use latency: 4 cycles on Zen 5 (configs/zen5.yaml,
 * cache.l1d.latency), so 4 / ns is the clock in GHz as it ran in this session
 * (/proc/cpuinfo's MHz is the guest's TSC rate, not the core clock). "stream"
 * (footprint: bytes per array): STREAM's triad a[j] = b[j] + s * c[j] (stream.c
 * 5.10) over three separately mapped arrays of doubles, initialised as stream.c
 * does (a = 1, b = 2, c = 0), compiled without vectorisation as the model's
 * stream workload counts it (sim/workload.c: scalar loads of b[j] and c[j], a
 * store to a[j]); a step is one element j (ns per element), after one untimed pass.
 * "memlat" (pages 4K only, footprint 12 MiB): a chase through all the cache lines
 * of 12 MiB in one random cycle (stride 64): 3072 pages, inside the L2 DTLB's 4096
 * entries, so nearly every step is a TLB hit, and past the last-level cache this
 * guest gets (its measured knee: 26 ns per step at 8 MiB, 122-157 ns at 10-12 MiB,
 * 2026-12-05), so nearly every step goes to memory: the memory latency without
 * translation, which configs/zen5.yaml's cache.dram_latency takes in cycles.
 *
 * "bw" (pages 4K only, footprint 256 MiB): a sequential read of every 8-byte word
 * of 256 MiB (four independent integer sums, so the adds never bound it), a step
 * being one 64-byte line: ns per line, so 64 / ns is the sustained read
 * bandwidth in GB/s with the hardware prefetchers streaming, the figure
 * configs/zen5.yaml's cache.dram_bandwidth takes in bytes a cycle (measured
 * apart from STREAM: a read sweep, not the triad). "triadl1" (pages 4K only,
 * footprint 8 KiB per array): the same scalar triad as the stream rows over
 * three arrays of 1024 doubles, 24 KiB that stay in the 48 KiB L1D: ns per
 * element with no miss at all, so its cycles over the 7 instructions the model
 * counts per element (sim/workload.c) are the base CPI of that work, the
 * figure configs/zen5.yaml's cpu.cpi takes.
 *
 * The chase has the shape of mmusim's chase:size=S,stride=4K workload
 * (sim/workload.c): one random cycle through the S/4K pages made by Sattolo's
 * algorithm, each page visited at its first 8 bytes, the next pointers stored in
 * address order (which also faults every page in), then dependent 8-byte loads
 * from page 0. GUPS is HPCC RandomAccess's update loop (Table[i] = i written in
 * order, then Table[r & (words - 1)] ^= r) with xorshift64* in place of HPCC's
 * LFSR. Both generators have fixed seeds, so every run chases the same cycle and
 * updates the same words.
 *
 * Each run maps a fresh buffer (its own physical pages: the runs differ in
 * placement, not only in timing noise), 2 MiB aligned, of exactly the footprint,
 * applies the madvise before touching it, touches it, reads the buffer's
 * AnonHugePages from /proc/self/smaps, walks one untimed lap (chase) or 2^20
 * untimed updates (GUPS) and then times chunks of steps until at least
 * min_seconds and min_steps have passed. The 4K and thp runs alternate (4K
 * first in even runs, thp first in odd ones), so a drift of the machine (another
 * job starting) falls on both alike. The process stays
 * on the CPU it started on. The CPUID brand, family and model and the per-run
 * numbers go to stderr.
 *
 * Exit status: 0, or 2 with a message for a bad argument, 1 when the machine
 * refuses (mmap, /proc/self/smaps).
 */
#define _GNU_SOURCE
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "native_lib.h"

#define MAXRUNS 15
#define CHUNK (1UL << 16)       /* steps between two looks at the clock */
#define GUPS_WARM (1UL << 20)   /* untimed updates before a GUPS run */

enum pages { PG_4K, PG_THP };
static const char *const pages_name[] = { "4K", "thp" };

struct opts {
	uint64_t chase_sizes[8];
	unsigned nchase;
	uint64_t gups_sizes[8];
	unsigned ngups;
	uint64_t stream_size; /* bytes per array; 0: no STREAM rows */
	int clock;            /* the clock row first */
	unsigned runs;
	double min_seconds;
	uint64_t min_steps;
};

struct result {
	double ns[MAXRUNS];
	double min_share;
};

/* @n random read-modify-writes of @t[0..mask] from generator state @s. */
static __attribute__((noinline)) void gups_updates(uint64_t *t, uint64_t mask, uint64_t *s,
						   uint64_t n)
{
	uint64_t x = *s;

	while (n--) {
		uint64_t r;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		r = x * 0x2545F4914F6CDD1DULL;
		t[r & mask] ^= r;
	}
	*s = x;
}

/* next[]: one cycle through all @n pages (sattolo(), native_lib.h). */
static uint32_t *chase_cycle(uint64_t n)
{
	uint32_t *next = malloc(n * sizeof(*next));

	if (next)
		sattolo(next, n);
	return next;
}

static void *volatile sink;
static volatile uint64_t sink_u;

/* One timed chase run over a fresh buffer; the ns per step, or -1. */
static double chase_run(uint64_t size, enum pages pg, const uint32_t *next,
			const struct opts *o, double *share)
{
	uint64_t n = size / PAGE, i, steps = 0;
	char *buf = buf_map(size, pg);
	void *p;
	double t0, t;

	if (!buf)
		return -1;
	for (i = 0; i < n; i++) /* the next pointers, in address order: faults every page */
		*(void **)(buf + i * PAGE) = buf + (uint64_t)next[i] * PAGE;
	*share = huge_share(buf, size);
	p = chase_steps(buf, n < CHUNK ? CHUNK : n); /* one untimed lap */
	t0 = now();
	do {
		p = chase_steps(p, CHUNK);
		steps += CHUNK;
		t = now() - t0;
	} while (t < o->min_seconds || steps < o->min_steps);
	sink = p;
	munmap(buf, size);
	return t / (double)steps * 1e9;
}

/* One timed GUPS run over a fresh table; the ns per update, or -1. */
static double gups_run(uint64_t size, enum pages pg, const struct opts *o, double *share)
{
	uint64_t words = size / 8, i, steps = 0, s = 0x2545F4914F6CDD1DULL;
	uint64_t *t = (uint64_t *)buf_map(size, pg);
	double t0, el;

	if (!t)
		return -1;
	for (i = 0; i < words; i++)
		t[i] = i;
	*share = huge_share((char *)t, size);
	gups_updates(t, words - 1, &s, GUPS_WARM);
	t0 = now();
	do {
		gups_updates(t, words - 1, &s, CHUNK);
		steps += CHUNK;
		el = now() - t0;
	} while (el < o->min_seconds || steps < o->min_steps);
	sink_u = t[s & (words - 1)];
	munmap(t, size);
	return el / (double)steps * 1e9;
}

static double median(double *v, unsigned n);

/* @passes of STREAM's triad over @n doubles; scalar, as sim/workload.c counts it. */
static __attribute__((noinline, optimize("no-tree-vectorize"))) void
triad(double *restrict a, const double *restrict b, const double *restrict c, uint64_t n,
      uint64_t passes)
{
	const double scalar = 3.0; /* stream.c's scalar */

	while (passes--) {
		for (uint64_t j = 0; j < n; j++)
			a[j] = b[j] + scalar * c[j];
		__asm__ volatile("" ::: "memory"); /* each pass is a pass */
	}
}

/* One timed STREAM triad run over three fresh arrays of @size bytes; ns per element, or -1. */
static double stream_run(uint64_t size, enum pages pg, const struct opts *o, double *share)
{
	uint64_t n = size / 8, j, steps = 0, passes = 0;
	double *a = (double *)buf_map(size, pg), *b = (double *)buf_map(size, pg);
	double *c = (double *)buf_map(size, pg);
	double t0, el, sa, sb, sc;

	if (!a || !b || !c) {
		if (a)
			munmap(a, size);
		if (b)
			munmap(b, size);
		if (c)
			munmap(c, size);
		return -1;
	}
	for (j = 0; j < n; j++) { /* stream.c's initialisation */
		a[j] = 1.0;
		b[j] = 2.0;
		c[j] = 0.0;
	}
	sa = huge_share((char *)a, size);
	sb = huge_share((char *)b, size);
	sc = huge_share((char *)c, size);
	*share = sa < sb ? (sa < sc ? sa : sc) : (sb < sc ? sb : sc);
	triad(a, b, c, n, 1); /* one untimed pass */
	t0 = now();
	do {
		triad(a, b, c, n, 1);
		passes++;
		steps += n;
		el = now() - t0;
	} while (el < o->min_seconds || steps < o->min_steps || passes < 2);
	sink_u = (uint64_t)a[n / 2];
	munmap(a, size);
	munmap(b, size);
	munmap(c, size);
	return el / (double)steps * 1e9;
}

/*
 * The clock row: a chase over the 256 lines of a 16 KiB buffer (L1D- and
 * L1 DTLB-resident), median ns per step of @o->runs runs; CSV row "clock".
 */
static int clock_row(const struct opts *o)
{
	enum { LINES = 256, LINE = 64 };
	static char buf[LINES * LINE] __attribute__((aligned(4096)));
	double ns[MAXRUNS];
	uint32_t next[LINES];
	unsigned run, i;

	sattolo(next, LINES);
	for (i = 0; i < LINES; i++)
		*(void **)(buf + i * LINE) = buf + (uint64_t)next[i] * LINE;
	for (run = 0; run < o->runs; run++) {
		uint64_t steps = 0;
		void *p = chase_steps(buf, CHUNK);
		double t0 = now(), t;

		do {
			p = chase_steps(p, CHUNK);
			steps += CHUNK;
			t = now() - t0;
		} while (t < o->min_seconds / 4 || steps < o->min_steps);
		sink = p;
		ns[run] = t / (double)steps * 1e9;
		fprintf(stderr, "clock %u 4K run %u: %.3f ns/step\n", LINES * LINE, run + 1, ns[run]);
	}
	printf("clock,%u,4K,%.3f,0.0000,%u\n", LINES * LINE, median(ns, o->runs), o->runs);
	fflush(stdout);
	return 0;
}

/*
 * The memlat row: a chase through every line of @size bytes (4 KiB pages) in one
 * random cycle, median ns per step of @o->runs runs; CSV row "memlat".
 */
static int memlat_row(uint64_t size, const struct opts *o)
{
	uint64_t n = size / 64, i;
	uint32_t *next = malloc(n * sizeof(*next));
	char *buf = buf_map(size, PG_4K);
	double ns[MAXRUNS];
	unsigned run;

	if (!next || !buf) {
		free(next);
		if (buf)
			munmap(buf, size);
		return -1;
	}
	sattolo(next, n);
	for (i = 0; i < n; i++)
		*(void **)(buf + i * 64) = buf + (uint64_t)next[i] * 64;
	free(next);
	for (run = 0; run < o->runs; run++) {
		uint64_t steps = 0;
		void *p = chase_steps(buf, n);
		double t0 = now(), t;

		do {
			p = chase_steps(p, CHUNK);
			steps += CHUNK;
			t = now() - t0;
		} while (t < o->min_seconds || steps < o->min_steps);
		sink = p;
		ns[run] = t / (double)steps * 1e9;
		fprintf(stderr, "memlat %llu 4K run %u: %.2f ns/step\n", (unsigned long long)size,
			run + 1, ns[run]);
	}
	munmap(buf, size);
	printf("memlat,%llu,4K,%.2f,0.0000,%u\n", (unsigned long long)size, median(ns, o->runs),
	       o->runs);
	fflush(stdout);
	return 0;
}

/* Sum every word of @w[0..n) with four independent accumulators. */
static __attribute__((noinline)) uint64_t read_sweep(const uint64_t *w, uint64_t n)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;

	for (uint64_t i = 0; i + 3 < n; i += 4) {
		s0 += w[i];
		s1 += w[i + 1];
		s2 += w[i + 2];
		s3 += w[i + 3];
	}
	return s0 + s1 + s2 + s3;
}

/*
 * The bw row: sequential reads of every word of @size bytes (4 KiB pages),
 * median ns per 64-byte line of @o->runs runs; CSV row "bw".
 */
static int bw_row(uint64_t size, const struct opts *o)
{
	uint64_t n = size / 8, i;
	uint64_t *w = (uint64_t *)buf_map(size, PG_4K);
	double ns[MAXRUNS];
	unsigned run;

	if (!w)
		return -1;
	for (i = 0; i < n; i++)
		w[i] = i;
	for (run = 0; run < o->runs; run++) {
		uint64_t lines = 0;
		double t0, t;

		sink_u = read_sweep(w, n); /* one untimed pass */
		t0 = now();
		do {
			sink_u = read_sweep(w, n);
			lines += size / 64;
			t = now() - t0;
		} while (t < o->min_seconds || lines < o->min_steps);
		ns[run] = t / (double)lines * 1e9;
		fprintf(stderr, "bw %llu 4K run %u: %.3f ns/line (%.2f GB/s)\n",
			(unsigned long long)size, run + 1, ns[run], 64 / ns[run]);
	}
	munmap(w, size);
	printf("bw,%llu,4K,%.3f,0.0000,%u\n", (unsigned long long)size, median(ns, o->runs), o->runs);
	fflush(stdout);
	return 0;
}

/*
 * The triadl1 row: the triad over three arrays of @n doubles that stay in the
 * L1D, median ns per element of @o->runs runs; CSV row "triadl1" (footprint:
 * bytes per array).
 */
static int triadl1_row(uint64_t n, const struct opts *o)
{
	static double a[1024], b[1024], c[1024] __attribute__((aligned(64)));
	double ns[MAXRUNS];
	unsigned run;

	if (n > 1024)
		return -1;
	for (uint64_t j = 0; j < n; j++) {
		a[j] = 1.0;
		b[j] = 2.0;
		c[j] = 0.0;
	}
	for (run = 0; run < o->runs; run++) {
		uint64_t steps = 0;
		double t0, t;

		triad(a, b, c, n, 64); /* warm */
		t0 = now();
		do {
			triad(a, b, c, n, CHUNK / n);
			steps += CHUNK / n * n;
			t = now() - t0;
		} while (t < o->min_seconds / 4 || steps < o->min_steps);
		ns[run] = t / (double)steps * 1e9;
		fprintf(stderr, "triadl1 %llu 4K run %u: %.4f ns/element\n",
			(unsigned long long)(n * 8), run + 1, ns[run]);
	}
	sink_u = (uint64_t)a[n / 2];
	printf("triadl1,%llu,4K,%.4f,0.0000,%u\n", (unsigned long long)(n * 8), median(ns, o->runs),
	       o->runs);
	fflush(stdout);
	return 0;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * @o->runs runs of @wl ("chase" or "gups") at @size for 4K and thp pages,
 * alternating; one CSV row per page size. 0, or -1 if the machine refused.
 */
static int measure(const char *wl, uint64_t size, const struct opts *o)
{
	struct result r[2] = { { .min_share = 2 }, { .min_share = 2 } };
	uint32_t *next = NULL;
	unsigned run;
	int pg;

	int is_stream = !strcmp(wl, "stream");

	if (!strcmp(wl, "chase") && !(next = chase_cycle(size / PAGE)))
		return -1;
	for (run = 0; run < o->runs; run++) {
		for (int k = 0; k < 2; k++) {
			double share = -1, ns;

			pg = run % 2 ? PG_THP - k : PG_4K + k; /* odd runs start with thp */

			ns = next ? chase_run(size, pg, next, o, &share)
			     : is_stream ? stream_run(size, pg, o, &share)
					 : gups_run(size, pg, o, &share);
			if (ns < 0 || share < 0) {
				fprintf(stderr, "virt_chase: %s %llu %s: %s failed\n", wl,
					(unsigned long long)size, pages_name[pg],
					ns < 0 ? "mmap/madvise" : "reading /proc/self/smaps");
				free(next);
				return -1;
			}
			r[pg].ns[run] = ns;
			if (share < r[pg].min_share)
				r[pg].min_share = share;
			fprintf(stderr, "%s %llu %s run %u: %.2f ns/step, AnonHugePages %.4f\n", wl,
				(unsigned long long)size, pages_name[pg], run + 1, ns, share);
		}
	}
	free(next);
	for (pg = PG_4K; pg <= PG_THP; pg++)
		printf("%s,%llu,%s,%.2f,%.4f,%u\n", wl, (unsigned long long)size, pages_name[pg],
		       median(r[pg].ns, o->runs), r[pg].min_share, o->runs);
	fflush(stdout);
	return 0;
}

/* The CPUID brand string, family and model on stderr (the machine of the numbers). */
static void print_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned r[12], a, b, c, d;
	char brand[49] = "";

	if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
		for (unsigned l = 0; l < 3; l++)
			__get_cpuid(0x80000002 + l, &r[4 * l], &r[4 * l + 1], &r[4 * l + 2],
				    &r[4 * l + 3]);
		memcpy(brand, r, 48);
		for (a = 48; a > 0 && (brand[a - 1] == ' ' || !brand[a - 1]); a--)
			brand[a - 1] = 0;
	}
	if (__get_cpuid(1, &a, &b, &c, &d))
		fprintf(stderr, "cpuid: \"%s\", family %u model %u stepping %u\n", brand,
			((a >> 8) & 0xf) + ((a >> 20) & 0xff), ((a >> 4) & 0xf) | ((a >> 12) & 0xf0),
			a & 0xf);
	if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 31)) { /* CPUID.1:ECX bit 31: a hypervisor */
		char sig[13];

		__cpuid(0x40000000, a, b, c, d); /* its signature: whose nested paging walks under us */
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		sig[12] = 0;
		fprintf(stderr, "cpuid 0x40000000 (hypervisor signature): \"%s\"\n", sig);
	}
#endif
}

static void pin_to_this_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set); /* best effort: unpinned still measures */
}

int main(int argc, char **argv)
{
	struct opts o = {
		.chase_sizes = { 16UL << 20, 64UL << 20, 256UL << 20, 1UL << 30 },
		.nchase = 4, .gups_sizes = { 1UL << 30 }, .ngups = 1, .runs = 5,
		.min_seconds = 1.0, .min_steps = 1UL << 22,
	};
	unsigned i;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--quick") && strcmp(argv[1], "--model"))) {
		fprintf(stderr,
			"virt_chase: %s: unknown argument\nusage: virt_chase [--quick | --model]\n",
			argv[argc == 2 ? 1 : 2]);
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "--model")) {
		o.chase_sizes[0] = 64UL << 20;
		o.chase_sizes[1] = 256UL << 20;
		o.chase_sizes[2] = 1UL << 30;
		o.nchase = 3;
		memcpy(o.gups_sizes, o.chase_sizes, sizeof(o.gups_sizes));
		o.ngups = 3;
		o.stream_size = 64UL << 20;
		o.clock = 1;
	} else if (argc == 2) {
		o.chase_sizes[0] = 4UL << 20;
		o.nchase = 1;
		o.gups_sizes[0] = 4UL << 20;
		o.runs = 3;
		o.min_seconds = 0.01;
		o.min_steps = CHUNK;
	}
	print_cpu();
	pin_to_this_cpu();
	printf("workload,footprint,pages,ns_per_step,anon_huge_share,runs\n");
	if (o.clock && (clock_row(&o) || memlat_row(12UL << 20, &o) || bw_row(256UL << 20, &o) ||
			triadl1_row(1024, &o)))
		return 1;
	for (i = 0; i < o.nchase; i++)
		if (measure("chase", o.chase_sizes[i], &o))
			return 1;
	for (i = 0; i < o.ngups; i++)
		if (measure("gups", o.gups_sizes[i], &o))
			return 1;
	if (o.stream_size && measure("stream", o.stream_size, &o))
		return 1;
	return 0;
}
