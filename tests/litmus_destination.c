// SPDX-License-Identifier: MIT
/*
 * Litmus L27-L31 (seed 004, destination-based ordering) on oms_rob and
 * oms_rlsq.
 *
 * L27/L28 feed the reorder buffer seeded random arrival permutations.
 * L29-L31 drive the RLSQ with a small simulated host memory and a seeded
 * random scheduler that interleaves, one event at a time: a host write
 * (memory change + oms_rlsq_invalidate, atomically), the driver taking one
 * engine action, an in-flight access sampling memory, and an in-flight
 * access reporting completion.  Sampling and completion are separate events
 * so accesses overlap and finish in any order.  Every forbidden outcome has
 * a control run without the ordering that must observe it.
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
#include "engine/rlsq.h"

#define SEEDLOG(seed) TH_LOG("seed %#llx (OMS_TEST_SEED to replay)", \
			     (unsigned long long)(seed))

/* ---- L27 / L28: reorder buffer ------------------------------------------ */

TEST(litmus_L27_mmio_message_passing)
{
	uint64_t seed = t_seed(0x2027);
	unsigned long trials = t_trials(20000), t;
	unsigned long early_rob = 0, early_ctl = 0;
	struct t_rng rng;
	struct oms_rob rob;
	oms_rob_seq_t base = 0;
	uint32_t perm[16];

	t_rng_init(&rng, seed);
	ASSERT_EQ(0, oms_rob_init(&rob, 1, 16, NULL, 0));
	for (t = 0; t < trials; t++) {
		/* MMIO-Store(data 0..k-1); MMIO-Release(flag = chunk k) */
		unsigned k = 1 + t_rng_below(&rng, 15), seen_data = 0;
		int flag_early_rob = 0, flag_early_ctl = 0;
		unsigned ctl_data = 0;

		for (unsigned i = 0; i <= k; i++)
			perm[i] = i;
		t_shuffle_u32(&rng, perm, k + 1);
		for (unsigned i = 0; i <= k; i++) {
			uint64_t chunk;
			int rc;

			/* control: the device consumes in arrival order */
			if (perm[i] == k)
				flag_early_ctl |= ctl_data < k;
			else
				ctl_data++;
			rc = oms_rob_insert(&rob, 0,
					    (oms_rob_seq_t)(base + perm[i]),
					    perm[i]);
			ASSERT_TRUE(rc == 0 || rc == 1) SEEDLOG(seed);
			while (oms_rob_pop(&rob, 0, NULL, &chunk) == 1) {
				if (chunk == k)
					flag_early_rob |= seen_data < k;
				else
					seen_data++;
			}
		}
		ASSERT_EQ(k, seen_data) SEEDLOG(seed);
		early_rob += flag_early_rob;
		early_ctl += flag_early_ctl;
		base = (oms_rob_seq_t)(base + k + 1);
	}
	TH_LOG("%lu trials: flag before data through the ROB %lu, in arrival "
	       "order (control) %lu; sequence wrapped %llu times", trials,
	       early_rob, early_ctl,
	       (unsigned long long)(rob.cnt.released >> 16));
	ASSERT_EQ(0ul, early_rob) SEEDLOG(seed);
	ASSERT_GT(early_ctl, 0ul) SEEDLOG(seed);
	ASSERT_EQ(0u, rob.cnt.stale + rob.cnt.duplicate + rob.cnt.out_of_window);
	oms_rob_destroy(&rob);
}

TEST(litmus_L28_per_thread_streams)
{
	uint64_t seed = t_seed(0x2028);
	unsigned long trials = t_trials(5000), t;
	struct t_rng rng;
	struct oms_rob rob;
	uint64_t c;

	/* Deterministic: thread 1 misses seq 0, thread 2 flows. */
	ASSERT_EQ(0, oms_rob_init(&rob, 3, 32, NULL, 0));
	ASSERT_EQ(0, oms_rob_insert(&rob, 1, 1, 11));
	ASSERT_EQ(0, oms_rob_insert(&rob, 1, 2, 12));
	ASSERT_EQ(1, oms_rob_insert(&rob, 2, 0, 20));
	ASSERT_EQ(1, oms_rob_insert(&rob, 2, 1, 21));
	ASSERT_EQ(0, oms_rob_pop(&rob, 1, NULL, &c));
	ASSERT_EQ(2, oms_rob_release(&rob, 2, (uint64_t[4]){ 0 }, 4));
	ASSERT_EQ(1, oms_rob_insert(&rob, 1, 0, 10));
	ASSERT_EQ(3, oms_rob_pending(&rob, 1));
	oms_rob_destroy(&rob);

	/* Random: 4 streams interleaved, one stream's first entry late. */
	t_rng_init(&rng, seed);
	for (t = 0; t < trials; t++) {
		struct { uint8_t th, seq; } arr[4 * 32];
		unsigned n[4], narr = 0, gap = t_rng_below(&rng, 4);
		unsigned popped[4] = { 0 };

		ASSERT_EQ(0, oms_rob_init(&rob, 4, 32, NULL, 0));
		for (unsigned th = 0; th < 4; th++) {
			n[th] = 1 + t_rng_below(&rng, 32);
			for (unsigned s = 0; s < n[th]; s++) {
				if (th == gap && s == 0)
					continue;	/* arrives last */
				arr[narr].th = (uint8_t)th;
				arr[narr++].seq = (uint8_t)s;
			}
		}
		/* shuffle arrivals across and within streams */
		for (unsigned i = narr; i > 1; i--) {
			unsigned j = t_rng_below(&rng, i);
			__typeof__(arr[0]) tmp = arr[i - 1];

			arr[i - 1] = arr[j];
			arr[j] = tmp;
		}
		for (unsigned i = 0; i < narr; i++) {
			oms_rob_seq_t sq;

			ASSERT_GE(oms_rob_insert(&rob, arr[i].th, arr[i].seq,
						 arr[i].seq), 0);
			for (unsigned th = 0; th < 4; th++)
				while (oms_rob_pop(&rob, th, &sq, &c) == 1) {
					ASSERT_EQ(popped[th], (unsigned)sq);
					popped[th]++;
				}
		}
		/* every other stream fully drained despite the gap */
		for (unsigned th = 0; th < 4; th++) {
			unsigned want = th == gap ? 0 : n[th];

			ASSERT_EQ(want, popped[th])
				TH_LOG("trial %lu thread %u", t, want);
		}
		ASSERT_EQ(1, oms_rob_insert(&rob, gap, 0, 0));
		ASSERT_EQ((int)n[gap], oms_rob_release(&rob, gap,
				(uint64_t[32]){ 0 }, 32));
		oms_rob_destroy(&rob);
	}
	TH_LOG("%lu trials, seed %#llx", trials, (unsigned long long)seed);
}

/* ---- RLSQ simulator ------------------------------------------------------ */

#define NLINES	16
#define MAXOPS	32
#define MAXHW	16

struct fly {
	uint32_t id;
	uint64_t line;
	uint64_t val;
	int sampled;
};

struct rsim {
	struct oms_rlsq q;
	uint64_t mem[NLINES];
	int invalidate;			/* 0: control without coherence */
	struct fly fl[MAXOPS * 2];
	unsigned nfl;
	struct { uint64_t line, val; } hw[MAXHW];
	unsigned nhw, hpos;
	uint64_t res[MAXOPS];
	uint8_t got[MAXOPS];
	unsigned ndeliv;
	unsigned long retry_line[NLINES];
	/* per line: step at which each version (0, 1, 2...) appeared */
	unsigned long vstart[NLINES][MAXHW + 1];
	unsigned long step;
	unsigned long squashed, retried;	/* engine counters at the end */
};

static int rsim_init(struct rsim *s, unsigned mode, int invalidate)
{
	memset(s, 0, sizeof(*s));
	s->invalidate = invalidate;
	return oms_rlsq_init(&s->q, 64, 2, mode, NULL, 0);
}

static void rsim_host_write(struct rsim *s, uint64_t line, uint64_t val)
{
	s->hw[s->nhw].line = line;
	s->hw[s->nhw++].val = val;
}

/* Run to quiescence; 0 or -1 if the engine misbehaved or got stuck. */
static int rsim_run(struct rsim *s, struct t_rng *rng)
{
	struct oms_rlsq_action a;

	for (s->step = 1; s->step < 100000; s->step++) {
		unsigned ev = t_rng_below(rng, 4);

		if (s->hpos == s->nhw && oms_rlsq_live(&s->q) == 0)
			return 0;
		if (ev == 0 && s->hpos < s->nhw) {
			uint64_t l = s->hw[s->hpos].line;

			s->mem[l] = s->hw[s->hpos++].val;
			s->vstart[l][s->mem[l]] = s->step;
			if (s->invalidate && oms_rlsq_invalidate(&s->q, l) < 0)
				return -1;
		} else if (ev == 1) {
			int n = oms_rlsq_poll(&s->q, &a, 1);

			if (n < 0)
				return -1;
			if (n == 0)
				continue;
			if (a.type == OMS_RLSQ_DELIVER) {
				if (a.cookie >= MAXOPS || s->got[a.cookie])
					return -1;
				s->res[a.cookie] = a.value;
				s->got[a.cookie] = 1;
				s->ndeliv++;
				continue;
			}
			if (a.type == OMS_RLSQ_RETRY)
				s->retry_line[a.line]++;
			s->fl[s->nfl++] = (struct fly){ .id = a.id,
							.line = a.line };
		} else if (ev == 2 && s->nfl) {
			struct fly *f = &s->fl[t_rng_below(rng, s->nfl)];

			if (!f->sampled) {
				f->val = s->mem[f->line];
				f->sampled = 1;
			}
		} else if (ev == 3 && s->nfl) {
			unsigned i = t_rng_below(rng, s->nfl);

			if (!s->fl[i].sampled)
				continue;
			if (oms_rlsq_complete(&s->q, s->fl[i].id, s->fl[i].val))
				return -1;
			s->fl[i] = s->fl[--s->nfl];
		}
	}
	return -1;
}

/* Interval [start, end) of host-write steps during which @line held @v. */
static void interval(const struct rsim *s, uint64_t line, uint64_t v,
		     unsigned long *start, unsigned long *end)
{
	*start = s->vstart[line][v];
	*end = v + 1 <= MAXHW && s->vstart[line][v + 1] ? s->vstart[line][v + 1]
							 : ~0ul;
}

/* ---- L29 DMA flag -> data ----------------------------------------------- */

/*
 * Host: data lines 1..k = 1, then flag (line 0) = 1.  Device thread 0:
 * acq(flag) (or a relaxed read in the control), then relaxed reads of the
 * data, all submitted back to back.  Returns 1 if it saw the new flag with
 * old data, 0 if not, -1 on an engine error.
 */
static int l29_trial(struct t_rng *rng, unsigned mode, int acquire)
{
	static struct rsim s;
	unsigned k = 1 + t_rng_below(rng, 6);
	uint32_t id;
	int bad = 0;

	if (rsim_init(&s, mode, 1))
		return -1;
	for (unsigned i = 1; i <= k; i++)
		rsim_host_write(&s, i, 1);
	rsim_host_write(&s, 0, 1);
	/* a thread-1 reader of the data, independent of thread 0 */
	if (oms_rlsq_submit(&s.q, 1, OMS_RLSQ_READ, 1, k + 1, &id))
		return -1;
	if (oms_rlsq_submit(&s.q, 0, acquire ? OMS_RLSQ_ACQUIRE : OMS_RLSQ_READ,
			    0, 0, &id))
		return -1;
	for (unsigned i = 1; i <= k; i++)
		if (oms_rlsq_submit(&s.q, 0, OMS_RLSQ_READ, i, i, &id))
			return -1;
	if (rsim_run(&s, rng) || s.ndeliv != k + 2)
		return -1;
	for (unsigned i = 1; i <= k; i++)
		bad |= s.res[0] == 1 && s.res[i] == 0;
	oms_rlsq_destroy(&s.q);
	return bad;
}

TEST(litmus_L29_dma_flag_data)
{
	static const char *const name[] = { "NIC", "RC", "RC-opt" };
	uint64_t seed = t_seed(0x2029);
	unsigned long trials = t_trials(100000), ctl_trials = trials / 5;
	struct t_rng rng;

	t_rng_init(&rng, seed);
	for (unsigned mode = 0; mode <= OMS_RLSQ_RC_OPT; mode++) {
		unsigned long bad = 0, ctl = 0;

		for (unsigned long t = 0; t < trials; t++) {
			int r = l29_trial(&rng, mode, 1);

			ASSERT_GE(r, 0) TH_LOG("mode %s trial %lu seed %#llx",
					       name[mode], t,
					       (unsigned long long)seed);
			bad += r;
		}
		for (unsigned long t = 0; t < ctl_trials; t++) {
			int r = l29_trial(&rng, mode, 0);

			ASSERT_GE(r, 0) SEEDLOG(seed);
			ctl += r;
		}
		TH_LOG("%s: %lu trials, new flag with old data %lu; control "
		       "(all relaxed) %lu of %lu", name[mode], trials, bad,
		       ctl, ctl_trials);
		ASSERT_EQ(0ul, bad) SEEDLOG(seed);
		ASSERT_GT(ctl, 0ul) SEEDLOG(seed);
	}
}

/* ---- L30 order inside one read ------------------------------------------ */

enum l30_order { L30_NONE, L30_HEADER_ONLY, L30_CHAIN };

/*
 * Item: header line 0, data lines 1..m, footer line m+1, all holding the
 * item version.  Writer: versions 1 and 2, each back to front (footer,
 * data m..1, header).  Reader (one RDMA READ of the item, thread 0): the
 * line reads submitted in address order with
 *   L30_NONE         every line relaxed;
 *   L30_HEADER_ONLY  acquire on the header, the rest relaxed;
 *   L30_CHAIN        acquire on the header and on every data line (each
 *                    line ordered after the one before), footer relaxed.
 * The reader accepts the item when header == footer; it is torn when
 * accepted with a data line of another version.  Returns 1 torn, 0 not.
 */
static int l30_trial(struct t_rng *rng, unsigned mode, unsigned order)
{
	static struct rsim s;
	unsigned m = 1 + t_rng_below(rng, 4), foot = m + 1;
	uint32_t id;
	int torn = 0;

	if (rsim_init(&s, mode, 1))
		return -1;
	for (uint64_t v = 1; v <= 2; v++) {
		rsim_host_write(&s, foot, v);
		for (unsigned i = m; i >= 1; i--)
			rsim_host_write(&s, i, v);
		rsim_host_write(&s, 0, v);
	}
	for (unsigned i = 0; i <= foot; i++) {
		unsigned kind = OMS_RLSQ_READ;

		if ((i == 0 && order != L30_NONE) ||
		    (i < foot && order == L30_CHAIN))
			kind = OMS_RLSQ_ACQUIRE;
		if (oms_rlsq_submit(&s.q, 0, kind, i, i, &id))
			return -1;
	}
	if (rsim_run(&s, rng) || s.ndeliv != foot + 1)
		return -1;
	if (s.res[0] == s.res[foot])
		for (unsigned i = 1; i <= m; i++)
			torn |= s.res[i] != s.res[0];
	oms_rlsq_destroy(&s.q);
	return torn;
}

TEST(litmus_L30_order_inside_one_read)
{
	static const char *const name[] = { "NIC", "RC", "RC-opt" };
	uint64_t seed = t_seed(0x2030);
	unsigned long trials = t_trials(30000);
	struct t_rng rng;

	t_rng_init(&rng, seed);
	for (unsigned mode = 0; mode <= OMS_RLSQ_RC_OPT; mode++) {
		unsigned long torn[3] = { 0 };

		for (unsigned order = 0; order < 3; order++)
			for (unsigned long t = 0; t < trials; t++) {
				int r = l30_trial(&rng, mode, order);

				ASSERT_GE(r, 0) SEEDLOG(seed);
				torn[order] += r;
			}
		TH_LOG("%s: %lu trials each: torn items returned: unordered "
		       "%lu, acquire on header only %lu (informational), "
		       "acquire chain %lu", name[mode], trials,
		       torn[L30_NONE], torn[L30_HEADER_ONLY], torn[L30_CHAIN]);
		ASSERT_GT(torn[L30_NONE], 0ul) SEEDLOG(seed);
		ASSERT_EQ(0ul, torn[L30_CHAIN]) SEEDLOG(seed);
	}
}

/* ---- L31 speculative ordered reads -------------------------------------- */

/*
 * RC-opt, thread 0: acq(X=0); read(Y=1); read(Z=2..4) submitted together.
 * The host writes X and Y (versions 1, 2, ...) in a random order at random
 * moments.  Serial check: the pair (x, y) is legal iff some instant tx
 * where X held x is no later than some instant ty where Y held y.
 * Returns 1 if no serial execution explains the result, 0 if one does.
 */
static int l31_trial(struct t_rng *rng, int invalidate, struct rsim **out)
{
	static struct rsim s;
	unsigned long xs, xe, ys, ye;
	uint64_t ver[2] = { 0, 0 };
	unsigned nw = 1 + t_rng_below(rng, 4);
	uint32_t id;

	if (rsim_init(&s, OMS_RLSQ_RC_OPT, invalidate))
		return -1;
	for (unsigned i = 0; i < nw; i++) {
		unsigned l = t_rng_below(rng, 2);

		rsim_host_write(&s, l, ++ver[l]);
	}
	if (oms_rlsq_submit(&s.q, 0, OMS_RLSQ_ACQUIRE, 0, 0, &id))
		return -1;
	for (unsigned l = 1; l <= 4; l++)
		if (oms_rlsq_submit(&s.q, 0, OMS_RLSQ_READ, l, l, &id))
			return -1;
	if (rsim_run(&s, rng) || s.ndeliv != 5)
		return -1;
	*out = &s;
	interval(&s, 0, s.res[0], &xs, &xe);
	interval(&s, 1, s.res[1], &ys, &ye);
	s.squashed = s.q.cnt.squashed;
	s.retried = s.q.cnt.retried;
	oms_rlsq_destroy(&s.q);
	(void)xe;
	(void)ys;
	return !(ye > xs);
}

TEST(litmus_L31_speculative_ordered_reads)
{
	uint64_t seed = t_seed(0x2031);
	unsigned long trials = t_trials(50000), t;
	unsigned long bad = 0, ctl = 0, retry[NLINES] = { 0 };
	unsigned long squashed = 0, retried = 0;
	struct t_rng rng;
	struct rsim *s;

	/*
	 * Deterministic: acq(X) and read(Y) execute together, Y samples the
	 * old value, the host writes Y: only Y is squashed and retried, and
	 * the delivered pair is (new X or old X, new Y) -- serial.
	 */
	{
		struct oms_rlsq q;
		struct oms_rlsq_action a[8];
		uint32_t ax, ry, rz;

		ASSERT_EQ(0, oms_rlsq_init(&q, 8, 1, OMS_RLSQ_RC_OPT, NULL, 0));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_ACQUIRE, 0, 0, &ax));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, 1, 1, &ry));
		ASSERT_EQ(0, oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, 2, 2, &rz));
		ASSERT_EQ(3, oms_rlsq_poll(&q, a, 8));	/* all execute */
		ASSERT_EQ(0, oms_rlsq_complete(&q, ry, 0));	/* old Y */
		ASSERT_EQ(0, oms_rlsq_complete(&q, rz, 0));
		ASSERT_EQ(1, oms_rlsq_invalidate(&q, 1));	/* host: Y = 1 */
		ASSERT_EQ(1, oms_rlsq_poll(&q, a, 8));
		ASSERT_EQ(OMS_RLSQ_RETRY, a[0].type);
		ASSERT_EQ(ry, a[0].id);
		ASSERT_EQ(0, oms_rlsq_complete(&q, ry, 1));	/* new Y */
		ASSERT_EQ(0, oms_rlsq_complete(&q, ax, 0));
		ASSERT_EQ(3, oms_rlsq_poll(&q, a, 8));
		ASSERT_EQ(ax, a[0].id);
		for (int i = 1; i < 3; i++)
			if (a[i].id == ry)
				ASSERT_EQ(1u, a[i].value);
		ASSERT_EQ(1u, q.cnt.retried);
		ASSERT_EQ(1u, q.cnt.squashed);
		oms_rlsq_destroy(&q);
	}

	t_rng_init(&rng, seed);
	for (t = 0; t < trials; t++) {
		int r = l31_trial(&rng, 1, &s);

		ASSERT_GE(r, 0) SEEDLOG(seed);
		bad += r;
		for (unsigned l = 0; l < NLINES; l++)
			retry[l] += s->retry_line[l];
		squashed += s->squashed;
		retried += s->retried;
	}
	for (t = 0; t < trials / 5; t++) {
		int r = l31_trial(&rng, 0, &s);	/* no invalidations */

		ASSERT_GE(r, 0) SEEDLOG(seed);
		ctl += r;
	}
	TH_LOG("%lu trials: non-serial results %lu; retries X %lu Y %lu "
	       "Z %lu (squashed %lu); control without invalidation: "
	       "non-serial %lu of %lu", trials, bad, retry[0], retry[1],
	       retry[2] + retry[3] + retry[4], squashed, ctl, trials / 5);
	ASSERT_EQ(0ul, bad) SEEDLOG(seed);
	ASSERT_EQ(0ul, retry[0]) SEEDLOG(seed);		/* the acquire */
	ASSERT_EQ(0ul, retry[2] + retry[3] + retry[4]) SEEDLOG(seed);
	ASSERT_GT(retry[1], 0ul) SEEDLOG(seed);
	ASSERT_EQ(squashed, retried);
	ASSERT_EQ(retried, retry[1]);
	ASSERT_GT(ctl, 0ul) SEEDLOG(seed);
}

TEST_HARNESS_MAIN
