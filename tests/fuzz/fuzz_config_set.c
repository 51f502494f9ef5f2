/*
 * fuzz_config_set.c - --set overrides (sim/config.c, config_set()): the
 * input's lines are applied in order, as several --set options are.
 *
 * Checks (config.h): a failed --set leaves the config as it was, with a
 * non-empty message naming "--set ..."; after the last one, a config that
 * config_validate() accepts survives config_write_yaml() and a load back
 * unchanged; config_get() of the path of a --set that succeeded answers a
 * NUL-terminated string or -1 (an interior path or a whole list).
 */
#include <stdlib.h>
#include <string.h>

#include "../../sim/config.h"
#include "fuzz.h"

#define FUZZ_SETS_MAX 8

int fuzz_config_set_one(const uint8_t *d, size_t n)
{
	char *text = fuzz_strndup(d, n), *line = text, *nl;
	struct sim_config c, before;
	struct err e;
	char val[512];

	config_defaults(&c);
	for (int i = 0; i < FUZZ_SETS_MAX && line; i++, line = nl ? nl + 1 : NULL) {
		const char *eq;
		int r;

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		memcpy(&before, &c, sizeof(c));
		memset(&e, 0, sizeof(e));
		r = config_set(&c, line, &e);
		if (r) {
			FUZZ_ASSERT(r == -1, "config_set returned %d", r);
			FUZZ_ASSERT(e.msg[0] && !strncmp(e.file, "--set ", 6), "bad error '%s: %s'",
				    e.file, e.msg);
			FUZZ_ASSERT(!memcmp(&c, &before, sizeof(c)),
				    "a failed --set changed the config (%s)", e.msg);
			continue;
		}
		FUZZ_ASSERT(!e.msg[0], "a --set that succeeded set an error: %s", e.msg);
		/* a leaf path reads back (interior paths and whole lists do not) */
		eq = strchr(line, '=');
		if (eq && (size_t)(eq - line) < 128) {
			char path[128];

			memcpy(path, line, (size_t)(eq - line));
			path[eq - line] = '\0';
			r = config_get(&c, path, val, sizeof(val));
			FUZZ_ASSERT(r == 0 || r == -1, "config_get returned %d", r);
			FUZZ_ASSERT(memchr(val, '\0', sizeof(val)), "config_get left no NUL");
		}
	}
	memset(&e, 0, sizeof(e));
	if (!config_validate(&c, "--set", &e))
		fuzz_config_roundtrip(&c);
	else
		FUZZ_ASSERT(e.msg[0] && !strcmp(e.file, "--set"), "bad error '%s: %s'", e.file, e.msg);
	free(text);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_config_set_one(d, n);
}
#endif
