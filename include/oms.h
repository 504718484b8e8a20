/* SPDX-License-Identifier: MIT */
/*
 * liboms - ordered remote memory operations.
 *
 * A context (struct oms_ctx, one per thread) issues puts, gets and atomics
 * to remote memory regions (struct oms_rmr, a descriptor the owner of the
 * memory hands out) on destinations (nodes).  Ordering is expressed with
 * the three store classes, per-destination and global fences, a local
 * fence, quiet, and acquire reads.  The same semantics hold on every
 * backend; the emulated device ("emu", the default when no RDMA device is
 * present) runs them on one machine.  See docs/api.md.
 *
 * Error convention: every call returns 0 (or a count) on success and a
 * negative errno value on failure.  A call refused for a bad argument
 * changes no state.  Nothing in the library aborts.
 *
 * Threads: a context is used by one thread at a time.  Different contexts
 * may be used concurrently; memory regions belong to the context that
 * registered them.
 *
 * Part 1 below: exported calls.  Part 2: static inline helpers.
 */
#ifndef OMS_H
#define OMS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Store classes (NVIDIA's ordered-store patent application [0057],
 * [0061]; the ASPLOS '26 paper's MMIO-Release).  The
 * whole contract, with every pair of operations, is docs/ordering.md; in
 * short, for one context in program order:
 *
 * - per address (same bytes, same destination) every operation, whatever
 *   its class or flags, is performed in program order (coherence);
 * - OMS_STORE_UNORDERED  outside the ordered view: no store class or fence
 *                      orders it and no strong store or fence waits for
 *                      it; the same bytes, an earlier acquire get and a
 *                      later release put to its destination order it,
 *                      and it waits behind an op that is held at the
 *                      source for its destination (a strong put, an
 *                      acquire in flight);
 * - OMS_STORE_WEAK       part of the ordered view; not ordered against other
 *                      weak stores to other bytes; cheap;
 * - OMS_STORE_STRONG     performed only after every earlier ordered
 *                      operation (weak, strong and release puts, gets,
 *                      atomics) of the context, to any destination; the
 *                      caller never blocks for it;
 * - OMS_STORE_RELEASE    performed only after every earlier put, get and
 *                      atomic of the context to the same destination,
 *                      enforced at the destination (no round trip at the
 *                      source).  Narrower than the paper's MMIO-Release,
 *                      which waits for all prior host memory operations:
 *                      not cumulative across destinations (that is
 *                      STRONG).
 */
#include "oms_order.h"	/* enum oms_store_class, shared with oms.ko */

/* Read ordering (the ASPLOS '26 paper): flags of oms_get(). */
enum oms_read_flags {
	OMS_READ_RELAXED = 0,	/* cache lines read in any order */
	OMS_READ_ACQUIRE = 1,	/* lines read in address order; no later
				 * operation of the context, to any
				 * destination, is performed before it */
	OMS_READ_RESP_ORDERED = 2, /* class-2 response (Gen-Z): the owner's
				 * node holds the response until its own
				 * earlier posted writes to the reader's node
				 * are acknowledged */
};

struct oms_emu;		/* oms_emu.h: an emulated device */

enum oms_backend {
	OMS_BACKEND_AUTO = 0,	/* OMS_BACKEND env, else RDMA device, else emu */
	OMS_BACKEND_EMU = 1,	/* emulated device (software NIC + RC) */
	OMS_BACKEND_VERBS = 2,	/* RDMA verbs: RC QPs over any RDMA device
				 * (ConnectX, Soft-RoCE) */
};

/* Where the destination enforces read ordering (the ASPLOS '26 paper,
 * Fig 5). */
enum oms_read_order {
	OMS_ORDER_RC_OPT = 0,	/* root complex, speculative (default) */
	OMS_ORDER_RC = 1,	/* root complex, blocking */
	OMS_ORDER_NIC = 2,	/* at the NIC: one line per round trip */
};

/* struct oms_ctx_attr.comp_mask: which optional fields are valid. */
#define OMS_CTX_ATTR_BACKEND	(1u << 0)	/* backend */
#define OMS_CTX_ATTR_NODE	(1u << 1)	/* node */
#define OMS_CTX_ATTR_QDEPTH	(1u << 2)	/* queue_depth */
#define OMS_CTX_ATTR_FLAGS	(1u << 3)	/* flags */
#define OMS_CTX_ATTR_TIMEOUT	(1u << 7)	/* timeout_ms */
#define OMS_CTX_ATTR_DEST_SEQ	(1u << 8)	/* dest_seq_mask */
#define OMS_CTX_ATTR_EMU	(1u << 10)	/* emu */
#define OMS_CTX_ATTR_ALL	0x58fu
/* Bits 4-6 and 9 were liboms.so.1's emulator fields (chaos, latency
 * model, read ordering, NIC rate), now struct oms_emu_attr's: refused. */

/* struct oms_ctx_attr.flags */
#define OMS_CTX_F_NONBLOCK	(1u << 0) /* -EAGAIN instead of waiting for a
					   * free slot when queue_depth ops
					   * are in flight */
#define OMS_CTX_F_NO_ORDERING	(1u << 1) /* baseline/test only: store
					   * classes, fences and acquire are
					   * ignored (everything unordered) */
/* (1u << 2) was liboms.so.1's NO_HOLD, now OMS_EMU_F_NO_HOLD: refused */
#define OMS_CTX_F_DEST_SEQ	(1u << 3) /* destination ordering by sequence
					   * number (ASPLOS '26, 5.2): ordered
					   * ops to a destination carry a
					   * sequence number and its reorder
					   * buffer applies them in program
					   * order, so the channel is in-order
					   * and strong stores to one
					   * destination never wait for acks;
					   * queue_depth <= 256 (default 256) */
#define OMS_CTX_F_HOLD_GLOBAL	(1u << 4) /* verbs: the agent of a listener
					   * made on this context holds
					   * class-2 responses with global
					   * scope (waiting for posted writes
					   * to any node) instead of per
					   * destination; on emu the hold
					   * scope is the device's
					   * (OMS_EMU_F_HOLD_GLOBAL): -EINVAL */
#define OMS_CTX_F_DOORBELL_BATCH (1u << 5) /* the doorbell waits for company:
					   * what a put, get or atomic issues
					   * is handed to the device once
					   * OMS_DOORBELL_BATCH operations
					   * wait, or at the next call that
					   * drives progress or waits
					   * (oms_progress, oms_quiet, the
					   * fences, oms_ctx_resume,
					   * oms_ctx_destroy) - one doorbell
					   * (verbs: one ibv_post_send of a
					   * chain) for many operations, as
					   * perftest's post list.  A program
					   * that then waits on its own (for a
					   * peer's answer in memory) calls
					   * oms_progress() first.  Since 2.1 */
#define OMS_CTX_F_ALL		0x3bu

/* OMS_CTX_F_DOORBELL_BATCH: operations that wait before the doorbell rings
 * by itself. */
#define OMS_DOORBELL_BATCH	16

/*
 * Context attributes.  Extensible: @size is sizeof() as the caller was
 * compiled (bytes beyond what the library knows must be zero), @comp_mask
 * says which optional fields are set; unset fields take defaults.
 *
 * Nothing here configures the emulated device: how it behaves (chaos,
 * latency model, read ordering, NIC rate, hold) is the device object's
 * (oms_emu_create() of oms_emu.h), and a context names the one it runs on
 * with @emu.  Contexts on emu that name none share the process's default
 * device, which runs with every default of struct oms_emu_attr.
 * (liboms.so.1 took those settings from the first context here.)
 */
struct oms_ctx_attr {
	uint32_t size;
	uint32_t comp_mask;
	uint32_t backend;	/* enum oms_backend */
	uint32_t node;		/* this context's node, < OMS_MAX_NODES; 0 */
	uint32_t queue_depth;	/* ops in flight, power of two 8..4096; 1024 */
	uint32_t flags;		/* OMS_CTX_F_* */
	uint32_t timeout_ms;	/* declare the device gone after this long
				 * without progress; 2000, or the
				 * OMS_TIMEOUT_MS environment variable */
	uint32_t dest_seq_mask;	/* destinations (bit n = node n) ordered by
				 * sequence number as with OMS_CTX_F_DEST_SEQ
				 * (which means all of them); the others are
				 * acknowledged channels */
	struct oms_emu *emu;	/* the emulated device to run on (emu
				 * backend; AUTO then means emu); NULL: the
				 * default device */
};

#define OMS_MAX_NODES	16

/* Memory region access rights (oms_mr_reg). */
#define OMS_ACCESS_REMOTE_READ	(1u << 0)
#define OMS_ACCESS_REMOTE_WRITE	(1u << 1)
#define OMS_ACCESS_REMOTE_ATOMIC (1u << 2)
#define OMS_ACCESS_ALL		0x7u

/*
 * Remote memory descriptor: what the owner of a region gives initiators
 * (out of band).  @dest is the owner's node: the destination that puts,
 * gets and fences name.
 */
struct oms_rmr {
	uint32_t dest;
	uint32_t region;
	uint32_t key;
	uint32_t access;
	uint64_t len;
};

/* Capability query answer (oms_query_caps).  @size first: set it. */
#define OMS_CAP_DEST_ORDER_HW		(1u << 0) /* destination ordering in
						   * NIC/root complex silicon */
#define OMS_CAP_DEST_ORDER_EMULATED	(1u << 1) /* done by the emulation */
#define OMS_CAP_ACQUIRE_READ		(1u << 2)
#define OMS_CAP_STRONG_STORE		(1u << 3)
#define OMS_CAP_RESP_HOLD		(1u << 4) /* Gen-Z ordered class
						   * (verbs: to connections
						   * whose listener runs the
						   * agent) */
#define OMS_CAP_CHAOS			(1u << 5) /* reordering mode is on */
#define OMS_CAP_LATENCY_MODEL		(1u << 6)
#define OMS_CAP_ACQUIRE_AT_SOURCE	(1u << 7) /* acquire reads are ordered
						   * by the initiator waiting
						   * (no silicon support):
						   * correct, slower */
#define OMS_CAP_CONNECT			(1u << 8) /* oms_listen/oms_connect */
#define OMS_CAP_DEST_ORDER_AGENT	(1u << 9) /* verbs: a connection's
						   * listener runs the
						   * destination agent, which
						   * orders acquire reads on
						   * its CPU */

struct oms_caps {
	uint32_t size;
	uint32_t flags;			/* OMS_CAP_* */
	uint32_t backend;		/* enum oms_backend in use */
	uint32_t read_order;		/* enum oms_read_order */
	uint32_t max_nodes;
	uint32_t queue_depth;
	uint64_t max_op_len;		/* bytes per put/get */
	uint64_t chaos_seed;		/* 0 when not reordering */
	char dest_ordering[32];		/* "hardware", "emulated",
					 * "source" (acquire at source) or
					 * "agent" (verbs, every connection
					 * served by an agent) */
	char backend_name[16];
	char device[32];		/* RDMA device name, "" if none */
	int32_t numa_node;		/* device's NUMA node, -1 unknown */
	uint32_t reserved;
	/* Why this backend: the attribute, OMS_BACKEND, or what AUTO found
	 * (no RDMA device; a device but rdma-core not loadable, and why).
	 * Filled only when caps->size covers it (added in 0.1). */
	char backend_why[160];
};

/* Context statistics (oms_ctx_stats).  @size first: set it. */
struct oms_stats {
	uint32_t size;
	uint32_t pad;
	uint64_t puts, gets, atomics, fences;
	uint64_t held;			/* stores held by the orderer */
	uint64_t completed, failed;
	uint64_t key_drops;		/* device-wide wrong-key drops
					 * (IBM's patent) */
	uint64_t outstanding;		/* ops not yet complete */
	uint64_t cancelled;		/* ops not performed because an
					 * earlier one they follow failed */
	uint64_t stale_acks;		/* stale or duplicate acknowledgements
					 * ignored */
	/* Since 2.1 (a smaller @size leaves them out): */
	uint64_t doorbells;		/* times the device was told of new
					 * work (verbs: ibv_post_send calls) */
	uint64_t dev_completions;	/* completion entries taken from the
					 * device (verbs: CQEs; one signaled
					 * CQE completes the unsignaled WRs
					 * before it too) */
};

struct oms_ctx;
struct oms_mr;
struct oms_listener;

/* ---- Part 1: exported calls ------------------------------------------ */

/*
 * Create a context.  Backend: attr->backend if set, else the OMS_BACKEND
 * environment variable ("emu", "verbs"), else verbs when an RDMA device is
 * present and rdma-core can be loaded, else emu; oms_caps.backend_why says
 * which.  liboms.so does not depend on rdma-core or libnuma: the verbs
 * backend loads libibverbs.so.1 and librdmacm.so.1 (and libnuma.so.1 if
 * there) when a context first asks for it, so a program that only uses
 * the emulated device runs where they are not installed.
 * @attr may be NULL (all defaults).
 * Errors: -EINVAL (bad field, unknown comp_mask or flag bit), -E2BIG
 * (attr larger than known with non-zero tail), -ENODEV (backend asked for
 * is not available), -ELIBACC (verbs asked for, rdma-core not loadable),
 * -ENOMEM, -EBUSY (too many contexts; or emu, no device named: the
 * running default device has other settings than @attr's emu fields ask).
 */
int oms_ctx_create(const struct oms_ctx_attr *attr, struct oms_ctx **ctx);

/*
 * Destroy a context: completes (quiet) what is outstanding, closes its
 * listeners, deregisters its regions.  Returns the first error quiet
 * reported, or 0; -EINVAL for NULL; the context is gone either way,
 * except: -EBUSY while a KVS server, client or writer made with it
 * (oms_kvs.h) still exists - they own its regions and listeners - and
 * nothing is changed then: destroy them first, then the context.
 */
int oms_ctx_destroy(struct oms_ctx *ctx);

/*
 * The version of the header compiled against; oms_version() returns the
 * library's at run time, "MAJOR.MINOR.PATCH".  A program may refuse a
 * library older than its header (same MAJOR: same ABI, the soname).
 * 2.1 added oms_listener_peers(), OMS_CTX_F_DOORBELL_BATCH and two
 * counters of struct oms_stats; 2.0 (liboms.so.2) took the emulated
 * device's settings out of struct oms_ctx_attr (into oms_emu.h's device object); 1.0 (liboms.so.1)
 * renumbered the transmit classes of oms_tx.h into oms_order.h's
 * numbering; 0.1 (liboms.so.0) was the first.
 */
#define OMS_VERSION_MAJOR 2
#define OMS_VERSION_MINOR 2
#define OMS_VERSION_PATCH 0

const char *oms_version(void);

/*
 * Capabilities.  caps->size must be set; the answer says whether
 * destination ordering is done in hardware or emulated.  -EINVAL.
 * With a NULL @ctx: what oms_ctx_create(NULL) would choose now and why
 * (backend, backend_name, backend_why; the rest zero), or why it would
 * fail, returning the error the create gives (-EINVAL for a bad
 * OMS_BACKEND, -ENODEV for verbs without an RDMA device, -ELIBACC without
 * rdma-core): a program whose context cannot be made can say why.
 */
int oms_query_caps(struct oms_ctx *ctx, struct oms_caps *caps);

/* Statistics of @ctx.  stats->size must be set.  -EINVAL. */
int oms_ctx_stats(struct oms_ctx *ctx, struct oms_stats *stats);

/*
 * Register [@addr, @addr+@len) as a region of this context's node that
 * initiators may access with the rights in @access (OMS_ACCESS_*).  The
 * key is chosen by the library (as in IBM's patent: operations must
 * carry it).
 * A range no memory can have is refused on every backend: -EOVERFLOW
 * when @len exceeds PTRDIFF_MAX (SIZE_MAX among them), -EINVAL when
 * @addr+@len wraps past the end of the address space (ending exactly at
 * its top included); nothing is registered then.
 * Errors: -EINVAL, -EOVERFLOW, -ENOSPC (region table full), -ENOMEM.
 */
int oms_mr_reg(struct oms_ctx *ctx, void *addr, size_t len, uint32_t access,
	       struct oms_mr **mr);

/* Deregister; later operations on it complete with -EACCES.  -EINVAL;
 * -EBUSY while a listener serves it. */
int oms_mr_dereg(struct oms_mr *mr);

/* The descriptor to hand to initiators.  -EINVAL. */
int oms_mr_remote(const struct oms_mr *mr, struct oms_rmr *rmr);

/*
 * Host (CPU) store into one's own region, coherent with the device: an
 * ordered read of the device that is speculating on these lines is
 * squashed and retried (the ASPLOS '26 paper's RC-opt).  Plain CPU
 * stores to a region are allowed too but are not snooped.  Errors:
 * -EINVAL, -ERANGE.
 */
int oms_mr_write(struct oms_mr *mr, uint64_t off, const void *src,
		 size_t len);

/* Host read of one's own region, coherent with the device.  -EINVAL,
 * -ERANGE. */
int oms_mr_read(struct oms_mr *mr, uint64_t off, void *dst, size_t len);

/*
 * Put @len bytes from @buf to @dst at @off with store class @cls
 * (NVIDIA's ordered-store patent application, enum oms_store_class).
 * Non-blocking: @buf must stay unchanged until oms_fence_local() or
 * oms_quiet() returns.  A STRONG store is
 * performed only after every earlier ordered operation of the context to
 * any destination; it never blocks the caller (it is held and released by
 * later calls).  A RELEASE store waits, at its destination, for the
 * context's earlier operations to that destination.  WEAK stores are
 * unordered among themselves except to the same bytes.
 * Errors: -EINVAL (NULL, len 0, bad class, dest out of range), -ERANGE
 * (off+len beyond dst->len), -EMSGSIZE (len > max_op_len), -EAGAIN
 * (NONBLOCK and queue full), -ENODEV/-ETIMEDOUT (device gone).  Remote
 * failures (wrong key, bad address) are reported by oms_quiet(); a store
 * ordered after a failed operation is not performed (-ECANCELED, see
 * oms_ctx_resume()).
 */
int oms_put(struct oms_ctx *ctx, const struct oms_rmr *dst, uint64_t off,
	    const void *buf, size_t len, enum oms_store_class cls);

/*
 * Get @len bytes of @src at @off into @buf.  Non-blocking: @buf is valid
 * after oms_quiet().  An ordered operation: it sees every earlier put and
 * atomic of the context to the same bytes and none of the later ones;
 * it is ordered after the operations that precede an oms_fence() of its
 * destination (on a DEST_SEQ destination: after every earlier ordered
 * operation to it), and a later STRONG store waits for it.  @flags:
 * OMS_READ_RELAXED or OMS_READ_ACQUIRE (the ASPLOS '26 paper: no later
 * operation of the context is performed before it), optionally |
 * OMS_READ_RESP_ORDERED (HPE's Gen-Z patent).  Errors as oms_put().
 */
int oms_get(struct oms_ctx *ctx, void *buf, const struct oms_rmr *src,
	    uint64_t off, size_t len, unsigned int flags);

/*
 * Atomic fetch-and-add / compare-and-swap of the 64-bit word at @off (8-byte
 * aligned).  Non-blocking: *@old is valid after oms_quiet() (@old may be
 * NULL).  Ordered like a WEAK store (NVIDIA's patent application): a
 * later STRONG store or a fence waits for it; it waits for earlier fences
 * of its destination (as NVSHMEM's AMOs); a later acquire get or RELEASE
 * store to its destination is performed after it (a lock taken by CAS
 * guards the reads after it).
 * Errors as oms_put(), and -EINVAL for a misaligned @off.
 */
int oms_atomic_fadd(struct oms_ctx *ctx, const struct oms_rmr *dst,
		    uint64_t off, uint64_t add, uint64_t *old);
int oms_atomic_cas(struct oms_ctx *ctx, const struct oms_rmr *dst,
		   uint64_t off, uint64_t expect, uint64_t desired,
		   uint64_t *old);

/*
 * Fence @dest (NVSHMEM's fence): ordered operations to @dest issued
 * after the fence become visible only after those issued before it.
 * Other destinations are not ordered.  Non-blocking; free when nothing
 * is outstanding.  Errors: -EINVAL (bad dest), -ENODEV.
 */
int oms_fence(struct oms_ctx *ctx, uint32_t dest);

/*
 * Fence every destination (NVSHMEM's fence over all PEs): ordered
 * operations issued after it become visible only after every ordered
 * operation issued before it, to any destination.  Non-blocking.
 * Errors: -EINVAL, -ENODEV.
 */
int oms_fence_global(struct oms_ctx *ctx);

/*
 * Local fence (IBM's patent): returns when every source buffer handed to
 * earlier puts may be reused.  Blocks.  Returns 0, -EINVAL, or the
 * device's death (-ENODEV/-ETIMEDOUT).
 */
int oms_fence_local(struct oms_ctx *ctx);

/*
 * Quiet (NVSHMEM, IBM's patent): returns when every earlier operation of
 * this context is complete and visible; only this context's.
 * Returns 0, or the first error of an operation completed since the last
 * quiet (-EACCES wrong key, -EKEYREJECTED wrong key past the drop
 * threshold, -EFAULT bad remote address, -EPERM missing access right,
 * -EMSGSIZE, -ENODEV/-ETIMEDOUT device gone: every pending op fails,
 * nothing hangs).
 */
int oms_quiet(struct oms_ctx *ctx);

/*
 * Resume after a failure (docs/ordering.md, "Failures").  When an
 * operation fails, every later operation ordered after it (a strong store,
 * an operation behind a fence of its destination or behind a failed
 * acquire, a release store to its destination, every later operation of
 * an in-order channel that carried it) is not performed and completes with
 * -ECANCELED, until this call.  One exception, so that ordered reads stay
 * pipelined: a get to the destination of a failed acquire, issued while
 * the acquire was in flight, may still be performed (docs/ordering.md).  It waits until nothing is outstanding,
 * forgets the failure and resumes the channels the device stopped.
 * Returns 0, -EINVAL, or the device's death (-ENODEV/-ETIMEDOUT).  On
 * verbs a connection whose QP went to error stays unusable: connect again.
 */
int oms_ctx_resume(struct oms_ctx *ctx);

/*
 * Drive progress without blocking: release held stores, reap completions.
 * Returns the number of operations outstanding, or -EINVAL/-ENODEV.  On
 * an emulated device with a latency model a second call in a row that
 * finds nothing (nothing issued between) is a thread polling for the
 * device: it waits (1 ms at most) for the next completion, so that the
 * model's clock, which runs past only the threads that wait in liboms,
 * can move (oms_emu.h).
 */
int oms_progress(struct oms_ctx *ctx);

/*
 * Serve @mr to initiators that connect to @addr:@port (numeric or a name;
 * @addr NULL or "" = every local address).  Passive: the owner's CPU takes
 * no part in the operations initiators then issue on the region.  On verbs
 * a thread accepts librdmacm connections, gives each its own RC QP on this
 * context's protection domain and sends the region's address, rkey and
 * length in the accept's private data; on emu the pair is recorded in a
 * process-wide table.  Close listeners before deregistering @mr
 * (oms_ctx_destroy closes them first).
 * Errors: -EINVAL, -EADDRINUSE, -EADDRNOTAVAIL, -ENOMEM, -ENODEV,
 * -ENOSPC (emu: the listener's window needs a region slot).
 */
int oms_listen(struct oms_ctx *ctx, const char *addr, const char *port,
	       struct oms_mr *mr, struct oms_listener **out);

/*
 * Stop accepting and disconnect the listener's initiators: what they send
 * through the descriptor it gave them fails from then on (verbs:
 * -ECONNRESET; emu: the descriptor's key is revoked, -EACCES).  -EINVAL.
 */
int oms_listener_close(struct oms_listener *l);

/*
 * How many initiators are connected to @l now: on verbs the connections it
 * accepted that have not disconnected; on emu the contexts that connected
 * to it and are not destroyed yet.  An initiator's last operations
 * complete only after they reached memory (its NIC waits for the
 * acknowledgement), so a server that closes as soon as it sees the last
 * data can cut them off; one that waits for this to reach 0 lets each
 * initiator leave first.  -EINVAL for NULL.  Since 2.1.
 */
int oms_listener_peers(const struct oms_listener *l);

/*
 * Connect to a listener and describe its region in *@rmr: rmr->dest is the
 * destination that puts, gets and fences then name (one per connection on
 * verbs, the owner's node on emu).  Everything the peer sends is checked
 * (length, magic, version, sizes, bounds) before use.  Waits at most
 * @timeout_ms (0 = 5000).
 * Errors: -EINVAL, -ECONNREFUSED (nobody listens), -ETIMEDOUT,
 * -EHOSTUNREACH, -EPROTO (the peer's reply is malformed), -ENOSPC (no
 * destination left: OMS_MAX_NODES), -ENODEV.
 */
int oms_connect(struct oms_ctx *ctx, const char *host, const char *port,
		uint32_t timeout_ms, struct oms_rmr *rmr);

/* ---- Part 2: static inline helpers ---------------------------------- */

/* Default-initialised attribute struct. */
static inline struct oms_ctx_attr oms_ctx_attr_default(void)
{
	struct oms_ctx_attr a;

	/* memset, not "= { 0 }": C++ -Wextra warns about the fields left out. */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	return a;
}

static inline int oms_put_strong(struct oms_ctx *ctx,
				 const struct oms_rmr *dst, uint64_t off,
				 const void *buf, size_t len)
{
	return oms_put(ctx, dst, off, buf, len, OMS_STORE_STRONG);
}

static inline int oms_put_weak(struct oms_ctx *ctx, const struct oms_rmr *dst,
			       uint64_t off, const void *buf, size_t len)
{
	return oms_put(ctx, dst, off, buf, len, OMS_STORE_WEAK);
}

#ifdef __cplusplus
}
#endif
#endif
