// SPDX-License-Identifier: MIT
/*
 * Remote writers of the KVS (oms_kvs_client_update): clients that lock an
 * item by compare-and-swap, WRITE it and unlock, as the RDMA
 * synchronization harness of seed 004's evaluation does, on the emulated
 * device with chaos on (puts and atomics of a context execute in any
 * order unless ordered, completions come back late and shuffled).
 *
 * litmus_L32_kvs_gets_under_remote_writers_on_emu: litmus L32 with the
 *   writers on other hosts: two remote writer threads keep rewriting 8 hot
 *   items of each protocol while a reader gets them: 0 torn values, the
 *   writers really raced the reader (updates and retries > 0).
 * litmus_L32_control_unordered_remote_writer_tears: the same rig with a
 *   writer that takes the same lock but puts footer, value and header as
 *   WEAK stores without the fence and the RELEASE store: Single Read gets
 *   then return torn values (> 0), so the test above can fail.  This one
 *   writer knows the item layout (kvs/kvs_priv.h): a test of internals.
 * kvs_remote_write_no_lost_update: remote writers and a server writer on
 *   the same items of every protocol; afterwards each item's version is
 *   exactly 2 + 2 x the updates that reported success, and its value that
 *   version's: no two writers ever held an item at once.
 * kvs_remote_write_versions: one update moves an item from version v to
 *   v + 2, which gets then return untorn.
 * (tests/kvs_remote_write_small does the same for items of one and two
 * lines, 8 to 64 bytes.)
 * kvs_remote_write_bad_args: NULL, a Broken handle, a foreign table, a key
 *   out of range (-EINVAL), a table without OMS_KVS_TABLE_REMOTE_WRITE
 *   (-EPERM), unknown table flags (-EINVAL at create): each refused with
 *   nothing written (versions and counters unchanged).
 *
 * Every value returned is checked twice: by the client's detector and here
 * against a freshly derived value; both must agree.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "kvs/kvs_priv.h"
#include "oms.h"
#include "oms_emu.h"
#include "oms_kvs.h"

#ifdef __SANITIZE_ADDRESS__
#define L32_GETS	60000ul
#else
#define L32_GETS	400000ul
#endif
#define CONTROL_GETS	2000000ul
#define MAX_TABLES	8
#define MAX_ITEMS	16
#define MAX_WRITERS	4
#define BATCH		32u
#define VALUE		200u	/* 4 lines: a writer is always near */

struct rig {
	struct oms_emu *emu;	/* the rig's device */
	struct oms_ctx *srv;
	struct oms_kvs_server *s;
	struct oms_kvs_table_spec spec[MAX_TABLES];
	uint32_t ntables;
	char port[16];
	uint64_t seed;
	int stop;
	int nw;
	pthread_t wt[MAX_WRITERS];
	/* successful updates of each item, by every writer */
	unsigned long done[MAX_TABLES][MAX_ITEMS];
	unsigned long updates, busy, werr;
	unsigned long busy_live;	/* as it happens, for the waiters */
};

struct tally {
	unsigned long gets, torn, retries, errors, mismatch;
	int status;		/* the first failed get's */
};

static struct oms_ctx *ctx_on(uint32_t node, struct oms_emu *emu)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *c;

	a.comp_mask = OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_TIMEOUT;
	/* two make checks and a third job on two cores: the device thread
	 * may not run for seconds; only a hang should fail */
	a.timeout_ms = 60000;
	a.node = node;
	a.emu = emu;
	return oms_ctx_create(&a, &c) ? NULL : c;
}

static void spec1(struct rig *r, uint32_t proto, uint32_t items,
		  uint32_t flags)
{
	r->spec[r->ntables++] = (struct oms_kvs_table_spec){
		.proto = proto, .value_size = VALUE, .items = items,
		.flags = flags };
}

static int rig_open(struct rig *r, uint64_t seed)
{
	static int port = 7700;

	r->seed = seed;
	snprintf(r->port, sizeof(r->port), "%d", port++);
	/* the rig's device: a fabric that reorders from @seed */
	r->emu = t_chaos_emu(seed);
	r->srv = r->emu ? ctx_on(1, r->emu) : NULL;
	if (!r->srv || oms_kvs_server_create(r->srv, r->spec, r->ntables,
					     &r->s) ||
	    oms_kvs_server_listen(r->s, NULL, r->port))
		return -1;
	return 0;
}

static void rig_stop_writers(struct rig *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < r->nw; i++)
		pthread_join(r->wt[i], NULL);
	r->nw = 0;
}

static void rig_close(struct rig *r)
{
	rig_stop_writers(r);
	if (r->s)
		oms_kvs_server_destroy(r->s);
	if (r->srv)
		oms_ctx_destroy(r->srv);
	/* after every context of the rig: else -EBUSY, and it lives on */
	if (r->emu && oms_emu_destroy(r->emu))
		fprintf(stderr, "rig_close: a context outlives the rig\n");
	r->emu = NULL;
}

static struct oms_kvs_client *client_on(struct rig *r, struct oms_ctx *ctx,
					struct oms_kvs_table **tab)
{
	struct oms_kvs_client_attr a = oms_kvs_client_attr_default();
	struct oms_kvs_client *c = NULL;

	a.batch = BATCH;
	a.timeout_ms = 60000;
	if (!ctx || oms_kvs_client_create(ctx, "localhost", r->port, &a, &c))
		return NULL;
	for (uint32_t i = 0; i < r->ntables; i++)
		if (oms_kvs_table_open(c, r->spec[i].proto, VALUE, &tab[i])) {
			oms_kvs_client_destroy(c);
			return NULL;
		}
	return c;
}

static void count_update(struct rig *r, uint32_t t, uint32_t k, int e,
			 unsigned long *busy, unsigned long *err)
{
	if (!e)
		__atomic_add_fetch(&r->done[t][k], 1, __ATOMIC_RELAXED);
	*busy += e == -EBUSY;
	*err += e && e != -EBUSY;
	if (e == -EBUSY)
		__atomic_add_fetch(&r->busy_live, 1, __ATOMIC_RELAXED);
}

/* A client on another node updating random items with the library. */
static void *remote_writer(void *arg)
{
	struct rig *r = arg;
	struct oms_ctx *ctx = ctx_on(2, r->emu);
	struct oms_kvs_table *tab[MAX_TABLES];
	struct oms_kvs_client *c = client_on(r, ctx, tab);
	unsigned long n = 0, busy = 0, err = !c;
	struct t_rng rng;

	t_rng_init(&rng, r->seed ^ (uintptr_t)&rng);
	while (c && !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t t = t_rng_below(&rng, r->ntables);
		uint32_t k = t_rng_below(&rng, r->spec[t].items);
		int e = oms_kvs_client_update(c, tab[t], k, NULL);

		count_update(r, t, k, e, &busy, &err);
		if (!(++n % 16))
			sched_yield();
	}
	if (c)
		oms_kvs_client_destroy(c);
	if (ctx)
		oms_ctx_destroy(ctx);
	__atomic_add_fetch(&r->busy, busy, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->werr, err, __ATOMIC_RELAXED);
	return NULL;
}

/* The server's CPU updating the same items (through the NIC). */
static void *server_writer(void *arg)
{
	struct rig *r = arg;
	struct oms_ctx *ctx = ctx_on(1, r->emu);
	struct oms_kvs_writer *w = NULL;
	unsigned long busy = 0, err = 0;
	struct t_rng rng;

	t_rng_init(&rng, r->seed ^ (uintptr_t)&rng ^ 1);
	if (!ctx || oms_kvs_writer_create(r->s, ctx, NULL, &w))
		err = 1;
	while (w && !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t t = t_rng_below(&rng, r->ntables);
		uint32_t k = t_rng_below(&rng, r->spec[t].items);

		count_update(r, t, k, oms_kvs_update(w, t, k), &busy, &err);
		sched_yield();
	}
	if (w)
		oms_kvs_writer_destroy(w);
	if (ctx)
		oms_ctx_destroy(ctx);
	__atomic_add_fetch(&r->busy, busy, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->werr, err, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * The control's writer: the same lock as the library's, then the whole
 * image as WEAK puts with no fence and no RELEASE store - the header may
 * be performed before the value lines.  Table 0 must be Single Read.
 */
static void *unordered_writer(void *arg)
{
	struct rig *r = arg;
	struct oms_ctx *ctx = ctx_on(2, r->emu);
	struct kvs_layout l;
	struct oms_rmr rmr;
	uint8_t img[512], val[VALUE];
	uint64_t ver[MAX_ITEMS];
	unsigned long err = 0;
	struct t_rng rng;

	t_rng_init(&rng, r->seed ^ 0x55);
	for (uint32_t k = 0; k < MAX_ITEMS; k++)
		ver[k] = KVS_FIRST_VERSION;
	if (!ctx || kvs_layout(OMS_KVS_SINGLE, VALUE, &l) ||
	    oms_connect(ctx, "localhost", r->port, 0, &rmr))
		err = 1;
	while (!err && !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t k = t_rng_below(&rng, r->spec[0].items);
		uint64_t base = KVS_TABLE0 + (uint64_t)k * l.stride, old = 0;

		err |= oms_atomic_cas(ctx, &rmr, base, ver[k], ver[k] + 1,
				      &old) || oms_quiet(ctx);
		if (err || old != ver[k])
			break;	/* the only writer: it cannot be taken */
		kvs_item_build(&l, k, ver[k] + 2, val, img);
		err |= oms_put(ctx, &rmr, base + l.ftr_off, img + l.ftr_off,
			       8, OMS_STORE_WEAK) ||
		       oms_put(ctx, &rmr, base + 8, img + 8, VALUE,
			       OMS_STORE_WEAK) ||
		       oms_put(ctx, &rmr, base, img, 8, OMS_STORE_WEAK) ||
		       oms_quiet(ctx);
		ver[k] += 2;
		__atomic_add_fetch(&r->done[0][k], 1, __ATOMIC_RELAXED);
	}
	if (ctx)
		oms_ctx_destroy(ctx);
	__atomic_add_fetch(&r->werr, err, __ATOMIC_RELAXED);
	return NULL;
}

static unsigned long rig_updates(struct rig *r)
{
	unsigned long n = 0;

	for (uint32_t t = 0; t < MAX_TABLES; t++)
		for (uint32_t k = 0; k < MAX_ITEMS; k++)
			n += __atomic_load_n(&r->done[t][k], __ATOMIC_RELAXED);
	return n;
}

/*
 * Get random items of table @t until @gets returned and the writers made
 * @min_updates (at most 100 x @gets: a loaded machine may starve the
 * writers), or a torn value came back if @stop_on_torn.
 */
static int read_table(struct rig *r, uint32_t t, uint32_t proto,
		      unsigned long gets, unsigned long min_updates,
		      int stop_on_torn, struct tally *ty)
{
	static struct oms_kvs_get g[BATCH], *done[BATCH];
	struct oms_kvs_table *tab[MAX_TABLES];
	struct oms_ctx *ctx = ctx_on(0, r->emu);
	struct oms_kvs_client *c = client_on(r, ctx, tab);
	struct oms_kvs_table *rt = NULL;
	uint8_t bufs[BATCH][512], want[VALUE];
	uint32_t free_ix[BATCH], nfree = BATCH;
	unsigned long got = 0;
	struct t_rng rng;
	int err = !c;

	t_rng_init(&rng, r->seed + t);
	if (!err)
		err = oms_kvs_table_open(c, proto, VALUE, &rt);
	for (uint32_t i = 0; i < BATCH; i++)
		free_ix[i] = i;
	while (!err && !(stop_on_torn && ty->torn) &&
	       (got < gets || (rig_updates(r) < min_updates &&
			       got < 100 * gets))) {
		int n;

		while (nfree && !err) {
			uint32_t i = free_ix[--nfree];

			g[i] = (struct oms_kvs_get){
				.table = rt, .buf = bufs[i],
				.key = t_rng_below(&rng, r->spec[t].items) };
			err = oms_kvs_submit(c, &g[i]);
			if (err && !ty->status)
				ty->status = err;	/* submit's */
		}
		n = err ? 0 : oms_kvs_poll(c, done, BATCH);
		if (n < 0 && !ty->status)
			ty->status = n;			/* poll's */
		err |= n < 0;
		for (int i = 0; i < n; i++) {
			const struct oms_kvs_get *x = done[i];
			int torn;

			free_ix[nfree++] = (uint32_t)(x - g);
			ty->retries += x->retries;
			if (x->status) {
				if (!ty->errors++)
					ty->status = x->status;
				err = 1;
				continue;
			}
			oms_kvs_value_fill(x->key, x->version, want, VALUE);
			torn = memcmp(want, x->value, VALUE) != 0;
			ty->gets++;
			ty->torn += torn;
			ty->mismatch += torn != (int)x->torn;
			got++;
		}
	}
	if (c)
		oms_kvs_client_destroy(c);
	if (ctx)
		oms_ctx_destroy(ctx);
	return err ? -1 : 0;
}

/* One untorn get of (@t, @key) with no writer running: its version. */
static int get_one(struct rig *r, uint32_t t, uint64_t key, uint64_t *ver)
{
	struct oms_kvs_table *tab[MAX_TABLES];
	struct oms_ctx *ctx = ctx_on(0, r->emu);
	struct oms_kvs_client *c = client_on(r, ctx, tab);
	struct oms_kvs_get g = { 0 }, *done[1];
	uint8_t buf[512];
	int err = -1;

	g.table = c ? tab[t] : NULL;
	g.key = key;
	g.buf = buf;
	if (c && !oms_kvs_submit(c, &g))
		while ((err = oms_kvs_poll(c, done, 1)) == 0)
			;
	err = err == 1 && !g.status && !g.torn ? 0 : -1;
	*ver = g.version;
	if (c)
		oms_kvs_client_destroy(c);
	if (ctx)
		oms_ctx_destroy(ctx);
	return err;
}

static void start(struct rig *r, void *(*fn)(void *))
{
	if (!pthread_create(&r->wt[r->nw], NULL, fn, r))
		r->nw++;
}

TEST(litmus_L32_kvs_gets_under_remote_writers_on_emu)
{
	uint64_t seed = t_seed(0x3201);
	unsigned long n = t_trials(L32_GETS) / 4;

	for (uint32_t p = OMS_KVS_SINGLE; p <= OMS_KVS_PESSIMISTIC; p++) {
		struct rig r = { 0 };
		struct tally t = { 0 };
		int err;

		spec1(&r, p, 8, OMS_KVS_TABLE_REMOTE_WRITE);
		ASSERT_EQ(0, rig_open(&r, seed));
		start(&r, remote_writer);
		start(&r, remote_writer);
		ASSERT_EQ(2, r.nw);
		err = read_table(&r, 0, p, n, 64, 0, &t);
		rig_close(&r);
		TH_LOG("L32 remote %-11s: %lu gets, %lu torn, %lu retries, "
		       "%lu updates, %lu busy, first error %d (chaos seed "
		       "%#llx)", oms_kvs_proto_name(p), t.gets, t.torn,
		       t.retries, rig_updates(&r), r.busy, t.status,
		       (unsigned long long)seed);
		ASSERT_EQ(0, err);
		ASSERT_EQ(0, r.werr);
		ASSERT_EQ(0, t.mismatch);
		ASSERT_EQ(0, t.torn);
		ASSERT_GE(t.gets, n);
		ASSERT_GE(rig_updates(&r), 64);
		ASSERT_GT(t.retries, 0);	/* the writers really raced */
	}
}

TEST(litmus_L32_control_unordered_remote_writer_tears)
{
	uint64_t seed = t_seed(0x3202);
	struct rig r = { 0 };
	struct tally t = { 0 };
	int err;

	spec1(&r, OMS_KVS_SINGLE, 8, OMS_KVS_TABLE_REMOTE_WRITE);
	ASSERT_EQ(0, rig_open(&r, seed));
	start(&r, unordered_writer);
	ASSERT_EQ(1, r.nw);
	/* until it tears, or the writer has made enough updates to: a loaded
	 * machine (CI) once starved it to 1309 updates in 2 000 000 gets */
	err = read_table(&r, 0, OMS_KVS_SINGLE, CONTROL_GETS, 20000, 1, &t);
	rig_close(&r);
	TH_LOG("L32 control, unordered remote writer: %lu torn returned in "
	       "%lu gets, %lu updates (chaos seed %#llx)", t.torn, t.gets,
	       rig_updates(&r), (unsigned long long)seed);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, r.werr);
	ASSERT_EQ(0, t.mismatch);
	ASSERT_GT(t.torn, 0);
}

TEST(kvs_remote_write_no_lost_update)
{
	uint64_t seed = t_seed(0x3203);
	struct rig r = { 0 };
	unsigned long total;

	for (uint32_t p = OMS_KVS_SINGLE; p <= OMS_KVS_PESSIMISTIC; p++)
		spec1(&r, p, 4, OMS_KVS_TABLE_REMOTE_WRITE);
	ASSERT_EQ(0, rig_open(&r, seed));
	start(&r, remote_writer);
	start(&r, remote_writer);
	start(&r, server_writer);
	ASSERT_EQ(3, r.nw);
	/* every (table, item) written many times by writers that really
	 * contended (a loaded machine may run them one after another for a
	 * while: wait, up to 60 s, for both) */
	for (int i = 0; i < 60000 && (rig_updates(&r) < 4000 ||
				       !__atomic_load_n(&r.busy_live,
							__ATOMIC_RELAXED)); i++)
		usleep(1000);
	rig_stop_writers(&r);
	total = rig_updates(&r);
	TH_LOG("3 writers on 16 items: %lu updates, %lu busy, %lu errors",
	       total, r.busy, r.werr);
	EXPECT_EQ(0, r.werr);
	EXPECT_GE(total, 400);
	EXPECT_GT(r.busy, 0);	/* they contended */
	for (uint32_t t = 0; t < r.ntables; t++)
		for (uint32_t k = 0; k < r.spec[t].items; k++) {
			uint64_t v = 0;

			EXPECT_EQ(0, get_one(&r, t, k, &v));
			EXPECT_EQ(KVS_FIRST_VERSION + 2 * r.done[t][k], v) {
				TH_LOG("%s item %u: version %llu after %lu "
				       "updates", oms_kvs_proto_name(
				       r.spec[t].proto), k,
				       (unsigned long long)v, r.done[t][k]);
			}
		}
	rig_close(&r);
}

TEST(kvs_remote_write_versions)
{
	struct rig r = { 0 };
	struct oms_kvs_table *tab[MAX_TABLES];
	struct oms_kvs_client *c;
	struct oms_kvs_stats st = { .size = sizeof(st) };
	struct oms_ctx *ctx;

	for (uint32_t p = OMS_KVS_SINGLE; p <= OMS_KVS_PESSIMISTIC; p++)
		spec1(&r, p, 4, OMS_KVS_TABLE_REMOTE_WRITE);
	ASSERT_EQ(0, rig_open(&r, t_seed(0x3204)));
	ctx = ctx_on(2, r.emu);
	c = client_on(&r, ctx, tab);
	ASSERT_NE(NULL, c);
	for (uint32_t t = 0; t < r.ntables; t++) {
		struct oms_kvs_info info = { .size = sizeof(info) };
		uint64_t v = 0, got = 0;

		ASSERT_EQ(0, oms_kvs_table_info(tab[t], &info));
		EXPECT_EQ(OMS_KVS_TABLE_REMOTE_WRITE, info.flags);
		for (int i = 1; i <= 3; i++) {
			ASSERT_EQ(0, oms_kvs_client_update(c, tab[t], 3, &v));
			EXPECT_EQ(KVS_FIRST_VERSION + 2 * i, v);
			ASSERT_EQ(0, get_one(&r, t, 3, &got));
			EXPECT_EQ(v, got);
		}
		/* the neighbours are untouched */
		ASSERT_EQ(0, get_one(&r, t, 2, &got));
		EXPECT_EQ(KVS_FIRST_VERSION, got);
	}
	ASSERT_EQ(0, oms_kvs_client_stats(c, &st));
	EXPECT_EQ(3 * r.ntables, st.updates);
	EXPECT_EQ(0, st.update_busy);
	oms_kvs_client_destroy(c);
	oms_ctx_destroy(ctx);
	rig_close(&r);
}

TEST(kvs_remote_write_bad_args)
{
	struct rig r = { 0 };
	struct oms_kvs_table *tab[MAX_TABLES], *broken, *other;
	struct oms_kvs_client *c, *c2;
	struct oms_kvs_stats st = { .size = sizeof(st) };
	struct oms_kvs_table_spec bad = { .proto = OMS_KVS_SINGLE,
					  .value_size = 64, .items = 1,
					  .flags = 2 };
	struct oms_kvs_server *s = NULL;
	struct oms_ctx *ctx;
	uint64_t v = 77, got = 0;

	spec1(&r, OMS_KVS_SINGLE, 4, 0);		/* read-only */
	spec1(&r, OMS_KVS_VALIDATION, 4, OMS_KVS_TABLE_REMOTE_WRITE);
	ASSERT_EQ(0, rig_open(&r, t_seed(0x3205)));
	ctx = ctx_on(2, r.emu);
	c = client_on(&r, ctx, tab);
	c2 = client_on(&r, ctx, tab + 4);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, c2);
	ASSERT_EQ(0, oms_kvs_table_open(c, OMS_KVS_BROKEN, VALUE, &broken));
	other = tab[4 + 1];	/* c2's handle of the writable table */

	EXPECT_EQ(-EINVAL, oms_kvs_client_update(NULL, tab[1], 0, &v));
	EXPECT_EQ(-EINVAL, oms_kvs_client_update(c, NULL, 0, &v));
	EXPECT_EQ(-EINVAL, oms_kvs_client_update(c, broken, 0, &v));
	EXPECT_EQ(-EINVAL, oms_kvs_client_update(c, other, 0, &v));
	EXPECT_EQ(-EINVAL, oms_kvs_client_update(c, tab[1], 4, &v));
	EXPECT_EQ(-EINVAL, oms_kvs_client_update(c, tab[1], ~0ull, &v));
	EXPECT_EQ(-EPERM, oms_kvs_client_update(c, tab[0], 0, &v));
	EXPECT_EQ(77, v);
	/* nothing written, nothing counted */
	for (uint32_t t = 0; t < 2; t++)
		for (uint64_t k = 0; k < 4; k++) {
			EXPECT_EQ(0, get_one(&r, t, k, &got));
			EXPECT_EQ(KVS_FIRST_VERSION, got);
		}
	ASSERT_EQ(0, oms_kvs_client_stats(c, &st));
	EXPECT_EQ(0, st.updates);
	EXPECT_EQ(0, st.update_busy);
	/* unknown flags are refused when the table is made */
	EXPECT_EQ(-EINVAL, oms_kvs_server_create(r.srv, &bad, 1, &s));
	EXPECT_EQ(NULL, s);
	oms_kvs_client_destroy(c2);
	oms_kvs_client_destroy(c);
	oms_ctx_destroy(ctx);
	rig_close(&r);
}

TEST_HARNESS_MAIN
