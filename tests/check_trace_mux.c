/*
 * check_trace_mux.c - several traces as the processes of one machine
 * (sim/trace_mux.c): the exact record stream for given quanta, starts, repeats
 * and prctls, the renumbering of a multi-process trace's ids, dependences
 * across slices, the shared file table, and independence from batch sizes.
 *
 * The traces are scripts read by a fake reader (one token a record): i an
 * instruction fetch, l a load, s a store, nN N instructions (R_INSNS), dN a
 * dependence on the N-th latest load, fN fork of child N, wN switch to N, x
 * exit, mN an mmap of the trace's file N. A record's address is (trace + 1) <<
 * 20 plus its token's index, so the stream is written back as tokens: "a3" is
 * trace a's token 3 as a fetch, "la3" a load, "n4", "d1", "sw1" a switch to 1,
 * "x" an exit, "p" the prctl, "f2" a fork of child 2, "m1" an mmap of the
 * mux's file 1.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/provenance.h"
#include "../sim/trace_mux.h"
#include "../sim/workload.h"
#include "check_run.h"

struct fake {
	struct trace_reader head;
	unsigned t;           /* the trace: 0 = a, 1 = b, ... */
	const char *script;
	size_t bs;            /* records a batch */
	size_t tok;           /* the next token's index */
	const char *at;
	struct os_event ev[TRACE_BATCH];
};

static int fake_next(struct trace_reader *r, struct trace_batch *b, struct err *e)
{
	struct fake *f = (struct fake *)r;
	size_t n = 0, nev = 0;

	(void)e;
	while (n < f->bs && *f->at) {
		char c;
		unsigned long v = 0;
		int len = 0;
		vaddr_t a = ((vaddr_t)(f->t + 1) << 20) + f->tok++;

		while (*f->at == ' ')
			f->at++;
		if (!*f->at)
			break;
		c = *f->at++;
		sscanf(f->at, "%lu%n", &v, &len);
		f->at += len;
		switch (c) {
		case 'i': r->rec[n++] = (struct trace_rec){ a, 4, R_IFETCH }; break;
		case 'l': r->rec[n++] = (struct trace_rec){ a, 8, R_LOAD }; break;
		case 's': r->rec[n++] = (struct trace_rec){ a, 8, R_STORE }; break;
		case 'n': r->rec[n++] = (struct trace_rec){ 0, (uint32_t)v, R_INSNS }; break;
		case 'd': r->rec[n++] = (struct trace_rec){ 0, (uint32_t)v, R_DEP }; break;
		default:
			f->ev[nev] = (struct os_event){ .kind = c == 'f' ? EV_FORK : c == 'w' ? EV_SWITCH :
								   c == 'x' ? EV_EXIT : EV_MMAP,
							.addr = c == 'm' ? a : v, .len = 4096,
							.file = c == 'm' ? (uint32_t)v : 0, .fd = 3 };
			r->rec[n++] = (struct trace_rec){ f->ev[nev].addr, (uint32_t)nev, R_EVENT };
			nev++;
		}
	}
	b->recs = r->rec;
	b->n = n;
	b->ev = f->ev;
	b->nev = nev;
	return (int)n;
}

static void fake_close(struct trace_reader *r)
{
	trace_reader_free(r);
}

static const struct trace_ops fake_ops = { fake_next, fake_close };

/* The scripts of the traces, their files, and the batch size. */
struct scripts {
	const char *s[8];
	const struct trace_file *files[8];
	size_t nfiles[8];
	size_t bs;
	unsigned opens;
};

static struct trace_reader *fake_open(void *arg, unsigned i, const struct proc_cfg *p,
				      struct err *e)
{
	struct scripts *sc = arg;
	struct fake *f = trace_reader_alloc(sizeof(*f), &fake_ops, TF_MTR, p->trace, e);

	ck_assert_ptr_nonnull(f);
	f->t = i;
	f->script = f->at = sc->s[i];
	f->bs = sc->bs ? sc->bs : TRACE_BATCH;
	if (sc->nfiles[i]) {
		f->head.files = calloc(sc->nfiles[i], sizeof(*f->head.files));
		for (size_t k = 0; k < sc->nfiles[i]; k++) {
			f->head.files[k] = sc->files[i][k];
			f->head.files[k].path = strdup(sc->files[i][k].path);
		}
		f->head.nfiles = sc->nfiles[i];
	}
	sc->opens++;
	return &f->head;
}

/* The whole stream of the mux as tokens, into @out; the mux's file count into *@nfiles. */
static void run_mux(struct scripts *sc, const struct proc_cfg *p, unsigned n, uint64_t quantum,
		    char *out, size_t cap, size_t *nfiles)
{
	struct err e = { 0 };
	struct trace_reader *r = mux_open(p, n, quantum, &(struct mux_opener){ fake_open, sc }, &e);
	struct trace_batch b;
	size_t len = 0;
	int got;

	ck_assert_ptr_nonnull(r);
	out[0] = '\0';
	while ((got = trace_next(r, &b, &e)) > 0) {
		ck_assert_int_le(got, TRACE_BATCH);
		for (size_t k = 0; k < b.n; k++) {
			const struct trace_rec *t = &b.recs[k];
			char tok[32];
			unsigned tr = (unsigned)(t->addr >> 20) - 1, ix = (unsigned)(t->addr & 0xfffff);

			switch (t->kind) {
			case R_IFETCH: snprintf(tok, sizeof(tok), "%c%u", 'a' + tr, ix); break;
			case R_LOAD: snprintf(tok, sizeof(tok), "l%c%u", 'a' + tr, ix); break;
			case R_STORE: snprintf(tok, sizeof(tok), "s%c%u", 'a' + tr, ix); break;
			case R_INSNS: snprintf(tok, sizeof(tok), "n%u", t->size); break;
			case R_DEP: snprintf(tok, sizeof(tok), "d%u", t->size); break;
			default: {
				const struct os_event *ev = &b.ev[t->size];

				ck_assert_int_eq(t->kind, R_EVENT);
				ck_assert_uint_lt(t->size, b.nev);
				if (ev->kind == EV_SWITCH)
					snprintf(tok, sizeof(tok), "sw%llu", (unsigned long long)ev->addr);
				else if (ev->kind == EV_FORK)
					snprintf(tok, sizeof(tok), "f%llu", (unsigned long long)ev->addr);
				else if (ev->kind == EV_EXIT)
					snprintf(tok, sizeof(tok), "x");
				else if (ev->kind == EV_PRCTL) {
					ck_assert_uint_eq(ev->advice, PR_SET_THP_DISABLE_);
					ck_assert_uint_eq(ev->addr, 1);
					snprintf(tok, sizeof(tok), "p");
				} else
					snprintf(tok, sizeof(tok), "m%u", ev->file);
			}
			}
			len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? " " : "", tok);
			ck_assert_uint_lt(len, cap);
		}
	}
	ck_assert_int_eq(got, 0);
	ck_assert_int_eq(trace_next(r, &b, &e), 0); /* the end stays the end */
	if (nfiles)
		*nfiles = r->nfiles;
	trace_close(r);
}

static struct proc_cfg proc(struct proc_cfg p)
{
	if (!p.repeat)
		p.repeat = 1;
	return p;
}
#define P(...) proc((struct proc_cfg){ .trace = "t", __VA_ARGS__ })

static char out[1 << 16];

/* Round robin in slices of 4 instructions; each trace's end exits its process. */
START_TEST(round_robin_by_quantum)
{
	struct scripts sc = { .s = { "i i i i i i i i i i", "i i i i i i i i i i" } };
	struct proc_cfg p[2] = { P(), P() };

	run_mux(&sc, p, 2, 4, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 a1 a2 a3 sw1 b0 b1 b2 b3 sw0 a4 a5 a6 a7 sw1 b4 b5 b6 b7 "
			      "sw0 a8 a9 x sw1 b8 b9 x");
	/* a quantum past both traces: one after the other */
	run_mux(&sc, p, 2, 100, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 x sw1 b0 b1 b2 b3 b4 b5 b6 b7 b8 b9 x");
	/* one process: no switch at all, its exit at the end */
	run_mux(&sc, p, 1, 3, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 x");
}
END_TEST

/* An instruction's loads and stores stay in its slice; R_INSNS is split at the quantum. */
START_TEST(slices_cut_at_instructions)
{
	struct scripts sc = { .s = { "i l s i l i", "n10 l", "n3 s" } };
	struct proc_cfg p[3] = { P(), P(), P() };

	run_mux(&sc, p, 2, 1, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 la1 sa2 sw1 n1 sw0 a3 la4 sw1 n1 sw0 a5 x sw1 n1 n1 n1 n1 n1 n1 n1 "
			      "n1 lb1 x");
	run_mux(&sc, p, 3, 4, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 la1 sa2 a3 la4 a5 x sw1 n4 sw2 n3 sc1 x sw1 n4 n2 lb1 x");
}
END_TEST

/* start: a process enters the run queue at the first slice boundary past it; idle jumps. */
START_TEST(starts)
{
	struct scripts sc = { .s = { "i i i i i i i i i i", "i i i i" } };
	struct proc_cfg p[2] = { P(), P(.start = 3) };

	run_mux(&sc, p, 2, 2, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 a1 a2 a3 sw1 b0 b1 sw0 a4 a5 sw1 b2 b3 x sw0 a6 a7 a8 a9 x");
	/* listed later but starting first: it is process 0; nothing runs from 5 to 100 */
	p[0].start = 100;
	p[1].start = 50;
	run_mux(&sc, p, 2, 2, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "b0 b1 b2 b3 x sw1 a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 x");
}
END_TEST

/* repeat: each run a new process after the last exits, in the same place; prctl first. */
START_TEST(repeats_and_prctl)
{
	struct scripts sc = { .s = { "i i i", "i i i i i i i i" } };
	struct proc_cfg p[2] = { P(.repeat = 2, .thp_disable = true), P() };

	run_mux(&sc, p, 2, 2, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "p a0 a1 sw1 b0 b1 sw0 a2 x sw1 b2 b3 sw2 p a0 a1 sw1 b4 b5 sw2 a2 x "
			      "sw1 b6 b7 x");
	ck_assert_uint_eq(sc.opens, 3);
}
END_TEST

/* A trace of several processes: its fork and switch ids renumbered, its live processes exit. */
START_TEST(multiprocess_trace_renumbered)
{
	struct scripts sc = { .s = { "i f5 i w5 i x w0 i", "i w5 i w0 i" } };
	struct proc_cfg p[2] = { P(), P(.repeat = 2) };

	run_mux(&sc, p, 2, 100, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 f1 a2 sw1 a4 x sw0 a7 x "
			      "sw2 b0 sw3 b2 sw2 b4 x sw3 x "
			      "sw4 b0 sw5 b2 sw4 b4 x sw5 x");
	/* a switch to an id that exited is a new process; sliced, the trace's own process resumes */
	sc.s[0] = "i f5 i w5 i x w5 i i i";
	run_mux(&sc, p, 2, 2, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 f1 a2 sw2 b0 sw3 b2 sw1 a4 x sw4 a7 sw2 b4 x sw3 x "
			      "sw4 a8 a9 x sw0 x "
			      "sw5 b0 sw6 b2 sw5 b4 x sw6 x");
}
END_TEST

/* A dependence on a load of an earlier slice is dropped; within a slice it is kept. */
START_TEST(dependences_across_slices)
{
	struct scripts sc = { .s = { "i l i d1 l i l d1 l", "i" } };
	struct proc_cfg p[2] = { P(), P() };

	run_mux(&sc, p, 2, 1, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 la1 sw1 b0 x sw0 a2 la4 a5 la6 d1 la8 x");
	run_mux(&sc, p, 1, 100, out, sizeof(out), NULL);
	ck_assert_str_eq(out, "a0 la1 a2 d1 la4 a5 la6 d1 la8 x");
}
END_TEST

/* One file table: the same device and inode (or path) is one file of the machine. */
START_TEST(files_shared)
{
	static const struct trace_file fa[] = { { 1, 7, "/x" } };
	static const struct trace_file fb[] = { { 1, 9, "/y" }, { 1, 7, "/x-hardlink" } };
	struct scripts sc = { .s = { "m1 i", "m2 m1 i" }, .files = { fa, fb }, .nfiles = { 1, 2 } };
	struct proc_cfg p[2] = { P(), P() };
	size_t nf;

	run_mux(&sc, p, 2, 100, out, sizeof(out), &nf);
	ck_assert_str_eq(out, "m1 a1 x sw1 m1 m2 b2 x");
	ck_assert_uint_eq(nf, 2);
}
END_TEST

/* The stream does not depend on the inputs' batch sizes; batches of the mux are full. */
START_TEST(batch_sizes)
{
	static char big[2][5 * 6000 + 8], ref[1 << 17], got[1 << 17];
	struct scripts sc = { .s = { big[0], big[1] } };
	struct proc_cfg p[2] = { P(), P() };
	const char *pat[2] = { "i l ", "n3 " };

	for (int t = 0; t < 2; t++) {
		big[t][0] = '\0';
		for (int k = 0; k < 3000; k++)
			strcat(big[t], pat[t]);
	}
	run_mux(&sc, p, 2, 1000, ref, sizeof(ref), NULL);
	for (size_t bs = 1; bs <= 4096; bs *= 4) {
		sc.bs = bs;
		run_mux(&sc, p, 2, 1000, got, sizeof(got), NULL);
		ck_assert_str_eq(got, ref);
	}
	/* 1000 fetches of a, 333 R_INSNS of 3 and a split one of 1 of b, ... */
	ck_assert_ptr_nonnull(strstr(ref, "la1999 sw1 n3"));
	ck_assert_ptr_nonnull(strstr(ref, "n3 n1 sw0 a2000"));
}
END_TEST

/* Two real traces (workloads written as mtr) through mux_open_config(), laid out. */
static char tdir[] = "/tmp/check_trace_mux.XXXXXX";

static void write_trace(const char *spec, const char *name, char *path, size_t n)
{
	struct err e = { 0 };
	struct trace_reader *r = workload_open(spec, 1, &e);

	ck_assert_ptr_nonnull(r);
	snprintf(path, n, "%s/%s", tdir, name);
	ck_assert_int_eq(mtr_write_all(r, path, &e), 0);
}

struct counts {
	uint64_t refs, insns, ev[EV_NR];
	uint64_t first_prctl_at, first_switch_at, nrec;
	uint64_t switch_to[8];
};

static void count_stream(struct trace_reader *r, struct counts *c)
{
	struct trace_batch b;
	struct err e = { 0 };
	int got;

	memset(c, 0, sizeof(*c));
	c->first_prctl_at = c->first_switch_at = UINT64_MAX;
	while ((got = trace_next(r, &b, &e)) > 0)
		for (size_t k = 0; k < b.n; k++, c->nrec++) {
			const struct trace_rec *t = &b.recs[k];

			if (t->kind <= R_MODIFY)
				c->refs++;
			else if (t->kind == R_INSNS)
				c->insns += t->size;
			else if (t->kind == R_EVENT) {
				const struct os_event *ev = &b.ev[t->size];

				c->ev[ev->kind]++;
				if (ev->kind == EV_PRCTL && c->first_prctl_at == UINT64_MAX)
					c->first_prctl_at = c->nrec;
				if (ev->kind == EV_SWITCH && c->first_switch_at == UINT64_MAX)
					c->first_switch_at = c->nrec;
				if (ev->kind == EV_SWITCH && ev->addr < 8)
					c->switch_to[ev->addr]++;
			}
		}
	ck_assert_int_eq(got, 0);
}

START_TEST(from_config)
{
	char a[200], b[200];
	struct sim_config c;
	struct err e = { 0 };
	struct trace_reader *r;
	struct counts n;

	write_trace("stream:size=64K,iterations=1", "a.mtr", a, sizeof(a));
	write_trace("gups:size=64K,updates=100", "b.mtr", b, sizeof(b));
	config_defaults(&c);
	c.nprocs = 2;
	c.procs[0] = (struct proc_cfg){ .repeat = 1 };
	c.procs[1] = (struct proc_cfg){ .repeat = 2, .thp_disable = true, .start = 50000 };
	snprintf(c.procs[0].trace, sizeof(c.procs[0].trace), "%s", a);
	snprintf(c.procs[1].trace, sizeof(c.procs[1].trace), "%s", b);
	c.sched_quantum = 10000;
	r = mux_open_config(&c, TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->format, TF_MTR);
	count_stream(r, &n);
	trace_close(r);
	/* a: 16384 loads and 32768 stores, 106496 instructions; b twice: 8292 refs and
	 * 33968 instructions each (trace info) */
	ck_assert_uint_eq(n.refs, 49152 + 2 * 8292);
	ck_assert_uint_eq(n.insns, 106496 + 2 * 33968);
	ck_assert_uint_eq(n.ev[EV_MMAP], 3 + 2 * 1);
	ck_assert_uint_eq(n.ev[EV_EXIT], 3);
	ck_assert_uint_eq(n.ev[EV_PRCTL], 2);
	/* a is 11 slices (the last 6496 instructions), b 4 (the last 3968); b starts at
	 * the boundary at 50000: a1-a5, then b's first run (process 1) alternates with
	 * a: b1 a6 b1 a7 b1 a8 b1(exit) a9, then its second run (process 2): b2 a10 b2
	 * a11(exit) b2 b2(exit). Its prctl comes right after its first switch. */
	ck_assert_uint_eq(n.switch_to[0], 6);
	ck_assert_uint_eq(n.switch_to[1], 4);
	ck_assert_uint_eq(n.switch_to[2], 3);
	ck_assert_uint_eq(n.first_prctl_at, n.first_switch_at + 1);
	/* missing: said at open */
	snprintf(c.procs[1].trace, sizeof(c.procs[1].trace), "%s/none.mtr", tdir);
	ck_assert_ptr_null(mux_open_config(&c, TF_AUTO, &e));
	ck_assert_str_eq(e.msg, "No such file or directory");
}
END_TEST

/* The input identity covers every trace's content, in list order; not its path. */
START_TEST(identity_of_every_trace)
{
	char a[200], b[200], a2[200], id1[PROVENANCE_ID_MAX], id2[PROVENANCE_ID_MAX];
	struct sim_config c;
	struct err e = { 0 };
	FILE *f;

	write_trace("stream:size=64K,iterations=1", "a.mtr", a, sizeof(a));
	write_trace("gups:size=64K,updates=100", "b.mtr", b, sizeof(b));
	write_trace("stream:size=64K,iterations=1", "a2.mtr", a2, sizeof(a2));
	config_defaults(&c);
	c.nprocs = 2;
	snprintf(c.procs[0].trace, sizeof(c.procs[0].trace), "%s", a);
	snprintf(c.procs[1].trace, sizeof(c.procs[1].trace), "%s", b);
	ck_assert_int_eq(provenance_processes_id(&c, NULL, id1, sizeof(id1), &e), 0);
	ck_assert_int_eq(strncmp(id1, "processes:2:", 12), 0);
	ck_assert_uint_eq(strlen(id1), 12 + 32);
	snprintf(c.procs[0].trace, sizeof(c.procs[0].trace), "%s", a2); /* a copy: the same */
	ck_assert_int_eq(provenance_processes_id(&c, NULL, id2, sizeof(id2), &e), 0);
	ck_assert_str_eq(id1, id2);
	snprintf(c.procs[0].trace, sizeof(c.procs[0].trace), "%s", b); /* b, a: another */
	snprintf(c.procs[1].trace, sizeof(c.procs[1].trace), "%s", a);
	ck_assert_int_eq(provenance_processes_id(&c, NULL, id2, sizeof(id2), &e), 0);
	ck_assert_str_ne(id1, id2);
	snprintf(c.procs[0].trace, sizeof(c.procs[0].trace), "%s", a2); /* a byte changed */
	snprintf(c.procs[1].trace, sizeof(c.procs[1].trace), "%s", b);
	f = fopen(a2, "r+b");
	ck_assert_ptr_nonnull(f);
	fseek(f, -1, SEEK_END);
	fputc(0x5a, f);
	fclose(f);
	ck_assert_int_eq(provenance_processes_id(&c, NULL, id2, sizeof(id2), &e), 0);
	ck_assert_str_ne(id1, id2);
	ck_assert_int_eq(provenance_processes_id(&c, "mtr", id2, sizeof(id2), &e), 0);
	ck_assert_ptr_nonnull(strstr(id2, ",format=mtr"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace_mux");
	TCase *tc = tcase_create("trace_mux");

	tcase_add_test(tc, round_robin_by_quantum);
	tcase_add_test(tc, slices_cut_at_instructions);
	tcase_add_test(tc, starts);
	tcase_add_test(tc, repeats_and_prctl);
	tcase_add_test(tc, multiprocess_trace_renumbered);
	tcase_add_test(tc, dependences_across_slices);
	tcase_add_test(tc, files_shared);
	tcase_add_test(tc, batch_sizes);
	tcase_add_test(tc, from_config);
	tcase_add_test(tc, identity_of_every_trace);
	suite_add_tcase(s, tc);
	if (!mkdtemp(tdir))
		return 1;
	{
		int rc = check_run(s);

		check_rmdir(tdir);
		return rc;
	}
}
