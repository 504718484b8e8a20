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
 *   msg_pass --local [-s SIZES] [--threads LIST] [--modes SET] [-D SEC]
 *            [--window N] [--scale N] [--chaos SEED] [--runs N] [--json]
 *   msg_pass --server [--bind ADDR] [-p PORT]
 *   msg_pass --client HOST [-p PORT] [-s SIZES] [--modes SET] [-D SEC] ...
 *
 * One process on the emulated device (three nodes: the producer, D1 with
 * the data region, D2 with the flag), its latency model on (the paper's
 * Table 2; --scale 0 turns it off: wall time) and, with --chaos, its
 * reordering.  The producer keeps at most --window messages outstanding
 * (an oms_quiet() every window, so its source buffers can be reused) in
 * every mode.  Under the model the figures are model time, the device's
 * own clock (docs/emu-device.md), the same on an idle machine and a busy
 * one: a cell counts the messages of the rounds (a window of messages,
 * then the quiet) within one window of model time common to every
 * producer thread (a round across a bound for its share), opened after a
 * warm-up (a fifth of -D, at most 0.2 s) and closed when -D's wall
 * seconds are up.  --scale N is the model's floor, at least N wall ns per
 * model ns: it changes how long a run takes, never a figure.  A consumer
 * thread on D2 watches the flag (host reads of its own region) and, for
 * each new value f, gets the data from D1 with an acquire read: the
 * data's stamps must be >= f.  Every row says how many such checks ran
 * and how many failed ("late"): they must be 0 for every ordered mode
 * (exit 1 otherwise).  The unordered control is there for its rate (what
 * an application that does not order at all would get), not to show
 * late flags: with the latency model on, the consumer's get trails the
 * data put by a round trip, so it is rarely caught; litmus L02/L14/L36
 * prove the orders themselves.
 *
 * Over verbs (two hosts): --server owns both destinations, D1 (the data)
 * on PORT and D2 (the flag) on PORT+1, each a connection and so a QP of
 * its own, and its CPU is the consumer: it polls the flag word in its
 * memory and reads the data where it landed, and keeps its counts in D2's
 * region, where the client reads them (a get) before and after each cell.
 * --client HOST produces, in wall time.  strong-seq needs destinations
 * that apply sequence numbers: over verbs, the listeners' destination
 * agents (docs/dest-agent.md), which --server runs (OMS_AGENT=1 unless
 * the environment says otherwise); against a server without them the
 * mode is left out (an error if --modes names it).
 *
 * --threads runs each cell with 1..16 producer threads, each with its own
 * contexts (so its own QPs on verbs), its own data at D1 (thread t's at
 * t * 64 KiB) and its own flag word at D2; the consumer checks each
 * thread's flag against that thread's data.
 *
 * A row per (size, threads, mode): messages (all threads; under the model
 * those of the window), M msgs/s, ratio to quiet, checks, late.  Exit: 0;
 * 1 if an ordered mode was seen late or a run failed; 2 for bad flags.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_args.h"
#include "bench_util.h"
#include "model_window.h"
#include "msg_pass_layout.h"

#define MAX_SIZES	8
#define MAX_WINDOW	1024

_Static_assert(MP_MAX_THREADS <= BU_WINDOW_THREADS, "a window per cell");

enum mode {
	MD_QUIET, MD_STRONG, MD_STRONG_SEQ, MD_FENCE, MD_UNORDERED, MD_COUNT
};

static const char *const mode_names[] = {
	"quiet", "strong", "strong-seq", "fence", "unordered", NULL,
};

struct opts {
	uint32_t sizes[MAX_SIZES], nsizes;
	uint32_t threads[MAX_SIZES], nthreads;
	uint32_t modes, window, scale, runs, port, timeout_ms;
	uint64_t chaos;
	double duration;
	int local, server;
	const char *host, *bind;
};

static struct opts args = {
	.sizes = { 64, 1024, 8192 }, .nsizes = 3,
	.threads = { 1 }, .nthreads = 1, .modes = (1u << MD_COUNT) - 1,
	.window = 64, .scale = 1, .runs = 1, .port = 18530,
	.duration = 0.5, .timeout_ms = 20000,
};

static struct ba_rdma rdma;

static const struct ba_opt opts[] = {
	{ 0, "local", NULL, BA_FLAG, NULL,
	  "producer, destinations and consumer in this process, on the "
	  "emulated device", &args.local, .group = 1, .roles = BA_LOCAL },
	{ 0, "server", NULL, BA_FLAG, NULL, "be the server (as with no HOST)",
	  &args.server, .group = 1, .roles = BA_SERVER },
	{ 0, "client", NULL, BA_STRING, "HOST", "be a client of the server "
	  "at HOST (as HOST alone)", &args.host, .group = 1,
	  .roles = BA_CLIENT },
	{ 0, "bind", NULL, BA_STRING, "ADDR", "the local address to listen "
	  "on", &args.bind, .group = 0, .dflt = "every one",
	  .roles = BA_SERVER },
	{ 0, "timeout-ms", NULL, BA_UINT, "MS", "the contexts' liveness "
	  "timeout", &args.timeout_ms, .min = 100, .max = 600000,
	  .roles = BA_SERVER | BA_CLIENT },
	{ 's', "size", NULL, BA_SIZES, "SIZES", "bytes of data per message",
	  args.sizes, .min = 16, .max = MP_DATA_MAX, .step = 8,
	  .count = &args.nsizes, .max_items = MAX_SIZES,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "threads", NULL, BA_UINTS, "LIST", "producer threads (each with "
	  "its contexts, data and flag word) per cell", args.threads,
	  .min = 1, .max = MP_MAX_THREADS, .count = &args.nthreads,
	  .max_items = MAX_SIZES, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "modes", NULL, BA_SET, "SET", "how the flag is ordered after "
	  "the data", &args.modes, .names = mode_names,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 'D', "duration", NULL, BA_DOUBLE, "SEC", "wall seconds per cell "
	  "(under the model, its window of model time opens after a fifth "
	  "of them, at most 0.2 s)", &args.duration, .dmin = 0.01,
	  .dmax = 600, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "window", NULL, BA_UINT, "N",
	  "messages outstanding at most (a quiet every N)", &args.window,
	  .min = 1, .max = MAX_WINDOW, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "scale", NULL, BA_UINT, "N",
	  "0: no latency model (wall time); else the model, on the device's "
	  "own clock, with a floor of N wall ns per model ns that does not "
	  "change the figures", &args.scale, .min = 0, .max = 100000,
	  .roles = BA_LOCAL },
	{ 0, "chaos", NULL, BA_UINT, "SEED",
	  "the emulated device reorders with this seed (0: in order)",
	  &args.chaos, .flags = BA_U64, .min = 0, .max = UINT64_MAX,
	  .roles = BA_LOCAL },
	{ 0, "runs", NULL, BA_UINT, "N", "best of N runs per cell, modes "
	  "interleaved", &args.runs, .min = 1, .max = 100,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 'p', "port", NULL, BA_UINT, "PORT",
	  "the destinations listen on PORT and PORT+1",
	  &args.port, .min = 1, .max = 65534 },
	BA_OPTS_RDMA(&rdma),
};

static struct ba ba = {
	.name = "msg_pass", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.positional = "client",
	.role_help = {
		"the server: both destinations and the consumer, until SIGINT "
		"or SIGTERM",
		"a client: produce into the server at HOST",
		"producer, destinations and consumer in this process, on the "
		"emulated device",
	},
	.record_roles = BA_CLIENT | BA_LOCAL,
	.about = "Message passing: data to one destination, a flag to "
		 "another; waiting for\ncompletion vs liboms's ordered stores.",
	.epilog = "Exit status: 0; 1 an ordered mode delivered a flag before "
		  "its data, or a run failed; 2 bad flags.",
};

/* A producer thread's contexts and connections. */
struct producer {
	struct oms_ctx *ctx, *ctx_seq;	/* the DEST_SEQ one */
	struct oms_rmr data, flag, data_seq, flag_seq;
};

struct rig {
	struct oms_ctx *d1, *d2;
	struct oms_mr *data_mr, *flag_mr;
	struct oms_listener *l1, *l2;
	struct producer prod[MP_MAX_THREADS];
	uint32_t nprod;
	uint8_t *data_mem;
	uint64_t *flag_mem;
	char port1[8], port2[8];
	int seq_refused;	/* verbs: the listeners run no agent */
};

/* --local: the run's emulated device (rig_open() to rig_close()) */
static struct oms_emu *local_emu;

static int ctx_make(const struct opts *o, uint32_t node, uint32_t flags,
		    struct oms_ctx **ctx)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_TIMEOUT | OMS_CTX_ATTR_FLAGS;
	a.flags = flags;
	a.timeout_ms = o->timeout_ms;
	if (!o->local)	/* OMS_BACKEND, else an RDMA device */
		return oms_ctx_create(&a, ctx);
	a.comp_mask |= OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU;
	a.emu = local_emu;
	a.node = node;
	a.timeout_ms = 60000;	/* a loaded machine, not a dead peer */
	return oms_ctx_create(&a, ctx);
}

/* The destinations: D1's data region on PORT, D2's flag region on
 * PORT+1, served on @addr. */
static int rig_serve(struct rig *r, const struct opts *o, const char *addr)
{
	int err;

	r->data_mem = aligned_alloc(4096, MP_DATA_REGION);
	r->flag_mem = aligned_alloc(4096, MP_FLAG_REGION);
	err = r->data_mem && r->flag_mem ? 0 : -ENOMEM;
	if (!err) {
		memset(r->data_mem, 0, MP_DATA_REGION);
		memset(r->flag_mem, 0, MP_FLAG_REGION);
		/* the first context starts the device with its settings */
		err = ctx_make(o, 1, 0, &r->d1);
	}
	if (!err)
		err = ctx_make(o, 2, 0, &r->d2);
	if (!err)
		err = oms_mr_reg(r->d1, r->data_mem, MP_DATA_REGION,
				 OMS_ACCESS_REMOTE_READ |
				 OMS_ACCESS_REMOTE_WRITE, &r->data_mr);
	if (!err)
		err = oms_mr_reg(r->d2, r->flag_mem, MP_FLAG_REGION,
				 OMS_ACCESS_REMOTE_READ |
				 OMS_ACCESS_REMOTE_WRITE, &r->flag_mr);
	if (!err)
		err = oms_listen(r->d1, addr, r->port1, r->data_mr, &r->l1);
	if (!err)
		err = oms_listen(r->d2, addr, r->port2, r->flag_mr, &r->l2);
	return err;
}

/* The producers' contexts, connected to the destinations at @host: the
 * DEST_SEQ ones where the destinations apply numbers (verbs: their
 * agents; else r->seq_refused). */
static int rig_produce(struct rig *r, const struct opts *o, const char *host)
{
	uint32_t tmo = o->timeout_ms, t, n = 1;
	int err = 0;

	for (t = 0; t < o->nthreads; t++)
		n = o->threads[t] > n ? o->threads[t] : n;
	for (t = 0; t < n && !err; t++) {
		struct producer *p = &r->prod[t];

		r->nprod = t + 1;
		err = ctx_make(o, 0, 0, &p->ctx);
		if (!err && (o->modes & 1u << MD_STRONG_SEQ) &&
		    !r->seq_refused)
			err = ctx_make(o, 0, OMS_CTX_F_DEST_SEQ,
				       &p->ctx_seq);
		if (!err)
			err = oms_connect(p->ctx, host, r->port1, tmo,
					  &p->data);
		if (!err)
			err = oms_connect(p->ctx, host, r->port2, tmo,
					  &p->flag);
		if (!err && p->ctx_seq)
			err = oms_connect(p->ctx_seq, host, r->port1, tmo,
					  &p->data_seq);
		if (!err && p->ctx_seq)
			err = oms_connect(p->ctx_seq, host, r->port2, tmo,
					  &p->flag_seq);
		if (err == -EOPNOTSUPP && !o->local) {
			/* a listener without the agent: no reorder buffer */
			r->seq_refused = 1;
			err = 0;
		}
		if (r->seq_refused && p->ctx_seq) {
			oms_ctx_destroy(p->ctx_seq);
			p->ctx_seq = NULL;
		}
	}
	/* every producer has one, or none has */
	for (t = 0; r->seq_refused && t < r->nprod; t++) {
		if (r->prod[t].ctx_seq)
			oms_ctx_destroy(r->prod[t].ctx_seq);
		r->prod[t].ctx_seq = NULL;
	}
	return err;
}

static int rig_open(struct rig *r, const struct opts *o)
{
	int err = 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->port1, sizeof(r->port1), "%u", o->port);
	snprintf(r->port2, sizeof(r->port2), "%u", o->port + 1);
	/* the paper's Table 2 (--scale), reordering (--chaos) */
	if (o->local)
		err = bu_emu_table2(o->scale, OMS_ORDER_RC_OPT, o->chaos,
				    &local_emu);
	if (!err && !o->host)
		err = rig_serve(r, o, o->local ? BU_LOOPBACK : o->bind);
	if (!err && !o->server)
		err = rig_produce(r, o, o->local ? BU_LOOPBACK : o->host);
	return err;
}

static void rig_close(struct rig *r)
{
	for (uint32_t t = 0; t < r->nprod; t++) {
		if (r->prod[t].ctx)
			oms_ctx_destroy(r->prod[t].ctx);
		if (r->prod[t].ctx_seq)
			oms_ctx_destroy(r->prod[t].ctx_seq);
	}
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
	if (local_emu)
		oms_emu_destroy(local_emu);
	local_emu = NULL;
}

/* ---- the consumer at D2 ----------------------------------------------- */

struct consumer {
	struct rig *r;
	uint32_t size, threads;
	int stop, err;
	uint64_t checks, late;
};

/* One look at thread @t's flag word @f (new): is its data there? */
static int data_behind(const uint8_t *data, uint32_t size, uint64_t f)
{
	uint64_t head, tail;

	memcpy(&head, data, 8);
	memcpy(&tail, data + size - 8, 8);
	return head < f || tail < f;
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	struct oms_ctx *ctx = NULL;
	struct oms_rmr d1;
	uint8_t *buf = malloc(MP_DATA_MAX);
	uint64_t last[MP_MAX_THREADS] = { 0 };
	int err = buf ? ctx_make(&args, 3, 0, &ctx) : -ENOMEM;

	if (!err)
		err = oms_connect(ctx, BU_LOOPBACK, c->r->port1, 0, &d1);
	for (uint32_t t = 0; t < c->threads && !err; t++)
		err = oms_mr_read(c->r->flag_mr, MP_FLAG_OFF + 8 * t, &last[t], 8);
	while (!err && !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		int seen = 0;

		for (uint32_t t = 0; t < c->threads && !err; t++) {
			uint64_t f = 0;

			/* the flag as D2's memory holds it (coherent host
			 * read), then the data with an acquire get */
			err = oms_mr_read(c->r->flag_mr, MP_FLAG_OFF + 8 * t, &f,
					  sizeof(f));
			if (err || f == last[t])
				continue;
			last[t] = f;
			seen = 1;
			err = oms_get(ctx, buf, &d1, (uint64_t)t * MP_DATA_MAX,
				      c->size, OMS_READ_ACQUIRE);
			if (!err)
				err = oms_quiet(ctx);
			if (err)
				break;
			c->checks++;
			c->late += data_behind(buf, c->size, f);
		}
		if (!seen)
			sched_yield();
	}
	c->err = err;
	if (ctx)
		oms_ctx_destroy(ctx);
	free(buf);
	return NULL;
}

/* ---- the producers --------------------------------------------------- */

struct result {
	uint64_t msgs, checks, late;
	double mmsgs;
};

/*
 * Over verbs the consumer is the server's: D2's region holds the flags,
 * the last flag of each thread it saw and its counts.  Read them with a
 * get.
 */
struct remote_state {
	uint64_t flag[MP_MAX_THREADS], seen[MP_MAX_THREADS], checks, late;
};

static int remote_state(struct rig *r, struct remote_state *st)
{
	uint64_t w[MP_COUNTS_OFF / 8 + 2];
	struct producer *p = &r->prod[0];
	int err = oms_get(p->ctx, w, &p->flag, 0, sizeof(w),
			  OMS_READ_ACQUIRE);

	if (!err)
		err = oms_quiet(p->ctx);
	memcpy(st->flag, &w[MP_FLAG_OFF / 8], sizeof(st->flag));
	memcpy(st->seen, &w[MP_SEEN_OFF / 8], sizeof(st->seen));
	st->checks = w[MP_COUNTS_OFF / 8];
	st->late = w[MP_COUNTS_OFF / 8 + 1];
	return err;
}

/* Before a cell on verbs: tell the consumer the size and the threads
 * (before any flag of the cell: put, quiet), and take the counts. */
static int remote_begin(struct rig *r, uint32_t size, uint32_t threads,
			struct remote_state *st)
{
	struct producer *p = &r->prod[0];
	uint64_t cell[2] = { size, threads };
	int err = oms_put(p->ctx, &p->flag, MP_CELL_OFF, cell, sizeof(cell),
			  OMS_STORE_WEAK);

	if (!err)
		err = oms_quiet(p->ctx);
	return err ? err : remote_state(r, st);
}

/* After it: wait (bounded) until the consumer has seen every thread's
 * last flag, so that its counts are whole and the next cell's size cannot
 * meet an old flag. */
static int remote_end(struct rig *r, const uint64_t *last, uint32_t threads,
		      uint32_t tmo_ms, struct remote_state *st)
{
	uint64_t t0 = bu_now_ns();
	int err;

	while (!(err = remote_state(r, st))) {
		uint32_t t = 0;

		while (t < threads && st->seen[t] == last[t])
			t++;
		if (t == threads)
			break;
		if (bu_now_ns() - t0 > (uint64_t)tmo_ms * 1000000u)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return err;
}

/* One producer thread of a cell.  Under the model a cell counts the
 * rounds (a window of messages, then the quiet) within one window of model
 * time common to the producers (model_window.h, model_window()). */
struct prod_run {
	struct rig *r;
	struct bu_window *win;	/* NULL: wall time */
	uint32_t t, size, window;
	enum mode m;
	uint64_t seq0, end_ns;	/* its first flag - 1; when to stop */
	uint64_t msgs;		/* sent */
	double counted;		/* under the model: the window's */
	int err, done;
};

/* The calling thread's model time on the run's device. */
static uint64_t model_time(void)
{
	uint64_t t = 0;

	oms_emu_thread_time(local_emu, &t);
	return t;
}

static void *producer_main(void *arg)
{
	struct prod_run *pr = arg;
	struct producer *p = &pr->r->prod[pr->t];
	int seq = pr->m == MD_STRONG_SEQ;
	struct oms_ctx *ctx = seq ? p->ctx_seq : p->ctx;
	const struct oms_rmr *data = seq ? &p->data_seq : &p->data;
	const struct oms_rmr *flag = seq ? &p->flag_seq : &p->flag;
	uint64_t doff = (uint64_t)pr->t * MP_DATA_MAX, foff = MP_FLAG_OFF + 8 * pr->t;
	/* a source buffer and a flag word per outstanding message: reused
	 * after a quiet */
	uint8_t *ring = aligned_alloc(64, (size_t)pr->window * pr->size);
	uint64_t *flags = calloc(pr->window, sizeof(*flags)), i = 0, end;
	uint64_t start = pr->win ? model_time() : 0;	/* the round's */
	int err = ring && flags ? 0 : -ENOMEM;

	if (ring)	/* no stale bytes between the stamps */
		memset(ring, 0, (size_t)pr->window * pr->size);

	while (!err && bu_now_ns() < pr->end_ns) {
		for (uint32_t k = 0; k < pr->window && !err; k++) {
			uint32_t slot = (uint32_t)(i % pr->window);
			uint8_t *buf = ring + (size_t)slot * pr->size;
			uint64_t n = pr->seq0 + ++i;

			memcpy(buf, &n, 8);
			memcpy(buf + pr->size - 8, &n, 8);
			flags[slot] = n;
			err = oms_put(ctx, data, doff, buf, pr->size,
				      OMS_STORE_WEAK);
			if (!err && pr->m == MD_QUIET)
				err = oms_quiet(ctx);
			if (!err && pr->m == MD_FENCE)
				err = oms_fence_global(ctx);
			if (!err)
				err = oms_put(ctx, flag, foff, &flags[slot], 8,
					      pr->m == MD_STRONG || seq ?
					      OMS_STORE_STRONG :
					      OMS_STORE_WEAK);
		}
		if (!err)
			err = oms_quiet(ctx);
		if (err || !pr->win)
			continue;
		/* the round ends here: what of it counts */
		end = model_time();
		pr->counted += bu_window_round(pr->win, pr->t, start, end) *
			       pr->window;
		start = end;
		/* on until a round ends past the window: every round within
		 * it is counted */
		if (bu_window_past(pr->win, end))
			break;
	}
	pr->msgs = i;
	pr->err = err;
	__atomic_store_n(&pr->done, 1, __ATOMIC_RELEASE);
	free(ring);
	free(flags);
	return NULL;
}

static int any_done(const struct prod_run *pr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (__atomic_load_n(&pr[i].done, __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

/*
 * Under the model: open the window after a warm-up of @dur wall seconds
 * (a fifth, at most 0.2 s), and not before every producer has ended a
 * round (a thread's start can take longer than that in wall time, and a
 * bound of 0 would count all the model time before it); close it when
 * @dur is up, or once a round has ended in it on a machine too busy for
 * one by then.  A producer that stopped (it failed) ends it at once: the
 * cell is lost anyway.
 */
static void model_window(struct prod_run *pr, uint32_t n,
			 struct bu_window *w, double dur)
{
	uint64_t t0 = bu_now_ns(), warm = (uint64_t)(dur * 1e9) / 5;

	warm = warm < 200000000u ? warm : 200000000u;
	w->n = n;	/* the producers started */
	while (!any_done(pr, n) &&
	       (bu_now_ns() - t0 < warm || !bu_window_all_started(w)))
		usleep(1000);
	bu_window_open(w);
	while (!any_done(pr, n) &&
	       (bu_now_ns() - t0 < (uint64_t)(dur * 1e9) ||
		!bu_window_any_in(w)))
		usleep(1000);
	/* each producer goes on until it is past it (producer_main()) */
	bu_window_close(w);
}

/* One cell's run of mode @m; @model: the figures are model time (--local
 * under the latency model). */
static int produce(struct rig *r, enum mode m, uint32_t size,
		   uint32_t threads, int model, double dur, uint32_t window,
		   struct result *res)
{
	struct consumer c = { .r = r, .size = size, .threads = threads };
	struct remote_state before = { 0 }, after = { 0 };
	struct bu_window win;
	struct prod_run pr[MP_MAX_THREADS];
	uint64_t last[MP_MAX_THREADS], t0, t1;
	double counted = 0;
	int local = r->flag_mem != NULL, err = 0;
	pthread_t th, pth[MP_MAX_THREADS];
	uint32_t t, started = 0;

	/* carry on from the last cell's numbers: each flag only grows */
	if (local) {
		err = pthread_create(&th, NULL, consumer_main, &c) ? -EAGAIN :
		      0;
	} else {
		err = remote_begin(r, size, threads, &before);
	}
	if (err)
		return err;
	bu_window_init(&win, threads);
	t0 = bu_now_ns();
	for (t = 0; t < threads; t++) {
		/* under the model the window ends it, not the wall clock */
		pr[t] = (struct prod_run){ .r = r, .t = t, .size = size,
			.window = window, .m = m, .win = model ? &win : NULL,
			.seq0 = local ? r->flag_mem[MP_FLAG_OFF / 8 + t] :
				before.flag[t],
			.end_ns = model ? UINT64_MAX :
				  t0 + (uint64_t)(dur * 1e9) };
		if (pthread_create(&pth[t], NULL, producer_main, &pr[t])) {
			err = -EAGAIN;
			break;
		}
		started++;
	}
	if (model && started)
		model_window(pr, started, &win, dur);
	for (t = 0; t < started; t++) {
		pthread_join(pth[t], NULL);
		err = err ? err : pr[t].err;
		last[t] = pr[t].seq0 + pr[t].msgs;
	}
	t1 = bu_now_ns();
	if (local) {
		/* let the consumer see the last flags */
		usleep(20000);
		__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		err = err ? err : c.err;
	} else if (!err) {
		err = remote_end(r, last, threads, args.timeout_ms, &after);
		c.checks = after.checks - before.checks;
		c.late = after.late - before.late;
	}
	if (err)
		return err;
	res->msgs = 0;
	for (t = 0; t < threads; t++) {
		res->msgs += pr[t].msgs;
		counted += pr[t].counted;
	}
	res->checks = c.checks;
	res->late = c.late;
	if (model) {	/* the window's messages over its model time */
		uint64_t span = bu_window_span(&win);

		res->msgs = (uint64_t)(counted + 0.5);
		res->mmsgs = span ? counted * 1e3 / (double)span : 0;
	} else {
		res->mmsgs = (double)res->msgs * 1e3 / (double)(t1 - t0);
	}
	return 0;
}

/* ---- the server (verbs): destinations and consumer -------------------- */

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
	g_signal = sig;
}

/*
 * The consumer of --server: the flag as it lands in D2's memory, then the
 * data where it landed in D1's, as an application polling its memory
 * does; the counts go to D2's region for the client.
 */
static int run_server(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t last[MP_MAX_THREADS] = { 0 }, checks = 0, late = 0, *fw;
	struct rig r;
	int err;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* the destination agents: strong-seq's reorder buffers */
	setenv("OMS_AGENT", "1", 0);
	err = rig_open(&r, o);
	if (err && (!r.d1 || !r.d2))
		ba_ctx_failed(&ba, err, OMS_BACKEND_AUTO);
	else if (err)
		ba_err(&ba, "cannot serve on %s:%u: %s",
		       o->bind ? o->bind : "*", o->port, strerror(-err));
	if (err) {
		rig_close(&r);
		return 1;
	}
	printf("%s server: D1 (data) on %s:%s, D2 (flag) on %s:%s; "
	       "SIGINT or SIGTERM stops it\n", ba.prog, o->bind ? o->bind : "*",
	       r.port1, o->bind ? o->bind : "*", r.port2);
	fflush(stdout);
	fw = r.flag_mem;
	while (!g_signal) {
		int seen = 0;

		/*
		 * Each flag first, then the cell's size: the client makes the
		 * size visible before the cell's first flag and starts a cell
		 * only once every flag of the last one was seen here, so a
		 * new flag always goes with the size read after it.
		 */
		for (uint32_t t = 0; t < MP_MAX_THREADS; t++) {
			uint64_t f = __atomic_load_n(&fw[MP_FLAG_OFF / 8 + t],
						     __ATOMIC_ACQUIRE);
			uint64_t size;

			if (f == last[t])
				continue;
			last[t] = f;
			seen = 1;
			size = __atomic_load_n(&fw[MP_CELL_OFF / 8],
					       __ATOMIC_ACQUIRE);
			if (size >= 16 && size <= MP_DATA_MAX && size % 8 == 0) {
				checks++;
				late += data_behind(r.data_mem +
						    (size_t)t * MP_DATA_MAX,
						    (uint32_t)size, f);
			}
			__atomic_store_n(&fw[MP_COUNTS_OFF / 8], checks,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&fw[MP_COUNTS_OFF / 8 + 1], late,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&fw[MP_SEEN_OFF / 8 + t], f,
					 __ATOMIC_RELEASE);
		}
		if (!seen)
			sched_yield();
	}
	printf("%s server: stopped by a signal: %llu checks, %llu "
	       "late\n", ba.prog, (unsigned long long)checks,
	       (unsigned long long)late);
	rig_close(&r);
	return 0;
}

/* Every mode at one size and thread count, best of --runs, modes
 * interleaved; a row and a record each.  *@bad: an ordered mode late. */
static int run_cell(struct rig *r, const struct opts *o, uint32_t size,
		    uint32_t threads, int model, struct result *best, int *bad)
{
	int err = 0;

	for (uint32_t k = 0; k < o->runs && !err; k++)
		for (uint32_t m = 0; m < MD_COUNT && !err; m++) {
			struct result x;

			if (!(o->modes & 1u << m))
				continue;
			err = produce(r, m, size, threads, model,
				      o->duration, o->window, &x);
			if (err)
				break;
			/* the rate is the best run's; checks and late add up
			 * over all runs */
			x.late += best[m].late;
			x.checks += best[m].checks;
			if (k && x.mmsgs < best[m].mmsgs) {
				x.msgs = best[m].msgs;
				x.mmsgs = best[m].mmsgs;
			}
			best[m] = x;
		}
	for (uint32_t m = 0; m < MD_COUNT && !err; m++) {
		const struct result *x = &best[m];
		double q = best[MD_QUIET].mmsgs;

		if (!(o->modes & 1u << m))
			continue;
		if (m != MD_UNORDERED && x->late)
			*bad = 1;
		ba_json(&ba, "\"mode\":\"%s\",\"size\":%u,\"threads\":%u,"
			"\"msgs\":%llu,\"mmsgs\":%.6g,\"ratio_vs_quiet\":%.4g,"
			"\"checks\":%llu,\"late\":%llu,\"window\":%u,"
			"\"time\":\"%s\",\"scale\":%u,\"chaos\":%llu",
			mode_names[m], size, threads,
			(unsigned long long)x->msgs, x->mmsgs,
			q > 0 ? x->mmsgs / q : 0,
			(unsigned long long)x->checks,
			(unsigned long long)x->late, o->window,
			model ? "model" : "wall", model ? o->scale : 0,
			(unsigned long long)o->chaos);
		if (!ba.json)
			printf(" %-7u %-7u %-10s %12llu %10.3f %9.2f %9llu "
			       "%7llu\n", size, threads, mode_names[m],
			       (unsigned long long)x->msgs, x->mmsgs,
			       q > 0 ? x->mmsgs / q : 0,
			       (unsigned long long)x->checks,
			       (unsigned long long)x->late);
	}
	return err;
}

int main(int argc, char **argv)
{
	const struct opts *o = &args;
	static struct result best[MAX_SIZES][MAX_SIZES][MD_COUNT];
	struct rig r;
	int rc = ba_parse(&ba, argc, argv), bad = 0, err;
	int model = 0;

	if (rc != BA_GO_ON)
		return rc;
	args.server = ba.role == BA_SERVER;	/* --server, or no HOST */
	rc = ba_rdma_apply(&ba, &rdma, o->local ||
			   ba_env_is("OMS_BACKEND", "emu"));
	if (rc != BA_GO_ON)
		return rc;
	if (ba_peer_ready(&ba, o->host, OMS_BACKEND_AUTO))
		return 1;
	if (o->server) {
		ba_close(&ba);
		return run_server(o);
	}
	err = rig_open(&r, o);
	if (err) {
		if (o->local)
			ba_err(&ba, "cannot set up the emulated "
			       "nodes: %s", strerror(-err));
		else if (!r.prod[r.nprod - 1].ctx)
			ba_ctx_failed(&ba, err, OMS_BACKEND_AUTO);
		else
			ba_connect_failed(&ba, o->host, r.port1, err,
					  bu_backend_of(r.prod[0].ctx,
							&(int){ 0 }));
		rig_close(&r);
		return 1;
	}
	if (r.seq_refused) {
		/* no reorder buffer at the destinations (verbs: no agent) */
		if (ba_seen(&ba, "modes")) {
			rig_close(&r);
			return ba_fail(&ba, "--modes strong-seq needs "
				       "destinations that apply sequence "
				       "numbers: the server's listeners run "
				       "no agent (OMS_AGENT=0?)");
		}
		ba_err(&ba, "strong-seq left out: the server's "
		       "listeners run no agent");
		args.modes &= ~(1u << MD_STRONG_SEQ);
	}
	ba_set_backend(&ba, bu_backend_of(r.prod[0].ctx, &model));
	if (!ba.json) {
		printf("Message passing: data to D1, then a flag to D2 "
		       "(%s, %s%s), window %u\n", ba.backend,
		       model ? "model time" : "wall time",
		       o->chaos ? ", chaos on" : "", o->window);
		bu_rule();
		printf(" %-7s %-7s %-10s %12s %10s %9s %9s %7s\n", "#bytes",
		       "threads", "mode", "#msgs", "M msgs/s", "x quiet",
		       "checks", "late");
		bu_rule();
	}
	for (uint32_t s = 0; s < o->nsizes && !err; s++)
		for (uint32_t h = 0; h < o->nthreads && !err; h++)
			err = run_cell(&r, o, o->sizes[s], o->threads[h],
				       model, best[s][h], &bad);
	if (err)
		ba_err(&ba, "%s", strerror(-err));
	else if (!ba.json)
		bu_rule();
	if (bad)
		ba_err(&ba, "an ordered mode delivered a flag "
		       "before its data");
	rig_close(&r);
	rc = err || bad ? 1 : 0;
	return ba_close(&ba) && !rc ? 1 : rc;
}
