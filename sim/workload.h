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

/* Whether @s names a built-in workload (the text before any ':'; the rest unchecked). */
bool workload_is_spec(const char *s);

/*
 * Workload parameters as sweep axes (sweep.h, "workload.KEY"). Whether @key
 * names a parameter of some workload (size, iterations, updates, steps,
 * stride, passes, alpha, refs, seed, madvise).
 */
bool workload_param_known(const char *key);

/*
 * @val of parameter @key as the number it stands for, into @buf: sizes in
 * bytes and counts as plain integers ("16M" -> "16777216"), alpha as written
 * in %.15g, madvise 0 or 1. 0, or -1 when @key is unknown or @val bad.
 */
int workload_param_number(const char *key, const char *val, char *buf, size_t n);

/*
 * @spec with its parameter @key set to @val (the value replaced where the
 * spec gives it, else appended): a new string the caller frees (not checked:
 * workload_check() it), or NULL with @e when out of memory.
 */
char *workload_with_param(const char *spec, const char *key, const char *val, struct err *e);

/* @spec less its parameter @key ("gups:size=1M,updates=9" less size: "gups:updates=9";
 * "gups:size=1M": "gups"): a new string, or NULL when out of memory. */
char *workload_without_param(const char *spec, const char *key);

#endif
