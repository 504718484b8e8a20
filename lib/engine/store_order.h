/* SPDX-License-Identifier: MIT */
/*
 * Store orderer: the weak/strong ordered store state machine of seed 000
 * (NVIDIA, "ordered store operations", [0056]-[0108]) with NVSHMEM-style
 * per-destination fences (seed 001), grown to whole programs: gets,
 * atomics, release stores and acquire gets ordered against stores, and
 * failures that cancel what is ordered after them (docs/ordering.md is
 * the contract).  Pure: no I/O, no threads, no clock, no allocation after
 * oms_so_init().
 *
 * Model
 * -----
 * A backend has channels, each bound to one destination.  A channel is
 *   POSTED  - delivers stores in the order they were issued (a PCIe posted
 *             path, an RC QP to memory registered without relaxed ordering).
 *             Order among its own stores is free; making them visible to an
 *             observer that uses another path needs a flush: a non-posted
 *             read on the channel, whose response pushes every earlier store
 *             ([0096]).
 *   ACKED   - may deliver stores in any order; each ordered store is
 *             acknowledged when visible.  Acks are cumulative counts per
 *             channel, like RC completions: ack(chan, n) says the first n
 *             ordered stores issued on chan are visible.
 *   SEQ     - POSTED, and the destination applies the channel's ordered
 *             operations in sequence-number order (a reorder buffer, seed
 *             004 5.2).  Sequence numbers are given at submission, in
 *             program order, even to an operation the orderer holds, so a
 *             later operation to the destination never overtakes a held
 *             one there (L36).  Unordered stores carry none and pass the
 *             stream.
 *
 * On POSTED and SEQ channels an ack means "executed", not "visible to
 * another path": only a flush makes stores visible ([0096]).  The orderer
 * keeps both counts per channel: completed (acks) and visible (acks on
 * ACKED channels, flush responses on posted ones).
 *
 * Operations (struct oms_so_store.op): puts (every class), gets and
 * atomics.  Gets and atomics are ordered operations of the weak kind: they
 * wait for fences and for held operations on the same bytes, and later
 * strong stores wait for them.  oms_so_submit_op() also says when the
 * transport must fence an operation at the destination (OMS_SO_A_FENCE:
 * performed after every earlier operation of the channel): a write after
 * an in-flight read or atomic of the same bytes (RC orders a WRITE after a
 * READ only with a fence), a release store, a write after an in-flight
 * acquire of its channel (on an ACKED channel any op: the destination
 * then refuses it if the acquire fails), an acquire after an in-flight
 * atomic, a strong store that takes the posted fast path while a read is
 * in flight on it.
 *
 * An acquire get orders every later operation: on its own channel the
 * destination does it (fence, or its load-store queue for later reads);
 * on other channels the orderer holds them behind an acquire barrier
 * until the acquire completed.
 *
 * Store classes (enum oms_store_class in oms.h):
 *   UNORDERED - issued at once, not counted, nothing ever waits for it (L06);
 *               held only behind an acquire barrier or a held op on the
 *               same bytes.
 *   WEAK      - issued at once (never waits for another weak store, L05),
 *               counted, part of the ordered view.
 *   STRONG    - visible only after every earlier ordered op, to every
 *               destination (cumulative, L02).  Never blocks the caller: if
 *               it cannot go now it is held and released later by
 *               oms_so_progress() (L08).
 *   RELEASE   - issued with OMS_SO_A_FENCE: its destination performs it
 *               after every earlier op of the channel; held only while an
 *               earlier op to its destination is held.
 *
 * A strong store on channel c is ready when, for every channel x, every
 * ordered store issued on x before it is visible - except that stores on c
 * itself need nothing when c is POSTED (the posted fast path, L09).  Stores
 * on another POSTED channel become visible through a flush, which progress
 * requests (L10, L11).  Held entries leave strictly in program order (L12).
 *
 * The hold queue also carries fences: oms_so_fence(dest) makes later ordered
 * stores to dest wait until earlier ones to dest are visible (seed 001
 * fence; L14), oms_so_fence(OMS_SO_ALL) does so for every destination (L17).
 * A weak op is held only when it must follow a queued fence of its
 * destination, an acquire barrier, a held acquire, or a held op on the
 * same bytes (same-address order, L07) - or, because a fence at the
 * destination goes by post order, not program order: a held op to its
 * destination on an ACKED channel (posted first and failing, it would
 * cancel the earlier held op); on a SEQ channel an unordered store waits
 * for the held members of its destination and, while it is held, later
 * members wait for it.
 *
 * Same-address order within one channel is the channel's duty for a write
 * or read after a write (a QP or a posted path keeps it); a write after a
 * read needs OMS_SO_A_FENCE, which the orderer asks for.  Across channels
 * the orderer enforces it only against held ops - issue a strong store or
 * a fence between two writes to one address on different channels.
 *
 * Failures (L22, L37): oms_so_fail() and error acks record the lowest
 * failed sequence per channel.  A failed op is never visible; a held entry
 * whose wait covers it (a strong store, a fence and what it holds, an
 * acquire barrier and what it holds, a release or acquire after it at its
 * destination, a later member of its SEQ stream) comes back as a CANCEL,
 * and a later one does too, until oms_so_resume().  A cancelled op is as
 * unperformed as a failed one: what a rule orders after it is cancelled
 * too (the entries behind it in the queue, and the lost_* marks for later
 * submissions); on a SEQ channel its number is filled with a cancelling
 * NOP that stops the stream there.
 *
 * Counters (L13): pending_issue is seed 000's translation counter (ordered
 * stores accepted but not yet issued), pending_ack its acknowledgement
 * counter (issued, not yet visible).  Each ordered store raises and lowers
 * each exactly once; the issue_inc, issue_dec, ack_inc and ack_dec totals let tests check that.
 */
#ifndef OMS_ENGINE_STORE_ORDER_H
#define OMS_ENGINE_STORE_ORDER_H

#include <stdint.h>

#include "oms_order.h"	/* the store classes; nothing else of oms.h */

#define OMS_SO_MAX_CHANNELS	64
#define OMS_SO_MAX_HELD		65536
#define OMS_SO_ALL		0xffffu	/* fence scope: every destination */
#define OMS_SO_READS		32	/* in-flight reads tracked per channel */
#define OMS_SO_NONE		UINT64_MAX

enum oms_chan_kind {
	OMS_CHAN_POSTED = 0,
	OMS_CHAN_ACKED = 1,
	OMS_CHAN_SEQ = 2,
};

struct oms_so_chan_cfg {
	uint16_t dest;
	uint8_t kind;		/* enum oms_chan_kind */
};

enum oms_so_op {
	OMS_SO_OP_PUT = 0,
	OMS_SO_OP_GET = 1,
	OMS_SO_OP_ATOMIC = 2,
};

struct oms_so_store {
	uint64_t cookie;	/* caller's handle, returned when released */
	uint64_t addr;		/* destination address, for same-address order */
	uint32_t len;		/* bytes; 0 is refused */
	uint16_t chan;
	uint8_t cls;		/* enum oms_store_class; gets and atomics:
				 * WEAK (UNORDERED when ordering is off) */
	uint8_t op;		/* enum oms_so_op */
	uint8_t acquire;	/* get: OMS_READ_ACQUIRE */
};

/* Verdicts of oms_so_submit(). */
enum {
	OMS_SO_ISSUE = 0,	/* transmit now; *seq is its channel sequence */
	OMS_SO_HELD = 1,	/* queued; comes back from oms_so_progress() */
};

/* Actions returned by oms_so_progress(). */
enum oms_so_act_type {
	OMS_SO_ACT_ISSUE = 1,	/* transmit op @cookie on @chan, seq @seq */
	OMS_SO_ACT_FLUSH = 2,	/* send a flush read on @chan covering the
				 * first @seq ops; answer with
				 * oms_so_flush_done(chan, seq) */
	OMS_SO_ACT_CANCEL = 3,	/* op @cookie is not performed: it follows a
				 * failed one; complete it with -ECANCELED.
				 * @seq != OMS_SO_NONE: a SEQ channel gave it
				 * that number, fill it (a no-op) so the
				 * stream goes on */
};

#define OMS_SO_A_FENCE	(1u << 0)	/* ISSUE: fence it at the destination */

struct oms_so_action {
	uint64_t cookie;
	uint64_t seq;
	uint16_t chan;
	uint8_t type;
	uint8_t flags;		/* OMS_SO_A_* */
};

struct oms_so_read {
	uint64_t seq, addr;
	uint32_t len;
	uint8_t atomic, acquire;
};

struct oms_so_chan {
	uint64_t issued;	/* ordered ops given a sequence on the channel */
	uint64_t completed;	/* of which acknowledged (executed) */
	uint64_t visible;	/* of which known visible (ack or flush) */
	uint64_t first_fail;	/* lowest failed sequence since the last
				 * resume, OMS_SO_NONE if none */
	uint64_t flush_token;	/* count covered by the flush in flight */
	uint64_t fifo_released;	/* sequence after the last release from
				 * the hold queue on this channel */
	uint64_t acq_need;	/* sequence + 1 of the last acquire issued */
	uint64_t acq_fail;	/* lowest failed acquire, OMS_SO_NONE */
	uint64_t atomic_fail;	/* lowest failed atomic, OMS_SO_NONE */
	uint64_t atomic_need;	/* ... of the last atomic */
	uint64_t read_need;	/* ... of the last get or atomic */
	uint64_t reads_lost;	/* reads dropped from the ring: any write
				 * overlaps until completed reaches this */
	struct oms_so_read reads[OMS_SO_READS];	/* in-flight reads, ring */
	uint32_t rhead, rcount;
	uint32_t unordered;	/* SEQ: unordered stores in flight */
	uint16_t dest;
	uint8_t kind;
	uint8_t flush_inflight;
};

/* One held entry: an op, a fence marker or an acquire barrier. */
struct oms_so_held {
	struct oms_so_store st;
	uint64_t seq;		/* SEQ channel: number given at submission */
	uint16_t dest;		/* op's destination, or fence scope */
	uint8_t cancel;		/* follows a failure: cancel, not issue */
	uint8_t armed;		/* acquire barrier: snapshot taken */
};

struct oms_so_counters {
	uint64_t pending_issue;	/* seed 000 translation counter */
	uint64_t pending_ack;	/* seed 000 acknowledgement counter */
	uint64_t issue_inc, issue_dec, ack_inc, ack_dec;
	uint64_t unordered, weak, strong, fences;
	uint64_t release, gets, atomics;
	uint64_t held;		/* ops that went through the hold queue */
	uint64_t fast_path;	/* strong stores that needed no wait thanks to
				 * the posted channel they used */
	uint64_t flushes;
	uint64_t stale_acks;	/* acks or failures at or below what was
				 * known (stale or duplicate): ignored */
	uint64_t errors;	/* acks or flushes completed with an error */
	uint64_t cancelled;	/* ops cancelled because they follow a
				 * failure */
	uint64_t fenced;	/* ops issued with OMS_SO_A_FENCE */
	uint64_t barriers;	/* acquire barriers queued */
};

struct oms_so {
	struct oms_so_chan *chan;
	struct oms_so_held *held;	/* ring of max_held entries */
	uint64_t *snap;			/* max_held * nchan issue snapshots */
	uint64_t *flush_need;		/* [nchan] scratch */
	uint64_t *dest_mask;		/* [ndest] channels of each dest */
	uint32_t *dest_fences;		/* queued fence markers per dest */
	uint32_t *dest_held;		/* held ops per dest */
	uint32_t *dest_held_acq;	/* held acquire gets per dest */
	uint32_t nchan, ndest, max_held;
	uint32_t head, count;
	uint32_t all_fences;		/* queued OMS_SO_ALL fence markers */
	uint32_t acq_barriers;		/* queued acquire barriers */
	uint32_t held_acq;		/* held acquire gets */
	uint64_t acq_mask;		/* channels with an acquire in flight
					 * (or failed) */
	uint64_t stopped_dests;		/* a fence of these dests followed a
					 * failure: later ops to them too */
	int stopped_all;		/* the same for every destination */
	/*
	 * Ops cancelled at the source (never issued, so no failed sequence
	 * says it): what a rule orders after them must not be performed
	 * either.  Held entries behind one are cancelled when it leaves; these
	 * remember it for later submissions, until resume.
	 */
	uint64_t lost_dests;		/* an op to these dests (R1) */
	uint64_t lost_ordered_dests;	/* an ordered op to these (F1) */
	uint64_t lost_atomic_dests;	/* an atomic to these (A2) */
	int lost_ordered;		/* an ordered op, anywhere (S1, F3) */
	int lost_acquire;		/* an acquire (A1: everything later) */
	int any_fail;			/* a failure is recorded */
	int quieting;		/* quiet: flush every posted channel */
	int first_error;
	struct oms_so_counters ctr;
};

/*
 * Set up an orderer for @nchan channels described by @cfg (destinations
 * must be < @ndest) with room for @max_held held entries.  Allocates once.
 * Returns 0, -EINVAL for bad sizes or configs, -ENOMEM.
 */
int oms_so_init(struct oms_so *so, uint32_t nchan,
		const struct oms_so_chan_cfg *cfg, uint32_t ndest,
		uint32_t max_held);
void oms_so_destroy(struct oms_so *so);

/*
 * Submit one operation.  Returns OMS_SO_ISSUE (transmit now: @out->seq is
 * its channel sequence, OMS_SO_NONE for unordered ones, @out->flags says
 * whether to fence it), OMS_SO_HELD (the orderer keeps it; on a SEQ
 * channel @out->seq is the number it was given), -EINVAL (bad channel,
 * class, op or length; nothing changes) or -EAGAIN (hold queue full; call
 * oms_so_progress() and retry; nothing changes).
 */
int oms_so_submit_op(struct oms_so *so, const struct oms_so_store *st,
		     struct oms_so_action *out);

/* oms_so_submit_op() for callers that only want the sequence number
 * (stores without release: no fence is ever asked for them). */
int oms_so_submit(struct oms_so *so, const struct oms_so_store *st,
		  uint64_t *seq);

/*
 * Order later ordered ops to @dest (or every destination, OMS_SO_ALL)
 * after the earlier ones.  Costs nothing when nothing is pending (L18).
 * Returns 0, -EINVAL (bad dest), -EAGAIN (hold queue full).
 */
int oms_so_fence(struct oms_so *so, uint16_t dest);

/*
 * Release what can go: up to @max actions into @act, in program order.
 * Returns the number of actions (0 if nothing can move yet).
 */
int oms_so_progress(struct oms_so *so, struct oms_so_action *act,
		    unsigned int max);

/*
 * The first @count ordered ops issued on @chan completed.  @status is 0 or
 * a negative errno: something among the newly completed ones failed (its
 * sequence is not known: the orderer assumes the lowest).  A count at or
 * below what is known is stale or a duplicate: counted, nothing else
 * changes (no error is recorded).  Returns 0 or -EINVAL (bad channel,
 * positive status, count beyond what was issued; nothing changes).
 */
int oms_so_ack(struct oms_so *so, uint16_t chan, uint64_t count, int status);

/*
 * Op @seq of @chan failed with @status (< 0): it is never visible, and
 * what is ordered after it is cancelled until oms_so_resume().  Call it
 * before the ack that covers @seq.  A @seq already acknowledged is stale:
 * counted, nothing changes.  Returns 0 or -EINVAL.
 */
int oms_so_fail(struct oms_so *so, uint16_t chan, uint64_t seq, int status);

/*
 * The flush requested on @chan with token @token answered.  With an error
 * something it covered failed: nothing becomes visible.  Returns 0 or
 * -EINVAL (no such flush in flight; nothing changes).
 */
int oms_so_flush_done(struct oms_so *so, uint16_t chan, uint64_t token,
		      int status);

/* An unordered store on SEQ channel @chan completed. */
void oms_so_unordered_done(struct oms_so *so, uint16_t chan);

/*
 * Quiet wants everything visible: from now until quiescence, progress
 * flushes every posted channel that has unflushed stores.
 */
void oms_so_quiet(struct oms_so *so);

/*
 * The device is gone (@status < 0): every issued op counts as completed
 * with that error, every held op will come back from progress as a
 * CANCEL, no flush is awaited.
 */
void oms_so_gone(struct oms_so *so, int status);

/*
 * Forget the failures (oms_ctx_resume()).  Only when nothing is held or in
 * flight: -EBUSY otherwise, nothing changes.  Returns 0.
 */
int oms_so_resume(struct oms_so *so);

/* Deep copy of @src into @dst, set up by oms_so_init() with the same
 * sizes (explorers fork states with it).  -EINVAL if the sizes differ. */
int oms_so_copy(struct oms_so *dst, const struct oms_so *src);

/* Nothing held, nothing unacknowledged, no flush in flight; every op on a
 * posted channel flushed, or a failure recorded there. */
int oms_so_quiescent(const struct oms_so *so);

/* True if every ordered op to @dest (or OMS_SO_ALL) is visible and none
 * failed. */
int oms_so_dest_visible(const struct oms_so *so, uint16_t dest);

/* Is a failure recorded (not yet resumed)? */
int oms_so_failed(const struct oms_so *so);

/* Channel queries for the driver, so that it need not read the state:
 * ordered ops given a sequence number on @chan (0 for a channel that does
 * not exist); @chan's enum oms_chan_kind (-EINVAL); the channels (bit c =
 * channel c < 32) with a failure recorded since the last resume. */
uint64_t oms_so_chan_issued(const struct oms_so *so, uint16_t chan);
int oms_so_chan_kind(const struct oms_so *so, uint16_t chan);
uint32_t oms_so_failed_chans(const struct oms_so *so);

/* First error reported by an ack, failure or flush since the last call,
 * or 0.  A real error wins over -ECANCELED. */
int oms_so_take_error(struct oms_so *so);

#endif
