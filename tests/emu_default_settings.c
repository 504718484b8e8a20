// SPDX-License-Identifier: MIT
/*
 * The default emulated device, through the public headers only: contexts
 * that name no device share it, and it runs with the settings of the
 * first of them.  A later context that asks for other settings (chaos
 * seed, latency model, read ordering, NIC rate, hold) is refused with
 * -EBUSY rather than silently run without them, and the refusal changes
 * nothing: the device keeps its settings and its contexts keep working.
 * A context asking for the same settings, or for none, joins; so does one
 * whose latency fields differ while neither side runs the latency model
 * (they act only with it).
 */
#include <errno.h>
#include <stddef.h>

#include "harness.h"
#include "oms.h"

/* An emu context on node @node with the device settings of @mask. */
static struct oms_ctx_attr attr_of(uint32_t node, uint32_t mask)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT | mask;
	a.backend = OMS_BACKEND_EMU;
	a.node = node;
	a.timeout_ms = 60000;	/* a loaded machine: never the verdict */
	/* the documented defaults, for the groups @mask sets */
	a.lat_bus_ns = 200;
	a.lat_rc_ns = 17;
	a.lat_mem_ns = 50;
	a.link_gbps = 100;
	a.read_order = OMS_ORDER_RC_OPT;
	a.rlsq_entries = 256;
	return a;
}

static int make(const struct oms_ctx_attr *a, struct oms_ctx **c)
{
	*c = NULL;
	return oms_ctx_create(a, c);
}

static struct oms_caps caps_of(struct __test_metadata *_metadata,
			       struct oms_ctx *c)
{
	struct oms_caps caps = { .size = sizeof(caps) };

	EXPECT_EQ(0, oms_query_caps(c, &caps));
	return caps;
}

/* Refused, and nothing made. */
#define REFUSED(a) do {							\
		struct oms_ctx *_c;					\
		EXPECT_EQ(-EBUSY, make(a, &_c));			\
		EXPECT_EQ(NULL, _c);					\
	} while (0)

TEST(a_later_context_asking_other_settings_is_refused)
{
	struct oms_ctx_attr a = attr_of(1, OMS_CTX_ATTR_EMU_CHAOS);
	struct oms_ctx *first, *same, *plain, *other;
	uint64_t mem[4] = { 0 }, v = 0x5eed;
	struct oms_listener *l;
	struct oms_mr *mr;
	struct oms_rmr r;

	a.chaos_seed = 5;
	ASSERT_EQ(0, make(&a, &first));
	EXPECT_EQ(5, caps_of(_metadata, first).chaos_seed);

	/* another chaos seed */
	a = attr_of(0, OMS_CTX_ATTR_EMU_CHAOS);
	a.chaos_seed = 7;
	REFUSED(&a);
	/* a latency model the device does not run */
	a = attr_of(0, OMS_CTX_ATTR_EMU_LATENCY);
	a.time_scale = 1;
	REFUSED(&a);
	/* with it, a NIC rate */
	a = attr_of(0, OMS_CTX_ATTR_EMU_LATENCY | OMS_CTX_ATTR_EMU_NIC_RATE);
	a.time_scale = 1;
	a.lat_req_ns = 29;
	REFUSED(&a);
	/* reads ordered at the NIC, or a smaller RLSQ */
	a = attr_of(0, OMS_CTX_ATTR_READ_ORDER);
	a.read_order = OMS_ORDER_NIC;
	REFUSED(&a);
	a = attr_of(0, OMS_CTX_ATTR_READ_ORDER);
	a.rlsq_entries = 64;
	REFUSED(&a);
	/* no seed-002 hold, or a global one */
	a = attr_of(0, OMS_CTX_ATTR_FLAGS);
	a.flags = OMS_CTX_F_NO_HOLD;
	REFUSED(&a);
	a.flags = OMS_CTX_F_HOLD_GLOBAL;
	REFUSED(&a);

	/* the same seed, and no device settings at all: they join */
	a = attr_of(0, OMS_CTX_ATTR_EMU_CHAOS);
	a.chaos_seed = 5;
	ASSERT_EQ(0, make(&a, &same));
	a = attr_of(0, 0);
	ASSERT_EQ(0, make(&a, &plain));
	EXPECT_EQ(5, caps_of(_metadata, same).chaos_seed);
	EXPECT_EQ(5, caps_of(_metadata, plain).chaos_seed);
	/* the device runs no latency model: other latency fields without
	 * one act on nothing, and join */
	a = attr_of(0, OMS_CTX_ATTR_EMU_LATENCY);
	a.lat_bus_ns = 900;
	ASSERT_EQ(0, make(&a, &other));
	EXPECT_EQ(0, oms_ctx_destroy(other));

	/* one fabric: a joiner reaches the first context's listener */
	ASSERT_EQ(0, oms_mr_reg(first, mem, sizeof(mem), OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, oms_listen(first, NULL, "7486", mr, &l));
	ASSERT_EQ(0, oms_connect(plain, "localhost", "7486", 0, &r));
	ASSERT_EQ(0, oms_put(plain, &r, 8, &v, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(plain));
	EXPECT_EQ(v, mem[1]);
	EXPECT_EQ(5, caps_of(_metadata, first).chaos_seed);

	oms_listener_close(l);
	oms_mr_dereg(mr);
	EXPECT_EQ(0, oms_ctx_destroy(same));
	EXPECT_EQ(0, oms_ctx_destroy(plain));
	EXPECT_EQ(0, oms_ctx_destroy(first));

	/* the last context gone, the device with it: the next one starts
	 * the default device anew, with its own settings */
	a = attr_of(0, OMS_CTX_ATTR_EMU_CHAOS);
	a.chaos_seed = 7;
	ASSERT_EQ(0, make(&a, &other));
	EXPECT_EQ(7, caps_of(_metadata, other).chaos_seed);
	EXPECT_EQ(0, oms_ctx_destroy(other));
}

/* A device running the latency model: the same model joins, another
 * link rate or NIC rate is refused. */
TEST(latency_model_settings_must_match)
{
	struct oms_ctx_attr a = attr_of(1, OMS_CTX_ATTR_EMU_LATENCY |
					   OMS_CTX_ATTR_EMU_NIC_RATE);
	struct oms_ctx *first, *same;

	a.time_scale = 2;
	a.lat_req_ns = 29;
	ASSERT_EQ(0, make(&a, &first));
	EXPECT_NE(0, caps_of(_metadata, first).flags & OMS_CAP_LATENCY_MODEL);
	a.node = 0;
	ASSERT_EQ(0, make(&a, &same));
	a.link_gbps = 25;
	REFUSED(&a);
	a.link_gbps = 100;
	a.lat_req_ns = 0;
	REFUSED(&a);
	EXPECT_EQ(0, oms_ctx_destroy(same));
	EXPECT_EQ(0, oms_ctx_destroy(first));
}

TEST_HARNESS_MAIN
