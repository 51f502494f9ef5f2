/*
 * kernel.h - the simulated Linux kernel: one per machine (struct sim, sim.h), owning
 * the memory every process shares (the buddy allocator, the page cache, the LRU, swap,
 * the hugetlb pool, khugepaged and kswapd) and the address spaces of its processes
 * (struct mm: VMAs, page table, heap), as mm/ owns struct page and struct mm_struct.
 *
 * The kernel runs on the machine's CPU (cpu: its MMU, which it fills through the page
 * table and empties by shootdown, tlbflush.c) and reads the machine's clock through a
 * hook (kernel_now()), the way a kernel reads a clock source: nothing here includes the
 * machine's header. A failure (bad input for this machine) is recorded in failed/err
 * (kernel_fail()); the machine names the record it happened at.
 */
#ifndef MMUSIM_KERNEL_H
#define MMUSIM_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "asid.h"
#include "buddy.h"
#include "config.h"
#include "err.h"
#include "filemap.h"
#include "hugetlbfs.h"
#include "khugepaged.h"
#include "lru.h"
#include "mmu.h"
#include "pagetable.h"
#include "stats.h"
#include "swap.h"
#include "thp.h"
#include "vma.h"
#include "vmas.h"

/*
 * One address space (include/linux/mm_types.h struct mm_struct): its VMAs, its page
 * table and heap, and mm->def_flags. A process has one; the kernel switches between
 * them (kernel.mm is the running one).
 */
struct mm {
	struct pagetable pt;
	struct vma_set vmas;
	vaddr_t brk_start, brk; /* the heap; brk_start == 0 until the first brk event */
	unsigned long def_flags; /* mm->def_flags: VM_LOCKED (| VM_LOCKONFAULT) after
				    mlockall(MCL_FUTURE), for every later mmap and brk */
	uint64_t id;           /* the trace's process id (0: a trace of one process) */
	uint32_t serial;       /* its place in creation order (init_mm 0): keys its deposits */
	struct mm *next;       /* kernel.mms: every process's, in creation order */
	bool exited;           /* exit_mmap() ran: it maps nothing and takes no reference */
	bool thp_disable;      /* prctl(PR_SET_THP_DISABLE): MMF_DISABLE_THP, kept by fork and exec */
	struct asid_mm asid;   /* mm->context: its ctx_id and tlb_gen (asid.c) */
	struct vmas_acct vacct; /* its per-mapping breakdown (vmas.c) */
	struct khugepaged_mm_slot *khugepaged_slot; /* its slot on khugepaged's list, or NULL
						       (MMF_VM_HUGEPAGE and the mm_slots hash) */
};

/*
 * Resident memory over simulated time, for memory.peak_rss_bytes,
 * memory.peak_huge_bytes, memory.huge_coverage_peak and
 * memory.huge_coverage_mean: RSS and huge bytes as the report counts them
 * (anonymous 4K pages, THPs, hugetlb pages), as of their last change, their
 * peaks and their integrals over simulated time (kernel_now()) since the start of
 * the measured stretch (the run's start, or a warm-up's end). The kernel changes
 * them only in its fault, zap, split, collapse and swap paths, each of which
 * calls kernel_rss_changed(): nothing on the per-reference path.
 */
struct rss_acct {
	uint64_t rss, huge;           /* bytes, as of the last change */
	uint64_t peak_rss, peak_huge; /* the highest each was in the stretch */
	double peak_coverage;         /* the highest huge / rss was (0 while rss is 0) */
	cycles_t last;                /* kernel_now() at the last change */
	unsigned __int128 rss_time, huge_time; /* sums of bytes x cycles since the stretch began */
};

/* The hypervisor's hooks into a guest kernel (virt.c); NULL on bare metal. */
struct kernel_hv {
	/* a fault the guest takes outside a walk (populating, touching): through the host */
	int (*fault)(void *hv, vaddr_t va, bool write, bool wp);
	/* a page-table frame went back to the buddy allocator (a shadow table drops its copies) */
	void (*table_freed)(void *hv, pfn_t pfn);
};

struct kernel {
	const struct sim_config *cfg; /* the machine's (validated) */
	struct stats *st;             /* the counters the kernel moves (vmstat.*, cycles.*) */
	struct mmu *cpu;              /* the CPU it runs on: shootdown and fault details */
	struct mm *mm;                /* the address space the kernel works on now */
	struct mm *active_mm;         /* the one the CPU has loaded (CR3): shootdown goes there */
	struct mm init_mm;            /* the first process's */
	struct mm *mms, **mms_tail;   /* every process's address space, in creation order */
	unsigned nr_mm;               /* processes created, exited ones included */
	struct pt_frame_ops pt_ops;   /* page-table frames for every mm's table */
	struct asid_cpu tlbstate;     /* the CPU's cpu_tlbstate: its ASIDs (asid.c) */
	uint64_t last_mm_ctx_id;      /* arch/x86/mm/tlb.c last_mm_ctx_id */

	struct buddy buddy;
	struct hugetlb_pool hugetlb;
	struct thp_state thp;
	struct khugepaged khugepaged;
	struct lru lru;
	struct swap_dev swap;
	struct filemap fm;      /* the page cache (filemap.c) */
	uint64_t wmark_low;     /* kswapd wakes below it (cached buddy watermark) */
	uint64_t *rmap;         /* per frame: va + 1 of its 4K mapping, 0 = none (compaction) */
	struct mm **rmap_mm;    /* per frame: the mm of that mapping (the anon_vma's; fork.c) */
	uint32_t *mapcount;     /* per anonymous 4K frame: the mms mapping it beyond the first
				   (0: exclusive, PageAnonExclusive; fork.c shares, COW unshares) */
	uint64_t nr_shared_ptes; /* the sum of mapcount: PTEs that map a page another mm maps too */
	vaddr_t va_limit;       /* 2^48 or 2^57 */
	bool mlocked;           /* a VMA was ever VM_LOCKED: reclaim looks for locked folios */
	bool in_khugepaged;     /* work now is khugepaged's (its cycles are its own) */
	bool uncounted;         /* work now is an R_TOUCH's (roi_touch()): no per-mapping counts */
	struct rss_acct racct;  /* resident memory over time (kernel_rss_changed()) */

	cycles_t (*now)(const void *machine); /* the machine's clock (kernel_now()) */
	const void *machine;
	const struct kernel_hv *hv; /* the hypervisor of a guest kernel, or NULL */
	void *hv_ctx;

	/* a failure: bad input for this machine (kernel_fail()) */
	bool failed;
	struct err err;
	char fail_msg[256];     /* its message without the record number */
	const char *trace_name; /* for messages */
	uint64_t rec_no;        /* records consumed, for messages (the machine's replay sets it) */
};

/*
 * Boot the kernel on @cpu, whose MMU the machine initialised over &k->init_mm.pt
 * (kernel_prepare() set k->mm): memory, pools, fragmentation, the first address
 * space. @cfg and @st are the machine's. 0, or -1 with @e (host OOM, a config
 * that cannot boot).
 */
void kernel_prepare(struct kernel *k);
int kernel_init(struct kernel *k, const struct sim_config *cfg, struct stats *st, struct mmu *cpu,
		struct err *e);
void kernel_destroy(struct kernel *k);

/*
 * A new, empty address space for process @id (a process the run starts, or
 * exec's): appended to k->mms. NULL on host OOM.
 */
struct mm *kernel_mm_new(struct kernel *k, uint64_t id);
/*
 * fork() of the running process (copy_process() -> dup_mm()): process @id gets a
 * copy of k->mm's address space (fork.c). Its mm, or NULL with k->err.
 */
struct mm *kernel_fork(struct kernel *k, uint64_t id);
/* The address space of process @id, or NULL. */
struct mm *kernel_mm_find(const struct kernel *k, uint64_t id);
/* exit_mmap() of @mm: every mapping zapped, its page table freed; it stays listed, exited. */
void kernel_mm_exit(struct kernel *k, struct mm *mm);
/* execve() in the running process: exit_mmap(), then a new empty address space. 0 or -1. */
int kernel_exec(struct kernel *k);

/*
 * switch_mm_irqs_off() to @mm: CR3 loaded with its table under the PCID its ASID
 * gives (a flush when the ASID was taken from another mm or @mm's tlb_gen moved
 * on; every switch flushes without PCIDs); k->mm and k->active_mm become @mm.
 */
void kernel_switch_mm(struct kernel *k, struct mm *mm);

/* Work on @mm (khugepaged's and the rmap's walks): returns the one worked on before. */
static inline struct mm *kernel_use_mm(struct kernel *k, struct mm *mm)
{
	struct mm *old = k->mm;

	k->mm = mm;
	return old;
}

/* Simulated time so far, in cycles (what khugepaged's sleeps are measured in). */
static inline cycles_t kernel_now(const struct kernel *k)
{
	return k->now(k->machine);
}

/*
 * A failure met inside a batch (bad input for this machine): formats the message
 * into k->err (naming record rec_no + 1; the replay loop renames it with the
 * record's index in the batch) and sets k->failed. Returns -1.
 */
int kernel_fail(struct kernel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A fault at @va found no memory: the simulated machine's (bad input to this run:
 * exit 2, raise os.memory), or the host's, when building a page table ran out of
 * it (pt.host_oom; exit 1). kernel_fail()'s result.
 */
int kernel_oom(struct kernel *k, vaddr_t va);

/* Record that frame @pfn is mapped at @va by a 4K PTE of k->mm (the reverse map). */
static inline void kernel_rmap_set(struct kernel *k, pfn_t pfn, vaddr_t va)
{
	k->rmap[pfn] = va + 1;
	k->rmap_mm[pfn] = k->mm;
}

/* Is the anonymous 4K page @pfn mapped by more than one mm (after a fork)? */
static inline bool kernel_page_shared(const struct kernel *k, pfn_t pfn)
{
	return k->mapcount[pfn] != 0;
}

/*
 * k->mm's PTE of the shared anonymous page @pfn is going (zap, COW): the
 * page's mapcount drops; it stays with its other mappers (fork.c).
 */
void kernel_page_unshare(struct kernel *k, pfn_t pfn);

/*
 * Another live mm than k->mm that maps @pfn by a leaf of size @ps: looked for at
 * @va first (where a fork put it), then in every page table (mremap may have
 * moved it); its address in *@at. There must be one.
 */
struct mm *kernel_find_mapper(struct kernel *k, pfn_t pfn, enum page_size ps, vaddr_t va, vaddr_t *at);

/*
 * shmem_fault()'s look-up in shared anonymous memory: the page of @v (of k->mm)
 * at @va that another process mapping the same object maps, or PFN_NONE (fork.c).
 */
pfn_t kernel_shared_anon_find(struct kernel *k, const struct vma *v, vaddr_t va);

/*
 * RSS or huge bytes (k->st's nr_anon_pages, nr_anon_transparent_hugepages,
 * nr_hugetlb_pages, nr_hugetlb_pages_1g) just changed: integrate the old values
 * up to kernel_now(), take the new ones, update the peaks. Every site that
 * changes those counters calls it (sim_check_invariants() checks that none was
 * missed).
 */
void kernel_rss_changed(struct kernel *k);

/* Start the measured stretch now: no integral yet, peaks the current values (roi.c). */
void kernel_rss_restart(struct kernel *k);

/* The report's resident bytes of @st: anonymous 4K pages, THPs and hugetlb pages (not the zero pages). */
uint64_t kernel_huge_bytes(const struct stats *st);
uint64_t kernel_rss_bytes(const struct stats *st);

/*
 * What /proc/PID/smaps_rollup shows of @mm, from its page table as smaps walks it
 * (smaps_pte_entry(), smaps_pmd_entry()): @anon anonymous bytes resident (THPs
 * and hugetlb pages included, the zero pages not: the report's rss_bytes),
 * @file file and shmem bytes mapped (MM_FILEPAGES + MM_SHMEMPAGES), @anon_huge
 * PMD-mapped THP bytes (AnonHugePages).
 */
void kernel_mm_rss(struct kernel *k, struct mm *mm, uint64_t *anon, uint64_t *file,
		   uint64_t *anon_huge);

/*
 * Each leaf of @mm that kernel_mm_rss() counts as anonymous resident memory (4K
 * pages, THPs, hugetlb pages): @fn(@ctx, its address, its bytes), in address order.
 */
void kernel_mm_for_each_anon(struct kernel *k, struct mm *mm,
			     void (*fn)(void *ctx, vaddr_t va, uint64_t bytes), void *ctx);

/* The kernel's own invariants, and that each mapped frame is allocated exactly once. Aborts. */
void kernel_check_invariants(struct kernel *k);

#endif
