/*
 * demo.h - `mmusim demo`: the embedded default experiment. STREAM triad and
 * GUPS on the article's machine under base pages, hugetlbfs and THP, as the
 * seed mail compares them: one comparison table per workload and a bar chart of
 * the translation share of cycles.
 */
#ifndef MMUSIM_DEMO_H
#define MMUSIM_DEMO_H

#include <signal.h>
#include <stdio.h>

#include "err.h"

/*
 * Run the demo: the tables on @out, the figure to @outdir/demo.png (the
 * directory made with its parents), whose path is then printed on @out;
 * @interrupted as in pool_opts. 0, or a run.h status with @e (POOL_EHOST: a directory that cannot be made,
 * gnuplot missing or failing).
 */
int demo_run(const char *outdir, FILE *out, const volatile sig_atomic_t *interrupted,
	     struct err *e);

#endif
