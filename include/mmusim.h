/*
 * mmusim.h - the public C API of libmmusim: a simulated x86-64 MMU and Linux
 * memory manager (TLBs, page walks, faults, THP, khugepaged, reclaim) that
 * another program drives reference by reference, or with whole traces.
 *
 *   struct mmusim *m;
 *   (machine files: the configs/ folder of $(pkg-config --variable=datadir mmusim))
 *   if (mmusim_create(&m, &(struct mmusim_options){ .config_path = path })) {
 *           fprintf(stderr, "%s\n", m ? mmusim_error(m) : "out of memory");
 *           mmusim_destroy(m);
 *           return 1;
 *   }
 *   mmusim_ref(m, MMUSIM_LOAD, 0x7f0000001000, 8);   (one reference: buffered)
 *   mmusim_replay(m, "app.lackey.zst", NULL);         (or a whole trace)
 *   struct mmusim_report r;
 *   mmusim_report(m, 0, &r);                          (counters of mode 0)
 *   mmusim_destroy(m);
 *
 * Rules for every function:
 * - Nothing prints, nothing exits. A function that can fail returns 0 or a
 *   negative enum mmusim_status, and mmusim_error() says why until the next call
 *   that fails. A machine that failed on bad input (MMUSIM_EINPUT from feeding or
 *   a replay) stays failed: later feeding and replays return MMUSIM_EINPUT again;
 *   its reports are those of the input before the bad record.
 * - One machine is used by one thread at a time; machines are independent of
 *   each other (any number in one process, any threads).
 * - Counts are exactly those of `mmusim run` on the same input and config: fed
 *   references are gathered into batches of 4096 records and replayed through
 *   the same batch loop as a trace.
 */
#ifndef MMUSIM_PUBLIC_H
#define MMUSIM_PUBLIC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One simulated machine (one or several modes fed the same input). Opaque. */
struct mmusim;

enum mmusim_status {
	MMUSIM_OK = 0,
	MMUSIM_EINPUT = -1, /* bad config, override, trace or reference: see mmusim_error() */
	MMUSIM_EHOST = -2,  /* the host: out of memory, no threads, a write failed */
	MMUSIM_EINTR = -3,  /* *interrupted became set during a replay */
	MMUSIM_EUSAGE = -4, /* a bad argument: unknown mode or format, finished machine, ... */
};

/* How to build a machine. Zero-initialized fields take their defaults. */
struct mmusim_options {
	/* The config, applied in this order on the built-in defaults: the YAML file
	 * @config_path, the YAML text @config_yaml, each "path=value" of @sets
	 * (the keys of `mmusim run --set`, e.g. "tlb.stlb.entries=2048"). The region
	 * of interest is set so too ("roi.warmup_refs=1000000", "roi.skip_refs=N",
	 * "roi.sim_refs=N", the _insns forms; mmusim(1) run --warmup-refs): the
	 * reports then count only the simulated stretch (all 0 before it begins). */
	const char *config_path;
	const char *config_yaml;
	const char *const *sets;
	unsigned nsets;
	/* "base,hugetlbfs,thp" (as `run --modes`): one simulator per mode, all fed
	 * the same input, decoded once. NULL: the config's mode alone. */
	const char *modes;
	/* "key=value" strings recorded in the JSON report's run.labels (copied).
	 * Nothing else here is used after mmusim_create() but the callbacks. */
	const char *const *labels;
	unsigned nlabels;
	/* Threads for replays with several modes (0: 1). */
	unsigned threads;
	/* Check every model's invariants after every batch (slow; aborts on a bug). */
	bool check_invariants;
	/* Polled after every batch of a replay: set, the replay stops with MMUSIM_EINTR. */
	const volatile sig_atomic_t *interrupted;
	/* Called during a replay every 64 batches (or 32 per simulator) with the
	 * records replayed so far. NULL: none. */
	void (*progress)(void *arg, uint64_t records);
	void *progress_arg;
};

/*
 * Build a machine from @o (NULL: all defaults). 0 with *@out the machine; a
 * negative status with *@out a machine that holds only the error (read it with
 * mmusim_error(), then mmusim_destroy() it), or NULL if memory ran out.
 * Errors: MMUSIM_EINPUT (a config key or value, with file:line:col and the
 * key), MMUSIM_EUSAGE (a bad @modes), MMUSIM_EHOST.
 */
int mmusim_create(struct mmusim **out, const struct mmusim_options *o);

/* Free @m and everything it owns (NULL: nothing). */
void mmusim_destroy(struct mmusim *m);

/* The message of the last failure ("file:line:col: what"), or "" if none. */
const char *mmusim_error(const struct mmusim *m);

/* The last failure's status (0 if none). */
int mmusim_status(const struct mmusim *m);

/* --- feeding ------------------------------------------------------------- */

enum mmusim_ref_kind {
	MMUSIM_IFETCH = 0, /* an instruction fetched */
	MMUSIM_LOAD = 1,
	MMUSIM_STORE = 2,
	MMUSIM_MODIFY = 3, /* a load then a store of the same bytes (a read-modify-write: looked
			    * up store first, so a page not yet present takes one write fault) */
};

struct mmusim_ref {
	uint64_t addr; /* virtual address */
	uint32_t size; /* bytes touched (>= 1; one crossing a page touches both) */
	uint32_t kind; /* enum mmusim_ref_kind */
};

enum mmusim_event_kind {
	MMUSIM_MMAP, MMUSIM_MUNMAP, MMUSIM_MPROTECT, MMUSIM_MADVISE, MMUSIM_BRK, MMUSIM_MREMAP,
};

/*
 * A successful system call that changes the address space (Linux x86-64
 * values for prot, flags and advice). Fields by kind:
 *   mmap:     addr = the result, len, prot, flags (MAP_*), fd (-1: anonymous)
 *   munmap:   addr, len
 *   mprotect: addr, len, prot
 *   madvise:  addr, len, advice (MADV_DONTNEED 4, MADV_HUGEPAGE 14, ...)
 *   brk:      addr = the new break (the first one sets the heap's start)
 *   mremap:   addr = old address, len = old length, new_len, flags, new_addr = result
 */
struct mmusim_event {
	uint32_t kind; /* enum mmusim_event_kind */
	uint32_t prot;
	uint64_t flags;
	int64_t fd;
	uint64_t advice;
	uint64_t addr;
	uint64_t len;
	uint64_t new_addr;
	uint64_t new_len;
};

/*
 * Feed one reference. It is buffered, and simulated (with everything buffered
 * before it, in order) when the buffer fills, before an event is applied, and
 * before a report or replay; so an error of a reference may come back from a
 * later call. 0; MMUSIM_EINPUT (an address beyond the paging levels, a touch
 * outside every mapping with implicit mappings off, memory exhausted);
 * MMUSIM_EUSAGE (a bad kind or size 0, a finished machine).
 */
int mmusim_ref(struct mmusim *m, enum mmusim_ref_kind kind, uint64_t addr, uint32_t size);

/* mmusim_ref() on each of @refs[0..@n), in order. 0 or the first failure. */
int mmusim_refs(struct mmusim *m, const struct mmusim_ref *refs, size_t n);

/* Feed @n instructions executed without a traced fetch (they count in cycles). */
int mmusim_insns(struct mmusim *m, uint32_t n);

/* Feed one mapping event, in order with the references. As mmusim_ref(). */
int mmusim_event(struct mmusim *m, const struct mmusim_event *ev);

/* mmusim_event() on each of @evs[0..@n), in order. 0 or the first failure. */
int mmusim_events(struct mmusim *m, const struct mmusim_event *evs, size_t n);

/* Records fed and replayed so far (each reference, event, mmusim_insns() is one). */
uint64_t mmusim_records(const struct mmusim *m);

/*
 * During a replay of a trace file (from the progress callback): the share of the
 * file read so far, 0 to 1 (its bytes as stored); -1 when unknown (a workload,
 * standard input, a pipe) or outside a replay.
 */
double mmusim_input_fraction(const struct mmusim *m);

/* Simulate what is buffered now. 0 or a feeding error. */
int mmusim_flush(struct mmusim *m);

/*
 * Replay the trace @path ("-": standard input; .gz/.xz/.zst read on the fly)
 * read as @format ("lackey", "mtr", "pin", "champsim", "din"; NULL or "auto":
 * detected), after what was fed. The replay is the machine's last input: it
 * finishes the machine (later feeding and replays: MMUSIM_EUSAGE). The report
 * names the trace, its format and its content hash, as `mmusim run` does.
 * 0; MMUSIM_EINPUT (missing or bad trace); MMUSIM_EUSAGE (bad @format);
 * MMUSIM_EINTR; MMUSIM_EHOST.
 */
int mmusim_replay(struct mmusim *m, const char *path, const char *format);

/*
 * The processes of the machine's config (its processes: list; `mmusim run A B`)
 * replayed as one machine runs them (each trace read as @format, NULL: detected).
 * Returns as mmusim_replay(); MMUSIM_EUSAGE when the config has no processes.
 * A build whose machine does not run several processes stops at the first
 * process event with MMUSIM_EINPUT.
 */
int mmusim_replay_processes(struct mmusim *m, const char *format);

/* The number of processes in the machine's config (0: it replays one trace). */
unsigned mmusim_processes(const struct mmusim *m);

/* The same with a built-in workload ("stream:size=16M,iterations=2", see mmusim(1)). */
int mmusim_replay_workload(struct mmusim *m, const char *spec);

/*
 * Write a CSV row every @interval_ms of simulated time (at least 0.001, and at
 * most 2^62 cycles) to @f, from every mode, header first (`run --timeline`).
 * Rows are written between batches of 4096 records: when simulated time passes
 * several intervals within one, the first row carries its counts, the last
 * closes the idle stretch, and the idle rows between are left out (counted by
 * mmusim_timeline_elided()), so the file grows with the input, never with
 * simulated time. Call before feeding; the caller owns @f and keeps it open
 * until mmusim_destroy(). 0 or MMUSIM_EUSAGE.
 */
int mmusim_timeline(struct mmusim *m, FILE *f, double interval_ms);

/* The idle timeline rows left out so far, every mode together. */
uint64_t mmusim_timeline_elided(const struct mmusim *m);

/*
 * Write a CSV row to @f at each marker of the input (an mtr version 2 MARKER
 * record: the program's getppid() under mmusim's Valgrind tool), from every
 * mode, header first (`run --steps`): the counters so far (pgfault, RSS, file
 * RSS, AnonHugePages, thp_* events). Call before feeding; the caller owns @f
 * and keeps it open until mmusim_destroy(). 0.
 */
int mmusim_steps(struct mmusim *m, FILE *f);

/*
 * Check @m's invariants and every model's of every mode (the fed batch is
 * well formed; TLB entries agree with the page table; each mapped frame is
 * allocated once; ...). Aborts with a message on a broken one: for tests and
 * debugging (slow). Nothing on a machine that failed.
 */
void mmusim_check_invariants(struct mmusim *m);

/* --- reports ------------------------------------------------------------- */

/* The main counters of one mode (see mmusim(1) for each). */
struct mmusim_report {
	const char *mode; /* "base", "hugetlbfs" or "thp" */
	uint64_t refs;    /* references: ifetch + load + store + modify */
	uint64_t instructions;
	uint64_t l1i_hits, l1i_misses; /* every page size together */
	uint64_t l1d_hits, l1d_misses;
	uint64_t stlb_hits, stlb_misses;
	uint64_t walks, walk_cycles, pte_reads;
	uint64_t pgfault;
	uint64_t thp_fault_alloc, thp_fault_fallback, thp_split_pmd;
	uint64_t khugepaged_collapses; /* khugepaged_pages_collapsed */
	uint64_t cycles_total, cycles_translation, cycles_fault;
};

/* The number of modes (simulators) of @m: 1, or those of options.modes. */
unsigned mmusim_modes(const struct mmusim *m);

/*
 * The counters of mode @i (in options.modes order) into @r, of everything fed
 * so far (flushed first). Feeding may go on afterwards. 0, a feeding error, or
 * MMUSIM_EUSAGE (@i out of range).
 */
int mmusim_report(struct mmusim *m, unsigned i, struct mmusim_report *r);

/*
 * The JSON report of everything fed so far, exactly what `mmusim run --json`
 * writes (the one object of one mode, or an object by mode with options.modes;
 * with the provenance: version, build, config hash, and the input's identity
 * after a replay; fed records are named trace "<fed>", format "api" and have
 * no input identity), newline ended. A malloc'd string the caller frees with free(); NULL on failure
 * (mmusim_error() says why).
 */
char *mmusim_report_json(struct mmusim *m);

/*
 * mmusim_report_json() written to @path as `mmusim run --json` writes it: a
 * regular file (or a new name) whole or not at all (a temporary renamed over it),
 * a device, FIFO or "-" (standard output) in place, never replaced. 0;
 * MMUSIM_EINPUT (@path is a directory, or cannot be created); MMUSIM_EHOST (the
 * write failed); a feeding error. mmusim_error() says why; the machine is not
 * failed by a bad path.
 */
int mmusim_write_json(struct mmusim *m, const char *path);

/* The text report of `mmusim run` (or with options.modes, the comparison
 * table) to @out. 0, a feeding error, or MMUSIM_EHOST (the write failed). */
int mmusim_report_text(struct mmusim *m, FILE *out);

/*
 * What the report of everything fed so far would not tell at a glance, as one
 * line for a person (`mmusim run` prints it on stderr), or NULL: the input
 * ended before the region of interest began (roi.skip_* or roi.warmup_* longer
 * than the input: nothing is counted), or it held no memory reference (an
 * empty trace: every count is 0). The string is @m's, valid until the next
 * call; NULL too after a feeding error.
 */
const char *mmusim_warning(struct mmusim *m);

/*
 * Where the misses are (`mmusim run --vmas[=N]`): per simulator (mode), the @top
 * mappings with the most walk cycles as a table to @out. 0, a feeding error, or
 * MMUSIM_EHOST. The rows are the report's "vmas" (DESIGN.md).
 */
int mmusim_report_vmas(struct mmusim *m, unsigned top, FILE *out);

/*
 * The mappings of every simulator as CSV to @path (`mmusim run --vmas-csv`):
 * per simulator the @top with the most walk cycles (0: all), written as
 * mmusim_write_json() writes (a first column "mode"). 0, MMUSIM_EINPUT (bad
 * path), MMUSIM_EHOST, or a feeding error.
 */
int mmusim_write_vmas_csv(struct mmusim *m, const char *path, unsigned top);

/* The same CSV to the stream @out (`run --vmas-csv` opens its file before the
 * replay). 0, a feeding error, or MMUSIM_EHOST (the write failed). */
int mmusim_report_vmas_csv(struct mmusim *m, unsigned top, FILE *out);

#ifdef __cplusplus
}
#endif

#endif
