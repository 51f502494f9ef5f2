/*
 * api_feed.c - what feeding references one by one through the public API
 * (mmusim_ref()) costs against the replay loop: the trace is decoded into
 * memory first, then either run in TRACE_BATCH batches through
 * sim_run_batch_summarized() (mode 0, the replay's hot path), fed record by
 * record through mmusim_ref() (mode 1), or nothing (mode 2: the decode alone).
 *
 *   make && cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isim bench/api_feed.c build/release/libmmusim.a \
 *      $(pkg-config --libs gsl yaml-0.1 zlib liblzma libzstd jansson libxxhash) -lpthread -lm -o api_feed
 *   valgrind --tool=callgrind ./api_feed tests/validation/small.lackey.zst 1   (and 0, 2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mmusim.h"
#include "trace.h"
#include "util.h"
#include "sim.h"
#include "config.h"
int main(int argc, char **argv)
{
	struct err e = {0};
	struct trace_reader *r = argc == 3 ? trace_open(argv[1], TF_AUTO, &e) : NULL;
	struct trace_batch b;
	size_t n = 0, cap = 1 << 20, nev = 0;
	struct trace_rec *recs = malloc(cap * sizeof(*recs));
	struct os_event *evs = malloc(4096 * sizeof(*evs));
	int mode;

	if (!r) {
		fprintf(stderr, "usage: api_feed TRACE 0|1|2 (%s)\n", e.msg);
		return 2;
	}
	mode = atoi(argv[2]);
	while (trace_next(r, &b, &e) > 0) {
		for (size_t i = 0; i < b.n; i++) {
			if (n == cap) recs = realloc(recs, (cap *= 2) * sizeof(*recs));
			recs[n] = b.recs[i];
			if (b.recs[i].kind == R_EVENT) { evs[nev] = b.ev[b.recs[i].size]; recs[n].size = (uint32_t)nev++; }
			n++;
		}
	}
	trace_close(r);
	struct mmusim *m; mmusim_create(&m, NULL);
	double t0 = now_seconds();
	if (mode == 2) {
	} else if (mode == 0) { /* the replay's loop: batches of TRACE_BATCH records into sim_run_batch_summarized */
		struct sim s; struct sim_config c; config_defaults(&c); sim_init(&s, &c, &e);
		for (size_t i = 0; i < n; i += TRACE_BATCH) {
			struct trace_batch bb = { recs + i, n - i < TRACE_BATCH ? n - i : TRACE_BATCH, evs, nev };
			sim_run_batch_summarized(&s, &bb, NULL, &e);
		}
		sim_finish(&s);
		fprintf(stderr, "sim: walks %llu pgfault %llu\n", (unsigned long long)s.st.walks, (unsigned long long)s.st.pgfault);
		sim_destroy(&s);
	} else {
		for (size_t i = 0; i < n; i++) {
			const struct trace_rec *t = &recs[i];
			if (t->kind <= R_MODIFY) mmusim_ref(m, (enum mmusim_ref_kind)t->kind, t->addr, t->size);
			else if (t->kind == R_INSNS) mmusim_insns(m, t->size);
			else { const struct os_event *o = &evs[t->size];
				struct mmusim_event ev = { o->kind, o->prot, o->flags, o->fd, o->advice, o->addr, o->len, o->new_addr, o->new_len };
				mmusim_event(m, &ev); }
		}
	}
	double t1 = now_seconds();
	struct mmusim_report rep; mmusim_report(m, 0, &rep);
	fprintf(stderr, "%s: %zu records (%zu events) %.1f ms; l1d_misses %llu walks %llu pgfault %llu err '%s'\n", mode == 1 ? "fed" : mode ? "decode only" : "batches", n, nev, (t1 - t0) * 1e3, (unsigned long long)rep.l1d_misses, (unsigned long long)rep.walks, (unsigned long long)rep.pgfault, mmusim_error(m));
	mmusim_destroy(m);
	return 0;
}
