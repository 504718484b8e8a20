// SPDX-License-Identifier: MIT
/*
 * Destination reorder buffer (seed 004, section 5.2).  See rob.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rob.h"
#include "engine/serial.h"
#include "engine/engine_mem.h"

static int bad_geometry(unsigned nthreads, unsigned window)
{
	return nthreads == 0 || nthreads > OMS_ROB_MAX_THREADS ||
	       window == 0 || window > OMS_ROB_MAX_WINDOW ||
	       (window & (window - 1)) != 0;
}

size_t oms_rob_memsize(unsigned nthreads, unsigned window)
{
	if (bad_geometry(nthreads, window))
		return 0;
	return (size_t)nthreads * sizeof(struct oms_rob_stream) +
	       (size_t)nthreads * window * sizeof(uint64_t);
}

int oms_rob_init(struct oms_rob *rob, unsigned nthreads, unsigned window,
		 void *mem, size_t memlen)
{
	size_t need = oms_rob_memsize(nthreads, window);
	int owns, r;

	if (!rob || !need)
		return -EINVAL;
	r = oms_engine_mem(mem, memlen, need, &mem, &owns);
	if (r)
		return r;
	memset(rob, 0, sizeof(*rob));
	rob->streams = mem;
	rob->cookies = (uint64_t *)(rob->streams + nthreads);
	rob->nthreads = nthreads;
	rob->window = window;
	rob->mask = window - 1;
	rob->owns_mem = owns;
	return 0;
}

void oms_rob_destroy(struct oms_rob *rob)
{
	if (!rob)
		return;
	if (rob->owns_mem)
		free(rob->streams);
	memset(rob, 0, sizeof(*rob));
}

static inline int bit_test(const uint64_t *w, unsigned i)
{
	return (w[i >> 6] >> (i & 63)) & 1;
}

int oms_rob_insert(struct oms_rob *rob, unsigned thread, oms_rob_seq_t seq,
		   uint64_t cookie)
{
	struct oms_rob_stream *s;
	oms_rob_seq_t d;
	unsigned slot;

	if (!rob || !rob->streams || thread >= rob->nthreads)
		return -EINVAL;
	s = &rob->streams[thread];
	d = oms_serial_ahead(seq, s->next);
	if (!oms_serial_at_or_after(seq, s->next)) {
		rob->cnt.stale++;
		return -ESTALE;
	}
	if (d >= rob->window) {
		rob->cnt.out_of_window++;
		return -ERANGE;
	}
	slot = seq & rob->mask;
	if (bit_test(s->present, slot)) {
		rob->cnt.duplicate++;
		return -EEXIST;
	}
	s->present[slot >> 6] |= 1ull << (slot & 63);
	rob->cookies[(size_t)thread * rob->window + slot] = cookie;
	s->count++;
	rob->cnt.inserted++;
	return d == 0 || bit_test(s->present, s->next & rob->mask);
}

int oms_rob_pop(struct oms_rob *rob, unsigned thread, oms_rob_seq_t *seq,
		uint64_t *cookie)
{
	struct oms_rob_stream *s;
	unsigned slot;

	if (!rob || !rob->streams || thread >= rob->nthreads)
		return -EINVAL;
	s = &rob->streams[thread];
	slot = s->next & rob->mask;
	if (!bit_test(s->present, slot))
		return 0;
	s->present[slot >> 6] &= ~(1ull << (slot & 63));
	if (seq)
		*seq = s->next;
	if (cookie)
		*cookie = rob->cookies[(size_t)thread * rob->window + slot];
	s->next++;
	s->count--;
	rob->cnt.released++;
	return 1;
}

int oms_rob_release(struct oms_rob *rob, unsigned thread, uint64_t *cookies,
		    unsigned max)
{
	unsigned n = 0;

	if (!rob || !rob->streams || thread >= rob->nthreads ||
	    (!cookies && max))
		return -EINVAL;
	while (n < max && oms_rob_pop(rob, thread, NULL, &cookies[n]) == 1)
		n++;
	return (int)n;
}

int oms_rob_ready(const struct oms_rob *rob, unsigned thread)
{
	const struct oms_rob_stream *s;

	if (!rob || !rob->streams || thread >= rob->nthreads)
		return -EINVAL;
	s = &rob->streams[thread];
	return bit_test(s->present, s->next & rob->mask);
}

int oms_rob_pending(const struct oms_rob *rob, unsigned thread)
{
	if (!rob || !rob->streams || thread >= rob->nthreads)
		return -EINVAL;
	return rob->streams[thread].count;
}

int oms_rob_next_seq(const struct oms_rob *rob, unsigned thread)
{
	if (!rob || !rob->streams || thread >= rob->nthreads)
		return -EINVAL;
	return rob->streams[thread].next;
}

int oms_rob_resync(struct oms_rob *rob, unsigned thread, oms_rob_seq_t next,
		   uint64_t *dropped, unsigned cap)
{
	struct oms_rob_stream *s;
	unsigned i, n = 0;

	if (!rob || !rob->streams || thread >= rob->nthreads)
		return -EINVAL;
	s = &rob->streams[thread];
	if (dropped && s->count > cap)
		return -ENOSPC;
	/* Walk the window from the old head so cookies come out in order. */
	for (i = 0; i < rob->window && n < s->count; i++) {
		unsigned slot = (s->next + i) & rob->mask;

		if (!bit_test(s->present, slot))
			continue;
		if (dropped)
			dropped[n] = rob->cookies[(size_t)thread * rob->window +
						  slot];
		n++;
	}
	memset(s->present, 0, sizeof(s->present));
	s->count = 0;
	s->next = next;
	rob->cnt.resyncs++;
	rob->cnt.dropped += n;
	return (int)n;
}
