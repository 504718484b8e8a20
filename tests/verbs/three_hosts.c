// SPDX-License-Identifier: MIT
/*
 * Ordering across three hosts (three QEMU guests with Soft-RoCE on one
 * network, tests/vm/rxe-three.sh): seed 000's strong store is cumulative,
 * it becomes visible only after every earlier ordered store of its
 * context, to any destination.
 *
 *   L02  From the writer host: weak puts of round r's data to the data
 *        host, then a strong put of the flag r to the flag host.  A
 *        reader on the flag host that sees the flag r reads the data
 *        host's last word of the data and must find round r (or later):
 *        never older.  One-sided (the data 256 KiB in one put, so that
 *        the data host is still receiving it for a while) and through
 *        both hosts' destination agents (16 puts of 4 KiB, the agent's
 *        staging slot).  Control: the same one-sided rounds with both
 *        puts unordered: the flag outruns the data and the reader finds
 *        older data (the outcome the strong store forbids can happen).
 *
 * One program, three roles:
 *   three_hosts data PORT SECONDS
 *       the data host: a region served on PORT (one-sided) and PORT + 1
 *       (through the destination agent) until its command word says quit
 *   three_hosts flag PORT SECONDS DATA_HOST DATA_PORT
 *       the flag host: the same, and a reader thread that follows the
 *       flag word and reads the data host for each new value
 *   three_hosts   (OMS_RXE_DATA_HOST, OMS_RXE_FLAG_HOST, OMS_RXE_PORT)
 *       the writer host's tests (TAP); without the variables they skip
 * The reader publishes what it saw in its own region, which the writer
 * reads back with gets: no side channel.
 *
 * Fairness: the writer and the flag host flood the data host's agent
 * with numbered gets at once, each keeping many in flight; both are
 * served, and the agent's own count (its statistics line at close,
 * checked by rxe-three.sh) says that no requester's backlog waited past
 * round-robin's bound behind the other's.  Their shares of the gets are
 * printed, not held to: the guests' CPUs, not the agent, decide how fast
 * each asks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "rxe_client.h"

/* The data host's region: the command word, then the data. */
#define D_CMD		0x0000
#define D_DATA		0x1000
#define D_LEN		(256u << 10)	/* one-sided: one put */
#define D_AGENT_PUT	(4u << 10)	/* through the agent: its slot */
#define D_AGENT_PUTS	16u
#define D_REGION	(D_DATA + D_LEN)

/* The flag host's region: the command word, the flag, the reader's
 * results (what it saw of the experiment named in R_EPOCH). */
#define F_CMD		0x000
#define F_FLAG		0x040	/* (epoch << 32) | round */
#define R_EPOCH		0x080	/* the experiment the results are of */
#define R_SEEN		0x088	/* flag values it read the data for */
#define R_STALE		0x090	/* ... and found older data */
#define R_LAST		0x098	/* the last flag value it handled */
#define R_ERR		0x0a0	/* a get that failed: its -errno */
#define R_FLOOD		0x0c0	/* the flood command it ran, */
#define R_FLOOD_GETS	0x0c8	/* its gets, */
#define R_FLOOD_ERR	0x0d0	/* and its -errno (0: none) */
#define F_REGION	0x1000

#define CMD_QUIT	1
#define CMD_FLOOD	2	/* (epoch << 8) | CMD_FLOOD */

#define FLOOD_MS	2000	/* the flag host floods the agent this long */
#define FLOOD_BURST	64	/* gets in flight, a quiet */

#define ROUNDS		200	/* make check-full */
#define ROUNDS_QUICK	60	/* make check */

static uint8_t *mem;

static uint64_t ld(uint64_t off)
{
	return __atomic_load_n((uint64_t *)(mem + off), __ATOMIC_ACQUIRE);
}

static void st(uint64_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(mem + off), v, __ATOMIC_RELEASE);
}

static struct oms_ctx *verbs_ctx(void)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = 20000;	/* three TCG guests can stand still */
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

/* Serve @len bytes of mem on @port and, through the agent, on @port + 1. */
static int serve(struct oms_ctx *ctx, const char *port, size_t len)
{
	struct oms_listener *l, *la;
	struct oms_mr *mr;
	char aport[16];
	int err;

	snprintf(aport, sizeof(aport), "%d", atoi(port) + 1);
	err = oms_mr_reg(ctx, mem, len, OMS_ACCESS_ALL, &mr);
	if (!err)
		err = oms_listen(ctx, NULL, port, mr, &l);
	setenv("OMS_AGENT", "1", 1);
	if (!err)
		err = oms_listen(ctx, NULL, aport, mr, &la);
	unsetenv("OMS_AGENT");
	if (err)
		fprintf(stderr, "three_hosts: listen on %s and %s: %s\n", port,
			aport, strerror(-err));
	return err;
}

struct reader {
	struct oms_ctx *ctx;
	struct oms_rmr data;
	volatile int stop;
};

/*
 * The flag host's reader: for each new flag value, a get of the data
 * host's last data word, issued after the flag was read.  A value older
 * than the flag's is the outcome L02 forbids.
 */
static void *reader(void *arg)
{
	struct reader *rd = arg;
	uint64_t epoch = 0, last = 0, seen = 0, stale = 0, word;

	while (!rd->stop) {
		uint64_t f = ld(F_FLAG);
		int err;

		if (!f || f == last) {
			sched_yield();
			continue;
		}
		if (f >> 32 != epoch) {
			epoch = f >> 32;
			seen = stale = 0;
			st(R_ERR, 0);
		}
		word = 0;
		err = oms_get(rd->ctx, &word, &rd->data, D_DATA + D_LEN - 8, 8,
			      OMS_READ_RELAXED);
		if (!err)
			err = oms_quiet(rd->ctx);
		if (err) {
			st(R_ERR, (uint64_t)-err);
			if (oms_ctx_resume(rd->ctx))
				break;
		}
		seen++;
		if (!err && word < f)
			stale++;
		last = f;
		st(R_SEEN, seen);
		st(R_STALE, stale);
		st(R_EPOCH, epoch);
		st(R_LAST, f);		/* last: the writer waits on it */
	}
	return NULL;
}

/* A context whose destination 0, @host's agent on @port, orders its
 * operations by number: its gets go through that agent, OMS_DOORBELL_BATCH
 * a doorbell, so that the agent finds backlogs longer than a turn. */
static int seq_connect(const char *host, const char *port,
		       struct oms_ctx **out, struct oms_rmr *r)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT |
		      OMS_CTX_ATTR_DEST_SEQ | OMS_CTX_ATTR_FLAGS;
	a.flags = OMS_CTX_F_DOORBELL_BATCH;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = 20000;
	a.dest_seq_mask = 1u << 0;
	err = oms_ctx_create(&a, out);
	if (!err)
		err = connect_host(*out, host, port, r);
	return err;
}

/* One burst: FLOOD_BURST 64 B gets of the data host's data, then quiet. */
static int flood_burst(struct oms_ctx *ctx, struct oms_rmr *r)
{
	static uint8_t buf[FLOOD_BURST][64];
	int err = 0;

	for (uint32_t i = 0; !err && i < FLOOD_BURST; i++)
		err = oms_get(ctx, buf[i], r, D_DATA + i * 64, 64,
			      OMS_READ_RELAXED);
	return err ? err : oms_quiet(ctx);
}

/* The flag host's part of the flood: bursts to the data host's agent
 * for FLOOD_MS, then the gets done and the error published, the
 * command's value last (the writer waits on it). */
static void flood_from_flag_host(uint64_t cmd, const char *host,
				 const char *data_port)
{
	struct oms_ctx *ctx = NULL;
	uint64_t end, gets = 0;
	struct oms_rmr r;
	char port[16];
	int err;

	snprintf(port, sizeof(port), "%d", atoi(data_port) + 1);
	err = seq_connect(host, port, &ctx, &r);
	end = now_ms() + FLOOD_MS;
	while (!err && now_ms() < end) {
		err = flood_burst(ctx, &r);
		if (!err)
			gets += FLOOD_BURST;
	}
	if (ctx)
		oms_ctx_destroy(ctx);
	st(R_FLOOD_GETS, gets);
	st(R_FLOOD_ERR, (uint64_t)-err);
	st(R_FLOOD, cmd);
}

/* The data and flag hosts: serve until the command word says quit. */
static int host_main(int argc, char **argv)
{
	int flag = !strcmp(argv[1], "flag");
	size_t len = flag ? F_REGION : D_REGION;
	struct reader rd = { 0 };
	struct oms_ctx *ctx;
	pthread_t th;
	time_t end;
	int err;

	if (argc < 4 || (flag && argc < 6)) {
		fprintf(stderr, "usage: %s data PORT SECONDS | flag PORT "
			"SECONDS DATA_HOST DATA_PORT\n", argv[0]);
		return 2;
	}
	end = time(NULL) + atoi(argv[3]);
	mem = aligned_alloc(4096, len);
	ctx = verbs_ctx();
	if (!mem || !ctx)
		return 1;
	memset(mem, 0, len);
	if (flag) {
		rd.ctx = verbs_ctx();
		err = rd.ctx ? connect_host(rd.ctx, argv[4], argv[5],
					    &rd.data) : -ENOMEM;
		if (err) {
			fprintf(stderr, "three_hosts: reader to %s:%s: %s\n",
				argv[4], argv[5], strerror(-err));
			return 1;
		}
		pthread_create(&th, NULL, reader, &rd);
	}
	if (serve(ctx, argv[2], len))
		return 1;
	printf("three_hosts: %s host listening on %s\n", argv[1], argv[2]);
	fflush(stdout);
	while (time(NULL) < end && ld(flag ? F_CMD : D_CMD) != CMD_QUIT) {
		uint64_t cmd = ld(F_CMD);

		if (flag && (cmd & 0xff) == CMD_FLOOD && cmd != ld(R_FLOOD))
			flood_from_flag_host(cmd, argv[4], argv[5]);
		usleep(20000);
	}
	if (flag) {
		rd.stop = 1;
		pthread_join(th, NULL);
		oms_ctx_destroy(rd.ctx);
	}
	oms_ctx_destroy(ctx);
	return ld(flag ? F_CMD : D_CMD) == CMD_QUIT ? 0 : 1;
}

/* ---- the writer host's tests ------------------------------------------ */

static int connect_to(struct oms_ctx *ctx, const char *host, int port_add,
		      struct oms_rmr *r)
{
	char port[16];

	snprintf(port, sizeof(port), "%d", atoi(getenv("OMS_RXE_PORT")) +
		 port_add);
	return connect_host(ctx, host, port, r);
}

/* A new experiment number for each run of the rounds, larger than the
 * last one's: each test runs in its own process, so not a counter, but
 * the guest's monotonic clock in ms (a run of rounds takes longer). */
static uint32_t next_epoch(void)
{
	return (uint32_t)now_ms();
}

FIXTURE(three)
{
	struct oms_ctx *ctx;
	struct oms_rmr data, flag;	/* destinations 0 and 1 */
	uint8_t *bufs;			/* a round's data, two rounds */
	uint64_t flags[2];
};

FIXTURE_SETUP(three)
{
	if (!getenv("OMS_RXE_DATA_HOST") || !getenv("OMS_RXE_FLAG_HOST") ||
	    !getenv("OMS_RXE_PORT"))
		SKIP(return, "OMS_RXE_* not set (guest test)");
	self->bufs = aligned_alloc(4096, 2 * D_LEN);
	ASSERT_NE(NULL, self->bufs);
}

FIXTURE_TEARDOWN(three)
{
	if (self->ctx)
		oms_ctx_destroy(self->ctx);
	free(self->bufs);
}

/* A context with the data host as destination 0 and the flag host as
 * destination 1, one-sided or through their agents (@agent). */
static int writer_ctx(FIXTURE_DATA(three) *self, int agent)
{
	int err;

	if (self->ctx)
		oms_ctx_destroy(self->ctx);
	self->ctx = verbs_ctx();
	if (!self->ctx)
		return -ENOMEM;
	err = connect_to(self->ctx, getenv("OMS_RXE_DATA_HOST"), agent,
			 &self->data);
	if (!err)
		err = connect_to(self->ctx, getenv("OMS_RXE_FLAG_HOST"), agent,
				 &self->flag);
	if (!err && (self->data.dest != 0 || self->flag.dest != 1))
		err = -EXDEV;
	return err;
}

struct outcome {
	uint64_t seen, stale, err;
};

/*
 * @rounds rounds: round r's data (every word r's flag value) to the data
 * host with @data_cls, then the flag to the flag host with @flag_cls;
 * @agent: in 4 KiB puts.  Then what the reader saw of them, once it has
 * handled the last flag (or 60 s have passed: err -ETIMEDOUT).
 */
static struct outcome run_rounds(FIXTURE_DATA(three) *self, int agent,
				 enum oms_store_class data_cls,
				 enum oms_store_class flag_cls, int rounds)
{
	uint64_t epoch = next_epoch(), v = 0, res[5], end;
	struct outcome o = { 0 };
	int err = 0, done = 0;

	for (int r = 1; !err && r <= rounds; r++) {
		uint8_t *buf = self->bufs + (r & 1) * D_LEN;
		uint64_t *flag = &self->flags[r & 1];

		/* the buffers of two rounds ago may be reused */
		err = oms_fence_local(self->ctx);
		v = epoch << 32 | (uint64_t)r;
		for (size_t i = 0; i < D_LEN / 8; i++)
			((uint64_t *)buf)[i] = v;
		*flag = v;
		if (agent) {
			/* the last word's put last, as one-sided RC
			 * places it last */
			for (uint32_t p = 0; !err && p < D_AGENT_PUTS; p++) {
				uint64_t off = D_LEN - (D_AGENT_PUTS - p) *
					       D_AGENT_PUT;

				err = oms_put(self->ctx, &self->data,
					      D_DATA + off, buf + off,
					      D_AGENT_PUT, data_cls);
			}
		} else if (!err) {
			err = oms_put(self->ctx, &self->data, D_DATA, buf,
				      D_LEN, data_cls);
		}
		if (!err)
			err = oms_put(self->ctx, &self->flag, F_FLAG, flag, 8,
				      flag_cls);
	}
	if (!err)
		err = oms_quiet(self->ctx);
	if (err) {
		o.err = (uint64_t)-err;
		return o;
	}
	end = now_ms() + 60000;
	do {
		err = oms_get(self->ctx, res, &self->flag, R_EPOCH,
			      sizeof(res), OMS_READ_RELAXED);
		if (!err)
			err = oms_quiet(self->ctx);
		if (err) {
			o.err = (uint64_t)-err;
			return o;
		}
		/* R_EPOCH, R_SEEN, R_STALE, R_LAST, R_ERR; the reader
		 * writes nothing after it has handled the last flag, so
		 * the read after the one that sees it done is whole */
		if (res[0] == epoch && res[3] == v && ++done == 2)
			break;
		if (done != 1)
			usleep(10000);
	} while (now_ms() < end);
	if (done != 2)
		o.err = ETIMEDOUT;
	else
		o.err = res[4];
	o.seen = res[1];
	o.stale = res[2];
	return o;
}

static void report(struct __test_metadata *_metadata, const char *what,
		   int rounds, struct outcome o)
{
	TH_LOG("%s: %d rounds, the reader read the data for %llu flags, "
	       "older data %llu times%s%s", what, rounds,
	       (unsigned long long)o.seen, (unsigned long long)o.stale,
	       o.err ? ", error: " : "", o.err ? strerror((int)o.err) : "");
}

/* L02 on @agent's path: the reader never finds older data. */
static void l02(struct __test_metadata *_metadata,
		FIXTURE_DATA(three) *self, int agent)
{
	int rounds = (int)t_bound(ROUNDS, ROUNDS_QUICK);
	struct outcome o;

	ASSERT_EQ(0, writer_ctx(self, agent));
	o = run_rounds(self, agent, OMS_STORE_WEAK, OMS_STORE_STRONG, rounds);
	report(_metadata, agent ? "through the agents: weak data, strong flag"
				: "weak data, strong flag", rounds, o);
	ASSERT_EQ(0, o.err);
	EXPECT_GT(o.seen, 0);
	EXPECT_EQ(0, o.stale);
}

TEST_F(three, L02_weak_to_data_host_strong_to_flag_host_one_sided)
{
	l02(_metadata, self, 0);
}

TEST_F(three, L02_weak_to_data_host_strong_to_flag_host_through_agents)
{
	l02(_metadata, self, 1);
}

/*
 * The control: nothing orders the flag after the data, and the reader
 * finds older data behind a newer flag.  How often depends on how the
 * guests' CPUs are shared (one run: 116 of 200 flags, another 6 of 60), so
 * the rounds go on, up to CONTROL_RUNS runs of them, until it has shown.
 */
#define CONTROL_RUNS	10

TEST_F(three, L02_control_unordered_flag_outruns_the_data)
{
	int rounds = (int)t_bound(ROUNDS, ROUNDS_QUICK), run = 0;
	struct outcome o = { 0 };

	ASSERT_EQ(0, writer_ctx(self, 0));
	while (!o.stale && run++ < CONTROL_RUNS) {
		o = run_rounds(self, 0, OMS_STORE_UNORDERED,
			       OMS_STORE_UNORDERED, rounds);
		report(_metadata, "control, unordered data and flag", rounds,
		       o);
		ASSERT_EQ(0, o.err);
	}
	EXPECT_GT(o.stale, 0);
}

/*
 * The agent serves the requesters of two hosts in turn: the flag host
 * floods the data host's agent for FLOOD_MS while the writer floods it
 * too, until the flag host has published what it did (so that the two
 * floods overlap whatever the guests' start-up).  Both are served, no get
 * fails; that neither waited past round-robin's bound is the agent's
 * count, checked on its statistics line (rxe-three.sh).
 */
TEST_F(three, agent_serves_the_requesters_of_two_hosts_in_turn)
{
	uint64_t cmd = (uint64_t)next_epoch() << 8 | CMD_FLOOD, res[3] = { 0 };
	uint64_t end, gets = 0, t0;
	struct oms_ctx *fctx = NULL;
	struct oms_rmr r;
	char port[16];
	int err;

	snprintf(port, sizeof(port), "%d", atoi(getenv("OMS_RXE_PORT")) + 1);
	ASSERT_EQ(0, writer_ctx(self, 0));
	ASSERT_EQ(0, seq_connect(getenv("OMS_RXE_DATA_HOST"), port, &fctx,
				 &r));
	ASSERT_EQ(0, oms_put(self->ctx, &self->flag, F_CMD, &cmd, 8,
			     OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(self->ctx));
	t0 = now_ms();
	end = t0 + FLOOD_MS + 120000;
	do {
		err = flood_burst(fctx, &r);
		if (err)
			break;
		gets += FLOOD_BURST;
		err = oms_get(self->ctx, res, &self->flag, R_FLOOD,
			      sizeof(res), OMS_READ_ACQUIRE);
		if (!err)
			err = oms_quiet(self->ctx);
	} while (!err && res[0] != cmd && now_ms() < end);
	oms_ctx_destroy(fctx);
	/* the flag host writes nothing after the command's value: the read
	 * after the one that saw it is whole */
	if (!err && res[0] == cmd)
		err = oms_get(self->ctx, res, &self->flag, R_FLOOD,
			      sizeof(res), OMS_READ_ACQUIRE);
	if (!err)
		err = oms_quiet(self->ctx);
	TH_LOG("the agent served %llu gets to this host and %llu to the "
	       "flag host (in %llu ms beside it)", (unsigned long long)gets,
	       (unsigned long long)res[1],
	       (unsigned long long)(now_ms() - t0));
	ASSERT_EQ(0, err) TH_LOG("this host's flood: %s", strerror(-err));
	ASSERT_EQ(cmd, res[0]) TH_LOG("the flag host did not report");
	EXPECT_EQ(0, res[2]) TH_LOG("the flag host's flood: %s",
				    strerror((int)res[2]));
	EXPECT_LT(0, gets);
	EXPECT_LT(0, res[1]);
}

/* Last: the hosts quit (their programs exit 0 on it). */
TEST_F(three, hosts_quit_when_told)
{
	uint64_t quit = CMD_QUIT;

	ASSERT_EQ(0, writer_ctx(self, 0));
	ASSERT_EQ(0, oms_put(self->ctx, &self->data, D_CMD, &quit, 8,
			     OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_put(self->ctx, &self->flag, F_CMD, &quit, 8,
			     OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(self->ctx));
}

/* The harness's main, called by ours when no role is given. */
#define main three_hosts_tests
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "data") || !strcmp(argv[1], "flag")))
		return host_main(argc, argv);
	return three_hosts_tests(argc, argv);
}
