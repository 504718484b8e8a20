// SPDX-License-Identifier: MIT
/*
 * The per-thread state of util/cpu_charge.h and the one measurement it
 * needs: what a read of the thread CPU clock costs on this machine.
 */
#include <pthread.h>

#include "util/cpu_charge.h"

__thread struct oms_cpu_thread oms_cpu_self;

static pthread_once_t cost_once = PTHREAD_ONCE_INIT;
static uint64_t read_cost;

/* The least of a few back-to-back pairs: a pair that lost its core in
 * between is never the least. */
static void measure_cost(void)
{
	uint64_t least = UINT64_MAX;

	for (int i = 0; i < 32; i++) {
		uint64_t a = oms_thread_cpu_ns(), b = oms_thread_cpu_ns();

		if (b - a < least)
			least = b - a;
	}
	read_cost = least;
}

uint64_t oms_cpu_read_cost(void)
{
	pthread_once(&cost_once, measure_cost);
	return read_cost;
}
