// SPDX-License-Identifier: MIT
/*
 * The default emulated device, through the public headers only: contexts
 * that name no device share it, and it runs with the settings of the
 * first of them.  A later context that asks for other settings (chaos
 * seed, latency model, read ordering, NIC rate, hold) is refused with
 * -EBUSY rather than silently run without them, and the refusal changes
 * nothing: the device keeps its settings and its contexts keep working.
 * A context asking for the same settings, or for none, joins.
 */
#include <errno.h>
#include <stddef.h>

#include "harness.h"
#include "oms.h"

static int make_ctx(uint32_t node, uint32_t mask, uint64_t seed,
		    uint32_t scale, uint32_t flags, struct oms_ctx **c)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	*c = NULL;
	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT | mask;
	a.backend = OMS_BACKEND_EMU;
	a.node = node;
	a.timeout_ms = 60000;	/* a loaded machine: never the verdict */
	a.chaos_seed = seed;
	if (mask & OMS_CTX_ATTR_EMU_LATENCY) {
		a.lat_bus_ns = 200;
		a.lat_rc_ns = 17;
		a.lat_mem_ns = 50;
		a.link_gbps = 100;
		a.time_scale = scale;
	}
	a.flags = flags;
	return oms_ctx_create(&a, c);
}

static uint64_t chaos_of(struct __test_metadata *_metadata,
			 struct oms_ctx *c)
{
	struct oms_caps caps = { .size = sizeof(caps) };

	EXPECT_EQ(0, oms_query_caps(c, &caps));
	return caps.chaos_seed;
}

TEST(a_later_context_asking_other_settings_is_refused)
{
	struct oms_ctx *first, *same, *plain, *other;
	uint64_t mem[4] = { 0 }, v = 0x5eed;
	struct oms_listener *l;
	struct oms_mr *mr;
	struct oms_rmr r;

	ASSERT_EQ(0, make_ctx(1, OMS_CTX_ATTR_EMU_CHAOS, 5, 0, 0, &first));
	EXPECT_EQ(5, chaos_of(_metadata, first));

	/* another chaos seed, a latency model the device does not run, no
	 * seed-002 hold: each refused, nothing made */
	EXPECT_EQ(-EBUSY, make_ctx(0, OMS_CTX_ATTR_EMU_CHAOS, 7, 0, 0,
				   &other));
	EXPECT_EQ(NULL, other);
	EXPECT_EQ(-EBUSY, make_ctx(0, OMS_CTX_ATTR_EMU_LATENCY, 0, 1, 0,
				   &other));
	EXPECT_EQ(NULL, other);
	EXPECT_EQ(-EBUSY, make_ctx(0, OMS_CTX_ATTR_FLAGS, 0, 0,
				   OMS_CTX_F_NO_HOLD, &other));
	EXPECT_EQ(NULL, other);

	/* the same seed, and no device settings at all: they join */
	ASSERT_EQ(0, make_ctx(0, OMS_CTX_ATTR_EMU_CHAOS, 5, 0, 0, &same));
	ASSERT_EQ(0, make_ctx(0, 0, 0, 0, 0, &plain));
	EXPECT_EQ(5, chaos_of(_metadata, same));
	EXPECT_EQ(5, chaos_of(_metadata, plain));

	/* one fabric: the joiners reach the first context's listener */
	ASSERT_EQ(0, oms_mr_reg(first, mem, sizeof(mem), OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_listen(first, NULL, "7486", mr, &l));
	ASSERT_EQ(0, oms_connect(plain, "localhost", "7486", 0, &r));
	ASSERT_EQ(0, oms_put(plain, &r, 8, &v, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(plain));
	EXPECT_EQ(v, mem[1]);
	EXPECT_EQ(5, chaos_of(_metadata, first));

	oms_listener_close(l);
	oms_mr_dereg(mr);
	EXPECT_EQ(0, oms_ctx_destroy(same));
	EXPECT_EQ(0, oms_ctx_destroy(plain));
	EXPECT_EQ(0, oms_ctx_destroy(first));

	/* the last context gone, the device with it: the next one starts
	 * the default device anew, with its own settings */
	ASSERT_EQ(0, make_ctx(0, OMS_CTX_ATTR_EMU_CHAOS, 7, 0, 0, &other));
	EXPECT_EQ(7, chaos_of(_metadata, other));
	EXPECT_EQ(0, oms_ctx_destroy(other));
}

TEST_HARNESS_MAIN
