/*
 * trace.c - the format-independent front of the trace layer (trace.h): the
 * names of formats and OS events, and trace_open(), which picks a reader.
 *
 * Detection (TF_AUTO) looks at the content first, decompressed, in this order:
 * the mtr magic; a first non-blank line as lackey writes it ("==pid==",
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
};

enum trace_format trace_format_parse(const char *s)
{
	for (int f = 0; f < TF_NR; f++)
		if (!strcmp(s, trace_format_name[f]))
			return f;
	return TF_NR;
}

/* The format a file name implies (under a compression suffix), or TF_AUTO. */
static enum trace_format trace_format_from_suffix(const char *path)
{
	static const struct {
		const char *suffix;
		enum trace_format fmt;
	} sfx[] = {
		{ ".lackey", TF_LACKEY },
		{ ".mtr", TF_MTR },
		{ ".pin", TF_PIN },
		{ "pinatrace.out", TF_PIN },
		{ ".din", TF_DIN },
		{ ".champsim", TF_CHAMPSIM },
		{ ".champsimtrace", TF_CHAMPSIM },
		{ "champsim.trace", TF_CHAMPSIM },
	};
	size_t len = tio_strip_comp_suffix(path);

	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		size_t n = strlen(sfx[i].suffix);

		if (len >= n && !memcmp(path + len - n, sfx[i].suffix, n))
			return sfx[i].fmt;
	}
	return TF_AUTO;
}

void *trace_reader_alloc(size_t size, const struct trace_ops *ops, enum trace_format format,
			 const char *name, struct err *e)
{
	struct trace_reader *r = calloc(1, size);

	if (r)
		r->rec = malloc(TRACE_BATCH * sizeof(*r->rec));
	if (!r || !r->rec) {
		free(r);
		err_set(e, name, 0, 0, "out of memory");
		return NULL;
	}
	r->ops = ops;
	r->format = format;
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

void trace_reader_free(struct trace_reader *r)
{
	if (r)
		free(r->rec);
	free(r);
}

struct trace_reader *trace_open(const char *path, enum trace_format fmt, struct err *e)
{
	struct trace_reader *r;
	const char *shown = strcmp(path, "-") ? path : "<stdin>";
	const unsigned char *p;
	struct tio *io;
	ssize_t n;

	switch (fmt) {
	case TF_AUTO:
	case TF_LACKEY:
	case TF_MTR:
	case TF_PIN:
	case TF_CHAMPSIM:
	case TF_DIN:
		break;
	case TF_WORKLOAD:
		err_set(e, shown, 0, 0, "format 'workload' is not a trace file format (use -w)");
		return NULL;
	default:
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
		if (trace_mtr_probe(p, (size_t)n))
			fmt = TF_MTR;
		else if (trace_lackey_probe(p, (size_t)n))
			fmt = TF_LACKEY;
		else if (trace_pin_probe(p, (size_t)n))
			fmt = TF_PIN;
		else if (trace_din_probe(p, (size_t)n))
			fmt = TF_DIN;
		else if (trace_champsim_probe(p, (size_t)n))
			fmt = TF_CHAMPSIM;
		else if (strcmp(path, "-"))
			fmt = trace_format_from_suffix(path);
		if (fmt == TF_AUTO) {
			err_set(e, shown, 0, 0, "cannot detect the trace format (use --format)");
			tio_close(io);
			return NULL;
		}
	}
	switch (fmt) {
	case TF_MTR:
		r = trace_mtr_open(io, tio_name(io), e);
		break;
	case TF_PIN:
		r = trace_pin_open(io, tio_name(io), e);
		break;
	case TF_CHAMPSIM:
		r = trace_champsim_open(io, tio_name(io), e);
		break;
	case TF_DIN:
		r = trace_din_open(io, tio_name(io), e);
		break;
	default:
		r = trace_lackey_open(io, tio_name(io), e);
		break;
	}
	return r;
}
