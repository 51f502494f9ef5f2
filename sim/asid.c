/*
 * asid.c - x86-64 context-switch TLB management as Linux 6.18 does it
 * (arch/x86/mm/tlb.c), for one CPU.
 *
 * Each CPU has TLB_NR_DYN_ASIDS (6) dynamic ASIDs; ASID a runs as PCID a + 1
 * (kern_pcid()). cpu_tlbstate.ctxs[a] remembers the mm (ctx_id) that last
 * held slot a and the generation of that mm's page tables its TLB entries
 * reflect (tlb_gen). switch_mm_irqs_off() to another mm calls
 * choose_new_asid(): a slot whose ctx_id is the mm's is reused, flushed only
 * if its tlb_gen is behind the mm's; else the slot next_asid names is taken
 * (round robin, wrapping to 0 after the sixth) and flushed. So seven mms
 * round-robin on one CPU flush at every switch, six only on their first
 * round. A flush request for an mm (flush_tlb_mm_range()) bumps its tlb_gen;
 * when the mm is loaded, flush_tlb_func() flushes now and the slot catches
 * up; when it is not, the slot stays behind and the mm's next switch flushes.
 * Without X86_FEATURE_PCID every switch uses ASID 0 and flushes.
 *
 * What a flush does to the hardware is mmu_load_cr3()'s (MOV to CR3 with the
 * PCID, bit 63 set when no flush is needed: build_cr3_noflush()).
 *
 * Global ASIDs (CONFIG_BROADCAST_TLB_FLUSH, AMD INVLPGB; since Linux 6.15):
 * consider_global_asid() gives one only to an mm active on 4 or more CPUs at
 * once (mm_active_cpus_exceeds(mm, 3)), and it runs only from
 * flush_tlb_mm_range()'s path for flushes that reach other CPUs. On a machine
 * of one CPU no mm ever gets one: every mm uses a dynamic ASID, as modelled.
 *
 * Leaves out: PTI (Meltdown's page-table isolation, off on CPUs not affected:
 * with it each ASID has a second, user PCID, user_pcid(), flushed lazily on
 * return to user space; mmusim caches no kernel translations), lazy TLB mode
 * for kernel threads (enter_lazy_tlb(): khugepaged and kswapd run on the
 * loaded mm without a CR3 load, which is what the machine does when it runs
 * them between switches), LAM, IBPB on switches, mm_cpumask bookkeeping (one
 * CPU), and reclaim's deferred batch (arch_tlbbatch_should_defer() is false
 * when no other CPU is in the mm's cpumask: one CPU flushes at once).
 */
#include "asid.h"

void asid_cpu_init(struct asid_cpu *c, bool pcid)
{
	*c = (struct asid_cpu){ .loaded_mm = NULL, .loaded_mm_asid = 0, .next_asid = 1, .pcid = pcid };
	c->ctxs[0].ctx_id = ASID_INIT_MM_CTX_ID;
}

void asid_mm_init(struct asid_mm *mm, uint64_t *last_mm_ctx_id)
{
	mm->ctx_id = ++*last_mm_ctx_id;
	mm->tlb_gen = 0;
}

/*
 * choose_new_asid(): @next's ASID on @c and whether its entries must go.
 * Without PCIDs, ASID 0 and a flush.
 */
static unsigned choose_new_asid(struct asid_cpu *c, const struct asid_mm *next, uint64_t next_tlb_gen,
				bool *need_flush)
{
	unsigned asid;

	if (!c->pcid) {
		*need_flush = true;
		return 0;
	}
	for (asid = 0; asid < TLB_NR_DYN_ASIDS; asid++) {
		if (c->ctxs[asid].ctx_id != next->ctx_id)
			continue;
		*need_flush = c->ctxs[asid].tlb_gen < next_tlb_gen;
		c->st.stale_flushes += *need_flush;
		return asid;
	}
	/* no slot on this CPU: the round robin's next (this_cpu_add_return(next_asid, 1) - 1) */
	asid = c->next_asid++;
	if (asid >= TLB_NR_DYN_ASIDS) {
		asid = 0;
		c->next_asid = 1;
	}
	c->st.asid_allocs++;
	c->st.asid_steals += c->ctxs[asid].ctx_id != 0;
	*need_flush = true;
	return asid;
}

bool asid_switch_mm(struct asid_cpu *c, struct mmu *m, const struct asid_mm *next,
		    struct pagetable *pgd)
{
	uint64_t next_tlb_gen;
	bool need_flush;
	unsigned asid;

	if (c->loaded_mm == next) /* another thread of the loaded mm: no CR3 load */
		return false;
	next_tlb_gen = next->tlb_gen;
	asid = choose_new_asid(c, next, next_tlb_gen, &need_flush);
	if (need_flush) {
		c->ctxs[asid].ctx_id = next->ctx_id;
		c->ctxs[asid].tlb_gen = next_tlb_gen;
	}
	/* load_new_mm_cr3(): build_cr3() flushes the PCID, build_cr3_noflush() sets bit 63 */
	mmu_load_cr3(m, pgd, c->pcid ? asid_kern_pcid(asid) : 0, !need_flush);
	c->loaded_mm = next;
	c->loaded_mm_asid = asid;
	c->st.switches++;
	c->st.switch_flushes += need_flush;
	return need_flush;
}

enum asid_flush asid_flush_tlb_mm_range(struct asid_cpu *c, struct asid_mm *mm)
{
	uint64_t new_tlb_gen = ++mm->tlb_gen; /* inc_mm_tlb_gen() */
	struct asid_ctx *ctx;
	uint64_t local_tlb_gen;

	c->st.flush_requests++;
	if (c->loaded_mm != mm) { /* not loaded here: its slot (if any) stays behind */
		c->st.deferred++;
		return ASID_FLUSH_NONE;
	}
	/* flush_tlb_func(), local: partial only if this flush alone brings the slot up to date */
	ctx = &c->ctxs[c->loaded_mm_asid];
	local_tlb_gen = ctx->tlb_gen;
	ctx->tlb_gen = new_tlb_gen;
	return new_tlb_gen == local_tlb_gen + 1 ? ASID_FLUSH_PARTIAL : ASID_FLUSH_FULL;
}

void asid_check_invariants(const struct asid_cpu *c, const struct mmu *m)
{
	BUG_ON(c->next_asid < 1 || c->next_asid > TLB_NR_DYN_ASIDS);
	BUG_ON(c->loaded_mm_asid >= TLB_NR_DYN_ASIDS);
	for (unsigned a = 0; a < TLB_NR_DYN_ASIDS; a++)
		for (unsigned b = a + 1; b < TLB_NR_DYN_ASIDS; b++)
			BUG_ON(c->ctxs[a].ctx_id && c->ctxs[a].ctx_id == c->ctxs[b].ctx_id);
	if (!c->loaded_mm)
		return;
	BUG_ON(c->ctxs[c->loaded_mm_asid].ctx_id != c->loaded_mm->ctx_id);
	/* the loaded mm's slot is never ahead of it, and the hardware runs its PCID */
	BUG_ON(c->ctxs[c->loaded_mm_asid].tlb_gen > c->loaded_mm->tlb_gen);
	BUG_ON(m && m->pcid != (c->pcid ? asid_kern_pcid(c->loaded_mm_asid) : 0));
}
