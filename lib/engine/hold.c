// SPDX-License-Identifier: MIT
/*
 * Class-2 packets held behind unacknowledged posted writes (seed 002).
 * See hold.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/hold.h"
#include "engine/engine_mem.h"

#define NIL 0xffffffffu

static int pow2_in(unsigned v, unsigned lo, unsigned hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

static unsigned gwin(const struct oms_hold_config *c)
{
	return c->gwindow ? c->gwindow : c->window;
}

static int bad_config(const struct oms_hold_config *c)
{
	return !c || c->ndest == 0 || c->ndest > OMS_HOLD_MAX_DEST ||
	       !pow2_in(c->window, 64, OMS_HOLD_MAX_WINDOW) ||
	       !pow2_in(gwin(c), 64, OMS_HOLD_MAX_WINDOW) ||
	       c->max_held == 0 || c->max_held > OMS_HOLD_MAX_HELD ||
	       (c->scope != OMS_HOLD_PER_DEST && c->scope != OMS_HOLD_GLOBAL);
}

/* Layout: pkt[], dest[], dbits[], gbits[], dgseq[] (8-byte parts first). */
size_t oms_hold_memsize(const struct oms_hold_config *c)
{
	if (bad_config(c))
		return 0;
	return (size_t)c->max_held * sizeof(struct oms_hold_pkt) +
	       (((size_t)c->ndest * sizeof(struct oms_hold_dest) + 7) & ~7ul) +
	       (size_t)c->ndest * (c->window / 64) * sizeof(uint64_t) +
	       (size_t)(gwin(c) / 64) * sizeof(uint64_t) +
	       (size_t)c->ndest * c->window * sizeof(uint32_t);
}

int oms_hold_init(struct oms_hold *h, const struct oms_hold_config *cfg,
		  void *mem, size_t memlen)
{
	size_t need = oms_hold_memsize(cfg);
	char *p;
	int owns, r;

	if (!h || !need)
		return -EINVAL;
	r = oms_engine_mem(mem, memlen, need, &mem, &owns);
	if (r)
		return r;
	memset(h, 0, sizeof(*h));
	h->cfg = *cfg;
	h->cfg.gwindow = gwin(cfg);
	p = mem;
	h->pkt = (struct oms_hold_pkt *)p;
	p += (size_t)cfg->max_held * sizeof(struct oms_hold_pkt);
	h->dest = (struct oms_hold_dest *)p;
	p += ((size_t)cfg->ndest * sizeof(struct oms_hold_dest) + 7) & ~7ul;
	h->dbits = (uint64_t *)p;
	p += (size_t)cfg->ndest * (cfg->window / 64) * sizeof(uint64_t);
	h->gbits = (uint64_t *)p;
	p += (size_t)(h->cfg.gwindow / 64) * sizeof(uint64_t);
	h->dgseq = (uint32_t *)p;
	for (unsigned i = 0; i < cfg->ndest; i++)
		h->dest[i].head = h->dest[i].tail = NIL;
	for (unsigned i = 0; i < cfg->max_held; i++)
		h->pkt[i].link = i + 1 < cfg->max_held ? i + 1 : NIL;
	h->free_head = 0;
	h->ghead = h->gtail = h->rhead = h->rtail = NIL;
	h->owns_mem = owns;
	return 0;
}

void oms_hold_destroy(struct oms_hold *h)
{
	if (!h)
		return;
	if (h->owns_mem)
		free(h->pkt);
	memset(h, 0, sizeof(*h));
}

static inline int tbit(const uint64_t *w, uint32_t i)
{
	return (w[i >> 6] >> (i & 63)) & 1;
}

static inline void sbit(uint64_t *w, uint32_t i)
{
	w[i >> 6] |= 1ull << (i & 63);
}

static inline void cbit(uint64_t *w, uint32_t i)
{
	w[i >> 6] &= ~(1ull << (i & 63));
}

static inline uint64_t *dbits_of(struct oms_hold *h, unsigned d)
{
	return h->dbits + (size_t)d * (h->cfg.window / 64);
}

int oms_hold_post(struct oms_hold *h, unsigned dest, uint32_t *id)
{
	struct oms_hold_dest *D;
	uint32_t slot, g;

	if (!h || !h->dest || !id || dest >= h->cfg.ndest)
		return -EINVAL;
	D = &h->dest[dest];
	if (D->next - D->base >= h->cfg.window ||
	    h->gnext - h->gbase >= h->cfg.gwindow)
		return -EAGAIN;
	slot = D->next & (h->cfg.window - 1);
	g = h->gnext++;
	sbit(dbits_of(h, dest), slot);
	h->dgseq[(size_t)dest * h->cfg.window + slot] = g;
	sbit(h->gbits, g & (h->cfg.gwindow - 1));
	*id = D->next++;
	D->unacked++;
	h->cnt.posted++;
	return 0;
}

/* Append packet @i to the list (head, tail). */
static void list_add(struct oms_hold *h, uint32_t *head, uint32_t *tail,
		     uint32_t i)
{
	h->pkt[i].link = NIL;
	if (*tail == NIL)
		*head = i;
	else
		h->pkt[*tail].link = i;
	*tail = i;
}

/* Move packets whose snapshot is covered by @base to the released list. */
static int release_due(struct oms_hold *h, uint32_t *head, uint32_t *tail,
		       uint32_t base)
{
	int n = 0;

	while (*head != NIL && (int32_t)(base - h->pkt[*head].snap) >= 0) {
		uint32_t i = *head;

		*head = h->pkt[i].link;
		if (*head == NIL)
			*tail = NIL;
		list_add(h, &h->rhead, &h->rtail, i);
		n++;
	}
	return n;
}

int oms_hold_ack(struct oms_hold *h, unsigned dest, uint32_t id)
{
	struct oms_hold_dest *D;
	uint64_t *bits;
	uint32_t slot, g, gmask, wmask;

	if (!h || !h->dest)
		return -EINVAL;
	if (dest >= h->cfg.ndest) {
		h->cnt.ack_unknown++;
		return -ENOENT;
	}
	D = &h->dest[dest];
	bits = dbits_of(h, dest);
	wmask = h->cfg.window - 1;
	gmask = h->cfg.gwindow - 1;
	if (id - D->base >= D->next - D->base) {
		/* Outside [base, next): acked long ago, or never issued. */
		if ((int32_t)(id - D->base) < 0) {
			h->cnt.ack_dup++;
			return -EALREADY;
		}
		h->cnt.ack_unknown++;
		return -ENOENT;
	}
	slot = id & wmask;
	if (!tbit(bits, slot)) {
		h->cnt.ack_dup++;
		return -EALREADY;
	}
	cbit(bits, slot);
	g = h->dgseq[(size_t)dest * h->cfg.window + slot];
	cbit(h->gbits, g & gmask);
	D->unacked--;
	h->cnt.acked++;
	while (D->base != D->next && !tbit(bits, D->base & wmask))
		D->base++;
	while (h->gbase != h->gnext && !tbit(h->gbits, h->gbase & gmask))
		h->gbase++;
	if (h->cfg.scope == OMS_HOLD_PER_DEST)
		return release_due(h, &D->head, &D->tail, D->base);
	return release_due(h, &h->ghead, &h->gtail, h->gbase);
}

int oms_hold_send(struct oms_hold *h, unsigned dest, unsigned cls,
		  uint64_t cookie)
{
	struct oms_hold_dest *D;
	uint32_t i, snap;
	int due;

	if (!h || !h->dest || dest >= h->cfg.ndest ||
	    (cls != OMS_HOLD_CLASS1 && cls != OMS_HOLD_CLASS2))
		return -EINVAL;
	if (cls == OMS_HOLD_CLASS1) {
		h->cnt.sent_class1++;
		return OMS_HOLD_SEND;
	}
	D = &h->dest[dest];
	if (h->cfg.scope == OMS_HOLD_PER_DEST) {
		due = D->base != D->next;
		snap = D->next;
	} else {
		due = h->gbase != h->gnext;
		snap = h->gnext;
	}
	if (!due) {
		h->cnt.sent_class2++;
		return OMS_HOLD_SEND;
	}
	if (h->free_head == NIL)
		return -EAGAIN;
	i = h->free_head;
	h->free_head = h->pkt[i].link;
	h->pkt[i].cookie = cookie;
	h->pkt[i].dest = dest;
	h->pkt[i].snap = snap;
	if (h->cfg.scope == OMS_HOLD_PER_DEST)
		list_add(h, &D->head, &D->tail, i);
	else
		list_add(h, &h->ghead, &h->gtail, i);
	h->nheld++;
	h->cnt.held++;
	return OMS_HOLD_HELD;
}

int oms_hold_pop(struct oms_hold *h, unsigned *dest, uint64_t *cookie)
{
	uint32_t i;

	if (!h || !h->dest)
		return -EINVAL;
	i = h->rhead;
	if (i == NIL)
		return 0;
	h->rhead = h->pkt[i].link;
	if (h->rhead == NIL)
		h->rtail = NIL;
	if (dest)
		*dest = h->pkt[i].dest;
	if (cookie)
		*cookie = h->pkt[i].cookie;
	h->pkt[i].link = h->free_head;
	h->free_head = i;
	h->nheld--;
	h->cnt.released++;
	return 1;
}

long oms_hold_pending(const struct oms_hold *h, unsigned dest)
{
	if (!h || !h->dest)
		return -EINVAL;
	if (dest == OMS_HOLD_ANY)
		return (long)(h->cnt.posted - h->cnt.acked);
	if (dest >= h->cfg.ndest)
		return -EINVAL;
	return h->dest[dest].unacked;
}

long oms_hold_held(const struct oms_hold *h)
{
	if (!h || !h->dest)
		return -EINVAL;
	return h->nheld;
}
