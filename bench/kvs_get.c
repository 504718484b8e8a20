// SPDX-License-Identifier: MIT
/*
 * kvs_get: key-value store get throughput (seed 004 section 6.4, Fig 7)
 * with the four get protocols of lib/kvs and the broken baseline, on two
 * hosts or in one process.
 *
 *   kvs_get --server [-p PORT] [--bind ADDR] [--items N] [-s SIZE | -a]
 *           [--proto SET] [--writers N]
 *   kvs_get --client HOST [-p PORT] [--proto SET] [-s SIZE | -a]
 *           [--threads N] [-q QPS] [--batch N] [-D SEC] [--items N]
 *           [--runs N] [--timeout-ms MS] [--json] [--out_json FILE]
 *   kvs_get --local [client and server options] [--scale N] [--order O]
 *                   [--nic-req-ns N] [--hosts N] [--[no-]cpu-charge]
 *   kvs_get --client HOST --calibrate [client options]
 *   kvs_get --help lists every option with its range and default.
 *
 * The server serves one region holding a table per (protocol layout, size)
 * until SIGINT/SIGTERM; --writers threads update random items in each
 * protocol's write order.  A client runs --threads threads, each with its
 * own context, --qps connections and --batch gets outstanding, for
 * --duration seconds per (protocol, size) cell, and prints a perftest-style
 * row per cell (one JSON object per cell with --json) and a progress line
 * each second on stderr.  --local runs server and clients in one process
 * (the emulated device's in-process connections), with the device's latency
 * model on (--scale 0 turns it off: wall time): the figures are then model
 * time, the device's own clock (docs/emu-device.md), the same on an idle
 * machine and a busy one, for one thread or sixteen on two cores; the
 * threads' rounds are counted over one window of model time common to
 * all (a round across a bound for its share).  --hosts spreads the
 * client threads over several emulated hosts (nodes).
 *
 * --calibrate (model vs device): fit the emulated device's
 * latency model to the link to HOST (bench_fit.h), run the cells on HOST,
 * then the same cells in this process on the emulated device with the
 * fitted model, and print them side by side.
 *
 * Exit: 0; 1 when the server cannot be reached, has no table asked for, or
 * stops answering (within 5 s: the contexts' timeout, and a watchdog);
 * 2 for bad flags.  See docs/kvs.md.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_args.h"
#include "bench_fit.h"
#include "bench_util.h"
#include "bench_zipf.h"
#include "model_window.h"
#include "oms.h"
#include "oms_kvs.h"

#define MAX_THREADS	64
#define MAX_WRITERS	16
#define MAX_LIST	16	/* values of --threads, of --batch */
#define HBUCKETS	(64 * 16)
#define MIN_ROUNDS	8	/* under the model: rounds a worker, at least */

_Static_assert(MAX_THREADS <= BU_WINDOW_THREADS, "a window per cell");

static const uint32_t sweep_sizes[] = {
	64, 128, 256, 512, 1024, 2048, 4096, 8192,
};
#define NSWEEP (sizeof(sweep_sizes) / sizeof(sweep_sizes[0]))

enum mode { M_NONE, M_SERVER, M_CLIENT, M_LOCAL };

struct opts {
	enum mode mode;
	int gbits;			/* --report_gbits */
	const char *host, *port, *bind;
	uint32_t protos;		/* bit per enum oms_kvs_proto */
	uint32_t sizes[NSWEEP], nsizes;
	uint32_t items, threads, qps, batch, writers, runs;
	uint32_t read_pct;		/* gets in 100 operations */
	/* --threads and --batch lists: a cell per (size, threads, batch);
	 * threads and batch are the cell's own values while it runs */
	uint32_t thr_list[MAX_LIST], nthr;
	uint32_t batch_list[MAX_LIST], nbatch;
	int remote_write;		/* tables admit clients' updates */
	double duration;
	double zipf;			/* key skew theta, 0: uniform */
	const char *hist;		/* latency histogram file, or NULL */
	int json;
	uint32_t backend;		/* enum oms_backend */
	uint32_t scale, order;		/* --local: emu latency model (0:
					 * none; else its wall-time floor) */
	uint32_t hosts;			/* --local: client nodes */
	uint32_t nic_req_ns;		/* --local: responder NIC message rate */
	int no_cpu_charge;		/* --local: the clients' CPU is free */
	int force_cpu_charge;		/* --local: it is charged */
	int cpu_charge;			/* what the run does (settle()) */
	/* --local: the rest of the model; Table 2 unless --calibrate */
	uint32_t lat_bus_ns, lat_rc_ns, lat_mem_ns, link_gbps;
	int calibrate;			/* --client: model vs device */
	uint32_t timeout_ms;		/* a peer silent this long is dead */
	int items_set;
	/* as the command line gives them */
	int server, local, sweep;
	uint32_t port_n;
	char port_s[8];
};

/* Names of the choices, in the numbering of their enums. */
static const char *proto_names[OMS_KVS_NPROTO + 1];	/* main() fills */
static const char *const backend_names[] = {
	[OMS_BACKEND_AUTO] = "auto", [OMS_BACKEND_EMU] = "emu",
	[OMS_BACKEND_VERBS] = "verbs", [OMS_BACKEND_VERBS + 1] = NULL,
};
static const char *const order_names[] = {
	[OMS_ORDER_RC_OPT] = "rc-opt", [OMS_ORDER_RC] = "rc",
	[OMS_ORDER_NIC] = "nic", [OMS_ORDER_NIC + 1] = NULL,
};

static struct opts args = {
	.port_n = 18515, .sizes = { 64 }, .nsizes = 1, .items = 1024, .threads = 4, .qps = 1,
	.batch = 32, .duration = 5, .runs = 1, .scale = 1, .hosts = 1,
	.timeout_ms = 2000,
	.read_pct = 100, .thr_list = { 4 }, .nthr = 1, .batch_list = { 32 },
	.nbatch = 1,
	.order = OMS_ORDER_RC_OPT,
	.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
	.link_gbps = 100,
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
	{ 0, "items", NULL, BA_UINT, "N",
	  "the server's items per table; a client's keys are < N",
	  &args.items, .min = 1, .max = 1u << 24 },
	{ 's', "size", NULL, BA_SIZES, "SIZES",
	  "value bytes; a list sweeps (64,256,1024)", args.sizes,
	  .dflt = "64; the server: every size of --all",
	  .min = 8, .max = OMS_KVS_MAX_VALUE, .step = 8,
	  .count = &args.nsizes, .max_items = NSWEEP, .group = 2 },
	{ 'a', "all", "sweep", BA_FLAG, NULL, "every size, 64 B - 8 KiB",
	  &args.sweep, .group = 2 },
	{ 0, "proto", NULL, BA_SET, "SET", "get protocols", &args.protos,
	  .names = proto_names, .dflt = "all for the server, else single" },
	{ 0, "writers", NULL, BA_UINT, "N",
	  "threads updating random items", &args.writers,
	  .min = 0, .max = MAX_WRITERS, .roles = BA_SERVER | BA_LOCAL },
	{ 0, "remote-write", NULL, BA_FLAG, NULL,
	  "tables admit clients' updates (--read-pct; --local: set by "
	  "--read-pct below 100)", &args.remote_write, .group = 0,
	  .roles = BA_SERVER },
	{ 0, "read-pct", NULL, BA_UINT, "P",
	  "gets in 100 operations; the others are remote updates (CAS lock, "
	  "WRITE, unlock)", &args.read_pct, .min = 0, .max = 100,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "threads", NULL, BA_UINTS, "LIST",
	  "client threads, each its own context; a list sweeps (1,2,4,8,16)",
	  args.thr_list, .min = 1, .max = MAX_THREADS, .step = 1,
	  .count = &args.nthr, .max_items = MAX_LIST,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 'q', "qps", NULL, BA_UINT, "N", "connections (QPs) per thread",
	  &args.qps, .min = 1, .max = OMS_MAX_NODES,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "batch", NULL, BA_UINTS, "LIST",
	  "gets outstanding per thread; a list sweeps (Fig 6: 1,...,512)",
	  args.batch_list, .min = 1, .max = OMS_KVS_MAX_BATCH, .step = 1,
	  .count = &args.nbatch, .max_items = MAX_LIST,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "zipf", NULL, BA_DOUBLE, "THETA",
	  "key skew, Zipf theta (0: uniform; YCSB uses 0.99)",
	  &args.zipf, .dmin = 0, .dmax = BU_ZIPF_THETA_MAX,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "hist", NULL, BA_STRING, "FILE",
	  "each cell's latency histogram into FILE (proto, bytes, us, gets)",
	  .dst = &args.hist, .roles = BA_CLIENT | BA_LOCAL },
	{ 'D', "duration", NULL, BA_DOUBLE, "SEC",
	  "seconds per (protocol, size) cell", &args.duration, .dmin = 0.05,
	  .dmax = 3600, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "runs", NULL, BA_UINT, "N",
	  "best of N runs per cell, protocols interleaved (torn: all N)",
	  &args.runs, .min = 1, .max = 100, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "backend", NULL, BA_CHOICE, "B",
	  "auto: OMS_BACKEND, else an RDMA device, else emu", &args.backend,
	  .names = backend_names, .dflt = "auto; --local: emu" },
	{ 0, "scale", NULL, BA_UINT, "N",
	  "emu: 0: no latency model, wall time; else the model on its own "
	  "clock, held to at least N wall ns per model ns (the figures do "
	  "not depend on N)", &args.scale, .min = 0, .max = 100000,
	  .roles = BA_LOCAL },
	{ 0, "hosts", NULL, BA_UINT, "N",
	  "emu: the client threads spread over N emulated client hosts "
	  "(nodes), the server on a node of its own", &args.hosts,
	  .min = 1, .max = OMS_MAX_NODES - 1, .roles = BA_LOCAL },
	{ 0, "order", NULL, BA_CHOICE, "O",
	  "emu: where reads are ordered", &args.order,
	  .names = order_names, .roles = BA_LOCAL },
	{ 0, "nic-req-ns", NULL, BA_UINT, "N",
	  "emu, a latency model: responder NIC model ns per request (0: "
	  "bytes only)", &args.nic_req_ns, .min = 0, .max = 1000000,
	  .roles = BA_LOCAL },
	{ 0, "cpu-charge", NULL, BA_FLAG, NULL,
	  "emu, a latency model: the clients' CPU time outside liboms costs "
	  "model time (OMS_EMU_F_CHARGE_CPU; it holds the interrupts the "
	  "kernel handles on their time too: such figures move with the "
	  "machine)", &args.force_cpu_charge, .group = 3, .roles = BA_LOCAL },
	{ 0, "no-cpu-charge", NULL, BA_FLAG, NULL,
	  "emu, a latency model: the clients' CPU time costs no model time "
	  "(the default)", &args.no_cpu_charge, .group = 3, .roles = BA_LOCAL },
	{ 0, "calibrate", NULL, BA_FLAG, NULL,
	  "fit the emulated device's model to this link, run the cells on "
	  "both, print them side by side", &args.calibrate, .group = 0,
	  .roles = BA_CLIENT },
	{ 0, "timeout-ms", NULL, BA_UINT, "MS",
	  "declare a silent peer dead after this long (oms_ctx_attr "
	  "timeout_ms)", &args.timeout_ms, .min = 1, .max = 600000,
	  .dflt = "OMS_TIMEOUT_MS, else 2000" },
	BA_OPTS_RDMA(&rdma),
	BA_OPT_REPORT_GBITS(&args.gbits, BA_CLIENT | BA_LOCAL),
};

/* --hist: every cell's histogram, appended as the cells end */
static FILE *hist_file;

static struct ba ba = {
	.name = "kvs_get", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.positional = "client",
	.role_help = {
		"the server: serve the tables until SIGINT or SIGTERM",
		"a client: get from the server at HOST",
		"server and clients in this process, on the emulated device",
	},
	.record_roles = BA_CLIENT | BA_LOCAL,
	.about = "KVS get throughput (ASPLOS'26 paper, Fig 7) with liboms's "
		 "get protocols.",
	.epilog = "Exit status: 0; 1 server unreachable, table missing or "
		  "server gone; 2 bad flags.",
};

/* What the table filled, in the form the rest uses. */
static void settle(struct opts *o)
{
	o->json = ba.json;
	o->mode = ba.role == BA_CLIENT ? M_CLIENT :
		  ba.role == BA_LOCAL ? M_LOCAL : M_SERVER;
	snprintf(o->port_s, sizeof(o->port_s), "%u", o->port_n);
	o->port = o->port_s;
	o->items_set = ba_seen(&ba, "items");
	o->threads = o->thr_list[0];
	o->batch = o->batch_list[0];
	/* --local is the emulated device's mode unless a backend is named */
	if (o->mode == M_LOCAL && !ba_seen(&ba, "backend") &&
	    !getenv("OMS_BACKEND"))
		o->backend = OMS_BACKEND_EMU;
	if (o->mode == M_LOCAL && o->read_pct < 100)
		o->remote_write = 1;
	if (!ba_seen(&ba, "proto"))
		o->protos = o->mode == M_SERVER ? (1u << OMS_KVS_NPROTO) - 1 :
			    1u << OMS_KVS_SINGLE;
	/* As perftest's server, ours takes its size from the clients: with
	 * no -s it serves every size of --all, which holds a client's
	 * default and each size of its -a (a client naming another size is
	 * told to start the server with it). */
	if (o->sweep || (o->mode == M_SERVER && !ba_seen(&ba, "size"))) {
		memcpy(o->sizes, sweep_sizes, sizeof(sweep_sizes));
		o->nsizes = NSWEEP;
	}
	/* The charge measures a thread's CPU time between its calls, and
	 * that clock holds more than the client's work: the interrupts the
	 * kernel handles while the thread runs (without IRQ time accounting,
	 * as on this project's VMs: an idle machine's device thread wakes the
	 * clients, and its interrupts land on them), and with more threads
	 * than cores what sharing the cores costs.  Figures with it move with
	 * the machine (docs/emu-device.md, "The client's CPU"), so it is on
	 * only when asked for. */
	o->cpu_charge = o->force_cpu_charge;
}

/*
 * liboms's OMS_TIMEOUT_MS, for machines where 2 s of silence is not a dead
 * peer (emulated guests), is the timeout of contexts that set none; ours
 * set --timeout-ms's, so without the flag the variable stands in for it,
 * and a command line need not change to run there.  A bad value is
 * refused, as liboms refuses it.
 */
static int timeout_from_env(struct opts *o)
{
	const char *env = getenv("OMS_TIMEOUT_MS");
	unsigned long v;
	char *end;

	if (ba_seen(&ba, "timeout-ms") || !env || !*env)
		return BA_GO_ON;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || env[0] == '-' || v == 0 || v > 600000)
		return ba_fail(&ba, "OMS_TIMEOUT_MS=%s: expected a whole "
			       "number of ms in 1..600000", env);
	o->timeout_ms = (uint32_t)v;
	return BA_GO_ON;
}

/* ---- contexts --------------------------------------------------------- */

/* --local on emu: the run's device (run_local()), with its model */
static struct oms_emu *local_emu;

/* The paper's Table 2, as bench/ordered_read, or the link's fit
 * (--calibrate), at --scale (0: none), with the responder NIC's rate. */
static int local_emu_make(const struct opts *o)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_READ_ORDER |
			     OMS_EMU_ATTR_NIC_RATE | OMS_EMU_ATTR_FLAGS,
		.lat_bus_ns = o->lat_bus_ns, .lat_rc_ns = o->lat_rc_ns,
		.lat_mem_ns = o->lat_mem_ns, .link_gbps = o->link_gbps,
		.time_scale = o->scale, .read_order = o->order,
		.rlsq_entries = 256, .lat_req_ns = o->nic_req_ns,
		/* the clients' work costs model time as the device's does */
		.flags = o->scale && o->cpu_charge ? OMS_EMU_F_CHARGE_CPU : 0,
	};

	return oms_emu_create(&ea, &local_emu);
}

static int ctx_make(const struct opts *o, uint32_t node, struct oms_ctx **ctx)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_TIMEOUT;
	a.node = node;
	a.timeout_ms = o->timeout_ms;	/* 2 s: a server gone is noticed */
	if (o->backend) {
		a.comp_mask |= OMS_CTX_ATTR_BACKEND;
		a.backend = (uint32_t)o->backend;
	}
	if (local_emu) {
		a.comp_mask |= OMS_CTX_ATTR_EMU;
		a.emu = local_emu;
	}
	return oms_ctx_create(&a, ctx);
}

/* ---- server ----------------------------------------------------------- */

struct server {
	const struct opts *o;
	struct oms_kvs_server *s;
	uint32_t ntables;
	struct oms_kvs_table_spec spec[OMS_KVS_MAX_TABLES];
	int stop;
	pthread_t wt[MAX_WRITERS];
	uint32_t nw;
	uint64_t updates, busy;
	uint64_t live;			/* updates so far, for progress */
	int werr;
};

static void *writer_main(void *arg)
{
	struct server *sv = arg;
	struct oms_ctx *ctx = NULL;
	struct oms_kvs_writer *w = NULL;
	uint64_t rng = (uintptr_t)&ctx ^ bu_now_ns(), n = 0, busy = 0;
	int err = ctx_make(sv->o, 1, &ctx);

	if (!err)
		err = oms_kvs_writer_create(sv->s, ctx, NULL, &w);
	while (!err && !__atomic_load_n(&sv->stop, __ATOMIC_ACQUIRE)) {
		uint32_t t;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		t = (uint32_t)((rng >> 33) % sv->ntables);
		err = oms_kvs_update(w, t, (rng >> 13) % sv->spec[t].items);
		if (err == -EBUSY) {
			busy++;
			err = 0;
		} else if (!err) {
			n++;
			__atomic_add_fetch(&sv->live, 1, __ATOMIC_RELAXED);
		}
		if (!(n % 64))
			sched_yield();
	}
	if (err) {
		ba_err(&ba, "writer: %s", strerror(-err));
		__atomic_store_n(&sv->werr, err, __ATOMIC_RELEASE);
	}
	if (w)
		oms_kvs_writer_destroy(w);
	if (ctx)
		oms_ctx_destroy(ctx);
	__atomic_add_fetch(&sv->updates, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sv->busy, busy, __ATOMIC_RELAXED);
	return NULL;
}

static int server_start(struct server *sv, const struct opts *o,
			struct oms_ctx *ctx)
{
	uint32_t layouts = o->protos;
	int err;

	if (layouts & (1u << OMS_KVS_BROKEN))	/* Single Read's layout */
		layouts = (layouts & ~(1u << OMS_KVS_BROKEN)) |
			  1u << OMS_KVS_SINGLE;
	memset(sv, 0, sizeof(*sv));
	sv->o = o;
	for (uint32_t p = 0; p < OMS_KVS_BROKEN; p++)
		for (uint32_t i = 0; i < o->nsizes && layouts & (1u << p); i++)
			sv->spec[sv->ntables++] = (struct oms_kvs_table_spec){
				.proto = p, .value_size = o->sizes[i],
				.items = o->items,
				.flags = o->remote_write ?
					 OMS_KVS_TABLE_REMOTE_WRITE : 0 };
	err = oms_kvs_server_create(ctx, sv->spec, sv->ntables, &sv->s);
	if (err) {
		ba_err(&ba, "cannot create the tables: %s",
		       strerror(-err));
		/* registering pins them: the default (every size of --all)
		 * is tens of MB, over many a locked-memory limit */
		if (err == -ENOMEM || err == -E2BIG || err == -EPERM)
			ba_err(&ba, "%u tables of %u items: serve fewer sizes "
			       "(-s), protocols (--proto) or items (--items), "
			       "or raise the locked-memory limit (ulimit -l)",
			       sv->ntables, o->items);
		return err;
	}
	err = oms_kvs_server_listen(sv->s, o->bind, o->port);
	if (err) {
		ba_err(&ba, "cannot listen on %s:%s: %s",
		       o->bind ? o->bind : "*", o->port, strerror(-err));
		oms_kvs_server_destroy(sv->s);
		return err;
	}
	for (; sv->nw < o->writers; sv->nw++)
		if (pthread_create(&sv->wt[sv->nw], NULL, writer_main, sv))
			break;
	return 0;
}

static int server_stop(struct server *sv)
{
	__atomic_store_n(&sv->stop, 1, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < sv->nw; i++)
		pthread_join(sv->wt[i], NULL);
	oms_kvs_server_destroy(sv->s);
	return sv->werr;
}

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
	g_signal = sig;
}

static int run_server(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct oms_ctx *ctx;
	struct server sv;
	uint64_t last = 0, t_last = bu_now_ns();
	char sizes[NSWEEP * 6 + 1];
	int model, err = ctx_make(o, 1, &ctx);

	if (err) {
		ba_ctx_failed(&ba, err, o->backend);
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (server_start(&sv, o, ctx)) {
		oms_ctx_destroy(ctx);
		return 1;
	}
	/* the sizes, which a client's -s must be among */
	for (uint32_t i = 0, at = 0; i < o->nsizes && at < sizeof(sizes); i++)
		at += snprintf(sizes + at, sizeof(sizes) - at, "%s%u",
			       i ? "," : "", o->sizes[i]);
	printf("%s server: %u tables (value sizes %s B), %u items each, "
	       "listening on %s:%s (backend %s), %u writers; SIGINT or "
	       "SIGTERM stops it\n", ba.prog, sv.ntables, sizes, o->items,
	       o->bind ? o->bind : "*", o->port, bu_backend_of(ctx, &model),
	       o->writers);
	fflush(stdout);
	while (!g_signal && !__atomic_load_n(&sv.werr, __ATOMIC_ACQUIRE)) {
		uint64_t now, live;

		usleep(100000);
		now = bu_now_ns();
		if (!o->writers || now - t_last < 1000000000ull)
			continue;
		live = __atomic_load_n(&sv.live, __ATOMIC_RELAXED);
		fprintf(stderr, "%s server: writers %.0f updates/s\n", ba.prog,
			(double)(live - last) * 1e9 / (double)(now - t_last));
		last = live;
		t_last = now;
	}
	err = server_stop(&sv);
	oms_ctx_destroy(ctx);
	printf("%s server: stopped%s; %llu updates, %llu busy\n", ba.prog,
	       g_signal ? " by a signal" : " (writer failed)",
	       (unsigned long long)sv.updates, (unsigned long long)sv.busy);
	return err ? 1 : 0;
}

/* ---- clients ---------------------------------------------------------- */

enum phase { P_CONNECT, P_WARMUP, P_MEASURE, P_STOP };

struct cell {
	const struct opts *o;
	const char *host;
	uint32_t proto, size;
	int phase;			/* enum phase */
	int ready, failed;		/* threads connected / failed */
	int err;			/* first error */
	const char *err_what;
	uint64_t gets_live;		/* all phases: the watchdog's */
	/* Under the model the cell counts the rounds within one window of
	 * model time common to the workers (model_window.h), opened after
	 * the warm-up and closed after -D and MIN_ROUNDS (run_cell()). */
	struct bu_window win;
	uint32_t keys;			/* keys drawn from: the table's items,
					 * capped by --items */
};

struct worker {
	struct cell *cell;
	pthread_t th;
	uint32_t id;
	uint64_t gets, torn, retries;
	uint64_t updates, busy;		/* --read-pct: remote updates */
	uint64_t drawn, hot;		/* keys drawn; of them in the top 1 % */
	double counted;			/* gets in the window (shares) */
	uint64_t rounds_in;		/* rounds that ended in it */
	uint64_t hist[HBUCKETS];
};

/* The model clock of the calling thread (--local under the model). */
static uint64_t model_time(void)
{
	uint64_t t = 0;

	if (local_emu)
		oms_emu_thread_time(local_emu, &t);
	return t;
}

/* --hosts: worker @id's node; the server has node 1 */
static uint32_t host_node(const struct opts *o, uint32_t id)
{
	uint32_t h = id % o->hosts;

	return h ? h + 1 : 0;
}

static void cell_fail(struct cell *c, int err, const char *what)
{
	int zero = 0;

	if (__atomic_compare_exchange_n(&c->err, &zero, err, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		c->err_what = what;
	__atomic_store_n(&c->phase, P_STOP, __ATOMIC_RELEASE);
}

/* Log-linear latency buckets: 16 per power of two (6 % wide). */
static uint32_t hbucket(uint64_t ns)
{
	uint32_t msb;

	if (ns < 16)
		return (uint32_t)ns;
	msb = 63 - (uint32_t)__builtin_clzll(ns);
	return (msb - 3) * 16 + (uint32_t)((ns >> (msb - 4)) & 15);
}

static double hvalue(uint32_t b)
{
	uint32_t msb = b / 16 + 3;

	if (b < 16)
		return b;
	/* middle of the bucket */
	return ((double)(16 + b % 16) + 0.5) * (double)(1ull << (msb - 4));
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct cell *c = w->cell;
	const struct opts *o = c->o;
	struct oms_kvs_client_attr a = oms_kvs_client_attr_default();
	struct oms_kvs_info info = { .size = sizeof(info) };
	struct oms_kvs_get *g = calloc(o->batch, sizeof(*g));
	struct oms_kvs_get **done = calloc(o->batch, sizeof(*done));
	struct oms_kvs_get **spare = calloc(o->batch, sizeof(*spare));
	struct oms_kvs_client *cl = NULL;
	struct oms_kvs_table *t = NULL, *ut = NULL;
	struct oms_ctx *ctx = NULL;
	struct oms_mr *mr = NULL;
	uint8_t *bufs = NULL;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (w->id + 1), keys, hot_ranks;
	struct bu_zipf zf;
	uint32_t nspare = o->batch;
	int counting = 0, model = local_emu && o->scale, err;
	uint64_t end = model_time();

	a.batch = o->batch;
	a.nconn = o->qps;
	err = g && done && spare ? ctx_make(o, host_node(o, w->id), &ctx) :
				   -ENOMEM;
	if (!err)
		err = oms_kvs_client_create(ctx, c->host, o->port, &a, &cl);
	if (!err)
		err = oms_kvs_table_open(cl, c->proto, c->size, &t);
	if (!err)
		err = oms_kvs_table_info(t, &info);
	/* updates write the table's layout (Broken reads Single Read's) */
	if (!err && o->read_pct < 100)
		err = oms_kvs_table_open(cl, c->proto == OMS_KVS_BROKEN ?
					 OMS_KVS_SINGLE : c->proto, c->size,
					 &ut);
	if (!err && ut && !(info.flags & OMS_KVS_TABLE_REMOTE_WRITE))
		err = -EPERM;	/* the server was started without it */
	if (!err) {
		bufs = aligned_alloc(64, ((size_t)o->batch * info.buf_size +
					  63) / 64 * 64);
		err = bufs ? 0 : -ENOMEM;
	}
	/* registered: reads land without a bounce copy (verbs) */
	if (!err)
		err = oms_mr_reg(ctx, bufs, (size_t)o->batch * info.buf_size,
				 OMS_ACCESS_REMOTE_READ, &mr);
	if (err) {
		cell_fail(c, err, err == -EPERM && ut ?
			  "--read-pct: the server's tables take no updates "
			  "(start it with --remote-write):" : "connect");
		__atomic_add_fetch(&c->failed, 1, __ATOMIC_RELEASE);
		goto out;
	}
	keys = o->items_set && o->items < info.items ? o->items : info.items;
	__atomic_store_n(&c->keys, keys, __ATOMIC_RELAXED);
	/* the flag's range is the generator's: this cannot fail */
	bu_zipf_init(&zf, keys, o->zipf);
	hot_ranks = keys / 100 ? keys / 100 : 1;
	for (uint32_t i = 0; i < o->batch; i++) {
		g[i].table = t;
		g[i].buf = bufs + (size_t)i * info.buf_size;
		spare[i] = &g[i];
	}
	__atomic_add_fetch(&c->ready, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->phase, __ATOMIC_ACQUIRE) == P_CONNECT)
		usleep(1000);
	for (;;) {
		int ph = __atomic_load_n(&c->phase, __ATOMIC_ACQUIRE), n, keep;
		uint64_t nupd, upd_ok, upd_busy, drawn, hot, begin;
		double share;

		if (ph == P_STOP)
			break;
		if (!model && ph == P_MEASURE && !counting) {
			counting = 1;
			w->counted = 0;
			w->gets = w->torn = w->retries = 0;
			w->updates = w->busy = 0;
			w->drawn = w->hot = 0;
			memset(w->hist, 0, sizeof(w->hist));
		}
		/* each free slot: a get, or (--read-pct) an update done
		 * now - between polls nothing of the client is in flight */
		nupd = upd_ok = upd_busy = drawn = hot = 0;
		for (uint32_t todo = nspare; todo && !err; todo--) {
			struct oms_kvs_get *x;
			uint64_t rank, key;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			rank = bu_zipf_rank(&zf, bu_unit(rng));
			key = bu_zipf_key(&zf, rank);
			drawn++;
			hot += rank < hot_ranks;
			if (ut && (rng >> 40) % 100 >= o->read_pct) {
				err = oms_kvs_client_update(cl, ut, key, NULL);
				nupd++;
				upd_ok += !err;
				upd_busy += err == -EBUSY;
				if (err == -EBUSY)
					err = 0;
				continue;
			}
			x = spare[--nspare];
			x->key = key;
			err = oms_kvs_submit(cl, x);
		}
		n = err ? err : oms_kvs_poll(cl, done, o->batch);
		if (n < 0) {
			cell_fail(c, n, err ? "get or update" : "get");
			break;
		}
		/* the round ends here: how much of it counts */
		begin = end;
		end = model_time();
		share = model ? bu_window_round(&c->win, w->id, begin, end) :
			counting;
		keep = share > 0;
		if (keep) {
			w->counted += share * (double)n;
			__atomic_add_fetch(&w->rounds_in, 1, __ATOMIC_RELAXED);
			w->drawn += drawn;
			w->hot += hot;
			w->updates += upd_ok;
			w->busy += upd_busy;
		}
		for (int i = 0; i < n; i++) {
			struct oms_kvs_get *x = done[i];

			spare[nspare++] = x;
			if (x->status) {
				cell_fail(c, x->status, "get");
				continue;
			}
			if (!keep)
				continue;
			w->gets++;
			w->torn += x->torn;
			w->retries += x->retries;
			w->hist[hbucket(x->lat_ns)]++;
		}
		/* under the model a worker goes on until its rounds end past
		 * the window: every round within it is counted */
		if (model && bu_window_past(&c->win, end)) {
			__atomic_add_fetch(&c->gets_live, (uint64_t)n + nupd,
					   __ATOMIC_RELAXED);
			break;
		}
		/* updates are progress too (the watchdog's) */
		__atomic_add_fetch(&c->gets_live, (uint64_t)n + nupd,
				   __ATOMIC_RELAXED);
	}
out:
	if (mr)
		oms_mr_dereg(mr);
	if (cl)
		oms_kvs_client_destroy(cl);
	if (ctx)
		oms_ctx_destroy(ctx);
	free(bufs);
	free(g);
	free(done);
	free(spare);
	return NULL;
}

struct result {
	uint64_t gets, torn, retries, updates, busy;
	uint32_t keys;			/* keys drawn from (the table's) */
	double upd_mops;		/* remote updates per second, M */
	double mops, gbps, p50_us, p90_us, p99_us, p999_us;
	double hot_share;	/* of the keys drawn, those of the top 1 % */
	uint64_t hist[HBUCKETS];	/* ns: model time under the model */
};

static double percentile(const uint64_t *hist, uint64_t total, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)total), seen = 0;

	for (uint32_t b = 0; b < HBUCKETS; b++) {
		seen += hist[b];
		if (seen >= want && hist[b])
			return hvalue(b);
	}
	return 0;
}

/* No get completed for this long: give up.  At least 3 s, and a second
 * more than the contexts' own timeout (--timeout-ms), which fails a get
 * with a clearer error first. */
static uint64_t watchdog_ns(const struct opts *o)
{
	uint64_t t = ((uint64_t)o->timeout_ms + 1000) * 1000000ull;

	return t > 3000000000ull ? t : 3000000000ull;
}

static void die_now(const struct cell *c, const char *why)
{
	ba_err(&ba, "%s %s:%s: %s", why, c->host, c->o->port, c->err ?
	       strerror(-c->err) : "no get completed in the watchdog's time");
	fflush(stdout);
	_exit(1);	/* threads may sit in a dead device's wait */
}

/* Wait for @c's workers to reach @n ready, or fail. */
static void wait_ready(struct cell *c, uint32_t n)
{
	uint64_t t0 = bu_now_ns();

	while ((uint32_t)__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE) < n) {
		if (__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE))
			return;
		if (bu_now_ns() - t0 > 15000000000ull)
			die_now(c, "connecting timed out to");
		usleep(1000);
	}
}

/* Gets (the window's shares of rounds; or @upd: updates) per us, M/s,
 * over @ns of model or wall time. */
static double rate(const struct worker *w, uint32_t n, int upd, uint64_t ns)
{
	double sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += upd ? (double)w[i].updates : w[i].counted;
	return ns ? sum * 1e3 / (double)ns : 0;
}

/* Rounds that ended in the window, all workers. */
static uint64_t rounds_in(const struct worker *w, uint32_t n)
{
	uint64_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		k += __atomic_load_n(&w[i].rounds_in, __ATOMIC_RELAXED);
	return k;
}

/* The model's clock, ns; 0 without it. */
static uint64_t device_clock(void)
{
	uint64_t t = 0;

	if (local_emu)
		oms_emu_clock(local_emu, &t);
	return t;
}

/* One (protocol, size) cell: connect, warm up, measure.  @model: the
 * figures are model time, the emulated device's own. */
static int run_cell(const struct opts *o, const char *host, uint32_t proto,
		    uint32_t size, int model, struct result *r)
{
	static struct worker w[MAX_THREADS];
	struct cell c = { .o = o, .host = host, .proto = proto, .size = size };
	uint64_t hist[HBUCKETS] = { 0 };
	uint64_t t0, t1, tick, last = 0, live, watch_t, watch_v = 0, mtick = 0;
	double warm = o->duration / 5 < 0.2 ? o->duration / 5 : 0.2;
	uint32_t n;

	bu_window_init(&c.win, o->threads);
	for (n = 0; n < o->threads; n++) {
		memset(&w[n], 0, sizeof(w[n]));
		w[n].cell = &c;
		w[n].id = n;
		if (pthread_create(&w[n].th, NULL, worker_main, &w[n])) {
			cell_fail(&c, -EAGAIN, "start");
			break;
		}
	}
	wait_ready(&c, n);
	if (!c.err)
		__atomic_store_n(&c.phase, P_WARMUP, __ATOMIC_RELEASE);
	t0 = bu_now_ns();
	watch_t = t0;
	while (!c.err && (bu_now_ns() - t0 < (uint64_t)(warm * 1e9) ||
			  (model && !bu_window_all_started(&c.win)))) {
		if (bu_now_ns() - t0 > watchdog_ns(o))
			die_now(&c, "server not answering at");
		usleep(2000);
	}
	if (!c.err && model)
		bu_window_open(&c.win);
	if (!c.err)
		__atomic_store_n(&c.phase, P_MEASURE, __ATOMIC_RELEASE);
	t0 = tick = bu_now_ns();
	mtick = device_clock();
	for (;;) {
		uint64_t now = bu_now_ns();

		/* a round a worker at least (a few under the model): a busy
		 * machine, or a slow link, may do fewer in the wall time
		 * asked for */
		if (__atomic_load_n(&c.err, __ATOMIC_ACQUIRE) ||
		    (now - t0 >= (uint64_t)(o->duration * 1e9) &&
		     rounds_in(w, n) >= (model ? MIN_ROUNDS : 1) * n))
			break;
		live = __atomic_load_n(&c.gets_live, __ATOMIC_RELAXED);
		if (live != watch_v) {
			watch_v = live;
			watch_t = now;
		} else if (now - watch_t > watchdog_ns(o)) {
			die_now(&c, "server not answering at");
		}
		if (now - tick >= 1000000000ull) {
			uint64_t m = device_clock();

			ba_err(&ba, "%s %u B: %.0f/%.0f s, %.2f M "
			       "gets/s%s", oms_kvs_proto_name(proto), size,
			       (double)(now - t0) / 1e9, o->duration,
			       (double)(live - last) * 1e3 /
			       (double)(model ? m - mtick : now - tick),
			       model ? " (model time)" : "");
			last = live;
			tick = now;
			mtick = m;
		}
		usleep(10000);
	}
	t1 = bu_now_ns();
	/* under the model each worker goes on until it is past the window
	 * (worker_main()) */
	if (model && !c.err)
		bu_window_close(&c.win);
	else
		__atomic_store_n(&c.phase, P_STOP, __ATOMIC_RELEASE);
	/* each worker finishes its gets in flight first: on a paced device
	 * (NIC ordering, 16 threads of 500) that takes seconds of its own */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t wait = watchdog_ns(o) > 5000000000ull ?
				watchdog_ns(o) : 5000000000ull;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(wait / 1000000000ull);
		if (pthread_timedjoin_np(w[i].th, NULL, &ts))
			die_now(&c, "server not answering at");
	}
	if (c.err) {
		ba_err(&ba, "%s %s %u B from %s:%s: %s",
		       c.err_what, oms_kvs_proto_name(proto), size, host,
		       o->port, strerror(-c.err));
		return c.err;
	}
	memset(r, 0, sizeof(*r));
	r->keys = __atomic_load_n(&c.keys, __ATOMIC_RELAXED);
	{
		uint64_t drawn = 0, hot = 0;

		for (uint32_t i = 0; i < n; i++) {
			drawn += w[i].drawn;
			hot += w[i].hot;
		}
		r->hot_share = drawn ? (double)hot / (double)drawn : 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		r->updates += w[i].updates;
		r->busy += w[i].busy;
		r->gets += w[i].gets;
		r->torn += w[i].torn;
		r->retries += w[i].retries;
		for (uint32_t b = 0; b < HBUCKETS; b++)
			hist[b] += w[i].hist[b];
	}
	{
		uint64_t span = model ? bu_window_span(&c.win) : t1 - t0;

		r->mops = rate(w, n, 0, span);
		r->upd_mops = rate(w, n, 1, span);
	}
	r->gbps = r->mops * size * 8 / 1e3;
	/* latencies are on the clock of the gets (lib/kvs): model time
	 * under the model */
	r->p50_us = percentile(hist, r->gets, 0.50) / 1e3;
	r->p90_us = percentile(hist, r->gets, 0.90) / 1e3;
	r->p99_us = percentile(hist, r->gets, 0.99) / 1e3;
	r->p999_us = percentile(hist, r->gets, 0.999) / 1e3;
	memcpy(r->hist, hist, sizeof(r->hist));
	return 0;
}

/* "1,2,4" (two buffers, so two lists can be in one printf) */
static const char *list_str(const uint32_t *v, uint32_t n, int which)
{
	static char buf[2][MAX_LIST * 11];
	size_t at = 0;

	buf[which][0] = 0;
	for (uint32_t i = 0; i < n && at < sizeof(buf[which]); i++)
		at += (size_t)snprintf(buf[which] + at,
				       sizeof(buf[which]) - at, "%s%u",
				       i ? "," : "", v[i]);
	return buf[which];
}

/* Who orders acquire reads for this client's connections (oms_caps):
 * "agent" when the server's listener runs the destination agent. */
static char ordering[32] = "?";

/* Who orders acquire reads, in words: oms_caps.dest_ordering's values. */
static const char *ordering_who(void)
{
	if (!strcmp(ordering, "emulated"))
		return "the emulated device";
	if (!strcmp(ordering, "hardware"))
		return "the NIC";
	if (!strcmp(ordering, "source"))
		return "the initiator (at the source)";
	if (!strcmp(ordering, "agent"))
		return "the destination agent";
	return ordering;
}

/* The run's clients pay for their CPU on the model clock (--local's own
 * device with a model: local_emu_make()). */
static int cpu_charged(const struct opts *o)
{
	return local_emu && o->scale && o->cpu_charge;
}

static void print_head(const struct opts *o, const char *backend, int model)
{
	if (o->json)
		return;
	printf("KVS gets (ASPLOS'26 paper, Fig 7): backend %s, acquire "
	       "ordered by %s", backend, ordering_who());
	if (model)
		printf(", latency model (%s, %s reads), model time",
		       o->calibrate ? "fitted to the link" : "Table 2",
		       o->order == OMS_ORDER_RC_OPT ? "RC-opt" :
		       o->order == OMS_ORDER_RC ? "RC" : "NIC");
	if (model && o->nic_req_ns)
		printf(", responder NIC %u ns per request", o->nic_req_ns);
	if (model)
		printf(", client CPU %s", cpu_charged(o) ? "charged" :
		       "free");
	else if (!model)
		printf(", wall time");
	/* a client knows the server's items only once connected (each
	 * row's JSON has them) and its writers not at all */
	if (o->mode == M_CLIENT)
		printf("\nthreads %s x %u QPs, batch %s, the server's items%s "
		       "and writers, ",
		       list_str(o->thr_list, o->nthr, 0), o->qps,
		       list_str(o->batch_list, o->nbatch, 1),
		       o->items_set ? " (keys below --items)" : "");
	else
		printf("\nthreads %s x %u QPs on %u client host%s, batch %s, "
		       "%u items, %u writers, ",
		       list_str(o->thr_list, o->nthr, 0), o->qps, o->hosts,
		       o->hosts > 1 ? "s" : "",
		       list_str(o->batch_list, o->nbatch, 1), o->items,
		       o->writers);
	printf("%.1f s per cell, best of %u, keys %s (theta %.3f), "
	       "%u %% gets\n", o->duration, o->runs,
	       o->zipf > 0 ? "Zipf" : "uniform", o->zipf, o->read_pct);
	bu_rule();
	printf(" %-7s %-12s %3s %5s %12s %10s %8s %8s %8s %8s %7s %9s\n",
	       "#bytes", "proto", "thr", "batch", "#gets", "M gets/s",
	       ba_bw_unit(o->gbits),
	       "p50 us", "p99 us", "p99.9 us", "torn", "retries");
	bu_rule();
}

/* --calibrate: the rows of each side (0 the device, 1 the model) */
struct kept {
	uint32_t proto, size, threads, batch;
	double mops, p50_us;
	uint64_t gets, torn;
};

#define MAX_KEPT 64
static struct kept kept[2][MAX_KEPT];
static uint32_t nkept[2];
static int keep_side = -1;	/* the side that print_row fills */
static char dev_backend[16];	/* of side 0, for the side-by-side records */

static void print_row(const struct opts *o, const char *backend, int model,
		      uint32_t proto, uint32_t size, const struct result *r)
{
	if (!keep_side)
		snprintf(dev_backend, sizeof(dev_backend), "%s", backend);
	if (keep_side >= 0 && nkept[keep_side] < MAX_KEPT)
		kept[keep_side][nkept[keep_side]++] = (struct kept){
			.proto = proto, .size = size, .threads = o->threads,
			.batch = o->batch, .mops = r->mops,
			.p50_us = r->p50_us, .gets = r->gets,
			.torn = r->torn };
	/* a client: the keys it drew from (the server's items, capped by
	 * --items); the server's writers it cannot know (null) */
	char writers[16] = "null";

	if (o->mode != M_CLIENT)
		snprintf(writers, sizeof(writers), "%u", o->writers);
	ba_set_backend(&ba, backend);
	ba_json(&ba, "\"proto\":\"%s\",\"ordering\":\"%s\",\"size\":%u,\"threads\":%u,"
		"\"qps\":%u,\"batch\":%u,\"items\":%u,\"writers\":%s,"
		"\"gets\":%llu,\"mops\":%.6g,\"gbps\":%.6g,"
		"\"p50_us\":%.6g,\"p90_us\":%.6g,\"p99_us\":%.6g,"
		"\"p999_us\":%.6g,\"torn\":%llu,"
		"\"retries\":%llu,\"time\":\"%s\",\"scale\":%u,\"hosts\":%u,"
		"\"duration_s\":%.2f,\"runs\":%u,\"nic_req_ns\":%u,"
		"\"cpu_charge\":%d,"
		"\"zipf\":%.3f,\"hot1pct_share\":%.4f,\"read_pct\":%u,"
		"\"updates\":%llu,\"update_mops\":%.6g,\"update_busy\":%llu",
		oms_kvs_proto_name(proto), ordering, size, o->threads, o->qps,
		o->batch, r->keys ? r->keys : o->items, writers,
		(unsigned long long)r->gets, r->mops, r->gbps,
		r->p50_us, r->p90_us, r->p99_us, r->p999_us,
		(unsigned long long)r->torn, (unsigned long long)r->retries,
		model ? "model" : "wall", model ? o->scale : 0, o->hosts,
		o->duration, o->runs, model ? o->nic_req_ns : 0,
		model && cpu_charged(o), o->zipf,
		r->hot_share, o->read_pct, (unsigned long long)r->updates,
		r->upd_mops, (unsigned long long)r->busy);
	if (!o->json)
		printf(" %-7u %-12s %3u %5u %12llu %10.2f %8.2f %8.2f %8.2f "
		       "%8.2f %7llu %9llu\n", size, oms_kvs_proto_name(proto),
		       o->threads, o->batch,
		       (unsigned long long)r->gets, r->mops,
		       ba_bw(r->gbps, o->gbits), r->p50_us, r->p99_us, r->p999_us,
		       (unsigned long long)r->torn,
		       (unsigned long long)r->retries);
	if (!o->json && o->read_pct < 100)
		printf(" %-7s %-12s %3s %5s %12llu %10.2f M updates/s (remote: "
		       "CAS, WRITE, unlock), %llu busy\n", "", "  updates", "",
		       "",
		       (unsigned long long)r->updates, r->upd_mops,
		       (unsigned long long)r->busy);
	fflush(stdout);
	if (hist_file) {
		/* one line per bucket with gets: the bucket's middle */
		for (uint32_t b = 0; b < HBUCKETS; b++)
			if (r->hist[b])
				fprintf(hist_file, "%s %u %.4f %llu\n",
					oms_kvs_proto_name(proto), size,
					hvalue(b) / 1e3,
					(unsigned long long)r->hist[b]);
		fflush(hist_file);
	}
}

/* One cell of the sweep: a size, a thread count, a batch. */
struct combo {
	uint32_t size, threads, batch;
	double mops[OMS_KVS_NPROTO];
};

#define MAX_COMBOS (NSWEEP * MAX_LIST * MAX_LIST)

/* Single Read against the others, per combo (text table only). */
static void print_ratios(const struct opts *o, const struct combo *cb,
			 uint32_t n)
{
	if (o->json || !(o->protos & 1u << OMS_KVS_SINGLE) ||
	    !(o->protos & ~(1u << OMS_KVS_SINGLE)))
		return;
	bu_rule();
	for (uint32_t i = 0; i < n; i++) {
		printf(" %-7u %3u %5u single /", cb[i].size, cb[i].threads,
		       cb[i].batch);
		for (uint32_t p = 1; p < OMS_KVS_NPROTO; p++)
			if (o->protos & 1u << p && cb[i].mops[p] > 0)
				printf("  %s %.2fx", oms_kvs_proto_name(p),
				       cb[i].mops[OMS_KVS_SINGLE] /
				       cb[i].mops[p]);
		printf("\n");
	}
}

/* Every protocol of one (size, threads, batch) cell, best of --runs. */
static int run_combo(const struct opts *o, const char *host,
		     const char *backend, int model, struct combo *cb)
{
	static struct result best[OMS_KVS_NPROTO];
	uint64_t torn[OMS_KVS_NPROTO] = { 0 };
	int fail = 0;

	memset(best, 0, sizeof(best));
	/* protocols interleaved within each run: drifts of a shared
	 * machine hit them alike */
	for (uint32_t k = 0; k < o->runs && !fail; k++) {
		for (uint32_t p = 0; p < OMS_KVS_NPROTO && !fail; p++) {
			static struct result r;

			if (!(o->protos & 1u << p))
				continue;
			fail = !!run_cell(o, host, p, cb->size, model, &r);
			if (fail)
				break;
			torn[p] += r.torn;
			if (!k || r.mops > best[p].mops)
				best[p] = r;
		}
	}
	for (uint32_t p = 0; p < OMS_KVS_NPROTO && !fail; p++) {
		if (!(o->protos & 1u << p))
			continue;
		/* the rate is the best run's; a torn value of any run counts */
		best[p].torn = torn[p];
		cb->mops[p] = best[p].mops;
		print_row(o, backend, model, p, cb->size, &best[p]);
	}
	return fail;
}

static int run_clients(const struct opts *o, const char *host)
{
	struct oms_kvs_client *probe = NULL;
	struct oms_ctx *ctx;
	static struct combo cb[MAX_COMBOS];
	uint32_t ncb = 0;
	struct opts oc = *o;	/* the cell's threads and batch */
	const char *backend;
	int model = 0, err, fail = 0;

	/* one connection up front: a clear error before any thread runs */
	err = ctx_make(o, 0, &ctx);
	if (err) {
		ba_ctx_failed(&ba, err, o->backend);
		return 1;
	}
	backend = bu_backend_of(ctx, &model);
	err = oms_kvs_client_create(ctx, host, o->port, NULL, &probe);
	if (err) {
		ba_connect_failed(&ba, host, o->port, err, backend);
		oms_ctx_destroy(ctx);
		return 1;
	}
	{
		struct oms_caps caps = { .size = sizeof(caps) };

		if (!oms_query_caps(ctx, &caps))
			snprintf(ordering, sizeof(ordering), "%s",
				 caps.dest_ordering);
	}
	print_head(o, backend, model);
	for (uint32_t i = 0; i < o->nsizes && !fail; i++) {
		struct oms_kvs_table *t;

		for (uint32_t p = 0; p < OMS_KVS_NPROTO; p++) {
			if (!(o->protos & 1u << p) ||
			    !oms_kvs_table_open(probe, p, o->sizes[i], &t))
				continue;
			ba_err(&ba, "the server at %s:%s has no "
			       "%s table of %u B: with no -s it serves every "
			       "size of --all (64 B - 8 KiB) and every "
			       "protocol; start it with no -s, or with --size "
			       "%u (and --proto %s) among its own", host,
			       o->port, oms_kvs_proto_name(p), o->sizes[i],
			       o->sizes[i], oms_kvs_proto_name(p));
			fail = 1;
		}
		for (uint32_t ti = 0; ti < o->nthr && !fail; ti++)
			for (uint32_t bi = 0; bi < o->nbatch && !fail; bi++) {
				oc.threads = o->thr_list[ti];
				oc.batch = o->batch_list[bi];
				cb[ncb] = (struct combo){ .size = o->sizes[i],
							  .threads = oc.threads,
							  .batch = oc.batch };
				fail = run_combo(&oc, host, backend, model,
						 &cb[ncb++]);
			}
	}
	if (!fail) {
		print_ratios(o, cb, ncb);
		if (!o->json)
			bu_rule();
	}
	oms_kvs_client_destroy(probe);
	oms_ctx_destroy(ctx);
	return fail;
}

static int run_local(const struct opts *o)
{
	struct oms_ctx *ctx;
	struct server sv;
	int err, fail;

	/* on emu, a device of the run's own with the model */
	err = bu_backend_is_emu(o->backend) ? local_emu_make(o) : 0;
	if (!err)
		err = ctx_make(o, 1, &ctx);
	if (err) {
		ba_ctx_failed(&ba, err, o->backend);
		goto out;
	}
	if (server_start(&sv, o, ctx)) {
		oms_ctx_destroy(ctx);
		err = -EIO;
		goto out;
	}
	fail = run_clients(o, o->bind ? o->bind : BU_LOOPBACK);
	err = server_stop(&sv);
	if (err)
		fail = 1;
	if (!o->json && o->writers)
		printf("writers: %llu updates, %llu busy\n",
		       (unsigned long long)sv.updates,
		       (unsigned long long)sv.busy);
	oms_ctx_destroy(ctx);
out:
	if (local_emu)
		oms_emu_destroy(local_emu);
	local_emu = NULL;
	return err ? 1 : fail;
}

/* ---- --calibrate: model vs device ------------------------------------ */

/*
 * Fit the model to the link to @host, on a connection of its own; *@items:
 * the server's items per table, which the model's server then holds too.
 */
static int fit_link(const struct opts *o, const char *host,
		    struct bu_link_fit *f, uint32_t *items)
{
	struct oms_kvs_info info = { .size = sizeof(info) };
	struct oms_kvs_client *kc = NULL;
	struct oms_kvs_table *t;
	struct oms_ctx *ctx;
	struct oms_rmr r;
	uint32_t p = (uint32_t)__builtin_ctz(o->protos);
	int err = ctx_make(o, 0, &ctx);

	if (err) {
		ba_ctx_failed(&ba, err, o->backend);
		return 1;
	}
	err = oms_kvs_client_create(ctx, host, o->port, NULL, &kc);
	if (!err)
		err = oms_kvs_table_open(kc, p, o->sizes[0], &t);
	if (!err)
		err = oms_kvs_table_info(t, &info);
	*items = info.items;
	if (!err)
		err = oms_connect(ctx, host, o->port, o->timeout_ms, &r);
	if (!err)
		err = bu_link_fit(ctx, &r, 3.0, f);
	if (kc)
		oms_kvs_client_destroy(kc);
	oms_ctx_destroy(ctx);
	if (err)
		ba_err(&ba, "--calibrate: measuring the link to "
		       "%s:%s: %s", host, o->port, strerror(-err));
	return !!err;
}

static void print_fit(const struct opts *o, const struct bu_link_fit *f,
		      const char *device_ordering, uint32_t order)
{
	ba_json(&ba, "\"calibration\":\"fit\",\"rtt_ns\":%llu,"
		"\"round64_ns\":%llu,\"round4k_ns\":%llu,\"rounds\":%u,"
		"\"fit_n\":%u,\"lat_bus_ns\":%u,\"lat_bus_ns_fit\":%.6g,"
		"\"lat_rc_ns\":%u,\"lat_mem_ns\":%u,\"link_gbps\":%u,"
		"\"link_gbps_fit\":%.4g,\"lat_req_ns\":%u,"
		"\"lat_req_ns_fit\":%.6g,"
		"\"device_ordering\":\"%s\",\"model_order\":\"%s\"",
		(unsigned long long)f->rtt_ns,
		(unsigned long long)f->round64_ns,
		(unsigned long long)f->round4k_ns, f->rounds, BU_FIT_N,
		f->lat_bus_ns, f->lat_bus_ns_fit, f->lat_rc_ns, f->lat_mem_ns,
		f->link_gbps, f->link_gbps_fit, f->lat_req_ns,
		f->lat_req_ns_fit, device_ordering, order_names[order]);
	if (o->json)
		return;
	printf("calibration: 64 B get alone %.1f us; %u x 64 B %.1f us; "
	       "%u x 4 KiB %.1f us (medians of %u rounds of each, in "
	       "turn)\n",
	       (double)f->rtt_ns / 1e3, BU_FIT_N,
	       (double)f->round64_ns / 1e3, BU_FIT_N,
	       (double)f->round4k_ns / 1e3, f->rounds);
	printf("model: one-way bus %u ns, RC %u ns, memory %u ns, link %u "
	       "Gb/s, %u ns per request; acquire ordered by the %s here, "
	       "so %s reads in the model\n", f->lat_bus_ns, f->lat_rc_ns,
	       f->lat_mem_ns, f->link_gbps, f->lat_req_ns, device_ordering,
	       order_names[order]);
	if (f->link_gbps_fit < 1)
		printf("model: the link measured %.3f Gb/s; the model's "
		       "slowest is 1 Gb/s, so big reads run faster there\n",
		       f->link_gbps_fit);
	if (f->lat_bus_ns_fit > f->lat_bus_ns + 0.5 ||
	    f->lat_req_ns_fit > f->lat_req_ns + 0.5)
		printf("model: the fit asked for a bus of %.0f ns and %.0f ns "
		       "per request; the model's longest is 1 ms, so it runs "
		       "faster than the link\n", f->lat_bus_ns_fit,
		       f->lat_req_ns_fit);
}

static void print_sides(const struct opts *o)
{
	if (!o->json) {
		bu_rule();
		printf(" %-7s %-12s %3s %5s %12s %12s %8s %10s %10s\n",
		       "#bytes", "proto", "thr", "batch", "device Mg/s",
		       "model Mg/s", "model/dev", "p50 dev us",
		       "p50 mod us");
		bu_rule();
	}
	/* the records compare with the device: name its backend */
	ba_set_backend(&ba, dev_backend);
	if (nkept[0] != nkept[1])
		ba_err(&ba, "--calibrate: %u cells on the device, "
		       "%u on the model", nkept[0], nkept[1]);
	for (uint32_t i = 0; i < nkept[0] && i < nkept[1]; i++) {
		const struct kept *d = &kept[0][i], *m = &kept[1][i];
		double ratio = d->mops > 0 ? m->mops / d->mops : 0;

		/* both runs go size, threads, batch, protocol: same order */
		if (d->proto != m->proto || d->size != m->size ||
		    d->threads != m->threads || d->batch != m->batch) {
			ba_err(&ba, "--calibrate: cell %u differs "
			       "between the runs", i);
			continue;
		}
		ba_json(&ba, "\"calibration\":\"cell\",\"proto\":\"%s\","
			"\"size\":%u,\"threads\":%u,\"batch\":%u,"
			"\"device_mops\":%.6g,\"model_mops\":%.6g,"
			"\"model_over_device\":%.4g,\"device_p50_us\":%.6g,"
			"\"model_p50_us\":%.6g,\"device_gets\":%llu,"
			"\"model_gets\":%llu,\"device_torn\":%llu,"
			"\"model_torn\":%llu",
			oms_kvs_proto_name(d->proto), d->size, d->threads,
			d->batch, d->mops, m->mops, ratio, d->p50_us,
			m->p50_us, (unsigned long long)d->gets,
			(unsigned long long)m->gets,
			(unsigned long long)d->torn,
			(unsigned long long)m->torn);
		if (!o->json)
			printf(" %-7u %-12s %3u %5u %12.4f %12.4f %7.2fx "
			       "%10.1f %10.1f\n", d->size,
			       oms_kvs_proto_name(d->proto), d->threads,
			       d->batch, d->mops, m->mops, ratio, d->p50_us,
			       m->p50_us);
	}
	if (!o->json)
		bu_rule();
}

/*
 * The cells on the device at @o->host, then the same cells on the
 * emulated device in this process with the model fitted to that link, in
 * wall time: the model's prediction beside what the device did.
 */
static int run_calibrate(const struct opts *o)
{
	struct bu_link_fit f;
	struct opts m = *o;
	char dev_ordering[32];
	uint32_t items = 0;
	int fail;

	if (fit_link(o, o->host, &f, &items))
		return 1;
	keep_side = 0;
	fail = run_clients(o, o->host);
	if (fail)
		return fail;
	snprintf(dev_ordering, sizeof(dev_ordering), "%s", ordering);
	m.mode = M_LOCAL;
	m.backend = OMS_BACKEND_EMU;
	m.bind = NULL;
	m.writers = 0;
	m.items = items;	/* the device's tables, key for key */
	m.scale = 1;
	m.lat_bus_ns = f.lat_bus_ns;
	m.lat_rc_ns = f.lat_rc_ns;
	m.lat_mem_ns = f.lat_mem_ns;
	m.link_gbps = f.link_gbps;
	m.nic_req_ns = f.lat_req_ns;
	/* the device's acquire reads: the source's fenced READ per line is
	 * the NIC mode; the agent's, a line after the other at the
	 * destination, is RC */
	m.order = strcmp(dev_ordering, "agent") ? OMS_ORDER_NIC :
		  OMS_ORDER_RC;
	print_fit(o, &f, dev_ordering, m.order);
	keep_side = 1;
	fail = run_local(&m);
	keep_side = -1;
	if (!fail)
		print_sides(o);
	return fail;
}

static int run(const struct opts *o)
{
	switch (o->mode) {
	case M_SERVER:
		return run_server(o);
	case M_CLIENT:
		return o->calibrate ? run_calibrate(o) :
		       run_clients(o, o->host);
	default:
		return run_local(o);
	}
}

/* --local's options of the emulated device and its latency model: taken
 * only where they apply. */
static int local_model_flags(void)
{
	static const char *const emu_only[] = {
		"scale", "hosts", "order", "nic-req-ns", "cpu-charge",
		"no-cpu-charge", NULL,
	};
	static const char *const model_only[] = {
		"nic-req-ns", "cpu-charge", "no-cpu-charge", NULL,
	};
	int r = ba_only_if(&ba, emu_only, bu_backend_is_emu(args.backend),
			   BU_EMU_ONLY);

	return r != BA_GO_ON ? r : ba_only_if(&ba, model_only, args.scale != 0,
					      "is the latency model's, and "
					      "--scale 0 turns the model off");
}

int main(int argc, char **argv)
{
	int r;

	for (uint32_t p = 0; p < OMS_KVS_NPROTO; p++)
		proto_names[p] = oms_kvs_proto_name(p);
	r = ba_parse(&ba, argc, argv);
	if (r != BA_GO_ON)
		return r;
	settle(&args);
	r = timeout_from_env(&args);
	if (r != BA_GO_ON)
		return r;
	r = ba_rdma_apply(&ba, &rdma, bu_backend_is_emu(args.backend));
	if (r != BA_GO_ON)
		return r;
	r = local_model_flags();
	if (r != BA_GO_ON)
		return r;
	if (args.calibrate && args.read_pct < 100)
		return ba_fail(&ba, "--calibrate compares gets: --read-pct "
			       "must stay 100");
	if (args.calibrate && args.hist)
		return ba_fail(&ba, "--hist with --calibrate would mix the "
			       "device's and the model's histograms");
	if (args.calibrate &&
	    args.nsizes * args.nthr * args.nbatch *
	    (uint32_t)__builtin_popcount(args.protos) > MAX_KEPT)
		return ba_fail(&ba, "--calibrate compares at most %u cells "
			       "(sizes x --threads x --batch x --proto)",
			       MAX_KEPT);
	if (ba_peer_ready(&ba, args.host, args.backend))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	if (args.hist && args.mode != M_SERVER) {
		hist_file = fopen(args.hist, "w");
		if (!hist_file) {
			/* not the command line's fault: a failed run */
			ba_err(&ba, "--hist %s: %s", args.hist,
			       strerror(errno));
			return 1;
		}
		fprintf(hist_file, "# proto bytes latency_us gets\n");
	}
	r = run(&args);
	if (hist_file && fclose(hist_file) && !r)
		r = 1;
	return ba_close(&ba) && !r ? 1 : r;
}
