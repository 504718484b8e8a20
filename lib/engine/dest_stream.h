/* SPDX-License-Identifier: MIT */
/*
 * oms_dseq: the destination side of sequence-numbered streams, whole - the
 * reorder buffer (rob.h), the stop rule (stream.h) and window admission -
 * for a set of streams of one window.  Both destinations that keep streams
 * drive it: the emulated device (lib/emu/seq.c: a machine per destination
 * node, a stream per queue) and the destination agent (lib/agent/agent.c:
 * a machine per connection).  They keep only what is theirs: when and how
 * a member is performed, and how it completes.  docs/ordering.md, "The
 * destination stream", says why each decision is the one it is.
 *
 * A member arrives (oms_dseq_arrive()) and either finds a place in the
 * window or is answered at once; members leave in number order
 * (oms_dseq_pop()) with the stop rule's verdict; members the machine gives
 * up (buffered when the stream stopped where it stood, or resumed) leave
 * through oms_dseq_dropped().  The three decisions:
 *
 *   duplicate      a number already buffered, or behind the stream's next
 *                  (already taken): -EEXIST or -ESTALE;
 *   out of window  a number at or past next + window: -ENOSPC.
 *     Neither can be placed, so nothing buffered can be trusted to come
 *     before it: the stream stops where it stands (every buffered member
 *     is dropped, every later one cancelled), as a QP goes to error.
 *   resume         oms_dseq_resume(): the initiator resumes the stream and
 *                  names the number its next member carries - the
 *                  initiator's numbering goes on across a resume; what
 *                  was buffered is dropped, the stop forgotten.
 *
 * A member refused by the caller's own checks arrives with @refused set:
 * it takes its number and stops the stream there (stream.h).  A member
 * that fails when performed is reported with oms_dseq_failed().
 *
 * Pure state, no I/O; not thread-safe (the caller serialises).  Cookies
 * are the caller's (a slot, an index).
 */
#ifndef OMS_ENGINE_DEST_STREAM_H
#define OMS_ENGINE_DEST_STREAM_H

#include <stdint.h>

#include "engine/rob.h"
#include "engine/stream.h"

struct oms_dseq {
	struct oms_rob rob;
	struct oms_stream *st;		/* [nstreams]: each stream's stop */
	uint64_t *dropped;		/* [window]: given up, not yet handed
					 * back, in number order */
	unsigned ndropped, dropped_at;	/* how many; the next to hand back */
	unsigned nstreams, window;
};

/* @nstreams streams of @window numbers (a power of two, 1..256), each
 * expecting 0 first.  0, -EINVAL, -ENOMEM. */
int oms_dseq_init(struct oms_dseq *m, unsigned nstreams, unsigned window);
void oms_dseq_destroy(struct oms_dseq *m);

/*
 * Member @seq of @stream arrives carrying @cookie; @refused: the caller's
 * checks refused it (it completes with its own error, and the stream
 * stops at its number).  Returns
 *   0           placed: pop the stream (it may go at once or later);
 *   -ECANCELED  after the stream's stop: complete it at once, unperformed
 *               (with its own error if refused);
 *   -EEXIST, -ESTALE, -ENOSPC  a duplicate, a number already taken, a
 *               number out of the window: complete it with that error
 *               (or its own); the stream stopped where it stood - hand
 *               back the dropped members;
 *   -EINVAL     no such stream.
 * Only a placed member is kept; its cookie comes back from pop or dropped.
 */
int oms_dseq_arrive(struct oms_dseq *m, unsigned stream, uint16_t seq,
		    uint64_t cookie, int refused);

/*
 * The next member of @stream in number order, if it has arrived: 1 and
 * *@seq, *@cookie, *@verdict (stream.h: GO perform it; STOP_HERE it is
 * the refused member the stream stops at: its own error; CANCEL
 * -ECANCELED unperformed, or its own error if refused).  0: none yet.
 * A STOP_HERE or CANCEL stops the stream where it stands (hand back the
 * dropped members).  -EINVAL: no such stream.
 */
int oms_dseq_pop(struct oms_dseq *m, unsigned stream, uint16_t *seq,
		 uint64_t *cookie, enum oms_stream_verdict *verdict);

/* Member @seq of @stream, popped with GO, failed when performed: nothing
 * after it is performed (the dropped ones are handed back). */
void oms_dseq_failed(struct oms_dseq *m, unsigned stream, uint16_t seq);

/* The initiator resumed @stream: its next member carries @next.  What was
 * buffered is dropped, the stop forgotten.  0 or -EINVAL. */
int oms_dseq_resume(struct oms_dseq *m, unsigned stream, uint16_t next);

/* A member given up (dropped) and not yet handed back: 1 and *@cookie
 * (complete it -ECANCELED, or with its own error if refused), 0: none.
 * Call until 0 after every arrive, pop, failed or resume. */
int oms_dseq_dropped(struct oms_dseq *m, uint64_t *cookie);

/* The number @stream takes next. */
uint16_t oms_dseq_next(const struct oms_dseq *m, unsigned stream);

/* Does a flush of @stream answering once members below @cnt are done
 * count past the stream's stop? */
int oms_dseq_flush_cancelled(const struct oms_dseq *m, unsigned stream,
			     uint16_t cnt);

#endif
