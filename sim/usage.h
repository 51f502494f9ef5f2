/* usage.h - the command line's usage summary and each command's help text. */
#ifndef MMUSIM_USAGE_H
#define MMUSIM_USAGE_H

/* `mmusim help`: every command's synopsis, the workloads, the option syntax. */
extern const char usage_text[];

/* `mmusim help CMD` and `mmusim CMD --help`: @cmd's help text, or NULL for no such command. */
const char *usage_help(const char *cmd);

#endif
