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
	d->nr_clusters = (bytes >> PAGE_SHIFT) / SWAPFILE_CLUSTER;
	d->nr_slots = d->nr_clusters * SWAPFILE_CLUSTER;
	if (!d->nr_slots)
		return 0;
	d->used = zero_pages(d->nr_slots / 64, sizeof(*d->used));
	d->count = zero_pages(d->nr_clusters, sizeof(*d->count));
	if (!d->used || !d->count) {
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

/* A wholly free cluster: a recycled one first, else a never-used one. */
static uint64_t free_cluster(struct swap_dev *d)
{
	while (d->nr_free_cl) {
		uint64_t c = d->free_cl[--d->nr_free_cl];

		if (!d->count[c] && c != d->cur)
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

void swap_free(struct swap_dev *d, uint64_t slot)
{
	uint64_t c = slot / SWAPFILE_CLUSTER;

	BUG_ON(!swap_slot_used(d, slot) || slot == 0);
	d->used[slot / 64] &= ~(1ULL << (slot % 64));
	d->nr_used--;
	if (--d->count[c] || c == d->cur)
		return;
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
		BUG_ON(c >= d->next_fresh && n && c != d->cur);
		total += n;
	}
	BUG_ON(total != d->nr_used);
}
