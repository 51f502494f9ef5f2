/*
 * check_outfile.c - result files (outfile.c): what each kind of path becomes
 * after outfile_open() and outfile_commit(), in a fresh scratch directory per
 * test. A regular file or nothing: "NAME.tmp.PID" beside it, renamed over it,
 * the old permission bits kept, nothing left behind on abort. A symbolic link:
 * its final target replaced, the link kept; a loop or a directory: the exact
 * message and nothing created. A FIFO, a character device, standard output and
 * /proc/self/fd/N: written in place, the node unchanged, no temporary. A full
 * device: the commit fails with ENOSPC. OUTFILE_BY_PATH, outfile_is_regular_path()
 * and the pending table that outfile_remove_pending() empties (not a parent's
 * from a forked child).
 *
 * The device tests mknod their nodes in the scratch directory, so they need
 * root; without it they print that they skip that part. As root a replaced
 * device node would be a real system file, so the scratch node is always
 * checked before the real /dev/null is written.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "outfile.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_outfile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	umask(022);
}

static int remove_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

static void teardown(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* "DIR/NAME" in one of eight rotating buffers (enough for any one assertion). */
static const char *at(const char *name)
{
	static char buf[8][PATH_MAX];
	static unsigned k;
	char *p = buf[k++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* The temporary outfile_open() makes first for @target. */
static const char *tmp_of(const char *target)
{
	static char buf[PATH_MAX + 32];

	snprintf(buf, sizeof(buf), "%s.tmp.%ld", target, (long)getpid());
	return buf;
}

/* Create @path holding @text with exactly @mode. */
static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	ck_assert_int_eq(close(fd), 0);
}

/* All of @path as a string (owned by the caller). */
static char *slurp(const char *path)
{
	struct stat sb;
	char *p;
	int fd = open(path, O_RDONLY);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fstat(fd, &sb), 0);
	p = malloc((size_t)sb.st_size + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(read(fd, p, (size_t)sb.st_size), sb.st_size);
	p[sb.st_size] = 0;
	close(fd);
	return p;
}

#define ck_assert_file_eq(path, text)              \
	do {                                       \
		char *got_ = slurp(path);          \
		ck_assert_str_eq(got_, text);      \
		free(got_);                        \
	} while (0)

/* The names in @d, sorted, joined by spaces ("" if empty). */
static const char *listing(const char *d)
{
	static char buf[4096];
	struct dirent **names;
	int k = scandir(d, &names, NULL, alphasort);
	size_t len = 0;

	buf[0] = 0;
	ck_assert_int_ge(k, 0);
	for (int i = 0; i < k; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						len ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return buf;
}

/* Open @path (must succeed), write @text through the stream, leave it uncommitted. */
static void open_write(struct outfile *o, const char *path, unsigned flags, const char *text)
{
	struct err e = { 0 };
	FILE *f;

	ck_assert_msg(!outfile_open(o, path, flags, &e), "%s: %s", path, e.msg);
	f = outfile_stream(o);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
}

static void commit_ok(struct outfile *o)
{
	struct err e = { 0 };

	ck_assert_msg(!outfile_commit(o, &e), "%s", e.msg);
}

/* outfile_open(@path) fails; the formatted message. */
static const char *open_fails(const char *path)
{
	static char msg[1024];
	struct outfile o;
	struct err e = { 0 };

	ck_assert_int_eq(outfile_open(&o, path, 0, &e), -1);
	err_format(&e, msg, sizeof(msg));
	return msg;
}

/* A child that reads the FIFO @fifo to EOF and stores what it got in @out. */
static pid_t fifo_reader(const char *fifo, const char *out)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (!pid) {
		char buf[4096];
		ssize_t n;
		int in, fd;

		alarm(10); /* never outlive a failed test blocked on the open */
		in = open(fifo, O_RDONLY);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || fd < 0)
			_exit(1);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(fd, buf, (size_t)n) != n)
				_exit(1);
		_exit(n < 0 || close(fd) ? 1 : 0);
	}
	return pid;
}

static void wait_ok(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}

static bool is_root(const char *what)
{
	if (!geteuid())
		return true;
	fprintf(stderr, "check_outfile: not root; skipping %s\n", what);
	return false;
}

/* mknod a character device @maj:@min at @path; false (said why) if not allowed. */
static bool make_chr(const char *path, unsigned maj, unsigned mnr)
{
	if (!mknod(path, S_IFCHR | 0666, makedev(maj, mnr)))
		return true;
	fprintf(stderr, "check_outfile: mknod %s: %s; skipping that device\n", path,
		strerror(errno));
	return false;
}

/* A new path: the temporary beside it while open, then exactly the bytes and nothing else. */
START_TEST(new_path)
{
	struct outfile o;
	struct stat sb;
	const char *out = at("out.json");

	open_write(&o, out, 0, "{\"a\": 1}\n");
	ck_assert(!outfile_in_place(&o));
	ck_assert_str_eq(o.tmp, tmp_of(out));
	ck_assert_int_eq(access(tmp_of(out), F_OK), 0);
	ck_assert_int_eq(access(out, F_OK), -1);
	ck_assert_int_eq(errno, ENOENT);
	commit_ok(&o);
	ck_assert_file_eq(out, "{\"a\": 1}\n");
	ck_assert_str_eq(listing(dir), "out.json");
	ck_assert_int_eq(stat(out, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0644); /* 0666 & ~umask */
	ck_assert_int_eq(o.fd, -1);
	ck_assert_ptr_null(o.name);
}
END_TEST

/* An existing 0640 file: a new inode with the new bytes and the old mode. */
START_TEST(replace_keeps_mode)
{
	struct outfile o;
	struct stat before, after;
	const char *out = at("r.csv");

	put(out, "old contents, longer than the new\n", 0640);
	ck_assert_int_eq(stat(out, &before), 0);
	open_write(&o, out, 0, "new\n");
	ck_assert_file_eq(out, "old contents, longer than the new\n");
	commit_ok(&o);
	ck_assert_file_eq(out, "new\n");
	ck_assert_int_eq(stat(out, &after), 0);
	ck_assert_uint_eq(after.st_mode & 07777, 0640);
	ck_assert(S_ISREG(after.st_mode));
	ck_assert_uint_ne(after.st_ino, before.st_ino); /* renamed over, not rewritten */
	ck_assert_str_eq(listing(dir), "r.csv");
}
END_TEST

/* A leftover "NAME.tmp.PID" is not touched: the next free name is used. */
START_TEST(stale_temporary_left_alone)
{
	struct outfile o;
	char stale[PATH_MAX + 32], second[PATH_MAX + 48];
	const char *out = at("s");

	snprintf(stale, sizeof(stale), "%s", tmp_of(out));
	snprintf(second, sizeof(second), "%s.1", stale);
	put(stale, "stale", 0600);
	open_write(&o, out, 0, "fresh");
	ck_assert_str_eq(o.tmp, second);
	commit_ok(&o);
	ck_assert_file_eq(out, "fresh");
	ck_assert_file_eq(stale, "stale");
}
END_TEST

/* Abort: the old bytes, no temporary; again after a commit or on a zeroed struct: nothing. */
START_TEST(abort_keeps_old)
{
	struct outfile o;
	const char *out = at("keep");

	put(out, "old\n", 0644);
	open_write(&o, out, 0, "half a resu");
	ck_assert_int_eq(fflush(outfile_stream(&o)), 0);
	ck_assert_file_eq(tmp_of(out), "half a resu");
	outfile_abort(&o);
	ck_assert_file_eq(out, "old\n");
	ck_assert_str_eq(listing(dir), "keep");
	outfile_abort(&o);

	open_write(&o, out, 0, "new\n");
	commit_ok(&o);
	outfile_abort(&o);
	ck_assert_file_eq(out, "new\n");
	ck_assert_str_eq(listing(dir), "keep");

	memset(&o, 0, sizeof(o)); /* fd 0: not ours, stays open */
	outfile_abort(&o);
	ck_assert_int_ne(fcntl(0, F_GETFD), -1);
}
END_TEST

/* After commit through @link: still a link (to @text_of_link), @final holds @bytes. */
static void check_link(const char *link, const char *text_of_link, const char *final,
		       const char *bytes)
{
	struct stat sb;
	char buf[PATH_MAX];
	ssize_t n;

	ck_assert_int_eq(lstat(link, &sb), 0);
	ck_assert(S_ISLNK(sb.st_mode));
	n = readlink(link, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = 0;
	ck_assert_str_eq(buf, text_of_link);
	ck_assert_int_eq(lstat(final, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_file_eq(final, bytes);
}

START_TEST(symlinks_followed)
{
	struct outfile o;

	/* Relative target, existing, mode kept. */
	put(at("t"), "old", 0600);
	ck_assert_int_eq(symlink("t", at("l")), 0);
	open_write(&o, at("l"), 0, "one");
	ck_assert_str_eq(o.tmp, tmp_of(at("t")));
	ck_assert_str_eq(o.target, at("t"));
	commit_ok(&o);
	check_link(at("l"), "t", at("t"), "one");
	{
		struct stat sb;

		ck_assert_int_eq(stat(at("t"), &sb), 0);
		ck_assert_uint_eq(sb.st_mode & 07777, 0600);
	}

	/* A chain of two: l2 -> l -> t. */
	ck_assert_int_eq(symlink("l", at("l2")), 0);
	open_write(&o, at("l2"), 0, "two");
	commit_ok(&o);
	check_link(at("l2"), "l", at("t"), "two");
	check_link(at("l"), "t", at("t"), "two");

	/* Relative to the link's own directory, not ours. */
	ck_assert_int_eq(mkdir(at("sub"), 0755), 0);
	ck_assert_int_eq(symlink("../t", at("sub/up")), 0);
	open_write(&o, at("sub/up"), 0, "three");
	commit_ok(&o);
	check_link(at("sub/up"), "../t", at("t"), "three");

	/* Dangling, its target's directory exists: the target is created. */
	ck_assert_int_eq(symlink("sub/new", at("d")), 0);
	open_write(&o, at("d"), 0, "four");
	ck_assert_str_eq(o.tmp, tmp_of(at("sub/new")));
	commit_ok(&o);
	check_link(at("d"), "sub/new", at("sub/new"), "four");
	ck_assert_str_eq(listing(dir), "d l l2 sub t");
	ck_assert_str_eq(listing(at("sub")), "new up");
}
END_TEST

/* Up to 40 links are followed, as the kernel does; the 41st is ELOOP. A loop is ELOOP. */
START_TEST(link_limits)
{
	char name[32], next[32], msg[PATH_MAX + 64];
	struct outfile o;

	ck_assert_int_eq(symlink("b", at("a")), 0);
	ck_assert_int_eq(symlink("a", at("b")), 0);
	snprintf(msg, sizeof(msg), "%s: Too many levels of symbolic links", at("a"));
	ck_assert_str_eq(open_fails(at("a")), msg);
	ck_assert(!outfile_is_regular_path(at("a")));
	ck_assert_str_eq(listing(dir), "a b");

	for (int i = 1; i <= 41; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		snprintf(next, sizeof(next), "c%d", i + 1);
		ck_assert_int_eq(symlink(next, at(name)), 0);
	}
	put(at("c42"), "", 0644);
	open_write(&o, at("c2"), 0, "forty");
	commit_ok(&o);
	ck_assert_file_eq(at("c42"), "forty");
	snprintf(msg, sizeof(msg), "%s: Too many levels of symbolic links", at("c1"));
	ck_assert_str_eq(open_fails(at("c1")), msg);
}
END_TEST

/* A directory (or a link to one) or a missing parent: the message, nothing created. */
START_TEST(open_errors)
{
	char msg[PATH_MAX + 64];

	ck_assert_int_eq(mkdir(at("d"), 0755), 0);
	ck_assert_int_eq(symlink("d", at("ld")), 0);
	snprintf(msg, sizeof(msg), "%s: Is a directory", at("d"));
	ck_assert_str_eq(open_fails(at("d")), msg);
	snprintf(msg, sizeof(msg), "%s: Is a directory", at("ld"));
	ck_assert_str_eq(open_fails(at("ld")), msg);
	snprintf(msg, sizeof(msg), "%s: No such file or directory", at("none/out"));
	ck_assert_str_eq(open_fails(at("none/out")), msg);
	ck_assert_str_eq(listing(dir), "d ld");
	ck_assert_str_eq(listing(at("d")), "");
}
END_TEST

/* A FIFO with a reader: the reader gets the bytes, the FIFO stays, no temporary. */
START_TEST(fifo_in_place)
{
	struct outfile o;
	struct stat sb;
	pid_t pid;

	ck_assert_int_eq(mkfifo(at("fifo"), 0644), 0);
	pid = fifo_reader(at("fifo"), at("got"));
	open_write(&o, at("fifo"), 0, "through the pipe\n");
	ck_assert(outfile_in_place(&o));
	ck_assert_ptr_null(o.tmp);
	commit_ok(&o);
	wait_ok(pid);
	ck_assert_file_eq(at("got"), "through the pipe\n");
	ck_assert_int_eq(lstat(at("fifo"), &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	ck_assert_str_eq(listing(dir), "fifo got");
}
END_TEST

/* Write @bytes to the character device @path; it stays the same node. */
static void chr_in_place(const char *path, const char *bytes)
{
	struct outfile o;
	struct stat before, after;

	ck_assert_int_eq(lstat(path, &before), 0);
	ck_assert(S_ISCHR(before.st_mode));
	open_write(&o, path, 0, bytes);
	ck_assert(outfile_in_place(&o));
	ck_assert_ptr_null(o.tmp);
	commit_ok(&o);
	ck_assert_int_eq(lstat(path, &after), 0);
	ck_assert(S_ISCHR(after.st_mode));
	ck_assert_uint_eq(after.st_rdev, before.st_rdev);
	ck_assert_uint_eq(after.st_ino, before.st_ino);
	ck_assert_uint_eq(after.st_mode, before.st_mode);
}

START_TEST(char_devices_in_place)
{
	/* First a node of our own: a mistake replaces it, not the system's /dev/null. */
	if (is_root("the mknod'd (1,3) device") && make_chr(at("null"), 1, 3)) {
		chr_in_place(at("null"), "discarded\n");
		ck_assert_str_eq(listing(dir), "null");
	}
	ck_assert(!outfile_is_regular_path("/dev/null"));
	chr_in_place("/dev/null", "discarded\n");
}
END_TEST

/*
 * Write @len bytes to the full device @path: the commit fails naming @path, with
 * errno @want_errno and its message when @want_errno is not 0; the node stays.
 */
static void full_fails(const char *path, size_t len, int want_errno)
{
	struct outfile o;
	struct err e = { 0 };
	struct stat sb;
	char msg[PATH_MAX + 64], want[PATH_MAX + 64], *data = malloc(len);

	ck_assert_ptr_nonnull(data);
	memset(data, 'x', len);
	ck_assert_int_eq(outfile_open(&o, path, 0, &e), 0);
	ck_assert_ptr_nonnull(outfile_stream(&o));
	ck_assert_uint_eq(fwrite(data, 1, len, outfile_stream(&o)) == len, len < BUFSIZ);
	free(data);
	ck_assert(outfile_in_place(&o));
	errno = 0;
	ck_assert_int_eq(outfile_commit(&o, &e), -1);
	err_format(&e, msg, sizeof(msg));
	if (want_errno) {
		ck_assert_int_eq(errno, want_errno);
		snprintf(want, sizeof(want), "%s: %s", path, strerror(want_errno));
		ck_assert_str_eq(msg, want);
	} else {
		ck_assert_int_ne(errno, 0);
		snprintf(want, sizeof(want), "%s: ", path);
		ck_assert_int_eq(strncmp(msg, want, strlen(want)), 0);
	}
	ck_assert_int_eq(o.fd, -1);
	ck_assert_int_eq(lstat(path, &sb), 0);
	ck_assert(S_ISCHR(sb.st_mode));
	ck_assert_uint_eq(sb.st_rdev, makedev(1, 7));
}

START_TEST(full_device_fails)
{
	const char *full = "/dev/full";

	/* As root, only a node of our own (see chr_in_place()); else the system's, in place. */
	if (!geteuid()) {
		if (!make_chr(at("full"), 1, 7))
			return;
		full = at("full");
	} else {
		fprintf(stderr, "check_outfile: not root; writing the system's /dev/full\n");
	}
	/* In the stdio buffer until the commit: "PATH: No space left on device". */
	full_fails(full, 10, ENOSPC);
	/* Already failed inside fwrite(): the commit reports the errno fwrite() met. */
	full_fails(full, 100000, ENOSPC);
}
END_TEST

/* Redirect fd 1 to @path for the test; the saved descriptor. */
static int stdout_to(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), saved;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fflush(stdout), 0);
	saved = dup(1);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, 1), 1);
	close(fd);
	return saved;
}

static void stdout_back(int saved)
{
	fflush(stdout);
	ck_assert_int_eq(dup2(saved, 1), 1);
	close(saved);
}

/* "-" is standard output itself, /dev/stdout a duplicate of fd 1: both in place, fd 1 stays. */
START_TEST(stdout_in_place)
{
	struct outfile o;
	struct err e = { 0 };
	FILE *tool;
	int saved = stdout_to(at("so"));

	printf("before ");
	open_write(&o, "-", 0, "dash ");
	ck_assert(outfile_in_place(&o));
	ck_assert_ptr_eq(outfile_stream(&o), stdout);
	ck_assert_str_eq(o.name, "<stdout>");
	commit_ok(&o);

	open_write(&o, "/dev/stdout", 0, "devstdout ");
	ck_assert(outfile_in_place(&o));
	ck_assert_int_ne(o.fd, 1);
	commit_ok(&o);
	ck_assert_int_eq(write(1, "fd1 ", 4), 4);

	ck_assert_int_eq(outfile_open(&o, "-", OUTFILE_BY_PATH, &e), 0);
	tool = fopen(outfile_tool_path(&o), "w");
	ck_assert_ptr_nonnull(tool);
	fputs("tool\n", tool);
	ck_assert_int_eq(fclose(tool), 0);
	commit_ok(&o);
	stdout_back(saved);
	ck_assert_file_eq(at("so"), "before dash devstdout fd1 tool\n");
	ck_assert_str_eq(listing(dir), "so");
}
END_TEST

/* /proc/self/fd/N opened O_APPEND: appended after "abc"; N stays open and usable. */
START_TEST(proc_fd_keeps_append)
{
	struct outfile o;
	char p[64];
	int fd;

	put(at("app"), "abc", 0644);
	fd = open(at("app"), O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	ck_assert(!outfile_is_regular_path(p));
	open_write(&o, p, 0, "def");
	ck_assert(outfile_in_place(&o));
	ck_assert_ptr_null(o.tmp);
	commit_ok(&o);
	ck_assert_file_eq(at("app"), "abcdef");
	ck_assert_int_ne(fcntl(fd, F_GETFD), -1);
	ck_assert_int_eq(write(fd, "g", 1), 1);
	ck_assert_int_eq(close(fd), 0);
	ck_assert_file_eq(at("app"), "abcdefg");
	ck_assert_str_eq(listing(dir), "app");
}
END_TEST

/* A regular file reached through /proc: written in place (same inode), truncated first. */
START_TEST(proc_path_in_place)
{
	struct outfile o;
	struct stat before, after;
	char p[PATH_MAX + 32];

	put(at("r"), "old contents, longer than the new\n", 0600);
	ck_assert_int_eq(stat(at("r"), &before), 0);
	snprintf(p, sizeof(p), "/proc/self/root%s", at("r"));
	ck_assert(!outfile_is_regular_path(p));
	open_write(&o, p, 0, "new\n");
	ck_assert(outfile_in_place(&o));
	ck_assert_ptr_null(o.tmp);
	commit_ok(&o);
	ck_assert_file_eq(at("r"), "new\n");
	ck_assert_int_eq(stat(at("r"), &after), 0);
	ck_assert_uint_eq(after.st_ino, before.st_ino);
	ck_assert_str_eq(listing(dir), "r");
}
END_TEST

/* The rename fails (a directory took the name meanwhile): the message, no temporary left. */
START_TEST(commit_failure_removes_temporary)
{
	struct outfile o;
	struct err e = { 0 };
	char msg[PATH_MAX + 64], want[PATH_MAX + 64];
	const char *out = at("x");

	open_write(&o, out, 0, "lost");
	ck_assert_int_eq(mkdir(out, 0755), 0);
	put(at("x/inside"), "", 0644);
	errno = 0;
	ck_assert_int_eq(outfile_commit(&o, &e), -1);
	ck_assert_int_eq(errno, EISDIR);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: Is a directory", out);
	ck_assert_str_eq(msg, want);
	ck_assert_str_eq(listing(dir), "x");
	ck_assert_str_eq(listing(out), "inside");
}
END_TEST

/* Write @text to @path by name, as gnuplot would. */
static void tool_writes(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(by_path_regular)
{
	struct outfile o;
	struct err e = { 0 };
	const char *out = at("plot.png");

	ck_assert_int_eq(outfile_open(&o, out, OUTFILE_BY_PATH, &e), 0);
	ck_assert(!outfile_in_place(&o));
	ck_assert_str_eq(outfile_tool_path(&o), tmp_of(out));
	tool_writes(outfile_tool_path(&o), "PNG bytes");
	ck_assert_int_eq(access(out, F_OK), -1);
	commit_ok(&o);
	ck_assert_file_eq(out, "PNG bytes");
	ck_assert_str_eq(listing(dir), "plot.png");
}
END_TEST

/* In place by path: a private temporary in $TMPDIR, copied into the FIFO, then removed. */
START_TEST(by_path_fifo)
{
	struct outfile o;
	struct err e = { 0 };
	struct stat sb;
	char prefix[PATH_MAX];
	const char *tool;
	pid_t pid;

	ck_assert_int_eq(mkdir(at("tt"), 0700), 0);
	ck_assert_int_eq(setenv("TMPDIR", at("tt"), 1), 0);
	ck_assert_int_eq(mkfifo(at("fifo"), 0644), 0);
	pid = fifo_reader(at("fifo"), at("got"));
	ck_assert_int_eq(outfile_open(&o, at("fifo"), OUTFILE_BY_PATH, &e), 0);
	unsetenv("TMPDIR");
	ck_assert(outfile_in_place(&o));
	tool = outfile_tool_path(&o);
	ck_assert_ptr_nonnull(tool);
	snprintf(prefix, sizeof(prefix), "%s/mmusim-out-", at("tt"));
	ck_assert_int_eq(strncmp(tool, prefix, strlen(prefix)), 0);
	ck_assert_uint_eq(strlen(tool), strlen(prefix) + 6);
	ck_assert_int_eq(lstat(tool, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	tool_writes(tool, "plotted through a FIFO\n");
	commit_ok(&o);
	wait_ok(pid);
	ck_assert_file_eq(at("got"), "plotted through a FIFO\n");
	ck_assert_str_eq(listing(at("tt")), "");
	ck_assert_int_eq(lstat(at("fifo"), &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	ck_assert_str_eq(listing(dir), "fifo got tt");
}
END_TEST

START_TEST(is_regular_path)
{
	put(at("reg"), "x", 0644);
	ck_assert_int_eq(symlink("reg", at("lreg")), 0);
	ck_assert_int_eq(symlink("nothing-yet", at("dangling")), 0);
	ck_assert_int_eq(mkfifo(at("fifo"), 0644), 0);
	ck_assert_int_eq(mkdir(at("d"), 0755), 0);

	ck_assert(outfile_is_regular_path(at("new")));
	ck_assert(outfile_is_regular_path(at("reg")));
	ck_assert(outfile_is_regular_path(at("lreg")));
	ck_assert(outfile_is_regular_path(at("dangling")));
	ck_assert(!outfile_is_regular_path("-"));
	ck_assert(!outfile_is_regular_path("/dev/null"));
	ck_assert(!outfile_is_regular_path(at("fifo")));
	ck_assert(!outfile_is_regular_path(at("d")));
	ck_assert(!outfile_is_regular_path("/dev/stdout"));
	ck_assert_str_eq(listing(dir), "d dangling fifo lreg reg");
}
END_TEST

/* The temporaries of open outfiles are removed; a committed file is not. */
START_TEST(remove_pending)
{
	struct outfile a, b;
	char ta[PATH_MAX + 32];

	open_write(&a, at("a"), 0, "A");
	snprintf(ta, sizeof(ta), "%s", tmp_of(at("a")));
	open_write(&b, at("b"), OUTFILE_BY_PATH, "B");
	ck_assert_int_eq(access(ta, F_OK), 0);
	ck_assert_int_eq(access(tmp_of(at("b")), F_OK), 0);
	outfile_remove_pending();
	ck_assert_str_eq(listing(dir), "");
	outfile_abort(&a);
	outfile_abort(&b);

	open_write(&a, at("a"), 0, "A");
	commit_ok(&a);
	open_write(&b, at("b"), 0, "B");
	outfile_remove_pending();
	ck_assert_str_eq(listing(dir), "a");
	ck_assert_file_eq(at("a"), "A");
	outfile_abort(&b);
}
END_TEST

/* Committed and aborted outfiles give their slots back: the table never fills up. */
START_TEST(pending_slots_reused)
{
	struct outfile o;
	char name[32];

	for (int i = 0; i < 2 * OUTFILE_PENDING_MAX; i++) {
		snprintf(name, sizeof(name), "f%d", i % 3);
		open_write(&o, at(name), 0, "x");
		ck_assert_int_ge(o.pending, 0);
		if (i % 2)
			commit_ok(&o);
		else
			outfile_abort(&o);
	}
	open_write(&o, at("last"), 0, "x");
	ck_assert_int_ge(o.pending, 0);
	ck_assert_int_eq(access(tmp_of(at("last")), F_OK), 0);
	outfile_remove_pending();
	ck_assert_int_eq(access(tmp_of(at("last")), F_OK), -1);
	outfile_abort(&o);
	ck_assert_str_eq(listing(dir), "f0 f1 f2");
}
END_TEST

/* A forked child's outfile_remove_pending() leaves its parent's temporaries. */
START_TEST(remove_pending_not_in_child)
{
	struct outfile o;
	pid_t pid;

	open_write(&o, at("p"), 0, "parent's");
	ck_assert_int_eq(fflush(outfile_stream(&o)), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		outfile_remove_pending();
		_exit(0);
	}
	wait_ok(pid);
	ck_assert_file_eq(tmp_of(at("p")), "parent's");
	commit_ok(&o);
	ck_assert_file_eq(at("p"), "parent's");
	ck_assert_str_eq(listing(dir), "p");
}
END_TEST

static Suite *outfile_suite(void)
{
	Suite *s = suite_create("outfile");
	TCase *tc = tcase_create("outfile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, new_path);
	tcase_add_test(tc, replace_keeps_mode);
	tcase_add_test(tc, stale_temporary_left_alone);
	tcase_add_test(tc, abort_keeps_old);
	tcase_add_test(tc, symlinks_followed);
	tcase_add_test(tc, link_limits);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, fifo_in_place);
	tcase_add_test(tc, char_devices_in_place);
	tcase_add_test(tc, full_device_fails);
	tcase_add_test(tc, stdout_in_place);
	tcase_add_test(tc, proc_fd_keeps_append);
	tcase_add_test(tc, proc_path_in_place);
	tcase_add_test(tc, commit_failure_removes_temporary);
	tcase_add_test(tc, by_path_regular);
	tcase_add_test(tc, by_path_fifo);
	tcase_add_test(tc, is_regular_path);
	tcase_add_test(tc, remove_pending);
	tcase_add_test(tc, pending_slots_reused);
	tcase_add_test(tc, remove_pending_not_in_child);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(outfile_suite());
}
