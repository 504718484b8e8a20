// SPDX-License-Identifier: MIT
/*
 * oms_mr_reg refuses ranges no memory can have: one that wraps past the
 * end of the address space (-EINVAL) and one longer than any object may be
 * (-EOVERFLOW: more than PTRDIFF_MAX bytes, SIZE_MAX among them; on the
 * emulated device more than it can name, 2^38 bytes).  Before,
 * such a region was accepted and a peer's put at an offset "in range"
 * crashed the owner's device thread.  A refused call changes nothing: the
 * handle is not written and no region slot is taken.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"

FIXTURE(mr)
{
	struct oms_ctx *owner, *peer;
	uint64_t buf[64];
};

FIXTURE_SETUP(mr)
{
	memset(self->buf, 0, sizeof(self->buf));
	self->owner = t_emu_ctx(1);
	self->peer = t_emu_ctx(0);
	ASSERT_NE(NULL, self->owner);
	ASSERT_NE(NULL, self->peer);
}

FIXTURE_TEARDOWN(mr)
{
	oms_ctx_destroy(self->peer);
	oms_ctx_destroy(self->owner);
}

#define SENTINEL ((struct oms_mr *)(uintptr_t)0x5c5c5c5c)

/* oms_mr_reg(@addr, @len) with a sentinel handle: the error, and whether
 * the handle was left alone. */
static int reg(struct oms_ctx *ctx, uintptr_t addr, size_t len, int *kept)
{
	struct oms_mr *mr = SENTINEL;
	int err = oms_mr_reg(ctx, (void *)addr, len, OMS_ACCESS_ALL, &mr);

	*kept = mr == SENTINEL;
	if (!err)
		oms_mr_dereg(mr);
	return err;
}

TEST_F(mr, range_wrapping_the_address_space_is_refused)
{
	int kept;

	EXPECT_EQ(-EINVAL, reg(self->owner, UINTPTR_MAX - 4095, 8192, &kept));
	EXPECT_TRUE(kept);
	/* ends exactly at the top: the end address is not representable */
	EXPECT_EQ(-EINVAL, reg(self->owner, UINTPTR_MAX - 4095, 4096, &kept));
	EXPECT_TRUE(kept);
}

TEST_F(mr, size_max_is_refused)
{
	int kept;

	EXPECT_EQ(-EOVERFLOW, reg(self->owner, (uintptr_t)self->buf, SIZE_MAX,
				  &kept));
	EXPECT_TRUE(kept);
}

TEST_F(mr, longer_than_any_object_is_refused)
{
	int kept;

	/* starts low enough not to wrap: only the length is wrong */
	EXPECT_EQ(-EOVERFLOW, reg(self->owner, 4096, (size_t)PTRDIFF_MAX + 1,
				  &kept));
	EXPECT_TRUE(kept);
}

TEST_F(mr, longer_than_the_emulated_device_names_is_refused)
{
	int kept;

	/* 2^38 bytes: the device's read engine indexes lines in 32 bits */
	EXPECT_EQ(-EOVERFLOW, reg(self->owner, 4096, (size_t)1 << 39, &kept));
	EXPECT_TRUE(kept);
}

TEST_F(mr, refusals_change_nothing)
{
	struct oms_mr *mr;
	struct oms_rmr before, after;
	uint64_t v = 42;
	int kept;

	/* the slot a registration gets now ... */
	ASSERT_EQ(0, oms_mr_reg(self->owner, self->buf, sizeof(self->buf),
				OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_mr_remote(mr, &before));
	ASSERT_EQ(0, oms_mr_dereg(mr));
	ASSERT_NE(0, reg(self->owner, (uintptr_t)self->buf, SIZE_MAX, &kept));
	ASSERT_NE(0, reg(self->owner, UINTPTR_MAX - 4095, 8192, &kept));
	/* ... is the one it gets after the refusals: none took a slot */
	ASSERT_EQ(0, oms_mr_reg(self->owner, self->buf, sizeof(self->buf),
				OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_mr_remote(mr, &after));
	EXPECT_EQ(before.region, after.region);
	/* and the device still serves it */
	ASSERT_EQ(0, oms_put(self->peer, &after, 8, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(self->peer));
	EXPECT_EQ(42, self->buf[1]);
	ASSERT_EQ(0, oms_mr_dereg(mr));
}

TEST_HARNESS_MAIN
