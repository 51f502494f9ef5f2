/*
 * trace_io.h - the byte stream under every trace reader: a file or standard
 * input, decompressed in-process (gzip, xz, zstd) by a background thread.
 *
 * The stream is handed out as contiguous chunks of TIO_CHUNK bytes (only the
 * last one may be shorter), so a parser works on large flat buffers and only
 * has to stitch the one line or record that straddles two chunks. To make that
 * stitch a single memcpy, every chunk has TIO_HEADROOM writable bytes before it
 * and TIO_TAILROOM after it: a parser copies the unfinished tail of the
 * previous chunk in front of the next one and goes on as if it were one buffer.
 *
 * Also here: the constructors and content probes of the format readers, which
 * trace.c calls to open a trace (they are internal to the trace layer, not part
 * of trace.h).
 */
#ifndef MMUSIM_TRACE_IO_H
#define MMUSIM_TRACE_IO_H

#include <sys/types.h>

#include "err.h"
#include "trace.h"
#include "types.h"

/*
 * A documented default, not a fact: 960 KiB chunks, 4 of them. Large enough
 * that the hand-off (a mutex and a condition variable) costs nothing per byte,
 * small enough to stay in the L2/L3 caches; 4 lets the decompressor run ahead
 * of the parser. On the 96 MB validation trace, chunks of 128 KiB to 2 MiB
 * and 3 to 8 buffers all drained it within the run-to-run noise (traces/README.md).
 * 960 KiB rather than 1 MiB: two buffers with their head- and tailroom fit in
 * one 2 MiB huge page, all a reader filling inline uses (TIO_NBUF_INLINE).
 * A multiple of 64 (trace_champsim.c's records never straddle chunks).
 */
#define TIO_CHUNK (960u << 10)
#define TIO_NBUF 4
#define TIO_NBUF_INLINE 2
#define TIO_HEADROOM 8192 /* >= the longest line or record a parser carries over */
#define TIO_TAILROOM 64

enum tio_comp { TIO_NONE, TIO_GZIP, TIO_XZ, TIO_ZSTD, TIO_COMP_NR };

/* "none", "gzip", "xz", "zstd". */
const char *tio_comp_name(enum tio_comp c);

/* The compression that @path's suffix (.gz, .xz, .zst) names; TIO_NONE otherwise. */
enum tio_comp tio_comp_from_suffix(const char *path);

/* Length of @path without a trailing .gz/.xz/.zst suffix (to test the inner suffix). */
size_t tio_strip_comp_suffix(const char *path);

struct tio;

/*
 * Open @path ("-": standard input) for reading. The compression is chosen by
 * the first bytes (gzip 1f 8b, xz fd 37 7a 58 5a 00, zstd 28 b5 2f fd), or by
 * the suffix when the content is empty or a strict prefix of that suffix's
 * magic (then it is a truncated stream). Starts the decompression thread.
 * Returns NULL with @e set: "PATH: No such file or directory", "PATH: Is a
 * directory", "PATH: truncated zstd stream", ...
 */
struct tio *tio_open(const char *path, struct err *e);

/* A regular file up to this size is hashed as it is read (tio_content_hash()). */
#define TIO_HASH_MAX (64ull << 20)

/*
 * The share of a regular file read so far (its bytes as stored, compressed if it
 * is), from 0 to 1; -1 for standard input, a pipe or a device. Any thread.
 */
double tio_fraction(const struct tio *t);

/*
 * The XXH3-128 hash of a regular file's bytes (as stored: compressed if it is),
 * taken as the producer read them: true once the whole file has been read
 * without error, the size it had at open; false for standard input, a pipe, a
 * device, a file over TIO_HASH_MAX or one not read to its end.
 */
bool tio_content_hash(struct tio *t, uint64_t *size, uint64_t *hi, uint64_t *lo);

/* The name used in messages: the path, or "<stdin>" for "-". */
const char *tio_name(const struct tio *t);

/* The compression detected at open. */
enum tio_comp tio_compression(const struct tio *t);

/*
 * The first chunk, without consuming it: the next tio_read_chunk() returns it
 * again. Only valid before the first tio_read_chunk(). Returns its length
 * (0: the stream is empty) and sets *@p, or -1 with @e set.
 */
/*
 * From now on fill chunks on the caller's thread, in tio_read_chunk(), instead of
 * a producer thread: for a caller that reads on a thread of its own already
 * (pool.c's read-ahead). True if so; false if the producer runs already.
 */
bool tio_set_inline(struct tio *t);

ssize_t tio_peek(struct tio *t, const unsigned char **p, struct err *e);

/*
 * The next chunk: returns its length (> 0) and sets *@p, 0 at the end of the
 * stream, or -1 with @e set (read error, "PATH: truncated xz stream", "PATH:
 * corrupt gzip stream"); after 0 or -1 every later call returns the same. The
 * bytes from *@p - TIO_HEADROOM to *@p + length + TIO_TAILROOM belong to the
 * caller until its next call (or tio_close()); an error is reported only after
 * every byte that preceded it has been handed out.
 */
ssize_t tio_read_chunk(struct tio *t, unsigned char **p, struct err *e);

/*
 * Whole lines over a stream, for the text readers (lackey, pin, din): each
 * region [p, end) ends with a newline. The unfinished line at a chunk's end is
 * carried in front of the next chunk (in its TIO_HEADROOM); at the end of the
 * stream a last line without a newline gets one, in @save.
 */
#define TIO_MAXLINE 4096 /* the longest line a text reader accepts, without its newline */

struct tio_lines {
	const unsigned char *p;    /* next byte to parse */
	const unsigned char *end;  /* one past the last newline of the region */
	const unsigned char *rest; /* after @end in the chunk: an unfinished line */
	size_t rest_len;
	/* the carried line; + TIO_TAILROOM for what a fast path may read past it */
	unsigned char save[TIO_MAXLINE + TIO_TAILROOM];
};

/* An empty region, nothing carried. */
void tio_lines_init(struct tio_lines *l);

/*
 * The next region. Returns 1 (a region, possibly empty while a long line
 * gathers), 0 at the end of the stream, -1 with @e set (the stream failed), or
 * -2 when the line after the last region has no newline within TIO_MAXLINE
 * bytes (the caller reports it at its line number).
 */
int tio_lines_refill(struct tio *io, struct tio_lines *l, struct err *e);

/*
 * Call before reporting bad content: garbage decoded from a corrupt stream is
 * the stream's fault, and a checksum may only fail a little later. Waits until
 * the producer has finished or filled the chunks it may run ahead (bounded
 * work); if it failed, fills @e with that error ("PATH: corrupt gzip stream")
 * and returns -1, else returns 0.
 */
int tio_stream_error(struct tio *t, struct err *e);

/* Stop the thread, release everything. NULL is a no-op. */
void tio_close(struct tio *t);

/*
 * The format readers (trace_lackey.c, trace_mtr.c, trace_pin.c, trace_champsim.c, trace_din.c). Each takes ownership of
 * @io (closing it on failure too) and names itself @name; returns NULL with
 * @e set on bad input. The probes say whether the first bytes of a stream
 * (@p, @n, as tio_peek() gives them) look like their format.
 */
struct trace_reader *trace_lackey_open(struct tio *io, const char *name, struct err *e);
bool trace_lackey_probe(const unsigned char *p, size_t n);
struct trace_reader *trace_mtr_open(struct tio *io, const char *name, struct err *e);
bool trace_mtr_probe(const unsigned char *p, size_t n);
struct trace_reader *trace_pin_open(struct tio *io, const char *name, struct err *e);
bool trace_pin_probe(const unsigned char *p, size_t n);
struct trace_reader *trace_champsim_open(struct tio *io, const char *name, struct err *e);
bool trace_champsim_probe(const unsigned char *p, size_t n);
struct trace_reader *trace_din_open(struct tio *io, const char *name, struct err *e);
bool trace_din_probe(const unsigned char *p, size_t n);

#endif
