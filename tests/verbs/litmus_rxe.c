// SPDX-License-Identifier: MIT
/*
 * Litmus tests over verbs between two hosts (two QEMU guests with
 * Soft-RoCE in `make check`): this client connects to rxe_server several
 * times (each connection is one destination, one RC QP) and checks, with
 * the server's observer thread counting what lands (rxe_proto.h), that no
 * forbidden outcome of ../shared/litmus.md is ever seen:
 *
 *   L01  WO(A) WO(B) SO(F), on one destination and on three;
 *   L02  WO(A@1, behind a busy QP) SO(F@2): cumulative across QPs;
 *   L09  everything on one QP: ordered, and no strong store is held;
 *   L10  WO(A@1) SO(F@2): the strong store is held for a flush READ;
 *   L14  put(A@1); fence(1); put(F@1);
 *   L15  put(A@1); quiet; unordered put(F@2);
 *   L17  put(A@1); global fence; put(F@2);
 *   and a control with no ordering at all, whose count is logged.
 * Then data through every local path (inline, bounce, registered,
 * registered for one op), atomics, and errors over verbs: a wrong key
 * (-EACCES from quiet, nothing written), a forged length (-EFAULT, the
 * QP lives on), nobody listening (-ECONNREFUSED), an unreachable host,
 * and last the peer going away (every pending op fails, quiet returns an
 * error in bounded time).
 *
 * Environment: OMS_RXE_SERVER (address), OMS_RXE_PORT; without them every
 * test skips (this program is meant for the guest).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "oms.h"
#include "rxe_proto.h"

#define NCONN		3
#define ITERS		200
#define BULK		16384

static uint64_t vals[ITERS + 1];
static uint8_t bulk[RX_BULK_LEN];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Connect, retrying while the server comes up (bounded). */
static int connect_retry(struct oms_ctx *ctx, struct oms_rmr *r)
{
	const char *host = getenv("OMS_RXE_SERVER");
	const char *port = getenv("OMS_RXE_PORT");
	uint64_t end = now_ms() + 90000;
	int err;

	do {
		err = oms_connect(ctx, host, port, 3000, r);
		if (err != -ECONNREFUSED && err != -ETIMEDOUT &&
		    err != -EHOSTUNREACH)
			break;
		usleep(200000);
	} while (now_ms() < end);
	return err;
}

FIXTURE(rxe)
{
	struct oms_ctx *ctx;
	struct oms_rmr r[NCONN];
	struct oms_mr *bulk_mr;
	uint64_t epoch;
};

static struct oms_ctx *make_ctx(uint32_t flags)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_FLAGS;
	a.backend = OMS_BACKEND_VERBS;
	a.flags = flags;
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

FIXTURE_SETUP(rxe)
{
	if (!getenv("OMS_RXE_SERVER") || !getenv("OMS_RXE_PORT"))
		SKIP(return, "OMS_RXE_SERVER/OMS_RXE_PORT not set (guest test)");
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
	if (self->ctx)
		oms_ctx_destroy(self->ctx);
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
static int exp_begin(struct __test_metadata *_metadata,
		     FIXTURE_DATA(rxe) *self, uint64_t flag, const uint64_t *data,
		     uint32_t n)
{
	static uint64_t desc[2 + RX_MAX_DATA], zero;
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
	EXPECT_EQ(0, put64(self->ctx, &self->r[0], RX_EPOCH, &self->epoch));
	EXPECT_EQ(0, oms_quiet(self->ctx));
	while (seen != self->epoch && now_ms() < end)
		if (get64(self->ctx, &self->r[0], RX_RES_EPOCH, &seen))
			return -1;
	return seen == self->epoch ? 0 : -1;
}

/* Finish it: the observer's counts of flag changes and forbidden ones. */
static int exp_end(FIXTURE_DATA(rxe) *self, uint64_t *seen, uint64_t *bad)
{
	uint64_t done = 0, end = now_ms() + 20000;
	int err = oms_quiet(self->ctx);

	if (!err)
		err = put64(self->ctx, &self->r[0], RX_FINISH, &self->epoch);
	if (!err)
		err = oms_quiet(self->ctx);
	while (!err && done != self->epoch && now_ms() < end)
		err = get64(self->ctx, &self->r[0], RX_RES_DONE, &done);
	if (!err && done != self->epoch)
		err = -ETIMEDOUT;
	if (!err)
		err = get64(self->ctx, &self->r[0], RX_RES_SEEN, seen);
	if (!err)
		err = get64(self->ctx, &self->r[0], RX_RES_BAD, bad);
	return err;
}

#define A_OFF	(RX_DATA + 0x000)
#define B_OFF	(RX_DATA + 0x040)
#define F_OFF	(RX_DATA + 0x080)

/* One message-passing run; @step issues iteration i. */
typedef int (*step_fn)(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int i);

static void mp_run(struct __test_metadata *_metadata, FIXTURE_DATA(rxe) *self,
		   struct oms_ctx *ctx, uint32_t ndata, step_fn step,
		   uint64_t *seen, uint64_t *bad)
{
	const uint64_t data[2] = { A_OFF, B_OFF };

	ASSERT_EQ(0, exp_begin(_metadata, self, F_OFF, data, ndata));
	for (int i = 1; i <= ITERS; i++) {
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
	return oms_put(ctx, &self->r[qp], RX_BULK, bulk, BULK, cls);
}

/* Busier: more packets than an rxe QP sends before it waits for acks
 * (128), so a small write on another QP gets there first. */
static int very_busy(FIXTURE_DATA(rxe) *self, struct oms_ctx *ctx, int qp,
		     enum oms_store_class cls)
{
	return oms_put(ctx, &self->r[qp], RX_BULK, bulk, RX_BULK_LEN, cls);
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
	EXPECT_GE(st.held - held0, ITERS / 2);
	TH_LOG("strong stores held for a flush: %llu of %d",
	       (unsigned long long)(st.held - held0), ITERS);
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

	ASSERT_EQ(0, put64(self->ctx, &self->r[0], off, &mark));
	ASSERT_EQ(0, put64(self->ctx, &self->r[0], off + 8, &v));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	bad.key ^= 0x80;
	ASSERT_EQ(0, oms_put(self->ctx, &bad, off, &evil, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_put(self->ctx, &bad, off + 8, &evil, 8,
			     OMS_STORE_WEAK));
	EXPECT_EQ(-EACCES, oms_quiet(self->ctx));
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	EXPECT_EQ(2, st.failed);
	/* the QP of the wrong key is dead; the others are not */
	ASSERT_EQ(0, get64(self->ctx, &self->r[0], off, &v));
	EXPECT_EQ(mark, v);
	ASSERT_EQ(0, get64(self->ctx, &self->r[1], off + 8, &v));
	EXPECT_EQ(0, v);
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
	usleep(500000);
	/* and after: all of these must fail */
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
	EXPECT_NE(0, err);
	EXPECT_LT(now_ms() - t0, 5000);
	ASSERT_EQ(0, oms_ctx_stats(self->ctx, &st));
	EXPECT_EQ(n, (st.completed - st0.completed) + (st.failed - st0.failed));
	EXPECT_GE(st.failed - st0.failed, 2 * NCONN);
	EXPECT_EQ(0, st.outstanding);
}

TEST_HARNESS_MAIN
