/*
 * mthp.c - anonymous multi-size THP as this kernel does it, for
 * tests/native_mthp.sh: run natively it prints, at each marker, the process's
 * minor and major faults (getrusage()), Rss and AnonHugePages
 * (/proc/self/smaps_rollup), the thp_* events of /proc/vmstat and every counter
 * of every /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/ the
 * kernel has; captured by mmusim's Valgrind tool, each marker (a getppid()
 * call) becomes a MARKER record at which `mmusim run --steps` writes the
 * replay's counters, the per-size ones among them.
 *
 *   mthp CASE
 *
 * The sizes each case runs under are the script's business (it writes
 * hugepages-<size>kB/enabled before the runs): a case only maps, advises,
 * writes and unmaps. As in steps.c, a measurement allocates nothing and uses
 * no stdio (the sysfs paths and the buffer are made before the first marker),
 * and every mapping is made at a hint address (2 MiB aligned, free in both
 * Linux and Valgrind), or a fixed offset from it for the unaligned ones.
 *
 * Cases (what the kernel does: alloc_anon_folio() takes the highest order
 * thp_vma_allowable_orders() allows whose aligned range lies in the VMA
 * (thp_vma_suitable_orders()) and whose PTEs are all none (pte_range_none()),
 * falling back order by order, down to a 4 KiB page):
 *   aligned    4 MiB at a 2 MiB boundary, MADV_HUGEPAGE, written in two halves
 *   unaligned  2 MiB + 16 KiB from 16 KiB past a 2 MiB boundary, MADV_HUGEPAGE:
 *              the head and tail chunks that no enabled size fits fall back
 *   populated  2 MiB, MADV_NOHUGEPAGE, three pages written (PTEs present), then
 *              MADV_HUGEPAGE and one write per step next to them: a 512 KiB
 *              range with a PTE, then 64 KiB, then 16 KiB, then none free
 *   sizes      three 1 MiB regions: MADV_HUGEPAGE, no advice, MADV_NOHUGEPAGE
 *              (the script makes one size madvise, another always)
 *   munmap     1 MiB, MADV_HUGEPAGE, written; munmap of one page inside a
 *              folio, of a whole 64 KiB, of 16 KiB across a 64 KiB boundary, of
 *              the rest
 *   dontneed   2 MiB, MADV_HUGEPAGE, written; MADV_DONTNEED of a page, of 16
 *              KiB, of the second 512 KiB; each written again; munmap
 *   pmd        4 MiB, MADV_HUGEPAGE, written (PMD THPs under inherit); munmap of
 *              one page of the first; 1 MiB + 64 KiB unaligned, written (no 2
 *              MiB fits); munmap of all
 *   free       1 MiB written; MADV_FREE of two whole folios and of part of one
 *              (split) with a whole one after it; one page written again;
 *              MADV_PAGEOUT (no swap: clean lazy-free folios discarded whole,
 *              the written one kept whole, the others split: swpout_fallback)
 *   pageout    MADV_PAGEOUT of a whole folio and of part of one
 *   collapse   mTHPs in a 2 MiB range no PMD THP fitted (its last page another
 *              VMA), one VMA again, MADV_COLLAPSE: one PMD THP in their place
 *   mremap     mTHPs moved to another alignment, then unmapped in part
 *   read       reads first (the zero page where the kernel gives it, else
 *              mTHPs), MADV_POPULATE_WRITE, mprotect of one page
 *   ptemapped  a PMD THP mapped by its PTEs (mprotect and back) paged out whole:
 *              split PTE by PTE; part of a PMD-mapped one: split frozen
 *   zeroremap  one page written in a PMD THP and in each 64 KiB folio; part of
 *              each paged out: the splits map the zero-filled pages to the zero
 *              page (6.12+); two of them written again
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "measure.h"

#define KIB 1024UL
#define MIB (1UL << 20)
#define PG 4096UL
#define MAXMARK 16
#define MAXSTAT 256
#define HINT ((char *)0x200000000000UL) /* 32 TiB: free in both, 2 MiB aligned */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define THP "/sys/kernel/mm/transparent_hugepage/"

struct sample {
	struct figs f;
	long stat[MAXSTAT];
};

static struct sample smp[MAXMARK];
static int nsmp;
/* every hugepages-<size>kB/stats/<counter>: its path and its name "<size>kB/<counter>" */
static char stat_path[MAXSTAT][160], stat_name[MAXSTAT][64];
static int nstat;

/* A file holding one decimal number (-1 if unreadable). */
static long number(const char *path)
{
	long n = slurp(path), v = 0;

	if (n <= 0)
		return -1;
	for (long j = 0; j < n && rbuf[j] >= '0' && rbuf[j] <= '9'; j++)
		v = v * 10 + (rbuf[j] - '0');
	return v;
}

/* measure.h's figures, then every per-size counter */
static void measure_all(struct sample *s)
{
	measure(&s->f);
	for (int i = 0; i < nstat; i++)
		s->stat[i] = number(stat_path[i]);
}

static void __attribute__((noinline)) marker(void)
{
	getppid();
	if (nsmp < MAXMARK)
		measure_all(&smp[nsmp++]);
}

static int by_size(const void *a, const void *b)
{
	long x = atol((const char *)a + 10), y = atol((const char *)b + 10); /* "hugepages-" */

	return (x > y) - (x < y);
}

/* The counters this kernel has, sizes in ascending order, counters by name. */
static void find_stats(void)
{
	static char dirs[32][64];
	int nd = 0;
	DIR *d = opendir(THP);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && nd < 32)
		if (!strncmp(e->d_name, "hugepages-", 10) && strlen(e->d_name) < sizeof(dirs[0]))
			strcpy(dirs[nd++], e->d_name);
	closedir(d);
	qsort(dirs, (size_t)nd, sizeof(dirs[0]), by_size);
	for (int i = 0; i < nd; i++) {
		char p[112];
		int first = nstat;

		snprintf(p, sizeof(p), THP "%.40s/stats", dirs[i]);
		if (!(d = opendir(p)))
			continue;
		while ((e = readdir(d)) && nstat < MAXSTAT) {
			if (e->d_name[0] == '.' || strlen(e->d_name) > 40)
				continue;
			snprintf(stat_path[nstat], sizeof(stat_path[0]), "%.100s/%.40s", p, e->d_name);
			snprintf(stat_name[nstat], sizeof(stat_name[0]), "%.16s/%.40s", dirs[i] + 10, e->d_name);
			nstat++;
		}
		closedir(d);
		qsort(stat_name[first], (size_t)(nstat - first), sizeof(stat_name[0]),
		      (int (*)(const void *, const void *))strcmp);
		qsort(stat_path[first], (size_t)(nstat - first), sizeof(stat_path[0]),
		      (int (*)(const void *, const void *))strcmp);
	}
}

static void __attribute__((noinline)) warm_stack(void)
{
	volatile char pad[64 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 512)
		pad[i] = 0;
}

static void warm(void)
{
	struct sample scratch;

	find_stats();
	memset(rbuf, 1, sizeof(rbuf));
	memset(smp, 0, sizeof(smp));
	warm_stack();
	measure_all(&scratch);
	measure_all(&scratch);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static char *map(char *at, size_t len)
{
	char *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (p != at) {
		fprintf(stderr, "mmap: hint %p not honoured (%p)\n", (void *)at, (void *)p);
		exit(1);
	}
	return p;
}

static void advise(char *p, size_t len, int advice)
{
	if (madvise(p, len, advice))
		die("madvise");
}

static void unmap(char *p, size_t len)
{
	if (munmap(p, len))
		die("munmap");
}

static void write_pages(volatile char *p, size_t len)
{
	for (size_t i = 0; i < len; i += PG)
		p[i] = 1;
}

static void case_aligned(void)
{
	char *p = map(HINT, 4 * MIB);

	advise(p, 4 * MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, 2 * MIB);
	marker();
	write_pages(p + 2 * MIB, 2 * MIB);
	marker();
	unmap(p, 4 * MIB);
	marker();
}

static void case_unaligned(void)
{
	char *p = map(HINT + 16 * KIB, 2 * MIB + 16 * KIB);

	advise(p, 2 * MIB + 16 * KIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, 2 * MIB + 16 * KIB);
	marker();
	unmap(p, 2 * MIB + 16 * KIB);
	marker();
}

/*
 * PTEs present before the fault: pages 512K, 512K + 32K and 1M + 8K written
 * while the VMA is MADV_NOHUGEPAGE (4 KiB pages), then MADV_HUGEPAGE (the same
 * one VMA). A write at 0: its 512 KiB range is empty. At 512K + 64K: its 512 KiB
 * range holds a PTE, its 64 KiB range none. At 512K + 16K: the 64 KiB range
 * holds one (512K + 32K), its 16 KiB range none. At 512K + 4K: the 16 KiB range
 * holds one (512K). Then the rest.
 */
static void case_populated(void)
{
	char *p = map(HINT, 2 * MIB);

	advise(p, 2 * MIB, MADV_NOHUGEPAGE);
	marker();
	p[512 * KIB] = 1;
	p[512 * KIB + 32 * KIB] = 1;
	p[MIB + 8 * KIB] = 1;
	marker();
	advise(p, 2 * MIB, MADV_HUGEPAGE);
	marker();
	p[0] = 1;
	marker();
	p[512 * KIB + 64 * KIB] = 1;
	marker();
	p[512 * KIB + 16 * KIB] = 1;
	marker();
	p[512 * KIB + 4 * KIB] = 1;
	marker();
	write_pages(p, 2 * MIB);
	marker();
	unmap(p, 2 * MIB);
	marker();
}

static void case_sizes(void)
{
	char *a = map(HINT, MIB), *b = map(HINT + 4 * MIB, MIB), *c = map(HINT + 8 * MIB, MIB);

	advise(a, MIB, MADV_HUGEPAGE);
	advise(c, MIB, MADV_NOHUGEPAGE);
	marker();
	write_pages(a, MIB);
	marker();
	write_pages(b, MIB);
	marker();
	write_pages(c, MIB);
	marker();
	unmap(a, MIB);
	unmap(b, MIB);
	unmap(c, MIB);
	marker();
}

static void case_munmap(void)
{
	char *p = map(HINT, MIB);

	advise(p, MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, MIB);
	marker();
	unmap(p + 8 * KIB, PG);
	marker();
	unmap(p + 128 * KIB, 64 * KIB);
	marker();
	unmap(p + 320 * KIB - 8 * KIB, 16 * KIB);
	marker();
	unmap(p, MIB);
	marker();
}

static void case_dontneed(void)
{
	char *p = map(HINT, 2 * MIB);

	advise(p, 2 * MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, 2 * MIB);
	marker();
	advise(p + 8 * KIB, PG, MADV_DONTNEED);
	marker();
	advise(p + 32 * KIB, 16 * KIB, MADV_DONTNEED);
	marker();
	advise(p + 512 * KIB, 512 * KIB, MADV_DONTNEED);
	marker();
	p[8 * KIB] = 1;
	marker();
	p[32 * KIB] = 1;
	marker();
	p[512 * KIB] = 1;
	marker();
	unmap(p, 2 * MIB);
	marker();
}

static void case_pmd(void)
{
	char *p = map(HINT, 4 * MIB), *q;

	advise(p, 4 * MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, 4 * MIB);
	marker();
	unmap(p + 64 * KIB, PG);
	marker();
	q = map(HINT + 8 * MIB + 64 * KIB, MIB + 64 * KIB);
	advise(q, MIB + 64 * KIB, MADV_HUGEPAGE);
	write_pages(q, MIB + 64 * KIB);
	marker();
	unmap(p, 4 * MIB);
	unmap(q, MIB + 64 * KIB);
	marker();
}


/*
 * MADV_FREE of whole folios and of part of one (madvise_free_pte_range(): a
 * large folio the range does not cover whole is split first), written again in
 * part, then MADV_PAGEOUT (without swap: the clean lazy-free pages go). The
 * partial range ends with a whole folio: folio_mark_lazyfree() holds 4 KiB
 * pages in a per-CPU batch until it fills or a large folio joins it
 * (folio_batch_add_and_move()), and the model counts pglazyfree at once (no
 * per-CPU batches, sim/lru.c): the large folio drains the batch in the same step.
 */
static void case_free(void)
{
	char *p = map(HINT, MIB);

	advise(p, MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, MIB);
	marker();
	advise(p, 128 * KIB, MADV_FREE);
	marker();
	advise(p + 256 * KIB + 8 * KIB, 120 * KIB, MADV_FREE);
	marker();
	p[64 * KIB] = 1;
	marker();
	advise(p, MIB, MADV_PAGEOUT);
	marker();
	write_pages(p, MIB);
	marker();
	unmap(p, MIB);
	marker();
}

/* MADV_PAGEOUT of a whole folio and of part of one (no swap here: nothing goes out). */
static void case_pageout(void)
{
	char *p = map(HINT, MIB);

	advise(p, MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, MIB);
	marker();
	advise(p, 64 * KIB, MADV_PAGEOUT);
	marker();
	advise(p + 256 * KIB + 8 * KIB, 16 * KIB, MADV_PAGEOUT);
	marker();
	write_pages(p, MIB);
	marker();
	unmap(p, MIB);
	marker();
}

/*
 * mTHPs in a 2 MiB range that no PMD THP fits (its last page read-only: two
 * VMAs), then one VMA again and MADV_COLLAPSE: one PMD THP in their place.
 */
static void case_collapse(void)
{
	char *p = map(HINT, 2 * MIB);

	advise(p, 2 * MIB, MADV_HUGEPAGE);
	if (mprotect(p + 2 * MIB - PG, PG, PROT_READ))
		die("mprotect");
	marker();
	write_pages(p, 2 * MIB - PG);
	marker();
	if (mprotect(p + 2 * MIB - PG, PG, PROT_READ | PROT_WRITE))
		die("mprotect");
	marker();
	advise(p, 2 * MIB, MADV_COLLAPSE);
	marker();
	write_pages(p, 2 * MIB);
	marker();
	unmap(p, 2 * MIB);
	marker();
}

/* mTHPs moved by mremap to an address of another alignment, then unmapped in part. */
static void case_mremap(void)
{
	char *p = map(HINT, MIB), *q;

	advise(p, MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, MIB);
	marker();
	q = mremap(p, MIB, MIB, MREMAP_MAYMOVE | MREMAP_FIXED, HINT + 8 * MIB + 4 * KIB);
	if (q == MAP_FAILED)
		die("mremap");
	marker();
	write_pages(q, MIB);
	marker();
	unmap(q + 64 * KIB, 8 * KIB);
	marker();
	unmap(q, MIB);
	marker();
}

/* Reads first (a fault without FAULT_FLAG_WRITE: the zero page where allowed),
 * then MADV_POPULATE_WRITE, then mprotect of part of a folio. */
static void case_read(void)
{
	char *p = map(HINT, MIB);
	volatile char *v = p;
	long sum = 0;

	advise(p, MIB, MADV_HUGEPAGE);
	marker();
	for (size_t i = 0; i < 512 * KIB; i += PG)
		sum += v[i];
	marker();
	write_pages(p, 512 * KIB);
	marker();
	advise(p + 512 * KIB, 512 * KIB, MADV_POPULATE_WRITE);
	marker();
	if (mprotect(p + 8 * KIB, PG, PROT_READ))
		die("mprotect");
	marker();
	unmap(p, MIB);
	marker();
	(void)sum;
}

/*
 * A PMD THP mapped by PTEs (mprotect of one page and back: the PMD split, the
 * VMAs merged again), then MADV_PAGEOUT of it whole: split like an mTHP, PTE
 * by PTE (split_deferred); then MADV_PAGEOUT of part of the PMD-mapped one:
 * split while PMD-mapped (nothing deferred).
 */
static void case_ptemapped(void)
{
	char *p = map(HINT, 4 * MIB);

	advise(p, 4 * MIB, MADV_HUGEPAGE);
	marker();
	write_pages(p, 4 * MIB);
	marker();
	if (mprotect(p, PG, PROT_READ) || mprotect(p, PG, PROT_READ | PROT_WRITE))
		die("mprotect");
	marker();
	advise(p, 2 * MIB, MADV_PAGEOUT);
	marker();
	advise(p + 2 * MIB, 64 * KIB, MADV_PAGEOUT);
	marker();
	unmap(p, 4 * MIB);
	marker();
}

/*
 * One page written in a PMD THP and in each 64 KiB folio, then MADV_PAGEOUT of
 * part of each (split_folio() of a partly covered large folio): from 6.12 the
 * split maps the folios' zero-filled pages to the zero page and frees them
 * (remap_page(RMP_USE_SHARED_ZEROPAGE), try_to_map_unused_to_zeropage()); a
 * store to one of them faults a page in again.
 */
static void case_zeroremap(void)
{
	char *a = map(HINT, 2 * MIB), *b = map(HINT + 4 * MIB, MIB);

	advise(a, 2 * MIB, MADV_HUGEPAGE);
	advise(b, MIB, MADV_HUGEPAGE);
	marker();
	a[0] = 1;
	for (size_t i = 0; i < MIB; i += 64 * KIB)
		b[i] = 1;
	marker();
	advise(a + 8 * KIB, PG, MADV_PAGEOUT);
	marker();
	advise(b + 16 * KIB, 16 * KIB, MADV_PAGEOUT);
	marker();
	a[8 * KIB] = 1;
	b[20 * KIB] = 1;
	marker();
	unmap(a, 2 * MIB);
	unmap(b, MIB);
	marker();
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "aligned", case_aligned }, { "unaligned", case_unaligned }, { "populated", case_populated },
	{ "sizes", case_sizes },     { "munmap", case_munmap },       { "dontneed", case_dontneed },
	{ "pmd", case_pmd },	     { "free", case_free },	      { "pageout", case_pageout },
	{ "collapse", case_collapse }, { "mremap", case_mremap },     { "read", case_read },
	{ "ptemapped", case_ptemapped }, { "zeroremap", case_zeroremap },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: mthp CASE\n");
		return 2;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name))
			break;
	if (i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "mthp: unknown case '%s'\n", argv[1]);
		return 2;
	}
	warm();
	cases[i].fn();
	for (int k = 0; k < nsmp; k++) {
		printf("marker %d minflt %ld majflt %ld rss_kb %ld anon_huge_kb %ld", k, smp[k].f.minflt,
		       smp[k].f.majflt, smp[k].f.rss_kb, smp[k].f.ahp_kb);
		for (size_t j = 0; j < NVM; j++)
			printf(" %s %ld", vm_keys[j], smp[k].f.vm[j]);
		for (int j = 0; j < nstat; j++)
			printf(" %s %ld", stat_name[j], smp[k].stat[j]);
		printf("\n");
	}
	return 0;
}
