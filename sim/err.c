/* err.c - the error record (see err.h) and the BUG_ON() sink. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "types.h"

static int verr(struct err *e, bool host, const char *file, unsigned long line,
		unsigned long col, const char *fmt, va_list ap)
{
	if (!e)
		return -1;
	snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	e->line = line;
	e->col = col;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	if (host)
		e->host = true;
	return -1;
}

int err_set(struct err *e, const char *file, unsigned long line, unsigned long col,
	    const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = verr(e, false, file, line, col, fmt, ap);
	va_end(ap);
	return r;
}

int err_host(struct err *e, const char *file, unsigned long line, unsigned long col,
	     const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = verr(e, true, file, line, col, fmt, ap);
	va_end(ap);
	return r;
}

void err_format(const struct err *e, char *buf, size_t n)
{
	if (e->line && e->col)
		snprintf(buf, n, "%s:%lu:%lu: %s", e->file, e->line, e->col, e->msg);
	else if (e->line)
		snprintf(buf, n, "%s:%lu: %s", e->file, e->line, e->msg);
	else if (e->file[0])
		snprintf(buf, n, "%s: %s", e->file, e->msg);
	else
		snprintf(buf, n, "%s", e->msg);
}

void mmusim_bug(const char *file, int line, const char *cond)
{
	fprintf(stderr, "mmusim: BUG at %s:%d: %s\n", file, line, cond);
	abort();
}
