/*
 * check_stats.c - the report's three outputs from the counter table: the
 * readable table and the --modes table byte for byte (pinned from the code
 * before the table, conditional pieces included), and the JSON's keys, values
 * and types (the derived rows of the text table are not in it).
 */
#include <check.h>
#include "check_run.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Distinct values in every counter; swap, the 2M sizes and every cycle term non-zero. */
static void fill(struct stats *s)
{
	uint64_t v = 1000;

	memset(s, 0, sizeof(*s));
	s->instructions = 4440866;
	s->ifetch = 4440866;
	s->load = 1351941;
	s->store = 839342;
	s->modify = 10296;
	s->lookups[0] = 4441288;
	s->lookups[1] = 2211938;
	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++) {
			s->l1[side].hits[ps] = ps == 2 ? 0 : v++ * 1000;
			s->l1[side].misses[ps] = ps == 2 ? 0 : v++;
		}
	s->stlb.hits = 356;
	s->stlb.misses = 286;
	s->walks = 286;
	s->pte_reads = 580;
	s->walk_cycles = 15256;
	for (int i = 0; i < PWC_NR; i++) {
		s->pwc[i].hits = v++;
		s->pwc[i].misses = v++;
	}
	s->served[0] = 514;
	s->served[1] = 3;
	s->served[2] = 2;
	s->served[3] = 61;
	s->pgfault = 284;
	s->tlb_invalidations = 17;
	s->nr_anon_pages = 280;
	s->nr_anon_transparent_hugepages = 3;
	s->nr_hugetlb_pages = 2;
	s->nr_hugetlb_pages_1g = 1;
	s->thp_fault_alloc = v++;
	s->thp_fault_fallback = v++;
	s->thp_split_pmd = v++;
	s->thp_split_page = v++;
	s->thp_deferred_split_page = v++;
	s->thp_collapse_alloc = v++;
	s->thp_collapse_alloc_failed = v++;
	s->thp_file_mapped = v++;
	s->nr_file_hugepages = v++;
	s->nr_file_pmdmapped = v++;
	s->thp_scan_exceed_none_pte = v++;
	s->thp_zero_page_alloc = v++;
	s->thp_zero_page_alloc_failed = v++;
	s->compact_stall = v++;
	s->compact_success = v++;
	s->compact_fail = v++;
	s->khugepaged_pages_collapsed = v++;
	s->khugepaged_full_scans = v++;
	s->nr_page_table_pages = 11;
	s->pgmajfault = 5;
	s->pswpin = 7;
	s->pswpout = 8606;
	s->pgscan_kswapd = 24000;
	s->pgscan_direct = 640;
	s->pgsteal_kswapd = 8000;
	s->pgsteal_direct = 606;
	s->allocstall_normal = v++;
	s->allocstall_movable = v++;
	s->pageoutrun = v++;
	s->pgactivate = v++;
	s->pgdeactivate = v++;
	s->thp_swpout = 31;
	s->thp_swpout_fallback = 1;
	s->thp_scan_exceed_swap_pte = v++;
	s->pglazyfree = v++;
	s->pglazyfreed = v++;
	s->rss_bytes = 1136 << 10;
	s->huge_bytes = 6 << 20;
	s->free_pages = 12345;
	s->swap_bytes = 34420 << 10;
	s->huge_coverage = 0.4567;
	s->peak_rss_bytes = 8192 << 10;
	s->peak_huge_bytes = 7 << 20;
	s->huge_coverage_peak = 0.875;
	s->huge_coverage_mean = 0.615;
	s->fragmentation_index_order9 = -1;
	s->cyc_instructions = 4440866;
	s->cyc_translation = 20392;
	s->cyc_fault = 129504;
	s->cyc_data = 9881626;
	s->cyc_compaction = 777;
	s->cyc_khugepaged = 888;
	s->cyc_reclaim = 999;
	s->cyc_kswapd = 1111;
	s->cyc_total = s->cyc_instructions + s->cyc_translation + s->cyc_fault + s->cyc_data +
		       s->cyc_compaction + s->cyc_reclaim;
	s->cyc_translation_stall = s->cyc_translation; /* additive: as sim_finish() sets them */
	s->cyc_data_stall = s->cyc_data;
	s->wall_seconds = 1.5;
	s->max_rss_bytes = 1 << 20;
}

static const struct report_meta meta = {
	.config = "built-in", .trace = "t.lackey", .format = "lackey", .mode = "base",
};

static char *text_of(const struct stats *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	stats_write_text(s, &meta, f);
	fclose(f);
	return buf;
}

static char *compare_of(const struct stats *s, unsigned n)
{
	static const char *const modes[] = { "base", "hugetlbfs", "thp" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	stats_write_compare(s, modes, n, f);
	fclose(f);
	return buf;
}

#ifndef CHECK_STATS_GEN

static const char text_full[] =
	"mmusim: t.lackey on built-in (lackey, mode base)\n"
	"  core: additive; dependences: unknown, assumed independent\n"
	"  instructions              4440866   refs: ifetch 4440866, load 1351941, store 839342, modify 10296\n"
	"  L1 iTLB      lookups        2004004  misses         2004  (0.451 MPKI)  4K 1000000/1001  2M 1002000/1003\n"
	"  L1 dTLB      lookups        2012012  misses         2012  (0.453 MPKI)  4K 1004000/1005  2M 1006000/1007\n"
	"  STLB         lookups            642  misses          286  (0.064 MPKI)\n"
	"  page walks            286  PTE reads 580 (L1D 514, L2 3, LLC 2, DRAM 61)\n"
	"  pgfault               284  nr_anon_pages 280, nr_hugetlb_pages 2, nr_page_table_pages 11, tlb_invalidations 17\n"
	"  memory: rss 1136 KiB, huge 6144 KiB (45.7% coverage) at the end; peak rss 8192 KiB, peak huge 7168 KiB (87.5% peak, 61.5% time-weighted coverage)\n"
	"  swap: out 8606 pages (31 THPs whole, 1 split), in 7 (pgmajfault 5), pgscan 24640, pgsteal 8606, 34420 KiB in swap\n"
	"  cycles           14474164 = instructions 4440866 + translation 20392 (walk 15256) + fault 129504 + data 9881626 + compaction 777 + reclaim 999\n"
	"  translation share 0.14% of cycles\n";

static const char text_quiet[] =
	"mmusim: t.lackey on built-in (lackey, mode base)\n"
	"  core: additive; dependences: unknown, assumed independent\n"
	"  instructions                    0   refs: ifetch 0, load 0, store 0, modify 0\n"
	"  L1 iTLB      lookups              0  misses            0  (0.000 MPKI)\n"
	"  L1 dTLB      lookups              0  misses            0  (0.000 MPKI)\n"
	"  STLB         lookups              0  misses            0  (0.000 MPKI)\n"
	"  page walks              0  PTE reads 0 (L1D 0, L2 0, LLC 0, DRAM 0)\n"
	"  pgfault                 0  nr_anon_pages 0, nr_hugetlb_pages 0, nr_page_table_pages 0, tlb_invalidations 0\n"
	"  memory: rss 0 KiB, huge 0 KiB (0.0% coverage) at the end; peak rss 0 KiB, peak huge 0 KiB (0.0% peak, 0.0% time-weighted coverage)\n"
	"  cycles                  0 = instructions 0 + translation 0 (walk 0) + fault 0\n"
	"  translation share 0.00% of cycles\n";

static const char compare_3[] =
	"core: additive                           base                hugetlbfs                      thp\n"
	"cycles                     14474164 (  0.00%)        7237082 (-50.00%)              0 (-100.00%)\n"
	"translation cycles            20392 (  0.00%)          10196 (-50.00%)              0 (-100.00%)\n"
	"walk cycles                   15256 (  0.00%)           7628 (-50.00%)              0 (-100.00%)\n"
	"fault cycles                 129504 (  0.00%)          64752 (-50.00%)              0 (-100.00%)\n"
	"L1 iTLB misses                 2004 (  0.00%)           1001 (-50.05%)              0 (-100.00%)\n"
	"L1 dTLB misses                 2012 (  0.00%)           1005 (-50.05%)              0 (-100.00%)\n"
	/* 2012 of 2012012 lookups; 1005 of 2011005 */
	"L1 dTLB miss %                0.100 (  0.00%)          0.050 (-50.02%)              0 (-100.00%)\n"
	"L1 dTLB MPKI                  0.453 (  0.00%)          0.453 ( -0.10%)              0 (-100.00%)\n"
	"STLB misses                     286 (  0.00%)            143 (-50.00%)              0 (-100.00%)\n"
	/* 286 of 642 lookups; 143 of 499 */
	"STLB miss %                  44.548 (  0.00%)         28.657 (-35.67%)              0 (-100.00%)\n"
	"page walks                      286 (  0.00%)            143 (-50.00%)              0 (-100.00%)\n"
	"PTE reads                       580 (  0.00%)            290 (-50.00%)              0 (-100.00%)\n"
	"pgfault                         284 (  0.00%)            142 (-50.00%)              0 (-100.00%)\n"
	"thp_fault_alloc                1016 (  0.00%)           1016 (  0.00%)              0 (-100.00%)\n"
	"thp_fault_fallback             1017 (  0.00%)           1017 (  0.00%)              0 (-100.00%)\n"
	"thp_split_pmd                  1018 (  0.00%)           1018 (  0.00%)              0 (-100.00%)\n"
	"thp_collapse_alloc             1021 (  0.00%)           1021 (  0.00%)              0 (-100.00%)\n"
	"huge coverage %              45.670 (  0.00%)         91.340 (100.00%)              0 (-100.00%)\n"
	"huge coverage mean %         61.500 (  0.00%)         92.250 ( 50.00%)              0 (-100.00%)\n";

/* The base all zero: every change n/a; nothing fetched anywhere: no L1 iTLB row. */
static const char compare_zero_base[] =
	"core: additive                           base                hugetlbfs\n"
	"cycles                            0 (    n/a)              0 (    n/a)\n"
	"translation cycles                0 (    n/a)              0 (    n/a)\n"
	"walk cycles                       0 (    n/a)              0 (    n/a)\n"
	"fault cycles                      0 (    n/a)              0 (    n/a)\n"
	"L1 dTLB misses                    0 (    n/a)              7 (    n/a)\n"
	"L1 dTLB miss %                    0 (    n/a)            100 (    n/a)\n"
	"L1 dTLB MPKI                      0 (    n/a)              0 (    n/a)\n"
	"STLB misses                       0 (    n/a)              0 (    n/a)\n"
	"STLB miss %                       0 (    n/a)              0 (    n/a)\n"
	"page walks                        0 (    n/a)              0 (    n/a)\n"
	"PTE reads                         0 (    n/a)              0 (    n/a)\n"
	"pgfault                           0 (    n/a)              0 (    n/a)\n"
	"thp_fault_alloc                   0 (    n/a)              3 (    n/a)\n"
	"thp_fault_fallback                0 (    n/a)              0 (    n/a)\n"
	"thp_split_pmd                     0 (    n/a)              0 (    n/a)\n"
	"thp_collapse_alloc                0 (    n/a)              0 (    n/a)\n"
	"huge coverage %                   0 (    n/a)              0 (    n/a)\n"
	"huge coverage mean %              0 (    n/a)              0 (    n/a)\n";

#endif

/* Three modes: @s[0] as fill(), [1] with every count halved and coverage doubled, [2] zero. */
static void fill_modes(struct stats s[3])
{
	fill(&s[0]);
	s[1] = s[0];
	s[1].cyc_total /= 2;
	s[1].cyc_translation /= 2;
	s[1].walk_cycles /= 2;
	s[1].cyc_fault /= 2;
	for (int side = 0; side < 2; side++)
		for (int ps = 0; ps < PS_NR; ps++)
			s[1].l1[side].misses[ps] /= 2;
	s[1].stlb.misses /= 2;
	s[1].walks /= 2;
	s[1].pte_reads /= 2;
	s[1].pgfault /= 2;
	s[1].huge_coverage *= 2;
	s[1].huge_coverage_mean = 0.9225;
	s[1].instructions /= 2;
	memset(&s[2], 0, sizeof(s[2]));
}

#ifdef CHECK_STATS_GEN
int main(void)
{
	struct stats s[3];
	char *t;

	fill(&s[0]);
	t = text_of(&s[0]);
	fputs(t, stdout);
	free(t);
	memset(&s[0], 0, sizeof(s[0]));
	t = text_of(&s[0]);
	fputs(t, stdout);
	free(t);
	fill_modes(s);
	t = compare_of(s, 3);
	fputs(t, stdout);
	free(t);
	return 0;
}
#else

START_TEST(text_table)
{
	struct stats s;
	char *t;

	fill(&s);
	t = text_of(&s);
	ck_assert_str_eq(t, text_full);
	free(t);
	memset(&s, 0, sizeof(s));
	t = text_of(&s);
	ck_assert_str_eq(t, text_quiet);
	free(t);
}
END_TEST

START_TEST(compare_table)
{
	struct stats s[3];
	char *t;

	fill_modes(s);
	t = compare_of(s, 3);
	ck_assert_str_eq(t, compare_3);
	free(t);
}
END_TEST

START_TEST(compare_zero_base_no_fetch)
{
	struct stats s[2];
	char *t;

	memset(s, 0, sizeof(s));
	s[1].l1[1].misses[PS_4K] = 7; /* 7 lookups, all misses, and no instruction fetched */
	s[1].thp_fault_alloc = 3;
	t = compare_of(s, 2);
	ck_assert_str_eq(t, compare_zero_base);
	free(t);
}
END_TEST

static json_t *at(json_t *root, const char *path)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && root; k = strtok_r(NULL, ".", &save))
		root = json_object_get(root, k);
	return root;
}

START_TEST(json_report)
{
	static const char *const sections[] = { "run", "refs", "tlb", "walk", "vmstat", "memory",
						"cycles" };
	struct stats s;
	json_t *j, *v;
	const char *k;
	size_t i = 0;

	fill(&s);
	j = stats_to_json(&s, &meta);
	json_object_foreach(j, k, v)
		ck_assert_str_eq(k, sections[i++]);
	ck_assert_uint_eq(i, ARRAY_SIZE(sections));
	ck_assert_int_eq(json_integer_value(at(j, "refs.load")), 1351941);
	ck_assert_int_eq(json_integer_value(at(j, "tlb.l1i.hits")), 2002000);
	ck_assert_int_eq(json_integer_value(at(j, "tlb.l1d.2M.misses")), 1007);
	ck_assert_int_eq(json_integer_value(at(j, "walk.pwc.pde.misses")),
			 (json_int_t)s.pwc[PWC_PDE].misses);
	ck_assert_int_eq(json_integer_value(at(j, "walk.served.dram")), 61);
	ck_assert_int_eq(json_integer_value(at(j, "vmstat.thp_scan_exceed_swap_pte")),
			 (json_int_t)s.thp_scan_exceed_swap_pte);
	ck_assert_int_eq(json_integer_value(at(j, "memory.fragmentation_index_order9")), -1);
	ck_assert(json_is_real(at(j, "memory.huge_coverage")));
	ck_assert_int_eq(json_integer_value(at(j, "cycles.kswapd")), 1111);
	ck_assert_uint_eq(json_object_size(at(j, "vmstat")), 44); /* + the file THP three, pglazyfree[d] */
	ck_assert_int_eq(json_integer_value(at(j, "vmstat.nr_file_pmdmapped")),
			 (json_int_t)s.nr_file_pmdmapped);
	ck_assert_uint_eq(json_object_size(at(j, "cycles")), 12);
	ck_assert_int_eq(json_integer_value(at(j, "cycles.translation_stall")), 20392);
	ck_assert_str_eq(json_string_value(at(j, "run.cpu_model")), "additive");
	ck_assert_str_eq(json_string_value(at(j, "run.dependences")), "unknown");
	{
		/* memory: the end state, then the stretch's peaks and time-weighted coverage */
		static const char *const mem[] = { "rss_bytes", "huge_bytes", "huge_coverage",
						   "peak_rss_bytes", "peak_huge_bytes",
						   "huge_coverage_peak", "huge_coverage_mean",
						   "free_pages", "fragmentation_index_order9",
						   "swap_bytes" };
		size_t m = 0;

		json_object_foreach(at(j, "memory"), k, v)
			ck_assert_str_eq(k, mem[m++]);
		ck_assert_uint_eq(m, ARRAY_SIZE(mem));
		ck_assert_int_eq(json_integer_value(at(j, "memory.peak_rss_bytes")), 8192 << 10);
		ck_assert_int_eq(json_integer_value(at(j, "memory.peak_huge_bytes")), 7 << 20);
		ck_assert(json_real_value(at(j, "memory.huge_coverage_peak")) == 0.875);
		ck_assert(json_real_value(at(j, "memory.huge_coverage_mean")) == 0.615);
	}
	/* the text table's derived rows are not in the JSON */
	ck_assert_ptr_null(at(j, "tlb.l1i.lookups"));
	ck_assert_ptr_null(at(j, "tlb.stlb.mpki"));
	ck_assert_ptr_null(at(j, "vmstat.pgscan"));
	ck_assert_ptr_null(at(j, "cycles.translation_share"));
	json_decref(j);
}
END_TEST

/* The address-space switch rows: in the JSON and the table only when a CR3 load happened. */
START_TEST(cr3_rows_only_after_a_switch)
{
	struct stats s;
	json_t *j;
	char *t;

	fill(&s);
	j = stats_to_json(&s, &meta);
	ck_assert_ptr_null(at(j, "tlb.cr3"));
	ck_assert_uint_eq(json_object_size(at(j, "tlb")), 3);
	json_decref(j);
	t = text_of(&s);
	ck_assert_ptr_null(strstr(t, "CR3"));
	free(t);
	s.processes = 2;
	s.cr3_loads = 28;
	s.cr3_flushes = 28;
	s.cr3_flushed = 352;
	j = stats_to_json(&s, &meta);
	ck_assert_uint_eq(json_object_size(at(j, "tlb")), 4);
	ck_assert_int_eq(json_integer_value(at(j, "tlb.cr3.loads")), 28);
	ck_assert_int_eq(json_integer_value(at(j, "tlb.cr3.flushing_loads")), 28);
	ck_assert_int_eq(json_integer_value(at(j, "tlb.cr3.flushed_entries")), 352);
	json_decref(j);
	t = text_of(&s);
	ck_assert_ptr_nonnull(strstr(t, "\n  CR3 loads             28  flushing 28, entries flushed 352\n"));
	free(t);
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("stats");

	tcase_add_test(tc, cr3_rows_only_after_a_switch);
	tcase_add_test(tc, text_table);
	tcase_add_test(tc, compare_table);
	tcase_add_test(tc, compare_zero_base_no_fetch);
	tcase_add_test(tc, json_report);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(stats_suite());
}
#endif
