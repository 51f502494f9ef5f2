/*
 * filemap.h - file-backed memory: the page cache and the faults on file
 * mappings (Linux 6.18 mm/filemap.c, mm/memory.c do_read_fault(),
 * do_cow_fault(), do_shared_fault(), do_fault_around(), wp_page_copy(),
 * wp_page_shared()). See filemap.c.
 */
#ifndef MMUSIM_FILEMAP_H
#define MMUSIM_FILEMAP_H

#include <stdbool.h>

#include "types.h"

struct kernel;
struct vma;

/*
 * A shmem file (tmpfs, memfd): its pages exist only once written, so which of
 * them do is tracked: the pages the model holds for it, and whether others
 * exist (the file had more pages at its last mmap than the model holds: they
 * were written where the trace does not show, a write() or another process).
 */
struct fm_shmem {
	uint32_t file;
	bool whole;  /* every page of it exists (those not held yet are taken when mapped) */
	uint64_t nr; /* pages the model holds for it */
};

/*
 * The readahead state of a file (struct file_ra_state, mm/readahead.c): the
 * last readahead window [start, start + size) with its async tail (the folio at
 * start + size - async_size carries PG_readahead), the folio order the next
 * round asks for, and mmap_miss (do_sync_mmap_readahead() counts misses up,
 * hits and fault-around count it down; above MMAP_LOTSAMISS read-around stops).
 * One per file identity: the model takes every mapping of a file as made from
 * one open() (see filemap.c).
 */
struct fm_ra {
	uint32_t file;
	uint16_t mmap_miss;
	uint8_t order;
	uint64_t start, size, async_size;
};

/* File identities: a trace's own (mtr version 2: 1 + its file index) below this,
 * mmusim's (an fd mmap without one, an implicit text region) from it up. */
#define FILE_ID_OWN 0x80000000U

struct filemap {
	/* the page cache: (file, pgoff) -> frame, open addressing; entries are never removed */
	uint32_t *key_file; /* 0 = empty slot */
	uint64_t *key_off;
	pfn_t *val;
	size_t cap, n;
	uint32_t *map;      /* per frame: 0 = no cache page, else 1 + its mapcount */
	uint8_t *order;     /* per cache frame: its folio's order (the folio is the aligned
			     * block of frames and of file pages around it) */
	uint32_t next_file; /* the next identity of mmusim's own */
	uint64_t nr_ptes;   /* PTEs mapping cache pages */
	struct fm_shmem *shm; /* the shmem files (tmpfs, memfd) mapped so far */
	size_t nshm;
	uint64_t nr_pmds;   /* PMDs mapping file THPs */
	uint8_t *ra_mark;   /* per frame: PG_readahead on the folio whose first frame it is */
	struct fm_ra *ra;   /* the readahead state of each file faulted on so far */
	size_t nra;
};

int filemap_init(struct kernel *k);
void filemap_destroy(struct kernel *k);

/* A new file identity of mmusim's own (an fd mmap without one, implicit text). */
uint32_t filemap_new_file(struct kernel *k);

/*
 * mmap of shmem file @file, which then had @pages pages (mtr version 5's
 * st_blocks / 8): decides whether its pages outside the model's cache exist.
 * 0, or -1 when out of host memory.
 */
int filemap_shmem_mmap(struct kernel *k, uint32_t file, uint64_t pages);

/* Is @pfn a page-cache page? */
static inline bool filemap_is_cache(const struct filemap *fm, pfn_t pfn)
{
	return fm->map && fm->map[pfn];
}

/*
 * do_fault_around()'s window around @va of @v for a window of @nr pages (a power
 * of two, from os.fault_around_bytes): from_pte = max(ALIGN_DOWN(pte_off, nr),
 * the VMA's first PTE), to_pte = min3(from_pte + nr, PTRS_PER_PTE, the VMA's
 * end), as [*lo, *hi).
 */
void filemap_fault_around_window(const struct vma *v, vaddr_t va, uint64_t nr, vaddr_t *lo, vaddr_t *hi);

/* A not-present fault in the file VMA @v: 0, 1 if out of simulated or host memory. */
int filemap_fault(struct kernel *k, struct vma *v, vaddr_t va, bool write);

/* A store to the read-only PTE of cache page @pfn at @va: 0, 1 if out of memory. */
int filemap_wp_fault(struct kernel *k, struct vma *v, vaddr_t va, pfn_t pfn);

/* A PTE mapping cache page @pfn goes (zap, munmap): the page stays cached. */
void filemap_unmap_pte(struct kernel *k, pfn_t pfn);

/* A PTE mapping cache page @pfn is made at a new place (mremap). */
void filemap_map_pte(struct kernel *k, pfn_t pfn);

/* The cached frame of page @off of @file, or PFN_NONE. */
pfn_t filemap_lookup(const struct kernel *k, uint32_t file, uint64_t off);

/*
 * page_cache_sync_readahead() as collapse_file() calls it: read the missing
 * pages of [@off, @off + @nr) of @file into the cache. 0, 1 if out of memory.
 */
int filemap_read_in(struct kernel *k, uint32_t file, uint64_t off, uint64_t nr);

/* Does the folio holding cache page @pfn carry PG_readahead? */
bool filemap_readahead_marked(const struct kernel *k, pfn_t pfn);

/* The readahead state of @file, NULL before its first fault (tests). */
const struct fm_ra *filemap_ra(const struct kernel *k, uint32_t file);

/* The order of the page-cache folio holding cache page @pfn (0: a small folio). */
static inline unsigned filemap_folio_order(const struct filemap *fm, pfn_t pfn)
{
	return fm->order[pfn];
}

/* Is @pfn a page of a file THP (khugepaged.c collapse_file())? */
bool filemap_is_thp(const struct kernel *k, pfn_t pfn);

/*
 * collapse_file()'s page-cache part: the 512 cached pages of @file from @start
 * (all present, none mapped) are replaced by the allocated order-9 block at
 * @head (nr_file_hugepages); the old pages are freed.
 */
void filemap_install_thp(struct kernel *k, uint32_t file, uint64_t start, pfn_t head);

/* A PMD maps the file THP at @head (do_set_pmd()) / one mapping it goes. */
void filemap_map_pmd(struct kernel *k, pfn_t head);
void filemap_unmap_pmd(struct kernel *k, pfn_t pfn);

/* thp_vma_suitable_order(@v, @haddr, PMD_ORDER) for a file VMA. */
bool filemap_thp_suitable(const struct vma *v, vaddr_t haddr);

/* Every cache page to @fn (the invariants: each owned once). */
void filemap_for_each(const struct kernel *k, void (*fn)(void *ctx, pfn_t pfn), void *ctx);

/* Counters agree with the cache and the page table's cache PTEs (@ptes) and file
 * THP PMDs (@pmds). Aborts. */
void filemap_check_invariants(const struct kernel *k, uint64_t ptes, uint64_t pmds);

#endif
