/*
 * mmap.c - the mapping system calls and what they share, after Linux 6.x
 * mm/mmap.c (mmap_region(), do_vmi_munmap(), do_brk_flags(), exit_mmap()),
 * mm/mprotect.c, mm/madvise.c, mm/mremap.c (move_page_tables()), mm/memory.c
 * zap_page_range_single() and arch/x86/mm/tlb.c flush_tlb_mm_range().
 *
 *  - Events: mmap (over existing VMAs: they are unmapped first, as MAP_FIXED and
 *    the replacement of implicit VMAs need), munmap, mprotect, madvise
 *    (MADV_DONTNEED zaps, MADV_[NO]HUGEPAGE, MADV_RANDOM, MADV_SEQUENTIAL and
 *    MADV_NORMAL set flags, MADV_COLLAPSE collapses at once, MADV_FREE,
 *    MADV_COLD and MADV_PAGEOUT act on the pages: madvise.c), brk, mremap
 *    (pages move with their frames).
 *  - An operation covering part of a THP or huge zero PMD splits it (thp.c).
 *    Simplification: one covering part of a 2 MiB or 1 GiB hugetlb page zaps the
 *    whole page (the rest refaults, in 4 KiB pages since its range is no longer
 *    wholly mappable); real hugetlbfs refuses unaligned operations.
 *  - mprotect_fixup() and madvise_update_vma(): a VMA whose flags would not
 *    change is left alone (no VMA split, no PMD split, no flush). One whose flags
 *    change is split at the range's edges, and vma_adjust_trans_huge() splits a
 *    THP or huge zero PMD across such an edge (MADV_[NO]HUGEPAGE too).
 *  - TLB shootdown as flush_tlb_mm_range() on x86 (arch/x86/mm/tlb.c, Linux
 *    6.18): the span from the first to the last leaf changed, in strides of
 *    PAGE_SHIFT unless only PMDs (PUDs) were cleared (tlb_get_unmap_shift()),
 *    is one INVLPG per stride up to tlb_single_page_flush_ceiling (33) strides,
 *    a full flush beyond. A zap or an mprotect gathers its leaves and flushes
 *    once at the end (struct mmu_gather, tlb_finish_mmu(); one gather for a
 *    whole mprotect call, do_mprotect_pkey(), and for a munmap; one for a
 *    MADV_DONTNEED call from 6.16, one per VMA before). A zap goes VMA by VMA
 *    (unmap_vmas()): a folio_remove_rmap_ptes() run ends at each VMA's end.
 *    mprotect gathers only what x86 pte_needs_flush() asks for (do_mprotect()
 *    says which); a write fault that makes a PTE writable in place flushes
 *    nothing (fault.c). A PMD split, zero-PMD split or
 *    collapse flushes its 2 MiB with flush_pmd_tlb_range(), which on x86 is
 *    flush_tlb_range() with a 4 KiB stride: 512 > 33, a full flush. mremap
 *    flushes each moved extent (move_ptes(), move_normal_pmd(),
 *    move_huge_pmd()). Each INVLPG or full flush counts one
 *    vmstat.tlb_invalidations; each flush call costs os.cost.flush. Every
 *    INVLPG also empties the PWCs (mmu.c, SDM §4.10.4.1). One core: no IPIs,
 *    no lazy-TLB or generation shortcuts.
 *    An unmap frees the page tables wholly between the neighbouring VMAs
 *    (free_pgtables(): floor and ceiling), not one another VMA still covers;
 *    mremap leaves the old tables to the munmap of the old range that follows
 *    (move_page_tables()). Simplification: page tables freed by a zap do not
 *    widen the span; a zap that frees tables but clears no leaf still
 *    flushes, as freed_tables makes tlb_finish_mmu() do: one INVLPG.
 *
 *  - Populating (mm/gup.c, Linux 6.18): MAP_POPULATE (without MAP_NONBLOCK) and
 *    every VM_LOCKED mapping (MAP_LOCKED, or after mlockall(MCL_FUTURE)) are
 *    populated by do_mmap() -> mm_populate() -> __mm_populate() ->
 *    populate_vma_page_range(); MADV_POPULATE_READ / _WRITE by madvise_populate()
 *    -> faultin_page_range(); mlock() and mlockall(MCL_CURRENT) by __mm_populate()
 *    after mlock_fixup(); brk() and a growing mremap() of a VM_LOCKED mapping by
 *    mm_populate() of the new part. All go through __get_user_pages(): per page,
 *    follow_page_mask() finds a present leaf (writable, for FOLL_WRITE) or
 *    faultin_page() -> handle_mm_fault() faults it, a fault counted as the
 *    process's (mm_account_fault(): GUP's faults count min_flt/maj_flt and
 *    PGFAULT, only perf events are skipped; measured on 6.18 with getrusage()),
 *    then a PMD leaf is stepped over whole. populate_vma_page_range() writes
 *    (FOLL_WRITE) in private writable VMAs only (to break COW; a shared one is
 *    read, not dirtied), skips VM_LOCKONFAULT and inaccessible VMAs; no TLB entry
 *    is touched (the kernel writes the page table). Read faults fault around in
 *    file mappings (do_read_fault()), so the next pages need no fault.
 *  - mlock (mm/mlock.c): mlock()/mlock2() set VM_LOCKED (| VM_LOCKONFAULT for
 *    MLOCK_ONFAULT) with mlock_fixup() per VMA (a split splits a THP across the
 *    edge, vma_adjust_trans_huge(); hugetlb VMAs keep their flags but are
 *    populated), munlock() and munlockall() clear them, mlockall() sets
 *    mm->def_flags for MCL_FUTURE (k->mm->def_flags) and locks every VMA for
 *    MCL_CURRENT. A VM_LOCKED page is never reclaimed (reclaim.c).
 *    Simplifications: [vvar]/[vdso] are ordinary VMAs to mlockall(MCL_CURRENT)
 *    (Linux skips VM_PFNMAP/VM_IO ones); RLIMIT_MEMLOCK is not checked (a
 *    call it refused failed and is not in the trace).
 *
 * Leaves out: shared anonymous memory as shmem (MAP_SHARED | MAP_ANONYMOUS is
 * recorded, backed like anonymous memory; files of tmpfs and memfds are shmem:
 * VM_SHMEM, filemap.c), VMA merging beyond vma.c's, guard pages, stack growth.
 */
#include <stdlib.h>

#include "fault.h"
#include "khugepaged.h"
#include "madvise.h"
#include "mmap.h"
#include "mmu.h"
#include "kernel.h"
#include "thp.h"
#include "tlbflush.h"

static int mm_populate(struct kernel *k, vaddr_t start, vaddr_t end);
static int madvise_populate(struct kernel *k, vaddr_t start, vaddr_t end, bool write);

static void unmap_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct kernel *k = ctx;

	if (pfn == PFN_NONE) { /* a swap entry: free_swap_and_cache() */
		thp_rmap_run_end(k);
		swap_free(&k->swap, pte_pfn(entry));
		return;
	}
	if (ps == PS_1G) {
		thp_rmap_run_end(k);
		hugetlb_free_1g(&k->hugetlb, pfn);
		k->st->nr_hugetlb_pages_1g--;
		kernel_rss_changed(k);
		return;
	}
	if (ps == PS_4K && filemap_is_cache(&k->fm, pfn)) { /* the page stays cached */
		thp_rmap_run_end(k);
		filemap_unmap_pte(k, pfn);
		return;
	}
	if (ps == PS_2M && filemap_is_thp(k, pfn)) { /* zap_huge_pmd() of a file THP: cached */
		thp_rmap_run_end(k);
		filemap_unmap_pmd(k, pfn);
		return;
	}
	thp_unmap_leaf(k, va, ps, pfn);
}

/*
 * A 2M leaf straddling an edge of [*start, *end): a THP or huge zero PMD is split
 * (vma_adjust_trans_huge(), zap_pmd_range()); a hugetlbfs page widens the range
 * to the whole page (see the header).
 */
static void widen_to_huge(struct kernel *k, vaddr_t *start, vaddr_t *end)
{
	enum page_size ps;
	pfn_t pfn;

	/* a 1G hugetlb page is zapped whole, like a 2M one */
	if (*start & (PUD_SIZE - 1) && pt_lookup(&k->mm->pt, *start, &ps, &pfn, NULL) && ps == PS_1G)
		*start &= ~(PUD_SIZE - 1);
	if (*end & (PUD_SIZE - 1) && pt_lookup(&k->mm->pt, *end - 1, &ps, &pfn, NULL) && ps == PS_1G)
		*end = (*end + PUD_SIZE - 1) & ~(PUD_SIZE - 1);

	if (*start & (PMD_SIZE - 1) && pt_lookup(&k->mm->pt, *start, &ps, &pfn, NULL) && ps == PS_2M) {
		if (pfn == k->thp.huge_zero_pfn || thp_is_folio(k, pfn) || filemap_is_thp(k, pfn))
			thp_split_pmd_at(k, *start);
		else
			*start &= ~(PMD_SIZE - 1);
	}
	if (*end & (PMD_SIZE - 1) && pt_lookup(&k->mm->pt, *end - 1, &ps, &pfn, NULL) && ps == PS_2M) {
		if (pfn == k->thp.huge_zero_pfn || thp_is_folio(k, pfn) || filemap_is_thp(k, pfn))
			thp_split_pmd_at(k, *end - 1);
		else
			*end = (*end + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
	}
}

/*
 * The VMA (or gap) a zap is in. A zap goes VMA by VMA (unmap_vmas() ->
 * unmap_single_vma(); MADV_DONTNEED: zap_page_range_single_batched() per VMA),
 * so a run of folio_remove_rmap_ptes() never crosses a VMA boundary: a THP
 * mapped by two VMAs and zapped in both is partly mapped after the first one's
 * run and queued for deferred split (__folio_remove_rmap()), however the second
 * run ends. [lo, hi): where the leaves seen last lie; leaves come in address
 * order.
 */
struct vma_cursor {
	vaddr_t lo, hi;
};

/* Has the zap left the VMA (or gap) of the last leaf? Moves the cursor to @va's. */
static bool vma_crossed(const struct kernel *k, struct vma_cursor *c, vaddr_t va)
{
	const struct vma *v;

	if (va >= c->lo && va < c->hi)
		return false;
	v = vma_find_next(&k->mm->vmas, va);
	if (!v)
		*c = (struct vma_cursor){ va, k->va_limit };
	else if (va < v->start)
		*c = (struct vma_cursor){ va, v->start }; /* a gap */
	else
		*c = (struct vma_cursor){ v->start, v->end };
	return true;
}

struct zap_ctx {
	struct kernel *k;
	struct pt_span g; /* the mmu_gather */
	struct vma_cursor vc;
	bool gather_per_vma; /* each VMA its own mmu_gather (MADV_DONTNEED before 6.16) */
};

/* tlb_finish_mmu(): flush what a gather collected */
static void tlb_finish(struct kernel *k, const struct pt_span *g)
{
	if (g->end)
		flush_tlb_mm_range(k, g->start, g->end, g->shift);
}

static void zap_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct zap_ctx *z = ctx;

	if (vma_crossed(z->k, &z->vc, va)) {
		thp_rmap_run_end(z->k); /* the last VMA's zap_pte_range() is over */
		if (z->gather_per_vma) {
			tlb_finish(z->k, &z->g); /* zap_page_range_single()'s own gather */
			z->g = (struct pt_span){ 0, 0, 0 };
		}
	}
	if (pfn != PFN_NONE) /* a swap entry is in no TLB: zap_nonpresent_ptes() adds nothing */
		pt_span_add(&z->g, va, ps);
	unmap_leaf(z->k, va, ps, pfn, entry);
}

/*
 * free_pgtables()' floor and ceiling for unmapping [start, end): the end of the
 * VMA before it and the start of the one after it (an edge inside a VMA, which
 * keeps its outside part, is its own bound); 0 and the top of the address space
 * without one (FIRST_USER_ADDRESS, USER_PGTABLES_CEILING).
 */
static void free_floor_ceiling(const struct kernel *k, vaddr_t start, vaddr_t end, vaddr_t *floor,
			       vaddr_t *ceiling)
{
	vaddr_t lo, hi;

	*floor = start;
	if (start && !vma_find(&k->mm->vmas, start - 1)) {
		vma_gap(&k->mm->vmas, start - 1, k->va_limit, &lo, &hi);
		*floor = lo;
	}
	*ceiling = end;
	if (end < k->va_limit && !vma_find(&k->mm->vmas, end)) {
		vma_gap(&k->mm->vmas, end, k->va_limit, &lo, &hi);
		*ceiling = hi;
	}
}

/*
 * zap_page_range(): unmap the pages of [start, end), VMA by VMA, free their
 * frames, shoot down: one mmu_gather for the whole range (munmap's
 * unmap_region(), exit, and MADV_DONTNEED from 6.16), or one per VMA when
 * @gather_per_vma (MADV_DONTNEED before 6.16, zap_page_range_single()).
 */
static void zap_range_gather(struct kernel *k, vaddr_t start, vaddr_t end, bool free_tables,
			     bool gather_per_vma)
{
	struct zap_ctx z = { k, { 0, 0, 0 }, { 0, 0 }, gather_per_vma };
	uint64_t tables;

	widen_to_huge(k, &start, &end);
	tables = k->mm->pt.nr_tables;
	thp_rmap_batching(k, kernel_batched_zap(k->cfg->kernel)); /* zap_present_ptes() */
	pt_unmap_range(&k->mm->pt, start, end, false, zap_leaf, &z);
	thp_rmap_batching(k, false);
	if (free_tables) {
		vaddr_t floor, ceiling;

		free_floor_ceiling(k, start, end, &floor, &ceiling);
		pt_free_tables(&k->mm->pt, start, end, floor, ceiling);
	}
	if (!z.g.end && k->mm->pt.nr_tables < tables) {
		/* pte_free_tlb(): [table's address, + PAGE_SIZE), cleared_pmds (see the header) */
		vaddr_t a = start & ~(PMD_SIZE - 1);

		z.g = (struct pt_span){ a, a + PAGE_SIZE, PMD_SHIFT };
	}
	tlb_finish(k, &z.g);
}

static void zap_range(struct kernel *k, vaddr_t start, vaddr_t end, bool free_tables)
{
	zap_range_gather(k, start, end, free_tables, false);
}

/* --- events ------------------------------------------------------------- */

static unsigned long prot_flags(uint32_t prot)
{
	return (prot & 1 ? VM_READ : 0) | (prot & 2 ? VM_WRITE : 0) | (prot & 4 ? VM_EXEC : 0);
}

static vaddr_t page_align(uint64_t len)
{
	return (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
}

static int ev_range(struct kernel *k, const struct os_event *ev, vaddr_t *start, vaddr_t *end)
{
	*start = ev->addr & ~(PAGE_SIZE - 1);
	*end = ev->addr + page_align(ev->len);
	if (*end < *start || *end > k->va_limit) {
		k->failed = true;
		return err_set(&k->err, k->trace_name, ev->line, 0,
			       "%s of [0x%llx, +0x%llx) is beyond the %u-level address space",
			       ev_kind_name[ev->kind], (unsigned long long)ev->addr,
			       (unsigned long long)ev->len, k->cfg->levels);
	}
	return 0;
}

static int do_unmap(struct kernel *k, vaddr_t start, vaddr_t end)
{
	zap_range(k, start, end, true);
	return vma_remove(&k->mm->vmas, start, end) || vmas_unmap(k, start, end) ? -1 : 0;
}

/* Move the pages of [old, old + len) to new_addr, frames and all (move_page_tables()). */
struct moved {
	vaddr_t va;
	enum page_size ps;
	pfn_t pfn;
	uint64_t entry;
};

struct move_ctx {
	struct moved *m;
	size_t n, cap;
	bool oom;
};

static void collect_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct move_ctx *mc = ctx;

	if (mc->n == mc->cap) {
		size_t cap = mc->cap ? mc->cap * 2 : 64;
		struct moved *m = realloc(mc->m, cap * sizeof(*m));

		if (!m) {
			mc->oom = true;
			return;
		}
		mc->m = m;
		mc->cap = cap;
	}
	mc->m[mc->n++] = (struct moved){ va, ps, pfn, entry };
}

/*
 * move_page_tables()' flushes of [old, old + len) moving to @nw, done before the
 * move (nothing reads the TLB in between). Per extent (up to the next PMD boundary
 * of either side): a whole aligned PMD holding a PTE table or a huge leaf moves as
 * one and flushes its 2 MiB (move_normal_pmd(), move_huge_pmd():
 * flush_tlb_range(), flush_pmd_tlb_range(): a full flush); a smaller extent with
 * a present PTE is flushed whole by move_ptes() (force_flush). A hugetlb VMA moves
 * in one piece, flushed once with its page size's stride
 * (move_hugetlb_page_tables(), flush_hugetlb_tlb_range()).
 */
static void flush_moved(struct kernel *k, vaddr_t old, vaddr_t len, vaddr_t nw, bool hugetlb)
{
	enum page_size ps;
	pfn_t pfn;

	if (hugetlb) {
		if (pt_lookup(&k->mm->pt, old, &ps, &pfn, NULL))
			flush_tlb_mm_range(k, old, old + len, page_shift_of(ps));
		return;
	}
	for (vaddr_t a = old, e; a < old + len; a = e) {
		vaddr_t to = a - old + nw;

		e = (a | (PMD_SIZE - 1)) + 1;
		if (e - a > ((to | (PMD_SIZE - 1)) + 1) - to)
			e = a + ((to | (PMD_SIZE - 1)) + 1) - to;
		if (e > old + len)
			e = old + len;
		if (e - a == PMD_SIZE) {
			if (pt_table_at(&k->mm->pt, a, 1) || (pt_lookup(&k->mm->pt, a, &ps, &pfn, NULL) && ps == PS_2M))
				flush_tlb_range(k, a, e);
			continue;
		}
		for (vaddr_t p = a; p < e; p += PAGE_SIZE)
			if (pt_lookup(&k->mm->pt, p, &ps, &pfn, NULL)) {
				flush_tlb_range(k, a, e);
				break;
			}
	}
}

static int ev_oom(struct kernel *k, const struct os_event *ev)
{
	k->failed = true;
	return err_host(&k->err, k->trace_name, ev->line, 0, "out of host memory");
}

static int do_mremap(struct kernel *k, const struct os_event *ev)
{
	vaddr_t old = ev->addr, olen = page_align(ev->len), nlen = page_align(ev->new_len);
	vaddr_t nw = ev->new_addr;
	struct vma *v = vma_find(&k->mm->vmas, old);
	unsigned long flags = v ? v->flags & ~VM_IMPLICIT : VM_READ | VM_WRITE;
	uint32_t file = v ? v->file : 0;
	uint64_t pgoff = v ? v->pgoff + ((old - v->start) >> PAGE_SHIFT) : 0;
	struct move_ctx mc = { 0 };
	vaddr_t keep = olen < nlen ? olen : nlen;
	uint32_t rec = vmas_rec_of(k, old); /* the mapping moves (vmas.c) */

	if (old + olen < old || nw + nlen < nw || old + olen > k->va_limit || nw + nlen > k->va_limit)
		goto range;
	if (nw == old) {
		if (nlen < olen)
			return do_unmap(k, old + nlen, old + olen);
		if (nlen > olen) {
			zap_range(k, old + olen, old + nlen, true);
			vma_remove(&k->mm->vmas, old + olen, old + nlen);
			/* the grown part belongs to the mapping it extends (vmas.c) */
			if (vma_insert_file(&k->mm->vmas, old + olen, old + nlen, flags, file,
					    pgoff + (olen >> PAGE_SHIFT)) ||
			    (rec ? vmas_extend(k, old + olen, old + nlen, rec)
			       : vmas_map(k, old + olen, old + nlen, flags, 0, false)))
				return ev_oom(k, ev);
			return 0;
		}
		return 0;
	}
	/*
	 * A move's destination never overlaps its source in Linux: without
	 * MREMAP_FIXED get_unmapped_area() picks a free range (the source is still
	 * mapped), with it mremap_to() fails with EINVAL (mm/mremap.c). A trace
	 * that says otherwise is inconsistent: an error, not a move onto itself.
	 */
	if (nw < old + olen && old < nw + nlen) {
		k->failed = true;
		return err_set(&k->err, k->trace_name, ev->line, 0,
			       "mremap moves 0x%llx+%llu onto 0x%llx+%llu, which overlaps it (Linux never does)",
			       (unsigned long long)old, (unsigned long long)olen, (unsigned long long)nw,
			       (unsigned long long)nlen);
	}
	/* moved: take the leaves of the kept part, drop the rest, map them at nw */
	if ((nw - old) & (PMD_SIZE - 1))
		for (vaddr_t a = old & ~(PMD_SIZE - 1); a < old + keep; a += PMD_SIZE)
			thp_split_pmd_at(k, a); /* a THP cannot move to a misaligned place whole */
	widen_to_huge(k, &old, &(vaddr_t){ old + keep });
	flush_moved(k, ev->addr & ~(PAGE_SIZE - 1), keep, nw, flags & VM_HUGETLB);
	/* move_ptes() leaves the old tables in place; the munmap of the old range
	 * that follows frees those wholly outside every VMA (free_pgtables()), and
	 * flushes once for them (freed_tables): a table the rest of the VMA still
	 * covers stays */
	pt_unmap_range(&k->mm->pt, ev->addr & ~(PAGE_SIZE - 1), ev->addr + keep, false, collect_leaf, &mc);
	if (mc.oom)
		goto oom;
	do_unmap(k, old, ev->addr + olen);
	do_unmap(k, nw, nw + nlen);
	for (size_t i = 0; i < mc.n; i++) {
		vaddr_t to = mc.m[i].va - (ev->addr & ~(PAGE_SIZE - 1)) + nw;

		if ((mc.m[i].ps == PS_2M && (to & (PMD_SIZE - 1))) ||
		    (mc.m[i].ps == PS_1G && (to & (PUD_SIZE - 1)))) {
			/* the huge page cannot move there whole: drop it (refaults) */
			unmap_leaf(k, mc.m[i].va, mc.m[i].ps, mc.m[i].pfn, 0);
			continue;
		}
		if (mc.m[i].pfn == PFN_NONE) { /* a swap entry moves as it is */
			if (pt_map_swap(&k->mm->pt, to, pte_pfn(mc.m[i].entry))) {
				unmap_leaf(k, mc.m[i].va, PS_4K, PFN_NONE, mc.m[i].entry);
				free(mc.m);
				goto oom;
			}
			continue;
		}
		if (pt_map(&k->mm->pt, to, mc.m[i].ps, mc.m[i].pfn, mc.m[i].entry & PTE_RW)) {
			unmap_leaf(k, mc.m[i].va, mc.m[i].ps, mc.m[i].pfn, 0);
			free(mc.m);
			goto oom;
		}
		if (mc.m[i].ps == PS_4K && mc.m[i].pfn != k->thp.zero_pfn &&
		    !filemap_is_cache(&k->fm, mc.m[i].pfn)) {
			/* (a page shared after a fork keeps the reverse map of its other mapper) */
			if (!kernel_page_shared(k, mc.m[i].pfn) || k->rmap_mm[mc.m[i].pfn] == k->mm)
				kernel_rmap_set(k, mc.m[i].pfn, to);
		}
		else if (mc.m[i].ps == PS_2M && thp_is_folio(k, mc.m[i].pfn) &&
			 k->rmap_mm[mc.m[i].pfn] == k->mm) /* (a shared one: its reverse map's mm) */
			k->thp.folio[mc.m[i].pfn >> HPAGE_PMD_ORDER].va = to;
		if (mc.m[i].ps == PS_2M &&
		    (mc.m[i].pfn == k->thp.huge_zero_pfn || thp_is_folio(k, mc.m[i].pfn)) &&
		    thp_deposit(k, to, thp_withdraw(k, mc.m[i].va))) {
			free(mc.m);
			goto oom;
		}
	}
	free(mc.m);
	if (vma_insert_file(&k->mm->vmas, nw, nw + nlen, flags, file, pgoff) ||
	    (rec ? vmas_extend(k, nw, nw + nlen, rec) : vmas_map(k, nw, nw + nlen, flags, 0, false)))
		return ev_oom(k, ev);
	return 0;
range:
	k->failed = true;
	return err_set(&k->err, k->trace_name, ev->line, 0, "mremap beyond the address space");
oom:
	k->failed = true;
	if (k->mm->pt.host_oom)
		return err_host(&k->err, k->trace_name, ev->line, 0, "out of host memory in mremap");
	return err_set(&k->err, k->trace_name, ev->line, 0, "out of simulated memory in mremap");
}

static int do_mmap(struct kernel *k, const struct os_event *ev, vaddr_t start, vaddr_t end)
{
	unsigned long flags = prot_flags(ev->prot);

	uint32_t file = 0;
	bool populate = false;

	if (ev->flags & MAP_SHARED_)
		flags |= VM_SHARED;
	if (!(ev->flags & MAP_ANONYMOUS_) && (ev->fd >= 0 || ev->file)) {
		/* a file mapping (filemap.c): the trace's file identity, else a file of its own */
		flags |= VM_FILE;
		file = ev->file && ev->file < FILE_ID_OWN ? ev->file : filemap_new_file(k);
		/* shmem_mmap(): a file of tmpfs or a memfd (mtr version 5's f_type) */
		if (ev->fs_magic == TMPFS_MAGIC_) {
			flags |= VM_SHMEM;
			if (filemap_shmem_mmap(k, file, ev->fs_pages))
				return ev_oom(k, ev);
		}
	}
	if (ev->flags & MAP_HUGETLB_) {
		/*
		 * ksys_mmap_pgoff() -> hugetlb_file_setup(): the page size is
		 * hstate_sizelog() of the MAP_HUGE_* bits, default_hstate without
		 * them (os.hugetlbfs.default_size); a size with no hstate fails with
		 * EINVAL, so a trace that says it succeeded is inconsistent.
		 */
		unsigned log = (unsigned)(ev->flags >> MAP_HUGE_SHIFT_) & MAP_HUGE_MASK_;

		if (log != 0 && log != PMD_SHIFT && log != PUD_SHIFT) {
			k->failed = true;
			return err_set(&k->err, k->trace_name, ev->line, 0,
				       "mmap with MAP_HUGETLB of 2^%u-byte pages succeeded (x86-64 has 2 MiB and 1 GiB pages only)",
				       log);
		}
		flags |= VM_HUGETLB;
		if (log == PUD_SHIFT || (!log && k->cfg->hugetlb_default_1g))
			flags |= VM_HUGETLB_1G;
	}
	/*
	 * do_mmap(): MAP_NORESERVE gives VM_NORESERVE (the overcommit policy is the
	 * default heuristic one, not "never"); mmap_region(): accountable_mapping()
	 * charges a private writable mapping that is not hugetlb and sets
	 * VM_ACCOUNT, which vma_merge() compares like any flag (a RELRO range made
	 * read-only keeps it, and so stays apart from the read-only segment before it)
	 */
	if (ev->flags & MAP_NORESERVE_)
		flags |= VM_NORESERVE;
	if ((flags & (VM_NORESERVE | VM_SHARED | VM_WRITE | VM_HUGETLB)) == VM_WRITE)
		flags |= VM_ACCOUNT;
	if ((ev->flags & MAP_STACK_) && kernel_map_stack_nohugepage(k->cfg->kernel))
		flags |= VM_NOHUGEPAGE; /* c4608d1bf7c6, Linux 6.8 (config.h) */
	if (!ev->initial) {
		/* do_mmap(): calc_vm_flag_bits() (MAP_LOCKED) and mm->def_flags; populate
		 * a VM_LOCKED mapping, or MAP_POPULATE without MAP_NONBLOCK */
		flags |= k->mm->def_flags | (ev->flags & MAP_LOCKED_ ? VM_LOCKED : 0);
		populate = (flags & VM_LOCKED) ||
			   (ev->flags & (MAP_POPULATE_ | MAP_NONBLOCK_)) == MAP_POPULATE_;
		if (flags & VM_HUGETLB) /* mmap_region(): hugetlb VMAs are not VM_LOCKED */
			flags &= ~(VM_LOCKED | VM_LOCKONFAULT);
		k->mlocked |= (flags & VM_LOCKED) != 0;
	}
	if (start == end)
		return 0;
	if (do_unmap(k, start, end) || vma_insert_file(&k->mm->vmas, start, end, flags, file, ev->off >> PAGE_SHIFT) ||
	    vmas_map(k, start, end, flags, ev->file && ev->file < FILE_ID_OWN ? ev->file : 0,
		     (ev->flags & MAP_STACK_) || ev->initial == EV_INITIAL_STACK))
		return ev_oom(k, ev);
	/* __mmap_new_vma(): a file VMA registers with khugepaged (read-only file text;
	 * not shmem, whose THPs follow shmem_enabled, not modelled: its default is never) */
	if ((flags & (VM_FILE | VM_SHMEM)) == VM_FILE)
		khugepaged_enter_vma(k, vma_find(&k->mm->vmas, start), flags);
	return populate ? mm_populate(k, start, end) : 0;
}

/*
 * The next VMA segment of [*a, end): [*lo, *hi), and the VMA's flags; false when
 * no VMA is left in the range (gaps are skipped, as -ENOMEM's partial effect).
 */
static bool next_segment(struct kernel *k, vaddr_t *a, vaddr_t end, vaddr_t *lo, vaddr_t *hi,
			 unsigned long *flags)
{
	struct vma *v = vma_find_next(&k->mm->vmas, *a);

	if (*a >= end || !v || v->start >= end)
		return false;
	*lo = v->start > *a ? v->start : *a;
	*hi = v->end < end ? v->end : end;
	*flags = v->flags;
	*a = *hi;
	return true;
}

/*
 * change_pte_range()'s new R/W for a leaf of a VMA whose new flags are
 * m->flags: the VMA's page protection (vm_page_prot: a private writable VMA's
 * is read-only, COW; a shared file VMA's too, vma_wants_writenotify()), made
 * writable where MM_CP_TRY_CHANGE_WRITABLE and can_change_pte_writable() allow:
 * a private page only if it is exclusively anonymous (never the zero pages nor
 * a page-cache page, which a store must copy), a shared page-cache page only if
 * its PTE is dirty (dirty tracking: a clean one takes wp_page_shared() on the
 * next store) or it is shmem (no write-notify: vma_wants_writenotify() is false
 * without ->page_mkwrite and dirty accounting, so vm_page_prot is writable). A file THP's PMD is never made writable (change_huge_pmd():
 * read-only text, filemap.c).
 */
struct mprotect_ctx {
	struct kernel *k;
	unsigned long flags;
};

static bool mprotect_writable(void *ctx, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	const struct mprotect_ctx *m = ctx;
	struct kernel *k = m->k;

	if (!(m->flags & VM_WRITE) || pfn == k->thp.zero_pfn || pfn == k->thp.huge_zero_pfn)
		return false;
	if (ps == PS_4K && filemap_is_cache(&k->fm, pfn)) /* shared shmem: no write-notify */
		return (m->flags & VM_SHARED) && ((m->flags & VM_SHMEM) || (entry & PTE_D));
	if (ps == PS_2M && filemap_is_thp(k, pfn))
		return false;
	/* a private page another mm maps too after a fork is not PageAnonExclusive:
	 * it stays read-only, a store copies it (fork.c) */
	if (unlikely(k->nr_shared_ptes || k->thp.nr_shared_pmds) && !(m->flags & VM_SHARED) &&
	    (thp_is_folio(k, pfn) ? thp_folio_shared(k, pfn & ~(pfn_t)(HPAGE_PMD_NR - 1)) ||
					    (ps == PS_4K && (k->thp.folio[pfn >> HPAGE_PMD_ORDER].flags & FOLIO_PMD_MAPPED))
				  : ps == PS_4K && kernel_page_shared(k, pfn)))
		return false;
	return true;
}

/*
 * do_mprotect_pkey(): mprotect_fixup() per VMA under one mmu_gather. A VMA whose
 * flags stay the same is skipped (newflags == oldflags); else its edges split
 * (vma_adjust_trans_huge()), change_protection() changes the leaves, and the
 * gather's span is flushed once at the end. What the gather holds follows x86
 * pte_needs_flush() (arch/x86/include/asm/tlbflush.h; change_pte_range() asks
 * it per PTE): a PTE whose entry does not change is not gathered (a clean
 * page-cache PTE that stays read-only); one whose R/W changes is; from an
 * accessible protection to PROT_NONE, or with VM_EXEC changed (NX flips), every
 * present one is (Present cleared, NX changed: _PAGE_NX is in flush_on_change);
 * from PROT_NONE none is (a PROT_NONE PTE is not present on x86,
 * _PAGE_PROTNONE: no TLB can hold it). Simplification: the model keeps a
 * PROT_NONE page's leaf present, read-only (a program that ran to completion
 * never touched it); only the flushes and the VMA say PROT_NONE.
 */
static int do_mprotect(struct kernel *k, const struct os_event *ev, vaddr_t start, vaddr_t end)
{
	const unsigned long rwx = VM_READ | VM_WRITE | VM_EXEC;
	unsigned long set = prot_flags(ev->prot), flags;
	struct pt_span g = { 0, 0, 0 };
	vaddr_t a = start, lo, hi;

	while (next_segment(k, &a, end, &lo, &hi, &flags)) {
		vaddr_t wlo = lo, whi = hi;
		struct mprotect_ctx m = { k, (flags & ~rwx) | set };
		struct pt_prot_change pc = { mprotect_writable, &m, PT_FLUSH_CHANGED, &g };
		unsigned long acct = 0, unacct = 0;

		if (m.flags == flags)
			continue;
		/*
		 * mprotect_fixup(): making a private mapping writable charges it
		 * (VM_ACCOUNT) unless it is charged, writable, hugetlb, shared or
		 * VM_NORESERVE already; making it read-only keeps the charge, except
		 * for an anonymous VMA without an anon_vma ("mm/mprotect: allow
		 * unfaulted VMAs to be unaccounted on mprotect()", config.h)
		 */
		if ((set & VM_WRITE) &&
		    !(flags & (VM_ACCOUNT | VM_WRITE | VM_HUGETLB | VM_SHARED | VM_NORESERVE)))
			acct = VM_ACCOUNT;
		else if (!(set & VM_WRITE) && (flags & VM_ACCOUNT) && !(flags & (VM_FILE | VM_ANON_VMA)) &&
			 kernel_mprotect_unaccount(k->cfg->kernel))
			unacct = VM_ACCOUNT;
		m.flags = (m.flags | acct) & ~unacct;
		if (!(flags & rwx))
			pc.flush = PT_FLUSH_NONE;
		else if (!set || ((flags ^ set) & VM_EXEC))
			pc.flush = PT_FLUSH_PRESENT;
		widen_to_huge(k, &wlo, &whi);
		if (wlo != lo || whi != hi)
			zap_range(k, wlo, whi, false); /* partial huge page: see the header */
		pt_change_prot(&k->mm->pt, wlo, whi, &pc);
		/* (over the widened range, as before: a hugetlb page keeps one protection) */
		if (vma_change_flags(&k->mm->vmas, wlo, whi, set | acct, (rwx & ~set) | unacct))
			return ev_oom(k, ev);
	}
	tlb_finish(k, &g);
	return 0;
}

/*
 * madvise_update_vma() for MADV_[NO]HUGEPAGE (hugepage_madvise()), MADV_RANDOM,
 * MADV_SEQUENTIAL and MADV_NORMAL (madvise_vma_behavior()): per VMA whose
 * flags change, split at the range's edges; vma_adjust_trans_huge() splits a THP
 * or huge zero PMD that straddles a new boundary (split_huge_pmd_if_needed()).
 */
static int madvise_flags(struct kernel *k, const struct os_event *ev, vaddr_t start, vaddr_t end,
			    unsigned long set, unsigned long clear)
{
	unsigned long flags;
	vaddr_t a = start, lo, hi;

	while (next_segment(k, &a, end, &lo, &hi, &flags)) {
		if (((flags & ~clear) | set) == flags)
			continue;
		if (lo & (PMD_SIZE - 1))
			thp_split_pmd_at(k, lo);
		if (hi & (PMD_SIZE - 1))
			thp_split_pmd_at(k, hi - 1);
		if (vma_change_flags(&k->mm->vmas, lo, hi, set, clear))
			return ev_oom(k, ev);
	}
	return 0;
}

static int do_madvise(struct kernel *k, const struct os_event *ev, vaddr_t start, vaddr_t end)
{
	switch (ev->advice) {
	case MADV_POPULATE_READ_:
	case MADV_POPULATE_WRITE_:
		return madvise_populate(k, start, end, ev->advice == MADV_POPULATE_WRITE_);
	case MADV_DONTNEED_:
		/* madvise_dontneed_free(): one gather per VMA before 6.16 (config.h) */
		zap_range_gather(k, start, end, false, !kernel_madv_dontneed_one_gather(k->cfg->kernel));
		return 0;
	case MADV_HUGEPAGE_:
		/* hugepage_madvise(): khugepaged_enter_vma() with each VMA's new flags */
		for (struct vma *v = vma_find_next(&k->mm->vmas, start); v && v->start < end;
		     v = vma_find_next(&k->mm->vmas, v->end))
			khugepaged_enter_vma(k, v, (v->flags & ~VM_NOHUGEPAGE) | VM_HUGEPAGE);
		return madvise_flags(k, ev, start, end, VM_HUGEPAGE, VM_NOHUGEPAGE);
	case MADV_NOHUGEPAGE_:
		return madvise_flags(k, ev, start, end, VM_NOHUGEPAGE, VM_HUGEPAGE);
	case MADV_RANDOM_: /* VM_RAND_READ: no read-around (filemap.c) */
		return madvise_flags(k, ev, start, end, VM_RAND_READ, VM_SEQ_READ);
	case MADV_SEQUENTIAL_: /* VM_SEQ_READ: read-ahead from the fault (filemap.c) */
		return madvise_flags(k, ev, start, end, VM_SEQ_READ, VM_RAND_READ);
	case MADV_NORMAL_:
		return madvise_flags(k, ev, start, end, 0, VM_RAND_READ | VM_SEQ_READ);
	case MADV_FREE_:
		madvise_free(k, start, end);
		return 0;
	case MADV_COLD_:
	case MADV_PAGEOUT_:
		madvise_cold_or_pageout(k, start, end, ev->advice == MADV_PAGEOUT_);
		return 0;
	case MADV_COLLAPSE_:
		/* madvise_collapse(): synchronous, ignores max_ptes_* and young */
		khugepaged_madvise_collapse(k, start, end);
		return k->failed ? -1 : 0;
	default:
		return 0; /* advice that changes no mapping in this model */
	}
}

static int do_brk(struct kernel *k, const struct os_event *ev)
{
	vaddr_t nb = ev->addr;

	if (nb >= k->va_limit) {
		k->failed = true;
		return err_set(&k->err, k->trace_name, ev->line, 0, "brk beyond the address space");
	}
	if (!k->mm->brk_start) {
		k->mm->brk_start = k->mm->brk = nb;
		return 0;
	}
	if (nb < k->mm->brk_start)
		return 0; /* brk below the start fails in the kernel; nothing changes */
	if (page_align(nb) > page_align(k->mm->brk)) {
		zap_range(k, page_align(k->mm->brk), page_align(nb), true);
		vma_remove(&k->mm->vmas, page_align(k->mm->brk), page_align(nb));
		vmas_unmap(k, page_align(k->mm->brk), page_align(nb));
		/* do_brk_flags(): mm->def_flags too; brk() populates a locked heap */
		k->mlocked |= (k->mm->def_flags & VM_LOCKED) != 0;
		if (vma_insert(&k->mm->vmas, page_align(k->mm->brk), page_align(nb),
			       VM_READ | VM_WRITE | VM_ACCOUNT | VM_BRK | k->mm->def_flags) ||
		    vmas_extend(k, page_align(k->mm->brk), page_align(nb),
				vmas_heap(k, page_align(k->mm->brk), page_align(nb))))
			return ev_oom(k, ev);
		if ((k->mm->def_flags & VM_LOCKED) && mm_populate(k, page_align(k->mm->brk), page_align(nb)))
			return -1;
	} else if (page_align(nb) < page_align(k->mm->brk)) {
		do_unmap(k, page_align(nb), page_align(k->mm->brk));
	}
	k->mm->brk = nb;
	return 0;
}

/*
 * __get_user_pages() over [start, end) of one VMA: follow_page_mask(), else
 * faultin_page() (sim_touch(): the fault path, counted), stepping over a huge
 * leaf whole. 0, or -1 with k->err set (out of simulated or host memory).
 */
static int gup_range(struct kernel *k, vaddr_t start, vaddr_t end, bool write)
{
	for (vaddr_t a = start; a < end;) {
		enum page_size ps;
		pfn_t pfn;

		if (sim_touch(k, a, write ? TOUCH_WRITE : TOUCH_READ))
			return -1;
		if (pt_lookup(&k->mm->pt, a, &ps, &pfn, NULL) && ps != PS_4K) {
			vaddr_t sz = ps == PS_2M ? PMD_SIZE : PUD_SIZE;

			a = (a & ~(sz - 1)) + sz;
		} else {
			a += PAGE_SIZE;
		}
	}
	return 0;
}

/*
 * __mm_populate(): populate_vma_page_range() for each VMA in [start, end):
 * none for VM_LOCKONFAULT or an inaccessible VMA (-EFAULT, which mmap's and
 * mlockall's populate ignore); FOLL_WRITE where the VMA is private and
 * writable, a read (FOLL_FORCE) elsewhere. 0 or -1.
 */
static int mm_populate(struct kernel *k, vaddr_t start, vaddr_t end)
{
	unsigned long flags;
	vaddr_t a = start, lo, hi;

	while (next_segment(k, &a, end, &lo, &hi, &flags)) {
		if ((flags & VM_LOCKONFAULT) || !(flags & (VM_READ | VM_WRITE | VM_EXEC)))
			continue;
		if (gup_range(k, lo, hi, (flags & (VM_WRITE | VM_SHARED)) == VM_WRITE))
			return -1;
	}
	return 0;
}

/*
 * madvise_populate() -> faultin_page_range(): FOLL_WRITE for
 * MADV_POPULATE_WRITE. The call succeeded (it is in the trace), so every VMA
 * of the range allowed it (check_vma_flags()); gaps are skipped.
 */
static int madvise_populate(struct kernel *k, vaddr_t start, vaddr_t end, bool write)
{
	unsigned long flags;
	vaddr_t a = start, lo, hi;

	while (next_segment(k, &a, end, &lo, &hi, &flags))
		if (gup_range(k, lo, hi, write))
			return -1;
	return 0;
}

/*
 * mlock_fixup() over [start, end): each VMA whose lock bits change to @set is
 * split at the range's edges (vma_modify_flags(); vma_adjust_trans_huge()
 * splits a THP or huge zero PMD across a new edge); hugetlb VMAs are left as
 * they are (is_vm_hugetlb_page()). 0 or -1.
 */
static int mlock_fixup(struct kernel *k, const struct os_event *ev, vaddr_t start, vaddr_t end,
		       unsigned long set)
{
	const unsigned long mask = VM_LOCKED | VM_LOCKONFAULT;
	unsigned long flags;
	vaddr_t a = start, lo, hi;

	while (next_segment(k, &a, end, &lo, &hi, &flags)) {
		if (((flags & ~mask) | set) == flags || (flags & VM_HUGETLB))
			continue;
		if (lo & (PMD_SIZE - 1))
			thp_split_pmd_at(k, lo);
		if (hi & (PMD_SIZE - 1))
			thp_split_pmd_at(k, hi - 1);
		if (vma_change_flags(&k->mm->vmas, lo, hi, set, mask & ~set))
			return ev_oom(k, ev);
		k->mlocked |= set != 0;
	}
	return 0;
}

/* do_mlock() (mlock(), mlock2()): lock, then populate unless MLOCK_ONFAULT. */
static int do_mlock(struct kernel *k, const struct os_event *ev, vaddr_t start, vaddr_t end)
{
	bool onfault = ev->flags & MLOCK_ONFAULT_;

	if (mlock_fixup(k, ev, start, end, VM_LOCKED | (onfault ? VM_LOCKONFAULT : 0)))
		return -1;
	return onfault ? 0 : mm_populate(k, start, end);
}

/*
 * mlockall() / munlockall() (apply_mlockall_flags()): mm->def_flags locked for
 * MCL_FUTURE (| VM_LOCKONFAULT with MCL_ONFAULT), cleared otherwise; then, unless
 * the call was MCL_FUTURE alone, mlock_fixup() of every VMA to locked
 * (MCL_CURRENT) or unlocked (munlockall()); after MCL_CURRENT, mlockall()'s
 * mm_populate(0, TASK_SIZE), which skips VM_LOCKONFAULT VMAs. 0 or -1.
 */
static int do_mlockall(struct kernel *k, const struct os_event *ev)
{
	unsigned long set = 0;
	uint64_t fl = ev->kind == EV_MLOCKALL ? ev->flags : 0;

	k->mm->def_flags &= ~(VM_LOCKED | VM_LOCKONFAULT);
	if (fl & MCL_FUTURE_) {
		k->mm->def_flags |= VM_LOCKED | (fl & MCL_ONFAULT_ ? VM_LOCKONFAULT : 0);
		if (!(fl & MCL_CURRENT_))
			return 0; /* the VMAs keep their flags */
	}
	if (fl & MCL_CURRENT_)
		set = VM_LOCKED | (fl & MCL_ONFAULT_ ? VM_LOCKONFAULT : 0);
	if (mlock_fixup(k, ev, 0, k->va_limit, set))
		return -1;
	return (fl & MCL_CURRENT_) ? mm_populate(k, 0, k->va_limit) : 0;
}

int kernel_event(struct kernel *k, const struct os_event *ev)
{
	vaddr_t start = 0, end = 0; /* set by ev_range() for the kinds that use them */

	if (ev->kind != EV_BRK && ev->kind != EV_MREMAP && ev->kind != EV_MLOCKALL &&
	    ev->kind != EV_MUNLOCKALL && ev_range(k, ev, &start, &end))
		return -1;
	switch (ev->kind) {
	case EV_MMAP:
		return do_mmap(k, ev, start, end);
	case EV_MUNMAP:
		return do_unmap(k, start, end) ? -1 : 0;
	case EV_MPROTECT:
		return do_mprotect(k, ev, start, end);
	case EV_MADVISE:
		return do_madvise(k, ev, start, end);
	case EV_BRK:
		return do_brk(k, ev);
	case EV_MREMAP: {
		/* a VM_LOCKED mapping that grows: mm_populate() of the new part */
		struct vma *v = vma_find(&k->mm->vmas, ev->addr);
		bool locked = v && (v->flags & VM_LOCKED) && ev->new_len > ev->len;

		if (do_mremap(k, ev))
			return -1;
		return locked ? mm_populate(k, ev->new_addr + page_align(ev->len),
					    ev->new_addr + page_align(ev->new_len)) : 0;
	}
	case EV_MLOCK:
		return do_mlock(k, ev, start, end);
	case EV_MUNLOCK:
		return mlock_fixup(k, ev, start, end, 0);
	case EV_MLOCKALL:
	case EV_MUNLOCKALL:
		return do_mlockall(k, ev);
	default:
		return 0;
	}
}

struct exit_ctx {
	struct kernel *k;
	struct vma_cursor vc;
};

static void exit_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct exit_ctx *x = ctx;

	if (vma_crossed(x->k, &x->vc, va))
		thp_rmap_run_end(x->k); /* unmap_vmas(): VMA by VMA */
	unmap_leaf(x->k, va, ps, pfn, entry);
}

void sim_exit_mmap(struct kernel *k)
{
	struct exit_ctx x = { k, { 0, 0 } };

	thp_rmap_batching(k, kernel_batched_zap(k->cfg->kernel)); /* unmap_vmas() */
	pt_unmap_range(&k->mm->pt, 0, k->va_limit, true, exit_leaf, &x);
	thp_rmap_batching(k, false);
}
