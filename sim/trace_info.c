/*
 * trace_info.c - a trace's statistics (trace_info.h). Distinct pages are kept
 * in an open-addressing hash set of page numbers that doubles at half load, so
 * host memory follows the pages touched, not the address range.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_info.h"

struct page_set {
	uint64_t *slot; /* UINT64_MAX: empty */
	size_t cap, n;
};

static size_t page_hash(uint64_t vpn, size_t cap)
{
	return (size_t)((vpn * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

/* Add @vpn: 0, or -1 when out of memory. */
static int page_set_add(struct page_set *s, uint64_t vpn)
{
	size_t i;

	if (s->n * 2 >= s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *slot = malloc(cap * sizeof(*slot));

		if (!slot)
			return -1;
		memset(slot, 0xff, cap * sizeof(*slot));
		for (size_t j = 0; j < s->cap; j++)
			if (s->slot[j] != UINT64_MAX) {
				size_t k = page_hash(s->slot[j], cap);

				while (slot[k] != UINT64_MAX)
					k = (k + 1) & (cap - 1);
				slot[k] = s->slot[j];
			}
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	i = page_hash(vpn, s->cap);
	while (s->slot[i] != UINT64_MAX) {
		if (s->slot[i] == vpn)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	s->slot[i] = vpn;
	s->n++;
	return 0;
}

/* One batch into @in: 0, or -1 when out of memory. */
static int info_add_batch(struct trace_info *in, struct page_set *s, const struct trace_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct trace_rec *r = &b->recs[i];

		if (r->kind == R_EVENT && b->ev[r->size].initial)
			continue; /* an initial mapping: listed apart, not a record of the program */
		in->kinds[r->kind]++;
		if (r->kind == R_EVENT) {
			const struct os_event *o = &b->ev[r->size];

			if (o->kind == EV_SWITCH)
				in->cur_proc = o->addr;
			else if (o->kind == EV_MARKER && in->ev[EV_MARKER] < TRACE_INFO_MARKERS)
				in->marker_proc[in->ev[EV_MARKER]] = in->cur_proc;
			in->ev[o->kind]++;
		} else if (r->kind == R_INSNS) {
			in->insns += r->size;
		} else if (r->kind == R_TOUCH) {
			in->touches[r->size < TOUCH_NR ? r->size : TOUCH_READ]++;
		} else if (r->kind == R_DEP) {
			if (r->size == 1)
				in->dep_last++;
			if (r->size > in->dep_max)
				in->dep_max = r->size;
		} else {
			uint64_t last = r->addr + r->size - 1;

			if (r->addr < in->lo)
				in->lo = r->addr;
			if (last > in->hi)
				in->hi = last;
			for (uint64_t p = r->addr >> PAGE_SHIFT; p <= last >> PAGE_SHIFT; p++)
				if (page_set_add(s, p))
					return -1;
		}
	}
	return 0;
}

/* How many of @tr's mappings are of image @image (0: the first). */
static size_t trace_maps_of_image(const struct trace_reader *tr, uint32_t image)
{
	size_t n = 0;

	for (size_t i = 0; i < tr->nmaps; i++)
		n += tr->maps[i].image == image;
	return n;
}

int trace_info(struct trace_reader *tr, struct trace_info *in, struct err *e)
{
	struct page_set s = { 0 };
	struct trace_batch b;
	int n, rc = 0;

	memset(in, 0, sizeof(*in));
	in->lo = UINT64_MAX;
	while ((n = trace_next(tr, &b, e)) > 0)
		if (info_add_batch(in, &s, &b)) {
			rc = err_host(e, "mmusim", 0, 0, "out of memory") - 1;
			break;
		}
	if (!rc && n < 0)
		rc = -1;
	in->pages = s.n;
	free(s.slot);
	return rc;
}

void trace_info_write(const struct trace_info *in, const struct trace_reader *tr, FILE *out)
{
	fprintf(out, "trace:        %s\nformat:       %s\n", tr->name, trace_format_name[tr->format]);
	fprintf(out, "records:      %llu ifetch, %llu load, %llu store, %llu modify, %llu events\n",
		(unsigned long long)in->kinds[R_IFETCH], (unsigned long long)in->kinds[R_LOAD],
		(unsigned long long)in->kinds[R_STORE], (unsigned long long)in->kinds[R_MODIFY],
		(unsigned long long)(in->kinds[R_EVENT] - in->ev[EV_MARKER]));
	if (in->ev[EV_MARKER])
		fprintf(out, "markers:      %llu\n", (unsigned long long)in->ev[EV_MARKER]);
	fprintf(out, "instructions: %llu\n", (unsigned long long)(in->kinds[R_IFETCH] + in->insns));
	fprintf(out, "pages:        %llu distinct 4 KiB pages (%llu KiB)\n",
		(unsigned long long)in->pages, (unsigned long long)in->pages * 4);
	if (in->lo <= in->hi)
		fprintf(out, "addresses:    0x%llx - 0x%llx\n", (unsigned long long)in->lo,
			(unsigned long long)in->hi);
	fprintf(out, "events:      ");
	for (int k = 0; k < EV_MARKER; k++)
		fprintf(out, " %s %llu", ev_kind_name[k], (unsigned long long)in->ev[k]);
	/* the mlock family (mtr version 5), only when there is one: earlier outputs stay */
	if (in->ev[EV_MLOCK] + in->ev[EV_MUNLOCK] + in->ev[EV_MLOCKALL] + in->ev[EV_MUNLOCKALL])
		for (int k = EV_MARKER + 1; k <= EV_MUNLOCKALL; k++)
			fprintf(out, " %s %llu", ev_kind_name[k], (unsigned long long)in->ev[k]);
	fprintf(out, "\n");
	/* the processes (mtr version 6), only when there is a process event */
	if (in->ev[EV_FORK] + in->ev[EV_SWITCH] + in->ev[EV_EXIT] + in->ev[EV_EXEC] + in->ev[EV_PRCTL]) {
		fprintf(out, "processes:    %llu;", (unsigned long long)tr->processes);
		for (int k = EV_FORK; k < EV_NR; k++)
			fprintf(out, " %s %llu", ev_kind_name[k], (unsigned long long)in->ev[k]);
		fprintf(out, "\n");
		/* which process set each marker, in file order (the first TRACE_INFO_MARKERS) */
		if (in->ev[EV_MARKER]) {
			uint64_t n = in->ev[EV_MARKER] < TRACE_INFO_MARKERS ? in->ev[EV_MARKER] : TRACE_INFO_MARKERS;

			fprintf(out, "marker procs:");
			for (uint64_t k = 0; k < n; k++)
				fprintf(out, " %llu", (unsigned long long)in->marker_proc[k]);
			fprintf(out, "%s\n", n < in->ev[EV_MARKER] ? " ..." : "");
		}
	}
	if (in->kinds[R_TOUCH]) /* (a store to a page first read is a second touch) */
		fprintf(out, "touched:      %llu page touches while not recording: %llu read, %llu written, %llu fetched\n",
			(unsigned long long)in->kinds[R_TOUCH], (unsigned long long)in->touches[TOUCH_READ],
			(unsigned long long)in->touches[TOUCH_WRITE], (unsigned long long)in->touches[TOUCH_FETCH]);
	/* R_DEP: the references whose address depends on an earlier load (trace.h) */
	if (tr->deps)
		fprintf(out, "dependences:  %llu (%llu on the load right before, the farthest %llu loads back)\n",
			(unsigned long long)in->kinds[R_DEP], (unsigned long long)in->dep_last,
			(unsigned long long)in->dep_max);
	else if (tr->format == TF_MTR)
		fprintf(out, "dependences:  not recorded (mtr version %u)\n", tr->version);
	else
		fprintf(out, "dependences:  not recorded (%s)\n", trace_format_name[tr->format]);
	if (tr->thread || tr->forks || tr->roi_starts)
		fprintf(out, "threads:      %llu switches; forks %llu; region-of-interest starts %llu\n",
			(unsigned long long)tr->thread_switches, (unsigned long long)tr->forks,
			(unsigned long long)tr->roi_starts);
	for (size_t i = 0; i < tr->nfiles; i++)
		fprintf(out, "file %-7zu dev %llu:%llu inode %llu  %s\n", i + 1,
			(unsigned long long)(tr->files[i].dev >> 8),
			(unsigned long long)(tr->files[i].dev & 0xff),
			(unsigned long long)tr->files[i].ino, tr->files[i].path);
	for (size_t i = 0, n = 0; i < tr->nmaps; i++) {
		const struct trace_map *m = &tr->maps[i];

		if (m->image && (!i || m->image != tr->maps[i - 1].image))
			fprintf(out, "mappings at the first instruction after exec %u:\n", m->image);
		else if (!m->image && !n++)
			fprintf(out, "mappings at the first instruction: %zu\n", trace_maps_of_image(tr, 0));

		fprintf(out, "  %012llx-%012llx %c%c%c%c %08llx %llu:%llu %-8llu %s\n",
			(unsigned long long)m->start, (unsigned long long)(m->start + m->len),
			m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-', m->prot & 4 ? 'x' : '-',
			m->flags & MAP_SHARED_ ? 's' : 'p', (unsigned long long)m->off,
			(unsigned long long)(m->dev >> 8), (unsigned long long)(m->dev & 0xff),
			(unsigned long long)m->ino, m->name);
	}
}
