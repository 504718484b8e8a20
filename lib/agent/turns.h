/* SPDX-License-Identifier: MIT */
/*
 * Turns: how one serving thread of the destination agent shares itself
 * among its connections (docs/dest-agent.md, "Sharing").  Each connection
 * with work waiting (a backlog of descriptors rung and not yet taken) gets
 * a turn of at most @quantum descriptors; a pass gives every connection
 * one turn, from a first connection that moves on by one each pass, and
 * passes go on until one moves nothing.  A requester that floods its ring
 * therefore gets its turn and no more.
 *
 * Pure: no verbs, no clock, no memory of its own.  The owner says how
 * many connections are live and which of them can move, and takes their
 * descriptors in ring order when asked (struct oms_turn_ops); this file
 * decides the order of the turns and keeps count of the promise it makes,
 * so that a test can drive it exhaustively and an agent can be held to
 * the count at run time.
 *
 * The promise.  A backlog that waits for its turn sees at most one turn
 * of each other connection go first, two when the rotation puts it last
 * in the next pass: at most 2 (n - 1) quantum descriptors of the others,
 * n the live connections (the most of them while it waited).  The wait is
 * counted from the start of oms_turns_run() or from the connection's last
 * full turn (a turn of a whole quantum that left more behind).  A short
 * turn ends the wait: its backlog emptied, or what was left cannot move
 * yet (no room for its answers), and then it waits for its requester's
 * acknowledgements, not for the other connections.  How fast the
 * requesters' CPUs go cannot move this count, unlike their shares of what
 * is served: that is why the count, not the shares, is what a test of
 * fairness asserts.
 */
#ifndef OMS_AGENT_TURNS_H
#define OMS_AGENT_TURNS_H

#include <stdint.h>

#define OMS_TURN_NOT_WAITING UINT64_MAX

/* Per connection, kept by its owner: since when its backlog waits. */
struct oms_turn_wait {
	uint64_t from;		/* oms_turns.taken then; OMS_TURN_NOT_WAITING */
	uint32_t nlive;		/* live connections then */
};

/* The count of the promise, over every oms_turns_run(). */
struct oms_turn_stats {
	uint64_t waited;	/* turns taken after others' descriptors */
	uint64_t behind_max;	/* the most descriptors one waited behind */
	uint64_t behind_bound;	/* ... and the bound for it then */
	uint64_t past;		/* turns that waited past their bound */
};

struct oms_turns {
	uint32_t quantum;	/* descriptors a turn, at most */
	uint32_t first;		/* where the next pass starts */
	uint64_t taken;		/* descriptors taken, of every connection */
	struct oms_turn_stats st;
};

/*
 * The owner's side.  Connections are numbered 0 .. nlive() - 1 (a packed
 * array in the agent); nlive() is asked again each turn, as a turn may
 * close a connection.  ready(k): connection k has a backlog and has not
 * failed.  take(k, most): take up to @most of k's backlog, in ring order,
 * while it has room; returns how many it took.
 */
struct oms_turn_ops {
	uint32_t (*nlive)(void *owner);
	struct oms_turn_wait *(*wait)(void *owner, uint32_t k);
	int (*ready)(void *owner, uint32_t k);
	uint32_t (*take)(void *owner, uint32_t k, uint32_t most);
};

void oms_turns_init(struct oms_turns *t, uint32_t quantum);
void oms_turn_wait_init(struct oms_turn_wait *w);

/*
 * Every backlog, round-robin, a quantum a turn, until a pass moves
 * nothing.  Returns the descriptors taken.
 */
uint64_t oms_turns_run(struct oms_turns *t, const struct oms_turn_ops *ops,
		       void *owner);

/* The promise's bound for a wait that saw at most @nlive connections. */
uint64_t oms_turns_bound(const struct oms_turns *t, uint32_t nlive);

#endif
