/* cli.h - helpers the command line's files share (cli.c); not part of the library. */
#ifndef MMUSIM_CLI_H
#define MMUSIM_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"

#define EXIT_BAD 2

struct mmusim;

/* A run's progress line (show_progress(), the library's progress callback). */
struct progress {
	double t0, next;
	bool last;    /* the final line: now, with a newline */
	bool tty;     /* stderr is a terminal */
	bool printed; /* a line was shown */
	struct mmusim *m;
};

#define PROGRESS_EVERY 10.0 /* seconds between plain progress lines (not a terminal) */
void show_progress(void *arg, uint64_t records);

void print_err(const struct err *e);
_Noreturn void die_err(const struct err *e);
/* The command being run ("run", "sweep", ...), NULL before one is known (main()). */
extern const char *cli_command;

/* After a usage error's one line: "see 'mmusim help CMD'" on stderr. */
void usage_hint(void);

_Noreturn void die_usage(const char *fmt, const char *arg);
int help(const char *cmd);
int next_opt(int argc, char **argv, const char *so, const struct option *lo, const char *cmd,
	     const char *bad, const char *miss);
void opts_reset(void);

/* mmusim capture (cli_capture.c) */
int cmd_capture(int argc, char **argv);

/* mmusim mrc (cli_mrc.c) */
int cmd_mrc(int argc, char **argv);

#endif
