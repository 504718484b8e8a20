/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for liboms tests.  Every symbol carries the t_ prefix.
 *
 * Randomised tests are seeded: the seed comes from OMS_TEST_SEED when set,
 * otherwise a fixed default, so a failure is reproducible by exporting the
 * seed it printed.
 */
#ifndef OMS_TESTS_HELPERS_H
#define OMS_TESTS_HELPERS_H

#include <stdint.h>
#include <stddef.h>

struct t_rng {
	uint64_t s;
};

/* Seed from OMS_TEST_SEED, or @dflt if unset. */
uint64_t t_seed(uint64_t dflt);

static inline void t_rng_init(struct t_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

/* splitmix64: fast, full period, good enough to schedule events. */
static inline uint64_t t_rng_next(struct t_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static inline uint32_t t_rng_below(struct t_rng *r, uint32_t n)
{
	return (uint32_t)(((t_rng_next(r) >> 32) * n) >> 32);
}

/* Fisher-Yates shuffle of @n uint32_t values. */
void t_shuffle_u32(struct t_rng *r, uint32_t *v, size_t n);

/* Trial count: OMS_TEST_TRIALS overrides @dflt (for long soak runs). */
unsigned long t_trials(unsigned long dflt);

#endif

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
int t_fab_drained(const struct t_fabric *f);
/* Deep copy for explorers: @dst must have been t_fab_init()ed alike. */
void t_fab_copy(struct t_fabric *dst, const struct t_fabric *src);
