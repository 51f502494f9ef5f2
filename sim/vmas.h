/*
 * vmas.h - where the misses are: the run's counters broken down by mapping, as
 * /proc/PID/smaps breaks memory down by VMA (vmas.c says how).
 *
 * A mapping is one mmap call (or the brk heap, or one implicit region): its
 * record keeps every counter charged to an address inside it while it was
 * mapped, whatever mprotect, madvise, munmap and mremap later did to its VMAs.
 * Record 0 is "[none]": what touched no mapping (a fault the run could not
 * serve). The records' counters sum exactly to the run's totals.
 */
#ifndef MMUSIM_VMAS_H
#define MMUSIM_VMAS_H

#include <stdio.h>

#include "trace.h"
#include "types.h"

struct kernel;

/* The kernel's events counted per mapping (the run's st.* of the same name). */
enum vrec_event {
	VE_PGFAULT,
	VE_PGMAJFAULT,
	VE_THP_FAULT_ALLOC,
	VE_THP_FAULT_FALLBACK,
	VE_THP_SPLIT_PMD,
	VE_THP_SPLIT_PAGE,
	VE_THP_COLLAPSE_ALLOC,
	VE_NR
};

/* The MMU's counters per mapping (deltas of struct mmu_stats, vmas.c). */
enum vrec_hw {
	VH_ITLB_MISSES, /* l1[SIDE_I].misses, all page sizes */
	VH_DTLB_MISSES, /* l1[SIDE_D].misses */
	VH_STLB_MISSES,
	VH_WALKS,
	VH_WALK_CYCLES,
	VH_NR
};

struct vrec {
	vaddr_t start, end;   /* as mapped (grown by brk and mremap); at the end, its live span */
	unsigned long flags;  /* vma.h flags: at creation, at the end those of its lowest live VMA */
	uint32_t tfile;       /* the trace's file (1 + index into trace_reader.files), 0 none */
	bool stack;           /* MAP_STACK, or the initial stack of an mtr version 2 trace */
	char *path;           /* the file's path (vmas_set_paths()), or NULL */
	uint64_t off;         /* a file mapping: the offset in the file at start, as mapped */
	uint64_t hw[VH_NR];
	uint64_t ev[VE_NR];
	/* hugepages-<size>kB/stats/ anon_fault_alloc and anon_fault_fallback by order below
	 * PMD order (mTHP faults; 2M's are thp_fault_alloc and thp_fault_fallback) */
	uint64_t mthp_alloc[HPAGE_PMD_ORDER], mthp_fallback[HPAGE_PMD_ORDER];
	/* filled by vmas_finish() */
	uint64_t size_bytes;  /* still mapped at the end */
	uint64_t rss_bytes, huge_bytes; /* as memory.rss_bytes and memory.huge_bytes */
	const char *thp_no;   /* why THP is not allowed (smaps' THPeligible 0), NULL if allowed */
};

/* One piece of a mapping's address range: [start, end) belongs to record rec. */
struct vext {
	vaddr_t start, end;
	uint32_t rec;
};

/*
 * A window of the window cache (vmas.c): every address of [lo, lo + len) is
 * record rec's, as long as gen is the breakdown's generation.
 */
struct vwin {
	vaddr_t lo, len;
	uint32_t rec, gen;
};

struct vmas_acct {
	struct vrec *rec;
	size_t nrec, cap_rec;
	struct vext *ext; /* sorted, non-overlapping */
	size_t next, cap_ext;
	struct vext *pend; /* new mappings' extents not merged into ext yet: sorted, */
	size_t npend, cap_pend; /* overlapping neither ext nor each other (vmas.c) */
	struct vwin *wc;  /* the window cache: wc_mask + 1 slots, or NULL */
	size_t wc_mask;
	uint32_t gen;     /* the cache's generation: a removal of address space bumps it */
	uint64_t searches; /* look-ups the cache did not answer (tests) */
	bool nocache;     /* tests: every look-up searches (the cache's oracle) */
	uint32_t cur;     /* the record the MMU's deltas go to (its window) */
	uint32_t heap;    /* the brk heap's record, 0 none yet */
	uint64_t snap[VH_NR]; /* the MMU's counters when cur was last charged */
	bool oom;         /* host memory ran out: the breakdown is incomplete (never reported) */
};

/* Start the breakdown of @s (record 0 only; installs the MMU's window hook). 0 or -1. */
int vmas_init(struct kernel *k);

struct mm;

/* One address space's breakdown: empty (record 0 only), 0 or -1; freed. */
int vmas_acct_init(struct vmas_acct *a);
void vmas_acct_free(struct vmas_acct *a);
/* fork: @to gets @from's mappings (records and extents), with nothing counted yet. 0 or -1. */
int vmas_acct_copy(struct vmas_acct *to, const struct vmas_acct *from);
/* exec in k->mm: its breakdown starts again, empty. 0 or -1 (host OOM). */
int vmas_exec(struct kernel *k);
/* A context switch from k->mm to @next: the outgoing counts charged, the window closed. */
void vmas_switch(struct kernel *k, struct mm *next);

/*
 * A new mapping of [start, end) with vma.h @flags (after the VMA is inserted);
 * @tfile the trace's file, @stack MAP_STACK. An address of it met in the
 * window the MMU is charging to [none] hands that access's counts to it (the
 * fault that made an implicit mapping). 0 or -1 (host OOM).
 */
int vmas_map(struct kernel *k, vaddr_t start, vaddr_t end, unsigned long flags, uint32_t tfile,
	     bool stack);

/* [start, end) no longer mapped (munmap, or before a MAP_FIXED mmap over it). 0 or -1. */
int vmas_unmap(struct kernel *k, vaddr_t start, vaddr_t end);

/* [start, end) becomes part of record @rec (the heap grown, mremap). 0 or -1. */
int vmas_extend(struct kernel *k, vaddr_t start, vaddr_t end, uint32_t rec);

/* The heap's record, made on the first growth of the brk area. */
uint32_t vmas_heap(struct kernel *k, vaddr_t start, vaddr_t end);

/* The record holding @va (0: none). Cached: a look-up in a mapping met before is O(1). */
uint32_t vmas_rec_of(struct kernel *k, vaddr_t va);

/* Count one kernel event @e at @va (the caller counts it in k->st too). */
void vmas_count(struct kernel *k, vaddr_t va, enum vrec_event e);

/* An mTHP fault at @va allocated (@fallback false) or failed to allocate an order-@order folio. */
void vmas_count_mthp(struct kernel *k, vaddr_t va, unsigned order, bool fallback);

/* Charge the MMU's counters since the last charge to the current record. */
void vmas_flush(struct kernel *k);

/*
 * Every mapping's counts back to 0 (the ROI's warm-up reset, roi.c), charged up
 * to now first; the MMU's counters must be zeroed right after (the window's
 * snapshot restarts from 0). RSS and the mapping identities stay.
 */
void vmas_reset_counts(struct kernel *k);

/* At the end of the run: the last charge, RSS, sizes, flags and THP eligibility. */
void vmas_finish(struct kernel *k);

/* The paths of the trace's files (@files[i] is file i + 1), copied into the records. */
void vmas_set_paths(struct kernel *k, const struct trace_file *files, size_t n);

/* "anon", "file", "heap", "stack", "hugetlb", "shmem", "implicit", "text" or "none". */
const char *vmas_kind(const struct vrec *r, uint32_t idx);

/* "rw-p" as /proc/PID/maps writes the protection and sharing of @flags. */
void vmas_perms(unsigned long flags, char out[5]);

/* The records in report order (walk cycles, most first; then address): indices into @s. */
uint32_t *vmas_order(const struct kernel *k);

/* The top @top mappings by walk cycles as a table (run --vmas). */
void vmas_write_text(const struct kernel *k, unsigned top, FILE *out);

/* The breakdown as CSV (run --vmas-csv): the header if @header, a row per record in
 * vmas_order() (the first @top; 0: all), each starting with @mode. Its name column
 * is unique in the run: FILE:PERMS, +0xOFFSET where that is shared, kind@start
 * without a path, #ID where a name is still shared (vmas.c, vmas_names()). */
void vmas_write_csv(const struct kernel *k, const char *mode, int64_t process, bool header, unsigned top,
		    const char *prov, FILE *out);

/* The JSON array of the report's "vmas" key (a json_t *, caller owns it). */
void *vmas_to_json(const struct kernel *k);

#endif
