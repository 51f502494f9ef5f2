/*
 * trace_io.c - read a trace file or standard input, decompressing gzip (zlib),
 * xz (liblzma) or zstd (libzstd) in a background thread.
 *
 * One producer thread fills a ring of TIO_NBUF chunk buffers; the consumer (a
 * format reader, on the simulator's thread) takes them in order. Every chunk
 * but the last is exactly TIO_CHUNK bytes. Decompression therefore overlaps
 * parsing and simulation on a second core; plain files go through the same
 * thread so that the kernel's copy overlaps too.
 *
 * Errors are values in the stream: the producer stops at the first read error,
 * corrupt or truncated compressed data, and the consumer sees it after the
 * last good byte. A compressed stream is complete only when its decoder says
 * so (zstd frame finished, gzip member trailer checked, xz stream end seen);
 * concatenated zstd frames, gzip members and xz streams are read in sequence.
 *
 * Left out: bzip2 and lz4 (no reader needs them yet), seeking, and sharing one
 * stream between readers. The producer waits for input in poll() together
 * with a wake-up pipe, so closing a reader fed by a still-running capture
 * never hangs (pthread_cancel() would do too, but trips AddressSanitizer).
 *
 * Sources: zstd.h (ZSTD_decompressStream: "return 0 when a frame is completely
 * decoded and fully flushed"), zlib.h (inflate, Z_STREAM_END, windowBits 16+
 * for gzip), lzma/container.h (LZMA_CONCATENATED, LZMA_FINISH), RFC 1952,
 * the xz file format 1.1.0 and RFC 8878 for the magic bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lzma.h>
#include <zlib.h>
#include <xxhash.h>
/* ZSTD_createDStream_advanced(), in libzstd's exported but experimental section */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "trace_io.h"
#include "util.h"

/* Raw input buffer of the decompressors: 2x ZSTD_DStreamInSize() (128 KiB). */
#define TIO_INBUF (256u << 10)

static const unsigned char gzip_magic[] = { 0x1f, 0x8b };
static const unsigned char xz_magic[] = { 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00 };
static const unsigned char zstd_magic[] = { 0x28, 0xb5, 0x2f, 0xfd };

static const struct {
	const char *name;
	const char *suffix;
	const unsigned char *magic;
	size_t magic_len;
} comp_info[TIO_COMP_NR] = {
	[TIO_NONE] = { "none", "", NULL, 0 },
	[TIO_GZIP] = { "gzip", ".gz", gzip_magic, sizeof(gzip_magic) },
	[TIO_XZ] = { "xz", ".xz", xz_magic, sizeof(xz_magic) },
	[TIO_ZSTD] = { "zstd", ".zst", zstd_magic, sizeof(zstd_magic) },
};

struct tio {
	char name[256];
	int fd;
	bool is_stdin; /* fd 0 is not ours to close */
	enum tio_comp comp;

	/* Shared between the threads, under @lock. */
	pthread_mutex_t lock;
	pthread_cond_t cv_full; /* the consumer waits for a chunk */
	pthread_cond_t cv_free; /* the producer waits for a free buffer */
	unsigned char *buf[TIO_NBUF];
	unsigned char *buf_region; /* the buffers' one mapping (tio_buffers()), NULL if none */
	size_t buf_len;
	size_t len[TIO_NBUF];
	uint64_t produced; /* chunks filled */
	uint64_t released; /* chunks the consumer has given back */
	bool done;         /* the producer has finished after @produced chunks */
	bool failed;       /* ... with the error in @errmsg */
	bool stop;         /* tio_close() asks the producer to quit */
	char errmsg[320];

	/* The consumer's side. */
	uint64_t taken;     /* chunks handed out */
	bool holding;       /* chunk taken - 1 is the caller's */
	bool peeked;        /* ... and was only peeked */
	bool thread_started;
	bool inline_fill;   /* no producer thread: the consumer fills (tio_set_inline()) */
	unsigned nbuf;      /* buffers in use: TIO_NBUF, or TIO_NBUF_INLINE when inline_fill */
	pthread_t thread;
	int wake[2]; /* tio_close() writes to [1]; the producer polls [0] */

	/* The producer's side (before the thread starts: tio_open's). */
	XXH3_state_t *hash; /* the file's bytes as read (a regular file up to TIO_HASH_MAX) */
	uint64_t hashed, size; /* bytes hashed; the file's size at open */
	uint64_t consumed;     /* bytes read from the file (atomic: progress reads it) */
	uint64_t total;        /* a regular file's size at open, else 0 */
	unsigned char *in; /* raw input */
	size_t in_len, in_pos;
	bool in_eof;
	bool pending; /* the decoder filled its output: it may hold more */
	bool member_done;
	union {
		z_stream z;
		lzma_stream x;
		ZSTD_DStream *zs;
	} d;
	bool d_init;
};

const char *tio_comp_name(enum tio_comp c)
{
	return c < TIO_COMP_NR ? comp_info[c].name : "?";
}

static bool has_suffix(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return n && len >= n && !memcmp(s + len - n, suf, n);
}

enum tio_comp tio_comp_from_suffix(const char *path)
{
	size_t len = strlen(path);

	for (int c = TIO_GZIP; c < TIO_COMP_NR; c++)
		if (has_suffix(path, len, comp_info[c].suffix))
			return c;
	return TIO_NONE;
}

size_t tio_strip_comp_suffix(const char *path)
{
	enum tio_comp c = tio_comp_from_suffix(path);

	return strlen(path) - strlen(comp_info[c].suffix);
}

const char *tio_name(const struct tio *t)
{
	return t->name;
}

enum tio_comp tio_compression(const struct tio *t)
{
	return t->comp;
}

/*
 * read() that retries EINTR. In the producer thread it first waits in poll()
 * for the input or for tio_close()'s wake-up byte, so that closing a reader
 * fed by a live pipe (a capture still running) never waits for the writer;
 * then it fails with ECANCELED.
 */
static ssize_t tio_sysread(struct tio *t, void *buf, size_t n, bool in_thread)
{
	struct pollfd pf[2] = { { .fd = t->fd, .events = POLLIN },
				{ .fd = t->wake[0], .events = POLLIN } };
	ssize_t r;

	for (;;) {
		if (in_thread) {
			if (poll(pf, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			if (pf[1].revents) {
				errno = ECANCELED;
				return -1;
			}
		}
		r = read(t->fd, buf, n);
		if (r > 0)
			__atomic_store_n(&t->consumed, t->consumed + (uint64_t)r, __ATOMIC_RELAXED);
		if (r > 0 && t->hash) {
			XXH3_128bits_update(t->hash, buf, (size_t)r);
			t->hashed += (uint64_t)r;
		}
		if (r >= 0 || errno != EINTR)
			return r;
	}
}

/* Producer: record the error that ends the stream. Returns -1. */
static int tio_fail(struct tio *t, const char *fmt, const char *arg)
{
	snprintf(t->errmsg, sizeof(t->errmsg), fmt, arg);
	return -1;
}

/* Refill the raw input buffer. 1: got bytes, 0: end of input, -1: error. */
static int tio_fill_input(struct tio *t)
{
	ssize_t r;

	if (t->in_eof)
		return 0;
	r = tio_sysread(t, t->in, TIO_INBUF, true);
	if (r < 0)
		return tio_fail(t, "read error: %s", strerror(errno));
	t->in_pos = 0;
	t->in_len = (size_t)r;
	if (!r)
		t->in_eof = true;
	return r > 0;
}

/*
 * The fill functions put up to TIO_CHUNK bytes at @dst and store the count in
 * *@n. They return 0 if the chunk is full (more may follow), 1 at the clean end
 * of the stream and -1 on error (after storing the bytes decoded before it).
 */
static int tio_fill_raw(struct tio *t, unsigned char *dst, size_t *n)
{
	size_t got = 0;
	ssize_t r;

	while (got < TIO_CHUNK) {
		if (t->in_pos < t->in_len) {
			size_t k = t->in_len - t->in_pos;

			if (k > TIO_CHUNK - got)
				k = TIO_CHUNK - got;
			memcpy(dst + got, t->in + t->in_pos, k);
			t->in_pos += k;
			got += k;
			continue;
		}
		if (t->in_eof)
			break;
		r = tio_sysread(t, dst + got, TIO_CHUNK - got, true);
		if (r < 0) {
			*n = got;
			return tio_fail(t, "read error: %s", strerror(errno));
		}
		if (!r)
			t->in_eof = true;
		got += (size_t)r;
	}
	*n = got;
	return got < TIO_CHUNK || (t->in_eof && t->in_pos == t->in_len) ? 1 : 0;
}

static int tio_fill_zstd(struct tio *t, unsigned char *dst, size_t *n)
{
	ZSTD_outBuffer out = { dst, TIO_CHUNK, 0 };
	ZSTD_inBuffer in;
	size_t ret;
	int r;

	for (;;) {
		*n = out.pos;
		if (out.pos == out.size)
			return 0;
		if (t->in_pos == t->in_len && !t->pending) {
			r = tio_fill_input(t);
			if (r < 0)
				return -1;
			if (!r)
				return t->member_done ? 1 : tio_fail(t, "truncated %s stream", "zstd");
		}
		in.src = t->in;
		in.size = t->in_len;
		in.pos = t->in_pos;
		ret = ZSTD_decompressStream(t->d.zs, &out, &in);
		t->in_pos = in.pos;
		*n = out.pos;
		if (ZSTD_isError(ret))
			return tio_fail(t, "corrupt %s stream", "zstd");
		t->member_done = ret == 0;
		t->pending = out.pos == out.size;
	}
}

static int tio_fill_gzip(struct tio *t, unsigned char *dst, size_t *n)
{
	z_stream *z = &t->d.z;
	int ret, r;

	z->next_out = dst;
	z->avail_out = TIO_CHUNK;
	for (;;) {
		*n = TIO_CHUNK - z->avail_out;
		if (!z->avail_out)
			return 0;
		if (!z->avail_in && !t->pending) {
			r = tio_fill_input(t);
			if (r < 0)
				return -1;
			if (!r)
				return t->member_done ? 1 : tio_fail(t, "truncated %s stream", "gzip");
			z->next_in = t->in;
			z->avail_in = (uInt)t->in_len;
		}
		if (t->member_done) {
			/* Another member follows (RFC 1952 2.2: a file is a series of members). */
			if (inflateReset(z) != Z_OK)
				return tio_fail(t, "corrupt %s stream", "gzip");
			t->member_done = false;
		}
		ret = inflate(z, Z_NO_FLUSH);
		*n = TIO_CHUNK - z->avail_out;
		t->pending = !z->avail_out;
		switch (ret) {
		case Z_STREAM_END:
			t->member_done = true;
			t->pending = false;
			break;
		case Z_OK:
			break;
		case Z_BUF_ERROR: /* no progress: it needs more input */
			if (z->avail_in)
				return tio_fail(t, "corrupt %s stream", "gzip");
			t->pending = false;
			break;
		case Z_MEM_ERROR:
			return tio_fail(t, "%s", "out of memory");
		default:
			return tio_fail(t, "corrupt %s stream", "gzip");
		}
	}
}

static int tio_fill_xz(struct tio *t, unsigned char *dst, size_t *n)
{
	lzma_stream *x = &t->d.x;
	lzma_action action;
	lzma_ret ret;
	size_t before;
	int r;

	x->next_out = dst;
	x->avail_out = TIO_CHUNK;
	for (;;) {
		*n = TIO_CHUNK - x->avail_out;
		if (!x->avail_out)
			return 0;
		if (!x->avail_in && !t->pending && !t->in_eof) {
			r = tio_fill_input(t);
			if (r < 0)
				return -1;
			x->next_in = t->in;
			x->avail_in = t->in_len;
		}
		/* LZMA_CONCATENATED needs LZMA_FINISH to know the input has ended. */
		action = t->in_eof && !x->avail_in ? LZMA_FINISH : LZMA_RUN;
		before = x->avail_out;
		ret = lzma_code(x, action);
		*n = TIO_CHUNK - x->avail_out;
		t->pending = !x->avail_out;
		switch (ret) {
		case LZMA_STREAM_END:
			return 1;
		case LZMA_OK:
			if (action == LZMA_FINISH && x->avail_out == before)
				return tio_fail(t, "truncated %s stream", "xz");
			break;
		case LZMA_BUF_ERROR:
			return tio_fail(t, "truncated %s stream", "xz");
		case LZMA_MEM_ERROR:
			return tio_fail(t, "%s", "out of memory");
		default: /* LZMA_DATA_ERROR, LZMA_FORMAT_ERROR, LZMA_OPTIONS_ERROR, ... */
			return tio_fail(t, "corrupt %s stream", "xz");
		}
	}
}

static int tio_fill(struct tio *t, unsigned char *dst, size_t *n)
{
	switch (t->comp) {
	case TIO_GZIP:
		return tio_fill_gzip(t, dst, n);
	case TIO_XZ:
		return tio_fill_xz(t, dst, n);
	case TIO_ZSTD:
		return tio_fill_zstd(t, dst, n);
	default:
		return tio_fill_raw(t, dst, n);
	}
}

static void *tio_producer(void *arg)
{
	struct tio *t = arg;
	unsigned idx;
	size_t n;
	int r;

	for (;;) {
		pthread_mutex_lock(&t->lock);
		while (!t->stop && t->produced - t->released >= t->nbuf)
			pthread_cond_wait(&t->cv_free, &t->lock);
		if (t->stop) {
			pthread_mutex_unlock(&t->lock);
			return NULL;
		}
		idx = (unsigned)(t->produced % t->nbuf);
		pthread_mutex_unlock(&t->lock);

		n = 0;
		r = tio_fill(t, t->buf[idx] + TIO_HEADROOM, &n);

		pthread_mutex_lock(&t->lock);
		if (n) {
			t->len[idx] = n;
			t->produced++;
		}
		if (r) {
			t->done = true;
			t->failed = r < 0;
		}
		pthread_cond_signal(&t->cv_full);
		pthread_mutex_unlock(&t->lock);
		if (r)
			return NULL;
	}
}

/*
 * zstd's allocations, through ZSTD_customMem: from 1 MiB up (the frame's window:
 * 2.4 MB for a stream of the default level) an anonymous mapping with huge pages
 * if the kernel gives them, as tio_buffers(); below, malloc(). Each block starts
 * with a header holding the mapping's length (0: malloc'd), so that the free
 * knows which. The window's 4K pages were 600 faults of the miss-heavy bench
 * run, a third of them before its first record (trace_open() decodes a chunk).
 */
#define ZMEM_HDR 64 /* the header; keeps malloc()'s alignment */

static void *zmem_alloc(void *opaque, size_t size)
{
	unsigned char *p;
	size_t len;

	(void)opaque;
	if (size < (1u << 20)) {
		p = malloc(ZMEM_HDR + size);
		if (!p)
			return NULL;
		*(size_t *)p = 0;
		return p + ZMEM_HDR;
	}
	len = ZMEM_HDR + size;
	p = huge_region(&len);
	if (!p)
		return NULL;
	*(size_t *)p = len;
	return p + ZMEM_HDR;
}

static void zmem_free(void *opaque, void *addr)
{
	unsigned char *p = (unsigned char *)addr - ZMEM_HDR;

	(void)opaque;
	if (!addr)
		return;
	if (*(size_t *)p)
		munmap(p, *(size_t *)p);
	else
		free(p);
}

static const ZSTD_customMem zstd_mem = { zmem_alloc, zmem_free, NULL };

/*
 * The TIO_NBUF chunk buffers, from one anonymous mapping with huge pages if the
 * kernel gives them (madvise mode; a hint, 4K pages work too), its length a
 * multiple of 2 MiB so that it is aligned to one. Zeroed, as parsers read a
 * little past the data, which must be defined. A fresh 4K page costs a fault on
 * its first write, and on this project's 2-core guest a fault costs about 18 us:
 * the 1,040 pages of four calloc'd buffers were ~19 ms of a 0.2 s run (the
 * miss-heavy bench trace; the first chunk's share before any record is read).
 */
static int tio_buffers(struct tio *t)
{
	size_t one = TIO_HEADROOM + TIO_CHUNK + TIO_TAILROOM, len = TIO_NBUF * one;
	unsigned char *r;

	r = huge_region(&len);
	if (!r)
		return -1;
	t->buf_region = r;
	t->buf_len = len;
	for (int i = 0; i < TIO_NBUF; i++)
		t->buf[i] = r + (size_t)i * one;
	return 0;
}

static void tio_free(struct tio *t)
{
	if (t->d_init) {
		if (t->comp == TIO_GZIP)
			inflateEnd(&t->d.z);
		else if (t->comp == TIO_XZ)
			lzma_end(&t->d.x);
		else if (t->comp == TIO_ZSTD)
			ZSTD_freeDStream(t->d.zs);
	}
	if (t->buf_region)
		munmap(t->buf_region, t->buf_len);
	free(t->in);
	XXH3_freeState(t->hash);
	if (t->fd >= 0 && !t->is_stdin)
		close(t->fd);
	for (int i = 0; i < 2; i++)
		if (t->wake[i] >= 0)
			close(t->wake[i]);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cv_full);
	pthread_cond_destroy(&t->cv_free);
	free(t);
}

/* Start the decoder chosen by t->comp. */
static int tio_init_decoder(struct tio *t)
{
	switch (t->comp) {
	case TIO_GZIP:
		memset(&t->d.z, 0, sizeof(t->d.z));
		if (inflateInit2(&t->d.z, 16 + MAX_WBITS) != Z_OK)
			return -1;
		t->d.z.next_in = t->in;
		t->d.z.avail_in = (uInt)t->in_len;
		break;
	case TIO_XZ: {
		lzma_stream init = LZMA_STREAM_INIT;

		t->d.x = init;
		if (lzma_stream_decoder(&t->d.x, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
			return -1;
		t->d.x.next_in = t->in;
		t->d.x.avail_in = t->in_len;
		break;
	}
	case TIO_ZSTD:
		t->d.zs = ZSTD_createDStream_advanced(zstd_mem);
		if (!t->d.zs)
			return -1;
		t->d_init = true;
		if (ZSTD_isError(ZSTD_initDStream(t->d.zs)))
			return -1;
		break;
	default:
		return 0;
	}
	t->d_init = true;
	return 0;
}

/* Is @p (@n bytes) a strict prefix of @c's magic (the empty stream included)? */
static bool tio_is_magic_prefix(enum tio_comp c, const unsigned char *p, size_t n)
{
	return n < comp_info[c].magic_len && !memcmp(p, comp_info[c].magic, n);
}

struct tio *tio_open(const char *path, struct err *e)
{
	bool is_stdin = !strcmp(path, "-");
	struct stat st;
	struct tio *t;
	enum tio_comp suffix;
	ssize_t r;

	t = calloc(1, sizeof(*t));
	if (!t) {
		err_host(e, path, 0, 0, "out of memory");
		return NULL;
	}
	t->nbuf = TIO_NBUF;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cv_full, NULL);
	pthread_cond_init(&t->cv_free, NULL);
	snprintf(t->name, sizeof(t->name), "%s", is_stdin ? "<stdin>" : path);
	t->is_stdin = is_stdin;
	t->wake[0] = t->wake[1] = -1;
	if (pipe2(t->wake, O_CLOEXEC | O_NONBLOCK)) {
		err_set(e, t->name, 0, 0, "cannot create a pipe: %s", strerror(errno));
		t->wake[0] = t->wake[1] = -1;
		t->fd = -1;
		goto fail;
	}
	t->fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0) {
		err_set(e, t->name, 0, 0, "%s", strerror(errno));
		t->fd = -1;
		goto fail;
	}
	if (fstat(t->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		err_set(e, t->name, 0, 0, "%s", strerror(EISDIR));
		goto fail;
	}
	if (!is_stdin && S_ISREG(st.st_mode))
		t->total = (uint64_t)st.st_size;
	/* the content identity (provenance.h) for free: hashed as it is read */
	if (!is_stdin && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= TIO_HASH_MAX) {
		t->hash = XXH3_createState();
		if (t->hash && XXH3_128bits_reset(t->hash) == XXH_ERROR) {
			XXH3_freeState(t->hash);
			t->hash = NULL;
		}
		t->size = (uint64_t)st.st_size;
	}
	t->in = malloc(TIO_INBUF);
	if (!t->in || tio_buffers(t)) {
		err_host(e, t->name, 0, 0, "out of memory");
		goto fail;
	}

	/* Sniff: read until the longest magic is in, or the input ends. */
	while (!t->in_eof && t->in_len < sizeof(xz_magic)) {
		r = tio_sysread(t, t->in + t->in_len, TIO_INBUF - t->in_len, false);
		if (r < 0) {
			err_set(e, t->name, 0, 0, "read error: %s", strerror(errno));
			goto fail;
		}
		if (!r)
			t->in_eof = true;
		t->in_len += (size_t)r;
	}
	t->comp = TIO_NONE;
	for (int c = TIO_GZIP; c < TIO_COMP_NR; c++)
		if (t->in_len >= comp_info[c].magic_len &&
		    !memcmp(t->in, comp_info[c].magic, comp_info[c].magic_len))
			t->comp = c;
	suffix = is_stdin ? TIO_NONE : tio_comp_from_suffix(path);
	if (t->comp == TIO_NONE && suffix != TIO_NONE &&
	    tio_is_magic_prefix(suffix, t->in, t->in_len)) {
		err_set(e, t->name, 0, 0, "truncated %s stream", comp_info[suffix].name);
		goto fail;
	}
	if (tio_init_decoder(t)) {
		err_set(e, t->name, 0, 0, "cannot start the %s decoder", comp_info[t->comp].name);
		goto fail;
	}
	return t; /* the producer starts at the second chunk (tio_read_chunk()) */
fail:
	tio_free(t);
	return NULL;
}

/* No producer thread: fill the next free buffer here (t->lock held, a buffer free). */
static void tio_fill_inline(struct tio *t)
{
	unsigned i = (unsigned)(t->produced % t->nbuf);
	size_t got = 0;
	int r = tio_fill(t, t->buf[i] + TIO_HEADROOM, &got);

	if (got) {
		t->len[i] = got;
		t->produced++;
	}
	if (r) {
		t->done = true;
		t->failed = r < 0;
	}
}

ssize_t tio_read_chunk(struct tio *t, unsigned char **p, struct err *e)
{
	unsigned idx;
	ssize_t n;

	pthread_mutex_lock(&t->lock);
	if (t->peeked) {
		t->peeked = false;
		idx = (unsigned)((t->taken - 1) % t->nbuf);
		*p = t->buf[idx] + TIO_HEADROOM;
		n = (ssize_t)t->len[idx];
		pthread_mutex_unlock(&t->lock);
		return n;
	}
	if (t->holding) {
		t->holding = false;
		t->released++;
		pthread_cond_signal(&t->cv_free);
	}
	while (t->taken == t->produced && !t->done) {
		/*
		 * The first chunk (the format probe's) is filled here; the producer
		 * starts for the second, unless the caller decodes on a thread of its
		 * own already (tio_set_inline()) or no thread can start: then every
		 * chunk is filled here, into the buffer just released.
		 */
		if (!t->thread_started && (t->inline_fill || !t->taken ||
					   pthread_create(&t->thread, NULL, tio_producer, t))) {
			tio_fill_inline(t);
			continue;
		}
		t->thread_started = true;
		pthread_cond_wait(&t->cv_full, &t->lock);
	}
	if (t->taken < t->produced) {
		idx = (unsigned)(t->taken++ % t->nbuf);
		t->holding = true;
		*p = t->buf[idx] + TIO_HEADROOM;
		n = (ssize_t)t->len[idx];
		pthread_mutex_unlock(&t->lock);
		return n;
	}
	if (t->failed) {
		n = err_set(e, t->name, 0, 0, "%s", t->errmsg);
		pthread_mutex_unlock(&t->lock);
		return n;
	}
	pthread_mutex_unlock(&t->lock);
	return 0;
}

bool tio_set_inline(struct tio *t)
{
	if (!t->thread_started) {
		t->inline_fill = true;
		/*
		 * Filled on demand, one chunk is read while the next is filled: two
		 * buffers, within the region's first 2 MiB, so that one huge page is
		 * zeroed, not two (a fresh huge page cost 1.4-3 ms on this project's
		 * guest, tio_buffers()). Chunk c stays in buffer c mod nbuf: switched
		 * only while no chunk past the second was filled.
		 */
		if (t->produced <= TIO_NBUF_INLINE)
			t->nbuf = TIO_NBUF_INLINE;
	}
	return t->inline_fill;
}

ssize_t tio_peek(struct tio *t, const unsigned char **p, struct err *e)
{
	unsigned char *q;
	ssize_t n;

	if (!t->peeked) {
		BUG_ON(t->taken);
		n = tio_read_chunk(t, &q, e);
		if (n < 0) {
			*p = NULL;
			return n;
		}
		if (!n) {
			/*
			 * An empty stream: a real (empty) buffer, not NULL, so
			 * that the probes' "p + n" is defined (found by fuzzing).
			 */
			*p = t->buf[0] + TIO_HEADROOM;
			return 0;
		}
		t->peeked = true;
	}
	*p = t->buf[0] + TIO_HEADROOM;
	return (ssize_t)t->len[0];
}

int tio_stream_error(struct tio *t, struct err *e)
{
	bool failed;

	pthread_mutex_lock(&t->lock);
	while (!t->done && t->produced - t->released < t->nbuf) {
		if (!t->thread_started) { /* no producer: run ahead as far as it would */
			tio_fill_inline(t);
			continue;
		}
		pthread_cond_wait(&t->cv_full, &t->lock);
	}
	failed = t->done && t->failed;
	pthread_mutex_unlock(&t->lock);
	if (failed)
		return err_set(e, t->name, 0, 0, "%s", t->errmsg);
	return 0;
}

/* Ask the producer to stop, wherever it waits. */
static void tio_stop(struct tio *t)
{
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_broadcast(&t->cv_free);
	pthread_cond_broadcast(&t->cv_full);
	pthread_mutex_unlock(&t->lock);
	/* Wakes the producer if it waits for input; otherwise it sees @stop. */
	if (write(t->wake[1], "", 1) < 0) {
		/* full already: a wake-up is pending anyway */
	}
}

double tio_fraction(const struct tio *t)
{
	uint64_t c = __atomic_load_n(&t->consumed, __ATOMIC_RELAXED);

	if (!t->total)
		return -1;
	return c >= t->total ? 1.0 : (double)c / (double)t->total;
}

bool tio_content_hash(struct tio *t, uint64_t *size, uint64_t *hi, uint64_t *lo)
{
	bool done;
	XXH128_hash_t h;

	if (!t || !t->hash)
		return false;
	pthread_mutex_lock(&t->lock);
	done = t->done && !t->failed; /* the producer has stopped touching the hash */
	pthread_mutex_unlock(&t->lock);
	if (!done || t->hashed != t->size)
		return false;
	h = XXH3_128bits_digest(t->hash);
	*size = t->size;
	*hi = h.high64;
	*lo = h.low64;
	return true;
}

void tio_close(struct tio *t)
{
	if (!t)
		return;
	if (t->thread_started) {
		tio_stop(t);
		pthread_join(t->thread, NULL);
	}
	tio_free(t);
}

/* --- whole lines, for the text readers -------------------------------------- */

void tio_lines_init(struct tio_lines *l)
{
	l->p = l->end = l->rest = l->save;
	l->rest_len = 0;
}

int tio_lines_refill(struct tio *io, struct tio_lines *l, struct err *e)
{
	size_t r = l->rest_len;
	const unsigned char *start, *stop, *nl;
	unsigned char *q;
	ssize_t len;

	if (r > TIO_MAXLINE)
		return -2;
	memcpy(l->save, l->rest, r);
	l->rest_len = 0;
	len = tio_read_chunk(io, &q, e);
	if (len < 0)
		return -1;
	if (!len) {
		if (!r)
			return 0;
		l->save[r] = '\n';
		l->p = l->save;
		l->end = l->save + r + 1;
		return 1;
	}
	/* the carried line goes in front of the chunk */
	_Static_assert(TIO_HEADROOM > TIO_MAXLINE, "a carried line must fit before a chunk");
	memcpy(q - r, l->save, r);
	start = q - r;
	stop = q + len;
	nl = memrchr(start, '\n', (size_t)(stop - start));
	if (!nl) {
		if (stop - start > TIO_MAXLINE)
			return -2;
		l->p = l->end = l->rest = start;
		l->rest_len = (size_t)(stop - start);
		return 1;
	}
	l->p = start;
	l->end = nl + 1;
	l->rest = nl + 1;
	l->rest_len = (size_t)(stop - (nl + 1));
	return 1;
}
