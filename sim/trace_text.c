/*
 * trace_text.c - the pieces the text readers (lackey, pin, din) share
 * (trace_text.h): the batch loop over regions of whole lines, errors that
 * name the line and quote the bad bytes, tokens, hex numbers, the probe.
 *
 * Speed: only the hex table is used per byte, and it is read by the readers'
 * own fast loops; everything else here runs once per region or batch, or on
 * the slow and error paths.
 */
#include <stdio.h>
#include <string.h>

#include "trace_text.h"

#define HX(c, v) [c] = (v) + 1
const unsigned char tt_hexv[256] = {
	HX('0', 0), HX('1', 1), HX('2', 2), HX('3', 3), HX('4', 4), HX('5', 5),
	HX('6', 6), HX('7', 7), HX('8', 8), HX('9', 9), HX('a', 10), HX('b', 11),
	HX('c', 12), HX('d', 13), HX('e', 14), HX('f', 15), HX('A', 10), HX('B', 11),
	HX('C', 12), HX('D', 13), HX('E', 14), HX('F', 15),
};
#undef HX

void *tt_reader_open(size_t size, const struct trace_ops *ops, enum trace_format format,
		     struct tio *io, const char *name, struct err *e)
{
	struct tt_reader *t = trace_reader_alloc(size, ops, format, name, e);

	if (!t) {
		tio_close(io);
		return NULL;
	}
	t->io = io;
	tio_lines_init(&t->ln);
	return t;
}

void tt_reader_close(struct trace_reader *r)
{
	tio_close(((struct tt_reader *)r)->io);
	trace_reader_free(r);
}

int tt_verrf(struct tt_reader *t, unsigned long line, struct err *e, const char *fmt, va_list ap)
{
	char msg[sizeof(e->msg)];

	if (tio_stream_error(t->io, e) || !e)
		return -1;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	return err_set(e, t->head.name, line, 0, "%s", msg);
}

int tt_errf(struct tt_reader *t, unsigned long line, struct err *e, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tt_verrf(t, line, e, fmt, ap);
	va_end(ap);
	return r;
}

int tt_fill(struct tt_reader *t, size_t room, tt_parse_fn parse, struct trace_batch *b,
	    struct err *e)
{
	size_t n = 0;
	int r;

	while (n + room <= TRACE_BATCH) {
		if (t->ln.p == t->ln.end) {
			if (t->eof)
				break;
			r = tio_lines_refill(t->io, &t->ln, e);
			if (r == -2) /* the line after the last one parsed is too long */
				return tt_errf(t, t->line + 1, e, "line longer than %d bytes",
					       TIO_MAXLINE);
			if (r < 0)
				return -1;
			if (!r)
				t->eof = true;
			continue;
		}
		if (parse(t, &n, e) < 0)
			return -1;
	}
	b->recs = t->head.rec;
	b->n = n;
	b->ev = NULL;
	b->nev = 0;
	return (int)n;
}

const char *tt_token(char *buf, size_t size, const unsigned char *s, size_t len)
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

bool tt_starts(const unsigned char *p, const unsigned char *end, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(end - p) >= n && !memcmp(p, lit, n);
}

bool tt_span_is(const unsigned char *s, const unsigned char *t, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(t - s) == n && !memcmp(s, lit, n);
}

int tt_hex(const unsigned char *s, const unsigned char *t, uint64_t *v,
	   const unsigned char **z)
{
	uint64_t a = 0;

	if (s == t)
		return 1;
	for (const unsigned char *q = s; q < t; q++)
		if (!tt_hexv[*q])
			return 1;
	while (s < t - 1 && *s == '0')
		s++;
	*z = s;
	if (t - s > 16)
		return 2;
	for (; s < t; s++)
		a = a << 4 | (tt_hexv[*s] - 1u);
	*v = a;
	return 0;
}

bool tt_probe_lines(const unsigned char *p, size_t n, unsigned max_lines,
		    bool (*line_ok)(const unsigned char *s, const unsigned char *t))
{
	const unsigned char *end = p + n;
	unsigned good = 0;

	while (p < end && good < max_lines) {
		const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
		const unsigned char *t = nl ? nl : end, *s = p;

		if (!nl && good)
			break;
		while (s < t && tt_is_blank(*s))
			s++;
		if (s < t) {
			if (!line_ok(p, t))
				return false;
			good++;
		}
		p = t + 1;
	}
	return good > 0;
}
