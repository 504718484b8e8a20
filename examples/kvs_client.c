// SPDX-License-Identifier: MIT
/*
 * kvs_client: key-value gets with the Single Read protocol.  An item is a
 * version, the value and the version again; one acquire get reads it in
 * address order, so equal versions mean a whole value, with no version in
 * every cache line and no second read.  Updates race the gets here, and
 * not one value comes back torn.
 *
 *   ./kvs_client                  server, writer and client in this process
 *   ./kvs_client --server         serve the table (an RDMA device: verbs)
 *   ./kvs_client --client HOST    get from HOST's table
 *
 *   cc kvs_client.c $(pkg-config --cflags --libs liboms) -o kvs_client
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <oms_kvs.h>

#define PORT	"18520"
#define ITEMS	64
#define GETS	20000

static struct oms_ctx *ctx_on(uint32_t node)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_NODE;
	a.node = node;
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
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
		fprintf(stderr, "kvs_client: %s\n", strerror(-err));
		return 1;
	}
	printf("%llu gets of %u-byte values, %llu torn, %llu read again\n",
	       (unsigned long long)st.gets, info.value_size,
	       (unsigned long long)st.torn, (unsigned long long)st.retries);
	oms_kvs_client_destroy(c);
	return st.torn || st.failed;
}

int main(int argc, char **argv)
{
	struct oms_kvs_table_spec spec = { .proto = OMS_KVS_SINGLE,
					   .value_size = 64, .items = ITEMS };
	int server = argc > 1 && !strcmp(argv[1], "--server");
	const char *host = argc > 2 && !strcmp(argv[1], "--client") ?
			   argv[2] : NULL;
	struct oms_kvs_writer *w = NULL;
	struct oms_kvs_server *s = NULL;
	struct oms_ctx *sctx = NULL, *cctx;
	pthread_t writer;
	int rc = 1;

	if (!host) {	/* the server's side: the table and its writer */
		sctx = ctx_on(1);
		if (!sctx || oms_kvs_server_create(sctx, &spec, 1, &s) ||
		    oms_kvs_server_listen(s, server ? NULL : "127.0.0.1", PORT) ||
		    oms_kvs_writer_create(s, NULL, NULL, &w)) {
			fprintf(stderr, "kvs_client: cannot serve the table\n");
			return 1;
		}
	}
	if (server) {	/* until killed */
		printf("serving %u items on port %s, updating them\n", ITEMS,
		       PORT);
		write_on(w);
	}
	if (w && pthread_create(&writer, NULL, write_on, w))
		return 1;
	cctx = ctx_on(0);
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
