/*
 * embed.c - mmusim as a library (include/mmusim.h): replay a trace through the
 * public API and print the counts `mmusim run` prints for it.
 *
 *   cc embed.c $(pkg-config --cflags --libs mmusim) -o embed
 *   ./embed tests/validation/small.lackey.zst [path=value ...]
 *
 * A simulator that uses mmusim as its MMU calls mmusim_ref() for each of its
 * references and mmusim_event() for each mapping change instead of
 * mmusim_replay().
 */
#include <stdio.h>

#include <mmusim.h>

int main(int argc, char **argv)
{
	struct mmusim_options o = { .sets = (const char *const *)argv + 2,
				    .nsets = argc > 2 ? (unsigned)argc - 2 : 0 };
	struct mmusim_report r;
	struct mmusim *m;

	if (argc < 2) {
		fprintf(stderr, "usage: embed TRACE [path=value ...]\n");
		return 2;
	}
	if (mmusim_create(&m, &o) || mmusim_replay(m, argv[1], NULL) || mmusim_report(m, 0, &r)) {
		fprintf(stderr, "embed: %s\n", m ? mmusim_error(m) : "out of memory");
		mmusim_destroy(m);
		return 1;
	}
	printf("refs %llu\n", (unsigned long long)r.refs);
	printf("l1i_misses %llu\n", (unsigned long long)r.l1i_misses);
	printf("l1d_misses %llu\n", (unsigned long long)r.l1d_misses);
	printf("stlb_misses %llu\n", (unsigned long long)r.stlb_misses);
	printf("walks %llu\n", (unsigned long long)r.walks);
	printf("pgfault %llu\n", (unsigned long long)r.pgfault);
	mmusim_destroy(m);
	return 0;
}
