/*
 * native_lib.h - what the native measurement programs share (virt_chase.c,
 * thp_causes.c): a clock, a fixed-seed generator, a 2 MiB-aligned advised
 * buffer, its AnonHugePages share, the chase loop and a comparison for qsort.
 * Static functions: each program is one file built on its own.
 */
#ifndef MMUSIM_NATIVE_LIB_H
#define MMUSIM_NATIVE_LIB_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096UL
#define HPAGE (2UL << 20)

static inline double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* xorshift64* (Vigna): a fixed-seed generator, fast next to a cache miss. */
static inline uint64_t xs64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Sattolo's algorithm: @next[0..@n) becomes one cycle through all n (j < i: never a fixed
 * point), from the fixed seed every program here uses, so every run chases the same cycle. */
static inline void sattolo(uint32_t *next, uint64_t n)
{
	uint64_t s = 0x9E3779B97F4A7C15ULL;

	for (uint64_t i = 0; i < n; i++)
		next[i] = (uint32_t)i;
	for (uint64_t i = n - 1; i > 0 && n > 1; i--) {
		uint64_t j = xs64(&s) % i;
		uint32_t t = next[i];

		next[i] = next[j];
		next[j] = t;
	}
}

/* A buffer of @size bytes (a multiple of 2 MiB) on a 2 MiB boundary, one VMA, advised
 * MADV_HUGEPAGE if @thp, else MADV_NOHUGEPAGE. */
static inline char *buf_map(uint64_t size, int thp)
{
	char *raw = mmap(NULL, size + HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	uintptr_t start, end;

	if (raw == MAP_FAILED)
		return NULL;
	start = ((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1);
	end = start + size;
	if (start > (uintptr_t)raw)
		munmap(raw, start - (uintptr_t)raw);
	if ((uintptr_t)raw + size + HPAGE > end)
		munmap((char *)end, (uintptr_t)raw + size + HPAGE - end);
	if (madvise((char *)start, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		munmap((char *)start, size);
		return NULL;
	}
	return (char *)start;
}

/*
 * The share of [@buf, @buf + @size) that /proc/self/smaps reports as AnonHugePages:
 * the sum over the VMAs overlapping it (buf_map() makes it one VMA of exactly that
 * range), or -1 if smaps cannot be read.
 */
static inline double huge_share(const char *buf, uint64_t size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo, hi, kb, total = 0;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = lo < (uintptr_t)buf + size && hi > (uintptr_t)buf;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			total += kb;
	}
	fclose(f);
	return (double)total * 1024 / (double)size;
}

/* @steps dependent loads from @p; noinline so that the loop is the same for every caller. */
static __attribute__((noinline, unused)) void *chase_steps(void *p, uint64_t steps)
{
	while (steps--)
		p = *(void **)p;
	return p;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
