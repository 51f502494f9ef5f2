/*
 * check_common.h - the scenario fixture the kernel-model suites share
 * (check_thp, check_khugepaged, check_reclaim): a small trace in Valgrind's real
 * lackey + --trace-syscalls syntax replayed on the default machine (256 MiB, THP
 * mode) with --set overrides, one record at a time, with every invariant checked
 * after every check_every-th record and at the end. Header-only static helpers:
 * each suite has its own S.
 */
#ifndef MMUSIM_CHECK_COMMON_H
#define MMUSIM_CHECK_COMMON_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"
#include "trace.h"

static struct sim *S;
static unsigned check_every = 1; /* invariants after every Nth record */

/* Apply @ev to S as the replay does (it must be taken), every invariant after it. */
static inline void event(struct os_event ev)
{
	ck_assert_msg(sim_event(S, &ev) == 0, "%s", S->k.err.msg);
	sim_check_invariants(S);
}

/* A context switch to process @id (EV_SWITCH). */
static inline void to(uint64_t id)
{
	event((struct os_event){ .kind = EV_SWITCH, .addr = id });
}

/*
 * Replay the lackey text @trace on @s one record at a time, every invariant after
 * every check_every-th record and at the end. 0, or -1 with @e at the first
 * record the simulator refuses (bad input for it; nothing after it is replayed).
 */
static inline int replay_trace(struct sim *s, const char *trace, struct err *e)
{
	char path[] = "/tmp/check_scenario_XXXXXX";
	int fd = mkstemp(path), n, rc = 0;
	struct trace_reader *r;
	struct trace_batch b;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, trace, strlen(trace)), (ssize_t)strlen(trace));
	close(fd);
	r = trace_open(path, TF_LACKEY, e);
	ck_assert_msg(r != NULL, "%s", e->msg);
	s->k.trace_name = r->name;
	while (!rc && (n = trace_next(r, &b, e)) > 0) {
		for (size_t i = 0; i < b.n && !rc; i++) {
			struct trace_batch one = { &b.recs[i], 1, b.ev, b.nev };

			rc = sim_run_batch(s, &one, e);
			if (!rc && s->k.rec_no % check_every == 0)
				sim_check_invariants(s);
		}
	}
	if (!rc) {
		ck_assert_msg(n == 0, "%s", e->msg);
		sim_check_invariants(s);
	}
	trace_close(r);
	unlink(path);
	return rc;
}

/* Run the lackey text @trace on the default machine with --set overrides (NULL-ended). */
static inline void run(const char *trace, ...)
{
	struct sim_config c;
	struct err e = { 0 };
	const char *set;
	va_list ap;

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	va_start(ap, trace);
	while ((set = va_arg(ap, const char *)))
		ck_assert_msg(config_set(&c, set, &e) == 0, "%s: %s", set, e.msg);
	va_end(ap);
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
	ck_assert_msg(replay_trace(S, trace, &e) == 0, "%s", e.msg);
	sim_finish(S);
}

/* One access of @kind (R_LOAD, R_STORE) per page of [@from, @to), replayed now on S;
 * the invariants checked after. */
static inline void touch(vaddr_t from, vaddr_t to, uint32_t kind)
{
	struct err e = { 0 };

	for (vaddr_t a = from; a < to; a += 4096) {
		struct trace_rec r = { a + 16, 8, kind };
		struct trace_batch b = { &r, 1, NULL, 0 };

		ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	}
	sim_check_invariants(S);
}

static inline void done(void)
{
	sim_destroy(S);
	free(S);
}

#define MMAP_4M "SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n"
#define MADV_HUGE_4M "SYSCALL[7,1](28) sys_madvise ( 0x40000000, 4194304, 14 ) --> [pre-success] Success(0x0)\n"

/* A trace that maps @mb MiB at 0x80000000 and stores to every @step-th byte of it,
 * then touches @again (0: nothing). */
static inline char *fill_trace(unsigned mb, unsigned step, unsigned long again, const char *extra)
{
	size_t cap = 8 << 20, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x80000000)\n%s",
			      mb << 20, extra);
	for (unsigned long off = 0; off < (unsigned long)mb << 20; off += step)
		n += (size_t)snprintf(t + n, cap - n, " S %lx,8\n", 0x80000000UL + off);
	if (again)
		n += (size_t)snprintf(t + n, cap - n, " L %lx,8\n", again);
	return t;
}

#endif
