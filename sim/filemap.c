/*
 * filemap.c - file-backed memory, after Linux 6.18 mm/filemap.c (the page cache,
 * filemap_fault(), do_sync_mmap_readahead(), filemap_map_pages()) and
 * mm/memory.c (do_read_fault(), do_fault_around(), do_cow_fault(),
 * do_shared_fault(), do_wp_page() -> wp_page_copy() / wp_page_shared()).
 *
 *  - One page cache for the machine, keyed by (file identity, page offset): every
 *    mapping of a file shares its pages. The identity is the trace's (mtr version
 *    2: its file table, deduplicated by device, inode and path); an fd mmap
 *    without one (lackey traces) is a file of its own, and so is an implicit
 *    region first touched by an instruction fetch (program text, fault.c).
 *  - Cache pages are movable pages from the buddy allocator (like anonymous
 *    ones, GFP_HIGHUSER_MOVABLE) and count in nr_file_pages; a page
 *    mapped by at least one PTE counts in nr_mapped (folio_add_file_rmap_ptes():
 *    the mapcount's 0 -> 1 transition), once however many mappings map it.
 *  - A read fault (do_read_fault()) first maps every cached page of the
 *    fault-around window read-only (filemap_map_pages()); if that covers the
 *    faulting page the fault is done, else filemap_fault() gets the page and
 *    finish_fault() maps it. A miss is a major fault (filemap_fault():
 *    pgmajfault) that reads ahead (do_sync_mmap_readahead(), below) and is
 *    retried: the retry's fault-around maps what was read. MADV_RANDOM does
 *    not stop fault-around (should_fault_around() does not look at it), which
 *    maps only what is cached. The window of do_fault_around(): os.fault_around_bytes
 *    / 4 KiB PTEs from the aligned start in the PTE table or the VMA's first PTE
 *    if later, clipped to the VMA's end and to the table (the PMD); 4 KiB or less
 *    maps the faulting page only (should_fault_around()). Only the
 *    fault itself counts in pgfault: what fault-around maps takes no fault.
 *  - A write fault in a private mapping (do_cow_fault()) reads the page into the
 *    cache (with read-around) and maps a fresh anonymous copy (os.cost.copy_page);
 *    in a shared one (do_shared_fault()) it maps the cache page writable (dirty).
 *  - A store to a read-only cache PTE: private -> wp_page_copy() (an anonymous
 *    copy, the old PTE flushed), shared -> wp_page_shared() (made writable).
 *  - munmap and MADV_DONTNEED drop the PTEs; the pages stay cached.
 *  - os.file_cache: warm: every page of every file is in the page cache before
 *    the trace starts (a file the program or an earlier run read or wrote, its
 *    binary and libraries after an earlier run), so no fault reads and
 *    fault-around maps its whole window. The model gives such a page its frame
 *    when it is first mapped: nr_file_pages counts the pages the process
 *    mapped, not the whole files (their sizes are not in a trace).
 *  - Large folios (ext4 since 6.16, "ext4: enable large folio for regular
 *    file": kernel_ext4_large_folios()): a warm cache holds its pages in folios
 *    of os.file_cache_folio_size (default 4K: order 0), the size of the write()s
 *    that wrote the file (ext4_write_begin() asks __filemap_get_folio() for the
 *    order that fits the write: 64 KiB writes give 64 KiB folios; a trace does
 *    not record them, so it is a config value). A folio is a naturally aligned
 *    run of file pages backed by one aligned buddy block of its order (physically
 *    contiguous, as a TLB that coalesces needs), its order falling while the
 *    allocator has none or a page of the run is cached already
 *    (__filemap_get_folio()'s fallback, filemap_add_folio()'s -EEXIST). At most
 *    1 MiB (order 8): a PMD-order folio is a file THP, which collapse_file()
 *    and readahead (below) make. From 6.18 (kernel_map_whole_folio())
 *    fault-around maps every folio it meets whole, beyond the window, where the folio lies inside the
 *    VMA and one page table (357b92761d94 "mm/filemap: map entire large folio
 *    faultaround": filemap_map_folio_range()), and a fault fault-around did not
 *    cover -- a shared write fault, a read fault with fault-around off -- maps
 *    its whole folio under the same limits when all its PTEs are empty
 *    (19773df031bc "mm/fault: try to map the entire file folio in
 *    finish_fault()"), writable and dirty for a write: one fault per folio. Each
 *    PTE counts as ever (nr_mapped, the RSS). Linux 6.18 has no per-size
 *    counters for page-cache folios (its hugepages-<size>kB/stats/ hold anon_*,
 *    shmem_*, swp*, zswpout, split* and nr_anon*; no file_alloc), so none are
 *    added.
 *  - Readahead (mm/readahead.c and mm/filemap.c of 6.18), with the state of
 *    struct file_ra_state per file (struct fm_ra: start, size, async_size,
 *    order, mmap_miss; ra_pages = os.read_ahead_kb / 4). The kernel keeps it
 *    per open file (file->f_ra); a trace records mmaps, not opens, so the model
 *    keeps one per file identity, as if every mapping of a file came from one
 *    open() (true for one mmap, its pieces after mprotect or munmap, and a
 *    fork's child, which shares the struct file; two opens of one file mapped
 *    at once would have two). A miss runs do_sync_mmap_readahead(): under
 *    VM_HUGEPAGE two PMD-order folios from the aligned index (one under
 *    MADV_RANDOM), the second PG_readahead; else nothing under MADV_RANDOM
 *    (VM_RAND_READ; but in a VM_EXEC mapping from 6.16 on) or with
 *    read_ahead_kb 0; under MADV_SEQUENTIAL page_cache_sync_ra() (at page 0
 *    the initial window, its second half async; elsewhere ra_pages from the
 *    fault, no mark); else mmap_miss counts the miss and above MMAP_LOTSAMISS
 *    (100) nothing more is read; a VM_EXEC mapping (6.16 on, 3b61a3f08949)
 *    reads ra_pages forward from the fault within the VMA, no async part;
 *    otherwise read-around: ra_pages from pgoff - ra_pages / 2, the last
 *    quarter async. page_cache_ra_order() reads a window in folios of
 *    ra->order capped by the mapping's largest order (ext4 from 6.16:
 *    HPAGE_PMD_ORDER, a PMD-order folio being a file THP, NR_FILE_THPS; before,
 *    order 0) and ilog2 of the window, naturally aligned, none past the end of
 *    the file; PG_readahead goes on the folio at start + size - async_size;
 *    where a page is cached or a block is missing (readahead_gfp_mask():
 *    __GFP_NORETRY) the rest of the window comes in order-0 pages, stopping
 *    at the first failure. A fault that finds a PG_readahead folio
 *    (do_async_mmap_readahead(); a hit also counts mmap_miss down) runs
 *    page_cache_async_ra(): the mark goes, the window moves on by its size at
 *    the expected index (else restarts at the next uncached page), grows
 *    (get_next_ra_size()), ra->order grows by 2, the whole window is async,
 *    and the fault is retried (the lock was dropped for the I/O). Fault-around
 *    skips PG_readahead folios (next_uptodate_folio()), so each mark takes a
 *    fault of its own, a minor one, and counts mmap_miss down by every page of
 *    each folio range it maps. A warm cache's pages carry no marks (written,
 *    not read ahead). Measured on 6.18.44 (tests/native.sh file-seq-cold*,
 *    read_ahead_kb 8192): 1, 16 and 64 MiB read in order from a dropped cache
 *    take 1 major fault and 15, 255 and 435 minor ones, as the replay.
 *  - File THPs (CONFIG_READ_ONLY_THP_FOR_FS, khugepaged.c collapse_file()): 512
 *    cached pages replaced by one order-9 page (nr_file_hugepages); from 6.16
 *    readahead reads them too (PMD-order folios: VM_HUGEPAGE's read-around,
 *    async readahead's order grown to HPAGE_PMD_ORDER). A read fault
 *    on one maps it with one read-only PMD when do_set_pmd() may
 *    (filemap_map_pmd() from do_fault_around(), or finish_fault(): the PMD empty,
 *    no VM_NOHUGEPAGE, thp_vma_suitable_order()); else its pages map by PTE like
 *    any. The PMD counts its 512 pages in nr_mapped once (folio_add_file_rmap_pmd())
 *    and the THP in nr_file_pmdmapped; thp_file_mapped per PMD made. Write faults
 *    stay at the PTE level (a private store copies the page; fault.c clears a PMD
 *    a store hits first, __split_huge_pmd()).
 *
 *  - shmem (mm/shmem.c): a file mapping whose mtr version 5 FILE record says
 *    tmpfs (TMPFS_MAGIC: /dev/shm, any tmpfs mount, a memfd) is VM_SHMEM. Its
 *    page cache is the file itself: shmem_fault() finds the page or fills the
 *    hole with a new zeroed page (no read, no read-around, no major fault,
 *    whatever os.file_cache says), and fault-around maps only pages that exist.
 *    Which exist: the pages the model holds for the file, and all of them once
 *    an mmap of it recorded more pages (st_blocks / 8) than the model holds (a
 *    write() or another process wrote them, unseen); a file of 0 pages, a fresh
 *    memfd, is all holes. A shared writable shmem mapping has no write-notify
 *    (vma_wants_writenotify(): no page_mkwrite, no dirty accounting), so its
 *    read faults and fault-around map PTEs writable and a later store takes no
 *    fault; mprotect(PROT_WRITE) makes its PTEs writable too. Simplifications:
 *    an mmap that finds some pages written elsewhere takes every page as
 *    existing (the trace records how many, not which); no shmem THPs
 *    (shmem_enabled, default never; khugepaged leaves shmem VMAs alone), no
 *    swap of shmem pages; shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS)
 *    stays backed like anonymous memory (fault.c); lackey traces and mtr before
 *    version 5 say nothing of the filesystem: their files are ext4-like.
 *
 * Simplifications, and why: the file size is unknown to a trace, so
 * readahead takes the VMA's end for the end of the file and reads no page
 * before the VMA's start (a folio wholly before it is skipped). I/O takes no
 * time: a page read ahead is uptodate and unlocked at once, so fault-around
 * maps it even on the retry right after the fault that read it (the kernel's
 * next_uptodate_folio() skips it while the read is in flight; with the
 * default windows no such page falls in the retry's fault-around window).
 * prev_pos is never set (faults do not set it; read() is not modelled),
 * FMODE_RANDOM (fadvise) and the workingset (refaults: no eviction here) do
 * not exist. Clean cache pages are never reclaimed (they stay until the end;
 * reclaim scans anonymous pages only), dirty pages are never written back, and
 * compaction does not migrate cache pages (no reverse map: they stay where they
 * are, like pinned pages). RSS (memory.rss_bytes) stays the anonymous RSS.
 * A file THP is kept as 512 order-0 frames of the buddy allocator (split_page()
 * of the order-9 block it was allocated as): it is never freed before the end,
 * so only its allocation, which needed the order-9 block, tells. A shared store
 * into a file THP maps its page writable by PTE (do_shared_fault() would
 * do_set_pmd() it writable; the file is open for write then, so the kernel would
 * have dropped its page cache in do_dentry_open(), which is not modelled).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "filemap.h"
#include "lru.h"
#include "mmap.h"
#include "kernel.h"
#include "thp.h"

int filemap_init(struct kernel *k)
{
	struct filemap *fm = &k->fm;

	memset(fm, 0, sizeof(*fm));
	fm->next_file = FILE_ID_OWN;
	fm->map = mmap(NULL, k->buddy.nr_pages * sizeof(*fm->map), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fm->map == MAP_FAILED) {
		fm->map = NULL;
		return -1;
	}
	fm->order = mmap(NULL, k->buddy.nr_pages * sizeof(*fm->order), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fm->order == MAP_FAILED) {
		fm->order = NULL;
		return -1;
	}
	fm->ra_mark = mmap(NULL, k->buddy.nr_pages * sizeof(*fm->ra_mark), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fm->ra_mark == MAP_FAILED) {
		fm->ra_mark = NULL;
		return -1;
	}
	return 0;
}

void filemap_destroy(struct kernel *k)
{
	struct filemap *fm = &k->fm;

	for (size_t i = 0; k->buddy.pages && i < fm->cap; i++)
		if (fm->key_file[i])
			buddy_free(&k->buddy, fm->val[i], 0);
	if (fm->map)
		munmap(fm->map, k->buddy.nr_pages * sizeof(*fm->map));
	if (fm->order)
		munmap(fm->order, k->buddy.nr_pages * sizeof(*fm->order));
	if (fm->ra_mark)
		munmap(fm->ra_mark, k->buddy.nr_pages * sizeof(*fm->ra_mark));
	free(fm->ra);
	free(fm->key_file);
	free(fm->key_off);
	free(fm->val);
	free(fm->shm);
	memset(fm, 0, sizeof(*fm));
}

static struct fm_shmem *shmem_file(const struct filemap *fm, uint32_t file)
{
	for (size_t i = 0; i < fm->nshm; i++)
		if (fm->shm[i].file == file)
			return &fm->shm[i];
	return NULL;
}

int filemap_shmem_mmap(struct kernel *k, uint32_t file, uint64_t pages)
{
	struct filemap *fm = &k->fm;
	struct fm_shmem *f = shmem_file(fm, file);

	if (!f) {
		f = realloc(fm->shm, (fm->nshm + 1) * sizeof(*f));
		if (!f)
			return -1;
		fm->shm = f;
		f = &fm->shm[fm->nshm++];
		*f = (struct fm_shmem){ .file = file };
	}
	f->whole = pages > f->nr;
	return 0;
}

uint32_t filemap_new_file(struct kernel *k)
{
	return k->fm.next_file++;
}

static size_t slot_of(const struct filemap *fm, uint32_t file, uint64_t off)
{
	uint64_t h = (off ^ ((uint64_t)file << 40) ^ file) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (fm->cap - 1);
}

/* The cached frame of (file, off), or PFN_NONE. */
static pfn_t lookup(const struct filemap *fm, uint32_t file, uint64_t off)
{
	if (!fm->cap)
		return PFN_NONE;
	for (size_t i = slot_of(fm, file, off);; i = (i + 1) & (fm->cap - 1)) {
		if (!fm->key_file[i])
			return PFN_NONE;
		if (fm->key_file[i] == file && fm->key_off[i] == off)
			return fm->val[i];
	}
}

pfn_t filemap_lookup(const struct kernel *k, uint32_t file, uint64_t off)
{
	return lookup(&k->fm, file, off);
}

/* Re-point the cached (file, off) at @pfn (xas_store() of the new folio). */
static void set_val(struct filemap *fm, uint32_t file, uint64_t off, pfn_t pfn)
{
	for (size_t i = slot_of(fm, file, off);; i = (i + 1) & (fm->cap - 1)) {
		BUG_ON(!fm->key_file[i]);
		if (fm->key_file[i] == file && fm->key_off[i] == off) {
			fm->val[i] = pfn;
			return;
		}
	}
}

static void put(struct filemap *fm, uint32_t file, uint64_t off, pfn_t pfn)
{
	size_t i = slot_of(fm, file, off);

	while (fm->key_file[i])
		i = (i + 1) & (fm->cap - 1);
	fm->key_file[i] = file;
	fm->key_off[i] = off;
	fm->val[i] = pfn;
	fm->n++;
}

static int grow(struct filemap *fm)
{
	struct filemap old = *fm;
	size_t cap = old.cap ? old.cap * 2 : 1024;

	fm->key_file = calloc(cap, sizeof(*fm->key_file));
	fm->key_off = malloc(cap * sizeof(*fm->key_off));
	fm->val = malloc(cap * sizeof(*fm->val));
	if (!fm->key_file || !fm->key_off || !fm->val) {
		free(fm->key_file);
		free(fm->key_off);
		free(fm->val);
		fm->key_file = old.key_file;
		fm->key_off = old.key_off;
		fm->val = old.val;
		return -1;
	}
	fm->cap = cap;
	fm->n = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.key_file[i])
			put(fm, old.key_file[i], old.key_off[i], old.val[i]);
	free(old.key_file);
	free(old.key_off);
	free(old.val);
	return 0;
}

/* filemap_add_folio(): a new cache page for (file, off). PFN_NONE if out of memory. */
static pfn_t add_page(struct kernel *k, uint32_t file, uint64_t off)
{
	struct filemap *fm = &k->fm;
	pfn_t pfn;

	if ((fm->n + 1) * 2 > fm->cap && grow(fm)) {
		k->mm->pt.host_oom = true;
		return PFN_NONE;
	}
	pfn = buddy_alloc(&k->buddy, 0);
	if (pfn == PFN_NONE)
		return PFN_NONE;
	put(fm, file, off, pfn);
	fm->map[pfn] = 1;
	fm->order[pfn] = 0;
	fm->ra_mark[pfn] = 0;
	k->rmap[pfn] = 0; /* no anonymous reverse map: compaction leaves it alone */
	k->st->nr_file_pages++;
	return pfn;
}

/*
 * filemap_add_folio() of a folio of order @order (at most) holding page @off of
 * @file: the pages of the aligned range [off & ~(nr - 1), + nr) become cache
 * pages backed by one aligned buddy block of that order, split into order-0
 * frames (split_page(): the cache frees page by page, see the header) that
 * remember the folio's order. The order drops while a page of the range is
 * cached already (filemap_add_folio()'s -EEXIST) and, order by order, while the
 * buddy allocator has no block (__filemap_get_folio()'s and
 * page_cache_ra_order()'s fallback). Returns the frame of @off, PFN_NONE if out
 * of memory.
 */
static pfn_t add_folio(struct kernel *k, uint32_t file, uint64_t off, unsigned order)
{
	struct filemap *fm = &k->fm;
	uint64_t start, nr;
	pfn_t head = PFN_NONE;

	for (;; order--) {
		bool busy = false;

		nr = 1ULL << order;
		start = off & ~(nr - 1);
		for (uint64_t o = start; o < start + nr && !busy; o++)
			busy = lookup(fm, file, o) != PFN_NONE;
		if (!busy && (!order || (head = buddy_alloc(&k->buddy, order)) != PFN_NONE))
			break;
	}
	if (!order)
		return add_page(k, file, off);
	while ((fm->n + nr) * 2 > fm->cap)
		if (grow(fm)) {
			buddy_free(&k->buddy, head, order);
			k->mm->pt.host_oom = true;
			return PFN_NONE;
		}
	thp_split_alloc(&k->buddy, head, order);
	for (uint64_t i = 0; i < nr; i++) {
		put(fm, file, start + i, head + i);
		fm->map[head + i] = 1;
		fm->order[head + i] = (uint8_t)order;
		fm->ra_mark[head + i] = 0;
		k->rmap[head + i] = 0;
	}
	k->st->nr_file_pages += nr;
	return head + (off - start);
}

/* The order of a warm cache's folios (os.file_cache_folio_size): 0 where the
 * kernel's ext4 has no large folios (kernel_ext4_large_folios()). */
static unsigned warm_order(const struct kernel *k)
{
	if (!kernel_ext4_large_folios(k->cfg->kernel) || !k->cfg->file_cache_folio_size)
		return 0;
	return (unsigned)__builtin_ctzll(k->cfg->file_cache_folio_size) - PAGE_SHIFT;
}

/* A page of shmem file @v->file now exists in the model: a hole filled or a page first mapped. */
static pfn_t shmem_add_page(struct kernel *k, const struct vma *v, uint64_t pgoff)
{
	struct fm_shmem *f = shmem_file(&k->fm, v->file);
	pfn_t pfn = add_page(k, v->file, pgoff);

	if (pfn != PFN_NONE && f)
		f->nr++;
	return pfn;
}

/* Do the pages of the shmem VMA @v's file that the model holds no frame for exist? */
static bool shmem_exists(const struct kernel *k, const struct vma *v)
{
	const struct fm_shmem *f = shmem_file(&k->fm, v->file);

	return f && f->whole;
}

/* --- readahead (mm/readahead.c, do_sync_mmap_readahead(), do_async_mmap_readahead()) --- */

#define MMAP_LOTSAMISS 100 /* mm/filemap.c */

const struct fm_ra *filemap_ra(const struct kernel *k, uint32_t file)
{
	for (size_t i = 0; i < k->fm.nra; i++)
		if (k->fm.ra[i].file == file)
			return &k->fm.ra[i];
	return NULL;
}

/* file->f_ra of @file (file_ra_state_init(): all zero; prev_pos -1, which a
 * fault never moves); NULL when out of host memory (readahead is then skipped,
 * best effort like the kernel's) */
static struct fm_ra *ra_state(struct kernel *k, uint32_t file)
{
	struct filemap *fm = &k->fm;
	struct fm_ra *r = (struct fm_ra *)filemap_ra(k, file);

	if (r)
		return r;
	r = realloc(fm->ra, (fm->nra + 1) * sizeof(*r));
	if (!r)
		return NULL;
	fm->ra = r;
	r = &fm->ra[fm->nra++];
	*r = (struct fm_ra){ .file = file };
	return r;
}

/* ra->ra_pages: the backing device's read_ahead_kb in pages */
static uint64_t ra_pages(const struct kernel *k)
{
	return k->cfg->read_ahead_kb / 4;
}

/*
 * mapping_max_folio_order() of @v's file: ext4 from 6.16 sets large folios
 * (mapping_set_large_folios(): MAX_PAGECACHE_ORDER, HPAGE_PMD_ORDER with
 * CONFIG_TRANSPARENT_HUGEPAGE, else 8); before, and for shmem (which never
 * reads ahead), order 0.
 */
static unsigned max_folio_order(const struct kernel *k, const struct vma *v)
{
	if ((v->flags & VM_SHMEM) || !kernel_ext4_large_folios(k->cfg->kernel))
		return 0;
	return k->thp.folio ? HPAGE_PMD_ORDER : 8;
}

/* The first frame of the folio holding cache page @pfn (a file THP: its PMD block). */
static pfn_t folio_head(const struct kernel *k, pfn_t pfn)
{
	if (filemap_is_thp(k, pfn))
		return pfn & ~(pfn_t)(HPAGE_PMD_NR - 1);
	return pfn & ~(((pfn_t)1 << k->fm.order[pfn]) - 1);
}

static uint64_t folio_nr(const struct kernel *k, pfn_t pfn)
{
	return filemap_is_thp(k, pfn) ? HPAGE_PMD_NR : 1ULL << k->fm.order[pfn];
}

bool filemap_readahead_marked(const struct kernel *k, pfn_t pfn)
{
	return k->fm.ra_mark[folio_head(k, pfn)];
}

/* The page past the pages @v maps: the end of the file as far as the model knows
 * (a trace records no file size; see the header) */
static uint64_t vma_end_pgoff(const struct vma *v)
{
	return v->pgoff + ((v->end - v->start) >> PAGE_SHIFT);
}

/*
 * filemap_add_folio() of a readahead folio of @order at @index of @v's file
 * (ra_alloc_folio(): PG_readahead when it starts at the mark rounded down to
 * it): 0, 1 for -EEXIST (a page of it cached already), 2 for -ENOMEM (no block
 * of the order: readahead_gfp_mask() is __GFP_NORETRY). A folio wholly before
 * the VMA is not read (the model keeps to the pages the VMA maps) but counts as
 * done. A PMD-order folio is a file THP (NR_FILE_THPS).
 */
static int ra_folio(struct kernel *k, const struct vma *v, uint64_t index, unsigned order, uint64_t mark)
{
	struct filemap *fm = &k->fm;
	uint64_t nr = 1ULL << order;
	pfn_t head;

	if (index + nr <= v->pgoff)
		return 0;
	for (uint64_t o = index; o < index + nr; o++)
		if (lookup(fm, v->file, o) != PFN_NONE)
			return 1;
	if (!order) {
		head = add_page(k, v->file, index);
		if (head == PFN_NONE)
			return 2;
	} else {
		head = buddy_alloc(&k->buddy, order);
		if (head == PFN_NONE)
			return 2;
		while ((fm->n + nr) * 2 > fm->cap)
			if (grow(fm)) {
				buddy_free(&k->buddy, head, order);
				k->mm->pt.host_oom = true;
				return 2;
			}
		thp_split_alloc(&k->buddy, head, order);
		for (uint64_t i = 0; i < nr; i++) {
			put(fm, v->file, index + i, head + i);
			fm->map[head + i] = 1;
			/* a file THP's frames keep order 0, as collapse_file()'s (filemap_is_thp()) */
			fm->order[head + i] = order == HPAGE_PMD_ORDER ? 0 : (uint8_t)order;
			fm->ra_mark[head + i] = 0;
			k->rmap[head + i] = 0;
		}
		k->st->nr_file_pages += nr;
		if (order == HPAGE_PMD_ORDER) {
			struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];

			memset(f, 0, sizeof(*f));
			f->flags = FOLIO_FILE;
			k->st->nr_file_hugepages++;
		}
	}
	if (index == (mark & ~(nr - 1)))
		fm->ra_mark[head] = 1;
	return 0;
}

/*
 * page_cache_ra_unbounded(): order-0 folios for [@index, @index + @nr), cached
 * pages skipped (and so not marked), PG_readahead on the page @nr - @lookahead
 * in; stops at the first allocation failure.
 */
static void ra_unbounded(struct kernel *k, const struct vma *v, uint64_t index, uint64_t nr, uint64_t lookahead)
{
	uint64_t mark = lookahead <= nr ? index + nr - lookahead : UINT64_MAX;

	for (uint64_t i = index; i < index + nr; i++)
		if (ra_folio(k, v, i, 0, i == mark ? mark : UINT64_MAX) == 2)
			break;
}

/* do_page_cache_ra(): ra_unbounded() up to the end of the file */
static void do_page_cache_ra(struct kernel *k, const struct vma *v, uint64_t index, uint64_t nr, uint64_t lookahead)
{
	uint64_t end = vma_end_pgoff(v);

	if (index >= end)
		return;
	if (nr > end - 1 - index)
		nr = end - index;
	ra_unbounded(k, v, index, nr, lookahead);
}

static unsigned ilog2_u64(uint64_t x)
{
	return 63 - (unsigned)__builtin_clzll(x);
}

/*
 * page_cache_ra_order() from @index for the window in @ra: folios of ra->order
 * capped by the mapping's largest order and ilog2 of the window (stored back in
 * ra->order), each naturally aligned (a smaller one where @index is not) and
 * none past the end of the file; PG_readahead on the folio holding start + size
 * - async_size. Where a page is cached already or an allocation fails, the rest
 * of the window is read by order-0 pages (do_page_cache_ra()); without large
 * folios, or for a window of fewer than 4 pages (min_ra_size), all of it is.
 */
static void ra_order(struct kernel *k, const struct vma *v, struct fm_ra *ra, uint64_t index)
{
	uint64_t start = index, end = vma_end_pgoff(v), limit, mark = index + ra->size - ra->async_size;
	unsigned max = max_folio_order(k, v), order;
	int err = 0;

	if (!ra->size)
		return;
	if (!max) {
		ra->order = 0;
		do_page_cache_ra(k, v, index, ra->size, ra->async_size);
		return;
	}
	if (ra->size < 4) { /* min_ra_size: a window too small for large folios */
		do_page_cache_ra(k, v, index, ra->size, ra->async_size);
		return;
	}
	order = ra->order < max ? ra->order : max;
	if (order > ilog2_u64(ra->size))
		order = ilog2_u64(ra->size);
	ra->order = (uint8_t)order;
	if (index >= end)
		return;
	limit = end - 1;
	if (limit > index + ra->size - 1)
		limit = index + ra->size - 1;
	while (index <= limit) {
		unsigned o = order;

		if (index & ((1ULL << o) - 1))
			o = (unsigned)__builtin_ctzll(index);
		while (o && index + (1ULL << o) - 1 > limit)
			o--;
		err = ra_folio(k, v, index, o, mark);
		if (err)
			break;
		index += 1ULL << o;
	}
	if (err && ra->size > index - start)
		do_page_cache_ra(k, v, index, ra->size - (index - start), ra->async_size);
}

/* get_init_ra_size() */
static uint64_t init_ra_size(uint64_t size, uint64_t max)
{
	uint64_t n = 1;

	while (n < size)
		n <<= 1;
	if (n <= max / 32)
		return n * 4;
	if (n <= max / 4)
		return n * 2;
	return max;
}

/* get_next_ra_size() */
static uint64_t next_ra_size(uint64_t cur, uint64_t max)
{
	if (cur < max / 16)
		return 4 * cur;
	if (cur <= max / 2)
		return 2 * cur;
	return max;
}

/* page_cache_prev_miss(): the highest uncached index in [index - max + 1, index];
 * UINT64_MAX where the scan wrapped below 0, index - max if none */
static uint64_t prev_miss(const struct kernel *k, uint32_t file, uint64_t index, uint64_t max)
{
	for (uint64_t n = 0; n < max; n++, index--) {
		if (lookup(&k->fm, file, index) == PFN_NONE)
			return index;
		if (!index)
			return UINT64_MAX;
	}
	return index;
}

/* page_cache_next_miss(): the lowest uncached index in [index, index + max), else index + max */
static uint64_t next_miss(const struct kernel *k, uint32_t file, uint64_t index, uint64_t max)
{
	for (uint64_t n = 0; n < max; n++, index++)
		if (lookup(&k->fm, file, index) == PFN_NONE)
			return index;
	return index;
}

/*
 * page_cache_sync_ra() of a fault at @index under VM_SEQ_READ (req_count =
 * ra_pages, prev_pos never set by a fault): at the start of the file the
 * initial window with half of it async; elsewhere page_cache_prev_miss() finds
 * at most ra_pages cached pages before it, never more than the request, so it
 * is a "standalone small random read": ra_pages pages from the fault, no mark.
 */
static void sync_ra(struct kernel *k, const struct vma *v, struct fm_ra *ra, uint64_t index)
{
	uint64_t req = ra_pages(k), max = req;

	if (!index) {
		ra->start = index;
		ra->size = init_ra_size(req, max);
		ra->async_size = ra->size > req ? ra->size - req : ra->size >> 1;
	} else {
		uint64_t miss = prev_miss(k, v->file, index - 1, max), contig = index - miss - 1;

		if (contig <= req) {
			do_page_cache_ra(k, v, index, req, 0);
			return;
		}
		if (miss == UINT64_MAX)
			contig *= 2;
		ra->start = index;
		ra->size = contig + req < max ? contig + req : max;
		ra->async_size = 1;
	}
	ra->order = 0;
	ra_order(k, v, ra, ra->start);
}

/*
 * page_cache_async_ra() of a fault at @index on the PG_readahead folio of cache
 * page @pfn (req_count = ra_pages): the mark goes; at the expected index (the
 * mark rounded down to the folio) the window moves on by its size and grows
 * (get_next_ra_size()), else a new window starts at the next uncached page
 * (interleaved streams); ra->order grows by 2, the window's end is aligned to
 * it, the whole window is async, and page_cache_ra_order() reads it.
 */
static void async_ra(struct kernel *k, const struct vma *v, struct fm_ra *ra, uint64_t index, pfn_t pfn)
{
	uint64_t max = ra_pages(k), expected, end, aligned, align;

	k->fm.ra_mark[folio_head(k, pfn)] = 0; /* folio_clear_readahead() */
	expected = (ra->start + ra->size - ra->async_size) & ~(folio_nr(k, pfn) - 1);
	if (index == expected) {
		uint64_t next = next_ra_size(ra->size, max);

		ra->start += ra->size;
		if (next > ra->size) /* MADV_HUGEPAGE's window may exceed the maximum */
			ra->size = next;
	} else {
		uint64_t start = next_miss(k, v->file, index + 1, max);

		if (!start || start - index > max)
			return;
		ra->start = start;
		ra->size = next_ra_size(start - index + max, max);
	}
	ra->order += 2;
	align = 1ULL << (ra->order < __builtin_ctzll(max) ? ra->order : (unsigned)__builtin_ctzll(max));
	end = ra->start + ra->size;
	aligned = end & ~(align - 1);
	if (aligned > ra->start)
		ra->size -= end - aligned;
	ra->async_size = ra->size;
	ra_order(k, v, ra, ra->start);
}

/*
 * do_sync_mmap_readahead() for a miss at @pgoff of @v (6.18): VM_HUGEPAGE reads
 * two PMD-order folios from the aligned index (one under VM_RAND_READ), the
 * second marked, leaving ra->start as it was; else nothing under VM_RAND_READ
 * (but in a VM_EXEC mapping from 6.16 on) or with read-ahead off; VM_SEQ_READ:
 * page_cache_sync_ra(); else mmap_miss counts the miss and above
 * MMAP_LOTSAMISS nothing more is read; a VM_EXEC mapping (6.16 on) reads
 * ra_pages forward from the fault within the VMA, order exec_folio_order() (0
 * on x86-64), no async part; else read-around: ra_pages from pgoff - ra_pages
 * / 2, the last quarter async (PG_readahead at three quarters), order 0.
 */
static void sync_mmap_ra(struct kernel *k, const struct vma *v, uint64_t pgoff)
{
	struct fm_ra *ra = ra_state(k, v->file);
	uint64_t n = ra_pages(k);
	bool exec = (v->flags & VM_EXEC) && kernel_rand_read_exec_readaround(k->cfg->kernel);

	if (!ra)
		return;
	if ((v->flags & VM_HUGEPAGE) && k->thp.folio) {
		uint64_t index = pgoff & ~(uint64_t)(HPAGE_PMD_NR - 1);

		ra->size = v->flags & VM_RAND_READ ? HPAGE_PMD_NR : 2 * HPAGE_PMD_NR;
		ra->async_size = HPAGE_PMD_NR;
		ra->order = HPAGE_PMD_ORDER;
		ra_order(k, v, ra, index);
		return;
	}
	if (((v->flags & VM_RAND_READ) && !exec) || !n)
		return;
	if (v->flags & VM_SEQ_READ) {
		sync_ra(k, v, ra, pgoff);
		return;
	}
	if (ra->mmap_miss < MMAP_LOTSAMISS * 10)
		ra->mmap_miss++;
	if (ra->mmap_miss > MMAP_LOTSAMISS)
		return;
	if (exec) {
		uint64_t end = vma_end_pgoff(v);

		ra->order = 0;
		ra->start = pgoff > v->pgoff ? pgoff : v->pgoff;
		ra->size = (ra->start + n < end ? ra->start + n : end) - ra->start;
		ra->async_size = 0;
	} else {
		ra->start = pgoff > n / 2 ? pgoff - n / 2 : 0;
		ra->size = n;
		ra->async_size = n / 4;
		ra->order = 0;
	}
	ra_order(k, v, ra, ra->start);
}

/*
 * do_async_mmap_readahead() for a fault that found cache page @pfn at @pgoff:
 * nothing under VM_RAND_READ or with read-ahead off; a hit counts mmap_miss
 * down; on a PG_readahead folio page_cache_async_ra(), after which the fault
 * is retried (the mmap or VMA lock was dropped for the I/O:
 * maybe_unlock_mmap_for_io(), VM_FAULT_RETRY). True when it was.
 */
static bool async_mmap_ra(struct kernel *k, const struct vma *v, uint64_t pgoff, pfn_t pfn)
{
	struct fm_ra *ra;

	if ((v->flags & VM_RAND_READ) || !ra_pages(k) || !(ra = ra_state(k, v->file)))
		return false;
	if (ra->mmap_miss)
		ra->mmap_miss--;
	if (!filemap_readahead_marked(k, pfn))
		return false;
	async_ra(k, v, ra, pgoff, pfn);
	return true;
}

/*
 * filemap_fault()'s page-cache part (and shmem_fault()'s) for page @pgoff of
 * @v: the cached frame, PFN_NONE when out of memory. A hit runs
 * do_async_mmap_readahead() unless the fault is a retry after a major one
 * (FAULT_FLAG_TRIED) and sets *@retry when it read ahead. A miss is a major
 * fault (PGMAJFAULT, the task's maj_flt): do_sync_mmap_readahead(), then the
 * page itself if readahead did not bring it (__filemap_get_folio(FGP_CREAT):
 * order 0); the fault is retried with FAULT_FLAG_TRIED (x86's
 * do_user_addr_fault() sets it on a VMA-locked VM_FAULT_MAJOR | VM_FAULT_RETRY),
 * so it counts as major. A warm cache has no miss; shmem_fault() fills a hole
 * with a new zeroed page: no read, no readahead, no major fault.
 */
static pfn_t cache_fault(struct kernel *k, const struct vma *v, uint64_t pgoff, vaddr_t va, bool *tried,
			 bool *retry)
{
	pfn_t pfn = lookup(&k->fm, v->file, pgoff);

	*retry = false;
	if (pfn != PFN_NONE) {
		if (!(v->flags & VM_SHMEM) && !*tried)
			*retry = async_mmap_ra(k, v, pgoff, pfn);
		return pfn;
	}
	if (v->flags & VM_SHMEM)
		return shmem_add_page(k, v, pgoff);
	if (k->cfg->file_cache == FILE_CACHE_WARM) /* it was cached all along: no read */
		return add_folio(k, v->file, pgoff, warm_order(k));
	k->st->pgmajfault++;
	vmas_count(k, va, VE_PGMAJFAULT);
	sync_mmap_ra(k, v, pgoff);
	pfn = lookup(&k->fm, v->file, pgoff);
	if (pfn == PFN_NONE)
		pfn = add_page(k, v->file, pgoff); /* the faulting page must come; the rest was best effort */
	*tried = *retry = true;
	return pfn;
}

/* filemap_fault()'s page for @pgoff with its retries: PFN_NONE if out of memory. */
static pfn_t get_page(struct kernel *k, const struct vma *v, uint64_t pgoff, vaddr_t va)
{
	bool tried = false, retry = true;
	pfn_t pfn = PFN_NONE;

	while (retry) {
		pfn = cache_fault(k, v, pgoff, va, &tried, &retry);
		if (pfn == PFN_NONE)
			return PFN_NONE;
	}
	return pfn;
}

int filemap_read_in(struct kernel *k, uint32_t file, uint64_t off, uint64_t nr)
{
	for (uint64_t o = off; o < off + nr; o++)
		if (lookup(&k->fm, file, o) == PFN_NONE && add_page(k, file, o) == PFN_NONE)
			return 1;
	return 0;
}

bool filemap_is_thp(const struct kernel *k, pfn_t pfn)
{
	return k->thp.folio && (k->thp.folio[pfn >> HPAGE_PMD_ORDER].flags & FOLIO_FILE) &&
	       filemap_is_cache(&k->fm, pfn);
}

void filemap_install_thp(struct kernel *k, uint32_t file, uint64_t start, pfn_t head)
{
	struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];

	/* the block is kept as 512 order-0 frames (split_page()), each a cache page
	 * like any other: the cache never frees a page before the end (see the header) */
	thp_split_alloc(&k->buddy, head, HPAGE_PMD_ORDER);
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		pfn_t old = lookup(&k->fm, file, start + i);

		BUG_ON(old == PFN_NONE || k->fm.map[old] != 1); /* present and unmapped */
		set_val(&k->fm, file, start + i, head + i);
		k->fm.map[old] = 0;
		k->fm.map[head + i] = 1;
		k->fm.order[head + i] = 0; /* mapped by do_set_pmd() or page by page, as before */
		k->fm.ra_mark[head + i] = 0;
		k->fm.ra_mark[old] = 0;
		k->rmap[head + i] = 0;
		buddy_free(&k->buddy, old, 0); /* folio_put_refs() of the old page */
	}
	memset(f, 0, sizeof(*f));
	f->flags = FOLIO_FILE;
	k->st->nr_file_hugepages++; /* NR_FILE_THPS; nr_file_pages is unchanged */
}

void filemap_map_pmd(struct kernel *k, pfn_t head)
{
	struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];

	/* folio_add_file_rmap_pmd(): NR_FILE_MAPPED by the pages not mapped yet,
	 * NR_FILE_PMDMAPPED on the first PMD */
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++)
		if (k->fm.map[head + i]++ == 1)
			k->st->nr_mapped++;
	if (f->nr_pmd++ == 0)
		k->st->nr_file_pmdmapped++;
	k->fm.nr_pmds++;
}

void filemap_unmap_pmd(struct kernel *k, pfn_t pfn)
{
	pfn_t head = pfn & ~(pfn_t)(HPAGE_PMD_NR - 1);
	struct folio *f = &k->thp.folio[head >> HPAGE_PMD_ORDER];

	BUG_ON(!f->nr_pmd);
	for (unsigned i = 0; i < HPAGE_PMD_NR; i++) {
		BUG_ON(k->fm.map[head + i] < 2);
		if (--k->fm.map[head + i] == 1)
			k->st->nr_mapped--;
	}
	if (--f->nr_pmd == 0)
		k->st->nr_file_pmdmapped--;
	k->fm.nr_pmds--;
}

void filemap_map_pte(struct kernel *k, pfn_t pfn)
{
	if (k->fm.map[pfn]++ == 1)
		k->st->nr_mapped++;
	k->fm.nr_ptes++;
}

void filemap_unmap_pte(struct kernel *k, pfn_t pfn)
{
	BUG_ON(k->fm.map[pfn] < 2);
	if (--k->fm.map[pfn] == 1)
		k->st->nr_mapped--;
	k->fm.nr_ptes--;
}

/* set_pte_range() of one cache page at @p: 0, or 1 out of host memory. */
static int map_cache_pte(struct kernel *k, vaddr_t p, pfn_t pfn, bool writable)
{
	if (pt_map(&k->mm->pt, p, PS_4K, pfn, writable))
		return 1;
	filemap_map_pte(k, pfn);
	return 0;
}

/*
 * A shared shmem mapping has no write-notify (vma_wants_writenotify(): no
 * page_mkwrite, no dirty accounting), so vm_page_prot is writable and a read
 * fault's PTEs are made writable (set_pte_range() from mk_pte(page,
 * vma->vm_page_prot)): a later store takes no fault.
 */
static bool read_maps_writable(const struct vma *v)
{
	const unsigned long f = VM_SHMEM | VM_SHARED | VM_WRITE;

	return (v->flags & f) == f;
}

/*
 * set_pte_range() of the pages of [@lo, @hi) whose PTEs are empty, from frame
 * @pfn on (one folio's run): 0, or 1 out of host memory.
 */
static int map_cache_ptes(struct kernel *k, vaddr_t lo, vaddr_t hi, pfn_t pfn, bool writable)
{
	for (vaddr_t q = lo; q < hi; q += PAGE_SIZE, pfn++)
		if (pt_slot_empty(&k->mm->pt, q, PS_4K) && map_cache_pte(k, q, pfn, writable))
			return 1;
	return 0;
}

/*
 * The large folio holding cache page @pfn mapped at @p in @v: its first
 * address (@f0) and its end (@f1) in @v's address space. True when the kernel
 * maps it whole (kernel_map_whole_folio()) and it lies inside the VMA and one
 * page table (filemap_map_folio_range(): folio_within_vma() and the PMD check;
 * finish_fault(): vma_off and pte_off against the folio's index). The end of
 * the file is not checked (74207de2ba10): a trace does not know a file's size,
 * and the model takes every page a VMA maps as inside it.
 */
static bool whole_folio(const struct kernel *k, const struct vma *v, vaddr_t p, pfn_t pfn,
			vaddr_t *f0, vaddr_t *f1)
{
	unsigned order = k->fm.order[pfn];
	uint64_t idx;

	if (!order || !kernel_map_whole_folio(k->cfg->kernel))
		return false;
	idx = (v->pgoff + ((p - v->start) >> PAGE_SHIFT)) & ((1ULL << order) - 1);
	*f0 = p - idx * PAGE_SIZE;
	*f1 = *f0 + (PAGE_SIZE << order);
	return *f0 >= v->start && *f1 <= v->end && (*f0 & ~(PMD_SIZE - 1)) == ((*f1 - 1) & ~(PMD_SIZE - 1));
}

void filemap_fault_around_window(const struct vma *v, vaddr_t va, uint64_t nr, vaddr_t *lo, vaddr_t *hi)
{
	vaddr_t table = va & ~(PMD_SIZE - 1);

	*lo = table + (((va - table) >> PAGE_SHIFT) & ~(nr - 1)) * PAGE_SIZE;
	if (*lo < v->start)
		*lo = v->start;
	*hi = *lo + nr * PAGE_SIZE;
	if (*hi > v->end)
		*hi = v->end;
	if (*hi > table + PMD_SIZE)
		*hi = table + PMD_SIZE;
}

/*
 * do_fault_around() + filemap_map_pages(): map the cached pages of the window
 * around @va whose PTEs are empty, read-only (writable: read_maps_writable()).
 * In a shmem VMA only pages that exist: a hole is left to its own fault. From
 * 6.18 a large folio the window meets is mapped whole where whole_folio() lets
 * it, its pages outside the window too (357b92761d94); before, only the
 * window's part.
 */
static int fault_around(struct kernel *k, const struct vma *v, vaddr_t va)
{
	uint64_t nr = k->cfg->fault_around_bytes >> PAGE_SHIFT, hits = 0;
	vaddr_t lo, hi;
	bool writable = read_maps_writable(v);
	int ret = 0;

	filemap_fault_around_window(v, va, nr, &lo, &hi);
	for (vaddr_t p = lo; p < hi; p += PAGE_SIZE) {
		uint64_t off = v->pgoff + ((p - v->start) >> PAGE_SHIFT);
		pfn_t pfn = lookup(&k->fm, v->file, off);
		vaddr_t f0, f1;

		if (pfn == PFN_NONE && (v->flags & VM_SHMEM)) {
			if (shmem_exists(k, v) && pt_slot_empty(&k->mm->pt, p, PS_4K))
				pfn = shmem_add_page(k, v, off);
		} else if (pfn == PFN_NONE && k->cfg->file_cache == FILE_CACHE_WARM && pt_slot_empty(&k->mm->pt, p, PS_4K)) {
			pfn = add_folio(k, v->file, off, warm_order(k)); /* cached all along; stops where memory ends */
		}
		if (pfn == PFN_NONE)
			continue;
		if (k->fm.ra_mark[folio_head(k, pfn)]) /* next_uptodate_folio() skips it */
			continue;
		if (whole_folio(k, v, p, pfn, &f0, &f1)) {
			hits += (f1 - f0) >> PAGE_SHIFT;
			if (map_cache_ptes(k, f0, f1, pfn - ((p - f0) >> PAGE_SHIFT), writable)) {
				ret = 1;
				break;
			}
			p = f1 - PAGE_SIZE; /* on with the next folio */
			continue;
		}
		hits++;
		if (pt_slot_empty(&k->mm->pt, p, PS_4K) && map_cache_pte(k, p, pfn, writable)) {
			ret = 1;
			break;
		}
	}
	/* filemap_map_pages(): each page of a folio range it maps (its PTE empty or
	 * not; no folio is workingset here) counts f_ra.mmap_miss down */
	if (hits && !(v->flags & VM_SHMEM)) {
		struct fm_ra *ra = (struct fm_ra *)filemap_ra(k, v->file);

		if (ra)
			ra->mmap_miss = hits >= ra->mmap_miss ? 0 : (uint16_t)(ra->mmap_miss - hits);
	}
	return ret;
}

/*
 * finish_fault() for the cache page @pfn at @p: from 6.18 its whole large
 * folio where whole_folio() lets it and all its PTEs are empty (19773df031bc;
 * else needs_fallback: the one page), writable and dirty for a shared write
 * (set_pte_range() of every page); before 6.18 the one page (non-shmem).
 */
static int finish_fault(struct kernel *k, const struct vma *v, vaddr_t p, pfn_t pfn, bool writable)
{
	vaddr_t f0, f1;

	if (whole_folio(k, v, p, pfn, &f0, &f1)) {
		bool none = true;

		for (vaddr_t q = f0; q < f1 && none; q += PAGE_SIZE)
			none = pt_slot_empty(&k->mm->pt, q, PS_4K);
		if (none)
			return map_cache_ptes(k, f0, f1, pfn - ((p - f0) >> PAGE_SHIFT), writable);
	}
	return map_cache_pte(k, p, pfn, writable);
}

/* wp_page_copy() / do_cow_fault()'s copy: an anonymous page at @p instead. */
static int cow_copy(struct kernel *k, struct vma *v, vaddr_t p, bool replace)
{
	pfn_t np;

	v->flags |= VM_ANON_VMA; /* vmf_anon_prepare() */
	np = buddy_alloc(&k->buddy, 0);
	if (np == PFN_NONE)
		return 1;
	if (replace)
		pt_set_pte(&k->mm->pt, p, np, v->flags & VM_WRITE);
	else if (pt_map(&k->mm->pt, p, PS_4K, np, v->flags & VM_WRITE)) {
		buddy_free(&k->buddy, np, 0);
		return 1;
	}
	kernel_rmap_set(k, np, p);
	lru_add(&k->lru, np, 1);
	k->st->nr_anon_pages++;
	kernel_rss_changed(k);
	k->st->cyc_fault += k->cfg->cost.copy_page;
	return 0;
}

/*
 * do_set_pmd()'s checks for the file THP holding the page at @va: THP not
 * disabled for the VMA (vma_thp_disabled(): VM_NOHUGEPAGE; a kernel without THP
 * has no file THP), thp_vma_suitable_order() at the 2M block (the VMA's start
 * minus its pgoff 2M aligned, the block inside the VMA), and pmd_none().
 */
static bool set_pmd_ok(const struct kernel *k, const struct vma *v, vaddr_t va)
{
	vaddr_t h = va & ~(PMD_SIZE - 1);

	return k->cfg->mode == MODE_THP && !(v->flags & VM_NOHUGEPAGE) && !k->mm->thp_disable &&
	       filemap_thp_suitable(v, h) && pt_slot_empty(&k->mm->pt, h, PS_2M);
}

/* do_set_pmd(): one read-only PMD maps the whole file THP (thp_file_mapped). */
static int map_cache_pmd(struct kernel *k, vaddr_t va, pfn_t pfn)
{
	pfn_t head = pfn & ~(pfn_t)(HPAGE_PMD_NR - 1);

	if (pt_map(&k->mm->pt, va & ~(PMD_SIZE - 1), PS_2M, head, false))
		return 1;
	filemap_map_pmd(k, head);
	k->st->thp_file_mapped++;
	return 0;
}

bool filemap_thp_suitable(const struct vma *v, vaddr_t haddr)
{
	return !(((v->start >> PAGE_SHIFT) - v->pgoff) & (HPAGE_PMD_NR - 1)) && haddr >= v->start &&
	       haddr + PMD_SIZE <= v->end;
}

/*
 * do_read_fault() with filemap_fault()'s retries: each attempt maps what
 * fault-around can (a file THP by its PMD: filemap_map_pmd(); PG_readahead
 * folios skipped) and is done when that covers the faulting page; else
 * filemap_fault() finds the page (a hit on a PG_readahead folio reads ahead
 * and retries, a miss reads and retries as FAULT_FLAG_TRIED) and finish_fault()
 * maps it. Only the last attempt counts (mm_account_fault()).
 */
static int read_fault(struct kernel *k, struct vma *v, vaddr_t va)
{
	vaddr_t p = va & ~(PAGE_SIZE - 1);
	uint64_t pgoff = v->pgoff + ((p - v->start) >> PAGE_SHIFT);
	bool around = k->cfg->fault_around_bytes > PAGE_SIZE, tried = false, retry = true;
	pfn_t pfn = lookup(&k->fm, v->file, pgoff);

	/* a warm cache's or a shmem file's page comes first, as it always did */
	if (pfn == PFN_NONE && ((v->flags & VM_SHMEM) || k->cfg->file_cache == FILE_CACHE_WARM) &&
	    get_page(k, v, pgoff, p) == PFN_NONE)
		return 1;
	while (retry) {
		pfn = lookup(&k->fm, v->file, pgoff);
		if (pfn != PFN_NONE && !filemap_readahead_marked(k, pfn) && filemap_is_thp(k, pfn) &&
		    set_pmd_ok(k, v, va))
			return map_cache_pmd(k, va, pfn);
		if (around) {
			if (fault_around(k, v, va))
				return 1;
			if (!pt_slot_empty(&k->mm->pt, p, PS_4K))
				return 0;
		}
		pfn = cache_fault(k, v, pgoff, p, &tried, &retry);
		if (pfn == PFN_NONE)
			return 1;
	}
	if (filemap_is_thp(k, pfn) && set_pmd_ok(k, v, va))
		return map_cache_pmd(k, va, pfn);
	return finish_fault(k, v, p, pfn, read_maps_writable(v));
}

int filemap_fault(struct kernel *k, struct vma *v, vaddr_t va, bool write)
{
	vaddr_t p = va & ~(PAGE_SIZE - 1);
	pfn_t pfn;

	if (!write)
		return read_fault(k, v, va);
	pfn = get_page(k, v, v->pgoff + ((p - v->start) >> PAGE_SHIFT), p);
	if (pfn == PFN_NONE)
		return 1;
	if (!(v->flags & VM_SHARED))
		return cow_copy(k, v, p, false); /* do_cow_fault() */
	/* do_shared_fault(): the cache page (its folio), writable and dirty */
	return finish_fault(k, v, p, pfn, v->flags & VM_WRITE);
}

int filemap_wp_fault(struct kernel *k, struct vma *v, vaddr_t va, pfn_t pfn)
{
	vaddr_t p = va & ~(PAGE_SIZE - 1);

	if (v->flags & VM_SHARED) { /* wp_page_shared(): dirty it, make it writable */
		pt_protect_range(&k->mm->pt, p, p + PAGE_SIZE, true, PFN_NONE, PFN_NONE);
		return 0;
	}
	if (cow_copy(k, v, p, true)) /* wp_page_copy() */
		return 1;
	filemap_unmap_pte(k, pfn);
	return 0;
}

void filemap_for_each(const struct kernel *k, void (*fn)(void *ctx, pfn_t pfn), void *ctx)
{
	for (size_t i = 0; i < k->fm.cap; i++)
		if (k->fm.key_file[i])
			fn(ctx, k->fm.val[i]);
}

void filemap_check_invariants(const struct kernel *k, uint64_t ptes, uint64_t pmds)
{
	uint64_t maps = 0, nr_mapped = 0;

	BUG_ON(k->fm.n != k->st->nr_file_pages);
	for (size_t i = 0; i < k->fm.cap; i++)
		if (k->fm.key_file[i]) {
			pfn_t pfn = k->fm.val[i];
			uint32_t m = k->fm.map[pfn];
			unsigned o = k->fm.order[pfn];

			BUG_ON(m == 0);
			/* a large folio: aligned in the file and in memory, the same order throughout */
			BUG_ON((k->fm.key_off[i] ^ pfn) & ((1ULL << o) - 1));
			BUG_ON(k->fm.order[pfn & ~(((pfn_t)1 << o) - 1)] != o);
			BUG_ON(k->fm.ra_mark[pfn] && folio_head(k, pfn) != pfn); /* PG_readahead: a folio's */
			maps += m - 1;
			nr_mapped += m > 1;
		}
	BUG_ON(maps != ptes + pmds * HPAGE_PMD_NR || ptes != k->fm.nr_ptes || pmds != k->fm.nr_pmds);
	BUG_ON(nr_mapped != k->st->nr_mapped);
}
