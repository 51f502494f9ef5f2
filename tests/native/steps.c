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
 * collapse (MADV_COLLAPSE), mremap (THPs moved aligned, then not), madv-free-thp and
 * madv-free-4k (MADV_FREE of whole and partial THPs and of 4 KiB pages, some
 * written again, then MADV_PAGEOUT: the clean lazy-free pages are discarded
 * without swap), pageout-noswap (MADV_PAGEOUT of a whole THP and of part of one
 * on a machine without swap: split, nothing freed), file-random-cold (MADV_RANDOM on
 * a file whose page cache was dropped: a major fault per page), file-seq-cold,
 * file-seq-cold-16m and file-seq-cold-64m (1, 16 and 64 MiB of such a file read
 * in order: read-around, then async readahead in growing folios), populate
 * (MAP_POPULATE), populate-madvise (MADV_POPULATE_READ / _WRITE), mlock and
 * mlockall (mlock, munlock, MAP_LOCKED, mlockall(MCL_FUTURE [| MCL_ONFAULT]),
 * munlockall), tmpfs, memfd, memfd-fresh (shared memory: a file of /dev/shm, a
 * memfd written, a memfd only truncated, each mapped shared twice and private).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "measure.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define MIB (1UL << 20)
#define PG 4096UL
#define MAXMARK 32
#define HINT ((char *)0x200000000000UL) /* 32 TiB: free in both, 2 MiB aligned */

static struct figs smp[MAXMARK];
static int nsmp;

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

static void advise(char *p, size_t len, int advice)
{
	if (madvise(p, len, advice))
		die("madvise");
}

/* MADV_FREE of a whole THP (lazy-free, 512 pages) and of part of one (split, 62 pages:
 * two full per-CPU batches of 31, which is when the kernel counts 4 KiB pages in
 * pglazyfree), then MADV_PAGEOUT: both discarded without swap; they fault in again. */
static void case_madv_free_thp(void)
{
	char *p = thp_region(8 * MIB);
	long s;

	marker();
	write_pages(p, 8 * MIB);
	marker();
	advise(p, 2 * MIB, MADV_FREE);
	marker();
	advise(p + 2 * MIB + 64 * PG, 62 * PG, MADV_FREE);
	marker();
	advise(p, 4 * MIB, MADV_PAGEOUT);
	marker();
	s = read_pages(p, 4 * MIB);
	marker();
	(void)s;
}

/* 248 pages (8 full per-CPU batches of 31) freed lazily, half written again: the
 * other half is discarded by MADV_PAGEOUT, the written half stays. */
static void case_madv_free_4k(void)
{
	size_t n = 8 * 31 * PG;
	char *p = map(HINT, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);

	marker();
	write_pages(p, n);
	marker();
	advise(p, n, MADV_FREE);
	marker();
	write_pages(p, n / 2);
	marker();
	advise(p, n, MADV_PAGEOUT);
	marker();
	write_pages(p, n);
	marker();
}

/* Without swap MADV_PAGEOUT frees nothing: a whole THP is split to be swapped in
 * pieces (thp_swpout_fallback), part of one is split first; every page stays. */
static void case_pageout_noswap(void)
{
	char *p = thp_region(4 * MIB);

	marker();
	write_pages(p, 4 * MIB);
	marker();
	advise(p, 2 * MIB, MADV_PAGEOUT);
	marker();
	advise(p + 2 * MIB, 16 * PG, MADV_PAGEOUT);
	marker();
	write_pages(p, 4 * MIB);
	marker();
}

/* The data file of make_file(), its pages written back and dropped from the page cache. */
static int cold_file(const char *dir, size_t len)
{
	int fd = make_file(dir, len, PG);

	if (fdatasync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("dropping the file's page cache");
	return fd;
}

/* MADV_RANDOM on a file that is not cached: no read-around, every page a major fault
 * (fault-around maps only what is cached: nothing). */
static void case_file_random_cold(const char *dir)
{
	int fd = cold_file(dir, MIB);
	char *p = map(HINT, MIB, PROT_READ, MAP_PRIVATE, fd);
	long s;

	advise(p, MIB, MADV_RANDOM);
	marker();
	s = read_pages(p, MIB);
	marker();
	(void)s;
}

/*
 * A sequential read through mmap of a file whose page cache was dropped: the
 * first fault misses and reads around (do_sync_mmap_readahead()), the read-around
 * window's PG_readahead folio starts async readahead of the next window in
 * larger folios (page_cache_async_ra(): ra->order + 2 a round), whose own mark
 * starts the next; fault-around skips a marked folio (next_uptodate_folio()), so
 * each mark takes a (minor) fault. How many faults and which are major depend on
 * the disk's read_ahead_kb (tests/native.sh gives the replay this machine's).
 */
static void file_seq_cold(const char *dir, size_t len)
{
	int fd = cold_file(dir, len);
	char *p = map(HINT, len, PROT_READ, MAP_PRIVATE, fd);
	long s;

	marker();
	s = read_pages(p, len);
	marker();
	(void)s;
}

static void case_file_seq_cold(const char *dir)
{
	file_seq_cold(dir, MIB);
}

static void case_file_seq_cold_16m(const char *dir)
{
	file_seq_cold(dir, 16 * MIB);
}

static void case_file_seq_cold_64m(const char *dir)
{
	file_seq_cold(dir, 64 * MIB);
}

/*
 * Populating through GUP (mm/gup.c): the faults come at the call and count as
 * the process's minor faults; the first touch after takes none. MAP_POPULATE
 * of a private writable mapping write-faults every page (FOLL_WRITE breaks
 * COW); of a private read-only file mapping, read faults that fault around
 * (16 pages each).
 */
static void case_populate(const char *dir)
{
	int fd = make_file(dir, MIB, PG);
	char *p, *f;
	long s;

	marker();
	p = map(HINT, 4 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1);
	marker();
	write_pages(p, 4 * MIB);
	marker();
	f = map(HINT + 64 * MIB, MIB, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd);
	marker();
	s = read_pages(f, MIB);
	marker();
	(void)s;
}

/* MADV_POPULATE_READ / _WRITE: 4 KiB pages, then THPs under MADV_HUGEPAGE. */
static void case_populate_madvise(void)
{
	char *p = map(HINT + 64 * MIB, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *h = thp_region(8 * MIB);
	long s;

	marker();
	if (madvise(p, MIB / 2, MADV_POPULATE_READ))
		die("madvise(MADV_POPULATE_READ)");
	marker();
	if (madvise(p, MIB, MADV_POPULATE_WRITE))
		die("madvise(MADV_POPULATE_WRITE)");
	marker();
	write_pages(p, MIB);
	marker();
	if (madvise(h, 2 * MIB, MADV_POPULATE_READ))
		die("madvise(MADV_POPULATE_READ)");
	marker();
	if (madvise(h + 2 * MIB, 4 * MIB, MADV_POPULATE_WRITE))
		die("madvise(MADV_POPULATE_WRITE)");
	marker();
	s = read_pages(h, 8 * MIB);
	write_pages(h, 8 * MIB);
	marker();
	(void)s;
}

/*
 * mlock() populates and pins; munlock() faults nothing. mlock() of the middle
 * of THPs splits the VMA there, and the PMDs across the new edges.
 */
static void case_mlock(void)
{
	char *p = map(HINT + 64 * MIB, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *h = thp_region(4 * MIB);

	marker();
	if (mlock(p, MIB / 2))
		die("mlock");
	marker();
	write_pages(p, MIB);
	marker();
	if (munlock(p, MIB / 2))
		die("munlock");
	marker();
	write_pages(h, 4 * MIB);
	marker();
	if (mlock(h + MIB, 2 * MIB))
		die("mlock");
	marker();
	write_pages(h, 4 * MIB);
	if (munlock(h, 4 * MIB))
		die("munlock");
	marker();
}

/*
 * mlockall(MCL_FUTURE): later mappings are locked and populated (MAP_LOCKED's
 * effect, which a mapping gets on its own too); MCL_ONFAULT locks without
 * populating; munlockall() ends it.
 */
static void case_mlockall(void)
{
	char *p, *q, *r;

	marker();
	p = map(HINT, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1);
	marker();
	write_pages(p, MIB);
	marker();
	if (mlockall(MCL_FUTURE))
		die("mlockall");
	q = map(HINT + 64 * MIB, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	marker();
	write_pages(q, MIB);
	marker();
	if (mlockall(MCL_FUTURE | MCL_ONFAULT))
		die("mlockall");
	r = map(HINT + 128 * MIB, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	marker();
	write_pages(r, MIB / 2);
	marker();
	if (munlockall())
		die("munlockall");
	marker();
}

/*
 * Shared memory (mm/shmem.c): a shared mapping of a tmpfs file or a memfd has
 * no write-notify (no page_mkwrite, no dirty accounting), so a read fault maps
 * its pages writable and a later store takes no fault; fault-around maps the
 * pages already in the file. The file is mapped twice: Rss counts each mapping.
 * Then a private mapping of it: read faults around, each store copies.
 */
static void shmem_steps(int fd)
{
	char *p = map(HINT, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	char *q, *r;
	long s;

	marker();
	s = read_pages(p, MIB);
	marker();
	write_pages(p, MIB);
	marker();
	q = map(HINT + 64 * MIB, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	s += read_pages(q, MIB / 2);
	marker();
	r = map(HINT + 128 * MIB, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	s += read_pages(r, MIB);
	marker();
	write_pages(r, MIB / 2);
	marker();
	(void)s;
}

/* A file of /dev/shm (tmpfs), written in 4 KiB write()s. */
static void case_tmpfs(void)
{
	int fd = make_file("/dev/shm", MIB, PG);
	char path[64];

	snprintf(path, sizeof(path), "/dev/shm/steps.data");
	unlink(path);
	shmem_steps(fd);
}

/* A memfd written in 4 KiB write()s. */
static void case_memfd(void)
{
	static char chunk[PG];
	int fd = memfd_create("steps", 0);

	if (fd < 0)
		die("memfd_create");
	memset(chunk, 'x', sizeof(chunk));
	for (size_t off = 0; off < MIB; off += PG)
		if (write(fd, chunk, PG) != (ssize_t)PG)
			die("write");
	shmem_steps(fd);
}

/*
 * A fresh memfd (ftruncate() only: every page a hole): each read fault
 * allocates its page (shmem_fault()), fault-around finding none in the file.
 */
static void case_memfd_fresh(void)
{
	int fd = memfd_create("steps", 0);

	if (fd < 0)
		die("memfd_create");
	if (ftruncate(fd, MIB))
		die("ftruncate");
	shmem_steps(fd);
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
	{ "madv-free-thp", case_madv_free_thp, NULL },
	{ "madv-free-4k", case_madv_free_4k, NULL },
	{ "pageout-noswap", case_pageout_noswap, NULL },
	{ "file-random-cold", NULL, case_file_random_cold },
	{ "file-seq-cold", NULL, case_file_seq_cold },
	{ "file-seq-cold-16m", NULL, case_file_seq_cold_16m },
	{ "file-seq-cold-64m", NULL, case_file_seq_cold_64m },
	{ "populate", NULL, case_populate },
	{ "populate-madvise", case_populate_madvise, NULL },
	{ "mlock", case_mlock, NULL },
	{ "mlockall", case_mlockall, NULL },
	{ "tmpfs", case_tmpfs, NULL },
	{ "memfd", case_memfd, NULL },
	{ "memfd-fresh", case_memfd_fresh, NULL },
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
