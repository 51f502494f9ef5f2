/*
 * stride_chase.c - how much of the chase's cost on this machine is translation:
 * a pointer chase over N elements SPACING bytes apart (each visited at its first
 * 8 bytes, one random cycle by Sattolo's algorithm, as mmusim's
 * chase:size=N*SPACING,stride=SPACING workload; the cycle of native_lib.h's
 * sattolo()), best of 5 timed blocks of 4 M
 * steps after one untimed lap, in ns per step:
 *
 *   stride_chase N SPACING THP      e.g. stride_chase 65536 4096 0
 *
 * SPACING 4096 puts every line at offset 0 of its page: physically indexed caches
 * then use only the sets whose index bits below the page offset are 0 (1/64 of
 * them), and the page tables' lines compete with the data for the rest. SPACING
 * 4160 (4 KiB + 64) visits the same number of pages one line further into each
 * page, which spreads the lines over every set: the difference between the two is
 * cache placement, not translation. THP 1 madvises MADV_HUGEPAGE (0: NOHUGEPAGE).
 * Used for the README's "The model against this machine"; not part of any test.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "native_lib.h"

int main(int argc, char **argv)
{
	const size_t huge = 2UL << 20;
	long n, spacing, i;
	size_t size;
	char *map, *b;
	uint32_t *next;
	void **p;
	double best = 1e30;

	if (argc != 4 || (n = atol(argv[1])) < 2 || (spacing = atol(argv[2])) < 64 || spacing % 64) {
		fprintf(stderr, "usage: stride_chase N SPACING THP (N >= 2, SPACING a multiple of 64)\n");
		return 2;
	}
	size = ((size_t)n * (size_t)spacing + huge - 1) & ~(huge - 1);
	map = mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	next = malloc((size_t)n * sizeof(*next));
	if (map == MAP_FAILED || !next) {
		perror("stride_chase");
		return 1;
	}
	b = (char *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
	madvise(b, size, atoi(argv[3]) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	sattolo(next, (uint64_t)n); /* one cycle through all n (native_lib.h) */
	for (i = 0; i < n; i++)
		*(void **)(b + (size_t)i * spacing) = b + (size_t)next[i] * spacing;
	p = (void **)b;
	for (i = 0; i < n; i++) /* one untimed lap */
		p = *p;
	for (int r = 0; r < 5; r++) {
		const long steps = 4L << 20;
		double t0 = now(), t;

		for (i = 0; i < steps; i++)
			p = *p;
		t = (now() - t0) / (double)steps * 1e9;
		if (t < best)
			best = t;
	}
	printf("%ld elements, spacing %ld, thp %d: %.1f ns/step (%p)\n", n, spacing, atoi(argv[3]),
	       best, (void *)p);
	return 0;
}
