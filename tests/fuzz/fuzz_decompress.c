/*
 * fuzz_decompress.c - the byte stream under every reader (sim/trace_io.c):
 * magic and suffix detection, the gzip, xz and zstd decoders in the producer
 * thread, and the chunk hand-off, checked against an in-memory decode.
 *
 * Input: byte 0 chooses a magic to put in front of the rest (bits 0-1: none,
 * gzip, xz, zstd; the decoders then see the fuzzer's bytes at once) and the
 * file name's suffix (bits 2-3: none, .gz, .xz, .zst).
 *
 * Checks (trace_io.h): tio_open() fails only with a message naming the file;
 * tio_peek() gives the first chunk (a buffer, not NULL, even when the stream
 * is empty), and the first tio_read_chunk() the same bytes; every chunk but
 * the last is TIO_CHUNK bytes; the head- and tailroom around a chunk are the
 * caller's (written here, so AddressSanitizer sees any shortfall); after 0
 * or -1 every later call returns the same. The output
 * matches a one-shot decode of the whole file by the same libraries (whole
 * input at once, concatenated gzip members, xz streams and zstd frames, as
 * trace_io.c reads them), and the stream fails exactly when that decode does
 * (how much a decoder hands out before it notices corrupt data depends on its
 * buffers: then only the bytes both gave are compared); both sides are
 * judged only while the output stays under FUZZ_OUT_MAX.
 */
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../../sim/trace_io.h"
#include "fuzz.h"

/* Output judged per input; decoding stops there (a 4 KiB zstd input can hold 100 MiB). */
#define FUZZ_OUT_MAX (16u << 20)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static const uint8_t magic_gz[] = { 0x1f, 0x8b };
static const uint8_t magic_xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
static const uint8_t magic_zs[] = { 0x28, 0xb5, 0x2f, 0xfd };

enum ref_result { REF_OK, REF_BAD, REF_BIG };

/* A growing output buffer, capped at FUZZ_OUT_MAX. */
struct obuf {
	uint8_t *p;
	size_t len, cap;
};

/* Room for at least one more byte at p + len; false past the cap. */
static bool obuf_room(struct obuf *o)
{
	if (o->len < o->cap)
		return true;
	if (o->cap >= FUZZ_OUT_MAX)
		return false;
	o->cap = o->cap ? 2 * o->cap : 4096;
	o->p = realloc(o->p, o->cap);
	if (!o->p)
		abort();
	return true;
}

static enum ref_result ref_gzip(const uint8_t *in, size_t n, struct obuf *o)
{
	z_stream z;
	enum ref_result r = REF_BAD;
	int ret;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		abort();
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	for (;;) {
		if (!obuf_room(o)) {
			r = REF_BIG;
			break;
		}
		z.next_out = o->p + o->len;
		z.avail_out = (uInt)(o->cap - o->len);
		ret = inflate(&z, Z_NO_FLUSH);
		o->len = o->cap - z.avail_out;
		if (ret == Z_STREAM_END) {
			if (!z.avail_in) {
				r = REF_OK;
				break;
			}
			if (inflateReset(&z) != Z_OK) /* the next member */
				break;
			continue;
		}
		if (ret != Z_OK && !(ret == Z_BUF_ERROR && !z.avail_out))
			break; /* corrupt, or truncated (Z_BUF_ERROR with room left) */
	}
	inflateEnd(&z);
	return r;
}

static enum ref_result ref_xz(const uint8_t *in, size_t n, struct obuf *o)
{
	lzma_stream x = LZMA_STREAM_INIT;
	enum ref_result r = REF_BAD;
	lzma_ret ret;

	if (lzma_stream_decoder(&x, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		abort();
	x.next_in = in;
	x.avail_in = n;
	for (;;) {
		if (!obuf_room(o)) {
			r = REF_BIG;
			break;
		}
		x.next_out = o->p + o->len;
		x.avail_out = o->cap - o->len;
		ret = lzma_code(&x, LZMA_FINISH);
		o->len = o->cap - x.avail_out;
		if (ret == LZMA_STREAM_END) {
			r = REF_OK;
			break;
		}
		if (ret != LZMA_OK || x.avail_out)
			break; /* corrupt, or truncated: no progress with room left */
	}
	lzma_end(&x);
	return r;
}

static enum ref_result ref_zstd(const uint8_t *in, size_t n, struct obuf *o)
{
	ZSTD_DStream *zs = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in, n, 0 };
	enum ref_result r = REF_BAD;
	size_t ret = 1;

	if (!zs || ZSTD_isError(ZSTD_initDStream(zs)))
		abort();
	for (;;) {
		ZSTD_outBuffer ob;

		if (!obuf_room(o)) {
			r = REF_BIG;
			break;
		}
		ob = (ZSTD_outBuffer){ o->p + o->len, o->cap - o->len, 0 };
		ret = ZSTD_decompressStream(zs, &ob, &ib);
		o->len += ob.pos;
		if (ZSTD_isError(ret))
			break;
		if (ib.pos == ib.size && ob.pos < ob.size) {
			/* all input taken and the output not full: nothing is held back */
			r = ret == 0 ? REF_OK : REF_BAD;
			break;
		}
	}
	ZSTD_freeDStream(zs);
	return r;
}

/* The one-shot decode of the file @in as trace_io.c would pick it (magic only). */
static enum ref_result ref_decode(const uint8_t *in, size_t n, struct obuf *o)
{
	if (n >= sizeof(magic_gz) && !memcmp(in, magic_gz, sizeof(magic_gz)))
		return ref_gzip(in, n, o);
	if (n >= sizeof(magic_xz) && !memcmp(in, magic_xz, sizeof(magic_xz)))
		return ref_xz(in, n, o);
	if (n >= sizeof(magic_zs) && !memcmp(in, magic_zs, sizeof(magic_zs)))
		return ref_zstd(in, n, o);
	if (n > FUZZ_OUT_MAX)
		return REF_BIG;
	o->p = malloc(n ? n : 1);
	if (!o->p)
		abort();
	memcpy(o->p, in, n);
	o->len = o->cap = n;
	return REF_OK;
}

static void check_tio_err(const struct err *e, const char *path, const char *what)
{
	FUZZ_ASSERT(e->msg[0], "%s failed with an empty message", what);
	FUZZ_ASSERT(!strcmp(e->file, path), "%s: error names '%s', not '%s'", what, e->file, path);
}

int fuzz_decompress_one(const uint8_t *d, size_t n)
{
	static const char *const sfx[4] = { "", ".gz", ".xz", ".zst" };
	static const struct {
		const uint8_t *p;
		size_t n;
	} magic[4] = { { NULL, 0 }, { magic_gz, 2 }, { magic_xz, 6 }, { magic_zs, 4 } };
	struct obuf ref = { 0 };
	enum ref_result rr;
	const unsigned char *peek;
	unsigned char *q;
	struct err e = { 0 };
	char name[32];
	const char *path;
	uint8_t *file;
	size_t fn, total = 0;
	ssize_t len, plen;
	struct tio *t;
	bool failed = false;

	if (!n)
		return 0;
	snprintf(name, sizeof(name), "z%s", sfx[(d[0] >> 2) & 3]);
	path = fuzz_path(name);
	fn = magic[d[0] & 3].n + n - 1;
	file = malloc(fn ? fn : 1);
	if (!file)
		abort();
	if (magic[d[0] & 3].n)
		memcpy(file, magic[d[0] & 3].p, magic[d[0] & 3].n);
	memcpy(file + magic[d[0] & 3].n, d + 1, n - 1);
	fuzz_write(path, file, fn);
	rr = ref_decode(file, fn, &ref);
	free(file);

	t = tio_open(path, &e);
	if (!t) {
		check_tio_err(&e, path, "tio_open");
		/* it refuses only a file that is a strict prefix of its suffix's magic */
		FUZZ_ASSERT(fn < 6, "tio_open refused %zu bytes: %s", fn, e.msg);
		goto out;
	}
	FUZZ_ASSERT(!e.msg[0], "tio_open succeeded but set an error: %s", e.msg);
	plen = tio_peek(t, &peek, &e);
	if (plen < 0) {
		check_tio_err(&e, path, "tio_peek");
		failed = true;
	} else {
		FUZZ_ASSERT(!e.msg[0], "tio_peek succeeded but set an error: %s", e.msg);
		/* a real buffer even for an empty stream: the probes compute p + n */
		FUZZ_ASSERT(peek, "tio_peek gave %zd bytes at NULL", plen);
	}
	for (;;) {
		memset(&e, 0, sizeof(e));
		len = tio_read_chunk(t, &q, &e);
		if (plen > 0 && !total) {
			FUZZ_ASSERT(len == plen && q == peek, "peeked %zd bytes, read %zd", plen, len);
			plen = 0;
		}
		if (len <= 0)
			break;
		FUZZ_ASSERT(!e.msg[0], "tio_read_chunk gave %zd bytes and an error: %s", len, e.msg);
		FUZZ_ASSERT(len <= (ssize_t)TIO_CHUNK, "a chunk of %zd bytes", len);
		FUZZ_ASSERT(total % TIO_CHUNK == 0, "a chunk after a short one (at byte %zu)", total);
		if (rr == REF_OK)
			FUZZ_ASSERT(total + (size_t)len <= ref.len &&
					    !memcmp(q, ref.p + total, (size_t)len),
				    "chunk at byte %zu (%zd bytes) differs from the one-shot decode "
				    "(%zu bytes)", total, len, ref.len);
		else if (rr == REF_BAD && total < ref.len)
			FUZZ_ASSERT(!memcmp(q, ref.p + total, MIN((size_t)len, ref.len - total)),
				    "chunk at byte %zu (%zd bytes) differs from the one-shot decode "
				    "before its error (%zu bytes)", total, len, ref.len);
		/* the head- and tailroom are the caller's to write */
		q[-TIO_HEADROOM] = q[-1] = 0xa5;
		q[len] = q[len + TIO_TAILROOM - 1] = 0x5a;
		total += (size_t)len;
		if (total >= FUZZ_OUT_MAX)
			break; /* enough; close with the producer still running */
	}
	if (len <= 0) {
		struct err e2 = { 0 };
		ssize_t again = tio_read_chunk(t, &q, &e2);

		if (len < 0) {
			check_tio_err(&e, path, "tio_read_chunk");
			failed = true;
		} else {
			FUZZ_ASSERT(!e.msg[0], "tio_read_chunk ended with an error: %s", e.msg);
		}
		FUZZ_ASSERT(again == len, "tio_read_chunk after %zd returned %zd", len, again);
		FUZZ_ASSERT(!strcmp(e.msg, e2.msg), "a second error '%s' after '%s'", e2.msg, e.msg);
		if (rr != REF_BIG) {
			FUZZ_ASSERT(failed == (rr == REF_BAD),
				    "the stream %s but the one-shot decode %s (%zu bytes read)",
				    failed ? "failed" : "ended cleanly",
				    rr == REF_BAD ? "failed" : "succeeded", total);
			if (!failed)
				FUZZ_ASSERT(total == ref.len, "%zu bytes read, %zu decoded", total,
					    ref.len);
		}
		memset(&e2, 0, sizeof(e2));
		if (failed)
			FUZZ_ASSERT(tio_stream_error(t, &e2) == -1 && !strcmp(e2.msg, e.msg),
				    "tio_stream_error after '%s' gave '%s'", e.msg, e2.msg);
		else
			FUZZ_ASSERT(tio_stream_error(t, &e2) == 0 && !e2.msg[0],
				    "tio_stream_error after a clean end gave '%s'", e2.msg);
	}
	tio_close(t);
out:
	free(ref.p);
	unlink(path);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_decompress_one(d, n);
}
#endif
