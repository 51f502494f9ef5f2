/*
 * trace.h - one interface for every record source: trace files of each format
 * (trace_lackey.c, trace_mtr.c, ...) and the built-in workloads (workload.c).
 *
 * A reader hands out batches of records; the simulator loop never sees a format.
 * Memory references and OS events share one ordered stream: an event is a record
 * of kind R_EVENT whose `size` field indexes the batch's event array.
 */
#ifndef MMUSIM_TRACE_H
#define MMUSIM_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"
#include "types.h"

enum rec_kind {
	R_IFETCH = 0, /* lackey "I": one instruction fetched */
	R_LOAD = 1,   /* " L" */
	R_STORE = 2,  /* " S" */
	R_MODIFY = 3, /* " M": a load then a store to the same address (a read-modify-write;
		       * replayed store first: it faults as one write) */
	R_EVENT = 4,  /* an OS event; size = index into trace_batch.ev */
	R_INSNS = 5,  /* `size` instructions executed without a traced fetch */
	R_TOUCH = 6,  /* the page at `addr` was touched before the region of interest, not
		       * traced: `size` = enum touch_how (mtr version 3's TOUCH record) */
	R_DEP = 7,    /* the next load, store or modify's ADDRESS depends on the value of an
		       * earlier load: `size` = d >= 1, the d-th most recent load (R_LOAD or
		       * R_MODIFY record; 1 = the latest before this record). Right before
		       * the reference it qualifies; `addr` 0. See trace_reader.deps. */
	R_KIND_NR
};

/*
 * How an R_TOUCH record's page was touched, as the kernel saw it: its first
 * touch (a load, a store or modify, an instruction fetch), or a store to a
 * page first touched by a load or fetch (a write-protect fault: the COW of a
 * zero page or of a private file page). The replay applies it to the kernel
 * model only (sim_touch()): no TLB, PWC or cache lookup, no counter.
 */
enum touch_how { TOUCH_READ = 0, TOUCH_WRITE = 1, TOUCH_FETCH = 2, TOUCH_NR };

struct trace_rec {
	vaddr_t addr;
	uint32_t size; /* bytes touched (>= 1); event index for R_EVENT */
	uint32_t kind; /* enum rec_kind */
};

/*
 * EV_MARKER is not a mapping call: a marker the program set (mtr version 2's
 * MARKER record, written by mmusim's Valgrind tool for each successful
 * getppid()), kept in order with the references so that a replay can report
 * its counters there (`run --steps`). Fields: advice = the marker's system
 * call number, addr = the marker's index (0, 1, ... in the trace).
 */
/*
 * EV_MLOCK .. EV_MUNLOCKALL (mtr version 5, after the marker so that the kinds
 * of earlier versions keep their numbers): mlock() and mlock2() (flags:
 * MLOCK_ONFAULT_), munlock(), mlockall() (flags: MCL_*), munlockall().
 */
/*
 * EV_FORK .. EV_PRCTL (mtr version 6): the processes of a run. Records belong to the
 * current process; a trace without EV_SWITCH is one process (id 0).
 *   fork:   the current process forked: addr = the child's process id (the child
 *           starts with a copy of the parent's address space, copy_page_range())
 *   switch: the records that follow belong to process addr; an id never seen
 *           before is a new process with an empty address space (a run of
 *           several traces, `run A B`, starts each so)
 *   exit:   the current process exited (exit_mmap()); it has no records after
 *   exec:   the current process called execve(): a new, empty address space
 *   prctl:  advice = the option (PR_SET_THP_DISABLE_), addr = its argument
 */
enum ev_kind { EV_MMAP, EV_MUNMAP, EV_MPROTECT, EV_MADVISE, EV_BRK, EV_MREMAP, EV_MARKER,
	       EV_MLOCK, EV_MUNLOCK, EV_MLOCKALL, EV_MUNLOCKALL,
	       EV_FORK, EV_SWITCH, EV_EXIT, EV_EXEC, EV_PRCTL, EV_NR };
extern const char *const ev_kind_name[EV_NR]; /* "mmap", "munmap", ..., "marker", "mlock", ... */

/* Linux x86-64 values (include/uapi/asm-generic/mman*.h). */
#define MAP_SHARED_ 0x01
#define MAP_PRIVATE_ 0x02
#define MAP_FIXED_ 0x10
#define MAP_ANONYMOUS_ 0x20
#define MAP_STACK_ 0x20000
#define MAP_HUGETLB_ 0x40000
#define MADV_NORMAL_ 0
#define MADV_RANDOM_ 1
#define MADV_SEQUENTIAL_ 2
#define MAP_LOCKED_ 0x2000
#define MAP_NORESERVE_ 0x4000
#define MAP_POPULATE_ 0x8000
#define MAP_NONBLOCK_ 0x10000
#define MAP_HUGE_SHIFT_ 26 /* MAP_HUGETLB's page size: log2 in bits 26-31, 0: the default */
#define MAP_HUGE_MASK_ 0x3f
#define MADV_DONTNEED_ 4
#define MADV_FREE_ 8
#define MADV_HUGEPAGE_ 14
#define MADV_NOHUGEPAGE_ 15
#define MADV_COLD_ 20
#define MADV_PAGEOUT_ 21
#define MADV_COLLAPSE_ 25
#define MADV_POPULATE_READ_ 22
#define MADV_POPULATE_WRITE_ 23
#define MLOCK_ONFAULT_ 0x01 /* mlock2() */
#define MCL_CURRENT_ 1      /* mlockall() */
#define MCL_FUTURE_ 2
#define MCL_ONFAULT_ 4
#define MREMAP_MAYMOVE_ 1
#define MREMAP_FIXED_ 2
#define PR_SET_THP_DISABLE_ 41 /* include/uapi/linux/prctl.h */

/*
 * A successful system call that changes the address space (failed calls are
 * dropped by the readers). Fields by kind:
 *   mmap:     addr = the result, len, prot, flags, fd, new_addr = the hint (the
 *             call's addr argument; 0: none or not recorded)
 *   munmap:   addr, len
 *   mprotect: addr, len, prot
 *   madvise:  addr, len, advice
 *   brk:      addr = the result (the new break; brk(0) reports the initial one)
 *   mremap:   addr = old address, len = old length, new_len, flags, new_addr = result
 *   mlock:    addr, len, flags (mlock2()'s MLOCK_ONFAULT_; 0 for mlock())
 *   munlock:  addr, len
 *   mlockall: flags (MCL_CURRENT_ | MCL_FUTURE_ | MCL_ONFAULT_)
 *   munlockall: no field
 */
#define EV_INITIAL_STACK 2 /* os_event.initial of the initial stack (per-mapping kind: vmas.c) */

struct os_event {
	uint16_t kind;   /* enum ev_kind */
	uint16_t initial; /* a mapping present at the first instruction (trace_map), not a call;
			     EV_INITIAL_STACK for the initial stack ([stack]) */
	uint32_t prot;
	uint64_t flags;
	int64_t fd;
	uint64_t advice;
	vaddr_t addr;
	uint64_t len;
	vaddr_t new_addr;
	uint64_t new_len;
	unsigned long line; /* where it came from, for messages; 0 if generated */
	uint64_t off;  /* mmap of a file: the offset in bytes (mtr v2, lackey; else 0) */
	uint32_t file; /* mmap of a file: 1 + index into trace_reader.files (mtr v2); 0 unknown */
	uint32_t thread; /* the thread that made the call (mtr v2: trace_reader.thread); 0 unknown */
	uint64_t fs_magic; /* mmap of a file (mtr v5): its filesystem's statfs f_type (TMPFS_MAGIC_
			      for tmpfs and memfd); 0 unknown (64 bits: the struct has no padding) */
	uint64_t fs_pages; /* mmap of a file (mtr v5): the pages the file had then (st_blocks / 8) */
};

#define TMPFS_MAGIC_ 0x01021994 /* include/uapi/linux/magic.h: tmpfs, /dev/shm, memfd */

/*
 * A mapping present at the program's first instruction (mtr version 2, written
 * by mmusim's Valgrind tool): prot PROT_* bits, flags MAP_* bits (MAP_PRIVATE_
 * or MAP_SHARED_, MAP_ANONYMOUS_ for memory without a file, MAP_STACK_ on the
 * initial stack), and for a file mapping its device, inode, offset and path.
 * name: the path, "[stack]", "[heap]", "[vdso]", "[vvar]", or "" (anonymous).
 */
struct trace_map {
	vaddr_t start;
	uint64_t len;
	uint32_t prot;
	uint64_t flags;
	uint64_t dev, ino, off;
	char *name;
	uint32_t file; /* a file mapping: 1 + index into trace_reader.files; 0 none */
	uint32_t image; /* 0: the trace's first image; k: the image the k-th EV_EXEC starts (mtr v6) */
};

/* The file behind an mmap event (mtr version 2: the path behind the fd then). */
struct trace_file {
	uint64_t dev, ino;
	char *path;
};

#define TRACE_BATCH 4096

/* What trace_next() fills: pointers into the reader's own buffers, valid until the next call. */
struct trace_batch {
	const struct trace_rec *recs;
	size_t n;
	const struct os_event *ev;
	size_t nev;
};

enum trace_format { TF_AUTO, TF_LACKEY, TF_MTR, TF_PIN, TF_CHAMPSIM, TF_DIN, TF_WORKLOAD, TF_NR };
extern const char *const trace_format_name[TF_NR]; /* "auto", "lackey", "mtr", ... */

/* Parse "lackey", "mtr", ... Returns TF_NR if unknown. */
enum trace_format trace_format_parse(const char *s);

/*
 * The trace file formats for help texts, in detection order: "mtr, lackey,
 * pin, din or champsim" (a static string, built on the first call).
 */
const char *trace_format_list(void);

/* One line per trace file format to @out: "  NAME  SUFFIXES  what it is". */
void trace_formats_help(FILE *out);

struct trace_reader;

struct trace_ops {
	/* Fill @b; return the number of records (> 0), 0 at the end, -1 on bad input. */
	int (*next)(struct trace_reader *r, struct trace_batch *b, struct err *e);
	void (*close)(struct trace_reader *r);
};

/* The common head of every reader; formats embed it first. */
struct tio;

struct trace_reader {
	const struct trace_ops *ops;
	enum trace_format format;
	char name[256]; /* the path ("-" is shown as "<stdin>") or workload spec */
	struct trace_rec *rec; /* TRACE_BATCH records: next() fills them (trace_take_recs()) */
	struct tio *io; /* the byte stream of a trace file (set by trace_open()), or NULL */
	/*
	 * mtr version 2 (trace_mtr.c): the initial mappings, known once the
	 * reader is open; the files of mmap events (growing as events are read);
	 * thread switches, forks, region-of-interest starts and markers seen so far.
	 * Other formats leave them empty. Freed by trace_reader_free().
	 */
	struct trace_map *maps;
	size_t nmaps;
	struct trace_file *files;
	size_t nfiles;
	uint64_t thread_switches, forks, roi_starts;
	uint64_t markers; /* MARKER records read so far (each also an EV_MARKER event) */
	uint64_t processes; /* mtr version 6: distinct process ids seen so far (1 before any) */
	uint32_t thread; /* the thread of the references being read (0: not recorded) */
	unsigned version; /* an mtr trace's format version (1 to 6); 0 for other formats */
	/* the source records dependences (R_DEP): a reference without one is independent;
	 * false: unknown (lackey, pin, ...), the core model's documented assumption holds */
	bool deps;
};

/*
 * The caller reads @r on a thread of its own: decompress on that thread too, with
 * no producer thread (tio_set_inline()). True if so.
 */
bool trace_set_inline(struct trace_reader *r);

/* The share of the trace file read so far (tio_fraction()), or -1 if unknown (a workload, a pipe). */
double trace_fraction(const struct trace_reader *r);

/*
 * The trace file's content hash, taken as it was read (trace_io.h
 * tio_content_hash()): true once a regular file of up to 64 MiB was read whole.
 */
bool trace_content_hash(const struct trace_reader *r, uint64_t *size, uint64_t *hi, uint64_t *lo);

/*
 * For readers' open: a zeroed reader of @size bytes (its struct trace_reader
 * first) with @ops, @format, @name and its record buffer set. NULL with @e
 * ("NAME: out of memory"; @e may be NULL) if memory ran out.
 */
void *trace_reader_alloc(size_t size, const struct trace_ops *ops, enum trace_format format,
			 const char *name, struct err *e);

/* For readers' close: free the record buffer and the reader (NULL: nothing). */
void trace_reader_free(struct trace_reader *r);

/*
 * Open @path ("-": standard input) as @fmt (TF_AUTO: detect from the content,
 * then the suffix). .gz/.xz/.zst (or their magic bytes) are decompressed on the
 * fly. Returns a reader, or NULL with @e set ("PATH: No such file or directory", ...).
 */
struct trace_reader *trace_open(const char *path, enum trace_format fmt, struct err *e);

static inline int trace_next(struct trace_reader *r, struct trace_batch *b, struct err *e)
{
	return r->ops->next(r, b, e);
}

static inline void trace_close(struct trace_reader *r)
{
	if (r)
		r->ops->close(r);
}

/*
 * Keep the records of the last batch beyond the next call: the reader's buffer
 * (which the batch's recs point into) becomes *@buf, and *@buf -- a malloc'd
 * buffer of TRACE_BATCH records -- the reader's, for its next batch. Readers
 * write a batch's records within one next() call and never read them back.
 */
static inline void trace_take_recs(struct trace_reader *r, struct trace_rec **buf)
{
	struct trace_rec *t = r->rec;

	r->rec = *buf;
	*buf = t;
}

/*
 * mtr writer (the native format, traces/README.md). @path ending in .zst/.gz/.xz
 * is compressed. Output goes to a temporary name and is renamed by
 * mtr_writer_close(..., true); close(..., false) removes it.
 */
struct mtr_writer;
struct mtr_writer *mtr_writer_open(const char *path, struct err *e);
int mtr_writer_put(struct mtr_writer *w, const struct trace_batch *b, struct err *e);
int mtr_writer_close(struct mtr_writer *w, bool commit, struct err *e);

/*
 * Every record of @tr into the mtr file @out (trace convert, trace gen), then
 * close @tr. Version 1, or version 2 when @tr has initial mappings (an mtr
 * version 2 trace): its mappings and the files of its mmap events are kept;
 * version 3 when @tr is (its R_TOUCH records); version 4 when @tr is or
 * records dependences (@tr->deps: its R_DEP records, and the header flag that
 * says so); version 5 when @tr is (its mlock events, its files' filesystems). 0; -1 with @e (a bad input or output path, a trace error: exit 2);
 * -2 with @e->host (a write failed: exit 1).
 */
int mtr_write_all(struct trace_reader *tr, const char *out, struct err *e);

#endif
