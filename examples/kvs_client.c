// SPDX-License-Identifier: MIT
/*
 * kvs_client: key-value gets with the Single Read protocol.  An item is a
 * version, the value and the version again; one acquire get reads it in
 * address order, so equal versions mean a whole value, with no version in
 * every cache line and no second read.  Updates race the gets here, and
 * not one value comes back torn.
 *
 * Its roles are perftest's: no HOST, the server; a HOST, the client.
 *
 *   ./kvs_client                  serve the table (an RDMA device: verbs)
 *   ./kvs_client HOST             get from HOST's table
 *   ./kvs_client --local          server, writer and client in this process
 *
 *   cc kvs_client.c $(pkg-config --cflags --libs liboms) -o kvs_client
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <oms_kvs.h>

#define PORT	"18520"
#define ITEMS	64
#define GETS	20000

/* A context of node @node; --local's (@emu) on the emulated device. */
static struct oms_ctx *ctx_on(uint32_t node, int emu)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_BACKEND;
	a.node = node;
	a.backend = emu ? OMS_BACKEND_EMU : OMS_BACKEND_AUTO;
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

/*
 * A server or a client in a process of its own on liboms's emulated
 * device (no RDMA device here) would reach nothing outside this process:
 * refused, unless OMS_BACKEND=emu asks for it (then a warning).  0 to go
 * on.
 */
static int alone_on_emu(int server)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	const char *env = getenv("OMS_BACKEND");

	/* an RDMA device, or a failure the context will name */
	if (oms_query_caps(NULL, &caps) || caps.backend != OMS_BACKEND_EMU)
		return 0;
	if (env && !strcmp(env, "emu")) {
		fprintf(stderr, "kvs_client: warning: on the emulated device "
			"(OMS_BACKEND=emu) this %s\n", server ? "table is read "
			"from no other process" : "client reaches servers in "
			"this process only");
		return 0;
	}
	fprintf(stderr, "kvs_client: %s: on the emulated device the %s; load "
		"the NIC's driver and install rdma-core, or make an RDMA device "
		"with Soft-RoCE (sudo modprobe rdma_rxe; sudo rdma link add rxe0 "
		"type rxe netdev IFACE); or run all of it here with --local\n",
		caps.backend_why, server ? "table would be this process's "
		"alone" : "client would reach servers in this process only");
	return 1;
}

static volatile int stop;

/* The server's writer: new versions of random items, as fast as it can. */
static void *write_on(void *w)
{
	while (!stop)
		oms_kvs_update(w, 0, (uint64_t)rand() % ITEMS);
	return NULL;
}

/* GETS gets of random keys, 32 in flight. */
static int get_many(struct oms_ctx *ctx, const char *host)
{
	struct oms_kvs_stats st = { .size = sizeof(st) };
	struct oms_kvs_info info = { .size = sizeof(info) };
	static struct oms_kvs_get g[32];
	struct oms_kvs_get *done[32];
	struct oms_kvs_client *c;
	struct oms_kvs_table *t;
	unsigned long sent = 0;
	int err, n;

	err = oms_kvs_client_create(ctx, host, PORT, NULL, &c);
	if (!err)
		err = oms_kvs_table_open(c, OMS_KVS_SINGLE, 64, &t);
	if (!err)
		err = oms_kvs_table_info(t, &info);
	for (int i = 0; !err && i < 32; i++) {
		g[i] = (struct oms_kvs_get){ .table = t,
					     .buf = malloc(info.buf_size) };
		g[i].key = (uint64_t)rand() % ITEMS;
		err = g[i].buf ? oms_kvs_submit(c, &g[i]) : -ENOMEM;
		sent++;
	}
	while (!err && (n = oms_kvs_poll(c, done, 32)) >= 0) {
		for (int i = 0; i < n && sent < GETS; i++, sent++) {
			done[i]->key = (uint64_t)rand() % ITEMS;
			err = oms_kvs_submit(c, done[i]);
		}
		oms_kvs_client_stats(c, &st);
		if (st.gets + st.failed >= GETS)
			break;
	}
	if (err) {
		fprintf(stderr, "kvs_client: %s:%s: %s%s\n", host, PORT,
			strerror(-err), err == -ECONNREFUSED ? " (no server "
			"there: start kvs_client on it with no HOST)" : "");
		return 1;
	}
	printf("%llu gets of %u-byte values, %llu torn, %llu read again\n",
	       (unsigned long long)st.gets, info.value_size,
	       (unsigned long long)st.torn, (unsigned long long)st.retries);
	oms_kvs_client_destroy(c);
	return st.torn || st.failed;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: kvs_client [--server]       the server: %u items, "
		"a writer updating them\n"
		"       kvs_client [--client] HOST  a client: %u gets from "
		"HOST's table\n"
		"       kvs_client --local          server, writer and client "
		"in this process\n", ITEMS, GETS);
}

int main(int argc, char **argv)
{
	struct oms_kvs_table_spec spec = { .proto = OMS_KVS_SINGLE,
					   .value_size = 64, .items = ITEMS };
	const char *host = NULL;
	int server = 0, local = 0;
	struct oms_kvs_writer *w = NULL;
	struct oms_kvs_server *s = NULL;
	struct oms_ctx *sctx = NULL, *cctx;
	struct addrinfo *ai;
	pthread_t writer;
	int gai, rc = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--server")) {
			server = 1;
		} else if (!strcmp(argv[i], "--local")) {
			local = 1;
		} else if (!strcmp(argv[i], "--client") && i + 1 < argc &&
			   !host) {
			host = argv[++i];
		} else if (argv[i][0] != '-' && !host) {
			host = argv[i];
		} else {
			fprintf(stderr, "kvs_client: '%s' not understood\n",
				argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (server + local + !!host > 1) {
		fprintf(stderr, "kvs_client: a server (no HOST), a client (a "
			"HOST) or --local: one of them\n");
		usage(stderr);
		return 2;
	}
	if (host && (gai = getaddrinfo(host, NULL, NULL, &ai))) {
		fprintf(stderr, "kvs_client: cannot resolve %s: %s\n", host,
			gai_strerror(gai));
		return 1;
	}
	if (host)
		freeaddrinfo(ai);
	if (!local && alone_on_emu(!host))
		return 1;
	if (!host) {	/* the server's side: the table and its writer */
		sctx = ctx_on(1, local);
		if (!sctx || oms_kvs_server_create(sctx, &spec, 1, &s) ||
		    oms_kvs_server_listen(s, local ? "127.0.0.1" : NULL,
					  PORT) ||
		    oms_kvs_writer_create(s, NULL, NULL, &w)) {
			fprintf(stderr, "kvs_client: cannot serve the table\n");
			return 1;
		}
	}
	if (!host && !local) {	/* until killed */
		printf("serving %u items on port %s, updating them\n", ITEMS,
		       PORT);
		fflush(stdout);
		write_on(w);
	}
	if (w && pthread_create(&writer, NULL, write_on, w))
		return 1;
	cctx = ctx_on(0, local);
	if (cctx) {
		rc = get_many(cctx, host ? host : "127.0.0.1");
		oms_ctx_destroy(cctx);
	}
	if (w) {
		stop = 1;
		pthread_join(writer, NULL);
		oms_kvs_writer_destroy(w);
	}
	if (s)
		oms_kvs_server_destroy(s);
	if (sctx)
		oms_ctx_destroy(sctx);
	return rc;
}
