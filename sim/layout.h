/*
 * layout.h - the kernel's layout (os.layout): where Linux would have put every
 * mapping a traced program did not place itself, and the translation that moves
 * each reference of such a mapping there. See layout.c for the rules and sources.
 */
#ifndef MMUSIM_LAYOUT_H
#define MMUSIM_LAYOUT_H

#include <stdio.h>

#include "config.h"
#include "trace.h"

struct layout;

/*
 * A layout for the program @src traced: its mappings at the first instruction
 * (@src->maps; none for a trace that does not record them) as @k places them
 * with address-space randomization off. @src's files name the files of its
 * events as they are read. NULL if memory ran out.
 */
struct layout *layout_new(enum os_kernel k, const struct trace_reader *src);
void layout_free(struct layout *l);

/*
 * Translate one event of the trace (its addresses as recorded) into the events
 * the kernel model gets: usually one, several when the range covers mappings
 * that moved apart, none for a mapping the kernel would not have (Valgrind's
 * own). *@out points at them until the next call. -1 if memory ran out.
 */
int layout_event(struct layout *l, const struct os_event *ev, const struct os_event **out);

/* The address a reference at @va of the trace has in the kernel's layout. */
static inline vaddr_t layout_va(struct layout *l, vaddr_t va);

/*
 * The address space as the kernel's layout has it now, one line per mapping in
 * /proc/PID/maps order: "START-END NAME" (NAME: the file's path, [heap],
 * [stack], [vdso], or nothing for anonymous memory).
 */
void layout_dump(const struct layout *l, FILE *out);

/*
 * Wrap @in so its records come out in the kernel's layout when @c asks for it
 * (os.layout kernel, or auto and @in records its initial mappings); else @in
 * itself. Closing the result closes @in. NULL with @e if memory ran out (@in is
 * closed then).
 */
struct trace_reader *layout_open(struct trace_reader *in, const struct sim_config *c,
				 struct err *e);

/* The wrapped reader's layout (trace info --layout), or NULL if @r is not one. */
struct layout *layout_of(struct trace_reader *r);

/* ---- inline translation: a direct-mapped cache of segments in front of a binary search ---- */

struct layout_seg {
	vaddr_t start, end; /* trace addresses [start, end) */
	int64_t delta;      /* kernel address - trace address */
};

/*
 * Indexed by the 4 KiB page number: references alternate between text, stack
 * and data, each a segment of its own, so one entry would miss at every turn.
 */
#define LAYOUT_HOT 256
struct layout_hot {
	struct layout_seg e[LAYOUT_HOT]; /* end == start: empty */
};

const struct layout_seg *layout_seg_slow(struct layout *l, vaddr_t va);

/* The segment that holds @va (a gap between segments is one of difference 0). */
static inline const struct layout_seg *layout_seg(struct layout *l, vaddr_t va)
{
	const struct layout_seg *e = &((struct layout_hot *)l)->e[(va >> 12) % LAYOUT_HOT];

	if (va - e->start < e->end - e->start)
		return e;
	return layout_seg_slow(l, va);
}

static inline vaddr_t layout_va(struct layout *l, vaddr_t va)
{
	return va + (vaddr_t)layout_seg(l, va)->delta;
}

#endif
