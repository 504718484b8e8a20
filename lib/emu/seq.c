// SPDX-License-Identifier: MIT
/*
 * Destination ordering by sequence number (seed 004, section 5.2): a
 * queue whose operations carry OMS_WR_F_SEQ is one stream (thread) of the
 * reorder buffer (lib/engine/rob.h) of each destination node.  However
 * the fabric (here: chaos) reorders them on the way, the device applies
 * them in sequence order, so the channel is in-order ("posted") without
 * the initiator waiting for anything.  A command refused at intake still
 * fills its sequence number (a skip), so a bad command never stalls the
 * stream.  A flush on such a channel answers once every operation before
 * its count has been applied.
 */
#include <errno.h>

#include "emu/emu.h"

#define SKIP UINT64_MAX

int emu_seq_init(struct emu_dev *dev)
{
	for (unsigned n = 0; n < OMS_MAX_NODES; n++) {
		int err = oms_rob_init(&dev->rob[n], EMU_MAX_QUEUES,
				       EMU_SEQ_WINDOW, NULL, 0);

		if (err) {
			while (n--)
				oms_rob_destroy(&dev->rob[n]);
			return err;
		}
	}
	return 0;
}

void emu_seq_fini(struct emu_dev *dev)
{
	for (unsigned n = 0; n < OMS_MAX_NODES; n++)
		if (dev->rob[n].streams)
			oms_rob_destroy(&dev->rob[n]);
}

void emu_seq_queue_init(struct emu_queue *q)
{
	for (uint32_t i = 0; i < EMU_SEQ_WINDOW; i++)
		q->park_free[i] = (uint16_t)(EMU_SEQ_WINDOW - 1 - i);
	q->npark_free = EMU_SEQ_WINDOW;
}

/* serial-number compare: has the stream applied everything below @cnt? */
static int covered(struct emu_dev *dev, const struct emu_queue *q,
		   uint32_t dest, uint32_t cnt)
{
	int next = oms_rob_next_seq(&dev->rob[dest], q->id);

	return next >= 0 && (uint16_t)((uint16_t)next - (uint16_t)cnt) < 0x8000;
}

static void flushes(struct emu_dev *dev, struct emu_queue *q, uint32_t dest)
{
	for (uint32_t i = 0; i < q->nflush;) {
		struct emu_pend *f = &q->flush[i];

		if (f->wr.dest != dest || !covered(dev, q, dest, f->wr.seq)) {
			i++;
			continue;
		}
		emu_apply(dev, q, f);
		*f = q->flush[--q->nflush];
	}
}

/* Apply every operation of the stream that is now in order. */
static void drain(struct emu_dev *dev, struct emu_queue *q, uint32_t dest)
{
	uint64_t cookie;

	while (oms_rob_pop(&dev->rob[dest], q->id, NULL, &cookie) == 1) {
		if (cookie == SKIP)
			continue;
		emu_apply(dev, q, &q->parked[cookie]);
		q->park_free[q->npark_free++] = (uint16_t)cookie;
	}
	flushes(dev, q, dest);
}

void emu_seq_arrive(struct emu_dev *dev, struct emu_queue *q,
		    const struct emu_pend *p)
{
	uint16_t slot;
	int r;

	if (p->wr.dest >= OMS_MAX_NODES || !q->npark_free) {
		emu_apply(dev, q, p);	/* cannot happen: validated, bounded */
		return;
	}
	slot = q->park_free[--q->npark_free];
	q->parked[slot] = *p;
	r = oms_rob_insert(&dev->rob[p->wr.dest], q->id,
			   (oms_rob_seq_t)p->wr.seq, slot);
	if (r < 0) {
		/* Outside the window or a duplicate: not a stream member;
		 * fail it rather than apply it out of order. */
		q->park_free[q->npark_free++] = slot;
		emu_fail(dev, q, p, r);
		return;
	}
	drain(dev, q, p->wr.dest);
}

void emu_seq_skip(struct emu_dev *dev, struct emu_queue *q,
		  const struct oms_wr *wr)
{
	if (wr->dest >= OMS_MAX_NODES)
		return;
	if (oms_rob_insert(&dev->rob[wr->dest], q->id, (oms_rob_seq_t)wr->seq,
			   SKIP) >= 0)
		drain(dev, q, wr->dest);
}

void emu_seq_flush(struct emu_dev *dev, struct emu_queue *q,
		   const struct oms_wr *wr)
{
	struct emu_pend f = { .wr = *wr };

	if (wr->dest >= OMS_MAX_NODES || covered(dev, q, wr->dest, wr->seq) ||
	    q->nflush == EMU_MAX_FLUSH) {
		emu_apply(dev, q, &f);
		return;
	}
	q->flush[q->nflush++] = f;
}

void emu_seq_drop_queue(struct emu_dev *dev, struct emu_queue *q)
{
	for (unsigned n = 0; n < OMS_MAX_NODES; n++)
		oms_rob_resync(&dev->rob[n], q->id, 0, NULL, 0);
}
