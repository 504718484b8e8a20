// SPDX-License-Identifier: MIT
/*
 * Litmus L08, L13, L15, L16, L18-L22 on the emulated device (chaos on): the
 * issuer never stalls, quiet is completion, the local fence frees source
 * buffers, empty fences are free, fences and quiet are per context, the
 * doorbell by count, key checks with the drop counter, and errors that
 * never hang a fence.  Where the litmus names a forbidden outcome it is
 * counted over >= 1 000 000 trials (plain build; 100 000 under ASan) and
 * a control without the ordering call shows the outcome happens.
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
#include "oms_priv.h"

#ifdef __SANITIZE_ADDRESS__
#define DEFAULT_TRIALS 100000ul
#else
#define DEFAULT_TRIALS 1000000ul
#endif
#define BATCH 512u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Each test runs on a device of its own, reordering from @chaos (0: in
 * order), which it freezes or opens raw queues on directly.
 */
static struct oms_emu *mk_emu(uint64_t chaos)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = chaos,
	};
	struct oms_emu *e = NULL;

	if (oms_emu_create(&ea, &e))
		return NULL;
	return e;
}

/* A context on node @node of @emu (NULL @emu: none, the create refuses). */
static struct oms_ctx *mk(struct oms_emu *emu, uint32_t node)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *c = NULL;

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU;
	a.node = node;
	a.emu = emu;
	if (oms_ctx_create(&a, &c))
		return NULL;
	return c;
}

/* A target context on node 1 with one region of @words words. */
struct tgt {
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t *mem;
	size_t words;
};

static int tgt_open(struct tgt *t, size_t words, struct oms_emu *emu)
{
	t->ctx = mk(emu, 1);
	t->words = words;
	t->mem = calloc(words, 8);
	if (!t->ctx || !t->mem ||
	    oms_mr_reg(t->ctx, t->mem, words * 8, OMS_ACCESS_ALL, &t->mr))
		return -1;
	return oms_mr_remote(t->mr, &t->r);
}

static void tgt_close(struct tgt *t)
{
	oms_ctx_destroy(t->ctx);
	free(t->mem);
}

static uint64_t rd(const struct tgt *t, size_t w)
{
	return __atomic_load_n(&t->mem[w], __ATOMIC_ACQUIRE);
}

/* L08: a strong store behind unacknowledged stores returns at once. */
TEST(litmus_L08_issuer_never_stalls_on_emu)
{
	uint64_t seed = t_seed(0x801), one = 1, t0, worst = 0;
	struct oms_stats st = { .size = sizeof(st) };
	struct oms_emu *emu = mk_emu(seed);
	struct oms_ctx *ini = mk(emu, 0);
	struct tgt t;

	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, tgt_open(&t, 64, emu));
	/* The device hangs: nothing is acknowledged. */
	emu_dev_freeze(emu, 1);
	ASSERT_EQ(0, oms_put(ini, &t.r, 0, &one, 8, OMS_STORE_WEAK));
	for (int i = 1; i < 32; i++) {
		t0 = now_ns();
		ASSERT_EQ(0, oms_put(ini, &t.r, 8 * i, &one, 8,
				     OMS_STORE_STRONG));
		if (now_ns() - t0 > worst)
			worst = now_ns() - t0;
	}
	ASSERT_EQ(0, oms_ctx_stats(ini, &st));
	TH_LOG("31 strong stores issued while nothing is acked: held %llu, "
	       "slowest call %llu ns", (unsigned long long)st.held,
	       (unsigned long long)worst);
	ASSERT_GE(st.held, 31);
	ASSERT_LT(worst, 50000000ull);
	ASSERT_EQ(0, rd(&t, 1));
	emu_dev_freeze(emu, 0);
	ASSERT_EQ(0, oms_quiet(ini));
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(1, rd(&t, i));
	oms_ctx_destroy(ini);
	tgt_close(&t);
	oms_emu_destroy(emu);
}

/*
 * L15: after quiet every put, atomic and get is complete and visible.
 * Trial i: put(word 4i), fadd(word 4i+1), get(word 4i+2, set before).
 * Control: look before quiet.
 */
struct l15 {
	uint64_t src[BATCH], old[BATCH], got[BATCH];
};

static unsigned long l15_batch(struct oms_ctx *ini, struct tgt *t,
			       struct l15 *b, uint64_t v, int do_quiet,
			       unsigned long *errors)
{
	unsigned long bad = 0;

	for (uint32_t i = 0; i < BATCH; i++) {
		t->mem[4 * i + 2] = v;
		b->src[i] = v;
		b->old[i] = UINT64_MAX;
		b->got[i] = 0;
	}
	for (uint32_t i = 0; i < BATCH; i++) {
		unsigned cls = i % 3;

		*errors += oms_put(ini, &t->r, 32ull * i, &b->src[i], 8,
				   (enum oms_store_class)cls) != 0;
		*errors += oms_atomic_fadd(ini, &t->r, 32ull * i + 8, 1,
					   &b->old[i]) != 0;
		*errors += oms_get(ini, &b->got[i], &t->r, 32ull * i + 16, 8,
				   i & 1 ? OMS_READ_ACQUIRE :
				   OMS_READ_RELAXED) != 0;
	}
	if (do_quiet)
		*errors += oms_quiet(ini) != 0;
	for (uint32_t i = 0; i < BATCH; i++)
		bad += rd(t, 4 * i) != v || rd(t, 4 * i + 1) != v ||
		       __atomic_load_n(&b->old[i], __ATOMIC_ACQUIRE) != v - 1 ||
		       __atomic_load_n(&b->got[i], __ATOMIC_ACQUIRE) != v;
	if (!do_quiet)
		*errors += oms_quiet(ini) != 0;
	return bad;
}

TEST(litmus_L15_quiet_is_completion_on_emu)
{
	uint64_t seed = t_seed(0xf01);
	unsigned long trials = 0, bad = 0, errors = 0, ctl = 0, n;
	struct oms_emu *emu = mk_emu(seed);
	struct oms_ctx *ini = mk(emu, 0);
	struct l15 *b = calloc(1, sizeof(*b));
	struct tgt t;
	uint64_t v = 1;

	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, tgt_open(&t, 4 * BATCH, emu));
	/* word 4i+1 counts fadds: keep it equal to v - 1 before each batch */
	for (n = t_trials(DEFAULT_TRIALS); trials < n; trials += BATCH, v++)
		bad += l15_batch(ini, &t, b, v, 1, &errors);
	TH_LOG("L15: %lu trials (put+fadd+get each), %lu incomplete after "
	       "quiet (chaos seed %#llx)", trials, bad,
	       (unsigned long long)seed);
	ASSERT_EQ(0, errors);
	ASSERT_EQ(0, bad);
	for (n = 0; n < 200 && !ctl; n++, v++)
		ctl += l15_batch(ini, &t, b, v, 0, &errors);
	TH_LOG("L15 control (no quiet): %lu incomplete seen", ctl);
	ASSERT_GT(ctl, 0);
	ASSERT_EQ(0, errors);
	oms_ctx_destroy(ini);
	tgt_close(&t);
	oms_emu_destroy(emu);
	free(b);
}

/* L16: put from S; local fence; overwrite S: the old contents land. */
static unsigned long l16_run(int fence, unsigned long trials, uint64_t seed,
			     unsigned long *errors)
{
	struct oms_emu *emu = mk_emu(seed);	/* a fresh one each run */
	struct oms_ctx *ini = mk(emu, 0);
	uint64_t *src = calloc(BATCH, 8);
	unsigned long bad = 0, done = 0;
	struct tgt t;

	if (!ini || tgt_open(&t, BATCH, emu)) {
		(*errors)++;
		return 0;
	}
	while (done < trials && (fence || !bad)) {
		for (uint32_t i = 0; i < BATCH; i++) {
			src[i] = 1;
			t.mem[i] = 0;
			*errors += oms_put(ini, &t.r, 8ull * i, &src[i], 8,
					   OMS_STORE_WEAK) != 0;
		}
		if (fence)
			*errors += oms_fence_local(ini) != 0;
		for (uint32_t i = 0; i < BATCH; i++)
			__atomic_store_n(&src[i], 2, __ATOMIC_RELEASE);
		*errors += oms_quiet(ini) != 0;
		for (uint32_t i = 0; i < BATCH; i++)
			bad += rd(&t, i) != 1;
		done += BATCH;
	}
	oms_ctx_destroy(ini);
	tgt_close(&t);
	oms_emu_destroy(emu);
	free(src);
	return fence ? bad : done ? bad : 0;
}

TEST(litmus_L16_local_fence_frees_source_on_emu)
{
	uint64_t seed = t_seed(0x1001);
	unsigned long errors = 0, n = t_trials(DEFAULT_TRIALS);
	unsigned long bad = l16_run(1, n, seed, &errors);

	TH_LOG("L16: %lu trials, %lu got the overwritten source (seed %#llx)",
	       n, bad, (unsigned long long)seed);
	ASSERT_EQ(0, errors);
	ASSERT_EQ(0, bad);
	bad = l16_run(0, 200 * BATCH, seed, &errors);
	TH_LOG("L16 control (no local fence): overwritten source landed %lu "
	       "times", bad);
	ASSERT_EQ(0, errors);
	ASSERT_GT(bad, 0);
}

/* L18: a fence with nothing outstanding costs nothing. */
TEST(litmus_L18_empty_fence_on_emu)
{
	struct oms_stats st = { .size = sizeof(st) };
	struct oms_emu *emu = mk_emu(t_seed(0x1201));
	struct oms_ctx *ini = mk(emu, 0);
	uint64_t t0;
	int n = 100000;

	ASSERT_NE(NULL, ini);
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		ASSERT_EQ(0, oms_fence(ini, (uint32_t)(i % OMS_MAX_NODES)));
		ASSERT_EQ(0, oms_fence_global(ini));
	}
	t0 = now_ns() - t0;
	ASSERT_EQ(0, oms_fence_local(ini));
	ASSERT_EQ(0, oms_quiet(ini));
	ASSERT_EQ(0, oms_ctx_stats(ini, &st));
	TH_LOG("%d empty fence pairs: %.1f ns each", n, (double)t0 / n);
	ASSERT_EQ(0, st.held);
	ASSERT_LT(t0 / n, 20000);
	oms_ctx_destroy(ini);
	oms_emu_destroy(emu);
}

/* L19: quiet on context 1 does not wait for context 2's operations. */
#define L19_ATTEMPTS	16	/* word pairs 0..31; c1 writes words 48..55 */

TEST(litmus_L19_scope_is_the_context_on_emu)
{
	struct oms_stats st = { .size = sizeof(st) };
	uint64_t seed = t_seed(0x1301), one = 1;
	struct oms_emu *emu = mk_emu(seed);
	struct oms_ctx *c1 = mk(emu, 0), *c2 = mk(emu, 0);
	size_t w = 0;
	struct tgt t;
	int k;

	ASSERT_NE(NULL, c1);
	ASSERT_NE(NULL, c2);
	ASSERT_EQ(0, tgt_open(&t, 64, emu));
	/*
	 * c2's strong store is held until c2 itself reaps the weak store's
	 * ack, and c2 makes no progress while c1 works.  The strong put
	 * drives c2's progress once itself: if the weak store's ack is
	 * already back then (the thread was descheduled between the two
	 * puts), the strong store goes out at once.  That pair proves
	 * nothing; c2 finishes it and tries again on the next two words.
	 */
	for (k = 0; k < L19_ATTEMPTS; k++) {
		w = 2 * (size_t)k;
		ASSERT_EQ(0, oms_put(c2, &t.r, 8 * w, &one, 8, OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_put(c2, &t.r, 8 * (w + 1), &one, 8,
				     OMS_STORE_STRONG));
		ASSERT_EQ(0, oms_ctx_stats(c2, &st));
		if (st.outstanding == 2)
			break;	/* the weak store's ack unreaped: held */
		ASSERT_EQ(0, oms_quiet(c2));
	}
	TH_LOG("c2's strong store held at attempt %d", k + 1);
	ASSERT_LT(k, L19_ATTEMPTS);
	for (int i = 0; i < 1000; i++) {
		ASSERT_EQ(0, oms_put(c1, &t.r, 8 * (48 + i % 8), &one, 8,
				     OMS_STORE_STRONG));
		ASSERT_EQ(0, oms_fence_global(c1));
		ASSERT_EQ(0, oms_quiet(c1));
	}
	ASSERT_EQ(0, oms_ctx_stats(c2, &st));
	TH_LOG("c1 quiesced 1000 times; c2 still has %llu outstanding",
	       (unsigned long long)st.outstanding);
	ASSERT_EQ(2, st.outstanding);
	ASSERT_EQ(0, rd(&t, w + 1));
	ASSERT_EQ(0, oms_quiet(c2));
	ASSERT_EQ(1, rd(&t, w + 1));
	oms_ctx_destroy(c1);
	oms_ctx_destroy(c2);
	tgt_close(&t);
	oms_emu_destroy(emu);
}

/* L20: commands written without the doorbell never execute; ringing n
 * executes exactly n. */
TEST(litmus_L20_doorbell_by_count_on_emu)
{
	struct oms_emu *emu = mk_emu(0);
	struct oms_ctx *ini = mk(emu, 0);
	struct emu_queue *q;
	struct oms_wc wc[8];
	uint64_t src[5] = { 11, 12, 13, 14, 15 };
	struct tgt t;
	int got = 0;

	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, tgt_open(&t, 8, emu));
	ASSERT_EQ(0, emu_queue_open(emu, 0, 16, &q));
	for (uint32_t i = 0; i < 5; i++) {
		struct oms_wr wr = {
			.op = OMS_WR_PUT, .slot = i, .dest = t.r.dest,
			.region = t.r.region, .key = t.r.key, .off = 8 * i,
			.len = 8, .local = (uintptr_t)&src[i],
		};

		ASSERT_EQ(0, emu_q_post(q, &wr));
	}
	usleep(20000);
	ASSERT_EQ(0, rd(&t, 0));		/* written, not rung */
	ASSERT_EQ(-EINVAL, emu_q_ring(q, 6));	/* more than written */
	ASSERT_EQ(0, emu_q_ring(q, 3));
	for (int spin = 0; got < 3 && spin < 100000; spin++) {
		got += emu_q_poll(q, wc + got, 8 - got, NULL);
		sched_yield();
	}
	usleep(20000);
	got += emu_q_poll(q, wc + got, 8 - got, NULL);
	ASSERT_EQ(3, got);
	ASSERT_EQ(13, rd(&t, 2));
	ASSERT_EQ(0, rd(&t, 3));
	ASSERT_EQ(0, emu_q_ring(q, 2));
	for (int spin = 0; got < 5 && spin < 100000; spin++) {
		got += emu_q_poll(q, wc + got, 8 - got, NULL);
		sched_yield();
	}
	ASSERT_EQ(5, got);
	ASSERT_EQ(15, rd(&t, 4));
	emu_queue_close(emu, q);
	oms_ctx_destroy(ini);
	tgt_close(&t);
	oms_emu_destroy(emu);
}

/* L21: a wrong key leaves memory unchanged, counts a drop, and past the
 * threshold the error becomes -EKEYREJECTED. */
TEST(litmus_L21_key_check_on_emu)
{
	struct oms_stats st = { .size = sizeof(st) };
	struct oms_emu *emu = mk_emu(t_seed(0x1501));
	struct oms_ctx *ini = mk(emu, 0);
	uint64_t v = 42;
	struct oms_rmr bad;
	struct tgt t;
	int err = 0;

	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, tgt_open(&t, 8, emu));
	bad = t.r;
	bad.key ^= 0x5a5a;
	ASSERT_EQ(0, oms_put(ini, &bad, 0, &v, 8, OMS_STORE_STRONG));
	ASSERT_EQ(-EACCES, oms_quiet(ini));
	ASSERT_EQ(0, rd(&t, 0));
	ASSERT_EQ(0, oms_ctx_stats(ini, &st));
	ASSERT_EQ(1, st.key_drops);
	for (int i = 1; i < EMU_KEY_THRESHOLD; i++) {
		ASSERT_EQ(0, oms_atomic_fadd(ini, &bad, 0, 1, NULL));
		err = oms_quiet(ini);
	}
	ASSERT_EQ(-EKEYREJECTED, err);
	ASSERT_EQ(0, oms_ctx_stats(ini, &st));
	TH_LOG("drops %llu, last error %d", (unsigned long long)st.key_drops,
	       err);
	ASSERT_EQ(EMU_KEY_THRESHOLD, st.key_drops);
	ASSERT_EQ(0, rd(&t, 0));
	/* the right key still works */
	ASSERT_EQ(0, oms_put(ini, &t.r, 0, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(ini));
	ASSERT_EQ(42, rd(&t, 0));
	oms_ctx_destroy(ini);
	tgt_close(&t);
	oms_emu_destroy(emu);
}

/* L22 (and L37): a failed operation completes with an error; what it
 * orders (the fenced acquire, the strong store) is cancelled, never
 * performed; quiet reports the failure itself and returns; the next quiet
 * is clean; oms_ctx_resume() lets ordered traffic flow again. */
TEST(litmus_L22_errors_never_hang_on_emu)
{
	struct oms_emu *emu = mk_emu(t_seed(0x1601));
	struct oms_ctx *ini = mk(emu, 0);
	uint64_t v = 7, got = 0;
	struct oms_rmr far;
	struct tgt t;

	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, tgt_open(&t, 8, emu));
	far = t.r;
	far.len = 1 << 20;		/* lies about the size */
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(0, oms_put(ini, &t.r, 0, &v, 8, OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_put(ini, &far, 4096, &v, 8, OMS_STORE_STRONG));
		ASSERT_EQ(0, oms_fence(ini, t.r.dest));
		ASSERT_EQ(0, oms_get(ini, &got, &far, 8192, 8,
				     OMS_READ_ACQUIRE));
		ASSERT_EQ(0, oms_put(ini, &t.r, 8, &v, 8, OMS_STORE_STRONG));
		ASSERT_EQ(-EFAULT, oms_quiet(ini));
		ASSERT_EQ(0, oms_quiet(ini));
		ASSERT_EQ(0, oms_ctx_resume(ini));
	}
	ASSERT_EQ(7, rd(&t, 0));
	ASSERT_EQ(0, rd(&t, 1));	/* follows the failed strong store */
	ASSERT_EQ(0, oms_put(ini, &t.r, 8, &v, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(ini));
	ASSERT_EQ(7, rd(&t, 1));
	oms_ctx_destroy(ini);
	tgt_close(&t);
	oms_emu_destroy(emu);
}

/* L13: after quiet every counter is back to 0 and each ordered store
 * raised and lowered each counter exactly once. */
TEST(litmus_L13_counter_conservation_on_emu)
{
	uint64_t seed = t_seed(0xd01), v[64];
	struct oms_emu *emu = mk_emu(seed);
	struct oms_ctx *ini = mk(emu, 0);
	struct tgt t;
	unsigned long ordered = 0, unordered = 0;

	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, tgt_open(&t, 64, emu));
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 64; i++) {
			unsigned cls = (unsigned)(i + round) % 3;

			v[i] = (uint64_t)round;
			ASSERT_EQ(0, oms_put(ini, &t.r, 8ull * i, &v[i], 8,
					     (enum oms_store_class)cls));
			ordered += cls != OMS_STORE_UNORDERED;
			unordered += cls == OMS_STORE_UNORDERED;
			if (i % 16 == 15)
				ASSERT_EQ(0, oms_fence(ini, t.r.dest));
		}
		ASSERT_EQ(0, oms_quiet(ini));
	}
	/* the context's engine state (white box) */
	ASSERT_EQ(0, ini->so.ctr.pending_issue);
	ASSERT_EQ(0, ini->so.ctr.pending_ack);
	ASSERT_EQ(ordered, ini->so.ctr.issue_inc);
	ASSERT_EQ(ordered, ini->so.ctr.issue_dec);
	ASSERT_EQ(ordered, ini->so.ctr.ack_inc);
	ASSERT_EQ(ordered, ini->so.ctr.ack_dec);
	ASSERT_EQ(unordered, ini->so.ctr.unordered);
	ASSERT_TRUE(oms_so_quiescent(&ini->so));
	ASSERT_EQ(0, oms_oc_outstanding(&ini->oc));
	ASSERT_EQ(ordered + unordered, ini->oc.started);
	ASSERT_EQ(ordered + unordered, ini->oc.completed);
	TH_LOG("L13: %lu ordered + %lu unordered stores, every counter "
	       "balanced", ordered, unordered);
	oms_ctx_destroy(ini);
	tgt_close(&t);
	oms_emu_destroy(emu);
}

TEST_HARNESS_MAIN
