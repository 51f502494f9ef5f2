/*
 * pages.c - a small deterministic program for tests/e2e_capture.sh, built
 * static and non-PIE so that its addresses are fixed: it writes one byte in
 * each of N 4 KiB pages of a malloc()ed array (N is the LAST argument, so that
 * a #!/usr/bin/env script, which passes the script's path before the
 * arguments, runs it with the same N), reads them back, and exits 0 if it read
 * what it wrote. It prints nothing.
 */
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[argc - 1], NULL, 10) : 64, sum = 0;
	volatile char *p = malloc(n * 4096 + 1);

	if (!p)
		return 1;
	for (unsigned long i = 0; i < n; i++)
		p[i * 4096] = 1;
	for (unsigned long i = 0; i < n; i++)
		sum += (unsigned long)p[i * 4096];
	return sum == n ? 0 : 1;
}
