/*
 * check_shmem.c - shared memory as shmem (sim/filemap.c, sim/mmap.c): file
 * mappings whose mtr version 5 FILE record says tmpfs (TMPFS_MAGIC: a file of
 * /dev/shm or a memfd), derived from Linux 6.18 mm/shmem.c (shmem_fault(),
 * shmem_get_folio_gfp(): a hole gets a new zeroed page, no read, no
 * read-around), mm/mmap.c (vma_wants_writenotify(): no page_mkwrite, no dirty
 * accounting, so vm_page_prot is writable in a shared mapping), mm/memory.c
 * (set_pte_range() from vm_page_prot; filemap_map_pages() maps only pages in
 * the file) and mm/mprotect.c (change_pte_range(): pte_modify() with the new
 * writable vm_page_prot). tests/native.sh compares the rest with the kernel
 * (cases tmpfs, memfd, memfd-fresh). The mmap events carry what the capture
 * records (fs_magic, fs_pages); the references are lackey lines.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_common.h"
#include "check_run.h"
#include "mmap.h"

static void begin(void)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
	S->k.trace_name = "shmem";
}

static void feed(const char *trace)
{
	struct err e = { 0 };

	ck_assert_msg(replay_trace(S, trace, &e) == 0, "%s", e.msg);
}

/* mmap of 64 KiB of file 1 at @at: @prot, @flags, on tmpfs holding @pages pages (or ext4: @magic 0) */
static struct os_event map64k(vaddr_t at, uint32_t prot, uint64_t flags, uint32_t magic, uint64_t pages)
{
	return (struct os_event){ .kind = EV_MMAP, .prot = prot, .flags = flags, .fd = 3, .addr = at,
				  .len = 65536, .file = 1, .fs_magic = magic, .fs_pages = pages };
}

/* One access of kind @op (L or S) to each of the 16 pages from @at, as lackey text. */
static char *each_page(char op, vaddr_t at)
{
	char *t = malloc(16 * 32);
	size_t n = 0;

	ck_assert_ptr_nonnull(t);
	for (unsigned i = 0; i < 16; i++)
		n += (size_t)snprintf(t + n, 32, " %c %llx,8\n", op, (unsigned long long)(at + i * 4096));
	return t;
}

static void access_all(char op, vaddr_t at)
{
	char *t = each_page(op, at);

	feed(t);
	free(t);
}

/*
 * A shared read-only mapping of a tmpfs file made writable by mprotect():
 * change_pte_range() applies the new vm_page_prot, writable (no write-notify),
 * so the store after it takes no fault. Before: 1 read fault (fault-around
 * maps the 16 existing pages), then 0 for the stores. The same on ext4 keeps
 * the clean PTEs read-only (dirty tracking): 16 write faults.
 * main (shmem handled as ext4): 1, then 16.
 */
START_TEST(shmem_mprotect_write_takes_no_fault)
{
	begin();
	event(map64k(0x40000000, 1, MAP_SHARED_, TMPFS_MAGIC_, 16));
	access_all('L', 0x40000000);
	ck_assert_uint_eq(S->st.pgfault, 1);
	event((struct os_event){ .kind = EV_MPROTECT, .prot = 3, .fd = -1, .addr = 0x40000000, .len = 65536 });
	access_all('S', 0x40000000);
	ck_assert_uint_eq(S->st.pgfault, 1);
	done();

	begin();
	event(map64k(0x40000000, 1, MAP_SHARED_, 0, 0));
	access_all('L', 0x40000000);
	event((struct os_event){ .kind = EV_MPROTECT, .prot = 3, .fd = -1, .addr = 0x40000000, .len = 65536 });
	access_all('S', 0x40000000);
	ck_assert_uint_eq(S->st.pgfault, 1 + 16);
	done();
}
END_TEST

/*
 * A fresh memfd (0 pages) mapped private and read: every page faults
 * (shmem_fault() fills each hole; fault-around finds no page in the file), the
 * 16 pages go into the file (nr_file_pages 16), mapped read-only. A second
 * private mapping then reads them with one fault (fault-around: they exist
 * now); a store copies (16 COW faults, 16 anonymous pages). Its fs_pages (16)
 * do not exceed what the model holds: no page is assumed beyond them.
 * main: 1 fault for the first read (16 pages read in as from a disk).
 */
START_TEST(fresh_memfd_private_read_fills_holes)
{
	begin();
	event(map64k(0x40000000, 3, MAP_PRIVATE_, TMPFS_MAGIC_, 0));
	access_all('L', 0x40000000);
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert_uint_eq(S->st.nr_file_pages, 16);
	ck_assert_uint_eq(S->st.pgmajfault, 0);
	event(map64k(0x50000000, 3, MAP_PRIVATE_, TMPFS_MAGIC_, 16));
	access_all('L', 0x50000000);
	ck_assert_uint_eq(S->st.pgfault, 17);
	access_all('S', 0x50000000);
	ck_assert_uint_eq(S->st.pgfault, 33);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	ck_assert_uint_eq(S->st.nr_file_pages, 16);
	done();
}
END_TEST

/*
 * Which pages exist: a memfd of 0 pages mapped shared, its first 4 pages
 * written through the mapping (4 faults, no fault-around: do_shared_fault()).
 * Mapped again with fs_pages 4 (what the model holds): the other 12 are still
 * holes, a read of all 16 faults 1 (fault-around maps the 4) + 12 times. Mapped
 * once more with fs_pages 16 (12 pages written with write(), which the trace
 * does not show): they exist, one fault maps all 16.
 */
START_TEST(shmem_pages_written_elsewhere_exist)
{
	begin();
	event(map64k(0x40000000, 3, MAP_SHARED_, TMPFS_MAGIC_, 0));
	feed(" S 40000000,8\n S 40001000,8\n S 40002000,8\n S 40003000,8\n");
	ck_assert_uint_eq(S->st.pgfault, 4);
	event(map64k(0x50000000, 3, MAP_SHARED_, TMPFS_MAGIC_, 4));
	access_all('L', 0x50000000);
	ck_assert_uint_eq(S->st.pgfault, 4 + 1 + 12);
	ck_assert_uint_eq(S->st.nr_file_pages, 16);
	done();

	begin();
	event(map64k(0x40000000, 3, MAP_SHARED_, TMPFS_MAGIC_, 0));
	feed(" S 40000000,8\n S 40001000,8\n S 40002000,8\n S 40003000,8\n");
	event(map64k(0x50000000, 3, MAP_SHARED_, TMPFS_MAGIC_, 16));
	access_all('L', 0x50000000);
	ck_assert_uint_eq(S->st.pgfault, 4 + 1);
	/* and the stores after the shared read take no fault */
	access_all('S', 0x50000000);
	ck_assert_uint_eq(S->st.pgfault, 5);
	done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shmem");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, shmem_mprotect_write_takes_no_fault);
	tcase_add_test(tc, fresh_memfd_private_read_fills_holes);
	tcase_add_test(tc, shmem_pages_written_elsewhere_exist);
	suite_add_tcase(s, tc);
	return check_run(s);
}
