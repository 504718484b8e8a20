// SPDX-License-Identifier: MIT
/*
 * Destination ordering by sequence number (OMS_CTX_F_DEST_SEQ, seed 004
 * section 5.2) over verbs, through the destination agent's reorder buffer
 * (docs/dest-agent.md), between two hosts (two QEMU guests with Soft-RoCE
 * in `make check`).  Every operation of a DEST_SEQ connection is a
 * request to the listener's agent; the source numbers it when it is
 * submitted, and the agent performs the numbers in order whatever order
 * they reach it in.
 *
 *   L36  SO(F@D1) held behind a 256 KiB WO(A@D2), then WO(G@D1),
 *        release(G@D1) or FAA(G@D1): the later operation reaches the
 *        agent first (the source does not hold it), and the server's
 *        observer never sees G before F.  Control: the same program
 *        through an agent that ignores numbers (rxe_server's PORT + 4),
 *        which performs G on arrival: G before F.
 *   L39  puts and a get, then a release put, to one destination: never
 *        the release first, and the source holds nothing (the release is
 *        ordered at the destination).  RC places one QP's writes in order
 *        on Soft-RoCE, so no control can show the outcome for this shape;
 *        L36's release variant, held behind a strong store, is the one
 *        whose control shows it.
 *   L37  a put with a wrong key, then a strong put and a weak put through
 *        the agent on the same connection: neither reaches memory (the
 *        agent cancels what follows a failure on an in-order connection),
 *        quiet returns -EACCES.
 * And bytes: puts of every class and of sizes to the staging slot (4 KiB,
 * a longer one refused with -EMSGSIZE, nothing issued), gets of every
 * kind to 64 KiB, atomics with their old values, a flush of the numbered
 * connection for a strong store to another (no hang); and a DEST_SEQ
 * connection to a listener without an agent is refused (-EOPNOTSUPP).
 *
 * The experiments are set up through a plain context (rxe_proto.h's
 * observer, on the server's CPU, watches the words).
 *
 * Environment: OMS_RXE_SERVER, OMS_RXE_PORT, OMS_RXE_AGENT_PORT and
 * OMS_RXE_NOORDER_PORT (the server's listeners); without them every test
 * skips (this program is meant for the guest).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "rxe_client.h"
#include "rxe_proto.h"

#define ITERS		60	/* instances of each test, make check-full */
#define ITERS_QUICK	20	/* make check, L36: its control shows 57 % */

/* ITERS, or ITERS_QUICK under `make check` */
static int iters(void)
{
	return (int)t_bound(ITERS, ITERS_QUICK);
}

#define A_LEN		RX_BULK_LEN	/* the slow put to D2 */
#define F_OFF		(RX_DATA + 0x000)
#define G_OFF		(RX_DATA + 0x040)
#define X_OFF		(RX_DATA + 0x080)
#define Y_OFF		(RX_DATA + 0x0c0)

static uint8_t bulk[A_LEN] __attribute__((aligned(4096)));

FIXTURE(seq)
{
	struct oms_ctx *sctx;	/* plain: sets up the observer */
	struct oms_rmr sr;
	struct oms_ctx *ctx;	/* DEST_SEQ on dest 0 */
	struct oms_rmr d1, d2;
	uint64_t epoch;
};

static struct oms_ctx *make_ctx(uint32_t seq_mask)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = 20000;	/* two TCG guests can stand still */
	if (seq_mask) {
		a.comp_mask |= OMS_CTX_ATTR_DEST_SEQ;
		a.dest_seq_mask = seq_mask;
	}
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

FIXTURE_SETUP(seq)
{
	if (!getenv("OMS_RXE_SERVER") || !getenv("OMS_RXE_PORT") ||
	    !getenv("OMS_RXE_AGENT_PORT") || !getenv("OMS_RXE_NOORDER_PORT"))
		SKIP(return, "OMS_RXE_* not set (guest test)");
	self->sctx = make_ctx(0);
	ASSERT_NE(NULL, self->sctx);
	ASSERT_EQ(0, connect_port(self->sctx, getenv("OMS_RXE_PORT"),
				  &self->sr));
	self->epoch = now_ms();
}

FIXTURE_TEARDOWN(seq)
{
	if (self->ctx)
		oms_ctx_destroy(self->ctx);
	if (self->sctx)
		oms_ctx_destroy(self->sctx);
}

/*
 * The context under test: destination 0 numbered, through the agent on
 * @port; destination 1 the one-sided listener, an acknowledged channel.
 */
static int seq_ctx(FIXTURE_DATA(seq) *self, const char *port)
{
	int err;

	if (self->ctx)
		oms_ctx_destroy(self->ctx);
	self->ctx = make_ctx(1u << 0);
	if (!self->ctx)
		return -ENOMEM;
	err = connect_port(self->ctx, port, &self->d1);
	if (!err && self->d1.dest != 0)
		err = -EXDEV;	/* the first connection is destination 0 */
	if (!err)
		err = connect_port(self->ctx, getenv("OMS_RXE_PORT"),
				   &self->d2);
	return err;
}

static int sput(FIXTURE_DATA(seq) *self, uint64_t off, uint64_t v)
{
	int err = oms_put(self->sctx, &self->sr, off, &v, 8,
			  OMS_STORE_STRONG);

	return err ? err : oms_quiet(self->sctx);
}

static int sget(FIXTURE_DATA(seq) *self, uint64_t off, uint64_t *v)
{
	int err = oms_get(self->sctx, v, &self->sr, off, 8, 0);

	return err ? err : oms_quiet(self->sctx);
}

/* The observer follows a new experiment: G is its flag, F its data
 * word (a change of G to v with F below v is counted bad). */
static int exp_begin(FIXTURE_DATA(seq) *self, uint64_t flag, uint64_t data)
{
	uint64_t seen = 0, end = now_ms() + 20000;
	int err;

	self->epoch++;
	err = sput(self, F_OFF, 0);
	err = err ? err : sput(self, G_OFF, 0);
	err = err ? err : sput(self, X_OFF, 0);
	err = err ? err : sput(self, Y_OFF, 0);
	err = err ? err : sput(self, RX_NDATA, 1);
	err = err ? err : sput(self, RX_FLAG_OFF, flag);
	err = err ? err : sput(self, RX_DATA_OFF, data);
	err = err ? err : sput(self, RX_MODE, RX_MODE_MP);
	err = err ? err : sput(self, RX_EPOCH, self->epoch);
	while (!err && seen != self->epoch && now_ms() < end)
		err = sget(self, RX_RES_EPOCH, &seen);
	return err ? err : seen == self->epoch ? 0 : -ETIMEDOUT;
}

static int exp_end(FIXTURE_DATA(seq) *self, uint64_t *seen, uint64_t *bad)
{
	uint64_t done = 0, end = now_ms() + 20000;
	int err = sput(self, RX_FINISH, self->epoch);

	while (!err && done != self->epoch && now_ms() < end)
		err = sget(self, RX_RES_DONE, &done);
	if (!err && done != self->epoch)
		err = -ETIMEDOUT;
	err = err ? err : sget(self, RX_RES_SEEN, seen);
	return err ? err : sget(self, RX_RES_BAD, bad);
}

/*
 * L36's program, @iters times: A to D2 (slow), F = i strong to D1 (held
 * until A is acknowledged), then G = i to D1 by a weak put, a release
 * put or an add of 1, in turn; the observer's counts in *@seen and
 * *@bad.
 */
static int l36_run(struct __test_metadata *_metadata, FIXTURE_DATA(seq) *self,
		   uint64_t *seen, uint64_t *bad)
{
	static uint64_t v[ITERS + 1];
	struct oms_stats st0 = { .size = sizeof(st0) };
	struct oms_stats st = { .size = sizeof(st) };
	uint64_t held = 0, old;
	int err = exp_begin(self, G_OFF, F_OFF);

	for (int i = 1; !err && i <= iters(); i++) {
		v[i] = (uint64_t)i;
		bulk[A_LEN - 1] = (uint8_t)i;
		err = oms_put(self->ctx, &self->d2, RX_BULK, bulk, A_LEN,
			      OMS_STORE_WEAK);
		if (!err)
			err = oms_ctx_stats(self->ctx, &st0);
		err = err ? err : oms_put(self->ctx, &self->d1, F_OFF, &v[i],
					  8, OMS_STORE_STRONG);
		if (!err)
			err = oms_ctx_stats(self->ctx, &st);
		held += !err && st.held > st0.held;
		if (!err && i % 3 == 0)
			err = oms_atomic_fadd(self->ctx, &self->d1, G_OFF, 1,
					      &old);
		else if (!err)
			err = oms_put(self->ctx, &self->d1, G_OFF, &v[i], 8,
				      i % 3 == 1 ? OMS_STORE_WEAK :
						   OMS_STORE_RELEASE);
		err = err ? err : oms_quiet(self->ctx);
	}
	TH_LOG("the strong put was held at the source in %llu of %d",
	       (unsigned long long)held, iters());
	EXPECT_GT(held, 0);
	return err ? err : exp_end(self, seen, bad);
}

TEST_F_TIMEOUT(seq, litmus_L36_later_op_waits_for_held_strong_agent, 900)
{
	uint64_t seen = 0, bad = 0, cseen = 0, cbad = 0;

	ASSERT_EQ(0, seq_ctx(self, getenv("OMS_RXE_AGENT_PORT")));
	ASSERT_EQ(0, l36_run(_metadata, self, &seen, &bad));
	TH_LOG("L36 through the agent: %llu of %llu changes of G before F",
	       (unsigned long long)bad, (unsigned long long)seen);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
	/* the control: an agent that performs numbers on arrival */
	ASSERT_EQ(0, seq_ctx(self, getenv("OMS_RXE_NOORDER_PORT")));
	ASSERT_EQ(0, l36_run(_metadata, self, &cseen, &cbad));
	TH_LOG("L36 control (numbers ignored): %llu of %llu changes of G "
	       "before F", (unsigned long long)cbad,
	       (unsigned long long)cseen);
	EXPECT_GT(cbad, 0);
}

TEST_F_TIMEOUT(seq, litmus_L39_release_after_puts_and_get_agent, 600)
{
	struct oms_stats st0 = { .size = sizeof(st0) };
	struct oms_stats st = { .size = sizeof(st) };
	static uint64_t v[ITERS + 1], y[ITERS + 1];
	uint64_t seen = 0, bad = 0;
	int err;

	ASSERT_EQ(0, seq_ctx(self, getenv("OMS_RXE_AGENT_PORT")));
	ASSERT_EQ(0, exp_begin(self, G_OFF, F_OFF));
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st0));
	for (int i = 1; i <= ITERS; i++) {
		v[i] = (uint64_t)i;
		ASSERT_EQ(0, oms_put(self->ctx, &self->d1, RX_SCRATCH, bulk,
				     4096, OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_put(self->ctx, &self->d1, F_OFF, &v[i], 8,
				     OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_get(self->ctx, &y[i], &self->d1, X_OFF, 8,
				     0));
		ASSERT_EQ(0, oms_put(self->ctx, &self->d1, G_OFF, &v[i], 8,
				     OMS_STORE_RELEASE));
		if (i % 8 == 0)
			ASSERT_EQ(0, oms_quiet(self->ctx));
	}
	ASSERT_EQ(0, oms_quiet(self->ctx));
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	/* ordered at the destination: nothing waited at the source */
	EXPECT_EQ(st0.held, st.held);
	err = exp_end(self, &seen, &bad);
	ASSERT_EQ(0, err);
	TH_LOG("L39 through the agent: %llu of %llu releases before the "
	       "puts", (unsigned long long)bad, (unsigned long long)seen);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

TEST_F_TIMEOUT(seq, litmus_L37_failure_cancels_what_follows_agent, 600)
{
	static uint64_t v[9];

	for (int i = 1; i <= 8; i++) {
		struct oms_rmr bad;
		uint64_t f = 1, g = 1;

		v[i] = 1000 + (uint64_t)i;
		ASSERT_EQ(0, sput(self, F_OFF, 0));
		ASSERT_EQ(0, sput(self, G_OFF, 0));
		ASSERT_EQ(0, seq_ctx(self, getenv("OMS_RXE_AGENT_PORT")));
		bad = self->d1;
		bad.key ^= 0x80;
		ASSERT_EQ(0, oms_put(self->ctx, &bad, X_OFF, &v[i], 8,
				     OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_put(self->ctx, &self->d1, F_OFF, &v[i], 8,
				     OMS_STORE_STRONG));
		ASSERT_EQ(0, oms_put(self->ctx, &self->d1, G_OFF, &v[i], 8,
				     OMS_STORE_WEAK));
		EXPECT_EQ(-EACCES, oms_quiet(self->ctx));
		ASSERT_EQ(0, sget(self, F_OFF, &f));
		ASSERT_EQ(0, sget(self, G_OFF, &g));
		EXPECT_EQ(0, f);
		EXPECT_EQ(0, g);
		/* verbs cannot restart the stream: the connection is dead */
		EXPECT_EQ(0, oms_ctx_resume(self->ctx));
		EXPECT_EQ(0, oms_put(self->ctx, &self->d1, F_OFF, &v[i], 8,
				     OMS_STORE_WEAK));
		EXPECT_EQ(-ENOTCONN, oms_quiet(self->ctx));
	}
}

TEST_F_TIMEOUT(seq, dest_seq_bytes_atomics_and_flush_agent, 600)
{
	static uint8_t out[65536], in[65536];
	struct oms_caps c = { .size = sizeof(c) };
	static const size_t sizes[] = { 1, 7, 64, 100, 1000, 4096 };
	static const enum oms_store_class cls[] = {
		OMS_STORE_UNORDERED, OMS_STORE_WEAK, OMS_STORE_STRONG,
		OMS_STORE_RELEASE,
	};
	uint64_t old = 0, w = 0, x = 5;

	ASSERT_EQ(0, seq_ctx(self, getenv("OMS_RXE_AGENT_PORT")));
	ASSERT_EQ(0, oms_query_caps(self->ctx, &c));
	EXPECT_TRUE(c.flags & OMS_CAP_DEST_ORDER_AGENT);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 3);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t k = 0; k < 4; k++) {
			uint64_t off = RX_SCRATCH + 4096 * k + s;

			memset(in, 0, sizes[s]);
			out[0] = (uint8_t)(s * 4 + k);
			ASSERT_EQ(0, oms_put(self->ctx, &self->d1, off, out,
					     sizes[s], cls[k]));
			ASSERT_EQ(0, oms_get(self->ctx, in, &self->d1, off,
					     sizes[s], k & 1 ?
					     OMS_READ_ACQUIRE : 0));
			ASSERT_EQ(0, oms_quiet(self->ctx));
			EXPECT_EQ(0, memcmp(in, out, sizes[s]));
		}
	}
	/* a get longer than a landing slot lands in its own buffer */
	ASSERT_EQ(0, oms_get(self->ctx, in, &self->d1, RX_SCRATCH, 65536,
			     OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	/* a put longer than a staging slot: refused, nothing issued */
	EXPECT_EQ(-EMSGSIZE, oms_put(self->ctx, &self->d1, RX_SCRATCH, out,
				     4097, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_put(self->ctx, &self->d1, Y_OFF, &w, 8,
			     OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_atomic_fadd(self->ctx, &self->d1, Y_OFF, 5, &old));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(0, old);
	ASSERT_EQ(0, oms_atomic_cas(self->ctx, &self->d1, Y_OFF, x, 9, &old));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(5, old);
	ASSERT_EQ(0, oms_atomic_cas(self->ctx, &self->d1, Y_OFF, x, 11, &old));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(9, old);	/* failed compare: the value stays 9 */
	ASSERT_EQ(0, sget(self, Y_OFF, &w));
	EXPECT_EQ(9, w);
	/* a weak put to D1, then a strong one to D2: the strong one waits
	 * for a flush of the numbered connection */
	for (int i = 0; i < 50; i++) {
		uint64_t v = 100 + (uint64_t)i;

		ASSERT_EQ(0, oms_put(self->ctx, &self->d1, X_OFF, &v, 8,
				     OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_put(self->ctx, &self->d2, Y_OFF + 64, &v, 8,
				     OMS_STORE_STRONG));
	}
	ASSERT_EQ(0, oms_quiet(self->ctx));
	ASSERT_EQ(0, sget(self, X_OFF, &w));
	EXPECT_EQ(149, w);
}

/*
 * Numbers are 16 bits: a stream goes on past 32768 and past 65536 of
 * them, every operation its own (none refused as an earlier
 * connection's), the last value the one read.
 */
TEST_F_TIMEOUT(seq, dest_seq_past_the_numbers_wrap_agent, 900)
{
	const uint32_t n = 70000;
	uint64_t w = 0;

	ASSERT_EQ(0, seq_ctx(self, getenv("OMS_RXE_AGENT_PORT")));
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t v = i;

		ASSERT_EQ(0, oms_put(self->ctx, &self->d1, X_OFF, &v, 8,
				     OMS_STORE_WEAK)) TH_LOG("put %u", i);
		if (!(i % 256) || i == n)
			ASSERT_EQ(0, oms_quiet(self->ctx)) TH_LOG("put %u", i);
	}
	ASSERT_EQ(0, oms_get(self->ctx, &w, &self->d1, X_OFF, 8,
			     OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(n, w);
}

TEST_F(seq, dest_seq_without_an_agent_is_refused)
{
	struct oms_rmr r;

	self->ctx = make_ctx(1u << 0);
	ASSERT_NE(NULL, self->ctx);
	/* a plain listener has no reorder buffer: refused, not faked */
	EXPECT_EQ(-EOPNOTSUPP, connect_port(self->ctx, getenv("OMS_RXE_PORT"),
					    &r));
	/* and the context is fine: the agent's listener takes it */
	ASSERT_EQ(0, connect_port(self->ctx, getenv("OMS_RXE_AGENT_PORT"),
				  &r));
	EXPECT_EQ(0, r.dest);
	EXPECT_EQ(0, oms_put(self->ctx, &r, X_OFF, &r, 8, OMS_STORE_WEAK));
	EXPECT_EQ(0, oms_quiet(self->ctx));
}

TEST_HARNESS_MAIN
