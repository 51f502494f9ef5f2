/*
 * hostcfg.h - the replay configuration of the machine mmusim runs on, read
 * from its sysfs, kernel command line and release (`mmusim config host`), so
 * that a replay of a program captured here models this kernel's settings
 * (tests/native.sh compares the two).
 */
#ifndef MMUSIM_HOSTCFG_H
#define MMUSIM_HOSTCFG_H

#include <stddef.h>

#include "config.h"
#include "err.h"

/* What the host's files say; NULL: the file was not readable (the key keeps its default). */
struct hostcfg_text {
	const char *enabled, *defrag, *use_zero_page;  /* /sys/kernel/mm/transparent_hugepage/ */
	const char *shrink_underused; /* transparent_hugepage/shrink_underused (6.12+) */
	const char *khugepaged[7]; /* khugepaged/{pages_to_scan, scan_sleep_millisecs,
				    * alloc_sleep_millisecs, max_ptes_none, max_ptes_swap,
				    * max_ptes_shared, defrag} */
	const char *size_enabled[MTHP_ORDERS]; /* hugepages-<size>kB/enabled by order (2 .. 9);
				    * NULL where the kernel has no such directory */
	const char *cmdline;       /* /proc/cmdline */
	const char *release;       /* uname -r */
	const char *fault_around;  /* /sys/kernel/debug/fault_around_bytes */
	const char *vmstat;        /* /proc/vmstat */
	const char *swaps;         /* /proc/swaps */
	const char *meminfo;       /* /proc/meminfo */
	int zero_page;             /* what a read of a fresh anonymous page mapped, probed in
				    * this process (hostcfg_probe_zero_page()): 1 the zero
				    * page, -1 a page of its own, 0 not probed (the command
				    * line decides) */
};

#define HOSTCFG_MAX 32

/*
 * The config assignments ("os.thp.enabled=madvise", ...) that @t implies,
 * into @out (HOSTCFG_MAX strings of 64 bytes). Returns how many, or -1 with @e
 * when a file's text is not what the kernel writes ("PATH: unexpected text";
 * for khugepaged's, "DIR/khugepaged/: unexpected text in FILE").
 */
int hostcfg_sets(const struct hostcfg_text *t, char (*out)[64], struct err *e);

/*
 * Whether this kernel gives the zero page: one fresh private anonymous page
 * is read and its /proc/self/pagemap entry looked at (present and not
 * PM_MMAP_EXCLUSIVE: vm_normal_page() found no page of its own, so the PTE
 * maps the zero page; mm/memory.c do_anonymous_page()). 1 given, -1 refused,
 * 0 when pagemap cannot be read.
 */
int hostcfg_probe_zero_page(void);

/* Read the files under @root ("" for this machine) and apply them to @c. 0 or -1 with @e. */
int hostcfg_apply(struct sim_config *c, const char *root, struct err *e);

#endif
