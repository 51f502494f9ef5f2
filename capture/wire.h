/*
 * wire.h - the pipe between mmusim's Valgrind tool (capture/mm_main.c, one
 * instance per traced process and image) and `mmusim capture`
 * (capture/capture.c), defined once for both. Plain macros and byte offsets:
 * the tool is built without a C library (no <stdint.h>), the launcher with one.
 *
 * Every process the capture follows writes to the same pipe. A write of at
 * most PIPE_BUF bytes to a pipe is atomic (pipe(7), "PIPE_BUF": not
 * interleaved with other writers' data), so every write is one whole frame of
 * at most WIRE_MAX bytes: a WIRE_HDR-byte header, then `len` bytes of payload.
 *
 *   offset 0  u32 magic   WIRE_DATA, WIRE_IMAGE, WIRE_EXEC, WIRE_FORK, WIRE_EXIT
 *   offset 4  u16 len     payload bytes (<= WIRE_PAYLOAD)
 *   offset 6  u16 flags   WIRE_LAST: the last frame of a flush (WIRE_DATA)
 *   offset 8  u32 pid     the writing process (the kernel's pid, getpid())
 *   offset 12 u32 nrec    WIRE_DATA with WIRE_LAST: mtr records in the whole flush
 *   offset 16 u64 insns   this image's instructions recorded so far (progress line)
 *   offset 24 u64 refs    this image's references recorded so far
 * Little-endian (the tool runs on amd64 only).
 *
 * Payloads:
 *   WIRE_DATA   bytes of the process's mtr record stream (traces/README.md), with
 *               no header and no END record (the launcher writes one header and
 *               one END for the merged file). A flush -- everything the tool
 *               buffered, cut into frames -- always ends at a record boundary;
 *               the launcher splices a flush into the file only once its
 *               WIRE_LAST frame has come, so the flushes of several processes
 *               never interleave inside one.
 *   WIRE_IMAGE  the path of the program an image starts (a Valgrind instance starts
 *               on it: the first image, or one after an execve())
 *   WIRE_EXEC   the path an execve() is called with; empty: that call failed
 *   WIRE_FORK   u32: the pid of the child the process just forked, sent right
 *               after the fork returned in the parent, before any later record
 *   WIRE_EXIT   none: the process's tool ends (its last flush is before it)
 */
#ifndef MMUSIM_WIRE_H
#define MMUSIM_WIRE_H

/* Frame magics, little-endian "MMSF", "MMSX", "MMSE", "MMSK", "MMSQ". */
#define WIRE_DATA 0x46534d4du
#define WIRE_IMAGE 0x58534d4du
#define WIRE_EXEC 0x45534d4du
#define WIRE_FORK 0x4b534d4du
#define WIRE_EXIT 0x51534d4du

#define WIRE_HDR 32
#define WIRE_MAX 4096 /* PIPE_BUF on Linux (include/uapi/linux/limits.h) */
#define WIRE_PAYLOAD (WIRE_MAX - WIRE_HDR)
#define WIRE_LAST 0x1

/* Header field offsets. */
#define WIRE_OFF_MAGIC 0
#define WIRE_OFF_LEN 4
#define WIRE_OFF_FLAGS 6
#define WIRE_OFF_PID 8
#define WIRE_OFF_NREC 12
#define WIRE_OFF_INSNS 16
#define WIRE_OFF_REFS 24

/* The mtr version the launcher writes (process events: sim/trace.h EV_FORK ...). */
#define WIRE_MTR_VERSION 6
#define WIRE_MTR_FLAGS 1 /* version 4's header flag: dependences recorded */

#endif
