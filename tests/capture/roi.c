/*
 * roi.c - a region of interest that starts from memory the program set up
 * before it (tests/e2e_roi.sh; `cc -O1 -Iinclude`, captured with
 * `mmusim capture --roi`):
 *
 *   roi array 4k|thp   maps 64 MiB on a 2 MiB boundary (MADV_NOHUGEPAGE or
 *                      MADV_HUGEPAGE), writes a word in each 4 KiB page, then
 *                      inside the region reads a word of each page;
 *   roi chase          builds a linked structure of 64 MiB before the region,
 *                      one 64-byte node per cache line in a random cycle
 *                      (Sattolo's shuffle, a fixed seed), then walks 1 Mi
 *                      steps of it inside the region.
 *
 * Exit status 0 when the region read what the set-up wrote.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mmusim_roi.h"

#define LEN (64UL << 20)
#define NODES (LEN / 64)

struct node {
	struct node *next;
	char pad[56];
};

/* 64 MiB on a 2 MiB boundary: the pages THP may fill from its first touch */
static char *map_aligned(int advice)
{
	char *p = mmap(NULL, LEN + (2UL << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(2);
	p = (char *)(((uintptr_t)p + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	if (madvise(p, LEN, advice))
		exit(2);
	return p;
}

static int array(int advice)
{
	volatile char *a = map_aligned(advice);
	long sum = 0;

	for (unsigned long i = 0; i < LEN; i += 4096)
		a[i] = 1;
	MMUSIM_ROI_BEGIN();
	for (unsigned long i = 0; i < LEN; i += 4096)
		sum += a[i];
	MMUSIM_ROI_END();
	return sum != (long)(LEN / 4096);
}

static int chase(void)
{
	struct node *n = (struct node *)map_aligned(MADV_NOHUGEPAGE), *p;
	uint32_t *perm = malloc(NODES * sizeof(*perm)), x = 12345;
	unsigned long steps = 0;

	if (!perm)
		return 2;
	for (uint32_t i = 0; i < NODES; i++)
		perm[i] = i;
	for (uint32_t i = NODES - 1; i > 0; i--) { /* Sattolo: one cycle through every node */
		uint32_t j, t;

		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		j = x % i;
		t = perm[i], perm[i] = perm[j], perm[j] = t;
	}
	for (uint32_t i = 0; i < NODES; i++)
		n[i].next = &n[perm[i]];
	free(perm);
	MMUSIM_ROI_BEGIN();
	for (p = n; steps < NODES; steps++)
		p = p->next;
	MMUSIM_ROI_END();
	return p != n;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "array"))
		return array(strcmp(argv[2], "thp") ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
	if (argc > 1 && !strcmp(argv[1], "chase"))
		return chase();
	return 2;
}
