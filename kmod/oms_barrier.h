/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms_barrier.h - the ordering points of oms.ko, each named for its use.
 *
 * Stores to a write-combining window sit in the CPU's WC buffers and may
 * leave them in any order and at any time.  The only tool that orders them
 * is a store fence that drains the buffers (wmb(), sfence on x86).  The
 * ordered-store model maps onto it as follows:
 *
 *   weak store        no fence: weak stores may combine and pass each other;
 *   strong store      one fence before it if an ordered (weak or strong)
 *                     store may be pending, so everything ordered before it
 *                     is visible first; never a fence between weak stores;
 *   unordered store   outside the ordered view: no fence, never pending.
 *
 * struct oms_order tracks "an ordered store may be pending" and counts the
 * fences issued, so a test can check that a call issued exactly the
 * barriers its classes need.  A call starts with OMS_ORDER_UNKNOWN: what
 * an earlier call, or the caller's own stores to a mapping of the window,
 * left in this CPU's WC buffers cannot be seen from here, so the first
 * strong store of a call is always fenced.  Only a flush inside the call
 * proves that nothing is pending.
 */
#ifndef OMS_BARRIER_H
#define OMS_BARRIER_H

#include <linux/io.h>
#include <linux/types.h>
#include <asm/barrier.h>

struct oms_order {
	u64 barriers;		/* WC flushes issued */
	bool pending;		/* ordered stores may be unflushed */
};

/* The state at the start of a call: earlier stores may be pending. */
#define OMS_ORDER_UNKNOWN	((struct oms_order){ .pending = true })

/*
 * oms_wc_flush() - drain the write-combining buffers.  Every store issued
 * before it reaches the device (as posted writes, in order with later
 * stores) before any store issued after it.  The one fence of the module.
 */
static inline void oms_wc_flush(struct oms_order *o)
{
	/* sfence on x86: drains the WC buffers, orders them before later stores */
	wmb();
	o->barriers++;
	o->pending = false;
}

/* oms_order_weak() - a weak store was issued: it needs no fence. */
static inline void oms_order_weak(struct oms_order *o)
{
	o->pending = true;
}

/*
 * oms_order_before_strong() - the ordering point before a strong store:
 * make every earlier ordered store visible, if there is one.
 */
static inline void oms_order_before_strong(struct oms_order *o)
{
	if (o->pending)
		oms_wc_flush(o);
}

/*
 * oms_order_after_strong() - a strong store was issued; it is itself an
 * ordered store that a later strong store must wait for.
 */
static inline void oms_order_after_strong(struct oms_order *o)
{
	o->pending = true;
}

/*
 * oms_push_doorbell() - after the doorbell store: push it out of the WC
 * buffer now instead of whenever the buffer is evicted.
 */
static inline void oms_push_doorbell(struct oms_order *o)
{
	oms_wc_flush(o);
}

/*
 * oms_flush_read() - a read from the device.  PCIe reads are non-posted and
 * may not pass earlier posted writes, so when it returns every earlier write
 * (drained from the WC buffers by the flush before it) has reached the
 * device.
 */
static inline u32 oms_flush_read(struct oms_order *o, const void __iomem *p)
{
	oms_wc_flush(o);
	return readl(p);
}

#endif /* OMS_BARRIER_H */
