/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * oms_order.h - the ordering classes of a store, one numbering for liboms
 * (oms.h, oms_put()) and oms.ko (oms_uapi.h, OMS_IOC_ORDERED_STORE).
 *
 * Seed 000's three store classes plus seed 004's MMIO-Release.  What each
 * class orders is in oms.h (for remote memory) and oms_uapi.h (for an MMIO
 * window); the whole contract is docs/ordering.md.  Both headers include
 * this one, so they can be included together, in either order, from C or
 * C++, in user space or in the kernel: it needs no other header.
 */
#ifndef OMS_ORDER_H
#define OMS_ORDER_H

enum oms_store_class {
	OMS_STORE_UNORDERED = 0,	/* outside the ordered view */
	OMS_STORE_WEAK = 1,		/* ordered view, no order among weak */
	OMS_STORE_STRONG = 2,		/* after every earlier ordered store */
	OMS_STORE_RELEASE = 3,		/* after every earlier op to its
					 * destination (liboms only) */
};

#endif /* OMS_ORDER_H */
