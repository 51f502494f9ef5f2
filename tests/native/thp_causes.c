/*
 * thp_causes.c - where guest THP's time goes on this machine, apart from translation:
 * the pointer chase of virt_chase.c (one line per 4 KiB page, one random cycle,
 * Sattolo, fixed seed) over a fresh buffer in 4 KiB pages (MADV_NOHUGEPAGE) and in
 * THPs (MADV_HUGEPAGE), timed in four parts, as a CSV on stdout:
 *
 *   footprint,pages,run,touch_ns_per_4k,lap1_ns,lap2_ns,steady_ns,event_share,steady_wo_events_ns,anon_huge_share
 *
 * touch_ns_per_4k  the first write of every 4 KiB of the buffer (the page faults: the
 *                  allocation and zeroing of a 4 KiB page or of a 2 MiB THP, and under
 *                  PVM whatever shadow-paging and host work the first touch causes),
 *                  per 4 KiB: what a timed region that includes the faults pays;
 * lap1_ns, lap2_ns the ns per step of the first and second full laps of the chase after
 *                  the touch (a lap visits every page once): a host that backs or
 *                  re-backs the guest's memory lazily, or shadow entries built on a
 *                  page's first read, show as a first lap slower than the second;
 * steady_ns        the ns per step of the next 4 laps;
 * event_share      the share of those laps' time spent in blocks of 16 steps that took
 *                  over 4x the median block (at these sizes: an interruption of about
 *                  10 us or more): time the guest does not run the loop (timer ticks,
 *                  exits to the PVM hypervisor, host preemption);
 * steady_wo_events_ns  steady_ns without those blocks: what is left for the core, the
 *                  caches and translation, the part the model prices.
 *
 * The 4K and thp runs alternate (4K first in even runs); RUNS runs each; the process
 * stays on one CPU. Block times come from CLOCK_MONOTONIC (vDSO; 16 dependent steps of
 * 100+ ns each dwarf its cost).
 *
 *   thp_causes [-r RUNS] [SIZE_MIB...]   default: 5 runs at 64, 256 and 1024 MiB
 *
 * Exit status: 0, 2 for a bad argument, 1 when the machine refuses (mmap, smaps).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "native_lib.h"

#define BLOCK 16
#define STEADY_LAPS 4

static void *volatile sink;

/* One run; 0, or -1 if the machine refused. */
static int run(uint64_t size, int thp, unsigned r, const uint32_t *next)
{
	uint64_t n = size / PAGE, i, nblk = STEADY_LAPS * n / BLOCK;
	char *buf = buf_map(size, thp);
	double *blk = malloc(nblk * sizeof(*blk)), *sorted = malloc(nblk * sizeof(*sorted));
	double t0, touch, lap1, lap2, steady = 0, med, ev = 0, share;
	void *p;

	if (!buf || !blk || !sorted) {
		free(blk);
		free(sorted);
		if (buf)
			munmap(buf, size);
		return -1;
	}
	t0 = now();
	for (i = 0; i < n; i++) /* the first touch: the next pointers, in address order */
		*(void **)(buf + i * PAGE) = buf + (uint64_t)next[i] * PAGE;
	touch = now() - t0;
	share = huge_share(buf, size);
	t0 = now();
	p = chase_steps(buf, n);
	lap1 = now() - t0;
	t0 = now();
	p = chase_steps(p, n);
	lap2 = now() - t0;
	for (i = 0; i < nblk; i++) {
		double b0 = now();

		p = chase_steps(p, BLOCK);
		blk[i] = now() - b0;
		steady += blk[i];
	}
	sink = p;
	memcpy(sorted, blk, nblk * sizeof(*sorted));
	qsort(sorted, nblk, sizeof(*sorted), cmp_double);
	med = sorted[nblk / 2];
	for (i = 0; i < nblk; i++)
		if (blk[i] > 4 * med)
			ev += blk[i];
	printf("%llu,%s,%u,%.1f,%.2f,%.2f,%.2f,%.4f,%.2f,%.4f\n", (unsigned long long)size,
	       thp ? "thp" : "4K", r + 1, touch / (double)n * 1e9, lap1 / (double)n * 1e9,
	       lap2 / (double)n * 1e9, steady / (double)(nblk * BLOCK) * 1e9, ev / steady,
	       (steady - ev) / (double)(nblk * BLOCK) * 1e9, share);
	fflush(stdout);
	free(blk);
	free(sorted);
	munmap(buf, size);
	return share < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t sizes[16] = { 64, 256, 1024 }, n;
	unsigned runs = 5, nsizes = 3, r, a = 1;
	uint32_t *next;
	char *end;
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (argc > 2 && !strcmp(argv[1], "-r")) {
		unsigned long v = strtoul(argv[2], &end, 10);

		if (v < 1 || v > 100 || *end || argv[2][0] == '-')
			goto usage;
		runs = (unsigned)v;
		a = 3;
	}
	if (a < (unsigned)argc) {
		if (argc - a > 16)
			goto usage;
		for (nsizes = 0; a < (unsigned)argc; a++) {
			unsigned long v = strtoul(argv[a], &end, 10);

			if (v < 4 || v % 2 || v > (1UL << 20) || *end || argv[a][0] == '-')
				goto usage;
			sizes[nsizes++] = v;
		}
	}
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	printf("footprint,pages,run,touch_ns_per_4k,lap1_ns,lap2_ns,steady_ns,event_share,"
	       "steady_wo_events_ns,anon_huge_share\n");
	for (unsigned z = 0; z < nsizes; z++) {
		uint64_t size = sizes[z] << 20;

		n = size / PAGE;
		next = malloc(n * sizeof(*next));
		if (!next)
			return 1;
		sattolo(next, n);
		for (r = 0; r < runs; r++)
			for (int k = 0; k < 2; k++)
				if (run(size, r % 2 ? 1 - k : k, r, next)) {
					fprintf(stderr, "thp_causes: mmap, madvise or /proc/self/smaps failed\n");
					free(next);
					return 1;
				}
		free(next);
	}
	return 0;
usage:
	fprintf(stderr, "usage: thp_causes [-r RUNS] [SIZE_MIB...]  (RUNS 1-100; SIZE_MIB even, >= 4)\n");
	return 2;
}
