/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms_barrier.h - the ordering points of oms.ko, each named for its use.
 *
 * Stores to a write-combining window sit in the CPU's WC buffers and may
 * leave them in any order and at any time.  The only tool that orders them
 * is a store fence that drains the buffers (wmb(), sfence on x86).  Where
 * a store of each class needs one is not decided here: it is liboms's
 * write-combining channel (lib/engine/wc_chan.h), the state machine the
 * library's transmit queues drive too.  In short:
 *
 *   weak store        no fence: weak stores may combine and pass each other;
 *   strong store      one fence before it if an ordered (weak or strong)
 *                     store may be pending, so everything ordered before it
 *                     is visible first; never a fence between weak stores;
 *   unordered store   outside the ordered view: no fence, never pending.
 *
 * The machine counts the fences, so a test can check that a call issued
 * exactly the barriers its classes need.  A call starts with
 * OMS_ORDER_UNKNOWN: what an earlier call, or the caller's own stores to a
 * mapping of the window, left in this CPU's WC buffers cannot be seen from
 * here, so the first strong store of a call is always fenced.  Only a
 * flush inside the call proves that nothing is pending.
 */
#ifndef OMS_BARRIER_H
#define OMS_BARRIER_H

#include <linux/io.h>
#include <linux/types.h>
#include <asm/barrier.h>

#include "engine/wc_chan.h"

struct oms_order {
	struct oms_wc_chan wc;	/* pending stores, fences issued */
};

/* The state at the start of a call: earlier stores may be pending. */
#define OMS_ORDER_UNKNOWN \
	((struct oms_order){ .wc = { .pending = 1, .any = 1 } })

/* oms_order_fences() - the WC drains issued so far. */
static inline u64 oms_order_fences(const struct oms_order *o)
{
	return o->wc.drains;
}

/*
 * oms_wc_drain() - drain the write-combining buffers.  Every store issued
 * before it reaches the device (as posted writes, in order with later
 * stores) before any store issued after it.  The one fence of the module.
 */
static inline void oms_wc_drain(struct oms_order *o)
{
	/* sfence on x86: drains the WC buffers, orders them before later stores */
	wmb();
	oms_wc_chan_drain(&o->wc);
}

/*
 * oms_order_store() - the ordering point before a store of class @cls
 * (enum oms_store_class): the fence the write-combining channel asks for,
 * if any.
 */
static inline void oms_order_store(struct oms_order *o, u32 cls)
{
	if (!oms_wc_chan_store(&o->wc, cls))
		return;
	/* sfence on x86: earlier stores leave the WC buffers first */
	wmb();
}

/*
 * oms_push_doorbell() - after the doorbell store: push it out of the WC
 * buffer now instead of whenever the buffer is evicted.
 */
static inline void oms_push_doorbell(struct oms_order *o)
{
	oms_wc_drain(o);
}

/*
 * oms_flush_read() - a read from the device.  PCIe reads are non-posted and
 * may not pass earlier posted writes, so when it returns every earlier write
 * (drained from the WC buffers by the flush before it) has reached the
 * device.
 */
static inline u32 oms_flush_read(struct oms_order *o, const void __iomem *p)
{
	oms_wc_drain(o);
	return readl(p);
}

#endif /* OMS_BARRIER_H */
