/*
 * check_trace.c - the trace layer: byte streams and decompression (trace_io.c),
 * the lackey reader (trace_lackey.c), the mtr reader and writer (trace_mtr.c),
 * format detection (trace.c).
 *
 * Committed inputs are in tests/data/ (override with MMUSIM_TESTDATA); the
 * validation trace is read from tests/validation/ (a copy of ../shared/validation).
 * Everything else is
 * written to a fresh temporary directory per run.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <zstd.h>

#include "../sim/trace.h"
#include "../sim/trace_io.h"
#include "../sim/workload.h"
#include "check_run.h"

static char tmpdir[256];

/* MMUSIM_TESTDATA, else data/ next to this source file (tests/data from the repository root). */
static const char *data_dir(void)
{
	static char buf[1024];
	const char *d = getenv("MMUSIM_TESTDATA"), *slash = strrchr(__FILE__, '/');

	if (d && *d)
		return d;
	snprintf(buf, sizeof(buf), "%.*sdata", slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
	return buf;
}

static const char *data_path(const char *name)
{
	static char buf[4][2048];
	static int i;
	char *p = buf[i++ & 3];

	snprintf(p, sizeof(buf[0]), "%s/%s", data_dir(), name);
	return p;
}

#include "check_files.h"

static void write_str(const char *path, const char *s)
{
	write_file(path, s, strlen(s));
}

static unsigned char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Every record of a trace, events gathered in order (R_EVENT size = index into ev). */
struct recs {
	struct trace_rec *r;
	size_t n, cap;
	struct os_event *ev;
	size_t nev, cap_ev;
	char name[256];
	enum trace_format format;
};

static void recs_free(struct recs *rs)
{
	free(rs->r);
	free(rs->ev);
	memset(rs, 0, sizeof(*rs));
}

static void recs_add(struct recs *rs, struct trace_rec r, const struct os_event *ev)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 1024;
		rs->r = realloc(rs->r, rs->cap * sizeof(*rs->r));
	}
	if (ev) {
		if (rs->nev == rs->cap_ev) {
			rs->cap_ev = rs->cap_ev ? 2 * rs->cap_ev : 64;
			rs->ev = realloc(rs->ev, rs->cap_ev * sizeof(*rs->ev));
		}
		rs->ev[rs->nev] = *ev;
		r.size = (uint32_t)rs->nev++;
	}
	rs->r[rs->n++] = r;
}

/*
 * Open @path as @fmt and read it to the end. Returns 0, or -1 with the
 * formatted error ("file:line: message") in @msg. @out may be NULL.
 */
static int drain(const char *path, enum trace_format fmt, struct recs *out, char *msg, size_t len)
{
	struct err e = { 0 };
	struct trace_reader *r = trace_open(path, fmt, &e);
	struct trace_batch b;
	int n;

	msg[0] = '\0';
	if (!r) {
		err_format(&e, msg, len);
		return -1;
	}
	if (out) {
		snprintf(out->name, sizeof(out->name), "%s", r->name);
		out->format = r->format;
	}
	while ((n = trace_next(r, &b, &e)) > 0) {
		ck_assert_int_eq((size_t)n, b.n);
		ck_assert_uint_le(b.n, TRACE_BATCH);
		for (size_t i = 0; out && i < b.n; i++) {
			const struct trace_rec *x = &b.recs[i];

			if (x->kind == R_EVENT) {
				if (x->size >= b.nev)
					ck_abort_msg("event index %u of %zu", x->size, b.nev);
				recs_add(out, *x, &b.ev[x->size]);
			} else {
				recs_add(out, *x, NULL);
			}
		}
	}
	if (n < 0)
		err_format(&e, msg, len);
	trace_close(r);
	return n < 0 ? -1 : 0;
}

/* The error that reading @path as @fmt must end with. */
static void expect_error(const char *path, enum trace_format fmt, const char *want)
{
	char msg[1024];

	ck_assert_int_eq(drain(path, fmt, NULL, msg, sizeof(msg)), -1);
	ck_assert_str_eq(msg, want);
}

/* Compare without an assertion per record: each ck_assert costs a message to the runner. */
static void recs_equal(const struct recs *a, const struct recs *b)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert_uint_eq(a->nev, b->nev);
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].kind != b->r[i].kind || a->r[i].addr != b->r[i].addr ||
		    a->r[i].size != b->r[i].size)
			ck_abort_msg("record %zu differs: %u %#llx %u vs %u %#llx %u", i, a->r[i].kind,
				     (unsigned long long)a->r[i].addr, a->r[i].size, b->r[i].kind,
				     (unsigned long long)b->r[i].addr, b->r[i].size);
	for (size_t i = 0; i < a->nev; i++)
		if (memcmp(&a->ev[i], &b->ev[i], sizeof(a->ev[i])))
			ck_abort_msg("event %zu differs", i);
}

static void rec_is(const struct recs *rs, size_t i, unsigned kind, vaddr_t addr, uint32_t size)
{
	ck_assert_uint_lt(i, rs->n);
	ck_assert_uint_eq(rs->r[i].kind, kind);
	ck_assert_uint_eq(rs->r[i].addr, addr);
	ck_assert_uint_eq(rs->r[i].size, size);
}

/* ------------------------------------------------------------ names */

START_TEST(test_names)
{
	static const char *const fmts[] = { "auto", "lackey", "mtr", "pin", "champsim", "din",
					    "workload" };
	static const char *const evs[] = { "mmap", "munmap", "mprotect", "madvise", "brk",
					   "mremap", "marker", "mlock", "munlock", "mlockall",
					   "munlockall", "fork", "switch", "exit", "exec", "prctl" };

	for (int f = 0; f < TF_NR; f++) {
		ck_assert_str_eq(trace_format_name[f], fmts[f]);
		ck_assert_int_eq(trace_format_parse(fmts[f]), f);
	}
	ck_assert_int_eq(trace_format_parse("Lackey"), TF_NR);
	ck_assert_int_eq(trace_format_parse(""), TF_NR);
	for (int k = 0; k < EV_NR; k++)
		ck_assert_str_eq(ev_kind_name[k], evs[k]);
}
END_TEST

/* The help texts come from the format table: every file format, in detection order. */
START_TEST(test_format_help)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_str_eq(trace_format_list(), "mtr, lackey, pin, din or champsim");
	ck_assert_ptr_nonnull(f);
	trace_formats_help(f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\n  lackey    .lackey "));
	ck_assert_ptr_nonnull(strstr(buf, "  pin       .pin pinatrace.out "));
	ck_assert_ptr_nonnull(strstr(buf, "  champsim  .champsim .champsimtrace champsim.trace "));
	ck_assert_ptr_null(strstr(buf, "auto"));
	ck_assert_ptr_null(strstr(buf, "workload"));
	free(buf);
}
END_TEST

/* ------------------------------------------------------------ lackey */

static void check_basic(const struct recs *rs)
{
	ck_assert_uint_eq(rs->n, 13);
	ck_assert_uint_eq(rs->nev, 0);
	rec_is(rs, 0, R_IFETCH, 0x0401ab70, 3);
	rec_is(rs, 1, R_IFETCH, 0x0401ab73, 5);
	rec_is(rs, 2, R_STORE, 0x1fff0006b8, 8);
	rec_is(rs, 3, R_LOAD, 0x04a29740, 8);
	rec_is(rs, 4, R_MODIFY, 0x04a2a064, 4);
	rec_is(rs, 5, R_IFETCH, 0, 1);
	rec_is(rs, 6, R_LOAD, 0x1ffffffffffffffULL, 65536); /* 2^57 - 1 */
	rec_is(rs, 7, R_STORE, 0xffff, 1);
	rec_is(rs, 8, R_IFETCH, 0x0401ab78, 15); /* upper-case hex */
	rec_is(rs, 9, R_LOAD, 0x7ff0001000, 16);
	rec_is(rs, 10, R_IFETCH, 0x0401ab87, 12);
	rec_is(rs, 11, R_MODIFY, 0x04a2a068, 2); /* trailing blanks and CR */
	rec_is(rs, 12, R_IFETCH, 0x0401ab93, 2); /* no final newline */
}

START_TEST(test_lackey_basic)
{
	struct recs rs = { 0 };
	char msg[1024];

	ck_assert_int_eq(drain(data_path("basic.lackey"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	ck_assert_str_eq(rs.name, data_path("basic.lackey"));
	check_basic(&rs);
	recs_free(&rs);

	/* the same with the format given */
	ck_assert_int_eq(drain(data_path("basic.lackey"), TF_LACKEY, &rs, msg, sizeof(msg)), 0);
	check_basic(&rs);
	recs_free(&rs);
}
END_TEST

START_TEST(test_lackey_compressed)
{
	static const char *const names[] = { "basic.lackey.gz", "basic.lackey.xz",
					     "basic.lackey.zst" };
	struct recs plain = { 0 }, rs = { 0 };
	char msg[1024];

	ck_assert_int_eq(drain(data_path("basic.lackey"), TF_AUTO, &plain, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		/* two frames / members / streams each: concatenation is read through */
		ck_assert_msg(drain(data_path(names[i]), TF_AUTO, &rs, msg, sizeof(msg)) == 0, "%s",
			      msg);
		ck_assert_int_eq(rs.format, TF_LACKEY);
		recs_equal(&plain, &rs);
		recs_free(&rs);
	}
	recs_free(&plain);
}
END_TEST

static void ev_is(const struct recs *rs, size_t rec, enum ev_kind kind, vaddr_t addr, uint64_t len,
		  unsigned long line)
{
	const struct os_event *o;

	ck_assert_uint_lt(rec, rs->n);
	ck_assert_uint_eq(rs->r[rec].kind, R_EVENT);
	ck_assert_uint_lt(rs->r[rec].size, rs->nev);
	o = &rs->ev[rs->r[rec].size];
	ck_assert_str_eq(ev_kind_name[o->kind], ev_kind_name[kind]);
	ck_assert_uint_eq(o->addr, addr);
	ck_assert_uint_eq(rs->r[rec].addr, addr);
	ck_assert_uint_eq(o->len, len);
	ck_assert_uint_eq(o->line, line);
}

START_TEST(test_lackey_syscalls)
{
	struct recs rs = { 0 };
	const struct os_event *o;
	char msg[1024];

	ck_assert_msg(drain(data_path("syscalls.lackey"), TF_AUTO, &rs, msg, sizeof(msg)) == 0, "%s",
		      msg);
	ck_assert_uint_eq(rs.n, 16);
	ck_assert_uint_eq(rs.nev, 11);

	/* brk(0): the initial break is the result */
	ev_is(&rs, 0, EV_BRK, 0x4035000, 0, 2);
	rec_is(&rs, 1, R_IFETCH, 0x04011f4f, 3);
	/* openat, read, close, arch_prctl, an unimplemented syscall: skipped */
	ev_is(&rs, 2, EV_MMAP, 0x4835000, 8192, 8);
	o = &rs.ev[rs.r[2].size];
	ck_assert_uint_eq(o->prot, 3);
	ck_assert_uint_eq(o->flags, 0x22);
	ck_assert_int_eq(o->fd, -1); /* printed as 4294967295 */
	ck_assert_uint_eq(o->new_addr, 0); /* no hint */
	ev_is(&rs, 3, EV_MMAP, 0x4838000, 4096, 9);
	o = &rs.ev[rs.r[3].size];
	ck_assert_uint_eq(o->prot, 5);
	ck_assert_uint_eq(o->flags, 2066);
	ck_assert_int_eq(o->fd, 4);
	ck_assert_uint_eq(o->new_addr, 0x4838000); /* the address argument, the hint */
	ck_assert_uint_eq(o->off, 4096);
	rec_is(&rs, 4, R_LOAD, 0x04a29740, 8);
	ev_is(&rs, 5, EV_MPROTECT, 0x4a16000, 16384, 15);
	ck_assert_uint_eq(rs.ev[rs.r[5].size].prot, 1);
	ev_is(&rs, 6, EV_MUNMAP, 0x483c000, 43643, 16);
	/* munmap Failure(0x16): dropped. madvise [async]: takes effect at its result */
	rec_is(&rs, 7, R_STORE, 0x04a2c000, 8);
	ev_is(&rs, 8, EV_MADVISE, 0x4a2c000, 8388608, 18);
	ck_assert_uint_eq(rs.ev[rs.r[8].size].advice, 14);
	/* an [async] madvise that fails: dropped; two threads' results matched by tid */
	rec_is(&rs, 9, R_IFETCH, 0x0491b3e0, 7);
	ev_is(&rs, 10, EV_MADVISE, 0x4a2c000, 4096, 24);
	ck_assert_uint_eq(rs.ev[rs.r[10].size].advice, 15);
	ev_is(&rs, 11, EV_MADVISE, 0x6000000, 2097152, 23);
	ck_assert_uint_eq(rs.ev[rs.r[11].size].advice, 4);
	/* mremap [pre-fail]: dropped; then a move and a fixed move */
	ev_is(&rs, 12, EV_MREMAP, 0x4a2c000, 8388608, 29);
	o = &rs.ev[rs.r[12].size];
	ck_assert_uint_eq(o->new_len, 16777216);
	ck_assert_uint_eq(o->flags, 1);
	ck_assert_uint_eq(o->new_addr, 0x8000000);
	ev_is(&rs, 13, EV_MREMAP, 0x8000000, 16777216, 30);
	o = &rs.ev[rs.r[13].size];
	ck_assert_uint_eq(o->new_len, 4096);
	ck_assert_uint_eq(o->flags, 3);
	ck_assert_uint_eq(o->new_addr, 0x7000000);
	/* mmap MAP_HUGETLB [pre-fail]: dropped */
	ev_is(&rs, 14, EV_BRK, 0x4036000, 0, 32);
	rec_is(&rs, 15, R_IFETCH, 0x0491b407, 2);
	recs_free(&rs);
}
END_TEST

START_TEST(test_lackey_variants)
{
	/* forms the fast path leaves to the careful one, which accepts them */
	static const char text[] = "I  401ab70,3\n"		/* 7 digits */
				   "I  0,1\n"
				   " L 000000000000000000401000,8\n" /* 24 digits, leading zeros */
				   " S 1fff0006b8,512\n"		/* 3-digit size */
				   " M 1fff0006b8,00016\n"
				   "I  0401ab70,4\t\r\n"
				   "\t\r\n"				/* blank */
				   "  --> [pre-fail] Failure(0x26) \n"	/* a syscall's tail */
				   "I  0401AB7F,4\n";
	struct recs rs = { 0 };
	char msg[1024];

	write_str(tmp_path("variants.lackey"), text);
	ck_assert_msg(drain(tmp_path("variants.lackey"), TF_LACKEY, &rs, msg, sizeof(msg)) == 0,
		      "%s", msg);
	ck_assert_uint_eq(rs.n, 7);
	rec_is(&rs, 0, R_IFETCH, 0x401ab70, 3);
	rec_is(&rs, 1, R_IFETCH, 0, 1);
	rec_is(&rs, 2, R_LOAD, 0x401000, 8);
	rec_is(&rs, 3, R_STORE, 0x1fff0006b8, 512);
	rec_is(&rs, 4, R_MODIFY, 0x1fff0006b8, 16);
	rec_is(&rs, 5, R_IFETCH, 0x401ab70, 4);
	rec_is(&rs, 6, R_IFETCH, 0x401ab7f, 4);
	recs_free(&rs);
}
END_TEST

/* A text, and the error it must give (after "PATH:"). Texts may hold NUL bytes. */
#define BAD(text, err) { text, sizeof(text) - 1, err }
static const struct {
	const char *text;
	size_t len;
	const char *err;
} bad_lines[] = {
	BAD("I  04zz1000,4\n", "1: bad hex address '04zz1000'"),
	BAD("I  0x401000,4\n", "1: bad hex address '0x401000'"),
	BAD(" L ,4\n", "1: bad hex address ''"),
	BAD("I  0401ab70,3\n L 200000000000000,8\n", "2: address 0x200000000000000 is over 57 bits"),
	BAD(" S ffffffffffffffffff,8\n", "1: address 0xffffffffffffffffff is over 57 bits"),
	BAD("I  0401ab70\n", "1: missing size"),
	BAD("I  0401ab70,\n", "1: missing size"),
	BAD("I  0401ab70,0\n", "1: size 0"),
	BAD("I  0401ab70,65537\n", "1: size 65537 is over 65536"),
	BAD("I  0401ab70,4x\n", "1: bad size '4x'"),
	BAD("I  0401ab70,-4\n", "1: bad size '-4'"),
	BAD("hello\n", "1: unrecognized line"),
	BAD("I 0401ab70,4\n", "1: unrecognized line"),
	BAD(" X 0401ab70,4\n", "1: unrecognized line"),
	BAD("**123** valgrind: out of memory\n", "1: unrecognized line"),
	/* line numbers count every line, skipped ones too */
	BAD("==1== x\n\nI  0401ab70,4\n--1-- y\n L zz,4\n", "5: bad hex address 'zz'"),
	BAD("I  0401ab70,4\n\0\0\0\n", "2: unrecognized line"),
	BAD("I  0401ab70,4\nI  0401\0b70,4\n", "2: unrecognized line"),
	BAD("I  0401ab70,4\n\x89\xfe\x01\n", "2: unrecognized line"),
	BAD("SYSCALL[1,1](9 sys_mmap\n", "1: malformed SYSCALL line"),
	BAD("SYSCALL[1,x](9) sys_brk ( 0x0 ) --> [pre-success] Success(0x1000)\n",
	    "1: malformed SYSCALL line"),
	BAD("SYSCALL[1,1](12) \n", "1: malformed SYSCALL line"),
	BAD("SYSCALL[1,1](9) sys_mmap ( 0x0, 4096 ) --> [pre-success] Success(0x1000)\n",
	    "1: bad arguments to sys_mmap"),
	BAD("SYSCALL[1,1](11) sys_munmap ( 0x1000, zz )[sync] --> Success(0x0)\n",
	    "1: bad arguments to sys_munmap"),
	BAD("SYSCALL[1,1](9) sys_mmap ( 0x0, 4096, 3, 34, 4294967295, 0 ) --> [pre-success] Maybe\n",
	    "1: bad result of sys_mmap"),
	BAD("SYSCALL[1,1](12) sys_brk ( 0x0 ) --> [pre-success] Success(0x1000) junk\n",
	    "1: bad result of sys_brk"),
	BAD("SYSCALL[1,1](28) sys_madvise ( 0x1000, 4096, 4 ) --> [async] ... \n"
	    "SYSCALL[1,1](28) ... [async] --> Succ\n",
	    "2: bad result of sys_madvise"),
};

START_TEST(test_lackey_errors)
{
	const char *path = tmp_path("bad.lackey");
	char want[1200];

	for (size_t i = 0; i < ARRAY_SIZE(bad_lines); i++) {
		write_file(path, bad_lines[i].text, bad_lines[i].len);
		snprintf(want, sizeof(want), "%s:%s", path, bad_lines[i].err);
		expect_error(path, TF_LACKEY, want);
	}
}
END_TEST

START_TEST(test_lackey_long_line)
{
	const char *path = tmp_path("long.lackey");
	size_t n = 3 * TIO_CHUNK;
	char *buf = malloc(n + 8), want[1200];
	struct recs rs = { 0 };

	/* a 4096-byte Valgrind line is accepted, 4097 is not */
	memset(buf, 'x', 4096);
	memcpy(buf, "==12== ", 7);
	memcpy(buf + 4096, "\nI  0401ab70,4\n", 15);
	write_file(path, buf, 4096 + 15);
	ck_assert_int_eq(drain(path, TF_LACKEY, &rs, want, sizeof(want)), 0);
	ck_assert_uint_eq(rs.n, 1);
	recs_free(&rs);

	memcpy(buf, "I  0401ab70,4\n==12== ", 21);
	memset(buf + 21, 'x', 4097 - 7);
	memcpy(buf + 14 + 4097, "\n", 1);
	write_file(path, buf, 14 + 4097 + 1);
	snprintf(want, sizeof(want), "%s:2: line longer than 4096 bytes", path);
	expect_error(path, TF_LACKEY, want);

	/* a line without a newline across several chunks */
	memcpy(buf, "I  0401ab70,4\nI  ", 17);
	memset(buf + 17, '0', n - 17);
	write_file(path, buf, n);
	snprintf(want, sizeof(want), "%s:2: line longer than 4096 bytes", path);
	expect_error(path, TF_LACKEY, want);
	free(buf);
}
END_TEST

START_TEST(test_dev_zero)
{
	time_t t0 = time(NULL);

	expect_error("/dev/zero", TF_AUTO, "/dev/zero: cannot detect the trace format (use --format)");
	expect_error("/dev/zero", TF_LACKEY, "/dev/zero:1: line longer than 4096 bytes");
	expect_error("/dev/zero", TF_MTR, "/dev/zero: not an mtr trace (bad magic)");
	ck_assert_int_le(time(NULL) - t0, 2);
}
END_TEST

/* A small deterministic generator (xorshift64*), so the tests need no seed state. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

START_TEST(test_lackey_garbage)
{
	const char *path = tmp_path("garbage.lackey");
	size_t len, n = 1 << 16;
	unsigned char *base = read_file(data_path("syscalls.lackey"), &len);
	unsigned char *buf = malloc(n);
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	char msg[1024], want[1200];

	/* random bytes: an error on line 1, not a hang */
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(rng_next(&s) >> 56);
	buf[0] = 0xc3; /* not a lackey line start */
	buf[100] = '\n';
	write_file(path, buf, n);
	snprintf(want, sizeof(want), "%s:1: unrecognized line", path);
	expect_error(path, TF_LACKEY, want);
	write_file(tmp_path("garbage.bin"), buf, n);
	snprintf(want, sizeof(want), "%s: cannot detect the trace format (use --format)",
		 tmp_path("garbage.bin"));
	expect_error(tmp_path("garbage.bin"), TF_AUTO, want);

	/* mutations of a real trace: each ends (with records or an error), none crashes */
	for (int k = 0; k < 300; k++) {
		memcpy(buf, base, len);
		for (int j = 0; j < 1 + k % 4; j++)
			buf[rng_next(&s) % len] = (unsigned char)(rng_next(&s) >> 56);
		write_file(path, buf, len - (size_t)(k % 7));
		(void)drain(path, TF_LACKEY, NULL, msg, sizeof(msg));
	}
	free(base);
	free(buf);
}
END_TEST

/* Cut @name at every length; all must be "truncated", except at @boundary (a complete first part). */
static void truncate_all(const char *name, const char *kind, size_t boundary, size_t nrec_at_boundary)
{
	size_t len;
	unsigned char *buf = read_file(data_path(name), &len);
	const char *path = tmp_path(name);
	char want[1200], msg[1024];

	snprintf(want, sizeof(want), "%s: truncated %s stream", path, kind);
	for (size_t k = 0; k < len; k++) {
		struct recs rs = { 0 };

		write_file(path, buf, k);
		if (k == boundary) {
			ck_assert_msg(drain(path, TF_LACKEY, &rs, msg, sizeof(msg)) == 0, "%s", msg);
			ck_assert_uint_eq(rs.n, nrec_at_boundary);
			recs_free(&rs);
			continue;
		}
		ck_assert_int_eq(drain(path, TF_LACKEY, NULL, msg, sizeof(msg)), -1);
		ck_assert_msg(!strcmp(msg, want), "cut at %zu: %s", k, msg);
	}
	free(buf);
}

START_TEST(test_truncated_compressed)
{
	/* the committed files hold two members; the first ends after 4 records */
	truncate_all("basic.lackey.gz", "gzip", 146, 4);
	truncate_all("basic.lackey.xz", "xz", 196, 4);
	truncate_all("basic.lackey.zst", "zstd", 138, 4);
}
END_TEST

START_TEST(test_corrupt_compressed)
{
	static const char *const names[] = { "basic.lackey.gz", "basic.lackey.xz",
					     "basic.lackey.zst" };
	static const char *const kinds[] = { "gzip", "xz", "zstd" };
	char want[1200];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		size_t len;
		unsigned char *buf = read_file(data_path(names[i]), &len);
		const char *path = tmp_path(names[i]);

		buf[60] ^= 0xff;
		write_file(path, buf, len);
		snprintf(want, sizeof(want), "%s: corrupt %s stream", path, kinds[i]);
		expect_error(path, TF_AUTO, want);
		/* trailing garbage after a complete stream */
		buf[60] ^= 0xff;
		write_file(path, buf, len);
		{
			FILE *f = fopen(path, "ab");

			fputs("garbage after the stream\n", f); /* longer than an xz header */
			fclose(f);
		}
		expect_error(path, TF_AUTO, want);
		free(buf);
	}
}
END_TEST

START_TEST(test_missing_and_dir)
{
	char want[1200];

	snprintf(want, sizeof(want), "%s: No such file or directory", tmp_path("nope.lackey"));
	expect_error(tmp_path("nope.lackey"), TF_AUTO, want);
	snprintf(want, sizeof(want), "%s: Is a directory", tmpdir);
	expect_error(tmpdir, TF_AUTO, want);
	expect_error(tmpdir, TF_MTR, want);
}
END_TEST

/*
 * A lackey text of @n records with lines of every length the fast path meets
 * (8, 10 and 12 address digits, 1-3 size digits), plus skipped lines; the
 * records it holds go to @rs.
 */
static char *gen_lackey(size_t n, uint64_t seed, struct recs *rs, size_t *len)
{
	size_t cap = n * 64 + 1024, o = 0;
	char *buf = malloc(cap);
	uint64_t s = seed;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = rng_next(&s);
		unsigned kind = (unsigned)(x & 3);
		vaddr_t a;
		uint32_t size;

		switch ((x >> 2) & 3) {
		case 0:
			a = (x >> 8) & 0xffffffff;
			break;
		case 1:
			a = 0x1f00000000ULL | ((x >> 8) & 0xffffffff);
			break;
		case 2:
			a = (x >> 8) & 0xffffffffffffULL;
			break;
		default:
			a = (x >> 8) & (VADDR_LIMIT - 1);
			break;
		}
		size = (x >> 60) == 0 ? 100 + (uint32_t)((x >> 40) % 900) : 1 + (uint32_t)((x >> 40) % 32);
		if ((x >> 20) % 50 == 0)
			o += (size_t)sprintf(buf + o, "==123== message %zu\n", i);
		if (kind == R_IFETCH)
			o += (size_t)sprintf(buf + o, "I  %08llx,%u\n", (unsigned long long)a, size);
		else
			o += (size_t)sprintf(buf + o, " %c %08llx,%u\n", "ILSM"[kind],
					     (unsigned long long)a, size);
		recs_add(rs, (struct trace_rec){ .addr = a, .size = size, .kind = kind }, NULL);
	}
	*len = o;
	return buf;
}

START_TEST(test_lackey_chunks)
{
	struct recs want = { 0 }, got = { 0 };
	size_t len, zcap, zlen;
	char *text = gen_lackey(250000, 42, &want, &len);
	void *z;
	char msg[1024];

	ck_assert_uint_gt(len, 3 * TIO_CHUNK); /* lines straddle several chunk ends */
	write_file(tmp_path("gen.lackey"), text, len);
	ck_assert_msg(drain(tmp_path("gen.lackey"), TF_AUTO, &got, msg, sizeof(msg)) == 0, "%s", msg);
	recs_equal(&want, &got);
	recs_free(&got);

	zcap = ZSTD_compressBound(len);
	z = malloc(zcap);
	zlen = ZSTD_compress(z, zcap, text, len, 1);
	ck_assert(!ZSTD_isError(zlen));
	write_file(tmp_path("gen.lackey.zst"), z, zlen);
	ck_assert_msg(drain(tmp_path("gen.lackey.zst"), TF_AUTO, &got, msg, sizeof(msg)) == 0, "%s",
		      msg);
	recs_equal(&want, &got);
	recs_free(&got);
	recs_free(&want);
	free(z);
	free(text);
}
END_TEST

/* ------------------------------------------------------------ mtr */

static void write_mtr(const char *path, const struct recs *rs)
{
	struct err e = { 0 };
	struct mtr_writer *w = mtr_writer_open(path, &e);
	struct trace_batch b = { rs->r, rs->n, rs->ev, rs->nev };
	char msg[1024];

	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(w != NULL, "%s", msg);
	ck_assert_int_eq(mtr_writer_put(w, &b, &e), 0);
	ck_assert_int_eq(mtr_writer_close(w, true, &e), 0);
}

static void add_ev(struct recs *rs, struct os_event ev)
{
	recs_add(rs, (struct trace_rec){ .addr = ev.addr, .kind = R_EVENT }, &ev);
}

/* Records at the edges of the encoding. */
static void edge_records(struct recs *rs)
{
	static const vaddr_t addrs[] = {
		0, 1, 0x401000, 0x401003, 0x400000, 0x7ffffffff000ULL,
		(1ULL << 56) - 1, 1ULL << 56, VADDR_LIMIT - 1, 0, VADDR_LIMIT - 1, 0x1000,
		(1ULL << 48) + 5, 5, 0x123456789abcULL,
	};
	static const uint32_t sizes[] = { 1, 2, 4, 8, 15, 16, 17, 64, 4096, 65535, 65536 };

	for (unsigned kind = R_IFETCH; kind <= R_MODIFY; kind++)
		for (size_t i = 0; i < ARRAY_SIZE(addrs); i++)
			recs_add(rs, (struct trace_rec){ .addr = addrs[i],
						       .size = sizes[(i + kind) % ARRAY_SIZE(sizes)],
						       .kind = kind },
				 NULL);
	recs_add(rs, (struct trace_rec){ .addr = 0, .size = 1, .kind = R_INSNS }, NULL);
	recs_add(rs, (struct trace_rec){ .addr = 0, .size = UINT32_MAX, .kind = R_INSNS }, NULL);
	add_ev(rs, (struct os_event){ .kind = EV_MMAP, .prot = 3, .flags = 0x40022, .fd = -1,
				      .addr = 0x7f0000000000ULL, .len = 1ULL << 30, .line = 17 });
	add_ev(rs, (struct os_event){ .kind = EV_MUNMAP, .addr = VADDR_LIMIT - 4096, .len = 4096 });
	add_ev(rs, (struct os_event){ .kind = EV_MPROTECT, .prot = UINT32_MAX, .addr = 0x1000,
				      .len = UINT64_MAX, .line = ~0UL });
	add_ev(rs, (struct os_event){ .kind = EV_MADVISE, .advice = MADV_COLLAPSE_, .addr = 2,
				      .len = 3, .fd = INT64_MIN });
	recs_add(rs, (struct trace_rec){ .addr = 0x401000, .size = 3, .kind = R_IFETCH }, NULL);
	add_ev(rs, (struct os_event){ .kind = EV_BRK, .addr = 0x4036000, .fd = INT64_MAX });
	add_ev(rs, (struct os_event){ .kind = EV_MREMAP, .addr = 0x5000000, .len = 1 << 24,
				      .new_len = 4096, .flags = MREMAP_MAYMOVE_ | MREMAP_FIXED_,
				      .new_addr = 0x7000000, .advice = UINT64_MAX, .line = 9 });
}

START_TEST(test_mtr_roundtrip)
{
	static const char *const names[] = { "edge.mtr", "edge.mtr.zst", "edge.mtr.gz",
					     "edge.mtr.xz" };
	struct recs want = { 0 }, got = { 0 };
	char msg[1024];

	edge_records(&want);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		write_mtr(tmp_path(names[i]), &want);
		ck_assert_msg(drain(tmp_path(names[i]), TF_AUTO, &got, msg, sizeof(msg)) == 0, "%s",
			      msg);
		ck_assert_int_eq(got.format, TF_MTR);
		recs_equal(&want, &got);
		recs_free(&got);
	}
	/* an empty trace is valid */
	recs_free(&want);
	write_mtr(tmp_path("empty.mtr"), &want);
	ck_assert_int_eq(drain(tmp_path("empty.mtr"), TF_AUTO, &got, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(got.n, 0);
	recs_free(&got);
}
END_TEST

START_TEST(test_mtr_size_bound)
{
	/* any reference of size <= 15 below 2^56 costs at most 8 bytes */
	struct recs want = { 0 };
	uint64_t s = 7;
	size_t len, n = 20000;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = rng_next(&s);

		recs_add(&want, (struct trace_rec){ .addr = x >> 8, .size = 1 + (uint32_t)(x % 15),
						    .kind = (unsigned)(x >> 4) & 3 },
			 NULL);
	}
	write_mtr(tmp_path("bound.mtr"), &want);
	free(read_file(tmp_path("bound.mtr"), &len));
	/* header 16, END tag 1 + a 3-byte count */
	ck_assert_uint_le(len, 16 + 8 * n + 4);
	ck_assert_uint_ge(len, 16 + 7 * n); /* random addresses are mostly far apart */
	recs_free(&want);

	/* a straight run of fetches: one byte each */
	for (size_t i = 0; i < n; i++)
		recs_add(&want, (struct trace_rec){ .addr = 0x401000 + 4 * i, .size = 4 }, NULL);
	write_mtr(tmp_path("run.mtr"), &want);
	free(read_file(tmp_path("run.mtr"), &len));
	ck_assert_uint_eq(len, 16 + (1 + 4) + (n - 1) + 1 + 3);
	recs_free(&want);
}
END_TEST

START_TEST(test_mtr_truncated)
{
	struct recs want = { 0 };
	size_t len;
	unsigned char *buf;
	char want_msg[1200];
	const char *path = tmp_path("cut.mtr");

	edge_records(&want);
	write_mtr(tmp_path("full.mtr"), &want);
	buf = read_file(tmp_path("full.mtr"), &len);
	ck_assert_uint_gt(len, 100);
	for (size_t k = 0; k < len; k++) {
		write_file(path, buf, k);
		snprintf(want_msg, sizeof(want_msg), "%s: truncated mtr trace at byte %zu", path, k);
		expect_error(path, TF_MTR, want_msg);
		if (k >= 8) /* detected by content, too */
			expect_error(path, TF_AUTO, want_msg);
	}
	free(buf);
	recs_free(&want);
}
END_TEST

START_TEST(test_mtr_bad)
{
	struct recs one = { 0 };
	size_t len;
	unsigned char *buf, *b2;
	const char *path = tmp_path("bad.mtr");
	char want[1200];

	recs_add(&one, (struct trace_rec){ .addr = 0x401000, .size = 4, .kind = R_LOAD }, NULL);
	write_mtr(tmp_path("one.mtr"), &one);
	buf = read_file(tmp_path("one.mtr"), &len);
	ck_assert_uint_eq(len, 16 + 5 + 2); /* tag + 4-byte delta, END + count */
	b2 = malloc(len + 16);

	memcpy(b2, buf, len);
	b2[1] = 'X';
	write_file(path, b2, len);
	snprintf(want, sizeof(want), "%s: not an mtr trace (bad magic)", path);
	expect_error(path, TF_MTR, want);

	/* Versions 2 to 6 (mmusim's Valgrind tool) are read too: 7 is the first unknown. */
	memcpy(b2, buf, len);
	b2[8] = 7;
	write_file(path, b2, len);
	snprintf(want, sizeof(want),
		 "%s: unsupported mtr version 7 (this build reads versions 1 to 6)", path);
	expect_error(path, TF_AUTO, want);

	/* A TOUCH record (0xc9) is version 3's: unknown before; its kind is 0 to 2. */
	memcpy(b2, buf, 16);
	memcpy(b2 + 16, "\xc9\x01\x00\xc0\x01", 5);
	b2[8] = 2;
	write_file(path, b2, 21);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: unknown tag", path);
	expect_error(path, TF_MTR, want);
	b2[8] = 3;
	b2[17] = 3;
	write_file(path, b2, 21);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: bad touch kind", path);
	expect_error(path, TF_MTR, want);

	memcpy(b2, buf, len);
	b2[10] = 1;
	write_file(path, b2, len);
	snprintf(want, sizeof(want), "%s: unsupported mtr flags 0x1/0x0", path);
	expect_error(path, TF_AUTO, want);

	memcpy(b2, buf, len);
	b2[16] = 0xff;
	write_file(path, b2, len);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: unknown tag", path);
	expect_error(path, TF_AUTO, want);

	memcpy(b2, buf, len);
	b2[len - 1] = 2; /* END count 2, one record */
	write_file(path, b2, len);
	snprintf(want, sizeof(want),
		 "%s: corrupt mtr trace at byte 21: the end marker's record count does not match",
		 path);
	expect_error(path, TF_AUTO, want);

	memcpy(b2, buf, len);
	b2[len] = 0;
	write_file(path, b2, len + 1);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 23: data after the end marker",
		 path);
	expect_error(path, TF_AUTO, want);

	memcpy(b2, buf, len);
	b2[16] = 0x01; /* form 0, size 0 (explicit), load; size varint 0 */
	b2[17] = 0x00;
	write_file(path, b2, len);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: reference size out of range",
		 path);
	expect_error(path, TF_AUTO, want);

	memcpy(b2, buf, 16);
	memcpy(b2 + 16, "\xc1\x09", 2); /* an event of kind 9 */
	memset(b2 + 18, 0, 9);
	memcpy(b2 + 27, "\xc0\x01", 2);
	write_file(path, b2, 29);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: bad event kind", path);
	expect_error(path, TF_AUTO, want);

	memcpy(b2, buf, 16);
	/* form 1, size 4, load; a 10-byte varint over 64 bits */
	memcpy(b2 + 16, "\x51\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11);
	memcpy(b2 + 27, "\xc0\x01", 2);
	write_file(path, b2, 29);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: varint longer than 64 bits",
		 path);
	expect_error(path, TF_AUTO, want);

	memcpy(b2, buf, 16);
	/* form 1, a delta of 2^57 (zigzag 2^58: 8 x 0x80, 0x04) */
	memcpy(b2 + 16, "\x51\x80\x80\x80\x80\x80\x80\x80\x80\x04", 10);
	memcpy(b2 + 26, "\xc0\x01", 2);
	write_file(path, b2, 28);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: address over 57 bits", path);
	expect_error(path, TF_AUTO, want);

	free(b2);
	free(buf);
	recs_free(&one);
}
END_TEST

/* An mtr stream of @n bytes after a 16-byte header of @version and @flags, into @path. */
static void write_v(const char *path, unsigned version, unsigned flags, const char *body, size_t n)
{
	unsigned char b[64] = { 0x89, 'M', 'T', 'R', '\r', '\n', 0x1a, '\n' };

	ck_assert_uint_le(n, sizeof(b) - 16);
	b[8] = (unsigned char)version;
	b[10] = (unsigned char)flags;
	memcpy(b + 16, body, n);
	write_file(path, b, 16 + n);
}

/*
 * Version 4: a DEP record (0xca, varint d) before a reference, read as an
 * R_DEP of size d right before it, with trace_reader.deps set by the header
 * flag (bit 0 of the flags); every way a DEP can be wrong.
 */
START_TEST(test_mtr_deps)
{
	/* load 8 bytes at 0x1000 (form 1: zigzag 0x2000), DEP 1, load at 0x1008 (form 0), END 3 */
	static const char ok[] = "\x61\x80\x40\xca\x01\x21\xc0\x03";
	const char *path = tmp_path("dep.mtr");
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	struct recs got = { 0 };
	char want[1200], msg[1200];

	write_v(path, 4, 1, ok, 8);
	r = trace_open(path, TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->version, 4);
	ck_assert(r->deps);
	ck_assert_int_eq(trace_next(r, &b, &e), 3);
	ck_assert_uint_eq(b.recs[0].kind, R_LOAD);
	ck_assert_uint_eq(b.recs[0].addr, 0x1000);
	ck_assert_uint_eq(b.recs[1].kind, R_DEP);
	ck_assert_uint_eq(b.recs[1].size, 1);
	ck_assert_uint_eq(b.recs[1].addr, 0);
	ck_assert_uint_eq(b.recs[2].kind, R_LOAD);
	ck_assert_uint_eq(b.recs[2].addr, 0x1008);
	ck_assert_int_eq(trace_next(r, &b, &e), 0);
	trace_close(r);

	/* version 4 without the flag: dependences unknown, and a DEP is then corrupt */
	write_v(path, 4, 0, "\x61\x80\x40\xc0\x01", 5);
	ck_assert_int_eq(drain(path, TF_AUTO, &got, msg, sizeof(msg)), 0);
	r = trace_open(path, TF_AUTO, &e);
	ck_assert(!r->deps);
	trace_close(r);
	recs_free(&got);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 19: bad dependence", path);
	write_v(path, 4, 0, ok, 8);
	expect_error(path, TF_AUTO, want);
	/* d = 0; d = 2 after one load; a DEP before the END rather than a reference */
	write_v(path, 4, 1, "\x61\x80\x40\xca\x00\x21\xc0\x03", 8);
	expect_error(path, TF_AUTO, want);
	write_v(path, 4, 1, "\x61\x80\x40\xca\x02\x21\xc0\x03", 8);
	expect_error(path, TF_AUTO, want);
	write_v(path, 4, 1, "\x61\x80\x40\xca\x01\xc0\x02", 7);
	expect_error(path, TF_AUTO, want);
	/* a store is not a load: d counts loads and modifies only */
	write_v(path, 4, 1, "\x62\x80\x40\xca\x01\x21\xc0\x03", 8);
	expect_error(path, TF_AUTO, want);
	write_v(path, 4, 1, "\x63\x80\x40\xca\x01\x21\xc0\x03", 8); /* a modify is */
	ck_assert_int_eq(drain(path, TF_AUTO, NULL, msg, sizeof(msg)), 0);
	/* cut right after the DEP */
	write_v(path, 4, 1, ok, 5);
	snprintf(want, sizeof(want), "%s: truncated mtr trace at byte 21", path);
	expect_error(path, TF_AUTO, want);
	/* before version 4, 0xca is no tag; a version 3 header has no flags */
	write_v(path, 3, 0, ok, 8);
	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 19: unknown tag", path);
	expect_error(path, TF_AUTO, want);
	write_v(path, 3, 1, ok, 8);
	snprintf(want, sizeof(want), "%s: unsupported mtr flags 0x1/0x0", path);
	expect_error(path, TF_AUTO, want);
	write_v(path, 4, 3, ok, 8);
	snprintf(want, sizeof(want), "%s: unsupported mtr flags 0x3/0x0", path);
	expect_error(path, TF_AUTO, want);
}
END_TEST

/*
 * The writer: a source that records dependences (a built-in workload) gives
 * version 4 with the flag, its R_DEP records kept (and kept again by a
 * conversion of that file, byte for byte); a version 1 writer refuses R_DEP.
 */
START_TEST(test_mtr_deps_write)
{
	struct err e = { 0 };
	struct trace_reader *r = workload_open("chase:size=64K,steps=20000", 1, &e); /* (the fast path too) */
	struct recs got = { 0 };
	struct mtr_writer *w;
	struct trace_batch b;
	unsigned char *f1, *f2;
	size_t len1, len2, deps = 0;
	char msg[1200];

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(mtr_write_all(r, tmp_path("chase.mtr"), &e), 0);
	f1 = read_file(tmp_path("chase.mtr"), &len1);
	ck_assert_uint_eq(f1[8], 4);
	ck_assert_uint_eq(f1[10], 1);
	ck_assert_int_eq(drain(tmp_path("chase.mtr"), TF_AUTO, &got, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < got.n; i++)
		if (got.r[i].kind == R_DEP) {
			ck_assert_uint_eq(got.r[i].size, 1);
			ck_assert_uint_lt(i + 1, got.n);
			ck_assert_uint_eq(got.r[i + 1].kind, R_LOAD);
			deps++;
		}
	ck_assert_uint_eq(deps, 19999);
	recs_free(&got);
	r = trace_open(tmp_path("chase.mtr"), TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(mtr_write_all(r, tmp_path("chase2.mtr"), &e), 0);
	f2 = read_file(tmp_path("chase2.mtr"), &len2);
	ck_assert_uint_eq(len1, len2);
	ck_assert(!memcmp(f1, f2, len1));
	free(f1);
	free(f2);

	/* GUPS: dependences recorded, none present */
	r = workload_open("gups:size=64K,updates=100", 1, &e);
	ck_assert_int_eq(mtr_write_all(r, tmp_path("gups.mtr"), &e), 0);
	r = trace_open(tmp_path("gups.mtr"), TF_AUTO, &e);
	ck_assert(r->deps);
	trace_close(r);

	/* a version 1 writer (a source without dependences) */
	recs_add(&got, (struct trace_rec){ .addr = 0x1000, .size = 8, .kind = R_LOAD }, NULL);
	recs_add(&got, (struct trace_rec){ .addr = 0, .size = 1, .kind = R_DEP }, NULL);
	recs_add(&got, (struct trace_rec){ .addr = 0x1008, .size = 8, .kind = R_LOAD }, NULL);
	b = (struct trace_batch){ got.r, got.n, NULL, 0 };
	w = mtr_writer_open(tmp_path("v1.mtr"), &e);
	ck_assert_int_eq(mtr_writer_put(w, &b, &e), -1);
	ck_assert_str_eq(e.msg, "a dependence needs mtr version 4 (a source that records dependences)");
	mtr_writer_close(w, false, &e);
	recs_free(&got);
}
END_TEST

/*
 * Version 5: EVENT kinds 7 to 10 (mlock, munlock, mlockall, munlockall), read
 * with their fields and written back byte for byte by a conversion (version
 * 5 kept); corrupt before version 5, kind 6 (the marker) and 11 never an
 * EVENT; a writer below version 5 refuses them.
 */
START_TEST(test_mtr_mlock)
{
	/* mlock(0x40000000, 0x10000) (prot, flags 1 = MLOCK_ONFAULT, fd -1 zigzag 1, advice,
	 * addr, len, new_addr, new_len, line), mlockall(MCL_FUTURE), END 2 */
	static const char ok[] = "\xc1\x07\x00\x01\x01\x00\x80\x80\x80\x80\x04\x80\x80\x04\x00\x00\x00"
				 "\xc1\x09\x00\x02\x01\x00\x00\x00\x00\x00\x00\xc0\x02";
	const size_t n = sizeof(ok) - 1;
	const char *path = tmp_path("mlock.mtr");
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	struct recs got = { 0 };
	struct mtr_writer *w;
	struct os_event ev = { .kind = EV_MUNLOCK, .fd = -1, .addr = 0x1000, .len = 0x1000 };
	struct trace_rec rec = { .addr = 0x1000, .size = 0, .kind = R_EVENT };
	unsigned char *f1, *f2;
	size_t len1, len2;
	char want[1200];

	write_v(path, 5, 1, ok, n);
	r = trace_open(path, TF_AUTO, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	ck_assert_uint_eq(r->version, 5);
	ck_assert_int_eq(trace_next(r, &b, &e), 2);
	ck_assert_uint_eq(b.nev, 2);
	ck_assert_uint_eq(b.ev[0].kind, EV_MLOCK);
	ck_assert_uint_eq(b.ev[0].flags, MLOCK_ONFAULT_);
	ck_assert_int_eq(b.ev[0].fd, -1);
	ck_assert_uint_eq(b.ev[0].addr, 0x40000000);
	ck_assert_uint_eq(b.ev[0].len, 0x10000);
	ck_assert_uint_eq(b.ev[1].kind, EV_MLOCKALL);
	ck_assert_uint_eq(b.ev[1].flags, MCL_FUTURE_);
	ck_assert_int_eq(trace_next(r, &b, &e), 0);
	trace_close(r);
	/* trace convert: version 5 again, the same bytes */
	r = trace_open(path, TF_AUTO, &e);
	ck_assert_int_eq(mtr_write_all(r, tmp_path("mlock2.mtr"), &e), 0);
	f1 = read_file(path, &len1);
	f2 = read_file(tmp_path("mlock2.mtr"), &len2);
	ck_assert_uint_eq(len1, len2);
	ck_assert(!memcmp(f1, f2, len1));
	free(f1);
	free(f2);

	snprintf(want, sizeof(want), "%s: corrupt mtr trace at byte 16: bad event kind", path);
	write_v(path, 4, 1, ok, n);
	expect_error(path, TF_AUTO, want);
	{
		char bad[sizeof(ok)];

		memcpy(bad, ok, sizeof(ok));
		bad[1] = 6; /* the marker */
		write_v(path, 5, 1, bad, n);
		expect_error(path, TF_AUTO, want);
		bad[1] = 11;
		write_v(path, 5, 1, bad, n);
		expect_error(path, TF_AUTO, want);
	}

	/* a version 1 writer (a source of another format) */
	recs_add(&got, rec, NULL);
	b = (struct trace_batch){ got.r, got.n, &ev, 1 };
	w = mtr_writer_open(tmp_path("v1.mtr"), &e);
	ck_assert_int_eq(mtr_writer_put(w, &b, &e), -1);
	ck_assert_str_eq(e.msg, "the munlock event needs mtr version 5 (a source of version 5)");
	mtr_writer_close(w, false, &e);
	recs_free(&got);
}
END_TEST

START_TEST(test_mtr_garbage)
{
	/* random damage to a valid file: every read ends, with records or an error */
	struct recs want = { 0 };
	size_t len;
	unsigned char *buf, *b2;
	uint64_t s = 11;
	char msg[1024];
	int errors = 0;

	edge_records(&want);
	write_mtr(tmp_path("g.mtr"), &want);
	buf = read_file(tmp_path("g.mtr"), &len);
	b2 = malloc(len);
	for (int k = 0; k < 400; k++) {
		memcpy(b2, buf, len);
		for (int j = 0; j < 1 + k % 3; j++)
			b2[16 + rng_next(&s) % (len - 16)] ^= (unsigned char)(1 + (rng_next(&s) >> 57));
		write_file(tmp_path("g2.mtr"), b2, len);
		errors += drain(tmp_path("g2.mtr"), TF_MTR, NULL, msg, sizeof(msg)) < 0;
	}
	ck_assert_int_gt(errors, 0);
	free(b2);
	free(buf);
	recs_free(&want);
}
END_TEST

static size_t count_dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	ck_assert(d != NULL);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

START_TEST(test_mtr_writer)
{
	char sub[512], path[600], want[1200];
	struct err e = { 0 };
	struct mtr_writer *w;
	struct recs rs = { 0 };
	struct trace_batch b;

	snprintf(sub, sizeof(sub), "%s/w", tmpdir);
	ck_assert_int_eq(mkdir(sub, 0777), 0);
	snprintf(path, sizeof(path), "%s/out.mtr.zst", sub);
	edge_records(&rs);
	b = (struct trace_batch){ rs.r, rs.n, rs.ev, rs.nev };

	/* nothing appears until commit; an aborted writer leaves nothing */
	w = mtr_writer_open(path, &e);
	ck_assert(w != NULL);
	ck_assert_int_eq(mtr_writer_put(w, &b, &e), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_uint_eq(count_dir_entries(sub), 1); /* the temporary file */
	ck_assert_int_eq(mtr_writer_close(w, false, &e), 0);
	ck_assert_uint_eq(count_dir_entries(sub), 0);

	w = mtr_writer_open(path, &e);
	ck_assert_int_eq(mtr_writer_put(w, &b, &e), 0);
	ck_assert_int_eq(mtr_writer_close(w, true, &e), 0);
	ck_assert_uint_eq(count_dir_entries(sub), 1);
	ck_assert_int_eq(access(path, R_OK), 0);

	/* bad records are errors, and the file is then not committed */
	w = mtr_writer_open(tmp_path("w2.mtr"), &e);
	rs.r[0].addr = VADDR_LIMIT;
	ck_assert_int_eq(mtr_writer_put(w, &b, &e), -1);
	err_format(&e, want, sizeof(want));
	ck_assert_str_eq(e.msg, "address 0x200000000000000 is over 57 bits");
	ck_assert_int_eq(mtr_writer_close(w, true, &e), -1);
	ck_assert_int_eq(access(tmp_path("w2.mtr"), F_OK), -1);

	/* a directory that does not exist */
	snprintf(path, sizeof(path), "%s/none/out.mtr", tmpdir);
	ck_assert(mtr_writer_open(path, &e) == NULL);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	{
		char msg[1300];

		err_format(&e, msg, sizeof(msg));
		ck_assert_str_eq(msg, want);
	}
	recs_free(&rs);
}
END_TEST

START_TEST(test_mtr_large)
{
	/* lackey -> mtr over several chunks, with events and instruction counts mixed in */
	struct recs text = { 0 }, want = { 0 }, got = { 0 };
	size_t len;
	char *buf = gen_lackey(500000, 99, &text, &len);
	uint64_t s = 5;
	char msg[1024];

	for (size_t i = 0; i < text.n; i++) {
		uint64_t x = rng_next(&s);

		if (x % 97 == 0)
			add_ev(&want, (struct os_event){ .kind = (uint32_t)((x >> 8) % EV_MARKER),
							 .addr = x >> 16, .len = x >> 40,
							 .line = i });
		if (x % 89 == 0)
			recs_add(&want, (struct trace_rec){ .size = 1 + (uint32_t)(x >> 50),
							    .kind = R_INSNS },
				 NULL);
		recs_add(&want, text.r[i], NULL);
	}
	write_mtr(tmp_path("large.mtr"), &want);
	free(read_file(tmp_path("large.mtr"), &len));
	ck_assert_uint_gt(len, 2 * TIO_CHUNK);
	ck_assert_msg(drain(tmp_path("large.mtr"), TF_AUTO, &got, msg, sizeof(msg)) == 0, "%s", msg);
	recs_equal(&want, &got);
	recs_free(&got);
	write_mtr(tmp_path("large.mtr.zst"), &want);
	ck_assert_msg(drain(tmp_path("large.mtr.zst"), TF_AUTO, &got, msg, sizeof(msg)) == 0, "%s",
		      msg);
	recs_equal(&want, &got);
	recs_free(&got);
	recs_free(&want);
	recs_free(&text);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------ detection */

START_TEST(test_detection)
{
	struct recs rs = { 0 }, one = { 0 };
	char msg[1024], want[1200];

	/* by content, whatever the name */
	write_str(tmp_path("a.dat"), "\n\n I  bad\n");
	ck_assert_int_eq(drain(tmp_path("a.dat"), TF_AUTO, NULL, msg, sizeof(msg)), -1);
	snprintf(want, sizeof(want), "%s: cannot detect the trace format (use --format)",
		 tmp_path("a.dat"));
	ck_assert_str_eq(msg, want);
	write_str(tmp_path("b.dat"), "\n \nI  0401ab70,4\n");
	ck_assert_int_eq(drain(tmp_path("b.dat"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	ck_assert_uint_eq(rs.n, 1);
	recs_free(&rs);
	write_str(tmp_path("c.dat"), "SYSCALL[1,1](12) sys_brk ( 0x0 ) --> [pre-success] Success(0x1000)\n");
	ck_assert_int_eq(drain(tmp_path("c.dat"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	ck_assert_uint_eq(rs.nev, 1);
	recs_free(&rs);
	write_str(tmp_path("d.dat"), " M 04a2a064,4\n");
	ck_assert_int_eq(drain(tmp_path("d.dat"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	recs_free(&rs);
	write_str(tmp_path("e.dat"), "--77-- hello\n");
	ck_assert_int_eq(drain(tmp_path("e.dat"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	ck_assert_uint_eq(rs.n, 0);
	recs_free(&rs);
	recs_add(&one, (struct trace_rec){ .addr = 0x401000, .size = 4, .kind = R_STORE }, NULL);
	write_mtr(tmp_path("f.lackey"), &one); /* content beats the name */
	ck_assert_int_eq(drain(tmp_path("f.lackey"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_MTR);
	recs_equal(&one, &rs);
	recs_free(&rs);
	/* a lackey text named .mtr is read as lackey */
	write_str(tmp_path("g.mtr"), "I  0401ab70,4\n");
	ck_assert_int_eq(drain(tmp_path("g.mtr"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	recs_free(&rs);

	/* by name when the content says nothing */
	write_str(tmp_path("empty.lackey"), "");
	ck_assert_int_eq(drain(tmp_path("empty.lackey"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	ck_assert_uint_eq(rs.n, 0);
	recs_free(&rs);
	write_str(tmp_path("empty.mtr"), "");
	snprintf(want, sizeof(want), "%s: truncated mtr trace at byte 0", tmp_path("empty.mtr"));
	expect_error(tmp_path("empty.mtr"), TF_AUTO, want);
	write_str(tmp_path("x.lackey"), "hello\n");
	snprintf(want, sizeof(want), "%s:1: unrecognized line", tmp_path("x.lackey"));
	expect_error(tmp_path("x.lackey"), TF_AUTO, want);
	write_str(tmp_path("x.txt"), "hello\n");
	snprintf(want, sizeof(want), "%s: cannot detect the trace format (use --format)",
		 tmp_path("x.txt"));
	expect_error(tmp_path("x.txt"), TF_AUTO, want);
	write_str(tmp_path("e.lackey.zst"), "");
	snprintf(want, sizeof(want), "%s: truncated zstd stream", tmp_path("e.lackey.zst"));
	expect_error(tmp_path("e.lackey.zst"), TF_AUTO, want);
	write_str(tmp_path("e.mtr.xz"), "\xfd\x37\x7a");
	snprintf(want, sizeof(want), "%s: truncated xz stream", tmp_path("e.mtr.xz"));
	expect_error(tmp_path("e.mtr.xz"), TF_AUTO, want);
	write_str(tmp_path("e.lackey.gz"), "I  0401ab70,4\n"); /* not compressed after all */
	ck_assert_int_eq(drain(tmp_path("e.lackey.gz"), TF_AUTO, &rs, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(rs.n, 1);
	recs_free(&rs);

	recs_free(&one);
}
END_TEST

/* ------------------------------------------------------------ stdin */

/* Make a pipe standard input, fed by a child with @len bytes of @data (then @linger seconds). */
static pid_t feed_stdin(const void *data, size_t len, unsigned linger)
{
	int fd[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		const char *p = data;

		close(fd[0]);
		while (len) {
			ssize_t r = write(fd[1], p, len);

			if (r <= 0)
				_exit(1);
			p += r;
			len -= (size_t)r;
		}
		sleep(linger);
		_exit(0);
	}
	close(fd[1]);
	ck_assert_int_eq(dup2(fd[0], 0), 0);
	close(fd[0]);
	return pid;
}

START_TEST(test_stdin)
{
	struct recs plain = { 0 }, rs = { 0 };
	size_t len;
	unsigned char *z = read_file(data_path("basic.lackey.zst"), &len);
	char msg[1024];
	pid_t pid;

	ck_assert_int_eq(drain(data_path("basic.lackey"), TF_AUTO, &plain, msg, sizeof(msg)), 0);
	pid = feed_stdin(z, len, 0);
	ck_assert_msg(drain("-", TF_AUTO, &rs, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_str_eq(rs.name, "<stdin>");
	recs_equal(&plain, &rs);
	recs_free(&rs);
	waitpid(pid, NULL, 0);

	pid = feed_stdin("I  0401ab70,4\nbad\n", 18, 0);
	ck_assert_int_eq(drain("-", TF_LACKEY, NULL, msg, sizeof(msg)), -1);
	ck_assert_str_eq(msg, "<stdin>:2: unrecognized line");
	waitpid(pid, NULL, 0);
	recs_free(&plain);
	free(z);
}
END_TEST

START_TEST(test_close_while_streaming)
{
	/* the writer keeps the pipe open: closing the reader must not wait for it */
	struct recs want = { 0 };
	size_t len;
	char *text = gen_lackey(100000, 3, &want, &len);
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	time_t t0 = time(NULL);
	pid_t pid = feed_stdin(text, len, 30);

	r = trace_open("-", TF_AUTO, &e);
	ck_assert(r != NULL);
	ck_assert_int_eq(trace_next(r, &b, &e), TRACE_BATCH);
	ck_assert_uint_eq(b.recs[0].addr, want.r[0].addr);
	trace_close(r);
	ck_assert_int_le(time(NULL) - t0, 2);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	recs_free(&want);
	free(text);
}
END_TEST

/* ------------------------------------------------------------ validation trace */

START_TEST(test_validation_trace)
{
	/* the committed copy of ../shared/validation (tests/validation/README.md) */
	const char *path = "tests/validation/small.lackey.zst";
	char msg[1024];
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	uint64_t cnt[R_KIND_NR] = { 0 };
	int n;

	r = trace_open(path, TF_AUTO, &e);
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(r != NULL, "%s", msg);
	ck_assert_int_eq(r->format, TF_LACKEY);
	while ((n = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++)
			cnt[b.recs[i].kind]++;
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(n == 0, "%s", msg);
	trace_close(r);
	/* validation/README.md */
	ck_assert_uint_eq(cnt[R_IFETCH], 4440866);
	ck_assert_uint_eq(cnt[R_LOAD], 1351941);
	ck_assert_uint_eq(cnt[R_STORE], 839342);
	ck_assert_uint_eq(cnt[R_MODIFY], 10296);
	ck_assert_uint_eq(cnt[R_EVENT], 0);
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_format_help);
	tcase_add_test(tc, test_lackey_basic);
	tcase_add_test(tc, test_lackey_compressed);
	tcase_add_test(tc, test_lackey_syscalls);
	tcase_add_test(tc, test_lackey_variants);
	tcase_add_test(tc, test_lackey_errors);
	tcase_add_test(tc, test_lackey_long_line);
	tcase_add_test(tc, test_dev_zero);
	tcase_add_test(tc, test_lackey_garbage);
	tcase_add_test(tc, test_truncated_compressed);
	tcase_add_test(tc, test_corrupt_compressed);
	tcase_add_test(tc, test_missing_and_dir);
	tcase_add_test(tc, test_lackey_chunks);
	tcase_add_test(tc, test_mtr_roundtrip);
	tcase_add_test(tc, test_mtr_size_bound);
	tcase_add_test(tc, test_mtr_truncated);
	tcase_add_test(tc, test_mtr_bad);
	tcase_add_test(tc, test_mtr_deps);
	tcase_add_test(tc, test_mtr_deps_write);
	tcase_add_test(tc, test_mtr_mlock);
	tcase_add_test(tc, test_mtr_garbage);
	tcase_add_test(tc, test_mtr_writer);
	tcase_add_test(tc, test_mtr_large);
	tcase_add_test(tc, test_detection);
	tcase_add_test(tc, test_stdin);
	tcase_add_test(tc, test_close_while_streaming);
	tcase_add_test(tc, test_validation_trace);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int status;
	char cmd[300];

	snprintf(tmpdir, sizeof(tmpdir), "%s/mmusim-check-trace-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	status = check_run(trace_suite());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "check_trace: could not remove %s\n", tmpdir);
	return status;
}
