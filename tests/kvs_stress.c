// SPDX-License-Identifier: MIT
/*
 * The KVS (lib/kvs) under writers on the emulated device, chaos on (the
 * lines of a relaxed read land in any order, puts and atomics execute in
 * any order, completions come back late and shuffled).
 *
 * litmus_L32_kvs_gets_under_writer_on_emu: litmus L32 (docs/kvs.md).
 *   A writer thread (the server's CPU) keeps
 *   rewriting a few hot items in each protocol's write order while a
 *   client gets them: Single Read, Validation, FaRM and Pessimistic return
 *   0 torn values in >= 1 000 000 gets (100 000 under ASan); the writer
 *   really raced the reader (updates and retries > 0); the broken baseline
 *   (Single Read's layout, relaxed read) returns torn values, which proves
 *   the detector works.
 * kvs_stress_writers_and_readers: every protocol's tables (64 B to 1 KiB
 *   values) in one server, several writer threads, several client threads
 *   with two connections each and mixed protocols in one batch: 0 torn.
 *
 * Every value returned is checked twice: by the client's detector and here
 * against a freshly derived value; both must agree.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"
#include "oms_kvs.h"

#ifdef __SANITIZE_ADDRESS__
#define L32_TRIALS	100000ul
#define STRESS_GETS	40000ul
#else
#define L32_TRIALS	1000000ul
#define STRESS_GETS	200000ul
#endif
#define MAX_TABLES	16
#define MAX_WRITERS	4
#define BATCH		256u

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
	unsigned long updates, busy, werr;
	unsigned long live_updates;	/* as they happen, for the readers */
};

struct tally {
	unsigned long gets, torn, retries, errors, mismatch;
};

static struct oms_ctx *ctx_on(uint32_t node, struct oms_emu *emu)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *c;

	a.comp_mask = OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_EMU;
	a.node = node;
	a.emu = emu;
	return oms_ctx_create(&a, &c) ? NULL : c;
}

static void *writer(void *arg)
{
	struct rig *r = arg;
	struct oms_ctx *ctx = ctx_on(1, r->emu);
	struct oms_kvs_writer *w = NULL;
	struct t_rng rng;
	unsigned long n = 0, busy = 0, err = 0;

	t_rng_init(&rng, r->seed ^ (uintptr_t)&rng);
	if (!ctx || oms_kvs_writer_create(r->s, ctx, NULL, &w)) {
		__atomic_add_fetch(&r->werr, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
		if (ctx)
			oms_ctx_destroy(ctx);
		return NULL;
	}
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t t = t_rng_below(&rng, r->ntables);
		int e = oms_kvs_update(w, t, t_rng_below(&rng,
							  r->spec[t].items));

		n += !e;
		if (!e)
			__atomic_add_fetch(&r->live_updates, 1,
					   __ATOMIC_RELAXED);
		busy += e == -EBUSY;
		err += e && e != -EBUSY;
		if (!(n % 16))
			sched_yield();
	}
	oms_kvs_writer_destroy(w);
	oms_ctx_destroy(ctx);
	__atomic_add_fetch(&r->updates, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->busy, busy, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->werr, err, __ATOMIC_RELAXED);
	return NULL;
}

static int rig_open(struct rig *r, uint64_t seed, int writers)
{
	static int port = 7600;

	r->seed = seed;
	snprintf(r->port, sizeof(r->port), "%d", port++);
	/* the rig's device: a fabric that reorders from @seed */
	r->emu = t_chaos_emu(seed);
	r->srv = r->emu ? ctx_on(1, r->emu) : NULL;
	if (!r->srv || oms_kvs_server_create(r->srv, r->spec, r->ntables,
					     &r->s) ||
	    oms_kvs_server_listen(r->s, NULL, r->port))
		return -1;
	for (r->nw = 0; r->nw < writers; r->nw++)
		if (pthread_create(&r->wt[r->nw], NULL, writer, r))
			return -1;
	return 0;
}

static void rig_close(struct rig *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < r->nw; i++)
		pthread_join(r->wt[i], NULL);
	if (r->s)
		oms_kvs_server_destroy(r->s);
	if (r->srv)
		oms_ctx_destroy(r->srv);
	/* after every context of the rig: else -EBUSY, and it lives on */
	if (r->emu && oms_emu_destroy(r->emu))
		fprintf(stderr, "rig_close: a context outlives the rig\n");
	r->emu = NULL;
}

/* Count one returned get; check its value independently. */
static void tally_get(struct tally *t, const struct oms_kvs_get *g,
		      uint32_t value_size, uint8_t *scratch)
{
	int torn;

	t->retries += g->retries;
	if (g->status) {
		t->errors++;
		return;
	}
	oms_kvs_value_fill(g->key, g->version, scratch, value_size);
	torn = memcmp(scratch, g->value, value_size) != 0;
	t->gets++;
	t->torn += torn;
	t->mismatch += torn != (int)g->torn;
}

struct reader {
	struct rig *r;
	uint32_t protos;	/* bit per enum oms_kvs_proto to get */
	uint32_t nconn;
	uint32_t batch;		/* 0 = BATCH */
	unsigned long gets;	/* to do */
	/* and go on (up to 100 x gets) until the writers made this many
	 * updates: on a loaded machine a writer thread may not run at all
	 * while the reader does its gets */
	unsigned long min_updates;
	/* ... and until this many gets were read again (the race seen from
	 * the reader's side), within the same bound: a short run (make
	 * check's quick tier) may see the writer only between its gets */
	unsigned long min_retries;
	int stop_on_torn;
	struct tally t[OMS_KVS_NPROTO];
	int err;
};

/* Gets read again so far, every protocol's. */
static unsigned long retried(const struct reader *rd)
{
	unsigned long n = 0;

	for (int p = 0; p < OMS_KVS_NPROTO; p++)
		n += rd->t[p].retries;
	return n;
}

static void *reader(void *arg)
{
	struct reader *rd = arg;
	struct oms_kvs_client_attr a = oms_kvs_client_attr_default();
	struct oms_kvs_table *tab[MAX_TABLES * 2];
	uint32_t tproto[MAX_TABLES * 2], vsize[MAX_TABLES * 2];
	uint32_t titems[MAX_TABLES * 2], ntab = 0;
	static __thread struct oms_kvs_get g[BATCH], *done[BATCH];
	struct oms_ctx *ctx = ctx_on(0, rd->r->emu);
	struct oms_kvs_client *c = NULL;
	uint8_t *bufs = NULL, *scratch = malloc(OMS_KVS_MAX_VALUE);
	uint32_t free_ix[BATCH], nfree = BATCH, bufsz = 0;
	unsigned long got = 0, torn = 0;
	struct t_rng rng;

	t_rng_init(&rng, rd->r->seed + (uintptr_t)rd);
	a.batch = rd->batch ? rd->batch : BATCH;
	nfree = a.batch;
	a.nconn = rd->nconn;
	rd->err = !ctx || !scratch ||
		  oms_kvs_client_create(ctx, "localhost", rd->r->port, &a, &c);
	for (uint32_t i = 0; !rd->err && i < rd->r->ntables; i++) {
		uint32_t p = rd->r->spec[i].proto;

		for (int broken = 0; broken < 2; broken++) {
			struct oms_kvs_info info = { .size = sizeof(info) };

			if (broken)
				p = p == OMS_KVS_SINGLE ? OMS_KVS_BROKEN :
				    OMS_KVS_NPROTO;
			if (p >= OMS_KVS_NPROTO || !(rd->protos & (1u << p)))
				continue;
			rd->err |= oms_kvs_table_open(c, p,
					rd->r->spec[i].value_size, &tab[ntab]);
			rd->err |= oms_kvs_table_info(tab[ntab], &info);
			if (info.buf_size > bufsz)
				bufsz = info.buf_size;
			tproto[ntab] = p;
			titems[ntab] = info.items;
			vsize[ntab++] = rd->r->spec[i].value_size;
		}
	}
	bufs = malloc((size_t)BATCH * bufsz);
	rd->err |= !ntab || !bufs;
	for (uint32_t i = 0; i < BATCH; i++)
		free_ix[i] = i;
	while (!rd->err && !(rd->stop_on_torn && torn) &&
	       (got < rd->gets ||
		((__atomic_load_n(&rd->r->live_updates, __ATOMIC_RELAXED) <
		  rd->min_updates || retried(rd) < rd->min_retries) &&
		 got < 100 * rd->gets))) {
		int n;

		while (nfree) {
			uint32_t k = free_ix[--nfree], j = t_rng_below(&rng, ntab);

			g[k].table = tab[j];
			g[k].key = t_rng_below(&rng, titems[j]);
			g[k].buf = bufs + (size_t)k * bufsz;
			g[k].user = (void *)(uintptr_t)j;
			if (oms_kvs_submit(c, &g[k])) {
				rd->err = 1;
				break;
			}
		}
		n = oms_kvs_poll(c, done, BATCH);
		if (n < 0)
			rd->err = 1;
		for (int i = 0; i < n; i++) {
			uint32_t j = (uint32_t)(uintptr_t)done[i]->user;
			struct tally *t = &rd->t[tproto[j]];

			tally_get(t, done[i], vsize[j], scratch);
			rd->err |= t->errors > 0;
			torn += done[i]->status == 0 && done[i]->torn;
			free_ix[nfree++] = (uint32_t)(done[i] - g);
			got++;
		}
	}
	if (c)
		oms_kvs_client_destroy(c);
	if (ctx)
		oms_ctx_destroy(ctx);
	free(bufs);
	free(scratch);
	return NULL;
}

static void spec1(struct rig *r, uint32_t proto, uint32_t size,
		  uint32_t items)
{
	r->spec[r->ntables++] = (struct oms_kvs_table_spec){
		.proto = proto, .value_size = size, .items = items };
}

TEST(litmus_L32_kvs_gets_under_writer_on_emu)
{
	uint64_t seed = t_seed(0x2001);
	/* a tenth under make check: the broken baseline tears in 0.1-0.8 %
	 * of its gets, too rarely for a hundredth (HACKING.md) */
	unsigned long n = t_trials_div(L32_TRIALS, 10) / 4, total = 0;

	for (uint32_t p = OMS_KVS_SINGLE; p <= OMS_KVS_PESSIMISTIC; p++) {
		struct rig r = { 0 };
		struct reader rd = { .r = &r, .protos = 1u << p, .nconn = 1,
				     .gets = n, .batch = 32, .min_updates = 64,
				     .min_retries = 1 };
		struct tally *t = &rd.t[p];

		/* Pessimistic: readers keep writers out; a small batch lets
		 * the writer in between rounds often enough to race */
		if (p == OMS_KVS_PESSIMISTIC)
			rd.batch = 4;

		/* 8 hot items of 4 lines: the writer is always near */
		spec1(&r, p, 200, 8);
		ASSERT_EQ(0, rig_open(&r, seed, 1));
		reader(&rd);
		rig_close(&r);
		TH_LOG("L32 %-11s: %lu gets returned, %lu torn, %lu retries, "
		       "%lu updates (chaos seed %#llx)", oms_kvs_proto_name(p),
		       t->gets, t->torn, t->retries, r.updates,
		       (unsigned long long)seed);
		ASSERT_EQ(0, rd.err);
		ASSERT_EQ(0, r.werr);
		ASSERT_EQ(0, t->mismatch);
		ASSERT_EQ(0, t->torn);
		ASSERT_GE(t->gets, n);
		ASSERT_GT(r.updates, 0);
		ASSERT_GT(t->retries, 0);	/* the writer really raced */
		total += t->gets;
	}
	TH_LOG("L32: %lu gets in total, 0 torn", total);

	struct rig r = { 0 };
	struct reader rd = { .r = &r, .protos = 1u << OMS_KVS_BROKEN,
			     .nconn = 1, .gets = 400000, .stop_on_torn = 1,
			     .batch = 32 };

	spec1(&r, OMS_KVS_SINGLE, 200, 8);
	ASSERT_EQ(0, rig_open(&r, seed, 1));
	reader(&rd);
	rig_close(&r);
	TH_LOG("L32 broken baseline (single read layout, relaxed read): %lu "
	       "torn returned in %lu gets", rd.t[OMS_KVS_BROKEN].torn,
	       rd.t[OMS_KVS_BROKEN].gets);
	ASSERT_EQ(0, rd.err);
	ASSERT_EQ(0, rd.t[OMS_KVS_BROKEN].mismatch);
	ASSERT_GT(rd.t[OMS_KVS_BROKEN].torn, 0);
}

TEST(kvs_stress_writers_and_readers)
{
	static const uint32_t sizes[] = { 64, 120, 1024 };
	uint64_t seed = t_seed(0x2002);
	struct rig r = { 0 };
	struct reader rd[3];
	pthread_t th[3];
	const uint32_t correct = (1u << OMS_KVS_SINGLE) |
				 (1u << OMS_KVS_VALIDATION) |
				 (1u << OMS_KVS_FARM) |
				 (1u << OMS_KVS_PESSIMISTIC);

	for (uint32_t p = OMS_KVS_SINGLE; p <= OMS_KVS_PESSIMISTIC; p++)
		for (uint32_t s = 0; s < 3; s++)
			spec1(&r, p, sizes[s], 16);
	ASSERT_EQ(0, rig_open(&r, seed, 3));
	for (int i = 0; i < 3; i++) {
		rd[i] = (struct reader){ .r = &r, .protos = correct,
					 .nconn = 2,
					 .gets = t_trials(STRESS_GETS) / 3 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, reader, &rd[i]));
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	rig_close(&r);
	for (uint32_t p = OMS_KVS_SINGLE; p <= OMS_KVS_PESSIMISTIC; p++) {
		struct tally t = { 0 };

		for (int i = 0; i < 3; i++) {
			t.gets += rd[i].t[p].gets;
			t.torn += rd[i].t[p].torn;
			t.retries += rd[i].t[p].retries;
			t.mismatch += rd[i].t[p].mismatch;
		}
		TH_LOG("%-11s: %lu gets returned, %lu torn, %lu retries",
		       oms_kvs_proto_name(p), t.gets, t.torn, t.retries);
		EXPECT_EQ(0, t.torn);
		EXPECT_EQ(0, t.mismatch);
		EXPECT_GT(t.gets, 0);
	}
	TH_LOG("3 writers: %lu updates, %lu busy (chaos seed %#llx)",
	       r.updates, r.busy, (unsigned long long)seed);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, rd[i].err);
	ASSERT_EQ(0, r.werr);
	ASSERT_GT(r.updates, 0);
}

TEST_HARNESS_MAIN
