/*
 * layout.c - the kernel's layout (os.layout: kernel): a traced program's
 * mappings where Linux would have put them, not where Valgrind did.
 *
 * Valgrind places every mapping of its client itself (the program at 0x108000,
 * ld.so at 0x4000000, the stack near 0x1fff000000, hint-less mmaps wherever its
 * address-space manager likes), and a hint-less 64 MiB mmap that Linux puts on a
 * 2 MiB boundary lands 2 MiB-misaligned: 543 faults and 31 THPs instead of 32
 * and 32. This file keeps two maps while the trace is read:
 *  - the translation, trace address -> kernel address, one segment per mapping
 *    (struct layout_seg, a constant difference each);
 *  - the kernel's address space (which ranges its VMAs cover), where every
 *    mapping the program did not fix is placed as Linux 6.x places it, and every
 *    reference inside the mapping is moved by the same difference.
 * Events come out with kernel addresses; references likewise (layout_va()). The
 * simulator never sees a trace address of a moved mapping.
 *
 * Rules, x86-64 with 4-level paging, address-space randomization off
 * (personality(ADDR_NO_RANDOMIZE), `setarch -R`, as gdb runs programs):
 *  - mmap_base = TASK_SIZE - clamp(RLIMIT_STACK + stack_guard_gap, 128 MiB,
 *    TASK_SIZE / 6 * 5) = 0x7ffff7fff000 with the 8 MiB default stack limit
 *    (arch/x86/mm/mmap.c mmap_base(), _STK_LIM, stack_guard_gap = 256 pages);
 *    every search is top-down below it (arch_get_unmapped_area_topdown(),
 *    vm_unmapped_area(): the highest gap of length + align_mask, low limit
 *    PAGE_SIZE).
 *  - __get_unmapped_area() (mm/mmap.c): MAP_FIXED takes the address; a hint is
 *    taken if free (round_hint_to_min(), mmap_min_addr 4096, Kconfig's default);
 *    a private anonymous mapping goes through __thp_get_unmapped_area() with a
 *    2 MiB alignment when kernel_thp_aligns_mmap() says so (efa7df3e3bb5, 6.7:
 *    >= 2 MiB; d4148aeab412, 6.12: lengths that are multiples of 2 MiB;
 *    4e51afe5ebaa, 6.13: only without a hint); a file mapping too, whatever the
 *    release (ext4's and xfs's f_op->get_unmapped_area is
 *    thp_get_unmapped_area(), non-DAX since 1854bc6e2420, 5.18), relative to its
 *    file offset; the padded area's top is used when already aligned from 6.8
 *    (912c9769cad6). MAP_SHARED anonymous memory is shmem's
 *    (shmem_get_unmapped_area()), which with shmem_enabled=never (the default)
 *    does not align; MAP_HUGETLB aligns to its page size
 *    (hugetlb_get_unmapped_area()).
 *  - exec (fs/binfmt_elf.c load_elf_binary(), setup_arg_pages()): the stack VMA
 *    ends at STACK_TOP 0x7ffffffff000 and spans its argument pages plus 128 KiB
 *    (stack_expand); a PIE program is loaded at ELF_ET_DYN_BASE 0x555555554000
 *    (2/3 of DEFAULT_MAP_WINDOW), a non-PIE one at its own address; the heap
 *    starts at the page after the program's bss (mm->start_brk); the
 *    interpreter (ld.so) is mapped top-down from mmap_base as one span, then the
 *    vDSO below it (map_vdso(): a hint of 0, or vdso_addr()'s hint above the
 *    stack, which without randomization is past TASK_SIZE and so ignored): 6
 *    pages up to 6.12 ([vvar] 4, [vdso] 2: vdso-layout.lds.S), 8 in 6.18
 *    ([vvar] 4, [vvar_vclock] 2, [vdso] 2, /proc/self/maps on this machine).
 *  - mremap (mm/mremap.c): shrinking stays; growing stays if the kernel's range
 *    after the mapping is free (vma_expandable()), else moves (MREMAP_MAYMOVE)
 *    to get_unmapped_area() of the new length.
 * Which initial mapping is what: the lowest file mapping is the program (PIE if
 * Valgrind loaded it below 0x400000, the x86-64 linkers' lowest non-PIE
 * address, as it loads PIEs at 0x108000), an anonymous mapping right after a
 * file's is its bss, other file mappings are the interpreter's; [stack], [heap]
 * and [vdso] are named. Valgrind's own files (its tool, vgpreload_*.so) stay at
 * their addresses: Linux would not have them.
 *
 * Simplifications, each with its reason:
 *  - No randomization: a randomized layout differs from run to run; a fixed one
 *    is what a comparison with the real kernel can reproduce (run it under
 *    `setarch -R`).
 *  - The program's PT_LOAD alignment is taken as 4 KiB (binutils' x86-64
 *    default since 2.31); a larger p_align would round ELF_ET_DYN_BASE down
 *    (maximum_alignment()). The trace does not carry program headers.
 *  - A mapping the program placed itself (MAP_FIXED, a hint honoured) keeps its
 *    address unless it lies inside a mapping that moved, whose difference it
 *    then takes; a call whose range covers mappings that moved apart becomes one
 *    call per piece. A mapping Linux could not have grown in place without
 *    MREMAP_MAYMOVE (the call would have failed) is moved as if allowed.
 *  - An mremap of a file mapping that moves is placed as offset 0 of its file.
 *  - Guard gaps are not applied: nothing grows down inside the mmap area (the
 *    stack is 128 MiB above mmap_base).
 */
#include <stdlib.h>
#include <string.h>

#include "layout.h"

#define PAGE 4096ULL
#define PMD (2ULL << 20)
#define TASK_SIZE 0x7ffffffff000ULL	/* DEFAULT_MAP_WINDOW, 47 bits less a page */
#define STACK_TOP TASK_SIZE
#define STACK_EXPAND (128ULL << 10)	/* setup_arg_pages(): stack_expand */
#define STACK_LIMIT (8ULL << 20)	/* _STK_LIM: RLIMIT_STACK's default */
#define STACK_GUARD_GAP (256 * PAGE)	/* mm/mmap.c stack_guard_gap */
#define MMAP_GAP_MIN (128ULL << 20)	/* arch/x86/mm/mmap.c SIZE_128M */
#define MMAP_MIN_ADDR 4096ULL		/* CONFIG_DEFAULT_MMAP_MIN_ADDR's default */
#define ELF_ET_DYN_BASE 0x555555554000ULL /* (DEFAULT_MAP_WINDOW / 3 * 2) & PAGE_MASK */
#define NONPIE_MIN 0x400000ULL		/* ld's default -Ttext-segment on x86-64 */
#define MAP_FIXED_NOREPLACE_ 0x100000
#define MAP_HUGE_SHIFT_ 26

enum { L_ANON = 0, L_HEAP = -1, L_STACK = -2, L_VDSO = -3 }; /* else 1 + a file index */

struct lset {
	struct layout_seg *r; /* sorted by start, disjoint */
	size_t n, cap;
};

struct layout {
	struct layout_hot hot; /* first: layout_va() reads it */
	enum os_kernel kernel;
	struct lset seg; /* trace -> kernel: delta */
	struct lset vma; /* the kernel's address space: delta holds the L_* label */
	vaddr_t mmap_base;
	vaddr_t stack_t;     /* the initial stack's trace start (its event is widened) */
	uint64_t stack_len;  /* and the kernel's length for it */
	vaddr_t heap_k;      /* the kernel's start_brk (0: the trace's) */
	bool have_brk;
	vaddr_t brk_t0, brk_k0, brk_t; /* the first break (trace, kernel) and the current */
	const struct trace_reader *src; /* its files (growing) */
	struct os_event *out;
	size_t nout, capout;
};

static inline vaddr_t page_up(vaddr_t a)
{
	return (a + PAGE - 1) & ~(PAGE - 1);
}

/* ---------------------------------------------------------------- range sets */

/* The first range ending above @a. */
static size_t lset_first(const struct lset *s, vaddr_t a)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->r[mid].end > a)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int lset_insert_at(struct lset *s, size_t i, struct layout_seg v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;
		struct layout_seg *r = realloc(s->r, cap * sizeof(*r));

		if (!r)
			return -1;
		s->r = r;
		s->cap = cap;
	}
	if (i < s->n)
		memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
	s->r[i] = v;
	s->n++;
	return 0;
}

/* Remove [a, b) from @s, splitting the ranges across its edges. */
static int lset_cut(struct lset *s, vaddr_t a, vaddr_t b)
{
	size_t i, j;

	if (a >= b)
		return 0;
	i = lset_first(s, a);
	if (i < s->n && s->r[i].start < a && s->r[i].end > b) {
		struct layout_seg hi = s->r[i];

		hi.start = b;
		s->r[i].end = a;
		return lset_insert_at(s, i + 1, hi);
	}
	if (i < s->n && s->r[i].start < a)
		s->r[i++].end = a;
	for (j = i; j < s->n && s->r[j].end <= b; j++)
		;
	if (j < s->n && s->r[j].start < b)
		s->r[j].start = b;
	if (j > i) {
		memmove(&s->r[i], &s->r[j], (s->n - j) * sizeof(*s->r));
		s->n -= j - i;
	}
	return 0;
}

/* [a, b) replaces whatever @s had there. */
static int lset_put(struct lset *s, vaddr_t a, vaddr_t b, int64_t v)
{
	if (a >= b)
		return 0;
	if (lset_cut(s, a, b))
		return -1;
	return lset_insert_at(s, lset_first(s, a), (struct layout_seg){ a, b, v });
}

/* The range holding @a, or NULL. */
static const struct layout_seg *lset_at(const struct lset *s, vaddr_t a)
{
	size_t i = lset_first(s, a);

	return i < s->n && s->r[i].start <= a ? &s->r[i] : NULL;
}

static bool lset_free(const struct lset *s, vaddr_t a, vaddr_t b)
{
	size_t i = lset_first(s, a);

	return i == s->n || s->r[i].start >= b;
}

/* ---------------------------------------------------------------- translation */

const struct layout_seg *layout_seg_slow(struct layout *l, vaddr_t va)
{
	struct layout_seg *e = &l->hot.e[(va >> 12) % LAYOUT_HOT];
	size_t i = lset_first(&l->seg, va);

	if (i < l->seg.n && l->seg.r[i].start <= va) {
		*e = l->seg.r[i];
	} else { /* a gap: the trace's own address, cached as a segment of difference 0 */
		e->start = i ? l->seg.r[i - 1].end : 0;
		e->end = i < l->seg.n ? l->seg.r[i].start : ~(vaddr_t)0;
		e->delta = 0;
	}
	return e;
}

/* The segments changed: forget every cached one. */
static void hot_reset(struct layout *l)
{
	memset(&l->hot, 0, sizeof(l->hot));
}

/* The difference of the trace address @a: its segment's, 0 outside every one. */
static int64_t delta_at(const struct layout *l, vaddr_t a)
{
	const struct layout_seg *s = lset_at(&l->seg, a);

	return s ? s->delta : 0;
}

/* ---------------------------------------------------------------- placement */

/* vm_unmapped_area() top-down: the highest gap of len + mask below mmap_base. 0: none. */
static vaddr_t unmapped_topdown(const struct layout *l, uint64_t len, uint64_t mask, uint64_t off)
{
	vaddr_t high = l->mmap_base, low = PAGE;
	size_t i = lset_first(&l->vma, high - 1);

	if (len + mask < len)
		return 0;
	for (;;) {
		vaddr_t ge = i < l->vma.n && l->vma.r[i].start < high ? l->vma.r[i].start : high;
		vaddr_t gs = i ? l->vma.r[i - 1].end : 0;

		if (gs < low)
			gs = low;
		if (ge > gs && ge - gs >= len + mask) {
			vaddr_t a = ge - len;

			return a - ((a - off) & mask);
		}
		if (!i || ge <= low)
			return 0;
		i--;
	}
}

/* arch_get_unmapped_area_topdown(): the hint if free, else the top-down search. */
static vaddr_t get_area(const struct layout *l, vaddr_t hint, uint64_t len, uint64_t mask)
{
	if (hint && !(hint & mask) && hint <= TASK_SIZE - len && len <= TASK_SIZE &&
	    lset_free(&l->vma, hint, hint + len))
		return hint;
	return unmapped_topdown(l, len, mask, 0);
}

/* __thp_get_unmapped_area(): 0 when it does not apply (the caller searches plainly). */
static vaddr_t thp_area(const struct layout *l, vaddr_t hint, uint64_t len, uint64_t off)
{
	uint64_t off_end = off + len, off_align = (off + PMD - 1) & ~(PMD - 1), sub;
	vaddr_t ret;

	if (off_end <= off_align || off_end - off_align < PMD)
		return 0;
	ret = get_area(l, hint, len + PMD, 0);
	if (!ret)
		return 0;
	if (ret == hint)
		return hint;
	sub = (off - ret) & (PMD - 1);
	if (l->kernel >= KERNEL_6_8 && !sub) /* 912c9769cad6: honour the top-down preference */
		return ret + PMD;
	return ret + sub;
}

/* __get_unmapped_area() for a mapping that is not MAP_FIXED; 0 if nothing fits. */
static vaddr_t place(const struct layout *l, bool file, uint64_t flags, vaddr_t hint, uint64_t len,
		     uint64_t off)
{
	vaddr_t a = 0;

	hint &= ~(PAGE - 1);
	if (hint && hint < MMAP_MIN_ADDR) /* round_hint_to_min() */
		hint = MMAP_MIN_ADDR;
	if (flags & MAP_HUGETLB_) { /* hugetlb_get_unmapped_area() */
		unsigned shift = (flags >> MAP_HUGE_SHIFT_) & 0x3f;
		uint64_t size = shift ? 1ULL << shift : PMD;

		hint = (hint + size - 1) & ~(size - 1);
		return get_area(l, hint, len, (size - 1) & ~(PAGE - 1));
	}
	if (file)
		a = thp_area(l, hint, len, off);
	else if (!(flags & MAP_SHARED_) && kernel_thp_aligns_mmap(l->kernel, len) &&
		 (l->kernel < KERNEL_6_18 || !hint)) /* 4e51afe5ebaa (6.13): hints are not aligned */
		a = thp_area(l, hint, len, 0);
	return a ? a : get_area(l, hint, len, 0);
}

/* ---------------------------------------------------------------- events out */

static struct os_event *emit(struct layout *l, const struct os_event *ev)
{
	if (l->nout == l->capout) {
		size_t cap = l->capout ? 2 * l->capout : 8;
		struct os_event *o = realloc(l->out, cap * sizeof(*o));

		if (!o)
			return NULL;
		l->out = o;
		l->capout = cap;
	}
	l->out[l->nout] = *ev;
	return &l->out[l->nout++];
}

/* The piece of the trace range [a, b) from @a on that moves by one difference. */
static vaddr_t piece_end(const struct layout *l, vaddr_t a, vaddr_t b, int64_t *d)
{
	size_t i = lset_first(&l->seg, a);
	vaddr_t e;

	if (i < l->seg.n && l->seg.r[i].start <= a) {
		*d = l->seg.r[i].delta;
		e = l->seg.r[i].end;
		/* the next segments with the same difference continue the piece */
		while (++i < l->seg.n && l->seg.r[i].start == e && l->seg.r[i].delta == *d && e < b)
			e = l->seg.r[i].end;
	} else {
		*d = 0;
		e = i < l->seg.n ? l->seg.r[i].start : b;
	}
	return e < b ? e : b;
}

/* munmap, mprotect, madvise, mlock, munlock: one call per piece; munmap forgets what it covered. */
static int range_call(struct layout *l, const struct os_event *ev)
{
	vaddr_t a = ev->addr, b = ev->addr + page_up(ev->len);

	if (b < a)
		b = ~(vaddr_t)0 & ~(PAGE - 1);
	if (!ev->len) { /* a no-op for the kernel too; at the address it would have named */
		struct os_event *o = emit(l, ev);

		if (!o)
			return -1;
		o->addr = a + (vaddr_t)delta_at(l, a);
		return 0;
	}
	while (a < b) {
		int64_t d;
		vaddr_t e = piece_end(l, a, b, &d);
		struct os_event *o = emit(l, ev);

		if (!o)
			return -1;
		o->addr = a + (vaddr_t)d;
		o->len = e - a;
		if (ev->kind == EV_MUNMAP && lset_cut(&l->vma, a + (vaddr_t)d, e + (vaddr_t)d))
			return -1;
		a = e;
	}
	if (ev->kind == EV_MUNMAP) {
		hot_reset(l);
		return lset_cut(&l->seg, ev->addr, b);
	}
	return 0;
}

/* The label of an mmap: its file, or anonymous. */
static int64_t map_label(const struct os_event *ev)
{
	return ev->file ? (int64_t)ev->file : L_ANON;
}

static bool valgrind_file(const struct layout *l, uint32_t file)
{
	const char *p, *base;

	if (!file || file > l->src->nfiles || !(p = l->src->files[file - 1].path))
		return false;
	base = strrchr(p, '/');
	base = base ? base + 1 : p;
	return !strncmp(base, "vgpreload_", 10) || strstr(p, "/valgrind/");
}

/* Record that trace [t, t + len) is kernel [k, k + len), labelled @v. */
static int mapped(struct layout *l, vaddr_t t, vaddr_t k, uint64_t len, int64_t v)
{
	hot_reset(l);
	if (lset_put(&l->seg, t, t + len, (int64_t)(k - t)))
		return -1;
	return lset_put(&l->vma, k, k + len, v);
}

static int do_mmap(struct layout *l, const struct os_event *ev)
{
	uint64_t len = page_up(ev->len);
	vaddr_t t = ev->addr, k;
	struct os_event *o;

	if (ev->initial && t == l->stack_t && l->stack_len) { /* setup_arg_pages() */
		o = emit(l, ev);
		if (!o)
			return -1;
		o->addr = STACK_TOP - l->stack_len;
		o->len = l->stack_len;
		return 0; /* layout_new() placed it */
	}
	if (ev->initial || (ev->flags & (MAP_FIXED_ | MAP_FIXED_NOREPLACE_))) {
		int64_t d = delta_at(l, t);

		/* what the call replaces elsewhere in the kernel's space goes first */
		for (vaddr_t a = t; a < t + len;) {
			int64_t pd;
			vaddr_t e = piece_end(l, a, t + len, &pd);

			if (pd != d && lset_at(&l->seg, a)) {
				struct os_event *u = emit(l, &(struct os_event){ .kind = EV_MUNMAP,
					.initial = ev->initial, .line = ev->line, .thread = ev->thread });

				if (!u)
					return -1;
				u->addr = a + (vaddr_t)pd;
				u->len = e - a;
				if (lset_cut(&l->vma, u->addr, u->addr + u->len))
					return -1;
			}
			a = e;
		}
		k = t + (vaddr_t)d;
	} else if (valgrind_file(l, ev->file)) {
		k = t;
	} else {
		k = place(l, ev->fd >= 0 && !(ev->flags & MAP_ANONYMOUS_), ev->flags, ev->new_addr, len,
			  ev->off);
		if (!k)
			k = t; /* no room: where the trace had it */
	}
	o = emit(l, ev);
	if (!o)
		return -1;
	o->addr = k;
	return mapped(l, t, k, len, map_label(ev));
}

static int do_brk(struct layout *l, const struct os_event *ev)
{
	vaddr_t t = ev->addr, k, top;
	struct os_event *o;

	if (!l->have_brk) {
		l->have_brk = true;
		l->brk_t0 = l->brk_t = t;
		l->brk_k0 = l->heap_k ? l->heap_k : t;
	}
	if (t < l->brk_t0) /* below the start: the kernel refuses it; keep it as recorded */
		return emit(l, ev) ? 0 : -1;
	k = l->brk_k0 + (t - l->brk_t0);
	top = page_up(t > l->brk_t ? t : l->brk_t);
	hot_reset(l);
	if (lset_cut(&l->seg, l->brk_t0, top) || lset_cut(&l->vma, l->brk_k0, l->brk_k0 + (top - l->brk_t0)))
		return -1;
	if (mapped(l, l->brk_t0, l->brk_k0, page_up(t) - l->brk_t0, L_HEAP))
		return -1;
	l->brk_t = t;
	o = emit(l, ev);
	if (!o)
		return -1;
	o->addr = k;
	return 0;
}

static int do_mremap(struct layout *l, const struct os_event *ev)
{
	uint64_t len = page_up(ev->len), nlen = page_up(ev->new_len);
	int64_t d = delta_at(l, ev->addr);
	vaddr_t old_k = ev->addr + (vaddr_t)d, k;
	const struct layout_seg *v = lset_at(&l->vma, old_k);
	int64_t label = v ? v->delta : L_ANON;
	struct os_event *o;

	if (ev->flags & MREMAP_FIXED_)
		k = ev->new_addr + (vaddr_t)delta_at(l, ev->new_addr);
	else if (nlen <= len || lset_free(&l->vma, old_k + len, old_k + nlen))
		k = old_k;
	else if (!(k = place(l, label > 0, label == L_ANON ? 0 : MAP_SHARED_, 0, nlen, 0)))
		k = ev->new_addr;
	hot_reset(l);
	if (lset_cut(&l->seg, ev->addr, ev->addr + len) || lset_cut(&l->vma, old_k, old_k + len))
		return -1;
	if (mapped(l, ev->new_addr, k, nlen, label))
		return -1;
	o = emit(l, ev);
	if (!o)
		return -1;
	o->addr = old_k;
	o->new_addr = k;
	return 0;
}

int layout_event(struct layout *l, const struct os_event *ev, const struct os_event **out)
{
	int rc;

	l->nout = 0;
	switch (ev->kind) {
	case EV_MMAP:
		rc = do_mmap(l, ev);
		break;
	case EV_MUNMAP:
	case EV_MPROTECT:
	case EV_MADVISE:
	case EV_MLOCK:
	case EV_MUNLOCK:
		rc = range_call(l, ev);
		break;
	case EV_BRK:
		rc = do_brk(l, ev);
		break;
	case EV_MREMAP:
		rc = do_mremap(l, ev);
		break;
	default:
		rc = emit(l, ev) ? 0 : -1;
	}
	*out = l->out;
	return rc ? -1 : (int)l->nout;
}

/* ---------------------------------------------------------------- exec */

static bool special(const char *name)
{
	return !strcmp(name, "[vdso]") || !strcmp(name, "[vvar]") || !strcmp(name, "[vsyscall]") ||
	       !strcmp(name, "[vvar_vclock]");
}

/*
 * The initial mapping @i and the ones after it that belong to the same ELF
 * object: the same file, contiguous, then an anonymous one right after (its
 * bss). Returns the index past them.
 */
static size_t object_end(const struct trace_map *m, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && m[j].file && m[j].ino == m[i].ino && m[j].dev == m[i].dev &&
	       m[j].start == m[j - 1].start + m[j - 1].len)
		j++;
	if (j < n && !m[j].file && !m[j].name[0] && m[j].start == m[j - 1].start + m[j - 1].len)
		j++;
	return j;
}

/* Place initial mappings [i, j) (one object) at kernel address @k. */
static int place_object(struct layout *l, const struct trace_map *m, size_t i, size_t j, vaddr_t k)
{
	for (size_t x = i; x < j; x++)
		if (mapped(l, m[x].start, k + (m[x].start - m[i].start), page_up(m[x].len),
			   m[x].file ? (int64_t)m[x].file : L_ANON))
			return -1;
	return 0;
}

static int cmp_map(const void *a, const void *b)
{
	const struct trace_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* load_elf_binary()'s layout of the initial mappings, in its order. */
static int exec_layout(struct layout *l, struct trace_map *m, size_t n)
{
	size_t exe = n, interp[16], ninterp = 0;

	qsort(m, n, sizeof(*m), cmp_map);
	for (size_t i = 0; i < n; i++) {
		const char *p = m[i].name ? m[i].name : "";

		if (!strcmp(p, "[stack]")) { /* setup_arg_pages(): STACK_TOP, + stack_expand */
			vaddr_t end = m[i].start + m[i].len;

			l->stack_t = m[i].start;
			l->stack_len = page_up(m[i].len) + STACK_EXPAND;
			hot_reset(l);
			if (lset_put(&l->seg, end - STACK_LIMIT, end, (int64_t)(STACK_TOP - end)) ||
			    lset_put(&l->vma, STACK_TOP - l->stack_len, STACK_TOP, L_STACK))
				return -1;
		} else if (m[i].file && !strstr(p, "/valgrind/") && !strstr(p, "vgpreload_")) {
			size_t j = object_end(m, n, i);

			if (exe == n)
				exe = i;
			else if (ninterp < sizeof(interp) / sizeof(*interp))
				interp[ninterp++] = i;
			i = j - 1;
		}
	}
	if (exe < n) {
		size_t j = object_end(m, n, exe);
		vaddr_t span = m[j - 1].start + page_up(m[j - 1].len) - m[exe].start, k = m[exe].start;

		if (m[exe].start < NONPIE_MIN) /* a PIE: ELF_ET_DYN_BASE, or top-down if static */
			k = ninterp ? ELF_ET_DYN_BASE : unmapped_topdown(l, span, 0, 0);
		if (k && place_object(l, m, exe, j, k))
			return -1;
		if (k)
			l->heap_k = k + span;
	}
	for (size_t x = 0; x < ninterp; x++) { /* load_elf_interp(): one span, top-down */
		size_t i = interp[x], j = object_end(m, n, i);
		vaddr_t span = m[j - 1].start + page_up(m[j - 1].len) - m[i].start;
		vaddr_t k = place(l, true, MAP_PRIVATE_, 0, span, m[i].off);

		if (k && place_object(l, m, i, j, k))
			return -1;
	}
	{ /* map_vdso() */
		uint64_t len = (l->kernel >= KERNEL_6_18 ? 8 : 6) * PAGE;
		vaddr_t k = unmapped_topdown(l, len, 0, 0);

		if (k && lset_put(&l->vma, k, k + len, L_VDSO))
			return -1;
	}
	for (size_t i = 0; i < n; i++) { /* Valgrind's own mappings and the rest: where they were */
		const char *p = m[i].name ? m[i].name : "";

		if (!special(p) && strcmp(p, "[heap]") && !lset_at(&l->seg, m[i].start) &&
		    mapped(l, m[i].start, m[i].start, page_up(m[i].len),
			   m[i].file ? (int64_t)m[i].file : L_ANON))
			return -1;
	}
	return 0;
}

struct layout *layout_new(enum os_kernel k, const struct trace_reader *src)
{
	struct layout *l = calloc(1, sizeof(*l));
	struct trace_map *m = NULL;
	uint64_t gap = STACK_LIMIT + STACK_GUARD_GAP;

	if (!l)
		return NULL;
	if (gap < MMAP_GAP_MIN)
		gap = MMAP_GAP_MIN;
	l->kernel = k;
	l->src = src;
	l->mmap_base = TASK_SIZE - gap;
	if (src->nmaps) {
		m = malloc(src->nmaps * sizeof(*m));
		if (!m)
			goto fail;
		memcpy(m, src->maps, src->nmaps * sizeof(*m));
		if (exec_layout(l, m, src->nmaps))
			goto fail;
		free(m);
	}
	return l;
fail:
	free(m);
	layout_free(l);
	return NULL;
}

/* A copy of @l (fork: the child's address space is its parent's), or NULL on OOM. */
static struct layout *layout_clone(const struct layout *l)
{
	struct layout *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *l;
	c->seg.r = c->vma.r = NULL;
	c->out = NULL;
	c->nout = c->capout = 0;
	if (l->seg.n && !(c->seg.r = malloc(l->seg.n * sizeof(*c->seg.r))))
		goto fail;
	if (l->vma.n && !(c->vma.r = malloc(l->vma.n * sizeof(*c->vma.r))))
		goto fail;
	c->seg.cap = l->seg.n;
	c->vma.cap = l->vma.n;
	if (l->seg.n)
		memcpy(c->seg.r, l->seg.r, l->seg.n * sizeof(*c->seg.r));
	if (l->vma.n)
		memcpy(c->vma.r, l->vma.r, l->vma.n * sizeof(*c->vma.r));
	return c;
fail:
	layout_free(c);
	return NULL;
}

/*
 * After exec: an empty address space whose addresses are the trace's (the new
 * image's mappings are not placed again: a simplification, see the header of the
 * reader below); its files and kernel are @l's.
 */
static struct layout *layout_empty(const struct layout *l)
{
	struct layout *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->kernel = l->kernel;
	c->src = l->src;
	c->mmap_base = l->mmap_base;
	return c;
}

void layout_free(struct layout *l)
{
	if (!l)
		return;
	free(l->seg.r);
	free(l->vma.r);
	free(l->out);
	free(l);
}

void layout_dump(const struct layout *l, FILE *out)
{
	for (size_t i = 0; i < l->vma.n; i++) {
		const struct layout_seg *v = &l->vma.r[i];
		const char *name = "";

		if (v->delta == L_HEAP)
			name = "[heap]";
		else if (v->delta == L_STACK)
			name = "[stack]";
		else if (v->delta == L_VDSO)
			name = "[vdso]";
		else if (v->delta > 0 && (size_t)v->delta <= l->src->nfiles &&
			 l->src->files[v->delta - 1].path)
			name = l->src->files[v->delta - 1].path;
		fprintf(out, "%012llx-%012llx %s\n", (unsigned long long)v->start,
			(unsigned long long)v->end, name);
	}
}

/* ---------------------------------------------------------------- the reader */

/*
 * A reader over another: each of its batches comes out translated. An event
 * may become several, so a batch of the inner reader can take more than one
 * batch out; the rest waits in @ib from @ipos.
 */
/*
 * A trace of several processes (mtr version 6) has one layout per process: a fork
 * copies its parent's (the child's mappings are where its parent's are: dup_mmap()),
 * a switch selects one, and a process first met at a switch (a trace of its own,
 * run A B) starts empty. After an exec in a forked child the new image keeps the
 * trace's addresses and later mappings are placed top-down from mmap_base as
 * usual: the image's own mappings are not moved to where exec would put them.
 */
struct layout_proc {
	uint64_t id;
	struct layout *l;
};

struct layout_reader {
	struct trace_reader head;
	struct trace_reader *in;
	struct layout *l; /* the running process's */
	struct layout_proc *procs; /* every process's (procs[0]: the first, id 0) */
	size_t nprocs, capprocs;
	struct trace_batch ib;
	size_t ipos;
	const struct os_event *pend; /* the pieces of the last event not handed out yet */
	size_t npend;
	struct os_event ev[TRACE_BATCH];
};

/* What consumers read off a reader's head: the inner reader's, shared. */
static void sync_head(struct layout_reader *lr)
{
	struct trace_reader *h = &lr->head, *in = lr->in;

	h->io = in->io;
	h->maps = in->maps;
	h->nmaps = in->nmaps;
	h->files = in->files;
	h->nfiles = in->nfiles;
	h->thread_switches = in->thread_switches;
	h->forks = in->forks;
	h->roi_starts = in->roi_starts;
	h->markers = in->markers;
	h->thread = in->thread;
	h->version = in->version;
	h->deps = in->deps;
}

/*
 * A batch without events (most of them): its records translated into ours in
 * one pass. (Not in place with the two buffers swapped: the pool hands the
 * outer reader's buffer around, trace_take_recs(), and must get back its own.)
 */
static int translate_batch(struct layout_reader *lr, struct trace_batch *b)
{
	const struct trace_rec *in = lr->ib.recs;
	struct trace_rec *rec = lr->head.rec;
	size_t n = lr->ib.n;
	/* the segments of the last fetch and of the last data reference, in registers */
	vaddr_t ilo = 0, ispan = 0, dlo = 0, dspan = 0;
	int64_t id = 0, dd = 0;

	for (size_t i = 0; i < n; i++) {
		vaddr_t a = in[i].addr;

		rec[i] = in[i];
		if (rec[i].kind == R_IFETCH) {
			if (a - ilo >= ispan) {
				const struct layout_seg *s = layout_seg(lr->l, a);

				ilo = s->start, ispan = s->end - s->start, id = s->delta;
			}
			rec[i].addr = a + (vaddr_t)id;
		} else if (rec[i].kind != R_INSNS && rec[i].kind != R_DEP) {
			if (a - dlo >= dspan) {
				const struct layout_seg *s = layout_seg(lr->l, a);

				dlo = s->start, dspan = s->end - s->start, dd = s->delta;
			}
			rec[i].addr = a + (vaddr_t)dd;
		}
	}
	lr->ipos = n;
	b->recs = rec;
	b->n = n;
	b->ev = lr->ev;
	b->nev = 0;
	return (int)n;
}

static struct layout_proc *proc_find(struct layout_reader *lr, uint64_t id)
{
	for (size_t i = 0; i < lr->nprocs; i++)
		if (lr->procs[i].id == id)
			return &lr->procs[i];
	return NULL;
}

static int proc_add(struct layout_reader *lr, uint64_t id, struct layout *l)
{
	if (!l)
		return -1;
	if (lr->nprocs == lr->capprocs) {
		size_t cap = lr->capprocs ? 2 * lr->capprocs : 4;
		struct layout_proc *p = realloc(lr->procs, cap * sizeof(*p));

		if (!p) {
			layout_free(l);
			return -1;
		}
		lr->procs = p;
		lr->capprocs = cap;
	}
	lr->procs[lr->nprocs++] = (struct layout_proc){ id, l };
	return 0;
}

/* A process event: the layouts follow the processes. 0 or -1 (host OOM). */
static int proc_event(struct layout_reader *lr, const struct os_event *ev)
{
	struct layout_proc *p;

	switch (ev->kind) {
	case EV_FORK:
		return proc_find(lr, ev->addr) ? 0 : proc_add(lr, ev->addr, layout_clone(lr->l));
	case EV_SWITCH:
		p = proc_find(lr, ev->addr);
		if (!p) {
			if (proc_add(lr, ev->addr, layout_empty(lr->l)))
				return -1;
			p = &lr->procs[lr->nprocs - 1];
		}
		lr->l = p->l;
		return 0;
	case EV_EXEC: {
		struct layout *n = layout_empty(lr->l);

		if (!n)
			return -1;
		for (size_t i = 0; i < lr->nprocs; i++)
			if (lr->procs[i].l == lr->l)
				lr->procs[i].l = n;
		layout_free(lr->l);
		lr->l = n;
		return 0;
	}
	default:
		return 0;
	}
}

static int layout_next(struct trace_reader *r, struct trace_batch *b, struct err *e)
{
	struct layout_reader *lr = (struct layout_reader *)r;
	size_t n = 0, nev = 0;

	while (n < TRACE_BATCH) {
		const struct trace_rec *in;

		if (lr->npend) { /* the pieces of the last event, in order */
			lr->ev[nev] = *lr->pend++;
			lr->npend--;
			r->rec[n++] = (struct trace_rec){ .addr = lr->ev[nev].addr, .size = (uint32_t)nev,
							  .kind = R_EVENT };
			nev++;
			continue;
		}
		if (lr->ipos == lr->ib.n) {
			int rc;

			if (n)
				break;
			rc = trace_next(lr->in, &lr->ib, e);
			sync_head(lr);
			if (rc <= 0)
				return rc;
			lr->ipos = 0;
			if (!lr->ib.nev)
				return translate_batch(lr, b);
		}
		in = &lr->ib.recs[lr->ipos++];
		if (in->kind == R_EVENT) {
			const struct os_event *ev = &lr->ib.ev[in->size];
			int k = ev->kind >= EV_FORK && proc_event(lr, ev) ? -1
									  : layout_event(lr->l, ev, &lr->pend);

			if (k < 0) {
				err_host(e, r->name, 0, 0, "out of memory");
				return -1;
			}
			lr->npend = (size_t)k;
			continue;
		}
		r->rec[n] = *in;
		if (in->kind != R_INSNS && in->kind != R_DEP)
			r->rec[n].addr = layout_va(lr->l, in->addr);
		n++;
	}
	b->recs = r->rec;
	b->n = n;
	b->ev = lr->ev;
	b->nev = nev;
	return (int)n;
}

static void layout_close(struct trace_reader *r)
{
	struct layout_reader *lr = (struct layout_reader *)r;

	/* the inner reader's: freed by its own close */
	r->maps = NULL;
	r->nmaps = 0;
	r->files = NULL;
	r->nfiles = 0;
	trace_close(lr->in);
	for (size_t i = 0; i < lr->nprocs; i++)
		layout_free(lr->procs[i].l);
	free(lr->procs);
	trace_reader_free(r);
}

static const struct trace_ops layout_ops = { layout_next, layout_close };

struct trace_reader *layout_open(struct trace_reader *in, const struct sim_config *c,
				 struct err *e)
{
	struct layout_reader *lr;

	if (c->layout == LAYOUT_TRACE || (c->layout == LAYOUT_AUTO && !in->nmaps) ||
	    in->format == TF_WORKLOAD)
		return in;
	lr = trace_reader_alloc(sizeof(*lr), &layout_ops, in->format, in->name, e);
	if (!lr) {
		trace_close(in);
		return NULL;
	}
	lr->in = in;
	sync_head(lr);
	lr->l = layout_new(c->kernel, in);
	if (proc_add(lr, 0, lr->l)) { /* (it frees the layout it could not add) */
		lr->l = NULL;
		err_host(e, in->name, 0, 0, "out of memory");
		layout_close(&lr->head);
		return NULL;
	}
	return &lr->head;
}

struct layout *layout_of(struct trace_reader *r)
{
	return r && r->ops == &layout_ops ? ((struct layout_reader *)r)->l : NULL;
}
