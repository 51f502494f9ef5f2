/*
 * check_lackey_parse.c - the lackey reader's fast path (trace_lackey.c:
 * lk_fast_line(), lk_hex16(), the room-bounded loop) against the records the
 * lines stand for and against its careful per-line path.
 *
 * Lines are generated from known values (kind, address, digit count, letter
 * case, size spelling), so every record is checked against the value it was
 * written from; the same lines with a blank appended, which the fast path
 * never takes (the newline must follow the size), give the slow path's parse
 * of the same input, compared record by record. Lines the fast path must
 * leave to the slow path (3-digit sizes, 7 and 15..17 address digits, a
 * missing comma, size 0) are checked for their record or exact error message.
 * check_lackey_scalar.c builds this file again over the portable path (no SSE2).
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/trace.h"
#include "check_run.h"

#ifndef LK_SUITE
#define LK_SUITE "lackey_parse"
#endif

static char tmpdir[256];

#include "check_files.h"

struct want {
	uint64_t addr;
	uint32_t size;
	unsigned kind;
};

/* Read @path as lackey to the end into @out (at most @max); 0, or -1 and the error in @msg. */
static int read_all(const char *path, struct want *out, size_t max, size_t *n, char *msg,
		    size_t len)
{
	struct err e = { 0 };
	struct trace_reader *r = trace_open(path, TF_LACKEY, &e);
	struct trace_batch b;
	int k;

	*n = 0;
	msg[0] = '\0';
	ck_assert_ptr_nonnull(r);
	while ((k = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			ck_assert_uint_lt(*n, max);
			out[(*n)++] = (struct want){ b.recs[i].addr, b.recs[i].size, b.recs[i].kind };
		}
	if (k < 0)
		err_format(&e, msg, len);
	trace_close(r);
	return k < 0 ? -1 : 0;
}

/* xorshift64 (Marsaglia 2003): the same lines on every run */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Append one record line for @w with @digits address digits (zero-padded), mixed case if @mix. */
static void put_line(FILE *f, const struct want *w, unsigned digits, bool mix, uint64_t bits,
		     const char *size, const char *tail)
{
	static const char *const pre[] = { [R_IFETCH] = "I  ", [R_LOAD] = " L ", [R_STORE] = " S ",
					   [R_MODIFY] = " M " };
	char hex[40];

	snprintf(hex, sizeof(hex), "%0*" PRIx64, (int)digits, w->addr);
	for (unsigned i = 0; mix && hex[i]; i++)
		if (hex[i] >= 'a' && (bits >> (i % 64) & 1))
			hex[i] = (char)(hex[i] - 'a' + 'A');
	fprintf(f, "%s%s,%s%s\n", pre[w->kind], hex, size, tail);
}

#define NLINES 150000 /* about 2.6 MB: several regions of 960 KiB, so region ends too */

/*
 * Random lines of the shapes lackey writes (8 digits, 12 for a stack address,
 * up to 14) and rarer ones (15..17 digits with leading zeros, sizes "08" and
 * 3 digits), in @name, with @tail after each size; their records in @w.
 */
static void gen(const char *name, const char *tail, struct want *w)
{
	FILE *f = fopen(tmp_path(name), "w");
	uint64_t s = 0x9e3779b97f4a7c15ULL;

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < NLINES; i++) {
		uint64_t r = rnd(&s), r2 = rnd(&s);
		unsigned sh = (unsigned)(r % 16), digits, need;
		char size[8];

		w[i].kind = (unsigned)(r >> 8 & 3); /* R_IFETCH .. R_MODIFY */
		w[i].addr = r2 >> (7 + (r >> 12) % 50); /* 1 .. 57 bits */
		for (need = 1; need < 16 && w[i].addr >> (4 * need); need++)
			;
		if (sh < 6)
			digits = 8;
		else if (sh < 11)
			digits = 12;
		else if (sh < 14)
			digits = 8 + (unsigned)(r >> 20) % 7; /* 8..14 */
		else
			digits = 15 + (unsigned)(r >> 20) % 3; /* 15..17: the slow path */
		if (digits < need)
			digits = need;
		switch (r >> 24 & 7) {
		case 0:
			w[i].size = 100 + (uint32_t)(r >> 28) % 900; /* 3 digits: the slow path */
			break;
		case 1:
		case 2:
			w[i].size = 10 + (uint32_t)(r >> 28) % 90;
			break;
		default:
			w[i].size = 1 + (uint32_t)(r >> 28) % 9;
		}
		if ((r >> 40 & 31) == 0 && w[i].size < 10)
			snprintf(size, sizeof(size), "0%u", w[i].size); /* "08": 2 digits, a leading 0 */
		else
			snprintf(size, sizeof(size), "%u", w[i].size);
		put_line(f, &w[i], digits, r >> 27 & 1, rnd(&s), size, tail);
	}
	ck_assert_int_eq(fclose(f), 0);
}

static void same(const struct want *a, const struct want *b, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].kind != b[i].kind || a[i].addr != b[i].addr || a[i].size != b[i].size)
			ck_abort_msg("%s: record %zu: %u %#" PRIx64 " %u, want %u %#" PRIx64 " %u", what,
				     i, a[i].kind, a[i].addr, a[i].size, b[i].kind, b[i].addr, b[i].size);
}

START_TEST(test_generated)
{
	struct want *w = calloc(NLINES, sizeof(*w)), *fast = calloc(NLINES, sizeof(*w));
	struct want *slow = calloc(NLINES, sizeof(*w)), *w2 = calloc(NLINES, sizeof(*w));
	char msg[512];
	size_t n;

	ck_assert(w && fast && slow && w2);
	gen("fast.lackey", "", w);
	gen("slow.lackey", " ", w2); /* a blank after the size: never the fast path */
	ck_assert_int_eq(read_all(tmp_path("fast.lackey"), fast, NLINES, &n, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(n, NLINES);
	same(fast, w, NLINES, "fast vs generated");
	ck_assert_int_eq(read_all(tmp_path("slow.lackey"), slow, NLINES, &n, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(n, NLINES);
	same(slow, w, NLINES, "slow vs generated");
	same(fast, slow, NLINES, "fast vs slow");
	free(w);
	free(w2);
	free(fast);
	free(slow);
}
END_TEST

/* Write @text to a file and read it: @nwant records must equal @want, then @err ("" if none). */
static void check_text(const char *text, const struct want *want, size_t nwant, const char *err)
{
	FILE *f = fopen(tmp_path("t.lackey"), "w");
	struct want got[16];
	char msg[512], full[600];
	size_t n;
	int r;

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	r = read_all(tmp_path("t.lackey"), got, 16, &n, msg, sizeof(msg));
	if (*err) {
		snprintf(full, sizeof(full), "%s:%s", tmp_path("t.lackey"), err);
		ck_assert_int_eq(r, -1);
		ck_assert_str_eq(msg, full);
		return;
	}
	ck_assert_msg(r == 0, "%s", msg);
	ck_assert_uint_eq(n, nwant);
	same(got, want, n, text);
}

START_TEST(test_shapes)
{
	static const struct {
		const char *text;
		struct want w;
	} ok[] = {
		{ "I  00401000,4\n", { 0x401000, 4, R_IFETCH } },
		{ " L 7ffd1234abcd,8\n", { 0x7ffd1234abcd, 8, R_LOAD } },
		{ " S 7FFD1234ABCD,16\n", { 0x7ffd1234abcd, 16, R_STORE } },
		{ " M 0001fFfF0000aB,99\n", { 0x1ffff0000ab, 99, R_MODIFY } },      /* 14 digits */
		{ "I  00ffffffffffffff,1\n", { 0xffffffffffffff, 1, R_IFETCH } },   /* 16 digits */
		{ "I  000000000000401000,4\n", { 0x401000, 4, R_IFETCH } },         /* 18 digits */
		{ " L 0401000,4\n", { 0x401000, 4, R_LOAD } },                      /* 7 digits */
		{ " L 00401000,128\n", { 0x401000, 128, R_LOAD } },
		{ " L 00401000,65536\n", { 0x401000, 65536, R_LOAD } },
		{ " L 00401000,09\n", { 0x401000, 9, R_LOAD } },
		{ " L 00401000,4 \n", { 0x401000, 4, R_LOAD } },
		{ " L 00401000,4\r\n", { 0x401000, 4, R_LOAD } },
		{ "I  1ffffffffffffff,2\n", { 0x1ffffffffffffffULL, 2, R_IFETCH } }, /* 57 bits */
	};
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "I  00401000,0\n", "2: size 0" },
		{ "I  00401000,00\n", "2: size 0" },
		{ "I  00401000,65537\n", "2: size 65537 is over 65536" },
		{ "I  00401000\n", "2: missing size" },
		{ "I  00401000,\n", "2: missing size" },
		{ "I  00401000;4\n", "2: bad hex address '00401000;4'" },
		{ "I  0040100g,4\n", "2: bad hex address '0040100g'" },
		{ "I  00401000,4x\n", "2: bad size '4x'" },
		{ "I  00401000,1a\n", "2: bad size '1a'" },
		{ "I  200000000000000,4\n", "2: address 0x200000000000000 is over 57 bits" },
		{ "I  ffffffffffffffff0,4\n", "2: address 0xffffffffffffffff0 is over 57 bits" },
		{ " X 00401000,4\n", "2: unrecognized line" },
		{ "I 00401000,4\n", "2: unrecognized line" },
	};
	char text[256];

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct want w2[2] = { { 0x1000, 1, R_IFETCH }, ok[i].w };

		/* alone, at the region's end, and before a line (the room-bounded loop) */
		check_text(ok[i].text, &ok[i].w, 1, "");
		snprintf(text, sizeof(text), "I  00001000,1\n%s", ok[i].text);
		check_text(text, w2, 2, "");
		snprintf(text, sizeof(text), "%sI  00001000,1\n", ok[i].text);
		w2[0] = ok[i].w;
		w2[1] = (struct want){ 0x1000, 1, R_IFETCH };
		check_text(text, w2, 2, "");
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "I  00001000,1\n%s", bad[i].text);
		check_text(text, NULL, 0, bad[i].err);
	}
}
END_TEST

/* A region ends with a fast-path line: no byte after its newline may be taken for a line. */
START_TEST(test_region_end)
{
	struct want w[8];
	char text[256] = "";

	for (size_t k = 0; k < 8; k++) {
		w[k] = (struct want){ 0x7ff000000000 + k, 1 + (uint32_t)k, R_STORE };
		snprintf(text + strlen(text), sizeof(text) - strlen(text), " S %012" PRIx64 ",%u\n",
			 w[k].addr, w[k].size);
		check_text(text, w, k + 1, "");
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create(LK_SUITE);
	TCase *tc = tcase_create("core");
	int status;

	snprintf(tmpdir, sizeof(tmpdir), "%s/mmusim-check-lk-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_generated);
	tcase_add_test(tc, test_shapes);
	tcase_add_test(tc, test_region_end);
	suite_add_tcase(s, tc);
	status = check_run(s);
	check_rmdir(tmpdir);
	return status;
}
