// SPDX-License-Identifier: MIT
/*
 * Remote writers on items of one or two cache lines (values of 8 to
 * 64 bytes), where each protocol's "a writer holds it" mark has the fewest
 * other words to differ from.  A remote writer (oms_kvs_client_update: a
 * compare-and-swap to an odd version, the value, the version even again)
 * keeps rewriting two hot items while a reader gets them, on the emulated
 * device with chaos on.
 *
 * litmus_L32_small_items_under_a_remote_writer_on_emu: for every protocol
 *   but Broken and sizes 8, 56 and 64 bytes: 0 torn values (by the
 *   client's detector and by a fresh comparison here), no odd version
 *   returned, and the writer really raced the reader (updates > 0, and
 *   over the whole run gets that retried).  A FaRM reader that took a
 *   one-line item (8 or 56 bytes) under the writer's odd lock version
 *   would return the old bytes: torn in about a quarter of gets.
 *
 * Public headers only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"
#include "oms_kvs.h"

#ifdef __SANITIZE_ADDRESS__
#define GETS	4000ul
#else
#define GETS	20000ul
#endif
#define ITEMS	2u
#define BATCH	16u

struct rig {
	char port[16];
	uint32_t proto, size;
	int stop;
	unsigned long updates, busy, werr;
};

struct writer_arg {
	struct rig *r;
	struct oms_ctx *ctx;
};

static void *writer(void *arg)
{
	struct writer_arg *wa = arg;
	struct rig *r = wa->r;
	struct oms_kvs_client_attr a = oms_kvs_client_attr_default();
	struct oms_kvs_client *c;
	struct oms_kvs_table *t;
	struct t_rng rng;

	t_rng_init(&rng, t_seed(0x5a11));
	a.timeout_ms = 60000;
	if (oms_kvs_client_create(wa->ctx, "localhost", r->port, &a, &c)) {
		r->werr++;
		return NULL;
	}
	if (oms_kvs_table_open(c, r->proto, r->size, &t)) {
		r->werr++;
		oms_kvs_client_destroy(c);
		return NULL;
	}
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int e = oms_kvs_client_update(c, t, t_rng_below(&rng, ITEMS),
					      NULL);

		if (!e)
			__atomic_fetch_add(&r->updates, 1, __ATOMIC_RELAXED);
		else if (e == -EBUSY)
			r->busy++;
		else
			r->werr++;
	}
	oms_kvs_client_destroy(c);
	return NULL;
}

struct tally {
	unsigned long gets, torn, mismatch, odd, retries, failed;
};

static uint64_t t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Gets of the hot items until GETS returned; the writer runs meanwhile. */
static int read_all(struct rig *r, struct oms_ctx *ctx, struct tally *ty)
{
	static struct oms_kvs_get g[BATCH], *done[BATCH];
	struct oms_kvs_client_attr a = oms_kvs_client_attr_default();
	struct oms_kvs_info info = { .size = sizeof(info) };
	struct oms_kvs_client *c;
	struct oms_kvs_table *t;
	uint8_t *bufs, want[64];
	uint32_t freeix[BATCH], nfree = BATCH;
	uint64_t t_last = t_now_ms();
	struct t_rng rng;
	int err;

	a.batch = BATCH;
	a.timeout_ms = 60000;
	a.max_retries = 1000000;	/* a hot item: retry, do not give up */
	err = oms_kvs_client_create(ctx, "localhost", r->port, &a, &c);
	if (err)
		return err;
	err = oms_kvs_table_open(c, r->proto, r->size, &t);
	if (!err)
		err = oms_kvs_table_info(t, &info);
	bufs = err ? NULL : calloc(BATCH, info.buf_size);
	if (!bufs) {
		oms_kvs_client_destroy(c);
		return err ? err : -ENOMEM;
	}
	t_rng_init(&rng, t_seed(0x5a12));
	for (uint32_t i = 0; i < BATCH; i++)
		freeix[i] = i;
	/*
	 * GETS gets, and on until the writer has written once: readers that
	 * always hold a Pessimistic item (BATCH gets in flight on two
	 * items) can keep a slowed writer out for all of GETS, and the test
	 * is of gets racing an update.  Bounded: 60 s more at the most.
	 */
	while (!err && (ty->gets < GETS ||
			(!__atomic_load_n(&r->updates, __ATOMIC_RELAXED) &&
			 t_now_ms() - t_last < 60000))) {
		int n;

		if (ty->gets < GETS)
			t_last = t_now_ms();

		while (!err && nfree) {
			uint32_t i = freeix[--nfree];

			g[i] = (struct oms_kvs_get){ .table = t,
				.buf = bufs + (size_t)i * info.buf_size,
				.key = t_rng_below(&rng, ITEMS) };
			err = oms_kvs_submit(c, &g[i]);
		}
		n = err ? 0 : oms_kvs_poll(c, done, BATCH);
		if (n < 0)
			err = n;
		for (int k = 0; k < n; k++) {
			struct oms_kvs_get *x = done[k];

			freeix[nfree++] = (uint32_t)(x - g);
			ty->retries += x->retries;
			if (x->status) {
				ty->failed++;
				continue;
			}
			ty->gets++;
			ty->torn += x->torn;
			ty->odd += x->version & 1;
			oms_kvs_value_fill(x->key, x->version, want, r->size);
			ty->mismatch += memcmp(want, x->value, r->size) != 0;
		}
	}
	free(bufs);
	oms_kvs_client_destroy(c);
	return err;
}

static void run(struct __test_metadata *_metadata, uint32_t proto,
		uint32_t size, unsigned long *all_retries)
{
	struct oms_emu_attr ea = { .size = sizeof(ea),
				   .comp_mask = OMS_EMU_ATTR_CHAOS,
				   .chaos_seed = t_seed(0x5a10) };
	struct oms_kvs_table_spec sp = { .proto = proto, .value_size = size,
					 .items = ITEMS,
					 .flags = OMS_KVS_TABLE_REMOTE_WRITE };
	static int port = 7950;
	struct rig r = { .proto = proto, .size = size };
	struct oms_ctx *srv, *wctx, *rctx;
	struct writer_arg wa = { .r = &r };
	struct oms_kvs_server *s;
	struct tally ty = { 0 };
	struct oms_emu *emu;
	pthread_t wt;
	int err;

	snprintf(r.port, sizeof(r.port), "%d", port++);
	ASSERT_EQ(0, oms_emu_create(&ea, &emu));
	srv = t_emu_ctx_on(emu, 1);
	wctx = t_emu_ctx_on(emu, 2);
	rctx = t_emu_ctx_on(emu, 0);
	ASSERT_NE(NULL, srv);
	ASSERT_NE(NULL, wctx);
	ASSERT_NE(NULL, rctx);
	ASSERT_EQ(0, oms_kvs_server_create(srv, &sp, 1, &s));
	ASSERT_EQ(0, oms_kvs_server_listen(s, NULL, r.port));
	wa.ctx = wctx;
	ASSERT_EQ(0, pthread_create(&wt, NULL, writer, &wa));
	err = read_all(&r, rctx, &ty);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(wt, NULL);
	TH_LOG("%s %u B: gets %lu, torn %lu, mismatch %lu, odd %lu, retries %lu, failed %lu; writer: updates %lu, busy %lu, errors %lu",
	       oms_kvs_proto_name(proto), size, ty.gets, ty.torn, ty.mismatch,
	       ty.odd, ty.retries, ty.failed, r.updates, r.busy, r.werr);
	EXPECT_EQ(0, err);
	EXPECT_LE(GETS, ty.gets);
	EXPECT_EQ(0, ty.torn);
	EXPECT_EQ(0, ty.mismatch);
	EXPECT_EQ(0, ty.odd);
	EXPECT_EQ(0, ty.failed);
	EXPECT_EQ(0, r.werr);
	EXPECT_LT(0, r.updates);
	*all_retries += ty.retries;
	oms_kvs_server_destroy(s);
	oms_ctx_destroy(rctx);
	oms_ctx_destroy(wctx);
	oms_ctx_destroy(srv);
	EXPECT_EQ(0, oms_emu_destroy(emu));
}

TEST(litmus_L32_small_items_under_a_remote_writer_on_emu)
{
	static const uint32_t protos[] = { OMS_KVS_SINGLE, OMS_KVS_VALIDATION,
					   OMS_KVS_FARM, OMS_KVS_PESSIMISTIC };
	static const uint32_t sizes[] = { 8, 56, 64 };
	unsigned long retries = 0;

	for (size_t p = 0; p < sizeof(protos) / sizeof(protos[0]); p++)
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			run(_metadata, protos[p], sizes[k], &retries);
	/* the writer was in the way of some gets: the rig can show a tear */
	EXPECT_LT(0, retries);
}

TEST_HARNESS_MAIN
