// SPDX-License-Identifier: MIT
/*
 * The per-thread state of util/cpu_charge.h and its one measurement:
 * what a read of the thread CPU clock costs, now, on this thread.
 */
#include <stdlib.h>
#include <string.h>

#include "util/cpu_charge.h"

__thread struct oms_cpu_thread oms_cpu_self;

#define PAIRS	15

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A read at the end of one call and one at the start of the next, as
 * the context layer makes them: the pair costs what an interval with no
 * work in it does (the calls' own entries and returns included). */
static __attribute__((noinline)) uint64_t read_leaving(void)
{
	return oms_thread_cpu_ns();
}

static __attribute__((noinline)) uint64_t read_entering(void)
{
	return oms_thread_cpu_ns();
}

/* The median of PAIRS such pairs (a pair that lost its core is an
 * outlier, not the median). */
static uint64_t pairs_median(void)
{
	uint64_t d[PAIRS];

	for (int i = 0; i < PAIRS; i++) {
		uint64_t left = read_leaving();

		d[i] = read_entering() - left;
	}
	qsort(d, PAIRS, sizeof(d[0]), cmp_u64);
	return d[PAIRS / 2];
}

/* The thread's intervals kept since the last time (half of the time
 * before): enough to stand for the cost. */
#define ENOUGH	256

/*
 * The median of the thread's intervals, or with too few of
 * them (or all out of the bins' range: the bins move there) the pairs'
 * median; then the counts decay, so that the cost follows the machine.
 */
void oms_cpu_measure_cost(struct oms_cpu_thread *t)
{
	uint64_t n = 0, seen = 0;
	uint32_t b;

	if (!t->base) {
		uint64_t m = pairs_median();

		t->base = m > OMS_CPU_BINS / 2 * OMS_CPU_BIN_NS ?
			  m - OMS_CPU_BINS / 2 * OMS_CPU_BIN_NS : 1;
		t->cost = m;
	}
	for (b = 0; b < OMS_CPU_BINS; b++)
		n += t->bins[b];
	if (n >= ENOUGH) {
		for (b = 0; seen * 2 < n; b++)
			seen += t->bins[b];
		t->cost = t->base + (uint64_t)(b - 1) * OMS_CPU_BIN_NS +
			  OMS_CPU_BIN_NS / 2;
	} else if (t->cost && t->since_cost >= OMS_CPU_RECAL) {
		/* a thread whose intervals fall outside the bins: the
		 * machine's reads moved; start again from where they are */
		memset(t->bins, 0, sizeof(t->bins));
		t->base = 0;
		oms_cpu_measure_cost(t);
		return;
	}
	for (b = 0; b < OMS_CPU_BINS; b++)
		t->bins[b] /= 2;
	t->since_cost = 0;
}
