/*
 * hugetlbfs.h - the hugetlbfs pool of 2 MiB pages (mm/hugetlb.c: nr_hugepages,
 * nr_overcommit_hugepages, free_huge_pages, surplus_huge_pages).
 */
#ifndef MMUSIM_HUGETLBFS_H
#define MMUSIM_HUGETLBFS_H

#include "buddy.h"

struct hugetlb_pool {
	pfn_t *free;       /* free pool pages (first frames), a stack */
	uint64_t nr_free;
	uint64_t nr_pages; /* persistent pool size actually reserved */
	uint64_t surplus;  /* pages allocated beyond the pool (overcommit) */
	bool overcommit;   /* allocate surplus pages from the buddy allocator on demand */
	uint64_t in_use;
	/* 1 GiB pages: frames [base_1g, base_1g + nr_1g << 18), carved off the top of
	 * memory at boot (hugepagesz=1G hugepages=N: memblock, never in the buddy) */
	pfn_t base_1g;
	uint64_t nr_1g, in_use_1g;
	uint8_t *used_1g; /* per 1G page */
};

/*
 * Reserve @pages order-9 blocks from @b at boot (as hugepages=N on the command
 * line does; fewer if memory runs out, like the kernel, which reports the count it
 * got). pages == 0 selects overcommit: pages come from the buddy allocator at
 * fault time and go back when freed. Returns 0, or -1 on host OOM.
 */
int hugetlb_pool_init(struct hugetlb_pool *p, struct buddy *b, uint64_t pages);
void hugetlb_pool_destroy(struct hugetlb_pool *p, struct buddy *b);

/* A 2 MiB page for a fault: its first frame, or PFN_NONE if none can be had. */
pfn_t hugetlb_alloc(struct hugetlb_pool *p, struct buddy *b);

/* Give a page back (to the pool, or to the buddy allocator if it was surplus). */
void hugetlb_free(struct hugetlb_pool *p, struct buddy *b, pfn_t pfn);

/*
 * The 1 GiB pool: @nr pages starting at frame @base (1G-aligned, outside the
 * buddy allocator). 0 or -1 (host OOM).
 */
int hugetlb_pool_init_1g(struct hugetlb_pool *p, pfn_t base, uint64_t nr);

/* A free 1 GiB page (its first frame), or PFN_NONE (no surplus for gigantic pages). */
pfn_t hugetlb_alloc_1g(struct hugetlb_pool *p);

/* Give a 1 GiB page back to the pool. */
void hugetlb_free_1g(struct hugetlb_pool *p, pfn_t pfn);

/* Is @pfn the first frame of a 1G pool page in use? */
bool hugetlb_is_1g_in_use(const struct hugetlb_pool *p, pfn_t pfn);

#endif
