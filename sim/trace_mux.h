/*
 * trace_mux.h - several traces as the processes of one machine (`mmusim run A B`,
 * a config's processes: list): a reader over readers that interleaves them on one
 * core in slices of sched.quantum instructions, with the process events of mtr
 * version 6 (trace.h: EV_SWITCH, EV_EXIT, EV_PRCTL) between the slices. See
 * trace_mux.c for the rules.
 */
#ifndef MMUSIM_TRACE_MUX_H
#define MMUSIM_TRACE_MUX_H

#include "config.h"
#include "trace.h"

/*
 * How the mux opens the trace of one run of process @i (again for each repeat):
 * a reader, or NULL with @e.
 */
struct mux_opener {
	struct trace_reader *(*open)(void *arg, unsigned i, const struct proc_cfg *p,
				     struct err *e);
	void *arg;
};

/*
 * A reader of the @n processes @procs (a copy is kept) sliced every @quantum
 * instructions (> 0), each run of a process's trace opened through @op when it
 * starts. Nothing is opened before the first trace_next(). NULL with @e if
 * memory ran out.
 */
struct trace_reader *mux_open(const struct proc_cfg *procs, unsigned n, uint64_t quantum,
			      const struct mux_opener *op, struct err *e);

/*
 * The processes of @c (c->nprocs > 0), each trace opened as @fmt (TF_AUTO:
 * detected) and laid out as @c's os.layout says (layout_open(): every process
 * has its own address space). Every trace is opened once here, so a missing or
 * undetectable one is reported now: NULL with @e.
 */
struct trace_reader *mux_open_config(const struct sim_config *c, enum trace_format fmt,
				     struct err *e);

#endif
