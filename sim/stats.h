/*
 * stats.h - every counter of the report (DESIGN.md "The report"), and its output
 * as a text table, as JSON (jansson) and as the seed mail's side-by-side table,
 * all three from one table of counters in stats.c. Every member is reported.
 */
#ifndef MMUSIM_STATS_H
#define MMUSIM_STATS_H

#include <stdio.h>

#include "config.h"
#include "types.h"

/*
 * The per-size counters of hugepages-<size>kB/stats/, each with the release that
 * brought it (Documentation/admin-guide/mm/transhuge.rst): anon_fault_alloc,
 * anon_fault_fallback, anon_fault_fallback_charge 6.10 (ec33687c6749); swpout,
 * swpout_fallback 6.10 (d0f048ac39f6, named so by 0d648dd5c899); split,
 * split_failed, split_deferred 6.11 (f216c845f3c7); nr_anon 6.12 (5d65c8d758f2);
 * nr_anon_partially_mapped 6.12 (8175ebfd302a).
 */
enum mthp_stat {
	MTHP_STAT_ANON_FAULT_ALLOC,
	MTHP_STAT_ANON_FAULT_FALLBACK,
	MTHP_STAT_ANON_FAULT_FALLBACK_CHARGE,
	MTHP_STAT_SWPOUT,
	MTHP_STAT_SWPOUT_FALLBACK,
	MTHP_STAT_SPLIT,
	MTHP_STAT_SPLIT_FAILED,
	MTHP_STAT_SPLIT_DEFERRED,
	MTHP_STAT_NR_ANON,
	MTHP_STAT_NR_ANON_PARTIALLY_MAPPED,
	MTHP_STAT_NR
};
extern const char *const mthp_stat_name[MTHP_STAT_NR];
/* The release whose sysfs has the counter: a report leaves out what @k lacks. */
bool mthp_stat_in(enum mthp_stat st, enum os_kernel k);

struct tlb_side_stats {
	uint64_t hits[PS_NR], misses[PS_NR];
};

struct hit_miss {
	uint64_t hits, misses;
};

/*
 * The region of interest (roi.c): its parameters (roi.* of the config) and what
 * the replay left out of the counters. Reported as run.roi when any is set.
 * A warm-up's reset leaves it alone.
 */
struct stats_roi {
	bool set; /* any roi.* key is not 0 */
	uint64_t skip_refs, warmup_refs, sim_refs, skip_insns, warmup_insns, sim_insns;
	uint64_t skipped_refs, skipped_insns, skipped_events; /* read in the skip, not simulated */
	uint64_t warmup_refs_run, warmup_insns_run; /* simulated in the warm-up, then uncounted */
	bool started; /* the simulated stretch was reached (else the input ended before it: nothing counted) */
	bool stopped; /* roi.sim_* ended the replay */
};

/*
 * A virtual machine's counters (virt.mode nested or shadow; virt.c): reported
 * only then, so a bare-metal report is what it was before virtual machines.
 * host_*: the host kernel's own counters over the run (host.*).
 */
struct stats_virt {
	unsigned mode; /* enum virt_mode; VIRT_NONE: none of these rows is reported */
	uint64_t guest_reads, host_reads, host_faults;
	cycles_t guest_cycles, host_cycles;
	struct hit_miss ntlb, hpwc[PWC_NR];
	uint64_t shadow_faults, pte_writes, zapped, shadow_guest_reads;
	cycles_t cyc_exits, cyc_reads, cyc_host;
	uint64_t guest_huge, aligned_huge; /* guest 2 MiB pages; those inside one host huge page */
	uint64_t host_pgfault, host_thp_fault_alloc, host_thp_fault_fallback, host_thp_collapse_alloc,
		host_thp_split_pmd, host_compact_stall, host_pages_collapsed, host_full_scans;
	uint64_t host_rss_bytes, host_huge_bytes, host_page_table_pages, host_shadow_pages;
};

struct stats {
	/* refs */
	uint64_t instructions, ifetch, load, store, modify, lookups[2];
	/* tlb */
	struct tlb_side_stats l1[2]; /* SIDE_I, SIDE_D */
	struct hit_miss stlb;
	/* walk */
	uint64_t walks, pte_reads;
	cycles_t walk_cycles;
	struct hit_miss pwc[PWC_NR];
	uint64_t served[CL_NR + 1]; /* l1d, l2, llc, dram */
	/* vmstat */
	uint64_t pgfault, tlb_invalidations;
	uint64_t nr_anon_pages, nr_anon_transparent_hugepages, nr_hugetlb_pages, nr_hugetlb_pages_1g;
	/* not reported (no kernel counter): faults in a MAP_HUGETLB VMA that found no huge
	 * page of its size and got a 4 KiB page, which Linux's mmap-time reservation
	 * rules out (mmusim_warning() says so) */
	uint64_t hugetlb_fallback;
	uint64_t nr_file_pages, nr_mapped; /* the page cache; its pages mapped (filemap.c) */
	/* file THPs (CONFIG_READ_ONLY_THP_FOR_FS): in the cache, PMD-mapped, PMD mappings made */
	uint64_t nr_file_hugepages, nr_file_pmdmapped, thp_file_mapped;
	uint64_t thp_fault_alloc, thp_fault_fallback, thp_split_pmd, thp_split_page,
		thp_deferred_split_page, thp_underused_split_page, thp_collapse_alloc, thp_collapse_alloc_failed,
		thp_scan_exceed_none_pte, thp_zero_page_alloc, thp_zero_page_alloc_failed, compact_stall, compact_success,
		compact_fail, khugepaged_pages_collapsed, khugepaged_full_scans;
	uint64_t nr_page_table_pages;
	/*
	 * /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/ by order
	 * (enum mthp_stat; count_mthp_stat() and mod_mthp_stat() of include/linux/huge_mm.h):
	 * events, and the gauges nr_anon and nr_anon_partially_mapped
	 */
	uint64_t mthp[MTHP_ORDERS][MTHP_STAT_NR];
	unsigned kernel; /* os.kernel (enum os_kernel): which of them its sysfs has */
	/* memory pressure (mm/vmstat.c names) */
	uint64_t pgmajfault, pswpin, pswpout, pgscan_kswapd, pgscan_direct, pgsteal_kswapd,
		pgsteal_direct, allocstall_normal, allocstall_movable, pageoutrun, pgactivate, pgdeactivate, thp_swpout,
		thp_swpout_fallback, thp_scan_exceed_swap_pte, pglazyfree, pglazyfreed,
		 thp_scan_exceed_share_pte; /* (several processes only: a fork shares pages) */
	/* memory: at the end, and over the measured stretch (kernel.h, struct rss_acct) */
	uint64_t rss_bytes, huge_bytes, free_pages, swap_bytes;
	double huge_coverage;
	uint64_t peak_rss_bytes, peak_huge_bytes;
	double huge_coverage_peak, huge_coverage_mean;
	int fragmentation_index_order9;
	/* cycles */
	cycles_t cyc_total, cyc_instructions, cyc_translation, cyc_fault, cyc_data;
	cycles_t cyc_compaction, cyc_khugepaged; /* compaction: the app's stall; khugepaged: its own CPU */
	cycles_t cyc_reclaim, cyc_kswapd; /* direct reclaim: the app's stall; kswapd: its own CPU */
	uint64_t compact_migrated;
	cycles_t cyc_virt; /* the hypervisor's and host kernel's work the guest waited for */
	double cpi;
	/*
	 * The core that made the time (cpu.model: enum cpu_model) and whether the
	 * input recorded dependences (trace_reader.deps); the translation and data
	 * stalls: under additive cyc_translation and cyc_data, under overlap the
	 * dispatch cycles the core waited on each (core.c).
	 */
	unsigned cpu_model;
	bool deps;
	/*
	 * The timed memory (cache.c; cpu.model overlap with a prefetcher or a
	 * DRAM bandwidth): reported only then (cache.* rows).
	 */
	bool mem_timed;
	/* tlb.coalesce.kind is not none: the tlb.coalesced.* rows are reported;
	 * coalesced-entry hits and fills, [0] L1 iTLB, [1] L1 dTLB, [2] STLB */
	bool coalesce;
	uint64_t coal_hits[3], coal_fills[3];
	uint64_t processes, context_switches; /* the scheduler's (sim.c): several processes */
	uint64_t prefetches[2], useful_prefetches[2]; /* the L1D's, the L2's prefetcher */
	uint64_t dram_reads, writebacks;
	/*
	 * Address-space switches (mmu_load_cr3()): MOV to CR3, those that flushed,
	 * the TLB and PWC entries they removed. Reported only when a CR3 load
	 * happened (the tlb.cr3.* rows): a run of one process reads as before.
	 */
	uint64_t cr3_loads, cr3_flushes, cr3_flushed;
	cycles_t cyc_translation_stall, cyc_data_stall;
	struct stats_virt virt;
	/* run */
	struct stats_roi roi;
	double wall_seconds;
	uint64_t max_rss_bytes; /* the host process's peak RSS (getrusage), like wall time */
};

/*
 * One process's row of the report's "processes" array and of the run's
 * process table (sim_proc_report() fills it, when the run had several):
 * its counts (named by count_names), what smaps_rollup would show of it at
 * the end, and the named metrics (see sim.c for their definitions).
 */
#define STATS_PROC_COUNTS 16
#define STATS_FAULT_LAT_BUCKETS 64
struct stats_proc {
	uint64_t id;
	bool exited;
	unsigned ncounts;
	const char *const *count_names;
	uint64_t counts[STATS_PROC_COUNTS];
	uint64_t rss_bytes, anon_huge_bytes, file_rss_bytes;
	uint64_t touched_bytes, bloat_bytes;
	double huge_coverage;
	bool has_fairness; /* false: no process had huge bytes or this one has no RSS */
	double fairness;
	/* its #PFs by cycles charged: [0] 0-1 cycles, [b] [2^b, 2^(b+1)) (sim.h SIM_FAULT_LAT_BUCKETS) */
	uint64_t fault_lat[STATS_FAULT_LAT_BUCKETS];
};

/* The "processes" array of @n rows (caller owns it: json_decref). */
void *stats_procs_to_json(const struct stats_proc *p, size_t n);
/* The table comparing @n processes, a column each, as the --modes table compares modes. */
void stats_write_procs(const struct stats_proc *p, size_t n, FILE *out);

struct report_meta {
	const char *config; /* the config file, or "built-in" */
	const char *trace;  /* the trace path or workload spec */
	const char *format;
	const char *mode;
	const char *const *labels; /* "key=value" (run --label), recorded in run.labels */
	unsigned nlabels;
	/* provenance.h, each recorded in run when not NULL */
	const char *version, *build_id, *config_hash, *input_id;
};

/* Write one report as JSON (DESIGN keys) to @out. */
void stats_write_json(const struct stats *s, const struct report_meta *m, FILE *out);

/* Build the JSON object (caller owns it: json_decref). Opaque to avoid jansson in the header. */
void *stats_to_json(const struct stats *s, const struct report_meta *m);

/* The text report's line on the region of interest (nothing without one). */
void stats_write_roi(const struct stats *s, FILE *out);

/* Write the readable table. */
void stats_write_text(const struct stats *s, const struct report_meta *m, FILE *out);

/*
 * The seed mail's comparison: one row per metric, the first mode's value, then
 * each other mode's value and its % change against the first.
 */
/* The name of the core that made @s's time ("additive", "overlap"). */
const char *stats_core_name(const struct stats *s);

/* What the report says of dependences ("dependences: recorded", "...: unknown, assumed independent"). */
const char *stats_deps_text(const struct stats *s);

void stats_write_compare(const struct stats *s, const char *const *modes, unsigned n, FILE *out);

/*
 * Figures (plot.c): the report key @key's full name ("tlb.l1d.misses": "L1 dTLB
 * misses", "cycles.fault": "fault cycles", "vmstat.thp_fault_fallback": its
 * vmstat name) and unit as the counter table gives it ("lookups", "cycles",
 * "bytes", "ratio", "MPKI", "pages", "events", ...). 0, or -1 for a key that is
 * not a counter (a label, a config key).
 */
int stats_counter_describe(const char *key, const char **name, const char **unit);

/*
 * Is @key a row not every report has: a virtual machine's (reported only when
 * virt.mode is not none) or the timed memory's (cache.*: only under cpu.model
 * overlap with a prefetcher or a DRAM bandwidth)? A sweep leaves it empty where absent.
 */
bool stats_counter_virt_only(const char *key);

/* The provenance columns that end the CSVs a run writes (timeline, steps, vmas), whose
 * rows end with the run's values of them (sim.h's csv_prov). */
#define SIM_CSV_PROV_COLS ",run.version,run.build_id,run.config_hash,run.input_id"

#endif
