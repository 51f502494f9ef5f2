/*
 * fuzz_pin.c - the pinatrace reader (sim/trace_pin.c) through trace_open(),
 * also across the first chunk boundary. Checks: fuzz_trace_drain().
 */
#include "fuzz.h"

static const struct fuzz_trace_fmt pin_fmt = {
	.name = "pin",
	.fmt = TF_PIN,
	.fill = fuzz_fill_blank_lines, /* blank lines are skipped */
	.fill_recs = fuzz_no_recs,
	.align = 1,
};

int fuzz_pin_one(const uint8_t *d, size_t n)
{
	fuzz_trace_run(&pin_fmt, d, n);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_pin_one(d, n);
}
#endif
