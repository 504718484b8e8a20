// SPDX-License-Identifier: MIT
/*
 * oms_rlsq unit tests: per-mode ordering of acquire/read/write/release,
 * thread independence, squash/retry, refusals with no state change, and a
 * randomised conservation run.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/rlsq.h"

#define X 0x1000u
#define Y 0x2000u
#define Z 0x3000u

/* Poll everything; return how many actions, stored in @a. */
static int poll_all(struct oms_rlsq *q, struct oms_rlsq_action *a,
		    unsigned max)
{
	return oms_rlsq_poll(q, a, max);
}

static int has(const struct oms_rlsq_action *a, int n, unsigned type,
	       uint32_t id)
{
	for (int i = 0; i < n; i++)
		if (a[i].type == type && a[i].id == id)
			return 1;
	return 0;
}

TEST(rlsq_acquire_blocks_reads_nic_rc)
{
	static const unsigned modes[] = { OMS_RLSQ_NIC, OMS_RLSQ_RC };

	for (unsigned m = 0; m < 2; m++) {
		struct oms_rlsq q;
		struct oms_rlsq_action a[16];
		uint32_t ax, ry, rz;
		int n;

		ASSERT_EQ(0, oms_rlsq_init(&q, 16, 2, modes[m], NULL, 0));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_ACQUIRE, X, 1, &ax));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Y, 2, &ry));
		/* another thread is not held by thread 0's acquire */
		ASSERT_EQ(0, oms_rlsq_submit(&q, 1, OMS_RLSQ_READ, Z, 3, &rz));
		n = poll_all(&q, a, 16);
		ASSERT_EQ(2, n);
		ASSERT_TRUE(has(a, n, OMS_RLSQ_EXECUTE, ax));
		ASSERT_TRUE(has(a, n, OMS_RLSQ_EXECUTE, rz));
		ASSERT_EQ(0, oms_rlsq_complete(&q, ax, 11));
		n = poll_all(&q, a, 16);
		ASSERT_EQ(2, n);
		ASSERT_EQ(OMS_RLSQ_DELIVER, a[0].type);
		ASSERT_EQ(ax, a[0].id);
		ASSERT_EQ(11u, a[0].value);
		ASSERT_EQ(OMS_RLSQ_EXECUTE, a[1].type);
		ASSERT_EQ(ry, a[1].id);
		ASSERT_EQ(0, oms_rlsq_complete(&q, ry, 22));
		ASSERT_EQ(0, oms_rlsq_complete(&q, rz, 33));
		n = poll_all(&q, a, 16);
		ASSERT_EQ(2, n);
		ASSERT_EQ(0, oms_rlsq_live(&q));
		ASSERT_EQ(0u, q.cnt.squashed);
		oms_rlsq_destroy(&q);
	}
}

TEST(rlsq_rc_opt_speculates_and_delivers_in_order)
{
	struct oms_rlsq q;
	struct oms_rlsq_action a[16];
	uint32_t ax, ry, rz;
	int n;

	ASSERT_EQ(0, oms_rlsq_init(&q, 16, 1, OMS_RLSQ_RC_OPT, NULL, 0));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_ACQUIRE, X, 1, &ax));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Y, 2, &ry));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Z, 3, &rz));
	ASSERT_EQ(0, oms_rlsq_speculative(&q, ax));
	ASSERT_EQ(1, oms_rlsq_speculative(&q, ry));
	n = poll_all(&q, a, 16);
	ASSERT_EQ(3, n);	/* all three execute at once */
	ASSERT_EQ(0, oms_rlsq_complete(&q, ry, 22));
	ASSERT_EQ(0, poll_all(&q, a, 16));	/* Y buffered, not delivered */
	/* Z is executing: a write to Z squashes it (once), not Y or X. */
	ASSERT_EQ(1, oms_rlsq_invalidate(&q, Z));
	ASSERT_EQ(0, oms_rlsq_invalidate(&q, Z));
	ASSERT_EQ(0, oms_rlsq_invalidate(&q, X));	/* not speculative */
	ASSERT_EQ(0, oms_rlsq_complete(&q, rz, 0xdead));	/* discarded */
	n = poll_all(&q, a, 16);
	ASSERT_EQ(1, n);
	ASSERT_EQ(OMS_RLSQ_RETRY, a[0].type);
	ASSERT_EQ(rz, a[0].id);
	/* Y done and speculative: a write to Y squashes the buffered value. */
	ASSERT_EQ(1, oms_rlsq_invalidate(&q, Y));
	n = poll_all(&q, a, 16);
	ASSERT_EQ(1, n);
	ASSERT_EQ(OMS_RLSQ_RETRY, a[0].type);
	ASSERT_EQ(ry, a[0].id);
	ASSERT_EQ(0, oms_rlsq_complete(&q, ry, 23));
	ASSERT_EQ(0, oms_rlsq_complete(&q, ax, 11));
	n = poll_all(&q, a, 16);
	ASSERT_EQ(2, n);
	ASSERT_EQ(ax, a[0].id);
	ASSERT_EQ(ry, a[1].id);
	ASSERT_EQ(23u, a[1].value);
	/* Z is no longer speculative: a write to it squashes nothing. */
	ASSERT_EQ(0, oms_rlsq_speculative(&q, rz));
	ASSERT_EQ(0, oms_rlsq_invalidate(&q, Z));
	ASSERT_EQ(0, oms_rlsq_complete(&q, rz, 33));
	n = poll_all(&q, a, 16);
	ASSERT_EQ(1, n);
	ASSERT_EQ(33u, a[0].value);
	ASSERT_EQ(2u, q.cnt.squashed);
	ASSERT_EQ(2u, q.cnt.retried);
	ASSERT_EQ(5u, q.cnt.executed);
	ASSERT_EQ(3u, q.cnt.delivered);
	ASSERT_EQ(0u, (uint64_t)q.nspec);
	oms_rlsq_destroy(&q);
}

/*
 * A read squashed while in flight stays "speculative" after the acquire
 * that made it speculative resolves: the value it completes with is
 * thrown away and read again, so a device must not count it as read for
 * good (emu fences wait for gets on that; L34 with RC-opt once failed).
 */
TEST(rlsq_squashed_in_flight_is_not_final_after_resolve)
{
	struct oms_rlsq q;
	struct oms_rlsq_action a[16];
	uint32_t ax, ry;
	int n;

	ASSERT_EQ(0, oms_rlsq_init(&q, 16, 1, OMS_RLSQ_RC_OPT, NULL, 0));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_ACQUIRE, X, 1, &ax));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Y, 2, &ry));
	ASSERT_EQ(2, poll_all(&q, a, 16));
	ASSERT_EQ(1, oms_rlsq_speculative(&q, ry));
	ASSERT_EQ(1, oms_rlsq_invalidate(&q, Y));	/* Y in flight */
	ASSERT_EQ(0, oms_rlsq_complete(&q, ax, 11));	/* acquire resolves */
	ASSERT_EQ(1, oms_rlsq_speculative(&q, ry));	/* still not final */
	ASSERT_EQ(0, oms_rlsq_complete(&q, ry, 0xdead));	/* discarded */
	n = poll_all(&q, a, 16);
	ASSERT_TRUE(has(a, n, OMS_RLSQ_RETRY, ry));
	ASSERT_EQ(0, oms_rlsq_speculative(&q, ry));	/* the retry is final */
	ASSERT_EQ(0, oms_rlsq_complete(&q, ry, 22));
	n = poll_all(&q, a, 16);
	ASSERT_TRUE(has(a, n, OMS_RLSQ_DELIVER, ry));
	ASSERT_EQ(0, oms_rlsq_live(&q));
	oms_rlsq_destroy(&q);
}

TEST(rlsq_writes_in_order_release_waits)
{
	for (unsigned mode = 0; mode <= OMS_RLSQ_RC_OPT; mode++) {
		struct oms_rlsq q;
		struct oms_rlsq_action a[16];
		uint32_t w1, w2, rd, rel, r2;
		int n;

		ASSERT_EQ(0, oms_rlsq_init(&q, 16, 1, mode, NULL, 0));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_WRITE, X, 1, &w1));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_WRITE, Y, 2, &w2));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Z, 3, &rd));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_RELEASE, X, 4,
					     &rel));
		n = poll_all(&q, a, 16);
		ASSERT_EQ(1, n);	/* w2 waits for w1; read for writes */
		ASSERT_EQ(w1, a[0].id);
		ASSERT_EQ(0, oms_rlsq_complete(&q, w1, 0));
		n = poll_all(&q, a, 16);
		ASSERT_EQ(2, n);
		ASSERT_TRUE(has(a, n, OMS_RLSQ_DELIVER, w1));
		ASSERT_TRUE(has(a, n, OMS_RLSQ_EXECUTE, w2));
		ASSERT_EQ(0, oms_rlsq_complete(&q, w2, 0));
		n = poll_all(&q, a, 16);
		ASSERT_TRUE(has(a, n, OMS_RLSQ_EXECUTE, rd));
		ASSERT_FALSE(has(a, n, OMS_RLSQ_EXECUTE, rel));
		/* a read submitted after the release is not held by it */
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Y, 5, &r2));
		ASSERT_EQ(0, oms_rlsq_complete(&q, rd, 7));
		n = poll_all(&q, a, 16);
		ASSERT_TRUE(has(a, n, OMS_RLSQ_EXECUTE, rel));
		ASSERT_EQ(0, oms_rlsq_complete(&q, rel, 0));
		n = poll_all(&q, a, 16);
		ASSERT_TRUE(has(a, n, OMS_RLSQ_EXECUTE, r2));
		ASSERT_EQ(0, oms_rlsq_complete(&q, r2, 0));
		poll_all(&q, a, 16);
		ASSERT_EQ(0, oms_rlsq_live(&q));
		oms_rlsq_destroy(&q);
	}
}

TEST(rlsq_write_waits_for_earlier_read_of_same_line)
{
	struct oms_rlsq q;
	struct oms_rlsq_action a[16];
	uint32_t rd, w;
	int n;

	ASSERT_EQ(0, oms_rlsq_init(&q, 8, 1, OMS_RLSQ_RC, NULL, 0));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, X, 1, &rd));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_WRITE, X, 2, &w));
	n = poll_all(&q, a, 16);
	ASSERT_EQ(1, n);
	ASSERT_EQ(rd, a[0].id);
	ASSERT_EQ(0, oms_rlsq_complete(&q, rd, 5));
	n = poll_all(&q, a, 16);
	ASSERT_TRUE(has(a, n, OMS_RLSQ_EXECUTE, w));
	oms_rlsq_destroy(&q);
}

struct rlsq_snap {
	struct oms_rlsq q;
	unsigned char mem[16384];
	size_t len;
};

static void qsnap(const struct oms_rlsq *q, struct rlsq_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->q = *q;
	s->len = oms_rlsq_memsize(q->cap, q->nthreads);
	memcpy(s->mem, q->e, s->len);
}

static int qsame(const struct rlsq_snap *a, const struct rlsq_snap *b)
{
	return a->len == b->len && !memcmp(&a->q, &b->q, sizeof(a->q)) &&
	       !memcmp(a->mem, b->mem, a->len);
}

TEST(rlsq_bad_arguments_change_nothing)
{
	static struct rlsq_snap s0, s1;
	struct oms_rlsq q;
	struct oms_rlsq_action a[8];
	uint32_t ids[4], id, stale;

	ASSERT_EQ(-EINVAL, oms_rlsq_init(&q, 0, 1, OMS_RLSQ_RC, NULL, 0));
	ASSERT_EQ(-EINVAL, oms_rlsq_init(&q, 5000, 1, OMS_RLSQ_RC, NULL, 0));
	ASSERT_EQ(-EINVAL, oms_rlsq_init(&q, 4, 0, OMS_RLSQ_RC, NULL, 0));
	ASSERT_EQ(-EINVAL, oms_rlsq_init(&q, 4, 1, 3, NULL, 0));
	ASSERT_EQ(-EINVAL, oms_rlsq_init(NULL, 4, 1, OMS_RLSQ_RC, NULL, 0));
	ASSERT_EQ(0, oms_rlsq_init(&q, 4, 2, OMS_RLSQ_RC_OPT, NULL, 0));

	/* one delivered entry, so a stale id exists */
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Z, 0, &stale));
	ASSERT_EQ(1, oms_rlsq_poll(&q, a, 8));
	ASSERT_EQ(0, oms_rlsq_complete(&q, stale, 1));
	ASSERT_EQ(1, oms_rlsq_poll(&q, a, 8));

	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_ACQUIRE, X, 1, &ids[0]));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Y, 2, &ids[1]));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 1, OMS_RLSQ_WRITE, Y, 3, &ids[2]));
	ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_RELEASE, Y, 4, &ids[3]));
	ASSERT_EQ(3, oms_rlsq_poll(&q, a, 2 + 1));
	ASSERT_EQ(0, oms_rlsq_complete(&q, ids[1], 5));	/* Y buffered */

	qsnap(&q, &s0);
	/* full: 4 live entries */
	ASSERT_EQ(-EAGAIN, oms_rlsq_submit(&q, 1, OMS_RLSQ_READ, Z, 9, &id));
	/* bad thread, kind, NULL */
	ASSERT_EQ(-EINVAL, oms_rlsq_submit(&q, 2, OMS_RLSQ_READ, Z, 9, &id));
	ASSERT_EQ(-EINVAL, oms_rlsq_submit(&q, 0, 4, Z, 9, &id));
	ASSERT_EQ(-EINVAL, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, Z, 9, NULL));
	ASSERT_EQ(-EINVAL, oms_rlsq_submit(NULL, 0, OMS_RLSQ_READ, Z, 9, &id));
	ASSERT_EQ(-EINVAL, oms_rlsq_poll(&q, NULL, 4));
	ASSERT_EQ(-EINVAL, oms_rlsq_invalidate(NULL, Y));
	/* unknown, stale-generation and out-of-range ids */
	ASSERT_EQ(-ENOENT, oms_rlsq_complete(&q, stale, 1));
	ASSERT_EQ(-ENOENT, oms_rlsq_complete(&q, 4, 1));
	ASSERT_EQ(-ENOENT, oms_rlsq_complete(&q, 0xffffffffu, 1));
	ASSERT_EQ(-ENOENT, oms_rlsq_speculative(&q, stale));
	/* live but not executing: done (Y) and queued (release) */
	ASSERT_EQ(-EPROTO, oms_rlsq_complete(&q, ids[1], 6));
	ASSERT_EQ(-EPROTO, oms_rlsq_complete(&q, ids[3], 6));
	qsnap(&q, &s1);
	ASSERT_TRUE(qsame(&s0, &s1));

	/* The queue still works after all that. */
	ASSERT_EQ(0, oms_rlsq_complete(&q, ids[0], 1));
	ASSERT_EQ(0, oms_rlsq_complete(&q, ids[2], 0));
	ASSERT_EQ(-EPROTO, oms_rlsq_complete(&q, ids[2], 0));
	while (oms_rlsq_live(&q) > 0) {
		int n = oms_rlsq_poll(&q, a, 8);

		ASSERT_GT(n, 0);
		for (int i = 0; i < n; i++)
			if (a[i].type != OMS_RLSQ_DELIVER)
				ASSERT_EQ(0, oms_rlsq_complete(&q, a[i].id, 0));
	}
	ASSERT_EQ(q.cnt.submitted, q.cnt.delivered);
	oms_rlsq_destroy(&q);
}

/*
 * Random conservation run: random ops in all modes, a driver that completes
 * in random order and random invalidations.  Every entry is delivered once,
 * executed == submitted + retried, and no op is delivered before an earlier
 * acquire of its thread or a release before an earlier op.
 */
TEST(rlsq_random_conservation)
{
	uint64_t seed = t_seed(0x5151);
	unsigned long trials = t_trials(300), t;
	struct t_rng rng;

	t_rng_init(&rng, seed);
	for (t = 0; t < trials; t++) {
		unsigned mode = (unsigned)(t % 3);
		struct oms_rlsq q;
		struct oms_rlsq_action act[4];
		uint32_t fly[64];
		unsigned nfly = 0, submitted = 0, total = 200;
		/* per thread: program index of each op, delivered flags */
		uint8_t kind[4][64], done[4][64];
		unsigned nsub[4] = { 0 };

		memset(done, 0, sizeof(done));
		ASSERT_EQ(0, oms_rlsq_init(&q, 32, 4, mode, NULL, 0));
		while (submitted < total || oms_rlsq_live(&q) > 0) {
			unsigned ev = t_rng_below(&rng, 4);

			if (ev == 0 && submitted < total) {
				unsigned th = t_rng_below(&rng, 4);
				unsigned k = t_rng_below(&rng, 4);
				uint32_t id;
				int rc;

				if (nsub[th] >= 50)
					continue;
				rc = oms_rlsq_submit(&q, th, k,
						     t_rng_below(&rng, 6),
						     th << 8 | nsub[th], &id);
				if (rc == -EAGAIN)
					continue;
				ASSERT_EQ(0, rc);
				kind[th][nsub[th]++] = (uint8_t)k;
				submitted++;
			} else if (ev == 1) {
				int n = oms_rlsq_poll(&q, act, 1);

				if (n <= 0)
					continue;
				if (act[0].type != OMS_RLSQ_DELIVER) {
					fly[nfly++] = act[0].id;
					continue;
				}
				unsigned th = (unsigned)(act[0].cookie >> 8);
				unsigned pi = (unsigned)(act[0].cookie & 255);

				ASSERT_EQ(0, done[th][pi]);
				for (unsigned j = 0; j < pi; j++) {
					if (kind[th][j] == OMS_RLSQ_ACQUIRE ||
					    kind[th][pi] == OMS_RLSQ_RELEASE)
						ASSERT_EQ(1, done[th][j])
						TH_LOG("trial %lu mode %u seed %#llx",
						       t, mode,
						       (unsigned long long)seed);
				}
				done[th][pi] = 1;
			} else if (ev == 2 && nfly) {
				unsigned i = t_rng_below(&rng, nfly);

				ASSERT_EQ(0, oms_rlsq_complete(&q, fly[i], 1));
				fly[i] = fly[--nfly];
			} else if (ev == 3) {
				ASSERT_GE(oms_rlsq_invalidate(&q,
					  t_rng_below(&rng, 6)), 0);
			}
			if (submitted >= total && oms_rlsq_live(&q) > 0 &&
			    !nfly && q.xq_head == 0xffff && q.dq_head == 0xffff)
				ASSERT_TRUE(0) TH_LOG("stuck: trial %lu mode %u",
						      t, mode);
		}
		ASSERT_EQ(q.cnt.submitted, q.cnt.delivered);
		ASSERT_EQ(q.cnt.executed, q.cnt.submitted + q.cnt.retried);
		ASSERT_EQ(q.cnt.squashed, q.cnt.retried);
		ASSERT_EQ(0u, (uint64_t)q.nspec);
		if (mode != OMS_RLSQ_RC_OPT)
			ASSERT_EQ(0u, q.cnt.squashed);
		oms_rlsq_destroy(&q);
	}
	TH_LOG("%lu trials x 200 ops, seed %#llx", trials,
	       (unsigned long long)seed);
}

/*
 * oms_rlsq_would_wait() tells what a submission would do: in every mode,
 * over random programs, an operation it says would wait is not handed
 * out for execution on submission, and one it says would not is.
 */
TEST(rlsq_would_wait_matches_submit)
{
	uint64_t seed = t_seed(0x7a17);
	unsigned long trials = t_trials(300), t;
	struct t_rng rng;

	t_rng_init(&rng, seed);
	ASSERT_EQ(-EINVAL, oms_rlsq_would_wait(NULL, 0, OMS_RLSQ_READ, X));
	for (t = 0; t < trials; t++) {
		unsigned mode = (unsigned)(t % 3);
		struct oms_rlsq q;
		struct oms_rlsq_action act[64];
		uint32_t fly[64];
		unsigned nfly = 0;

		ASSERT_EQ(0, oms_rlsq_init(&q, 32, 4, mode, NULL, 0));
		ASSERT_EQ(-EINVAL, oms_rlsq_would_wait(&q, 4, OMS_RLSQ_READ, X));
		ASSERT_EQ(-EINVAL, oms_rlsq_would_wait(&q, 0, 4, X));
		for (unsigned step = 0; step < 200; step++) {
			unsigned th = t_rng_below(&rng, 4);
			unsigned k = t_rng_below(&rng, 4);
			uint64_t line = t_rng_below(&rng, 6);
			int n, w, ready = 0;
			uint32_t id;

			/* what is ready already, out of the way */
			while ((n = oms_rlsq_poll(&q, act, 64)) > 0)
				for (int i = 0; i < n; i++)
					if (act[i].type != OMS_RLSQ_DELIVER)
						fly[nfly++] = act[i].id;
			if (nfly && t_rng_below(&rng, 2)) {
				unsigned i = t_rng_below(&rng, nfly);

				ASSERT_EQ(0, oms_rlsq_complete(&q, fly[i], 1));
				fly[i] = fly[--nfly];
				continue;
			}
			w = oms_rlsq_would_wait(&q, th, k, line);
			ASSERT_GE(w, 0);
			if (oms_rlsq_submit(&q, th, k, line, 0, &id) == -EAGAIN)
				continue;
			n = oms_rlsq_poll(&q, act, 64);
			for (int i = 0; i < n; i++) {
				if (act[i].type == OMS_RLSQ_DELIVER)
					continue;
				ready |= act[i].id == id;
				fly[nfly++] = act[i].id;
			}
			ASSERT_EQ(!w, ready)
			TH_LOG("trial %lu mode %u step %u seed %#llx", t, mode,
			       step, (unsigned long long)seed);
		}
		oms_rlsq_destroy(&q);
	}
	TH_LOG("%lu trials x 200 steps, seed %#llx", trials,
	       (unsigned long long)seed);
}

TEST_HARNESS_MAIN
