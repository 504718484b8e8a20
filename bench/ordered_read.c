// SPDX-License-Identifier: MIT
/*
 * ordered_read: read throughput of one initiator (one QP) reading
 * sequential regions of 64 B - 8 KiB through the emulated device with the
 * latency model on, for the four ways of ordering the cache lines of a
 * read (seed 004, Fig 5):
 *   unordered  relaxed reads: lines in any order, all in parallel;
 *   nic        acquire reads ordered at the NIC: one line per bus round trip;
 *   rc         ordered at the root complex: one line per RC + memory latency;
 *   rc-opt     speculative at the root complex: pipelined, squash on write.
 * Latencies are the paper's Table 2 (200 ns one-way I/O bus, 17 ns root
 * complex, 256 RLSQ entries; 50 ns memory, 100 Gb/s link).
 *
 * Every figure is model time, the device's own clock (oms_emu.h): the
 * reads completed between two readings of the initiator thread's model
 * time (oms_emu_thread_time()), over the time between them, the first
 * taken after a warm-up that fills the pipeline (twice the reads in
 * flight, WARM_MIN at least).  The host's speed or load changes how long
 * a cell takes, not its figure.  --scale is the model's wall-clock floor
 * (wall ns per model ns at least, default 1); it does not change the
 * figures.
 *
 * Each cell keeps reading for -D seconds of wall time (or --ms
 * milliseconds; default 0.1 s), and for TIMED_LINES cache lines of timed
 * reads at least, with up to --qd reads in flight (default 256, at most
 * 64 KiB).  A longer cell times more of the same steady state, over a
 * whole number of LINK_BLOCK lines: its figure is the same.  -s picks
 * sizes (default -a, all of them).  --runs N runs each cell N times
 * (default 1): the figure is their mean, and runs more than RUNS_AGREE
 * apart are reported on stderr, since runs of a deterministic model must
 * agree.
 *
 *   ordered_read [-s SIZES | -a] [-D SEC | --ms N] [--scale N] [--qd N]
 *                [--runs N] [--json] [--out_json FILE]
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "bench_util.h"
#include "oms.h"

#define REGION (1u << 20)

/* Reads completed before the timed ones, at least (twice the reads in
 * flight otherwise: the first window fills the pipeline, the second is
 * in the steady state). */
#define WARM_MIN	64
/* Lines the timed reads cover, at least. */
#define TIMED_LINES	4096
/*
 * The timed reads cover a multiple of this many lines.  The model's
 * clock counts whole ns, and a completion on a busy link is due at its
 * line's 5.12 ns (100 Gb/s) rounded down; 25 lines take 128 ns, so a
 * span of whole blocks is exact, and the figure the same whatever the
 * count.
 */
#define LINK_BLOCK	25
/* Runs of one cell that differ by more than this are reported. */
#define RUNS_AGREE	0.001

struct mode {
	const char *name;
	uint32_t order;
	unsigned flags;
};

static const struct mode modes[] = {
	{ "unordered", OMS_ORDER_RC, OMS_READ_RELAXED },
	{ "nic", OMS_ORDER_NIC, OMS_READ_ACQUIRE },
	{ "rc", OMS_ORDER_RC, OMS_READ_ACQUIRE },
	{ "rc-opt", OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE },
};

#define NMODES (sizeof(modes) / sizeof(modes[0]))
#define NSIZES 8	/* 64 B - 8 KiB */

/* The backend the first run used, for the JSON records. */
static char g_backend[16] = "?";

static void note_backend(struct oms_ctx *ctx)
{
	struct oms_caps caps = { .size = sizeof(caps) };

	if (g_backend[0] == '?' && !oms_query_caps(ctx, &caps))
		snprintf(g_backend, sizeof(g_backend), "%s", caps.backend_name);
}

/*
 * Model-time Mop/s of @mode at @size; -errno on failure.  The loop waits
 * for completions only in oms_progress() (a second call that finds
 * nothing waits in liboms), so this thread never holds the model's clock
 * while the device has work for it.
 */
static int run(const struct mode *m, uint32_t size, uint32_t scale,
	       uint64_t wall_ms, uint32_t qd, uint8_t *mem, uint8_t *dst,
	       double *mops)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ini, *tgt = NULL;
	struct oms_emu *emu;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t issued = 0, done = 0, off = 0, t0 = 0, t1 = 0, done0 = 0;
	uint64_t warm, timed, w0;
	int err, out = 0, timing = 0;

	/* Enough in flight to cover the bandwidth-delay product (64 KiB is
	 * several times the model's), not more: the final quiet drains them,
	 * one line per round trip in NIC mode. */
	if (qd > 65536 / size)
		qd = 65536 / size > 8 ? 65536 / size : 8;
	warm = 2ull * qd > WARM_MIN ? 2ull * qd : WARM_MIN;
	timed = TIMED_LINES / (size / 64);

	err = bu_emu_table2(scale, m->order, 0, &emu);
	if (err)
		return err;
	a.comp_mask = OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_QDEPTH | OMS_CTX_ATTR_TIMEOUT;
	a.emu = emu;
	/* in process: a stall is a busy machine, never a dead peer (the
	 * default 5 s once expired under two make checks) */
	a.timeout_ms = 60000;
	a.queue_depth = 1024;
	err = oms_ctx_create(&a, &ini);
	if (err) {
		oms_emu_destroy(emu);
		return err;
	}
	note_backend(ini);
	a.node = 1;
	err = oms_ctx_create(&a, &tgt);
	if (!err)
		err = oms_mr_reg(tgt, mem, REGION, OMS_ACCESS_ALL, &mr);
	if (!err)
		err = oms_mr_remote(mr, &r);
	if (err)
		goto out;
	/*
	 * t0 and t1 are read only right after oms_progress() has found
	 * completions: the thread's model time is then that of the last
	 * one it counted.  (A call that waits returns when the device wakes
	 * the thread, at the time of a completion it has not counted yet.)
	 */
	w0 = bu_now_ns();
	for (;;) {
		uint64_t was = done;

		while ((uint64_t)out < qd) {
			err = oms_get(ini, dst + off, &r, off, size, m->flags);
			if (err)
				goto out;
			off = (off + size) % REGION;
			issued++;
			out++;
		}
		out = oms_progress(ini);
		if (out < 0) {
			err = out;
			goto out;
		}
		done = issued - (uint64_t)out;
		if (done == was)
			continue;
		if (!timing && done >= warm) {
			err = oms_emu_thread_time(emu, &t0);
			if (err)
				goto out;
			done0 = done;
			timing = 1;
		} else if (timing && done - done0 >= timed &&
			   (done - done0) * (size / 64) % LINK_BLOCK == 0 &&
			   bu_now_ns() - w0 >= wall_ms * 1000000ull) {
			err = oms_emu_thread_time(emu, &t1);
			break;
		}
	}
	if (!err && t1 <= t0)
		err = -EPROTO;	/* no model time passed: no latency model */
	if (!err)
		*mops = (double)(done - done0) * 1000.0 / (double)(t1 - t0);
	if (!err)
		err = oms_quiet(ini);
out:
	oms_ctx_destroy(ini);
	if (tgt)
		oms_ctx_destroy(tgt);
	oms_emu_destroy(emu);
	return err;
}

/* The command line; what ba_parse() leaves untouched keeps these values. */
static struct {
	uint32_t scale, qd, runs;
	uint32_t sizes[NSIZES], nsizes;
	double dur_s;
	int gbits;			/* --report_gbits */
} o = {
	.scale = 1, .qd = 256, .runs = 1, .dur_s = 0.1,
	.sizes = { 64, 128, 256, 512, 1024, 2048, 4096, 8192 },
	.nsizes = NSIZES,
};

static const struct ba_opt opts[] = {
	{ 's', "size", NULL, BA_SIZES, "SIZES", "bytes per read", o.sizes,
	  .min = 64, .max = 8192, .flags = BA_POW2, .count = &o.nsizes,
	  .max_items = NSIZES, .group = 1 },
	{ 'a', "all", NULL, BA_FLAG, NULL,
	  "every size, 64 B - 8 KiB (what runs without -s)", .group = 1 },
	{ 'D', "duration", NULL, BA_DOUBLE, "SEC", "wall seconds a cell reads "
	  "for, timing 4096 lines at least; the figures are model time",
	  &o.dur_s, .dmin = 0.001, .dmax = 600, .group = 2 },
	{ 0, "ms", NULL, BA_DOUBLE, "N", "the same in milliseconds", &o.dur_s,
	  .dmin = 1, .dmax = 600000, .scale = 1e-3, .group = 2 },
	{ 0, "scale", NULL, BA_UINT, "N", "the latency model's wall-clock "
	  "floor (wall ns per model ns at least); does not change the "
	  "figures", &o.scale, .min = 1, .max = 100000 },
	{ 0, "qd", NULL, BA_UINT, "N", "reads in flight (at most 64 KiB)",
	  &o.qd, .min = 1, .max = 1024 },
	{ 0, "runs", NULL, BA_UINT, "N", "runs per cell: the figure is their "
	  "mean, and runs that disagree are reported", &o.runs,
	  .min = 1, .max = 100 },
	BA_OPT_REPORT_GBITS(&o.gbits, 0),
};

static struct ba ba = {
	.name = "ordered_read", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.about = "Read throughput by ordering mode (unordered, nic, "
		 "rc, rc-opt) on the emulated\ndevice with the "
		 "Table 2 latencies of the ASPLOS'26 paper (Fig 5), in "
		 "model time.",
};

/*
 * Mean Mop/s of @runs runs of @m at @size into *@mops; runs more than
 * RUNS_AGREE apart are reported (the model is deterministic: they should
 * not be).  -errno of the first failed run.
 */
static int cell(const struct mode *m, uint32_t size, uint32_t scale,
		uint64_t wall_ms, uint32_t qd, uint32_t runs, uint8_t *mem,
		uint8_t *dst, double *mops)
{
	double lo = 0, hi = 0, sum = 0;
	int err = 0;

	for (uint32_t k = 0; k < runs && !err; k++) {
		double x = 0;

		err = run(m, size, scale, wall_ms, qd, mem, dst, &x);
		lo = !k || x < lo ? x : lo;
		hi = !k || x > hi ? x : hi;
		sum += x;
	}
	*mops = err ? 0 : sum / runs;
	if (!err && hi - lo > RUNS_AGREE * *mops)
		ba_err(&ba, "%s %u B: runs disagree, %.4f .. "
		       "%.4f Mop/s", m->name, size, lo, hi);
	return err;
}

int main(int argc, char **argv)
{
	int r = ba_parse(&ba, argc, argv), json = ba.json, fail = 0;
	uint32_t scale = o.scale, qd = o.qd, runs = o.runs;
	uint64_t wall_ms = (uint64_t)llround(o.dur_s * 1000);
	double mops[NMODES][NSIZES];
	uint8_t *mem, *dst;

	if (r != BA_GO_ON)
		return r;
	mem = aligned_alloc(64, REGION);
	dst = aligned_alloc(64, REGION);
	if (!mem || !dst) {
		ba_err(&ba, "out of memory");
		return 1;
	}
	memset(mem, 1, REGION);
	memset(dst, 0, REGION);
	/* A short first run (discarded): it finds the backend for the
	 * records, and says early if the device does not work. */
	if (run(&modes[0], 64, scale, 0, qd, mem, dst, &mops[0][0])) {
		ba_err(&ba, "the emulated device failed");
		return 1;
	}
	ba_set_backend(&ba, g_backend);
	bu_printf(!json, "Ordered DMA reads on the emulated device "
		  "(ASPLOS'26 paper, Fig 5): one QP,\nTable 2 latencies, "
		  "model time (the device's clock; wall-clock floor --scale "
		  "%u),\nup to %u reads (64 KiB) in flight, "
		  "%s%u run%s per cell\n", scale, qd,
		  runs > 1 ? "mean of " : "", runs, runs > 1 ? "s" : "");
	if (!json)
		bu_rule();
	bu_printf(!json, " %-8s", "bytes");
	for (unsigned m = 0; m < NMODES; m++)
		bu_printf(!json, " %9s Mop/s %8s", modes[m].name,
			  ba_bw_unit(o.gbits));
	bu_printf(!json, "  opt/unord\n");
	if (!json)
		bu_rule();
	for (unsigned s = 0; s < o.nsizes; s++) {
		uint32_t size = o.sizes[s];

		bu_printf(!json, " %-8u", size);
		for (unsigned m = 0; m < NMODES; m++) {
			int err = cell(&modes[m], size, scale, wall_ms, qd,
				       runs, mem, dst, &mops[m][s]);
			double gbps = mops[m][s] * size * 8 / 1000.0;

			if (err) {
				ba_err(&ba, "%s %u B: %s", modes[m].name, size,
				       strerror(-err));
				fail = 1;
			}
			ba_json(&ba, "\"mode\":\"%s\",\"size\":%u,"
				"\"mops\":%.6g,\"gbps\":%.6g,\"scale\":%u,"
				"\"qd\":%u,\"runs\":%u", modes[m].name, size,
				mops[m][s], gbps, scale, qd, runs);
			bu_printf(!json, " %15.2f %8.2f", mops[m][s],
				  ba_bw(gbps, o.gbits));
			fflush(stdout);
		}
		bu_printf(!json, "  %8.2fx\n",
			  mops[0][s] > 0 ? mops[3][s] / mops[0][s] : 0.0);
	}
	if (!json)
		bu_rule();
	free(mem);
	free(dst);
	return ba_close(&ba) || fail;
}
