/*
 * trace_info.h - what a trace holds (`mmusim trace info`): records by kind,
 * instructions, distinct 4 KiB pages, the address range and the OS events;
 * the pages touched while nothing was recorded (R_TOUCH), apart; the
 * dependences (R_DEP) when the source records them.
 */
#ifndef MMUSIM_TRACE_INFO_H
#define MMUSIM_TRACE_INFO_H

#include <stdio.h>

#include "err.h"
#include "trace.h"
#include "types.h"

#define TRACE_INFO_MARKERS 256

struct trace_info {
	uint64_t kinds[R_KIND_NR]; /* records of each kind */
	uint64_t ev[EV_NR];        /* events of each kind */
	uint64_t insns;            /* instructions counted by R_INSNS records */
	uint64_t lo, hi;           /* lowest and highest byte touched (lo > hi: none) */
	uint64_t pages;            /* distinct 4 KiB pages touched */
	uint64_t touches[TOUCH_NR]; /* R_TOUCH records of each enum touch_how (not references) */
	uint64_t dep_last, dep_max; /* R_DEP records with d = 1; the largest d */
	/* mtr version 6: the process of each of the first TRACE_INFO_MARKERS markers (a list to
	 * print, not a table: a trace's markers are steps, tens of them) */
	uint64_t marker_proc[TRACE_INFO_MARKERS];
	uint64_t cur_proc;         /* the process whose records are being read (EV_SWITCH) */
};

/*
 * Read @tr to its end and count into @in. 0; -1 with @e on a reader error
 * (bad input); -2 with @e when the host runs out of memory (the page set grows
 * with the pages touched).
 */
int trace_info(struct trace_reader *tr, struct trace_info *in, struct err *e);

/* @in as `trace info` prints it, the trace named @tr. */
void trace_info_write(const struct trace_info *in, const struct trace_reader *tr, FILE *out);

#endif
