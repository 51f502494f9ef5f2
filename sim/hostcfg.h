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
	const char *khugepaged[7]; /* khugepaged/{pages_to_scan, scan_sleep_millisecs,
				    * alloc_sleep_millisecs, max_ptes_none, max_ptes_swap,
				    * max_ptes_shared, defrag} */
	const char *cmdline;       /* /proc/cmdline */
	const char *release;       /* uname -r */
	const char *fault_around;  /* /sys/kernel/debug/fault_around_bytes */
};

#define HOSTCFG_MAX 16

/*
 * The config assignments ("os.thp.enabled=madvise", ...) that @t implies,
 * into @out (HOSTCFG_MAX strings of 64 bytes). Returns how many, or -1 with @e
 * when a file's text is not what the kernel writes ("PATH: unexpected text";
 * for khugepaged's, "DIR/khugepaged/: unexpected text in FILE").
 */
int hostcfg_sets(const struct hostcfg_text *t, char (*out)[64], struct err *e);

/* Read the files under @root ("" for this machine) and apply them to @c. 0 or -1 with @e. */
int hostcfg_apply(struct sim_config *c, const char *root, struct err *e);

#endif
