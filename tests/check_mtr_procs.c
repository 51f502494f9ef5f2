/*
 * check_mtr_procs.c - mtr version 6's process events (trace_mtr.c): the
 * writer's and the reader's per-process decoding state (a round trip of two
 * processes, a fork, an exec and a prctl, record for record and byte for
 * byte), the process count, and the malformed streams the reader refuses with
 * "corrupt mtr trace at byte N: ... (record R)": a switch to the running
 * process or to one that exited, a fork of an id that exists, a record of a
 * process after its exit, a process event in a version 5 stream, a MAP record
 * that does not follow an exec.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/trace.h"
#include "check_run.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_mtr_procs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	check_rmdir(dir);
}

/* ---- a stream written by hand (traces/README.md) */

struct bytes {
	unsigned char b[4096];
	size_t n;
	unsigned nrec;
};

static void put_v(struct bytes *s, uint64_t v)
{
	while (v >= 0x80) {
		s->b[s->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	s->b[s->n++] = (unsigned char)v;
}

static void hdr(struct bytes *s, unsigned version)
{
	static const unsigned char m[8] = { 0x89, 'M', 'T', 'R', '\r', '\n', 0x1a, '\n' };

	memcpy(s->b, m, 8);
	memset(s->b + 8, 0, 8);
	s->b[8] = (unsigned char)version;
	s->n = 16;
	s->nrec = 0;
}

/* An EVENT record: @kind, advice @adv, addr @addr, fd -1. */
static void ev(struct bytes *s, unsigned kind, uint64_t adv, uint64_t addr)
{
	s->b[s->n++] = 0xc1;
	s->b[s->n++] = (unsigned char)kind;
	put_v(s, 0);
	put_v(s, 0);
	put_v(s, 1);
	put_v(s, adv);
	put_v(s, addr);
	for (int i = 0; i < 4; i++)
		put_v(s, 0);
	s->nrec++;
}

/* A load of 8 bytes at the predicted address (form 0). */
static void load(struct bytes *s)
{
	s->b[s->n++] = 8 << 2 | R_LOAD;
	s->nrec++;
}

static void end(struct bytes *s)
{
	s->b[s->n++] = 0xc0;
	put_v(s, s->nrec);
}

/* Read @s whole from a file; the error message ("" if none) into @msg. */
static int read_bytes(const struct bytes *s, char *msg, size_t n, uint64_t *procs)
{
	char path[128];
	FILE *f;
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	int k;

	snprintf(path, sizeof(path), "%s/t.mtr", dir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(s->b, 1, s->n, f), s->n);
	fclose(f);
	msg[0] = 0;
	r = trace_open(path, TF_MTR, &e);
	if (!r) {
		err_format(&e, msg, n);
		return -1;
	}
	while ((k = trace_next(r, &b, &e)) > 0)
		;
	if (k < 0)
		err_format(&e, msg, n);
	if (procs)
		*procs = r->processes;
	trace_close(r);
	return k;
}

static void refused(const struct bytes *s, const char *want)
{
	char msg[1024], full[1200];

	ck_assert_int_eq(read_bytes(s, msg, sizeof(msg), NULL), -1);
	snprintf(full, sizeof(full), "%s/t.mtr: %s", dir, want);
	ck_assert_str_eq(msg, full);
}

START_TEST(malformed)
{
	struct bytes s;
	uint64_t procs = 0;
	char msg[1024];

	/* valid: a fork, a switch to it, its exit, back to 0, 0's exit */
	hdr(&s, 6);
	load(&s);
	ev(&s, EV_FORK, 0, 7);
	ev(&s, EV_SWITCH, 0, 7);
	load(&s);
	ev(&s, EV_EXIT, 0, 0);
	ev(&s, EV_SWITCH, 0, 0);
	load(&s);
	ev(&s, EV_EXIT, 0, 0);
	end(&s);
	ck_assert_int_eq(read_bytes(&s, msg, sizeof(msg), &procs), 0);
	ck_assert_uint_eq(procs, 2);

	/* a switch to a process that exited (record 6: byte 16 + 1 + 3 * 11 + 1 + 11 + 11) */
	hdr(&s, 6);
	load(&s);
	ev(&s, EV_SWITCH, 0, 3);
	ev(&s, EV_EXIT, 0, 0);
	ev(&s, EV_SWITCH, 0, 0);
	ev(&s, EV_SWITCH, 0, 3);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 50: switch to process 3, which exited (record 5)");

	/* a switch to the running process */
	hdr(&s, 6);
	ev(&s, EV_SWITCH, 0, 0);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 16: switch to process 0, which is running (record 1)");

	/* a fork of an id that exists (process 0, or one forked before) */
	hdr(&s, 6);
	ev(&s, EV_FORK, 0, 1);
	ev(&s, EV_FORK, 0, 1);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 27: fork of process 1, which exists (record 2)");
	hdr(&s, 6);
	ev(&s, EV_FORK, 0, 0);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 16: fork of process 0, which exists (record 1)");

	/* a record of a process after its exit */
	hdr(&s, 6);
	ev(&s, EV_EXIT, 0, 0);
	load(&s);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 27: a record of process 0 after its exit (record 2)");
	hdr(&s, 6);
	ev(&s, EV_EXIT, 0, 0);
	ev(&s, EV_PRCTL, PR_SET_THP_DISABLE_, 1);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 27: a record of process 0 after its exit (record 2)");

	/* a prctl option other than PR_SET_THP_DISABLE */
	hdr(&s, 6);
	ev(&s, EV_PRCTL, 42, 1);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 16: prctl option 42 (only PR_SET_THP_DISABLE) (record 1)");

	/* a process event below version 6 */
	hdr(&s, 5);
	ev(&s, EV_FORK, 0, 1);
	end(&s);
	refused(&s, "corrupt mtr trace at byte 16: bad event kind");

	/* a MAP record after the start, not after an exec */
	hdr(&s, 6);
	load(&s);
	s.b[s.n++] = 0xc3;
	for (int i = 0; i < 7; i++)
		put_v(&s, i == 1 ? 4096 : 0);
	put_v(&s, 0);
	s.nrec++;
	end(&s);
	refused(&s, "corrupt mtr trace at byte 17: a mapping record not at the start of an image");

	/* version 7 is not read */
	hdr(&s, 7);
	end(&s);
	refused(&s, "unsupported mtr version 7 (this build reads versions 1 to 6)");
}
END_TEST

/* ---- the reader's records, and the writer's bytes */

/* A reference, encoded as the writer does from the process's predicted address *@expect. */
static void ref(struct bytes *s, vaddr_t *expect, unsigned kind, vaddr_t a, unsigned size)
{
	uint64_t d = a - *expect;

	s->b[s->n++] = (unsigned char)((d ? 1 : 0) << 6 | size << 2 | kind);
	if (d)
		put_v(s, (d << 1) ^ (uint64_t)((int64_t)d >> 63));
	*expect = a + size;
	s->nrec++;
}

struct want {
	unsigned kind; /* enum rec_kind; R_EVENT: ev is the event kind */
	unsigned ev;
	uint64_t addr;
};

/*
 * Two processes, written by hand with each process's own predicted
 * addresses (a forked process and an exec'd image start from 0): the
 * reader gives every record as meant (so it keeps the state per process),
 * and `trace convert`'s writer (mtr_write_all()) gives back the same bytes
 * (so it keeps the same state).
 */
START_TEST(round_trip)
{
	struct bytes s;
	vaddr_t ei0 = 0, ed0 = 0, ei1 = 0, ed1 = 0; /* predicted: fetches, data; process 0, 1 */
	struct want w[32];
	size_t nw = 0, k = 0;
	char path[128], out[128], msg[1024];
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	FILE *f;
	int n;

#define W(k_, ev_, a_) (w[nw++] = (struct want){ (k_), (ev_), (a_) })
	hdr(&s, 6);
	ref(&s, &ei0, R_IFETCH, 0x401000, 4), W(R_IFETCH, 0, 0x401000);
	ref(&s, &ed0, R_LOAD, 0x9000, 8), W(R_LOAD, 0, 0x9000);
	ev(&s, EV_PRCTL, PR_SET_THP_DISABLE_, 1), W(R_EVENT, EV_PRCTL, 1);
	ev(&s, EV_FORK, 0, 1), W(R_EVENT, EV_FORK, 1);
	ref(&s, &ed0, R_LOAD, 0x9008, 8), W(R_LOAD, 0, 0x9008);
	ev(&s, EV_SWITCH, 0, 1), W(R_EVENT, EV_SWITCH, 1);
	ref(&s, &ed1, R_LOAD, 0x5000, 8), W(R_LOAD, 0, 0x5000);
	ref(&s, &ed1, R_STORE, 0x5008, 8), W(R_STORE, 0, 0x5008);
	ev(&s, EV_EXEC, 0, 0), W(R_EVENT, EV_EXEC, 0);
	ei1 = ed1 = 0;
	ref(&s, &ei1, R_IFETCH, 0x400000, 2), W(R_IFETCH, 0, 0x400000);
	ev(&s, EV_SWITCH, 0, 0), W(R_EVENT, EV_SWITCH, 0);
	ref(&s, &ed0, R_LOAD, 0x9010, 8), W(R_LOAD, 0, 0x9010);
	ref(&s, &ei0, R_IFETCH, 0x401004, 4), W(R_IFETCH, 0, 0x401004);
	ev(&s, EV_EXIT, 0, 0), W(R_EVENT, EV_EXIT, 0);
	ev(&s, EV_SWITCH, 0, 1), W(R_EVENT, EV_SWITCH, 1);
	ref(&s, &ei1, R_IFETCH, 0x400002, 2), W(R_IFETCH, 0, 0x400002);
	ev(&s, EV_EXIT, 0, 0), W(R_EVENT, EV_EXIT, 0);
	end(&s);
#undef W
	snprintf(path, sizeof(path), "%s/hand.mtr", dir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(s.b, 1, s.n, f), s.n);
	fclose(f);
	r = trace_open(path, TF_MTR, &e);
	ck_assert_ptr_nonnull(r);
	while ((n = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++, k++) {
			ck_assert_uint_lt(k, nw);
			ck_assert_uint_eq(b.recs[i].kind, w[k].kind);
			if (w[k].kind == R_EVENT) {
				ck_assert_uint_eq(b.ev[b.recs[i].size].kind, w[k].ev);
				ck_assert_uint_eq(b.ev[b.recs[i].size].addr, w[k].addr);
			} else {
				ck_assert_uint_eq(b.recs[i].addr, w[k].addr);
			}
		}
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(n == 0, "%s", msg);
	ck_assert_uint_eq(k, nw);
	ck_assert_uint_eq(r->processes, 2);
	ck_assert_uint_eq(r->forks, 1);
	trace_close(r);

	/* trace convert: the same bytes */
	r = trace_open(path, TF_MTR, &e);
	ck_assert_ptr_nonnull(r);
	snprintf(out, sizeof(out), "%s/conv.mtr", dir);
	ck_assert_int_eq(mtr_write_all(r, out, &e), 0);
	{
		unsigned char got[4096];
		size_t len;

		f = fopen(out, "rb");
		ck_assert_ptr_nonnull(f);
		len = fread(got, 1, sizeof(got), f);
		fclose(f);
		ck_assert_uint_eq(len, s.n);
		ck_assert(!memcmp(got, s.b, len));
	}
}
END_TEST

static Suite *mtr_procs_suite(void)
{
	Suite *s = suite_create("mtr_procs");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(mtr_procs_suite());
}
