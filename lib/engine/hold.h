/* SPDX-License-Identifier: MIT */
/*
 * oms_hold: ordered (class-2) packets held behind posted writes.
 *
 * Implements seed 002 (HPE/Gen-Z, "device supporting ordered and unordered
 * transaction classes"): a node A has a requester that sends posted writes
 * and tracks them until the destination's traversal ack comes back (the
 * "tracker" and its table of in-flight posted writes), and a responder that,
 * before sending a class-2 (ordered) non-posted response, asks the tracker
 * whether posted writes to that destination are still in flight; if so the
 * response is buffered until they are acknowledged.  Class-1 (unordered)
 * responses are sent without asking.  The seed describes two scopes: posted
 * writes to the same destination only, or to any destination.
 * Litmus L23 (held behind a posted write), L24 (scope), L25 (counting with
 * out-of-order acks), L26 (read after posted write).
 *
 * What is ordered against what (one oms_hold per node):
 *   - A class-2 packet P to destination B leaves (oms_hold_send() returns
 *     OMS_HOLD_SEND, or oms_hold_pop() returns it) only after every posted
 *     write issued by this node BEFORE P -- to B (OMS_HOLD_PER_DEST) or to
 *     any destination (OMS_HOLD_GLOBAL) -- has been acknowledged.  Posted
 *     writes issued after P never hold P (each held packet records the
 *     snapshot of what was issued before it).
 *   - Class-2 packets to one destination (global scope: all class-2
 *     packets) leave in the order they were handed in.
 *   - Class-1 packets are ordered against nothing.
 *   - Posted writes themselves are never held (the issuer never stalls).
 *
 * "Packet" is any class-2 non-posted packet that must not pass posted
 * writes to its destination: a read response (the seed's case) and equally
 * a non-posted read request.  Routing a read request through oms_hold_send()
 * is what makes L26 hold on an unordered fabric: a posted write to x at B
 * followed by an ordered read of x at B from the same node leaves only after
 * B acknowledged the write, and B acks a posted write once it is visible to
 * later reads (seed 002: ack on receipt when the write buffer serves reads,
 * otherwise after the write completes), so the read returns the new value.
 *
 * Posted write ids are assigned here, per destination, consecutively from 0
 * (32-bit, wrapping); acks may arrive in any order.  At most @window writes
 * per destination may be unacknowledged, counting from the oldest unacked
 * one (so one lost ack eventually stalls posting with -EAGAIN, it never
 * corrupts state), and at most @gwindow globally.
 *
 * Errors (negative errno; never an abort):
 *   -EINVAL   bad argument (NULL, dest >= ndest in post/send, bad class,
 *             bad config): no state change at all.
 *   -EAGAIN   window full (post) or held-packet pool full (send): no change.
 *   -ENOENT   ack for a destination that does not exist or an id never
 *             issued: ack_unknown++, nothing else changes.
 *   -EALREADY duplicate ack (id already acknowledged): ack_dup++ only.
 *   -ENOMEM   init could not allocate.
 *
 * Cost: post, send and pop are O(1); ack is amortised O(1) plus one step per
 * packet it releases.  No allocation after init.  Not thread-safe.
 */
#ifndef OMS_ENGINE_HOLD_H
#define OMS_ENGINE_HOLD_H

#include <stddef.h>
#include <stdint.h>

enum oms_hold_scope {
	OMS_HOLD_PER_DEST = 0,	/* hold behind posted writes to the same dest */
	OMS_HOLD_GLOBAL = 1,	/* hold behind posted writes to any dest */
};

enum oms_hold_class {
	OMS_HOLD_CLASS1 = 1,	/* unordered: never held */
	OMS_HOLD_CLASS2 = 2,	/* ordered: may not pass earlier posted writes */
};

/* oms_hold_send() results */
#define OMS_HOLD_HELD	0	/* buffered; comes out of oms_hold_pop() later */
#define OMS_HOLD_SEND	1	/* send it now */

/* oms_hold_pending(): all destinations */
#define OMS_HOLD_ANY	0xffffffffu

#define OMS_HOLD_MAX_DEST	65536u
#define OMS_HOLD_MAX_WINDOW	65536u	/* power of two, >= 64 */
#define OMS_HOLD_MAX_HELD	65536u

struct oms_hold_config {
	unsigned ndest;		/* destinations 0..ndest-1 */
	unsigned window;	/* per-destination posted-write window, 2^n >= 64 */
	unsigned gwindow;	/* global window, 2^n >= 64; 0 = same as window */
	unsigned max_held;	/* held class-2 packets, 1..65536 */
	unsigned scope;		/* enum oms_hold_scope */
};

struct oms_hold_counters {
	uint64_t posted;	/* posted writes issued */
	uint64_t acked;		/* acks accepted */
	uint64_t ack_unknown;	/* -ENOENT acks */
	uint64_t ack_dup;	/* -EALREADY acks */
	uint64_t sent_class1;	/* class-1 packets sent at once */
	uint64_t sent_class2;	/* class-2 packets sent at once (nothing due) */
	uint64_t held;		/* class-2 packets buffered */
	uint64_t released;	/* held packets handed out by oms_hold_pop() */
};

struct oms_hold_dest {
	uint32_t base;		/* oldest unacked id (== next when none) */
	uint32_t next;		/* id of the next posted write */
	uint32_t head, tail;	/* held FIFO to this dest (per-dest scope) */
	uint32_t unacked;	/* posted writes not yet acknowledged */
};

struct oms_hold_pkt {
	uint64_t cookie;
	uint32_t dest;
	uint32_t snap;		/* dest next (or global next) when handed in */
	uint32_t link;
	uint32_t pad;
};

struct oms_hold {
	struct oms_hold_dest *dest;	/* [ndest] */
	uint64_t *dbits;		/* [ndest][window/64] unacked writes */
	uint32_t *dgseq;		/* [ndest][window] global seq of each */
	uint64_t *gbits;		/* [gwindow/64] unacked, by global seq */
	struct oms_hold_pkt *pkt;	/* [max_held] */
	uint32_t gbase, gnext;		/* global oldest unacked / next */
	uint32_t free_head;
	uint32_t ghead, gtail;		/* held FIFO (global scope) */
	uint32_t rhead, rtail;		/* released, waiting for oms_hold_pop */
	uint32_t nheld;			/* packets held or released-unpopped */
	struct oms_hold_config cfg;
	int owns_mem;
	struct oms_hold_counters cnt;
};

/* Bytes oms_hold_init() needs for @cfg (0 if @cfg is invalid). */
size_t oms_hold_memsize(const struct oms_hold_config *cfg);

/* Set up from @cfg; @mem: caller memory (8-byte aligned) or NULL to malloc. */
int oms_hold_init(struct oms_hold *h, const struct oms_hold_config *cfg,
		  void *mem, size_t memlen);

/* Free what init allocated. */
void oms_hold_destroy(struct oms_hold *h);

/*
 * A posted write to @dest is being sent: store its id in *@id (carry it in
 * the packet; the ack returns it).  0, -EINVAL, or -EAGAIN (window full).
 */
int oms_hold_post(struct oms_hold *h, unsigned dest, uint32_t *id);

/*
 * The ack of posted write @id from @dest arrived.  Returns how many held
 * packets it released (now waiting in oms_hold_pop()), or -ENOENT /
 * -EALREADY / -EINVAL.
 */
int oms_hold_ack(struct oms_hold *h, unsigned dest, uint32_t id);

/*
 * A non-posted packet of class @cls (enum oms_hold_class) to @dest, with the
 * caller's @cookie, is ready to leave.  Returns OMS_HOLD_SEND (send it now;
 * nothing was stored) or OMS_HOLD_HELD (buffered until the posted writes
 * issued before it are acked), -EAGAIN (pool full) or -EINVAL.
 */
int oms_hold_send(struct oms_hold *h, unsigned dest, unsigned cls,
		  uint64_t cookie);

/*
 * Take the next released packet: 1 with *@dest / *@cookie filled (either may
 * be NULL), 0 if none, -EINVAL.  Released packets come out in release order.
 */
int oms_hold_pop(struct oms_hold *h, unsigned *dest, uint64_t *cookie);

/*
 * Unacknowledged posted writes to @dest (OMS_HOLD_ANY: to all
 * destinations) -- the seed's "interrogate the requester".  Returns the
 * count or -EINVAL.
 */
long oms_hold_pending(const struct oms_hold *h, unsigned dest);

/* Class-2 packets currently held or released but not popped; -EINVAL. */
long oms_hold_held(const struct oms_hold *h);

#endif
