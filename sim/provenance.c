/*
 * provenance.c - the build, config and input identities of provenance.h.
 *
 * Hashes are for telling results apart, not for security: FNV-1a 64 over the
 * config text (a few KiB), and zlib's CRC-32 and Adler-32 together (64 bits,
 * at memory speed) over a trace file's bytes.
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
#include <zlib.h>

#include "provenance.h"

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

/* CRC-32 and Adler-32 of the whole file on @fd. 0 or an errno. */
static int content_sums(int fd, uint32_t *crc, uint32_t *adler)
{
	enum { BUF = 1 << 20 };
	unsigned char *buf = malloc(BUF);
	uLong c = crc32(0L, Z_NULL, 0), a = adler32(0L, Z_NULL, 0);
	int err = 0;

	if (!buf)
		return ENOMEM;
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
		c = crc32_z(c, buf, (size_t)n);
		a = adler32_z(a, buf, (size_t)n);
	}
	free(buf);
	*crc = (uint32_t)c;
	*adler = (uint32_t)a;
	return err;
}

int provenance_input_id(const char *path, const char *workload, const char *format, char *buf,
			size_t n, struct err *e)
{
	char fmt[48] = "";
	struct stat st;
	int fd, err;

	if (format && *format && strcmp(format, "auto"))
		snprintf(fmt, sizeof(fmt), ",format=%.32s", format);
	if (workload) {
		snprintf(buf, n, "workload:%s", workload);
		return 0;
	}
	if (!strcmp(path, "-")) {
		snprintf(buf, n, "stdin%s", fmt);
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, path, 0, 0, "%s", strerror(errno));
	if (fstat(fd, &st)) {
		err = errno;
		close(fd);
		return err_set(e, path, 0, 0, "%s", strerror(err));
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size <= PROVENANCE_HASH_BYTES) {
		uint32_t crc, adler;

		err = content_sums(fd, &crc, &adler);
		close(fd);
		if (err)
			return err_set(e, path, 0, 0, "%s", strerror(err));
		snprintf(buf, n, "content:%llu:%08x%08x%s", (unsigned long long)st.st_size, crc, adler,
			 fmt);
		return 0;
	}
	close(fd);
	snprintf(buf, n, "file:%llx:%llu:%llu:%lld.%09ld%s", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, fmt);
	return 0;
}
