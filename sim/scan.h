/*
 * scan.h - find a 64-bit tag among the ways of one set, every way compared
 *
 * The TLB arrays (tlb.h: tlb_array_find) and the cache levels (cache.c: level_access)
 * look a key up in a set of at most 16 ways on every miss of the level above; on the
 * miss-heavy bench trace that is two or three set scans per reference. A scalar scan
 * is seven instructions a way (compare, setcc, shift, or, and the index), and an
 * early exit at a data-dependent way is a branch miss. With SSE2 (the x86-64 baseline,
 * so no dispatch) one PCMPEQD compares two ways; PACKSSDW/PACKSSWB fold four compares
 * into one PMOVMSKB mask in which way k owns bits 2k and 2k+1 (a 64-bit tag equals the
 * key iff both 32-bit halves do). Eight ways cost about fourteen instructions.
 *
 * Every caller's tag array has SCAN_PAD spare tags after its last set (initialised, never
 * matched: a tag never equals the keys a caller looks for beyond its ways, since the bits
 * of ways >= @ways are masked off), so a vector load never leaves the allocation. scan_ways_masked() is
 * the entry point.
 * Without SSE2 the scalar loop is used; both return the lowest matching way.
 */
#ifndef MMUSIM_SCAN_H
#define MMUSIM_SCAN_H

#include <stdint.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define SCAN_PAD 16 /* spare tags after the last set of an array scanned with scan_ways_masked() */

#ifdef __SSE2__
/* The 16-bit mask of ways t[0..7]: way k at bits 2k and 2k+1. */
static inline __attribute__((always_inline)) unsigned scan_8(const uint64_t *t, __m128i k)
{
	__m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)t), k);
	__m128i b = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(t + 2)), k);
	__m128i c = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(t + 4)), k);
	__m128i d = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(t + 6)), k);
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));

	return m & m >> 1 & 0x5555u; /* both halves equal: way k at bit 2k */
}
#endif

#ifdef __SSE2__
/* scan_8() of ways t[0..3] (the bits of ways 4..7 are 0): half the loads and compares. */
static inline __attribute__((always_inline)) unsigned scan_4(const uint64_t *t, __m128i k)
{
	__m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)t), k);
	__m128i b = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(t + 2)), k);
	__m128i ab = _mm_packs_epi32(a, b);
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(ab, _mm_setzero_si128()));

	return m & m >> 1 & 0x55u;
}
#endif

/*
 * The set of ways of a scan (1 <= ways <= 16) as scan_ways_masked() takes it: two
 * bits a way. An array keeps it (computing it is four instructions a scan, and on
 * the miss-heavy bench trace there are five scans per reference pair).
 */
static inline uint32_t scan_mask(unsigned ways)
{
	return (uint32_t)((1ULL << (2 * ways)) - 1);
}

/*
 * The lowest way of t[0..ways-1] holding @key, or -1 if none, @mask being
 * scan_mask(ways). t[ways..15] must be readable (SCAN_PAD). Up to 4 ways (the
 * default machine's TLB arrays and PWCs) compare half of what 8 do.
 */
static inline __attribute__((always_inline)) int scan_ways_masked(const uint64_t *t, uint32_t mask, uint64_t key)
{
#ifdef __SSE2__
	__m128i k = _mm_set1_epi64x((long long)key);
	uint32_t m;

	if (mask <= 0xff) {
		m = scan_4(t, k);
	} else {
		m = scan_8(t, k);
		if (mask > 0xffff)
			m |= scan_8(t + 8, k) << 16;
	}
	m &= mask;
	return m ? __builtin_ctz(m) >> 1 : -1;
#else
	unsigned m = 0;

	for (unsigned w = 0; w < 16 && (mask >> (2 * w) & 1); w++)
		m |= (unsigned)(t[w] == key) << w;
	return m ? __builtin_ctz(m) : -1;
#endif
}

#endif
