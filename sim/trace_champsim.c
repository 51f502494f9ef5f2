/*
 * trace_champsim.c - reader for ChampSim's binary instruction traces: a
 * stream of 64-byte `struct input_instr` records (inc/trace_instruction.h),
 * as tracer/pin/champsim_tracer.cpp writes them, one per executed
 * instruction. Files are usually .champsimtrace.xz or .gz; trace_io.c
 * decompresses them.
 *
 * The record, native little-endian x86-64 layout without packing (offsets
 * checked at compile time against the same field list below):
 *   u64 ip                          off 0
 *   u8  is_branch, branch_taken     off 8, 9
 *   u8  destination_registers[2]    off 10
 *   u8  source_registers[4]         off 12
 *   u64 destination_memory[2]       off 16   (0 = unused)
 *   u64 source_memory[4]            off 32   (0 = unused)
 * Each record becomes, in this order:
 *   one R_IFETCH at ip, size 1 (the record holds no instruction length);
 *   one R_LOAD per non-zero source_memory entry, in array order;
 *   one R_STORE per non-zero destination_memory entry, in array order.
 * Loads before stores: an instruction reads its operands before it writes.
 * Size 1 for the data references too: the record holds no access size (the
 * tracer stores each operand's effective address, MemInstrument()), and size
 * 1 never makes a reference cross a page by our invention. The tracer keeps
 * each array a set (an address is stored once), so an operand that is read
 * and written appears in both arrays: a load then a store, as lackey's M.
 *
 * Checks, each an error "PATH: champsim record N at byte B: ..." (N counts
 * from 1, B is the record's offset in the decompressed stream):
 *   - a stream whose length is not a multiple of 64 ends in a truncated record;
 *   - ip 0: the tracer records IARG_INST_PTR, which is never 0 (Linux keeps
 *     page 0 unmapped, vm.mmap_min_addr); all-zero records are what a file
 *     zero-filled after a crash, or /dev/zero, holds;
 *   - is_branch or branch_taken other than 0 or 1: the tracer writes booleans,
 *     so anything else is not a 64-byte input_instr stream (a 96-byte
 *     cloudsuite_instr trace, say, which is not read);
 *   - any address (ip or memory) at or above 2^57 (VADDR_LIMIT).
 * The registers are not used (no core model). An empty stream is a trace
 * of no records.
 *
 * Speed: records never straddle chunks (TIO_CHUNK is a multiple of 64,
 * asserted below), so they are decoded in place; validity is one OR and
 * one compare per record, and the memory entries are stored without a branch
 * (the slot is written, the count advances only if the entry is non-zero).
 *
 * Left out: cloudsuite_instr (96 bytes, -c/--cloudsuite in ChampSim), and the
 * bzip2 compression that ChampSim's tracereader also accepts (trace_io.c
 * reads gzip, xz and zstd).
 *
 * Sources: ChampSim inc/trace_instruction.h and tracer/pin/champsim_tracer.cpp
 * (ResetCurrentInstruction, BranchOrNot, MemInstrument), with the offsets of
 * ../shared/reference/trace-formats.md.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_io.h"

#define CS_NSRC 4 /* NUM_INSTR_SOURCES */
#define CS_NDST 2 /* NUM_INSTR_DESTINATIONS */

/* The record's layout, only to check the offsets used below. */
struct champsim_input_instr {
	uint64_t ip;
	uint8_t is_branch;
	uint8_t branch_taken;
	uint8_t destination_registers[CS_NDST];
	uint8_t source_registers[CS_NSRC];
	uint64_t destination_memory[CS_NDST];
	uint64_t source_memory[CS_NSRC];
};

#define CS_REC 64
#define CS_OFF_IP 0
#define CS_OFF_IS_BRANCH 8
#define CS_OFF_BRANCH_TAKEN 9
#define CS_OFF_DST_MEM 16
#define CS_OFF_SRC_MEM 32
#define CS_REFS_MAX (1 + CS_NSRC + CS_NDST) /* records one instruction can give */

_Static_assert(sizeof(struct champsim_input_instr) == CS_REC, "input_instr is 64 bytes");
_Static_assert(offsetof(struct champsim_input_instr, ip) == CS_OFF_IP, "ip at 0");
_Static_assert(offsetof(struct champsim_input_instr, is_branch) == CS_OFF_IS_BRANCH,
	       "is_branch at 8");
_Static_assert(offsetof(struct champsim_input_instr, branch_taken) == CS_OFF_BRANCH_TAKEN,
	       "branch_taken at 9");
_Static_assert(offsetof(struct champsim_input_instr, destination_registers) == 10,
	       "destination_registers at 10");
_Static_assert(offsetof(struct champsim_input_instr, source_registers) == 12,
	       "source_registers at 12");
_Static_assert(offsetof(struct champsim_input_instr, destination_memory) == CS_OFF_DST_MEM,
	       "destination_memory at 16");
_Static_assert(offsetof(struct champsim_input_instr, source_memory) == CS_OFF_SRC_MEM,
	       "source_memory at 32");
_Static_assert(TIO_CHUNK % CS_REC == 0, "records must not straddle chunks");
_Static_assert(TRACE_BATCH >= CS_REFS_MAX, "a batch holds one instruction");

static const char *const cs_field[] = {
	"ip", "destination_memory[0]", "destination_memory[1]", "source_memory[0]",
	"source_memory[1]", "source_memory[2]", "source_memory[3]",
};

struct champsim_reader {
	struct trace_reader head;
	struct tio *io;
	const unsigned char *p, *end; /* the undecoded records of the chunk at hand */
	uint64_t nrec;                /* records decoded before @p */
	bool eof;
};

static inline uint64_t get_le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static int cs_bad(struct champsim_reader *c, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), cold, noinline));

/* "NAME: champsim record N at byte B: message" for the record at c->p. Returns -1. */
static int cs_bad(struct champsim_reader *c, struct err *e, const char *fmt, ...)
{
	char msg[sizeof(e->msg)];
	va_list ap;

	if (tio_stream_error(c->io, e))
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(e, c->head.name, 0, 0, "champsim record %llu at byte %llu: %s",
		       (unsigned long long)c->nrec + 1,
		       (unsigned long long)c->nrec * CS_REC, msg);
}

/* Name what is wrong with the record at c->p, which the fast loop refused. */
static int cs_explain(struct champsim_reader *c, struct err *e)
{
	const unsigned char *q = c->p;
	uint64_t v[1 + CS_NDST + CS_NSRC];

	v[0] = get_le64(q + CS_OFF_IP);
	for (int i = 0; i < CS_NDST; i++)
		v[1 + i] = get_le64(q + CS_OFF_DST_MEM + 8 * i);
	for (int i = 0; i < CS_NSRC; i++)
		v[1 + CS_NDST + i] = get_le64(q + CS_OFF_SRC_MEM + 8 * i);
	if (!v[0])
		return cs_bad(c, e, "ip is 0");
	if (q[CS_OFF_IS_BRANCH] > 1)
		return cs_bad(c, e, "is_branch is %u, not 0 or 1 (not a 64-byte input_instr trace?)",
			      q[CS_OFF_IS_BRANCH]);
	if (q[CS_OFF_BRANCH_TAKEN] > 1)
		return cs_bad(c, e,
			      "branch_taken is %u, not 0 or 1 (not a 64-byte input_instr trace?)",
			      q[CS_OFF_BRANCH_TAKEN]);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		if (v[i] >= VADDR_LIMIT)
			return cs_bad(c, e, "%s 0x%llx is over %d bits", cs_field[i],
				      (unsigned long long)v[i], VADDR_BITS_MAX);
	BUG_ON(1); /* the fast loop refused a good record */
	return -1;
}

/*
 * Decode whole records of [c->p, c->end) into the batch from *@np on while
 * room for one more instruction's references remains. Returns 0, or -1 at a
 * bad record (c->p left at it).
 */
static int cs_decode(struct champsim_reader *c, size_t *np, struct err *e)
{
	const unsigned char *p = c->p, *end = c->end;
	struct trace_rec *rec = c->head.rec;
	size_t n = *np;
	int ret = 0;

	while (end - p >= CS_REC && n + CS_REFS_MAX <= TRACE_BATCH) {
		uint64_t ip = get_le64(p + CS_OFF_IP), any = ip;
		uint64_t src[CS_NSRC], dst[CS_NDST];

		for (int i = 0; i < CS_NSRC; i++) {
			src[i] = get_le64(p + CS_OFF_SRC_MEM + 8 * i);
			any |= src[i];
		}
		for (int i = 0; i < CS_NDST; i++) {
			dst[i] = get_le64(p + CS_OFF_DST_MEM + 8 * i);
			any |= dst[i];
		}
		if (unlikely(any >= VADDR_LIMIT || !ip ||
			     ((p[CS_OFF_IS_BRANCH] | p[CS_OFF_BRANCH_TAKEN]) & 0xfe))) {
			c->p = p;
			*np = n;
			ret = cs_explain(c, e);
			break;
		}
		rec[n] = (struct trace_rec){ .addr = ip, .size = 1, .kind = R_IFETCH };
		n++;
		/* unused entries are 0: write the slot anyway, count it only if used */
		for (int i = 0; i < CS_NSRC; i++) {
			rec[n] = (struct trace_rec){ .addr = src[i], .size = 1, .kind = R_LOAD };
			n += src[i] != 0;
		}
		for (int i = 0; i < CS_NDST; i++) {
			rec[n] = (struct trace_rec){ .addr = dst[i], .size = 1, .kind = R_STORE };
			n += dst[i] != 0;
		}
		p += CS_REC;
		c->nrec++;
	}
	if (!ret) {
		c->p = p;
		*np = n;
	}
	return ret;
}

static int cs_next(struct trace_reader *tr, struct trace_batch *b, struct err *e)
{
	struct champsim_reader *c = (struct champsim_reader *)tr;
	size_t n = 0;

	while (n + CS_REFS_MAX <= TRACE_BATCH) {
		if (c->end - c->p < CS_REC) {
			unsigned char *q;
			ssize_t len;

			if (c->p != c->end) /* only the last chunk can end inside a record */
				return cs_bad(c, e, "truncated (%zu of %d bytes)",
					      (size_t)(c->end - c->p), CS_REC);
			if (c->eof)
				break;
			len = tio_read_chunk(c->io, &q, e);
			if (len < 0)
				return -1;
			if (!len) {
				c->eof = true;
				break;
			}
			c->p = q;
			c->end = q + len;
			continue;
		}
		if (cs_decode(c, &n, e) < 0)
			return -1;
	}
	b->recs = c->head.rec;
	b->n = n;
	b->ev = NULL;
	b->nev = 0;
	return (int)n;
}

static void cs_close(struct trace_reader *tr)
{
	struct champsim_reader *c = (struct champsim_reader *)tr;

	tio_close(c->io);
	trace_reader_free(&c->head);
}

static const struct trace_ops champsim_ops = {
	.next = cs_next,
	.close = cs_close,
};

struct trace_reader *trace_champsim_open(struct tio *io, const char *name, struct err *e)
{
	struct champsim_reader *c = trace_reader_alloc(sizeof(*c), &champsim_ops, TF_CHAMPSIM, name, e);

	if (!c) {
		tio_close(io);
		return NULL;
	}
	c->io = io;
	return &c->head;
}

/*
 * Content detection (ChampSim traces have no magic): at least one whole
 * record, and each of the first CS_PROBE_RECS records (or as many as the
 * first chunk holds) passes the reader's checks: ip not 0, is_branch and
 * branch_taken 0 or 1, every address below 2^57. Text fails at once (byte 8
 * is a printable character), and so do /dev/zero (ip 0) and random bytes.
 */
#define CS_PROBE_RECS 256

bool trace_champsim_probe(const unsigned char *p, size_t n)
{
	size_t k = n / CS_REC;

	if (k > CS_PROBE_RECS)
		k = CS_PROBE_RECS;
	for (size_t r = 0; r < k; r++, p += CS_REC) {
		uint64_t ip = get_le64(p + CS_OFF_IP), any = ip;

		for (int i = 0; i < CS_NDST + CS_NSRC; i++)
			any |= get_le64(p + CS_OFF_DST_MEM + 8 * i);
		if (!ip || any >= VADDR_LIMIT || ((p[CS_OFF_IS_BRANCH] | p[CS_OFF_BRANCH_TAKEN]) & 0xfe))
			return false;
	}
	return k > 0;
}
