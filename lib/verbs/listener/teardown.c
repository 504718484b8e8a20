// SPDX-License-Identifier: MIT
/*
 * The listener's teardown thread.
 *
 * rdma_destroy_id() of a connected cm_id waits in the kernel until the
 * connection manager has finished with it: a disconnect request sent to
 * a peer that is gone is resent until its retries run out, and the call
 * returns only then (about a minute on Soft-RoCE, seen in the guests).
 * On the listener's thread, which also accepts connections and serves
 * the destination agent, that minute would stop every other requester:
 * no operation served, no connect accepted.  So the listener takes a
 * connection apart itself (disconnect, QP, agent state, none of which
 * waits) and hands the cm_id here; this thread destroys the ids one by
 * one, in the order they came.  An event of an id still queued is taken
 * and acknowledged by the listener's thread as for any other, so the
 * destroy, which waits for its id's events to be acknowledged, always
 * ends.
 */
#include <stdlib.h>
#include <time.h>

#include "verbs/listener/teardown.h"

struct vb_teardown_item {
	struct rdma_cm_id *id;
	struct vb_teardown_item *next;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *teardown_thread(void *arg)
{
	struct vb_teardown *t = arg;

	pthread_mutex_lock(&t->mu);
	for (;;) {
		struct vb_teardown_item *it = t->head;
		uint64_t t0, ns;

		if (!it) {
			if (t->stop)
				break;
			pthread_cond_wait(&t->cv, &t->mu);
			continue;
		}
		t->head = it->next;
		if (!t->head)
			t->tail = NULL;
		pthread_mutex_unlock(&t->mu);
		t0 = mono_ns();
		rdma_destroy_id(it->id);
		ns = mono_ns() - t0;
		free(it);
		pthread_mutex_lock(&t->mu);
		t->destroyed++;
		if (ns > t->slowest_ns)
			t->slowest_ns = ns;
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int vb_teardown_start(struct vb_teardown *t)
{
	int err;

	t->head = t->tail = NULL;
	t->stop = 0;
	t->queued = t->destroyed = t->slowest_ns = 0;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	err = pthread_create(&t->thread, NULL, teardown_thread, t);
	if (err) {
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		return -err;
	}
	t->started = 1;
	return 0;
}

/*
 * Destroy @id on the teardown thread.  The caller has disconnected it and
 * destroyed its QP, and never touches it again.  Without memory for the
 * queue (or before the thread runs) it is destroyed here: slow, not lost.
 */
void vb_teardown_id(struct vb_teardown *t, struct rdma_cm_id *id)
{
	struct vb_teardown_item *it = t->started ? malloc(sizeof(*it)) : NULL;

	if (!it) {
		rdma_destroy_id(id);
		return;
	}
	it->id = id;
	it->next = NULL;
	pthread_mutex_lock(&t->mu);
	if (t->tail)
		t->tail->next = it;
	else
		t->head = it;
	t->tail = it;
	t->queued++;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

/* Destroy everything queued, then end the thread.  May take as long as
 * the slowest destroy: the ids must be gone before their channel. */
void vb_teardown_stop(struct vb_teardown *t)
{
	if (!t->started)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = 1;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	t->started = 0;
}
