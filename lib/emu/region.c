// SPDX-License-Identifier: MIT
/*
 * The emulated device's region table: slots with a key and a generation
 * (seed 003's key check), listeners' windows on a region (the same memory
 * under a slot of their own), whether a command still names live memory,
 * and squashing speculative reads of memory that changed.  The backend
 * (memory registration), the listeners (conn.c) and the device's
 * performers call it; it calls only the engine.
 */
#include <errno.h>
#include <pthread.h>

#include "emu/emu.h"

/*
 * Give @tmpl a free slot of the region table, with a fresh key and the
 * slot's next generation (what was admitted for the slot before fails),
 * and describe it in *@rmr.  Lock held.  -ENOSPC.
 */
int emu_region_add(struct oms_emu *dev, const struct emu_region *tmpl,
		      struct oms_rmr *rmr)
{
	for (uint32_t i = 0; i < EMU_MAX_REGIONS; i++) {
		struct emu_region *r = &dev->reg[i];
		uint32_t key, gen = r->gen + 1;
		int err;

		if (r->valid)
			continue;
		/* A key nobody can guess from the region number. */
		key = dev->next_key = dev->next_key * 1664525u + 1013904223u;
		oms_kc_clear(&dev->kc, i);
		err = oms_kc_set(&dev->kc, i, key);
		if (err)
			return err;
		r->base = tmpl->base;
		r->len = tmpl->len;
		r->node = tmpl->node;
		r->access = tmpl->access;
		r->gen = gen;
		/* read without the lock by emu_home_region() */
		__atomic_store_n(&r->home, tmpl->home < EMU_MAX_REGIONS ?
				 tmpl->home : i, __ATOMIC_RELAXED);
		r->valid = 1;
		*rmr = (struct oms_rmr){
			.dest = r->node, .region = i, .key = key,
			.access = r->access, .len = r->len,
		};
		return 0;
	}
	return -ENOSPC;
}

/*
 * Lock held.  A freed slot is memory of its own again: a revoked
 * window's descriptor no longer names its region's bytes for the
 * orderer, so an op refused through it cannot touch (by C1's write
 * after read fence) the region's live ops.
 */
void emu_region_del(struct oms_emu *dev, const struct oms_rmr *rmr)
{
	dev->reg[rmr->region].valid = 0;
	__atomic_store_n(&dev->reg[rmr->region].home, rmr->region,
			 __ATOMIC_RELAXED);
	oms_kc_clear(&dev->kc, rmr->region);
}

/*
 * A listener's window on region @of (conn.c): the same memory under a
 * slot and key of its own, handed to the initiators that connect, so that
 * closing the listener revokes what it handed out (on verbs, closing
 * disconnects them).  Commands through it are about @of's memory from
 * intake on (exec.c).  -ENOSPC.
 */
int emu_window_open(struct oms_emu *dev, const struct oms_rmr *of,
		    struct oms_rmr *win)
{
	struct emu_region r;
	int err;

	pthread_mutex_lock(&dev->lock);
	r = dev->reg[of->region];
	err = emu_region_add(dev, &r, win);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

void emu_window_close(struct oms_emu *dev, const struct oms_rmr *win)
{
	pthread_mutex_lock(&dev->lock);
	emu_region_del(dev, win);
	pthread_mutex_unlock(&dev->lock);
}

/*
 * Is [@off, @off+@len) of @region still the memory a command admitted for
 * generation @gen named?  Not if the region was deregistered since, or
 * the slot registered again (docs/ordering.md: a revoked region fails the
 * operation, -EACCES, memory untouched).
 */
int emu_region_live(const struct oms_emu *dev, uint32_t region,
		    uint32_t gen, uint64_t off, uint64_t len)
{
	const struct emu_region *r = &dev->reg[region % EMU_MAX_REGIONS];

	return r->valid && r->gen == gen && off <= r->len &&
	       len <= r->len - off;
}

/* Host memory of a region changed: squash speculative reads of it. */
void emu_invalidate(struct oms_emu *dev, uint32_t region, uint64_t off,
		    uint64_t len)
{
	if (!len || !dev->rlsq.nspec)
		return;
	for (uint32_t i = 0; i < oms_line_count(off, len); i++)
		oms_rlsq_invalidate(&dev->rlsq, ((uint64_t)region << 32) |
				    (oms_line_first(off) + i));
}
