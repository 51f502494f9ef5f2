/*
 * fuzz.h - the libFuzzer harnesses of every input parser (tests/fuzz/fuzz_*.c)
 * and the helpers they share (tests/fuzz/common.c).
 *
 * Each harness is one body, fuzz_<name>_one(data, size), which feeds the
 * bytes through the parser and checks what the parser promises (trace.h,
 * config.h, workload.h, sweep.h); a broken promise aborts through
 * FUZZ_ASSERT(). It returns 0 (libFuzzer's "keep going"). The libFuzzer entry
 * point LLVMFuzzerTestOneInput() is compiled only with -DFUZZ_MAIN
 * (tests/fuzz/run.sh), so tests/check_fuzz_regress.c can #include every
 * harness and run the committed crash inputs and seeds through the same
 * bodies under the ordinary gcc build.
 *
 * Harness state (the scratch directory, filler buffers) lives in function
 * statics: libFuzzer's entry point takes no context. Everything a harness
 * allocates per input is freed before it returns, so LeakSanitizer judges
 * the parser alone.
 */
#ifndef MMUSIM_FUZZ_H
#define MMUSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "../../sim/trace.h"

/* The harness bodies: run one input. Always 0; a failed check aborts. */
int fuzz_lackey_one(const uint8_t *d, size_t n);
int fuzz_mtr_one(const uint8_t *d, size_t n);
int fuzz_pin_one(const uint8_t *d, size_t n);
int fuzz_champsim_one(const uint8_t *d, size_t n);
int fuzz_din_one(const uint8_t *d, size_t n);
int fuzz_trace_auto_one(const uint8_t *d, size_t n);
int fuzz_decompress_one(const uint8_t *d, size_t n);
int fuzz_config_one(const uint8_t *d, size_t n);
int fuzz_config_set_one(const uint8_t *d, size_t n);
int fuzz_workload_one(const uint8_t *d, size_t n);
int fuzz_sweep_one(const uint8_t *d, size_t n);

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
#endif

/* Print "fuzz check failed at FILE:LINE: what" and abort(). */
_Noreturn void fuzz_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define FUZZ_ASSERT(cond, ...)                                     \
	do {                                                       \
		if (!(cond))                                       \
			fuzz_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

/*
 * A path "DIR/NAME" in this process's scratch directory (created on first
 * use under $TMPDIR or /tmp, removed at exit). Returns a static buffer.
 */
const char *fuzz_path(const char *name);

/* Write @n bytes to @path (truncating), or abort: the harness cannot go on. */
void fuzz_write(const char *path, const void *d, size_t n);

/* A copy of @d with a NUL appended (the caller frees). */
char *fuzz_strndup(const uint8_t *d, size_t n);

/* FNV-1a of @d: a deterministic choice per input (offsets, suffixes). */
uint64_t fuzz_hash(const uint8_t *d, size_t n);

/* Does @d start with a gzip, xz or zstd magic (the stream is decompressed)? */
bool fuzz_is_compressed(const uint8_t *d, size_t n);

/*
 * The most records @n bytes of an uncompressed trace of @fmt can give (the
 * shortest record line or record of the format); SIZE_MAX for others.
 */
size_t fuzz_trace_bound(enum trace_format fmt, size_t n);

/* What a read handed out, for comparing two reads of the same data. */
struct fuzz_trace_out {
	struct trace_rec *rec; /* events with size 0 ... */
	struct os_event *ev;   /* ... and their event here (line 0; zeroed for others) */
	size_t n, cap;
	bool failed; /* the open or a read failed, with @msg */
	bool cut;    /* stopped at max_batches */
	char msg[512];
};

void fuzz_trace_out_free(struct fuzz_trace_out *out);

/*
 * Open @path as @fmt and read it to the end (or to @max_batches batches),
 * checking on every call: a batch of n > 0 records and nothing in the error,
 * or -1 with a non-empty message naming @path, never both; 0 only at the
 * end, and again after it; every record well formed (kind, size >= 1,
 * address below 2^57, an event's index inside the batch's events); the
 * reader of the format asked for. @nbytes: the file's size when it is not
 * compressed (SIZE_MAX if it is): then the trace holds at most
 * fuzz_trace_bound(format, @nbytes) + @extra records. @out (if not NULL)
 * gets the records from the @skip-th on, and the outcome.
 * Returns the records read, or SIZE_MAX if the open or a read failed.
 */
size_t fuzz_trace_drain(const char *path, enum trace_format fmt, size_t nbytes, size_t extra,
			unsigned max_batches, struct fuzz_trace_out *out, size_t skip);

/*
 * A trace harness, described by its format. fuzz_trace_run() reads the input
 * as a file of @fmt (fuzz_trace_drain(), with the format's bound unless the
 * input starts with a compression magic); then, for one input in eight,
 * reads it again placed behind @fill's neutral content so that it straddles
 * the first chunk boundary (TIO_CHUNK), where the readers stitch lines and
 * records, and checks that both reads give the same records and fail alike.
 */
struct fuzz_trace_fmt {
	const char *name;          /* the harness: file names in the scratch directory */
	enum trace_format fmt;
	/* Fill @len bytes (a multiple of @align) with content that parses to
	 * @fill_recs(len) records and leaves the reader at a record boundary. */
	void (*fill)(uint8_t *buf, size_t len);
	size_t (*fill_recs)(size_t len);
	size_t align;
	/* Leading input bytes left out behind the filler (a header), or NULL. */
	size_t (*skip)(const uint8_t *d, size_t n);
};

void fuzz_trace_run(const struct fuzz_trace_fmt *f, const uint8_t *d, size_t n);

/*
 * Does the first YAML document of @d repeat a key in its top-level mapping
 * (@deep: in any mapping)? False if it does not parse.
 */
bool fuzz_yaml_dup_key(const uint8_t *d, size_t n, bool deep);

/*
 * config_write_yaml(@c) loaded onto the defaults must give @c again, byte
 * for byte (config.h: "YAML that config_load_file() reads back").
 */
struct sim_config;
void fuzz_config_roundtrip(const struct sim_config *c);

/*
 * Filler for the line formats: lines of 1024 bytes (the last one shorter)
 * that start with @head, then 'x's (a line that parses to nothing, such as
 * lackey's "==0== ..." message or din's flush escape "4 0 comment"); or
 * lines of blanks (every line reader skips them, but trims them byte by byte).
 */
void fuzz_fill_lines(uint8_t *buf, size_t len, const char *head);
void fuzz_fill_blank_lines(uint8_t *buf, size_t len);
size_t fuzz_no_recs(size_t len);

#endif
