/*
 * trace_din.c - reader for Dinero IV's traditional "din" ASCII traces
 * (`dineroIV -informat d`, the format Dinero III read).
 *
 * One reference per line: a label and an address, both hex, separated by
 * blanks; the rest of the line is ignored, so it may hold a comment.
 *   label 0  read data          -> R_LOAD
 *         1  write data         -> R_STORE
 *         2  instruction fetch  -> R_IFETCH
 *         3  escape: unknown access type -> R_LOAD (Dinero IV's D4XMISC:
 *            a data reference that d4_dopending() counts with the reads)
 *         4  escape: cache flush (Dinero IV's D4XCOPYB) -> no record: it
 *            names no memory access, so it costs no translation
 * Size and address: Dinero IV's tracein_din() makes every din reference a
 * 4-byte word at the address with its low two bits cleared ("dineroIII is
 * pretty much word-oriented", d4/dinfmt.c); this reader does the same, so a
 * reference never crosses a page.
 *
 * Accepted as Dinero IV accepts it: blanks (spaces, tabs) before the label,
 * between the fields and after the address; a label or an address written
 * with a leading 0x/0X; labels of several hex digits ("00", "0x2").
 * Decided here where Dinero IV is silent or stricter:
 *   - blank lines are skipped (Dinero IV stops with "short line");
 *   - a CR counts as a blank, so CRLF files read (Dinero IV: "non hex digit");
 *   - labels above 4 are errors (Dinero IV passes 5 on as D4XINVAL, larger
 *     values to its cache code): the reference lists only 0 to 4;
 *   - addresses must be below 2^57 (VADDR_LIMIT), like every mmusim reader;
 *   - a NUL byte anywhere in a line is an error: a text trace holds none, and
 *     a zero-filled tail (a file cut short by a crash) must not pass as
 *     comments;
 *   - lines are limited to DIN_MAXLINE bytes, so binary garbage stops with an
 *     error within one chunk.
 *
 * Speed: the common line "L HEX\n" (one-digit label, one space, the address,
 * newline) is parsed by one tight table-driven loop straight into the batch;
 * every other line goes to a careful per-line path that accepts it or names
 * the error. Line stitching across chunks is the lackey reader's
 * (trace_lackey.c): the unfinished line is copied in front of the next chunk.
 *
 * Left out: Dinero IV's extended din ("-informat D": r/w/i/m/c/v labels with
 * sizes), binary, pixie32 and pixie64 formats.
 *
 * Sources: Dinero IV 7, d4/dinfmt.c (tracein_din) and d4/d4.h (D4XREAD 0,
 * D4XWRITE 1, D4XINSTRN 2, D4XMISC 3, D4XCOPYB 4, D4XINVAL 5), d4/ref.c
 * (d4_dopending); the din-format notes in ../shared/reference/trace-formats.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_io.h"

#define DIN_MAXLINE TIO_MAXLINE /* longest accepted line, without its newline (as lackey) */
#define DIN_SIZE 4       /* Dinero IV: every din reference is a 4-byte word */
#define DIN_ALIGN (~(vaddr_t)3)
#define DIN_LABEL_MAX 4
#define DIN_SKIP 0xff /* din_kind[] value for label 4: no record */

/* hexv[c] - 1 is the value of hex digit c, 0 for any other byte. */
#define HX(c, v) [c] = (v) + 1
static const unsigned char hexv[256] = {
	HX('0', 0), HX('1', 1), HX('2', 2), HX('3', 3), HX('4', 4), HX('5', 5),
	HX('6', 6), HX('7', 7), HX('8', 8), HX('9', 9), HX('a', 10), HX('b', 11),
	HX('c', 12), HX('d', 13), HX('e', 14), HX('f', 15), HX('A', 10), HX('B', 11),
	HX('C', 12), HX('D', 13), HX('E', 14), HX('F', 15),
};
#undef HX

/* The record kind + 1 of a one-digit label (DIN_SKIP for 4), 0 for anything else. */
static const unsigned char din_kind[256] = {
	['0'] = R_LOAD + 1, ['1'] = R_STORE + 1, ['2'] = R_IFETCH + 1, ['3'] = R_LOAD + 1,
	['4'] = DIN_SKIP,
};

/* By label value, for labels of several digits. */
static const unsigned char din_kind_of[DIN_LABEL_MAX + 1] = {
	R_LOAD + 1, R_STORE + 1, R_IFETCH + 1, R_LOAD + 1, DIN_SKIP,
};

struct din_reader {
	struct trace_reader head;
	struct tio *io;
	struct tio_lines ln; /* the region being parsed (trace_io.h) */
	unsigned long line; /* lines consumed so far */
	bool eof;
};

static int din_errf(struct din_reader *d, unsigned long line, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), cold, noinline));

/* "NAME:LINE: message", unless the decompressor failed first. Returns -1. */
static int din_errf(struct din_reader *d, unsigned long line, struct err *e, const char *fmt, ...)
{
	char msg[sizeof(e->msg)];
	va_list ap;

	if (tio_stream_error(d->io, e))
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(e, d->head.name, line, 0, "%s", msg);
}

/* @s (@len bytes) for a message: printable ASCII as is, other bytes as \xNN, at most ~40. */
static const char *din_token(char *buf, size_t size, const unsigned char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 8 < size; i++) {
		if (i == 40) {
			o += (size_t)snprintf(buf + o, size - o, "...");
			break;
		}
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
			buf[o++] = (char)s[i];
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", s[i]);
	}
	buf[o] = '\0';
	return buf;
}

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* End of the token at @s: the first blank, or @t. */
static const unsigned char *tok_end(const unsigned char *s, const unsigned char *t)
{
	while (s < t && !is_blank(*s))
		s++;
	return s;
}

/*
 * Parse the hex number [@s, @te) with an optional 0x/0X prefix. Returns 0
 * and the value, 1 if it is not hex, 2 if it is 2^64 or more (@z then points
 * at its first significant digit).
 */
static int din_hex(const unsigned char *s, const unsigned char *te, uint64_t *v,
		   const unsigned char **z)
{
	uint64_t a = 0;

	if (te - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (s == te)
		return 1;
	for (const unsigned char *q = s; q < te; q++)
		if (!hexv[*q])
			return 1;
	while (s < te - 1 && *s == '0')
		s++;
	*z = s;
	if (te - s > 16)
		return 2;
	for (; s < te; s++)
		a = a << 4 | (hexv[*s] - 1u);
	*v = a;
	return 0;
}

/*
 * Any line the fast loop did not take, starting at @l (its newline is before
 * the region's end). Appends its record, if any, at *@n; sets *@next past it.
 */
static int din_line(struct din_reader *d, unsigned long line, const unsigned char *l,
		    const unsigned char **next, size_t *n, struct err *e)
{
	const unsigned char *nl = memchr(l, '\n', (size_t)(d->ln.end - l));
	const unsigned char *t = nl, *s, *te, *z = NULL;
	uint64_t label = 0, a = 0;
	unsigned kind;
	char tok[200];
	int r;

	*next = nl + 1;
	if (nl - l > DIN_MAXLINE)
		return din_errf(d, line, e, "line longer than %d bytes", DIN_MAXLINE);
	if (memchr(l, '\0', (size_t)(nl - l)))
		return din_errf(d, line, e, "NUL byte in a text line");
	while (t > l && is_blank(t[-1]))
		t--;
	for (s = l; s < t && is_blank(*s); s++)
		;
	if (s == t)
		return 0; /* blank */

	te = tok_end(s, t);
	r = din_hex(s, te, &label, &z);
	if (r == 1)
		return din_errf(d, line, e, "bad label '%s'",
				din_token(tok, sizeof(tok), s, (size_t)(te - s)));
	if (r == 2 || label > DIN_LABEL_MAX)
		return din_errf(d, line, e, "unknown label '%s' (din labels are 0 to %d)",
				din_token(tok, sizeof(tok), s, (size_t)(te - s)), DIN_LABEL_MAX);
	kind = din_kind_of[label];

	for (s = te; s < t && is_blank(*s); s++)
		;
	if (s == t)
		return din_errf(d, line, e, "missing address");
	te = tok_end(s, t);
	r = din_hex(s, te, &a, &z);
	if (r == 1)
		return din_errf(d, line, e, "bad hex address '%s'",
				din_token(tok, sizeof(tok), s, (size_t)(te - s)));
	if (r == 2 || a >= VADDR_LIMIT)
		return din_errf(d, line, e, "address 0x%s is over %d bits",
				din_token(tok, sizeof(tok), z, (size_t)(te - z)), VADDR_BITS_MAX);
	/* the rest of the line is a comment */
	if (kind != DIN_SKIP) {
		d->head.rec[*n] = (struct trace_rec){ .addr = a & DIN_ALIGN, .size = DIN_SIZE,
						 .kind = kind - 1u };
		(*n)++;
	}
	return 0;
}

/*
 * Parse whole lines of [d->ln.p, d->ln.end) into the batch until it is full or the
 * region is used up. The region ends with a newline, which is neither a hex
 * digit nor a label, so the fast loop stops on it without a bounds check.
 */
static int din_parse(struct din_reader *d, size_t *np, struct err *e)
{
	const unsigned char *p = d->ln.p, *end = d->ln.end;
	struct trace_rec *rec = d->head.rec;
	unsigned long line = d->line;
	size_t n = *np;
	int ret = 0;

	while (p < end && n < TRACE_BATCH) {
		const unsigned char *l = p, *h;
		unsigned kind = din_kind[p[0]];
		uint64_t a = 0;
		unsigned v;

		if (unlikely(!kind || kind == DIN_SKIP || p[1] != ' '))
			goto slow;
		h = p + 2;
		p = h;
		while ((v = hexv[*p]) != 0) {
			a = a << 4 | (v - 1u);
			p++;
		}
		/* 16 digits at most: no overflow; more, or a prefix, a comment: slow */
		if (unlikely(*p != '\n' || p == h || p - h > 16 || a >= VADDR_LIMIT))
			goto slow;
		p++;
		line++;
		rec[n].addr = a & DIN_ALIGN;
		rec[n].size = DIN_SIZE;
		rec[n].kind = kind - 1u;
		n++;
		continue;
slow:
		line++;
		ret = din_line(d, line, l, &p, &n, e);
		if (ret < 0)
			break;
	}
	d->ln.p = p;
	d->line = line;
	*np = n;
	return ret;
}

/* The line after the last one parsed has no newline within DIN_MAXLINE bytes. */
static int din_too_long(struct din_reader *d, struct err *e)
{
	return din_errf(d, d->line + 1, e, "line longer than %d bytes", DIN_MAXLINE);
}

/* The next region of whole lines (tio_lines_refill); a line too long is reported here. */
static int din_refill(struct din_reader *d, struct err *e)
{
	int r = tio_lines_refill(d->io, &d->ln, e);

	return r == -2 ? din_too_long(d, e) : r;
}

static int din_next(struct trace_reader *tr, struct trace_batch *b, struct err *e)
{
	struct din_reader *d = (struct din_reader *)tr;
	size_t n = 0;
	int ret;

	while (n < TRACE_BATCH) {
		if (d->ln.p == d->ln.end) {
			if (d->eof)
				break;
			ret = din_refill(d, e);
			if (ret < 0)
				return -1;
			if (!ret)
				d->eof = true;
			continue;
		}
		if (din_parse(d, &n, e) < 0)
			return -1;
	}
	b->recs = d->head.rec;
	b->n = n;
	b->ev = NULL;
	b->nev = 0;
	return (int)n;
}

static void din_close(struct trace_reader *tr)
{
	struct din_reader *d = (struct din_reader *)tr;

	tio_close(d->io);
	trace_reader_free(&d->head);
}

static const struct trace_ops din_ops = {
	.next = din_next,
	.close = din_close,
};

struct trace_reader *trace_din_open(struct tio *io, const char *name, struct err *e)
{
	struct din_reader *d = trace_reader_alloc(sizeof(*d), &din_ops, TF_DIN, name, e);

	if (!d) {
		tio_close(io);
		return NULL;
	}
	d->io = io;
	tio_lines_init(&d->ln);
	return &d->head;
}

/*
 * Is [@s, @t) (no newline) a din record as the common writers print it:
 * blanks, one label digit 0-4, blanks, an optional 0x, hex digits, then a
 * blank or the end?
 */
static bool din_probe_line(const unsigned char *s, const unsigned char *t)
{
	const unsigned char *h;

	while (s < t && (*s == ' ' || *s == '\t'))
		s++;
	if (s == t || *s < '0' || *s > '4')
		return false;
	if (++s == t || (*s != ' ' && *s != '\t'))
		return false;
	while (s < t && (*s == ' ' || *s == '\t'))
		s++;
	if (t - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (h = s; s < t && hexv[*s]; s++)
		;
	return s > h && s - h <= 16 && (s == t || is_blank(*s));
}

/*
 * Content detection: the first DIN_PROBE_LINES non-blank lines (or as many
 * as the first chunk holds) must all be din records. A line cut by the end
 * of the chunk is not judged unless it is the only one. Several lines, so that
 * a text of numbers that merely starts like "1 20" (a Ramulator CPU trace,
 * decimal) is not taken for din.
 */
#define DIN_PROBE_LINES 16

bool trace_din_probe(const unsigned char *p, size_t n)
{
	const unsigned char *end = p + n;
	unsigned good = 0;

	while (p < end && good < DIN_PROBE_LINES) {
		const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
		const unsigned char *t = nl ? nl : end, *s = p;

		if (!nl && good)
			break;
		while (s < t && is_blank(*s))
			s++;
		if (s < t) {
			if (!din_probe_line(p, t))
				return false;
			good++;
		}
		p = t + 1;
	}
	return good > 0;
}
