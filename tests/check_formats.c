/*
 * check_formats.c - the pin (trace_pin.c), champsim (trace_champsim.c) and
 * din (trace_din.c) readers, and their detection in trace.c.
 *
 * Text inputs written by hand from the formats' definitions are committed in
 * tests/data/ (basic.pin, basic.din; override the directory with
 * MMUSIM_TESTDATA). ChampSim inputs are binary: they are written at run time
 * from a C struct with input_instr's field list, whose offsets are asserted
 * here (at compile time, and byte by byte against the reference's offsets),
 * into a fresh temporary directory, together with every other generated file.
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "../sim/trace.h"
#include "../sim/trace_io.h"
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

/* @data as a gzip file (one member, zlib's default level). */
static void write_gz(const char *path, const void *data, size_t len)
{
	gzFile g = gzopen(path, "wb");

	ck_assert_msg(g != NULL, "cannot create %s", path);
	if (len)
		ck_assert_int_eq(gzwrite(g, data, (unsigned)len), (int)len);
	ck_assert_int_eq(gzclose(g), Z_OK);
}

/* @data as an xz file (preset 1, CRC64). */
static void write_xz(const char *path, const void *data, size_t len)
{
	size_t cap = lzma_stream_buffer_bound(len), out = 0;
	uint8_t *buf = malloc(cap);

	ck_assert_int_eq(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, data, len, buf, &out,
						 cap),
			 LZMA_OK);
	write_file(path, buf, out);
	free(buf);
}

static void write_zst(const char *path, const void *data, size_t len)
{
	size_t cap = ZSTD_compressBound(len), out;
	void *buf = malloc(cap);

	out = ZSTD_compress(buf, cap, data, len, 1);
	ck_assert(!ZSTD_isError(out));
	write_file(path, buf, out);
	free(buf);
}

/* Every record of a trace. */
struct recs {
	struct trace_rec *r;
	size_t n, cap;
	char name[256];
	enum trace_format format;
};

static void recs_free(struct recs *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

static void recs_add(struct recs *rs, unsigned kind, vaddr_t addr, uint32_t size)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 1024;
		rs->r = realloc(rs->r, rs->cap * sizeof(*rs->r));
	}
	rs->r[rs->n++] = (struct trace_rec){ .addr = addr, .size = size, .kind = kind };
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
		ck_assert_uint_eq((size_t)n, b.n);
		ck_assert_uint_le(b.n, TRACE_BATCH);
		ck_assert_uint_eq(b.nev, 0);
		for (size_t i = 0; out && i < b.n; i++)
			recs_add(out, b.recs[i].kind, b.recs[i].addr, b.recs[i].size);
	}
	if (n < 0)
		err_format(&e, msg, len);
	trace_close(r);
	return n < 0 ? -1 : 0;
}

/* Read @path as @fmt; it must succeed. */
static void must_read(const char *path, enum trace_format fmt, struct recs *out)
{
	char msg[1024];

	ck_assert_msg(drain(path, fmt, out, msg, sizeof(msg)) == 0, "%s: %s", path, msg);
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
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].kind != b->r[i].kind || a->r[i].addr != b->r[i].addr ||
		    a->r[i].size != b->r[i].size)
			ck_abort_msg("record %zu differs: %u %#llx %u vs %u %#llx %u", i, a->r[i].kind,
				     (unsigned long long)a->r[i].addr, a->r[i].size, b->r[i].kind,
				     (unsigned long long)b->r[i].addr, b->r[i].size);
}

static void rec_is(const struct recs *rs, size_t i, unsigned kind, vaddr_t addr, uint32_t size)
{
	ck_assert_uint_lt(i, rs->n);
	ck_assert_uint_eq(rs->r[i].kind, kind);
	ck_assert_uint_eq(rs->r[i].addr, addr);
	ck_assert_uint_eq(rs->r[i].size, size);
}

static void count_kinds(const struct recs *rs, uint64_t cnt[R_KIND_NR])
{
	memset(cnt, 0, R_KIND_NR * sizeof(cnt[0]));
	for (size_t i = 0; i < rs->n; i++)
		cnt[rs->r[i].kind]++;
}

/* A small deterministic generator (xorshift64*), so the tests need no seed state. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* A text, and the error it must give (after "PATH:"). Texts may hold NUL bytes. */
#define BAD(text, err) { text, sizeof(text) - 1, err }
struct bad_case {
	const char *text;
	size_t len;
	const char *err;
};

static void expect_bad_cases(const char *name, enum trace_format fmt, const struct bad_case *bc,
			     size_t n)
{
	const char *path = tmp_path(name);
	char want[1200];

	for (size_t i = 0; i < n; i++) {
		write_file(path, bc[i].text, bc[i].len);
		snprintf(want, sizeof(want), "%s:%s", path, bc[i].err);
		expect_error(path, fmt, want);
	}
}

/* ------------------------------------------------------------ pin */

static void check_basic_pin(const struct recs *rs)
{
	uint64_t cnt[R_KIND_NR];

	ck_assert_uint_eq(rs->n, 17);
	/* a fetch of size 1 where the ip changes, then the access, size 1 */
	rec_is(rs, 0, R_IFETCH, 0x401000, 1);
	rec_is(rs, 1, R_LOAD, 0x7ffd0000aa10, 1);
	rec_is(rs, 2, R_STORE, 0x7ffd0000aa10, 1); /* same ip: no fetch */
	rec_is(rs, 3, R_IFETCH, 0x401004, 1);
	rec_is(rs, 4, R_STORE, 0x601ff8, 1);
	rec_is(rs, 5, R_IFETCH, 0x7f12a3b4c5d6, 1); /* the reference's example line */
	rec_is(rs, 6, R_LOAD, 0x7ffd0000aa10, 1);
	rec_is(rs, 7, R_IFETCH, 0x401004, 1); /* back to an earlier ip: a fetch again */
	rec_is(rs, 8, R_LOAD, 0, 1);          /* "(nil)" */
	rec_is(rs, 9, R_IFETCH, 0x401008, 1);
	rec_is(rs, 10, R_LOAD, 0x1ffffffffffffffULL, 1); /* 2^57 - 1 */
	rec_is(rs, 11, R_STORE, 0x1000, 1);              /* leading zeros */
	rec_is(rs, 12, R_IFETCH, 0x40100c, 1);
	rec_is(rs, 13, R_LOAD, 0x601000, 1); /* trailing blanks and CR */
	/* a blank line; then upper-case hex, the same ip: no fetch */
	rec_is(rs, 14, R_STORE, 0xabcdef, 1);
	rec_is(rs, 15, R_IFETCH, 0x401000, 1);
	rec_is(rs, 16, R_LOAD, 0x1, 1);
	/* "#eof", then a blank line */
	count_kinds(rs, cnt);
	ck_assert_uint_eq(cnt[R_IFETCH], 7);
	ck_assert_uint_eq(cnt[R_LOAD], 6);
	ck_assert_uint_eq(cnt[R_STORE], 4);
}

START_TEST(test_pin_basic)
{
	struct recs rs = { 0 };

	must_read(data_path("basic.pin"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_PIN);
	ck_assert_str_eq(rs.name, data_path("basic.pin"));
	check_basic_pin(&rs);
	recs_free(&rs);
	must_read(data_path("basic.pin"), TF_PIN, &rs);
	check_basic_pin(&rs);
	recs_free(&rs);
}
END_TEST

START_TEST(test_pin_variants)
{
	struct recs rs = { 0 };

	/* no "#eof" (a killed program, a file cut with head), no final newline */
	write_str(tmp_path("noeof.pin"), "0x401000: R 0x1000\n0x401003: W 0x2000");
	must_read(tmp_path("noeof.pin"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_PIN);
	ck_assert_uint_eq(rs.n, 4);
	rec_is(&rs, 0, R_IFETCH, 0x401000, 1);
	rec_is(&rs, 1, R_LOAD, 0x1000, 1);
	rec_is(&rs, 2, R_IFETCH, 0x401003, 1);
	rec_is(&rs, 3, R_STORE, 0x2000, 1);
	recs_free(&rs);

	/* only "#eof": a program that touched no memory; detected by content */
	write_str(tmp_path("eofonly.dat"), "#eof\n");
	must_read(tmp_path("eofonly.dat"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_PIN);
	ck_assert_uint_eq(rs.n, 0);
	recs_free(&rs);

	/* forms the fast path leaves to the careful one */
	write_str(tmp_path("slow.pin"), "0X401000: R 0x1000\n"		/* upper-case prefix */
					"0x401000: W 0x00000000000000000002\n" /* 20 digits */
					"0x401000:  R   0x3\n"		/* extra blanks */
					"(nil): R 0x4\n");
	must_read(tmp_path("slow.pin"), TF_PIN, &rs);
	ck_assert_uint_eq(rs.n, 6);
	rec_is(&rs, 0, R_IFETCH, 0x401000, 1);
	rec_is(&rs, 1, R_LOAD, 0x1000, 1);
	rec_is(&rs, 2, R_STORE, 0x2, 1);
	rec_is(&rs, 3, R_LOAD, 0x3, 1);
	rec_is(&rs, 4, R_IFETCH, 0, 1);
	rec_is(&rs, 5, R_LOAD, 0x4, 1);
	recs_free(&rs);
}
END_TEST

static const struct bad_case pin_bad[] = {
	BAD("0x40100g: R 0x1000\n", "1: bad ip '0x40100g'"),
	BAD("401000: R 0x1000\n", "1: bad ip '401000'"),
	BAD("0x: R 0x1000\n", "1: bad ip '0x'"),
	BAD("0x401000: R 0x10zz\n", "1: bad address '0x10zz'"),
	BAD("0x401000: R 1000\n", "1: bad address '1000'"),
	BAD("0x401000: R 0x1000 0x2000\n", "1: bad address '0x1000 0x2000'"),
	BAD("0x401000: X 0x1000\n", "1: access type 'X' is not R or W"),
	BAD("0x401000: r 0x1000\n", "1: access type 'r' is not R or W"),
	BAD("0x401000: RW 0x1000\n", "1: access type 'RW' is not R or W"),
	BAD("0x401000: R\n", "1: missing address"),
	BAD("0x401000:R 0x1000\n", "1: unrecognized line"),
	BAD("0x401000 R 0x1000\n", "1: unrecognized line"),
	BAD("hello\n", "1: unrecognized line"),
	BAD("#EOF\n", "1: unrecognized line"),
	BAD("# a comment\n", "1: unrecognized line"),
	/* over 64 bits, and over the 57 that any address may have */
	BAD("0x401000: R 0x10000000000000000\n", "1: address 0x10000000000000000 is over 57 bits"),
	BAD("0x401000: R 0x200000000000000\n", "1: address 0x200000000000000 is over 57 bits"),
	BAD("0xffffffffffffffff: W 0x1000\n", "1: ip 0xffffffffffffffff is over 57 bits"),
	BAD("0x401000: R 0x00000000000000000000000000200000000000000\n",
	    "1: address 0x200000000000000 is over 57 bits"),
	/* "#eof" ends the trace: only blank lines may follow */
	BAD("0x401000: R 0x1000\n#eof\n\n0x401000: R 0x1000\n", "4: data after #eof"),
	BAD("#eof\n#eof\n", "2: data after #eof"),
	/* line numbers count every line, blank ones too */
	BAD("\n0x401000: R 0x1000\n\n \t\n0x401000: W 0xq\n", "5: bad address '0xq'"),
	/* binary data */
	BAD("0x401000: R 0x1000\n\0\0\0\0\n", "2: NUL byte in a text line"),
	BAD("0x401000: R 0x1000\n0x4010\0\0: R 0x1000\n", "2: NUL byte in a text line"),
	BAD("0x401000: R 0x1000\n\x89\xfe\x01\n", "2: unrecognized line"),
	BAD("0x401000: R 0x1000\n\x89\xfe:\x01\n", "2: bad ip '\\x89\\xfe'"),
};

START_TEST(test_pin_errors)
{
	expect_bad_cases("bad.pin", TF_PIN, pin_bad, ARRAY_SIZE(pin_bad));
}
END_TEST

/* ------------------------------------------------------------ din */

static void check_basic_din(const struct recs *rs)
{
	uint64_t cnt[R_KIND_NR];

	/* Dinero IV: a 4-byte word at the address with its low two bits cleared */
	ck_assert_uint_eq(rs->n, 10);
	rec_is(rs, 0, R_IFETCH, 0x401000, 4);
	rec_is(rs, 1, R_LOAD, 0x7ffd0000aa10, 4); /* ...aa13 */
	rec_is(rs, 2, R_STORE, 0x601ff8, 4);      /* ...ff9, then a comment */
	rec_is(rs, 3, R_IFETCH, 0x401004, 4);     /* leading blanks, a tab */
	rec_is(rs, 4, R_LOAD, 0x1000, 4);         /* label 3 (unknown type): a load; 0x prefix */
	/* label 4 (flush): no record; a blank line */
	rec_is(rs, 5, R_LOAD, 0xabc, 4);          /* label "0x0" */
	rec_is(rs, 6, R_LOAD, 0xabcdec, 4);       /* label "00", upper-case ABCDEF */
	rec_is(rs, 7, R_STORE, 0x1fffffffffffffcULL, 4); /* 2^57 - 1 */
	rec_is(rs, 8, R_LOAD, 0xffc, 4);          /* CRLF */
	rec_is(rs, 9, R_IFETCH, 0x4, 4);          /* no final newline */
	count_kinds(rs, cnt);
	ck_assert_uint_eq(cnt[R_IFETCH], 3);
	ck_assert_uint_eq(cnt[R_LOAD], 5);
	ck_assert_uint_eq(cnt[R_STORE], 2);
}

START_TEST(test_din_basic)
{
	struct recs rs = { 0 };

	must_read(data_path("basic.din"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_DIN);
	ck_assert_str_eq(rs.name, data_path("basic.din"));
	check_basic_din(&rs);
	recs_free(&rs);
	must_read(data_path("basic.din"), TF_DIN, &rs);
	check_basic_din(&rs);
	recs_free(&rs);
}
END_TEST

static const struct bad_case din_bad[] = {
	BAD("x 1000\n", "1: bad label 'x'"),
	BAD("0,1000\n", "1: bad label '0,1000'"),
	BAD("5 1000\n", "1: unknown label '5' (din labels are 0 to 4)"),
	BAD("2 401000\nf 1000\n", "2: unknown label 'f' (din labels are 0 to 4)"),
	BAD("10 1000\n", "1: unknown label '10' (din labels are 0 to 4)"),
	BAD("0\n", "1: missing address"),
	BAD("1 \t\r\n", "1: missing address"),
	BAD("0 10g0\n", "1: bad hex address '10g0'"),
	BAD("0 -1000\n", "1: bad hex address '-1000'"),
	BAD("0 0x\n", "1: bad hex address '0x'"),
	/* over 64 bits, and over the 57 that any address may have */
	BAD("0 10000000000000000\n", "1: address 0x10000000000000000 is over 57 bits"),
	BAD("0 0x200000000000000\n", "1: address 0x200000000000000 is over 57 bits"),
	BAD("1 ffffffffffffffff\n", "1: address 0xffffffffffffffff is over 57 bits"),
	/* the flush label's address is checked too */
	BAD("4 zz\n", "1: bad hex address 'zz'"),
	/* line numbers count every line, blank ones too */
	BAD("2 401000\n\n  \n0 q\n", "4: bad hex address 'q'"),
	/* binary data, also in the comment that the rest of a line is */
	BAD("2 401000\n\0\0\0\0\n", "2: NUL byte in a text line"),
	BAD("2 401000\n0 1000 comment\0\n", "2: NUL byte in a text line"),
	BAD("2 401000\n\x89\xfe\x01\n", "2: bad label '\\x89\\xfe\\x01'"),
};

START_TEST(test_din_errors)
{
	expect_bad_cases("bad.din", TF_DIN, din_bad, ARRAY_SIZE(din_bad));
}
END_TEST

/* ------------------------------------------------------------ champsim */

/* inc/trace_instruction.h's field list; the compiler lays it out as the tracer's does. */
struct input_instr {
	uint64_t ip;
	uint8_t is_branch;
	uint8_t branch_taken;
	uint8_t destination_registers[2];
	uint8_t source_registers[4];
	uint64_t destination_memory[2];
	uint64_t source_memory[4];
};

/* The offsets in ../shared/reference/trace-formats.md. */
_Static_assert(sizeof(struct input_instr) == 64, "sizeof");
_Static_assert(offsetof(struct input_instr, ip) == 0, "ip");
_Static_assert(offsetof(struct input_instr, is_branch) == 8, "is_branch");
_Static_assert(offsetof(struct input_instr, branch_taken) == 9, "branch_taken");
_Static_assert(offsetof(struct input_instr, destination_registers) == 10, "dst regs");
_Static_assert(offsetof(struct input_instr, source_registers) == 12, "src regs");
_Static_assert(offsetof(struct input_instr, destination_memory) == 16, "dst mem");
_Static_assert(offsetof(struct input_instr, source_memory) == 32, "src mem");

static void put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* @r as the 64 little-endian bytes the reference's offsets give, written field by field. */
static void encode_instr(unsigned char out[64], const struct input_instr *r)
{
	memset(out, 0, 64);
	put_le64(out + 0, r->ip);
	out[8] = r->is_branch;
	out[9] = r->branch_taken;
	memcpy(out + 10, r->destination_registers, 2);
	memcpy(out + 12, r->source_registers, 4);
	for (int i = 0; i < 2; i++)
		put_le64(out + 16 + 8 * i, r->destination_memory[i]);
	for (int i = 0; i < 4; i++)
		put_le64(out + 32 + 8 * i, r->source_memory[i]);
}

/* The hand-made instructions of the basic champsim trace. */
static const struct input_instr cs_basic[] = {
	/* no memory operand: a fetch only */
	{ .ip = 0x401000, .destination_registers = { 6 }, .source_registers = { 6, 26 } },
	/* two loads (entries 0 and 2), a store; the unused entries are 0 */
	{ .ip = 0x401004,
	  .source_memory = { 0x7ffd0000aa10, 0, 0x601000, 0 },
	  .destination_memory = { 0x601000, 0 } },
	/* a taken branch with every entry in use */
	{ .ip = 0x401008, .is_branch = 1, .branch_taken = 1,
	  .destination_registers = { 26, 25 }, .source_registers = { 26, 25, 6, 7 },
	  .source_memory = { 0x1000, 0x2008, 0x3010, 0x1ffffffffffffffULL },
	  .destination_memory = { 0x4018, 0x5020 } },
	/* only the second store slot, at the highest ip allowed */
	{ .ip = 0x1ffffffffffffffULL, .is_branch = 1, .destination_memory = { 0, 0x2000 } },
};

static void check_basic_champsim(const struct recs *rs)
{
	uint64_t cnt[R_KIND_NR];

	ck_assert_uint_eq(rs->n, 1 + 4 + 7 + 2);
	rec_is(rs, 0, R_IFETCH, 0x401000, 1);
	rec_is(rs, 1, R_IFETCH, 0x401004, 1);
	rec_is(rs, 2, R_LOAD, 0x7ffd0000aa10, 1);
	rec_is(rs, 3, R_LOAD, 0x601000, 1);
	rec_is(rs, 4, R_STORE, 0x601000, 1);
	rec_is(rs, 5, R_IFETCH, 0x401008, 1);
	rec_is(rs, 6, R_LOAD, 0x1000, 1);
	rec_is(rs, 7, R_LOAD, 0x2008, 1);
	rec_is(rs, 8, R_LOAD, 0x3010, 1);
	rec_is(rs, 9, R_LOAD, 0x1ffffffffffffffULL, 1);
	rec_is(rs, 10, R_STORE, 0x4018, 1);
	rec_is(rs, 11, R_STORE, 0x5020, 1);
	rec_is(rs, 12, R_IFETCH, 0x1ffffffffffffffULL, 1);
	rec_is(rs, 13, R_STORE, 0x2000, 1);
	count_kinds(rs, cnt);
	ck_assert_uint_eq(cnt[R_IFETCH], 4);
	ck_assert_uint_eq(cnt[R_LOAD], 6);
	ck_assert_uint_eq(cnt[R_STORE], 4);
}

/* @n instructions as a byte stream (64 * @n bytes, malloc'ed). */
static unsigned char *cs_bytes(const struct input_instr *r, size_t n)
{
	unsigned char *buf = malloc(n * 64 + 1);

	for (size_t i = 0; i < n; i++)
		encode_instr(buf + 64 * i, &r[i]);
	return buf;
}

START_TEST(test_champsim_layout)
{
	/* the struct's bytes (as the tracer writes them) are the reference's layout */
	for (size_t i = 0; i < ARRAY_SIZE(cs_basic); i++) {
		unsigned char want[64];

		encode_instr(want, &cs_basic[i]);
		if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
			ck_assert_int_eq(memcmp(&cs_basic[i], want, 64), 0);
	}
	{
		unsigned char b[64];

		encode_instr(b, &cs_basic[2]);
		ck_assert_uint_eq(b[0], 0x08);
		ck_assert_uint_eq(b[1], 0x10);
		ck_assert_uint_eq(b[2], 0x40);
		ck_assert_uint_eq(b[8], 1);   /* is_branch */
		ck_assert_uint_eq(b[9], 1);   /* branch_taken */
		ck_assert_uint_eq(b[10], 26); /* destination_registers[0] */
		ck_assert_uint_eq(b[12], 26); /* source_registers[0] */
		ck_assert_uint_eq(b[15], 7);  /* source_registers[3] */
		ck_assert_uint_eq(b[16], 0x18); /* destination_memory[0] */
		ck_assert_uint_eq(b[24], 0x20); /* destination_memory[1] */
		ck_assert_uint_eq(b[32], 0x00); /* source_memory[0] = 0x1000 */
		ck_assert_uint_eq(b[33], 0x10);
		ck_assert_uint_eq(b[40], 0x08); /* source_memory[1] */
		ck_assert_uint_eq(b[63], 0x01); /* source_memory[3], top byte of 2^57 - 1 */
	}
}
END_TEST

START_TEST(test_champsim_basic)
{
	size_t len = sizeof(cs_basic);
	unsigned char *buf = cs_bytes(cs_basic, ARRAY_SIZE(cs_basic));
	static const char *const names[] = {
		"basic.champsimtrace", "basic.champsim", "basic.dat",
		"basic.champsimtrace.xz", "basic.champsimtrace.gz", "basic.champsimtrace.zst",
		"basic.dat.xz", "champsim.trace.gz",
	};
	struct recs rs = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const char *path = tmp_path(names[i]);

		switch (tio_comp_from_suffix(path)) {
		case TIO_XZ:
			write_xz(path, buf, len);
			break;
		case TIO_GZIP:
			write_gz(path, buf, len);
			break;
		case TIO_ZSTD:
			write_zst(path, buf, len);
			break;
		default:
			write_file(path, buf, len);
			break;
		}
		/* detected by content, whatever the name */
		must_read(path, TF_AUTO, &rs);
		ck_assert_int_eq(rs.format, TF_CHAMPSIM);
		check_basic_champsim(&rs);
		recs_free(&rs);
		must_read(path, TF_CHAMPSIM, &rs);
		check_basic_champsim(&rs);
		recs_free(&rs);
	}
	free(buf);
}
END_TEST

/* Write @n instructions of @r and then @extra bytes of a record to @name; expect @err. */
static void cs_expect(const char *name, const struct input_instr *r, size_t n, size_t extra,
		      const char *err)
{
	const char *path = tmp_path(name);
	unsigned char *buf = cs_bytes(r, n);
	char want[1200];

	switch (tio_comp_from_suffix(path)) {
	case TIO_XZ:
		write_xz(path, buf, n * 64 - extra);
		break;
	case TIO_GZIP:
		write_gz(path, buf, n * 64 - extra);
		break;
	default:
		write_file(path, buf, n * 64 - extra);
		break;
	}
	snprintf(want, sizeof(want), "%s: %s", path, err);
	expect_error(path, TF_CHAMPSIM, want);
	free(buf);
}

START_TEST(test_champsim_errors)
{
	struct input_instr r[3];

	/* a truncated last record: the file is not a multiple of 64 bytes */
	memcpy(r, cs_basic, sizeof(r));
	cs_expect("t.champsim", r, 3, 24, "champsim record 3 at byte 128: truncated (40 of 64 bytes)");
	cs_expect("t.champsim.xz", r, 3, 24,
		  "champsim record 3 at byte 128: truncated (40 of 64 bytes)");
	cs_expect("t.champsim.gz", r, 3, 63, "champsim record 3 at byte 128: truncated (1 of 64 bytes)");
	cs_expect("t1.champsim", r, 1, 1, "champsim record 1 at byte 0: truncated (63 of 64 bytes)");

	r[1].ip = 0;
	cs_expect("ip0.champsim", r, 3, 0, "champsim record 2 at byte 64: ip is 0");
	memcpy(r, cs_basic, sizeof(r));
	r[2].is_branch = 2;
	cs_expect("br.champsim", r, 3, 0,
		  "champsim record 3 at byte 128: is_branch is 2, not 0 or 1 (not a 64-byte "
		  "input_instr trace?)");
	memcpy(r, cs_basic, sizeof(r));
	r[0].branch_taken = 0xff;
	cs_expect("bt.champsim", r, 3, 0,
		  "champsim record 1 at byte 0: branch_taken is 255, not 0 or 1 (not a 64-byte "
		  "input_instr trace?)");
	memcpy(r, cs_basic, sizeof(r));
	r[1].source_memory[2] = 1ULL << 57;
	cs_expect("sm.champsim", r, 3, 0,
		  "champsim record 2 at byte 64: source_memory[2] 0x200000000000000 is over 57 bits");
	memcpy(r, cs_basic, sizeof(r));
	r[2].destination_memory[1] = UINT64_MAX;
	cs_expect("dm.champsim", r, 3, 0,
		  "champsim record 3 at byte 128: destination_memory[1] 0xffffffffffffffff is over 57 "
		  "bits");
	memcpy(r, cs_basic, sizeof(r));
	r[0].ip = 0x8000000000000000ULL;
	cs_expect("ip.champsim", r, 3, 0,
		  "champsim record 1 at byte 0: ip 0x8000000000000000 is over 57 bits");
}
END_TEST

/* Many instructions (several chunks): every record, across chunk and batch ends. */
START_TEST(test_champsim_large)
{
	size_t n = 3 * TIO_CHUNK / 64 + 1000, len = n * 64;
	struct input_instr *r = calloc(n, sizeof(*r));
	struct recs want = { 0 }, got = { 0 };
	uint64_t s = 7;
	unsigned char *buf;
	char msg[1200];

	for (size_t i = 0; i < n; i++) {
		uint64_t x = rng_next(&s);

		r[i].ip = 0x400000 + (x & 0xffff);
		r[i].is_branch = (x >> 16) & 1;
		r[i].branch_taken = r[i].is_branch & (x >> 17);
		recs_add(&want, R_IFETCH, r[i].ip, 1);
		for (int k = 0; k < 4; k++)
			if ((x >> (20 + k)) & 1) {
				r[i].source_memory[k] = rng_next(&s) & (VADDR_LIMIT - 1);
				recs_add(&want, R_LOAD, r[i].source_memory[k], 1);
			}
		for (int k = 0; k < 2; k++)
			if ((x >> (24 + k)) & 1) {
				r[i].destination_memory[k] = rng_next(&s) & 0x7fffffffffffULL;
				recs_add(&want, R_STORE, r[i].destination_memory[k], 1);
			}
	}
	buf = cs_bytes(r, n);
	write_file(tmp_path("large.champsimtrace"), buf, len);
	must_read(tmp_path("large.champsimtrace"), TF_AUTO, &got);
	ck_assert_int_eq(got.format, TF_CHAMPSIM);
	recs_equal(&want, &got);
	recs_free(&got);
	write_zst(tmp_path("large.champsimtrace.zst"), buf, len);
	must_read(tmp_path("large.champsimtrace.zst"), TF_AUTO, &got);
	recs_equal(&want, &got);
	recs_free(&got);

	/* cut in the last record, chunks away from the start: the right number */
	write_file(tmp_path("large.champsimtrace"), buf, len - 10);
	snprintf(msg, sizeof(msg), "%s: champsim record %zu at byte %zu: truncated (54 of 64 bytes)",
		 tmp_path("large.champsimtrace"), n, len - 64);
	expect_error(tmp_path("large.champsimtrace"), TF_AUTO, msg);
	/* a bad record after the first chunk */
	r[TIO_CHUNK / 64 + 5].ip = 0;
	free(buf);
	buf = cs_bytes(r, n);
	write_file(tmp_path("large.champsimtrace"), buf, len);
	snprintf(msg, sizeof(msg), "%s: champsim record %u at byte %u: ip is 0",
		 tmp_path("large.champsimtrace"), TIO_CHUNK / 64 + 6, TIO_CHUNK + 5 * 64);
	expect_error(tmp_path("large.champsimtrace"), TF_AUTO, msg);
	recs_free(&want);
	free(buf);
	free(r);
}
END_TEST

/* ------------------------------------------------------------ both text formats */

/*
 * A pinatrace text of @n lines with runs of one ip (1-3 accesses), addresses
 * of 1 to 14 digits, and now and then a form the fast path does not take;
 * the records it must give go to @rs.
 */
static char *gen_pin(size_t n, uint64_t seed, struct recs *rs, size_t *len)
{
	size_t cap = n * 64 + 64, o = 0;
	char *buf = malloc(cap);
	uint64_t s = seed, ip = 0x400000, last = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = rng_next(&s);
		vaddr_t a = (x >> 8) & ((1ULL << (4 * (1 + (x >> 60) % 14))) - 1);
		bool w = (x >> 4) & 1;

		if ((x & 7) < 4)
			ip = 0x400000 + ((x >> 32) & 0xfffff);
		if (ip != last)
			recs_add(rs, R_IFETCH, ip, 1);
		last = ip;
		recs_add(rs, w ? R_STORE : R_LOAD, a, 1);
		if ((x >> 40) % 97 == 0)
			o += (size_t)sprintf(buf + o, "0x%llx: %c 0x%llx \r\n", (unsigned long long)ip,
					     w ? 'W' : 'R', (unsigned long long)a);
		else
			o += (size_t)sprintf(buf + o, "0x%llx: %c 0x%llx\n", (unsigned long long)ip,
					     w ? 'W' : 'R', (unsigned long long)a);
		if ((x >> 48) % 211 == 0)
			o += (size_t)sprintf(buf + o, "\n");
	}
	o += (size_t)sprintf(buf + o, "#eof\n");
	*len = o;
	return buf;
}

/* A din text of @n lines: every label, comments, addresses of 1 to 14 digits. */
static char *gen_din(size_t n, uint64_t seed, struct recs *rs, size_t *len)
{
	static const unsigned kinds[4] = { R_LOAD, R_STORE, R_IFETCH, R_LOAD };
	size_t cap = n * 64 + 64, o = 0;
	char *buf = malloc(cap);
	uint64_t s = seed;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = rng_next(&s);
		vaddr_t a = (x >> 8) & ((1ULL << (4 * (1 + (x >> 60) % 14))) - 1);
		unsigned label = (unsigned)((x & 0xff) % 5);

		if (label < 4)
			recs_add(rs, kinds[label], a & ~3ULL, 4);
		if ((x >> 40) % 53 == 0)
			o += (size_t)sprintf(buf + o, "%u %llx line %zu\n", label,
					     (unsigned long long)a, i);
		else
			o += (size_t)sprintf(buf + o, "%u %llx\n", label, (unsigned long long)a);
	}
	*len = o;
	return buf;
}

START_TEST(test_text_chunks)
{
	struct recs want = { 0 }, got = { 0 };
	size_t len;
	char *text, msg[1200];

	text = gen_pin(400000, 1, &want, &len);
	ck_assert_uint_gt(len, 3 * TIO_CHUNK); /* lines straddle several chunk ends */
	write_file(tmp_path("gen.pinatrace.out"), text, len);
	must_read(tmp_path("gen.pinatrace.out"), TF_AUTO, &got);
	ck_assert_int_eq(got.format, TF_PIN);
	recs_equal(&want, &got);
	recs_free(&got);
	write_gz(tmp_path("gen.pin.gz"), text, len);
	must_read(tmp_path("gen.pin.gz"), TF_AUTO, &got);
	recs_equal(&want, &got);
	recs_free(&got);
	/* an error chunks away from the start: its line number (the first non-blank from 200000) */
	{
		size_t line = 1, i = 0;

		for (; i < len && (line < 200000 || text[i] == '\n'); i++)
			if (text[i] == '\n')
				line++;
		*(char *)memchr(text + i, ':', len - i) = ';';
		write_file(tmp_path("gen.pin"), text, len);
		snprintf(msg, sizeof(msg), "%s:%zu: unrecognized line", tmp_path("gen.pin"), line);
		ck_assert_uint_ge(line, 200000);
		ck_assert_uint_le(line, 200002);
		expect_error(tmp_path("gen.pin"), TF_PIN, msg);
	}
	recs_free(&want);
	free(text);

	text = gen_din(400000, 2, &want, &len);
	ck_assert_uint_gt(len, 3 * TIO_CHUNK);
	write_file(tmp_path("gen.din"), text, len);
	must_read(tmp_path("gen.din"), TF_AUTO, &got);
	ck_assert_int_eq(got.format, TF_DIN);
	recs_equal(&want, &got);
	recs_free(&got);
	write_xz(tmp_path("gen.din.xz"), text, len);
	must_read(tmp_path("gen.din.xz"), TF_AUTO, &got);
	recs_equal(&want, &got);
	recs_free(&got);
	recs_free(&want);
	free(text);
}
END_TEST

START_TEST(test_long_lines_and_garbage)
{
	size_t n = 3 * TIO_CHUNK;
	char *buf = malloc(n + 8), want[1200];
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	time_t t0 = time(NULL);
	struct recs rs = { 0 };

	/* 4096 bytes of line are accepted (a din comment), 4097 are not */
	memset(buf, 'x', 4096);
	memcpy(buf, "2 401000 ", 9);
	memcpy(buf + 4096, "\n0 1000\n", 8);
	write_file(tmp_path("long.din"), buf, 4096 + 8);
	must_read(tmp_path("long.din"), TF_DIN, &rs);
	ck_assert_uint_eq(rs.n, 2);
	recs_free(&rs);
	memcpy(buf, "0 1000\n2 401000 ", 16);
	memset(buf + 16, 'x', 4097 - 9);
	memcpy(buf + 7 + 4097, "\n", 1);
	write_file(tmp_path("long.din"), buf, 7 + 4097 + 1);
	snprintf(want, sizeof(want), "%s:2: line longer than 4096 bytes", tmp_path("long.din"));
	expect_error(tmp_path("long.din"), TF_DIN, want);

	/* a line without a newline across several chunks */
	memcpy(buf, "0x401000: R 0x1000\n0x", 21);
	memset(buf + 21, '0', n - 21);
	write_file(tmp_path("long.pin"), buf, n);
	snprintf(want, sizeof(want), "%s:2: line longer than 4096 bytes", tmp_path("long.pin"));
	expect_error(tmp_path("long.pin"), TF_PIN, want);
	memcpy(buf, "2 401000\n0 ", 11);
	memset(buf + 11, '0', n - 11);
	write_file(tmp_path("long.din"), buf, n);
	snprintf(want, sizeof(want), "%s:2: line longer than 4096 bytes", tmp_path("long.din"));
	expect_error(tmp_path("long.din"), TF_DIN, want);

	/* /dev/zero: stops at once, as every format */
	expect_error("/dev/zero", TF_AUTO, "/dev/zero: cannot detect the trace format (use --format)");
	expect_error("/dev/zero", TF_PIN, "/dev/zero:1: line longer than 4096 bytes");
	expect_error("/dev/zero", TF_DIN, "/dev/zero:1: line longer than 4096 bytes");
	expect_error("/dev/zero", TF_CHAMPSIM, "/dev/zero: champsim record 1 at byte 0: ip is 0");

	/* random bytes: an error, not a hang, and no format claims them */
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(rng_next(&s) >> 56);
	buf[0] = (char)0xc3;
	buf[100] = '\n';
	write_file(tmp_path("garbage.bin"), buf, n);
	snprintf(want, sizeof(want), "%s: cannot detect the trace format (use --format)",
		 tmp_path("garbage.bin"));
	expect_error(tmp_path("garbage.bin"), TF_AUTO, want);
	snprintf(want, sizeof(want), "%s:1: ", tmp_path("garbage.bin"));
	for (int f = 0; f < 2; f++) {
		char msg[1200];

		ck_assert_int_eq(drain(tmp_path("garbage.bin"), f ? TF_DIN : TF_PIN, NULL, msg,
				       sizeof(msg)),
				 -1);
		ck_assert_msg(!strncmp(msg, want, strlen(want)), "%s", msg);
	}
	{
		char msg[1200];

		/* random 64-byte records fail one of the checks at once */
		ck_assert_int_eq(drain(tmp_path("garbage.bin"), TF_CHAMPSIM, NULL, msg, sizeof(msg)),
				 -1);
		snprintf(want, sizeof(want), "%s: champsim record 1 at byte 0: ",
			 tmp_path("garbage.bin"));
		ck_assert_msg(!strncmp(msg, want, strlen(want)), "%s", msg);
	}

	/* mutations of good traces: each ends (with records or an error), none crashes */
	for (int k = 0; k < 300; k++) {
		static const char *const names[] = { "basic.pin", "basic.din" };
		FILE *f = fopen(data_path(names[k & 1]), "rb");
		size_t len = fread(buf, 1, n, f);
		char msg[1200];

		fclose(f);
		for (int j = 0; j < 1 + k % 4; j++)
			buf[rng_next(&s) % len] = (char)(rng_next(&s) >> 56);
		write_file(tmp_path("mut.txt"), buf, len - (size_t)(k % 7));
		(void)drain(tmp_path("mut.txt"), k & 1 ? TF_DIN : TF_PIN, NULL, msg, sizeof(msg));
	}
	ck_assert_int_le(time(NULL) - t0, 10);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------ detection, empty files */

START_TEST(test_detection)
{
	static const struct {
		const char *name;
		enum trace_format fmt;
	} empty[] = {
		{ "e.pin", TF_PIN },
		{ "pinatrace.out", TF_PIN },
		{ "x.pinatrace.out.zst", TF_PIN },
		{ "e.din", TF_DIN },
		{ "e.din.gz", TF_DIN },
		{ "e.champsim", TF_CHAMPSIM },
		{ "e.champsimtrace.xz", TF_CHAMPSIM },
		{ "champsim.trace", TF_CHAMPSIM },
	};
	struct recs rs = { 0 };
	char want[1200];

	/* an empty trace (compressed or not) is a trace of no records; its name gives the format */
	for (size_t i = 0; i < ARRAY_SIZE(empty); i++) {
		const char *path = tmp_path(empty[i].name);

		switch (tio_comp_from_suffix(path)) {
		case TIO_XZ:
			write_xz(path, "", 0);
			break;
		case TIO_GZIP:
			write_gz(path, "", 0);
			break;
		case TIO_ZSTD:
			write_zst(path, "", 0);
			break;
		default:
			write_file(path, "", 0);
			break;
		}
		must_read(path, TF_AUTO, &rs);
		ck_assert_int_eq(rs.format, empty[i].fmt);
		ck_assert_uint_eq(rs.n, 0);
		recs_free(&rs);
	}
	/* blank lines only */
	write_str(tmp_path("blank.din"), "\n \n\t\n");
	must_read(tmp_path("blank.din"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_DIN);
	ck_assert_uint_eq(rs.n, 0);
	recs_free(&rs);

	/* by content, whatever the name; content beats the name */
	write_str(tmp_path("a.lackey"), "\n0x401000: R 0x1000\n");
	must_read(tmp_path("a.lackey"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_PIN);
	ck_assert_uint_eq(rs.n, 2);
	recs_free(&rs);
	write_str(tmp_path("b.pin"), "2 401000\n0 1000\n");
	must_read(tmp_path("b.pin"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_DIN);
	ck_assert_uint_eq(rs.n, 2);
	recs_free(&rs);
	write_str(tmp_path("c.din"), "I  0401ab70,4\n");
	must_read(tmp_path("c.din"), TF_AUTO, &rs);
	ck_assert_int_eq(rs.format, TF_LACKEY);
	recs_free(&rs);

	/* the given format wins over the content */
	snprintf(want, sizeof(want), "%s:1: unrecognized line", tmp_path("b.pin"));
	expect_error(tmp_path("b.pin"), TF_PIN, want);
	snprintf(want, sizeof(want), "%s:2: bad label '0x401000:'", tmp_path("a.lackey"));
	expect_error(tmp_path("a.lackey"), TF_DIN, want);
	snprintf(want, sizeof(want), "%s: champsim record 1 at byte 0: truncated (16 of 64 bytes)",
		 tmp_path("b.pin"));
	expect_error(tmp_path("b.pin"), TF_CHAMPSIM, want);

	/* what no probe may claim */
	write_str(tmp_path("n1.dat"), "1 20734016\n30 40\n"); /* decimal pairs (Ramulator CPU trace) */
	write_str(tmp_path("n2.dat"), "0x12345680 R\n");     /* Ramulator memory trace */
	write_str(tmp_path("n3.dat"), "\n\n I  bad\n");
	write_str(tmp_path("n4.dat"), "0x401000: R 0x1000\n2 401000\n"); /* pin, then din */
	write_str(tmp_path("n5.dat"), "2 401000\n0x401000: R 0x1000\n"); /* din, then pin */
	for (int i = 1; i <= 5; i++) {
		char name[32];

		snprintf(name, sizeof(name), "n%d.dat", i);
		snprintf(want, sizeof(want), "%s: cannot detect the trace format (use --format)",
			 tmp_path(name));
		expect_error(tmp_path(name), TF_AUTO, want);
	}
}
END_TEST

START_TEST(test_probes)
{
	static const char pin_line[] = "0x7f12a3b4c5d6: R 0x7ffd0000aa10\n";
	unsigned char rec[64 * 2];

	ck_assert(trace_pin_probe((const unsigned char *)pin_line, strlen(pin_line)));
	ck_assert(trace_pin_probe((const unsigned char *)"#eof\n", 5));
	ck_assert(!trace_pin_probe((const unsigned char *)"", 0));
	ck_assert(!trace_pin_probe((const unsigned char *)"\n\n", 2));
	ck_assert(!trace_din_probe((const unsigned char *)pin_line, strlen(pin_line)));
	ck_assert(trace_din_probe((const unsigned char *)"2 401000", 8));
	ck_assert(trace_din_probe((const unsigned char *)"\t1\t0x401000 comment\n", 20));
	ck_assert(!trace_din_probe((const unsigned char *)"5 401000\n", 9));
	ck_assert(!trace_din_probe((const unsigned char *)"2\n", 2));
	ck_assert(!trace_lackey_probe((const unsigned char *)"2 401000\n", 9));
	/* a line cut by the end of the peeked chunk is not judged */
	ck_assert(trace_din_probe((const unsigned char *)"2 401000\n0 12zz", 15));
	ck_assert(trace_pin_probe((const unsigned char *)"#eof\n0x40", 9));

	encode_instr(rec, &cs_basic[0]);
	encode_instr(rec + 64, &cs_basic[2]);
	ck_assert(trace_champsim_probe(rec, 128));
	ck_assert(trace_champsim_probe(rec, 100)); /* whole records only */
	ck_assert(!trace_champsim_probe(rec, 63));
	ck_assert(!trace_champsim_probe((const unsigned char *)pin_line, strlen(pin_line)));
	rec[64 + 8] = 2; /* is_branch of the second record */
	ck_assert(!trace_champsim_probe(rec, 128));
	ck_assert(trace_champsim_probe(rec, 64));
	memset(rec, 0, sizeof(rec));
	ck_assert(!trace_champsim_probe(rec, 128)); /* ip 0 */
}
END_TEST

static Suite *formats_suite(void)
{
	Suite *s = suite_create("formats");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pin_basic);
	tcase_add_test(tc, test_pin_variants);
	tcase_add_test(tc, test_pin_errors);
	tcase_add_test(tc, test_din_basic);
	tcase_add_test(tc, test_din_errors);
	tcase_add_test(tc, test_champsim_layout);
	tcase_add_test(tc, test_champsim_basic);
	tcase_add_test(tc, test_champsim_errors);
	tcase_add_test(tc, test_champsim_large);
	tcase_add_test(tc, test_text_chunks);
	tcase_add_test(tc, test_long_lines_and_garbage);
	tcase_add_test(tc, test_detection);
	tcase_add_test(tc, test_probes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int status;
	char cmd[300];

	snprintf(tmpdir, sizeof(tmpdir), "%s/mmusim-check-formats-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	status = check_run(formats_suite());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "check_formats: could not remove %s\n", tmpdir);
	return status;
}
