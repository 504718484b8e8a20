// SPDX-License-Identifier: MIT
/*
 * Store orderer.  See store_order.h for the model; the comments here say
 * why each step is needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store_order.h"

/* Class value of a fence marker in the hold queue; never a store class. */
#define FENCE_ENTRY 0xff

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

int oms_so_init(struct oms_so *so, uint32_t nchan,
		const struct oms_so_chan_cfg *cfg, uint32_t ndest,
		uint32_t max_held)
{
	if (!so || !cfg || nchan == 0 || nchan > OMS_SO_MAX_CHANNELS ||
	    ndest == 0 || ndest >= OMS_SO_ALL || max_held == 0 ||
	    max_held > OMS_SO_MAX_HELD)
		return -EINVAL;
	for (uint32_t i = 0; i < nchan; i++)
		if (cfg[i].dest >= ndest || cfg[i].kind > OMS_CHAN_ACKED)
			return -EINVAL;

	memset(so, 0, sizeof(*so));
	so->chan = calloc(nchan, sizeof(*so->chan));
	so->held = calloc(max_held, sizeof(*so->held));
	so->snap = calloc((size_t)max_held * nchan, sizeof(*so->snap));
	so->dest_fences = calloc(ndest, sizeof(*so->dest_fences));
	if (!so->chan || !so->held || !so->snap || !so->dest_fences) {
		oms_so_destroy(so);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nchan; i++) {
		so->chan[i].dest = cfg[i].dest;
		so->chan[i].kind = cfg[i].kind;
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
	free(so->dest_fences);
	memset(so, 0, sizeof(*so));
}

/*
 * What an entry must wait for on channel x: every ordered store issued on x
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
 * free to go?  Marks in @flush the POSTED channels whose flush would help.
 */
static int ready(const struct oms_so *so, uint16_t scope, int64_t own,
		 const uint64_t *snap, uint64_t *flush)
{
	int ok = 1;

	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];

		if (!in_scope(so, scope, x) || need_on(so, snap, x) <= ch->visible)
			continue;
		/* A posted channel keeps its own stores in order ([0093]). */
		if (x == own && ch->kind == OMS_CHAN_POSTED)
			continue;
		ok = 0;
		if (ch->kind == OMS_CHAN_POSTED && flush)
			*flush |= 1ull << x;
	}
	return ok;
}

static int check_store(const struct oms_so *so, const struct oms_so_store *st)
{
	if (!st || st->chan >= so->nchan || st->len == 0 ||
	    st->addr + st->len < st->addr || st->cls > OMS_STORE_STRONG)
		return -EINVAL;
	return 0;
}

/*
 * Does @st touch bytes of a held store to the same destination?  Sets
 * *other if one of those is on another channel, where the channel cannot
 * keep the two in order.
 */
static int overlaps_held(struct oms_so *so, const struct oms_so_store *st,
			 int *other)
{
	uint16_t dest = so->chan[st->chan].dest;
	int hit = 0;

	*other = 0;
	for (uint32_t i = 0; i < so->count; i++) {
		const struct oms_so_held *h = held_at(so, i);

		if (h->st.cls == FENCE_ENTRY || h->dest != dest)
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

static void push(struct oms_so *so, const struct oms_so_store *st,
		 uint16_t dest)
{
	uint32_t i = so->count++;
	struct oms_so_held *h = held_at(so, i);
	uint64_t *snap = snap_at(so, i);

	h->st = *st;
	h->dest = dest;
	for (uint32_t x = 0; x < so->nchan; x++)
		snap[x] = so->chan[x].issued;
}

static void push_fence(struct oms_so *so, uint16_t scope)
{
	struct oms_so_store marker = { .cls = FENCE_ENTRY };

	push(so, &marker, scope);
	if (scope == OMS_SO_ALL)
		so->all_fences++;
	else
		so->dest_fences[scope]++;
}

/* Give an ordered store its channel sequence and count it as in flight. */
static uint64_t issue(struct oms_so *so, uint16_t chan)
{
	struct oms_so_chan *ch = &so->chan[chan];

	so->ctr.pending_ack++;
	so->ctr.ack_inc++;
	return ch->issued++;
}

int oms_so_submit(struct oms_so *so, const struct oms_so_store *st,
		  uint64_t *seq)
{
	uint16_t dest;
	int hold, other = 0;

	if (!so || !seq || check_store(so, st))
		return -EINVAL;
	if (st->cls == OMS_STORE_UNORDERED) {
		so->ctr.unordered++;
		*seq = UINT64_MAX;
		return OMS_SO_ISSUE;
	}

	dest = so->chan[st->chan].dest;
	if (st->cls == OMS_STORE_WEAK) {
		hold = so->count &&
		       (so->all_fences || so->dest_fences[dest] ||
			overlaps_held(so, st, &other));
	} else {
		uint64_t *now = so->snap;	/* scratch: only used when empty */

		if (so->count) {
			hold = 1;
		} else {
			for (uint32_t x = 0; x < so->nchan; x++)
				now[x] = so->chan[x].issued;
			hold = !ready(so, OMS_SO_ALL, st->chan, now, NULL);
		}
	}

	if (hold && so->count + 1 + !!other > so->max_held)
		return -EAGAIN;

	so->ctr.issue_inc++;
	so->ctr.pending_issue++;
	if (st->cls == OMS_STORE_WEAK)
		so->ctr.weak++;
	else
		so->ctr.strong++;

	if (!hold) {
		if (st->cls == OMS_STORE_STRONG &&
		    so->chan[st->chan].issued != so->chan[st->chan].visible)
			so->ctr.fast_path++;
		so->ctr.pending_issue--;
		so->ctr.issue_dec++;
		*seq = issue(so, st->chan);
		return OMS_SO_ISSUE;
	}

	/* Same bytes on another channel: wait until the earlier ones landed. */
	if (other)
		push_fence(so, dest);
	push(so, st, dest);
	so->ctr.held++;
	return OMS_SO_HELD;
}

int oms_so_fence(struct oms_so *so, uint16_t dest)
{
	if (!so || (dest != OMS_SO_ALL && dest >= so->ndest))
		return -EINVAL;
	if (!so->count && oms_so_dest_visible(so, dest)) {
		so->ctr.fences++;
		return 0;
	}
	if (so->count + 1 > so->max_held)
		return -EAGAIN;
	so->ctr.fences++;
	push_fence(so, dest);
	return 0;
}

static int want_flushes(struct oms_so *so, uint64_t mask,
			struct oms_so_action *act, unsigned int n,
			unsigned int max)
{
	for (uint32_t x = 0; x < so->nchan && n < max; x++) {
		struct oms_so_chan *ch = &so->chan[x];

		if (!(mask & (1ull << x)) || ch->flush_inflight)
			continue;
		/* A non-posted read pushes every earlier posted write ([0096]). */
		ch->flush_inflight = 1;
		ch->flush_token = ch->issued;
		so->ctr.flushes++;
		act[n].type = OMS_SO_ACT_FLUSH;
		act[n].chan = (uint16_t)x;
		act[n].seq = ch->flush_token;
		act[n].cookie = 0;
		n++;
	}
	return (int)n;
}

int oms_so_progress(struct oms_so *so, struct oms_so_action *act,
		    unsigned int max)
{
	unsigned int n = 0;

	if (!so || (!act && max))
		return -EINVAL;

	while (so->count && n < max) {
		struct oms_so_held *h = held_at(so, 0);
		const uint64_t *snap = snap_at(so, 0);
		uint64_t flush = 0;
		int go;

		if (h->st.cls == FENCE_ENTRY)
			go = ready(so, h->dest, -1, snap, &flush);
		else if (h->st.cls == OMS_STORE_STRONG)
			go = ready(so, OMS_SO_ALL, h->st.chan, snap, &flush);
		else
			go = 1;	/* a weak store waited only for its place */
		if (!go)
			return want_flushes(so, flush, act, n, max);

		if (h->st.cls == FENCE_ENTRY) {
			if (h->dest == OMS_SO_ALL)
				so->all_fences--;
			else
				so->dest_fences[h->dest]--;
		} else {
			struct oms_so_chan *ch = &so->chan[h->st.chan];

			so->ctr.pending_issue--;
			so->ctr.issue_dec++;
			act[n].type = OMS_SO_ACT_ISSUE;
			act[n].chan = h->st.chan;
			act[n].cookie = h->st.cookie;
			act[n].seq = issue(so, h->st.chan);
			ch->fifo_released = ch->issued;
			n++;
		}
		so->head = (so->head + 1) % so->max_held;
		so->count--;
	}
	return (int)n;
}

static void note_error(struct oms_so *so, int status)
{
	if (!status)
		return;
	so->ctr.errors++;
	if (!so->first_error)
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

int oms_so_ack(struct oms_so *so, uint16_t chan, uint64_t count, int status)
{
	struct oms_so_chan *ch;

	if (!so || chan >= so->nchan || status > 0)
		return -EINVAL;
	ch = &so->chan[chan];
	if (count > ch->issued)
		return -EINVAL;
	note_error(so, status);
	if (count <= ch->visible) {
		if (count < ch->visible)
			so->ctr.stale_acks++;
		return 0;
	}
	make_visible(so, ch, count);
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
	note_error(so, status);
	ch->flush_inflight = 0;
	if (token > ch->visible)
		make_visible(so, ch, token);
	return 0;
}

int oms_so_dest_visible(const struct oms_so *so, uint16_t dest)
{
	for (uint32_t x = 0; x < so->nchan; x++)
		if (in_scope(so, dest, x) &&
		    so->chan[x].issued != so->chan[x].visible)
			return 0;
	return 1;
}

int oms_so_quiescent(const struct oms_so *so)
{
	if (so->count || so->ctr.pending_ack || so->ctr.pending_issue)
		return 0;
	for (uint32_t x = 0; x < so->nchan; x++)
		if (so->chan[x].flush_inflight)
			return 0;
	return 1;
}

int oms_so_take_error(struct oms_so *so)
{
	int e = so->first_error;

	so->first_error = 0;
	return e;
}
