/*
 * check_virt.c - virtual machines (sim/virt.c, sim/mmu_nested.c): exact entry
 * counts of the two-dimensional walk for every guest/host page-size pair with
 * no translation caches (n guest entries over m host entries read
 * n * (m + 1) + m: 24 for 4 + 4, Bhargava et al., ASPLOS 2008), what the
 * nested TLB, the host stage's PWCs and the guest's PWCs save for every pair
 * too, host khugepaged, host discards and host fragmentation, the TLB entry
 * size (the smaller of the two stages' pages), and shadow paging's faults,
 * trapped guest PTE writes and the shadow entries they zap. Scenarios on the
 * kernel-model fixture (check_common.h: every invariant, the host's and the
 * shadow table's included, after every record).
 */
#include <check.h>
#include <stdio.h>

#include "check_common.h"
#include "check_run.h"
#include "khugepaged.h"
#include "mmap.h"

#define MMAP_2G "SYSCALL[7,1](9) sys_mmap ( 0x0, 2147483648, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
#define DONTNEED_4K(a) "SYSCALL[7,1](28) sys_madvise ( " a ", 4096, 4 ) --> [pre-success] Success(0x0)\n"

/* --set values that remove every translation cache but the TLBs */
#define NO_PWC "walk.pwc.pml4.entries=0", "walk.pwc.pml4.ways=0", "walk.pwc.pdpt.entries=0", \
	"walk.pwc.pdpt.ways=0", "walk.pwc.pde.entries=0", "walk.pwc.pde.ways=0"
#define NO_HPWC "virt.pwc.pml4.entries=0", "virt.pwc.pml4.ways=0", "virt.pwc.pdpt.entries=0", \
	"virt.pwc.pdpt.ways=0", "virt.pwc.pde.entries=0", "virt.pwc.pde.ways=0"

/* (os.mode hugetlbfs backs memory with the default huge page size: 1G set for it) */
static const char *const guest_set[PS_NR][3] = {
	[PS_4K] = { "os.mode=base", "os.hugetlbfs.pages_1g=0", "os.hugetlbfs.default_size=2M" },
	[PS_2M] = { "os.mode=thp", "os.hugetlbfs.pages_1g=0", "os.hugetlbfs.default_size=2M" },
	[PS_1G] = { "os.mode=hugetlbfs", "os.hugetlbfs.pages_1g=1", "os.hugetlbfs.default_size=1G" },
};
static const char *const host_set[PS_NR][2] = {
	[PS_4K] = { "host.os.mode=base", "host.os.hugetlbfs.page_size=2M" },
	[PS_2M] = { "host.os.mode=thp", "host.os.hugetlbfs.page_size=2M" },
	[PS_1G] = { "host.os.mode=hugetlbfs", "host.os.hugetlbfs.page_size=1G" },
};
static const char *const ps_label[PS_NR] = { "4K", "2M", "1G" };
/* entries a walk reads of a 4-level table mapping a page of each size */
static const unsigned reads_of[PS_NR] = { 4, 3, 2 };

struct counts {
	uint64_t reads, guest, host, walks, ntlb_hits, misses[PS_NR];
};

static struct counts now(void)
{
	struct counts c = { S->mmu.st.pte_reads, S->mmu.nested->st.guest_reads,
			    S->mmu.nested->st.host_reads, S->mmu.st.walks, S->mmu.nested->st.ntlb.hits,
			    { 0 } };

	mmu_fold_memo(&S->mmu);
	for (int i = 0; i < PS_NR; i++)
		c.misses[i] = S->mmu.st.l1[SIDE_D].misses[i];
	return c;
}

/* One load of @va after the TLBs are emptied (and the guest's PWCs with @pwcs): its counts. */
static struct counts walk_again(vaddr_t va, bool pwcs)
{
	struct counts a, b;

	if (pwcs) {
		mmu_flush_all(&S->mmu);
	} else {
		tlb_flush_all(&S->mmu.tlb);
		mmu_forget(&S->mmu);
	}
	a = now();
	mmu_access(&S->mmu, va, SIDE_D, false);
	b = now();
	sim_check_invariants(S);
	return (struct counts){ b.reads - a.reads, b.guest - a.guest, b.host - a.host,
				b.walks - a.walks, b.ntlb_hits - a.ntlb_hits,
				{ b.misses[0] - a.misses[0], b.misses[1] - a.misses[1],
				  b.misses[2] - a.misses[2] } };
}

/* Guest page @g over host page @h, no PWC and no nested TLB: n * (m + 1) + m entries. */
START_TEST(nested_reads_every_pair)
{
	enum page_size g = (enum page_size)(_i / PS_NR), h = (enum page_size)(_i % PS_NR);
	unsigned n = reads_of[g], m = reads_of[h];
	enum page_size entry = g < h ? g : h;
	struct counts c;

	run(MMAP_2G " S 40000000,8\n", "virt.mode=nested", "os.memory=2G", guest_set[g][0],
	    guest_set[g][1], guest_set[g][2], host_set[h][0], host_set[h][1], NO_PWC, NO_HPWC,
	    "tlb.l1d.1G.entries=4", "tlb.l1d.1G.ways=4", NULL); /* (Nehalem has no 1G TLB) */
	c = walk_again(0x40000000, true);
	ck_assert_uint_eq(c.walks, 1);
	ck_assert_uint_eq(c.guest, n);
	ck_assert_uint_eq(c.host, n * m + m);
	ck_assert_uint_eq(c.reads, n * (m + 1) + m);
	/* the TLB entry has the smaller page: one L1 miss counted against that size */
	for (int i = 0; i < PS_NR; i++)
		ck_assert_uint_eq(c.misses[i], i == (int)entry);
	{
		enum page_size ps;
		pfn_t pfn;

		ck_assert(mmu_lookup(&S->mmu, 0x40000000, &ps, &pfn));
		ck_assert_int_eq(ps, entry);
	}
	/* a second 4 KiB page of the same guest page: a new walk unless the entry is larger */
	{
		uint64_t w0 = S->mmu.st.walks;

		mmu_access(&S->mmu, 0x40001000, SIDE_D, false);
		mmu_access(&S->mmu, 0x40000000, SIDE_D, false);
		ck_assert_uint_eq(S->mmu.st.walks - w0, entry == PS_4K ? 1 : 0);
	}
	done();
}
END_TEST

/* 5-level paging at either stage or both: 4 * 6 + 5 = 29, 5 * 5 + 4 = 29, 5 * 6 + 5 = 35. */
START_TEST(nested_reads_5_levels)
{
	static const struct {
		const char *guest, *host;
		unsigned n, m;
	} k[] = {
		{ "walk.levels=4", "virt.levels=5", 4, 5 },
		{ "walk.levels=5", "virt.levels=4", 5, 4 },
		{ "walk.levels=5", "virt.levels=5", 5, 5 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
		struct counts c;

		run(MMAP_2G " S 40000000,8\n", "virt.mode=nested", k[i].guest, k[i].host, "os.mode=base",
		    "host.os.mode=base", NO_PWC, NO_HPWC, "walk.pwc.pml5.entries=0", "walk.pwc.pml5.ways=0",
		    "virt.pwc.pml5.entries=0", "virt.pwc.pml5.ways=0", NULL);
		c = walk_again(0x40000000, true);
		ck_assert_uint_eq(c.guest, k[i].n);
		ck_assert_uint_eq(c.host, k[i].n * k[i].m + k[i].m);
		ck_assert_uint_eq(c.reads, k[i].n * (k[i].m + 1) + k[i].m);
		done();
	}
}
END_TEST

/*
 * What each cache saves, for guest page @g over host page @h (every pair), on a
 * walk of a page walked before (so every structure holds what the walk needs;
 * the host backs guest tables and data with pages of one size):
 *  - the nested TLB alone: the n + 1 host translations (each guest table's
 *    frame, the data's) hit; the n guest entries are read;
 *  - the host PWCs alone: each host translation reads only its leaf, n + (n + 1);
 *  - the guest's PWCs alone (kept across the flush: a TLB flush, not INVLPG or
 *    CR3): the longest match gives the last guest table's host-physical
 *    address, 1 guest entry, then the data's host walk, 1 + m;
 *  - all three: 1 guest entry, the data's translation from the nested TLB.
 */
START_TEST(nested_caches)
{
	enum page_size g = (enum page_size)(_i / PS_NR), h = (enum page_size)(_i % PS_NR);
	unsigned n = reads_of[g], m = reads_of[h];
	const struct {
		bool ntlb, hpwc, gpwc;
		unsigned guest, host, ntlb_hits;
	} k[] = {
		{ true, false, false, n, 0, n + 1 },
		{ false, true, false, n, n + 1, 0 },
		{ false, false, true, 1, m, 0 },
		{ true, true, true, 1, 0, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
		const char *ntlb[2] = { k[i].ntlb ? "virt.ntlb.entries=16" : "virt.ntlb.entries=0",
					k[i].ntlb ? "virt.ntlb.ways=16" : "virt.ntlb.ways=0" };
		struct counts c;

#define PAIR "virt.mode=nested", "os.memory=2G", guest_set[g][0], guest_set[g][1], guest_set[g][2], host_set[h][0], \
	host_set[h][1], ntlb[0], ntlb[1]
		if (k[i].gpwc && k[i].hpwc)
			run(MMAP_2G " S 40000000,8\n", PAIR, NULL);
		else if (k[i].gpwc)
			run(MMAP_2G " S 40000000,8\n", PAIR, NO_HPWC, NULL);
		else if (k[i].hpwc)
			run(MMAP_2G " S 40000000,8\n", PAIR, NO_PWC, NULL);
		else
			run(MMAP_2G " S 40000000,8\n", PAIR, NO_PWC, NO_HPWC, NULL);
#undef PAIR
		walk_again(0x40000000, true); /* every structure warm, no fault on the way */
		c = walk_again(0x40000000, !k[i].gpwc);
		ck_assert_msg(c.guest == k[i].guest && c.host == k[i].host && c.ntlb_hits == k[i].ntlb_hits,
			      "guest %s host %s case %zu: guest %llu host %llu ntlb hits %llu", ps_label[g],
			      ps_label[h], i, (unsigned long long)c.guest, (unsigned long long)c.host,
			      (unsigned long long)c.ntlb_hits);
		ck_assert_uint_eq(c.reads, c.guest + c.host);
		done();
	}
}
END_TEST

/*
 * Shadow paging, 4 KiB pages: the first store to a page exits twice (the
 * shadow fault that injects the guest's #PF, and the retry), and the guest's
 * PTE write between them traps once its table is shadowed; the very first
 * fault's trap is the root entry's (the tables below it are new). The
 * hypervisor reads 1 + 4 guest entries for the first page, 4 + 4 after.
 */
START_TEST(shadow_faults)
{
	run(MMAP_2G " S 40000000,8\n S 40001000,8\n S 40002000,8\n", "virt.mode=shadow", "os.mode=base",
	    "host.os.mode=base", NULL);
	ck_assert_uint_eq(S->st.pgfault, 3);
	ck_assert_uint_eq(S->st.virt.shadow_faults, 6);
	ck_assert_uint_eq(S->st.virt.pte_writes, 3);
	ck_assert_uint_eq(S->st.virt.zapped, 0);
	ck_assert_uint_eq(S->st.virt.shadow_guest_reads, 5 + 8 + 8);
	ck_assert_uint_eq(S->st.walks, 3);
	ck_assert_uint_eq(S->st.virt.cyc_exits, 9 * S->cfg.virt.exit);
	ck_assert_uint_eq(S->virt->spt.nr_leaves[PS_4K], 3);
	/* the host backs 3 data pages and 4 table pages of the guest: 7 faults, each a
	 * fault and a page cleared, which the guest waits for */
	ck_assert_uint_eq(S->st.virt.host_pgfault, 7);
	ck_assert_uint_eq(S->st.virt.cyc_host, 7 * (S->cfg.cost.fault + S->cfg.cost.clear_page));
	ck_assert_uint_eq(S->st.cyc_virt, S->st.virt.cyc_exits + S->st.virt.cyc_reads + S->st.virt.cyc_host);
	ck_assert_uint_gt(S->st.virt.cyc_reads, 0);
	done();
}
END_TEST

/*
 * A guest PTE write to a shadowed table: MADV_DONTNEED of one page traps,
 * zaps its shadow entry and flushes its TLB entry (the next load walks and
 * shadow-faults again: the guest maps the zero page, read-only, whose PTE
 * write traps too); the other pages keep theirs and hit.
 */
START_TEST(shadow_invalidation)
{
	run(MMAP_2G " S 40000000,8\n S 40001000,8\n S 40002000,8\n" DONTNEED_4K("0x40001000")
		" L 40000000,8\n L 40002000,8\n L 40001000,8\n L 40001008,8\n",
	    "virt.mode=shadow", "os.mode=base", "host.os.mode=base", NULL);
	ck_assert_uint_eq(S->st.virt.zapped, 1);
	ck_assert_uint_eq(S->st.virt.pte_writes, 3 + 1 + 1);
	ck_assert_uint_eq(S->st.virt.shadow_faults, 6 + 2);
	ck_assert_uint_eq(S->st.walks, 3 + 1);
	ck_assert_uint_eq(S->st.pgfault, 4);
	done();
}
END_TEST

/* Shadow entries have the smaller page: a guest THP over host 4K pages is 512 shadow leaves. */
START_TEST(shadow_entry_size)
{
	static const struct {
		const char *guest, *host;
		enum page_size ps;
	} k[] = {
		{ "os.mode=base", "host.os.mode=thp", PS_4K },
		{ "os.mode=thp", "host.os.mode=base", PS_4K },
		{ "os.mode=thp", "host.os.mode=thp", PS_2M },
	};

	for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
		enum page_size ps;
		pfn_t pfn;

		run(MMAP_2G " S 40000000,8\n S 40001000,8\n", "virt.mode=shadow", k[i].guest, k[i].host,
		    NULL);
		ck_assert(pt_lookup(&S->virt->spt, 0x40001000, &ps, &pfn, NULL));
		ck_assert_int_eq(ps, k[i].ps);
		ck_assert_uint_eq(S->st.walks, k[i].ps == PS_4K ? 2 : 1);
		/* Gemini's count: a guest huge page in one host huge page */
		ck_assert_uint_eq(S->st.virt.aligned_huge, k[i].ps == PS_2M);
		done();
	}
}
END_TEST

/*
 * The host discards guest memory (MADV_DONTNEED on the host's mapping, as
 * virtio-balloon and free page reporting do): its TLB flush reaches the guest's
 * MMU. Shadow: the leaves that mapped the discarded frames are zapped; the next
 * access exits once (the guest's PTE is still there: no guest fault) and the
 * host faults the page back. Nested: the nested TLB and the guest's TLBs are
 * flushed; the next access walks and meets an NPT violation.
 */
START_TEST(host_discards_guest_memory)
{
	for (int nested = 0; nested < 2; nested++) {
		struct os_event ev = { .kind = EV_MADVISE, .fd = -1, .advice = MADV_DONTNEED_ };
		uint64_t faults, walks, hfaults, pgfault;

		run(MMAP_2G " S 40000000,8\n S 40001000,8\n", nested ? "virt.mode=nested" : "virt.mode=shadow",
		    "os.mode=base", "host.os.mode=base", "virt.ntlb.entries=16", "virt.ntlb.ways=16", NULL);
		ev.addr = S->virt->hbase;
		ev.len = S->cfg.memory;
		ck_assert_int_eq(sim_event(S->virt->host, &ev), 0);
		sim_check_invariants(S);
		if (!nested) {
			ck_assert_uint_eq(S->virt->zapped, 2);
			ck_assert_uint_eq(S->virt->spt.nr_leaves[PS_4K], 0);
		} else {
			ck_assert_uint_eq(S->mmu.nested->ntlb.nr_valid, 0);
		}
		faults = S->virt->shadow_faults;
		walks = S->mmu.st.walks;
		hfaults = S->virt->host->st.pgfault;
		pgfault = S->st.pgfault;
		mmu_access(&S->mmu, 0x40001000, SIDE_D, false);
		sim_check_invariants(S);
		ck_assert_uint_eq(S->mmu.st.walks - walks, 1);
		ck_assert_uint_eq(S->virt->shadow_faults - faults, nested ? 0 : 1);
		ck_assert_uint_eq(S->st.pgfault - pgfault, 0);
		/* the data page and the guest's 4 table pages (read by the nested walk, or by
		 * the hypervisor's walk of the guest's table) */
		ck_assert_uint_eq(S->virt->host->st.pgfault - hfaults, 5);
		done();
	}
}
END_TEST

/*
 * Host khugepaged collapses guest memory: the host backs a guest THP with 4 KiB
 * pages (THP enabled=madvise and guest memory not madvised), then the mapping
 * is madvised MADV_HUGEPAGE and khugepaged collapses the 2 MiB under the
 * guest's page. The collapse's flush reaches the guest: the next access walks
 * again and fills a 2 MiB entry (shadow: a 2 MiB shadow leaf), and the guest
 * page is now backed by one host huge page (virt.huge.aligned 0 -> 1).
 */
START_TEST(host_khugepaged_collapses)
{
	for (int nested = 0; nested < 2; nested++) {
		struct os_event ev = { .kind = EV_MADVISE, .fd = -1, .advice = MADV_HUGEPAGE_ };
		enum page_size ps;
		pfn_t pfn;
		uint64_t walks;

		run(MMAP_2G " S 40000000,8\n S 40001000,8\n", nested ? "virt.mode=nested" : "virt.mode=shadow",
		    "os.mode=thp", "host.os.mode=thp", "host.os.thp.enabled=madvise", "host.os.madvise=false",
		    NULL);
		ck_assert_uint_eq(S->st.virt.guest_huge, 1);
		ck_assert_uint_eq(S->st.virt.aligned_huge, 0);
		ck_assert_uint_eq(S->st.virt.host_thp_fault_alloc, 0);
		ck_assert(mmu_lookup(&S->mmu, 0x40000000, &ps, &pfn));
		ck_assert_int_eq(ps, PS_4K);
		ev.addr = S->virt->hbase;
		ev.len = S->cfg.memory;
		ck_assert_int_eq(sim_event(S->virt->host, &ev), 0);
		for (int i = 0; i < 1000 && !S->virt->host->st.thp_collapse_alloc; i++)
			khugepaged_do_scan(&S->virt->host->k);
		ck_assert_uint_ge(S->virt->host->st.thp_collapse_alloc, 1);
		sim_check_invariants(S);
		walks = S->mmu.st.walks;
		mmu_access(&S->mmu, 0x40001000, SIDE_D, false);
		mmu_access(&S->mmu, 0x40002000, SIDE_D, false); /* same 2 MiB entry: no walk */
		sim_check_invariants(S);
		ck_assert_uint_eq(S->mmu.st.walks - walks, 1);
		ck_assert(mmu_lookup(&S->mmu, 0x40000000, &ps, &pfn));
		ck_assert_int_eq(ps, PS_2M);
		if (!nested) {
			ck_assert(pt_lookup(&S->virt->spt, 0x40001000, &ps, &pfn, NULL));
			ck_assert_int_eq(ps, PS_2M);
		}
		sim_finish(S);
		ck_assert_uint_eq(S->st.virt.aligned_huge, 1);
		done();
	}
}
END_TEST

/*
 * A fragmented host (a pinned page in every pageblock): its THP faults fall
 * back, so a guest THP is backed by 4 KiB pages and fills 4 KiB entries
 * (virt.huge.aligned 0), in both modes.
 */
START_TEST(host_fragmented)
{
	for (int nested = 0; nested < 2; nested++) {
		enum page_size ps;
		pfn_t pfn;

		run(MMAP_2G " S 40000000,8\n", nested ? "virt.mode=nested" : "virt.mode=shadow", "os.mode=thp",
		    "host.os.mode=thp", "host.os.fragmentation.unmovable=1", "host.os.thp.defrag=never", NULL);
		ck_assert_uint_eq(S->st.virt.guest_huge, 1);
		ck_assert_uint_eq(S->st.virt.aligned_huge, 0);
		ck_assert_uint_eq(S->st.virt.host_thp_fault_alloc, 0);
		ck_assert_uint_ge(S->st.virt.host_thp_fault_fallback, 1);
		ck_assert(mmu_lookup(&S->mmu, 0x40000000, &ps, &pfn));
		ck_assert_int_eq(ps, PS_4K);
		done();
	}
}
END_TEST

/*
 * The guest's kernel does the same work whatever runs it: a generated scenario
 * (four 8 MiB mappings, two of them madvised MADV_HUGEPAGE; loads and stores
 * with locality; MADV_DONTNEED, mprotect read-only and back, munmap and a new
 * mmap in between) replayed on bare metal, nested and shadow, over host THP and
 * host 4 KiB pages, invariants after every record. Every guest vmstat counter
 * and the RSS are equal; over host THP (no guest 1 GiB pages) the TLBs hold the
 * same entries, so their hits and misses and the walks are equal too; over host
 * 4 KiB pages every entry is 4 KiB.
 */
static char *scenario(unsigned seed)
{
	size_t cap = 1 << 20, n = 0;
	char *t = malloc(cap);
	uint64_t x = seed * 2654435761u + 1;
	vaddr_t base[4] = { 0x40000000, 0x40800000, 0x41000000, 0x41800000 };

#define RND() (x = x * 6364136223846793005ULL + 1442695040888963407ULL, x >> 33)
#define OUT(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 4; i++) {
		OUT("SYSCALL[7,1](9) sys_mmap ( 0x0, 8388608, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x%lx)\n",
		    (unsigned long)base[i]);
		if (i & 1)
			OUT("SYSCALL[7,1](28) sys_madvise ( 0x%lx, 8388608, 14 ) --> [pre-success] Success(0x0)\n",
			    (unsigned long)base[i]);
	}
	for (int step = 0; step < 4000; step++) {
		unsigned r = (unsigned)RND() % 1000, m = (unsigned)RND() % 4;
		vaddr_t page = base[m] + ((RND() % 2048) << 12);

		if (r < 5) {
			OUT("SYSCALL[7,1](28) sys_madvise ( 0x%lx, 65536, 4 ) --> [pre-success] Success(0x0)\n",
			    (unsigned long)(page & ~0xffffUL));
		} else if (r < 8) {
			OUT("SYSCALL[7,1](10) sys_mprotect ( 0x%lx, 2097152, 1 ) --> [pre-success] Success(0x0)\n",
			    (unsigned long)(page & ~0x1fffffUL));
			OUT("SYSCALL[7,1](10) sys_mprotect ( 0x%lx, 2097152, 3 ) --> [pre-success] Success(0x0)\n",
			    (unsigned long)(page & ~0x1fffffUL));
		} else if (r < 9) {
			OUT("SYSCALL[7,1](11) sys_munmap ( 0x%lx, 8388608 ) --> [pre-success] Success(0x0)\n",
			    (unsigned long)base[m]);
			OUT("SYSCALL[7,1](9) sys_mmap ( 0x0, 8388608, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x%lx)\n",
			    (unsigned long)base[m]);
		} else {
			for (int k = 0; k < 4; k++)
				OUT(" %c %lx,8\n", r % 3 ? 'L' : 'S', (unsigned long)(page + ((RND() % 512) << 3)));
		}
	}
#undef RND
#undef OUT
	return t;
}

START_TEST(guest_kernel_unchanged)
{
	static const char *const modes[][2] = {
		{ "virt.mode=none", "host.os.mode=thp" },
		{ "virt.mode=nested", "host.os.mode=thp" },
		{ "virt.mode=shadow", "host.os.mode=thp" },
		{ "virt.mode=nested", "host.os.mode=base" },
		{ "virt.mode=shadow", "host.os.mode=base" },
	};
	char *t = scenario(_i + 1);
	struct stats ref = { 0 };

	check_every = 7; /* (4000 steps x 5 machines) */
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		struct stats st;

		run(t, modes[i][0], modes[i][1], "os.mode=thp", NULL);
		st = S->st;
		if (!i) { /* a scenario that exercises what could differ */
			ref = st;
			ck_assert_uint_gt(ref.thp_fault_alloc, 0);
			ck_assert_uint_gt(ref.thp_split_pmd, 0);
			ck_assert_uint_gt(ref.tlb_invalidations, 0);
			ck_assert_uint_gt(ref.l1[SIDE_D].misses[PS_2M], 0);
		}
		if (i == 2) /* shadow: guest table writes trapped and zapped shadow leaves */
			ck_assert(st.virt.pte_writes > 0 && st.virt.zapped > 0);
#define SAME(f) ck_assert_msg(st.f == ref.f, "%s %s: " #f " %llu, bare metal %llu", modes[i][0], \
			      modes[i][1], (unsigned long long)st.f, (unsigned long long)ref.f)
		SAME(pgfault); SAME(thp_fault_alloc); SAME(thp_fault_fallback); SAME(thp_split_pmd);
		SAME(thp_split_page); SAME(thp_collapse_alloc); SAME(nr_anon_pages);
		SAME(nr_anon_transparent_hugepages); SAME(nr_page_table_pages); SAME(tlb_invalidations);
		SAME(rss_bytes); SAME(huge_bytes); SAME(thp_zero_page_alloc);
		if (i < 3) { /* host THP: the same entries */
			for (int side = 0; side < 2; side++)
				for (int ps = 0; ps < PS_NR; ps++) {
					SAME(l1[side].hits[ps]);
					SAME(l1[side].misses[ps]);
				}
			SAME(stlb.hits); SAME(stlb.misses); SAME(walks);
		} else { /* host 4 KiB pages: 4 KiB entries only */
			ck_assert_uint_eq(st.l1[SIDE_D].hits[PS_2M] + st.l1[SIDE_D].misses[PS_2M], 0);
			ck_assert_uint_gt(st.l1[SIDE_D].misses[PS_4K], ref.l1[SIDE_D].misses[PS_4K]);
		}
#undef SAME
		done();
	}
	check_every = 1;
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("virt");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, nested_reads_every_pair, 0, PS_NR * PS_NR);
	tcase_add_test(tc, nested_reads_5_levels);
	tcase_add_loop_test(tc, nested_caches, 0, PS_NR * PS_NR);
	tcase_add_test(tc, shadow_faults);
	tcase_add_test(tc, shadow_invalidation);
	tcase_add_test(tc, shadow_entry_size);
	tcase_add_test(tc, host_discards_guest_memory);
	tcase_add_test(tc, host_khugepaged_collapses);
	tcase_add_test(tc, host_fragmented);
	tcase_add_loop_test(tc, guest_kernel_unchanged, 0, 3);
	suite_add_tcase(s, tc);
	return check_run(s);
}
