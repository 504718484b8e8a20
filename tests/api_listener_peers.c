// SPDX-License-Identifier: MIT
/*
 * oms_listener_peers() counts the initiators connected to a listener: each
 * oms_connect() to it adds one, the destruction of the context that
 * connected takes its connections away, and a context that connected to
 * an earlier listener on the same entry takes nothing from the one that
 * serves there now.  A server waits for the count to reach 0 so that it
 * does not cut off an initiator's last completions (examples/msg_verbs.c).
 */
#include <errno.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"

FIXTURE(peers)
{
	struct oms_ctx *srv;
	struct oms_mr *mr;
	struct oms_listener *l;
	uint64_t mem[8];
};

FIXTURE_SETUP(peers)
{
	self->srv = t_emu_ctx(1);
	ASSERT_NE(NULL, self->srv);
	ASSERT_EQ(0, oms_mr_reg(self->srv, self->mem, sizeof(self->mem),
				OMS_ACCESS_ALL, &self->mr));
	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7491", self->mr, &self->l));
}

FIXTURE_TEARDOWN(peers)
{
	oms_ctx_destroy(self->srv);
}

TEST_F(peers, none_before_a_connect)
{
	EXPECT_EQ(0, oms_listener_peers(self->l));
}

TEST_F(peers, each_connect_counts_until_its_context_goes)
{
	struct oms_ctx *a = t_emu_ctx(0), *b = t_emu_ctx(2);
	struct oms_rmr r;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, oms_connect(a, "localhost", "7491", 0, &r));
	EXPECT_EQ(1, oms_listener_peers(self->l));
	ASSERT_EQ(0, oms_connect(b, "127.0.0.1", "7491", 0, &r));
	ASSERT_EQ(0, oms_connect(b, "127.0.0.1", "7491", 0, &r));
	EXPECT_EQ(3, oms_listener_peers(self->l));
	EXPECT_EQ(0, oms_ctx_destroy(b));
	EXPECT_EQ(1, oms_listener_peers(self->l));
	EXPECT_EQ(0, oms_ctx_destroy(a));
	EXPECT_EQ(0, oms_listener_peers(self->l));
}

TEST_F(peers, a_refused_connect_counts_nothing)
{
	struct oms_ctx *a = t_emu_ctx(0);
	struct oms_rmr r;

	ASSERT_NE(NULL, a);
	EXPECT_EQ(-ECONNREFUSED, oms_connect(a, "localhost", "7492", 0, &r));
	EXPECT_EQ(0, oms_listener_peers(self->l));
	oms_ctx_destroy(a);
}

/* A context that connected to a closed listener leaves the listener that
 * now holds the same entry alone when it goes. */
TEST_F(peers, an_old_listeners_peer_leaves_the_new_one_alone)
{
	struct oms_ctx *old = t_emu_ctx(0), *cur = t_emu_ctx(2);
	struct oms_rmr r;

	ASSERT_NE(NULL, old);
	ASSERT_NE(NULL, cur);
	ASSERT_EQ(0, oms_connect(old, "localhost", "7491", 0, &r));
	ASSERT_EQ(0, oms_listener_close(self->l));
	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7491", self->mr, &self->l));
	ASSERT_EQ(0, oms_connect(cur, "localhost", "7491", 0, &r));
	EXPECT_EQ(1, oms_listener_peers(self->l));
	EXPECT_EQ(0, oms_ctx_destroy(old));
	EXPECT_EQ(1, oms_listener_peers(self->l));
	EXPECT_EQ(0, oms_ctx_destroy(cur));
	EXPECT_EQ(0, oms_listener_peers(self->l));
}

/* One context through many listeners on the same entry: each counts
 * only its own connections, and the context's leaving empties the last. */
TEST_F(peers, many_listeners_one_context)
{
	struct oms_ctx *cli = t_emu_ctx(0);
	struct oms_rmr r;

	ASSERT_NE(NULL, cli);
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(0, oms_connect(cli, "localhost", "7491", 0, &r));
		ASSERT_EQ(0, oms_connect(cli, "localhost", "7491", 0, &r));
		ASSERT_EQ(2, oms_listener_peers(self->l));
		ASSERT_EQ(0, oms_listener_close(self->l));
		ASSERT_EQ(0, oms_listen(self->srv, NULL, "7491", self->mr,
					&self->l));
		ASSERT_EQ(0, oms_listener_peers(self->l));
	}
	ASSERT_EQ(0, oms_connect(cli, "localhost", "7491", 0, &r));
	EXPECT_EQ(1, oms_listener_peers(self->l));
	EXPECT_EQ(0, oms_ctx_destroy(cli));
	EXPECT_EQ(0, oms_listener_peers(self->l));
}

TEST(null_is_refused)
{
	EXPECT_EQ(-EINVAL, oms_listener_peers(NULL));
}

TEST_HARNESS_MAIN
