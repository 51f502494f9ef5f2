/*
 * config.h - the simulated machine and kernel, as loaded from YAML (libyaml).
 *
 * Every key has a default (config_defaults(): the article's cpuid-listing machine,
 * a Nehalem-class core); a file overrides what it names; --set path=value overrides
 * last. Keys are addressed by dotted paths that mirror the YAML nesting
 * ("tlb.l1d.4K.entries", "tlb.stlb.0.ways", "os.mode"); the same paths are used by
 * --set, by sweep files and by `mmusim config show`.
 */
#ifndef MMUSIM_CONFIG_H
#define MMUSIM_CONFIG_H

#include <stdio.h>

#include "err.h"
#include "types.h"

#define STLB_MAX_ARRAYS 4

enum repl_policy { REPL_LRU, REPL_FIFO, REPL_PLRU, REPL_RANDOM, REPL_NR };
extern const char *const repl_policy_name[REPL_NR]; /* "lru", "fifo", "plru", "random" */

/*
 * tlb.coalesce.kind: how a TLB array may hold one entry for a run of 4K pages
 * (tlb.c "Coalescing"): none; amd, four 16K-aligned 4K pages with consecutive,
 * 16K-aligned frames and equal permissions (AMD Zen 2 and later "PTE
 * coalescing"); contpte, Arm's contiguous bit, sixteen such pages in 64K.
 */
enum tlb_coalesce { COAL_NONE, COAL_AMD, COAL_CONTPTE, COAL_NR };
extern const char *const tlb_coalesce_name[COAL_NR]; /* "none", "amd", "contpte" */
/* log2 of the 4K pages of one coalesced entry of @k (0: none) */
static inline unsigned tlb_coalesce_shift(enum tlb_coalesce k)
{
	return k == COAL_AMD ? 2 : k == COAL_CONTPTE ? 4 : 0;
}

enum os_mode { MODE_BASE, MODE_HUGETLBFS, MODE_THP, MODE_NR };
extern const char *const os_mode_name[MODE_NR]; /* "base", "hugetlbfs", "thp" */

/*
 * os.kernel: the Linux kernel whose behaviour the kernel model follows where
 * kernels differ (mmusim.1, KERNEL VERSIONS). A profile is a stable line as
 * distributions ship it: the release vX.Y with the stable backports of its
 * 6.x.y line, not the bare tag. Each was read in source and, where a machine
 * was at hand, checked against a running kernel: 6.18 against 6.18.44 (this
 * project's build machine, tests/native.sh), 6.12 against Debian's
 * 6.12.117+deb13 (make native-guest); 6.6 (the 6.6.y longterm line) and 6.8
 * (6.8.12, the last 6.8.y; Ubuntu 24.04's 6.8.0 carries backports of its own,
 * not modelled) from source only. Only lines whose differences were
 * researched: the longterm 6.6, 6.12 and 6.18, and 6.8 (the releases that
 * aligned every anonymous mapping of 2 MiB or more). Any other value is a
 * config error rather than the nearest profile, which would claim fidelity
 * nobody checked. In release order, so a feature test is a comparison; a
 * difference a stable backport brought is tested per line (kernel_*() below
 * say which).
 */
enum os_kernel { KERNEL_6_6, KERNEL_6_8, KERNEL_6_12, KERNEL_6_18, KERNEL_NR };
extern const char *const os_kernel_name[KERNEL_NR]; /* "6.6", "6.8", "6.12", "6.18" */
#define KERNEL_DEFAULT KERNEL_6_18

/*
 * os.layout: where a traced program's mappings are (layout.c). kernel: where
 * Linux would have put every mapping the program did not fix; trace: the
 * addresses as recorded; auto: kernel for a trace that records its initial
 * mappings (mtr version 2), trace otherwise.
 */
enum os_layout { LAYOUT_AUTO, LAYOUT_KERNEL, LAYOUT_TRACE, LAYOUT_NR };
extern const char *const os_layout_name[LAYOUT_NR]; /* "auto", "kernel", "trace" */

/*
 * os.profile: linux, the kernel as the os.* keys describe it; osless, the profile
 * for comparisons with simulators that have no kernel (DynamoRIO drcachesim,
 * ChampSim): no zero page, no fault-around, 4 KiB implicit regions, so that no
 * kernel action touches a TLB on a trace without system calls. Setting it to
 * osless sets those three keys (config.c OSLESS_*); a later value that
 * contradicts them is an error.
 */
enum os_profile { PROFILE_LINUX, PROFILE_OSLESS, PROFILE_NR };
extern const char *const os_profile_name[PROFILE_NR]; /* "linux", "osless" */

/* os.file_cache: what the page cache holds when the trace starts (filemap.c). */
enum file_cache { FILE_CACHE_COLD, FILE_CACHE_WARM, FILE_CACHE_NR };
extern const char *const file_cache_name[FILE_CACHE_NR]; /* "cold", "warm" */

/*
 * What the model does differently by kernel; each test names the commit that
 * made the change, the first release with it, and whether a stable backport
 * took it to an older profile's line.
 */
/* efa7df3e3bb5 (release 6.7; not in 6.6.y): anonymous mmaps of >= 2 MiB without
 * a hint get a 2 MiB aligned start; d4148aeab412 (release 6.12, stable 6.11.y; 6.8.y
 * had ended) only when the length is a multiple of 2 MiB */
static inline bool kernel_thp_aligns_mmap(enum os_kernel k, uint64_t len)
{
	if (k < KERNEL_6_12)
		return k >= KERNEL_6_8 && len >= (2ULL << 20);
	return len && !(len & ((2ULL << 20) - 1));
}
/* 19eaf44954df "mm: thp: support allocation of anonymous multi-size THP" (release
 * 6.8): the hugepages-<size>kB/enabled switches and PTE-mapped anonymous folios of
 * the orders below PMD order (mm/memory.c alloc_anon_folio()) */
static inline bool kernel_mthp(enum os_kernel k)
{
	return k >= KERNEL_6_8;
}
/* c4608d1bf7c6 (release 6.8; stable 6.7.y; its Fixes: is efa7df3e3bb5, so not
 * 6.6.y): MAP_STACK sets VM_NOHUGEPAGE */
static inline bool kernel_map_stack_nohugepage(enum os_kernel k)
{
	return k >= KERNEL_6_8;
}
/* 10ebac4f95e7 (release 6.9, not backported): a zap removes the rmap of a run of PTEs of one folio at once
 * (folio_remove_rmap_ptes()) and queues it for deferred split only if the folio is
 * still partly mapped after the run */
static inline bool kernel_batched_zap(enum os_kernel k)
{
	return k >= KERNEL_6_12;
}
/* "mm/madvise: batch tlb flushes for MADV_DONTNEED[_LOCKED]" (release 6.16,
 * SeongJae Park's series; not backported): one mmu_gather for a whole
 * MADV_DONTNEED call (zap_page_range_single_batched() per VMA); before, each
 * VMA had its own (zap_page_range_single(): a flush per VMA) */
static inline bool kernel_madv_dontneed_one_gather(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}
/* 4ea3594a4741 (release 6.17, not backported): a collapse removes the old PTEs' rmaps per run of one
 * folio too (__collapse_huge_page_copy_succeeded()); before, one at a time */
static inline bool kernel_batched_collapse(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}
/* 1ced09e0331f (release 6.13, not backported): a store to the huge zero PMD maps a fresh THP
 * (do_huge_zero_wp_pmd()); before, it split the PMD and COWed 4 KiB */
static inline bool kernel_huge_zero_wp_thp(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}
/* 9c9828d3ead6 "mm, page_alloc, thp: prevent reclaim for __GFP_THISNODE THP
 * allocations" (19 Dec 2025, release 6.19; stable backport to 6.6.y, 6.12.y and
 * 6.18.y, so those profiles have it; 6.8.y had ended): the local-node try of a
 * THP fault, __GFP_THISNODE | __GFP_NORETRY, fails after its async compaction
 * instead of reclaiming (__alloc_pages_slowpath()) */
static inline bool kernel_thisnode_no_reclaim(enum os_kernel k)
{
	return k != KERNEL_6_8;
}

/* MADV_FREE, MADV_COLD and MADV_PAGEOUT act on a large folio below PMD order
 * that the range covers whole as one folio ("mm: madvise: avoid split during
 * MADV_PAGEOUT and MADV_COLD", "mm/madvise: optimize lazyfreeing with mTHP in
 * madvise_free", both Linux 6.10: madvise_folio_pte_batch()); before, every
 * PTE-mapped large folio was split first (6.8 madvise_free_pte_range(),
 * madvise_cold_or_pageout_pte_range()) */
static inline bool kernel_madvise_large_folio(enum os_kernel k)
{
	return k >= KERNEL_6_12;
}
/* 354dffd29575 "mm: support batched unmap for lazyfree large folios during
 * reclamation" (release 6.15, not backported): try_to_unmap_one() discards the
 * PTEs of a clean lazy-free large folio in one batch (folio_unmap_pte_batch()
 * since its fix), so the folio is never seen partly mapped; before, PTE by PTE,
 * and the first one queued it for deferred split (thp_deferred_split_page +1:
 * measured on 6.12.117 in a QEMU guest, 0 on 6.18.44) */
static inline bool kernel_lazyfree_batched_unmap(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}

/* "ext4: enable large folio for regular file" (release 6.16, not backported):
 * ext4_should_enable_large_folio() in __ext4_iget() gives a regular file's
 * mapping large folios (mapping_set_large_folios()), so a write() or readahead
 * allocates folios above order 0; before, ext4's page cache is order-0 pages */
static inline bool kernel_ext4_large_folios(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}
/* 357b92761d94 "mm/filemap: map entire large folio faultaround" and 19773df031bc
 * "mm/fault: try to map the entire file folio in finish_fault()" (release 6.18,
 * not backported): fault-around maps each large folio it meets whole and a fault
 * that fault-around did not cover maps its whole folio (filemap_map_folio_range(),
 * finish_fault()); before, fault-around mapped only the window's part of a folio
 * and finish_fault() one PTE outside shmem */
static inline bool kernel_map_whole_folio(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}

/* 3b61a3f08949 "mm/filemap: allow arch to request folio size for exec memory"
 * (6.16): do_sync_mmap_readahead() reads ahead in a VM_EXEC mapping even under
 * MADV_RANDOM, ra_pages forward from the fault within the VMA, order
 * exec_folio_order() (0 on x86-64), no async part; before, VM_RAND_READ stopped
 * read-around in every mapping and a VM_EXEC one read around the fault like
 * any other */
static inline bool kernel_rand_read_exec_readaround(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}

/* "mm: enable khugepaged to operate on non-writable VMAs" (Dev Jain, release
 * 6.18, not backported): hpage_collapse_scan_pmd() and
 * __collapse_huge_page_isolate() no longer want a writable PTE in the range
 * (SCAN_PAGE_RO), for khugepaged and MADV_COLLAPSE alike: the PTEs a fork
 * write-protected collapse (measured on 6.18.44: tests/native_procs.sh
 * fork-collapse) */
static inline bool kernel_collapse_read_only(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}

/* "mm/mprotect: allow unfaulted VMAs to be unaccounted on mprotect()" (Lorenzo
 * Stoakes, release 6.7, not backported): mprotect_fixup() drops VM_ACCOUNT of
 * an anonymous VMA without an anon_vma made read-only; before, it kept it */
static inline bool kernel_mprotect_unaccount(enum os_kernel k)
{
	return k >= KERNEL_6_8;
}

/* b1f202060afe "mm: remap unused subpages to shared zeropage when splitting
 * isolated thp" (release 6.12, not backported): a split of an anonymous large
 * folio to order 0 maps each of its zero-filled pages still mapped to the
 * shared zero page and frees it (remap_page(RMP_USE_SHARED_ZEROPAGE),
 * try_to_map_unused_to_zeropage()) */
static inline bool kernel_split_remaps_zero(enum os_kernel k)
{
	return k >= KERNEL_6_12;
}

/* "mm/memory: COW reuse support for PTE-mapped THP with CONFIG_MM_ID" (David
 * Hildenbrand, release 6.15, not backported): a write fault on a read-only PTE
 * of a large anonymous folio reuses the page when this mm alone maps the folio
 * (__wp_can_reuse_large_anon_folio()); before, wp_can_reuse_anon_folio() never
 * reused a page of a large folio (it copied) */
static inline bool kernel_cow_reuse_large(enum os_kernel k)
{
	return k >= KERNEL_6_18;
}

/* 845982eb264b "mm: swap: allow storage of all mTHP orders" (release 6.10, not
 * backported): reclaim swaps an mTHP out whole into an aligned run of swap slots
 * (swpout), splitting it only when the swap allocator has none (swpout_fallback) */
static inline bool kernel_mthp_swapout(enum os_kernel k)
{
	return k >= KERNEL_6_12;
}

/* dafff3f4c850 "mm: split underused THPs" and 3952b6f6b671 "mm: add sysfs
 * entry to disable splitting underused THPs" (release 6.12, not backported):
 * a PMD THP a fault or a collapse maps is queued for deferred split whole
 * (deferred_split_folio(folio, false)) while thp/shrink_underused is 1, and
 * the shrinker splits one whose zero-filled pages exceed
 * khugepaged/max_ptes_none (thp_underused(), thp_underused_split_page) */
static inline bool kernel_shrink_underused(enum os_kernel k)
{
	return k >= KERNEL_6_12;
}

/* Paging-structure caches, longest match first is searched by mmu.c. */
enum pwc_level { PWC_PML5, PWC_PML4, PWC_PDPT, PWC_PDE, PWC_NR };
extern const char *const pwc_level_name[PWC_NR]; /* "pml5", "pml4", "pdpt", "pde" */

enum cache_level { CL_L1D, CL_L2, CL_LLC, CL_NR };
extern const char *const cache_level_name[CL_NR]; /* "l1d", "l2", "llc" */

/* One set-associative array. entries == 0: the array does not exist. */
struct array_cfg {
	unsigned entries;
	unsigned ways; /* ways == entries: fully associative */
};

/* One STLB array: a geometry and the page sizes it holds (bit 1 << PS_*). */
struct stlb_cfg {
	unsigned entries;
	unsigned ways;
	unsigned pages; /* mask of 1u << enum page_size */
};

struct cache_cfg {
	uint64_t size; /* bytes; 0: level absent */
	unsigned ways;
	unsigned latency; /* cycles to serve a hit at this level */
	unsigned mshrs;   /* cache.LEVEL.mshrs: misses it keeps in flight (cpu.model overlap) */
};

/* The prefetchers (cache.prefetch.*): the L1D's and the L2's, indexes of sim_config.prefetch */
enum { PF_L1D, PF_L2, PF_NR };
#define PF_DEGREE_MAX 64 /* cache.prefetch.*.degree: lines one access may issue */

/* cpu.model: how instructions and misses make time (sim.c, core.c) */
enum cpu_model { CPU_ADDITIVE, CPU_OVERLAP, CPU_MODEL_NR };
extern const char *const cpu_model_name[CPU_MODEL_NR]; /* "additive", "overlap" */

/* The overlap core's machine (core.c); used only under cpu.model overlap. */
struct core_cfg {
	enum cpu_model model;  /* cpu.model */
	unsigned rob;          /* cpu.rob: reorder-buffer entries */
	unsigned width;        /* cpu.width: instructions dispatched (and retired) a cycle */
	unsigned store_buffer; /* cpu.store_buffer: store-buffer (store queue) entries */
	unsigned walkers;      /* walk.walkers: page walks in flight */
};

/* Costs charged to the application, in cycles (documented defaults in config.c). */
struct cost_cfg {
	cycles_t fault;        /* entry, handling and return of one page fault */
	cycles_t clear_page;   /* zeroing one 4 KiB page */
	cycles_t copy_page;    /* copying one 4 KiB page (collapse, migration) */
	cycles_t compact_scan; /* examining one page in a compaction scanner */
	cycles_t flush;        /* one TLB shootdown (INVLPG or full flush) */
	cycles_t swap_in;      /* reading one 4 KiB page back from swap (a major fault) */
};

/* /sys/kernel/mm/transparent_hugepage/enabled and defrag (reference §1a, §1b). */
enum thp_enabled { THP_ALWAYS, THP_MADVISE, THP_NEVER, THP_ENABLED_NR };
extern const char *const thp_enabled_name[THP_ENABLED_NR];
enum thp_defrag { DEFRAG_ALWAYS, DEFRAG_DEFER, DEFRAG_DEFER_MADVISE, DEFRAG_MADVISE, DEFRAG_NEVER,
		  THP_DEFRAG_NR };
extern const char *const thp_defrag_name[THP_DEFRAG_NR];

/*
 * /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/enabled (Linux 6.8+,
 * 19eaf44954df "mm: thp: support allocation of anonymous multi-size THP"): one
 * switch per anonymous order, 2 (16K) .. 9 (2M) on x86-64 (THP_ORDERS_ALL_ANON
 * leaves out orders 0 and 1). inherit follows the top-level enabled.
 */
enum mthp_enabled { MTHP_NEVER, MTHP_ALWAYS, MTHP_INHERIT, MTHP_MADVISE, MTHP_ENABLED_NR };
#define MTHP_ORDER_MIN 2
#define MTHP_ORDERS (HPAGE_PMD_ORDER + 1) /* indexed by order; 0 and 1 unused */
/* The size's name in keys and reports: "16K" .. "1M", "2M" (order 2 .. 9). */
extern const char *const mthp_size_name[MTHP_ORDERS];

struct thp_cfg {
	/*
	 * os.thp.sizes.<size>.enabled, each stored as an index into its key's own
	 * name table, whose first word is the kernel's default for that size
	 * (hugepages-2048kB: inherit; the others: never; mm/huge_memory.c
	 * hugepage_init_sysfs()), so that a config leaving them alone writes none
	 * of them (quiet keys). Read them through thp_size_enabled().
	 */
	unsigned size_enabled[MTHP_ORDERS];
	enum thp_enabled enabled;
	enum thp_defrag defrag;
	bool use_zero_page;
	bool huge_zero_allocated; /* the huge zero page exists when the run starts (config host:
				     /proc/vmstat thp_zero_page_alloc > 0) */
	bool read_only_thp_for_fs; /* CONFIG_READ_ONLY_THP_FOR_FS: khugepaged and MADV_COLLAPSE
				      collapse read-only file text (khugepaged.c collapse_file()) */
	bool shrink_underused; /* transparent_hugepage/shrink_underused (6.12+; default 1,
				  split_underused_thp): THPs are queued at fault and collapse
				  for the underused check (kernel_shrink_underused()) */
};

/* The hugepages-<size>kB/enabled setting of @order (2 .. 9) in @t. */
enum mthp_enabled thp_size_enabled(const struct thp_cfg *t, unsigned order);

/* Does any order below PMD order have a setting other than never (mTHP is in use)? */
bool thp_mthp_configured(const struct thp_cfg *t);

/* /sys/kernel/mm/transparent_hugepage/khugepaged/ (reference §1a, §4). */
struct khugepaged_cfg {
	unsigned pages_to_scan;
	unsigned scan_sleep_millisecs;
	unsigned alloc_sleep_millisecs;
	unsigned max_ptes_none, max_ptes_swap, max_ptes_shared;
	bool defrag;
};

struct fragmentation_cfg {
	double unmovable; /* share of pageblocks holding a pinned unmovable page at start */
	uint64_t seed;
};

/* The rule that maps addresses outside every VMA (see README, "Implicit mappings"). */
struct implicit_cfg {
	bool enabled;     /* false: a touch outside every VMA is a trace error */
	uint64_t granule; /* bytes, a power of two >= 4K: an implicit VMA spans the aligned
			     granule around the address, clipped to the gap between VMAs */
};

/*
 * The region of interest (roi.*; run --skip-refs & co., sim/roi.c): drcachesim's
 * -skip_refs, -warmup_refs, -sim_refs, in references (ifetch, load, store and
 * modify records) or in instructions (the `instructions` counter's units). 0:
 * none (sim: no limit). A phase is given in references or in instructions, not both.
 */
struct roi_cfg {
	uint64_t skip_refs, warmup_refs, sim_refs;
	uint64_t skip_insns, warmup_insns, sim_insns;
};

/*
 * virt.mode: where the machine runs (sim/virt.c). none: bare metal, as every
 * run before issue 15. nested: two translation stages in hardware (AMD NPT,
 * Intel EPT): the guest's page table, each of its reads and the final address
 * translated by the host's. shadow: the hypervisor keeps a table from guest
 * virtual to host physical addresses that the hardware walks (PVM, KVM
 * without NPT/EPT), built on shadow faults.
 */
enum virt_mode { VIRT_NONE, VIRT_NESTED, VIRT_SHADOW, VIRT_NR };
extern const char *const virt_mode_name[VIRT_NR]; /* "none", "nested", "shadow" */
extern const char *const hugetlb_size_name[2];     /* "2M", "1G" */

/* virt.* and host.os.*: the hypervisor's hardware and the host kernel under the guest. */
struct virt_cfg {
	enum virt_mode mode;
	unsigned levels;             /* virt.levels: the host stage's paging levels (4 or 5) */
	struct array_cfg ntlb;       /* virt.ntlb: nested TLB, gPA -> hPA (any host page size) */
	struct array_cfg pwc[PWC_NR]; /* virt.pwc.*: the host stage's paging-structure caches */
	cycles_t exit;               /* virt.cost.exit: one VM exit and the re-entry */
	/* the host kernel (a second kernel model; host.os.*) */
	uint64_t host_memory;        /* host.os.memory; 0: twice os.memory */
	enum os_mode host_mode;      /* host.os.mode: how guest memory is backed */
	bool host_madvise;           /* host.os.madvise: MADV_HUGEPAGE on guest memory (QEMU) */
	unsigned host_hugetlb_1g;    /* host.os.hugetlbfs.page_size: 0 = 2M, 1 = 1G pages */
	struct thp_cfg host_thp;     /* host.os.thp.enabled, .defrag */
	struct khugepaged_cfg host_khugepaged; /* host.os.khugepaged.* */
	struct fragmentation_cfg host_fragmentation; /* host.os.fragmentation.* */
};

/*
 * processes: several traces run as processes of one machine (trace_mux.c). One
 * entry of the list: the trace (a path; in a config file relative to the file's
 * directory, as it is resolved when the file is loaded: config show writes it so),
 * start (instructions the machine has run before the process starts), repeat
 * (how many times its trace runs: each run after the first is a new process
 * started when the previous one exits, as a benchmark loop starts the program
 * again) and thp_disable (the process calls prctl(PR_SET_THP_DISABLE, 1) first).
 * Instead of trace, workload: a built-in workload's spec (-w's, workload.c), run
 * with the config's seed unless the spec has seed= (each repeat the same stream).
 */
#define SIM_PROCS_MAX 64        /* entries of processes: */
#define PROC_TRACE_MAX 256      /* bytes of a trace path, with its NUL (trace_reader.name's) */
#define PROC_REPEAT_MAX 1000000 /* processes[].repeat */
struct proc_cfg {
	char trace[PROC_TRACE_MAX]; /* the trace's path, or with workload the workload's spec */
	uint64_t start;
	uint32_t repeat;
	bool thp_disable;
	bool workload; /* a built-in workload (processes[].workload: "gups:size=64M"), not a trace */
};

/*
 * sched.quantum's default: instructions a process runs before the next one
 * (trace_mux.c). Linux's EEVDF base slice, sysctl_sched_base_slice = 0.75 ms x
 * (1 + ilog2(min(ncpus, 8))) (kernel/sched/fair.c, sched_update_scaling(),
 * SCHED_TUNABLESCALING_LOG), is 3 ms on a machine of 8 CPUs or more; at the
 * default machine's 2.8 GHz and CPI 1.0 that is 8.4 M instructions. In
 * instructions, not simulated time: the interleaving is then the same record
 * stream under every mode and machine (a THP run is not given more instructions
 * per slice than a base-page run because its TLB misses cost less), so a sweep
 * compares the same schedule.
 */
#define SCHED_QUANTUM_DEFAULT 8400000ULL

struct sim_config {
	/* cpu */
	char cpu_name[64];
	unsigned freq_mhz;
	double cpi; /* cycles per instruction outside translation */
	struct core_cfg core; /* cpu.model, cpu.rob, cpu.width, cpu.store_buffer, walk.walkers */
	bool pcid; /* cpu.pcid: the CPU has PCIDs and the kernel sets CR4.PCIDE (X86_FEATURE_PCID) */

	/* tlb */
	struct array_cfg l1i[PS_NR];
	struct array_cfg l1d[PS_NR];
	struct stlb_cfg stlb[STLB_MAX_ARRAYS];
	unsigned nr_stlb; /* arrays in use; 0: no STLB */
	enum repl_policy policy;
	unsigned lat_l1;   /* tlb.latency.l1 */
	unsigned lat_stlb; /* tlb.latency.stlb */
	/* tlb.coalesce.*: the kind, and which arrays hold coalesced entries (the 4K
	 * L1 arrays of each side, the STLB arrays holding 4K) */
	enum tlb_coalesce coalesce;
	bool coal_l1i, coal_l1d, coal_stlb;

	/* walk */
	unsigned levels; /* 4 or 5 */
	struct array_cfg pwc[PWC_NR];
	unsigned pwc_latency; /* walk.pwc_latency: cycles per PWC probe */

	/* cache */
	struct cache_cfg cache[CL_NR];
	unsigned line_size; /* cache.line: bytes, power of two */
	unsigned dram_latency;
	bool data_refs;
	/*
	 * The memory side of the overlap core (cpu.model overlap only; additive
	 * ignores them): cache.dram_bandwidth in bytes a cycle (0: unlimited) and
	 * the stream prefetchers of the L1D and the L2 (cache.prefetch.l1d.*,
	 * cache.prefetch.l2.*; degree 0: none). cache.c, core.c.
	 */
	double dram_bandwidth;
	struct prefetch_cfg {
		unsigned degree;   /* lines issued per access that advances a trained stream */
		unsigned distance; /* how far ahead of the access, in lines, a stream runs */
		unsigned streams;  /* streams tracked (one per 4 KiB page) */
	} prefetch[2];     /* PF_L1D, PF_L2 */

	/* os */
	enum os_profile profile; /* os.profile */
	uint64_t memory; /* bytes of simulated physical memory */
	enum os_mode mode;
	enum os_kernel kernel; /* os.kernel */
	unsigned hugetlb_pages; /* os.hugetlbfs.pages: 2M pool; 0 = surplus on demand */
	unsigned hugetlb_1g_pages; /* os.hugetlbfs.pages_1g: 1G pool, reserved at boot */
	unsigned hugetlb_default_1g; /* os.hugetlbfs.default_size: 0 = 2M, 1 = 1G (default_hugepagesz=) */
	uint64_t swap_size; /* os.swap.size: bytes of swap (0: none) */
	struct implicit_cfg implicit;
	enum os_layout layout; /* os.layout */
	bool zero_page; /* os.zero_page: false = mm_forbids_zeropage(), no 4K or huge zero page */
	uint64_t fault_around_bytes; /* os.fault_around_bytes: do_fault_around()'s window */
	unsigned read_ahead_kb;      /* os.read_ahead_kb: a file read miss reads this much around it */
	enum file_cache file_cache;  /* os.file_cache */
	uint64_t file_cache_folio_size; /* os.file_cache_folio_size: a warm cache's folios (filemap.c);
					 * 0 (unset) is the default, 4K */
	struct cost_cfg cost;
	struct thp_cfg thp;
	struct khugepaged_cfg khugepaged;
	struct fragmentation_cfg fragmentation;
	unsigned extfrag_threshold; /* /proc/sys/vm/extfrag_threshold */

	struct roi_cfg roi; /* roi.*: the region of interest (not the machine: how it is run) */

	uint64_t seed; /* seed: random replacement and anything else stochastic */

	uint64_t sched_quantum; /* sched.quantum: instructions a slice (SCHED_QUANTUM_DEFAULT) */
	struct proc_cfg procs[SIM_PROCS_MAX]; /* processes: (nprocs entries; 0: one trace) */
	unsigned nprocs;

	struct virt_cfg virt; /* virt.*, host.os.*: written out only when virt.mode is not none */
};

/* Fill @c with the built-in defaults (the article's machine). Cannot fail. */
void config_defaults(struct sim_config *c);

/*
 * Apply the YAML file @path on top of @c. Returns 0, or -1 with @e holding
 * "path:line:col: what is wrong" (unknown key, wrong type, bad value, syntax).
 */
int config_load_file(struct sim_config *c, const char *path, struct err *e);

/* The same from a string; @name is used in error messages. */
int config_load_string(struct sim_config *c, const char *yaml, const char *name, struct err *e);

/*
 * Apply one "path=value" override (value parsed as YAML scalar or flow sequence,
 * e.g. "tlb.stlb.0.pages=[4K,2M]"). Returns 0 or -1 with @e ("--set: ...").
 */
int config_set(struct sim_config *c, const char *assignment, struct err *e);

/*
 * Check cross-field rules (ways divide entries, sets >= 1, levels 4|5, sizes that
 * are powers of two where the model needs it, ...). Returns 0 or -1 with @e naming
 * @origin (the file or "--set" that produced the config).
 */
int config_validate(const struct sim_config *c, const char *origin, struct err *e);

/* Write the effective configuration as YAML that config_load_file() reads back. */
void config_write_yaml(const struct sim_config *c, FILE *out);

/* @s as a double-quoted YAML scalar into @buf (4 x strlen(@s) + 3 bytes suffice). */
void config_quote(const char *s, char *buf, size_t n);

/* Value of one dotted key as text (for sweep CSV columns). -1 if unknown. */
int config_get(const struct sim_config *c, const char *path, char *buf, size_t n);

/*
 * The caches are the timed hierarchy (cache.c: dirty lines, prefetchers, DRAM
 * bandwidth): only under cpu.model overlap, and only when @c asks for any.
 */
static inline bool config_mem_timed(const struct sim_config *c)
{
	return c->core.model == CPU_OVERLAP &&
	       (c->dram_bandwidth > 0 || c->prefetch[PF_L1D].degree || c->prefetch[PF_L2].degree);
}

#endif
