/*
 * types.h - quantities, page sizes and the invariant macro shared by every module.
 *
 * Integer typedefs for quantities (STYLE.md rule 4); no typedefs for structs.
 * BUG_ON() is the one way a broken invariant stops the program: it is always
 * compiled in (the checks sit off the hot path) and aborts with file:line.
 */
#ifndef MMUSIM_TYPES_H
#define MMUSIM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t vaddr_t;  /* virtual address */
typedef uint64_t paddr_t;  /* physical address */
typedef uint64_t pfn_t;    /* physical frame number (4 KiB frames) */
typedef uint64_t cycles_t; /* simulated core cycles */

#define CYCLES_MAX UINT64_MAX

/*
 * @c (>= 0) cycles as a count, saturated at CYCLES_MAX: a double of 2^64 or
 * more converted to an integer is undefined (x86-64 gives 2^63, or 0 once
 * GCC's unsigned conversion subtracts 2^63 and flips the top bit back: what
 * made cpu.cpi=1e308 report 0 instruction cycles).
 */
static inline cycles_t cycles_of(double c)
{
	return c < 0x1p64 ? (cycles_t)c : CYCLES_MAX;
}

#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PMD_SHIFT 21
#define PMD_SIZE (1UL << PMD_SHIFT)
#define PUD_SHIFT 30
#define PUD_SIZE (1UL << PUD_SHIFT)
#define HPAGE_PMD_ORDER (PMD_SHIFT - PAGE_SHIFT) /* 9 */
#define HPAGE_PMD_NR (1UL << HPAGE_PMD_ORDER)     /* 512 */
#define HPAGE_PUD_ORDER (PUD_SHIFT - PAGE_SHIFT) /* 18 */

/* Largest virtual address a trace may name: 57 bits (LA57, 5-level paging). */
#define VADDR_BITS_MAX 57
#define VADDR_LIMIT (1ULL << VADDR_BITS_MAX)

#define PFN_NONE ((pfn_t)-1)

/* Page sizes a translation can have; the order of the TLB arrays. */
enum page_size { PS_4K = 0, PS_2M = 1, PS_1G = 2, PS_NR = 3 };

static inline unsigned page_shift_of(enum page_size ps)
{
	return ps == PS_4K ? PAGE_SHIFT : ps == PS_2M ? PMD_SHIFT : PUD_SHIFT;
}

extern const char *const page_size_name[PS_NR]; /* "4K", "2M", "1G" (stats.c) */

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

_Noreturn void mmusim_bug(const char *file, int line, const char *cond);
#define BUG_ON(cond)                                              \
	do {                                                      \
		if (unlikely(cond))                               \
			mmusim_bug(__FILE__, __LINE__, #cond);    \
	} while (0)

#endif
