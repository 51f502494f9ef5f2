/*
 * config.c - the simulated machine and kernel: built-in defaults, YAML files
 * (libyaml event API), --set overrides, validation, and writing the effective
 * configuration back as YAML.
 *
 * One table of leaf keys (keys[] below: dotted path, storage type, offset into
 * struct sim_config, single-value check) drives the loader, config_set(),
 * config_get(), config_validate() and config_write_yaml(); adding a key is one
 * row. Interior mappings ("tlb.l1d", "os.cost") are implied by the paths.
 *
 * Semantics:
 * - A file or a --set names only what it overrides; everything else keeps its
 *   value. Loading works on a copy, so a failed load or --set leaves the caller's
 *   config untouched.
 * - tlb.stlb is a list of up to STLB_MAX_ARRAYS arrays. In a file it is one
 *   mapping or a sequence of mappings and replaces the whole list; a new array
 *   starts as { entries: 0, ways: 0, pages: [4K] }. Arrays with entries 0 are
 *   dropped after loading, so nr_stlb counts real arrays (an empty list or
 *   `entries: 0` means no STLB). With --set, tlb.stlb.N.* edits array N, and
 *   N == nr_stlb appends one (it must end up with entries > 0); "tlb.stlb.entries"
 *   is shorthand for "tlb.stlb.0.entries"; "tlb.stlb.N={entries: E, ways: W,
 *   pages: [4K]}" sets a whole array at once.
 * - Values are YAML scalars; sizes take K/M/G/T suffixes (util.c parse_size),
 *   booleans true/false and YAML 1.1's yes/no/on/off, enums their names, page
 *   lists [4K, 2M] or "4K+2M".
 * - Keys may be written dotted in a file ("os.mode: thp" at the top level).
 * - Two shorthands set several keys at once, where they stand (a later key
 *   overrides them): "os.thp_anon" (Linux's thp_anon= boot parameter, every
 *   os.thp.sizes.<size>.enabled; apply_thp_anon()) and "tlb.coalesce" given a
 *   scalar (the kind; none also clears every array's flag). Neither is a row
 *   of keys[]: config show writes the keys they set.
 * - Errors: file input gives "FILE:LINE:COL: path: what" pointing at the key;
 *   YAML syntax errors carry libyaml's problem mark (1-based). Aliases are
 *   refused (no exponential alias expansion); so are multiple documents and a
 *   non-mapping top level. A `sweep:` key belongs to sweep files only.
 * - Validation has two halves. Single-value rules (walk.levels 4|5, cache.line a
 *   power of two, os.memory bounds, ...) are checked as each value is stored, so
 *   a bad --set is reported as "--set ASSIGNMENT: ...". Cross-field rules (ways
 *   divide entries, cache size a multiple of ways * line) are checked at the end
 *   of a file load, pointing at the key that set them, and by config_validate();
 *   config_set() does not check them, because two --set that are valid together
 *   may be invalid one at a time (cache.l2.ways=10 before cache.l2.size=1280K):
 *   callers run config_validate(c, "--set", e) after the last override.
 *
 * Sources of the defaults are cited beside each value in config_defaults().
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <yaml.h>

#include "config.h"
#include "util.h"
#include "workload.h"

const char *const repl_policy_name[REPL_NR] = { "lru", "fifo", "plru", "random" };
const char *const tlb_coalesce_name[COAL_NR] = { "none", "amd", "contpte" };
const char *const cpu_model_name[CPU_MODEL_NR] = { "additive", "overlap" };
const char *const os_mode_name[MODE_NR] = { "base", "hugetlbfs", "thp" };
const char *const os_kernel_name[KERNEL_NR] = { "6.6", "6.8", "6.12", "6.18" };
const char *const os_layout_name[LAYOUT_NR] = { "auto", "kernel", "trace" };
const char *const os_profile_name[PROFILE_NR] = { "linux", "osless" };
const char *const file_cache_name[FILE_CACHE_NR] = { "cold", "warm" };
const char *const thp_enabled_name[THP_ENABLED_NR] = { "always", "madvise", "never" };
const char *const mthp_size_name[MTHP_ORDERS] = { "4K", "8K", "16K", "32K", "64K",
						  "128K", "256K", "512K", "1M", "2M" };
/* Each size key's words, its default first (struct thp_cfg.size_enabled); mthp_words[]
 * is in enum mthp_enabled's order. */
static const char *const mthp_words_pmd[MTHP_ENABLED_NR] = { "inherit", "always", "madvise", "never" };
static const char *const mthp_words[MTHP_ENABLED_NR] = { "never", "always", "inherit", "madvise" };
static const enum mthp_enabled mthp_pmd_value[MTHP_ENABLED_NR] = { MTHP_INHERIT, MTHP_ALWAYS,
								  MTHP_MADVISE, MTHP_NEVER };

enum mthp_enabled thp_size_enabled(const struct thp_cfg *t, unsigned order)
{
	unsigned v = t->size_enabled[order];

	if (v >= MTHP_ENABLED_NR || order < MTHP_ORDER_MIN || order > HPAGE_PMD_ORDER)
		return MTHP_NEVER;
	return order == HPAGE_PMD_ORDER ? mthp_pmd_value[v] : (enum mthp_enabled)v;
}

bool thp_mthp_configured(const struct thp_cfg *t)
{
	for (unsigned o = MTHP_ORDER_MIN; o < HPAGE_PMD_ORDER; o++)
		if (thp_size_enabled(t, o) != MTHP_NEVER)
			return true;
	return false;
}
const char *const thp_defrag_name[THP_DEFRAG_NR] = { "always", "defer", "defer+madvise", "madvise",
						     "never" };
const char *const pwc_level_name[PWC_NR] = { "pml5", "pml4", "pdpt", "pde" };
const char *const virt_mode_name[VIRT_NR] = { "none", "nested", "shadow" };
const char *const hugetlb_size_name[2] = { "2M", "1G" };
const char *const cache_level_name[CL_NR] = { "l1d", "l2", "llc" };

/* page_size_name[] lives in stats.c; this file keeps its own copy. */
static const char *const ps_name[PS_NR] = { "4K", "2M", "1G" };

/* Enum-typed fields are stored and read as unsigned (GCC's compatible type). */
_Static_assert(sizeof(enum repl_policy) == sizeof(unsigned), "enum size");
_Static_assert(sizeof(enum os_mode) == sizeof(unsigned), "enum size");
_Static_assert(sizeof(enum os_kernel) == sizeof(unsigned), "enum size");
_Static_assert(sizeof(enum os_layout) == sizeof(unsigned), "enum size");
_Static_assert(sizeof(enum os_profile) == sizeof(unsigned), "enum size");

/*
 * os.profile osless: what a simulator without a kernel does on a trace without
 * system calls. A read maps a page of its own (no zero page to break with a
 * flush), a fault maps one page (no fault-around, which DynamoRIO's one
 * page-table entry per touched page never has), and a region first touched by
 * a fetch is a 4 KiB implicit region of its own, so a data page beside code is
 * anonymous and writable, never file text copied on its first store.
 */
#define OSLESS_ZERO_PAGE false
#define OSLESS_FAULT_AROUND 4096ULL
#define OSLESS_GRANULE 4096ULL
_Static_assert(sizeof(enum file_cache) == sizeof(unsigned), "enum size");
_Static_assert(STLB_MAX_ARRAYS == 4, "keys[] spells out tlb.stlb.0 .. tlb.stlb.3");

/* ---------------------------------------------------------------- key table */

enum ktype {
	KT_STR,    /* char[size] */
	KT_U32,    /* unsigned */
	KT_U64,    /* uint64_t */
	KT_SIZE32, /* unsigned, written with a K/M/G suffix */
	KT_SIZE64, /* uint64_t, written with a K/M/G suffix */
	KT_DOUBLE, /* double */
	KT_BOOL,   /* bool */
	KT_ENUM,   /* an enum (unsigned), by name from names[nr] */
	KT_PAGES,  /* unsigned mask of 1u << enum page_size */
};

/* Rules on one value alone, checked when it is stored and by validation. */
enum kcheck {
	CK_NONE,
	CK_NONZERO, /* > 0 */
	CK_LEVELS,  /* 4 or 5 */
	CK_LINE,    /* power of two in 8..4096 */
	CK_MEMORY,  /* multiple of 4 MiB, 64 MiB .. 1 TiB */
	CK_GRANULE, /* power of two in 4K..1G */
	CK_FOLIO,   /* power of two in 4K..1M (os.file_cache_folio_size) */
	CK_FAULT_AROUND, /* power of two in 4K..2M (fault_around_bytes_set()) */
	CK_CPI,     /* 0 .. CPI_MAX */
	CK_SHARE,   /* finite, 0 .. 1 */
	CK_MEMORY0, /* 0 (the default's rule), or as CK_MEMORY */
	CK_BW,      /* finite, 0 .. BW_MAX */
};

/* The largest cache.dram_bandwidth, bytes a cycle: 16 lines of 64 bytes, past any one core's. */
#define BW_MAX 1024.0

/*
 * The largest cpu.cpi: more than a core that waits on main memory at every
 * instruction (a DRAM access is a few hundred cycles) spends, and small enough
 * that instructions x CPI stays a 64-bit cycle count for any trace of up to
 * 1.8e16 instructions (cycles_of() saturates beyond). The doubles' ranges:
 * cpu.cpi 0 .. CPI_MAX, os.fragmentation.unmovable and its host.os twin 0 .. 1.
 */
#define CPI_MAX 1000.0

struct key {
	const char *path;
	enum ktype type;
	size_t off;
	size_t size;              /* KT_STR: buffer size */
	const char *const *names; /* KT_ENUM */
	unsigned nr;              /* KT_ENUM */
	enum kcheck check;
	bool quiet; /* written only when not 0, its default: configs that leave it alone
		     * keep the text and config_hash they had before the key existed */
	bool quiet_true; /* a KT_BOOL written only when false: true is its default */
};

#define OFF(m) offsetof(struct sim_config, m)
#define K(p, t, m, ck) { .path = (p), .type = (t), .off = OFF(m), .check = (ck) }
#define KU(p, m) K(p, KT_U32, m, CK_NONE)
#define KENUM(p, m, tbl, n) \
	{ .path = (p), .type = KT_ENUM, .off = OFF(m), .names = (tbl), .nr = (n) }
#define KARRAY(p, m) KU(p ".entries", m.entries), KU(p ".ways", m.ways)
#define KSTLB(n)                                                             \
	KU("tlb.stlb." #n ".entries", stlb[n].entries),                      \
	KU("tlb.stlb." #n ".ways", stlb[n].ways),                            \
	K("tlb.stlb." #n ".pages", KT_PAGES, stlb[n].pages, CK_NONE)
/* An overlap core's key (cpu.model overlap; written under either model: config show is complete) */
#define KO(p, t, m, ck) K(p, t, m, ck)
#define KCACHE(p, lvl)                                                       \
	K(p ".size", KT_SIZE64, cache[lvl].size, CK_NONE),                   \
	KU(p ".ways", cache[lvl].ways), KU(p ".latency", cache[lvl].latency), \
	KO(p ".mshrs", KT_U32, cache[lvl].mshrs, CK_NONZERO)

/* hugepages-<size>kB/enabled below PMD order: quiet, written when not never */
#define KMTHP(sz, o)                                                              \
	{ .path = "os.thp.sizes." sz ".enabled", .type = KT_ENUM, .off = OFF(thp.size_enabled[o]), \
	  .names = mthp_words, .nr = MTHP_ENABLED_NR, .quiet = true }

/* A prefetcher's keys (written under overlap or when set: config_write_yaml()) */
#define KPF(p, i)                                                            \
	KO(p ".degree", KT_U32, prefetch[i].degree, CK_NONE),                \
	KO(p ".distance", KT_U32, prefetch[i].distance, CK_NONE),            \
	KO(p ".streams", KT_U32, prefetch[i].streams, CK_NONE)

/*
 * Every leaf key, in the order config_write_yaml() writes them. Rows that share
 * a path prefix must be contiguous (the writer groups them into mappings).
 */
static const struct key keys[] = {
	{ .path = "cpu.name", .type = KT_STR, .off = OFF(cpu_name),
	  .size = sizeof(((struct sim_config *)0)->cpu_name) },
	K("cpu.freq_mhz", KT_U32, freq_mhz, CK_NONZERO),
	K("cpu.cpi", KT_DOUBLE, cpi, CK_CPI),
	KENUM("cpu.model", core.model, cpu_model_name, CPU_MODEL_NR),
	KO("cpu.rob", KT_U32, core.rob, CK_NONZERO),
	KO("cpu.width", KT_U32, core.width, CK_NONZERO),
	KO("cpu.store_buffer", KT_U32, core.store_buffer, CK_NONZERO),
	/* quiet: a config without it keeps its text and config_hash */
	{ .path = "cpu.pcid", .type = KT_BOOL, .off = OFF(pcid), .quiet = true },

	KARRAY("tlb.l1i.4K", l1i[PS_4K]),
	KARRAY("tlb.l1i.2M", l1i[PS_2M]),
	KARRAY("tlb.l1i.1G", l1i[PS_1G]),
	KARRAY("tlb.l1d.4K", l1d[PS_4K]),
	KARRAY("tlb.l1d.2M", l1d[PS_2M]),
	KARRAY("tlb.l1d.1G", l1d[PS_1G]),
	KSTLB(0), KSTLB(1), KSTLB(2), KSTLB(3),
	KENUM("tlb.policy", policy, repl_policy_name, REPL_NR),
	KU("tlb.latency.l1", lat_l1),
	KU("tlb.latency.stlb", lat_stlb),
	/* quiet: a machine that does not coalesce keeps its text and config_hash */
	{ .path = "tlb.coalesce.kind", .type = KT_ENUM, .off = OFF(coalesce), .names = tlb_coalesce_name,
	  .nr = COAL_NR, .quiet = true },
	{ .path = "tlb.coalesce.l1i", .type = KT_BOOL, .off = OFF(coal_l1i), .quiet = true },
	{ .path = "tlb.coalesce.l1d", .type = KT_BOOL, .off = OFF(coal_l1d), .quiet = true },
	{ .path = "tlb.coalesce.stlb", .type = KT_BOOL, .off = OFF(coal_stlb), .quiet = true },

	K("walk.levels", KT_U32, levels, CK_LEVELS),
	KARRAY("walk.pwc.pml5", pwc[PWC_PML5]),
	KARRAY("walk.pwc.pml4", pwc[PWC_PML4]),
	KARRAY("walk.pwc.pdpt", pwc[PWC_PDPT]),
	KARRAY("walk.pwc.pde", pwc[PWC_PDE]),
	KU("walk.pwc_latency", pwc_latency),
	KO("walk.walkers", KT_U32, core.walkers, CK_NONZERO),

	KCACHE("cache.l1d", CL_L1D),
	KCACHE("cache.l2", CL_L2),
	KCACHE("cache.llc", CL_LLC),
	K("cache.line", KT_SIZE32, line_size, CK_LINE),
	KU("cache.dram_latency", dram_latency),
	K("cache.data_refs", KT_BOOL, data_refs, CK_NONE),
	KO("cache.dram_bandwidth", KT_DOUBLE, dram_bandwidth, CK_BW),
	KPF("cache.prefetch.l1d", PF_L1D),
	KPF("cache.prefetch.l2", PF_L2),

	KENUM("os.profile", profile, os_profile_name, PROFILE_NR),
	K("os.memory", KT_SIZE64, memory, CK_MEMORY),
	KENUM("os.mode", mode, os_mode_name, MODE_NR),
	KENUM("os.kernel", kernel, os_kernel_name, KERNEL_NR),
	KENUM("os.layout", layout, os_layout_name, LAYOUT_NR),
	KU("os.hugetlbfs.pages", hugetlb_pages),
	KU("os.hugetlbfs.pages_1g", hugetlb_1g_pages),
	{ .path = "os.hugetlbfs.default_size", .type = KT_ENUM, .off = OFF(hugetlb_default_1g),
	  .names = hugetlb_size_name, .nr = 2, .quiet = true },
	K("os.swap.size", KT_SIZE64, swap_size, CK_NONE),
	K("os.implicit.enabled", KT_BOOL, implicit.enabled, CK_NONE),
	K("os.implicit.granule", KT_SIZE64, implicit.granule, CK_GRANULE),
	K("os.zero_page", KT_BOOL, zero_page, CK_NONE),
	K("os.fault_around_bytes", KT_SIZE64, fault_around_bytes, CK_FAULT_AROUND),
	KU("os.read_ahead_kb", read_ahead_kb),
	KENUM("os.file_cache", file_cache, file_cache_name, FILE_CACHE_NR),
	/* quiet: 0 (unset) is the default, order 0; a config without it keeps its text and config_hash */
	{ .path = "os.file_cache_folio_size", .type = KT_SIZE64, .off = OFF(file_cache_folio_size),
	  .check = CK_FOLIO, .quiet = true },
	K("os.cost.fault", KT_U64, cost.fault, CK_NONE),
	K("os.cost.clear_page", KT_U64, cost.clear_page, CK_NONE),
	K("os.cost.copy_page", KT_U64, cost.copy_page, CK_NONE),
	K("os.cost.compact_scan", KT_U64, cost.compact_scan, CK_NONE),
	K("os.cost.flush", KT_U64, cost.flush, CK_NONE),
	K("os.cost.swap_in", KT_U64, cost.swap_in, CK_NONE),
	KENUM("os.thp.enabled", thp.enabled, thp_enabled_name, THP_ENABLED_NR),
	KENUM("os.thp.defrag", thp.defrag, thp_defrag_name, THP_DEFRAG_NR),
	K("os.thp.use_zero_page", KT_BOOL, thp.use_zero_page, CK_NONE),
	K("os.thp.huge_zero_allocated", KT_BOOL, thp.huge_zero_allocated, CK_NONE),
	K("os.thp.read_only_thp_for_fs", KT_BOOL, thp.read_only_thp_for_fs, CK_NONE),
	/* quiet while true (the kernel's default): configs without it keep their text and config_hash */
	{ .path = "os.thp.shrink_underused", .type = KT_BOOL, .off = OFF(thp.shrink_underused),
	  .quiet_true = true },
	KMTHP("16K", 2), KMTHP("32K", 3), KMTHP("64K", 4), KMTHP("128K", 5), KMTHP("256K", 6),
	KMTHP("512K", 7), KMTHP("1M", 8),
	{ .path = "os.thp.sizes.2M.enabled", .type = KT_ENUM, .off = OFF(thp.size_enabled[9]),
	  .names = mthp_words_pmd, .nr = MTHP_ENABLED_NR, .quiet = true },
	K("os.khugepaged.pages_to_scan", KT_U32, khugepaged.pages_to_scan, CK_NONZERO),
	KU("os.khugepaged.scan_sleep_millisecs", khugepaged.scan_sleep_millisecs),
	KU("os.khugepaged.alloc_sleep_millisecs", khugepaged.alloc_sleep_millisecs),
	KU("os.khugepaged.max_ptes_none", khugepaged.max_ptes_none),
	KU("os.khugepaged.max_ptes_swap", khugepaged.max_ptes_swap),
	KU("os.khugepaged.max_ptes_shared", khugepaged.max_ptes_shared),
	K("os.khugepaged.defrag", KT_BOOL, khugepaged.defrag, CK_NONE),
	K("os.fragmentation.unmovable", KT_DOUBLE, fragmentation.unmovable, CK_SHARE),
	K("os.fragmentation.seed", KT_U64, fragmentation.seed, CK_NONE),
	KU("os.extfrag_threshold", extfrag_threshold),

	K("roi.skip_refs", KT_U64, roi.skip_refs, CK_NONE),
	K("roi.warmup_refs", KT_U64, roi.warmup_refs, CK_NONE),
	K("roi.sim_refs", KT_U64, roi.sim_refs, CK_NONE),
	K("roi.skip_insns", KT_U64, roi.skip_insns, CK_NONE),
	K("roi.warmup_insns", KT_U64, roi.warmup_insns, CK_NONE),
	K("roi.sim_insns", KT_U64, roi.sim_insns, CK_NONE),

	K("seed", KT_U64, seed, CK_NONE),

	/* written with the processes: list, or when not its default (sched_shown()) */
	K("sched.quantum", KT_U64, sched_quantum, CK_NONZERO),

	/* the first key config_write_yaml() leaves out when virt.mode is none (VIRT_KEY0) */
	KENUM("virt.mode", virt.mode, virt_mode_name, VIRT_NR),
	K("virt.levels", KT_U32, virt.levels, CK_LEVELS),
	KARRAY("virt.ntlb", virt.ntlb),
	KARRAY("virt.pwc.pml5", virt.pwc[PWC_PML5]),
	KARRAY("virt.pwc.pml4", virt.pwc[PWC_PML4]),
	KARRAY("virt.pwc.pdpt", virt.pwc[PWC_PDPT]),
	KARRAY("virt.pwc.pde", virt.pwc[PWC_PDE]),
	K("virt.cost.exit", KT_U64, virt.exit, CK_NONE),
	K("host.os.memory", KT_SIZE64, virt.host_memory, CK_MEMORY0),
	KENUM("host.os.mode", virt.host_mode, os_mode_name, MODE_NR),
	K("host.os.madvise", KT_BOOL, virt.host_madvise, CK_NONE),
	KENUM("host.os.hugetlbfs.page_size", virt.host_hugetlb_1g, hugetlb_size_name, 2),
	KENUM("host.os.thp.enabled", virt.host_thp.enabled, thp_enabled_name, THP_ENABLED_NR),
	KENUM("host.os.thp.defrag", virt.host_thp.defrag, thp_defrag_name, THP_DEFRAG_NR),
	K("host.os.khugepaged.pages_to_scan", KT_U32, virt.host_khugepaged.pages_to_scan, CK_NONZERO),
	KU("host.os.khugepaged.scan_sleep_millisecs", virt.host_khugepaged.scan_sleep_millisecs),
	KU("host.os.khugepaged.alloc_sleep_millisecs", virt.host_khugepaged.alloc_sleep_millisecs),
	KU("host.os.khugepaged.max_ptes_none", virt.host_khugepaged.max_ptes_none),
	K("host.os.khugepaged.defrag", KT_BOOL, virt.host_khugepaged.defrag, CK_NONE),
	K("host.os.fragmentation.unmovable", KT_DOUBLE, virt.host_fragmentation.unmovable, CK_SHARE),
	K("host.os.fragmentation.seed", KT_U64, virt.host_fragmentation.seed, CK_NONE),
};

#define NKEYS ARRAY_SIZE(keys)
#define PATH_MAX_LEN 128
#define STLB_PREFIX "tlb.stlb."
#define STLB_PREFIX_LEN (sizeof(STLB_PREFIX) - 1)

/* ----------------------------------------------------------------- defaults */

/* The machine's defaults: the seed article's Nehalem-class core, each number cited. */
static void hardware_defaults(struct sim_config *c)
{
	snprintf(c->cpu_name, sizeof(c->cpu_name), "%s",
		 "Nehalem-class (LWN 2.6.38 THP article cpuid listing)");
	/* i7-860, the Nehalem sample CPU of reference §6, runs at 2.8 GHz. */
	c->freq_mhz = 2800;
	/* Documented default: one cycle per instruction outside translation. */
	c->cpi = 1.0;
	/*
	 * No PCIDs: Nehalem has none (CPUID.01H:ECX.PCID[bit 17], SDM Vol. 2A;
	 * Westmere was Intel's first core with them), so Linux runs it with
	 * CR4.PCIDE = 0 and every context switch flushes the TLB
	 * (arch/x86/mm/tlb.c choose_new_asid() without X86_FEATURE_PCID).
	 */
	c->pcid = false;
	/*
	 * The core of DESIGN.md's additive time unless cpu.model is overlap (core.c).
	 * Nehalem's window: 128 micro-ops in flight, a 4-issue front end (AnandTech,
	 * "Nehalem: Intel's Next Architecture", anandtech.com/show/2481 p. 2; the
	 * Intel Optimization Reference Manual's Nehalem section: "The out-of-order
	 * engine supports up to 128 micro-ops in flight"). One page walker: Intel's
	 * cores walk one page at a time before Skylake's two (the Optimization
	 * Reference Manual's Skylake section: "the processor can do two page walks
	 * in parallel", earlier ones one). The store buffer and the miss-status
	 * holding registers are documented defaults: the figures for Nehalem could
	 * not be retrieved here (DESIGN.md, "The overlap core").
	 */
	c->core.model = CPU_ADDITIVE;
	c->core.rob = 128;
	c->core.width = 4;
	c->core.store_buffer = 32;
	c->core.walkers = 1;

	/* L1 ITLB 4K: cpuid 0xb0 "instruction TLB: 4K, 4-way, 128 entries" (seed
	 * article). Reference §6 notes CPUID elsewhere says 64/4 per thread ⚠. */
	c->l1i[PS_4K] = (struct array_cfg){ 128, 4 };
	/* L1 ITLB 2M: cpuid 0xb1 "2M/4M, 4-way, 4/8 entries": 8 for 2M pages. */
	c->l1i[PS_2M] = (struct array_cfg){ 8, 4 };
	/* No 1G pages in Nehalem's L1 ITLB (reference §6). */
	c->l1i[PS_1G] = (struct array_cfg){ 0, 0 };
	/* L1 DTLB 4K 64/4: reference §6, Nehalem row [IL]. */
	c->l1d[PS_4K] = (struct array_cfg){ 64, 4 };
	/* L1 DTLB 2M 32/4: cpuid 0x05 "data TLB: 4M pages, 4-way, 32 entries"
	 * (seed article); reference §6 Nehalem row. */
	c->l1d[PS_2M] = (struct array_cfg){ 32, 4 };
	/* L1 DTLB 1G: none on Nehalem (reference §6 "—"). */
	c->l1d[PS_1G] = (struct array_cfg){ 0, 0 };
	/* STLB 512/4 holding 4K translations only: reference §6 Nehalem row. */
	c->stlb[0] = (struct stlb_cfg){ 512, 4, 1u << PS_4K };
	c->nr_stlb = 1;
	/* True LRU: DESIGN.md "Replacement: lru (true LRU, the default)". */
	c->policy = REPL_LRU;
	/* L1 TLB hit 1 cycle, STLB hit 7 cycles: DESIGN.md; reference §6 gives
	 * "STLB hit about 7-9 cycles on Intel" (❓) and ChampSim uses 1 / 8. */
	c->lat_l1 = 1;
	c->lat_stlb = 7;

	/* 4-level paging: Nehalem predates LA57 (reference §6, 5-level paging). */
	c->levels = 4;
	/* PML5 cache 2/2: ChampSim's default (1 set x 2 ways; reference §6), used
	 * only with walk.levels 5. */
	c->pwc[PWC_PML5] = (struct array_cfg){ 2, 2 };
	/* PML4 2/2, PDPT 4/4, PDE 32/4: the sizes DESIGN.md uses (often quoted in
	 * papers, ❓ in reference §6); RevAnC measured a 4-entry PDPTE cache on Ivy
	 * Bridge and older (reference §6, vusec/revanc). Intel documents none. */
	c->pwc[PWC_PML4] = (struct array_cfg){ 2, 2 };
	c->pwc[PWC_PDPT] = (struct array_cfg){ 4, 4 };
	c->pwc[PWC_PDE] = (struct array_cfg){ 32, 4 };
	/* Documented default 0: no public figure; PSC probes overlap the STLB
	 * lookup, so they add no cycles of their own. */
	c->pwc_latency = 0;

	/* Nehalem i7 geometry: 32 KB 8-way L1D, 256 KB 8-way L2, 8 MB 16-way L3,
	 * 64-byte lines (openbooks.link/?p=11728 and UMBC CMSC 611 hw5 describe the
	 * same; xbitlabs Core i7 review: 8-way L2). Latencies: L1D 4 cycles and L2
	 * 10 cycles load-to-use (AnandTech, Nehalem review "Cache Hierarchy",
	 * bench.anandtech.com/Show/Index/2594 p. 9); L3 40 cycles (Intel architects
	 * via RWT: "30-40 cycles" best case, quoted on forums.tomshardware.com
	 * thread 261079; UMBC CMSC 611 hw5: 40). */
	c->cache[CL_L1D] = (struct cache_cfg){ 32 << 10, 8, 4, 10 };
	c->cache[CL_L2] = (struct cache_cfg){ 256 << 10, 8, 10, 16 };
	c->cache[CL_LLC] = (struct cache_cfg){ 8 << 20, 16, 40, 32 };
	c->line_size = 64;
}

/*
 * virt.* and host.os.*: bare metal by default. The host stage has the guest's
 * paging-structure cache geometry (AMD's page walk cache holds guest and
 * nested entries alike, APM Vol. 2 §15.25.5 "Nested Paging and the TLB"; the
 * split is this model's) and no nested TLB: no vendor publishes its size.
 */
static void virt_defaults(struct sim_config *c)
{
	struct virt_cfg *v = &c->virt;

	v->mode = VIRT_NONE;
	v->levels = 4;
	v->ntlb = (struct array_cfg){ 0, 0 };
	for (int i = 0; i < PWC_NR; i++)
		v->pwc[i] = c->pwc[i];
	/*
	 * 1360 cycles: one VMRUN to #VMEXIT round trip on an AMD EPYC host, as KVM's
	 * developers timed it with rdtsc around VMRUN (LKML, "KVM: SVM: use vmsave/
	 * vmload for saving/restoring additional host state", Dec 2020, samples of
	 * +1344 to +1376 cycles; lkml.iu.edu/hypermail/linux/kernel/2012.2/00527).
	 */
	v->exit = 1360;
	/* documented default 0: twice os.memory, so the host holds all of the guest's
	 * memory, its own tables and the shadow table with room to spare (host memory
	 * is a config value: no source fixes one ratio) */
	v->host_memory = 0;
	/* a host with THP as upstream ships it, and QEMU's guest RAM madvised
	 * (softmmu/physmem.c ram_block_add(): qemu_madvise(QEMU_MADV_HUGEPAGE)) */
	v->host_mode = MODE_THP;
	v->host_madvise = true;
	v->host_thp = c->thp;
	v->host_khugepaged = c->khugepaged;
	v->host_fragmentation = c->fragmentation;
}

void config_defaults(struct sim_config *c)
{
	memset(c, 0, sizeof(*c));
	hardware_defaults(c);
	/* DESIGN.md default: no sourced Nehalem DRAM latency in cycles. */
	c->dram_latency = 200;
	/* DESIGN.md: data references bypass the cache model unless enabled. */
	c->data_refs = false;

	/* Documented defaults for the kernel model: 4 GiB of RAM, base pages, no
	 * hugetlbfs pool; implicit VMAs on 2 MiB granules (README, "Implicit
	 * mappings"). */
	c->memory = 4ULL << 30;
	c->mode = MODE_BASE;
	/* the newest release modelled (mmusim.1, KERNEL VERSIONS) */
	c->kernel = KERNEL_DEFAULT;
	c->hugetlb_pages = 0;
	/* default_hugepagesz unset: the architecture's PMD size, 2 MiB on x86-64
	 * (mm/hugetlb.c hugetlb_init(): default_hstate is HPAGE_SIZE) */
	c->hugetlb_default_1g = 0;
	c->implicit.enabled = true;
	c->implicit.granule = 2ULL << 20;
	/* Linux: a read fault in private anonymous memory maps the shared zero page
	 * (mm/memory.c do_anonymous_page(); mm_forbids_zeropage() is s390 KVM only) */
	c->zero_page = true;
	/* mm/memory.c: fault_around_bytes = rounddown_pow_of_two(65536), as
	 * /sys/kernel/debug/fault_around_bytes reads; block/blk-core.c: the
	 * default read_ahead_kb is VM_READAHEAD_PAGES (128 KiB = 32 pages) */
	c->fault_around_bytes = 65536;
	c->read_ahead_kb = 128;
	/* 200 cycles per fault: ChampSim's minor-fault penalty (reference §6). */
	c->cost.fault = 200;
	/* Documented default: 4096 bytes at one 16-byte store per cycle (Nehalem's
	 * store width) = 256 cycles per 4 KiB page cleared. */
	c->cost.clear_page = 256;
	/* documented defaults: a copy reads and writes 4 KiB, twice a clear's stores */
	c->cost.copy_page = 512;
	/* documented default: one page examined (a struct page read) per scanner step */
	c->cost.compact_scan = 10;
	/* documented default: an INVLPG plus the shootdown bookkeeping, ~ a DRAM access */
	c->cost.flush = 200;
	/* 50 us at 2.8 GHz: a 4 KiB random read at queue depth 1 from a current
	 * NVMe SSD (about 80 MB/s = 50 us on a Samsung 9100 Pro, userbenchmark
	 * figures quoted on news.ycombinator.com item 46335659; 20-70 us per
	 * simplyblock.io's NVMe latency glossary). */
	c->cost.swap_in = 140000;
	/* Documented default: 4 GiB of swap, the size Red Hat recommends for 2-8 GiB
	 * of RAM ("equal to the amount of RAM"), i.e. for the default os.memory. */
	c->swap_size = 4ULL << 30;
	/* Linux 6.x defaults, reference §1a: enabled=always (upstream Kconfig default,
	 * b1f202060afe), defrag=madvise (444eb2a449ef, 4.6), use_zero_page=1 */
	c->thp.enabled = THP_ALWAYS;
	c->thp.defrag = DEFRAG_MADVISE;
	c->thp.use_zero_page = true;
	/* split_underused_thp = true (mm/huge_memory.c, 3952b6f6b671, 6.12) */
	c->thp.shrink_underused = true;
	/* khugepaged defaults, reference §1a ([KH] khugepaged_init) */
	c->khugepaged.pages_to_scan = 4096;
	c->khugepaged.scan_sleep_millisecs = 10000;
	c->khugepaged.alloc_sleep_millisecs = 60000;
	c->khugepaged.max_ptes_none = 511;
	c->khugepaged.max_ptes_swap = 64;
	c->khugepaged.max_ptes_shared = 256;
	c->khugepaged.defrag = true;
	/* no pinned pages at start; seed for their placement */
	c->fragmentation.unmovable = 0.0;
	c->fragmentation.seed = 1;
	/* /proc/sys/vm/extfrag_threshold default 500 (reference §5, [LIVE]) */
	c->extfrag_threshold = 500;

	c->seed = 1;
	c->sched_quantum = SCHED_QUANTUM_DEFAULT; /* config.h: EEVDF's 3 ms base slice */
	virt_defaults(c);
}

/* ------------------------------------------------------------ small helpers */

static void *field(struct sim_config *c, const struct key *k)
{
	return (char *)c + k->off;
}

static const void *cfield(const struct sim_config *c, const struct key *k)
{
	return (const char *)c + k->off;
}

/* The integer value of a numeric, boolean, enum or pages key. */
static uint64_t get_uint(const struct sim_config *c, const struct key *k)
{
	const void *p = cfield(c, k);
	unsigned u;
	uint64_t v;

	switch (k->type) {
	case KT_U32:
	case KT_SIZE32:
	case KT_ENUM:
	case KT_PAGES:
		memcpy(&u, p, sizeof(u));
		return u;
	case KT_U64:
	case KT_SIZE64:
		memcpy(&v, p, sizeof(v));
		return v;
	case KT_BOOL:
		return *(const bool *)p;
	default:
		BUG_ON(1);
	}
	return 0;
}

static void set_uint(struct sim_config *c, const struct key *k, uint64_t v)
{
	void *p = field(c, k);
	unsigned u = (unsigned)v;

	switch (k->type) {
	case KT_U32:
	case KT_SIZE32:
	case KT_ENUM:
	case KT_PAGES:
		memcpy(p, &u, sizeof(u));
		break;
	case KT_U64:
	case KT_SIZE64:
		memcpy(p, &v, sizeof(v));
		break;
	case KT_BOOL:
		*(bool *)p = v != 0;
		break;
	default:
		BUG_ON(1);
	}
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* "tlb.stlb.entries" -> "tlb.stlb.0.entries"; other paths are copied. */
static void normalize_path(const char *path, char *out, size_t n)
{
	const char *rest = path + STLB_PREFIX_LEN;

	if (!strncmp(path, STLB_PREFIX, STLB_PREFIX_LEN) && (*rest < '0' || *rest > '9'))
		snprintf(out, n, STLB_PREFIX "0.%s", rest);
	else
		snprintf(out, n, "%s", path);
}

/*
 * If @path is "tlb.stlb.N" or "tlb.stlb.N.rest", store N (saturated) and a
 * pointer to "" or ".rest" and return true.
 */
static bool stlb_path(const char *path, unsigned *n, const char **rest)
{
	const char *s = path + STLB_PREFIX_LEN;
	unsigned v = 0;

	if (strncmp(path, STLB_PREFIX, STLB_PREFIX_LEN) || *s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v < 1000 ? v * 10 + (unsigned)(*s - '0') : v;
	if (*s && *s != '.')
		return false;
	*n = v;
	*rest = s;
	return true;
}

/* The row of a (normalized) leaf path, or -1. */
static int key_index(const char *path)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].path, path))
			return (int)i;
	return -1;
}

/*
 * " (did you mean 'KEY'?)" for the key closest to the unknown @path, if one is
 * within a third of its length in edits (at least 2), else "" (@buf, @n bytes).
 */
static const char *did_you_mean(const char *path, char *buf, size_t n)
{
	size_t best = SIZE_MAX, at = 0, limit = strlen(path) / 3;

	for (size_t i = 0; i < NKEYS; i++) {
		size_t d = edit_distance(path, keys[i].path);

		if (d < best) {
			best = d;
			at = i;
		}
	}
	if (best > (limit < 2 ? 2 : limit))
		return "";
	snprintf(buf, n, " (did you mean '%s'?)", keys[at].path);
	return buf;
}

/* True if @path names an interior mapping ("tlb", "tlb.l1d", "os.cost"). */
static bool is_interior(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < NKEYS; i++)
		if (!strncmp(keys[i].path, path, n) && keys[i].path[n] == '.')
			return true;
	return false;
}

/* Drop STLB arrays with entries == 0, keeping the order of the rest. */
static void stlb_compact(struct sim_config *c)
{
	unsigned j = 0;

	for (unsigned i = 0; i < c->nr_stlb && i < STLB_MAX_ARRAYS; i++)
		if (c->stlb[i].entries)
			c->stlb[j++] = c->stlb[i];
	for (unsigned i = j; i < STLB_MAX_ARRAYS; i++)
		memset(&c->stlb[i], 0, sizeof(c->stlb[i]));
	c->nr_stlb = j;
}

static void format_pages(unsigned mask, const char *sep, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned ps = 0; ps < PS_NR; ps++) {
		if (!(mask & (1u << ps)))
			continue;
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
					len ? sep : "", ps_name[ps]);
	}
}

/* Shortest "%g" form that reads back to exactly @v, always with a '.' or 'e'. */
static void format_double(double v, char *buf, size_t n)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".eEn") && strlen(buf) + 3 <= n)
		strcat(buf, ".0");
}

/* @s (at most @max bytes) as a double-quoted YAML scalar that a YAML reader gives back. */
static void yaml_quote(const char *str, size_t max, char *buf, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = 0;

	len += (size_t)snprintf(buf, n, "\"");
	for (size_t i = 0; i < max && s[i]; i++) {
		char tmp[8];

		/*
		 * Escape what a YAML reader would not give back: C0
		 * and C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F,
		 * which libyaml's reader refuses raw; \xNN is the code
		 * point U+00NN), and the line breaks NEL, LS and PS,
		 * which a quoted scalar folds to a space (YAML spec
		 * chapter 5, line breaks and escape sequences). Found
		 * by fuzzing. The string is UTF-8 (libyaml checked it)
		 * and NUL-terminated, so the bytes looked at exist.
		 */
		if (s[i] == '"' || s[i] == '\\') {
			snprintf(tmp, sizeof(tmp), "\\%c", s[i]);
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(tmp, sizeof(tmp), "\\x%02X", s[i]);
		} else if (s[i] == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f) {
			snprintf(tmp, sizeof(tmp), "\\x%02X", s[i + 1]);
			i++;
		} else if (s[i] == 0xe2 && s[i + 1] == 0x80 &&
			   (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			snprintf(tmp, sizeof(tmp), "\\%c", s[i + 2] == 0xa8 ? 'L' : 'P');
			i += 2;
		} else {
			snprintf(tmp, sizeof(tmp), "%c", s[i]);
		}
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s", tmp);
	}
	snprintf(buf + len, len < n ? n - len : 0, "\"");
}

void config_quote(const char *s, char *buf, size_t n)
{
	yaml_quote(s, strlen(s), buf, n);
}

/* A value as text: @yaml selects YAML syntax (quoted strings, [4K, 2M]). */
static void format_value(const struct sim_config *c, const struct key *k, bool yaml,
			 char *buf, size_t n)
{
	const void *p = cfield(c, k);
	uint64_t v;

	switch (k->type) {
	case KT_STR:
		if (!yaml)
			snprintf(buf, n, "%.*s", (int)k->size, (const char *)p);
		else
			yaml_quote(p, k->size, buf, n);
		return;
	case KT_DOUBLE:
		format_double(*(const double *)p, buf, n);
		return;
	default:
		break;
	}
	v = get_uint(c, k);
	switch (k->type) {
	case KT_U32:
	case KT_U64:
		snprintf(buf, n, "%llu", (unsigned long long)v);
		break;
	case KT_SIZE32:
	case KT_SIZE64:
		format_size(v, buf, n);
		break;
	case KT_BOOL:
		snprintf(buf, n, "%s", v ? "true" : "false");
		break;
	case KT_ENUM:
		if (v < k->nr)
			snprintf(buf, n, "%s", k->names[v]);
		else
			snprintf(buf, n, "%llu", (unsigned long long)v);
		break;
	case KT_PAGES:
		if (yaml) {
			char tmp[32];

			format_pages((unsigned)v, ", ", tmp, sizeof(tmp));
			snprintf(buf, n, "[%s]", tmp);
		} else {
			format_pages((unsigned)v, "+", buf, n);
			if (!v)
				snprintf(buf, n, "none");
		}
		break;
	default:
		BUG_ON(1);
	}
}

/*
 * Check the single-value rule of @k on @c's value. Returns 0, or -1 with the
 * reason (without the path) in @why.
 */
static int check_value(const struct sim_config *c, const struct key *k, char *why,
		       size_t n)
{
	char sz[32];
	uint64_t v;

	if (k->type == KT_DOUBLE) {
		double d = *(const double *)cfield(c, k);

		if (k->check == CK_CPI && !isfinite(d))
			return snprintf(why, n, "not a finite number"), -1;
		if (k->check == CK_CPI && !(d >= 0 && d <= CPI_MAX))
			return snprintf(why, n, "%g is not a number of cycles per instruction from 0 to %g",
					d, CPI_MAX), -1;
		if (k->check == CK_SHARE && !(d >= 0 && d <= 1))
			return snprintf(why, n, "%g is not a share between 0 and 1", d), -1;
		if (k->check == CK_BW && !(isfinite(d) && d >= 0 && d <= BW_MAX))
			return snprintf(why, n, "%g is not a number of bytes a cycle from 0 to %g", d,
					BW_MAX), -1;
		return 0;
	}
	if (k->type == KT_STR) {
		if (!memchr(cfield(c, k), '\0', k->size))
			return snprintf(why, n, "not NUL-terminated"), -1;
		return 0;
	}
	v = get_uint(c, k);
	if (k->type == KT_ENUM && v >= k->nr)
		return snprintf(why, n, "invalid value %llu", (unsigned long long)v), -1;
	if (k->type == KT_PAGES && (v & ~((1ULL << PS_NR) - 1)))
		return snprintf(why, n, "invalid page mask %#llx", (unsigned long long)v), -1;
	format_size(v, sz, sizeof(sz));
	switch (k->check) {
	case CK_NONE:
	case CK_CPI:
	case CK_SHARE:
	case CK_BW:
		return 0;
	case CK_NONZERO:
		if (!v)
			return snprintf(why, n, "must be greater than 0"), -1;
		return 0;
	case CK_LEVELS:
		if (v != 4 && v != 5)
			return snprintf(why, n, "%llu is not 4 or 5",
					(unsigned long long)v), -1;
		return 0;
	case CK_LINE:
		if (!is_pow2(v) || v < 8 || v > 4096)
			return snprintf(why, n, "%s is not a power of two in 8..4096", sz), -1;
		return 0;
	case CK_MEMORY0:
		if (!v)
			return 0;
		/* fall through */
	case CK_MEMORY:
		if (v % (4ULL << 20))
			return snprintf(why, n,
					"%s is not a multiple of 4M (one order-10 buddy block)",
					sz), -1;
		if (v < (64ULL << 20))
			return snprintf(why, n, "%s is below the minimum 64M", sz), -1;
		if (v > (1ULL << 40))
			return snprintf(why, n, "%s is above the maximum 1T", sz), -1;
		return 0;
	case CK_FAULT_AROUND:
		if (!is_pow2(v) || v < PAGE_SIZE || v > PMD_SIZE)
			return snprintf(why, n, "%s is not a power of two in 4K..2M", sz), -1;
		return 0;
	case CK_GRANULE:
		if (!is_pow2(v) || v < PAGE_SIZE || v > PUD_SIZE)
			return snprintf(why, n, "%s is not a power of two in 4K..1G", sz), -1;
		return 0;
	case CK_FOLIO: /* orders 0..8: a PMD-order page-cache folio is a file THP (filemap.c);
			* 0: unset, the default 4K */
		if (v && (!is_pow2(v) || v < PAGE_SIZE || v > PMD_SIZE / 2))
			return snprintf(why, n, "%s is not a power of two in 4K..1M", sz), -1;
		return 0;
	}
	return 0;
}

/* ----------------------------------------------------------------- validation */

/* Where the keys of a file load came from: line/col 0 = not from this input. */
struct marks {
	unsigned long line[NKEYS];
	unsigned long col[NKEYS];
};

struct vctx {
	const struct sim_config *c;
	const char *origin;
	const struct marks *marks; /* NULL: no positions (config_validate) */
	struct err *e;
};

/*
 * Report "@p1: msg" at the position of @p1 if the input set it, else of @p2
 * (if not NULL), else without a position.
 */
static int vfail(const struct vctx *v, const char *p1, const char *p2, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));

static int vfail(const struct vctx *v, const char *p1, const char *p2, const char *fmt, ...)
{
	unsigned long line = 0, col = 0;
	char msg[384];
	va_list ap;

	if (v->marks) {
		const char *try[2] = { p1, p2 };

		for (int t = 0; t < 2 && !line; t++) {
			int i = try[t] ? key_index(try[t]) : -1;

			if (i >= 0 && v->marks->line[i]) {
				line = v->marks->line[i];
				col = v->marks->col[i];
			}
		}
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(v->e, v->origin, line, col, "%s: %s", p1, msg);
}

/* One set-associative array: 1 <= ways <= entries, ways divides entries. */
static int check_array(const struct vctx *v, const char *prefix, unsigned entries,
		       unsigned ways)
{
	char pe[PATH_MAX_LEN], pw[PATH_MAX_LEN];

	if (!entries)
		return 0;
	snprintf(pe, sizeof(pe), "%s.entries", prefix);
	snprintf(pw, sizeof(pw), "%s.ways", prefix);
	if (!ways)
		return vfail(v, pw, pe, "0 ways for %u entries (need 1 <= ways <= entries)",
			     entries);
	if (ways > entries)
		return vfail(v, pw, pe, "%u exceeds entries %u", ways, entries);
	if (entries % ways)
		return vfail(v, pw, pe, "%u does not divide entries %u", ways, entries);
	if (ways > 65535) /* tlb.c keeps a way's index in 16 bits */
		return vfail(v, pw, pe, "%u ways: at most 65535", ways);
	return 0;
}

/* roi.*: each phase in references or in instructions, not both. */
static int check_roi(const struct vctx *v)
{
	static const char *const phase[3] = { "skip", "warmup", "sim" };
	const struct roi_cfg *r = &v->c->roi;
	const uint64_t refs[3] = { r->skip_refs, r->warmup_refs, r->sim_refs };
	const uint64_t insns[3] = { r->skip_insns, r->warmup_insns, r->sim_insns };

	for (int i = 0; i < 3; i++)
		if (refs[i] && insns[i]) {
			char pr[PATH_MAX_LEN], pi[PATH_MAX_LEN];

			snprintf(pr, sizeof(pr), "roi.%s_refs", phase[i]);
			snprintf(pi, sizeof(pi), "roi.%s_insns", phase[i]);
			return vfail(v, pi, pr, "give %s or %s, not both", pr, pi);
		}
	return 0;
}

static int validate(const struct sim_config *c, const char *origin,
		    const struct marks *marks, struct err *e)
{
	const struct vctx v = { c, origin, marks, e };
	char p[PATH_MAX_LEN], why[256];
	unsigned nr = c->nr_stlb;

	if (nr > STLB_MAX_ARRAYS)
		return vfail(&v, "tlb.stlb", NULL, "%u arrays, at most %d", nr,
			     STLB_MAX_ARRAYS);
	for (size_t i = 0; i < NKEYS; i++) {
		unsigned n;
		const char *rest;

		if (stlb_path(keys[i].path, &n, &rest) && n >= nr)
			continue;
		if (check_value(c, &keys[i], why, sizeof(why)))
			return vfail(&v, keys[i].path, NULL, "%s", why);
	}
	for (unsigned ps = 0; ps < PS_NR; ps++) {
		snprintf(p, sizeof(p), "tlb.l1i.%s", ps_name[ps]);
		if (check_array(&v, p, c->l1i[ps].entries, c->l1i[ps].ways))
			return -1;
		snprintf(p, sizeof(p), "tlb.l1d.%s", ps_name[ps]);
		if (check_array(&v, p, c->l1d[ps].entries, c->l1d[ps].ways))
			return -1;
	}
	for (unsigned i = 0; i < nr; i++) {
		const struct stlb_cfg *s = &c->stlb[i];

		snprintf(p, sizeof(p), STLB_PREFIX "%u", i);
		if (check_array(&v, p, s->entries, s->ways))
			return -1;
		if (s->entries && !s->pages) {
			char pp[PATH_MAX_LEN], pe[PATH_MAX_LEN];

			snprintf(pp, sizeof(pp), STLB_PREFIX "%u.pages", i);
			snprintf(pe, sizeof(pe), STLB_PREFIX "%u.entries", i);
			return vfail(&v, pp, pe, "empty: name at least one of 4K, 2M, 1G");
		}
	}
	for (unsigned l = 0; l < PWC_NR; l++) {
		snprintf(p, sizeof(p), "walk.pwc.%s", pwc_level_name[l]);
		if (check_array(&v, p, c->pwc[l].entries, c->pwc[l].ways))
			return -1;
	}
	if (c->hugetlb_1g_pages &&
	    ((uint64_t)c->hugetlb_1g_pages << PUD_SHIFT) + (64ULL << 20) > (c->memory & ~(PUD_SIZE - 1)))
		return vfail(&v, "os.hugetlbfs.pages_1g", "os.memory",
			     "%u 1 GiB pages leave less than 64 MiB of os.memory for everything else",
			     c->hugetlb_1g_pages);
	for (unsigned l = 0; l < CL_NR; l++) {
		const struct cache_cfg *cc = &c->cache[l];
		char ps[PATH_MAX_LEN], pw[PATH_MAX_LEN], sz[32];
		uint64_t unit;

		if (!cc->size)
			continue;
		snprintf(ps, sizeof(ps), "cache.%s.size", cache_level_name[l]);
		snprintf(pw, sizeof(pw), "cache.%s.ways", cache_level_name[l]);
		format_size(cc->size, sz, sizeof(sz));
		if (!cc->ways)
			return vfail(&v, pw, ps, "0 ways for a %s cache", sz);
		unit = (uint64_t)cc->ways * c->line_size;
		if (cc->size % unit)
			return vfail(&v, ps, pw,
				     "%s is not a multiple of ways * line = %u * %u",
				     sz, cc->ways, c->line_size);
	}
	for (unsigned i = 0; i < PF_NR; i++) {
		const struct prefetch_cfg *pf = &c->prefetch[i];
		char pd[PATH_MAX_LEN], pn[PATH_MAX_LEN];
		unsigned lvl = i == PF_L1D ? CL_L1D : CL_L2;

		if (!pf->degree)
			continue;
		snprintf(pd, sizeof(pd), "cache.prefetch.%s.degree", cache_level_name[lvl]);
		snprintf(pn, sizeof(pn), "cache.prefetch.%s.%s", cache_level_name[lvl],
			 !pf->distance ? "distance" : "streams");
		if (!pf->distance || !pf->streams)
			return vfail(&v, pn, pd, "must be greater than 0 for a prefetcher of degree %u",
				     pf->degree);
		if (pf->degree > PF_DEGREE_MAX)
			return vfail(&v, pd, NULL, "%u is above the maximum %u lines an access",
				     pf->degree, PF_DEGREE_MAX);
		snprintf(pn, sizeof(pn), "cache.%s.size", cache_level_name[lvl]);
		if (!c->cache[lvl].size)
			return vfail(&v, pd, pn, "a prefetcher into a cache level that is absent");
	}
	if (c->core.model == CPU_OVERLAP && c->cpi * c->core.width < 1.0)
		return vfail(&v, "cpu.cpi", "cpu.width",
			     "%g cycles per instruction is faster than %u instructions retired a cycle "
			     "(cpu.width) allow under cpu.model overlap", c->cpi, c->core.width);
	if (c->coalesce == COAL_NONE && (c->coal_l1i || c->coal_l1d || c->coal_stlb))
		return vfail(&v, c->coal_l1i ? "tlb.coalesce.l1i" : c->coal_l1d ? "tlb.coalesce.l1d"
					    : "tlb.coalesce.stlb", "tlb.coalesce.kind",
			     "an array coalesces but tlb.coalesce.kind is none (amd or contpte)");
	if (c->coalesce != COAL_NONE && !c->coal_l1i && !c->coal_l1d && !c->coal_stlb)
		return vfail(&v, "tlb.coalesce.kind", NULL,
			     "%s names no array: set tlb.coalesce.l1i, l1d or stlb",
			     tlb_coalesce_name[c->coalesce]);
	if (c->virt.mode != VIRT_NONE) {
		uint64_t hm = c->virt.host_memory ? c->virt.host_memory : 2 * c->memory;
		char gs[32], hs[32];

		format_size(c->memory, gs, sizeof(gs));
		format_size(hm, hs, sizeof(hs));
		if (hm < c->memory + (64ULL << 20))
			return vfail(&v, "host.os.memory", "os.memory",
				     "%s cannot hold the guest's %s of memory and 64M for the host", hs, gs);
		if (hm > (1ULL << 40))
			return vfail(&v, "host.os.memory", "os.memory", "%s is above the maximum 1T", hs);
		if (check_array(&v, "virt.ntlb", c->virt.ntlb.entries, c->virt.ntlb.ways))
			return -1;
		for (unsigned l = 0; l < PWC_NR; l++) {
			snprintf(p, sizeof(p), "virt.pwc.%s", pwc_level_name[l]);
			if (check_array(&v, p, c->virt.pwc[l].entries, c->virt.pwc[l].ways))
				return -1;
		}
		if (c->virt.host_mode == MODE_HUGETLBFS && c->virt.host_hugetlb_1g &&
		    ((c->memory & (PUD_SIZE - 1)) || c->memory + (64ULL << 20) > (hm & ~(PUD_SIZE - 1))))
			return vfail(&v, "host.os.hugetlbfs.page_size", "os.memory",
				     "1G host pages need os.memory (%s) a multiple of 1G and host.os.memory (%s) "
				     "1G more than it",
				     gs, hs);
	}
	for (unsigned o = MTHP_ORDER_MIN; o <= HPAGE_PMD_ORDER && !kernel_mthp(c->kernel); o++)
		if (c->thp.size_enabled[o]) {
			snprintf(p, sizeof(p), "os.thp.sizes.%s.enabled", mthp_size_name[o]);
			return vfail(&v, p, "os.kernel",
				     "needs os.kernel 6.8 or later (hugepages-<size>kB/ came with "
				     "multi-size THP, 19eaf44954df)");
		}
	if (!c->thp.shrink_underused && !kernel_shrink_underused(c->kernel))
		return vfail(&v, "os.thp.shrink_underused", "os.kernel",
			     "needs os.kernel 6.12 or later (thp/shrink_underused came with "
			     "the underused THP shrinker, dafff3f4c850)");
	if (c->profile == PROFILE_OSLESS) {
		if (c->zero_page != OSLESS_ZERO_PAGE)
			return vfail(&v, "os.zero_page", "os.profile",
				     "true contradicts os.profile osless (no zero page)");
		if (c->fault_around_bytes != OSLESS_FAULT_AROUND)
			return vfail(&v, "os.fault_around_bytes", "os.profile",
				     "contradicts os.profile osless (4K: no fault-around)");
		if (c->implicit.granule != OSLESS_GRANULE)
			return vfail(&v, "os.implicit.granule", "os.profile",
				     "contradicts os.profile osless (4K implicit regions)");
	}
	return check_roi(&v);
}

int config_validate(const struct sim_config *c, const char *origin, struct err *e)
{
	return validate(c, origin, NULL, e);
}

/* ------------------------------------------------------------------- loader */

struct loader {
	yaml_parser_t parser;
	yaml_event_t ev;
	bool have_ev;
	struct sim_config c;   /* working copy */
	const char *name;      /* file name, or "--set ASSIGNMENT" */
	bool is_set;           /* errors carry no position */
	const char *file;      /* a file's load: its path (processes' traces are relative to it) */
	unsigned appended;     /* bit i: STLB array i was created by this input */
	struct marks marks;
	struct err *e;
};

static int lerr(struct loader *ld, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lerr(struct loader *ld, const yaml_mark_t *m, const char *fmt, ...)
{
	char msg[448];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ld->is_set || !m)
		return err_set(ld->e, ld->name, 0, 0, "%s", msg);
	return err_set(ld->e, ld->name, (unsigned long)m->line + 1,
		       (unsigned long)m->column + 1, "%s", msg);
}

/* Replace the current event with the next one; refuses aliases. */
static int ld_next(struct loader *ld)
{
	yaml_parser_t *p = &ld->parser;

	if (ld->have_ev)
		yaml_event_delete(&ld->ev);
	ld->have_ev = false;
	if (!yaml_parser_parse(p, &ld->ev)) {
		const char *what = p->problem ? p->problem : "unknown error";

		switch (p->error) {
		case YAML_MEMORY_ERROR:
			return err_host(ld->e, ld->name, 0, 0, "out of memory");
		case YAML_READER_ERROR:
			return lerr(ld, NULL, "invalid input at byte %zu: %s",
				    p->problem_offset, what);
		default:
			if (p->context)
				return lerr(ld, &p->problem_mark, "YAML syntax error: %s %s",
					    what, p->context);
			return lerr(ld, &p->problem_mark, "YAML syntax error: %s", what);
		}
	}
	ld->have_ev = true;
	if (ld->ev.type == YAML_ALIAS_EVENT)
		return lerr(ld, &ld->ev.start_mark,
			    "YAML aliases (*%s) are not supported",
			    (const char *)ld->ev.data.alias.anchor);
	return 0;
}

static bool ev_is_null(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;

	return ev->type == YAML_SCALAR_EVENT &&
	       ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		!strcmp(s, "NULL"));
}

static const char *ev_kind(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SEQUENCE_START_EVENT:
		return "a sequence";
	default:
		return "something else";
	}
}

static const char *type_desc(const struct key *k)
{
	switch (k->type) {
	case KT_STR:
		return "a string";
	case KT_U32:
	case KT_U64:
		return "an integer";
	case KT_SIZE32:
	case KT_SIZE64:
		return "a size (bytes, or with a K, M or G suffix)";
	case KT_DOUBLE:
		return "a number";
	case KT_BOOL:
		return "true or false";
	case KT_ENUM:
		return "a name";
	case KT_PAGES:
		return "a list of page sizes (4K, 2M, 1G)";
	}
	return "a value";
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					   "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
					  "off", "Off", "OFF" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(s, yes[i]))
			return *out = true, 0;
		if (!strcmp(s, no[i]))
			return *out = false, 0;
	}
	return -1;
}

/* One page size name ("4K", "2m", ...) -> its bit, or 0. */
static unsigned page_bit(const char *s, size_t len)
{
	for (unsigned ps = 0; ps < PS_NR; ps++)
		if (len == 2 && !strncasecmp(s, ps_name[ps], 2))
			return 1u << ps;
	return 0;
}

/* "4K", "4K+2M", "4K,2M" -> mask; -1 on a bad name. */
static int parse_pages_scalar(const char *s, unsigned *mask)
{
	*mask = 0;
	while (*s) {
		size_t len = strcspn(s, "+, ");
		unsigned bit = page_bit(s, len);

		if (!bit)
			return -1;
		*mask |= bit;
		s += len;
		s += strspn(s, "+, ");
	}
	return 0;
}

static int apply_pages(struct loader *ld, const struct key *k, const char *path,
		       const yaml_mark_t *km, unsigned *mask)
{
	if (ld->ev.type == YAML_SCALAR_EVENT) {
		const char *s = (const char *)ld->ev.data.scalar.value;

		if (parse_pages_scalar(s, mask))
			return lerr(ld, km, "%s: expected %s, got '%s'", path, type_desc(k), s);
		return 0;
	}
	if (ld->ev.type != YAML_SEQUENCE_START_EVENT)
		return lerr(ld, km, "%s: expected %s, got %s", path, type_desc(k),
			    ev_kind(&ld->ev));
	*mask = 0;
	for (;;) {
		const char *s;
		unsigned bit;

		if (ld_next(ld))
			return -1;
		if (ld->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if (ld->ev.type != YAML_SCALAR_EVENT)
			return lerr(ld, &ld->ev.start_mark, "%s: expected a page size, got %s",
				    path, ev_kind(&ld->ev));
		s = (const char *)ld->ev.data.scalar.value;
		bit = page_bit(s, strlen(s));
		if (!bit)
			return lerr(ld, &ld->ev.start_mark,
				    "%s: unknown page size '%s' (expected 4K, 2M or 1G)",
				    path, s);
		*mask |= bit;
	}
}

/* Parse the current node as the value of leaf @k and store it. */
static int apply_leaf(struct loader *ld, int ki, const char *path, const yaml_mark_t *km)
{
	const struct key *k = &keys[ki];
	struct sim_config *c = &ld->c;
	const char *s;
	char why[256];
	uint64_t v = 0;

	if (k->type == KT_PAGES) {
		unsigned mask = 0;

		if (apply_pages(ld, k, path, km, &mask))
			return -1;
		v = mask;
		goto store;
	}
	if (ld->ev.type != YAML_SCALAR_EVENT)
		return lerr(ld, km, "%s: expected %s, got %s", path, type_desc(k),
			    ev_kind(&ld->ev));
	s = (const char *)ld->ev.data.scalar.value;
	if (strlen(s) != ld->ev.data.scalar.length)
		return lerr(ld, km, "%s: value contains a NUL byte", path);

	switch (k->type) {
	case KT_STR:
		if (strlen(s) >= k->size)
			return lerr(ld, km, "%s: longer than %zu bytes", path, k->size - 1);
		memset(field(c, k), 0, k->size);
		memcpy(field(c, k), s, strlen(s));
		goto check;
	case KT_DOUBLE: {
		double d;

		if (parse_double(s, &d))
			return lerr(ld, km, "%s: expected %s, got '%s'", path, type_desc(k), s);
		*(double *)field(c, k) = d;
		goto check;
	}
	case KT_BOOL: {
		bool b;

		if (parse_bool(s, &b))
			return lerr(ld, km, "%s: expected %s, got '%s'", path, type_desc(k), s);
		v = b;
		break;
	}
	case KT_ENUM: {
		char list[128];
		size_t len = 0;

		for (v = 0; v < k->nr; v++)
			if (!strcmp(s, k->names[v]))
				break;
		if (v < k->nr)
			break;
		list[0] = '\0';
		for (unsigned i = 0; i < k->nr; i++)
			len += (size_t)snprintf(list + len, len < sizeof(list) ?
						sizeof(list) - len : 0, "%s%s",
						i ? (i + 1 == k->nr ? " or " : ", ") : "",
						k->names[i]);
		return lerr(ld, km, "%s: unknown value '%s' (expected %s)", path, s, list);
	}
	case KT_U32:
	case KT_U64:
		if (*s == '-')
			return lerr(ld, km, "%s: expected a non-negative integer, got '%s'",
				    path, s);
		if (parse_u64(s, &v))
			return lerr(ld, km, "%s: expected %s, got '%s'", path, type_desc(k), s);
		break;
	case KT_SIZE32:
	case KT_SIZE64:
		if (parse_size(s, &v))
			return lerr(ld, km, "%s: expected %s, got '%s'", path, type_desc(k), s);
		break;
	case KT_PAGES:
		BUG_ON(1);
	}
	if ((k->type == KT_U32 || k->type == KT_SIZE32) && v > 0xffffffffULL)
		return lerr(ld, km, "%s: %s is out of range (at most 4294967295)", path, s);
store:
	set_uint(c, k, v);
	if (!strcmp(k->path, "os.profile") && v == PROFILE_OSLESS) {
		c->zero_page = OSLESS_ZERO_PAGE;
		c->fault_around_bytes = OSLESS_FAULT_AROUND;
		c->implicit.granule = OSLESS_GRANULE;
	}
check:
	if (check_value(c, k, why, sizeof(why)))
		return lerr(ld, km, "%s: %s", path, why);
	ld->marks.line[ki] = km ? (unsigned long)km->line + 1 : 0;
	ld->marks.col[ki] = km ? (unsigned long)km->column + 1 : 0;
	return 0;
}

/*
 * os.thp_anon: Linux's thp_anon= boot parameter (mm/huge_memory.c setup_thp_anon(),
 * Linux 6.12; Documentation/admin-guide/mm/transhuge.rst "Boot parameter(s)"), every
 * anonymous size's hugepages-<size>kB/enabled at once: "RANGES:POLICY[;RANGES:POLICY]...",
 * RANGES a comma-separated list of SIZE or SIZE-SIZE (16K .. 2M, powers of two),
 * POLICY always, inherit, madvise or never ("16K-64K:always;2M:inherit"). As at boot
 * (anon_orders_configured), a size the string does not name is never, 2M included.
 * Not a key of its own: it sets the os.thp.sizes.<size>.enabled keys (config show
 * writes those), so a later per-size key overrides it. Unlike the kernel, which
 * ignores a parameter it cannot parse, a bad string is an error.
 */
#define THP_ANON_PATH "os.thp_anon"

/* The order of a size in @s[0..@len), 2 .. 9, or -1. */
static int thp_anon_order(const char *s, size_t len)
{
	char buf[32];
	uint64_t v;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (parse_size(buf, &v) || !is_pow2(v))
		return -1;
	for (unsigned o = MTHP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		if (v == 4096ULL << o)
			return (int)o;
	return -1;
}

static int apply_thp_anon(struct loader *ld, const char *path, const yaml_mark_t *km)
{
	enum mthp_enabled set[MTHP_ORDERS];
	const char *s, *tok;
	char kp[PATH_MAX_LEN];

	if (ld->ev.type != YAML_SCALAR_EVENT)
		return lerr(ld, km, "%s: expected a thp_anon= string (16K-64K:always;2M:inherit), got %s",
			    path, ev_kind(&ld->ev));
	s = (const char *)ld->ev.data.scalar.value;
	if (strlen(s) != ld->ev.data.scalar.length)
		return lerr(ld, km, "%s: value contains a NUL byte", path);
	for (unsigned o = 0; o < MTHP_ORDERS; o++)
		set[o] = MTHP_NEVER;
	for (tok = s;; tok++) {
		size_t tlen = strcspn(tok, ";");
		const char *colon = memchr(tok, ':', tlen), *r, *end;
		size_t plen;
		int p;

		if (!colon)
			return lerr(ld, km, "%s: '%.*s' has no ':POLICY' (expected SIZE[-SIZE][,...]:POLICY)",
				    path, (int)tlen, tok);
		plen = tlen - (size_t)(colon + 1 - tok);
		for (p = 0; p < MTHP_ENABLED_NR; p++)
			if (strlen(mthp_words[p]) == plen && !strncmp(colon + 1, mthp_words[p], plen))
				break;
		if (p == MTHP_ENABLED_NR)
			return lerr(ld, km, "%s: unknown policy '%.*s' (expected always, inherit, madvise "
				    "or never)", path, (int)plen, colon + 1);
		for (r = tok;; r = end + 1) {
			size_t rlen = strcspn(r, ",:");
			const char *dash = memchr(r, '-', rlen);
			int lo, hi;

			end = r + rlen; /* a ',' or the ':' */
			lo = thp_anon_order(r, dash ? (size_t)(dash - r) : rlen);
			hi = dash ? thp_anon_order(dash + 1, (size_t)(end - dash - 1)) : lo;
			if (lo < 0 || hi < 0)
				return lerr(ld, km, "%s: bad size in '%.*s' (anonymous THP sizes are 16K, "
					    "32K, 64K, 128K, 256K, 512K, 1M and 2M)", path, (int)rlen, r);
			if (lo > hi)
				return lerr(ld, km, "%s: range '%.*s' runs downwards", path, (int)rlen, r);
			for (int o = lo; o <= hi; o++)
				set[o] = (enum mthp_enabled)p;
			if (end == colon)
				break;
		}
		tok += tlen;
		if (!*tok)
			break;
	}
	for (unsigned o = MTHP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		int ki;

		snprintf(kp, sizeof(kp), "os.thp.sizes.%s.enabled", mthp_size_name[o]);
		ki = key_index(kp);
		BUG_ON(ki < 0);
		if (o < HPAGE_PMD_ORDER) {
			ld->c.thp.size_enabled[o] = set[o];
		} else {
			unsigned v = 0;

			while (mthp_pmd_value[v] != set[o])
				v++;
			ld->c.thp.size_enabled[o] = v;
		}
		ld->marks.line[ki] = km ? (unsigned long)km->line + 1 : 0;
		ld->marks.col[ki] = km ? (unsigned long)km->column + 1 : 0;
	}
	return 0;
}

/*
 * "tlb.coalesce: KIND", a scalar for the mapping: tlb.coalesce.kind alone, the
 * arrays as they were; "none" also turns off every array's coalescing, so that
 * one assignment (a sweep's axis: [amd, none]) takes a machine file's
 * coalescing away. The mapping form keeps its meaning.
 */
static int apply_coalesce_scalar(struct loader *ld, const char *path, const yaml_mark_t *km)
{
	const char *s = (const char *)ld->ev.data.scalar.value;
	int ki = key_index("tlb.coalesce.kind");
	unsigned v;

	BUG_ON(ki < 0);
	if (strlen(s) != ld->ev.data.scalar.length)
		return lerr(ld, km, "%s: value contains a NUL byte", path);
	for (v = 0; v < COAL_NR; v++)
		if (!strcmp(s, tlb_coalesce_name[v]))
			break;
	if (v == COAL_NR)
		return lerr(ld, km, "%s: unknown value '%s' (expected none, amd or contpte, or a "
			    "mapping of kind, l1i, l1d and stlb)", path, s);
	ld->c.coalesce = (enum tlb_coalesce)v;
	if (v == COAL_NONE)
		ld->c.coal_l1i = ld->c.coal_l1d = ld->c.coal_stlb = false;
	for (int i = ki; i < ki + 4; i++) {
		ld->marks.line[i] = km ? (unsigned long)km->line + 1 : 0;
		ld->marks.col[i] = km ? (unsigned long)km->column + 1 : 0;
	}
	return 0;
}

/* Make STLB array @n exist: it does, or @n == nr_stlb and it is appended. */
static int stlb_ensure(struct loader *ld, unsigned n, const char *path,
		       const yaml_mark_t *km)
{
	struct sim_config *c = &ld->c;

	if (n < c->nr_stlb)
		return 0;
	if (n >= STLB_MAX_ARRAYS)
		return lerr(ld, km, "%s: at most %d STLB arrays (tlb.stlb.0 .. tlb.stlb.%d)",
			    path, STLB_MAX_ARRAYS, STLB_MAX_ARRAYS - 1);
	if (n > c->nr_stlb)
		return lerr(ld, km, "%s: there are %u STLB arrays; add them in order "
			    "(next is tlb.stlb.%u)", path, c->nr_stlb, c->nr_stlb);
	c->stlb[n] = (struct stlb_cfg){ 0, 0, 1u << PS_4K };
	c->nr_stlb = n + 1;
	ld->appended |= 1u << n;
	return 0;
}

/* ---------------------------------------------------------------- processes */

static const char *const proc_keys = "trace or workload, start, repeat and thp_disable";

/*
 * A process's trace path into @p: @s relative to the config file's directory
 * (a file's load), else as given; it must name a file that exists, not
 * standard input (read once, it cannot be one process among several).
 */
static int proc_trace(struct loader *ld, unsigned i, const char *s, const yaml_mark_t *m,
		      struct proc_cfg *p)
{
	const char *slash = ld->file ? strrchr(ld->file, '/') : NULL;
	struct stat st;
	int len;

	if (!*s)
		return lerr(ld, m, "processes[%u].trace: empty", i);
	if (!strcmp(s, "-"))
		return lerr(ld, m, "processes[%u].trace: standard input cannot be one of several "
			    "processes (it can be read only once): give a file", i);
	if (s[0] != '/' && slash)
		len = snprintf(p->trace, sizeof(p->trace), "%.*s/%s", (int)(slash - ld->file),
			       ld->file, s);
	else
		len = snprintf(p->trace, sizeof(p->trace), "%s", s);
	if (len >= (int)sizeof(p->trace))
		return lerr(ld, m, "processes[%u].trace: longer than %zu bytes", i,
			    sizeof(p->trace) - 1);
	if (stat(p->trace, &st))
		return lerr(ld, m, "processes[%u].trace: %s: %s", i, p->trace, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return lerr(ld, m, "processes[%u].trace: %s: %s", i, p->trace, strerror(EISDIR));
	return 0;
}

/*
 * A process's built-in workload (-w's spec, workload.c) into @p: checked now as
 * workload_check() does, its message at the value's line and column.
 */
static int proc_workload(struct loader *ld, unsigned i, const char *s, const yaml_mark_t *m,
			 struct proc_cfg *p)
{
	struct err we = { 0 };

	if (!*s)
		return lerr(ld, m, "processes[%u].workload: empty", i);
	if (strlen(s) >= sizeof(p->trace))
		return lerr(ld, m, "processes[%u].workload: longer than %zu bytes", i,
			    sizeof(p->trace) - 1);
	if (workload_check(s, &we))
		return lerr(ld, m, "processes[%u].workload: %s", i, we.msg);
	snprintf(p->trace, sizeof(p->trace), "%s", s);
	p->workload = true;
	return 0;
}

/*
 * One item of processes: a trace path, or {trace | workload, start, repeat,
 * thp_disable} with exactly one of trace and workload.
 */
static int proc_item(struct loader *ld, unsigned i, struct proc_cfg *p)
{
	yaml_mark_t m = ld->ev.start_mark;
	bool seen[5] = { false };
	static const char *const names[5] = { "trace", "start", "repeat", "thp_disable",
					      "workload" };

	*p = (struct proc_cfg){ .repeat = 1 };
	if (ld->ev.type == YAML_SCALAR_EVENT)
		return proc_trace(ld, i, (const char *)ld->ev.data.scalar.value, &m, p);
	if (ld->ev.type != YAML_MAPPING_START_EVENT)
		return lerr(ld, &m, "processes[%u]: expected a trace path or a mapping of %s, got %s",
			    i, proc_keys, ev_kind(&ld->ev));
	for (;;) {
		yaml_mark_t km, vm;
		const char *key, *v;
		unsigned k;
		uint64_t u;
		bool b;

		if (ld_next(ld))
			return -1;
		if (ld->ev.type == YAML_MAPPING_END_EVENT)
			break;
		km = ld->ev.start_mark;
		key = ld->ev.type == YAML_SCALAR_EVENT ? (const char *)ld->ev.data.scalar.value : "";
		for (k = 0; k < 5 && strcmp(key, names[k]); k++)
			;
		if (k == 5)
			return lerr(ld, &km, "processes[%u]: unknown key '%s' (expected %s)", i, key,
				    proc_keys);
		if (seen[k])
			return lerr(ld, &km, "processes[%u]: duplicate key '%s'", i, key);
		seen[k] = true;
		if (ld_next(ld))
			return -1;
		vm = ld->ev.start_mark;
		if (ld->ev.type != YAML_SCALAR_EVENT)
			return lerr(ld, &vm, "processes[%u].%s: expected a value, got %s", i, key,
				    ev_kind(&ld->ev));
		v = (const char *)ld->ev.data.scalar.value;
		if ((k == 0 && seen[4]) || (k == 4 && seen[0]))
			return lerr(ld, &km, "processes[%u]: both trace and workload (a process "
				    "runs one of them)", i);
		switch (k) {
		case 0:
			if (proc_trace(ld, i, v, &vm, p))
				return -1;
			break;
		case 4:
			if (proc_workload(ld, i, v, &vm, p))
				return -1;
			break;
		case 1:
			if (*v == '-' || parse_u64(v, &u))
				return lerr(ld, &vm, "processes[%u].start: expected a number of "
					    "instructions (a non-negative integer), got '%s'", i, v);
			p->start = u;
			break;
		case 2:
			if (*v == '-' || parse_u64(v, &u) || !u || u > PROC_REPEAT_MAX)
				return lerr(ld, &vm, "processes[%u].repeat: expected an integer from 1 "
					    "to %d, got '%s'", i, PROC_REPEAT_MAX, v);
			p->repeat = (uint32_t)u;
			break;
		case 3:
			if (parse_bool(v, &b))
				return lerr(ld, &vm, "processes[%u].thp_disable: expected true or "
					    "false, got '%s'", i, v);
			p->thp_disable = b;
		}
	}
	if (!seen[0] && !seen[4])
		return lerr(ld, &m, "processes[%u]: no trace or workload", i);
	return 0;
}

/* processes: a list (null or [] for none) that replaces the whole list. */
static int apply_procs(struct loader *ld, const yaml_mark_t *km)
{
	struct sim_config *c = &ld->c;

	memset(c->procs, 0, sizeof(c->procs));
	c->nprocs = 0;
	if (ev_is_null(&ld->ev))
		return 0;
	if (ld->ev.type != YAML_SEQUENCE_START_EVENT)
		return lerr(ld, km, "processes: expected a list of traces or of mappings of %s, got %s",
			    proc_keys, ld->ev.type == YAML_SCALAR_EVENT ? "a scalar" :
			    ev_kind(&ld->ev));
	for (;;) {
		if (ld_next(ld))
			return -1;
		if (ld->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if (c->nprocs == SIM_PROCS_MAX)
			return lerr(ld, &ld->ev.start_mark, "processes: more than %d processes",
				    SIM_PROCS_MAX);
		if (proc_item(ld, c->nprocs, &c->procs[c->nprocs]))
			return -1;
		c->nprocs++;
	}
}

static int apply_node(struct loader *ld, const char *path, const yaml_mark_t *km);

/* The current event is MAPPING_START: apply each key under @prefix. */
static int walk_mapping(struct loader *ld, const char *prefix)
{
	/*
	 * Every key of this mapping so far, to refuse a repeated one. Grown on
	 * the heap: a fixed 32 let a repeat after the 32nd key through (found
	 * writing the fuzz harness); keys are few, so a linear search will do.
	 */
	char (*seen)[PATH_MAX_LEN] = NULL;
	size_t nseen = 0, cap = 0;
	int ret = -1;

	for (;;) {
		char path[PATH_MAX_LEN];
		yaml_mark_t km;
		const char *key;
		int len;

		if (ld_next(ld))
			goto out;
		if (ld->ev.type == YAML_MAPPING_END_EVENT) {
			ret = 0;
			goto out;
		}
		km = ld->ev.start_mark;
		if (ld->ev.type != YAML_SCALAR_EVENT) {
			lerr(ld, &km, "%s%sexpected a key, got %s", prefix, *prefix ? ": " : "",
			     ev_kind(&ld->ev));
			goto out;
		}
		key = (const char *)ld->ev.data.scalar.value;
		len = snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", key);
		if (!*key || len >= (int)sizeof(path) ||
		    strlen(key) != ld->ev.data.scalar.length) {
			lerr(ld, &km, "unknown key '%.*s'", 100, path);
			goto out;
		}
		for (size_t i = 0; i < nseen; i++)
			if (!strcmp(seen[i], path)) {
				lerr(ld, &km, "duplicate key '%s'", path);
				goto out;
			}
		if (nseen == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			char (*ns)[PATH_MAX_LEN] = realloc(seen, ncap * sizeof(*seen));

			if (!ns) {
				err_host(ld->e, ld->name, 0, 0, "out of memory");
				goto out;
			}
			seen = ns;
			cap = ncap;
		}
		memcpy(seen[nseen++], path, sizeof(path));
		if (ld_next(ld) || apply_node(ld, path, &km))
			goto out;
	}
out:
	free(seen);
	return ret;
}

/* tlb.stlb in a file or "--set tlb.stlb=...": replaces the whole list. */
static int apply_stlb_list(struct loader *ld, const char *path, const yaml_mark_t *km)
{
	struct sim_config *c = &ld->c;

	memset(c->stlb, 0, sizeof(c->stlb));
	c->nr_stlb = 0;
	for (size_t i = 0; i < NKEYS; i++)
		if (!strncmp(keys[i].path, STLB_PREFIX, STLB_PREFIX_LEN))
			ld->marks.line[i] = ld->marks.col[i] = 0;

	if (ld->ev.type == YAML_MAPPING_START_EVENT) {
		if (stlb_ensure(ld, 0, path, km))
			return -1;
		return walk_mapping(ld, path);
	}
	if (ld->ev.type != YAML_SEQUENCE_START_EVENT)
		return lerr(ld, km, "%s: expected a mapping or a sequence of mappings, got %s",
			    path, ld->ev.type == YAML_SCALAR_EVENT ? "a scalar" :
			    ev_kind(&ld->ev));
	for (unsigned n = 0;; n++) {
		char elem[PATH_MAX_LEN];
		yaml_mark_t m;

		if (ld_next(ld))
			return -1;
		if (ld->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		m = ld->ev.start_mark;
		snprintf(elem, sizeof(elem), STLB_PREFIX "%u", n);
		if (n >= STLB_MAX_ARRAYS)
			return lerr(ld, &m, "%s: more than %d STLB arrays", path,
				    STLB_MAX_ARRAYS);
		if (ld->ev.type != YAML_MAPPING_START_EVENT)
			return lerr(ld, &m, "%s: expected a mapping, got %s", elem,
				    ld->ev.type == YAML_SCALAR_EVENT ? "a scalar" :
				    ev_kind(&ld->ev));
		if (stlb_ensure(ld, n, elem, &m) || walk_mapping(ld, elem))
			return -1;
	}
}

/* Apply the node starting at the current event as the value of @path. */
static int apply_node(struct loader *ld, const char *path, const yaml_mark_t *km)
{
	char norm[PATH_MAX_LEN];
	const char *rest;
	unsigned n;
	int ki;

	if (!strcmp(path, "sweep"))
		return lerr(ld, km, "sweep: only allowed in sweep files");
	if (!strcmp(path, "processes"))
		return apply_procs(ld, km);
	if (!strcmp(path, "tlb.stlb")) {
		/* A whole list has file semantics: entries 0 means no array. */
		int ret = apply_stlb_list(ld, path, km);

		ld->appended = 0;
		return ret;
	}
	if (!strcmp(path, THP_ANON_PATH))
		return apply_thp_anon(ld, path, km);
	if (!strcmp(path, "tlb.coalesce") && ld->ev.type == YAML_SCALAR_EVENT)
		return apply_coalesce_scalar(ld, path, km);
	normalize_path(path, norm, sizeof(norm));
	if (stlb_path(norm, &n, &rest)) {
		if (!*rest || key_index(norm) >= 0 || n >= STLB_MAX_ARRAYS) {
			if (stlb_ensure(ld, n, path, km))
				return -1;
		}
		if (!*rest) {
			if (ld->ev.type != YAML_MAPPING_START_EVENT)
				return lerr(ld, km, "%s: expected a mapping, got %s", path,
					    ld->ev.type == YAML_SCALAR_EVENT ? "a scalar" :
					    ev_kind(&ld->ev));
			return walk_mapping(ld, norm);
		}
	}
	ki = key_index(norm);
	if (ki >= 0)
		return apply_leaf(ld, ki, path, km);
	if (is_interior(norm)) {
		if (ld->ev.type == YAML_MAPPING_START_EVENT)
			return walk_mapping(ld, norm);
		if (ev_is_null(&ld->ev))
			return 0;
		return lerr(ld, km, "%s: expected a mapping, got %s", path,
			    ld->ev.type == YAML_SCALAR_EVENT ? "a scalar" : ev_kind(&ld->ev));
	}
	{
		char hint[PATH_MAX_LEN + 32];

		return lerr(ld, km, "unknown key '%s'%s", path, did_you_mean(path, hint, sizeof(hint)));
	}
}

/*
 * Run the stream: STREAM_START, at most one document, STREAM_END. @path NULL:
 * the document is a whole config (a mapping, or empty); else it is the value
 * of @path (a --set).
 */
static int load_stream(struct loader *ld, const char *path)
{
	if (ld_next(ld))
		return -1;
	BUG_ON(ld->ev.type != YAML_STREAM_START_EVENT);
	if (ld_next(ld))
		return -1;
	if (ld->ev.type == YAML_STREAM_END_EVENT)
		return path ? lerr(ld, NULL, "missing value") : 0;
	BUG_ON(ld->ev.type != YAML_DOCUMENT_START_EVENT);
	if (ld_next(ld))
		return -1;
	if (path) {
		if (apply_node(ld, path, NULL))
			return -1;
	} else if (ld->ev.type == YAML_MAPPING_START_EVENT) {
		if (walk_mapping(ld, ""))
			return -1;
	} else if (!ev_is_null(&ld->ev)) {
		return lerr(ld, &ld->ev.start_mark,
			    "expected a mapping of configuration keys at the top level, got %s",
			    ld->ev.type == YAML_SCALAR_EVENT ? "a scalar" : ev_kind(&ld->ev));
	}
	if (ld_next(ld))
		return -1;
	BUG_ON(ld->ev.type != YAML_DOCUMENT_END_EVENT);
	if (ld_next(ld))
		return -1;
	if (ld->ev.type == YAML_DOCUMENT_START_EVENT)
		return lerr(ld, &ld->ev.start_mark,
			    "more than one YAML document (a config is one document)");
	BUG_ON(ld->ev.type != YAML_STREAM_END_EVENT);
	return 0;
}

static struct loader *loader_new(const struct sim_config *c, const char *name,
				 struct err *e)
{
	struct loader *ld = calloc(1, sizeof(*ld));

	if (!ld) {
		err_host(e, name, 0, 0, "out of memory");
		return NULL;
	}
	if (!yaml_parser_initialize(&ld->parser)) {
		free(ld);
		err_host(e, name, 0, 0, "out of memory");
		return NULL;
	}
	memcpy(&ld->c, c, sizeof(*c));
	ld->name = name;
	ld->e = e;
	return ld;
}

static void loader_free(struct loader *ld)
{
	if (ld->have_ev)
		yaml_event_delete(&ld->ev);
	yaml_parser_delete(&ld->parser);
	free(ld);
}

/* Finish a file or string load: validate with positions, then commit. */
static int load_commit(struct loader *ld, struct sim_config *c)
{
	if (load_stream(ld, NULL) || validate(&ld->c, ld->name, &ld->marks, ld->e))
		return -1;
	stlb_compact(&ld->c);
	memcpy(c, &ld->c, sizeof(*c));
	return 0;
}

int config_load_file(struct sim_config *c, const char *path, struct err *e)
{
	struct loader *ld;
	FILE *f;
	int ret;

	f = fopen(path, "rb");
	if (!f)
		return err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
	ld = loader_new(c, path, e);
	if (!ld) {
		fclose(f);
		return -1;
	}
	yaml_parser_set_input_file(&ld->parser, f);
	ld->file = path;
	ret = load_commit(ld, c);
	loader_free(ld);
	fclose(f);
	return ret;
}

int config_load_string(struct sim_config *c, const char *yaml, const char *name,
		       struct err *e)
{
	struct loader *ld = loader_new(c, name, e);
	int ret;

	if (!ld)
		return -1;
	yaml_parser_set_input_string(&ld->parser, (const unsigned char *)yaml,
				     strlen(yaml));
	ret = load_commit(ld, c);
	loader_free(ld);
	return ret;
}

int config_set(struct sim_config *c, const char *assignment, struct err *e)
{
	const char *eq = strchr(assignment, '=');
	char name[256], path[PATH_MAX_LEN];
	struct loader *ld;
	size_t plen;
	int ret;

	snprintf(name, sizeof(name), "--set %s", assignment);
	if (!eq || eq == assignment)
		return err_set(e, name, 0, 0, "expected path=value");
	plen = (size_t)(eq - assignment);
	if (plen >= sizeof(path))
		return err_set(e, name, 0, 0, "unknown key '%.*s'", 100, assignment);
	memcpy(path, assignment, plen);
	path[plen] = '\0';

	ld = loader_new(c, name, e);
	if (!ld)
		return -1;
	ld->is_set = true;
	yaml_parser_set_input_string(&ld->parser, (const unsigned char *)(eq + 1),
				     strlen(eq + 1));
	ret = load_stream(ld, path);
	for (unsigned i = 0; !ret && i < ld->c.nr_stlb; i++)
		if ((ld->appended & (1u << i)) && !ld->c.stlb[i].entries)
			ret = err_set(e, name, 0, 0,
				      "tlb.stlb.%u: a new STLB array needs entries > 0 "
				      "(set it whole: tlb.stlb.%u={entries: N, ways: W, "
				      "pages: [4K]})", i, i);
	if (!ret) {
		stlb_compact(&ld->c);
		memcpy(c, &ld->c, sizeof(*c));
	}
	loader_free(ld);
	return ret;
}

/* ---------------------------------------------------------------- get/write */

int config_get(const struct sim_config *c, const char *path, char *buf, size_t n)
{
	char norm[PATH_MAX_LEN];
	const char *rest;
	unsigned idx;
	int ki;

	if (n)
		buf[0] = '\0';
	normalize_path(path, norm, sizeof(norm));
	ki = key_index(norm);
	if (ki < 0)
		return -1;
	if (stlb_path(norm, &idx, &rest) && idx >= c->nr_stlb) {
		/* A missing array reads as absent: entries 0, no pages. */
		snprintf(buf, n, "%s", keys[ki].type == KT_PAGES ? "none" : "0");
		return 0;
	}
	format_value(c, &keys[ki], false, buf, n);
	return 0;
}

/* Length of the path component starting at @s. */
static size_t comp_len(const char *s)
{
	return strcspn(s, ".");
}

/* End of the group of rows from @lo whose component at @plen equals row @lo's. */
static size_t group_end(size_t lo, size_t hi, size_t plen)
{
	const char *name = keys[lo].path + plen;
	size_t len = comp_len(name);
	size_t j = lo + 1;

	while (j < hi && !strncmp(keys[j].path + plen, name, len) &&
	       (keys[j].path[plen + len] == '.' || !keys[j].path[plen + len]))
		j++;
	return j;
}

static unsigned dots(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '.';
	return n;
}

/*
 * A mapping is written in flow style when all its children are leaves, or all
 * are mappings of leaves (tlb.l1i, walk.pwc).
 */
static bool key_quiet(const struct sim_config *c, const struct key *k);

/* (quiet keys at their defaults are not written, so they do not count) */
static bool flowable(const struct sim_config *c, size_t lo, size_t hi, size_t plen)
{
	unsigned d = dots(keys[lo].path + plen);

	for (size_t i = lo; i < hi; i++)
		if (!key_quiet(c, &keys[i])) {
			d = dots(keys[i].path + plen);
			break;
		}
	if (d > 1)
		return false;
	for (size_t i = lo; i < hi; i++)
		if (dots(keys[i].path + plen) != d && !key_quiet(c, &keys[i]))
			return false;
	return true;
}

/* A quiet key at its default (0): left out of config show (struct key). */
static bool key_quiet(const struct sim_config *c, const struct key *k)
{
	if (k->quiet_true)
		return *(const bool *)((const char *)c + k->off);
	if (k->quiet && k->type == KT_BOOL)
		return !*(const bool *)((const char *)c + k->off);
	if (k->quiet && (k->type == KT_SIZE64 || k->type == KT_U64))
		return !*(const uint64_t *)((const char *)c + k->off);
	return k->quiet && !*(const unsigned *)((const char *)c + k->off);
}

/* Are keys [lo, hi) all quiet at their defaults (a mapping to leave out whole)? */
static bool group_quiet(const struct sim_config *c, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++)
		if (!key_quiet(c, &keys[i]))
			return false;
	return true;
}

static void emit_flow(const struct sim_config *c, FILE *out, size_t lo, size_t hi,
		      size_t plen)
{
	bool first = true;

	fputs("{ ", out);
	for (size_t i = lo; i < hi;) {
		const char *name = keys[i].path + plen;
		size_t len = comp_len(name), j = group_end(i, hi, plen);

		if (group_quiet(c, i, j)) {
			i = j;
			continue;
		}
		fprintf(out, "%s%.*s: ", first ? "" : ", ", (int)len, name);
		first = false;
		if (!name[len]) {
			char buf[256];

			format_value(c, &keys[i], true, buf, sizeof(buf));
			fputs(buf, out);
		} else {
			emit_flow(c, out, i, j, plen + len + 1);
		}
		i = j;
	}
	fputs(" }", out);
}

static void emit_stlb(const struct sim_config *c, FILE *out, int indent)
{
	if (!c->nr_stlb) {
		fprintf(out, "%*sstlb: []\n", indent, "");
		return;
	}
	fprintf(out, "%*sstlb:\n", indent, "");
	for (unsigned n = 0; n < c->nr_stlb && n < STLB_MAX_ARRAYS; n++) {
		char prefix[PATH_MAX_LEN];
		size_t plen, lo, hi;

		plen = (size_t)snprintf(prefix, sizeof(prefix), STLB_PREFIX "%u.", n);
		for (lo = 0; strncmp(keys[lo].path, prefix, plen); lo++)
			;
		for (hi = lo; hi < NKEYS && !strncmp(keys[hi].path, prefix, plen); hi++)
			;
		fprintf(out, "%*s- ", indent + 2, "");
		emit_flow(c, out, lo, hi, plen);
		fputc('\n', out);
	}
}

static void emit_block(const struct sim_config *c, FILE *out, size_t lo, size_t hi,
		       size_t plen, int indent)
{
	for (size_t i = lo; i < hi;) {
		const char *name = keys[i].path + plen;
		size_t len = comp_len(name), j = group_end(i, hi, plen);

		if (!name[len]) {
			char buf[256];

			if (!key_quiet(c, &keys[i])) {
				format_value(c, &keys[i], true, buf, sizeof(buf));
				fprintf(out, "%*s%.*s: %s\n", indent, "", (int)len, name, buf);
			}
		} else if (group_quiet(c, i, j)) {
			/* nothing to write */
		} else if (plen + len == STLB_PREFIX_LEN - 1 &&
			   !strncmp(keys[i].path, STLB_PREFIX, STLB_PREFIX_LEN)) {
			emit_stlb(c, out, indent);
		} else if (group_quiet(c, i, j)) {
			/* a mapping of quiet keys all at their defaults: none written */
		} else if (flowable(c, i, j, plen + len + 1)) {
			fprintf(out, "%*s%.*s: ", indent, "", (int)len, name);
			emit_flow(c, out, i, j, plen + len + 1);
			fputc('\n', out);
		} else {
			fprintf(out, "%*s%.*s:\n", indent, "", (int)len, name);
			emit_block(c, out, i, j, plen + len + 1, indent + 2);
		}
		i = j;
	}
}

/*
 * The index of virt.mode, where the virt.* and host.* keys begin: a bare-metal
 * config is written (and hashed: provenance.c) without them, so its text and
 * config_hash are those of the releases before virtual machines.
 */
static size_t virt_key0(void)
{
	return (size_t)key_index("virt.mode");
}

/*
 * The timed memory's keys (cache.dram_bandwidth, cache.prefetch.*: the last of
 * the cache group) are written under cpu.model overlap or when one is set: an
 * additive config that leaves them alone is written (and hashed) as before
 * they existed, as a bare-metal one is without the virt.* keys.
 */
static bool mem_keys_shown(const struct sim_config *c)
{
	return c->core.model == CPU_OVERLAP || c->dram_bandwidth != 0 ||
	       memcmp(c->prefetch, &(struct prefetch_cfg[PF_NR]){ { 0 } }, sizeof(c->prefetch));
}

/*
 * sched.quantum and the processes: list are written when there are processes
 * or the quantum is not its default: a config of one trace is written (and
 * hashed) as before several processes existed.
 */
static bool sched_shown(const struct sim_config *c)
{
	return c->nprocs || c->sched_quantum != SCHED_QUANTUM_DEFAULT;
}

/* The keys [lo, hi) less the range [x0, x1) when @skip. */
static void emit_less(const struct sim_config *c, FILE *out, size_t lo, size_t hi, size_t x0,
		      size_t x1, bool skip)
{
	if (!skip || x1 <= lo || x0 >= hi) {
		emit_block(c, out, lo, hi, 0, 0);
		return;
	}
	if (x0 > lo)
		emit_block(c, out, lo, x0, 0, 0);
	if (x1 < hi)
		emit_block(c, out, x1, hi, 0, 0);
}

static void emit_procs(const struct sim_config *c, FILE *out)
{
	if (!c->nprocs)
		return;
	fputs("processes:\n", out);
	for (unsigned i = 0; i < c->nprocs && i < SIM_PROCS_MAX; i++) {
		const struct proc_cfg *p = &c->procs[i];
		char q[4 * PROC_TRACE_MAX + 8];

		yaml_quote(p->trace, sizeof(p->trace), q, sizeof(q));
		fprintf(out, "  - { %s: %s, start: %llu, repeat: %u, thp_disable: %s }\n",
			p->workload ? "workload" : "trace", q, (unsigned long long)p->start, p->repeat, p->thp_disable ? "true" : "false");
	}
}

void config_write_yaml(const struct sim_config *c, FILE *out)
{
	size_t end = c->virt.mode == VIRT_NONE ? virt_key0() : NKEYS;
	size_t m0 = (size_t)key_index("cache.dram_bandwidth");
	size_t m1 = (size_t)key_index("cache.prefetch.l2.streams") + 1;
	size_t q0 = (size_t)key_index("sched.quantum");

	fputs("# mmusim configuration (every key; `mmusim config show` writes this)\n",
	      out);
	emit_less(c, out, 0, q0, m0, m1, !mem_keys_shown(c));
	if (sched_shown(c))
		emit_block(c, out, q0, q0 + 1, 0, 0);
	emit_procs(c, out);
	if (q0 + 1 < end)
		emit_block(c, out, q0 + 1, end, 0, 0);
}
