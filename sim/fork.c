/*
 * fork.c - fork() of an address space, after Linux 6.18 kernel/fork.c (dup_mm(),
 * dup_mmap()) and mm/memory.c (copy_page_range(), vma_needs_copy(),
 * copy_present_pte(), wp_can_reuse_anon_folio()), and the sharing of anonymous
 * pages it starts.
 *
 *  - dup_mmap(): the child gets every VMA of the parent, VM_LOCKED and
 *    VM_LOCKONFAULT cleared (vm_flags_clear(tmp, VM_LOCKED_MASK)), its heap
 *    (brk), MMF_DISABLE_THP (MMF_INIT_MASK) but not mm->def_flags (mm_init()
 *    keeps only VM_NOHUGEPAGE of them, which the model never sets there).
 *    dup_mmap() ends with flush_tlb_mm() of the parent, whether or not a PTE was
 *    write-protected.
 *  - copy_page_range() copies a VMA's page table only when vma_needs_copy():
 *    the VMA has an anon_vma (VM_ANON_VMA). A file mapping that never had a
 *    private copy and shared anonymous memory (shmem in Linux: shmem_zero_setup()
 *    gives it no anon_vma) are left for the child to fault in, as are VMAs that
 *    only hold zero pages (a read fault's zero page takes no anon_vma).
 *  - In a copied VMA: a private anonymous 4K page is shared read-only
 *    (copy_present_pte(): the parent's PTE write-protected when it is a COW
 *    mapping; the child's PTE is old), its mapcount raised (the page is no
 *    longer PageAnonExclusive); a zero-page PTE is copied; a page-cache page is
 *    mapped again (folio_dup_file_rmap_pte(), nr_mapped unchanged).
 *  - copy_huge_pmd(): a PMD-mapped THP is shared by both PMDs read-only (the
 *    folio's PMD count raised, pmd_shared; NR_ANON_THPS counts it once) with a
 *    table deposited for the child; the huge zero PMD is copied with its table;
 *    a file THP's PMD is not (!vma_is_anonymous(dst_vma): refilled on fault).
 *    A PTE-mapped THP's PTEs are shared like 4K pages (mapcount per subpage).
 *  - Counters: nr_anon_pages (NR_ANON_MAPPED) counts pages, not mappings, so a
 *    fork moves neither it nor RSS in the report's machine totals; each
 *    process's RSS (kernel_mm_rss(), smaps) is what its page table maps.
 *  - After the fork (fault.c): a store to a shared page's read-only PTE in a
 *    private writable VMA copies it (wp_page_copy(): a new page, the old one's
 *    mapcount down, the old PTE flushed); a store to a page no other mm maps
 *    any more makes the PTE writable in place (wp_can_reuse_anon_folio(): the
 *    folio's refcount is 1, so it is reused and marked exclusive again).
 *  - Shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS, backed by anonymous
 *    pages in the model, see filemap.c): the fork gives both VMAs one identity
 *    (the shmem object: vma.file, and vma.pgoff for the page index); a child's
 *    fault finds the page another process of that identity maps
 *    (shmem_fault() finding the page in the cache: a minor fault, nothing
 *    cleared) and maps it writable; a store in one process is seen by the
 *    other with no fault. The model keeps such a page while some process maps
 *    it (Linux keeps it in the shmem file until the last mapping goes).
 *
 *  - A store to a shared THP's PMD (fault.c, do_huge_pmd_wp_page()): the folio
 *    is not exclusive, so the writer's PMD is split (__split_huge_pmd(),
 *    thp_split_pmd; its 512 PTEs are extra mappings of a folio the other mm
 *    still maps by its PMD) and the fault falls back to the PTE level, which
 *    copies 4 KiB (Linux 5.8+, commit 3917c80280c9 "thp: change CoW semantics
 *    for anon-THP"). A PMD no other mm maps and no PTE shares is reused. When
 *    the last PMD goes while PTEs of other mms map some of its pages, those
 *    become its mappings and the partially mapped folio is queued for
 *    deferred split. A store to a PTE of a large folio reuses it only when
 *    this mm alone maps the whole folio (__wp_can_reuse_large_anon_folio(),
 *    6.15+); else it copies the page.
 *
 * Simplifications, and why. What the model cannot yet share is refused with a
 * message naming it (exit 2), never modelled wrongly: hugetlb pages
 * (copy_hugetlb_page_range(): the pool has no mapcount) and swap entries
 * (swap_duplicate(): the swap model holds no count per slot). Reclaim and
 * compaction leave a shared page alone (reclaim activates it, compaction does
 * not migrate it): try_to_unmap() and try_to_migrate() would walk every mapper
 * through the anon_vma and put a swap or migration entry in each, which needs
 * the per-slot count above; an exclusive page is reclaimed and migrated in the
 * mm that maps it (rmap_mm), whichever process runs. mprotect() leaves a shared
 * page read-only (it is not PageAnonExclusive). The model keeps no
 * PageAnonExclusive bit of its own: a page whose other mappers went counts as
 * exclusive at once, where Linux marks it so at the store that reuses it (an
 * mprotect(PROT_WRITE) in between makes it writable in the model, not in
 * Linux). A shared page's reverse map names one mapper and its address; when
 * that one lets go, the others are looked for at that address (where fork put
 * them), then, if one moved it (mremap), in their page tables. MADV_DONTFORK
 * and MADV_WIPEONFORK are not modelled (no trace records them).
 */
#include <stdlib.h>

#include "filemap.h"
#include "kernel.h"
#include "khugepaged.h"
#include "lru.h"
#include "thp.h"
#include "tlbflush.h"
#include "vmas.h"

struct fork_leaf {
	vaddr_t va;
	enum page_size ps;
	pfn_t pfn;
	uint64_t entry;
};

struct fork_walk {
	struct kernel *k;
	struct fork_leaf *l;
	size_t n, cap;
	bool oom;
};

static void collect(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct fork_walk *w = ctx;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct fork_leaf *l = realloc(w->l, cap * sizeof(*l));

		if (!l) {
			w->oom = true;
			return;
		}
		w->l = l;
		w->cap = cap;
	}
	w->l[w->n++] = (struct fork_leaf){ va, ps, pfn, entry };
}

/* vma_needs_copy(): only a VMA with an anon_vma has PTEs a fault could not refill */
static bool vma_needs_copy(const struct vma *v)
{
	bool shared_anon = (v->flags & VM_SHARED) && !(v->flags & VM_FILE);

	return (v->flags & VM_ANON_VMA) && !shared_anon && !(v->flags & VM_HUGETLB);
}

/* What a fork of @mm cannot share yet (see the header), or NULL. */
static const char *cannot_fork(struct kernel *k, struct mm *mm, const struct fork_walk *w)
{
	if (mm->pt.nr_swap)
		return "swapped-out pages";
	for (size_t i = 0; i < w->n; i++) {
		const struct fork_leaf *f = &w->l[i];

		if (f->ps == PS_1G || (f->ps == PS_2M && !filemap_is_thp(k, f->pfn) &&
				       f->pfn != k->thp.huge_zero_pfn && !thp_is_folio(k, f->pfn)))
			return "hugetlb pages";
	}
	return NULL;
}

/*
 * The shared anonymous VMAs of @mm get the identity of their shmem object
 * (vma.file, with vma.pgoff the page index at their start) before the child
 * copies them: a fault in either finds the other's pages (fault.c).
 */
static void give_identity(struct kernel *k, struct mm *mm)
{
	for (size_t i = 0; i < mm->vmas.n; i++) {
		struct vma *v = &mm->vmas.v[i];

		if ((v->flags & VM_SHARED) && !(v->flags & VM_FILE) && !v->file) {
			v->file = filemap_new_file(k);
			v->pgoff = v->start >> PAGE_SHIFT;
		}
	}
}

static int copy_vmas(struct kernel *k, struct mm *src, struct mm *dst)
{
	for (size_t i = 0; i < src->vmas.n; i++) {
		const struct vma *v = &src->vmas.v[i];
		unsigned long flags = v->flags & ~(VM_LOCKED | VM_LOCKONFAULT);

		if (vma_insert_file(&dst->vmas, v->start, v->end, flags, v->file, v->pgoff) ||
		    vmas_map(k, v->start, v->end, flags, 0, false))
			return -1;
	}
	return 0;
}

/*
 * copy_huge_pmd() of a 2M leaf of @src into k->mm (the child): the huge zero
 * PMD, or a THP's PMD read-only in both, the folio's PMD count raised; each
 * with a deposited table (pte_alloc_one() of the child). A file THP's PMD is
 * not copied (!vma_is_anonymous(): refilled on fault). 0 or -1.
 */
static int copy_pmd(struct kernel *k, struct mm *src, const struct fork_leaf *f)
{
	pfn_t table;

	if (filemap_is_thp(k, f->pfn))
		return 0;
	table = k->pt_ops.alloc(k->pt_ops.ctx);
	if (table == PFN_NONE)
		return -1;
	if (pt_map(&k->mm->pt, f->va, PS_2M, f->pfn, false) || thp_deposit(k, f->va, table)) {
		k->pt_ops.free(k->pt_ops.ctx, table);
		return -1;
	}
	if (f->pfn == k->thp.huge_zero_pfn) {
		k->thp.nr_zero_pmds++; /* mm_get_huge_zero_folio() */
		return 0;
	}
	if (f->entry & PTE_RW) /* pmdp_set_wrprotect() */
		pt_protect_range(&src->pt, f->va, f->va + PMD_SIZE, false, PFN_NONE, PFN_NONE);
	k->thp.folio[f->pfn >> HPAGE_PMD_ORDER].pmd_shared++; /* folio_try_dup_anon_rmap_pmd() */
	k->thp.nr_shared_pmds++;
	return 0;
}

/* copy_present_pte() of one 4K leaf of @src into k->mm (the child). 0 or -1 (no table frame). */
static int copy_pte(struct kernel *k, struct mm *src, const struct fork_leaf *f)
{
	if (f->pfn == k->thp.zero_pfn) {
		if (pt_map(&k->mm->pt, f->va, PS_4K, f->pfn, false))
			return -1;
		k->thp.nr_zero_ptes++;
		return 0;
	}
	if (filemap_is_cache(&k->fm, f->pfn)) {
		/* a private file mapping's cache page: read-only in both */
		if (pt_map(&k->mm->pt, f->va, PS_4K, f->pfn, f->entry & PTE_RW))
			return -1;
		filemap_map_pte(k, f->pfn);
		return 0;
	}
	/* a private anonymous page (a THP's too): shared read-only, COW in both
	 * (folio_try_dup_anon_rmap_pte(), ptep_set_wrprotect()) */
	if (pt_map(&k->mm->pt, f->va, PS_4K, f->pfn, false))
		return -1;
	if (f->entry & PTE_RW)
		pt_protect_range(&src->pt, f->va, f->va + PAGE_SIZE, false, PFN_NONE, PFN_NONE);
	k->mapcount[f->pfn]++;
	k->nr_shared_ptes++;
	return 0;
}

struct mm *kernel_fork(struct kernel *k, uint64_t id)
{
	struct mm *src = k->mm, *dst;
	struct fork_walk w = { k, NULL, 0, 0, false };
	const char *why;

	pt_for_each_leaf(&src->pt, collect, &w);
	if (w.oom)
		goto host_oom;
	why = cannot_fork(k, src, &w);
	if (why) {
		free(w.l);
		kernel_fail(k, "fork of process %llu: a process with %s cannot be forked yet",
			    (unsigned long long)src->id, why);
		return NULL;
	}
	dst = kernel_mm_new(k, id);
	if (!dst)
		goto host_oom;
	give_identity(k, src);
	dst->brk_start = src->brk_start;
	dst->brk = src->brk;
	dst->thp_disable = src->thp_disable;
	vmas_acct_free(&dst->vacct); /* the per-mapping breakdown: the parent's mappings */
	if (vmas_acct_copy(&dst->vacct, &src->vacct))
		goto host_oom;
	kernel_use_mm(k, dst);
	if (copy_vmas(k, src, dst))
		goto oom_in_child;
	for (size_t i = 0; i < w.n; i++) {
		const struct fork_leaf *f = &w.l[i];

		if (!vma_needs_copy(vma_find(&src->vmas, f->va)))
			continue;
		if (f->ps == PS_2M ? copy_pmd(k, src, f) : copy_pte(k, src, f)) {
			if (dst->pt.host_oom)
				goto oom_in_child;
			kernel_use_mm(k, src);
			free(w.l);
			kernel_oom(k, f->va);
			return NULL;
		}
	}
	kernel_use_mm(k, src);
	free(w.l);
	khugepaged_fork(k, dst, src); /* dup_mmap(): on khugepaged's list if the parent is */
	flush_tlb_mm(k); /* dup_mmap(): flush_tlb_mm(oldmm) */
	return dst;
oom_in_child:
	kernel_use_mm(k, src);
host_oom:
	free(w.l);
	k->err.host = true; /* (kernel_fail() keeps it) */
	kernel_fail(k, "out of host memory in fork");
	return NULL;
}

struct find_leaf {
	pfn_t pfn;
	enum page_size ps;
	vaddr_t va;
	bool found;
};

static void find_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct find_leaf *f = ctx;

	(void)entry;
	if (!f->found && ps == f->ps && pfn == f->pfn) {
		f->found = true;
		f->va = va;
	}
}

struct mm *kernel_find_mapper(struct kernel *k, pfn_t pfn, enum page_size ps, vaddr_t va, vaddr_t *at)
{
	for (struct mm *mm = k->mms; mm; mm = mm->next) {
		enum page_size lps;
		pfn_t p;

		if (mm != k->mm && !mm->exited && pt_lookup(&mm->pt, va, &lps, &p, NULL) &&
		    lps == ps && p == pfn) {
			*at = va;
			return mm;
		}
	}
	for (struct mm *mm = k->mms; mm; mm = mm->next) {
		struct find_leaf f = { pfn, ps, 0, false };

		if (mm == k->mm || mm->exited)
			continue;
		pt_for_each_leaf(&mm->pt, find_leaf, &f);
		if (f.found) {
			*at = f.va;
			return mm;
		}
	}
	BUG_ON(1); /* a page counted as shared that no other mm maps */
	return NULL;
}

void kernel_page_unshare(struct kernel *k, pfn_t pfn)
{
	BUG_ON(!k->mapcount[pfn]);
	k->mapcount[pfn]--;
	k->nr_shared_ptes--;
	if (k->rmap_mm[pfn] == k->mm) {
		/* the anon_vma's walk finds the page in its other mappers */
		vaddr_t at = 0;

		k->rmap_mm[pfn] = kernel_find_mapper(k, pfn, PS_4K, k->rmap[pfn] - 1, &at);
		k->rmap[pfn] = at + 1;
	}
}

pfn_t kernel_shared_anon_find(struct kernel *k, const struct vma *v, vaddr_t va)
{
	uint64_t idx = v->pgoff + ((va - v->start) >> PAGE_SHIFT);

	if (!v->file)
		return PFN_NONE; /* never forked: no other process maps it */
	for (struct mm *mm = k->mms; mm; mm = mm->next) {
		if (mm == k->mm || mm->exited)
			continue;
		for (size_t i = 0; i < mm->vmas.n; i++) {
			const struct vma *o = &mm->vmas.v[i];
			vaddr_t a;
			enum page_size ps;
			pfn_t p;

			if (o->file != v->file || (o->flags & VM_FILE) || !(o->flags & VM_SHARED) ||
			    idx < o->pgoff || idx >= o->pgoff + ((o->end - o->start) >> PAGE_SHIFT))
				continue;
			a = o->start + ((idx - o->pgoff) << PAGE_SHIFT);
			if (pt_lookup(&mm->pt, a, &ps, &p, NULL) && ps == PS_4K && p != k->thp.zero_pfn)
				return p;
		}
	}
	return PFN_NONE;
}
