// SPDX-License-Identifier: MIT
/*
 * The chaos fabric (lib/engine/fabric.h): its random stream is splitmix64
 * and reproducible; its path loses and duplicates nothing, lets no item
 * be overtaken by more than 2 * window later ones, keeps drains as
 * fences (what follows one leaves after everything before it), mixes
 * when it may (the control: some item is overtaken) and refuses bad
 * arguments without touching the path.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/fabric.h"

TEST(rand_is_splitmix64)
{
	uint64_t s = 0;

	/* the published first outputs of splitmix64 from state 0 */
	EXPECT_EQ(0xe220a8397b1dcdafull, oms_fab_rand(&s));
	EXPECT_EQ(0x6e789e6aa1b965f4ull, oms_fab_rand(&s));
	EXPECT_EQ(0x06c45d188009454full, oms_fab_rand(&s));
}

#define NITEMS	20000u

struct trace {
	uint64_t out[NITEMS];
	unsigned int n;
};

/*
 * Push items 0..NITEMS-1 through a path of @window, draining every
 * @drain_every items (0: never, then once at the end).
 */
static int run_path(uint32_t window, uint64_t seed, unsigned int drain_every,
		    struct trace *t)
{
	struct oms_fab_path p;
	uint64_t o;
	int r = oms_fab_path_init(&p, window, seed, NULL, 0);

	t->n = 0;
	if (r)
		return r;
	for (uint64_t i = 0; i < NITEMS; i++) {
		if (drain_every && i && i % drain_every == 0)
			while (oms_fab_path_take(&p, &o))
				t->out[t->n++] = o;
		if (oms_fab_path_push(&p, i, &o))
			t->out[t->n++] = o;
	}
	while (oms_fab_path_take(&p, &o))
		t->out[t->n++] = o;
	oms_fab_path_destroy(&p);
	return 0;
}

/* Largest number of later items that left before an item. */
static uint64_t max_overtaken(const struct trace *t)
{
	static uint8_t seen[NITEMS];
	uint64_t worst = 0;

	memset(seen, 0, sizeof(seen));
	for (unsigned int k = 0; k < t->n; k++) {
		uint64_t item = t->out[k], later = 0;

		/* positions k' < k holding items above @item */
		for (unsigned int j = 0; j < k; j++)
			later += t->out[j] > item;
		if (later > worst)
			worst = later;
		seen[item]++;
	}
	for (unsigned int i = 0; i < NITEMS; i++)
		if (seen[i] != 1)
			return UINT64_MAX;	/* lost or duplicated */
	return worst;
}

TEST(path_bounded_and_complete)
{
	static const uint32_t windows[] = { 1, 2, 7, 64 };
	static struct trace t;

	for (unsigned int w = 0; w < ARRAY_SIZE(windows); w++) {
		for (uint64_t seed = 1; seed <= 3; seed++) {
			uint64_t worst;

			ASSERT_EQ(0, run_path(windows[w], seed, 0, &t));
			ASSERT_EQ(NITEMS, t.n);
			worst = max_overtaken(&t);
			ASSERT_NE(UINT64_MAX, worst);
			EXPECT_GE(2ull * windows[w], worst)
				TH_LOG("window %u seed %llu", windows[w],
				       (unsigned long long)seed);
			/* the control: it does mix */
			EXPECT_LT(0ull, worst);
		}
	}
}

TEST(path_window_zero_keeps_order)
{
	static struct trace t;

	ASSERT_EQ(0, run_path(0, 42, 0, &t));
	ASSERT_EQ(NITEMS, t.n);
	for (unsigned int i = 0; i < NITEMS; i++)
		ASSERT_EQ(i, t.out[i]);
}

TEST(path_drain_is_a_fence)
{
	static struct trace t;
	const unsigned int every = 37;

	ASSERT_EQ(0, run_path(16, 9, every, &t));
	ASSERT_EQ(NITEMS, t.n);
	/* items of one epoch [k*every, (k+1)*every) leave together, and
	 * the epochs in order */
	for (unsigned int i = 0; i < NITEMS; i++)
		ASSERT_EQ(i / every, t.out[i] / every);
	/* within an epoch they are mixed */
	{
		unsigned int mixed = 0;

		for (unsigned int i = 0; i < NITEMS; i++)
			mixed += t.out[i] != i;
		EXPECT_LT(0u, mixed);
	}
}

TEST(path_same_seed_same_order)
{
	static struct trace a, b, c;

	ASSERT_EQ(0, run_path(8, 5, 0, &a));
	ASSERT_EQ(0, run_path(8, 5, 0, &b));
	ASSERT_EQ(0, run_path(8, 6, 0, &c));
	EXPECT_EQ(0, memcmp(a.out, b.out, sizeof(a.out)));
	EXPECT_NE(0, memcmp(a.out, c.out, sizeof(a.out)));
}

TEST(path_bad_arguments_change_nothing)
{
	struct oms_fab_path p, before;
	uint64_t mem[4];

	memset(&p, 0x5a, sizeof(p));
	before = p;
	EXPECT_EQ(-EINVAL, oms_fab_path_init(&p, OMS_FAB_MAX_WINDOW + 1, 1,
					     NULL, 0));
	EXPECT_EQ(0, memcmp(&p, &before, sizeof(p)));
	/* caller memory too short for the window */
	EXPECT_EQ(-EINVAL, oms_fab_path_init(&p, 8, 1, mem, sizeof(mem)));
	EXPECT_EQ(0, memcmp(&p, &before, sizeof(p)));
	EXPECT_EQ(-EINVAL, oms_fab_path_init(NULL, 8, 1, NULL, 0));
	/* caller memory that fits: no allocation, destroy frees nothing */
	ASSERT_GE(sizeof(mem), oms_fab_path_mem(1));
	ASSERT_EQ(0, oms_fab_path_init(&p, 1, 1, mem, sizeof(mem)));
	EXPECT_EQ(0, p.owns);
	oms_fab_path_destroy(&p);
}

TEST_HARNESS_MAIN
