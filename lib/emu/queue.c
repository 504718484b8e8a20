// SPDX-License-Identifier: MIT
/*
 * Initiator side of an emulated queue: write commands into the submission
 * ring, ring the doorbell with a count (seed 003), reap completions.  The
 * producer keeps its indices in an engine doorbell ring (lib/engine/
 * doorbell.h) and learns how far the device got from the shared "taken"
 * word; the doorbell itself is one release store of the rung count, so a
 * command written but not rung is never seen by the device (L20).
 */
#include <errno.h>

#include "emu/emu.h"

int emu_q_post_at(struct emu_queue *q, const struct oms_wr *wr,
		  uint64_t not_before)
{
	int slot;

	q->prod.taken = __atomic_load_n(&q->taken, __ATOMIC_ACQUIRE);
	slot = oms_db_produce(&q->prod);
	if (slot < 0)
		return slot;
	q->sq[slot] = *wr;
	q->not_before[slot] = not_before;
	return 0;
}

int emu_q_post(struct emu_queue *q, const struct oms_wr *wr)
{
	return emu_q_post_at(q, wr, 0);
}

int emu_q_ring(struct emu_queue *q, uint32_t n)
{
	int err = oms_db_ring(&q->prod, n);

	if (err)
		return err;
	/* The doorbell: everything written above is published with it. */
	__atomic_store_n(&q->doorbell, q->prod.rung, __ATOMIC_RELEASE);
	return 0;
}

int emu_q_poll(struct emu_queue *q, struct oms_wc *wc, int max,
	       uint64_t *src_done)
{
	uint32_t tail = __atomic_load_n(&q->cq_tail, __ATOMIC_ACQUIRE);
	uint32_t head = q->cq_head;
	int n = 0;

	while (head != tail && n < max) {
		wc[n++] = q->cq[head & (q->size - 1)];
		head++;
	}
	__atomic_store_n(&q->cq_head, head, __ATOMIC_RELEASE);
	/* Read after the tail: covers every completion returned. */
	if (src_done)
		*src_done = __atomic_load_n(&q->src_done, __ATOMIC_ACQUIRE);
	return n;
}
