// SPDX-License-Identifier: MIT
/*
 * Destination ordering by sequence number on the emulated device (seed
 * 004, 5.2; OMS_CTX_F_DEST_SEQ): every ordered operation carries a
 * per-destination sequence number and the destination's reorder buffer
 * applies them in program order, whatever order the (chaos) fabric
 * delivers them in.
 *   L27 MMIO message passing: data lines then a strong flag to one
 *       destination; the flag is never visible before the data, and the
 *       initiator never waits (nothing is held).
 *   L28 per-thread streams: a gap in one stream does not hold another.
 *   L09 the in-order channel fast path: no strong store is held.
 *   L10 channel switch: ordered stores on one in-order channel, a strong
 *       store on another: it waits for a flush of the first.
 *   L11 mixed history: one in-order and one acknowledged channel.
 *   L26 a read after a write to the same address, same requester, sees
 *       the write (the read travels the same in-order stream).
 * Forbidden outcomes over >= 1 000 000 trials (plain build; 100 000 under
 * ASan), controls with the ordering off must show them.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"
#include "emu/emu.h"

#ifdef __SANITIZE_ADDRESS__
#define DEFAULT_TRIALS 100000ul
#else
#define DEFAULT_TRIALS 1000000ul
#endif
#define CONTROL_MAX	200000ul
#define BATCH		1024u
#define SLOTS		8u
#define NINI		32
#define NDEST		3

struct lab {
	struct oms_emu *emu;	/* its own: the observer is set on it */
	struct oms_ctx *inis[NINI], *tgt[NDEST];
	struct oms_mr *mr[NDEST];
	struct oms_rmr r[NDEST];
	uint64_t *mem[NDEST], *stamp[NDEST];
	int ridx[EMU_MAX_REGIONS];
	uint64_t clock, val[BATCH][SLOTS];
	uint64_t got[BATCH], gen;
	unsigned long held;
};

static void observe(void *arg, uint32_t q, const struct oms_wr *wr)
{
	struct lab *l = arg;
	int d = l->ridx[wr->region % EMU_MAX_REGIONS];

	(void)q;
	if (d < 0 || wr->op != OMS_WR_PUT)
		return;
	l->clock++;
	for (uint64_t w = wr->off / 8; w <= (wr->off + wr->len - 1) / 8; w++)
		l->stamp[d][w] = l->clock;
}

/* Set by a test: destinations with in-order (sequence) channels. */
static uint32_t seq_mask;

static int lab_open(struct lab *l, uint32_t flags, uint64_t seed)
{
	size_t words = (size_t)BATCH * SLOTS;
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = seed,
	};

	memset(l, 0, sizeof(*l));
	memset(l->ridx, -1, sizeof(l->ridx));
	if (oms_emu_create(&ea, &l->emu))
		return -1;
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_FLAGS |
		      OMS_CTX_ATTR_EMU;
	a.emu = l->emu;
	a.flags = flags;
	if (seq_mask && !(flags & OMS_CTX_F_NO_ORDERING)) {
		a.comp_mask |= OMS_CTX_ATTR_DEST_SEQ;
		a.dest_seq_mask = seq_mask;
	}
	for (int k = 0; k < NINI; k++)
		if (oms_ctx_create(&a, &l->inis[k]))
			return -1;
	for (int d = 1; d < NDEST; d++) {
		a.node = (uint32_t)d;
		a.flags = 0;
		l->mem[d] = calloc(words, 8);
		l->stamp[d] = calloc(words, 8);
		if (oms_ctx_create(&a, &l->tgt[d]) ||
		    oms_mr_reg(l->tgt[d], l->mem[d], words * 8, OMS_ACCESS_ALL,
			       &l->mr[d]))
			return -1;
		oms_mr_remote(l->mr[d], &l->r[d]);
		l->ridx[l->r[d].region] = d;
	}
	emu_dev_set_observer(l->emu, observe, l);
	return 0;
}

/* Also after a lab_open() that failed part way. */
static void lab_close(struct lab *l)
{
	if (!l->emu)
		return;
	emu_dev_set_observer(l->emu, NULL, NULL);
	for (int k = 0; k < NINI; k++)
		if (l->inis[k])
			oms_ctx_destroy(l->inis[k]);
	for (int d = 1; d < NDEST; d++) {
		if (l->tgt[d])
			oms_ctx_destroy(l->tgt[d]);
		free(l->mem[d]);
		free(l->stamp[d]);
	}
	/* after its contexts: a device refuses to go while one lives */
	oms_emu_destroy(l->emu);
}

static int st(struct lab *l, uint32_t i, int d, uint32_t w, unsigned cls)
{
	l->val[i][w] = 1;
	return oms_put(l->inis[i % NINI], &l->r[d],
		       ((uint64_t)i * SLOTS + w) * 8, &l->val[i][w], 8,
		       (enum oms_store_class)cls);
}

static uint64_t vt(const struct lab *l, uint32_t i, int d, uint32_t w)
{
	return l->stamp[d][i * SLOTS + w];
}

typedef int (*prog_fn)(struct lab *l, uint32_t i);
typedef int (*pred_fn)(const struct lab *l, uint32_t i);

struct result {
	unsigned long trials, hits, errors, held;
};

static struct result run(uint32_t flags, uint64_t seed, prog_fn prog,
			 pred_fn pred, unsigned long trials, int stop_on_hit)
{
	struct result r = { 0 };
	struct lab *l = calloc(1, sizeof(*l));

	if (lab_open(l, flags, seed)) {
		r.errors++;
		goto out;
	}
	while (r.trials < trials && !(stop_on_hit && r.hits)) {
		int busy;

		for (uint32_t i = 0; i < BATCH; i++)
			r.errors += prog(l, i) != 0;
		do {
			busy = 0;
			for (int k = 0; k < NINI; k++) {
				int n = oms_progress(l->inis[k]);

				r.errors += n < 0;
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
		for (int d = 1; d < NDEST; d++)
			memset(l->stamp[d], 0, (size_t)BATCH * SLOTS * 8);
	}
	for (int k = 0; k < NINI; k++) {
		struct oms_stats s = { .size = sizeof(s) };

		oms_ctx_stats(l->inis[k], &s);
		r.held += s.held;
	}
out:
	lab_close(l);
	free(l);
	return r;
}

/* L27: data lines then the flag, one destination, no fence. */
static int l27(struct lab *l, uint32_t i)
{
	return st(l, i, 1, 0, OMS_STORE_WEAK) | st(l, i, 1, 2, OMS_STORE_WEAK) |
	       st(l, i, 1, 4, OMS_STORE_WEAK) | st(l, i, 1, 6, OMS_STORE_STRONG);
}

static int flag_early(const struct lab *l, uint32_t i)
{
	uint64_t f = vt(l, i, 1, 6);

	return f < vt(l, i, 1, 0) || f < vt(l, i, 1, 2) || f < vt(l, i, 1, 4);
}

TEST(litmus_L27_mmio_message_passing_on_emu)
{
	uint64_t seed = t_seed(0x1b01);
	struct result r = run(OMS_CTX_F_DEST_SEQ, seed, l27, flag_early,
			      t_trials(DEFAULT_TRIALS), 0);

	TH_LOG("L27 sequence numbers + reorder buffer: %lu trials, %lu flags "
	       "before data, %lu stores held at the initiator (chaos seed "
	       "%#llx)", r.trials, r.hits, r.held, (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_EQ(0, r.held);		/* no fence, no waiting */
	r = run(OMS_CTX_F_NO_ORDERING, seed, l27, flag_early, CONTROL_MAX, 1);
	TH_LOG("L27 control (no ordering): flag before data %lu times in %lu "
	       "trials", r.hits, r.trials);
	ASSERT_EQ(0, r.errors);
	ASSERT_GT(r.hits, 0);
}

/* L09: every strong store on the in-order channel, none held. */
static int l09(struct lab *l, uint32_t i)
{
	return st(l, i, 1, 0, OMS_STORE_STRONG) |
	       st(l, i, 1, 1, OMS_STORE_STRONG);
}

static int l09_bad(const struct lab *l, uint32_t i)
{
	return vt(l, i, 1, 1) < vt(l, i, 1, 0);
}

TEST(litmus_L09_in_order_channel_fast_path_on_emu)
{
	uint64_t seed = t_seed(0x901);
	struct result r = run(OMS_CTX_F_DEST_SEQ, seed, l09, l09_bad,
			      t_trials(DEFAULT_TRIALS), 0);

	TH_LOG("L09: %lu trials, %lu out of order, %lu held (seed %#llx)",
	       r.trials, r.hits, r.held, (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_EQ(0, r.held);
	r = run(OMS_CTX_F_NO_ORDERING, seed, l09, l09_bad, CONTROL_MAX, 1);
	TH_LOG("L09 control (no ordering): out of order %lu times in %lu",
	       r.hits, r.trials);
	ASSERT_GT(r.hits, 0);
}

/* L10: WO(A@D1); SO(F@D2) over in-order channels: F waits for a flush
 * of D1's channel. */
static int l10(struct lab *l, uint32_t i)
{
	return st(l, i, 1, 0, OMS_STORE_WEAK) | st(l, i, 2, 1, OMS_STORE_STRONG);
}

static int l10_bad(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, 1) < vt(l, i, 1, 0);
}

TEST(litmus_L10_channel_switch_flush_on_emu)
{
	uint64_t seed = t_seed(0xa01);
	struct result r = run(OMS_CTX_F_DEST_SEQ, seed, l10, l10_bad,
			      t_trials(DEFAULT_TRIALS), 0);

	TH_LOG("L10: %lu trials, %lu strong stores before the flushed store, "
	       "%lu held for a flush (seed %#llx)", r.trials, r.hits, r.held,
	       (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_GT(r.held, 0);
	r = run(OMS_CTX_F_NO_ORDERING, seed, l10, l10_bad, CONTROL_MAX, 1);
	TH_LOG("L10 control (no ordering): %lu in %lu", r.hits, r.trials);
	ASSERT_GT(r.hits, 0);
}

/* L11: ordered stores outstanding on an in-order channel (D1) and an
 * acknowledged one (D2), then a strong store: it waits for both the flush
 * of D1 and the acks of D2. */
static int l11(struct lab *l, uint32_t i)
{
	return st(l, i, 1, 0, OMS_STORE_WEAK) | st(l, i, 2, 1, OMS_STORE_WEAK) |
	       st(l, i, 2, 2, OMS_STORE_STRONG);
}

static int l11_bad(const struct lab *l, uint32_t i)
{
	return vt(l, i, 2, 2) < vt(l, i, 1, 0) || vt(l, i, 2, 2) < vt(l, i, 2, 1);
}

TEST(litmus_L11_mixed_history_on_emu)
{
	uint64_t seed = t_seed(0xb01);
	struct result r;

	seq_mask = 1u << 1;
	r = run(0, seed, l11, l11_bad, t_trials(DEFAULT_TRIALS), 0);
	TH_LOG("L11 (D1 in-order, D2 acked): %lu trials, %lu strong stores "
	       "early, %lu held (seed %#llx)", r.trials, r.hits, r.held,
	       (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_GT(r.held, 0);
	r = run(OMS_CTX_F_NO_ORDERING, seed, l11, l11_bad, CONTROL_MAX, 1);
	TH_LOG("L11 control (no ordering): %lu in %lu", r.hits, r.trials);
	ASSERT_GT(r.hits, 0);
	seq_mask = 0;
}

/* L26: a write then a read of the same address from the same requester
 * returns the new value (the read does not pass the posted write). */
static int l26(struct lab *l, uint32_t i)
{
	uint64_t off = (uint64_t)i * SLOTS * 8;

	if (!i)
		l->gen++;
	l->val[i][0] = l->gen;
	l->got[i] = 0;
	return oms_put(l->inis[i % NINI], &l->r[1], off, &l->val[i][0], 8,
		       OMS_STORE_WEAK) |
	       oms_get(l->inis[i % NINI], &l->got[i], &l->r[1], off, 8,
		       OMS_READ_RELAXED);
}

static int l26_old(const struct lab *l, uint32_t i)
{
	return l->got[i] != l->gen;
}

TEST(litmus_L26_read_after_posted_write_on_emu)
{
	uint64_t seed = t_seed(0x1a01);
	struct result r = run(OMS_CTX_F_DEST_SEQ, seed, l26, l26_old,
			      t_trials(DEFAULT_TRIALS), 0);

	TH_LOG("L26: %lu trials, %lu reads returned the old value (seed "
	       "%#llx)", r.trials, r.hits, (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	r = run(OMS_CTX_F_NO_ORDERING, seed, l26, l26_old, CONTROL_MAX, 1);
	TH_LOG("L26 control (no ordering): old value %lu times in %lu",
	       r.hits, r.trials);
	ASSERT_GT(r.hits, 0);
}

/* L28: two streams into one destination; a gap in one holds only it. */
/* Completions of @q until @want arrived or 30 s passed (far above the
 * need: a count of yields ran out under two make checks at once), then
 * whatever else arrives in 10 ms (there must be none). */
static int wait_wc(struct emu_queue *q, struct oms_wc *wc, int want)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	t = t0;
	while (got < want && t.tv_sec - t0.tv_sec < 30) {
		got += emu_q_poll(q, wc + got, want - got, NULL);
		if (got < want)
			sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
	}
	usleep(10000);
	return got + emu_q_poll(q, wc + got, 8, NULL);
}

TEST(litmus_L28_per_thread_streams_on_emu)
{
	struct oms_ctx *tgt;
	struct oms_mr *mr;
	struct oms_rmr r;
	struct emu_queue *t1, *t2;
	struct oms_wc wc[16];
	uint64_t mem[8] = { 0 }, v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct oms_emu *d;
	struct oms_wr late;
	struct oms_ctx_attr a = oms_ctx_attr_default();

	/* A device with every default, the two threads' queues opened on
	 * it below the context layer. */
	ASSERT_EQ(0, oms_emu_create(NULL, &d));
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU;
	a.node = 1;
	a.emu = d;
	ASSERT_EQ(0, oms_ctx_create(&a, &tgt));
	ASSERT_EQ(0, oms_mr_reg(tgt, mem, sizeof(mem), OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_mr_remote(mr, &r));
	ASSERT_EQ(0, emu_queue_open(d, 0, 16, &t1));
	ASSERT_EQ(0, emu_queue_open(d, 0, 16, &t2));
	/* thread 1: sequence numbers 1 and 2 (0 is late) */
	for (uint32_t s = 1; s <= 2; s++) {
		struct oms_wr wr = {
			.op = OMS_WR_PUT, .flags = OMS_WR_F_SEQ, .seq = s,
			.slot = s, .dest = r.dest, .region = r.region,
			.key = r.key, .off = 8 * s, .len = 8,
			.local = (uintptr_t)&v[s],
		};

		ASSERT_EQ(0, emu_q_post(t1, &wr));
	}
	ASSERT_EQ(0, emu_q_ring(t1, 2));
	/* thread 2: 0 and 1 to other words */
	for (uint32_t s = 0; s <= 1; s++) {
		struct oms_wr wr = {
			.op = OMS_WR_PUT, .flags = OMS_WR_F_SEQ, .seq = s,
			.slot = s, .dest = r.dest, .region = r.region,
			.key = r.key, .off = 8 * (4 + s), .len = 8,
			.local = (uintptr_t)&v[4 + s],
		};

		ASSERT_EQ(0, emu_q_post(t2, &wr));
	}
	ASSERT_EQ(0, emu_q_ring(t2, 2));
	ASSERT_EQ(2, wait_wc(t2, wc, 2));
	ASSERT_EQ(5, __atomic_load_n(&mem[4], __ATOMIC_ACQUIRE));
	ASSERT_EQ(6, __atomic_load_n(&mem[5], __ATOMIC_ACQUIRE));
	/* thread 1 still waits for its sequence number 0 */
	ASSERT_EQ(0, wait_wc(t1, wc, 0));
	ASSERT_EQ(0, __atomic_load_n(&mem[1], __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, __atomic_load_n(&mem[2], __ATOMIC_ACQUIRE));
	late = (struct oms_wr){
		.op = OMS_WR_PUT, .flags = OMS_WR_F_SEQ, .seq = 0, .slot = 0,
		.dest = r.dest, .region = r.region, .key = r.key, .off = 0,
		.len = 8, .local = (uintptr_t)&v[0],
	};
	ASSERT_EQ(0, emu_q_post(t1, &late));
	ASSERT_EQ(0, emu_q_ring(t1, 1));
	ASSERT_EQ(3, wait_wc(t1, wc, 3));
	ASSERT_EQ(1, mem[0]);
	ASSERT_EQ(2, mem[1]);
	ASSERT_EQ(3, mem[2]);
	emu_queue_close(d, t1);
	emu_queue_close(d, t2);
	oms_ctx_destroy(tgt);
	oms_emu_destroy(d);
}

TEST_HARNESS_MAIN
