// SPDX-License-Identifier: MIT
/*
 * Host names on the emulated device resolve as librdmacm resolves them:
 * a listener on 127.0.0.1 answers "localhost" and one on "localhost"
 * answers 127.0.0.1 (addresses are compared, not strings); a listener on
 * no address answers any host; an address it does not hold is refused; a
 * name that resolves to nothing fails as on verbs (-EHOSTUNREACH to
 * connect, -EADDRNOTAVAIL to listen) and changes nothing.  Before, the
 * emulated device compared the strings, so the first two were refused.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "oms.h"

/* RFC 2606 reserves .invalid: it never resolves. */
#define NOWHERE "no-such-host.invalid"

FIXTURE(res)
{
	struct oms_ctx *srv, *cli;
	struct oms_mr *mr;
	uint64_t mem[8];
};

FIXTURE_SETUP(res)
{
	for (int i = 0; i < 8; i++)
		self->mem[i] = 100 + i;
	self->srv = t_emu_ctx(1);
	self->cli = t_emu_ctx(0);
	ASSERT_NE(NULL, self->srv);
	ASSERT_NE(NULL, self->cli);
	ASSERT_EQ(0, oms_mr_reg(self->srv, self->mem, sizeof(self->mem),
				OMS_ACCESS_ALL, &self->mr));
}

FIXTURE_TEARDOWN(res)
{
	oms_ctx_destroy(self->cli);
	oms_ctx_destroy(self->srv);
}

/* The descriptor reaches the listener's region: a word read through it. */
static uint64_t read_word(struct oms_ctx *cli, struct oms_rmr *r, int i)
{
	uint64_t v = 0;

	if (oms_get(cli, &v, r, (uint64_t)i * 8, 8, OMS_READ_ACQUIRE) ||
	    oms_quiet(cli))
		return ~0ull;
	return v;
}

TEST_F(res, listen_numeric_connect_name)
{
	struct oms_listener *l;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_listen(self->srv, "127.0.0.1", "7601", self->mr, &l));
	ASSERT_EQ(0, oms_connect(self->cli, "localhost", "7601", 100, &r));
	EXPECT_EQ(sizeof(self->mem), r.len);
	EXPECT_EQ(103, read_word(self->cli, &r, 3));
	ASSERT_EQ(0, oms_connect(self->cli, "127.0.0.1", "7601", 100, &r));
	/* another address of the loopback net is another host */
	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->cli, "127.0.0.2", "7601",
					     100, &r));
	EXPECT_EQ(0, oms_listener_close(l));
}

TEST_F(res, listen_name_connect_numeric)
{
	struct oms_listener *l;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_listen(self->srv, "localhost", "7602", self->mr, &l));
	ASSERT_EQ(0, oms_connect(self->cli, "127.0.0.1", "7602", 100, &r));
	EXPECT_EQ(105, read_word(self->cli, &r, 5));
	ASSERT_EQ(0, oms_connect(self->cli, "localhost", "7602", 100, &r));
	EXPECT_EQ(0, oms_listener_close(l));
}

/* One address under two names is one address: the second is in use. */
TEST_F(res, same_address_other_name_in_use)
{
	struct oms_listener *l, *l2 = NULL;

	ASSERT_EQ(0, oms_listen(self->srv, "localhost", "7603", self->mr, &l));
	EXPECT_EQ(-EADDRINUSE, oms_listen(self->srv, "127.0.0.1", "7603",
					  self->mr, &l2));
	EXPECT_EQ(NULL, l2);
	/* another address on the same port is free */
	ASSERT_EQ(0, oms_listen(self->srv, "127.0.0.2", "7603", self->mr, &l2));
	EXPECT_EQ(0, oms_listener_close(l2));
	EXPECT_EQ(0, oms_listener_close(l));
}

TEST_F(res, no_address_and_wildcard_answer_any_host)
{
	struct oms_listener *l;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7604", self->mr, &l));
	EXPECT_EQ(0, oms_connect(self->cli, "localhost", "7604", 100, &r));
	EXPECT_EQ(0, oms_connect(self->cli, "127.0.0.2", "7604", 100, &r));
	EXPECT_EQ(0, oms_listener_close(l));
	ASSERT_EQ(0, oms_listen(self->srv, "0.0.0.0", "7604", self->mr, &l));
	EXPECT_EQ(0, oms_connect(self->cli, "localhost", "7604", 100, &r));
	EXPECT_EQ(101, read_word(self->cli, &r, 1));
	EXPECT_EQ(0, oms_listener_close(l));
}

TEST_F(res, unresolvable_host_changes_nothing)
{
	struct oms_listener *l;
	struct oms_rmr r, before;

	ASSERT_EQ(0, oms_listen(self->srv, "127.0.0.1", "7605", self->mr, &l));
	memset(&r, 0x5a, sizeof(r));
	before = r;
	EXPECT_EQ(-EHOSTUNREACH, oms_connect(self->cli, NOWHERE, "7605", 100,
					     &r));
	EXPECT_EQ(0, memcmp(&r, &before, sizeof(r)));
	/* the listener still serves */
	ASSERT_EQ(0, oms_connect(self->cli, "localhost", "7605", 100, &r));
	EXPECT_EQ(100, read_word(self->cli, &r, 0));
	EXPECT_EQ(0, oms_listener_close(l));
}

TEST_F(res, unresolvable_listen_address_changes_nothing)
{
	struct oms_listener *l = NULL;
	struct oms_rmr r;

	EXPECT_EQ(-EADDRNOTAVAIL, oms_listen(self->srv, NOWHERE, "7606",
					     self->mr, &l));
	EXPECT_EQ(NULL, l);
	/* nothing listens, the region may go, the port is free */
	EXPECT_EQ(-ECONNREFUSED, oms_connect(self->cli, "localhost", "7606",
					     100, &r));
	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7606", self->mr, &l));
	EXPECT_EQ(0, oms_listener_close(l));
	EXPECT_EQ(0, oms_mr_dereg(self->mr));
}

TEST_HARNESS_MAIN
