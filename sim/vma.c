/*
 * vma.c - VMAs of one mm (Linux mm/mmap.c, mm/vma.c: split_vma(), vma_merge()).
 *
 * A sorted array searched by binary search: look-ups happen on faults and events
 * only, never per reference, and real processes have tens to thousands of VMAs,
 * so the kernel's maple tree would buy nothing here.
 *
 * Merging follows vma_merge()'s rule for anonymous memory in the part that matters
 * to this model: adjacent VMAs with identical flags become one, whether or not
 * each has an anon_vma (VM_ANON_VMA; its identity is not modelled, so two VMAs
 * that each got their own anon_vma merge here where the kernel keeps them apart;
 * file mappings merge only when they map the same file at contiguous offsets,
 * as vma_merge()'s file and vm_pgoff tests ask).
 */
#include <stdlib.h>
#include <string.h>

#include "vma.h"

void vma_set_init(struct vma_set *s)
{
	memset(s, 0, sizeof(*s));
}

void vma_set_free(struct vma_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Index of the first VMA with end > va (n if none). */
static size_t first_ending_after(const struct vma_set *s, vaddr_t va)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->v[mid].end > va)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

struct vma *vma_find(const struct vma_set *s, vaddr_t va)
{
	size_t i = first_ending_after(s, va);

	return i < s->n && s->v[i].start <= va ? &s->v[i] : NULL;
}

struct vma *vma_find_next(const struct vma_set *s, vaddr_t va)
{
	size_t i = first_ending_after(s, va);

	return i < s->n ? &s->v[i] : NULL;
}

void vma_gap(const struct vma_set *s, vaddr_t va, vaddr_t limit, vaddr_t *lo, vaddr_t *hi)
{
	size_t i = first_ending_after(s, va);

	*lo = i ? s->v[i - 1].end : 0;
	*hi = i < s->n ? s->v[i].start : limit;
	if (*hi > limit)
		*hi = limit;
}

static int reserve(struct vma_set *s, size_t extra)
{
	if (s->n + extra > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct vma *v;

		while (cap < s->n + extra)
			cap *= 2;
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	return 0;
}

/*
 * vma_merge()'s test for two neighbours: equal flags, anon_vma aside: one VMA
 * with an anon_vma and one without merge (is_mergeable_anon_vma(); one mm, no
 * fork), and the result has it.
 */
static bool mergeable(const struct vma *a, const struct vma *b)
{
	return a->end == b->start && !((a->flags ^ b->flags) & ~VM_ANON_VMA) && a->file == b->file &&
	       (!a->file || a->pgoff + ((a->end - a->start) >> PAGE_SHIFT) == b->pgoff);
}

static void merge_around(struct vma_set *s, size_t i)
{
	/* with the next */
	if (i + 1 < s->n && mergeable(&s->v[i], &s->v[i + 1])) {
		s->v[i].end = s->v[i + 1].end;
		s->v[i].flags |= s->v[i + 1].flags;
		memmove(&s->v[i + 1], &s->v[i + 2], (s->n - i - 2) * sizeof(*s->v));
		s->n--;
	}
	/* with the previous */
	if (i > 0 && mergeable(&s->v[i - 1], &s->v[i])) {
		s->v[i - 1].end = s->v[i].end;
		s->v[i - 1].flags |= s->v[i].flags;
		memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
		s->n--;
	}
}

int vma_insert(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long flags)
{
	return vma_insert_file(s, start, end, flags, 0, 0);
}

int vma_insert_file(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long flags,
		    uint32_t file, uint64_t pgoff)
{
	struct vma nv = { start, end, flags, file, file ? pgoff : 0 };
	bool with_prev, with_next;
	size_t i;

	BUG_ON(start >= end || (start | end) & (PAGE_SIZE - 1));
	i = first_ending_after(s, start);
	BUG_ON(i < s->n && s->v[i].start < end);
	/*
	 * A range that merges with a neighbour takes no slot of its own (the
	 * result merge_around() gives, without its two moves of the array's
	 * tail: os.profile osless maps each page of a GUPS-style trace without
	 * mmap lines as its own implicit VMA, and those moves were 15 % of its
	 * instructions, callgrind).
	 */
	with_prev = i > 0 && mergeable(&s->v[i - 1], &nv);
	with_next = i < s->n && mergeable(&nv, &s->v[i]);
	if (with_prev && with_next) {
		s->v[i - 1].end = s->v[i].end;
		s->v[i - 1].flags |= nv.flags | s->v[i].flags;
		memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
		s->n--;
		return 0;
	}
	if (with_prev) {
		s->v[i - 1].end = end;
		s->v[i - 1].flags |= nv.flags;
		return 0;
	}
	if (with_next) {
		nv.end = s->v[i].end;
		nv.flags |= s->v[i].flags;
		s->v[i] = nv;
		return 0;
	}
	if (reserve(s, 1))
		return -1;
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->v[i] = nv;
	s->n++;
	return 0;
}

/* split_vma(): make @addr a boundary if it falls strictly inside a VMA. */
static int split_at(struct vma_set *s, vaddr_t addr)
{
	size_t i = first_ending_after(s, addr);

	if (i >= s->n || s->v[i].start >= addr)
		return 0;
	if (reserve(s, 1))
		return -1;
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->n++;
	s->v[i].end = addr;
	s->v[i + 1].start = addr;
	if (s->v[i + 1].file)
		s->v[i + 1].pgoff += (addr - s->v[i].start) >> PAGE_SHIFT;
	return 0;
}

int vma_remove(struct vma_set *s, vaddr_t start, vaddr_t end)
{
	size_t i, j;

	if (start >= end)
		return 0;
	if (split_at(s, start) || split_at(s, end))
		return -1;
	i = first_ending_after(s, start);
	for (j = i; j < s->n && s->v[j].start < end; j++)
		;
	if (j > i) {
		memmove(&s->v[i], &s->v[j], (s->n - j) * sizeof(*s->v));
		s->n -= j - i;
	}
	return 0;
}

int vma_change_flags(struct vma_set *s, vaddr_t start, vaddr_t end, unsigned long set,
		     unsigned long clear)
{
	size_t i;

	if (start >= end)
		return 0;
	if (split_at(s, start) || split_at(s, end))
		return -1;
	for (i = first_ending_after(s, start); i < s->n && s->v[i].start < end; i++)
		s->v[i].flags = (s->v[i].flags & ~clear) | set;
	/* merge pass over the touched neighbourhood */
	i = first_ending_after(s, start);
	if (i > 0)
		i--;
	while (i < s->n && s->v[i].start <= end) {
		size_t before = s->n;

		merge_around(s, i);
		if (s->n == before)
			i++;
		else if (i > 0)
			i--;
	}
	return 0;
}

void vma_check_invariants(const struct vma_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct vma *v = &s->v[i];

		BUG_ON(v->start >= v->end);
		BUG_ON((v->start | v->end) & (PAGE_SIZE - 1));
		if (i) {
			BUG_ON(s->v[i - 1].end > v->start);
			BUG_ON(mergeable(&s->v[i - 1], v));
		}
	}
}
