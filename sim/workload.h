/*
 * workload.h - built-in synthetic workloads as record sources (see DESIGN.md,
 * "Workloads"): stream, gups, chase, stride, zipf. Each emits the mmap (and with
 * madvise=1 the MADV_HUGEPAGE madvise) events a real program would, then its
 * references, reproducibly from its seed (GSL mt19937).
 */
#ifndef MMUSIM_WORKLOAD_H
#define MMUSIM_WORKLOAD_H

#include "config.h"
#include "trace.h"

/*
 * Open the workload named by @spec ("stream:size=64M,iterations=2"). @seed is
 * used when the spec has no seed= key. Returns a reader or NULL with @e set
 * ("-w: unknown workload 'x'", "-w: stream: unknown parameter 'foo'", ...).
 */
struct trace_reader *workload_open(const char *spec, uint64_t seed, struct err *e);

/*
 * The same for the kernel release @kernel (os.kernel), whose mmap placement the
 * workload's mappings get (workload.c, "Address layout"); workload_open() is
 * this with KERNEL_DEFAULT.
 */
struct trace_reader *workload_open_kernel(const char *spec, uint64_t seed, enum os_kernel kernel,
					  struct err *e);

/*
 * Check @spec as workload_open() does -- the same errors, in the same order --
 * without building the generator (no allocation that grows with the size).
 * Returns 0, or -1 with @e set. A spec that passes opens, unless memory runs out.
 */
int workload_check(const char *spec, struct err *e);

#endif
