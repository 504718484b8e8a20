// SPDX-License-Identifier: MIT
/*
 * The emulated device's life.  A device is one fabric with its NICs and
 * root complexes.  Contexts that name none share the process's default
 * device, started by the first of them and stopped with the last; a
 * program may also make devices of its own (oms_emu_create(), object.c),
 * several at once.  Each device's thread is the "real
 * concurrent agent": it takes commands the initiators rang, executes them
 * against host memory under the device lock, runs the read engine and
 * returns completions.  Stop and freeze exist so tests can make the
 * device gone or hang it mid-run and prove that nothing on the initiator
 * side hangs.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/emu.h"

/* The default device: its pointer is the one piece of process state, so
 * that contexts naming no device meet on one fabric. */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct oms_emu *default_dev;

/*
 * One pass over every queue; returns how much work was done.  Under a
 * latency model a pass does what is due at the clock's time, and one
 * that found nothing to do moves the clock to the next event (clock.c),
 * as far as the threads that issue let it (initiator.c).
 */
static int dev_step(struct oms_emu *dev, int *pending)
{
	uint64_t horizon = EMU_NO_EVENT;
	int work = 0;

	*pending = 0;
	pthread_mutex_lock(&dev->lock);
	/* before the intake: what a thread rang before it waited is taken
	 * below, before the clock can pass it */
	if (dev->cfg.time_scale)
		horizon = emu_initiators_horizon(dev);
	for (uint32_t i = 0; i < dev->nq; i++)
		work += emu_intake(dev, dev->qlist[i]);
	if (dev->cfg.time_scale)
		work += emu_admit(dev);
	for (uint32_t i = 0; i < dev->nq; i++) {
		struct emu_queue *q = dev->qlist[i];

		/* Streams first: a head get is looked at before new gets
		 * can reuse its slot. */
		work += emu_seq_step(dev, q);
		work += emu_exec_pool(dev, q);
		/* Work waiting (chaos may pass it over): not idle. */
		*pending += q->npool || q->nacks || q->get_head != q->get_tail;
	}
	work += emu_reads_step(dev);
	for (uint32_t i = 0; i < dev->nq; i++)
		work += emu_deliver_acks(dev, dev->qlist[i]);
	if (!work && dev->cfg.time_scale && emu_clock_advance(dev, horizon)) {
		dev->admit_from++;
		work = 1;
	}
	pthread_mutex_unlock(&dev->lock);
	return work;
}

/* The longest the device sleeps under a model: while work waits for a
 * thread that issues (its look at those threads, the wall-clock floor),
 * and with nothing in flight (its heartbeat). */
#define KICK_PENDING_NS	200000l
#define KICK_IDLE_NS	500000l

static void *dev_thread(void *arg)
{
	struct oms_emu *dev = arg;
	unsigned idle = 0;

	while (!__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&dev->frozen, __ATOMIC_ACQUIRE)) {
			struct timespec ts = { 0, 100000 };

			/* Frozen: tell the freezer which freeze this thread
			 * has seen, from here where it does no step
			 * (emu_dev_freeze()). */
			__atomic_store_n(&dev->parked_gen,
					 __atomic_load_n(&dev->freeze_gen,
							 __ATOMIC_ACQUIRE),
					 __ATOMIC_RELEASE);
			nanosleep(&ts, NULL);
			continue;
		}
		uint32_t gen = emu_kick_gen(dev);
		int pending;

		__atomic_add_fetch(&dev->heartbeat, 1, __ATOMIC_RELEASE);
		if (dev_step(dev, &pending)) {
			idle = 0;
		} else if (dev->cfg.time_scale) {
			/* Under the model: wait for a doorbell or a thread's
			 * wait, the only events that give it work (kick.c) */
			emu_kick_wait(dev, gen, pending ? KICK_PENDING_NS :
						     KICK_IDLE_NS);
		} else if (pending) {
			/* Chaos is sitting on work: let the initiators run
			 * (the machine may have fewer cores than threads). */
			idle = 0;
			sched_yield();
		} else if (++idle > 2000) {
			/* Idle: back off to at most 0.5 ms between looks
			 * (far below any liveness timeout). */
			struct timespec ts = { 0, idle > 20000 ? 500000 : 20000 };

			nanosleep(&ts, NULL);
		} else if (idle > 16) {
			sched_yield();
		}
	}
	__atomic_store_n(&dev->gone, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void dev_free(struct oms_emu *dev)
{
	emu_initiators_fini(dev);
	emu_conn_fini(dev);
	emu_seq_fini(dev);
	emu_reads_fini(dev);
	for (unsigned n = 0; n < OMS_MAX_NODES; n++)
		oms_hold_destroy(&dev->hold[n]);
	pthread_mutex_destroy(&dev->listen_lock);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

/* The limits oms_emu_attr documents (the context attributes keep the
 * same ones for the default device). */
int emu_cfg_check(const struct emu_cfg *cfg)
{
	if (cfg->lat_bus_ns > 1000000 || cfg->lat_rc_ns > 1000000 ||
	    cfg->lat_mem_ns > 1000000 || cfg->lat_req_ns > 1000000 ||
	    cfg->time_scale > 1000000 || cfg->link_gbps == 0 ||
	    cfg->link_gbps > 10000 || cfg->read_order > OMS_ORDER_NIC ||
	    cfg->rlsq_entries == 0 || cfg->rlsq_entries > 4096 ||
	    (cfg->charge_cpu && !cfg->time_scale))
		return -EINVAL;
	return 0;
}

int emu_dev_create(const struct emu_cfg *cfg, struct oms_emu **out)
{
	struct oms_hold_config hc = {
		.ndest = OMS_MAX_NODES, .window = 65536, .gwindow = 65536,
		.max_held = 4096, .scope = OMS_HOLD_PER_DEST,
	};
	struct oms_emu *dev = calloc(1, sizeof(*dev));
	int err;

	if (!dev)
		return -ENOMEM;
	if (cfg->hold_global)
		hc.scope = OMS_HOLD_GLOBAL;
	dev->cfg = *cfg;
	dev->rng = cfg->chaos_seed;
	dev->next_key = (uint32_t)(emu_wall_ns() * 2654435761u) | 1;
	dev->refs = 1;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->listen_lock, NULL);
	oms_kc_init(&dev->kc, EMU_KEY_THRESHOLD);
	for (unsigned n = 0; n < OMS_MAX_NODES; n++) {
		err = oms_hold_init(&dev->hold[n], &hc, NULL, 0);
		if (err) {
			while (n--)
				oms_hold_destroy(&dev->hold[n]);
			pthread_mutex_destroy(&dev->listen_lock);
			pthread_mutex_destroy(&dev->lock);
			free(dev);
			return err;
		}
	}
	err = emu_reads_init(dev);
	if (!err)
		err = emu_seq_init(dev);
	if (!err)
		err = emu_conn_init(dev);
	if (err) {
		dev_free(dev);
		return err;
	}
	dev->t0 = emu_wall_ns();
	if (pthread_create(&dev->thread, NULL, dev_thread, dev)) {
		dev_free(dev);
		return -EAGAIN;
	}
	*out = dev;
	return 0;
}

/* What oms_emu_create(NULL) and the default device run with. */
void emu_cfg_defaults(struct emu_cfg *cfg)
{
	*cfg = (struct emu_cfg){
		.read_order = OMS_ORDER_RC_OPT, .rlsq_entries = 256,
		.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100,
	};
}

int emu_dev_get(struct oms_emu **dev)
{
	struct emu_cfg cfg;
	int err = 0;

	pthread_mutex_lock(&default_lock);
	if (default_dev) {
		if (__atomic_load_n(&default_dev->gone, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&default_dev->stop, __ATOMIC_ACQUIRE))
			err = -ENODEV;
		else
			emu_dev_hold(default_dev);
	} else {
		emu_cfg_defaults(&cfg);
		err = emu_dev_create(&cfg, &default_dev);
		if (!err)
			default_dev->is_default = 1;
	}
	if (!err)
		*dev = default_dev;
	pthread_mutex_unlock(&default_lock);
	return err;
}

void emu_dev_hold(struct oms_emu *dev)
{
	__atomic_add_fetch(&dev->refs, 1, __ATOMIC_RELAXED);
}

static void dev_stop_free(struct oms_emu *dev)
{
	__atomic_store_n(&dev->frozen, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev->thread, NULL);
	dev_free(dev);
}

/* The creator's reference, if it is the last one; else -EBUSY. */
int emu_dev_destroy(struct oms_emu *dev)
{
	uint32_t creator_only = 1;

	if (!__atomic_compare_exchange_n(&dev->refs, &creator_only, 0, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EBUSY;
	dev_stop_free(dev);
	return 0;
}

void emu_dev_put(struct oms_emu *dev)
{
	uint32_t left;

	/* The default device's last reference and a new context's lookup
	 * of it meet under the lock: neither finds a device being freed. */
	if (dev->is_default)
		pthread_mutex_lock(&default_lock);
	left = __atomic_sub_fetch(&dev->refs, 1, __ATOMIC_ACQ_REL);
	if (!left && dev->is_default)
		default_dev = NULL;
	if (dev->is_default)
		pthread_mutex_unlock(&default_lock);
	if (!left)
		dev_stop_free(dev);
}

int emu_queue_open(struct oms_emu *dev, uint32_t node, uint32_t size,
		   struct emu_queue **out)
{
	return emu_queue_open_flags(dev, node, size, 0, out);
}

/* @flags: EMU_Q_UNORDERED for a control queue that keeps no same-address
 * order (the context's OMS_CTX_F_NO_ORDERING). */
int emu_queue_open_flags(struct oms_emu *dev, uint32_t node, uint32_t size,
			 uint32_t flags, struct emu_queue **out)
{
	struct emu_queue *q;
	int err = -EBUSY;

	if (node >= OMS_MAX_NODES || oms_db_init(&(struct oms_db_ring){0}, size))
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->sq = calloc(size, sizeof(*q->sq));
	q->cq = calloc(size, sizeof(*q->cq));
	q->acks = calloc(size, sizeof(*q->acks));
	q->flush = calloc(size, sizeof(*q->flush));
	q->not_before = calloc(size, sizeof(*q->not_before));
	if (!q->sq || !q->cq || !q->acks || !q->flush || !q->not_before) {
		err = -ENOMEM;
		goto fail;
	}
	q->size = size;
	q->node = node;
	q->ack_due_min = EMU_NO_EVENT;
	q->flags = flags;
	emu_seq_queue_init(q);
	oms_db_init(&q->prod, size);
	oms_db_init(&q->cons, size);
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < EMU_MAX_QUEUES; i++) {
		if (!dev->q[i]) {
			q->id = i;
			q->gen = ++dev->queue_gen;
			q->in_use = 1;
			dev->q[i] = q;
			q->li = dev->nq;
			dev->qlist[dev->nq++] = q;
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	if (err)
		goto fail;
	*out = q;
	return 0;
fail:
	free(q->sq);
	free(q->cq);
	free(q->acks);
	free(q->flush);
	free(q->not_before);
	free(q);
	return err;
}

/*
 * Posted writes the queue leaves behind unexecuted (a context that died
 * with work in flight) would hold class-2 responses for ever: retire them
 * from the hold trackers.
 */
static void release_posted(struct oms_emu *dev, struct emu_queue *q)
{
	for (uint32_t i = 0; i < q->npool; i++)
		if (q->pool[i].posted)
			oms_hold_ack(&dev->hold[q->node], q->pool[i].wr.dest,
				     q->pool[i].hold_id);
	for (uint32_t i = 0; i < EMU_SEQ_WINDOW; i++)
		if ((q->park_used[i / 64] & (1ull << (i % 64))) &&
		    q->parked[i].posted)
			oms_hold_ack(&dev->hold[q->node], q->parked[i].wr.dest,
				     q->parked[i].hold_id);
}

void emu_queue_close(struct oms_emu *dev, struct emu_queue *q)
{
	pthread_mutex_lock(&dev->lock);
	release_posted(dev, q);
	emu_reads_drop_queue(dev, q);
	emu_seq_drop_queue(dev, q);
	emu_initiators_forget_queue(dev, q);
	dev->q[q->id] = NULL;
	dev->qlist[q->li] = dev->qlist[--dev->nq];
	dev->qlist[q->li]->li = q->li;
	pthread_mutex_unlock(&dev->lock);
	free(q->sq);
	free(q->cq);
	free(q->acks);
	free(q->flush);
	free(q->not_before);
	free(q);
}

void emu_dev_stop(struct oms_emu *dev)
{
	__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&dev->gone, __ATOMIC_ACQUIRE))
		sched_yield();
}

/*
 * Freezing returns once the thread is parked (or gone): from then on the
 * device takes and executes nothing until thawed.  Each freeze has a
 * generation, stored after frozen: a thread that read it reads frozen set
 * from then on (until the thaw), so the generation it echoes in parked_gen
 * says it stands in the frozen branch and will not step.  The running
 * loop pays only the load of frozen it always paid.  Not from the
 * device's own thread (an observer): it would wait for itself.
 */
void emu_dev_freeze(struct oms_emu *dev, int on)
{
	uint32_t gen;

	if (!on) {
		__atomic_store_n(&dev->frozen, 0, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&dev->frozen, 1, __ATOMIC_RELEASE);
	gen = __atomic_add_fetch(&dev->freeze_gen, 1, __ATOMIC_ACQ_REL);
	/* this freeze's generation or a later one's (another freezer) */
	while ((int32_t)(__atomic_load_n(&dev->parked_gen, __ATOMIC_ACQUIRE) -
			 gen) < 0 &&
	       !__atomic_load_n(&dev->gone, __ATOMIC_ACQUIRE))
		sched_yield();
}

void emu_dev_set_observer(struct oms_emu *dev, emu_observe_fn fn, void *arg)
{
	pthread_mutex_lock(&dev->lock);
	dev->observe = fn;
	dev->observe_arg = arg;
	pthread_mutex_unlock(&dev->lock);
}
