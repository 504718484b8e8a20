// SPDX-License-Identifier: MIT
/*
 * The requester's side of the destination agent (client.h): credits,
 * ring positions, staging slots, stream numbers and the matching of
 * answers to requests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_desc.h"
#include "agent/client.h"
#include "engine/serial.h"

#define AC_IDX_BITS	12u			/* OMS_AGENT_CLIENT_MAX */
#define AC_IDX_MASK	((1u << AC_IDX_BITS) - 1)
#define AC_GEN_MAX	((1u << (32 - AC_IDX_BITS)) - 1)
#define AC_NO_STREAM	UINT16_MAX
#define AC_MAP_WORDS	(OMS_AD_MAX_WINDOW / 64)

struct ac_entry {
	uint64_t cookie;
	uint64_t pos;
	uint32_t gen;		/* 1..AC_GEN_MAX: tags are never 0 */
	uint32_t stage;		/* UINT32_MAX: none */
	uint32_t epoch;		/* its stream's, when taken */
	uint16_t stream, seq;
	uint8_t used, posted;
};

/*
 * A stream's numbers: [low, next) taken; of those, the answered ones, by
 * number mod 256 (a window is at most 256, so the numbers in flight are
 * distinct there).
 */
struct ac_stream {
	uint16_t low, next;
	uint32_t epoch;		/* bumped by resume */
	uint32_t unposted;	/* numbers taken, not yet posted */
	uint64_t answered[AC_MAP_WORDS];
};

static int pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

static int bit_get(const uint64_t *m, uint16_t n)
{
	n %= OMS_AD_MAX_WINDOW;
	return (int)((m[n / 64] >> (n % 64)) & 1);
}

static void bit_set(uint64_t *m, uint16_t n, int v)
{
	n %= OMS_AD_MAX_WINDOW;
	if (v)
		m[n / 64] |= 1ull << (n % 64);
	else
		m[n / 64] &= ~(1ull << (n % 64));
}

int oms_agent_client_init(struct oms_agent_client *cl,
			  const struct oms_agent_client_cfg *cfg)
{
	uint32_t n;

	if (!cl || !cfg || !pow2_in(cfg->ring_slots, 16, 4096) ||
	    !pow2_in(cfg->cq_slots, 16, 4096) || cfg->stage_slots > 4096 ||
	    !cfg->nstreams || cfg->nstreams > 64 ||
	    !pow2_in(cfg->window, 1, OMS_AD_MAX_WINDOW))
		return -EINVAL;
	memset(cl, 0, sizeof(*cl));
	cl->cfg = *cfg;
	n = cfg->ring_slots < cfg->cq_slots ? cfg->ring_slots : cfg->cq_slots;
	cl->max_out = n < OMS_AGENT_CLIENT_MAX ? n : OMS_AGENT_CLIENT_MAX;
	cl->ent = calloc(cl->max_out, sizeof(*cl->ent));
	cl->free_ent = calloc(cl->max_out, sizeof(*cl->free_ent));
	cl->free_stage = calloc(cfg->stage_slots + 1u,
				sizeof(*cl->free_stage));
	cl->st = calloc(cfg->nstreams, sizeof(*cl->st));
	if (!cl->ent || !cl->free_ent || !cl->free_stage || !cl->st) {
		oms_agent_client_destroy(cl);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cl->max_out; i++) {
		cl->free_ent[i] = i;
		cl->ent[i].gen = 1;
	}
	cl->nfree_ent = cl->max_out;
	for (uint32_t i = 0; i < cfg->stage_slots; i++)
		cl->free_stage[i] = cfg->stage_slots - 1 - i;
	cl->nfree_stage = cfg->stage_slots;
	return 0;
}

void oms_agent_client_destroy(struct oms_agent_client *cl)
{
	if (!cl)
		return;
	free(cl->ent);
	free(cl->free_ent);
	free(cl->free_stage);
	free(cl->st);
	memset(cl, 0, sizeof(*cl));
}

/*
 * Free entries are reused oldest first, so a tag comes back only after
 * every entry went round 2^20 - 1 generations: a stale record would have
 * to be max_out million requests old to be taken for a live one.
 */
static uint32_t ent_get(struct oms_agent_client *cl)
{
	uint32_t idx = cl->free_ent[cl->free_head];

	cl->free_head = (cl->free_head + 1) % cl->max_out;
	cl->nfree_ent--;
	return idx;
}

static void ent_put(struct oms_agent_client *cl, uint32_t idx)
{
	struct ac_entry *e = &cl->ent[idx];

	e->used = 0;
	e->gen = e->gen == AC_GEN_MAX ? 1 : e->gen + 1;
	cl->free_ent[(cl->free_head + cl->nfree_ent) % cl->max_out] = idx;
	cl->nfree_ent++;
	cl->outstanding--;
}

int oms_agent_client_take(struct oms_agent_client *cl, int put,
			  uint16_t stream, uint64_t cookie,
			  struct oms_agent_req *req)
{
	struct ac_stream *s = NULL;
	struct ac_entry *e;
	uint32_t idx;

	if (!cl || !req || !cl->st ||
	    (stream != AC_NO_STREAM && stream >= cl->cfg.nstreams) ||
	    (put && !cl->cfg.stage_slots))
		return -EINVAL;
	if (stream != AC_NO_STREAM)
		s = &cl->st[stream];
	/*
	 * The table has min(ring, completion ring) entries, and that is the
	 * credit of both: at most that many requests are unanswered, so
	 * the completion ring never overflows; and the agent reads its
	 * ring in order and answers each request after reading it, so of
	 * the positions from the oldest unread one to a new one, all are
	 * unanswered: fewer than a ring's length, and the slot a new one
	 * takes was read.
	 */
	if ((s && oms_serial_ahead(s->next, s->low) >= cl->cfg.window) ||
	    !cl->nfree_ent || (put && !cl->nfree_stage)) {
		cl->s.no_credit++;
		return -EAGAIN;
	}
	idx = ent_get(cl);
	e = &cl->ent[idx];
	e->cookie = cookie;
	e->pos = 0;
	e->stage = put ? cl->free_stage[--cl->nfree_stage] : UINT32_MAX;
	e->stream = stream;
	e->seq = s ? s->next++ : 0;
	e->epoch = s ? s->epoch : 0;
	e->used = 1;
	e->posted = 0;
	if (s)
		s->unposted++;
	cl->unposted++;
	cl->outstanding++;
	cl->s.taken++;
	memset(req, 0, sizeof(*req));
	req->tag = (e->gen << AC_IDX_BITS) | idx;
	req->stage_slot = e->stage;
	req->stream = stream;
	req->seq = e->seq;
	return 0;
}

/* The entry of a request taken and not yet posted, or NULL. */
static struct ac_entry *unposted_entry(struct oms_agent_client *cl,
				       const struct oms_agent_req *req)
{
	uint32_t idx;
	struct ac_entry *e;

	if (!cl || !req || !cl->ent)
		return NULL;
	idx = req->tag & AC_IDX_MASK;
	if (idx >= cl->max_out)
		return NULL;
	e = &cl->ent[idx];
	if (!e->used || e->posted || (req->tag >> AC_IDX_BITS) != e->gen)
		return NULL;
	return e;
}

int oms_agent_client_post(struct oms_agent_client *cl,
			  struct oms_agent_req *req)
{
	struct ac_entry *e = unposted_entry(cl, req);

	if (!e)
		return -EINVAL;
	e->posted = 1;
	e->pos = cl->next_pos++;
	if (e->stream != AC_NO_STREAM)
		cl->st[e->stream].unposted--;
	cl->unposted--;
	cl->unrung++;
	cl->s.posted++;
	req->pos = e->pos;
	req->ring_slot = (uint32_t)(e->pos % cl->cfg.ring_slots);
	return 0;
}

uint32_t oms_agent_client_ring(struct oms_agent_client *cl)
{
	uint32_t n;

	if (!cl)
		return 0;
	n = (uint32_t)cl->unrung;
	cl->unrung = 0;
	return n;
}

/* The answer to a stream member: the lowest unanswered number moves. */
static void stream_answered(struct ac_stream *s, uint16_t seq)
{
	bit_set(s->answered, seq, 1);
	while (s->low != s->next && bit_get(s->answered, s->low)) {
		bit_set(s->answered, s->low, 0);
		s->low++;
	}
}

int oms_agent_client_answer(struct oms_agent_client *cl, const void *rec,
			    uint64_t *cookie, int *status, uint64_t *old)
{
	struct oms_ad_answer a;
	struct ac_entry *e;
	uint32_t idx;

	if (!cl || !rec || !cookie || !status || !old || !cl->ent)
		return -EINVAL;
	if (oms_ad_answer_decode(rec, &a))
		goto bad;
	if (!a.tag) {
		/* the agent could not decode a descriptor of ours: the ring
		 * is not what we wrote, and its request will never be
		 * answered */
		cl->s.torn++;
		return -EBADMSG;
	}
	idx = a.tag & AC_IDX_MASK;
	if (idx >= cl->max_out)
		goto bad;
	e = &cl->ent[idx];
	if (!e->used || !e->posted || (a.tag >> AC_IDX_BITS) != e->gen)
		goto bad;
	if (e->stage != UINT32_MAX)
		cl->free_stage[cl->nfree_stage++] = e->stage;
	if (e->stream != AC_NO_STREAM &&
	    e->epoch == cl->st[e->stream].epoch)
		stream_answered(&cl->st[e->stream], e->seq);
	*cookie = e->cookie;
	*status = a.status;
	*old = a.old;
	ent_put(cl, idx);
	cl->s.answered++;
	return 0;
bad:
	cl->s.bad_answers++;
	return -EPROTO;
}

int oms_agent_client_resume(struct oms_agent_client *cl, uint16_t stream,
			    uint64_t cookie, struct oms_agent_req *req)
{
	struct ac_stream *s;
	struct ac_entry *e;
	uint32_t idx;

	if (!cl || !req || !cl->st || stream >= cl->cfg.nstreams)
		return -EINVAL;
	s = &cl->st[stream];
	/* a number taken and not posted would reach the agent after the
	 * resume, stale: post it (a cancelled op as a cancelling NOP) first */
	if (s->unposted)
		return -EBUSY;
	if (!cl->nfree_ent) {
		cl->s.no_credit++;
		return -EAGAIN;
	}
	idx = ent_get(cl);
	e = &cl->ent[idx];
	/* the resume itself has no place in the window */
	*e = (struct ac_entry){ .cookie = cookie, .gen = e->gen,
				.stage = UINT32_MAX, .stream = AC_NO_STREAM,
				.used = 1 };
	cl->unposted++;
	cl->outstanding++;
	cl->s.taken++;
	/* numbers in flight are given up; answers to them still free their
	 * credits but no longer move the new run's window */
	memset(s->answered, 0, sizeof(s->answered));
	s->low = s->next;
	s->epoch++;
	memset(req, 0, sizeof(*req));
	req->tag = (e->gen << AC_IDX_BITS) | idx;
	req->stage_slot = UINT32_MAX;
	req->stream = stream;
	req->seq = s->next;
	req->resume = 1;
	return 0;
}

int oms_agent_client_untake(struct oms_agent_client *cl,
			    const struct oms_agent_req *req)
{
	struct ac_entry *e = unposted_entry(cl, req);

	/* a number, once taken, is the stream's: only a post gives it back */
	if (!e || e->stream != AC_NO_STREAM || req->resume)
		return -EINVAL;
	if (e->stage != UINT32_MAX)
		cl->free_stage[cl->nfree_stage++] = e->stage;
	cl->unposted--;
	ent_put(cl, (uint32_t)(e - cl->ent));
	return 0;
}

int oms_agent_client_cookie(struct oms_agent_client *cl,
			    const struct oms_agent_req *req, uint64_t cookie)
{
	struct ac_entry *e = unposted_entry(cl, req);

	if (!e)
		return -EINVAL;
	e->cookie = cookie;
	return 0;
}

uint16_t oms_agent_client_low(const struct oms_agent_client *cl,
			      uint16_t stream)
{
	if (!cl || !cl->st || stream >= cl->cfg.nstreams)
		return 0;
	return cl->st[stream].low;
}

uint32_t oms_agent_client_outstanding(const struct oms_agent_client *cl)
{
	return cl ? cl->outstanding : 0;
}
