// SPDX-License-Identifier: MIT
/*
 * The oms_kvs_* calls on the emulated device: every protocol gets what a
 * writer last wrote; a get on a region that went away fails with the
 * device's error instead of hanging; the detector tells a torn value; and
 * every call refuses bad arguments with a clear errno and changes nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"
#include "oms_kvs.h"

static const struct oms_kvs_table_spec specs[] = {
	{ .proto = OMS_KVS_SINGLE, .value_size = 64, .items = 16 },
	{ .proto = OMS_KVS_VALIDATION, .value_size = 64, .items = 16 },
	{ .proto = OMS_KVS_FARM, .value_size = 64, .items = 16 },
	{ .proto = OMS_KVS_PESSIMISTIC, .value_size = 64, .items = 16 },
	{ .proto = OMS_KVS_FARM, .value_size = 1000, .items = 4 },
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

FIXTURE(kvs)
{
	struct oms_ctx *srv, *cli, *wctx;
	struct oms_kvs_server *s;
	struct oms_kvs_client *c;
	struct oms_kvs_writer *w;
};

FIXTURE_SETUP(kvs)
{
	self->srv = t_emu_ctx(1);
	self->cli = t_emu_ctx(0);
	self->wctx = t_emu_ctx(1);
	ASSERT_NE(NULL, self->srv);
	ASSERT_NE(NULL, self->cli);
	ASSERT_NE(NULL, self->wctx);
	ASSERT_EQ(0, oms_kvs_server_create(self->srv, specs, NSPECS,
					   &self->s));
	ASSERT_EQ(0, oms_kvs_server_listen(self->s, NULL, "7700"));
	ASSERT_EQ(0, oms_kvs_client_create(self->cli, "localhost", "7700",
					   NULL, &self->c));
	ASSERT_EQ(0, oms_kvs_writer_create(self->s, self->wctx, NULL,
					   &self->w));
}

FIXTURE_TEARDOWN(kvs)
{
	if (self->w)
		oms_kvs_writer_destroy(self->w);
	if (self->c)
		oms_kvs_client_destroy(self->c);
	if (self->s)
		oms_kvs_server_destroy(self->s);
	oms_ctx_destroy(self->wctx);
	oms_ctx_destroy(self->cli);
	oms_ctx_destroy(self->srv);
}

/* One get of @key from (@proto, @size), waited for. */
static int get1(struct oms_kvs_client *c, uint32_t proto, uint32_t size,
		uint64_t key, struct oms_kvs_get *g, void *buf)
{
	struct oms_kvs_get *done[1];
	int n, err;

	memset(g, 0, sizeof(*g));
	err = oms_kvs_table_open(c, proto, size, &g->table);
	if (err)
		return err;
	g->key = key;
	g->buf = buf;
	err = oms_kvs_submit(c, g);
	if (err)
		return err;
	while (!(n = oms_kvs_poll(c, done, 1)))
		;
	if (n != 1 || done[0] != g)
		return -EIO;
	return g->status;
}

TEST_F(kvs, every_protocol_gets_the_last_write)
{
	uint8_t buf[2048], want[1024];
	struct oms_kvs_get g;
	struct oms_kvs_stats st = { .size = sizeof(st) };

	for (uint32_t t = 0; t < NSPECS; t++) {
		ASSERT_EQ(0, oms_kvs_update(self->w, t, 3));
		ASSERT_EQ(0, oms_kvs_update(self->w, t, 3));
	}
	for (uint32_t p = 0; p < OMS_KVS_NPROTO; p++) {
		ASSERT_EQ(0, get1(self->c, p, 64, 3, &g, buf));
		EXPECT_EQ(6, g.version);	/* 2, then two updates */
		EXPECT_EQ(0, g.torn);
		EXPECT_EQ(0, g.retries);
		ASSERT_EQ(0, oms_kvs_value_fill(3, 6, want, 64));
		EXPECT_EQ(0, memcmp(want, g.value, 64));
		ASSERT_EQ(0, get1(self->c, p, 64, 4, &g, buf));
		EXPECT_EQ(2, g.version);	/* untouched key */
	}
	/* FaRM over 18 lines: the strip makes one contiguous value */
	ASSERT_EQ(0, oms_kvs_update(self->w, 4, 1));
	ASSERT_EQ(0, get1(self->c, OMS_KVS_FARM, 1000, 1, &g, buf));
	EXPECT_EQ(4, g.version);
	ASSERT_EQ(0, oms_kvs_value_fill(1, 4, want, 1000));
	EXPECT_EQ(0, memcmp(want, g.value, 1000));
	EXPECT_EQ(0, oms_kvs_client_stats(self->c, &st));
	EXPECT_EQ(2 * OMS_KVS_NPROTO + 1, st.gets);
	EXPECT_EQ(0, st.torn);
	EXPECT_EQ(0, st.failed);
}

TEST_F(kvs, region_gone_fails_gets_no_hang)
{
	uint8_t buf[256];
	struct oms_kvs_get g;

	ASSERT_EQ(0, oms_kvs_writer_destroy(self->w));
	self->w = NULL;
	ASSERT_EQ(0, oms_kvs_server_destroy(self->s));
	self->s = NULL;
	EXPECT_EQ(-EACCES, get1(self->c, OMS_KVS_SINGLE, 64, 0, &g, buf));
	EXPECT_EQ(NULL, g.value);
	EXPECT_EQ(-EACCES, get1(self->c, OMS_KVS_PESSIMISTIC, 64, 0, &g, buf));
}

TEST(detector)
{
	uint64_t v[8];

	ASSERT_EQ(0, oms_kvs_value_fill(7, 10, v, sizeof(v)));
	EXPECT_EQ(0, oms_kvs_value_torn(7, 10, v, sizeof(v)));
	EXPECT_EQ(1, oms_kvs_value_torn(7, 12, v, sizeof(v)));
	EXPECT_EQ(1, oms_kvs_value_torn(8, 10, v, sizeof(v)));
	((uint8_t *)v)[37] ^= 1;
	EXPECT_EQ(1, oms_kvs_value_torn(7, 10, v, sizeof(v)));
	/* two halves of two versions: torn */
	ASSERT_EQ(0, oms_kvs_value_fill(7, 10, v, sizeof(v)));
	ASSERT_EQ(0, oms_kvs_value_fill(7, 12, v + 4, 32));
	EXPECT_EQ(1, oms_kvs_value_torn(7, 10, v, sizeof(v)));
	/* a shifted value (a wrong strip): torn */
	ASSERT_EQ(0, oms_kvs_value_fill(7, 10, v + 1, 56));
	EXPECT_EQ(1, oms_kvs_value_torn(7, 10, v, 56));
	EXPECT_EQ(-EINVAL, oms_kvs_value_fill(7, 10, NULL, 8));
	EXPECT_EQ(-EINVAL, oms_kvs_value_fill(7, 10, v, 0));
	EXPECT_EQ(-EINVAL, oms_kvs_value_fill(7, 10, v, 12));
	EXPECT_EQ(-EINVAL, oms_kvs_value_fill(7, 10, v, OMS_KVS_MAX_VALUE + 8));
	EXPECT_EQ(-EINVAL, oms_kvs_value_torn(7, 10, NULL, 8));
	EXPECT_EQ(-EINVAL, oms_kvs_value_torn(7, 10, v, 4));
}

TEST(server_bad_args)
{
	struct oms_ctx *ctx = t_emu_ctx(1);
	struct oms_kvs_server *s = (void *)0x1, *s2;
	struct oms_kvs_table_spec bad[] = {
		{ .proto = OMS_KVS_BROKEN, .value_size = 64, .items = 1 },
		{ .proto = 99, .value_size = 64, .items = 1 },
		{ .proto = OMS_KVS_SINGLE, .value_size = 0, .items = 1 },
		{ .proto = OMS_KVS_SINGLE, .value_size = 12, .items = 1 },
		{ .proto = OMS_KVS_SINGLE, .value_size = OMS_KVS_MAX_VALUE + 8,
		  .items = 1 },
		{ .proto = OMS_KVS_SINGLE, .value_size = 64, .items = 0 },
		{ .proto = OMS_KVS_SINGLE, .value_size = 64, .items = 1,
		  .flags = 1u << 31 },	/* unknown flag */
	};
	struct oms_kvs_table_spec huge = { .proto = OMS_KVS_FARM,
		.value_size = OMS_KVS_MAX_VALUE, .items = 1u << 20 };
	struct oms_kvs_table_spec many[OMS_KVS_MAX_TABLES + 1];

	ASSERT_NE(NULL, ctx);
	for (unsigned i = 0; i < OMS_KVS_MAX_TABLES + 1; i++)
		many[i] = specs[0];
	EXPECT_EQ(-EINVAL, oms_kvs_server_create(NULL, specs, 1, &s));
	EXPECT_EQ(-EINVAL, oms_kvs_server_create(ctx, NULL, 1, &s));
	EXPECT_EQ(-EINVAL, oms_kvs_server_create(ctx, specs, 0, &s));
	EXPECT_EQ(-EINVAL, oms_kvs_server_create(ctx, specs, 1, NULL));
	EXPECT_EQ(-EINVAL, oms_kvs_server_create(ctx, many,
						 OMS_KVS_MAX_TABLES + 1, &s));
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct oms_kvs_table_spec two[2] = { specs[0], bad[i] };

		EXPECT_EQ(-EINVAL, oms_kvs_server_create(ctx, two, 2, &s));
	}
	EXPECT_EQ(-E2BIG, oms_kvs_server_create(ctx, &huge, 1, &s));
	EXPECT_EQ((void *)0x1, s);	/* untouched */
	EXPECT_EQ(0, oms_kvs_server_create(ctx, many, OMS_KVS_MAX_TABLES, &s));
	EXPECT_EQ(-EINVAL, oms_kvs_server_listen(NULL, NULL, "7710"));
	EXPECT_EQ(-EINVAL, oms_kvs_server_listen(s, NULL, NULL));
	EXPECT_EQ(-EINVAL, oms_kvs_server_listen(s, NULL, ""));
	ASSERT_EQ(0, oms_kvs_server_listen(s, NULL, "7710"));
	EXPECT_EQ(-EALREADY, oms_kvs_server_listen(s, NULL, "7711"));
	/* a port in use: refused, and the second server can listen after */
	ASSERT_EQ(0, oms_kvs_server_create(ctx, specs, 1, &s2));
	EXPECT_EQ(-EADDRINUSE, oms_kvs_server_listen(s2, NULL, "7710"));
	EXPECT_EQ(0, oms_kvs_server_listen(s2, NULL, "7712"));
	EXPECT_EQ(-EINVAL, oms_kvs_server_destroy(NULL));
	EXPECT_EQ(0, oms_kvs_server_destroy(s2));
	EXPECT_EQ(0, oms_kvs_server_destroy(s));
	oms_ctx_destroy(ctx);
}

TEST_F(kvs, writer_bad_args)
{
	struct oms_kvs_writer *w = (void *)0x1;
	struct oms_kvs_server *s2;
	struct oms_kvs_get g;
	uint8_t buf[256];

	EXPECT_EQ(-EINVAL, oms_kvs_writer_create(NULL, self->wctx, NULL, &w));
	EXPECT_EQ(-EINVAL, oms_kvs_writer_create(self->s, self->wctx, NULL,
						 NULL));
	/* Pessimistic tables need the writer's own context ... */
	EXPECT_EQ(-EINVAL, oms_kvs_writer_create(self->s, NULL, NULL, &w));
	/* ... and a listening server to connect to */
	ASSERT_EQ(0, oms_kvs_server_create(self->srv, &specs[3], 1, &s2));
	EXPECT_EQ(-ENOTCONN, oms_kvs_writer_create(s2, self->wctx, NULL, &w));
	EXPECT_EQ((void *)0x1, w);
	EXPECT_EQ(0, oms_kvs_server_destroy(s2));
	/* no Pessimistic table: no context needed */
	ASSERT_EQ(0, oms_kvs_server_create(self->srv, specs, 1, &s2));
	ASSERT_EQ(0, oms_kvs_writer_create(s2, NULL, NULL, &w));
	EXPECT_EQ(-EBUSY, oms_kvs_server_destroy(s2));	/* writer alive */
	EXPECT_EQ(0, oms_kvs_update(w, 0, 0));
	EXPECT_EQ(0, oms_kvs_writer_destroy(w));
	EXPECT_EQ(0, oms_kvs_server_destroy(s2));

	EXPECT_EQ(-EINVAL, oms_kvs_update(NULL, 0, 0));
	EXPECT_EQ(-EINVAL, oms_kvs_update(self->w, NSPECS, 0));
	EXPECT_EQ(-EINVAL, oms_kvs_update(self->w, 0, 16));
	EXPECT_EQ(-EINVAL, oms_kvs_writer_destroy(NULL));
	/* nothing was written */
	ASSERT_EQ(0, get1(self->c, OMS_KVS_SINGLE, 64, 0, &g, buf));
	EXPECT_EQ(2, g.version);
}

/*
 * A writer must reach its own server's listener.  Two servers of one spec
 * (so regions of one size) on two fabrics, on one port: a writer of A
 * whose context is on B's fabric reaches B.  It is refused (-EPROTO), with
 * nothing made: accepted, it would lock B's items and write A's, and A's
 * Pessimistic readers would get torn values.
 */
TEST(writer_of_another_server_refused)
{
	struct oms_emu *ea = NULL, *eb = NULL;
	struct oms_ctx *sa, *sb, *wb, *wa;
	struct oms_kvs_server *a, *b;
	struct oms_kvs_writer *w = (void *)0x1;

	ASSERT_EQ(0, oms_emu_create(NULL, &ea));
	ASSERT_EQ(0, oms_emu_create(NULL, &eb));
	sa = t_emu_ctx_on(ea, 1);
	wa = t_emu_ctx_on(ea, 2);
	sb = t_emu_ctx_on(eb, 1);
	wb = t_emu_ctx_on(eb, 2);
	ASSERT_NE(NULL, sa);
	ASSERT_NE(NULL, wa);
	ASSERT_NE(NULL, sb);
	ASSERT_NE(NULL, wb);
	ASSERT_EQ(0, oms_kvs_server_create(sa, &specs[3], 1, &a));
	ASSERT_EQ(0, oms_kvs_server_listen(a, NULL, "7710"));
	ASSERT_EQ(0, oms_kvs_server_create(sb, &specs[3], 1, &b));
	ASSERT_EQ(0, oms_kvs_server_listen(b, NULL, "7710"));
	EXPECT_EQ(-EPROTO, oms_kvs_writer_create(a, wb, NULL, &w));
	EXPECT_EQ((void *)0x1, w);
	/* no writer was counted: A goes away at once */
	EXPECT_EQ(0, oms_kvs_server_destroy(a));
	ASSERT_EQ(0, oms_kvs_server_create(sa, &specs[3], 1, &a));
	ASSERT_EQ(0, oms_kvs_server_listen(a, NULL, "7710"));
	/* the control: from A's fabric it is A's */
	ASSERT_EQ(0, oms_kvs_writer_create(a, wa, NULL, &w));
	EXPECT_EQ(0, oms_kvs_update(w, 0, 1));
	EXPECT_EQ(0, oms_kvs_writer_destroy(w));
	EXPECT_EQ(0, oms_kvs_server_destroy(a));
	EXPECT_EQ(0, oms_kvs_server_destroy(b));
	oms_ctx_destroy(wb);
	oms_ctx_destroy(sb);
	oms_ctx_destroy(wa);
	oms_ctx_destroy(sa);
	EXPECT_EQ(0, oms_emu_destroy(eb));
	EXPECT_EQ(0, oms_emu_destroy(ea));
}

TEST_F(kvs, client_bad_args)
{
	struct oms_kvs_client_attr a = oms_kvs_client_attr_default();
	struct oms_kvs_client *c = (void *)0x1;
	struct {
		struct oms_kvs_client_attr a;
		uint32_t tail;
	} big = { .a = a, .tail = 1 };
	struct oms_ctx *other = t_emu_ctx(0);
	struct oms_mr *mr;
	struct oms_listener *l;
	uint64_t junk[512];

	ASSERT_NE(NULL, other);
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(NULL, "localhost", "7700",
						 NULL, &c));
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(other, NULL, "7700", NULL,
						 &c));
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(other, "localhost", NULL,
						 NULL, &c));
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(other, "localhost", "7700",
						 NULL, NULL));
	a.size = 0;
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(other, "localhost", "7700",
						 &a, &c));
	a = oms_kvs_client_attr_default();
	a.batch = OMS_KVS_MAX_BATCH + 1;
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(other, "localhost", "7700",
						 &a, &c));
	a = oms_kvs_client_attr_default();
	a.nconn = OMS_MAX_NODES + 1;
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(other, "localhost", "7700",
						 &a, &c));
	a = oms_kvs_client_attr_default();
	a.flags = 1u << 7;
	EXPECT_EQ(-EINVAL, oms_kvs_client_create(other, "localhost", "7700",
						 &a, &c));
	big.a.size = sizeof(big);
	EXPECT_EQ(-E2BIG, oms_kvs_client_create(other, "localhost", "7700",
						&big.a, &c));
	EXPECT_EQ(-ECONNREFUSED, oms_kvs_client_create(other, "localhost",
						       "7799", NULL, &c));
	/* a region that is no KVS: its directory is refused */
	memset(junk, 0x5a, sizeof(junk));
	ASSERT_EQ(0, oms_mr_reg(self->srv, junk, sizeof(junk),
				OMS_ACCESS_REMOTE_READ, &mr));
	ASSERT_EQ(0, oms_listen(self->srv, NULL, "7701", mr, &l));
	EXPECT_EQ(-EPROTO, oms_kvs_client_create(other, "localhost", "7701",
						 NULL, &c));
	ASSERT_EQ(0, oms_listener_close(l));
	ASSERT_EQ(0, oms_mr_dereg(mr));
	EXPECT_EQ((void *)0x1, c);
	EXPECT_EQ(-EINVAL, oms_kvs_client_destroy(NULL));
	oms_ctx_destroy(other);
}

TEST_F(kvs, get_bad_args)
{
	struct oms_kvs_client *c2;
	struct oms_ctx *other = t_emu_ctx(0);
	struct oms_kvs_table *t, *t2;
	struct oms_kvs_info info = { .size = sizeof(info) };
	struct oms_kvs_stats st = { .size = sizeof(st) }, st2 = st;
	struct oms_kvs_get g[40], *done[40];
	uint8_t buf[40][128];

	ASSERT_NE(NULL, other);
	EXPECT_EQ(-EINVAL, oms_kvs_table_open(NULL, OMS_KVS_SINGLE, 64, &t));
	EXPECT_EQ(-EINVAL, oms_kvs_table_open(self->c, OMS_KVS_NPROTO, 64,
					      &t));
	EXPECT_EQ(-EINVAL, oms_kvs_table_open(self->c, OMS_KVS_SINGLE, 64,
					      NULL));
	EXPECT_EQ(-ENOENT, oms_kvs_table_open(self->c, OMS_KVS_SINGLE, 128,
					      &t));
	ASSERT_EQ(0, oms_kvs_table_open(self->c, OMS_KVS_SINGLE, 64, &t));
	EXPECT_EQ(-EINVAL, oms_kvs_table_info(NULL, &info));
	EXPECT_EQ(-EINVAL, oms_kvs_table_info(t, NULL));
	info.size = 0;
	EXPECT_EQ(-EINVAL, oms_kvs_table_info(t, &info));
	info.size = sizeof(info);
	ASSERT_EQ(0, oms_kvs_table_info(t, &info));
	EXPECT_EQ(16, info.items);
	EXPECT_EQ(80, info.read_size);	/* header, 64 B, footer */
	EXPECT_EQ(128, info.stride);

	ASSERT_EQ(0, oms_kvs_client_create(other, "localhost", "7700", NULL,
					   &c2));
	ASSERT_EQ(0, oms_kvs_table_open(c2, OMS_KVS_SINGLE, 64, &t2));
	ASSERT_EQ(0, oms_kvs_client_stats(self->c, &st));
	memset(g, 0, sizeof(g));
	for (int i = 0; i < 40; i++) {
		g[i].table = t;
		g[i].buf = buf[i];
	}
	EXPECT_EQ(-EINVAL, oms_kvs_submit(NULL, &g[0]));
	EXPECT_EQ(-EINVAL, oms_kvs_submit(self->c, NULL));
	g[0].table = NULL;
	EXPECT_EQ(-EINVAL, oms_kvs_submit(self->c, &g[0]));
	g[0].table = t2;		/* another client's */
	EXPECT_EQ(-EINVAL, oms_kvs_submit(self->c, &g[0]));
	g[0].table = t;
	g[0].key = 16;
	EXPECT_EQ(-EINVAL, oms_kvs_submit(self->c, &g[0]));
	g[0].key = 0;
	g[0].buf = NULL;
	EXPECT_EQ(-EINVAL, oms_kvs_submit(self->c, &g[0]));
	g[0].buf = buf[0];
	/* nothing was queued */
	EXPECT_EQ(0, oms_kvs_poll(self->c, done, 40));
	EXPECT_EQ(-EINVAL, oms_kvs_poll(NULL, done, 40));
	EXPECT_EQ(-EINVAL, oms_kvs_poll(self->c, NULL, 40));
	EXPECT_EQ(-EINVAL, oms_kvs_poll(self->c, done, 0));
	/* the default batch is 32: the 33rd waits */
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(0, oms_kvs_submit(self->c, &g[i]));
	EXPECT_EQ(-EAGAIN, oms_kvs_submit(self->c, &g[32]));
	/* hand back fewer than finished: the rest come next, no new round */
	EXPECT_EQ(20, oms_kvs_poll(self->c, done, 20));
	EXPECT_EQ(12, oms_kvs_poll(self->c, done + 20, 20));
	EXPECT_EQ(0, oms_kvs_poll(self->c, done, 40));
	EXPECT_EQ(-EINVAL, oms_kvs_client_stats(NULL, &st2));
	EXPECT_EQ(-EINVAL, oms_kvs_client_stats(self->c, NULL));
	ASSERT_EQ(0, oms_kvs_client_stats(self->c, &st2));
	EXPECT_EQ(st.gets + 32, st2.gets);
	EXPECT_EQ(st.rounds + 1, st2.rounds);
	oms_kvs_client_destroy(c2);
	oms_ctx_destroy(other);
}

TEST_HARNESS_MAIN
