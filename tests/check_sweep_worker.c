/*
 * check_sweep_worker.c - what a sweep does that one run does not, kept cheap:
 * a lone task runs in the sweep's own process (no fork), several tasks in
 * forked workers, each status taken as a worker's exit status; a simulated
 * machine's big arrays (its swap map, its folios, its caches' tags) are left
 * untouched by sim_init() even after a large block was freed (as a sweep's
 * process frees its trace probe's buffers, which raises glibc's mmap
 * threshold: calloc() then cleared them byte by byte).
 */
#include <check.h>
#include "check_run.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "sim.h"
#include "sweep_run.h"

static volatile sig_atomic_t no_stop;
static pid_t worker_pid; /* set by the mock worker: visible here only if it ran in this process */
static unsigned worker_calls, failed_calls;
static int worker_status;

static int mock_worker(void *arg, const struct sweep_task *t, unsigned threads)
{
	(void)arg;
	(void)t;
	(void)threads;
	worker_pid = getpid();
	worker_calls++;
	return worker_status;
}

static void mock_failed(void *arg, const struct sweep_task *t)
{
	(void)arg;
	(void)t;
	failed_calls++;
}

/* A plan of @n tasks of one point each. */
static void make_plan(struct sweep_plan *plan, size_t n)
{
	memset(plan, 0, sizeof(*plan));
	plan->tasks = calloc(n, sizeof(*plan->tasks));
	ck_assert_ptr_nonnull(plan->tasks);
	plan->ntasks = plan->cap = plan->total = n;
	for (size_t i = 0; i < n; i++) {
		plan->tasks[i].pts = malloc(sizeof(size_t));
		ck_assert_ptr_nonnull(plan->tasks[i].pts);
		plan->tasks[i].pts[0] = i;
		plan->tasks[i].n = 1;
	}
}

static int exec_plan(size_t ntasks, int status, struct sweep_plan *plan)
{
	struct sweep_exec_opts o = { .jobs = 2, .threads = 2, .stop = &no_stop, .worker = mock_worker,
				     .failed = mock_failed };
	struct err e = { 0 };

	worker_pid = 0;
	worker_calls = failed_calls = 0;
	worker_status = status;
	make_plan(plan, ntasks);
	return sweep_exec(plan, &o, &e);
}

/* One task: run here (the mock's writes are seen), its status as an exit status. */
START_TEST(lone_task_runs_in_process)
{
	struct sweep_plan plan;

	ck_assert_int_eq(exec_plan(1, 0, &plan), 0);
	ck_assert_int_eq(worker_pid, getpid());
	ck_assert_uint_eq(worker_calls, 1);
	ck_assert_uint_eq(plan.done, 1);
	ck_assert_uint_eq(failed_calls, 0);
	sweep_plan_free(&plan);
	/* a failing worker: its status, the failure said once, the point not done */
	ck_assert_int_eq(exec_plan(1, 2, &plan), 2);
	ck_assert_uint_eq(failed_calls, 1);
	ck_assert_uint_eq(plan.done, 0);
	sweep_plan_free(&plan);
	/* an interrupted worker (130): the sweep's 130, no failure said */
	ck_assert_int_eq(exec_plan(1, 130, &plan), 130);
	ck_assert_uint_eq(failed_calls, 0);
	sweep_plan_free(&plan);
}
END_TEST

/* Several tasks: forked workers (nothing they write is seen here), all done. */
START_TEST(tasks_run_in_forked_workers)
{
	struct sweep_plan plan;

	ck_assert_int_eq(exec_plan(3, 0, &plan), 0);
	ck_assert_int_eq(worker_pid, 0);
	ck_assert_uint_eq(worker_calls, 0);
	ck_assert_uint_eq(plan.done, 3);
	sweep_plan_free(&plan);
	ck_assert_int_eq(exec_plan(3, 2, &plan), 2);
	ck_assert_uint_eq(failed_calls, 1);
	sweep_plan_free(&plan);
}
END_TEST

/* Resident pages among the whole pages of [p, p + len). */
static size_t resident(const void *p, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	uintptr_t end = ((uintptr_t)p + len) & ~(uintptr_t)(pg - 1);
	size_t n = 0;

	if (end <= a)
		return 0;
	unsigned char *v = malloc((end - a) / (uintptr_t)pg);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(mincore((void *)a, end - a, v), 0);
	for (size_t i = 0; i < (end - a) / (uintptr_t)pg; i++)
		n += v[i] & 1;
	free(v);
	return n;
}

/*
 * After an 8 MiB block is freed (glibc's mmap threshold rises to 8 MiB), a
 * machine of the default config: its LLC's tags (1 MiB) and its folio array
 * untouched, its swap map touched only where the swap header's slot 0 sits.
 */
START_TEST(machine_arrays_untouched_after_large_free)
{
	size_t big = 8u << 20;
	unsigned char *b = malloc(big);
	struct sim_config c;
	struct sim s;
	struct err e = { 0 };
	const struct cache_array *llc;

	ck_assert_ptr_nonnull(b);
	memset(b, 1, big);
	free(b);
	config_defaults(&c);
	ck_assert_msg(config_validate(&c, "t", &e) == 0, "%s", e.msg);
	ck_assert_msg(sim_init(&s, &c, &e) == 0, "%s", e.msg);
	llc = &s.mmu.cache.lv[CL_LLC];
	ck_assert(llc->present);
	ck_assert_uint_eq(resident(llc->tag, (size_t)llc->sets * llc->ways * sizeof(*llc->tag)), 0);
	ck_assert_uint_eq(resident(s.k.thp.folio, ((s.k.buddy.nr_pages >> 9) + 1) * sizeof(*s.k.thp.folio)), 0);
	ck_assert_uint_gt(s.k.swap.nr_slots, 64 * 4096);
	/* slot 0's word is written at init: its page, no other */
	ck_assert_uint_eq(resident(s.k.swap.used, s.k.swap.nr_slots / 64 * sizeof(*s.k.swap.used)), 1);
	sim_destroy(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sweep_worker");
	TCase *tc = tcase_create("sweep_worker");

	tcase_add_test(tc, lone_task_runs_in_process);
	tcase_add_test(tc, tasks_run_in_forked_workers);
	tcase_add_test(tc, machine_arrays_untouched_after_large_free);
	suite_add_tcase(s, tc);
	return check_run(s);
}
