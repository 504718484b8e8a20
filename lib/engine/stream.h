/* SPDX-License-Identifier: MIT */
/*
 * oms_stream: the stop rule of a sequence-numbered stream at its
 * destination, once the reorder buffer (rob.h) has put its members in
 * order (docs/ordering.md, D1).
 *
 * Like a QP in error, a stream stops at its first member that fails:
 * refused at intake, failed when performed, or cancelled by its initiator
 * before it was sent (a NOP that stands for it).  That member completes
 * with its own error; every later member, and every flush counting past
 * it, completes with -ECANCELED unperformed, until the initiator resumes
 * the stream.  A stop can be known before the stream reaches it (a member
 * refused on arrival, out of order): members before it still go, and the
 * earliest stop stands.
 *
 * The destination stream machine (dest_stream.h) drives this for both
 * destinations that keep streams: the emulated device (lib/emu/seq.c) and
 * the destination agent (lib/agent/agent.c).  Pure state, no I/O; not
 * thread-safe (the caller serialises).
 *
 * Numbers are 16 bits and wrap: "before" and "after" are serial-number
 * order, which holds while the members in question lie within 32768 of
 * each other (a stream has at most its window, <= 256, in flight).
 */
#ifndef OMS_ENGINE_STREAM_H
#define OMS_ENGINE_STREAM_H

#include <stdint.h>

struct oms_stream {
	uint16_t next;		/* the number taken next */
	uint16_t stop_at;	/* if stopped: the first number not performed */
	uint8_t stopped;	/* a member at stop_at failed or was refused */
	uint8_t reached;	/* the stop was reached: everything not yet
				 * taken is cancelled */
};

/* What oms_stream_take() says of a member. */
enum oms_stream_verdict {
	OMS_STREAM_GO,		/* perform it */
	OMS_STREAM_STOP_HERE,	/* the stop: complete it with its own error */
	OMS_STREAM_CANCEL,	/* after the stop: -ECANCELED, unperformed */
};

/* A stream starts, fresh or resumed by its initiator: its next member is
 * @next. */
void oms_stream_start(struct oms_stream *s, uint16_t next);

/* Member @seq failed or was refused: nothing from @seq on is performed.
 * An earlier stop stands.  A stop at a member already taken (one that
 * failed when performed) is reached at once. */
void oms_stream_stop(struct oms_stream *s, uint16_t seq);

/* Nothing not yet taken is performed (what was buffered cannot be trusted
 * to come before what arrived: a duplicate, a number out of the window). */
void oms_stream_stop_all(struct oms_stream *s);

/* Member @seq is the next in order (the reorder buffer let it go): what
 * to do with it.  The stream's next becomes @seq + 1. */
enum oms_stream_verdict oms_stream_take(struct oms_stream *s, uint16_t seq);

/* Would member @seq be cancelled (taken or not): at or after the stop? */
int oms_stream_cancels(const struct oms_stream *s, uint16_t seq);

/* Is member @seq strictly after the stop (not the stopping member)? */
int oms_stream_after_stop(const struct oms_stream *s, uint16_t seq);

/* Does a flush answering once members below @cnt are done count past the
 * stop (cover the member that stopped the stream)? */
int oms_stream_flush_cancelled(const struct oms_stream *s, uint16_t cnt);

#endif
