// SPDX-License-Identifier: MIT
/*
 * The requester's side of the destination agent (lib/agent/client.c)
 * against the agent's core (lib/agent/agent.c), joined by a
 * model transport that does what RDMA does: descriptors written into the
 * agent's request ring, payloads into its staging slots, a doorbell by
 * count, answers written into the requester's completion ring.  The
 * transport checks what the credits promise - no ring slot written before
 * the agent read it, no answer written over one the requester has not
 * read, no staging slot reused before its put was performed - while the
 * tests run programs through it: the window, a number posted late (L36),
 * a refused member and the resume after it (L37), forged answers, and a
 * long random program on rings of 16.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "agent/agent.h"
#include "agent/client.h"

#define RKEY		0x11u
#define LKEY		0x77u
#define LBASE		0x10000ull
#define REGION		(64u << 10)
#define MAX_RING	64u
#define MAX_STAGE	16u
#define STAGE_LEN	256u
#define MAX_COOKIES	200000u

struct link {
	struct oms_agent *ag;
	struct oms_agent_client cl;
	uint32_t conn;
	uint32_t ring_slots, cq_slots, stage_slots;
	uint8_t ring[MAX_RING][OMS_AD_LEN];
	uint8_t stage[MAX_STAGE * STAGE_LEN];
	uint8_t cq[MAX_RING][OMS_AD_ANSWER_LEN];
	uint8_t land[8192];
	uint64_t agent_pos;	/* ring positions the agent has read */
	uint64_t rung;		/* positions the doorbells covered */
	uint64_t cq_written, cq_read;
	int stage_busy[MAX_STAGE];
	uint8_t answered[MAX_COOKIES];
	int status[MAX_COOKIES];
	uint64_t nanswers;
	int broken;		/* a promise of the credits did not hold */
};

static uint8_t region[REGION] __attribute__((aligned(64)));

static int land_cb(void *arg, uint32_t conn, uint64_t laddr, uint32_t lrkey,
		   const void *src, uint32_t len)
{
	struct link *l = arg;

	(void)conn;
	if (lrkey != LKEY || laddr < LBASE || laddr - LBASE > sizeof(l->land) ||
	    len > sizeof(l->land) - (laddr - LBASE))
		return -EACCES;
	memcpy(l->land + (laddr - LBASE), src, len);
	return 0;
}

static int link_open(struct link *l, uint32_t ring, uint32_t cq,
		     uint32_t stage, uint16_t window)
{
	struct oms_agent_ops ops = { .land = land_cb, .arg = l };
	struct oms_agent_client_cfg cc = {
		.ring_slots = ring, .cq_slots = cq, .stage_slots = stage,
		.nstreams = 2, .window = window,
	};
	struct oms_agent_conn_attr ca = {
		.nstreams = 2, .window = window, .peer = 1,
		.stage_slots = stage, .stage_len = STAGE_LEN,
		.stage = l->stage,
	};

	memset(l, 0, sizeof(*l));
	memset(region, 0, sizeof(region));
	l->ring_slots = ring;
	l->cq_slots = cq;
	l->stage_slots = stage;
	if (oms_agent_create(NULL, &ops, &l->ag))
		return -1;
	if (oms_agent_region_add(l->ag, region, sizeof(region), RKEY,
				 OMS_ACCESS_ALL) ||
	    oms_agent_conn_open(l->ag, &ca, &l->conn) ||
	    oms_agent_client_init(&l->cl, &cc))
		return -1;
	return 0;
}

static void link_close(struct link *l)
{
	oms_agent_client_destroy(&l->cl);
	oms_agent_destroy(l->ag);
}

/* The agent's answers, written into the requester's completion ring. */
static void deliver(struct link *l)
{
	struct oms_agent_cpl c[16];
	int n;

	while ((n = oms_agent_poll(l->ag, c, 16)) > 0)
		for (int i = 0; i < n; i++) {
			struct oms_ad_answer a = {
				.tag = c[i].tag, .status = c[i].status,
				.old = c[i].old,
			};

			/* never over an answer the requester has not read */
			if (l->cq_written - l->cq_read >= l->cq_slots)
				l->broken = 1;
			oms_ad_answer_encode(l->cq[l->cq_written % l->cq_slots],
					     &a);
			l->cq_written++;
		}
}

/* The requester reads its completion ring. */
static void reap(struct link *l)
{
	while (l->cq_read < l->cq_written) {
		uint64_t cookie, old;
		int status;

		if (oms_agent_client_answer(&l->cl,
					    l->cq[l->cq_read % l->cq_slots],
					    &cookie, &status, &old) ||
		    cookie >= MAX_COOKIES || l->answered[cookie]) {
			l->broken = 1;
			return;
		}
		l->cq_read++;
		for (uint32_t i = 0; i < l->stage_slots; i++)
			if (l->stage_busy[i] == (int)cookie + 1)
				l->stage_busy[i] = 0;
		l->answered[cookie] = 1;
		l->status[cookie] = status;
		l->nanswers++;
	}
}

/* The agent reads what the doorbells covered, in ring order. */
static void agent_reads(struct link *l)
{
	while (l->agent_pos < l->rung) {
		int r = oms_agent_submit(l->ag, l->conn,
					 l->ring[l->agent_pos % l->ring_slots]);

		if (r == -EAGAIN) {
			deliver(l);
			reap(l);
			continue;
		}
		if (r) {
			l->broken = 1;
			return;
		}
		l->agent_pos++;
	}
}

static void doorbell(struct link *l)
{
	l->rung += oms_agent_client_ring(&l->cl);
	agent_reads(l);
	deliver(l);
	reap(l);
}

/* What a request carries besides its credits. */
struct op {
	int put;
	uint64_t off, v;
	uint32_t land, key;
	uint64_t cookie;
	struct oms_agent_req q;
};

/* Take a request's credits (and number, unless @stream is UINT16_MAX). */
static int take(struct link *l, struct op *o, int put, uint16_t stream,
		uint64_t off, uint64_t v, uint32_t land, uint32_t key,
		uint64_t cookie)
{
	*o = (struct op){ .put = put, .off = off, .v = v, .land = land,
			  .key = key, .cookie = cookie };
	return oms_agent_client_take(&l->cl, put, stream, cookie, &o->q);
}

/* Post a taken request: descriptor into its ring slot, payload into its
 * staging slot, checking what the credits promise. */
static void post(struct link *l, struct op *o)
{
	struct oms_ad_desc d = {
		.op = o->put ? OMS_AD_PUT : OMS_AD_GET, .key = o->key,
		.len = 8, .off = o->off,
	};
	struct oms_agent_req *q = &o->q;

	if (oms_agent_client_post(&l->cl, q)) {
		l->broken = 1;
		return;
	}
	/* the agent read this ring slot's last descriptor */
	if (q->pos >= l->ring_slots && l->agent_pos < q->pos - l->ring_slots + 1)
		l->broken = 1;
	if (q->stream != UINT16_MAX) {
		d.flags = OMS_AD_F_SEQ;
		d.stream = q->stream;
		d.seq = q->seq;
	}
	if (q->resume) {
		d = (struct oms_ad_desc){
			.op = OMS_AD_NOP, .flags = OMS_AD_F_SEQ | OMS_AD_F_RESUME,
			.stream = q->stream, .seq = q->seq,
		};
	} else if (o->put) {
		if (q->stage_slot >= l->stage_slots ||
		    l->stage_busy[q->stage_slot])
			l->broken = 1;
		else
			l->stage_busy[q->stage_slot] = (int)o->cookie + 1;
		d.stage = q->stage_slot;
		memcpy(l->stage + (size_t)q->stage_slot * STAGE_LEN, &o->v, 8);
	} else {
		d.lrkey = LKEY;
		d.laddr = LBASE + o->land;
	}
	d.tag = q->tag;
	if (oms_ad_encode(l->ring[q->ring_slot], &d, OMS_AD_FMT_CRC32C))
		l->broken = 1;
}

/* take() and post() at once. */
static int send_op(struct link *l, int put, uint16_t stream, uint64_t off,
		   uint64_t v, uint32_t land, uint32_t key, uint64_t cookie)
{
	struct op o;
	int r = take(l, &o, put, stream, off, v, land, key, cookie);

	if (!r)
		post(l, &o);
	return r;
}

static uint64_t word(const uint8_t *b, uint64_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

TEST(window_credit_and_answers)
{
	static struct link l;
	struct op o[6];

	ASSERT_EQ(0, link_open(&l, 16, 16, 4, 4));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, take(&l, &o[i], 1, 0, 8 * i, 100 + i, 0, RKEY, i));
	/* a window of numbers unanswered: no fifth on stream 0 */
	ASSERT_EQ(-EAGAIN, take(&l, &o[4], 0, 0, 0, 0, 0, RKEY, 4));
	/* staging is full (4 slots): a put on the other stream waits too,
	 * a get there does not */
	ASSERT_EQ(-EAGAIN, take(&l, &o[4], 1, 1, 64, 1, 0, RKEY, 4));
	ASSERT_EQ(0, take(&l, &o[4], 0, 1, 64, 0, 0, RKEY, 4));
	ASSERT_EQ(0, o[4].q.seq);
	for (int i = 0; i < 5; i++)
		post(&l, &o[i]);
	/* posted twice, or never taken: refused */
	ASSERT_EQ(-EINVAL, oms_agent_client_post(&l.cl, &o[0].q));
	o[5].q = (struct oms_agent_req){ .tag = (1u << 12) | 9 };
	ASSERT_EQ(-EINVAL, oms_agent_client_post(&l.cl, &o[5].q));
	ASSERT_EQ(5u, oms_agent_client_outstanding(&l.cl));
	doorbell(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(5, l.nanswers);
	ASSERT_EQ(0u, oms_agent_client_outstanding(&l.cl));
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, l.status[i]);
		ASSERT_EQ(100u + i, word(region, 8 * i));
	}
	ASSERT_EQ(0, take(&l, &o[0], 0, 0, 0, 0, 0, RKEY, 5));
	ASSERT_EQ(4, o[0].q.seq);
	link_close(&l);
}

/* L36: a number taken first and posted last is still performed first,
 * and the requests posted after it cannot starve it of credits. */
TEST(L36_number_posted_late_performed_in_order)
{
	static struct link l;
	struct op f, g[3];

	ASSERT_EQ(0, link_open(&l, 16, 16, 4, 16));
	ASSERT_EQ(0, take(&l, &f, 1, 0, 0, 1, 0, RKEY, 0));	/* F, held */
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, take(&l, &g[i], 1, 0, 64 + 8 * i, 1, 0, RKEY,
				  1 + i));
		post(&l, &g[i]);
	}
	/* staging is full now, but F has its slot already */
	ASSERT_EQ(-EAGAIN, take(&l, &g[0], 1, 1, 0, 0, 0, RKEY, 9));
	doorbell(&l);
	ASSERT_EQ(0, word(region, 64));		/* G waits for F's number */
	ASSERT_EQ(0, l.nanswers);
	post(&l, &f);
	doorbell(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(4, l.nanswers);
	ASSERT_EQ(1, word(region, 0));
	ASSERT_EQ(1, word(region, 64));
	link_close(&l);
}

/*
 * A number reserved ahead of its operation (the verbs backend takes every
 * number up to the one posted) gets its cookie when it is posted; the
 * stream's lowest unanswered number moves only when every number below
 * it is answered (what a flush of the connection waits for).
 */
TEST(reserved_number_gets_its_cookie_low_moves_in_order)
{
	static struct link l;
	struct op f, g;

	ASSERT_EQ(0, link_open(&l, 16, 16, 4, 16));
	ASSERT_EQ(0, take(&l, &f, 1, 0, 0, 7, 0, RKEY, UINT64_MAX));
	ASSERT_EQ(0, take(&l, &g, 1, 0, 8, 8, 0, RKEY, 2));
	ASSERT_EQ(0, oms_agent_client_low(&l.cl, 0));
	post(&l, &g);
	doorbell(&l);
	ASSERT_EQ(0, l.nanswers);		/* g waits for f's number */
	ASSERT_EQ(0, oms_agent_client_low(&l.cl, 0));
	ASSERT_EQ(0, oms_agent_client_cookie(&l.cl, &f.q, 1));
	post(&l, &f);
	/* posted: its cookie is fixed */
	ASSERT_EQ(-EINVAL, oms_agent_client_cookie(&l.cl, &f.q, 5));
	doorbell(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(2, l.nanswers);
	ASSERT_EQ(1, l.answered[1]);		/* the cookie given late */
	ASSERT_EQ(2, oms_agent_client_low(&l.cl, 0));
	ASSERT_EQ(0, oms_agent_client_low(&l.cl, 9));	/* no such stream */
	ASSERT_EQ(7, word(region, 0));
	link_close(&l);
}

/* L37: a refused member stops the stream; the resume goes in the ring,
 * behind requests of the old run still in flight, and the new run flows. */
TEST(L37_refused_member_then_resume_in_the_ring)
{
	static struct link l;
	struct op o[5];

	ASSERT_EQ(0, link_open(&l, 16, 16, 4, 16));
	ASSERT_EQ(0, take(&l, &o[0], 1, 0, 0, 5, 0, 0xbad, 0));	/* refused */
	ASSERT_EQ(0, take(&l, &o[1], 1, 0, 8, 6, 0, RKEY, 1));
	ASSERT_EQ(0, take(&l, &o[2], 1, 0, 16, 7, 0, RKEY, 2));
	post(&l, &o[0]);
	post(&l, &o[1]);
	/* o[2] is taken and not posted: no resume yet */
	ASSERT_EQ(-EBUSY, oms_agent_client_resume(&l.cl, 0, 3, &o[3].q));
	post(&l, &o[2]);
	/* nothing rung yet: the old run is all in flight */
	ASSERT_EQ(0, oms_agent_client_resume(&l.cl, 0, 3, &o[3].q));
	ASSERT_EQ(1, o[3].q.resume);
	ASSERT_EQ(3, o[3].q.seq);		/* the new run starts at 3 */
	post(&l, &o[3]);
	ASSERT_EQ(0, take(&l, &o[4], 1, 0, 24, 8, 0, RKEY, 4));
	ASSERT_EQ(3, o[4].q.seq);
	post(&l, &o[4]);
	doorbell(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(5, l.nanswers);
	ASSERT_EQ(-EACCES, l.status[0]);
	ASSERT_EQ(-ECANCELED, l.status[1]);
	ASSERT_EQ(-ECANCELED, l.status[2]);
	ASSERT_EQ(0, l.status[3]);		/* the resume */
	ASSERT_EQ(0, l.status[4]);		/* the new run */
	ASSERT_EQ(0, word(region, 8));
	ASSERT_EQ(0, word(region, 16));
	ASSERT_EQ(8, word(region, 24));
	ASSERT_EQ(0u, oms_agent_client_outstanding(&l.cl));
	link_close(&l);
}

/* An answer of the old run that comes after the resume (a class-2 get the
 * hold kept) returns its credits and leaves the new run's window alone. */
TEST(old_run_answer_after_resume)
{
	static struct link l;
	struct op g, r, o[16];
	uint32_t id;

	ASSERT_EQ(0, link_open(&l, 16, 16, 4, 16));
	ASSERT_EQ(0, oms_agent_posted(l.ag, 1, &id));
	ASSERT_EQ(0, take(&l, &g, 0, 0, 0, 0, 0, RKEY, 0));
	post(&l, &g);
	/* a class-2 get: the hold keeps its answer */
	l.ring[g.q.ring_slot][1] = OMS_AD_F_SEQ | OMS_AD_F_RESP_ORDERED;
	{
		struct oms_ad_desc d = {
			.op = OMS_AD_GET, .flags = OMS_AD_F_SEQ |
						   OMS_AD_F_RESP_ORDERED,
			.stream = 0, .seq = g.q.seq, .key = RKEY, .len = 8,
			.lrkey = LKEY, .laddr = LBASE, .tag = g.q.tag,
		};

		ASSERT_EQ(0, oms_ad_encode(l.ring[g.q.ring_slot], &d,
					   OMS_AD_FMT_CRC32C));
	}
	doorbell(&l);
	ASSERT_EQ(0, l.nanswers);
	ASSERT_EQ(0, oms_agent_client_resume(&l.cl, 0, 1, &r.q));
	post(&l, &r);
	doorbell(&l);
	ASSERT_EQ(1, l.nanswers);		/* the resume */
	/* the new run has its whole window, the old get notwithstanding */
	for (int i = 0; i < 14; i++) {
		ASSERT_EQ(0, take(&l, &o[i], 0, 0, 0, 0, 0, RKEY, 2 + i))
			TH_LOG("take %d", i);
	}
	/* the table (16) has the get, the 14 and one more */
	ASSERT_EQ(0, take(&l, &o[14], 0, 1, 0, 0, 0, RKEY, 16));
	ASSERT_EQ(-EAGAIN, take(&l, &o[15], 0, 1, 0, 0, 0, RKEY, 17));
	ASSERT_EQ(0, oms_agent_posted_ack(l.ag, 1, id));
	deliver(&l);
	reap(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(1, l.answered[0]);
	ASSERT_EQ(0, l.status[0]);
	ASSERT_EQ(0, take(&l, &o[15], 0, 1, 0, 0, 0, RKEY, 17));
	for (int i = 0; i < 16; i++)
		post(&l, &o[i]);
	doorbell(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(18, l.nanswers);
	ASSERT_EQ(0u, oms_agent_client_outstanding(&l.cl));
	link_close(&l);
}

TEST(untake_torn_answer_and_no_staging)
{
	static struct link l;
	struct oms_agent_client cl;
	struct oms_agent_client_cfg c = {
		.ring_slots = 16, .cq_slots = 16, .stage_slots = 0,
		.nstreams = 1, .window = 4,
	};
	struct oms_ad_answer a = { .tag = 0, .status = -EPROTO };
	uint8_t rec[OMS_AD_ANSWER_LEN];
	uint64_t cookie, old;
	int status;
	struct op o[2];

	/* no staging given: a put is refused outright, not -EAGAIN forever */
	ASSERT_EQ(0, oms_agent_client_init(&cl, &c));
	ASSERT_EQ(-EINVAL, oms_agent_client_take(&cl, 1, 0, 0, &o[0].q));
	oms_agent_client_destroy(&cl);

	ASSERT_EQ(0, link_open(&l, 16, 16, 1, 4));
	/* an unnumbered request not sent: given back, staging too */
	ASSERT_EQ(0, take(&l, &o[0], 1, UINT16_MAX, 0, 1, 0, RKEY, 0));
	ASSERT_EQ(-EAGAIN, take(&l, &o[1], 1, UINT16_MAX, 0, 1, 0, RKEY, 1));
	ASSERT_EQ(0, oms_agent_client_untake(&l.cl, &o[0].q));
	ASSERT_EQ(-EINVAL, oms_agent_client_untake(&l.cl, &o[0].q));
	ASSERT_EQ(0u, oms_agent_client_outstanding(&l.cl));
	ASSERT_EQ(0, take(&l, &o[1], 1, UINT16_MAX, 0, 1, 0, RKEY, 1));
	/* a numbered one cannot be: its number is the stream's */
	ASSERT_EQ(0, take(&l, &o[0], 0, 0, 0, 0, 0, RKEY, 2));
	ASSERT_EQ(-EINVAL, oms_agent_client_untake(&l.cl, &o[0].q));
	/* tag 0: the agent could not decode a descriptor of ours */
	oms_ad_answer_encode(rec, &a);
	ASSERT_EQ(-EBADMSG, oms_agent_client_answer(&l.cl, rec, &cookie,
						    &status, &old));
	ASSERT_EQ(1u, l.cl.s.torn);
	link_close(&l);
}

TEST(forged_answers_refused_nothing_changes)
{
	static struct link l;
	uint8_t rec[OMS_AD_ANSWER_LEN];
	struct oms_ad_answer a = { 0 };
	uint64_t cookie = 77, old = 77;
	int status = 77;

	ASSERT_EQ(0, link_open(&l, 16, 16, 4, 16));
	ASSERT_EQ(0, send_op(&l, 0, 0, 0, 0, 0, RKEY, 5));
	/* an index never used, a generation that is not the entry's, a
	 * status that is not an errno, the same tag unposted */
	for (int k = 1; k < 4; k++) {
		a.tag = k == 1 ? (1u << 12) | 4000 :
			k == 2 ? (7u << 12) | 0 : (1u << 12) | 0;
		a.status = 0;
		oms_ad_answer_encode(rec, &a);
		if (k == 3) {
			rec[4] = 5;
			rec[5] = rec[6] = rec[7] = 0;
		}
		ASSERT_EQ(-EPROTO, oms_agent_client_answer(&l.cl, rec, &cookie,
							   &status, &old))
			TH_LOG("forgery %d", k);
		ASSERT_EQ(77u, cookie);
		ASSERT_EQ(1u, oms_agent_client_outstanding(&l.cl));
	}
	doorbell(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(1, l.answered[5]);
	/* the same answer twice: the second is refused */
	ASSERT_EQ(-EPROTO, oms_agent_client_answer(&l.cl, l.cq[0], &cookie,
						   &status, &old));
	ASSERT_EQ(0u, oms_agent_client_outstanding(&l.cl));
	link_close(&l);
}

TEST(bad_configs_refused)
{
	struct oms_agent_client cl;
	struct oms_agent_client_cfg c = {
		.ring_slots = 16, .cq_slots = 16, .stage_slots = 1,
		.nstreams = 1, .window = 1,
	};
	struct oms_agent_req q;

	ASSERT_EQ(0, oms_agent_client_init(&cl, &c));
	ASSERT_EQ(-EINVAL, oms_agent_client_take(&cl, 0, 1, 0, &q));
	oms_agent_client_destroy(&cl);
	c.ring_slots = 24;
	ASSERT_EQ(-EINVAL, oms_agent_client_init(&cl, &c));
	c.ring_slots = 8;
	ASSERT_EQ(-EINVAL, oms_agent_client_init(&cl, &c));
	c.ring_slots = 16;
	c.window = 3;
	ASSERT_EQ(-EINVAL, oms_agent_client_init(&cl, &c));
	c.window = 1;
	c.nstreams = 0;
	ASSERT_EQ(-EINVAL, oms_agent_client_init(&cl, &c));
}

/*
 * A long random program on small rings: puts and gets on two streams and
 * without numbers, some numbers posted late, doorbells, deliveries and
 * reaps interleaved at random.  Every request is answered once, the
 * transport never sees a credit broken, each stream's puts land in number
 * order (each stream writes its own words, a later number a larger value).
 */
static void random_program(struct __test_metadata *_metadata,
			   uint32_t ring, uint32_t cq)
{
	static struct link l;
	static struct op late[16];
	struct t_rng r;
	uint64_t ops = t_trials(30000), cookie = 0;
	uint64_t last[2] = { 0, 0 };
	int nlate = 0;

	t_rng_init(&r, t_seed(0xa9e47u + ring * 7 + cq));
	ASSERT_EQ(0, link_open(&l, ring, cq, 4, 16));
	ASSERT_LE(ops, MAX_COOKIES - 16);
	while (cookie < ops && !l.broken) {
		/* doorbells are rare, so the credits run out between them */
		uint32_t what = (uint32_t)t_rng_below(&r, 40);

		if (what < 30 && nlate < 16) {
			uint16_t stream = (uint16_t)t_rng_below(&r, 3);
			int put = t_rng_below(&r, 3) != 0;
			struct op *o = &late[nlate];
			uint64_t v;

			if (stream == 2)
				stream = UINT16_MAX;
			v = stream != UINT16_MAX && put ? last[stream] + 1 : 0;
			if (take(&l, o, put, stream,
				 stream == UINT16_MAX ? 4096 : 8 * stream, v,
				 stream == UINT16_MAX ? 64 : 8 * stream, RKEY,
				 cookie))
				goto progress;
			if (v)
				last[stream] = v;
			cookie++;
			/* some go late, as a held strong store's */
			if (t_rng_below(&r, 8) == 0)
				nlate++;
			else
				post(&l, o);
			continue;
		}
		if (what < 39 && nlate) {
			uint32_t k = (uint32_t)t_rng_below(&r, (uint64_t)nlate);

			post(&l, &late[k]);
			late[k] = late[--nlate];
			continue;
		}
progress:
		doorbell(&l);
	}
	while (nlate)
		post(&l, &late[--nlate]);
	doorbell(&l);
	ASSERT_EQ(0, l.broken);
	ASSERT_EQ(cookie, l.nanswers);
	ASSERT_EQ(0u, oms_agent_client_outstanding(&l.cl));
	for (uint64_t c = 0; c < cookie; c++)
		ASSERT_EQ(0, l.status[c]);
	/* each stream's word holds its last put: applied in number order */
	ASSERT_EQ(last[0], word(region, 0));
	ASSERT_EQ(last[1], word(region, 8));
	TH_LOG("%llu requests, ring %u, completion ring %u: every credit held",
	       (unsigned long long)cookie, ring, cq);
	link_close(&l);
}

TEST(random_program_credits_hold)
{
	random_program(_metadata, 16, 16);
	random_program(_metadata, 16, 32);
	random_program(_metadata, 32, 16);
}

TEST_HARNESS_MAIN
