/*
 * common.c - what the fuzz harnesses share (fuzz.h): the scratch directory,
 * the failure report, and the trace drain that checks every reader's
 * contract (trace.h) batch by batch.
 *
 * Linked into every harness by tests/fuzz/run.sh, and #included once by
 * tests/check_fuzz_regress.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "../../sim/config.h"
#include "../../sim/trace_io.h"
#include "fuzz.h"

void fuzz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz check failed at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static char fuzz_dir[256];

/* atexit: remove the scratch directory and whatever the harnesses left in it. */
static void fuzz_cleanup(void)
{
	DIR *dir = opendir(fuzz_dir);
	struct dirent *de;
	char p[512];

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", fuzz_dir, de->d_name);
		unlink(p);
	}
	closedir(dir);
	rmdir(fuzz_dir);
}

const char *fuzz_path(const char *name)
{
	static char buf[512];

	if (!fuzz_dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/mmusim-fuzz.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(fuzz_dir))
			fuzz_fail(__FILE__, __LINE__, "mkdtemp %s: %s", fuzz_dir, strerror(errno));
		atexit(fuzz_cleanup);
	}
	snprintf(buf, sizeof(buf), "%s/%s", fuzz_dir, name);
	return buf;
}

void fuzz_write(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f))
		fuzz_fail(__FILE__, __LINE__, "cannot write %s: %s", path, strerror(errno));
}

char *fuzz_strndup(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		abort();
	if (n)
		memcpy(s, d, n);
	s[n] = '\0';
	return s;
}

uint64_t fuzz_hash(const uint8_t *d, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 0x100000001b3ULL;
	return h;
}

bool fuzz_is_compressed(const uint8_t *d, size_t n)
{
	static const uint8_t gz[] = { 0x1f, 0x8b }, xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0 },
			     zs[] = { 0x28, 0xb5, 0x2f, 0xfd };

	return (n >= sizeof(gz) && !memcmp(d, gz, sizeof(gz))) ||
	       (n >= sizeof(xz) && !memcmp(d, xz, sizeof(xz))) ||
	       (n >= sizeof(zs) && !memcmp(d, zs, sizeof(zs)));
}

/* An error after a failed call: a message, and the file named. */
static void check_err(const struct err *e, const char *path, const char *what)
{
	FUZZ_ASSERT(e->msg[0], "%s failed with an empty message", what);
	FUZZ_ASSERT(!strcmp(e->file, path), "%s: error names '%s', not '%s' (%s)", what, e->file,
		    path, e->msg);
}

/* Nothing in @e: a call that succeeded must not have filled it. */
static void check_no_err(const struct err *e, const char *what)
{
	FUZZ_ASSERT(!e->msg[0] && !e->file[0], "%s succeeded but set an error: %s: %s", what,
		    e->file, e->msg);
}

static void check_batch(const struct trace_batch *b, int r)
{
	FUZZ_ASSERT(b->n == (size_t)r, "returned %d but the batch holds %zu", r, b->n);
	FUZZ_ASSERT(b->n <= TRACE_BATCH && b->nev <= TRACE_BATCH, "batch of %zu records, %zu events",
		    b->n, b->nev);
	for (size_t i = 0; i < b->n; i++) {
		const struct trace_rec *t = &b->recs[i];

		FUZZ_ASSERT(t->kind < R_KIND_NR, "record %zu: kind %u", i, t->kind);
		if (t->kind == R_EVENT) {
			FUZZ_ASSERT(t->size < b->nev, "record %zu: event %u of %zu", i, t->size,
				    b->nev);
			FUZZ_ASSERT(b->ev[t->size].kind < EV_NR, "event %u: kind %u", t->size,
				    b->ev[t->size].kind);
			continue;
		}
		FUZZ_ASSERT(t->size >= 1, "record %zu: size 0", i);
		if (t->kind != R_INSNS)
			FUZZ_ASSERT(t->addr < VADDR_LIMIT, "record %zu: address 0x%llx", i,
				    (unsigned long long)t->addr);
	}
}

size_t fuzz_trace_bound(enum trace_format fmt, size_t n)
{
	switch (fmt) {
	case TF_LACKEY:
		/* shortest record line "I  0,1\n" (7 bytes; a last line gets its newline) */
		return (n + 1) / 7;
	case TF_MTR:
		/* every record takes at least its tag byte */
		return n;
	case TF_PIN:
		/* shortest line "0x0: R 0x0\n" (11 bytes) gives a fetch and an access */
		return 2 * ((n + 1) / 11);
	case TF_DIN:
		/* shortest line "0 0\n" (4 bytes) */
		return (n + 1) / 4;
	case TF_CHAMPSIM:
		/* a 64-byte record gives a fetch, 4 loads and 2 stores at most */
		return 7 * (n / 64);
	default:
		return SIZE_MAX;
	}
}

/* Append the records of @b from its @skip-th on to @out (events by content). */
static void out_add(struct fuzz_trace_out *out, const struct trace_batch *b, size_t *skip)
{
	for (size_t i = 0; i < b->n; i++) {
		struct trace_rec t = b->recs[i];
		struct os_event ev = { 0 };

		if (*skip) {
			(*skip)--;
			continue;
		}
		if (out->n == out->cap) {
			out->cap = out->cap ? 2 * out->cap : 4096;
			out->rec = realloc(out->rec, out->cap * sizeof(*out->rec));
			out->ev = realloc(out->ev, out->cap * sizeof(*out->ev));
			if (!out->rec || !out->ev)
				abort();
		}
		if (t.kind == R_EVENT) {
			ev = b->ev[t.size];
			ev.line = 0; /* where it came from: the filler moves it */
			t.size = 0;  /* the index depends on the batch */
		}
		out->rec[out->n] = t;
		out->ev[out->n] = ev;
		out->n++;
	}
}

void fuzz_trace_out_free(struct fuzz_trace_out *out)
{
	free(out->rec);
	free(out->ev);
	memset(out, 0, sizeof(*out));
}

size_t fuzz_trace_drain(const char *path, enum trace_format fmt, size_t nbytes, size_t extra,
			unsigned max_batches, struct fuzz_trace_out *out, size_t skip)
{
	struct err e = { 0 };
	struct trace_reader *r = trace_open(path, fmt, &e);
	struct trace_batch b;
	size_t total = 0, max_recs;
	unsigned batches = 0;
	int ret;

	if (!r) {
		check_err(&e, path, "trace_open");
		if (out) {
			out->failed = true;
			snprintf(out->msg, sizeof(out->msg), "%s", e.msg);
		}
		return SIZE_MAX;
	}
	check_no_err(&e, "trace_open");
	FUZZ_ASSERT(fmt == TF_AUTO ? r->format > TF_AUTO && r->format < TF_WORKLOAD
				   : r->format == fmt,
		    "asked for format %d, got a reader of %d", (int)fmt, (int)r->format);
	max_recs = nbytes == SIZE_MAX ? SIZE_MAX : fuzz_trace_bound(r->format, nbytes) + extra;
	for (;;) {
		memset(&e, 0, sizeof(e));
		memset(&b, 0, sizeof(b));
		ret = trace_next(r, &b, &e);
		if (ret < 0) {
			check_err(&e, path, "trace_next");
			if (out) {
				out->failed = true;
				snprintf(out->msg, sizeof(out->msg), "%s", e.msg);
			}
			total = SIZE_MAX;
			break;
		}
		check_no_err(&e, "trace_next");
		if (!ret) {
			/* the end stays the end */
			memset(&e, 0, sizeof(e));
			ret = trace_next(r, &b, &e);
			FUZZ_ASSERT(ret == 0, "trace_next after the end returned %d", ret);
			check_no_err(&e, "trace_next after the end");
			break;
		}
		check_batch(&b, ret);
		if (out)
			out_add(out, &b, &skip);
		total += (size_t)ret;
		FUZZ_ASSERT(total <= max_recs, "%zu records from %zu bytes of %s, at most %zu expected",
			    total, nbytes, trace_format_name[r->format], max_recs);
		if (++batches == max_batches) {
			if (out)
				out->cut = true;
			break;
		}
	}
	trace_close(r);
	return total;
}

/* Where the straddled copy goes: this far before the chunk boundary. */
#define FUZZ_STRADDLE_MAX 8192

/*
 * The straddled read (@b, the filler's records left out) must give what the
 * plain read (@a) gave: the same records, and an error exactly when the plain
 * read failed. A failed read hands out no records of the batch it failed in,
 * and filler records move the batch boundaries, so after errors only the
 * records both handed out are compared. @end_count: the format's END record
 * counts the records (mtr), which the filler's records break.
 */
static void compare_reads(const struct fuzz_trace_out *a, const struct fuzz_trace_out *b,
			  bool end_count)
{
	size_t n = a->n < b->n ? a->n : b->n;

	if (a->cut || b->cut)
		return;
	if (!(end_count && !a->failed && b->failed && strstr(b->msg, "record count")))
		FUZZ_ASSERT(a->failed == b->failed, "read at offset 0 %s (%s), across a chunk boundary %s (%s)",
			    a->failed ? "failed" : "succeeded", a->msg,
			    b->failed ? "failed" : "succeeded", b->msg);
	if (!a->failed && !b->failed)
		FUZZ_ASSERT(a->n == b->n, "%zu records at offset 0, %zu across a chunk boundary", a->n,
			    b->n);
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(!memcmp(&a->rec[i], &b->rec[i], sizeof(a->rec[i])) &&
				    !memcmp(&a->ev[i], &b->ev[i], sizeof(a->ev[i])),
			    "record %zu: kind %u addr 0x%llx size %u at offset 0, kind %u addr 0x%llx "
			    "size %u across a chunk boundary", i, a->rec[i].kind,
			    (unsigned long long)a->rec[i].addr, a->rec[i].size, b->rec[i].kind,
			    (unsigned long long)b->rec[i].addr, b->rec[i].size);
}

void fuzz_trace_run(const struct fuzz_trace_fmt *f, const uint8_t *d, size_t n)
{
	/* Plenty for any input libFuzzer makes here; compressed ones may expand 1000x. */
	const unsigned max_batches = 256;
	static const struct fuzz_trace_fmt *last;
	static uint8_t *buf;
	static size_t filled;
	struct fuzz_trace_out plain = { 0 }, straddled = { 0 };
	char name[64];
	const char *path;
	uint64_t h = fuzz_hash(d, n);
	size_t skip, k, fill;
	bool compressed = fuzz_is_compressed(d, n);
	FILE *fp;

	/* the straddled copy: one input in eight (it reads a whole chunk more) */
	skip = f->skip ? f->skip(d, n) : 0;
	if (n <= skip || (h & 7))
		skip = SIZE_MAX;

	snprintf(name, sizeof(name), "in.%s", f->name);
	path = fuzz_path(name);
	fuzz_write(path, d, n);
	fuzz_trace_drain(path, f->fmt, compressed ? SIZE_MAX : n, 0, max_batches,
			 skip == SIZE_MAX || compressed ? NULL : &plain, 0);
	unlink(path);
	if (skip == SIZE_MAX)
		return;

	/* The data starts k bytes before the boundary (the filler fills the rest). */
	k = 1 + (size_t)(h >> 3) % (n - skip < FUZZ_STRADDLE_MAX ? n - skip : FUZZ_STRADDLE_MAX);
	fill = (TIO_CHUNK - k) / f->align * f->align;
	if (!buf) {
		buf = malloc(TIO_CHUNK);
		if (!buf)
			abort();
	}
	if (filled != fill || last != f) {
		f->fill(buf, fill);
		filled = fill;
		last = f;
	}
	fp = fopen(path, "wb");
	if (!fp || fwrite(buf, 1, fill, fp) != fill || fwrite(d + skip, 1, n - skip, fp) != n - skip ||
	    fclose(fp))
		fuzz_fail(__FILE__, __LINE__, "cannot write %s: %s", path, strerror(errno));
	fuzz_trace_drain(path, f->fmt, n - skip, f->fill_recs(fill), 4 * max_batches,
			 &straddled, f->fill_recs(fill));
	unlink(path);
	/*
	 * Compressed data is read raw behind the filler, and data without the
	 * header that the filler supplies is not the same trace: no comparison.
	 */
	if (!compressed && (!f->skip || skip))
		compare_reads(&plain, &straddled, f->fmt == TF_MTR);
	fuzz_trace_out_free(&plain);
	fuzz_trace_out_free(&straddled);
}

void fuzz_fill_lines(uint8_t *buf, size_t len, const char *head)
{
	size_t hl = strlen(head), i = 0;

	/*
	 * Lines of 1024 bytes, the last one up to 64 longer so that it holds
	 * the whole head: well under every reader's 4096-byte line limit.
	 */
	memset(buf, 'x', len);
	while (i < len) {
		size_t end = len - i < 1024 + 64 ? len - 1 : i + 1023;

		memcpy(buf + i, head, end - i < hl ? end - i : hl);
		buf[end] = '\n';
		i = end + 1;
	}
}

void fuzz_fill_blank_lines(uint8_t *buf, size_t len)
{
	memset(buf, ' ', len);
	for (size_t i = 1023; i < len; i += 1024)
		buf[i] = '\n';
	if (len)
		buf[len - 1] = '\n';
}

size_t fuzz_no_recs(size_t len)
{
	(void)len;
	return 0;
}

void fuzz_config_roundtrip(const struct sim_config *c)
{
	struct sim_config back;
	struct err e = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	config_write_yaml(c, f);
	fclose(f);
	config_defaults(&back);
	FUZZ_ASSERT(!config_load_string(&back, text, "written", &e),
		    "config_write_yaml output does not load: %s:%lu:%lu: %s\n%s", e.file, e.line,
		    e.col, e.msg, text);
	if (memcmp(&back, c, sizeof(back))) {
		char *text2 = NULL;
		size_t len2 = 0;

		f = open_memstream(&text2, &len2);
		if (!f)
			abort();
		config_write_yaml(&back, f);
		fclose(f);
		fuzz_fail(__FILE__, __LINE__, "config changed through write and load:\n%s\n--- read back as:\n%s",
			  text, text2);
	}
	free(text);
}

/* Does mapping @node, or with @deep any mapping under it, repeat a scalar key? */
static bool node_dup_key(yaml_document_t *doc, yaml_node_t *node, bool deep, unsigned depth)
{
	if (!node || depth > 64)
		return false;
	if (node->type == YAML_SEQUENCE_NODE) {
		if (deep)
			for (yaml_node_item_t *it = node->data.sequence.items.start;
			     it < node->data.sequence.items.top; it++)
				if (node_dup_key(doc, yaml_document_get_node(doc, *it), deep, depth + 1))
					return true;
		return false;
	}
	if (node->type != YAML_MAPPING_NODE)
		return false;
	for (yaml_node_pair_t *a = node->data.mapping.pairs.start; a < node->data.mapping.pairs.top;
	     a++) {
		yaml_node_t *ka = yaml_document_get_node(doc, a->key);

		for (yaml_node_pair_t *b = a + 1; b < node->data.mapping.pairs.top; b++) {
			yaml_node_t *kb = yaml_document_get_node(doc, b->key);

			if (ka && kb && ka->type == YAML_SCALAR_NODE && kb->type == YAML_SCALAR_NODE &&
			    ka->data.scalar.length == kb->data.scalar.length &&
			    !memcmp(ka->data.scalar.value, kb->data.scalar.value, ka->data.scalar.length))
				return true;
		}
		if (deep && node_dup_key(doc, yaml_document_get_node(doc, a->value), deep, depth + 1))
			return true;
	}
	return false;
}

bool fuzz_yaml_dup_key(const uint8_t *d, size_t n, bool deep)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	bool dup;

	if (!yaml_parser_initialize(&parser))
		abort();
	yaml_parser_set_input_string(&parser, d, n);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_parser_delete(&parser);
		return false;
	}
	dup = node_dup_key(&doc, yaml_document_get_root_node(&doc), deep, 0);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return dup;
}
