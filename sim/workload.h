/*
 * workload.h - built-in synthetic workloads as record sources (see DESIGN.md,
 * "Workloads"): stream, gups, chase, stride, zipf. Each emits the mmap (and with
 * madvise=1 the MADV_HUGEPAGE madvise) events a real program would, then its
 * references, reproducibly from its seed (GSL mt19937).
 */
#ifndef MMUSIM_WORKLOAD_H
#define MMUSIM_WORKLOAD_H

#include "trace.h"

/*
 * Open the workload named by @spec ("stream:size=64M,iterations=2"). @seed is
 * used when the spec has no seed= key. Returns a reader or NULL with @e set
 * ("-w: unknown workload 'x'", "-w: stream: unknown parameter 'foo'", ...).
 */
struct trace_reader *workload_open(const char *spec, uint64_t seed, struct err *e);

#endif
