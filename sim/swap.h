/*
 * swap.h - one swap device's slot allocator, after Linux 6.6 mm/swapfile.c:
 * slots are 4 KiB, grouped in clusters of SWAPFILE_CLUSTER = HPAGE_PMD_NR (512)
 * slots so that a THP can be swapped out whole into one free cluster
 * (get_swap_pages() for order 9); slot 0 holds the swap header and is never
 * handed out, so cluster 0 never becomes free.
 *
 * Order-0 slots come from a current cluster (the kernel keeps one per CPU), then
 * from a wholly free cluster, then from any free slot (scan_swap_map_slots()'s
 * fallback scan). Memory: a bit per slot and a count per cluster.
 */
#ifndef MMUSIM_SWAP_H
#define MMUSIM_SWAP_H

#include "types.h"

#define SWAP_NONE UINT64_MAX
#define SWAPFILE_CLUSTER 512

struct swap_dev {
	uint64_t nr_slots;    /* whole clusters only */
	uint64_t nr_clusters;
	uint64_t nr_used;     /* slots in use, the header included */
	uint64_t *used;       /* bit per slot */
	uint16_t *count;      /* slots in use per cluster */
	uint64_t *free_cl;    /* clusters that became wholly free again (a stack) */
	uint64_t nr_free_cl, cap_free_cl;
	uint64_t next_fresh;  /* clusters from here on were never used */
	uint64_t cur;         /* the current cluster for order-0 slots, or SWAP_NONE */
	uint64_t scan;        /* fallback scan cursor (a word index) */
};

/* A device of @bytes (rounded down to whole clusters; 0: no swap). 0 or -1 (host OOM). */
int swap_init(struct swap_dev *d, uint64_t bytes);
void swap_destroy(struct swap_dev *d);

/* Free slots left (the header never counts). */
static inline uint64_t swap_nr_free(const struct swap_dev *d)
{
	return d->nr_slots ? d->nr_slots - d->nr_used : 0;
}

/* One slot, or SWAP_NONE when the device is full. */
uint64_t swap_alloc(struct swap_dev *d);

/* The first slot of a wholly free cluster (all 512 now used), or SWAP_NONE. */
uint64_t swap_alloc_cluster(struct swap_dev *d);

/* Release @slot (in use). */
void swap_free(struct swap_dev *d, uint64_t slot);

bool swap_slot_used(const struct swap_dev *d, uint64_t slot);

/* Bits and counts agree; the free-cluster stack holds only free clusters. Aborts. */
void swap_check_invariants(const struct swap_dev *d);

#endif
