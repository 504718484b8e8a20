// SPDX-License-Identifier: MIT
/*
 * Destination ordering by sequence number (seed 004, section 5.2): a
 * queue whose operations carry OMS_WR_F_SEQ is one stream (thread) of the
 * reorder buffer (lib/engine/rob.h) of each destination node.  However
 * the fabric (here: chaos) reorders them on the way, the device performs
 * them in sequence order, so the channel is in-order ("posted") without
 * the initiator waiting for anything.
 *
 * A member popped from the reorder buffer is the stream's head until it
 * is done, and nothing later is popped meanwhile: a get is done when it
 * has read (every line executed), a fenced member waits for its fence
 * (lib/emu/order.c).  The head is retried every device step.
 *
 * What is performed, cancelled or refused is decided by the engine's
 * destination stream machine (lib/engine/dest_stream.h), which the
 * destination agent drives too: like a QP in error, the stream stops at
 * its first failed member - one refused at intake (it fills its number
 * with a skip), one that fails when performed, a NOP with OMS_WR_F_CANCEL
 * (an op the initiator cancelled before sending it) - and where it stands
 * at a duplicate or a number out of the window.  An OMS_WR_RESUME to the
 * destination resumes it at the number the resume carries.  What is this
 * device's own: a head that takes time (a get reading, a fence), and
 * flushes, each answered once every member before its count is done.
 */
#include <errno.h>

#include "emu/emu.h"
#include "engine/serial.h"

#define SKIP EMU_SEQ_SKIP
#define NO_HEAD EMU_SEQ_NO_HEAD

static uint32_t bit(uint32_t dest)
{
	return 1u << dest;
}

/* The sequence number of the stream's first member not done yet. */
static uint16_t stream_next(struct oms_emu *dev, const struct emu_queue *q,
			    uint32_t dest)
{
	const struct oms_dseq *m = emu_seq_machine(dev, dest, 0);

	if (q->seq_head[dest] != NO_HEAD)
		return (uint16_t)q->parked[q->seq_head[dest]].wr.seq;
	/* a stream with no member yet starts at 0 */
	return m ? oms_dseq_next(m, q->id) : 0;
}

/* Would a flush of @dest's stream counting @cnt members be cancelled? */
static int flush_cancelled(struct oms_emu *dev, const struct emu_queue *q,
			   uint32_t dest, uint16_t cnt)
{
	const struct oms_dseq *m = emu_seq_machine(dev, dest, 0);

	if (q->seq_lost & bit(dest))
		return 1;
	return m && oms_dseq_flush_cancelled(m, q->id, cnt);
}

/* serial-number compare: is every member below @cnt done? */
static int covered(struct oms_emu *dev, const struct emu_queue *q,
		   uint32_t dest, uint32_t cnt)
{
	return oms_serial_at_or_after(stream_next(dev, q, dest), (uint16_t)cnt);
}

enum { FENCE_GO, FENCE_WAIT, FENCE_CANCEL };

/* Where stream member or flush @p stands with its fence (if any): every
 * earlier command to its destination performed, none failed. */
static int fence_state(const struct emu_queue *q, const struct emu_pend *p)
{
	if (!(p->wr.flags & OMS_WR_F_FENCE))
		return FENCE_GO;
	if (!emu_fence_ready(q, p->wr.dest, p->idx, 1))
		return FENCE_WAIT;
	return emu_fence_failed(q, p->wr.dest, p->idx) ? FENCE_CANCEL :
							  FENCE_GO;
}

/* Answer flush @f if it is due; returns 1 if answered. */
static int flush_try(struct oms_emu *dev, struct emu_queue *q,
		     const struct emu_pend *f)
{
	uint32_t dest = f->wr.dest;

	if (flush_cancelled(dev, q, dest, (uint16_t)f->wr.seq)) {
		emu_fail(dev, q, f, -ECANCELED);
		return 1;
	}
	if (!covered(dev, q, dest, f->wr.seq))
		return 0;
	switch (fence_state(q, f)) {
	case FENCE_WAIT:
		return 0;
	case FENCE_CANCEL:
		emu_fail(dev, q, f, -ECANCELED);
		return 1;
	}
	emu_apply(dev, q, f);
	return 1;
}

static int flushes(struct oms_emu *dev, struct emu_queue *q, uint32_t dest)
{
	int n = 0;

	for (uint32_t i = 0; i < q->nflush;) {
		struct emu_pend *f = &q->flush[i];

		if (f->wr.dest != dest || !flush_try(dev, q, f)) {
			i++;
			continue;
		}
		*f = q->flush[--q->nflush];
		n++;
	}
	return n;
}

/* The head get went to the RLSQ: has it read every line (or is it gone,
 * its slot reused)? */
static int head_get_read(const struct emu_queue *q, uint32_t dest,
			 const struct emu_pend *p)
{
	const struct emu_get *g = &q->gets[q->seq_get[dest] % EMU_MAX_GETS];

	return g->idx != p->idx || !g->active || g->executed >= g->nlines;
}

/* A member failed or was cancelled: complete it, stop the stream. */
static void head_fail(struct oms_emu *dev, struct emu_queue *q,
		      const struct emu_pend *p, int status)
{
	emu_fail(dev, q, p, status);
	emu_seq_failed(dev, q, p->wr.dest, (uint16_t)p->wr.seq);
}

/* Get on with the head of @dest's stream; returns 1 when it is done. */
static int head_step(struct oms_emu *dev, struct emu_queue *q, uint32_t dest)
{
	const struct emu_pend *p = &q->parked[q->seq_head[dest]];

	if (q->seq_started & bit(dest))
		return head_get_read(q, dest, p);
	/* Taken with the machine's GO, it goes: a later stop is after it. */
	switch (fence_state(q, p)) {
	case FENCE_WAIT:
		return 0;
	case FENCE_CANCEL:
		head_fail(dev, q, p, -ECANCELED);
		return 1;
	}
	if (p->wr.op == OMS_WR_GET) {
		/* Its lines fail it (and stop the stream) in reads.c. */
		q->gets_pending--;
		q->seq_get[dest] = q->get_tail;
		q->seq_started |= bit(dest);
		emu_get_accept(dev, q, p);
		return 0;
	}
	if (emu_apply(dev, q, p) < 0)
		emu_seq_failed(dev, q, dest, (uint16_t)p->wr.seq);
	return 1;
}

/* Pop the next member of @dest's stream to be its head.  One the machine
 * says not to perform (a skip, completed at intake; a cancelling NOP; a
 * member after the stop) is completed here. */
static int pop_head(struct oms_emu *dev, struct emu_queue *q, uint32_t dest)
{
	struct oms_dseq *m = emu_seq_machine(dev, dest, 0);
	enum oms_stream_verdict v;
	uint64_t cookie;

	while (m && oms_dseq_pop(m, q->id, NULL, &cookie, &v) == 1) {
		if (v == OMS_STREAM_GO) {
			q->seq_head[dest] = (int16_t)cookie;
			q->seq_wait |= bit(dest);
			return 1;
		}
		emu_seq_cancel(dev, q, cookie);
		emu_seq_complete_dropped(dev, q, m);
	}
	return 0;
}

static void head_done(struct emu_queue *q, uint32_t dest)
{
	emu_seq_unpark(q, (uint16_t)q->seq_head[dest]);
	q->seq_head[dest] = NO_HEAD;
	q->seq_started &= ~bit(dest);
	q->seq_wait &= ~bit(dest);
}

/* Perform every member of the stream that may go now; answer flushes. */
static int perform_ready(struct oms_emu *dev, struct emu_queue *q,
			 uint32_t dest)
{
	int n = 0;

	while (q->seq_head[dest] != NO_HEAD || pop_head(dev, q, dest)) {
		if (!head_step(dev, q, dest))
			break;
		head_done(q, dest);
		n++;
	}
	return n + flushes(dev, q, dest);
}

/* Every device step: heads waiting (a get reading, a fence), flushes. */
int emu_seq_step(struct oms_emu *dev, struct emu_queue *q)
{
	uint32_t mask = q->seq_wait;
	int n = 0;

	for (uint32_t i = 0; i < q->nflush; i++)
		mask |= bit(q->flush[i].wr.dest);
	for (; mask; mask &= mask - 1)
		n += perform_ready(dev, q, (uint32_t)__builtin_ctz(mask));
	return n;
}

/* Is @p a NOP standing for an op its initiator cancelled?  It takes
 * its number and stops the stream there, as a refused member does. */
static int cancelling_nop(const struct emu_pend *p)
{
	return p->wr.op == OMS_WR_NOP && (p->wr.flags & OMS_WR_F_CANCEL);
}

void emu_seq_arrive(struct oms_emu *dev, struct emu_queue *q,
		    const struct emu_pend *p)
{
	struct oms_dseq *m;
	uint16_t slot;
	int r;

	/* Cannot happen (validated; at most a window in flight): fail it
	 * rather than perform it out of order. */
	if (p->wr.dest >= OMS_MAX_NODES || !q->npark_free) {
		emu_fail(dev, q, p, -ENOSPC);
		return;
	}
	m = emu_seq_machine(dev, p->wr.dest, 1);
	if (!m || (q->seq_lost & bit(p->wr.dest))) {
		emu_fail(dev, q, p, m ? -ECANCELED : -ENOMEM);
		return;
	}
	slot = q->park_free[--q->npark_free];
	emu_seq_park(q, slot, p);
	r = oms_dseq_arrive(m, q->id, (uint16_t)p->wr.seq, slot,
			    cancelling_nop(p));
	if (r) {
		/* after the stop, or no place in the stream: the machine
		 * stopped it where it stood */
		emu_seq_unpark(q, slot);
		emu_fail(dev, q, p, r);
		emu_seq_complete_dropped(dev, q, m);
	}
	perform_ready(dev, q, p->wr.dest);
}

void emu_seq_skip(struct oms_emu *dev, struct emu_queue *q,
		  const struct oms_wr *wr)
{
	struct oms_dseq *m;

	if (wr->dest >= OMS_MAX_NODES)
		return;
	m = emu_seq_machine(dev, wr->dest, 1);
	/* no memory for the stream: its later members fail as this did */
	if (!m) {
		q->seq_lost |= bit(wr->dest);
		return;
	}
	oms_dseq_arrive(m, q->id, (uint16_t)wr->seq, SKIP, 1);
	emu_seq_complete_dropped(dev, q, m);
	perform_ready(dev, q, wr->dest);
}

/*
 * OMS_WR_RESUME: the initiator resumes @dest's stream; its next member
 * carries @next (the initiator's numbering goes on across a resume).
 * A stream never used needs no machine for a resume at 0.
 */
void emu_seq_resume(struct oms_emu *dev, struct emu_queue *q, uint32_t dest,
		     uint16_t next)
{
	struct oms_dseq *m = emu_seq_machine(dev, dest, next != 0);

	q->seq_lost &= ~bit(dest);
	if (!m)
		return;
	oms_dseq_resume(m, q->id, next);
	emu_seq_complete_dropped(dev, q, m);
}

/*
 * A flush of a stream, at intake.  Answered only once covered (never
 * early): the list has room for every command the ring can hold.
 */
void emu_seq_flush(struct oms_emu *dev, struct emu_queue *q,
		   const struct emu_pend *f)
{
	if (!flush_try(dev, q, f))
		q->flush[q->nflush++] = *f;
}

void emu_seq_drop_queue(struct oms_emu *dev, struct emu_queue *q)
{
	uint64_t cookie;

	/* the queue is gone: what it had buffered is forgotten with it */
	for (unsigned n = 0; n < OMS_MAX_NODES; n++) {
		if (!dev->dseq[n].st)
			continue;
		oms_dseq_resume(&dev->dseq[n], q->id, 0);
		while (oms_dseq_dropped(&dev->dseq[n], &cookie))
			;
	}
}
