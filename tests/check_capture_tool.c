/*
 * check_capture_tool.c - mmusim's own Valgrind tool (capture/mm_main.c) as
 * `mmusim capture` runs it: the same reference counts by kind as lackey on a
 * deterministic program (tests/capture/maps.c, compiled here), the mtr
 * version 2 records (initial mappings, mapping system calls with their
 * files), version 6's forked child in the same file, the region of interest, --keep-on-failure, the
 * dependences (tests/capture/deps.c) and version 5's filesystem of each mapped
 * file and mlock calls (tests/native/steps.c).
 *
 * Needs valgrind, a C compiler and the tool built by `make` ($BUILD/valgrind);
 * without them the tests print why and pass.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "check_run.h"
#include "config.h"
#include "sim.h"
#include "trace.h"
#include "vma.h"

struct counts {
	uint64_t kind[R_KIND_NR];
	uint64_t ev[EV_NR];    /* the program's calls (initial mappings apart) */
	uint64_t initial;      /* events standing for the initial mappings */
	uint64_t file_mmaps;   /* mmap events whose file is the program itself */
	uint64_t forks, roi_starts;
	uint64_t processes;              /* mtr version 6 */
	uint64_t child[R_KIND_NR];       /* the records of processes other than process 0 */
	uint64_t child_initial;          /* initial-mapping events of those (an exec'd image's) */
	bool stack, heap, text; /* initial mappings: [stack], [heap], the program's r-x text */
};

static char dir[64], prog[128], vglib[512];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_capture_tool.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/maps", dir);
}

static void teardown(void)
{
	check_rmdir(dir);
}

/*
 * Valgrind, the tool and the test program. VALGRIND_LIB is set to the tool's
 * directory for both tools, so that the program sees the same environment
 * under lackey and under mmusim's tool (its length changes what ld.so does).
 */
static bool ready(void)
{
	const char *b = getenv("BUILD");
	char cmd[512], tool[600];

	if (system("valgrind --version >/dev/null 2>&1")) {
		fprintf(stderr, "check_capture_tool: valgrind is not installed; skipped\n");
		return false;
	}
	snprintf(vglib, sizeof(vglib), "%s/valgrind", b && *b ? b : "build/release");
	snprintf(tool, sizeof(tool), "%s/mmusim-amd64-linux", vglib);
	if (access(tool, X_OK)) {
		fprintf(stderr, "check_capture_tool: %s not built (no valgrind headers?); skipped\n",
			tool);
		return false;
	}
	setenv("VALGRIND_LIB", vglib, 1);
	snprintf(cmd, sizeof(cmd), "cc -O1 -Iinclude -o %s tests/capture/maps.c -lpthread", prog);
	ck_assert_msg(!system(cmd), "cannot compile tests/capture/maps.c");
	return true;
}

static void read_trace(const char *path, enum trace_format fmt, struct counts *c)
{
	struct err e = { 0 };
	struct trace_reader *r = trace_open(path, TF_AUTO, &e);
	struct trace_batch b;
	char msg[1024];
	uint64_t cur = 0; /* the process whose records these are (EV_SWITCH) */
	int n;

	memset(c, 0, sizeof(*c));
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(r != NULL, "%s", msg);
	ck_assert_int_eq(r->format, fmt);
	while ((n = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			const struct trace_rec *t = &b.recs[i];

			if (t->kind == R_EVENT && b.ev[t->size].kind == EV_SWITCH)
				cur = b.ev[t->size].addr;
			if (cur)
				c->child[t->kind]++;
			else
				c->kind[t->kind]++;
			if (t->kind == R_EVENT) {
				const struct os_event *o = &b.ev[t->size];

				if (o->initial) {
					if (cur)
						c->child_initial++;
					else
						c->initial++;
					continue;
				}
				c->ev[o->kind]++;
				if (o->kind == EV_MMAP && o->file && o->file <= r->nfiles &&
				    !strcmp(r->files[o->file - 1].path, prog) && o->off == 0)
					c->file_mmaps++;
			}
		}
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(n == 0, "%s", msg);
	for (size_t i = 0; i < r->nmaps; i++) {
		const struct trace_map *m = &r->maps[i];

		c->stack |= !strcmp(m->name, "[stack]") && m->prot == 3 && (m->flags & MAP_ANONYMOUS_);
		c->heap |= !strcmp(m->name, "[heap]");
		c->text |= !strcmp(m->name, prog) && m->prot == 5 && m->ino && m->off;
	}
	c->forks = r->forks;
	c->roi_starts = r->roi_starts;
	c->processes = r->processes;
	trace_close(r);
}

static void capture(const char *out, const char *tool, char **argv, const struct capture_opts *o0)
{
	struct capture_opts o = o0 ? *o0 : (struct capture_opts){ 0 };
	struct err e = { 0 };
	char msg[1024];
	int r;

	o.tool = tool;
	o.tool_dir = vglib;
	r = capture_run_opts(out, argv, &o, NULL, &e);
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(r == 0, "%s", msg);
}

/*
 * The same program under lackey and under mmusim's tool: the same references
 * by kind, to the reference (the tool counts as lackey does: one I per
 * Ist_IMark, L/S per load/store, a load and store of the same address in one
 * instruction merged into M), and the same mapping events, for the first
 * process (lackey does not trace the forked child; mmusim's tool does, as
 * process 1 of the same file).
 */
START_TEST(same_counts_as_lackey)
{
	char lk[256], mm[256];
	char *argv[] = { prog, NULL };
	struct counts a, b;

	if (!ready())
		return;
	snprintf(lk, sizeof(lk), "%s/maps.lackey.zst", dir);
	snprintf(mm, sizeof(mm), "%s/maps.mtr.zst", dir);
	capture(lk, "lackey", argv, NULL);
	capture(mm, "mmusim", argv, NULL);
	read_trace(lk, TF_LACKEY, &a);
	read_trace(mm, TF_MTR, &b);
	ck_assert_uint_gt(a.kind[R_IFETCH], 50000);
	for (int k = R_IFETCH; k <= R_MODIFY; k++)
		ck_assert_msg(a.kind[k] == b.kind[k], "kind %d: lackey %llu, mmusim %llu", k,
			      (unsigned long long)a.kind[k], (unsigned long long)b.kind[k]);
	for (int k = 0; k < EV_MARKER; k++)
		ck_assert_msg(a.ev[k] == b.ev[k], "%s: lackey %llu, mmusim %llu", ev_kind_name[k],
			      (unsigned long long)a.ev[k], (unsigned long long)b.ev[k]);
	/* maps.c's two getppid() calls: markers in the tool's trace, nothing in lackey's */
	ck_assert_uint_eq(a.ev[EV_MARKER], 0);
	ck_assert_uint_eq(b.ev[EV_MARKER], 2);
}
END_TEST

/*
 * The forked child, in the same file (mtr version 6): process 1, with no
 * mappings of its own (its parent's address space), then worker()'s 1000
 * iterations (a load and a store, or a modify, each) and _exit; both exit.
 */
static void check_child(const struct counts *c)
{
	ck_assert_uint_eq(c->processes, 2);
	ck_assert_uint_eq(c->forks, 1);
	ck_assert_uint_eq(c->ev[EV_FORK], 1);
	ck_assert_uint_eq(c->ev[EV_EXIT], 2);
	ck_assert_uint_eq(c->ev[EV_EXEC], 0);
	ck_assert_uint_ge(c->ev[EV_SWITCH], 2);
	ck_assert_uint_eq(c->child_initial, 0);
	ck_assert_uint_ge(c->child[R_LOAD] + c->child[R_MODIFY], 1000);
	ck_assert_uint_ge(c->child[R_STORE] + c->child[R_MODIFY], 1000);
	ck_assert_uint_lt(c->child[R_IFETCH], 20000);
}

/* What version 2 adds: the initial mappings, the file behind an mmap, the fork. */
START_TEST(version2_records)
{
	char mm[256];
	char *argv[] = { prog, NULL };
	struct counts c;

	if (!ready())
		return;
	snprintf(mm, sizeof(mm), "%s/maps.mtr", dir);
	capture(mm, "mmusim", argv, NULL);
	read_trace(mm, TF_MTR, &c);
	ck_assert(c.stack);
	ck_assert(c.heap);
	ck_assert(c.text);
	/* maps.c: one mremap, an mprotect and a madvise of its own, its file mmap of itself. */
	ck_assert_uint_eq(c.ev[EV_MREMAP], 1);
	ck_assert_uint_ge(c.ev[EV_MADVISE], 1);
	ck_assert_uint_ge(c.ev[EV_MPROTECT], 1);
	ck_assert_uint_ge(c.ev[EV_BRK], 1);
	ck_assert_uint_eq(c.file_mmaps, 1);
	ck_assert_uint_eq(c.forks, 1);
	ck_assert_uint_eq(c.roi_starts, 0);
	ck_assert_uint_eq(c.ev[EV_MARKER], 2); /* its two getppid() calls */
	check_child(&c);

	/* trace convert keeps version 2's mappings and files, and version 6's processes. */
	{
		struct err e = { 0 };
		struct trace_reader *r = trace_open(mm, TF_AUTO, &e);
		char conv[256];
		struct counts d;

		ck_assert_ptr_nonnull(r);
		snprintf(conv, sizeof(conv), "%s/conv.mtr.zst", dir);
		ck_assert_int_eq(mtr_write_all(r, conv, &e), 0);
		read_trace(conv, TF_MTR, &d);
		ck_assert(d.stack && d.heap && d.text);
		ck_assert_uint_eq(d.file_mmaps, 1);
		ck_assert_uint_eq(d.ev[EV_MARKER], 2);
		for (int k = 0; k < R_KIND_NR; k++) {
			ck_assert_uint_eq(d.kind[k], c.kind[k]);
			ck_assert_uint_eq(d.child[k], c.child[k]);
		}
		for (int k = EV_FORK; k < EV_NR; k++)
			ck_assert_uint_eq(d.ev[k], c.ev[k]);
		ck_assert_uint_eq(d.forks, 1);
		ck_assert_uint_eq(d.processes, 2);
	}
}
END_TEST

/*
 * --roi: only the loop between MMUSIM_ROI_BEGIN() and END(), 1000 iterations
 * of a volatile load and store (plus the few instructions around them).
 * --skip-insns/--max-insns: exactly that many instructions.
 */
START_TEST(region_of_interest)
{
	struct capture_opts o = { .roi = true };
	char *roi_argv[] = { prog, "roi", NULL }, *argv[] = { prog, NULL };
	char out[256];
	struct counts c;

	if (!ready())
		return;
	snprintf(out, sizeof(out), "%s/roi.mtr.zst", dir);
	capture(out, "mmusim", roi_argv, &o);
	read_trace(out, TF_MTR, &c);
	ck_assert_uint_eq(c.roi_starts, 1);
	ck_assert_uint_ge(c.kind[R_LOAD] + c.kind[R_MODIFY], 1000);
	ck_assert_uint_ge(c.kind[R_STORE] + c.kind[R_MODIFY], 1000);
	ck_assert_uint_lt(c.kind[R_LOAD] + c.kind[R_MODIFY], 1020);
	ck_assert_uint_lt(c.kind[R_IFETCH], 20000);
	ck_assert_uint_ge(c.ev[EV_MMAP], 1); /* mappings are recorded outside the region too */

	o = (struct capture_opts){ .skip_insns = 1000, .max_insns = 500 };
	capture(out, "mmusim", argv, &o);
	read_trace(out, TF_MTR, &c);
	ck_assert_uint_eq(c.kind[R_IFETCH], 500);
	ck_assert_uint_eq(c.roi_starts, 1);
}
END_TEST

/* What a capture of tests/capture/deps.c MODE holds: loads, and DEP records by distance. */
struct deps {
	uint64_t loads, deps, d[512]; /* d[k]: DEP records of distance k (k < 512) */
	bool recorded;               /* trace_reader.deps */
};

static void capture_deps(const char *mode, struct deps *c)
{
	struct capture_opts o = { .roi = true };
	char bin[256], cmd[600], out[256];
	char *argv[] = { "setarch", "-R", bin, (char *)mode, NULL };
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	int n;

	snprintf(bin, sizeof(bin), "%s/deps", dir);
	if (access(bin, X_OK)) {
		snprintf(cmd, sizeof(cmd),
			 "cc -std=gnu11 -O1 -static -no-pie -Iinclude -o %s tests/capture/deps.c", bin);
		ck_assert_msg(!system(cmd), "cannot compile tests/capture/deps.c");
	}
	snprintf(out, sizeof(out), "%s/deps-%s.mtr", dir, mode);
	capture(out, "mmusim", system("setarch -R true 2>/dev/null") ? argv + 2 : argv, &o);
	memset(c, 0, sizeof(*c));
	r = trace_open(out, TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	c->recorded = r->deps;
	ck_assert_uint_eq(r->version, 6); /* version 4's DEP records, the mlock events of 5, the processes of 6 */
	while ((n = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			c->loads += b.recs[i].kind == R_LOAD || b.recs[i].kind == R_MODIFY;
			if (b.recs[i].kind == R_DEP) {
				c->deps++;
				ck_assert_uint_lt(b.recs[i].size, 512);
				c->d[b.recs[i].size]++;
			}
		}
	ck_assert_int_eq(n, 0);
	trace_close(r);
}

/*
 * Dependences (tests/capture/deps.c, whose comment derives each count): a
 * linked-list walk depends on the load before each step, an array sweep on
 * none; a pointer kept in a stack slot and one stored in an array of list
 * heads carry their dependence through memory, to the load that produced
 * them.
 */
START_TEST(dependences)
{
	struct deps c;

	if (!ready())
		return;
	capture_deps("list", &c);
	ck_assert(c.recorded);
	ck_assert_uint_eq(c.loads, 1000);
	ck_assert_uint_eq(c.deps, 999);
	ck_assert_uint_eq(c.d[1], 999);

	capture_deps("sweep", &c);
	ck_assert(c.recorded);
	ck_assert_uint_eq(c.loads, 1000);
	ck_assert_uint_eq(c.deps, 0);

	/* each step: the reload of the slot (no DEP), p->next (DEP 2: the last p->next) */
	capture_deps("spill", &c);
	ck_assert_uint_eq(c.loads, 2000);
	ck_assert_uint_eq(c.deps, 1000);
	ck_assert_uint_eq(c.d[1], 1); /* the first step: on the reload of the slot set before */
	ck_assert_uint_eq(c.d[2], 999);

	/* 200 steps of the walk (199 DEP 1), then heads[j]->v: DEP 201 + j */
	capture_deps("heads", &c);
	ck_assert_uint_eq(c.loads, 600);
	ck_assert_uint_eq(c.deps, 399);
	ck_assert_uint_eq(c.d[1], 199);
	for (int j = 0; j < 200; j++)
		ck_assert_msg(c.d[201 + j] == 1, "heads[%d]->v: %llu DEPs of distance %d", j,
			      (unsigned long long)c.d[201 + j], 201 + j);
}
END_TEST

/* A program exiting non-zero: no trace, unless --keep-on-failure. */
START_TEST(keep_on_failure)
{
	struct capture_opts o = { .tool_dir = NULL };
	char *argv[] = { "/bin/false", NULL };
	struct err e = { 0 };
	char out[256];
	struct counts c;

	if (!ready())
		return;
	snprintf(out, sizeof(out), "%s/false.mtr.zst", dir);
	o.tool_dir = vglib;
	ck_assert_int_eq(capture_run_opts(out, argv, &o, NULL, &e), -1);
	ck_assert_int_ne(access(out, F_OK), 0);
	o.keep_on_failure = true;
	ck_assert_int_eq(capture_run_opts(out, argv, &o, NULL, &e), 0);
	read_trace(out, TF_MTR, &c);
	ck_assert_uint_gt(c.kind[R_IFETCH], 10000);
}
END_TEST

/*
 * The initial mappings replayed: the reader sends them as events ahead of the
 * first reference (trace_mtr.c: mtr_send_maps()), so before the program's first
 * instruction the model has its image as file mappings at their offsets, the
 * stack as anonymous memory without VM_NOHUGEPAGE (the kernel's initial stack is
 * not a MAP_STACK mmap) and the heap as brk memory from its start; [vdso] and
 * [vvar] stay out. Then the trace replays without error up to the fork (a
 * replay of several processes is the machine's, to come).
 */
/* The records of @b from @from up to its first process event (a replay refuses them yet). */
static size_t upto_fork(const struct trace_batch *b, size_t from)
{
	size_t i = from;

	while (i < b->n && !(b->recs[i].kind == R_EVENT && b->ev[b->recs[i].size].kind >= EV_FORK))
		i++;
	return i;
}

START_TEST(initial_maps_replayed)
{
	char mm[256], msg[1024];
	char *argv[] = { prog, NULL };
	struct sim_config cfg;
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	struct sim *s;
	size_t want = 0;
	bool forked;
	int n;

	if (!ready())
		return;
	snprintf(mm, sizeof(mm), "%s/init.mtr", dir);
	capture(mm, "mmusim", argv, NULL);
	r = trace_open(mm, TF_MTR, &e);
	ck_assert_ptr_nonnull(r);
	for (size_t i = 0; i < r->nmaps; i++) {
		const char *nm = r->maps[i].name;

		if (strcmp(nm, "[vdso]") && strcmp(nm, "[vvar]") && strcmp(nm, "[vsyscall]") && r->maps[i].len)
			want += strcmp(nm, "[heap]") ? 1 : 2;
	}
	ck_assert_uint_gt(want, 3);
	config_defaults(&cfg);
	cfg.mode = MODE_THP;
	s = calloc(1, sizeof(*s));
	ck_assert_int_eq(sim_init(s, &cfg, &e), 0);
	s->k.trace_name = r->name;
	n = trace_next(r, &b, &e);
	ck_assert_int_gt(n, 0);
	/* the first batch opens with exactly the mappings, as initial events */
	for (size_t i = 0; i < want; i++) {
		ck_assert_uint_eq(b.recs[i].kind, R_EVENT);
		ck_assert(b.ev[b.recs[i].size].initial);
	}
	ck_assert(b.recs[want].kind != R_EVENT || !b.ev[b.recs[want].size].initial);
	{
		struct trace_batch head = { b.recs, want, b.ev, b.nev };

		ck_assert_int_eq(sim_run_batch(s, &head, &e), 0);
	}
	for (size_t i = 0; i < r->nmaps; i++) {
		const struct trace_map *m = &r->maps[i];
		const struct vma *v = vma_find(&s->k.mm->vmas, m->start);

		if (!strcmp(m->name, "[vdso]") || !strcmp(m->name, "[vvar]") || !m->len)
			continue;
		ck_assert_msg(v != NULL, "no VMA at 0x%llx (%s)", (unsigned long long)m->start, m->name);
		if (m->file) {
			ck_assert(v->flags & VM_FILE);
			ck_assert_uint_eq(v->pgoff, m->off >> 12);
		} else {
			ck_assert(!(v->flags & VM_FILE));
		}
		if (!strcmp(m->name, "[stack]"))
			ck_assert(!(v->flags & VM_NOHUGEPAGE));
		if (!strcmp(m->name, "[heap]")) {
			ck_assert(v->flags & VM_BRK);
			ck_assert_uint_eq(s->k.mm->brk_start, m->start);
		}
	}
	{
		struct trace_batch rest = { b.recs + want, upto_fork(&b, want) - want, b.ev, b.nev };

		ck_assert_int_eq(sim_run_batch(s, &rest, &e), 0);
		forked = rest.n + want < (size_t)n;
	}
	while (!forked && (n = trace_next(r, &b, &e)) > 0) {
		b.n = upto_fork(&b, 0);
		forked = b.n < (size_t)n;
		ck_assert_int_eq(sim_run_batch(s, &b, &e), 0);
	}
	ck_assert(forked); /* maps.c forks */
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(n > 0, "%s", msg);
	ck_assert_uint_gt(s->st.nr_file_pages, 0);
	ck_assert_uint_eq(s->st.l1[SIDE_I].hits[PS_2M], 0); /* text is file-backed: no anon THP */
	sim_destroy(s);
	free(s);
	trace_close(r);
}
END_TEST

/*
 * Version 5: each mmap of a file records its filesystem (fstatfs() f_type) and
 * the pages it held (st_blocks / 8), and the mlock family its calls. The
 * program is tests/native/steps.c: memfd-fresh maps a memfd of 1 MiB that is
 * all holes three times, after reading (filling) it through the first; tmpfs
 * maps a file of /dev/shm written whole; mlockall calls mlockall() twice and
 * munlockall() once.
 */
static void capture_steps(const char *c, struct os_event *mm, size_t *nmm, uint64_t ev[EV_NR])
{
	struct capture_opts o = { 0 };
	char bin[256], cmd[600], out[256], sh[700];
	char *argv[] = { "/bin/sh", "-c", sh, NULL }; /* (the trace follows the exec) */
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	int n;

	snprintf(bin, sizeof(bin), "%s/steps", dir);
	snprintf(sh, sizeof(sh), "exec %s %s %s >/dev/null", bin, c, dir);
	if (access(bin, X_OK)) {
		snprintf(cmd, sizeof(cmd), "cc -std=gnu11 -O1 -static -no-pie -o %s tests/native/steps.c", bin);
		ck_assert_msg(!system(cmd), "cannot compile tests/native/steps.c");
	}
	snprintf(out, sizeof(out), "%s/steps-%s.mtr", dir, c);
	capture(out, "mmusim", argv, &o);
	r = trace_open(out, TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->version, 6);
	*nmm = 0;
	memset(ev, 0, EV_NR * sizeof(*ev));
	while ((n = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			const struct os_event *x = &b.ev[b.recs[i].size];

			if (b.recs[i].kind != R_EVENT || x->initial)
				continue;
			ev[x->kind]++;
			if (x->kind == EV_MMAP && x->file && *nmm < 8)
				mm[(*nmm)++] = *x;
		}
	ck_assert_int_eq(n, 0);
	trace_close(r);
}

START_TEST(filesystem_and_mlock)
{
	struct os_event mm[8];
	uint64_t ev[EV_NR];
	size_t n;

	if (!ready())
		return;
	capture_steps("memfd-fresh", mm, &n, ev);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(mm[i].fs_magic, TMPFS_MAGIC_);
	ck_assert_uint_eq(mm[0].fs_pages, 0);   /* all holes */
	ck_assert_uint_eq(mm[1].fs_pages, 256); /* filled by the first mapping's reads */
	ck_assert_uint_eq(mm[2].fs_pages, 256);
	capture_steps("tmpfs", mm, &n, ev);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(mm[0].fs_magic, TMPFS_MAGIC_);
	ck_assert_uint_eq(mm[0].fs_pages, 256);
	capture_steps("mlockall", mm, &n, ev);
	ck_assert_uint_eq(ev[EV_MLOCKALL], 2);
	ck_assert_uint_eq(ev[EV_MUNLOCKALL], 1);
	ck_assert_uint_eq(ev[EV_MLOCK] + ev[EV_MUNLOCK], 0);
}
END_TEST

/*
 * tests/capture/forks.c, three processes in one file (mtr version 6): each
 * process's own events in its order, its markers in its stream, the markers
 * in causal order across processes (marker 1 in the child is after marker 0
 * and before marker 2 of the parent, which waited for the child's pipe
 * write), the exec'd ./pages with its own initial mappings.
 */
START_TEST(forks_in_one_file)
{
	char out[256], pg[256], fk[256], cmd[700], seq[3][200] = { "", "", "" }, msg[1024];
	char *argv[] = { fk, pg, (char *)"16", NULL };
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;
	uint64_t cur = 0, marker_proc[3] = { 9, 9, 9 }, initial[3] = { 0 };
	int n;

	if (!ready())
		return;
	snprintf(fk, sizeof(fk), "%s/forks", dir);
	snprintf(pg, sizeof(pg), "%s/pages", dir);
	snprintf(cmd, sizeof(cmd), "cc -O1 -o %s tests/capture/forks.c && cc -O1 -o %s tests/capture/pages.c",
		 fk, pg);
	ck_assert_msg(!system(cmd), "cannot compile tests/capture/forks.c, pages.c");
	snprintf(out, sizeof(out), "%s/forks.mtr.zst", dir);
	capture(out, "mmusim", argv, NULL);
	r = trace_open(out, TF_MTR, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->version, 6);
	while ((n = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			const struct os_event *o;
			char *q;

			if (b.recs[i].kind != R_EVENT)
				continue;
			o = &b.ev[b.recs[i].size];
			if (o->kind == EV_SWITCH) {
				cur = o->addr;
				continue;
			}
			ck_assert_uint_lt(cur, 3);
			if (o->initial) {
				initial[cur]++;
				continue;
			}
			if (o->kind < EV_MARKER)
				continue;
			q = seq[cur] + strlen(seq[cur]);
			if (o->kind == EV_MARKER) {
				ck_assert_uint_lt(o->addr, 3);
				marker_proc[o->addr] = cur;
				sprintf(q, "marker%llu ", (unsigned long long)o->addr);
			} else if (o->kind == EV_FORK) {
				sprintf(q, "fork%llu ", (unsigned long long)o->addr);
			} else {
				sprintf(q, "%s ", ev_kind_name[o->kind]);
			}
		}
	err_format(&e, msg, sizeof(msg));
	ck_assert_msg(n == 0, "%s", msg);
	ck_assert_uint_eq(r->processes, 3);
	trace_close(r);
	ck_assert_str_eq(seq[0], "prctl marker0 fork1 marker2 fork2 exit ");
	ck_assert_str_eq(seq[1], "marker1 exit ");
	ck_assert_str_eq(seq[2], "exec exit ");
	/* markers are numbered in file order: 0, 1, 2 are the causal order */
	ck_assert_uint_eq(marker_proc[0], 0);
	ck_assert_uint_eq(marker_proc[1], 1);
	ck_assert_uint_eq(marker_proc[2], 0);
	ck_assert_uint_gt(initial[0], 3);
	ck_assert_uint_eq(initial[1], 0); /* a forked child has its parent's address space */
	ck_assert_uint_gt(initial[2], 3); /* the exec'd image's own */
}
END_TEST

static Suite *capture_tool_suite(void)
{
	Suite *s = suite_create("capture_tool");
	TCase *tc = tcase_create("capture_tool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, same_counts_as_lackey);
	tcase_add_test(tc, version2_records);
	tcase_add_test(tc, initial_maps_replayed);
	tcase_add_test(tc, region_of_interest);
	tcase_add_test(tc, keep_on_failure);
	tcase_add_test(tc, dependences);
	tcase_add_test(tc, filesystem_and_mlock);
	tcase_add_test(tc, forks_in_one_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(capture_tool_suite());
}
