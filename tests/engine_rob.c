// SPDX-License-Identifier: MIT
/*
 * oms_rob unit tests: in-order release, wraparound, refusals (stale,
 * duplicate, out-of-window, bad thread) with no state change, resync.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/rob.h"

/* Full copy of the observable state, to compare before/after a refusal. */
struct rob_snap {
	struct oms_rob_counters cnt;
	struct oms_rob_stream streams[4];
	uint64_t cookies[4 * 16];
};

static void snap(const struct oms_rob *r, struct rob_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->cnt = r->cnt;
	memcpy(s->streams, r->streams, r->nthreads * sizeof(*r->streams));
	memcpy(s->cookies, r->cookies,
	       (size_t)r->nthreads * r->window * sizeof(uint64_t));
}

TEST(rob_in_order_release)
{
	struct oms_rob rob;
	uint64_t c;
	oms_rob_seq_t seq;

	ASSERT_EQ(0, oms_rob_init(&rob, 2, 16, NULL, 0));
	ASSERT_EQ(0, oms_rob_insert(&rob, 0, 2, 102));
	ASSERT_EQ(0, oms_rob_insert(&rob, 0, 1, 101));
	ASSERT_EQ(0, oms_rob_pop(&rob, 0, &seq, &c));	/* 0 missing */
	ASSERT_EQ(0, oms_rob_ready(&rob, 0));
	ASSERT_EQ(2, oms_rob_pending(&rob, 0));
	ASSERT_EQ(1, oms_rob_insert(&rob, 0, 0, 100));
	ASSERT_EQ(1, oms_rob_ready(&rob, 0));
	for (unsigned i = 0; i < 3; i++) {
		ASSERT_EQ(1, oms_rob_pop(&rob, 0, &seq, &c));
		ASSERT_EQ(i, (unsigned)seq);
		ASSERT_EQ(100u + i, c);
	}
	ASSERT_EQ(0, oms_rob_pop(&rob, 0, &seq, &c));
	ASSERT_EQ(3, oms_rob_next_seq(&rob, 0));
	ASSERT_EQ(3u, rob.cnt.inserted);
	ASSERT_EQ(3u, rob.cnt.released);
	oms_rob_destroy(&rob);
}

TEST(rob_bad_arguments_change_nothing)
{
	uint64_t mem[64 * 8];
	struct oms_rob rob;
	struct rob_snap a, b;
	uint64_t c;

	ASSERT_EQ(-EINVAL, oms_rob_init(&rob, 0, 16, NULL, 0));
	ASSERT_EQ(-EINVAL, oms_rob_init(&rob, 4, 12, NULL, 0));	/* not 2^n */
	ASSERT_EQ(-EINVAL, oms_rob_init(&rob, 4, 512, NULL, 0));	/* > 256 */
	ASSERT_EQ(-EINVAL, oms_rob_init(NULL, 4, 16, NULL, 0));
	ASSERT_EQ(-EINVAL, oms_rob_init(&rob, 4, 16, mem, 8));	/* too small */
	ASSERT_EQ(0u, oms_rob_memsize(4, 3));
	ASSERT_TRUE(oms_rob_memsize(4, 16) <= sizeof(mem));
	ASSERT_EQ(0, oms_rob_init(&rob, 4, 16, mem, sizeof(mem)));

	ASSERT_EQ(0, oms_rob_insert(&rob, 1, 3, 33));
	ASSERT_EQ(1, oms_rob_insert(&rob, 1, 0, 30));
	ASSERT_EQ(1, oms_rob_pop(&rob, 1, NULL, &c));	/* next = 1 */

	/* bad thread / NULL: -EINVAL, nothing changes, not even counters */
	snap(&rob, &a);
	ASSERT_EQ(-EINVAL, oms_rob_insert(&rob, 4, 1, 1));
	ASSERT_EQ(-EINVAL, oms_rob_insert(&rob, 9999, 1, 1));
	ASSERT_EQ(-EINVAL, oms_rob_insert(NULL, 0, 1, 1));
	ASSERT_EQ(-EINVAL, oms_rob_pop(&rob, 4, NULL, NULL));
	ASSERT_EQ(-EINVAL, oms_rob_release(&rob, 0, NULL, 3));
	ASSERT_EQ(-EINVAL, oms_rob_ready(&rob, 4));
	ASSERT_EQ(-EINVAL, oms_rob_pending(NULL, 0));
	ASSERT_EQ(-EINVAL, oms_rob_resync(&rob, 4, 0, NULL, 0));
	snap(&rob, &b);
	ASSERT_EQ(0, memcmp(&a, &b, sizeof(a)));

	/* stale: seq 0 was released; only the stale counter moves */
	ASSERT_EQ(-ESTALE, oms_rob_insert(&rob, 1, 0, 999));
	ASSERT_EQ(-ESTALE, oms_rob_insert(&rob, 1, (oms_rob_seq_t)-5, 999));
	snap(&rob, &b);
	ASSERT_EQ(2u, b.cnt.stale);
	b.cnt.stale = 0;
	ASSERT_EQ(0, memcmp(&a, &b, sizeof(a)));

	/* duplicate: seq 3 is buffered; its cookie stays 33 */
	ASSERT_EQ(-EEXIST, oms_rob_insert(&rob, 1, 3, 999));
	snap(&rob, &b);
	ASSERT_EQ(1u, b.cnt.duplicate);
	b.cnt.duplicate = 0;
	b.cnt.stale = a.cnt.stale;
	ASSERT_EQ(0, memcmp(&a.streams, &b.streams, sizeof(a.streams)));
	ASSERT_EQ(0, memcmp(&a.cookies, &b.cookies, sizeof(a.cookies)));

	/* out of window: next = 1, window 16 -> 17 is refused, 16 is fine */
	ASSERT_EQ(-ERANGE, oms_rob_insert(&rob, 1, 17, 999));
	ASSERT_EQ(-ERANGE, oms_rob_insert(&rob, 1, 0x7000, 999));
	snap(&rob, &b);
	ASSERT_EQ(2u, b.cnt.out_of_window);
	ASSERT_EQ(0, memcmp(&a.streams, &b.streams, sizeof(a.streams)));
	ASSERT_EQ(0, memcmp(&a.cookies, &b.cookies, sizeof(a.cookies)));
	ASSERT_EQ(a.cnt.inserted, b.cnt.inserted);
	ASSERT_EQ(0, oms_rob_insert(&rob, 1, 16, 116));
	oms_rob_destroy(&rob);
}

TEST(rob_wraparound)
{
	struct oms_rob rob;
	struct t_rng rng;
	uint64_t seed = t_seed(0x0b0b0001);
	uint32_t perm[64];
	uint64_t c;
	oms_rob_seq_t seq, want;
	unsigned long rounds = t_trials(4000), r;

	t_rng_init(&rng, seed);
	ASSERT_EQ(0, oms_rob_init(&rob, 1, 64, NULL, 0));
	/* Start just below the wrap so the first batch crosses it. */
	ASSERT_EQ(0, oms_rob_resync(&rob, 0, 0xfff0, NULL, 0));
	want = 0xfff0;
	for (r = 0; r < rounds; r++) {
		oms_rob_seq_t base = want;

		for (unsigned i = 0; i < 64; i++)
			perm[i] = i;
		t_shuffle_u32(&rng, perm, 64);
		for (unsigned i = 0; i < 64; i++) {
			int rc = oms_rob_insert(&rob, 0,
						(oms_rob_seq_t)(base + perm[i]),
						(uint64_t)(oms_rob_seq_t)(base + perm[i]));
			ASSERT_TRUE(rc == 0 || rc == 1) TH_LOG("seed %#llx",
						(unsigned long long)seed);
			/* pop greedily, interleaved with arrivals */
			while (oms_rob_pop(&rob, 0, &seq, &c) == 1) {
				ASSERT_EQ(want, seq) TH_LOG("seed %#llx",
						(unsigned long long)seed);
				ASSERT_EQ(want, c);
				want++;
			}
		}
		ASSERT_EQ((oms_rob_seq_t)(base + 64), want);
	}
	ASSERT_EQ(rounds * 64, rob.cnt.released);
	/* 4000 * 64 = 256000 sequence numbers: the 16-bit space wrapped. */
	TH_LOG("%lu rounds, %llu entries, seed %#llx", rounds,
	       (unsigned long long)rob.cnt.released, (unsigned long long)seed);
	ASSERT_EQ(0u, rob.cnt.stale + rob.cnt.duplicate + rob.cnt.out_of_window);
	oms_rob_destroy(&rob);
}

TEST(rob_stale_and_window_across_wrap)
{
	struct oms_rob rob;

	ASSERT_EQ(0, oms_rob_init(&rob, 1, 8, NULL, 0));
	ASSERT_EQ(0, oms_rob_resync(&rob, 0, 0xfffe, NULL, 0));
	ASSERT_EQ(0, oms_rob_insert(&rob, 0, 5, 5));		/* d = 7 */
	ASSERT_EQ(-ERANGE, oms_rob_insert(&rob, 0, 6, 6));	/* d = 8 */
	ASSERT_EQ(-ESTALE, oms_rob_insert(&rob, 0, 0xfffd, 0));
	ASSERT_EQ(1, oms_rob_insert(&rob, 0, 0xfffe, 0));
	ASSERT_EQ(1, oms_rob_pop(&rob, 0, NULL, NULL));
	ASSERT_EQ(-ESTALE, oms_rob_insert(&rob, 0, 0xfffe, 0));
	ASSERT_EQ(0, oms_rob_insert(&rob, 0, 6, 6));		/* now d = 7 */
	ASSERT_EQ(2, oms_rob_pending(&rob, 0));
	oms_rob_destroy(&rob);
}

TEST(rob_resync_drops_in_order)
{
	struct oms_rob rob;
	uint64_t out[4];
	struct oms_rob_stream before;

	ASSERT_EQ(0, oms_rob_init(&rob, 2, 16, NULL, 0));
	ASSERT_EQ(0, oms_rob_insert(&rob, 0, 9, 9));
	ASSERT_EQ(0, oms_rob_insert(&rob, 0, 4, 4));
	ASSERT_EQ(0, oms_rob_insert(&rob, 0, 7, 7));
	ASSERT_EQ(1, oms_rob_insert(&rob, 1, 0, 1000));
	before = rob.streams[0];
	ASSERT_EQ(-ENOSPC, oms_rob_resync(&rob, 0, 100, out, 2));
	ASSERT_EQ(0, memcmp(&before, &rob.streams[0], sizeof(before)));
	ASSERT_EQ(0u, rob.cnt.resyncs);
	ASSERT_EQ(3, oms_rob_resync(&rob, 0, 100, out, 4));
	ASSERT_EQ(4u, out[0]);
	ASSERT_EQ(7u, out[1]);
	ASSERT_EQ(9u, out[2]);
	ASSERT_EQ(0, oms_rob_pending(&rob, 0));
	ASSERT_EQ(100, oms_rob_next_seq(&rob, 0));
	ASSERT_EQ(-ESTALE, oms_rob_insert(&rob, 0, 99, 0));
	ASSERT_EQ(1, oms_rob_insert(&rob, 0, 100, 0));
	/* the other stream is untouched */
	ASSERT_EQ(1, oms_rob_ready(&rob, 1));
	ASSERT_EQ(3u, rob.cnt.dropped);
	oms_rob_destroy(&rob);
}

TEST_HARNESS_MAIN
