/*
 * khugepaged.c - background collapse of PTE-mapped 2M ranges into THPs, after
 * Linux 6.x mm/khugepaged.c (reference §4, [KH]): khugepaged_do_scan(),
 * khugepaged_scan_mm_slot(), hpage_collapse_scan_pmd(), collapse_huge_page().
 *
 * Model: one mm (the traced process), registered by khugepaged_enter_vma() at an
 * eligible fault or MADV_HUGEPAGE. Every scan_sleep_millisecs of simulated time
 * (cycles / cpu.freq_mhz) a pass spends pages_to_scan units: an ineligible VMA
 * costs 1, each 2M range 512 whatever its outcome; the pass ends when the budget
 * is spent or the list head has been passed twice (each wrap is a full scan).
 * A range collapses if its PMD points to a PTE table, none/zero PTEs <=
 * max_ptes_none (else thp_scan_exceed_none_pte), at least one PTE is writable and
 * one young. The collapse allocates order 9 (GFP_TRANSHUGE: direct compaction
 * and reclaim, if khugepaged/defrag; one slow path, page_alloc.c), copies
 * present pages and clears the rest, flushes the range, installs the PMD and
 * deposits the old table. An allocation failure ends the pass
 * and the next one waits alloc_sleep_millisecs.
 *
 * Costs: scanning and copying are khugepaged's own CPU (cycles.khugepaged: 512 x
 * os.cost.compact_scan per range examined, os.cost.copy_page / clear_page per
 * subpage); the application pays the TLB flush (os.cost.flush).
 *
 * Swap entries: more than max_ptes_swap skip the range
 * (thp_scan_exceed_swap_pte); with any, khugepaged wants at least 256 young PTEs;
 * the collapse reads them back first (__collapse_huge_page_swapin(): major
 * faults, pswpin, os.cost.swap_in on khugepaged's cycles).
 *
 * Simplifications: no shared PTEs (one process: max_ptes_shared never binds);
 * mmap_lock contention, lru_add_drain and NUMA checks do not exist here.
 */
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

/* hugepage_vma_revalidate()/thp_vma_allowable_order() in khugepaged context */
static bool vma_eligible(const struct sim *s, const struct vma *v)
{
	return thp_vma_allowable(s, v) && (v->flags & VM_WRITE) == VM_WRITE;
}

static void free_old(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	(void)entry;
	thp_unmap_leaf(ctx, va, ps, pfn);
}

enum scan_result khugepaged_scan_pmd(struct sim *s, vaddr_t haddr, bool madv_collapse)
{
	const struct khugepaged_cfg *k = &s->cfg.khugepaged;
	unsigned none = 0, present = 0, writable = 0, young = 0, unmapped = 0;
	struct vma *v = vma_find(&s->vmas, haddr);
	enum page_size ps;
	pfn_t pfn, table;
	uint64_t e;

	if (!v || haddr + PMD_SIZE > v->end || haddr < v->start)
		return SCAN_VMA_CHECK;
	if (pt_lookup(&s->pt, haddr, &ps, &pfn, NULL) && ps == PS_2M)
		return SCAN_PMD_MAPPED;
	if (!pt_table_at(&s->pt, haddr, 1))
		return SCAN_PMD_NONE;
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		vaddr_t a = haddr + ((vaddr_t)i << PAGE_SHIFT);
		uint64_t slot;

		if (pt_get_swap(&s->pt, a, &slot)) {
			if (++unmapped > k->max_ptes_swap && !madv_collapse) {
				s->st.thp_scan_exceed_swap_pte++;
				return SCAN_EXCEED_SWAP_PTE;
			}
			continue;
		}
		if (!pt_lookup(&s->pt, a, &ps, &pfn, &e) || pfn == s->thp.zero_pfn) {
			if (++none > k->max_ptes_none && !madv_collapse) {
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
	if (!madv_collapse && (!young || (unmapped && young < HPAGE_PMD_NR / 2)))
		return SCAN_LACK_REFERENCED_PAGE;
	/* collapse_huge_page() */
	/* alloc_charge_folio(): one __alloc_pages() (no vma policy's second try) under
	 * GFP_TRANSHUGE, or GFP_TRANSHUGE_LIGHT for khugepaged with defrag off */
	pfn = sim_alloc_pages(s, HPAGE_PMD_ORDER,
			      madv_collapse || k->defrag ? GFP_TRANSHUGE : GFP_TRANSHUGE_LIGHT);
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
		    reclaim_swap_in(s, v, a, slot, !madv_collapse)) {
			/* no frame to read into: give the huge page back (SCAN_FAIL) */
			buddy_free(&s->buddy, pfn, HPAGE_PMD_ORDER);
			return SCAN_FAIL;
		}
	}
	present += unmapped;
	table = pt_collapse_pmd(&s->pt, haddr, pfn, v->flags & VM_WRITE, free_old, s);
	if (thp_deposit(s, haddr, table)) {
		s->failed = true;
		err_host(&s->err, s->trace_name, 0, 0, "out of host memory in a collapse");
		return SCAN_FAIL;
	}
	thp_folio_new(s, pfn, haddr);
	/* pmdp_collapse_flush(): the application's TLB entries for the range go */
	sim_shootdown(s, haddr, haddr + PMD_SIZE, 1);
	s->st.cyc_khugepaged += present * s->cfg.cost.copy_page +
				(HPAGE_PMD_NR - present) * s->cfg.cost.clear_page;
	s->st.khugepaged_pages_collapsed++;
	return SCAN_SUCCEED;
}

void khugepaged_do_scan(struct sim *s)
{
	struct khugepaged *kh = &s->khugepaged;
	unsigned budget = s->cfg.khugepaged.pages_to_scan, progress = 0, passes = 0;

	if (!s->thp.mm_registered || s->cfg.thp.enabled == THP_NEVER) {
		kh->next_wake += ms_to_cycles(s, s->cfg.khugepaged.scan_sleep_millisecs);
		return;
	}
	s->in_khugepaged = true; /* compaction it triggers is its own CPU time */
	while (progress < budget && passes < 2) {
		struct vma *v = vma_find_next(&s->vmas, kh->address);
		vaddr_t h;

		if (!v) {
			/* end of the mm: the slot is done, a full scan */
			kh->address = 0;
			s->st.khugepaged_full_scans++;
			passes++;
			progress++;
			continue;
		}
		if (!vma_eligible(s, v)) {
			kh->address = v->end;
			progress++;
			continue;
		}
		h = (kh->address > v->start ? kh->address : v->start);
		h = (h + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
		if (h + PMD_SIZE > v->end) {
			kh->address = v->end;
			progress++;
			continue;
		}
		progress += HPAGE_PMD_NR;
		s->st.cyc_khugepaged += HPAGE_PMD_NR * s->cfg.cost.compact_scan;
		kh->address = h + PMD_SIZE;
		if (khugepaged_scan_pmd(s, h, false) == SCAN_ALLOC_HUGE_PAGE_FAIL) {
			kh->next_wake += ms_to_cycles(s, s->cfg.khugepaged.alloc_sleep_millisecs);
			s->in_khugepaged = false;
			return;
		}
		if (s->failed)
			break;
	}
	s->in_khugepaged = false;
	kh->next_wake += ms_to_cycles(s, s->cfg.khugepaged.scan_sleep_millisecs);
}
