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

#include "trace_text.h"

#define DIN_MAXLINE TIO_MAXLINE /* longest accepted line, without its newline (as lackey) */
#define DIN_SIZE 4       /* Dinero IV: every din reference is a 4-byte word */
#define DIN_ALIGN (~(vaddr_t)3)
#define DIN_LABEL_MAX 4
#define DIN_SKIP 0xff /* din_kind[] value for label 4: no record */

/* The record kind + 1 of a one-digit label (DIN_SKIP for 4), 0 for anything else. */
static const unsigned char din_kind[256] = {
	['0'] = R_LOAD + 1, ['1'] = R_STORE + 1, ['2'] = R_IFETCH + 1, ['3'] = R_LOAD + 1,
	['4'] = DIN_SKIP,
};

/* By label value, for labels of several digits. */
static const unsigned char din_kind_of[DIN_LABEL_MAX + 1] = {
	R_LOAD + 1, R_STORE + 1, R_IFETCH + 1, R_LOAD + 1, DIN_SKIP,
};

/*
 * Parse the hex number [@s, @te) with an optional 0x/0X prefix. Returns 0
 * and the value, 1 if it is not hex, 2 if it is 2^64 or more (@z then points
 * at its first significant digit).
 */
static int din_hex(const unsigned char *s, const unsigned char *te, uint64_t *v,
		   const unsigned char **z)
{
	if (te - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	return tt_hex(s, te, v, z);
}

/*
 * Any line the fast loop did not take, starting at @l (its newline is before
 * the region's end). Appends its record, if any, at *@n; sets *@next past it.
 */
static int din_line(struct tt_reader *d, unsigned long line, const unsigned char *l,
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
		return tt_errf(d, line, e, "line longer than %d bytes", DIN_MAXLINE);
	if (memchr(l, '\0', (size_t)(nl - l)))
		return tt_errf(d, line, e, "NUL byte in a text line");
	while (t > l && tt_is_blank(t[-1]))
		t--;
	for (s = l; s < t && tt_is_blank(*s); s++)
		;
	if (s == t)
		return 0; /* blank */

	te = tt_tok_end(s, t);
	r = din_hex(s, te, &label, &z);
	if (r == 1)
		return tt_errf(d, line, e, "bad label '%s'",
				tt_token(tok, sizeof(tok), s, (size_t)(te - s)));
	if (r == 2 || label > DIN_LABEL_MAX)
		return tt_errf(d, line, e, "unknown label '%s' (din labels are 0 to %d)",
				tt_token(tok, sizeof(tok), s, (size_t)(te - s)), DIN_LABEL_MAX);
	kind = din_kind_of[label];

	for (s = te; s < t && tt_is_blank(*s); s++)
		;
	if (s == t)
		return tt_errf(d, line, e, "missing address");
	te = tt_tok_end(s, t);
	r = din_hex(s, te, &a, &z);
	if (r == 1)
		return tt_errf(d, line, e, "bad hex address '%s'",
				tt_token(tok, sizeof(tok), s, (size_t)(te - s)));
	if (r == 2 || a >= VADDR_LIMIT)
		return tt_errf(d, line, e, "address 0x%s is over %d bits",
				tt_token(tok, sizeof(tok), z, (size_t)(te - z)), VADDR_BITS_MAX);
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
static int din_parse(struct tt_reader *d, size_t *np, struct err *e)
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
		while ((v = tt_hexv[*p]) != 0) {
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

static int din_next(struct trace_reader *tr, struct trace_batch *b, struct err *e)
{
	return tt_fill((struct tt_reader *)tr, 1, din_parse, b, e);
}

static const struct trace_ops din_ops = {
	.next = din_next,
	.close = tt_reader_close,
};

struct trace_reader *trace_din_open(struct tio *io, const char *name, struct err *e)
{
	struct tt_reader *d = tt_reader_open(sizeof(*d), &din_ops, TF_DIN, io, name, e);

	return d ? &d->head : NULL;
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
	for (h = s; s < t && tt_hexv[*s]; s++)
		;
	return s > h && s - h <= 16 && (s == t || tt_is_blank(*s));
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
	return tt_probe_lines(p, n, DIN_PROBE_LINES, din_probe_line);
}
