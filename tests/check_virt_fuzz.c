/*
 * check_virt_fuzz.c - differential random test of virtual machines
 * (sim/virt.c, sim/mmu_nested.c): random but valid lackey scenarios from fixed
 * seeds (anonymous mmaps of a few MiB, some 2 MiB aligned, loads and stores
 * with locality, munmap, mprotect, madvise DONTNEED/HUGEPAGE/NOHUGEPAGE,
 * mremap MAYMOVE) replayed with virt.mode none, nested and shadow, every
 * invariant (the host's and the shadow table's included) after every record
 * (check_common.h). Then:
 *  (a) the guest kernel does the same work whatever the virtualization: its
 *      vmstat counters and RSS are equal across none/nested/shadow;
 *  (b) with host THP backing (guest has no 1 GiB pages) the TLB entries are
 *      the same: L1 hits/misses per page size, STLB and walk counts equal.
 *      (This holds only if every guest 2 MiB page is backed by a host 2 MiB
 *      page; the host backs a guest-physical 2 MiB range huge when it faults
 *      on it in a THP-eligible aligned host VMA, which the default memory
 *      layout gives; a mismatch is reported, not weakened.)
 *  (c) with host base backing every TLB entry is 4 KiB: no 2M L1 hit or miss.
 * Also random bad virt.* and host.os.* values through config_set() and
 * config_validate(): an error, or a config sim_init() builds and runs on; and
 * the regression it found (an mremap onto an overlapping range). Not covered:
 * guest hugetlbfs (check_virt.c has 1 GiB guest pages).
 */
#include <check.h>
#include <stdio.h>

#include "check_common.h"
#include "check_run.h"

#define NREC 1500
/* seeds: ~0.6 s each in the release build; fewer under ASan+UBSan (check-debug, ~5x slower) */
#if defined(__SANITIZE_ADDRESS__)
#define NSEEDS 6
#else
#define NSEEDS 20
#endif

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct region {
	unsigned long base, len; /* len 0: unmapped */
};

#define NREG 4
#define SC "SYSCALL[7,1]"

/* The scenario of @seed: lackey text (malloc'd). */
static char *gen(uint64_t seed)
{
	size_t cap = 1 << 20, n = 0;
	char *t = malloc(cap);
	struct region r[NREG] = { { 0 } };
	unsigned long next = 0x40000000UL, cur = 0;
	int cr = -1;

	ck_assert_ptr_nonnull(t);
	rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	for (int i = 0; i < NREC; i++) {
		unsigned op = rnd() % 100;
		int k = (int)(rnd() % NREG);

		if (r[k].len == 0 || op < 2) {
			if (r[k].len)
				n += (size_t)snprintf(t + n, cap - n, SC "(11) sys_munmap ( 0x%lx, %lu )[sync] --> Success(0x0)\n",
						      r[k].base, r[k].len);
			r[k].len = (1 + rnd() % 4) << 20;
			r[k].base = next + (rnd() % 2 ? 0 : (rnd() % 256) << 12);
			next += 16UL << 20;
			n += (size_t)snprintf(t + n, cap - n,
					      SC "(9) sys_mmap ( 0x0, %lu, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x%lx)\n",
					      r[k].len, r[k].base);
			if (rnd() % 2)
				n += (size_t)snprintf(t + n, cap - n, SC "(28) sys_madvise ( 0x%lx, %lu, 14 ) --> [pre-success] Success(0x0)\n",
						      r[k].base, r[k].len);
			cr = -1;
			continue;
		}
		if (op < 4) { /* madvise DONTNEED / NOHUGEPAGE on a page range */
			unsigned long off = (rnd() % (r[k].len >> 12)) << 12;
			unsigned long len = (1 + rnd() % 600) << 12;
			static const int adv[] = { 4, 15, 14 };

			if (off + len > r[k].len)
				len = r[k].len - off;
			n += (size_t)snprintf(t + n, cap - n, SC "(28) sys_madvise ( 0x%lx, %lu, %d ) --> [pre-success] Success(0x0)\n",
					      r[k].base + off, len, adv[rnd() % 3]);
			continue;
		}
		if (op < 5) { /* mprotect read-only and back: stores then fault on it */
			n += (size_t)snprintf(t + n, cap - n, SC "(10) sys_mprotect ( 0x%lx, %lu, 1 )[sync] --> Success(0x0)\n",
					      r[k].base, r[k].len);
			n += (size_t)snprintf(t + n, cap - n, " L %lx,8\n", r[k].base);
			n += (size_t)snprintf(t + n, cap - n, SC "(10) sys_mprotect ( 0x%lx, %lu, 3 )[sync] --> Success(0x0)\n",
					      r[k].base, r[k].len);
			continue;
		}
		if (op < 6) {
			/* mremap MREMAP_MAYMOVE of the whole region to a fresh address (one the
			 * kernel's get_unmapped_area() could return: clear of every mapping, the
			 * source included), twice the size up to 16 MiB */
			unsigned long nb = next, nl = r[k].len * 2 <= 16UL << 20 ? r[k].len * 2 : r[k].len;

			next += 16UL << 20;
			n += (size_t)snprintf(t + n, cap - n,
					      SC "(25) sys_mremap ( 0x%lx, %lu, %lu, 0x1 ) --> [pre-success] Success(0x%lx)\n",
					      r[k].base, r[k].len, nl, nb);
			r[k].base = nb;
			r[k].len = nl;
			cr = -1;
			continue;
		}
		/* an access: near the last one mostly, else anywhere in a region */
		if (cr < 0 || r[cr].len == 0 || rnd() % 8 == 0) {
			cr = k;
			cur = r[k].base + (rnd() % r[k].len);
		} else {
			cur += (rnd() % 16384) - 4096;
			if (cur < r[cr].base || cur + 8 > r[cr].base + r[cr].len)
				cur = r[cr].base + (rnd() % r[cr].len);
		}
		cur &= ~7UL;
		n += (size_t)snprintf(t + n, cap - n, " %c %lx,8\n", "LSM"[rnd() % 3], cur);
		ck_assert_uint_lt(n, cap - 256);
	}
	return t;
}

struct outcome {
	struct stats st;
};

static struct stats replay(const char *trace, const char *vm, const char *os, const char *host)
{
	struct stats st;

	run(trace, vm, os, "os.hugetlbfs.pages_1g=0", host, NULL);
	st = S->st;
	done();
	return st;
}

#define EQ(f) ck_assert_msg(a->f == b->f, "seed %d %s: " #f " %llu != %llu", seed, what, \
			    (unsigned long long)a->f, (unsigned long long)b->f)

static void same_guest(const struct stats *a, const struct stats *b, int seed, const char *what)
{
	EQ(pgfault); EQ(tlb_invalidations); EQ(nr_anon_pages); EQ(nr_anon_transparent_hugepages);
	EQ(thp_fault_alloc); EQ(thp_fault_fallback); EQ(thp_split_pmd); EQ(thp_split_page);
	EQ(thp_deferred_split_page); EQ(thp_collapse_alloc); EQ(thp_zero_page_alloc);
	EQ(nr_page_table_pages); EQ(rss_bytes); EQ(huge_bytes); EQ(free_pages);
	EQ(load); EQ(store); EQ(modify);
}

static void same_tlb(const struct stats *a, const struct stats *b, int seed, const char *what)
{
	for (int s = 0; s < 2; s++)
		for (int p = 0; p < PS_NR; p++) {
			EQ(l1[s].hits[p]); EQ(l1[s].misses[p]);
		}
	EQ(stlb.hits); EQ(stlb.misses); EQ(walks);
}

static const char *const virt_modes[] = { "virt.mode=none", "virt.mode=nested", "virt.mode=shadow" };
static const char *const os_mode[] = { "os.mode=base", "os.mode=thp" };

START_TEST(differential)
{
	int seed = _i;
	char *t = gen((uint64_t)seed);

	if (getenv("VFUZZ_DUMP")) { /* VFUZZ_DUMP=dir: write each scenario as dir/seedN.lackey */
		char p[512];
		FILE *f;

		snprintf(p, sizeof(p), "%s/seed%d.lackey", getenv("VFUZZ_DUMP"), seed);
		f = fopen(p, "w");
		ck_assert_ptr_nonnull(f);
		fputs(t, f);
		fclose(f);
	}
	const char *os = os_mode[seed % 2];
	struct stats none = replay(t, "virt.mode=none", os, "host.os.mode=thp");
	struct stats nth = replay(t, "virt.mode=nested", os, "host.os.mode=thp");
	struct stats sth = replay(t, "virt.mode=shadow", os, "host.os.mode=thp");
	struct stats nb = replay(t, "virt.mode=nested", os, "host.os.mode=base");
	struct stats sb = replay(t, "virt.mode=shadow", os, "host.os.mode=base");

	ck_assert_uint_gt(none.pgfault, 0);
	if (getenv("VFUZZ_VERBOSE"))
		fprintf(stderr, "seed %d %s: pgfault %llu thp_alloc %llu split %llu anon %llu thp %llu inval %llu l1d2M miss %llu walks %llu shadow zapped %llu/%llu\n",
			seed, os, (unsigned long long)none.pgfault, (unsigned long long)none.thp_fault_alloc,
			(unsigned long long)none.thp_split_pmd, (unsigned long long)none.nr_anon_pages,
			(unsigned long long)none.nr_anon_transparent_hugepages,
			(unsigned long long)none.tlb_invalidations, (unsigned long long)none.l1[SIDE_D].misses[PS_2M],
			(unsigned long long)none.walks, (unsigned long long)sth.virt.zapped,
			(unsigned long long)sth.virt.pte_writes);
	same_guest(&none, &nth, seed, "nested/thp");
	same_guest(&none, &sth, seed, "shadow/thp");
	same_guest(&none, &nb, seed, "nested/base");
	same_guest(&none, &sb, seed, "shadow/base");
	same_tlb(&none, &nth, seed, "nested/thp");
	same_tlb(&none, &sth, seed, "shadow/thp");
	for (int s = 0; s < 2; s++) {
		ck_assert_uint_eq(nb.l1[s].hits[PS_2M] + nb.l1[s].misses[PS_2M], 0);
		ck_assert_uint_eq(sb.l1[s].hits[PS_2M] + sb.l1[s].misses[PS_2M], 0);
	}
	free(t);
}
END_TEST

/* keys, each with values of its type (picked 3 times in 4) to reach sim_init() */
static const struct {
	const char *key, *good[5];
} cfg_keys[] = {
	{ "virt.mode", { "none", "nested", "shadow", "nested", "shadow" } },
	{ "virt.levels", { "4", "5", "3", "4", "6" } },
	{ "virt.ntlb.entries", { "0", "16", "32", "64", "24" } },
	{ "virt.ntlb.ways", { "0", "1", "4", "16", "3" } },
	{ "virt.pwc.pde.entries", { "0", "32", "16", "1", "3" } },
	{ "virt.pwc.pde.ways", { "0", "4", "1", "2", "32" } },
	{ "virt.pwc.pml4.entries", { "0", "2", "4", "8", "1" } },
	{ "virt.pwc.pml5.ways", { "0", "1", "2", "4", "0" } },
	{ "virt.cost.exit", { "0", "1", "1000", "18446744073709551615", "1200" } },
	{ "host.os.memory", { "0", "64M", "128M", "1G", "4K" } },
	{ "host.os.mode", { "base", "thp", "hugetlbfs", "thp", "hugetlbfs" } },
	{ "host.os.madvise", { "true", "false", "true", "false", "true" } },
	{ "host.os.hugetlbfs.page_size", { "2M", "1G", "2M", "1G", "4K" } },
	{ "host.os.thp.enabled", { "always", "madvise", "never", "always", "never" } },
	{ "host.os.thp.defrag", { "always", "defer", "madvise", "never", "defer+madvise" } },
	{ "host.os.khugepaged.pages_to_scan", { "1", "8", "4096", "0", "512" } },
	{ "host.os.khugepaged.scan_sleep_millisecs", { "0", "1", "10000", "100", "4294967295" } },
	{ "host.os.khugepaged.max_ptes_none", { "0", "511", "512", "1", "256" } },
	{ "host.os.khugepaged.defrag", { "true", "false", "true", "false", "true" } },
	{ "host.os.fragmentation.unmovable", { "0", "0.5", "0.99", "1", "0.1" } },
	{ "host.os.fragmentation.seed", { "0", "1", "42", "7", "18446744073709551615" } },
};
static const char *const cfg_vals[] = {
	"0", "1", "2", "3", "4", "5", "7", "16", "64", "65535", "65536", "-1", "1G", "2M", "4K",
	"none", "nested", "shadow", "thp", "base", "hugetlbfs", "", "x", "1e99", "18446744073709551616",
	"true", "false", "256M", "3M", "0.5", "1.5", "always", "never", "madvise", "defer",
};

#define NKEYS (sizeof(cfg_keys) / sizeof(*cfg_keys))
#define NVALS (sizeof(cfg_vals) / sizeof(*cfg_vals))

/* A few records through @s: a mapping, stores, a DONTNEED; invariants after each. */
static void run_small(struct sim *s)
{
	static const char trace[] = MMAP_4M MADV_HUGE_4M " S 40000000,8\n S 40201000,8\n L 40000008,8\n"
		SC "(28) sys_madvise ( 0x40000000, 4096, 4 ) --> [pre-success] Success(0x0)\n L 40000000,8\n";
	struct err e = { 0 };

	replay_trace(s, trace, &e); /* an error (e.g. out of memory) is a clean outcome */
	sim_finish(s);
}

START_TEST(bad_config)
{
	unsigned ran = 0;

	rng = (uint64_t)_i * 7919 + 3;
	for (int it = 0; it < 20; it++) {
		struct sim_config c;
		struct err e = { 0 };
		char set[128];
		bool ok = true;
		struct sim *s;

		config_defaults(&c);
		c.memory = 64ULL << 20;
		ck_assert_int_eq(config_set(&c, "virt.mode=nested", &e), 0);
		for (int j = 0, nset = 1 + (int)(rnd() % 2); j < nset; j++) {
			unsigned k = (unsigned)(rnd() % NKEYS);

			snprintf(set, sizeof(set), "%s=%s", cfg_keys[k].key,
				 rnd() % 4 ? cfg_keys[k].good[rnd() % 5] : cfg_vals[rnd() % NVALS]);
			if (config_set(&c, set, &e) != 0)
				ok = false;
		}
		if (!ok || config_validate(&c, "--set", &e) != 0)
			continue;
		s = calloc(1, sizeof(*s));
		if (sim_init(s, &c, &e) == 0) {
			run_small(s);
			sim_destroy(s);
			ran++;
		}
		free(s);
	}
	if (getenv("VFUZZ_VERBOSE"))
		fprintf(stderr, "bad_config %d: %u of 20 configs ran\n", _i, ran);
	ck_assert_uint_gt(ran, 0); /* the values reach sim_init(), not only the parser */
}
END_TEST

/*
 * A regression (found by an earlier version of gen(), seed 23, whose mremap
 * destinations could overlap the source): an mremap(MREMAP_MAYMOVE) whose
 * recorded result overlaps the mapping it moves aborted the simulator in
 * thp_deposit() ("BUG at sim/thp.c:93: t->dep_key[i]") with every virt.mode,
 * bare metal included. Linux cannot return such an address (mremap_to()/
 * get_unmapped_area() give an unmapped range; with MREMAP_FIXED an overlap is
 * -EINVAL), so the record is bad input: do_mremap() reports it, naming line 4.
 */
START_TEST(mremap_overlapping_source)
{
	static const char trace[] =
		SC "(9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
		" S 40000000,8\n S 40200000,8\n"
		SC "(25) sys_mremap ( 0x40000000, 4194304, 8388608, 0x1 ) --> [pre-success] Success(0x40200000)\n";
	struct sim_config c;
	struct err e = { 0 };
	struct sim *s = calloc(1, sizeof(*s));

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	ck_assert_int_eq(config_set(&c, virt_modes[_i], &e), 0);
	ck_assert_int_eq(config_validate(&c, "--set", &e), 0);
	ck_assert_int_eq(sim_init(s, &c, &e), 0);
	/* an error naming the record, as bad input (exit 2) */
	ck_assert_int_eq(replay_trace(s, trace, &e), -1);
	ck_assert_uint_eq(e.line, 4);
	ck_assert(!e.host);
	ck_assert_msg(strstr(e.msg, "overlaps it") != NULL, "%s", e.msg);
	sim_destroy(s);
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("virt_fuzz");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, differential, 0, NSEEDS);
	tcase_add_loop_test(tc, bad_config, 0, 10);
	tcase_add_loop_test(tc, mremap_overlapping_source, 0, 3);
	suite_add_tcase(s, tc);
	return check_run(s);
}
