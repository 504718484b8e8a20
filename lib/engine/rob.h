/* SPDX-License-Identifier: MIT */
/*
 * oms_rob: destination reorder buffer for sequence-numbered MMIO streams.
 *
 * Implements seed 004 (Liew et al., ASPLOS'26), section 5.2 "Host Support
 * for MMIO Operations": every MMIO store/release carries (thread id, sequence
 * number); a reorder buffer at the destination tracks, per thread, the
 * highest sequence number below which everything has arrived and releases
 * contiguous runs in sequence order.  Litmus L27 (MMIO message passing) and
 * L28 (per-thread streams are independent).
 *
 * What is ordered against what:
 *   - Within one stream (thread), entries leave oms_rob_pop()/oms_rob_release()
 *     in strictly increasing sequence order, with no gaps: entry s is popped
 *     only after s-1 was popped.
 *   - Streams are independent: a gap in stream t never holds stream u.
 *   - Nothing is ordered against anything outside the ROB.
 *
 * Sequence numbers are 16 bits and wrap (serial-number arithmetic).  With
 * next = the sequence number a stream expects to pop next, and
 * d = (uint16_t)(seq - next):
 *   d <  window           in window: buffered (or -EEXIST if already there)
 *   window <= d < 0x8000  too far ahead: -ERANGE, counted in out_of_window
 *   d >= 0x8000           behind next, already released: -ESTALE, counted
 *
 * Errors (negative errno, never an abort):
 *   -EINVAL   bad argument (NULL, thread >= nthreads, bad window); no state
 *             change at all, not even a counter.
 *   -ESTALE   seq already released (behind the head); stale++.
 *   -EEXIST   seq already buffered; duplicate++.
 *   -ERANGE   seq beyond the window; out_of_window++.
 *   -ENOMEM   init could not allocate.
 *   -ENOSPC   resync: the caller's array is too small for the dropped entries.
 * A refused insert changes nothing but its own counter.
 *
 * Cost: insert, pop and ready are O(1); no allocation after init.  Memory
 * is nthreads * window * 8 bytes of cookies plus 40 bytes per stream.
 * Not thread-safe: one caller at a time (the backend serialises).
 */
#ifndef OMS_ENGINE_ROB_H
#define OMS_ENGINE_ROB_H

#include <stddef.h>
#include <stdint.h>

typedef uint16_t oms_rob_seq_t;

#define OMS_ROB_MAX_WINDOW	256u	/* entries per stream, power of two */
#define OMS_ROB_MAX_THREADS	4096u

struct oms_rob_counters {
	uint64_t inserted;	/* accepted inserts */
	uint64_t released;	/* entries popped in order */
	uint64_t stale;		/* -ESTALE refusals */
	uint64_t duplicate;	/* -EEXIST refusals */
	uint64_t out_of_window;	/* -ERANGE refusals */
	uint64_t resyncs;	/* oms_rob_resync() calls that succeeded */
	uint64_t dropped;	/* buffered entries discarded by resync */
};

struct oms_rob_stream {
	uint64_t present[OMS_ROB_MAX_WINDOW / 64]; /* by slot = seq & mask */
	oms_rob_seq_t next;	/* next sequence number to pop */
	uint16_t count;		/* entries buffered */
	uint32_t pad;
};

struct oms_rob {
	struct oms_rob_stream *streams;	/* [nthreads] */
	uint64_t *cookies;		/* [nthreads * window], by slot */
	unsigned nthreads;
	unsigned window;
	unsigned mask;			/* window - 1 */
	int owns_mem;
	struct oms_rob_counters cnt;
};

/* Bytes of memory oms_rob_init() needs for this geometry (0 if invalid). */
size_t oms_rob_memsize(unsigned nthreads, unsigned window);

/*
 * Set up @nthreads streams of @window slots (power of two, 1..256), every
 * stream expecting sequence number 0 first.  @mem/@memlen: caller memory of
 * at least oms_rob_memsize() bytes, 8-byte aligned; NULL to malloc once.
 */
int oms_rob_init(struct oms_rob *rob, unsigned nthreads, unsigned window,
		 void *mem, size_t memlen);

/* Free what init allocated; the rob must be re-initialised before reuse. */
void oms_rob_destroy(struct oms_rob *rob);

/*
 * Buffer (thread, seq) carrying @cookie (the caller's payload handle).
 * Returns 1 if the stream's head is now poppable (seq == next), 0 if the
 * entry waits behind a gap, or a negative errno (see above).
 */
int oms_rob_insert(struct oms_rob *rob, unsigned thread, oms_rob_seq_t seq,
		   uint64_t cookie);

/*
 * Pop the next in-order entry of @thread: returns 1 and fills @seq/@cookie
 * (either may be NULL), 0 if the next sequence number has not arrived,
 * -EINVAL on bad arguments.
 */
int oms_rob_pop(struct oms_rob *rob, unsigned thread, oms_rob_seq_t *seq,
		uint64_t *cookie);

/*
 * Pop up to @max contiguous in-order entries of @thread into @cookies
 * (in sequence order).  Returns how many, or -EINVAL.
 */
int oms_rob_release(struct oms_rob *rob, unsigned thread, uint64_t *cookies,
		    unsigned max);

/* 1 if @thread's head is poppable, 0 if not, -EINVAL. */
int oms_rob_ready(const struct oms_rob *rob, unsigned thread);

/* Entries buffered in @thread (waiting or poppable), or -EINVAL. */
int oms_rob_pending(const struct oms_rob *rob, unsigned thread);

/* Next sequence number @thread will pop, or -EINVAL. */
int oms_rob_next_seq(const struct oms_rob *rob, unsigned thread);

/*
 * Resume @thread's stream at @next (a consumer or producer resumed):
 * every buffered entry is discarded.  If @dropped is not NULL their cookies
 * are stored there in sequence order; if more than @cap are buffered the
 * call fails with -ENOSPC and changes nothing.  Returns the number dropped.
 */
int oms_rob_resync(struct oms_rob *rob, unsigned thread, oms_rob_seq_t next,
		   uint64_t *dropped, unsigned cap);

#endif
