/*
 * hintless.c - the program tests/data/hintless.mtr.zst was captured from
 * (`cc -O2 -Iinclude -o hintless tests/capture/hintless.c`, then
 * `mmusim capture --roi -o tests/data/hintless.mtr.zst -- ./hintless`, Valgrind
 * 3.19, Linux 6.18; 642 bytes): a hint-less 64 MiB
 * anonymous mmap, MADV_HUGEPAGE on it, then one store to each of its 4 KiB
 * pages inside a region of interest. Linux 6.18 puts the mapping on a 2 MiB
 * boundary (32 faults, 32 THPs); Valgrind did not.
 */
#include <stddef.h>
#include <sys/mman.h>

#include "mmusim_roi.h"

#define LEN (64UL << 20)

int main(void)
{
	volatile char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || madvise((void *)p, LEN, MADV_HUGEPAGE))
		return 1;
	MMUSIM_ROI_BEGIN();
	for (unsigned long i = 0; i < LEN; i += 4096)
		p[i] = 1;
	MMUSIM_ROI_END();
	return 0;
}
