/*
 * trace_pin.c - reader for the output of Intel Pin's pinatrace tool
 * (source/tools/ManualExamples/pinatrace.cpp; default file pinatrace.out).
 *
 * pinatrace instruments every memory operand of every executed instruction
 * (a predicated call: a cmov whose condition fails prints nothing) and prints,
 * per access, before the instruction runs:
 *   fprintf(trace, "%p: R %p\n", ip, addr);   a read   -> R_LOAD
 *   fprintf(trace, "%p: W %p\n", ip, addr);   a write  -> R_STORE
 * and, once, in its Fini() callback:  "#eof\n".
 * %p is glibc's: "0x" and lower-case hex digits without padding, "(nil)" for
 * a null pointer. An operand that is read and written (add [rax], 1) gives an
 * R line then a W line.
 *
 * What the output leaves out, and what this reader decides:
 *   - No access size is printed: every reference gets size 1, so none crosses
 *     a page by our invention (the TLBs see each access's first byte).
 *   - No instruction fetches are printed, only the ip of instructions that
 *     access memory. The reader emits one R_IFETCH of size 1 at the ip when it
 *     differs from the previous line's ip, before that line's access: one
 *     fetch per memory-accessing instruction, since the lines of one
 *     instruction (several operands, read + write) are consecutive. So the
 *     instruction TLB sees only those instructions, and two back-to-back
 *     executions of the same instruction (a one-instruction loop) count as
 *     one. A `trace info` "instructions" count is therefore a lower bound.
 *   - "#eof" ends the trace. Blank lines may follow it; anything else is an
 *     error (two outputs pasted together would otherwise be half read). A
 *     trace without "#eof" (the program was killed, or the file was cut with
 *     head) is read to its end: Pin then never flushed its last lines anyway.
 *   - Blanks (spaces, tabs, a CR) at the end of a line are ignored, and more
 *     than one between the fields is accepted; so are upper-case hex digits
 *     and an 0X prefix; "(nil)" reads as 0. Anything else is an error,
 *     including a NUL byte (binary garbage) and lines over PIN_MAXLINE bytes.
 *   - Addresses must be below 2^57 (VADDR_LIMIT), as in every mmusim reader.
 *
 * Speed: the common line is parsed by one tight table-driven loop straight
 * into the batch; anything else goes to a careful per-line path that accepts
 * it or names the error. Line stitching across chunks is the lackey reader's
 * (trace_lackey.c): the unfinished line is copied in front of the next chunk.
 *
 * Left out: Pin tools other than pinatrace (their lines differ), and thread
 * ids (pinatrace prints none; its threads share one stream unlocked).
 *
 * Sources: Pin's ManualExamples/pinatrace.cpp (RecordMemRead, RecordMemWrite,
 * Fini), as quoted in ../shared/reference/trace-formats.md; glibc's printf %p
 * (stdio-common/vfprintf: "(nil)" for NULL, else "%#lx").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_io.h"

#define PIN_MAXLINE TIO_MAXLINE /* longest accepted line, without its newline (as lackey) */
#define PIN_SIZE 1       /* pinatrace prints no size */
#define PIN_NO_IP UINT64_MAX /* before the first line: differs from every ip */

/* hexv[c] - 1 is the value of hex digit c, 0 for any other byte. */
#define HX(c, v) [c] = (v) + 1
static const unsigned char hexv[256] = {
	HX('0', 0), HX('1', 1), HX('2', 2), HX('3', 3), HX('4', 4), HX('5', 5),
	HX('6', 6), HX('7', 7), HX('8', 8), HX('9', 9), HX('a', 10), HX('b', 11),
	HX('c', 12), HX('d', 13), HX('e', 14), HX('f', 15), HX('A', 10), HX('B', 11),
	HX('C', 12), HX('D', 13), HX('E', 14), HX('F', 15),
};
#undef HX

/* The kind + 1 of the access letter. */
static const unsigned char pin_kind[256] = { ['R'] = R_LOAD + 1, ['W'] = R_STORE + 1 };

struct pin_reader {
	struct trace_reader head;
	struct tio *io;
	struct tio_lines ln; /* the region being parsed (trace_io.h) */
	unsigned long line; /* lines consumed so far */
	bool eof;           /* the stream is used up */
	bool seen_eof;      /* the "#eof" line has been read */
	vaddr_t last_ip;    /* ip of the previous record line */
};

static int pin_errf(struct pin_reader *pr, unsigned long line, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), cold, noinline));

/* "NAME:LINE: message", unless the decompressor failed first. Returns -1. */
static int pin_errf(struct pin_reader *pr, unsigned long line, struct err *e, const char *fmt, ...)
{
	char msg[sizeof(e->msg)];
	va_list ap;

	if (tio_stream_error(pr->io, e))
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(e, pr->head.name, line, 0, "%s", msg);
}

/* @s (@len bytes) for a message: printable ASCII as is, other bytes as \xNN, at most ~40. */
static const char *pin_token(char *buf, size_t size, const unsigned char *s, size_t len)
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

static bool span_is(const unsigned char *s, const unsigned char *t, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(t - s) == n && !memcmp(s, lit, n);
}

/*
 * A %p value: [@s, @t) is "0x" and hex digits, or "(nil)". Returns 0 and the
 * value, 1 if it is not such a value, 2 if it is 2^57 or more (*@z then
 * points at its first significant digit).
 */
static int pin_ptr(const unsigned char *s, const unsigned char *t, uint64_t *v,
		   const unsigned char **z)
{
	uint64_t a = 0;

	if (span_is(s, t, "(nil)")) {
		*v = 0;
		return 0;
	}
	if (t - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return 1;
	s += 2;
	for (const unsigned char *q = s; q < t; q++)
		if (!hexv[*q])
			return 1;
	while (s < t - 1 && *s == '0')
		s++;
	*z = s;
	if (t - s > 16)
		return 2;
	for (; s < t; s++)
		a = a << 4 | (hexv[*s] - 1u);
	*v = a;
	return a >= VADDR_LIMIT ? 2 : 0;
}

/*
 * Any line the fast loop did not take, starting at @l (its newline is before
 * the region's end). Appends its records at *@n (room for two is left); sets
 * *@next past the line.
 */
static int pin_line(struct pin_reader *pr, unsigned long line, const unsigned char *l,
		    const unsigned char **next, size_t *n, struct err *e)
{
	const unsigned char *nl = memchr(l, '\n', (size_t)(pr->ln.end - l));
	const unsigned char *t = nl, *colon, *s, *te, *z = NULL;
	uint64_t ip = 0, a = 0;
	unsigned kind;
	char tok[200];
	int r;

	*next = nl + 1;
	if (nl - l > PIN_MAXLINE)
		return pin_errf(pr, line, e, "line longer than %d bytes", PIN_MAXLINE);
	if (memchr(l, '\0', (size_t)(nl - l)))
		return pin_errf(pr, line, e, "NUL byte in a text line");
	while (t > l && is_blank(t[-1]))
		t--;
	if (t == l)
		return 0; /* blank */
	if (pr->seen_eof)
		return pin_errf(pr, line, e, "data after #eof");
	if (span_is(l, t, "#eof")) {
		pr->seen_eof = true;
		return 0;
	}
	colon = memchr(l, ':', (size_t)(t - l));
	if (!colon)
		return pin_errf(pr, line, e, "unrecognized line");
	r = pin_ptr(l, colon, &ip, &z);
	if (r == 1)
		return pin_errf(pr, line, e, "bad ip '%s'",
				pin_token(tok, sizeof(tok), l, (size_t)(colon - l)));
	if (r == 2)
		return pin_errf(pr, line, e, "ip 0x%s is over %d bits",
				pin_token(tok, sizeof(tok), z, (size_t)(colon - z)), VADDR_BITS_MAX);
	s = colon + 1;
	if (s == t || !is_blank(*s))
		return pin_errf(pr, line, e, "unrecognized line");
	while (s < t && is_blank(*s))
		s++;
	te = tok_end(s, t);
	if (te - s != 1 || !pin_kind[*s])
		return pin_errf(pr, line, e, "access type '%s' is not R or W",
				pin_token(tok, sizeof(tok), s, (size_t)(te - s)));
	kind = pin_kind[*s] - 1u;
	for (s = te; s < t && is_blank(*s); s++)
		;
	if (s == t)
		return pin_errf(pr, line, e, "missing address");
	r = pin_ptr(s, t, &a, &z);
	if (r == 1)
		return pin_errf(pr, line, e, "bad address '%s'",
				pin_token(tok, sizeof(tok), s, (size_t)(t - s)));
	if (r == 2)
		return pin_errf(pr, line, e, "address 0x%s is over %d bits",
				pin_token(tok, sizeof(tok), z, (size_t)(t - z)), VADDR_BITS_MAX);
	if (ip != pr->last_ip) {
		pr->head.rec[(*n)++] = (struct trace_rec){ .addr = ip, .size = PIN_SIZE, .kind = R_IFETCH };
		pr->last_ip = ip;
	}
	pr->head.rec[(*n)++] = (struct trace_rec){ .addr = a, .size = PIN_SIZE, .kind = kind };
	return 0;
}

/*
 * Parse whole lines of [pr->ln.p, pr->ln.end) into the batch until it is full (two
 * records of room are kept: a line gives a fetch and an access) or the region
 * is used up. The region ends with a newline, which is no hex digit and none
 * of the literal bytes tested, so the fast loop stops on it: it never reads
 * past a line's newline (the || tests are in order). After "#eof" every line
 * goes to pin_line(), which allows only blank ones.
 */
static int pin_parse(struct pin_reader *pr, size_t *np, struct err *e)
{
	const unsigned char *p = pr->ln.p, *end = pr->ln.end;
	struct trace_rec *rec = pr->head.rec;
	unsigned long line = pr->line;
	vaddr_t last_ip = pr->last_ip;
	bool after_eof = pr->seen_eof;
	size_t n = *np;
	int ret = 0;

	while (p < end && n + 2 <= TRACE_BATCH) {
		const unsigned char *l = p, *h;
		uint64_t ip = 0, a = 0;
		unsigned v, kind;

		if (unlikely(p[0] != '0' || p[1] != 'x' || after_eof))
			goto slow;
		h = p += 2;
		while ((v = hexv[*p]) != 0) {
			ip = ip << 4 | (v - 1u);
			p++;
		}
		if (unlikely(p == h || p - h > 16 || p[0] != ':' || p[1] != ' ' ||
			     !(kind = pin_kind[p[2]]) || p[3] != ' ' || p[4] != '0' || p[5] != 'x'))
			goto slow;
		h = p += 6;
		while ((v = hexv[*p]) != 0) {
			a = a << 4 | (v - 1u);
			p++;
		}
		if (unlikely(*p != '\n' || p == h || p - h > 16 || (ip | a) >= VADDR_LIMIT))
			goto slow;
		p++;
		line++;
		if (ip != last_ip) {
			rec[n].addr = ip;
			rec[n].size = PIN_SIZE;
			rec[n].kind = R_IFETCH;
			n++;
			last_ip = ip;
		}
		rec[n].addr = a;
		rec[n].size = PIN_SIZE;
		rec[n].kind = kind - 1u;
		n++;
		continue;
slow:
		line++;
		pr->last_ip = last_ip;
		ret = pin_line(pr, line, l, &p, &n, e);
		last_ip = pr->last_ip;
		after_eof = pr->seen_eof;
		if (ret < 0)
			break;
	}
	pr->ln.p = p;
	pr->line = line;
	pr->last_ip = last_ip;
	*np = n;
	return ret;
}

/* The line after the last one parsed has no newline within PIN_MAXLINE bytes. */
static int pin_too_long(struct pin_reader *pr, struct err *e)
{
	return pin_errf(pr, pr->line + 1, e, "line longer than %d bytes", PIN_MAXLINE);
}

/* The next region of whole lines (tio_lines_refill); a line too long is reported here. */
static int pin_refill(struct pin_reader *pr, struct err *e)
{
	int r = tio_lines_refill(pr->io, &pr->ln, e);

	return r == -2 ? pin_too_long(pr, e) : r;
}

static int pin_next(struct trace_reader *tr, struct trace_batch *b, struct err *e)
{
	struct pin_reader *pr = (struct pin_reader *)tr;
	size_t n = 0;
	int ret;

	while (n + 2 <= TRACE_BATCH) {
		if (pr->ln.p == pr->ln.end) {
			if (pr->eof)
				break;
			ret = pin_refill(pr, e);
			if (ret < 0)
				return -1;
			if (!ret)
				pr->eof = true;
			continue;
		}
		if (pin_parse(pr, &n, e) < 0)
			return -1;
	}
	b->recs = pr->head.rec;
	b->n = n;
	b->ev = NULL;
	b->nev = 0;
	return (int)n;
}

static void pin_close(struct trace_reader *tr)
{
	struct pin_reader *pr = (struct pin_reader *)tr;

	tio_close(pr->io);
	trace_reader_free(&pr->head);
}

static const struct trace_ops pin_ops = {
	.next = pin_next,
	.close = pin_close,
};

struct trace_reader *trace_pin_open(struct tio *io, const char *name, struct err *e)
{
	struct pin_reader *pr = trace_reader_alloc(sizeof(*pr), &pin_ops, TF_PIN, name, e);

	if (!pr) {
		tio_close(io);
		return NULL;
	}
	pr->io = io;
	tio_lines_init(&pr->ln);
	pr->last_ip = PIN_NO_IP;
	return &pr->head;
}

/* Is [@s, @t) (no newline, trailing blanks allowed) a pinatrace line or "#eof"? */
static bool pin_probe_line(const unsigned char *s, const unsigned char *t)
{
	const unsigned char *colon, *z;
	uint64_t v;

	while (t > s && is_blank(t[-1]))
		t--;
	if (span_is(s, t, "#eof"))
		return true;
	colon = memchr(s, ':', (size_t)(t - s));
	if (!colon || pin_ptr(s, colon, &v, &z) == 1)
		return false;
	s = colon + 1;
	if (t - s < 3 || s[0] != ' ' || !pin_kind[s[1]] || s[2] != ' ')
		return false;
	return pin_ptr(s + 3, t, &v, &z) != 1;
}

/*
 * Content detection: the first PIN_PROBE_LINES non-blank lines (or as many as
 * the first chunk holds) must all be pinatrace lines ("#eof" included). A
 * line cut by the end of the chunk is not judged unless it is the only one.
 */
#define PIN_PROBE_LINES 16

bool trace_pin_probe(const unsigned char *p, size_t n)
{
	const unsigned char *end = p + n;
	unsigned good = 0;

	while (p < end && good < PIN_PROBE_LINES) {
		const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
		const unsigned char *t = nl ? nl : end, *s = p;

		if (!nl && good)
			break;
		while (s < t && is_blank(*s))
			s++;
		if (s < t) {
			if (!pin_probe_line(p, t))
				return false;
			good++;
		}
		p = t + 1;
	}
	return good > 0;
}
