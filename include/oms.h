/* SPDX-License-Identifier: MIT */
/*
 * liboms - ordered remote memory operations.
 * (first cut: grows below as the library grows)
 */
#ifndef OMS_H
#define OMS_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Store classes (seed 000 [0057], [0061]).
 *
 * OMS_STORE_UNORDERED  outside the ordered view: nothing orders it and
 *                      nothing waits for it.
 * OMS_STORE_WEAK       part of the ordered view; not ordered against other
 *                      weak stores (except to the same address), cheap.
 * OMS_STORE_STRONG     visible only after every earlier weak and strong
 *                      store of the context, to any destination; the caller
 *                      never blocks for it.
 */
enum oms_store_class {
	OMS_STORE_UNORDERED = 0,
	OMS_STORE_WEAK = 1,
	OMS_STORE_STRONG = 2,
};

#ifdef __cplusplus
}
#endif
#endif
