// SPDX-License-Identifier: MIT
/*
 * Litmus L23-L26 (seed 002, HPE/Gen-Z ordered and unordered classes) on the
 * oms_hold engine, plus its bad-argument contract.
 *
 * The randomised tests run a tiny simulated fabric: nodes with a word of
 * memory per address, a bag of packets in flight, and a seeded scheduler
 * that delivers any in-flight packet next (so the fabric reorders freely,
 * like the seed's switches that forward PWR2 before WR1).  Only node A runs
 * an oms_hold; its class-2 packets go through it.  Each forbidden outcome
 * has a control run (class 1, i.e. no hold) that must observe it, so the
 * check itself is shown to be able to fail.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/hold.h"

enum { NODE_A, NODE_B, NODE_C, NNODES };

static struct oms_hold_config cfg_of(unsigned scope)
{
	struct oms_hold_config c = {
		.ndest = NNODES, .window = 256, .gwindow = 512,
		.max_held = 64, .scope = scope,
	};
	return c;
}

/* ---- deterministic engine-level litmus ---------------------------------- */

TEST(litmus_L23_response_held_behind_posted_write)
{
	struct oms_hold h;
	struct oms_hold_config c = cfg_of(OMS_HOLD_PER_DEST);
	uint32_t w;
	uint64_t ck;
	unsigned d;

	ASSERT_EQ(0, oms_hold_init(&h, &c, NULL, 0));
	/* A: posted write to B, its ack withheld. */
	ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &w));
	ASSERT_EQ(1, oms_hold_pending(&h, NODE_B));
	/* B asks A for an ordered read: the response is held ... */
	ASSERT_EQ(OMS_HOLD_HELD, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 2));
	/* ... while an unordered response leaves at once. */
	ASSERT_EQ(OMS_HOLD_SEND, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS1, 1));
	ASSERT_EQ(0, oms_hold_pop(&h, &d, &ck));
	ASSERT_EQ(1, oms_hold_held(&h));
	/* The ack arrives: exactly the held response is released. */
	ASSERT_EQ(1, oms_hold_ack(&h, NODE_B, w));
	ASSERT_EQ(1, oms_hold_pop(&h, &d, &ck));
	ASSERT_EQ(NODE_B, d);
	ASSERT_EQ(2u, ck);
	ASSERT_EQ(0, oms_hold_pop(&h, &d, &ck));
	/* Nothing outstanding: the next ordered response is not held. */
	ASSERT_EQ(OMS_HOLD_SEND, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 3));
	ASSERT_EQ(1u, h.cnt.held);
	ASSERT_EQ(1u, h.cnt.released);
	ASSERT_EQ(1u, h.cnt.sent_class1);
	ASSERT_EQ(1u, h.cnt.sent_class2);
	oms_hold_destroy(&h);
}

TEST(litmus_L24_scope_per_destination_and_global)
{
	struct oms_hold h;
	struct oms_hold_config c = cfg_of(OMS_HOLD_PER_DEST);
	uint32_t wc, wb;
	uint64_t ck;

	/* Per destination: a pending write to C does not hold B's response. */
	ASSERT_EQ(0, oms_hold_init(&h, &c, NULL, 0));
	ASSERT_EQ(0, oms_hold_post(&h, NODE_C, &wc));
	ASSERT_EQ(OMS_HOLD_SEND, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 1));
	ASSERT_EQ(OMS_HOLD_HELD, oms_hold_send(&h, NODE_C, OMS_HOLD_CLASS2, 2));
	ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &wb));
	ASSERT_EQ(OMS_HOLD_HELD, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 3));
	/* Acking B releases only B's response. */
	ASSERT_EQ(1, oms_hold_ack(&h, NODE_B, wb));
	ASSERT_EQ(1, oms_hold_pop(&h, NULL, &ck));
	ASSERT_EQ(3u, ck);
	ASSERT_EQ(0, oms_hold_pop(&h, NULL, &ck));
	ASSERT_EQ(1, oms_hold_ack(&h, NODE_C, wc));
	ASSERT_EQ(1, oms_hold_pop(&h, NULL, &ck));
	ASSERT_EQ(2u, ck);
	oms_hold_destroy(&h);

	/* Global: the same pending write to C does hold B's response. */
	c = cfg_of(OMS_HOLD_GLOBAL);
	ASSERT_EQ(0, oms_hold_init(&h, &c, NULL, 0));
	ASSERT_EQ(0, oms_hold_post(&h, NODE_C, &wc));
	ASSERT_EQ(OMS_HOLD_HELD, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 1));
	ASSERT_EQ(OMS_HOLD_SEND, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS1, 9));
	ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &wb));	/* after: no hold */
	ASSERT_EQ(1, oms_hold_ack(&h, NODE_C, wc));
	ASSERT_EQ(1, oms_hold_pop(&h, NULL, &ck));
	ASSERT_EQ(1u, ck);
	ASSERT_EQ(1, oms_hold_pending(&h, NODE_B));
	ASSERT_EQ(1, oms_hold_pending(&h, OMS_HOLD_ANY));
	oms_hold_destroy(&h);
}

TEST(litmus_L25_counting_out_of_order_acks)
{
	uint64_t seed = t_seed(0x1025);
	unsigned long trials = t_trials(3000), t;
	struct t_rng rng;
	uint32_t ids[256], after[16];

	t_rng_init(&rng, seed);
	for (t = 0; t < trials; t++) {
		unsigned scope = t & 1 ? OMS_HOLD_GLOBAL : OMS_HOLD_PER_DEST;
		struct oms_hold_config c = cfg_of(scope);
		unsigned n = 1 + t_rng_below(&rng, 200);
		unsigned nafter = t_rng_below(&rng, 16);
		struct oms_hold h;

		ASSERT_EQ(0, oms_hold_init(&h, &c, NULL, 0));
		for (unsigned i = 0; i < n; i++)
			ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &ids[i]));
		ASSERT_EQ(OMS_HOLD_HELD,
			  oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 77));
		/* Writes posted after the response must not hold it. */
		for (unsigned i = 0; i < nafter; i++)
			ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &after[i]));
		t_shuffle_u32(&rng, ids, n);
		for (unsigned i = 0; i < n; i++) {
			int rel = oms_hold_ack(&h, NODE_B, ids[i]);

			ASSERT_EQ(i + 1 == n ? 1 : 0, rel)
				TH_LOG("trial %lu n %u ack #%u seed %#llx", t,
				       n, i, (unsigned long long)seed);
			ASSERT_EQ(i + 1 == n ? 1 : 0,
				  oms_hold_pop(&h, NULL, NULL));
		}
		ASSERT_EQ((long)nafter, oms_hold_pending(&h, NODE_B));
		ASSERT_EQ(0, oms_hold_held(&h));
		oms_hold_destroy(&h);
	}
	TH_LOG("%lu trials, seed %#llx", trials, (unsigned long long)seed);
}

/* ---- simulated fabric ---------------------------------------------------- */

enum pkt_type { PWR, PWR_ACK, RD_REQ, RD_RSP };

struct pkt {
	uint8_t type, src, dst, cls;
	uint32_t id;		/* posted write id */
	uint32_t addr;
	uint64_t val;
	uint32_t need;		/* RD_RSP/RD_REQ: A's writes to dst issued before */
};

#define NADDR	8
#define MAXFLY	64

struct fabric {
	struct pkt fly[MAXFLY];
	unsigned nfly;
	uint64_t mem[NNODES][NADDR];
	uint8_t applied[NNODES][64];	/* posted write id from A applied */
	struct oms_hold h;		/* node A */
};

static void fab_send(struct fabric *f, const struct pkt *p)
{
	f->fly[f->nfly++] = *p;
}

static struct pkt fab_take(struct fabric *f, struct t_rng *rng)
{
	unsigned i = t_rng_below(rng, f->nfly);
	struct pkt p = f->fly[i];

	f->fly[i] = f->fly[--f->nfly];
	return p;
}

/* A sends packet @p of class p->cls through its hold. */
static int a_send_ordered(struct fabric *f, const struct pkt *p,
			  struct pkt *heldv, unsigned *nheld)
{
	int rc = oms_hold_send(&f->h, p->dst, p->cls, *nheld);

	if (rc == OMS_HOLD_SEND)
		fab_send(f, p);
	else if (rc == OMS_HOLD_HELD)
		heldv[(*nheld)++] = *p;
	return rc;
}

static void a_on_ack(struct fabric *f, const struct pkt *p,
		     struct pkt *heldv)
{
	uint64_t ck;

	oms_hold_ack(&f->h, p->src, p->id);
	while (oms_hold_pop(&f->h, NULL, &ck) == 1)
		fab_send(f, &heldv[ck]);
}

/* Deliver at a node other than A: apply writes, ack them, answer reads. */
static void remote_deliver(struct fabric *f, const struct pkt *p)
{
	struct pkt r;

	switch (p->type) {
	case PWR:
		f->mem[p->dst][p->addr] = p->val;
		f->applied[p->dst][p->id] = 1;
		r = (struct pkt){ .type = PWR_ACK, .src = p->dst,
				  .dst = p->src, .id = p->id };
		fab_send(f, &r);
		break;
	case RD_REQ:
		r = (struct pkt){ .type = RD_RSP, .src = p->dst, .dst = p->src,
				  .addr = p->addr,
				  .val = f->mem[p->dst][p->addr] };
		fab_send(f, &r);
		break;
	default:
		break;
	}
}

/*
 * One L23 trial: A posts k writes to B (data), B's ordered read request for
 * A's flag arrives at A at a random moment, A answers through its hold
 * (class @cls), and more writes to B may follow.  Returns 1 if B received
 * the response while one of the writes issued before it was not yet applied
 * at B (the forbidden outcome), 0 otherwise; -1 on an engine error.
 */
static int l23_trial(struct t_rng *rng, unsigned cls, unsigned scope)
{
	struct oms_hold_config c = cfg_of(scope);
	struct fabric f;
	struct pkt heldv[8], p;
	unsigned nheld = 0, k = 1 + t_rng_below(rng, 4), posted = 0;
	unsigned later = t_rng_below(rng, 3);
	int responded = 0, bad = 0;

	memset(&f, 0, sizeof(f));
	if (oms_hold_init(&f.h, &c, NULL, 0))
		return -1;
	/* B's request is in flight from the start; A's writes go out now. */
	p = (struct pkt){ .type = RD_REQ, .src = NODE_B, .dst = NODE_A,
			  .cls = cls };
	fab_send(&f, &p);
	for (; posted < k; posted++) {
		p = (struct pkt){ .type = PWR, .src = NODE_A, .dst = NODE_B,
				  .addr = posted, .val = 1 };
		if (oms_hold_post(&f.h, NODE_B, &p.id))
			return -1;
		fab_send(&f, &p);
	}
	while (f.nfly) {
		p = fab_take(&f, rng);
		if (p.dst == NODE_A && p.type == PWR_ACK) {
			a_on_ack(&f, &p, heldv);
		} else if (p.dst == NODE_A && p.type == RD_REQ) {
			struct pkt r = { .type = RD_RSP, .src = NODE_A,
					 .dst = NODE_B, .cls = p.cls,
					 .need = posted };
			if (a_send_ordered(&f, &r, heldv, &nheld) < 0)
				return -1;
			responded = 1;
		} else if (p.dst == NODE_B && p.type == RD_RSP) {
			for (uint32_t i = 0; i < p.need; i++)
				bad |= !f.applied[NODE_B][i];
		} else {
			remote_deliver(&f, &p);
		}
		/* After the response exists, A may post more writes to B. */
		if (responded && later && t_rng_below(rng, 2)) {
			later--;
			p = (struct pkt){ .type = PWR, .src = NODE_A,
					  .dst = NODE_B, .addr = 7, .val = 2 };
			if (oms_hold_post(&f.h, NODE_B, &p.id))
				return -1;
			posted++;
			fab_send(&f, &p);
		}
	}
	if (oms_hold_held(&f.h) != 0 || oms_hold_pending(&f.h, OMS_HOLD_ANY))
		bad = -1;	/* lost a packet: a liveness bug */
	oms_hold_destroy(&f.h);
	return bad;
}

TEST(litmus_L23_randomised_fabric)
{
	uint64_t seed = t_seed(0x1023);
	unsigned long trials = t_trials(20000), t;
	unsigned long bad2 = 0, bad1 = 0;
	struct t_rng rng;

	t_rng_init(&rng, seed);
	for (t = 0; t < trials; t++) {
		unsigned scope = t & 1 ? OMS_HOLD_GLOBAL : OMS_HOLD_PER_DEST;
		int r2 = l23_trial(&rng, OMS_HOLD_CLASS2, scope);
		int r1 = l23_trial(&rng, OMS_HOLD_CLASS1, scope);

		ASSERT_TRUE(r2 >= 0 && r1 >= 0)
			TH_LOG("trial %lu seed %#llx", t,
			       (unsigned long long)seed);
		bad2 += r2;
		bad1 += r1;
	}
	TH_LOG("%lu trials each: class-2 early responses %lu, class-1 "
	       "(control) %lu, seed %#llx", trials, bad2, bad1,
	       (unsigned long long)seed);
	ASSERT_EQ(0ul, bad2);
	ASSERT_GT(bad1, 0ul);
}

/*
 * L26: A posts x=new to B, then reads x at B (same requester, ordered).
 * The read request is a class-2 non-posted packet from A to B, so it goes
 * through A's hold and leaves only after the write's ack.  Returns the
 * value the read returned (1 new, 0 old) or -1.
 */
static int l26_trial(struct t_rng *rng, unsigned cls)
{
	struct oms_hold_config c = cfg_of(OMS_HOLD_PER_DEST);
	struct fabric f;
	struct pkt heldv[8], p;
	unsigned nheld = 0;
	int result = -1;

	memset(&f, 0, sizeof(f));
	if (oms_hold_init(&f.h, &c, NULL, 0))
		return -1;
	f.mem[NODE_B][3] = 0;
	/* Unrelated traffic to B and C, so acks overlap. */
	for (unsigned i = 0, n = t_rng_below(rng, 3); i < n; i++) {
		p = (struct pkt){ .type = PWR, .src = NODE_A,
				  .dst = i & 1 ? NODE_C : NODE_B,
				  .addr = 5, .val = 9 };
		if (oms_hold_post(&f.h, p.dst, &p.id))
			return -1;
		fab_send(&f, &p);
	}
	p = (struct pkt){ .type = PWR, .src = NODE_A, .dst = NODE_B,
			  .addr = 3, .val = 1 };
	if (oms_hold_post(&f.h, NODE_B, &p.id))
		return -1;
	fab_send(&f, &p);
	p = (struct pkt){ .type = RD_REQ, .src = NODE_A, .dst = NODE_B,
			  .cls = cls, .addr = 3 };
	if (a_send_ordered(&f, &p, heldv, &nheld) < 0)
		return -1;
	while (f.nfly) {
		p = fab_take(&f, rng);
		if (p.dst == NODE_A && p.type == PWR_ACK)
			a_on_ack(&f, &p, heldv);
		else if (p.dst == NODE_A && p.type == RD_RSP)
			result = (int)p.val;
		else
			remote_deliver(&f, &p);
	}
	if (oms_hold_held(&f.h) != 0)
		result = -1;
	oms_hold_destroy(&f.h);
	return result;
}

TEST(litmus_L26_read_after_posted_write)
{
	uint64_t seed = t_seed(0x1026);
	unsigned long trials = t_trials(20000), t;
	unsigned long old2 = 0, old1 = 0;
	struct t_rng rng;

	t_rng_init(&rng, seed);
	for (t = 0; t < trials; t++) {
		int r2 = l26_trial(&rng, OMS_HOLD_CLASS2);
		int r1 = l26_trial(&rng, OMS_HOLD_CLASS1);

		ASSERT_TRUE(r2 >= 0 && r1 >= 0)
			TH_LOG("trial %lu seed %#llx", t,
			       (unsigned long long)seed);
		old2 += r2 == 0;
		old1 += r1 == 0;
	}
	TH_LOG("%lu trials each: ordered read saw old value %lu times, "
	       "unordered (control) %lu, seed %#llx", trials, old2, old1,
	       (unsigned long long)seed);
	ASSERT_EQ(0ul, old2);
	ASSERT_GT(old1, 0ul);
}

/* ---- bad arguments ------------------------------------------------------- */

struct hold_snap {
	struct oms_hold h;
	unsigned char mem[65536];
	size_t len;
};

static void hsnap(const struct oms_hold *h, struct hold_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->h = *h;
	s->len = oms_hold_memsize(&h->cfg);
	memcpy(s->mem, h->pkt, s->len);
}

static int hsame(const struct hold_snap *a, const struct hold_snap *b)
{
	return a->len == b->len && !memcmp(&a->h, &b->h, sizeof(a->h)) &&
	       !memcmp(a->mem, b->mem, a->len);
}

TEST(hold_bad_arguments_change_nothing)
{
	static struct hold_snap a, b;
	struct oms_hold_config c = cfg_of(OMS_HOLD_PER_DEST), bad;
	struct oms_hold h;
	uint32_t w0, w1, id;

	bad = c; bad.window = 100;
	ASSERT_EQ(-EINVAL, oms_hold_init(&h, &bad, NULL, 0));
	bad = c; bad.ndest = 0;
	ASSERT_EQ(-EINVAL, oms_hold_init(&h, &bad, NULL, 0));
	bad = c; bad.scope = 7;
	ASSERT_EQ(-EINVAL, oms_hold_init(&h, &bad, NULL, 0));
	bad = c; bad.max_held = 0;
	ASSERT_EQ(-EINVAL, oms_hold_init(&h, &bad, NULL, 0));
	ASSERT_EQ(-EINVAL, oms_hold_init(&h, NULL, NULL, 0));
	ASSERT_EQ(0, oms_hold_init(&h, &c, NULL, 0));
	ASSERT_TRUE(oms_hold_memsize(&c) <= sizeof(a.mem));

	ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &w0));
	ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &w1));
	ASSERT_EQ(OMS_HOLD_HELD, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 5));
	ASSERT_EQ(0, oms_hold_ack(&h, NODE_B, w1));

	/* API misuse: -EINVAL and nothing at all changes. */
	hsnap(&h, &a);
	ASSERT_EQ(-EINVAL, oms_hold_post(&h, NNODES, &id));
	ASSERT_EQ(-EINVAL, oms_hold_post(&h, NODE_B, NULL));
	ASSERT_EQ(-EINVAL, oms_hold_send(&h, NNODES, OMS_HOLD_CLASS2, 0));
	ASSERT_EQ(-EINVAL, oms_hold_send(&h, NODE_B, 3, 0));
	ASSERT_EQ(-EINVAL, oms_hold_send(&h, NODE_B, 0, 0));
	ASSERT_EQ(-EINVAL, oms_hold_send(NULL, NODE_B, OMS_HOLD_CLASS1, 0));
	ASSERT_EQ(-EINVAL, oms_hold_pending(&h, NNODES));
	ASSERT_EQ(-EINVAL, oms_hold_ack(NULL, NODE_B, w0));
	hsnap(&h, &b);
	ASSERT_TRUE(hsame(&a, &b));

	/* Duplicate ack (w1 already acked): -EALREADY, only ack_dup moves. */
	ASSERT_EQ(-EALREADY, oms_hold_ack(&h, NODE_B, w1));
	/* Never-issued id and unknown destination: -ENOENT, ack_unknown. */
	ASSERT_EQ(-ENOENT, oms_hold_ack(&h, NODE_B, w1 + 1));
	ASSERT_EQ(-ENOENT, oms_hold_ack(&h, NODE_B, 0x40000000u));
	ASSERT_EQ(-ENOENT, oms_hold_ack(&h, NODE_C, 0));
	ASSERT_EQ(-ENOENT, oms_hold_ack(&h, 1000, 0));
	hsnap(&h, &b);
	ASSERT_EQ(1u, b.h.cnt.ack_dup);
	ASSERT_EQ(4u, b.h.cnt.ack_unknown);
	b.h.cnt.ack_dup = a.h.cnt.ack_dup;
	b.h.cnt.ack_unknown = a.h.cnt.ack_unknown;
	ASSERT_TRUE(hsame(&a, &b));

	/* The real ack still works; then it becomes a duplicate (below base). */
	ASSERT_EQ(1, oms_hold_ack(&h, NODE_B, w0));
	ASSERT_EQ(1, oms_hold_pop(&h, NULL, NULL));
	ASSERT_EQ(-EALREADY, oms_hold_ack(&h, NODE_B, w0));
	ASSERT_EQ(2u, h.cnt.ack_dup);
	oms_hold_destroy(&h);
}

TEST(hold_full_window_and_pool)
{
	struct oms_hold_config c = cfg_of(OMS_HOLD_PER_DEST);
	static struct hold_snap a, b;
	struct oms_hold h;
	uint32_t ids[256], id;

	c.window = 64;
	c.gwindow = 128;
	c.max_held = 2;
	ASSERT_EQ(0, oms_hold_init(&h, &c, NULL, 0));
	for (unsigned i = 0; i < 64; i++)
		ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &ids[i]));
	ASSERT_EQ(OMS_HOLD_HELD, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 1));
	ASSERT_EQ(OMS_HOLD_HELD, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 2));
	hsnap(&h, &a);
	ASSERT_EQ(-EAGAIN, oms_hold_post(&h, NODE_B, &id));	/* window */
	ASSERT_EQ(-EAGAIN, oms_hold_send(&h, NODE_B, OMS_HOLD_CLASS2, 3));
	/* Acking everything but the oldest does not open the window. */
	for (unsigned i = 1; i < 64; i++)
		ASSERT_EQ(0, oms_hold_ack(&h, NODE_B, ids[i]));
	ASSERT_EQ(-EAGAIN, oms_hold_post(&h, NODE_B, &id));
	/* Another destination still has room, up to the global window. */
	for (unsigned i = 0; i < 64; i++)
		ASSERT_EQ(0, oms_hold_post(&h, NODE_C, &id));
	ASSERT_EQ(-EAGAIN, oms_hold_post(&h, NODE_A, &id));	/* global */
	ASSERT_EQ(2, oms_hold_ack(&h, NODE_B, ids[0]));
	ASSERT_EQ(0, oms_hold_post(&h, NODE_B, &id));
	ASSERT_EQ(64u, id);
	(void)b;
	oms_hold_destroy(&h);
}

TEST_HARNESS_MAIN
