/*
 * capture.h - record a real program's memory trace with Valgrind lackey
 * (`mmusim capture [-o OUT] -- PROGRAM ARGS`).
 */
#ifndef MMUSIM_CAPTURE_H
#define MMUSIM_CAPTURE_H

#include "err.h"
#include "types.h"

/* What a capture did (filled also when it fails, as far as it got). */
struct capture_stats {
	uint64_t trace_bytes; /* lackey text read from Valgrind */
	uint64_t out_bytes;   /* bytes written to OUT (compressed size) */
	double seconds;       /* wall time from fork to the end of the output */
	int signo;            /* the SIGINT/SIGTERM/SIGHUP that interrupted it; 0 if none */
};

/*
 * Run `valgrind --tool=lackey --trace-mem=yes --trace-syscalls=yes
 * --child-silent-after-fork=yes --log-fd=N -- PROGRAM ARGS` (@argv: PROGRAM
 * ARGS, NULL-terminated; found in PATH as execvp() would) and stream Valgrind's
 * log, unfiltered, into @out, compressed by its suffix: .zst (zstd level 3),
 * .gz (gzip level 6), .xz (xz preset 1), anything else plain. @out NULL means
 * "basename(PROGRAM).lackey.zst" in the current directory; "-" writes plain
 * text to standard output, and the program's standard output then goes to
 * standard error so it cannot mix into the trace. The program otherwise keeps
 * the caller's standard input, output and error.
 *
 * A regular file is written as OUT.tmp.PID and renamed to @out only when the
 * program exits with status 0; otherwise the temporary is removed. A device, FIFO
 * or standard output ("-") is written in place (outfile.h); when plain text, a last line
 * "**mmusim capture failed: ...**" is written instead, so a reader at the other
 * end of the pipe fails rather than take a partial trace for a whole one).
 * SIGINT, SIGTERM and SIGHUP (those not ignored on entry) are forwarded to
 * Valgrind (a second one kills it) and make the capture fail; while it runs, the calling thread has those
 * signals and SIGPIPE and SIGCHLD blocked (restored on return).
 *
 * Returns 0, or -1 with @e set: "capture: valgrind not found (apt-get install
 * valgrind)", "capture: PROGRAM: command not found", "capture: PROGRAM exited
 * with status N", "capture: PROGRAM killed by signal N (NAME)", "capture:
 * interrupted by signal N (NAME)", "OUT: write error: ..."; or -2 with @e set
 * when OUT cannot be opened ("OUT: Is a directory", "OUT: No such file or
 * directory": bad input). @st may be NULL.
 */
int capture_run_stats(const char *out, char *const argv[], struct capture_stats *st,
		      struct err *e);

/* capture_run_stats() without the statistics. */
int capture_run(const char *out, char *const argv[], struct err *e);

#endif
