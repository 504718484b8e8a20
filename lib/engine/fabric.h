/* SPDX-License-Identifier: MIT */
/*
 * The chaos fabric: what reorders operations between a source and the
 * destination models that the library emulates (the emulated device,
 * lib/emu; the transmit receiver, lib/tx/receiver.c; the verbs
 * destination agent's chaos mode, lib/agent).  One random stream and one
 * path model, so that "chaos" means the same thing everywhere and a seed
 * reproduces a run.  Pure: no I/O, no clock; a path allocates only in
 * its init.
 *
 * oms_fab_rand(): splitmix64 over a caller-held state (each device thread
 * keeps its own, so that runs are reproducible per seed).
 *
 * struct oms_fab_path: the path from a CPU's write-combining buffers to a
 * device, bounded.  Items (chunk positions, say) are pushed in program
 * order; up to @window of them wait in the buffers and one leaves, drawn
 * at random, whenever more wait.  An item is never overtaken by more
 * than 2 * @window later ones (the oldest leaves first once it has been
 * passed that often), so a bounded reorder buffer at the destination
 * always has room for the gap.  oms_fab_path_take() is the store fence:
 * everything waiting leaves, in random order, before anything pushed
 * after it - the epoch model of engine/wc_chan.h with a bound on how far
 * an epoch's members mix.
 */
#ifndef OMS_ENGINE_FABRIC_H
#define OMS_ENGINE_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#define OMS_FAB_MAX_WINDOW	4096u

/* splitmix64: the next number of the stream in *@state. */
static inline uint64_t oms_fab_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct oms_fab_waiting {
	uint64_t item;
	uint64_t idx;		/* push count when it entered */
};

struct oms_fab_path {
	struct oms_fab_waiting *w;
	uint32_t window, n;
	uint64_t in;		/* items pushed */
	uint64_t rng;
	int owns;
};

/*
 * Set up a path that mixes up to @window items (0: items leave in the
 * order pushed), drawing from @seed.  @mem (8-byte aligned, at least
 * oms_fab_path_mem(@window) bytes) or one allocation.  -EINVAL for a
 * window above OMS_FAB_MAX_WINDOW or short memory, -ENOMEM.
 */
int oms_fab_path_init(struct oms_fab_path *p, uint32_t window, uint64_t seed,
		      void *mem, size_t memlen);
size_t oms_fab_path_mem(uint32_t window);
void oms_fab_path_destroy(struct oms_fab_path *p);

/* A new seed and an empty path (what waits is dropped). */
void oms_fab_path_reseed(struct oms_fab_path *p, uint64_t seed);

/*
 * Push @item.  Returns 1 and the item that leaves in *@out when one
 * does, 0 when it waits with the others.
 */
int oms_fab_path_push(struct oms_fab_path *p, uint64_t item, uint64_t *out);

/*
 * The fence: take out one waiting item (drawn at random) into *@out;
 * returns 0 once nothing waits.  Call until 0 before pushing what must
 * follow.
 */
int oms_fab_path_take(struct oms_fab_path *p, uint64_t *out);

#endif
