/*
 * mmu.h - the hardware of one core's address translation: what the CPU owns.
 *
 * struct mmu holds the L1 TLBs, the STLB, the paging-structure caches, the cache
 * hierarchy the walker reads through, the per-side memo of the last L1 hit, the
 * counters of all of these, a pointer to the page table it walks (CR3) and the
 * fault hook the OS installs (the #PF vector). It knows no kernel: a walk that
 * finds no present entry, or a store that meets a read-only translation, calls
 * m->fault(m->os, va, write, wp) and resumes when it returns 0. The OS, for its
 * part, tells the hardware what changed through mmu_invalidate_range() (INVLPG),
 * mmu_flush_all() (a CR3 reload of the current PCID) and mmu_invpcid(), and
 * switches address spaces with mmu_load_cr3() (MOV to CR3 with a PCID).
 * translate(): L1 TLBs -> STLB -> PWCs -> walk -> fault, by DESIGN.md's
 * counting rules (see mmu.c).
 *
 * This header includes only hardware headers (tlb.h, cache.h, pagetable.h) and
 * config.h/types.h, so tests/check_mmu.c drives it with a stub OS.
 */
#ifndef MMUSIM_MMU_H
#define MMUSIM_MMU_H

#include "cache.h"
#include "config.h"
#include "core.h"
#include "pagetable.h"
#include "tlb.h"
#include "types.h"

#define VPN_NONE UINT64_MAX

struct mmu_hit_miss {
	uint64_t hits, misses;
};

/* What the hardware counts; the kernel copies it into its report (struct stats). */
struct mmu_stats {
	struct {
		uint64_t hits[PS_NR], misses[PS_NR];
	} l1[2];                    /* SIDE_I, SIDE_D, by the size of the page */
	struct mmu_hit_miss stlb;
	uint64_t walks, pte_reads;  /* page walks, entries read by them */
	cycles_t walk_cycles;       /* PWC probes + entry reads */
	struct mmu_hit_miss pwc[PWC_NR];
	uint64_t served[CL_NR + 1]; /* entry reads served by l1d, l2, llc, dram */
	cycles_t cyc_translation;   /* L1 miss + STLB probe latencies (walks not included) */
	cycles_t cyc_data;          /* data references through the caches (data_refs) */
	/* the timed hierarchy (cache.c; cpu.model overlap with a prefetcher or a bandwidth) */
	uint64_t prefetches[2];        /* issued by the L1D's, the L2's prefetcher */
	uint64_t useful_prefetches[2]; /* of those, lines a demand (or an L1D prefetch) used */
	uint64_t dram_reads;           /* lines read from DRAM by data references and prefetches */
	uint64_t writebacks;           /* dirty lines written back to DRAM */
	/* address-space switches (mmu_load_cr3()) */
	uint64_t cr3_loads;            /* MOV to CR3 */
	uint64_t cr3_flushes;          /* of those, loads that flushed (no PCID, or bit 63 clear) */
	uint64_t cr3_flushed;          /* TLB and PWC entries those flushes removed */
	/* coalescing (tlb.coalesce.*): lookups a coalesced entry answered, coalesced
	 * entries filled; [0] the L1 iTLB, [1] the L1 dTLB, [2] the STLB */
	uint64_t coal_hits[3], coal_fills[3];
};

/* What the two-stage walk counts (virt.mode nested; mmu_nested.c). */
struct mmu_nested_stats {
	uint64_t guest_reads, host_reads;   /* entries read from each stage's tables */
	cycles_t guest_cycles, host_cycles; /* their cycles (host: with its NTLB and PWC probes) */
	struct mmu_hit_miss ntlb;           /* nested TLB lookups */
	struct mmu_hit_miss pwc[PWC_NR];    /* the host stage's paging-structure caches */
	uint64_t host_faults;               /* NPT/EPT violations the host kernel served */
};

/*
 * The fault hook: the OS's #PF handler. @write: the access is a store; @wp: the
 * entry was present but read-only (a write-protect fault), else not present.
 * Returns 0 when the translation is now there (the MMU re-reads it), -1 when
 * the fault cannot be served (the OS records why; the access is dropped).
 */
typedef int (*mmu_fault_fn)(void *os, vaddr_t va, bool write, bool wp);

/*
 * The window hook: an L1 miss at @va outside the window [win_lo, win_lo +
 * win_len) calls it before the miss is counted (the OS charges what the MMU
 * counted so far to the mapping that owned the window and opens a new one:
 * vmas.c). Without a hook the window is the whole address space.
 */
typedef void (*mmu_window_fn)(void *os, vaddr_t va);

/*
 * The timing hook (cpu.model overlap; NULL under additive): a lookup that
 * missed the inline L1 probe and reached the STLB or a walk, or (with
 * cache.data_refs) any data reference, reports what it cost (core.h). Called
 * on the miss path and from mmu_data_access() only: an L1 hit without
 * data_refs never reaches it.
 */
typedef void (*mmu_timing_fn)(void *os, const struct core_ref *ref);

struct mmu_nested;

struct mmu {
	/* hot: the per-side memo of the last L1 hit (see mmu_access_inline()) */
	uint64_t last_vpn[2];
	uint64_t memo_hits[2]; /* L1 hits answered by the memo, not yet in st */
	enum page_size last_ps[2];
	pfn_t last_pfn[2];     /* 4K frame of last_vpn (| TLB_RO if read-only) */
	bool data_refs;        /* data references go through the cache hierarchy */

	/* tlb before st: with st first gcc recomputed the L1 array's address in the
	 * replay loop (callgrind, validation trace: 1,290.2M Ir against 1,285.5M) */
	struct tlb tlb;
	struct mmu_stats st;
	struct tlb_array pwc[PWC_NR];
	struct cache cache;
	struct pagetable *pt;  /* the page table walked (the OS's; CR3) */
	vaddr_t va_limit;      /* 2^48 or 2^57: higher addresses fault without a walk */
	unsigned lat_miss;     /* tlb.latency.l1 + tlb.latency.stlb: an L1 miss */
	unsigned pwc_latency;  /* walk.pwc_latency: one PWC probe */
	mmu_fault_fn fault;    /* installed by the OS */
	void *os;
	bool fault_ifetch;     /* the walk that faults is an instruction fetch's (set on a TLB miss) */
	bool coal_ok;          /* with coalescing: this miss's page may fill a coalesced entry */
	vaddr_t win_lo, win_len; /* the window (mmu_window_fn); set by the OS */
	mmu_window_fn window;  /* installed by the OS, or NULL */
	/*
	 * An observer of invalidations (mrc.c keeps its stacks in step): called by
	 * mmu_invalidate_range() with [start, end), by mmu_flush_all() with @all.
	 * NULL (mmu_init()'s) in every run.
	 */
	void (*inval_hook)(void *ctx, vaddr_t start, vaddr_t end, bool all);
	void *inval_ctx;
	/* virt.mode nested: the host stage (mmu_nested_init()); NULL: one stage */
	struct mmu_nested *nested;
	mmu_timing_fn timing;  /* installed by the OS under cpu.model overlap, else NULL */
	struct core_ref tpend; /* a D-side translation's cost, for its data access (data_refs) */
	uint64_t twalks;       /* st.walks and st.walk_cycles when the timing hook last reported */
	cycles_t twalk_cycles;
	/*
	 * PCIDs (cpu.pcid: CR4.PCIDE): the current PCID (CR3 bits 11:0), 0 without
	 * PCIDE. Entries of other PCIDs carry their difference from it in their
	 * keys (tlb.h TLB_PCID_SHIFT); pcid_mixed: some may be cached (a CR3 load
	 * changed the PCID since everything was last flushed), so a flush of the
	 * current PCID must pick its entries out instead of emptying the arrays.
	 */
	bool pcide;
	bool pcid_mixed;
	unsigned pcid;
	/*
	 * The out-of-line part of a fetch, load, store and modify (MMU_SLOW_*):
	 * mmu_init() picks the copies for a machine that coalesces or not
	 * (tlb.coalesce.*), so neither tests for it (an indirect call, one
	 * instruction as a direct one is: callgrind as before on the bench rows).
	 */
	void (*slow[4])(struct mmu *m, vaddr_t va);
};

/*
 * The host stage of a nested walk: the host's table of the guest's memory (a
 * guest-physical address gpa is the host's virtual address hbase + gpa, as in
 * the host process that holds guest RAM), the nested TLB (gPA -> hPA) and the
 * host stage's paging-structure caches. A host entry not present calls
 * host_fault(host, hbase + gpa, true, false): an NPT/EPT violation.
 */
struct mmu_nested {
	struct pagetable *hpt;
	vaddr_t hbase;
	mmu_fault_fn host_fault;
	void *host;
	struct tlb_array ntlb;         /* key: tlb_stlb_key(hbase + gpa, host page size) */
	unsigned ntlb_sizes;           /* the host page sizes it may hold (1 << enum page_size) */
	struct tlb_array pwc[PWC_NR];  /* keyed by (hbase + gpa) >> pwc_shift[] */
	unsigned latency;              /* one NTLB or host PWC probe: walk.pwc_latency */
	struct mmu_nested_stats st;
};

/*
 * Give @m a host stage from @cfg's virt.* (virt.mode nested): @hpt, @hbase,
 * @host_fault(@host, ...) as in struct mmu_nested. 0, or -1 on host OOM.
 */
int mmu_nested_init(struct mmu *m, const struct sim_config *cfg, struct pagetable *hpt, vaddr_t hbase,
		    mmu_fault_fn host_fault, void *host);

/*
 * The host changed its mapping of guest memory (the host kernel's TLB flush for
 * [start, end) of its address space): what was derived from it goes, as KVM's
 * MMU notifier flushes the whole guest's TLB (kvm_flush_remote_tlbs()): the
 * nested TLB, the host stage's PWCs and every guest translation.
 */
void mmu_host_invalidate(struct mmu *m);

/* Free the host stage (mmu_destroy() calls it). */
void mmu_nested_destroy(struct mmu *m);

/* The nested TLB and the host stage's PWCs agree with the host's table. Aborts. */
void mmu_nested_check_invariants(const struct mmu *m);

/*
 * The translation of @va as the tables give it, without side effects: the size
 * of the TLB entry it fills and that page's first frame. With a host stage,
 * both stages: the smaller of the two pages, its host-physical frame. false if
 * a stage has no mapping.
 */
bool mmu_lookup(const struct mmu *m, vaddr_t va, enum page_size *ps, pfn_t *pfn);

/*
 * Build the TLBs, PWCs and caches of @cfg (validated) walking @pt (which the OS
 * initialises and owns), with the fault hook @fault(@os, ...). 0, or -1 on host
 * OOM (then mmu_destroy() frees what was built).
 */
int mmu_init(struct mmu *m, const struct sim_config *cfg, struct pagetable *pt, mmu_fault_fn fault,
	     void *os);
void mmu_destroy(struct mmu *m);

/*
 * The out-of-line part of mmu_access(): L1 arrays, STLB, walk, fault. One copy
 * per kind of access (mmu_access_slow() picks it; @side and @write are constants
 * at its call sites), and per machine (m->slow[]).
 */
enum { MMU_SLOW_FETCH, MMU_SLOW_LOAD, MMU_SLOW_STORE, MMU_SLOW_MODIFY };

/* The store lookup of a read-modify-write: the store's, telling the timing hook. */
static inline void mmu_access_slow_modify(struct mmu *m, vaddr_t va)
{
	m->slow[MMU_SLOW_MODIFY](m, va);
}

static inline __attribute__((always_inline)) void mmu_access_slow(struct mmu *m, vaddr_t va,
								  enum tlb_side side, bool write)
{
	if (side == SIDE_I)
		m->slow[MMU_SLOW_FETCH](m, va);
	else if (!write)
		m->slow[MMU_SLOW_LOAD](m, va);
	else
		m->slow[MMU_SLOW_STORE](m, va);
}

/*
 * Point the memo of @side at @vpn (4K page number) of a @ps page whose 4K frame is
 * @pfn. Its pending hits belong to the page size of the translations it answered:
 * they move into that size's count only when the size changes (and at the end,
 * mmu_fold_memo()), so a run of 4K pages pays no addition per memo change.
 */
static inline void mmu_memo_set(struct mmu *m, enum tlb_side side, uint64_t vpn, enum page_size ps,
				pfn_t pfn)
{
	if (unlikely(ps != m->last_ps[side])) {
		m->st.l1[side].hits[m->last_ps[side]] += m->memo_hits[side];
		m->memo_hits[side] = 0;
		m->last_ps[side] = ps;
	}
	m->last_vpn[side] = vpn;
	m->last_pfn[side] = pfn;
}

/* A data reference at @va (4K frame @pfn; a store if @write) through the caches (data_refs). */
void mmu_data_access(struct mmu *m, vaddr_t va, pfn_t pfn, bool write);

/*
 * mmu_data_access() for a load and for a store, out of line: the inline lookup
 * calls one or the other by its constant @write, so that no flag is computed
 * per reference (passing @write as a value cost 2 instructions a reference on
 * the validation trace: gcc made it before the data_refs test; callgrind).
 */
void mmu_data_load(struct mmu *m, vaddr_t va, pfn_t pfn);
void mmu_data_store(struct mmu *m, vaddr_t va, pfn_t pfn);

static inline __attribute__((always_inline)) void mmu_data_ref(struct mmu *m, vaddr_t va, pfn_t pfn,
							       bool write)
{
	if (write)
		mmu_data_store(m, va, pfn);
	else
		mmu_data_load(m, va, pfn);
}

/*
 * One lookup of the page holding @va on @side, the per-reference hot path.
 *
 * 1. The memo of the side's last L1 hit answers repeats without touching the
 *    arrays: a repeated hit on the entry that is already its set's MRU changes no
 *    replacement state under lru, fifo, plru or random, so only a counter moves
 *    (memo_hits, folded into the page size's hit count when the memo's size
 *    changes, on an invalidation and at the end).
 * 2. Else the 4K array's MRU way of the page's set (STYLE rule 6): on the
 *    validation trace this answers 70% of what the memo misses (callgrind). It
 *    is the set's most recent use already, so a hit changes no replacement
 *    state either, and becomes the memo.
 * 3. Everything else is out of line (mmu_access_slow()).
 *
 * mmu_access_inline() does steps 1 and 2: true if it answered, false if the caller
 * must call mmu_access_slow(). @data_refs false where the caller knows the cache
 * sees no data references (the summarized replay): one test less per reference.
 */
static inline __attribute__((always_inline)) bool mmu_access_inline(struct mmu *m, vaddr_t va,
									  enum tlb_side side, bool write,
									  bool data_refs)
{
	uint64_t vpn = va >> PAGE_SHIFT;
	struct tlb_array *a;

	/* @write is a constant at every call site: loads pay nothing for the RO test */
	if (likely(vpn == m->last_vpn[side]) && !(write && (m->last_pfn[side] & TLB_RO))) {
		m->memo_hits[side]++;
		if (data_refs && unlikely(m->data_refs) && side == SIDE_D)
			mmu_data_ref(m, va, m->last_pfn[side] & ~TLB_RO, write);
		return true;
	}
	a = &m->tlb.l1[side][PS_4K];
	if (likely(a->ways)) {
		const struct tlb_mru *e = &a->mru_e[tlb_set_of(a, vpn)];

		if (likely(e->tag == vpn) && !(write && (e->payload & TLB_RO))) {
			/*
			 * The set's MRU hit again changes no replacement state: under lru it
			 * already heads the set's recency list (tlb_array_check_invariants()),
			 * and victims are taken from that list's tail.
			 */
			mmu_memo_set(m, side, vpn, PS_4K, e->payload);
			m->memo_hits[side]++; /* a 4K hit: the memo's size is now 4K */
			if (data_refs && unlikely(m->data_refs) && side == SIDE_D)
				mmu_data_ref(m, va, e->payload & ~TLB_RO, write);
			return true;
		}
	}
	return false;
}

/* Translate @va on @side (a store if @write): counters, fills, faults through the hook. */
static inline __attribute__((always_inline)) void mmu_access(struct mmu *m, vaddr_t va,
								    enum tlb_side side, bool write)
{
	if (!mmu_access_inline(m, va, side, write, true))
		mmu_access_slow(m, va, side, write);
}

/* Move the memo's pending hits into the counters (reports and tests read them). */
static inline void mmu_fold_memo(struct mmu *m)
{
	for (int side = 0; side < 2; side++) {
		m->st.l1[side].hits[m->last_ps[side]] += m->memo_hits[side];
		m->memo_hits[side] = 0;
	}
}

/* Forget the memo (any invalidation calls this); its hits move into the counters. */
static inline void mmu_forget(struct mmu *m)
{
	mmu_fold_memo(m);
	for (int side = 0; side < 2; side++)
		mmu_memo_set(m, (enum tlb_side)side, VPN_NONE, m->last_ps[side], 0);
}

/* INVLPG for [start, end): TLB entries of any size overlapping it, and the PWCs. */
void mmu_invalidate_range(struct mmu *m, vaddr_t start, vaddr_t end);

/*
 * A CR3 reload of the current root and PCID (the kernel's flush_tlb_local():
 * native_write_cr3(__native_read_cr3())): the current PCID's TLB and PWC
 * entries (every entry without PCIDE or with no other PCID's cached). Not
 * counted as a CR3 load (st.cr3_*): those count address-space switches.
 */
void mmu_flush_all(struct mmu *m);

/*
 * MOV to CR3 (SDM Vol. 3A §4.10.4.1, "Operations that Invalidate TLBs and
 * Paging-Structure Caches"): walk @pt from now on, as PCID @pcid (0..4095).
 * With CR4.PCIDE = 0 (cpu.pcid false) @pcid and @noflush are ignored (CR3's
 * bits 11:0 are then PWT/PCD, bit 63 reserved) and every non-global entry,
 * every entry here, is invalidated with the PWCs. With PCIDE = 1 the entries
 * of other PCIDs stay; bit 63 clear (!@noflush) invalidates the new PCID's TLB
 * and PWC entries, bit 63 set none. The memo is forgotten either way. Counts
 * st.cr3_loads, and st.cr3_flushes and st.cr3_flushed when it flushed.
 */
void mmu_load_cr3(struct mmu *m, struct pagetable *pt, unsigned pcid, bool noflush);

/* INVPCID's types (SDM Vol. 2A, INVPCID; Vol. 3A §4.10.4.1). */
enum invpcid_type {
	INVPCID_ADDR = 0,        /* individual-address: one page of one PCID */
	INVPCID_SINGLE = 1,      /* single-context: every entry of one PCID */
	INVPCID_ALL_GLOBAL = 2,  /* all contexts, global entries included */
	INVPCID_ALL = 3,         /* all contexts except global entries */
};

/*
 * INVPCID of @type for @pcid (types 0, 1) and linear address @va (type 0).
 * Type 0 removes the TLB entries of @pcid for the page holding @va (of any
 * size; a 1G page cached as fractures: every fracture, for another PCID's
 * page every entry of that PCID in the 1G region, as the SDM allows) and all
 * of @pcid's PWC entries; type 1 all of @pcid's TLB and PWC entries; types 2
 * and 3 everything (no entry is global here). Returns the entries removed.
 */
unsigned mmu_invpcid(struct mmu *m, enum invpcid_type type, unsigned pcid, vaddr_t va);

/*
 * What a page fault itself invalidates (SDM Vol. 3A §4.10.4.1, "page faults"):
 * the TLB entries for the page holding @va and the paging-structure-cache
 * entries that would be used for @va. No INVLPG, so no tlb_invalidations: the
 * kernel's write fault that only upgrades a PTE in place (wp_page_reuse(), x86
 * ptep_set_access_flags()) issues no flush and relies on this.
 */
void mmu_fault_invalidate(struct mmu *m, vaddr_t va);

/*
 * Every TLB array and PWC well formed; every valid L1 and STLB entry translates
 * as the page table does (same size, same frame); every PWC entry points at the
 * table the page table has there; the memo names a page its L1 array holds.
 * Only the current PCID's entries are compared with m->pt: another PCID's may
 * be stale by design (its mm's tlb_gen says so, and its next CR3 load flushes
 * them); mmu_check_pcid() checks them against their own table. Aborts (BUG_ON).
 */
void mmu_check_invariants(const struct mmu *m);

/*
 * Every valid TLB and PWC entry of PCID @pcid translates as @pt does (a test's
 * check of an address space that is not current). Aborts (BUG_ON).
 */
void mmu_check_pcid(const struct mmu *m, unsigned pcid, const struct pagetable *pt);

/* The valid TLB (L1 and STLB) entries of PCID @pcid. */
unsigned mmu_pcid_entries(const struct mmu *m, unsigned pcid);

#endif
