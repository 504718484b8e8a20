// SPDX-License-Identifier: MIT
/*
 * The emulated device's latency model fitted to a live link: see
 * bench_fit.h for what is measured and how it maps to the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fit.h"
#include "bench_util.h"

#define MAX_ROUNDS	4096
#define BIG		4096u

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One round: @n gets of @len bytes at spread offsets, then quiet. */
static int round_ns(struct oms_ctx *ctx, const struct oms_rmr *src,
		    uint8_t *buf, uint32_t n, uint32_t len, uint64_t *ns)
{
	uint64_t span = src->len - len + 1, t0 = bu_now_ns();
	int err = 0;

	for (uint32_t i = 0; i < n && !err; i++)
		err = oms_get(ctx, buf + (size_t)i * len, src,
			      ((uint64_t)i * BIG) % span / 64 * 64, len,
			      OMS_READ_RELAXED);
	if (!err)
		err = oms_quiet(ctx);
	*ns = bu_now_ns() - t0;
	return err;
}

/* Median of rounds of one kind, for @budget_ns or MAX_ROUNDS. */
static int median_round(struct oms_ctx *ctx, const struct oms_rmr *src,
			uint8_t *buf, uint32_t n, uint32_t len,
			uint64_t budget_ns, uint64_t *t, uint32_t *rounds,
			uint64_t *med)
{
	uint64_t end = bu_now_ns() + budget_ns;
	uint32_t k = 0;
	int err = 0;

	/* a few rounds first: connection set-up and cold caches */
	for (int w = 0; w < 4 && !err; w++)
		err = round_ns(ctx, src, buf, n, len, &t[0]);
	while (!err && k < MAX_ROUNDS && (k < 8 || bu_now_ns() < end))
		err = round_ns(ctx, src, buf, n, len, &t[k++]);
	if (err)
		return err;
	qsort(t, k, sizeof(*t), cmp_u64);
	*med = t[k / 2];
	*rounds = k;
	return 0;
}

static uint32_t clamp_u32(double v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)(v + 0.5);
}

int bu_link_fit(struct oms_ctx *ctx, const struct oms_rmr *src,
		double seconds, struct bu_link_fit *f)
{
	uint64_t budget = (uint64_t)(seconds * 1e9 / 3), *t;
	double req, d, gbps, bus, wire64;
	uint32_t r1, r2, r3;
	uint8_t *buf;
	int err;

	if (!ctx || !src || !f || src->len < BIG || seconds <= 0)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	t = calloc(MAX_ROUNDS, sizeof(*t));
	buf = aligned_alloc(64, (size_t)BU_FIT_N * BIG);
	if (!t || !buf) {
		free(t);
		free(buf);
		return -ENOMEM;
	}
	err = median_round(ctx, src, buf, 1, 64, budget, t, &r1, &f->rtt_ns);
	if (!err)
		err = median_round(ctx, src, buf, BU_FIT_N, 64, budget, t, &r2,
				   &f->round64_ns);
	if (!err)
		err = median_round(ctx, src, buf, BU_FIT_N, BIG, budget, t,
				   &r3, &f->round4k_ns);
	free(t);
	free(buf);
	if (err)
		return err;
	f->rounds = r1 < r2 ? (r1 < r3 ? r1 : r3) : (r2 < r3 ? r2 : r3);
	/* each further small get: one request's service */
	req = (double)(f->round64_ns > f->rtt_ns ?
		       f->round64_ns - f->rtt_ns : 0) / (BU_FIT_N - 1);
	/* big gets: the first one's extra bytes and each further one's
	 * on the link, when the link binds (its time per get is over a
	 * request's service); else each further one costs a service and
	 * only the first one's extra bytes tell the link */
	d = (double)(f->round4k_ns > f->rtt_ns ? f->round4k_ns - f->rtt_ns :
		     1);
	gbps = 8.0 * ((double)BU_FIT_N * BIG - 64) / d;
	if (8.0 * BIG / gbps < req)
		gbps = 8.0 * (BIG - 64) /
		       (d > (BU_FIT_N - 1) * req + 1 ?
			d - (BU_FIT_N - 1) * req : 1);
	f->link_gbps_fit = gbps;
	f->link_gbps = clamp_u32(gbps, 1, 10000);
	f->lat_req_ns = clamp_u32(req, 0, 1000000);
	f->lat_rc_ns = 17;
	f->lat_mem_ns = 50;
	wire64 = 64 * 8.0 / f->link_gbps;
	bus = ((double)f->rtt_ns - f->lat_rc_ns - f->lat_mem_ns -
	       f->lat_req_ns - wire64) / 2;
	f->lat_bus_ns = clamp_u32(bus, 1, 1000000);
	return 0;
}
