/*
 * fuzz_mtr.c - the mtr reader (sim/trace_mtr.c) through trace_open(), also
 * with the records placed across the first chunk boundary, where the reader
 * carries an unfinished record into the next chunk and leaves its fast loop.
 * Checks: fuzz_trace_drain().
 *
 * The straddled copy keeps the input's header at the front: the filler is the
 * header, then INSNS records (which leave the reader's predicted addresses
 * as they were), then the input without its header; inputs that do not start
 * with a whole version-1 header are not compared across the boundary. The
 * END count then no longer matches: that path is the plain copy's.
 */
#include <string.h>

#include "fuzz.h"

#define MTR_HDR 16
#define MTR_INSNS 6

static const uint8_t mtr_hdr[MTR_HDR] = { 0x89, 'M', 'T', 'R', '\r', '\n', 0x1a, '\n', 1, 0 };

/*
 * The header, then INSNS records (tag 0xc2 and a varint count), which leave
 * the predicted addresses alone: 6-byte ones (count 2^32 - 1), and one of 2
 * or 4 bytes for what is left (the length is even).
 */
static void mtr_fill(uint8_t *buf, size_t len)
{
	static const uint8_t insns[MTR_INSNS] = { 0xc2, 0xff, 0xff, 0xff, 0xff, 0x0f };
	size_t i = MTR_HDR;

	memcpy(buf, mtr_hdr, MTR_HDR);
	for (; i + MTR_INSNS <= len; i += MTR_INSNS)
		memcpy(buf + i, insns, MTR_INSNS);
	if (len - i == 2)
		memcpy(buf + i, "\xc2\x01", 2);
	else if (len - i == 4)
		memcpy(buf + i, "\xc2\xff\xff\x01", 4);
}

static size_t mtr_fill_recs(size_t len)
{
	return (len - MTR_HDR) / MTR_INSNS + ((len - MTR_HDR) % MTR_INSNS != 0);
}

/* A whole version-1 header: left out behind the filler's (the same bytes). */
static size_t mtr_skip(const uint8_t *d, size_t n)
{
	return n >= MTR_HDR && !memcmp(d, mtr_hdr, MTR_HDR) ? MTR_HDR : 0;
}

static const struct fuzz_trace_fmt mtr_fmt = {
	.name = "mtr",
	.fmt = TF_MTR,
	.fill = mtr_fill,
	.fill_recs = mtr_fill_recs,
	.align = 2, /* 16 + an even length: whole records */
	.skip = mtr_skip,
};

int fuzz_mtr_one(const uint8_t *d, size_t n)
{
	fuzz_trace_run(&mtr_fmt, d, n);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_mtr_one(d, n);
}
#endif
