/* SPDX-License-Identifier: MIT */
/*
 * The verbs backend's target side: the listener (listen.c: accept,
 * passive QPs, the flush word), the destination agent's server of a
 * listener (agent_srv.c: rings, admission, answers; OMS_AGENT=1) and the
 * hold that keeps its class-2 answers behind this process's puts
 * (agent_hold.c).  It uses the initiator's bottom (verbs.h: QP set-up, the
 * wire format, peers, errno) and nothing of its posting or completions;
 * the backend's table reaches it through vb_listen().
 */
#ifndef OMS_VERBS_TARGET_H
#define OMS_VERBS_TARGET_H

#include "verbs/verbs.h"

/* agent_srv.c: the destination agent of a listener (OMS_AGENT=1) */
struct va_srv;
struct va_conn;
struct oms_vw_hello;
struct oms_vw_agent;
int vb_agent_wanted(void);
int vb_agent_create(struct vb_ctx *vc, const struct oms_be_region *served,
		    struct va_srv **out);
void vb_agent_destroy(struct va_srv *s);
int vb_agent_fd(const struct va_srv *s);
int vb_agent_poll_ms(const struct va_srv *s);
int vb_agent_tick(struct va_srv *s);
int vb_agent_service(struct va_srv *s);
int vb_agent_slot(struct va_srv *s, struct rdma_cm_id *id,
		  struct va_conn **victim);
int vb_agent_conn_open(struct va_srv *s, struct rdma_cm_id *id,
		       const struct oms_vw_hello *h, struct va_conn **out,
		       struct oms_vw_agent *blk);
void vb_agent_conn_close(struct va_conn *ac);
int vb_agent_conn_failed(const struct va_conn *ac);
void vb_agent_report(const struct va_srv *s, uint64_t cpu_ns);

/* agent_hold.c: this process's puts, told to an agent's hold */
struct va_hold;
struct oms_agent;
int va_hold_create(struct oms_agent *ag, struct va_hold **out);
void va_hold_destroy(struct va_hold *h);
int va_hold_sync(struct va_hold *h, int peer);

#endif
