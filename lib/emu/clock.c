// SPDX-License-Identifier: MIT
/*
 * The emulated device's model clock and its chaos stream, which every part
 * of the device reads (intake, the pool, the read engine, completions):
 * model time is wall time divided by the latency model's scale (0 without
 * a model), so that a machine's speed does not change the figures' shape.
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
	if (!dev->cfg.time_scale)
		return 0;
	return (emu_wall_ns() - dev->t0) / dev->cfg.time_scale;
}

/* The chaos fabric's stream (engine/fabric.h); the device thread's own. */
uint64_t emu_rand(struct oms_emu *dev)
{
	return oms_fab_rand(&dev->rng);
}
