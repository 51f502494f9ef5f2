/*
 * plot.h - gnuplot rendering. This issue needs one figure (the demo's); the
 * experiments issue grows it into `mmusim plot`.
 */
#ifndef MMUSIM_PLOT_H
#define MMUSIM_PLOT_H

#include "err.h"

/*
 * Render a clustered bar chart with gnuplot: @data is a whitespace table whose
 * first row is "group series1 series2 ...", one row per cluster. @out ends in
 * .png (pngcairo) or .svg. The image is written to a temporary name and renamed.
 * Returns 0, or -1 with @e (gnuplot missing or failing).
 */
int plot_bars(const char *data, const char *title, const char *ylabel, const char *out,
	      struct err *e);

#endif
