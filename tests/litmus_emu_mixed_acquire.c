// SPDX-License-Identifier: MIT
/*
 * Litmus L34 and L35 on the emulated device with chaos on: an acquire get
 * orders every later operation of its context (docs/ordering.md rule A1),
 * on its destination and on others.
 *   L34 acq(F@D1); put(Y@Dn), n = 1 and 2, the put weak or unordered:
 *       forbidden: Y visible before the acquire read F.  The observer is
 *       a host that writes F = 1 the moment it sees Y (the device's
 *       observer, oms_emu_set_observer(): called with the device stopped
 *       when a put becomes visible; oms_emu_host_write() squashes
 *       speculative reads of F like oms_mr_write does), so the acquire
 *       returns 1 exactly when it read after Y was visible.
 *   L34 load buffering, two contexts on two threads: acq(X@D1); put(Y@D2)
 *       || acq(Y@D2); put(X@D1): forbidden: both acquires return 1.
 *   L35 acq(F@D1); get(Y@D2): a host thread writes Y then F
 *       (oms_mr_write, in that order, values rising): forbidden: the new F
 *       with an older Y.
 * Modes (FIXTURE_VARIANT "mode"): acknowledged channels and
 * OMS_CTX_F_DEST_SEQ, each with the read order RC_OPT, RC and NIC.  Each
 * forbidden outcome is counted over t_trials(1 000 000) program instances
 * per test split evenly over the six modes (100 000 under ASan): batches
 * of instances, each on its own words, spread over several initiator
 * contexts.  Controls: the same program with OMS_CTX_F_NO_ORDERING (the
 * acquire is then a relaxed get) must show the forbidden outcome.
 */
#include <pthread.h>
#include <sched.h>
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
#define NMODES		6ul
#define CONTROL_MAX	400000ul
#define BATCH		512u	/* program instances per quiet */
#define SLOTS		4u	/* words per instance and destination */
#define NDEST		3	/* node 0: initiators; 1 = D1, 2 = D2 */
#define NINI		16	/* initiator contexts */

enum { F = 0, Y = 1, X = 2 };

/*
 * The lab: targets D1 and D2, NINI initiators.  Instance i owns words
 * i * SLOTS .. i * SLOTS + SLOTS - 1 at each destination.  A reaction
 * (@react_*): when word @react_sw of an instance becomes visible at
 * @react_sd, the host writes 1 into word @react_dw of the same instance at
 * @react_dd, atomically with that visibility.
 */
struct lab {
	struct t_lab lab;	/* the mode's device, targets, initiators */
	int react_sd, react_sw, react_dd, react_dw;	/* sd 0: none */
	uint64_t one;
	uint64_t got[BATCH][SLOTS];
};

static void observe(void *arg, const struct oms_emu_event *ev)
{
	struct lab *l = arg;
	int d = t_lab_dest_of(&l->lab, ev->region);

	if (d < 0 || ev->kind == OMS_EMU_EV_GET || d != l->react_sd)
		return;
	for (uint64_t w = ev->off / 8; w <= (ev->off + ev->len - 1) / 8; w++) {
		uint64_t to = w - w % SLOTS + (uint64_t)l->react_dw;

		if (w % SLOTS != (uint64_t)l->react_sw)
			continue;
		oms_emu_host_write(l->lab.emu, l->lab.r[l->react_dd].region, to * 8,
				   &l->one, 8);
	}
}

struct mode {
	uint32_t flags, order;
	uint64_t seed;
};

static int lab_open(struct lab *l, const struct mode *m, uint32_t flags)
{
	const struct t_lab_cfg cfg = {
		.nini = NINI, .ndest = NDEST - 1,
		.words = (size_t)BATCH * SLOTS, .flags = flags,
		.seed = m->seed, .read_order_set = 1, .read_order = m->order,
	};

	memset(l, 0, sizeof(*l));
	l->one = 1;
	if (t_lab_open(&l->lab, &cfg))
		return -1;
	return oms_emu_set_observer(l->lab.emu, observe, l);
}

static void lab_close(struct lab *l)
{
	t_lab_close(&l->lab);
}

/* Reset every word of every destination; nothing may be outstanding. */
static void lab_reset(struct lab *l)
{
	t_lab_zero(&l->lab);
	memset(l->got, 0, sizeof(l->got));
}

static uint64_t off_of(uint32_t i, int w)
{
	return ((uint64_t)i * SLOTS + (uint64_t)w) * 8;
}

struct res {
	unsigned long trials, hits, errors;
};

FIXTURE(mode) {
	struct mode m;
	struct lab *l;
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
	self->m.flags = variant->flags;
	self->m.order = variant->order;
	self->l = calloc(1, sizeof(*self->l));
	ASSERT_NE(NULL, self->l);
}

FIXTURE_TEARDOWN(mode)
{
	free(self->l);
}

/* ---- L34: acq(F@D1); put(Y@Dn) ------------------------------------- */

/* @yd: Y's destination.  Instance i: Y weak (even i) or unordered. */
static struct res l34_run(struct lab *l, const struct mode *m, uint32_t flags,
			  int yd, unsigned long trials, int stop_on_hit)
{
	struct res r = { 0 };

	if (lab_open(l, m, flags)) {
		r.errors++;
		goto out;
	}
	l->react_sd = yd;
	l->react_sw = Y;
	l->react_dd = 1;
	l->react_dw = F;
	while (r.trials < trials && !(stop_on_hit && r.hits)) {
		for (uint32_t i = 0; i < BATCH; i++) {
			struct oms_ctx *c = l->lab.ini[i % NINI];

			r.errors += oms_get(c, &l->got[i][F], &l->lab.r[1],
					    off_of(i, F), 8,
					    OMS_READ_ACQUIRE) != 0;
			r.errors += oms_put(c, &l->lab.r[yd], off_of(i, Y), &l->one,
					    8, i % 2 ? OMS_STORE_UNORDERED :
						       OMS_STORE_WEAK) != 0;
		}
		for (int k = 0; k < NINI; k++)
			r.errors += oms_quiet(l->lab.ini[k]) != 0;
		for (uint32_t i = 0; i < BATCH; i++)
			r.hits += l->got[i][F] == 1;
		r.trials += BATCH;
		lab_reset(l);
	}
out:
	lab_close(l);
	return r;
}

static void l34_check(struct __test_metadata *_metadata, struct lab *l,
		      const struct mode *m, int yd)
{
	unsigned long n = t_trials(DEFAULT_TRIALS) / NMODES;
	struct res r = l34_run(l, m, m->flags, yd, n, 0);

	TH_LOG("L34 Y@D%d: ordered: %lu instances, %lu saw Y visible before "
	       "the acquire read F, %lu errors (chaos seed %#llx)", yd,
	       r.trials, r.hits, r.errors, (unsigned long long)m->seed);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(0, r.hits);
	r = l34_run(l, m, m->flags | OMS_CTX_F_NO_ORDERING, yd, CONTROL_MAX, 1);
	TH_LOG("L34 Y@D%d: control (ordering off): forbidden seen %lu times "
	       "in %lu instances", yd, r.hits, r.trials);
	EXPECT_EQ(0, r.errors);
	EXPECT_GT(r.hits, 0);
}

TEST_F(mode, litmus_L34_acquire_then_put_same_dest_on_emu)
{
	self->m.seed = t_seed(0x3401);
	l34_check(_metadata, self->l, &self->m, 1);
}

TEST_F(mode, litmus_L34_acquire_then_put_other_dest_on_emu)
{
	self->m.seed = t_seed(0x3402);
	l34_check(_metadata, self->l, &self->m, 2);
}

/* ---- L34 load buffering: two contexts, two threads ---------------- */

#define LB_CTX	4	/* contexts per thread */

struct lb_side {
	struct lab *l;
	struct oms_ctx *c[LB_CTX];
	pthread_barrier_t *bar;
	int rd, wd;		/* acquire at rd (word X or Y), put at wd */
	int rw, ww;
	unsigned long rounds, errors;
};

static void *lb_thread(void *arg)
{
	struct lb_side *s = arg;
	struct lab *l = s->l;

	for (unsigned long n = 0; n < s->rounds; n++) {
		pthread_barrier_wait(s->bar);	/* words reset */
		for (uint32_t i = 0; i < BATCH; i++) {
			struct oms_ctx *c = s->c[i % LB_CTX];

			s->errors += oms_get(c, &l->got[i][s->rw], &l->lab.r[s->rd],
					     off_of(i, s->rw), 8,
					     OMS_READ_ACQUIRE) != 0;
			s->errors += oms_put(c, &l->lab.r[s->wd], off_of(i, s->ww),
					     &l->one, 8, OMS_STORE_WEAK) != 0;
		}
		for (int k = 0; k < LB_CTX; k++)
			s->errors += oms_quiet(s->c[k]) != 0;
		pthread_barrier_wait(s->bar);	/* results ready */
		pthread_barrier_wait(s->bar);	/* checked */
	}
	return NULL;
}

/* Side A: acq(X@D1); put(Y@D2).  Side B: acq(Y@D2); put(X@D1). */
static struct res lb_run(struct lab *l, const struct mode *m, uint32_t flags,
			 unsigned long trials, int stop_on_hit)
{
	struct lb_side s[2] = {
		{ .rd = 1, .rw = X, .wd = 2, .ww = Y },
		{ .rd = 2, .rw = Y, .wd = 1, .ww = X },
	};
	unsigned long rounds = (trials + BATCH - 1) / BATCH;
	pthread_barrier_t bar;
	pthread_t th[2];
	struct res r = { 0 };

	if (lab_open(l, m, flags)) {
		r.errors++;
		lab_close(l);
		return r;
	}
	/* the lab's own initiators serve as the two sides' contexts */
	pthread_barrier_init(&bar, NULL, 3);
	for (int k = 0; k < 2; k++) {
		s[k].l = l;
		s[k].bar = &bar;
		s[k].rounds = rounds;
		memcpy(s[k].c, &l->lab.ini[k * LB_CTX], sizeof(s[k].c));
		pthread_create(&th[k], NULL, lb_thread, &s[k]);
	}
	for (unsigned long n = 0; n < rounds; n++) {
		int stop;

		lab_reset(l);
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
		for (uint32_t i = 0; i < BATCH; i++)
			r.hits += l->got[i][X] == 1 && l->got[i][Y] == 1;
		r.trials += BATCH;
		stop = stop_on_hit && r.hits;
		if (stop)	/* let the threads finish early */
			s[0].rounds = s[1].rounds = n + 1;
		pthread_barrier_wait(&bar);
		if (stop)
			break;
	}
	for (int k = 0; k < 2; k++) {
		pthread_join(th[k], NULL);
		r.errors += s[k].errors;
	}
	pthread_barrier_destroy(&bar);
	lab_close(l);
	return r;
}

TEST_F(mode, litmus_L34_load_buffering_two_threads_on_emu)
{
	unsigned long n = t_trials(DEFAULT_TRIALS) / NMODES;
	struct res r;

	self->m.seed = t_seed(0x3403);
	r = lb_run(self->l, &self->m, self->m.flags, n, 0);
	TH_LOG("L34 load buffering: ordered: %lu instances, %lu with both "
	       "acquires returning 1, %lu errors (chaos seed %#llx)", r.trials,
	       r.hits, r.errors, (unsigned long long)self->m.seed);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(0, r.hits);
	r = lb_run(self->l, &self->m, self->m.flags | OMS_CTX_F_NO_ORDERING,
		   CONTROL_MAX, 1);
	TH_LOG("L34 load buffering: control (ordering off): forbidden seen "
	       "%lu times in %lu instances", r.hits, r.trials);
	EXPECT_EQ(0, r.errors);
	EXPECT_GT(r.hits, 0);
}

/* ---- L35: acq(F@D1); get(Y@D2) under a host writer ---------------- */

#define ITEMS	8u	/* instances i and i + ITEMS share their words */

struct writer {
	struct lab *l;
	pthread_t th;
	int stop;
};

/* Host: Y (at D2) then F (at D1), values rising, over ITEMS word pairs. */
static void *l35_writer(void *arg)
{
	struct writer *w = arg;
	uint64_t v = 1;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		for (uint32_t k = 0; k < ITEMS; k++) {
			oms_mr_write(w->l->lab.mr[2], off_of(k, Y), &v, 8);
			oms_mr_write(w->l->lab.mr[1], off_of(k, F), &v, 8);
		}
		if (!(++v & 7))
			sched_yield();
	}
	return NULL;
}

static struct res l35_run(struct lab *l, const struct mode *m, uint32_t flags,
			  unsigned long trials, int stop_on_hit)
{
	struct writer w = { .l = l };
	struct res r = { 0 };

	if (lab_open(l, m, flags) ||
	    pthread_create(&w.th, NULL, l35_writer, &w)) {
		r.errors++;
		lab_close(l);
		return r;
	}
	while (r.trials < trials && !(stop_on_hit && r.hits)) {
		for (uint32_t i = 0; i < BATCH; i++) {
			struct oms_ctx *c = l->lab.ini[i % NINI];
			uint32_t k = i % ITEMS;

			r.errors += oms_get(c, &l->got[i][F], &l->lab.r[1],
					    off_of(k, F), 8,
					    OMS_READ_ACQUIRE) != 0;
			r.errors += oms_get(c, &l->got[i][Y], &l->lab.r[2],
					    off_of(k, Y), 8,
					    OMS_READ_RELAXED) != 0;
		}
		for (int k = 0; k < NINI; k++)
			r.errors += oms_quiet(l->lab.ini[k]) != 0;
		for (uint32_t i = 0; i < BATCH; i++)
			r.hits += l->got[i][Y] < l->got[i][F];
		r.trials += BATCH;
	}
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	pthread_join(w.th, NULL);
	lab_close(l);
	return r;
}

TEST_F(mode, litmus_L35_acquire_then_get_other_dest_on_emu)
{
	unsigned long n = t_trials(DEFAULT_TRIALS) / NMODES;
	struct res r;

	self->m.seed = t_seed(0x3501);
	r = l35_run(self->l, &self->m, self->m.flags, n, 0);
	TH_LOG("L35: ordered: %lu instances, %lu new F with an older Y, %lu "
	       "errors (chaos seed %#llx)", r.trials, r.hits, r.errors,
	       (unsigned long long)self->m.seed);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(0, r.hits);
	r = l35_run(self->l, &self->m, self->m.flags | OMS_CTX_F_NO_ORDERING,
		    CONTROL_MAX, 1);
	TH_LOG("L35: control (ordering off): forbidden seen %lu times in %lu "
	       "instances", r.hits, r.trials);
	EXPECT_EQ(0, r.errors);
	EXPECT_GT(r.hits, 0);
}

TEST_HARNESS_MAIN
