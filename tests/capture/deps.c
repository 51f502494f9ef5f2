/*
 * deps.c - dependences the capture records (tests/check_capture_tool.c,
 * dependences; `cc -O1 -static -no-pie -Iinclude`, captured with
 * `mmusim capture --roi` under `setarch -R`). Each mode builds its data before
 * the region of interest and walks it inside; the pointers are computed
 * from the loop index, so no stored pointer derives from a load:
 *
 *   deps list    p = p->next, STEPS times from the list's head: each load's
 *                address is the value of the load before it (DEP 1; the
 *                first, the head's constant address, none);
 *   deps sweep   sum += a[i] over a static array: no address depends on a
 *                load;
 *   deps spill   the list walk with p kept in a volatile stack slot: each
 *                step reloads p (an independent load) and loads p->next
 *                from it, which stores it back; the reload carries the
 *                stored pointer's dependence, so p->next depends on the
 *                previous p->next, two loads back (the first step: on the
 *                reload of the slot set before the region, one back);
 *   deps heads   HEADS steps of the walk, each pointer stored into heads[j]
 *                (the first loop: DEP 1 as in list), then heads[j]->v for
 *                each j: the load of heads[j] is independent, and the load
 *                of ->v depends through memory on the walk's j-th load,
 *                HEADS + j + 1 loads back.
 *
 * Exit status 0; the sum goes to a volatile, so that nothing is optimised away.
 */
#include <string.h>

#include "mmusim_roi.h"

#define NODES 4096
#define STEPS 1000
#define HEADS 200

struct node {
	struct node *next;
	long v;
};

static struct node nodes[NODES];
static struct node *heads[HEADS];
static long a[STEPS];
static volatile long sink;

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "list";
	struct node *p = &nodes[0];
	long sum = 0;

	/* a cycle through every node: i -> 1 + 3i mod 4096 (odd multiplier, odd increment) */
	for (long i = 0; i < NODES; i++) {
		nodes[i].next = &nodes[(1 + 3 * i) % NODES];
		nodes[i].v = i;
	}
	for (long i = 0; i < STEPS; i++)
		a[i] = i;
	if (!strcmp(mode, "list")) {
		MMUSIM_ROI_BEGIN();
		for (int k = 0; k < STEPS; k++)
			p = p->next;
		MMUSIM_ROI_END();
		sum = p->v;
	} else if (!strcmp(mode, "sweep")) {
		MMUSIM_ROI_BEGIN();
		for (int i = 0; i < STEPS; i++)
			sum += a[i];
		MMUSIM_ROI_END();
	} else if (!strcmp(mode, "spill")) {
		struct node *volatile slot = p;

		MMUSIM_ROI_BEGIN();
		for (int k = 0; k < STEPS; k++)
			slot = slot->next;
		MMUSIM_ROI_END();
		sum = slot->v;
	} else if (!strcmp(mode, "heads")) {
		MMUSIM_ROI_BEGIN();
		for (int j = 0; j < HEADS; j++) {
			p = p->next;
			heads[j] = p;
		}
		for (int j = 0; j < HEADS; j++)
			sum += heads[j]->v;
		MMUSIM_ROI_END();
	} else {
		return 2;
	}
	sink = sum;
	return 0;
}
