// SPDX-License-Identifier: MIT
/*
 * msg_pass: what ordering saves an RDMA application today - the message
 * passing pattern users write by hand: data to one destination, then a
 * flag to another, which tells a consumer there that the data is ready.
 *
 *   quiet      put(data @D1); oms_quiet(); put(flag @D2) - the usual way:
 *              wait for the data's completion before the flag
 *   strong     put(data @D1, WEAK); put(flag @D2, STRONG) - the flag is
 *              performed only after the data; the producer never waits.
 *              Strong stores are cumulative: each flag also waits for the
 *              last flag's acknowledgement, one round trip per message
 *   strong-seq the same from a context with OMS_CTX_F_DEST_SEQ: D2 applies
 *              the flags in sequence order (seed 004's reorder buffer), so
 *              a flag waits only for its data, and flags stream
 *   fence      put(data @D1, WEAK); oms_fence_global(); put(flag @D2, WEAK)
 *   unordered  put(data @D1, WEAK); put(flag @D2, WEAK) - the control: the
 *              flag may be performed first
 *
 *   msg_pass --local [-s SIZES] [--modes SET] [-D SEC] [--window N]
 *            [--scale N] [--chaos SEED] [--runs N] [--json]
 *
 * One process on the emulated device (three nodes: the producer, D1 with
 * the data region, D2 with the flag), its latency model on (--scale wall
 * ns per model ns, the paper's Table 2; figures in model time) and, with
 * --chaos, its reordering.  The producer keeps at most --window messages
 * outstanding (an oms_quiet() every window, so its source buffers can be
 * reused) in every mode.  A consumer thread on D2 watches the flag (host
 * reads of its own region) and, for each new value f, gets the data from
 * D1 with an acquire read: the data's stamps must be >= f.  Every row
 * says how many such checks ran and how many failed ("late"): they must
 * be 0 for every ordered mode (exit 1 otherwise).  The unordered control
 * is there for its rate (what an application that does not order at all
 * would get), not to show late flags: with the latency model on, the
 * consumer's get trails the data put by a round trip, so it is rarely
 * caught; litmus L02/L14/L36 prove the orders themselves.
 *
 * A row per (size, mode): messages, M msgs/s, ratio to quiet, checks,
 * late.  Exit: 0; 1 if an ordered mode was seen late or a run failed; 2
 * for bad flags.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_args.h"
#include "bench_util.h"

#define MAX_SIZES	8
#define MAX_WINDOW	1024
#define DATA_MAX	65536u

enum mode {
	MD_QUIET, MD_STRONG, MD_STRONG_SEQ, MD_FENCE, MD_UNORDERED, MD_COUNT
};

static const char *const mode_names[] = {
	"quiet", "strong", "strong-seq", "fence", "unordered", NULL,
};

struct opts {
	uint32_t sizes[MAX_SIZES], nsizes;
	uint32_t modes, window, scale, runs, port;
	uint64_t chaos;
	double duration;
	int local;
};

static struct opts args = {
	.sizes = { 64, 1024, 8192 }, .nsizes = 3, .modes = (1u << MD_COUNT) - 1,
	.window = 64, .scale = 500, .runs = 1, .port = 18530,
	.duration = 0.5,
};

static const struct ba_opt opts[] = {
	{ 0, "local", NULL, BA_FLAG, NULL,
	  "producer, destinations and consumer in this process, on the "
	  "emulated device (the only mode)", &args.local, .group = 1 },
	{ 's', "size", NULL, BA_SIZES, "SIZES", "bytes of data per message",
	  args.sizes, .min = 16, .max = DATA_MAX, .step = 8,
	  .count = &args.nsizes, .max_items = MAX_SIZES },
	{ 0, "modes", NULL, BA_SET, "SET", "how the flag is ordered after "
	  "the data", &args.modes, .names = mode_names },
	{ 'D', "duration", NULL, BA_DOUBLE, "SEC", "wall seconds per cell",
	  &args.duration, .dmin = 0.01, .dmax = 600 },
	{ 0, "window", NULL, BA_UINT, "N",
	  "messages outstanding at most (a quiet every N)", &args.window,
	  .min = 1, .max = MAX_WINDOW },
	{ 0, "scale", NULL, BA_UINT, "N",
	  "latency model: wall ns per model ns; 0: no model, wall time",
	  &args.scale, .min = 0, .max = 100000 },
	{ 0, "chaos", NULL, BA_UINT, "SEED",
	  "the emulated device reorders with this seed (0: in order)",
	  &args.chaos, .flags = BA_U64, .min = 0, .max = UINT64_MAX },
	{ 0, "runs", NULL, BA_UINT, "N", "best of N runs per cell, modes "
	  "interleaved", &args.runs, .min = 1, .max = 100 },
	{ 'p', "port", NULL, BA_UINT, "PORT",
	  "the destinations listen on PORT and PORT+1 (in process)",
	  &args.port, .min = 1, .max = 65534 },
};

static struct ba ba = {
	.prog = "msg_pass", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.synopsis = "--local [options]",
	.about = "Message passing: data to one destination, a flag to "
		 "another; waiting for completion vs liboms's ordered stores.",
	.epilog = "Exit status: 0; 1 an ordered mode delivered a flag before "
		  "its data, or a run failed; 2 bad flags.",
	.need_group = 1,
};

struct rig {
	struct oms_ctx *d1, *d2, *prod, *prod_seq;
	struct oms_mr *data_mr, *flag_mr;
	struct oms_listener *l1, *l2;
	struct oms_rmr data, flag;	/* the producer's connections */
	struct oms_rmr data_seq, flag_seq;	/* and the DEST_SEQ one's */
	uint8_t *data_mem;
	uint64_t *flag_mem;
	char port1[8], port2[8];
};

static int ctx_make(const struct opts *o, uint32_t node, int first,
		    uint32_t flags, struct oms_ctx **ctx)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_BACKEND |
		      OMS_CTX_ATTR_TIMEOUT | OMS_CTX_ATTR_FLAGS;
	a.flags = flags;
	a.backend = OMS_BACKEND_EMU;
	a.node = node;
	a.timeout_ms = 60000;	/* a loaded machine, not a dead peer */
	if (first && o->scale) {
		/* the paper's Table 2, as bench/ordered_read */
		a.comp_mask |= OMS_CTX_ATTR_EMU_LATENCY;
		a.lat_bus_ns = 200;
		a.lat_rc_ns = 17;
		a.lat_mem_ns = 50;
		a.link_gbps = 100;
		a.time_scale = o->scale;
	}
	if (first && o->chaos) {
		a.comp_mask |= OMS_CTX_ATTR_EMU_CHAOS;
		a.chaos_seed = o->chaos;
	}
	return oms_ctx_create(&a, ctx);
}

static int rig_open(struct rig *r, const struct opts *o)
{
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(r->port1, sizeof(r->port1), "%u", o->port);
	snprintf(r->port2, sizeof(r->port2), "%u", o->port + 1);
	r->data_mem = aligned_alloc(4096, DATA_MAX);
	r->flag_mem = aligned_alloc(4096, 4096);
	err = r->data_mem && r->flag_mem ? 0 : -ENOMEM;
	if (!err) {
		memset(r->data_mem, 0, DATA_MAX);
		memset(r->flag_mem, 0, 4096);
		/* the first context starts the device with its settings */
		err = ctx_make(o, 1, 1, 0, &r->d1);
	}
	if (!err)
		err = ctx_make(o, 2, 0, 0, &r->d2);
	if (!err)
		err = ctx_make(o, 0, 0, 0, &r->prod);
	if (!err)
		err = ctx_make(o, 0, 0, OMS_CTX_F_DEST_SEQ, &r->prod_seq);
	if (!err)
		err = oms_mr_reg(r->d1, r->data_mem, DATA_MAX,
				 OMS_ACCESS_REMOTE_READ |
				 OMS_ACCESS_REMOTE_WRITE, &r->data_mr);
	if (!err)
		err = oms_mr_reg(r->d2, r->flag_mem, 4096,
				 OMS_ACCESS_REMOTE_WRITE, &r->flag_mr);
	if (!err)
		err = oms_listen(r->d1, "localhost", r->port1, r->data_mr,
				 &r->l1);
	if (!err)
		err = oms_listen(r->d2, "localhost", r->port2, r->flag_mr,
				 &r->l2);
	if (!err)
		err = oms_connect(r->prod, "localhost", r->port1, 0, &r->data);
	if (!err)
		err = oms_connect(r->prod, "localhost", r->port2, 0, &r->flag);
	if (!err)
		err = oms_connect(r->prod_seq, "localhost", r->port1, 0,
				  &r->data_seq);
	if (!err)
		err = oms_connect(r->prod_seq, "localhost", r->port2, 0,
				  &r->flag_seq);
	return err;
}

static void rig_close(struct rig *r)
{
	if (r->prod)
		oms_ctx_destroy(r->prod);
	if (r->prod_seq)
		oms_ctx_destroy(r->prod_seq);
	if (r->l1)
		oms_listener_close(r->l1);
	if (r->l2)
		oms_listener_close(r->l2);
	if (r->data_mr)
		oms_mr_dereg(r->data_mr);
	if (r->flag_mr)
		oms_mr_dereg(r->flag_mr);
	if (r->d1)
		oms_ctx_destroy(r->d1);
	if (r->d2)
		oms_ctx_destroy(r->d2);
	free(r->data_mem);
	free(r->flag_mem);
}

/* ---- the consumer at D2 ----------------------------------------------- */

struct consumer {
	struct rig *r;
	uint32_t size;
	int stop, err;
	uint64_t checks, late;
};

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	struct oms_ctx *ctx = NULL;
	struct oms_rmr d1;
	uint8_t *buf = malloc(DATA_MAX);
	uint64_t last = 0;
	int err = buf ? ctx_make(&args, 3, 0, 0, &ctx) : -ENOMEM;

	if (!err)
		err = oms_connect(ctx, "localhost", c->r->port1, 0, &d1);
	while (!err && !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		uint64_t f = 0, head, tail;

		/* the flag as D2's memory holds it (coherent host read) */
		err = oms_mr_read(c->r->flag_mr, 0, &f, sizeof(f));
		if (err || f == last) {
			sched_yield();
			continue;
		}
		last = f;
		err = oms_get(ctx, buf, &d1, 0, c->size, OMS_READ_ACQUIRE);
		if (!err)
			err = oms_quiet(ctx);
		if (err)
			break;
		memcpy(&head, buf, 8);
		memcpy(&tail, buf + c->size - 8, 8);
		c->checks++;
		c->late += head < f || tail < f;
	}
	c->err = err;
	if (ctx)
		oms_ctx_destroy(ctx);
	free(buf);
	return NULL;
}

/* ---- the producer ----------------------------------------------------- */

struct result {
	uint64_t msgs, checks, late;
	double mmsgs;
};

static int produce(struct rig *r, enum mode m, uint32_t size, double scale,
		   double dur, uint32_t window, struct result *res)
{
	static uint64_t flags[MAX_WINDOW];
	/* a source buffer per outstanding message: reused after a quiet */
	uint8_t *ring = aligned_alloc(64, (size_t)window * size);
	struct consumer c = { .r = r, .size = size };
	int seq = m == MD_STRONG_SEQ;
	struct oms_ctx *ctx = seq ? r->prod_seq : r->prod;
	const struct oms_rmr *data = seq ? &r->data_seq : &r->data;
	const struct oms_rmr *flag = seq ? &r->flag_seq : &r->flag;
	uint64_t t0, t1, i = 0, seq0;
	pthread_t th;
	int err = 0;

	/* carry on from the last cell's numbers: flags only grow */
	memcpy(&seq0, r->flag_mem, sizeof(seq0));
	if (!ring)
		return -ENOMEM;
	if (pthread_create(&th, NULL, consumer_main, &c)) {
		free(ring);
		return -EAGAIN;
	}
	t0 = bu_now_ns();
	while (!err && bu_now_ns() - t0 < (uint64_t)(dur * 1e9)) {
		for (uint32_t k = 0; k < window && !err; k++) {
			uint32_t slot = (uint32_t)(i % window);
			uint8_t *buf = ring + (size_t)slot * size;
			uint64_t n = seq0 + ++i;

			memcpy(buf, &n, 8);
			memcpy(buf + size - 8, &n, 8);
			flags[slot] = n;
			err = oms_put(ctx, data, 0, buf, size,
				      OMS_STORE_WEAK);
			if (!err && m == MD_QUIET)
				err = oms_quiet(ctx);
			if (!err && m == MD_FENCE)
				err = oms_fence_global(ctx);
			if (!err)
				err = oms_put(ctx, flag, 0, &flags[slot], 8,
					      m == MD_STRONG || seq ?
					      OMS_STORE_STRONG :
					      OMS_STORE_WEAK);
		}
		if (!err)
			err = oms_quiet(ctx);
	}
	t1 = bu_now_ns();
	/* let the consumer see the last flag */
	usleep(20000);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	free(ring);
	if (err || c.err)
		return err ? err : c.err;
	res->msgs = i;
	res->checks = c.checks;
	res->late = c.late;
	/* model time = wall / scale */
	res->mmsgs = (double)i * 1e3 * scale / (double)(t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	const struct opts *o = &args;
	struct result best[MAX_SIZES][MD_COUNT];
	struct rig r;
	int rc = ba_parse(&ba, argc, argv), bad = 0, err;
	int model = 0;

	if (rc != BA_GO_ON)
		return rc;
	err = rig_open(&r, o);
	if (err) {
		fprintf(stderr, "msg_pass: cannot set up the emulated nodes: "
			"%s\n", strerror(-err));
		rig_close(&r);
		return 1;
	}
	ba_set_backend(&ba, bu_backend_of(r.prod, &model));
	if (!ba.json) {
		printf("Message passing: data to D1, then a flag to D2 "
		       "(emulated device, %s%s), window %u\n",
		       model ? "model time" : "wall time",
		       o->chaos ? ", chaos on" : "", o->window);
		bu_rule();
		printf(" %-7s %-10s %12s %10s %9s %9s %7s\n", "#bytes",
		       "mode", "#msgs", "M msgs/s", "x quiet", "checks",
		       "late");
		bu_rule();
	}
	memset(best, 0, sizeof(best));
	for (uint32_t s = 0; s < o->nsizes && !err; s++) {
		for (uint32_t k = 0; k < o->runs && !err; k++)
			for (uint32_t m = 0; m < MD_COUNT && !err; m++) {
				struct result x;

				if (!(o->modes & 1u << m))
					continue;
				err = produce(&r, m, o->sizes[s],
					      model ? o->scale : 1,
					      o->duration, o->window, &x);
				if (err)
					break;
				/* the rate is the best run's; checks and
				 * late add up over all runs */
				x.late += best[s][m].late;
				x.checks += best[s][m].checks;
				if (k && x.mmsgs < best[s][m].mmsgs) {
					x.msgs = best[s][m].msgs;
					x.mmsgs = best[s][m].mmsgs;
				}
				best[s][m] = x;
			}
		for (uint32_t m = 0; m < MD_COUNT && !err; m++) {
			const struct result *x = &best[s][m];
			double q = best[s][MD_QUIET].mmsgs;

			if (!(o->modes & 1u << m))
				continue;
			if (m != MD_UNORDERED && x->late)
				bad = 1;
			ba_json(&ba, "\"mode\":\"%s\",\"size\":%u,\"msgs\":%llu,"
				"\"mmsgs\":%.6g,\"ratio_vs_quiet\":%.4g,"
				"\"checks\":%llu,\"late\":%llu,\"window\":%u,"
				"\"time\":\"%s\",\"scale\":%u,\"chaos\":%llu",
				mode_names[m], o->sizes[s],
				(unsigned long long)x->msgs, x->mmsgs,
				q > 0 ? x->mmsgs / q : 0,
				(unsigned long long)x->checks,
				(unsigned long long)x->late, o->window,
				model ? "model" : "wall", model ? o->scale : 0,
				(unsigned long long)o->chaos);
			if (!ba.json)
				printf(" %-7u %-10s %12llu %10.3f %9.2f %9llu "
				       "%7llu\n", o->sizes[s], mode_names[m],
				       (unsigned long long)x->msgs, x->mmsgs,
				       q > 0 ? x->mmsgs / q : 0,
				       (unsigned long long)x->checks,
				       (unsigned long long)x->late);
		}
	}
	if (err)
		fprintf(stderr, "msg_pass: %s\n", strerror(-err));
	else if (!ba.json)
		bu_rule();
	if (bad)
		fprintf(stderr, "msg_pass: an ordered mode delivered a flag "
			"before its data\n");
	rig_close(&r);
	rc = err || bad ? 1 : 0;
	return ba_close(&ba) && !rc ? 1 : rc;
}
