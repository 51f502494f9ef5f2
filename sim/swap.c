/*
 * swap.c - the swap slot allocator (swap.h), after Linux 6.6 mm/swapfile.c
 * (get_swap_pages(), swap_alloc_cluster(), scan_swap_map_slots(),
 * swap_entry_free()).
 *
 * Simplifications: one device, one "CPU" cluster; no swap cache (slots are freed
 * at swap-in, as do_swap_page() does on a SWP_SYNCHRONOUS_IO device when the
 * entry has one user); no discard, no priorities.
 */
#include <stdlib.h>
#include <string.h>

#include "swap.h"
#include "util.h"

int swap_init(struct swap_dev *d, uint64_t bytes)
{
	memset(d, 0, sizeof(*d));
	d->cur = SWAP_NONE;
	for (unsigned o = 0; o < HPAGE_PMD_ORDER; o++)
		d->cur_o[o] = SWAP_NONE;
	d->nr_clusters = (bytes >> PAGE_SHIFT) / SWAPFILE_CLUSTER;
	d->nr_slots = d->nr_clusters * SWAPFILE_CLUSTER;
	if (!d->nr_slots)
		return 0;
	d->used = zero_pages(d->nr_slots / 64, sizeof(*d->used));
	d->count = zero_pages(d->nr_clusters, sizeof(*d->count));
	d->cl_order = zero_pages(d->nr_clusters, sizeof(*d->cl_order));
	if (!d->used || !d->count || !d->cl_order) {
		swap_destroy(d);
		return -1;
	}
	/* slot 0: the swap header (mkswap); cluster 0 is never wholly free */
	d->used[0] = 1;
	d->count[0] = 1;
	d->nr_used = 1;
	d->next_fresh = 1;
	d->cur = 0;
	return 0;
}

void swap_destroy(struct swap_dev *d)
{
	zero_pages_free(d->used, d->nr_slots / 64, sizeof(*d->used));
	zero_pages_free(d->count, d->nr_clusters, sizeof(*d->count));
	zero_pages_free(d->cl_order, d->nr_clusters, sizeof(*d->cl_order));
	free(d->free_cl);
	memset(d, 0, sizeof(*d));
}

bool swap_slot_used(const struct swap_dev *d, uint64_t slot)
{
	return slot < d->nr_slots && (d->used[slot / 64] >> (slot % 64) & 1);
}

static void take(struct swap_dev *d, uint64_t slot)
{
	BUG_ON(swap_slot_used(d, slot));
	d->used[slot / 64] |= 1ULL << (slot % 64);
	d->count[slot / SWAPFILE_CLUSTER]++;
	d->nr_used++;
}

/* Is cluster @c an mTHP order's current one? */
static bool swap_cluster_current_o(const struct swap_dev *d, uint64_t c)
{
	for (unsigned o = 0; o < HPAGE_PMD_ORDER; o++)
		if (d->cur_o[o] == c)
			return true;
	return false;
}

/* A wholly free cluster: a recycled one first, else a never-used one. */
static uint64_t free_cluster(struct swap_dev *d)
{
	while (d->nr_free_cl) {
		uint64_t c = d->free_cl[--d->nr_free_cl];

		if (!d->count[c] && c != d->cur && !swap_cluster_current_o(d, c))
			return c; /* (a stale entry would have been re-filled since) */
	}
	if (d->next_fresh < d->nr_clusters)
		return d->next_fresh++;
	return SWAP_NONE;
}

uint64_t swap_alloc(struct swap_dev *d)
{
	uint64_t c = d->cur;

	if (!swap_nr_free(d))
		return SWAP_NONE;
	if (c == SWAP_NONE || d->count[c] == SWAPFILE_CLUSTER) {
		c = free_cluster(d);
		d->cur = c;
	}
	if (c != SWAP_NONE) {
		/* the lowest free slot of the current cluster */
		for (uint64_t w = c * (SWAPFILE_CLUSTER / 64); w < (c + 1) * (SWAPFILE_CLUSTER / 64); w++)
			if (~d->used[w]) {
				uint64_t slot = w * 64 + (uint64_t)__builtin_ctzll(~d->used[w]);

				take(d, slot);
				return slot;
			}
		BUG_ON(1); /* count said there was room */
	}
	/* no free cluster: scan the partial ones from where the last scan stopped */
	for (uint64_t k = 0, nw = d->nr_slots / 64; k < nw; k++) {
		uint64_t w = (d->scan + k) % nw;

		if (~d->used[w]) {
			uint64_t slot = w * 64 + (uint64_t)__builtin_ctzll(~d->used[w]);

			d->scan = w;
			take(d, slot);
			return slot;
		}
	}
	BUG_ON(1); /* swap_nr_free() said there was a free slot */
	return SWAP_NONE;
}

uint64_t swap_alloc_cluster(struct swap_dev *d)
{
	uint64_t c;

	if (swap_nr_free(d) < SWAPFILE_CLUSTER)
		return SWAP_NONE;
	c = free_cluster(d);
	if (c == SWAP_NONE)
		return SWAP_NONE;
	for (uint64_t i = 0; i < SWAPFILE_CLUSTER / 64; i++)
		d->used[c * (SWAPFILE_CLUSTER / 64) + i] = ~0ULL;
	d->count[c] = SWAPFILE_CLUSTER;
	d->nr_used += SWAPFILE_CLUSTER;
	return c * SWAPFILE_CLUSTER;
}

/* Take the lowest aligned free run of 2^@order slots in cluster @c: its first slot, or SWAP_NONE. */
static uint64_t take_run(struct swap_dev *d, uint64_t c, unsigned order)
{
	uint64_t n = 1ULL << order;

	if (d->count[c] + n > SWAPFILE_CLUSTER)
		return SWAP_NONE;
	for (uint64_t s = c * SWAPFILE_CLUSTER; s < (c + 1) * SWAPFILE_CLUSTER; s += n) {
		uint64_t i;

		for (i = 0; i < n && !swap_slot_used(d, s + i); i++)
			;
		if (i < n)
			continue;
		for (i = 0; i < n; i++)
			take(d, s + i);
		return s;
	}
	return SWAP_NONE;
}

uint64_t swap_alloc_order(struct swap_dev *d, unsigned order)
{
	uint64_t c = d->cur_o[order], s;

	BUG_ON(order < 1 || order >= HPAGE_PMD_ORDER);
	if (swap_nr_free(d) < (1ULL << order))
		return SWAP_NONE;
	if (c != SWAP_NONE && (s = take_run(d, c, order)) != SWAP_NONE)
		return s;
	/* a wholly free cluster becomes this order's */
	c = free_cluster(d);
	if (c != SWAP_NONE) {
		d->cur_o[order] = c;
		d->cl_order[c] = (uint8_t)order;
		return take_run(d, c, order);
	}
	/* another cluster of this order with room (nonfull_clusters[order]) */
	for (c = 0; c < d->nr_clusters; c++)
		if (d->cl_order[c] == order && c != d->cur && (s = take_run(d, c, order)) != SWAP_NONE) {
			d->cur_o[order] = c;
			return s;
		}
	return SWAP_NONE;
}

void swap_free(struct swap_dev *d, uint64_t slot)
{
	uint64_t c = slot / SWAPFILE_CLUSTER;

	BUG_ON(!swap_slot_used(d, slot) || slot == 0);
	d->used[slot / 64] &= ~(1ULL << (slot % 64));
	d->nr_used--;
	if (--d->count[c] || c == d->cur || swap_cluster_current_o(d, c))
		return;
	d->cl_order[c] = 0; /* wholly free: any order may take it */
	/* the cluster is wholly free again: it can take a THP */
	if (d->nr_free_cl == d->cap_free_cl) {
		uint64_t cap = d->cap_free_cl ? d->cap_free_cl * 2 : 16;
		uint64_t *n = realloc(d->free_cl, cap * sizeof(*n));

		if (!n)
			return; /* forgotten: its slots are still found by the fallback scan */
		d->free_cl = n;
		d->cap_free_cl = cap;
	}
	d->free_cl[d->nr_free_cl++] = c;
}

void swap_check_invariants(const struct swap_dev *d)
{
	uint64_t total = 0;

	if (!d->nr_slots)
		return;
	BUG_ON(!(d->used[0] & 1));
	for (uint64_t c = 0; c < d->nr_clusters; c++) {
		uint64_t n = 0;

		for (uint64_t i = 0; i < SWAPFILE_CLUSTER / 64; i++)
			n += (uint64_t)__builtin_popcountll(d->used[c * (SWAPFILE_CLUSTER / 64) + i]);
		BUG_ON(n != d->count[c]);
		BUG_ON(c >= d->next_fresh && n && c != d->cur && !swap_cluster_current_o(d, c));
		total += n;
	}
	BUG_ON(total != d->nr_used);
}
