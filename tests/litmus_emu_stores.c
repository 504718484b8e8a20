// SPDX-License-Identifier: MIT
/*
 * Litmus L01-L07, L12, L14 and L17 on the emulated device with chaos on: real
 * contexts, a real device thread that executes puts in random order and
 * returns completions late and shuffled.  The observer is the destination
 * memory itself: the device's observer (oms_emu_set_observer(), on a
 * device the test makes) stamps every word when a store makes it
 * visible, so "F visible before A" is exactly "a reader that sees F=1
 * then reads A may find 0".  Each forbidden outcome is counted over
 * >= 1 000 000 trials per test in the plain build (split evenly between
 * a test's variants; the ASan build runs another 100 000 per test),
 * and a control run with the ordering switched off (OMS_CTX_F_NO_ORDERING)
 * must observe it at least once.  Allowed outcomes (L05, L06) must be
 * observed with the ordering on.  Trials are cheap: a batch of trials
 * shares one quiet, each trial on its own words, and the trials of a
 * batch are spread over four initiator contexts (four independent strong
 * chains).  Every forbidden outcome is about one trial, so one context.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"

#ifdef __SANITIZE_ADDRESS__
#define DEFAULT_TRIALS 100000ul
#else
#define DEFAULT_TRIALS 1000000ul
#endif
#define CONTROL_MAX	200000ul
#define BATCH		1536u
#define SLOTS		16u	/* words per trial */
#define NDEST		3	/* node 0 = initiator, 1 = D1, 2 = D2 */
#define NINI		48	/* initiator contexts: independent chains */
#define W OMS_STORE_WEAK
#define S OMS_STORE_STRONG
#define U OMS_STORE_UNORDERED

struct lab {
	struct oms_emu *emu;		/* a device of the lab's own */
	struct oms_ctx *ini, *tgt[NDEST];
	struct oms_ctx *inis[NINI];	/* trial i runs on inis[i % NINI] */
	struct oms_mr *mr[NDEST];
	struct oms_rmr r[NDEST];
	uint64_t *mem[NDEST];
	uint64_t *stamp[NDEST];
	uint64_t clock;
	uint64_t val[BATCH][SLOTS];	/* sources: stable until quiet */
	uint64_t seed;
};

/* The destination whose region @region is, or 0 (none: node 0 is the
 * initiator's). */
static int dest_of(const struct lab *l, uint32_t region)
{
	for (int d = 1; d < NDEST; d++)
		if (l->mr[d] && l->r[d].region == region)
			return d;
	return 0;
}

static void observe(void *arg, const struct oms_emu_event *ev)
{
	struct lab *l = arg;
	int d = dest_of(l, ev->region);

	if (!d || ev->kind == OMS_EMU_EV_GET)
		return;
	l->clock++;
	for (uint64_t w = ev->off / 8; w <= (ev->off + ev->len - 1) / 8; w++)
		l->stamp[d][w] = l->clock;
}

static int lab_open(struct lab *l, uint32_t flags, uint64_t seed)
{
	size_t words = (size_t)BATCH * SLOTS;

	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = seed,
	};
	int err;

	memset(l, 0, sizeof(*l));
	l->seed = seed;
	err = oms_emu_create(&ea, &l->emu);
	if (err)
		return err;
	for (int d = 0; d < NDEST; d++) {
		struct oms_ctx_attr a = oms_ctx_attr_default();

		a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_FLAGS |
			      OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_QDEPTH;
		a.queue_depth = 256;
		a.node = (uint32_t)d;
		a.flags = flags;
		a.emu = l->emu;
		if (!d) {
			for (int k = 0; k < NINI; k++) {
				err = oms_ctx_create(&a, &l->inis[k]);
				if (err)
					return err;
			}
			continue;
		}
		err = oms_ctx_create(&a, &l->tgt[d]);
		if (err)
			return err;
		l->mem[d] = calloc(words, 8);
		l->stamp[d] = calloc(words, 8);
		err = oms_mr_reg(l->tgt[d], l->mem[d], words * 8,
				 OMS_ACCESS_ALL, &l->mr[d]);
		if (err)
			return err;
		oms_mr_remote(l->mr[d], &l->r[d]);
	}
	return oms_emu_set_observer(l->emu, observe, l);
}

static void lab_close(struct lab *l)
{
	if (l->emu)
		oms_emu_set_observer(l->emu, NULL, NULL);
	for (int k = 0; k < NINI; k++)
		if (l->inis[k])
			oms_ctx_destroy(l->inis[k]);
	for (int d = 1; d < NDEST; d++) {
		oms_ctx_destroy(l->tgt[d]);
		free(l->mem[d]);
		free(l->stamp[d]);
	}
	if (l->emu)
		oms_emu_destroy(l->emu);
}

/* Store word @w of trial @i at destination @d. */
static int st(struct lab *l, uint32_t i, int d, uint32_t w, uint64_t v,
	      unsigned cls)
{
	l->val[i][w] = v;
	return oms_put(l->ini, &l->r[d], ((uint64_t)i * SLOTS + w) * 8,
		       &l->val[i][w], 8, cls);
}

/* Visibility stamp of word @w of trial @i at @d (0: never written). */
static uint64_t vt(const struct lab *l, uint32_t i, int d, uint32_t w)
{
	return l->stamp[d][i * SLOTS + w];
}

static uint64_t memv(const struct lab *l, uint32_t i, int d, uint32_t w)
{
	return l->mem[d][i * SLOTS + w];
}

typedef int (*prog_fn)(struct lab *l, uint32_t i);
typedef int (*pred_fn)(const struct lab *l, uint32_t i);

struct result {
	unsigned long trials, hits, errors;
};

/* Run trials in batches until @trials ran (or @stop_at hits were seen). */
static struct result run(uint32_t flags, uint64_t seed, prog_fn prog,
			 pred_fn pred, unsigned long trials,
			 unsigned long stop_at)
{
	struct result r = { 0 };
	struct lab *l = calloc(1, sizeof(*l));

	if (lab_open(l, flags, seed)) {
		r.errors++;
		goto out;
	}
	while (r.trials < trials && (!stop_at || r.hits < stop_at)) {
		int busy;

		for (uint32_t i = 0; i < BATCH; i++) {
			l->ini = l->inis[i % NINI];
			r.errors += prog(l, i) != 0;
		}
		/* Drive every context's chain together, then quiet each. */
		do {
			busy = 0;
			for (int k = 0; k < NINI; k++) {
				int n = oms_progress(l->inis[k]);

				if (n < 0)
					r.errors++;
				busy |= n > 0;
			}
			if (busy)
				sched_yield();
		} while (busy);
		for (int k = 0; k < NINI; k++)
			r.errors += oms_quiet(l->inis[k]) != 0;
		for (uint32_t i = 0; i < BATCH; i++)
			r.hits += pred(l, i) != 0;
		r.trials += BATCH;
		for (int d = 1; d < NDEST; d++) {
			memset(l->stamp[d], 0, (size_t)BATCH * SLOTS * 8);
			memset(l->mem[d], 0, (size_t)BATCH * SLOTS * 8);
		}
	}
out:
	lab_close(l);
	free(l);
	return r;
}

/* The forbidden outcome: 0 with ordering, >= 1 without. */
#define FORBIDDEN(name, prog, pred, seed_dflt, nvar)			\
	do {								\
		uint64_t seed = t_seed(seed_dflt);			\
		struct result o = run(0, seed, prog, pred,		\
				      t_trials(DEFAULT_TRIALS) / (nvar), 0); \
		TH_LOG("%s: ordered: %lu trials, %lu forbidden "	\
		       "(chaos seed %#llx)", name, o.trials, o.hits,	\
		       (unsigned long long)seed);			\
		ASSERT_EQ(0, o.errors);					\
		ASSERT_EQ(0, o.hits);					\
		o = run(OMS_CTX_F_NO_ORDERING, seed, prog, pred,	\
			CONTROL_MAX, 1);				\
		TH_LOG("%s: ordering off: forbidden seen %lu times in " \
		       "%lu trials", name, o.hits, o.trials);		\
		ASSERT_EQ(0, o.errors);					\
		ASSERT_GT(o.hits, 0);					\
	} while (0)

/* An allowed outcome the chaos must produce with the ordering on. */
#define ALLOWED(name, prog, pred, seed_dflt)				\
	do {								\
		uint64_t seed = t_seed(seed_dflt);			\
		struct result o = run(0, seed, prog, pred, CONTROL_MAX, 1); \
		TH_LOG("%s: allowed outcome seen %lu times in %lu "	\
		       "ordered trials (seed %#llx)", name, o.hits,	\
		       o.trials, (unsigned long long)seed);		\
		ASSERT_EQ(0, o.errors);					\
		ASSERT_GT(o.hits, 0);					\
	} while (0)

enum { A = 0, B = 1, F = 2, X = 3, Y = 4 };

/* L01: WO(A) WO(B) SO(F); forbidden F visible before A or B. */
static int l01_one(struct lab *l, uint32_t i)
{
	return st(l, i, 1, A, 1, W) | st(l, i, 1, B, 1, W) |
	       st(l, i, 1, F, 1, S);
}

static int l01_two(struct lab *l, uint32_t i)
{
	return st(l, i, 1, A, 1, W) | st(l, i, 2, B, 1, W) |
	       st(l, i, 2, F, 1, S);
}

static int l01_bad_one(const struct lab *l, uint32_t i)
{
	return vt(l, i, 1, F) < vt(l, i, 1, A) || vt(l, i, 1, F) < vt(l, i, 1, B);
}

static int l01_bad_two(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, F) < vt(l, i, 1, A) || vt(l, i, 2, F) < vt(l, i, 2, B);
}

/* Stamps are per destination array but share one clock: comparable. */
TEST(litmus_L01_mp_weak_strong_on_emu)
{
	FORBIDDEN("L01 one destination", l01_one, l01_bad_one, 0x101, 2);
	FORBIDDEN("L01 two destinations", l01_two, l01_bad_two, 0x102, 2);
}

/* L02: WO(A@D1); SO(F@D2): F visible before A is forbidden. */
static int l02(struct lab *l, uint32_t i)
{
	return st(l, i, 1, A, 1, W) | st(l, i, 2, F, 1, S);
}

static int l02_bad(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, F) < vt(l, i, 1, A);
}

TEST(litmus_L02_cumulative_across_destinations_on_emu)
{
	FORBIDDEN("L02", l02, l02_bad, 0x201, 1);
}

/* L03: SO(X); SO(Y): Y before X forbidden, same and other destination. */
static int l03_same(struct lab *l, uint32_t i)
{
	return st(l, i, 1, X, 1, S) | st(l, i, 1, Y, 1, S);
}

static int l03_other(struct lab *l, uint32_t i)
{
	return st(l, i, 1, X, 1, S) | st(l, i, 2, Y, 1, S);
}

static int l03_bad_same(const struct lab *l, uint32_t i)
{
	return vt(l, i, 1, Y) < vt(l, i, 1, X);
}

static int l03_bad_other(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, Y) < vt(l, i, 1, X);
}

TEST(litmus_L03_strong_strong_on_emu)
{
	FORBIDDEN("L03 same destination", l03_same, l03_bad_same, 0x301, 2);
	FORBIDDEN("L03 other destination", l03_other, l03_bad_other, 0x302, 2);
}

/* L12: back-to-back strong stores, across destinations, land in program
 * order. */
static int l12(struct lab *l, uint32_t i)
{
	return st(l, i, 1, X, 1, S) | st(l, i, 2, Y, 1, S) |
	       st(l, i, 1, F, 1, S);
}

static int l12_bad(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, Y) < vt(l, i, 1, X) || vt(l, i, 1, F) < vt(l, i, 2, Y);
}

TEST(litmus_L12_back_to_back_strong_on_emu)
{
	FORBIDDEN("L12", l12, l12_bad, 0xc01, 1);
}

/* L04: data, wqe, dbrec in host memory (D1), doorbells on the NIC (D2). */
static int l04(struct lab *l, uint32_t i)
{
	int e = 0;

	for (uint32_t n = 0; n < 2; n++) {
		e |= st(l, i, 1, 3 * n, n + 1, W);	/* data */
		e |= st(l, i, 1, 3 * n + 1, n + 1, W);	/* wqe */
		e |= st(l, i, 1, 6 + n, n + 1, S);	/* dbrec */
		e |= st(l, i, 2, n, n + 1, S);		/* db */
	}
	return e;
}

static int l04_bad(const struct lab *l, uint32_t i)
{
	for (uint32_t n = 0; n < 2; n++) {
		uint64_t db = vt(l, i, 2, n);

		if (db < vt(l, i, 1, 3 * n) || db < vt(l, i, 1, 3 * n + 1) ||
		    db < vt(l, i, 1, 6 + n))
			return 1;
	}
	return vt(l, i, 2, 1) < vt(l, i, 2, 0);
}

TEST(litmus_L04_doorbell_chain_on_emu)
{
	FORBIDDEN("L04", l04, l04_bad, 0x401, 1);
}

/* L05: WO(A); WO(B): B before A is allowed and must happen. */
static int l05(struct lab *l, uint32_t i)
{
	return st(l, i, 1, A, 1, W) | st(l, i, 1, B, 1, W);
}

static int b_before_a(const struct lab *l, uint32_t i)
{
	return vt(l, i, 1, B) < vt(l, i, 1, A);
}

TEST(litmus_L05_weak_weak_may_reorder_on_emu)
{
	ALLOWED("L05", l05, b_before_a, 0x501);
}

/* L06: U(A@D1); SO(F@D2): F before A allowed and must happen. */
static int l06(struct lab *l, uint32_t i)
{
	return st(l, i, 1, A, 1, U) | st(l, i, 2, F, 1, S);
}

static int f_before_a(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, F) < vt(l, i, 1, A);
}

TEST(litmus_L06_unordered_outside_ordered_view_on_emu)
{
	ALLOWED("L06", l06, f_before_a, 0x601);
}

/* L07: same address, any class mix: the last store wins.  Same-address
 * order is the channel's (the device queue's) duty, so there is no
 * "ordering off" control here: the forbidden count alone is checked. */
static int l07(struct lab *l, uint32_t i)
{
	unsigned c1 = i % 3 == 2 ? S : W, c2 = i % 3 == 1 ? S : W;
	uint64_t off = (uint64_t)i * SLOTS * 8;

	l->val[i][0] = 1;
	l->val[i][1] = 2;
	return oms_put(l->ini, &l->r[1], off, &l->val[i][0], 8, c1) |
	       oms_put(l->ini, &l->r[1], off, &l->val[i][1], 8, c2);
}

static int l07_bad(const struct lab *l, uint32_t i)
{
	return memv(l, i, 1, 0) != 2;
}

TEST(litmus_L07_same_address_on_emu)
{
	uint64_t seed = t_seed(0x701);
	struct result o = run(0, seed, l07, l07_bad,
			      t_trials(DEFAULT_TRIALS), 0);

	TH_LOG("L07: %lu trials, %lu ended with the older value (seed %#llx)",
	       o.trials, o.hits, (unsigned long long)seed);
	ASSERT_EQ(0, o.errors);
	ASSERT_EQ(0, o.hits);
}

/* L14: put(A@D1); fence(D1); put(B@D1): B before A forbidden;
 * with B at D2 it is allowed (and happens). */
static int l14_same(struct lab *l, uint32_t i)
{
	return st(l, i, 1, A, 1, W) | oms_fence(l->ini, 1) |
	       st(l, i, 1, B, 1, W);
}

static int l14_other(struct lab *l, uint32_t i)
{
	return st(l, i, 1, A, 1, W) | oms_fence(l->ini, 1) |
	       st(l, i, 2, B, 1, W);
}

static int l14_bad_other(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, B) < vt(l, i, 1, A);
}

TEST(litmus_L14_fence_per_destination_on_emu)
{
	FORBIDDEN("L14 same destination", l14_same, b_before_a, 0xe01, 1);
	ALLOWED("L14 other destination", l14_other, l14_bad_other, 0xe02);
}

/* L17: put(x@D1); global fence; put(flag@D2). */
static int l17(struct lab *l, uint32_t i)
{
	return st(l, i, 1, X, 1, W) | oms_fence_global(l->ini) |
	       st(l, i, 2, F, 1, W);
}

static int l17_bad(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, F) < vt(l, i, 1, X);
}

TEST(litmus_L17_global_fence_publishes_on_emu)
{
	FORBIDDEN("L17", l17, l17_bad, 0x1101, 1);
}

TEST_HARNESS_MAIN
