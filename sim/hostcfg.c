/*
 * hostcfg.c - this machine's kernel settings as mmusim config keys
 * (`mmusim config host`):
 *
 *   os.mode                 thp (the THP model; its enabled setting decides)
 *   os.thp.enabled, defrag  /sys/kernel/mm/transparent_hugepage/{enabled,defrag}:
 *                           the word in brackets (mm/huge_memory.c enabled_show(),
 *                           defrag_show())
 *   os.thp.use_zero_page    transparent_hugepage/use_zero_page ("0" or "1")
 *   os.thp.shrink_underused transparent_hugepage/shrink_underused ("0" or "1";
 *                           Linux 6.12+, shrink_underused_show()); absent on
 *                           older kernels, left at its default
 *   os.thp.sizes.<S>.enabled  transparent_hugepage/hugepages-<size>kB/enabled for
 *                           every anonymous order the kernel offers (16kB ..
 *                           2048kB, Linux 6.8+; thpsize_enabled_show()); a
 *                           directory without an enabled file (hugepages-8kB,
 *                           file and shmem only) or absent is left at its default
 *   os.khugepaged.*         transparent_hugepage/khugepaged/FILE (decimal numbers)
 *   os.zero_page            whether a read of a fresh anonymous page maps the
 *                           zero page, probed (hostcfg_probe_zero_page()); where
 *                           pagemap cannot be read, false when the command line
 *                           has pvm_no_zero_page=1 (a kernel of this project's
 *                           build machines that refuses it; not upstream)
 *   os.thp.huge_zero_allocated  true when /proc/vmstat's thp_zero_page_alloc is
 *                           above 0: the huge zero page has been allocated since
 *                           boot and, freed only by its shrinker under memory
 *                           pressure (or never, CONFIG_PERSISTENT_HUGE_ZERO_FOLIO),
 *                           is there for the next program's read fault
 *   os.kernel               `uname -r`'s MAJOR.MINOR when it is a modelled profile
 *   os.fault_around_bytes   /sys/kernel/debug/fault_around_bytes when readable
 *                           (debugfs is usually root-only), else the default
 *   os.swap.size            the sum of /proc/swaps' Size column (KiB; 0 with no
 *                           swap device): whether reclaim and MADV_PAGEOUT can
 *                           swap anonymous pages out at all
 *   os.hugetlbfs.default_size  /proc/meminfo's Hugepagesize (the default hstate,
 *                           default_hugepagesz=; hugetlb_report_meminfo()):
 *                           2048 kB is 2M, 1048576 kB 1G; no line (no
 *                           CONFIG_HUGETLBFS): the default
 *
 * Left out, and why: os.memory (a replay's footprint is far below it, and a
 * machine-sized buddy allocator only slows the replay), the TLB and cache
 * geometry (not in sysfs in a form the model takes; pick one of configs/).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "hostcfg.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage/"

static const char *const khp_file[7] = {
	"pages_to_scan", "scan_sleep_millisecs", "alloc_sleep_millisecs", "max_ptes_none",
	"max_ptes_swap", "max_ptes_shared", "defrag",
};

/* "always [madvise] never\n" -> "madvise" into @w. 0, or -1 if no bracketed word. */
static int bracketed(const char *s, char *w, size_t n)
{
	const char *a = strchr(s, '['), *b = a ? strchr(a, ']') : NULL;

	if (!a || !b || b == a + 1 || (size_t)(b - a - 1) >= n)
		return -1;
	memcpy(w, a + 1, (size_t)(b - a - 1));
	w[b - a - 1] = '\0';
	return 0;
}

/* A decimal number and an optional newline. 0, or -1. */
static int number(const char *s, unsigned long long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	*v = strtoull(s, &end, 10);
	if (*end == '\n')
		end++;
	return *end ? -1 : 0;
}

/* The command line has the word @w (whole, blank-separated). */
static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = s; (p = strstr(p, w)); p += n)
		if ((p == s || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return 1;
	return 0;
}

int hostcfg_sets(const struct hostcfg_text *t, char (*out)[64], struct err *e)
{
	char w[32];
	unsigned long long v;
	int n = 0;

	snprintf(out[n++], 64, "os.mode=thp");
	if (t->enabled) {
		if (bracketed(t->enabled, w, sizeof(w)))
			return err_set(e, THP_DIR "enabled", 0, 0, "unexpected text");
		snprintf(out[n++], 64, "os.thp.enabled=%s", w);
	}
	if (t->defrag) {
		if (bracketed(t->defrag, w, sizeof(w)))
			return err_set(e, THP_DIR "defrag", 0, 0, "unexpected text");
		snprintf(out[n++], 64, "os.thp.defrag=%s", w);
	}
	if (t->use_zero_page) {
		if (number(t->use_zero_page, &v) || v > 1)
			return err_set(e, THP_DIR "use_zero_page", 0, 0, "unexpected text");
		snprintf(out[n++], 64, "os.thp.use_zero_page=%s", v ? "true" : "false");
	}
	if (t->shrink_underused) {
		if (number(t->shrink_underused, &v) || v > 1)
			return err_set(e, THP_DIR "shrink_underused", 0, 0, "unexpected text");
		snprintf(out[n++], 64, "os.thp.shrink_underused=%s", v ? "true" : "false");
	}
	for (unsigned o = MTHP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		if (!t->size_enabled[o])
			continue;
		if (bracketed(t->size_enabled[o], w, sizeof(w)))
			return err_set(e, THP_DIR "hugepages-", 0, 0, "unexpected text in %lukB/enabled",
				       (PAGE_SIZE << o) >> 10);
		snprintf(out[n++], 64, "os.thp.sizes.%s.enabled=%s", mthp_size_name[o], w);
	}
	for (int i = 0; i < 7; i++) {
		if (!t->khugepaged[i])
			continue;
		if (number(t->khugepaged[i], &v) || (i == 6 && v > 1))
			return err_set(e, THP_DIR "khugepaged/", 0, 0, "unexpected text in %s",
				       khp_file[i]);
		if (i == 6)
			snprintf(out[n++], 64, "os.khugepaged.defrag=%s", v ? "true" : "false");
		else
			snprintf(out[n++], 64, "os.khugepaged.%s=%llu", khp_file[i], v);
	}
	if (t->zero_page > 0)
		snprintf(out[n++], 64, "os.zero_page=true");
	else if (t->zero_page < 0 || (t->cmdline && has_word(t->cmdline, "pvm_no_zero_page=1")))
		snprintf(out[n++], 64, "os.zero_page=false");
	if (t->vmstat) {
		const char *p = strstr(t->vmstat, "\nthp_zero_page_alloc ");

		if (!strncmp(t->vmstat, "thp_zero_page_alloc ", 20))
			p = t->vmstat - 1;
		if (p) {
			p += 21;
			if (*p < '0' || *p > '9')
				return err_set(e, "/proc/vmstat", 0, 0, "unexpected text");
			snprintf(out[n++], 64, "os.thp.huge_zero_allocated=%s",
				 strtoull(p, NULL, 10) > 0 ? "true" : "false");
		}
	}
	if (t->release) {
		unsigned maj, min;

		if (sscanf(t->release, "%u.%u", &maj, &min) == 2) {
			snprintf(w, sizeof(w), "%u.%u", maj, min);
			for (int k = 0; k < KERNEL_NR; k++)
				if (!strcmp(w, os_kernel_name[k]))
					snprintf(out[n++], 64, "os.kernel=%s", w);
		}
	}
	if (t->swaps) {
		/* "Filename Type Size Used Priority", then a line per device (mm/swapfile.c swap_show()) */
		const char *l = strchr(t->swaps, '\n');
		unsigned long long kb = 0, size;

		if (strncmp(t->swaps, "Filename", 8) || !l)
			return err_set(e, "/proc/swaps", 0, 0, "unexpected text");
		for (l++; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
			char name[4096], type[32];

			if (sscanf(l, "%4095s %31s %llu", name, type, &size) != 3)
				return err_set(e, "/proc/swaps", 0, 0, "unexpected text");
			kb += size;
		}
		snprintf(out[n++], 64, "os.swap.size=%llu", kb << 10);
	}
	if (t->fault_around) {
		if (number(t->fault_around, &v))
			return err_set(e, "/sys/kernel/debug/fault_around_bytes", 0, 0, "unexpected text");
		snprintf(out[n++], 64, "os.fault_around_bytes=%llu", v);
	}
	if (t->meminfo) {
		const char *p = strstr(t->meminfo, "Hugepagesize:");

		if (p && (p == t->meminfo || p[-1] == '\n')) {
			if (sscanf(p, "Hugepagesize: %llu kB", &v) != 1 || (v != 2048 && v != 1048576))
				return err_set(e, "/proc/meminfo", 0, 0, "unexpected Hugepagesize");
			snprintf(out[n++], 64, "os.hugetlbfs.default_size=%s", v == 2048 ? "2M" : "1G");
		}
	}
	return n;
}

/* @root/@path's text (at most @max bytes) into a fresh string, or NULL if unreadable. */
static char *slurp_max(const char *root, const char *path, size_t max)
{
	char name[4200], *s = calloc(1, max + 1);
	FILE *f;
	size_t n;

	snprintf(name, sizeof(name), "%s%s", root, path);
	f = s ? fopen(name, "r") : NULL;
	if (!f) {
		free(s);
		return NULL;
	}
	n = fread(s, 1, max, f);
	s[n] = '\0';
	fclose(f);
	return s;
}

static char *slurp(const char *root, const char *path)
{
	return slurp_max(root, path, 4096);
}

int hostcfg_probe_zero_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile unsigned char *p;
	uint64_t ent = 0;
	int fd, ret = 0;

	p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	(void)p[0]; /* the read fault */
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && pread(fd, &ent, sizeof(ent), (off_t)((uintptr_t)p / (uintptr_t)pg * 8)) ==
			       (ssize_t)sizeof(ent) && (ent >> 63 & 1))
		ret = ent >> 56 & 1 ? -1 : 1; /* PM_PRESENT; PM_MMAP_EXCLUSIVE (Documentation/admin-guide/mm/pagemap.rst) */
	if (fd >= 0)
		close(fd);
	munmap((void *)p, (size_t)pg);
	return ret;
}

int hostcfg_apply(struct sim_config *c, const char *root, struct err *e)
{
	static const char thp[] = THP_DIR;
	struct hostcfg_text t = { 0 };
	char path[256], (*sets)[64] = calloc(HOSTCFG_MAX, 64), *rel = NULL;
	struct utsname u;
	int n, ret = 0;

	if (!sets)
		return err_host(e, "config host", 0, 0, "out of memory");
	snprintf(path, sizeof(path), "%senabled", thp);
	t.enabled = slurp(root, path);
	snprintf(path, sizeof(path), "%sdefrag", thp);
	t.defrag = slurp(root, path);
	snprintf(path, sizeof(path), "%suse_zero_page", thp);
	t.use_zero_page = slurp(root, path);
	snprintf(path, sizeof(path), "%sshrink_underused", thp);
	t.shrink_underused = slurp(root, path);
	for (int i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "%skhugepaged/%s", thp, khp_file[i]);
		t.khugepaged[i] = slurp(root, path);
	}
	for (unsigned o = MTHP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		snprintf(path, sizeof(path), "%shugepages-%lukB/enabled", thp, (PAGE_SIZE << o) >> 10);
		t.size_enabled[o] = slurp(root, path);
	}
	t.cmdline = slurp(root, "/proc/cmdline");
	t.fault_around = slurp(root, "/sys/kernel/debug/fault_around_bytes");
	t.vmstat = slurp_max(root, "/proc/vmstat", 1 << 16);
	t.swaps = slurp_max(root, "/proc/swaps", 1 << 16);
	t.meminfo = slurp_max(root, "/proc/meminfo", 1 << 16);
	if (!*root)
		t.zero_page = hostcfg_probe_zero_page();
	if (*root)
		t.release = rel = slurp(root, "/proc/sys/kernel/osrelease");
	else if (!uname(&u))
		t.release = u.release;
	n = hostcfg_sets(&t, sets, e);
	for (int i = 0; n > 0 && i < n && !ret; i++)
		ret = config_set(c, sets[i], e);
	if (n < 0)
		ret = -1;
	free((char *)t.enabled);
	free((char *)t.defrag);
	free((char *)t.use_zero_page);
	free((char *)t.shrink_underused);
	for (int i = 0; i < 7; i++)
		free((char *)t.khugepaged[i]);
	for (unsigned o = 0; o < MTHP_ORDERS; o++)
		free((char *)t.size_enabled[o]);
	free((char *)t.cmdline);
	free((char *)t.fault_around);
	free((char *)t.vmstat);
	free((char *)t.swaps);
	free((char *)t.meminfo);
	free(rel);
	free(sets);
	return ret;
}
