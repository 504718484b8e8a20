// SPDX-License-Identifier: MIT
/*
 * Litmus L37 on the emulated device with chaos on: a failed store breaks
 * the chain (docs/ordering.md, "Failures").  Public API only: the
 * observers are the target memory, oms_quiet()'s answer and the context's
 * statistics.
 *   WO(A@D1) with a forged key (a copy of the descriptor, key changed);
 *   WO(B@D3), which depends on nothing that fails; SO(F@Dn), n = 1 and 2.
 *   Forbidden: F visible.  Required: F completes with -ECANCELED (the
 *   context's cancelled count grows by one per F), B lands, quiet returns
 *   the wrong-key error (-EACCES; -EKEYREJECTED once the device's drop
 *   counter passed its threshold), oms_ctx_resume() returns 0 and a
 *   strong store issued after it is visible.
 * Modes (FIXTURE_VARIANT): acknowledged channels and OMS_CTX_F_DEST_SEQ,
 * each with F at D1 (the failing destination) and at D2.  The exact
 * sequence (one instance on a fresh device: -EACCES first) is one test;
 * the count is another: t_trials(1 000 000) instances split over the four
 * modes (100 000 under ASan), batched over NINI contexts with one quiet
 * and one resume per context and batch.  Control: the same program with
 * OMS_CTX_F_NO_ORDERING, where F is not held and must land.
 * A resume also forgets a failed unordered put: what follows at its
 * destination, a release and a fenced write included, is performed.
 * Bad input: oms_ctx_resume(NULL) is -EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "lab.h"
#include "oms.h"
#include "oms_emu.h"

#ifdef __SANITIZE_ADDRESS__
#define DEFAULT_TRIALS	100000ul
#else
#define DEFAULT_TRIALS	1000000ul
#endif
#define NMODES		4ul
#define CONTROL_MAX	100000ul
#define BATCH		512u	/* program instances per quiet */
#define NINI		8	/* initiator contexts */
#define NTGT		4	/* nodes 1..3: D1, D2, D3 */

/* Words of an instance at each destination. */
enum { A = 0, B = 0, F = 1, G = 2, SLOTS = 4 };

struct fl {
	struct t_lab lab;	/* the device reorders from the seed */
	struct oms_rmr forged;	/* D1's region under a wrong key */
	uint64_t one;
};

static int fl_open(struct fl *l, uint32_t flags, uint64_t seed)
{
	const struct t_lab_cfg cfg = {
		.nini = NINI, .ndest = NTGT - 1,
		.words = (size_t)BATCH * SLOTS, .flags = flags, .seed = seed,
	};

	memset(l, 0, sizeof(*l));
	l->one = 1;
	if (t_lab_open(&l->lab, &cfg))
		return -1;
	l->forged = l->lab.r[1];
	l->forged.key ^= 0x5a5a5a5au;
	return 0;
}

static void fl_close(struct fl *l)
{
	t_lab_close(&l->lab);
}

static uint64_t off_of(uint32_t i, uint32_t w)
{
	return ((uint64_t)i * SLOTS + w) * 8;
}

static uint64_t word(const struct fl *l, int d, uint32_t i, uint32_t w)
{
	return l->lab.mem[d][(size_t)i * SLOTS + w];
}

static uint64_t cancelled(struct oms_ctx *c)
{
	struct oms_stats s = { .size = sizeof(s) };

	return oms_ctx_stats(c, &s) ? UINT64_MAX : s.cancelled;
}

/* WO(A@D1, forged key); WO(B@D3); SO(F@Dn). */
static int l37(struct fl *l, struct oms_ctx *c, uint32_t i, int fd)
{
	return oms_put(c, &l->forged, off_of(i, A), &l->one, 8,
		       OMS_STORE_WEAK) |
	       oms_put(c, &l->lab.r[3], off_of(i, B), &l->one, 8,
		       OMS_STORE_WEAK) |
	       oms_put(c, &l->lab.r[fd], off_of(i, F), &l->one, 8,
		       OMS_STORE_STRONG);
}

static int wrong_key(int err)
{
	return err == -EACCES || err == -EKEYREJECTED;
}

struct res {
	unsigned long trials, f_visible, b_lost, not_cancelled, errors;
	unsigned long bad_quiet, bad_resume, after_resume_lost;
};

static struct res l37_run(struct fl *l, uint32_t flags, int fd, uint64_t seed,
			  unsigned long trials, int control)
{
	struct res r = { 0 };

	if (fl_open(l, flags, seed)) {
		r.errors++;
		goto out;
	}
	while (r.trials < trials && !(control && r.f_visible)) {
		uint64_t c0[NINI];

		for (int k = 0; k < NINI; k++)
			c0[k] = cancelled(l->lab.ini[k]);
		for (uint32_t i = 0; i < BATCH; i++)
			r.errors += l37(l, l->lab.ini[i % NINI], i, fd) != 0;
		for (int k = 0; k < NINI; k++) {
			r.bad_quiet += !wrong_key(oms_quiet(l->lab.ini[k]));
			/* each of its BATCH / NINI F's was cancelled */
			r.not_cancelled += !control &&
				cancelled(l->lab.ini[k]) - c0[k] < BATCH / NINI;
			r.bad_resume += oms_ctx_resume(l->lab.ini[k]) != 0;
			/* traffic flows again: a strong store lands */
			r.errors += oms_put(l->lab.ini[k], &l->lab.r[fd],
					    off_of((uint32_t)k, G), &l->one, 8,
					    OMS_STORE_STRONG) != 0;
			r.errors += oms_quiet(l->lab.ini[k]) != 0;
			r.after_resume_lost += word(l, fd, (uint32_t)k, G) != 1;
		}
		for (uint32_t i = 0; i < BATCH; i++) {
			r.f_visible += word(l, fd, i, F) != 0;
			r.b_lost += word(l, 3, i, B) != 1;
			r.errors += word(l, 1, i, A) != 0;
		}
		r.trials += BATCH;
		for (int d = 1; d < NTGT; d++)
			memset(l->lab.mem[d], 0, (size_t)BATCH * SLOTS * 8);
	}
out:
	fl_close(l);
	return r;
}

FIXTURE(fail) {
	struct fl *l;
};

FIXTURE_VARIANT(fail) {
	uint32_t flags;
	int fd;			/* F's destination: 1 (failing) or 2 */
};

FIXTURE_VARIANT_ADD(fail, acked_f_at_d1) { .flags = 0, .fd = 1 };
FIXTURE_VARIANT_ADD(fail, acked_f_at_d2) { .flags = 0, .fd = 2 };
FIXTURE_VARIANT_ADD(fail, seq_f_at_d1) {
	.flags = OMS_CTX_F_DEST_SEQ, .fd = 1 };
FIXTURE_VARIANT_ADD(fail, seq_f_at_d2) {
	.flags = OMS_CTX_F_DEST_SEQ, .fd = 2 };

FIXTURE_SETUP(fail)
{
	self->l = calloc(1, sizeof(*self->l));
	ASSERT_NE(NULL, self->l);
}

FIXTURE_TEARDOWN(fail)
{
	free(self->l);
}

/* One instance on a fresh device, every step checked in order. */
TEST_F(fail, litmus_L37_failed_store_sequence_on_emu)
{
	struct oms_stats s = { .size = sizeof(s) };
	struct fl *l = self->l;
	struct oms_ctx *c;

	ASSERT_EQ(0, fl_open(l, variant->flags, t_seed(0x3701)));
	c = l->lab.ini[0];
	ASSERT_EQ(0, l37(l, c, 0, variant->fd));
	EXPECT_EQ(-EACCES, oms_quiet(c));
	ASSERT_EQ(0, oms_ctx_stats(c, &s));
	TH_LOG("after quiet: completed %llu, failed %llu, cancelled %llu, "
	       "outstanding %llu, stale acks %llu",
	       (unsigned long long)s.completed, (unsigned long long)s.failed,
	       (unsigned long long)s.cancelled,
	       (unsigned long long)s.outstanding,
	       (unsigned long long)s.stale_acks);
	EXPECT_GE(s.cancelled, 1);
	EXPECT_EQ(0, s.outstanding);
	EXPECT_EQ(0, word(l, variant->fd, 0, F));
	EXPECT_EQ(0, word(l, 1, 0, A));
	EXPECT_EQ(1, word(l, 3, 0, B));
	/* until resume, a strong store still follows the failure */
	EXPECT_EQ(0, oms_put(c, &l->lab.r[variant->fd], off_of(1, F), &l->one, 8,
			     OMS_STORE_STRONG));
	EXPECT_NE(0, oms_quiet(c));
	EXPECT_EQ(0, word(l, variant->fd, 1, F));
	EXPECT_EQ(0, oms_ctx_resume(c));
	EXPECT_EQ(0, oms_put(c, &l->lab.r[variant->fd], off_of(0, G), &l->one, 8,
			     OMS_STORE_STRONG));
	EXPECT_EQ(0, oms_quiet(c));
	EXPECT_EQ(1, word(l, variant->fd, 0, G));
	/* a second resume with nothing failed is harmless */
	EXPECT_EQ(0, oms_ctx_resume(c));
	EXPECT_EQ(0, oms_put(c, &l->lab.r[variant->fd], off_of(1, G), &l->one, 8,
			     OMS_STORE_STRONG));
	EXPECT_EQ(0, oms_quiet(c));
	EXPECT_EQ(1, word(l, variant->fd, 1, G));
	fl_close(l);
}

TEST_F(fail, litmus_L37_failed_store_breaks_chain_on_emu)
{
	uint64_t seed = t_seed(0x3702);
	struct res r = l37_run(self->l, variant->flags, variant->fd, seed,
			       t_trials(DEFAULT_TRIALS) / NMODES, 0);

	TH_LOG("L37 F@D%d: %lu instances: %lu F visible, %lu B lost, %lu "
	       "contexts with F not cancelled, %lu quiets without the "
	       "wrong-key error, %lu failed resumes, %lu strong stores lost "
	       "after resume, %lu errors (chaos seed %#llx)", variant->fd,
	       r.trials, r.f_visible, r.b_lost, r.not_cancelled,
	       r.bad_quiet, r.bad_resume, r.after_resume_lost, r.errors,
	       (unsigned long long)seed);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(0, r.f_visible);
	EXPECT_EQ(0, r.b_lost);
	EXPECT_EQ(0, r.not_cancelled);
	EXPECT_EQ(0, r.bad_quiet);
	EXPECT_EQ(0, r.bad_resume);
	EXPECT_EQ(0, r.after_resume_lost);
	r = l37_run(self->l, variant->flags | OMS_CTX_F_NO_ORDERING,
		    variant->fd, seed, CONTROL_MAX, 1);
	TH_LOG("L37 F@D%d: control (ordering off): F visible %lu times in "
	       "%lu instances", variant->fd, r.f_visible, r.trials);
	EXPECT_GT(r.f_visible, 0);
}

/*
 * After oms_ctx_resume() traffic flows again, also when what failed was
 * an unordered put: the device remembers every failure at a destination
 * (a release behind an unordered failure is refused there, R1), so the
 * resume must resume that channel too, though the orderer never numbered
 * the put.  Each round: U(A@D1, forged key); quiet (the wrong-key error);
 * resume; then W(A@D1), REL(F@D1), W(G@D1), a get of G and a put to the
 * same bytes (a write after a read: fenced); quiet 0, everything landed.
 * Acknowledged and sequenced channels, 64 rounds each on one context: a
 * failure left behind by one round would cancel the next.
 */
TEST(litmus_L37_resume_forgets_unordered_failure_on_emu)
{
	static const uint32_t modes[] = { 0, OMS_CTX_F_DEST_SEQ };
	struct fl *l = calloc(1, sizeof(*l));

	ASSERT_NE(NULL, l);
	for (unsigned m = 0; m < 2; m++) {
		unsigned long bad_quiet = 0, lost = 0, errors = 0;
		struct oms_ctx *c;
		uint64_t got;

		ASSERT_EQ(0, fl_open(l, modes[m], t_seed(0x3703)));
		c = l->lab.ini[0];
		for (uint32_t i = 0; i < 64; i++) {
			errors += oms_put(c, &l->forged, off_of(i, A), &l->one,
					  8, OMS_STORE_UNORDERED) != 0;
			bad_quiet += !wrong_key(oms_quiet(c));
			errors += oms_ctx_resume(c) != 0;
			errors += oms_put(c, &l->lab.r[1], off_of(i, A), &l->one,
					  8, OMS_STORE_WEAK) != 0;
			errors += oms_put(c, &l->lab.r[1], off_of(i, F), &l->one,
					  8, OMS_STORE_RELEASE) != 0;
			errors += oms_put(c, &l->lab.r[1], off_of(i, G), &l->one,
					  8, OMS_STORE_WEAK) != 0;
			errors += oms_get(c, &got, &l->lab.r[1], off_of(i, G), 8,
					  OMS_READ_RELAXED) != 0;
			errors += oms_put(c, &l->lab.r[1], off_of(i, G), &l->one,
					  8, OMS_STORE_WEAK) != 0;
			lost += oms_quiet(c) != 0;
			lost += word(l, 1, i, A) != 1 || word(l, 1, i, F) != 1 ||
				word(l, 1, i, G) != 1;
		}
		TH_LOG("%s: 64 rounds of a failed unordered put, resume, "
		       "then W, REL, W, get, put at its destination: %lu "
		       "rounds lost or cancelled, %lu quiets without the "
		       "wrong-key error, %lu errors",
		       modes[m] ? "sequenced" : "acknowledged", lost,
		       bad_quiet, errors);
		EXPECT_EQ(0, lost);
		EXPECT_EQ(0, bad_quiet);
		EXPECT_EQ(0, errors);
		fl_close(l);
	}
	free(l);
}

TEST(litmus_L37_resume_bad_input_on_emu)
{
	EXPECT_EQ(-EINVAL, oms_ctx_resume(NULL));
}

TEST_HARNESS_MAIN
