/* SPDX-License-Identifier: MIT */
/*
 * Test support of internals: model fabrics that drive the ordering engine
 * (lib/engine/) directly, for the engine's explorers, fuzzers and litmus
 * tests.  Built only into the tests of internals (INTERNAL_TESTS in the
 * Makefile): it includes lib/ headers, which the tests of public behaviour
 * cannot see.  Every symbol carries the t_ prefix.
 */
#ifndef OMS_TESTS_ENGINE_MODEL_H
#define OMS_TESTS_ENGINE_MODEL_H

#include "helpers.h"
/*
 * A model fabric for the store orderer: what the engine is supposed to be
 * safe against.  Channels deliver ordered stores as their kind allows
 * (POSTED: in issue order; ACKED: any order, but never two writes to one
 * address out of order), acks are cumulative messages that may arrive in
 * any order (so some are stale), a flush answers once every store issued
 * before it on its channel has landed, unordered stores land whenever.
 *
 * The observer checks, at every delivery, what the store classes forbid:
 * a strong store lands only after every earlier ordered store; a store to
 * a fenced destination lands only after the ordered stores to that
 * destination before the fence.  In bypass mode the orderer is skipped
 * (every store goes straight to its channel, fences do nothing): the same
 * observer then counts how often the forbidden outcomes really happen.
 */
#include "engine/store_order.h"

#define T_MAX_OPS	48
#define T_MAX_CH	4
#define T_MAX_MSGS	64
#define T_NADDR		8

enum t_op_kind { T_OP_STORE = 0, T_OP_FENCE = 1 };

struct t_op {
	uint8_t kind;		/* enum t_op_kind */
	uint8_t cls;		/* store class */
	uint16_t chan;		/* store: channel */
	uint16_t scope;		/* fence: destination or OMS_SO_ALL */
	uint8_t addr;		/* store: address < T_NADDR */
	uint32_t val;
};

enum t_ev_kind {
	T_EV_SUBMIT = 1,	/* submit the next program operation */
	T_EV_DELIVER,		/* a = channel, b = index in its queue */
	T_EV_DELIVER_U,		/* b = index of an unordered store */
	T_EV_ACK,		/* a = channel, b = ack message index */
	T_EV_FLUSH,		/* a = channel: flush response arrives */
};

struct t_event {
	uint8_t kind, a, b;
};

struct t_fabric {
	struct oms_so so;
	int bypass, posted_acks;
	uint32_t nch, ndest;
	struct oms_so_chan_cfg cfg[T_MAX_CH];

	uint32_t nops, pc;
	struct t_op ops[T_MAX_OPS];
	uint8_t issued[T_MAX_OPS], delivered[T_MAX_OPS];
	uint32_t vis_time[T_MAX_OPS];	/* delivery order, 1-based */
	uint64_t opseq[T_MAX_OPS];	/* channel sequence once issued */
	uint32_t now;

	/* per channel: ordered stores in flight, in issue order */
	uint8_t q[T_MAX_CH][T_MAX_OPS];
	uint32_t qn[T_MAX_CH];
	uint64_t dbits[T_MAX_CH];	/* delivered channel sequences */
	uint64_t prefix[T_MAX_CH];	/* sequences 0..prefix-1 delivered */
	uint64_t bseq[T_MAX_CH];	/* bypass: sequence counter */
	uint64_t acks[T_MAX_CH][T_MAX_MSGS];
	uint32_t nacks[T_MAX_CH];
	uint8_t flush_req[T_MAX_CH];
	uint64_t flush_tok[T_MAX_CH];

	uint8_t uq[T_MAX_OPS];		/* unordered stores in flight */
	uint32_t uqn;

	uint32_t mem[T_MAX_CH][T_NADDR];	/* per destination */
	uint64_t violations;
	char why[160];
	int err;			/* engine call failed unexpectedly */
};

/* Set up channels; dests are cfg[i].dest.  Returns the oms_so_init code. */
int t_fab_init(struct t_fabric *f, uint32_t nch,
	       const struct oms_so_chan_cfg *cfg, uint32_t ndest, int bypass);
void t_fab_fini(struct t_fabric *f);
/* Append one program operation. */
void t_fab_store(struct t_fabric *f, uint8_t cls, uint16_t chan,
		 uint8_t addr, uint32_t val);
void t_fab_fence(struct t_fabric *f, uint16_t scope);
/* Enabled events; returns how many were written (at most @max). */
uint32_t t_fab_events(const struct t_fabric *f, struct t_event *ev,
		      uint32_t max);
/* Apply one event, then let the issuer poll the orderer. */
void t_fab_step(struct t_fabric *f, const struct t_event *ev);
/* Run to completion picking enabled events at random.  Returns the number
 * of steps taken; stops at @max_steps (a live-lock shows as that). */
uint32_t t_fab_run_random(struct t_fabric *f, struct t_rng *r,
			  uint32_t max_steps);
/* Every op submitted and delivered, orderer quiescent, counters balanced. */
int t_fab_settled(const struct t_fabric *f);
/* Deep copy for explorers: @dst must have been t_fab_init()ed alike. */
void t_fab_copy(struct t_fabric *dst, const struct t_fabric *src);

/*
 * A model device for whole programs (tests/engine_explorer_mixed.c,
 * tests/fuzz/mixed_order.c): puts of every class, gets, atomics and fences
 * of an ordering_model.h program go through the orderer, and the device
 * executes what it issues as lib/backend.h says a backend must:
 *   - one channel per destination, of kind ACKED, POSTED or SEQ;
 *   - same bytes: a write, or a read, never passes an earlier write of the
 *     same bytes on its channel; a write may pass an earlier read unless
 *     it carries OMS_SO_A_FENCE;
 *   - an acquire get: every get posted after it on its channel reads
 *     after it (OMS_WR_F_ACQUIRE);
 *   - OMS_SO_A_FENCE: executed only after every op posted before it on
 *     the channel is performed - on a SEQ channel, a member only after
 *     those outside the stream (the sequence order places it among the
 *     members); on an ACKED channel it is refused (-ECANCELED) if one of
 *     those failed;
 *   - ACKED: ops execute in any order, executing is performing, and the
 *     completion (any order) is visibility;
 *   - POSTED: puts execute in post order and reads do not pass them; an
 *     executed put completes at once but lands (is performed) later, in
 *     order; gets, atomics and flushes wait until every executed put
 *     landed (a non-posted read pushes posted writes); completions arrive
 *     in order; a flush completes after every earlier entry;
 *   - SEQ: POSTED, but ordered ops execute in sequence order (holes wait
 *     for the op, or the NOP a CANCEL fills them with, which stops the
 *     stream as a failed member: OMS_WR_F_CANCEL); same bytes and the
 *     RLSQ between two members go by the sequence order too; unordered
 *     puts pass the stream;
 *   - failures: an op marked fail is refused (-EACCES, not performed); an
 *     in-order channel then refuses everything it executes (-ECANCELED),
 *     flushes and NOPs included;
 *   - the source side calls oms_so_fail() for an error completion, acks
 *     cumulatively as completions fill the sequence prefix (like
 *     oms_ctx_ack_seq()), answers flushes, and calls oms_so_quiet() once
 *     the whole program is submitted.
 * Mutations (T_MX_MUT_*) break one of those duties, to show the reference
 * model notices.
 */
#include "ordering_model.h"

#define T_MX_CH		3
#define T_MX_Q		40
#define T_MX_NADDR	8
#define T_MX_NOSEQ	0xffffu
#define T_MX_HELD	48		/* the orderer's hold queue */

enum t_mx_mut {
	T_MX_MUT_NONE = 0,
	T_MX_MUT_NO_FENCE,	/* the device ignores OMS_SO_A_FENCE */
	T_MX_MUT_CANCEL_ISSUES,	/* a CANCEL is executed like an ISSUE */
	T_MX_MUT_POSTED_ACKED,	/* the orderer is told a posted channel is
				 * ACKED: a posted ack taken as visibility */
	T_MX_MUT_GET_EARLY_ACK,	/* a get completes when posted, before it
				 * read: the acquire barrier opens early */
	T_MX_MUT_SEQ_ARRIVAL,	/* a SEQ channel ignores sequence numbers */
	T_MX_MUT_POSTED_REORDER, /* a posted channel lands puts out of order */
	T_MX_MUT_NO_HOLD_STRONG, /* a strong put the orderer holds is
				  * performed at once (S1's hold dropped) */
	T_MX_MUT_NO_HOLD_OTHER,	/* any other op the orderer holds is
				 * performed at once (the holds for A1, A2,
				 * D1 and behind held ops dropped) */
	T_MX_NMUT
};

enum t_mx_ev_kind {
	T_MX_EV_SUBMIT = 1,	/* submit the next program op */
	T_MX_EV_EXEC,		/* a = channel, b = queue index */
	T_MX_EV_LAND,		/* a = channel, b = land queue index */
	T_MX_EV_CPL,		/* a = channel, b = completion index */
};

enum { T_MX_E_OP = 0, T_MX_E_FLUSH = 1, T_MX_E_NOP = 2 };

struct t_mx_ent {
	uint8_t type, op, flags, pidx;	/* pidx: post order on the channel */
	uint16_t seq;			/* T_MX_NOSEQ: none */
	uint16_t token;			/* flush: count covered */
	uint8_t cpl_sent;		/* mutation: completed already */
};

struct t_mx_cpl {
	uint8_t type, op;
	uint16_t seq, token;
	int16_t status;
};

struct t_mx_chan {
	struct t_mx_ent q[T_MX_Q];	/* posted, not executed */
	struct t_mx_cpl cq[T_MX_Q];	/* completions not yet reaped */
	uint8_t land[T_MX_Q];		/* executed puts not landed (ops) */
	uint8_t qn, cn, ln;
	uint8_t stopped;		/* in-order: refusing since a failure */
	uint8_t fail_post;		/* lowest pidx refused, 0xff none */
	uint8_t posts;
	uint64_t seqdone;		/* SEQ: numbers executed or filled */
	uint64_t ackbits;		/* source: completed sequences */
	uint64_t ackprefix;
};

struct t_mx {
	struct oms_so so;
	struct om_prog prog;
	struct om_trace tr;
	uint32_t nch, mut, pc, now;
	uint32_t early;			/* NO_HOLD mutations: ops performed
					 * while the orderer held them */
	uint8_t kind[T_MX_CH];		/* what the device does */
	struct t_mx_chan ch[T_MX_CH];
	uint64_t mem[T_MX_CH][T_MX_NADDR];
	int err;			/* an engine call failed */
	char why[120];
};

/* @kind[c]: channel c goes to destination c.  The program is set later
 * (f->prog, before the first step).  Returns the oms_so_init code. */
int t_mx_init(struct t_mx *f, uint32_t nch, const uint8_t *kind,
	      uint32_t mut);
void t_mx_fini(struct t_mx *f);
/* Set the program's channel facts from the kinds. */
void t_mx_set_prog(struct t_mx *f, const struct om_prog *p);
uint32_t t_mx_events(const struct t_mx *f, struct t_event *ev, uint32_t max);
void t_mx_step(struct t_mx *f, const struct t_event *ev);
/* Deep copy (@dst t_mx_init()ed alike). */
void t_mx_copy(struct t_mx *dst, const struct t_mx *src);
/* At the end (no event left): 0 if the engine drained with balanced
 * counters and the first error is the injected failure's; else -1 and
 * f->why says why.  Calls oms_so_resume(). */
int t_mx_finish(struct t_mx *f);
/* A digest of everything that decides the future and the verdict. */
uint64_t t_mx_digest(const struct t_mx *f);

#endif /* OMS_TESTS_ENGINE_MODEL_H */
