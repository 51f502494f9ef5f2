/*
 * virt.h - the hypervisor and the host kernel under a guest (virt.mode nested
 * or shadow; sim/virt.c). struct sim of the guest owns one struct virt.
 */
#ifndef MMUSIM_VIRT_H
#define MMUSIM_VIRT_H

#include "config.h"
#include "err.h"
#include "mmu.h"
#include "pagetable.h"
#include "stats.h"
#include "types.h"

struct sim;

/* Where the host process maps guest-physical 0 (1 GiB aligned: host pages of any size line up). */
#define VIRT_HBASE (1ULL << 40)

struct virt {
	enum virt_mode mode;
	struct sim *host;     /* the host kernel: a second kernel model (host.os.*) */
	vaddr_t hbase;        /* host VA of guest-physical 0 */
	uint64_t nr_gframes;  /* guest frames (os.memory / 4 KiB) */
	/* shadow */
	struct pagetable spt; /* guest-virtual -> host-physical, walked by the hardware */
	uint8_t *shadowed;    /* per guest frame: a guest table shadow entries were built from */
	/* counters (copied into the report by virt_finish()) */
	uint64_t shadow_faults, pte_writes, zapped, shadow_guest_reads, host_faults;
	cycles_t cyc_exits; /* VM exits: shadow faults, trapped writes (virt.cost.exit each) */
	cycles_t cyc_reads; /* the hypervisor's reads of guest tables on shadow faults */
	struct stats host_base; /* the host's counters at the last warm-up reset */
};

/*
 * Build the host kernel and, for shadow, the shadow table; point @s's MMU at
 * them (called by sim_init() when virt.mode is not none). 0, or -1 with @e.
 */
int virt_init(struct sim *s, struct err *e);
void virt_destroy(struct sim *s);

/* Host background work due by the guest's simulated time (host khugepaged). 0 or -1 (s->err). */
int virt_tick(struct sim *s);

/*
 * The guest's #PF handler for @va (sim_fault_hook()), then the host's backing of
 * what it mapped (guest zeroing): a fault with no hardware walk (sim_touch()). 0 or -1.
 */
int virt_guest_fault(struct sim *s, vaddr_t va, bool write, bool wp);

/* A guest page-table frame went back to the guest's allocator. */
void virt_table_freed(struct sim *s, pfn_t pfn);

/* The virtual machine's counters (roi.c saves them around work it does not count). */
struct virt_counts {
	uint64_t shadow_faults, pte_writes, zapped, shadow_guest_reads, host_faults;
	cycles_t cyc_exits, cyc_reads;
	struct stats host; /* the host kernel's report */
	bool nested;
	struct mmu_nested_stats n;
};
void virt_counts_save(const struct sim *s, struct virt_counts *c);
/* Put back the counters of @c (the host's gauges stay as they are now: state). */
void virt_counts_restore(struct sim *s, const struct virt_counts *c);

/* A warm-up's reset (roi.c): the virtual machine's counters start again. */
void virt_reset_counts(struct sim *s);

/* The report's virt.*, walk.guest/host and host.* counters (sim_finish()). */
void virt_finish(struct sim *s);

/* The shadow table agrees with guest and host; the host's own invariants. Aborts. */
void virt_check_invariants(struct sim *s);

#endif
