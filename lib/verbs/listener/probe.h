/* SPDX-License-Identifier: MIT */
/*
 * The listener's liveness probe of its passive connections (probe.c): a
 * zero-byte RDMA WRITE to each initiator once per interval, so that one
 * that vanished without a disconnect is found and dropped.
 */
#ifndef OMS_VERBS_PROBE_H
#define OMS_VERBS_PROBE_H

#include "verbs/common/verbs.h"

#define VB_PROBE_MAX	256	/* probes in flight at once */
#define VB_PROBE_CQ	1024	/* room for them and for flushed ones */
#define VB_PROBE_GRACE	2	/* intervals a probe may stay unanswered */

struct vb_probe {
	struct ibv_cq *cq;	/* the passive QPs' send CQ */
	uint64_t interval_ns;
	uint64_t next_id;	/* a connection's probe id: never reused */
	uint32_t in_flight;
	uint64_t answered, failed;	/* probes completed, each way */
	uint64_t overdue;		/* not completed by their deadline */
};

/* One connection's: embedded in the listener's record of it. */
struct vb_probe_conn {
	struct ibv_qp *qp;
	uint64_t id;
	uint64_t due_ns;	/* posted: when it is overdue; else when due */
	int posted;
};

int vb_probe_init(struct vb_probe *pb, struct ibv_context *verbs,
		  uint32_t interval_ms);
void vb_probe_fini(struct vb_probe *pb);
void vb_probe_conn_init(struct vb_probe *pb, struct vb_probe_conn *pc,
			struct ibv_qp *qp, uint64_t now_ns);
int vb_probe_post(struct vb_probe *pb, struct vb_probe_conn *pc,
		  uint64_t now_ns);
int vb_probe_reap(struct vb_probe *pb, uint64_t *id, int *ok);
void vb_probe_done(struct vb_probe *pb, struct vb_probe_conn *pc,
		   uint64_t now_ns);
void vb_probe_forget(struct vb_probe *pb, struct vb_probe_conn *pc);
int vb_probe_overdue(const struct vb_probe_conn *pc, uint64_t now_ns);
int vb_probe_wait_ms(const struct vb_probe *pb);

#endif
