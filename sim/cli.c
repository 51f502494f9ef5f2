/*
 * cli.c - what every command of the command line shares (main.c, cli_capture.c):
 * printing an error, exiting with status 2 on bad usage (with the usage text),
 * help, and getopt_long() with GNU conventions. Not in the library: only the
 * command line prints errors and calls exit() (DESIGN.md "Command line").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "mmusim.h"

#include "cli.h"
#include "usage.h"
#include "util.h"

void print_err(const struct err *e)
{
	char buf[1024];

	err_format(e, buf, sizeof(buf));
	fprintf(stderr, "%s\n", buf);
}

_Noreturn void die_err(const struct err *e)
{
	print_err(e);
	exit(e->host ? 1 : EXIT_BAD);
}

const char *cli_command;

void usage_hint(void)
{
	if (cli_command)
		fprintf(stderr, "see 'mmusim help %s'\n", cli_command);
	else
		fprintf(stderr, "see 'mmusim help'\n");
}

/* A usage error: one line saying what is wrong, one saying where the help is; exit 2. */
_Noreturn void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "mmusim: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage_hint();
	exit(EXIT_BAD);
}

int help(const char *cmd)
{
	const char *text = cmd ? usage_help(cmd) : usage_text;

	if (!text)
		die_usage("help: unknown command '%s'", cmd);
	fputs(text, stdout);
	return 0;
}

/*
 * getopt_long() for command @cmd (@argv[0] is a name, as getopt wants), @so
 * starting with ':'. --help (-h) prints @cmd's help and exits 0; an unknown
 * option is "@bad" and a missing value "@miss" (each with the option), exit 2.
 */
int next_opt(int argc, char **argv, const char *so, const struct option *lo,
		    const char *cmd, const char *bad, const char *miss)
{
	char buf[64];
	int c = getopt_long(argc, argv, so, lo, NULL);

	if (c == 'h')
		exit(help(cmd));
	if (c == '?')
		die_usage(bad, getopt_culprit(argv, buf, sizeof(buf)));
	if (c == ':')
		die_usage(miss, getopt_culprit(argv, buf, sizeof(buf)));
	return c;
}

void opts_reset(void)
{
	optind = 0; /* glibc: a fresh scan */
	opterr = 0;
}

/*
 * The records so far and the rate, and for a trace file the share read and the
 * time left at that pace: on a terminal once a second, redrawn in place; else a
 * plain line every PROGRESS_EVERY seconds (logs, CI).
 */
void show_progress(void *arg, uint64_t records)
{
	struct progress *p = arg;
	double now = now_seconds(), f = p->m ? mmusim_input_fraction(p->m) : -1, el = now - p->t0;
	char share[64] = "";

	if (now < p->next && !p->last)
		return;
	p->next = now + (p->tty ? 1.0 : PROGRESS_EVERY);
	p->printed = true;
	if (f > 0 && f < 1 && !p->last)
		snprintf(share, sizeof(share), ", %.0f%% read, %.0f s left", 100.0 * f,
			 el * (1.0 - f) / f);
	/* a terminal: back to the line's start and clear it (ECMA-48 EL), then redraw */
	fprintf(stderr, "%s  %llu records, %.1f M records/s%s%s", p->tty ? "\r\033[K" : "",
		(unsigned long long)records, el > 0 ? (double)records / el / 1e6 : 0.0, share,
		p->tty && !p->last ? "" : "\n");
}
