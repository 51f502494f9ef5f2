/*
 * pagetable.c - the x86-64 radix page table (Intel SDM Vol. 3A §4.5, 4-level and
 * 5-level paging; Linux's pgd/p4d/pud/pmd/pte levels).
 *
 * Each table is a struct pt_node holding its 512 hardware entries, the frame it
 * occupies, and (above the PT level) pointers to its child tables, so memory is
 * proportional to the tables in use, not to the address space. Walks set the
 * accessed bit on every entry they read and the dirty bit on a leaf they reach for
 * a write, as the page-miss handler does.
 *
 * Memory: a PT table (level 1) holding at most PT_SPARSE entries keeps them in a
 * small sorted array instead of all 512, so a trace touching pages scattered one
 * per 2 MiB costs about 120 bytes of host memory per table, not 4 KiB; the 9th
 * entry gives the table its full array. Upper tables are always full.
 *
 * Simplifications: a table is freed as soon as an unmap leaves it empty (Linux's
 * free_pgtables frees only tables wholly outside the remaining VMAs; the result
 * differs only for tables that the next fault would re-create); no NX/PKU/PAT
 * bits; D is set at walk time only (a TLB entry filled by a read and then written
 * does not re-walk to set D).
 */
#include <stdlib.h>
#include <string.h>

#include "pagetable.h"

#define PT_ENTRIES 512
#define PT_TABLE_FLAGS (PTE_P | PTE_RW | PTE_US)

/* The slot of entry @i, or NULL if a sparse table has no such entry (it is 0). */
static inline uint64_t *slot(const struct pt_node *n, unsigned i)
{
	if (likely(n->e != NULL))
		return &n->e[i];
	for (unsigned k = 0; k < n->used; k++)
		if (n->sidx[k] == i)
			return (uint64_t *)&n->sval[k];
	return NULL;
}

static inline uint64_t ent(const struct pt_node *n, unsigned i)
{
	const uint64_t *p = slot(n, i);

	return p ? *p : 0;
}

/* Give a sparse table its full array. 0, or -1 on host OOM. */
static int densify(struct pt_node *n)
{
	uint64_t *e = calloc(PT_ENTRIES, sizeof(*e));

	if (!e)
		return -1;
	for (unsigned k = 0; k < n->used; k++)
		e[n->sidx[k]] = n->sval[k];
	n->e = e;
	return 0;
}

/*
 * Set entry @i to @v, keeping n->used the count of non-zero entries. Only
 * making a zero entry non-zero in a full sparse table allocates: 0, or -1 on
 * host OOM (nothing changed).
 */
static int ent_set(struct pt_node *n, unsigned i, uint64_t v)
{
	uint64_t *p = slot(n, i), old = p ? *p : 0;
	unsigned k;

	if (!n->e) {
		if (p && v) {
			*p = v;
			return 0;
		}
		if (p) { /* removal: close the gap */
			k = (unsigned)(p - n->sval);
			memmove(&n->sidx[k], &n->sidx[k + 1], (n->used - k - 1) * sizeof(*n->sidx));
			memmove(&n->sval[k], &n->sval[k + 1], (n->used - k - 1) * sizeof(*n->sval));
			n->used--;
			return 0;
		}
		if (!v)
			return 0;
		if (n->used < PT_SPARSE) { /* insertion in index order */
			for (k = n->used; k > 0 && n->sidx[k - 1] > i; k--) {
				n->sidx[k] = n->sidx[k - 1];
				n->sval[k] = n->sval[k - 1];
			}
			n->sidx[k] = (uint16_t)i;
			n->sval[k] = v;
			n->used++;
			return 0;
		}
		if (densify(n))
			return -1;
		p = &n->e[i];
	}
	*p = v;
	if (!old && v)
		n->used++;
	else if (old && !v)
		n->used--;
	return 0;
}

/*
 * The used entries in index order: start with *pos = 0; each call gives the next
 * index in *i. After clearing entry *i of a sparse table, call unused_back() so
 * the walk does not skip its successor.
 */
static inline bool next_used(const struct pt_node *n, unsigned *pos, unsigned *i)
{
	if (n->e) {
		while (*pos < PT_ENTRIES && !n->e[*pos])
			(*pos)++;
		if (*pos >= PT_ENTRIES)
			return false;
		*i = (*pos)++;
		return true;
	}
	if (*pos >= n->used)
		return false;
	*i = n->sidx[(*pos)++];
	return true;
}

static inline void unused_back(const struct pt_node *n, unsigned *pos)
{
	if (!n->e)
		(*pos)--;
}

static inline unsigned level_shift(unsigned level)
{
	return PAGE_SHIFT + 9 * (level - 1);
}

static inline unsigned pt_index(vaddr_t va, unsigned level)
{
	return (unsigned)(va >> level_shift(level)) & (PT_ENTRIES - 1);
}

/* Tell the observer (pt->on_write) that the entry of @n mapping @va changed. */
static inline void wrote(const struct pagetable *pt, const struct pt_node *n, vaddr_t va)
{
	if (unlikely(pt->on_write != NULL))
		pt->on_write(pt->on_write_ctx, n->pfn, va & ~((1ULL << level_shift(n->level)) - 1),
			     n->level);
}

static inline bool is_leaf(uint64_t e, unsigned level)
{
	return level == 1 || (e & PTE_PS);
}

static inline enum page_size leaf_size(unsigned level)
{
	return level == 1 ? PS_4K : level == 2 ? PS_2M : PS_1G;
}

static inline unsigned size_level(enum page_size ps)
{
	return ps == PS_4K ? 1 : ps == PS_2M ? 2 : 3;
}

static struct pt_node *node_new_at(struct pagetable *pt, unsigned level, pfn_t pfn);

static struct pt_node *node_new(struct pagetable *pt, unsigned level)
{
	pfn_t pfn = pt->ops.alloc(pt->ops.ctx);

	return pfn == PFN_NONE ? NULL : node_new_at(pt, level, pfn);
}

/* A node in frame @pfn (already the caller's); the frame is freed if host memory runs out. */
static struct pt_node *node_new_at(struct pagetable *pt, unsigned level, pfn_t pfn)
{
	struct pt_node *n;

	n = calloc(1, sizeof(*n));
	if (n && level >= 2) {
		n->child = calloc(PT_ENTRIES, sizeof(*n->child));
		n->e = calloc(PT_ENTRIES, sizeof(*n->e)); /* upper tables are always full */
	}
	if (!n || (level >= 2 && (!n->child || !n->e))) {
		if (n) {
			free(n->child);
			free(n->e);
		}
		free(n);
		pt->ops.free(pt->ops.ctx, pfn);
		pt->host_oom = true;
		return NULL;
	}
	n->pfn = pfn;
	n->level = level;
	pt->nr_tables++;
	return n;
}

static void node_free(struct pagetable *pt, struct pt_node *n)
{
	pt->ops.free(pt->ops.ctx, n->pfn);
	pt->nr_tables--;
	free(n->child);
	free(n->e);
	free(n);
}

int pt_init(struct pagetable *pt, unsigned levels, const struct pt_frame_ops *ops)
{
	BUG_ON(levels != 4 && levels != 5);
	memset(pt, 0, sizeof(*pt));
	pt->levels = levels;
	pt->ops = *ops;
	pt->root = node_new(pt, levels);
	return pt->root ? 0 : -1;
}

static void destroy_rec(struct pagetable *pt, struct pt_node *n)
{
	if (n->child)
		for (unsigned i = 0; i < PT_ENTRIES; i++)
			if (n->child[i])
				destroy_rec(pt, n->child[i]);
	node_free(pt, n);
}

void pt_destroy(struct pagetable *pt)
{
	if (pt->root)
		destroy_rec(pt, pt->root);
	pt->root = NULL;
}

pfn_t pt_node_pfn(const struct pt_node *n)
{
	return n->pfn;
}

void pt_walk(struct pagetable *pt, vaddr_t va, bool write, unsigned start_level,
	     const struct pt_node *start_table, struct pt_path *path)
{
	struct pt_node *n = (struct pt_node *)(start_table ? start_table : pt->root);

	path->nr = 0;
	path->present = false;
	for (unsigned level = start_level; level >= 1; level--) {
		unsigned i = pt_index(va, level);
		uint64_t *sl = slot(n, i), e = sl ? *sl : 0;
		unsigned k = path->nr++;

		BUG_ON(n->level != level);
		path->pa[k] = (paddr_t)n->pfn << PAGE_SHIFT | (paddr_t)i << 3;
		path->level[k] = level;
		if (!(e & PTE_P)) {
			path->entry[k] = e;
			return;
		}
		e |= PTE_A;
		if (is_leaf(e, level)) {
			if (write)
				e |= PTE_D;
			*sl = e;
			path->entry[k] = e;
			path->present = true;
			path->ps = leaf_size(level);
			path->pfn = pte_pfn(e);
			return;
		}
		*sl = e;
		path->entry[k] = e;
		n = n->child[i];
	}
	BUG_ON(1); /* level 1 entries are always leaves */
}

bool pt_walk_pte_slow(const struct pt_node *table, vaddr_t va, bool write, paddr_t *pa, pfn_t *pfn,
		      bool *rw)
{
	unsigned i = pt_index(va, 1);
	uint64_t *sl = slot(table, i), e = sl ? *sl : 0;

	BUG_ON(table->level != 1);
	if (!(e & PTE_P) || (write && !(e & PTE_RW)))
		return false;
	*sl = e | PTE_A | (write ? PTE_D : 0);
	*pa = (paddr_t)table->pfn << PAGE_SHIFT | (paddr_t)i << 3;
	*pfn = pte_pfn(e);
	*rw = e & PTE_RW;
	return true;
}

const struct pt_node *pt_table_at(const struct pagetable *pt, vaddr_t va, unsigned level)
{
	const struct pt_node *n = pt->root;

	for (unsigned l = pt->levels; l > level; l--) {
		unsigned i = pt_index(va, l);

		if (!(n->e[i] & PTE_P) || is_leaf(n->e[i], l))
			return NULL;
		n = n->child[i];
	}
	return n;
}

int pt_map(struct pagetable *pt, vaddr_t va, enum page_size ps, pfn_t pfn, bool writable)
{
	struct pt_node *n = pt->root;
	unsigned target = size_level(ps);
	unsigned i;

	for (unsigned level = pt->levels; level > target; level--) {
		i = pt_index(va, level);
		if (!(n->e[i] & PTE_P)) {
			struct pt_node *c = node_new(pt, level - 1);

			if (!c)
				return -1;
			n->child[i] = c;
			n->e[i] = (uint64_t)c->pfn << PAGE_SHIFT | PT_TABLE_FLAGS;
			n->used++;
			wrote(pt, n, va);
		}
		BUG_ON(is_leaf(n->e[i], level));
		n = n->child[i];
	}
	i = pt_index(va, target);
	BUG_ON(ent(n, i)); /* neither present nor a swap entry */
	BUG_ON(n->child && n->child[i]);
	if (ent_set(n, i, (uint64_t)pfn << PAGE_SHIFT | PTE_P | PTE_US | (writable ? PTE_RW : 0) |
			  (target > 1 ? PTE_PS : 0))) {
		pt->host_oom = true; /* giving a PT table its full array */
		return -1;
	}
	wrote(pt, n, va);
	pt->nr_leaves[ps]++;
	return 0;
}

/* The node holding the entry for @va at @level (which must exist). */
static struct pt_node *node_at(struct pagetable *pt, vaddr_t va, unsigned level)
{
	struct pt_node *n = pt->root;

	for (unsigned l = pt->levels; l > level; l--) {
		unsigned i = pt_index(va, l);

		BUG_ON(!(n->e[i] & PTE_P) || is_leaf(n->e[i], l));
		n = n->child[i];
	}
	return n;
}

void pt_split_pmd(struct pagetable *pt, vaddr_t va, pfn_t table_pfn, pfn_t zero_pfn)
{
	struct pt_node *pd = node_at(pt, va, 2), *t;
	unsigned i = pt_index(va, 2);
	uint64_t e = pd->e[i];
	uint64_t keep = e & (PTE_RW | PTE_A | PTE_D | PTE_US);

	BUG_ON(!(e & PTE_P) || !(e & PTE_PS));
	t = node_new_at(pt, 1, table_pfn);
	BUG_ON(!t || densify(t)); /* host OOM: nothing sensible to do mid-split */
	for (unsigned k = 0; k < PT_ENTRIES; k++) {
		if (zero_pfn != PFN_NONE)
			t->e[k] = (uint64_t)zero_pfn << PAGE_SHIFT | PTE_P | PTE_US | (e & PTE_A);
		else
			t->e[k] = (uint64_t)(pte_pfn(e) + k) << PAGE_SHIFT | PTE_P | keep;
	}
	t->used = PT_ENTRIES;
	pd->child[i] = t;
	pd->e[i] = (uint64_t)table_pfn << PAGE_SHIFT | PT_TABLE_FLAGS | PTE_A;
	wrote(pt, pd, va);
	pt->nr_leaves[PS_2M]--;
	pt->nr_leaves[PS_4K] += PT_ENTRIES;
}

pfn_t pt_collapse_pmd(struct pagetable *pt, vaddr_t va, pfn_t pfn, bool writable,
		      void (*fn)(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry),
		      void *ctx)
{
	struct pt_node *pd = node_at(pt, va, 2), *t;
	unsigned i = pt_index(va, 2);
	vaddr_t base = va & ~(PMD_SIZE - 1);
	pfn_t table;

	BUG_ON(!(pd->e[i] & PTE_P) || (pd->e[i] & PTE_PS));
	t = pd->child[i];
	for (unsigned pos = 0, k; next_used(t, &pos, &k);) {
		uint64_t e = ent(t, k);

		BUG_ON(!(e & PTE_P)); /* swap entries are swapped in first */
		if (fn)
			fn(ctx, base + ((vaddr_t)k << PAGE_SHIFT), PS_4K, pte_pfn(e), e);
		pt->nr_leaves[PS_4K]--;
	}
	table = t->pfn;
	free(t->child);
	free(t->e);
	free(t);
	pt->nr_tables--;
	pd->child[i] = NULL;
	pd->e[i] = (uint64_t)pfn << PAGE_SHIFT | PTE_P | PTE_US | PTE_PS | PTE_A |
		   (writable ? PTE_RW : 0);
	wrote(pt, pd, va);
	pt->nr_leaves[PS_2M]++;
	return table;
}

void pt_retract_pmd(struct pagetable *pt, vaddr_t va)
{
	struct pt_node *pd = node_at(pt, va, 2), *t;
	unsigned i = pt_index(va, 2);

	BUG_ON(!(pd->e[i] & PTE_P) || (pd->e[i] & PTE_PS));
	t = pd->child[i];
	BUG_ON(t->used); /* the caller emptied it */
	node_free(pt, t);
	pd->child[i] = NULL;
	ent_set(pd, i, 0); /* (an upper table: full, nothing moves) */
	wrote(pt, pd, va);
}

void pt_set_pte(struct pagetable *pt, vaddr_t va, pfn_t pfn, bool writable)
{
	struct pt_node *t = node_at(pt, va, 1);
	unsigned i = pt_index(va, 1);

	uint64_t *sl = slot(t, i);

	BUG_ON(!sl || !(*sl & PTE_P));
	*sl = (uint64_t)pfn << PAGE_SHIFT | PTE_P | PTE_US | PTE_A | (writable ? PTE_RW | PTE_D : 0);
	wrote(pt, t, va);
}

void pt_set_swap(struct pagetable *pt, vaddr_t va, uint64_t swp)
{
	struct pt_node *t = node_at(pt, va, 1);
	unsigned i = pt_index(va, 1);

	uint64_t *sl = slot(t, i);

	BUG_ON(!sl || !(*sl & PTE_P));
	*sl = swp << PAGE_SHIFT | PTE_SWP;
	pt->nr_leaves[PS_4K]--;
	pt->nr_swap++;
}

/* The PT node holding the PTE of @va, or NULL (no table there, or a huge leaf). */
static struct pt_node *pte_node(const struct pagetable *pt, vaddr_t va)
{
	struct pt_node *n = pt->root;

	for (unsigned l = pt->levels; l > 1; l--) {
		unsigned i = pt_index(va, l);

		if (!(n->e[i] & PTE_P) || is_leaf(n->e[i], l))
			return NULL;
		n = n->child[i];
	}
	return n;
}

bool pt_range_none(const struct pagetable *pt, vaddr_t va, unsigned nr)
{
	const struct pt_node *t = pte_node(pt, va);
	unsigned i0 = pt_index(va, 1);

	if (!t)
		return pt_slot_empty(pt, va, PS_2M);
	BUG_ON(i0 + nr > 512);
	for (unsigned i = i0; i < i0 + nr; i++)
		if (ent(t, i))
			return false;
	return true;
}

bool pt_get_swap(const struct pagetable *pt, vaddr_t va, uint64_t *swp)
{
	const struct pt_node *t = pte_node(pt, va);
	uint64_t e = t ? ent(t, pt_index(va, 1)) : 0;

	if (!e || (e & PTE_P))
		return false;
	*swp = pte_pfn(e);
	return true;
}

void pt_swap_in(struct pagetable *pt, vaddr_t va, pfn_t pfn, bool writable)
{
	struct pt_node *t = pte_node(pt, va);
	unsigned i = pt_index(va, 1);

	uint64_t *sl = t ? slot(t, i) : NULL;

	BUG_ON(!sl || !*sl || (*sl & PTE_P));
	*sl = (uint64_t)pfn << PAGE_SHIFT | PTE_P | PTE_US | (writable ? PTE_RW : 0);
	wrote(pt, t, va);
	pt->nr_swap--;
	pt->nr_leaves[PS_4K]++;
}

int pt_map_swap(struct pagetable *pt, vaddr_t va, uint64_t swp)
{
	struct pt_node *t;
	unsigned i = pt_index(va, 1);

	/* map a placeholder frame to build the tables, then turn it into the entry */
	if (pt_map(pt, va, PS_4K, 0, false))
		return -1;
	t = pte_node(pt, va);
	*slot(t, i) = swp << PAGE_SHIFT | PTE_SWP;
	wrote(pt, t, va);
	pt->nr_leaves[PS_4K]--;
	pt->nr_swap++;
	return 0;
}

uint64_t pt_clear_leaf_bits(struct pagetable *pt, vaddr_t va, uint64_t bits)
{
	struct pt_node *n = pt->root;

	for (unsigned level = pt->levels; level >= 1; level--) {
		unsigned i = pt_index(va, level);
		uint64_t *sl = slot(n, i), e = sl ? *sl : 0;

		if (!(e & PTE_P))
			return 0;
		if (is_leaf(e, level)) {
			if (e & bits) {
				*sl = e & ~bits;
				wrote(pt, n, va);
			}
			return e;
		}
		n = n->child[i];
	}
	return 0;
}

bool pt_test_clear_young(struct pagetable *pt, vaddr_t va)
{
	struct pt_node *n = pt->root;

	for (unsigned level = pt->levels; level >= 1; level--) {
		unsigned i = pt_index(va, level);
		uint64_t *sl = slot(n, i), e = sl ? *sl : 0;

		if (!(e & PTE_P))
			return false;
		if (is_leaf(e, level)) {
			*sl = e & ~PTE_A;
			if (e & PTE_A)
				wrote(pt, n, va);
			return e & PTE_A;
		}
		n = n->child[i];
	}
	return false;
}

static void swaps_rec(const struct pt_node *n, vaddr_t base,
		      void (*fn)(void *, vaddr_t, uint64_t), void *ctx)
{
	uint64_t step = 1ULL << level_shift(n->level);

	for (unsigned pos = 0, i; next_used(n, &pos, &i);) {
		uint64_t e = ent(n, i);

		if (!(e & PTE_P))
			fn(ctx, base + i * step, pte_pfn(e));
		else if (!is_leaf(e, n->level))
			swaps_rec(n->child[i], base + i * step, fn, ctx);
	}
}

void pt_for_each_swap(const struct pagetable *pt, void (*fn)(void *ctx, vaddr_t va, uint64_t slot),
		      void *ctx)
{
	swaps_rec(pt->root, 0, fn, ctx);
}

bool pt_lookup(const struct pagetable *pt, vaddr_t va, enum page_size *ps, pfn_t *pfn,
	       uint64_t *entry)
{
	const struct pt_node *n = pt->root;

	for (unsigned level = pt->levels; level >= 1; level--) {
		uint64_t e = ent(n, pt_index(va, level));

		if (!(e & PTE_P))
			return false;
		if (is_leaf(e, level)) {
			if (ps)
				*ps = leaf_size(level);
			if (pfn)
				*pfn = pte_pfn(e);
			if (entry)
				*entry = e;
			return true;
		}
		n = n->child[pt_index(va, level)];
	}
	return false;
}

bool pt_slot_empty(const struct pagetable *pt, vaddr_t va, enum page_size ps)
{
	const struct pt_node *n = pt->root;
	unsigned target = size_level(ps);

	for (unsigned level = pt->levels; level > target; level--) {
		uint64_t e = n->e[pt_index(va, level)];

		if (!(e & PTE_P))
			return true;
		if (is_leaf(e, level))
			return false;
		n = n->child[pt_index(va, level)];
	}
	return !ent(n, pt_index(va, target)); /* a swap entry is not empty */
}

struct unmap_ctx {
	struct pagetable *pt;
	vaddr_t start, end;
	bool free_tables;
	void (*fn)(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry);
	void *ctx;
	uint64_t cleared;
};

/* Walk node @n covering [base, base + span) and clear leaves inside [start, end). */
static void unmap_rec(struct unmap_ctx *u, struct pt_node *n, vaddr_t base)
{
	uint64_t step = 1ULL << level_shift(n->level);

	for (unsigned pos = 0, i; n->used && next_used(n, &pos, &i);) {
		vaddr_t lo = base + i * step, hi = lo + step;
		uint64_t e = ent(n, i);

		if (hi <= u->start || lo >= u->end)
			continue;
		if (!(e & PTE_P)) { /* a swap entry (level 1 only) */
			if (u->fn)
				u->fn(u->ctx, lo, PS_4K, PFN_NONE, e);
			ent_set(n, i, 0);
			wrote(u->pt, n, lo);
			unused_back(n, &pos);
			u->pt->nr_swap--;
			continue;
		}
		if (is_leaf(e, n->level)) {
			if (lo < u->start || hi > u->end)
				continue; /* straddles: the caller splits first */
			if (u->fn)
				u->fn(u->ctx, lo, leaf_size(n->level), pte_pfn(e), e);
			ent_set(n, i, 0);
			wrote(u->pt, n, lo);
			unused_back(n, &pos);
			u->pt->nr_leaves[leaf_size(n->level)]--;
			u->cleared++;
			continue;
		}
		unmap_rec(u, n->child[i], lo);
		if (u->free_tables && !n->child[i]->used) {
			node_free(u->pt, n->child[i]);
			n->child[i] = NULL;
			ent_set(n, i, 0); /* (an upper table: full, nothing moves) */
			wrote(u->pt, n, lo);
		}
	}
}

uint64_t pt_unmap_range(struct pagetable *pt, vaddr_t start, vaddr_t end, bool free_tables,
			void (*fn)(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn,
				   uint64_t entry),
			void *ctx)
{
	struct unmap_ctx u = { pt, start, end, free_tables, fn, ctx, 0 };

	if (end > start)
		unmap_rec(&u, pt->root, 0);
	return u.cleared;
}

static uint64_t protect_rec(const struct pagetable *pt, struct pt_node *n, vaddr_t base, vaddr_t start, vaddr_t end,
			    bool writable, pfn_t ro_a, pfn_t ro_b, struct pt_span *sp)
{
	uint64_t step = 1ULL << level_shift(n->level), changed = 0;

	for (unsigned pos = 0, i; next_used(n, &pos, &i);) {
		vaddr_t lo = base + i * step, hi = lo + step;
		uint64_t *sl = slot(n, i), e = *sl;

		if (hi <= start || lo >= end || !(e & PTE_P))
			continue;
		if (is_leaf(e, n->level)) {
			bool w = writable && pte_pfn(e) != ro_a && pte_pfn(e) != ro_b;
			uint64_t ne = w ? (e | PTE_RW) : (e & ~PTE_RW);

			if (lo < start || hi > end || ne == e)
				continue;
			changed++;
			*sl = ne;
			wrote(pt, n, lo);
			if (sp)
				pt_span_add(sp, lo, leaf_size(n->level));
		} else {
			changed += protect_rec(pt, n->child[i], lo, start, end, writable, ro_a, ro_b, sp);
		}
	}
	return changed;
}

uint64_t pt_protect_range_span(struct pagetable *pt, vaddr_t start, vaddr_t end, bool writable,
			       pfn_t ro_a, pfn_t ro_b, struct pt_span *sp)
{
	return end > start ? protect_rec(pt, pt->root, 0, start, end, writable, ro_a, ro_b, sp) : 0;
}

uint64_t pt_protect_range(struct pagetable *pt, vaddr_t start, vaddr_t end, bool writable,
			  pfn_t ro_a, pfn_t ro_b)
{
	return pt_protect_range_span(pt, start, end, writable, ro_a, ro_b, NULL);
}

struct free_ctx {
	struct pagetable *pt;
	vaddr_t start, end, floor, ceiling;
	uint64_t freed;
};

static void free_tables_rec(struct free_ctx *f, struct pt_node *n, vaddr_t base)
{
	uint64_t step = 1ULL << level_shift(n->level);

	if (n->level == 1)
		return;
	for (unsigned pos = 0, i; n->used && next_used(n, &pos, &i);) {
		vaddr_t lo = base + i * step, hi = lo + step;

		if (hi <= f->start || lo >= f->end || !n->child || !n->child[i])
			continue;
		free_tables_rec(f, n->child[i], lo);
		if (!n->child[i]->used && lo >= f->floor && hi - 1 <= f->ceiling - 1) {
			node_free(f->pt, n->child[i]);
			n->child[i] = NULL;
			ent_set(n, i, 0);
			wrote(f->pt, n, lo);
			unused_back(n, &pos);
			f->freed++;
		}
	}
}

uint64_t pt_free_tables(struct pagetable *pt, vaddr_t start, vaddr_t end, vaddr_t floor,
			vaddr_t ceiling)
{
	struct free_ctx f = { pt, start, end, floor, ceiling, 0 };

	if (end > start)
		free_tables_rec(&f, pt->root, 0);
	return f.freed;
}

static void change_prot_rec(const struct pagetable *pt, struct pt_node *n, vaddr_t base,
			    vaddr_t start, vaddr_t end, const struct pt_prot_change *pc)
{
	uint64_t step = 1ULL << level_shift(n->level);

	for (unsigned pos = 0, i; next_used(n, &pos, &i);) {
		vaddr_t lo = base + i * step, hi = lo + step;
		uint64_t *sl = slot(n, i), e = *sl, ne;

		if (hi <= start || lo >= end || !(e & PTE_P))
			continue;
		if (!is_leaf(e, n->level)) {
			change_prot_rec(pt, n->child[i], lo, start, end, pc);
			continue;
		}
		if (lo < start || hi > end)
			continue;
		ne = pc->writable(pc->ctx, leaf_size(n->level), pte_pfn(e), e) ? (e | PTE_RW)
										: (e & ~PTE_RW);
		if (ne != e) {
			*sl = ne;
			wrote(pt, n, lo);
		}
		if (pc->sp && (pc->flush == PT_FLUSH_PRESENT || (pc->flush == PT_FLUSH_CHANGED && ne != e)))
			pt_span_add(pc->sp, lo, leaf_size(n->level));
	}
}

void pt_change_prot(struct pagetable *pt, vaddr_t start, vaddr_t end, const struct pt_prot_change *pc)
{
	if (end > start)
		change_prot_rec(pt, pt->root, 0, start, end, pc);
}

static void leaves_rec(const struct pt_node *n, vaddr_t base,
		       void (*fn)(void *, vaddr_t, enum page_size, pfn_t, uint64_t), void *ctx)
{
	uint64_t step = 1ULL << level_shift(n->level);

	for (unsigned pos = 0, i; next_used(n, &pos, &i);) {
		uint64_t e = ent(n, i);

		if (!(e & PTE_P))
			continue;
		if (is_leaf(e, n->level))
			fn(ctx, base + i * step, leaf_size(n->level), pte_pfn(e), e);
		else
			leaves_rec(n->child[i], base + i * step, fn, ctx);
	}
}

void pt_for_each_leaf(const struct pagetable *pt,
		      void (*fn)(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn,
				 uint64_t entry),
		      void *ctx)
{
	leaves_rec(pt->root, 0, fn, ctx);
}

static void tables_rec(const struct pt_node *n, void (*fn)(void *, pfn_t, unsigned), void *ctx)
{
	fn(ctx, n->pfn, n->level);
	if (n->child)
		for (unsigned i = 0; i < PT_ENTRIES; i++)
			if (n->child[i])
				tables_rec(n->child[i], fn, ctx);
}

void pt_for_each_table(const struct pagetable *pt, void (*fn)(void *ctx, pfn_t pfn, unsigned level),
		       void *ctx)
{
	tables_rec(pt->root, fn, ctx);
}

static void check_rec(const struct pt_node *n, uint64_t *tables, uint64_t leaves[PS_NR],
		      uint64_t *swaps)
{
	unsigned used = 0;

	(*tables)++;
	if (!n->e) {
		/* sparse: a PT table; indices ascending, every kept entry non-zero */
		BUG_ON(n->level != 1 || n->child || n->used > PT_SPARSE);
		for (unsigned k = 0; k < n->used; k++)
			BUG_ON(n->sidx[k] >= PT_ENTRIES || !n->sval[k] ||
			       (k && n->sidx[k] <= n->sidx[k - 1]));
	} else if (n->child) {
		for (unsigned i = 0; i < PT_ENTRIES; i++)
			BUG_ON(n->child[i] && !(n->e[i] & PTE_P)); /* no table behind a hole */
	}
	for (unsigned pos = 0, i; next_used(n, &pos, &i);) {
		uint64_t e = ent(n, i);

		BUG_ON(!e);
		used++;
		if (!(e & PTE_P)) {
			BUG_ON(n->child && n->child[i]);
			/* only PTEs hold swap entries, and only those bits */
			BUG_ON(n->level != 1 || !(e & PTE_SWP) || (e & ~(PTE_PFN_MASK | PTE_SWP)));
			(*swaps)++;
			continue;
		}
		if (is_leaf(e, n->level)) {
			BUG_ON(n->level > 3);          /* no leaves above the PDPT */
			BUG_ON(n->child && n->child[i]);
			BUG_ON(n->level > 1 && (pte_pfn(e) & ((1ULL << (9 * (n->level - 1))) - 1)));
			leaves[leaf_size(n->level)]++;
		} else {
			BUG_ON(!n->child[i]);
			BUG_ON(n->child[i]->level != n->level - 1);
			BUG_ON(pte_pfn(e) != n->child[i]->pfn);
			check_rec(n->child[i], tables, leaves, swaps);
		}
	}
	BUG_ON(used != n->used);
}

void pt_check_invariants(const struct pagetable *pt)
{
	uint64_t tables = 0, leaves[PS_NR] = { 0 }, swaps = 0;

	check_rec(pt->root, &tables, leaves, &swaps);
	BUG_ON(tables != pt->nr_tables);
	BUG_ON(swaps != pt->nr_swap);
	for (int i = 0; i < PS_NR; i++)
		BUG_ON(leaves[i] != pt->nr_leaves[i]);
}
