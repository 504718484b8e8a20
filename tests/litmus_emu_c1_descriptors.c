// SPDX-License-Identifier: MIT
/*
 * Rule C1 (docs/ordering.md: same address, program order) across two
 * descriptors of one region on the emulated device with chaos on: the
 * region's own descriptor (oms_mr_remote) and a listener's window on it
 * (oms_connect), which name the same bytes at one destination.
 *   L33 get(X via one); put(X=1 via the other): the get never returns 1,
 *       both ways round;
 *   L26 put(X=new via one); get(X via the other): the get returns new
 *       (the device keeps that one: it maps a window to its region at
 *       intake; L33 needs the source's fence, which the orderer gives
 *       only when it knows the two descriptors are one memory).
 * Each on CHAOS_SEEDS devices of their own (oms_emu_create), one batch of
 * instances per quiet, each instance on its own word.  The control is
 * the same L33 program in a context with OMS_CTX_F_NO_ORDERING, which
 * must show the forbidden outcome.  Public API only: the observer is the
 * value the get returns.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"

#define BATCH		512u	/* program instances per quiet */
#define CHAOS_SEEDS	30u
#define PORT		"7483"

struct two {
	struct oms_emu *emu;
	struct oms_ctx *ini, *tgt;
	struct oms_mr *mr;
	struct oms_listener *l;
	struct oms_rmr own, win;	/* two descriptors, one region */
	uint64_t *mem;
	uint64_t val[BATCH], got[BATCH];
};

static int two_open(struct two *t, uint64_t seed, uint32_t ini_flags)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = seed,
	};
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	memset(t, 0, sizeof(*t));
	err = oms_emu_create(&ea, &t->emu);
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_FLAGS |
		      OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_TIMEOUT;
	a.emu = t->emu;
	a.timeout_ms = 60000;
	a.node = 1;
	if (!err)
		err = oms_ctx_create(&a, &t->tgt);
	a.node = 0;
	a.flags = ini_flags;
	if (!err)
		err = oms_ctx_create(&a, &t->ini);
	t->mem = calloc(BATCH, 8);
	if (!err && !t->mem)
		err = -1;
	if (!err)
		err = oms_mr_reg(t->tgt, t->mem, BATCH * 8, OMS_ACCESS_ALL,
				 &t->mr);
	if (!err)
		err = oms_mr_remote(t->mr, &t->own);
	if (!err)
		err = oms_listen(t->tgt, NULL, PORT, t->mr, &t->l);
	if (!err)
		err = oms_connect(t->ini, "localhost", PORT, 0, &t->win);
	/* two descriptors, or the test would check one */
	if (!err && t->win.region == t->own.region)
		err = -1;
	return err;
}

static void two_close(struct two *t)
{
	if (t->ini)
		oms_ctx_destroy(t->ini);
	if (t->tgt)
		oms_ctx_destroy(t->tgt);	/* closes the listener first */
	if (t->emu)
		oms_emu_destroy(t->emu);
	free(t->mem);
}

enum prog { L33_OWN_THEN_WIN, L33_WIN_THEN_OWN, L26_WIN_THEN_OWN };

/* One batch of @p; returns the instances with the forbidden outcome, or
 * -1 on an error. */
static long batch(struct two *t, enum prog p, uint64_t gen)
{
	const struct oms_rmr *first = p == L33_OWN_THEN_WIN ? &t->own :
							      &t->win;
	const struct oms_rmr *second = first == &t->own ? &t->win : &t->own;
	long bad = 0;
	int e = 0;

	for (uint32_t i = 0; i < BATCH; i++) {
		uint64_t off = 8ull * i;

		t->got[i] = 0;
		if (p == L26_WIN_THEN_OWN) {
			t->val[i] = gen;
			e |= oms_put(t->ini, first, off, &t->val[i], 8,
				     OMS_STORE_WEAK);
			e |= oms_get(t->ini, &t->got[i], second, off, 8,
				     OMS_READ_RELAXED);
		} else {
			t->val[i] = 1;
			e |= oms_get(t->ini, &t->got[i], first, off, 8,
				     OMS_READ_RELAXED);
			e |= oms_put(t->ini, second, off, &t->val[i], 8,
				     OMS_STORE_WEAK);
		}
	}
	e |= oms_quiet(t->ini);
	if (e)
		return -1;
	for (uint32_t i = 0; i < BATCH; i++)
		bad += p == L26_WIN_THEN_OWN ? t->got[i] != gen :
					       t->got[i] == 1;
	memset(t->mem, 0, BATCH * 8);
	return bad;
}

struct tally {
	unsigned long trials, bad, seeds_bad, errors;
};

static struct tally run(enum prog p, uint32_t ini_flags,
			unsigned long per_seed, int stop_on_bad)
{
	struct tally r = { 0 };

	for (uint64_t s = 1; s <= CHAOS_SEEDS; s++) {
		struct two *t = calloc(1, sizeof(*t));
		unsigned long before = r.bad;

		if (!t || two_open(t, 0xc1000 + s, ini_flags)) {
			r.errors++;
		} else {
			for (unsigned long n = 0; n < per_seed; n += BATCH) {
				long b = batch(t, p, n / BATCH + 2);

				if (b < 0) {
					r.errors++;
					break;
				}
				r.bad += (unsigned long)b;
				r.trials += BATCH;
			}
		}
		if (t)
			two_close(t);
		free(t);
		r.seeds_bad += r.bad > before;
		if (stop_on_bad && r.bad)
			break;
	}
	return r;
}

#ifdef __SANITIZE_ADDRESS__
#define BATCHES_PER_SEED	2ul
#else
#define BATCHES_PER_SEED	8ul
#endif

/* Instances per seed: OMS_TEST_TRIALS (over all seeds) overrides. */
static unsigned long per_seed(void)
{
	return t_trials(CHAOS_SEEDS * BATCHES_PER_SEED * BATCH) / CHAOS_SEEDS;
}

/* Program @p in ordered contexts: never the forbidden outcome. */
static void expect_none(struct __test_metadata *_metadata, enum prog p,
			const char *what)
{
	struct tally r = run(p, 0, per_seed(), 0);

	TH_LOG("%s: %lu of %lu forbidden", what, r.bad, r.trials);
	EXPECT_EQ(0ul, r.errors);
	EXPECT_LT(0ul, r.trials);
	EXPECT_EQ(0ul, r.bad);
}

TEST(litmus_L33_war_across_descriptors_own_then_window_on_emu)
{
	expect_none(_metadata, L33_OWN_THEN_WIN,
		    "get via the region's descriptor, put via the window");
}

TEST(litmus_L33_war_across_descriptors_window_then_own_on_emu)
{
	expect_none(_metadata, L33_WIN_THEN_OWN,
		    "get via the window, put via the region's descriptor");
}

TEST(litmus_L26_raw_across_descriptors_on_emu)
{
	expect_none(_metadata, L26_WIN_THEN_OWN,
		    "put via the window, get via the region's descriptor (stale)");
}

/* The control: without ordering the get does see the later put. */
TEST(litmus_L33_control_across_descriptors_without_ordering_on_emu)
{
	struct tally r = run(L33_OWN_THEN_WIN, OMS_CTX_F_NO_ORDERING,
			     per_seed(), 1);

	TH_LOG("no ordering: %lu of %lu forbidden (stopped at the first seed showing it)",
	       r.bad, r.trials);
	EXPECT_EQ(0ul, r.errors);
	EXPECT_LT(0ul, r.bad);
}

TEST_HARNESS_MAIN
