/*
 * fork_mmap.c - after a fork, the child and then the parent each map 4 MiB of
 * anonymous memory without a hint and write every page of it, a marker
 * (getppid()) after each; then the child writes its pages again (no fault) and
 * sets a last marker. Under Valgrind both processes' mappings come back at
 * the same trace address (their address-space managers were one at the fork);
 * replayed with os.layout: kernel each must land in its own process's address
 * space, where Linux would put it (tests/e2e_capture.sh).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEN (4UL << 20)

static char *map_and_write(void)
{
	char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	for (unsigned long i = 0; i < LEN; i += 4096)
		p[i] = 1;
	getppid();
	return p;
}

int main(void)
{
	int go[2], done[2];
	char c = 0;
	pid_t pid;

	if (pipe(go) || pipe(done))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char *p = map_and_write();

		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		for (unsigned long i = 0; i < LEN; i += 4096) /* its own pages again: no fault */
			p[i] = 2;
		getppid();
		_exit(0);
	}
	if (read(done[0], &c, 1) != 1)
		return 1;
	map_and_write();
	if (write(go[1], &c, 1) != 1 || waitpid(pid, NULL, 0) != pid)
		return 1;
	return 0;
}
