/*
 * lru.c - the LRU lists of anonymous folios, after Linux 6.18 with the classic
 * two-list LRU (CONFIG_LRU_GEN off): mm/swap.c folio_add_lru(),
 * lru_add_split_folio(), lru_lazyfree(), include/linux/mm_inline.h
 * lruvec_add_folio()/lruvec_del_folio().
 *
 * A new anonymous folio joins the head of the inactive list (anon pages start
 * inactive since 5.9, b518154e59aa); reclaim.c scans from the tails. Counts are
 * in 4K pages: a THP is one entry counted 512 times.
 *
 * A lazy-free folio (MADV_FREE: PG_swapbacked cleared) is filed on the file
 * lists, as folio_lru_list() files it (folio_is_file_lru()).
 *
 * Leaves out: the per-CPU folio batches (lru_add_drain(): a folio is on its list
 * at once; so pglazyfree counts when MADV_FREE marks a page, where the kernel
 * counts a batch of 4K pages when it drains), page-cache pages (the model's are
 * on no list), the unevictable list, MGLRU.
 */
#include <string.h>
#include <sys/mman.h>

#include "lru.h"

static void *map_array(uint64_t n, size_t size)
{
	void *p = mmap(NULL, n * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int lru_init(struct lru *l, uint64_t nr_pages)
{
	memset(l, 0, sizeof(*l));
	if (nr_pages + NR_LRU_LISTS >= UINT32_MAX)
		return -1;
	l->nr_pages = nr_pages;
	l->next = map_array(nr_pages + NR_LRU_LISTS, sizeof(*l->next));
	l->prev = map_array(nr_pages + NR_LRU_LISTS, sizeof(*l->prev));
	l->flags = map_array(nr_pages, sizeof(*l->flags));
	if (!l->next || !l->prev || !l->flags) {
		lru_destroy(l);
		return -1;
	}
	for (unsigned i = 0; i < NR_LRU_LISTS; i++) {
		uint32_t h = (uint32_t)(nr_pages + i);

		l->next[h] = l->prev[h] = h;
	}
	return 0;
}

void lru_destroy(struct lru *l)
{
	if (l->next)
		munmap(l->next, (l->nr_pages + NR_LRU_LISTS) * sizeof(*l->next));
	if (l->prev)
		munmap(l->prev, (l->nr_pages + NR_LRU_LISTS) * sizeof(*l->prev));
	if (l->flags)
		munmap(l->flags, l->nr_pages * sizeof(*l->flags));
	memset(l, 0, sizeof(*l));
}

static void link_after(struct lru *l, uint32_t at, uint32_t p)
{
	uint32_t n = l->next[at];

	l->next[p] = n;
	l->prev[p] = at;
	l->prev[n] = p;
	l->next[at] = p;
}

static void unlink_one(struct lru *l, uint32_t p)
{
	l->next[l->prev[p]] = l->next[p];
	l->prev[l->next[p]] = l->prev[p];
}

void lru_add(struct lru *l, pfn_t pfn, unsigned nr)
{
	BUG_ON(l->flags[pfn] & LRU_F_ON);
	l->flags[pfn] = LRU_F_ON;
	link_after(l, lru_head(l, LRU_INACTIVE_ANON), (uint32_t)pfn);
	l->nr[LRU_INACTIVE_ANON] += nr;
}

void lru_del(struct lru *l, pfn_t pfn, unsigned nr)
{
	BUG_ON(!(l->flags[pfn] & LRU_F_ON));
	unlink_one(l, (uint32_t)pfn);
	l->nr[lru_list_of(l, pfn)] -= nr;
	l->flags[pfn] = 0;
}

void lru_replace(struct lru *l, pfn_t from, pfn_t to)
{
	BUG_ON(!(l->flags[from] & LRU_F_ON) || (l->flags[to] & LRU_F_ON));
	link_after(l, l->prev[from], (uint32_t)to);
	unlink_one(l, (uint32_t)from);
	l->flags[to] = l->flags[from];
	l->flags[from] = 0;
}

void lru_move(struct lru *l, pfn_t pfn, unsigned nr, unsigned list)
{
	unsigned from = lru_list_of(l, pfn), to;
	bool active = list == LRU_ACTIVE_ANON || list == LRU_ACTIVE_FILE;

	unlink_one(l, (uint32_t)pfn);
	l->flags[pfn] = (uint8_t)((l->flags[pfn] & ~LRU_F_ACTIVE) | (active ? LRU_F_ACTIVE : 0));
	to = lru_list_of(l, pfn);
	l->nr[from] -= nr;
	l->nr[to] += nr;
	link_after(l, lru_head(l, to), (uint32_t)pfn);
}

bool lru_mark_lazyfree(struct lru *l, pfn_t pfn, unsigned nr)
{
	unsigned from = lru_list_of(l, pfn);

	BUG_ON(!(l->flags[pfn] & LRU_F_ON));
	if (l->flags[pfn] & LRU_F_LAZYFREE)
		return false;
	unlink_one(l, (uint32_t)pfn);
	l->nr[from] -= nr;
	l->flags[pfn] = LRU_F_ON | LRU_F_LAZYFREE;
	link_after(l, lru_head(l, LRU_INACTIVE_FILE), (uint32_t)pfn);
	l->nr[LRU_INACTIVE_FILE] += nr;
	return true;
}

void lru_set_swapbacked(struct lru *l, pfn_t pfn, unsigned nr, unsigned list)
{
	unsigned from = lru_list_of(l, pfn);

	BUG_ON(!(l->flags[pfn] & LRU_F_ON));
	unlink_one(l, (uint32_t)pfn);
	l->nr[from] -= nr;
	l->flags[pfn] = (uint8_t)((l->flags[pfn] & ~(LRU_F_LAZYFREE | LRU_F_ACTIVE)) |
				  (list == LRU_ACTIVE_ANON ? LRU_F_ACTIVE : 0));
	l->nr[lru_list_of(l, pfn)] += nr;
	link_after(l, lru_head(l, lru_list_of(l, pfn)), (uint32_t)pfn);
}

void lru_split(struct lru *l, pfn_t head, const uint64_t *mapped)
{
	uint32_t at = (uint32_t)head;
	uint8_t f = l->flags[head];
	unsigned list = lru_list_of(l, head), n = 0;

	BUG_ON(!(f & LRU_F_ON));
	for (unsigned i = 1; i < HPAGE_PMD_NR; i++)
		if (mapped[i / 64] >> (i % 64) & 1) {
			link_after(l, at, (uint32_t)(head + i));
			l->flags[head + i] = f;
			at = (uint32_t)(head + i);
			n++;
		}
	l->nr[list] -= HPAGE_PMD_NR;
	if (mapped[0] & 1) {
		n++; /* the head stays, as a 4K folio */
	} else {
		unlink_one(l, (uint32_t)head);
		l->flags[head] = 0;
	}
	l->nr[list] += n;
}

void lru_check_invariants(const struct lru *l, unsigned (*folio_nr)(const void *ctx, pfn_t pfn),
			  const void *ctx)
{
	for (unsigned list = 0; list < NR_LRU_LISTS; list++) {
		uint32_t h = lru_head(l, list);
		uint64_t nr = 0;

		for (uint32_t p = l->next[h]; p != h; p = l->next[p]) {
			BUG_ON(l->prev[l->next[p]] != p);
			BUG_ON(!(l->flags[p] & LRU_F_ON));
			BUG_ON(lru_list_of(l, p) != list);
			nr += folio_nr(ctx, p);
		}
		BUG_ON(nr != l->nr[list]);
	}
}
