/*
 * fuzz_trace_auto.c - format detection (sim/trace.c, the readers' probes and
 * the suffix rules) and whichever reader it picks: trace_open(TF_AUTO).
 *
 * Input: byte 0 chooses the file name's suffix (low 4 bits: the format
 * suffix, bits 4-5: a compression suffix), the rest is the file. Checks:
 * fuzz_trace_drain(), with the bound of the format detected.
 */
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"

static const char *const fmt_sfx[16] = {
	"", ".lackey", ".mtr", ".pin", "pinatrace.out", ".din", ".champsim", ".champsimtrace",
	"champsim.trace", ".txt", "", "", "", "", "", "",
};
static const char *const comp_sfx[4] = { "", ".gz", ".xz", ".zst" };

int fuzz_trace_auto_one(const uint8_t *d, size_t n)
{
	char name[64];
	const char *path;

	if (!n)
		return 0;
	snprintf(name, sizeof(name), "t%s%s", fmt_sfx[d[0] & 15], comp_sfx[(d[0] >> 4) & 3]);
	path = fuzz_path(name);
	fuzz_write(path, d + 1, n - 1);
	fuzz_trace_drain(path, TF_AUTO, fuzz_is_compressed(d + 1, n - 1) ? SIZE_MAX : n - 1, 0, 256,
			 NULL, 0);
	unlink(path);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_trace_auto_one(d, n);
}
#endif
