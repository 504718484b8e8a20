/* SPDX-License-Identifier: MIT */
/*
 * The store orderer's own declarations, shared by its files and by nothing
 * else (store_order.h is the interface):
 *   store_order.c         set-up, copying, the queries;
 *   store_order_submit.c  submission: the fast path for the common case,
 *                         the long way, and what enters the hold queue
 *                         (held ops, fence markers, acquire barriers);
 *   store_order_hold.c    progress: when a held entry may leave, what
 *                         leaves, the flushes it waits for, and what a
 *                         cancelled one takes with it;
 *   store_order_chan.c    what an op leaving for the transport needs and
 *                         leaves behind on its channel: the fence at the
 *                         destination, the in-flight reads, acquires and
 *                         atomics;
 *   store_order_ack.c     completions and failures: acks, failed ops,
 *                         flush answers, gone, resume, and which later
 *                         ops a failure stops.
 * The helpers here are static inline: the submit and progress paths call
 * them per op, and a call across files would cost what they save.
 */
#ifndef OMS_ENGINE_STORE_ORDER_INT_H
#define OMS_ENGINE_STORE_ORDER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/store_order.h"

/* Class values of markers in the hold queue; never store classes. */
#define FENCE_ENTRY	0xff
#define BARRIER_ENTRY	0xfe

enum readiness { WAIT = 0, GO = 1, CANCEL = 2 };

static inline int is_marker(const struct oms_so_held *h)
{
	return h->st.cls == FENCE_ENTRY || h->st.cls == BARRIER_ENTRY;
}

static inline struct oms_so_held *held_at(struct oms_so *so, uint32_t i)
{
	return &so->held[(so->head + i) % so->max_held];
}

static inline uint64_t *snap_at(struct oms_so *so, uint32_t i)
{
	return so->snap + (size_t)((so->head + i) % so->max_held) * so->nchan;
}

static inline int in_scope(const struct oms_so *so, uint16_t scope,
			   uint32_t x)
{
	return scope == OMS_SO_ALL || so->chan[x].dest == scope;
}

static inline int posted(const struct oms_so_chan *ch)
{
	return ch->kind != OMS_CHAN_ACKED;
}

static inline int is_write(const struct oms_so_store *st)
{
	return st->op != OMS_SO_OP_GET;
}

/* Destination sets are 64-bit masks: above 64 destinations alias, which
 * only ever cancels more. */
static inline uint64_t dbit(uint16_t dest)
{
	return 1ull << (dest % 64);
}

/*
 * What an entry must wait for on channel x: every ordered op issued on x
 * before it.  That is the issue count when it was queued, raised by the
 * entries ahead of it in the queue, which all left before it (strict FIFO)
 * and so are covered by the channel's last queue release.
 */
static inline uint64_t need_on(const struct oms_so *so,
			       const uint64_t *snap, uint32_t x)
{
	uint64_t rel = so->chan[x].fifo_released;

	return snap[x] > rel ? snap[x] : rel;
}

/* Give an ordered op its channel sequence and count it as in flight. */
static inline uint64_t give_seq(struct oms_so *so, uint16_t chan)
{
	so->ctr.pending_ack++;
	so->ctr.ack_inc++;
	return so->chan[chan].issued++;
}

/* Op @seq of @ch failed: the channel's lowest failure is what counts. */
static inline void set_fail(struct oms_so *so, struct oms_so_chan *ch,
			    uint64_t seq)
{
	if (seq < ch->first_fail)
		ch->first_fail = seq;
	so->any_fail = 1;
}

/* store_order_chan.c */

/*
 * Does op @st, about to be issued on its channel, need the destination to
 * fence it (OMS_SO_A_FENCE) or not (0)?
 */
uint8_t so_fence_flags(struct oms_so *so, const struct oms_so_store *st);
/* An op leaves for the transport with sequence @seq (OMS_SO_NONE for an
 * unordered one): note what later ops must know of it. */
void so_note_issued(struct oms_so *so, const struct oms_so_store *st,
		    uint64_t seq);
/* Was op @seq of @ch an acquire (@atomic: an atomic)?  Unknown: yes. */
int so_was_read(const struct oms_so_chan *ch, uint64_t seq, int atomic);

/* store_order_hold.c */

/*
 * Is an entry with scope @scope, bound for channel @own (or -1 for a
 * fence), free to go, having waited for what @snap says?  @flush (or
 * NULL) collects the posted channels whose flush would help.
 */
enum readiness so_ready(struct oms_so *so, uint16_t scope, int64_t own,
			const uint64_t *snap, uint64_t *flush);

/* store_order_ack.c */

/*
 * Does @st (to @dest) follow a failure it must not be performed after?
 * @snap: its queue snapshot when it leaves the hold queue, NULL when it
 * is submitted.
 */
int so_after_stop(const struct oms_so *so, const struct oms_so_store *st,
		  uint16_t dest, const uint64_t *snap);

#endif
