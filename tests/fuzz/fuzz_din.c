/*
 * fuzz_din.c - the Dinero IV din reader (sim/trace_din.c) through
 * trace_open(), also across the first chunk boundary. Checks:
 * fuzz_trace_drain().
 */
#include "fuzz.h"

/* Lines "4 0 xxx...": the flush escape (label 4, no record), then a comment. */
static void din_fill(uint8_t *buf, size_t len)
{
	fuzz_fill_lines(buf, len, "4 0 ");
}

static const struct fuzz_trace_fmt din_fmt = {
	.name = "din",
	.fmt = TF_DIN,
	.fill = din_fill,
	.fill_recs = fuzz_no_recs,
	.align = 1,
};

int fuzz_din_one(const uint8_t *d, size_t n)
{
	fuzz_trace_run(&din_fmt, d, n);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_din_one(d, n);
}
#endif
