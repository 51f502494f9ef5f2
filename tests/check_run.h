/* check_run.h - the one main() body every Check suite shares. */
#ifndef MMUSIM_CHECK_RUN_H
#define MMUSIM_CHECK_RUN_H

#include <check.h>

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

#endif
