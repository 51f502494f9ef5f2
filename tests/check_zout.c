/*
 * check_zout.c - the compressed output stream (zout.c): known bytes written
 * through each codec into a temporary file and decompressed back with the
 * libraries themselves (gzread(), lzma_stream_decoder(), ZSTD_decompress()),
 * the parameters each caller depends on (gzip wrapper, xz CRC64 check, the
 * zstd checksum flag and one-shot frame), write errors with their exact
 * messages, and inputs large enough to take many output rounds.
 *
 * Sources for the header bytes checked: RFC 1952 2.3.1 (gzip ID1 ID2 CM),
 * the .xz file format 1.2.0 2.1.1.2 (Stream Flags: the check ID, 0x04 CRC64),
 * RFC 8878 3.1.1.1.1 (zstd Frame_Header_Descriptor: bit 2 Content_Checksum_flag,
 * bits 7-6 Frame_Content_Size_flag).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "zout.h"

static char dir[64];
static char path[128];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_zout.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

#define DATA_SEED(comp) (7u + (unsigned)(comp)) /* roundtrip()'s data */
#define ZSTD_SEED 3u                            /* zstd_frame()'s data */

/* @n bytes of a repeatable mix: text-like runs (compressible) and LCG noise. */
static unsigned char *make_data(size_t n, unsigned seed)
{
	unsigned char *p = malloc(n ? n : 1);
	uint32_t x = seed;

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		if ((i / 4096) % 2)
			p[i] = (unsigned char)(x >> 24);
		else
			p[i] = (unsigned char)"I 0401a2b0,3\n"[i % 13];
	}
	return p;
}

/* All of @path; *@n its size. */
static unsigned char *slurp(size_t *n)
{
	struct stat sb;
	unsigned char *p;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	p = malloc((size_t)sb.st_size + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(read(fd, p, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*n = (size_t)sb.st_size;
	return p;
}

/* Decompress @path (written with @comp) with the library; *@n the size. */
static unsigned char *decompress(enum tio_comp comp, size_t cap, size_t *n)
{
	unsigned char *out = malloc(cap + 1), *in;
	size_t inlen;

	ck_assert_ptr_nonnull(out);
	switch (comp) {
	case TIO_NONE:
		free(out);
		return slurp(n);
	case TIO_GZIP: {
		gzFile g = gzopen(path, "rb");
		int r;

		ck_assert_ptr_nonnull(g);
		*n = 0;
		while ((r = gzread(g, out + *n, (unsigned)(cap + 1 - *n))) > 0)
			*n += (size_t)r;
		ck_assert_int_eq(r, 0);
		ck_assert_int_eq(gzclose(g), Z_OK);
		return out;
	}
	case TIO_XZ: {
		lzma_stream s = LZMA_STREAM_INIT;

		in = slurp(&inlen);
		ck_assert_int_eq(lzma_stream_decoder(&s, UINT64_MAX, 0), LZMA_OK);
		s.next_in = in;
		s.avail_in = inlen;
		s.next_out = out;
		s.avail_out = cap + 1;
		ck_assert_int_eq(lzma_code(&s, LZMA_FINISH), LZMA_STREAM_END);
		ck_assert_uint_eq(s.avail_in, 0);
		*n = (size_t)s.total_out;
		lzma_end(&s);
		free(in);
		return out;
	}
	case TIO_ZSTD: {
		size_t r;

		in = slurp(&inlen);
		r = ZSTD_decompress(out, cap + 1, in, inlen);
		ck_assert_msg(!ZSTD_isError(r), "%s", ZSTD_getErrorName(r));
		*n = r;
		free(in);
		return out;
	}
	default:
		ck_abort();
	}
	return NULL;
}

static const int levels[TIO_COMP_NR] = {
	[TIO_GZIP] = Z_DEFAULT_COMPRESSION,
	[TIO_XZ] = 1,
	[TIO_ZSTD] = ZSTD_CLEVEL_DEFAULT,
};

/*
 * Write @len bytes through @comp in pieces of @piece (the last bytes given to
 * zout_finish() when @last_in_finish), read them back, compare. Returns the
 * compressed size.
 */
static size_t roundtrip(enum tio_comp comp, size_t len, size_t piece, bool last_in_finish)
{
	unsigned char *data = make_data(len, DATA_SEED(comp)), *back;
	struct zout z;
	struct err e;
	size_t off = 0, n, fsize;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(zout_init(&z, fd, comp, levels[comp], ZOUT_ZSTD_CHECKSUM, path, &e), 0);
	while (len - off > (last_in_finish ? piece : 0)) {
		size_t k = len - off < piece ? len - off : piece;

		ck_assert_int_eq(zout_write(&z, data + off, k, &e), 0);
		off += k;
	}
	ck_assert_int_eq(zout_finish(&z, data + off, len - off, &e), 0);
	zout_free(&z);
	ck_assert_int_eq(close(fd), 0);
	ck_assert_int_eq(z.werrno, 0);

	back = decompress(comp, len, &n);
	ck_assert_uint_eq(n, len);
	ck_assert_int_eq(memcmp(back, data, len), 0);
	free(back);
	free(slurp(&fsize));
	ck_assert_uint_eq(z.out_bytes, fsize);
	free(data);
	return fsize;
}

START_TEST(roundtrip_each_codec)
{
	enum tio_comp comp = (enum tio_comp)_i;
	size_t sz;

	/* 100000 bytes in 3000-byte pieces, the last ones in zout_finish(). */
	sz = roundtrip(comp, 100000, 3000, true);
	if (comp == TIO_NONE)
		ck_assert_uint_eq(sz, 100000);
	else
		ck_assert_uint_lt(sz, 100000);
	/* All in zout_write(), zout_finish() with nothing. */
	roundtrip(comp, 100000, 3000, false);
	/* Nothing at all: an empty but complete stream. */
	sz = roundtrip(comp, 0, 1, false);
	if (comp == TIO_NONE)
		ck_assert_uint_eq(sz, 0);
	else
		ck_assert_uint_gt(sz, 0);
}
END_TEST

/*
 * 6 MiB, half of it noise that does not compress: more than ZOUT_BUF * 4
 * bytes out, each write() at most ZOUT_BUF, so at least five output rounds,
 * some inside one zout_write() call (pieces of 2 MiB) and some in the finish.
 */
START_TEST(large_input_many_rounds)
{
	enum tio_comp comp = (enum tio_comp)_i;
	size_t sz = roundtrip(comp, 6u << 20, 2u << 20, true);

	ck_assert_uint_gt(sz, 4 * ZOUT_BUF);
}
END_TEST

/* The fixed parameters in the headers: gzip wrapper, xz CRC64 check. */
START_TEST(gzip_and_xz_headers)
{
	unsigned char *p;
	size_t n;

	roundtrip(TIO_GZIP, 1000, 1000, true);
	p = slurp(&n);
	ck_assert_uint_ge(n, 18);
	ck_assert_uint_eq(p[0], 0x1f);
	ck_assert_uint_eq(p[1], 0x8b);
	ck_assert_uint_eq(p[2], 8); /* CM: deflate */
	free(p);

	roundtrip(TIO_XZ, 1000, 1000, true);
	p = slurp(&n);
	ck_assert_uint_ge(n, 12);
	ck_assert_int_eq(memcmp(p, "\xfd" "7zXZ\0", 6), 0);
	ck_assert_uint_eq(p[6], 0);
	ck_assert_uint_eq(p[7], 0x04); /* LZMA_CHECK_CRC64 */
	free(p);
}
END_TEST

/* Write @len bytes to zstd with @flags, all in zout_finish() when @one_shot. */
static unsigned char *zstd_frame(unsigned flags, bool one_shot, size_t len, size_t *n)
{
	unsigned char *data = make_data(len, ZSTD_SEED);
	struct zout z;
	struct err e;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(zout_init(&z, fd, TIO_ZSTD, ZSTD_CLEVEL_DEFAULT, flags, path, &e), 0);
	if (one_shot) {
		ck_assert_int_eq(zout_finish(&z, data, len, &e), 0);
	} else {
		ck_assert_int_eq(zout_write(&z, data, len, &e), 0);
		ck_assert_int_eq(zout_finish(&z, NULL, 0, &e), 0);
	}
	zout_free(&z);
	close(fd);
	free(data);
	return slurp(n);
}

/*
 * The zstd checksum is the caller's choice (capture.c on, trace_mtr.c off),
 * and the last bytes given to zout_finish() make a one-shot frame that
 * records its content size, as the mtr writer's small files always had.
 */
START_TEST(zstd_checksum_and_one_shot)
{
	unsigned char *p;
	size_t n;

	p = zstd_frame(ZOUT_ZSTD_CHECKSUM, true, 5000, &n);
	ck_assert_uint_eq(p[4] & 0x04, 0x04);
	ck_assert_uint_eq(ZSTD_getFrameContentSize(p, n), 5000);
	free(p);

	p = zstd_frame(0, true, 5000, &n);
	ck_assert_uint_eq(p[4] & 0x04, 0);
	ck_assert_uint_eq(ZSTD_getFrameContentSize(p, n), 5000);
	free(p);

	p = zstd_frame(0, false, 5000, &n);
	ck_assert_uint_eq(p[4] & 0x04, 0);
	ck_assert(ZSTD_getFrameContentSize(p, n) == ZSTD_CONTENTSIZE_UNKNOWN);
	free(p);
}
END_TEST

/*
 * Same bytes as the libraries' one-call encoders with the same parameters:
 * zout adds nothing of its own to the stream.
 */
START_TEST(same_as_library_one_shot)
{
	size_t len = 50000, n, cap = 2 * len + 1024, r;
	unsigned char *data, *ref = malloc(cap), *p;
	z_stream s;
	ZSTD_CCtx *cc = ZSTD_createCCtx();

	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(cc);

	/* gzip: deflate() with Z_FINISH over the whole input (roundtrip()'s data). */
	data = make_data(len, DATA_SEED(TIO_GZIP));
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	s.next_in = data;
	s.avail_in = (uInt)len;
	s.next_out = ref;
	s.avail_out = (uInt)cap;
	ck_assert_int_eq(deflate(&s, Z_FINISH), Z_STREAM_END);
	r = cap - s.avail_out;
	deflateEnd(&s);
	free(data);
	roundtrip(TIO_GZIP, len, len, true);
	p = slurp(&n);
	ck_assert_uint_eq(n, r);
	ck_assert_int_eq(memcmp(p, ref, r), 0);
	free(p);

	/* zstd: ZSTD_compress2() with the level and the checksum flag (zstd_frame()'s data). */
	data = make_data(len, ZSTD_SEED);
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
						       ZSTD_CLEVEL_DEFAULT)));
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
	r = ZSTD_compress2(cc, ref, cap, data, len);
	ck_assert(!ZSTD_isError(r));
	free(data);
	p = zstd_frame(ZOUT_ZSTD_CHECKSUM, true, len, &n);
	ck_assert_uint_eq(n, r);
	ck_assert_int_eq(memcmp(p, ref, r), 0);
	free(p);

	ZSTD_freeCCtx(cc);
	free(ref);
}
END_TEST

/* Write 10 bytes to @fd with @comp; return the formatted error of the step that failed. */
static int write_fail(int fd, enum tio_comp comp, char *msg, size_t msz, int *werrno)
{
	struct zout z;
	struct err e;
	int step = 0;

	ck_assert_int_eq(zout_init(&z, fd, comp, levels[comp], 0, "OUT", &e), 0);
	if (zout_write(&z, "0123456789", 10, &e))
		step = 1;
	else if (zout_finish(&z, NULL, 0, &e))
		step = 2;
	if (step)
		err_format(&e, msg, msz);
	*werrno = z.werrno;
	zout_free(&z);
	return step;
}

START_TEST(write_error_messages)
{
	char msg[600];
	int werrno, fd, ro, full;

	/*
	 * A read-only descriptor: plain fails in zout_write(), a codec when it
	 * first has output (its header may come at once or at the finish).
	 */
	ro = open(path, O_RDONLY | O_CREAT, 0644);
	ck_assert_int_ge(ro, 0);
	ck_assert_int_eq(write_fail(ro, TIO_NONE, msg, sizeof(msg), &werrno), 1);
	ck_assert_str_eq(msg, "OUT: write error: Bad file descriptor");
	ck_assert_int_eq(werrno, EBADF);
	for (int c = TIO_GZIP; c < TIO_COMP_NR; c++) {
		ck_assert_int_gt(write_fail(ro, (enum tio_comp)c, msg, sizeof(msg), &werrno), 0);
		ck_assert_str_eq(msg, "OUT: write error: Bad file descriptor");
		ck_assert_int_eq(werrno, EBADF);
	}
	close(ro);

	/* A closed descriptor. */
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_gt(write_fail(fd, TIO_ZSTD, msg, sizeof(msg), &werrno), 0);
	ck_assert_str_eq(msg, "OUT: write error: Bad file descriptor");
	ck_assert_int_eq(werrno, EBADF);

	/* A full device. */
	full = open("/dev/full", O_WRONLY);
	if (full >= 0) {
		ck_assert_int_gt(write_fail(full, TIO_GZIP, msg, sizeof(msg), &werrno), 0);
		ck_assert_str_eq(msg, "OUT: write error: No space left on device");
		ck_assert_int_eq(werrno, ENOSPC);
		close(full);
	}
}
END_TEST

/* A codec that refuses its parameters: the caller's message, nothing left to free. */
START_TEST(init_errors)
{
	struct zout z;
	struct err e;
	char msg[600];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(zout_init(&z, fd, TIO_XZ, 42, 0, "OUT", &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "OUT: cannot start the xz compressor");
	ck_assert(!z.live);
	ck_assert_ptr_null(z.buf);
	zout_free(&z);

	ck_assert_int_eq(zout_init(&z, fd, TIO_GZIP, 42, 0, "OUT", &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "OUT: cannot start the gzip compressor");
	zout_free(&z);
	zout_free(&z);

	/* A zeroed struct frees as nothing. */
	memset(&z, 0, sizeof(z));
	zout_free(&z);
	close(fd);
	ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

static Suite *zout_suite(void)
{
	Suite *s = suite_create("zout");
	TCase *tc = tcase_create("zout");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, roundtrip_each_codec, TIO_NONE, TIO_COMP_NR);
	tcase_add_loop_test(tc, large_input_many_rounds, TIO_NONE, TIO_COMP_NR);
	tcase_add_test(tc, gzip_and_xz_headers);
	tcase_add_test(tc, zstd_checksum_and_one_shot);
	tcase_add_test(tc, same_as_library_one_shot);
	tcase_add_test(tc, write_error_messages);
	tcase_add_test(tc, init_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(zout_suite());
}
