/* SPDX-License-Identifier: MIT */
/*
 * The listener's teardown thread (teardown.c): destroys the cm_ids of
 * the connections the listener has let go, so that no call that can wait
 * on the network ever holds the thread that accepts and serves.
 */
#ifndef OMS_VERBS_TEARDOWN_H
#define OMS_VERBS_TEARDOWN_H

#include <pthread.h>
#include <stdint.h>

#include "verbs/common/rdma_lib.h"	/* rdma-core, loaded at run time */

struct vb_teardown_item;

struct vb_teardown {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct vb_teardown_item *head, *tail;	/* ids to destroy, in order */
	int stop;		/* destroy what is queued, then leave */
	int started;
	uint64_t queued, destroyed;	/* under mu */
	uint64_t slowest_ns;	/* the longest rdma_destroy_id() */
};

int vb_teardown_start(struct vb_teardown *t);
void vb_teardown_id(struct vb_teardown *t, struct rdma_cm_id *id);
void vb_teardown_stop(struct vb_teardown *t);

#endif
