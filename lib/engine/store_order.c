// SPDX-License-Identifier: MIT
/*
 * Store orderer.  See store_order.h for the model and docs/ordering.md for
 * the rules; the comments here say why each step is needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store_order.h"

/* Class values of markers in the hold queue; never store classes. */
#define FENCE_ENTRY	0xff
#define BARRIER_ENTRY	0xfe

enum readiness { WAIT = 0, GO = 1, DOOMED = 2 };

static int is_marker(const struct oms_so_held *h)
{
	return h->st.cls == FENCE_ENTRY || h->st.cls == BARRIER_ENTRY;
}

static struct oms_so_held *held_at(struct oms_so *so, uint32_t i)
{
	return &so->held[(so->head + i) % so->max_held];
}

static uint64_t *snap_at(struct oms_so *so, uint32_t i)
{
	return so->snap + (size_t)((so->head + i) % so->max_held) * so->nchan;
}

static int in_scope(const struct oms_so *so, uint16_t scope, uint32_t x)
{
	return scope == OMS_SO_ALL || so->chan[x].dest == scope;
}

static int posted(const struct oms_so_chan *ch)
{
	return ch->kind != OMS_CHAN_ACKED;
}

static int is_write(const struct oms_so_store *st)
{
	return st->op != OMS_SO_OP_GET;
}

/* Destination sets are 64-bit masks: above 64 destinations alias, which
 * only ever cancels more. */
static uint64_t dbit(uint16_t dest)
{
	return 1ull << (dest % 64);
}

int oms_so_init(struct oms_so *so, uint32_t nchan,
		const struct oms_so_chan_cfg *cfg, uint32_t ndest,
		uint32_t max_held)
{
	if (!so || !cfg || nchan == 0 || nchan > OMS_SO_MAX_CHANNELS ||
	    ndest == 0 || ndest >= OMS_SO_ALL || max_held == 0 ||
	    max_held > OMS_SO_MAX_HELD)
		return -EINVAL;
	for (uint32_t i = 0; i < nchan; i++)
		if (cfg[i].dest >= ndest || cfg[i].kind > OMS_CHAN_SEQ)
			return -EINVAL;

	memset(so, 0, sizeof(*so));
	so->chan = calloc(nchan, sizeof(*so->chan));
	so->held = calloc(max_held, sizeof(*so->held));
	so->snap = calloc((size_t)max_held * nchan, sizeof(*so->snap));
	so->flush_need = calloc(nchan, sizeof(*so->flush_need));
	so->dest_mask = calloc(ndest, sizeof(*so->dest_mask));
	so->dest_fences = calloc(ndest, sizeof(*so->dest_fences));
	so->dest_held = calloc(ndest, sizeof(*so->dest_held));
	so->dest_held_acq = calloc(ndest, sizeof(*so->dest_held_acq));
	if (!so->chan || !so->held || !so->snap || !so->flush_need ||
	    !so->dest_mask || !so->dest_fences || !so->dest_held ||
	    !so->dest_held_acq) {
		oms_so_destroy(so);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nchan; i++) {
		so->chan[i].dest = cfg[i].dest;
		so->chan[i].kind = cfg[i].kind;
		so->chan[i].first_fail = OMS_SO_NONE;
		so->chan[i].acq_fail = OMS_SO_NONE;
		so->chan[i].atomic_fail = OMS_SO_NONE;
		so->dest_mask[cfg[i].dest] |= 1ull << i;
	}
	so->nchan = nchan;
	so->ndest = ndest;
	so->max_held = max_held;
	return 0;
}

void oms_so_destroy(struct oms_so *so)
{
	if (!so)
		return;
	free(so->chan);
	free(so->held);
	free(so->snap);
	free(so->flush_need);
	free(so->dest_mask);
	free(so->dest_fences);
	free(so->dest_held);
	free(so->dest_held_acq);
	memset(so, 0, sizeof(*so));
}

/* ---- in-flight reads (same-address order for a write after a read) ---- */

static void reads_prune(struct oms_so_chan *ch)
{
	while (ch->rcount && ch->reads[ch->rhead].seq < ch->completed) {
		ch->rhead = (ch->rhead + 1) % OMS_SO_READS;
		ch->rcount--;
	}
}

static void reads_add(struct oms_so_chan *ch, const struct oms_so_store *st,
		      uint64_t seq)
{
	struct oms_so_read *r;

	reads_prune(ch);
	if (ch->rcount == OMS_SO_READS) {
		/* Forget the oldest, but remember that something unknown
		 * is in flight until it completed. */
		r = &ch->reads[ch->rhead];
		if (r->seq + 1 > ch->reads_lost)
			ch->reads_lost = r->seq + 1;
		ch->rhead = (ch->rhead + 1) % OMS_SO_READS;
		ch->rcount--;
	}
	r = &ch->reads[(ch->rhead + ch->rcount++) % OMS_SO_READS];
	r->seq = seq;
	r->addr = st->addr;
	r->len = st->len;
	r->atomic = st->op == OMS_SO_OP_ATOMIC;
	r->acquire = st->acquire;
}

/* Was op @seq of @ch an acquire (@atomic: an atomic)?  Unknown (dropped
 * from the ring): yes - cancelling too much is safe, too little is not. */
static int was_read(const struct oms_so_chan *ch, uint64_t seq, int atomic)
{
	if (seq >= (atomic ? ch->atomic_need : ch->acq_need))
		return 0;
	for (uint32_t i = 0; i < ch->rcount; i++) {
		const struct oms_so_read *r =
			&ch->reads[(ch->rhead + i) % OMS_SO_READS];

		if (r->seq == seq)
			return atomic ? r->atomic : r->acquire;
	}
	return seq < ch->reads_lost;
}

static int overlaps_read(struct oms_so_chan *ch, const struct oms_so_store *st)
{
	if (ch->read_need <= ch->completed)
		return 0;
	if (ch->reads_lost > ch->completed)
		return 1;
	reads_prune(ch);
	for (uint32_t i = 0; i < ch->rcount; i++) {
		const struct oms_so_read *r =
			&ch->reads[(ch->rhead + i) % OMS_SO_READS];

		if (st->addr < r->addr + r->len && r->addr < st->addr + st->len)
			return 1;
	}
	return 0;
}

/*
 * Does op @st, about to be issued on its channel, need the destination to
 * fence it (perform it after every earlier op of the channel)?
 */
static uint8_t fence_flags(struct oms_so *so, const struct oms_so_store *st)
{
	struct oms_so_chan *ch = &so->chan[st->chan];
	int fence = 0;

	if (st->cls == OMS_STORE_RELEASE)
		fence = 1;	/* seed 004 MMIO-Release, enforced there */
	else if (is_write(st) && overlaps_read(ch, st))
		fence = 1;	/* write after read of the same bytes */
	else if (ch->acq_need > ch->completed &&
		 is_write(st))
		fence = 1;	/* a write after an acquire of the channel
				 * (later gets have the RLSQ; a get behind an
				 * acquire that fails may still read, see
				 * docs/ordering.md) */
	else if (st->op == OMS_SO_OP_GET && st->acquire &&
		 ch->atomic_need > ch->completed)
		fence = 1;	/* an acquire after an atomic (lock, then read) */
	else if (st->cls == OMS_STORE_STRONG && posted(ch) &&
		 ch->read_need > ch->completed)
		fence = 1;	/* posted fast path, but a read is in flight */
	else if (ch->kind == OMS_CHAN_SEQ && st->cls == OMS_STORE_UNORDERED &&
		 (ch->issued > ch->completed))
		fence = 1;	/* outside the stream: order it by hand */
	else if (ch->kind == OMS_CHAN_SEQ && st->cls != OMS_STORE_UNORDERED &&
		 ch->unordered)
		fence = 1;	/* the same, the other way round */
	if (fence)
		so->ctr.fenced++;
	return fence ? OMS_SO_A_FENCE : 0;
}

/* ---- readiness of held entries ---- */

/*
 * What an entry must wait for on channel x: every ordered op issued on x
 * before it.  That is the issue count when it was queued, raised by the
 * entries ahead of it in the queue, which all left before it (strict FIFO)
 * and so are covered by the channel's last queue release.
 */
static uint64_t need_on(const struct oms_so *so, const uint64_t *snap,
			uint32_t x)
{
	uint64_t rel = so->chan[x].fifo_released;

	return snap[x] > rel ? snap[x] : rel;
}

/*
 * Is an entry with scope @scope, bound for channel @own (or -1 for a fence),
 * free to go?  Records in so->flush_need the posted channels whose flush
 * would help, and how far the flush must reach.
 */
static enum readiness ready(struct oms_so *so, uint16_t scope, int64_t own,
			    const uint64_t *snap, uint64_t *flush)
{
	enum readiness r = GO;

	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];
		uint64_t need;

		if (!in_scope(so, scope, x))
			continue;
		need = need_on(so, snap, x);
		if (need > ch->first_fail)
			return DOOMED;	/* it would follow a failed op */
		if (need <= ch->visible)
			continue;
		/* A posted channel keeps its own stores in order ([0093]). */
		if (x == own && posted(ch))
			continue;
		r = WAIT;
		if (posted(ch) && flush) {
			*flush |= 1ull << x;
			so->flush_need[x] = need;
		}
	}
	return r;
}

/* An acquire barrier: every acquire issued before it completed. */
static enum readiness barrier_ready(struct oms_so *so, struct oms_so_held *h,
				    uint64_t *snap)
{
	enum readiness r = GO;

	if (!h->armed) {
		/* Everything ahead of it has left: the acquires it must
		 * wait for are exactly those issued so far. */
		for (uint32_t x = 0; x < so->nchan; x++)
			snap[x] = so->chan[x].acq_need;
		h->armed = 1;
	}
	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];

		if (snap[x] > ch->acq_fail)
			return DOOMED;
		if (snap[x] > ch->completed)
			r = WAIT;
	}
	return r;
}

/* ---- submission ---- */

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

/* Give an ordered op its channel sequence and count it as in flight. */
static uint64_t give_seq(struct oms_so *so, uint16_t chan)
{
	so->ctr.pending_ack++;
	so->ctr.ack_inc++;
	return so->chan[chan].issued++;
}

/* An op leaves for the transport: note what later ops must know of it. */
static void note_issued(struct oms_so *so, const struct oms_so_store *st,
			uint64_t seq)
{
	struct oms_so_chan *ch = &so->chan[st->chan];

	if (st->cls == OMS_STORE_UNORDERED) {
		if (ch->kind == OMS_CHAN_SEQ)
			ch->unordered++;
		return;
	}
	if (st->op == OMS_SO_OP_PUT)
		return;
	ch->read_need = seq + 1;
	reads_add(ch, st, seq);
	if (st->op == OMS_SO_OP_ATOMIC)
		ch->atomic_need = seq + 1;
	if (st->acquire) {
		ch->acq_need = seq + 1;
		so->acq_mask |= 1ull << st->chan;
	}
}

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
 * out in ready(), which knows what it waits for.
 */
static int after_stop(const struct oms_so *so,
			   const struct oms_so_store *st, uint16_t dest,
			   const uint64_t *snap)
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
		return ready(so, OMS_SO_ALL, st->chan, now, NULL) != GO;
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

/*
 * A strong put goes at once when every earlier ordered op is visible: on
 * each other channel everything issued is acknowledged, and its own
 * channel either is acknowledged too or is posted and keeps its stores in
 * order (ready() with nothing held).
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
 * Then no rule holds it (must_hold()), none fences it (fence_flags())
 * and nothing needs noting (note_issued()): it is issued with the
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
		cancel = after_stop(so, st, dest, NULL);
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
		out->flags = fence_flags(so, st);
		note_issued(so, st, OMS_SO_NONE);
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
		out->flags = fence_flags(so, st);
		out->seq = give_seq(so, st->chan);
		note_issued(so, st, out->seq);
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

int oms_so_submit_op(struct oms_so *so, const struct oms_so_store *st,
		     struct oms_so_action *out)
{
	return submit(so, st, out);
}

int oms_so_submit(struct oms_so *so, const struct oms_so_store *st,
		  uint64_t *seq)
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

/* ---- progress ---- */

static int want_flushes(struct oms_so *so, uint64_t mask,
			struct oms_so_action *act, unsigned int n,
			unsigned int max)
{
	for (uint32_t x = 0; x < so->nchan && n < max; x++) {
		struct oms_so_chan *ch = &so->chan[x];

		if (!(mask & (1ull << x)) || ch->flush_inflight)
			continue;
		/*
		 * A non-posted read pushes every earlier posted write
		 * ([0096]).  On a SEQ channel it covers only what the entry
		 * needs: later numbers may belong to ops still held here,
		 * which the destination would wait for.
		 */
		ch->flush_inflight = 1;
		ch->flush_token = ch->kind == OMS_CHAN_SEQ ?
				  so->flush_need[x] : ch->issued;
		so->ctr.flushes++;
		act[n].type = OMS_SO_ACT_FLUSH;
		act[n].chan = (uint16_t)x;
		act[n].seq = ch->flush_token;
		act[n].cookie = 0;
		act[n].flags = 0;
		n++;
	}
	return (int)n;
}

/* Quiet: flush what is not yet visible, once nothing is held. */
static unsigned int drain_flushes(struct oms_so *so, struct oms_so_action *act,
				  unsigned int n, unsigned int max)
{
	uint64_t mask = 0;

	if (!so->draining || so->count)
		return n;
	for (uint32_t x = 0; x < so->nchan; x++) {
		struct oms_so_chan *ch = &so->chan[x];

		if (posted(ch) && ch->visible < ch->issued &&
		    ch->first_fail == OMS_SO_NONE) {
			mask |= 1ull << x;
			so->flush_need[x] = ch->issued;
		}
	}
	if (!mask) {
		so->draining = 0;
		return n;
	}
	return (unsigned int)want_flushes(so, mask, act, n, max);
}

/*
 * A marker to be cancelled: its scope stops there.  What it holds in its
 * scope follows the failure too (cancelled), and so does every op of that
 * scope submitted later, until resume (a fence's promise outlives the
 * marker).
 */
static void stop_scope(struct oms_so *so, uint16_t scope, uint8_t kind)
{
	if (kind == FENCE_ENTRY && scope == OMS_SO_ALL)
		so->stopped_all = 1;
	else if (kind == FENCE_ENTRY)
		so->stopped_dests |= 1ull << (scope % 64);
	for (uint32_t i = 1; i < so->count; i++) {
		struct oms_so_held *h = held_at(so, i);

		if (is_marker(h) || (scope != OMS_SO_ALL && h->dest != scope))
			continue;
		/* A fence does not order unordered stores; an acquire
		 * orders everything. */
		if (kind == FENCE_ENTRY && h->st.cls == OMS_STORE_UNORDERED)
			continue;
		h->cancel = 1;
	}
}

/*
 * Held op @x, at the head, is cancelled: it is never performed, and what a
 * rule orders after it is not performed either (docs/ordering.md,
 * Failures).  Everything behind it in the queue is later in program order:
 * cancel what follows it there; mark the rest for later submissions.
 */
static void propagate_cancel(struct oms_so *so, const struct oms_so_held *x)
{
	const struct oms_so_store *a = &x->st;
	int ordered = a->cls != OMS_STORE_UNORDERED;
	int seq_chan = so->chan[a->chan].kind == OMS_CHAN_SEQ;
	int fenced = 0, fenced_all = 0;

	for (uint32_t i = 1; i < so->count; i++) {
		struct oms_so_held *h = held_at(so, i);
		const struct oms_so_store *b = &h->st;
		int same = h->dest == x->dest;
		int b_ordered = b->cls != OMS_STORE_UNORDERED;

		if (b->cls == FENCE_ENTRY) {
			fenced_all |= ordered && h->dest == OMS_SO_ALL;
			fenced |= ordered && same;
			continue;
		}
		if (is_marker(h))
			continue;
		if (a->acquire ||					/* A1 */
		    (ordered && b->cls == OMS_STORE_STRONG) ||		/* S1 */
		    (same && b->cls == OMS_STORE_RELEASE) ||		/* R1 */
		    (same && a->op == OMS_SO_OP_ATOMIC && b->acquire) ||	/* A2 */
		    (ordered && b_ordered &&
		     (fenced_all || (same && fenced))) ||		/* F1, F3 */
		    (ordered && b_ordered && seq_chan &&
		     b->chan == a->chan))				/* D1 */
			h->cancel = 1;
	}
	so->any_fail = 1;
	so->lost_dests |= dbit(x->dest);
	if (a->op == OMS_SO_OP_ATOMIC)
		so->lost_atomic_dests |= dbit(x->dest);
	if (a->acquire)
		so->lost_acquire = 1;
	/* A fence behind it stops its scope for later submissions when it
	 * reaches the head (the lost_* marks say why). */
	if (ordered) {
		so->lost_ordered = 1;
		so->lost_ordered_dests |= dbit(x->dest);
	}
}

static void pop(struct oms_so *so)
{
	struct oms_so_held *h = held_at(so, 0);

	if (h->st.cls == FENCE_ENTRY) {
		if (h->dest == OMS_SO_ALL)
			so->all_fences--;
		else
			so->dest_fences[h->dest]--;
	} else if (h->st.cls == BARRIER_ENTRY) {
		so->acq_barriers--;
	} else {
		so->dest_held[h->dest]--;
		if (h->st.acquire) {
			so->held_acq--;
			so->dest_held_acq[h->dest]--;
		}
	}
	so->head = (so->head + 1) % so->max_held;
	so->count--;
}

static void set_fail(struct oms_so *so, struct oms_so_chan *ch, uint64_t seq)
{
	if (seq < ch->first_fail)
		ch->first_fail = seq;
	so->any_fail = 1;
}

/* A held op leaves: issued, or cancelled. */
static void release_op(struct oms_so *so, struct oms_so_held *h,
		       struct oms_so_action *a, int cancel)
{
	struct oms_so_chan *ch = &so->chan[h->st.chan];
	int ordered = h->st.cls != OMS_STORE_UNORDERED;
	uint64_t seq = h->seq;

	a->cookie = h->st.cookie;
	a->chan = h->st.chan;
	a->flags = 0;
	if (ordered) {
		so->ctr.pending_issue--;
		so->ctr.issue_dec++;
	}
	if (cancel) {
		/* Not performed.  A SEQ number it holds is filled by the
		 * caller with a cancelling NOP, acked like any other, that
		 * stops the stream there as a failed member would (D1: the
		 * later members are not performed either). */
		a->type = OMS_SO_ACT_CANCEL;
		a->seq = seq;
		if (ordered && seq != OMS_SO_NONE)
			set_fail(so, ch, seq);
		so->ctr.cancelled++;
		return;
	}
	a->type = OMS_SO_ACT_ISSUE;
	a->flags = fence_flags(so, &h->st);
	if (ordered && seq == OMS_SO_NONE)
		seq = give_seq(so, h->st.chan);
	a->seq = seq;
	if (ordered && seq + 1 > ch->fifo_released)
		ch->fifo_released = seq + 1;
	note_issued(so, &h->st, seq);
}

int oms_so_progress(struct oms_so *so, struct oms_so_action *act,
		    unsigned int max)
{
	unsigned int n = 0;

	if (!so || (!act && max))
		return -EINVAL;

	while (so->count && n < max) {
		struct oms_so_held *h = held_at(so, 0);
		uint64_t *snap = snap_at(so, 0);
		uint64_t flush = 0;
		enum readiness go;

		if (h->cancel)
			go = DOOMED;
		else if (h->st.cls == FENCE_ENTRY &&
			 (h->dest == OMS_SO_ALL ? so->lost_ordered :
			  !!(so->lost_ordered_dests & dbit(h->dest))))
			go = DOOMED;
		else if (!is_marker(h) && so->any_fail &&
			 after_stop(so, &h->st, h->dest, snap))
			go = DOOMED;
		else if (h->st.cls == FENCE_ENTRY)
			go = ready(so, h->dest, -1, snap, &flush);
		else if (h->st.cls == BARRIER_ENTRY)
			go = barrier_ready(so, h, snap);
		else if (h->st.cls == OMS_STORE_STRONG)
			go = ready(so, OMS_SO_ALL, h->st.chan, snap, &flush);
		else
			go = GO;	/* it waited only for its place */
		if (go == WAIT)
			return want_flushes(so, flush, act, n, max);

		if (is_marker(h)) {
			if (go == DOOMED)
				stop_scope(so, h->dest, h->st.cls);
		} else {
			release_op(so, h, &act[n++], go == DOOMED);
			if (go == DOOMED)
				propagate_cancel(so, h);
		}
		pop(so);
	}
	return (int)drain_flushes(so, act, n, max);
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
	if (was_read(ch, seq, 0) && seq < ch->acq_fail)
		ch->acq_fail = seq;
	if (was_read(ch, seq, 1) && seq < ch->atomic_fail)
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

void oms_so_drain(struct oms_so *so)
{
	if (so)
		so->draining = 1;
}

void oms_so_abort(struct oms_so *so, int status)
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
	so->draining = 0;
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

int oms_so_copy(struct oms_so *dst, const struct oms_so *src)
{
	struct oms_so keep;

	if (!dst || !src || dst->nchan != src->nchan ||
	    dst->ndest != src->ndest || dst->max_held != src->max_held)
		return -EINVAL;
	keep = *dst;
	*dst = *src;
	dst->chan = keep.chan;
	dst->held = keep.held;
	dst->snap = keep.snap;
	dst->flush_need = keep.flush_need;
	dst->dest_mask = keep.dest_mask;
	dst->dest_fences = keep.dest_fences;
	dst->dest_held = keep.dest_held;
	dst->dest_held_acq = keep.dest_held_acq;
	memcpy(dst->chan, src->chan, src->nchan * sizeof(*src->chan));
	memcpy(dst->held, src->held, src->max_held * sizeof(*src->held));
	memcpy(dst->snap, src->snap,
	       (size_t)src->max_held * src->nchan * sizeof(*src->snap));
	memcpy(dst->flush_need, src->flush_need,
	       src->nchan * sizeof(*src->flush_need));
	memcpy(dst->dest_mask, src->dest_mask,
	       src->ndest * sizeof(*src->dest_mask));
	memcpy(dst->dest_fences, src->dest_fences,
	       src->ndest * sizeof(*src->dest_fences));
	memcpy(dst->dest_held, src->dest_held,
	       src->ndest * sizeof(*src->dest_held));
	memcpy(dst->dest_held_acq, src->dest_held_acq,
	       src->ndest * sizeof(*src->dest_held_acq));
	return 0;
}

int oms_so_dest_visible(const struct oms_so *so, uint16_t dest)
{
	for (uint32_t x = 0; x < so->nchan; x++)
		if (in_scope(so, dest, x) &&
		    (so->chan[x].issued != so->chan[x].visible ||
		     so->chan[x].first_fail != OMS_SO_NONE))
			return 0;
	return 1;
}

int oms_so_failed(const struct oms_so *so)
{
	return so->any_fail;
}

uint64_t oms_so_chan_issued(const struct oms_so *so, uint16_t chan)
{
	return chan < so->nchan ? so->chan[chan].issued : 0;
}

int oms_so_chan_kind(const struct oms_so *so, uint16_t chan)
{
	return chan < so->nchan ? so->chan[chan].kind : -EINVAL;
}

uint32_t oms_so_failed_chans(const struct oms_so *so)
{
	uint32_t mask = 0;

	for (uint32_t c = 0; c < so->nchan && c < 32; c++)
		if (so->chan[c].first_fail != OMS_SO_NONE)
			mask |= 1u << c;
	return mask;
}

int oms_so_quiescent(const struct oms_so *so)
{
	if (so->count || so->ctr.pending_issue)
		return 0;
	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];

		if (ch->flush_inflight || ch->completed != ch->issued)
			return 0;
		if (ch->visible != ch->issued && ch->first_fail == OMS_SO_NONE)
			return 0;
	}
	return 1;
}

int oms_so_take_error(struct oms_so *so)
{
	int e = so->first_error;

	so->first_error = 0;
	return e;
}
