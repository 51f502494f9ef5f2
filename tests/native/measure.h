/*
 * measure.h - the measurement at a marker, shared by the native programs that
 * tests/native.sh and tests/native_procs.sh replay (steps.c, procs.c): the
 * process's minor and major faults (getrusage), Rss and AnonHugePages
 * (/proc/self/smaps_rollup) and the vmstat events of vm_keys. It must not change
 * what it measures: it allocates nothing, uses no stdio, and reads each file with
 * raw calls into one static buffer. Static functions: each program is one file.
 */
#ifndef MMUSIM_NATIVE_MEASURE_H
#define MMUSIM_NATIVE_MEASURE_H

#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *const vm_keys[] = { "thp_fault_alloc", "thp_fault_fallback", "thp_split_pmd",
				       "thp_collapse_alloc", "thp_zero_page_alloc", "thp_split_page",
				       "pglazyfree", "pglazyfreed", "thp_deferred_split_page" };
#define NVM (sizeof(vm_keys) / sizeof(vm_keys[0]))

/* The figures at one marker. */
struct figs {
	long minflt, majflt, rss_kb, ahp_kb;
	long vm[NVM];
};

static char rbuf[1 << 16];

/* Read @path whole into rbuf with raw calls; the length, or -1. */
static long slurp(const char *path)
{
	long n = 0, r;
	int fd;

	/*
	 * The path read here first: a forked child's first open() would otherwise
	 * read it from a .rodata page only the kernel touches (strncpy_from_user():
	 * a fault the capture cannot see, after dup_mmap() left that file VMA to
	 * refault)
	 */
	if (!strlen(*(const char *volatile *)&path))
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	while (n < (long)sizeof(rbuf) - 1 && (r = read(fd, rbuf + n, sizeof(rbuf) - 1 - n)) > 0)
		n += r;
	close(fd);
	rbuf[n] = 0;
	return n;
}

/* The number after "@key" at the start of a line of rbuf (0 if absent). */
static long field(const char *key, long len)
{
	size_t kl = strlen(key);

	for (long i = 0; i + (long)kl < len; i++)
		if ((i == 0 || rbuf[i - 1] == '\n') && !memcmp(rbuf + i, key, kl) &&
		    (rbuf[i + kl] == ' ' || rbuf[i + kl] == ':' || rbuf[i + kl] == '\t')) {
			long v = 0, j = i + (long)kl;

			while (j < len && (rbuf[j] < '0' || rbuf[j] > '9') && rbuf[j] != '\n')
				j++;
			while (j < len && rbuf[j] >= '0' && rbuf[j] <= '9')
				v = v * 10 + (rbuf[j++] - '0');
			return v;
		}
	return 0;
}

static void measure(struct figs *s)
{
	struct rusage ru;
	long n;

	getrusage(RUSAGE_SELF, &ru);
	s->minflt = ru.ru_minflt;
	s->majflt = ru.ru_majflt;
	n = slurp("/proc/self/smaps_rollup");
	s->rss_kb = field("Rss", n);
	s->ahp_kb = field("AnonHugePages", n);
	n = slurp("/proc/vmstat");
	for (size_t i = 0; i < NVM; i++)
		s->vm[i] = field(vm_keys[i], n);
}

#endif
