/*
 * trace_lackey.c - reader for Valgrind lackey traces (`--tool=lackey
 * --trace-mem=yes`), optionally interleaved with `--trace-syscalls=yes` lines
 * whose address-space changes become OS events.
 *
 * Record lines, exactly as lackey/lk_main.c prints them:
 *   "I  %08lx,%lu"  instruction fetch      -> R_IFETCH
 *   " L %08lx,%lu"  load                   -> R_LOAD
 *   " S %08lx,%lu"  store                  -> R_STORE
 *   " M %08lx,%lu"  modify (load + store)  -> R_MODIFY
 * Skipped: blank lines, Valgrind's "==pid==" and "--pid--" messages, and the
 * " --> [pre-fail] ..." tail that Valgrind prints on a line of its own when a
 * syscall wrapper broke the line (seen for unimplemented syscalls).
 * SYSCALL lines (coregrind/m_syswrap/syswrap-main.c prints "SYSCALL[pid,tid](nr)
 * ", then the wrapper's "sys_NAME ( args )", then "[sync] --> RESULT",
 * " --> [pre-success] RESULT", " --> [pre-fail] RESULT" or " --> [async] ...",
 * and for async calls a later "SYSCALL[pid,tid](nr) ... [async] --> RESULT";
 * RESULT is "Success(0x..)" or "Failure(0x..)", m_libcprint.c): sys_mmap,
 * sys_munmap, sys_mprotect, sys_madvise, sys_brk and sys_mremap become events
 * when they succeed, at the line that carries their result; other syscalls
 * and failed calls are dropped. traces/README.md is the user-facing summary.
 *
 * Speed: the common record line ("X  " + 8..14 address digits + ",D\n" or
 * ",DD\n") is parsed by one tight loop straight into the batch,
 * lk_fast_run(): the prefix checked as one 24-bit word against a table by its
 * second byte, the address's digits classified and converted as one SSE2
 * vector, lk_hex16() (without SSE2 the 8 digits lackey always prints as one
 * 64-bit word, further digits through a 256-entry table), the comma, size and
 * newline as one 32-bit word; the loop checks only the record count, having
 * been given no more records than the region has room for. No library call, no
 * allocation. Anything it does not take falls to a careful per-line path
 * that either accepts the line (skips, syscalls, records in other spellings,
 * 15 or more address digits, 3-digit sizes) or names the error.
 * Measured (callgrind, `mmusim trace info`, parse only): the miss-heavy GUPS
 * bench trace (8 and 12 digits) 91 -> 59 instructions a line in lk_parse()
 * and its loop; tests/check_lackey_parse.c holds the fast path to the slow one.
 * Lines are limited to LK_MAXLINE bytes, so binary garbage without newlines
 * stops with an error after one chunk instead of being buffered.
 *
 * Left out: lackey's other outputs (--trace-superblocks, the event counts);
 * they are not memory references. A syscall still pending when the trace
 * ends (the program was killed inside it) is dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_text.h"

#if defined(__SSE2__) && !defined(LK_NO_SSE2)
#define LK_SSE2
#include <emmintrin.h>
#endif

#define LK_MAXLINE TIO_MAXLINE     /* longest accepted line, without its newline */
#define LK_SIZE_MAX 65536u  /* largest reference size accepted (a 64 KiB access) */

/* The kind + 1 of a data line " X ", by its second byte. */
static const unsigned char data_kind[256] = {
	['L'] = R_LOAD + 1, ['S'] = R_STORE + 1, ['M'] = R_MODIFY + 1,
};

/* The syscalls that become events: name as Valgrind prints it, argument count. */
static const struct {
	const char *name;
	enum ev_kind kind;
	unsigned min_args, max_args;
} lk_syscalls[] = {
	{ "sys_mmap", EV_MMAP, 6, 6 },
	{ "sys_munmap", EV_MUNMAP, 2, 2 },
	{ "sys_mprotect", EV_MPROTECT, 3, 3 },
	{ "sys_madvise", EV_MADVISE, 3, 3 },
	{ "sys_brk", EV_BRK, 1, 1 },
	{ "sys_mremap", EV_MREMAP, 4, 5 }, /* the 5th, new_address, with MREMAP_FIXED */
};

/* An [async] call of one of those, waiting for its result line. */
struct lk_pending {
	uint64_t pid, tid, nr;
	struct os_event ev;
	bool used; /* the slot of the hash table holds a call */
};

struct lackey_reader {
	struct tt_reader tt; /* the stream, the region, the line count (trace_text.h) */
	struct lk_pending *pend; /* open addressing by (pid, tid), linear probing */
	size_t npend, cap_pend;  /* calls held; slots (0 or a power of two) */
	size_t nev; /* events in the batch being filled */
	struct os_event ev[TRACE_BATCH];
};

/* What the per-line slow path needs: the reader, the line, the batch fill. */
struct lk_ctx {
	struct lackey_reader *lr;
	struct err *e;
	unsigned long line; /* 1-based number of the line at hand */
	size_t *n, *nev;
};

static int lk_errf(struct lk_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), cold, noinline));

/* Fill the error for the line at hand: "NAME:LINE: message". Returns -1. */
static int lk_errf(struct lk_ctx *c, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tt_verrf(&c->lr->tt, c->line, c->e, fmt, ap);
	va_end(ap);
	return r;
}

/*
 * A record line that the fast loop refused: [@l, @t) with trailing blanks
 * removed, @kind known from its prefix. Accept it or name what is wrong.
 */
static int lk_record_slow(struct lk_ctx *c, const unsigned char *l, const unsigned char *t,
			  unsigned kind)
{
	const unsigned char *h = l + 3, *q = h, *z, *sd;
	char tok[200];
	uint64_t a = 0, s = 0;

	while (q < t && tt_hexv[*q])
		q++;
	if (q == h || (q < t && *q != ',')) {
		const unsigned char *te = h;

		while (te < t && *te != ',' && !tt_is_blank(*te))
			te++;
		return lk_errf(c, "bad hex address '%s'", tt_token(tok, sizeof(tok), h, (size_t)(te - h)));
	}
	if (q == t)
		return lk_errf(c, "missing size");
	if (tt_hex(h, q, &a, &z) || a >= VADDR_LIMIT)
		return lk_errf(c, "address 0x%s is over %d bits",
			       tt_token(tok, sizeof(tok), z, (size_t)(q - z)), VADDR_BITS_MAX);
	sd = ++q; /* after the comma */
	while (q < t && *q >= '0' && *q <= '9')
		q++;
	if (q == sd && q == t)
		return lk_errf(c, "missing size");
	if (q == sd || q < t)
		return lk_errf(c, "bad size '%s'", tt_token(tok, sizeof(tok), sd, (size_t)(t - sd)));
	for (z = sd; z < q - 1 && *z == '0'; z++)
		;
	for (const unsigned char *x = z; x < q && x - z < 7; x++)
		s = s * 10 + (uint64_t)(*x - '0');
	if (q - z > 7 || s > LK_SIZE_MAX)
		return lk_errf(c, "size %s is over %u", tt_token(tok, sizeof(tok), z, (size_t)(q - z)),
			       LK_SIZE_MAX);
	if (!s)
		return lk_errf(c, "size 0");
	c->lr->tt.head.rec[*c->n] = (struct trace_rec){ .addr = a, .size = (uint32_t)s, .kind = kind };
	(*c->n)++;
	return 0;
}

/* A cursor over one line, for the syscall syntax. */
struct lk_cur {
	const unsigned char *p, *end;
};

static bool cur_lit(struct lk_cur *k, const char *s)
{
	if (!tt_starts(k->p, k->end, s))
		return false;
	k->p += strlen(s);
	return true;
}

static void cur_ws(struct lk_cur *k)
{
	while (k->p < k->end && *k->p == ' ')
		k->p++;
}

/* Unsigned decimal, at least one digit, no overflow. */
static bool cur_dec(struct lk_cur *k, uint64_t *v)
{
	const unsigned char *s = k->p;

	*v = 0;
	while (k->p < k->end && *k->p >= '0' && *k->p <= '9') {
		unsigned d = (unsigned)(*k->p - '0');

		if (*v > (UINT64_MAX - d) / 10)
			return false;
		*v = *v * 10 + d;
		k->p++;
	}
	return k->p > s;
}

/* Hex digits (the "0x" already taken), at least one, no overflow. */
static bool cur_hex(struct lk_cur *k, uint64_t *v)
{
	const unsigned char *s = k->p;

	*v = 0;
	while (k->p < k->end && tt_hexv[*k->p]) {
		if (*v >> 60)
			return false;
		*v = *v << 4 | (tt_hexv[*k->p] - 1u);
		k->p++;
	}
	return k->p > s;
}

/* An argument as Valgrind prints it: %lu, %ld, %#lx or %p; negatives wrap as in a register. */
static bool cur_num(struct lk_cur *k, uint64_t *v)
{
	bool neg = cur_lit(k, "-");
	bool ok = cur_lit(k, "0x") ? cur_hex(k, v) : cur_dec(k, v);

	if (neg)
		*v = -*v;
	return ok;
}

/* "Success(0x..)" (1, *@v = result) or "Failure(0x..)" (0); -1 if neither. */
static int cur_result(struct lk_cur *k, uint64_t *v)
{
	int ok;

	cur_ws(k);
	if (cur_lit(k, "Success(0x"))
		ok = 1;
	else if (cur_lit(k, "Failure(0x"))
		ok = 0;
	else
		return -1;
	if (!cur_hex(k, v) || !cur_lit(k, ")"))
		return -1;
	cur_ws(k);
	return k->p == k->end ? ok : -1;
}

/* Append @ev, completed with the call's @result, to the batch. */
static void lk_emit(struct lk_ctx *c, const struct os_event *ev, uint64_t result)
{
	struct lackey_reader *lr = c->lr;
	struct os_event *o = &lr->ev[*c->nev];

	*o = *ev;
	if (o->kind == EV_MMAP || o->kind == EV_BRK)
		o->addr = result;
	else if (o->kind == EV_MREMAP)
		o->new_addr = result;
	lr->tt.head.rec[*c->n] = (struct trace_rec){ .addr = o->addr, .size = (uint32_t)*c->nev,
					     .kind = R_EVENT };
	(*c->n)++;
	(*c->nev)++;
}

/*
 * Pending calls live in a hash table, one per thread: a list searched per
 * SYSCALL line made a trace of many threads' unfinished calls quadratic
 * (200,000 of them: 35 s; found writing the fuzz harnesses).
 */
static size_t lk_pend_slot(const struct lackey_reader *lr, uint64_t pid, uint64_t tid)
{
	/* multiplicative hashing (Knuth, TAOCP 6.4) by 2^64 / phi, high bits mixed down */
	uint64_t h = (pid * 31 + tid) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h ^ h >> 32) & (lr->cap_pend - 1);
}

static struct lk_pending *lk_find_pending(struct lackey_reader *lr, uint64_t pid, uint64_t tid)
{
	size_t i;

	if (!lr->npend)
		return NULL;
	for (i = lk_pend_slot(lr, pid, tid); lr->pend[i].used; i = (i + 1) & (lr->cap_pend - 1))
		if (lr->pend[i].pid == pid && lr->pend[i].tid == tid)
			return &lr->pend[i];
	return NULL;
}

/* Empty @pd's slot and move back the calls probed past it (Knuth's Algorithm R). */
static void lk_drop_pending(struct lackey_reader *lr, struct lk_pending *pd)
{
	size_t mask = lr->cap_pend - 1, i = (size_t)(pd - lr->pend), j = i;

	lr->pend[i].used = false;
	lr->npend--;
	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!lr->pend[j].used)
			return;
		k = lk_pend_slot(lr, lr->pend[j].pid, lr->pend[j].tid);
		/* j stays if its home k lies cyclically in (i, j] */
		if (i <= j ? i < k && k <= j : i < k || k <= j)
			continue;
		lr->pend[i] = lr->pend[j];
		lr->pend[j].used = false;
		i = j;
	}
}

/* The free slot for a call of (@pid, @tid), not in the table. */
static struct lk_pending *lk_pend_free_slot(struct lackey_reader *lr, uint64_t pid, uint64_t tid)
{
	size_t i = lk_pend_slot(lr, pid, tid);

	while (lr->pend[i].used)
		i = (i + 1) & (lr->cap_pend - 1);
	return &lr->pend[i];
}

static int lk_add_pending(struct lk_ctx *c, uint64_t pid, uint64_t tid, uint64_t nr,
			  const struct os_event *ev)
{
	struct lackey_reader *lr = c->lr;
	struct lk_pending *pd = lk_find_pending(lr, pid, tid);

	if (!pd) {
		if (2 * (lr->npend + 1) > lr->cap_pend) { /* at most half full */
			size_t cap = lr->cap_pend ? 2 * lr->cap_pend : 16, old = lr->cap_pend;
			struct lk_pending *op = lr->pend, *np = calloc(cap, sizeof(*np));

			if (!np)
				return lk_errf(c, "out of memory");
			lr->pend = np;
			lr->cap_pend = cap;
			for (size_t i = 0; i < old; i++)
				if (op[i].used)
					*lk_pend_free_slot(lr, op[i].pid, op[i].tid) = op[i];
			free(op);
		}
		pd = lk_pend_free_slot(lr, pid, tid);
		lr->npend++;
	}
	*pd = (struct lk_pending){ .pid = pid, .tid = tid, .nr = nr, .ev = *ev, .used = true };
	return 0;
}

/* A "SYSCALL[pid,tid](nr) ..." line, [@l, @t) without trailing blanks. */
static int lk_syscall(struct lk_ctx *c, const unsigned char *l, const unsigned char *t)
{
	struct lk_cur k = { l, t };
	const unsigned char *name;
	uint64_t pid, tid, nr, arg[6] = { 0 }, res;
	unsigned nargs = 0, i;
	struct os_event ev;
	int ok;

	if (!cur_lit(&k, "SYSCALL[") || !cur_dec(&k, &pid) || !cur_lit(&k, ",") ||
	    !cur_dec(&k, &tid) || !cur_lit(&k, "](") || (cur_ws(&k), !cur_dec(&k, &nr)) ||
	    !cur_lit(&k, ")"))
		return lk_errf(c, "malformed SYSCALL line");
	cur_ws(&k);
	if (cur_lit(&k, "... [async] --> ")) {
		struct lk_pending *pd = lk_find_pending(c->lr, pid, tid);

		if (!pd)
			return 0; /* the result of a syscall we do not follow */
		ok = cur_result(&k, &res);
		if (ok < 0)
			return lk_errf(c, "bad result of sys_%s", ev_kind_name[pd->ev.kind]);
		if (ok && pd->nr == nr)
			lk_emit(c, &pd->ev, res);
		lk_drop_pending(c->lr, pd);
		return 0;
	}
	name = k.p;
	while (k.p < k.end && (*k.p == '_' || (*k.p >= 'a' && *k.p <= 'z') ||
			       (*k.p >= 'A' && *k.p <= 'Z') || (*k.p >= '0' && *k.p <= '9')))
		k.p++;
	if (k.p == name)
		return lk_errf(c, "malformed SYSCALL line");
	for (i = 0; i < ARRAY_SIZE(lk_syscalls); i++)
		if (strlen(lk_syscalls[i].name) == (size_t)(k.p - name) &&
		    !memcmp(lk_syscalls[i].name, name, (size_t)(k.p - name)))
			break;
	if (i == ARRAY_SIZE(lk_syscalls))
		return 0; /* read, openat, ...: not an address-space change */

	cur_ws(&k);
	if (!cur_lit(&k, "("))
		goto bad_args;
	cur_ws(&k);
	if (!cur_lit(&k, ")")) {
		for (;;) {
			if (nargs == ARRAY_SIZE(arg) || !cur_num(&k, &arg[nargs++]))
				goto bad_args;
			cur_ws(&k);
			if (cur_lit(&k, ")"))
				break;
			if (!cur_lit(&k, ","))
				goto bad_args;
			cur_ws(&k);
		}
	}
	if (nargs < lk_syscalls[i].min_args || nargs > lk_syscalls[i].max_args)
		goto bad_args;

	ev = (struct os_event){ .kind = lk_syscalls[i].kind, .line = c->line };
	switch (ev.kind) {
	case EV_MMAP: /* addr, len, prot, flags, fd, offset; addr comes from the result */
		ev.new_addr = arg[0]; /* the hint */
		ev.len = arg[1];
		ev.prot = (uint32_t)arg[2];
		ev.flags = arg[3];
		ev.fd = (int32_t)(uint32_t)arg[4]; /* an int: 4294967295 is -1 */
		ev.off = arg[5]; /* the file offset: vma->vm_pgoff (thp_vma_suitable_order()) */
		break;
	case EV_MUNMAP:
		ev.addr = arg[0];
		ev.len = arg[1];
		break;
	case EV_MPROTECT:
		ev.addr = arg[0];
		ev.len = arg[1];
		ev.prot = (uint32_t)arg[2];
		break;
	case EV_MADVISE:
		ev.addr = arg[0];
		ev.len = arg[1];
		ev.advice = arg[2];
		break;
	case EV_BRK:
		break;
	case EV_MREMAP:
		ev.addr = arg[0];
		ev.len = arg[1];
		ev.new_len = arg[2];
		ev.flags = arg[3];
		break;
	default:
		BUG_ON(1);
	}

	cur_ws(&k);
	if (cur_lit(&k, "--> [async] ...")) {
		cur_ws(&k);
		if (k.p != k.end)
			goto bad_result;
		return lk_add_pending(c, pid, tid, nr, &ev);
	}
	if (!cur_lit(&k, "[sync] -->") && !cur_lit(&k, "--> [pre-success]") &&
	    !cur_lit(&k, "--> [pre-fail]"))
		goto bad_result;
	ok = cur_result(&k, &res);
	if (ok < 0)
		goto bad_result;
	if (ok)
		lk_emit(c, &ev, res);
	return 0;

bad_args:
	return lk_errf(c, "bad arguments to %s", lk_syscalls[i].name);
bad_result:
	return lk_errf(c, "bad result of %s", lk_syscalls[i].name);
}

/*
 * Any line the fast loop did not take, starting at @l (its newline is before
 * the region's end). Sets *@next past the line.
 */
static int lk_line(struct lk_ctx *c, const unsigned char *l, const unsigned char **next)
{
	const unsigned char *nl = memchr(l, '\n', (size_t)(c->lr->tt.ln.end - l));
	const unsigned char *t = nl, *s;
	unsigned kind;

	*next = nl + 1;
	if (nl - l > LK_MAXLINE)
		return lk_errf(c, "line longer than %d bytes", LK_MAXLINE);
	while (t > l && tt_is_blank(t[-1]))
		t--;
	if (t == l)
		return 0; /* blank */
	if (tt_starts(l, t, "==") || tt_starts(l, t, "--"))
		return 0; /* Valgrind's ==pid== and --pid-- messages */
	for (s = l; s < t && *s == ' '; s++)
		;
	if (tt_starts(s, t, "--> ["))
		return 0; /* the tail of a SYSCALL line that the wrapper broke */
	if (memchr(l, '\0', (size_t)(t - l)))
		return lk_errf(c, "unrecognized line");
	if (tt_starts(l, t, "SYSCALL["))
		return lk_syscall(c, l, t);
	if (tt_starts(l, t, "I  "))
		kind = R_IFETCH;
	else if (t - l >= 3 && l[0] == ' ' && data_kind[l[1]] && l[2] == ' ')
		kind = data_kind[l[1]] - 1u;
	else
		return lk_errf(c, "unrecognized line");
	return lk_record_slow(c, l, t, kind);
}

/*
 * Value of the 8 hex digits in @w (loaded little-endian: the first, most
 * significant digit in the lowest byte); only meaningful if lk_is_hex8(@w).
 */
static inline uint64_t lk_hex8(uint64_t w)
{
	/* '0'-'9' -> low nibble; 'a'-'f' and 'A'-'F' (bit 6 set) -> low nibble + 9 */
	w = (w & 0x0f0f0f0f0f0f0f0fULL) + 9 * ((w >> 6) & 0x0101010101010101ULL);
	w = __builtin_bswap64(w); /* byte b now has weight 16^b */
	w = (w | w >> 4) & 0x00ff00ff00ff00ffULL;
	w = (w | w >> 8) & 0x0000ffff0000ffffULL;
	return (w | w >> 16) & 0xffffffffULL;
}

/*
 * Bit 7 of each byte of @x set iff that byte is in [lo, hi]. Bytes >= 0x80
 * are never in range (and may disturb the byte above them, which does not
 * matter to lk_is_hex8(): it rejects the word either way).
 */
static inline uint64_t lk_bytes_in(uint64_t x, unsigned lo, unsigned hi)
{
	const uint64_t ones = 0x0101010101010101ULL;

	return (x + ones * (0x80 - lo)) & ~(x + ones * (0x7f - hi)) & ~x & ones * 0x80;
}

/* Are all 8 bytes of @w hex digits? */
static inline bool lk_is_hex8(uint64_t w)
{
	return (lk_bytes_in(w, '0', '9') | lk_bytes_in(w | 0x2020202020202020ULL, 'a', 'f')) ==
	       0x8080808080808080ULL;
}

#ifdef LK_SSE2
/*
 * The hex digits at @h (the run of them, at most 16) as a number, and in *@k how
 * many there are (0..16). Reads 16 bytes at @h (TIO_TAILROOM covers them); the
 * bytes after the run do not matter. SSE2 (the x86-64 baseline): a byte is in a
 * range [lo, hi] iff, moved by 0x80 - lo, it compares (signed) below
 * -0x80 + hi - lo + 1; each byte becomes (byte & 15) + 9 if above '9' (its nibble
 * for a hex digit, at most 24 for anything else), pairs of those are packed into
 * bytes, the first digit the most significant, and the shift drops the nibbles
 * after the run. A value above 15 spoils only its own byte of the result, so
 * only the byte right after an odd run matters: in a line the fast path takes
 * it is the comma, 12.
 */
static inline uint64_t lk_hex16(const unsigned char *h, unsigned *k)
{
	__m128i v = _mm_loadu_si128((const __m128i *)h);
	__m128i dig = _mm_cmpgt_epi8(_mm_set1_epi8((char)(-0x80 + 10)),
				     _mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '0'))));
	__m128i let = _mm_cmpgt_epi8(_mm_set1_epi8((char)(-0x80 + 6)),
				     _mm_add_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)),
						  _mm_set1_epi8((char)(0x80 - 'a'))));
	/* the first byte that is not a digit: bits 16.. of the complement are set */
	unsigned n = (unsigned)__builtin_ctz(~(unsigned)_mm_movemask_epi8(_mm_or_si128(dig, let)));
	__m128i nib = _mm_add_epi8(_mm_and_si128(v, _mm_set1_epi8(0x0f)),
				   _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('9')), _mm_set1_epi8(9)));
	/* 16-bit lane j holds digits 2j (low byte) and 2j + 1: into one byte, digit 2j high */
	__m128i pair = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(nib, 4), _mm_srli_epi16(nib, 8)),
				     _mm_set1_epi16(0x00ff));
	uint64_t x = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pair, pair));

	*k = n;
	/* the first pair is in the low byte: swap, then drop the nibbles after the run */
	return __builtin_bswap64(x) >> ((0u - 4 * n) & 63); /* 64 - 4n, 0 for 16 */
}
#endif

/* The 3-byte prefix of a record line (little-endian), by its second byte. */
#define LK_PRE(a, b) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)' ' << 16)
static const uint32_t lk_prefix[256] = {
	[0] = ~0u, /* "\0\0\0" must not match the zeros of the other entries */
	[' '] = LK_PRE('I', ' '), ['L'] = LK_PRE(' ', 'L'), ['S'] = LK_PRE(' ', 'S'),
	['M'] = LK_PRE(' ', 'M'),
};
#undef LK_PRE
/* ... and its kind */
static const unsigned char lk_prefix_kind[256] = {
	[' '] = R_IFETCH, ['L'] = R_LOAD, ['S'] = R_STORE, ['M'] = R_MODIFY,
};

/* The longest line the fast path takes: "I  " + 14 digits + ",NN\n". */
#define LK_FAST_MAXLINE 21

/*
 * One record line at @p, the common shape: 8 to 14 address digits (lackey
 * prints %08lx; a user address has at most 14), a size of 1 or 2 digits, the
 * newline right after. Stores it in *@r and returns the next line, or NULL for
 * any other line (also a longer address, which may still be valid: the slow
 * path decides; 14 digits are below VADDR_LIMIT). Reads [@p, @p + 21), all
 * before the region's end + TIO_TAILROOM; only bytes up to the line's newline
 * decide anything.
 */
static inline __attribute__((always_inline)) const unsigned char *
lk_fast_line(const unsigned char *p, struct trace_rec *r)
{
	uint32_t w, u;
	uint64_t a;
	unsigned b1 = p[1], s0, s1;
	const unsigned char *c;

	memcpy(&w, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap32(w);
#endif
	if (unlikely((w & 0xffffff) != lk_prefix[b1]))
		return NULL;
#ifdef LK_SSE2
	/*
	 * The 16 bytes after "X  " classified at once, the digits (the run before
	 * the first non-digit, which must be the comma) made the address by
	 * lk_hex16(). The miss-heavy bench trace's 12-digit addresses took a table
	 * lookup a digit past the 8th: 123 -> 87 instructions a line (callgrind;
	 * 59 since, see the top).
	 */
	{
		unsigned k;

		a = lk_hex16(p + 3, &k);
		if (unlikely(k - 8 > 6))
			return NULL;
		c = p + 3 + k;
	}
#else
	{
		/*
		 * Without SSE2: the 8 digits lackey always prints as one 64-bit
		 * word, the rest (4 more for a stack address) one by one. Measured
		 * on the validation trace: 1.6x faster than a byte loop for the
		 * whole address.
		 */
		uint64_t x;
		unsigned d;

		memcpy(&x, p + 3, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		x = __builtin_bswap64(x); /* the first digit in the low byte */
#endif
		if (unlikely(!lk_is_hex8(x)))
			return NULL;
		a = lk_hex8(x);
		c = p + 11;
		while ((d = tt_hexv[*c] - 1u) < 16 && c < p + 17) {
			a = a << 4 | d;
			c++;
		}
	}
#endif
	/*
	 * Sizes are 1 or 2 digits but for rare wide accesses (slow path); 0 is an
	 * error. ",D\n" is checked as one word (the comma included).
	 */
	memcpy(&u, c, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	u = __builtin_bswap32(u);
#endif
	s0 = (u >> 8 & 0xff) - '1';
	if (likely((u & 0xff00ff) == (',' | '\n' << 16) && s0 < 9)) {
		*r = (struct trace_rec){ .addr = a, .size = s0 + 1, .kind = lk_prefix_kind[b1] };
		return c + 3;
	}
	s0++;
	s1 = (u >> 16 & 0xff) - '0';
	if ((u & 0xff0000ff) == (',' | (uint32_t)'\n' << 24) && s0 < 10 && s1 < 10 && (s0 | s1)) {
		*r = (struct trace_rec){ .addr = a, .size = s0 * 10 + s1, .kind = lk_prefix_kind[b1] };
		return c + 4;
	}
	return NULL;
}

/*
 * Fast lines from *@pp into @rec[@n..@stop) while lk_fast_line() takes them;
 * the caller made sure that the region holds more than LK_FAST_MAXLINE bytes
 * a record, so no line taken reaches its end. Returns the new record count.
 */
static __attribute__((noinline)) size_t lk_fast_run(const unsigned char **pp,
						    struct trace_rec *rec, size_t n, size_t stop)
{
	const unsigned char *p = *pp, *q;
	struct trace_rec *r = rec + n, *r_stop = rec + stop;

	while (r < r_stop && (q = lk_fast_line(p, r))) {
		p = q;
		r++;
	}
	*pp = p;
	return (size_t)(r - rec);
}

/* The slow path for the line at @l, number @line: see lk_line(). */
static __attribute__((noinline)) int lk_slow(struct lackey_reader *lr, struct err *e,
					     unsigned long line, const unsigned char *l,
					     const unsigned char **next, size_t *np)
{
	struct lk_ctx c = { lr, e, line, np, &lr->nev };

	return lk_line(&c, l, next);
}

/*
 * Parse whole lines of [t->ln.p, t->ln.end) into the batch until it is full or
 * the region is used up. The region ends with a newline and TIO_TAILROOM (64)
 * readable bytes follow its end (also in @save), so the fast path reads without
 * bounds checks (16 bytes from the address's first digit, a byte or two past a
 * newline); only bytes before the line's newline decide anything.
 * While more than LK_FAST_MAXLINE bytes a record are left for the records the
 * batch can still take, the fast loop, lk_fast_run(), checks only the record
 * count (a line it takes cannot reach the region's end); the lines are counted
 * from the records afterwards. Near the region's end a line at a time; a line
 * the fast path does not take goes to lk_line(), which accepts it or names the
 * error.
 */
static int lk_parse(struct tt_reader *t, size_t *np, struct err *e)
{
	struct lackey_reader *lr = (struct lackey_reader *)t;
	const unsigned char *p = t->ln.p, *end = t->ln.end, *q;
	struct trace_rec *rec = lr->tt.head.rec;
	unsigned long line = t->line;
	size_t n = *np;
	int ret = 0;

	while (p < end && n < TRACE_BATCH) {
		size_t room = (size_t)(end - p) / LK_FAST_MAXLINE, left = TRACE_BATCH - n, n0 = n;

		if (room) {
			size_t stop = n + (room < left ? room : left);

			n = lk_fast_run(&p, rec, n, stop);
			line += n - n0;
			if (n == stop)
				continue; /* the batch may be full, the region used up */
		} else {
			/* near the end: a fast line ends at its newline, before the region's end */
			q = lk_fast_line(p, &rec[n]);
			if (q) {
				p = q;
				n++;
				line++;
				continue;
			}
		}
		line++; /* the line at @p, which the fast path did not take */
		ret = lk_slow(lr, e, line, p, &p, &n);
		if (ret < 0)
			break;
	}
	t->ln.p = p;
	t->line = line;
	*np = n;
	return ret;
}

static int lk_next(struct trace_reader *r, struct trace_batch *b, struct err *e)
{
	struct lackey_reader *lr = (struct lackey_reader *)r;
	int n;

	lr->nev = 0;
	n = tt_fill(&lr->tt, 1, lk_parse, b, e);
	b->ev = lr->ev;
	b->nev = lr->nev;
	return n;
}

static void lk_close(struct trace_reader *r)
{
	struct lackey_reader *lr = (struct lackey_reader *)r;

	free(lr->pend);
	tt_reader_close(r);
}

static const struct trace_ops lackey_ops = {
	.next = lk_next,
	.close = lk_close,
};

struct trace_reader *trace_lackey_open(struct tio *io, const char *name, struct err *e)
{
	struct lackey_reader *lr = tt_reader_open(sizeof(*lr), &lackey_ops, TF_LACKEY, io, name, e);

	return lr ? &lr->tt.head : NULL;
}

/* Content detection: the first non-blank line starts as lackey or Valgrind writes a line. */
static bool lk_probe_line(const unsigned char *s, const unsigned char *t)
{
	static const char *const prefixes[] = { "==", "--", "I  ", " L ", " S ", " M ",
						"SYSCALL[" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (tt_starts(s, t, prefixes[i]))
			return true;
	return false;
}

bool trace_lackey_probe(const unsigned char *p, size_t n)
{
	return tt_probe_lines(p, n, 1, lk_probe_line);
}
