// SPDX-License-Identifier: MIT
/*
 * The emulated device's model clock and its chaos stream, which every part
 * of the device reads (intake, the pool, the read engine, completions).
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

static void later(uint64_t *next, uint64_t t, uint64_t now)
{
	if (t > now && t < *next)
		*next = t;
}

static void queue_events(const struct oms_emu *dev, const struct emu_queue *q,
			 uint64_t now, uint64_t *next)
{
	uint32_t first_new = q->npool - q->unadmitted;

	if (dev->cfg.chaos_seed) {
		/* any ready entry may leave: each one's time */
		for (uint32_t i = 0; i < first_new; i++)
			later(next, q->pool[i].due, now);
	} else if (first_new) {
		/* in order: the first one holds the others back */
		later(next, q->pool[0].due, now);
	}
	/* arrivals are in order */
	if (q->unadmitted)
		later(next, q->pool[first_new].arrive, now);
	if (q->nacks)
		later(next, q->ack_due_min, now);
	/* gets go to the read engine in order, each when its request
	 * reaches the root complex */
	if (q->get_sub != q->get_tail)
		later(next, q->gets[q->get_sub % EMU_MAX_GETS].resp_due, now);
}

/*
 * The earliest model time after now at which something is due: a command
 * reaching the NIC or the memory, a line's access finishing, a request
 * reaching the root complex, a completion reaching its initiator.  What
 * is due now but waits for another command (an order, a hold, a stream's
 * head) is not an event: the one it waits for is.
 */
uint64_t emu_next_event(struct oms_emu *dev)
{
	uint64_t now = dev->clock, next = EMU_NO_EVENT;

	for (uint32_t i = 0; i < dev->nq; i++)
		queue_events(dev, dev->qlist[i], now, &next);
	later(&next, emu_lines_next(dev), now);
	return next;
}

/*
 * Nothing more can happen at the clock's time: move it to the next event
 * if no working initiator is behind that (@horizon) and the wall clock
 * lets it.  Returns 1 if it moved.
 */
int emu_clock_advance(struct oms_emu *dev, uint64_t horizon)
{
	uint64_t next = emu_next_event(dev);

	if (next == EMU_NO_EVENT) {
		dev->stuck_since = 0;
		return 0;
	}
	if (next > horizon) {
		/* a thread is working at an earlier time: wait for it, and
		 * look whether it still works (initiator.c) */
		emu_initiators_look(dev, next);
		return 0;
	}
	dev->stuck_since = 0;
	if ((emu_wall_ns() - dev->t0) / dev->cfg.time_scale < next)
		return 0;	/* the floor: wall time / time_scale */
	__atomic_store_n(&dev->clock, next, __ATOMIC_RELEASE);
	return 1;
}

/* The chaos fabric's stream (engine/fabric.h); the device thread's own. */
uint64_t emu_rand(struct oms_emu *dev)
{
	return oms_fab_rand(&dev->rng);
}
