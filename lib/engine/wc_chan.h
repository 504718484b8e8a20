/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * wc_chan.h - the store classes on a write-combining channel: the one
 * state machine that decides where a thread that stores into a
 * write-combining window must drain its write-combining buffers.  liboms's
 * transmit queues and doorbells (lib/tx/) and oms.ko's ordered-store and
 * doorbell ioctls (kmod/oms_barrier.h) both drive it; neither has a rule
 * of its own.  (A ConnectX send queue, lib/tx/mlx5_wqe.c, follows the
 * mlx5 provider's posting sequence instead: its doorbell is a device
 * protocol, not a store class.)
 *
 * Why a channel of its own kind.  The store orderer's channels
 * (store_order.h) deliver a channel's stores either in order (POSTED,
 * SEQ) or acknowledge each (ACKED).  A write-combining window does
 * neither: stores wait in the CPU's write-combining buffers and leave them
 * in any order, at any time, until the thread drains them (sfence on x86,
 * oms_barrier_wc_drain() in user space, wmb() in the kernel).  A drain
 * orders every store issued before it ahead of every store issued after
 * it; from the buffers on, the path to the device is posted and keeps that
 * order.  So the stores between two drains form an epoch whose members
 * reach the device in any order, and epochs reach it in order.
 *
 * Seed 000's classes on such a channel:
 *   UNORDERED  no drain, and a later strong store does not wait for it
 *              (L06); a later release does;
 *   WEAK       no drain: weak stores may combine and pass each other
 *              (L05); it is pending for a later strong store;
 *   STRONG     visible only after every earlier ordered store (L01, L03):
 *              a drain before it if an ordered store may be pending, so
 *              that it starts a new epoch; then it is pending itself.
 *              The issuing thread never waits for the device (L08): a
 *              drain waits only for the thread's own buffers;
 *   RELEASE    after every earlier store to its destination, unordered
 *              ones too (seed 004's MMIO-Release, docs/ordering.md R1):
 *              a drain before it if any store may be pending;
 *   SEQUENCED  as WEAK: the destination restores program order from the
 *              sequence numbers, the buffers need not (seed 004).
 *
 * Pending is per thread, not per window: a drain empties every
 * write-combining buffer of the CPU, and a store the machine did not see
 * (an earlier call's, the caller's own store into a mapping, another
 * window's) may be in them.  A driver that cannot see everything the
 * thread stored before it starts with OMS_WC_CHAN_UNKNOWN, which counts
 * such a store as pending: the first strong store is drained before.  A
 * driver drains only where the machine says, and counts nothing itself:
 * drains in the machine and fences issued by the driver are the same
 * number, which the tests compare.
 *
 * Pure and header-only: no I/O, no allocation, no libc, so that the
 * kernel module includes it as liboms does.  tests/engine_wc_chan.c checks
 * it exhaustively against the epoch model above.
 */
#ifndef OMS_ENGINE_WC_CHAN_H
#define OMS_ENGINE_WC_CHAN_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#include "oms_order.h"

struct oms_wc_chan {
	uint64_t drains;	/* drains asked for (or done) so far */
	uint8_t pending;	/* an ordered store may be undrained */
	uint8_t any;		/* a store of any class may be undrained */
};

/* Start of a driver that sees every store the thread made before it. */
#define OMS_WC_CHAN_EMPTY	((struct oms_wc_chan){ .pending = 0 })
/* Start of a driver that does not: a store before it may be pending. */
#define OMS_WC_CHAN_UNKNOWN	((struct oms_wc_chan){ .pending = 1, .any = 1 })

/*
 * oms_wc_chan_store() - a store of class @cls is about to be issued.
 * Returns 1 when the thread must drain its write-combining buffers first
 * (the drain is counted), 0 when it stores at once.  A class this header
 * does not know is ordered as RELEASE, after every earlier store: a drain
 * too many, never too few.
 */
static inline int oms_wc_chan_store(struct oms_wc_chan *c, unsigned int cls)
{
	int drain = 0;

	switch (cls) {
	case OMS_STORE_UNORDERED:
		c->any = 1;
		return 0;
	case OMS_STORE_WEAK:
	case OMS_STORE_SEQUENCED:
		break;
	case OMS_STORE_STRONG:
		drain = c->pending;
		break;
	default:			/* RELEASE, unknown */
		drain = c->any;
		break;
	}
	c->drains += (uint64_t)drain;
	c->pending = 1;
	c->any = 1;
	return drain;
}

/*
 * oms_wc_chan_drain() - the thread drains for a reason of its own (to
 * publish what it stored, to push a doorbell out, before a flush read):
 * nothing it stored before is pending any more.
 */
static inline void oms_wc_chan_drain(struct oms_wc_chan *c)
{
	c->drains++;
	c->pending = 0;
	c->any = 0;
}

#endif /* OMS_ENGINE_WC_CHAN_H */
