// SPDX-License-Identifier: MIT
/*
 * Choosing the verbs backend: AUTO takes verbs exactly when
 * /sys/class/infiniband lists a device, OMS_BACKEND=verbs (or the attr)
 * forces it and gives -ENODEV without a device, an unknown OMS_BACKEND is
 * -EINVAL, and what verbs cannot do alone is refused with -EOPNOTSUPP:
 * held class-2 responses to a region with no agent (DEST_SEQ is a
 * context the verbs backend makes: a connection to a listener without an
 * agent is what it refuses, tests/verbs/seq_rxe.c).
 * Where a device exists the verbs context reports it in the capabilities.
 * backend_why in the capabilities names the rule that chose.
 */
#include <errno.h>
#include <glob.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oms.h"

static int have_device(void)
{
	glob_t g;
	int n = glob("/sys/class/infiniband/*", 0, NULL, &g) ? 0 :
		(int)g.gl_pathc;

	if (n)
		globfree(&g);
	return n > 0;
}

static int create(uint32_t backend, uint32_t flags, struct oms_ctx **ctx)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_FLAGS;
	a.backend = backend;
	a.flags = flags;
	return oms_ctx_create(&a, ctx);
}

TEST(auto_follows_the_device)
{
	struct oms_caps c = { .size = sizeof(c) };
	struct oms_ctx *ctx = NULL;

	unsetenv("OMS_BACKEND");
	ASSERT_EQ(0, oms_ctx_create(NULL, &ctx));
	ASSERT_EQ(0, oms_query_caps(ctx, &c));
	EXPECT_EQ(have_device() ? OMS_BACKEND_VERBS : OMS_BACKEND_EMU,
		  c.backend);
	if (have_device()) {
		EXPECT_EQ(0, strncmp(c.backend_why, "RDMA device ", 12));
	} else {
		EXPECT_STREQ("no RDMA device in /sys/class/infiniband",
			     c.backend_why);
	}
	EXPECT_EQ(0, oms_ctx_destroy(ctx));
}

/* A caller that knows only the older, shorter struct gets no why and no
 * write past its size. */
TEST(why_only_within_size)
{
	struct oms_caps c;
	struct oms_ctx *ctx = NULL;
	size_t old = offsetof(struct oms_caps, backend_why);

	ASSERT_EQ(0, create(OMS_BACKEND_EMU, 0, &ctx));
	memset(&c, 0x5a, sizeof(c));
	c.size = (uint32_t)old;
	ASSERT_EQ(0, oms_query_caps(ctx, &c));
	EXPECT_EQ(old, c.size);
	for (size_t i = old; i < sizeof(c); i++)
		ASSERT_EQ(0x5a, ((unsigned char *)&c)[i]);
	c.size = sizeof(c);
	ASSERT_EQ(0, oms_query_caps(ctx, &c));
	EXPECT_STREQ("asked for in oms_ctx_attr.backend", c.backend_why);
	EXPECT_EQ(0, oms_ctx_destroy(ctx));
}

TEST(env_forces_and_refuses)
{
	struct oms_ctx *ctx = (struct oms_ctx *)0x1;
	struct oms_caps c = { .size = sizeof(c) };

	setenv("OMS_BACKEND", "emu", 1);
	ASSERT_EQ(0, oms_ctx_create(NULL, &ctx));
	ASSERT_EQ(0, oms_query_caps(ctx, &c));
	EXPECT_EQ(OMS_BACKEND_EMU, c.backend);
	EXPECT_STREQ("OMS_BACKEND=emu", c.backend_why);
	EXPECT_EQ(0, oms_ctx_destroy(ctx));
	setenv("OMS_BACKEND", "nonsense", 1);
	ctx = (struct oms_ctx *)0x1;
	EXPECT_EQ(-EINVAL, oms_ctx_create(NULL, &ctx));
	EXPECT_EQ((struct oms_ctx *)0x1, ctx);
	setenv("OMS_BACKEND", "verbs", 1);
	if (have_device()) {
		ASSERT_EQ(0, oms_ctx_create(NULL, &ctx));
		EXPECT_EQ(0, oms_ctx_destroy(ctx));
	} else {
		EXPECT_EQ(-ENODEV, oms_ctx_create(NULL, &ctx));
		EXPECT_EQ((struct oms_ctx *)0x1, ctx);
	}
	unsetenv("OMS_BACKEND");
}

TEST(verbs_attr)
{
	struct oms_ctx *ctx = NULL;
	struct oms_caps c = { .size = sizeof(c) };
	uint64_t buf[8] = { 0 };
	struct oms_mr *mr;
	struct oms_rmr r;

	if (!have_device()) {
		EXPECT_EQ(-ENODEV, create(OMS_BACKEND_VERBS, 0, &ctx));
		EXPECT_EQ(-ENODEV, create(OMS_BACKEND_VERBS,
					  OMS_CTX_F_DEST_SEQ, &ctx));
		SKIP(return, "no RDMA device: the rest needs one");
	}
	/* DEST_SEQ: each connection asks its listener's agent for the
	 * reorder buffer (tests/verbs/seq_rxe.c): the context is made */
	ASSERT_EQ(0, create(OMS_BACKEND_VERBS, OMS_CTX_F_DEST_SEQ, &ctx));
	EXPECT_EQ(0, oms_ctx_destroy(ctx));
	ASSERT_EQ(0, create(OMS_BACKEND_VERBS, 0, &ctx));
	ASSERT_EQ(0, oms_query_caps(ctx, &c));
	EXPECT_EQ(OMS_BACKEND_VERBS, c.backend);
	EXPECT_STREQ("verbs", c.backend_name);
	EXPECT_STREQ("source", c.dest_ordering);
	EXPECT_NE(0, c.device[0]);
	EXPECT_GE(c.numa_node, -1);
	EXPECT_TRUE(c.flags & OMS_CAP_ACQUIRE_AT_SOURCE);
	EXPECT_TRUE(c.flags & OMS_CAP_ACQUIRE_READ);
	EXPECT_TRUE(c.flags & OMS_CAP_STRONG_STORE);
	EXPECT_FALSE(c.flags & OMS_CAP_RESP_HOLD);
	EXPECT_FALSE(c.flags & OMS_CAP_DEST_ORDER_HW);
	ASSERT_EQ(0, oms_mr_reg(ctx, buf, sizeof(buf), OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_mr_remote(mr, &r));
	EXPECT_EQ(-EOPNOTSUPP, oms_get(ctx, buf, &r, 0, 8,
				       OMS_READ_RESP_ORDERED));
	/* a region of our own is no connection: the op fails, quiet says */
	EXPECT_EQ(0, oms_put(ctx, &r, 0, buf + 1, 8, OMS_STORE_WEAK));
	EXPECT_EQ(-ENOTCONN, oms_quiet(ctx));
	EXPECT_EQ(0, oms_ctx_destroy(ctx));
}

TEST(emu_keeps_the_hold)
{
	struct oms_ctx *ctx = NULL;
	uint64_t buf[8] = { 7 }, out = 0;
	struct oms_mr *mr;
	struct oms_rmr r;

	ASSERT_EQ(0, create(OMS_BACKEND_EMU, 0, &ctx));
	ASSERT_EQ(0, oms_mr_reg(ctx, buf, sizeof(buf), OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_mr_remote(mr, &r));
	ASSERT_EQ(0, oms_get(ctx, &out, &r, 0, 8, OMS_READ_RESP_ORDERED));
	ASSERT_EQ(0, oms_quiet(ctx));
	EXPECT_EQ(7, out);
	EXPECT_EQ(0, oms_ctx_destroy(ctx));
}

TEST_HARNESS_MAIN
