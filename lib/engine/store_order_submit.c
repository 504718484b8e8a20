// SPDX-License-Identifier: MIT
/*
 * Store orderer: submission.  An op is checked, then takes put_fast() - a
 * weak put, or a strong put whose earlier ops are all visible, with
 * nothing held and nothing failed: a few compares and a sequence number -
 * or the long way, which decides whether a rule holds it (must_hold()),
 * cancels it (it follows a failure) or lets it go with the fence its
 * channel needs.  What is held enters the hold queue here, with the fence
 * markers and acquire barriers that order it; store_order_hold.c lets it
 * out.  The fast path keeps every helper it calls in this file or inline
 * (store_order_int.h): it is what bench/engine measures.
 */
#include <errno.h>

#include "engine/store_order_int.h"

/* ---- checks and holding rules ---- */

static inline __attribute__((always_inline)) int
check_store(const struct oms_so *so, const struct oms_so_store *st)
{
	if (!st || st->chan >= so->nchan || st->len == 0 ||
	    st->addr + st->len < st->addr || st->cls > OMS_STORE_RELEASE ||
	    st->op > OMS_SO_OP_ATOMIC || st->acquire > 1 ||
	    (st->acquire && st->op != OMS_SO_OP_GET) ||
	    (st->op != OMS_SO_OP_PUT && (st->cls == OMS_STORE_STRONG ||
					 st->cls == OMS_STORE_RELEASE)))
		return -EINVAL;
	return 0;
}

/*
 * Does @st touch bytes of a held op to its destination (one writing)?
 * Sets *@other if one of those is on another channel, where the channel
 * cannot keep the two in order.
 */
static int overlaps_held(struct oms_so *so, const struct oms_so_store *st,
			 int *other)
{
	uint16_t dest = so->chan[st->chan].dest;
	int hit = 0;

	*other = 0;
	if (!so->dest_held[dest])
		return 0;
	for (uint32_t i = 0; i < so->count; i++) {
		const struct oms_so_held *h = held_at(so, i);

		if (is_marker(h) || h->dest != dest)
			continue;
		if (!is_write(st) && !is_write(&h->st))
			continue;
		if (st->addr < h->st.addr + h->st.len &&
		    h->st.addr < st->addr + st->len) {
			hit = 1;
			if (h->st.chan != st->chan)
				*other = 1;
		}
	}
	return hit;
}

/* Is an unordered store to @dest held? */
static int held_unordered(struct oms_so *so, uint16_t dest)
{
	for (uint32_t i = 0; i < so->count; i++) {
		const struct oms_so_held *h = held_at(so, i);

		if (!is_marker(h) && h->dest == dest &&
		    h->st.cls == OMS_STORE_UNORDERED)
			return 1;
	}
	return 0;
}

/* Is an acquire in flight or held for a destination other than @dest? */
static int acquire_elsewhere(const struct oms_so *so, uint16_t dest)
{
	return (so->acq_mask & ~so->dest_mask[dest]) ||
	       so->held_acq > so->dest_held_acq[dest];
}

/*
 * Must @st wait in the hold queue?  *@barrier: behind a new barrier;
 * *@other: behind a fence of its destination (same bytes held on another
 * channel: wait until they are visible).
 */
static int must_hold(struct oms_so *so, const struct oms_so_store *st,
		     uint16_t dest, int *barrier, int *other)
{
	*other = 0;
	*barrier = acquire_elsewhere(so, dest);
	if (*barrier)
		return 1;
	/* Nothing overtakes a held acquire, at its own destination either
	 * (A1); an acquire does not overtake a held op to its destination,
	 * which may be an atomic (A2). */
	if (so->held_acq || (st->acquire && so->dest_held[dest]))
		return 1;
	if (st->cls == OMS_STORE_STRONG) {
		uint64_t *now = so->flush_need;	/* scratch, refilled below */

		if (so->count)
			return 1;
		for (uint32_t x = 0; x < so->nchan; x++)
			now[x] = so->chan[x].issued;
		return so_ready(so, OMS_SO_ALL, st->chan, now, NULL) != GO;
	}
	if (!so->count)
		return 0;
	if (overlaps_held(so, st, other) || so->acq_barriers)
		return 1;
	if (so->dest_held[dest]) {
		const struct oms_so_chan *ch = &so->chan[st->chan];

		/*
		 * An acked channel: a held op may be fenced when it leaves,
		 * and a strong one waits for the channel's count; either way
		 * a later op posted before it and failing would cancel it.
		 * Later ops wait behind it.
		 */
		if (ch->kind == OMS_CHAN_ACKED)
			return 1;
		/*
		 * A sequenced channel: a fence waits for the unordered stores
		 * (outside the stream) posted before it.  An unordered store
		 * waits for the members held before it, and while it is held
		 * so do the later members: else one of them, fenced behind it,
		 * waits for it while it waits for a member numbered after a
		 * held one.
		 */
		if (ch->kind == OMS_CHAN_SEQ &&
		    (st->cls == OMS_STORE_UNORDERED ||
		     held_unordered(so, dest)))
			return 1;
	}
	if (st->cls == OMS_STORE_UNORDERED)
		return 0;	/* fences do not order unordered stores */
	if (so->all_fences || so->dest_fences[dest])
		return 1;
	/* A release is fenced at the destination, which cannot wait for
	 * an op still held here. */
	return st->cls == OMS_STORE_RELEASE && so->dest_held[dest];
}

/* ---- entering the hold queue ---- */

static void push(struct oms_so *so, const struct oms_so_store *st,
		 uint16_t dest, uint64_t seq)
{
	uint32_t i = so->count++;
	struct oms_so_held *h = held_at(so, i);
	uint64_t *snap = snap_at(so, i);

	h->st = *st;
	h->seq = seq;
	h->dest = dest;
	h->cancel = 0;
	h->armed = 0;
	for (uint32_t x = 0; x < so->nchan; x++)
		snap[x] = so->chan[x].issued;
	if (is_marker(h))
		return;
	so->dest_held[dest]++;
	if (st->acquire) {
		so->held_acq++;
		so->dest_held_acq[dest]++;
	}
}

static void push_fence(struct oms_so *so, uint16_t scope)
{
	struct oms_so_store marker = { .cls = FENCE_ENTRY };

	push(so, &marker, scope, OMS_SO_NONE);
	if (scope == OMS_SO_ALL)
		so->all_fences++;
	else
		so->dest_fences[scope]++;
}

static void push_barrier(struct oms_so *so)
{
	struct oms_so_store marker = { .cls = BARRIER_ENTRY };

	/* Two barriers in a row wait for the same acquires. */
	if (so->count && held_at(so, so->count - 1)->st.cls == BARRIER_ENTRY)
		return;
	push(so, &marker, OMS_SO_ALL, OMS_SO_NONE);
	so->acq_barriers++;
	so->ctr.barriers++;
}

/* ---- submission ---- */

static void count_class(struct oms_so *so, const struct oms_so_store *st)
{
	if (st->op == OMS_SO_OP_GET)
		so->ctr.gets++;
	else if (st->op == OMS_SO_OP_ATOMIC)
		so->ctr.atomics++;
	if (st->cls == OMS_STORE_UNORDERED)
		so->ctr.unordered++;
	else if (st->cls == OMS_STORE_WEAK)
		so->ctr.weak++;
	else if (st->cls == OMS_STORE_STRONG)
		so->ctr.strong++;
	else
		so->ctr.release++;
}

/*
 * A strong put goes at once when every earlier ordered op is visible: on
 * each other channel everything issued is acknowledged, and its own
 * channel either is acknowledged too or is posted and keeps its stores in
 * order (so_ready() with nothing held).
 */
static inline int earlier_visible(const struct oms_so *so, uint16_t own)
{
	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];

		if (ch->issued > ch->visible && (x != own || !posted(ch)))
			return 0;
	}
	return 1;
}

/*
 * The common case in a few compares: a weak put, or a strong put whose
 * earlier ordered ops are all visible, with nothing held, no failure to
 * follow, no acquire in flight or failed anywhere, and on its channel no
 * read in flight to fence after and no unordered store outside a stream.
 * Then no rule holds it (must_hold()), none fences it (so_fence_flags())
 * and nothing needs noting (so_note_issued()): it is issued with the
 * channel's next number.  Anything else takes the long way; both give the
 * same answer (tests/engine_explorer*).  1 if it went.
 */
static inline __attribute__((always_inline)) int
put_fast(struct oms_so *so, const struct oms_so_store *st,
	 struct oms_so_action *out)
{
	const struct oms_so_chan *ch;

	if (st->op != OMS_SO_OP_PUT)
		return 0;
	ch = &so->chan[st->chan];
	if (so->count || so->any_fail || so->held_acq || so->acq_mask ||
	    ch->read_need > ch->completed || ch->acq_need > ch->completed ||
	    ch->unordered)
		return 0;
	if (st->cls == OMS_STORE_WEAK) {
		so->ctr.weak++;
	} else if (st->cls == OMS_STORE_STRONG &&
		   earlier_visible(so, st->chan)) {
		so->ctr.strong++;
		if (ch->issued != ch->visible)
			so->ctr.fast_path++;
	} else {
		return 0;
	}
	so->ctr.issue_inc++;
	so->ctr.issue_dec++;
	out->cookie = st->cookie;
	out->chan = st->chan;
	out->type = OMS_SO_ACT_ISSUE;
	out->flags = 0;
	out->seq = give_seq(so, st->chan);
	return 1;
}

/*
 * Every case but put_fast()'s.  Out of line so that the common case
 * does not pay for this one's registers and stack frame.
 */
static __attribute__((noinline)) int
submit_long(struct oms_so *so, const struct oms_so_store *st,
	    struct oms_so_action *out)
{
	uint16_t dest;
	uint64_t seq = OMS_SO_NONE;
	int hold, barrier = 0, other = 0, cancel = 0;

	dest = so->chan[st->chan].dest;
	if (oms_so_failed(so))
		cancel = so_after_stop(so, st, dest, NULL);
	hold = cancel || must_hold(so, st, dest, &barrier, &other);
	if (cancel)
		barrier = other = 0;
	if (hold && so->count + 1 + !!barrier + !!other > so->max_held)
		return -EAGAIN;

	count_class(so, st);
	out->cookie = st->cookie;
	out->chan = st->chan;
	out->type = OMS_SO_ACT_ISSUE;
	out->flags = 0;
	if (st->cls == OMS_STORE_UNORDERED && !hold) {
		out->flags = so_fence_flags(so, st);
		so_note_issued(so, st, OMS_SO_NONE);
		out->seq = OMS_SO_NONE;
		return OMS_SO_ISSUE;
	}
	if (st->cls != OMS_STORE_UNORDERED) {
		so->ctr.issue_inc++;
		so->ctr.pending_issue++;
	}
	if (!hold) {
		struct oms_so_chan *ch = &so->chan[st->chan];

		if (st->cls == OMS_STORE_STRONG && ch->issued != ch->visible)
			so->ctr.fast_path++;
		so->ctr.pending_issue--;
		so->ctr.issue_dec++;
		out->flags = so_fence_flags(so, st);
		out->seq = give_seq(so, st->chan);
		so_note_issued(so, st, out->seq);
		return OMS_SO_ISSUE;
	}

	if (barrier)
		push_barrier(so);
	if (other)
		push_fence(so, dest);
	/* The snapshot is taken before a SEQ number is given: the op does
	 * not wait for itself. */
	push(so, st, dest, OMS_SO_NONE);
	held_at(so, so->count - 1)->cancel = (uint8_t)cancel;
	if (so->chan[st->chan].kind == OMS_CHAN_SEQ &&
	    st->cls != OMS_STORE_UNORDERED) {
		seq = give_seq(so, st->chan);
		held_at(so, so->count - 1)->seq = seq;
	}
	out->seq = seq;
	so->ctr.held++;
	return OMS_SO_HELD;
}

static inline __attribute__((always_inline)) int
submit(struct oms_so *so, const struct oms_so_store *st,
       struct oms_so_action *out)
{
	if (!so || !out || check_store(so, st))
		return -EINVAL;
	if (put_fast(so, st, out))
		return OMS_SO_ISSUE;
	return submit_long(so, st, out);
}

/*
 * The two entry points start on a cache line: the fast path's time
 * otherwise moves with wherever the link happens to put it (bench/engine's
 * weak_store, the same instructions, 12 % apart between two layouts).
 */
__attribute__((aligned(64))) int
oms_so_submit_op(struct oms_so *so, const struct oms_so_store *st,
		 struct oms_so_action *out)
{
	return submit(so, st, out);
}

__attribute__((aligned(64))) int
oms_so_submit(struct oms_so *so, const struct oms_so_store *st, uint64_t *seq)
{
	struct oms_so_action a;
	int r;

	if (!seq)
		return -EINVAL;
	r = submit(so, st, &a);
	if (r >= 0)
		*seq = a.seq;
	return r;
}

int oms_so_fence(struct oms_so *so, uint16_t dest)
{
	int lost;

	if (!so || (dest != OMS_SO_ALL && dest >= so->ndest))
		return -EINVAL;
	/* An ordered op of its scope was cancelled at the source: what the
	 * fence orders after it is not performed either (F1, F3).  With
	 * nothing held that is every later op; otherwise the marker says
	 * so when it reaches the head (what is held now is earlier). */
	lost = dest == OMS_SO_ALL ? so->lost_ordered :
	       !!(so->lost_ordered_dests & dbit(dest));
	if (!so->count && lost) {
		if (dest == OMS_SO_ALL)
			so->stopped_all = 1;
		else
			so->stopped_dests |= dbit(dest);
	}
	if (!so->count && (lost || oms_so_dest_visible(so, dest))) {
		so->ctr.fences++;
		return 0;
	}
	if (so->count + 1 > so->max_held)
		return -EAGAIN;
	so->ctr.fences++;
	push_fence(so, dest);
	return 0;
}
