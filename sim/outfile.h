/*
 * outfile.h - every result file mmusim writes (run --json and --timeline, trace
 * convert and gen, capture -o, sweep -o and merge, plot outputs) goes through here,
 * so that a result is either whole or absent, and a write never replaces what is
 * not a regular file.
 *
 * What a path names decides how it is written:
 *   - nothing yet, or a regular file: a temporary in the same directory
 *     ("NAME.tmp.PID"), fsync, then rename over NAME (a failed or interrupted
 *     write leaves no file and keeps the old one); an existing file keeps its
 *     permission bits;
 *   - a symbolic link: followed (up to 40 links) and its final target replaced
 *     the same way; the link stays a link;
 *   - "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor
 *     itself (duplicated), written in place at its offset and with its flags;
 *   - anything else (a character or block device, a FIFO, a socket, a path
 *     through /proc): opened and written in place, no temporary, no rename;
 *   - a directory: an error, "PATH: Is a directory".
 * In-place writes cannot be taken back: a failure after the first byte leaves
 * what was written (a reader of a FIFO sees a truncated stream).
 *
 * One thread opens, writes and commits a given file; threads may each write
 * files of their own at once (a sweep worker's reports). The
 * temporaries not yet committed are remembered (at most OUTFILE_PENDING_MAX at
 * once) so that a signal handler can remove them (outfile_remove_pending()).
 */
#ifndef MMUSIM_OUTFILE_H
#define MMUSIM_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"

#define OUTFILE_PENDING_MAX 16

/* outfile_open() flags */
enum {
	/*
	 * An external program writes the file by name (gnuplot's `set output`):
	 * outfile_tool_path() gives a regular file to write; in place, that is a
	 * private temporary whose bytes commit copies to the destination.
	 */
	OUTFILE_BY_PATH = 1u << 0,
};

struct outfile {
	int fd;           /* where the bytes go (-1 once closed) */
	FILE *f;          /* stdio over fd, made by outfile_stream() */
	char *name;       /* the path as given, for messages ("<stdout>" for "-") */
	char *target;     /* the regular file that commit renames over (links followed) */
	char *tmp;        /* its temporary; NULL when writing in place */
	char *tool_tmp;   /* OUTFILE_BY_PATH in place: the private temporary */
	int pending;      /* slot in the pending table, or -1 */
	int werr;         /* the first write error met by the stream, or 0 */
	bool in_place;
	bool own_fd;      /* fd is ours to close ("-" is standard output itself) */
};

/*
 * Open @path for writing as the header describes. Returns 0, or -1 with @e set
 * ("PATH: Is a directory", "PATH: Permission denied", ...: bad input).
 */
int outfile_open(struct outfile *o, const char *path, unsigned flags, struct err *e);

/*
 * A stdio stream over the file (made once; owned by @o, which must not move while
 * it is open). Its write errors keep their errno for outfile_commit(). NULL if out
 * of memory.
 */
FILE *outfile_stream(struct outfile *o);

/* The path an external program writes (OUTFILE_BY_PATH). */
const char *outfile_tool_path(const struct outfile *o);

/* True when the destination is written in place (no temporary, no rename). */
bool outfile_in_place(const struct outfile *o);

/*
 * Finish: flush, fsync and rename the temporary over the target (or, in place,
 * flush and copy a tool's output). Returns 0, or -1 with @e ("PATH: No space
 * left on device"; errno is the cause) after removing the temporary. @o is
 * closed either way.
 */
int outfile_commit(struct outfile *o, struct err *e);

/* Throw the result away: close, remove the temporary. Safe after commit or on a zeroed @o. */
void outfile_abort(struct outfile *o);

/*
 * Whether writing @path would replace a regular file (it names one, or nothing
 * yet, directly or through symbolic links) -- as opposed to a device, a FIFO,
 * standard output or a directory. "-" is not.
 */
bool outfile_is_regular_path(const char *path);

/* A file a command reads or writes, for outfile_check_distinct(). */
struct outfile_role {
	const char *path; /* NULL: not given (skipped) */
	const char *what; /* how messages name it: "--json", "the trace", "-o" */
};

/*
 * Before any work, that no output would replace an input or another output:
 * each output of @outs is compared with each input of @ins and with the other
 * outputs by device and inode, links followed as outfile_open() follows them
 * (an input "-" is standard input itself); an output that does not exist yet
 * by its directory's device and inode and its name, so two outputs naming one
 * new file are caught too. Standard output ("-", /dev/stdout, /dev/fd/1) given
 * twice is refused (two results interleaved on one stream cannot be told apart).
 * A character device (/dev/null, a terminal) other than standard output may
 * take several outputs. Paths that do not resolve are left for their open to
 * report. Returns 0, or -1 with @e (bad usage: "OUT: --json is the same file
 * as the trace T; ...").
 */
int outfile_check_distinct(const struct outfile_role *outs, size_t nout,
			   const struct outfile_role *ins, size_t nin, struct err *e);

/* Remove every temporary not yet committed. Async-signal-safe (unlink only). */
void outfile_remove_pending(void);

#endif
