/*
 * check_provenance.c - the identities a result records (provenance.c), each
 * against a value computed here independently: the build id against
 * `readelf -n` on this very binary, the config hash against FNV-1a 64 of the
 * config_write_yaml() text, a trace file's id against the one-call XXH3-128 of
 * its bytes written out in xxHash's canonical (big-endian) form, and a large
 * file's id against its fstat().
 *
 * Reference values: FNV-1a 64 has offset basis 0xcbf29ce484222325 and prime
 * 0x100000001b3, and hashes "a" to af63dc4c8601ec8c (draft-eastlake-fnv);
 * XXH3-128 of no bytes is 99aa06d3014798d86001c324468d497f (xxHash's
 * doc/xxhash_spec.md and its sanity tests).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "check_run.h"
#include "config.h"
#include "provenance.h"
#include "trace.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_provenance.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static int remove_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

static void teardown(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* "DIR/NAME" in one of four rotating buffers. */
static const char *at(const char *name)
{
	static char buf[4][PATH_MAX];
	static unsigned k;
	char *p = buf[k++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static void put(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
	ck_assert_int_eq(close(fd), 0);
}

static bool all_lower_hex(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

START_TEST(version)
{
	ck_assert_str_eq(provenance_version(), MMUSIM_VERSION);
	ck_assert_str_eq(provenance_version(), "0.9.0");
}
END_TEST

/* The NT_GNU_BUILD_ID of this binary, as readelf prints it; false if readelf is missing. */
static bool readelf_build_id(char *out, size_t n)
{
	char cmd[128], line[512];
	FILE *p;
	bool found = false;

	if (system("command -v readelf >/dev/null 2>&1")) {
		fprintf(stderr, "check_provenance: readelf not found; build id not compared\n");
		return false;
	}
	/* /proc/PID/exe, not /proc/self/exe: "self" would be readelf itself */
	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%ld/exe", (long)getpid());
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		const char *k = strstr(line, "Build ID: ");

		if (k) {
			ck_assert(!found); /* one build id note */
			snprintf(out, n, "%s", k + strlen("Build ID: "));
			out[strcspn(out, " \n")] = 0;
			found = true;
		}
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert(found);
	return true;
}

START_TEST(build_id)
{
	const char *id = provenance_build_id();
	char want[256];

	ck_assert_uint_eq(strlen(id), 40);
	ck_assert(all_lower_hex(id));
	ck_assert_ptr_eq(provenance_build_id(), id); /* computed once */
	if (readelf_build_id(want, sizeof(want)))
		ck_assert_str_eq(id, want);
}
END_TEST

/* FNV-1a 64 of @n bytes at @p, as 16 hex digits. */
static void fnv1a64(const char *p, size_t n, char out[17])
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ULL;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* FNV-1a 64 of @c's config_write_yaml() text; the text into *@text if not NULL. */
static void expected_hash(const struct sim_config *c, char out[17], char **text)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	config_write_yaml(c, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_gt(len, 100);
	fnv1a64(buf, len, out);
	if (text)
		*text = buf;
	else
		free(buf);
}

START_TEST(config_hash)
{
	struct sim_config a, b;
	struct err e = { 0 };
	char ha[17], hb[17], want[17], def[64], set[96], *ta, *tb;

	fnv1a64("a", 1, want); /* the reference implementation itself */
	ck_assert_str_eq(want, "af63dc4c8601ec8c");

	config_defaults(&a);
	config_defaults(&b);
	provenance_config_hash(&a, ha);
	provenance_config_hash(&b, hb);
	ck_assert_uint_eq(strlen(ha), 16);
	ck_assert(all_lower_hex(ha));
	ck_assert_str_eq(ha, hb);
	expected_hash(&a, want, &ta);
	ck_assert_str_eq(ha, want);

	ck_assert_int_eq(config_get(&b, "tlb.stlb.0.entries", def, sizeof(def)), 0);
	ck_assert_str_ne(def, "16");
	ck_assert_msg(!config_set(&b, "tlb.stlb.entries=16", &e), "%s", e.msg);
	provenance_config_hash(&b, hb);
	ck_assert_str_ne(ha, hb);
	expected_hash(&b, want, &tb);
	ck_assert_str_eq(hb, want);
	ck_assert_str_ne(ta, tb);
	free(tb);

	snprintf(set, sizeof(set), "tlb.stlb.entries=%s", def);
	ck_assert_msg(!config_set(&b, set, &e), "%s", e.msg);
	provenance_config_hash(&b, hb);
	ck_assert_str_eq(ha, hb);
	expected_hash(&b, want, &tb);
	ck_assert_str_eq(ta, tb);
	free(ta);
	free(tb);
}
END_TEST

/* provenance_input_id() succeeds; its id. */
static const char *id_of(const char *path, const char *workload, const char *format)
{
	static char buf[2][PROVENANCE_ID_MAX];
	static unsigned k;
	char *p = buf[k++ % 2];
	struct err e = { 0 };

	memset(p, 0x55, PROVENANCE_ID_MAX);
	ck_assert_msg(!provenance_input_id(path, workload, format, p, PROVENANCE_ID_MAX, &e), "%s",
		      e.msg);
	ck_assert_uint_lt(strlen(p), PROVENANCE_ID_MAX);
	return p;
}

/* "content:SIZE:HASH" for @h of @n bytes: XXH3-128's canonical form in hex. */
static const char *content_str(XXH128_hash_t h, size_t n)
{
	static char buf[64];
	XXH128_canonical_t c;
	size_t len;

	XXH128_canonicalFromHash(&c, h);
	len = (size_t)snprintf(buf, sizeof(buf), "content:%zu:", n);
	for (size_t i = 0; i < sizeof(c.digest); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%02x", c.digest[i]);
	return buf;
}

/* The id of @n bytes at @data (XXH3-128 in one call). */
static const char *content_id(const void *data, size_t n)
{
	return content_str(XXH3_128bits(data, n), n);
}

START_TEST(input_workload_and_stdin)
{
	ck_assert_str_eq(id_of(NULL, "gups:size=64M", NULL), "workload:gups:size=64M");
	ck_assert_str_eq(id_of(NULL, "stream", NULL), "workload:stream");
	ck_assert_str_eq(id_of("-", NULL, NULL), "stdin");
	ck_assert_str_eq(id_of("-", NULL, "auto"), "stdin");
	ck_assert_str_eq(id_of("-", NULL, "lackey"), "stdin,format=lackey");
}
END_TEST

START_TEST(input_content)
{
	static const char trace[] = "I  0401a2b0,3\n S 7ff000a8,8\n L 7ff000b0,8\n M 0601040,4\n";
	char want[64], changed[sizeof(trace)];
	size_t n = sizeof(trace) - 1;

	put(at("t.lackey"), trace, n);
	snprintf(want, sizeof(want), "%s", content_id(trace, n));
	ck_assert_str_eq(id_of(at("t.lackey"), NULL, NULL), want);
	ck_assert_str_eq(id_of(at("t.lackey"), NULL, "auto"), want);
	ck_assert_str_eq(id_of(at("t.lackey"), NULL, ""), want);
	{
		char lk[96];

		snprintf(lk, sizeof(lk), "%s,format=lackey", want);
		ck_assert_str_eq(id_of(at("t.lackey"), NULL, "lackey"), lk);
	}

	/* The same bytes elsewhere are the same input. */
	ck_assert_int_eq(mkdir(at("sub"), 0755), 0);
	put(at("sub/copy"), trace, n);
	ck_assert_str_eq(id_of(at("sub/copy"), NULL, NULL), want);

	/* One byte different, same size: another input. */
	memcpy(changed, trace, sizeof(trace));
	changed[20] ^= 1;
	put(at("sub/copy"), changed, n);
	ck_assert_str_ne(id_of(at("sub/copy"), NULL, NULL), want);
	ck_assert_str_eq(id_of(at("sub/copy"), NULL, NULL), content_id(changed, n));

	/* Nothing: the specification's value. */
	put(at("empty"), "", 0);
	ck_assert_str_eq(id_of(at("empty"), NULL, NULL),
			 "content:0:99aa06d3014798d86001c324468d497f");
	ck_assert_str_eq(content_id("", 0), "content:0:99aa06d3014798d86001c324468d497f");
}
END_TEST

START_TEST(input_missing)
{
	struct err e = { 0 };
	char buf[PROVENANCE_ID_MAX], msg[PATH_MAX + 64], want[PATH_MAX + 64];

	ck_assert_int_eq(provenance_input_id(at("nope"), NULL, NULL, buf, sizeof(buf), &e), -1);
	err_format(&e, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: No such file or directory", at("nope"));
	ck_assert_str_eq(msg, want);
}
END_TEST

/* "file:DEV:INO:SIZE:SEC.NSEC" of what @fd names. */
static const char *file_id(int fd)
{
	static char buf[PROVENANCE_ID_MAX];
	struct stat sb;

	ck_assert_int_eq(fstat(fd, &sb), 0);
	snprintf(buf, sizeof(buf), "file:%llx:%llu:%llu:%lld.%09ld", (unsigned long long)sb.st_dev,
		 (unsigned long long)sb.st_ino, (unsigned long long)sb.st_size,
		 (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec);
	return buf;
}

/* Beyond PROVENANCE_HASH_BYTES: the file's identity, not its bytes; mtime is part of it. */
START_TEST(input_large_file)
{
	struct timespec ts[2] = { { 1700000000, 123456789 }, { 1700000000, 123456789 } };
	char want[PROVENANCE_ID_MAX];
	int fd = open(at("big"), O_RDWR | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)PROVENANCE_HASH_BYTES + 1), 0);
	ck_assert_int_eq(futimens(fd, ts), 0);
	snprintf(want, sizeof(want), "%s", file_id(fd));
	ck_assert(strstr(want, ":67108865:1700000000.123456789"));
	ck_assert_str_eq(id_of(at("big"), NULL, NULL), want);
	{
		char lk[PROVENANCE_ID_MAX + 16];

		snprintf(lk, sizeof(lk), "%s,format=pin", want);
		ck_assert_str_eq(id_of(at("big"), NULL, "pin"), lk);
	}

	ts[1].tv_nsec = 5; /* touched: another input */
	ck_assert_int_eq(futimens(fd, ts), 0);
	ck_assert_str_ne(id_of(at("big"), NULL, NULL), want);
	ck_assert(strstr(file_id(fd), ":1700000000.000000005"));
	ck_assert_str_eq(id_of(at("big"), NULL, NULL), file_id(fd));
	close(fd);

	/* A device or a FIFO is a stream: not opened (a FIFO would block), never the same input. */
	ck_assert_str_eq(id_of("/dev/null", NULL, NULL), "stream");
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_str_eq(id_of(at("fifo"), NULL, "lackey"), "stream,format=lackey");
}
END_TEST

/*
 * Exactly PROVENANCE_HASH_BYTES is still hashed (64 MiB of zeros, sparse). The
 * reference streams one zeroed MiB 64 times: faulting in 64 fresh MiB for a
 * one-call hash took 0.85 s on the build machine.
 */
/*
 * The hash a reader takes as it reads (trace_content_hash()) is the file's own
 * identity: none before the file is read to its end, then exactly what
 * provenance_input_id() computes by reading it again -- for plain text, for a
 * compressed file (its stored bytes) and with an explicit format.
 */
static void hash_as_read(const char *path, const char *format, bool big)
{
	struct err e = { 0 };
	struct trace_reader *r = trace_open(path, format ? trace_format_parse(format) : TF_AUTO, &e);
	struct trace_batch b;
	uint64_t size, hi, lo;
	char got[PROVENANCE_ID_MAX], want[PROVENANCE_ID_MAX];
	int n;

	ck_assert_msg(r != NULL, "%s", e.msg);
	/* a file larger than the reader's read-ahead (4 MiB decoded) cannot be read yet */
	if (big)
		ck_assert(!trace_content_hash(r, &size, &hi, &lo));
	while ((n = trace_next(r, &b, &e)) > 0)
		;
	ck_assert_int_eq(n, 0);
	ck_assert(trace_content_hash(r, &size, &hi, &lo));
	provenance_content_id(size, hi, lo, format, got, sizeof(got));
	ck_assert_int_eq(provenance_input_id(path, NULL, format, want, sizeof(want), &e), 0);
	ck_assert_str_eq(got, want);
	trace_close(r);
}

START_TEST(content_hash_as_read)
{
	hash_as_read("tests/golden/mixed.lackey", NULL, false);
	hash_as_read("tests/data/basic.lackey.zst", NULL, false);
	hash_as_read("tests/data/syscalls.lackey", "lackey", false);
	hash_as_read("tests/validation/small.lackey.zst", NULL, true); /* 96 MB decoded */
}
END_TEST

START_TEST(input_hash_limit)
{
	enum { CHUNK = 1 << 20 };
	unsigned char *zero = calloc(1, CHUNK);
	XXH3_state_t *st = XXH3_createState();
	char want[64];
	int fd = open(at("edge"), O_RDWR | O_CREAT | O_TRUNC, 0644);

	ck_assert_ptr_nonnull(zero);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)PROVENANCE_HASH_BYTES), 0);
	close(fd);
	ck_assert_int_eq(XXH3_128bits_reset(st), XXH_OK);
	for (unsigned i = 0; i < PROVENANCE_HASH_BYTES / CHUNK; i++)
		ck_assert_int_eq(XXH3_128bits_update(st, zero, CHUNK), XXH_OK);
	snprintf(want, sizeof(want), "%s",
		 content_str(XXH3_128bits_digest(st), PROVENANCE_HASH_BYTES));
	XXH3_freeState(st);
	free(zero);
	ck_assert_int_eq(strncmp(want, "content:67108864:", 17), 0);
	ck_assert_str_eq(id_of(at("edge"), NULL, NULL), want);
}
END_TEST

static Suite *provenance_suite(void)
{
	Suite *s = suite_create("provenance");
	TCase *tc = tcase_create("provenance");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, version);
	tcase_add_test(tc, build_id);
	tcase_add_test(tc, config_hash);
	tcase_add_test(tc, input_workload_and_stdin);
	tcase_add_test(tc, input_content);
	tcase_add_test(tc, input_missing);
	tcase_add_test(tc, input_large_file);
	tcase_add_test(tc, input_hash_limit);
	tcase_add_test(tc, content_hash_as_read);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(provenance_suite());
}
