// SPDX-License-Identifier: MIT
/*
 * OMS_CTX_F_DOORBELL_BATCH: the puts a context issues wait for the
 * doorbell until OMS_DOORBELL_BATCH of them wait or a call drives
 * progress; without the flag every put rings it.  oms_stats counts the
 * doorbells and the completion entries the device gave back.  Nothing
 * that waits may be left behind an unrung doorbell: oms_quiet() and the
 * fences ring it, and every put arrives.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"

#define WORDS 64

FIXTURE(bell)
{
	struct oms_ctx *srv, *cli;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t mem[WORDS];
	uint64_t src[WORDS];
};

static struct oms_ctx *cli_ctx(uint32_t flags)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT | OMS_CTX_ATTR_FLAGS;
	a.backend = OMS_BACKEND_EMU;
	a.node = 0;
	a.timeout_ms = 60000;
	a.flags = flags;
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

FIXTURE_SETUP(bell)
{
	memset(self->mem, 0, sizeof(self->mem));
	for (int i = 0; i < WORDS; i++)
		self->src[i] = 0x5000 + (uint64_t)i;
	self->srv = t_emu_ctx(1);
	ASSERT_NE(NULL, self->srv);
	ASSERT_EQ(0, oms_mr_reg(self->srv, self->mem, sizeof(self->mem),
				OMS_ACCESS_ALL, &self->mr));
	ASSERT_EQ(0, oms_mr_remote(self->mr, &self->r));
	self->cli = NULL;
}

FIXTURE_TEARDOWN(bell)
{
	if (self->cli)
		oms_ctx_destroy(self->cli);
	oms_ctx_destroy(self->srv);
}

static uint64_t doorbells(struct oms_ctx *ctx)
{
	struct oms_stats st = { .size = sizeof(st) };

	return oms_ctx_stats(ctx, &st) ? UINT64_MAX : st.doorbells;
}

static int put_words(FIXTURE_DATA(bell) *self, int from, int n)
{
	for (int i = from; i < from + n; i++) {
		int err = oms_put(self->cli, &self->r, (uint64_t)i * 8,
				  &self->src[i], 8, OMS_STORE_WEAK);

		if (err)
			return err;
	}
	return 0;
}

static int arrived(FIXTURE_DATA(bell) *self, int n)
{
	uint64_t got[WORDS];

	if (oms_mr_read(self->mr, 0, got, sizeof(got)))
		return 0;
	for (int i = 0; i < n; i++)
		if (got[i] != self->src[i])
			return 0;
	return 1;
}

TEST_F(bell, without_the_flag_each_put_rings)
{
	uint64_t d0;

	self->cli = cli_ctx(0);
	ASSERT_NE(NULL, self->cli);
	d0 = doorbells(self->cli);
	ASSERT_EQ(0, put_words(self, 0, 5));
	EXPECT_EQ(5, doorbells(self->cli) - d0);
	ASSERT_EQ(0, oms_quiet(self->cli));
	EXPECT_TRUE(arrived(self, 5));
}

TEST_F(bell, with_the_flag_puts_wait_for_progress)
{
	uint64_t d0;

	self->cli = cli_ctx(OMS_CTX_F_DOORBELL_BATCH);
	ASSERT_NE(NULL, self->cli);
	d0 = doorbells(self->cli);
	ASSERT_EQ(0, put_words(self, 0, 5));
	EXPECT_EQ(0, doorbells(self->cli) - d0);
	EXPECT_EQ(5, oms_progress(self->cli));	/* rings: all 5 go */
	EXPECT_EQ(1, doorbells(self->cli) - d0);
	ASSERT_EQ(0, oms_quiet(self->cli));
	EXPECT_TRUE(arrived(self, 5));
}

TEST_F(bell, with_the_flag_a_full_batch_rings_by_itself)
{
	uint64_t d0;

	self->cli = cli_ctx(OMS_CTX_F_DOORBELL_BATCH);
	ASSERT_NE(NULL, self->cli);
	d0 = doorbells(self->cli);
	ASSERT_EQ(0, put_words(self, 0, 2 * OMS_DOORBELL_BATCH + 3));
	EXPECT_EQ(2, doorbells(self->cli) - d0);
	ASSERT_EQ(0, oms_quiet(self->cli));	/* rings the last 3 */
	EXPECT_EQ(3, doorbells(self->cli) - d0);
	EXPECT_TRUE(arrived(self, 2 * OMS_DOORBELL_BATCH + 3));
}

/* A strong put behind unrung weak ones, then a fence: nothing waits on a
 * doorbell nobody rings, and the data is there with the flag. */
TEST_F(bell, with_the_flag_fences_and_strong_puts_complete)
{
	self->cli = cli_ctx(OMS_CTX_F_DOORBELL_BATCH);
	ASSERT_NE(NULL, self->cli);
	ASSERT_EQ(0, put_words(self, 0, 7));
	ASSERT_EQ(0, oms_put(self->cli, &self->r, 7 * 8, &self->src[7], 8,
			     OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_fence(self->cli, self->r.dest));
	ASSERT_EQ(0, oms_fence_local(self->cli));
	EXPECT_TRUE(arrived(self, 8));
	ASSERT_EQ(0, oms_quiet(self->cli));
}

/* A fence orders nothing on a baseline context, and still rings. */
TEST_F(bell, with_the_flag_a_fence_rings_even_unordered)
{
	uint64_t d0;

	self->cli = cli_ctx(OMS_CTX_F_DOORBELL_BATCH | OMS_CTX_F_NO_ORDERING);
	ASSERT_NE(NULL, self->cli);
	d0 = doorbells(self->cli);
	ASSERT_EQ(0, put_words(self, 0, 3));
	EXPECT_EQ(0, doorbells(self->cli) - d0);
	ASSERT_EQ(0, oms_fence(self->cli, self->r.dest));
	EXPECT_EQ(1, doorbells(self->cli) - d0);
	ASSERT_EQ(0, oms_quiet(self->cli));
	EXPECT_TRUE(arrived(self, 3));
}

TEST_F(bell, completions_are_counted)
{
	struct oms_stats st = { .size = sizeof(st) };

	self->cli = cli_ctx(0);
	ASSERT_NE(NULL, self->cli);
	ASSERT_EQ(0, put_words(self, 0, 9));
	ASSERT_EQ(0, oms_quiet(self->cli));
	ASSERT_EQ(0, oms_ctx_stats(self->cli, &st));
	/* the emulated device returns one entry per operation */
	EXPECT_EQ(9, st.dev_completions);
	EXPECT_EQ(9, st.completed);
}

/* A caller built against 2.0's struct oms_stats gets what it knew. */
TEST(old_stats_size_gets_no_new_fields)
{
	struct {
		struct oms_stats st;
		uint64_t guard[2];
	} s;
	struct oms_ctx *ctx = t_emu_ctx(0);

	ASSERT_NE(NULL, ctx);
	memset(&s, 0xa5, sizeof(s));
	s.st.size = offsetof(struct oms_stats, doorbells);
	ASSERT_EQ(0, oms_ctx_stats(ctx, &s.st));
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, s.st.doorbells);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, s.st.dev_completions);
	oms_ctx_destroy(ctx);
}

TEST_HARNESS_MAIN
