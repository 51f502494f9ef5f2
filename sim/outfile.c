/*
 * outfile.c - result files: replaced atomically when they are regular files,
 * written in place when they are anything else (see outfile.h).
 *
 * Why not always temp + rename: rename(2) replaces whatever directory entry the
 * name has, so as root `--json /dev/null` turned /dev/null into a regular file,
 * `--json /dev/stdout` replaced the symlink, and a FIFO's reader waited forever
 * on a pipe that no longer had a writer. Why not always in place: a regular file
 * written in place is half-written when the run fails, and the contract is that
 * a result is whole or absent.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

#define MAX_LINKS 40 /* as the kernel's MAXSYMLINKS */

/* Temporaries not yet committed, for outfile_remove_pending() in a signal handler. */
static char pending_path[OUTFILE_PENDING_MAX][PATH_MAX + 32];
static pid_t pending_pid[OUTFILE_PENDING_MAX]; /* a forked child leaves its parent's alone */
static volatile sig_atomic_t pending_used[OUTFILE_PENDING_MAX];

/*
 * A slot is claimed (0 -> 2) by one thread at a time, so that threads writing
 * files of their own (a sweep worker's reports) never share one; the signal
 * handler takes only a filled slot (1).
 */
static int pending_add(const char *path)
{
	for (int i = 0; i < OUTFILE_PENDING_MAX; i++) {
		sig_atomic_t free_slot = 0;

		if (__atomic_compare_exchange_n(&pending_used[i], &free_slot, 2, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			snprintf(pending_path[i], sizeof(pending_path[i]), "%s", path);
			pending_pid[i] = getpid();
			__atomic_store_n(&pending_used[i], 1, __ATOMIC_RELEASE);
			return i;
		}
	}
	return -1; /* more than OUTFILE_PENDING_MAX open at once: not removed on a signal */
}

static void pending_drop(int slot)
{
	if (slot >= 0)
		__atomic_store_n(&pending_used[slot], 0, __ATOMIC_RELEASE);
}

void outfile_remove_pending(void)
{
	pid_t me = getpid();

	for (int i = 0; i < OUTFILE_PENDING_MAX; i++)
		if (pending_used[i] == 1 && pending_pid[i] == me)
			unlink(pending_path[i]);
}

enum dest {
	DEST_REPLACE,  /* a regular file or nothing: temp + rename */
	DEST_FD,       /* one of our own descriptors */
	DEST_IN_PLACE, /* a device, FIFO, socket or /proc path: open and write */
	DEST_DIR,
};

/* "/dev/stdout", "/dev/fd/3", "/proc/self/fd/3", "/proc/PID/fd/3" (ours): the number. */
static bool fd_path(const char *p, int *fd)
{
	char own[64];
	const char *rest = NULL;
	char *end;
	long n;

	if (!strcmp(p, "/dev/stdin") || !strcmp(p, "/dev/stdout") || !strcmp(p, "/dev/stderr")) {
		*fd = p[5] == 'i' ? 0 : p[8] == 'o' ? 1 : 2;
		return true;
	}
	snprintf(own, sizeof(own), "/proc/%ld/fd/", (long)getpid());
	if (!strncmp(p, "/dev/fd/", 8))
		rest = p + 8;
	else if (!strncmp(p, "/proc/self/fd/", 14))
		rest = p + 14;
	else if (!strncmp(p, "/proc/thread-self/fd/", 21))
		rest = p + 21;
	else if (!strncmp(p, own, strlen(own)))
		rest = p + strlen(own);
	if (!rest || *rest < '0' || *rest > '9')
		return false;
	errno = 0;
	n = strtol(rest, &end, 10);
	if (errno || *end || n > INT_MAX)
		return false;
	*fd = (int)n;
	return true;
}

/* @link's text resolved against the directory of @at (the link's own path). */
static char *link_target(const char *at, const char *link)
{
	const char *slash = strrchr(at, '/');
	size_t dl = slash ? (size_t)(slash - at) + 1 : 0;
	char *out;

	if (link[0] == '/' || !dl)
		return strdup(link);
	out = malloc(dl + strlen(link) + 1);
	if (out) {
		memcpy(out, at, dl);
		strcpy(out + dl, link);
	}
	return out;
}

/*
 * Follow @path to what it names. *@where is the path to open or replace (the
 * caller frees), *@fd the descriptor for DEST_FD, *@mode the permission bits of
 * an existing regular file (or -1). Returns the kind, or -1 with errno.
 */
static int resolve(const char *path, char **where, int *fd, int *mode)
{
	char *cur = strdup(path);
	struct stat st;

	*mode = -1;
	if (!cur)
		return -1;
	for (int hops = 0;; hops++) {
		char buf[PATH_MAX];
		ssize_t n;
		char *next;

		if (fd_path(cur, fd)) {
			*where = cur;
			return DEST_FD;
		}
		if (lstat(cur, &st)) {
			if (errno != ENOENT) {
				free(cur);
				return -1;
			}
			*where = cur; /* created by the rename */
			return DEST_REPLACE;
		}
		if (!S_ISLNK(st.st_mode)) {
			*where = cur;
			if (S_ISDIR(st.st_mode))
				return DEST_DIR;
			if (S_ISREG(st.st_mode) && strncmp(cur, "/proc/", 6)) {
				*mode = (int)(st.st_mode & 07777);
				return DEST_REPLACE;
			}
			return DEST_IN_PLACE;
		}
		/* /proc's links (pipe:[N], another process's fds) are no place for a temporary */
		if (!strncmp(cur, "/proc/", 6)) {
			*where = cur;
			return DEST_IN_PLACE;
		}
		if (hops >= MAX_LINKS) {
			free(cur);
			errno = ELOOP;
			return -1;
		}
		n = readlink(cur, buf, sizeof(buf) - 1);
		if (n < 0) {
			free(cur);
			return -1;
		}
		buf[n] = 0;
		next = link_target(cur, buf);
		free(cur);
		if (!next)
			return -1;
		cur = next;
	}
}

bool outfile_is_regular_path(const char *path)
{
	char *where = NULL;
	int fd, mode, kind;

	if (!strcmp(path, "-"))
		return false;
	kind = resolve(path, &where, &fd, &mode);
	free(where);
	return kind == DEST_REPLACE;
}

/* What a path names, for outfile_check_distinct(). */
struct ident {
	bool known;    /* dev and ino are set */
	bool exists;   /* else dev/ino are the directory's and name the entry */
	int fd;        /* a descriptor of ours ("-", /dev/stdout): its number, else -1 */
	dev_t dev;
	ino_t ino;
	const char *name; /* a file to be created: its last component (in buf) */
	char buf[PATH_MAX];
};

/* The device and inode of @p's directory, @p's last component in id->name. */
static void ident_new(struct ident *id, const char *p)
{
	const char *slash = strrchr(p, '/');
	struct stat st;

	snprintf(id->buf, sizeof(id->buf), "%s", p);
	id->name = id->buf;
	if (!slash) {
		if (stat(".", &st))
			return;
	} else {
		size_t dl = (size_t)(slash - p);

		id->buf[dl ? dl : 1] = 0; /* "/x": the root */
		if (stat(id->buf, &st))
			return;
		snprintf(id->buf, sizeof(id->buf), "%s", slash + 1);
	}
	id->known = true;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
}

/* @p as an output (@out) or an input: what it names, or nothing known. */
static void ident_of(struct ident *id, const char *p, bool out)
{
	struct stat st;
	char *where = NULL;
	int fd = -1, mode, kind;

	memset(id, 0, sizeof(*id));
	id->fd = -1;
	if (!strcmp(p, "-")) {
		fd = out ? STDOUT_FILENO : STDIN_FILENO;
		kind = DEST_FD;
	} else if (!out) {
		if (stat(p, &st) || S_ISCHR(st.st_mode) || S_ISDIR(st.st_mode))
			return; /* its open says what is wrong; a device is no file to replace */
		id->known = id->exists = true;
		id->dev = st.st_dev;
		id->ino = st.st_ino;
		return;
	} else {
		kind = resolve(p, &where, &fd, &mode);
	}
	if (kind == DEST_FD) {
		id->fd = fd;
		if (!fstat(fd, &st) && !S_ISCHR(st.st_mode)) {
			id->known = id->exists = true;
			id->dev = st.st_dev;
			id->ino = st.st_ino;
		}
	} else if (kind == DEST_REPLACE || kind == DEST_IN_PLACE) {
		if (!stat(where, &st)) {
			if (!S_ISCHR(st.st_mode)) {
				id->known = id->exists = true;
				id->dev = st.st_dev;
				id->ino = st.st_ino;
			}
		} else if (errno == ENOENT) {
			ident_new(id, where);
		}
	}
	free(where);
}

static bool ident_same(const struct ident *a, const struct ident *b)
{
	if (a->fd == STDOUT_FILENO && b->fd == STDOUT_FILENO)
		return true;
	if (!a->known || !b->known || a->exists != b->exists || a->dev != b->dev || a->ino != b->ino)
		return false;
	return a->exists || !strcmp(a->name, b->name);
}

int outfile_check_distinct(const struct outfile_role *outs, size_t nout,
			   const struct outfile_role *ins, size_t nin, struct err *e)
{
	struct ident *id = calloc(nout + nin + 1, sizeof(*id));
	int r = 0;

	if (!id)
		return err_host(e, "mmusim", 0, 0, "out of memory");
	for (size_t i = 0; i < nout; i++)
		if (outs[i].path)
			ident_of(&id[i], outs[i].path, true);
	for (size_t j = 0; j < nin; j++)
		if (ins[j].path)
			ident_of(&id[nout + j], ins[j].path, false);
	for (size_t i = 0; i < nout && !r; i++) {
		if (!outs[i].path)
			continue;
		for (size_t j = 0; j < nin && !r; j++)
			if (ins[j].path && ident_same(&id[i], &id[nout + j]))
				r = err_set(e, outs[i].path, 0, 0,
					    "%s is the same file as %s %s; a result may not replace an input",
					    outs[i].what, ins[j].what, ins[j].path);
		for (size_t j = 0; j < i && !r; j++) {
			if (!outs[j].path || !ident_same(&id[i], &id[j]))
				continue;
			if (id[i].fd == STDOUT_FILENO && id[j].fd == STDOUT_FILENO)
				r = err_set(e, outs[i].path, 0, 0,
					    "%s writes standard output, as %s %s does; send one of them to a file",
					    outs[i].what, outs[j].what, outs[j].path);
			else
				r = err_set(e, outs[i].path, 0, 0,
					    "%s is the same file as %s %s; one result would replace the other",
					    outs[i].what, outs[j].what, outs[j].path);
		}
	}
	free(id);
	return r;
}

static int open_replace(struct outfile *o, const char *target, int mode, struct err *e)
{
	size_t n = strlen(target) + 48;

	o->target = strdup(target);
	o->tmp = malloc(n);
	if (!o->target || !o->tmp)
		return err_host(e, o->name, 0, 0, "out of memory");
	for (unsigned k = 0; k < 100; k++) {
		if (k)
			snprintf(o->tmp, n, "%s.tmp.%ld.%u", target, (long)getpid(), k);
		else
			snprintf(o->tmp, n, "%s.tmp.%ld", target, (long)getpid());
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		int err = errno;

		free(o->tmp);
		o->tmp = NULL;
		return err_set(e, o->name, 0, 0, "%s", strerror(err));
	}
	o->pending = pending_add(o->tmp);
	o->own_fd = true;
	if (mode >= 0)
		(void)fchmod(o->fd, (mode_t)mode); /* the replaced file's permissions, best effort */
	return 0;
}

static int open_tool_tmp(struct outfile *o, struct err *e)
{
	const char *dir = getenv("TMPDIR");
	size_t n;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	n = strlen(dir) + 32;
	o->tool_tmp = malloc(n);
	if (!o->tool_tmp)
		return err_host(e, o->name, 0, 0, "out of memory");
	snprintf(o->tool_tmp, n, "%s/mmusim-out-XXXXXX", dir);
	fd = mkostemp(o->tool_tmp, O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		free(o->tool_tmp);
		o->tool_tmp = NULL;
		return err_set(e, o->name, 0, 0, "cannot create a temporary in %s: %s", dir,
			       strerror(err));
	}
	close(fd);
	o->pending = pending_add(o->tool_tmp);
	return 0;
}

int outfile_open(struct outfile *o, const char *path, unsigned flags, struct err *e)
{
	char *where = NULL;
	int fd = -1, mode, kind, r = 0;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->pending = -1;
	if (!strcmp(path, "-")) {
		o->name = strdup("<stdout>");
		o->fd = STDOUT_FILENO;
		o->f = stdout;
		o->in_place = true;
		if (!o->name)
			return err_host(e, path, 0, 0, "out of memory");
		if ((flags & OUTFILE_BY_PATH) && open_tool_tmp(o, e))
			goto fail;
		return 0;
	}
	o->name = strdup(path);
	if (!o->name)
		return err_host(e, path, 0, 0, "out of memory");
	kind = resolve(path, &where, &fd, &mode);
	switch (kind) {
	case -1:
		r = err_set(e, path, 0, 0, "%s", strerror(errno));
		break;
	case DEST_DIR:
		r = err_set(e, path, 0, 0, "%s", strerror(EISDIR));
		break;
	case DEST_REPLACE:
		r = open_replace(o, where, mode, e);
		break;
	case DEST_FD:
		fflush(stdout); /* what the program already printed there goes first */
		fflush(stderr);
		o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (o->fd < 0)
			r = err_set(e, path, 0, 0, "%s", strerror(errno));
		o->own_fd = true;
		o->in_place = true;
		break;
	default: /* DEST_IN_PLACE */
		o->fd = open(where, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
		if (o->fd < 0)
			r = err_set(e, path, 0, 0, "%s", strerror(errno));
		o->own_fd = true;
		o->in_place = true;
		break;
	}
	free(where);
	if (!r && o->in_place && (flags & OUTFILE_BY_PATH))
		r = open_tool_tmp(o, e);
	if (r)
		goto fail;
	return 0;
fail:
	outfile_abort(o);
	return -1;
}

/*
 * The stream's write: to the descriptor, remembering the first errno, since stdio
 * keeps only an error flag and a failure met inside fwrite() would otherwise reach
 * the commit as a bare EIO instead of "No space left on device".
 */
static ssize_t stream_write(void *cookie, const char *buf, size_t n)
{
	struct outfile *o = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(o->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			if (!o->werr)
				o->werr = errno;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int stream_close(void *cookie)
{
	struct outfile *o = cookie;
	int r = o->own_fd && o->fd >= 0 ? close(o->fd) : 0;

	o->fd = -1;
	return r;
}

FILE *outfile_stream(struct outfile *o)
{
	if (!o->f && o->fd >= 0) {
		cookie_io_functions_t io = { .write = stream_write, .close = stream_close };

		o->f = fopencookie(o, "w", io);
	}
	return o->f;
}

const char *outfile_tool_path(const struct outfile *o)
{
	return o->tool_tmp ? o->tool_tmp : o->tmp;
}

bool outfile_in_place(const struct outfile *o)
{
	return o->in_place;
}

/* Copy the tool's output into the in-place destination. 0 or an errno. */
static int copy_tool_output(struct outfile *o)
{
	char buf[65536];
	int in = open(o->tool_tmp, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (in < 0)
		return errno;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(o->fd, buf + off, (size_t)(n - off));

			if (w < 0) {
				if (errno == EINTR)
					continue;
				err = errno;
				break;
			}
			off += w;
		}
		if (err)
			break;
	}
	close(in);
	return err;
}

/* Close the stream and descriptor; the first errno met, or 0. */
static int close_all(struct outfile *o, bool sync)
{
	int err = 0;

	errno = 0;
	if (o->f && (fflush(o->f) || ferror(o->f)))
		err = o->werr ? o->werr : errno ? errno : EIO;
	if (!err && sync && o->fd >= 0 && fsync(o->fd) && errno != EINVAL && errno != EROFS)
		err = errno;
	if (o->f && o->f != stdout) {
		if (fclose(o->f)) /* (stream_close() closes fd when it is ours) */
			err = err ? err : errno;
	} else if (o->own_fd && o->fd >= 0 && close(o->fd)) {
		err = err ? err : errno;
	}
	o->f = NULL;
	o->fd = -1;
	return err;
}

static void free_names(struct outfile *o)
{
	free(o->name);
	free(o->target);
	free(o->tmp);
	free(o->tool_tmp);
	o->name = o->target = o->tmp = o->tool_tmp = NULL;
}

int outfile_commit(struct outfile *o, struct err *e)
{
	int err = 0;

	if (o->tool_tmp && o->f)
		fflush(o->f); /* (standard output: what was printed first stays first) */
	if (o->tool_tmp)
		err = copy_tool_output(o);
	{
		int cerr = close_all(o, o->tmp != NULL);

		err = err ? err : cerr;
	}
	if (!err && o->tmp && rename(o->tmp, o->target))
		err = errno;
	if (o->tmp && err)
		unlink(o->tmp);
	if (o->tool_tmp)
		unlink(o->tool_tmp);
	pending_drop(o->pending);
	o->pending = -1;
	if (err)
		err_set(e, o->name, 0, 0, "%s", strerror(err));
	free_names(o);
	errno = err;
	return err ? -1 : 0;
}

void outfile_abort(struct outfile *o)
{
	if (!o->name && !o->tmp && !o->tool_tmp && o->fd < 0 && !o->f)
		return;
	close_all(o, false);
	if (o->tmp)
		unlink(o->tmp);
	if (o->tool_tmp)
		unlink(o->tool_tmp);
	pending_drop(o->pending);
	o->pending = -1;
	free_names(o);
}
