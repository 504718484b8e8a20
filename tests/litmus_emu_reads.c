// SPDX-License-Identifier: MIT
/*
 * Litmus L23, L29, L30 and L31 on the emulated device with chaos on: the
 * read side.  A writer thread plays the target's CPU and updates host
 * memory coherently (oms_mr_write) while the initiator reads it through the
 * device; the device executes the cache lines of relaxed reads in random
 * order, spread over its steps, so the writer lands between them.
 *   L29 flag->data: acq(flag) then data; forbidden data older than flag.
 *       Run with the RLSQ at the NIC and at the root complex.
 *   L30 one read of header|data|footer written back to front; forbidden an
 *       accepted (header == footer) item with torn data.
 *   L31 as L29 with the speculative RC-opt RLSQ: squashes must happen and
 *       the results must still be those of a serial execution.
 *   L23 seed 002 hold: node A puts data to B and sets a flag in its own
 *       memory; B reads the flag with a class-2 read: a response carrying
 *       the flag may not leave before the data is visible at B.
 *   L24 scope: per destination (a write to C does not hold a response to
 *       B) and global (it does).
 *   L25 the same with eight posted writes acknowledged in any order.
 * Forbidden outcomes: >= 1 000 000 trials per test in the plain build
 * (100 000 under ASan); controls with acquire (or the hold) off must show
 * the outcome.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

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
#define CONTROL_MAX	400000ul
#define ITEMS		8u	/* items the writer cycles through */
#define ITEM		256u	/* bytes: 4 lines */
#define BATCH		256u

struct rl {
	struct oms_emu *emu;	/* its own: its read engine is looked at */
	struct oms_ctx *ini, *tgt;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint8_t *mem;
	pthread_t writer;
	int stop;
	int kind;		/* 0: flag/data (L29/L31), 1: header/footer */
	uint64_t writes;
};

static void *writer(void *arg)
{
	struct rl *l = arg;
	uint64_t v = 1;

	while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		for (uint32_t k = 0; k < ITEMS; k++) {
			uint8_t line[64];
			uint64_t off = (uint64_t)k * ITEM;

			for (int i = 0; i < 8; i++)
				memcpy(line + 8 * i, &v, 8);
			if (l->kind == 0) {
				/* data (line 2) then flag (line 0) */
				oms_mr_write(l->mr, off + 128, line, 64);
				oms_mr_write(l->mr, off, line, 64);
			} else {
				/* back to front: footer, data, header */
				for (int n = 3; n >= 0; n--)
					oms_mr_write(l->mr, off + 64u * n,
						     line, 64);
			}
			l->writes++;
		}
		v++;
		if (!(v & 7))
			sched_yield();
	}
	return NULL;
}

static int rl_open(struct rl *l, int kind, uint32_t order, uint32_t flags,
		   uint64_t seed)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_CHAOS | OMS_EMU_ATTR_READ_ORDER,
		.chaos_seed = seed, .read_order = order, .rlsq_entries = 256,
	};

	memset(l, 0, sizeof(*l));
	l->kind = kind;
	if (oms_emu_create(&ea, &l->emu))
		return -1;
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU |
		      OMS_CTX_ATTR_FLAGS | OMS_CTX_ATTR_TIMEOUT;
	/* With two make checks and a third job on two cores, every get
	 * after some 100 000 trials failed once: most likely the 5 s
	 * liveness timeout, the device thread waiting for the lock the
	 * writer thread takes for every line.  A hang detector, not a
	 * budget: */
	a.timeout_ms = 60000;
	a.emu = l->emu;
	a.flags = flags;
	if (oms_ctx_create(&a, &l->ini))
		return -1;
	a.node = 1;
	a.flags = 0;
	if (oms_ctx_create(&a, &l->tgt))
		return -1;
	l->mem = aligned_alloc(64, (size_t)ITEMS * ITEM);
	memset(l->mem, 0, (size_t)ITEMS * ITEM);
	if (oms_mr_reg(l->tgt, l->mem, (size_t)ITEMS * ITEM, OMS_ACCESS_ALL,
		       &l->mr) || oms_mr_remote(l->mr, &l->r))
		return -1;
	return pthread_create(&l->writer, NULL, writer, l);
}

static void rl_close(struct rl *l)
{
	__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
	pthread_join(l->writer, NULL);
	oms_ctx_destroy(l->ini);
	oms_ctx_destroy(l->tgt);
	oms_emu_destroy(l->emu);
	free(l->mem);
}

struct res {
	unsigned long trials, hits, errors, squashed, accepted;
};

/*
 * L29/L31: get(flag, acq?) then get(data); forbidden data < flag.
 * @trials of them, and past that, up to @squash_max in all, until the
 * device has squashed a speculative read (0: no more).
 */
static struct res flag_data(uint32_t order, unsigned fflags, uint64_t seed,
			    unsigned long trials, int stop_on_hit,
			    unsigned long squash_max)
{
	static uint64_t flag[BATCH], data[BATCH];
	struct res r = { 0 };
	struct rl l;

	if (rl_open(&l, 0, order, 0, seed)) {
		r.errors++;
		return r;
	}
	while (!(stop_on_hit && r.hits)) {
		if (r.trials >= trials &&
		    (r.trials >= squash_max ||
		     __atomic_load_n(&l.emu->rlsq.cnt.squashed,
				     __ATOMIC_RELAXED)))
			break;
		for (uint32_t i = 0; i < BATCH; i++) {
			uint64_t off = (uint64_t)(i % ITEMS) * ITEM;

			r.errors += oms_get(l.ini, &flag[i], &l.r, off, 8,
					    fflags) != 0;
			r.errors += oms_get(l.ini, &data[i], &l.r, off + 128, 8,
					    OMS_READ_RELAXED) != 0;
		}
		r.errors += oms_quiet(l.ini) != 0;
		for (uint32_t i = 0; i < BATCH; i++)
			r.hits += data[i] < flag[i];
		r.trials += BATCH;
	}
	r.squashed = l.emu->rlsq.cnt.squashed;
	rl_close(&l);
	return r;
}

TEST(litmus_L29_dma_flag_data_on_emu)
{
	static const uint32_t order[] = { OMS_ORDER_NIC, OMS_ORDER_RC };
	static const char *const name[] = { "NIC", "RC" };
	uint64_t seed = t_seed(0x1d01);
	unsigned long n = t_trials(DEFAULT_TRIALS) / 2;

	for (int m = 0; m < 2; m++) {
		struct res r = flag_data(order[m], OMS_READ_ACQUIRE, seed, n, 0,
					 0);

		TH_LOG("L29 %s: %lu trials, %lu data older than flag "
		       "(chaos seed %#llx)", name[m], r.trials, r.hits,
		       (unsigned long long)seed);
		ASSERT_EQ(0, r.errors);
		ASSERT_EQ(0, r.hits);
	}
	{
		struct res r = flag_data(OMS_ORDER_RC, OMS_READ_RELAXED, seed,
					 CONTROL_MAX, 1, 0);

		TH_LOG("L29 control (relaxed flag read): forbidden seen %lu "
		       "times in %lu trials", r.hits, r.trials);
		ASSERT_EQ(0, r.errors);
		ASSERT_GT(r.hits, 0);
	}
}

TEST(litmus_L31_speculative_ordered_reads_on_emu)
{
	uint64_t seed = t_seed(0x1f01);
	/*
	 * A squash needs the host writer to run while a read is in
	 * speculation; beside a busy machine's other threads it may not
	 * within the quick count, so the trials go on (each one checked)
	 * until one was squashed, up to CONTROL_MAX.
	 */
	struct res r = flag_data(OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE, seed,
				 t_trials(DEFAULT_TRIALS), 0, CONTROL_MAX);

	TH_LOG("L31 RC-opt: %lu trials, %lu non-serial results, %lu "
	       "speculative reads squashed and retried (chaos seed %#llx)",
	       r.trials, r.hits, r.squashed, (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_GT(r.squashed, 0);
	r = flag_data(OMS_ORDER_RC_OPT, OMS_READ_RELAXED, seed, CONTROL_MAX, 1,
		      0);
	TH_LOG("L31 control (no acquire): forbidden seen %lu times in %lu "
	       "trials", r.hits, r.trials);
	ASSERT_EQ(0, r.errors);
	ASSERT_GT(r.hits, 0);
}

/* L30: one read of a whole item; accepted iff header == footer. */
static struct res header_footer(uint32_t order, unsigned flags, uint64_t seed,
				unsigned long trials, int stop_on_hit)
{
	static uint64_t buf[BATCH][ITEM / 8];
	struct res r = { 0 };
	struct rl l;

	if (rl_open(&l, 1, order, 0, seed)) {
		r.errors++;
		return r;
	}
	while (r.trials < trials && !(stop_on_hit && r.hits)) {
		for (uint32_t i = 0; i < BATCH; i++)
			r.errors += oms_get(l.ini, buf[i], &l.r,
					    (uint64_t)(i % ITEMS) * ITEM, ITEM,
					    flags) != 0;
		r.errors += oms_quiet(l.ini) != 0;
		for (uint32_t i = 0; i < BATCH; i++) {
			uint64_t h = buf[i][0], f = buf[i][ITEM / 8 - 1];
			int torn = 0;

			if (h != f)
				continue;	/* detected: the reader retries */
			r.accepted++;
			for (uint32_t w = 0; w < ITEM / 8; w++)
				torn |= buf[i][w] != h;
			r.hits += torn;
		}
		r.trials += BATCH;
	}
	r.squashed = l.emu->rlsq.cnt.squashed;
	rl_close(&l);
	return r;
}

TEST(litmus_L30_order_inside_one_read_on_emu)
{
	static const uint32_t order[] = { OMS_ORDER_RC_OPT, OMS_ORDER_RC };
	static const char *const name[] = { "RC-opt", "RC" };
	uint64_t seed = t_seed(0x1e01);
	unsigned long n = t_trials(DEFAULT_TRIALS) / 2;
	struct res r;

	for (int m = 0; m < 2; m++) {
		r = header_footer(order[m], OMS_READ_ACQUIRE, seed, n, 0);
		TH_LOG("L30 %s: %lu reads, %lu accepted, %lu torn accepted, "
		       "%lu squashed (chaos seed %#llx)", name[m], r.trials,
		       r.accepted, r.hits, r.squashed,
		       (unsigned long long)seed);
		ASSERT_EQ(0, r.errors);
		ASSERT_EQ(0, r.hits);
	}
	r = header_footer(OMS_ORDER_RC_OPT, OMS_READ_RELAXED, seed,
			  CONTROL_MAX, 1);
	TH_LOG("L30 control (relaxed: lines in any order): %lu torn accepted "
	       "in %lu reads", r.hits, r.trials);
	ASSERT_EQ(0, r.errors);
	ASSERT_GT(r.hits, 0);
}

/*
 * L23: node 1 (A) puts data[i] to node 2 (B), then flag[i] into its own
 * memory; node 2 reads flag[i] from A with a class-2 read.  The device
 * stamps when each put becomes visible and when each response leaves.
 */
#define MAXDATA 8	/* L25: posted writes per trial */

struct l23 {
	uint64_t stamp_data[BATCH * MAXDATA], stamp_resp[BATCH], clock;
	uint64_t got[BATCH];
	uint32_t data_region;
	uint64_t one;
};

static void l23_observe(void *arg, uint32_t q, const struct oms_wr *wr)
{
	struct l23 *s = arg;

	(void)q;
	s->clock++;
	if (wr->op == OMS_WR_PUT && wr->region == s->data_region)
		s->stamp_data[wr->off / 8] = s->clock;
	else if (wr->op == OMS_WR_GET &&
		 wr->local >= (uintptr_t)s->got &&
		 wr->local < (uintptr_t)(s->got + BATCH))
		s->stamp_resp[(wr->local - (uintptr_t)s->got) / 8] = s->clock;
}

/* @dnode: where A's data goes: 2 (the reader, B) or 3 (a third node).
 * @emu_flags: the device's hold (OMS_EMU_F_*), a setting of the device. */
static struct res l23_run(uint32_t emu_flags, uint64_t seed,
			  unsigned long trials, int stop_on_hit, uint32_t ndata,
			  uint32_t dnode)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_CHAOS | OMS_EMU_ATTR_FLAGS,
		.chaos_seed = seed, .flags = emu_flags,
	};
	struct oms_emu *emu = NULL;
	struct oms_ctx *ca = NULL, *cb = NULL, *cc = NULL;
	uint64_t *ma = calloc(BATCH, 8), *mb = calloc(BATCH * MAXDATA, 8);
	struct oms_mr *mra, *mrb;
	struct oms_rmr ra, rb;
	struct l23 *s = calloc(1, sizeof(*s));
	struct res r = { 0 };

	if (oms_emu_create(&ea, &emu)) {
		r.errors++;
		goto out;
	}
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU |
		      OMS_CTX_ATTR_QDEPTH;
	a.emu = emu;
	a.queue_depth = 4096;	/* a frozen batch is posted whole */
	a.node = 1;
	if (oms_ctx_create(&a, &ca) || (a.node = 2, oms_ctx_create(&a, &cb)) ||
	    (a.node = 3, oms_ctx_create(&a, &cc)) ||
	    oms_mr_reg(ca, ma, BATCH * 8, OMS_ACCESS_ALL, &mra) ||
	    oms_mr_reg(dnode == 3 ? cc : cb, mb, BATCH * MAXDATA * 8,
		       OMS_ACCESS_ALL, &mrb)) {
		r.errors++;
		goto out;
	}
	oms_mr_remote(mra, &ra);
	oms_mr_remote(mrb, &rb);
	s->data_region = rb.region;
	s->one = 1;
	emu_dev_set_observer(emu, l23_observe, s);
	while (r.trials < trials && !(stop_on_hit && r.hits)) {
		/*
		 * Every other batch is posted whole while the device is
		 * frozen, so A's puts and B's gets meet in the device at
		 * once and the chaos picks among all of them.  Without it,
		 * a loaded machine can let the device drain A's puts
		 * before B's gets exist, and no response could pass a
		 * write whatever the hold does (seen in CI: a control
		 * with 0 hits in 400128 trials).
		 */
		int busy, frozen = (r.trials / BATCH) & 1;

		if (frozen)
			emu_dev_freeze(emu, 1);
		for (uint32_t i = 0; i < BATCH; i++) {
			for (uint32_t k = 0; k < ndata; k++)
				r.errors += oms_put(ca, &rb, 8ull * (i * ndata + k),
						    &s->one, 8,
						    OMS_STORE_WEAK) != 0;
			r.errors += oms_put(ca, &ra, 8ull * i, &s->one, 8,
					    OMS_STORE_WEAK) != 0;
		}
		for (uint32_t i = 0; i < BATCH; i++)
			r.errors += oms_get(cb, &s->got[i], &ra, 8ull * i, 8,
					    OMS_READ_RESP_ORDERED) != 0;
		if (frozen)
			emu_dev_freeze(emu, 0);
		do {
			int x = oms_progress(ca), y = oms_progress(cb);

			r.errors += x < 0 || y < 0;
			busy = x > 0 || y > 0;
			if (busy)
				sched_yield();
		} while (busy);
		r.errors += oms_quiet(ca) != 0;
		r.errors += oms_quiet(cb) != 0;
		for (uint32_t i = 0; i < BATCH; i++) {
			int late = 0;

			for (uint32_t k = 0; k < ndata; k++) {
				uint64_t d = s->stamp_data[i * ndata + k];

				late |= !d || d > s->stamp_resp[i];
			}
			r.hits += s->got[i] == 1 && late;
			r.accepted += s->got[i] == 1;
		}
		r.trials += BATCH;
		/* reset A's flags and B's data through the device owner */
		emu_dev_set_observer(emu, NULL, NULL);
		memset(s, 0, offsetof(struct l23, data_region));
		s->data_region = rb.region;
		for (uint32_t i = 0; i < BATCH; i++) {
			oms_mr_write(mra, 8ull * i, &(uint64_t){ 0 }, 8);
		}
		memset(mb, 0, BATCH * MAXDATA * 8);
		emu_dev_set_observer(emu, l23_observe, s);
	}
	emu_dev_set_observer(emu, NULL, NULL);
out:
	if (ca)
		oms_ctx_destroy(ca);
	if (cb)
		oms_ctx_destroy(cb);
	if (cc)
		oms_ctx_destroy(cc);
	if (emu)
		oms_emu_destroy(emu);
	free(ma);
	free(mb);
	free(s);
	return r;
}

TEST(litmus_L23_response_held_behind_posted_write_on_emu)
{
	uint64_t seed = t_seed(0x1701);
	struct res r = l23_run(0, seed, t_trials(DEFAULT_TRIALS), 0, 1, 2);

	TH_LOG("L23: %lu trials, %lu saw the flag, %lu responses left before "
	       "the data was visible (chaos seed %#llx)", r.trials,
	       r.accepted, r.hits, (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_GT(r.accepted, 0);
	r = l23_run(OMS_EMU_F_NO_HOLD, seed, CONTROL_MAX, 1, 1, 2);
	TH_LOG("L23 control (hold off): forbidden seen %lu times in %lu "
	       "trials", r.hits, r.trials);
	ASSERT_EQ(0, r.errors);
	ASSERT_GT(r.hits, 0);
}

/* L24: A's posted writes go to a third node C.  Per-destination scope
 * (the default): a response to B is not held by them (and the chaos must
 * show a response leaving first).  Global scope: it is. */
TEST(litmus_L24_hold_scope_on_emu)
{
	uint64_t seed = t_seed(0x1801);
	struct res r = l23_run(OMS_EMU_F_HOLD_GLOBAL, seed,
			       t_trials(DEFAULT_TRIALS), 0, 1, 3);

	TH_LOG("L24 global scope: %lu trials, %lu saw the flag, %lu responses "
	       "to B left before A's write to C was visible (seed %#llx)",
	       r.trials, r.accepted, r.hits, (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_GT(r.accepted, 0);
	r = l23_run(0, seed, CONTROL_MAX, 1, 1, 3);
	TH_LOG("L24 per-destination scope: a response to B passed A's write "
	       "to C %lu times in %lu trials (allowed)", r.hits, r.trials);
	ASSERT_EQ(0, r.errors);
	ASSERT_GT(r.hits, 0);
}

/* L25: eight posted writes per trial, executed (and acknowledged) in any
 * order: the class-2 response leaves only after the last of them. */
TEST(litmus_L25_counting_out_of_order_acks_on_emu)
{
	uint64_t seed = t_seed(0x1901);
	struct res r = l23_run(0, seed, t_trials(DEFAULT_TRIALS), 0, MAXDATA, 2);

	TH_LOG("L25: %lu trials of %d posted writes, %lu saw the flag, %lu "
	       "responses left before the last write was visible (seed "
	       "%#llx)", r.trials, MAXDATA,
	       r.accepted, r.hits, (unsigned long long)seed);
	ASSERT_EQ(0, r.errors);
	ASSERT_EQ(0, r.hits);
	ASSERT_GT(r.accepted, 0);
	r = l23_run(OMS_EMU_F_NO_HOLD, seed, CONTROL_MAX, 1, MAXDATA, 2);
	TH_LOG("L25 control (hold off): forbidden seen %lu times in %lu "
	       "trials", r.hits, r.trials);
	ASSERT_EQ(0, r.errors);
	ASSERT_GT(r.hits, 0);
}

TEST_HARNESS_MAIN
