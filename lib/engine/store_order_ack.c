// SPDX-License-Identifier: MIT
/*
 * Store orderer: completions and failures.  Acks (cumulative counts per
 * channel) and flush answers make ops visible; failed ops, error acks and
 * a gone device record the lowest failed sequence per channel; resume forgets
 * them.  A failure is never undone by what comes later: so_after_stop()
 * says which later ops it stops, for the submit path and for progress
 * (docs/ordering.md, Failures).
 */
#include <errno.h>

#include "engine/store_order_int.h"

/* ---- which later ops a failure stops ---- */

/* How much of channel @x an op comes after: everything issued so far when
 * it is submitted (@snap NULL), its queue snapshot when it leaves the hold
 * queue. */
static uint64_t earlier_on(const struct oms_so *so, const uint64_t *snap,
			   uint32_t x)
{
	return snap ? need_on(so, snap, x) : so->chan[x].issued;
}

/*
 * Does @st (to @dest; @snap as for earlier_on()) follow a failure it must
 * not be performed after?  A failed acquire orders every later op (A1); a
 * fence that met a failure orders the later ordered ops of its scope (F1,
 * F3); a release follows every earlier op of its destination (R1); an
 * acquire follows the atomics of its destination (A2); a sequenced
 * stream stops at its first failed member (D1).  Ops cancelled at the
 * source count as failed (the lost_* marks).  A strong store also finds
 * out in so_ready(), which knows what it waits for.
 */
int so_after_stop(const struct oms_so *so, const struct oms_so_store *st,
		  uint16_t dest, const uint64_t *snap)
{
	uint64_t dmask = dbit(dest);

	if (so->lost_acquire)
		return 1;
	for (uint32_t x = 0; x < so->nchan; x++)
		if (so->chan[x].acq_fail != OMS_SO_NONE &&
		    earlier_on(so, snap, x) > so->chan[x].acq_fail)
			return 1;
	if (st->cls == OMS_STORE_UNORDERED)
		return 0;
	if (so->stopped_all || (so->stopped_dests & dmask))
		return 1;
	if (st->cls == OMS_STORE_STRONG && so->lost_ordered)
		return 1;
	if (st->cls == OMS_STORE_RELEASE && (so->lost_dests & dmask))
		return 1;
	if (st->acquire && (so->lost_atomic_dests & dmask))
		return 1;
	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];
		uint64_t e;

		if (ch->dest != dest)
			continue;
		e = earlier_on(so, snap, x);
		if (st->cls == OMS_STORE_RELEASE && e > ch->first_fail)
			return 1;
		if (st->acquire && e > ch->atomic_fail)
			return 1;
		if (x == st->chan && ch->kind == OMS_CHAN_SEQ &&
		    e > ch->first_fail)
			return 1;
	}
	return 0;
}

/* ---- acknowledgements and failures ---- */

static void note_error(struct oms_so *so, int status)
{
	if (!status)
		return;
	so->ctr.errors++;
	if (!so->first_error ||
	    (so->first_error == -ECANCELED && status != -ECANCELED))
		so->first_error = status;
}

static void make_visible(struct oms_so *so, struct oms_so_chan *ch,
			 uint64_t count)
{
	uint64_t k = count - ch->visible;

	ch->visible = count;
	so->ctr.pending_ack -= k;
	so->ctr.ack_dec += k;
}

/* Acquires of @x done (and none failed): later ops need not wait. */
static void acq_settle(struct oms_so *so, uint32_t x)
{
	const struct oms_so_chan *ch = &so->chan[x];

	if (ch->acq_need <= ch->completed && ch->acq_fail == OMS_SO_NONE)
		so->acq_mask &= ~(1ull << x);
}

int oms_so_ack(struct oms_so *so, uint16_t chan, uint64_t count, int status)
{
	struct oms_so_chan *ch;

	if (!so || chan >= so->nchan || status > 0)
		return -EINVAL;
	ch = &so->chan[chan];
	if (count > ch->issued)
		return -EINVAL;
	if (count <= ch->completed) {
		/* Stale or duplicate: it knows nothing new. */
		so->ctr.stale_acks++;
		return 0;
	}
	if (status) {
		set_fail(so, ch, ch->completed);
		if (ch->acq_need > ch->completed && ch->completed < ch->acq_fail)
			ch->acq_fail = ch->completed;
		if (ch->atomic_need > ch->completed &&
		    ch->completed < ch->atomic_fail)
			ch->atomic_fail = ch->completed;
		note_error(so, status);
	}
	ch->completed = count;
	if (!posted(ch))
		make_visible(so, ch, count);
	acq_settle(so, chan);
	return 0;
}

int oms_so_fail(struct oms_so *so, uint16_t chan, uint64_t seq, int status)
{
	struct oms_so_chan *ch;

	if (!so || chan >= so->nchan || status >= 0)
		return -EINVAL;
	ch = &so->chan[chan];
	if (seq >= ch->issued)
		return -EINVAL;
	if (seq < ch->completed) {
		so->ctr.stale_acks++;
		return 0;
	}
	set_fail(so, ch, seq);
	if (so_was_read(ch, seq, 0) && seq < ch->acq_fail)
		ch->acq_fail = seq;
	if (so_was_read(ch, seq, 1) && seq < ch->atomic_fail)
		ch->atomic_fail = seq;
	note_error(so, status);
	return 0;
}

int oms_so_flush_done(struct oms_so *so, uint16_t chan, uint64_t token,
		      int status)
{
	struct oms_so_chan *ch;

	if (!so || chan >= so->nchan || status > 0)
		return -EINVAL;
	ch = &so->chan[chan];
	if (!ch->flush_inflight || token != ch->flush_token)
		return -EINVAL;
	ch->flush_inflight = 0;
	if (status) {
		/* Something it covered failed; which, the op's own
		 * completion says.  Nothing becomes visible. */
		note_error(so, status);
		if (token > ch->visible)
			set_fail(so, ch, ch->visible);
		return 0;
	}
	if (token > ch->visible)
		make_visible(so, ch, token);
	return 0;
}

void oms_so_unordered_done(struct oms_so *so, uint16_t chan)
{
	if (so && chan < so->nchan && so->chan[chan].unordered)
		so->chan[chan].unordered--;
}

void oms_so_gone(struct oms_so *so, int status)
{
	if (!so)
		return;
	note_error(so, status < 0 ? status : -ENODEV);
	for (uint32_t x = 0; x < so->nchan; x++) {
		struct oms_so_chan *ch = &so->chan[x];

		if (ch->issued > ch->visible)
			set_fail(so, ch, ch->visible);
		if (ch->acq_need > ch->completed)
			ch->acq_fail = ch->completed;
		if (ch->atomic_need > ch->completed)
			ch->atomic_fail = ch->completed;
		ch->completed = ch->issued;
		ch->flush_inflight = 0;
		ch->unordered = 0;
		make_visible(so, ch, ch->issued);
	}
	for (uint32_t i = 0; i < so->count; i++)
		held_at(so, i)->cancel = 1;
	so->quieting = 0;
}

int oms_so_resume(struct oms_so *so)
{
	if (!so)
		return -EINVAL;
	if (so->count)
		return -EBUSY;
	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];

		if (ch->completed != ch->issued || ch->flush_inflight)
			return -EBUSY;
	}
	for (uint32_t x = 0; x < so->nchan; x++) {
		struct oms_so_chan *ch = &so->chan[x];

		/* What failed is forgotten: nothing waits for it again. */
		if (ch->first_fail != OMS_SO_NONE)
			make_visible(so, ch, ch->issued);
		ch->first_fail = OMS_SO_NONE;
		ch->acq_fail = OMS_SO_NONE;
		ch->atomic_fail = OMS_SO_NONE;
		ch->unordered = 0;
		acq_settle(so, x);
	}
	so->stopped_dests = 0;
	so->stopped_all = 0;
	so->lost_dests = 0;
	so->lost_ordered_dests = 0;
	so->lost_atomic_dests = 0;
	so->lost_ordered = 0;
	so->lost_acquire = 0;
	so->any_fail = 0;
	so->first_error = 0;
	return 0;
}
