/* SPDX-License-Identifier: MIT */
/*
 * Named barriers between the CPU and a device, for every layer (the
 * transmit path, the verbs backend, the benchmarks).  Every such ordering
 * point goes through one of these, named for what it orders; nothing in
 * lib/ open-codes a fence instruction.
 *
 *   oms_barrier_compiler()
 *	The compiler may not move memory accesses across it; the CPU may.
 *
 *   oms_barrier_to_device()
 *	Earlier stores to ordinary (write-back) memory are visible to the
 *	device before any later store, to memory or to the device, is.
 *	Use: WQE bytes in the send queue buffer, then the doorbell record the
 *	device reads to find them; the doorbell record, then the doorbell.
 *
 *   oms_barrier_from_device()
 *	Reads of memory the device writes (by DMA) that follow are not
 *	performed before the read that found it valid.  Use: a completion
 *	entry's fields after its owner bit.
 *
 *   oms_barrier_wc_start()
 *	Earlier stores to ordinary memory are visible before the
 *	write-combining stores that follow.  Use: the doorbell record, then a
 *	BlueFlame copy of the WQE into the device's WC register.
 *
 *   oms_barrier_wc_drain()
 *	Every earlier write-combining (or non-temporal) store has left the
 *	CPU and is visible, in full, before any later store.  This is the
 *	store fence the paper's Fig 4 puts after every message: it drains the
 *	WC buffers and stalls until they are out.  Use: before each message
 *	of the strong class; after a BlueFlame copy; before publishing a
 *	position to a consumer that reads the window as memory.
 *
 *   oms_barrier_rd_acquire()
 *	The read that found a device's answer valid (the done word of an
 *	MMIO-Acquire's response) is performed before every later load and
 *	store of the thread: to ordinary memory, to the device, and
 *	write-combining stores too.  So nothing the thread does after an
 *	acquire can be observed by the device before the acquire's read was
 *	performed there (litmus L40).  Use: once, after the response's done
 *	word, in oms_tx_acquire().
 *
 *   oms_barrier_load_load(), oms_barrier_store_store()
 *	Between threads on ordinary (write-back) memory: earlier loads are
 *	performed before later loads; earlier stores are visible before later
 *	stores (the kernel's smp_rmb() and smp_wmb()).  Use: the agent
 *	reading an item's lines for an acquire get, one line's loads before
 *	the next line's, and writing a put's lines in order.
 *
 * One #if ladder per architecture; an architecture without an entry does
 * not build.
 */
#ifndef OMS_UTIL_BARRIER_H
#define OMS_UTIL_BARRIER_H

#define oms_barrier_compiler()	__asm__ __volatile__("" ::: "memory")

#if defined(__x86_64__) || defined(__i386__)
/* x86 orders write-back stores with each other and before later UC
 * stores; write-combining and non-temporal stores are weakly ordered and
 * only sfence drains them. */
#define oms_barrier_to_device()	oms_barrier_compiler()
#define oms_barrier_from_device()	oms_barrier_compiler()	/* loads in order */
#define oms_barrier_wc_start()	__asm__ __volatile__("sfence" ::: "memory")
#define oms_barrier_wc_drain()	__asm__ __volatile__("sfence" ::: "memory")
/* x86 never reorders a load with later loads or later stores of any
 * memory type (SDM 8.2.2: only write-write order has NT/WC exceptions). */
#define oms_barrier_rd_acquire()	oms_barrier_compiler()
/* TSO: loads are not reordered with loads, stores not with stores. */
#define oms_barrier_load_load()	oms_barrier_compiler()
#define oms_barrier_store_store()	oms_barrier_compiler()
#elif defined(__aarch64__)
/* Device-nGnRE/normal-NC mappings: dmb orders stores to the outer
 * shareable domain, dsb waits for them to complete. */
#define oms_barrier_to_device()	__asm__ __volatile__("dmb oshst" ::: "memory")
#define oms_barrier_from_device()	__asm__ __volatile__("dmb oshld" ::: "memory")
#define oms_barrier_wc_start()	__asm__ __volatile__("dmb oshst" ::: "memory")
#define oms_barrier_wc_drain()	__asm__ __volatile__("dsb st" ::: "memory")
/* dmb ld orders earlier loads against later loads and stores. */
#define oms_barrier_rd_acquire()	__asm__ __volatile__("dmb oshld" ::: "memory")
#define oms_barrier_load_load()	__asm__ __volatile__("dmb ishld" ::: "memory")
#define oms_barrier_store_store()	__asm__ __volatile__("dmb ishst" ::: "memory")
#elif defined(__powerpc64__) || defined(__powerpc__)
/* lwsync does not order cache-inhibited stores: sync everywhere. */
#define oms_barrier_to_device()	__asm__ __volatile__("sync" ::: "memory")
#define oms_barrier_from_device()	__asm__ __volatile__("lwsync" ::: "memory")
#define oms_barrier_wc_start()	__asm__ __volatile__("sync" ::: "memory")
#define oms_barrier_wc_drain()	__asm__ __volatile__("sync" ::: "memory")
#define oms_barrier_rd_acquire()	__asm__ __volatile__("sync" ::: "memory")
#define oms_barrier_load_load()	__asm__ __volatile__("lwsync" ::: "memory")
#define oms_barrier_store_store()	__asm__ __volatile__("lwsync" ::: "memory")
#elif defined(__riscv)
/* fence <pred>,<succ>: w/r memory, o/i device output/input. */
#define oms_barrier_to_device()	__asm__ __volatile__("fence w,ow" ::: "memory")
#define oms_barrier_from_device()	__asm__ __volatile__("fence r,r" ::: "memory")
#define oms_barrier_wc_start()	__asm__ __volatile__("fence w,o" ::: "memory")
#define oms_barrier_wc_drain()	__asm__ __volatile__("fence ow,ow" ::: "memory")
#define oms_barrier_rd_acquire()	__asm__ __volatile__("fence ir,iorw" ::: "memory")
#define oms_barrier_load_load()	__asm__ __volatile__("fence r,r" ::: "memory")
#define oms_barrier_store_store()	__asm__ __volatile__("fence w,w" ::: "memory")
#else
#error "lib/util/barrier.h: no barriers for this architecture"
#endif

#endif /* OMS_UTIL_BARRIER_H */
