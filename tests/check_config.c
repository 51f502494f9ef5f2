/*
 * check_config.c - Check suite for sim/config.c: the built-in defaults, the four
 * shipped machine files, YAML round trips, --set of every value type, config_get,
 * and the exact "file:line:col: message" of each kind of bad input.
 *
 * The machine files are read from $MMUSIM_CONFIG_DIR, or "configs" (the test runs
 * from the top of the tree).
 */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

#define M4K (1u << PS_4K)
#define M2M (1u << PS_2M)
#define M1G (1u << PS_1G)

static const char *config_dir(void)
{
	const char *d = getenv("MMUSIM_CONFIG_DIR");

	return d && *d ? d : "configs";
}

static void load_machine(struct sim_config *c, const char *file)
{
	char path[512], msg[1024];
	struct err e;

	snprintf(path, sizeof(path), "%s/%s", config_dir(), file);
	config_defaults(c);
	if (config_load_file(c, path, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("loading %s: %s", path, msg);
	}
}

/* Field-by-field equality, naming the first field that differs. */
static void assert_same(const struct sim_config *a, const struct sim_config *b)
{
	ck_assert_str_eq(a->cpu_name, b->cpu_name);
	ck_assert_uint_eq(a->freq_mhz, b->freq_mhz);
	ck_assert_msg(a->cpi == b->cpi, "cpi %.17g != %.17g", a->cpi, b->cpi);
	for (int ps = 0; ps < PS_NR; ps++) {
		ck_assert_uint_eq(a->l1i[ps].entries, b->l1i[ps].entries);
		ck_assert_uint_eq(a->l1i[ps].ways, b->l1i[ps].ways);
		ck_assert_uint_eq(a->l1d[ps].entries, b->l1d[ps].entries);
		ck_assert_uint_eq(a->l1d[ps].ways, b->l1d[ps].ways);
	}
	ck_assert_uint_eq(a->nr_stlb, b->nr_stlb);
	for (unsigned i = 0; i < a->nr_stlb; i++) {
		ck_assert_uint_eq(a->stlb[i].entries, b->stlb[i].entries);
		ck_assert_uint_eq(a->stlb[i].ways, b->stlb[i].ways);
		ck_assert_uint_eq(a->stlb[i].pages, b->stlb[i].pages);
	}
	ck_assert_int_eq(a->policy, b->policy);
	ck_assert_uint_eq(a->lat_l1, b->lat_l1);
	ck_assert_uint_eq(a->lat_stlb, b->lat_stlb);
	ck_assert_uint_eq(a->levels, b->levels);
	for (int l = 0; l < PWC_NR; l++) {
		ck_assert_uint_eq(a->pwc[l].entries, b->pwc[l].entries);
		ck_assert_uint_eq(a->pwc[l].ways, b->pwc[l].ways);
	}
	ck_assert_uint_eq(a->pwc_latency, b->pwc_latency);
	for (int l = 0; l < CL_NR; l++) {
		ck_assert_uint_eq(a->cache[l].size, b->cache[l].size);
		ck_assert_uint_eq(a->cache[l].ways, b->cache[l].ways);
		ck_assert_uint_eq(a->cache[l].latency, b->cache[l].latency);
	}
	ck_assert_uint_eq(a->line_size, b->line_size);
	ck_assert_uint_eq(a->dram_latency, b->dram_latency);
	ck_assert_int_eq(a->data_refs, b->data_refs);
	ck_assert_uint_eq(a->memory, b->memory);
	ck_assert_int_eq(a->mode, b->mode);
	ck_assert_uint_eq(a->hugetlb_pages, b->hugetlb_pages);
	ck_assert_int_eq(a->implicit.enabled, b->implicit.enabled);
	ck_assert_uint_eq(a->implicit.granule, b->implicit.granule);
	ck_assert_uint_eq(a->cost.fault, b->cost.fault);
	ck_assert_uint_eq(a->cost.clear_page, b->cost.clear_page);
	ck_assert_uint_eq(a->seed, b->seed);
}

/* config_write_yaml() into a malloc'd string. */
static char *to_yaml(const struct sim_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	config_write_yaml(c, f);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* Write @c as YAML, load it over @base, and require the result to equal @c. */
static void roundtrip_over(const struct sim_config *c, const struct sim_config *base)
{
	struct sim_config back;
	char *yaml = to_yaml(c), msg[1024];
	struct err e;

	memcpy(&back, base, sizeof(back));
	if (config_load_string(&back, yaml, "roundtrip", &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("reloading:\n%s\nfailed: %s", yaml, msg);
	}
	assert_same(&back, c);
	free(yaml);
}

/* Loading @yaml over the defaults must fail with exactly @prefix, then @substr. */
static void expect_load_err(const char *yaml, const char *prefix, const char *substr)
{
	struct sim_config c, d;
	char msg[1024];
	struct err e;

	config_defaults(&c);
	config_defaults(&d);
	ck_assert_msg(config_load_string(&c, yaml, "t.yaml", &e) == -1,
		      "loaded bad input:\n%s", yaml);
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(!strncmp(msg, prefix, strlen(prefix)),
		      "error '%s' does not start with '%s'", msg, prefix);
	ck_assert_msg(strstr(msg, substr), "error '%s' lacks '%s'", msg, substr);
	/* A failed load leaves the config as it was. */
	ck_assert_msg(!memcmp(&c, &d, sizeof(c)), "failed load changed the config");
}

static void expect_set_ok(struct sim_config *c, const char *assignment)
{
	char msg[1024];
	struct err e;

	if (config_set(c, assignment, &e)) {
		err_format(&e, msg, sizeof(msg));
		ck_abort_msg("--set %s failed: %s", assignment, msg);
	}
}

static void expect_set_err(const char *assignment, const char *full)
{
	struct sim_config c, d;
	char msg[1024];
	struct err e;

	config_defaults(&c);
	config_defaults(&d);
	ck_assert_msg(config_set(&c, assignment, &e) == -1, "--set %s succeeded", assignment);
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(!strncmp(msg, full, strlen(full)), "error '%s' is not '%s'", msg, full);
	ck_assert_msg(!memcmp(&c, &d, sizeof(c)), "failed --set changed the config");
}

static void expect_get(const struct sim_config *c, const char *path, const char *want)
{
	char buf[128];

	ck_assert_msg(config_get(c, path, buf, sizeof(buf)) == 0, "get %s failed", path);
	ck_assert_msg(!strcmp(buf, want), "get %s = '%s', want '%s'", path, buf, want);
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_defaults)
{
	struct sim_config c;
	struct err e;

	config_defaults(&c);
	ck_assert(!c.pcid); /* Nehalem: no PCIDs */
	ck_assert_int_eq(c.coalesce, COAL_NONE); /* no array coalesces by default */
	ck_assert(!c.coal_l1i && !c.coal_l1d && !c.coal_stlb);
	ck_assert_str_eq(c.cpu_name, "Nehalem-class (LWN 2.6.38 THP article cpuid listing)");
	ck_assert_uint_eq(c.freq_mhz, 2800);
	ck_assert(c.cpi == 1.0);
	ck_assert_uint_eq(c.l1i[PS_4K].entries, 128);
	ck_assert_uint_eq(c.l1i[PS_4K].ways, 4);
	ck_assert_uint_eq(c.l1i[PS_2M].entries, 8);
	ck_assert_uint_eq(c.l1i[PS_2M].ways, 4);
	ck_assert_uint_eq(c.l1i[PS_1G].entries, 0);
	ck_assert_uint_eq(c.l1d[PS_4K].entries, 64);
	ck_assert_uint_eq(c.l1d[PS_4K].ways, 4);
	ck_assert_uint_eq(c.l1d[PS_2M].entries, 32);
	ck_assert_uint_eq(c.l1d[PS_2M].ways, 4);
	ck_assert_uint_eq(c.l1d[PS_1G].entries, 0);
	ck_assert_uint_eq(c.nr_stlb, 1);
	ck_assert_uint_eq(c.stlb[0].entries, 512);
	ck_assert_uint_eq(c.stlb[0].ways, 4);
	ck_assert_uint_eq(c.stlb[0].pages, M4K);
	ck_assert_int_eq(c.policy, REPL_LRU);
	ck_assert_uint_eq(c.lat_l1, 1);
	ck_assert_uint_eq(c.lat_stlb, 7);
	ck_assert_uint_eq(c.levels, 4);
	ck_assert_uint_eq(c.pwc[PWC_PML5].entries, 2);
	ck_assert_uint_eq(c.pwc[PWC_PML5].ways, 2);
	ck_assert_uint_eq(c.pwc[PWC_PML4].entries, 2);
	ck_assert_uint_eq(c.pwc[PWC_PML4].ways, 2);
	ck_assert_uint_eq(c.pwc[PWC_PDPT].entries, 4);
	ck_assert_uint_eq(c.pwc[PWC_PDPT].ways, 4);
	ck_assert_uint_eq(c.pwc[PWC_PDE].entries, 32);
	ck_assert_uint_eq(c.pwc[PWC_PDE].ways, 4);
	ck_assert_uint_eq(c.pwc_latency, 0);
	ck_assert_uint_eq(c.cache[CL_L1D].size, 32768);
	ck_assert_uint_eq(c.cache[CL_L1D].ways, 8);
	ck_assert_uint_eq(c.cache[CL_L1D].latency, 4);
	ck_assert_uint_eq(c.cache[CL_L2].size, 262144);
	ck_assert_uint_eq(c.cache[CL_L2].ways, 8);
	ck_assert_uint_eq(c.cache[CL_L2].latency, 10);
	ck_assert_uint_eq(c.cache[CL_LLC].size, 8388608);
	ck_assert_uint_eq(c.cache[CL_LLC].ways, 16);
	ck_assert_uint_eq(c.cache[CL_LLC].latency, 40);
	ck_assert_uint_eq(c.line_size, 64);
	ck_assert_uint_eq(c.dram_latency, 200);
	ck_assert(!c.data_refs);
	ck_assert_uint_eq(c.memory, 4294967296ULL);
	ck_assert_int_eq(c.mode, MODE_BASE);
	ck_assert_uint_eq(c.hugetlb_pages, 0);
	ck_assert(c.implicit.enabled);
	ck_assert_uint_eq(c.implicit.granule, 2097152);
	ck_assert_uint_eq(c.cost.fault, 200);
	ck_assert_uint_eq(c.cost.clear_page, 256);
	ck_assert_uint_eq(c.seed, 1);
	ck_assert_int_eq(config_validate(&c, "defaults", &e), 0);
}
END_TEST

START_TEST(test_name_tables)
{
	ck_assert_str_eq(repl_policy_name[REPL_LRU], "lru");
	ck_assert_str_eq(repl_policy_name[REPL_FIFO], "fifo");
	ck_assert_str_eq(repl_policy_name[REPL_PLRU], "plru");
	ck_assert_str_eq(repl_policy_name[REPL_RANDOM], "random");
	ck_assert_str_eq(os_mode_name[MODE_BASE], "base");
	ck_assert_str_eq(os_mode_name[MODE_HUGETLBFS], "hugetlbfs");
	ck_assert_str_eq(os_mode_name[MODE_THP], "thp");
	ck_assert_str_eq(pwc_level_name[PWC_PML5], "pml5");
	ck_assert_str_eq(pwc_level_name[PWC_PML4], "pml4");
	ck_assert_str_eq(pwc_level_name[PWC_PDPT], "pdpt");
	ck_assert_str_eq(pwc_level_name[PWC_PDE], "pde");
	ck_assert_str_eq(cache_level_name[CL_L1D], "l1d");
	ck_assert_str_eq(cache_level_name[CL_L2], "l2");
	ck_assert_str_eq(cache_level_name[CL_LLC], "llc");
}
END_TEST

START_TEST(test_nehalem_file_is_defaults)
{
	struct sim_config c, d;
	struct err e;

	load_machine(&c, "nehalem.yaml");
	config_defaults(&d);
	ck_assert_int_eq(config_validate(&c, "nehalem.yaml", &e), 0);
	assert_same(&c, &d);
	ck_assert(!memcmp(&c, &d, sizeof(c)));
}
END_TEST

START_TEST(test_skylake_file)
{
	struct sim_config c, d;
	struct err e;

	load_machine(&c, "skylake.yaml");
	ck_assert_int_eq(config_validate(&c, "skylake.yaml", &e), 0);
	ck_assert(c.pcid);
	ck_assert_uint_eq(c.l1i[PS_4K].entries, 128);
	ck_assert_uint_eq(c.l1i[PS_4K].ways, 8);
	ck_assert_uint_eq(c.l1i[PS_2M].entries, 8);
	ck_assert_uint_eq(c.l1i[PS_2M].ways, 8);
	ck_assert_uint_eq(c.l1i[PS_1G].entries, 0);
	ck_assert_uint_eq(c.l1d[PS_4K].entries, 64);
	ck_assert_uint_eq(c.l1d[PS_4K].ways, 4);
	ck_assert_uint_eq(c.l1d[PS_2M].entries, 32);
	ck_assert_uint_eq(c.l1d[PS_2M].ways, 4);
	ck_assert_uint_eq(c.l1d[PS_1G].entries, 4);
	ck_assert_uint_eq(c.l1d[PS_1G].ways, 4);
	ck_assert_uint_eq(c.nr_stlb, 2);
	ck_assert_uint_eq(c.stlb[0].entries, 1536);
	ck_assert_uint_eq(c.stlb[0].ways, 12);
	ck_assert_uint_eq(c.stlb[0].pages, M4K | M2M);
	ck_assert_uint_eq(c.stlb[1].entries, 16);
	ck_assert_uint_eq(c.stlb[1].ways, 4);
	ck_assert_uint_eq(c.stlb[1].pages, M1G);
	ck_assert_uint_eq(c.cache[CL_L2].size, 256 << 10);
	ck_assert_uint_eq(c.cache[CL_L2].ways, 4);
	ck_assert_uint_eq(c.cache[CL_L2].latency, 11);
	ck_assert_uint_eq(c.cache[CL_LLC].latency, 44);
	/* os.* is not in the file: defaults kept. */
	ck_assert_uint_eq(c.memory, 4ULL << 30);
	config_defaults(&d);
	roundtrip_over(&c, &d);
}
END_TEST

START_TEST(test_golden_cove_file)
{
	struct sim_config c, d;
	struct err e;

	load_machine(&c, "golden-cove.yaml");
	ck_assert_int_eq(config_validate(&c, "golden-cove.yaml", &e), 0);
	ck_assert(c.pcid);
	ck_assert_uint_eq(c.l1i[PS_4K].entries, 256);
	ck_assert_uint_eq(c.l1i[PS_4K].ways, 8);
	ck_assert_uint_eq(c.l1i[PS_2M].entries, 32);
	ck_assert_uint_eq(c.l1i[PS_2M].ways, 8);
	ck_assert_uint_eq(c.l1d[PS_4K].entries, 96);
	ck_assert_uint_eq(c.l1d[PS_4K].ways, 6);
	ck_assert_uint_eq(c.l1d[PS_2M].entries, 32);
	ck_assert_uint_eq(c.l1d[PS_2M].ways, 4);
	ck_assert_uint_eq(c.l1d[PS_1G].entries, 8);
	ck_assert_uint_eq(c.l1d[PS_1G].ways, 8);
	ck_assert_uint_eq(c.nr_stlb, 2);
	ck_assert_uint_eq(c.stlb[0].entries, 1024);
	ck_assert_uint_eq(c.stlb[0].ways, 8);
	ck_assert_uint_eq(c.stlb[0].pages, M4K | M2M);
	ck_assert_uint_eq(c.stlb[1].entries, 1024);
	ck_assert_uint_eq(c.stlb[1].ways, 8);
	ck_assert_uint_eq(c.stlb[1].pages, M4K | M1G);
	ck_assert_uint_eq(c.cache[CL_L1D].size, 48 << 10);
	ck_assert_uint_eq(c.cache[CL_L1D].ways, 12);
	ck_assert_uint_eq(c.cache[CL_L1D].latency, 5);
	ck_assert_uint_eq(c.cache[CL_L2].size, 1280 << 10);
	ck_assert_uint_eq(c.cache[CL_LLC].size, 30ULL << 20);
	config_defaults(&d);
	roundtrip_over(&c, &d);
}
END_TEST

START_TEST(test_zen4_file)
{
	struct sim_config c, d;
	struct err e;

	load_machine(&c, "zen4.yaml");
	ck_assert_int_eq(config_validate(&c, "zen4.yaml", &e), 0);
	ck_assert(c.pcid);
	/* AMD PTE coalescing in the L1 DTLB and the L2 DTLB, not the ITLB */
	ck_assert_int_eq(c.coalesce, COAL_AMD);
	ck_assert(c.coal_l1d && c.coal_stlb && !c.coal_l1i);
	for (int ps = 0; ps < PS_NR; ps++) {
		ck_assert_uint_eq(c.l1d[ps].entries, 72);
		ck_assert_uint_eq(c.l1d[ps].ways, 72);
		ck_assert_uint_eq(c.l1i[ps].entries, 64);
		ck_assert_uint_eq(c.l1i[ps].ways, 64);
	}
	ck_assert_uint_eq(c.nr_stlb, 2);
	ck_assert_uint_eq(c.stlb[0].entries, 3072);
	ck_assert_uint_eq(c.stlb[0].ways, 8);
	ck_assert_uint_eq(c.stlb[0].pages, M4K | M2M);
	ck_assert_uint_eq(c.stlb[1].entries, 64);
	ck_assert_uint_eq(c.stlb[1].ways, 64);
	ck_assert_uint_eq(c.stlb[1].pages, M1G);
	ck_assert_uint_eq(c.cache[CL_L2].size, 1 << 20);
	ck_assert_uint_eq(c.cache[CL_LLC].size, 32ULL << 20);
	config_defaults(&d);
	roundtrip_over(&c, &d);
}
END_TEST

/* configs/zen5.yaml: this build machine's core, each value as the file's comments source it. */
START_TEST(test_zen5_file)
{
	struct sim_config c, d;
	struct err e;

	load_machine(&c, "zen5.yaml");
	ck_assert_int_eq(config_validate(&c, "zen5.yaml", &e), 0);
	ck_assert_uint_eq(c.freq_mhz, 3600);
	ck_assert_int_eq(c.coalesce, COAL_AMD);
	ck_assert(c.coal_l1d && c.coal_stlb && !c.coal_l1i);
	for (int ps = 0; ps < PS_NR; ps++) {
		ck_assert_uint_eq(c.l1d[ps].entries, 96);
		ck_assert_uint_eq(c.l1d[ps].ways, 96);
		ck_assert_uint_eq(c.l1i[ps].entries, 64);
		ck_assert_uint_eq(c.l1i[ps].ways, 64);
	}
	ck_assert_uint_eq(c.nr_stlb, 2);
	ck_assert_uint_eq(c.stlb[0].entries, 4096);
	ck_assert_uint_eq(c.stlb[0].ways, 16);
	ck_assert_uint_eq(c.stlb[0].pages, M4K | M2M);
	ck_assert_uint_eq(c.stlb[1].entries, 64);
	ck_assert_uint_eq(c.stlb[1].ways, 64);
	ck_assert_uint_eq(c.stlb[1].pages, M1G);
	ck_assert_uint_eq(c.lat_stlb, 7);
	ck_assert_uint_eq(c.cache[CL_L1D].size, 48 << 10);
	ck_assert_uint_eq(c.cache[CL_L1D].ways, 12);
	ck_assert_uint_eq(c.cache[CL_L1D].latency, 4);
	ck_assert_uint_eq(c.cache[CL_L2].size, 1 << 20);
	ck_assert_uint_eq(c.cache[CL_L2].ways, 16);
	ck_assert_uint_eq(c.cache[CL_L2].latency, 14);
	ck_assert_uint_eq(c.cache[CL_LLC].size, 32ULL << 20);
	ck_assert_uint_eq(c.cache[CL_LLC].ways, 16);
	ck_assert_uint_eq(c.cache[CL_LLC].latency, 50);
	ck_assert_uint_eq(c.dram_latency, 486); /* measured: make native-model's memlat row */
	/* the overlap core's window, as the file sources it (AMD's figures via chipsandcheese,
	 * AMD's perf events); the walkers and the L2/LLC misses in flight stay unsourced */
	ck_assert_uint_eq(c.core.rob, 448);
	ck_assert_uint_eq(c.core.width, 8);
	ck_assert_uint_eq(c.core.store_buffer, 104);
	ck_assert_uint_eq(c.core.walkers, 6);
	ck_assert_uint_eq(c.cache[CL_L1D].mshrs, 64);
	/* os.* is not in the file: defaults kept. */
	config_defaults(&d);
	ck_assert_uint_eq(c.memory, d.memory);
	ck_assert_int_eq(c.mode, d.mode);
	roundtrip_over(&c, &d);
}
END_TEST

START_TEST(test_roundtrip_defaults)
{
	struct sim_config d, base, back;
	char *yaml;
	struct err e;

	config_defaults(&d);
	/*
	 * Reload over a different machine: the YAML must name every key but the
	 * quiet ones, which it leaves out at their default (struct key's quiet:
	 * cpu.pcid, os.hugetlbfs.default_size, tlb.coalesce.*), as a file read
	 * over the defaults means. zen4.yaml sets cpu.pcid and tlb.coalesce: put
	 * them back to their defaults.
	 */
	load_machine(&base, "zen4.yaml");
	ck_assert(base.pcid);
	base.pcid = false;
	base.coalesce = COAL_NONE;
	base.coal_l1i = base.coal_l1d = base.coal_stlb = false;
	roundtrip_over(&d, &base);

	yaml = to_yaml(&d);
	memcpy(&back, &base, sizeof(back));
	ck_assert_int_eq(config_load_string(&back, yaml, "rt", &e), 0);
	ck_assert(!memcmp(&back, &d, sizeof(d)));
	/* The layout of DESIGN.md, in flow style for arrays. */
	ck_assert_ptr_nonnull(strstr(yaml, "\ntlb:\n  l1i: { 4K: { entries: 128, ways: 4 }, "
				       "2M: { entries: 8, ways: 4 }, 1G: { entries: 0, ways: 0 } }\n"));
	ck_assert_ptr_nonnull(strstr(yaml, "\n  stlb:\n    - { entries: 512, ways: 4, "
				       "pages: [4K] }\n"));
	ck_assert_ptr_nonnull(strstr(yaml, "\n  l2: { size: 256K, ways: 8, latency: 10, mshrs: 16 }\n"));
	ck_assert_ptr_nonnull(strstr(yaml, "\n  implicit: { enabled: true, granule: 2M }\n"));
	ck_assert_ptr_nonnull(strstr(yaml, "\nseed: 1\n"));
	free(yaml);
}
END_TEST

START_TEST(test_roundtrip_edges)
{
	struct sim_config c, d;
	char *yaml;

	config_defaults(&c);
	snprintf(c.cpu_name, sizeof(c.cpu_name), "%s",
		 "a \"quoted\" \\ name: #1\twith\ttabs\nand a newline");
	c.cpi = 0.1;
	c.seed = UINT64_MAX;
	c.memory = 1ULL << 40;
	c.policy = REPL_RANDOM;
	c.mode = MODE_HUGETLBFS;
	c.data_refs = true;
	c.implicit.enabled = false;
	c.implicit.granule = 1ULL << 30;
	c.cache[CL_LLC].size = 1536 << 10;
	c.cache[CL_LLC].ways = 12;
	c.nr_stlb = 4;
	c.stlb[1] = (struct stlb_cfg){ 16, 4, M1G };
	c.stlb[2] = (struct stlb_cfg){ 8, 8, M2M | M1G };
	c.stlb[3] = (struct stlb_cfg){ 1000, 10, M4K | M2M | M1G };
	config_defaults(&d);
	roundtrip_over(&c, &d);

	/* No STLB at all is written as an empty list. */
	c.nr_stlb = 0;
	memset(c.stlb, 0, sizeof(c.stlb));
	yaml = to_yaml(&c);
	ck_assert_ptr_nonnull(strstr(yaml, "\n  stlb: []\n"));
	free(yaml);
	roundtrip_over(&c, &d);
}
END_TEST

START_TEST(test_empty_inputs)
{
	static const char *const ok[] = { "", "# only a comment\n", "---\n",
					  "tlb:\n", "os: ~\n" };
	struct sim_config c, d;
	struct err e;

	config_defaults(&d);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		config_defaults(&c);
		ck_assert_msg(config_load_string(&c, ok[i], "t.yaml", &e) == 0,
			      "'%s' rejected", ok[i]);
		ck_assert(!memcmp(&c, &d, sizeof(c)));
	}
}
END_TEST

START_TEST(test_file_forms)
{
	struct sim_config c;
	struct err e;

	/* One mapping replaces the whole list; pages default to [4K]. */
	load_machine(&c, "skylake.yaml");
	ck_assert_int_eq(config_load_string(&c, "tlb:\n  stlb: { entries: 256, ways: 4 }\n",
					    "t.yaml", &e), 0);
	ck_assert_uint_eq(c.nr_stlb, 1);
	ck_assert_uint_eq(c.stlb[0].entries, 256);
	ck_assert_uint_eq(c.stlb[0].ways, 4);
	ck_assert_uint_eq(c.stlb[0].pages, M4K);
	ck_assert_uint_eq(c.stlb[1].entries, 0);

	/* "4K+2M" is a page list too; an entries-0 array is dropped. */
	ck_assert_int_eq(config_load_string(&c,
		"tlb:\n  stlb:\n    - { entries: 0, ways: 4 }\n"
		"    - { entries: 64, ways: 8, pages: 2M+1G }\n", "t.yaml", &e), 0);
	ck_assert_uint_eq(c.nr_stlb, 1);
	ck_assert_uint_eq(c.stlb[0].entries, 64);
	ck_assert_uint_eq(c.stlb[0].pages, M2M | M1G);

	ck_assert_int_eq(config_load_string(&c, "tlb: { stlb: [] }\n", "t.yaml", &e), 0);
	ck_assert_uint_eq(c.nr_stlb, 0);
	config_defaults(&c);
	ck_assert_int_eq(config_load_string(&c, "tlb: { stlb: { entries: 0 } }\n", "t.yaml",
					    &e), 0);
	ck_assert_uint_eq(c.nr_stlb, 0);

	/* Dotted keys, YAML 1.1 booleans, a 1G array added. */
	config_defaults(&c);
	ck_assert_int_eq(config_load_string(&c,
		"os.mode: thp\ncache:\n  data_refs: yes\nos:\n  implicit: { enabled: Off }\n"
		"tlb: { l1d: { 1G: { entries: 4, ways: 4 } } }\n", "t.yaml", &e), 0);
	ck_assert_int_eq(c.mode, MODE_THP);
	ck_assert(c.data_refs);
	ck_assert(!c.implicit.enabled);
	ck_assert_uint_eq(c.l1d[PS_1G].entries, 4);
	ck_assert_uint_eq(c.l1d[PS_4K].entries, 64);
}
END_TEST

START_TEST(test_set_types)
{
	struct sim_config c;
	struct err e;

	config_defaults(&c);
	expect_set_ok(&c, "tlb.l1d.4K.entries=128");        /* uint */
	ck_assert_uint_eq(c.l1d[PS_4K].entries, 128);
	expect_set_ok(&c, "cache.llc.size=16M");             /* size */
	ck_assert_uint_eq(c.cache[CL_LLC].size, 16ULL << 20);
	expect_set_ok(&c, "os.memory=8G");
	ck_assert_uint_eq(c.memory, 8ULL << 30);
	expect_set_ok(&c, "tlb.policy=plru");                /* enum */
	ck_assert_int_eq(c.policy, REPL_PLRU);
	expect_set_ok(&c, "os.mode=hugetlbfs");
	ck_assert_int_eq(c.mode, MODE_HUGETLBFS);
	expect_set_ok(&c, "cache.data_refs=true");           /* bool */
	ck_assert(c.data_refs);
	expect_set_ok(&c, "os.implicit.enabled=no");
	ck_assert(!c.implicit.enabled);
	expect_set_ok(&c, "cpu.cpi=0.75");                   /* double */
	ck_assert(c.cpi == 0.75);
	expect_set_ok(&c, "cpu.name=Test core (2 GHz)");     /* string */
	ck_assert_str_eq(c.cpu_name, "Test core (2 GHz)");
	expect_set_ok(&c, "seed=18446744073709551615");      /* uint64 */
	ck_assert_uint_eq(c.seed, UINT64_MAX);
	expect_set_ok(&c, "os.cost.clear_page=1024");
	ck_assert_uint_eq(c.cost.clear_page, 1024);
	expect_set_ok(&c, "os.hugetlbfs.pages=0x10");        /* hex integers */
	ck_assert_uint_eq(c.hugetlb_pages, 16);
	expect_set_ok(&c, "cache.line=128");                 /* size stored in unsigned */
	ck_assert_uint_eq(c.line_size, 128);

	expect_set_ok(&c, "tlb.stlb.0.pages=[4K, 2M]");      /* pages list */
	ck_assert_uint_eq(c.stlb[0].pages, M4K | M2M);
	expect_set_ok(&c, "tlb.stlb.pages=1G");              /* shorthand for .0 */
	ck_assert_uint_eq(c.stlb[0].pages, M1G);
	expect_set_ok(&c, "tlb.stlb.ways=8");
	ck_assert_uint_eq(c.stlb[0].ways, 8);
	expect_set_ok(&c, "tlb.stlb.0.pages=4K+2M");
	ck_assert_uint_eq(c.stlb[0].pages, M4K | M2M);

	/* Append: a whole array, then by entries first. */
	expect_set_ok(&c, "tlb.stlb.1={entries: 16, ways: 4, pages: [1G]}");
	ck_assert_uint_eq(c.nr_stlb, 2);
	ck_assert_uint_eq(c.stlb[1].entries, 16);
	ck_assert_uint_eq(c.stlb[1].ways, 4);
	ck_assert_uint_eq(c.stlb[1].pages, M1G);
	expect_set_ok(&c, "tlb.stlb.2.entries=32");
	ck_assert_uint_eq(c.nr_stlb, 3);
	ck_assert_uint_eq(c.stlb[2].pages, M4K);
	expect_set_ok(&c, "tlb.stlb.2.ways=32");
	ck_assert_int_eq(config_validate(&c, "--set", &e), 0);
	/* entries 0 removes an array; the later ones move down. */
	expect_set_ok(&c, "tlb.stlb.0.entries=0");
	ck_assert_uint_eq(c.nr_stlb, 2);
	ck_assert_uint_eq(c.stlb[0].entries, 16);
	ck_assert_uint_eq(c.stlb[1].entries, 32);
	/* A whole list replaces it. */
	expect_set_ok(&c, "tlb.stlb=[{entries: 1536, ways: 12, pages: [4K, 2M]}]");
	ck_assert_uint_eq(c.nr_stlb, 1);
	ck_assert_uint_eq(c.stlb[0].entries, 1536);
	expect_set_ok(&c, "tlb.stlb=[]");
	ck_assert_uint_eq(c.nr_stlb, 0);

	/* A mapping sets several keys of one array at once. */
	expect_set_ok(&c, "tlb.l1d.4K={entries: 6, ways: 6}");
	ck_assert_uint_eq(c.l1d[PS_4K].entries, 6);
	ck_assert_uint_eq(c.l1d[PS_4K].ways, 6);
	expect_set_ok(&c, "walk.levels=5");
	ck_assert_uint_eq(c.levels, 5);
	ck_assert_int_eq(config_validate(&c, "--set", &e), 0);
}
END_TEST

START_TEST(test_set_errors)
{
	struct sim_config c;
	char msg[1024];
	struct err e;

	expect_set_err("tlb.l1d.8K.entries=4",
		       "--set tlb.l1d.8K.entries=4: unknown key 'tlb.l1d.8K.entries' "
		       "(did you mean 'tlb.l1d.4K.entries'?)");
	/* the closest key within a third of the length in edits; else no suggestion */
	expect_set_err("os.thp.enabld=never",
		       "--set os.thp.enabld=never: unknown key 'os.thp.enabld' "
		       "(did you mean 'os.thp.enabled'?)");
	expect_set_err("os.mod=thp", "--set os.mod=thp: unknown key 'os.mod' (did you mean 'os.mode'?)");
	expect_set_err("zzz=1", "--set zzz=1: unknown key 'zzz'");
	{
		struct err e2;
		char m2[1024];

		config_defaults(&c);
		ck_assert_int_eq(config_set(&c, "zzz=1", &e2), -1);
		err_format(&e2, m2, sizeof(m2));
		ck_assert_str_eq(m2, "--set zzz=1: unknown key 'zzz'"); /* nothing appended */
	}
	expect_set_err("tlb.policy", "--set tlb.policy: expected path=value");
	expect_set_err("=5", "--set =5: expected path=value");
	expect_set_err("tlb.policy=", "--set tlb.policy=: missing value");
	expect_set_err("tlb.policy=mru",
		       "--set tlb.policy=mru: tlb.policy: unknown value 'mru' "
		       "(expected lru, fifo, plru or random)");
	expect_set_err("walk.levels=3", "--set walk.levels=3: walk.levels: 3 is not 4 or 5");
	expect_set_err("seed=-1",
		       "--set seed=-1: seed: expected a non-negative integer, got '-1'");
	expect_set_err("cache.line=48",
		       "--set cache.line=48: cache.line: 48 is not a power of two in 8..4096");
	expect_set_err("tlb.l1d=5", "--set tlb.l1d=5: tlb.l1d: expected a mapping, got a scalar");
	expect_set_err("tlb.stlb.2.entries=8",
		       "--set tlb.stlb.2.entries=8: tlb.stlb.2.entries: there are 1 STLB "
		       "arrays; add them in order (next is tlb.stlb.1)");
	expect_set_err("tlb.stlb.1.ways=4",
		       "--set tlb.stlb.1.ways=4: tlb.stlb.1: a new STLB array needs entries > 0");
	expect_set_err("tlb.stlb.4.entries=8",
		       "--set tlb.stlb.4.entries=8: tlb.stlb.4.entries: at most 4 STLB arrays");
	expect_set_err("sweep=1", "--set sweep=1: sweep: only allowed in sweep files");
	expect_set_err("cpu.cpi=*x", "--set cpu.cpi=*x: YAML aliases (*x) are not supported");
	/* Atomic: entries was stored in the working copy before ways failed. */
	expect_set_err("tlb.l1d.4K={entries: 128, ways: x}",
		       "--set tlb.l1d.4K={entries: 128, ways: x}: tlb.l1d.4K.ways: "
		       "expected an integer, got 'x'");

	/* Cross-field rules wait for config_validate() after the last --set. */
	config_defaults(&c);
	expect_set_ok(&c, "tlb.l1d.4K.ways=3");
	ck_assert_int_eq(config_validate(&c, "--set", &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "--set: tlb.l1d.4K.ways: 3 does not divide entries 64");
	/* ... so the order of two overrides does not matter. */
	config_defaults(&c);
	expect_set_ok(&c, "cache.l2.ways=10");
	expect_set_ok(&c, "cache.l2.size=1280K");
	ck_assert_int_eq(config_validate(&c, "--set", &e), 0);
}
END_TEST

/* os.profile osless sets its three keys where it appears; a later contradiction is an error */
START_TEST(test_profile_osless)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	ck_assert_int_eq(c.profile, PROFILE_LINUX);
	ck_assert_int_eq(config_set(&c, "os.profile=osless", &e), 0);
	ck_assert_int_eq(c.profile, PROFILE_OSLESS);
	ck_assert(!c.zero_page);
	ck_assert_uint_eq(c.fault_around_bytes, 4096);
	ck_assert_uint_eq(c.implicit.granule, 4096);
	ck_assert_int_eq(config_validate(&c, "--set", &e), 0);
	roundtrip_over(&c, &c);
	/* linux sets nothing back: the keys stay as they are, and may be anything */
	ck_assert_int_eq(config_set(&c, "os.profile=linux", &e), 0);
	ck_assert(!c.zero_page);
	ck_assert_int_eq(config_set(&c, "os.zero_page=true", &e), 0);
	ck_assert_int_eq(config_validate(&c, "--set", &e), 0);
	/* osless then a contradicting key, in a file: the key's position */
	config_defaults(&c);
	ck_assert_int_eq(config_load_string(&c, "os:\n  profile: osless\n  fault_around_bytes: 64K\n",
					    "t.yaml", &e), -1);
	{
		char msg[512];

		err_format(&e, msg, sizeof(msg));
		ck_assert_str_eq(msg, "t.yaml:3:3: os.fault_around_bytes: contradicts os.profile osless "
				      "(4K: no fault-around)");
	}
	/* the key after the profile in the same file may agree */
	config_defaults(&c);
	ck_assert_int_eq(config_load_string(&c, "os: { profile: osless, zero_page: false }\n", "t.yaml",
					    &e), 0);
	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "os.profile=osless", &e), 0);
	ck_assert_int_eq(config_set(&c, "os.implicit.granule=2M", &e), 0);
	ck_assert_int_eq(config_validate(&c, "--set", &e), -1);
	ck_assert_str_eq(e.msg, "os.implicit.granule: contradicts os.profile osless (4K implicit regions)");
}
END_TEST

START_TEST(test_get)
{
	struct sim_config c;
	char buf[64];

	config_defaults(&c);
	expect_get(&c, "tlb.l1d.4K.entries", "64");
	expect_get(&c, "tlb.l1i.2M.ways", "4");
	expect_get(&c, "cache.llc.size", "8M");
	expect_get(&c, "cache.l2.size", "256K");
	expect_get(&c, "cache.line", "64");
	expect_get(&c, "os.memory", "4G");
	expect_get(&c, "os.implicit.granule", "2M");
	expect_get(&c, "os.implicit.enabled", "true");
	expect_get(&c, "cache.data_refs", "false");
	expect_get(&c, "tlb.policy", "lru");
	expect_get(&c, "os.mode", "base");
	expect_get(&c, "cpu.cpi", "1.0");
	expect_get(&c, "cpu.name", "Nehalem-class (LWN 2.6.38 THP article cpuid listing)");
	expect_get(&c, "tlb.stlb.0.pages", "4K");
	expect_get(&c, "tlb.stlb.entries", "512");
	expect_get(&c, "tlb.stlb.1.entries", "0");
	expect_get(&c, "tlb.stlb.1.pages", "none");
	expect_get(&c, "walk.pwc.pde.entries", "32");
	expect_get(&c, "os.cost.fault", "200");
	expect_get(&c, "seed", "1");
	expect_set_ok(&c, "tlb.stlb.0.pages=[2M, 4K]");
	expect_get(&c, "tlb.stlb.0.pages", "4K+2M");
	expect_set_ok(&c, "cache.llc.size=1536K");
	expect_get(&c, "cache.llc.size", "1536K");
	expect_set_ok(&c, "cpu.cpi=0.1");
	expect_get(&c, "cpu.cpi", "0.1");
	expect_set_ok(&c, "tlb.policy=random");
	expect_get(&c, "tlb.policy", "random");

	ck_assert_int_eq(config_get(&c, "tlb.l1d", buf, sizeof(buf)), -1);
	ck_assert_int_eq(config_get(&c, "tlb.l1d.8K.entries", buf, sizeof(buf)), -1);
	ck_assert_int_eq(config_get(&c, "tlb.stlb.4.entries", buf, sizeof(buf)), -1);
	ck_assert_int_eq(config_get(&c, "", buf, sizeof(buf)), -1);
}
END_TEST

START_TEST(test_load_errors)
{
	expect_load_err("tlb:\n  l1d:\n    8K: { entries: 4, ways: 4 }\n",
			"t.yaml:3:5: unknown key 'tlb.l1d.8K'", "");
	expect_load_err("cpu:\n  freq_mhz: fast\n",
			"t.yaml:2:3: cpu.freq_mhz: expected an integer, got 'fast'", "");
	expect_load_err("tlb: 5\n", "t.yaml:1:1: tlb: expected a mapping, got a scalar", "");
	expect_load_err("tlb: { latency: [1, 2] }\n",
			"t.yaml:1:8: tlb.latency: expected a mapping, got a sequence", "");
	expect_load_err("tlb: { latency: { l1: { a: 1 } } }\n",
			"t.yaml:1:19: tlb.latency.l1: expected an integer, got a mapping", "");
	/* Geometry, pointing at the key the file set. */
	expect_load_err("tlb:\n  l1d:\n    4K: { entries: 64, ways: 3 }\n",
			"t.yaml:3:24: tlb.l1d.4K.ways: 3 does not divide entries 64", "");
	expect_load_err("tlb:\n  l1d:\n    4K: { entries: 64, ways: 0 }\n",
			"t.yaml:3:24: tlb.l1d.4K.ways: 0 ways for 64 entries", "");
	expect_load_err("tlb:\n  l1d:\n    2M: { ways: 64 }\n",
			"t.yaml:3:11: tlb.l1d.2M.ways: 64 exceeds entries 32", "");
	expect_load_err("tlb:\n  l1d:\n    4K:\n      entries: 66\n",
			"t.yaml:4:7: tlb.l1d.4K.ways: 4 does not divide entries 66", "");
	expect_load_err("walk: { pwc: { pde: { entries: 24, ways: 5 } } }\n",
			"t.yaml:1:36: walk.pwc.pde.ways: 5 does not divide entries 24", "");
	expect_load_err("tlb:\n  stlb:\n    - { entries: 1536, ways: 12, pages: [4K, 2M] }\n"
			"    - { entries: 16, ways: 4, pages: [] }\n",
			"t.yaml:4:31: tlb.stlb.1.pages: empty", "");
	expect_load_err("tlb: { stlb: { entries: 8, ways: 8, pages: [4K, 8K] } }\n",
			"t.yaml:1:49: tlb.stlb.pages: unknown page size '8K'", "");
	expect_load_err("tlb: { stlb: [ {entries: 1}, {entries: 1}, {entries: 1}, "
			"{entries: 1}, {entries: 1} ] }\n",
			"t.yaml:1:72: tlb.stlb: more than 4 STLB arrays", "");
	expect_load_err("tlb: { stlb: 512 }\n",
			"t.yaml:1:8: tlb.stlb: expected a mapping or a sequence of mappings", "");
	expect_load_err("cache:\n  l2: { ways: 10 }\n",
			"t.yaml:2:9: cache.l2.size: 256K is not a multiple of ways * line = 10 * 64",
			"");
	expect_load_err("cache:\n  llc: { ways: 0 }\n",
			"t.yaml:2:10: cache.llc.ways: 0 ways for a 8M cache", "");
	/* Enums, ranges and single-value rules. */
	expect_load_err("tlb: { policy: mru }\n",
			"t.yaml:1:8: tlb.policy: unknown value 'mru' "
			"(expected lru, fifo, plru or random)", "");
	expect_load_err("os:\n  mode: huge\n",
			"t.yaml:2:3: os.mode: unknown value 'huge' (expected base, hugetlbfs or thp)",
			"");
	expect_load_err("walk:\n  levels: 3\n", "t.yaml:2:3: walk.levels: 3 is not 4 or 5", "");
	expect_load_err("cache:\n  l1d: { size: -32K }\n",
			"t.yaml:2:10: cache.l1d.size: expected a size", "got '-32K'");
	expect_load_err("tlb: { latency: { l1: -1 } }\n",
			"t.yaml:1:19: tlb.latency.l1: expected a non-negative integer, got '-1'", "");
	expect_load_err("tlb: { l1d: { 4K: { entries: 4294967296 } } }\n",
			"t.yaml:1:21: tlb.l1d.4K.entries: 4294967296 is out of range", "");
	expect_load_err("cache: { line: 48 }\n",
			"t.yaml:1:10: cache.line: 48 is not a power of two in 8..4096", "");
	expect_load_err("os: { memory: 66M }\n",
			"t.yaml:1:7: os.memory: 66M is not a multiple of 4M", "");
	expect_load_err("os: { memory: 32M }\n",
			"t.yaml:1:7: os.memory: 32M is below the minimum 64M", "");
	expect_load_err("os: { memory: 2T }\n",
			"t.yaml:1:7: os.memory: 2T is above the maximum 1T", "");
	expect_load_err("os: { implicit: { granule: 3M } }\n",
			"t.yaml:1:19: os.implicit.granule: 3M is not a power of two in 4K..1G", "");
	expect_load_err("os: { implicit: { granule: 2G } }\n",
			"t.yaml:1:19: os.implicit.granule: 2G is not a power of two in 4K..1G", "");
	expect_load_err("cpu: { cpi: -1 }\n",
			"t.yaml:1:8: cpu.cpi: -1 is not a number of cycles per instruction from 0 to 1000", "");
	/* 1e308 x instructions is no 64-bit cycle count (it used to give 0 instruction cycles) */
	expect_load_err("cpu: { cpi: 1e308 }\n",
			"t.yaml:1:8: cpu.cpi: 1e+308 is not a number of cycles per instruction from 0 to 1000", "");
	expect_load_err("cpu: { cpi: 1000.5 }\n",
			"t.yaml:1:8: cpu.cpi: 1000.5 is not a number of cycles per instruction from 0 to 1000", "");
	expect_load_err("cpu: { cpi: .inf }\n",
			"t.yaml:1:8: cpu.cpi: expected a number, got '.inf'", "");
	expect_load_err("cpu: { freq_mhz: 0 }\n",
			"t.yaml:1:8: cpu.freq_mhz: must be greater than 0", "");
	expect_load_err("cache: { data_refs: maybe }\n",
			"t.yaml:1:10: cache.data_refs: expected true or false, got 'maybe'", "");
	expect_load_err("cpu: { name: \"0123456789012345678901234567890123456789"
			"0123456789012345678901234\" }\n",
			"t.yaml:1:8: cpu.name: longer than 63 bytes", "");
	/* YAML structure. */
	expect_load_err("tlb: { l1d: { 4K: { entries: 64, ways: 4 }\n",
			"t.yaml:2:1: YAML syntax error: did not find expected ',' or '}'",
			"while parsing a flow mapping");
	expect_load_err("cpu:\n  freq_mhz: &f 2000\ntlb:\n  latency: { l1: *f }\n",
			"t.yaml:4:18: YAML aliases (*f) are not supported", "");
	expect_load_err("seed: 1\n---\nseed: 2\n",
			"t.yaml:2:1: more than one YAML document", "");
	expect_load_err("- a\n- b\n",
			"t.yaml:1:1: expected a mapping of configuration keys at the top level, "
			"got a sequence", "");
	expect_load_err("just a string\n", "t.yaml:1:1: expected a mapping", "got a scalar");
	expect_load_err("sweep:\n  tlb.policy: [lru, fifo]\n",
			"t.yaml:1:1: sweep: only allowed in sweep files", "");
	expect_load_err("seed: 1\nseed: 2\n", "t.yaml:2:1: duplicate key 'seed'", "");
	expect_load_err("tlb:\n  l1d: {}\n  l1d: {}\n", "t.yaml:3:3: duplicate key 'tlb.l1d'", "");
	expect_load_err("? [a]\n: 1\n", "t.yaml:1:3: expected a key, got a sequence", "");
	expect_load_err("seed: \"1\\x\"\n",
			"t.yaml:1:11: YAML syntax error: did not find expected hexdecimal number",
			"");
	expect_load_err("seed: \xff\n", "t.yaml: invalid input at byte 6", "");
}
END_TEST

START_TEST(test_load_file_errors)
{
	char path[] = "/tmp/check_config_XXXXXX", want[128], msg[1024];
	struct sim_config c, d;
	struct err e;
	FILE *f;
	int fd;

	config_defaults(&c);
	ck_assert_int_eq(config_load_file(&c, "/nonexistent/x.yaml", &e), -1);
	err_format(&e, msg, sizeof(msg));
	ck_assert_str_eq(msg, "/nonexistent/x.yaml: cannot open: No such file or directory");

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("# a machine\ncpu:\n  freq_mhz: 3000\n\ntlb:\n  l1i:\n    4K: { entries: 64,"
	      " ways: 5 }\n", f);
	ck_assert_int_eq(fclose(f), 0);
	config_defaults(&c);
	config_defaults(&d);
	ck_assert_int_eq(config_load_file(&c, path, &e), -1);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s:7:24: tlb.l1i.4K.ways: 5 does not divide entries 64",
		 path);
	ck_assert_str_eq(msg, want);
	ck_assert(!memcmp(&c, &d, sizeof(c)));
	unlink(path);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_name_tables);
	tcase_add_test(tc, test_nehalem_file_is_defaults);
	tcase_add_test(tc, test_skylake_file);
	tcase_add_test(tc, test_golden_cove_file);
	tcase_add_test(tc, test_zen4_file);
	tcase_add_test(tc, test_zen5_file);
	tcase_add_test(tc, test_roundtrip_defaults);
	tcase_add_test(tc, test_roundtrip_edges);
	tcase_add_test(tc, test_empty_inputs);
	tcase_add_test(tc, test_file_forms);
	tcase_add_test(tc, test_set_types);
	tcase_add_test(tc, test_set_errors);
	tcase_add_test(tc, test_profile_osless);
	tcase_add_test(tc, test_get);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_load_file_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(config_suite());
}
