/*
 * procs.c - two-process programs whose memory behaviour the kernel reports,
 * for the real-kernel comparison of several processes (as steps.c is for one):
 * run natively, each process prints at each of its markers its own minor and
 * major faults (getrusage(RUSAGE_SELF)), Rss and AnonHugePages
 * (/proc/self/smaps_rollup) and the THP events of /proc/vmstat (system-wide);
 * captured by mmusim's Valgrind tool (which follows the fork), each marker (a
 * getppid() call) is a MARKER record in that process's stream of the one mtr
 * version 6 file.
 *
 *   procs CASE
 *
 * The two processes take turns, handing a token over two pipes (a pipe write
 * and read are system calls: the capture's file is in this order too), so
 * the markers have one global order, the same natively and in the capture:
 * the token carries the number of markers taken so far, and each marker's
 * global index is printed with it. The cases run on a stack of their own at a
 * fixed address (main()). The child lives until the parent's case
 * is over (it waits for the end of a third pipe, which the parent closes
 * then): every step of the parent sees the child's mappings, natively as in
 * the capture, whatever the two exits' timing. A process measures as steps.c does
 * (static buffers, a warm stack: the measurement faults nothing), and prints
 * after its last marker; the child prints first (the parent waits for it).
 *
 * Output: first the machine's THP state, read (never assumed), one line each
 *   # thp enabled=<...> defrag=<...> use_zero_page=<N> shmem_enabled=<...> max_ptes_shared=<N>
 * then a line per marker of each process:
 *   proc P marker G minflt N majflt N rss_kb N anon_huge_kb N thp_fault_alloc N ...
 * P: 0 the program, 1 its forked child (the capture's process ids: 1 is the
 * first fork's); G: the marker's global index (0, 1, ...: its MARKER record's
 * index in the capture); the vmstat fields are measure.h's (vm_keys), in order.
 * The child's lines come after one more,
 *   proc 1 forked-after N
 * N: the markers taken (by the parent) before the fork.
 *
 * Cases (regions at 2 MiB-aligned hints, as steps.c):
 *   fork-write   the parent writes 4 MiB under MADV_HUGEPAGE (2 THPs), forks; the
 *                child writes the first 1 MiB (half of a THP shared with the
 *                parent: the PMD is split and 4 KiB pages copied, Linux 5.8+);
 *                then the parent writes all 4 MiB
 *   fork-collapse the parent writes 4 MiB, not advised (4 KiB pages where THP is
 *                "madvise"; MADV_HUGEPAGE would register the mm with khugepaged,
 *                which scans it at once in the model, whose list starts empty,
 *                and after its current sleep natively), forks; the child MADV_COLLAPSEs the
 *                region (its pages shared with the parent), then writes 1 MiB;
 *                then the parent writes 1 MiB
 *   thp-turns    each process maps its own 6 MiB under MADV_HUGEPAGE after the
 *                fork; they fault one 2 MiB THP in turn, three turns each
 *   shared-anon  4 MiB MAP_SHARED|MAP_ANONYMOUS mapped before the fork: the parent
 *                writes the first half, the child the second, then each reads all
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "measure.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define MIB (1UL << 20)
#define PG 4096UL
#define MAXMARK 32
#define HINT ((char *)0x200000000000UL) /* 32 TiB: free natively and under Valgrind */
#define HINT2 ((char *)0x200040000000UL)
#define STACK ((char *)0x200080000000UL) /* the cases' stack (see main()) */
#define STACK_LEN MIB

struct sample {
	int global;
	struct figs f;
};

static struct sample smp[MAXMARK];
static int nsmp, proc_id, token, fork_token = -1; /* token: markers taken so far, by either process */
static int to_child[2], to_parent[2], hold[2];

static void __attribute__((noinline)) marker(void)
{
	getppid();
	if (nsmp < MAXMARK) {
		smp[nsmp].global = token;
		measure(&smp[nsmp++].f);
	}
	token++;
}

static void __attribute__((noinline)) warm_stack(void)
{
	volatile char pad[64 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 512)
		pad[i] = 0;
}

static void warm(void)
{
	struct figs scratch;

	memset(rbuf, 1, sizeof(rbuf));
	memset(smp, 0, sizeof(smp));
	warm_stack();
	measure(&scratch);
	measure(&scratch);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Hand the token to the other process and wait until it comes back. */
static void pass(void)
{
	int out = proc_id ? to_parent[1] : to_child[1], in = proc_id ? to_child[0] : to_parent[0];

	if (write(out, &token, sizeof(token)) != sizeof(token) ||
	    read(in, &token, sizeof(token)) != sizeof(token))
		die("pipe");
}

/* The last hand-over: give the token, do not wait. */
static void pass_last(void)
{
	int out = proc_id ? to_parent[1] : to_child[1];

	if (write(out, &token, sizeof(token)) != sizeof(token))
		die("pipe");
}

static void wait_token(void)
{
	if (read(proc_id ? to_child[0] : to_parent[0], &token, sizeof(token)) != sizeof(token))
		die("pipe");
}

static char *map(char *hint, size_t len, int flags)
{
	char *p = mmap(hint, len, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (p != hint) {
		fprintf(stderr, "mmap: hint %p not honoured (%p)\n", (void *)hint, (void *)p);
		exit(1);
	}
	return p;
}

static void advise(char *p, size_t len, int advice)
{
	if (madvise(p, len, advice))
		die("madvise");
}

static void write_pages(volatile char *p, size_t len)
{
	for (size_t i = 0; i < len; i += PG)
		p[i] = 1;
}

static long read_pages(volatile char *p, size_t len)
{
	long sum = 0;

	for (size_t i = 0; i < len; i += PG)
		sum += p[i];
	return sum;
}

/* Fork; in the child proc_id 1. The parent keeps the token first. */
static int split(void)
{
	pid_t c = fork();

	if (c < 0)
		die("fork");
	proc_id = c == 0;
	if (c == 0) {
		struct figs scratch;

		nsmp = 0; /* the parent's samples are its own */
		close(hold[1]); /* hold[0] reads the end when the parent closes its own */
		/*
		 * The child's measurement warm again: its first would refault the text
		 * and .rodata that dup_mmap() left unmapped (file VMAs without an
		 * anon_vma) after its getrusage() and before its smaps_rollup read, so
		 * that marker's Rss would count pages its minflt does not
		 */
		measure(&scratch);
	}
	fork_token = token;
	return c;
}

static void case_fork_write(void)
{
	char *p = map(HINT, 4 * MIB, MAP_PRIVATE | MAP_ANONYMOUS);

	advise(p, 4 * MIB, MADV_HUGEPAGE);
	write_pages(p, 4 * MIB);
	marker(); /* 0: the parent's 2 THPs */
	if (split() == 0) {
		wait_token();
		marker(); /* 1 */
		write_pages(p, MIB);
		marker(); /* 2: half of a shared THP written */
		pass_last();
		return;
	}
	pass();
	marker(); /* 3 */
	write_pages(p, 4 * MIB);
	marker(); /* 4 */
}

static void case_fork_collapse(void)
{
	char *p = map(HINT, 4 * MIB, MAP_PRIVATE | MAP_ANONYMOUS);

	write_pages(p, 4 * MIB); /* no advice: 4 KiB pages where THP is "madvise" */
	marker(); /* 0 */
	if (split() == 0) {
		wait_token();
		marker(); /* 1 */
		if (madvise(p, 4 * MIB, MADV_COLLAPSE))
			perror("madvise(MADV_COLLAPSE)"); /* a result too: the marker after shows it */
		marker(); /* 2 */
		write_pages(p, MIB);
		marker(); /* 3 */
		pass_last();
		return;
	}
	pass();
	marker(); /* 4 */
	write_pages(p, MIB);
	marker(); /* 5 */
}

static void case_thp_turns(void)
{
	char *p;
	int child = split() == 0;

	p = map(child ? HINT2 : HINT, 6 * MIB, MAP_PRIVATE | MAP_ANONYMOUS);
	advise(p, 6 * MIB, MADV_HUGEPAGE);
	if (child)
		wait_token();
	for (int t = 0; t < 3; t++) {
		marker();
		write_pages(p + t * 2 * MIB, 2 * MIB);
		marker();
		if (t < 2 || !child)
			pass();
		else
			pass_last();
	}
	if (!child)
		marker(); /* the last: after the child's third turn */
}

static void case_shared_anon(void)
{
	char *p = map(HINT, 4 * MIB, MAP_SHARED | MAP_ANONYMOUS);
	long s = 0;

	marker(); /* 0 */
	if (split() == 0) {
		wait_token();
		marker(); /* 2 */
		write_pages(p + 2 * MIB, 2 * MIB);
		marker(); /* 3 */
		pass();
		s += read_pages(p, 4 * MIB);
		marker(); /* 5 */
		pass_last();
		(void)s;
		return;
	}
	write_pages(p, 2 * MIB);
	marker(); /* 1 */
	pass();
	s += read_pages(p, 4 * MIB);
	marker(); /* 4 */
	pass();
	marker(); /* 6 */
	(void)s;
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "fork-write", case_fork_write },
	{ "fork-collapse", case_fork_collapse },
	{ "thp-turns", case_thp_turns },
	{ "shared-anon", case_shared_anon },
};

/* The first line of @path, the selected [word] if there is one, into @out. */
static void sysfs(const char *path, char *out, size_t n)
{
	long len = slurp(path);
	char *a = len > 0 ? strchr(rbuf, '[') : NULL, *b = a ? strchr(a, ']') : NULL;

	if (len <= 0)
		snprintf(out, n, "?");
	else if (a && b)
		snprintf(out, n, "%.*s", (int)(b - a - 1), a + 1);
	else
		snprintf(out, n, "%.*s", (int)strcspn(rbuf, "\n"), rbuf);
}

static void machine_state(void)
{
	char en[64], df[64], zp[64], sh[64], ms[64];

	sysfs("/sys/kernel/mm/transparent_hugepage/enabled", en, sizeof(en));
	sysfs("/sys/kernel/mm/transparent_hugepage/defrag", df, sizeof(df));
	sysfs("/sys/kernel/mm/transparent_hugepage/use_zero_page", zp, sizeof(zp));
	sysfs("/sys/kernel/mm/transparent_hugepage/shmem_enabled", sh, sizeof(sh));
	sysfs("/sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_shared", ms, sizeof(ms));
	printf("# thp enabled=%s defrag=%s use_zero_page=%s shmem_enabled=%s max_ptes_shared=%s\n",
	       en, df, zp, sh, ms);
	fflush(stdout);
}

/*
 * Natively, unmap [vdso] and [vvar*]: Valgrind gives the program none (no
 * AT_SYSINFO_EHDR), so the capture has no such mapping, while natively glibc's
 * start-up reads the vdso's ELF header (a page of Rss the parent has and a
 * forked child does not: dup_mmap() leaves the special mapping to refault).
 * The cases call nothing the vdso serves.
 */
static unsigned long hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

/* (no sscanf(), no strstr(): what only the native run executes touches no text the capture's does not) */
static void unmap_vdso(void)
{
	long n;
	char *l, *e;

	if (!getauxval(AT_SYSINFO_EHDR) || (n = slurp("/proc/self/maps")) <= 0)
		return;
	for (l = rbuf; l < rbuf + n; l = e + 1) {
		const char *p = l, *b;
		unsigned long lo, hi;

		e = strchr(l, '\n');
		if (!e)
			break;
		*e = 0;
		b = strchr(l, '[');
		lo = hex(&p);
		p++;
		hi = hex(&p);
		if (b && (!memcmp(b, "[vdso]", 6) || !memcmp(b, "[vvar", 5)) && munmap((void *)lo, hi - lo))
			die("munmap [vdso]");
	}
}

static ucontext_t main_uc, case_uc;
static size_t case_no;

static void body(void)
{
	warm();
	cases[case_no].fn();
}

int main(int argc, char **argv)
{
	size_t i;
	int st;
	char *stk;

	if (argc != 2) {
		fprintf(stderr, "usage: procs CASE\n");
		return 2;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name))
			break;
	if (i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "procs: unknown case '%s'\n", argv[1]);
		return 2;
	}
	unmap_vdso();
	machine_state();
	if (pipe(to_child) || pipe(to_parent) || pipe(hold))
		die("pipe");
	/*
	 * The cases run on a stack of their own at a fixed address: after the fork
	 * each process copies the stack pages it writes, and how many depends on where
	 * the frames fall in them; the process's own stack starts where its
	 * environment ends (natively) or where Valgrind puts it (in the capture).
	 */
	stk = map(STACK, STACK_LEN, MAP_PRIVATE | MAP_ANONYMOUS);
	case_no = i;
	if (getcontext(&case_uc))
		die("getcontext");
	case_uc.uc_stack.ss_sp = stk;
	case_uc.uc_stack.ss_size = STACK_LEN;
	case_uc.uc_link = &main_uc;
	makecontext(&case_uc, body, 0);
	if (swapcontext(&main_uc, &case_uc))
		die("swapcontext");
	if (proc_id == 1) {
		char c;

		if (read(hold[0], &c, 1) != 0)
			die("hold");
	} else {
		close(hold[1]);
		if (wait(&st) > 0 && (!WIFEXITED(st) || WEXITSTATUS(st)))
			return 1;
	}
	if (proc_id == 1)
		printf("proc 1 forked-after %d\n", fork_token);
	for (int k = 0; k < nsmp; k++) {
		printf("proc %d marker %d minflt %ld majflt %ld rss_kb %ld anon_huge_kb %ld", proc_id,
		       smp[k].global, smp[k].f.minflt, smp[k].f.majflt, smp[k].f.rss_kb, smp[k].f.ahp_kb);
		for (size_t j = 0; j < NVM; j++)
			printf(" %s %ld", vm_keys[j], smp[k].f.vm[j]);
		printf("\n");
	}
	fflush(stdout);
	return 0;
}
