/*
 * run.h - one `mmusim run`: its options, the config they name, the input, the
 * simulators (one, or one per --modes mode) and the reports. The command line
 * (through the public API, include/mmusim.h: sim/mmusim.c builds its machines
 * with run_setup() and replays with run_drive()) and the sweep workers share
 * it, so a sweep point's report is exactly the one its `mmusim run` command
 * writes (sweep_point_argv()).
 *
 * Nothing here prints an error or exits: every failure is a status (the POOL_*
 * values of pool.h, or RUN_EUSAGE) with a struct err that says why.
 */
#ifndef MMUSIM_RUN_H
#define MMUSIM_RUN_H

#include "config.h"
#include "err.h"
#include "outfile.h"
#include "pool.h"
#include "sim.h"
#include "stats.h"
#include "trace.h"

#define RUN_MAX_SETS 256

/* What `run` replays when given no input. */
#define RUN_DEFAULT_WORKLOAD "stream:size=16M,iterations=2"

enum {
	RUN_HELP = 1,     /* run_opts_parse(): --help given */
	RUN_EUSAGE = -4,  /* a command-line error: e->msg (exit 2, with the usage) */
};

/* The options of `run` (and of `config show`, which takes its config ones). */
struct run_opts {
	const char *config;
	const char *trace;
	const char *workload;
	const char *format;
	const char *modes;
	const char *json;
	const char *timeline;
	const char *timeline_ms;
	double timeline_interval; /* --timeline-ms as a number (checked; default 1) */
	const char *steps; /* --steps FILE.csv: a row per marker */
	const char *sets[RUN_MAX_SETS];
	unsigned nsets;
	const char *labels[RUN_MAX_SETS]; /* --label k=v (and --sweep-set): run.labels */
	unsigned nlabels;
	bool quiet;
	bool check; /* --check-invariants: after every batch (tests) */
	/* --skip-refs N & co.: "roi.skip_refs=N" ..., each also in sets[] (so they
	 * are config keys: in the config hash, in config show) */
	char roi_sets[6][48];
	bool roi_given[6];
	unsigned vmas_top;    /* --vmas[=N]: the top N mappings by walk cycles (0: none) */
	const char *vmas_csv; /* --vmas-csv FILE: every mapping as CSV */
	/* `run A B ...`: several TRACEs, each a process (trace_mux.c); trace is NULL
	 * then, and sets[] ends with procs_set, "processes=[A, B, ...]" */
	const char *traces[SIM_PROCS_MAX];
	unsigned ntraces;
	char procs_set[SIM_PROCS_MAX * (PROC_TRACE_MAX + 4) + 16];
};

/*
 * Parse `run` options (getopt_long: -c FILE, --config=FILE, --set=k=v, ...;
 * @argv[0] is the command's name) into @o, which keeps pointers into @argv.
 * @want_input: a positional TRACE is allowed. 0; RUN_HELP; RUN_EUSAGE with @e.
 */
int run_opts_parse(int argc, char **argv, struct run_opts *o, bool want_input, struct err *e);

/*
 * A --set value @arg must be path=value: 0, or RUN_EUSAGE with @e's message, which
 * suggests joining the next argument (argv[@next]) when @arg has no '=' and the user
 * likely wrote `--set os.mode thp`.
 */
int run_set_arg(int argc, char **argv, int next, const char *arg, struct err *e);

/*
 * `run A B ...`: each TRACE names a file (not standard input), so that a missing
 * one is reported as "A: No such file or directory". 0 or -1 with @e.
 */
int run_traces_check(const struct run_opts *o, struct err *e);

/* The effective config: defaults, then -c, then each --set; validated. 0 or -1 with @e. */
int run_config_load(const struct run_opts *o, struct sim_config *c, struct err *e);

/* --modes @spec into @modes (MODE_NR at most): the count, or RUN_EUSAGE with @e. */
int run_modes_parse(const char *spec, enum os_mode *modes, struct err *e);

/* The input: the trace, the workload, or @c's processes (trace_mux.h), else
 * RUN_DEFAULT_WORKLOAD. NULL with *@rc = RUN_EUSAGE (two of them given, unknown
 * --format) or -1 (bad input). */
struct trace_reader *run_input_open(const struct run_opts *o, const struct sim_config *c, int *rc,
				    struct err *e);

/* The input's identity (provenance.h; @c: its processes, if any) into @buf
 * (PROVENANCE_ID_MAX). 0 or -1 with @e. */
int run_input_id(const struct run_opts *o, const struct sim_config *c,
		 const struct trace_reader *tr, char *buf, struct err *e);

/* The simulators of a run, driven from one reader. */
struct run {
	struct sim *sims;
	const char **mode_names;
	unsigned n;
	unsigned threads; /* pool_opts.threads */
	double wall;      /* seconds in run_drive() */
	uint64_t records;
};

/* @n simulators of @c, simulator i in mode @modes[i]. 0; -1 with @e (bad config);
 * POOL_EHOST. run_free() either way. */
int run_setup(struct run *r, const struct sim_config *c, const enum os_mode *modes, unsigned n,
	      const char *trace_name, struct err *e);

/* Replay @tr through every simulator (pool_run(), @o's callbacks; r->threads wins
 * over o->threads), then record wall time and peak RSS in each report. */
int run_drive(struct run *r, struct trace_reader *tr, const struct pool_opts *o, struct err *e);

/* Destroy the simulators (not @r itself). */
void run_free(struct run *r);

/*
 * The reports: JSON to @json_path if not NULL (one object per mode when
 * several or @compare), then, unless @quiet or the JSON went to "-", the text
 * report (one mode) or the comparison table on stdout. 0; -1 with @e (bad path:
 * exit 2); POOL_EHOST with @e (the write failed: exit 1).
 */
int run_write_reports(struct run *r, const struct report_meta *base, const char *json_path,
		      bool quiet, bool compare, struct err *e);

/*
 * Several processes (sim_proc_report()): the "processes" array into the JSON
 * object @json, or the table comparing them (after a blank line) to @out.
 * Nothing for a run of one process. 0, or -1 on host OOM.
 */
int run_add_processes(struct sim *s, void *json);
int run_write_procs(struct sim *s, FILE *out);

#endif
