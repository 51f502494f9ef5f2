/*
 * vma.h - the address space as a sorted set of VMAs with the kernel's flags.
 *
 * Pure bookkeeping of [start, end) ranges: split at boundaries, merge with
 * neighbours of identical flags but VM_ANON_VMA (vma_merge), look-up. What happens to the pages
 * (zapping, TLB invalidation) is orchestrated by sim.c, which calls these after
 * acting on the page table.
 */
#ifndef MMUSIM_VMA_H
#define MMUSIM_VMA_H

#include "types.h"

/* include/linux/mm.h values where the kernel has them. */
#define VM_READ 0x00000001UL
#define VM_WRITE 0x00000002UL
#define VM_EXEC 0x00000004UL
#define VM_SHARED 0x00000008UL
#define VM_GROWSDOWN 0x00000100UL
#define VM_SEQ_READ 0x00008000UL  /* MADV_SEQUENTIAL */
#define VM_RAND_READ 0x00010000UL /* MADV_RANDOM */
#define VM_LOCKED 0x00002000UL
#define VM_LOCKONFAULT 0x00080000UL
#define VM_ACCOUNT 0x00100000UL   /* the VMA's pages are charged to the commit (mmap.c) */
#define VM_NORESERVE 0x00200000UL /* MAP_NORESERVE: not charged */
#define VM_HUGETLB 0x00400000UL
#define VM_HUGEPAGE 0x20000000UL
#define VM_NOHUGEPAGE 0x40000000UL
#define VM_IMPLICIT 0x100000000UL /* mmusim: made by the implicit-mapping rule */
#define VM_BRK 0x200000000UL      /* mmusim: the heap grown by brk() */
#define VM_FILE 0x400000000UL     /* mmusim: a file mapping, private or shared (vma->vm_file) */
#define VM_SHMEM 0x1000000000UL  /* mmusim: a file mapping of shmem (tmpfs, memfd: mtr v5's f_type;
				     vma_is_shmem()) */
#define VM_ANON_VMA 0x800000000UL /* mmusim: vma->anon_vma is set (an anonymous page was
				     faulted in: vmf_anon_prepare()); merges ignore it */
#define VM_HUGETLB_1G 0x4000000000UL /* mmusim: a VM_HUGETLB VMA of 1 GiB pages (its file's
					hstate; without it, 2 MiB pages) */

struct vma {
	vaddr_t start, end;
	unsigned long flags;
	uint32_t file;  /* VM_FILE: the file's identity (filemap.h), 0 for anonymous memory */
	uint64_t pgoff; /* VM_FILE: the file page mapped at start (vma->vm_pgoff) */
};

struct vma_set {
	struct vma *v; /* sorted by start, non-overlapping */
	size_t n, cap;
};

void vma_set_init(struct vma_set *s);
void vma_set_free(struct vma_set *s);

/* The VMA containing @va, or NULL. */
struct vma *vma_find(const struct vma_set *s, vaddr_t va);

/* The first VMA that ends after @va (the one containing it, or the next), or NULL. */
struct vma *vma_find_next(const struct vma_set *s, vaddr_t va);

/*
 * The free gap around @va (which must be outside every VMA): [*lo, *hi), bounded
 * by the neighbouring VMAs and by [0, @limit).
 */
void vma_gap(const struct vma_set *s, vaddr_t va, vaddr_t limit, vaddr_t *lo, vaddr_t *hi);

/*
 * Add [start, end) with @flags; the range must be free. Merges with neighbours of
 * the same flags. Returns 0, or -1 if host memory ran out.
 */
int vma_insert(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long flags);

/* vma_insert() of a file mapping: file page @pgoff of @file at @start. */
int vma_insert_file(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long flags,
		    uint32_t file, uint64_t pgoff);

/* Remove whatever lies in [start, end), splitting VMAs that straddle. 0 or -1. */
int vma_remove(struct vma_set *s, vaddr_t start, vaddr_t end);

/*
 * Within [start, end), set the bits @set and clear @clear on every VMA (splitting
 * at the boundaries, then merging equal neighbours). Gaps are skipped. 0 or -1.
 */
int vma_change_flags(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long set,
		     unsigned long clear);

/* Sorted, non-empty, non-overlapping, page aligned, equal neighbours merged. Aborts. */
void vma_check_invariants(const struct vma_set *s);

#endif
