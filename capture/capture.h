/*
 * capture.h - record a real program's memory trace under Valgrind, with
 * mmusim's tool (capture/mm_main.c, capture/wire.h) or lackey
 * (`mmusim capture [-o OUT] -- PROGRAM ARGS`).
 */
#ifndef MMUSIM_CAPTURE_H
#define MMUSIM_CAPTURE_H

#include "err.h"
#include "types.h"

/* What a capture did (filled also when it fails, as far as it got). */
struct capture_stats {
	uint64_t trace_bytes; /* lackey text, or the mtr stream, read from Valgrind */
	uint64_t insns, refs; /* mmusim tool: instructions and references recorded (lackey: 0) */
	uint64_t out_bytes;   /* bytes written to OUT (compressed size) */
	double seconds;       /* wall time from fork to the end of the output */
	int signo;            /* the SIGINT/SIGTERM/SIGHUP that interrupted it; 0 if none */
	unsigned execs;       /* mmusim tool: execs followed (the trace is of the last image) */
	char program[256];    /* mmusim tool: the program of that image, as Valgrind ran it */
	uint64_t processes;   /* mmusim tool: processes in the trace (1 + the forks followed) */
	uint64_t process_events; /* mmusim tool: fork, switch, exit and exec events written */
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

/* How to capture (capture_run_opts()). Zeroed: mmusim's tool, no region, no progress. */
struct capture_opts {
	const char *tool;     /* "mmusim" (NULL: the default) or "lackey" */
	uint64_t skip_insns;  /* mmusim tool: record from this instruction on */
	uint64_t max_insns;   /* mmusim tool: record at most this many (0: all) */
	bool roi;             /* mmusim tool: record only between MMUSIM_ROI_BEGIN() and END() */
	bool keep_on_failure; /* a program exiting non-zero keeps its trace (a warning on stderr) */
	bool progress;        /* once a second on stderr: instructions, references, bytes, rate */
	const char *tool_dir; /* the VALGRIND_LIB holding mmusim-amd64-linux; NULL: search */
};

/*
 * capture_run_stats() with @o: tool "mmusim" runs `valgrind -q
 * --tool=mmusim --trace-children=yes --out-fd=N [--skip-insns=N] [--max-insns=N] [--roi=yes] -- PROGRAM ARGS`
 * with VALGRIND_LIB set to the directory holding the tool (o->tool_dir; else
 * $MMUSIM_VALGRIND_LIB; else valgrind/ beside the mmusim binary, as `make`
 * builds it; else ../lib/mmusim/valgrind from it, as `make install` puts it)
 * and writes mtr version 6, compressed by OUT's suffix; @out NULL means
 * "basename(PROGRAM).mtr.zst". The trace follows fork: every process the
 * program forks (and theirs) is in the same file, in the order capture.c's
 * header states, with the process events of trace.h (EV_FORK, EV_SWITCH,
 * EV_EXIT, EV_EXEC, EV_PRCTL). It follows exec (capture/mm_main.c): what the
 * program ran before its last execve() before any fork is dropped; a forked
 * process's exec is an EV_EXEC; an exec that cannot be followed fails, naming
 * the program. Tool "lackey" is
 * capture_run_stats().
 * Errors as capture_run_stats(), and "capture: mmusim's Valgrind tool not
 * found (...)".
 */
int capture_run_opts(const char *out, char *const argv[], const struct capture_opts *o,
		     struct capture_stats *st, struct err *e);

/* capture_run_stats() without the statistics. */
int capture_run(const char *out, char *const argv[], struct err *e);

#endif
