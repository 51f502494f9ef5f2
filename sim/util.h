/* util.h - small parsing, file and clock helpers shared by the config loader, workloads,
 * sweeps and the CLI. */
#ifndef MMUSIM_UTIL_H
#define MMUSIM_UTIL_H

#include <stdio.h>

#include "types.h"

/*
 * Parse a byte size: decimal digits with an optional K, M, G or T suffix (binary:
 * K = 1024), optionally followed by "B" or "iB" ("64K", "2M", "1GiB", "4096").
 * Returns 0 and stores it, or -1 on anything else (sign, overflow, junk).
 */
int parse_size(const char *s, uint64_t *out);

/* Parse an unsigned decimal (or 0x hex, never octal) integer, whole string. 0 or -1. */
int parse_u64(const char *s, uint64_t *out);

/*
 * Parse a count: what parse_u64 takes, or decimal digits with a K, M, G or T
 * suffix, binary as for sizes (4K = 4096, 1M = 1048576) and without parse_size's
 * "B"/"iB". 0 and the value, or -1 (sign, overflow, junk).
 */
int parse_count(const char *s, uint64_t *out);

/* Parse a finite double, whole string. 0 or -1. */
int parse_double(const char *s, double *out);

/* Format @bytes with the largest exact binary suffix ("2M", "1536K", "100"). */
void format_size(uint64_t bytes, char *buf, size_t n);

/*
 * After getopt_long() returned '?' or ':' (with opterr = 0): the option as it
 * was written ("--bogus", "-x"), in @buf (or a pointer into @argv).
 */
const char *getopt_culprit(char *const *argv, char *buf, size_t n);

/* mkdir -p @dir (mode 0777 before the umask): 0, or -1 with errno. */
int mkdir_p(const char *dir);

/*
 * @*len bytes (rounded up to a multiple of 2 MiB, written back) of zeroed
 * anonymous memory with MADV_HUGEPAGE: huge pages if the kernel gives them (a
 * hint; 4K pages work too). A fresh 4K page costs a fault on its first touch,
 * ~18 us on this project's guest, so the big buffers of the reader and the pool
 * come from here. A last 2 MiB of which at most 512 KiB is asked for is left to
 * 4K pages. NULL if it fails; free with munmap(p, *len).
 */
void *huge_region(size_t *len);

/*
 * @n elements of @size bytes, zeroed, whose pages the kernel supplies when they
 * are first touched: for the arrays sized by the simulated machine (its swap
 * map, its huge-page folios, its caches' tags), of which a run touches what its
 * trace reaches. calloc() leaves pages untouched only when it maps the block
 * itself, above malloc's mmap threshold, and glibc raises that threshold to the
 * size of any mapped block freed: in a sweep worker (forked from the process
 * that loaded the sweep) calloc() cleared these arrays byte by byte, 500 page
 * faults of an 8-point sweep's 1,700. Small arrays (under 16 KiB) come from
 * calloc(). NULL if it fails (or @n * @size overflows); free with
 * zero_pages_free() and the same @n and @size.
 */
void *zero_pages(size_t n, size_t size);
void zero_pages_free(void *p, size_t n, size_t size);

/* Remove the flat directory @dir: its entries, then itself (best effort, no errors). */
void remove_dir(const char *dir);

/* Whether @path names a regular file (following symlinks). */
bool file_exists(const char *path);

/* Seconds on the monotonic clock. */
double now_seconds(void);

/* The process's peak resident set so far, in bytes (0 if unknown). */
uint64_t max_rss_bytes(void);

/*
 * Levenshtein distance of @a and @b (insert, delete, substitute), for naming what
 * is closest to a typo (plot's columns, config keys); strings over 256 bytes
 * count as their length.
 */
size_t edit_distance(const char *a, const char *b);

/* @s as one CSV field on @out: quoted when it holds a comma, quote or line break (RFC 4180). */
void csv_put(FILE *out, const char *s);

#endif
