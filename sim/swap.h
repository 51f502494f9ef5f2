/*
 * swap.h - one swap device's slot allocator, after Linux 6.6 mm/swapfile.c:
 * slots are 4 KiB, grouped in clusters of SWAPFILE_CLUSTER = HPAGE_PMD_NR (512)
 * slots so that a THP can be swapped out whole into one free cluster
 * (get_swap_pages() for order 9); slot 0 holds the swap header and is never
 * handed out, so cluster 0 never becomes free.
 *
 * Order-0 slots come from a current cluster (the kernel keeps one per CPU), then
 * from a wholly free cluster, then from any free slot (scan_swap_map_slots()'s
 * fallback scan). An mTHP's aligned run of slots comes from its order's
 * current cluster, else a wholly free one, else another cluster of its order
 * with a free aligned run (6.10+, swap_alloc_order(); the kernel's
 * nonfull_clusters[order] lists of 6.12, here a scan). Memory: a bit per slot,
 * a count and an order per cluster.
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
	uint64_t cur_o[HPAGE_PMD_ORDER]; /* per mTHP order (2 .. 8): the cluster its runs come
				    from (percpu_cluster->next[order]), or SWAP_NONE */
	uint8_t *cl_order;    /* per cluster: the mTHP order it was taken for (0: none) */
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

/*
 * 2^@order (2 .. 8) slots for an mTHP swapped out whole (get_swap_pages() of
 * Linux 6.10+, 845982eb264b "mm: swap: allow storage of all mTHP orders"): an
 * aligned free run of the cluster this order took last, else a wholly free
 * cluster, which becomes this order's, else of another cluster of this order;
 * the first slot, or SWAP_NONE (no such run: the caller splits the folio). Order-0 slots never come from an order's
 * cluster but by the fallback scan, which takes any free slot.
 */
uint64_t swap_alloc_order(struct swap_dev *d, unsigned order);

/* Release @slot (in use). */
void swap_free(struct swap_dev *d, uint64_t slot);

bool swap_slot_used(const struct swap_dev *d, uint64_t slot);

/* Bits and counts agree; the free-cluster stack holds only free clusters. Aborts. */
void swap_check_invariants(const struct swap_dev *d);

#endif
