// SPDX-License-Identifier: MIT
/*
 * What a listener's agent tells its hold (lib/engine/hold.h, seed 002):
 * the puts this process's contexts have on the wire (peers.c), turned
 * into the hold's posted writes and acks.
 *
 * The hold names each posted write by an id it gives; the contexts only
 * count theirs per connection.  So the agent keeps, per connection it has
 * seen, how many of its puts it has reported and the ids the hold gave
 * them, oldest first: a connection completes its puts in order (RC), so
 * its k-th completion acks its k-th id.  A connection that left the
 * registry (it closed, its QP is gone) will complete nothing more: its
 * ids are acked, so that nothing waits for it for ever.
 *
 * Called from the agent's thread only, when a class-2 answer is at stake:
 * after a class-2 get has read (the core's sync()), and while answers are
 * held (each round of the listener's thread).  Puts that were sent and
 * completed between two looks are never told to the hold: they hold
 * nothing, and a busy writer would otherwise fill its window with them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/listener/listener_int.h"
#include "agent/agent.h"

struct va_pw {
	uint64_t serial;	/* the registration it mirrors; 0: free */
	uint32_t peer;
	int seen;		/* in the registry at the last scan */
	uint64_t posted;	/* reported to the hold */
	uint64_t done;		/* acked to the hold */
	uint32_t *ids;		/* ids of posted - done puts, a ring */
	uint32_t cap, head;	/* ring size (power of two), oldest */
};

struct va_hold {
	struct oms_agent *ag;
	struct va_pw *pw;
	uint32_t npw;
	uint64_t short_of;	/* peers whose writes the window refused */
	int nomem;
};

int va_hold_create(struct oms_agent *ag, struct va_hold **out)
{
	struct va_hold *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->ag = ag;
	*out = h;
	return 0;
}

void va_hold_destroy(struct va_hold *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < h->npw; i++)
		free(h->pw[i].ids);
	free(h->pw);
	free(h);
}

static struct va_pw *mirror(struct va_hold *h, const struct vb_pw *pw)
{
	struct va_pw *m = NULL, *n;

	for (uint32_t i = 0; i < h->npw; i++) {
		if (h->pw[i].serial == pw->serial)
			return &h->pw[i];
		if (!h->pw[i].serial && !m)
			m = &h->pw[i];
	}
	if (!m) {
		n = realloc(h->pw, (h->npw + 8) * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + h->npw, 0, 8 * sizeof(*n));
		h->pw = n;
		m = &h->pw[h->npw];
		h->npw += 8;
	}
	free(m->ids);
	memset(m, 0, sizeof(*m));
	m->serial = pw->serial;
	m->peer = pw->peer;
	return m;
}

/* Room for one more id in @m's ring; 0 or -ENOMEM. */
static int grow(struct va_pw *m)
{
	uint32_t used = (uint32_t)(m->posted - m->done);
	uint32_t cap = m->cap ? 2 * m->cap : 64;
	uint32_t *ids;

	if (used < m->cap)
		return 0;
	ids = malloc(cap * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < used; i++)
		ids[i] = m->ids[(m->head + i) & (m->cap - 1)];
	free(m->ids);
	m->ids = ids;
	m->cap = cap;
	m->head = 0;
	return 0;
}

static void ack_oldest(struct va_hold *h, struct va_pw *m)
{
	oms_agent_posted_ack(h->ag, m->peer, m->ids[m->head]);
	m->head = (m->head + 1) & (m->cap - 1);
	m->done++;
}

static void scan_one(void *arg, const struct vb_pw *pw, uint64_t posted,
		     uint64_t done)
{
	struct va_hold *h = arg;
	struct va_pw *m = mirror(h, pw);

	if (!m) {
		h->nomem = 1;
		return;
	}
	m->seen = 1;
	/* acks first: they make room in the hold's window */
	while (m->done < done && m->done < m->posted)
		ack_oldest(h, m);
	/* puts that were sent and completed since the last look hold
	 * nothing: the hold never hears of them */
	if (m->done == m->posted && done > m->posted)
		m->posted = m->done = done;
	while (m->posted < posted) {
		uint32_t id;

		if (grow(m)) {
			h->nomem = 1;
			break;
		}
		if (oms_agent_posted(h->ag, m->peer, &id)) {
			/* its window is full */
			h->short_of |= 1ull << (m->peer % 64);
			break;
		}
		m->ids[(m->head + (uint32_t)(m->posted - m->done)) &
		       (m->cap - 1)] = id;
		m->posted++;
	}
	/* completions of puts not yet reported wait until they are */
	while (m->done < done && m->done < m->posted)
		ack_oldest(h, m);
}

int va_hold_sync(struct va_hold *h, int peer)
{
	h->short_of = 0;
	h->nomem = 0;
	for (uint32_t i = 0; i < h->npw; i++)
		h->pw[i].seen = 0;
	vb_pw_scan(scan_one, h);
	for (uint32_t i = 0; i < h->npw; i++) {
		struct va_pw *m = &h->pw[i];

		if (!m->serial || m->seen)
			continue;
		/* gone: what it had on the wire will not complete */
		while (m->done < m->posted)
			ack_oldest(h, m);
		free(m->ids);
		memset(m, 0, sizeof(*m));
	}
	if (h->nomem || (peer < 0 ? h->short_of != 0 :
			 (h->short_of >> (peer % 64)) & 1))
		return -ENOBUFS;
	return 0;
}
