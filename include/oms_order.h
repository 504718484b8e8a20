/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * oms_order.h - the ordering classes of a store, one numbering for liboms
 * (oms.h, oms_put()), its MMIO transmit queues (oms_tx.h, oms_tx_send())
 * and oms.ko (oms_uapi.h, OMS_IOC_ORDERED_STORE).
 *
 * The three store classes of NVIDIA's ordered-store patent application,
 * and the ASPLOS '26 paper's MMIO-Release and sequenced stores.  What
 * each class orders is in oms.h (for remote memory), oms_tx.h (for
 * messages through a write-combining window) and oms_uapi.h (for the
 * module's window); the whole contract is docs/ordering.md.  Each
 * interface takes the classes that mean something on it and refuses the
 * others with -EINVAL:
 *
 *	class		oms_put()	oms_tx queue	OMS_IOC_ORDERED_STORE
 *	UNORDERED	yes		-		yes
 *	WEAK		yes		yes		yes
 *	STRONG		yes		yes		yes
 *	RELEASE		yes		-		-
 *	SEQUENCED	- (a context	yes		-
 *			  flag there)
 *
 * The headers that use it include this one, so they can be included
 * together, in any order, from C or C++, in user space or in the kernel:
 * it needs no other header.
 */
#ifndef OMS_ORDER_H
#define OMS_ORDER_H

enum oms_store_class {
	OMS_STORE_UNORDERED = 0,	/* outside the ordered view */
	OMS_STORE_WEAK = 1,		/* ordered view, no order among weak */
	OMS_STORE_STRONG = 2,		/* after every earlier ordered store */
	/* after every earlier op to its destination (liboms only) */
	OMS_STORE_RELEASE = 3,
	/*
	 * carries a sequence number; the destination restores program
	 * order (the ASPLOS '26 paper's reorder buffer).  Transmit queues
	 * only: a context asks for it with OMS_CTX_F_DEST_SEQ.
	 */
	OMS_STORE_SEQUENCED = 4,
};

#endif /* OMS_ORDER_H */
