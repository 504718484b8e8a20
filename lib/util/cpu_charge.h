/* SPDX-License-Identifier: MIT */
/*
 * The CPU time a thread spends outside liboms between its data-path
 * calls: what the emulated device's latency model charges on the thread's
 * model clock when told to (OMS_EMU_F_CHARGE_CPU, oms_emu.h says why).
 * The context layer opens a scope in each data-path call (OMS_CPU_SCOPE);
 * the thread's total so far is oms_cpu_charged(), which the backend reads
 * when it stamps the thread's next operation.
 *
 * Which clock.  The thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID), at
 * every interval length: a thread that waits for a core, or sleeps, is not
 * working.  That clock has no vDSO: a read is a system call (about 1.1 us
 * on this project's 2-core VMs, 22 ns for CLOCK_MONOTONIC).  So it is read
 * once per call, on entry.  Where the last call left off is reckoned from
 * its entry: its CPU time then, plus the wall time it lasted, which is its
 * CPU time when nothing took its core meanwhile.  A call that waited for
 * the device (oms_cpu_waited()), or lasted long enough to have been
 * descheduled (OMS_CPU_LONG_NS), reads the CPU clock again on its way out
 * instead: the end of a wait is not timed anyway.  One read's own cost is
 * taken off each interval (the least of a few back-to-back pairs,
 * measured once per process).
 *
 * Per thread, not per context: the time between a call on one context
 * and a call on another is the thread's work too.  A nested call adds
 * nothing; a call of a context that does not count (no charging device)
 * ends the interval without charging it.
 */
#ifndef OMS_UTIL_CPU_CHARGE_H
#define OMS_UTIL_CPU_CHARGE_H

#include <stdint.h>
#include <time.h>

#include "util/clock.h"

/* A call longer than this (wall) may have lost its core: its exit reads
 * the CPU clock rather than trust the wall clock. */
#define OMS_CPU_LONG_NS	20000u

struct oms_cpu_thread {
	uint64_t charged;	/* CPU ns outside liboms so far (counting) */
	uint64_t left_cpu;	/* thread CPU clock when the last counting
				 * call returned; 0: none to count from */
	uint64_t in_cpu;	/* the outermost call's entry: CPU clock */
	uint64_t in_wall;	/* and CLOCK_MONOTONIC */
	uint32_t depth;		/* data-path calls in progress */
	uint32_t counting;	/* the outermost one counts */
	uint32_t waited;	/* the outermost one waited (for the device:
				 * its wall time is not its CPU time) */
};

/* This thread's (lib/util/cpu_charge.c). */
extern __thread struct oms_cpu_thread oms_cpu_self
	__attribute__((visibility("hidden")));

/* One read of the thread CPU clock, its own cost (once per process). */
uint64_t oms_cpu_read_cost(void) __attribute__((visibility("hidden")));

static inline uint64_t oms_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The CPU ns this thread has spent outside liboms since it started
 * counting: a backend charges the difference between two readings. */
static inline uint64_t oms_cpu_charged(void)
{
	return oms_cpu_self.charged;
}

static inline int oms_cpu_enter(int on)
{
	struct oms_cpu_thread *t = &oms_cpu_self;
	uint64_t now, cost;

	if (t->depth++)
		return 0;		/* nested: the outer call counts */
	t->counting = on;
	if (!on) {
		t->left_cpu = 0;	/* nothing to count across it */
		return 0;
	}
	now = oms_thread_cpu_ns();
	if (t->left_cpu && now > t->left_cpu) {
		cost = oms_cpu_read_cost();
		t->charged += now - t->left_cpu > cost ?
			      now - t->left_cpu - cost : 0;
	}
	t->in_cpu = now;
	t->in_wall = oms_now_ns();
	t->waited = 0;
	return 0;
}

/* The call in progress waits (sleeps, yields): its wall time is not its
 * CPU time. */
static inline void oms_cpu_waited(void)
{
	oms_cpu_self.waited = 1;
}

static inline void oms_cpu_leave(int *unused)
{
	struct oms_cpu_thread *t = &oms_cpu_self;
	uint64_t wall;

	(void)unused;
	if (--t->depth || !t->counting)
		return;
	wall = oms_now_ns() - t->in_wall;
	t->left_cpu = wall > OMS_CPU_LONG_NS || t->waited ?
		      oms_thread_cpu_ns() : t->in_cpu + wall;
}

/* The rest of the calling function is one call, counted (when @on) from
 * its entry to its return, whichever return that is. */
#define OMS_CPU_SCOPE(on)						\
	int oms_cpu_scope_						\
		__attribute__((cleanup(oms_cpu_leave), unused)) =	\
		oms_cpu_enter(on)

#endif /* OMS_UTIL_CPU_CHARGE_H */
