/* SPDX-License-Identifier: MIT */
/*
 * Private declarations of the context layer: the export macro, the context
 * and memory-region structs, and helpers shared by lib/core/ctx.c, lib/core/ops.c and
 * lib/core/mr.c.  The context layer drives the pure engine (store orderer for
 * store classes and fences, op counters for local fence and quiet) over
 * whatever backend (lib/backend.h) carries the operations, so the ordering
 * semantics do not depend on the backend.  The context layer's own: the
 * backends do not see this header (the build's layers, Makefile), only
 * backend.h's view of a context.
 */
#ifndef OMS_PRIV_H
#define OMS_PRIV_H

#include <stdint.h>

#include "oms.h"
#include "backend.h"
#include "engine/op_counter.h"
#include "engine/store_order.h"
#include "ctx_users.h"
#include "util/clock.h"
#include "util/cpu_charge.h"
#include "util/export.h"

#define OMS_ACK_WINDOW	65536u		/* per-channel completion bitmap */
#define OMS_MAX_HELD	4096u

enum oms_op_type {
	OMS_OPT_PUT = 1,
	OMS_OPT_GET = 2,
	OMS_OPT_ATOMIC = 3,
	OMS_OPT_FLUSH = 4,	/* the orderer's flush of a posted channel */
	OMS_OPT_RESUME = 5,	/* oms_ctx_resume(): resume a channel */
};

#define OMS_SEQ_QDEPTH	256u	/* DEST_SEQ: the reorder buffer window */
#define OMS_FLUSH_SLOTS	OMS_MAX_NODES	/* kept free for flushes */

struct oms_op {
	struct oms_wr wr;	/* what goes to the backend */
	uint64_t *result;	/* atomics: where the old value goes */
	uint64_t seq;		/* channel sequence, UINT64_MAX if unordered */
	uint64_t token;		/* flush: issued count it covers */
	uint8_t type;
	uint8_t in_use;
	uint8_t sent;		/* handed to the backend */
	uint8_t cancelled;	/* a NOP fills its sequence number: it is
				 * reported as -ECANCELED */
	uint8_t unord_seq;	/* unordered op on a SEQ channel: the engine
				 * counts it until it completes */
};

struct oms_ctx {
	struct oms_be_view view;	/* first: what the backend sees
					 * (backend.h); view.attr points to
					 * attr, view.qdepth is qdepth */
	const struct oms_backend_ops *be;
	struct oms_ctx_attr attr;	/* with defaults filled in */
	uint32_t qdepth;		/* slots: queue_depth for the caller's
					 * ops, more for the flushes (ctx.c) */
	uint32_t nfree;
	uint32_t flushing;		/* slots the context's flushes hold */
	struct oms_op *op;		/* [qdepth] */
	uint32_t *free;			/* [qdepth] free slot stack */
	struct oms_so so;
	struct oms_op_counter oc;
	uint64_t *ackbits;		/* [OMS_MAX_NODES][ACK_WINDOW/64] */
	uint64_t ackprefix[OMS_MAX_NODES];
	uint64_t src_seen;		/* backend's source-consumed count */
	uint32_t unrung;		/* posted, doorbell not yet rung */
	uint8_t ring_later;		/* OMS_CTX_F_DOORBELL_BATCH, in an
					 * issuing call: ring only a full
					 * batch */
	int gone;			/* device gone: every call fails */
	uint32_t dest_failed;		/* destinations where an op failed
					 * since the last resume, unordered
					 * ones too (which the orderer does
					 * not track: they have no number) */
	uint64_t hb_last, hb_time_ns;	/* liveness watch */
	uint64_t reaped;		/* completions taken from the backend */
	uint32_t empty_polls;		/* oms_progress() calls in a row that
					 * found nothing, nothing sent since */
	uint64_t alive_calls;
	struct oms_stats st;
	struct oms_mr *mrs;		/* registered regions */
	struct oms_listener *listeners;
	uint32_t users;			/* KVS objects made with it (atomic) */
	char backend_why[160];		/* why this backend (pick_backend) */
};

struct oms_mr {
	struct oms_ctx *ctx;
	struct oms_mr *next;
	void *addr;
	uint64_t len;
	struct oms_rmr rmr;
};

struct oms_listener {
	struct oms_ctx *ctx;
	struct oms_listener *next;
	const struct oms_mr *mr;
	void *bpriv;			/* backend's listener state */
};

/* The store classes and fences count (everything is unordered with
 * OMS_CTX_F_NO_ORDERING, the baseline). */
static inline int oms_ctx_ordered(const struct oms_ctx *ctx)
{
	return !(ctx->attr.flags & OMS_CTX_F_NO_ORDERING);
}

/*
 * lib/core/progress.c: driving a context.  The entry points (ops.c, conn.c,
 * mr.c) and set-up (ctx.c) call down into it; it calls only the engine
 * and the backend, never back up.
 */
void oms_ctx_send_op(struct oms_ctx *ctx, struct oms_op *op, uint8_t so_flags);
int oms_ctx_release(struct oms_ctx *ctx);
int oms_ctx_progress(struct oms_ctx *ctx);
void oms_ctx_ack_seq(struct oms_ctx *ctx, uint32_t chan, uint64_t seq);
int oms_ctx_check_alive(struct oms_ctx *ctx);
void oms_ctx_gone(struct oms_ctx *ctx, int err);
/* What a wait needs at least (oms_ctx_waiting(), backend.h's ops->wait):
 * one completion, all in flight, or the source count to move. */
enum oms_wait_kind { OMS_WAIT_ANY, OMS_WAIT_ALL, OMS_WAIT_SRC };
int oms_ctx_waiting(struct oms_ctx *ctx, enum oms_wait_kind kind);
void oms_ctx_pause(struct oms_ctx *ctx, enum oms_wait_kind kind,
		   unsigned *spins);
void oms_ctx_wait_done(struct oms_ctx *ctx);
int oms_ctx_wait(struct oms_ctx *ctx, int (*cond)(struct oms_ctx *),
		 enum oms_wait_kind kind);
int oms_ctx_wait_quiet(struct oms_ctx *ctx);

/* lib/core/conn.c */
int oms_mr_listened(const struct oms_mr *mr);

/* rdma_env.c: OMS_DEVICE, OMS_PORT, OMS_GID_INDEX checked against sysfs
 * into @w; -ENODEV or -EINVAL with @why.  The first device's name, 0 if
 * none. */
int oms_rdma_want_parse(struct oms_be_rdma_want *w, char *why, size_t whylen);
int oms_rdma_first_device(char *name, size_t len);

/* A data-path call on @ctx (may be NULL): the caller's CPU time before
 * it is counted for the device when the backend asked
 * (util/cpu_charge.h). */
#define OMS_CTX_CPU_SCOPE(ctx) \
	OMS_CPU_SCOPE((ctx) && oms_be_view(ctx)->cpu_charge)

#endif
