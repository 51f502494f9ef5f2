/*
 * trace.c - the format-independent front of the trace layer (trace.h): the
 * names of formats and OS events, and trace_open(), which picks a reader.
 *
 * The formats are one table (trace_formats[] below): detection, the suffix
 * fallback, opening and the help texts all read it.
 *
 * Detection (TF_AUTO) looks at the content first, decompressed, in the table's
 * order: the mtr magic; a first non-blank line as lackey writes it ("==pid==",
 * "--pid--", "I  ", " L ", " S ", " M ", "SYSCALL["); pinatrace lines
 * ("0x..: R 0x.." or "#eof"); din lines ("2 401000"); ChampSim records
 * (64-byte input_instr, no magic: the first records must pass the reader's
 * checks). Each probe is strict enough that no two can claim the same
 * content (trace_pin.c, trace_din.c, trace_champsim.c say what they test).
 * Only if the content says nothing (empty, or something else) does the file
 * name decide: ".lackey", ".mtr", ".pin", a name ending "pinatrace.out"
 * (Pin's default), ".din", ".champsim", ".champsimtrace" or a name ending
 * "champsim.trace" (the ChampSim tracer's default), possibly under ".gz",
 * ".xz" or ".zst". Standard input has no name.
 *
 * Parsing stays on the caller's thread: a variant that parsed ahead in a
 * third thread was measured no faster on two cores (traces/README.md, Speed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_io.h"

const char *const trace_format_name[TF_NR] = {
	[TF_AUTO] = "auto",     [TF_LACKEY] = "lackey", [TF_MTR] = "mtr",
	[TF_PIN] = "pin",       [TF_CHAMPSIM] = "champsim", [TF_DIN] = "din",
	[TF_WORKLOAD] = "workload",
};

const char *const ev_kind_name[EV_NR] = {
	[EV_MMAP] = "mmap",   [EV_MUNMAP] = "munmap", [EV_MPROTECT] = "mprotect",
	[EV_MADVISE] = "madvise", [EV_BRK] = "brk",   [EV_MREMAP] = "mremap",
	[EV_MARKER] = "marker", [EV_MLOCK] = "mlock", [EV_MUNLOCK] = "munlock",
	[EV_MLOCKALL] = "mlockall", [EV_MUNLOCKALL] = "munlockall",
	[EV_FORK] = "fork", [EV_SWITCH] = "switch", [EV_EXIT] = "exit", [EV_EXEC] = "exec",
	[EV_PRCTL] = "prctl",
};

enum trace_format trace_format_parse(const char *s)
{
	for (int f = 0; f < TF_NR; f++)
		if (!strcmp(s, trace_format_name[f]))
			return f;
	return TF_NR;
}

/*
 * The trace file formats, in detection order: the one list that detection,
 * the suffix fallback, trace_open() and the help texts read. The mtr magic is
 * the strictest probe and ChampSim's (no magic) the loosest, so they come first
 * and last. Suffixes are matched at the end of the name, under a compression
 * suffix.
 */
struct trace_format_info {
	enum trace_format fmt;
	const char *suffix[4]; /* NULL-terminated */
	bool (*probe)(const unsigned char *p, size_t n);
	struct trace_reader *(*open)(struct tio *io, const char *name, struct err *e);
	const char *what;
};

static const struct trace_format_info trace_formats[] = {
	{ TF_MTR, { ".mtr" }, trace_mtr_probe, trace_mtr_open,
	  "mmusim's native binary format (trace convert)" },
	{ TF_LACKEY, { ".lackey" }, trace_lackey_probe, trace_lackey_open,
	  "Valgrind lackey --trace-mem=yes [--trace-syscalls=yes]" },
	{ TF_PIN, { ".pin", "pinatrace.out" }, trace_pin_probe, trace_pin_open,
	  "Intel Pin pinatrace lines \"0x...: R 0x...\"" },
	{ TF_DIN, { ".din" }, trace_din_probe, trace_din_open,
	  "Dinero IV din lines \"LABEL ADDRESS\" (0 read, 1 write, 2 fetch)" },
	{ TF_CHAMPSIM, { ".champsim", ".champsimtrace", "champsim.trace" }, trace_champsim_probe,
	  trace_champsim_open, "ChampSim 64-byte input_instr records" },
};

static const struct trace_format_info *trace_format_info(enum trace_format fmt)
{
	for (size_t i = 0; i < ARRAY_SIZE(trace_formats); i++)
		if (trace_formats[i].fmt == fmt)
			return &trace_formats[i];
	return NULL;
}

/* The format a file name implies (under a compression suffix), or TF_AUTO. */
static enum trace_format trace_format_from_suffix(const char *path)
{
	size_t len = tio_strip_comp_suffix(path);

	for (size_t i = 0; i < ARRAY_SIZE(trace_formats); i++)
		for (const char *const *sfx = trace_formats[i].suffix; *sfx; sfx++) {
			size_t n = strlen(*sfx);

			if (len >= n && !memcmp(path + len - n, *sfx, n))
				return trace_formats[i].fmt;
		}
	return TF_AUTO;
}

/* The format whose probe claims the first bytes @p, @n, or TF_AUTO. */
static enum trace_format trace_format_probe(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(trace_formats); i++)
		if (trace_formats[i].probe(p, n))
			return trace_formats[i].fmt;
	return TF_AUTO;
}

const char *trace_format_list(void)
{
	static char list[128];

	if (!list[0]) {
		size_t len = 0, nf = ARRAY_SIZE(trace_formats);

		for (size_t i = 0; i < nf; i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						i == 0 ? "" : i + 1 < nf ? ", " : " or ",
						trace_format_name[trace_formats[i].fmt]);
	}
	return list;
}

void trace_formats_help(FILE *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(trace_formats); i++) {
		const struct trace_format_info *f = &trace_formats[i];
		char sfx[64];
		size_t len = 0;

		for (const char *const *s = f->suffix; *s; s++)
			len += (size_t)snprintf(sfx + len, sizeof(sfx) - len, "%s%s",
						s == f->suffix ? "" : " ", *s);
		fprintf(out, "  %-9s %-38s %s\n", trace_format_name[f->fmt], sfx, f->what);
	}
}

void *trace_reader_alloc(size_t size, const struct trace_ops *ops, enum trace_format format,
			 const char *name, struct err *e)
{
	struct trace_reader *r = calloc(1, size);

	if (r)
		r->rec = malloc(TRACE_BATCH * sizeof(*r->rec));
	if (!r || !r->rec) {
		free(r);
		err_host(e, name, 0, 0, "out of memory");
		return NULL;
	}
	r->ops = ops;
	r->format = format;
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

void trace_reader_free(struct trace_reader *r)
{
	if (r) {
		free(r->rec);
		for (size_t i = 0; i < r->nmaps; i++)
			free(r->maps[i].name);
		free(r->maps);
		for (size_t i = 0; i < r->nfiles; i++)
			free(r->files[i].path);
		free(r->files);
	}
	free(r);
}

struct trace_reader *trace_open(const char *path, enum trace_format fmt, struct err *e)
{
	const char *shown = strcmp(path, "-") ? path : "<stdin>";
	const unsigned char *p;
	struct trace_reader *r;
	struct tio *io;
	ssize_t n;

	if (fmt == TF_WORKLOAD) {
		err_set(e, shown, 0, 0, "format 'workload' is not a trace file format (use -w)");
		return NULL;
	}
	if (fmt != TF_AUTO && !trace_format_info(fmt)) {
		err_set(e, shown, 0, 0, "unknown trace format %d", (int)fmt);
		return NULL;
	}
	io = tio_open(path, e);
	if (!io)
		return NULL;
	if (fmt == TF_AUTO) {
		n = tio_peek(io, &p, e);
		if (n < 0) {
			tio_close(io);
			return NULL;
		}
		fmt = trace_format_probe(p, (size_t)n);
		if (fmt == TF_AUTO && strcmp(path, "-"))
			fmt = trace_format_from_suffix(path);
		if (fmt == TF_AUTO) {
			err_set(e, shown, 0, 0, "cannot detect the trace format (use --format)");
			tio_close(io);
			return NULL;
		}
	}
	r = trace_format_info(fmt)->open(io, tio_name(io), e);
	if (r)
		r->io = io; /* (the reader owns it and closes it) */
	return r;
}

bool trace_set_inline(struct trace_reader *r)
{
	return r->io && tio_set_inline(r->io);
}

double trace_fraction(const struct trace_reader *r)
{
	return r && r->io ? tio_fraction(r->io) : -1;
}

bool trace_content_hash(const struct trace_reader *r, uint64_t *size, uint64_t *hi, uint64_t *lo)
{
	return r && r->io && tio_content_hash(r->io, size, hi, lo);
}
