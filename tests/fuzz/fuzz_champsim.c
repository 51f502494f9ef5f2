/*
 * fuzz_champsim.c - the ChampSim input_instr reader (sim/trace_champsim.c)
 * through trace_open(), also with the input read from the second chunk on
 * behind whole filler records. Checks: fuzz_trace_drain().
 */
#include <string.h>

#include "fuzz.h"

#define CS_REC 64

/* Records of an instruction that touches no memory: ip 0x401000, 0x401004, ... */
static void cs_fill(uint8_t *buf, size_t len)
{
	memset(buf, 0, len);
	for (size_t i = 0; i + CS_REC <= len; i += CS_REC) {
		uint64_t ip = 0x401000 + i / 16;

		for (int b = 0; b < 8; b++)
			buf[i + b] = (uint8_t)(ip >> (8 * b));
	}
}

static size_t cs_fill_recs(size_t len)
{
	return len / CS_REC;
}

static const struct fuzz_trace_fmt champsim_fmt = {
	.name = "champsim",
	.fmt = TF_CHAMPSIM,
	.fill = cs_fill,
	.fill_recs = cs_fill_recs,
	.align = CS_REC,
};

int fuzz_champsim_one(const uint8_t *d, size_t n)
{
	fuzz_trace_run(&champsim_fmt, d, n);
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return fuzz_champsim_one(d, n);
}
#endif
