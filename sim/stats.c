/*
 * stats.c - the report: JSON with DESIGN.md's fixed keys (jansson), a readable
 * table, and the seed mail's side-by-side comparison ("value ( x.xx%)"), all
 * three read from one table of counters (counters[] below).
 *
 * Key order is fixed (JSON_PRESERVE_ORDER) and numbers are integers except the
 * ratios, so the same run gives byte-identical JSON apart from run.wall_seconds, run.max_rss_bytes
 * and run.refs_per_second.
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "stats.h"

const char *const page_size_name[PS_NR] = { "4K", "2M", "1G" };

/*
 * The counter table: one row per number of the report, in JSON order. It
 * drives the JSON (each key a dotted path: "vmstat.pgfault" is
 * {"vmstat": {"pgfault": ...}}), the readable table (text_lines[] below name
 * rows by key and print their labels and values), and the --modes comparison
 * (the rows with a `row` position). The sweep CSV's columns are these keys:
 * sweep.c flattens the JSON generically, so a new row is a new column.
 * Rows marked SC_TEXT are derived for reading (lookups, MPKI, shares) and are
 * not in the JSON: a consumer of the JSON derives them itself.
 *
 * Left out of the table: the "run" object (names, provenance, labels, and
 * the host's wall time and peak RSS), written first by stats_to_json(), and
 * the "mthp" object (per size, the hugepages-<size>kB/stats/ counters that
 * os.kernel's release has: mthp_json()), written last. Every counter named
 * after the kernel has an entry in doc/mmusim.1's KERNEL COUNTERS (its Linux
 * release and counting function); tests/man.sh checks it from this binary's
 * reports.
 */
enum sc_src {
	SC_U64,  /* a uint64_t (or cycles_t) member at @off */
	SC_SUM,  /* the sum of the PS_NR uint64_t members from @off (all page sizes) */
	SC_INT,  /* an int member at @off */
	SC_REAL, /* a double member at @off */
	SC_FN,   /* derived by @fn */
};

enum sc_flag {
	SC_TEXT = 1, /* derived for the text and --modes tables, not in the JSON */
	SC_VIRT = 2, /* a virtual machine's (stats_virt): reported only when virt.mode is not none */
	SC_MEM = 4,  /* the timed memory's (cache.c): reported only when stats.mem_timed */
	SC_PROC = 8, /* the scheduler's and CR3's: reported only when the run had several processes */
	SC_COAL = 16, /* coalescing TLBs': reported only when tlb.coalesce.kind is not none */
	SC_NZ = 32,   /* reported only when not 0 (a counter newer than most reports) */
};

/* A value: an unsigned count, a signed index, or a real (ratio, MPKI). */
struct sc_val {
	enum { V_U, V_I, V_R } t;
	uint64_t u;
	int64_t i;
	double r;
};

struct stat_counter {
	const char *key;   /* JSON path; also the sweep CSV column */
	enum sc_src src;
	size_t off;
	struct sc_val (*fn)(const struct stats *s);
	/*
	 * In the readable table: "pgfault". A counter the kernel has is named as
	 * /proc/vmstat names it, here, in the --modes rows, the timeline, the
	 * --vmas breakdown and the JSON alike.
	 */
	const char *label;
	/*
	 * The full name where the label reads only under its section of the text
	 * table ("misses" under "L1 dTLB"): figures' axis labels and titles
	 * (stats_counter_describe()); NULL: the label is the full name.
	 */
	const char *name;
	/*
	 * What the value counts. "bytes" are shown as KiB, "ratio" as a
	 * percentage with @prec decimals (x100 in --modes too), "MPKI" with three
	 * decimals; every other unit is a plain count.
	 */
	const char *unit;
	unsigned prec;
	const char *row;   /* the --modes row's name, NULL if not a row */
	unsigned row_pos;  /* its position in that table, from 1 */
	unsigned flags;    /* enum sc_flag */
};

static uint64_t side_sum(const uint64_t v[PS_NR])
{
	return v[0] + v[1] + v[2];
}

static double per_k(uint64_t n, uint64_t d)
{
	return d ? 1000.0 * (double)n / (double)d : 0.0;
}

static struct sc_val val_u(uint64_t u)
{
	return (struct sc_val){ .t = V_U, .u = u };
}

static struct sc_val val_r(double r)
{
	return (struct sc_val){ .t = V_R, .r = r };
}

#define SIDE_FNS(name, side)                                                                   \
	static struct sc_val name##_lookups(const struct stats *s)                             \
	{                                                                                      \
		return val_u(side_sum(s->l1[side].hits) + side_sum(s->l1[side].misses));       \
	}                                                                                      \
	static struct sc_val name##_mpki(const struct stats *s)                                \
	{                                                                                      \
		return val_r(per_k(side_sum(s->l1[side].misses), s->instructions));            \
	}
SIDE_FNS(l1i, 0)
SIDE_FNS(l1d, 1)
#undef SIDE_FNS

static struct sc_val stlb_lookups(const struct stats *s)
{
	return val_u(s->stlb.hits + s->stlb.misses);
}

static struct sc_val stlb_mpki(const struct stats *s)
{
	return val_r(per_k(s->stlb.misses, s->instructions));
}

/* Misses per lookup: 0 without lookups. */
static double ratio(uint64_t n, uint64_t d)
{
	return d ? (double)n / (double)d : 0.0;
}

static struct sc_val l1d_miss_ratio(const struct stats *s)
{
	return val_r(ratio(side_sum(s->l1[1].misses),
			   side_sum(s->l1[1].hits) + side_sum(s->l1[1].misses)));
}

static struct sc_val stlb_miss_ratio(const struct stats *s)
{
	return val_r(ratio(s->stlb.misses, s->stlb.hits + s->stlb.misses));
}

static struct sc_val pgscan(const struct stats *s)
{
	return val_u(s->pgscan_kswapd + s->pgscan_direct);
}

static struct sc_val pgsteal(const struct stats *s)
{
	return val_u(s->pgsteal_kswapd + s->pgsteal_direct);
}

static struct sc_val translation_share(const struct stats *s)
{
	/* the time the core stalled on translation: all of it under additive */
	return val_r(s->cyc_total ? (double)s->cyc_translation_stall / (double)s->cyc_total : 0.0);
}

#define OFF(m) offsetof(struct stats, m)
/* A count: key, member, label, unit. */
#define U(k, m, l, u) { .key = k, .src = SC_U64, .off = OFF(m), .label = l, .unit = u }
/* The same, also a --modes row. */
#define UR(k, m, l, u, r, pos) \
	{ .key = k, .src = SC_U64, .off = OFF(m), .label = l, .unit = u, .row = r, .row_pos = pos }
/* A count with its full name @nm (stat_counter.name). */
#define UN(k, m, l, u, nm) \
	{ .key = k, .src = SC_U64, .off = OFF(m), .label = l, .unit = u, .name = nm }
/* A /proc/vmstat counter: its own name, a count of events or pages. */
#define VM(m, u) U("vmstat." #m, m, #m, u)
/* The timed memory's count (SC_MEM). */
#define MU(k, m, l, u, nm) \
	{ .key = k, .src = SC_U64, .off = OFF(m), .label = l, .unit = u, .name = nm, .flags = SC_MEM }
/* Hits and misses of one page size of an L1 TLB. */
#define PS_HM(side, nm, ps, m)                                                                \
	UN("tlb." side "." #ps ".hits", m.hits[PS_##ps], "hits", "lookups", nm " " #ps " hits"), \
	UN("tlb." side "." #ps ".misses", m.misses[PS_##ps], "misses", "lookups",             \
	   nm " " #ps " misses")
/* Hits and misses of a page-walk cache level. */
/* The scheduler's count (SC_PROC). */
#define PU(k, m, l, u, nm) \
	{ .key = k, .src = SC_U64, .off = OFF(m), .label = l, .unit = u, .name = nm, .flags = SC_PROC }
/* A virtual machine's count (SC_VIRT). */
#define VU(k, m, l, u, nm) \
	{ .key = k, .src = SC_U64, .off = OFF(m), .label = l, .unit = u, .name = nm, .flags = SC_VIRT }
#define VHM(k, m, nm) VU(k ".hits", m.hits, "hits", "lookups", nm " hits"), \
	VU(k ".misses", m.misses, "misses", "lookups", nm " misses")
#define PWC_HM(lvl, i, nm)                                                                     \
	UN("walk.pwc." lvl ".hits", pwc[i].hits, "hits", "lookups", nm " PWC hits"),          \
	UN("walk.pwc." lvl ".misses", pwc[i].misses, "misses", "lookups", nm " PWC misses")

static const struct stat_counter counters[] = {
	U("refs.instructions", instructions, "instructions", "instructions"),
	UN("refs.ifetch", ifetch, "ifetch", "references", "instruction fetches"),
	UN("refs.load", load, "load", "references", "loads"),
	UN("refs.store", store, "store", "references", "stores"),
	UN("refs.modify", modify, "modify", "references", "read-modify-writes"),
	U("refs.itlb_lookups", lookups[0], "iTLB lookups", "lookups"),
	U("refs.dtlb_lookups", lookups[1], "dTLB lookups", "lookups"),

	{ .key = "tlb.l1i.hits", .src = SC_SUM, .off = OFF(l1[0].hits), .label = "hits",
	  .unit = "lookups", .name = "L1 iTLB hits" },
	{ .key = "tlb.l1i.misses", .src = SC_SUM, .off = OFF(l1[0].misses), .label = "misses",
	  .unit = "lookups", .row = "L1 iTLB misses", .row_pos = 5, .name = "L1 iTLB misses" },
	PS_HM("l1i", "L1 iTLB", 4K, l1[0]),
	PS_HM("l1i", "L1 iTLB", 2M, l1[0]),
	PS_HM("l1i", "L1 iTLB", 1G, l1[0]),
	{ .key = "tlb.l1i.lookups", .src = SC_FN, .fn = l1i_lookups, .label = "lookups",
	  .unit = "lookups", .flags = SC_TEXT, .name = "L1 iTLB lookups" },
	{ .key = "tlb.l1i.mpki", .src = SC_FN, .fn = l1i_mpki, .unit = "MPKI", .flags = SC_TEXT,
	  .name = "L1 iTLB misses per 1000 instructions" },
	{ .key = "tlb.l1d.hits", .src = SC_SUM, .off = OFF(l1[1].hits), .label = "hits",
	  .unit = "lookups", .name = "L1 dTLB hits" },
	{ .key = "tlb.l1d.misses", .src = SC_SUM, .off = OFF(l1[1].misses), .label = "misses",
	  .unit = "lookups", .row = "L1 dTLB misses", .row_pos = 6, .name = "L1 dTLB misses" },
	PS_HM("l1d", "L1 dTLB", 4K, l1[1]),
	PS_HM("l1d", "L1 dTLB", 2M, l1[1]),
	PS_HM("l1d", "L1 dTLB", 1G, l1[1]),
	{ .key = "tlb.l1d.lookups", .src = SC_FN, .fn = l1d_lookups, .label = "lookups",
	  .unit = "lookups", .flags = SC_TEXT, .name = "L1 dTLB lookups" },
	{ .key = "tlb.l1d.miss_ratio", .src = SC_FN, .fn = l1d_miss_ratio, .unit = "ratio",
	  .prec = 2, .row = "L1 dTLB miss %", .row_pos = 7, .flags = SC_TEXT,
	  .name = "L1 dTLB misses per lookup" },
	{ .key = "tlb.l1d.mpki", .src = SC_FN, .fn = l1d_mpki, .unit = "MPKI",
	  .row = "L1 dTLB MPKI", .row_pos = 8, .flags = SC_TEXT,
	  .name = "L1 dTLB misses per 1000 instructions" },
	UN("tlb.stlb.hits", stlb.hits, "hits", "lookups", "STLB hits"),
	{ .key = "tlb.stlb.misses", .src = SC_U64, .off = OFF(stlb.misses), .label = "misses",
	  .unit = "lookups", .row = "STLB misses", .row_pos = 9, .name = "STLB misses" },
	{ .key = "tlb.stlb.miss_ratio", .src = SC_FN, .fn = stlb_miss_ratio, .unit = "ratio",
	  .prec = 2, .row = "STLB miss %", .row_pos = 10, .flags = SC_TEXT,
	  .name = "STLB misses per lookup" },
	{ .key = "tlb.stlb.lookups", .src = SC_FN, .fn = stlb_lookups, .label = "lookups",
	  .unit = "lookups", .flags = SC_TEXT, .name = "STLB lookups" },
	{ .key = "tlb.stlb.mpki", .src = SC_FN, .fn = stlb_mpki, .unit = "MPKI", .flags = SC_TEXT,
	  .name = "STLB misses per 1000 instructions" },
#define COAL_HF(lvl, i, nm)                                                                      \
	{ .key = "tlb.coalesced." lvl ".hits", .src = SC_U64, .off = OFF(coal_hits[i]),            \
	  .label = "coalesced hits", .unit = "lookups", .flags = SC_COAL,                          \
	  .name = nm " lookups answered by a coalesced entry" },                                   \
	{ .key = "tlb.coalesced." lvl ".fills", .src = SC_U64, .off = OFF(coal_fills[i]),          \
	  .label = "coalesced fills", .unit = "entries", .flags = SC_COAL,                         \
	  .name = nm " coalesced entries filled" }
	COAL_HF("l1i", 0, "L1 iTLB"),
	COAL_HF("l1d", 1, "L1 dTLB"),
	COAL_HF("stlb", 2, "STLB"),
	{ .key = "tlb.cr3.loads", .src = SC_U64, .off = OFF(cr3_loads), .label = "CR3 loads",
	  .unit = "events", .name = "CR3 loads (address-space switches)", .flags = SC_PROC },
	{ .key = "tlb.cr3.flushing_loads", .src = SC_U64, .off = OFF(cr3_flushes),
	  .label = "flushing", .unit = "events",
	  .name = "CR3 loads that flushed the TLB (no PCID, or the PCID's entries)", .flags = SC_PROC },
	{ .key = "tlb.cr3.flushed_entries", .src = SC_U64, .off = OFF(cr3_flushed),
	  .label = "entries flushed", .unit = "entries",
	  .name = "TLB and PWC entries removed by flushing CR3 loads", .flags = SC_PROC },

	UR("walk.walks", walks, "page walks", "walks", "page walks", 11),
	U("walk.cycles", walk_cycles, "walk cycles", "cycles"),
	UR("walk.pte_reads", pte_reads, "PTE reads", "reads", "PTE reads", 12),
	PWC_HM("pml5", PWC_PML5, "PML5"),
	PWC_HM("pml4", PWC_PML4, "PML4"),
	PWC_HM("pdpt", PWC_PDPT, "PDPT"),
	PWC_HM("pde", PWC_PDE, "PDE"),
	UN("walk.served.l1d", served[CL_L1D], "L1D", "reads", "PTE reads served by the L1D"),
	UN("walk.served.l2", served[CL_L2], "L2", "reads", "PTE reads served by the L2"),
	UN("walk.served.llc", served[CL_LLC], "LLC", "reads", "PTE reads served by the LLC"),
	UN("walk.served.dram", served[CL_NR], "DRAM", "reads", "PTE reads served by DRAM"),

	PU("sched.processes", processes, "processes", "processes", "processes the run had"),
	PU("sched.context_switches", context_switches, "context switches", "events",
	   "context switches (CR3 loads)"),
	PU("vmstat.thp_scan_exceed_share_pte", thp_scan_exceed_share_pte, "thp_scan_exceed_share_pte",
	   "events", "khugepaged scans stopped by max_ptes_shared"),
	MU("cache.l1d.prefetches", prefetches[0], "L1D prefetches", "lines",
	   "lines the L1D's stream prefetcher brought in"),
	MU("cache.l1d.useful_prefetches", useful_prefetches[0], "useful", "lines",
	   "L1D prefetches a reference used"),
	MU("cache.l2.prefetches", prefetches[1], "L2 prefetches", "lines",
	   "lines the L2's stream prefetcher brought in"),
	MU("cache.l2.useful_prefetches", useful_prefetches[1], "useful", "lines",
	   "L2 prefetches a reference or an L1D prefetch used"),
	MU("cache.dram.reads", dram_reads, "DRAM reads", "lines",
	   "lines data references and prefetches read from DRAM"),
	MU("cache.dram.writebacks", writebacks, "write-backs", "lines",
	   "dirty lines written back to DRAM"),

	{ .key = "vmstat.pgfault", .src = SC_U64, .off = OFF(pgfault), .label = "pgfault",
	  .unit = "events", .row = "pgfault", .row_pos = 13, .name = "page faults" },
	UR("vmstat.thp_fault_alloc", thp_fault_alloc, "thp_fault_alloc", "events", "thp_fault_alloc", 14),
	UR("vmstat.thp_fault_fallback", thp_fault_fallback, "thp_fault_fallback", "events",
	   "thp_fault_fallback", 15),
	UR("vmstat.thp_split_pmd", thp_split_pmd, "thp_split_pmd", "events", "thp_split_pmd", 16),
	VM(thp_split_page, "events"),
	VM(thp_deferred_split_page, "events"),
	{ .key = "vmstat.thp_underused_split_page", .src = SC_U64, .off = OFF(thp_underused_split_page),
	  .label = "thp_underused_split_page", .unit = "events",
	  .name = "THPs the deferred split shrinker split as underused (6.12+)", .flags = SC_NZ },
	UR("vmstat.thp_collapse_alloc", thp_collapse_alloc, "thp_collapse_alloc", "events",
	   "thp_collapse_alloc", 17),
	VM(thp_collapse_alloc_failed, "events"),
	VM(thp_file_mapped, "events"),
	VM(thp_scan_exceed_none_pte, "events"),
	VM(thp_zero_page_alloc, "events"),
	VM(thp_zero_page_alloc_failed, "events"),
	VM(compact_stall, "events"),
	VM(compact_success, "events"),
	VM(compact_fail, "events"),
	UN("vmstat.nr_anon_pages", nr_anon_pages, "nr_anon_pages", "pages", "anonymous 4K pages"),
	VM(nr_anon_transparent_hugepages, "pages"),
	UN("vmstat.nr_hugetlb_pages", nr_hugetlb_pages, "nr_hugetlb_pages", "pages", "hugetlb 2M pages"),
	VM(nr_hugetlb_pages_1g, "pages"),
	VM(nr_file_pages, "pages"),
	VM(nr_mapped, "pages"),
	VM(nr_file_hugepages, "pages"),
	VM(nr_file_pmdmapped, "pages"),
	VM(khugepaged_pages_collapsed, "pages"),
	VM(khugepaged_full_scans, "events"),
	UN("vmstat.tlb_invalidations", tlb_invalidations, "tlb_invalidations", "events",
	   "TLB invalidations"),
	UN("vmstat.nr_page_table_pages", nr_page_table_pages, "nr_page_table_pages", "pages",
	   "page-table pages"),
	UN("vmstat.pgmajfault", pgmajfault, "pgmajfault", "events", "major page faults"),
	VM(pswpin, "pages"),
	VM(pswpout, "pages"),
	VM(pgscan_kswapd, "pages"),
	VM(pgscan_direct, "pages"),
	VM(pgsteal_kswapd, "pages"),
	VM(pgsteal_direct, "pages"),
	VM(allocstall_normal, "events"),
	VM(allocstall_movable, "events"),
	VM(pageoutrun, "events"),
	VM(pgactivate, "pages"),
	VM(pgdeactivate, "pages"),
	VM(thp_swpout, "pages"),
	VM(thp_swpout_fallback, "pages"),
	VM(thp_scan_exceed_swap_pte, "events"),
	VM(pglazyfree, "pages"),
	VM(pglazyfreed, "pages"),
	{ .key = "vmstat.pgscan", .src = SC_FN, .fn = pgscan, .label = "pgscan",
	  .unit = "pages", .flags = SC_TEXT, .name = "pages reclaim scanned" },
	{ .key = "vmstat.pgsteal", .src = SC_FN, .fn = pgsteal, .label = "pgsteal", .unit = "pages",
	  .flags = SC_TEXT, .name = "pages reclaimed" },

	UN("memory.rss_bytes", rss_bytes, "rss", "bytes", "resident memory"),
	UN("memory.huge_bytes", huge_bytes, "huge", "bytes", "memory mapped by huge pages"),
	{ .key = "memory.huge_coverage", .src = SC_REAL, .off = OFF(huge_coverage),
	  .label = "coverage", .unit = "ratio", .prec = 1, .row = "huge coverage %", .row_pos = 18,
	  .name = "huge page coverage of resident memory" },
	/*
	 * Over the measured stretch (the run, or what follows a warm-up) in
	 * simulated cycles (sim_now(), the clock of cycles.total), so a program
	 * that frees its memory before it exits is not reported as 0: the
	 * highest RSS and huge bytes reached, the highest huge / RSS reached, and
	 * the time-weighted coverage, the integral over time of huge bytes divided
	 * by that of RSS (each byte weighted by how long it was resident; the end
	 * state's coverage if no simulated time passed). The kernel changes them
	 * only in its fault, zap, split, collapse and swap paths (kernel_rss_changed()).
	 */
	UN("memory.peak_rss_bytes", peak_rss_bytes, "peak rss", "bytes", "peak resident memory"),
	UN("memory.peak_huge_bytes", peak_huge_bytes, "peak huge", "bytes",
	   "peak memory mapped by huge pages"),
	{ .key = "memory.huge_coverage_peak", .src = SC_REAL, .off = OFF(huge_coverage_peak),
	  .label = "peak coverage", .unit = "ratio", .prec = 1,
	  .name = "peak huge page coverage of resident memory" },
	{ .key = "memory.huge_coverage_mean", .src = SC_REAL, .off = OFF(huge_coverage_mean),
	  .label = "time-weighted coverage", .unit = "ratio", .prec = 1,
	  .row = "huge coverage mean %", .row_pos = 19,
	  .name = "time-weighted huge page coverage of resident memory" },
	U("memory.free_pages", free_pages, "free pages", "pages"),
	{ .key = "memory.fragmentation_index_order9", .src = SC_INT,
	  .off = OFF(fragmentation_index_order9), .label = "fragmentation index (order 9)",
	  .unit = "index" },
	UN("memory.swap_bytes", swap_bytes, "in swap", "bytes", "memory in swap"),

	{ .key = "cycles.total", .src = SC_U64, .off = OFF(cyc_total), .label = "cycles",
	  .unit = "cycles", .row = "cycles", .row_pos = 1, .name = "total cycles" },
	UN("cycles.instructions", cyc_instructions, "instructions", "cycles", "instruction cycles"),
	{ .key = "cycles.translation", .src = SC_U64, .off = OFF(cyc_translation),
	  .label = "translation", .unit = "cycles", .row = "translation cycles", .row_pos = 2,
	  .name = "translation cycles" },
	{ .key = "cycles.walk", .src = SC_U64, .off = OFF(walk_cycles), .label = "walk",
	  .unit = "cycles", .row = "walk cycles", .row_pos = 3, .name = "walk cycles" },
	{ .key = "cycles.fault", .src = SC_U64, .off = OFF(cyc_fault), .label = "fault",
	  .unit = "cycles", .row = "fault cycles", .row_pos = 4, .name = "fault cycles" },
	UN("cycles.compaction", cyc_compaction, "compaction", "cycles", "compaction cycles"),
	UN("cycles.khugepaged", cyc_khugepaged, "khugepaged", "cycles", "khugepaged cycles"),
	UN("cycles.data", cyc_data, "data", "cycles", "data access cycles"),
	UN("cycles.reclaim", cyc_reclaim, "reclaim", "cycles", "direct reclaim cycles"),
	UN("cycles.kswapd", cyc_kswapd, "kswapd", "cycles", "kswapd cycles"),
	VU("cycles.virt", cyc_virt, "virtualization", "cycles",
	   "cycles of VM exits and host faults the guest waited for"),
	/*
	 * The cycles the core stalled on translation and on data: under cpu.model
	 * additive every translation (data) cycle, under overlap the dispatch
	 * cycles it waited on them (core.c). walk.cycles and cycles.translation
	 * stay the walkers' and the lookups' busy time under both.
	 */
	UN("cycles.translation_stall", cyc_translation_stall, "translation stall", "cycles",
	   "cycles the core stalled on translation"),
	UN("cycles.data_stall", cyc_data_stall, "data stall", "cycles", "cycles the core stalled on data"),

	VU("walk.guest.reads", virt.guest_reads, "guest entries read", "entries",
	   "guest page-table entries read by nested walks"),
	VU("walk.guest.cycles", virt.guest_cycles, "guest cycles", "cycles", "guest-stage walk cycles"),
	VU("walk.host.reads", virt.host_reads, "host entries read", "entries",
	   "host page-table entries read by nested walks"),
	VU("walk.host.cycles", virt.host_cycles, "host cycles", "cycles",
	   "host-stage walk cycles (with NTLB and host PWC probes)"),
	VU("walk.host.faults", virt.host_faults, "host faults", "events",
	   "host page faults on guest memory (NPT/EPT violations and guest page zeroing)"),
	VHM("walk.ntlb", virt.ntlb, "nested TLB"),
	VHM("walk.host_pwc.pml5", virt.hpwc[PWC_PML5], "host PML5E PWC"),
	VHM("walk.host_pwc.pml4", virt.hpwc[PWC_PML4], "host PML4E PWC"),
	VHM("walk.host_pwc.pdpt", virt.hpwc[PWC_PDPT], "host PDPTE PWC"),
	VHM("walk.host_pwc.pde", virt.hpwc[PWC_PDE], "host PDE PWC"),
	VU("virt.shadow.faults", virt.shadow_faults, "shadow faults", "events",
	   "shadow page faults (VM exits that built a shadow entry)"),
	VU("virt.shadow.pte_writes", virt.pte_writes, "trapped PTE writes", "events",
	   "guest page-table writes trapped (write-protected shadowed tables)"),
	VU("virt.shadow.zapped", virt.zapped, "shadow entries zapped", "entries",
	   "shadow leaves removed after guest page-table writes and host changes"),
	VU("virt.shadow.guest_reads", virt.shadow_guest_reads, "guest entries read", "entries",
	   "guest page-table entries the hypervisor read on shadow faults"),
	VU("virt.cycles.exits", virt.cyc_exits, "exit cycles", "cycles",
	   "cycles of VM exits (shadow faults, trapped writes)"),
	VU("virt.cycles.guest_reads", virt.cyc_reads, "guest read cycles", "cycles",
	   "cycles of the hypervisor's reads of guest tables on shadow faults"),
	VU("virt.cycles.host", virt.cyc_host, "host cycles", "cycles",
	   "host kernel cycles the guest waited for (faults, compaction, reclaim)"),
	VU("virt.huge.guest_pages", virt.guest_huge, "guest 2M pages", "pages",
	   "guest 2 MiB pages mapped at the end"),
	VU("virt.huge.aligned", virt.aligned_huge, "backed by host huge pages", "pages",
	   "guest 2 MiB pages inside one host huge page (Gemini's well-aligned)"),
	VU("host.vmstat.pgfault", virt.host_pgfault, "pgfault", "events", "host page faults"),
	VU("host.vmstat.thp_fault_alloc", virt.host_thp_fault_alloc, "thp_fault_alloc", "events",
	   "host THP faults"),
	VU("host.vmstat.thp_fault_fallback", virt.host_thp_fault_fallback, "thp_fault_fallback",
	   "events", "host THP fault fallbacks"),
	VU("host.vmstat.thp_collapse_alloc", virt.host_thp_collapse_alloc, "thp_collapse_alloc",
	   "events", "host THP collapses"),
	VU("host.vmstat.thp_split_pmd", virt.host_thp_split_pmd, "thp_split_pmd", "events",
	   "host PMD splits"),
	VU("host.vmstat.compact_stall", virt.host_compact_stall, "compact_stall", "events",
	   "host direct compactions"),
	VU("host.vmstat.khugepaged_pages_collapsed", virt.host_pages_collapsed,
	   "khugepaged_pages_collapsed", "pages", "host pages khugepaged collapsed"),
	VU("host.vmstat.khugepaged_full_scans", virt.host_full_scans, "khugepaged_full_scans",
	   "events", "host khugepaged full scans"),
	VU("host.vmstat.nr_page_table_pages", virt.host_page_table_pages, "nr_page_table_pages",
	   "pages", "host page-table pages (the guest-memory mapping's)"),
	VU("host.vmstat.shadow_pages", virt.host_shadow_pages, "shadow table pages", "pages",
	   "host pages holding the shadow table"),
	VU("host.memory.rss_bytes", virt.host_rss_bytes, "rss", "bytes",
	   "host memory backing the guest"),
	VU("host.memory.huge_bytes", virt.host_huge_bytes, "huge", "bytes",
	   "host memory backing the guest with huge pages"),
	{ .key = "cycles.translation_share", .src = SC_FN, .fn = translation_share,
	  .label = "translation share", .unit = "ratio", .prec = 2, .flags = SC_TEXT,
	  .name = "translation share of cycles" },
};
#undef OFF
#undef U
#undef UR
#undef UN
#undef VM
#undef PS_HM
#undef PWC_HM
#undef VU
#undef VHM

#define NR_ROWS 19 /* rows of the --modes table */

static bool sc_nonzero(struct sc_val v)
{
	return v.t == V_U ? v.u != 0 : v.t == V_I ? v.i != 0 : v.r != 0;
}

static struct sc_val sc_get(const struct stat_counter *c, const struct stats *s)
{
	const char *p = (const char *)s + c->off;
	uint64_t u;
	int i;
	double r;

	switch (c->src) {
	case SC_U64:
		memcpy(&u, p, sizeof(u));
		return val_u(u);
	case SC_SUM: {
		uint64_t v[PS_NR];

		memcpy(v, p, sizeof(v));
		return val_u(side_sum(v));
	}
	case SC_INT:
		memcpy(&i, p, sizeof(i));
		return (struct sc_val){ .t = V_I, .i = i };
	case SC_REAL:
		memcpy(&r, p, sizeof(r));
		return val_r(r);
	case SC_FN:
		return c->fn(s);
	}
	BUG_ON(1);
	return val_u(0);
}

/* The row named @key (@len bytes); BUG if there is none (a typo in a text line). */
static const struct stat_counter *sc_find(const char *key, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++)
		if (strlen(counters[i].key) == len && !memcmp(counters[i].key, key, len))
			return &counters[i];
	BUG_ON(1);
	return NULL;
}

static json_t *sc_json(const struct stat_counter *c, const struct stats *s)
{
	struct sc_val v = sc_get(c, s);

	switch (v.t) {
	case V_U:
		return json_integer((json_int_t)v.u);
	case V_I:
		return json_integer((json_int_t)v.i);
	default:
		return json_real(v.r);
	}
}

/* The object at the dotted path @key's parent under @root, created as needed; sets *@leaf. */
static json_t *json_parent(json_t *root, const char *key, const char **leaf)
{
	const char *dot;

	while ((dot = strchr(key, '.'))) {
		char name[64];
		json_t *o;

		snprintf(name, sizeof(name), "%.*s", (int)(dot - key), key);
		o = json_object_get(root, name);
		if (!o) {
			o = json_object();
			json_object_set_new(root, name, o);
		}
		root = o;
		key = dot + 1;
	}
	*leaf = key;
	return root;
}

static uint64_t refs_total(const struct stats *s)
{
	return s->ifetch + s->load + s->store + s->modify;
}

/*
 * run.roi: the region of interest's parameters (roi.*: 0 is none, sim_* 0 no
 * limit) and what the replay left out of the counters: the references,
 * instructions and events read in the skipped stretch, the references and
 * instructions simulated in the warm-up, whether the simulated stretch was
 * reached (else nothing is counted) and whether roi.sim_* ended the replay.
 */
static json_t *roi_json(const struct stats_roi *r)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b}",
			 "skip_refs", (json_int_t)r->skip_refs, "warmup_refs", (json_int_t)r->warmup_refs,
			 "sim_refs", (json_int_t)r->sim_refs, "skip_insns", (json_int_t)r->skip_insns,
			 "warmup_insns", (json_int_t)r->warmup_insns, "sim_insns", (json_int_t)r->sim_insns,
			 "skipped_refs", (json_int_t)r->skipped_refs,
			 "skipped_insns", (json_int_t)r->skipped_insns,
			 "skipped_events", (json_int_t)r->skipped_events,
			 "warmup_refs_run", (json_int_t)r->warmup_refs_run,
			 "warmup_insns_run", (json_int_t)r->warmup_insns_run, "started", r->started,
			 "stopped", r->stopped);
}

const char *stats_core_name(const struct stats *s)
{
	return s->cpu_model < CPU_MODEL_NR ? cpu_model_name[s->cpu_model] : "?";
}

/*
 * What the input says of dependences (trace_reader.deps), and what the overlap
 * core assumes where it says nothing: every reference independent of earlier
 * loads (its address ready at dispatch), the most overlap the window allows.
 */
const char *stats_deps_text(const struct stats *s)
{
	return s->deps ? "dependences: recorded" : "dependences: unknown, assumed independent";
}

const char *const mthp_stat_name[MTHP_STAT_NR] = {
	"anon_fault_alloc", "anon_fault_fallback", "anon_fault_fallback_charge", "swpout",
	"swpout_fallback", "split", "split_failed", "split_deferred", "nr_anon",
	"nr_anon_partially_mapped",
};

bool mthp_stat_in(enum mthp_stat st, enum os_kernel k)
{
	/* the first release with each (stats.h); the profiles are 6.6, 6.8, 6.12, 6.18 */
	static const unsigned since[MTHP_STAT_NR] = { 610, 610, 610, 610, 610, 611, 611, 611, 612, 612 };
	static const unsigned release[KERNEL_NR] = { 606, 608, 612, 618 };

	return k < KERNEL_NR && release[k] >= since[st];
}

/*
 * The "mthp" object: per size ("16K" .. "2M"), the hugepages-<size>kB/stats/
 * counters os.kernel's sysfs has, for the sizes whose counters moved. Written
 * only when a size below PMD order moved, so that a run without mTHP keeps the
 * report it had before per-size counters were modelled (the 2M row repeats
 * thp_fault_alloc and its kin). NULL: nothing to write.
 */
static json_t *mthp_json(const struct stats *s)
{
	bool any = false;
	json_t *o;

	for (unsigned ord = MTHP_ORDER_MIN; ord < HPAGE_PMD_ORDER; ord++)
		for (unsigned i = 0; i < MTHP_STAT_NR; i++)
			any |= s->mthp[ord][i] && mthp_stat_in(i, s->kernel);
	if (!any)
		return NULL;
	o = json_object();
	for (unsigned ord = MTHP_ORDER_MIN; ord <= HPAGE_PMD_ORDER; ord++) {
		json_t *z = NULL;
		bool moved = false;

		for (unsigned i = 0; i < MTHP_STAT_NR; i++)
			moved |= s->mthp[ord][i] && mthp_stat_in(i, s->kernel);
		if (!moved)
			continue;
		z = json_object();
		for (unsigned i = 0; i < MTHP_STAT_NR; i++)
			if (mthp_stat_in(i, s->kernel))
				json_object_set_new(z, mthp_stat_name[i], json_integer((json_int_t)s->mthp[ord][i]));
		json_object_set_new(o, mthp_size_name[ord], z);
	}
	return o;
}

void *stats_to_json(const struct stats *s, const struct report_meta *m)
{
	json_t *root = json_object(), *o;
	double rps = s->wall_seconds > 0 ? (double)refs_total(s) / s->wall_seconds : 0.0;

	o = json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:I}", "config", m->config, "trace", m->trace,
		      "format", m->format, "mode", m->mode, "wall_seconds", s->wall_seconds,
		      "refs_per_second", floor(rps), "max_rss_bytes", (json_int_t)s->max_rss_bytes);
	/* the core that made the time, and its dependences (stats_deps_text()) */
	json_object_set_new(o, "cpu_model", json_string(stats_core_name(s)));
	json_object_set_new(o, "dependences", json_string(s->deps ? "recorded" : "unknown"));
	if (m->version)
		json_object_set_new(o, "version", json_string(m->version));
	if (m->build_id)
		json_object_set_new(o, "build_id", json_string(m->build_id));
	if (m->config_hash)
		json_object_set_new(o, "config_hash", json_string(m->config_hash));
	if (m->input_id)
		json_object_set_new(o, "input_id", json_string(m->input_id));
	if (m->nlabels) {
		json_t *l = json_object();

		for (unsigned i = 0; i < m->nlabels; i++) {
			const char *eq = strchr(m->labels[i], '=');
			char key[256];

			if (!eq)
				continue;
			snprintf(key, sizeof(key), "%.*s", (int)(eq - m->labels[i]), m->labels[i]);
			json_object_set_new(l, key, json_string(eq + 1));
		}
		json_object_set_new(o, "labels", l);
	}
	if (s->roi.set)
		json_object_set_new(o, "roi", roi_json(&s->roi));
	json_object_set_new(root, "run", o);
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
		const char *leaf;

		if (counters[i].flags & SC_TEXT)
			continue;
		if ((counters[i].flags & SC_VIRT) && !s->virt.mode)
			continue;
		if ((counters[i].flags & SC_MEM) && !s->mem_timed)
			continue;
		if ((counters[i].flags & SC_PROC) && s->processes < 2)
			continue;
		if ((counters[i].flags & SC_COAL) && !s->coalesce)
			continue;
		if ((counters[i].flags & SC_NZ) && !sc_nonzero(sc_get(&counters[i], s)))
			continue;
		o = json_parent(root, counters[i].key, &leaf);
		json_object_set_new(o, leaf, sc_json(&counters[i], s));
	}
	o = mthp_json(s);
	if (o)
		json_object_set_new(root, "mthp", o);
	return root;
}

void stats_write_json(const struct stats *s, const struct report_meta *m, FILE *out)
{
	json_t *j = stats_to_json(s, m);

	json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', out);
	json_decref(j);
}


#define TL_ADDITIVE (1 + CPU_ADDITIVE)
#define TL_OVERLAP (1 + CPU_OVERLAP)

/*
 * The readable table, as pieces of text: a piece is printed if its condition
 * (keys separated by blanks, NULL: always) has a row that is not zero. In a
 * template, "{key}" is the row's value (bytes as "N KiB", ratios as "N.N%",
 * MPKI as "N.NNN MPKI"), "{key:W}" the same right-aligned in W columns, and
 * "{+key...}" its label, a blank, then the value.
 */
static const struct {
	const char *cond, *text;
	unsigned model; /* 0: under any cpu.model; else 1 + the model (TL_ADDITIVE, TL_OVERLAP) */
} text_lines[] = {
	{ NULL, "  {+refs.instructions:20}   refs: {+refs.ifetch}, {+refs.load}, {+refs.store}, "
		"{+refs.modify}\n", 0 },
	{ NULL, "  L1 iTLB      {+tlb.l1i.lookups:14}  {+tlb.l1i.misses:12}  ({tlb.l1i.mpki})", 0 },
	{ "tlb.l1i.4K.hits tlb.l1i.4K.misses", "  4K {tlb.l1i.4K.hits}/{tlb.l1i.4K.misses}", 0 },
	{ "tlb.l1i.2M.hits tlb.l1i.2M.misses", "  2M {tlb.l1i.2M.hits}/{tlb.l1i.2M.misses}", 0 },
	{ "tlb.l1i.1G.hits tlb.l1i.1G.misses", "  1G {tlb.l1i.1G.hits}/{tlb.l1i.1G.misses}", 0 },
	{ NULL, "\n  L1 dTLB      {+tlb.l1d.lookups:14}  {+tlb.l1d.misses:12}  ({tlb.l1d.mpki})", 0 },
	{ "tlb.l1d.4K.hits tlb.l1d.4K.misses", "  4K {tlb.l1d.4K.hits}/{tlb.l1d.4K.misses}", 0 },
	{ "tlb.l1d.2M.hits tlb.l1d.2M.misses", "  2M {tlb.l1d.2M.hits}/{tlb.l1d.2M.misses}", 0 },
	{ "tlb.l1d.1G.hits tlb.l1d.1G.misses", "  1G {tlb.l1d.1G.hits}/{tlb.l1d.1G.misses}", 0 },
	{ NULL, "\n  STLB         {+tlb.stlb.lookups:14}  {+tlb.stlb.misses:12}  ({tlb.stlb.mpki})\n", 0 },
	{ "tlb.cr3.loads", "  {+tlb.cr3.loads:14}  {+tlb.cr3.flushing_loads}, "
	  "{+tlb.cr3.flushed_entries}\n", 0 },
	{ NULL, "  {+walk.walks:14}  {+walk.pte_reads} ({+walk.served.l1d}, {+walk.served.l2}, "
		"{+walk.served.llc}, {+walk.served.dram})\n", 0 },
	{ "cache.l1d.prefetches cache.l2.prefetches cache.dram.reads cache.dram.writebacks",
	  "  caches: {+cache.l1d.prefetches} ({+cache.l1d.useful_prefetches}), "
	  "{+cache.l2.prefetches} ({+cache.l2.useful_prefetches}), {+cache.dram.reads}, "
	  "{+cache.dram.writebacks}\n", 0 },
	{ "walk.guest.reads walk.host.reads",
	  "  nested: {+walk.guest.reads} ({walk.guest.cycles} cycles), {+walk.host.reads} "
	  "({walk.host.cycles} cycles), nested TLB {walk.ntlb.hits}/{walk.ntlb.misses}\n", 0 },
	{ "virt.shadow.faults",
	  "  shadow: {+virt.shadow.faults}, {+virt.shadow.pte_writes}, {+virt.shadow.zapped}, "
	  "{+virt.cycles.exits}\n", 0 },
	{ "host.vmstat.pgfault virt.huge.guest_pages",
	  "  host: {+host.vmstat.pgfault}, {+host.vmstat.thp_fault_alloc}, "
	  "{+host.vmstat.thp_collapse_alloc}, {+host.memory.rss_bytes}, {+host.memory.huge_bytes}; "
	  "{virt.huge.aligned} of {virt.huge.guest_pages} guest 2M pages in host huge pages\n", 0 },
	{ NULL, "  {+vmstat.pgfault:17}  {+vmstat.nr_anon_pages}, {+vmstat.nr_hugetlb_pages}, "
		"{+vmstat.nr_page_table_pages}, {+vmstat.tlb_invalidations}\n", 0 },
	{ NULL, "  memory: {+memory.rss_bytes}, {+memory.huge_bytes} ({memory.huge_coverage} "
		"coverage) at the end; {+memory.peak_rss_bytes}, {+memory.peak_huge_bytes} "
		"({memory.huge_coverage_peak} peak, {memory.huge_coverage_mean} time-weighted "
		"coverage)\n", 0 },
	/* the hugepages-<size>kB/stats/ counters of the sizes that moved (text_mthp()) */
	{ NULL, NULL, 0 },
	{ "vmstat.thp_underused_split_page", "  {+vmstat.thp_underused_split_page} (of {+vmstat.thp_split_page})\n", 0 },
	{ "vmstat.pswpout vmstat.pswpin",
	  "  swap: out {vmstat.pswpout} pages ({vmstat.thp_swpout} THPs whole, "
	  "{vmstat.thp_swpout_fallback} split), in {vmstat.pswpin} ({+vmstat.pgmajfault}), "
	  "{+vmstat.pgscan}, {+vmstat.pgsteal}, {memory.swap_bytes} in swap\n", 0 },
	{ NULL, "  {+cycles.total:18} = {+cycles.instructions} + {+cycles.translation} "
		"({+cycles.walk}) + {+cycles.fault}", TL_ADDITIVE },
	{ "cycles.data", " + {+cycles.data}", TL_ADDITIVE },
	{ "cycles.compaction", " + {+cycles.compaction}", TL_ADDITIVE },
	{ "cycles.reclaim", " + {+cycles.reclaim}", TL_ADDITIVE },
	{ "cycles.virt", " + {+cycles.virt}", TL_ADDITIVE },
	/* overlap: the total is when the last instruction retired; the rest are busy times and stalls */
	{ NULL, "  {+cycles.total:18}: {+cycles.instructions}, {+cycles.translation_stall}", TL_OVERLAP },
	{ "cycles.data cycles.data_stall", ", {+cycles.data_stall}", TL_OVERLAP },
	{ NULL, ", {+cycles.fault}", TL_OVERLAP },
	{ "cycles.compaction", ", {+cycles.compaction}", TL_OVERLAP },
	{ "cycles.reclaim", ", {+cycles.reclaim}", TL_OVERLAP },
	{ "cycles.virt", ", {+cycles.virt}", TL_OVERLAP },
	{ NULL, "\n  busy: {+cycles.translation} ({+cycles.walk} on the walkers)", TL_OVERLAP },
	{ "cycles.data", ", {+cycles.data}", TL_OVERLAP },
	{ NULL, "\n  {+cycles.translation_share} of cycles\n", 0 },
};

/* Does a row of the blank-separated keys @cond have a value that is not zero? */
static bool text_cond(const char *cond, const struct stats *s)
{
	while (*cond) {
		size_t n = strcspn(cond, " ");

		if (sc_nonzero(sc_get(sc_find(cond, n), s)))
			return true;
		cond += n + strspn(cond + n, " ");
	}
	return false;
}

/* One value for the readable table, in @width columns (0: as wide as it is). */
static void text_value(const struct stat_counter *c, const struct stats *s, int width, FILE *out)
{
	struct sc_val v = sc_get(c, s);

	if (!strcmp(c->unit, "bytes"))
		fprintf(out, "%*llu KiB", width, (unsigned long long)(v.u >> 10));
	else if (!strcmp(c->unit, "ratio"))
		fprintf(out, "%*.*f%%", width, (int)c->prec, 100.0 * v.r);
	else if (!strcmp(c->unit, "MPKI"))
		fprintf(out, "%*.3f MPKI", width, v.r);
	else if (v.t == V_I)
		fprintf(out, "%*lld", width, (long long)v.i);
	else
		fprintf(out, "%*llu", width, (unsigned long long)v.u);
}

/* Print @t with its {key} fields filled in. */
static void text_template(const char *t, const struct stats *s, FILE *out)
{
	while (*t) {
		const char *open = strchr(t, '{'), *key, *end;
		const struct stat_counter *c;
		bool label;
		int width = 0;

		if (!open) {
			fputs(t, out);
			return;
		}
		fwrite(t, 1, (size_t)(open - t), out);
		key = open + 1;
		label = *key == '+';
		key += label;
		end = key + strcspn(key, ":}");
		c = sc_find(key, (size_t)(end - key));
		if (*end == ':') {
			char *w;

			width = (int)strtol(end + 1, &w, 10);
			end = w;
		}
		BUG_ON(*end != '}');
		if (label)
			fprintf(out, "%s ", c->label);
		text_value(c, s, width, out);
		t = end + 1;
	}
}

void stats_write_roi(const struct stats *s, FILE *out)
{
	if (s->roi.set) /* what the counters leave out */
		fprintf(out, "  region of interest: skipped %llu refs (%llu instructions), warm-up %llu refs "
			"(%llu instructions) not counted%s\n",
			(unsigned long long)s->roi.skipped_refs, (unsigned long long)s->roi.skipped_insns,
			(unsigned long long)s->roi.warmup_refs_run, (unsigned long long)s->roi.warmup_insns_run,
			!s->roi.started ? "; the input ended before the region: nothing counted"
			: s->roi.stopped ? "; stopped at its end" : "");
}

/*
 * A line per size whose hugepages-<size>kB/stats/ counters moved, naming the
 * ones that are not 0 (those os.kernel's sysfs has), under the rule of the
 * JSON's "mthp" object: only when a size below PMD order moved.
 */
static void text_mthp(const struct stats *s, FILE *out)
{
	bool any = false;

	for (unsigned ord = MTHP_ORDER_MIN; ord < HPAGE_PMD_ORDER; ord++)
		for (unsigned i = 0; i < MTHP_STAT_NR; i++)
			any |= s->mthp[ord][i] && mthp_stat_in(i, s->kernel);
	if (!any)
		return;
	for (unsigned ord = MTHP_ORDER_MIN; ord <= HPAGE_PMD_ORDER; ord++) {
		const char *sep = ": ";
		bool moved = false;

		for (unsigned i = 0; i < MTHP_STAT_NR; i++)
			moved |= s->mthp[ord][i] && mthp_stat_in(i, s->kernel);
		if (!moved)
			continue;
		fprintf(out, "  mthp %s", mthp_size_name[ord]);
		for (unsigned i = 0; i < MTHP_STAT_NR; i++)
			if (s->mthp[ord][i] && mthp_stat_in(i, s->kernel)) {
				fprintf(out, "%s%s %llu", sep, mthp_stat_name[i],
					(unsigned long long)s->mthp[ord][i]);
				sep = ", ";
			}
		fputc('\n', out);
	}
}

void stats_write_text(const struct stats *s, const struct report_meta *m, FILE *out)
{
	fprintf(out, "mmusim: %s on %s (%s, mode %s)\n", m->trace, m->config, m->format, m->mode);
	fprintf(out, "  core: %s; %s\n", stats_core_name(s), stats_deps_text(s));
	stats_write_roi(s, out);
	for (size_t i = 0; i < ARRAY_SIZE(text_lines); i++)
		if (!text_lines[i].text)
			text_mthp(s, out);
		else if ((!text_lines[i].model || text_lines[i].model == 1 + s->cpu_model) &&
			 (!text_lines[i].cond || text_cond(text_lines[i].cond, s)))
			text_template(text_lines[i].text, s, out);
}

/* A row's value for the --modes table: counts as they are, ratios as percentages. */
static double row_value(const struct stat_counter *c, const struct stats *s)
{
	struct sc_val v = sc_get(c, s);

	if (v.t == V_R)
		return strcmp(c->unit, "ratio") ? v.r : 100.0 * v.r;
	return v.t == V_U ? (double)v.u : (double)v.i;
}

/*
 * The --modes table: a row per counter with a row_pos, each mode's value and its
 * change against the first mode ("n/a" where the first mode's is 0). The L1
 * iTLB rows are left out when no mode fetched an instruction (a workload).
 */
void stats_write_compare(const struct stats *s, const char *const *modes, unsigned n, FILE *out)
{
	const struct stat_counter *rows[NR_ROWS + 1] = { NULL };
	bool fetched = false;

	for (size_t k = 0; k < ARRAY_SIZE(counters); k++)
		if (counters[k].row) {
			BUG_ON(counters[k].row_pos < 1 || counters[k].row_pos > NR_ROWS ||
			       rows[counters[k].row_pos]);
			rows[counters[k].row_pos] = &counters[k];
		}
	for (unsigned i = 0; i < n; i++)
		fetched |= s[i].ifetch != 0 || s[i].lookups[0] != 0;
	/* the corner names the core that made the times (all modes share it) */
	{
		char corner[32];

		snprintf(corner, sizeof(corner), "core: %s", stats_core_name(&s[0]));
		fprintf(out, "%-20s", corner);
	}
	for (unsigned i = 0; i < n; i++)
		fprintf(out, " %24s", modes[i]);
	fputc('\n', out);
	for (size_t k = 1; k <= NR_ROWS; k++) {
		double base = row_value(rows[k], &s[0]);

		if (!fetched && !strncmp(rows[k]->key, "tlb.l1i.", 8))
			continue;
		fprintf(out, "%-20s", rows[k]->row);
		for (unsigned i = 0; i < n; i++) {
			double v = row_value(rows[k], &s[i]);
			char num[32], pct[16];

			if (v == floor(v) && fabs(v) < 1e15)
				snprintf(num, sizeof(num), "%.0f", v);
			else
				snprintf(num, sizeof(num), "%.3f", v);
			if (base != 0)
				snprintf(pct, sizeof(pct), "%6.2f%%", 100.0 * (v - base) / base);
			else
				snprintf(pct, sizeof(pct), "%7s", "n/a");
			fprintf(out, " %14s (%s)", num, pct);
		}
		fputc('\n', out);
	}
}

bool stats_counter_virt_only(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++)
		if (!strcmp(counters[i].key, key))
			return counters[i].flags & (SC_VIRT | SC_MEM | SC_PROC | SC_COAL | SC_NZ);
	return false;
}

int stats_counter_describe(const char *key, const char **name, const char **unit)
{
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++)
		if (!strcmp(counters[i].key, key)) {
			*name = counters[i].name ? counters[i].name : counters[i].label;
			*unit = counters[i].unit;
			return 0;
		}
	return -1;
}

/* --- several processes ------------------------------------------------------ */

/*
 * A fault-latency histogram as [n0, n1, ...]: entry b counts the faults that
 * cost [2^b, 2^(b+1)) cycles (entry 0: 0 or 1), up to the last non-empty one
 * ([] with no fault).
 */
static json_t *fault_lat_json(const uint64_t *h)
{
	json_t *a = json_array();
	int last = -1;

	for (int b = 0; b < STATS_FAULT_LAT_BUCKETS; b++)
		if (h[b])
			last = b;
	for (int b = 0; b <= last; b++)
		json_array_append_new(a, json_integer((json_int_t)h[b]));
	return a;
}

void *stats_procs_to_json(const struct stats_proc *p, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "id", json_integer((json_int_t)p[i].id));
		json_object_set_new(o, "exited", json_boolean(p[i].exited));
		for (unsigned c = 0; c < p[i].ncounts; c++)
			json_object_set_new(o, p[i].count_names[c], json_integer((json_int_t)p[i].counts[c]));
		json_object_set_new(o, "rss_bytes", json_integer((json_int_t)p[i].rss_bytes));
		json_object_set_new(o, "anon_huge_bytes", json_integer((json_int_t)p[i].anon_huge_bytes));
		json_object_set_new(o, "file_rss_bytes", json_integer((json_int_t)p[i].file_rss_bytes));
		json_object_set_new(o, "huge_coverage", json_real(p[i].huge_coverage));
		json_object_set_new(o, "touched_bytes", json_integer((json_int_t)p[i].touched_bytes));
		json_object_set_new(o, "bloat_bytes", json_integer((json_int_t)p[i].bloat_bytes));
		json_object_set_new(o, "fairness", p[i].has_fairness ? json_real(p[i].fairness) : json_null());
		json_object_set_new(o, "fault_latency_cycles", fault_lat_json(p[i].fault_lat));
		json_array_append_new(a, o);
	}
	return a;
}

/*
 * A row per count and metric, a column per process (headed "process ID", with
 * " (exited)" for one that exited): the figures as they are, the ratios with
 * three decimals, "-" for a fairness that is not defined.
 */
void stats_write_procs(const struct stats_proc *p, size_t n, FILE *out)
{
	static const char *const rows[] = { "rss_bytes", "anon_huge_bytes", "file_rss_bytes",
					    "huge_coverage", "touched_bytes", "bloat_bytes", "fairness" };
	char head[48];

	fprintf(out, "%-20s", "processes");
	for (size_t i = 0; i < n; i++) {
		snprintf(head, sizeof(head), "process %llu%s", (unsigned long long)p[i].id,
			 p[i].exited ? " (exited)" : "");
		fprintf(out, " %18s", head);
	}
	fputc('\n', out);
	for (unsigned c = 0; n && c < p[0].ncounts; c++) {
		fprintf(out, "%-20s", p[0].count_names[c]);
		for (size_t i = 0; i < n; i++)
			fprintf(out, " %18llu", (unsigned long long)p[i].counts[c]);
		fputc('\n', out);
	}
	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		fprintf(out, "%-20s", rows[r]);
		for (size_t i = 0; i < n; i++) {
			const struct stats_proc *q = &p[i];

			switch (r) {
			case 0: fprintf(out, " %18llu", (unsigned long long)q->rss_bytes); break;
			case 1: fprintf(out, " %18llu", (unsigned long long)q->anon_huge_bytes); break;
			case 2: fprintf(out, " %18llu", (unsigned long long)q->file_rss_bytes); break;
			case 3: fprintf(out, " %18.3f", q->huge_coverage); break;
			case 4: fprintf(out, " %18llu", (unsigned long long)q->touched_bytes); break;
			case 5: fprintf(out, " %18llu", (unsigned long long)q->bloat_bytes); break;
			default:
				if (q->has_fairness)
					fprintf(out, " %18.3f", q->fairness);
				else
					fprintf(out, " %18s", "-");
			}
		}
		fputc('\n', out);
	}
}
