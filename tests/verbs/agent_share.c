// SPDX-License-Identifier: MIT
/*
 * The destination agent serves each requester independently
 * (docs/dest-agent.md, "Sharing"), over Soft-RoCE in the guests, against
 * rxe_server's agent (OMS_RXE_AGENT_PORT, a context of the default 2 s
 * timeout):
 *
 *   - idle connections do not lock a new one out: a node holds at most
 *     VA_PEER_MAX (12) slots; past them a requester that needs the agent
 *     hears why (-EUSERS) while the others are busy or fresh, and gets the
 *     slot of the one idle longest once it has been idle for four
 *     timeouts; a doorbell that counts nothing is not work, and does
 *     not keep a connection from being idle;
 *   - a requester whose QP vanished without a disconnect is found by the
 *     listener's liveness probe and disconnected, on an agent's
 *     connection and on a plain one;
 *   - 256 requesters open at once to one listener of the default slots
 *     (OMS_RXE_MANY_PORT) are each served;
 *   - a well-behaved requester (liboms, numbered operations through the
 *     agent) beside waves of 20 requesters (6 under `make check`) killed
 *     with requests in flight, 2 that keep no receives posted and ring
 *     on, and one that connects and leaves in a loop: no operation fails,
  *     and its p99 stays under three times its p99 alone (both printed).
 *
 * The hostile requesters are processes of their own (raw_peer.h), forked
 * before this one opens a verbs context, so that killing one is what a
 * crash is, and run at the lowest priority: they share the guest's CPUs
 * with the requester they are measured beside.  Environment: OMS_RXE_SERVER, OMS_RXE_AGENT_PORT; without
 * them every test skips (OMS_RXE_PORT, the plain listener, for one).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "raw_peer.h"

#define PEER_MAX	12	/* agent_srv.c's VA_PEER_MAX */
#define IDLE_MS		8000	/* four of the agent's context timeouts */
#define SERVED_MS	10000	/* five: a requester is served by then */
#define OPS		400	/* the well-behaved requester's gets, a run */
#define OPS_QUICK	150	/* ... under `make check` */
#define MAX_OPS		20000	/* ... while it waits for the attack */
#define KILLED		20	/* requesters killed a wave, make check-full */
#define KILLED_QUICK	4	/* make check */
#define SILENT		2
#define MANY		256	/* requesters open at once to one agent */

static const char *agent_port(void)
{
	return getenv("OMS_RXE_AGENT_PORT");
}

/* A liboms context whose destination 0, the agent, is numbered. */
static int seq_ctx(struct oms_ctx **ctx, struct oms_rmr *r)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT |
		      OMS_CTX_ATTR_DEST_SEQ;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = 20000;	/* two TCG guests can stand still */
	a.dest_seq_mask = 1u << 0;
	err = oms_ctx_create(&a, ctx);
	if (err)
		return err;
	err = oms_connect(*ctx, getenv("OMS_RXE_SERVER"), agent_port(), 20000,
			  r);
	if (err) {
		oms_ctx_destroy(*ctx);
		*ctx = NULL;
	}
	return err;
}

/* A raw peer, retrying for 90 s while the server may still be starting. */
static int raw_connect(struct peer *p, uint32_t recvs)
{
	uint64_t end = now_ms() + 90000;
	int err;

	while ((err = peer_connect(p, agent_port(), 0, recvs)) &&
	       err != -EUSERS && now_ms() < end) {
		peer_close(p);
		usleep(300000);
	}
	return err;
}

FIXTURE(share) {
	int ready;	/* the 6.1 harness runs a body after SKIP in setup */
};

FIXTURE_SETUP(share)
{
	if (!getenv("OMS_RXE_SERVER") || !agent_port())
		SKIP(return, "OMS_RXE_SERVER/OMS_RXE_AGENT_PORT not set "
		     "(guest test)");
	self->ready = 1;
}

FIXTURE_TEARDOWN(share)
{
}

/* A node's slots full of idle connections: told why, then served. */
TEST_F(share, idle_connections_do_not_lock_out)
{
	struct peer p[PEER_MAX + 3];
	struct oms_ctx *ctx = NULL;
	struct oms_rmr r;
	uint64_t v = 0;
	int served = 0, busy = 0;

	if (!self->ready)
		return;

	for (int i = 0; i < PEER_MAX + 3; i++) {
		int err = raw_connect(&p[i], CQ_SLOTS);

		served += !err;
		busy += err == -EUSERS;
		EXPECT_TRUE(!err || err == -EUSERS) TH_LOG("peer %d: %s", i,
							   strerror(-err));
	}
	TH_LOG("%d served, %d told the agent is busy", served, busy);
	EXPECT_EQ(PEER_MAX, served);
	EXPECT_EQ(3, busy);
	/* all fresh: numbered operations need the agent, which says why */
	EXPECT_EQ(-EUSERS, seq_ctx(&ctx, &r));
	/* idle for the timeout: the idlest gives its slot away */
	usleep((IDLE_MS + 500) * 1000);
	ASSERT_EQ(0, seq_ctx(&ctx, &r));
	EXPECT_EQ(0, oms_get(ctx, &v, &r, 0, 8, 0));
	EXPECT_EQ(0, oms_quiet(ctx));
	oms_ctx_destroy(ctx);
	for (int i = 0; i < PEER_MAX + 3; i++)
		peer_close(&p[i]);
}

/* A doorbell that counts nothing: a zero-byte WRITE_WITH_IMM of 0 to the
 * ring, its completion taken. */
static int ring_empty(struct peer *p)
{
	struct ibv_send_wr w, *bad;
	uint64_t end = now_ms() + 10000;
	struct ibv_wc wc;

	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w.imm_data = htonl(0);
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = p->reg.agent.ring_addr;
	w.wr.rdma.rkey = p->reg.agent.ring_rkey;
	if (ibv_post_send(p->qp, &w, &bad))
		return -EIO;
	while (now_ms() < end) {
		int n = ibv_poll_cq(p->cq, 1, &wc);

		if (n < 0)
			return -EIO;
		if (n)
			return wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/*
 * A node's slots held by requesters that ring doorbells counting nothing,
 * once a second: no work, so idle all the same; a numbered requester of
 * the same node is told -EUSERS while they are fresh and served once they
 * have been idle four timeouts, within five of the node's slots filling,
 * the doorbells going on meanwhile.
 */
TEST_F(share, empty_doorbells_do_not_hold_slots)
{
	struct peer p[PEER_MAX];
	struct oms_ctx *ctx = NULL;
	struct oms_rmr r;
	uint64_t v = 0, t0, end, rings = 0;
	int served = 0, err = -EUSERS;

	if (!self->ready)
		return;

	for (int i = 0; i < PEER_MAX; i++)
		served += !raw_connect(&p[i], CQ_SLOTS);
	ASSERT_EQ(PEER_MAX, served);
	t0 = now_ms();
	EXPECT_EQ(-EUSERS, seq_ctx(&ctx, &r));
	end = t0 + SERVED_MS;
	while (err == -EUSERS && now_ms() < end) {
		for (int i = 0; i < PEER_MAX; i++)
			if (!ring_empty(&p[i]))
				rings++;
		if (now_ms() >= t0 + IDLE_MS + 250)
			err = seq_ctx(&ctx, &r);
		else
			usleep(1000000);
	}
	TH_LOG("%llu empty doorbells; the numbered requester %s after %llu ms",
	       (unsigned long long)rings, err ? "not served" : "served",
	       (unsigned long long)(now_ms() - t0));
	EXPECT_GE(rings, (uint64_t)PEER_MAX * 4);
	ASSERT_EQ(0, err);
	EXPECT_EQ(0, oms_get(ctx, &v, &r, 0, 8, 0));
	EXPECT_EQ(0, oms_quiet(ctx));
	oms_ctx_destroy(ctx);
	for (int i = 0; i < PEER_MAX; i++)
		peer_close(&p[i]);
}

/* Our cm_id's DISCONNECTED within @ms: the listener closed us.  0, or
 * -ETIMEDOUT. */
static int wait_disconnected(struct peer *p, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	struct rdma_cm_event *ev;

	while (now_ms() < end) {
		struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
		int gone;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(p->ch, &ev))
			return -errno;
		gone = ev->event == RDMA_CM_EVENT_DISCONNECTED;
		rdma_ack_cm_event(ev);
		if (gone)
			return 0;
	}
	return -ETIMEDOUT;
}

/*
 * A requester that vanishes without a word: its QP gone, its connection
 * still established as far as the connection managers know (what a host
 * that lost its link while its process died leaves behind).  Its listener
 * finds out by its liveness probe (a zero-byte write that nobody
 * acknowledges) and disconnects it, so that its slot and memory are not
 * held for ever: our cm_id hears the disconnect.  On @port; the agent's
 * when @agent, else a plain connection.
 */
static void vanished_is_found(struct __test_metadata *_metadata,
			      const char *port, int agent)
{
	uint64_t t0;
	struct peer p;
	int err = peer_connect(&p, port, 0, CQ_SLOTS);

	/* a plain listener says it runs no agent, connected all the same */
	ASSERT_EQ(agent ? 0 : -ENOPROTOOPT, err) TH_LOG("connect: %s",
							strerror(-err));
	rdma_destroy_qp(p.id);	/* nothing said: no DREQ, no error */
	p.qp = NULL;
	t0 = now_ms();
	err = wait_disconnected(&p, 60000);
	TH_LOG("%s connection: disconnected by the listener %llu ms after "
	       "its requester's QP went", agent ? "the agent's" : "a plain",
	       (unsigned long long)(now_ms() - t0));
	EXPECT_EQ(0, err);
	peer_close(&p);
}

TEST_F(share, vanished_requester_is_found)
{
	if (!self->ready)
		return;
	vanished_is_found(_metadata, agent_port(), 1);
}

TEST_F(share, vanished_plain_initiator_is_found)
{
	if (!self->ready)
		return;
	if (!getenv("OMS_RXE_PORT"))
		SKIP(return, "OMS_RXE_PORT not set (the plain listener)");
	vanished_is_found(_metadata, getenv("OMS_RXE_PORT"), 0);
}

/* ---- hostile requesters, each a process ---- */

/* What the attack did, counted where every process of it can add. */
struct attack {
	uint64_t waves;		/* a wave of requesters killed, each time */
	uint64_t in_flight;	/* of them, killed with requests rung */
	uint64_t silent_rings;	/* doorbells of requesters without receives */
	uint64_t reconnects;
};

static struct attack *att_stats;

static void count(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static uint64_t counted(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/*
 * Connect, ring 16 acquire gets of 4 KiB, then wait to be killed.  Says on
 * @ready_fd how its first try went: 'r' rang, 'b' turned away (its node's
 * slots held by the attack's own connections, the dead ones of the last
 * wave among them until the agent closes them; it keeps asking), 'n'
 * neither (the connect or the ring failed).
 */
static void killed_child(int ready_fd)
{
	uint8_t d[16][OMS_AD_LEN];
	struct peer p;
	char c = 'n';
	int err;

	while ((err = raw_connect(&p, CQ_SLOTS)) == -EUSERS) {
		peer_close(&p);
		if (c == 'n' && write(ready_fd, "b", 1) != 1)
			_exit(1);
		c = 'b';
		usleep(300000);
	}
	if (!err) {
		for (uint32_t i = 0; i < 16; i++)
			get_desc(d[i], &p, p.reg.rkey, 0, LAND, 4096 + i);
		if (!send_raw(&p, d, 16, 16) && c == 'n')
			c = 'r';
	}
	if (c != 'b' && write(ready_fd, &c, 1) != 1)
		_exit(1);
	pause();
	_exit(0);
}

/*
 * One wave: @n requesters started, killed once each has told how its
 * first try went: a wave is requesters killed with requests in flight
 * (counted at the kill), and the ones turned away are killed with it, so
 * that a full agent cannot hold a wave (and the attack) back.  No clock:
 * on a slow guest a wave takes as long as its connects do.  0, or -1
 * without a pipe.
 */
static int wave(int n)
{
	pid_t k[KILLED];
	int pfd[2], told = 0, rung = 0;
	char c;

	if (pipe(pfd))
		return -1;
	for (int i = 0; i < n; i++) {
		k[i] = fork();
		if (k[i] < 0) {
			n = i;	/* a wave of those that started */
			break;
		}
		if (!k[i])
			killed_child(pfd[1]);
	}
	for (; told < n && read(pfd[0], &c, 1) == 1; told++)
		rung += c == 'r';
	for (int i = 0; i < n; i++) {
		kill(k[i], SIGKILL);
		waitpid(k[i], NULL, 0);
	}
	close(pfd[0]);
	close(pfd[1]);
	__atomic_add_fetch(&att_stats->in_flight, (uint64_t)rung,
			   __ATOMIC_RELAXED);
	count(&att_stats->waves);
	return 0;
}

/* No receives posted for the answers; ring on, a ring's worth at a time. */
static void silent_child(void)
{
	uint8_t d[16][OMS_AD_LEN];
	struct peer p;

	for (;;) {
		if (raw_connect(&p, 0)) {
			peer_close(&p);
			usleep(100000);
			continue;
		}
		for (uint32_t i = 0; i < 16; i++)
			get_desc(d[i], &p, p.reg.rkey, 0, LAND, 4096 + i);
		while (!send_raw(&p, d, 16, 16)) {
			count(&att_stats->silent_rings);
			usleep(20000);
		}
		peer_close(&p);
	}
}

static void reconnect_child(void)
{
	struct peer p;

	for (;;) {
		raw_connect(&p, CQ_SLOTS);
		peer_close(&p);
		count(&att_stats->reconnects);
	}
}

/* The attack: 2 silent, a reconnect loop, and waves of requesters
 * killed with requests in flight, until killed itself. */
static void attacker(void)
{
	int killed = (int)t_bound(KILLED, KILLED_QUICK);
	pid_t kids[SILENT + 1];

	for (int i = 0; i < SILENT + 1; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			if (i < SILENT)
				silent_child();
			reconnect_child();
		}
	}
	while (!wave(killed))
		;
	for (int i = 0; i < SILENT + 1; i++)
		kill(kids[i], SIGKILL);
	_exit(0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The attack has done at least what @need counts (NULL: nothing). */
static int attack_done(const struct attack *need)
{
	return !need ||
	       (counted(&att_stats->waves) >= need->waves &&
		counted(&att_stats->in_flight) >= need->in_flight &&
		counted(&att_stats->reconnects) >= need->reconnects);
}

/*
 * Gets of 64 bytes, each waited for, OPS (OPS_QUICK) of them and on until
 * the attack has done what @need counts (at most MAX_OPS, or 90 s): their
 * p99 in us, or -errno.  A wave's requesters may all fail to connect, so
 * a wave alone does not say that requesters were killed with requests in
 * flight while this measured: it goes on until they were.
 */
static int64_t p99_us(struct oms_ctx *ctx, struct oms_rmr *r,
		      const struct attack *need)
{
	static uint64_t lat[MAX_OPS];
	uint64_t end = now_us() + 90000000ull;
	const int ops = (int)t_bound(OPS, OPS_QUICK);
	uint8_t buf[64];
	int i;

	for (i = 0; i < MAX_OPS; i++) {
		uint64_t t0 = now_us();
		int err = oms_get(ctx, buf, r, (uint64_t)(i % 64) * 64, 64, 0);

		if (!err)
			err = oms_quiet(ctx);
		if (err)
			return err;
		lat[i] = now_us() - t0;
		if (i + 1 >= ops && (attack_done(need) || now_us() > end))
			break;
	}
	i = i < MAX_OPS ? i + 1 : MAX_OPS;
	qsort(lat, (size_t)i, sizeof(lat[0]), cmp_u64);
	return (int64_t)lat[i * 99 / 100];
}

TEST_F(share, well_behaved_beside_killed_silent_and_reconnecting)
{
	struct oms_ctx *ctx = NULL;
	struct oms_rmr r;
	int64_t alone, after, attacked;
	struct attack before, need = { .waves = 1 };
	pid_t att;
	int go[2];
	char c = 'g';

	if (!self->ready)
		return;
	att_stats = mmap(NULL, sizeof(*att_stats), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, att_stats);
	memset(att_stats, 0, sizeof(*att_stats));
	/* forked before any verbs context of ours */
	ASSERT_EQ(0, pipe(go));
	att = fork();
	ASSERT_LE(0, att);
	if (!att) {
		setpgid(0, 0);	/* its children die with it */
		/* the attack shares this guest's CPUs with the requester it
		 * is measured beside: what is measured is the agent's, not
		 * this guest's scheduler */
		if (nice(19) < 0)
			_exit(1);
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			attacker();
		_exit(0);
	}
	setpgid(att, att);
	close(go[0]);
	ASSERT_EQ(0, seq_ctx(&ctx, &r));
	alone = p99_us(ctx, &r, NULL);
	ASSERT_LT(0, alone) TH_LOG("alone: %s", strerror((int)-alone));
	ASSERT_EQ(1, write(go[1], &c, 1));
	/* a first wave connected, killed, stalled: a run not counted */
	attacked = p99_us(ctx, &r, &need);
	before = *att_stats;
	need = (struct attack){ .waves = before.waves + 1,
				.in_flight = before.in_flight + 1,
				.reconnects = before.reconnects + 1 };
	if (attacked > 0)
		attacked = p99_us(ctx, &r, &need);
	kill(-att, SIGKILL);
	waitpid(att, NULL, 0);
	close(go[1]);
	/* alone again: the guests' own noise on either side (TCG) */
	after = p99_us(ctx, &r, NULL);
	EXPECT_LT(0, after) TH_LOG("after: %s", strerror((int)-after));
	if (after > alone)
		alone = after;
	TH_LOG("p99 of a 64 B numbered get: alone %lld us (the larger of "
	       "before and after), beside the attack "
	       "%lld us (%.1fx)", (long long)alone, (long long)attacked,
	       attacked > 0 ? (double)attacked / (double)alone : 0.0);
	TH_LOG("while measured: %llu requesters killed with requests in "
	       "flight, %llu doorbells of requesters without receives, %llu "
	       "reconnects",
	       (unsigned long long)(att_stats->in_flight - before.in_flight),
	       (unsigned long long)(att_stats->silent_rings -
				    before.silent_rings),
	       (unsigned long long)(att_stats->reconnects - before.reconnects));
	ASSERT_LT(0, attacked) TH_LOG("attacked: %s",
				      strerror((int)-attacked));
	/* the attack happened while it was measured */
	EXPECT_LE(before.waves + 1, att_stats->waves);
	EXPECT_LT(before.in_flight, att_stats->in_flight);
	EXPECT_LT(before.reconnects, att_stats->reconnects);
	EXPECT_LT(attacked, 3 * alone);
	oms_ctx_destroy(ctx);
}

/* A raw peer of @port, retried for 90 s while the server may start. */
static int raw_connect_to(struct peer *p, const char *port)
{
	uint64_t end = now_ms() + 90000;
	int err;

	while ((err = peer_connect(p, port, 0, CQ_SLOTS)) &&
	       err != -EUSERS && now_ms() < end) {
		peer_close(p);
		usleep(300000);
	}
	return err;
}

/*
 * Hundreds of requesters: MANY connections from this host, all open at
 * once, to one listener's agent (rxe_server's PORT + 5: the default slots,
 * two serving threads); each is served, an acquire get of the server's
 * ready word answered with its value.
 */
TEST_F_TIMEOUT(share, many_requesters_each_served, 600)
{
	const char *port = getenv("OMS_RXE_MANY_PORT");
	struct peer *p = calloc(MANY, sizeof(*p));
	uint64_t t0 = now_ms(), t1;
	int connected = 0, served = 0;

	if (!port)
		SKIP(return, "OMS_RXE_MANY_PORT not set");
	ASSERT_NE(NULL, p);
	for (int i = 0; i < MANY; i++) {
		int err = i ? peer_connect(&p[i], port, 0, CQ_SLOTS) :
			  raw_connect_to(&p[i], port);

		EXPECT_EQ(0, err) TH_LOG("requester %d: %s", i, strerror(-err));
		if (err)
			break;
		connected++;
	}
	t1 = now_ms();
	for (int i = 0; i < connected; i++) {
		uint8_t d[1][OMS_AD_LEN];

		get_desc(d[0], &p[i], p[i].reg.rkey, RX_RES_READY, 8,
			 0x6000 + i);
		EXPECT_EQ(0, send_raw(&p[i], d, 1, 1));
	}
	for (int i = 0; i < connected; i++) {
		uint32_t tag = 0;
		int status = -1, err = next_answer(&p[i], &tag, &status);
		uint64_t v;

		memcpy(&v, landing(&p[i]), sizeof(v));
		if (!err && !status && tag == 0x6000u + i && v == 1)
			served++;
		else
			TH_LOG("requester %d: %d, status %d, tag %#x, word %llu",
			       i, err, status, tag, (unsigned long long)v);
	}
	TH_LOG("%d requesters connected in %llu ms, %d served in %llu ms",
	       connected, (unsigned long long)(t1 - t0), served,
	       (unsigned long long)(now_ms() - t1));
	EXPECT_EQ(MANY, served);
	for (int i = 0; i < MANY; i++)
		if (p[i].ch)
			peer_close(&p[i]);
	free(p);
}

TEST_HARNESS_MAIN
