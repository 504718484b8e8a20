// SPDX-License-Identifier: MIT
/*
 * Litmus L38 and L39 on the emulated device: operations a destination
 * must perform after the context's earlier ones.
 *   L38 atomics are ordered operations (docs/ordering.md S1, A2), chaos on:
 *       FAA(C@D1); SO(F@D2): forbidden: F visible before the add
 *       (acknowledged channels and OMS_CTX_F_DEST_SEQ).
 *       CAS(L@D1, 0 -> 1) takes a lock; acq get(X@D1): the get is
 *       performed after the CAS.  The host writes the data X = 1 at the
 *       moment the lock is taken (atomically with the CAS, as a writer
 *       that owns the data under that lock would find it); forbidden: the
 *       get returns 0 (it read before the lock was held).
 *   L39 release at the destination (R1), chaos on: W(C@D2); U(A@D1);
 *       W(B@D1) or FAA(B@D1); get(Z@D1); REL(R@D1).  Forbidden: R visible
 *       before A or B, or the get reading after R was visible.  C at D2 is
 *       not ordered (a release is not cumulative): how often it lands
 *       after R is logged.
 *   L39 issue cost (latency model, chaos off): the mean time of the
 *       oms_put(RELEASE) call and of a quiet after W; REL compared with
 *       W; W, at a small and a 100x larger I/O bus latency: the call stays
 *       as cheap (< 3x) and W; REL takes no extra round trip (< 1.5x of
 *       W; W).  A sanity check, not a benchmark.
 *   Bad input: a store class past OMS_STORE_RELEASE is -EINVAL and
 *       changes nothing.
 * Modes where reads are involved (FIXTURE_VARIANT "mode"): acknowledged
 * and DEST_SEQ, each with the read order RC_OPT, RC and NIC; otherwise
 * ("chan") acknowledged and DEST_SEQ.
 * Observers: the device's observer (oms_emu_set_observer()), called with
 * the device stopped when a put or an atomic is performed: a visibility
 * stamp per word (one clock for both destinations), and a host that
 * writes X = 1 when the CAS on L is performed and Z = 1 when R is visible
 * (oms_emu_host_write(): squashing speculative reads as oms_mr_write
 * does).
 * Each forbidden outcome: t_trials(1 000 000) instances per test split
 * over its modes (100 000 under ASan); every CAS must find the lock free
 * and every add must return 0.  Controls: OMS_CTX_F_NO_ORDERING.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
#define CONTROL_MAX	400000ul
#define BATCH		512u	/* program instances per quiet */
#define SLOTS		8u	/* words per instance and destination */
#define NINI		16	/* initiator contexts */

/* L38: C, L, X at D1, F at D2.  L39: A, B, Z, R at D1, C at D2. */
enum { C = 0, F = 1, L = 2, X = 3, A = 4, B = 5, Z = 6, R = 7 };

/*
 * Targets D1 (node 1) and D2 (node 2); instance i owns words i * SLOTS ..
 * at each.  stamp[d][w]: when word w at d was last performed.  When a CAS
 * on L is performed at D1, the host writes X = 1 there; when R is, Z = 1.
 */
struct at_lab {
	struct t_lab lab;
	uint64_t *stamp[3];
	uint64_t clock, one;
	uint64_t got[BATCH], old[BATCH];
};

static void at_observe(void *arg, const struct oms_emu_event *ev)
{
	struct at_lab *l = arg;
	int d = t_lab_dest_of(&l->lab, ev->region);

	if (d < 0 || ev->kind == OMS_EMU_EV_GET)
		return;
	l->clock++;
	for (uint64_t w = ev->off / 8; w <= (ev->off + ev->len - 1) / 8; w++) {
		uint64_t to = w - w % SLOTS;

		l->stamp[d][w] = l->clock;
		/* the only atomic on L is the CAS of L38 */
		if (d == 1 && w % SLOTS == L && ev->kind == OMS_EMU_EV_ATOMIC)
			to += X;
		else if (d == 1 && w % SLOTS == R)
			to += Z;
		else
			continue;
		oms_emu_host_write(l->lab.emu, ev->region, to * 8, &l->one, 8);
	}
}

static int at_open(struct at_lab *l, uint32_t flags, uint32_t order,
		   uint64_t seed)
{
	const struct t_lab_cfg cfg = {
		.nini = NINI, .ndest = 2, .words = (size_t)BATCH * SLOTS,
		.flags = flags, .seed = seed, .read_order_set = 1,
		.read_order = order,
	};

	memset(l, 0, sizeof(*l));
	memset(l->got, 0xff, sizeof(l->got));
	memset(l->old, 0xff, sizeof(l->old));
	l->one = 1;
	for (int d = 1; d < 3; d++) {
		l->stamp[d] = calloc(cfg.words, 8);
		if (!l->stamp[d])
			return -1;
	}
	if (t_lab_open(&l->lab, &cfg))
		return -1;
	return oms_emu_set_observer(l->lab.emu, at_observe, l);
}

static void at_close(struct at_lab *l)
{
	t_lab_close(&l->lab);
	for (int d = 1; d < 3; d++)
		free(l->stamp[d]);
}

static uint64_t off_of(uint32_t i, uint32_t w)
{
	return ((uint64_t)i * SLOTS + w) * 8;
}

/* One instance on word set @i; returns nonzero on an API error. */
typedef int (*at_prog)(struct at_lab *l, struct oms_ctx *c, uint32_t i);
/* 1: forbidden outcome, 2: wrong atomic result (an error), 0: fine. */
typedef int (*at_bad)(const struct at_lab *l, uint32_t i);

struct res {
	unsigned long trials, hits, errors;
};

static struct res at_run(struct at_lab *l, uint32_t flags, uint32_t order,
			 uint64_t seed, at_prog prog, at_bad bad,
			 unsigned long trials, int stop_on_hit)
{
	struct res r = { 0 };

	if (at_open(l, flags, order, seed)) {
		r.errors++;
		goto out;
	}
	while (r.trials < trials && !(stop_on_hit && r.hits)) {
		for (uint32_t i = 0; i < BATCH; i++)
			r.errors += prog(l, l->lab.ini[i % NINI], i) != 0;
		for (int k = 0; k < NINI; k++)
			r.errors += oms_quiet(l->lab.ini[k]) != 0;
		for (uint32_t i = 0; i < BATCH; i++) {
			int b = bad(l, i);

			r.hits += b == 1;
			r.errors += b == 2;
		}
		r.trials += BATCH;
		for (int d = 1; d < 3; d++) {
			memset(l->lab.mem[d], 0, (size_t)BATCH * SLOTS * 8);
			memset(l->stamp[d], 0, (size_t)BATCH * SLOTS * 8);
		}
		memset(l->got, 0xff, sizeof(l->got));
		memset(l->old, 0xff, sizeof(l->old));
	}
out:
	at_close(l);
	return r;
}

#define AT_CHECK(name, flags, order, prog, bad, nmodes, seed_dflt)	\
	do {								\
		uint64_t seed = t_seed(seed_dflt);			\
		struct res o = at_run(self->l, flags, order, seed, prog, \
				      bad, t_trials(DEFAULT_TRIALS) / (nmodes), \
				      0);				\
		TH_LOG("%s: ordered: %lu instances, %lu forbidden, %lu " \
		       "errors (chaos seed %#llx)", name, o.trials,	\
		       o.hits, o.errors, (unsigned long long)seed);	\
		EXPECT_EQ(0, o.errors);					\
		EXPECT_EQ(0, o.hits);					\
		o = at_run(self->l, (flags) | OMS_CTX_F_NO_ORDERING,	\
			   order, seed, prog, bad, CONTROL_MAX, 1);	\
		TH_LOG("%s: control (ordering off): forbidden seen %lu " \
		       "times in %lu instances", name, o.hits, o.trials); \
		EXPECT_EQ(0, o.errors);					\
		EXPECT_GT(o.hits, 0);					\
	} while (0)

/* ---- FAA(C@D1); SO(F@D2) -------------------------------------------- */

static int faa_strong(struct at_lab *l, struct oms_ctx *c, uint32_t i)
{
	return oms_atomic_fadd(c, &l->lab.r[1], off_of(i, C), 1, &l->old[i]) |
	       oms_put(c, &l->lab.r[2], off_of(i, F), &l->one, 8,
		       OMS_STORE_STRONG);
}

static int faa_strong_bad(const struct at_lab *l, uint32_t i)
{
	uint64_t sc = l->stamp[1][i * SLOTS + C];
	uint64_t sf = l->stamp[2][i * SLOTS + F];

	if (l->old[i] != 0)
		return 2;
	return !sc || sf < sc;
}

FIXTURE(chan) {
	struct at_lab *l;
};

FIXTURE_VARIANT(chan) {
	uint32_t flags;
};

FIXTURE_VARIANT_ADD(chan, acked) { .flags = 0 };
FIXTURE_VARIANT_ADD(chan, seq) { .flags = OMS_CTX_F_DEST_SEQ };

FIXTURE_SETUP(chan)
{
	self->l = calloc(1, sizeof(*self->l));
	ASSERT_NE(NULL, self->l);
}

FIXTURE_TEARDOWN(chan)
{
	free(self->l);
}

TEST_F(chan, litmus_L38_faa_then_strong_on_emu)
{
	AT_CHECK("L38 FAA(C@D1); SO(F@D2)", variant->flags, OMS_ORDER_RC_OPT,
		 faa_strong, faa_strong_bad, 2, 0x3801);
}

/* ---- CAS(L@D1) lock; acq get(X@D1) ---------------------------------- */

static int cas_acquire(struct at_lab *l, struct oms_ctx *c, uint32_t i)
{
	return oms_atomic_cas(c, &l->lab.r[1], off_of(i, L), 0, 1, &l->old[i]) |
	       oms_get(c, &l->got[i], &l->lab.r[1], off_of(i, X), 8,
		       OMS_READ_ACQUIRE);
}

static int cas_acquire_bad(const struct at_lab *l, uint32_t i)
{
	if (l->old[i] != 0)
		return 2;
	return l->got[i] == 0;
}

FIXTURE(mode) {
	struct at_lab *l;
};

FIXTURE_VARIANT(mode) {
	uint32_t flags, order;
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
	self->l = calloc(1, sizeof(*self->l));
	ASSERT_NE(NULL, self->l);
}

FIXTURE_TEARDOWN(mode)
{
	free(self->l);
}

TEST_F(mode, litmus_L38_cas_lock_then_acquire_get_on_emu)
{
	AT_CHECK("L38 CAS(L@D1); acq get(X@D1)", variant->flags,
		 variant->order, cas_acquire, cas_acquire_bad, 6, 0x3802);
}


/* ---- L39: W(C@D2); U(A@D1); W/FAA(B@D1); get(Z@D1); REL(R@D1) ---- */

static unsigned long c_after_r;	/* allowed: C@D2 performed after R */

static int rel_prog(struct at_lab *l, struct oms_ctx *c, uint32_t i)
{
	int e = 0;

	e |= oms_put(c, &l->lab.r[2], off_of(i, C), &l->one, 8, OMS_STORE_WEAK);
	e |= oms_put(c, &l->lab.r[1], off_of(i, A), &l->one, 8,
		     OMS_STORE_UNORDERED);
	if (i % 2)
		e |= oms_atomic_fadd(c, &l->lab.r[1], off_of(i, B), 1, NULL);
	else
		e |= oms_put(c, &l->lab.r[1], off_of(i, B), &l->one, 8,
			     OMS_STORE_WEAK);
	e |= oms_get(c, &l->got[i], &l->lab.r[1], off_of(i, Z), 8,
		     OMS_READ_RELAXED);
	e |= oms_put(c, &l->lab.r[1], off_of(i, R), &l->one, 8,
		     OMS_STORE_RELEASE);
	return e;
}

static int rel_bad(const struct at_lab *l, uint32_t i)
{
	const uint64_t *s = l->stamp[1] + (size_t)i * SLOTS;

	c_after_r += s[R] && l->stamp[2][i * SLOTS + C] > s[R];
	return !s[R] || s[R] < s[A] || s[R] < s[B] || l->got[i] != 0;
}

TEST_F(mode, litmus_L39_release_after_earlier_ops_on_emu)
{
	c_after_r = 0;
	AT_CHECK("L39 U,W/FAA,get then REL to D1", variant->flags,
		  variant->order, rel_prog, rel_bad, 6, 0x3901);
	TH_LOG("L39: C@D2 (not ordered by a release to D1) landed after R "
	       "%lu times in the ordered and control runs (allowed)",
	       c_after_r);
}

/* ---- issue cost ---------------------------------------------------- */

/*
 * What a release store costs its issuer, in model time (the device's
 * latency model keeps a clock of its own: oms_emu.h), so the figures are
 * exact and the same on any machine, busy or not: every round measures
 * the same.  The calling thread's model time moves only when it waits
 * (its CPU is not charged here).
 */
#define COST_ROUNDS	64

struct cost {
	uint64_t call_ns;	/* most model time an oms_put(RELEASE) took */
	uint64_t quiet_rel_ns;	/* W; REL; quiet, most and least */
	uint64_t quiet_rel_min;
	uint64_t quiet_weak_ns;	/* W; W; quiet */
	int errors;
};

static uint64_t model_now(struct oms_emu *emu)
{
	uint64_t t = 0;

	oms_emu_thread_time(emu, &t);
	return t;
}

static struct cost rel_cost(uint32_t flags, uint32_t lat_bus_ns)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ini = NULL, *tgt = NULL;
	uint64_t *mem = calloc(16, 8), v = 1;
	struct cost c = { .quiet_rel_min = UINT64_MAX };
	struct oms_emu *emu = NULL;
	struct oms_mr *mr;
	struct oms_rmr r;
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_LATENCY,
		.lat_bus_ns = lat_bus_ns, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100, .time_scale = 1,
	};

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_FLAGS |
		      OMS_CTX_ATTR_EMU;
	a.flags = flags;
	if (!mem || oms_emu_create(&ea, &emu) ||
	    (a.emu = emu, oms_ctx_create(&a, &ini)) ||
	    (a.node = 1, a.flags = 0, oms_ctx_create(&a, &tgt)) ||
	    oms_mr_reg(tgt, mem, 16 * 8, OMS_ACCESS_ALL, &mr) ||
	    oms_mr_remote(mr, &r)) {
		c.errors++;
		goto out;
	}
	for (int n = 0; n < COST_ROUNDS; n++) {
		uint64_t t0 = model_now(emu), t1, t2, t3;

		c.errors += oms_put(ini, &r, 0, &v, 8, OMS_STORE_WEAK) != 0;
		t1 = model_now(emu);
		c.errors += oms_put(ini, &r, 8, &v, 8, OMS_STORE_RELEASE) != 0;
		t2 = model_now(emu);
		c.errors += oms_quiet(ini) != 0;
		t3 = model_now(emu);
		if (t2 - t1 > c.call_ns)
			c.call_ns = t2 - t1;
		if (t3 - t0 > c.quiet_rel_ns)
			c.quiet_rel_ns = t3 - t0;
		if (t3 - t0 < c.quiet_rel_min)
			c.quiet_rel_min = t3 - t0;
		t0 = model_now(emu);
		c.errors += oms_put(ini, &r, 0, &v, 8, OMS_STORE_WEAK) != 0;
		c.errors += oms_put(ini, &r, 8, &v, 8, OMS_STORE_WEAK) != 0;
		c.errors += oms_quiet(ini) != 0;
		t3 = model_now(emu);
		if (t3 - t0 > c.quiet_weak_ns)
			c.quiet_weak_ns = t3 - t0;
	}
out:
	if (ini)
		oms_ctx_destroy(ini);
	if (tgt)
		oms_ctx_destroy(tgt);
	if (emu)
		oms_emu_destroy(emu);
	free(mem);
	return c;
}

TEST_F(chan, litmus_L39_release_issue_cost_on_emu)
{
	/* one-way bus: 200 and 20000 model ns */
	struct cost lo = rel_cost(variant->flags, 200);
	struct cost hi = rel_cost(variant->flags, 20000);

	for (int i = 0; i < 2; i++) {
		const struct cost *c = i ? &hi : &lo;

		TH_LOG("L39 cost, bus %u ns: release call %llu ns, "
		       "W;REL;quiet %llu..%llu ns, W;W;quiet %llu ns (model "
		       "time)", i ? 20000 : 200,
		       (unsigned long long)c->call_ns,
		       (unsigned long long)c->quiet_rel_min,
		       (unsigned long long)c->quiet_rel_ns,
		       (unsigned long long)c->quiet_weak_ns);
	}
	ASSERT_EQ(0, lo.errors);
	ASSERT_EQ(0, hi.errors);
	/* the call does not wait for anything: no model time at all */
	EXPECT_EQ(0, lo.call_ns);
	EXPECT_EQ(0, hi.call_ns);
	/* W; REL takes one round trip like W; W, not two: its fence is
	 * kept at the destination (a wait at the source would add 40 us) */
	EXPECT_GE(hi.quiet_rel_min, 2 * 20000);
	EXPECT_LT(hi.quiet_rel_ns, hi.quiet_weak_ns + 20000);
	EXPECT_LT(lo.quiet_rel_ns, lo.quiet_weak_ns + 200);
}

/* ---- bad input ----------------------------------------------------- */

TEST(litmus_L39_bad_store_class_on_emu)
{
	static const unsigned bad[] = { OMS_STORE_RELEASE + 1, 0x7fffffffu };
	struct oms_stats s0 = { .size = sizeof(s0) }, s1 = s0;
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ini, *tgt;
	uint64_t mem[2] = { 0 }, v = 5;
	struct oms_mr *mr;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_ctx_create(NULL, &ini));
	a.comp_mask = OMS_CTX_ATTR_NODE;
	a.node = 1;
	ASSERT_EQ(0, oms_ctx_create(&a, &tgt));
	ASSERT_EQ(0, oms_mr_reg(tgt, mem, sizeof(mem), OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_mr_remote(mr, &r));
	ASSERT_EQ(0, oms_ctx_stats(ini, &s0));
	for (unsigned k = 0; k < 2; k++)
		EXPECT_EQ(-EINVAL, oms_put(ini, &r, 0, &v, 8,
					   (enum oms_store_class)bad[k]));
	EXPECT_EQ(0, oms_quiet(ini));
	ASSERT_EQ(0, oms_ctx_stats(ini, &s1));
	EXPECT_EQ(s0.puts, s1.puts);
	EXPECT_EQ(s0.held, s1.held);
	EXPECT_EQ(s0.completed, s1.completed);
	EXPECT_EQ(s0.failed, s1.failed);
	EXPECT_EQ(0, s1.outstanding);
	EXPECT_EQ(0, mem[0]);
	/* the last valid class works */
	EXPECT_EQ(0, oms_put(ini, &r, 8, &v, 8, OMS_STORE_RELEASE));
	EXPECT_EQ(0, oms_quiet(ini));
	EXPECT_EQ(5, mem[1]);
	EXPECT_EQ(0, oms_ctx_destroy(ini));
	EXPECT_EQ(0, oms_ctx_destroy(tgt));
}

TEST_HARNESS_MAIN
