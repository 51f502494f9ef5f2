/*
 * trace_text.h - what the three text readers (trace_lackey.c, trace_pin.c,
 * trace_din.c) share: their common head over a stream of whole lines, the
 * batch loop, error messages that quote bad input, blanks and tokens, hex
 * numbers and the content probe over the first lines. The prefix tt_ is
 * "trace text" (as tio_ is trace_io). Internal to the trace layer.
 *
 * What stays in each reader is its own syntax: the fast loop that parses the
 * common line straight into the batch, and the careful per-line path.
 */
#ifndef MMUSIM_TRACE_TEXT_H
#define MMUSIM_TRACE_TEXT_H

#include "trace_io.h"

/*
 * tt_hexv[c] - 1 is the value of hex digit c (0-9, a-f, A-F); 0 for any other
 * byte, so a fast loop runs `while ((v = tt_hexv[*p]) != 0)` and stops on
 * the newline that ends every region.
 */
extern const unsigned char tt_hexv[256];

/* The common head of a text reader; readers embed it first. */
struct tt_reader {
	struct trace_reader head;
	struct tio *io;
	struct tio_lines ln; /* the region being parsed (trace_io.h) */
	unsigned long line;  /* lines consumed so far */
	bool eof;            /* the stream is used up */
};

/*
 * Parse lines of [t->ln.p, t->ln.end) into t->head.rec from *@n on, until the
 * region is used up or fewer than the reader's room records are left; advance
 * t->ln.p and t->line, update *@n. Returns 0, or -1 with @e set.
 */
typedef int (*tt_parse_fn)(struct tt_reader *t, size_t *n, struct err *e);

/*
 * For readers' open: trace_reader_alloc() of @size bytes (its struct
 * tt_reader first) over @io, with an empty region. On failure closes @io and
 * returns NULL with @e set.
 */
void *tt_reader_open(size_t size, const struct trace_ops *ops, enum trace_format format,
		     struct tio *io, const char *name, struct err *e);

/* For readers' close (a trace_ops close as it is): close the stream, free the reader. */
void tt_reader_close(struct trace_reader *r);

/*
 * One batch into @b (records only: no events): refill regions and call
 * @parse until @room more records would not fit (a line of the format gives
 * at most @room) or the stream ends. Returns the number of records (0 at the
 * end), or -1 with @e set (a stream error, a line over TIO_MAXLINE bytes, or
 * what @parse reported).
 */
int tt_fill(struct tt_reader *t, size_t room, tt_parse_fn parse, struct trace_batch *b,
	    struct err *e);

/*
 * "NAME:LINE: message" into @e (which may be NULL), unless the decompressor
 * failed first: garbage from a corrupt stream is the stream's fault, and then
 * @e says so. Returns -1.
 */
int tt_errf(struct tt_reader *t, unsigned long line, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), cold, noinline));
int tt_verrf(struct tt_reader *t, unsigned long line, struct err *e, const char *fmt, va_list ap)
	__attribute__((cold, noinline));

/*
 * [@s, @s + @len) quoted for a message into @buf (@size bytes, at least 16):
 * printable ASCII as is, other bytes (and the backslash) as \xNN, at most
 * about 40 bytes then "...". Returns @buf.
 */
const char *tt_token(char *buf, size_t size, const unsigned char *s, size_t len);

/* A blank between fields: space, tab, or the CR of a CRLF line. */
static inline bool tt_is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The end of the token at @s: the first blank, or @t. */
static inline const unsigned char *tt_tok_end(const unsigned char *s, const unsigned char *t)
{
	while (s < t && !tt_is_blank(*s))
		s++;
	return s;
}

/* Does [@p, @end) start with the string @lit? */
bool tt_starts(const unsigned char *p, const unsigned char *end, const char *lit);

/* Is [@s, @t) exactly the string @lit? */
bool tt_span_is(const unsigned char *s, const unsigned char *t, const char *lit);

/*
 * The hex digits [@s, @t), no prefix. Returns 0 and *@v; 1 if the span is
 * empty or holds a byte that is no hex digit; 2 if the value is 2^64 or more.
 * Unless 1, *@z points at the first significant digit (for messages).
 */
int tt_hex(const unsigned char *s, const unsigned char *t, uint64_t *v,
	   const unsigned char **z);

/*
 * Content detection over the first bytes [@p, @p + @n) as tio_peek() gives
 * them: the first @max_lines non-blank lines (or as many as there are) must
 * all satisfy @line_ok(line start, line end without the newline). A line cut
 * by the end of the bytes is judged only if no line before it was. False if
 * there is no non-blank line.
 */
bool tt_probe_lines(const unsigned char *p, size_t n, unsigned max_lines,
		    bool (*line_ok)(const unsigned char *s, const unsigned char *t));

#endif
