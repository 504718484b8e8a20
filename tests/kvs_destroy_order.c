// SPDX-License-Identifier: MIT
/*
 * Destroying KVS objects and the contexts they were made with, in any
 * order, is safe.  The rule (include/oms.h, docs/api.md): a context with
 * a KVS server, client or writer made with it refuses oms_ctx_destroy()
 * with -EBUSY and changes nothing; it goes once they have gone.  Before,
 * the context freed the region and listener a server or client still
 * owned, and destroying that object afterwards was a use-after-free
 * (the ASan build reports it).
 *
 * Every order of destroying the six objects of a small deployment (three
 * contexts; a server, a client and a Pessimistic writer on them) is
 * tried; each call must return 0 or the documented -EBUSY, and whatever
 * was refused goes at the end.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_kvs.h"

#define PORT "7790"

static const struct oms_kvs_table_spec spec[] = {
	{ .proto = OMS_KVS_SINGLE, .value_size = 64, .items = 4 },
	{ .proto = OMS_KVS_PESSIMISTIC, .value_size = 64, .items = 4 },
};

enum { SRV_CTX, CLI_CTX, W_CTX, SERVER, CLIENT, WRITER, NOBJ };

struct deploy {
	struct oms_ctx *ctx[3];
	struct oms_kvs_server *s;
	struct oms_kvs_client *c;
	struct oms_kvs_writer *w;
	int alive[NOBJ];
};

static int deploy(struct deploy *d)
{
	memset(d, 0, sizeof(*d));
	d->ctx[SRV_CTX] = t_emu_ctx(1);
	d->ctx[CLI_CTX] = t_emu_ctx(0);
	d->ctx[W_CTX] = t_emu_ctx(1);
	if (!d->ctx[SRV_CTX] || !d->ctx[CLI_CTX] || !d->ctx[W_CTX] ||
	    oms_kvs_server_create(d->ctx[SRV_CTX], spec, 2, &d->s) ||
	    oms_kvs_server_listen(d->s, NULL, PORT) ||
	    oms_kvs_client_create(d->ctx[CLI_CTX], "localhost", PORT, NULL,
				  &d->c) ||
	    oms_kvs_writer_create(d->s, d->ctx[W_CTX], NULL, &d->w))
		return -1;
	for (int i = 0; i < NOBJ; i++)
		d->alive[i] = 1;
	return 0;
}

/* What must still be alive for object @i to be refused. */
static int must_refuse(const struct deploy *d, int i)
{
	switch (i) {
	case SRV_CTX:
		return d->alive[SERVER];
	case CLI_CTX:
		return d->alive[CLIENT];
	case W_CTX:
		return d->alive[WRITER];
	case SERVER:
		return d->alive[WRITER];	/* its existing rule */
	default:
		return 0;
	}
}

static int destroy(struct deploy *d, int i)
{
	switch (i) {
	case SRV_CTX:
	case CLI_CTX:
	case W_CTX:
		return oms_ctx_destroy(d->ctx[i]);
	case SERVER:
		return oms_kvs_server_destroy(d->s);
	case CLIENT:
		return oms_kvs_client_destroy(d->c);
	default:
		return oms_kvs_writer_destroy(d->w);
	}
}

/*
 * Destroy in the order @ord, then whatever was refused, until all gone.
 * Returns the first object whose call broke the rule, or -1.  It goes on
 * after a broken rule, so that a context destroyed too early shows as the
 * use-after-free it causes.
 */
static int teardown(struct deploy *d, const int *ord)
{
	int bad = -1;

	for (int round = 0; round < NOBJ; round++) {
		for (int k = 0; k < NOBJ; k++) {
			int i = ord[k], want, err;

			if (!d->alive[i])
				continue;
			want = must_refuse(d, i) ? -EBUSY : 0;
			err = destroy(d, i);
			if (err != want && bad < 0)
				bad = i;
			d->alive[i] = err != 0;
		}
	}
	for (int i = 0; i < NOBJ; i++)
		if (d->alive[i] && bad < 0)
			bad = i;
	return bad;
}

/* A context that keeps the emulated device up between deployments:
 * starting it takes a while. */
FIXTURE(orders)
{
	struct oms_ctx *keeper;
};

FIXTURE_SETUP(orders)
{
	self->keeper = t_emu_ctx(2);
	ASSERT_NE(NULL, self->keeper);
}

FIXTURE_TEARDOWN(orders)
{
	oms_ctx_destroy(self->keeper);
}

/* 720 deployments: a few seconds, more under ASan on a loaded machine */
TEST_F_TIMEOUT(orders, every_destroy_order_is_safe, 300)
{
	int ord[NOBJ] = { 0, 1, 2, 3, 4, 5 };
	int orders = 0;

	do {
		struct deploy d;

		ASSERT_EQ(0, deploy(&d));
		ASSERT_EQ(-1, teardown(&d, ord)) {
			TH_LOG("order %d %d %d %d %d %d", ord[0], ord[1],
			       ord[2], ord[3], ord[4], ord[5]);
		}
		orders++;
	} while (t_next_perm(ord, NOBJ));
	EXPECT_EQ(720, orders);
}

/* One get of key 1 of the Single Read table, waited for. */
static int get1(struct oms_kvs_client *c, struct oms_kvs_get *g, void *buf)
{
	struct oms_kvs_get *done[1];
	int n, err;

	memset(g, 0, sizeof(*g));
	err = oms_kvs_table_open(c, OMS_KVS_SINGLE, 64, &g->table);
	if (err)
		return err;
	g->key = 1;
	g->buf = buf;
	err = oms_kvs_submit(c, g);
	if (err)
		return err;
	while (!(n = oms_kvs_poll(c, done, 1)))
		;
	return n == 1 ? g->status : -EIO;
}

TEST(refused_context_destroy_changes_nothing)
{
	static const int ord[NOBJ] = {
		WRITER, CLIENT, SERVER, SRV_CTX, CLI_CTX, W_CTX,
	};
	struct deploy d;
	struct oms_kvs_get g;
	uint8_t buf[4096];

	ASSERT_EQ(0, deploy(&d));
	EXPECT_EQ(-EBUSY, oms_ctx_destroy(d.ctx[CLI_CTX]));
	EXPECT_EQ(-EBUSY, oms_ctx_destroy(d.ctx[SRV_CTX]));
	EXPECT_EQ(-EBUSY, oms_ctx_destroy(d.ctx[W_CTX]));
	/* the client, its context and the served region still work */
	ASSERT_EQ(0, oms_kvs_update(d.w, 0, 1));
	ASSERT_EQ(0, get1(d.c, &g, buf));
	EXPECT_EQ(0, g.torn);
	EXPECT_EQ(4, g.version);	/* the writer's update */
	ASSERT_EQ(-1, teardown(&d, ord));
}

TEST_HARNESS_MAIN
