/* check_run.h - the one main() body every Check suite shares. */
#ifndef MMUSIM_CHECK_RUN_H
#define MMUSIM_CHECK_RUN_H

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Run @s (CK_NORMAL); return the process exit status: 0 if every test passed. */
static inline int check_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

/* Remove the flat temporary directory @dir and the files a test left in it. */
static inline void check_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[512];

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
	closedir(d);
	rmdir(dir);
}

#endif
