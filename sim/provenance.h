/*
 * provenance.h - what determines a result, so that a result can say where it
 * came from and a sweep can tell a finished point from a stale one: the build
 * (version and the linker's build id), the effective configuration (a hash of
 * its `config show` text) and the input's identity.
 *
 * The input's identity: a workload is its spec (its seed is in the config); a
 * trace file of up to PROVENANCE_HASH_BYTES is its size and the XXH3-128 hash of
 * its bytes (a copy elsewhere is the same input); a larger one is its device,
 * inode, size and modification time (hashing gigabytes per run would cost more
 * than the run); standard input, a FIFO or a device has none ("stdin",
 * "stream": a sweep never takes two such runs for the same input).
 * An explicit --format is part of it.
 */
#ifndef MMUSIM_PROVENANCE_H
#define MMUSIM_PROVENANCE_H

#include <stddef.h>

#include "config.h"
#include "err.h"

#define MMUSIM_VERSION "0.9.0"
#define PROVENANCE_HASH_BYTES (64u << 20) /* = TIO_HASH_MAX (trace_io.h) */
#define PROVENANCE_ID_MAX 160

/* "0.9.0". */
const char *provenance_version(void);

/*
 * The running program's build id (the ELF NT_GNU_BUILD_ID note the linker
 * writes, in hex), or "none" when it was linked without one. Computed once.
 */
const char *provenance_build_id(void);

/* 16 hex digits: FNV-1a 64 of @c's `config show` text (config_write_yaml). */
void provenance_config_hash(const struct sim_config *c, char out[17]);

/* "content:SIZE:HASH[,format=F]" from a content hash taken elsewhere (trace_content_hash()). */
void provenance_content_id(uint64_t size, uint64_t hi, uint64_t lo, const char *format, char *buf,
			   size_t n);

/*
 * The identity of the input: @workload (a spec) if not NULL, else the trace
 * @path ("-": standard input) read as @format (NULL or "auto": detected). Into
 * @buf (PROVENANCE_ID_MAX). 0, or -1 with @e when the file cannot be read.
 */
int provenance_input_id(const char *path, const char *workload, const char *format, char *buf,
			size_t n, struct err *e);

/*
 * The identity of a run of several processes (@c->processes): each trace's
 * identity as provenance_input_id() gives it, hashed together in list order
 * (XXH3-128) into "processes:N:HASH[,format=F]"; "stream" when any trace is a
 * FIFO or a device (no identity: a sweep never reuses such a run). 0, or -1
 * with @e when a trace cannot be read.
 */
int provenance_processes_id(const struct sim_config *c, const char *format, char *buf, size_t n,
			    struct err *e);

#endif
