/*
 * check_workload.c - the built-in workloads (sim/workload.c): exact record
 * counts and order, the mmap/madvise events and the address layout, the chase
 * cycle (over every line, or one line per stride=B element, the default
 * stride pinned to the records from before stride= existed), stride
 * addresses, the Zipf popularity law, determinism by seed, counts with
 * K/M/G/T suffixes, and every error message for a bad spec, from
 * workload_open() and workload_check() alike.
 */
#include <check.h>

#include "check_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/workload.h"

#define MMAP_BASE 0x7f0000000000ULL
/* The tail of a bad count's message. */
#define BAD_COUNT " (expected an unsigned integer with an optional K, M, G or T suffix)"

/*
 * ck_assert() records a mark point (a write to the parent process) even when
 * it passes, which made the per-record checks take seconds; CHECK costs
 * nothing until it fails.
 */
#define CHECK(cond, ...)                           \
	do {                                       \
		if (!(cond))                       \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/*
 * A whole workload run, events renumbered into one array; R_DEP records are
 * counted in kinds[] and kept apart: dep[i] is the distance of the one right
 * before recs[i] (0: none), so recs[] holds the references and events alone.
 */
struct run {
	struct trace_rec *recs;
	uint32_t *dep;
	size_t n, cap;
	struct os_event *ev;
	size_t nev, evcap;
	uint64_t kinds[R_KIND_NR];
	uint64_t insns; /* sum of R_INSNS sizes */
};

static void run_free(struct run *r)
{
	free(r->recs);
	free(r->dep);
	free(r->ev);
	memset(r, 0, sizeof(*r));
}

/* Read @spec to the end, checking the batch contract on the way. */
static void run_collect(struct run *r, const char *spec, uint64_t seed)
{
	struct err e;
	struct trace_batch b;
	struct trace_reader *tr;
	uint32_t dep = 0;
	int got;

	memset(r, 0, sizeof(*r));
	memset(&e, 0, sizeof(e));
	tr = workload_open(spec, seed, &e);
	ck_assert_msg(tr, "%s: %s", spec, e.msg);
	ck_assert_int_eq(tr->format, TF_WORKLOAD);
	ck_assert(tr->deps); /* every workload emits its dependences */
	ck_assert_str_eq(tr->name, spec);
	while ((got = trace_next(tr, &b, &e)) > 0) {
		size_t i, used = 0;

		ck_assert_uint_eq((size_t)got, b.n);
		ck_assert_uint_le(b.n, TRACE_BATCH);
		if (r->n + b.n > r->cap) {
			r->cap = (r->n + b.n) * 2;
			r->recs = realloc(r->recs, r->cap * sizeof(*r->recs));
			r->dep = realloc(r->dep, r->cap * sizeof(*r->dep));
			ck_assert_ptr_nonnull(r->recs);
			ck_assert_ptr_nonnull(r->dep);
		}
		for (i = 0; i < b.n; i++) {
			struct trace_rec rec = b.recs[i];

			CHECK(rec.kind < R_KIND_NR, "record %zu: kind %u", r->n, rec.kind);
			r->kinds[rec.kind]++;
			/* a dependence: right before a reference, d >= 1, address 0 */
			CHECK(!dep || rec.kind <= R_MODIFY, "record %zu: an R_DEP before kind %u", r->n,
			      rec.kind);
			if (rec.kind == R_DEP) {
				CHECK(rec.size >= 1 && rec.addr == 0, "record %zu: R_DEP %u at 0x%llx",
				      r->n, rec.size, (unsigned long long)rec.addr);
				dep = rec.size;
				continue;
			}
			r->dep[r->n] = dep;
			dep = 0;
			if (rec.kind == R_INSNS)
				r->insns += rec.size;
			if (rec.kind == R_EVENT) {
				/* Events are used once each, in order. */
				CHECK(rec.size == used && rec.size < b.nev,
				      "record %zu: event %u of %zu, expected %zu", r->n, rec.size,
				      b.nev, used);
				ck_assert_uint_eq(b.ev[rec.size].line, 0);
				if (r->nev == r->evcap) {
					r->evcap = r->evcap ? 2 * r->evcap : 16;
					r->ev = realloc(r->ev, r->evcap * sizeof(*r->ev));
					ck_assert_ptr_nonnull(r->ev);
				}
				r->ev[r->nev] = b.ev[rec.size];
				rec.size = (uint32_t)r->nev++;
				used++;
			}
			r->recs[r->n++] = rec;
		}
		ck_assert_uint_eq(used, b.nev);
	}
	ck_assert_int_eq(got, 0);
	ck_assert_uint_eq(dep, 0); /* no R_DEP at the end */
	/* The end stays the end. */
	ck_assert_int_eq(trace_next(tr, &b, &e), 0);
	trace_close(tr);
}

/* The events of @spec: they all come in its first batch. */
static size_t first_events(const char *spec, struct os_event *ev, size_t max)
{
	struct err e;
	struct trace_batch b;
	struct trace_reader *tr;

	memset(&e, 0, sizeof(e));
	tr = workload_open(spec, 1, &e);
	ck_assert_msg(tr, "%s: %s", spec, e.msg);
	ck_assert_int_gt(trace_next(tr, &b, &e), 0);
	ck_assert_uint_le(b.nev, max);
	memcpy(ev, b.ev, b.nev * sizeof(*ev));
	trace_close(tr);
	return b.nev;
}

static uint64_t run_hash(const struct run *r)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	const unsigned char *p = (const unsigned char *)r->recs;
	size_t i;

	for (i = 0; i < r->n * sizeof(*r->recs); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	p = (const unsigned char *)r->ev;
	for (i = 0; i < r->nev * sizeof(*r->ev); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void check_rec_at(const struct trace_rec *rec, uint64_t addr, uint32_t size, uint32_t kind,
			 int line)
{
	CHECK(rec->kind == kind && rec->size == size &&
	      (kind == R_INSNS || kind == R_EVENT || rec->addr == addr),
	      "line %d: record {kind %u, size %u, addr 0x%llx}, expected {%u, %u, 0x%llx}", line,
	      rec->kind, rec->size, (unsigned long long)rec->addr, kind, size,
	      (unsigned long long)addr);
}

/* @rec is {kind, size, addr} (addr unchecked for R_INSNS and R_EVENT). */
#define check_rec(rec, addr, size, kind) check_rec_at(rec, addr, size, kind, __LINE__)

static void check_mmap(const struct os_event *ev, uint64_t addr, uint64_t len)
{
	ck_assert_uint_eq(ev->kind, EV_MMAP);
	ck_assert_uint_eq(ev->addr, addr);
	ck_assert_uint_eq(ev->len, len);
	ck_assert_uint_eq(ev->prot, 3);
	ck_assert_uint_eq(ev->flags, 0x22);
	ck_assert_int_eq(ev->fd, -1);
	ck_assert_uint_eq(ev->line, 0);
}

/* Every reference lies inside a mapping made before it. */
static void check_inside(const struct run *r)
{
	size_t i, nmaps = 0;

	for (i = 0; i < r->n; i++) {
		const struct trace_rec *rec = &r->recs[i];
		size_t m;
		bool ok = false;

		if (rec->kind == R_EVENT) {
			if (r->ev[rec->size].kind == EV_MMAP)
				nmaps = rec->size + 1;
			continue;
		}
		if (rec->kind == R_INSNS)
			continue;
		for (m = 0; m < nmaps && !ok; m++)
			ok = r->ev[m].kind == EV_MMAP && rec->addr >= r->ev[m].addr &&
			     rec->addr + rec->size <= r->ev[m].addr + r->ev[m].len;
		CHECK(ok, "record %zu at 0x%llx is outside every mapping", i,
		      (unsigned long long)rec->addr);
	}
}

START_TEST(test_stream_counts)
{
	const uint64_t a = MMAP_BASE - 0x10000, b = a - 0x10000, c = b - 0x10000;
	const uint64_t n = 65536 / 8;
	struct run r;
	size_t base;
	uint64_t j;

	run_collect(&r, "stream:size=64K,iterations=2", 1);
	ck_assert_uint_eq(r.kinds[R_EVENT], 3);
	ck_assert_uint_eq(r.kinds[R_DEP], 0); /* a[j], b[j], c[j]: from the index */
	ck_assert_uint_eq(r.kinds[R_LOAD], 2 * 2 * n);
	ck_assert_uint_eq(r.kinds[R_STORE], 3 * n + 2 * n);
	ck_assert_uint_eq(r.kinds[R_MODIFY], 0);
	ck_assert_uint_eq(r.kinds[R_IFETCH], 0);
	ck_assert_uint_eq(r.kinds[R_INSNS], n + 2 * n);
	ck_assert_uint_eq(r.insns, 6 * n + 7 * 2 * n);
	ck_assert_uint_eq(r.n, 3 + 4 * n + 2 * 4 * n);
	/* a, b, c are three 64 KiB mappings stacked down from mmap_base. */
	check_mmap(&r.ev[0], a, 65536);
	check_mmap(&r.ev[1], b, 65536);
	check_mmap(&r.ev[2], c, 65536);
	/* The init loop: a[j], b[j], c[j] stored per element. */
	for (j = 0; j < n; j++) {
		const struct trace_rec *rec = &r.recs[3 + 4 * j];

		check_rec(&rec[0], 0, 6, R_INSNS);
		check_rec(&rec[1], a + 8 * j, 8, R_STORE);
		check_rec(&rec[2], b + 8 * j, 8, R_STORE);
		check_rec(&rec[3], c + 8 * j, 8, R_STORE);
	}
	/* Two triad passes: load b[j], load c[j], store a[j]. */
	for (base = 3 + 4 * n; base < r.n; base += 4 * n)
		for (j = 0; j < n; j++) {
			const struct trace_rec *rec = &r.recs[base + 4 * j];

			check_rec(&rec[0], 0, 7, R_INSNS);
			check_rec(&rec[1], b + 8 * j, 8, R_LOAD);
			check_rec(&rec[2], c + 8 * j, 8, R_LOAD);
			check_rec(&rec[3], a + 8 * j, 8, R_STORE);
		}
	check_inside(&r);
	run_free(&r);

	/* iterations defaults to STREAM's NTIMES = 10. */
	run_collect(&r, "stream:size=8K", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 10 * 2 * 1024);
	ck_assert_uint_eq(r.kinds[R_STORE], 3 * 1024 + 10 * 1024);
	run_free(&r);
}
END_TEST

START_TEST(test_layout)
{
	struct os_event ev[6];
	struct run r;

	/*
	 * The default kernel (6.18) aligns only lengths that are a multiple of 2 MiB
	 * (d4148aeab412): 3 MiB mappings pack page-aligned. (6.8 aligned them: see
	 * tests/check_versions.c, which this case used to show before os.kernel.)
	 */
	ck_assert_uint_eq(first_events("stream:size=3M", ev, 6), 3);
	check_mmap(&ev[0], 0x7effffd00000ULL, 3 << 20);
	check_mmap(&ev[1], 0x7effffa00000ULL, 3 << 20);
	check_mmap(&ev[2], 0x7effff700000ULL, 3 << 20);
	/* Multiples of 2 MiB pack without holes. */
	ck_assert_uint_eq(first_events("stream:size=64M", ev, 6), 3);
	check_mmap(&ev[0], MMAP_BASE - (64ULL << 20), 64 << 20);
	check_mmap(&ev[1], MMAP_BASE - (128ULL << 20), 64 << 20);
	check_mmap(&ev[2], MMAP_BASE - (192ULL << 20), 64 << 20);
	/* Exactly 2 MiB. */
	ck_assert_uint_eq(first_events("gups:size=2M", ev, 6), 1);
	check_mmap(&ev[0], MMAP_BASE - (2 << 20), 2 << 20);
	/* 2 MiB - 8 rounds up to a 2 MiB mapping, which is aligned. */
	ck_assert_uint_eq(first_events("stream:size=2097144", ev, 6), 3);
	check_mmap(&ev[0], MMAP_BASE - (2 << 20), 2 << 20);
	check_mmap(&ev[1], MMAP_BASE - (4 << 20), 2 << 20);
	/* 5 MiB + 4 KiB: not a multiple of 2 MiB, so not aligned (6.18; see above). */
	ck_assert_uint_eq(first_events("stride:size=5246976,stride=4096", ev, 6), 1);
	check_mmap(&ev[0], MMAP_BASE - 5246976, 5246976);
	/* Below 2 MiB: 4 KiB alignment, so a 1 MiB + 4 KiB array is not 2 MiB aligned. */
	ck_assert_uint_eq(first_events("stream:size=1052672", ev, 6), 3);
	check_mmap(&ev[0], MMAP_BASE - 1052672, 1052672);
	check_mmap(&ev[1], MMAP_BASE - 2 * 1052672, 1052672);
	check_mmap(&ev[2], MMAP_BASE - 3 * 1052672, 1052672);
	/* A size below one page maps one page. */
	run_collect(&r, "stream:size=1000,iterations=1", 1);
	check_mmap(&r.ev[0], MMAP_BASE - 4096, 4096);
	check_mmap(&r.ev[1], MMAP_BASE - 8192, 4096);
	check_mmap(&r.ev[2], MMAP_BASE - 12288, 4096);
	ck_assert_uint_eq(r.kinds[R_STORE], 3 * 125 + 125);
	check_inside(&r);
	run_free(&r);
}
END_TEST

START_TEST(test_madvise)
{
	struct run r;
	unsigned m;

	run_collect(&r, "stream:size=2M,iterations=1,madvise=1", 1);
	ck_assert_uint_eq(r.kinds[R_EVENT], 6);
	for (m = 0; m < 3; m++) {
		const struct os_event *mm = &r.ev[2 * m], *ma = &r.ev[2 * m + 1];

		check_mmap(mm, MMAP_BASE - (2ULL << 20) * (m + 1), 2 << 20);
		ck_assert_uint_eq(ma->kind, EV_MADVISE);
		ck_assert_uint_eq(ma->addr, mm->addr);
		ck_assert_uint_eq(ma->len, mm->len);
		ck_assert_uint_eq(ma->advice, 14);
		ck_assert_uint_eq(ma->line, 0);
		/* The events are the first records, in that order. */
		ck_assert_uint_eq(r.recs[2 * m].kind, R_EVENT);
		ck_assert_uint_eq(r.recs[2 * m].size, 2 * m);
		ck_assert_uint_eq(r.recs[2 * m + 1].kind, R_EVENT);
		ck_assert_uint_eq(r.recs[2 * m + 1].size, 2 * m + 1);
	}
	ck_assert_uint_eq(r.recs[6].kind, R_INSNS);
	check_inside(&r);
	run_free(&r);

	run_collect(&r, "zipf:size=64K,alpha=1,refs=10,madvise=1", 1);
	ck_assert_uint_eq(r.kinds[R_DEP], 0);
	ck_assert_uint_eq(r.nev, 2);
	ck_assert_uint_eq(r.ev[1].kind, EV_MADVISE);
	ck_assert_uint_eq(r.ev[1].advice, 14);
	ck_assert_uint_eq(r.ev[1].addr, MMAP_BASE - 65536);
	run_free(&r);

	/* madvise=0 is the default. */
	run_collect(&r, "gups:size=64K,updates=1,madvise=0", 1);
	ck_assert_uint_eq(r.nev, 1);
	run_free(&r);
}
END_TEST


/*
 * kv (HawkEye's insert / delete 80 % / insert): 16 values of 4 KiB in a 64 KiB
 * arena, 12 deleted (80 % of 16, rounded down) by MADV_DONTNEED of exactly their
 * pages, each once, a gap of 70000 instructions as records of at most 2^16, and
 * 48 KiB inserted again into a second mapping below the arena.
 */
START_TEST(test_kv)
{
	struct run r;
	bool freed[16] = { false };
	vaddr_t arena, second;

	run_collect(&r, "kv:size=64K,gap=70000", 1);
	ck_assert_uint_eq(r.nev, 2 + 12);
	ck_assert_uint_eq(r.ev[0].kind, EV_MMAP);
	ck_assert_uint_eq(r.ev[0].len, 65536);
	ck_assert_uint_eq(r.ev[1].kind, EV_MMAP);
	ck_assert_uint_eq(r.ev[1].len, 12 * 4096);
	arena = r.ev[0].addr;
	second = r.ev[1].addr;
	ck_assert_uint_eq(second + 12 * 4096, arena);
	for (size_t i = 2; i < r.nev; i++) {
		uint64_t v = (r.ev[i].addr - arena) / 4096;

		ck_assert_uint_eq(r.ev[i].kind, EV_MADVISE);
		ck_assert_uint_eq(r.ev[i].advice, MADV_DONTNEED_);
		ck_assert_uint_eq(r.ev[i].len, 4096);
		ck_assert_uint_eq((r.ev[i].addr - arena) % 4096, 0);
		ck_assert_uint_lt(v, 16);
		ck_assert(!freed[v]);
		freed[v] = true;
	}
	ck_assert_uint_eq(r.kinds[R_STORE], 8192 + 6144);
	ck_assert_uint_eq(r.kinds[R_EVENT], 14);
	/* 4 a store, and the gap: 65536 + 4464 */
	ck_assert_uint_eq(r.insns, 4 * (8192 + 6144) + 70000);
	ck_assert_uint_eq(r.kinds[R_INSNS], 8192 + 6144 + 2);
	ck_assert_uint_eq(r.recs[r.n - 1].addr, second + 12 * 4096 - 8);
	run_free(&r);
	run_collect(&r, "kv:size=64K,value=16K,delete=50,tail=65537", 1);
	ck_assert_uint_eq(r.nev, 2 + 2);
	ck_assert_uint_eq(r.ev[2].len, 16384);
	ck_assert_uint_eq(r.insns, 4 * (8192 + 4096) + 65537);
	ck_assert_uint_eq(r.kinds[R_INSNS], 8192 + 4096 + 2);
	ck_assert_uint_eq(r.recs[r.n - 1].size, 1); /* the tail's last record */
	run_free(&r);
}
END_TEST

START_TEST(test_kv_errors)
{
	struct err e;

	ck_assert_int_eq(workload_check("kv:size=64K,value=1K", &e), -1);
	ck_assert_str_eq(e.msg, "kv: value 1024 is not a multiple of 4096 (a value is whole pages)");
	ck_assert_int_eq(workload_check("kv:size=64K,value=24K", &e), -1);
	ck_assert_str_eq(e.msg, "kv: size 65536 is not a multiple of value 24576");
	ck_assert_int_eq(workload_check("kv:size=64K,delete=101", &e), -1);
	ck_assert_str_eq(e.msg, "kv: delete 101 is not a percentage from 1 to 100");
	ck_assert_int_eq(workload_check("kv:size=64K,delete=100,gap=1M", &e), 0);
}
END_TEST

START_TEST(test_gups)
{
	const uint64_t t = MMAP_BASE - 0x10000, words = 8192;
	struct run r;
	uint64_t i;

	run_collect(&r, "gups:size=64K,updates=1000", 1);
	ck_assert_uint_eq(r.kinds[R_DEP], 0); /* HPCC's indices come from its LFSR, not a load */
	ck_assert_uint_eq(r.kinds[R_EVENT], 1);
	ck_assert_uint_eq(r.kinds[R_STORE], words);
	ck_assert_uint_eq(r.kinds[R_MODIFY], 1000);
	ck_assert_uint_eq(r.kinds[R_LOAD], 0);
	ck_assert_uint_eq(r.kinds[R_INSNS], words + 1000);
	ck_assert_uint_eq(r.insns, 4 * words + 12 * 1000);
	check_mmap(&r.ev[0], t, 65536);
	/* The table written once in order, then the updates. */
	for (i = 0; i < words; i++) {
		check_rec(&r.recs[1 + 2 * i], 0, 4, R_INSNS);
		check_rec(&r.recs[2 + 2 * i], t + 8 * i, 8, R_STORE);
	}
	for (i = 0; i < 1000; i++) {
		const struct trace_rec *rec = &r.recs[1 + 2 * words + 2 * i];

		check_rec(&rec[0], 0, 12, R_INSNS);
		CHECK(rec[1].kind == R_MODIFY && rec[1].size == 8 && (rec[1].addr - t) % 8 == 0,
		      "update %llu: kind %u size %u addr 0x%llx", (unsigned long long)i, rec[1].kind,
		      rec[1].size, (unsigned long long)rec[1].addr);
	}
	check_inside(&r);
	run_free(&r);

	/* updates defaults to HPCC's NUPDATE = 4 x table words. */
	run_collect(&r, "gups:size=8K", 1);
	ck_assert_uint_eq(r.kinds[R_STORE], 1024);
	ck_assert_uint_eq(r.kinds[R_MODIFY], 4096);
	run_free(&r);
}
END_TEST

START_TEST(test_gups_uniform)
{
	/* 64 words, 64000 updates: each word's count is Binomial(64000, 1/64), sd 7.9. */
	const uint64_t t = MMAP_BASE - 4096;
	unsigned count[64] = { 0 };
	struct run r;
	size_t i;

	run_collect(&r, "gups:size=512,updates=64000", 7);
	for (i = 0; i < r.n; i++)
		if (r.recs[i].kind == R_MODIFY)
			count[(r.recs[i].addr - t) / 8]++;
	for (i = 0; i < 64; i++)
		ck_assert_msg(fabs(count[i] - 1000.0) <= 5 * sqrt(64000 * (1 / 64.0) * (63 / 64.0)),
			      "word %zu updated %u times", i, count[i]);
	run_free(&r);
}
END_TEST

START_TEST(test_chase)
{
	const uint64_t base = MMAP_BASE - 0x10000, lines = 1024;
	unsigned char *seen = calloc(lines, 1);
	const struct trace_rec *ld;
	struct run r;
	uint64_t i;

	run_collect(&r, "chase:size=64K,steps=2048", 3);
	ck_assert_uint_eq(r.kinds[R_DEP], 2047);
	ck_assert_uint_eq(r.kinds[R_EVENT], 1);
	ck_assert_uint_eq(r.kinds[R_STORE], lines);
	ck_assert_uint_eq(r.kinds[R_LOAD], 2048);
	ck_assert_uint_eq(r.insns, 9 * lines + 4 * 2048);
	check_mmap(&r.ev[0], base, 65536);
	for (i = 0; i < lines; i++) {
		check_rec(&r.recs[1 + 2 * i], 0, 9, R_INSNS);
		check_rec(&r.recs[2 + 2 * i], base + 64 * i, 8, R_STORE);
	}
	/* The chase starts at line 0, sees every line once per lap, and repeats. */
	ld = &r.recs[1 + 2 * lines];

	ck_assert_uint_eq(ld[1].addr, base);
	for (i = 0; i < 2048; i++) {
		uint64_t off;

		check_rec(&ld[2 * i], 0, 4, R_INSNS);
		off = ld[2 * i + 1].addr - base;
		CHECK(ld[2 * i + 1].kind == R_LOAD && ld[2 * i + 1].size == 8 && off % 64 == 0 &&
		      off / 64 < lines, "step %llu: kind %u size %u offset 0x%llx",
		      (unsigned long long)i, ld[2 * i + 1].kind, ld[2 * i + 1].size,
		      (unsigned long long)off);
		/* p = p->next: each step but the first depends on the load before it */
		CHECK(r.dep[1 + 2 * lines + 2 * i + 1] == (i ? 1 : 0), "step %llu: dependence %u",
		      (unsigned long long)i, r.dep[1 + 2 * lines + 2 * i + 1]);
		if (i < lines) {
			CHECK(!seen[off / 64], "line %llu visited twice in one lap",
			      (unsigned long long)(off / 64));
			seen[off / 64] = 1;
		} else {
			CHECK(ld[2 * i + 1].addr == ld[2 * (i - lines) + 1].addr,
			      "step %llu differs from the step one lap earlier", (unsigned long long)i);
		}
	}
	/* A random cycle, not the identity walk. */
	ck_assert_uint_ne(ld[3].addr, base + 64);
	check_inside(&r);
	run_free(&r);
	free(seen);

	/* steps defaults to one lap (S/64). */
	run_collect(&r, "chase:size=64K", 3);
	ck_assert_uint_eq(r.kinds[R_LOAD], lines);
	run_free(&r);
	/* One line: a cycle of length one. */
	run_collect(&r, "chase:size=64,steps=3", 3);
	ck_assert_uint_eq(r.kinds[R_LOAD], 3);
	ck_assert_uint_eq(r.recs[r.n - 1].addr, MMAP_BASE - 4096);
	run_free(&r);
}
END_TEST

/* FNV-1a over each record's address, size and kind and each event's kind, address, length. */
static uint64_t run_fields_hash(const struct run *r)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct trace_rec *rec = &r->recs[i];
		uint64_t v[3] = { rec->addr, rec->size, rec->kind };

		for (unsigned f = 0; f < 3; f++)
			for (unsigned b = 0; b < 8; b++)
				h = (h ^ ((v[f] >> (8 * b)) & 0xff)) * 1099511628211ULL;
	}
	for (i = 0; i < r->nev; i++) {
		uint64_t v[3] = { r->ev[i].kind, r->ev[i].addr, r->ev[i].len };

		for (unsigned f = 0; f < 3; f++)
			for (unsigned b = 0; b < 8; b++)
				h = (h ^ ((v[f] >> (8 * b)) & 0xff)) * 1099511628211ULL;
	}
	return h;
}

/*
 * chase with stride=B: one element of B bytes per step, visited at its first 8
 * bytes; stride=4K is one line per 4 KiB page.
 */
START_TEST(test_chase_stride)
{
	/* 1 MiB is a multiple of 2 MiB for no kernel: a 4 KiB-aligned top-down mapping */
	const uint64_t base = MMAP_BASE - 0x100000, pages = 256;
	unsigned char *seen = calloc(pages, 1);
	const struct trace_rec *ld;
	struct run r, r2;
	uint64_t i;

	run_collect(&r, "chase:size=1M,stride=4K", 5);
	ck_assert_uint_eq(r.kinds[R_EVENT], 1);
	ck_assert_uint_eq(r.kinds[R_STORE], pages);
	ck_assert_uint_eq(r.kinds[R_LOAD], pages); /* steps default to one lap, S/B */
	ck_assert_uint_eq(r.insns, 9 * pages + 4 * pages);
	ck_assert_uint_eq(r.n, 1 + 4 * pages);
	check_mmap(&r.ev[0], base, 1 << 20);
	/* one next pointer per page, in address order */
	for (i = 0; i < pages; i++) {
		check_rec(&r.recs[1 + 2 * i], 0, 9, R_INSNS);
		check_rec(&r.recs[2 + 2 * i], base + 4096 * i, 8, R_STORE);
	}
	/* the lap's addresses are exactly {base + k * 4096}, each once, from page 0 */
	ld = &r.recs[1 + 2 * pages];
	ck_assert_uint_eq(ld[1].addr, base);
	for (i = 0; i < pages; i++) {
		uint64_t off = ld[2 * i + 1].addr - base;

		check_rec(&ld[2 * i], 0, 4, R_INSNS);
		CHECK(ld[2 * i + 1].kind == R_LOAD && ld[2 * i + 1].size == 8 &&
		      ld[2 * i + 1].addr >= base && off % 4096 == 0 && off / 4096 < pages &&
		      !seen[off / 4096], "step %llu: kind %u size %u offset 0x%llx",
		      (unsigned long long)i, ld[2 * i + 1].kind, ld[2 * i + 1].size,
		      (unsigned long long)off);
		seen[off / 4096] = 1;
	}
	for (i = 0; i < pages; i++)
		CHECK(seen[i], "page %llu not visited", (unsigned long long)i);
	/* not the identity walk */
	ck_assert_uint_ne(ld[3].addr, base + 4096);
	check_inside(&r);

	/* steps=N continues around the same cycle */
	run_collect(&r2, "chase:size=1M,stride=4K,steps=600", 5);
	ck_assert_uint_eq(r2.kinds[R_LOAD], 600);
	for (i = 0; i < 600; i++)
		CHECK(r2.recs[2 + 2 * pages + 2 * i].addr == ld[2 * (i % pages) + 1].addr,
		      "step %llu is not step %llu of the lap", (unsigned long long)i,
		      (unsigned long long)(i % pages));
	run_free(&r2);
	run_free(&r);
	free(seen);

	/*
	 * A stride that is not a power of two: stride=4160 (4 KiB + 64) puts element
	 * i at base + 4160 i, so successive elements sit one line further into their
	 * page (the page-aligned lines of stride=4K all fall in 1/64 of a cache's sets).
	 */
	run_collect(&r, "chase:size=520000,stride=4160", 5);
	ck_assert_uint_eq(r.kinds[R_STORE], 125);
	ck_assert_uint_eq(r.kinds[R_LOAD], 125);
	ck_assert_uint_eq(r.insns, 9 * 125 + 4 * 125);
	unsigned char seen2[125] = { 0 };

	for (i = 0; i < 125; i++) {
		uint64_t a = r.ev[0].addr + 4160 * i;

		check_rec(&r.recs[2 + 2 * i], a, 8, R_STORE);
		ck_assert_uint_eq(a / 64 % 64, i % 64);
	}
	ld = &r.recs[1 + 2 * 125];
	for (i = 0; i < 125; i++) {
		uint64_t off = ld[2 * i + 1].addr - r.ev[0].addr;

		CHECK(ld[2 * i + 1].kind == R_LOAD && off % 4160 == 0 && off / 4160 < 125 &&
		      !seen2[off / 4160], "stride 4160, step %llu: offset 0x%llx",
		      (unsigned long long)i, (unsigned long long)off);
		seen2[off / 4160] = 1;
	}
	run_free(&r);

	/* stride = size: one element, a cycle of length one */
	run_collect(&r, "chase:size=2M,stride=2M,steps=3", 5);
	ck_assert_uint_eq(r.kinds[R_STORE], 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 3);
	ck_assert_uint_eq(r.recs[r.n - 1].addr, MMAP_BASE - (2 << 20));
	run_free(&r);

	/*
	 * The default stride is 64 and changes nothing: the same records as the
	 * explicit stride=64, and the hashes of the records the chase made before
	 * stride= existed (computed with commit a6a32d3 at seed 42).
	 */
	run_collect(&r, "chase:size=64K,steps=3000", 42);
	run_collect(&r2, "chase:size=64K,steps=3000,stride=64", 42);
	ck_assert_uint_eq(r.n, 8049);
	ck_assert_uint_eq(r.n, r2.n);
	ck_assert_int_eq(memcmp(r.recs, r2.recs, r.n * sizeof(*r.recs)), 0);
	ck_assert_uint_eq(run_fields_hash(&r), 0x68b384589b5850c7ULL);
	run_free(&r2);
	run_free(&r);
	run_collect(&r, "chase:size=1M", 42);
	ck_assert_uint_eq(r.n, 65537);
	ck_assert_uint_eq(run_fields_hash(&r), 0xd54c53e6e618376fULL);
	run_free(&r);
	run_collect(&r, "chase:size=64K,steps=3000,madvise=1", 42);
	ck_assert_uint_eq(run_fields_hash(&r), 0xee297f4a4e162f4bULL);
	run_free(&r);
}
END_TEST

START_TEST(test_stride)
{
	const uint64_t base = MMAP_BASE - 0x10000;
	struct run r;
	uint64_t k;

	run_collect(&r, "stride:size=64K,stride=4096,passes=2", 1);
	ck_assert_uint_eq(r.kinds[R_DEP], 0);
	ck_assert_uint_eq(r.kinds[R_EVENT], 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 32);
	ck_assert_uint_eq(r.kinds[R_STORE], 0);
	ck_assert_uint_eq(r.insns, 4 * 32);
	ck_assert_uint_eq(r.n, 1 + 2 * 32);
	check_mmap(&r.ev[0], base, 65536);
	for (k = 0; k < 32; k++) {
		check_rec(&r.recs[1 + 2 * k], 0, 4, R_INSNS);
		check_rec(&r.recs[2 + 2 * k], base + (k % 16) * 4096, 8, R_LOAD);
	}
	run_free(&r);

	/* passes defaults to 1; a stride below 8 loads the widest power of two that fits. */
	run_collect(&r, "stride:size=64K,stride=3", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 65536 / 3);
	check_rec(&r.recs[r.n - 1], base + (65536 / 3 - 1) * 3, 2, R_LOAD);
	check_inside(&r);
	run_free(&r);
	run_collect(&r, "stride:size=64K,stride=1", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 65536);
	check_rec(&r.recs[r.n - 1], base + 65535, 1, R_LOAD);
	run_free(&r);
	run_collect(&r, "stride:size=64K,stride=6", 1);
	check_rec(&r.recs[2], base, 4, R_LOAD);
	check_rec(&r.recs[4], base + 6, 4, R_LOAD);
	run_free(&r);
	/* stride = size: one load per pass. */
	run_collect(&r, "stride:size=64K,stride=64K,passes=3", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 3);
	check_rec(&r.recs[6], base, 8, R_LOAD);
	run_free(&r);
	/* Not a multiple of the stride: the last partial stride is not loaded. */
	run_collect(&r, "stride:size=10000,stride=3000", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 3);
	check_mmap(&r.ev[0], MMAP_BASE - 12288, 12288);
	check_rec(&r.recs[6], MMAP_BASE - 12288 + 6000, 8, R_LOAD);
	run_free(&r);
	/* Many batches: the pass boundary falls inside a batch. */
	run_collect(&r, "stride:size=64K,stride=8,passes=5", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 5 * 8192);
	for (k = 0; k < 5 * 8192; k++)
		check_rec(&r.recs[2 + 2 * k], base + 8 * (k % 8192), 8, R_LOAD);
	run_free(&r);
}
END_TEST

static int cmp_desc(const void *x, const void *y)
{
	unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;

	return a < b ? 1 : a > b ? -1 : 0;
}

START_TEST(test_zipf)
{
	/* 1024 pages, alpha 1.2: p(rank k) = k^-1.2 / H(1024, 1.2). */
	const uint64_t pages = 1024, refs = 200000, base = MMAP_BASE - (4ULL << 20);
	const double alpha = 1.2;
	unsigned *count = calloc(pages, sizeof(*count));
	unsigned *sorted = calloc(pages, sizeof(*sorted));
	double h = 0;
	struct run r;
	unsigned k, in_place = 0;
	size_t i;

	for (k = 1; k <= pages; k++)
		h += pow(k, -alpha);
	run_collect(&r, "zipf:size=4M,alpha=1.2,refs=200000", 11);
	ck_assert_uint_eq(r.kinds[R_EVENT], 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], refs);
	ck_assert_uint_eq(r.kinds[R_INSNS], refs);
	ck_assert_uint_eq(r.insns, 4 * refs);
	check_mmap(&r.ev[0], base, 4 << 20);
	check_inside(&r);
	for (i = 0; i < r.n; i++) {
		if (r.recs[i].kind != R_LOAD)
			continue;
		CHECK(r.recs[i].size == 8 && (r.recs[i].addr - base) % 8 == 0,
		      "record %zu: size %u addr 0x%llx", i, r.recs[i].size,
		      (unsigned long long)r.recs[i].addr);
		count[(r.recs[i].addr - base) / 4096]++;
	}
	memcpy(sorted, count, pages * sizeof(*count));
	qsort(sorted, pages, sizeof(*sorted), cmp_desc);
	/*
	 * The i-th most referenced page has rank i: the expected counts of
	 * ranks 1..6 are more than 10 binomial standard deviations apart, so
	 * each lies within 5 sd of refs * p(rank).
	 */
	for (k = 1; k <= 6; k++) {
		double p = pow(k, -alpha) / h;
		double sd = sqrt(refs * p * (1 - p));

		ck_assert_msg(fabs(sorted[k - 1] - refs * p) <= 5 * sd,
			      "rank %u: %u refs, expected %.0f +- %.0f", k, sorted[k - 1], refs * p,
			      5 * sd);
	}
	/* The top six ranks together: the same law, within 5 sd of their sum. */
	{
		double top = 0, p6 = 0;

		for (k = 1; k <= 6; k++) {
			top += sorted[k - 1];
			p6 += pow(k, -alpha) / h;
		}
		ck_assert_msg(fabs(top - refs * p6) <= 5 * sqrt(refs * p6 * (1 - p6)),
			      "ranks 1..6: %.0f refs, expected %.0f", top, refs * p6);
	}
	/* Ranks are scattered over the pages, not laid out in order. */
	for (k = 0; k < 8; k++)
		in_place += count[k] == sorted[k];
	ck_assert_uint_lt(in_place, 8);
	run_free(&r);
	free(count);
	free(sorted);
}
END_TEST

START_TEST(test_determinism)
{
	static const char *const random_specs[] = {
		"gups:size=64K,updates=5000",
		"chase:size=64K,steps=3000",
		"zipf:size=1M,alpha=0.9,refs=5000",
	};
	static const char *const fixed_specs[] = {
		"stream:size=16K,iterations=2",
		"stride:size=64K,stride=72,passes=2",
	};
	struct run r1, r2;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(random_specs); i++) {
		run_collect(&r1, random_specs[i], 42);
		run_collect(&r2, random_specs[i], 42);
		ck_assert_uint_eq(r1.n, r2.n);
		ck_assert_uint_eq(r1.nev, r2.nev);
		ck_assert_int_eq(memcmp(r1.recs, r2.recs, r1.n * sizeof(*r1.recs)), 0);
		ck_assert_int_eq(memcmp(r1.ev, r2.ev, r1.nev * sizeof(*r1.ev)), 0);
		run_free(&r2);
		/* Another seed, another stream (of the same shape). */
		run_collect(&r2, random_specs[i], 43);
		ck_assert_uint_eq(r1.n, r2.n);
		ck_assert_uint_ne(run_hash(&r1), run_hash(&r2));
		run_free(&r2);
		run_free(&r1);
	}
	/* seed= in the spec overrides workload_open's seed. */
	run_collect(&r1, "gups:size=64K,updates=5000,seed=9", 1);
	run_collect(&r2, "gups:size=64K,updates=5000,seed=9", 2);
	ck_assert_uint_eq(run_hash(&r1), run_hash(&r2));
	run_free(&r2);
	run_collect(&r2, "gups:size=64K,updates=5000", 9);
	ck_assert_uint_eq(r1.n, r2.n);
	ck_assert_int_eq(memcmp(r1.recs, r2.recs, r1.n * sizeof(*r1.recs)), 0);
	run_free(&r2);
	run_free(&r1);
	/* Workloads without randomness do not depend on the seed. */
	for (i = 0; i < ARRAY_SIZE(fixed_specs); i++) {
		run_collect(&r1, fixed_specs[i], 1);
		run_collect(&r2, fixed_specs[i], 2);
		ck_assert_uint_eq(run_hash(&r1), run_hash(&r2));
		run_free(&r2);
		run_free(&r1);
	}
}
END_TEST

START_TEST(test_errors)
{
	static const struct {
		const char *spec;
		const char *msg;
	} cases[] = {
		{ "foo:size=1M", "-w: unknown workload 'foo'" },
		{ "", "-w: unknown workload ''" },
		{ "streamx:size=1M", "-w: unknown workload 'streamx'" },
		{ "Stream:size=1M", "-w: unknown workload 'Stream'" },
		{ "stream", "-w: stream: missing parameter 'size'" },
		{ "stream:", "-w: stream: missing parameter 'size'" },
		{ "stream:iterations=2", "-w: stream: missing parameter 'size'" },
		{ "stream:size=64K,foo=1", "-w: stream: unknown parameter 'foo'" },
		{ "stream:size=64K,updates=5", "-w: stream: unknown parameter 'updates'" },
		{ "stream:size=64K,=5", "-w: stream: unknown parameter ''" },
		{ "stream:size", "-w: stream: parameter 'size' has no value (expected key=value)" },
		{ "stream:size=", "-w: stream: parameter 'size' has an empty value" },
		{ "stream:size=64K,,iterations=2", "-w: stream: empty parameter in 'size=64K,,iterations=2'" },
		{ "stream:size=64K,", "-w: stream: empty parameter in 'size=64K,'" },
		{ "stream:,size=64K", "-w: stream: empty parameter in ',size=64K'" },
		{ "stream:size=64K,size=1M", "-w: stream: parameter 'size' given twice" },
		{ "stream:size=12Q",
		  "-w: stream: bad size '12Q' (expected bytes with an optional K, M, G or T suffix)" },
		{ "stream:size=-8",
		  "-w: stream: bad size '-8' (expected bytes with an optional K, M, G or T suffix)" },
		{ "stream:size=0", "-w: stream: size must not be 0" },
		{ "stream:size=100", "-w: stream: size 100 is not a multiple of 8" },
		{ "stream:size=64K,iterations=0", "-w: stream: iterations must not be 0" },
		{ "stream:size=64K,iterations=-1",
		  "-w: stream: bad iterations '-1'" BAD_COUNT },
		{ "stream:size=64K,iterations=2x",
		  "-w: stream: bad iterations '2x'" BAD_COUNT },
		{ "gups:size=64K,updates=4Q",
		  "-w: gups: bad updates '4Q'" BAD_COUNT },
		{ "gups:size=64K,updates=+4K",
		  "-w: gups: bad updates '+4K'" BAD_COUNT },
		{ "gups:size=64K,updates=4KB",
		  "-w: gups: bad updates '4KB'" BAD_COUNT },
		{ "gups:size=64K,updates=1.5K",
		  "-w: gups: bad updates '1.5K'" BAD_COUNT },
		{ "gups:size=64K,updates=K",
		  "-w: gups: bad updates 'K'" BAD_COUNT },
		{ "gups:size=64K,updates=0x4K",
		  "-w: gups: bad updates '0x4K'" BAD_COUNT },
		{ "gups:size=64K,updates=16777216T",
		  "-w: gups: bad updates '16777216T'" BAD_COUNT },
		{ "gups:size=64K,updates=0K", "-w: gups: updates must not be 0" },
		{ "stream:size=64K,madvise=2", "-w: stream: bad madvise '2' (expected 0 or 1)" },
		{ "stream:size=64K,madvise=yes", "-w: stream: bad madvise 'yes' (expected 0 or 1)" },
		{ "stream:size=64K,seed=x",
		  "-w: stream: bad seed 'x'" BAD_COUNT },
		{ "stream:size=100T",
		  "-w: stream: the mappings do not fit below mmap_base 0x7f0000000000" },
		{ "stride:size=16E,stride=8",
		  "-w: stride: bad size '16E' (expected bytes with an optional K, M, G or T suffix)" },
		{ "gups:size=200T", "-w: gups: the mappings do not fit below mmap_base 0x7f0000000000" },
		{ "gups", "-w: gups: missing parameter 'size'" },
		{ "gups:size=64K,updates=0", "-w: gups: updates must not be 0" },
		{ "gups:size=64K,iterations=3", "-w: gups: unknown parameter 'iterations'" },
		{ "gups:size=1004", "-w: gups: size 1004 is not a multiple of 8" },
		{ "chase:size=96", "-w: chase: size 96 is not a multiple of 64" },
		{ "chase:size=64K,steps=0", "-w: chase: steps must not be 0" },
		{ "chase:size=64K,stride=0", "-w: chase: stride must not be 0" },
		{ "chase:size=64K,stride=32", "-w: chase: stride 32 is not a multiple of 64" },
		{ "chase:size=64K,stride=96", "-w: chase: stride 96 is not a multiple of 64" },
		{ "chase:size=64K,stride=4097", "-w: chase: stride 4097 is not a multiple of 64" },
		{ "chase:size=64K,stride=192", "-w: chase: size 65536 is not a multiple of stride 192" },
		{ "chase:size=64K,stride=128K", "-w: chase: stride 131072 is larger than size 65536" },
		{ "chase:size=192,stride=128", "-w: chase: size 192 is not a multiple of stride 128" },
		{ "chase:size=6K,stride=4K", "-w: chase: size 6144 is not a multiple of stride 4096" },
		{ "chase:size=64K,stride=4Q",
		  "-w: chase: bad stride '4Q' (expected bytes with an optional K, M, G or T suffix)" },
		{ "chase:size=64K,stride=64,stride=64", "-w: chase: parameter 'stride' given twice" },
		{ "chase:size=2T,stride=4K",
		  "-w: chase: 536870912 elements is more than the 268435456 supported" },
		{ "chase:size=32G", "-w: chase: 536870912 lines is more than the 268435456 supported" },
		{ "stride:size=64K", "-w: stride: missing parameter 'stride'" },
		{ "stride:stride=8", "-w: stride: missing parameter 'size'" },
		{ "stride:size=64K,stride=0", "-w: stride: stride must not be 0" },
		{ "stride:size=64K,stride=128K", "-w: stride: stride 131072 is larger than size 65536" },
		{ "stride:size=64K,stride=8,passes=0", "-w: stride: passes must not be 0" },
		{ "zipf:size=4M,refs=10", "-w: zipf: missing parameter 'alpha'" },
		{ "zipf:size=4M,alpha=1", "-w: zipf: missing parameter 'refs'" },
		{ "zipf:size=4M,alpha=0,refs=10", "-w: zipf: alpha must be > 0" },
		{ "zipf:size=4M,alpha=-1,refs=10", "-w: zipf: alpha must be > 0" },
		{ "zipf:size=4M,alpha=abc,refs=10", "-w: zipf: bad alpha 'abc' (expected a number)" },
		{ "zipf:size=4M,alpha=nan,refs=10", "-w: zipf: bad alpha 'nan' (expected a number)" },
		{ "zipf:size=4M,alpha=1,refs=0", "-w: zipf: refs must not be 0" },
		{ "zipf:size=6000,alpha=1,refs=10", "-w: zipf: size 6000 is not a multiple of 4096" },
		{ "zipf:size=256G,alpha=1,refs=10",
		  "-w: zipf: 67108864 pages is more than the 33554432 supported" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct err e;
		char buf[1024];

		memset(&e, 0, sizeof(e));
		ck_assert_msg(!workload_open(cases[i].spec, 1, &e), "'%s' was accepted", cases[i].spec);
		ck_assert_str_eq(e.file, "-w");
		ck_assert_uint_eq(e.line, 0);
		err_format(&e, buf, sizeof(buf));
		ck_assert_msg(!strcmp(buf, cases[i].msg), "'%s': got \"%s\", want \"%s\"", cases[i].spec,
			      buf, cases[i].msg);
		/* workload_check() says the same, without building anything */
		memset(&e, 0, sizeof(e));
		ck_assert_int_eq(workload_check(cases[i].spec, &e), -1);
		err_format(&e, buf, sizeof(buf));
		ck_assert_msg(!strcmp(buf, cases[i].msg), "check '%s': got \"%s\", want \"%s\"",
			      cases[i].spec, buf, cases[i].msg);
	}
	/* A NULL error record is allowed. */
	ck_assert_ptr_null(workload_open("nope", 1, NULL));
}
END_TEST

START_TEST(test_misc)
{
	struct err e;
	struct trace_reader *tr;
	struct trace_batch b;
	struct run r;
	char spec[400];
	size_t len;

	/* Counts take hex (parse_u64); sizes take a B or iB after the suffix (parse_size). */
	run_collect(&r, "gups:size=8KiB,updates=0x10", 1);
	ck_assert_uint_eq(r.kinds[R_STORE], 1024);
	ck_assert_uint_eq(r.kinds[R_MODIFY], 16);
	run_free(&r);
	/* Counts take binary K/M/G/T suffixes, as sizes do: 4K = 4096, 1M = 1048576. */
	run_collect(&r, "gups:size=8K,updates=4K", 1);
	ck_assert_uint_eq(r.kinds[R_MODIFY], 4096);
	run_free(&r);
	run_collect(&r, "stride:size=8K,stride=4K,passes=1k", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 2 * 1024);
	run_free(&r);
	run_collect(&r, "chase:size=64K,steps=1M", 1);
	ck_assert_uint_eq(r.kinds[R_LOAD], 1048576);
	run_free(&r);
	/* The largest count that fits, and the seed, take suffixes too. */
	ck_assert_int_eq(workload_check("gups:size=8K,updates=16777215T,seed=2G", &e), 0);
	/* Checking builds nothing: a chase of 2^28 lines (2 GiB of tables) and a zipf of
	 * 2^25 pages are checked at once. */
	ck_assert_int_eq(workload_check("chase:size=16G", &e), 0);
	ck_assert_int_eq(workload_check("zipf:size=128G,alpha=1,refs=1", &e), 0);
	ck_assert_int_eq(workload_check(NULL, &e), -1);
	ck_assert_str_eq(e.msg, "unknown workload ''");
	/* Opening a huge table costs nothing until it is read. */
	memset(&e, 0, sizeof(e));
	tr = workload_open("gups:size=64G", 1, &e);
	ck_assert_ptr_nonnull(tr);
	/* The mmap, then as many (insns, store) pairs as fit. */
	ck_assert_int_eq(trace_next(tr, &b, &e), 1 + 2 * ((TRACE_BATCH - 1) / 2));
	ck_assert_uint_eq(b.nev, 1);
	check_mmap(&b.ev[0], MMAP_BASE - (64ULL << 30), 64ULL << 30);
	trace_close(tr);
	/* A spec longer than the name field is accepted; the name keeps its start. */
	len = (size_t)snprintf(spec, sizeof(spec), "stride:size=64K,stride=8,passes=");
	memset(spec + len, '0', 300);
	strcpy(spec + len + 300, "2");
	tr = workload_open(spec, 1, &e);
	ck_assert_ptr_nonnull(tr);
	ck_assert_uint_eq(strlen(tr->name), sizeof(tr->name) - 1);
	ck_assert_int_eq(strncmp(tr->name, spec, sizeof(tr->name) - 1), 0);
	trace_close(tr);
	/* A parameter list of 1024 characters or more is refused, not cut; 1023 is fine. */
	{
		char longspec[1100];
		const size_t head = strlen("gups:size=64K,updates=");

		strcpy(longspec, "gups:size=64K,updates=");
		memset(longspec + head, '0', 1024 - (head - 5) - 1);
		strcpy(longspec + 5 + 1024 - 1, "7");
		ck_assert_uint_eq(strlen(longspec + 5), 1024);
		memset(&e, 0, sizeof(e));
		ck_assert_ptr_null(workload_open(longspec, 1, &e));
		ck_assert_str_eq(e.msg, "gups: parameter list too long (1024 characters, at most 1023)");
		strcpy(longspec + 5 + 1024 - 2, "7");
		tr = workload_open(longspec, 1, &e);
		ck_assert_msg(tr, "%s", e.msg);
		trace_close(tr);
	}
	/* Closing before the end frees everything (run under ASan to check). */
	tr = workload_open("zipf:size=1M,alpha=2,refs=100000", 1, &e);
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(trace_next(tr, &b, &e), 1 + 2 * ((TRACE_BATCH - 1) / 2));
	trace_close(tr);
	trace_close(NULL);
}
END_TEST

static Suite *workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_stream_counts);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_madvise);
	tcase_add_test(tc, test_gups);
	tcase_add_test(tc, test_gups_uniform);
	tcase_add_test(tc, test_chase);
	tcase_add_test(tc, test_chase_stride);
	tcase_add_test(tc, test_stride);
	tcase_add_test(tc, test_zipf);
	tcase_add_test(tc, test_determinism);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_misc);
	tcase_add_test(tc, test_kv);
	tcase_add_test(tc, test_kv_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(workload_suite());
}
