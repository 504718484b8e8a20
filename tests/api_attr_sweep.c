// SPDX-License-Identifier: MIT
/*
 * A seeded random walk over the settings oms_ctx_create(3) and
 * oms_emu_create(3) allow: every context flag, every queue depth (8 to
 * 4096, and some that are refused), sequenced destinations by mask,
 * timeouts, read orders, the emulated device in order or reordering
 * (chaos), with its latency model or without.  Each context the library
 * accepts must work: a put of every class, a get of every order, both
 * atomics, a fence of a destination and a global one, a local fence,
 * quiet; then a failure (a put through a forged key), the quiet that
 * reports it, oms_ctx_resume(), and a put that lands after it.  A
 * NONBLOCK context answers -EAGAIN only with its depth in flight.  A call
 * that hung would end the test in its harness's timeout; the walk prints
 * its budget and how many settings it ran (OMS_TEST_SEED replays one).
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"

struct setting {
	uint32_t flags, depth, seq_mask, timeout_ms;
	uint32_t order, chaos, model;
};

static void pick(struct t_rng *r, struct setting *s)
{
	static const uint32_t flags[] = {
		OMS_CTX_F_NONBLOCK, OMS_CTX_F_NO_ORDERING, OMS_CTX_F_DEST_SEQ,
		OMS_CTX_F_HOLD_GLOBAL, OMS_CTX_F_DOORBELL_BATCH,
	};

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (t_rng_below(r, 3) == 0)
			s->flags |= flags[i];
	/* a power of two from 8 to 4096; now and then one that is not */
	s->depth = 8u << t_rng_below(r, 10);
	if (t_rng_below(r, 16) == 0)
		s->depth += 1 + t_rng_below(r, 7);
	if (t_rng_below(r, 4) == 0)
		s->seq_mask = (uint32_t)t_rng_next(r) & 0xffff;
	s->timeout_ms = 2000 + t_rng_below(r, 8000);
	s->order = t_rng_below(r, 3);
	s->chaos = t_rng_below(r, 2);
	s->model = t_rng_below(r, 3) == 0;
}

/* What oms_ctx_create(3) says it refuses of these. */
static int refused(const struct setting *s)
{
	uint32_t d = s->depth;

	return d < 8 || d > 4096 || (d & (d - 1)) ||
	       (s->flags & OMS_CTX_F_HOLD_GLOBAL) ||
	       ((s->seq_mask || (s->flags & OMS_CTX_F_DEST_SEQ)) && d > 256);
}

struct rig {
	struct oms_emu *emu;
	struct oms_ctx *ini, *tgt;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t mem[1024];
	uint64_t buf[1024];
};

static void rig_close(struct rig *g)
{
	if (g->mr)
		oms_mr_dereg(g->mr);
	if (g->ini)
		oms_ctx_destroy(g->ini);
	if (g->tgt)
		oms_ctx_destroy(g->tgt);
	if (g->emu)
		oms_emu_destroy(g->emu);
	g->mr = NULL;
	g->ini = g->tgt = NULL;
	g->emu = NULL;
}

static int rig_emu(struct rig *g, const struct setting *s, uint64_t seed)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_CHAOS | OMS_EMU_ATTR_READ_ORDER |
			     OMS_EMU_ATTR_LATENCY,
		.chaos_seed = s->chaos ? seed | 1 : 0,
		.read_order = s->order, .rlsq_entries = 256,
		.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100, .time_scale = s->model,
	};

	return oms_emu_create(&ea, &g->emu);
}

/* The initiator with setting @s; the target (node 1) plain. */
static int rig_ctx(struct rig *g, const struct setting *s)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	a.comp_mask |= OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_QDEPTH |
		       OMS_CTX_ATTR_FLAGS | OMS_CTX_ATTR_TIMEOUT;
	a.emu = g->emu;
	a.queue_depth = s->depth;
	a.flags = s->flags;
	a.timeout_ms = s->timeout_ms;
	if (s->seq_mask) {
		a.comp_mask |= OMS_CTX_ATTR_DEST_SEQ;
		a.dest_seq_mask = s->seq_mask;
	}
	err = oms_ctx_create(&a, &g->ini);
	if (err)
		return err;
	a = oms_ctx_attr_default();
	a.comp_mask |= OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE;
	a.emu = g->emu;
	a.node = 1;
	err = oms_ctx_create(&a, &g->tgt);
	if (!err)
		err = oms_mr_reg(g->tgt, g->mem, sizeof(g->mem),
				 OMS_ACCESS_ALL, &g->mr);
	return err ? err : oms_mr_remote(g->mr, &g->r);
}

/* An op of a NONBLOCK context: -EAGAIN drives progress and tries again. */
#define RETRY(ctx, call)						\
	({								\
		int _r;							\
		while ((_r = (call)) == -EAGAIN) {			\
			int _p = oms_progress(ctx);			\
			if (_p < 0) {					\
				_r = _p;				\
				break;					\
			}						\
		}							\
		_r;							\
	})

/* Every kind of operation once, then a failure and a resume. */
static int drive(struct __test_metadata *_metadata, struct rig *g)
{
	static const enum oms_store_class cls[] = {
		OMS_STORE_UNORDERED, OMS_STORE_WEAK, OMS_STORE_STRONG,
		OMS_STORE_RELEASE,
	};
	struct oms_ctx *c = g->ini;
	struct oms_rmr bad = g->r;
	uint64_t v = 7, old = 0;
	int err;

	for (unsigned i = 0; i < 4; i++)
		EXPECT_EQ(0, RETRY(c, oms_put(c, &g->r, 8 * i, &v, 8, cls[i])));
	EXPECT_EQ(0, RETRY(c, oms_get(c, &g->buf[0], &g->r, 0, 64,
				      OMS_READ_RELAXED)));
	EXPECT_EQ(0, RETRY(c, oms_get(c, &g->buf[8], &g->r, 64, 64,
				      OMS_READ_ACQUIRE)));
	EXPECT_EQ(0, RETRY(c, oms_get(c, &g->buf[16], &g->r, 128, 8,
				      OMS_READ_ACQUIRE |
				      OMS_READ_RESP_ORDERED)));
	EXPECT_EQ(0, RETRY(c, oms_atomic_fadd(c, &g->r, 256, 1, &old)));
	EXPECT_EQ(0, RETRY(c, oms_atomic_cas(c, &g->r, 264, 0, 1, &old)));
	EXPECT_EQ(0, oms_fence(c, g->r.dest));
	EXPECT_EQ(0, oms_fence_global(c));
	EXPECT_EQ(0, oms_fence_local(c));
	err = oms_quiet(c);
	EXPECT_EQ(0, err);
	if (err)
		return err;
	/* a failure: a key the device does not know */
	bad.key ^= 0x5a5a5a5a;
	EXPECT_EQ(0, RETRY(c, oms_put(c, &bad, 0, &v, 8, OMS_STORE_WEAK)));
	EXPECT_EQ(0, RETRY(c, oms_put(c, &g->r, 512, &v, 8,
				      OMS_STORE_STRONG)));
	err = oms_quiet(c);
	EXPECT_TRUE(err == -EACCES || err == -EKEYREJECTED)
		TH_LOG("the forged key's quiet: %d", err);
	EXPECT_EQ(0, oms_ctx_resume(c));
	v = 9;
	EXPECT_EQ(0, RETRY(c, oms_put(c, &g->r, 520, &v, 8,
				      OMS_STORE_STRONG)));
	EXPECT_EQ(0, oms_quiet(c));
	EXPECT_EQ(9, g->mem[65]);
	return 0;
}

/* NONBLOCK: fill the queue; -EAGAIN only after the depth's worth. */
static void fill(struct __test_metadata *_metadata, struct rig *g,
		 const struct setting *s)
{
	uint32_t n = 0;
	int err;

	while ((err = oms_put(g->ini, &g->r, 8 * (n % 1024), &g->buf[n % 1024],
			      8, OMS_STORE_WEAK)) == 0 && n < 2 * s->depth)
		n++;
	if (err == -EAGAIN) {
		EXPECT_GE(n, s->depth) TH_LOG("depth %u: -EAGAIN after %u",
					      s->depth, n);
	} else {
		EXPECT_EQ(0, err);
	}
	EXPECT_EQ(0, oms_quiet(g->ini));
}

TEST(attribute_walk)
{
	const unsigned budget = t_quick() ? 48 : 400;
	uint64_t seed = t_seed(0x5eed5);
	static struct rig g;
	unsigned accepted = 0, refusals = 0;
	struct t_rng r;

	t_rng_init(&r, seed);
	TH_LOG("%u settings, seed 0x%llx", budget, (unsigned long long)seed);
	for (unsigned k = 0; k < budget; k++) {
		struct setting s;
		int err;

		pick(&r, &s);
		memset(&g, 0, sizeof(g));
		ASSERT_EQ(0, rig_emu(&g, &s, seed + k));
		err = rig_ctx(&g, &s);
		if (refused(&s)) {
			EXPECT_EQ(-EINVAL, err) TH_LOG("setting %u: flags 0x%x "
						       "depth %u mask 0x%x", k,
						       s.flags, s.depth,
						       s.seq_mask);
			refusals++;
			rig_close(&g);
			continue;
		}
		ASSERT_EQ(0, err) TH_LOG("setting %u: flags 0x%x depth %u "
					 "mask 0x%x: %s", k, s.flags, s.depth,
					 s.seq_mask, strerror(-err));
		accepted++;
		drive(_metadata, &g);
		if (s.flags & OMS_CTX_F_NONBLOCK)
			fill(_metadata, &g, &s);
		rig_close(&g);
	}
	TH_LOG("%u accepted and driven, %u refused as documented", accepted,
	       refusals);
	EXPECT_GT(accepted, budget / 2);
}

TEST_HARNESS_MAIN
