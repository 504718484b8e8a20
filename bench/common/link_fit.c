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
	int err = 0, q;

	for (uint32_t i = 0; i < n && !err; i++)
		err = oms_get(ctx, buf + (size_t)i * len, src,
			      ((uint64_t)i * BIG) % span / 64 * 64, len,
			      OMS_READ_RELAXED);
	/* always: the gets issued before a failed one still land in @buf,
	 * which the caller frees next */
	q = oms_quiet(ctx);
	*ns = bu_now_ns() - t0;
	return err ? err : q;
}

/* The three kinds of round: gets per round, bytes per get. */
static const struct {
	uint32_t n, len;
} kinds[3] = { { 1, 64 }, { BU_FIT_N, 64 }, { BU_FIT_N, BIG } };

/*
 * Rounds of the three kinds in turn, for @budget_ns (at least 8 of each,
 * at most MAX_ROUNDS): taken in turn, they see the same load on a shared
 * machine, so their medians stay comparable (taken one kind after the
 * other, a burst of load once made 16 big gets look faster than 16 small
 * ones).  @t holds 3 x MAX_ROUNDS.
 */
static int median_rounds(struct oms_ctx *ctx, const struct oms_rmr *src,
			 uint8_t *buf, uint64_t budget_ns, uint64_t *t,
			 uint32_t *rounds, uint64_t med[3])
{
	uint64_t end = bu_now_ns() + budget_ns, dummy;
	uint32_t k = 0;
	int err = 0;

	/* a few rounds first: connection set-up and cold caches */
	for (int w = 0; w < 4 && !err; w++)
		err = round_ns(ctx, src, buf, BU_FIT_N, BIG, &dummy);
	while (!err && k < MAX_ROUNDS && (k < 8 || bu_now_ns() < end)) {
		for (int i = 0; i < 3 && !err; i++)
			err = round_ns(ctx, src, buf, kinds[i].n,
				       kinds[i].len, &t[i * MAX_ROUNDS + k]);
		k++;
	}
	if (err)
		return err;
	for (int i = 0; i < 3; i++) {
		qsort(t + i * MAX_ROUNDS, k, sizeof(*t), cmp_u64);
		med[i] = t[i * MAX_ROUNDS + k / 2];
	}
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
	uint64_t budget = (uint64_t)(seconds * 1e9), *t, med[3];
	double req, d, gbps, bus, wire64;
	struct oms_mr *mr = NULL;
	uint8_t *buf;
	int err;

	if (!ctx || !src || !f || src->len < BIG || seconds <= 0)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	t = calloc(3 * MAX_ROUNDS, sizeof(*t));
	buf = aligned_alloc(64, (size_t)BU_FIT_N * BIG);
	if (!t || !buf) {
		free(t);
		free(buf);
		return -ENOMEM;
	}
	/* registered, as the cells' buffers are: no bounce copies */
	err = oms_mr_reg(ctx, buf, (size_t)BU_FIT_N * BIG,
			 OMS_ACCESS_REMOTE_READ, &mr);
	if (!err)
		err = median_rounds(ctx, src, buf, budget, t, &f->rounds, med);
	if (mr)
		oms_mr_dereg(mr);
	free(t);
	free(buf);
	if (err)
		return err;
	f->rtt_ns = med[0];
	f->round64_ns = med[1];
	f->round4k_ns = med[2];
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
	f->lat_req_ns_fit = req;
	f->lat_req_ns = clamp_u32(req, 0, 1000000);
	f->lat_rc_ns = 17;
	f->lat_mem_ns = 50;
	wire64 = 64 * 8.0 / f->link_gbps;
	bus = ((double)f->rtt_ns - f->lat_rc_ns - f->lat_mem_ns -
	       f->lat_req_ns - wire64) / 2;
	f->lat_bus_ns_fit = bus;
	f->lat_bus_ns = clamp_u32(bus, 1, 1000000);
	return 0;
}
