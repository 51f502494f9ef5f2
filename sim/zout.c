/*
 * zout.c - a compressed output stream: bytes pushed through a gzip, xz or
 * zstd compressor (or none) and written to a file descriptor, with write()
 * retried on EINTR and short writes continued.
 *
 * Each push drives the codec until it has taken all of the input (and, at the
 * end, written its trailer), emptying the ZOUT_BUF output buffer into the fd
 * each time the codec fills it or returns. The callers choose the
 * parameters that differ between them (level or preset, the zstd frame
 * checksum); those fixed here are the same for both: gzip wrapper windowBits
 * 16 + MAX_WBITS, memLevel 8, Z_DEFAULT_STRATEGY; xz check CRC64; zstd
 * single-threaded.
 *
 * Left out: opening, closing and renaming the file (the callers own the fd
 * and the temporary-file dance), buffering of the input (each caller already
 * gathers its bytes: capture.c reads the pipe in large blocks, trace_mtr.c
 * encodes into its own buffer), multi-threaded compression (zstd workers,
 * xz's threaded encoder: both change the output bytes, and capture.c's header
 * measures the single-threaded rates as enough for a capture), and flush
 * points inside the stream (a reader needs only the whole stream).
 *
 * Sources: the zlib manual (zlib.h: deflateInit2(), deflate() with Z_NO_FLUSH
 * and Z_FINISH, deflateEnd()); liblzma's API documentation (lzma/container.h:
 * lzma_easy_encoder(); lzma/base.h: lzma_code() with LZMA_RUN and
 * LZMA_FINISH, lzma_end()); zstd.h (ZSTD_compressStream2() with
 * ZSTD_e_continue and ZSTD_e_end, ZSTD_CCtx_setParameter()); write(2).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zout.h"

int zout_init(struct zout *z, int fd, enum tio_comp comp, int level, unsigned flags,
	      const char *name, struct err *e)
{
	BUG_ON(comp >= TIO_COMP_NR);
	memset(z, 0, sizeof(*z));
	z->fd = fd;
	z->comp = comp;
	z->name = name;
	if (comp == TIO_NONE)
		return 0;
	z->buf = malloc(ZOUT_BUF);
	if (!z->buf)
		return err_host(e, name, 0, 0, "out of memory");
	switch (comp) {
	case TIO_ZSTD:
		z->c.zs = ZSTD_createCCtx();
		if (!z->c.zs)
			goto fail;
		if (ZSTD_isError(ZSTD_CCtx_setParameter(z->c.zs, ZSTD_c_compressionLevel, level)) ||
		    ((flags & ZOUT_ZSTD_CHECKSUM) &&
		     ZSTD_isError(ZSTD_CCtx_setParameter(z->c.zs, ZSTD_c_checksumFlag, 1)))) {
			ZSTD_freeCCtx(z->c.zs);
			goto fail;
		}
		break;
	case TIO_GZIP:
		/* windowBits 16 + MAX_WBITS: a gzip header and trailer around the deflate data. */
		if (deflateInit2(&z->c.gz, level, Z_DEFLATED, 16 + MAX_WBITS, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			goto fail;
		break;
	case TIO_XZ: {
		lzma_stream init = LZMA_STREAM_INIT;

		/* (uint32_t): a preset with LZMA_PRESET_EXTREME is negative as an int. */
		z->c.xz = init;
		if (lzma_easy_encoder(&z->c.xz, (uint32_t)level, LZMA_CHECK_CRC64) != LZMA_OK)
			goto fail;
		break;
	}
	default:
		BUG_ON(1);
	}
	z->live = true;
	return 0;
fail:
	free(z->buf);
	z->buf = NULL;
	return err_set(e, name, 0, 0, "cannot start the %s compressor", tio_comp_name(comp));
}

static int zout_put(struct zout *z, const unsigned char *p, size_t n, struct err *e)
{
	while (n) {
		ssize_t r = write(z->fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			z->werrno = errno;
			return err_set(e, z->name, 0, 0, "write error: %s", strerror(errno));
		}
		p += r;
		n -= (size_t)r;
		z->out_bytes += (uint64_t)r;
	}
	return 0;
}

static int zout_zstd(struct zout *z, const void *in, size_t n, bool finish, struct err *e)
{
	ZSTD_inBuffer ib = { in, n, 0 };
	size_t left;

	do {
		ZSTD_outBuffer ob = { z->buf, ZOUT_BUF, 0 };

		left = ZSTD_compressStream2(z->c.zs, &ob, &ib,
					    finish ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return err_set(e, z->name, 0, 0, "zstd: %s", ZSTD_getErrorName(left));
		if (zout_put(z, z->buf, ob.pos, e))
			return -1;
	} while (ib.pos < ib.size || (finish && left));
	return 0;
}

static int zout_gzip(struct zout *z, const void *in, size_t n, bool finish, struct err *e)
{
	z_stream *s = &z->c.gz;
	const unsigned char *p = in;
	int ret;

	/* avail_in is a uInt: a larger input goes in slices, Z_FINISH only with the last. */
	s->avail_in = 0;
	do {
		if (!s->avail_in && n) {
			uInt take = n > UINT_MAX ? UINT_MAX : (uInt)n;

			s->next_in = (unsigned char *)p;
			s->avail_in = take;
			p += take;
			n -= take;
		}
		s->next_out = z->buf;
		s->avail_out = ZOUT_BUF;
		ret = deflate(s, finish && !n ? Z_FINISH : Z_NO_FLUSH);
		if (ret == Z_STREAM_ERROR)
			return err_set(e, z->name, 0, 0, "gzip: deflate failed");
		if (zout_put(z, z->buf, ZOUT_BUF - s->avail_out, e))
			return -1;
	} while (s->avail_in || n || !s->avail_out || (finish && ret != Z_STREAM_END));
	return 0;
}

static int zout_xz(struct zout *z, const void *in, size_t n, bool finish, struct err *e)
{
	lzma_stream *s = &z->c.xz;
	lzma_ret ret;

	s->next_in = in;
	s->avail_in = n;
	do {
		s->next_out = z->buf;
		s->avail_out = ZOUT_BUF;
		ret = lzma_code(s, finish ? LZMA_FINISH : LZMA_RUN);
		if (ret != LZMA_OK && ret != LZMA_STREAM_END)
			return err_set(e, z->name, 0, 0, "xz: compression failed");
		if (zout_put(z, z->buf, ZOUT_BUF - s->avail_out, e))
			return -1;
	} while (s->avail_in || !s->avail_out || (finish && ret != LZMA_STREAM_END));
	return 0;
}

static int zout_push(struct zout *z, const void *buf, size_t n, bool finish, struct err *e)
{
	switch (z->comp) {
	case TIO_NONE:
		return zout_put(z, buf, n, e);
	case TIO_ZSTD:
		return zout_zstd(z, buf, n, finish, e);
	case TIO_GZIP:
		return zout_gzip(z, buf, n, finish, e);
	case TIO_XZ:
		return zout_xz(z, buf, n, finish, e);
	default:
		BUG_ON(1);
	}
	return -1;
}

int zout_write(struct zout *z, const void *buf, size_t n, struct err *e)
{
	BUG_ON(z->comp != TIO_NONE && !z->live);
	return zout_push(z, buf, n, false, e);
}

int zout_finish(struct zout *z, const void *buf, size_t n, struct err *e)
{
	BUG_ON(z->comp != TIO_NONE && !z->live);
	return zout_push(z, buf, n, true, e);
}

void zout_free(struct zout *z)
{
	if (z->live) {
		if (z->comp == TIO_ZSTD)
			ZSTD_freeCCtx(z->c.zs);
		else if (z->comp == TIO_GZIP)
			deflateEnd(&z->c.gz);
		else if (z->comp == TIO_XZ)
			lzma_end(&z->c.xz);
		z->live = false;
	}
	free(z->buf);
	z->buf = NULL;
}
