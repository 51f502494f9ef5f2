/*
 * fuzz_config.c - the YAML config loader (sim/config.c, config_load_string()).
 *
 * Checks (config.h): a failed load leaves the config as it was and names the
 * input in a non-empty message; a load that succeeds came from a document
 * that repeats no key in any mapping, gives a config that config_validate()
 * accepts, and config_write_yaml() writes it so that loading the text back
 * onto the defaults gives the same config, byte for byte. Loads go onto
 * the defaults or, for half the inputs, onto a config that is itself the
 * result of loading the input (a second file on top).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/config.h"
#include "fuzz.h"

int fuzz_config_one(const uint8_t *d, size_t n)
{
	char *yaml = fuzz_strndup(d, n);
	struct sim_config c, before;
	struct err e = { 0 };
	int r;

	config_defaults(&c);
	if (fuzz_hash(d, n) & 1) {
		/* a second file on top of the first */
		if (config_load_string(&c, yaml, "first.yaml", &e))
			config_defaults(&c);
		memset(&e, 0, sizeof(e));
	}
	memcpy(&before, &c, sizeof(c)); /* padding too: compared with memcmp */
	r = config_load_string(&c, yaml, "fuzz.yaml", &e);
	if (r) {
		FUZZ_ASSERT(r == -1, "config_load_string returned %d", r);
		FUZZ_ASSERT(e.msg[0] && !strcmp(e.file, "fuzz.yaml"), "bad error '%s: %s'", e.file,
			    e.msg);
		FUZZ_ASSERT(!memcmp(&c, &before, sizeof(c)), "a failed load changed the config (%s)",
			    e.msg);
	} else {
		FUZZ_ASSERT(!e.msg[0], "a load that succeeded set an error: %s", e.msg);
		FUZZ_ASSERT(!config_validate(&c, "fuzz.yaml", &e), "a loaded config fails validation: %s",
			    e.msg);
		FUZZ_ASSERT(!fuzz_yaml_dup_key((const uint8_t *)yaml, strlen(yaml), true),
			    "a config with a repeated key loaded");
		fuzz_config_roundtrip(&c);
	}
	free(yaml);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_config_one(d, n);
}
#endif
