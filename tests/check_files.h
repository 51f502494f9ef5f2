/*
 * check_files.h - scratch files for the suites that write traces (check_trace,
 * check_formats, check_markers, check_lackey_parse): tmp_path() names a file in
 * the suite's scratch directory, write_file() writes one. The including suite
 * defines `tmpdir` (its mkdtemp()'d directory) before including this header.
 */
#ifndef MMUSIM_CHECK_FILES_H
#define MMUSIM_CHECK_FILES_H

#include <check.h>
#include <stdio.h>

/* @name inside tmpdir; four results stay valid at once (a rotating buffer). */
static inline const char *tmp_path(const char *name)
{
	static char buf[4][1024];
	static int i;
	char *p = buf[i++ & 3];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

/* Write @len bytes of @data to @path (created or truncated); the test fails if it cannot. */
static inline void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

#endif
