/*
 * steps.c - small programs whose memory behaviour the kernel reports, for
 * tests/native.sh: run natively they print, at each marker, the process's
 * minor and major faults (getrusage()), Rss and AnonHugePages summed over its
 * mappings (/proc/self/smaps_rollup) and the THP events of /proc/vmstat;
 * captured by mmusim's Valgrind tool, each marker (a getppid() call) becomes a
 * MARKER record at which `mmusim run --steps` writes the replay's counters.
 *
 *   steps CASE DIR     (DIR: where the file cases create their file)
 *
 * A step is the code between two markers. The measurement at a marker must not
 * change what it measures: it allocates nothing, uses no stdio, and reads the
 * /proc files with raw system calls into static buffers that were written
 * before the first marker (a read() into a fresh page would fault in the
 * kernel, a fault that Valgrind does not see); the stack it uses was touched
 * before too. Everything is printed after the last marker.
 *
 * Mappings whose place matters (2 MiB alignment for THPs, 64 KiB for the file
 * fault-around window) are made at hint addresses, which Linux and Valgrind
 * both honour when the range is free; "anon64m" and "file-private-hintless"
 * are deliberately hint-less (Linux puts a 64 MiB anonymous mapping on a 2 MiB
 * boundary and a 1 MiB file mapping below the last mapping, Valgrind does
 * neither: their replay needs the kernel's placement, os.layout).
 *
 * Cases: anon64m, anon-unaligned (hint-less anonymous mappings), file-private,
 * file-private-hintless, file-shared, file-shared-large (a file written in
 * 4 KiB or 64 KiB write()s, mapped private or shared, read and written), text
 * (the first call of a function far from the rest of the code), thp-unaligned,
 * thp-read, thp-partial (munmap, mprotect, MADV_DONTNEED of one page in a THP),
 * collapse (MADV_COLLAPSE), mremap (THPs moved aligned, then not).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define MIB (1UL << 20)
#define PG 4096UL
#define MAXMARK 32
#define HINT ((char *)0x200000000000UL) /* 32 TiB: free in both, 2 MiB aligned */

static const char *const vm_keys[] = { "thp_fault_alloc", "thp_fault_fallback", "thp_split_pmd",
				       "thp_collapse_alloc", "thp_zero_page_alloc",
				       "thp_deferred_split_page" };
#define NVM (sizeof(vm_keys) / sizeof(vm_keys[0]))

struct sample {
	long minflt, majflt, rss_kb, ahp_kb;
	long vm[NVM];
};

static struct sample smp[MAXMARK];
static int nsmp;
static char rbuf[1 << 16];

/* Read @path whole into rbuf with raw calls; the length, or -1. */
static long slurp(const char *path)
{
	long n = 0, r;
	int fd = open(path, O_RDONLY);

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

	for (long i = 0; i + (long)kl < len; i++) {
		if ((i == 0 || rbuf[i - 1] == '\n') && !memcmp(rbuf + i, key, kl) &&
		    (rbuf[i + kl] == ' ' || rbuf[i + kl] == ':' || rbuf[i + kl] == '\t')) {
			long v = 0;
			long j = i + (long)kl;

			while (j < len && (rbuf[j] < '0' || rbuf[j] > '9') && rbuf[j] != '\n')
				j++;
			while (j < len && rbuf[j] >= '0' && rbuf[j] <= '9')
				v = v * 10 + (rbuf[j++] - '0');
			return v;
		}
	}
	return 0;
}

static void measure(struct sample *s)
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

/* A marker: the getppid() the capture records, then the kernel's figures. */
static void __attribute__((noinline)) marker(void)
{
	getppid();
	if (nsmp < MAXMARK)
		measure(&smp[nsmp++]);
}

/* Touch the stack the steps and the measurement will use, before any marker. */
static void __attribute__((noinline)) warm_stack(void)
{
	volatile char pad[64 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 512)
		pad[i] = 0;
}

static void warm(void)
{
	struct sample scratch;

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

static char *map(char *hint, size_t len, int prot, int flags, int fd)
{
	char *p = mmap(hint, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (hint && p != hint) {
		fprintf(stderr, "mmap: hint %p not honoured (%p)\n", (void *)hint, (void *)p);
		exit(1);
	}
	return p;
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

/*
 * A file of @len bytes, written now in write()s of @chunk bytes (at most 64
 * KiB), opened O_RDWR. Its pages are then in the page cache, in folios of the
 * writes' size: ext4 (large folios since Linux 6.16) allocates a folio per
 * write of the order that fits it; 4 KiB writes give order-0 pages.
 */
static int make_file(const char *dir, size_t len, size_t chunk_len)
{
	static char path[4096];
	static char chunk[64 * 1024];
	int fd;

	snprintf(path, sizeof(path), "%s/steps.data", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path);
	memset(chunk, 'x', sizeof(chunk));
	for (size_t off = 0; off < len; off += chunk_len)
		if (write(fd, chunk, chunk_len) != (ssize_t)chunk_len)
			die("write");
	return fd;
}

/*
 * Program text: a function 1 MiB away from the rest of the code on both sides
 * (the padding is never executed), so that its first call faults in text that
 * nothing executed before had brought in by fault-around.
 */
__asm__(".pushsection .text.zz_far,\"ax\",@progbits\n"
	".p2align 16\n"
	"steps_pad: .skip 1048576, 0x90\n"
	".globl steps_far\n"
	".type steps_far,@function\n"
	"steps_far: mov $42, %eax\n"
	"ret\n"
	".skip 1048576, 0x90\n"
	".popsection\n");
int steps_far(void);

/*
 * A small mapping first, as a program's earlier ones: Linux still puts the
 * 64 MiB on a 2 MiB boundary (its length is a multiple of 2 MiB:
 * __get_unmapped_area() -> thp_get_unmapped_area_vmflags()), Valgrind right
 * after the small one.
 */
static void case_anon64m(void)
{
	char *small = map(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *p = map(NULL, 64 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);

	(void)small;
	if (madvise(p, 64 * MIB, MADV_HUGEPAGE))
		die("madvise");
	marker();
	write_pages(p, 64 * MIB);
	marker();
}

static void case_anon_unaligned(void)
{
	size_t len = MIB + 5 * PG;
	char *p = map(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	long s;

	marker();
	s = read_pages(p, len);
	marker();
	write_pages(p, len);
	marker();
	(void)s;
}

static void case_file_private(const char *dir)
{
	int fd = make_file(dir, MIB, PG);
	char *p = map(HINT, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	long s;

	marker();
	s = read_pages(p, MIB);
	marker();
	write_pages(p, MIB);
	marker();
	(void)s;
}

/* The same hint-less: where the 64 KiB fault-around windows fall depends on the address. */
static void case_file_private_hintless(const char *dir)
{
	int fd = make_file(dir, MIB, PG);
	char *p = map(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	long s;

	marker();
	s = read_pages(p, MIB);
	marker();
	(void)s;
}

static void file_shared(const char *dir, size_t chunk)
{
	int fd = make_file(dir, MIB, chunk);
	char *p = map(HINT, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	long s;

	marker();
	write_pages(p, MIB / 2);
	marker();
	s = read_pages(p, MIB);
	marker();
	write_pages(p, MIB);
	marker();
	(void)s;
}

static void case_file_shared(const char *dir)
{
	file_shared(dir, PG);
}

/* The same file written in 64 KiB write()s: 64 KiB folios. */
static void case_file_shared_large(const char *dir)
{
	file_shared(dir, 64 * 1024);
}

static void case_text(void)
{
	int r;

	marker();
	r = steps_far();
	marker();
	r += steps_far();
	marker();
	if (r != 84)
		exit(1);
}

static char *thp_region(size_t len)
{
	char *p = map(HINT, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);

	if (madvise(p, len, MADV_HUGEPAGE))
		die("madvise");
	return p;
}

/* MADV_HUGEPAGE on 5 MiB from 1 MiB past a 2 MiB boundary: THPs where a whole 2 MiB fits. */
static void case_thp_unaligned(void)
{
	char *p = map(HINT + MIB, 5 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);

	if (madvise(p, 5 * MIB, MADV_HUGEPAGE))
		die("madvise");
	marker();
	write_pages(p, 5 * MIB);
	marker();
}

/* Reads first: the huge zero page where the kernel allows it, else THPs (pvm_no_zero_page). */
static void case_thp_read(void)
{
	char *p = thp_region(4 * MIB);
	long s;

	marker();
	s = read_pages(p, 4 * MIB);
	marker();
	write_pages(p, 4 * MIB);
	marker();
	(void)s;
}

static void case_thp_partial(void)
{
	char *p = thp_region(8 * MIB);

	marker();
	write_pages(p, 8 * MIB);
	marker();
	if (munmap(p + 64 * PG, PG))
		die("munmap");
	marker();
	if (mprotect(p + 2 * MIB + 64 * PG, PG, PROT_READ))
		die("mprotect");
	marker();
	if (madvise(p + 4 * MIB + 64 * PG, PG, MADV_DONTNEED))
		die("madvise");
	marker();
	write_pages(p + 4 * MIB, 2 * MIB);
	marker();
}

static void case_collapse(void)
{
	char *p = map(HINT, 4 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);

	marker();
	write_pages(p, 4 * MIB);
	marker();
	if (madvise(p, 4 * MIB, MADV_COLLAPSE))
		die("madvise(MADV_COLLAPSE)");
	marker();
	write_pages(p, 4 * MIB);
	marker();
}

static void case_mremap(void)
{
	char *p = thp_region(4 * MIB), *q, *r;

	marker();
	write_pages(p, 4 * MIB);
	marker();
	q = mremap(p, 4 * MIB, 4 * MIB, MREMAP_MAYMOVE | MREMAP_FIXED, HINT + 64 * MIB);
	if (q == MAP_FAILED)
		die("mremap");
	marker();
	write_pages(q, 4 * MIB);
	marker();
	r = mremap(q, 4 * MIB, 4 * MIB, MREMAP_MAYMOVE | MREMAP_FIXED, HINT + 128 * MIB + 16 * PG);
	if (r == MAP_FAILED)
		die("mremap");
	marker();
	write_pages(r, 4 * MIB);
	marker();
}

/*
 * A THP that spans two VMAs, zapped in both (mm/memory.c unmap_vmas(): VMA by
 * VMA, so the rmap batch of folio_remove_rmap_ptes() ends at the boundary): the
 * first VMA's run leaves the folio partly mapped and queues it for deferred
 * split (thp_deferred_split_page 1) before the second's frees it. The same THP
 * range in one VMA again (mprotect there and back: the VMAs merge) queues
 * nothing.
 */
static void case_thp_two_vmas(void)
{
	char *p = thp_region(4 * MIB);

	marker();
	write_pages(p, 4 * MIB);
	marker();
	if (mprotect(p, PG, PROT_READ))
		die("mprotect");
	marker();
	if (munmap(p, 2 * MIB))
		die("munmap");
	marker();
	if (mprotect(p + 2 * MIB, PG, PROT_READ) || mprotect(p + 2 * MIB, PG, PROT_READ | PROT_WRITE))
		die("mprotect");
	marker();
	if (munmap(p + 2 * MIB, 2 * MIB))
		die("munmap");
	marker();
}

static const struct {
	const char *name;
	void (*fn)(void);
	void (*fn_dir)(const char *);
} cases[] = {
	{ "anon64m", case_anon64m, NULL },
	{ "anon-unaligned", case_anon_unaligned, NULL },
	{ "file-private", NULL, case_file_private },
	{ "file-private-hintless", NULL, case_file_private_hintless },
	{ "file-shared", NULL, case_file_shared },
	{ "file-shared-large", NULL, case_file_shared_large },
	{ "text", case_text, NULL },
	{ "thp-unaligned", case_thp_unaligned, NULL },
	{ "thp-read", case_thp_read, NULL },
	{ "thp-partial", case_thp_partial, NULL },
	{ "collapse", case_collapse, NULL },
	{ "mremap", case_mremap, NULL },
	{ "thp-two-vmas", case_thp_two_vmas, NULL },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 3) {
		fprintf(stderr, "usage: steps CASE DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name))
			break;
	if (i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "steps: unknown case '%s'\n", argv[1]);
		return 2;
	}
	warm();
	if (cases[i].fn)
		cases[i].fn();
	else
		cases[i].fn_dir(argv[2]);
	for (int k = 0; k < nsmp; k++) {
		printf("marker %d minflt %ld majflt %ld rss_kb %ld anon_huge_kb %ld", k, smp[k].minflt,
		       smp[k].majflt, smp[k].rss_kb, smp[k].ahp_kb);
		for (size_t j = 0; j < NVM; j++)
			printf(" %s %ld", vm_keys[j], smp[k].vm[j]);
		printf("\n");
	}
	return 0;
}
