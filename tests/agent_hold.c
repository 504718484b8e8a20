// SPDX-License-Identifier: MIT
/*
 * The verbs agent's class-2 hold fed by this process's puts
 * (lib/verbs/common/peers.c, lib/verbs/listener/agent_hold.c) on the host:
 * the connections' counters that the verbs data path bumps, the registry,
 * the agent's mirror of them and the core's hold (seed 002, L23-L25), with no
 * QP.  The guests run the same over Soft-RoCE (tests/verbs/litmus_rxe.c,
 * litmus_L23_*_agent).
 *
 * Each held answer is shown next to its control: a class-1 get of the
 * same bytes, answered at once while the same puts are on the wire.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes lib/
 * headers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "harness.h"
#include "oms.h"
#include "agent/agent.h"
#include "verbs/listener/listener_int.h"

#define LKEY	0x77u
#define RKEY	0x11u
#define LBASE	0x10000ull

static uint8_t region[4096] __attribute__((aligned(64)));

struct model {
	struct va_hold *hold;
	int global;
	uint8_t land[4096];
	uint32_t landings;
};

static int model_land(void *arg, uint32_t conn, uint64_t laddr,
		      uint32_t lrkey, const void *src, uint32_t len)
{
	struct model *m = arg;

	(void)conn;
	if (lrkey != LKEY || laddr < LBASE || laddr - LBASE + len > 4096)
		return -EACCES;
	memcpy(m->land + (laddr - LBASE), src, len);
	m->landings++;
	return 0;
}

static int model_sync(void *arg, uint32_t peer)
{
	struct model *m = arg;

	return va_hold_sync(m->hold, m->global ? -1 : (int)peer);
}

static uint32_t peer_of(const char *ip)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return (uint32_t)vb_peer_id((struct sockaddr *)&a);
}

FIXTURE(hold) {
	struct model m;
	struct oms_agent *ag;
	uint32_t conn;
	uint32_t b, c;		/* the reader's node, a third one */
	struct vb_pw to_b, to_b2, to_c;
};

static void setup_agent(struct __test_metadata *_metadata,
			struct _test_data_hold *self, uint32_t flags)
{
	struct oms_agent_attr a = { .flags = flags };
	struct oms_agent_ops ops = { .land = model_land, .sync = model_sync,
				     .arg = &self->m };
	struct oms_agent_conn_attr ca = { .nstreams = 1, .window = 64 };

	memset(&self->m, 0, sizeof(self->m));
	self->m.global = !!(flags & OMS_AGENT_F_HOLD_GLOBAL);
	self->b = peer_of("10.9.0.2");
	self->c = peer_of("10.9.0.3");
	ASSERT_EQ(0, oms_agent_create(&a, &ops, &self->ag));
	ASSERT_EQ(0, oms_agent_region_add(self->ag, region, sizeof(region),
					  RKEY, OMS_ACCESS_ALL));
	ASSERT_EQ(0, va_hold_create(self->ag, &self->m.hold));
	ca.peer = self->b;
	ASSERT_EQ(0, oms_agent_conn_open(self->ag, &ca, &self->conn));
	vb_pw_add(&self->to_b, self->b);
	vb_pw_add(&self->to_b2, self->b);
	vb_pw_add(&self->to_c, self->c);
}

FIXTURE_SETUP(hold)
{
	memset(&self->to_b, 0, 3 * sizeof(struct vb_pw));
	self->ag = NULL;
}

FIXTURE_TEARDOWN(hold)
{
	vb_pw_del(&self->to_b);
	vb_pw_del(&self->to_b2);
	vb_pw_del(&self->to_c);
	va_hold_destroy(self->m.hold);
	oms_agent_destroy(self->ag);
}

/* The data path's side: a put handed to the QP, a put completed. */
static void put_sent(struct vb_pw *pw, uint64_t n)
{
	__atomic_fetch_add(&pw->posted, n, __ATOMIC_RELEASE);
}

static void put_done(struct vb_pw *pw, uint64_t n)
{
	__atomic_fetch_add(&pw->done, n, __ATOMIC_RELEASE);
}

/* A get of the flag word; its answer's status, or 1 while none came. */
static int get_flag(struct _test_data_hold *self, uint8_t flags,
		    uint32_t tag)
{
	uint8_t b[OMS_AD_LEN];
	struct oms_ad_desc d = {
		.op = OMS_AD_GET, .flags = flags, .key = RKEY, .len = 8,
		.off = 64, .lrkey = LKEY, .laddr = LBASE + 8 * (tag & 7),
		.tag = tag,
	};

	if (oms_ad_encode(b, &d, OMS_AD_FMT_CRC32C) ||
	    oms_agent_submit(self->ag, self->conn, b))
		return -999;
	return 1;
}

/* Answers so far: how many, the last one's status in *@st. */
static int answers(struct _test_data_hold *self, int *st)
{
	struct oms_agent_cpl c[8];
	int n, total = 0;

	va_hold_sync(self->m.hold, -1);
	while ((n = oms_agent_poll(self->ag, c, 8)) > 0) {
		total += n;
		*st = c[n - 1].status;
	}
	return total;
}

/* L23: a put to the reader's node on the wire holds a class-2 answer
 * until it completes; a class-1 answer leaves at once (control). */
TEST_F(hold, litmus_L23_class2_held_until_the_put_completes)
{
	int st = 1;

	setup_agent(_metadata, self, 0);
	put_sent(&self->to_b, 1);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_ACQUIRE, 4097));
	ASSERT_EQ(1, answers(self, &st));	/* control: class 1 */
	EXPECT_EQ(0, st);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4098));
	EXPECT_EQ(0, answers(self, &st));
	EXPECT_EQ(1u, oms_agent_held(self->ag));
	EXPECT_EQ(1u, self->m.landings);	/* the class-1 answer only */
	put_done(&self->to_b, 1);
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(0, st);
	EXPECT_EQ(2u, self->m.landings);
	EXPECT_EQ(0u, oms_agent_held(self->ag));
}

/* L24: per destination, a put to a third node holds nothing; with the
 * global scope it does. */
TEST_F(hold, litmus_L24_scope_per_destination_and_global)
{
	int st = 1;

	setup_agent(_metadata, self, 0);
	put_sent(&self->to_c, 1);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4097));
	EXPECT_EQ(1, answers(self, &st));
	vb_pw_del(&self->to_b);
	vb_pw_del(&self->to_b2);
	vb_pw_del(&self->to_c);
	va_hold_destroy(self->m.hold);
	oms_agent_destroy(self->ag);
	memset(&self->to_b, 0, 3 * sizeof(struct vb_pw));
	setup_agent(_metadata, self, OMS_AGENT_F_HOLD_GLOBAL);
	put_sent(&self->to_c, 1);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4097));
	EXPECT_EQ(0, answers(self, &st));
	put_done(&self->to_c, 1);
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(0, st);
}

/* L25: puts on two connections to the reader, completing in any order
 * between them: the answer waits for the last; puts sent after the get
 * read do not hold it. */
TEST_F(hold, litmus_L25_counting_over_two_connections)
{
	int st = 1;

	setup_agent(_metadata, self, 0);
	put_sent(&self->to_b, 4);
	put_sent(&self->to_b2, 3);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4097));
	put_sent(&self->to_b, 5);		/* after: does not count */
	put_done(&self->to_b2, 3);
	EXPECT_EQ(0, answers(self, &st));
	put_done(&self->to_b, 3);
	EXPECT_EQ(0, answers(self, &st));
	put_done(&self->to_b, 1);
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(0, st);
}

/* A connection that closes with puts on the wire (its QP is gone: they
 * will never complete) lets the answers they held go. */
TEST_F(hold, a_closed_connection_releases_what_it_held)
{
	int st = 1;

	setup_agent(_metadata, self, 0);
	put_sent(&self->to_b, 2);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4097));
	EXPECT_EQ(0, answers(self, &st));
	vb_pw_del(&self->to_b);
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(0, st);
}

/* Class-2 answers leave in the order they were read, one held behind a
 * put before a later one that would not be. */
TEST_F(hold, class2_answers_leave_in_order)
{
	int st = 1;

	setup_agent(_metadata, self, 0);
	put_sent(&self->to_b, 1);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4097));
	put_done(&self->to_b, 1);		/* not yet synced */
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4098));
	EXPECT_EQ(2, answers(self, &st));
	EXPECT_EQ(2u, self->m.landings);
}

/* More puts on the wire than the hold's window can name: the class-2 get
 * fails with -ENOBUFS rather than answer early, and nothing lands. */
TEST_F(hold, window_full_fails_the_get_not_the_order)
{
	int st = 1;

	setup_agent(_metadata, self, 0);
	put_sent(&self->to_b, 5000);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4097));
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(-ENOBUFS, st);
	EXPECT_EQ(0u, self->m.landings);
	put_done(&self->to_b, 5000);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4098));
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(0, st);
}

/* A busy writer: puts sent and completed between two looks never reach
 * the hold, however many (a window's worth of them must not fail a get),
 * and a full window for another node fails nothing per destination. */
TEST_F(hold, completed_puts_and_other_nodes_take_no_window)
{
	int st = 1;

	setup_agent(_metadata, self, 0);
	put_sent(&self->to_b, 20000);
	put_done(&self->to_b, 20000);
	put_sent(&self->to_c, 5000);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4097));
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(0, st);
	put_sent(&self->to_b, 1);
	ASSERT_EQ(1, get_flag(self, OMS_AD_F_RESP_ORDERED, 4098));
	EXPECT_EQ(0, answers(self, &st));
	put_done(&self->to_b, 1);
	EXPECT_EQ(1, answers(self, &st));
	EXPECT_EQ(0, st);
	EXPECT_EQ(2u, self->m.landings);
}

/* Nodes by address: one id per address, IPv4 and its v4-mapped IPv6
 * form alike. */
TEST(peer_ids_by_address)
{
	struct sockaddr_in6 m = { .sin6_family = AF_INET6 };
	struct sockaddr_in v4 = { .sin_family = AF_INET };
	struct sockaddr bad = { .sa_family = AF_UNIX };

	inet_pton(AF_INET, "10.9.0.7", &v4.sin_addr);
	inet_pton(AF_INET6, "::ffff:10.9.0.7", &m.sin6_addr);
	EXPECT_EQ(vb_peer_id((struct sockaddr *)&v4),
		  vb_peer_id((struct sockaddr *)&m));
	EXPECT_NE(peer_of("10.9.0.7"), peer_of("10.9.0.8"));
	EXPECT_EQ(VB_MAX_PEERS - 1, vb_peer_id(&bad));
	EXPECT_EQ(VB_MAX_PEERS - 1, vb_peer_id(NULL));
}

TEST_HARNESS_MAIN
