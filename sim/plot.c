/*
 * plot.c - drives gnuplot (pngcairo / svg terminals) through a generated script.
 *
 * gnuplot runs as a child process reading the script on stdin; the data travels
 * inline ($data heredoc, gnuplot >= 5.0), so no temporary data files are left.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"

static bool ends_with(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);

	return n >= m && !strcmp(s + n - m, sfx);
}

int plot_bars(const char *data, const char *title, const char *ylabel, const char *out,
	      struct err *e)
{
	char tmp[4096];
	FILE *p;
	int st, ncols = 0;
	const char *q;
	bool svg = ends_with(out, ".svg");

	if (!svg && !ends_with(out, ".png"))
		return err_set(e, out, 0, 0, "plot output must end in .png or .svg");
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid());
	/* columns in the header row */
	for (q = data; *q && *q != '\n';) {
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q && *q != '\n') {
			ncols++;
			while (*q && *q != ' ' && *q != '\t' && *q != '\n')
				q++;
		}
	}
	p = popen("gnuplot >/dev/null", "w");
	if (!p)
		return err_set(e, "gnuplot", 0, 0, "cannot run gnuplot: %s", strerror(errno));
	fprintf(p, "set terminal %s size 960,540 font 'Sans,11'\n",
		svg ? "svg enhanced background rgb 'white'" : "pngcairo enhanced");
	fprintf(p, "set output '%s'\n", tmp);
	fprintf(p, "$data << EOD\n%sEOD\n", data);
	fprintf(p, "set title \"%s\"\nset ylabel \"%s\"\n", title, ylabel);
	fprintf(p, "set style data histograms\nset style histogram clustered gap 1\n"
		   "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset grid ytics\n"
		   "set key top left\nset yrange [0:*]\nset xtics nomirror\n");
	fprintf(p, "plot ");
	for (int c = 2; c <= ncols; c++)
		fprintf(p, "%s$data using %d:xtic(1) title columnheader(%d)", c > 2 ? ", " : "", c, c);
	fprintf(p, "\n");
	st = pclose(p);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		unlink(tmp);
		return err_set(e, "gnuplot", 0, 0, "gnuplot failed (exit %d) rendering %s",
			       WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
	}
	if (rename(tmp, out)) {
		unlink(tmp);
		return err_set(e, out, 0, 0, "cannot write: %s", strerror(errno));
	}
	return 0;
}
