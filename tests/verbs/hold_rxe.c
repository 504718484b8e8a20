// SPDX-License-Identifier: MIT
/*
 * Seed 002's class-2 hold through the destination agent, between two
 * hosts (two QEMU guests with Soft-RoCE in `make check`):
 *
 *   L23  the server's poster (rxe_proto.h) puts to this host, then sets a
 *        flag in its own memory; this host reads the flag with class-2
 *        gets through the server's agent: an answer carrying the flag may
 *        not arrive before the puts that preceded it are in this host's
 *        memory.  Control: class-1 gets of the same flag through the same
 *        agent, answered at once, see the flag before the data.
 *   L24  the poster puts to another node (a second address of this
 *        host): an agent of global scope holds the answer until they are
 *        in place; the control, the default agent (per destination),
 *        lets it go first.
 *   L25  the same as L23 with four puts per trial over two connections,
 *        whose acknowledgements come back in any order between them.
 *   L26  a put, then a class-2 get of the same bytes from the same
 *        requester, returns the new value.  Control: the put on another
 *        connection (another QP), which nothing orders against the get.
 * And a class-2 get to a listener without an agent is refused
 * (-EOPNOTSUPP) and changes nothing.  This host's own listener with the
 * agent on three serving threads (OMS_AGENT_THREADS) serves each of its
 * connections, dealt over them; a setting out of range is refused.
 *
 * The poster's puts are on its own context: the agent's hold counts the
 * puts of every context of its process (docs/dest-agent.md).
 *
 * Environment: OMS_RXE_SERVER, OMS_RXE_PORT, OMS_RXE_AGENT_PORT,
 * OMS_RXE_GLOBAL_PORT (the server's listeners), OMS_RXE_SELF and
 * OMS_RXE_SELF2 (this host's addresses, for the poster) and
 * OMS_RXE_BACK_PORT (where this program listens for it); without them
 * every test skips (this program is meant for the guest).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "rxe_client.h"
#include "rxe_proto.h"

#define TRIALS		60	/* poster trials per run, make check-full */
#define TRIALS_QUICK	20	/* make check: the controls show 50-70 % */
#define CONTROL_RUNS	10	/* control runs, until one shows it */
#define CTL_LEN		(RX_REGION - RX_BULK - 0x40000)	/* L26's control */

static uint8_t back[RX_POST_MAX] __attribute__((aligned(4096)));
static uint8_t bulk[CTL_LEN] __attribute__((aligned(4096)));

FIXTURE(hold)
{
	struct oms_ctx *ctx;
	struct oms_mr *back_mr, *bulk_mr;
	struct oms_listener *l;
	struct oms_rmr ag;	/* the server's region, through its agent */
	struct oms_rmr plain;	/* the same region, one-sided only */
	struct oms_rmr global;	/* through an agent of global scope */
};

FIXTURE_SETUP(hold)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	if (!getenv("OMS_RXE_SERVER") || !getenv("OMS_RXE_AGENT_PORT") ||
	    !getenv("OMS_RXE_PORT") || !getenv("OMS_RXE_SELF") ||
	    !getenv("OMS_RXE_BACK_PORT") || !getenv("OMS_RXE_GLOBAL_PORT") ||
	    !getenv("OMS_RXE_SELF2"))
		SKIP(return, "OMS_RXE_* not set (guest test)");
	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = 20000;
	ASSERT_EQ(0, oms_ctx_create(&a, &self->ctx));
	ASSERT_EQ(0, oms_mr_reg(self->ctx, back, sizeof(back),
				OMS_ACCESS_ALL, &self->back_mr));
	ASSERT_EQ(0, oms_mr_reg(self->ctx, bulk, sizeof(bulk),
				OMS_ACCESS_ALL, &self->bulk_mr));
	ASSERT_EQ(0, oms_listen(self->ctx, NULL, getenv("OMS_RXE_BACK_PORT"),
				self->back_mr, &self->l));
	ASSERT_EQ(0, connect_port(self->ctx, getenv("OMS_RXE_AGENT_PORT"),
				  &self->ag));
	ASSERT_EQ(0, connect_port(self->ctx, getenv("OMS_RXE_PORT"),
				  &self->plain));
	ASSERT_EQ(0, connect_port(self->ctx, getenv("OMS_RXE_GLOBAL_PORT"),
				  &self->global));
}

FIXTURE_TEARDOWN(hold)
{
	if (self->ctx)
		oms_ctx_destroy(self->ctx);
}

static int put_word(FIXTURE_DATA(hold) *self, uint64_t off, uint64_t v)
{
	int err = oms_put(self->ctx, &self->ag, off, &v, 8, OMS_STORE_WEAK);

	return err ? err : oms_quiet(self->ctx);
}

static int get_word(FIXTURE_DATA(hold) *self, uint64_t off, uint64_t *v)
{
	int err = oms_get(self->ctx, v, &self->plain, off, 8, 0);

	return err ? err : oms_quiet(self->ctx);
}

struct run {
	uint64_t reads, seen, bad;
	int err;
	const char *who;	/* of err: "the poster", "the reader" */
	uint64_t where, ms;	/* the poster's: its trial (0: connecting),
				 * how long it ran */
};

/*
 * What the poster puts back to this host, and through which of the
 * server's agents the flag is read.  The poster names this host by
 * OMS_RXE_SELF (the address this host's connections come from: the
 * reader's node) or, for L24, by OMS_RXE_SELF2, a second address of this
 * host, which is another node to the agent (nodes are addresses,
 * docs/dest-agent.md): the bytes land in the same memory, so they are
 * checked the same way.
 */
struct post {
	uint64_t nputs, len, nconn;
	int other_node;			/* to OMS_RXE_SELF2 */
	const struct oms_rmr *via;	/* the agent that answers */
	unsigned int flags;		/* of the flag's gets */
};

/*
 * One run of the poster, read meanwhile with gets of the flag.  seen:
 * answers that carried a new flag; bad: of which the data of that trial
 * was not all in place when the answer was.
 */
static struct run post_run(FIXTURE_DATA(hold) *self, const struct post *p)
{
	static uint64_t epoch;
	char host[32] = { 0 };
	struct run r = { 0 };
	uint64_t e = ++epoch + (uint64_t)now_ms() * 16, last = 0, v = 0;
	uint64_t end = now_ms() + 300000;
	uint64_t trials = t_bound(TRIALS, TRIALS_QUICK);

	snprintf(host, sizeof(host), "%s",
		 getenv(p->other_node ? "OMS_RXE_SELF2" : "OMS_RXE_SELF"));
	memset(back, 0, p->nputs * p->len);
	r.err = oms_put(self->ctx, &self->plain, RX_POST_HOST, host,
			sizeof(host), OMS_STORE_WEAK);
	r.err = r.err ? r.err : oms_quiet(self->ctx);
	r.err = r.err ? r.err :
		put_word(self, RX_POST_PORT,
			 strtoull(getenv("OMS_RXE_BACK_PORT"), NULL, 10));
	r.err = r.err ? r.err : put_word(self, RX_POST_OFF, 0);
	r.err = r.err ? r.err : put_word(self, RX_POST_NPUTS, p->nputs);
	r.err = r.err ? r.err : put_word(self, RX_POST_LEN, p->len);
	r.err = r.err ? r.err : put_word(self, RX_POST_TRIALS, trials);
	r.err = r.err ? r.err : put_word(self, RX_POST_NCONN, p->nconn);
	r.err = r.err ? r.err : put_word(self, RX_POST_GO, e);
	/* the last run's flag is gone once the poster started this one */
	while (!r.err && v != e && now_ms() < end)
		r.err = get_word(self, RX_POST_START, &v);
	while (!r.err && now_ms() < end) {
		uint64_t done = 0;

		r.err = oms_get(self->ctx, &v, p->via, RX_POST_FLAG, 8,
				p->flags);
		if (!r.err)
			r.err = oms_quiet(self->ctx);
		if (r.err)
			break;
		r.reads++;
		if (v > last && v <= trials) {
			/* the answer is here: so must every put before it */
			int late = 0;

			for (uint64_t j = 0; j < p->nputs; j++)
				late |= __atomic_load_n((uint64_t *)(back +
					j * p->len + p->len - 8),
					__ATOMIC_ACQUIRE) < v;
			r.seen++;
			r.bad += late;
			last = v;
		}
		r.err = get_word(self, RX_POST_DONE, &done);
		if (!r.err && done == e) {
			r.err = get_word(self, RX_POST_ERR, &done);
			if (!r.err && done) {
				r.err = -(int)done;
				r.who = "the poster";
				get_word(self, RX_POST_WHERE, &r.where);
				get_word(self, RX_POST_MS, &r.ms);
			}
			return r;
		}
	}
	if (!r.err) {
		r.err = -ETIMEDOUT;
		r.who = "the reader: the poster never said it was done";
	}
	return r;
}

static void log_err(struct __test_metadata *_metadata, const char *id,
		    const struct run *r)
{
	if (r->err && r->who && !strcmp(r->who, "the poster"))
		TH_LOG("%s: %s from the poster, %s %llu, after %llu ms", id,
		       strerror(-r->err), r->where ? "at trial" :
		       "connecting, trial", (unsigned long long)r->where,
		       (unsigned long long)r->ms);
	else if (r->err)
		TH_LOG("%s: %s from %s", id, strerror(-r->err),
		       r->who ? r->who : "the reader's gets");
}

/* @p's class-2 run: nothing late; then its control, until one shows it:
 * @ctl, or @p with class-1 gets. */
static void hold_shape(struct __test_metadata *_metadata,
		       FIXTURE_DATA(hold) *self, const char *id,
		       const struct post *p, const struct post *ctl)
{
	struct post c1 = *p;
	struct run r = post_run(self, p);
	uint64_t hits = 0, seen = 0, reads = 0;

	TH_LOG("%s class 2: %llu reads, %llu saw a new flag, %llu before "
	       "their data", id, (unsigned long long)r.reads,
	       (unsigned long long)r.seen, (unsigned long long)r.bad);
	log_err(_metadata, id, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(0, r.bad);
	EXPECT_GT(r.seen, 0);
	c1.flags = OMS_READ_ACQUIRE;
	for (int i = 0; i < CONTROL_RUNS && !hits; i++) {
		r = post_run(self, ctl ? ctl : &c1);
		log_err(_metadata, id, &r);
		ASSERT_EQ(0, r.err);
		hits += r.bad;
		seen += r.seen;
		reads += r.reads;
	}
	TH_LOG("%s control (%s): %llu reads, %llu of %llu new flags "
	       "arrived before their data", id,
	       ctl ? "class 2, per-destination scope" : "class 1",
	       (unsigned long long)reads, (unsigned long long)hits,
	       (unsigned long long)seen);
	EXPECT_GT(hits, 0);
}

TEST_F_TIMEOUT(hold, litmus_L23_class2_answer_after_posted_write_agent, 900)
{
	struct post p = { .nputs = 1, .len = RX_POST_MAX, .nconn = 1,
			  .via = &self->ag,
			  .flags = OMS_READ_ACQUIRE | OMS_READ_RESP_ORDERED };

	hold_shape(_metadata, self, "L23", &p, NULL);
}

TEST_F_TIMEOUT(hold, litmus_L25_counting_over_two_connections_agent, 900)
{
	struct post p = { .nputs = 4, .len = RX_POST_MAX / 4, .nconn = 2,
			  .via = &self->ag,
			  .flags = OMS_READ_ACQUIRE | OMS_READ_RESP_ORDERED };

	hold_shape(_metadata, self, "L25", &p, NULL);
}

/*
 * L24: the poster puts to another node than the reader's (this host's
 * second address), the reader reads the flag through the agent of a
 * listener made on a context with OMS_CTX_F_HOLD_GLOBAL: held.  Control:
 * the default agent, per destination, which a put to another node does
 * not hold (allowed).
 */
TEST_F_TIMEOUT(hold, litmus_L24_global_scope_holds_behind_a_third_node_agent,
	       900)
{
	struct post p = { .nputs = 1, .len = RX_POST_MAX, .nconn = 1,
			  .other_node = 1, .via = &self->global,
			  .flags = OMS_READ_ACQUIRE | OMS_READ_RESP_ORDERED };
	struct post ctl = p;

	ctl.via = &self->ag;
	hold_shape(_metadata, self, "L24", &p, &ctl);
}

/*
 * L26: a put of X then a class-2 get of X from this requester, on the
 * agent's connection: the get returns the put's value.  Control: the
 * put (a bulk write ending in X) on the one-sided connection, another
 * QP: the get through the agent may read X before it lands.
 */
TEST_F_TIMEOUT(hold, litmus_L26_class2_get_after_put_agent, 600)
{
	const uint64_t x = RX_SCRATCH + 64;
	uint64_t v, old = 0;

	for (uint64_t i = 1; i <= 200; i++) {
		ASSERT_EQ(0, oms_put(self->ctx, &self->ag, x, &i, 8,
				     OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_get(self->ctx, &v, &self->ag, x, 8,
				     OMS_READ_RESP_ORDERED));
		ASSERT_EQ(0, oms_quiet(self->ctx));
		EXPECT_EQ(i, v);
	}
	for (uint64_t i = 1; i <= 200 && !old; i++) {
		uint64_t end = RX_BULK + CTL_LEN - 8;

		memcpy(bulk + CTL_LEN - 8, &i, 8);
		ASSERT_EQ(0, oms_put(self->ctx, &self->plain, RX_BULK, bulk,
				     CTL_LEN, OMS_STORE_WEAK));
		ASSERT_EQ(0, oms_get(self->ctx, &v, &self->ag, end, 8,
				     OMS_READ_RESP_ORDERED));
		ASSERT_EQ(0, oms_quiet(self->ctx));
		old += v != i;
	}
	TH_LOG("L26 control (the put on another QP): the get read the old "
	       "value %llu times", (unsigned long long)old);
	EXPECT_GT(old, 0);
}

/* A listener without an agent holds nothing: a class-2 get there is
 * refused at once and changes nothing; the capability query says which
 * destination holds. */
TEST_F(hold, class2_get_without_an_agent_is_refused)
{
	uint64_t v = 0x5a5a;
	struct oms_caps c = { .size = sizeof(c) };

	EXPECT_EQ(-EOPNOTSUPP, oms_get(self->ctx, &v, &self->plain, 0, 8,
				       OMS_READ_RESP_ORDERED));
	EXPECT_EQ(0x5a5a, v);
	EXPECT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(0, oms_get(self->ctx, &v, &self->ag, RX_RES_READY, 8,
			     OMS_READ_RESP_ORDERED));
	EXPECT_EQ(0, oms_quiet(self->ctx));
	EXPECT_EQ(1, v);
	ASSERT_EQ(0, oms_query_caps(self->ctx, &c));
	EXPECT_TRUE(c.flags & OMS_CAP_RESP_HOLD);
	EXPECT_STREQ("source", c.dest_ordering);
}

#define POOL_CONNS	6	/* two for each of three serving threads */
#define POOL_LEN	4096

static uint8_t pool_mem[POOL_CONNS * POOL_LEN] __attribute__((aligned(4096)));

static struct oms_ctx *verbs_ctx(void)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = 20000;
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

/* This host's listener with the agent, @name=@value in its environment
 * (OMS_AGENT_THREADS, OMS_AGENT_CONNS), on the back port + 20 (into
 * @port). */
static int agent_listen(struct oms_ctx *ctx, struct oms_mr *mr,
			const char *name, const char *value, char *port,
			struct oms_listener **l)
{
	int err;

	snprintf(port, 16, "%d", atoi(getenv("OMS_RXE_BACK_PORT")) + 20);
	setenv("OMS_AGENT", "1", 1);
	setenv(name, value, 1);
	err = oms_listen(ctx, NULL, port, mr, l);
	unsetenv(name);
	unsetenv("OMS_AGENT");
	return err;
}

/* OMS_AGENT_THREADS not 1..64, OMS_AGENT_CONNS not 1..1024, or not a
 * number: oms_listen() says -EINVAL and listens on nothing (the port is
 * free for the next). */
TEST(agent_settings_out_of_range_refused)
{
	static const char *const bad[][2] = {
		{ "OMS_AGENT_THREADS", "0" }, { "OMS_AGENT_THREADS", "65" },
		{ "OMS_AGENT_THREADS", "-1" }, { "OMS_AGENT_THREADS", "2x" },
		{ "OMS_AGENT_THREADS", "two" }, { "OMS_AGENT_CONNS", "0" },
		{ "OMS_AGENT_CONNS", "1025" }, { "OMS_AGENT_CONNS", "16k" },
	};
	struct oms_listener *l;
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	char port[16];

	if (!getenv("OMS_RXE_BACK_PORT"))
		SKIP(return, "OMS_RXE_* not set (guest test)");
	ctx = verbs_ctx();
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, oms_mr_reg(ctx, pool_mem, sizeof(pool_mem),
				OMS_ACCESS_ALL, &mr));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		l = NULL;
		EXPECT_EQ(-EINVAL, agent_listen(ctx, mr, bad[i][0], bad[i][1],
						port, &l))
			TH_LOG("%s=%s", bad[i][0], bad[i][1]);
		EXPECT_EQ(NULL, l);
	}
	ASSERT_EQ(0, agent_listen(ctx, mr, "OMS_AGENT_CONNS", "1024", port,
				  &l));
	EXPECT_EQ(0, oms_listener_close(l));
	oms_ctx_destroy(ctx);
}

/*
 * Three serving threads, six requesters' connections dealt over them:
 * each says the agent serves it, and each one's acquire gets, taken in
 * turn over all six, read what the owner wrote.
 */
TEST(agent_on_three_threads_serves_every_connection)
{
	struct oms_caps c = { .size = sizeof(c) };
	struct oms_ctx *ctx, *req;
	struct oms_rmr r[POOL_CONNS];
	struct oms_listener *l;
	struct oms_mr *mr;
	uint8_t got[POOL_LEN];
	char port[16];
	int bad = 0;

	if (!getenv("OMS_RXE_BACK_PORT") || !getenv("OMS_RXE_SELF"))
		SKIP(return, "OMS_RXE_* not set (guest test)");
	for (size_t i = 0; i < sizeof(pool_mem); i++)
		pool_mem[i] = (uint8_t)(i * 7 + i / POOL_LEN);
	ctx = verbs_ctx();
	req = verbs_ctx();
	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, req);
	ASSERT_EQ(0, oms_mr_reg(ctx, pool_mem, sizeof(pool_mem),
				OMS_ACCESS_ALL, &mr));
	ASSERT_EQ(0, agent_listen(ctx, mr, "OMS_AGENT_THREADS", "3", port,
				  &l));
	for (int i = 0; i < POOL_CONNS; i++) {
		ASSERT_EQ(0, oms_connect(req, getenv("OMS_RXE_SELF"), port,
					 3000, &r[i]));
		ASSERT_EQ(0, oms_query_caps(req, &c));
		EXPECT_STREQ("agent", c.dest_ordering) TH_LOG("connection %d", i);
	}
	for (int round = 0; round < 20; round++)
		for (int i = 0; i < POOL_CONNS; i++) {
			uint64_t off = (uint64_t)((i + round) % POOL_CONNS) *
				       POOL_LEN;

			memset(got, 0, sizeof(got));
			ASSERT_EQ(0, oms_get(req, got, &r[i], off, POOL_LEN,
					     OMS_READ_ACQUIRE));
			ASSERT_EQ(0, oms_quiet(req));
			bad += !!memcmp(got, pool_mem + off, POOL_LEN);
		}
	EXPECT_EQ(0, bad);
	oms_ctx_destroy(req);
	EXPECT_EQ(0, oms_listener_close(l));
	oms_ctx_destroy(ctx);
}

TEST_HARNESS_MAIN
