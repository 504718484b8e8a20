// SPDX-License-Identifier: MIT
/*
 * The destination agent against a requester that does not play by the
 * rules (docs/dest-agent.md, "Failures"), over Soft-RoCE in the guests: a
 * test of internals (it speaks the agent's wire format from
 * lib/verbs/common/wire.h and lib/agent/agent_desc.h with raw librdmacm and
 * libibverbs, not through liboms's initiator).  Against rxe_server's
 * listener with the agent (OMS_RXE_AGENT_PORT):
 *
 *   - a descriptor with a bad check code, an unknown op, a length past the
 *     limit: answered with tag 0 and -EPROTO, nothing landed;
 *   - a wrong key: -EACCES; a range past the region: -ERANGE; nothing
 *     landed, and a forged put with a wrong key wrote nothing;
 *   - a good get after all of these is still served (its bytes land,
 *     answered by their own WRITE_WITH_IMM carrying its tag);
 *   - a doorbell that counts more descriptors than the ring holds: the
 *     agent closes the connection (the requester's QP fails in bounded
 *     time), and a new connection is served; also when the doorbell
 *     comes before the agent's CM has the requester's RTU.
 *
 * Environment: OMS_RXE_SERVER, OMS_RXE_AGENT_PORT; without them every
 * test skips (this program is meant for the guest).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "raw_peer.h"

static int connect_agent(struct peer *p, int hold_rtu)
{
	return peer_connect(p, getenv("OMS_RXE_AGENT_PORT"), hold_rtu,
			    CQ_SLOTS);
}

FIXTURE(forge)
{
	struct peer p;
};

FIXTURE_SETUP(forge)
{
	uint64_t end = now_ms() + 90000;
	int err;

	if (!getenv("OMS_RXE_SERVER") || !getenv("OMS_RXE_AGENT_PORT"))
		SKIP(return, "OMS_RXE_SERVER/OMS_RXE_AGENT_PORT not set "
		     "(guest test)");
	/* the server may still be starting */
	while ((err = connect_agent(&self->p, 0)) && now_ms() < end) {
		peer_close(&self->p);
		usleep(300000);
	}
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(forge)
{
	peer_close(&self->p);
}

/* Malformed, wrong key, out of range: each its error, nothing landed;
 * then a good get is served. */
TEST_F(forge, forged_descriptors_refused_then_served)
{
	struct peer *p = &self->p;
	uint8_t d[6][OMS_AD_LEN];
	static const struct { uint32_t tag; int status; } want[] = {
		{ 0, -EPROTO },		/* bad check */
		{ 0, -EPROTO },		/* unknown op */
		{ 0, -EPROTO },		/* length past the limit */
		{ 0x5001, -EACCES },	/* wrong key */
		{ 0x5002, -ERANGE },	/* past the region */
	};
	uint32_t tag;
	int status;

	memset(landing(p), 0xee, 64);
	get_desc(d[0], p, p->reg.rkey, RX_SCRATCH, 8, 0x5000);
	d[0][60] ^= 1;
	get_desc(d[1], p, p->reg.rkey, RX_SCRATCH, 8, 0x5000);
	d[1][0] = 0x7f;
	get_desc(d[2], p, p->reg.rkey, RX_SCRATCH, 8, 0x5000);
	d[2][12] = 0xff, d[2][13] = 0xff, d[2][14] = 0xff, d[2][15] = 0x7f;
	get_desc(d[3], p, p->reg.rkey ^ 0x80, RX_SCRATCH, 8, 0x5001);
	get_desc(d[4], p, p->reg.rkey, RX_REGION - 8, 64, 0x5002);
	ASSERT_EQ(0, send_raw(p, (const uint8_t (*)[OMS_AD_LEN])d, 5, 5));
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, next_answer(p, &tag, &status));
		TH_LOG("answer %d: tag %#x status %d", i, tag, status);
		EXPECT_EQ(want[i].tag, tag);
		EXPECT_EQ(want[i].status, status);
	}
	EXPECT_EQ(0xee, landing(p)[0]);	/* nothing landed */
	get_desc(d[5], p, p->reg.rkey, RX_RES_READY, 8, 0x5003);
	ASSERT_EQ(0, send_raw(p, (const uint8_t (*)[OMS_AD_LEN])&d[5], 1, 1));
	ASSERT_EQ(0, next_answer(p, &tag, &status));
	EXPECT_EQ(0x5003, tag);
	EXPECT_EQ(0, status);
	EXPECT_EQ(1, *(uint64_t *)landing(p));	/* the observer runs */
}

/*
 * The next CM event within 30 s: its type, or -ETIMEDOUT.  A hang bound,
 * not a deadline: the agent's disconnect is a DREQ over Soft-RoCE, and
 * one that is dropped (by the loaded guests' link, or by a CM not yet
 * established, below) is sent again only after the CM's response timeout,
 * about 4 s.  (Two CI runs that saw no event here, with bounds of 10 and
 * 30 s, were the agent's DREQ never sent: see the next test.)
 */
static int next_cm_event(struct peer *p)
{
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, 30000) != 1 || rdma_get_cm_event(p->ch, &ev))
		return -ETIMEDOUT;
	type = ev->event;
	rdma_ack_cm_event(ev);
	return type;
}

/* A doorbell past the ring: the agent closes the connection, and says
 * so (the requester's CM sees the disconnect); nothing is answered. */
TEST_F(forge, doorbell_past_the_ring_closes)
{
	struct peer *p = &self->p, again;
	uint8_t d[1][OMS_AD_LEN];
	uint64_t t0 = now_ms();
	uint32_t tag;
	int status = 0, ev;

	get_desc(d[0], p, p->reg.rkey, RX_RES_READY, 8, 0x6000);
	ASSERT_EQ(0, send_raw(p, (const uint8_t (*)[OMS_AD_LEN])d, 1,
			      p->reg.agent.ring_slots + 1));
	ev = next_cm_event(p);
	TH_LOG("after the forged doorbell: CM event %d (%s) in %llu ms", ev,
	       ev >= 0 ? rdma_event_str(ev) : "none",
	       (unsigned long long)(now_ms() - t0));
	EXPECT_EQ(RDMA_CM_EVENT_DISCONNECTED, ev);
	EXPECT_NE(0, next_answer(p, &tag, &status));	/* nothing answered */
	/* a new requester is served */
	ASSERT_EQ(0, connect_agent(&again, 0));
	get_desc(d[0], &again, again.reg.rkey, RX_RES_READY, 8, 0x6001);
	ASSERT_EQ(0, send_raw(&again, (const uint8_t (*)[OMS_AD_LEN])d, 1, 1));
	EXPECT_EQ(0, next_answer(&again, &tag, &status));
	EXPECT_EQ(0x6001, tag);
	EXPECT_EQ(0, status);
	peer_close(&again);
}

/* The next CM event other than ESTABLISHED within the bound, as above. */
static int next_cm_change(struct peer *p)
{
	int ev;

	while ((ev = next_cm_event(p)) == RDMA_CM_EVENT_ESTABLISHED)
		;
	return ev;
}

/*
 * The same doorbell, sent before the agent's CM has the requester's RTU:
 * on a loaded link the RTU may come after the first data, or be lost and
 * come again only when the REP is resent; here it is held back until the
 * agent has had the doorbell.  The agent has seen the connection's
 * traffic, so it still says goodbye: its CM takes the connection for
 * established and sends the DREQ.  (Without that, the CM drops the
 * disconnect unsent, and the RTU that follows leaves the requester
 * connected to a QP in error for ever.)  Our CM ignores a DREQ until the
 * RTU is sent, so the one seen is the agent's CM's resend, after its
 * response timeout (about 4 s): within the bound.
 */
TEST_F(forge, doorbell_before_the_rtu_closes)
{
	struct peer held;
	uint8_t d[1][OMS_AD_LEN];
	uint64_t t0;
	struct ibv_wc wc;
	int n = 0, ev;

	ASSERT_EQ(0, connect_agent(&held, 1));
	get_desc(d[0], &held, held.reg.rkey, RX_RES_READY, 8, 0x7000);
	ASSERT_EQ(0, send_raw(&held, (const uint8_t (*)[OMS_AD_LEN])d, 1,
			      held.reg.agent.ring_slots + 1));
	/* the doorbell was acknowledged: it is in the agent's queue */
	for (t0 = now_ms(); !n && now_ms() - t0 < 10000; usleep(1000))
		n = ibv_poll_cq(held.cq, 1, &wc);
	ASSERT_EQ(1, n);
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	sleep(1);			/* the agent's thread takes it */
	t0 = now_ms();
	ASSERT_EQ(0, rdma_establish(held.id));	/* the RTU, at last */
	ev = next_cm_change(&held);
	TH_LOG("doorbell before the RTU: CM event %d (%s) %llu ms after the "
	       "RTU", ev, ev >= 0 ? rdma_event_str(ev) : "none",
	       (unsigned long long)(now_ms() - t0));
	EXPECT_EQ(RDMA_CM_EVENT_DISCONNECTED, ev);
	peer_close(&held);
}

TEST_HARNESS_MAIN
