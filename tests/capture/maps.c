/*
 * maps.c - a small deterministic program for tests/check_capture_tool.c: the
 * same references every run, one of each mapping system call, a file
 * mapping, two markers (getppid(): MARKER records in the tool's trace) and a
 * forked child; with "thread", a second thread too (the
 * scheduling of two threads makes the counts vary by a few references from
 * run to run); with "roi", a region of interest.
 *
 * With an argument "roi" it records only the loop between MMUSIM_ROI_BEGIN()
 * and MMUSIM_ROI_END(): 1000 iterations of one load and one store (the
 * compiler keeps them: the array is volatile).
 */
#define _GNU_SOURCE /* mremap */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmusim_roi.h"

static volatile long sink[1000];

static void *worker(void *arg)
{
	for (int i = 0; i < 1000; i++)
		sink[i] += (long)arg;
	return NULL;
}

int main(int argc, char **argv)
{
	size_t len = 1 << 20;
	char *p, *q, *f;
	pthread_t t;
	pid_t pid;
	int fd;

	if (argc > 1 && !strcmp(argv[1], "roi")) {
		MMUSIM_ROI_BEGIN();
		for (int i = 0; i < 1000; i++)
			sink[i] = sink[i] + 1;
		MMUSIM_ROI_END();
		return 0;
	}
	getppid();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return 1;
	mprotect(q, 4096, PROT_READ);
	madvise(q + 4096, 4096, MADV_DONTNEED);
	munmap(q, 2 * len);
	getppid();
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return 1;
	f = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f == MAP_FAILED || f[1] != 'E')
		return 1;
	munmap(f, 4096);
	close(fd);
	free(malloc(200000)); /* brk or mmap, the same each run */
	if (argc > 1 && !strcmp(argv[1], "thread") &&
	    (pthread_create(&t, NULL, worker, (void *)1L) || pthread_join(t, NULL)))
		return 1;
	pid = fork();
	if (pid == 0) {
		worker((void *)2L);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 1;
	return 0;
}
