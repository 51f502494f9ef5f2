/*
 * err.h - errors carried up to main().
 *
 * A module that meets bad input (config, trace, command line) fills a struct err
 * (err_set()) and returns -1; main() prints "file:line[:col]: message" and exits 2.
 * A failure of the host instead (out of memory: err_host(), which sets @host) is
 * exit 1. Modules never print or exit themselves. line/col 0 means "not applicable".
 */
#ifndef MMUSIM_ERR_H
#define MMUSIM_ERR_H

#include <stdarg.h>
#include <stdbool.h>

struct err {
	char file[256];
	unsigned long line;
	unsigned long col;
	char msg[512];
	bool host; /* a failure of the host (out of memory), not bad input: exit 1, not 2 */
};

/* Fill @e (if not NULL) and return -1, so callers can "return err_set(...)". */
int err_set(struct err *e, const char *file, unsigned long line, unsigned long col,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* err_set() for a failure of the host, not of the input (sets @e->host). */
int err_host(struct err *e, const char *file, unsigned long line, unsigned long col,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Format @e as "file:line:col: msg" (omitting zero parts) into @buf. */
void err_format(const struct err *e, char *buf, size_t n);

#endif
