// SPDX-License-Identifier: MIT
/*
 * oms_listen / oms_connect on the emulated backend: an initiator that
 * connects gets the listener's region descriptor and can use it; a port
 * nobody listens on is refused; a second listener on a port in use is
 * refused; a listened region cannot be deregistered; closing the listener
 * stops new connections.  Bad arguments get -EINVAL and change nothing.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "oms.h"

FIXTURE(conn)
{
	struct oms_ctx *srv, *cli;
	struct oms_mr *mr;
	struct oms_listener *l;
	uint64_t mem[32];
};

FIXTURE_SETUP(conn)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE;
	a.backend = OMS_BACKEND_EMU;
	a.node = 1;
	memset(self->mem, 0, sizeof(self->mem));
	ASSERT_EQ(0, oms_ctx_create(&a, &self->srv));
	a.node = 0;
	ASSERT_EQ(0, oms_ctx_create(&a, &self->cli));
	ASSERT_EQ(0, oms_mr_reg(self->srv, self->mem, sizeof(self->mem),
				OMS_ACCESS_ALL, &self->mr));
	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7471", self->mr, &self->l));
}

FIXTURE_TEARDOWN(conn)
{
	oms_ctx_destroy(self->cli);
	oms_ctx_destroy(self->srv);
}

TEST_F(conn, connect_put_get)
{
	struct oms_rmr r, own;
	uint64_t v = 0x1122334455667788ull, back = 0, old = 0;

	ASSERT_EQ(0, oms_connect(self->cli, "localhost", "7471", 0, &r));
	ASSERT_EQ(0, oms_mr_remote(self->mr, &own));
	EXPECT_EQ(1, r.dest);
	/* the listener's own window on the region: closing it revokes it */
	EXPECT_NE(own.key, r.key);
	EXPECT_EQ(own.access, r.access);
	EXPECT_EQ(sizeof(self->mem), r.len);
	ASSERT_EQ(0, oms_put(self->cli, &r, 8, &v, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_atomic_fadd(self->cli, &r, 16, 5, &old));
	ASSERT_EQ(0, oms_quiet(self->cli));
	ASSERT_EQ(0, oms_get(self->cli, &back, &r, 8, 8, OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_quiet(self->cli));
	EXPECT_EQ(v, back);
	EXPECT_EQ(v, self->mem[1]);
	EXPECT_EQ(5, self->mem[2]);
	EXPECT_EQ(0, old);
}

TEST_F(conn, refused_and_in_use)
{
	struct oms_listener *l2 = NULL;
	struct oms_rmr r;

	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->cli, "localhost", "7472",
					     100, &r));
	EXPECT_EQ(-EADDRINUSE, oms_listen(self->srv, NULL, "7471", self->mr,
					  &l2));
	EXPECT_EQ(NULL, l2);
	EXPECT_EQ(-EBUSY, oms_mr_dereg(self->mr));
	ASSERT_EQ(0, oms_listener_close(self->l));
	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->cli, "localhost", "7471",
					     100, &r));
	/* Now the region may go, and the port is free again. */
	ASSERT_EQ(0, oms_listen(self->srv, "10.0.0.1", "7471", self->mr, &l2));
	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->cli, "10.0.0.2", "7471",
					     100, &r));
	ASSERT_EQ(0, oms_connect(self->cli, "10.0.0.1", "7471", 100, &r));
	ASSERT_EQ(0, oms_listener_close(l2));
	EXPECT_EQ(0, oms_mr_dereg(self->mr));
}

TEST_F(conn, bad_args_change_nothing)
{
	char longname[300];
	struct oms_listener *l2 = NULL;
	struct oms_rmr r, zero;

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	memset(&r, 0x5a, sizeof(r));
	zero = r;
	EXPECT_EQ(-EINVAL, oms_connect(NULL, "h", "1", 0, &r));
	EXPECT_EQ(-EINVAL, oms_connect(self->cli, NULL, "1", 0, &r));
	EXPECT_EQ(-EINVAL, oms_connect(self->cli, "", "1", 0, &r));
	EXPECT_EQ(-EINVAL, oms_connect(self->cli, "h", NULL, 0, &r));
	EXPECT_EQ(-EINVAL, oms_connect(self->cli, "h", "1", 0, NULL));
	EXPECT_EQ(-EINVAL, oms_connect(self->cli, longname, "1", 0, &r));
	EXPECT_EQ(-EINVAL, oms_connect(self->cli, "h", "1", 700000, &r));
	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->cli, "localhost", "1", 10,
					     &r));
	EXPECT_EQ(0, memcmp(&r, &zero, sizeof(r)));
	EXPECT_EQ(-EINVAL, oms_listen(NULL, NULL, "1", self->mr, &l2));
	EXPECT_EQ(-EINVAL, oms_listen(self->srv, NULL, NULL, self->mr, &l2));
	EXPECT_EQ(-EINVAL, oms_listen(self->srv, NULL, "", self->mr, &l2));
	EXPECT_EQ(-EINVAL, oms_listen(self->srv, NULL, "1", NULL, &l2));
	EXPECT_EQ(-EINVAL, oms_listen(self->srv, NULL, "1", self->mr, NULL));
	/* a region of another context */
	EXPECT_EQ(-EINVAL, oms_listen(self->cli, NULL, "1", self->mr, &l2));
	EXPECT_EQ(NULL, l2);
	EXPECT_EQ(-EINVAL, oms_listener_close(NULL));
	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->cli, "localhost", "1", 10,
					     &r));
}

TEST_HARNESS_MAIN
