/* util.c - see util.h. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int parse_u64(const char *s, uint64_t *out)
{
	/* decimal, or 0x hex: never octal ("010" is ten, as a reader expects) */
	bool hex = s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *d = hex ? s + 2 : s;
	char *end;
	unsigned long long v;

	if (!d || !*d || *d == '-' || *d == '+' || *d == ' ')
		return -1;
	errno = 0;
	v = strtoull(d, &end, hex ? 16 : 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_count(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift;
	size_t len = s ? strlen(s) : 0;

	switch (len ? s[len - 1] : 0) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	default: return parse_u64(s, out); /* (no hex digit is a suffix letter) */
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end != s + len - 1 || v > (~0ULL >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (end[0] == 'B')
		end++;
	if (*end)
		return -1;
	if (shift && v > (~0ULL >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

void format_size(uint64_t bytes, char *buf, size_t n)
{
	static const char sfx[] = "KMGT";
	int i = -1;

	while (bytes && i < 3 && (bytes & 1023) == 0) {
		bytes >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(buf, n, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, n, "%llu%c", (unsigned long long)bytes, sfx[i]);
}

int mkdir_p(const char *dir)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0777) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* getrusage: KiB on Linux. */
uint64_t max_rss_bytes(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_maxrss * 1024;
}

/* Long-only options have values of 256 and more; a short one is its letter. */
const char *getopt_culprit(char *const *argv, char *buf, size_t n)
{
	const char *a = optind > 0 ? argv[optind - 1] : "";

	if (optopt > 0 && optopt < 256 && strncmp(a, "--", 2)) {
		snprintf(buf, n, "-%c", optopt);
		return buf;
	}
	return a;
}

#define ZERO_PAGES_MIN (16u << 10)

void *zero_pages(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	if (n * size < ZERO_PAGES_MIN)
		return calloc(n ? n : 1, size ? size : 1);
	p = mmap(NULL, n * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void zero_pages_free(void *p, size_t n, size_t size)
{
	if (!p)
		return;
	if (n * size < ZERO_PAGES_MIN)
		free(p);
	else
		munmap(p, n * size);
}

void *huge_region(size_t *len)
{
	const size_t huge = 2u << 20, small_tail = 512u << 10;
	size_t n = (*len + huge - 1) & ~(huge - 1), tail = *len & (huge - 1);
	unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n, MADV_HUGEPAGE); /* a hint: 4K pages work too */
	/*
	 * A last huge page of which at most 512 KiB is used stays 4K pages: zeroing
	 * a whole fresh huge page costs more (1.4-3 ms on this project's guest)
	 * than faulting 128 4K pages in (zstd's window on the miss-heavy bench
	 * trace, 2 MiB and some 440 KiB, made two huge pages: now one and 110 4K
	 * pages, 4 MB less resident).
	 */
	if (tail && tail <= small_tail)
		madvise(p + n - huge, huge, MADV_NOHUGEPAGE);
	*len = n;
	return p;
}

/* Edit distance (insert, delete, substitute), for naming the columns closest to a typo. */
size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row, d;

	if (la > 256 || lb > 256)
		return la > lb ? la : lb;
	row = malloc((lb + 1) * sizeof(*row));
	if (!row)
		return la > lb ? la : lb;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

void csv_put(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}
