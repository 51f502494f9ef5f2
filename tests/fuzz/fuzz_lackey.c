/*
 * fuzz_lackey.c - the lackey reader (sim/trace_lackey.c) through trace_open(),
 * record lines and SYSCALL lines alike, also across the first chunk boundary
 * (the unfinished line carried into the next chunk). Checks: fuzz_trace_drain().
 */
#include "fuzz.h"

/* Lines "==0== xxx...": Valgrind messages, which are skipped. */
static void lackey_fill(uint8_t *buf, size_t len)
{
	fuzz_fill_lines(buf, len, "==0== ");
}

static const struct fuzz_trace_fmt lackey_fmt = {
	.name = "lackey",
	.fmt = TF_LACKEY,
	.fill = lackey_fill,
	.fill_recs = fuzz_no_recs,
	.align = 1,
};

int fuzz_lackey_one(const uint8_t *d, size_t n)
{
	fuzz_trace_run(&lackey_fmt, d, n);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_lackey_one(d, n);
}
#endif
