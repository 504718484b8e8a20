// SPDX-License-Identifier: MIT
/*
 * Litmus L01-L13: store classes (seed 000).  Each forbidden outcome is
 * checked over many random schedules of the model fabric with the store
 * orderer, and the same program is run with the orderer bypassed to show
 * the outcome does happen without it (the check can fail).
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include "harness.h"
#include "engine_model.h"

#define TRIALS 100000
#define W OMS_STORE_WEAK
#define S OMS_STORE_STRONG
#define U OMS_STORE_UNORDERED

static const struct oms_so_chan_cfg two_dest_acked[] = {
	{ .dest = 0, .kind = OMS_CHAN_ACKED },
	{ .dest = 1, .kind = OMS_CHAN_ACKED },
};
static const struct oms_so_chan_cfg one_dest_acked[] = {
	{ .dest = 0, .kind = OMS_CHAN_ACKED },
	{ .dest = 0, .kind = OMS_CHAN_ACKED },
};
/* ch0 posted (MMIO or an in-order QP), ch1 acked, one destination */
static const struct oms_so_chan_cfg posted_then_acked[] = {
	{ .dest = 0, .kind = OMS_CHAN_POSTED },
	{ .dest = 0, .kind = OMS_CHAN_ACKED },
};
/* ch0 host memory (acked), ch1 the NIC's doorbell page (posted) */
static const struct oms_so_chan_cfg mem_and_mmio[] = {
	{ .dest = 0, .kind = OMS_CHAN_ACKED },
	{ .dest = 1, .kind = OMS_CHAN_POSTED },
};

typedef void (*program_fn)(struct t_fabric *f);

/* Set by a test whose program must be wholly submitted before anything
 * lands (to pin which stores are held). */
static int submit_first;

struct outcome {
	unsigned long trials, violations, unsettled;
	uint32_t first_order[T_MAX_OPS];	/* vis_time of the last trial */
	struct t_fabric last;
};

/* Run @trials random schedules; end each program with a global fence so
 * posted channels are flushed and the orderer can drain. */
static void run(const struct oms_so_chan_cfg *cfg, uint32_t nch, int bypass,
		program_fn prog, unsigned long trials, uint64_t seed,
		int (*pred)(const struct t_fabric *), unsigned long *pred_hits,
		struct outcome *o)
{
	struct t_rng r;

	memset(o, 0, sizeof(*o));
	if (pred_hits)
		*pred_hits = 0;
	t_rng_init(&r, seed);
	for (unsigned long t = 0; t < trials; t++) {
		struct t_fabric f;

		t_fab_init(&f, nch, cfg, 2, bypass);
		prog(&f);
		t_fab_fence(&f, OMS_SO_ALL);
		while (submit_first && f.pc < f.nops) {
			struct t_event ev = { .kind = T_EV_SUBMIT };

			t_fab_step(&f, &ev);
		}
		t_fab_run_random(&f, &r, 10000);
		o->violations += f.violations;
		o->unsettled += !t_fab_settled(&f);
		if (pred && pred(&f))
			(*pred_hits)++;
		if (t + 1 == trials)
			o->last = f;
		t_fab_fini(&f);
	}
	o->trials = trials;
}

/* The ordered run shows 0 forbidden outcomes and always drains; the
 * bypassed run shows at least one. */
#define EXPECT_FORBIDDEN_ONLY_WITHOUT_ORDER(cfg, prog)			\
	do {								\
		struct outcome o;					\
		uint64_t seed = t_seed(0x1f2e3d);			\
		run(cfg, 2, 0, prog, TRIALS, seed, NULL, NULL, &o);	\
		TH_LOG("ordered: %lu trials, %lu forbidden (seed %#lx)", \
		       o.trials, o.violations, (unsigned long)seed);	\
		ASSERT_EQ(0, o.violations) TH_LOG("%s", o.last.why);	\
		ASSERT_EQ(0, o.unsettled);				\
		run(cfg, 2, 1, prog, TRIALS, seed, NULL, NULL, &o);	\
		TH_LOG("bypassed: %lu trials, %lu forbidden",		\
		       o.trials, o.violations);				\
		ASSERT_GT(o.violations, 0);				\
	} while (0)

enum { A = 0, B = 1, F = 2, X = 3, Y = 4 };

static void l01_one_dest(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);
	t_fab_store(f, W, 1, B, 1);
	t_fab_store(f, S, 0, F, 1);
}

static void l01_two_dest(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);
	t_fab_store(f, W, 1, B, 1);
	t_fab_store(f, S, 1, F, 1);
}

TEST(litmus_L01_mp_weak_strong)
{
	EXPECT_FORBIDDEN_ONLY_WITHOUT_ORDER(one_dest_acked, l01_one_dest);
	EXPECT_FORBIDDEN_ONLY_WITHOUT_ORDER(two_dest_acked, l01_two_dest);
}

static void l02(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);	/* A at D1 */
	t_fab_store(f, S, 1, F, 1);	/* F at D2 */
}

static int l02_a_after_f(const struct t_fabric *f)
{
	return f->vis_time[0] > f->vis_time[1];
}

TEST(litmus_L02_cumulative_across_destinations)
{
	struct outcome o;
	unsigned long hits;

	run(two_dest_acked, 2, 0, l02, TRIALS, t_seed(2), l02_a_after_f, &hits, &o);
	ASSERT_EQ(0, hits);
	ASSERT_EQ(0, o.violations);
	ASSERT_EQ(0, o.unsettled);
	run(two_dest_acked, 2, 1, l02, TRIALS, t_seed(2), l02_a_after_f, &hits, &o);
	TH_LOG("bypassed: A@D1 landed after F@D2 in %lu of %lu", hits, o.trials);
	ASSERT_GT(hits, 0);
}

static void l03_same(struct t_fabric *f)
{
	t_fab_store(f, S, 0, X, 1);
	t_fab_store(f, S, 1, Y, 1);
}

static void l03_other(struct t_fabric *f)
{
	t_fab_store(f, S, 0, X, 1);
	t_fab_store(f, S, 1, Y, 1);
}

TEST(litmus_L03_strong_strong)
{
	EXPECT_FORBIDDEN_ONLY_WITHOUT_ORDER(one_dest_acked, l03_same);
	EXPECT_FORBIDDEN_ONLY_WITHOUT_ORDER(two_dest_acked, l03_other);
}

/* data, wqe, dbrec in host memory (ch0), db on the NIC page (ch1) */
static void l04(struct t_fabric *f)
{
	for (uint32_t n = 1; n <= 2; n++) {
		t_fab_store(f, W, 0, (uint8_t)(3 * n - 3), n);	/* data */
		t_fab_store(f, W, 0, (uint8_t)(3 * n - 2), n);	/* wqe */
		t_fab_store(f, S, 0, 6, n);			/* dbrec */
		t_fab_store(f, S, 1, 7, n);			/* db */
	}
}

static int l04_db_early(const struct t_fabric *f)
{
	const uint32_t *t = f->vis_time;

	/* db1 = op 3, db2 = op 7 */
	return t[3] < t[0] || t[3] < t[1] || t[3] < t[2] || t[7] < t[3] ||
	       t[7] < t[4] || t[7] < t[5] || t[7] < t[6];
}

TEST(litmus_L04_doorbell_chain)
{
	struct outcome o;
	unsigned long hits;

	run(mem_and_mmio, 2, 0, l04, TRIALS, t_seed(4), l04_db_early, &hits, &o);
	ASSERT_EQ(0, hits);
	ASSERT_EQ(0, o.violations) TH_LOG("%s", o.last.why);
	ASSERT_EQ(0, o.unsettled);
	ASSERT_EQ(2, o.last.mem[0][6]);	/* dbrec ends at the last value */
	run(mem_and_mmio, 2, 1, l04, TRIALS, t_seed(4), l04_db_early, &hits, &o);
	TH_LOG("bypassed: a doorbell overtook its WQE/data in %lu of %lu",
	       hits, o.trials);
	ASSERT_GT(hits, 0);
}

static void l05(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);
	t_fab_store(f, W, 0, B, 1);
}

static int b_before_a(const struct t_fabric *f)
{
	return f->vis_time[1] < f->vis_time[0];
}

TEST(litmus_L05_weak_weak_may_reorder)
{
	struct outcome o;
	unsigned long hits;

	run(one_dest_acked, 2, 0, l05, TRIALS, t_seed(5), b_before_a, &hits, &o);
	TH_LOG("B landed before A in %lu of %lu ordered trials", hits, o.trials);
	ASSERT_GT(hits, 0);
	ASSERT_EQ(0, o.last.so.ctr.held);	/* never held */
	ASSERT_EQ(0, o.unsettled);
}

static void l06(struct t_fabric *f)
{
	t_fab_store(f, U, 0, A, 1);
	t_fab_store(f, S, 1, F, 1);
}

static int f_before_a(const struct t_fabric *f)
{
	return f->vis_time[1] < f->vis_time[0];
}

TEST(litmus_L06_unordered_outside_ordered_view)
{
	struct outcome o;
	unsigned long hits;
	struct t_fabric f;
	struct t_event ev[64];
	uint32_t n;

	run(two_dest_acked, 2, 0, l06, TRIALS, t_seed(6), f_before_a, &hits, &o);
	TH_LOG("F landed before A in %lu of %lu", hits, o.trials);
	ASSERT_GT(hits, 0);
	ASSERT_EQ(0, o.last.so.ctr.held);
	ASSERT_EQ(0, o.unsettled);

	/* A's destination stalls for ever: F still leaves and lands. */
	ASSERT_EQ(0, t_fab_init(&f, 2, two_dest_acked, 2, 0));
	l06(&f);
	for (int guard = 0; guard < 100; guard++) {
		uint32_t k;

		n = t_fab_events(&f, ev, 64);
		for (k = 0; k < n && ev[k].kind == T_EV_DELIVER_U; k++)
			;
		if (k == n)
			break;
		t_fab_step(&f, &ev[k]);
	}
	ASSERT_EQ(1, f.delivered[1]);
	ASSERT_EQ(0, f.delivered[0]);
	ASSERT_EQ(1, oms_so_quiescent(&f.so));
	t_fab_fini(&f);
}

static void l07_ww(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);
	t_fab_store(f, W, 0, A, 2);
}

static void l07_sw(struct t_fabric *f)
{
	t_fab_store(f, S, 0, A, 1);
	t_fab_store(f, W, 0, A, 2);
}

static void l07_ws(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);
	t_fab_store(f, S, 0, A, 2);
}

/* A strong store held behind an unacked store on another channel, then a
 * weak store to the same byte on a third path: it must not overtake. */
static void l07_held_cross_channel(struct t_fabric *f)
{
	t_fab_store(f, W, 1, X, 5);
	t_fab_store(f, S, 0, A, 1);
	t_fab_store(f, W, 1, A, 2);
}

static int a_not_2(const struct t_fabric *f)
{
	return f->mem[0][A] != 2;
}

TEST(litmus_L07_same_address)
{
	program_fn progs[] = { l07_ww, l07_sw, l07_ws, l07_held_cross_channel };
	struct outcome o;
	unsigned long hits;

	for (unsigned int i = 0; i < 4; i++) {
		submit_first = i == 3;
		run(one_dest_acked, 2, 0, progs[i], TRIALS, t_seed(7), a_not_2,
		    &hits, &o);
		ASSERT_EQ(0, hits) TH_LOG("program %u ended with A != 2", i);
		ASSERT_EQ(0, o.unsettled);
	}
	run(one_dest_acked, 2, 1, l07_held_cross_channel, TRIALS, t_seed(7),
	    a_not_2, &hits, &o);
	submit_first = 0;
	TH_LOG("bypassed cross-channel: A ended as 1 in %lu of %lu", hits,
	       o.trials);
	ASSERT_GT(hits, 0);
}

TEST(litmus_L08_issuer_never_stalls)
{
	struct oms_so so;
	struct oms_so_store st = { .len = 8, .cls = W, .chan = 0 };
	struct oms_so_action act[4];
	uint64_t seq;

	ASSERT_EQ(0, oms_so_init(&so, 2, two_dest_acked, 2, 16));
	/* 1000 weak stores outstanding, none acknowledged */
	for (int i = 0; i < 1000; i++) {
		st.addr = (uint64_t)i * 8;
		ASSERT_EQ(OMS_SO_ISSUE, oms_so_submit(&so, &st, &seq));
	}
	/* the strong store returns at once, held, no ack consumed */
	st.cls = S;
	st.chan = 1;
	st.cookie = 42;
	ASSERT_EQ(OMS_SO_HELD, oms_so_submit(&so, &st, &seq));
	ASSERT_EQ(0, oms_so_progress(&so, act, 4));
	ASSERT_EQ(1000, so.ctr.pending_ack);
	/* acks trickle in; the store leaves with the last one, by progress */
	ASSERT_EQ(0, oms_so_ack(&so, 0, 999, 0));
	ASSERT_EQ(0, oms_so_progress(&so, act, 4));
	ASSERT_EQ(0, oms_so_ack(&so, 0, 1000, 0));
	ASSERT_EQ(1, oms_so_progress(&so, act, 4));
	ASSERT_EQ(OMS_SO_ACT_ISSUE, act[0].type);
	ASSERT_EQ(42, act[0].cookie);
	oms_so_destroy(&so);
}

static void l09(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);
	t_fab_store(f, S, 0, F, 1);
	t_fab_store(f, W, 0, B, 1);
	t_fab_store(f, S, 0, X, 1);
}

TEST(litmus_L09_posted_channel_fast_path)
{
	static const struct oms_so_chan_cfg posted[] = {
		{ .dest = 0, .kind = OMS_CHAN_POSTED },
		{ .dest = 1, .kind = OMS_CHAN_POSTED },
	};
	struct outcome o;
	struct t_fabric f;
	uint64_t seq;
	struct oms_so_store st = { .len = 1, .chan = 0 };

	run(posted, 2, 0, l09, TRIALS, t_seed(9), NULL, NULL, &o);
	ASSERT_EQ(0, o.violations);
	ASSERT_EQ(0, o.unsettled);
	/* every strong store went straight out: nothing held but the final
	 * fence's flush */
	ASSERT_EQ(0, o.last.so.ctr.held);
	ASSERT_EQ(2, o.last.so.ctr.fast_path);

	/* direct: a strong store behind unacked posted stores is issued */
	ASSERT_EQ(0, t_fab_init(&f, 2, posted, 2, 0));
	for (int i = 0; i < 3; i++) {
		st.cls = i == 2 ? S : W;
		st.addr = (uint64_t)i;
		ASSERT_EQ(OMS_SO_ISSUE, oms_so_submit(&f.so, &st, &seq));
		ASSERT_EQ((uint64_t)i, seq);
	}
	t_fab_fini(&f);
}

static void l10(struct t_fabric *f)
{
	t_fab_store(f, W, 0, A, 1);	/* posted */
	t_fab_store(f, W, 0, B, 1);	/* posted */
	t_fab_store(f, S, 1, F, 1);	/* acked: switch */
}

TEST(litmus_L10_channel_switch_flush)
{
	struct oms_so so;
	struct oms_so_store st = { .len = 1, .cls = W, .chan = 0 };
	struct oms_so_action act[4];
	uint64_t seq;

	EXPECT_FORBIDDEN_ONLY_WITHOUT_ORDER(posted_then_acked, l10);

	ASSERT_EQ(0, oms_so_init(&so, 2, posted_then_acked, 1, 8));
	ASSERT_EQ(OMS_SO_ISSUE, oms_so_submit(&so, &st, &seq));
	st.cls = S;
	st.chan = 1;
	st.addr = 1;
	st.cookie = 7;
	ASSERT_EQ(OMS_SO_HELD, oms_so_submit(&so, &st, &seq));
	ASSERT_EQ(1, oms_so_progress(&so, act, 4));
	ASSERT_EQ(OMS_SO_ACT_FLUSH, act[0].type);
	ASSERT_EQ(0, act[0].chan);
	ASSERT_EQ(1, act[0].seq);
	/* no second flush while one is in flight, store still held */
	ASSERT_EQ(0, oms_so_progress(&so, act, 4));
	ASSERT_EQ(0, oms_so_flush_done(&so, 0, 1, 0));
	ASSERT_EQ(1, oms_so_progress(&so, act, 4));
	ASSERT_EQ(OMS_SO_ACT_ISSUE, act[0].type);
	ASSERT_EQ(7, act[0].cookie);
	ASSERT_EQ(1, so.ctr.flushes);
	oms_so_destroy(&so);
}

TEST(litmus_L11_mixed_history)
{
	static const struct oms_so_chan_cfg three[] = {
		{ .dest = 0, .kind = OMS_CHAN_POSTED },
		{ .dest = 0, .kind = OMS_CHAN_ACKED },
		{ .dest = 1, .kind = OMS_CHAN_ACKED },
	};

	for (int flush_first = 0; flush_first < 2; flush_first++) {
		struct oms_so so;
		struct oms_so_store st = { .len = 1, .cls = W };
		struct oms_so_action act[4];
		uint64_t seq, tok;

		ASSERT_EQ(0, oms_so_init(&so, 3, three, 2, 8));
		st.chan = 0;
		ASSERT_EQ(OMS_SO_ISSUE, oms_so_submit(&so, &st, &seq));
		st.chan = 1;
		ASSERT_EQ(OMS_SO_ISSUE, oms_so_submit(&so, &st, &seq));
		st.chan = 2;
		st.cls = S;
		ASSERT_EQ(OMS_SO_HELD, oms_so_submit(&so, &st, &seq));
		ASSERT_EQ(1, oms_so_progress(&so, act, 4));
		ASSERT_EQ(OMS_SO_ACT_FLUSH, act[0].type);
		tok = act[0].seq;
		if (flush_first) {
			ASSERT_EQ(0, oms_so_flush_done(&so, 0, tok, 0));
			ASSERT_EQ(0, oms_so_progress(&so, act, 4));
			ASSERT_EQ(0, oms_so_ack(&so, 1, 1, 0));
		} else {
			ASSERT_EQ(0, oms_so_ack(&so, 1, 1, 0));
			ASSERT_EQ(0, oms_so_progress(&so, act, 4));
			ASSERT_EQ(0, oms_so_flush_done(&so, 0, tok, 0));
		}
		ASSERT_EQ(1, oms_so_progress(&so, act, 4));
		ASSERT_EQ(OMS_SO_ACT_ISSUE, act[0].type);
		ASSERT_EQ(2, act[0].chan);
		oms_so_destroy(&so);
	}
}

static void l12(struct t_fabric *f)
{
	t_fab_store(f, W, 1, X, 1);
	t_fab_store(f, S, 0, A, 1);
	t_fab_store(f, S, 1, B, 1);
	t_fab_store(f, S, 0, F, 1);
	t_fab_store(f, S, 1, Y, 1);
}

static int strong_out_of_order(const struct t_fabric *f)
{
	for (int i = 2; i <= 4; i++)
		if (f->vis_time[i] < f->vis_time[i - 1])
			return 1;
	return 0;
}

TEST(litmus_L12_back_to_back_strong)
{
	struct outcome o;
	unsigned long hits;

	run(two_dest_acked, 2, 0, l12, TRIALS, t_seed(12), strong_out_of_order,
	    &hits, &o);
	ASSERT_EQ(0, hits);
	ASSERT_EQ(0, o.violations);
	ASSERT_EQ(0, o.unsettled);
	run(two_dest_acked, 2, 1, l12, TRIALS, t_seed(12), strong_out_of_order,
	    &hits, &o);
	ASSERT_GT(hits, 0);
}

TEST(litmus_L13_counter_conservation)
{
	struct t_rng r;
	unsigned long trials = t_trials(5000);

	t_rng_init(&r, t_seed(13));
	for (unsigned long t = 0; t < trials; t++) {
		struct t_fabric f;
		unsigned int n = 1 + t_rng_below(&r, 12), nord = 0;

		ASSERT_EQ(0, t_fab_init(&f, 2, posted_then_acked, 1, 0));
		for (unsigned int i = 0; i < n; i++) {
			uint8_t cls = (uint8_t)t_rng_below(&r, 3);

			nord += cls != U;
			t_fab_store(&f, cls, (uint16_t)t_rng_below(&r, 2),
				    (uint8_t)t_rng_below(&r, T_NADDR), i + 1);
		}
		t_fab_fence(&f, OMS_SO_ALL);
		t_fab_run_random(&f, &r, 10000);
		ASSERT_TRUE(t_fab_settled(&f)) TH_LOG("trial %lu", t);
		ASSERT_EQ(0, f.so.ctr.pending_issue);
		ASSERT_EQ(0, f.so.ctr.pending_ack);
		ASSERT_EQ(nord, f.so.ctr.issue_inc);
		ASSERT_EQ(nord, f.so.ctr.issue_dec);
		ASSERT_EQ(nord, f.so.ctr.ack_inc);
		ASSERT_EQ(nord, f.so.ctr.ack_dec);
		ASSERT_EQ(n - nord, f.so.ctr.unordered);
		ASSERT_EQ(0, f.violations);
		t_fab_fini(&f);
	}
}

TEST_HARNESS_MAIN
