// SPDX-License-Identifier: MIT
/*
 * agent: the destination agent's own cost on this CPU, no verbs and no
 * guest.  One thread hands encoded descriptors to the agent's core
 * (lib/agent/agent.h) as a ring would, polls its completions in batches,
 * and lands gets' bytes into a local buffer as the verbs server would
 * RDMA-WRITE them: requests per second per core, and ns per request.
 *
 * Cells: puts, relaxed gets and acquire gets of each size, unnumbered or
 * as one DEST_SEQ stream (every request numbered, through the reorder
 * buffer and the stop rule); --no-order adds the control of each numbered
 * cell, the agent told to ignore numbers (OMS_AGENT_F_NO_ORDER), so that
 * ordering's share is a ratio of one run.  --check picks the descriptors'
 * format (lib/agent/agent_desc.h): CRC32C, FNV-1a or both, each cell run
 * in each format one after the other, so that the check's share is a
 * ratio of one run too.
 *
 * Where a request's time goes (ns per request): "decode" times
 * oms_ad_decode() alone over the same descriptors, "memory" the copies
 * alone (a put's payload into the region, a get's bytes out and into the
 * landing buffer), "answer" the time inside oms_agent_poll(); "rest" is
 * the remainder of the total: validation, the reorder buffer and stop
 * rule, bookkeeping.  Decode and memory are measured apart, so they are
 * what those steps cost in a tight loop of their own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "bench_util.h"
#include "oms.h"
#include "agent/agent.h"
#include "util/barrier.h"

#define REGION		(1u << 20)
#define LKEY		0x77u
#define RKEY		0x11u
#define WINDOW		256u
#define STAGE_SLOTS	64u
#define NDESC		65536u	/* one full turn of the 16-bit numbers */
#define POLL_EVERY	64u
#define MAX_SIZES	8
#define MAX_REQ		4096u	/* bytes of a request here */

enum cell_op { C_PUT, C_GET, C_GET_ACQ, C_NOPS };
static const char *const op_names[] = { "put", "get", "get_acquire" };
/* --check's names, bit i each, and the format each stands for */
static const char *const check_names[] = { "crc32c", "fnv1a", NULL };
static const enum oms_ad_fmt check_fmts[] = {
	OMS_AD_FMT_CRC32C, OMS_AD_FMT_FNV1A,
};

static uint8_t region[REGION] __attribute__((aligned(64)));
/* a get lands at its offset + LBASE (an address is never 0) */
#define LBASE		64u
static uint8_t landing[REGION + LBASE] __attribute__((aligned(64)));
static uint8_t stage[STAGE_SLOTS * MAX_REQ] __attribute__((aligned(64)));
static uint8_t descs[NDESC][OMS_AD_LEN] __attribute__((aligned(64)));

static int land(void *arg, uint32_t conn, uint64_t laddr, uint32_t lrkey,
		const void *src, uint32_t len)
{
	(void)arg;
	(void)conn;
	if (lrkey != LKEY || laddr > sizeof(landing) ||
	    len > sizeof(landing) - laddr)
		return -EACCES;
	memcpy(landing + laddr, src, len);
	return 0;
}

struct cell {
	enum cell_op op;
	uint32_t size;
	int seq, no_order;
	enum oms_ad_fmt fmt;
};

struct parts {
	double total, decode, memory, answer;
};

/* The descriptors of a cell: request i at offset (i * size) % REGION. */
static int fill_descs(const struct cell *c)
{
	uint32_t per = REGION / c->size;

	for (uint32_t i = 0; i < NDESC; i++) {
		struct oms_ad_desc d = {
			.key = RKEY, .len = c->size,
			.off = (uint64_t)(i % per) * c->size, .tag = i,
		};

		if (c->op == C_PUT) {
			d.op = OMS_AD_PUT;
			d.stage = i % STAGE_SLOTS;
		} else {
			d.op = OMS_AD_GET;
			d.lrkey = LKEY;
			d.laddr = d.off + LBASE;
			if (c->op == C_GET_ACQ)
				d.flags = OMS_AD_F_ACQUIRE;
		}
		if (c->seq) {
			d.flags |= OMS_AD_F_SEQ;
			d.seq = (uint16_t)i;
		}
		if (oms_ad_encode(descs[i], &d, c->fmt))
			return -EINVAL;
	}
	return 0;
}

/* Poll every completion there is; the time inside in *@ns. */
static int drain_cpls(struct oms_agent *ag, uint64_t *ns, uint64_t *done)
{
	struct oms_agent_cpl cpl[256];
	uint64_t t0 = bu_now_ns();
	int n, got = 0;

	while ((n = oms_agent_poll(ag, cpl, 256)) > 0) {
		for (int i = 0; i < n; i++)
			if (cpl[i].status)
				return cpl[i].status;
		got += n;
	}
	*ns += bu_now_ns() - t0;
	*done += (uint64_t)got;
	return 0;
}

/* @n requests of @c through a fresh agent; total and answer ns. */
static int run_agent(const struct cell *c, uint64_t n, struct parts *p)
{
	struct oms_agent_attr a = { .flags = c->no_order ?
				    OMS_AGENT_F_NO_ORDER : 0 };
	struct oms_agent_ops ops = { .land = land };
	struct oms_agent_conn_attr ca = {
		.nstreams = 1, .window = WINDOW, .stage_slots = STAGE_SLOTS,
		.stage_len = MAX_REQ, .stage = stage, .fmt = c->fmt,
	};
	struct oms_agent *ag;
	uint64_t t0, answer = 0, done = 0;
	uint32_t conn;
	int err;

	err = oms_agent_create(&a, &ops, &ag);
	if (err)
		return err;
	err = oms_agent_region_add(ag, region, REGION, RKEY, OMS_ACCESS_ALL);
	if (!err)
		err = oms_agent_conn_open(ag, &ca, &conn);
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < n && !err; i++) {
		err = oms_agent_submit(ag, conn, descs[i % NDESC]);
		if (err == -EAGAIN) {
			err = drain_cpls(ag, &answer, &done);
			i--;	/* nothing changed: again */
			continue;
		}
		if (!err && i % POLL_EVERY == POLL_EVERY - 1)
			err = drain_cpls(ag, &answer, &done);
	}
	if (!err)
		err = drain_cpls(ag, &answer, &done);
	p->total = (double)(bu_now_ns() - t0) / (double)n;
	p->answer = (double)answer / (double)n;
	oms_agent_destroy(ag);
	if (!err && done != n)
		err = -EIO;
	return err;
}

/* The copies alone, and decode alone, over the same requests. */
static void run_parts(const struct cell *c, uint64_t n, struct parts *p)
{
	struct oms_ad_desc d;
	uint64_t t0, sink = 0;

	t0 = bu_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		sink += (uint64_t)oms_ad_decode(descs[i % NDESC], &d, c->fmt);
		sink += d.off;
	}
	p->decode = (double)(bu_now_ns() - t0) / (double)n;
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = (i % (REGION / c->size)) * c->size;

		if (c->op == C_PUT)
			memcpy(region + off, stage + (i % STAGE_SLOTS) *
			       MAX_REQ, c->size);
		else
			memcpy(landing + off + LBASE, region + off, c->size);
		oms_barrier_compiler();
	}
	p->memory = (double)(bu_now_ns() - t0) / (double)n;
	if (sink == 42)	/* keep the decode loop */
		fprintf(stderr, "\n");
}

/* One cell, measured and printed (a row, or a JSON object); @f: its
 * format's index in check_names[].  0, or 1 when a request failed. */
static int run_cell(struct ba *ba, const struct cell *c, uint64_t iters,
		    uint32_t f)
{
	const char *num = !c->seq ? "none" :
			  c->no_order ? "ignored" : "dest_seq";
	struct parts p = { 0 };
	double rest;
	int r = fill_descs(c);

	if (!r)
		r = run_agent(c, iters, &p);
	if (r) {
		ba_err(ba, "%s %u B %s %s: %s", op_names[c->op], c->size, num,
		       check_names[f], strerror(-r));
		return 1;
	}
	run_parts(c, iters, &p);
	rest = p.total - p.decode - p.memory - p.answer;
	ba_json(ba, "\"op\":\"%s\",\"size\":%u,\"numbers\":\"%s\","
		"\"check\":\"%s\",\"mreqs\":%.3f,\"ns_per_req\":%.2f,"
		"\"decode_ns\":%.2f,\"memory_ns\":%.2f,\"answer_ns\":%.2f,"
		"\"rest_ns\":%.2f,\"iters\":%llu",
		op_names[c->op], c->size, num, check_names[f], 1e3 / p.total,
		p.total, p.decode, p.memory, p.answer, rest,
		(unsigned long long)iters);
	bu_printf(!ba->json, " %-7u %-12s %-9s %-7s %9.2f %9.2f %8.2f %8.2f "
		  "%8.2f %8.2f\n", c->size, op_names[c->op], num,
		  check_names[f], 1e3 / p.total, p.total, p.decode, p.memory,
		  p.answer, rest);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t sizes[MAX_SIZES] = { 64, 256, 1024, 4096 }, nsizes = 4;
	uint64_t iters = 2000000;
	uint32_t checks = 1;	/* crc32c */
	int no_order = 0;
	const struct ba_opt opts[] = {
		{ 's', "size", NULL, BA_SIZES, "SIZES",
		  "request bytes (comma list, 8..4096)", sizes,
		  .min = 8, .max = MAX_REQ, .step = 8,
		  .count = &nsizes, .max_items = MAX_SIZES,
		  .dflt = "64,256,1024,4096" },
		{ 'n', "iters", NULL, BA_UINT, "N",
		  "requests per cell (perftest's iterations)", &iters,
		  .min = 1000, .max = 1ull << 36, .flags = BA_U64 },
		{ .long_name = "no-order", .type = BA_FLAG,
		  .help = "also each numbered cell with the agent ignoring "
		  "numbers (the control)", .dst = &no_order },
		{ 0, "check", NULL, BA_SET, "SET",
		  "descriptor formats, each cell in each (crc32c, fnv1a)",
		  &checks, .names = check_names, .dflt = "crc32c" },
	};
	struct ba ba = {
		.name = "agent", .opts = opts,
		.nopts = sizeof(opts) / sizeof(opts[0]),
		.about = "The destination agent's core on this CPU, through an "
			 "in-memory ring: requests per second and ns per "
			 "request by part.",
		.epilog = "Exit status: 0; 1 a request failed; 2 bad flags.",
	};
	int r = ba_parse(&ba, argc, argv);

	if (r != BA_GO_ON)
		return r;
	ba_set_backend(&ba, "none");	/* the agent's core alone */
	bu_printf(!ba.json,
		  "%s\n %-7s %-12s %-9s %-7s %9s %8s %8s %8s %8s %8s\n%s\n",
		  BU_RULE, "#bytes", "op", "numbers", "check", "M req/s",
		  "ns/req", "decode", "memory", "answer", "rest", BU_RULE);
	for (uint32_t s = 0; s < nsizes; s++)
		for (int op = 0; op < C_NOPS; op++)
			for (int k = 0; k < 2 + no_order; k++)
				for (uint32_t f = 0; f < 2; f++) {
					struct cell c = {
						.op = op, .size = sizes[s],
						.seq = k > 0, .no_order = k > 1,
						.fmt = check_fmts[f],
					};

					if ((checks & (1u << f)) &&
					    run_cell(&ba, &c, iters, f))
						return 1;
				}
	bu_printf(!ba.json, "%s\n", BU_RULE);
	return ba_close(&ba);
}
