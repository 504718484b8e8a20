// SPDX-License-Identifier: MIT
/*
 * OMS_TIMEOUT_MS: the liveness timeout of contexts whose attributes set
 * none.  With it set short, a context on a hung device gives up with
 * -ETIMEDOUT; a context whose attributes set their own timeout keeps it
 * (the control: the same hang, thawed within its timeout, loses nothing).
 * A value that is not a whole number in 1..600000 makes oms_ctx_create()
 * fail with -EINVAL and make nothing.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

static int make_ctx(struct oms_emu *e, int own_timeout, struct oms_ctx **c)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_EMU;
	a.emu = e;
	if (own_timeout) {
		a.comp_mask |= OMS_CTX_ATTR_TIMEOUT;
		a.timeout_ms = 60000;
	}
	return oms_ctx_create(&a, c);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A put to the context's own memory while the device is hung for
 * @hang_ms, the context polling all along; what quiet then says.  The
 * liveness watch looks every 64 calls: it times a heartbeat that stood
 * still from one look to a later one.  A loaded machine can run fewer
 * than 64 calls in @hang_ms (a yield gives the core away for
 * milliseconds), so the hang is counted in looks as well as in time: two
 * looks (the second finds the heartbeat standing), @hang_ms, one more. */
static void poll_calls(struct oms_ctx *c, int n)
{
	for (int i = 0; i < n; i++) {
		oms_progress(c);
		sched_yield();
	}
}

static int hung_put(struct __test_metadata *_metadata, struct oms_ctx *c,
		    struct oms_emu *e, unsigned hang_ms)
{
	uint64_t mem = 0, v = 1;
	struct oms_mr *m;
	struct oms_rmr r;
	int err;

	EXPECT_EQ(0, oms_mr_reg(c, &mem, 8, OMS_ACCESS_ALL, &m));
	EXPECT_EQ(0, oms_mr_remote(m, &r));
	EXPECT_EQ(0, oms_emu_freeze(e, 1));
	EXPECT_EQ(0, oms_put(c, &r, 0, &v, 8, OMS_STORE_STRONG));
	poll_calls(c, 2 * 64);
	for (uint64_t t0 = now_ms(); now_ms() - t0 < hang_ms;)
		poll_calls(c, 1);
	poll_calls(c, 64);
	EXPECT_EQ(0, oms_emu_freeze(e, 0));
	err = oms_quiet(c);
	oms_mr_dereg(m);
	return err;
}

TEST(short_env_timeout_gives_up_own_timeout_wins)
{
	struct oms_emu *e;
	struct oms_ctx *dflt, *own;

	ASSERT_EQ(0, setenv("OMS_TIMEOUT_MS", "100", 1));
	ASSERT_EQ(0, oms_emu_create(NULL, &e));
	ASSERT_EQ(0, make_ctx(e, 0, &dflt));
	ASSERT_EQ(0, make_ctx(e, 1, &own));
	/* hung five times the environment's timeout */
	EXPECT_EQ(-ETIMEDOUT, hung_put(_metadata, dflt, e, 500));
	EXPECT_EQ(0, hung_put(_metadata, own, e, 500));
	oms_ctx_destroy(dflt);
	oms_ctx_destroy(own);
	EXPECT_EQ(0, oms_emu_destroy(e));
}

TEST(bad_values_refused)
{
	static const char *const bad[] = {
		"0", "600001", "-5", "abc", "100ms", "99999999999999999999",
	};
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *c;

	a.comp_mask = OMS_CTX_ATTR_BACKEND;
	a.backend = OMS_BACKEND_EMU;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = NULL;
		ASSERT_EQ(0, setenv("OMS_TIMEOUT_MS", bad[i], 1));
		EXPECT_EQ(-EINVAL, oms_ctx_create(&a, &c));
		EXPECT_EQ(NULL, c);
	}
	/* empty: the default again */
	ASSERT_EQ(0, setenv("OMS_TIMEOUT_MS", "", 1));
	ASSERT_EQ(0, oms_ctx_create(&a, &c));
	oms_ctx_destroy(c);
}

TEST_HARNESS_MAIN
