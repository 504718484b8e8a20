/* SPDX-License-Identifier: MIT */
/*
 * The backend operations table.  A backend carries operations from a
 * context to destination memory and reports completions; it does not
 * order stores across operations (the context layer does that with the
 * engine), but it must honour the per-destination contract the engine
 * relies on (docs/ordering.md, "How each backend enforces each rule"):
 *
 * - Same bytes: among the operations posted to one destination, a write
 *   (put, atomic) is performed after an earlier overlapping write, and a
 *   get reads after an earlier overlapping write (RC's order on one QP).
 *   A write after an overlapping read is ordered only with
 *   OMS_WR_F_FENCE (RC needs IBV_SEND_FENCE for it too).
 * - OMS_WR_F_FENCE: the operation is performed only after every
 *   operation posted before it to the same destination has been performed
 *   (reads have read, writes and atomics are in memory).  If one of them
 *   failed, the fenced operation is not performed and completes with
 *   -ECANCELED.  A member of a sequenced stream (OMS_WR_F_SEQ) waits only
 *   for the operations outside the stream posted before it: the stream
 *   already puts it after the lower-numbered members, and it never waits
 *   for a higher-numbered one (the orderer numbers a held op at
 *   submission, so a later member may be posted before it; waiting for
 *   that one would wait for itself).
 * - OMS_WR_F_ACQUIRE (get): its lines are read in address order and every
 *   get posted after it to the same destination reads after it (seed 004);
 *   between two members of a stream the sequence order decides.
 * - OMS_WR_F_SEQ: the destination performs the sequence-numbered
 *   operations of the context in sequence order (its reorder buffer); a
 *   get among them has read before any later member is performed.  A
 *   NOP member fills its number; with OMS_WR_F_CANCEL it stops the stream
 *   like a failed member (it completes with -ECANCELED).
 * - In-order channels (ops->posted, and OMS_WR_F_SEQ streams) stop at the
 *   first failure: every operation posted later to that destination,
 *   flushes included, completes with an error (-ECANCELED) unperformed,
 *   until an OMS_WR_RESUME to it completes (a QP in error does the same;
 *   verbs cannot resume it and answers -ENOTCONN).
 * - A completion with status 0 means performed.  On an acknowledged
 *   channel that is visibility; on an in-order (posted) channel only a
 *   flush's completion proves that earlier writes are visible (seed 000
 *   [0096]).  A key or range error completes the operation with a
 *   negative status without touching memory.
 *
 * Backends: lib/emu/ (the emulated device) and lib/verbs/ (RC QPs over
 * librdmacm and libibverbs).
 */
#ifndef OMS_BACKEND_H
#define OMS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "oms.h"

struct oms_ctx;

/* The longest operation the context layer hands a backend (bytes). */
#define OMS_MAX_OP_LEN	(1u << 20)

/*
 * What a backend sees of a context: this view, the first member of the
 * context layer's struct oms_ctx (lib/oms_priv.h, which a backend does not
 * see: the build gives it this header, its own folder, the engine and
 * lib/util/ only).  The context layer fills attr and qdepth before
 * ops->open(); the backend owns priv, set by open() and cleared by close().
 */
/*
 * The RDMA device, port and GID a user named (OMS_DEVICE, OMS_PORT,
 * OMS_GID_INDEX: perftest's -d, -i and -x), checked against sysfs by the
 * core before a verbs context is made (lib/core/rdma_env.c).
 */
struct oms_be_rdma_want {
	char dev[64];		/* "": the first device */
	uint32_t port;		/* 0: the route decides */
	int32_t gid_index;	/* -1: the address decides */
};

struct oms_be_view {
	void *priv;			/* the backend's per-context state */
	const struct oms_ctx_attr *attr; /* the context's, defaults filled */
	struct oms_be_rdma_want rdma;	/* verbs: where, if the user said */
	uint32_t qdepth;		/* operation slots: every oms_wr.slot
					 * is below it */
	/* The number the context gives its next sequence-numbered op to
	 * @dest (OMS_WR_F_SEQ): a stream a backend opens to a destination
	 * (a new connection) starts there. */
	uint64_t (*seq_next)(struct oms_ctx *ctx, uint32_t dest);
	/* What the backend counts of its device (oms_stats): doorbells
	 * rung, completion entries taken. */
	uint64_t doorbells, dev_completions;
	/* Set by the backend's open(): the context's data-path calls count
	 * the calling thread's CPU time outside liboms (util/cpu_charge.h),
	 * which the backend charges to it. */
	int cpu_charge;
};

/*
 * What a thread waits for in liboms (ops->wait): @completions more
 * completions than the context has taken so far (at least 1), or, with
 * @src, the source-consumed count moving past @src_seen.  A lower bound:
 * the caller may need more, never less.
 */
struct oms_be_wait {
	uint32_t completions;
	uint32_t src;
	uint64_t src_seen;
};

static inline struct oms_be_view *oms_be_view(struct oms_ctx *ctx)
{
	/* a pointer to a struct is a pointer to its first member */
	return (struct oms_be_view *)(void *)ctx;
}

/* A region to serve (ops->listen): the registered bytes and their key. */
struct oms_be_region {
	void *addr;
	uint64_t len;
	struct oms_rmr rmr;
};

enum oms_wr_op {
	OMS_WR_PUT = 1,
	OMS_WR_GET = 2,
	OMS_WR_FADD = 3,
	OMS_WR_CAS = 4,
	OMS_WR_FLUSH = 5,	/* completes after every earlier op executed */
	OMS_WR_NOP = 6,		/* with OMS_WR_F_SEQ: fills @seq, does nothing */
	OMS_WR_RESUME = 7,	/* resume the context's stopped channel to
				 * @dest (after oms_ctx_resume()); a
				 * sequenced one's stream goes on at @seq,
				 * the number its next member carries */
};

#define OMS_WR_F_ACQUIRE	(1u << 0)	/* get: ordered read */
#define OMS_WR_F_RESP_ORDERED	(1u << 1)	/* get: seed-002 class 2 */
#define OMS_WR_F_STRONG		(1u << 2)	/* put: informational */
#define OMS_WR_F_SEQ		(1u << 3)	/* carries @seq: the destination's
						 * reorder buffer applies the
						 * queue's ops to @dest in seq
						 * order (seed 004 5.2); flush:
						 * @seq is the count to cover */
#define OMS_WR_F_FENCE		(1u << 4)	/* performed after every earlier
						 * op to @dest (see above) */
#define OMS_WR_F_CANCEL		(1u << 5)	/* NOP of a stream: it stands
						 * for an op the orderer
						 * cancelled; the stream stops
						 * there as at a failed member
						 * (what D1 orders after it is
						 * not performed either) */

/* One work request: 64 bytes, the emulated device's ring entry. */
struct oms_wr {
	uint8_t op;		/* enum oms_wr_op */
	uint8_t flags;		/* OMS_WR_F_* */
	uint16_t pad;
	uint32_t slot;		/* context's operation slot: the completion
				 * names it */
	uint32_t dest, region, key;
	uint32_t seq;		/* OMS_WR_F_SEQ: sequence (16 bits used) */
	uint64_t off, len;
	uint64_t local;		/* put: source address; get: destination */
	uint64_t a1, a2;	/* fadd: a1 = add; cas: a1 = expect, a2 = new */
};

/* One completion. */
struct oms_wc {
	uint32_t slot;
	int32_t status;		/* 0 or -errno */
	uint64_t value;		/* atomics: old value */
};

struct oms_backend_ops {
	const char *name;
	int dest_order_hw;	/* destination ordering in silicon */
	int posted;		/* every destination is an in-order channel
				 * (an RC QP to memory without relaxed
				 * ordering): the orderer's POSTED kind, and
				 * OMS_WR_FLUSH is a flush read on it */
	/* Attach @ctx (its view's attr and qdepth filled in); sets the
	 * view's priv. */
	int (*open)(struct oms_ctx *ctx);
	void (*close)(struct oms_ctx *ctx);
	/* Write one request to the submission ring (not yet rung).
	 * -ENOSPC when the ring is full. */
	int (*post)(struct oms_ctx *ctx, const struct oms_wr *wr);
	/* Doorbell: release the @n requests posted since the last ring. */
	int (*ring)(struct oms_ctx *ctx, uint32_t n);
	/* Reap up to @max completions; *@src_done receives the count of
	 * requests whose local buffer the device has finished with (read
	 * after the completions, so it covers every one returned). */
	int (*poll)(struct oms_ctx *ctx, struct oms_wc *wc, int max,
		    uint64_t *src_done);
	/* Optional: the calling thread waits in liboms for @ctx's device
	 * until @w holds (called again on every pass of the wait: a no-op
	 * while the device has not ended it), or, with NULL @w, has stopped
	 * waiting.  A device that keeps model time of its own (the emulated
	 * one's latency model) runs its clock past a waiting thread, and
	 * stops it where @w comes true.  Returns 1 if it slept until the
	 * device woke it (or for a while): the caller need not yield. */
	int (*wait)(struct oms_ctx *ctx, const struct oms_be_wait *w);
	/* Optional: the calling thread's time on @ctx's device in ns, where
	 * the device keeps time of its own (model time); NULL: the host's
	 * CLOCK_MONOTONIC. */
	uint64_t (*now)(struct oms_ctx *ctx);
	/* Liveness: 0, or -ENODEV (device stopped); *@hb a counter that
	 * moves while the device makes progress. */
	int (*alive)(struct oms_ctx *ctx, uint64_t *hb);
	int (*mr_reg)(struct oms_ctx *ctx, void *addr, size_t len,
		      uint32_t access, struct oms_rmr *rmr);
	int (*mr_dereg)(struct oms_ctx *ctx, const struct oms_rmr *rmr);
	int (*mr_write)(struct oms_ctx *ctx, const struct oms_rmr *rmr,
			uint64_t off, const void *src, size_t len);
	int (*mr_read)(struct oms_ctx *ctx, const struct oms_rmr *rmr,
		       uint64_t off, void *dst, size_t len);
	void (*caps)(struct oms_ctx *ctx, struct oms_caps *caps);
	/* Optional: the OMS_CAP_* flags that hold for operations to @dest
	 * (a valid destination), where they differ by destination (verbs:
	 * whether that listener runs an agent); NULL: caps() speaks for
	 * every destination. */
	uint32_t (*dest_caps)(struct oms_ctx *ctx, uint32_t dest);
	/* Optional: the longest put to @dest (a valid destination); NULL:
	 * OMS_MAX_OP_LEN everywhere.  oms_put() refuses a longer one with
	 * -EMSGSIZE before it is issued. */
	uint64_t (*dest_max_put)(struct oms_ctx *ctx, uint32_t dest);
	/* Optional: the memory @region (a descriptor's) names, for
	 * same-address order (C1): two descriptors of the same bytes at
	 * one destination (a region's own and a listener's window on it)
	 * give the same number, so the store orderer sees their ops
	 * overlap.  Any answer is safe for a descriptor the device will
	 * refuse.  NULL: every descriptor is memory of its own. */
	uint32_t (*home_region)(struct oms_ctx *ctx, uint32_t region);
	uint64_t (*key_drops)(struct oms_ctx *ctx);
	/* Serve @reg at @addr:@port (oms_listen; arguments checked);
	 * *@lpriv is handed back to listener_close. */
	int (*listen)(struct oms_ctx *ctx, const char *addr, const char *port,
		      const struct oms_be_region *reg, void **lpriv);
	void (*listener_close)(struct oms_ctx *ctx, void *lpriv);
	/* The initiators connected to the listener now (oms_listener_peers). */
	int (*listener_peers)(struct oms_ctx *ctx, void *lpriv);
	/* Connect and fill *@rmr (oms_connect; arguments checked). */
	int (*connect)(struct oms_ctx *ctx, const char *host, const char *port,
		       uint32_t timeout_ms, struct oms_rmr *rmr);
};

extern const struct oms_backend_ops oms_emu_backend;
extern const struct oms_backend_ops oms_verbs_backend;

/* lib/verbs/backend.c: load rdma-core for the verbs backend (once per
 * process).  0, or -ELIBACC with the reason in @why. */
int oms_verbs_load(char *why, size_t whylen);

#endif
