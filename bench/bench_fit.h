/* SPDX-License-Identifier: MIT */
/*
 * Fitting the emulated device's latency model to a live link (kvs_get
 * --calibrate).  Three measurements with liboms's own
 * relaxed gets on one connection into a registered buffer, each the
 * median of many rounds, the three kinds of round taken in turn (so a
 * burst of load on a shared machine weighs on all three alike):
 *
 *   rtt        one 64 B get alone: 2 x bus + RC + memory + one request's
 *              service + 64 B on the link, in the model;
 *   round_64   BU_FIT_N 64 B gets issued together, then quiet: the first
 *              costs rtt, each further one a request's service time
 *              (small reads are bound by the request rate);
 *   round_4k   BU_FIT_N 4 KiB gets together: each further one costs its
 *              bytes on the response link.
 *
 * The model's parameters follow: lat_req_ns from round_64, link_gbps
 * from round_4k, lat_bus_ns from what rtt leaves; the root complex and
 * memory keep Table 2's 17 and 50 ns, which a link of microseconds cannot
 * tell apart from the bus.  Everything the requester's CPU spends per get
 * lands in lat_req_ns: the model has no other place for it.
 */
#ifndef OMS_BENCH_FIT_H
#define OMS_BENCH_FIT_H

#include <stdint.h>

#include "oms.h"

#define BU_FIT_N	16	/* gets in one round */

struct bu_link_fit {
	/* measured, wall ns (medians) */
	uint64_t rtt_ns, round64_ns, round4k_ns;
	uint32_t rounds;		/* of each kind */
	/* fitted, for struct oms_ctx_attr / oms_emu_attr */
	uint32_t lat_bus_ns, lat_rc_ns, lat_mem_ns, link_gbps, lat_req_ns;
	/* before rounding to the model's limits (bus and request 1 ms at
	 * most, link 1..10000 Gb/s): a TCG guest's Soft-RoCE link is slower
	 * than the model's slowest */
	double lat_bus_ns_fit, lat_req_ns_fit, link_gbps_fit;
};

/*
 * Measure the link to @src (a region of at least 4 KiB) for about
 * @seconds (at least 8 rounds of each kind) and fit *@f.  0, -EINVAL
 * (region too small), -ENOMEM, or the gets' error.
 */
int bu_link_fit(struct oms_ctx *ctx, const struct oms_rmr *src,
		double seconds, struct bu_link_fit *f);

#endif /* OMS_BENCH_FIT_H */
