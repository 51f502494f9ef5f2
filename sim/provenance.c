/*
 * provenance.c - the build, config and input identities of provenance.h.
 *
 * Hashes are for telling results apart, not for security: FNV-1a 64 over the
 * config text (a few KiB), and xxHash's XXH3-128 (libxxhash) over a trace file's
 * bytes: on the 13 MB mtr of the validation trace it costs about 1 ms against
 * 2 ms for zlib's CRC-32 and 7 ms for Adler-32 (measured on the build machine),
 * so every run can afford it.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "provenance.h"
#include "trace_io.h"

_Static_assert(PROVENANCE_HASH_BYTES == TIO_HASH_MAX, "one limit for hashing a trace");

const char *provenance_version(void)
{
	return MMUSIM_VERSION;
}

static char build_id[2 * 64 + 1] = "none";
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

/* dl_iterate_phdr callback: the main program comes first; read its build-id note. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			const unsigned char *name = p + sizeof(*nh);
			const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz && nh->n_descsz <= 64) {
				for (unsigned k = 0; k < nh->n_descsz; k++)
					snprintf(build_id + 2 * k, 3, "%02x", desc[k]);
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* only the first object, the program itself */
}

static void read_build_id(void)
{
	dl_iterate_phdr(find_build_id, NULL);
}

const char *provenance_build_id(void)
{
	pthread_once(&build_once, read_build_id);
	return build_id;
}

void provenance_config_hash(const struct sim_config *c, char out[17])
{
	char *text = NULL;
	size_t len = 0;
	uint64_t h = 0xcbf29ce484222325ULL;
	FILE *f = open_memstream(&text, &len);

	if (f) {
		config_write_yaml(c, f);
		if (fclose(f))
			len = 0;
	}
	for (size_t i = 0; text && i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 0x100000001b3ULL;
	free(text);
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* XXH3-128 of the whole file on @fd. 0 or an errno. */
static int content_hash(int fd, XXH128_hash_t *out)
{
	enum { BUF = 1 << 20 };
	unsigned char *buf = malloc(BUF);
	XXH3_state_t *st = XXH3_createState();
	int err = 0;

	if (!buf || !st || XXH3_128bits_reset(st) == XXH_ERROR) {
		free(buf);
		XXH3_freeState(st);
		return ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf, BUF);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		if (!n)
			break;
		XXH3_128bits_update(st, buf, (size_t)n);
	}
	*out = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	free(buf);
	return err;
}

/* ",format=F" for an explicit format, "" for none or auto. */
static void format_suffix(const char *format, char *fmt, size_t n)
{
	fmt[0] = 0;
	if (format && *format && strcmp(format, "auto"))
		snprintf(fmt, n, ",format=%.32s", format);
}

void provenance_content_id(uint64_t size, uint64_t hi, uint64_t lo, const char *format, char *buf,
			   size_t n)
{
	char fmt[48];

	format_suffix(format, fmt, sizeof(fmt));
	snprintf(buf, n, "content:%llu:%016llx%016llx%s", (unsigned long long)size,
		 (unsigned long long)hi, (unsigned long long)lo, fmt);
}

int provenance_input_id(const char *path, const char *workload, const char *format, char *buf,
			size_t n, struct err *e)
{
	char fmt[48];
	struct stat st;
	int fd, err;

	format_suffix(format, fmt, sizeof(fmt));
	if (workload) {
		snprintf(buf, n, "workload:%s", workload);
		return 0;
	}
	if (!strcmp(path, "-")) {
		snprintf(buf, n, "stdin%s", fmt);
		return 0;
	}
	if (stat(path, &st))
		return err_set(e, path, 0, 0, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode)) {
		/* a FIFO or a device: its bytes are gone once read (and opening it could block) */
		snprintf(buf, n, "stream%s", fmt);
		return 0;
	}
	if ((uint64_t)st.st_size <= PROVENANCE_HASH_BYTES) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return err_set(e, path, 0, 0, "%s", strerror(errno));
		XXH128_hash_t h;

		err = content_hash(fd, &h);
		close(fd);
		if (err)
			return err_set(e, path, 0, 0, "%s", strerror(err));
		provenance_content_id((uint64_t)st.st_size, h.high64, h.low64, format, buf, n);
		return 0;
	}
	snprintf(buf, n, "file:%llx:%llu:%llu:%lld.%09ld%s", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, fmt);
	return 0;
}

int provenance_processes_id(const struct sim_config *c, const char *format, char *buf, size_t n,
			    struct err *e)
{
	XXH3_state_t *st = XXH3_createState();
	XXH128_hash_t h;
	char fmt[48];

	if (!st || XXH3_128bits_reset(st) == XXH_ERROR) {
		XXH3_freeState(st);
		return err_host(e, "mmusim", 0, 0, "out of memory");
	}
	for (unsigned i = 0; i < c->nprocs; i++) {
		char id[PROVENANCE_ID_MAX];

		/* a workload: its spec and the seed it runs with (the spec's seed= wins) */
		if (c->procs[i].workload)
			snprintf(id, sizeof(id), "workload:%s:seed=%llu", c->procs[i].trace,
				 (unsigned long long)c->seed);
		else if (provenance_input_id(c->procs[i].trace, NULL, format, id, sizeof(id), e)) {
			XXH3_freeState(st);
			return -1;
		}
		if (!strncmp(id, "stream", 6)) {
			XXH3_freeState(st);
			snprintf(buf, n, "%s", id);
			return 0;
		}
		XXH3_128bits_update(st, id, strlen(id) + 1);
	}
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	format_suffix(format, fmt, sizeof(fmt));
	snprintf(buf, n, "processes:%u:%016llx%016llx%s", c->nprocs, (unsigned long long)h.high64,
		 (unsigned long long)h.low64, fmt);
	return 0;
}
