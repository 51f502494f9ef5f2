/*
 * sweep_run.h - running a sweep (sweep.h loads the file and merges reports):
 * which points still need running (a report written under the same config,
 * input and build is kept: resume), the tasks (the points of one input and
 * repetition, at most SWEEP_GROUP_MAX each, so one decode drives them all),
 * worker processes forked without exec, and a worker's points run in one
 * process through the pool (pool.h).
 *
 * In its own file, not sweep.c: the file format and the merge are 800 lines
 * on their own, and scheduling is another concept (processes, signals).
 * Nothing here prints or calls exit(), except that a forked worker ends with
 * _exit(its status).
 */
#ifndef MMUSIM_SWEEP_RUN_H
#define MMUSIM_SWEEP_RUN_H

#include <signal.h>
#include <sys/types.h>

#include "err.h"
#include "outfile.h"
#include "plot.h"
#include "sweep.h"

#define SWEEP_GROUP_MAX 32 /* points one sweep worker simulates from one decode */

/* One worker's share of a sweep: points of one input and repetition. */
struct sweep_task {
	size_t *pts;
	size_t n;
	unsigned rep;
	pid_t pid; /* while its worker runs */
};

struct sweep_plan {
	struct sweep_task *tasks;
	size_t ntasks, cap;
	size_t total;  /* points (x repetitions) of this shard */
	size_t done;   /* of them finished: reused, then by workers */
	size_t stale;  /* reports found but written under another config, input or build */
};

/*
 * Plan shard @shard_i of @shard_n of @sw, its reports under @outdir, each
 * point's command naming @self: 0, or a run.h status with @e (a point whose
 * options or config do not load, an unreadable input; POOL_EHOST).
 */
int sweep_plan(const struct sweep *sw, const char *outdir, const char *self, unsigned shard_i,
	       unsigned shard_n, struct sweep_plan *plan, struct err *e);
void sweep_plan_free(struct sweep_plan *plan);

/*
 * Run the points @pts (one input, repetition @rep) in this process from one
 * pass over the input on @threads threads: each point's arguments are exactly
 * its `mmusim run` command (sweep_point_argv()), parsed as `run` parses them,
 * so each report is the one that command writes. @interrupted as in pool_opts.
 * 0, or a run.h status with @e.
 */
int sweep_run_points(const struct sweep *sw, const size_t *pts, size_t n, unsigned rep,
		     const char *outdir, const char *self, unsigned threads,
		     const volatile sig_atomic_t *interrupted, struct err *e);

struct sweep_exec_opts {
	unsigned jobs;    /* worker processes at once */
	unsigned threads; /* each worker's threads */
	const volatile sig_atomic_t *stop; /* set by a signal: stop the workers */
	/* In the forked worker (or this process: one task): run @t's points, return the exit status. */
	int (*worker)(void *arg, const struct sweep_task *t, unsigned threads);
	/* In the parent: the first worker that failed (the others are waited for). */
	void (*failed)(void *arg, const struct sweep_task *t);
	/* In the parent after each worker ends: plan->done of plan->total. */
	void (*progress)(void *arg, size_t done, size_t total, double seconds);
	void *arg;
};

/*
 * Run @plan's tasks on up to o->jobs forked workers (a lone task in this
 * process, o->worker's status taken as its exit status). 0 when all
 * succeeded; 130 when *o->stop was set (the running workers get SIGTERM); else
 * the status of the first failed worker, or 1 with @e when fork() failed.
 */
int sweep_exec(struct sweep_plan *plan, const struct sweep_exec_opts *o, struct err *e);

/* The reports present under @outdir, in point order (*@n of them; NULL when out
 * of memory). The caller frees each and the array. */
char **sweep_point_files(const struct sweep *sw, const char *outdir, size_t *n);

/* The CSV a sweep writes by default: the file's name, .yaml/.yml replaced by
 * .csv (caller frees; NULL when out of memory). */
char *sweep_default_csv(const char *sweep_path);

/*
 * sweep --plot: the sweep's default figure of @csv into @out. x: the first
 * swept dimension (the input when several are swept, then the keys in file
 * order); one line or bar colour per value of the second, os.mode taking that
 * place whenever it is swept; a third dimension (of two or more values): one
 * panel per value (plot --facet); y: L1 dTLB misses per kilo-instruction when
 * x is a TLB key, else total cycles. A non-numeric x gives the mail's % change
 * bars against the series' first value. Returns NULL, or why the sweep has no
 * default figure (a fourth dimension): the caller warns and draws none.
 */
const char *sweep_plot_opts(const struct sweep *sw, const char *out, struct plot_opts *o);

/*
 * Merge the reports @files into @of (sweep_merge_log(), one row per repetition
 * with @per_rep; points of the sweep left without a report are warned of on
 * @log, NULL: not) and commit it: 0; -1 with @e (a bad report: exit 2);
 * POOL_EHOST with @e (the write failed: exit 1). @of is aborted on failure.
 */
int sweep_merge_into(struct outfile *of, char *const *files, size_t n, bool per_rep, FILE *log,
		     struct err *e);

/* `mmusim sweep`, its options parsed. */
struct sweep_cmd {
	const char *file, *trace, *workload; /* the sweep file, and an input replacing its own */
	const char *outdir, *csv, *plot_out; /* NULL: the defaults */
	const char *run_points;              /* internal: "P,P,...", run here (rep, threads) */
	unsigned jobs;                       /* 0: the cores */
	unsigned shard_i, shard_n, rep, threads;
	bool list, quiet;
	const volatile sig_atomic_t *stop;   /* set by a signal */
	/* In a forked worker (or for --run-points): run @t's points with
	 * sweep_run_points(), report any error, return the exit status. */
	int (*worker)(void *arg, const struct sweep *sw, const char *outdir, const char *self,
		      const struct sweep_task *t, unsigned threads);
	void *arg;
	FILE *log;                           /* progress and notes: stderr */
};

/*
 * Run the sweep @c: load the file, choose the reports' directory (OUT.csv.d, or
 * a temporary one for -o /dev/null), list the commands (--list), or plan, run
 * the workers, merge the CSV and draw --plot. Progress (unless quiet), reuse,
 * a failed worker and an interruption are told on c->log. Returns an exit
 * status (> 0: already told; 130 when interrupted) or a run.h status with @e.
 */
int sweep_command(const struct sweep_cmd *c, struct err *e);

#endif
