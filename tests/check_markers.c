/*
 * check_markers.c - markers (mtr version 2 MARKER records, written by mmusim's
 * Valgrind tool for each getppid()) from the bytes to `run --steps` rows, and
 * `config host`'s reading of sysfs text (sim/hostcfg.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "config.h"
#include "hostcfg.h"
#include "mmusim.h"
#include "provenance.h"
#include "trace.h"

static char tmpdir[] = "/tmp/check_markers_XXXXXX";

#include "check_files.h"

/* A reference, form 2 (7-byte address): tag 2 << 6 | size << 2 | kind. */
#define REF(kind, size, a)                                                                  \
	(unsigned char)(0x80 | (size) << 2 | (kind)), (a) & 0xff, ((a) >> 8) & 0xff,        \
		((a) >> 16) & 0xff, ((a) >> 24) & 0xff, 0, 0, 0
#define MTR_HDR(v) 0x89, 'M', 'T', 'R', '\r', '\n', 0x1a, '\n', (v), 0, 0, 0, 0, 0, 0, 0

/*
 * Version 2: an initial anonymous mapping of 64 KiB at 0x10000000 (MAP: start,
 * len, prot 3, flags 0x22, dev, ino, offset, no name), marker 0, stores to
 * three of its pages, marker 1, a load from a fourth, marker 2; END counts 8.
 */
static const unsigned char v2[] = {
	MTR_HDR(2),
	0xc3, 0x80, 0x80, 0x80, 0x80, 0x01, 0x80, 0x80, 0x04, 3, 0x22, 0, 0, 0, 0,
	0xc8, 110,
	REF(2, 8, 0x10000000), REF(2, 8, 0x10001000), REF(2, 8, 0x10002000),
	0xc8, 110,
	REF(1, 8, 0x10003000),
	0xc8, 110,
	0xc0, 8,
};

struct seen {
	unsigned kinds[16]; /* record kind, or 8 + event kind */
	size_t n;
	uint64_t marker_addr[4], marker_nr[4];
	unsigned nmarkers;
};

static void read_all(const char *path, struct seen *s)
{
	struct err e = { 0 };
	struct trace_reader *r = trace_open(path, TF_AUTO, &e);
	struct trace_batch b;
	int n;

	ck_assert_msg(r != NULL, "%s", e.msg);
	memset(s, 0, sizeof(*s));
	while ((n = trace_next(r, &b, &e)) > 0)
		for (size_t i = 0; i < b.n; i++) {
			const struct trace_rec *t = &b.recs[i];
			unsigned k = t->kind;

			if (k == R_EVENT) {
				const struct os_event *o = &b.ev[t->size];

				k = 8 + o->kind;
				if (o->kind == EV_MARKER) {
					ck_assert_uint_lt(s->nmarkers, 4);
					s->marker_addr[s->nmarkers] = o->addr;
					s->marker_nr[s->nmarkers++] = o->advice;
				}
			}
			ck_assert_uint_lt(s->n, 16);
			s->kinds[s->n++] = k;
		}
	ck_assert_msg(n == 0, "%s", e.msg);
	ck_assert_uint_eq(r->markers, s->nmarkers);
	trace_close(r);
}

static void check_order(const struct seen *s)
{
	/* the initial mmap, marker, 3 stores, marker, a load, marker: in that order */
	static const unsigned want[] = { 8 + EV_MMAP, 8 + EV_MARKER, R_STORE, R_STORE, R_STORE,
					 8 + EV_MARKER, R_LOAD, 8 + EV_MARKER };

	ck_assert_uint_eq(s->n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < s->n; i++)
		ck_assert_uint_eq(s->kinds[i], want[i]);
	ck_assert_uint_eq(s->nmarkers, 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(s->marker_addr[i], i);
		ck_assert_uint_eq(s->marker_nr[i], 110);
	}
}

START_TEST(test_read_and_convert)
{
	struct err e = { 0 };
	struct trace_reader *r;
	struct seen s;

	write_file(tmp_path("m.mtr"), v2, sizeof(v2));
	read_all(tmp_path("m.mtr"), &s);
	check_order(&s);
	/* trace convert keeps them (a version 2 source writes version 2) */
	r = trace_open(tmp_path("m.mtr"), TF_AUTO, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	ck_assert_int_eq(mtr_write_all(r, tmp_path("c.mtr.zst"), &e), 0);
	read_all(tmp_path("c.mtr.zst"), &s);
	check_order(&s);
}
END_TEST

START_TEST(test_marker_errors)
{
	/* version 1 has no MARKER: tag 0xc8 is unknown there */
	unsigned char v1[] = { MTR_HDR(1), REF(2, 8, 0x10000000), 0xc8, 110, 0xc0, 2 };
	/* a truncated MARKER (its varint runs off the end) */
	unsigned char cut[] = { MTR_HDR(2), 0xc8, 0x80 };
	struct err e = { 0 };
	struct trace_reader *r;
	struct trace_batch b;

	write_file(tmp_path("v1.mtr"), v1, sizeof(v1));
	r = trace_open(tmp_path("v1.mtr"), TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(trace_next(r, &b, &e), -1);
	ck_assert_str_eq(e.msg, "corrupt mtr trace at byte 24: unknown tag");
	trace_close(r);

	memset(&e, 0, sizeof(e));
	write_file(tmp_path("cut.mtr"), cut, sizeof(cut));
	r = trace_open(tmp_path("cut.mtr"), TF_AUTO, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(trace_next(r, &b, &e), -1);
	ck_assert_str_eq(e.msg, "truncated mtr trace at byte 18");
	trace_close(r);
}
END_TEST

START_TEST(test_writer_needs_v2)
{
	struct trace_rec rec = { .addr = 0, .size = 0, .kind = R_EVENT };
	struct os_event ev = { .kind = EV_MARKER, .advice = 110, .fd = -1 };
	struct trace_batch b = { &rec, 1, &ev, 1 };
	struct err e = { 0 };
	struct mtr_writer *w = mtr_writer_open(tmp_path("w.mtr"), &e);

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(mtr_writer_put(w, &b, &e), -1);
	ck_assert_str_eq(e.msg, "a marker needs mtr version 2 (a source with mappings)");
	mtr_writer_close(w, false, NULL);
	ck_assert_int_ne(access(tmp_path("w.mtr"), F_OK), 0);
}
END_TEST

/*
 * The rows: marker 0 before any fault; three write faults (12 KiB); a read
 * fault on the zero page (no RSS). Two modes: their rows come batch by batch,
 * and the trace is one batch.
 */
static const char steps_csv[] =
	"mode,marker,process,pgfault,pgmajfault,rss_bytes,file_rss_bytes,anon_huge_bytes,thp_fault_alloc,"
	"thp_fault_fallback,thp_split_pmd,thp_collapse_alloc,thp_zero_page_alloc,thp_split_page,"
	"pglazyfree,pglazyfreed,thp_deferred_split_page\n"
	"base,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
	"base,1,0,3,0,12288,0,0,0,0,0,0,0,0,0,0,0\n"
	"base,2,0,4,0,12288,0,0,0,0,0,0,0,0,0,0,0\n"
	"thp,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
	"thp,1,0,3,0,12288,0,0,0,0,0,0,0,0,0,0,0\n"
	"thp,2,0,4,0,12288,0,0,0,0,0,0,0,0,0,0,0\n";

/*
 * Cut every line of @buf after its 17th field (the counters), in place; the
 * cut-off fields of each line into @prov (the last line's), NUL-terminated.
 */
static void cut_prov(char *buf, char *prov, size_t n)
{
	char *w = buf;

	for (char *line = buf; *line;) {
		char *nl = strchr(line, '\n'), *p = line;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		unsigned commas = 0;

		while (p < line + len && commas < 17)
			if (*p++ == ',')
				commas++;
		snprintf(prov, n, "%.*s", (int)(line + len - p), p);
		memmove(w, line, (size_t)(p - line - (commas == 17)));
		w += p - line - (commas == 17);
		*w++ = '\n';
		line = nl ? nl + 1 : line + len;
	}
	*w = '\0';
}

START_TEST(test_steps_rows)
{
	static const char *const sets[] = { "os.memory=256M" };
	struct mmusim *m;
	char got[2048];
	size_t n;
	FILE *f = tmpfile();

	ck_assert_ptr_nonnull(f);
	write_file(tmp_path("m.mtr"), v2, sizeof(v2));
	ck_assert_int_eq(mmusim_create(&m, &(struct mmusim_options){ .sets = sets, .nsets = 1,
								   .modes = "base,thp" }), 0);
	ck_assert_int_eq(mmusim_steps(m, f), 0);
	ck_assert_msg(mmusim_replay(m, tmp_path("m.mtr"), NULL) == 0, "%s", mmusim_error(m));
	mmusim_destroy(m);
	rewind(f);
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	fclose(f);
	{
		char prov[256], want[256];

		cut_prov(got, prov, sizeof(prov));
		/* the last row's provenance: the thp simulator's (its config hash), the input's id */
		ck_assert_str_eq(got, steps_csv);
		ck_assert_ptr_nonnull(strstr(prov, ",content:"));
		snprintf(want, sizeof(want), "%s,", provenance_version());
		ck_assert_msg(!strncmp(prov, want, strlen(want)), "provenance '%s'", prov);
	}
}
END_TEST

/* ---------------------------------------------------------------- config host */

static int sets_of(const struct hostcfg_text *t, char (*out)[64], struct err *e)
{
	memset(out, 0, HOSTCFG_MAX * 64);
	return hostcfg_sets(t, out, e);
}

START_TEST(test_hostcfg_sets)
{
	struct hostcfg_text t = {
		.enabled = "always [madvise] never\n",
		.defrag = "always defer defer+madvise [madvise] never\n",
		.use_zero_page = "1\n",
		.khugepaged = { "4096\n", "10000\n", "60000\n", "511\n", "64\n", "256\n", "1\n" },
		.cmdline = "console=ttyS0 quiet pvm_no_zero_page=1 tsc=unstable\n",
		.release = "6.18.44-fc-v1272",
	};
	static const char *const want[] = {
		"os.mode=thp", "os.thp.enabled=madvise", "os.thp.defrag=madvise",
		"os.thp.use_zero_page=true", "os.khugepaged.pages_to_scan=4096",
		"os.khugepaged.scan_sleep_millisecs=10000", "os.khugepaged.alloc_sleep_millisecs=60000",
		"os.khugepaged.max_ptes_none=511", "os.khugepaged.max_ptes_swap=64",
		"os.khugepaged.max_ptes_shared=256", "os.khugepaged.defrag=true", "os.zero_page=false",
		"os.kernel=6.18",
	};
	char out[HOSTCFG_MAX][64];
	struct err e = { 0 };
	int n = sets_of(&t, out, &e);

	ck_assert_int_eq(n, (int)(sizeof(want) / sizeof(want[0])));
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(out[i], want[i]);

	/* nothing readable: the THP model alone; an unmodelled release; a readable debugfs */
	t = (struct hostcfg_text){ .release = "6.1.0-13-amd64", .cmdline = "pvm_no_zero_page=0\n",
				   .fault_around = "4096\n" };
	n = sets_of(&t, out, &e);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(out[0], "os.mode=thp");
	ck_assert_str_eq(out[1], "os.fault_around_bytes=4096");
	/* the word must be whole */
	t = (struct hostcfg_text){ .cmdline = "xpvm_no_zero_page=1 pvm_no_zero_page=10" };
	ck_assert_int_eq(sets_of(&t, out, &e), 1);
	/* /proc/swaps: no device is no swap; devices' sizes (KiB) add up; other text is refused */
	t = (struct hostcfg_text){ .swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" };
	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.swap.size=0");
	t.swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		  "/dev/zram0                              partition\t4194300\t\t0\t\t100\n"
		  "/swapfile                               file\t\t1048572\t\t12\t\t-2\n";
	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.swap.size=5368700928");
	t.swaps = "Filename Type Size\n/dev/sda2 partition lots\n";
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/proc/swaps");
}
END_TEST

/* transparent_hugepage/shrink_underused (6.12+): 0 or 1; absent on older kernels; other text refused */
START_TEST(test_hostcfg_shrink_underused)
{
	char out[HOSTCFG_MAX][64];
	struct err e = { 0 };
	struct hostcfg_text t = { .shrink_underused = "0\n" };

	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.thp.shrink_underused=false");
	t.shrink_underused = "1\n";
	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.thp.shrink_underused=true");
	t.shrink_underused = NULL;
	ck_assert_int_eq(sets_of(&t, out, &e), 1);
	t.shrink_underused = "2\n";
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/sys/kernel/mm/transparent_hugepage/shrink_underused");
	ck_assert_str_eq(e.msg, "unexpected text");
}
END_TEST

/* hugepages-<size>kB/enabled of every anonymous order the kernel offers (6.8+) */
START_TEST(test_hostcfg_mthp_sizes)
{
	char out[HOSTCFG_MAX][64];
	struct err e = { 0 };
	struct hostcfg_text t = { 0 };

	t.size_enabled[2] = "always inherit madvise [never]\n";
	t.size_enabled[4] = "[always] inherit madvise never\n";
	t.size_enabled[9] = "always [inherit] madvise never\n";
	ck_assert_int_eq(sets_of(&t, out, &e), 4);
	ck_assert_str_eq(out[1], "os.thp.sizes.16K.enabled=never");
	ck_assert_str_eq(out[2], "os.thp.sizes.64K.enabled=always");
	ck_assert_str_eq(out[3], "os.thp.sizes.2M.enabled=inherit");
	t.size_enabled[8] = "always inherit madvise never\n";
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.msg, "unexpected text in 1024kB/enabled");
}
END_TEST

/* The zero pages as the running kernel has them: the probe wins over the command line,
 * the huge zero page is there once /proc/vmstat has counted its allocation. */
START_TEST(test_hostcfg_zero_pages)
{
	char out[HOSTCFG_MAX][64];
	struct err e = { 0 };
	struct hostcfg_text t = { .cmdline = "quiet pvm_no_zero_page=1\n", .zero_page = 1 };

	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.zero_page=true");
	t = (struct hostcfg_text){ .cmdline = "quiet\n", .zero_page = -1 };
	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.zero_page=false");
	t = (struct hostcfg_text){ .vmstat = "nr_free_pages 5\nthp_zero_page_alloc 1\n"
					     "thp_zero_page_alloc_failed 0\n" };
	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.thp.huge_zero_allocated=true");
	t.vmstat = "thp_zero_page_alloc 0\nthp_zero_page_alloc_failed 3\n";
	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.thp.huge_zero_allocated=false");
	/* no THP counters (CONFIG_TRANSPARENT_HUGEPAGE off): the key keeps its default */
	t.vmstat = "nr_free_pages 5\nthp_zero_page_alloc_failed 3\n";
	ck_assert_int_eq(sets_of(&t, out, &e), 1);
	t.vmstat = "nr_free_pages 5\nthp_zero_page_alloc x\n";
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/proc/vmstat");
	/* whatever this kernel does, the probe answers */
	ck_assert(hostcfg_probe_zero_page() != 0);
}
END_TEST

START_TEST(test_hostcfg_bad_text)
{
	struct hostcfg_text t = { .enabled = "always madvise never\n" };
	char out[HOSTCFG_MAX][64];
	struct err e = { 0 };

	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/sys/kernel/mm/transparent_hugepage/enabled");
	ck_assert_str_eq(e.msg, "unexpected text");
	t = (struct hostcfg_text){ .use_zero_page = "2\n" };
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/sys/kernel/mm/transparent_hugepage/use_zero_page");
	t = (struct hostcfg_text){ .khugepaged = { [3] = "511 pages\n" } };
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/sys/kernel/mm/transparent_hugepage/khugepaged/");
	ck_assert_str_eq(e.msg, "unexpected text in max_ptes_none");
	t = (struct hostcfg_text){ .fault_around = "" };
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/sys/kernel/debug/fault_around_bytes");
	t = (struct hostcfg_text){ .meminfo = "MemTotal: 1 kB\nHugepagesize:       4096 kB\n" };
	ck_assert_int_eq(sets_of(&t, out, &e), -1);
	ck_assert_str_eq(e.file, "/proc/meminfo");
	ck_assert_str_eq(e.msg, "unexpected Hugepagesize");
}
END_TEST

/* The default huge page size: /proc/meminfo's Hugepagesize (default_hugepagesz=). */
START_TEST(test_hostcfg_hugepagesize)
{
	char out[HOSTCFG_MAX][64];
	struct err e = { 0 };
	struct hostcfg_text t = { .meminfo = "MemTotal:       65536 kB\nHugePages_Total:       0\n"
					     "Hugepagesize:       2048 kB\nHugetlb:  0 kB\n" };

	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.hugetlbfs.default_size=2M");
	t.meminfo = "Hugepagesize:    1048576 kB\n";
	ck_assert_int_eq(sets_of(&t, out, &e), 2);
	ck_assert_str_eq(out[1], "os.hugetlbfs.default_size=1G");
	t.meminfo = "MemTotal:       65536 kB\n"; /* no CONFIG_HUGETLBFS: the default stays */
	ck_assert_int_eq(sets_of(&t, out, &e), 1);
}
END_TEST

static void put(const char *rel, const char *text)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s%s", tmpdir, rel);
	write_file(p, text, strlen(text));
}

/* A fake root: the files read, applied to a config. */
START_TEST(test_hostcfg_apply)
{
	static const char *const dirs[] = { "/sys", "/sys/kernel", "/sys/kernel/mm",
					    "/sys/kernel/mm/transparent_hugepage",
					    "/sys/kernel/mm/transparent_hugepage/khugepaged", "/proc",
					    "/proc/sys", "/proc/sys/kernel" };
	struct sim_config c;
	struct err e = { 0 };
	char p[1024], v[64];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", tmpdir, dirs[i]);
		ck_assert_int_eq(mkdir(p, 0700), 0);
	}
	put("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
	put("/sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise madvise [never]\n");
	put("/sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none", "0\n");
	put("/proc/cmdline", "ro pvm_no_zero_page=1\n");
	put("/proc/sys/kernel/osrelease", "6.12.9\n");
	config_defaults(&c);
	ck_assert_msg(hostcfg_apply(&c, tmpdir, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(config_get(&c, "os.mode", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "thp");
	ck_assert_int_eq(config_get(&c, "os.thp.defrag", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "never");
	ck_assert_int_eq(config_get(&c, "os.khugepaged.max_ptes_none", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "0");
	ck_assert_int_eq(config_get(&c, "os.zero_page", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "false");
	ck_assert_int_eq(config_get(&c, "os.kernel", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "6.12");
	ck_assert_int_eq(config_get(&c, "os.fault_around_bytes", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "64K");
}
END_TEST

static void teardown(void)
{
	check_rmdir(tmpdir);
	/* the fake root's directories (check_rmdir() removes one flat directory) */
	if (!access(tmpdir, F_OK)) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		ck_assert_int_eq(system(cmd), 0);
	}
}

static void setup(void)
{
	strcpy(tmpdir, "/tmp/check_markers_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

int main(void)
{
	Suite *s = suite_create("markers");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_read_and_convert);
	tcase_add_test(tc, test_marker_errors);
	tcase_add_test(tc, test_writer_needs_v2);
	tcase_add_test(tc, test_steps_rows);
	tcase_add_test(tc, test_hostcfg_sets);
	tcase_add_test(tc, test_hostcfg_shrink_underused);
	tcase_add_test(tc, test_hostcfg_mthp_sizes);
	tcase_add_test(tc, test_hostcfg_zero_pages);
	tcase_add_test(tc, test_hostcfg_bad_text);
	tcase_add_test(tc, test_hostcfg_hugepagesize);
	tcase_add_test(tc, test_hostcfg_apply);
	suite_add_tcase(s, tc);
	return check_run(s);
}
