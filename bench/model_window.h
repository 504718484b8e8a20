/* SPDX-License-Identifier: MIT */
/*
 * One window of model time common to a benchmark's threads (--local under
 * the emulated device's latency model: include/oms_emu.h,
 * oms_emu_thread_time()).
 *
 * The threads run concurrently in model time, but each sees the main
 * thread's start and stop at a model time of its own: rates summed over
 * windows that differ can exceed what the device does.  So a cell counts
 * the rounds of its threads (a batch and its wait, as each bench defines
 * them) within one window of model time, (t0m, t1m]: each bound is the
 * latest round end of any thread when the main thread asks for it
 * (bu_window_open(), bu_window_close()), so no thread has counted past
 * it, and each thread goes on until a round of its ends past t1m
 * (bu_window_past()).
 *
 * A round (@s, @e] counts for its share of the window (bu_window_round()):
 * 1 inside it, 0 outside, the part inside for a round across a bound.
 * Whole rounds counted at their ends would be off by up to a round per
 * thread at each bound, and a busy machine leaves few rounds in a window
 * of wall seconds; a thread's rounds tile its model time, so for rounds
 * that repeat the shares add up to exactly the window's length over a
 * round's.
 *
 * The protocol pairs seq_cst stores and loads: a thread publishes its
 * round's end @e before it looks at the requests, and the main thread
 * makes a request before it reads the round ends for that bound.  So a
 * thread that has not seen a request knows the bound will be at or past
 * @e: with no measure request the round is before t0m (no share), with
 * no stop request t1m will not cut it.  A thread that has seen one takes
 * the bound itself, waiting for it if need be: it knows the bound is
 * being published (the main thread is about to; a yield loop).
 *
 * Each bench keeps its own policy: when to open (after a warm-up, once
 * bu_window_all_started()) and when to close.  One window a cell; the
 * main thread alone opens and closes it.
 */
#ifndef OMS_BENCH_MODEL_WINDOW_H
#define OMS_BENCH_MODEL_WINDOW_H

#include <stdint.h>

#define BU_WINDOW_THREADS	64	/* threads in a window, at most */
#define BU_UNSET		UINT64_MAX	/* a bound not yet known */

struct bu_window {
	int measure_req, stop_req;	/* the main thread's requests */
	uint64_t t0m, t1m;		/* the bounds, BU_UNSET until known */
	/* the threads in it: the main thread's; lower it to those started
	 * if fewer were, before it waits for them */
	uint32_t n;
	/* each thread's last round end, 0 before its first; a cache line
	 * each, so a thread's stores do not slow the others' */
	struct {
		uint64_t t;
	} __attribute__((aligned(64))) last[BU_WINDOW_THREADS];
};

/* Before the threads start: no requests, no bounds, no rounds. */
void bu_window_init(struct bu_window *w, uint32_t threads);

/*
 * Thread @i's round (@s, @e] ended: publish @e, then its share of the
 * window (0 before the window opens).  It may wait for a bound.
 */
double bu_window_round(struct bu_window *w, uint32_t i, uint64_t s,
		       uint64_t e);

/* Thread side, after bu_window_round(): a round that ended at @e is past
 * the closed window (the thread may stop: every round in it is counted). */
int bu_window_past(struct bu_window *w, uint64_t e);

/* Every thread has ended a round (a thread's start can take longer in wall
 * time than a warm-up; a bound of 0 would count all the model time before
 * it). */
int bu_window_all_started(const struct bu_window *w);

/* The latest round end of any thread. */
uint64_t bu_window_latest(const struct bu_window *w);

/* Main thread: the window opens after every round that has ended. */
void bu_window_open(struct bu_window *w);

/* Main thread, after bu_window_open(): a round has ended in the window. */
int bu_window_any_in(const struct bu_window *w);

/* Main thread: it closes after them; each thread goes on until it is past
 * it. */
void bu_window_close(struct bu_window *w);

/* Main thread, once closed: t1m - t0m, 0 for no window. */
uint64_t bu_window_span(const struct bu_window *w);

#endif /* OMS_BENCH_MODEL_WINDOW_H */
