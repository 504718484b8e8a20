// SPDX-License-Identifier: MIT
/*
 * The emulated device honours the per-destination backend contract of
 * lib/backend.h under chaos (reordering).  This tests internals: it drives
 * device queues directly through lib/emu (emu_queue_open_flags,
 * emu_q_post/ring/poll), below the context layer, with raw struct oms_wr
 * commands; only the target memory is registered through the public API.
 *
 * Each property is counted over many randomized trials and sits next to a
 * control showing that the forbidden outcome does happen without the
 * flag (or on an unordered queue), so the test can fail:
 *
 * - same bytes: a get after an overlapping put or atomic reads its value
 *   (100 000 trials, 0 stale) vs an unordered queue (stale reads);
 * - write after read: with OMS_WR_F_FENCE the get never sees the later
 *   put; without, it sometimes does;
 * - a fenced op after a failed one (wrong key, bad range) completes with
 *   -ECANCELED and leaves memory alone until OMS_WR_RESUME; unfenced ops
 *   go on;
 * - sequenced streams (OMS_WR_F_SEQ, posted in random order): a get
 *   blocks later members until it has read; a failed member stops the
 *   stream (later members and flushes -ECANCELED, unperformed) until a
 *   resume; a NOP fills a gap; a flush is never answered early, however
 *   many are waiting; a duplicate, a number past the window and one
 *   already taken stop the stream where it stands, and a resume naming
 *   the next number resumes it (as on the agent).
 *
 * OMS_TEST_SEED sets the chaos seed, OMS_TEST_TRIALS scales the trials.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"
#include "emu/emu.h"

#ifdef __SANITIZE_ADDRESS__
#define RAW_TRIALS	20000ul
#define SOME_TRIALS	400ul
#else
#define RAW_TRIALS	100000ul
#define SOME_TRIALS	2000ul
#endif
#define CONTROL_BATCHES	2000	/* give up on a control after this many */
#define QSIZE		256u
#define BATCH		64u	/* trials per batch (<= QSIZE / 2) */
#define WORDS		512u
#define TIMEOUT		300

/* Old and new values of a word in batch @gen (never 0: got[] starts 0). */
#define OLD(gen, w)	(((uint64_t)(gen) << 32) | ((w) << 1) | 1)
#define NEW(gen, w)	(OLD(gen, w) + (1ull << 20))

FIXTURE(rig)
{
	struct oms_ctx *tgt;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t *mem;
	struct oms_emu *dev;
	struct t_rng rng;
	uint64_t seed;
	uint32_t gen;
};

FIXTURE_SETUP(rig)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
	};

	self->seed = t_seed(0x0de7);
	t_rng_init(&self->rng, self->seed);
	/* A device of the test's own: its queues are opened below the
	 * context layer, on the fabric the target's region is in. */
	ea.chaos_seed = self->seed;
	ASSERT_EQ(0, oms_emu_create(&ea, &self->dev));
	ASSERT_NE(NULL, self->dev);
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU;
	a.node = 1;
	a.emu = self->dev;
	ASSERT_EQ(0, oms_ctx_create(&a, &self->tgt));
	self->mem = calloc(WORDS, 8);
	ASSERT_NE(NULL, self->mem);
	ASSERT_EQ(0, oms_mr_reg(self->tgt, self->mem, WORDS * 8,
				OMS_ACCESS_ALL, &self->mr));
	ASSERT_EQ(0, oms_mr_remote(self->mr, &self->r));
	TH_LOG("chaos seed %#llx", (unsigned long long)self->seed);
}

FIXTURE_TEARDOWN(rig)
{
	oms_ctx_destroy(self->tgt);
	free(self->mem);
	/* after the context: a device refuses to go while one lives */
	oms_emu_destroy(self->dev);
}

/* One device queue and what came back for each slot of the last batch. */
struct rq {
	struct emu_queue *q;
	struct oms_wr w[QSIZE];
	uint32_t n;
	struct oms_wc wc[QSIZE];	/* by slot */
	uint8_t done[QSIZE];
	uint32_t ndone;
	uint16_t seq;			/* next stream sequence number */
};

static struct oms_wr mk_wr(const struct oms_rmr *r, uint8_t op, uint32_t word,
			   uint64_t *local, uint8_t flags)
{
	return (struct oms_wr){
		.op = op, .flags = flags, .dest = r->dest,
		.region = r->region, .key = r->key, .off = 8ull * word,
		.len = 8, .local = (uintptr_t)local,
	};
}

/* Append @w to the batch; its slot is its position. */
static uint32_t add(struct rq *rq, struct oms_wr w)
{
	w.slot = rq->n;
	rq->w[rq->n] = w;
	return rq->n++;
}

/* Append a stream member: the next sequence number. */
static uint32_t add_seq(struct rq *rq, struct oms_wr w)
{
	w.flags |= OMS_WR_F_SEQ;
	w.seq = rq->seq++;
	return add(rq, w);
}

/* Post entries [from, to) of the batch in order, ring once. */
static int post_range(struct rq *rq, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		if (emu_q_post(rq->q, &rq->w[i]))
			return -1;
	return to > from ? emu_q_ring(rq->q, to - from) : 0;
}

/* Shuffle entries [from, to) (stream members: sequence numbers travel
 * with them, the device's reorder buffer puts them back in order). */
static void swap_wr(struct rq *rq, uint32_t a, uint32_t b);

static void shuffle(struct t_rng *rng, struct rq *rq, uint32_t from,
		    uint32_t to)
{
	for (uint32_t i = to; i > from + 1; i--)
		swap_wr(rq, i - 1, from + t_rng_below(rng, i - from));
}

/* Take the completions that are there now, by slot; returns how many. */
static int take(struct rq *rq)
{
	struct oms_wc wc[64];
	int n = emu_q_poll(rq->q, wc, 64, NULL);

	for (int i = 0; i < n; i++) {
		rq->wc[wc[i].slot] = wc[i];
		rq->done[wc[i].slot]++;
		rq->ndone++;
	}
	return n;
}

/* Reap completions until @want have come back in total (or a long
 * time passed); returns the count. */
static uint32_t reap(struct rq *rq, uint32_t want)
{
	for (unsigned long spin = 0; rq->ndone < want && spin < 50000000ul;
	     spin++)
		if (!take(rq))
			sched_yield();
	return rq->ndone;
}

static void swap_wr(struct rq *rq, uint32_t a, uint32_t b)
{
	struct oms_wr t = rq->w[a];

	rq->w[a] = rq->w[b];
	rq->w[b] = t;
}

static void poll_now(struct rq *rq)
{
	while (take(rq) > 0)
		;
}

static void batch_reset(struct rq *rq)
{
	rq->n = 0;
	rq->ndone = 0;
	memset(rq->done, 0, sizeof(rq->done));
}

/* Let the device run @steps loops (it would have done anything it may). */
static void let_run(struct oms_emu *dev, uint64_t steps)
{
	uint64_t hb = __atomic_load_n(&dev->heartbeat, __ATOMIC_ACQUIRE);

	while (__atomic_load_n(&dev->heartbeat, __ATOMIC_ACQUIRE) - hb < steps)
		sched_yield();
}

static int rq_open(struct oms_emu *dev, uint32_t flags, struct rq *rq)
{
	memset(rq, 0, sizeof(*rq));
	return emu_queue_open_flags(dev, 0, QSIZE, flags, &rq->q);
}

static uint64_t rd(const uint64_t *mem, uint32_t w)
{
	return __atomic_load_n(&mem[w], __ATOMIC_ACQUIRE);
}

/* Order @n trials of two ops each (a before b) at random: a random
 * interleaving that keeps each trial's order.  out[k] = trial << 1 | op. */
static void interleave(struct t_rng *rng, uint32_t n, uint32_t *out)
{
	uint32_t left[BATCH], nleft = n, k = 0;
	uint8_t next[BATCH] = { 0 };

	for (uint32_t t = 0; t < n; t++)
		left[t] = t;
	while (nleft) {
		uint32_t i = t_rng_below(rng, nleft), t = left[i];

		out[k++] = t << 1 | next[t]++;
		if (next[t] == 2)
			left[i] = left[--nleft];
	}
}

/*
 * Same bytes, read after write: trial t writes word t (a put, or an
 * atomic add to the same value) then gets it.  Returns stale reads.
 */
struct pair_lab {
	uint64_t src[BATCH], got[BATCH];
	uint32_t order[2 * BATCH];
};

/* A new batch of pair trials: word t of trial t holds its old value. */
static uint32_t pair_begin(FIXTURE_DATA(rig) *self, struct rq *rq,
			   struct pair_lab *l)
{
	uint32_t g = ++self->gen;

	batch_reset(rq);
	interleave(&self->rng, BATCH, l->order);
	for (uint32_t t = 0; t < BATCH; t++) {
		self->mem[t] = OLD(g, t);
		l->src[t] = NEW(g, t);
		l->got[t] = 0;
	}
	return g;
}

static unsigned long raw_batch(struct __test_metadata *_metadata,
			       FIXTURE_DATA(rig) *self, struct rq *rq,
			       struct pair_lab *l)
{
	uint32_t g = pair_begin(self, rq, l);
	unsigned long stale = 0;

	for (uint32_t k = 0; k < 2 * BATCH; k++) {
		uint32_t t = l->order[k] >> 1;
		struct oms_wr w;

		if (l->order[k] & 1) {
			w = mk_wr(&self->r, OMS_WR_GET, t, &l->got[t], 0);
		} else if (t & 1) {
			w = mk_wr(&self->r, OMS_WR_FADD, t, NULL, 0);
			w.a1 = NEW(g, t) - OLD(g, t);
		} else {
			w = mk_wr(&self->r, OMS_WR_PUT, t, &l->src[t], 0);
		}
		add(rq, w);
	}
	EXPECT_EQ(0, post_range(rq, 0, rq->n));
	EXPECT_EQ(rq->n, reap(rq, rq->n));
	for (uint32_t i = 0; i < rq->n; i++)
		EXPECT_EQ(0, rq->wc[i].status);
	for (uint32_t t = 0; t < BATCH; t++)
		stale += l->got[t] != NEW(g, t);
	return stale;
}

TEST_F_TIMEOUT(rig, raw_same_bytes, TIMEOUT)
{
	unsigned long n = t_trials(RAW_TRIALS), trials = 0, stale = 0;
	struct pair_lab *l = calloc(1, sizeof(*l));
	struct rq *rq = calloc(1, sizeof(*rq));
	int b;

	ASSERT_NE(NULL, l);
	ASSERT_NE(NULL, rq);
	ASSERT_EQ(0, rq_open(self->dev, 0, rq));
	for (; trials < n; trials += BATCH)
		stale += raw_batch(_metadata, self, rq, l);
	emu_queue_close(self->dev, rq->q);
	TH_LOG("RAW: %lu trials (put or fadd, then get of the same bytes), "
	       "%lu stale reads", trials, stale);
	ASSERT_EQ(0, stale);

	ASSERT_EQ(0, rq_open(self->dev, EMU_Q_UNORDERED, rq));
	for (b = 0, stale = 0; b < CONTROL_BATCHES && !stale; b++)
		stale += raw_batch(_metadata, self, rq, l);
	emu_queue_close(self->dev, rq->q);
	TH_LOG("RAW control (unordered queue): %lu stale reads in %d "
	       "batches", stale, b);
	ASSERT_GT(stale, 0);
	free(l);
	free(rq);
}

/*
 * Write after read: trial t gets word t, then puts a new value there
 * (fenced or not).  Returns the gets that saw the later put.
 */
static unsigned long war_batch(struct __test_metadata *_metadata,
			       FIXTURE_DATA(rig) *self, struct rq *rq,
			       struct pair_lab *l, uint8_t put_flags, int seq)
{
	uint32_t g = pair_begin(self, rq, l);
	unsigned long saw = 0;

	for (uint32_t k = 0; k < 2 * BATCH; k++) {
		uint32_t t = l->order[k] >> 1;
		struct oms_wr w = l->order[k] & 1 ?
			mk_wr(&self->r, OMS_WR_PUT, t, &l->src[t], put_flags) :
			mk_wr(&self->r, OMS_WR_GET, t, &l->got[t], 0);

		if (seq)
			add_seq(rq, w);
		else
			add(rq, w);
	}
	if (seq)
		shuffle(&self->rng, rq, 0, rq->n);
	EXPECT_EQ(0, post_range(rq, 0, rq->n));
	EXPECT_EQ(rq->n, reap(rq, rq->n));
	for (uint32_t i = 0; i < rq->n; i++)
		EXPECT_EQ(0, rq->wc[i].status);
	for (uint32_t t = 0; t < BATCH; t++) {
		EXPECT_EQ(NEW(g, t), rd(self->mem, t));
		saw += l->got[t] == NEW(g, t);
	}
	return saw;
}

/* Run war_batch() @n trials (or, for a control, until it is seen). */
static unsigned long war_run(struct __test_metadata *_metadata,
			     FIXTURE_DATA(rig) *self, uint8_t put_flags,
			     int seq, unsigned long n, int control)
{
	struct pair_lab *l = calloc(1, sizeof(*l));
	struct rq *rq = calloc(1, sizeof(*rq));
	unsigned long saw = 0, trials = 0;

	if (!l || !rq || rq_open(self->dev, 0, rq)) {
		free(l);
		free(rq);
		return ~0ul;
	}
	for (int b = 0; control ? b < CONTROL_BATCHES && !saw : trials < n;
	     b++, trials += BATCH)
		saw += war_batch(_metadata, self, rq, l, put_flags, seq);
	emu_queue_close(self->dev, rq->q);
	TH_LOG("  %lu trials, get saw the later put %lu times", trials, saw);
	free(l);
	free(rq);
	return saw;
}

TEST_F_TIMEOUT(rig, war_fence, TIMEOUT)
{
	unsigned long n = t_trials(RAW_TRIALS) / 2;

	TH_LOG("WAR: get(X); put(X, OMS_WR_F_FENCE):");
	ASSERT_EQ(0, war_run(_metadata, self, OMS_WR_F_FENCE, 0, n, 0));
	TH_LOG("WAR control: get(X); put(X) without the fence:");
	ASSERT_GT(war_run(_metadata, self, 0, 0, 0, 1), 0);
}

/*
 * A fenced op after a failed one to the same destination is cancelled;
 * unfenced ops go on; OMS_WR_RESUME forgets the failure.  @fence 0 is the
 * control: the same ops are performed.
 */
static void fail_batch(struct __test_metadata *_metadata,
		       FIXTURE_DATA(rig) *self, struct rq *rq, int fence,
		       unsigned long *cancelled)
{
	uint32_t g = ++self->gen, w0 = t_rng_below(&self->rng, WORDS - 8);
	uint8_t ff = fence ? OMS_WR_F_FENCE : 0;
	uint64_t src[4], got = 0, bad_src = 0xbad;
	uint32_t before, bad, put, get, after, rs, put2;
	struct oms_wr w;

	for (uint32_t i = 0; i < 8; i++)
		self->mem[w0 + i] = OLD(g, w0 + i);
	for (uint32_t i = 0; i < 4; i++)
		src[i] = NEW(g, w0 + i);
	batch_reset(rq);
	before = add(rq, mk_wr(&self->r, OMS_WR_PUT, w0, &src[0], 0));
	w = mk_wr(&self->r, OMS_WR_PUT, w0 + 4, &bad_src, 0);
	if (t_rng_below(&self->rng, 2))
		w.key ^= 0x5a5a;		/* wrong key */
	else
		w.off = 8ull * WORDS;		/* out of range */
	bad = add(rq, w);
	put = add(rq, mk_wr(&self->r, OMS_WR_PUT, w0 + 1, &src[1], ff));
	get = add(rq, mk_wr(&self->r, OMS_WR_GET, w0 + 5, &got, ff));
	after = add(rq, mk_wr(&self->r, OMS_WR_PUT, w0 + 2, &src[2], 0));
	ASSERT_EQ(0, post_range(rq, 0, rq->n));
	ASSERT_EQ(rq->n, reap(rq, rq->n));
	EXPECT_EQ(0, rq->wc[before].status);
	EXPECT_EQ(NEW(g, w0), rd(self->mem, w0));
	EXPECT_LT(rq->wc[bad].status, 0);
	EXPECT_NE(-ECANCELED, rq->wc[bad].status);
	EXPECT_EQ(OLD(g, w0 + 4), rd(self->mem, w0 + 4));
	/* depends on nothing that failed: performed */
	EXPECT_EQ(0, rq->wc[after].status);
	EXPECT_EQ(NEW(g, w0 + 2), rd(self->mem, w0 + 2));
	if (fence) {
		EXPECT_EQ(-ECANCELED, rq->wc[put].status);
		EXPECT_EQ(-ECANCELED, rq->wc[get].status);
		EXPECT_EQ(OLD(g, w0 + 1), rd(self->mem, w0 + 1));
		EXPECT_EQ(0, got);
	} else {
		EXPECT_EQ(0, rq->wc[put].status);
		EXPECT_EQ(0, rq->wc[get].status);
		EXPECT_EQ(NEW(g, w0 + 1), rd(self->mem, w0 + 1));
		EXPECT_EQ(OLD(g, w0 + 5), got);
	}
	*cancelled += rq->wc[put].status == -ECANCELED;
	/* Still cancelled until the resume; then performed. */
	batch_reset(rq);
	put = add(rq, mk_wr(&self->r, OMS_WR_PUT, w0 + 3, &src[3], ff));
	rs = add(rq, (struct oms_wr){ .op = OMS_WR_RESUME,
				      .dest = self->r.dest });
	put2 = add(rq, mk_wr(&self->r, OMS_WR_PUT, w0 + 1, &src[1], ff));
	ASSERT_EQ(0, post_range(rq, 0, rq->n));
	ASSERT_EQ(rq->n, reap(rq, rq->n));
	EXPECT_EQ(fence ? -ECANCELED : 0, rq->wc[put].status);
	EXPECT_EQ(fence ? OLD(g, w0 + 3) : NEW(g, w0 + 3),
		  rd(self->mem, w0 + 3));
	EXPECT_EQ(0, rq->wc[rs].status);
	EXPECT_EQ(0, rq->wc[put2].status);
	EXPECT_EQ(NEW(g, w0 + 1), rd(self->mem, w0 + 1));
}

TEST_F_TIMEOUT(rig, fence_after_failure, TIMEOUT)
{
	unsigned long n = t_trials(SOME_TRIALS), cancelled = 0, trials;
	struct rq *rq = calloc(1, sizeof(*rq));

	ASSERT_NE(NULL, rq);
	ASSERT_EQ(0, rq_open(self->dev, 0, rq));
	for (trials = 0; trials < n && _metadata->passed; trials++)
		fail_batch(_metadata, self, rq, 1, &cancelled);
	TH_LOG("fenced put and get after a failed op: %lu of %lu cancelled",
	       cancelled, trials);
	ASSERT_EQ(n, cancelled);
	cancelled = 0;
	for (trials = 0; trials < 100 && _metadata->passed; trials++)
		fail_batch(_metadata, self, rq, 0, &cancelled);
	TH_LOG("control (no fence): %lu of %lu cancelled", cancelled, trials);
	ASSERT_EQ(0, cancelled);
	emu_queue_close(self->dev, rq->q);
	free(rq);
}

TEST_F_TIMEOUT(rig, seq_get_blocks_later_members, TIMEOUT)
{
	unsigned long n = t_trials(RAW_TRIALS) / 2;

	TH_LOG("sequenced stream: get(X); put(X), posted in random order:");
	ASSERT_EQ(0, war_run(_metadata, self, 0, 1, n, 0));
	TH_LOG("control: the same without OMS_WR_F_SEQ:");
	ASSERT_GT(war_run(_metadata, self, 0, 0, 0, 1), 0);
}

/*
 * A stream of K puts with one bad member: the ones before it are
 * performed, it fails, the ones after it and the flush are cancelled and
 * leave memory alone, a NOP after it too; a resume resumes the stream.
 * @seq 0 is the control: without sequence numbers the later puts land.
 */
#define K 24u

static unsigned long stop_batch(struct __test_metadata *_metadata,
				FIXTURE_DATA(rig) *self, struct rq *rq, int seq)
{
	uint32_t g = ++self->gen, bad = t_rng_below(&self->rng, K);
	uint32_t w0 = t_rng_below(&self->rng, WORDS - K), fl, nop;
	uint64_t src[K], got = 0;
	unsigned long landed_after = 0;
	uint32_t rs, first, get;

	batch_reset(rq);
	for (uint32_t i = 0; i < K; i++) {
		struct oms_wr w = mk_wr(&self->r, OMS_WR_PUT, w0 + i, &src[i],
					0);

		self->mem[w0 + i] = OLD(g, w0 + i);
		src[i] = NEW(g, w0 + i);
		if (i == bad)
			w.key ^= 0x77;
		if (seq)
			add_seq(rq, w);
		else
			add(rq, w);
	}
	if (seq) {
		nop = add_seq(rq, (struct oms_wr){ .op = OMS_WR_NOP,
						   .dest = self->r.dest });
		fl = add(rq, (struct oms_wr){ .op = OMS_WR_FLUSH,
					      .flags = OMS_WR_F_SEQ,
					      .dest = self->r.dest,
					      .seq = rq->seq });
		shuffle(&self->rng, rq, 0, rq->n);
	}
	/* slots name the commands: positions are shuffled */
	EXPECT_EQ(0, post_range(rq, 0, rq->n));
	EXPECT_EQ(rq->n, reap(rq, rq->n));
	for (uint32_t s = 0; s < rq->n; s++) {
		const struct oms_wr *w = &rq->w[s];
		uint32_t i = (uint32_t)(w->off / 8) - w0;

		const struct oms_wc *wc = &rq->wc[w->slot];

		if (w->op != OMS_WR_PUT)
			continue;
		if (i < bad) {
			EXPECT_EQ(0, wc->status);
			EXPECT_EQ(NEW(g, w0 + i), rd(self->mem, w0 + i));
		} else if (i == bad) {
			EXPECT_LT(wc->status, 0);
			EXPECT_NE(-ECANCELED, wc->status);
			EXPECT_EQ(OLD(g, w0 + i), rd(self->mem, w0 + i));
		} else {
			EXPECT_EQ(seq ? -ECANCELED : 0, wc->status);
			landed_after += rd(self->mem, w0 + i) == NEW(g, w0 + i);
		}
	}
	if (!seq)
		return landed_after;
	EXPECT_EQ(-ECANCELED, rq->wc[nop].status);
	EXPECT_EQ(-ECANCELED, rq->wc[fl].status);
	EXPECT_EQ(0, landed_after);
	/* A member sent before the resume is cancelled too; after the
	 * resume (nothing outstanding) the stream goes on. */
	batch_reset(rq);
	first = add_seq(rq, mk_wr(&self->r, OMS_WR_PUT, w0 + K - 1,
				  &src[K - 1], 0));
	EXPECT_EQ(0, post_range(rq, 0, rq->n));
	EXPECT_EQ(1, reap(rq, 1));
	EXPECT_EQ(-ECANCELED, rq->wc[first].status);
	batch_reset(rq);
	/* the resume names the number the stream goes on at */
	rs = add(rq, (struct oms_wr){ .op = OMS_WR_RESUME,
				      .dest = self->r.dest, .seq = rq->seq });
	EXPECT_EQ(0, post_range(rq, 0, rq->n));
	EXPECT_EQ(1, reap(rq, 1));
	EXPECT_EQ(0, rq->wc[rs].status);
	batch_reset(rq);
	first = add_seq(rq, mk_wr(&self->r, OMS_WR_PUT, w0 + K - 1,
				  &src[K - 1], 0));
	get = add_seq(rq, mk_wr(&self->r, OMS_WR_GET, w0 + K - 1, &got, 0));
	fl = add(rq, (struct oms_wr){ .op = OMS_WR_FLUSH,
				      .flags = OMS_WR_F_SEQ,
				      .dest = self->r.dest, .seq = rq->seq });
	shuffle(&self->rng, rq, 0, rq->n);
	EXPECT_EQ(0, post_range(rq, 0, rq->n));
	EXPECT_EQ(rq->n, reap(rq, rq->n));
	EXPECT_EQ(0, rq->wc[first].status);
	EXPECT_EQ(0, rq->wc[get].status);
	EXPECT_EQ(0, rq->wc[fl].status);
	EXPECT_EQ(NEW(g, w0 + K - 1), got);
	return landed_after;
}

TEST_F_TIMEOUT(rig, seq_failure_stops_stream, TIMEOUT)
{
	unsigned long n = t_trials(SOME_TRIALS), landed = 0, trials;
	struct rq *rq = calloc(1, sizeof(*rq));

	ASSERT_NE(NULL, rq);
	ASSERT_EQ(0, rq_open(self->dev, 0, rq));
	for (trials = 0; trials < n && _metadata->passed; trials++)
		landed += stop_batch(_metadata, self, rq, 1);
	TH_LOG("stream with a failed member: %lu trials, %lu later members "
	       "performed", trials, landed);
	ASSERT_EQ(0, landed);
	for (trials = 0; trials < 200 && _metadata->passed; trials++)
		landed += stop_batch(_metadata, self, rq, 0);
	TH_LOG("control (no OMS_WR_F_SEQ): %lu later puts performed in %lu "
	       "trials", landed, trials);
	ASSERT_GT(landed, 0);
	emu_queue_close(self->dev, rq->q);
	free(rq);
}

/*
 * A gap in the stream: members after it wait (the control: left alone
 * they are never performed) until a NOP fills the missing number.
 */
TEST_F_TIMEOUT(rig, seq_nop_fills_gap, TIMEOUT)
{
	unsigned long n = t_trials(SOME_TRIALS) / 4, held = 0, trials;
	struct rq *rq = calloc(1, sizeof(*rq));

	ASSERT_NE(NULL, rq);
	ASSERT_EQ(0, rq_open(self->dev, 0, rq));
	for (trials = 0; trials < n && _metadata->passed; trials++) {
		uint32_t g = ++self->gen, m = 8, gap = t_rng_below(&self->rng, m);
		uint32_t w0 = t_rng_below(&self->rng, WORDS - m), nop = 0;
		uint64_t src[8];
		int early = 0;

		batch_reset(rq);
		for (uint32_t i = 0; i < m; i++) {
			self->mem[w0 + i] = OLD(g, w0 + i);
			src[i] = NEW(g, w0 + i);
			if (i == gap)
				nop = add_seq(rq, (struct oms_wr){
					.op = OMS_WR_NOP,
					.dest = self->r.dest });
			else
				add_seq(rq, mk_wr(&self->r, OMS_WR_PUT,
						  w0 + i, &src[i], 0));
		}
		/* everything but the NOP, in random order, then the NOP */
		swap_wr(rq, gap, m - 1);
		shuffle(&self->rng, rq, 0, m - 1);
		ASSERT_EQ(0, post_range(rq, 0, m - 1));
		reap(rq, gap);
		let_run(self->dev, 200);
		poll_now(rq);
		for (uint32_t i = gap + 1; i < m; i++)
			early += rd(self->mem, w0 + i) != OLD(g, w0 + i);
		early += rq->ndone != gap;
		EXPECT_EQ(0, early);
		held += !early;
		ASSERT_EQ(0, post_range(rq, m - 1, m));
		ASSERT_EQ(m, reap(rq, m));
		EXPECT_EQ(0, rq->wc[nop].status);
		for (uint32_t i = 0; i < m; i++) {
			EXPECT_EQ(0, rq->wc[i].status);	/* slot i: seq i */
			if (i != gap)
				EXPECT_EQ(NEW(g, w0 + i),
					  rd(self->mem, w0 + i));
		}
	}
	TH_LOG("gap held the later members in %lu of %lu trials; the NOP "
	       "released them", held, trials);
	ASSERT_EQ(n, held);
	emu_queue_close(self->dev, rq->q);
	free(rq);
}

/*
 * Flushes (more than the device once kept: EMU_MAX_FLUSH was 16) behind
 * a gap: none is answered before every member below its count is
 * performed; the control is the flushes below the gap, answered while it
 * is open.
 */
#define FL 48u

TEST_F_TIMEOUT(rig, seq_flush_never_early, TIMEOUT)
{
	unsigned long n = t_trials(SOME_TRIALS) / 4, early = 0, ctl = 0;
	struct rq *rq = calloc(1, sizeof(*rq));
	struct oms_wc wc[64];

	ASSERT_NE(NULL, rq);
	ASSERT_EQ(0, rq_open(self->dev, 0, rq));
	for (unsigned long t = 0; t < n && _metadata->passed; t++) {
		uint32_t g = ++self->gen, m = 32;
		uint32_t gap = t_rng_below(&self->rng, m);
		uint32_t w0 = t_rng_below(&self->rng, WORDS - m);
		uint16_t s0 = rq->seq;
		uint32_t got = 0;
		uint64_t src[32];

		batch_reset(rq);
		for (uint32_t i = 0; i < m; i++) {
			self->mem[w0 + i] = OLD(g, w0 + i);
			src[i] = NEW(g, w0 + i);
			add_seq(rq, mk_wr(&self->r, OMS_WR_PUT, w0 + i,
					  &src[i], 0));
		}
		for (uint32_t f = 0; f < FL; f++)
			add(rq, (struct oms_wr){ .op = OMS_WR_FLUSH,
				.flags = OMS_WR_F_SEQ, .dest = self->r.dest,
				.seq = (uint16_t)(s0 + t_rng_below(&self->rng,
								   m + 1)) });
		/* hold the gap back, post the rest in random order */
		swap_wr(rq, gap, rq->n - 1);
		shuffle(&self->rng, rq, 0, rq->n - 1);
		ASSERT_EQ(0, post_range(rq, 0, rq->n - 1));
		for (int phase = 0; phase < 2; phase++) {
			uint32_t want = phase ? rq->n : 0, quiet = 0;

			/* Phase 0 (the gap open) lasts until the device has
			 * taken every command rung and 200 polls in a row
			 * brought nothing (it has done what it can), at most
			 * 20000 polls: a count of yields alone took 300 s
			 * with three make checks on two cores. */
			for (unsigned long spin = 0;
			     spin < (phase ? 50000000ul : 20000ul) &&
			     (!phase || got < want); spin++) {
				int k = emu_q_poll(rq->q, wc, 64, NULL);

				quiet = k ? 0 : quiet + 1;
				if (!phase && quiet > 200 &&
				    __atomic_load_n(&rq->q->taken,
						    __ATOMIC_ACQUIRE) ==
				    __atomic_load_n(&rq->q->doorbell,
						    __ATOMIC_ACQUIRE))
					break;

				for (int i = 0; i < k; i++) {
					const struct oms_wr *w =
						&rq->w[0];
					uint32_t c;

					for (uint32_t s = 0; s < rq->n; s++)
						if (rq->w[s].slot == wc[i].slot)
							w = &rq->w[s];
					got++;
					EXPECT_EQ(0, wc[i].status);
					if (w->op != OMS_WR_FLUSH)
						continue;
					c = (uint16_t)(w->seq - s0);
					if (!phase)
						ctl++;
					for (uint32_t j = 0; j < c; j++)
						early += rd(self->mem,
							    w0 + j) !=
							 NEW(g, w0 + j);
					if (!phase && c > gap)
						early++;
				}
				if (!k)
					sched_yield();
			}
			if (!phase)
				ASSERT_EQ(0, post_range(rq, rq->n - 1, rq->n));
		}
		ASSERT_EQ(rq->n, got);
	}
	TH_LOG("%lu trials of %u flushes behind a gap: %lu answered early; "
	       "%lu below the gap answered while it was open", n, FL, early,
	       ctl);
	ASSERT_EQ(0, early);
	ASSERT_GT(ctl, 0);
	emu_queue_close(self->dev, rq->q);
	free(rq);
}

/*
 * The destination stream's three decisions (docs/ordering.md, "The
 * destination stream"), the same on the agent (tests/agent_loop.c,
 * L37_duplicate_window_restart_as_on_emu): a duplicate of a buffered
 * member (-EEXIST), a number past the window (-ENOSPC) and one already
 * taken (-ESTALE) each stop the stream where it stands - the buffered
 * member and every later one -ECANCELED, unperformed - and a resume naming
 * the initiator's next number resumes it: the numbering goes on.
 */
struct decide {
	struct rq *rq;
	uint32_t w0;
	uint64_t src[12];
};

/* Post stream member @seq, a put of word @word; returns its slot. */
static uint32_t post_member(struct decide *x, const struct oms_rmr *r,
			    uint16_t seq, uint32_t word)
{
	struct oms_wr w = mk_wr(r, OMS_WR_PUT, x->w0 + word, &x->src[word],
				OMS_WR_F_SEQ);
	uint32_t slot;

	w.seq = seq;
	slot = add(x->rq, w);
	post_range(x->rq, slot, slot + 1);
	return slot;
}

static uint32_t post_reset(struct decide *x, const struct oms_rmr *r,
			   uint16_t next)
{
	uint32_t slot = add(x->rq, (struct oms_wr){ .op = OMS_WR_RESUME,
					.dest = r->dest, .seq = next });

	post_range(x->rq, slot, slot + 1);
	return slot;
}

/* The member waits (behind a gap): the device has done what it may. */
static void waits(FIXTURE_DATA(rig) *self, struct decide *x)
{
	let_run(self->dev, 200);
	poll_now(x->rq);
}

TEST_F_TIMEOUT(rig, L37_seq_duplicate_window_restart, TIMEOUT)
{
	struct decide x = { .w0 = t_rng_below(&self->rng, WORDS - 12) };
	const uint16_t far = 4 + EMU_SEQ_WINDOW;
	uint32_t s[16], g = ++self->gen;
	const struct oms_rmr *r = &self->r;

	x.rq = calloc(1, sizeof(*x.rq));
	ASSERT_NE(NULL, x.rq);
	ASSERT_EQ(0, rq_open(self->dev, 0, x.rq));
	for (uint32_t i = 0; i < 12; i++) {
		self->mem[x.w0 + i] = OLD(g, x.w0 + i);
		x.src[i] = NEW(g, x.w0 + i);
	}
	/* a duplicate */
	s[0] = post_member(&x, r, 0, 0);
	ASSERT_EQ(1, reap(x.rq, 1));
	s[1] = post_member(&x, r, 2, 2);
	waits(self, &x);
	ASSERT_EQ(1, x.rq->ndone);
	/* each waits for the answer before it: chaos would reorder them */
	s[2] = post_member(&x, r, 2, 3);
	ASSERT_EQ(3, reap(x.rq, 3));
	s[3] = post_member(&x, r, 1, 1);
	ASSERT_EQ(4, reap(x.rq, 4));
	s[4] = post_reset(&x, r, 3);
	ASSERT_EQ(5, reap(x.rq, 5));
	s[5] = post_member(&x, r, 3, 4);
	ASSERT_EQ(6, reap(x.rq, 6));
	/* a number past the window */
	s[6] = post_member(&x, r, 5, 5);
	waits(self, &x);
	ASSERT_EQ(6, x.rq->ndone);
	s[7] = post_member(&x, r, far, 6);
	ASSERT_EQ(8, reap(x.rq, 8));
	s[8] = post_member(&x, r, 4, 7);
	ASSERT_EQ(9, reap(x.rq, 9));
	s[9] = post_reset(&x, r, far + 1);
	/* a number already taken (the resume's is far + 1) */
	s[10] = post_member(&x, r, far, 8);
	ASSERT_EQ(11, reap(x.rq, 11));
	s[11] = post_member(&x, r, far + 1, 9);
	s[12] = post_reset(&x, r, far + 2);
	s[13] = post_member(&x, r, far + 2, 10);
	ASSERT_EQ(14, reap(x.rq, 14));

	EXPECT_EQ(0, x.rq->wc[s[0]].status);
	EXPECT_EQ(-ECANCELED, x.rq->wc[s[1]].status);
	EXPECT_EQ(-EEXIST, x.rq->wc[s[2]].status);
	EXPECT_EQ(-ECANCELED, x.rq->wc[s[3]].status);
	EXPECT_EQ(0, x.rq->wc[s[4]].status);
	EXPECT_EQ(0, x.rq->wc[s[5]].status);
	EXPECT_EQ(-ECANCELED, x.rq->wc[s[6]].status);
	EXPECT_EQ(-ENOSPC, x.rq->wc[s[7]].status);
	EXPECT_EQ(-ECANCELED, x.rq->wc[s[8]].status);
	EXPECT_EQ(0, x.rq->wc[s[9]].status);
	EXPECT_EQ(-ESTALE, x.rq->wc[s[10]].status);
	EXPECT_EQ(-ECANCELED, x.rq->wc[s[11]].status);
	EXPECT_EQ(0, x.rq->wc[s[12]].status);
	EXPECT_EQ(0, x.rq->wc[s[13]].status);
	for (uint32_t i = 0; i < 11; i++)
		EXPECT_EQ(i == 0 || i == 4 || i == 10 ? NEW(g, x.w0 + i) :
			  OLD(g, x.w0 + i), rd(self->mem, x.w0 + i));
	emu_queue_close(self->dev, x.rq->q);
	free(x.rq);
}

TEST_HARNESS_MAIN
