/*
 * sweep.h - sweep files: the cartesian product of config values over one or more
 * inputs (DESIGN.md "Command line"), the `mmusim run` command of each point, and
 * the merge of per-point JSON reports into one CSV.
 *
 * A sweep file (YAML):
 *   config: ../nehalem.yaml        # optional; paths are relative to the sweep file
 *   trace: t.lackey | [a, b]       # or workload: spec | [spec, ...] (a list is swept)
 *                                  # or input: [t.lackey, spec, {trace: P}, {workload: S}]
 *   format: lackey                 # optional
 *   repeat: 3                      # optional: each point under seeds seed, seed+1, ...
 *   set: { os.memory: 1G }         # optional fixed overrides
 *   sweep:                         # config path: list of values (first key varies slowest)
 *     tlb.l1d.4K.entries: [16, 32, 64]
 *     os.mode: [base, thp]
 *     workload.size: [16M, 64M]    # a workload parameter (workload.h): every input a workload
 * Points are numbered from 0: the input varies slowest, then the keys in file order.
 * An input: item is a workload spec when its name (before any ':') is a built-in
 * workload's, else a trace path; {trace: P} and {workload: S} say which.
 * A workload.KEY axis sets KEY in each input's spec (workload_with_param()); the
 * CSV's column holds its value as a number (sizes in bytes), and the input column
 * the spec as written less the swept keys.
 * A processes axis sweeps mixes of processes (each value a processes: list, its
 * traces relative to the sweep file); the mix is then the input (no trace:,
 * workload: or input:), each mix a source of its own, and the CSV's processes
 * column names it ("a.mtr + b.mtr(start=1000)"):
 *   sweep:
 *     processes: [[a.mtr, b.mtr], [a.mtr, {trace: b.mtr, start: 1000}]]
 * A config (config:) with a processes: list is the input of every point likewise.
 */
#ifndef MMUSIM_SWEEP_H
#define MMUSIM_SWEEP_H

#include <stdio.h>

#include "err.h"
#include "types.h"

struct sweep_axis {
	char *key;
	char **vals;
	size_t nvals;
	char **nums;      /* workload.KEY: the values as numbers (the CSV's); else NULL */
	size_t wl_stride; /* workload.KEY, processes: its weight in the point's source combination */
	char **names;     /* processes: each mix as the CSV names it; else NULL */
};

struct sweep {
	char *path;        /* the sweep file */
	char *config;      /* resolved against the file's directory, or NULL */
	char **inputs;     /* resolved trace paths, or workload specs */
	char **input_names; /* as written in the file (the CSV's input column) */
	size_t ninputs;
	bool *is_wl;       /* per input: a workload spec (else a trace path) */
	bool workload;     /* every input is a workload */
	bool procs;        /* the input is the processes: list (the config's or an axis's):
			    * one input, "processes", that puts no TRACE on the command */
	size_t nwl_combos; /* the product of the workload.KEY axes' lengths (1 without) */
	char *format;
	unsigned repeat;
	uint64_t seed;     /* the base config's seed (repeat r uses seed + r) */
	char **sets;       /* fixed "path=value" */
	size_t nsets;
	/* per input (input: items {workload: SPEC, set: {...}}): "path=value" applied
	 * after sets, before the swept keys; NULL, or ninputs entries */
	char ***input_sets;
	size_t *input_nsets;
	size_t ninput_sets; /* entries of input_sets (a failed load may stop before ninputs) */
	struct sweep_axis *axes;
	size_t naxes;
	size_t npoints;    /* ninputs x product of the axes' lengths */
};

/*
 * Load and check @path: every key and value is applied to a scratch config so
 * an unknown path or a bad value is reported at its line and column; every
 * input is checked too (workload specs by workload_check(), traces opened), at
 * its list item's line and column. Returns 0, or -1 with @e. @trace_override (a
 * trace path or NULL) and @workload_override replace the file's input (the
 * command line's); a bad one is reported as `mmusim run` reports it ("-w: ...",
 * "PATH: ...").
 */
int sweep_load(struct sweep *sw, const char *path, const char *trace_override,
	       const char *workload_override, struct err *e);
void sweep_free(struct sweep *sw);

/*
 * The `mmusim run` arguments of point @p, repetition @rep (NULL-terminated,
 * argv[0] = @self; the caller frees with sweep_argv_free). The report goes to
 * @json. Labels record point, the sweep's point count (points, for merge's
 * check of gaps), rep, the swept input and the swept keys.
 */
char **sweep_point_argv(const struct sweep *sw, size_t p, unsigned rep, const char *self,
			const char *json);
void sweep_argv_free(char **argv);

/* The result file of point @p, repetition @rep under @dir (caller frees); its name
 * ends in a hash of the point's command. */
char *sweep_point_file(const struct sweep *sw, const char *dir, size_t p, unsigned rep);

/*
 * Whether the report @file is the result of the point with these identities
 * (provenance.h: its effective config's hash, its input, the build): 1 yes; 0
 * no (written under another config, input or build, or unreadable: run the
 * point again); -1 no such file.
 */
int sweep_report_matches(const char *file, const char *config_hash, const char *input_id,
			 const char *build_id);

/* The input index of point @p. */
size_t sweep_point_input(const struct sweep *sw, size_t p);

/*
 * The source of point @p: what it reads, its input and the values of the
 * workload.KEY axes, as an index below sweep_nsources(): points of one source
 * (and stream, sweep_run.c) can share one decode; others cannot.
 */
size_t sweep_point_source(const struct sweep *sw, size_t p);
size_t sweep_nsources(const struct sweep *sw);

/* Print @argv as one shell-quoted line. */
void sweep_print_cmd(FILE *out, char *const *argv);

/*
 * merge: read the reports @files (written by `mmusim run --label point=...`), and
 * write the CSV to @out: one row per point in point order: `point`, the labels in
 * the order the first report has them (except point, points and rep), then every numeric
 * report field outside `run`, flattened with dots. Several reports of one point
 * (repetitions) give the mean, and a `.ci95` column with the 95% confidence
 * half-width (Student's t, GSL). 0, or -1 with @e (a bad or inconsistent file).
 */
int sweep_merge(char *const *files, size_t nfiles, FILE *out, struct err *e);

/*
 * The same, or with @per_rep one row per point and repetition (merge --reps, a
 * sweep's OUT.reps.csv): `point`, `rep`, the labels, then each report's own
 * numbers, no mean or .ci95. `plot` draws such a CSV with the mean of each
 * point's repetitions and error bars, also for a derived y (A/B, mpki:).
 */
int sweep_merge_opts(char *const *files, size_t nfiles, FILE *out, bool per_rep, struct err *e);

/*
 * The same, and a warning on @log (NULL: none) when the reports leave points of
 * their sweep without a row (each point's report carries the sweep's point
 * count, run.labels.points, and its index, run.labels.point).
 */
int sweep_merge_log(char *const *files, size_t nfiles, FILE *out, bool per_rep, FILE *log,
		    struct err *e);

/*
 * Whether @path is an existing regular file whose first non-blank byte is '{':
 * a JSON report, never the CSV `merge` writes (a forgotten OUT operand).
 */
bool sweep_file_is_report(const char *path);

#endif
