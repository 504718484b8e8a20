// SPDX-License-Identifier: MIT
/*
 * Moving the emulated device's model clock (clock.c says what model time
 * is): the next event of every part of the device (the queues' commands,
 * arrivals, acknowledgements and gets, the read engine's lines), and the
 * move to it once no working initiator is behind it (the horizon,
 * initiator.c).  Only the device thread calls it (dev.c); the parts it
 * looks at only read the clock, so the calls go one way.
 */
#include "emu/emu.h"

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
