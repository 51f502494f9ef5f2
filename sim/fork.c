/*
 * fork.c - fork() of an address space (kernel/fork.c dup_mm(), mm/memory.c
 * copy_page_range()).
 */
#include "kernel.h"

struct mm *kernel_fork(struct kernel *k, uint64_t id)
{
	kernel_fail(k, "fork of process %llu: fork is not replayed yet", (unsigned long long)id);
	return NULL;
}
