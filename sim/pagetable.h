/*
 * pagetable.h - the x86-64 radix page table of one address space (4 or 5 levels).
 *
 * Entries use the hardware layout (Intel SDM Vol. 3A §4.5): P, R/W, U/S, A, D, PS
 * and the frame number in bits 51:12, so a walk reads real PTE values at real
 * physical addresses: every table is a frame obtained from the caller's frame
 * allocator (the buddy allocator in the simulator), and entry i of a table in
 * frame f lives at physical address f * 4096 + i * 8.
 *
 * Level numbers: 1 = PT (PTEs), 2 = PD (PDEs; PS=1 maps 2M), 3 = PDPT (PS=1 maps
 * 1G), 4 = PML4, 5 = PML5. The module knows nothing of TLBs or of the allocator's
 * internals.
 */
#ifndef MMUSIM_PAGETABLE_H
#define MMUSIM_PAGETABLE_H

#include "types.h"

#define PTE_P (1ULL << 0)
#define PTE_RW (1ULL << 1)
#define PTE_US (1ULL << 2)
#define PTE_A (1ULL << 5)
#define PTE_D (1ULL << 6)
#define PTE_PS (1ULL << 7)
#define PTE_PFN_MASK 0x000FFFFFFFFFF000ULL
/*
 * A swap entry: a non-present PTE (P = 0) holding a swap slot in bits 51:12 and
 * this software bit (x86 ignores every other bit of a non-present entry; Linux
 * encodes type and offset differently, which no walk can observe). Only PTEs
 * (level 1) hold swap entries: a THP is split into PTEs before it is swapped.
 */
#define PTE_SWP (1ULL << 9)

static inline pfn_t pte_pfn(uint64_t e)
{
	return (e & PTE_PFN_MASK) >> PAGE_SHIFT;
}

/* Where page-table frames come from. alloc returns PFN_NONE when memory is out. */
struct pt_frame_ops {
	pfn_t (*alloc)(void *ctx);
	void (*free)(void *ctx, pfn_t pfn);
	void *ctx;
};

/*
 * One table (pagetable.c). Its layout is here only for pt_walk_pte()'s inline
 * case below; everything else goes through pagetable.c's functions.
 */
#define PT_SPARSE 8 /* entries a PT table keeps in its small array */

struct pt_node {
	uint64_t *e;            /* all 512 entries; NULL while a PT table is sparse */
	struct pt_node **child; /* levels >= 2 */
	pfn_t pfn;
	unsigned level;
	unsigned used; /* non-zero entries: present and swap entries */
	/* sparse (e == NULL): the used entries' indices, ascending, and values */
	uint16_t sidx[PT_SPARSE];
	uint64_t sval[PT_SPARSE];
};

struct pagetable {
	struct pt_node *root;
	unsigned levels;
	struct pt_frame_ops ops;
	uint64_t nr_tables; /* page-table frames in use, root included */
	uint64_t nr_leaves[PS_NR];
	uint64_t nr_swap; /* swap entries */
	bool host_oom;    /* a failure was the host's memory, not a table frame (sticky) */
	/*
	 * An observer of the entries software writes (every function below that
	 * changes an entry of a linked table; not the A/D bits a walk sets, which
	 * are the hardware's): @table the frame holding the entry, @va the first
	 * address the entry maps, @level its level. virt.c traps writes to guest
	 * tables a shadow table was built from. NULL: none.
	 */
	void (*on_write)(void *ctx, pfn_t table, vaddr_t va, unsigned level);
	void *on_write_ctx;
};

/* One walk from the root down to a leaf or a non-present entry. */
struct pt_path {
	paddr_t pa[5];     /* physical address of each entry read, top level first */
	uint64_t entry[5]; /* its value (after the A/D update) */
	unsigned level[5]; /* its level */
	unsigned nr;       /* entries read */
	bool present;      /* the last entry read is a present leaf */
	enum page_size ps; /* with present: the leaf's size */
	pfn_t pfn;         /* with present: the first frame of the page */
};

/* Create an empty table (allocates the root). 0, or -1 if no frame. */
int pt_init(struct pagetable *pt, unsigned levels, const struct pt_frame_ops *ops);

/* Free every table frame (not the mapped frames: the caller unmaps those first). */
void pt_destroy(struct pagetable *pt);

/*
 * Walk @va from level @start_level (the root's level for a full walk) with the
 * table at @start_table (NULL: the root), as the hardware does: read each entry,
 * set A on it (and D on a leaf when @write), stop at a leaf or a non-present
 * entry. Fills @path. Used by mmu.c, which may begin below the root on a
 * paging-structure-cache hit.
 */
void pt_walk(struct pagetable *pt, vaddr_t va, bool write, unsigned start_level,
	     const struct pt_node *start_table, struct pt_path *path);

/*
 * The common walk, from a PDE-cache hit: read the PTE of @va in the page table
 * @table (level 1). If it is present (and writable for a @write) update its
 * A/D bits as pt_walk() would, store the entry's address in *@pa and its frame
 * in *@pfn, whether it is writable in *@rw, and return true; else change nothing and
 * return false (the caller walks with pt_walk()).
 */
bool pt_walk_pte_slow(const struct pt_node *table, vaddr_t va, bool write, paddr_t *pa, pfn_t *pfn,
		      bool *rw);

/*
 * Inline for a PT table with its full array (a sparse one calls pt_walk_pte_slow()):
 * as a call into pagetable.c it was 39 instructions a walk on the miss-heavy bench
 * trace; inline, that run went from 4.592 G to 4.466 G instructions (callgrind).
 * With walk()'s inline PDE-cache case (mmu.c), bench row (e)'s subject took about
 * 7 % less wall time (interleaved best of 9: 184.5 -> 170.4 and 193.4 -> 179.6 ms).
 */
static inline __attribute__((always_inline)) bool pt_walk_pte(const struct pt_node *table, vaddr_t va,
								bool write, paddr_t *pa, pfn_t *pfn,
								bool *rw)
{
	unsigned i = (unsigned)(va >> PAGE_SHIFT) & 511;
	uint64_t e;

	if (unlikely(table->e == NULL))
		return pt_walk_pte_slow(table, va, write, pa, pfn, rw);
	BUG_ON(table->level != 1);
	e = table->e[i];
	if (!(e & PTE_P) || (write && !(e & PTE_RW)))
		return false;
	table->e[i] = e | PTE_A | (write ? PTE_D : 0);
	*pa = (paddr_t)table->pfn << PAGE_SHIFT | (paddr_t)i << 3;
	*pfn = pte_pfn(e);
	*rw = e & PTE_RW;
	return true;
}

/* The table a walk of @va reaches at @level (NULL if absent), for PWC payloads. */
const struct pt_node *pt_table_at(const struct pagetable *pt, vaddr_t va, unsigned level);

/* The frame of a table node. */
pfn_t pt_node_pfn(const struct pt_node *n);

/*
 * Map the page of size @ps containing @va to @pfn (the first frame), writable if
 * @writable. Intermediate tables are allocated as needed; the slot must be empty
 * (no leaf, and for a 2M/1G leaf no lower table). Returns 0, or -1 if a table
 * frame could not be allocated (or host memory ran out: then pt->host_oom is set) (nothing is left half-built that matters: empty
 * tables created on the way stay, as in the kernel).
 */
int pt_map(struct pagetable *pt, vaddr_t va, enum page_size ps, pfn_t pfn, bool writable);

/*
 * __split_huge_pmd(): replace the 2M leaf covering @va by a PT table in frame
 * @table_pfn (the deposited one) whose 512 PTEs map @pfn + i, or all map
 * @zero_pfn when it is not PFN_NONE (the huge zero page becomes zero PTEs,
 * read-only). R/W, A and D carry over. The leaf must exist.
 */
void pt_split_pmd(struct pagetable *pt, vaddr_t va, pfn_t table_pfn, pfn_t zero_pfn);

/*
 * collapse_huge_page()'s page-table part: the PT table under the 2M slot of @va is
 * removed and a 2M leaf mapping @pfn installed; @fn sees each PTE it held. Returns
 * the table's frame, which the caller deposits (it is not freed).
 */
pfn_t pt_collapse_pmd(struct pagetable *pt, vaddr_t va, pfn_t pfn, bool writable,
		      void (*fn)(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry),
		      void *ctx);

/*
 * retract_page_tables()' pmdp_collapse_flush() + pte_free_defer(): the PT table
 * under the 2M slot of @va, which must hold no entry, is freed (its frame back
 * through ops.free) and the PMD left empty.
 */
void pt_retract_pmd(struct pagetable *pt, vaddr_t va);

/* Re-point the present 4K leaf at @va to @pfn with @writable (COW). */
void pt_set_pte(struct pagetable *pt, vaddr_t va, pfn_t pfn, bool writable);

/* Look @va up without side effects. true if mapped; sets *ps, *pfn, *entry. */
bool pt_lookup(const struct pagetable *pt, vaddr_t va, enum page_size *ps, pfn_t *pfn,
	       uint64_t *entry);

/*
 * pte_range_none(): are the @nr PTEs from @va (within one PTE table) all none,
 * no present page and no swap entry? True where no PTE table exists yet and no
 * leaf above covers @va.
 */
bool pt_range_none(const struct pagetable *pt, vaddr_t va, unsigned nr);

/* True if a slot of size @ps at @va is entirely empty (no leaf, no lower table). */
bool pt_slot_empty(const struct pagetable *pt, vaddr_t va, enum page_size ps);

/*
 * Visit and clear every leaf whose page lies in [@start, @end) (pages that straddle
 * a boundary are the caller's business: it splits them first); @fn gets each
 * leaf's address, size, frame and entry before it is cleared. Tables left empty
 * are freed when @free_tables (munmap's free_pgtables) and kept otherwise
 * (MADV_DONTNEED). Returns the number of leaves cleared.
 */
uint64_t pt_unmap_range(struct pagetable *pt, vaddr_t start, vaddr_t end, bool free_tables,
			void (*fn)(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn,
				   uint64_t entry),
			void *ctx);

/*
 * free_pgtables() / free_pgd_range(): free every empty table below the root
 * that covers part of [@start, @end) and whose whole span lies inside [@floor,
 * @ceiling) (the end of the previous VMA, the start of the next: a table part
 * of which another VMA still covers stays, used or not), lower levels first.
 * Returns the tables freed.
 */
uint64_t pt_free_tables(struct pagetable *pt, vaddr_t start, vaddr_t end, vaddr_t floor,
			vaddr_t ceiling);

/*
 * Where a range operation changed leaves (the part of Linux's struct mmu_gather
 * that a flush reads, include/asm-generic/tlb.h): [start, end) from the first
 * to the last leaf changed, and the smallest page shift among them
 * (tlb_get_unmap_shift()). end == 0: nothing changed.
 */
struct pt_span {
	vaddr_t start, end;
	unsigned shift;
};

/* Add the @ps leaf at @va to @sp (__tlb_adjust_range()). */
static inline void pt_span_add(struct pt_span *sp, vaddr_t va, enum page_size ps)
{
	unsigned sh = page_shift_of(ps);
	vaddr_t e = va + (1ULL << sh);

	if (!sp->end) {
		*sp = (struct pt_span){ va, e, sh };
		return;
	}
	if (va < sp->start)
		sp->start = va;
	if (e > sp->end)
		sp->end = e;
	if (sh < sp->shift)
		sp->shift = sh;
}

/*
 * Set or clear R/W on every leaf in [@start, @end), except that leaves mapping
 * @ro_a or @ro_b (the zero pages; PFN_NONE for none) never become writable.
 * Returns the leaves changed.
 */
uint64_t pt_protect_range(struct pagetable *pt, vaddr_t start, vaddr_t end, bool writable,
			  pfn_t ro_a, pfn_t ro_b);

/* pt_protect_range() that also adds each leaf it changes to @sp. */
uint64_t pt_protect_range_span(struct pagetable *pt, vaddr_t start, vaddr_t end, bool writable,
			       pfn_t ro_a, pfn_t ro_b, struct pt_span *sp);

/*
 * change_pte_range() / change_huge_pmd() over [@start, @end) (leaves straddling
 * an edge are the caller's business): each present leaf wholly inside gets R/W
 * = @writable(ctx, size, frame, entry) and is added to @sp (when not NULL) as
 * x86 pte_needs_flush() would ask: PT_FLUSH_CHANGED, when R/W changed (a leaf
 * left as it was needs no flush); PT_FLUSH_PRESENT, every leaf (the new
 * protection clears Present, PROT_NONE, or flips NX); PT_FLUSH_NONE, none (the
 * old protection was PROT_NONE: no entry was present to any TLB).
 */
enum pt_flush { PT_FLUSH_CHANGED, PT_FLUSH_PRESENT, PT_FLUSH_NONE };
struct pt_prot_change {
	bool (*writable)(void *ctx, enum page_size ps, pfn_t pfn, uint64_t entry);
	void *ctx;
	enum pt_flush flush;
	struct pt_span *sp;
};
void pt_change_prot(struct pagetable *pt, vaddr_t start, vaddr_t end, const struct pt_prot_change *pc);

/*
 * Swap entries (mm/rmap.c try_to_unmap_one(), mm/memory.c do_swap_page()):
 * pt_set_swap() replaces the present 4K leaf at @va by a swap entry for @slot;
 * pt_get_swap() reads one (false if @va holds none); pt_swap_in() turns the swap
 * entry at @va into a present leaf for @pfn; pt_map_swap() installs a swap entry
 * in an empty PTE slot, allocating tables (mremap moves them): 0 or -1.
 * pt_unmap_range() clears swap entries in its range too, passing each to @fn with
 * pfn PFN_NONE and the entry (not counted in its result: no TLB holds them).
 */
void pt_set_swap(struct pagetable *pt, vaddr_t va, uint64_t slot);
bool pt_get_swap(const struct pagetable *pt, vaddr_t va, uint64_t *slot);
void pt_swap_in(struct pagetable *pt, vaddr_t va, pfn_t pfn, bool writable);
int pt_map_swap(struct pagetable *pt, vaddr_t va, uint64_t slot);

/*
 * Clear @bits (PTE_A, PTE_D) of the present leaf mapping @va (MADV_FREE's and
 * MADV_COLD's clear_young_dirty_ptes(), pmd_mkold()/pmd_mkclean()). Returns the
 * leaf's entry before, 0 if none; the caller flushes.
 */
uint64_t pt_clear_leaf_bits(struct pagetable *pt, vaddr_t va, uint64_t bits);

/* Test and clear the accessed bit of the leaf mapping @va (ptep_clear_flush_young;
 * x86 does not flush the TLB for it). Returns the old A bit; false if unmapped. */
bool pt_test_clear_young(struct pagetable *pt, vaddr_t va);

/* Visit every swap entry in address order: @fn(ctx, va, slot). */
void pt_for_each_swap(const struct pagetable *pt, void (*fn)(void *ctx, vaddr_t va, uint64_t slot),
		      void *ctx);

/* Visit every leaf in address order. */
void pt_for_each_leaf(const struct pagetable *pt,
		      void (*fn)(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn,
				 uint64_t entry),
		      void *ctx);

/* Visit every table frame (root included). */
void pt_for_each_table(const struct pagetable *pt, void (*fn)(void *ctx, pfn_t pfn, unsigned level),
		       void *ctx);

/* Per-node used counts match the entries; leaves only where legal; totals match. */
void pt_check_invariants(const struct pagetable *pt);

#endif
