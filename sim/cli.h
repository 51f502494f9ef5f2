/* cli.h - helpers the command line's files share (cli.c); not part of the library. */
#ifndef MMUSIM_CLI_H
#define MMUSIM_CLI_H

#include <getopt.h>

#include "err.h"

#define EXIT_BAD 2

void print_err(const struct err *e);
_Noreturn void die_err(const struct err *e);
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
