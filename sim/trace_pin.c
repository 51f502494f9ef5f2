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

#include "trace_text.h"

#define PIN_MAXLINE TIO_MAXLINE /* longest accepted line, without its newline (as lackey) */
#define PIN_SIZE 1       /* pinatrace prints no size */
#define PIN_NO_IP UINT64_MAX /* before the first line: differs from every ip */

/* The kind + 1 of the access letter. */
static const unsigned char pin_kind[256] = { ['R'] = R_LOAD + 1, ['W'] = R_STORE + 1 };

struct pin_reader {
	struct tt_reader tt; /* the stream, the region, the line count (trace_text.h) */
	bool seen_eof;      /* the "#eof" line has been read */
	vaddr_t last_ip;    /* ip of the previous record line */
};

/*
 * A %p value: [@s, @t) is "0x" and hex digits, or "(nil)". Returns 0 and the
 * value, 1 if it is not such a value, 2 if it is 2^57 or more (*@z then
 * points at its first significant digit).
 */
static int pin_ptr(const unsigned char *s, const unsigned char *t, uint64_t *v,
		   const unsigned char **z)
{
	int r;

	if (tt_span_is(s, t, "(nil)")) {
		*v = 0;
		return 0;
	}
	if (t - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return 1;
	r = tt_hex(s + 2, t, v, z);
	return r == 0 && *v >= VADDR_LIMIT ? 2 : r;
}

/*
 * Any line the fast loop did not take, starting at @l (its newline is before
 * the region's end). Appends its records at *@n (room for two is left); sets
 * *@next past the line.
 */
static int pin_line(struct pin_reader *pr, unsigned long line, const unsigned char *l,
		    const unsigned char **next, size_t *n, struct err *e)
{
	const unsigned char *nl = memchr(l, '\n', (size_t)(pr->tt.ln.end - l));
	const unsigned char *t = nl, *colon, *s, *te, *z = NULL;
	uint64_t ip = 0, a = 0;
	unsigned kind;
	char tok[200];
	int r;

	*next = nl + 1;
	if (nl - l > PIN_MAXLINE)
		return tt_errf(&pr->tt, line, e, "line longer than %d bytes", PIN_MAXLINE);
	if (memchr(l, '\0', (size_t)(nl - l)))
		return tt_errf(&pr->tt, line, e, "NUL byte in a text line");
	while (t > l && tt_is_blank(t[-1]))
		t--;
	if (t == l)
		return 0; /* blank */
	if (pr->seen_eof)
		return tt_errf(&pr->tt, line, e, "data after #eof");
	if (tt_span_is(l, t, "#eof")) {
		pr->seen_eof = true;
		return 0;
	}
	colon = memchr(l, ':', (size_t)(t - l));
	if (!colon)
		return tt_errf(&pr->tt, line, e, "unrecognized line");
	r = pin_ptr(l, colon, &ip, &z);
	if (r == 1)
		return tt_errf(&pr->tt, line, e, "bad ip '%s'",
				tt_token(tok, sizeof(tok), l, (size_t)(colon - l)));
	if (r == 2)
		return tt_errf(&pr->tt, line, e, "ip 0x%s is over %d bits",
				tt_token(tok, sizeof(tok), z, (size_t)(colon - z)), VADDR_BITS_MAX);
	s = colon + 1;
	if (s == t || !tt_is_blank(*s))
		return tt_errf(&pr->tt, line, e, "unrecognized line");
	while (s < t && tt_is_blank(*s))
		s++;
	te = tt_tok_end(s, t);
	if (te - s != 1 || !pin_kind[*s])
		return tt_errf(&pr->tt, line, e, "access type '%s' is not R or W",
				tt_token(tok, sizeof(tok), s, (size_t)(te - s)));
	kind = pin_kind[*s] - 1u;
	for (s = te; s < t && tt_is_blank(*s); s++)
		;
	if (s == t)
		return tt_errf(&pr->tt, line, e, "missing address");
	r = pin_ptr(s, t, &a, &z);
	if (r == 1)
		return tt_errf(&pr->tt, line, e, "bad address '%s'",
				tt_token(tok, sizeof(tok), s, (size_t)(t - s)));
	if (r == 2)
		return tt_errf(&pr->tt, line, e, "address 0x%s is over %d bits",
				tt_token(tok, sizeof(tok), z, (size_t)(t - z)), VADDR_BITS_MAX);
	if (ip != pr->last_ip) {
		pr->tt.head.rec[(*n)++] = (struct trace_rec){ .addr = ip, .size = PIN_SIZE, .kind = R_IFETCH };
		pr->last_ip = ip;
	}
	pr->tt.head.rec[(*n)++] = (struct trace_rec){ .addr = a, .size = PIN_SIZE, .kind = kind };
	return 0;
}

/*
 * Parse whole lines of [pr->tt.ln.p, pr->tt.ln.end) into the batch until it is full (two
 * records of room are kept: a line gives a fetch and an access) or the region
 * is used up. The region ends with a newline, which is no hex digit and none
 * of the literal bytes tested, so the fast loop stops on it: it never reads
 * past a line's newline (the || tests are in order). After "#eof" every line
 * goes to pin_line(), which allows only blank ones.
 */
static int pin_parse(struct tt_reader *t, size_t *np, struct err *e)
{
	struct pin_reader *pr = (struct pin_reader *)t;
	const unsigned char *p = pr->tt.ln.p, *end = pr->tt.ln.end;
	struct trace_rec *rec = pr->tt.head.rec;
	unsigned long line = pr->tt.line;
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
		while ((v = tt_hexv[*p]) != 0) {
			ip = ip << 4 | (v - 1u);
			p++;
		}
		if (unlikely(p == h || p - h > 16 || p[0] != ':' || p[1] != ' ' ||
			     !(kind = pin_kind[p[2]]) || p[3] != ' ' || p[4] != '0' || p[5] != 'x'))
			goto slow;
		h = p += 6;
		while ((v = tt_hexv[*p]) != 0) {
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
	pr->tt.ln.p = p;
	pr->tt.line = line;
	pr->last_ip = last_ip;
	*np = n;
	return ret;
}

static int pin_next(struct trace_reader *tr, struct trace_batch *b, struct err *e)
{
	return tt_fill((struct tt_reader *)tr, 2, pin_parse, b, e);
}

static const struct trace_ops pin_ops = {
	.next = pin_next,
	.close = tt_reader_close,
};

struct trace_reader *trace_pin_open(struct tio *io, const char *name, struct err *e)
{
	struct pin_reader *pr = tt_reader_open(sizeof(*pr), &pin_ops, TF_PIN, io, name, e);

	if (!pr)
		return NULL;
	pr->last_ip = PIN_NO_IP;
	return &pr->tt.head;
}

/* Is [@s, @t) (no newline, trailing blanks allowed) a pinatrace line or "#eof"? */
static bool pin_probe_line(const unsigned char *s, const unsigned char *t)
{
	const unsigned char *colon, *z;
	uint64_t v;

	while (t > s && tt_is_blank(t[-1]))
		t--;
	if (tt_span_is(s, t, "#eof"))
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
	return tt_probe_lines(p, n, PIN_PROBE_LINES, pin_probe_line);
}
