/*
 * capture.c - record a real program: the references and system calls of
 * mmusim's Valgrind tool (capture/mm_main.c: every process, merged here) or
 * Valgrind lackey's, streamed from a pipe into a compressed trace file.
 *
 * valgrind --tool=lackey --trace-mem=yes --trace-syscalls=yes
 *          --child-silent-after-fork=yes --log-fd=N -- PROGRAM ARGS
 * runs with N the write end of a pipe, so the program keeps the user's
 * standard input, output and error and only Valgrind's log comes back. The log
 * is copied as it is (the lackey reader, trace_lackey.c, skips Valgrind's own
 * ==pid== lines and the system calls that are not mapping events) through the
 * compressor that OUT's suffix names, into OUT through outfile.h (a regular file:
 * OUT.tmp.PID, renamed to OUT when the program exits with status 0; a device,
 * FIFO or standard output: in place).
 *
 * Decisions (traces/README.md, "Capturing a real program"):
 * - --child-silent-after-fork=yes: a child that the program forks runs on
 *   under Valgrind and would write its own references into the same log,
 *   mixing two address spaces into one stream with nothing to tell them apart.
 *   Children are not traced (exec'd ones never are, --trace-children=no).
 *   An exec ends lackey's log (its descriptor does not survive it): a log
 *   whose last line is an execve() call with no result fails the capture,
 *   naming the program (cap_lackey_exec()).
 * - mmusim's tool follows exec (capture/mm_main.c, --trace-children=yes):
 *   an "MMSX" frame starts a new image and the output starts again (a
 *   regular file: truncated, the compressor restarted; in place: the first
 *   CAP_HOLD bytes are held in memory, dropped at an exec, an exec after them
 *   fails); an "MMSE" frame (an execve() call) not followed by an image is an
 *   exec Valgrind could not start: the capture fails naming the program.
 *   Valgrind's environment gets an empty LD_PRELOAD when it has none
 *   (cap_env()), so that a direct capture and an exec'd one see the same.
 * - Compression levels are picked so the compressor is never the bottleneck:
 *   lackey under Valgrind writes about 10 MB/s of text on the build machine;
 *   on that text zstd level 3 (ZSTD_CLEVEL_DEFAULT) ran at 800 MB/s, gzip level
 *   6 (Z_DEFAULT_COMPRESSION) at 75 MB/s, xz preset 1 at 70-90 MB/s but the xz
 *   default preset 6 at 5 MB/s, which would slow the capture, hence preset 1.
 * - The end of the capture is Valgrind's exit (SIGCHLD), not the end of the
 *   pipe: a program that starts a daemon passes it the log descriptor, which
 *   would hold the pipe open for ever. Once Valgrind has exited, what is left
 *   in the pipe is read without blocking.
 * - Signals are taken with signalfd() (no handler, no global state): SIGINT,
 *   SIGTERM and SIGHUP, unless the caller ignores them (nohup, a background
 *   job of a non-interactive shell), are forwarded to Valgrind, which hands them to the
 *   program, unless the kernel sent them (si_code SI_KERNEL: a terminal's ^C
 *   or hangup reaches the whole foreground process group, Valgrind included,
 *   so forwarding would deliver it twice). A second one sends SIGKILL. From the
 *   first one on, the output is discarded and the temporary removed.
 * - With OUT "-", a failed capture ends the stream with a line that the lackey
 *   reader rejects, since a lackey trace has no end marker of its own.
 *
 * Several processes (mmusim's tool; capture/wire.h is the pipe's format):
 * every process Valgrind runs the tool in writes frames of at most PIPE_BUF
 * bytes, tagged with its pid, to the one pipe, and flushes its records before
 * each system call. This file merges them into one mtr version 6 stream: it
 * writes the header and the END record itself; process 0 is the program it
 * starts (Valgrind's pid), and a WIRE_FORK makes the next id (1, 2, ...) an
 * EV_FORK in the parent's records; a flush goes into the file whole once its
 * WIRE_LAST frame came, after an EV_SWITCH when another process's records
 * came last; a process's exec is an EV_EXEC (the first process's exec before
 * any fork drops the trace so far, as before); WIRE_EXIT is an EV_EXIT once a
 * fork was seen (a trace of one process has no process event: its records are
 * exactly version 5's). Frames of a pid whose fork has not come yet (a child
 * that runs before its parent sends WIRE_FORK) are held in memory and taken
 * when it comes. The guarantee: a flush is complete in the pipe before the
 * system call that follows it, so whatever a process did before a call that
 * another process can observe (a pipe write, a futex wake, an exit) is in the
 * file before what the other did after the matching call (the read, the wait)
 * returned. Records between system calls of processes running at once are
 * interleaved by flush, not as they ran (no finer clock exists across
 * processes under Valgrind). Ids are the capture's, not the kernel's pids:
 * deterministic across runs and never reused.
 *
 * Left out: writing mtr directly from lackey (pipe the text: `mmusim capture
 * -o - -- prog | mmusim trace convert ...`), following lackey's forked
 * children, and attaching to a running process (Valgrind cannot).
 *
 * Sources: valgrind(1) (--log-fd, --trace-syscalls, --child-silent-after-fork,
 * --trace-children); signalfd(2), pipe(7) (pipe capacity, pipe-max-size);
 * execvp(3) (the PATH search it performs). The compressor and the writes
 * are zout.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "outfile.h"
#include "trace.h"
#include "wire.h"
#include "trace_io.h"
#include "zout.h"

#define CAP_RBUF (1u << 20)  /* bytes taken from the pipe per read() */
/* pipe(7): the default /proc/sys/fs/pipe-max-size, the most an unprivileged F_SETPIPE_SZ gets. */
#define CAP_PIPE_SIZE (1 << 20)
/*
 * Valgrind writes its log one line per write() (14 bytes on average), so a
 * reader that wakes for each one costs as much as the program. After a read
 * that found the pipe less than half full, cap_pump() naps a quarter of the
 * time the pipe takes to fill at the fastest log rate measured here (gzip -6
 * under lackey: 586.6 MB in 21.4 s to /dev/null, 27 MB/s): 9 ms for 1 MiB.
 * On that run the capture to .zst took 39.6 s without the nap and 31.7 s with
 * it; valgrind --log-file= to a plain file took 58.7 s, `| zstd` 40.1 s.
 */
#define CAP_LOG_RATE 27000000.0 /* bytes per second */
#define CAP_GZIP_LEVEL Z_DEFAULT_COMPRESSION /* 6 */
#define CAP_XZ_PRESET 1
#define CAP_ZSTD_LEVEL ZSTD_CLEVEL_DEFAULT /* 3 */

#define CAP_NOTE_MAX WIRE_PAYLOAD /* the tool's longest path (mm_note()) */
/*
 * Written in place (standard output, a FIFO), a trace cannot be taken back once written: the
 * first CAP_HOLD bytes of the mtr stream are held in memory, so that an exec within them (env,
 * sh -c 'exec ...', a #! script, a launcher shim: each well under this) is followed. A
 * documented default: 16 MiB is several million references (2-4 bytes each).
 */
#define CAP_HOLD (16u << 20)
#define CAP_TAIL 8192 /* lackey: the log's last bytes kept, for its last line (a path is 4096) */

/* A traced process (mmusim's tool: one per pid writing to the pipe). */
struct cap_proc {
	uint32_t pid;
	uint64_t id;               /* its id in the file: 0 the first process, then 1, 2, ... */
	bool known;                /* its fork is in the file (or it is the first process) */
	bool exec_pending;         /* an execve() announced, its image not started (yet) */
	char *exec_path;
	unsigned char *flush;      /* a flush being gathered (its frames up to WIRE_LAST) */
	size_t flush_n, flush_cap;
	unsigned char *held;       /* whole frames that came before its fork was seen */
	size_t held_n, held_cap;
	uint64_t insns, refs;      /* its image's counts so far (the progress line) */
};

struct capture {
	const char *prog;
	const struct capture_opts *o;
	bool mm;                         /* mmusim's tool: framed mtr, not lackey text */
	char vglib[PATH_MAX];            /* its VALGRIND_LIB */
	unsigned char fr[WIRE_MAX];      /* a frame being gathered (capture/wire.h) */
	unsigned frn;                    /* bytes of it so far */
	bool bad_frame;
	char note[CAP_NOTE_MAX + 1];     /* the path of a WIRE_IMAGE or WIRE_EXEC frame */
	unsigned images;                 /* the first process's images, the last one kept */
	bool exec_pending;               /* an execve() announced, its image not started (yet) */
	/* the processes (see "Several processes" above) */
	struct cap_proc **procs;         /* live ones, and those whose fork is not seen yet */
	size_t nprocs;
	struct cap_proc *cur;            /* whose records the file shows now (NULL: none) */
	uint64_t next_id;                /* the id of the next forked process */
	uint64_t nrec;                   /* records in the file so far (END's count) */
	bool hdr_done;                   /* the mtr header is written */
	unsigned dropped;                /* processes whose fork never came: frames dropped */
	bool lackey_exec;                /* lackey's log ends in an execve() (cap_lackey_exec()) */
	char exec_path[CAP_NOTE_MAX + 1];
	char lost[CAP_NOTE_MAX + 200];   /* an exec that could not be followed, why */
	char tail[CAP_TAIL + 1];         /* lackey: the log's last bytes (cap_lackey_exec()) */
	size_t tail_n;
	unsigned char *hold;             /* in place: the stream not yet written (CAP_HOLD) */
	size_t hold_n, hold_cap;
	bool holding;
	double t0, next_progress;
	bool progress_shown;
	char out[PATH_MAX];
	struct outfile of; /* the destination (outfile.h) */
	const char *oname; /* for messages: out, or "<stdout>" */
	bool in_place;     /* no temporary: a failure is marked in the stream instead */
	bool to_stdout;    /* the destination is our standard output: the program's goes to stderr */
	int ofd;
	enum tio_comp comp;
	struct zout z; /* the compressor and the writes (zout_free() safe when zeroed) */
	unsigned char *rbuf;
	pid_t pid;
	int rfd; /* read end of the log pipe */
	size_t pipe_cap;
	struct timespec nap; /* see CAP_LOG_RATE */
	int sfd; /* signalfd */
	bool eof, reaped, discard;
	int status;   /* waitpid() status once reaped */
	int intr;     /* first stop signal received */
	int nintr;    /* how many */
	int werr;     /* errno of the first output error, 0 if none */
	const char *werr_what;
	struct capture_stats st;
};

/* The signals that stop a capture (forwarded to the program). */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static double cap_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Find @name as execvp() would: as given if it holds a '/', else in each
 * directory of PATH (default "/bin:/usr/bin"). Returns 0 and the path in @buf,
 * else an errno: ENOENT (nowhere), EACCES (found, not executable), ...
 */
static int cap_find(const char *name, char *buf, size_t n)
{
	const char *path = getenv("PATH"), *p;
	int err = ENOENT;
	struct stat sb;

	if (!*name)
		return ENOENT;
	if (strchr(name, '/')) {
		if (stat(name, &sb))
			return errno;
		if (S_ISDIR(sb.st_mode))
			return EISDIR;
		if (access(name, X_OK))
			return errno;
		snprintf(buf, n, "%s", name);
		return 0;
	}
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t len = (size_t)(end - p);

		/* An empty entry is the current directory, as execvp() takes it. */
		if ((size_t)snprintf(buf, n, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < n &&
		    !stat(buf, &sb) && S_ISREG(sb.st_mode)) {
			if (!access(buf, X_OK))
				return 0;
			err = EACCES;
		}
		if (!*end)
			break;
		p = end;
	}
	return err;
}

static void cap_out_error(struct capture *c, const char *what, int err)
{
	if (!c->werr) {
		c->werr = err;
		c->werr_what = what;
	}
}

/* The compression level or preset per codec (see the header's rates). */
static const int cap_level[TIO_COMP_NR] = {
	[TIO_GZIP] = CAP_GZIP_LEVEL,
	[TIO_XZ] = CAP_XZ_PRESET,
	[TIO_ZSTD] = CAP_ZSTD_LEVEL,
};

/* What a failed compressor records ("OUT: zstd compression failed: Input/output error"). */
static const char *const cap_codec_failed[TIO_COMP_NR] = {
	[TIO_GZIP] = "gzip compression failed",
	[TIO_XZ] = "xz compression failed",
	[TIO_ZSTD] = "zstd compression failed",
};

/*
 * Push @n bytes of log through the compressor into the output; @finish ends
 * the stream. A failure is recorded in c->werr (zout's own message is not
 * used: the capture reports "OUT: WHAT: STRERROR" when it ends).
 */
static int cap_put(struct capture *c, const unsigned char *in, size_t n, bool finish)
{
	int r = finish ? zout_finish(&c->z, in, n, NULL) : zout_write(&c->z, in, n, NULL);

	c->st.out_bytes = c->z.out_bytes;
	if (!r)
		return 0;
	if (c->z.werrno)
		cap_out_error(c, "write error", c->z.werrno);
	else
		cap_out_error(c, cap_codec_failed[c->comp], EIO);
	return -1;
}

/* Stop the program: the output is no longer wanted. */
static void cap_stop(struct capture *c, int sig)
{
	c->discard = true;
	if (!c->reaped)
		kill(c->pid, sig);
}

static void cap_reap(struct capture *c)
{
	pid_t r;

	if (c->reaped)
		return;
	do
		r = waitpid(c->pid, &c->status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->pid) {
		c->reaped = true;
	} else if (r < 0) {
		/* ECHILD: reaped by someone else (SIGCHLD set to SIG_IGN); status unknown. */
		c->reaped = true;
		c->status = -1;
	}
}

static void cap_signals(struct capture *c)
{
	struct signalfd_siginfo si;

	while (read(c->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD) {
			cap_reap(c);
		} else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			if (!c->intr)
				c->intr = sig;
			if (++c->nintr > 1)
				cap_stop(c, SIGKILL);
			else if (si.ssi_code != SI_KERNEL)
				cap_stop(c, sig);
			else
				c->discard = true;
		}
		/* SIGPIPE: the write that caused it fails with EPIPE. */
	}
}

/* Write what is held (in place, see CAP_HOLD): from now on the stream goes out as it comes. */
static int cap_release(struct capture *c)
{
	int r = 0;

	if (c->holding && c->hold_n)
		r = cap_put(c, c->hold, c->hold_n, false);
	c->holding = false;
	free(c->hold);
	c->hold = NULL;
	c->hold_n = c->hold_cap = 0;
	return r;
}

/* Keep @n more bytes in the hold; false when it is full (or cannot grow). */
static bool cap_hold(struct capture *c, const unsigned char *p, size_t n)
{
	if (c->hold_n + n > CAP_HOLD)
		return false;
	if (c->hold_n + n > c->hold_cap) {
		size_t cap = c->hold_cap ? c->hold_cap : CAP_RBUF;
		unsigned char *h;

		while (cap < c->hold_n + n)
			cap *= 2;
		if (cap > CAP_HOLD)
			cap = CAP_HOLD;
		h = realloc(c->hold, cap);
		if (!h)
			return false;
		c->hold = h;
		c->hold_cap = cap;
	}
	memcpy(c->hold + c->hold_n, p, n);
	c->hold_n += n;
	return true;
}

/* lackey: keep the log's last CAP_TAIL bytes. */
static void cap_tail(struct capture *c, const unsigned char *p, size_t n)
{
	if (n >= CAP_TAIL) {
		memcpy(c->tail, p + n - CAP_TAIL, CAP_TAIL);
		c->tail_n = CAP_TAIL;
		return;
	}
	if (c->tail_n + n > CAP_TAIL) {
		size_t drop = c->tail_n + n - CAP_TAIL;

		memmove(c->tail, c->tail + drop, c->tail_n - drop);
		c->tail_n -= drop;
	}
	memcpy(c->tail + c->tail_n, p, n);
	c->tail_n += n;
}

/*
 * lackey: did the log end in an execve() that succeeded? Its descriptor does
 * not survive the exec (--trace-children=no: the new program runs natively),
 * so the last line is the call, "SYSCALL[PID,TID](59) sys_execve ( 0xADDR(PATH),
 * ...)", with no "-->" result after it. The PATH into @path.
 */
static bool cap_lackey_exec(struct capture *c, char *path, size_t n)
{
	char *line, *q, *end;

	c->tail[c->tail_n] = 0;
	line = strrchr(c->tail, '\n');
	line = line ? line + 1 : c->tail;
	if (strncmp(line, "SYSCALL[", 8) || !strstr(line, ") sys_execve ( ") || strstr(line, "-->"))
		return false;
	q = strstr(line, "sys_execve ( ");
	q = q ? strchr(q, '(') : NULL;
	q = q ? strchr(q + 1, '(') : NULL;
	end = q ? strstr(q, "), ") : NULL;
	if (!end)
		snprintf(path, n, "?");
	else
		snprintf(path, n, "%.*s", (int)(end - q - 1), q + 1);
	return true;
}

static void cap_put_stream(struct capture *c, const unsigned char *p, size_t n)
{
	if (!c->mm)
		cap_tail(c, p, n);
	c->st.trace_bytes += n;
	if (c->discard)
		return;
	if (c->holding && cap_hold(c, p, n))
		return;
	if ((c->holding && cap_release(c)) || cap_put(c, p, n, false))
		cap_stop(c, SIGTERM);
}

/*
 * A new image starts (the program exec'd another): the trace so far is
 * dropped; the output starts again, empty. Written in place and out of the
 * hold, it cannot be taken back: the capture fails, naming the program.
 */
static void cap_restart(struct capture *c)
{
	struct err e = { 0 };

	c->st.trace_bytes = 0;
	c->st.insns = c->st.refs = 0;
	c->nrec = 0;
	c->hdr_done = false;
	if (c->discard)
		return;
	if (c->holding) {
		c->hold_n = 0;
		return;
	}
	if (c->in_place) {
		snprintf(c->lost, sizeof(c->lost),
			 "cannot follow the exec of %.1500s: the trace before it (over %u MiB) is "
			 "already written to %.1000s; capture %.1500s directly, or into a file",
			 c->note, CAP_HOLD >> 20, c->oname, c->note);
		cap_stop(c, SIGKILL);
		return;
	}
	zout_free(&c->z);
	if (ftruncate(c->ofd, 0) || lseek(c->ofd, 0, SEEK_SET) < 0) {
		cap_out_error(c, "write error", errno);
		cap_stop(c, SIGKILL);
	} else if (zout_init(&c->z, c->ofd, c->comp, cap_level[c->comp], ZOUT_ZSTD_CHECKSUM, c->out,
			     &e)) {
		cap_out_error(c, cap_codec_failed[c->comp], ENOMEM);
		cap_stop(c, SIGKILL);
	}
	c->st.out_bytes = 0;
}

static uint64_t cap_le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Bytes of the merged mtr stream, after its header (written first, once). */
static void cap_emit(struct capture *c, const unsigned char *p, size_t n)
{
	if (!c->hdr_done) {
		static const unsigned char hdr[16] = { 0x89, 'M', 'T', 'R', '\r', '\n', 0x1a, '\n',
						       WIRE_MTR_VERSION, 0, WIRE_MTR_FLAGS, 0 };

		c->hdr_done = true;
		cap_put_stream(c, hdr, sizeof(hdr));
	}
	if (n)
		cap_put_stream(c, p, n);
}

static unsigned char *cap_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* An EVENT record (traces/README.md) of a process event: @kind, advice 0, @addr; fd -1. */
static void cap_event(struct capture *c, unsigned kind, uint64_t addr)
{
	unsigned char rec[40], *p = rec;

	*p++ = 0xc1; /* EVENT */
	*p++ = (unsigned char)kind;
	p = cap_varint(p, 0); /* prot */
	p = cap_varint(p, 0); /* flags */
	p = cap_varint(p, 1); /* fd -1, zigzag */
	p = cap_varint(p, 0); /* advice */
	p = cap_varint(p, addr);
	for (int i = 0; i < 4; i++) /* len, new_addr, new_len, line */
		p = cap_varint(p, 0);
	cap_emit(c, rec, (size_t)(p - rec));
	c->nrec++;
	c->st.process_events++;
}

/* The file shows @p's records from here (an EV_SWITCH unless it does already). */
static void cap_switch(struct capture *c, struct cap_proc *p)
{
	if (c->cur == p)
		return;
	cap_event(c, EV_SWITCH, p->id);
	c->cur = p;
}

static struct cap_proc *cap_proc_find(struct capture *c, uint32_t pid)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i]->pid == pid)
			return c->procs[i];
	return NULL;
}

static struct cap_proc *cap_proc_new(struct capture *c, uint32_t pid)
{
	struct cap_proc *p = calloc(1, sizeof(*p)), **t;

	t = p ? realloc(c->procs, (c->nprocs + 1) * sizeof(*t)) : NULL;
	if (!t) {
		free(p);
		return NULL;
	}
	c->procs = t;
	p->pid = pid;
	c->procs[c->nprocs++] = p;
	return p;
}

static void cap_proc_free(struct cap_proc *p)
{
	free(p->exec_path);
	free(p->flush);
	free(p->held);
	free(p);
}

static void cap_proc_remove(struct capture *c, struct cap_proc *p)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i] == p) {
			c->procs[i] = c->procs[--c->nprocs];
			break;
		}
	if (c->cur == p)
		c->cur = NULL;
	cap_proc_free(p);
}

/* Append @n bytes at @q to the buffer *@b (*@len bytes of *@cap). False if out of memory. */
static bool cap_grow(unsigned char **b, size_t *len, size_t *cap, const unsigned char *q, size_t n)
{
	if (*len + n > *cap) {
		size_t k = *cap ? *cap : 2 * WIRE_MAX;
		unsigned char *t;

		while (k < *len + n)
			k *= 2;
		t = realloc(*b, k);
		if (!t)
			return false;
		*b = t;
		*cap = k;
	}
	memcpy(*b + *len, q, n);
	*len += n;
	return true;
}

static void cap_bad(struct capture *c, const char *what, int err)
{
	/* Not the tool's framing, or no memory for it: the trace is lost; stop rather than
	 * write garbage. */
	c->bad_frame = true;
	cap_out_error(c, what, err);
	cap_stop(c, SIGKILL);
}

static void cap_frame(struct capture *c, const unsigned char *f);

/* @p's fork is in the file: the frames it wrote before that, in their order. */
static void cap_proc_known(struct capture *c, struct cap_proc *p, uint64_t id)
{
	unsigned char *h = p->held;
	size_t n = p->held_n;

	p->known = true;
	p->id = id;
	p->held = NULL;
	p->held_n = p->held_cap = 0;
	for (size_t off = 0; off < n && !c->bad_frame;)
		cap_frame(c, h + off), off += WIRE_HDR + (size_t)cap_le(h + off + WIRE_OFF_LEN, 2);
	free(h);
}

/* A WIRE_IMAGE or WIRE_EXEC frame of @p (its path in c->note). */
static void cap_note(struct capture *c, struct cap_proc *p, uint32_t magic, size_t len)
{
	if (magic == WIRE_EXEC) {
		p->exec_pending = len > 0;
		free(p->exec_path);
		p->exec_path = strdup(c->note);
		if (p->id == 0 && !c->next_id) {
			c->exec_pending = p->exec_pending;
			memcpy(c->exec_path, c->note, len + 1);
		}
		return;
	}
	p->exec_pending = false;
	p->flush_n = 0;
	if (p->id == 0 && !c->next_id) {
		/* the first process, before any fork: the trace is of its last image */
		if (c->images++)
			cap_restart(c);
		c->cur = p;
		c->st.execs = c->images - 1;
		c->exec_pending = false;
		snprintf(c->st.program, sizeof(c->st.program), "%.*s", (int)sizeof(c->st.program) - 1,
			 c->note);
		return;
	}
	/* a process of several: its exec is an event, the new image's records follow */
	cap_switch(c, p);
	cap_event(c, EV_EXEC, 0);
}

/* One whole frame @f of the tool (capture/wire.h). */
static void cap_frame(struct capture *c, const unsigned char *f)
{
	uint32_t magic = (uint32_t)cap_le(f + WIRE_OFF_MAGIC, 4), pid;
	size_t len = (size_t)cap_le(f + WIRE_OFF_LEN, 2);
	const unsigned char *pl = f + WIRE_HDR;
	struct cap_proc *p;

	pid = (uint32_t)cap_le(f + WIRE_OFF_PID, 4);
	p = cap_proc_find(c, pid);
	if (!p) {
		p = cap_proc_new(c, pid);
		if (!p)
			return cap_bad(c, "out of memory", ENOMEM);
		/* the first process is Valgrind's own (it execs the tool in place) */
		if (pid == (uint32_t)c->pid && !c->images && !c->next_id)
			p->known = true;
	}
	if (!p->known) {
		if (!cap_grow(&p->held, &p->held_n, &p->held_cap, f, WIRE_HDR + len))
			cap_bad(c, "out of memory", ENOMEM);
		return;
	}
	switch (magic) {
	case WIRE_DATA:
		c->st.insns += cap_le(f + WIRE_OFF_INSNS, 8) - p->insns;
		c->st.refs += cap_le(f + WIRE_OFF_REFS, 8) - p->refs;
		p->insns = cap_le(f + WIRE_OFF_INSNS, 8);
		p->refs = cap_le(f + WIRE_OFF_REFS, 8);
		if (!(cap_le(f + WIRE_OFF_FLAGS, 2) & WIRE_LAST)) {
			if (!cap_grow(&p->flush, &p->flush_n, &p->flush_cap, pl, len))
				cap_bad(c, "out of memory", ENOMEM);
			return;
		}
		/* the flush is whole: into the file, after the process's earlier records */
		cap_switch(c, p);
		if (p->flush_n)
			cap_emit(c, p->flush, p->flush_n);
		cap_emit(c, pl, len);
		p->flush_n = 0;
		c->nrec += cap_le(f + WIRE_OFF_NREC, 4);
		return;
	case WIRE_IMAGE:
	case WIRE_EXEC:
		memcpy(c->note, pl, len);
		c->note[len] = 0;
		p->insns = p->refs = 0; /* a new image counts afresh */
		cap_note(c, p, magic, len);
		return;
	case WIRE_FORK: {
		struct cap_proc *ch;
		uint32_t cpid;

		if (len != 4)
			return cap_bad(c, "bad data from the Valgrind tool", EPROTO);
		cpid = (uint32_t)cap_le(pl, 4);
		cap_switch(c, p);
		cap_event(c, EV_FORK, ++c->next_id);
		c->st.processes = c->next_id + 1;
		ch = cap_proc_find(c, cpid);
		if (ch && ch->known)
			return cap_bad(c, "bad data from the Valgrind tool", EPROTO);
		if (!ch && !(ch = cap_proc_new(c, cpid)))
			return cap_bad(c, "out of memory", ENOMEM);
		cap_proc_known(c, ch, c->next_id);
		return;
	}
	case WIRE_EXIT:
		/* one process alone needs no exit: the end of the trace is its end */
		if (c->next_id) {
			cap_switch(c, p);
			cap_event(c, EV_EXIT, 0);
			c->cur = NULL;
		}
		if (!p->exec_pending)
			cap_proc_remove(c, p);
		return;
	default:
		cap_bad(c, "bad data from the Valgrind tool", EPROTO);
	}
}

/* mmusim's tool: gather whole frames from the pipe (a frame can span two reads). */
static void cap_deframe(struct capture *c, const unsigned char *p, size_t n)
{
	while (n && !c->bad_frame) {
		size_t want = c->frn < WIRE_HDR ? WIRE_HDR : WIRE_HDR + (size_t)cap_le(c->fr + WIRE_OFF_LEN, 2);
		size_t k = want - c->frn < n ? want - c->frn : n;

		memcpy(c->fr + c->frn, p, k);
		c->frn += (unsigned)k;
		p += k;
		n -= k;
		if (c->frn < want)
			break;
		if (c->frn == WIRE_HDR) {
			uint32_t magic = (uint32_t)cap_le(c->fr, 4);

			if ((magic != WIRE_DATA && magic != WIRE_IMAGE && magic != WIRE_EXEC &&
			     magic != WIRE_FORK && magic != WIRE_EXIT) ||
			    cap_le(c->fr + WIRE_OFF_LEN, 2) > WIRE_PAYLOAD) {
				cap_bad(c, "bad data from the Valgrind tool", EPROTO);
				break;
			}
			if (cap_le(c->fr + WIRE_OFF_LEN, 2))
				continue;
		}
		cap_frame(c, c->fr);
		c->frn = 0;
	}
}

/*
 * The end of the pipe: the END record (traces/README.md) closes the merged
 * stream. A process whose fork never came (its parent killed between the fork
 * and its WIRE_FORK) is dropped, with a warning.
 */
static void cap_finish_stream(struct capture *c)
{
	unsigned char rec[12], *p = rec;

	for (size_t i = 0; i < c->nprocs; i++)
		if (!c->procs[i]->known)
			c->dropped++;
	if (c->dropped)
		fprintf(stderr, "capture: warning: %u process(es) dropped: their fork was not "
			"seen in their parent's trace\n", c->dropped);
	*p++ = 0xc0; /* END */
	p = cap_varint(p, c->nrec);
	cap_emit(c, rec, (size_t)(p - rec));
}

/* The first process's pending exec (it did not come back as an image), or a later one's. */
static const struct cap_proc *cap_lost_exec(const struct capture *c)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i]->known && c->procs[i]->exec_pending)
			return c->procs[i];
	return NULL;
}

/* On a terminal, once a second: what the capture has done so far. */
static void cap_progress(struct capture *c, bool last)
{
	double now = cap_now(), dt;

	if (!c->o || !c->o->progress || (!last && now < c->next_progress))
		return;
	if (last && !c->progress_shown)
		return;
	c->next_progress = now + 1.0;
	c->progress_shown = true;
	dt = now - c->t0 > 1e-9 ? now - c->t0 : 1e-9;
	if (c->mm)
		fprintf(stderr, "\rcapture: %.1f M instructions, %.1f M references, %.1f MB written, "
			"%.2f M refs/s  %s",
			(double)c->st.insns / 1e6, (double)c->st.refs / 1e6,
			(double)c->st.out_bytes / 1e6, (double)c->st.refs / dt / 1e6, last ? "\n" : "");
	else
		fprintf(stderr, "\rcapture: %.1f MB of lackey text, %.1f MB written, %.2f MB/s  %s",
			(double)c->st.trace_bytes / 1e6, (double)c->st.out_bytes / 1e6,
			(double)c->st.trace_bytes / dt / 1e6, last ? "\n" : "");
	fflush(stderr);
}

static void cap_consume(struct capture *c, const unsigned char *p, size_t n)
{
	if (c->mm)
		cap_deframe(c, p, n);
	else
		cap_put_stream(c, p, n);
	cap_progress(c, false);
}

/* Copy the log until Valgrind has exited and the pipe is drained. */
static void cap_pump(struct capture *c)
{
	struct pollfd pf[2];

	while (!(c->eof && c->reaped)) {
		ssize_t n;

		if (c->reaped && !c->eof) {
			/* Valgrind is gone: take what is buffered, then stop. */
			fcntl(c->rfd, F_SETFL, fcntl(c->rfd, F_GETFL) | O_NONBLOCK);
			while ((n = read(c->rfd, c->rbuf, CAP_RBUF)) > 0 ||
			       (n < 0 && errno == EINTR))
				if (n > 0)
					cap_consume(c, c->rbuf, (size_t)n);
			c->eof = true;
			break;
		}
		pf[0].fd = c->eof ? -1 : c->rfd;
		pf[0].events = POLLIN;
		pf[1].fd = c->sfd;
		pf[1].events = POLLIN;
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			/* Cannot wait: stop the program rather than spin. */
			cap_out_error(c, "poll", errno);
			cap_stop(c, SIGKILL);
			c->eof = true;
			while (!c->reaped && waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
				;
			c->reaped = true;
			break;
		}
		if (pf[1].revents)
			cap_signals(c);
		if (!c->eof && (pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			n = read(c->rfd, c->rbuf, CAP_RBUF);
			if (n > 0) {
				cap_consume(c, c->rbuf, (size_t)n);
				if ((size_t)n < c->pipe_cap / 2)
					nanosleep(&c->nap, NULL);
			} else if (n == 0) {
				c->eof = true;
			} else if (errno != EINTR && errno != EAGAIN) {
				/* The log is lost; a Valgrind left writing would block for ever. */
				cap_out_error(c, "cannot read Valgrind's log", errno);
				cap_stop(c, SIGKILL);
				c->eof = true;
			}
		}
	}
}

static const char *cap_basename(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Is @fd the same open file as our standard output? */
static bool cap_is_stdout(int fd)
{
	struct stat a, b;

	return fd == STDOUT_FILENO || (!fstat(fd, &a) && !fstat(STDOUT_FILENO, &b) &&
				       a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

/* Open the output (outfile.h: a temporary renamed at the end, or in place) and its compressor. */
static int cap_open_out(struct capture *c, const char *out, struct err *e)
{
	if (!out) {
		if ((size_t)snprintf(c->out, sizeof(c->out), "%s.%s.zst", cap_basename(c->prog),
				     c->mm ? "mtr" : "lackey") >= sizeof(c->out))
			return err_set(e, "capture", 0, 0, "output name too long");
	} else if ((size_t)snprintf(c->out, sizeof(c->out), "%s", out) >= sizeof(c->out)) {
		return err_set(e, "capture", 0, 0, "output name too long");
	}
	if (!c->out[0])
		return err_set(e, "capture", 0, 0, "empty output name");
	if (outfile_open(&c->of, c->out, 0, e))
		return -1;
	c->ofd = c->of.fd;
	c->in_place = outfile_in_place(&c->of);
	c->holding = c->in_place && c->mm;
	c->to_stdout = c->in_place && cap_is_stdout(c->ofd);
	if (!strcmp(c->out, "-")) {
		c->oname = "<stdout>";
		c->comp = TIO_NONE;
	} else {
		c->oname = c->out;
		c->comp = tio_comp_from_suffix(c->out);
	}
	/* A capture's zstd frame carries a checksum (the mtr writer's does not). */
	if (zout_init(&c->z, c->ofd, c->comp, cap_level[c->comp], ZOUT_ZSTD_CHECKSUM, c->out, e)) {
		outfile_abort(&c->of);
		c->ofd = -1;
		return -1;
	}
	return 0;
}

/*
 * Finish the output: commit it (flush, rename) or throw it away (in place, where
 * nothing can be taken back: end plain text with a line the reader rejects,
 * saying @why). Returns -1 with @e set only when a commit fails.
 */
static int cap_close_out(struct capture *c, bool commit, const char *why, struct err *e)
{
	bool want = commit;

	if (commit && c->mm)
		cap_finish_stream(c);
	/* The held stream (in place) goes in the ending call: zstd's one-shot frame, as a file's. */
	if (commit && cap_put(c, c->holding ? c->hold : NULL, c->holding ? c->hold_n : 0, true))
		commit = false;
	c->holding = false;
	/* (An mtr stream cut short lacks its end marker: the reader rejects it as it is.) */
	if (c->in_place && c->comp == TIO_NONE && !c->mm && !commit && why && !c->werr) {
		char line[800];
		int n = snprintf(line, sizeof(line), "\n**mmusim capture failed: %s**\n", why);

		cap_put(c, (const unsigned char *)line,
			(size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, false);
	}
	zout_free(&c->z);
	c->ofd = -1;
	if (commit) {
		struct err ce = { 0 };

		if (outfile_commit(&c->of, &ce)) {
			cap_out_error(c, "write error", errno ? errno : EIO);
			commit = false;
		}
	} else {
		outfile_abort(&c->of);
	}
	if (want && !commit)
		return err_set(e, c->oname, 0, 0, "%s: %s", c->werr_what, strerror(c->werr));
	return 0;
}

/* Why the capture failed, or NULL if it did not; into @buf. */
static const char *cap_failure(const struct capture *c, char *buf, size_t n)
{
	if (c->intr)
		snprintf(buf, n, "interrupted by signal %d (%s)", c->intr, strsignal(c->intr));
	else if (c->werr)
		snprintf(buf, n, "%s: %s: %s", c->oname, c->werr_what, strerror(c->werr));
	else if (c->lost[0])
		snprintf(buf, n, "%.*s", (int)n - 1, c->lost);
	else if (c->exec_pending)
		snprintf(buf, n, "cannot follow the exec of %.*s: Valgrind did not start it under "
			 "mmusim's tool (see the message above)", (int)n - 100, c->exec_path);
	else if (cap_lost_exec(c))
		snprintf(buf, n, "cannot follow the exec of %.*s: Valgrind did not start it under "
			 "mmusim's tool (see the message above)", (int)n - 100,
			 cap_lost_exec(c)->exec_path ? cap_lost_exec(c)->exec_path : "?");
	else if (c->lackey_exec)
		snprintf(buf, n, "cannot follow the exec of %.*s with --tool=lackey (its log ends "
			 "there); the default tool follows it", (int)n - 100, c->exec_path);
	else if (c->status == -1)
		snprintf(buf, n, "%s: exit status lost (SIGCHLD is ignored)", c->prog);
	else if (WIFEXITED(c->status) && WEXITSTATUS(c->status))
		snprintf(buf, n, "%s exited with status %d", c->prog, WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(buf, n, "%s killed by signal %d (%s)", c->prog, WTERMSIG(c->status),
			 strsignal(WTERMSIG(c->status)));
	else
		return NULL;
	return buf;
}

extern char **environ;

/*
 * Valgrind's environment: ours, with VALGRIND_LIB=@dir (replacing one that is
 * set; none when @dir is NULL) and an empty LD_PRELOAD when none is set.
 * Valgrind puts its preload library in front of the program's LD_PRELOAD
 * ("vgpreload_core-amd64-linux.so:VALUE", where the variable is); followed
 * across an exec, the program's variable comes back emptied of it and gets it
 * again, so an image started by exec sees "vgpreload...so:" in place. Set
 * here, a direct capture sees the same: the same environment, byte for byte
 * and in the same order, so the same start-up references (ld.so and libc scan
 * it) whether a program is captured directly or through env, a shell's exec
 * or a #! script. NULL if out of memory.
 */
static char **cap_env(const char *dir)
{
	size_t n = 0, k = 0;
	bool preload = false;
	char **env;

	while (environ[n])
		preload |= !strncmp(environ[n++], "LD_PRELOAD=", 11);
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	if (dir && asprintf(&env[k++], "VALGRIND_LIB=%s", dir) < 0) {
		free(env);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!dir || strncmp(environ[i], "VALGRIND_LIB=", 13))
			env[k++] = environ[i];
	if (!preload)
		env[k++] = (char *)"LD_PRELOAD=";
	return env;
}

static void cap_env_free(char **env, bool own_first)
{
	if (env && own_first)
		free(env[0]);
	free(env);
}

/* Is @dir a VALGRIND_LIB with mmusim's tool? Then it is copied to c->vglib. */
static bool cap_try_lib(struct capture *c, const char *dir, const char *sub)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(c->vglib, sizeof(c->vglib), "%s%s", dir, sub) >= sizeof(c->vglib))
		return false;
	if ((size_t)snprintf(path, sizeof(path), "%s/mmusim-amd64-linux", c->vglib) >= sizeof(path))
		return false;
	return !access(path, X_OK);
}

/* Find the tool (capture_run_opts()'s order). */
static int cap_find_tool(struct capture *c, struct err *e)
{
	const char *env = getenv("MMUSIM_VALGRIND_LIB");
	char exe[PATH_MAX];
	ssize_t n;

	if (c->o->tool_dir)
		return cap_try_lib(c, c->o->tool_dir, "") ? 0 :
			err_set(e, "capture", 0, 0, "%s: no mmusim-amd64-linux there", c->o->tool_dir);
	if (env && *env)
		return cap_try_lib(c, env, "") ? 0 :
			err_set(e, "capture", 0, 0, "MMUSIM_VALGRIND_LIB=%s: no mmusim-amd64-linux there",
				env);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (cap_try_lib(c, exe, "/valgrind") ||
			    cap_try_lib(c, exe, "/../lib/mmusim/valgrind"))
				return 0;
		}
	}
#ifdef MMUSIM_VGLIB_BUILD
	/* Where `make` built it (the binary may be the copy in the source tree). */
	if (cap_try_lib(c, MMUSIM_VGLIB_BUILD, ""))
		return 0;
#endif
	return err_set(e, "capture", 0, 0,
		       "mmusim's Valgrind tool not found (build it with make, set "
		       "MMUSIM_VALGRIND_LIB, or use --tool=lackey)");
}

/* Fork and exec Valgrind; the child's exec error comes back on a CLOEXEC pipe. */
static int cap_spawn(struct capture *c, const char *valgrind, char *const argv[],
		     const sigset_t *old_mask, struct err *e)
{
	int lp[2], sp[2], werr = 0;
	size_t argc = 0, i;
	char logfd[32], skip[48], max[48];
	char **vargv, **envp = NULL;
	ssize_t r;

	while (argv[argc])
		argc++;
	vargv = calloc(argc + 12, sizeof(*vargv));
	if (!vargv || !(envp = cap_env(c->mm ? c->vglib : NULL))) {
		free(vargv);
		return err_host(e, "capture", 0, 0, "out of memory");
	}
	if (pipe2(lp, O_CLOEXEC)) {
		free(vargv);
		cap_env_free(envp, c->mm);
		return err_set(e, "capture", 0, 0, "pipe: %s", strerror(errno));
	}
	if (pipe2(sp, O_CLOEXEC)) {
		close(lp[0]);
		close(lp[1]);
		free(vargv);
		cap_env_free(envp, c->mm);
		return err_set(e, "capture", 0, 0, "pipe: %s", strerror(errno));
	}
	/* Fewer wake-ups per megabyte; best effort (pipe(7): may be refused). */
	fcntl(lp[0], F_SETPIPE_SZ, CAP_PIPE_SIZE);
	r = fcntl(lp[0], F_GETPIPE_SZ);
	c->pipe_cap = r > 0 ? (size_t)r : 4096;
	/* The tool writes frames of 1 MiB: no nap needed to batch its writes. */
	c->nap.tv_nsec = c->mm ? 0 : (long)((double)c->pipe_cap / CAP_LOG_RATE / 4 * 1e9);
	i = 0;
	vargv[i++] = (char *)"valgrind";
	if (c->mm) {
		snprintf(logfd, sizeof(logfd), "--out-fd=%d", lp[1]);
		vargv[i++] = (char *)"-q";
		vargv[i++] = (char *)"--tool=mmusim";
		vargv[i++] = (char *)"--trace-children=yes"; /* follow exec (mm_main.c) */
		vargv[i++] = logfd;
		if (c->o->skip_insns) {
			snprintf(skip, sizeof(skip), "--skip-insns=%llu",
				 (unsigned long long)c->o->skip_insns);
			vargv[i++] = skip;
		}
		if (c->o->roi)
			vargv[i++] = (char *)"--roi=yes";
		if (c->o->max_insns) {
			snprintf(max, sizeof(max), "--max-insns=%llu",
				 (unsigned long long)c->o->max_insns);
			vargv[i++] = max;
		}
	} else {
		snprintf(logfd, sizeof(logfd), "--log-fd=%d", lp[1]);
		vargv[i++] = (char *)"--tool=lackey";
		vargv[i++] = (char *)"--trace-mem=yes";
		vargv[i++] = (char *)"--trace-syscalls=yes";
		vargv[i++] = (char *)"--child-silent-after-fork=yes";
		vargv[i++] = logfd;
	}
	vargv[i++] = (char *)"--";
	for (size_t k = 0; k < argc; k++)
		vargv[i++] = argv[k];
	vargv[i] = NULL;

	c->pid = fork();
	if (c->pid == 0) {
		int err;

		/* Child: only async-signal-safe calls from here to exec. */
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		if (fcntl(lp[1], F_SETFD, 0) == 0 &&
		    (!c->to_stdout || dup2(STDERR_FILENO, STDOUT_FILENO) == STDOUT_FILENO)) {
			execve(valgrind, vargv, envp);
		}
		err = errno;
		if (write(sp[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	werr = errno;
	free(vargv);
	cap_env_free(envp, c->mm);
	close(lp[1]);
	close(sp[1]);
	if (c->pid < 0) {
		close(lp[0]);
		close(sp[0]);
		return err_set(e, "capture", 0, 0, "fork: %s", strerror(werr));
	}
	do
		r = read(sp[0], &werr, sizeof(werr));
	while (r < 0 && errno == EINTR);
	close(sp[0]);
	if (r == (ssize_t)sizeof(werr)) {
		close(lp[0]);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (werr == ENOENT)
			return err_set(e, "capture", 0, 0, "valgrind not found (apt-get install valgrind)");
		return err_set(e, "capture", 0, 0, "cannot run %s: %s", valgrind, strerror(werr));
	}
	c->rfd = lp[0];
	return 0;
}

int capture_run_stats(const char *out, char *const argv[], struct capture_stats *st,
		      struct err *e)
{
	struct capture_opts o = { .tool = "lackey" };

	return capture_run_opts(out, argv, &o, st, e);
}

int capture_run_opts(const char *out, char *const argv[], const struct capture_opts *o,
		     struct capture_stats *st, struct err *e)
{
	static const struct capture_opts none = { 0 };
	struct capture *c;
	char valgrind[PATH_MAX], prog[PATH_MAX], why[700];
	const char *fail;
	sigset_t set, old;
	double t0;
	int ret = -1, r;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!argv || !argv[0] || !argv[0][0])
		return err_set(e, "capture", 0, 0, "no program to run");
	if (cap_find("valgrind", valgrind, sizeof(valgrind)))
		return err_set(e, "capture", 0, 0, "valgrind not found (apt-get install valgrind)");
	r = cap_find(argv[0], prog, sizeof(prog));
	if (r == ENOENT && !strchr(argv[0], '/'))
		return err_set(e, "capture", 0, 0, "%s: command not found", argv[0]);
	if (r)
		return err_set(e, "capture", 0, 0, "%s: %s", argv[0], strerror(r));

	c = calloc(1, sizeof(*c));
	if (!c)
		return err_host(e, "capture", 0, 0, "out of memory");
	c->prog = argv[0];
	c->o = o ? o : &none;
	c->mm = !c->o->tool || !strcmp(c->o->tool, "mmusim");
	c->ofd = c->rfd = c->sfd = -1;
	c->st.processes = 1;
	if (!c->mm && strcmp(c->o->tool, "lackey")) {
		err_set(e, "capture", 0, 0, "unknown tool '%s' (mmusim or lackey)", c->o->tool);
		ret = -2;
		goto out_free;
	}
	if (c->mm && cap_find_tool(c, e))
		goto out_free;
	c->rbuf = malloc(CAP_RBUF);
	if (!c->rbuf) {
		err_host(e, "capture", 0, 0, "out of memory");
		goto out_free;
	}
	if (cap_open_out(c, out, e)) {
		ret = -2; /* the output path: bad input */
		goto out_free;
	}

	sigemptyset(&set);
	for (unsigned i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		struct sigaction sa;

		/* Ignored on entry (nohup, a shell's background job): stay ignored. */
		if (!sigaction(stop_signals[i], NULL, &sa) && sa.sa_handler != SIG_IGN)
			sigaddset(&set, stop_signals[i]);
	}
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	c->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (c->sfd < 0) {
		err_set(e, "capture", 0, 0, "signalfd: %s", strerror(errno));
		cap_close_out(c, false, NULL, NULL);
		goto out_mask;
	}
	t0 = cap_now();
	c->t0 = t0;
	c->next_progress = t0 + 1.0;
	if (cap_spawn(c, valgrind, argv, &old, e)) {
		cap_close_out(c, false, NULL, NULL);
		goto out_mask;
	}
	cap_pump(c);
	close(c->rfd);
	cap_signals(c); /* a last look: a ^C that came with the exit still counts */
	cap_progress(c, true);
	c->lackey_exec = !c->mm && cap_lackey_exec(c, c->exec_path, sizeof(c->exec_path));

	fail = cap_failure(c, why, sizeof(why));
	if (fail && c->o->keep_on_failure && !c->intr && !c->werr && !c->lost[0] &&
	    !c->exec_pending && !cap_lost_exec(c) && !c->lackey_exec && c->status != -1 &&
	    WIFEXITED(c->status)) {
		fprintf(stderr, "capture: warning: %s; the trace is kept (--keep-on-failure)\n", fail);
		fail = NULL;
	}
	if (cap_close_out(c, !fail, fail, e))
		;
	else if (fail && !c->intr && c->werr)
		err_set(e, c->oname, 0, 0, "%s: %s", c->werr_what, strerror(c->werr));
	else if (fail)
		err_set(e, "capture", 0, 0, "%s", fail);
	else
		ret = 0;
	c->st.seconds = cap_now() - t0;
	c->st.signo = c->intr;

out_mask:
	if (c->sfd >= 0)
		close(c->sfd);
	/* Our own writes may have left a SIGPIPE pending: take it, or it kills us on unblock. */
	if (c->werr == EPIPE && !sigismember(&old, SIGPIPE)) {
		sigset_t pipe_set;
		struct timespec zero = { 0, 0 };

		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out_free:
	if (st)
		*st = c->st;
	for (size_t i = 0; i < c->nprocs; i++)
		cap_proc_free(c->procs[i]);
	free(c->procs);
	zout_free(&c->z);
	free(c->hold);
	free(c->rbuf);
	free(c);
	return ret;
}

int capture_run(const char *out, char *const argv[], struct err *e)
{
	return capture_run_stats(out, argv, NULL, e);
}
