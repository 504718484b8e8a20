/* SPDX-License-Identifier: MIT */
/*
 * The CPU time a thread spends outside liboms between two of its calls on
 * one context: what the emulated device charges on its model clock when
 * told to (OMS_EMU_F_CHARGE_CPU, oms_emu.h says why).  The context layer
 * opens a scope in each data-path call (OMS_CPU_SCOPE): on entry it adds
 * the time since the last call returned, on exit it notes the clocks.
 * The backend takes what was added at its next post.
 *
 * Which clock.  A client's work between two calls is often tens of
 * nanoseconds, so the interval is read on the wall clock (CLOCK_MONOTONIC,
 * no system call), less one read's own cost.  But on a machine with more
 * threads than cores a thread is descheduled for a scheduler slice at a
 * time, which is not work it did, and a slice is long: an interval
 * longer than OMS_CPU_LONG_NS is read on the thread's CPU clock instead
 * (a system call, so read only on exit, where it costs the device
 * nothing), less that clock's read cost.  Either way a nested call adds
 * nothing, and a context used by another thread than the one that left
 * it is not charged for that gap (the two clocks do not compare).
 */
#ifndef OMS_UTIL_CPU_CHARGE_H
#define OMS_UTIL_CPU_CHARGE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "util/clock.h"

/* Shorter than any scheduler slice, longer than most work between calls */
#define OMS_CPU_LONG_NS	20000u

struct oms_cpu_charge {
	int on;			/* the backend asked for it */
	uint64_t left_wall;	/* wall clock at the last return; 0 none */
	uint64_t left_cpu;	/* thread CPU clock at the same return */
	pthread_t thread;	/* the thread that returned */
	uint64_t out_ns;	/* counted, not yet taken by the backend */
	uint64_t wall_cost;	/* one read of each clock, its own cost */
	uint64_t cpu_cost;
};

static inline uint64_t oms_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Turn counting on for a context (its backend's open()): the least of a
 * few back-to-back pairs of each clock is its read cost. */
static inline void oms_cpu_charge_start(struct oms_cpu_charge *c)
{
	uint64_t wall = UINT64_MAX, cpu = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = oms_now_ns(), b = oms_now_ns();
		uint64_t x = oms_thread_cpu_ns(), y = oms_thread_cpu_ns();

		if (b - a < wall)
			wall = b - a;
		if (y - x < cpu)
			cpu = y - x;
	}
	c->wall_cost = wall;
	c->cpu_cost = cpu;
	c->left_wall = 0;
	c->out_ns = 0;
	c->on = 1;
}

static inline struct oms_cpu_charge *
oms_cpu_enter(struct oms_cpu_charge *c)
{
	uint64_t d, cost;

	if (!c || !c->on)
		return NULL;
	if (c->left_wall && pthread_equal(c->thread, pthread_self())) {
		d = oms_now_ns() - c->left_wall;
		cost = c->wall_cost;
		if (d > OMS_CPU_LONG_NS) {
			d = oms_thread_cpu_ns() - c->left_cpu;
			cost = c->cpu_cost;
		}
		c->out_ns += d > cost ? d - cost : 0;
	}
	c->left_wall = 0;	/* a call made inside this one adds nothing */
	return c;
}

static inline void oms_cpu_leave(struct oms_cpu_charge **cp)
{
	struct oms_cpu_charge *c = *cp;

	if (!c)
		return;
	c->thread = pthread_self();
	c->left_cpu = oms_thread_cpu_ns();
	c->left_wall = oms_now_ns();	/* after the slow read */
}

/* The rest of the calling function is one call: counted from its entry
 * to its return, whichever return that is. */
#define OMS_CPU_SCOPE(c)						\
	struct oms_cpu_charge *oms_cpu_scope_				\
		__attribute__((cleanup(oms_cpu_leave), unused)) =	\
		oms_cpu_enter(c)

#endif /* OMS_UTIL_CPU_CHARGE_H */
