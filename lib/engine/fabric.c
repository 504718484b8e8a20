// SPDX-License-Identifier: MIT
/*
 * The chaos fabric's bounded path (engine/fabric.h).
 */
#include <errno.h>
#include <stddef.h>

#include "engine/fabric.h"
#include "engine/engine_mem.h"

size_t oms_fab_path_mem(uint32_t window)
{
	return ((size_t)window + 1) * sizeof(struct oms_fab_waiting);
}

int oms_fab_path_init(struct oms_fab_path *p, uint32_t window, uint64_t seed,
		      void *mem, size_t memlen)
{
	void *w;
	int owns, r;

	if (!p || window > OMS_FAB_MAX_WINDOW)
		return -EINVAL;
	r = oms_engine_mem(mem, memlen, oms_fab_path_mem(window), &w, &owns);
	if (r)
		return r;
	*p = (struct oms_fab_path){ .w = w, .window = window, .rng = seed,
				    .owns = owns };
	return 0;
}

void oms_fab_path_destroy(struct oms_fab_path *p)
{
	if (p && p->owns)
		free(p->w);
	if (p)
		p->w = NULL;
}

void oms_fab_path_reseed(struct oms_fab_path *p, uint64_t seed)
{
	p->n = 0;
	p->in = 0;
	p->rng = seed;
}

/* One waiting item leaves: a random one, or the oldest once it has been
 * passed 2 * window times. */
static uint64_t leave(struct oms_fab_path *p)
{
	struct oms_fab_waiting *w = p->w;
	uint32_t i = 0;
	uint64_t item;

	if (p->n > 1 && p->in - w[0].idx <= 2ull * p->window)
		i = (uint32_t)((oms_fab_rand(&p->rng) >> 32) * p->n >> 32);
	item = w[i].item;
	/* keep them in push order: w[0] is always the oldest */
	memmove(w + i, w + i + 1, (p->n - i - 1) * sizeof(*w));
	p->n--;
	return item;
}

int oms_fab_path_push(struct oms_fab_path *p, uint64_t item, uint64_t *out)
{
	if (!p->window) {
		*out = item;
		return 1;
	}
	p->w[p->n].item = item;
	p->w[p->n].idx = p->in++;
	p->n++;
	if (p->n <= p->window)
		return 0;
	*out = leave(p);
	return 1;
}

int oms_fab_path_take(struct oms_fab_path *p, uint64_t *out)
{
	if (!p->n)
		return 0;
	*out = leave(p);
	return 1;
}
