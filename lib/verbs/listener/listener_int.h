/* SPDX-License-Identifier: MIT */
/*
 * The verbs backend's listener, inside (lib/verbs/listener/): the
 * listener (listen.c: accept, passive QPs, the flush word), the
 * destination agent's server of a listener (agent_srv.c: rings,
 * admission, answers; OMS_AGENT=1) and the hold that keeps its class-2
 * answers behind this process's puts (agent_hold.c).  It stands on
 * common/ (verbs.h: the device, QP set-up, the wire format, peers,
 * errno) and on nothing of the initiator, whose folder is not on its
 * include path; the backend's table reaches it through listener.h.
 */
#ifndef OMS_VERBS_LISTENER_INT_H
#define OMS_VERBS_LISTENER_INT_H

#include "verbs/listener/listener.h"

/*
 * agent_srv.c, agent_conn.c: one serving thread's destination agent
 * (OMS_AGENT=1): its connections, rings, admission and answers.  Every
 * call on a struct va_srv or one of its connections is made under that
 * thread's lock (agent_pool.c), but prepare and discard, which touch only
 * the connection's own memory.
 */
#define VB_AGENT_CONNS_MAX 1024	/* agent connections per listener */
struct va_srv;
struct va_conn;
struct oms_vw_hello;
struct oms_vw_agent;
struct vb_agent_census {
	uint32_t used, mine;	/* connections; of which the node's */
	uint64_t limit_ns;	/* idle this long: a slot to take */
	struct va_conn *victim;	/* the idlest that may be taken, or NULL */
	uint64_t idle_ns;	/* its idle time (UINT64_MAX: it failed) */
	int victim_failed;
};
struct vb_agent_stats {
	uint64_t doorbells, descs, answers, chains;
	uint64_t turns_waited, behind_max, behind_bound, behind_past;
	uint64_t refused, key_drops;	/* the core's */
	uint64_t probes, probe_fails;
	uint64_t reg_peak;		/* registered, the threads' peaks */
	uint64_t conns_at_peak;		/* their connections then */
	uint64_t cqe_peak, cqe_end;	/* the threads' completion queues'
					 * entries: at most, and at the end */
};
int vb_agent_wanted(void);
int vb_agent_create(struct vb_ctx *vc, const struct oms_be_region *served,
		    struct va_srv **out);
void vb_agent_destroy(struct va_srv *s);
int vb_agent_fd(const struct va_srv *s);
int vb_agent_poll_ms(const struct va_srv *s);
int vb_agent_tick(struct va_srv *s);
int vb_agent_service(struct va_srv *s);
uint64_t vb_agent_broken(const struct va_srv *s);
void vb_agent_census(struct va_srv *s, uint32_t peer, int own,
		     struct vb_agent_census *c);
int vb_agent_conn_prepare(struct va_srv *s, const struct oms_vw_hello *h,
			  struct va_conn **out);
int vb_agent_conn_install(struct va_conn *ac, struct va_srv *s,
			  struct rdma_cm_id *id, struct oms_vw_agent *blk);
void vb_agent_conn_detach(struct va_conn *ac);
void vb_agent_conn_discard(struct va_conn *ac);
/* A detached connection's QP was destroyed: its thread's queues may
 * shrink.  Under the serving thread's lock. */
void vb_agent_qp_gone(struct va_srv *s);
void vb_agent_conn_close(struct va_conn *ac);
int vb_agent_conn_failed(const struct va_conn *ac);
struct va_srv *vb_agent_conn_srv(const struct va_conn *ac);
void vb_agent_stats_add(const struct va_srv *s, struct vb_agent_stats *st);

/*
 * agent_pool.c: a listener's serving threads, each with its own va_srv;
 * the listener's thread does the connection manager's work and hands
 * connections to them.
 */
struct va_pool;
int va_pool_create(struct vb_ctx *vc, const struct oms_be_region *served,
		   struct va_pool **out);
void va_pool_destroy(struct va_pool *p);
int va_pool_fd(struct va_pool *p);
int va_pool_open(struct va_pool *p, struct rdma_cm_id *id,
		 const struct oms_vw_hello *h, struct va_conn **out,
		 struct oms_vw_agent *blk,
		 void (*evict)(void *arg, struct va_conn *victim), void *arg);
void va_pool_close(struct va_pool *p, struct va_conn *ac,
		   struct rdma_cm_id *id);
int va_pool_failed(struct va_pool *p, struct va_conn *ac);
void va_pool_clear(struct va_pool *p);

/* agent_hold.c: this process's puts, told to an agent's hold */
struct va_hold;
struct oms_agent;
int va_hold_create(struct oms_agent *ag, struct va_hold **out);
void va_hold_destroy(struct va_hold *h);
int va_hold_sync(struct va_hold *h, int peer);

#endif
