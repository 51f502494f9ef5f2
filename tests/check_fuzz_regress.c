/*
 * check_fuzz_regress.c - the fuzz harnesses' bodies (tests/fuzz/fuzz_*.c)
 * run on the committed inputs, under the ordinary build: every crash input
 * the fuzzers found (tests/fuzz/regress/NAME/, each fixed since) and every
 * seed (tests/fuzz/corpus/NAME/). A harness aborts on a broken check, which
 * fails its test here; the bodies are #included, so this suite needs nothing
 * beyond libmmusim.a (tests/fuzz/run.sh builds the same files for libFuzzer).
 *
 * The input directories are found next to this file (tests/fuzz/ from the
 * repository root), or under $MMUSIM_FUZZDIR.
 */
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/common.c"
#include "fuzz/fuzz_champsim.c"
#include "fuzz/fuzz_config.c"
#include "fuzz/fuzz_config_set.c"
#include "fuzz/fuzz_decompress.c"
#include "fuzz/fuzz_din.c"
#include "fuzz/fuzz_lackey.c"
#include "fuzz/fuzz_mtr.c"
#include "fuzz/fuzz_pin.c"
#include "fuzz/fuzz_sweep.c"
#include "fuzz/fuzz_trace_auto.c"
#include "fuzz/fuzz_workload.c"

#include "check_run.h"

static const struct {
	const char *name;
	int (*one)(const uint8_t *d, size_t n);
} harness[] = {
	{ "champsim", fuzz_champsim_one },     { "config", fuzz_config_one },
	{ "config_set", fuzz_config_set_one }, { "decompress", fuzz_decompress_one },
	{ "din", fuzz_din_one },               { "lackey", fuzz_lackey_one },
	{ "mtr", fuzz_mtr_one },               { "pin", fuzz_pin_one },
	{ "sweep", fuzz_sweep_one },           { "trace_auto", fuzz_trace_auto_one },
	{ "workload", fuzz_workload_one },
};

/* $MMUSIM_FUZZDIR, else fuzz/ next to this source file. */
static const char *fuzz_dir_path(void)
{
	static char buf[1024];
	const char *d = getenv("MMUSIM_FUZZDIR"), *slash = strrchr(__FILE__, '/');

	if (d && *d)
		return d;
	snprintf(buf, sizeof(buf), "%.*sfuzz", slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
	return buf;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *d = NULL;
	size_t cap = 0, r;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	*n = 0;
	for (;;) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 4096;
			d = realloc(d, cap);
			ck_assert(d != NULL);
		}
		r = fread(d + *n, 1, cap - *n, f);
		if (!r)
			break;
		*n += r;
	}
	fclose(f);
	return d;
}

/* Run every file of DIR/@sub/@name through harness @h; returns how many. */
static unsigned run_dir(unsigned h, const char *sub)
{
	char dir[1200], path[1500];
	struct dirent *de;
	unsigned count = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/%s/%s", fuzz_dir_path(), sub, harness[h].name);
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		uint8_t *d;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		d = slurp(path, &n);
		/* a failed check aborts, and names the file through stderr */
		fprintf(stderr, "%s: %s\n", harness[h].name, path);
		ck_assert_int_eq(harness[h].one(d, n), 0);
		free(d);
		count++;
	}
	closedir(dp);
	return count;
}

START_TEST(test_regress)
{
	run_dir((unsigned)_i, "regress");
}
END_TEST

START_TEST(test_corpus)
{
	/* every harness has seeds: an empty corpus would make this test vacuous */
	ck_assert_uint_ge(run_dir((unsigned)_i, "corpus"), 3);
}
END_TEST

static Suite *fuzz_regress_suite(void)
{
	Suite *s = suite_create("fuzz_regress");
	TCase *tc = tcase_create("regress");
	TCase *tcc = tcase_create("corpus");

	tcase_set_timeout(tc, 60); /* also what fails a regression of the quadratic pending-syscall list */
	tcase_set_timeout(tcc, 120);
	tcase_add_loop_test(tc, test_regress, 0, (int)ARRAY_SIZE(harness));
	tcase_add_loop_test(tcc, test_corpus, 0, (int)ARRAY_SIZE(harness));
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tcc);
	return s;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	char tmp[512];
	int ret;

	/*
	 * The harnesses' scratch directories go in here: the forked tests exit
	 * without running their atexit() clean-up.
	 */
	snprintf(tmp, sizeof(tmp), "%s/check_fuzz_regress.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		perror(tmp);
		return 1;
	}
	setenv("TMPDIR", tmp, 1);
	ret = check_run(fuzz_regress_suite());
	nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ret;
}
