/*
 * gups_lackey.c - writes a GUPS-style Valgrind lackey trace to stdout for bench/run.sh
 * row (e): one sys_mmap of the table, then per update an instruction fetch (a
 * 4-instruction loop body) and an 8-byte read-modify-write ("M") of a uniformly
 * random 8-byte word of the table. Deterministic: xorshift64* from a fixed seed.
 *
 * usage: gups_lackey [UPDATES [TABLE_BYTES [SEED]]]   (defaults 4194304, 64 MiB, 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define GUPS_BASE 0x7f0000000000ULL /* where the table is mapped (2 MiB aligned) */
#define GUPS_CODE 0x401000ULL       /* the loop body */

static uint64_t xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

int main(int argc, char **argv)
{
	uint64_t updates = argc > 1 ? strtoull(argv[1], NULL, 0) : 4194304;
	uint64_t size = argc > 2 ? strtoull(argv[2], NULL, 0) : 64ULL << 20;
	uint64_t s = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	uint64_t words = size / 8;

	s = s * 0x9E3779B97F4A7C15ULL + 1;
	if (!words || (words & (words - 1))) {
		fprintf(stderr, "gups_lackey: TABLE_BYTES must be a power of two >= 8\n");
		return 2;
	}
	printf("==1== Lackey, an example Valgrind tool\n");
	printf("SYSCALL[1,1](9) sys_mmap ( 0x0, %llu, 3, 34, 4294967295, 0 ) --> [pre-success] "
	       "Success(0x%llx)\n", (unsigned long long)size, (unsigned long long)GUPS_BASE);
	for (uint64_t i = 0; i < updates; i++) {
		uint64_t w = xorshift64s(&s) >> 11 & (words - 1);

		printf("I  %08llx,4\n M %08llx,8\n", (unsigned long long)(GUPS_CODE + (i & 3) * 4),
		       (unsigned long long)(GUPS_BASE + w * 8));
	}
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
