// SPDX-License-Identifier: MIT
/*
 * The per-thread state of util/cpu_charge.h and its measurements: what an
 * empty interval costs, now, on this thread, and what its intervals
 * usually hold beyond that.
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

/* The upper edge of log bin @b. */
static uint64_t log_bin_top(uint32_t b)
{
	uint32_t msb = b / OMS_CPU_LOG_SUB + 4;

	if (!b)
		return 16;
	return ((uint64_t)(OMS_CPU_LOG_SUB + b % OMS_CPU_LOG_SUB + 1)) <<
	       (msb - 2);
}

/* The @pct percentile of what the thread's intervals held beyond the
 * cost (@n of them, at least ENOUGH). */
static uint64_t over_percentile(const struct oms_cpu_thread *t, uint64_t n,
				uint32_t pct)
{
	uint64_t seen = 0;
	uint32_t b;

	for (b = 0; b < OMS_CPU_LOG_BINS; b++) {
		seen += t->over[b];
		if (seen * 100 >= n * pct)
			break;
	}
	return log_bin_top(b < OMS_CPU_LOG_BINS ? b : OMS_CPU_LOG_BINS - 1);
}

/* The 99th percentile of what the thread's intervals held beyond the
 * cost, once there are enough of them (the intervals with
 * nothing beyond it count in the lowest bin); then the counts decay. */
static void oms_cpu_measure_cap(struct oms_cpu_thread *t)
{
	uint64_t n = 0;
	uint32_t b;

	for (b = 0; b < OMS_CPU_LOG_BINS; b++)
		n += t->over[b];
	if (n >= ENOUGH)
		t->cap = over_percentile(t, n, 99);
	for (b = 0; b < OMS_CPU_LOG_BINS; b++)
		t->over[b] /= 2;
}

/*
 * The median of the thread's intervals, or with too few of them (or all
 * out of the bins' range: the bins move there) the pairs' median; then
 * the counts decay, so that the cost follows the machine.
 */
void oms_cpu_measure_cost(struct oms_cpu_thread *t)
{
	uint64_t n = 0, seen = 0;
	uint32_t b;

	for (b = 0; b < OMS_CPU_BINS; b++)
		n += t->bins[b];
	/* too few intervals in the bins' range after a whole window: the
	 * machine's reads moved; start again from where they are */
	if (n < ENOUGH && t->since_cost >= OMS_CPU_RECAL) {
		memset(t->bins, 0, sizeof(t->bins));
		t->base = 0;
	}
	if (!t->base) {
		uint64_t m = pairs_median();

		t->base = m > OMS_CPU_BINS / 2 * OMS_CPU_BIN_NS ?
			  m - OMS_CPU_BINS / 2 * OMS_CPU_BIN_NS : 1;
		t->cost = m;
	} else if (n >= ENOUGH) {
		for (b = 0; seen * 2 < n; b++)
			seen += t->bins[b];
		t->cost = t->base + (uint64_t)(b - 1) * OMS_CPU_BIN_NS +
			  OMS_CPU_BIN_NS / 2;
	}
	for (b = 0; b < OMS_CPU_BINS; b++)
		t->bins[b] /= 2;
	oms_cpu_measure_cap(t);
	t->since_cost = 0;
}
