// SPDX-License-Identifier: MIT
/*
 * engine: cost of the pure ordering engine's fast paths, in ns per
 * operation, single thread, no I/O.
 *
 *   weak_store          submit a weak store (a cumulative ack every 64)
 *   strong_store_idle   submit a strong store with nothing outstanding
 *                       (+ its ack)
 *   strong_store_held   one weak store on channel 0, then a strong store
 *                       on channel 1 that must wait for it: submit (held),
 *                       ack the weak store, progress (released), ack; the
 *                       whole sequence, weak store included, per op
 *   rob_insert_release  insert into a reorder buffer out of order in pairs
 *                       and release the contiguous run
 *   rlsq_acquire_read   acquire + relaxed read through the RLSQ (RC-opt):
 *                       submit both, execute, complete, deliver
 *
 * usage: engine [-n N] [--json] [--out_json FILE]; engine --help lists them
 */
#include <errno.h>
#include <stdlib.h>

#include "bench_args.h"
#include "bench_util.h"
#include "engine/rlsq.h"
#include "engine/rob.h"
#include "engine/store_order.h"

struct result {
	const char *op;
	uint64_t ops, ns;
};

static const struct oms_so_chan_cfg chans[] = {
	{ .dest = 0, .kind = OMS_CHAN_ACKED },
	{ .dest = 1, .kind = OMS_CHAN_ACKED },
};

static int bench_weak(uint64_t iters, struct result *r)
{
	struct oms_so so;
	struct oms_so_store st = { .len = 64, .cls = OMS_STORE_WEAK };
	uint64_t seq, t0;

	if (oms_so_init(&so, 2, chans, 2, 64))
		return -1;
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < iters; i++) {
		st.addr = i << 6;
		if (oms_so_submit(&so, &st, &seq) != OMS_SO_ISSUE)
			return -1;
		if ((i & 63) == 63 && oms_so_ack(&so, 0, i + 1, 0))
			return -1;
	}
	r->ns = bu_now_ns() - t0;
	r->ops = iters;
	r->op = "weak_store";
	oms_so_destroy(&so);
	return 0;
}

static int bench_strong_idle(uint64_t iters, struct result *r)
{
	struct oms_so so;
	struct oms_so_store st = { .len = 8, .cls = OMS_STORE_STRONG };
	uint64_t seq, t0;

	if (oms_so_init(&so, 2, chans, 2, 64))
		return -1;
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < iters; i++) {
		if (oms_so_submit(&so, &st, &seq) != OMS_SO_ISSUE ||
		    oms_so_ack(&so, 0, seq + 1, 0))
			return -1;
	}
	r->ns = bu_now_ns() - t0;
	r->ops = iters;
	r->op = "strong_store_idle";
	oms_so_destroy(&so);
	return 0;
}

static int bench_strong_held(uint64_t iters, struct result *r)
{
	struct oms_so so;
	struct oms_so_store w = { .len = 64, .cls = OMS_STORE_WEAK, .chan = 0 };
	struct oms_so_store s = { .len = 8, .cls = OMS_STORE_STRONG, .chan = 1,
				  .addr = 1 << 20 };
	struct oms_so_action act[4];
	uint64_t seq, wseq, t0;

	if (oms_so_init(&so, 2, chans, 2, 64))
		return -1;
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < iters; i++) {
		if (oms_so_submit(&so, &w, &wseq) != OMS_SO_ISSUE ||
		    oms_so_submit(&so, &s, &seq) != OMS_SO_HELD ||
		    oms_so_ack(&so, 0, wseq + 1, 0) ||
		    oms_so_progress(&so, act, 4) != 1 ||
		    oms_so_ack(&so, 1, act[0].seq + 1, 0))
			return -1;
	}
	r->ns = bu_now_ns() - t0;
	r->ops = iters;
	r->op = "strong_store_held";
	oms_so_destroy(&so);
	return 0;
}

static int bench_rob(uint64_t iters, struct result *r)
{
	struct oms_rob rob;
	uint64_t out[4], t0;
	oms_rob_seq_t s = 0;

	if (oms_rob_init(&rob, 1, 64, NULL, 0))
		return -1;
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < iters; i += 2, s += 2) {
		/* the later chunk arrives first, then the gap fills */
		if (oms_rob_insert(&rob, 0, (oms_rob_seq_t)(s + 1), i + 1) != 0 ||
		    oms_rob_insert(&rob, 0, s, i) != 1 ||
		    oms_rob_release(&rob, 0, out, 4) != 2)
			return -1;
	}
	r->ns = bu_now_ns() - t0;
	r->ops = iters;
	r->op = "rob_insert_release";
	oms_rob_destroy(&rob);
	return 0;
}

static int bench_rlsq(uint64_t iters, struct result *r)
{
	struct oms_rlsq q;
	struct oms_rlsq_action act[8];
	uint64_t t0;
	uint32_t id;

	if (oms_rlsq_init(&q, 256, 1, OMS_RLSQ_RC_OPT, NULL, 0))
		return -1;
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < iters; i++) {
		int delivered = 0, n;

		if (oms_rlsq_submit(&q, 0, OMS_RLSQ_ACQUIRE, 0, i, &id) ||
		    oms_rlsq_submit(&q, 0, OMS_RLSQ_READ, 1, i, &id))
			return -1;
		while (delivered < 2) {
			n = oms_rlsq_poll(&q, act, 8);
			if (n <= 0)
				return -1;
			for (int k = 0; k < n; k++) {
				if (act[k].type == OMS_RLSQ_DELIVER)
					delivered++;
				else if (oms_rlsq_complete(&q, act[k].id, i))
					return -1;
			}
		}
	}
	r->ns = bu_now_ns() - t0;
	r->ops = iters;
	r->op = "rlsq_acquire_read";
	oms_rlsq_destroy(&q);
	return 0;
}

int main(int argc, char **argv)
{
	int (*fns[])(uint64_t, struct result *) = {
		bench_weak, bench_strong_idle, bench_strong_held, bench_rob,
		bench_rlsq,
	};
	uint64_t iters = 10000000;
	const struct ba_opt opts[] = {
		{ 'n', "iters", NULL, BA_UINT, "N",
		  "operations per benchmark (perftest's iterations)",
		  &iters, .min = 2, .max = 1ull << 40, .flags = BA_U64 },
	};
	struct ba ba = {
		.name = "engine", .opts = opts,
		.nopts = sizeof(opts) / sizeof(opts[0]),
		.about = "ns per operation of the pure ordering engine's fast "
			 "paths (one thread, no I/O).",
	};
	int r = ba_parse(&ba, argc, argv);

	if (r != BA_GO_ON)
		return r;
	ba_set_backend(&ba, "none");	/* the engine alone, no device */
	bu_printf(!ba.json, "%s\n %-22s %14s %12s %12s\n%s\n", BU_RULE, "op",
		  "#ops", "ns/op", "Mops/s", BU_RULE);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct result res = { 0 };
		double nsop;

		if (fns[i](iters, &res)) {
			ba_err(&ba, "benchmark %zu failed", i);
			return 1;
		}
		nsop = (double)res.ns / (double)res.ops;
		ba_json(&ba, "\"op\":\"%s\",\"ops\":%llu,\"ns_per_op\":%.2f,"
			"\"mops\":%.2f", res.op, (unsigned long long)res.ops,
			nsop, 1e3 / nsop);
		bu_printf(!ba.json, " %-22s %14llu %12.2f %12.2f\n", res.op,
			  (unsigned long long)res.ops, nsop, 1e3 / nsop);
	}
	bu_printf(!ba.json, "%s\n", BU_RULE);
	return ba_close(&ba);
}
