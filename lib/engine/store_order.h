/* SPDX-License-Identifier: MIT */
/*
 * Store orderer: the weak/strong ordered store state machine of seed 000
 * (NVIDIA, "ordered store operations", [0056]-[0108]) with NVSHMEM-style
 * per-destination fences (seed 001).  Pure: no I/O, no threads, no clock,
 * no allocation after oms_so_init().
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
 *
 * Store classes (enum oms_store_class in oms.h):
 *   UNORDERED - issued at once, not counted, nothing ever waits for it (L06).
 *   WEAK      - issued at once (never waits for another weak store, L05),
 *               counted, part of the ordered view.
 *   STRONG    - visible only after every earlier ordered store, to every
 *               destination (cumulative, L02).  Never blocks the caller: if
 *               it cannot go now it is held and released later by
 *               oms_so_progress() (L08).
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
 * A weak store is held only when it must follow a queued fence of its
 * destination or overlaps a held store's bytes (same-address order, L07).
 *
 * Same-address order within one channel is the channel's duty (a QP or a
 * posted path keeps it); across channels the orderer enforces it only
 * against held stores - issue a strong store or a fence between two writes
 * to one address on different channels.
 *
 * Counters (L13): pending_issue is seed 000's translation counter (ordered
 * stores accepted but not yet issued), pending_ack its acknowledgement
 * counter (issued, not yet visible).  Each ordered store raises and lowers
 * each exactly once; the issue_inc, issue_dec, ack_inc and ack_dec totals let tests check that.
 */
#ifndef OMS_ENGINE_STORE_ORDER_H
#define OMS_ENGINE_STORE_ORDER_H

#include <stdint.h>

#include "oms.h"

#define OMS_SO_MAX_CHANNELS	64
#define OMS_SO_MAX_HELD		65536
#define OMS_SO_ALL		0xffffu	/* fence scope: every destination */

enum oms_chan_kind {
	OMS_CHAN_POSTED = 0,
	OMS_CHAN_ACKED = 1,
};

struct oms_so_chan_cfg {
	uint16_t dest;
	uint8_t kind;		/* enum oms_chan_kind */
};

struct oms_so_store {
	uint64_t cookie;	/* caller's handle, returned when released */
	uint64_t addr;		/* destination address, for same-address order */
	uint32_t len;		/* bytes; 0 is refused */
	uint16_t chan;
	uint8_t cls;		/* enum oms_store_class */
};

/* Verdicts of oms_so_submit(). */
enum {
	OMS_SO_ISSUE = 0,	/* transmit now; *seq is its channel sequence */
	OMS_SO_HELD = 1,	/* queued; comes back from oms_so_progress() */
};

/* Actions returned by oms_so_progress(). */
enum oms_so_act_type {
	OMS_SO_ACT_ISSUE = 1,	/* transmit store @cookie on @chan, seq @seq */
	OMS_SO_ACT_FLUSH = 2,	/* send a flush read on @chan; answer with
				 * oms_so_flush_done(chan, seq) */
};

struct oms_so_action {
	uint64_t cookie;
	uint64_t seq;
	uint16_t chan;
	uint8_t type;
};

struct oms_so_chan {
	uint64_t issued;	/* ordered stores issued on the channel */
	uint64_t visible;	/* of which known visible (ack or flush) */
	uint64_t flush_token;	/* issued count covered by the flush in flight */
	uint64_t fifo_released;	/* issued count after the last release from
				 * the hold queue on this channel */
	uint16_t dest;
	uint8_t kind;
	uint8_t flush_inflight;
};

/* One held entry: a store, or a fence marker (cls == OMS_SO_FENCE_ENTRY). */
struct oms_so_held {
	struct oms_so_store st;
	uint16_t dest;		/* store's destination, or fence scope */
};

struct oms_so_counters {
	uint64_t pending_issue;	/* seed 000 translation counter */
	uint64_t pending_ack;	/* seed 000 acknowledgement counter */
	uint64_t issue_inc, issue_dec, ack_inc, ack_dec;
	uint64_t unordered, weak, strong, fences;
	uint64_t held;		/* stores that went through the hold queue */
	uint64_t fast_path;	/* strong stores that needed no wait thanks to
				 * the posted channel they used */
	uint64_t flushes;
	uint64_t stale_acks;	/* cumulative acks below what was known */
	uint64_t errors;	/* acks or flushes completed with an error */
};

struct oms_so {
	struct oms_so_chan *chan;
	struct oms_so_held *held;	/* ring of max_held entries */
	uint64_t *snap;			/* max_held * nchan issue snapshots */
	uint32_t *dest_fences;		/* queued fence markers per dest */
	uint32_t nchan, ndest, max_held;
	uint32_t head, count;
	uint32_t all_fences;		/* queued OMS_SO_ALL fence markers */
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
 * Submit one store.  Returns OMS_SO_ISSUE (transmit now; for ordered
 * stores *seq receives its channel sequence number, UINT64_MAX for
 * unordered ones), OMS_SO_HELD (the orderer keeps it), -EINVAL (bad
 * channel, class or length; nothing changes) or -EAGAIN (hold queue full;
 * call oms_so_progress() and retry; nothing changes).
 */
int oms_so_submit(struct oms_so *so, const struct oms_so_store *st,
		  uint64_t *seq);

/*
 * Order later ordered stores to @dest (or every destination, OMS_SO_ALL)
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
 * The first @count ordered stores issued on @chan are visible.  @status is
 * 0 or a negative errno the transport reported; an error still counts as
 * completion (nothing hangs) and is kept for oms_so_take_error().  A count
 * below what is known is stale and ignored (counted).  Returns 0 or
 * -EINVAL (bad channel, count beyond what was issued; nothing changes).
 */
int oms_so_ack(struct oms_so *so, uint16_t chan, uint64_t count, int status);

/*
 * The flush requested on @chan with token @token answered.  Returns 0 or
 * -EINVAL (no such flush in flight; nothing changes).
 */
int oms_so_flush_done(struct oms_so *so, uint16_t chan, uint64_t token,
		      int status);

/* Nothing held, nothing unacknowledged, no flush in flight. */
int oms_so_quiescent(const struct oms_so *so);

/* True if every ordered store to @dest (or OMS_SO_ALL) is visible. */
int oms_so_dest_visible(const struct oms_so *so, uint16_t dest);

/* First error reported by an ack or flush since the last call, or 0. */
int oms_so_take_error(struct oms_so *so);

#endif
