/*
 * fault.c - the kernel's page-fault handler, after Linux 6.x mm/memory.c
 * (handle_mm_fault(), do_anonymous_page(), do_wp_page() / wp_page_copy(),
 * do_swap_page() through reclaim.c) and mm/hugetlb.c hugetlb_fault(). The MMU
 * (mmu.c) vectors here through its fault hook when a walk finds no present
 * entry, or a store meets a read-only translation.
 *
 *  - A fault finds the VMA (or makes an implicit one, see below); a swap entry
 *    is read back (a major fault); in thp mode thp_fault() may map a huge or
 *    huge zero PMD; in hugetlbfs mode (or in a MAP_HUGETLB VMA) an aligned
 *    range of the VMA's huge page size (MAP_HUGE_2MB / MAP_HUGE_1GB, else
 *    os.hugetlbfs.default_size, default_hstate) wholly inside the VMA whose
 *    slot is empty gets a pool page of that size; a read fault in private anonymous memory maps the shared 4 KiB zero
 *    page read-only (do_anonymous_page(); not with os.zero_page false, which is
 *    mm_forbids_zeropage(), nor in implicit VMAs, see zero_page_ok()); everything
 *    else gets a zeroed folio from the buddy allocator, an mTHP of the highest
 *    enabled order that fits (thp_mthp_fault(), os.thp.sizes, Linux 6.8+) or a
 *    4 KiB page, and gives the VMA its
 *    anon_vma (VM_ANON_VMA, which khugepaged and MADV_COLLAPSE require).
 *    Cost: os.cost.fault + os.cost.clear_page per 4 KiB zeroed (none for a zero
 *    page). kswapd is woken first when free pages are below the low watermark.
 *    A zero PTE is no resident page of the process (nr_anon_pages, RSS); the
 *    first store to it is a second minor fault that allocates (below).
 *  - Implicit mappings (os.implicit): an address outside every VMA belongs to an
 *    anonymous read-write VMA spanning the os.implicit.granule-aligned block
 *    around it, clipped to the gap between its neighbours; with enabled: false
 *    it is a trace error. This is how traces without mapping events (and the
 *    program image and stack, which lackey never reports) get memory.
 *  - A store to a read-only translation (the zero pages) takes sim_wp_fault():
 *    the huge zero PMD becomes a fresh THP (Linux 6.13+, do_huge_zero_wp_pmd();
 *    os.kernel) or, before 6.13 or when that allocation fails, is split; a 4K
 *    zero PTE gets a fresh page (COW: do_wp_page() -> wp_page_copy(), which
 *    clears it) and the old PTE is flushed (ptep_clear_flush()); a read-only
 *    PTE of a page the process owns (a shared file page: wp_page_shared();
 *    its own anonymous page) is made writable in place (wp_page_reuse()): x86
 *    ptep_set_access_flags() does not flush, the fault itself dropped the
 *    stale translation (SDM Vol. 3A §4.10.4.1; mmu_fault_invalidate()).
 *    A lackey M (a read-modify-write instruction) takes one write fault, not a
 *    read fault then a write-protect fault: replay.c looks its store up first.
 *
 *  - File mappings (VM_FILE, private or shared) fault through filemap.c: the page
 *    cache, fault-around, copy-on-write into anonymous pages; no anonymous THP,
 *    no zero page, no hugetlbfs page in them. An implicit region first touched
 *    by an instruction fetch is program text: a private file mapping of its own.
 *
 * Leaves out: permission enforcement (PTE R/W follows the VMA, but a traced
 * program that ran to completion made no illegal access), userfaultfd, NUMA.
 */
#include "fault.h"
#include "filemap.h"
#include "lru.h"
#include "mmap.h"
#include "tlbflush.h"
#include "reclaim.h"
#include "kernel.h"
#include "thp.h"

static struct vma *implicit_vma(struct kernel *k, vaddr_t va)
{
	uint64_t g = k->cfg->implicit.granule;
	vaddr_t lo, hi, start = va & ~(g - 1), end = start + g;

	vma_gap(&k->mm->vmas, va, k->va_limit, &lo, &hi);
	if (start < lo)
		start = lo;
	if (end > hi || end < start)
		end = hi;
	if (k->cpu->fault_ifetch) {
		/* first touched by an instruction fetch: program text, a private
		 * file mapping of its own (filemap.c), writable for the data that may
		 * share its granule (a store copies the page, as .data's would) */
		if (vma_insert_file(&k->mm->vmas, start, end, VM_READ | VM_WRITE | VM_EXEC | VM_FILE | VM_IMPLICIT,
				    filemap_new_file(k), start >> PAGE_SHIFT) ||
		    vmas_map(k, start, end, VM_READ | VM_WRITE | VM_EXEC | VM_FILE | VM_IMPLICIT, 0, false))
			return NULL;
	} else if (vma_insert(&k->mm->vmas, start, end, VM_READ | VM_WRITE | VM_IMPLICIT) ||
		   vmas_map(k, start, end, VM_READ | VM_WRITE | VM_IMPLICIT, 0, false)) {
		return NULL;
	}
	return vma_find(&k->mm->vmas, va);
}

static bool hugetlb_backed(const struct kernel *k, const struct vma *v)
{
	return (v->flags & VM_HUGETLB) ||
	       (k->cfg->mode == MODE_HUGETLBFS && !(v->flags & (VM_SHARED | VM_FILE)));
}

/*
 * May a read fault in @v map the 4K zero page? do_anonymous_page() runs for
 * private anonymous VMAs (a shared one is shmem, a file mapping reads its page
 * cache, hugetlb has its own fault), and uses the zero page unless
 * mm_forbids_zeropage() (os.zero_page false). Implicit VMAs stand for what the
 * trace did not report, mostly the program's file-backed image: their pages are
 * their own, as page-cache pages would be.
 */
static bool zero_page_ok(const struct kernel *k, const struct vma *v)
{
	return k->cfg->zero_page && !(v->flags & (VM_SHARED | VM_FILE | VM_HUGETLB | VM_IMPLICIT));
}

/*
 * A read fault in shared anonymous memory (shmem): do_read_fault() calls
 * do_fault_around() first (should_fault_around(): fault_around_bytes above a
 * page), whose shmem_vm_ops->map_pages, filemap_map_pages(), maps every page of
 * the object's cache in the window (os.fault_around_bytes, aligned down, inside
 * the VMA and the page table) whose PTE is empty; a hole stays for its own
 * fault. Shared writable memory has no dirty tracking (vma_wants_writenotify()),
 * so the PTEs are writable as vm_page_prot is. The object's pages are the ones
 * its other processes map (kernel_shared_anon_find()). 1: the faulting page got
 * mapped (the fault is done), 0: it did not, -1: out of memory for a table.
 */
static int shared_anon_fault_around(struct kernel *k, const struct vma *v, vaddr_t va)
{
	uint64_t nr = k->cfg->fault_around_bytes >> PAGE_SHIFT;
	vaddr_t lo, hi, page = va & ~(PAGE_SIZE - 1);
	int done = 0;

	if (nr <= 1)
		return 0;
	filemap_fault_around_window(v, va, nr, &lo, &hi);
	for (vaddr_t p = lo; p < hi; p += PAGE_SIZE) {
		pfn_t pfn;

		if (!pt_slot_empty(&k->mm->pt, p, PS_4K))
			continue;
		pfn = kernel_shared_anon_find(k, v, p);
		if (pfn == PFN_NONE)
			continue;
		if (pt_map(&k->mm->pt, p, PS_4K, pfn, v->flags & VM_WRITE))
			return -1;
		k->mapcount[pfn]++;
		k->nr_shared_ptes++;
		done |= p == page;
	}
	return done;
}

int kernel_oom(struct kernel *k, vaddr_t va)
{
	if (k->mm->pt.host_oom) {
		k->err.host = true; /* (kernel_fail() keeps it) */
		return kernel_fail(k, "out of host memory mapping 0x%llx", (unsigned long long)va);
	}
	return kernel_fail(k, "simulated memory (os.memory = %llu MiB) is exhausted at 0x%llx; raise os.memory",
			(unsigned long long)(k->cfg->memory >> 20), (unsigned long long)va);
}

int sim_fault(struct kernel *k, vaddr_t va, bool write)
{
	struct vma *v;
	pfn_t pfn;

	if (va >= k->va_limit)
		return kernel_fail(k, "address 0x%llx needs more than %u-level paging (walk.levels)",
			    (unsigned long long)va, k->cfg->levels);
	if (unlikely(k->mm->exited))
		return kernel_fail(k, "a reference of process %llu after its exit",
				   (unsigned long long)k->mm->id);
	v = vma_find(&k->mm->vmas, va);
	if (!v) {
		if (!k->cfg->implicit.enabled)
			return kernel_fail(k, "address 0x%llx is outside every mapping (os.implicit.enabled is false)",
				    (unsigned long long)va);
		v = implicit_vma(k, va);
		if (!v) {
			k->err.host = true; /* (kernel_fail() keeps it) */
			return kernel_fail(k, "out of host memory");
		}
	}
	k->st->pgfault++;
	vmas_count(k, va, VE_PGFAULT);
	k->st->cyc_fault += k->cfg->cost.fault;
	if (unlikely(k->buddy.nr_free_pages < k->wmark_low))
		reclaim_kswapd(k); /* the allocation below wakes kswapd */
	{
		uint64_t slot;

		if (unlikely(k->mm->pt.nr_swap) && pt_get_swap(&k->mm->pt, va, &slot)) {
			if (reclaim_swap_in(k, v, va, slot, false))
				goto oom;
			return 0;
		}
	}
	if ((v->flags & VM_FILE) && !(v->flags & VM_HUGETLB)) {
		/* do_read_fault(), do_cow_fault(), do_shared_fault() (filemap.c) */
		if (filemap_fault(k, v, va, write))
			goto oom;
		return 0;
	}
	if (k->cfg->mode == MODE_THP && !(v->flags & VM_HUGETLB)) {
		int r = thp_fault(k, v, va, write);

		if (r)
			return r < 0 ? -1 : 0;
	}
	if (hugetlb_backed(k, v)) {
		vaddr_t h = va & ~(PMD_SIZE - 1), g = va & ~(PUD_SIZE - 1);
		/* the VMA's hstate: MAP_HUGETLB's size; os.mode hugetlbfs the default */
		bool gig = v->flags & VM_HUGETLB ? v->flags & VM_HUGETLB_1G : k->cfg->hugetlb_default_1g;

		if (gig && k->hugetlb.in_use_1g < k->hugetlb.nr_1g && g >= v->start &&
		    g + PUD_SIZE <= v->end && pt_slot_empty(&k->mm->pt, g, PS_1G)) {
			pfn = hugetlb_alloc_1g(&k->hugetlb);
			if (pt_map(&k->mm->pt, g, PS_1G, pfn, v->flags & VM_WRITE)) {
				hugetlb_free_1g(&k->hugetlb, pfn);
				goto oom;
			}
			k->st->nr_hugetlb_pages_1g++;
			kernel_rss_changed(k);
			k->st->cyc_fault += (PUD_SIZE >> PAGE_SHIFT) * k->cfg->cost.clear_page;
			return 0;
		}

		if (!gig && h >= v->start && h + PMD_SIZE <= v->end && pt_slot_empty(&k->mm->pt, h, PS_2M)) {
			pfn = hugetlb_alloc(&k->hugetlb, &k->buddy);
			if (pfn != PFN_NONE) {
				if (pt_map(&k->mm->pt, h, PS_2M, pfn, v->flags & VM_WRITE)) {
					hugetlb_free(&k->hugetlb, &k->buddy, pfn);
					goto oom;
				}
				k->st->nr_hugetlb_pages++;
				kernel_rss_changed(k);
				k->st->cyc_fault += HPAGE_PMD_NR * k->cfg->cost.clear_page;
				return 0;
			}
		}
		/*
		 * Not modelled: hugetlb_reserve_pages() at mmap time. Linux reserves
		 * a MAP_HUGETLB mapping's pages when it is made and refuses the mmap
		 * (ENOMEM) if the pool cannot hold them (with MAP_NORESERVE, the
		 * fault that finds none gets SIGBUS): it never maps 4 KiB pages in
		 * a hugetlb VMA. The model takes pool pages at fault time and falls
		 * back to 4 KiB pages below; counted, and warned of at the end.
		 */
		if (v->flags & VM_HUGETLB)
			k->st->hugetlb_fallback++;
	}
	if (!write && zero_page_ok(k, v)) {
		/* do_anonymous_page(): a read maps the shared zero page read-only; no
		 * page of the process's own, no anon_vma, nothing to clear */
		if (pt_map(&k->mm->pt, va & ~(PAGE_SIZE - 1), PS_4K, k->thp.zero_pfn, false))
			goto oom;
		k->thp.nr_zero_ptes++;
		return 0;
	}
	if (unlikely((v->flags & VM_SHARED) && v->file)) {
		/* shared anonymous memory after a fork: shmem_fault() finds the page
		 * another process of the object maps (fork.c); no clearing. A read
		 * fault maps the window's other pages of the object first. */
		int r = write ? 0 : shared_anon_fault_around(k, v, va);

		if (r < 0)
			goto oom;
		if (r > 0)
			return 0;
		pfn = kernel_shared_anon_find(k, v, va);
		if (pfn != PFN_NONE) {
			if (pt_map(&k->mm->pt, va & ~(PAGE_SIZE - 1), PS_4K, pfn, v->flags & VM_WRITE))
				goto oom;
			k->mapcount[pfn]++;
			k->nr_shared_ptes++;
			return 0;
		}
	}
	if (k->cfg->mode == MODE_THP) {
		/* do_anonymous_page() -> alloc_anon_folio(): an mTHP if an order fits */
		int r = thp_mthp_fault(k, v, va);

		if (r)
			return r < 0 ? -1 : 0;
	}
	v->flags |= VM_ANON_VMA; /* vmf_anon_prepare() */
	pfn = buddy_alloc(&k->buddy, 0);
	if (pfn == PFN_NONE)
		goto oom;
	if (pt_map(&k->mm->pt, va & ~(PAGE_SIZE - 1), PS_4K, pfn, v->flags & VM_WRITE)) {
		buddy_free(&k->buddy, pfn, 0);
		goto oom;
	}
	kernel_rmap_set(k, pfn, va & ~(PAGE_SIZE - 1));
	lru_add(&k->lru, pfn, 1);
	k->st->nr_anon_pages++;
	kernel_rss_changed(k);
	k->st->cyc_fault += k->cfg->cost.clear_page;
	return 0;
oom:
	return kernel_oom(k, va);
}

/*
 * Must a store to the read-only PTE of anonymous page @pfn copy it? Yes if
 * another mm maps it (after a fork); for a page of a THP or an mTHP, also if it
 * is mapped by another mm's PMD or the folio's other pages are (6.15+
 * __wp_can_reuse_large_anon_folio(): only a folio this mm alone maps is reused;
 * before, an mTHP's page is always copied).
 */
static bool cow_needed(const struct kernel *k, pfn_t pfn)
{
	/* a page of an mTHP: reused only when this mm alone maps the folio (6.15+),
	 * never before (wp_can_reuse_anon_folio(): folio_test_large()) */
	if (unlikely(k->thp.mthp[pfn]))
		return !kernel_cow_reuse_large(k->cfg->kernel) || thp_mthp_shared(k, pfn);
	if (likely(!k->nr_shared_ptes && !k->thp.nr_shared_pmds))
		return false;
	if (!thp_is_folio(k, pfn))
		return kernel_page_shared(k, pfn);
	return (k->thp.folio[pfn >> HPAGE_PMD_ORDER].flags & FOLIO_PMD_MAPPED) ||
	       thp_folio_shared(k, pfn & ~(pfn_t)(HPAGE_PMD_NR - 1)) || k->rmap_mm[pfn] != k->mm;
}

int sim_wp_fault(struct kernel *k, vaddr_t va)
{
	enum page_size ps;
	pfn_t pfn, np;
	struct vma *v = vma_find(&k->mm->vmas, va);
	vaddr_t p = va & ~(PAGE_SIZE - 1);

	k->st->pgfault++;
	vmas_count(k, va, VE_PGFAULT);
	k->st->cyc_fault += k->cfg->cost.fault;
	if (!v || !pt_lookup(&k->mm->pt, va, &ps, &pfn, NULL))
		return kernel_fail(k, "write fault at 0x%llx without a mapping", (unsigned long long)va);
	if (ps == PS_2M && pfn == k->thp.huge_zero_pfn) {
		/* do_huge_pmd_wp_page(): from 6.13 a fresh THP (do_huge_zero_wp_pmd());
		 * before, or when that allocation fails, split the zero PMD and take
		 * the 4K COW below */
		if (kernel_huge_zero_wp_thp(k->cfg->kernel)) {
			int r = thp_huge_zero_wp(k, v, va);

			if (r)
				return r < 0 ? -1 : 0;
		}
		thp_split_pmd_at(k, va);
		pt_lookup(&k->mm->pt, va, &ps, &pfn, NULL);
	}
	if (ps == PS_2M && thp_is_folio(k, pfn) && thp_folio_shared(k, pfn)) {
		/* do_huge_pmd_wp_page() of a THP another mm maps too (fork.c): not
		 * exclusive, so __split_huge_pmd() and VM_FAULT_FALLBACK: the PTE
		 * level copies 4 KiB (Linux 5.8+, commit 3917c80280c9) */
		thp_split_pmd_at(k, va);
		pt_lookup(&k->mm->pt, va, &ps, &pfn, NULL);
	}
	if (ps == PS_2M && filemap_is_thp(k, pfn)) {
		/* wp_huge_pmd() of a file THP: __split_huge_pmd() clears the PMD and the
		 * fault falls back to the PTE level (VM_FAULT_FALLBACK): do_cow_fault()
		 * in a private mapping, do_shared_fault() in a shared one (filemap.c) */
		thp_split_pmd_at(k, va);
		if (unlikely(k->buddy.nr_free_pages < k->wmark_low))
			reclaim_kswapd(k);
		return filemap_fault(k, v, va, true) ? kernel_oom(k, va) : 0;
	}
	if (ps == PS_4K && filemap_is_cache(&k->fm, pfn)) {
		/* wp_page_copy() in a private mapping, wp_page_shared() in a shared one */
		if (unlikely(k->buddy.nr_free_pages < k->wmark_low))
			reclaim_kswapd(k);
		if (filemap_wp_fault(k, v, va, pfn))
			return kernel_oom(k, va);
		if (v->flags & VM_SHARED)
			goto reuse; /* wp_page_shared() -> wp_page_reuse() */
	} else if (ps == PS_4K && pfn == k->thp.zero_pfn) {
		/* wp_page_copy() from the zero page: a fresh zeroed page (the zero
		 * PTE itself is not reclaimable, so kswapd cannot take it away) */
		if (unlikely(k->buddy.nr_free_pages < k->wmark_low))
			reclaim_kswapd(k);
		v->flags |= VM_ANON_VMA; /* vmf_anon_prepare() */
		np = buddy_alloc(&k->buddy, 0);
		if (np == PFN_NONE)
			return kernel_oom(k, va);
		pt_set_pte(&k->mm->pt, p, np, v->flags & VM_WRITE);
		kernel_rmap_set(k, np, p);
		lru_add(&k->lru, np, 1);
		k->thp.nr_zero_ptes--;
		k->st->nr_anon_pages++;
		kernel_rss_changed(k);
		k->st->cyc_fault += k->cfg->cost.clear_page;
	} else if (ps == PS_4K && !(v->flags & VM_SHARED) && cow_needed(k, pfn)) {
		/* wp_page_copy() of a page another mm maps too (after a fork, fork.c):
		 * a new page with the old one's contents; the old one stays theirs */
		if (unlikely(k->buddy.nr_free_pages < k->wmark_low))
			reclaim_kswapd(k);
		np = buddy_alloc(&k->buddy, 0);
		if (np == PFN_NONE)
			return kernel_oom(k, va);
		thp_unmap_leaf(k, p, PS_4K, pfn); /* folio_remove_rmap_pte() of the old page */
		pt_set_pte(&k->mm->pt, p, np, v->flags & VM_WRITE);
		kernel_rmap_set(k, np, p);
		lru_add(&k->lru, np, 1);
		k->st->nr_anon_pages++;
		kernel_rss_changed(k);
		k->st->cyc_fault += k->cfg->cost.copy_page;
	} else {
		/* a read-only leaf of a page the process owns alone: made writable in
		 * place (wp_page_reuse(); after a fork, wp_can_reuse_anon_folio(): no
		 * other mm maps it any more, its refcount is 1; a huge leaf: do_huge_pmd_wp_page() ->
		 * pmdp_set_access_flags(), hugetlb_wp() -> set_huge_ptep_writable()) */
		pt_protect_range(&k->mm->pt, ps == PS_4K ? p : va & ~(PMD_SIZE - 1),
				 ps == PS_4K ? p + PAGE_SIZE : (va & ~(PMD_SIZE - 1)) + PMD_SIZE, true,
				 PFN_NONE, PFN_NONE);
		goto reuse;
	}
	flush_tlb_page(k, p); /* wp_page_copy(): ptep_clear_flush() */
	return 0;
reuse:
	/*
	 * x86 ptep_set_access_flags() (and its PMD/hugetlb twins) sets the more
	 * permissive entry without a flush: the #PF itself dropped the stale
	 * read-only translation (mmu_fault_invalidate()), so no INVLPG is issued
	 * and tlb_invalidations does not move.
	 */
	mmu_fault_invalidate(k->cpu, va);
	return 0;
}

int sim_touch(struct kernel *k, vaddr_t va, enum touch_how how)
{
	enum page_size ps;
	pfn_t pfn;
	uint64_t entry;
	bool write = how == TOUCH_WRITE, ifetch = k->cpu->fault_ifetch;
	int r;

	if (va < k->va_limit && pt_lookup(&k->mm->pt, va, &ps, &pfn, &entry)) {
		if (!write || (entry & PTE_RW))
			return 0; /* present, and writable if written: no fault */
		return k->hv ? k->hv->fault(k->hv_ctx, va, true, true) : sim_wp_fault(k, va);
	}
	k->cpu->fault_ifetch = how == TOUCH_FETCH; /* an implicit region first fetched is text */
	r = k->hv ? k->hv->fault(k->hv_ctx, va, write, false) : sim_fault(k, va, write);
	k->cpu->fault_ifetch = ifetch;
	return r;
}

int sim_fault_hook(void *os, vaddr_t va, bool write, bool wp)
{
	struct kernel *k = os;

	return wp ? sim_wp_fault(k, va) : sim_fault(k, va, write);
}
