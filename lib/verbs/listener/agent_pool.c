// SPDX-License-Identifier: MIT
/*
 * A listener's destination agent on several cores (docs/dest-agent.md,
 * "Threads").  OMS_AGENT_THREADS serving threads (default: one per CPU
 * of the NIC's NUMA node), each with a struct va_srv of its own: its
 * connections, its completion channel and queues, its core.  A
 * connection is served by one thread from accept to close, so its
 * stream's order is kept by the one thread that owns it; connections
 * share nothing that needs ordering across threads (RC orders a QP, not
 * a pair of QPs; the hold reads this process's puts, which any thread
 * may read).
 *
 * Who does what.  The listener's thread does the connection manager's
 * work: it picks a thread for a new connection, maps and registers the
 * connection's memory, and at close destroys the QP and frees the
 * memory, all without the serving thread's lock; it takes the lock only
 * to put a connection into a thread's tables or take it out.  A serving
 * thread holds its lock while it serves a round and drops it while it
 * sleeps in poll(), so the listener waits at most one round.  A thread
 * that closes a connection on its own (a stall, a broken protocol, a
 * failed probe) tells the listener through a pipe, which takes it apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs/listener/listener_int.h"

#define VA_POOL_MAX	64	/* serving threads per listener */

struct va_worker {
	struct va_pool *pool;
	struct va_srv *s;
	pthread_t thread;
	pthread_mutex_t mu;
	int wake[2];		/* pipe: its connections changed, or stop */
	int stop;		/* under mu */
	uint32_t nconn;		/* under mu */
	uint64_t broken_seen;	/* vb_agent_broken() last told */
	int cpu;		/* the CPU it runs on, or -1 */
	uint64_t cpu_ns;	/* its CPU time, at its end */
};

struct va_pool {
	struct va_worker w[VA_POOL_MAX];
	uint32_t n, started;
	uint32_t conns_max;	/* OMS_AGENT_CONNS */
	uint32_t peer_max;	/* of which one node's: three in four */
	int note[2];		/* pipe: a thread closed a connection */
	uint32_t rr;		/* where the next tie-break starts */
};

/* A setting @name of 1..@max, @def when unset; -EINVAL, said, else. */
static long setting(const char *name, long def, long max)
{
	const char *e = getenv(name);
	char *end;
	long v;

	if (!e || !*e)
		return def;
	errno = 0;
	v = strtol(e, &end, 10);
	if (errno || *end || v < 1 || v > max) {
		fprintf(stderr, "liboms: agent: %s=%s: not a number 1..%ld\n",
			name, e, max);
		return -EINVAL;
	}
	return v;
}

/*
 * OMS_AGENT_THREADS: 1..VA_POOL_MAX, or unset for the CPUs of the NIC's
 * node (of this process's when the node is not known); @cpus gets those
 * CPUs.  -EINVAL for anything else, said.
 */
static int threads_wanted(struct vb_ctx *vc, int *cpus, uint32_t *ncpus)
{
	int node = vb_numa_node(vc);
	cpu_set_t set;

	*ncpus = 0;
	if (node >= 0 && numa_available() >= 0) {
		struct bitmask *bm = numa_allocate_cpumask();

		if (bm && !numa_node_to_cpus(node, bm))
			for (unsigned int c = 0; c < bm->size &&
			     *ncpus < VA_POOL_MAX; c++)
				if (numa_bitmask_isbitset(bm, c))
					cpus[(*ncpus)++] = (int)c;
		if (bm)
			numa_bitmask_free(bm);
	}
	if (!*ncpus && !sched_getaffinity(0, sizeof(set), &set))
		for (int c = 0; c < CPU_SETSIZE && *ncpus < VA_POOL_MAX; c++)
			if (CPU_ISSET(c, &set))
				cpus[(*ncpus)++] = c;
	return (int)setting("OMS_AGENT_THREADS", *ncpus ? (long)*ncpus : 1,
			    VA_POOL_MAX);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void poke(int fd)
{
	char b = 1;

	/* a full pipe already says it */
	if (write(fd, &b, 1) < 0 && errno != EAGAIN)
		fprintf(stderr, "liboms: agent: wake-up lost: %s\n",
			strerror(errno));
}

static void empty_pipe(int fd)
{
	char b[64];

	while (read(fd, b, sizeof(b)) > 0)
		;
}

/* One round of @w, under its lock: what woke it, served. */
static void serve(struct va_worker *w, const struct pollfd *pfd, int n)
{
	uint64_t broken;
	int err = 0;

	if (pfd[0].revents)
		err = vb_agent_service(w->s);
	else if (n == 0)
		err = vb_agent_tick(w->s);
	if (err)
		fprintf(stderr, "liboms: agent: its completion queue failed\n");
	broken = vb_agent_broken(w->s);
	if (broken != w->broken_seen) {
		w->broken_seen = broken;
		poke(w->pool->note[1]);
	}
}

static void *worker_main(void *arg)
{
	struct va_worker *w = arg;

	if (w->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct pollfd pfd[2] = {
			{ .fd = vb_agent_fd(w->s), .events = POLLIN },
			{ .fd = w->wake[0], .events = POLLIN },
		};
		int ms = vb_agent_poll_ms(w->s), n;

		pthread_mutex_unlock(&w->mu);
		n = poll(pfd, 2, ms);
		if (n > 0 && pfd[1].revents)
			empty_pipe(w->wake[0]);
		if (n < 0 && errno != EINTR) {
			/* poll() fails only for want of memory: look again
			 * in a while rather than leave its connections */
			fprintf(stderr, "liboms: agent: poll: %s\n",
				strerror(errno));
			usleep(10000);
		}
		pthread_mutex_lock(&w->mu);
		if (w->stop)
			break;
		serve(w, pfd, n < 0 ? 1 : n);
	}
	pthread_mutex_unlock(&w->mu);
	w->cpu_ns = thread_cpu_ns();
	return NULL;
}

static int pipe_nb(int fd[2])
{
	return pipe2(fd, O_CLOEXEC | O_NONBLOCK) ? vb_errno(-EMFILE) : 0;
}

static int worker_start(struct va_pool *p, struct va_worker *w,
			struct vb_ctx *vc, const struct oms_be_region *served)
{
	int err;

	w->pool = p;
	w->wake[0] = w->wake[1] = -1;
	err = vb_agent_create(vc, served, &w->s);
	if (err)
		return err;
	err = pipe_nb(w->wake);
	if (err)
		goto err_srv;
	pthread_mutex_init(&w->mu, NULL);
	err = -pthread_create(&w->thread, NULL, worker_main, w);
	if (err)
		goto err_pipe;
	return 0;

err_pipe:
	pthread_mutex_destroy(&w->mu);
	close(w->wake[0]);
	close(w->wake[1]);
err_srv:
	vb_agent_destroy(w->s);
	return err;
}

static void worker_join(struct va_worker *w)
{
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_mutex_unlock(&w->mu);
	poke(w->wake[1]);
	pthread_join(w->thread, NULL);
}

static void worker_free(struct va_worker *w)
{
	pthread_mutex_destroy(&w->mu);
	close(w->wake[0]);
	close(w->wake[1]);
	vb_agent_destroy(w->s);
}

static void report(const struct va_pool *p);

int va_pool_create(struct vb_ctx *vc, const struct oms_be_region *served,
		   struct va_pool **out)
{
	int cpus[VA_POOL_MAX];
	uint32_t ncpus;
	int n = threads_wanted(vc, cpus, &ncpus), err;
	long conns = setting("OMS_AGENT_CONNS", VB_AGENT_CONNS_MAX,
			     VB_AGENT_CONNS_MAX);
	struct va_pool *p;

	if (n < 0)
		return n;
	if (conns < 0)
		return (int)conns;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->n = (uint32_t)n;
	p->conns_max = (uint32_t)conns;
	p->peer_max = p->conns_max - p->conns_max / 4;
	err = pipe_nb(p->note);
	if (err)
		goto err_free;
	for (uint32_t i = 0; i < p->n; i++) {
		p->w[i].cpu = ncpus ? cpus[i % ncpus] : -1;
		err = worker_start(p, &p->w[i], vc, served);
		if (err)
			goto err_stop;
		p->started++;
	}
	*out = p;
	return 0;

err_stop:
	while (p->started) {
		worker_join(&p->w[--p->started]);
		worker_free(&p->w[p->started]);
	}
	close(p->note[0]);
	close(p->note[1]);
err_free:
	free(p);
	return err;
}

/* Every connection must be closed (va_pool_close()) first.  The report
 * (OMS_AGENT_STATS=1) is made between the threads' end and their state's. */
void va_pool_destroy(struct va_pool *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->started; i++)
		worker_join(&p->w[i]);
	report(p);
	for (uint32_t i = 0; i < p->started; i++)
		worker_free(&p->w[i]);
	close(p->note[0]);
	close(p->note[1]);
	free(p);
}

/* Readable when a serving thread closed a connection on its own. */
int va_pool_fd(struct va_pool *p)
{
	return p->note[0];
}

void va_pool_clear(struct va_pool *p)
{
	empty_pipe(p->note[0]);
}

static struct va_worker *worker_of(struct va_pool *p,
				   const struct va_conn *ac)
{
	struct va_srv *s = vb_agent_conn_srv(ac);

	for (uint32_t i = 0; i < p->n; i++)
		if (p->w[i].s == s)
			return &p->w[i];
	return NULL;
}

/* The threads by their connections, fewest first; ties from p->rr on, so
 * that an idle pool deals connections out in turn. */
static void by_load(struct va_pool *p, uint32_t *order)
{
	uint32_t load[VA_POOL_MAX];

	for (uint32_t k = 0; k < p->n; k++) {
		struct va_worker *w = &p->w[(p->rr + k) % p->n];

		order[k] = (p->rr + k) % p->n;
		pthread_mutex_lock(&w->mu);
		load[k] = w->nconn;
		pthread_mutex_unlock(&w->mu);
	}
	for (uint32_t i = 1; i < p->n; i++)	/* stable: ties keep turn */
		for (uint32_t j = i; j && load[j] < load[j - 1]; j--) {
			uint32_t t = load[j];

			load[j] = load[j - 1];
			load[j - 1] = t;
			t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	p->rr = (p->rr + 1) % p->n;
}

/*
 * The listener's slots (OMS_AGENT_CONNS, three in four for one node),
 * counted over every thread: *@sum gets the counts, and with @own (the
 * node holds its share) the idlest connection that may be taken, over
 * the threads, in *@vw's.
 */
static void census(struct va_pool *p, uint32_t peer, int own,
		   struct vb_agent_census *sum, struct va_worker **vw)
{
	*sum = (struct vb_agent_census){ 0 };
	*vw = NULL;
	for (uint32_t i = 0; i < p->n; i++) {
		struct va_worker *w = &p->w[i];
		struct vb_agent_census c;

		pthread_mutex_lock(&w->mu);
		vb_agent_census(w->s, peer, own, &c);
		pthread_mutex_unlock(&w->mu);
		sum->used += c.used;
		sum->mine += c.mine;
		sum->limit_ns = c.limit_ns;
		if (c.victim && c.idle_ns > sum->idle_ns) {
			sum->idle_ns = c.idle_ns;
			sum->victim = c.victim;
			sum->victim_failed = c.victim_failed;
			*vw = w;
		}
	}
}

/*
 * A thread for a requester on @id's node: the least loaded while the
 * listener has a slot for the node, else the one whose connection idle
 * longest may be taken (evicted through @evict, the listener's: it closes
 * the connection through va_pool_close()).  NULL: no slot, none idle;
 * said.
 */
static struct va_worker *pick(struct va_pool *p, struct rdma_cm_id *id,
			      void (*evict)(void *, struct va_conn *),
			      void *arg)
{
	uint32_t peer = (uint32_t)vb_peer_id((struct sockaddr *)
					     &id->route.addr.dst_addr);
	uint32_t order[VA_POOL_MAX];
	struct vb_agent_census c;
	struct va_worker *vw;

	census(p, peer, 0, &c, &vw);
	if (c.used < p->conns_max && c.mine < p->peer_max) {
		by_load(p, order);
		return &p->w[order[0]];
	}
	if (c.mine >= p->peer_max)
		census(p, peer, 1, &c, &vw);
	if (!vw) {
		fprintf(stderr, "liboms: agent: no slot for a requester (%u of "
			"%u in use, %u by its node, none idle for %llu ms)\n",
			c.used, p->conns_max, c.mine,
			(unsigned long long)(c.limit_ns / 1000000));
		return NULL;
	}
	if (!c.victim_failed)
		fprintf(stderr, "liboms: agent: closed a connection idle for "
			"%llu ms to make room for another\n",
			(unsigned long long)(c.idle_ns / 1000000));
	evict(arg, c.victim);
	return vw;
}

/*
 * A connection whose hello (@h) asked for the agent: a thread for it, its
 * memory, then its place in that thread and its QP on @id; *@blk says
 * what to tell the requester.  -EUSERS: no slot (the caller answers
 * without the agent), -ENOMEM, -EIO.
 */
int va_pool_open(struct va_pool *p, struct rdma_cm_id *id,
		 const struct oms_vw_hello *h, struct va_conn **out,
		 struct oms_vw_agent *blk,
		 void (*evict)(void *arg, struct va_conn *victim), void *arg)
{
	struct va_worker *w = pick(p, id, evict, arg);
	uint32_t order[VA_POOL_MAX];
	struct va_conn *ac;
	int err;

	if (!w)
		return -EUSERS;
	err = vb_agent_conn_prepare(w->s, h, &ac);
	if (err)
		return err;
	by_load(p, order);
	/* the thread picked, else (its queues full) the others in turn */
	for (uint32_t k = 0; k <= p->n; k++) {
		if (k)
			w = &p->w[order[k - 1]];
		pthread_mutex_lock(&w->mu);
		err = vb_agent_conn_install(ac, w->s, id, blk);
		if (!err)
			w->nconn++;
		pthread_mutex_unlock(&w->mu);
		if (err != -EUSERS)
			break;
	}
	if (err) {
		vb_agent_conn_discard(ac);
		return err;
	}
	poke(w->wake[1]);	/* its sleep may now end sooner */
	*out = ac;
	return 0;
}

/* Take @ac out of its thread, destroy @id's QP, free @ac's memory. */
void va_pool_close(struct va_pool *p, struct va_conn *ac,
		   struct rdma_cm_id *id)
{
	struct va_worker *w = worker_of(p, ac);

	pthread_mutex_lock(&w->mu);
	vb_agent_conn_detach(ac);
	w->nconn--;
	pthread_mutex_unlock(&w->mu);
	if (id->qp) {
		rdma_destroy_qp(id);
		pthread_mutex_lock(&w->mu);
		vb_agent_qp_gone(w->s);
		pthread_mutex_unlock(&w->mu);
		poke(w->wake[1]);	/* to find its queues' size again */
	}
	vb_agent_conn_discard(ac);
}

/* Did @ac's thread close it (vb_agent_conn_failed())? */
int va_pool_failed(struct va_pool *p, struct va_conn *ac)
{
	struct va_worker *w = worker_of(p, ac);
	int failed;

	pthread_mutex_lock(&w->mu);
	failed = vb_agent_conn_failed(ac);
	pthread_mutex_unlock(&w->mu);
	return failed;
}

/* OMS_AGENT_STATS=1: one line at close, what the agent did and cost,
 * after its threads stopped. */
static void report(const struct va_pool *p)
{
	struct vb_agent_stats st = { 0 };
	uint64_t cpu_ns = 0;
	char per[VA_POOL_MAX * 12] = "";
	const char *e = getenv("OMS_AGENT_STATS");

	if (!e || strcmp(e, "1"))
		return;
	for (uint32_t i = 0; i < p->started; i++) {
		size_t len = strlen(per);

		vb_agent_stats_add(p->w[i].s, &st);
		cpu_ns += p->w[i].cpu_ns;
		snprintf(per + len, sizeof(per) - len, "%s%.1f",
			 i ? " " : "", (double)p->w[i].cpu_ns / 1e6);
	}
	fprintf(stderr, "liboms: agent: %llu doorbells, %llu requests, %llu "
		"answers in %llu chains, %llu refused, %llu key drops, %llu "
		"probes answered, %llu failed; thread CPU %.3f ms, %.2f us per "
		"request; %u threads (ms each: %s); registered at most %.1f "
		"MiB for %llu connections; completion queues at most %llu "
		"entries, %llu at the end; %llu turns after waiting behind "
		"other connections, at most %llu descriptors (the round-robin "
		"bound then %llu), %llu turns past the bound\n",
		(unsigned long long)st.doorbells,
		(unsigned long long)st.descs, (unsigned long long)st.answers,
		(unsigned long long)st.chains,
		(unsigned long long)st.refused,
		(unsigned long long)st.key_drops,
		(unsigned long long)st.probes,
		(unsigned long long)st.probe_fails, (double)cpu_ns / 1e6,
		st.descs ? (double)cpu_ns / 1e3 / (double)st.descs : 0.0,
		p->started, per, (double)st.reg_peak / 1048576.0,
		(unsigned long long)st.conns_at_peak,
		(unsigned long long)st.cqe_peak,
		(unsigned long long)st.cqe_end,
		(unsigned long long)st.turns_waited,
		(unsigned long long)st.behind_max,
		(unsigned long long)st.behind_bound,
		(unsigned long long)st.behind_past);
}
