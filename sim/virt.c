/*
 * virt.c - the hypervisor and the host kernel under a guest (virt.mode nested
 * or shadow). The guest is struct sim as on bare metal: its kernel model owns
 * the guest's page table and guest-physical memory (os.memory). This file adds:
 *
 * The host kernel. A second instance of the kernel model (struct sim) whose
 * config is the guest's with the host.os.* keys: memory (default twice the
 * guest's), how guest memory is backed (host.os.mode: base pages, THP, or a
 * hugetlbfs pool of the guest's size, as QEMU's -mem-path), THP enabled/
 * defrag, khugepaged and fragmentation. Guest memory is one private anonymous
 * mapping of the host process, as QEMU and Firecracker allocate guest RAM,
 * at host VA VIRT_HBASE (1 GiB aligned), madvised MADV_HUGEPAGE when
 * host.os.madvise is set (QEMU, softmmu/physmem.c ram_block_add():
 * qemu_madvise(..., QEMU_MADV_HUGEPAGE)). The host faults its pages in when
 * the guest first uses them: a nested walk's NPT/EPT violation, the guest's
 * zeroing of every page its fault maps (clear_page() over the whole page:
 * a guest 2 MiB page over host 4 KiB pages is 512 host faults), the
 * hypervisor's reads of guest tables. Host khugepaged runs on the guest's
 * simulated time (virt_tick(), once a batch), collapsing guest memory; every
 * change of the host's mapping reaches the guest's MMU as KVM's MMU notifier
 * does: the nested TLB and host PWCs and the guest's TLBs are flushed
 * (kvm_flush_remote_tlbs()), shadow entries no longer matching are zapped.
 *
 * Nested paging is hardware (mmu_nested.c); here only its fault hooks.
 *
 * Shadow paging (KVM's shadow MMU without NPT/EPT, arch/x86/kvm/mmu/, and
 * PVM, which builds on it): the hardware walks a shadow table from guest
 * virtual to host physical addresses (the MMU's page table is the shadow
 * table; its frames are the host's). A walk that finds no shadow entry exits
 * (a shadow fault, virt.cost.exit cycles): the hypervisor reads the guest's
 * table (each entry a load through the caches at its host-physical address,
 * setting A/D as FNAME(walk_addr_generic)() does); if the guest has no
 * translation it injects the #PF, the guest's kernel handles it, and the
 * access exits again when it retries (a second shadow fault; the guest's PTE
 * write between them traps, as below: "three vmexits for a single guest page
 * fault", KVM commit 0028425f647b); then it installs a shadow leaf of the
 * smaller of the guest's and the host's pages, writable when the guest's is.
 * Every guest table a shadow entry was built from is write-protected: each
 * guest write of one of its entries traps (virt.cost.exit) and zaps the shadow
 * entries under it (kvm_mmu_track_write() -> mmu_page_zap_pte()), flushing
 * them from the TLB.
 *
 * Simplifications, each for lack of a measured reason to model it:
 *  - KVM's unsync shadow pages (a last-level guest table left writable until
 *    the guest's next INVLPG or CR3 write) are not modelled: every write to a
 *    shadowed table traps, as the model and pre-unsync KVM do.
 *  - A guest table stays write-protected until the guest frees its frame
 *    (KVM unprotects it when its shadow page is zapped).
 *  - Guest A/D bits are set when a shadow entry is built, not on later hits.
 *  - The host faults guest memory in for writing (the guest zeroes what it
 *    maps); no host zero page, no host swap (host.os.* has no swap key).
 *  - A host mapping change in shadow mode rescans the shadow table (KVM uses
 *    its reverse map gfn -> sptes): same result, the scan's cost is ours.
 *  - One vCPU; the guest's INVLPG and CR3 writes cost no exit of their own.
 */
#include <stdlib.h>
#include <string.h>

#include "buddy.h"
#include "fault.h"
#include "khugepaged.h"
#include "mmap.h"
#include "sim.h"
#include "virt.h"

static inline uint64_t pages_of(enum page_size ps)
{
	return 1ULL << (page_shift_of(ps) - PAGE_SHIFT);
}

static inline uint64_t bytes_of(enum page_size ps)
{
	return 1ULL << page_shift_of(ps);
}

/* The host kernel's cycles the guest waits for when it faults guest memory in. */
static cycles_t host_cost(const struct sim *h)
{
	return h->st.cyc_fault + h->st.cyc_compaction + h->st.cyc_reclaim;
}

static int host_failed(struct sim *s)
{
	const char *why = s->virt->host->k.fail_msg;

	return sim_fail(s, "the host ran out of memory backing the guest (host.os.memory): %s",
			*why ? why : "no free frame for the shadow table");
}

/* The host's fault at @hva, its cycles charged to the guest. 0 or -1 (s->k.err). */
static int host_fault_at(struct sim *s, vaddr_t hva)
{
	struct sim *h = s->virt->host;
	cycles_t c0 = host_cost(h);

	if (sim_fault(&h->k, hva, true))
		return host_failed(s);
	s->cyc_virt += host_cost(h) - c0;
	return 0;
}

/*
 * The host frame of guest frame @gfn, faulted in if the host has none yet:
 * *@hfn and the host page's size *@hps. false on failure (s->k.err). The
 * hypervisor gets it as KVM does, by GUP (hva_to_pfn()), whose FOLL_TOUCH marks
 * the page accessed (mm/gup.c): its host entry is made young, so host
 * khugepaged sees the guest's memory in use (it wants a young PTE).
 */
static bool host_touch(struct sim *s, pfn_t gfn, pfn_t *hfn, enum page_size *hps)
{
	struct virt *v = s->virt;
	vaddr_t hva = v->hbase + ((vaddr_t)gfn << PAGE_SHIFT);
	struct pt_path p;
	pfn_t first;

	if (!pt_lookup(&v->host->k.mm->pt, hva, hps, &first, NULL)) {
		v->host_faults++;
		if (host_fault_at(s, hva))
			return false;
		BUG_ON(!pt_lookup(&v->host->k.mm->pt, hva, hps, &first, NULL));
	}
	pt_walk(&v->host->k.mm->pt, hva, false, v->host->k.mm->pt.levels, NULL, &p); /* (sets A) */
	*hfn = first + ((hva >> PAGE_SHIFT) & (pages_of(*hps) - 1));
	return true;
}

/* The guest's kernel zeroed (filled) the page it mapped at @va: the host backs all of it. */
static int back_guest_page(struct sim *s, vaddr_t va)
{
	enum page_size gps, hps;
	pfn_t first, hfn;

	if (!pt_lookup(&s->k.mm->pt, va, &gps, &first, NULL))
		return 0; /* (a fault that mapped nothing here: nothing to back) */
	for (pfn_t g = first; g < first + pages_of(gps);) {
		if (!host_touch(s, g, &hfn, &hps))
			return -1;
		g = (g + pages_of(hps)) & ~(pfn_t)(pages_of(hps) - 1);
	}
	return 0;
}

/* The guest's #PF handler, then the host backing of what it mapped. */
static int guest_fault(struct sim *s, vaddr_t va, bool write, bool wp)
{
	if (sim_fault_hook(&s->k, va, write, wp))
		return -1;
	return back_guest_page(s, va);
}

int virt_guest_fault(struct sim *s, vaddr_t va, bool write, bool wp)
{
	return guest_fault(s, va, write, wp);
}

/* --- nested: the MMU's hooks --------------------------------------------- */

static int nested_guest_fault(void *os, vaddr_t va, bool write, bool wp)
{
	return guest_fault(sim_of(os), va, write, wp);
}

/* An NPT/EPT violation at host VA @hva (mmu_nested.c counts it). */
static int nested_host_fault(void *os, vaddr_t hva, bool write, bool wp)
{
	(void)write;
	(void)wp;
	return host_fault_at(os, hva);
}

/* --- shadow ------------------------------------------------------------- */

/*
 * Remove the shadow leaves in [@lo, @hi) (widened to whole leaves) and their
 * TLB entries. Returns the leaves removed.
 */
static uint64_t zap(struct sim *s, vaddr_t lo, vaddr_t hi)
{
	struct virt *v = s->virt;
	enum page_size ps;
	pfn_t pfn;
	uint64_t n, tables = v->spt.nr_tables;

	if (pt_lookup(&v->spt, lo, &ps, &pfn, NULL))
		lo &= ~(bytes_of(ps) - 1);
	if (pt_lookup(&v->spt, hi - 1, &ps, &pfn, NULL))
		hi = ((hi - 1) | (bytes_of(ps) - 1)) + 1;
	n = pt_unmap_range(&v->spt, lo, hi, true, NULL, NULL);
	v->zapped += n;
	if (n || v->spt.nr_tables != tables)
		mmu_invalidate_range(&s->mmu, lo, hi); /* and the PWCs: tables may be gone */
	return n;
}

/* A guest write of the @level entry mapping @va in table @table (the page-table hook). */
static void pte_write(void *ctx, pfn_t table, vaddr_t va, unsigned level)
{
	struct sim *s = ctx;
	struct virt *v = s->virt;
	vaddr_t end = va + (1ULL << (PAGE_SHIFT + 9 * (level - 1)));

	if (!v->shadowed[table])
		return;
	v->pte_writes++;
	v->cyc_exits += s->cfg.virt.exit;
	s->cyc_virt += s->cfg.virt.exit;
	zap(s, va, end < va ? s->k.va_limit : end);
}

/*
 * The hypervisor reads the guest's entries of @p: host-backed, each a load
 * through the caches; each table becomes shadowed. false on failure.
 */
static bool read_guest_path(struct sim *s, const struct pt_path *p)
{
	struct virt *v = s->virt;

	for (unsigned k = 0; k < p->nr; k++) {
		pfn_t gfn = (pfn_t)(p->pa[k] >> PAGE_SHIFT), hfn;
		enum page_size hps;
		cycles_t c = 0;

		if (!host_touch(s, gfn, &hfn, &hps))
			return false;
		cache_access(&s->mmu.cache, (paddr_t)hfn << PAGE_SHIFT | (p->pa[k] & (PAGE_SIZE - 1)), &c);
		s->cyc_virt += c;
		v->cyc_reads += c;
		v->shadow_guest_reads++;
		v->shadowed[gfn] = 1;
	}
	return true;
}

static void exit_once(struct sim *s)
{
	struct virt *v = s->virt;

	v->shadow_faults++;
	v->cyc_exits += s->cfg.virt.exit;
	s->cyc_virt += s->cfg.virt.exit;
}

/* The MMU's fault hook in shadow mode: a shadow fault (see the file's header). */
static int shadow_fault(void *os, vaddr_t va, bool write, bool wp)
{
	struct sim *s = sim_of(os);
	struct virt *v = s->virt;
	enum page_size gps, hps, sps;
	struct pt_path p;
	pfn_t gfn, hfn;
	vaddr_t base;

	(void)wp; /* the guest's entry says which: not present, or read-only */
	if (va >= s->k.va_limit)
		return sim_fault_hook(&s->k, va, write, false); /* (fails: beyond the paging levels) */
	exit_once(s);
	for (int tries = 0;; tries++) {
		BUG_ON(tries > 3);
		pt_walk(&s->k.mm->pt, va, write, s->k.mm->pt.levels, NULL, &p);
		if (!read_guest_path(s, &p))
			return -1;
		if (p.present && !(write && !(p.entry[p.nr - 1] & PTE_RW)))
			break;
		/* inject the #PF; the guest's retry exits again */
		if (guest_fault(s, va, write, p.present))
			return -1;
		exit_once(s);
	}
	gps = p.ps;
	gfn = p.pfn + ((va >> PAGE_SHIFT) & (pages_of(gps) - 1));
	if (!host_touch(s, gfn, &hfn, &hps))
		return -1;
	sps = gps < hps ? gps : hps;
	base = va & ~(bytes_of(sps) - 1);
	if (!pt_slot_empty(&v->spt, base, sps))
		zap(s, base, base + bytes_of(sps)); /* a read-only leaf a store met, or smaller pages */
	if (pt_map(&v->spt, base, sps, hfn - ((va >> PAGE_SHIFT) & (pages_of(sps) - 1)),
		   p.entry[p.nr - 1] & PTE_RW))
		return v->spt.host_oom ? kernel_oom(&s->k, va) : host_failed(s);
	return 0;
}

/* The shadow table's frames: the host's (KVM's shadow pages are host kernel memory). */
static pfn_t spt_alloc(void *ctx)
{
	struct sim *h = ctx;

	return buddy_alloc_mt(&h->k.buddy, 0, MIGRATE_UNMOVABLE);
}

static void spt_free(void *ctx, pfn_t pfn)
{
	struct sim *h = ctx;

	buddy_free(&h->k.buddy, pfn, 0);
}

struct resync_ctx {
	struct sim *s;
	vaddr_t *va;
	size_t n, cap;
};

/* Does the shadow leaf at @va still say what guest and host say? */
static bool shadow_matches(struct sim *s, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct virt *v = s->virt;
	enum page_size gps, hps;
	pfn_t first, hfn;
	uint64_t ge;
	vaddr_t hva;

	if (!pt_lookup(&s->k.mm->pt, va, &gps, &first, &ge))
		return false;
	hva = v->hbase + ((vaddr_t)(first + ((va >> PAGE_SHIFT) & (pages_of(gps) - 1))) << PAGE_SHIFT);
	if (!pt_lookup(&v->host->k.mm->pt, hva, &hps, &hfn, NULL))
		return false;
	hfn += (hva >> PAGE_SHIFT) & (pages_of(hps) - 1);
	return ps == (gps < hps ? gps : hps) && pfn == hfn && !(entry & PTE_RW) == !(ge & PTE_RW);
}

static void resync_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct resync_ctx *c = ctx;

	if (shadow_matches(c->s, va, ps, pfn, entry))
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		vaddr_t *p = realloc(c->va, cap * sizeof(*p));

		if (!p)
			return; /* (host OOM: the leaf stays; the invariants would say so) */
		c->va = p;
		c->cap = cap;
	}
	c->va[c->n++] = va;
}

/*
 * The host changed its mapping of guest memory (its TLB flush of [start, end)
 * of its address space, or of everything): the MMU notifier.
 */
static void host_inval(void *ctx, vaddr_t start, vaddr_t end, bool all)
{
	struct sim *s = ctx;
	struct virt *v = s->virt;
	struct resync_ctx c = { s, NULL, 0, 0 };

	(void)start;
	(void)end;
	(void)all;
	if (v->mode == VIRT_NESTED) {
		mmu_host_invalidate(&s->mmu);
		return;
	}
	pt_for_each_leaf(&v->spt, resync_leaf, &c);
	for (size_t i = 0; i < c.n; i++)
		zap(s, c.va[i], c.va[i] + PAGE_SIZE);
	free(c.va);
}

/* --- set-up ------------------------------------------------------------- */

/* The host kernel's config: the guest's machine, host.os.* for its kernel. */
static void host_config(const struct sim_config *g, struct sim_config *hc)
{
	const struct virt_cfg *v = &g->virt;

	*hc = *g;
	hc->memory = v->host_memory ? v->host_memory : 2 * g->memory;
	hc->mode = v->host_mode;
	hc->thp = v->host_thp;
	hc->khugepaged = v->host_khugepaged;
	hc->fragmentation = v->host_fragmentation;
	hc->levels = v->levels;
	/* -mem-path on hugetlbfs: a persistent pool of the guest's size, of 2M or 1G
	 * pages (the mount's pagesize=, which is then the hstate of guest memory) */
	hc->hugetlb_pages = 0;
	hc->hugetlb_1g_pages = 0;
	hc->hugetlb_default_1g = v->host_mode == MODE_HUGETLBFS && v->host_hugetlb_1g;
	if (v->host_mode == MODE_HUGETLBFS && v->host_hugetlb_1g)
		hc->hugetlb_1g_pages = (unsigned)(g->memory >> PUD_SHIFT);
	else if (v->host_mode == MODE_HUGETLBFS)
		hc->hugetlb_pages = (unsigned)(g->memory >> PMD_SHIFT);
	hc->swap_size = 0;
	hc->data_refs = false;
	hc->implicit.enabled = false;
	memset(&hc->roi, 0, sizeof(hc->roi));
	hc->virt.mode = VIRT_NONE;
}

static int host_event(struct sim *s, struct os_event *ev, struct err *e)
{
	if (sim_event(s->virt->host, ev)) {
		*e = s->virt->host->k.err;
		return -1;
	}
	return 0;
}


static int hv_fault(void *ctx, vaddr_t va, bool write, bool wp)
{
	return virt_guest_fault(ctx, va, write, wp);
}

static void hv_table_freed(void *ctx, pfn_t pfn)
{
	virt_table_freed(ctx, pfn);
}

/* What the guest kernel calls the hypervisor for (kernel.h). */
static const struct kernel_hv guest_hv = { hv_fault, hv_table_freed };
int virt_init(struct sim *s, struct err *e)
{
	struct virt *v = calloc(1, sizeof(*v));
	struct sim_config hc;
	struct os_event ev = { .kind = EV_MMAP, .prot = 3, .fd = -1,
			       .flags = MAP_PRIVATE_ | MAP_ANONYMOUS_ | MAP_FIXED_ };
	struct sim *h;

	if (!v || !(v->host = calloc(1, sizeof(*v->host))))
		goto oom;
	s->virt = v;
	s->k.hv = &guest_hv;
	s->k.hv_ctx = s;
	v->mode = s->cfg.virt.mode;
	v->hbase = VIRT_HBASE;
	v->nr_gframes = s->k.buddy.nr_pages;
	h = v->host;
	host_config(&s->cfg, &hc);
	if (sim_init(h, &hc, e))
		return -1;
	h->k.trace_name = "host";
	ev.addr = v->hbase;
	ev.len = s->cfg.memory;
	if (host_event(s, &ev, e))
		return -1;
	if (hc.mode == MODE_THP && s->cfg.virt.host_madvise) {
		struct os_event ma = { .kind = EV_MADVISE, .fd = -1, .addr = v->hbase,
				       .len = s->cfg.memory, .advice = MADV_HUGEPAGE_ };

		if (host_event(s, &ma, e))
			return -1;
	}
	h->mmu.inval_hook = host_inval;
	h->mmu.inval_ctx = s;
	if (v->mode == VIRT_NESTED) {
		if (mmu_nested_init(&s->mmu, &s->cfg, &h->k.mm->pt, v->hbase, nested_host_fault, s))
			goto oom;
		s->mmu.fault = nested_guest_fault;
		return 0;
	}
	{
		struct pt_frame_ops ops = { spt_alloc, spt_free, h };

		v->shadowed = calloc(v->nr_gframes, 1);
		if (!v->shadowed || pt_init(&v->spt, s->cfg.levels, &ops))
			goto oom;
	}
	s->mmu.pt = &v->spt;
	s->mmu.fault = shadow_fault;
	s->k.mm->pt.on_write = pte_write;
	s->k.mm->pt.on_write_ctx = s;
	return 0;
oom:
	return err_host(e, "mmusim", 0, 0, "out of host memory building the virtual machine");
}

void virt_destroy(struct sim *s)
{
	struct virt *v = s->virt;

	if (!v)
		return;
	if (v->spt.root) {
		pt_unmap_range(&v->spt, 0, s->k.va_limit, true, NULL, NULL);
		pt_destroy(&v->spt);
	}
	if (v->host) {
		sim_destroy(v->host);
		free(v->host);
	}
	free(v->shadowed);
	free(v);
	s->virt = NULL;
}

void virt_table_freed(struct sim *s, pfn_t pfn)
{
	if (s->virt->shadowed)
		s->virt->shadowed[pfn] = 0;
}

int virt_tick(struct sim *s)
{
	struct sim *h = s->virt->host;
	cycles_t now = sim_now(s), hnow = sim_now(h);

	if (!h->k.thp.mm_registered)
		return 0;
	if (now > hnow)
		h->now_cycles += now - hnow; /* the host's clock is the guest's */
	while (now >= h->k.khugepaged.next_wake && !h->k.failed) {
		cycles_t w = h->k.khugepaged.next_wake;

		khugepaged_do_scan(&h->k);
		if (h->k.khugepaged.next_wake == w)
			break;
	}
	if (h->k.failed)
		return host_failed(s);
	return 0;
}

/* --- counters ------------------------------------------------------------- */

void virt_counts_save(const struct sim *s, struct virt_counts *c)
{
	const struct virt *v = s->virt;

	*c = (struct virt_counts){ .shadow_faults = v->shadow_faults, .pte_writes = v->pte_writes,
				   .zapped = v->zapped, .shadow_guest_reads = v->shadow_guest_reads,
				   .host_faults = v->host_faults, .cyc_exits = v->cyc_exits,
				   .cyc_reads = v->cyc_reads, .host = v->host->st,
				   .nested = s->mmu.nested != NULL };
	if (s->mmu.nested)
		c->n = s->mmu.nested->st;
}

void virt_counts_restore(struct sim *s, const struct virt_counts *c)
{
	struct virt *v = s->virt;
	struct stats host = c->host;

	v->shadow_faults = c->shadow_faults;
	v->pte_writes = c->pte_writes;
	v->zapped = c->zapped;
	v->shadow_guest_reads = c->shadow_guest_reads;
	v->host_faults = c->host_faults;
	v->cyc_exits = c->cyc_exits;
	v->cyc_reads = c->cyc_reads;
	roi_keep_gauges(&host, &v->host->st);
	v->host->st = host;
	if (c->nested)
		s->mmu.nested->st = c->n;
}

void virt_reset_counts(struct sim *s)
{
	struct virt *v = s->virt;

	v->shadow_faults = v->pte_writes = v->zapped = v->shadow_guest_reads = v->host_faults = 0;
	v->cyc_exits = v->cyc_reads = 0;
	if (s->mmu.nested)
		memset(&s->mmu.nested->st, 0, sizeof(s->mmu.nested->st));
	v->host_base = v->host->st; /* the host's events from here on */
}

struct huge_ctx {
	struct sim *s;
	uint64_t guest, aligned;
};

/* A guest 2 MiB page is aligned when its guest-physical frame lies in one host huge page. */
static void count_huge(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	struct huge_ctx *c = ctx;
	struct virt *v = c->s->virt;
	enum page_size hps;
	pfn_t first;

	(void)va;
	(void)entry;
	if (ps != PS_2M)
		return;
	c->guest++;
	if (pt_lookup(&v->host->k.mm->pt, v->hbase + ((vaddr_t)pfn << PAGE_SHIFT), &hps, &first, NULL) &&
	    hps >= PS_2M)
		c->aligned++;
}

void virt_finish(struct sim *s)
{
	struct virt *v = s->virt;
	struct stats_virt *sv = &s->st.virt;
	struct sim *h = v->host;
	const struct stats *b = &v->host_base;
	struct huge_ctx hc = { s, 0, 0 };

	sim_finish(h);
	memset(sv, 0, sizeof(*sv));
	sv->mode = v->mode;
	if (s->mmu.nested) {
		const struct mmu_nested_stats *n = &s->mmu.nested->st;

		sv->guest_reads = n->guest_reads;
		sv->host_reads = n->host_reads;
		sv->guest_cycles = n->guest_cycles;
		sv->host_cycles = n->host_cycles;
		sv->ntlb.hits = n->ntlb.hits;
		sv->ntlb.misses = n->ntlb.misses;
		for (int i = 0; i < PWC_NR; i++) {
			sv->hpwc[i].hits = n->pwc[i].hits;
			sv->hpwc[i].misses = n->pwc[i].misses;
		}
		sv->host_faults = n->host_faults;
	}
	sv->host_faults += v->host_faults;
	sv->shadow_faults = v->shadow_faults;
	sv->pte_writes = v->pte_writes;
	sv->zapped = v->zapped;
	sv->shadow_guest_reads = v->shadow_guest_reads;
	sv->cyc_exits = v->cyc_exits;
	sv->cyc_reads = v->cyc_reads;
	sv->cyc_host = s->cyc_virt - v->cyc_exits - v->cyc_reads;
	pt_for_each_leaf(&s->k.mm->pt, count_huge, &hc);
	sv->guest_huge = hc.guest;
	sv->aligned_huge = hc.aligned;
	sv->host_pgfault = h->st.pgfault - b->pgfault;
	sv->host_thp_fault_alloc = h->st.thp_fault_alloc - b->thp_fault_alloc;
	sv->host_thp_fault_fallback = h->st.thp_fault_fallback - b->thp_fault_fallback;
	sv->host_thp_collapse_alloc = h->st.thp_collapse_alloc - b->thp_collapse_alloc;
	sv->host_thp_split_pmd = h->st.thp_split_pmd - b->thp_split_pmd;
	sv->host_compact_stall = h->st.compact_stall - b->compact_stall;
	sv->host_pages_collapsed = h->st.khugepaged_pages_collapsed - b->khugepaged_pages_collapsed;
	sv->host_full_scans = h->st.khugepaged_full_scans - b->khugepaged_full_scans;
	sv->host_page_table_pages = h->st.nr_page_table_pages;
	sv->host_shadow_pages = v->spt.nr_tables;
	sv->host_rss_bytes = h->st.rss_bytes;
	sv->host_huge_bytes = h->st.huge_bytes;
	s->st.cyc_virt = s->cyc_virt;
}

/* --- invariants ------------------------------------------------------------ */

static void inv_shadow_leaf(void *ctx, vaddr_t va, enum page_size ps, pfn_t pfn, uint64_t entry)
{
	BUG_ON(!shadow_matches(ctx, va, ps, pfn, entry));
}

void virt_check_invariants(struct sim *s)
{
	struct virt *v = s->virt;

	if (v->mode == VIRT_SHADOW) {
		pt_check_invariants(&v->spt);
		pt_for_each_leaf(&v->spt, inv_shadow_leaf, s);
	}
	sim_check_invariants(v->host);
}
