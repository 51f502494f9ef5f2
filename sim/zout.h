/*
 * zout.h - a compressed output stream: bytes pushed through gzip, xz or zstd
 * (or passed through as they are) into a file descriptor. The writer under
 * `mmusim capture` (capture.c) and the mtr writer (trace_mtr.c).
 */
#ifndef MMUSIM_ZOUT_H
#define MMUSIM_ZOUT_H

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "err.h"
#include "trace_io.h"
#include "types.h"

/*
 * A documented default: compressed bytes handed to each write(), 256 KiB, the
 * size both writers used before this module. It is part of what makes the
 * output bytes what they are: zstd compresses in one shot when the first call
 * ends the frame and the output buffer is large enough (zstd.h,
 * ZSTD_compressStream2()), so a different size can change a small file.
 */
#define ZOUT_BUF (256u << 10)

/* zout_init() flags. */
#define ZOUT_ZSTD_CHECKSUM 1u /* zstd: end the frame with a checksum (ZSTD_c_checksumFlag) */

/**
 * struct zout - one output stream; embed it, all fields are read-only to users.
 * @fd:        where the bytes go (the caller's: zout never closes it)
 * @comp:      the codec
 * @name:      for messages (the caller's string, kept while the stream lives)
 * @live:      the codec state below is allocated (zout_free() releases it)
 * @buf:       ZOUT_BUF bytes of compressed output; NULL for TIO_NONE
 * @out_bytes: bytes written to @fd so far (the compressed size)
 * @werrno:    errno of the write() that failed, 0 if none; a failure with 0
 *             here was the compressor's
 */
struct zout {
	int fd;
	enum tio_comp comp;
	const char *name;
	bool live;
	unsigned char *buf;
	union {
		z_stream gz;
		lzma_stream xz;
		ZSTD_CCtx *zs;
	} c;
	uint64_t out_bytes;
	int werrno;
};

/*
 * Start a stream of @comp into @fd. @level is the codec's own: the zlib level
 * for TIO_GZIP (0..9 or Z_DEFAULT_COMPRESSION; a gzip wrapper, windowBits 16 +
 * MAX_WBITS, memLevel 8, Z_DEFAULT_STRATEGY), the liblzma preset for TIO_XZ
 * (0..9, may be or'ed with LZMA_PRESET_EXTREME; an .xz container with an
 * LZMA_CHECK_CRC64 check), the zstd compression level for TIO_ZSTD (a frame
 * checksum only with ZOUT_ZSTD_CHECKSUM in @flags); ignored for TIO_NONE.
 * @name is used in messages and must outlive @z. @z needs no prior
 * initialisation. Returns 0, or -1 with @e set ("NAME: cannot start the xz
 * compressor", "NAME: out of memory") and nothing left to free.
 */
int zout_init(struct zout *z, int fd, enum tio_comp comp, int level, unsigned flags,
	      const char *name, struct err *e);

/*
 * Compress @n bytes at @buf and write what the codec hands out (it may keep
 * some until later), retrying write() on EINTR. Returns 0, or -1 with @e set:
 * "NAME: write error: STRERROR" (and @z->werrno), "NAME: zstd: ERRORNAME",
 * "NAME: gzip: deflate failed", "NAME: xz: compression failed". After -1 the
 * stream is broken: only zout_free() is left.
 */
int zout_write(struct zout *z, const void *buf, size_t n, struct err *e);

/*
 * Compress the last @n bytes at @buf (@n may be 0), end the stream (the
 * codec's trailer) and write everything out. Returns 0 or -1 as zout_write().
 * Taking the last bytes here, not in a zout_write() before, matters for the
 * output: zstd given the whole input in one ending call writes a one-shot
 * frame with the content size in its header (zstd.h). Only zout_free() may
 * follow.
 */
int zout_finish(struct zout *z, const void *buf, size_t n, struct err *e);

/*
 * Release the codec and the buffer; @z->out_bytes and @z->werrno stay. Safe
 * on a zeroed struct, after a failed zout_init() and twice. Does not close
 * @z->fd.
 */
void zout_free(struct zout *z);

#endif
