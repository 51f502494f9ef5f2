/*
 * hugetlbfs.c - the preallocated pool of 2 MiB huge pages (Linux mm/hugetlb.c,
 * Documentation/admin-guide/mm/hugetlbpage.rst).
 *
 * Models: a persistent pool reserved at start (nr_hugepages), handed out on fault
 * and returned on unmap; with pages == 0, overcommit: surplus pages are taken from
 * the buddy allocator when a fault needs one and freed back when unmapped
 * (nr_overcommit_hugepages unlimited).
 *
 * Simplification, by design of mmusim's "hugetlbfs" mode: the pool backs the
 * 2M-aligned parts of every anonymous mapping (what libhugetlbfs's morecore and
 * the seed mail's "huge" runs arrange), and a fault that finds no pool page falls
 * back to 4 KiB pages instead of SIGBUS.
 *
 * 1 GiB pages (hugepagesz=1G hugepages=N, hugetlbpage.rst "gigantic pages"):
 * reserved at boot from the top of physical memory before the buddy allocator
 * exists, so they never fragment and never return to it; no surplus (gigantic
 * pages cannot be overcommitted). A hugetlb-backed fault whose 1G-aligned range
 * lies wholly inside its VMA, with nothing mapped there yet, takes one first.
 */
#include <stdlib.h>

#include "hugetlbfs.h"

int hugetlb_pool_init(struct hugetlb_pool *p, struct buddy *b, uint64_t pages)
{
	*p = (struct hugetlb_pool){ 0 };
	if (!pages) {
		p->overcommit = true;
		return 0;
	}
	p->free = malloc(pages * sizeof(*p->free));
	if (!p->free)
		return -1;
	while (p->nr_pages < pages) {
		pfn_t pfn = buddy_alloc(b, HPAGE_PMD_ORDER);

		if (pfn == PFN_NONE)
			break;
		p->free[p->nr_free++] = pfn;
		p->nr_pages++;
	}
	return 0;
}

void hugetlb_pool_destroy(struct hugetlb_pool *p, struct buddy *b)
{
	free(p->used_1g);
	while (p->nr_free)
		buddy_free(b, p->free[--p->nr_free], HPAGE_PMD_ORDER);
	free(p->free);
	*p = (struct hugetlb_pool){ 0 };
}

pfn_t hugetlb_alloc(struct hugetlb_pool *p, struct buddy *b)
{
	pfn_t pfn;

	if (p->nr_free) {
		p->in_use++;
		return p->free[--p->nr_free];
	}
	if (!p->overcommit)
		return PFN_NONE;
	pfn = buddy_alloc(b, HPAGE_PMD_ORDER);
	if (pfn != PFN_NONE) {
		p->surplus++;
		p->in_use++;
	}
	return pfn;
}

void hugetlb_free(struct hugetlb_pool *p, struct buddy *b, pfn_t pfn)
{
	BUG_ON(!p->in_use);
	p->in_use--;
	if (p->surplus) {
		/* surplus pages shrink first, as free_huge_folio() does */
		p->surplus--;
		buddy_free(b, pfn, HPAGE_PMD_ORDER);
		return;
	}
	BUG_ON(p->nr_free >= p->nr_pages);
	p->free[p->nr_free++] = pfn;
}

int hugetlb_pool_init_1g(struct hugetlb_pool *p, pfn_t base, uint64_t nr)
{
	BUG_ON(nr && (base & ((1UL << HPAGE_PUD_ORDER) - 1)));
	p->base_1g = base;
	p->nr_1g = nr;
	p->in_use_1g = 0;
	p->used_1g = nr ? calloc(nr, 1) : NULL;
	return nr && !p->used_1g ? -1 : 0;
}

pfn_t hugetlb_alloc_1g(struct hugetlb_pool *p)
{
	/* the lowest free page: dequeue_hugetlb_folio_node_exact() takes any */
	for (uint64_t i = 0; i < p->nr_1g; i++)
		if (!p->used_1g[i]) {
			p->used_1g[i] = 1;
			p->in_use_1g++;
			return p->base_1g + (i << HPAGE_PUD_ORDER);
		}
	return PFN_NONE;
}

bool hugetlb_is_1g_in_use(const struct hugetlb_pool *p, pfn_t pfn)
{
	uint64_t i = (pfn - p->base_1g) >> HPAGE_PUD_ORDER;

	return pfn >= p->base_1g && !(pfn & ((1UL << HPAGE_PUD_ORDER) - 1)) && i < p->nr_1g &&
	       p->used_1g[i];
}

void hugetlb_free_1g(struct hugetlb_pool *p, pfn_t pfn)
{
	BUG_ON(!hugetlb_is_1g_in_use(p, pfn));
	p->used_1g[(pfn - p->base_1g) >> HPAGE_PUD_ORDER] = 0;
	p->in_use_1g--;
}
