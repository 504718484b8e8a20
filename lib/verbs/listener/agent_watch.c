// SPDX-License-Identifier: MIT
/*
 * A serving thread's watch over its connections (docs/dest-agent.md,
 * "Sharing"): a connection that owes progress and makes none is closed;
 * one that owes nothing and has been quiet is probed, and closed when
 * the probe fails or is overdue; and the thread sleeps only until the
 * next of these looks is due.  Called from agent_srv.c's rounds, under
 * the thread's lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs/listener/agent_int.h"
#include "verbs/listener/probe.h"

/*
 * Close what owes progress and makes none: a connection with a backlog or
 * sends not yet acknowledged, none of which moved for the context's
 * timeout (its requester died, or keeps no receives posted for its
 * answers).  Its slot is free once the listener has its disconnect.
 */
void va_reap_stalled(struct va_srv *s)
{
	uint64_t now = oms_now_ns(), limit = va_timeout_ns(s);

	for (uint32_t i = 0; i < s->nlive; i++) {
		struct va_conn *ac = s->live[i];

		if (ac->err || (!ac->backlog && !ac->sq_used) ||
		    now - ac->progress_ns < limit)
			continue;
		fprintf(stderr, "liboms: agent: a requester made no progress "
			"for %llu ms (%u requests waiting, %u writes not "
			"acknowledged): connection closed\n",
			(unsigned long long)(limit / 1000000), ac->backlog,
			ac->sq_used);
		va_conn_broken(ac, -ETIMEDOUT);
	}
}

/*
 * The liveness probe (as the listener's of its plain connections,
 * probe.c): a connection with nothing owed that saw no doorbell, no
 * progress and no probe for the context's timeout gets a zero-byte RDMA
 * WRITE to its requester, which any live RC peer acknowledges from its
 * NIC (no memory touched, no key checked).  A requester that vanished
 * without a disconnect (its link went while its context died) lets the
 * retries run out: send_done() closes the connection, and its slot and
 * memory are free again, instead of waiting for a newcomer to need them.
 * The probe has a send slot of its own (vb_agent_conn_open) and does not
 * count as activity for the idle rule (rung_ns).  It has a deadline of
 * its own too, as the listener's (VB_PROBE_GRACE timeouts): the retry
 * count is the requester's, and Soft-RoCE retries for ever at 7.
 */
void va_probe_idle(struct va_srv *s)
{
	uint64_t now = oms_now_ns(), limit = va_timeout_ns(s);

	for (uint32_t i = 0; i < s->nlive; i++) {
		struct va_conn *ac = s->live[i];
		struct ibv_send_wr w, *bad;
		uint64_t last;

		if (ac->err || !ac->id || !ac->id->qp)
			continue;
		if (ac->probing) {
			if (now - ac->probe_ns < VB_PROBE_GRACE * limit)
				continue;
			fprintf(stderr, "liboms: agent: a requester did not "
				"answer its liveness probe for %llu ms: "
				"connection closed\n", (unsigned long long)
				(VB_PROBE_GRACE * limit / 1000000));
			s->probe_fails++;
			va_conn_broken(ac, -ETIMEDOUT);
			continue;
		}
		last = ac->rung_ns > ac->progress_ns ? ac->rung_ns :
		       ac->progress_ns;
		last = ac->probe_ns > last ? ac->probe_ns : last;
		if (now - last < limit)
			continue;
		memset(&w, 0, sizeof(w));
		w.wr_id = VA_WRID(ac->idx, ac->gen, VA_PROBE_N, 0);
		w.opcode = IBV_WR_RDMA_WRITE;
		w.send_flags = IBV_SEND_SIGNALED;	/* zero bytes: no sge */
		if (ibv_post_send(ac->id->qp, &w, &bad)) {
			va_conn_broken(ac, -EIO);
			continue;
		}
		ac->probing = 1;
		ac->probe_ns = now;
	}
}

/* When @ac's next look is due: a stall's or its liveness probe's. */
static uint64_t look_due(const struct va_conn *ac, uint64_t limit)
{
	uint64_t last;

	if (ac->backlog || ac->sq_used)
		return ac->progress_ns + limit;
	if (ac->probing)	/* its completion wakes the thread; or not */
		return ac->probe_ns + VB_PROBE_GRACE * limit;
	last = ac->rung_ns > ac->progress_ns ? ac->rung_ns : ac->progress_ns;
	last = ac->probe_ns > last ? ac->probe_ns : last;
	return last + limit;
}

/*
 * How long the listener's thread may sleep.  Class-2 answers held: their
 * acks come from this process's contexts reaping their puts' completions,
 * which wakes nobody here, so it looks every millisecond.  A connection
 * that owes progress: it looks again when the stall would reach the
 * context's timeout; one that owes nothing: when its liveness probe is
 * due.  Else (no connection) for ever.
 */
int vb_agent_poll_ms(const struct va_srv *s)
{
	uint64_t now = oms_now_ns(), limit = va_timeout_ns(s);
	uint64_t next = UINT64_MAX;

	if (oms_agent_held(s->ag))
		return 1;
	if (s->fit_due && s->nqp == s->nlive)
		return 0;	/* a round at once: it may shrink the queues */
	for (uint32_t i = 0; i < s->nlive; i++) {
		const struct va_conn *ac = s->live[i];
		uint64_t due, left;

		if (ac->err)
			continue;
		due = look_due(ac, limit);
		if (due == UINT64_MAX)
			continue;
		left = due > now ? due - now : 0;
		next = left < next ? left : next;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)(next / 1000000) + 1;
}
