/*
 * check_filemap.c - file-backed memory (sim/filemap.c after Linux 6.18
 * mm/filemap.c and mm/memory.c): the page cache shared by every mapping of a
 * file, read faults with fault-around (do_read_fault(), do_fault_around(),
 * filemap_map_pages()) and read-around (do_sync_mmap_readahead()), the COW of
 * private file pages (do_cow_fault(), wp_page_copy()), shared mappings dirtying
 * the cache page (do_shared_fault(), wp_page_shared()), no anonymous THP in file
 * VMAs, and implicit regions first touched by an instruction fetch as file text.
 * Lackey scenarios on the kernel-model fixture (check_common.h: every invariant
 * after every record), and one fed as events with a file identity (mtr v2).
 */
#include <check.h>
#include <stdio.h>

#include "check_common.h"
#include "check_run.h"

#define MB16 (16u << 20)
/* the read_ahead_kb of this project's build machine's disk (/sys/block/vda/queue/) */
#define RA_HOST "os.read_ahead_kb=8192"

/* mmap(NULL, @len, @prot, @flags, fd 3, 0) at @at, then @n loads (@op 'L') or
 * stores ('S') one per page from @at, then @tail. */
static char *file_trace(unsigned len, unsigned prot, unsigned flags, unsigned long at,
			const char *ops, const char *tail)
{
	size_t cap = 16 << 20, n = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n += (size_t)snprintf(t + n, cap - n,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, %u, %u, 3, 0 ) --> [pre-success] Success(0x%lx)\n",
			      len, prot, flags, at);
	for (const char *o = ops; *o; o++)
		for (unsigned long off = 0; off < len; off += 4096)
			n += (size_t)snprintf(t + n, cap - n, " %c %lx,8\n", *o, at + off + 16);
	snprintf(t + n, cap - n, "%s", tail);
	return t;
}

/*
 * The measurement on this machine's Linux 6.18 (its disk's
 * read_ahead_kb is 8192): a 16 MiB private file mapping read one page after
 * another takes 256 faults (16 MiB / 64 KiB): the first read misses and reads
 * the first 8 MiB in (do_sync_mmap_readahead()'s read-around, order 0, its
 * PG_readahead mark at 6 MiB, where async readahead reads the rest in order-2
 * folios), and every 64 KiB window's first read faults for do_fault_around() to
 * map the window's 16 cached pages; no anonymous THP (a file VMA: __thp_vma_allowable_orders() has
 * no anonymous orders for it). Writing every page then takes 4,096 COW faults
 * (do_wp_page() -> wp_page_copy(): a fresh anonymous copy, the old PTE flushed).
 * Main (file mappings backed as anonymous memory) gave 8 faults for the reads (8
 * huge zero PMDs), and 16 faults with 8 THPs for the reads then the stores.
 */
START_TEST(private_file_read_then_write)
{
	char *t = file_trace(MB16, 3, 2, 0x40000000, "L", "");

	check_every = 997;
	run(t, RA_HOST, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 256);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_file_pages, 4096);
	ck_assert_uint_eq(S->st.nr_mapped, 4096);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	done();

	t = file_trace(MB16, 3, 2, 0x40000000, "LS", "");
	run(t, RA_HOST, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 256 + 4096);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 4096); /* the copies */
	ck_assert_uint_eq(S->st.nr_file_pages, 4096); /* the cache keeps the originals */
	ck_assert_uint_eq(S->st.nr_mapped, 0);        /* ... mapped nowhere any more */
	ck_assert_uint_eq(S->st.tlb_invalidations, 4096); /* wp_page_copy(): ptep_clear_flush() */
	done();

	/* a store first: do_cow_fault(), one fault per page and no fault-around */
	t = file_trace(MB16, 3, 2, 0x40000000, "S",
		       "SYSCALL[7,1](11) sys_munmap ( 0x40000000, 16777216 ) --> [pre-success] Success(0x0)\n");
	run(t, RA_HOST, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 4096);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);    /* munmap freed the copies */
	ck_assert_uint_eq(S->st.nr_file_pages, 4096); /* read in by the faults; still cached */
	ck_assert_uint_eq(S->st.nr_mapped, 0);
	done();
	check_every = 1;
}
END_TEST

/*
 * The fault-around window is os.fault_around_bytes aligned in the PTE table,
 * clipped to the VMA and to the table (the PMD): a 16 KiB mapping at 0x401fe000
 * straddles a PMD boundary, so its first read maps 2 pages and the third page
 * faults again. fault_around_bytes 4096: should_fault_around() is false, every
 * page faults. read_ahead_kb 0: a miss reads the page alone, so fault-around
 * finds nothing else cached and every page faults too.
 */
START_TEST(fault_around_window)
{
	char *t = file_trace(16384, 1, 2, 0x401fe000, "L", "");

	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 4); /* read-around clipped to the VMA's pages */
	ck_assert_uint_eq(S->st.nr_mapped, 4);
	done();
	free(t);

	/* a VMA starting mid-window: the window starts at the VMA (from_pte) and is
	 * 16 PTEs long from there, so one fault maps all 16 pages of [0x40008000,
	 * 0x40018000) (an aligned window cut at the VMA would take two) */
	t = file_trace(16 * 4096, 1, 2, 0x40008000, "L", "");
	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	done();
	free(t);

	/* without fault-around a fault maps one page, from 6.18 its whole folio
	 * (finish_fault()), and async readahead makes the folios larger as the read
	 * goes on (ra->order 0, 2, 4, 5 for windows of 32 pages: 24 faults for pages
	 * 0..23, 8 for 24..31, 8 for the order-2 folios of 32..63, 2 for the order-4
	 * ones of 64..95, then one per 32 pages): 47 faults; order-0 pages before
	 * 6.16 (ext4), one fault each */
	t = file_trace(1u << 20, 1, 2, 0x40000000, "L", "");
	run(t, "os.fault_around_bytes=4096", NULL);
	ck_assert_uint_eq(S->st.pgfault, 47);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	done();
	run(t, "os.fault_around_bytes=4096", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.pgfault, 256);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	done();
	run(t, "os.read_ahead_kb=0", NULL);
	ck_assert_uint_eq(S->st.pgfault, 256);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	done();
	run(t, "os.fault_around_bytes=32768", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.pgfault, 32); /* 1 MiB / 32 KiB */
	done();
	/* 6.18: from the order-4 folios on, fault-around maps folios whole */
	run(t, "os.fault_around_bytes=32768", NULL);
	ck_assert_uint_eq(S->st.pgfault, 15);
	done();
	free(t);
}
END_TEST

/*
 * A shared file mapping's store dirties the cache page: do_shared_fault() maps it
 * writable (a store first; no fault-around), wp_page_shared() makes a read-only
 * one writable (a read first). No anonymous page either way.
 */
START_TEST(shared_store_no_anon)
{
	char *t = file_trace(65536, 3, 1, 0x40000000, "S", "");

	run(t, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->st.nr_file_pages, 16);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	done();

	t = file_trace(65536, 3, 1, 0x40000000, "LS", "");
	run(t, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 1 + 16); /* one read fault maps 16; 16 wp faults */
	ck_assert_uint_eq(S->st.nr_anon_pages, 0);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	done();

	/* a private one: each store copies (wp_page_copy()) */
	t = file_trace(65536, 3, 2, 0x40000000, "LS", "");
	run(t, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 1 + 16);
	ck_assert_uint_eq(S->st.nr_anon_pages, 16);
	ck_assert_uint_eq(S->st.nr_mapped, 0);
	done();
}
END_TEST

/* Replay @recs (events in @ev) on the default THP machine. */
static void run_batch(const struct trace_rec *recs, size_t n, const struct os_event *ev, size_t nev)
{
	struct sim_config c;
	struct err e = { 0 };
	struct trace_batch b = { recs, n, ev, nev };

	config_defaults(&c);
	c.memory = 256ULL << 20;
	c.mode = MODE_THP;
	ck_assert_msg(config_validate(&c, "--set", &e) == 0, "%s", e.msg);
	S = calloc(1, sizeof(*S));
	ck_assert_msg(sim_init(S, &c, &e) == 0, "%s", e.msg);
	S->k.trace_name = "batch";
	ck_assert_msg(sim_run_batch(S, &b, &e) == 0, "%s", e.msg);
	sim_check_invariants(S);
	sim_finish(S);
}

/*
 * Two mappings of one file (mtr v2: the same file identity) share its cache
 * pages: the second mapping's reads find them cached, fault-around maps them, and
 * nr_file_pages and nr_mapped count each page once. Two lackey fd mmaps (no
 * identity) are two files: twice the pages.
 */
START_TEST(same_file_shares_cache)
{
	struct os_event ev[2] = {
		{ .kind = EV_MMAP, .prot = 1, .flags = MAP_PRIVATE_, .fd = 3, .addr = 0x40000000, .len = 65536, .file = 1 },
		{ .kind = EV_MMAP, .prot = 1, .flags = MAP_PRIVATE_, .fd = 4, .addr = 0x50000000, .len = 65536, .file = 1 },
	};
	struct trace_rec r[2 + 32];
	size_t n = 0;
	char *t;

	r[n++] = (struct trace_rec){ 0, 0, R_EVENT };
	r[n++] = (struct trace_rec){ 0, 1, R_EVENT };
	for (unsigned i = 0; i < 16; i++) {
		r[n++] = (struct trace_rec){ 0x40000000 + i * 4096, 8, R_LOAD };
		r[n++] = (struct trace_rec){ 0x50000000 + i * 4096, 8, R_LOAD };
	}
	run_batch(r, n, ev, 2);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 16);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	ck_assert_uint_eq(S->k.fm.nr_ptes, 32);
	done();

	/* different identities: two files */
	ev[1].file = 2;
	run_batch(r, n, ev, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 32);
	ck_assert_uint_eq(S->st.nr_mapped, 32);
	done();

	t = file_trace(65536, 1, 2, 0x40000000, "L",
		       "SYSCALL[7,1](9) sys_mmap ( 0x0, 65536, 1, 2, 3, 0 ) --> [pre-success] Success(0x50000000)\n"
		       " L 50000000,8\n");
	run(t, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 32);
	ck_assert_uint_eq(S->st.nr_mapped, 32);
	done();
}
END_TEST

/*
 * Lackey traces without initial mappings: an implicit region first touched by an
 * instruction fetch is program text, a private file mapping: no THP in THP mode
 * (main, anonymous: 1 fault on the huge zero page, and a THP at the first store),
 * read faults with fault-around (512 pages of a 2 MiB granule in 32 faults). One first touched by a store stays anonymous and gets its THP.
 */
START_TEST(ifetch_implicit_is_text)
{
	size_t cap = 1 << 20, n = 0;
	char *t = malloc(cap);

	for (unsigned long off = 0; off < (2ul << 20); off += 4096)
		n += (size_t)snprintf(t + n, cap - n, "I  %08lx,4\n", 0x400000 + off);
	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 32);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_file_pages, 512);
	ck_assert(vma_find(&S->k.mm->vmas, 0x400000)->flags & VM_FILE);
	done();

	/* a store into it (data beside the text) copies that page, as .data's would */
	snprintf(t + n, cap - n, " S 400010,8\n");
	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 33);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	done();
	free(t);

	run(" S 400000,8\nI  00400010,4\n", NULL);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 0);
	done();
}
END_TEST

/*
 * No anonymous THP in a file VMA even when madvised, and, before 6.16 (no
 * large folios in ext4) with os.thp.read_only_thp_for_fs off
 * (CONFIG_READ_ONLY_THP_FOR_FS unset, the default), khugepaged does not
 * collapse it: 64 faults, nothing allocated. With the switch on (check_rofs.c has the details) the madvised read-only text
 * is collapsed into file THPs, never anonymous ones: with a khugepaged pass
 * after every record, the first read faults and reads both 2M in
 * (VM_HUGEPAGE's read-around: two PMD-order folios' worth, in order-0 pages
 * before 6.16), the pass after it collapses both, and the first read of each 2M
 * after that maps its THP with a PMD, 3 faults in all.
 */
START_TEST(no_thp_in_file_vma)
{
	char *t = file_trace(4u << 20, 1, 2, 0x40000000, "L", "");
	char *m = malloc(strlen(t) + 256);

	/* the madvise right after the mmap line */
	const char *nl = strchr(t, '\n') + 1;

	snprintf(m, strlen(t) + 256, "%.*s%s%s", (int)(nl - t), t, MADV_HUGE_4M, nl);
	/* 6.18: ext4's large folios let VM_HUGEPAGE's read-around
	 * (do_sync_mmap_readahead()) read two PMD-order folios, the second marked,
	 * and each read fault maps one by its PMD (filemap_map_pmd()): the first
	 * a major fault, the second async readahead (nothing left to read), file
	 * THPs that no collapse made, still no anonymous one */
	run(m, "os.khugepaged.scan_sleep_millisecs=0", NULL);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 2);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 1024);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	done();
	/* before 6.16, order-0 pages (the 1024 of the two folios' window) */
	run(m, "os.khugepaged.scan_sleep_millisecs=0", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.pgfault, 64);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 0);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 0);
	done();

	run(m, "os.khugepaged.scan_sleep_millisecs=0", "os.thp.read_only_thp_for_fs=true", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.pgfault, 3);
	ck_assert_uint_eq(S->st.thp_fault_alloc, 0);
	ck_assert_uint_eq(S->st.thp_collapse_alloc, 2);
	ck_assert_uint_eq(S->st.nr_anon_transparent_hugepages, 0);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 2);
	ck_assert_uint_eq(S->st.thp_file_mapped, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 1024);
	done();
	free(m);
	free(t);
}
END_TEST

/*
 * mprotect(PROT_READ | PROT_WRITE) of a private file mapping read before leaves
 * the cache PTEs read-only (change_pte_range(): can_change_pte_writable() refuses
 * a page that is not exclusively anonymous), so the store still copies: 1 read
 * fault, 1 COW fault. mremap moves the PTEs and the file offset with the VMA: the
 * moved pages stay mapped (no new fault for them), and a read of the grown tail
 * finds its pages cached by the first read-around (file pages 16, not more).
 */
START_TEST(mprotect_and_mremap)
{
	char *t = file_trace(65536, 1, 2, 0x40000000, "L",
			     "SYSCALL[7,1](10) sys_mprotect ( 0x40000000, 65536, 3 ) --> [pre-success] Success(0x0)\n"
			     " S 40000010,8\n");

	run(t, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_anon_pages, 1);
	ck_assert_uint_eq(S->st.nr_mapped, 15);
	done();

	/* 32 KiB mapped, read (read-around brings the VMA's 8 pages), moved to
	 * 0x50000000 and grown to 64 KiB: the tail's read takes one fault, reads its 8
	 * pages in and maps them; the moved 8 are still mapped */
	t = file_trace(32768, 1, 2, 0x40000000, "L",
		       "SYSCALL[7,1](25) sys_mremap ( 0x40000000, 32768, 65536, 0x1 ) --> [pre-success] Success(0x50000000)\n"
		       " L 50000010,8\n L 50008010,8\n");
	run(t, NULL);
	free(t);
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 16);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	ck_assert_uint_eq(vma_find(&S->k.mm->vmas, 0x50008000)->pgoff, 0);
	done();
}
END_TEST

/* One load at @at + @off after mmap of @len bytes of fd 3 at @at (@flags: 1 shared, 2 private). */
static char *one_load(unsigned len, unsigned flags, unsigned long at, unsigned long off)
{
	char *t = malloc(512);

	ck_assert_ptr_nonnull(t);
	snprintf(t, 512,
		 "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, 3, %u, 3, 0 ) --> [pre-success] Success(0x%lx)\n"
		 " L %lx,8\n", len, flags, at, at + off + 16);
	return t;
}

/* The frames of file pages [@off, @off + 2^@order) of the trace's file are one
 * aligned block of that order, as a folio from the buddy allocator. */
static void assert_folio(uint64_t off, unsigned order)
{
	pfn_t head = filemap_lookup(&S->k, FILE_ID_OWN, off);

	ck_assert_uint_ne(head, PFN_NONE);
	ck_assert_uint_eq(head & ((1ULL << order) - 1), 0);
	for (uint64_t i = 0; i < (1ULL << order); i++) {
		ck_assert_uint_eq(filemap_lookup(&S->k, FILE_ID_OWN, off + i), head + i);
		ck_assert_uint_eq(filemap_folio_order(&S->k.fm, head + i), order);
	}
}

/*
 * Large page-cache folios (os.file_cache_folio_size, a warm cache): on 6.18 a
 * write fault in a shared mapping maps the whole folio writable (finish_fault(),
 * 19773df031bc; tests/native.sh file-shared-large: 512 KiB written in 64 KiB
 * folios, 8 faults), fault-around maps each folio it meets whole where it lies
 * inside the VMA and one page table (filemap_map_pages(), 357b92761d94;
 * native text-large: one fault maps 1 MiB), and so does a read fault without
 * fault-around. Before 6.16 ext4 had no large folios: order-0 pages whatever
 * the size says (os.kernel 6.12).
 */
START_TEST(large_folios)
{
	char *t = file_trace(MB16 / 16, 3, 1, 0x40000000, "S", "");

	run(t, "os.file_cache=warm", "os.file_cache_folio_size=64K", NULL);
	ck_assert_uint_eq(S->st.pgfault, 16);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	ck_assert_uint_eq(S->st.nr_mapped, 256);
	for (uint64_t off = 0; off < 256; off += 16)
		assert_folio(off, 4);
	done();
	run(t, "os.file_cache=warm", "os.file_cache_folio_size=64K", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.pgfault, 256);
	ck_assert_uint_eq(S->st.nr_mapped, 256);
	assert_folio(0, 0);
	done();
	free(t);

	/* fault-around: the 1 MiB folio of page 288 (pages 256..511), whole */
	t = one_load(4u << 20, 2, 0x40000000, 288 * 4096);
	run(t, "os.file_cache=warm", "os.file_cache_folio_size=1M", NULL);
	ck_assert_uint_eq(S->st.pgfault, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	ck_assert_uint_eq(S->st.nr_mapped, 256);
	assert_folio(256, 8);
	done();
	/* 6.12: order-0 pages, the 64 KiB window */
	run(t, "os.file_cache=warm", "os.file_cache_folio_size=1M", "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.nr_file_pages, 16);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	done();
	/* no fault-around: finish_fault() maps the folio */
	run(t, "os.file_cache=warm", "os.file_cache_folio_size=1M", "os.fault_around_bytes=4K", NULL);
	ck_assert_uint_eq(S->st.nr_mapped, 256);
	done();
	free(t);

	/* a folio across a PMD boundary of the address space (the mapping at +1.5 MiB):
	 * fault-around maps the window's part alone, and a fault without it the page */
	t = one_load(4u << 20, 2, 0x40180000, 0);
	run(t, "os.file_cache=warm", "os.file_cache_folio_size=1M", NULL);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	done();
	run(t, "os.file_cache=warm", "os.file_cache_folio_size=1M", "os.fault_around_bytes=4K", NULL);
	ck_assert_uint_eq(S->st.nr_mapped, 1);
	done();
	free(t);

	/* a folio beyond the VMA's end (a 64 KiB shared mapping): the window alone */
	t = one_load(65536, 1, 0x40000000, 0);
	run(t, "os.file_cache=warm", "os.file_cache_folio_size=1M", NULL);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	ck_assert_uint_eq(S->st.nr_mapped, 16);
	done();
	free(t);

	/* a cold cache reads around in order-0 folios (do_sync_mmap_readahead(): ra->order = 0):
	 * pages 272..303, PG_readahead on page 296, which fault-around skips
	 * (next_uptodate_folio()): 15 of the window's 16 pages mapped */
	t = one_load(4u << 20, 2, 0x40000000, 288 * 4096);
	run(t, "os.file_cache_folio_size=1M", NULL);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 32);
	ck_assert_uint_eq(S->st.nr_mapped, 15);
	assert_folio(288, 0);
	done();
	free(t);
}
END_TEST

/* mmap of a @pages-page read-only private file at 0x40000000, @madv (an madvise
 * advice, 0: none) over it, then a load of each page of @at[0..@n). */
static char *loads_at(unsigned pages, unsigned madv, const unsigned *at, size_t n)
{
	size_t cap = 256 + n * 32, k = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	k += (size_t)snprintf(t + k, cap - k,
			      "SYSCALL[7,1](9) sys_mmap ( 0x0, %u, 1, 2, 3, 0 ) --> [pre-success] Success(0x40000000)\n",
			      pages * 4096);
	if (madv)
		k += (size_t)snprintf(t + k, cap - k,
				      "SYSCALL[7,1](28) sys_madvise ( 0x40000000, %u, %u ) --> [pre-success] Success(0x0)\n",
				      pages * 4096, madv);
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(t + k, cap - k, " L %lx,8\n", 0x40000000UL + at[i] * 4096UL + 16);
	return t;
}

static bool marked(uint64_t off)
{
	pfn_t pfn = filemap_lookup(&S->k, FILE_ID_OWN, off);

	return pfn != PFN_NONE && filemap_readahead_marked(&S->k, pfn);
}

/*
 * A sequential read of a 1 MiB file from a cold cache (Linux 6.18, ext4 large
 * folios, read_ahead_kb 128: ra_pages 32, fault-around 16 pages). The first
 * load misses (major): read-around reads pages 0..31 (do_sync_mmap_readahead():
 * from pgoff - 16, clipped at 0; order 0) with PG_readahead on page 24 (the
 * last quarter async). Fault-around maps 0..15, then 16..31 but page 24, which
 * next_uptodate_folio() skips, so page 24 faults (minor): do_async_mmap_readahead()
 * -> page_cache_async_ra() at the expected index moves the window to 32..63 with
 * ra->order 2 and the whole window async (the mark on its first folio). Each mark
 * met does the same with the order 2 higher, capped by ilog2 of the 32-page
 * window: orders 0, 2, 4, 5, 5, ... From the order-5 folios on, fault-around maps
 * each folio whole (6.18): faults at pages 0, 16, 24, 32, 48, 64, 80, 96, 128,
 * 160, 192, 224: 12, one major. The last round's window (256..287) lies past the
 * end of the file: nothing read, no mark left. 6.12: the same windows in order-0
 * pages (no ext4 large folios): a fault per 16 pages plus the mark at 24 (the
 * others fall on a window's first page): 17.
 */
START_TEST(readahead_sequential)
{
	unsigned at[256];
	char *t;
	const struct fm_ra *ra;

	for (unsigned i = 0; i < 256; i++)
		at[i] = i;
	t = loads_at(256, 0, at, 256);
	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 12);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	ck_assert_uint_eq(S->st.nr_mapped, 256);
	assert_folio(0, 0);
	assert_folio(31, 0);
	for (unsigned off = 32; off < 64; off += 4)
		assert_folio(off, 2);
	assert_folio(64, 4);
	assert_folio(80, 4);
	for (unsigned off = 96; off < 256; off += 32)
		assert_folio(off, 5);
	for (unsigned off = 0; off < 256; off++)
		ck_assert(!marked(off));
	ra = filemap_ra(&S->k, FILE_ID_OWN);
	ck_assert_ptr_nonnull(ra);
	ck_assert_uint_eq(ra->start, 256);
	ck_assert_uint_eq(ra->size, 32);
	ck_assert_uint_eq(ra->async_size, 32);
	ck_assert_uint_eq(ra->order, 5);
	ck_assert_uint_eq(ra->mmap_miss, 0);
	done();

	/* the first two loads alone: the mark on page 24 is still there, unmapped */
	{
		char *two = loads_at(256, 0, at, 17);

		run(two, NULL);
		free(two);
	}
	ck_assert_uint_eq(S->st.pgfault, 2);
	ck_assert_uint_eq(S->st.nr_file_pages, 32);
	ck_assert_uint_eq(S->st.nr_mapped, 31);
	ck_assert(marked(24));
	ck_assert_uint_eq(filemap_ra(&S->k, FILE_ID_OWN)->order, 0);
	done();

	run(t, "os.kernel=6.12", NULL);
	ck_assert_uint_eq(S->st.pgfault, 17);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 256);
	assert_folio(128, 0);
	ck_assert_uint_eq(filemap_ra(&S->k, FILE_ID_OWN)->order, 0);
	done();

	/* 64 MiB with this machine's read_ahead_kb (8192: windows of 2048 pages):
	 * read-around 0..2047 (order 0, the mark at 1536), then windows of order 2,
	 * 4, 6, 8 and three of 9 (capped at HPAGE_PMD_ORDER: file THPs, each mapped
	 * by its PMD): 384 faults for the first 6144 pages (16 a window), 32 for the
	 * order-6 folios, 8 for the order-8 ones, 12 for the THPs: 436, one major, as
	 * tests/native.sh file-seq-cold-64m measured on 6.18.44 */
	free(t);
	t = file_trace(64u << 20, 1, 2, 0x40000000, "L", "");
	run(t, RA_HOST, NULL);
	ck_assert_uint_eq(S->st.pgfault, 436);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	ck_assert_uint_eq(S->st.nr_file_pages, 16384);
	ck_assert_uint_eq(S->st.nr_file_hugepages, 12);
	ck_assert_uint_eq(S->st.thp_file_mapped, 12);
	assert_folio(2047, 0);
	assert_folio(2048, 2);
	assert_folio(4096, 4);
	assert_folio(6144, 6);
	assert_folio(8192, 8);
	ck_assert(filemap_is_thp(&S->k, filemap_lookup(&S->k, FILE_ID_OWN, 10240)));
	ck_assert_uint_eq(filemap_ra(&S->k, FILE_ID_OWN)->order, 9);
	done();

	/* MADV_SEQUENTIAL: page_cache_sync_ra() at index 0 reads the initial window
	 * (32 pages, the second half async: the mark on page 16, a window's first
	 * page), then as above: faults at 0, 16, 32, 48, 64, 80, 96, 128, 160, 192, 224 */
	free(t);
	t = loads_at(256, 2, at, 256);
	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 11);
	ck_assert_uint_eq(S->st.pgmajfault, 1);
	assert_folio(0, 0);
	assert_folio(32, 2);
	assert_folio(64, 4);
	assert_folio(96, 5);
	done();
	free(t);
}
END_TEST

/*
 * Reads at scattered pages of a 4 MiB file, cold (read_ahead_kb 128): each miss
 * is major and reads the 32 pages around it (mmap_miss +1, fault-around's 16
 * pages -16: back to 0), marking the page 8 after it; a later load of such a
 * mark (page 520, which fault-around left unmapped) is a minor fault on a
 * PG_readahead folio that is not where the last window (around page 300)
 * expects it: page_cache_async_ra() takes it as an interleaved stream, starts
 * the window at the next uncached page (528: page_cache_next_miss()), its size
 * the old async part plus the request ramped up (get_next_ra_size(8 + 32) = 32),
 * order 2. MADV_RANDOM: no read-around, no marks, one page a fault. With
 * fault-around off, the misses only count up: above MMAP_LOTSAMISS (100)
 * do_sync_mmap_readahead() stops reading around (the 101st and 102nd miss read
 * their page alone).
 */
START_TEST(readahead_random)
{
	static const unsigned at[] = { 512, 40, 900, 300, 520 };
	unsigned far[102];
	char *t = loads_at(1024, 0, at, 5);
	const struct fm_ra *ra;

	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 5);
	ck_assert_uint_eq(S->st.pgmajfault, 4);
	ck_assert_uint_eq(S->st.nr_file_pages, 4 * 32 + 32);
	/* each window's 16 pages but the marks inside them (520 and 908), then 520 */
	ck_assert_uint_eq(S->st.nr_mapped, 4 * 16 - 2 + 1);
	ck_assert(marked(48) && marked(908) && marked(308));
	ck_assert(!marked(520));
	for (unsigned off = 528; off < 560; off += 4)
		assert_folio(off, 2);
	ck_assert(marked(528));
	ra = filemap_ra(&S->k, FILE_ID_OWN);
	ck_assert_uint_eq(ra->start, 528);
	ck_assert_uint_eq(ra->size, 32);
	ck_assert_uint_eq(ra->order, 2);
	ck_assert_uint_eq(ra->mmap_miss, 0);
	done();
	free(t);

	t = loads_at(1024, 1, at, 5);
	run(t, NULL);
	ck_assert_uint_eq(S->st.pgfault, 5);
	ck_assert_uint_eq(S->st.pgmajfault, 5);
	ck_assert_uint_eq(S->st.nr_file_pages, 5);
	done();
	free(t);

	for (unsigned i = 0; i < 102; i++)
		far[i] = 64 * i + 32;
	t = loads_at(102 * 64, 0, far, 102);
	run(t, "os.fault_around_bytes=4K", NULL);
	ck_assert_uint_eq(S->st.pgfault, 102);
	ck_assert_uint_eq(S->st.pgmajfault, 102);
	ck_assert_uint_eq(S->st.nr_file_pages, 100 * 32 + 2);
	ck_assert_uint_eq(filemap_ra(&S->k, FILE_ID_OWN)->mmap_miss, 102);
	done();
	free(t);
}
END_TEST

/* os.file_cache_folio_size: a power of two from 4K to 1M (orders 0..8). */
START_TEST(folio_size_config)
{
	struct sim_config c;
	struct err e = { 0 };

	config_defaults(&c);
	ck_assert_uint_eq(c.file_cache_folio_size, 0); /* unset: the default, 4K (a quiet key) */
	ck_assert_int_eq(config_set(&c, "os.file_cache_folio_size=1M", &e), 0);
	ck_assert_uint_eq(c.file_cache_folio_size, 1u << 20);
	ck_assert_int_ne(config_set(&c, "os.file_cache_folio_size=2M", &e), 0);
	ck_assert_str_eq(e.msg, "os.file_cache_folio_size: 2M is not a power of two in 4K..1M");
	ck_assert_int_ne(config_set(&c, "os.file_cache_folio_size=12K", &e), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("filemap");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, private_file_read_then_write);
	tcase_add_test(tc, fault_around_window);
	tcase_add_test(tc, shared_store_no_anon);
	tcase_add_test(tc, same_file_shares_cache);
	tcase_add_test(tc, ifetch_implicit_is_text);
	tcase_add_test(tc, no_thp_in_file_vma);
	tcase_add_test(tc, mprotect_and_mremap);
	tcase_add_test(tc, large_folios);
	tcase_add_test(tc, folio_size_config);
	tcase_add_test(tc, readahead_sequential);
	tcase_add_test(tc, readahead_random);
	suite_add_tcase(s, tc);
	return check_run(s);
}
