// SPDX-License-Identifier: MIT
/*
 * The emulated device's life: one device per process, shared by every
 * context (like one fabric with its NICs and root complexes), started by
 * the first context and stopped with the last.  Its thread is the "real
 * concurrent agent": it takes commands the initiators rang, executes them
 * against host memory under the device lock, runs the read engine and
 * returns completions.  Stop and freeze exist so tests can kill or hang
 * the device mid-run and prove that nothing on the initiator side hangs.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/emu.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_dev *g_dev;

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t emu_now(const struct emu_dev *dev)
{
	if (!dev->cfg.time_scale)
		return 0;
	return (wall_ns() - dev->t0) / dev->cfg.time_scale;
}

/* splitmix64; the device thread's own stream. */
uint64_t emu_rand(struct emu_dev *dev)
{
	uint64_t z = (dev->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* One pass over every queue; returns how much work was done. */
static int dev_step(struct emu_dev *dev, int *pending)
{
	int work = 0;

	*pending = 0;
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < EMU_MAX_QUEUES; i++) {
		struct emu_queue *q = dev->q[i];

		if (!q)
			continue;
		work += emu_intake(dev, q);
		/* Streams first: a head get is looked at before new gets
		 * can reuse its slot. */
		work += emu_seq_step(dev, q);
		work += emu_exec_pool(dev, q);
		/* Work waiting (chaos may pass it over): not idle. */
		*pending += q->npool || q->nacks || q->get_head != q->get_tail;
	}
	work += emu_reads_step(dev);
	for (uint32_t i = 0; i < EMU_MAX_QUEUES; i++)
		if (dev->q[i])
			work += emu_flush_acks(dev, dev->q[i]);
	pthread_mutex_unlock(&dev->lock);
	return work;
}

static void *dev_thread(void *arg)
{
	struct emu_dev *dev = arg;
	unsigned idle = 0;

	while (!__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&dev->frozen, __ATOMIC_ACQUIRE)) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
			continue;
		}
		int pending;

		__atomic_add_fetch(&dev->heartbeat, 1, __ATOMIC_RELEASE);
		if (dev_step(dev, &pending)) {
			idle = 0;
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
	__atomic_store_n(&dev->dead, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void dev_free(struct emu_dev *dev)
{
	emu_seq_fini(dev);
	emu_reads_fini(dev);
	for (unsigned n = 0; n < OMS_MAX_NODES; n++)
		oms_hold_destroy(&dev->hold[n]);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

static int dev_create(const struct emu_cfg *cfg, struct emu_dev **out)
{
	struct oms_hold_config hc = {
		.ndest = OMS_MAX_NODES, .window = 65536, .gwindow = 65536,
		.max_held = 4096, .scope = OMS_HOLD_PER_DEST,
	};
	struct emu_dev *dev = calloc(1, sizeof(*dev));
	int err;

	if (!dev)
		return -ENOMEM;
	if (cfg->hold_global)
		hc.scope = OMS_HOLD_GLOBAL;
	dev->cfg = *cfg;
	dev->rng = cfg->chaos_seed;
	dev->next_key = (uint32_t)(wall_ns() * 2654435761u) | 1;
	pthread_mutex_init(&dev->lock, NULL);
	oms_kc_init(&dev->kc, EMU_KEY_THRESHOLD);
	for (unsigned n = 0; n < OMS_MAX_NODES; n++) {
		err = oms_hold_init(&dev->hold[n], &hc, NULL, 0);
		if (err) {
			while (n--)
				oms_hold_destroy(&dev->hold[n]);
			pthread_mutex_destroy(&dev->lock);
			free(dev);
			return err;
		}
	}
	err = emu_reads_init(dev);
	if (!err)
		err = emu_seq_init(dev);
	if (err) {
		dev_free(dev);
		return err;
	}
	dev->t0 = wall_ns();
	if (pthread_create(&dev->thread, NULL, dev_thread, dev)) {
		dev_free(dev);
		return -EAGAIN;
	}
	*out = dev;
	return 0;
}

int emu_dev_get(const struct emu_cfg *cfg, struct emu_dev **dev)
{
	int err = 0;

	pthread_mutex_lock(&g_lock);
	if (!g_dev)
		err = dev_create(cfg, &g_dev);
	if (!err) {
		g_dev->refs++;
		*dev = g_dev;
	}
	pthread_mutex_unlock(&g_lock);
	return err;
}

void emu_dev_put(struct emu_dev *dev)
{
	pthread_mutex_lock(&g_lock);
	if (--dev->refs == 0) {
		__atomic_store_n(&dev->frozen, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
		pthread_join(dev->thread, NULL);
		dev_free(dev);
		g_dev = NULL;
	}
	pthread_mutex_unlock(&g_lock);
}

struct emu_dev *emu_dev_current(void)
{
	struct emu_dev *dev;

	pthread_mutex_lock(&g_lock);
	dev = g_dev;
	pthread_mutex_unlock(&g_lock);
	return dev;
}

int emu_queue_open(struct emu_dev *dev, uint32_t node, uint32_t size,
		   struct emu_queue **out)
{
	return emu_queue_open_flags(dev, node, size, 0, out);
}

/* @flags: EMU_Q_UNORDERED for a control queue that keeps no same-address
 * order (the context's OMS_CTX_F_NO_ORDERING). */
int emu_queue_open_flags(struct emu_dev *dev, uint32_t node, uint32_t size,
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
	if (!q->sq || !q->cq || !q->acks || !q->flush) {
		err = -ENOMEM;
		goto fail;
	}
	q->size = size;
	q->node = node;
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
	free(q);
	return err;
}

/*
 * Posted writes the queue leaves behind unexecuted (a context that died
 * with work in flight) would hold class-2 responses for ever: retire them
 * from the hold trackers.
 */
static void release_posted(struct emu_dev *dev, struct emu_queue *q)
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

void emu_queue_close(struct emu_dev *dev, struct emu_queue *q)
{
	pthread_mutex_lock(&dev->lock);
	release_posted(dev, q);
	emu_reads_drop_queue(dev, q);
	emu_seq_drop_queue(dev, q);
	dev->q[q->id] = NULL;
	pthread_mutex_unlock(&dev->lock);
	free(q->sq);
	free(q->cq);
	free(q->acks);
	free(q->flush);
	free(q);
}

void emu_dev_stop(struct emu_dev *dev)
{
	__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&dev->dead, __ATOMIC_ACQUIRE))
		sched_yield();
}

void emu_dev_freeze(struct emu_dev *dev, int on)
{
	__atomic_store_n(&dev->frozen, on, __ATOMIC_RELEASE);
}

void emu_dev_set_observer(struct emu_dev *dev, emu_observe_fn fn, void *arg)
{
	pthread_mutex_lock(&dev->lock);
	dev->observe = fn;
	dev->observe_arg = arg;
	pthread_mutex_unlock(&dev->lock);
}
