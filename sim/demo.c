/*
 * demo.c - the embedded default experiment (demo.h). Sizes: STREAM arrays of
 * 32 MiB (16x the default STLB's 2 MiB reach, so translation matters), GUPS
 * over a 256 MiB table; together well under a minute.
 */
#include <errno.h>
#include <string.h>

#include "demo.h"
#include "plot.h"
#include "run.h"
#include "util.h"
#include "workload.h"

/*
 * The cases: the seed mail's two workloads on an idle machine, then GUPS on a
 * machine whose memory its history has fragmented (a share of the 2 MiB
 * pageblocks each hold one pinned unmovable page), where THP and hugetlbfs part:
 * THP allocates at fault time and falls back to 4 KiB pages when no free order-9
 * block is left (defrag=madvise: no direct compaction for this mapping), while a
 * hugetlbfs pool set aside at boot (hugepages=256) predates the fragmentation.
 */
static const struct demo_case {
	const char *name, *label, *workload; /* label: the figure's, one word */
	const char *sets[4]; /* config overrides, NULL-terminated */
	const char *what;    /* the case's line under its name */
} demo_cases[] = {
	{ "STREAM", "STREAM", "stream:size=32M,iterations=2", { NULL },
	  "triad over three 32 MiB arrays, 16x the STLB's reach" },
	{ "GUPS", "GUPS", "gups:size=256M,updates=4000000", { NULL },
	  "random 8-byte updates over a 256 MiB table" },
	{ "GUPS, fragmented", "GUPS-fragmented", "gups:size=512M,updates=2000000",
	  { "os.memory=2G", "os.hugetlbfs.pages=256", "os.fragmentation.unmovable=0.75", NULL },
	  "a 512 MiB table in 2 GiB; a 256-page hugetlbfs pool set aside at boot (in every mode),\n"
	  "  then one pinned page in 75% of the free 2 MiB pageblocks" },
};
static const enum os_mode demo_modes[] = { MODE_BASE, MODE_HUGETLBFS, MODE_THP };
#define DEMO_NM ARRAY_SIZE(demo_modes)

/* @v's change against @base in %, 0 for a base of 0. */
static double change(uint64_t v, uint64_t base)
{
	return base ? 100.0 * ((double)v - (double)base) / (double)base : 0.0;
}

/* What the fragmented case shows, from its counters: THP's fallbacks against the pool. */
static void demo_frag_line(const struct stats st[DEMO_NM], FILE *out)
{
	const struct stats *h = &st[1], *t = &st[2];

	fprintf(out, "  THP: %llu of its %llu 2 MiB faults fell back to 4 KiB pages (thp_fault_fallback):\n"
		"    huge coverage %.0f%%, walk cycles %+.0f%% against base pages;\n"
		"  hugetlbfs, from its pool set aside before the fragmentation: coverage %.0f%%, "
		"walk cycles %+.0f%%.\n",
		(unsigned long long)t->thp_fault_fallback,
		(unsigned long long)(t->thp_fault_alloc + t->thp_fault_fallback), 100.0 * t->huge_coverage,
		change(t->walk_cycles, st[0].walk_cycles), 100.0 * h->huge_coverage,
		change(h->walk_cycles, st[0].walk_cycles));
}

/* Case @w in every mode: its table on @out, its row appended to @data. */
static int demo_one(size_t w, const struct sim_config *base, FILE *out, char *data, size_t cap,
		    const volatile sig_atomic_t *interrupted, struct err *e)
{
	const struct demo_case *dc = &demo_cases[w];
	struct sim_config c = *base;
	struct trace_reader *tr;
	struct stats st[DEMO_NM];
	struct run r;
	size_t len = strlen(data);
	int rc;

	for (const char *const *set = dc->sets; *set; set++)
		if (config_set(&c, *set, e))
			return -1;
	if (config_validate(&c, "mmusim demo", e))
		return -1;
	tr = workload_open_kernel(dc->workload, c.seed, c.kernel, e);
	if (!tr)
		return -1;
	rc = run_setup(&r, &c, demo_modes, DEMO_NM, tr->name, e);
	if (!rc)
		rc = run_drive(&r, tr, &(struct pool_opts){ .interrupted = interrupted }, e);
	if (!rc) {
		fprintf(out, "%s (%s)\n  %s\n", dc->name, dc->workload, dc->what);
		for (unsigned i = 0; i < DEMO_NM; i++)
			st[i] = r.sims[i].st;
		stats_write_compare(st, r.mode_names, DEMO_NM, out);
		if (dc->sets[0])
			demo_frag_line(st, out);
		fprintf(out, "\n");
		len += (size_t)snprintf(data + len, cap - len, "%s", dc->label);
		for (unsigned i = 0; i < DEMO_NM; i++)
			len += (size_t)snprintf(data + len, cap - len, " %.2f",
						100.0 * (double)st[i].cyc_translation /
							(double)st[i].cyc_total);
		snprintf(data + len, cap - len, "\n");
	}
	run_free(&r);
	trace_close(tr);
	return rc;
}

int demo_run(const char *outdir, FILE *out, const volatile sig_atomic_t *interrupted,
	     struct err *e)
{
	struct sim_config c;
	char data[2048], path[4096];
	size_t len = 0;
	int rc;

	config_defaults(&c);
	len += (size_t)snprintf(data + len, sizeof(data) - len, "workload");
	for (unsigned i = 0; i < DEMO_NM; i++)
		len += (size_t)snprintf(data + len, sizeof(data) - len, " %s", os_mode_name[demo_modes[i]]);
	snprintf(data + len, sizeof(data) - len, "\n");
	fprintf(out, "mmusim demo: base pages vs hugetlbfs vs THP, as Mel Gorman's 2010 benchmark mail on\n"
		"  transparent huge pages compared them (its STREAM triad; GUPS as the random-access case),\n"
		"  on the default machine, %s:\n"
		"  the TLBs of the cpuid listing in LWN's \"Transparent huge pages in 2.6.38\" (2011)\n\n",
		c.cpu_name);
	for (size_t w = 0; w < ARRAY_SIZE(demo_cases); w++)
		if ((rc = demo_one(w, &c, out, data, sizeof(data), interrupted, e)))
			return rc;
	if (mkdir_p(outdir)) {
		err_set(e, outdir, 0, 0, "%s", strerror(errno));
		return POOL_EHOST;
	}
	snprintf(path, sizeof(path), "%s/demo.png", outdir);
	if (plot_bars(data, "Address translation share of cycles (Nehalem-class, article cpuid listing)",
		      "translation cycles / total cycles (%)", path, e))
		return POOL_EHOST;
	fprintf(out, "plot: %s\n", path);
	return 0;
}
