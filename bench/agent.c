// SPDX-License-Identifier: MIT
/*
 * agent: the destination agent's own cost on this CPU, no verbs and no
 * guest.  A thread hands encoded descriptors to the agent's core
 * (lib/agent/agent.h) as a ring would, polls its completions in batches,
 * and lands gets' bytes into a local buffer as the verbs server would
 * RDMA-WRITE them: requests per second per core, and ns per request.
 *
 * Cells: puts, relaxed gets and acquire gets of each size, unnumbered or
 * as one DEST_SEQ stream (every request numbered, through the reorder
 * buffer and the stop rule); --no-order adds the control of each numbered
 * cell, the agent told to ignore numbers (OMS_AGENT_F_NO_ORDER), so that
 * ordering's share is a ratio of one run.  --check picks the descriptors'
 * format (lib/agent/agent_desc.h): CRC32C, FNV-1a or both, each cell run
 * in each format one after the other, so that the check's share is a
 * ratio of one run too.
 *
 * Where a request's time goes (ns per request): "decode" times
 * oms_ad_decode() alone over the same descriptors, "memory" the copies
 * alone (a put's payload into the region, a get's bytes out and into the
 * landing buffer), "answer" the time inside oms_agent_poll(); "rest" is
 * the remainder of the total: validation, the reorder buffer and stop
 * rule, bookkeeping.  Decode and memory are measured apart, so they are
 * what those steps cost in a tight loop of their own.
 *
 * --threads N: the agent serving on several cores.  The core is not
 * thread-safe (one caller per struct oms_agent), so each thread owns an
 * agent of its own with its own region, landing and staging buffers and
 * descriptors, as a listener's serving threads would each own a set of
 * connections: nothing one thread writes is another's.  Each prepares its
 * descriptors and its agent, the threads start together on a barrier and
 * each times its own run of -n requests; the cell's rate is all threads'
 * requests over the longest thread's time, its ns and parts the threads'
 * mean.  Thread i is pinned to the i-th CPU this process may run on
 * (modulo their number).  With N > 1 every cell also runs on 1 thread in
 * the same invocation, just before, and the N-thread row gives its rate
 * as a ratio of that one ("speedup"): these machines are noisy, so the
 * scaling too is a ratio of one run.  With --threads 1 (the default) the
 * table and the records are those of a run without the flag.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "bench_util.h"
#include "oms.h"
#include "agent/agent.h"
#include "util/barrier.h"

#define REGION		(1u << 20)
#define LKEY		0x77u
#define RKEY		0x11u
#define WINDOW		256u
#define STAGE_SLOTS	64u
#define NDESC		65536u	/* one full turn of the 16-bit numbers */
#define POLL_EVERY	64u
#define MAX_SIZES	8
#define MAX_REQ		4096u	/* bytes of a request here */
#define MAX_THREADS	64u
/* a get lands at its offset + LBASE (an address is never 0) */
#define LBASE		64u
#define LANDING		(REGION + LBASE)

enum cell_op { C_PUT, C_GET, C_GET_ACQ, C_NOPS };
static const char *const op_names[] = { "put", "get", "get_acquire" };
/* --check's names, bit i each, and the format each stands for */
static const char *const check_names[] = { "crc32c", "fnv1a", NULL };
static const enum oms_ad_fmt check_fmts[] = {
	OMS_AD_FMT_CRC32C, OMS_AD_FMT_FNV1A,
};

struct cell {
	enum cell_op op;
	uint32_t size;
	int seq, no_order;
	enum oms_ad_fmt fmt;
};

struct parts {
	double total, decode, memory, answer;
};

/*
 * What one thread owns: its agent's buffers, its descriptors, and what its
 * run measured.  Aligned so that no two threads' results share a line.
 */
struct worker {
	uint8_t *region;		/* REGION bytes the agent serves */
	uint8_t *landing;		/* LANDING bytes gets land in */
	uint8_t *stage;			/* STAGE_SLOTS * MAX_REQ bytes */
	uint8_t (*descs)[OMS_AD_LEN];	/* NDESC encoded descriptors */
	int cpu;			/* to pin to; -1: none */
	pthread_t tid;
	/* the run it is given */
	const struct cell *c;
	uint64_t iters;
	pthread_barrier_t *start;
	pthread_mutex_t *gate;
	const int *stop;	/* set: a thread could not be made */
	/* what it measured */
	struct parts p;
	uint64_t ns;			/* its timed run, wall */
	int err;			/* 0 or -errno */
	int pin_err;			/* 0 or the setaffinity error */
} __attribute__((aligned(64)));

/* One cell's figures: the threads' mean parts, their aggregate rate. */
struct result {
	struct parts p;
	double mreqs;
	double speedup;		/* mreqs / the 1-thread run's */
	uint32_t threads;	/* 0: --threads 1, today's rows and records */
	uint32_t cpus;
};

static int land(void *arg, uint32_t conn, uint64_t laddr, uint32_t lrkey,
		const void *src, uint32_t len)
{
	struct worker *w = arg;

	(void)conn;
	if (lrkey != LKEY || laddr > LANDING || len > LANDING - laddr)
		return -EACCES;
	memcpy(w->landing + laddr, src, len);
	return 0;
}

/* The descriptors of a cell: request i at offset (i * size) % REGION. */
static int fill_descs(struct worker *w, const struct cell *c)
{
	uint32_t per = REGION / c->size;

	for (uint32_t i = 0; i < NDESC; i++) {
		struct oms_ad_desc d = {
			.key = RKEY, .len = c->size,
			.off = (uint64_t)(i % per) * c->size, .tag = i,
		};

		if (c->op == C_PUT) {
			d.op = OMS_AD_PUT;
			d.stage = i % STAGE_SLOTS;
		} else {
			d.op = OMS_AD_GET;
			d.lrkey = LKEY;
			d.laddr = d.off + LBASE;
			if (c->op == C_GET_ACQ)
				d.flags = OMS_AD_F_ACQUIRE;
		}
		if (c->seq) {
			d.flags |= OMS_AD_F_SEQ;
			d.seq = (uint16_t)i;
		}
		if (oms_ad_encode(w->descs[i], &d, c->fmt))
			return -EINVAL;
	}
	return 0;
}

/* Poll every completion there is; the time inside in *@ns. */
static int drain_cpls(struct oms_agent *ag, uint64_t *ns, uint64_t *done)
{
	struct oms_agent_cpl cpl[256];
	uint64_t t0 = bu_now_ns();
	int n, got = 0;

	while ((n = oms_agent_poll(ag, cpl, 256)) > 0) {
		for (int i = 0; i < n; i++)
			if (cpl[i].status)
				return cpl[i].status;
		got += n;
	}
	*ns += bu_now_ns() - t0;
	*done += (uint64_t)got;
	return 0;
}

/* A fresh agent for @c serving @w's region, and its one connection. */
static int agent_open(struct worker *w, const struct cell *c,
		      struct oms_agent **ag, uint32_t *conn)
{
	struct oms_agent_attr a = { .flags = c->no_order ?
				    OMS_AGENT_F_NO_ORDER : 0 };
	struct oms_agent_ops ops = { .land = land, .arg = w };
	struct oms_agent_conn_attr ca = {
		.nstreams = 1, .window = WINDOW, .stage_slots = STAGE_SLOTS,
		.stage_len = MAX_REQ, .stage = w->stage, .fmt = c->fmt,
	};
	int err = oms_agent_create(&a, &ops, ag);

	if (err)
		return err;
	err = oms_agent_region_add(*ag, w->region, REGION, RKEY,
				   OMS_ACCESS_ALL);
	if (!err)
		err = oms_agent_conn_open(*ag, &ca, conn);
	return err;
}

/* @w's requests through @ag, timed: total and answer ns, and w->ns. */
static int run_agent(struct worker *w, struct oms_agent *ag, uint32_t conn)
{
	uint64_t n = w->iters, t0, answer = 0, done = 0;
	int err = 0;

	t0 = bu_now_ns();
	for (uint64_t i = 0; i < n && !err; i++) {
		err = oms_agent_submit(ag, conn, w->descs[i % NDESC]);
		if (err == -EAGAIN) {
			err = drain_cpls(ag, &answer, &done);
			i--;	/* nothing changed: again */
			continue;
		}
		if (!err && i % POLL_EVERY == POLL_EVERY - 1)
			err = drain_cpls(ag, &answer, &done);
	}
	if (!err)
		err = drain_cpls(ag, &answer, &done);
	w->ns = bu_now_ns() - t0;
	w->p.total = (double)w->ns / (double)n;
	w->p.answer = (double)answer / (double)n;
	if (!err && done != n)
		err = -EIO;
	return err;
}

/* The copies alone, and decode alone, over the same requests. */
static void run_parts(struct worker *w, const struct cell *c, uint64_t n)
{
	struct oms_ad_desc d;
	uint64_t t0, sink = 0;

	t0 = bu_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		sink += (uint64_t)oms_ad_decode(w->descs[i % NDESC], &d,
						c->fmt);
		sink += d.off;
	}
	w->p.decode = (double)(bu_now_ns() - t0) / (double)n;
	t0 = bu_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = (i % (REGION / c->size)) * c->size;

		if (c->op == C_PUT)
			memcpy(w->region + off, w->stage + (i % STAGE_SLOTS) *
			       MAX_REQ, c->size);
		else
			memcpy(w->landing + off + LBASE, w->region + off,
			       c->size);
		oms_barrier_compiler();
	}
	w->p.memory = (double)(bu_now_ns() - t0) / (double)n;
	if (sink == 42)	/* keep the decode loop */
		fprintf(stderr, "\n");
}

/* Run on @cpu alone (-1: wherever); 0 or the error (not fatal). */
static int pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * One thread's part of a cell: prepare, then time its run once every
 * thread is ready, then its parts, again all at once so that each part is
 * timed under the same load as the run.  A thread that failed still meets
 * the others at the barrier, so that none waits for it forever.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct oms_agent *ag = NULL;
	uint32_t conn = 0;

	w->pin_err = pin_self(w->cpu);
	w->err = fill_descs(w, w->c);
	if (!w->err)
		w->err = agent_open(w, w->c, &ag, &conn);
	/* main holds the gate until every thread exists, or gives up */
	pthread_mutex_lock(w->gate);
	pthread_mutex_unlock(w->gate);
	if (*w->stop)
		goto out;
	pthread_barrier_wait(w->start);
	if (!w->err)
		w->err = run_agent(w, ag, conn);
	pthread_barrier_wait(w->start);
	if (!w->err)
		run_parts(w, w->c, w->iters);
out:
	if (ag)
		oms_agent_destroy(ag);
	return NULL;
}

/* @n threads' figures as one: mean parts, all requests over the longest
 * thread's time. */
static void sum_up(const struct worker *w, uint32_t n, struct result *r)
{
	uint64_t longest = 0;

	memset(&r->p, 0, sizeof(r->p));
	for (uint32_t i = 0; i < n; i++) {
		r->p.total += w[i].p.total / n;
		r->p.decode += w[i].p.decode / n;
		r->p.memory += w[i].p.memory / n;
		r->p.answer += w[i].p.answer / n;
		if (w[i].ns > longest)
			longest = w[i].ns;
	}
	r->mreqs = (double)w[0].iters * n * 1e3 / (double)(longest ?
							   longest : 1);
}

/* Start @n threads on @w[0..n) with the gate held; how many started. */
static uint32_t start_threads(struct worker *w, uint32_t n)
{
	uint32_t made;

	for (made = 0; made < n; made++)
		if (pthread_create(&w[made].tid, NULL, worker_main, &w[made]))
			break;
	return made;
}

/* Cell @c on @n threads at once, into @r.  0, or -errno: a thread's
 * error, or -EAGAIN when a thread could not be started. */
static int run_threads(struct worker *w, uint32_t n, const struct cell *c,
		       uint64_t iters, struct result *r)
{
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	pthread_barrier_t start;
	uint32_t made;
	int stop = 0, err = 0;

	if (pthread_barrier_init(&start, NULL, n))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		w[i].c = c;
		w[i].iters = iters;
		w[i].start = &start;
		w[i].gate = &gate;
		w[i].stop = &stop;
	}
	pthread_mutex_lock(&gate);
	made = start_threads(w, n);
	stop = made < n;	/* the barrier would wait for them forever */
	pthread_mutex_unlock(&gate);
	for (uint32_t i = 0; i < made; i++) {
		pthread_join(w[i].tid, NULL);
		if (!err)
			err = w[i].err;
	}
	pthread_barrier_destroy(&start);
	if (stop)
		return -EAGAIN;
	sum_up(w, n, r);
	return err;
}

/* What every cell of the invocation runs with. */
struct run {
	struct ba *ba;
	struct worker *w;	/* threads of them */
	uint32_t threads;	/* --threads */
	uint32_t cpus;		/* this process may run on */
	uint64_t iters;		/* per thread */
	int warned;		/* that a thread could not be pinned */
};

static void workers_free(struct worker *w, uint32_t n)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < n; i++) {
		free(w[i].region);
		free(w[i].landing);
		free(w[i].stage);
		free(w[i].descs);
	}
	free(w);
}

/* One worker's buffers, 64-byte aligned and zeroed; -ENOMEM. */
static int worker_bufs(struct worker *w)
{
	w->region = aligned_alloc(64, REGION);
	w->landing = aligned_alloc(64, LANDING);
	w->stage = aligned_alloc(64, STAGE_SLOTS * MAX_REQ);
	w->descs = aligned_alloc(64, (size_t)NDESC * OMS_AD_LEN);
	if (!w->region || !w->landing || !w->stage || !w->descs)
		return -ENOMEM;
	memset(w->region, 0, REGION);
	memset(w->landing, 0, LANDING);
	memset(w->stage, 0, STAGE_SLOTS * MAX_REQ);
	return 0;
}

/*
 * @n workers with their buffers, worker i to be pinned to the i-th CPU
 * this process may run on (modulo their number, in *@ncpus; 0 when the
 * mask cannot be read, and then none is pinned).  NULL when memory is
 * short.
 */
static struct worker *workers_alloc(uint32_t n, uint32_t *ncpus)
{
	struct worker *w = aligned_alloc(64, n * sizeof(*w));
	int cpu[MAX_THREADS];
	uint32_t listed = 0;
	cpu_set_t set;

	if (!w)
		return NULL;
	memset(w, 0, n * sizeof(*w));
	*ncpus = 0;
	if (!sched_getaffinity(0, sizeof(set), &set)) {
		*ncpus = (uint32_t)CPU_COUNT(&set);
		for (int i = 0; i < CPU_SETSIZE && listed < MAX_THREADS; i++)
			if (CPU_ISSET(i, &set))
				cpu[listed++] = i;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (worker_bufs(&w[i])) {
			workers_free(w, i + 1);
			return NULL;
		}
		w[i].cpu = listed ? cpu[i % listed] : -1;
	}
	return w;
}

/* A thread that runs wherever the scheduler puts it weakens the figures:
 * say so, once. */
static void warn_unpinned(struct run *r, uint32_t n)
{
	for (uint32_t i = 0; i < n && !r->warned; i++)
		if (r->w[i].pin_err) {
			fprintf(stderr, "%s: thread %u not pinned to CPU %d: "
				"%s\n", r->ba->prog, i, r->w[i].cpu,
				strerror(r->w[i].pin_err));
			r->warned = 1;
		}
}

/* The table's head: with --threads N > 1, also the thread count and the
 * rate as a ratio of 1 thread's. */
static void print_head(int on, uint32_t threads)
{
	bu_printf(on, "%s\n %-7s %-12s %-9s %-7s", BU_RULE, "#bytes", "op",
		  "numbers", "check");
	if (threads > 1)
		bu_printf(on, " %7s", "threads");
	bu_printf(on, " %9s %8s %8s %8s %8s %8s", "M req/s", "ns/req",
		  "decode", "memory", "answer", "rest");
	if (threads > 1)
		bu_printf(on, " %8s", "speedup");
	bu_printf(on, "\n%s\n", BU_RULE);
}

/* One cell's figures @r as a row or a JSON object; @f: its format's
 * index in check_names[]. */
static void report(struct run *run, const struct cell *c, uint32_t f,
		   const struct result *r)
{
	const char *num = !c->seq ? "none" :
			  c->no_order ? "ignored" : "dest_seq";
	double rest = r->p.total - r->p.decode - r->p.memory - r->p.answer;
	char thr[48] = "", sp[32] = "";
	int on = !run->ba->json;

	if (r->threads) {
		snprintf(thr, sizeof(thr), ",\"threads\":%u,\"cpus\":%u",
			 r->threads, r->cpus);
		snprintf(sp, sizeof(sp), ",\"speedup\":%.3f", r->speedup);
	}
	ba_json(run->ba, "\"op\":\"%s\",\"size\":%u,\"numbers\":\"%s\","
		"\"check\":\"%s\"%s,\"mreqs\":%.3f%s,\"ns_per_req\":%.2f,"
		"\"decode_ns\":%.2f,\"memory_ns\":%.2f,\"answer_ns\":%.2f,"
		"\"rest_ns\":%.2f,\"iters\":%llu",
		op_names[c->op], c->size, num, check_names[f], thr, r->mreqs,
		sp, r->p.total, r->p.decode, r->p.memory, r->p.answer, rest,
		(unsigned long long)run->iters);
	bu_printf(on, " %-7u %-12s %-9s %-7s", c->size, op_names[c->op], num,
		  check_names[f]);
	if (r->threads)
		bu_printf(on, " %7u", r->threads);
	bu_printf(on, " %9.2f %9.2f %8.2f %8.2f %8.2f %8.2f", r->mreqs,
		  r->p.total, r->p.decode, r->p.memory, r->p.answer, rest);
	if (r->threads)
		bu_printf(on, " %8.2f", r->speedup);
	bu_printf(on, "\n");
}

/*
 * One cell, measured and reported: on --threads threads, and with more
 * than one first on 1 thread, so that the ratio is of one run.  @f: its
 * format's index in check_names[].  0, or 1 when a request failed.
 */
static int run_cell(struct run *run, const struct cell *c, uint32_t f)
{
	uint32_t n = run->threads;
	/* .threads 0 keeps --threads 1's rows and records as they were */
	struct result one = { .threads = n > 1, .cpus = run->cpus,
			      .speedup = 1 };
	struct result many = { .threads = n, .cpus = run->cpus };
	int err = run_threads(run->w, 1, c, run->iters, &one);

	if (!err && n > 1)
		err = run_threads(run->w, n, c, run->iters, &many);
	warn_unpinned(run, n);
	if (err) {
		ba_err(run->ba, "%s %u B %s %s: %s", op_names[c->op], c->size,
		       !c->seq ? "none" : c->no_order ? "ignored" : "dest_seq",
		       check_names[f], strerror(-err));
		return 1;
	}
	report(run, c, f, &one);
	if (n > 1) {
		many.speedup = many.mreqs / one.mreqs;
		report(run, c, f, &many);
	}
	return 0;
}

/* Every cell: each size, op and numbering, in each format of @checks. */
static int run_all(struct run *run, const uint32_t *sizes, uint32_t nsizes,
		   int no_order, uint32_t checks)
{
	for (uint32_t s = 0; s < nsizes; s++)
		for (int op = 0; op < C_NOPS; op++)
			for (int k = 0; k < 2 + no_order; k++)
				for (uint32_t f = 0; f < 2; f++) {
					struct cell c = {
						.op = op, .size = sizes[s],
						.seq = k > 0, .no_order = k > 1,
						.fmt = check_fmts[f],
					};

					if ((checks & (1u << f)) &&
					    run_cell(run, &c, f))
						return 1;
				}
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t sizes[MAX_SIZES] = { 64, 256, 1024, 4096 }, nsizes = 4;
	uint32_t checks = 1;	/* crc32c */
	int no_order = 0;
	struct ba ba;
	struct run run = { .ba = &ba, .threads = 1, .iters = 2000000 };
	const struct ba_opt opts[] = {
		{ 's', "size", NULL, BA_SIZES, "SIZES",
		  "request bytes (comma list, 8..4096)", sizes,
		  .min = 8, .max = MAX_REQ, .step = 8,
		  .count = &nsizes, .max_items = MAX_SIZES,
		  .dflt = "64,256,1024,4096" },
		{ 'n', "iters", NULL, BA_UINT, "N",
		  "requests per cell and thread (perftest's iterations)",
		  &run.iters, .min = 1000, .max = 1ull << 36, .flags = BA_U64 },
		{ .long_name = "no-order", .type = BA_FLAG,
		  .help = "also each numbered cell with the agent ignoring "
		  "numbers (the control)", .dst = &no_order },
		{ 0, "check", NULL, BA_SET, "SET",
		  "descriptor formats, each cell in each (crc32c, fnv1a)",
		  &checks, .names = check_names, .dflt = "crc32c" },
		{ 0, "threads", NULL, BA_UINT, "N",
		  "threads, each with an agent of its own, started together; "
		  "above 1 each cell also runs on 1, for the ratio",
		  &run.threads, .min = 1, .max = MAX_THREADS },
	};
	int r;

	ba = (struct ba){
		.name = "agent", .opts = opts,
		.nopts = sizeof(opts) / sizeof(opts[0]),
		.about = "The destination agent's core on this CPU (or on "
			 "--threads CPUs, an agent each), through an "
			 "in-memory ring: requests per second and ns per "
			 "request by part.",
		.epilog = "Exit status: 0; 1 a request failed; 2 bad flags.",
	};
	r = ba_parse(&ba, argc, argv);
	if (r != BA_GO_ON)
		return r;
	ba_set_backend(&ba, "none");	/* the agent's core alone */
	run.w = workers_alloc(run.threads, &run.cpus);
	if (!run.w) {
		ba_err(&ba, "no memory for %u threads' buffers", run.threads);
		ba_close(&ba);
		return 1;
	}
	if (run.cpus && run.threads > run.cpus)
		fprintf(stderr, "%s: %u threads on %u CPUs: some share one\n",
			ba.prog, run.threads, run.cpus);
	print_head(!ba.json, run.threads);
	r = run_all(&run, sizes, nsizes, no_order, checks);
	if (!r)
		bu_printf(!ba.json, "%s\n", BU_RULE);
	workers_free(run.w, run.threads);
	return r ? r : ba_close(&ba);
}
