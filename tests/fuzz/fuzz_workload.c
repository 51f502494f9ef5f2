/*
 * fuzz_workload.c - workload specs (sim/workload.c, workload_open()).
 *
 * The generated work is bounded here, not by the parser: a chase or zipf
 * spec with any value that reads as a size over FUZZ_WL_SIZE_MAX is skipped
 * before it is opened (their set-up is linear in the size: chase's cycle,
 * zipf's tables; the others generate lazily, so any size is cheap to open),
 * and at most FUZZ_WL_BATCHES batches are drained (sizes and counts such as
 * updates= are otherwise unbounded).
 *
 * Checks (workload.h, trace.h): a refused spec gives a non-empty message
 * naming "-w"; a workload reader is named by its spec; its first batch
 * starts with its mmap/madvise events (at most 6, page-aligned, nonempty,
 * between mmap_min_addr and mmap_base) and no later batch has events; every
 * reference lies inside one of those mappings; every R_INSNS counts >= 1
 * instruction; 0 at the end, and again after it; opening the same spec again
 * gives the same first two batches (a pure function of spec and seed);
 * workload_check() accepts exactly the specs workload_open() opens, and
 * refuses the others with the same message. Every spec is checked, the big
 * ones too: checking builds nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "../../sim/util.h"
#include "../../sim/workload.h"
#include "fuzz.h"

#define FUZZ_WL_SIZE_MAX (16u << 20)
#define FUZZ_WL_BATCHES 64
#define WL_MMAP_BASE 0x7f0000000000ULL /* workload.c's fixed mmap_base */
#define WL_MMAP_MIN 4096ULL            /* and its mmap_min_addr */
#define WL_EV_MAX 6                    /* three mappings, each with its madvise */

/* Is @spec a chase or zipf with any "key=value" that holds a size over the bound? */
static bool spec_too_big(const char *spec)
{
	const char *s = strchr(spec, ':');

	if (strncmp(spec, "chase:", 6) && strncmp(spec, "zipf:", 5))
		return false;
	while (s) {
		const char *eq = strchr(s, '='), *comma;
		char val[1024]; /* workload.c takes lists up to 1023 characters */
		uint64_t v;
		size_t len;

		if (!eq)
			break;
		comma = strchr(eq, ',');
		len = comma ? (size_t)(comma - eq - 1) : strlen(eq + 1);
		if (len < sizeof(val)) {
			memcpy(val, eq + 1, len);
			val[len] = '\0';
			if (!parse_size(val, &v) && v > FUZZ_WL_SIZE_MAX)
				return true;
		}
		s = comma;
	}
	return false;
}

struct wl_map {
	vaddr_t addr;
	uint64_t len;
};

static void check_wl_batch(const struct trace_batch *b, int r, unsigned batch, struct wl_map *maps,
			   size_t *nmaps)
{
	size_t i = 0;

	FUZZ_ASSERT(r > 0 && (size_t)r == b->n && b->n <= TRACE_BATCH, "returned %d, batch of %zu",
		    r, b->n);
	if (batch == 0) {
		FUZZ_ASSERT(b->nev >= 1 && b->nev <= WL_EV_MAX, "%zu events", b->nev);
		for (; i < b->nev; i++) {
			const struct trace_rec *t = &b->recs[i];
			const struct os_event *ev = &b->ev[i];

			FUZZ_ASSERT(t->kind == R_EVENT && t->size == i, "record %zu is not event %zu",
				    i, i);
			FUZZ_ASSERT(ev->kind == EV_MMAP || ev->kind == EV_MADVISE, "event kind %u",
				    ev->kind);
			FUZZ_ASSERT(ev->len && !(ev->addr & (PAGE_SIZE - 1)) &&
					    !(ev->len & (PAGE_SIZE - 1)) && ev->addr >= WL_MMAP_MIN &&
					    ev->addr + ev->len <= WL_MMAP_BASE && ev->addr + ev->len > ev->addr,
				    "event %zu: addr 0x%llx len 0x%llx", i, (unsigned long long)ev->addr,
				    (unsigned long long)ev->len);
			if (ev->kind == EV_MMAP) {
				maps[*nmaps].addr = ev->addr;
				maps[*nmaps].len = ev->len;
				(*nmaps)++;
			}
		}
	} else {
		FUZZ_ASSERT(!b->nev, "batch %u has %zu events", batch, b->nev);
	}
	for (; i < b->n; i++) {
		const struct trace_rec *t = &b->recs[i];
		size_t m;

		FUZZ_ASSERT(t->kind < R_EVENT || t->kind == R_INSNS || t->kind == R_DEP,
			    "record %zu: kind %u", i, t->kind);
		FUZZ_ASSERT(t->size >= 1, "record %zu: size 0", i);
		if (t->kind == R_DEP) /* a dependence (the chase's): right before a load, address 0 */
			FUZZ_ASSERT(!t->addr && i + 1 < b->n && b->recs[i + 1].kind == R_LOAD,
				    "record %zu: a dependence not before a load", i);
		if (t->kind == R_INSNS || t->kind == R_DEP)
			continue;
		for (m = 0; m < *nmaps; m++)
			if (t->addr >= maps[m].addr && t->addr - maps[m].addr < maps[m].len &&
			    t->size <= maps[m].len - (t->addr - maps[m].addr))
				break;
		FUZZ_ASSERT(m < *nmaps, "record %zu: %u bytes at 0x%llx outside every mapping", i,
			    t->size, (unsigned long long)t->addr);
	}
}

int fuzz_workload_one(const uint8_t *d, size_t n)
{
	char *spec = fuzz_strndup(d, n);
	struct trace_reader *r, *r2 = NULL;
	struct wl_map maps[WL_EV_MAX];
	size_t nmaps = 0;
	struct err e = { 0 }, ec = { 0 };
	struct trace_batch b, b2;
	unsigned batch;
	int ret, ret2, checked;

	checked = workload_check(spec, &ec);
	FUZZ_ASSERT(checked ? ec.msg[0] && !strcmp(ec.file, "-w") : !ec.msg[0],
		    "workload_check: %d with error '%s: %s'", checked, ec.file, ec.msg);
	if (spec_too_big(spec))
		goto out;
	r = workload_open(spec, 1, &e);
	FUZZ_ASSERT(!r == !!checked, "'%s': workload_open %s, workload_check %d (%s)", spec,
		    r ? "opened" : "refused", checked, ec.msg);
	if (!r) {
		FUZZ_ASSERT(e.msg[0] && !strcmp(e.file, "-w"), "bad error '%s: %s'", e.file, e.msg);
		FUZZ_ASSERT(!strcmp(e.msg, ec.msg), "'%s': workload_open says '%s', workload_check '%s'",
			    spec, e.msg, ec.msg);
		goto out;
	}
	FUZZ_ASSERT(!e.msg[0], "workload_open succeeded but set an error: %s", e.msg);
	FUZZ_ASSERT(r->format == TF_WORKLOAD && !strncmp(r->name, spec, sizeof(r->name) - 1),
		    "reader %d named '%s'", (int)r->format, r->name);
	r2 = workload_open(spec, 1, &e);
	FUZZ_ASSERT(r2, "the second open of '%s' failed: %s", spec, e.msg);
	for (batch = 0; batch < FUZZ_WL_BATCHES; batch++) {
		ret = trace_next(r, &b, &e);
		FUZZ_ASSERT(ret >= 0, "trace_next returned %d", ret);
		if (batch < 2) {
			ret2 = trace_next(r2, &b2, &e);
			FUZZ_ASSERT(ret2 == ret && !memcmp(b.recs, b2.recs, b.n * sizeof(*b.recs)) &&
					    b.nev == b2.nev &&
					    !memcmp(b.ev, b2.ev, b.nev * sizeof(*b.ev)),
				    "batch %u differs between two opens of '%s'", batch, spec);
		}
		if (!ret) {
			FUZZ_ASSERT(batch > 0, "no records at all from '%s'", spec);
			FUZZ_ASSERT(trace_next(r, &b, &e) == 0, "trace_next after the end");
			break;
		}
		check_wl_batch(&b, ret, batch, maps, &nmaps);
	}
	trace_close(r);
	trace_close(r2);
out:
	free(spec);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_workload_one(d, n);
}
#endif
