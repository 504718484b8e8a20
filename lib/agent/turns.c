// SPDX-License-Identifier: MIT
/*
 * Round-robin turns and the count of their promise (turns.h).
 */
#include "agent/turns.h"

void oms_turns_init(struct oms_turns *t, uint32_t quantum)
{
	*t = (struct oms_turns){ .quantum = quantum ? quantum : 1 };
}

void oms_turn_wait_init(struct oms_turn_wait *w)
{
	*w = (struct oms_turn_wait){ .from = OMS_TURN_NOT_WAITING };
}

uint64_t oms_turns_bound(const struct oms_turns *t, uint32_t nlive)
{
	return 2ull * (nlive ? nlive - 1 : 0) * t->quantum;
}

/* @n taken in a turn after @behind of others, by a wait @w. */
static void count(struct oms_turns *t, const struct oms_turn_wait *w,
		  uint32_t n, uint64_t behind, uint32_t nlive)
{
	uint64_t bound;

	if (!n || !behind)
		return;
	/* connections that left while it waited still had their turns */
	bound = oms_turns_bound(t, nlive > w->nlive ? nlive : w->nlive);
	t->st.waited++;
	if (behind > bound)
		t->st.past++;
	if (behind > t->st.behind_max) {
		t->st.behind_max = behind;
		t->st.behind_bound = bound;
	}
}

static uint32_t turn(struct oms_turns *t, const struct oms_turn_ops *ops,
		     void *owner, uint32_t k)
{
	struct oms_turn_wait *w = ops->wait(owner, k);
	uint64_t behind = w->from != OMS_TURN_NOT_WAITING ?
			  t->taken - w->from : 0;
	uint32_t n = ops->take(owner, k, t->quantum);
	uint32_t nlive = ops->nlive(owner);

	t->taken += n;		/* more than @most is the owner's bug: counted */
	count(t, w, n, behind, nlive);
	/* a full turn with more to take waits for the next one; a short one
	 * emptied the backlog or waits for room, not for the others */
	if (n >= t->quantum && ops->ready(owner, k)) {
		w->from = t->taken;
		w->nlive = nlive;
	} else {
		w->from = OMS_TURN_NOT_WAITING;
	}
	return n;
}

uint64_t oms_turns_run(struct oms_turns *t, const struct oms_turn_ops *ops,
		       void *owner)
{
	uint64_t start = t->taken;
	uint32_t nlive = ops->nlive(owner);
	uint32_t moved;

	/* each backlog that can move waits for its turn from here */
	for (uint32_t k = 0; k < nlive; k++) {
		struct oms_turn_wait *w = ops->wait(owner, k);

		if (ops->ready(owner, k) && w->from == OMS_TURN_NOT_WAITING) {
			w->from = t->taken;
			w->nlive = nlive;
		}
	}
	do {
		moved = 0;
		for (uint32_t k = 0; k < ops->nlive(owner); k++) {
			uint32_t c = (t->first + k) % ops->nlive(owner);

			if (ops->ready(owner, c))
				moved += turn(t, ops, owner, c);
		}
		nlive = ops->nlive(owner);
		t->first = nlive ? (t->first + 1) % nlive : 0;
	} while (moved);
	return t->taken - start;
}
