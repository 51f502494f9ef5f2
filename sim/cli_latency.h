/* cli_latency.h - merge --latency: the reports' fault-latency histograms as CDF rows (cli_latency.c). */
#ifndef MMUSIM_CLI_LATENCY_H
#define MMUSIM_CLI_LATENCY_H

#include <stddef.h>

#include "err.h"
#include "outfile.h"

/*
 * The fault-latency CDF rows of the reports @files (n of them) into @of,
 * committed: 0, -1 with @e (bad input; @of aborted) or POOL_EHOST.
 */
int latency_csv_into(struct outfile *of, char *const *files, size_t n, struct err *e);

#endif
