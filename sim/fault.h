/*
 * fault.h - the page-fault handler (fault.c, Linux mm/memory.c): what the MMU's
 * fault hook calls.
 */
#ifndef MMUSIM_FAULT_H
#define MMUSIM_FAULT_H

#include "trace.h"
#include "types.h"

struct kernel;

/*
 * handle_mm_fault() for an access to @va that found no present entry (@write:
 * a store). Maps a page (4K, THP, hugetlb, or the swapped-out one) and charges
 * its cycles. 0, or -1 with k->err and k->failed set (an address beyond the
 * paging levels, outside every VMA with implicit mappings off, simulated memory
 * exhausted).
 */
int sim_fault(struct kernel *k, vaddr_t va, bool write);

/*
 * A store met a read-only translation of @va (a zero page, or a read-only PTE
 * of a writable VMA): break COW, flush the page's translations. 0, or -1 with
 * k->err.
 */
int sim_wp_fault(struct kernel *k, vaddr_t va);

/*
 * The kernel's side of a touch of @va that was not traced (before a region of
 * interest: an mtr R_TOUCH record, a skipped reference): the fault the access
 * took, if it took one, with no TLB, PWC or cache lookup -- a page not present
 * faults in as a read, a write or an instruction fetch (@how); a store to a
 * present read-only page takes the write-protect fault (the COW of a zero page
 * or of a private file page); a page present as the access needs it, nothing.
 * Under virt.mode, the guest kernel's fault and the host's backing of what it
 * mapped. Counts what those faults count (the caller decides what is kept).
 * 0, or -1 with k->err and k->failed set (sim_fault()'s failures).
 */
int sim_touch(struct kernel *k, vaddr_t va, enum touch_how how);

/*
 * The #PF vector the kernel installs in its MMU (struct mmu's fault hook): @os is
 * the struct kernel; @wp selects sim_wp_fault(), else sim_fault(). 0 or -1.
 */
int sim_fault_hook(void *os, vaddr_t va, bool write, bool wp);

#endif
