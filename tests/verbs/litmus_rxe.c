// SPDX-License-Identifier: MIT
/*
 * Litmus tests over verbs between two hosts (two QEMU guests with
 * Soft-RoCE in `make check`): this client connects to rxe_server several
 * times (each connection is one destination, one RC QP) and checks, with
 * the server's observer thread counting what lands (rxe_proto.h), that no
 * forbidden outcome (docs/ordering.md) is ever seen:
 *
 *   L01  WO(A) WO(B) SO(F), on one destination and on three;
 *   L02  WO(A@1, behind a busy QP) SO(F@2): cumulative across QPs;
 *   L09  everything on one QP: ordered, and no strong store is held;
 *   L10  WO(A@1) SO(F@2): the strong store is held for a flush READ;
 *   L14  put(A@1); fence(1); put(F@1);
 *   L15  put(A@1); quiet; unordered put(F@2);
 *   L17  put(A@1); global fence; put(F@2);
 *   L26  put(X) then get(X), every store class: the get sees the put;
 *   L33  get(X) then put(X = i), weak, fenced, strong: the get never
 *        returns i (the control, with no ordering, may on RC);
 *   L34  acq(F@1) then put(Y) at 1 or 2, the server's CPU copying Y into
 *        F: the acquire never returns its own later put;
 *   L35  acq(F@1) then get(Y) at 1 or 2 while the server writes Y then F:
 *        Y is never older than F;
 *   (L36, DEST_SEQ through the agent: seq_rxe.c;)
 *   L37  a weak put with a wrong key, then a strong put on the same QP or
 *        another: never visible, -EACCES from quiet, resume, reconnect;
 *   L38  FAA(C@1) then SO(F@2): never F before the add; CAS then an
 *        acquire get of the same word sees the CAS;
 *   L39  puts then a release put to one destination: never the release
 *        first, and nothing held at the source;
 *   and controls with no ordering (L02, L33, L34, L35, L38), whose counts
 *   are logged (and must be non-zero where rxe can show the outcome).
 * The destination agent (docs/dest-agent.md), on the server's second
 * listener (OMS_RXE_AGENT_PORT): L34 and L35 again with the acquires
 * ordered by the agent instead of at the source (L35's shape is also
 * L29's: the host writes data then flag, and the agent at the
 * destination reads the flag with acquire), bytes of every size
 * through it, what the capability query says, a wrong key (the agent
 * refuses, the connection stops like a QP in error), and a requester
 * that dies with requests in flight (the agent serves the next one).
 * Then data through every local path (inline, bounce, registered,
 * registered for one op), atomics, and errors over verbs: a wrong key
 * (-EACCES from quiet, nothing written; after oms_ctx_resume() the dead
 * QP answers -ENOTCONN), a wrong key in the middle of an unsignaled run
 * under the doorbell batch (the first error, the puts before it in
 * memory, none after), a forged length (-EFAULT, the QP lives on),
 * nobody listening (-ECONNREFUSED), an unreachable host, and last the
 * peer going away (every pending op fails, quiet returns an error in
 * bounded time, and after a resume every op fails with -ENOTCONN).
 *
 * Environment: OMS_RXE_SERVER (address), OMS_RXE_PORT, OMS_RXE_AGENT_PORT
 * (the listener with the agent), OMS_RXE_SHARED (the directory through
 * which a test asks the host to stop the server guest); without the first
 * two every
 * test skips (this program is meant for the guest).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "rxe_client.h"
#include "rxe_proto.h"

#define NCONN		3
#define ITERS		200	/* instances of each test, make check-full */
#define ITERS_QUICK	30	/* make check: controls show 85-99 % */
#define BULK		16384

static int iters = ITERS;	/* t_bound(ITERS, ITERS_QUICK) */
static uint64_t vals[ITERS + 1];
static uint8_t bulk[RX_BULK_LEN];

static int connect_retry(struct oms_ctx *ctx, struct oms_rmr *r)
{
	return connect_port(ctx, getenv("OMS_RXE_PORT"), r);
}

FIXTURE(rxe)
{
	struct oms_ctx *ctx;
	struct oms_rmr r[NCONN];
	struct oms_mr *bulk_mr;
	uint64_t epoch;
	/* controls: the same programs on a context with no ordering */
	struct oms_ctx *cctx;
	struct oms_rmr cr[NCONN];
};

static struct oms_ctx *make_ctx(uint32_t flags)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_FLAGS |
		      OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_VERBS;
	a.flags = flags;
	/* Two TCG guests on a shared host can both stand still for seconds:
	 * these tests are about order, not the context's watchdog (a peer
	 * that dies is found by its disconnect or RC's retry timer). */
	a.timeout_ms = 20000;
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

FIXTURE_SETUP(rxe)
{
	if (!getenv("OMS_RXE_SERVER") || !getenv("OMS_RXE_PORT"))
		SKIP(return, "OMS_RXE_SERVER/OMS_RXE_PORT not set (guest test)");
	iters = (int)t_bound(ITERS, ITERS_QUICK);
	for (int i = 0; i <= ITERS; i++)
		vals[i] = (uint64_t)i;
	self->ctx = make_ctx(0);
	ASSERT_NE(NULL, self->ctx);
	for (int i = 0; i < NCONN; i++)
		ASSERT_EQ(0, connect_retry(self->ctx, &self->r[i]));
	ASSERT_EQ(0, oms_mr_reg(self->ctx, bulk, sizeof(bulk),
				OMS_ACCESS_REMOTE_READ, &self->bulk_mr));
	self->epoch = (uint64_t)now_ms();	/* new in every test */
}

FIXTURE_TEARDOWN(rxe)
{
	if (self->cctx)
		oms_ctx_destroy(self->cctx);
	if (self->ctx)
		oms_ctx_destroy(self->ctx);
}

/* A context with OMS_CTX_F_NO_ORDERING and its own connections. */
static int control_ctx(FIXTURE_DATA(rxe) *self)
{
	struct oms_mr *mr;
	int err;

	self->cctx = make_ctx(OMS_CTX_F_NO_ORDERING);
	if (!self->cctx)
		return -ENOMEM;
	err = oms_mr_reg(self->cctx, bulk, sizeof(bulk),
			 OMS_ACCESS_REMOTE_READ, &mr);
	if (err)
		return err;
	for (int i = 0; i < NCONN; i++) {
		err = connect_retry(self->cctx, &self->cr[i]);
		if (err)
			return err;
	}
	return 0;
}

/* The descriptors of @ctx's connections. */
static const struct oms_rmr *rr(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx)
{
	return ctx == self->ctx ? self->r : self->cr;
}

static int put64(struct oms_ctx *ctx, const struct oms_rmr *r, uint64_t off,
		 const uint64_t *v)
{
	return oms_put(ctx, r, off, v, 8, OMS_STORE_STRONG);
}

static int get64(struct oms_ctx *ctx, const struct oms_rmr *r, uint64_t off,
		 uint64_t *v)
{
	int err = oms_get(ctx, v, r, off, 8, OMS_READ_ACQUIRE);

	return err ? err : oms_quiet(ctx);
}

/*
 * Start an experiment: zero the words, describe them, bump the epoch and
 * wait until the observer follows it.
 */
static int exp_begin_mode(struct __test_metadata *_metadata,
			  FIXTURE_DATA(rxe) *self, uint64_t flag,
			  const uint64_t *data, uint32_t n, uint64_t mode,
			  uint64_t echo)
{
	static uint64_t desc[2 + RX_MAX_DATA], zero, m, e;
	uint64_t seen = 0, end = now_ms() + 20000;

	desc[0] = n;
	desc[1] = flag;
	for (uint32_t i = 0; i < n; i++)
		desc[2 + i] = data[i];
	for (uint32_t i = 0; i < n; i++)
		EXPECT_EQ(0, put64(self->ctx, &self->r[0], data[i], &zero));
	EXPECT_EQ(0, put64(self->ctx, &self->r[0], flag, &zero));
	EXPECT_EQ(0, oms_put(self->ctx, &self->r[0], RX_NDATA, desc,
			     8 * (2 + RX_MAX_DATA), OMS_STORE_STRONG));
	m = mode;
	e = echo;
	if (mode == RX_MODE_ECHO)
		EXPECT_EQ(0, put64(self->ctx, &self->r[0], echo, &zero));
	EXPECT_EQ(0, put64(self->ctx, &self->r[0], RX_MODE, &m));
	EXPECT_EQ(0, put64(self->ctx, &self->r[0], RX_ECHO_OFF, &e));
	EXPECT_EQ(0, put64(self->ctx, &self->r[0], RX_EPOCH, &self->epoch));
	EXPECT_EQ(0, oms_quiet(self->ctx));
	while (seen != self->epoch && now_ms() < end)
		if (get64(self->ctx, &self->r[0], RX_RES_EPOCH, &seen))
			return -1;
	return seen == self->epoch ? 0 : -1;
}

static int exp_begin(struct __test_metadata *_metadata,
		     FIXTURE_DATA(rxe) *self, uint64_t flag, const uint64_t *data,
		     uint32_t n)
{
	return exp_begin_mode(_metadata, self, flag, data, n, RX_MODE_MP, 0);
}

/* Finish it: the observer's counts of flag changes and forbidden ones.
 * A failure says which step and when, on a "#" line of its own. */
static int exp_end(FIXTURE_DATA(rxe) *self, uint64_t *seen, uint64_t *bad)
{
	uint64_t done = 0, t0 = now_ms(), end = t0 + 20000;
	const char *step = "quiet";
	int err = oms_quiet(self->ctx);

	if (!err) {
		step = "finish";
		err = put64(self->ctx, &self->r[0], RX_FINISH, &self->epoch);
	}
	if (!err)
		err = oms_quiet(self->ctx);
	step = "done";
	while (!err && done != self->epoch && now_ms() < end)
		err = get64(self->ctx, &self->r[0], RX_RES_DONE, &done);
	if (!err && done != self->epoch) {
		step = "observer";
		err = -ETIMEDOUT;
	}
	if (!err) {
		step = "results";
		err = get64(self->ctx, &self->r[0], RX_RES_SEEN, seen);
	}
	if (!err)
		err = get64(self->ctx, &self->r[0], RX_RES_BAD, bad);
	if (err)
		printf("# exp_end: %s: %d (%s) after %llu ms\n", step, err,
		       strerror(-err), (unsigned long long)(now_ms() - t0));
	return err;
}

#define A_OFF	(RX_DATA + 0x000)
#define B_OFF	(RX_DATA + 0x040)
#define F_OFF	(RX_DATA + 0x080)

/* One experiment: what the observer watches and does (rxe_proto.h). */
struct exp {
	uint64_t flag;
	uint64_t data[2];
	uint32_t n;
	uint64_t mode, echo;
};

/* One run; @step issues iteration i. */
typedef int (*step_fn)(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i);

static void exp_run(struct __test_metadata *_metadata, FIXTURE_DATA(rxe) *self,
		    struct oms_ctx *ctx, const struct exp *x, step_fn step,
		    uint64_t *seen, uint64_t *bad)
{
	ASSERT_EQ(0, exp_begin_mode(_metadata, self, x->flag, x->data, x->n,
				    x->mode, x->echo));
	for (int i = 1; i <= iters; i++) {
		ASSERT_EQ(0, step(self, ctx, i));
		/* Pace, without ordering anything: let the iteration before
		 * this one finish (at most this one's 3 ops outstanding), so
		 * the observer sees most flags. */
		while (oms_progress(ctx) > 3)
			usleep(200);
		usleep(500);
	}
	ASSERT_EQ(0, oms_quiet(ctx));
	ASSERT_EQ(0, exp_end(self, seen, bad));
	TH_LOG("flag changes seen %llu, forbidden %llu",
	       (unsigned long long)*seen, (unsigned long long)*bad);
}

/* Message passing: data words A (and B), then the flag F. */
static void mp_run(struct __test_metadata *_metadata, FIXTURE_DATA(rxe) *self,
		   struct oms_ctx *ctx, uint32_t ndata, step_fn step,
		   uint64_t *seen, uint64_t *bad)
{
	const struct exp x = {
		.flag = F_OFF, .data = { A_OFF, B_OFF }, .n = ndata,
		.mode = RX_MODE_MP,
	};

	exp_run(_metadata, self, ctx, &x, step, seen, bad);
}

static int step_l01_one(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = oms_put_weak(ctx, &self->r[0], A_OFF, &vals[i], 8);

	err = err ? err : oms_put_weak(ctx, &self->r[0], B_OFF, &vals[i], 8);
	return err ? err : oms_put_strong(ctx, &self->r[0], F_OFF, &vals[i], 8);
}

TEST_F(rxe, litmus_L01_mp_weak_strong_one_dest)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 2, step_l01_one, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

static int step_l01_three(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = oms_put_weak(ctx, &self->r[0], A_OFF, &vals[i], 8);

	err = err ? err : oms_put_weak(ctx, &self->r[1], B_OFF, &vals[i], 8);
	return err ? err : oms_put_strong(ctx, &self->r[2], F_OFF, &vals[i], 8);
}

TEST_F(rxe, litmus_L01_mp_weak_strong_three_dests)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 2, step_l01_three, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

/* A busy QP: a bulk write ahead of the data word on it. */
static int busy(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int qp,
		enum oms_store_class cls)
{
	return oms_put(ctx, &rr(self, ctx)[qp], RX_BULK, bulk, BULK, cls);
}

/* Busier: more packets than an rxe QP sends before it waits for acks
 * (128), so a small write on another QP gets there first. */
static int very_busy(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int qp,
		     enum oms_store_class cls)
{
	return oms_put(ctx, &rr(self, ctx)[qp], RX_BULK, bulk, RX_BULK_LEN,
		       cls);
}

static int step_l02(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = very_busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_put_weak(ctx, &self->r[0], A_OFF, &vals[i], 8);
	return err ? err : oms_put_strong(ctx, &self->r[1], F_OFF, &vals[i], 8);
}

TEST_F(rxe, litmus_L02_cumulative_across_qps)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 1, step_l02, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

static int step_control(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = very_busy(self, ctx, 0, OMS_STORE_UNORDERED);

	err = err ? err : oms_put(ctx, &self->r[0], A_OFF, &vals[i], 8,
				  OMS_STORE_UNORDERED);
	return err ? err : oms_put(ctx, &self->r[1], F_OFF, &vals[i], 8,
				   OMS_STORE_UNORDERED);
}

/* The same program with no ordering: how often the flag overtakes. */
TEST_F(rxe, control_L02_unordered_across_qps)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 1, step_control, &seen, &bad);
	EXPECT_GT(seen, 0);
	TH_LOG("control (no ordering): %llu of %llu flag changes overtook the data",
	       (unsigned long long)bad, (unsigned long long)seen);
	/* rxe sends at most 128 packets of a QP before it waits for acks:
	 * the flag on the idle QP overtakes nearly every time (so the
	 * litmus_L02 test above can fail) */
	EXPECT_GT(bad, 0);
}

static int step_l09(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_put_weak(ctx, &self->r[0], A_OFF, &vals[i], 8);
	return err ? err : oms_put_strong(ctx, &self->r[0], F_OFF, &vals[i], 8);
}

TEST_F(rxe, litmus_L09_posted_fast_path_one_qp)
{
	struct oms_stats st = { .size = sizeof(st) };
	uint64_t seen, bad, held0;

	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	held0 = st.held;
	mp_run(_metadata, self, self->ctx, 1, step_l09, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	/* the experiment's own bookkeeping is on QP 0 too: nothing held */
	EXPECT_EQ(held0, st.held);
}

static int step_l10(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = oms_put_weak(ctx, &self->r[0], A_OFF, &vals[i], 8);

	return err ? err : oms_put_strong(ctx, &self->r[1], F_OFF, &vals[i], 8);
}

TEST_F(rxe, litmus_L10_channel_switch_flush)
{
	struct oms_stats st = { .size = sizeof(st) };
	uint64_t seen, bad, held0;

	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	held0 = st.held;
	mp_run(_metadata, self, self->ctx, 1, step_l10, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	/* strong stores on QP 1 waited for the flush READ on QP 0 */
	EXPECT_GE(st.held - held0, iters / 2);
	TH_LOG("strong stores held for a flush: %llu of %d",
	       (unsigned long long)(st.held - held0), iters);
}

static int step_l14(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_put_weak(ctx, &self->r[0], A_OFF, &vals[i], 8);
	err = err ? err : oms_fence(ctx, self->r[0].dest);
	return err ? err : oms_put_weak(ctx, &self->r[0], F_OFF, &vals[i], 8);
}

TEST_F(rxe, litmus_L14_fence_per_destination)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 1, step_l14, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

static int step_l15(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = busy(self, ctx, 0, OMS_STORE_UNORDERED);

	err = err ? err : oms_put(ctx, &self->r[0], A_OFF, &vals[i], 8,
				  OMS_STORE_UNORDERED);
	err = err ? err : oms_quiet(ctx);
	return err ? err : oms_put(ctx, &self->r[1], F_OFF, &vals[i], 8,
				   OMS_STORE_UNORDERED);
}

TEST_F(rxe, litmus_L15_quiet_is_completion)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 1, step_l15, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

static int step_l17(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_put_weak(ctx, &self->r[0], A_OFF, &vals[i], 8);
	err = err ? err : oms_fence_global(ctx);
	return err ? err : oms_put_weak(ctx, &self->r[1], F_OFF, &vals[i], 8);
}

TEST_F(rxe, litmus_L17_global_fence_publishes)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 1, step_l17, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

/*
 * L26: a put then a get of the same bytes from the same requester returns
 * the new value (C1, R after W), whatever the put's class and path
 * (inline, or a bounce buffer for the longer one).
 */
TEST_F_TIMEOUT(rxe, litmus_L26_get_after_put_same_address, 600)
{
	static const enum oms_store_class cls[] = {
		OMS_STORE_UNORDERED, OMS_STORE_WEAK, OMS_STORE_STRONG,
		OMS_STORE_RELEASE,
	};
	static uint64_t got[ITERS + 1], big[128];
	const uint64_t x = RX_SCRATCH + 0x2000;
	uint64_t bad = 0;

	for (int i = 1; i <= iters; i++) {
		size_t len = i % 3 ? 8 : sizeof(big);

		big[0] = vals[i];
		ASSERT_EQ(0, oms_put(self->ctx, &self->r[0], x,
				     len == 8 ? &vals[i] : big, len,
				     cls[i % 4]));
		ASSERT_EQ(0, oms_get(self->ctx, &got[i], &self->r[0], x, 8,
				     OMS_READ_RELAXED));
		/* the big one's source is reused: its write must be done */
		if (!(i % 16) || len != 8)
			ASSERT_EQ(0, oms_quiet(self->ctx));
	}
	ASSERT_EQ(0, oms_quiet(self->ctx));
	for (int i = 1; i <= iters; i++)
		bad += got[i] != vals[i];
	TH_LOG("%d put-get pairs, %llu read an older value", iters,
	       (unsigned long long)bad);
	EXPECT_EQ(0, bad);
}

/*
 * L33: get(X) then put(X = i): the get never returns i.  The get covers
 * 16 lines ending at X, so its READ takes a while; X is put back to 0
 * before each get (C1, W after W and R after W, keep that in order).
 */
#define L33_G	(RX_SCRATCH + 0x4000)	/* the get's 1 KiB */
#define L33_X	(L33_G + 1024 - 8)	/* X: its last word */

enum l33_how { L33_WEAK, L33_FENCE, L33_STRONG };

static uint64_t l33_run(struct __test_metadata *_metadata,
			FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx,
			enum l33_how how)
{
	static uint64_t buf[16][128], zero;
	const struct oms_rmr *r = rr(self, ctx);
	uint64_t bad = 0;

	for (int i = 1; i <= iters; i++) {
		uint64_t *b = buf[i % 16];

		ASSERT_EQ(0, oms_put(ctx, &r[0], L33_X, &zero, 8,
				     OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_get(ctx, b, &r[0], L33_G, 1024,
				     OMS_READ_RELAXED));
		if (how == L33_FENCE)
			ASSERT_EQ(0, oms_fence(ctx, r[0].dest));
		ASSERT_EQ(0, oms_put(ctx, &r[0], L33_X, &vals[i], 8,
				     how == L33_STRONG ? OMS_STORE_STRONG :
				     OMS_STORE_WEAK));
		if (i % 16)
			continue;
		ASSERT_EQ(0, oms_quiet(ctx));
		for (int k = 0; k < 16; k++)
			bad += buf[k][127] != 0;
	}
	ASSERT_EQ(0, oms_quiet(ctx));
	TH_LOG("%d get-then-put pairs, the get saw the later put %llu times",
	       iters, (unsigned long long)bad);
	return bad;
}

TEST_F_TIMEOUT(rxe, litmus_L33_get_then_weak_put_same_address, 600)
{
	EXPECT_EQ(0, l33_run(_metadata, self, self->ctx, L33_WEAK));
}

TEST_F_TIMEOUT(rxe, litmus_L33_get_fence_weak_put_same_address, 600)
{
	EXPECT_EQ(0, l33_run(_metadata, self, self->ctx, L33_FENCE));
}

TEST_F_TIMEOUT(rxe, litmus_L33_get_then_strong_put_same_address, 600)
{
	EXPECT_EQ(0, l33_run(_metadata, self, self->ctx, L33_STRONG));
}

/* No L33 control here: rxe's responder finishes a READ before it takes
 * the next request, so without the fence flag a WRITE still never
 * overtakes a READ on one rxe QP and such a control could not fail.  The
 * emulated device shows the outcome (tests/litmus_emu_mixed_war.c). */

/*
 * L34: acq(F) then put(Y = i), Y on the acquire's destination or on
 * another.  The observer on the server's CPU copies each new Y into F
 * (RX_MODE_ECHO): an acquire that returns i read F after the put it
 * precedes was visible.  The acquire waits behind a busy QP, so without
 * ordering a put on another QP lands first.
 */
#define Y_OFF	A_OFF

static uint64_t l34_got[ITERS + 1];

static int step_l34(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i,
		    int yq, unsigned int acq)
{
	const struct oms_rmr *r = rr(self, ctx);
	int err = very_busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_get(ctx, &l34_got[i], &r[0], F_OFF, 8, acq);
	return err ? err : oms_put_weak(ctx, &r[yq], Y_OFF, &vals[i], 8);
}

static int step_l34_same(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	return step_l34(self, ctx, i, 0, OMS_READ_ACQUIRE);
}

static int step_l34_other(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	return step_l34(self, ctx, i, 1, OMS_READ_ACQUIRE);
}

static uint64_t l34_run(struct __test_metadata *_metadata,
			FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx,
			step_fn step)
{
	const struct exp x = {
		.flag = Y_OFF, .mode = RX_MODE_ECHO, .echo = F_OFF,
	};
	uint64_t seen = 0, obs_bad = 0, bad = 0;

	memset(l34_got, 0, sizeof(l34_got));
	exp_run(_metadata, self, ctx, &x, step, &seen, &obs_bad);
	EXPECT_GT(seen, 0);
	for (int i = 1; i <= iters; i++)
		bad += l34_got[i] >= vals[i];
	TH_LOG("acquires that saw their own later put: %llu of %d",
	       (unsigned long long)bad, iters);
	return bad;
}

TEST_F_TIMEOUT(rxe, litmus_L34_acquire_then_put_same_dest, 600)
{
	EXPECT_EQ(0, l34_run(_metadata, self, self->ctx, step_l34_same));
}

TEST_F_TIMEOUT(rxe, litmus_L34_acquire_then_put_other_dest, 600)
{
	EXPECT_EQ(0, l34_run(_metadata, self, self->ctx, step_l34_other));
}

/* The other-destination program with no ordering: the put on the idle QP
 * is echoed into F before the READ behind the busy QP reads it. */
TEST_F_TIMEOUT(rxe, control_L34_no_ordering_other_dest, 600)
{
	uint64_t bad;

	ASSERT_EQ(0, control_ctx(self));
	bad = l34_run(_metadata, self, self->cctx, step_l34_other);
	TH_LOG("control (no ordering): %llu of %d", (unsigned long long)bad,
	       iters);
	EXPECT_GT(bad, 0);
}

/*
 * L35: acq(F@1) then get(Y@2 or @1) while the server's CPU writes Y = k
 * then F = k with a release, k = 1, 2, ... (RX_MODE_WRITER): a get of Y
 * performed after the acquire read F returns at least what F held.
 */
static uint64_t l35_f[ITERS + 1], l35_y[ITERS + 1];

static int step_l35(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i,
		    int yq)
{
	const struct oms_rmr *r = rr(self, ctx);
	int err = very_busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_get(ctx, &l35_f[i], &r[0], F_OFF, 8,
				  OMS_READ_ACQUIRE);
	return err ? err : oms_get(ctx, &l35_y[i], &r[yq], Y_OFF, 8,
				   OMS_READ_RELAXED);
}

static int step_l35_same(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	return step_l35(self, ctx, i, 0);
}

static int step_l35_other(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	return step_l35(self, ctx, i, 1);
}

static uint64_t l35_run(struct __test_metadata *_metadata,
			FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx,
			step_fn step)
{
	const struct exp x = {
		.flag = F_OFF, .data = { Y_OFF }, .n = 1,
		.mode = RX_MODE_WRITER,
	};
	uint64_t written = 0, obs_bad = 0, bad = 0, moved = 0;

	exp_run(_metadata, self, ctx, &x, step, &written, &obs_bad);
	EXPECT_GT(written, 0);
	for (int i = 1; i <= iters; i++) {
		bad += l35_y[i] < l35_f[i];
		moved += i > 1 && l35_f[i] != l35_f[i - 1];
	}
	TH_LOG("server wrote %llu pairs; F moved between iterations %llu "
	       "times; gets of Y older than the acquire of F: %llu of %d",
	       (unsigned long long)written, (unsigned long long)moved,
	       (unsigned long long)bad, iters);
	EXPECT_GT(moved, 0);	/* the writer ran while the client read */
	return bad;
}

TEST_F_TIMEOUT(rxe, litmus_L35_acquire_then_get_same_dest, 600)
{
	EXPECT_EQ(0, l35_run(_metadata, self, self->ctx, step_l35_same));
}

TEST_F_TIMEOUT(rxe, litmus_L35_acquire_then_get_other_dest, 600)
{
	EXPECT_EQ(0, l35_run(_metadata, self, self->ctx, step_l35_other));
}

/* With no ordering the get of Y on the idle QP reads before the READ of
 * F behind the busy one. */
TEST_F_TIMEOUT(rxe, control_L35_no_ordering_other_dest, 600)
{
	uint64_t bad;

	ASSERT_EQ(0, control_ctx(self));
	bad = l35_run(_metadata, self, self->cctx, step_l35_other);
	TH_LOG("control (no ordering): %llu of %d", (unsigned long long)bad,
	       iters);
	EXPECT_GT(bad, 0);
}

/*
 * L37: a weak put with a wrong key fails (the QP goes to error), then a
 * strong put of F, on the same QP (posted right behind it) or on another
 * (held for a flush of the failed one): F is never visible, the strong
 * put does not complete OK, quiet returns -EACCES, oms_ctx_resume()
 * returns 0 and a new connection works.  Every iteration on a new
 * connection.
 */
#define L37_ITERS	24

TEST_F_TIMEOUT(rxe, litmus_L37_failed_put_breaks_the_chain, 600)
{
	const uint64_t data[1] = { A_OFF };
	struct oms_stats st0 = { .size = sizeof(st0) };
	struct oms_stats st = { .size = sizeof(st) };
	uint64_t seen = 1, bad = 1, f = 1, ok_strong = 0, v;
	struct oms_rmr fresh;

	ASSERT_EQ(0, exp_begin(_metadata, self, F_OFF, data, 1));
	for (int i = 1; i <= L37_ITERS; i++) {
		struct oms_rmr c, cbad;
		int same = i & 1;

		ASSERT_EQ(0, connect_retry(self->ctx, &c));
		cbad = c;
		cbad.key ^= 0x80;
		ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st0));
		ASSERT_EQ(0, oms_put_weak(self->ctx, &cbad, A_OFF, &vals[i], 8));
		ASSERT_EQ(0, oms_put_strong(self->ctx, same ? &c : &self->r[1],
					    F_OFF, &vals[i], 8));
		EXPECT_EQ(-EACCES, oms_quiet(self->ctx));
		ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
		EXPECT_EQ(0, st.outstanding);
		/* neither completed OK: the strong put was cancelled or
		 * failed with the QP */
		ok_strong += st.completed - st0.completed;
		EXPECT_EQ(0, oms_ctx_resume(self->ctx));
		/* the failed QP stays failed: connect again */
		EXPECT_EQ(0, oms_put_weak(self->ctx, &c, RX_SCRATCH, &vals[i],
					  8));
		EXPECT_EQ(-ENOTCONN, oms_quiet(self->ctx));
		EXPECT_EQ(0, oms_ctx_resume(self->ctx));
		/* a healthy destination goes on */
		ASSERT_EQ(0, get64(self->ctx, &self->r[0], F_OFF, &f));
		if (f)
			break;
	}
	EXPECT_EQ(0, f);
	EXPECT_EQ(0, ok_strong);
	ASSERT_EQ(0, exp_end(self, &seen, &bad));
	TH_LOG("%d iterations: F seen by the observer %llu times, "
	       "forbidden %llu", L37_ITERS, (unsigned long long)seen,
	       (unsigned long long)bad);
	EXPECT_EQ(0, seen);
	EXPECT_EQ(0, bad);
	/* a new connection works */
	ASSERT_EQ(0, connect_retry(self->ctx, &fresh));
	ASSERT_EQ(0, put64(self->ctx, &fresh, RX_SCRATCH, &vals[7]));
	ASSERT_EQ(0, get64(self->ctx, &fresh, RX_SCRATCH, &v));
	EXPECT_EQ(vals[7], v);
}

/*
 * L38: FAA(C@1) behind a busy QP, then SO(F@2): the observer never sees
 * F = i while C < i.  The control puts F weak (no ordering against the
 * add).  Then CAS(L@1) that succeeds, then an acquire get of L at 1: the
 * get returns what the CAS wrote.
 */
static int step_l38(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i,
		    enum oms_store_class cls)
{
	const struct oms_rmr *r = rr(self, ctx);
	int err = very_busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_atomic_fadd(ctx, &r[0], A_OFF, 1, NULL);
	return err ? err : oms_put(ctx, &r[1], F_OFF, &vals[i], 8, cls);
}

static int step_l38_strong(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	return step_l38(self, ctx, i, OMS_STORE_STRONG);
}

static int step_l38_weak(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	return step_l38(self, ctx, i, OMS_STORE_WEAK);
}

TEST_F_TIMEOUT(rxe, litmus_L38_fadd_then_strong_put_other_dest, 600)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 1, step_l38_strong, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
}

TEST_F_TIMEOUT(rxe, control_L38_fadd_then_weak_put_other_dest, 600)
{
	uint64_t seen, bad;

	mp_run(_metadata, self, self->ctx, 1, step_l38_weak, &seen, &bad);
	EXPECT_GT(seen, 0);
	TH_LOG("control (weak flag): %llu of %llu flag changes before the add",
	       (unsigned long long)bad, (unsigned long long)seen);
	EXPECT_GT(bad, 0);
}

TEST_F_TIMEOUT(rxe, litmus_L38_cas_then_acquire_get, 600)
{
	static uint64_t old[ITERS + 1], got[ITERS + 1];
	const uint64_t l = RX_SCRATCH + 0x3000;
	uint64_t zero = 0, bad = 0;

	ASSERT_EQ(0, put64(self->ctx, &self->r[0], l, &zero));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	for (int i = 1; i <= iters; i++) {
		ASSERT_EQ(0, oms_atomic_cas(self->ctx, &self->r[0], l,
					    vals[i - 1], vals[i], &old[i]));
		ASSERT_EQ(0, oms_get(self->ctx, &got[i], &self->r[0], l, 8,
				     OMS_READ_ACQUIRE));
		if (!(i % 16))
			ASSERT_EQ(0, oms_quiet(self->ctx));
	}
	ASSERT_EQ(0, oms_quiet(self->ctx));
	for (int i = 1; i <= iters; i++) {
		EXPECT_EQ(vals[i - 1], old[i]);	/* every CAS succeeded */
		bad += got[i] != vals[i];
	}
	TH_LOG("acquire gets that missed the CAS before them: %llu of %d",
	       (unsigned long long)bad, iters);
	EXPECT_EQ(0, bad);
}

/*
 * L39: unordered and weak puts of A and B, then a release put of F, all
 * to one destination behind a busy QP: the observer never sees F before
 * A and B, and the release is not held at the source (IBV_SEND_FENCE at
 * the QP, no round trip).
 */
static int step_l39(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i)
{
	int err = busy(self, ctx, 0, OMS_STORE_WEAK);

	err = err ? err : oms_put(ctx, &self->r[0], A_OFF, &vals[i], 8,
				  OMS_STORE_UNORDERED);
	err = err ? err : oms_put_weak(ctx, &self->r[0], B_OFF, &vals[i], 8);
	return err ? err : oms_put(ctx, &self->r[0], F_OFF, &vals[i], 8,
				   OMS_STORE_RELEASE);
}

TEST_F_TIMEOUT(rxe, litmus_L39_release_after_puts_same_dest, 600)
{
	struct oms_stats st = { .size = sizeof(st) };
	uint64_t seen, bad, held0;

	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	held0 = st.held;
	mp_run(_metadata, self, self->ctx, 2, step_l39, &seen, &bad);
	EXPECT_GT(seen, 0);
	EXPECT_EQ(0, bad);
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	EXPECT_EQ(held0, st.held);
}

/* Bytes through every local path, back through relaxed and acquire gets. */
TEST_F(rxe, data_paths_put_get)
{
	static const size_t sizes[] = { 1, 8, 200, 256, 257, 1000, 4096, 4097,
					20000, 65536 };
	static uint8_t src[65536], back[65536], back2[65536];

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		uint64_t off = RX_SCRATCH + 8 * k + 3 * (k & 1);

		for (size_t i = 0; i < n; i++)
			src[i] = (uint8_t)(i * 7 + k * 13 + 1);
		memset(back, 0, n);
		memset(back2, 0, n);
		ASSERT_EQ(0, oms_put(self->ctx, &self->r[k % NCONN], off, src, n,
				     OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_quiet(self->ctx));
		ASSERT_EQ(0, oms_get(self->ctx, back, &self->r[(k + 1) % NCONN],
				     off, n, OMS_READ_RELAXED));
		ASSERT_EQ(0, oms_get(self->ctx, back2, &self->r[(k + 2) % NCONN],
				     off, n, OMS_READ_ACQUIRE));
		ASSERT_EQ(0, oms_quiet(self->ctx));
		EXPECT_EQ(0, memcmp(src, back, n));
		EXPECT_EQ(0, memcmp(src, back2, n));
	}
	/* zero copy from and into a registered region */
	for (size_t i = 0; i < BULK; i++)
		bulk[i] = (uint8_t)(i ^ 0x5a);
	ASSERT_EQ(0, oms_put(self->ctx, &self->r[0], RX_SCRATCH, bulk, BULK,
			     OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	ASSERT_EQ(0, oms_get(self->ctx, bulk + BULK, &self->r[1], RX_SCRATCH,
			     BULK, OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(0, memcmp(bulk, bulk + BULK, BULK));
}

TEST_F(rxe, atomics_fadd_cas)
{
	const uint64_t off = RX_SCRATCH + 0x100;
	uint64_t zero = 0, old[64], v = 0;

	ASSERT_EQ(0, put64(self->ctx, &self->r[0], off, &zero));
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(0, oms_atomic_fadd(self->ctx, &self->r[i % NCONN], off,
					     3, &old[i]));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	/* every old value is distinct, a multiple of 3, below 96 */
	for (int i = 0; i < 32; i++) {
		EXPECT_EQ(0, old[i] % 3);
		EXPECT_LT(old[i], 96);
		for (int j = 0; j < i; j++)
			EXPECT_NE(old[i], old[j]);
	}
	ASSERT_EQ(0, oms_atomic_cas(self->ctx, &self->r[1], off, 96, 1000,
				    &old[40]));
	ASSERT_EQ(0, oms_atomic_cas(self->ctx, &self->r[1], off, 96, 2000,
				    &old[41]));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(96, old[40]);
	EXPECT_EQ(1000, old[41]);
	ASSERT_EQ(0, get64(self->ctx, &self->r[2], off, &v));
	EXPECT_EQ(1000, v);
	EXPECT_EQ(-EINVAL, oms_atomic_fadd(self->ctx, &self->r[0], off + 4, 1,
					   NULL));
}

TEST_F(rxe, wrong_key_eacces_nothing_written)
{
	const uint64_t off = RX_SCRATCH + 0x200;
	uint64_t mark = 0x1111, evil = 0xbad, v = 0;
	struct oms_rmr bad = self->r[2];
	struct oms_stats st = { .size = sizeof(st) };
	struct oms_stats st0 = { .size = sizeof(st0) };

	ASSERT_EQ(0, put64(self->ctx, &self->r[0], off, &mark));
	ASSERT_EQ(0, put64(self->ctx, &self->r[0], off + 8, &v));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	bad.key ^= 0x80;
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st0));
	ASSERT_EQ(0, oms_put(self->ctx, &bad, off, &evil, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_put(self->ctx, &bad, off + 8, &evil, 8,
			     OMS_STORE_WEAK));
	EXPECT_EQ(-EACCES, oms_quiet(self->ctx));
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	/* both failed, and so did quiet's flush of that QP (the context
	 * counts its own flushes too): nothing completed OK */
	EXPECT_GE(st.failed - st0.failed, 2);
	EXPECT_EQ(st0.completed, st.completed);
	/* the QP of the wrong key is dead; the others are not */
	ASSERT_EQ(0, get64(self->ctx, &self->r[0], off, &v));
	EXPECT_EQ(mark, v);
	ASSERT_EQ(0, get64(self->ctx, &self->r[1], off + 8, &v));
	EXPECT_EQ(0, v);
	/* after resume the failed QP says so on every op: connect again */
	EXPECT_EQ(0, oms_ctx_resume(self->ctx));
	EXPECT_EQ(0, oms_put_weak(self->ctx, &self->r[2], off, &evil, 8));
	EXPECT_EQ(-ENOTCONN, oms_quiet(self->ctx));
	/* a new connection takes a free destination and works */
	ASSERT_EQ(0, connect_retry(self->ctx, &bad));
	ASSERT_EQ(0, get64(self->ctx, &bad, off, &v));
	EXPECT_EQ(mark, v);
}

TEST_F(rxe, forged_length_efault_qp_lives)
{
	struct oms_rmr big = self->r[0];
	uint64_t x = 7, v = 0;

	big.len = (uint64_t)RX_REGION * 4;
	ASSERT_EQ(0, oms_put_weak(self->ctx, &big, RX_REGION, &x, 8));
	EXPECT_EQ(-EFAULT, oms_quiet(self->ctx));
	ASSERT_EQ(0, oms_put_weak(self->ctx, &self->r[0], RX_SCRATCH, &x, 8));
	ASSERT_EQ(0, get64(self->ctx, &self->r[0], RX_SCRATCH, &v));
	EXPECT_EQ(x, v);
}

TEST_F(rxe, connect_errors)
{
	struct oms_rmr r;
	uint64_t t0;
	int err;

	t0 = now_ms();
	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->ctx, getenv("OMS_RXE_SERVER"),
					     "1", 3000, &r));
	EXPECT_LT(now_ms() - t0, 3000);
	/* a host on the wire that does not exist: bounded, never a hang */
	t0 = now_ms();
	err = oms_connect(self->ctx, "10.77.0.99", "7471", 1500, &r);
	TH_LOG("unreachable host: %d (%s) after %llu ms", err, strerror(-err),
	       (unsigned long long)(now_ms() - t0));
	EXPECT_TRUE(err == -ETIMEDOUT || err == -EHOSTUNREACH);
	EXPECT_LT(now_ms() - t0, 4000);
	EXPECT_EQ(-EHOSTUNREACH, oms_connect(self->ctx, "no.such.host.invalid",
					     "7471", 1000, &r));
}

/*
 * The destination agent: a context (self->cctx, no control here) whose
 * connections go to the server's listener that runs one.
 */
static int agent_ctx(FIXTURE_DATA(rxe) *self)
{
	const char *port = getenv("OMS_RXE_AGENT_PORT");
	struct oms_mr *mr;
	int err;

	if (!port)
		return -ENOENT;
	self->cctx = make_ctx(0);
	if (!self->cctx)
		return -ENOMEM;
	err = oms_mr_reg(self->cctx, bulk, sizeof(bulk),
			 OMS_ACCESS_REMOTE_READ, &mr);
	for (int i = 0; i < NCONN && !err; i++)
		err = connect_port(self->cctx, port, &self->cr[i]);
	return err;
}

#define AGENT_SETUP(self) do {						\
	if (!getenv("OMS_RXE_AGENT_PORT"))				\
		SKIP(return, "OMS_RXE_AGENT_PORT not set");		\
	ASSERT_EQ(0, agent_ctx(self));					\
} while (0)

TEST_F_TIMEOUT(rxe, litmus_L34_acquire_then_put_same_dest_agent, 600)
{
	AGENT_SETUP(self);
	EXPECT_EQ(0, l34_run(_metadata, self, self->cctx, step_l34_same));
}

TEST_F_TIMEOUT(rxe, litmus_L34_acquire_then_put_other_dest_agent, 600)
{
	AGENT_SETUP(self);
	EXPECT_EQ(0, l34_run(_metadata, self, self->cctx, step_l34_other));
}

TEST_F_TIMEOUT(rxe, litmus_L29_L35_acquire_then_get_same_dest_agent, 600)
{
	AGENT_SETUP(self);
	EXPECT_EQ(0, l35_run(_metadata, self, self->cctx, step_l35_same));
}

TEST_F_TIMEOUT(rxe, litmus_L29_L35_acquire_then_get_other_dest_agent, 600)
{
	AGENT_SETUP(self);
	EXPECT_EQ(0, l35_run(_metadata, self, self->cctx, step_l35_other));
}

/* What the capability query says: agent on every connection, then one
 * one-sided connection beside them; OMS_AGENT=0 asks for none. */
TEST_F(rxe, agent_caps_per_connection)
{
	struct oms_caps c = { .size = sizeof(c) };
	struct oms_ctx *ctx;
	struct oms_rmr r;

	AGENT_SETUP(self);
	ASSERT_EQ(0, oms_query_caps(self->cctx, &c));
	EXPECT_TRUE(c.flags & OMS_CAP_DEST_ORDER_AGENT);
	EXPECT_FALSE(c.flags & OMS_CAP_ACQUIRE_AT_SOURCE);
	EXPECT_STREQ("agent", c.dest_ordering);
	ASSERT_EQ(0, connect_retry(self->cctx, &r));	/* no agent there */
	ASSERT_EQ(0, oms_query_caps(self->cctx, &c));
	EXPECT_TRUE(c.flags & OMS_CAP_DEST_ORDER_AGENT);
	EXPECT_TRUE(c.flags & OMS_CAP_ACQUIRE_AT_SOURCE);
	EXPECT_STREQ("source", c.dest_ordering);
	/* the plain fixture's connections: no agent */
	ASSERT_EQ(0, oms_query_caps(self->ctx, &c));
	EXPECT_FALSE(c.flags & OMS_CAP_DEST_ORDER_AGENT);
	setenv("OMS_AGENT", "0", 1);
	ctx = make_ctx(0);
	ASSERT_NE(NULL, ctx);
	EXPECT_EQ(0, connect_port(ctx, getenv("OMS_RXE_AGENT_PORT"), &r));
	unsetenv("OMS_AGENT");
	ASSERT_EQ(0, oms_query_caps(ctx, &c));
	EXPECT_FALSE(c.flags & OMS_CAP_DEST_ORDER_AGENT);
	EXPECT_STREQ("source", c.dest_ordering);
	oms_ctx_destroy(ctx);
}

/* Bytes of every size and alignment through the agent (bounce buffer and
 * a registration of the get's own buffer), many in flight. */
TEST_F_TIMEOUT(rxe, agent_acquire_gets_every_size, 600)
{
	static const size_t sizes[] = { 1, 8, 63, 64, 65, 200, 4096, 4097,
					20000, 65536 };
	static uint8_t src[65536], back[8][65536];

	AGENT_SETUP(self);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		uint64_t off = RX_SCRATCH + 8 * k + 3 * (k & 1);

		for (size_t i = 0; i < n; i++)
			src[i] = (uint8_t)(i * 11 + k * 5 + 3);
		ASSERT_EQ(0, oms_put(self->ctx, &self->r[0], off, src, n,
				     OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_quiet(self->ctx));
		for (int j = 0; j < 8; j++) {
			memset(back[j], 0, n);
			ASSERT_EQ(0, oms_get(self->cctx, back[j],
					     &self->cr[j % NCONN], off, n,
					     OMS_READ_ACQUIRE));
		}
		ASSERT_EQ(0, oms_quiet(self->cctx));
		for (int j = 0; j < 8; j++)
			EXPECT_EQ(0, memcmp(src, back[j], n));
	}
	/* a burst: more answers in one round than one chain of the agent
	 * holds, so some come back as records and some with their bytes */
	for (int rep = 0; rep < 4; rep++) {
		static uint64_t want[512], got[512];

		for (int i = 0; i < 512; i++)
			want[i] = (uint64_t)rep << 32 | (uint64_t)i * 2654435761u;
		ASSERT_EQ(0, oms_put(self->ctx, &self->r[0], RX_SCRATCH, want,
				     sizeof(want), OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_quiet(self->ctx));
		memset(got, 0, sizeof(got));
		for (int i = 0; i < 512; i++)
			ASSERT_EQ(0, oms_get(self->cctx, &got[i],
					     &self->cr[i % NCONN],
					     RX_SCRATCH + 8 * (uint64_t)i, 8,
					     OMS_READ_ACQUIRE));
		ASSERT_EQ(0, oms_quiet(self->cctx));
		EXPECT_EQ(0, memcmp(want, got, sizeof(want)));
	}
}

/*
 * Ask the host to stop the server guest's CPUs for @secs (the shared
 * directory's stop-a, run-rxe-tests.sh) and wait until it says so.  The
 * file is written under another name and renamed into place: the host
 * reads it as soon as the name exists.
 */
static int pause_server(int secs)
{
	const char *dir = getenv("OMS_RXE_SHARED");
	char path[256], tmp[272], said[256];
	uint64_t end = now_ms() + 30000;
	FILE *f;
	int err;

	if (!dir)
		return -ENOENT;
	snprintf(said, sizeof(said), "%s/a-stopped", dir);
	unlink(said);
	snprintf(path, sizeof(path), "%s/stop-a", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", secs);
	err = fclose(f) ? -errno : 0;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		return err;
	while (access(said, F_OK) && now_ms() < end)
		usleep(20000);
	if (access(said, F_OK))
		return -ETIMEDOUT;
	usleep(500000);	/* said before the monitor's stop: let it act */
	return 0;
}

/* Requests piled up while the server stood still: the agent takes many
 * doorbells in one round, more answers than one chain holds, so some go
 * back as records and some with their bytes; every one lands right. */
TEST_F_TIMEOUT(rxe, agent_burst_while_server_paused, 600)
{
	static uint64_t want[1024], got[1024];

	AGENT_SETUP(self);
	if (!getenv("OMS_RXE_SHARED"))
		SKIP(return, "OMS_RXE_SHARED not set");
	for (int i = 0; i < 1024; i++)
		want[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
	ASSERT_EQ(0, oms_put(self->ctx, &self->r[0], RX_SCRATCH, want,
			     sizeof(want), OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	ASSERT_EQ(0, pause_server(2));
	for (int i = 0; i < 768; i++)
		ASSERT_EQ(0, oms_get(self->cctx, &got[i], &self->cr[i % NCONN],
				     RX_SCRATCH + 8 * (uint64_t)i, 8,
				     OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_quiet(self->cctx));
	EXPECT_EQ(0, memcmp(want, got, 768 * sizeof(want[0])));
}

/* A wrong key: the agent refuses the get (nothing read), quiet says
 * -EACCES, the connection is stopped like a QP in error; the agent goes on
 * serving the others. */
TEST_F(rxe, agent_wrong_key_refused)
{
	struct oms_rmr bad;
	uint64_t v = 0x77, mark = 0x4242;

	AGENT_SETUP(self);
	ASSERT_EQ(0, put64(self->ctx, &self->r[0], RX_SCRATCH, &mark));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	bad = self->cr[2];
	bad.key ^= 0x80;
	ASSERT_EQ(0, oms_get(self->cctx, &v, &bad, RX_SCRATCH, 8,
			     OMS_READ_ACQUIRE));
	EXPECT_EQ(-EACCES, oms_quiet(self->cctx));
	EXPECT_EQ(0x77, v);
	EXPECT_EQ(0, oms_ctx_resume(self->cctx));
	ASSERT_EQ(0, oms_get(self->cctx, &v, &self->cr[2], RX_SCRATCH, 8,
			     OMS_READ_ACQUIRE));
	EXPECT_EQ(-ENOTCONN, oms_quiet(self->cctx));
	EXPECT_EQ(0, oms_ctx_resume(self->cctx));
	ASSERT_EQ(0, oms_get(self->cctx, &v, &self->cr[0], RX_SCRATCH, 8,
			     OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_quiet(self->cctx));
	EXPECT_EQ(mark, v);
}

/* A put, then a refused get, then a good one, on one connection: the put
 * was performed before the refusal and completes OK; the connection stops
 * at the refused get, and the get after it is cancelled. */
TEST_F(rxe, agent_refusal_after_a_put)
{
	struct oms_stats st0 = { .size = sizeof(st0) };
	struct oms_stats st = { .size = sizeof(st) };
	uint64_t mark2 = 0x6262, w = 0, v = 0;
	struct oms_rmr bad;

	AGENT_SETUP(self);
	bad = self->cr[1];
	bad.key ^= 0x80;
	ASSERT_EQ(0, oms_ctx_stats(self->cctx, &st0));
	ASSERT_EQ(0, oms_put_weak(self->cctx, &self->cr[1],
				  RX_SCRATCH + 8, &mark2, 8));
	ASSERT_EQ(0, oms_get(self->cctx, &v, &bad, RX_SCRATCH, 8,
			     OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_get(self->cctx, &w, &self->cr[1], RX_SCRATCH,
			     8, OMS_READ_ACQUIRE));
	EXPECT_EQ(-EACCES, oms_quiet(self->cctx));
	ASSERT_EQ(0, oms_ctx_stats(self->cctx, &st));
	TH_LOG("put, refused get, get: %llu completed, %llu failed",
	       (unsigned long long)(st.completed - st0.completed),
	       (unsigned long long)(st.failed - st0.failed));
	EXPECT_GE(st.completed - st0.completed, 1);	/* the put */
	EXPECT_GE(st.failed - st0.failed, 2);
	EXPECT_EQ(0, w);	/* the get after it: cancelled */
	ASSERT_EQ(0, get64(self->ctx, &self->r[0], RX_SCRATCH + 8, &v));
	EXPECT_EQ(mark2, v);
}

/* A requester that dies with gets in flight: its QP goes to error, the
 * agent drops what it owed, and the next requester is served. */
TEST_F_TIMEOUT(rxe, agent_requester_dies_mid_stream, 600)
{
	uint64_t mark = 0x5151, v = 0;

	if (!getenv("OMS_RXE_AGENT_PORT"))
		SKIP(return, "OMS_RXE_AGENT_PORT not set");
	ASSERT_EQ(0, put64(self->ctx, &self->r[0], RX_SCRATCH + 64, &mark));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	for (int round = 0; round < 3; round++) {
		pid_t pid = fork();
		int status = 0;

		ASSERT_GE(pid, 0);
		if (!pid) {
			static uint8_t buf[64][4096];
			struct oms_ctx *ctx = make_ctx(0);
			struct oms_rmr r;

			if (!ctx || connect_port(ctx,
					getenv("OMS_RXE_AGENT_PORT"), &r))
				_exit(2);
			for (int i = 0; i < 64; i++)
				oms_get(ctx, buf[i], &r, RX_SCRATCH, 4096,
					OMS_READ_ACQUIRE);
			oms_progress(ctx);
			_exit(0);	/* no quiet, no goodbye */
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	AGENT_SETUP(self);
	for (int i = 0; i < NCONN; i++) {
		v = 0;
		ASSERT_EQ(0, oms_get(self->cctx, &v, &self->cr[i],
				     RX_SCRATCH + 64, 8, OMS_READ_ACQUIRE));
		ASSERT_EQ(0, oms_quiet(self->cctx));
		EXPECT_EQ(mark, v);
	}
}

/*
 * A failure in the middle of an unsignaled run.  Under
 * OMS_CTX_F_DOORBELL_BATCH 24 weak puts go to one QP in a few chains, few
 * of them signaled; the 12th carries a wrong key.  The responder refuses
 * it and RC performs nothing after it on the QP: oms_quiet() reports the
 * first error (-EACCES), the 11 puts before it are in memory (completed
 * OK by the error's completion, which covers them), none after it.
 */
TEST_F(rxe, unsignaled_run_failure_first_error_nothing_after)
{
	enum { RUN = 24, BAD = 11 };
	const uint64_t off = RX_SCRATCH + 0x600;
	static uint64_t v[RUN], zero[RUN], got[RUN];
	struct oms_stats st = { .size = sizeof(st) };
	struct oms_stats st0 = { .size = sizeof(st0) };
	struct oms_rmr bad;

	ASSERT_EQ(0, oms_put(self->ctx, &self->r[0], off, zero, sizeof(zero),
			     OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	self->cctx = make_ctx(OMS_CTX_F_DOORBELL_BATCH);
	ASSERT_NE(NULL, self->cctx);
	ASSERT_EQ(0, connect_retry(self->cctx, &self->cr[0]));
	bad = self->cr[0];
	bad.key ^= 0x80;
	ASSERT_EQ(0, oms_ctx_stats(self->cctx, &st0));
	for (int k = 0; k < RUN; k++) {
		v[k] = 0x7100 + (uint64_t)k;
		ASSERT_EQ(0, oms_put(self->cctx, k == BAD ? &bad : &self->cr[0],
				     off + 8 * (uint64_t)k, &v[k], 8,
				     OMS_STORE_WEAK));
	}
	ASSERT_EQ(0, oms_ctx_stats(self->cctx, &st));
	TH_LOG("%d puts: %llu doorbells, %llu completion entries", RUN,
	       (unsigned long long)(st.doorbells - st0.doorbells),
	       (unsigned long long)(st.dev_completions - st0.dev_completions));
	EXPECT_LT(st.doorbells - st0.doorbells, RUN / 4);
	EXPECT_EQ(-EACCES, oms_quiet(self->cctx));
	ASSERT_EQ(0, oms_ctx_stats(self->cctx, &st));
	EXPECT_EQ(BAD, st.completed - st0.completed);
	EXPECT_GE(st.failed - st0.failed, RUN - BAD);
	EXPECT_EQ(0, st.outstanding);
	ASSERT_EQ(0, oms_get(self->ctx, got, &self->r[0], off, sizeof(got),
			     OMS_READ_RELAXED));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	for (int w = 0; w < RUN; w++) {
		uint64_t want = w < BAD ? v[w] : 0;

		if (got[w] != want)
			TH_LOG("word %d: %#llx, not %#llx", w,
			       (unsigned long long)got[w],
			       (unsigned long long)want);
		EXPECT_EQ(want, got[w]);
	}
}

/* Last: the server dies; every pending op fails, nothing hangs. */
TEST_F(rxe, peer_gone_every_pending_op_fails)
{
	static uint8_t buf[NCONN][4096];
	uint64_t die = RX_CMD_DIE, t0;
	struct oms_stats st = { .size = sizeof(st) }, st0 = { .size = sizeof(st) };
	int err, n = 0;

	ASSERT_EQ(0, put64(self->ctx, &self->r[0], RX_CMD, &die));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st0));
	t0 = now_ms();
	/* ops in flight while it dies: more than it takes the server to */
	for (int k = 0; k < 4; k++)
		for (int c = 0; c < NCONN; c++, n++)
			ASSERT_EQ(0, very_busy(self, self->ctx, c,
					       OMS_STORE_WEAK));
	err = oms_quiet(self->ctx);
	TH_LOG("quiet while the peer dies: %d (%s) after %llu ms", err,
	       strerror(-err), (unsigned long long)(now_ms() - t0));
	EXPECT_NE(0, err);
	EXPECT_LT(now_ms() - t0, 5000);
	/* every op accounted for (and quiet's own flushes) */
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	EXPECT_LE(n, (st.completed - st0.completed) + (st.failed - st0.failed));
	EXPECT_EQ(0, st.outstanding);
	usleep(500000);
	/* resume: the connections stay dead (a RESET cannot restart a QP),
	 * and all of these must fail with -ENOTCONN */
	EXPECT_EQ(0, oms_ctx_resume(self->ctx));
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st0));
	n = 0;
	t0 = now_ms();
	for (int c = 0; c < NCONN; c++) {
		err = oms_put_weak(self->ctx, &self->r[c], RX_SCRATCH, buf[c], 64);
		EXPECT_TRUE(err == 0 || err == -ENOTCONN);
		err = oms_get(self->ctx, buf[c], &self->r[c], RX_SCRATCH, 64, 0);
		EXPECT_TRUE(err == 0 || err == -ENOTCONN);
		n += 2;
	}
	err = oms_quiet(self->ctx);
	TH_LOG("quiet after the peer died: %d (%s) after %llu ms", err,
	       strerror(-err), (unsigned long long)(now_ms() - t0));
	EXPECT_EQ(-ENOTCONN, err);
	EXPECT_LT(now_ms() - t0, 5000);
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	EXPECT_EQ(0, st.completed - st0.completed);
	EXPECT_LE(n, st.failed - st0.failed);
	EXPECT_EQ(0, st.outstanding);
}

TEST_HARNESS_MAIN
