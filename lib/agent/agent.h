/* SPDX-License-Identifier: MIT */
/*
 * The destination agent's core (docs/dest-agent.md, "Layers", 3):
 * what a listener's agent does with the requests of its connections.  It
 * has no verbs and no thread of its own: the verbs backend drives it
 * from the agent thread, and tests drive it from a model requester on the
 * host, exactly as the engine's state machines are driven by their model
 * fabrics.
 *
 * The transport hands over each connection's 64-byte descriptors in ring
 * order (oms_agent_submit()).  The core decodes and validates a descriptor
 * (agent_desc.h) before it uses any field, then:
 *   - a sequence-numbered one (OMS_AD_F_SEQ) goes into its stream's reorder
 *     buffer (engine/rob.h) and is performed in sequence order: a later
 *     number that arrived first waits for the gap (L36, D1 of
 *     docs/ordering.md);
 *   - any other is performed on arrival, in ring order.
 * Performing happens here, on host memory, on the agent's CPU:
 *   - a put copies its staging slot into the region, 64-byte line by line
 *     in address order with a release fence between lines;
 *   - an acquire get reads line by line in address order with an acquire
 *     fence between lines, so a host writer's release order is seen (L29,
 *     L30); a relaxed get may read its lines in any order (the agent's
 *     chaos_seed permutes them, as the emulated device's chaos does, so
 *     that tests can show what acquire forbids);
 *   - atomics are the CPU's own, on the 8 aligned bytes;
 *   - a get's bytes and an atomic's old value go to the requester through
 *     the transport's land() at once, in performing order;
 *   - a class-2 get (OMS_AD_F_RESP_ORDERED) is read when performed, but its
 *     response is held (engine/hold.h, seed 002) while posted writes that
 *     the owner issued to the reader's node before it are unacknowledged
 *     (L23-L25); class-2 answers leave in the order they were handed in,
 *     one the hold let go before a later one that could leave at once.  The transport reports those writes with
 *     oms_agent_posted() and their acks with oms_agent_posted_ack().
 * The agent performs one operation at a time, so the RLSQ's pipelining
 * (RC-opt's speculation) has nothing to hide here: an acquire get is the
 * RC discipline at the speed of local loads (docs/dest-agent.md says why).
 *
 * Failures (L37).  A refused descriptor performs nothing and completes
 * with its error: -EPROTO (torn or malformed; its tag is not trusted and
 * reads 0), -EINVAL (another connection's stream or staging slot), -EACCES
 * (key or right: a key drop, counted), -ERANGE, -ESTALE (a number already
 * used), -ENOSPC (past the window: the requester ignored its credit),
 * -EEXIST (a number already buffered).  A refused member of a stream stops
 * the stream at its number: members before it are still performed in
 * order; it and every later member complete with -ECANCELED (it with its
 * own error), as on the emulated device.  A number outside the window or a
 * duplicate cannot be placed, so it stops the stream where it stands
 * (nothing buffered is performed, not even members below an earlier stop
 * point: only a requester that ignores its credit or forges numbers gets
 * there).  A refused member that was still waiting when its stream was
 * dropped (a resume, an earlier stop) completes with its own error.  A NOP with OMS_AD_F_CANCEL stands for
 * an op the requester's orderer cancelled: the stream stops at it.  So
 * does a member that fails when performed (its region revoked while it
 * waited, or its answer that could not land: the requester sees it
 * failed, and its orderer cancels what follows).  A held class-2 answer
 * that cannot land when it is let go fails alone: the members after it
 * were performed already, as the hold delays only the answer.
 * A NOP with OMS_AD_F_RESUME resumes its stream at its number, in ring
 * order (the requester's oms_ctx_resume(): after every descriptor of the
 * old run, before every one of the new); oms_agent_resume() does the same
 * from outside the ring.
 *
 * Not thread-safe: one caller at a time (the agent thread).
 */
#ifndef OMS_AGENT_AGENT_H
#define OMS_AGENT_AGENT_H

#include <stdint.h>

#include "agent/agent_desc.h"

#define OMS_AGENT_MAX_CONNS	256
#define OMS_AGENT_MAX_REGIONS	64
#define OMS_AGENT_MAX_PEERS	64	/* reader nodes the hold tracks */
#define OMS_AGENT_MAX_STREAMS	64	/* per connection */

/* struct oms_agent_attr.flags */
#define OMS_AGENT_F_NO_ORDER	(1u << 0) /* baseline for controls: numbers
					   * ignored (performed on arrival),
					   * acquire read as relaxed, class-2
					   * responses not held */
#define OMS_AGENT_F_HOLD_GLOBAL	(1u << 1) /* a class-2 response waits for
					   * posted writes to any node, not
					   * only the reader's (L24) */
#define OMS_AGENT_F_ALL		0x3u

struct oms_agent_ops {
	/*
	 * Write @len bytes from @src to the requester of connection @conn at
	 * @laddr (its landing rkey @lrkey): a get's bytes or an atomic's old
	 * value, in performing order.  @src is valid only during the call.
	 * 0, or -errno: the op then completes with that error (an atomic
	 * has been performed all the same: only its answer is lost).
	 */
	int (*land)(void *arg, uint32_t conn, uint64_t laddr, uint32_t lrkey,
		    const void *src, uint32_t len);
	/*
	 * Optional.  Called after a class-2 get of reader node @peer has
	 * read its bytes and before the hold decides whether its answer
	 * waits: report now, with oms_agent_posted() and
	 * oms_agent_posted_ack(), every posted write the owner has issued
	 * and every ack it has had.  The core fences between its read and
	 * this call; the owner's side must count a write before any store
	 * that follows it in its program can be seen (a full fence after
	 * the count), so that a write issued before the host store that the
	 * get read is reported.  Nonzero: the writes that can hold this
	 * answer (to @peer, or to any node in global scope) could not all
	 * be reported (the hold's window is full), and the get completes
	 * with -ENOBUFS rather than answer early.
	 */
	int (*sync)(void *arg, uint32_t peer);
	void *arg;
};

struct oms_agent_attr {
	uint32_t flags;		/* OMS_AGENT_F_* */
	uint32_t max_cpl;	/* completions queued before poll, power of
				 * two >= 2 * (OMS_AD_MAX_WINDOW + 1); 0:
				 * 4096 */
	uint32_t max_held;	/* class-2 responses held at once, 1..65536;
				 * 0: 1024 (one more, or one past 64 MiB of
				 * held bytes, completes -ENOBUFS) */
	uint32_t reserved;	/* 0 */
	uint64_t chaos_seed;	/* relaxed gets read their lines in an order
				 * drawn from it; 0: address order */
};

/* What a connection was given (the agent keeps its own copy). */
struct oms_agent_conn_attr {
	uint16_t nstreams;	/* 1..OMS_AGENT_MAX_STREAMS */
	uint16_t window;	/* power of two, 1..OMS_AD_MAX_WINDOW */
	uint32_t peer;		/* the requester's node, < OMS_AGENT_MAX_PEERS */
	uint32_t stage_slots;	/* staging slots (0: no puts) */
	uint32_t stage_len;	/* bytes each, <= OMS_AD_MAX_LEN */
	const void *stage;	/* stage_slots * stage_len bytes that the
				 * requester writes payloads into */
	uint32_t fmt;		/* its descriptors' enum oms_ad_fmt, which
				 * the handshake agreed; 0: OMS_AD_FMT_CRC32C */
};

/* One finished request. */
struct oms_agent_cpl {
	uint32_t conn;
	uint32_t tag;		/* the descriptor's (0 for -EPROTO) */
	int32_t status;		/* 0 or -errno (above) */
	uint8_t op;		/* enum oms_ad_op; 0 for -EPROTO */
	uint8_t pad;
	uint16_t stream;
	uint16_t seq;		/* with OMS_AD_F_SEQ */
	uint16_t pad2;
	uint32_t len;		/* the descriptor's (0 for -EPROTO): what
				 * its answer could have landed */
	uint64_t old;		/* atomics: the value before */
};

struct oms_agent_stats {
	uint64_t submitted;	/* descriptors handed in */
	uint64_t performed;	/* ops performed (NOPs included) */
	uint64_t refused;	/* completed with a validation error */
	uint64_t torn;		/* of which -EPROTO */
	uint64_t key_drops;	/* of which -EACCES */
	uint64_t cancelled;	/* completed with -ECANCELED */
	uint64_t waited;	/* members that arrived before a gap */
	uint64_t held;		/* class-2 responses held */
	uint64_t land_errors;	/* land() failures */
};

struct oms_agent;

/* 0, -EINVAL (bad attr, ops without land), -ENOMEM. */
int oms_agent_create(const struct oms_agent_attr *attr,
		     const struct oms_agent_ops *ops, struct oms_agent **out);
void oms_agent_destroy(struct oms_agent *ag);

/*
 * Serve @len bytes at @base (8-byte aligned) under @key with @access
 * (OMS_ACCESS_* of oms.h).  0, -EEXIST (key in use), -ENOSPC, -EINVAL.  Removing revokes:
 * later descriptors with the key are refused with -EACCES.
 */
int oms_agent_region_add(struct oms_agent *ag, void *base, uint64_t len,
			 uint32_t key, uint32_t access);
int oms_agent_region_remove(struct oms_agent *ag, uint32_t key);

/* A connection: its id in *@id.  0, -EINVAL, -ENOSPC, -ENOMEM. */
int oms_agent_conn_open(struct oms_agent *ag,
			const struct oms_agent_conn_attr *attr, uint32_t *id);
/* The requester is gone: its buffered members are dropped without
 * completions, its completions not yet polled are dropped, and its held
 * responses are never landed; the id may be given again at once.  0,
 * -EINVAL. */
int oms_agent_conn_close(struct oms_agent *ag, uint32_t id);

/*
 * One descriptor of connection @conn (OMS_AD_LEN bytes), in ring order.
 * 0: taken (performed, buffered, or refused with a completion queued);
 * -EAGAIN: too few completions free - poll, then hand it in again
 * (nothing changed); -EINVAL: no such connection or NULL.
 */
int oms_agent_submit(struct oms_agent *ag, uint32_t conn, const void *desc);

/* Up to @max completions, oldest first, and the class-2 responses the
 * hold let go.  Returns how many. */
int oms_agent_poll(struct oms_agent *ag, struct oms_agent_cpl *cpl,
		   unsigned int max);

/*
 * Resume @stream of @conn at number @next: what it buffered completes
 * with -ECANCELED, and members flow again.  0, -EINVAL, -EAGAIN (too few
 * completions free: poll first; nothing changed).
 */
int oms_agent_resume(struct oms_agent *ag, uint32_t conn, uint16_t stream,
		     uint16_t next);

/*
 * The owner issued a posted write to node @peer: its id in *@id.  Its
 * ack: oms_agent_posted_ack().  0, -EINVAL, -EAGAIN (too many unacked:
 * the hold's window), -ENOENT/-EALREADY for an unknown or repeated ack
 * (counted by the hold, nothing changes).
 */
int oms_agent_posted(struct oms_agent *ag, uint32_t peer, uint32_t *id);
int oms_agent_posted_ack(struct oms_agent *ag, uint32_t peer, uint32_t id);

/* Class-2 answers held or let go and not yet landed (0 for NULL). */
uint32_t oms_agent_held(const struct oms_agent *ag);

/* Next number @stream of @conn will perform; -EINVAL. */
int oms_agent_next_seq(const struct oms_agent *ag, uint32_t conn,
		       uint16_t stream);

void oms_agent_stats(const struct oms_agent *ag, struct oms_agent_stats *st);

#endif
