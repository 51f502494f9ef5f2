/*
 * khugepaged.c - background collapse of PTE-mapped 2M ranges into THPs, and
 * MADV_COLLAPSE's synchronous one, after Linux mm/khugepaged.c at 00f58104202c
 * (about v6.11; reference §4, [KH]): khugepaged_do_scan(), khugepaged_scan_mm_slot(),
 * hpage_collapse_scan_pmd(), collapse_huge_page(), madvise_collapse(), and
 * __thp_vma_allowable_orders() outside a fault.
 *
 * Model: every process's mm, each registered once (khugepaged_enter_vma() ->
 * __khugepaged_enter()) at an eligible huge fault or at MADV_HUGEPAGE of a VMA
 * khugepaged could scan, or at fork if its parent was (khugepaged_fork()), and
 * put at the tail of the mm_slot list: khugepaged visits the mms in registration
 * order. The cursor (khugepaged_scan.mm_slot, .address) stays in an mm until
 * its pass budget runs out or a collapse is attempted, moves to the next slot
 * when every VMA of the mm was seen, and back to the list head after the last
 * (khugepaged_full_scans counts those). The scanned mm is the one the kernel
 * works on (kernel_use_mm()), so the collapse's flush reaches the CPU only for
 * the mm it has loaded (tlbflush.c). An exiting or exec'ing mm leaves the list
 * (khugepaged_exit()), or, if the cursor is on its slot, at the next visit
 * (collect_mm_slot(): 1 unit); a THP-disabled mm (prctl) is taken up and left
 * for 1 unit (hpage_collapse_test_exit_or_disable()). The first mm on an empty
 * list wakes an idle khugepaged at once; one that finds the list empty after a
 * pass sleeps until then (khugepaged_wait_work()).
 * Every scan_sleep_millisecs of simulated time (cycles / cpu.freq_mhz) a pass
 * spends pages_to_scan units: an mm costs 1 each time khugepaged_scan_mm_slot()
 * takes it up, a VMA it may not collapse in 1, each 2M range 512 whatever its
 * outcome. A VMA qualifies as thp_vma_allowable_order(TVA_ENFORCE_SYSFS) says:
 * THP allowed by os.thp.enabled and the VMA's flags, an aligned 2M range inside
 * it, and an anon_vma (VM_ANON_VMA: a VMA never faulted, or only read through
 * the zero page, is skipped for 1). VM_WRITE is not needed (before 6.18 a
 * range without a writable PTE ends in SCAN_PAGE_RO). An attempted collapse (its allocation included)
 * ends khugepaged_scan_mm_slot(), as the dropped mmap_lock does, and the pass
 * takes the mm up again. The pass ends when the budget is spent or when it
 * would pass the list head a second time: a pass that starts at the head scans
 * each mm at most once (one full_scans), one that starts inside the list
 * finishes it and goes round once more. The first allocation failure of a pass sleeps
 * alloc_sleep_millisecs (khugepaged_alloc_sleep()) and the same pass goes on
 * after it, with what it had spent; a second one ends the pass. After a pass,
 * scan_sleep_millisecs.
 * The collapse allocates order 9 in one slow path (page_alloc.c): GFP_TRANSHUGE
 * (direct compaction and reclaim) when khugepaged/defrag is set or for
 * MADV_COLLAPSE, else GFP_TRANSHUGE_LIGHT.
 *
 * A range collapses if its PMD points to a PTE table, none or zero-page PTEs <=
 * max_ptes_none (else thp_scan_exceed_none_pte) and one PTE is young; before
 * 6.18 one had to be writable too ("mm: enable khugepaged to operate on
 * non-writable VMAs", config.h: the PTEs a fork write-protects collapse now). The collapse allocates order 9 (direct compaction if
 * khugepaged/defrag), copies present pages and clears the rest, flushes the
 * range, installs the PMD and deposits the old table. khugepaged/pages_collapsed
 * counts khugepaged's own collapses only.
 *
 * MADV_COLLAPSE (khugepaged_madvise_collapse()): madvise_walk_vmas() over the
 * range, madvise_collapse() on each VMA: -EINVAL where thp_vma_allowable_order()
 * without TVA_ENFORCE_SYSFS refuses (VM_NOHUGEPAGE, no anon_vma, no aligned 2M
 * range; os.thp.enabled is ignored), then each 2M range without the max_ptes_*
 * and young limits, GFP_TRANSHUGE whatever khugepaged/defrag says; a result
 * outside the kernel's list of ones to go on from (SCAN_PMD_NONE among them: a
 * range without a PTE table) or an allocation failure stops it. The walk stops
 * at the first VMA that fails. Its work is the caller's: copies in cycles.fault.
 *
 * Costs: khugepaged's scanning and copying are its own CPU (cycles.khugepaged:
 * 512 x os.cost.compact_scan per range examined, os.cost.copy_page / clear_page
 * per subpage); the application pays the TLB flush (os.cost.flush).
 *
 * Read-only file text (os.thp.read_only_thp_for_fs, CONFIG_READ_ONLY_THP_FOR_FS):
 * a file VMA qualifies as file_thp_enabled() and __thp_vma_allowable_orders() say
 * (see collapsible(); no anon_vma needed) and registers at mmap
 * (__mmap_new_vma()). hpage_collapse_scan_file() reads the page cache: a THP
 * there is SCAN_PTE_MAPPED_HUGEPAGE, fewer than 512 - max_ptes_none cached pages
 * (khugepaged) thp_scan_exceed_none_pte; collapse_file() allocates as above,
 * reads the missing pages in, try_to_unmap()s the old ones from every VMA of the
 * file (one batched full flush), copies 512 pages, replaces them in the cache
 * (filemap.c) and retract_page_tables(): every VMA of the file without anon_vma
 * mapping the range 2M-aligned loses its PT table (pmdp_collapse_flush()). A file
 * range always drops mmap_lock, so it always ends khugepaged_scan_mm_slot().
 * khugepaged then runs collapse_pte_mapped_thp() without installing a PMD on a
 * range whose cache is a THP, and counts SCAN_PMD_MAPPED as a success
 * (pages_collapsed, as the kernel does on every visit); MADV_COLLAPSE gets
 * SCAN_PTE_MAPPED_HUGEPAGE from collapse_file() and installs the PMD at once.
 * Reference for this part as for the rest ([KH]); the later collapse_single_pmd()
 * rework (Nico Pache, 2025) keeps these outcomes, the pages_collapsed count of a
 * PMD-mapped range included.
 *
 * Swap entries: more than max_ptes_swap skip the range
 * (thp_scan_exceed_swap_pte); with any, khugepaged wants at least 256 young PTEs;
 * the collapse reads them back first (__collapse_huge_page_swapin(): major
 * faults, pswpin, os.cost.swap_in on khugepaged's cycles).
 *
 * Shared PTEs (after a fork, fork.c): a present page another mm maps too
 * (folio_maybe_mapped_shared()) counts against max_ptes_shared; one more than it
 * stops khugepaged's scan (SCAN_EXCEED_SHARED_PTE, thp_scan_exceed_share_pte,
 * reported when the run has several processes); MADV_COLLAPSE ignores the limit.
 * The collapse copies a shared page and leaves it to its other mappers (their
 * PTEs and mapcount stay; a page no other mm maps any more is exclusive again,
 * and the parent's next store reuses it in place); the new PMD is writable if
 * the VMA is (maybe_pmd_mkwrite()).
 *
 * Simplifications:
 * mmap_lock contention, lru_add_drain and NUMA checks do not exist here; nothing
 * can change a VMA while a collapse has mmap_lock dropped, so the revalidations
 * always pass; shared anonymous mappings (shmem) are never collapsed; the page
 * cache has no dirty, writeback, LRU or reference state, so collapse_file() never
 * fails on a page (SCAN_FAIL, SCAN_PAGE_COUNT, ...) and missing pages are read
 * whole (page_cache_sync_readahead() of exactly the missing pages: the file size
 * is unknown); whether a file is open for write is inferred from its VMAs (see
 * file_thp_enabled()); wake-ups of a sleeping
 * khugepaged (a sysfs write, a new mm on an empty list) do not cut its sleep short.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filemap.h"
#include "khugepaged.h"
#include "mmap.h"
#include "tlbflush.h"
#include "page_alloc.h"
#include "reclaim.h"
#include "kernel.h"
#include "thp.h"

static cycles_t ms_to_cycles(const struct kernel *k, unsigned ms)
{
	return (cycles_t)ms * k->cfg->freq_mhz * 1000;
}

void khugepaged_init(struct kernel *k)
{
	memset(&k->khugepaged, 0, sizeof(k->khugepaged));
	k->khugepaged.tail = &k->khugepaged.head;
	k->khugepaged.next_wake = ms_to_cycles(k, k->cfg->khugepaged.scan_sleep_millisecs);
}

void khugepaged_destroy(struct kernel *k)
{
	struct khugepaged *kh = &k->khugepaged;

	for (struct khugepaged_mm_slot *slot = kh->head, *next; slot; slot = next) {
		next = slot->next;
		if (slot->mm)
			slot->mm->khugepaged_slot = NULL;
		free(slot);
	}
	kh->head = kh->mm_slot = NULL;
	kh->tail = &kh->head;
	kh->nr_slots = 0;
}

void khugepaged_enter_mm(struct kernel *k, struct mm *mm)
{
	struct khugepaged *kh = &k->khugepaged;
	struct khugepaged_mm_slot *slot;

	if (mm->khugepaged_slot || mm->exited) /* MMF_VM_HUGEPAGE already set */
		return;
	slot = calloc(1, sizeof(*slot));
	if (!slot)
		return; /* mm_slot_alloc() failed: not registered */
	slot->mm = mm;
	mm->khugepaged_slot = slot;
	/* list_add_tail() on khugepaged_scan.mm_head: registration order */
	*kh->tail = slot;
	kh->tail = &slot->next;
	kh->nr_slots++;
	/*
	 * An idle khugepaged (the list was empty at its last pass, or it never
	 * ran) is woken at once (wake_up_interruptible()); one sleeping out
	 * scan_sleep_millisecs is not (khugepaged_should_wakeup()).
	 */
	if (!k->thp.mm_registered) {
		k->thp.mm_registered = true;
		kh->next_wake = kernel_now(k);
	}
}

void khugepaged_fork(struct kernel *k, struct mm *mm, const struct mm *oldmm)
{
	if (oldmm->khugepaged_slot)
		khugepaged_enter_mm(k, mm);
}

/* hash_del() + list_del() + mm_slot_free() of @slot */
static void slot_free(struct khugepaged *kh, struct khugepaged_mm_slot *slot)
{
	struct khugepaged_mm_slot **pp = &kh->head;

	while (*pp != slot)
		pp = &(*pp)->next;
	*pp = slot->next;
	if (kh->tail == &slot->next)
		kh->tail = pp;
	kh->nr_slots--;
	free(slot);
}

void khugepaged_exit(struct kernel *k, struct mm *mm)
{
	struct khugepaged *kh = &k->khugepaged;
	struct khugepaged_mm_slot *slot = mm->khugepaged_slot;

	if (!slot)
		return;
	mm->khugepaged_slot = NULL;
	if (kh->mm_slot == slot)
		slot->mm = NULL; /* the cursor holds it: collect_mm_slot() at the next visit */
	else
		slot_free(kh, slot);
}

void khugepaged_check_invariants(const struct kernel *k)
{
	const struct khugepaged *kh = &k->khugepaged;
	unsigned n = 0;
	bool cursor = kh->mm_slot == NULL;

	for (const struct khugepaged_mm_slot *slot = kh->head; slot; slot = slot->next) {
		n++;
		cursor |= slot == kh->mm_slot;
		BUG_ON(slot->mm ? slot->mm->khugepaged_slot != slot || slot->mm->exited : slot != kh->mm_slot);
		BUG_ON(!slot->next && kh->tail != &slot->next);
	}
	BUG_ON(!kh->head && kh->tail != &kh->head);
	BUG_ON(n != kh->nr_slots || !cursor);
	for (const struct mm *mm = k->mms; mm; mm = mm->next)
		BUG_ON(mm->khugepaged_slot && mm->khugepaged_slot->mm != mm);
}

/*
 * file_thp_enabled(): CONFIG_READ_ONLY_THP_FOR_FS (os.thp.read_only_thp_for_fs)
 * and a regular file that is not open for write. A trace does not show open(2):
 * the model takes the file as open for write when the VMA is writable (a private
 * writable mapping may come from an O_RDONLY file, the model cannot tell: it
 * refuses it) or when any VMA maps the file shared and writable (which needs an
 * fd open for write, kept open by the mapping).
 */
static bool file_thp_enabled(const struct kernel *k, const struct vma *v, unsigned long flags)
{
	if (!k->cfg->thp.read_only_thp_for_fs || !(flags & VM_FILE) || (flags & VM_WRITE))
		return false;
	for (size_t i = 0; i < k->mm->vmas.n; i++) {
		const struct vma *o = &k->mm->vmas.v[i];

		if ((o->flags & VM_FILE) && o->file == v->file && (o->flags & VM_SHARED) &&
		    (o->flags & VM_WRITE))
			return false;
	}
	return true;
}

/*
 * thp_vma_allowable_order(vma, @flags, tva_flags, PMD_ORDER) for VMA @v outside
 * a fault: @enforce_sysfs for khugepaged (TVA_ENFORCE_SYSFS), not for
 * MADV_COLLAPSE. Without TVA_IN_PF the VMA must hold an aligned 2M range
 * (thp_vma_suitable_order() at vm_end - PMD_SIZE, for a file VMA with its start
 * minus pgoff 2M aligned too); an anonymous one must have an anon_vma, a file one
 * pass file_thp_enabled() (and with TVA_ENFORCE_SYSFS, THP enabled and either
 * enabled=always or VM_HUGEPAGE: the global control, __thp_vma_allowable_orders()).
 */
static bool collapsible(const struct kernel *k, const struct vma *v, unsigned long flags,
			bool enforce_sysfs)
{
	struct vma t = { v->start, v->end, flags, v->file, v->pgoff };
	vaddr_t hend = v->end & ~(PMD_SIZE - 1);

	/* vma_thp_disabled(), VM_NO_KHUGEPAGED */
	if (k->cfg->mode != MODE_THP || (flags & (VM_NOHUGEPAGE | VM_HUGETLB)) || k->mm->thp_disable)
		return false;
	if (flags & VM_FILE) {
		if (enforce_sysfs && (k->cfg->thp.enabled == THP_NEVER ||
				      (k->cfg->thp.enabled != THP_ALWAYS && !(flags & VM_HUGEPAGE))))
			return false;
		return hend >= PMD_SIZE && filemap_thp_suitable(&t, hend - PMD_SIZE) &&
		       file_thp_enabled(k, v, flags);
	}
	if (flags & VM_SHARED)
		return false; /* shmem is not modelled */
	if (enforce_sysfs && !thp_vma_allowable(k, &t))
		return false;
	if (hend < PMD_SIZE || hend - PMD_SIZE < v->start)
		return false;
	return flags & VM_ANON_VMA; /* only a fault or smaps may do without it */
}

/*
 * smaps' THPeligible for @v (show_smap(): thp_vma_allowable_orders(vma,
 * vm_flags, TVA_SMAPS | TVA_ENFORCE_SYSFS, THP_ORDERS_ALL), mm/huge_memory.c
 * __thp_vma_allowable_orders(); Documentation/filesystems/proc.rst: 1 "if and
 * only if the VMA is eligible for allocating THP and the THP is also PMD
 * mappable"). NULL if eligible, else why not, in the kernel's order of checks
 * for the PMD order (the only THP size modelled):
 *  - not mode thp: "mode=base" / "mode=hugetlbfs" (a private anonymous VMA
 *    there takes hugetlbfs pages, fault.c);
 *  - a MAP_HUGETLB VMA: "hugetlb" (hugetlbfs pages, not THP);
 *  - private anonymous, the sysfs control first (thp_vma_allowable_orders() masks the
 *    anonymous orders before calling in): "enabled=never", "enabled=madvise"
 *    (madvise without VM_HUGEPAGE);
 *  - vma_thp_disabled(): "VM_NOHUGEPAGE";
 *  - smaps is not in a fault, so the VMA must hold an aligned 2M page
 *    (thp_vma_suitable_order() at vm_end - PMD_SIZE; a file VMA also needs
 *    vm_start - vm_pgoff 2M aligned): "no aligned 2M";
 *  - shared anonymous memory is shmem (shmem_allowable_huge_orders(), its own
 *    shmem_enabled, never by default; shmem THP is not modelled): "shmem";
 *  - a file VMA: the sysfs control ("enabled=never", "enabled=madvise"), then
 *    file_thp_enabled(): "read_only_thp_for_fs=false" or, for a writable file
 *    (see file_thp_enabled() above), "file open for write".
 * The anon_vma test does not apply to smaps ("THPeligible bit of smaps should
 * show 1 for proper VMAs even though anon_vma is not initialized yet").
 */
const char *khugepaged_thp_ineligible(const struct kernel *k, const struct vma *v)
{
	vaddr_t hend = v->end & ~(PMD_SIZE - 1);
	bool fits;

	if (k->cfg->mode != MODE_THP)
		return k->cfg->mode == MODE_HUGETLBFS ? "mode=hugetlbfs" : "mode=base";
	if (v->flags & VM_HUGETLB)
		return "hugetlb";
	if (!(v->flags & (VM_FILE | VM_SHARED))) {
		if (k->cfg->thp.enabled == THP_NEVER)
			return "enabled=never";
		if (k->cfg->thp.enabled == THP_MADVISE && !(v->flags & VM_HUGEPAGE))
			return "enabled=madvise";
	}
	if (v->flags & VM_NOHUGEPAGE)
		return "VM_NOHUGEPAGE";
	if (k->mm->thp_disable)
		return "MMF_DISABLE_THP";
	fits = hend >= PMD_SIZE && hend - PMD_SIZE >= v->start &&
	       (!(v->flags & VM_FILE) || filemap_thp_suitable(v, hend - PMD_SIZE));
	if (!fits)
		return "no aligned 2M";
	if (!(v->flags & VM_FILE))
		return v->flags & VM_SHARED ? "shmem" : NULL;
	if (k->cfg->thp.enabled == THP_NEVER)
		return "enabled=never";
	if (k->cfg->thp.enabled != THP_ALWAYS && !(v->flags & VM_HUGEPAGE))
		return "enabled=madvise";
	if (!k->cfg->thp.read_only_thp_for_fs)
		return "read_only_thp_for_fs=false";
	return file_thp_enabled(k, v, v->flags) ? NULL : "file open for write";
}

static bool vma_collapsible(const struct kernel *k, const struct vma *v, bool enforce_sysfs)
{
	return collapsible(k, v, v->flags, enforce_sysfs);
}

void khugepaged_enter_vma(struct kernel *k, const struct vma *v, unsigned long flags)
{
	if (!k->mm->khugepaged_slot && collapsible(k, v, flags, true))
		khugepaged_enter_mm(k, k->mm);
}

static void free_old(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	(void)entry;
	thp_unmap_leaf(ctx, va, ps, pfn);
}

/*
 * hpage_collapse_scan_pmd() of the 2M range at @haddr in @v, and
 * collapse_huge_page() if the range qualifies. @is_khugepaged: khugepaged's
 * limits (max_ptes_*, young), its gfp and its CPU; else MADV_COLLAPSE's.
 * *@mmap_locked becomes false when a collapse was attempted (its allocation
 * included), which the kernel does with mmap_lock dropped.
 */
static enum scan_result scan_pmd(struct kernel *k, struct vma *v, vaddr_t haddr, bool is_khugepaged,
				 bool *mmap_locked)
{
	const struct khugepaged_cfg *kk = &k->cfg->khugepaged;
	unsigned none = 0, present = 0, writable = 0, young = 0, unmapped = 0, shared = 0;
	cycles_t *cyc = is_khugepaged ? &k->st->cyc_khugepaged : &k->st->cyc_fault;
	enum page_size ps;
	pfn_t pfn, table;
	uint64_t e, wr[HPAGE_PMD_NR / 64] = { 0 };

	if (pt_lookup(&k->mm->pt, haddr, &ps, &pfn, NULL) && ps == PS_2M)
		return SCAN_PMD_MAPPED;
	if (!pt_table_at(&k->mm->pt, haddr, 1))
		return SCAN_PMD_NONE;
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		vaddr_t a = haddr + ((vaddr_t)i << PAGE_SHIFT);
		uint64_t slot;

		if (pt_get_swap(&k->mm->pt, a, &slot)) {
			if (++unmapped > kk->max_ptes_swap && is_khugepaged) {
				k->st->thp_scan_exceed_swap_pte++;
				return SCAN_EXCEED_SWAP_PTE;
			}
			continue;
		}
		/* pte_none() || is_zero_pfn() */
		if (!pt_lookup(&k->mm->pt, a, &ps, &pfn, &e) || pfn == k->thp.zero_pfn) {
			if (++none > kk->max_ptes_none && is_khugepaged) {
				k->st->thp_scan_exceed_none_pte++;
				return SCAN_EXCEED_NONE_PTE;
			}
			continue;
		}
		/* folio_maybe_mapped_shared(): another mm maps it too (after a fork) */
		if (unlikely(k->nr_shared_ptes) && ps == PS_4K &&
		    (thp_is_folio(k, pfn) ? thp_folio_shared(k, pfn & ~(pfn_t)(HPAGE_PMD_NR - 1))
					  : kernel_page_shared(k, pfn)) &&
		    ++shared > kk->max_ptes_shared && is_khugepaged) {
			k->st->thp_scan_exceed_share_pte++;
			return SCAN_EXCEED_SHARED_PTE;
		}
		present++;
		writable += !!(e & PTE_RW);
		young += !!(e & PTE_A);
	}
	/* a range without a writable PTE (a read-only VMA, or PTEs a fork
	 * write-protected) collapses from 6.18 on (config.h) */
	if (!writable && !kernel_collapse_read_only(k->cfg->kernel))
		return SCAN_PAGE_RO;
	/* a range with swap entries must be worth the reads: half its pages young */
	if (is_khugepaged && (!young || (unmapped && young < HPAGE_PMD_NR / 2)))
		return SCAN_LACK_REFERENCED_PAGE;
	/* collapse_huge_page() */
	*mmap_locked = false;
	/* alloc_charge_folio(): one __alloc_pages() (no vma policy's second try) under
	 * GFP_TRANSHUGE, or GFP_TRANSHUGE_LIGHT for khugepaged with defrag off */
	pfn = sim_alloc_pages(k, HPAGE_PMD_ORDER,
			      !is_khugepaged || kk->defrag ? GFP_TRANSHUGE : GFP_TRANSHUGE_LIGHT);
	if (pfn == PFN_NONE) {
		k->st->thp_collapse_alloc_failed++;
		return SCAN_ALLOC_HUGE_PAGE_FAIL;
	}
	k->st->thp_collapse_alloc++; /* counted at allocation, as alloc_charge_folio() */
	vmas_count(k, haddr, VE_THP_COLLAPSE_ALLOC);
	/* __collapse_huge_page_swapin(): read the swapped pages back first */
	/* (the allocation may have reclaimed pages of this very range: read those too) */
	for (unsigned i = 0; k->mm->pt.nr_swap && i < HPAGE_PMD_NR; i++) {
		vaddr_t a = haddr + ((vaddr_t)i << PAGE_SHIFT);
		uint64_t slot;

		if (pt_get_swap(&k->mm->pt, a, &slot) &&
		    reclaim_swap_in(k, v, a, slot, is_khugepaged)) {
			/* no frame to read into: give the huge page back (SCAN_FAIL) */
			buddy_free(&k->buddy, pfn, HPAGE_PMD_ORDER);
			return SCAN_FAIL;
		}
	}
	present += unmapped;
	/* which pages of the new THP get data (__collapse_huge_page_copy(): a none or
	 * zero-page PTE gives a cleared page, an untouched (m)THP page a zero one) */
	if (k->thp.track_written)
		for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
			enum page_size ops;
			pfn_t opfn;

			if (pt_lookup(&k->mm->pt, haddr + ((vaddr_t)i << PAGE_SHIFT), &ops, &opfn, NULL) &&
			    opfn != k->thp.zero_pfn && thp_page_written(k, opfn))
				wr[i / 64] |= 1ULL << (i % 64);
		}
	thp_rmap_batching(k, kernel_batched_collapse(k->cfg->kernel));
	table = pt_collapse_pmd(&k->mm->pt, haddr, pfn, v->flags & VM_WRITE, free_old, k);
	thp_rmap_batching(k, false);
	if (thp_deposit(k, haddr, table)) {
		k->failed = true;
		err_host(&k->err, k->trace_name, 0, 0, "out of host memory in a collapse");
		return SCAN_FAIL;
	}
	thp_folio_new(k, pfn, haddr);
	for (unsigned i = 0; k->thp.track_written && i < HPAGE_PMD_NR; i++)
		if (wr[i / 64] >> (i % 64) & 1)
			thp_mark_written(k, pfn + i);
	/* pmdp_collapse_flush(): the application's TLB entries for the range go */
	flush_tlb_range(k, haddr, haddr + PMD_SIZE); /* 512 > 33: a full flush */
	*cyc += present * k->cfg->cost.copy_page + (HPAGE_PMD_NR - present) * k->cfg->cost.clear_page;
	return SCAN_SUCCEED;
}

/* --- file text (CONFIG_READ_ONLY_THP_FOR_FS) ---------------------------------- */

static void unmap_cache_pte(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	(void)va;
	(void)ps;
	(void)entry;
	filemap_unmap_pte(ctx, pfn);
}

/* The file page @v maps at @va (linear_page_index()). */
static uint64_t linear_index(const struct vma *v, vaddr_t va)
{
	return v->pgoff + ((va - v->start) >> PAGE_SHIFT);
}

/*
 * collapse_file()'s try_to_unmap() of the cached pages [@start, @start + 512) of
 * @file: every PTE mapping one, in every VMA of the file, goes (anonymous copies
 * stay). Returns how many went.
 */
static uint64_t unmap_file_range(struct kernel *k, uint32_t file, uint64_t start)
{
	uint64_t n = 0;

	for (size_t i = 0; i < k->mm->vmas.n; i++) {
		const struct vma *o = &k->mm->vmas.v[i];
		uint64_t lo = o->pgoff, hi = o->pgoff + ((o->end - o->start) >> PAGE_SHIFT);

		if (!(o->flags & VM_FILE) || o->file != file)
			continue;
		if (lo < start)
			lo = start;
		if (hi > start + HPAGE_PMD_NR)
			hi = start + HPAGE_PMD_NR;
		for (uint64_t off = lo; off < hi; off++) {
			vaddr_t a = o->start + ((off - o->pgoff) << PAGE_SHIFT);
			enum page_size ps;
			pfn_t pfn;

			if (pt_lookup(&k->mm->pt, a, &ps, &pfn, NULL) && ps == PS_4K &&
			    pfn == filemap_lookup(k, file, off))
				n += pt_unmap_range(&k->mm->pt, a, a + PAGE_SIZE, false, unmap_cache_pte, k);
		}
	}
	return n;
}

/*
 * retract_page_tables(): in every VMA mapping file page @pgoff with no anon_vma,
 * at a 2M-aligned address with the whole 2M inside it, whose PMD points to a PT
 * table (now empty: try_to_unmap() took its PTEs), the table is freed and the
 * range flushed (pmdp_collapse_flush(): 512 > 33 strides, a full flush). The next
 * fault there maps the THP with one PMD.
 */
static void retract_page_tables(struct kernel *k, uint32_t file, uint64_t pgoff)
{
	for (size_t i = 0; i < k->mm->vmas.n; i++) {
		const struct vma *o = &k->mm->vmas.v[i];
		vaddr_t addr;

		if (!(o->flags & VM_FILE) || o->file != file || (o->flags & VM_ANON_VMA) ||
		    pgoff < o->pgoff || pgoff >= o->pgoff + ((o->end - o->start) >> PAGE_SHIFT))
			continue;
		addr = o->start + ((pgoff - o->pgoff) << PAGE_SHIFT);
		if ((addr & (PMD_SIZE - 1)) || o->end < addr + PMD_SIZE || !pt_table_at(&k->mm->pt, addr, 1))
			continue;
		pt_retract_pmd(&k->mm->pt, addr);
		flush_tlb_range(k, addr, addr + PMD_SIZE);
	}
}

/*
 * collapse_file() of file pages [@start, @start + 512) of @v's file: allocate
 * the THP (as collapse_huge_page() does), read the missing pages
 * (page_cache_sync_readahead()), unmap the old pages everywhere (try_to_unmap(),
 * one batched full flush: try_to_unmap_flush()), copy all 512 (nr_none is 0 for
 * a regular file), replace them in the cache, free them and retract the page
 * tables. khugepaged gets SCAN_SUCCEED, MADV_COLLAPSE SCAN_PTE_MAPPED_HUGEPAGE
 * (it maps the PMD at once: collapse_pte_mapped_thp()).
 */
static enum scan_result collapse_file(struct kernel *k, const struct vma *v, uint64_t start,
				      bool is_khugepaged)
{
	cycles_t *cyc = is_khugepaged ? &k->st->cyc_khugepaged : &k->st->cyc_fault;
	uint32_t file = v->file;
	pfn_t pfn;

	pfn = sim_alloc_pages(k, HPAGE_PMD_ORDER,
			      !is_khugepaged || k->cfg->khugepaged.defrag ? GFP_TRANSHUGE :
									    GFP_TRANSHUGE_LIGHT);
	if (pfn == PFN_NONE) {
		k->st->thp_collapse_alloc_failed++;
		return SCAN_ALLOC_HUGE_PAGE_FAIL;
	}
	k->st->thp_collapse_alloc++; /* alloc_charge_folio() */
	vmas_count(k, v->start + ((start - v->pgoff) << PAGE_SHIFT), VE_THP_COLLAPSE_ALLOC);
	if (filemap_read_in(k, file, start, HPAGE_PMD_NR)) {
		buddy_free(&k->buddy, pfn, HPAGE_PMD_ORDER); /* filemap_lock_folio() failed */
		return SCAN_FAIL;
	}
	if (unmap_file_range(k, file, start))
		flush_tlb_mm_range(k, 0, k->va_limit, PAGE_SHIFT); /* TLB_FLUSH_ALL */
	*cyc += HPAGE_PMD_NR * k->cfg->cost.copy_page; /* copy_mc_highpage() each */
	filemap_install_thp(k, file, start, pfn);
	retract_page_tables(k, file, start);
	return is_khugepaged ? SCAN_SUCCEED : SCAN_PTE_MAPPED_HUGEPAGE;
}

/*
 * hpage_collapse_scan_file() of the 2M range at @haddr in file VMA @v: the page
 * cache, not the PTEs. A THP already there is SCAN_PTE_MAPPED_HUGEPAGE; khugepaged
 * wants at least 512 - max_ptes_none pages cached (thp_scan_exceed_none_pte); then
 * collapse_file().
 */
static enum scan_result scan_file(struct kernel *k, const struct vma *v, vaddr_t haddr,
				  bool is_khugepaged)
{
	uint64_t start = linear_index(v, haddr);
	unsigned present = 0;

	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		pfn_t pfn = filemap_lookup(k, v->file, start + i);

		if (pfn == PFN_NONE)
			continue;
		if (filemap_is_thp(k, pfn)) /* file THPs start at 512-aligned indices: this one */
			return SCAN_PTE_MAPPED_HUGEPAGE;
		present++;
	}
	if (is_khugepaged && present < HPAGE_PMD_NR - k->cfg->khugepaged.max_ptes_none) {
		k->st->thp_scan_exceed_none_pte++;
		return SCAN_EXCEED_NONE_PTE;
	}
	return collapse_file(k, v, start, is_khugepaged);
}

/* set_huge_pmd() -> do_set_pmd() of the file THP @head at @haddr in @v. */
static enum scan_result set_huge_pmd(struct kernel *k, const struct vma *v, vaddr_t haddr, pfn_t head)
{
	if ((v->flags & VM_NOHUGEPAGE) || k->mm->thp_disable || !filemap_thp_suitable(v, haddr) ||
	    !pt_slot_empty(&k->mm->pt, haddr, PS_2M))
		return SCAN_FAIL;
	if (pt_map(&k->mm->pt, haddr, PS_2M, head, false)) {
		k->failed = true;
		err_host(&k->err, k->trace_name, 0, 0, "out of memory mapping a file THP");
		return SCAN_FAIL;
	}
	filemap_map_pmd(k, head);
	k->st->thp_file_mapped++;
	return SCAN_SUCCEED;
}

/*
 * collapse_pte_mapped_thp(): the file THP's range at @haddr in this mm. Every
 * present PTE must map its own subpage of the THP (an anonymous copy or a swap
 * entry refuses); they are cleared and the PT table retracted (one flush), and
 * with @install_pmd (MADV_COLLAPSE) the THP mapped by a PMD.
 */
static enum scan_result collapse_pte_mapped_thp(struct kernel *k, vaddr_t haddr, bool install_pmd)
{
	struct vma *v = vma_find(&k->mm->vmas, haddr);
	enum page_size ps;
	pfn_t pfn, head;

	if (!v || !(v->flags & VM_FILE) || haddr < v->start || haddr + PMD_SIZE > v->end)
		return SCAN_VMA_CHECK;
	if (pt_lookup(&k->mm->pt, haddr, &ps, &pfn, NULL) && ps == PS_2M)
		return SCAN_PMD_MAPPED;
	if (!vma_collapsible(k, v, false))
		return SCAN_VMA_CHECK;
	head = filemap_lookup(k, v->file, linear_index(v, haddr));
	if (head == PFN_NONE)
		return SCAN_PAGE_NULL;
	if (!filemap_is_thp(k, head))
		return SCAN_PAGE_COMPOUND;
	if (pt_table_at(&k->mm->pt, haddr, 1)) {
		for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
			vaddr_t a = haddr + ((vaddr_t)i << PAGE_SHIFT);
			uint64_t slot;

			if (pt_get_swap(&k->mm->pt, a, &slot))
				return SCAN_PTE_NON_PRESENT;
			if (pt_lookup(&k->mm->pt, a, &ps, &pfn, NULL) && pfn != head + i)
				return SCAN_FAIL;
		}
		pt_unmap_range(&k->mm->pt, haddr, haddr + PMD_SIZE, false, unmap_cache_pte, k);
		pt_retract_pmd(&k->mm->pt, haddr);
		flush_tlb_range(k, haddr, haddr + PMD_SIZE); /* pmdp_collapse_flush() */
	}
	return install_pmd ? set_huge_pmd(k, v, haddr, head) : SCAN_SUCCEED;
}

/* khugepaged's visit of a file VMA's 2M range (khugepaged_scan_mm_slot()). */
static enum scan_result scan_file_khugepaged(struct kernel *k, const struct vma *v, vaddr_t haddr)
{
	enum scan_result r = scan_file(k, v, haddr, true);

	if (r == SCAN_PTE_MAPPED_HUGEPAGE) {
		r = collapse_pte_mapped_thp(k, haddr, false);
		if (r == SCAN_PMD_MAPPED)
			r = SCAN_SUCCEED;
	}
	return r;
}

/* MADV_COLLAPSE's of a file VMA's 2M range (madvise_collapse()). */
static enum scan_result scan_file_madvise(struct kernel *k, const struct vma *v, vaddr_t haddr)
{
	enum scan_result r = scan_file(k, v, haddr, false);

	return r == SCAN_PTE_MAPPED_HUGEPAGE ? collapse_pte_mapped_thp(k, haddr, true) : r;
}

enum scan_result khugepaged_scan_pmd(struct kernel *k, vaddr_t haddr, bool madv_collapse)
{
	struct vma *v = vma_find(&k->mm->vmas, haddr);
	bool mmap_locked = true;
	enum scan_result r;

	if (!v || haddr + PMD_SIZE > v->end || (haddr & (PMD_SIZE - 1)) ||
	    !vma_collapsible(k, v, !madv_collapse))
		return SCAN_VMA_CHECK;
	if (v->flags & VM_FILE)
		r = madv_collapse ? scan_file_madvise(k, v, haddr) : scan_file_khugepaged(k, v, haddr);
	else
		r = scan_pmd(k, v, haddr, !madv_collapse, &mmap_locked);
	if (r == SCAN_SUCCEED && !madv_collapse)
		k->st->khugepaged_pages_collapsed++;
	return r;
}

/*
 * khugepaged_scan_mm_slot(): take up the mm under the cursor (the list's first
 * when the cursor is at the head) and scan it, working on it with
 * kernel_use_mm(), until @pages units are spent or a collapse was attempted
 * (*@result is its outcome: the slot stays, the cursor inside it), or until
 * every VMA has been seen or the mm is gone or THP-disabled
 * (hpage_collapse_test_exit_or_disable()): then the cursor moves to the next
 * slot, or back to the head (full_scans), and a gone mm's slot is freed
 * (collect_mm_slot()). Returns the units spent.
 */
static unsigned scan_mm_slot(struct kernel *k, unsigned pages, enum scan_result *result)
{
	struct khugepaged *kh = &k->khugepaged;
	struct khugepaged_mm_slot *slot;
	struct mm *old;
	unsigned progress = 0;
	bool done = true; /* !vma: every VMA seen (or none looked at) */

	*result = SCAN_FAIL;
	if (!kh->mm_slot) { /* the list head: take up the first mm from its start */
		kh->mm_slot = kh->head;
		kh->address = 0;
	}
	slot = kh->mm_slot;
	progress++; /* mmap_read_trylock() succeeded (it always does here) */
	if (!slot->mm || slot->mm->thp_disable)
		goto breakouterloop; /* hpage_collapse_test_exit_or_disable() */
	old = kernel_use_mm(k, slot->mm);
	for (struct vma *v = vma_find_next(&k->mm->vmas, kh->address); v;
	     v = vma_find_next(&k->mm->vmas, v->end)) {
		vaddr_t hstart = (v->start + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
		vaddr_t hend = v->end & ~(PMD_SIZE - 1);

		if (!vma_collapsible(k, v, true) || kh->address > hend) {
			progress++;
			continue;
		}
		if (kh->address < hstart)
			kh->address = hstart;
		while (kh->address < hend) {
			bool mmap_locked = true;

			if (v->flags & VM_FILE) { /* hpage_collapse_scan_file() drops mmap_lock */
				*result = scan_file_khugepaged(k, v, kh->address);
				mmap_locked = false;
			} else {
				*result = scan_pmd(k, v, kh->address, true, &mmap_locked);
			}
			if (*result == SCAN_SUCCEED)
				k->st->khugepaged_pages_collapsed++;
			k->st->cyc_khugepaged += HPAGE_PMD_NR * k->cfg->cost.compact_scan;
			kh->address += PMD_SIZE;
			progress += HPAGE_PMD_NR;
			if (!mmap_locked || progress >= pages || k->failed) {
				done = false; /* breakouterloop: the slot stays */
				goto out;
			}
		}
	}
out:
	kernel_use_mm(k, old);
breakouterloop:
	if (done || !slot->mm) {
		/* the next slot, or the list head after the last */
		if (slot->next) {
			kh->mm_slot = slot->next;
			kh->address = 0;
		} else {
			kh->mm_slot = NULL;
			k->st->khugepaged_full_scans++;
		}
		if (!slot->mm) /* collect_mm_slot(): hpage_collapse_test_exit() */
			slot_free(kh, slot);
	}
	return progress;
}

void khugepaged_do_scan(struct kernel *k)
{
	struct khugepaged *kh = &k->khugepaged;
	unsigned pages = k->cfg->khugepaged.pages_to_scan, progress = 0, pass_through_head = 0;
	enum scan_result result = SCAN_SUCCEED;
	bool wait = true;

	if (kh->alloc_sleeping) {
		/* back from khugepaged_alloc_sleep(): the same pass goes on */
		kh->alloc_sleeping = false;
		progress = kh->progress;
		pass_through_head = kh->pass_through_head;
		wait = false;
	}
	if (!k->thp.mm_registered || k->cfg->thp.enabled == THP_NEVER) {
		/* !khugepaged_has_work(): nothing to scan */
		kh->next_wake += ms_to_cycles(k, k->cfg->khugepaged.scan_sleep_millisecs);
		return;
	}
	k->in_khugepaged = true; /* compaction it triggers is its own CPU time */
	for (;;) {
		if (!kh->mm_slot)
			pass_through_head++;
		if (kh->head && pass_through_head < 2) /* khugepaged_has_work() */
			progress += scan_mm_slot(k, pages - progress, &result);
		else
			progress = pages;
		if (progress >= pages || k->failed)
			break;
		if (result == SCAN_ALLOC_HUGE_PAGE_FAIL) {
			if (!wait)
				break; /* the second failure cancels the pass */
			/* khugepaged_alloc_sleep(): the pass resumes alloc_sleep_millisecs later */
			kh->alloc_sleeping = true;
			kh->progress = progress;
			kh->pass_through_head = pass_through_head;
			kh->next_wake += ms_to_cycles(k, k->cfg->khugepaged.alloc_sleep_millisecs);
			k->in_khugepaged = false;
			return;
		}
	}
	k->in_khugepaged = false;
	/* khugepaged_wait_work(): with an empty list it waits for the next registration */
	if (!kh->head)
		k->thp.mm_registered = false;
	kh->next_wake += ms_to_cycles(k, k->cfg->khugepaged.scan_sleep_millisecs);
}

/* madvise_collapse_errno() */
static int collapse_errno(enum scan_result r)
{
	switch (r) {
	case SCAN_ALLOC_HUGE_PAGE_FAIL:
		return -ENOMEM;
	case SCAN_EXCEED_NONE_PTE:
		return -EBUSY;
	default:
		return -EINVAL; /* trying again will not help (khugepaged's results cannot occur) */
	}
}

/* madvise_collapse() of [@start, @end), which lies inside @v. 0 or -errno. */
static int madvise_collapse(struct kernel *k, struct vma *v, vaddr_t start, vaddr_t end)
{
	vaddr_t hstart = (start + PMD_SIZE - 1) & ~(PMD_SIZE - 1), hend = end & ~(PMD_SIZE - 1);
	enum scan_result last_fail = SCAN_FAIL;
	uint64_t thps = 0;

	if (!vma_collapsible(k, v, false))
		return -EINVAL;
	for (vaddr_t addr = hstart; addr < hend; addr += PMD_SIZE) {
		bool mmap_locked = true;
		enum scan_result r = v->flags & VM_FILE ? scan_file_madvise(k, v, addr) :
							  scan_pmd(k, v, addr, false, &mmap_locked);

		if (k->failed)
			return -ENOMEM;
		switch (r) {
		case SCAN_SUCCEED:
		case SCAN_PMD_MAPPED:
			thps++;
			break;
		case SCAN_PAGE_RO: /* of the results this model produces, the ones to go on from */
		case SCAN_LACK_REFERENCED_PAGE:
		case SCAN_PTE_NON_PRESENT:
		case SCAN_PAGE_NULL:
		case SCAN_PAGE_COMPOUND:
			last_fail = r;
			break;
		default: /* SCAN_PMD_NONE, SCAN_ALLOC_HUGE_PAGE_FAIL, SCAN_FAIL, ... */
			last_fail = r;
			goto out;
		}
	}
out:
	/* (an unaligned range inside one 2M block: hend < hstart, -EINVAL as in the kernel) */
	return thps == (hend - hstart) >> PMD_SHIFT ? 0 : collapse_errno(last_fail);
}

int khugepaged_madvise_collapse(struct kernel *k, vaddr_t start, vaddr_t end)
{
	int unmapped_error = 0;

	if (k->cfg->mode != MODE_THP)
		return -EINVAL; /* no THP in this kernel: madvise_behavior_valid() */
	if (start >= end)
		return 0;
	/* madvise_walk_vmas() */
	for (;;) {
		struct vma *v = vma_find_next(&k->mm->vmas, start);
		vaddr_t tmp;
		int err;

		if (!v)
			return -ENOMEM;
		if (start < v->start) {
			unmapped_error = -ENOMEM; /* a hole: skipped, reported at the end */
			start = v->start;
			if (start >= end)
				break;
		}
		tmp = v->end < end ? v->end : end;
		err = madvise_collapse(k, v, start, tmp);
		if (err)
			return err;
		start = tmp;
		if (start >= end)
			break;
	}
	return unmapped_error;
}
