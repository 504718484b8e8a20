/* SPDX-License-Identifier: MIT */
/*
 * Submission ring indices with a doorbell by count (seed 003: the producer
 * writes commands into a ring, then tells the consumer how many it may
 * execute).  Pure index arithmetic; the slots belong to the caller.
 *
 *   written - commands the producer has put in slots;
 *   rung    - of which the doorbell announced (rung <= written);
 *   taken   - of which the consumer executed (taken <= rung).
 *
 * A command written but not rung is never executed (L20); ringing with n
 * releases exactly n.  Indices are free-running 32-bit counters, the slot
 * of index i is i & (size - 1).
 */
#ifndef OMS_ENGINE_DOORBELL_H
#define OMS_ENGINE_DOORBELL_H

#include <stdint.h>

struct oms_db_ring {
	uint32_t size;		/* power of two */
	uint32_t written, rung, taken;
	uint64_t refused;	/* bad doorbells and full-ring writes */
};

/* Returns 0 or -EINVAL (size not a power of two in 2..2^24). */
int oms_db_init(struct oms_db_ring *r, uint32_t size);

/* Claim the next slot to write.  Returns its slot, or -ENOSPC (full). */
int oms_db_produce(struct oms_db_ring *r);

/* Ring the doorbell for @n written commands.  0, or -EINVAL (n == 0 or
 * more than written-but-unrung; nothing changes). */
int oms_db_ring(struct oms_db_ring *r, uint32_t n);

/* Take the next rung command.  Returns its slot, or -EAGAIN (none rung). */
int oms_db_consume(struct oms_db_ring *r);

/* Slots free for the producer (room for commands taken by the consumer). */
uint32_t oms_db_space(const struct oms_db_ring *r);

#endif
