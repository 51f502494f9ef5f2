/*
 * core.h - the overlap core (cpu.model: overlap): when the references that
 * missed complete, and how long the core waited for them. See core.c.
 */
#ifndef MMUSIM_CORE_H
#define MMUSIM_CORE_H

#include <stdbool.h>

#include "cache.h"
#include "config.h"
#include "types.h"

/*
 * What the MMU reports about one lookup that cost more than an L1 TLB hit or
 * went to the cache (mmu.h, m->timing): its side, whether a store (@modify:
 * the store half of a read-modify-write, whose load half is the same
 * instruction), the L1-miss + STLB probe latency, whether it walked and the
 * walk's cycles (PWC probes + entry reads), and, with cache.data_refs, the
 * data access's latency and the level that served it (CL_L1D .. CL_NR = DRAM;
 * @data false without one).
 */
struct core_ref {
	bool ifetch, write, modify, walked, data;
	unsigned level;
	cycles_t t_stlb, t_walk, t_data;
};

/* One reference of the window that completes late (an event). */
struct core_ev {
	uint64_t insn;  /* its instruction's number (sim_now()'s count, from 1) */
	uint64_t seq;   /* loads (and modifies) up to and including it */
	double c;       /* completion: its value is there (a store: its address is translated) */
	double r;       /* retirement */
	float ftr, fdt; /* the translation and data shares of what its retirement waited for */
	bool load;      /* it produces a value (a load, or a modify) */
};

struct core {
	/* the machine: cpu.cpi, 1 / cpu.width, cpu.rob, cpu.store_buffer */
	double cpi, ret_step;
	uint64_t rob;
	unsigned sb_cap;
	/* walk.walkers and cache.*.mshrs: each entry the time it is free again */
	unsigned nwalkers, nmshr[CL_NR];
	double *walker, *mshr[CL_NR];

	/* the dispatch clock: D(x) = x * cpi + stall + serial_in */
	double stall;
	double serial_in;     /* kernel and hypervisor cycles taken into the clock */
	cycles_t serial_seen; /* the sim's serial counters when last taken in */

	/* the window: events in instruction order, a ring (mask = cap - 1) */
	struct core_ev *ev;
	size_t cap, head, n;
	struct core_ev front; /* the last event that left the window (retired) */

	/* the store buffer: drain times of its stores, oldest first (a ring) */
	double *sb;
	float *sb_ftr;
	size_t sb_head, sb_n, sb_mask; /* (sb_mask + 1: a power of two >= cpu.store_buffer) */
	double sb_last; /* the youngest store's drain (stores drain in order) */

	/* an R_DEP whose reference completes late: its event, for the MMU's report */
	bool dep_live, dep_sb;
	uint64_t dep_ord; /* the data reference it qualifies (data_ord below) */
	double dep_p;     /* when the load it depends on completes */
	float dep_ftr, dep_fdt;

	/* counts that survive a warm-up's reset of the sim's (roi.c) */
	uint64_t ld_base, dr_base;

	/*
	 * The timed memory (cache.c's timed hierarchy; NULL: none): its last
	 * access's prefetches and write-backs are timed here. The DRAM bus: when it
	 * is free again, and the cycles a line holds it (cache.line /
	 * cache.dram_bandwidth; 0: unlimited). lat[]: the latency of a prefetch
	 * served by each level (CL_NR: DRAM).
	 */
	struct cache *mem;
	double bus, xfer;
	double lat[CL_NR + 1];

	/* the measured stretch: its start and its stalls */
	double t0;
	double st_tr, st_data; /* dispatch stalls charged to translation, to data */
};

/* Build @c for @cfg (cpu.model overlap). 0, or -1 on host OOM (core_free() frees). */
int core_init(struct core *c, const struct sim_config *cfg);

/*
 * Time @mem's prefetches, write-backs and DRAM transfers (the timed hierarchy,
 * cache_init_timed(); @cfg its machine). After core_init().
 */
void core_set_memory(struct core *c, struct cache *mem, const struct sim_config *cfg);

/*
 * The DRAM bus of @c: a line transfer that can end no earlier than @ready
 * ends at max(@ready, the bus's free time + one line's transfer), and holds
 * the bus until then; its end. (Exposed for the unit tests.)
 */
double core_bus_transfer(struct core *c, double ready);
void core_free(struct core *c);

/*
 * The reference of instruction @insn whose lookup @ref describes. @serial: the
 * sim's kernel and hypervisor cycles so far (faults, compaction, reclaim, VM
 * exits: they stop the core, added to its clock); @loads: loads and modifies
 * so far, this one included; @dord: data references so far, this one included.
 */
void core_ref(struct core *c, uint64_t insn, cycles_t serial, uint64_t loads, uint64_t dord,
	      const struct core_ref *ref);

/*
 * An R_DEP before the reference of instruction @insn: it depends on the @d-th
 * most recent load (@loads loads so far); the reference is data reference
 * @dord + 1, a load or modify if @next_load, a store or modify if @next_store.
 */
void core_dep(struct core *c, uint64_t insn, cycles_t serial, uint64_t loads, uint64_t dord,
	      uint64_t d, bool next_load, bool next_store);

/* The dispatch clock at instruction @insn (sim_now() under overlap). */
cycles_t core_now(const struct core *c, uint64_t insn, cycles_t serial);

/*
 * A warm-up ended at instruction @insn: the measured stretch starts at the
 * dispatch clock now, its stalls from 0; the sim's counters are about to be
 * zeroed (@loads, @dord, @serial their values now).
 */
void core_reset(struct core *c, uint64_t insn, cycles_t serial, uint64_t loads, uint64_t dord);

/*
 * The end of the run at instruction @insn: the time the last instruction
 * retires, from the measured stretch's start, and its stalls (cycles). Leaves
 * the window empty.
 */
void core_end(struct core *c, uint64_t insn, cycles_t serial, cycles_t *total, cycles_t *st_tr,
	      cycles_t *st_data);

#endif
