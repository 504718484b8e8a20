// SPDX-License-Identifier: MIT
/*
 * msg_verbs: two processes pass messages over RDMA with no wait between
 * the data and its flag.  The client puts each message weak and its number
 * (the flag) strong: the flag is never visible before the data it names.
 * The server's CPU watches the flag and checks that the data it then reads
 * is that message or a later one, never an older one.
 *
 *   server$ ./msg_verbs --server [ADDRESS]     (an RDMA device: verbs)
 *   client$ ./msg_verbs --client SERVER_ADDRESS
 *   ./msg_verbs --local     both in one process, on the emulated device
 *
 *   cc msg_verbs.c $(pkg-config --cflags --libs liboms) -o msg_verbs
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <oms.h>

#define PORT	"18560"
#define NMSG	1000u
#define FLAG	256		/* the flag's offset; the data is at 0 */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int listening;

/* Watch the flag until the last message: each flag must find its data. */
static int serve(struct oms_ctx *ctx, const char *addr)
{
	static uint64_t region[512];	/* 4 KiB: data, then the flag */
	uint64_t flag = 0, last = 0, data[8], t0;
	unsigned seen = 0, stale = 0;
	struct oms_listener *l;
	struct oms_mr *mr;
	int err;

	err = oms_mr_reg(ctx, region, sizeof(region), OMS_ACCESS_ALL, &mr);
	if (!err)
		err = oms_listen(ctx, addr, PORT, mr, &l);
	if (err) {
		__atomic_store_n(&listening, -1, __ATOMIC_RELEASE);
		return err;
	}
	printf("msg_verbs: listening on %s:%s\n", addr ? addr : "*", PORT);
	fflush(stdout);
	__atomic_store_n(&listening, 1, __ATOMIC_RELEASE);
	for (t0 = now_ms(); last < NMSG && now_ms() - t0 < 120000;) {
		oms_mr_read(mr, FLAG, &flag, sizeof(flag));
		if (flag == last)
			continue;
		oms_mr_read(mr, 0, data, sizeof(data));
		stale += data[0] < flag;	/* older data than its flag */
		seen++;
		last = flag;
	}
	printf("msg_verbs: flag reached %llu (%u changes seen), data older "
	       "than its flag %u times\n", (unsigned long long)last, seen,
	       stale);
	/* The client's last put completes when its NIC has the server's
	 * acknowledgement: closing now could cut that off.  Let it leave. */
	while (oms_listener_peers(l) > 0 && now_ms() - t0 < 120000)
		;
	err = oms_listener_peers(l) ? -ETIMEDOUT : 0;
	if (!err)
		printf("msg_verbs: the client left\n");
	oms_listener_close(l);
	oms_mr_dereg(mr);
	if (err)
		return err;
	return last == NMSG && !stale ? 0 : -EPROTO;
}

/* Each message: the data weak, then its number strong, never waiting. */
static int send_all(struct oms_ctx *ctx, const char *host)
{
	uint64_t data[NMSG][8], flag[NMSG];
	struct oms_rmr dst;
	int err;

	err = oms_connect(ctx, host, PORT, 20000, &dst);
	for (unsigned i = 0; i < NMSG && !err; i++) {
		for (int k = 0; k < 8; k++)
			data[i][k] = i + 1;
		flag[i] = i + 1;
		err = oms_put(ctx, &dst, 0, data[i], sizeof(data[i]),
			      OMS_STORE_WEAK);
		if (!err)
			err = oms_put(ctx, &dst, FLAG, &flag[i], sizeof(flag[i]),
				      OMS_STORE_STRONG);
	}
	if (!err)
		err = oms_quiet(ctx);	/* the buffers may go now */
	if (!err)
		printf("msg_verbs: %u messages sent to %s\n", NMSG, host);
	return err;
}

/* A context of node @node on @backend (0: the machine's choice), or why not. */
static struct oms_ctx *ctx_make(uint32_t node, uint32_t backend)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_caps caps = { .size = sizeof(caps) };
	struct oms_ctx *ctx;
	int err;

	a.comp_mask = OMS_CTX_ATTR_NODE | (backend ? OMS_CTX_ATTR_BACKEND : 0);
	a.node = node;
	a.backend = backend;
	err = oms_ctx_create(&a, &ctx);
	if (!err)
		return ctx;
	oms_query_caps(NULL, &caps);
	fprintf(stderr, "msg_verbs: %s: %s\n", strerror(-err),
		caps.backend_why);
	return NULL;
}

static void *serve_local(void *ctx)
{
	return (void *)(intptr_t)serve(ctx, "127.0.0.1");
}

int main(int argc, char **argv)
{
	int server = argc >= 2 && !strcmp(argv[1], "--server");
	int local = argc == 2 && !strcmp(argv[1], "--local");
	struct oms_ctx *ctx, *sctx;
	pthread_t t;
	void *rc;
	int err;

	if (!server && !local && (argc != 3 || strcmp(argv[1], "--client"))) {
		fprintf(stderr, "usage: msg_verbs --server [ADDRESS] | "
			"--client SERVER_ADDRESS | --local\n");
		return 2;
	}
	ctx = ctx_make(server ? 1 : 0, local ? OMS_BACKEND_EMU : 0);
	if (!ctx)
		return 1;
	if (server) {
		err = serve(ctx, argc > 2 ? argv[2] : NULL);
	} else if (local) {
		/* the server's side on a thread of its own, node 1 */
		sctx = ctx_make(1, OMS_BACKEND_EMU);
		if (!sctx || pthread_create(&t, NULL, serve_local, sctx))
			return 1;
		while (!__atomic_load_n(&listening, __ATOMIC_ACQUIRE))
			;
		err = listening > 0 ? send_all(ctx, "127.0.0.1") : 0;
		oms_ctx_destroy(ctx);	/* the client leaves the server */
		ctx = NULL;
		pthread_join(t, &rc);
		err = err ? err : (int)(intptr_t)rc;
		oms_ctx_destroy(sctx);
	} else {
		err = send_all(ctx, argv[2]);
	}
	if (err)
		fprintf(stderr, "msg_verbs: %s\n", strerror(-err));
	if (ctx)
		oms_ctx_destroy(ctx);
	return err ? 1 : 0;
}
