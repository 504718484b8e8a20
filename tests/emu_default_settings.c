// SPDX-License-Identifier: MIT
/*
 * The default emulated device, through the public headers only: contexts
 * on emu that name no device share it, and it runs with every default of
 * struct oms_emu_attr, whichever context starts it.  No context configures
 * it (liboms.so.1 took chaos, latency, read ordering, NIC rate and hold
 * from the first context): the retired attribute bits and flag are
 * refused, and the refusal changes nothing, the device and its contexts
 * go on.  Settings are a device object's (oms_emu_create()).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

static struct oms_ctx_attr attr_on(uint32_t node, struct oms_emu *emu)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_EMU;
	a.node = node;
	a.timeout_ms = 60000;	/* a loaded machine: never the verdict */
	if (emu) {
		a.comp_mask |= OMS_CTX_ATTR_EMU;
		a.emu = emu;
	}
	return a;
}

static struct oms_caps caps_of(struct __test_metadata *_metadata,
			       struct oms_ctx *c)
{
	struct oms_caps caps = { .size = sizeof(caps) };

	EXPECT_EQ(0, oms_query_caps(c, &caps));
	return caps;
}

/* A put from @ini lands in @tgt's region and a get reads it back: the
 * two contexts are on one fabric. */
static void same_fabric(struct __test_metadata *_metadata,
			struct oms_ctx *ini, struct oms_ctx *tgt, uint64_t v)
{
	static uint64_t mem[8] __attribute__((aligned(64)));
	uint64_t back = 0;
	struct oms_mr *mr;
	struct oms_rmr r;

	memset(mem, 0, sizeof(mem));
	ASSERT_EQ(0, oms_mr_reg(tgt, mem, sizeof(mem), OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_mr_remote(mr, &r));
	EXPECT_EQ(0, oms_put(ini, &r, 8, &v, 8, OMS_STORE_STRONG));
	EXPECT_EQ(0, oms_quiet(ini));
	EXPECT_EQ(v, __atomic_load_n(&mem[1], __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, oms_get(ini, &back, &r, 8, 8, OMS_READ_ACQUIRE));
	EXPECT_EQ(0, oms_quiet(ini));
	EXPECT_EQ(v, back);
	EXPECT_EQ(0, oms_mr_dereg(mr));
}

/* Two contexts naming no device share one; it runs with the defaults of
 * a device made with oms_emu_create(NULL). */
TEST(contexts_share_a_device_with_the_defaults)
{
	struct oms_ctx_attr a0 = attr_on(0, NULL), a1 = attr_on(1, NULL);
	struct oms_ctx *c0, *c1, *own;
	struct oms_caps d, o;
	struct oms_emu *emu;
	struct oms_ctx_attr ao;

	ASSERT_EQ(0, oms_ctx_create(&a0, &c0));
	ASSERT_EQ(0, oms_ctx_create(&a1, &c1));
	same_fabric(_metadata, c0, c1, 0x5151);
	d = caps_of(_metadata, c0);
	ASSERT_EQ(0, oms_emu_create(NULL, &emu));
	ao = attr_on(0, emu);
	ASSERT_EQ(0, oms_ctx_create(&ao, &own));
	o = caps_of(_metadata, own);
	EXPECT_STREQ("emu", d.backend_name);
	EXPECT_EQ(o.flags, d.flags);
	EXPECT_EQ(0, d.flags & OMS_CAP_CHAOS);
	EXPECT_EQ(0, d.flags & OMS_CAP_LATENCY_MODEL);
	EXPECT_EQ(o.read_order, d.read_order);
	EXPECT_EQ(OMS_ORDER_RC_OPT, d.read_order);
	EXPECT_EQ(0, d.chaos_seed);
	EXPECT_EQ(o.max_op_len, d.max_op_len);
	EXPECT_EQ(0, oms_ctx_destroy(own));
	EXPECT_EQ(0, oms_emu_destroy(emu));
	EXPECT_EQ(0, oms_ctx_destroy(c1));
	EXPECT_EQ(0, oms_ctx_destroy(c0));
}

/*
 * What a context of liboms.so.1 asked the default device for is refused
 * (-EINVAL, nothing made), whether or not the device runs: the retired
 * attribute bits, the NO_HOLD flag, and a hold scope on emu.  The
 * running device and its contexts are untouched.
 */
TEST(retired_settings_are_refused_and_change_nothing)
{
	struct oms_ctx_attr a0 = attr_on(0, NULL), a1 = attr_on(1, NULL), b;
	static const uint32_t bits[] = { 1u << 4, 1u << 5, 1u << 6, 1u << 9 };
	struct oms_ctx *c0, *c1, *c;

	for (int running = 0; running < 2; running++) {
		if (running) {
			ASSERT_EQ(0, oms_ctx_create(&a0, &c0));
			ASSERT_EQ(0, oms_ctx_create(&a1, &c1));
		}
		for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
			b = attr_on(2, NULL);
			b.comp_mask |= bits[i];
			c = NULL;
			EXPECT_EQ(-EINVAL, oms_ctx_create(&b, &c));
			EXPECT_EQ(NULL, c);
		}
		b = attr_on(2, NULL);
		b.comp_mask |= OMS_CTX_ATTR_FLAGS;
		b.flags = 1u << 2;		/* was NO_HOLD */
		c = NULL;
		EXPECT_EQ(-EINVAL, oms_ctx_create(&b, &c));
		EXPECT_EQ(NULL, c);
		b.flags = OMS_CTX_F_HOLD_GLOBAL;
		EXPECT_EQ(-EINVAL, oms_ctx_create(&b, &c));
		EXPECT_EQ(NULL, c);
	}
	same_fabric(_metadata, c0, c1, 0x7272);
	EXPECT_EQ(0, caps_of(_metadata, c0).chaos_seed);
	EXPECT_EQ(0, oms_ctx_destroy(c1));
	EXPECT_EQ(0, oms_ctx_destroy(c0));
}

TEST_HARNESS_MAIN
