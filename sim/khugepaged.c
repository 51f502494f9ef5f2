/*
 * khugepaged.c - background collapse of PTE-mapped 2M ranges into THPs, and
 * MADV_COLLAPSE's synchronous one, after Linux mm/khugepaged.c at 00f58104202c
 * (about v6.11; reference §4, [KH]): khugepaged_do_scan(), khugepaged_scan_mm_slot(),
 * hpage_collapse_scan_pmd(), collapse_huge_page(), madvise_collapse(), and
 * __thp_vma_allowable_orders() outside a fault.
 *
 * Model: one mm (the traced process), registered (khugepaged_enter_vma()) at an
 * eligible huge fault or at MADV_HUGEPAGE of a VMA khugepaged could scan.
 * Every scan_sleep_millisecs of simulated time (cycles / cpu.freq_mhz) a pass
 * spends pages_to_scan units: the mm costs 1 each time khugepaged_scan_mm_slot()
 * takes it up, a VMA it may not collapse in 1, each 2M range 512 whatever its
 * outcome. A VMA qualifies as thp_vma_allowable_order(TVA_ENFORCE_SYSFS) says:
 * THP allowed by os.thp.enabled and the VMA's flags, an aligned 2M range inside
 * it, and an anon_vma (VM_ANON_VMA: a VMA never faulted, or only read through
 * the zero page, is skipped for 1). VM_WRITE is not needed (a read-only VMA's
 * ranges end in SCAN_PAGE_RO). An attempted collapse (its allocation included)
 * ends khugepaged_scan_mm_slot(), as the dropped mmap_lock does, and the pass
 * takes the mm up again. The pass ends when the budget is spent or when it
 * would pass the list head a second time: a pass that starts at the head scans
 * the mm once (one full_scans), one that starts inside it finishes it and scans
 * it once more. The first allocation failure of a pass sleeps
 * alloc_sleep_millisecs (khugepaged_alloc_sleep()) and the same pass goes on
 * after it, with what it had spent; a second one ends the pass. After a pass,
 * scan_sleep_millisecs.
 * The collapse allocates order 9 in one slow path (page_alloc.c): GFP_TRANSHUGE
 * (direct compaction and reclaim) when khugepaged/defrag is set or for
 * MADV_COLLAPSE, else GFP_TRANSHUGE_LIGHT.
 *
 * A range collapses if its PMD points to a PTE table, none or zero-page PTEs <=
 * max_ptes_none (else thp_scan_exceed_none_pte), at least one PTE is writable
 * and one young. The collapse allocates order 9 (direct compaction if
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
 * Swap entries: more than max_ptes_swap skip the range
 * (thp_scan_exceed_swap_pte); with any, khugepaged wants at least 256 young PTEs;
 * the collapse reads them back first (__collapse_huge_page_swapin(): major
 * faults, pswpin, os.cost.swap_in on khugepaged's cycles).
 *
 * Simplifications: no shared PTEs (one process: max_ptes_shared never binds);
 * mmap_lock contention, lru_add_drain and NUMA checks do not exist here; nothing
 * can change a VMA while a collapse has mmap_lock dropped, so the revalidations
 * always pass; shared mappings (shmem) are never collapsed; wake-ups of a sleeping
 * khugepaged (a sysfs write, a new mm on an empty list) do not cut its sleep short.
 */
#include <errno.h>
#include <string.h>

#include "khugepaged.h"
#include "mmap.h"
#include "page_alloc.h"
#include "reclaim.h"
#include "sim.h"
#include "thp.h"

static cycles_t ms_to_cycles(const struct sim *s, unsigned ms)
{
	return (cycles_t)ms * s->cfg.freq_mhz * 1000;
}

void khugepaged_init(struct sim *s)
{
	memset(&s->khugepaged, 0, sizeof(s->khugepaged));
	s->khugepaged.next_wake = ms_to_cycles(s, s->cfg.khugepaged.scan_sleep_millisecs);
}

/*
 * thp_vma_allowable_order(vma, @flags, tva_flags, PMD_ORDER) for a VMA [@start,
 * @end) outside a fault: @enforce_sysfs for khugepaged (TVA_ENFORCE_SYSFS), not
 * for MADV_COLLAPSE. Without TVA_IN_PF the VMA must hold an aligned 2M range
 * (thp_vma_suitable_order() at vm_end - PMD_SIZE) and have an anon_vma.
 */
static bool collapsible(const struct sim *s, vaddr_t start, vaddr_t end, unsigned long flags,
			bool enforce_sysfs)
{
	struct vma v = { start, end, flags, 0, 0 };
	vaddr_t hend = end & ~(PMD_SIZE - 1);

	/* vma_thp_disabled(), VM_NO_KHUGEPAGED; shmem is not modelled */
	if (s->cfg.mode != MODE_THP || (flags & (VM_NOHUGEPAGE | VM_HUGETLB | VM_SHARED | VM_FILE)))
		return false;
	if (enforce_sysfs && !thp_vma_allowable(s, &v))
		return false;
	if (hend < PMD_SIZE || hend - PMD_SIZE < start)
		return false;
	return flags & VM_ANON_VMA; /* only a fault or smaps may do without it */
}

static bool vma_collapsible(const struct sim *s, const struct vma *v, bool enforce_sysfs)
{
	return collapsible(s, v->start, v->end, v->flags, enforce_sysfs);
}

void khugepaged_enter_vma(struct sim *s, const struct vma *v, unsigned long flags)
{
	if (!s->thp.mm_registered && collapsible(s, v->start, v->end, flags, true))
		thp_register(s);
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
static enum scan_result scan_pmd(struct sim *s, struct vma *v, vaddr_t haddr, bool is_khugepaged,
				 bool *mmap_locked)
{
	const struct khugepaged_cfg *k = &s->cfg.khugepaged;
	unsigned none = 0, present = 0, writable = 0, young = 0, unmapped = 0;
	cycles_t *cyc = is_khugepaged ? &s->st.cyc_khugepaged : &s->st.cyc_fault;
	enum page_size ps;
	pfn_t pfn, table;
	uint64_t e;

	if (pt_lookup(&s->pt, haddr, &ps, &pfn, NULL) && ps == PS_2M)
		return SCAN_PMD_MAPPED;
	if (!pt_table_at(&s->pt, haddr, 1))
		return SCAN_PMD_NONE;
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		vaddr_t a = haddr + ((vaddr_t)i << PAGE_SHIFT);
		uint64_t slot;

		if (pt_get_swap(&s->pt, a, &slot)) {
			if (++unmapped > k->max_ptes_swap && is_khugepaged) {
				s->st.thp_scan_exceed_swap_pte++;
				return SCAN_EXCEED_SWAP_PTE;
			}
			continue;
		}
		/* pte_none() || is_zero_pfn() */
		if (!pt_lookup(&s->pt, a, &ps, &pfn, &e) || pfn == s->thp.zero_pfn) {
			if (++none > k->max_ptes_none && is_khugepaged) {
				s->st.thp_scan_exceed_none_pte++;
				return SCAN_EXCEED_NONE_PTE;
			}
			continue;
		}
		present++;
		writable += !!(e & PTE_RW);
		young += !!(e & PTE_A);
	}
	if (!writable)
		return SCAN_PAGE_RO;
	/* a range with swap entries must be worth the reads: half its pages young */
	if (is_khugepaged && (!young || (unmapped && young < HPAGE_PMD_NR / 2)))
		return SCAN_LACK_REFERENCED_PAGE;
	/* collapse_huge_page() */
	*mmap_locked = false;
	/* alloc_charge_folio(): one __alloc_pages() (no vma policy's second try) under
	 * GFP_TRANSHUGE, or GFP_TRANSHUGE_LIGHT for khugepaged with defrag off */
	pfn = sim_alloc_pages(s, HPAGE_PMD_ORDER,
			      !is_khugepaged || k->defrag ? GFP_TRANSHUGE : GFP_TRANSHUGE_LIGHT);
	if (pfn == PFN_NONE) {
		s->st.thp_collapse_alloc_failed++;
		return SCAN_ALLOC_HUGE_PAGE_FAIL;
	}
	s->st.thp_collapse_alloc++; /* counted at allocation, as alloc_charge_folio() */
	/* __collapse_huge_page_swapin(): read the swapped pages back first */
	/* (the allocation may have reclaimed pages of this very range: read those too) */
	for (unsigned i = 0; s->pt.nr_swap && i < HPAGE_PMD_NR; i++) {
		vaddr_t a = haddr + ((vaddr_t)i << PAGE_SHIFT);
		uint64_t slot;

		if (pt_get_swap(&s->pt, a, &slot) &&
		    reclaim_swap_in(s, v, a, slot, is_khugepaged)) {
			/* no frame to read into: give the huge page back (SCAN_FAIL) */
			buddy_free(&s->buddy, pfn, HPAGE_PMD_ORDER);
			return SCAN_FAIL;
		}
	}
	present += unmapped;
	thp_rmap_batching(s, kernel_batched_collapse(s->cfg.kernel));
	table = pt_collapse_pmd(&s->pt, haddr, pfn, v->flags & VM_WRITE, free_old, s);
	thp_rmap_batching(s, false);
	if (thp_deposit(s, haddr, table)) {
		s->failed = true;
		err_host(&s->err, s->trace_name, 0, 0, "out of host memory in a collapse");
		return SCAN_FAIL;
	}
	thp_folio_new(s, pfn, haddr);
	/* pmdp_collapse_flush(): the application's TLB entries for the range go */
	sim_flush_tlb_range(s, haddr, haddr + PMD_SIZE); /* 512 > 33: a full flush */
	*cyc += present * s->cfg.cost.copy_page + (HPAGE_PMD_NR - present) * s->cfg.cost.clear_page;
	return SCAN_SUCCEED;
}

enum scan_result khugepaged_scan_pmd(struct sim *s, vaddr_t haddr, bool madv_collapse)
{
	struct vma *v = vma_find(&s->vmas, haddr);
	bool mmap_locked = true;
	enum scan_result r;

	if (!v || haddr + PMD_SIZE > v->end || (haddr & (PMD_SIZE - 1)) ||
	    !vma_collapsible(s, v, !madv_collapse))
		return SCAN_VMA_CHECK;
	r = scan_pmd(s, v, haddr, !madv_collapse, &mmap_locked);
	if (r == SCAN_SUCCEED && !madv_collapse)
		s->st.khugepaged_pages_collapsed++;
	return r;
}

/*
 * khugepaged_scan_mm_slot(): scan the mm from the cursor until @pages units are
 * spent, a collapse was attempted (*@result is its outcome) or every VMA has
 * been seen (the slot is done: full_scans, the cursor back at the list head).
 * Returns the units spent.
 */
static unsigned scan_mm_slot(struct sim *s, unsigned pages, enum scan_result *result)
{
	struct khugepaged *kh = &s->khugepaged;
	unsigned progress = 0;

	*result = SCAN_FAIL;
	if (!kh->mm_slot) { /* the list head: take up its (only) mm from the start */
		kh->mm_slot = true;
		kh->address = 0;
	}
	progress++; /* mmap_read_trylock() succeeded (it always does here) */
	for (struct vma *v = vma_find_next(&s->vmas, kh->address); v;
	     v = vma_find_next(&s->vmas, v->end)) {
		vaddr_t hstart = (v->start + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
		vaddr_t hend = v->end & ~(PMD_SIZE - 1);

		if (!vma_collapsible(s, v, true) || kh->address > hend) {
			progress++;
			continue;
		}
		if (kh->address < hstart)
			kh->address = hstart;
		while (kh->address < hend) {
			bool mmap_locked = true;

			*result = scan_pmd(s, v, kh->address, true, &mmap_locked);
			if (*result == SCAN_SUCCEED)
				s->st.khugepaged_pages_collapsed++;
			s->st.cyc_khugepaged += HPAGE_PMD_NR * s->cfg.cost.compact_scan;
			kh->address += PMD_SIZE;
			progress += HPAGE_PMD_NR;
			if (!mmap_locked || progress >= pages || s->failed)
				return progress; /* breakouterloop: the slot stays */
		}
	}
	/* every VMA seen: the next slot, which for the one mm is the list head */
	kh->mm_slot = false;
	s->st.khugepaged_full_scans++;
	return progress;
}

void khugepaged_do_scan(struct sim *s)
{
	struct khugepaged *kh = &s->khugepaged;
	unsigned pages = s->cfg.khugepaged.pages_to_scan, progress = 0, pass_through_head = 0;
	enum scan_result result = SCAN_SUCCEED;
	bool wait = true;

	if (kh->alloc_sleeping) {
		/* back from khugepaged_alloc_sleep(): the same pass goes on */
		kh->alloc_sleeping = false;
		progress = kh->progress;
		pass_through_head = kh->pass_through_head;
		wait = false;
	}
	if (!s->thp.mm_registered || s->cfg.thp.enabled == THP_NEVER) {
		/* !khugepaged_has_work(): nothing to scan */
		kh->next_wake += ms_to_cycles(s, s->cfg.khugepaged.scan_sleep_millisecs);
		return;
	}
	s->in_khugepaged = true; /* compaction it triggers is its own CPU time */
	for (;;) {
		if (!kh->mm_slot)
			pass_through_head++;
		if (pass_through_head < 2)
			progress += scan_mm_slot(s, pages - progress, &result);
		else
			progress = pages;
		if (progress >= pages || s->failed)
			break;
		if (result == SCAN_ALLOC_HUGE_PAGE_FAIL) {
			if (!wait)
				break; /* the second failure cancels the pass */
			/* khugepaged_alloc_sleep(): the pass resumes alloc_sleep_millisecs later */
			kh->alloc_sleeping = true;
			kh->progress = progress;
			kh->pass_through_head = pass_through_head;
			kh->next_wake += ms_to_cycles(s, s->cfg.khugepaged.alloc_sleep_millisecs);
			s->in_khugepaged = false;
			return;
		}
	}
	s->in_khugepaged = false;
	/* khugepaged_wait_work() */
	kh->next_wake += ms_to_cycles(s, s->cfg.khugepaged.scan_sleep_millisecs);
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
static int madvise_collapse(struct sim *s, struct vma *v, vaddr_t start, vaddr_t end)
{
	vaddr_t hstart = (start + PMD_SIZE - 1) & ~(PMD_SIZE - 1), hend = end & ~(PMD_SIZE - 1);
	enum scan_result last_fail = SCAN_FAIL;
	uint64_t thps = 0;

	if (!vma_collapsible(s, v, false))
		return -EINVAL;
	for (vaddr_t addr = hstart; addr < hend; addr += PMD_SIZE) {
		bool mmap_locked = true;
		enum scan_result r = scan_pmd(s, v, addr, false, &mmap_locked);

		if (s->failed)
			return -ENOMEM;
		switch (r) {
		case SCAN_SUCCEED:
		case SCAN_PMD_MAPPED:
			thps++;
			break;
		case SCAN_PAGE_RO: /* of the results this model produces, the ones to go on from */
		case SCAN_LACK_REFERENCED_PAGE:
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

int khugepaged_madvise_collapse(struct sim *s, vaddr_t start, vaddr_t end)
{
	int unmapped_error = 0;

	if (s->cfg.mode != MODE_THP)
		return -EINVAL; /* no THP in this kernel: madvise_behavior_valid() */
	if (start >= end)
		return 0;
	/* madvise_walk_vmas() */
	for (;;) {
		struct vma *v = vma_find_next(&s->vmas, start);
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
		err = madvise_collapse(s, v, start, tmp);
		if (err)
			return err;
		start = tmp;
		if (start >= end)
			break;
	}
	return unmapped_error;
}
