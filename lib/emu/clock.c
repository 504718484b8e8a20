// SPDX-License-Identifier: MIT
/*
 * The emulated device's model clock and its chaos stream, which every part
 * of the device reads (intake, the pool, the read engine, completions);
 * what moves the clock is advance.c, which looks at all of them.
 *
 * Model time is the device's own, as in a discrete-event simulator: the
 * clock stands at the time of the events the device is performing and
 * moves only when none is left there, straight to the earliest one still
 * pending, and then only as far as no initiator thread could still
 * submit something earlier (the horizon, initiator.c).  The host's clock
 * never enters into it, so a busy machine, a descheduled device thread or
 * a thread waiting for a core changes how long a run takes, never what it
 * measures.  The one use of the wall clock is a floor: with time_scale N
 * the model never runs ahead of wall time / N, so that a host thread that
 * is not an initiator (one writing with oms_mr_write()) meets the device's
 * work in flight; it delays events, it never reorders or retimes them.
 * Without a latency model the clock stays at 0 and everything is due at
 * once.
 */
#include <time.h>

#include "emu/emu.h"

uint64_t emu_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t emu_now(const struct oms_emu *dev)
{
	return __atomic_load_n(&dev->clock, __ATOMIC_ACQUIRE);
}

/* The chaos fabric's stream (engine/fabric.h); the device thread's own. */
uint64_t emu_rand(struct oms_emu *dev)
{
	return oms_fab_rand(&dev->rng);
}
