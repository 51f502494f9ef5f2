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

static const char *const demo_workloads[] = {
	"stream:size=32M,iterations=2",
	"gups:size=256M,updates=4000000",
};
static const char *const demo_names[] = { "STREAM", "GUPS" };
static const enum os_mode demo_modes[] = { MODE_BASE, MODE_HUGETLBFS, MODE_THP };
#define DEMO_NM ARRAY_SIZE(demo_modes)

/* Workload @w in every mode: its table on @out, its row appended to @data. */
static int demo_one(size_t w, const struct sim_config *c, FILE *out, char *data, size_t cap,
		    const volatile sig_atomic_t *interrupted, struct err *e)
{
	struct trace_reader *tr = workload_open_kernel(demo_workloads[w], c->seed, c->kernel, e);
	struct stats st[DEMO_NM];
	struct run r;
	size_t len = strlen(data);
	int rc;

	if (!tr)
		return -1;
	rc = run_setup(&r, c, demo_modes, DEMO_NM, tr->name, e);
	if (!rc)
		rc = run_drive(&r, tr, &(struct pool_opts){ .interrupted = interrupted }, e);
	if (!rc) {
		fprintf(out, "%s (%s)\n", demo_names[w], demo_workloads[w]);
		for (unsigned i = 0; i < DEMO_NM; i++)
			st[i] = r.sims[i].st;
		stats_write_compare(st, r.mode_names, DEMO_NM, out);
		fprintf(out, "\n");
		len += (size_t)snprintf(data + len, cap - len, "%s", demo_names[w]);
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
	fprintf(out, "mmusim demo: %s, %s\n\n", c.cpu_name, "base pages vs hugetlbfs vs THP");
	for (size_t w = 0; w < ARRAY_SIZE(demo_workloads); w++)
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
