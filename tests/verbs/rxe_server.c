// SPDX-License-Identifier: MIT
/*
 * Litmus server for the two-guest verbs tests: exposes RX_REGION bytes
 * with oms_listen and runs an observer thread on this CPU that watches
 * the client's writes land (rxe_proto.h).  Passive otherwise: the
 * client's puts, gets and atomics never involve this program.
 *
 * The same region is served five times: on PORT one-sided, as a
 * listener always does; on PORT + 1 by a listener that runs the
 * destination agent (OMS_AGENT=1 while it is created, docs/dest-agent.md)
 * on two serving threads (OMS_AGENT_THREADS=2) with 16 slots
 * (OMS_AGENT_CONNS), which the agent's tests (litmus_rxe, agent_forge,
 * agent_share, hold_rxe) use; on PORT + 5 by another on two threads with
 * the default slots (agent_share's hundreds of requesters); and on
 * PORT + 3 by another agent, made on a context with OMS_CTX_F_HOLD_GLOBAL
 * (hold_rxe's L24); and on PORT + 4 by an agent made on a context with
 * OMS_CTX_F_NO_ORDERING, which ignores sequence numbers and performs
 * what it reads on arrival (seq_rxe's controls).  A poster thread puts where a client asks
 * (rxe_proto.h), for the agents' class-2 hold.
 *
 * usage: rxe_server PORT [SECONDS]   exits 0 on RX_CMD_QUIT, dies on
 * RX_CMD_DIE, 1 when SECONDS (default 300) pass without a quit.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oms.h"
#include "rxe_proto.h"

static uint8_t *mem;
static volatile int stop;

static uint64_t ld(uint64_t off)
{
	return __atomic_load_n((uint64_t *)(mem + off), __ATOMIC_ACQUIRE);
}

static void st(uint64_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(mem + off), v, __ATOMIC_RELEASE);
}

/* An offset the observer may touch: a word inside the region. */
static int word_ok(uint64_t off)
{
	return off <= RX_REGION - 8 && !(off % 8);
}

static void *observer(void *arg)
{
	uint64_t cur = 0, flag = 0, last = 0, seen = 0, bad = 0, mode = 0;
	uint64_t echo = 0, k = 0;
	uint64_t data[RX_MAX_DATA];
	uint32_t n = 0;

	(void)arg;
	st(RX_RES_READY, 1);
	while (!stop) {
		uint64_t e = ld(RX_EPOCH), f;

		if (e != cur) {
			cur = e;
			n = (uint32_t)ld(RX_NDATA);
			if (n > RX_MAX_DATA)
				n = RX_MAX_DATA;
			flag = ld(RX_FLAG_OFF);
			mode = ld(RX_MODE);
			echo = ld(RX_ECHO_OFF);
			for (uint32_t i = 0; i < n; i++)
				data[i] = ld(RX_DATA_OFF + 8 * i);
			if (!word_ok(flag))
				n = 0, flag = RX_DATA;
			for (uint32_t i = 0; i < n; i++)
				if (!word_ok(data[i]))
					n = 0;
			if (mode == RX_MODE_ECHO && !word_ok(echo))
				mode = RX_MODE_MP;
			if (mode == RX_MODE_WRITER && !n)
				mode = RX_MODE_MP;
			last = ld(flag);
			seen = bad = k = 0;
			st(RX_RES_EPOCH, e);
		}
		if (cur && mode == RX_MODE_WRITER && ld(RX_FINISH) != cur) {
			/* Y then F: stores leave this CPU in order (x86),
			 * the release says so for the compiler too */
			k++;
			st(data[0], k);
			st(flag, k);
			seen = k;
		} else if (mode != RX_MODE_WRITER) {
			f = ld(flag);
			if (f != last) {
				last = f;
				seen++;
				if (mode == RX_MODE_ECHO)
					st(echo, f);
				for (uint32_t i = 0; i < n && mode == RX_MODE_MP;
				     i++)
					if (ld(data[i]) < f)
						bad++;
			}
		}
		if (cur && ld(RX_FINISH) == cur && ld(RX_RES_DONE) != cur) {
			st(RX_RES_SEEN, seen);
			st(RX_RES_BAD, bad);
			st(RX_RES_DONE, cur);
		}
		/* one CPU in the guest: leave it to the network when it
		 * needs it (ksoftirqd) */
		sched_yield();
	}
	return NULL;
}

/*
 * The poster (rxe_proto.h): puts to the client's node, then the flag that
 * its class-2 gets read through the agent.  Its own context, as another
 * program of this process would have: the agent's hold counts the puts of
 * every context of the process.  New connections every run: the client's
 * listener of the last run may be gone.
 */
static int post_trials(struct oms_ctx *ctx, const struct oms_rmr *r,
		       uint8_t *buf)
{
	uint64_t nputs = ld(RX_POST_NPUTS), len = ld(RX_POST_LEN);
	uint64_t trials = ld(RX_POST_TRIALS), nconn = ld(RX_POST_NCONN);
	uint64_t off = ld(RX_POST_OFF);
	int err = 0;

	if (!nputs || !len || len % 8 || nputs * len > RX_POST_MAX ||
	    nconn < 1 || nconn > 2 || off > r[0].len ||
	    nputs * len > r[0].len - off)
		return -EINVAL;
	for (uint64_t k = 1; k <= trials && !err && !stop; k++) {
		st(RX_POST_WHERE, k);
		for (uint64_t j = 0; j < nputs; j++)
			memcpy(buf + j * len + len - 8, &k, 8);
		for (uint64_t j = 0; j < nputs && !err; j++)
			err = oms_put(ctx, &r[j % nconn], off + j * len,
				      buf + j * len, len, OMS_STORE_WEAK);
		if (!err)	/* after the puts are on the wire */
			st(RX_POST_FLAG, k);
		if (!err)
			err = oms_quiet(ctx);
	}
	return err;
}

static uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/*
 * Connects get 60 s: the first one to an address this host has not
 * talked to yet (L24's second address) resolves it first, and the two
 * TCG guests of a loaded CI host once took more than 10 s.  *@conn_ms:
 * how long connecting took, for the log.
 */
static int post_run(const char *host, const char *port, uint8_t *buf,
		    uint64_t *conn_ms)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	uint64_t t0 = mono_ms();
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	struct oms_rmr r[2];
	int err;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = 20000;
	st(RX_POST_WHERE, 0);
	err = oms_ctx_create(&a, &ctx);
	if (err)
		return err;
	for (int i = 0; i < 2 && !err; i++)
		err = oms_connect(ctx, host, port, 60000, &r[i]);
	*conn_ms = mono_ms() - t0;
	if (!err)
		err = oms_mr_reg(ctx, buf, RX_POST_MAX, OMS_ACCESS_ALL, &mr);
	if (!err)
		err = post_trials(ctx, r, buf);
	oms_ctx_destroy(ctx);
	return err;
}

static void *poster(void *arg)
{
	static uint8_t buf[RX_POST_MAX] __attribute__((aligned(4096)));
	uint64_t cur = 0;

	(void)arg;
	while (!stop) {
		uint64_t go = ld(RX_POST_GO);
		char host[32], port[24];
		uint64_t t0, conn_ms = 0;
		int err;

		if (go == cur) {
			usleep(2000);
			continue;
		}
		cur = go;
		st(RX_POST_FLAG, 0);
		st(RX_POST_START, go);
		memcpy(host, mem + RX_POST_HOST, sizeof(host));
		host[sizeof(host) - 1] = 0;
		snprintf(port, sizeof(port), "%llu",
			 (unsigned long long)ld(RX_POST_PORT));
		t0 = mono_ms();
		err = post_run(host, port, buf, &conn_ms);
		printf("rxe_server: poster: epoch %llu to %s:%s: %s after "
		       "%llu ms (connecting: %llu ms)\n",
		       (unsigned long long)go, host, port,
		       err ? strerror(-err) : "done",
		       (unsigned long long)(mono_ms() - t0),
		       (unsigned long long)conn_ms);
		fflush(stdout);
		st(RX_POST_ERR, (uint64_t)-err);
		st(RX_POST_MS, mono_ms() - t0);
		st(RX_POST_DONE, go);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_caps caps = { .size = sizeof(caps) };
	struct oms_listener *l, *la, *lg, *ln, *lm;
	char aport[16], gport[16], nport[16], mport[16];
	struct oms_ctx *ctx, *gctx, *nctx;
	struct oms_mr *mr, *gmr, *nmr;
	pthread_t th, pth;
	time_t end;
	int err, rc = 1;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PORT [SECONDS]\n", argv[0]);
		return 2;
	}
	end = time(NULL) + (argc > 2 ? atoi(argv[2]) : 300);
	a.comp_mask = OMS_CTX_ATTR_BACKEND;
	a.backend = OMS_BACKEND_VERBS;
	err = oms_ctx_create(&a, &ctx);
	if (err) {
		fprintf(stderr, "rxe_server: context: %s\n", strerror(-err));
		return 1;
	}
	oms_query_caps(ctx, &caps);
	printf("rxe_server: device %s numa %d ordering %s\n", caps.device,
	       caps.numa_node, caps.dest_ordering);
	mem = aligned_alloc(4096, RX_REGION);
	if (!mem)
		return 1;
	memset(mem, 0, RX_REGION);
	/* before any listener: a client that connects at once finds the
	 * observer running (RX_RES_READY) */
	pthread_create(&th, NULL, observer, NULL);
	pthread_create(&pth, NULL, poster, NULL);
	err = oms_mr_reg(ctx, mem, RX_REGION, OMS_ACCESS_ALL, &mr);
	if (!err)
		err = oms_listen(ctx, NULL, argv[1], mr, &l);
	if (err) {
		fprintf(stderr, "rxe_server: listen on %s: %s\n", argv[1],
			strerror(-err));
		return 1;
	}
	snprintf(aport, sizeof(aport), "%d", atoi(argv[1]) + 1);
	snprintf(gport, sizeof(gport), "%d", atoi(argv[1]) + 3);
	snprintf(nport, sizeof(nport), "%d", atoi(argv[1]) + 4);
	snprintf(mport, sizeof(mport), "%d", atoi(argv[1]) + 5);
	a.comp_mask |= OMS_CTX_ATTR_FLAGS;
	a.flags = OMS_CTX_F_HOLD_GLOBAL;
	setenv("OMS_AGENT", "1", 1);
	/* two serving threads on the guest's one CPU: the agent's tests
	 * run with connections dealt to both, each stream kept by one; 16
	 * slots, 12 for a node, that agent_share fills */
	setenv("OMS_AGENT_THREADS", "2", 1);
	setenv("OMS_AGENT_CONNS", "16", 1);
	err = oms_listen(ctx, NULL, aport, mr, &la);
	unsetenv("OMS_AGENT_CONNS");
	/* the default slots, for agent_share's hundreds of requesters */
	if (!err)
		err = oms_listen(ctx, NULL, mport, mr, &lm);
	unsetenv("OMS_AGENT_THREADS");
	if (!err)
		err = oms_ctx_create(&a, &gctx);
	if (!err)
		err = oms_mr_reg(gctx, mem, RX_REGION, OMS_ACCESS_ALL, &gmr);
	if (!err)
		err = oms_listen(gctx, NULL, gport, gmr, &lg);
	a.flags = OMS_CTX_F_NO_ORDERING;
	if (!err)
		err = oms_ctx_create(&a, &nctx);
	if (!err)
		err = oms_mr_reg(nctx, mem, RX_REGION, OMS_ACCESS_ALL, &nmr);
	if (!err)
		err = oms_listen(nctx, NULL, nport, nmr, &ln);
	unsetenv("OMS_AGENT");
	if (err) {
		fprintf(stderr, "rxe_server: listen with the agents on %s, %s "
			"and %s: %s\n", aport, gport, nport, strerror(-err));
		return 1;
	}
	printf("rxe_server: listening on port %s, with the agent on %s (of "
	       "global hold scope on %s, ordering nothing on %s)\n", argv[1],
	       aport, gport, nport);
	fflush(stdout);
	while (time(NULL) < end) {
		uint64_t cmd = ld(RX_CMD);

		if (cmd == RX_CMD_DIE) {
			printf("rxe_server: dying as asked\n");
			fflush(stdout);
			raise(SIGKILL);
		}
		if (cmd == RX_CMD_QUIT) {
			rc = 0;
			break;
		}
		usleep(20000);
	}
	if (rc)
		fprintf(stderr, "rxe_server: no quit within the time\n");
	stop = 1;
	pthread_join(th, NULL);
	pthread_join(pth, NULL);
	oms_ctx_destroy(nctx);
	oms_ctx_destroy(gctx);
	oms_ctx_destroy(ctx);
	free(mem);
	return rc;
}
