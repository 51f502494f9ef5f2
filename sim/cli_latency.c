/*
 * cli_latency.c - `mmusim merge --latency OUT.csv REPORT.json...`: the runs'
 * per-process fault-latency histograms (processes[].fault_latency_cycles, log2
 * buckets, stats.c) as a CSV of cumulative distributions, one row per bucket.
 * The sweep's CSV holds scalars only (an array has no one column), so a study
 * of fault-latency tails across a sweep (CBMM's, configs/experiments/
 * cbmm-latency.yaml) reads the points' reports here.
 *
 * Columns: the run's labels (run.labels: a sweep point's `point`, its swept
 * keys, `rep`; the first report's, in its order; `points` left out, it is the
 * same on every row), then mode, process (the machine's id), log2_cycles (the
 * bucket: faults whose cost in cycles has this floor(log2); 0 holds 0 and 1),
 * cycles_lo and cycles_hi (the bucket's faults cost [cycles_lo, cycles_hi)),
 * faults (in the bucket), cdf (the share of the process's faults in this
 * bucket or below, %.6f) and ccdf (in this bucket or above, %.6g: the tail,
 * for a log axis, where cdf's last digits hide it; it is never 0 on a row).
 * A process's rows run from bucket 0 to its last non-empty one; a process
 * without faults has none.
 * A report of several modes (run --modes) gives each mode's processes in the
 * report's order. Rows follow the reports in the order given (a shell glob of
 * a sweep's OUT.csv.d/point-*.json is in point order).
 *
 * Bad input (not JSON, no processes array, a label the first report has not)
 * is "REPORT: what is wrong", exit 2, and OUT is not written.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli_latency.h"
#include "outfile.h"
#include "pool.h"
#include "util.h"

/* The labels of @run (an object, or NULL when there are none). */
static json_t *run_labels(json_t *run)
{
	json_t *l = json_object_get(run, "labels");

	return json_is_object(l) ? l : NULL;
}

/* A label's value as text (labels are strings; a number is printed as one). */
static const char *label_str(json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	if (json_is_real(v)) {
		snprintf(buf, n, "%.17g", json_real_value(v));
		return buf;
	}
	return "";
}

/* The rows of one mode's report object @o (holding run and processes). */
static int mode_rows(FILE *out, const char *file, json_t *o, json_t *keys, struct err *e)
{
	json_t *run = json_object_get(o, "run"), *procs = json_object_get(o, "processes");
	json_t *labels = run_labels(run), *p;
	const char *mode = json_string_value(json_object_get(run, "mode"));
	const char *k;
	json_t *v;
	size_t i;

	if (!json_is_array(procs))
		return err_set(e, file, 0, 0, "no processes array (a report of mmusim run --json)");
	json_object_foreach(labels, k, v) {
		bool known = !strcmp(k, "points");

		for (size_t j = 0; !known && j < json_array_size(keys); j++)
			known = !strcmp(k, json_string_value(json_array_get(keys, j)));
		if (!known)
			return err_set(e, file, 0, 0, "label '%s' is not one of the first report's", k);
	}
	json_array_foreach(procs, i, p) {
		json_t *h = json_object_get(p, "fault_latency_cycles"), *b;
		json_int_t id = json_integer_value(json_object_get(p, "id"));
		unsigned long long total = 0, cum = 0;
		size_t n;

		if (!json_is_array(h) || json_array_size(h) > 64)
			return err_set(e, file, 0, 0, "processes[%zu]: no fault_latency_cycles array", i);
		json_array_foreach(h, n, b) {
			if (!json_is_integer(b) || json_integer_value(b) < 0)
				return err_set(e, file, 0, 0, "processes[%zu].fault_latency_cycles[%zu]: "
					       "not a count", i, n);
			total += (unsigned long long)json_integer_value(b);
		}
		if (!total)
			continue;
		json_array_foreach(h, n, b) {
			unsigned long long c = (unsigned long long)json_integer_value(b);

			cum += c;
			for (size_t j = 0; j < json_array_size(keys); j++) {
				char buf[64];

				csv_put(out, label_str(json_object_get(labels,
						json_string_value(json_array_get(keys, j))), buf, sizeof(buf)));
				fputc(',', out);
			}
			csv_put(out, mode ? mode : "");
			fprintf(out, ",%lld,%zu,%llu,%llu,%llu,%.6f,%.6g\n", (long long)id, n,
				n ? 1ull << n : 0ull, 2ull << n, c, (double)cum / (double)total,
				(double)(total - cum + c) / (double)total);
		}
	}
	return 0;
}

/* The rows of @file; its first call (!*keys) sets the label columns and writes the header. */
static int report_rows(FILE *out, const char *file, json_t **keys, struct err *e)
{
	json_error_t je;
	json_t *root = json_load_file(file, 0, &je), *o;
	const char *k;
	int rc = 0;

	if (!root)
		return err_set(e, file, je.line > 0 ? (unsigned long)je.line : 0,
			       je.column > 0 ? (unsigned long)je.column : 0, "%s", je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return err_set(e, file, 0, 0, "not a report (a JSON object)");
	}
	if (!*keys) {
		/* the labels of the first mode's run, less points */
		json_t *run = json_object_get(root, "run"), *v;

		if (!run)
			json_object_foreach(root, k, o)
				if ((run = json_object_get(o, "run")))
					break;
		*keys = json_array();
		json_object_foreach(run_labels(run), k, v)
			if (strcmp(k, "points"))
				json_array_append_new(*keys, json_string(k));
		for (size_t j = 0; j < json_array_size(*keys); j++) {
			csv_put(out, json_string_value(json_array_get(*keys, j)));
			fputc(',', out);
		}
		fputs("mode,process,log2_cycles,cycles_lo,cycles_hi,faults,cdf,ccdf\n", out);
	}
	if (json_object_get(root, "processes")) {
		rc = mode_rows(out, file, root, *keys, e);
	} else {
		bool any = false;

		json_object_foreach(root, k, o) {
			if (!json_is_object(o) || !json_object_get(o, "processes"))
				continue;
			any = true;
			if ((rc = mode_rows(out, file, o, *keys, e)))
				break;
		}
		if (!any && !rc)
			rc = err_set(e, file, 0, 0, "no processes array (a report of mmusim run --json)");
	}
	json_decref(root);
	return rc;
}

int latency_csv_into(struct outfile *of, char *const *files, size_t n, struct err *e)
{
	FILE *f = outfile_stream(of);
	json_t *keys = NULL;

	if (!f) {
		outfile_abort(of);
		err_host(e, "mmusim", 0, 0, "out of memory");
		return POOL_EHOST;
	}
	for (size_t i = 0; i < n; i++)
		if (report_rows(f, files[i], &keys, e)) {
			json_decref(keys);
			outfile_abort(of);
			return -1;
		}
	json_decref(keys);
	return outfile_commit(of, e) ? POOL_EHOST : 0;
}
