// SPDX-License-Identifier: MIT
/*
 * Store orderer: set-up, copying and the queries.  See store_order.h for
 * the model and docs/ordering.md for the rules; the comments say why each
 * step is needed.  The orderer's work is in store_order_submit.c
 * (submission), store_order_hold.c (progress), store_order_chan.c (what
 * an issued op needs and leaves on its channel) and store_order_ack.c
 * (completions and failures); store_order_int.h says what they share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store_order_int.h"

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
