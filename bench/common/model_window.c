// SPDX-License-Identifier: MIT
/* One window of model time common to a bench's threads
 * (bench/model_window.h: the protocol). */
#include <sched.h>
#include <string.h>

#include "model_window.h"

void bu_window_init(struct bu_window *w, uint32_t threads)
{
	memset(w, 0, sizeof(*w));
	w->t0m = w->t1m = BU_UNSET;
	w->n = threads < BU_WINDOW_THREADS ? threads : BU_WINDOW_THREADS;
}

/* A bound whose request was seen: the main thread is about to store it. */
static uint64_t published(const uint64_t *at)
{
	uint64_t v;

	while ((v = __atomic_load_n(at, __ATOMIC_ACQUIRE)) == BU_UNSET)
		sched_yield();
	return v;
}

double bu_window_round(struct bu_window *w, uint32_t i, uint64_t s,
		       uint64_t e)
{
	uint64_t lo, hi, from;

	/* published before the requests are read (the protocol) */
	__atomic_store_n(&w->last[i].t, e, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&w->measure_req, __ATOMIC_SEQ_CST))
		return 0;
	lo = published(&w->t0m);
	hi = __atomic_load_n(&w->stop_req, __ATOMIC_SEQ_CST) ?
	     published(&w->t1m) : e;
	if (e <= s)	/* no model time at all: a point */
		return e > lo && e <= hi;
	from = s > lo ? s : lo;
	hi = hi < e ? hi : e;
	return hi > from ? (double)(hi - from) / (double)(e - s) : 0;
}

int bu_window_past(struct bu_window *w, uint64_t e)
{
	return __atomic_load_n(&w->stop_req, __ATOMIC_SEQ_CST) &&
	       e > published(&w->t1m);
}

int bu_window_all_started(const struct bu_window *w)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (!__atomic_load_n(&w->last[i].t, __ATOMIC_SEQ_CST))
			return 0;
	return 1;
}

uint64_t bu_window_latest(const struct bu_window *w)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < w->n; i++) {
		uint64_t x = __atomic_load_n(&w->last[i].t, __ATOMIC_SEQ_CST);

		if (x > t)
			t = x;
	}
	return t;
}

void bu_window_open(struct bu_window *w)
{
	/* the request before the round ends are read (the protocol) */
	__atomic_store_n(&w->measure_req, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&w->t0m, bu_window_latest(w), __ATOMIC_RELEASE);
}

int bu_window_any_in(const struct bu_window *w)
{
	return bu_window_latest(w) > w->t0m;
}

void bu_window_close(struct bu_window *w)
{
	__atomic_store_n(&w->stop_req, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&w->t1m, bu_window_latest(w), __ATOMIC_RELEASE);
}

uint64_t bu_window_span(const struct bu_window *w)
{
	if (w->t0m == BU_UNSET || w->t1m == BU_UNSET || w->t1m <= w->t0m)
		return 0;
	return w->t1m - w->t0m;
}
