// SPDX-License-Identifier: MIT
/*
 * A descriptor an initiator got from oms_connect() is good only while the
 * listener that handed it out serves: once oms_listener_close() returns,
 * puts, gets and atomics through it fail cleanly - oms_quiet() reports the
 * error, the owner's memory and the reader's buffer are untouched, nothing
 * hangs - on the emulated device as on verbs (where closing disconnects
 * the initiators).  The region itself is not affected: the owner's own
 * descriptor and a new listener's still work, even right behind an op
 * refused through the closed one's.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"

#define FILL 0x5c5c5c5c5c5c5c5cull

FIXTURE(closed)
{
	struct oms_ctx *srv, *cli;
	struct oms_mr *mr;
	struct oms_listener *l;
	struct oms_rmr r;		/* from the listener */
	uint64_t mem[16];
};

FIXTURE_SETUP(closed)
{
	for (int i = 0; i < 16; i++)
		self->mem[i] = FILL;
	self->srv = t_emu_ctx(1);
	self->cli = t_emu_ctx(0);
	ASSERT_NE(NULL, self->srv);
	ASSERT_NE(NULL, self->cli);
	ASSERT_EQ(0, oms_mr_reg(self->srv, self->mem, sizeof(self->mem),
				OMS_ACCESS_ALL, &self->mr));
	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7481", self->mr, &self->l));
	ASSERT_EQ(0, oms_connect(self->cli, "localhost", "7481", 0, &self->r));
}

FIXTURE_TEARDOWN(closed)
{
	oms_ctx_destroy(self->cli);
	oms_ctx_destroy(self->srv);
}

static int untouched(const uint64_t *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i] != FILL)
			return 0;
	return 1;
}

/* A wrong-key error: -EACCES, or -EKEYREJECTED past the drop threshold. */
static int refused(int err)
{
	return err == -EACCES || err == -EKEYREJECTED;
}

TEST_F(closed, put_after_close_fails)
{
	uint64_t v = 7;

	ASSERT_EQ(0, oms_listener_close(self->l));
	ASSERT_EQ(0, oms_put(self->cli, &self->r, 8, &v, 8, OMS_STORE_WEAK));
	EXPECT_TRUE(refused(oms_quiet(self->cli)));
	EXPECT_TRUE(untouched(self->mem, 16));
}

TEST_F(closed, get_after_close_fails)
{
	uint64_t back[2] = { FILL, FILL };

	self->mem[1] = 9;
	ASSERT_EQ(0, oms_listener_close(self->l));
	ASSERT_EQ(0, oms_get(self->cli, back, &self->r, 8, 16,
			     OMS_READ_ACQUIRE));
	EXPECT_TRUE(refused(oms_quiet(self->cli)));
	EXPECT_TRUE(untouched(back, 2));
}

TEST_F(closed, atomic_after_close_fails)
{
	uint64_t old = FILL;

	ASSERT_EQ(0, oms_listener_close(self->l));
	ASSERT_EQ(0, oms_atomic_fadd(self->cli, &self->r, 8, 1, &old));
	EXPECT_TRUE(refused(oms_quiet(self->cli)));
	EXPECT_TRUE(untouched(self->mem, 16));
	EXPECT_EQ(FILL, old);
}

TEST_F(closed, region_still_served_otherwise)
{
	struct oms_listener *l2;
	struct oms_rmr own, r2;
	uint64_t v = 7, w = 8;

	ASSERT_EQ(0, oms_listener_close(self->l));
	ASSERT_EQ(0, oms_put(self->cli, &self->r, 0, &v, 8, OMS_STORE_WEAK));
	EXPECT_TRUE(refused(oms_quiet(self->cli)));
	ASSERT_EQ(0, oms_ctx_resume(self->cli));
	/* the owner's descriptor, handed over out of band */
	ASSERT_EQ(0, oms_mr_remote(self->mr, &own));
	ASSERT_EQ(0, oms_put(self->cli, &own, 8, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(self->cli));
	EXPECT_EQ(7, self->mem[1]);
	/* a new listener's */
	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7481", self->mr, &l2));
	ASSERT_EQ(0, oms_connect(self->cli, "localhost", "7481", 0, &r2));
	ASSERT_EQ(0, oms_put(self->cli, &r2, 16, &w, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(self->cli));
	EXPECT_EQ(8, self->mem[2]);
	/* and the closed one's descriptor stays dead */
	ASSERT_EQ(0, oms_put(self->cli, &self->r, 24, &w, 8, OMS_STORE_WEAK));
	EXPECT_TRUE(refused(oms_quiet(self->cli)));
	EXPECT_EQ(FILL, self->mem[3]);
}

/*
 * A get refused through the closed listener's descriptor does not touch
 * the region's own ops: the revoked descriptor is memory of its own, so
 * a put of the same bytes through the owner's descriptor right behind it
 * is not fenced after the failure (and cancelled with it).
 */
TEST_F(closed, refused_get_leaves_owner_put_alone)
{
	struct oms_rmr own;
	uint64_t back = FILL, v = 7;

	ASSERT_EQ(0, oms_mr_remote(self->mr, &own));
	ASSERT_EQ(0, oms_listener_close(self->l));
	ASSERT_EQ(0, oms_get(self->cli, &back, &self->r, 0, 8,
			     OMS_READ_RELAXED));
	ASSERT_EQ(0, oms_put(self->cli, &own, 0, &v, 8, OMS_STORE_WEAK));
	EXPECT_TRUE(refused(oms_quiet(self->cli)));
	EXPECT_EQ(7, self->mem[0]);
	EXPECT_EQ(FILL, back);
}

TEST_HARNESS_MAIN
