/*
 * check_capture.c - `mmusim capture`: real Valgrind runs of /bin/true read back
 * through trace_open(), and the failures (program exits non-zero, program or
 * valgrind missing) that must leave no file behind.
 *
 * Valgrind is needed (the Makefile's DEBS install it); without it the tests
 * that run it print why and pass, and only the "valgrind not found" test runs.
 * Lackey on /bin/true takes about 0.6 s, so each capture here is of /bin/true.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "check_run.h"
#include "trace.h"

struct counts {
	uint64_t kind[R_KIND_NR];
	uint64_t ev[EV_NR];
	uint32_t first_ev; /* kind of the first event, EV_NR if none */
	bool mmaps_aligned; /* every mmap event: page-aligned address, length > 0 */
};

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_capture.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Remove what the test left (a test fails on leftovers before this runs). */
static void teardown(void)
{
	check_rmdir(dir);
}

static bool have_valgrind(void)
{
	if (!system("valgrind --version >/dev/null 2>&1"))
		return true;
	fprintf(stderr, "check_capture: valgrind is not installed; skipping the captures\n");
	return false;
}

/* The names in the test directory, sorted, joined by spaces ("" if empty). */
static void listing(char *buf, size_t n)
{
	struct dirent **names;
	int k = scandir(dir, &names, NULL, alphasort);
	size_t len = 0;

	buf[0] = 0;
	ck_assert_int_ge(k, 0);
	for (int i = 0; i < k; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " " : "",
						names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

static void read_trace(const char *path, struct counts *c)
{
	struct err e = { 0 };
	struct trace_reader *r = trace_open(path, TF_AUTO, &e);
	struct trace_batch b;
	char msg[1024];
	int n;

	memset(c, 0, sizeof(*c));
	c->first_ev = EV_NR;
	c->mmaps_aligned = true;
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(r != NULL, "%s", msg);
	ck_assert_int_eq(r->format, TF_LACKEY);
	while ((n = trace_next(r, &b, &e)) > 0) {
		for (size_t i = 0; i < b.n; i++) {
			const struct trace_rec *t = &b.recs[i];

			c->kind[t->kind]++;
			if (t->kind == R_EVENT) {
				const struct os_event *o = &b.ev[t->size];

				if (c->first_ev == EV_NR)
					c->first_ev = o->kind;
				c->ev[o->kind]++;
				if (o->kind == EV_MMAP && ((o->addr & (PAGE_SIZE - 1)) || !o->len))
					c->mmaps_aligned = false;
			}
		}
	}
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(n == 0, "%s", msg);
	trace_close(r);
}

static void first_bytes(const char *path, unsigned char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, buf, n), (ssize_t)n);
	close(fd);
}

static off_t file_size(const char *path)
{
	struct stat sb;

	ck_assert_int_eq(stat(path, &sb), 0);
	return sb.st_size;
}

START_TEST(true_to_zst)
{
	static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	char *argv[] = { "/bin/true", NULL };
	struct capture_stats st;
	struct err e = { 0 };
	struct counts c;
	unsigned char m[4];
	char out[128], msg[1024];
	int r;

	if (!have_valgrind())
		return;
	snprintf(out, sizeof(out), "%s/true.lackey.zst", dir);
	r = capture_run_stats(out, argv, &st, &e);
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(r == 0, "%s", msg);
	/* Only the final name: the temporary was renamed. */
	listing(msg, sizeof(msg));
	ck_assert_str_eq(msg, "true.lackey.zst");
	first_bytes(out, m, sizeof(m));
	ck_assert_mem_eq(m, zstd_magic, sizeof(m));
	ck_assert_uint_eq(st.out_bytes, (uint64_t)file_size(out));
	ck_assert_uint_gt(st.trace_bytes, 10 * st.out_bytes);
	ck_assert_int_eq(st.signo, 0);
	ck_assert(st.seconds > 0);

	read_trace(out, &c);
	ck_assert_uint_gt(c.kind[R_IFETCH], 10000);
	ck_assert_uint_gt(c.kind[R_LOAD], 1000);
	ck_assert_uint_gt(c.kind[R_STORE], 1000);
	ck_assert_uint_eq(c.kind[R_INSNS], 0);
	ck_assert_uint_ge(c.ev[EV_MMAP], 1);
	ck_assert_uint_ge(c.ev[EV_BRK], 1);
	ck_assert_uint_eq(c.kind[R_EVENT], c.ev[EV_MMAP] + c.ev[EV_MUNMAP] + c.ev[EV_MPROTECT] +
						   c.ev[EV_MADVISE] + c.ev[EV_BRK] + c.ev[EV_MREMAP]);
	/* The dynamic loader's first call is brk(0), to find the break. */
	ck_assert_uint_eq(c.first_ev, EV_BRK);
	ck_assert(c.mmaps_aligned);
}
END_TEST

/* .gz, .xz and a plain name: the suffix picks the compressor; each reads back. */
START_TEST(suffix_picks_compression)
{
	static const struct {
		const char *name;
		unsigned char magic[6];
		size_t n;
	} cases[] = {
		{ "t.lackey.gz", { 0x1f, 0x8b }, 2 },
		{ "t.lackey.xz", { 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00 }, 6 },
		{ "t.lackey", { '=', '=' }, 2 }, /* Valgrind's ==pid== banner, as it came */
	};
	char *argv[] = { "/bin/true", NULL };
	uint64_t ifetch = 0;
	int r;

	if (!have_valgrind())
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = { 0 };
		struct counts c;
		unsigned char m[6];
		char out[128], msg[1024];

		snprintf(out, sizeof(out), "%s/%s", dir, cases[i].name);
		r = capture_run(out, argv, &e);
		err_format(&e, msg, sizeof(msg));
		ck_assert_msg(r == 0, "%s", msg);
		first_bytes(out, m, cases[i].n);
		ck_assert_mem_eq(m, cases[i].magic, cases[i].n);
		read_trace(out, &c);
		ck_assert_uint_gt(c.kind[R_IFETCH], 10000);
		ck_assert_uint_ge(c.ev[EV_MMAP], 1);
		ck_assert_uint_ge(c.ev[EV_BRK], 1);
		if (i == 0)
			ifetch = c.kind[R_IFETCH];
		/* /bin/true runs the same instructions each time. */
		ck_assert_uint_eq(c.kind[R_IFETCH], ifetch);
	}
}
END_TEST

START_TEST(failing_program_leaves_nothing)
{
	char *argv[] = { "/bin/false", NULL };
	struct err e = { 0 };
	char out[128], msg[1024];

	if (!have_valgrind())
		return;
	snprintf(out, sizeof(out), "%s/false.lackey.zst", dir);
	ck_assert_int_eq(capture_run(out, argv, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: /bin/false exited with status 1");
	listing(msg, sizeof(msg));
	ck_assert_str_eq(msg, "");
}
END_TEST

START_TEST(missing_program)
{
	char *abs_argv[] = { "/nonexistent/prog", "x", NULL };
	char *path_argv[] = { "mmusim-no-such-command", NULL };
	char *dir_argv[] = { "/tmp", NULL };
	struct err e = { 0 };
	char out[128], msg[1024];

	if (!have_valgrind())
		return;
	snprintf(out, sizeof(out), "%s/o.lackey.zst", dir);
	ck_assert_int_eq(capture_run(out, abs_argv, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: /nonexistent/prog: No such file or directory");
	ck_assert_int_eq(capture_run(out, path_argv, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: mmusim-no-such-command: command not found");
	ck_assert_int_eq(capture_run(out, dir_argv, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: /tmp: Is a directory");
	listing(msg, sizeof(msg));
	ck_assert_str_eq(msg, "");
}
END_TEST

START_TEST(valgrind_not_found)
{
	char *argv[] = { "/bin/true", NULL };
	const char *path = getenv("PATH");
	char *saved = path ? strdup(path) : NULL;
	struct err e = { 0 };
	char out[128], msg[1024];
	int r;

	ck_assert_int_eq(setenv("PATH", dir, 1), 0); /* an empty directory */
	snprintf(out, sizeof(out), "%s/o.lackey.zst", dir);
	r = capture_run(out, argv, &e);
	/* Restored for the tests that follow when Check does not fork (CK_FORK=no). */
	if (saved)
		setenv("PATH", saved, 1);
	else
		unsetenv("PATH");
	free(saved);
	ck_assert_int_eq(r, -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: valgrind not found (apt-get install valgrind)");
	listing(msg, sizeof(msg));
	ck_assert_str_eq(msg, "");
}
END_TEST

START_TEST(unwritable_output)
{
	char *argv[] = { "/bin/true", NULL };
	struct err e = { 0 };
	char out[128], msg[1024];

	if (!have_valgrind())
		return;
	snprintf(out, sizeof(out), "%s/no/such/dir/o.lackey.zst", dir);
	ck_assert_int_eq(capture_run(out, argv, &e), -2); /* bad input: exit 2 */
	err_format(&e, msg, sizeof(msg));
	snprintf(out + strlen(out), sizeof(out) - strlen(out), ": No such file or directory");
	ck_assert_str_eq(msg, out);
	ck_assert_int_eq(capture_run("", argv, &e), -2);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: empty output name");
	argv[0] = NULL;
	ck_assert_int_eq(capture_run(out, argv, &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: no program to run");
}
END_TEST

/*
 * "-": plain text on standard output; a failure ends it with a line the reader
 * rejects, so `capture -o - | run -` cannot take a partial trace for a whole one.
 */
START_TEST(stdout_failure_poisons_the_stream)
{
	static const char tail[] = "\n**mmusim capture failed: /bin/false exited with status 1**\n";
	char *argv[] = { "/bin/false", NULL };
	struct err e = { 0 };
	char path[128], msg[1024], buf[sizeof(tail)];
	struct trace_reader *r;
	struct trace_batch b;
	int fd, saved, n;
	off_t size;

	if (!have_valgrind())
		return;
	snprintf(path, sizeof(path), "%s/stdout.lackey", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	close(fd);
	n = capture_run("-", argv, &e);
	ck_assert_int_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	ck_assert_int_eq(n, -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "capture: /bin/false exited with status 1");

	size = file_size(path);
	ck_assert_int_gt(size, 100000);
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(pread(fd, buf, sizeof(tail) - 1, size - (off_t)(sizeof(tail) - 1)),
			 (ssize_t)(sizeof(tail) - 1));
	close(fd);
	ck_assert_mem_eq(buf, tail, sizeof(tail) - 1);

	r = trace_open(path, TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	while ((n = trace_next(r, &b, &e)) > 0)
		;
	trace_close(r);
	ck_assert_int_eq(n, -1);
	ck_assert_str_eq(e.file, path);
	ck_assert_uint_gt(e.line, 10000);
	ck_assert_str_eq(e.msg, "unrecognized line");
}
END_TEST

static Suite *capture_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("capture");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, true_to_zst);
	tcase_add_test(tc, suffix_picks_compression);
	tcase_add_test(tc, failing_program_leaves_nothing);
	tcase_add_test(tc, missing_program);
	tcase_add_test(tc, valgrind_not_found);
	tcase_add_test(tc, unwritable_output);
	tcase_add_test(tc, stdout_failure_poisons_the_stream);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(capture_suite());
}
