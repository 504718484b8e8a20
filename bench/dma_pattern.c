// SPDX-License-Identifier: MIT
/*
 * dma_pattern: the paper's Fig 2 - how long a NIC takes, from the CPU's
 * doorbell, to hold a work request and its data, by how it gets them:
 *
 *   mmio           the CPU writes the request with its data inline through
 *                  MMIO: one posted write, nothing fetched
 *   one-dma        a doorbell, then one DMA read of request and data
 *   two-unordered  a doorbell, then two DMA reads (request, data) at once
 *   two-nic        a doorbell, then the request read, then the data read:
 *                  ordered at the NIC, which waits for the first response
 *                  (what the data pointer inside the request forces)
 *   two-rc         the same two reads ordered where the data is, at the
 *                  root complex (seed 004): both leave the NIC together
 *
 * On the emulated device with the paper's Table 2 latencies (200 ns one
 * way on the I/O bus, 17 ns root complex, 50 ns memory, 100 Gb/s), in
 * model time, the device's own clock (oms_emu.h).  The host (node 0)
 * rings the NIC (node 1) with a put and waits for it in oms_quiet(); the
 * device's observer notes the model time the put lands at the NIC
 * (oms_emu_clock()).  The NIC's fetch is gets on its own connection to
 * the host's memory, as a NIC's DMA engine would read, timed between two
 * readings of the thread's model time (oms_emu_thread_time()).  One
 * thread plays both sides and waits only in liboms, so it never holds
 * the model's clock while the device works.
 *
 * A sample is the doorbell's flight, from the put's issue to its landing,
 * plus the fetch's model duration: on a NIC the fetch starts where the
 * doorbell lands; here it starts after the put's completion, on a device
 * otherwise idle, where it takes the same time.  For mmio the sample is
 * the flight alone.  The figures do not depend on the host's speed or
 * load; --scale is the model's wall-clock floor (wall ns per model ns at
 * least, default 1), which does not change them either.  --samples of
 * them per pattern and size give the CDF (p50, p90, p99, mean; --cdf FILE
 * writes every sample: pattern, bytes, ns).
 *
 *   dma_pattern [-s SIZES] [--patterns SET] [-n N] [--scale N] [--cdf FILE]
 *               [--json]
 *
 * Exit: 0; 1 a run failed; 2 bad flags.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "bench_util.h"
#include "oms_emu.h"

#define MAX_SIZES	8
#define WQE		64u		/* a work request */
#define DATA_MAX	8192u
#define REGION		(WQE + DATA_MAX)

enum pattern { P_MMIO, P_ONE, P_TWO_UN, P_TWO_NIC, P_TWO_RC, P_COUNT };

static const char *const pattern_names[] = {
	"mmio", "one-dma", "two-unordered", "two-nic", "two-rc", NULL,
};

static struct {
	uint32_t sizes[MAX_SIZES], nsizes;
	uint32_t patterns, samples, scale;
	const char *cdf;
} args = {
	.sizes = { 64, 1024 }, .nsizes = 2, .patterns = (1u << P_COUNT) - 1,
	.samples = 1000, .scale = 1,
};

static const struct ba_opt opts[] = {
	{ 's', "size", NULL, BA_SIZES, "SIZES", "bytes of data per request",
	  args.sizes, .min = 8, .max = DATA_MAX, .step = 8,
	  .count = &args.nsizes, .max_items = MAX_SIZES },
	{ 0, "patterns", NULL, BA_SET, "SET", "how the NIC gets request and "
	  "data", &args.patterns, .names = pattern_names },
	{ 'n', "samples", "iters", BA_UINT, "N", "doorbells per pattern and "
	  "size", &args.samples, .min = 10, .max = 1000000 },
	{ 0, "scale", NULL, BA_UINT, "N", "the latency model's wall-clock "
	  "floor (wall ns per model ns at least); the figures do not depend "
	  "on it", &args.scale, .min = 1, .max = 100000 },
	{ 0, "cdf", NULL, BA_STRING, "FILE", "every sample into FILE "
	  "(pattern, bytes, model ns)", .dst = &args.cdf },
};

static struct ba ba = {
	.name = "dma_pattern", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.about = "ASPLOS'26 paper, Fig 2: doorbell to the NIC holding request "
		 "and data, by DMA\npattern, on the emulated device's latency "
		 "model.",
	.epilog = "Exit status: 0; 1 a run failed; 2 bad flags.",
};

/* One device, the host and the NIC on it, for one pattern. */
struct rig {
	struct oms_emu *emu;
	struct oms_ctx *host, *nic;
	struct oms_mr *host_mr, *nic_mr;
	struct oms_listener *host_l, *nic_l;
	struct oms_rmr to_nic, to_host;	/* the host's and the NIC's view */
	uint8_t *host_mem, *nic_mem, *land;
	/* the observer's record: puts landed at the NIC, the last one's
	 * model time */
	uint64_t landed, landed_ns;
};

static void on_event(void *arg, const struct oms_emu_event *ev)
{
	struct rig *g = arg;
	uint64_t t;

	if (ev->kind != OMS_EMU_EV_PUT || ev->dest != 1 ||
	    oms_emu_clock(g->emu, &t))
		return;
	__atomic_store_n(&g->landed_ns, t, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g->landed, 1, __ATOMIC_RELEASE);
}

static int ctx_on(struct rig *g, uint32_t node, struct oms_ctx **ctx)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT;
	a.emu = g->emu;
	a.node = node;
	a.timeout_ms = 60000;	/* a busy machine, not a dead peer */
	return oms_ctx_create(&a, ctx);
}

static void rig_close(struct rig *g)
{
	if (g->emu)
		oms_emu_set_observer(g->emu, NULL, NULL);
	if (g->host)
		oms_ctx_destroy(g->host);
	if (g->nic)
		oms_ctx_destroy(g->nic);
	if (g->emu)
		oms_emu_destroy(g->emu);
	free(g->host_mem);
	free(g->nic_mem);
	free(g->land);
}

static int rig_open(struct rig *g, enum pattern p, uint32_t scale)
{
	struct oms_emu_attr ea = { .size = sizeof(ea) };
	int err;

	memset(g, 0, sizeof(*g));
	ea.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_READ_ORDER;
	ea.lat_bus_ns = 200;
	ea.lat_rc_ns = 17;
	ea.lat_mem_ns = 50;
	ea.link_gbps = 100;
	ea.time_scale = scale;
	ea.read_order = p == P_TWO_RC ? OMS_ORDER_RC : OMS_ORDER_NIC;
	ea.rlsq_entries = 256;
	g->host_mem = aligned_alloc(64, REGION);
	g->nic_mem = aligned_alloc(64, REGION);
	g->land = aligned_alloc(64, REGION);
	if (!g->host_mem || !g->nic_mem || !g->land)
		return -ENOMEM;
	memset(g->host_mem, 7, REGION);
	memset(g->nic_mem, 0, REGION);
	err = oms_emu_create(&ea, &g->emu);
	if (!err)
		err = ctx_on(g, 0, &g->host);
	if (!err)
		err = ctx_on(g, 1, &g->nic);
	if (!err)
		err = oms_mr_reg(g->host, g->host_mem, REGION,
				 OMS_ACCESS_REMOTE_READ, &g->host_mr);
	if (!err)
		err = oms_mr_reg(g->nic, g->nic_mem, REGION,
				 OMS_ACCESS_REMOTE_WRITE, &g->nic_mr);
	if (!err)
		err = oms_listen(g->host, "127.0.0.1", "18560", g->host_mr,
				 &g->host_l);
	if (!err)
		err = oms_listen(g->nic, "127.0.0.1", "18561", g->nic_mr,
				 &g->nic_l);
	if (!err)
		err = oms_connect(g->host, "127.0.0.1", "18561", 0, &g->to_nic);
	if (!err)
		err = oms_connect(g->nic, "127.0.0.1", "18560", 0, &g->to_host);
	if (!err)
		err = oms_emu_set_observer(g->emu, on_event, g);
	return err;
}

/* The NIC's side of one sample: fetch what the doorbell announced. */
static int fetch(struct rig *g, enum pattern p, uint32_t size)
{
	struct oms_ctx *n = g->nic;
	int err = 0;

	switch (p) {
	case P_ONE:
		err = oms_get(n, g->land, &g->to_host, 0, WQE + size,
			      OMS_READ_RELAXED);
		break;
	case P_TWO_UN:
		err = oms_get(n, g->land, &g->to_host, 0, WQE,
			      OMS_READ_RELAXED);
		if (!err)
			err = oms_get(n, g->land + WQE, &g->to_host, WQE, size,
				      OMS_READ_RELAXED);
		break;
	case P_TWO_NIC:
	case P_TWO_RC:
		/* the request first (acquire): the data read is ordered
		 * after it, at the NIC or at the root complex per the
		 * device's read order */
		err = oms_get(n, g->land, &g->to_host, 0, WQE,
			      OMS_READ_ACQUIRE);
		if (!err)
			err = oms_get(n, g->land + WQE, &g->to_host, WQE, size,
				      OMS_READ_RELAXED);
		break;
	default:
		break;
	}
	return err ? err : oms_quiet(n);
}

/*
 * One sample of @p at @size into *@ns (model ns): the doorbell's issue to
 * its landing, plus the fetch's duration.  The thread waits for the put
 * in oms_quiet(), never on the observer's record: a thread that spins
 * outside liboms holds the model's clock at its own time, and the put
 * would never land.  The put's completion comes back after its landing,
 * so the record is there by then.
 */
static int sample(struct rig *g, enum pattern p, uint32_t size,
		  const uint8_t *msg, double *ns)
{
	static const uint64_t db = 1;
	uint64_t seen = __atomic_load_n(&g->landed, __ATOMIC_ACQUIRE);
	uint64_t issue, land, f0 = 0, f1 = 0;
	int err = oms_emu_thread_time(g->emu, &issue);

	/* the CPU's write: the whole request inline, or a doorbell */
	if (!err)
		err = oms_put(g->host, &g->to_nic, 0,
			      p == P_MMIO ? (const void *)msg : &db,
			      p == P_MMIO ? WQE + size : 8,
			      OMS_STORE_UNORDERED);
	if (!err)
		err = oms_quiet(g->host);
	if (err)
		return err;
	if (__atomic_load_n(&g->landed, __ATOMIC_ACQUIRE) != seen + 1)
		return -EPROTO;	/* completed, yet not seen landing */
	land = __atomic_load_n(&g->landed_ns, __ATOMIC_RELAXED);
	if (land < issue)
		return -EPROTO;
	if (p != P_MMIO) {
		err = oms_emu_thread_time(g->emu, &f0);
		if (!err)
			err = fetch(g, p, size);
		if (!err)
			err = oms_emu_thread_time(g->emu, &f1);
		if (err)
			return err;
	}
	*ns = (double)(land - issue) + (double)(f1 - f0);
	return 0;
}

/* @n samples of @p at @size into @ns (model ns). */
static int measure(enum pattern p, uint32_t size, uint32_t n, uint32_t scale,
		   double *ns)
{
	uint8_t msg[WQE + DATA_MAX];
	struct rig g;
	double first;
	int err = rig_open(&g, p, scale);

	memset(msg, 5, sizeof(msg));
	/* One sample first, not counted: from it on, the thread issues at
	 * a model time of its own (before its first command it reads the
	 * device's clock). */
	if (!err)
		err = sample(&g, p, size, msg, &first);
	for (uint32_t i = 0; i < n && !err; i++)
		err = sample(&g, p, size, msg, &ns[i]);
	rig_close(&g);
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, uint32_t n, double p)
{
	uint32_t i = (uint32_t)(p * (n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
	int rc = ba_parse(&ba, argc, argv), err = 0;
	double *ns = NULL;
	FILE *cdf = NULL;

	if (rc != BA_GO_ON)
		return rc;
	ns = calloc(args.samples, sizeof(*ns));
	if (!ns)
		return 1;
	if (args.cdf) {
		cdf = fopen(args.cdf, "w");
		if (!cdf) {
			ba_err(&ba, "--cdf %s: %s", args.cdf,
			       strerror(errno));
			free(ns);
			return ba_fail(&ba, "--cdf: cannot write the file");
		}
		fprintf(cdf, "# pattern bytes model_ns\n");
	}
	ba_set_backend(&ba, "emu");
	if (!ba.json) {
		printf("ASPLOS'26 paper, Fig 2: doorbell to the NIC holding "
		       "request (64 B) and data,\nmodel ns (Table 2 "
		       "latencies), %u samples\n",
		       args.samples);
		bu_rule();
		printf(" %-7s %-14s %9s %9s %9s %9s\n", "#bytes", "pattern",
		       "p50", "p90", "p99", "mean");
		bu_rule();
	}
	for (uint32_t s = 0; s < args.nsizes && !err; s++)
		for (uint32_t p = 0; p < P_COUNT && !err; p++) {
			double mean = 0;

			if (!(args.patterns & 1u << p))
				continue;
			err = measure(p, args.sizes[s], args.samples,
				      args.scale, ns);
			if (err)
				break;
			for (uint32_t i = 0; i < args.samples; i++) {
				mean += ns[i] / args.samples;
				if (cdf)
					fprintf(cdf, "%s %u %.1f\n",
						pattern_names[p],
						args.sizes[s], ns[i]);
			}
			qsort(ns, args.samples, sizeof(*ns), cmp_double);
			ba_json(&ba, "\"pattern\":\"%s\",\"size\":%u,"
				"\"samples\":%u,\"p50_ns\":%.1f,\"p90_ns\":%.1f,"
				"\"p99_ns\":%.1f,\"mean_ns\":%.1f,\"scale\":%u",
				pattern_names[p], args.sizes[s], args.samples,
				pct(ns, args.samples, 0.5),
				pct(ns, args.samples, 0.9),
				pct(ns, args.samples, 0.99), mean, args.scale);
			if (!ba.json)
				printf(" %-7u %-14s %9.0f %9.0f %9.0f %9.0f\n",
				       args.sizes[s], pattern_names[p],
				       pct(ns, args.samples, 0.5),
				       pct(ns, args.samples, 0.9),
				       pct(ns, args.samples, 0.99), mean);
		}
	if (err)
		ba_err(&ba, "%s", strerror(-err));
	else if (!ba.json)
		bu_rule();
	if (cdf && fclose(cdf)) {
		ba_err(&ba, "--cdf %s: write failed",
		       args.cdf);
		err = err ? err : -EIO;
	}
	free(ns);
	rc = err ? 1 : 0;
	return ba_close(&ba) && !rc ? 1 : rc;
}
