// SPDX-License-Identifier: MIT
/*
 * A thousand initiators on one emulated fabric of 16 nodes, checked
 * against the latency model's arithmetic.  Each initiator is a context
 * (its own queue, as a QP is); a few threads drive them, each posting a
 * get on every one of its contexts and then waiting for them, as a
 * client that keeps many connections busy does.  Model time is the
 * device's own clock (oms_emu.h), so the figures are exact:
 *
 *   one responder NIC, lat_req_ns a request: N gets posted at one model
 *     instant complete over N * lat_req_ns, the last one a read's latency
 *     (bus, root complex, memory, the link, bus back) after its turn;
 *   sixteen responders: each serves its share in parallel;
 *   rounds from several threads: the responder stays busy, so the rounds
 *     take N * lat_req_ns each, however the threads interleave.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

#define NODES		16
#define INITIATORS	1000
#define REQ_NS		100u
/* A 64 B read after its NIC turn: request over the bus, root complex and
 * memory, 64 B on the 100 Gb/s link (5.12 ns), the response over the bus. */
#define READ_NS		(200.0 + 17.0 + 50.0 + 5.12 + 200.0)

struct fabric {
	struct oms_emu *emu;
	struct oms_ctx *srv[NODES];	/* a context per node, for its region */
	struct oms_rmr rmr[NODES];
	struct oms_mr *mr[NODES];
	uint8_t *mem[NODES];
	struct oms_ctx *ini[INITIATORS];
	uint64_t buf[INITIATORS][8];
};

static int fabric_open(struct fabric *f)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_NIC_RATE,
		.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100, .time_scale = 1, .lat_req_ns = REQ_NS,
	};
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	memset(f, 0, sizeof(*f));
	err = oms_emu_create(&ea, &f->emu);
	a.comp_mask = OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_QDEPTH;
	a.emu = f->emu;
	a.queue_depth = 8;
	for (uint32_t n = 0; n < NODES && !err; n++) {
		f->mem[n] = aligned_alloc(64, 4096);
		a.node = n;
		err = f->mem[n] ? oms_ctx_create(&a, &f->srv[n]) : -ENOMEM;
		if (!err)
			err = oms_mr_reg(f->srv[n], f->mem[n], 4096,
					 OMS_ACCESS_ALL, &f->mr[n]);
		if (!err)
			err = oms_mr_remote(f->mr[n], &f->rmr[n]);
	}
	/* the initiators, on every node in turn */
	for (uint32_t i = 0; i < INITIATORS && !err; i++) {
		a.node = i % NODES;
		err = oms_ctx_create(&a, &f->ini[i]);
	}
	return err;
}

static void fabric_close(struct fabric *f)
{
	for (uint32_t i = 0; i < INITIATORS; i++)
		if (f->ini[i])
			oms_ctx_destroy(f->ini[i]);
	for (uint32_t n = 0; n < NODES; n++) {
		if (f->mr[n])
			oms_mr_dereg(f->mr[n]);
		if (f->srv[n])
			oms_ctx_destroy(f->srv[n]);
		free(f->mem[n]);
	}
	if (f->emu)
		oms_emu_destroy(f->emu);
}

static uint64_t thread_time(struct oms_emu *emu)
{
	uint64_t t = 0;

	oms_emu_thread_time(emu, &t);
	return t;
}

/* Initiators [from, to) each get 64 B from node @dest (< 0: from the
 * node after its own), all posted first, then each waited for. */
static int round_of(struct fabric *f, uint32_t from, uint32_t to, int dest)
{
	int err = 0;

	for (uint32_t i = from; i < to && !err; i++) {
		uint32_t d = dest < 0 ? (i % NODES + 1) % NODES : (uint32_t)dest;

		err = oms_get(f->ini[i], f->buf[i], &f->rmr[d],
			      (i % 64) * 64, 64, OMS_READ_ACQUIRE);
	}
	for (uint32_t i = from; i < to && !err; i++)
		err = oms_quiet(f->ini[i]);
	return err;
}

/* One thread, a thousand initiators, one responder: the responder's
 * request rate decides, to the nanosecond. */
TEST(thousand_initiators_one_responder)
{
	static struct fabric f;
	uint64_t t0, t1;

	ASSERT_EQ(0, fabric_open(&f));
	t0 = thread_time(f.emu);
	ASSERT_EQ(0, round_of(&f, 0, INITIATORS, NODES - 1));
	t1 = thread_time(f.emu);
	TH_LOG("%d gets from %d initiators on %d nodes to one node: %llu "
	       "model ns (%u ns a request, %.2f ns a read after its turn)",
	       INITIATORS, INITIATORS, NODES, (unsigned long long)(t1 - t0),
	       REQ_NS, READ_NS);
	EXPECT_GE(t1 - t0, (uint64_t)INITIATORS * REQ_NS + (uint64_t)READ_NS);
	EXPECT_LE(t1 - t0, (uint64_t)INITIATORS * REQ_NS + READ_NS + 1);
	fabric_close(&f);
}

/* Each initiator reads from the next node: sixteen responders serve
 * their 62 or 63 requests side by side. */
TEST(thousand_initiators_sixteen_responders)
{
	static struct fabric f;
	const uint64_t most = (INITIATORS + NODES - 1) / NODES;
	uint64_t t0, t1;

	ASSERT_EQ(0, fabric_open(&f));
	t0 = thread_time(f.emu);
	ASSERT_EQ(0, round_of(&f, 0, INITIATORS, -1));
	t1 = thread_time(f.emu);
	TH_LOG("%d gets spread over %d responders: %llu model ns (the "
	       "busiest serves %llu)", INITIATORS, NODES,
	       (unsigned long long)(t1 - t0), (unsigned long long)most);
	EXPECT_GE(t1 - t0, most * REQ_NS + (uint64_t)READ_NS);
	EXPECT_LE(t1 - t0, most * REQ_NS + READ_NS + 1);
	fabric_close(&f);
}

#define THREADS	8
#define ROUNDS	20

struct driver {
	struct fabric *f;
	uint32_t from, to;
	uint64_t t0, t1;
	int err;
};

static pthread_barrier_t start;

static void *drive(void *arg)
{
	struct driver *d = arg;

	/* one round alone first: every thread has issued (and so holds
	 * the clock) before any counts */
	d->err = round_of(d->f, d->from, d->to, NODES - 1);
	pthread_barrier_wait(&start);
	d->t0 = thread_time(d->f->emu);
	for (int r = 0; r < ROUNDS && !d->err; r++)
		d->err = round_of(d->f, d->from, d->to, NODES - 1);
	d->t1 = thread_time(d->f->emu);
	return NULL;
}

/* Eight threads, each with 125 initiators, rounds against one responder:
 * it is never idle, so the rounds take its request rate's time exactly,
 * and no thread finishes a round in less than all of theirs (FIFO). */
TEST(thousand_initiators_eight_threads_keep_a_responder_busy)
{
	static struct fabric f;
	struct driver d[THREADS];
	pthread_t th[THREADS];
	uint64_t first = UINT64_MAX, last = 0;
	const double want = (double)INITIATORS * ROUNDS * REQ_NS;

	ASSERT_EQ(0, fabric_open(&f));
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, THREADS));
	for (int t = 0; t < THREADS; t++) {
		d[t] = (struct driver){ .f = &f,
					.from = t * INITIATORS / THREADS,
					.to = (t + 1) * INITIATORS / THREADS };
		ASSERT_EQ(0, pthread_create(&th[t], NULL, drive, &d[t]));
	}
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		EXPECT_EQ(0, d[t].err);
		if (d[t].t0 < first)
			first = d[t].t0;
		if (d[t].t1 > last)
			last = d[t].t1;
	}
	TH_LOG("%d rounds of %d gets from %d threads: %llu model ns, %.2f "
	       "ns a get (the responder's rate: %u)", ROUNDS, INITIATORS,
	       THREADS, (unsigned long long)(last - first),
	       (double)(last - first) / (INITIATORS * ROUNDS), REQ_NS);
	/* within a read's latency and a round's start of the arithmetic */
	EXPECT_GE((double)(last - first), want - INITIATORS * REQ_NS);
	EXPECT_LE((double)(last - first), want + INITIATORS * REQ_NS);
	EXPECT_LE((double)(last - first) / (INITIATORS * ROUNDS),
		  REQ_NS * 1.01);
	pthread_barrier_destroy(&start);
	fabric_close(&f);
}

TEST_HARNESS_MAIN
