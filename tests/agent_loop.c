// SPDX-License-Identifier: MIT
/*
 * The destination agent's core (lib/agent/agent.c),
 * driven by a model requester on the host: no verbs, but the same bytes a
 * requester will write into the agent's ring, a landing buffer standing
 * for the requester's memory, and real threads where the agent meets
 * concurrency (a ring with a doorbell by count and credits; a host writer
 * beside acquire gets).
 *
 * Every forbidden outcome is shown next to a control that produces it:
 * the agent with OMS_AGENT_F_NO_ORDER (numbers ignored, acquire read as
 * relaxed, no hold), or a relaxed get.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes lib/
 * headers to reach what the public API does not show yet.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "agent/agent.h"

#define LKEY		0x77u	/* the landing buffer's rkey */
#define RKEY		0x11u	/* the served region's key */
#define ROKEY		0x22u	/* a read-only region */
#define REGION		(64u << 10)
#define STAGE_SLOTS	64u
#define STAGE_LEN	4096u
#define LBASE		0x10000ull	/* landing address of land[0] */

/* The requester's side: its landing memory and staging slots. */
struct model {
	uint8_t land[REGION];
	uint8_t stage[STAGE_SLOTS * STAGE_LEN];
	uint64_t landings;
};

/* The agent's host: its region. */
static uint8_t region[REGION] __attribute__((aligned(64)));
static uint8_t ro_region[4096] __attribute__((aligned(64)));

static int model_land(void *arg, uint32_t conn, uint64_t laddr,
		      uint32_t lrkey, const void *src, uint32_t len)
{
	struct model *m = arg;

	(void)conn;
	if (lrkey != LKEY || laddr < LBASE ||
	    laddr - LBASE > sizeof(m->land) ||
	    len > sizeof(m->land) - (laddr - LBASE))
		return -EACCES;
	memcpy(m->land + (laddr - LBASE), src, len);
	__atomic_add_fetch(&m->landings, 1, __ATOMIC_RELEASE);
	return 0;
}

static struct oms_agent *agent_new(struct model *m, uint32_t flags,
				   uint64_t chaos)
{
	struct oms_agent_attr a = { .flags = flags, .chaos_seed = chaos };
	struct oms_agent_ops ops = { .land = model_land, .arg = m };
	struct oms_agent *ag = NULL;

	memset(region, 0, sizeof(region));
	memset(ro_region, 0x5a, sizeof(ro_region));
	if (oms_agent_create(&a, &ops, &ag))
		return NULL;
	if (oms_agent_region_add(ag, region, sizeof(region), RKEY,
				 OMS_ACCESS_ALL) ||
	    oms_agent_region_add(ag, ro_region, sizeof(ro_region), ROKEY,
				 OMS_ACCESS_REMOTE_READ)) {
		oms_agent_destroy(ag);
		return NULL;
	}
	return ag;
}

static int conn_new(struct oms_agent *ag, struct model *m, uint32_t peer,
		    uint16_t window, uint32_t *id)
{
	struct oms_agent_conn_attr c = {
		.nstreams = 4, .window = window, .peer = peer,
		.stage_slots = STAGE_SLOTS, .stage_len = STAGE_LEN,
		.stage = m->stage,
	};

	return oms_agent_conn_open(ag, &c, id);
}

/* A put of the 8-byte value @v to @off, through staging slot @slot. */
static struct oms_ad_desc put8(struct model *m, uint32_t slot, uint64_t off,
			       uint64_t v, int seq, uint16_t n)
{
	struct oms_ad_desc d = {
		.op = OMS_AD_PUT, .key = RKEY, .len = 8, .off = off,
		.stage = slot, .tag = (uint32_t)(1000 + n),
	};

	memcpy(m->stage + (size_t)slot * STAGE_LEN, &v, 8);
	if (seq) {
		d.flags = OMS_AD_F_SEQ;
		d.seq = n;
	}
	return d;
}

static struct oms_ad_desc get_of(uint64_t off, uint32_t len, uint8_t flags,
				 uint64_t laddr, uint32_t tag)
{
	struct oms_ad_desc d = {
		.op = OMS_AD_GET, .flags = flags, .key = RKEY, .len = len,
		.off = off, .lrkey = LKEY, .laddr = LBASE + laddr, .tag = tag,
	};

	return d;
}

static int submit(struct oms_agent *ag, uint32_t conn,
		  const struct oms_ad_desc *d)
{
	uint8_t b[OMS_AD_LEN];
	int r = oms_ad_encode(b, d, OMS_AD_FMT_CRC32C);

	return r ? r : oms_agent_submit(ag, conn, b);
}

static uint64_t word(const uint8_t *base, uint64_t off)
{
	uint64_t v;

	memcpy(&v, base + off, 8);
	return v;
}

/* A program of one connection, on a fresh agent. */
typedef void program_fn(struct oms_agent *ag, struct model *m, uint32_t c,
			struct __test_metadata *_metadata, int ordered);

static void on_agent(struct __test_metadata *_metadata, uint32_t flags,
		     program_fn *prog, struct oms_agent_stats *st)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, flags, 0);
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	prog(ag, &m, c, _metadata, !(flags & OMS_AGENT_F_NO_ORDER));
	if (st)
		oms_agent_stats(ag, st);
	oms_agent_destroy(ag);
}

/* ---- descriptor formats ---- */

/*
 * Each connection checks its descriptors in the format its handshake
 * agreed: one of a requester that offered nothing (FNV-1a) beside one of
 * a requester that offered CRC32C (the default), on one agent; the other
 * format's bytes are torn (-EPROTO, nothing performed).
 */
TEST(each_connection_checks_its_own_format)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_agent_conn_attr a = {
		.nstreams = 1, .window = 16, .stage_slots = STAGE_SLOTS,
		.stage_len = STAGE_LEN, .stage = m.stage,
	};
	const enum oms_ad_fmt fmts[] = { OMS_AD_FMT_FNV1A, OMS_AD_FMT_CRC32C };
	struct oms_agent_cpl cpl[8];
	uint32_t c[2];

	ASSERT_NE(NULL, ag);
	a.fmt = OMS_AD_FMT_FNV1A;
	ASSERT_EQ(0, oms_agent_conn_open(ag, &a, &c[0]));
	a.fmt = 0;	/* the default: CRC32C */
	ASSERT_EQ(0, oms_agent_conn_open(ag, &a, &c[1]));
	a.fmt = 3;
	ASSERT_EQ(-EINVAL, oms_agent_conn_open(ag, &a, &c[1]));
	for (int k = 0; k < 2; k++) {
		struct oms_ad_desc d = put8(&m, 0, 8u * k, 5u + k, 0, 0);
		uint8_t b[OMS_AD_LEN];

		ASSERT_EQ(0, oms_ad_encode(b, &d, fmts[!k]));	/* the other */
		ASSERT_EQ(0, oms_agent_submit(ag, c[k], b));
		ASSERT_EQ(1, oms_agent_poll(ag, cpl, 8));
		ASSERT_EQ(-EPROTO, cpl[0].status);
		ASSERT_EQ(0, word(region, 8u * k));
		ASSERT_EQ(0, oms_ad_encode(b, &d, fmts[k]));	/* its own */
		ASSERT_EQ(0, oms_agent_submit(ag, c[k], b));
		ASSERT_EQ(1, oms_agent_poll(ag, cpl, 8));
		ASSERT_EQ(0, cpl[0].status);
		ASSERT_EQ(5u + k, word(region, 8u * k));
	}
	oms_agent_destroy(ag);
}

/* ---- L36: a stream is performed in number order ---- */

/* seq 2 (a get of G), then seq 1 (put G=1), then seq 0 (put F=1). */
static void l36_program(struct oms_agent *ag, struct model *m, uint32_t c,
			struct __test_metadata *_metadata, int ordered)
{
	struct oms_ad_desc g = get_of(64, 8, OMS_AD_F_SEQ, 256, 7);
	struct oms_ad_desc pg = put8(m, 1, 64, 1, 1, 1);
	struct oms_ad_desc pf = put8(m, 0, 0, 1, 1, 0);
	struct oms_agent_cpl cpl[8];

	g.seq = 2;
	memset(m->land + 256, 0xee, 8);
	ASSERT_EQ(0, submit(ag, c, &g));
	ASSERT_EQ(0, submit(ag, c, &pg));
	if (ordered) {
		/* both wait for number 0: nothing performed, nothing done */
		ASSERT_EQ(0, word(region, 64));
		ASSERT_EQ(0, oms_agent_poll(ag, cpl, 8));
	} else {
		/* the control: G is applied while F is not (forbidden) */
		ASSERT_EQ(1, word(region, 64));
		ASSERT_EQ(0, word(region, 0));
	}
	ASSERT_EQ(0, submit(ag, c, &pf));
	ASSERT_EQ(1, word(region, 0));
	ASSERT_EQ(1, word(region, 64));
	ASSERT_EQ(3, oms_agent_poll(ag, cpl, 8));
	if (ordered) {
		ASSERT_EQ(1000u, cpl[0].tag);	/* F */
		ASSERT_EQ(1001u, cpl[1].tag);	/* G */
		ASSERT_EQ(7u, cpl[2].tag);	/* the get, after G */
		ASSERT_EQ(1, word(m->land, 256));
		ASSERT_EQ(3, oms_agent_next_seq(ag, c, 0));
	} else {
		ASSERT_EQ(7u, cpl[0].tag);	/* read before G was put */
		ASSERT_EQ(0, word(m->land, 256));
	}
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, cpl[i].status);
}

TEST(L36_seq_members_performed_in_number_order)
{
	on_agent(_metadata, 0, l36_program, NULL);
}

TEST(L36_control_no_order_performs_on_arrival)
{
	on_agent(_metadata, OMS_AGENT_F_NO_ORDER, l36_program, NULL);
}

/*
 * The same rule under concurrency: a requester thread writes N puts of
 * k to one word through a ring (doorbell by count, credit by the agent's
 * completions), delivering each block of 8 numbers in a shuffled order;
 * the agent thread consumes the ring; the word may never go down, checked
 * by the agent thread after every descriptor and by an observer thread.
 */
#define RING		64u
#define RUN_PUTS	20000u
#define RUN_BLOCK	8u

struct run {
	struct oms_agent *ag;
	struct model *m;
	uint32_t conn;
	uint8_t ring[RING][OMS_AD_LEN];
	uint64_t prod;		/* descriptors written (the doorbell) */
	uint64_t done;		/* completions seen (the credit) */
	uint64_t bad_status;
	uint64_t went_down;	/* seen by the agent thread */
	uint64_t seen_down;	/* seen by the observer */
	int stop;
};

static void *run_requester(void *arg)
{
	struct run *r = arg;
	uint64_t rng = 12345;

	for (uint32_t b = 0; b < RUN_PUTS / RUN_BLOCK; b++) {
		uint32_t order[RUN_BLOCK];

		for (uint32_t i = 0; i < RUN_BLOCK; i++)
			order[i] = i;
		for (uint32_t i = RUN_BLOCK - 1; i > 0; i--) {
			uint32_t j, t;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			j = (uint32_t)(rng >> 33) % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		/* the credit: a number at most window - 1 past what is done,
		 * and a free ring slot; bounded by the test's timeout */
		while (b * RUN_BLOCK + RUN_BLOCK >
		       __atomic_load_n(&r->done, __ATOMIC_ACQUIRE) + 32)
			sched_yield();
		for (uint32_t i = 0; i < RUN_BLOCK; i++) {
			uint32_t k = b * RUN_BLOCK + order[i];
			uint32_t slot = k % STAGE_SLOTS;
			struct oms_ad_desc d = put8(r->m, slot, 0, k, 1,
						    (uint16_t)k);

			if (oms_ad_encode(r->ring[r->prod % RING], &d,
					  OMS_AD_FMT_CRC32C))
				return NULL;
			/* doorbell by count: the descriptor, then the count */
			__atomic_store_n(&r->prod, r->prod + 1,
					 __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void *run_agent(void *arg)
{
	struct run *r = arg;
	uint64_t cons = 0, last = 0;

	while (cons < RUN_PUTS) {
		uint64_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
		struct oms_agent_cpl cpl[64];
		int n;

		if (cons == prod) {
			sched_yield();
			continue;
		}
		while (cons < prod) {
			uint64_t now;

			if (oms_agent_submit(r->ag, r->conn, r->ring[cons % RING]))
				break;
			cons++;
			now = word(region, 0);
			if (now < last)
				r->went_down++;
			last = now;
		}
		while ((n = oms_agent_poll(r->ag, cpl, 64)) > 0) {
			for (int i = 0; i < n; i++)
				if (cpl[i].status)
					r->bad_status++;
			__atomic_add_fetch(&r->done, (uint64_t)n,
					   __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *run_observer(void *arg)
{
	struct run *r = arg;
	uint64_t last = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = __atomic_load_n((uint64_t *)(void *)region,
					       __ATOMIC_ACQUIRE);

		if (now < last)
			r->seen_down++;
		last = now;
	}
	return NULL;
}

static void run_stream(struct __test_metadata *_metadata, uint32_t flags,
		       struct run *r)
{
	static struct model m;
	pthread_t tr, ta, to;

	memset(r, 0, sizeof(*r));
	r->m = &m;
	r->ag = agent_new(&m, flags, 0);
	ASSERT_NE(NULL, r->ag);
	ASSERT_EQ(0, conn_new(r->ag, &m, 1, 32, &r->conn));
	ASSERT_EQ(0, pthread_create(&to, NULL, run_observer, r));
	ASSERT_EQ(0, pthread_create(&ta, NULL, run_agent, r));
	ASSERT_EQ(0, pthread_create(&tr, NULL, run_requester, r));
	pthread_join(tr, NULL);
	pthread_join(ta, NULL);
	pthread_join(to, NULL);
	ASSERT_EQ(0, r->bad_status);
	ASSERT_EQ(RUN_PUTS, r->done);
	oms_agent_destroy(r->ag);
}

TEST(L36_shuffled_ring_word_never_goes_down)
{
	static struct run r;

	run_stream(_metadata, 0, &r);
	ASSERT_EQ(RUN_PUTS - 1, word(region, 0));
	ASSERT_EQ(0, r.went_down);
	ASSERT_EQ(0, r.seen_down);
	TH_LOG("%u puts in shuffled blocks of %u: never down", RUN_PUTS,
	       RUN_BLOCK);
}

TEST(L36_control_shuffled_ring_no_order_goes_down)
{
	static struct run r;

	run_stream(_metadata, OMS_AGENT_F_NO_ORDER, &r);
	ASSERT_GT(r.went_down, 0);
	TH_LOG("control: down %llu times (agent thread), %llu (observer)",
	       (unsigned long long)r.went_down,
	       (unsigned long long)r.seen_down);
}

/* ---- L37: a refused member stops its stream ---- */

static void l37_program(struct oms_agent *ag, struct model *m, uint32_t c,
			struct __test_metadata *_metadata, int ordered)
{
	struct oms_ad_desc p0 = put8(m, 0, 0, 10, 1, 0);
	struct oms_ad_desc bad = put8(m, 1, 8, 11, 1, 1);
	struct oms_ad_desc p2 = put8(m, 2, 16, 12, 1, 2);
	struct oms_ad_desc p3 = put8(m, 3, 24, 13, 1, 3);
	struct oms_agent_cpl cpl[8];

	bad.key = 0xdead;			/* no such region */
	ASSERT_EQ(0, submit(ag, c, &p0));
	ASSERT_EQ(0, submit(ag, c, &p2));	/* waits for number 1 */
	ASSERT_EQ(0, submit(ag, c, &bad));
	ASSERT_EQ(10, word(region, 0));
	ASSERT_EQ(3, oms_agent_poll(ag, cpl, 8));
	ASSERT_EQ(0, cpl[0].status);
	if (!ordered) {
		/* the control: the member after the failed one is applied */
		ASSERT_EQ(12, word(region, 16));
		return;
	}
	ASSERT_EQ(0, word(region, 16));		/* never applied */
	ASSERT_EQ(-EACCES, cpl[1].status);
	ASSERT_EQ(1001u, cpl[1].tag);
	ASSERT_EQ(8u, cpl[1].len);	/* the refused one's, for the transport */
	ASSERT_EQ(-ECANCELED, cpl[2].status);
	ASSERT_EQ(1002u, cpl[2].tag);
	/* later members are cancelled until the requester resumes */
	ASSERT_EQ(0, submit(ag, c, &p3));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 8));
	ASSERT_EQ(-ECANCELED, cpl[0].status);
	ASSERT_EQ(0, word(region, 24));
	ASSERT_EQ(0, oms_agent_resume(ag, c, 0, 3));
	ASSERT_EQ(0, submit(ag, c, &p3));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 8));
	ASSERT_EQ(0, cpl[0].status);
	ASSERT_EQ(13, word(region, 24));
}

TEST(L37_refused_member_stops_stream_until_resume)
{
	struct oms_agent_stats st = { 0 };

	on_agent(_metadata, 0, l37_program, &st);
	ASSERT_EQ(1, st.key_drops);
	ASSERT_EQ(2, st.cancelled);
}

TEST(L37_control_no_order_applies_after_failure)
{
	on_agent(_metadata, OMS_AGENT_F_NO_ORDER, l37_program, NULL);
}

/*
 * L37 on an in-order connection (OMS_AD_F_CHAIN, a verbs DEST_SEQ
 * requester): an unnumbered put refused, then numbered and unnumbered
 * puts and a get after it in the ring: none is performed, each completes
 * with -ECANCELED.  Without the flag (the control) they are performed:
 * the agent stops only a stream at its own members.
 */
static void chain_program(struct __test_metadata *_metadata, int chain)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	uint8_t f = chain ? OMS_AD_F_CHAIN : 0;
	struct oms_ad_desc bad = put8(&m, 0, 0, 10, 0, 0);
	struct oms_ad_desc p1 = put8(&m, 1, 8, 11, 1, 0);
	struct oms_ad_desc p2 = put8(&m, 2, 16, 12, 0, 0);
	struct oms_ad_desc g = get_of(8, 8, OMS_AD_F_ACQUIRE | f, 0, 77);
	struct oms_agent_cpl cpl[8];
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	bad.key = 0xdead;
	bad.flags |= f;
	p1.flags |= f;
	p2.flags |= f;
	ASSERT_EQ(0, submit(ag, c, &bad));
	ASSERT_EQ(0, submit(ag, c, &p1));
	ASSERT_EQ(0, submit(ag, c, &p2));
	ASSERT_EQ(0, submit(ag, c, &g));
	ASSERT_EQ(4, oms_agent_poll(ag, cpl, 8));
	ASSERT_EQ(-EACCES, cpl[0].status);
	for (int i = 1; i < 4; i++)
		ASSERT_EQ(chain ? -ECANCELED : 0, cpl[i].status);
	ASSERT_EQ(chain ? 0 : 11, word(region, 8));
	ASSERT_EQ(chain ? 0 : 12, word(region, 16));
	ASSERT_EQ(chain ? 0 : 1, m.landings);
	/* a descriptor without the flag is still served: a raw requester
	 * that does not ask for the rule does not get it */
	p2.flags &= (uint8_t)~OMS_AD_F_CHAIN;
	ASSERT_EQ(0, submit(ag, c, &p2));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 8));
	ASSERT_EQ(0, cpl[0].status);
	oms_agent_destroy(ag);
}

TEST(L37_chain_cancels_everything_after_a_failure)
{
	chain_program(_metadata, 1);
}

TEST(L37_control_without_chain_performs_after_a_failure)
{
	chain_program(_metadata, 0);
}

TEST(L37_cancel_nop_stops_stream_other_streams_flow)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc nop = {
		.op = OMS_AD_NOP, .flags = OMS_AD_F_SEQ | OMS_AD_F_CANCEL,
		.stream = 0, .seq = 0, .tag = 9,
	};
	struct oms_ad_desc p1 = put8(&m, 0, 0, 5, 1, 1);
	struct oms_ad_desc other = put8(&m, 1, 8, 6, 1, 0);
	struct oms_agent_cpl cpl[8];
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	other.stream = 1;
	ASSERT_EQ(0, submit(ag, c, &p1));
	ASSERT_EQ(0, submit(ag, c, &nop));
	ASSERT_EQ(0, submit(ag, c, &other));
	ASSERT_EQ(3, oms_agent_poll(ag, cpl, 8));
	ASSERT_EQ(-ECANCELED, cpl[0].status);	/* the NOP */
	ASSERT_EQ(9u, cpl[0].tag);
	ASSERT_EQ(-ECANCELED, cpl[1].status);	/* number 1, buffered */
	ASSERT_EQ(0, cpl[2].status);		/* stream 1 is not held */
	ASSERT_EQ(0, word(region, 0));
	ASSERT_EQ(6, word(region, 8));
	oms_agent_destroy(ag);
}

/* ---- forged descriptors ---- */

/* One forged descriptor on a fresh connection after a good member 0:
 * its error, nothing written, and the good member 2 after it is not
 * performed when the forgery was a member of its stream. */
static void forge(struct __test_metadata *_metadata, struct oms_agent *ag,
		  struct model *m, int which, int want)
{
	static uint8_t before[REGION];
	struct oms_ad_desc d = put8(m, 1, 512, 0x4242, 1, 1);
	struct oms_ad_desc p0 = put8(m, 0, 0, 1, 1, 0);
	struct oms_agent_cpl cpl[8];
	uint8_t b[OMS_AD_LEN];
	uint32_t c;
	int n;

	ASSERT_EQ(0, conn_new(ag, m, 1, 16, &c));
	ASSERT_EQ(0, submit(ag, c, &p0));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 8));
	memcpy(before, region, sizeof(region));
	switch (which) {
	case 0: d.stream = 4; break;			/* not its stream */
	case 1: d.stage = STAGE_SLOTS; break;		/* not its slot */
	case 2: d.len = STAGE_LEN + 8; break;		/* past its slot */
	case 3: d.key = 0xbad; break;			/* no region */
	case 4: d.key = ROKEY; d.off = 0; break;	/* read only */
	case 5: d.off = REGION - 4; break;		/* past the end */
	case 6: d.seq = 0; break;			/* used */
	case 7: d.seq = 1 + 16; break;			/* past the credit */
	case 8: d.seq = 0x8001; break;			/* far behind */
	}
	if (which == 9) {
		/* torn: a byte changed after sealing */
		ASSERT_EQ(0, oms_ad_encode(b, &d, OMS_AD_FMT_CRC32C));
		b[17] ^= 1;
		ASSERT_EQ(0, oms_agent_submit(ag, c, b));
	} else if (which == 10) {
		/* a number already buffered, sent twice */
		d.seq = 3;
		ASSERT_EQ(0, submit(ag, c, &d));
		ASSERT_EQ(0, submit(ag, c, &d));
	} else {
		ASSERT_EQ(0, submit(ag, c, &d));
	}
	n = oms_agent_poll(ag, cpl, 8);
	ASSERT_GE(n, 1);
	/* its own error first (a duplicate's twin is cancelled after it) */
	ASSERT_EQ(want, cpl[0].status) TH_LOG("forgery %d", which);
	if (which == 9)
		ASSERT_EQ(0u, cpl[0].tag);
	ASSERT_EQ(0, memcmp(before, region, sizeof(region)))
		TH_LOG("forgery %d wrote", which);
	if (which != 0 && which != 9) {
		/* a member of stream 0 was refused: the stream stopped */
		struct oms_ad_desc p2 = put8(m, 2, 1024, 7, 1, 2);

		ASSERT_EQ(0, submit(ag, c, &p2));
		ASSERT_EQ(1, oms_agent_poll(ag, cpl, 8));
		ASSERT_NE(0, cpl[0].status);
		ASSERT_EQ(0, word(region, 1024));
	}
	ASSERT_EQ(0, oms_agent_conn_close(ag, c));
}

TEST(forged_descriptors_refused_nothing_written)
{
	static struct model m;
	static const int want[] = {
		-EINVAL, -EINVAL, -EINVAL, -EACCES, -EACCES, -ERANGE,
		-ESTALE, -ENOSPC, -ESTALE, -EPROTO, -EEXIST,
	};
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_agent_stats st;

	ASSERT_NE(NULL, ag);
	for (int i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++) {
		forge(_metadata, ag, &m, i, want[i]);
		if (!_metadata->passed)
			break;
	}
	oms_agent_stats(ag, &st);
	ASSERT_EQ(1, st.torn);
	ASSERT_EQ(2, st.key_drops);
	oms_agent_destroy(ag);
}

TEST(revoked_region_refused)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc p = put8(&m, 0, 0, 3, 0, 0);
	struct oms_agent_cpl cpl[2];
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	ASSERT_EQ(0, oms_agent_region_remove(ag, RKEY));
	ASSERT_EQ(0, submit(ag, c, &p));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 2));
	ASSERT_EQ(-EACCES, cpl[0].status);
	ASSERT_EQ(0, word(region, 0));
	ASSERT_EQ(-EINVAL, oms_agent_region_remove(ag, RKEY));
	oms_agent_destroy(ag);
}

TEST(L37_buffered_member_checked_again_when_performed)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc p1 = put8(&m, 1, 8192, 9, 1, 1);
	struct oms_ad_desc p0 = put8(&m, 0, 0, 8, 1, 0);
	struct oms_ad_desc p2 = put8(&m, 2, 16, 7, 1, 2);
	struct oms_agent_cpl cpl[4];
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	ASSERT_EQ(0, submit(ag, c, &p1));	/* valid now; waits for 0 */
	/* the key now names 4 KiB: offset 8192 is past it */
	ASSERT_EQ(0, oms_agent_region_remove(ag, RKEY));
	ASSERT_EQ(0, oms_agent_region_add(ag, region, 4096, RKEY,
					  OMS_ACCESS_ALL));
	ASSERT_EQ(0, submit(ag, c, &p2));	/* waits too */
	ASSERT_EQ(0, submit(ag, c, &p0));
	ASSERT_EQ(3, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(0, cpl[0].status);
	ASSERT_EQ(-ERANGE, cpl[1].status);
	/* it failed: what follows it in the stream is not performed */
	ASSERT_EQ(-ECANCELED, cpl[2].status);
	ASSERT_EQ(1002u, cpl[2].tag);
	ASSERT_EQ(0, word(region, 8192));
	ASSERT_EQ(0, word(region, 16));
	oms_agent_destroy(ag);
}

/* ---- L23-L25: class-2 responses held behind posted writes ---- */

/* A class-2 get of node 1 while the owner's posted write to node 1 is
 * not acknowledged, then a class-1 get. */
static void l23_program(struct oms_agent *ag, struct model *m, uint32_t c,
			struct __test_metadata *_metadata, int ordered)
{
	struct oms_ad_desc g = get_of(0, 8, OMS_AD_F_RESP_ORDERED, 64, 1);
	struct oms_ad_desc g1 = get_of(0, 8, 0, 128, 2);
	struct oms_agent_cpl cpl[4];
	uint32_t id;

	region[0] = 1;
	ASSERT_EQ(0, oms_agent_posted(ag, 1, &id));
	ASSERT_EQ(0, submit(ag, c, &g));
	region[0] = 2;			/* after the read: not in the answer */
	ASSERT_EQ(0, submit(ag, c, &g1));
	if (!ordered) {
		/* the control: the class-2 answer passed the write */
		ASSERT_EQ(2, oms_agent_poll(ag, cpl, 4));
		ASSERT_EQ(1u, cpl[0].tag);
		ASSERT_EQ(1, m->land[64]);
		return;
	}
	/* the class-1 answer leaves at once, class 2 waits for the ack */
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(2u, cpl[0].tag);
	ASSERT_EQ(2, m->land[128]);
	ASSERT_EQ(0, m->land[64]);
	ASSERT_EQ(0, oms_agent_posted_ack(ag, 1, id));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(1u, cpl[0].tag);
	ASSERT_EQ(0, cpl[0].status);
	ASSERT_EQ(1, m->land[64]);	/* read when performed */
}

TEST(L23_class2_response_held_behind_posted_write)
{
	on_agent(_metadata, 0, l23_program, NULL);
}

TEST(L23_control_no_order_answers_at_once)
{
	on_agent(_metadata, OMS_AGENT_F_NO_ORDER, l23_program, NULL);
}

/* An answer the hold let go and one that could leave at once: they leave
 * in the order they were handed in. */
TEST(L23_class2_answers_leave_in_order_across_a_release)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc g1 = get_of(0, 8, OMS_AD_F_RESP_ORDERED, 64, 1);
	struct oms_ad_desc g2 = get_of(0, 8, OMS_AD_F_RESP_ORDERED, 128, 2);
	struct oms_agent_cpl cpl[4];
	uint32_t c, id;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	ASSERT_EQ(0, oms_agent_posted(ag, 1, &id));
	ASSERT_EQ(0, submit(ag, c, &g1));		/* held */
	ASSERT_EQ(0, oms_agent_posted_ack(ag, 1, id));	/* let go */
	ASSERT_EQ(0, submit(ag, c, &g2));		/* nothing unacked */
	ASSERT_EQ(2, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(1u, cpl[0].tag);
	ASSERT_EQ(2u, cpl[1].tag);
	oms_agent_destroy(ag);
}

static void l24_scope(struct __test_metadata *_metadata, uint32_t flags,
		      int held)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, flags, 0);
	struct oms_ad_desc g = get_of(0, 8, OMS_AD_F_RESP_ORDERED, 64, 1);
	struct oms_agent_cpl cpl[4];
	uint32_t c, id;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 3, 16, &c));
	ASSERT_EQ(0, oms_agent_posted(ag, 5, &id));	/* another node */
	ASSERT_EQ(0, submit(ag, c, &g));
	ASSERT_EQ(held ? 0 : 1, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(0, oms_agent_posted_ack(ag, 5, id));
	ASSERT_EQ(held ? 1 : 0, oms_agent_poll(ag, cpl, 4));
	oms_agent_destroy(ag);
}

TEST(L24_scope_per_node_not_held_by_other_node)
{
	l24_scope(_metadata, 0, 0);
}

TEST(L24_scope_global_held_by_other_node)
{
	l24_scope(_metadata, OMS_AGENT_F_HOLD_GLOBAL, 1);
}

TEST(L25_held_until_every_ack_out_of_order)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc g = get_of(0, 8, OMS_AD_F_RESP_ORDERED, 64, 1);
	struct oms_agent_cpl cpl[4];
	uint32_t c, id[3];

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 2, 16, &c));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, oms_agent_posted(ag, 2, &id[i]));
	ASSERT_EQ(0, submit(ag, c, &g));
	ASSERT_EQ(0, oms_agent_posted_ack(ag, 2, id[2]));
	ASSERT_EQ(0, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(0, oms_agent_posted_ack(ag, 2, id[0]));
	ASSERT_EQ(0, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(-EALREADY, oms_agent_posted_ack(ag, 2, id[0]));
	ASSERT_EQ(0, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(0, oms_agent_posted_ack(ag, 2, id[1]));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 4));
	oms_agent_destroy(ag);
}

/* ---- L30: an acquire get never returns a torn item ---- */

/*
 * Single Read's item (seed 004): a header line, 62 data lines and a
 * footer line, each carrying the version.  The writer thread updates it
 * back to front with release stores (footer, data, header); a get that
 * reads lines in address order and finds header == footer has read every
 * data line of that version.
 */
#define ITEM_LINES	64u
#define ITEM_BYTES	(ITEM_LINES * 64u)
#define ACQ_GETS	200000u	/* acquire: all of them, 0 torn */
#define CTL_GETS	2000000u	/* control: until 3 torn */

struct torn_run {
	int stop;
	uint64_t writes;
};

static void *item_writer(void *arg)
{
	struct torn_run *t = arg;
	uint64_t *item = (uint64_t *)(void *)region;

	for (uint64_t v = 1; !__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE);
	     v++) {
		for (int l = ITEM_LINES - 1; l >= 0; l--)
			__atomic_store_n(&item[l * 8], v, __ATOMIC_RELEASE);
		t->writes = v;
		/* a pause between versions, so that most gets see a still
		 * item and some meet an update */
		for (volatile unsigned i = 0; i < 4000; i++)
			;
	}
	return NULL;
}

struct torn_count {
	uint64_t torn, consistent, changing;	/* changing: header != footer */
};

/* Up to @gets acquire or relaxed gets of the item under the writer (fewer
 * once 3 are torn).  0, or -1 when set-up or a get failed. */
static int torn_gets(uint8_t flags, uint32_t gets, struct torn_count *n)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0x5eed);
	struct oms_ad_desc g = get_of(0, ITEM_BYTES, flags, 0, 1);
	struct torn_run t = { 0 };
	int err = 0;
	pthread_t w;
	uint32_t c;

	memset(n, 0, sizeof(*n));
	if (!ag || conn_new(ag, &m, 1, 16, &c) ||
	    pthread_create(&w, NULL, item_writer, &t)) {
		oms_agent_destroy(ag);
		return -1;
	}
	for (uint32_t i = 0; i < gets && n->torn < 3 && !err; i++) {
		struct oms_agent_cpl cpl;
		const uint64_t *it = (const uint64_t *)(void *)m.land;
		int mixed = 0;

		if (submit(ag, c, &g) || oms_agent_poll(ag, &cpl, 1) != 1 ||
		    cpl.status) {
			err = -1;
			break;
		}
		if (it[0] != it[(ITEM_LINES - 1) * 8]) {
			n->changing++;		/* seen as changing: retried */
			continue;
		}
		for (uint32_t l = 1; l < ITEM_LINES - 1; l++)
			mixed |= it[l * 8] != it[0];
		n->torn += mixed;
		n->consistent += !mixed;
	}
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	oms_agent_destroy(ag);
	return err;
}

TEST(L30_acquire_get_never_torn_under_host_writer)
{
	struct torn_count n;

	ASSERT_EQ(0, torn_gets(OMS_AD_F_ACQUIRE, ACQ_GETS, &n));
	ASSERT_EQ(0, n.torn);
	ASSERT_GT(n.consistent, 0);
	/* the writer did run across gets: the 0 is not for want of it */
	ASSERT_GT(n.changing, 0);
	TH_LOG("acquire: %llu consistent, %llu seen changing, 0 torn",
	       (unsigned long long)n.consistent,
	       (unsigned long long)n.changing);
}

TEST(L30_control_relaxed_get_lines_in_any_order_torn)
{
	struct torn_count n;

	ASSERT_EQ(0, torn_gets(0, CTL_GETS, &n));
	ASSERT_GT(n.torn, 0);
	TH_LOG("relaxed with chaos: %llu torn, %llu consistent",
	       (unsigned long long)n.torn, (unsigned long long)n.consistent);
}

/* ---- atomics, closing, bad input ---- */

TEST(atomics_performed_old_value_landed)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc fa = {
		.op = OMS_AD_FADD, .key = RKEY, .len = 8, .off = 32,
		.lrkey = LKEY, .laddr = LBASE, .a1 = 5, .tag = 1,
	};
	struct oms_ad_desc cas = {
		.op = OMS_AD_CAS, .flags = OMS_AD_F_SEQ, .key = RKEY, .len = 8,
		.off = 32, .lrkey = LKEY, .laddr = LBASE + 8, .a1 = 15, .a2 = 99,
		.tag = 2,
	};
	struct oms_agent_cpl cpl[4];
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	memcpy(region + 32, &(uint64_t){ 10 }, 8);
	ASSERT_EQ(0, submit(ag, c, &fa));
	ASSERT_EQ(0, submit(ag, c, &cas));
	ASSERT_EQ(2, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(10, cpl[0].old);
	ASSERT_EQ(10, word(m.land, 0));
	ASSERT_EQ(15, cpl[1].old);
	ASSERT_EQ(15, word(m.land, 8));
	ASSERT_EQ(99, word(region, 32));
	/* a failing compare leaves the word and answers what is there */
	cas.seq = 1;
	ASSERT_EQ(0, submit(ag, c, &cas));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(99, cpl[0].old);
	ASSERT_EQ(99, word(region, 32));
	/* a landing the requester did not give: the op's error */
	fa.lrkey = 0x1;
	ASSERT_EQ(0, submit(ag, c, &fa));
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(-EACCES, cpl[0].status);
	oms_agent_destroy(ag);
}

TEST(conn_close_drops_members_and_held_responses)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc g = get_of(0, 8, OMS_AD_F_RESP_ORDERED, 64, 1);
	struct oms_ad_desc p1 = put8(&m, 0, 8, 4, 1, 1);
	struct oms_agent_cpl cpl[4];
	uint32_t c, c2, id;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	ASSERT_EQ(0, oms_agent_posted(ag, 1, &id));
	region[0] = 7;
	ASSERT_EQ(0, submit(ag, c, &g));
	ASSERT_EQ(0, submit(ag, c, &p1));	/* waits for number 0 */
	ASSERT_EQ(0, oms_agent_conn_close(ag, c));
	ASSERT_EQ(-EINVAL, oms_agent_conn_close(ag, c));
	ASSERT_EQ(-EINVAL, submit(ag, c, &p1));
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c2));	/* the same slot */
	ASSERT_EQ(c, c2);
	ASSERT_EQ(0, oms_agent_posted_ack(ag, 1, id));
	ASSERT_EQ(0, oms_agent_poll(ag, cpl, 4));	/* nothing for c */
	ASSERT_EQ(0, m.land[64]);
	ASSERT_EQ(0, word(region, 8));
	ASSERT_EQ(0, oms_agent_next_seq(ag, c2, 0));
	oms_agent_destroy(ag);
}

TEST(conn_close_drops_its_queued_completions)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc nop = {
		.op = OMS_AD_NOP, .flags = OMS_AD_F_SEQ, .tag = 0xdead,
	};
	struct oms_ad_desc p = put8(&m, 0, 0, 1, 0, 0);
	struct oms_agent_cpl cpl[4];
	uint32_t a, b, a2;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &a));
	ASSERT_EQ(0, conn_new(ag, &m, 2, 16, &b));
	ASSERT_EQ(0, submit(ag, a, &nop));
	ASSERT_EQ(0, submit(ag, b, &p));
	ASSERT_EQ(0, submit(ag, a, &(struct oms_ad_desc){
		.op = OMS_AD_NOP, .flags = OMS_AD_F_SEQ, .seq = 1,
		.tag = 0xbeef }));
	ASSERT_EQ(0, oms_agent_conn_close(ag, a));
	ASSERT_EQ(0, conn_new(ag, &m, 3, 16, &a2));
	ASSERT_EQ(a, a2);			/* the id is given again */
	/* nothing of the old requester reaches the new one */
	ASSERT_EQ(1, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(b, cpl[0].conn);
	ASSERT_EQ(1000u, cpl[0].tag);
	oms_agent_destroy(ag);
}

TEST(L37_refused_member_that_waited_keeps_its_error)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	struct oms_ad_desc bad = put8(&m, 0, 0, 1, 1, 1);
	struct oms_ad_desc ok2 = put8(&m, 1, 8, 2, 1, 2);
	struct oms_agent_cpl cpl[4];
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, 16, &c));
	bad.key = 0xbad;
	ASSERT_EQ(0, submit(ag, c, &ok2));	/* both wait for number 0 */
	ASSERT_EQ(0, submit(ag, c, &bad));
	ASSERT_EQ(0, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(0, oms_agent_resume(ag, c, 0, 0));
	ASSERT_EQ(2, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(-EACCES, cpl[0].status);	/* number 1: its own error */
	ASSERT_EQ(-ECANCELED, cpl[1].status);	/* number 2 */
	ASSERT_EQ(0, word(region, 0));
	ASSERT_EQ(0, word(region, 8));
	oms_agent_destroy(ag);
}

/*
 * The destination stream's three decisions (docs/ordering.md, "The
 * destination stream"), the same on the emulated device
 * (tests/emu_device_order.c, L37_seq_duplicate_window_restart): a
 * duplicate of a buffered member (-EEXIST), a number past the window
 * (-ENOSPC) and one already taken (-ESTALE) each stop the stream where it
 * stands - the buffered member and every later one -ECANCELED,
 * unperformed - and a resume naming the requester's next number resumes
 * it: the numbering goes on.
 */
static int32_t status_of(struct oms_agent *ag, const struct oms_ad_desc *d,
			 uint32_t c)
{
	struct oms_agent_cpl cpl[4];

	if (submit(ag, c, d) || oms_agent_poll(ag, cpl, 4) != 1)
		return 1;
	return cpl[0].status;
}

/* @waiting waits behind a gap; @intruder has no place: it is answered
 * @err and the stream stops where it stands (the waiting one cancelled). */
static void stops_where_it_stands(struct __test_metadata *_metadata,
				  struct oms_agent *ag, uint32_t c,
				  const struct oms_ad_desc *waiting,
				  const struct oms_ad_desc *intruder, int err)
{
	struct oms_agent_cpl cpl[4];

	ASSERT_EQ(0, submit(ag, c, waiting));
	ASSERT_EQ(0, oms_agent_poll(ag, cpl, 4));
	ASSERT_EQ(0, submit(ag, c, intruder));
	ASSERT_EQ(2, oms_agent_poll(ag, cpl, 4));
	EXPECT_EQ(err, cpl[0].status);
	EXPECT_EQ(-ECANCELED, cpl[1].status);
}

TEST(L37_duplicate_window_restart_as_on_emu)
{
	static struct model m;
	struct oms_agent *ag = agent_new(&m, 0, 0);
	const uint16_t window = 16, far = 4 + window;
	struct oms_ad_desc d, w;
	uint32_t c;

	ASSERT_NE(NULL, ag);
	ASSERT_EQ(0, conn_new(ag, &m, 1, window, &c));
	/* a duplicate */
	d = put8(&m, 0, 0, 100, 1, 0);
	ASSERT_EQ(0, status_of(ag, &d, c));
	w = put8(&m, 2, 16, 102, 1, 2);		/* waits for number 1 */
	d = put8(&m, 3, 24, 103, 1, 2);
	stops_where_it_stands(_metadata, ag, c, &w, &d, -EEXIST);
	d = put8(&m, 1, 8, 101, 1, 1);
	EXPECT_EQ(-ECANCELED, status_of(ag, &d, c));
	ASSERT_EQ(0, oms_agent_resume(ag, c, 0, 3));
	d = put8(&m, 4, 32, 104, 1, 3);
	EXPECT_EQ(0, status_of(ag, &d, c));
	/* a number past the window */
	w = put8(&m, 5, 40, 105, 1, 5);		/* waits for number 4 */
	d = put8(&m, 6, 48, 106, 1, far);
	stops_where_it_stands(_metadata, ag, c, &w, &d, -ENOSPC);
	d = put8(&m, 7, 56, 107, 1, 4);
	EXPECT_EQ(-ECANCELED, status_of(ag, &d, c));
	ASSERT_EQ(0, oms_agent_resume(ag, c, 0, far + 1));
	/* a number already taken (the resume's is far + 1) */
	d = put8(&m, 8, 64, 108, 1, far);
	EXPECT_EQ(-ESTALE, status_of(ag, &d, c));
	d = put8(&m, 9, 72, 109, 1, far + 1);
	EXPECT_EQ(-ECANCELED, status_of(ag, &d, c));
	ASSERT_EQ(0, oms_agent_resume(ag, c, 0, far + 2));
	d = put8(&m, 10, 80, 110, 1, far + 2);
	EXPECT_EQ(0, status_of(ag, &d, c));
	for (uint32_t i = 0; i < 11; i++)
		EXPECT_EQ(i == 0 || i == 4 || i == 10 ? 100 + i : 0,
			  word(region, 8 * i));
	oms_agent_destroy(ag);
}

TEST(bad_arguments_change_nothing)
{
	static struct model m;
	struct oms_agent_ops ops = { .land = model_land, .arg = &m };
	struct oms_agent_ops no_land = { 0 };
	struct oms_agent_attr a = { 0 };
	struct oms_agent_conn_attr ca = {
		.nstreams = 1, .window = 16, .stage_slots = 1,
		.stage_len = 64, .stage = m.stage,
	};
	struct oms_agent *ag = NULL;
	struct oms_agent_cpl cpl[8];
	uint32_t c, n = 0, id;
	int r;

	ASSERT_EQ(-EINVAL, oms_agent_create(NULL, &no_land, &ag));
	a.max_cpl = 1000;			/* not a power of two */
	ASSERT_EQ(-EINVAL, oms_agent_create(&a, &ops, &ag));
	a.max_cpl = 256;			/* below two windows */
	ASSERT_EQ(-EINVAL, oms_agent_create(&a, &ops, &ag));
	a.max_cpl = 0;
	a.flags = 1u << 7;
	ASSERT_EQ(-EINVAL, oms_agent_create(&a, &ops, &ag));
	ASSERT_EQ(NULL, ag);
	a.flags = 0;
	a.max_cpl = 1024;
	ASSERT_EQ(0, oms_agent_create(&a, &ops, &ag));
	ASSERT_EQ(-EINVAL, oms_agent_region_add(ag, region + 1, 64, 5,
						OMS_ACCESS_ALL));
	ASSERT_EQ(-EINVAL, oms_agent_region_add(ag, region, 64, 5, 1u << 5));
	ASSERT_EQ(0, oms_agent_region_add(ag, region, sizeof(region), RKEY,
					  OMS_ACCESS_ALL));
	ASSERT_EQ(-EEXIST, oms_agent_region_add(ag, region, 64, RKEY,
						OMS_ACCESS_ALL));
	ca.window = 12;
	ASSERT_EQ(-EINVAL, oms_agent_conn_open(ag, &ca, &c));
	ca.window = 16;
	ca.peer = OMS_AGENT_MAX_PEERS;
	ASSERT_EQ(-EINVAL, oms_agent_conn_open(ag, &ca, &c));
	ca.peer = 0;
	ca.nstreams = 0;
	ASSERT_EQ(-EINVAL, oms_agent_conn_open(ag, &ca, &c));
	ca.nstreams = 1;
	ASSERT_EQ(0, oms_agent_conn_open(ag, &ca, &c));
	ASSERT_EQ(-EINVAL, oms_agent_submit(ag, c + 1, m.stage));
	ASSERT_EQ(-EINVAL, oms_agent_submit(ag, c, NULL));
	ASSERT_EQ(-EINVAL, oms_agent_resume(ag, c, 1, 0));
	ASSERT_EQ(-EINVAL, oms_agent_next_seq(ag, c, 1));
	ASSERT_EQ(-EINVAL, oms_agent_posted(ag, OMS_AGENT_MAX_PEERS, &id));
	ASSERT_EQ(-ENOENT, oms_agent_posted_ack(ag, 0, 3));
	/* a full completion queue refuses the next one and keeps it out */
	for (;;) {
		struct oms_ad_desc p = put8(&m, 0, 8 * (n % 64), n + 1, 0, 0);

		r = submit(ag, c, &p);
		if (r)
			break;
		n++;
	}
	ASSERT_EQ(-EAGAIN, r);
	ASSERT_EQ(1024u - 16u, n);
	ASSERT_EQ(n, word(region, 8 * ((n - 1) % 64)));
	ASSERT_EQ(8, oms_agent_poll(ag, cpl, 8));
	ASSERT_EQ(0, submit(ag, c, &(struct oms_ad_desc){
		.op = OMS_AD_NOP, .flags = OMS_AD_F_SEQ, .tag = 1 }));
	oms_agent_destroy(ag);
}

TEST_HARNESS_MAIN
