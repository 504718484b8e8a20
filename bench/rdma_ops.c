// SPDX-License-Identifier: MIT
/*
 * rdma_ops: remote WRITE and READ throughput through liboms (seed 004
 * Fig 3: Mop/s by threads x QPs, batch 32), the numbers perftest's
 * ib_write_bw / ib_read_bw give for raw verbs, for liboms's cheapest
 * operations: OMS_STORE_WEAK puts and OMS_READ_RELAXED gets; and
 * OMS_READ_ACQUIRE gets (--op acquire), ordered per 64-byte line at the
 * source, or by the destination agent of a server started with
 * OMS_AGENT=1 (docs/dest-agent.md).
 *
 *   rdma_ops --server [-p PORT] [--bind ADDR]
 *   rdma_ops --client HOST [-p PORT] [--op write,read] [-s SIZES | -a]
 *            [--threads LIST] [-q QPS] [--batch N] [--stream]
 *            [--doorbell-batch] [-D SEC] [--breakdown] [--json]
 *   rdma_ops --local [client options] [--scale N]
 *
 * The server registers one 1 MiB region for remote reads and writes and
 * serves it until SIGINT/SIGTERM.  A client runs, per (op, size, threads)
 * cell, --threads threads, each with its own context and --qps
 * connections; a thread keeps --batch operations outstanding in rounds
 * (issue the batch spread over its connections round-robin, oms_quiet,
 * again) on distinct size-aligned offsets of the region.  With --stream a
 * thread keeps --batch operations in flight all the time instead, as
 * perftest keeps its send queue full: it issues whenever oms_progress()
 * says fewer are outstanding, and quiets once at the end of the cell.
 * --local runs both in one process on the emulated device, by default in
 * wall time (--scale 0): the figures are then the emulator's own rate;
 * they mean a NIC's on verbs.  --scale N turns on the device's latency
 * model (the paper's Table 2): M ops/s, the bandwidth and us per round
 * are then model time, the device's own clock (docs/emu-device.md), the
 * same on an idle machine and a busy one, counted over one window of
 * model time common to every thread: the rounds within it (with --stream,
 * from one oms_progress() look that finds operations completed to the
 * next; a round across a bound for its share), opened after a warm-up (a
 * fifth of -D, at most 0.2 s) and closed when -D's seconds are up.  N
 * is the model's floor, at least N wall ns per model ns: it changes how
 * long a run takes, never a figure.  The model charges a put its bus
 * crossings only (no link time, no NIC request rate), so a write's model
 * rate is --batch per round trip per thread, bounded by nothing else;
 * reads share the responder's 100 Gb/s link.
 *
 * A row per cell: bytes, op, threads, QPs, M ops/s, MB/s (Gb/s with
 * --report_gbits), us per round (a thread's time per round).
 * --doorbell-batch makes the initiators' contexts ring the doorbell once
 * for many operations (OMS_CTX_F_DOORBELL_BATCH), as perftest's
 * --post_list posts a list of work requests at once.
 * The JSON record also has the client threads' CPU time per operation,
 * user and system (getrusage: what the loop, liboms and the provider cost,
 * and what the kernel did in their system calls).  --breakdown times the
 * loop's parts, per operation: issuing (oms_put / oms_get: the engine,
 * building work requests, the post), progress (oms_progress, or the
 * round's oms_quiet: polling and completion tracking), the yields of an
 * idle stream (the CPU given to the device: rxe's kernel work in a guest)
 * and the rest; each part's clock reads are subtracted (timer_ns), and a
 * text row "where the time goes" follows the cell's.  Issuing includes
 * what liboms does inside the call, its own progress when the backend
 * pushes back among it.  These per-operation times (op_us and the parts)
 * and the CPU are wall time even with --scale.  Per operation too, in JSON
 * and in the "where the time goes" row: the doorbells rung and the
 * completion entries taken (oms_stats: ibv_post_send calls and CQEs on
 * verbs).
 * Exit: 0; 1 when the server cannot be reached or stops answering; 2 for
 * bad flags.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_args.h"
#include "bench_util.h"
#include "model_window.h"
#include "oms.h"

#define REGION		(1u << 20)
#define MAX_THREADS	64
#define MAX_LIST	16
#define MAX_SIZES	16

_Static_assert(MAX_THREADS <= BU_WINDOW_THREADS, "a window per cell");

enum mode { M_SERVER, M_CLIENT, M_LOCAL };
enum op { OP_WRITE, OP_READ, OP_ACQUIRE, OP_COUNT };

struct opts {
	enum mode mode;
	int gbits;			/* --report_gbits */
	const char *host, *bind;
	char port[8];
	uint32_t port_n;
	uint32_t ops;			/* bit per enum op */
	uint32_t sizes[MAX_SIZES], nsizes;
	uint32_t thr[MAX_LIST], nthr;
	uint32_t qps, batch, scale, timeout_ms, backend;
	double duration;
	int server, local, sweep, stream, breakdown, bell_batch;
};

static const char *const op_names[] = { "write", "read", "acquire", NULL };
static const char *const backend_names[] = {
	[OMS_BACKEND_AUTO] = "auto", [OMS_BACKEND_EMU] = "emu",
	[OMS_BACKEND_VERBS] = "verbs", [OMS_BACKEND_VERBS + 1] = NULL,
};
static const uint32_t sweep_sizes[] = { 64, 128, 256, 512, 1024, 2048, 4096 };

static struct opts args = {
	.port_n = 18516, .ops = 3, .sizes = { 64 }, .nsizes = 1,
	.thr = { 1 }, .nthr = 1, .qps = 1, .batch = 32, .scale = 0,
	.timeout_ms = 2000, .duration = 2,
};

static struct ba_rdma rdma;

static const struct ba_opt opts[] = {
	{ 0, "server", NULL, BA_FLAG, NULL,
	  "be the server (as with no HOST)", &args.server, .group = 1,
	  .roles = BA_SERVER },
	{ 0, "client", NULL, BA_STRING, "HOST",
	  "be a client of the server at HOST (as HOST alone)", &args.host,
	  .group = 1, .roles = BA_CLIENT },
	{ 0, "local", NULL, BA_FLAG, NULL,
	  "server and clients in this process, on the emulated device",
	  &args.local, .group = 1, .roles = BA_LOCAL },
	{ 'p', "port", NULL, BA_UINT, "PORT", "the server's port",
	  &args.port_n, .min = 1, .max = 65535 },
	{ 0, "bind", NULL, BA_STRING, "ADDR",
	  "the address to listen on (--local: the clients connect to it)",
	  &args.bind, .dflt = "any; --local: 127.0.0.1",
	  .roles = BA_SERVER | BA_LOCAL },
	{ 0, "op", NULL, BA_SET, "SET", "operations: write (weak puts), "
	  "read (relaxed gets), acquire (acquire gets: ordered by the "
	  "server's agent, or at the source)", &args.ops, .names = op_names,
	  .dflt = "write,read", .roles = BA_CLIENT | BA_LOCAL },
	{ 's', "size", NULL, BA_SIZES, "SIZES", "bytes per operation",
	  args.sizes, .min = 8, .max = 65536, .flags = BA_POW2,
	  .count = &args.nsizes, .max_items = MAX_SIZES, .group = 2,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 'a', "all", NULL, BA_FLAG, NULL, "every size, 64 B - 4 KiB",
	  &args.sweep, .group = 2, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "threads", NULL, BA_UINTS, "LIST",
	  "client threads, each its own context; a list sweeps", args.thr,
	  .min = 1, .max = MAX_THREADS, .step = 1, .count = &args.nthr,
	  .max_items = MAX_LIST, .roles = BA_CLIENT | BA_LOCAL },
	{ 'q', "qps", NULL, BA_UINT, "N", "connections (QPs) per thread",
	  &args.qps, .min = 1, .max = OMS_MAX_NODES,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "batch", NULL, BA_UINT, "N",
	  "operations outstanding per thread (one quiet per batch)",
	  &args.batch, .min = 1, .max = 4096, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "stream", NULL, BA_FLAG, NULL,
	  "keep --batch operations in flight all the time (perftest's "
	  "full send queue) instead of a quiet per batch", &args.stream,
	  .group = 0, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "breakdown", NULL, BA_FLAG, NULL,
	  "time issuing, progress, yields and the rest, per operation, in "
	  "wall time (a clock read per part: it costs a little)",
	  &args.breakdown, .group = 0, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "doorbell-batch", NULL, BA_FLAG, NULL,
	  "ring the doorbell once for many operations "
	  "(OMS_CTX_F_DOORBELL_BATCH: perftest's --post_list)",
	  &args.bell_batch, .group = 0, .roles = BA_CLIENT | BA_LOCAL },
	{ 'D', "duration", NULL, BA_DOUBLE, "SEC", "wall seconds per cell "
	  "(--scale: its window of model time opens after a fifth of them, "
	  "at most 0.2 s)", &args.duration, .dmin = 0.05, .dmax = 3600,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "backend", NULL, BA_CHOICE, "B",
	  "auto: OMS_BACKEND, else an RDMA device, else emu", &args.backend,
	  .names = backend_names, .dflt = "auto; --local: emu" },
	{ 0, "scale", NULL, BA_UINT, "N",
	  "emu: 0: no latency model (wall time); else the model, on "
	  "the device's own clock, with a floor of N wall ns per model ns "
	  "that does not change the figures: M ops/s, bandwidth and "
	  "us/round in model time (a put costs its bus crossings only, so "
	  "writes are bounded by nothing else), the CPU and --breakdown "
	  "still in wall time", &args.scale, .min = 0, .max = 100000,
	  .roles = BA_LOCAL },
	{ 0, "timeout-ms", NULL, BA_UINT, "MS",
	  "declare a silent peer dead after this long", &args.timeout_ms,
	  .min = 1, .max = 600000 },
	BA_OPTS_RDMA(&rdma),
	BA_OPT_REPORT_GBITS(&args.gbits, BA_CLIENT | BA_LOCAL),
};

static struct ba ba = {
	.name = "rdma_ops", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.positional = "client",
	.role_help = {
		"the server: serve a 1 MiB region until SIGINT or SIGTERM",
		"a client: measure against the server at HOST",
		"server and clients in this process, on the emulated device",
	},
	.record_roles = BA_CLIENT | BA_LOCAL,
	.about = "Remote WRITE and READ throughput through liboms "
		 "(ASPLOS'26 paper,\nFig 3): weak puts and relaxed gets by "
		 "threads x QPs.",
	.epilog = "Exit status: 0; 1 server unreachable or gone; 2 bad "
		  "flags.",
};

/* --local on emu: the run's device, with the latency model if asked */
static struct oms_emu *local_emu;

static int ctx_make(const struct opts *o, uint32_t node,
		    struct oms_ctx **ctx)
{
	static int said;
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_TIMEOUT;
	a.node = node;
	a.timeout_ms = o->timeout_ms;
	if (o->bell_batch && node == 0) {	/* the initiators' */
		a.comp_mask |= OMS_CTX_ATTR_FLAGS;
		a.flags = OMS_CTX_F_DOORBELL_BATCH;
	}
	if (o->backend) {
		a.comp_mask |= OMS_CTX_ATTR_BACKEND;
		a.backend = o->backend;
	}
	if (local_emu) {
		a.comp_mask |= OMS_CTX_ATTR_EMU;
		a.emu = local_emu;
	}
	err = oms_ctx_create(&a, ctx);
	/* said once, not by every worker */
	if (err && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		ba_ctx_failed(&ba, err, o->backend);
	return err;
}

/* ---- server ----------------------------------------------------------- */

struct server {
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	struct oms_listener *l;
	void *mem;
};

static int server_open(struct server *sv, const struct opts *o)
{
	int err;

	memset(sv, 0, sizeof(*sv));
	err = ctx_make(o, 1, &sv->ctx);
	if (!err) {
		sv->mem = aligned_alloc(4096, REGION);
		err = sv->mem ? 0 : -ENOMEM;
	}
	if (!err) {
		memset(sv->mem, 0, REGION);
		err = oms_mr_reg(sv->ctx, sv->mem, REGION,
				 OMS_ACCESS_REMOTE_READ |
				 OMS_ACCESS_REMOTE_WRITE, &sv->mr);
	}
	if (!err)
		err = oms_listen(sv->ctx, o->bind, o->port, sv->mr, &sv->l);
	if (err)
		ba_err(&ba, "cannot serve on %s:%s: %s",
		       o->bind ? o->bind : "*", o->port, strerror(-err));
	return err;
}

static void server_close(struct server *sv)
{
	if (sv->l)
		oms_listener_close(sv->l);
	if (sv->mr)
		oms_mr_dereg(sv->mr);
	if (sv->ctx)
		oms_ctx_destroy(sv->ctx);
	free(sv->mem);
}

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
	g_signal = sig;
}

static int run_server(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct server sv;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (server_open(&sv, o)) {
		server_close(&sv);
		return 1;
	}
	printf("%s server: %u KiB region on %s:%s; SIGINT or SIGTERM "
	       "stops it\n", ba.prog, REGION / 1024, o->bind ? o->bind : "*",
	       o->port);
	fflush(stdout);
	while (!g_signal)
		usleep(100000);
	server_close(&sv);
	printf("%s server: stopped by a signal\n", ba.prog);
	return 0;
}

/* ---- clients ---------------------------------------------------------- */

struct cell {
	const struct opts *o;
	const char *host;
	enum op op;
	uint32_t size, threads;
	int go, stop, ready, err;
	/* Under the model (@model) the cell counts the rounds within one
	 * window of model time common to the threads (model_window.h,
	 * model_window()); @stop stays 0. */
	int model;
	struct bu_window win;
};

/* Nanoseconds in each part of a worker's loop (--breakdown). */
enum part { P_ISSUE, P_PROGRESS, P_YIELD, P_COUNT };

struct worker {
	struct cell *c;
	pthread_t th;
	uint32_t id;
	uint64_t ops, rounds, t0, t1;
	double win_ops, win_rounds;	/* the model: the window's */
	uint64_t part_ns[P_COUNT], timed[P_COUNT];	/* and intervals */
	uint64_t user_ns, sys_ns;		/* the thread's CPU in the loop */
	uint64_t doorbells, cqes;		/* its context's, in the loop */
};

/* The clock's own cost, ns per read: taken off each timed interval. */
static uint64_t g_timer_ns;

static void timer_calibrate(void)
{
	/* the least of a few runs: a run that was preempted says nothing
	 * about the clock, and too high a cost would zero short parts */
	g_timer_ns = ~0ull;
	for (int r = 0; r < 8; r++) {
		uint64_t t0 = bu_now_ns(), t1 = t0;

		for (int i = 0; i < 200; i++)
			t1 = bu_now_ns();
		if ((t1 - t0) / 200 < g_timer_ns)
			g_timer_ns = (t1 - t0) / 200;
	}
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000;
}

/* This thread's user and system CPU so far (RUSAGE_THREAD: Linux). */
static void thread_cpu(uint64_t *user_ns, uint64_t *sys_ns)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		*user_ns = *sys_ns = 0;
		return;
	}
	*user_ns = tv_ns(ru.ru_utime);
	*sys_ns = tv_ns(ru.ru_stime);
}

/* --breakdown: the clock at a part's start (0 without the flag). */
static inline uint64_t part_start(const struct opts *o)
{
	return o->breakdown ? bu_now_ns() : 0;
}

static inline void part_end(const struct opts *o, struct worker *w,
			    enum part p, uint64_t t)
{
	if (o->breakdown) {
		w->part_ns[p] += bu_now_ns() - t;
		w->timed[p]++;
	}
}

/* The context's doorbells and completion entries so far. */
static void dev_counts(struct oms_ctx *ctx, uint64_t *doorbells,
		       uint64_t *cqes)
{
	struct oms_stats st = { .size = sizeof(st) };

	if (oms_ctx_stats(ctx, &st))
		memset(&st, 0, sizeof(st));
	*doorbells = st.doorbells;
	*cqes = st.dev_completions;
}

/* The calling thread's model time on the run's device. */
static uint64_t model_time(void)
{
	uint64_t t = 0;

	oms_emu_thread_time(local_emu, &t);
	return t;
}

/*
 * Under the model, a round of @w that began at *@start ended (a batch and
 * its quiet; streaming, from a look that found operations completed to
 * the next, which found @done): count what of it is in the window.
 * Returns 1 once it is past the window's end.
 */
static int model_round(struct cell *c, struct worker *w, uint64_t *start,
		       uint64_t done)
{
	uint64_t end = model_time();
	double share;

	share = bu_window_round(&c->win, w->id, *start, end);
	w->win_ops += share * (double)done;
	w->win_rounds += share;
	*start = end;
	return bu_window_past(&c->win, end);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct cell *c = w->c;
	const struct opts *o = c->o;
	struct oms_rmr rmr[OMS_MAX_NODES];
	struct oms_ctx *ctx = NULL;
	struct oms_mr *mr = NULL;
	uint32_t slots = REGION / c->size;
	uint8_t *buf = NULL;
	uint64_t next = (uint64_t)w->id * o->batch;
	uint64_t user0, sys0, t, inflight = 0, done = 0, issued, start;
	unsigned idle = 0;
	int err = ctx_make(o, 0, &ctx);

	for (uint32_t i = 0; !err && i < o->qps; i++)
		err = oms_connect(ctx, c->host, o->port, o->timeout_ms,
				  &rmr[i]);
	if (!err) {
		buf = aligned_alloc(4096, ((size_t)o->batch * c->size + 4095) /
				    4096 * 4096);
		err = buf ? 0 : -ENOMEM;
	}
	if (!err) {
		memset(buf, (int)w->id, (size_t)o->batch * c->size);
		/* registered: no bounce copy on verbs */
		err = oms_mr_reg(ctx, buf, (size_t)o->batch * c->size,
				 OMS_ACCESS_REMOTE_READ, &mr);
	}
	if (err) {
		__atomic_compare_exchange_n(&c->err, &(int){ 0 }, err, 0,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		__atomic_add_fetch(&c->ready, 1, __ATOMIC_RELEASE);
		goto out;
	}
	__atomic_add_fetch(&c->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
		usleep(200);
	thread_cpu(&user0, &sys0);
	dev_counts(ctx, &w->doorbells, &w->cqes);
	w->t0 = bu_now_ns();
	start = c->model ? model_time() : 0;	/* the first round's */
	while (!err && !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		/* rounds: a batch, then quiet; streaming: top up to a batch
		 * in flight whenever progress says fewer are outstanding */
		int room = (int)o->batch;

		if (o->stream) {
			t = part_start(o);
			room = oms_progress(ctx);
			part_end(o, w, P_PROGRESS, t);
			if (room < 0) {
				err = room;
				break;
			}
			/* completed since the last look */
			done = inflight > (uint64_t)room ?
			       inflight - (uint64_t)room : 0;
			inflight = (uint64_t)room;
			room = (int)o->batch - room;
			/* as oms_quiet() waits: spin a little, then let the
			 * device (a thread of the emulator, rxe's in a guest)
			 * have the CPU */
			if (room <= 0 && ++idle > 4) {
				t = part_start(o);
				sched_yield();
				part_end(o, w, P_YIELD, t);
			}
			if (room > 0)
				idle = 0;
		}
		t = part_start(o);
		issued = 0;
		for (int i = 0; i < room && !err; i++) {
			uint32_t k = (uint32_t)(next % o->batch);
			uint64_t off = (next++ % slots) * c->size;
			uint8_t *b = buf + (size_t)k * c->size;
			const struct oms_rmr *r = &rmr[k % o->qps];

			err = c->op == OP_WRITE ?
			      oms_put(ctx, r, off, b, c->size, OMS_STORE_WEAK) :
			      oms_get(ctx, b, r, off, c->size,
				      c->op == OP_ACQUIRE ? OMS_READ_ACQUIRE :
				      OMS_READ_RELAXED);
			if (!err)
				issued++;
		}
		w->ops += issued;
		inflight += issued;
		if (room > 0)
			part_end(o, w, P_ISSUE, t);
		if (!err && !o->stream) {
			t = part_start(o);
			err = oms_quiet(ctx);
			part_end(o, w, P_PROGRESS, t);
			done = issued;
		}
		if (!err && room > 0)
			w->rounds++;
		/* a streaming look that found nothing done ends no round:
		 * reading the model time would end the wait that its empty
		 * looks are (the thread would work again at the clock) */
		if (!err && c->model && done && model_round(c, w, &start, done))
			break;
	}
	/* what is still in flight is counted: it completes inside the cell
	 * (under the model, past the window: not in its figures) */
	if (!err && o->stream) {
		t = part_start(o);
		err = oms_quiet(ctx);
		part_end(o, w, P_PROGRESS, t);
	}
	w->t1 = bu_now_ns();
	thread_cpu(&w->user_ns, &w->sys_ns);
	{
		uint64_t d, q;

		dev_counts(ctx, &d, &q);
		w->doorbells = d - w->doorbells;
		w->cqes = q - w->cqes;
	}
	/* 0 when getrusage failed (the second time, or the first) */
	w->user_ns = w->user_ns >= user0 ? w->user_ns - user0 : 0;
	w->sys_ns = w->sys_ns >= sys0 ? w->sys_ns - sys0 : 0;
	if (err)
		__atomic_compare_exchange_n(&c->err, &(int){ 0 }, err, 0,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
out:
	if (mr)
		oms_mr_dereg(mr);
	if (ctx)
		oms_ctx_destroy(ctx);
	free(buf);
	return NULL;
}

struct result {
	double mops, gbps, round_us;
	/* per operation, us: CPU of the client threads; --breakdown parts
	 * (timer reads taken off) and the rest of the wall time */
	double user_us, sys_us, part_us[P_COUNT], rest_us, wall_us;
	double doorbells, cqes;		/* per operation */
};

/*
 * Under the model: open the window after a warm-up of --duration (a
 * fifth, at most 0.2 s), and not before every thread has ended a round
 * (a thread's start can take longer than that in wall time, and a bound
 * of 0 would count all the model time before it); close it when
 * --duration is up, or once a round has ended in it on a machine too busy
 * for one by then.  An error ends it at once: the cell is lost anyway.
 */
static void model_window(struct cell *c, uint32_t n)
{
	uint64_t t0 = bu_now_ns(), dur = (uint64_t)(c->o->duration * 1e9);
	uint64_t warm = dur / 5 < 200000000u ? dur / 5 : 200000000u;

	c->win.n = n;	/* the threads started */
	while (!__atomic_load_n(&c->err, __ATOMIC_ACQUIRE) &&
	       (bu_now_ns() - t0 < warm || !bu_window_all_started(&c->win)))
		usleep(1000);
	bu_window_open(&c->win);
	while (!__atomic_load_n(&c->err, __ATOMIC_ACQUIRE) &&
	       (bu_now_ns() - t0 < dur || !bu_window_any_in(&c->win)))
		usleep(1000);
	/* each thread goes on until it is past it (worker_main()) */
	bu_window_close(&c->win);
}

/* One cell; M ops/s and us per round in model time under the model
 * (c->model), the rest in wall and CPU time. */
static int run_cell(struct cell *c, struct result *r)
{
	static struct worker w[MAX_THREADS];
	uint64_t ops = 0, rounds = 0, t0 = ~0ull, t1 = 0, wall = 0;
	double win_ops = 0, win_rounds = 0;
	uint64_t part[P_COUNT] = { 0 }, timed[P_COUNT] = { 0 };
	uint64_t user = 0, sys = 0, bells = 0, cqes = 0;
	uint32_t n;

	bu_window_init(&c->win, c->threads);
	for (n = 0; n < c->threads; n++) {
		memset(&w[n], 0, sizeof(w[n]));
		w[n].c = c;
		w[n].id = n;
		if (pthread_create(&w[n].th, NULL, worker_main, &w[n]))
			break;
	}
	while ((uint32_t)__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE) < n)
		usleep(1000);
	__atomic_store_n(&c->go, 1, __ATOMIC_RELEASE);
	if (c->model) {
		model_window(c, n);
	} else {
		for (uint64_t t = bu_now_ns();
		     bu_now_ns() - t < (uint64_t)(c->o->duration * 1e9) &&
		     !__atomic_load_n(&c->err, __ATOMIC_ACQUIRE);)
			usleep(10000);
		__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	}
	for (uint32_t i = 0; i < n; i++) {
		pthread_join(w[i].th, NULL);
		ops += w[i].ops;
		rounds += w[i].rounds;
		win_ops += w[i].win_ops;
		win_rounds += w[i].win_rounds;
		user += w[i].user_ns;
		sys += w[i].sys_ns;
		bells += w[i].doorbells;
		cqes += w[i].cqes;
		for (int p = 0; p < P_COUNT; p++) {
			part[p] += w[i].part_ns[p];
			timed[p] += w[i].timed[p];
		}
		if (w[i].t1 > w[i].t0)
			wall += w[i].t1 - w[i].t0;
		if (w[i].t0 && w[i].t0 < t0)
			t0 = w[i].t0;
		if (w[i].t1 > t1)
			t1 = w[i].t1;
	}
	if (c->err || n < c->threads || !rounds || t1 <= t0 ||
	    (c->model && (win_rounds <= 0 || !bu_window_span(&c->win))))
		return c->err ? c->err : -EAGAIN;
	if (c->model) {	/* the window's, over its model time */
		uint64_t span = bu_window_span(&c->win);

		r->mops = win_ops * 1e3 / (double)span;
		r->round_us = (double)span * n / win_rounds / 1e3;
	} else {
		r->mops = (double)ops * 1e3 / (double)(t1 - t0);
		r->round_us = (double)(t1 - t0) * n / (double)rounds / 1e3;
	}
	r->gbps = r->mops * c->size * 8 / 1e3;
	/* each timed interval holds about one clock read: taken off; the
	 * rest is what the parts leave of the threads' wall time (the loop
	 * itself, and the other clock read of each interval) */
	r->wall_us = (double)wall / (double)ops / 1e3;
	r->user_us = (double)user / (double)ops / 1e3;
	r->sys_us = (double)sys / (double)ops / 1e3;
	r->doorbells = (double)bells / (double)ops;
	r->cqes = (double)cqes / (double)ops;
	r->rest_us = r->wall_us;
	for (int p = 0; p < P_COUNT; p++) {
		uint64_t share = g_timer_ns * timed[p];

		r->part_us[p] = (double)(part[p] > share ? part[p] - share : 0) /
				(double)ops / 1e3;
		r->rest_us -= r->part_us[p];
	}
	return 0;
}

static int run_clients(const struct opts *o, const char *host)
{
	struct oms_ctx *ctx;
	struct oms_rmr probe;
	const char *backend;
	int model = 0, err;

	err = ctx_make(o, 0, &ctx);
	if (err)
		return 1;
	err = oms_connect(ctx, host, o->port, o->timeout_ms, &probe);
	if (err) {
		ba_connect_failed(&ba, host, o->port, err,
				  bu_backend_of(ctx, &(int){ 0 }));
		oms_ctx_destroy(ctx);
		return 1;
	}
	backend = bu_backend_of(ctx, &model);
	/* model time is read off the run's own device */
	model = model && local_emu;
	ba_set_backend(&ba, backend);
	if (!ba.json) {
		printf("Remote operations through liboms (ASPLOS'26 paper, "
		       "Fig 3): backend %s, %s;\n%u QPs per thread, %s %u, "
		       "%.1f s per cell\n", backend, model ? "model time "
		       "(CPU and --breakdown: wall time)" : "wall time", o->qps,
		       o->stream ? "in flight" : "batch", o->batch,
		       o->duration);
		bu_rule();
		printf(" %-7s %-7s %7s %4s %10s %9s %10s\n", "#bytes", "op",
		       "threads", "QPs", "M ops/s", ba_bw_unit(o->gbits),
		       "us/round");
		bu_rule();
	}
	for (uint32_t op = 0; op < OP_COUNT && !err; op++) {
		if (!(o->ops & 1u << op))
			continue;
		for (uint32_t s = 0; s < o->nsizes && !err; s++)
			for (uint32_t t = 0; t < o->nthr && !err; t++) {
				struct cell c = {
					.o = o, .host = host, .op = op,
					.size = o->sizes[s],
					.threads = o->thr[t],
					.model = model,
				};
				struct result r;
				char parts[256] = "";

				err = run_cell(&c, &r);
				if (err) {
					ba_err(&ba, "%s %u B "
					       "from %s:%s: %s",
					       op_names[op], c.size, host,
					       o->port, strerror(-err));
					break;
				}
				if (o->breakdown)
					snprintf(parts, sizeof(parts),
						 ",\"issue_us\":%.4g,"
						 "\"progress_us\":%.4g,"
						 "\"yield_us\":%.4g,"
						 "\"rest_us\":%.4g,"
						 "\"timer_ns\":%llu",
						 r.part_us[P_ISSUE],
						 r.part_us[P_PROGRESS],
						 r.part_us[P_YIELD], r.rest_us,
						 (unsigned long long)g_timer_ns);
				ba_json(&ba, "\"op\":\"%s\",\"size\":%u,"
					"\"threads\":%u,\"qps\":%u,"
					"\"batch\":%u,\"stream\":%s,"
					"\"mops\":%.6g,"
					"\"gbps\":%.6g,\"round_us\":%.6g,"
					"\"time\":\"%s\",\"duration_s\":%.2f,"
					"\"op_us\":%.4g,\"cpu_user_us\":%.4g,"
					"\"cpu_sys_us\":%.4g,"
					"\"doorbells_per_op\":%.4g,"
					"\"cqes_per_op\":%.4g,"
					"\"doorbell_batch\":%s%s",
					op_names[op], c.size, c.threads,
					o->qps, o->batch,
					o->stream ? "true" : "false",
					r.mops, r.gbps,
					r.round_us, model ? "model" : "wall",
					o->duration, r.wall_us, r.user_us,
					r.sys_us, r.doorbells, r.cqes,
					o->bell_batch ? "true" : "false",
					parts);
				if (!ba.json)
					printf(" %-7u %-7s %7u %4u %10.3f "
					       "%9.3f %10.2f\n", c.size,
					       op_names[op], c.threads, o->qps,
					       r.mops, ba_bw(r.gbps, o->gbits),
					       r.round_us);
				if (!ba.json && o->breakdown)
					printf("   where the time goes, %sus "
					       "per op and thread: %.2f = "
					       "issue %.2f + progress %.2f + "
					       "yield %.2f + rest %.2f; CPU "
					       "user %.2f, system %.2f; "
					       "doorbells %.3f and completion "
					       "entries %.3f per op\n",
					       model ? "wall " : "", r.wall_us,
					       r.part_us[P_ISSUE],
					       r.part_us[P_PROGRESS],
					       r.part_us[P_YIELD], r.rest_us,
					       r.user_us, r.sys_us,
					       r.doorbells, r.cqes);
				fflush(stdout);
			}
	}
	if (!ba.json && !err)
		bu_rule();
	oms_ctx_destroy(ctx);
	return err ? 1 : 0;
}

static int run_local(const struct opts *o)
{
	struct server sv;
	int fail, err;

	/* on emu, a device of the run's own: the paper's Table 2 model, as
	 * bench/ordered_read and kvs_get, when --scale asks for it */
	if (bu_backend_is_emu(o->backend)) {
		err = bu_emu_table2(o->scale, OMS_ORDER_RC_OPT, 0, &local_emu);
		if (err) {
			ba_err(&ba, "no emulated device: %s",
			       strerror(-err));
			return 1;
		}
	}
	if (server_open(&sv, o)) {
		server_close(&sv);
		if (local_emu)
			oms_emu_destroy(local_emu);
		return 1;
	}
	fail = run_clients(o, o->bind ? o->bind : BU_LOOPBACK);
	server_close(&sv);
	if (local_emu)
		oms_emu_destroy(local_emu);
	return fail;
}

/*
 * Each thread of a cell registers --batch x --size bytes: refuse, before
 * anything runs, a largest cell that would take more than a quarter of
 * this machine's memory (64 threads x 4096 x 64 KiB is 16 GiB).
 */
static int buffers_too_big(const struct ba *b, const struct opts *o)
{
	uint64_t thr = 0, size = 0, need, mem;
	long pages = sysconf(_SC_PHYS_PAGES), pg = sysconf(_SC_PAGESIZE);

	for (uint32_t i = 0; i < o->nthr; i++)
		thr = o->thr[i] > thr ? o->thr[i] : thr;
	for (uint32_t i = 0; i < o->nsizes; i++)
		size = o->sizes[i] > size ? o->sizes[i] : size;
	need = thr * o->batch * size;
	if (pages <= 0 || pg <= 0)
		return 0;
	mem = (uint64_t)pages * (uint64_t)pg;
	if (need <= mem / 4)
		return 0;
	ba_fail(b, "--threads %llu x --batch %u x --size %llu need %llu MiB "
		"of buffers, more than a quarter of this machine's %llu MiB: "
		"lower one of them", (unsigned long long)thr, o->batch,
		(unsigned long long)size, (unsigned long long)(need >> 20),
		(unsigned long long)(mem >> 20));
	return 1;
}

int main(int argc, char **argv)
{
	struct opts *o = &args;
	int r = ba_parse(&ba, argc, argv);

	if (r != BA_GO_ON)
		return r;
	if (!o->ops)
		return ba_fail(&ba, "--op: an empty set measures nothing");
	o->mode = ba.role == BA_CLIENT ? M_CLIENT :
		  ba.role == BA_LOCAL ? M_LOCAL : M_SERVER;
	snprintf(o->port, sizeof(o->port), "%u", o->port_n);
	if (o->mode == M_LOCAL && !ba_seen(&ba, "backend") &&
	    !getenv("OMS_BACKEND"))
		o->backend = OMS_BACKEND_EMU;
	r = ba_rdma_apply(&ba, &rdma, bu_backend_is_emu(o->backend));
	if (r != BA_GO_ON)
		return r;
	r = ba_only_if(&ba, (const char *const[]){ "scale", NULL },
		       bu_backend_is_emu(o->backend), BU_EMU_ONLY);
	if (r != BA_GO_ON)
		return r;
	if (o->sweep) {
		memcpy(o->sizes, sweep_sizes, sizeof(sweep_sizes));
		o->nsizes = sizeof(sweep_sizes) / sizeof(sweep_sizes[0]);
	}
	if (o->mode != M_SERVER && buffers_too_big(&ba, o))
		return 2;
	if (ba_peer_ready(&ba, o->host, o->backend))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	timer_calibrate();
	switch (o->mode) {
	case M_SERVER:
		r = run_server(o);
		break;
	case M_CLIENT:
		r = run_clients(o, o->host);
		break;
	default:
		r = run_local(o);
	}
	return ba_close(&ba) && !r ? 1 : r;
}
