/*
 * stats.c - the report: JSON with DESIGN.md's fixed keys (jansson), a readable
 * table, and the seed mail's side-by-side comparison ("value ( x.xx%)").
 *
 * Key order is fixed (JSON_PRESERVE_ORDER) and numbers are integers except the
 * ratios, so the same run gives byte-identical JSON apart from run.wall_seconds, run.max_rss_bytes
 * and run.refs_per_second.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "stats.h"

const char *const page_size_name[PS_NR] = { "4K", "2M", "1G" };

static json_t *hm(uint64_t hits, uint64_t misses)
{
	return json_pack("{s:I,s:I}", "hits", (json_int_t)hits, "misses", (json_int_t)misses);
}

static json_t *side_json(const struct tlb_side_stats *t)
{
	uint64_t h = 0, m = 0;
	json_t *o;

	for (int i = 0; i < PS_NR; i++) {
		h += t->hits[i];
		m += t->misses[i];
	}
	o = hm(h, m);
	for (int i = 0; i < PS_NR; i++)
		json_object_set_new(o, page_size_name[i], hm(t->hits[i], t->misses[i]));
	return o;
}

static uint64_t refs_total(const struct stats *s)
{
	return s->ifetch + s->load + s->store + s->modify;
}

void *stats_to_json(const struct stats *s, const struct report_meta *m)
{
	json_t *root = json_object(), *o, *pwc, *served;
	double rps = s->wall_seconds > 0 ? (double)refs_total(s) / s->wall_seconds : 0.0;

	o = json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:I}", "config", m->config, "trace", m->trace,
		      "format", m->format, "mode", m->mode, "wall_seconds", s->wall_seconds,
		      "refs_per_second", floor(rps), "max_rss_bytes", (json_int_t)s->max_rss_bytes);
	if (m->version)
		json_object_set_new(o, "version", json_string(m->version));
	if (m->build_id)
		json_object_set_new(o, "build_id", json_string(m->build_id));
	if (m->config_hash)
		json_object_set_new(o, "config_hash", json_string(m->config_hash));
	if (m->input_id)
		json_object_set_new(o, "input_id", json_string(m->input_id));
	if (m->nlabels) {
		json_t *l = json_object();

		for (unsigned i = 0; i < m->nlabels; i++) {
			const char *eq = strchr(m->labels[i], '=');
			char key[256];

			if (!eq)
				continue;
			snprintf(key, sizeof(key), "%.*s", (int)(eq - m->labels[i]), m->labels[i]);
			json_object_set_new(l, key, json_string(eq + 1));
		}
		json_object_set_new(o, "labels", l);
	}
	json_object_set_new(root, "run", o);
	o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "instructions", (json_int_t)s->instructions,
		      "ifetch", (json_int_t)s->ifetch, "load", (json_int_t)s->load, "store",
		      (json_int_t)s->store, "modify", (json_int_t)s->modify, "itlb_lookups",
		      (json_int_t)s->lookups[0], "dtlb_lookups", (json_int_t)s->lookups[1]);
	json_object_set_new(root, "refs", o);
	o = json_object();
	json_object_set_new(o, "l1i", side_json(&s->l1[0]));
	json_object_set_new(o, "l1d", side_json(&s->l1[1]));
	json_object_set_new(o, "stlb", hm(s->stlb.hits, s->stlb.misses));
	json_object_set_new(root, "tlb", o);
	pwc = json_object();
	for (int i = 0; i < PWC_NR; i++)
		json_object_set_new(pwc, pwc_level_name[i], hm(s->pwc[i].hits, s->pwc[i].misses));
	served = json_pack("{s:I,s:I,s:I,s:I}", "l1d", (json_int_t)s->served[CL_L1D], "l2",
			   (json_int_t)s->served[CL_L2], "llc", (json_int_t)s->served[CL_LLC], "dram",
			   (json_int_t)s->served[CL_NR]);
	o = json_pack("{s:I,s:I,s:I,s:o,s:o}", "walks", (json_int_t)s->walks, "cycles",
		      (json_int_t)s->walk_cycles, "pte_reads", (json_int_t)s->pte_reads, "pwc", pwc,
		      "served", served);
	json_object_set_new(root, "walk", o);
	o = json_object();
#define V(name) json_object_set_new(o, #name, json_integer((json_int_t)s->name))
	V(pgfault);
	V(thp_fault_alloc);
	V(thp_fault_fallback);
	V(thp_split_pmd);
	V(thp_split_page);
	V(thp_deferred_split_page);
	V(thp_collapse_alloc);
	V(thp_collapse_alloc_failed);
	V(thp_scan_exceed_none_pte);
	V(thp_zero_page_alloc);
	V(compact_stall);
	V(compact_success);
	V(compact_fail);
	V(nr_anon_pages);
	V(nr_anon_transparent_hugepages);
	V(nr_hugetlb_pages);
	V(nr_hugetlb_pages_1g);
	V(khugepaged_pages_collapsed);
	V(khugepaged_full_scans);
	V(tlb_invalidations);
	V(nr_page_table_pages);
	V(pgmajfault);
	V(pswpin);
	V(pswpout);
	V(pgscan_kswapd);
	V(pgscan_direct);
	V(pgsteal_kswapd);
	V(pgsteal_direct);
	V(allocstall_normal);
	V(pageoutrun);
	V(pgactivate);
	V(pgdeactivate);
	V(thp_swpout);
	V(thp_swpout_fallback);
	V(thp_scan_exceed_swap_pte);
#undef V
	json_object_set_new(root, "vmstat", o);
	o = json_pack("{s:I,s:I,s:f,s:I,s:i,s:I}", "rss_bytes", (json_int_t)s->rss_bytes, "huge_bytes",
		      (json_int_t)s->huge_bytes, "huge_coverage", s->huge_coverage, "free_pages",
		      (json_int_t)s->free_pages, "fragmentation_index_order9",
		      s->fragmentation_index_order9, "swap_bytes", (json_int_t)s->swap_bytes);
	json_object_set_new(root, "memory", o);
	o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "total", (json_int_t)s->cyc_total,
		      "instructions", (json_int_t)s->cyc_instructions, "translation",
		      (json_int_t)s->cyc_translation, "walk", (json_int_t)s->walk_cycles, "fault",
		      (json_int_t)s->cyc_fault, "compaction", (json_int_t)s->cyc_compaction, "khugepaged",
		      (json_int_t)s->cyc_khugepaged, "data", (json_int_t)s->cyc_data, "reclaim",
		      (json_int_t)s->cyc_reclaim, "kswapd", (json_int_t)s->cyc_kswapd);
	json_object_set_new(root, "cycles", o);
	return root;
}

void stats_write_json(const struct stats *s, const struct report_meta *m, FILE *out)
{
	json_t *j = stats_to_json(s, m);

	json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', out);
	json_decref(j);
}

static uint64_t side_sum(const uint64_t v[PS_NR])
{
	return v[0] + v[1] + v[2];
}

static double per_k(uint64_t n, uint64_t d)
{
	return d ? 1000.0 * (double)n / (double)d : 0.0;
}

void stats_write_text(const struct stats *s, const struct report_meta *m, FILE *out)
{
	const char *side_name[2] = { "L1 iTLB", "L1 dTLB" };

	fprintf(out, "mmusim: %s on %s (%s, mode %s)\n", m->trace, m->config, m->format, m->mode);
	fprintf(out, "  instructions %20llu   refs: ifetch %llu, load %llu, store %llu, modify %llu\n",
		(unsigned long long)s->instructions, (unsigned long long)s->ifetch,
		(unsigned long long)s->load, (unsigned long long)s->store, (unsigned long long)s->modify);
	for (int side = 0; side < 2; side++) {
		uint64_t h = side_sum(s->l1[side].hits), mi = side_sum(s->l1[side].misses);

		fprintf(out, "  %-12s lookups %14llu  misses %12llu  (%.3f MPKI)", side_name[side],
			(unsigned long long)(h + mi), (unsigned long long)mi, per_k(mi, s->instructions));
		for (int ps = 0; ps < PS_NR; ps++)
			if (s->l1[side].hits[ps] + s->l1[side].misses[ps])
				fprintf(out, "  %s %llu/%llu", page_size_name[ps],
					(unsigned long long)s->l1[side].hits[ps],
					(unsigned long long)s->l1[side].misses[ps]);
		fputc('\n', out);
	}
	fprintf(out, "  %-12s lookups %14llu  misses %12llu  (%.3f MPKI)\n", "STLB",
		(unsigned long long)(s->stlb.hits + s->stlb.misses), (unsigned long long)s->stlb.misses,
		per_k(s->stlb.misses, s->instructions));
	fprintf(out, "  page walks %14llu  PTE reads %llu (L1D %llu, L2 %llu, LLC %llu, DRAM %llu)\n",
		(unsigned long long)s->walks, (unsigned long long)s->pte_reads,
		(unsigned long long)s->served[0], (unsigned long long)s->served[1],
		(unsigned long long)s->served[2], (unsigned long long)s->served[3]);
	fprintf(out, "  page faults %13llu  4K pages %llu, hugetlb 2M pages %llu, page tables %llu, "
		"TLB invalidations %llu\n",
		(unsigned long long)s->pgfault, (unsigned long long)s->nr_anon_pages,
		(unsigned long long)s->nr_hugetlb_pages, (unsigned long long)s->nr_page_table_pages,
		(unsigned long long)s->tlb_invalidations);
	fprintf(out, "  memory: rss %llu KiB, huge %llu KiB (%.1f%% coverage)\n",
		(unsigned long long)(s->rss_bytes >> 10), (unsigned long long)(s->huge_bytes >> 10),
		100.0 * s->huge_coverage);
	if (s->pswpout || s->pswpin)
		fprintf(out, "  swap: out %llu pages (%llu THPs whole, %llu split), in %llu (major faults %llu), "
			"reclaim scanned %llu stole %llu, %llu KiB in swap\n",
			(unsigned long long)s->pswpout, (unsigned long long)s->thp_swpout,
			(unsigned long long)s->thp_swpout_fallback, (unsigned long long)s->pswpin,
			(unsigned long long)s->pgmajfault,
			(unsigned long long)(s->pgscan_kswapd + s->pgscan_direct),
			(unsigned long long)(s->pgsteal_kswapd + s->pgsteal_direct),
			(unsigned long long)(s->swap_bytes >> 10));
	fprintf(out, "  cycles %18llu = instructions %llu + translation %llu (walks %llu) + faults %llu",
		(unsigned long long)s->cyc_total, (unsigned long long)s->cyc_instructions,
		(unsigned long long)s->cyc_translation, (unsigned long long)s->walk_cycles,
		(unsigned long long)s->cyc_fault);
	if (s->cyc_data)
		fprintf(out, " + data %llu", (unsigned long long)s->cyc_data);
	if (s->cyc_compaction)
		fprintf(out, " + compaction %llu", (unsigned long long)s->cyc_compaction);
	if (s->cyc_reclaim)
		fprintf(out, " + reclaim %llu", (unsigned long long)s->cyc_reclaim);
	fprintf(out, "\n  translation share %.2f%% of cycles\n",
		s->cyc_total ? 100.0 * (double)s->cyc_translation / (double)s->cyc_total : 0.0);
}

struct metric {
	const char *name;
	double (*get)(const struct stats *s);
};

#define GETTER(fn, expr) \
	static double fn(const struct stats *s) { return (double)(expr); }
GETTER(g_cycles, s->cyc_total)
GETTER(g_trans, s->cyc_translation)
GETTER(g_walk, s->walk_cycles)
GETTER(g_fault, s->cyc_fault)
GETTER(g_l1i, side_sum(s->l1[0].misses))
GETTER(g_l1d, side_sum(s->l1[1].misses))
GETTER(g_stlb, s->stlb.misses)
GETTER(g_walks, s->walks)
GETTER(g_reads, s->pte_reads)
GETTER(g_pgfault, s->pgfault)
GETTER(g_dtlb_mpki, per_k(side_sum(s->l1[1].misses), s->instructions))
GETTER(g_huge, 100.0 * s->huge_coverage)
#undef GETTER

static const struct metric metrics[] = {
	{ "cycles", g_cycles },
	{ "translation cycles", g_trans },
	{ "walk cycles", g_walk },
	{ "fault cycles", g_fault },
	{ "L1 iTLB misses", g_l1i },
	{ "L1 dTLB misses", g_l1d },
	{ "L1 dTLB MPKI", g_dtlb_mpki },
	{ "STLB misses", g_stlb },
	{ "page walks", g_walks },
	{ "PTE reads", g_reads },
	{ "page faults", g_pgfault },
	{ "huge coverage %", g_huge },
};

void stats_write_compare(const struct stats *s, const char *const *modes, unsigned n, FILE *out)
{
	fprintf(out, "%-20s", "");
	for (unsigned i = 0; i < n; i++)
		fprintf(out, " %24s", modes[i]);
	fputc('\n', out);
	for (size_t k = 0; k < ARRAY_SIZE(metrics); k++) {
		double base = metrics[k].get(&s[0]);

		fprintf(out, "%-20s", metrics[k].name);
		for (unsigned i = 0; i < n; i++) {
			double v = metrics[k].get(&s[i]);
			double pct = base != 0 ? 100.0 * (v - base) / base : 0.0;
			char num[32];

			if (v == floor(v) && fabs(v) < 1e15)
				snprintf(num, sizeof(num), "%.0f", v);
			else
				snprintf(num, sizeof(num), "%.3f", v);
			fprintf(out, " %14s (%6.2f%%)", num, pct);
		}
		fputc('\n', out);
	}
}
