/*
 * forks.c - a program of three processes for mmusim's capture tests
 * (tests/check_capture_tool.c, tests/e2e_capture.sh): it disables THP for
 * itself (prctl(PR_SET_THP_DISABLE, 1): an EV_PRCTL), sets marker 0
 * (getppid()), forks a child that sets marker 1, writes 64 pages and writes
 * a byte to a pipe, which the parent reads before it sets marker 2: the
 * markers are causally ordered 0 < 1 < 2 across the two processes. Then it
 * forks a second child that execs argv[1] with argv[2] (tests/capture/pages.c)
 * when given, waits for both and exits 0 if both exited 0. It prints nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile char *p = malloc(64 * 4096);
	int fd[2], st, ok = 1;
	pid_t a, b = -1;
	char c = 0;

	if (!p || pipe(fd))
		return 1;
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	getppid(); /* marker 0 */
	a = fork();
	if (a == 0) {
		getppid(); /* marker 1 */
		for (int i = 0; i < 64; i++)
			p[i * 4096] = 1;
		_exit(write(fd[1], "x", 1) == 1 ? 0 : 1);
	}
	if (a < 0 || read(fd[0], &c, 1) != 1)
		return 1;
	getppid(); /* marker 2 */
	if (argc > 2) {
		b = fork();
		if (b == 0) {
			execv(argv[1], argv + 1);
			_exit(127);
		}
	}
	ok &= waitpid(a, &st, 0) == a && WIFEXITED(st) && !WEXITSTATUS(st);
	if (b > 0)
		ok &= waitpid(b, &st, 0) == b && WIFEXITED(st) && !WEXITSTATUS(st);
	return ok ? 0 : 1;
}
