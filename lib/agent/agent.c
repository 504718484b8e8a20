// SPDX-License-Identifier: MIT
/*
 * The destination agent's core (agent.h): descriptors in, operations on
 * host memory and completions out.  The engine's destination stream
 * machine (engine/dest_stream.h) keeps each stream in sequence order and
 * decides what is performed, cancelled or refused, as it does for the
 * emulated device; its hold keeps class-2 responses behind the owner's
 * posted writes.  What is left here is validation, performing, and
 * completing what the machine cancels or gives up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oms.h"
#include "agent/agent.h"
#include "engine/dest_stream.h"
#include "engine/fabric.h"
#include "engine/hold.h"
#include "util/barrier.h"
#include "util/lines.h"

#define AG_DEF_CPL	4096u
#define AG_DEF_HELD	1024u
#define AG_HOLD_WINDOW	4096u	/* unacked posted writes per node */
#define AG_HOLD_GWINDOW	65536u	/* and in all: one node's full window
				 * must not stop another's writes */
#define AG_HELD_BYTES	(64ull << 20)	/* held answers' bytes at most */

/* A buffered stream member: the descriptor and, if it was refused, why. */
struct ag_pend {
	struct oms_ad_desc d;
	int32_t status;
};

struct ag_conn {
	int used;
	uint32_t peer;
	uint16_t window;
	struct oms_dseq seq;	/* its streams */
	struct ag_pend *pend;	/* [nstreams * window], by number's slot */
	struct oms_ad_conn adc;
	const uint8_t *stage;
	enum oms_ad_fmt fmt;	/* its descriptors' check */
	uint8_t failed;		/* a descriptor completed with an error:
				 * later OMS_AD_F_CHAIN ones are cancelled */
};

/* A class-2 get whose answer the hold keeps, or that waits its turn. */
struct ag_held {
	struct oms_ad_desc d;
	uint32_t conn, gen;
	uint8_t *buf;
};

struct oms_agent {
	struct oms_agent_attr a;
	struct oms_agent_ops ops;
	struct oms_ad_region reg[OMS_AGENT_MAX_REGIONS];
	uint8_t *base[OMS_AGENT_MAX_REGIONS];
	uint32_t nreg;
	struct ag_conn conn[OMS_AGENT_MAX_CONNS];
	uint32_t gen[OMS_AGENT_MAX_CONNS];	/* bumped at close */
	struct oms_hold hold;
	struct ag_held *held;			/* [max_held] */
	uint32_t *held_free;			/* stack of free slots */
	uint32_t nfree_held;
	uint64_t held_bytes;			/* their buffers */
	/*
	 * Answers the hold let go, in the order it let them go, waiting for
	 * room in the completion ring; a class-2 answer that could leave at
	 * once waits behind them, so that class-2 answers leave in the
	 * order they were handed in (oms_hold's rule, kept across the
	 * agent's own queue).
	 */
	uint32_t *ready;			/* ring of max_held slots */
	uint32_t ready_head, ready_count;
	struct oms_agent_cpl *cpl;		/* ring of max_cpl */
	uint32_t cpl_head, cpl_count;
	uint8_t *scratch;			/* a get's bytes */
	uint32_t *perm;				/* chaos: line order */
	uint64_t rng;
	struct oms_agent_stats s;
};

static int is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* ---- completions ---- */

static uint32_t cpl_free(const struct oms_agent *ag)
{
	return ag->a.max_cpl - ag->cpl_count;
}

static void complete(struct oms_agent *ag, uint32_t conn,
		     const struct oms_ad_desc *d, int status, uint64_t old)
{
	struct oms_agent_cpl *c;

	/* submit reserved room for every completion it can make */
	c = &ag->cpl[(ag->cpl_head + ag->cpl_count) & (ag->a.max_cpl - 1)];
	ag->cpl_count++;
	memset(c, 0, sizeof(*c));
	c->conn = conn;
	c->status = status;
	if (status)
		ag->conn[conn].failed = 1;
	c->old = old;
	if (d) {
		c->tag = d->tag;
		c->op = d->op;
		c->stream = d->stream;
		c->seq = d->seq;
		c->len = d->len;
	}
	if (status == -ECANCELED)
		ag->s.cancelled++;
}

/* ---- performing ---- */

/*
 * Line by line in address order, the lines of the region (the put's
 * destination, the get's source) being the unit:
 *   - a put orders each line's stores before the next line's;
 *   - an acquire get orders each line's loads before the next line's.
 * The CPU's own barriers (util/barrier.h): on x86, which keeps loads in
 * order with loads and stores with stores, only the compiler's; a load
 * or store barrier where they may pass each other.
 */
static void copy_lines(uint8_t *dst, const uint8_t *src, uint32_t len,
		       int put)
{
	uintptr_t region = put ? (uintptr_t)dst : (uintptr_t)src;

	for (uint32_t i = 0; i < oms_line_count(region, len); i++) {
		uint64_t lo, n;

		oms_line_span(region, len, i, &lo, &n);
		memcpy(dst + (lo - region), src + (lo - region), n);
		if (put)
			oms_barrier_store_store();
		else
			oms_barrier_load_load();
	}
}

/* The chaos fabric's stream (engine/fabric.h), the agent's own. */
static uint64_t ag_rand(struct oms_agent *ag)
{
	return oms_fab_rand(&ag->rng);
}

/* A relaxed get: lines in any order; with chaos, a drawn one. */
static void get_lines_relaxed(struct oms_agent *ag, uint8_t *dst,
			      const uint8_t *src, uint32_t len)
{
	uint32_t nl = oms_line_count((uintptr_t)src, len);

	if (!ag->a.chaos_seed || nl == 1) {
		memcpy(dst, src, len);
		return;
	}
	for (uint32_t i = 0; i < nl; i++)
		ag->perm[i] = i;
	for (uint32_t i = nl - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(ag_rand(ag) % (i + 1)), t = ag->perm[i];

		ag->perm[i] = ag->perm[j];
		ag->perm[j] = t;
	}
	for (uint32_t i = 0; i < nl; i++) {
		uint64_t lo, n;

		oms_line_span((uintptr_t)src, len, ag->perm[i], &lo, &n);
		memcpy(dst + (lo - (uintptr_t)src), src + (lo - (uintptr_t)src),
		       n);
	}
}

static const struct oms_ad_region *find_region(const struct oms_agent *ag,
					       uint32_t key, uint8_t **base)
{
	for (uint32_t i = 0; i < ag->nreg; i++)
		if (ag->reg[i].key == key) {
			*base = ag->base[i];
			return &ag->reg[i];
		}
	return NULL;
}

static uint32_t right_of(uint8_t op)
{
	return op == OMS_AD_GET ? OMS_ACCESS_REMOTE_READ :
	       op == OMS_AD_PUT ? OMS_ACCESS_REMOTE_WRITE :
				  OMS_ACCESS_REMOTE_ATOMIC;
}

static int land(struct oms_agent *ag, uint32_t conn,
		const struct oms_ad_desc *d, const void *src, uint32_t len)
{
	int r = ag->ops.land(ag->ops.arg, conn, d->laddr, d->lrkey, src, len);

	if (r > 0)
		r = -EIO;
	if (r)
		ag->s.land_errors++;
	return r;
}

static void held_put(struct oms_agent *ag, uint32_t slot)
{
	struct ag_held *h = &ag->held[slot];

	ag->held_bytes -= h->d.len;
	free(h->buf);
	memset(h, 0, sizeof(*h));
	ag->held_free[ag->nfree_held++] = slot;
}

/* Move what the hold let go to the ready queue, in its order. */
static void take_released(struct oms_agent *ag)
{
	uint64_t cookie;

	while (oms_hold_pop(&ag->hold, NULL, &cookie) == 1) {
		uint32_t at = (ag->ready_head + ag->ready_count) %
			      ag->a.max_held;

		ag->ready[at] = (uint32_t)cookie;
		ag->ready_count++;
	}
}

/* A get: read now; answer now, or hold the answer (class 2).  Returns
 * the status it completed with (0 when held or queued). */
static int perform_get(struct oms_agent *ag, uint32_t conn, uint8_t *src,
		       const struct oms_ad_desc *d)
{
	int ordered = !(ag->a.flags & OMS_AGENT_F_NO_ORDER);
	uint8_t *buf = ag->scratch;
	uint32_t slot = 0;
	int r;

	if (ordered && (d->flags & OMS_AD_F_RESP_ORDERED)) {
		/* a requester may not pin more than the cap in held answers */
		buf = ag->nfree_held && d->len <= AG_HELD_BYTES - ag->held_bytes ?
		      malloc(d->len) : NULL;
		if (!buf) {
			complete(ag, conn, d, -ENOBUFS, 0);
			return -ENOBUFS;
		}
		slot = ag->held_free[--ag->nfree_held];
		ag->held[slot] = (struct ag_held){ .d = *d, .conn = conn,
			.gen = ag->gen[conn], .buf = buf };
		ag->held_bytes += d->len;
	}
	if (ordered && (d->flags & OMS_AD_F_ACQUIRE))
		copy_lines(buf, src, d->len, 0);
	else
		get_lines_relaxed(ag, buf, src, d->len);
	if (buf != ag->scratch && ag->ops.sync) {
		/* the writes issued before what was read are reported: a
		 * host store seen above was preceded by them */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (ag->ops.sync(ag->ops.arg, ag->conn[conn].peer)) {
			held_put(ag, slot);
			complete(ag, conn, d, -ENOBUFS, 0);
			return -ENOBUFS;
		}
	}
	if (buf != ag->scratch) {
		r = oms_hold_send(&ag->hold, ag->conn[conn].peer,
				  OMS_HOLD_CLASS2, slot);
		if (r == OMS_HOLD_HELD) {
			ag->s.held++;
			return 0;
		}
		if (r != OMS_HOLD_SEND) {
			held_put(ag, slot);
			complete(ag, conn, d, -ENOBUFS, 0);
			return -ENOBUFS;
		}
		if (ag->ready_count) {
			/* answers let go earlier leave first */
			ag->ready[(ag->ready_head + ag->ready_count) %
				  ag->a.max_held] = slot;
			ag->ready_count++;
			return 0;
		}
	}
	r = land(ag, conn, d, buf, d->len);
	if (buf != ag->scratch)
		held_put(ag, slot);
	complete(ag, conn, d, r, 0);
	return r;
}

/* Perform @d and complete it; returns the status it completed with. */
static int perform(struct oms_agent *ag, uint32_t conn,
		   const struct oms_ad_desc *d)
{
	const struct ag_conn *c = &ag->conn[conn];
	const struct oms_ad_region *reg;
	uint8_t *base = NULL, *at;
	uint64_t old = 0, *word;
	int r = 0;

	if (d->op == OMS_AD_NOP) {
		ag->s.performed++;
		complete(ag, conn, d, 0, 0);
		return 0;
	}
	/* checked again: a member that waited in its stream may meet its
	 * region revoked, or another one served under the same key */
	reg = find_region(ag, d->key, &base);
	if (!reg || !(reg->access & right_of(d->op))) {
		ag->s.refused++;
		ag->s.key_drops++;
		complete(ag, conn, d, -EACCES, 0);
		return -EACCES;
	}
	if (d->off > reg->len || d->len > reg->len - d->off) {
		ag->s.refused++;
		complete(ag, conn, d, -ERANGE, 0);
		return -ERANGE;
	}
	ag->s.performed++;
	at = base + d->off;
	switch (d->op) {
	case OMS_AD_PUT:
		copy_lines(at, c->stage + (size_t)d->stage * c->adc.stage_len,
			   d->len, 1);
		break;
	case OMS_AD_GET:
		return perform_get(ag, conn, at, d);
	case OMS_AD_FADD:
		word = (uint64_t *)(void *)at;
		old = __atomic_fetch_add(word, d->a1, __ATOMIC_SEQ_CST);
		r = land(ag, conn, d, &old, sizeof(old));
		break;
	case OMS_AD_CAS:
		word = (uint64_t *)(void *)at;
		old = d->a1;
		__atomic_compare_exchange_n(word, &old, d->a2, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		r = land(ag, conn, d, &old, sizeof(old));
		break;
	}
	complete(ag, conn, d, r, old);
	return r;
}

/* ---- streams ---- */

/* Member @cookie is not performed: a refused one completes with its own
 * error, the others with -ECANCELED. */
static void complete_unperformed(struct oms_agent *ag, uint32_t conn,
				 uint64_t cookie)
{
	const struct ag_pend *p = &ag->conn[conn].pend[cookie];

	complete(ag, conn, &p->d, p->status ? p->status : -ECANCELED, 0);
}

/* Complete what the stream machine gave up (a stop, a resume). */
static void complete_dropped(struct oms_agent *ag, uint32_t conn)
{
	uint64_t cookie;

	while (oms_dseq_dropped(&ag->conn[conn].seq, &cookie))
		complete_unperformed(ag, conn, cookie);
}

/* Perform what the stream machine lets go, in number order. */
static void run_stream(struct oms_agent *ag, uint32_t conn, uint16_t stream)
{
	struct ag_conn *c = &ag->conn[conn];
	enum oms_stream_verdict v;
	uint64_t cookie;
	uint16_t seq;

	while (oms_dseq_pop(&c->seq, stream, &seq, &cookie, &v) == 1) {
		if (v != OMS_STREAM_GO)
			complete_unperformed(ag, conn, cookie);
		else if (perform(ag, conn, &c->pend[cookie].d))
			oms_dseq_failed(&c->seq, stream, seq);
		complete_dropped(ag, conn);
	}
}

static void submit_seq(struct oms_agent *ag, uint32_t conn,
		       const struct oms_ad_desc *d, int status)
{
	struct ag_conn *c = &ag->conn[conn];
	uint64_t slot;
	int waits, r;

	if (ag->a.flags & OMS_AGENT_F_NO_ORDER) {
		/* the control: performed on arrival, numbers ignored */
		if (status)
			complete(ag, conn, d, status, 0);
		else
			perform(ag, conn, d);
		return;
	}
	if (d->op == OMS_AD_NOP && (d->flags & OMS_AD_F_CANCEL) && !status)
		status = -ECANCELED;
	slot = (uint64_t)d->stream * c->window + (d->seq & (c->window - 1u));
	waits = d->seq != oms_dseq_next(&c->seq, d->stream);
	r = oms_dseq_arrive(&c->seq, d->stream, d->seq, slot, status != 0);
	if (r) {
		/* after the stop, or no place in the stream (the stream
		 * stopped where it stood) */
		complete(ag, conn, d, status ? status : r, 0);
		if (!status && r != -ECANCELED)
			ag->s.refused++;
		complete_dropped(ag, conn);
		return;
	}
	c->pend[slot].d = *d;
	c->pend[slot].status = status;
	if (waits)
		ag->s.waited++;
	run_stream(ag, conn, d->stream);
}

/* ---- the interface ---- */

int oms_agent_submit(struct oms_agent *ag, uint32_t conn, const void *desc)
{
	const struct oms_ad_region *reg;
	struct oms_ad_desc d;
	struct ag_conn *c;
	int status;

	if (!ag || !desc || conn >= OMS_AGENT_MAX_CONNS ||
	    !ag->conn[conn].used)
		return -EINVAL;
	c = &ag->conn[conn];
	/* itself, plus a window of members released or dropped */
	if (cpl_free(ag) < (uint32_t)c->window + 1u)
		return -EAGAIN;
	ag->s.submitted++;
	if (oms_ad_decode(desc, &d, c->fmt)) {
		ag->s.refused++;
		ag->s.torn++;
		complete(ag, conn, NULL, -EPROTO, 0);
		return 0;
	}
	c->adc.regions = ag->reg;
	c->adc.nregions = ag->nreg;
	status = oms_ad_validate(&d, &c->adc, &reg);
	if (status == -EINVAL && d.stream >= c->adc.nstreams) {
		/* no stream of this connection to stop */
		ag->s.refused++;
		complete(ag, conn, &d, status, 0);
		return 0;
	}
	if (status) {
		ag->s.refused++;
		if (status == -EACCES)
			ag->s.key_drops++;
	}
	/* an in-order channel: nothing after a failure is performed */
	if (!status && (d.flags & OMS_AD_F_CHAIN) && c->failed)
		status = -ECANCELED;
	if (!status && (d.flags & OMS_AD_F_RESUME)) {
		/* the requester resumed: in ring order, after the old run
		 * (room for what it drops was reserved above) */
		if (!(ag->a.flags & OMS_AGENT_F_NO_ORDER))
			status = oms_agent_resume(ag, conn, d.stream, d.seq);
		if (!status)
			ag->s.performed++;
		complete(ag, conn, &d, status, 0);
		return 0;
	}
	if (d.flags & OMS_AD_F_SEQ) {
		submit_seq(ag, conn, &d, status);
		return 0;
	}
	if (status)
		complete(ag, conn, &d, status, 0);
	else
		perform(ag, conn, &d);
	return 0;
}

int oms_agent_poll(struct oms_agent *ag, struct oms_agent_cpl *cpl,
		   unsigned int max)
{
	unsigned int n = 0;

	if (!ag || (!cpl && max))
		return -EINVAL;
	/* answers the hold let go, in order, while there is room */
	take_released(ag);
	while (cpl_free(ag) && ag->ready_count) {
		uint32_t slot = ag->ready[ag->ready_head];
		struct ag_held *h = &ag->held[slot];

		ag->ready_head = (ag->ready_head + 1) % ag->a.max_held;
		ag->ready_count--;
		if (h->gen == ag->gen[h->conn] && ag->conn[h->conn].used)
			complete(ag, h->conn, &h->d,
				 land(ag, h->conn, &h->d, h->buf, h->d.len), 0);
		held_put(ag, slot);
	}
	while (n < max && ag->cpl_count) {
		cpl[n++] = ag->cpl[ag->cpl_head];
		ag->cpl_head = (ag->cpl_head + 1) & (ag->a.max_cpl - 1);
		ag->cpl_count--;
	}
	return (int)n;
}

int oms_agent_resume(struct oms_agent *ag, uint32_t conn, uint16_t stream,
		     uint16_t next)
{
	struct ag_conn *c;

	if (!ag || conn >= OMS_AGENT_MAX_CONNS || !ag->conn[conn].used)
		return -EINVAL;
	c = &ag->conn[conn];
	if (stream >= c->adc.nstreams)
		return -EINVAL;
	if (cpl_free(ag) < c->window)
		return -EAGAIN;
	oms_dseq_resume(&c->seq, stream, next);
	complete_dropped(ag, conn);
	return 0;
}

uint32_t oms_agent_held(const struct oms_agent *ag)
{
	long h = ag ? oms_hold_held(&ag->hold) : 0;

	return ag ? (uint32_t)(h > 0 ? h : 0) + ag->ready_count : 0;
}

int oms_agent_next_seq(const struct oms_agent *ag, uint32_t conn,
		       uint16_t stream)
{
	if (!ag || conn >= OMS_AGENT_MAX_CONNS || !ag->conn[conn].used ||
	    stream >= ag->conn[conn].adc.nstreams)
		return -EINVAL;
	return oms_dseq_next(&ag->conn[conn].seq, stream);
}

int oms_agent_posted(struct oms_agent *ag, uint32_t peer, uint32_t *id)
{
	if (!ag || !id || peer >= OMS_AGENT_MAX_PEERS)
		return -EINVAL;
	return oms_hold_post(&ag->hold, peer, id);
}

int oms_agent_posted_ack(struct oms_agent *ag, uint32_t peer, uint32_t id)
{
	int r;

	if (!ag || peer >= OMS_AGENT_MAX_PEERS)
		return -EINVAL;
	r = oms_hold_ack(&ag->hold, peer, id);
	/* in line now: a class-2 answer performed later waits behind */
	take_released(ag);
	return r < 0 ? r : 0;
}

/* ---- regions and connections ---- */

int oms_agent_region_add(struct oms_agent *ag, void *base, uint64_t len,
			 uint32_t key, uint32_t access)
{
	uint8_t *b;

	/* 8-byte aligned: an atomic's offset is, so its word is too */
	if (!ag || !base || ((uintptr_t)base & 7) || !len || !access ||
	    (access & ~OMS_ACCESS_ALL) ||
	    len > (uint64_t)(UINTPTR_MAX - (uintptr_t)base))
		return -EINVAL;
	if (find_region(ag, key, &b))
		return -EEXIST;
	if (ag->nreg == OMS_AGENT_MAX_REGIONS)
		return -ENOSPC;
	ag->reg[ag->nreg] = (struct oms_ad_region){ key, access, len };
	ag->base[ag->nreg] = base;
	ag->nreg++;
	return 0;
}

int oms_agent_region_remove(struct oms_agent *ag, uint32_t key)
{
	if (!ag)
		return -EINVAL;
	for (uint32_t i = 0; i < ag->nreg; i++)
		if (ag->reg[i].key == key) {
			ag->nreg--;
			ag->reg[i] = ag->reg[ag->nreg];
			ag->base[i] = ag->base[ag->nreg];
			return 0;
		}
	return -EINVAL;
}

static void conn_free(struct ag_conn *c)
{
	oms_dseq_destroy(&c->seq);
	free(c->pend);
	memset(c, 0, sizeof(*c));
}

int oms_agent_conn_open(struct oms_agent *ag,
			const struct oms_agent_conn_attr *a, uint32_t *id)
{
	struct ag_conn *c = NULL;
	uint32_t i;

	if (!ag || !a || !id || !a->nstreams ||
	    a->nstreams > OMS_AGENT_MAX_STREAMS || !is_pow2(a->window) ||
	    a->window > OMS_AD_MAX_WINDOW || a->peer >= OMS_AGENT_MAX_PEERS ||
	    a->stage_len > OMS_AD_MAX_LEN || (a->stage_slots && !a->stage) ||
	    (uint64_t)a->stage_slots * a->stage_len > SIZE_MAX / 2 ||
	    (a->fmt && a->fmt != OMS_AD_FMT_FNV1A &&
	     a->fmt != OMS_AD_FMT_CRC32C))
		return -EINVAL;
	for (i = 0; i < OMS_AGENT_MAX_CONNS && !c; i++)
		if (!ag->conn[i].used)
			c = &ag->conn[i];
	if (!c)
		return -ENOSPC;
	i--;
	c->pend = calloc((size_t)a->nstreams * a->window, sizeof(*c->pend));
	if (!c->pend || oms_dseq_init(&c->seq, a->nstreams, a->window)) {
		conn_free(c);
		return -ENOMEM;
	}
	c->peer = a->peer;
	c->window = a->window;
	c->stage = a->stage;
	c->fmt = a->fmt ? (enum oms_ad_fmt)a->fmt : OMS_AD_FMT_CRC32C;
	c->adc.stage_slots = a->stage_slots;
	c->adc.stage_len = a->stage_len;
	c->adc.nstreams = a->nstreams;
	c->used = 1;
	*id = i;
	return 0;
}

int oms_agent_conn_close(struct oms_agent *ag, uint32_t id)
{
	if (!ag || id >= OMS_AGENT_MAX_CONNS || !ag->conn[id].used)
		return -EINVAL;
	conn_free(&ag->conn[id]);
	ag->gen[id]++;
	/* its completions not yet polled go too: the id may be given to
	 * the next requester at once */
	for (uint32_t i = 0, kept = 0, n = ag->cpl_count; i < n; i++) {
		uint32_t mask = ag->a.max_cpl - 1;
		const struct oms_agent_cpl *c = &ag->cpl[(ag->cpl_head + i) &
							 mask];

		if (c->conn != id)
			ag->cpl[(ag->cpl_head + kept++) & mask] = *c;
		else
			ag->cpl_count--;
	}
	return 0;
}

/* The agent's arrays and itself (any of them may be NULL). */
static void agent_free(struct oms_agent *ag)
{
	free(ag->held);
	free(ag->held_free);
	free(ag->ready);
	free(ag->cpl);
	free(ag->scratch);
	free(ag->perm);
	free(ag);
}

int oms_agent_create(const struct oms_agent_attr *attr,
		     const struct oms_agent_ops *ops, struct oms_agent **out)
{
	struct oms_hold_config hc = { 0 };
	struct oms_agent_attr a = { 0 };
	struct oms_agent *ag;

	if (!ops || !ops->land || !out)
		return -EINVAL;
	if (attr)
		a = *attr;
	if (!a.max_cpl)
		a.max_cpl = AG_DEF_CPL;
	if (!a.max_held)
		a.max_held = AG_DEF_HELD;
	if ((a.flags & ~OMS_AGENT_F_ALL) || a.reserved ||
	    !is_pow2(a.max_cpl) || a.max_cpl < 2 * (OMS_AD_MAX_WINDOW + 1) ||
	    a.max_held > OMS_HOLD_MAX_HELD)
		return -EINVAL;
	ag = calloc(1, sizeof(*ag));
	if (!ag)
		return -ENOMEM;
	ag->a = a;
	ag->ops = *ops;
	ag->rng = a.chaos_seed;
	hc.ndest = OMS_AGENT_MAX_PEERS;
	hc.window = AG_HOLD_WINDOW;
	hc.gwindow = AG_HOLD_GWINDOW;
	hc.max_held = a.max_held;
	hc.scope = (a.flags & OMS_AGENT_F_HOLD_GLOBAL) ? OMS_HOLD_GLOBAL :
							  OMS_HOLD_PER_DEST;
	ag->held = calloc(a.max_held, sizeof(*ag->held));
	ag->held_free = calloc(a.max_held, sizeof(*ag->held_free));
	ag->ready = calloc(a.max_held, sizeof(*ag->ready));
	ag->cpl = calloc(a.max_cpl, sizeof(*ag->cpl));
	ag->scratch = malloc(OMS_AD_MAX_LEN);
	ag->perm = calloc(OMS_AD_MAX_LEN / OMS_LINE + 1, sizeof(*ag->perm));
	if (!ag->held || !ag->held_free || !ag->ready || !ag->cpl ||
	    !ag->scratch || !ag->perm ||
	    oms_hold_init(&ag->hold, &hc, NULL, 0)) {
		agent_free(ag);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < a.max_held; i++)
		ag->held_free[i] = a.max_held - 1 - i;
	ag->nfree_held = a.max_held;
	*out = ag;
	return 0;
}

void oms_agent_destroy(struct oms_agent *ag)
{
	if (!ag)
		return;
	for (uint32_t i = 0; i < OMS_AGENT_MAX_CONNS; i++)
		if (ag->conn[i].used)
			conn_free(&ag->conn[i]);
	for (uint32_t i = 0; i < ag->a.max_held; i++)
		free(ag->held[i].buf);
	oms_hold_destroy(&ag->hold);
	agent_free(ag);
}

void oms_agent_stats(const struct oms_agent *ag, struct oms_agent_stats *st)
{
	if (ag && st)
		*st = ag->s;
}
