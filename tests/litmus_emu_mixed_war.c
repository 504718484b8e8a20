// SPDX-License-Identifier: MIT
/*
 * Litmus L26 and L33 on the emulated device with chaos on: a get and a put
 * of the same address in one context (coherence, docs/ordering.md rule C1).
 *   L26 put(X=new); get(X): the get returns the new value, whatever the
 *       put's class (weak, strong, release, unordered).
 *   L33 get(X); put(X=1) as weak, fence(D)+weak, strong, release: the get
 *       never returns 1 (RC itself orders a WRITE after a READ only with a
 *       fence: the library must ask for it).
 * Every test runs in every mode that claims the rule: acknowledged
 * channels (default) and OMS_CTX_F_DEST_SEQ, each with the read order at
 * the speculative root complex (RC_OPT), the root complex (RC) and the NIC
 * (FIXTURE_VARIANT "mode").  Public API only: the observer is the value
 * the get returns.  A forbidden outcome is counted over
 * t_trials(1 000 000) program instances per test, split evenly between
 * the six modes (100 000 under ASan); instances are batched, each on its
 * own word, spread over NINI initiator contexts, one quiet per batch.
 * The control is the same program in a context with OMS_CTX_F_NO_ORDERING
 * and must show the forbidden outcome at least once.
 */
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
#define NMODES		6ul	/* variants of the fixture */
#define CONTROL_MAX	400000ul
#define BATCH		1024u	/* program instances per quiet */
#define NINI		16	/* initiator contexts (node 0) */

/* The lab (tests/lab.h): one target (node 1), NINI initiators;
 * instance i uses word i. */
struct war {
	struct t_lab lab;
	uint64_t val[BATCH], got[BATCH];
	uint64_t gen;		/* batch number: L26's fresh value */
};

struct res {
	unsigned long trials, hits, errors;
	long first;		/* first forbidden instance's word, or -1 */
};

static int war_open(struct war *w, uint32_t flags, uint32_t order,
		    uint64_t seed)
{
	const struct t_lab_cfg cfg = {
		.nini = NINI, .ndest = 1, .words = BATCH, .flags = flags,
		.seed = seed, .read_order_set = 1, .read_order = order,
	};

	memset(w, 0, sizeof(*w));
	return t_lab_open(&w->lab, &cfg);
}

/* One program instance on word @i; @arg is the program's parameter. */
typedef int (*war_prog)(struct war *w, struct oms_ctx *c, uint32_t i,
			int arg);
/* Nonzero: instance @i showed the forbidden outcome. */
typedef int (*war_bad)(const struct war *w, uint32_t i);

static struct res war_run(uint32_t flags, uint32_t order, uint64_t seed,
			  war_prog prog, war_bad bad, int arg,
			  unsigned long trials, int stop_on_hit)
{
	struct war *w = calloc(1, sizeof(*w));
	struct res r = { .first = -1 };

	if (!w || war_open(w, flags, order, seed)) {
		r.errors++;
		goto out;
	}
	while (r.trials < trials && !(stop_on_hit && r.hits)) {
		w->gen++;
		for (uint32_t i = 0; i < BATCH; i++)
			r.errors += prog(w, w->lab.ini[i % NINI], i, arg) != 0;
		for (int k = 0; k < NINI; k++)
			r.errors += oms_quiet(w->lab.ini[k]) != 0;
		for (uint32_t i = 0; i < BATCH; i++) {
			if (!bad(w, i))
				continue;
			if (!r.hits++)
				r.first = i;
		}
		r.trials += BATCH;
		/* nothing is outstanding: reset the words for the next batch */
		t_lab_zero(&w->lab);
	}
out:
	if (w)
		t_lab_close(&w->lab);
	free(w);
	return r;
}

FIXTURE(mode) {
	int unused;
};

FIXTURE_VARIANT(mode) {
	uint32_t flags;		/* 0 (acknowledged) or OMS_CTX_F_DEST_SEQ */
	uint32_t order;		/* enum oms_read_order */
};

FIXTURE_VARIANT_ADD(mode, acked_rc_opt) { .order = OMS_ORDER_RC_OPT };
FIXTURE_VARIANT_ADD(mode, acked_rc) { .order = OMS_ORDER_RC };
FIXTURE_VARIANT_ADD(mode, acked_nic) { .order = OMS_ORDER_NIC };
FIXTURE_VARIANT_ADD(mode, seq_rc_opt) {
	.flags = OMS_CTX_F_DEST_SEQ, .order = OMS_ORDER_RC_OPT };
FIXTURE_VARIANT_ADD(mode, seq_rc) {
	.flags = OMS_CTX_F_DEST_SEQ, .order = OMS_ORDER_RC };
FIXTURE_VARIANT_ADD(mode, seq_nic) {
	.flags = OMS_CTX_F_DEST_SEQ, .order = OMS_ORDER_NIC };

FIXTURE_SETUP(mode)
{
}

FIXTURE_TEARDOWN(mode)
{
}

/*
 * The forbidden outcome: none in t_trials(DEFAULT_TRIALS) / NMODES
 * instances in this mode, at least one with the ordering off.
 */
#define WAR_CHECK(name, prog, bad, arg, seed_dflt)			\
	do {								\
		uint64_t seed = t_seed(seed_dflt);			\
		struct res o = war_run(variant->flags, variant->order,	\
				       seed, prog, bad, arg,		\
				       t_trials(DEFAULT_TRIALS) / NMODES, 0); \
		TH_LOG("%s: ordered: %lu instances, %lu forbidden (first " \
		       "on word %ld), %lu errors (chaos seed %#llx)", name, \
		       o.trials, o.hits, o.first, o.errors,		\
		       (unsigned long long)seed);			\
		EXPECT_EQ(0, o.errors);					\
		EXPECT_EQ(0, o.hits);					\
		o = war_run(variant->flags | OMS_CTX_F_NO_ORDERING,	\
			    variant->order, seed, prog, bad, arg,	\
			    CONTROL_MAX, 1);				\
		TH_LOG("%s: control (ordering off): forbidden seen %lu " \
		       "times in %lu instances", name, o.hits, o.trials); \
		EXPECT_EQ(0, o.errors);					\
		EXPECT_GT(o.hits, 0);					\
	} while (0)

/* L26: put(X=gen) with a class that rotates over the instances (word i:
 * l26_cls[i % 4]); get(X). */
static const enum oms_store_class l26_cls[] = {
	OMS_STORE_WEAK, OMS_STORE_STRONG, OMS_STORE_RELEASE,
	OMS_STORE_UNORDERED,
};

static int l26(struct war *w, struct oms_ctx *c, uint32_t i, int arg)
{
	(void)arg;
	w->val[i] = w->gen;
	w->got[i] = 0;
	return oms_put(c, &w->lab.r[1], 8ull * i, &w->val[i], 8, l26_cls[i % 4]) |
	       oms_get(c, &w->got[i], &w->lab.r[1], 8ull * i, 8, OMS_READ_RELAXED);
}

static int l26_old(const struct war *w, uint32_t i)
{
	return w->got[i] != w->gen;
}

TEST_F(mode, litmus_L26_put_then_get_same_address_on_emu)
{
	WAR_CHECK("L26", l26, l26_old, 0, 0x2601);
}

/* L33: get(X); [fence(D)]; put(X=1) of class @arg (< 0: fence + weak). */
#define FENCE_WEAK (-1)

static int l33(struct war *w, struct oms_ctx *c, uint32_t i, int arg)
{
	int e = 0;

	w->val[i] = 1;
	w->got[i] = 0;
	e |= oms_get(c, &w->got[i], &w->lab.r[1], 8ull * i, 8, OMS_READ_RELAXED);
	if (arg == FENCE_WEAK)
		e |= oms_fence(c, w->lab.r[1].dest);
	e |= oms_put(c, &w->lab.r[1], 8ull * i, &w->val[i], 8,
		     arg == FENCE_WEAK ? OMS_STORE_WEAK :
					 (enum oms_store_class)arg);
	return e;
}

static int l33_saw_later(const struct war *w, uint32_t i)
{
	return w->got[i] == 1;
}

TEST_F(mode, litmus_L33_war_weak_on_emu)
{
	WAR_CHECK("L33 weak", l33, l33_saw_later, OMS_STORE_WEAK, 0x3301);
}

TEST_F(mode, litmus_L33_war_weak_fence_on_emu)
{
	WAR_CHECK("L33 fence+weak", l33, l33_saw_later, FENCE_WEAK, 0x3302);
}

TEST_F(mode, litmus_L33_war_strong_on_emu)
{
	WAR_CHECK("L33 strong", l33, l33_saw_later, OMS_STORE_STRONG, 0x3303);
}

TEST_F(mode, litmus_L33_war_release_on_emu)
{
	WAR_CHECK("L33 release", l33, l33_saw_later, OMS_STORE_RELEASE,
		  0x3304);
}

TEST_HARNESS_MAIN
