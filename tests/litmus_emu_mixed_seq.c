// SPDX-License-Identifier: MIT
/*
 * Litmus L36 on the emulated device with chaos on: destination program
 * order (docs/ordering.md rule D1).  With OMS_CTX_F_DEST_SEQ every ordered
 * operation to a destination is performed there in program order, even
 * while a strong store of the context is held at the source for another
 * destination:
 *   WO(A@D2) x NSLOW; SO(F@D1); op(G@D1); get(X@D1)
 * F is held until the D2 channel is flushed (the NSLOW puts make that
 * path slow); op is a weak put (even instances) or a fetch-and-add (odd
 * ones).  Forbidden: G applied before F; the get read before F.
 * Observers (the device's observer, oms_emu_set_observer(), called with
 * the device stopped when a put or an atomic becomes visible): a
 * visibility stamp per word for G and F, and a host that writes X = 1 the
 * moment F is visible (oms_emu_host_write(): squashing speculative reads
 * of X as oms_mr_write does): the get returns 0 exactly when it read
 * before F was visible.
 * Modes (FIXTURE_VARIANT): DEST_SEQ with the read order RC_OPT, RC, NIC.
 * t_trials(1 000 000) instances per test (100 000 under ASan) split over
 * the three modes, both forbidden outcomes checked in every instance.
 * Control: the same program on acknowledged channels (DEST_SEQ off, rule
 * D1 not claimed): G before F and the early get must both show.
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
#define NMODES		3ul
#define CONTROL_MAX	400000ul
#define BATCH		512u	/* program instances per quiet */
#define SLOTS		8u	/* words per instance and destination */
#define NSLOW		4u	/* puts to D2 ahead of F */
#define NINI		16	/* initiator contexts */

enum { F = 0, G = 1, X = 2 };	/* at D1; A is words 0..NSLOW-1 at D2 */

/*
 * Targets D1 (node 1) and D2 (node 2).  Instance i owns words
 * i * SLOTS .. i * SLOTS + SLOTS - 1 at each.  @stamp: when each word of
 * D1 became visible (one clock).  When F of an instance becomes visible,
 * the host writes X = 1 for it.
 */
struct seq_lab {
	struct t_lab lab;
	uint64_t *stamp;
	uint32_t d1_region;
	uint64_t clock, one;
	uint64_t got[BATCH];
};

static void seq_observe(void *arg, const struct oms_emu_event *ev)
{
	struct seq_lab *l = arg;

	if (ev->kind == OMS_EMU_EV_GET || ev->region != l->d1_region)
		return;
	l->clock++;
	for (uint64_t w = ev->off / 8; w <= (ev->off + ev->len - 1) / 8; w++) {
		l->stamp[w] = l->clock;
		if (w % SLOTS != F)
			continue;
		oms_emu_host_write(l->lab.emu, l->d1_region, (w - F + X) * 8,
				   &l->one, 8);
	}
}

static int seq_open(struct seq_lab *l, uint32_t flags, uint32_t order,
		    uint64_t seed)
{
	const struct t_lab_cfg cfg = {
		.nini = NINI, .ndest = 2, .words = (size_t)BATCH * SLOTS,
		.flags = flags, .seed = seed, .read_order_set = 1,
		.read_order = order,
	};

	memset(l, 0, sizeof(*l));
	memset(l->got, 0xff, sizeof(l->got));
	l->one = 1;
	l->stamp = calloc(cfg.words, 8);
	if (!l->stamp || t_lab_open(&l->lab, &cfg))
		return -1;
	l->d1_region = l->lab.r[1].region;
	return oms_emu_set_observer(l->lab.emu, seq_observe, l);
}

static void seq_close(struct seq_lab *l)
{
	t_lab_close(&l->lab);
	free(l->stamp);
}

static uint64_t off_of(uint32_t i, uint32_t w)
{
	return ((uint64_t)i * SLOTS + w) * 8;
}

static int l36(struct seq_lab *l, struct oms_ctx *c, uint32_t i)
{
	int e = 0;

	for (uint32_t a = 0; a < NSLOW; a++)
		e |= oms_put(c, &l->lab.r[2], off_of(i, a), &l->one, 8,
			     OMS_STORE_WEAK);
	e |= oms_put(c, &l->lab.r[1], off_of(i, F), &l->one, 8, OMS_STORE_STRONG);
	if (i % 2)
		e |= oms_atomic_fadd(c, &l->lab.r[1], off_of(i, G), 1, NULL);
	else
		e |= oms_put(c, &l->lab.r[1], off_of(i, G), &l->one, 8,
			     OMS_STORE_WEAK);
	e |= oms_get(c, &l->got[i], &l->lab.r[1], off_of(i, X), 8,
		     OMS_READ_RELAXED);
	return e;
}

struct res {
	unsigned long trials, g_first, get_first, errors;
};

static struct res l36_run(struct seq_lab *l, uint32_t flags, uint32_t order,
			  uint64_t seed, unsigned long trials, int stop_on_hit)
{
	struct res r = { 0 };

	if (seq_open(l, flags, order, seed)) {
		r.errors++;
		goto out;
	}
	while (r.trials < trials &&
	       !(stop_on_hit && r.g_first && r.get_first)) {
		for (uint32_t i = 0; i < BATCH; i++)
			r.errors += l36(l, l->lab.ini[i % NINI], i) != 0;
		for (int k = 0; k < NINI; k++)
			r.errors += oms_quiet(l->lab.ini[k]) != 0;
		for (uint32_t i = 0; i < BATCH; i++) {
			uint64_t sf = l->stamp[i * SLOTS + F];
			uint64_t sg = l->stamp[i * SLOTS + G];

			r.g_first += !sf || sg < sf;
			r.get_first += l->got[i] == 0;
		}
		r.trials += BATCH;
		/* nothing outstanding: reset words, stamps and results */
		t_lab_zero(&l->lab);
		memset(l->stamp, 0, (size_t)BATCH * SLOTS * 8);
		memset(l->got, 0xff, sizeof(l->got));
	}
out:
	seq_close(l);
	return r;
}

FIXTURE(seq) {
	struct seq_lab *l;
};

FIXTURE_VARIANT(seq) {
	uint32_t order;
};

FIXTURE_VARIANT_ADD(seq, rc_opt) { .order = OMS_ORDER_RC_OPT };
FIXTURE_VARIANT_ADD(seq, rc) { .order = OMS_ORDER_RC };
FIXTURE_VARIANT_ADD(seq, nic) { .order = OMS_ORDER_NIC };

FIXTURE_SETUP(seq)
{
	self->l = calloc(1, sizeof(*self->l));
	ASSERT_NE(NULL, self->l);
}

FIXTURE_TEARDOWN(seq)
{
	free(self->l);
}

TEST_F(seq, litmus_L36_destination_program_order_on_emu)
{
	uint64_t seed = t_seed(0x3601);
	struct res r = l36_run(self->l, OMS_CTX_F_DEST_SEQ, variant->order,
			       seed, t_trials(DEFAULT_TRIALS) / NMODES, 0);

	TH_LOG("L36 DEST_SEQ: %lu instances, %lu with G applied before F, "
	       "%lu with the get read before F, %lu errors (chaos seed %#llx)",
	       r.trials, r.g_first, r.get_first, r.errors,
	       (unsigned long long)seed);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(0, r.g_first);
	EXPECT_EQ(0, r.get_first);
	r = l36_run(self->l, 0, variant->order, seed, CONTROL_MAX, 1);
	TH_LOG("L36 control (acknowledged channels, D1 not claimed): G before "
	       "F %lu times, get before F %lu times in %lu instances",
	       r.g_first, r.get_first, r.trials);
	EXPECT_EQ(0, r.errors);
	EXPECT_GT(r.g_first, 0);
	EXPECT_GT(r.get_first, 0);
}

TEST_HARNESS_MAIN
